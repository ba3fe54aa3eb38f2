# kbench merge (core/src/views/merge.c): shards' results.json written by hand,
# merged and refused; and the header reader it uses (results_read.c).
# Links kbench_views alone, as merge.c needs nothing else.
add_executable(test_merge test_merge.c)
target_include_directories(test_merge PRIVATE ${CRITERION_INCLUDE})
target_link_libraries(test_merge PRIVATE kbench_views ${CRITERION_LIB})
target_compile_options(test_merge PRIVATE ${KBENCH_C_WARNINGS})
add_test(NAME test_merge COMMAND test_merge --jobs 2)
set_tests_properties(test_merge PROPERTIES TIMEOUT ${KBENCH_TEST_TIMEOUT})
