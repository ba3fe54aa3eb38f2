/*
 * value.h -- one value of a declared type: parsing, the range check, and
 * writing it back as text.
 *
 * One value:  "1024", "4K", "16M", "1G", "2^20", "f32", "true", "0.5".
 * Sizes and integers stay 64-bit integers from the text to the range
 * check, which compares them with the parameter's double limits exactly,
 * so that no value near 2^53 or above is rounded past a limit.
 */
#ifndef KBENCH_VALUE_H
#define KBENCH_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "kbench/plugin.h"

/* Parses one value of param p's type and checks its range or choices.
   Returns 0, or -1 with why set to a clause such as
   "'12Q' is not a size (use digits with K, M, G, or 2^k)" or
   "65536 is above the maximum 1024". */
int kbc_value_parse(const kb_param *p, const char *text, kb_value *out, char *why, size_t whyn);

/* The same without the range check; text must already be trimmed.  The
   sweep parser checks each value it makes instead. */
int kbc_value_parse_plain(const kb_param *p, const char *text, kb_value *out, char *why,
                          size_t whyn);

/* Checks v against p's [min, max] (no check when min > max) and, for INT
   and SIZE, its multiple_of ("100 is not a multiple of 32 (the nearest are
   96 and 128)").  Returns 0, or -1 with why set. */
int kbc_value_check_range(const kb_param *p, kb_value v, char *why, size_t whyn);

/* The typed parsers behind kbc_value_parse_plain, for the steps of a sweep.
   Each returns 0, or -1 with why set. */
int kbc_parse_size(const char *s, uint64_t *out, char *why, size_t whyn);
int kbc_parse_int(const char *s, int64_t *out, char *why, size_t whyn);
int kbc_parse_float(const char *s, double *out, char *why, size_t whyn);

/* Decimal digits into a uint64.  Returns 0, -1 when there are none, -2 on
   overflow; *end is set past the digits. */
int kbc_parse_digits(const char *s, const char **end, uint64_t *out);

/* Exact comparison of an integer with a double: -1, 0 or 1 as v is below,
   equal to or above d (a NaN d compares equal, so it never refuses). */
int kbc_cmp_u64_double(uint64_t v, double d);
int kbc_cmp_i64_double(int64_t v, double d);

/* Writes v as text: sizes and ints in decimal, floats with %g, enums by
   their choice, bools as true/false.  Returns buf. */
char *kbc_value_format(const kb_param *p, kb_value v, char *buf, size_t n);

/* Writes a limit of p as a user would write it: 2^k for an integer limit
   that is a power of two of at least 2^16, every digit for other integer
   limits, %g otherwise.  Returns buf. */
char *kbc_bound_format(const kb_param *p, double x, char *buf, size_t n);


#endif
