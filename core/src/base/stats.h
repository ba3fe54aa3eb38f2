/* stats.h -- summary statistics of timed runs. */
#ifndef KBENCH_STATS_H
#define KBENCH_STATS_H

#include <stddef.h>

typedef struct kbc_stats {
    size_t n;
    double median, min, max, mean, stddev; /* seconds */
} kbc_stats;

/* The median of x[0..n), which it sorts in place; NaN for n == 0. */
double kbc_median(double *x, size_t n);

/* Summarises x[0..n) (reordered in place).  n == 0 gives all NaN. */
void kbc_stats_compute(double *x, size_t n, kbc_stats *out);

/* The noise of a median: the half-width of a distribution-free 95%
   confidence interval of the median of the sorted x[0..n), relative to
   the median.  The interval runs between the order statistics at ranks
   n/2 -+ 0.98 sqrt(n) (the normal approximation of the binomial;
   clamped to the smallest and largest sample).  NaN for n < 2 or a median
   of zero. */
double kbc_median_noise(const double *sorted, size_t n);

/* That interval itself: *lo and *hi are the sorted x[0..n)'s order
   statistics at those ranks (for n == 1 both the one value; NaN for
   n == 0).  kbc_median_noise is its half-width over the median. */
void kbc_median_interval(const double *sorted, size_t n, double *lo, double *hi);

#endif
