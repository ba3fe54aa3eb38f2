/*
 * kit_check.c -- error bounds and comparisons that fill a kb_check.
 */
#include <math.h>
#include <string.h>

#include "kit_internal.h"

double kbk_unit_roundoff(int mantissa_bits)
{
    return ldexp(1.0, -mantissa_bits);
}

double kbk_sum_bound(int depth, double sum_abs, int mantissa_bits)
{
    if (depth <= 0)
        return 0.0;
    double du = depth * kbk_unit_roundoff(mantissa_bits);
    if (du >= 1.0)
        return INFINITY; /* the bound says nothing this deep */
    return du / (1.0 - du) * sum_abs;
}

void kbk_check_abs(kb_check *check, double got, double want, double tolerance)
{
    check->error = fabs(got - want);
    check->tolerance = tolerance;
    check->measure = "abs";
    check->passed = check->error <= tolerance; /* NaN compares false */
}

void kbk_check_f32(kb_check *check, const float *got, const double *want, uint64_t n,
                   double atol, double rtol, uint64_t *first_bad)
{
    uint64_t bad = 0, first = n;
    for (uint64_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - want[i]);
        if (!(diff <= atol + rtol * fabs(want[i]))) { /* NaN fails */
            if (bad++ == 0)
                first = i;
        }
    }
    check->error = (double)bad;
    check->tolerance = 0.0;
    check->measure = "mismatches";
    check->passed = bad == 0;
    if (first_bad)
        *first_bad = first;
}

void kbk_check_exact(kb_check *check, const void *got, const void *want, uint64_t n,
                     size_t elem_bytes, uint64_t *first_bad)
{
    const unsigned char *g = got, *w = want;
    uint64_t bad = 0, first = n;
    if (elem_bytes && n && memcmp(g, w, (size_t)n * elem_bytes) != 0) {
        for (uint64_t i = 0; i < n; i++) {
            if (memcmp(g + i * elem_bytes, w + i * elem_bytes, elem_bytes) != 0) {
                if (bad++ == 0)
                    first = i;
            }
        }
    }
    check->error = (double)bad;
    check->tolerance = 0.0;
    check->measure = "mismatches";
    check->passed = bad == 0;
    if (first_bad)
        *first_bad = first;
}
