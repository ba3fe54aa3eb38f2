/* stats.c -- see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void kbc_median_interval(const double *x, size_t n, double *lo, double *hi)
{
    if (n == 0) {
        *lo = *hi = NAN;
        return;
    }
    double half = 0.98 * sqrt((double)n);
    double l = floor((double)n / 2 - half), h = ceil((double)n / 2 + half);
    *lo = x[l < 0 ? 0 : (size_t)l];
    *hi = x[h > (double)(n - 1) ? n - 1 : (size_t)h];
}

double kbc_median_noise(const double *x, size_t n)
{
    if (n < 2)
        return NAN;
    double med = (n % 2) ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    if (!(med > 0))
        return NAN;
    double lo, hi;
    kbc_median_interval(x, n, &lo, &hi);
    return (hi - lo) / 2 / med;
}

double kbc_median(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(x, n, sizeof *x, cmp_double);
    return (n % 2) ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

void kbc_stats_compute(double *x, size_t n, kbc_stats *out)
{
    out->n = n;
    if (n == 0) {
        /* No runs means no time: NaN says "not measured" to every reporter,
           where 0 would read as "infinitely fast". */
        out->median = out->min = out->max = out->mean = out->stddev = NAN;
        return;
    }
    out->median = kbc_median(x, n);
    out->min = x[0];
    out->max = x[n - 1];

    /* Two passes (mean, then squared deviations) rather than a running sum
       of squares, which loses all precision when the times are close. */
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    out->mean = sum / (double)n;
    if (n < 2) {
        /* The sample deviation of one value is undefined, not zero. */
        out->stddev = NAN;
        return;
    }
    double ss = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - out->mean;
        ss += d * d;
    }
    out->stddev = sqrt(ss / (double)(n - 1));
}
