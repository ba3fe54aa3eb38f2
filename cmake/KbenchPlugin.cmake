# kbench_add_plugin(NAME SOURCES src... [LIBRARIES lib...])
#
# Builds a kbench plugin: a MODULE library that exports only kbench_plugin,
# links the one shared CUDA runtime, and lands in the plugin folder.  Used
# in the tree and, installed, by plugins built outside it with
# find_package(kbench).
function(kbench_add_plugin name)
  cmake_parse_arguments(KP "" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  add_library(${name} MODULE ${KP_SOURCES})
  set_target_properties(${name} PROPERTIES
    PREFIX "kbench-"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    CUDA_RUNTIME_LIBRARY Shared
    POSITION_INDEPENDENT_CODE ON)
  if(KP_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${KP_OUTPUT_DIRECTORY})
  elseif(DEFINED KBENCH_PLUGIN_BUILD_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${KBENCH_PLUGIN_BUILD_DIR})
  endif()
  if(TARGET kbench::headers)
    target_link_libraries(${name} PRIVATE kbench::headers)
  else()
    target_link_libraries(${name} PRIVATE kbench_headers)
  endif()
  if(KP_LIBRARIES)
    target_link_libraries(${name} PRIVATE ${KP_LIBRARIES})
  endif()
  # Undefined symbols are errors at link time, not at dlopen time.
  target_link_options(${name} PRIVATE "LINKER:--no-undefined")
endfunction()
