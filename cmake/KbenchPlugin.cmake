# kbench_add_plugin(NAME SOURCES src... [LIBRARIES lib...]
#                   [OUTPUT_DIRECTORY dir] [NO_INSTALL])
#
# Builds a kbench plugin: a MODULE library named kbench-NAME.so that exports
# only kbench_plugin, links the one shared CUDA runtime when it has CUDA
# sources, and lands in the plugin folder.  Used in the tree and, installed,
# by plugins built outside it with find_package(kbench).
#
# In the tree (KBENCH_PLUGIN_INSTALL_DIR is defined) the plugin is also
# installed into the plugin folder that an installed kbench searches; test
# fixtures pass NO_INSTALL.  Outside the tree nothing is installed unless the
# project asks for it with its own install() line.
#
# The function enables no language: a plugin project written in C alone
# needs only `project(x LANGUAGES C)`; one with .cu sources enables CUDA
# itself.
function(kbench_add_plugin name)
  cmake_parse_arguments(KP "NO_INSTALL" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT KP_SOURCES)
    message(FATAL_ERROR "kbench_add_plugin(${name}): SOURCES is required.")
  endif()
  add_library(${name} MODULE ${KP_SOURCES})
  set_target_properties(${name} PROPERTIES
    PREFIX "kbench-"
    SUFFIX ".so"
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
  # An installed plugin finds the CUDA runtime where the build found it,
  # like the installed kbench does.
  if(DEFINED CUDAToolkit_LIBRARY_DIR)
    set_target_properties(${name} PROPERTIES INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")
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
  if(DEFINED KBENCH_PLUGIN_INSTALL_DIR AND NOT KP_NO_INSTALL)
    install(TARGETS ${name} LIBRARY DESTINATION ${KBENCH_PLUGIN_INSTALL_DIR})
    # The tree's plugins, for one `kbench check` test each (tests/check.cmake).
    set_property(GLOBAL APPEND PROPERTY KBENCH_PLUGIN_TARGETS ${name})
  endif()
endfunction()
