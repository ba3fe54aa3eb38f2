# base/util.c's small helpers: text for sizes and durations.
kbench_test(test_util SOURCES test_util.c)
# base/input.c: the one way kbench opens a file a user hands it.
kbench_test(test_input SOURCES test_input.c)
