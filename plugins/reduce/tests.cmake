# Found by convention (tests/CMakeLists.txt includes every plugins/<family>/tests.cmake).
# The reduce plugin on the CPU path: loads the built plugin with dlopen.  It
# includes the plugin's reduce.h for the parameter indices and the test
# extension (kbr_test_ext), through which it writes chosen sums into a
# state's output before verify().
kbench_test(test_reduce SOURCES ${CMAKE_CURRENT_LIST_DIR}/tests/test_reduce.c LIBRARIES ${CMAKE_DL_LIBS} m)
target_include_directories(test_reduce PRIVATE ${CMAKE_CURRENT_LIST_DIR})
add_dependencies(test_reduce kbench_reduce_plugin)
