# kbench_add_plugin(NAME SOURCES src... [KIT] [LIBRARIES lib...]
#                   [OUTPUT_DIRECTORY dir] [NO_INSTALL])
#
# Builds a kbench plugin: a MODULE library named kbench-NAME.so that exports
# only kbench_plugin (hidden visibility), makes undefined symbols a link
# error (--no-undefined) and lands in the plugin folder.  Used in the tree
# and, installed, by plugins built outside it with find_package(kbench); both
# get the same code:
#
#   - libm always;
#   - the one shared CUDA runtime (CUDA::cudart) when the plugin has .cu
#     sources, when the project enabled CUDA (so C files may call the
#     runtime too), or with KIT; the CUDA toolkit is then found here if the
#     project has not found it;
#   - KIT links the plugin kit (kbench::kit, kbench/kit.h) and Threads;
#   - outside the tree, the CUDA architectures kbench was built for
#     (KBENCH_CUDA_ARCHITECTURES, from the package) unless the project chose
#     its own CMAKE_CUDA_ARCHITECTURES (on the command line, in CUDAARCHS or
#     with set()); the package config also makes Release the default build
#     type.
#
# In the tree (KBENCH_PLUGIN_INSTALL_DIR is defined) the plugin is also
# installed into the plugin folder that an installed kbench searches; test
# fixtures pass NO_INSTALL.  Outside the tree nothing is installed unless the
# project asks for it with its own install() line.
#
# The function enables no language: a plugin project written in C alone
# needs only `project(x LANGUAGES C)` and never looks for CUDA; one with .cu
# sources enables CUDA itself (`project(x LANGUAGES C CUDA)`).

# Sets `out` to TRUE when the project chose CMAKE_CUDA_ARCHITECTURES itself,
# FALSE when the value is CMake's default for the compiler.  CMake records no
# such fact, so the first call in a build tree decides from the cache entry
# CMake writes when it picks the default (and CUDAARCHS), and remembers the
# default it saw: a later -DCMAKE_CUDA_ARCHITECTURES=... differs from it.
function(_kbench_cuda_architectures_chosen out)
  if(NOT DEFINED CACHE{_KBENCH_CUDA_ARCHITECTURES_DEFAULT})
    get_property(_help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
    get_property(_cached CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY VALUE)
    if(_help STREQUAL "CUDA architectures" AND "$ENV{CUDAARCHS}" STREQUAL ""
       AND "${_cached}" STREQUAL "${CMAKE_CUDA_ARCHITECTURES}")
      set(_default "${CMAKE_CUDA_ARCHITECTURES}")
    else()
      set(_default "<chosen by the project>")
    endif()
    set(_KBENCH_CUDA_ARCHITECTURES_DEFAULT "${_default}" CACHE INTERNAL
      "CMake's default CUDA architectures, which kbench_add_plugin() replaces with kbench's")
  endif()
  if("${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "$CACHE{_KBENCH_CUDA_ARCHITECTURES_DEFAULT}")
    set(${out} FALSE PARENT_SCOPE)
  else()
    set(${out} TRUE PARENT_SCOPE)
  endif()
endfunction()

function(kbench_add_plugin name)
  cmake_parse_arguments(KP "NO_INSTALL;KIT" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT KP_SOURCES)
    message(FATAL_ERROR "kbench_add_plugin(${name}): SOURCES is required.")
  endif()
  get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(_cuda_enabled FALSE)
  if(CUDA IN_LIST _languages)
    set(_cuda_enabled TRUE)
  endif()
  set(_cuda_sources FALSE)
  foreach(_src IN LISTS KP_SOURCES)
    if(_src MATCHES "\\.cu$")
      set(_cuda_sources TRUE)
    endif()
  endforeach()
  if(_cuda_sources AND NOT _cuda_enabled)
    message(FATAL_ERROR "kbench_add_plugin(${name}): it has .cu sources, but the project did "
      "not enable CUDA; write project(... LANGUAGES C CUDA).")
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

  target_link_libraries(${name} PRIVATE kbench::headers)
  # Each source's folder is on the include path, so that a header the kit
  # includes for the plugin (KBK_FAMILY_DEF, kbench/kit_family.h) is found
  # beside the plugin's sources.
  foreach(_src IN LISTS KP_SOURCES)
    get_filename_component(_dir "${_src}" DIRECTORY)
    get_filename_component(_dir "${_dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    target_include_directories(${name} PRIVATE "${_dir}")
  endforeach()
  if(_cuda_enabled OR KP_KIT)
    if(NOT TARGET CUDA::cudart)
      find_package(CUDAToolkit REQUIRED)
    endif()
    target_link_libraries(${name} PRIVATE CUDA::cudart)
    # An installed plugin finds the CUDA runtime where the build found it,
    # like the installed kbench does.
    if(DEFINED CUDAToolkit_LIBRARY_DIR)
      set(_cudart_dir "${CUDAToolkit_LIBRARY_DIR}")
    else()
      get_target_property(_cudart_file CUDA::cudart LOCATION)
      get_filename_component(_cudart_dir "${_cudart_file}" DIRECTORY)
    endif()
    set_target_properties(${name} PROPERTIES INSTALL_RPATH "${_cudart_dir}")
  endif()
  if(KP_KIT)
    if(NOT TARGET Threads::Threads)
      find_package(Threads REQUIRED)
    endif()
    target_link_libraries(${name} PRIVATE kbench::kit Threads::Threads)
  endif()
  if(KP_LIBRARIES)
    target_link_libraries(${name} PRIVATE ${KP_LIBRARIES})
  endif()
  target_link_libraries(${name} PRIVATE m)

  # Outside the tree: kbench's CUDA architectures unless the project chose.
  if(_cuda_enabled AND DEFINED KBENCH_CUDA_ARCHITECTURES)
    _kbench_cuda_architectures_chosen(_chosen)
    if(NOT _chosen)
      set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES "${KBENCH_CUDA_ARCHITECTURES}")
    endif()
    if(NOT _chosen AND _cuda_sources)
      message(STATUS "kbench: plugin ${name} builds for CUDA architectures "
        "${KBENCH_CUDA_ARCHITECTURES}, as kbench was built (set CMAKE_CUDA_ARCHITECTURES to "
        "choose others)")
    endif()
  endif()

  # Undefined symbols are errors at link time, not at dlopen time.
  target_link_options(${name} PRIVATE "LINKER:--no-undefined")
  if(DEFINED KBENCH_PLUGIN_INSTALL_DIR AND NOT KP_NO_INSTALL)
    install(TARGETS ${name} LIBRARY DESTINATION ${KBENCH_PLUGIN_INSTALL_DIR})
    # The tree's plugins, for one `kbench check` test each (tests/check.cmake).
    set_property(GLOBAL APPEND PROPERTY KBENCH_PLUGIN_TARGETS ${name})
  endif()
endfunction()
