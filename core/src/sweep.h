/*
 * sweep.h -- values of a declared type, and sweeps of them.
 *
 * One value:  "1024", "4K", "16M", "1G", "2^20", "f32", "true", "0.5".
 * A sweep:    a list      "1K, 4K, 1M"
 *             a range     "2^10..2^20"          (default step: times 2)
 *                         "1M..64M:x4"          (geometric: times 4)
 *                         "100..1000:+100"      (linear)
 *             or lists of ranges and values mixed: "1, 2^10..2^12, 3M".
 * Ranges include both ends when the step lands on the end, and stop before
 * passing it otherwise.  Enum and bool values take lists only.
 */
#ifndef KBENCH_SWEEP_H
#define KBENCH_SWEEP_H

#include <stddef.h>

#include "kbench/plugin.h"

/* Parses one value of param p's type and checks its range or choices.
   Returns 0, or -1 with why set to a clause such as
   "'12Q' is not a size (use digits with K, M, G, or 2^k)" or
   "65536 is above the maximum 1024". */
int kbc_value_parse(const kb_param *p, const char *text, kb_value *out, char *why, size_t whyn);

/* Parses a sweep into a new array of values (free() it).  At most max_values
   values (a larger sweep is an error, not a silent cut).  Same errors. */
int kbc_sweep_parse(const kb_param *p, const char *text, size_t max_values, kb_value **values,
                    size_t *n, char *why, size_t whyn);

/* Writes v as text: sizes and ints in decimal, floats with %g, enums by
   their choice, bools as true/false.  Returns buf. */
char *kbc_value_format(const kb_param *p, kb_value v, char *buf, size_t n);

/* The core's own typed keys (warmup, runs, budget ...) use the same parser
   through these declarations. */
extern const kb_param kbc_key_warmup, kbc_key_runs, kbc_key_budget, kbc_key_seed,
    kbc_key_include_copies, kbc_key_cpu_threads;

#endif
