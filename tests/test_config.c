/* test_config.c: being written. */
#include <criterion/criterion.h>
