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
    /* The worst element in units of its own bound, so that a passing row
       says how close it came (0.31 of the bound) and a failing one by how
       much it missed, rather than "0 mismatches". */
    uint64_t first = n;
    double worst = 0.0;
    for (uint64_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - want[i]);
        double bound = atol + rtol * fabs(want[i]);
        double r = diff <= bound ? (bound > 0 ? diff / bound : 0.0)
                                 : (bound > 0 && !isnan(diff) ? diff / bound : INFINITY);
        if (!(diff <= bound) && first == n) /* NaN fails */
            first = i;
        if (r > worst)
            worst = r;
    }
    check->error = worst;
    check->tolerance = 1.0;
    check->measure = "worst err/bound";
    check->passed = first == n;
    if (first_bad)
        *first_bad = first;
}

double kbk_ulp_f32(double x)
{
    x = fabs(x);
    if (!(x >= 0x1p-126)) /* subnormal, zero (or NaN): the subnormal step */
        return 0x1p-149;
    if (x >= 0x1p128)
        return 0x1p104; /* past FLT_MAX: the last binade's step */
    return ldexp(1.0, ilogb(x) - 23);
}

void kbk_check_ulps_f32(kb_check *check, const float *got, const double *want, uint64_t n,
                        double max_ulps, uint64_t *worst_at)
{
    uint64_t at = n;
    double worst = 0.0;
    for (uint64_t i = 0; i < n; i++) {
        double g = (double)got[i], w = want[i], e;
        if (isnan(w))
            e = isnan(g) ? 0.0 : INFINITY;
        else if (isinf(w) || isinf(g))
            e = g == w ? 0.0 : INFINITY;
        else if (isnan(g))
            e = INFINITY;
        else
            e = fabs(g - w) / kbk_ulp_f32(w);
        if (e > worst) {
            worst = e;
            at = i;
        }
    }
    check->error = worst;
    check->tolerance = max_ulps;
    check->measure = "ulps";
    check->passed = worst <= max_ulps;
    if (worst_at)
        *worst_at = at;
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
