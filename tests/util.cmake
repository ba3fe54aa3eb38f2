# base/util.c's small helpers: text for sizes and durations.
kbench_test(test_util SOURCES test_util.c)
