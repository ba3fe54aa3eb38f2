# Found by convention (tests/CMakeLists.txt includes every plugins/<family>/tests.cmake).
# The sort plugin on the CPU path: loads the built plugin with dlopen; sort.h
# gives the parameter indices and the test extension (sort_test_ext), through
# which tests damage an output before verify().
kbench_test(test_sort SOURCES ${CMAKE_CURRENT_LIST_DIR}/tests/test_sort.c LIBRARIES ${CMAKE_DL_LIBS} m)
target_include_directories(test_sort PRIVATE ${CMAKE_CURRENT_LIST_DIR})
add_dependencies(test_sort kbench_sort_plugin)
# onesweep-early's kernel bodies (sort_early.cuh) on the CPU model of a GPU
# (tests/simt.h): ranks, partial tiles, the look-back and its epochs.
kbench_test(test_sort_early_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/tests/test_sort_early_model.cpp)
target_include_directories(test_sort_early_model PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_compile_features(test_sort_early_model PRIVATE cxx_std_14)
