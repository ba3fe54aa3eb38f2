/*
 * sweep.h -- sweeps of values of a declared type (one value: value.h).
 *
 * A sweep:    a list      "1K, 4K, 1M"
 *             a range     "2^10..2^20"          (default step: times 2)
 *                         "1M..64M:x4"          (geometric: times 4)
 *                         "100..1000:+100"      (linear)
 *             or lists of ranges and values mixed: "1, 2^10..2^12, 3M".
 * Ranges include both ends when the step lands on the end, and stop before
 * passing it otherwise.  Enum and bool values take lists only.  Sizes and
 * integers, steps and factors included, are 64-bit integers throughout.
 */
#ifndef KBENCH_SWEEP_H
#define KBENCH_SWEEP_H

#include <stddef.h>

#include "kbench/plugin.h"
#include "value.h"

/* Parses a sweep into a new array of values (free() it).  At most max_values
   values (a larger sweep is an error, not a silent cut).  Returns 0, or -1
   with why set to a clause, as kbc_value_parse does. */
int kbc_sweep_parse(const kb_param *p, const char *text, size_t max_values, kb_value **values,
                    size_t *n, char *why, size_t whyn);

#endif
