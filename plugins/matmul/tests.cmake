# Found by convention (tests/CMakeLists.txt includes every plugins/<family>/tests.cmake).
# The matmul plugin on the CPU path: loads the built plugin with dlopen.  It
# includes the plugin's matmul.h for the parameter indices and the test
# extension (kbm_test_ext), through which it reads A and B and writes chosen
# values into C before verify().
kbench_test(test_matmul SOURCES ${CMAKE_CURRENT_LIST_DIR}/tests/test_matmul.c LIBRARIES ${CMAKE_DL_LIBS} m)
target_include_directories(test_matmul PRIVATE ${CMAKE_CURRENT_LIST_DIR})
add_dependencies(test_matmul kbench_matmul_plugin)
