# Checks that every #include "x.h" in core/src/<layer>/ names a header of
# that layer or of a layer below it (the order of core/CMakeLists.txt), so
# that the folders keep meaning what they say even where a compiler would
# not notice (a header reached through a lower layer's include path is
# fine; one of a higher layer is not).  Run as
#   cmake -DSRC=<core/src> -P check_layers.cmake
get_filename_component(SRC "${SRC}" ABSOLUTE)
set(layers base data analysis views history config plugin plan cuda exec tune cli)
# What each layer may include besides itself (kept equal to the LINKS of
# core/CMakeLists.txt).  The records of a run are three layers: the data
# (records, results.json, the journal), the analysis computed from them and
# the views that render both.
set(below_base "")
set(below_data base)
set(below_analysis base data)
set(below_views base data analysis)
set(below_history base data)
set(below_config base)
set(below_plugin base config)
set(below_plan base config plugin)
set(below_cuda base data config plugin)
set(below_exec base data analysis views config plugin plan cuda)
set(below_tune base data analysis views config plugin plan cuda exec)
set(below_cli base data analysis views history config plugin plan cuda exec tune)

# Where each header lives.
foreach(layer IN LISTS layers)
  file(GLOB headers RELATIVE ${SRC}/${layer} ${SRC}/${layer}/*.h)
  foreach(h IN LISTS headers)
    set(home_${h} ${layer})
  endforeach()
endforeach()

set(bad 0)
foreach(layer IN LISTS layers)
  file(GLOB files ${SRC}/${layer}/*.c ${SRC}/${layer}/*.h ${SRC}/${layer}/*.cu)
  if(NOT files)
    message(FATAL_ERROR "${SRC}/${layer} holds no source: is SRC core/src?")
  endif()
  foreach(f IN LISTS files)
    file(STRINGS ${f} incs REGEX "^#include \"[^\"]+\"")
    foreach(line IN LISTS incs)
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" h "${line}")
      if(NOT DEFINED home_${h})
        continue() # kbench/plugin.h and the like: not a core header
      endif()
      set(home ${home_${h}})
      if(home STREQUAL layer)
        continue()
      endif()
      list(FIND below_${layer} ${home} at)
      if(at EQUAL -1)
        message(SEND_ERROR "${f}: includes ${h} of layer '${home}', which is not below '${layer}'")
        math(EXPR bad "${bad} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} include(s) run upward")
endif()
message(STATUS "every include of core/src stays in its layer or goes down")
