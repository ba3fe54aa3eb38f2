/* stats.h -- summary statistics of timed runs. */
#ifndef KBENCH_STATS_H
#define KBENCH_STATS_H

#include <stddef.h>

typedef struct kbc_stats {
    size_t n;
    double median, min, max, mean, stddev; /* seconds */
} kbc_stats;

/* Summarises x[0..n) (reordered in place).  n == 0 gives all NaN. */
void kbc_stats_compute(double *x, size_t n, kbc_stats *out);

#endif
