# Found by convention (tests/CMakeLists.txt includes every plugins/<family>/tests.cmake).
# The matmul plugin on the CPU path: loads the built plugin with dlopen.  It
# includes the plugin's matmul.h for the parameter indices and the test
# extension (kbm_test_ext), through which it reads A and B and writes chosen
# values into C before verify().
kbench_test(test_matmul SOURCES ${CMAKE_CURRENT_LIST_DIR}/tests/test_matmul.c LIBRARIES ${CMAKE_DL_LIBS} m)
target_include_directories(test_matmul PRIVATE ${CMAKE_CURRENT_LIST_DIR})
add_dependencies(test_matmul kbench_matmul_plugin)

# The 64 x 64 warp-tile kernels of matmul_kernels.cu run on the CPU (no GPU in
# CI): extract_kernels.sh cuts their source out of the .cu file at build time
# and the test runs it on sim_shim.h's threads (tests/test_matmul_sim.cpp).
set(_kbm_sim_inc ${CMAKE_CURRENT_BINARY_DIR}/matmul_sim/matmul_kernels_sim.inc)
add_custom_command(OUTPUT ${_kbm_sim_inc}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/matmul_sim
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/tests/extract_kernels.sh
          ${CMAKE_CURRENT_LIST_DIR}/matmul_kernels.cu > ${_kbm_sim_inc}
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/matmul_kernels.cu ${CMAKE_CURRENT_LIST_DIR}/tests/extract_kernels.sh
  COMMENT "matmul: the kernels' source for the host simulation"
  VERBATIM)
kbench_test(test_matmul_sim SOURCES ${CMAKE_CURRENT_LIST_DIR}/tests/test_matmul_sim.cpp ${_kbm_sim_inc}
  LIBRARIES Threads::Threads)
target_include_directories(test_matmul_sim PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/matmul_sim
  ${CMAKE_CURRENT_LIST_DIR}/tests ${CMAKE_CURRENT_LIST_DIR})
