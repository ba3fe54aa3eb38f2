# The results reader on numbers out of range for their fields.
kbench_test(test_read_numbers SOURCES test_read_numbers.c)
