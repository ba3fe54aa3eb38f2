# The reduce plugin on the CPU path: loads the built plugin with dlopen.
kbench_test(test_reduce SOURCES test_reduce.c LIBRARIES ${CMAKE_DL_LIBS} m)
add_dependencies(test_reduce kbench_reduce_plugin)
