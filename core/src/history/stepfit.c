/*
 * stepfit.c -- optimal partitioning of a series into constant segments
 * (Jackson et al. 2005), with the pruning of PELT (Killick, Fearnhead and
 * Eckley 2012), over a weighted squared-error cost.
 *
 * With each point weighted by one over its variance, a segment's cost is
 * twice its negative Gaussian log-likelihood (up to a constant), so the
 * penalty per step is in the same units as a likelihood-ratio statistic:
 * K ln(n), a BIC-like penalty whose K is set by the false alarms it
 * allows on pure noise (docs/history.md says how K = 5 was chosen).
 */
#include "stepfit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

/* The robust noise of one point: the median absolute difference of
   neighbours over sqrt(2) (a difference of two points has twice a point's
   variance), times 1.4826 (the median absolute deviation of a normal
   distribution in standard deviations).  A step moves one difference out
   of n - 1, which the median ignores. */
static double neighbour_sigma(const double *y, size_t n)
{
    double *d = kbc_xmalloc((n - 1) * sizeof *d);
    for (size_t i = 0; i + 1 < n; i++)
        d[i] = fabs(y[i + 1] - y[i]);
    double m = kbc_median(d, n - 1);
    free(d);
    return 1.4826 * m / sqrt(2.0);
}

/* The weighted squared error of y[a..b) around its weighted mean, from
   prefix sums of w, w y and w y^2. */
static double seg_cost(const double *s0, const double *s1, const double *s2, size_t a, size_t b)
{
    double w = s0[b] - s0[a], wy = s1[b] - s1[a], wyy = s2[b] - s2[a];
    double c = wyy - wy * wy / w;
    return c > 0 ? c : 0;
}

/* One fit of y with each point's noise at least sigma. */
static void fit_once(const double *y, const double *se, size_t n, double penalty_k, double sigma,
                     kbc_stepfit *fit)
{
    fit->sigma = sigma;
    fit->n_steps = 0;

    double *s0 = kbc_xcalloc(n + 1, sizeof *s0);
    double *s1 = kbc_xcalloc(n + 1, sizeof *s1);
    double *s2 = kbc_xcalloc(n + 1, sizeof *s2);
    for (size_t i = 0; i < n; i++) {
        double v = sigma * sigma;
        if (se && isfinite(se[i]) && se[i] > sigma)
            v = se[i] * se[i];
        double w = 1 / v;
        s0[i + 1] = s0[i] + w;
        s1[i + 1] = s1[i] + w * y[i];
        s2[i + 1] = s2[i] + w * y[i] * y[i];
    }

    if (n < KBC_STEP_MIN_POINTS) {
        fit->level[0] = s1[n] / s0[n];
        goto done;
    }


    /* F[t]: the least cost of y[0..t) with a penalty per segment; last[t]
       where its last segment starts.  PELT keeps in cand only the starts
       that can still be optimal: one whose cost already exceeds F[t]
       cannot become best later, since splitting a segment never raises
       this cost. */
    double beta = penalty_k * log((double)n);
    double *F = kbc_xcalloc(n + 1, sizeof *F);
    size_t *last = kbc_xcalloc(n + 1, sizeof *last);
    size_t *cand = kbc_xcalloc(n + 1, sizeof *cand);
    double *val = kbc_xcalloc(n + 1, sizeof *val);
    size_t n_cand = 1;
    cand[0] = 0;
    F[0] = -beta;
    for (size_t t = 1; t <= n; t++) {
        double best = INFINITY;
        for (size_t k = 0; k < n_cand; k++) {
            size_t s = cand[k];
            val[k] = F[s] + seg_cost(s0, s1, s2, s, t);
            if (val[k] + beta < best) {
                best = val[k] + beta;
                last[t] = cand[k];
            }
        }
        F[t] = best;
        size_t kept = 0;
        for (size_t k = 0; k < n_cand; k++)
            if (val[k] <= F[t])
                cand[kept++] = cand[k];
        cand[kept++] = t;
        n_cand = kept;
    }
    /* The steps, walked back from the end. */
    size_t m = 0;
    for (size_t t = n; t > 0; t = last[t])
        if (last[t] > 0)
            fit->at[m++] = last[t];
    for (size_t i = 0; i < m / 2; i++) {
        size_t tmp = fit->at[i];
        fit->at[i] = fit->at[m - 1 - i];
        fit->at[m - 1 - i] = tmp;
    }
    fit->n_steps = m;
    for (size_t j = 0; j <= m; j++) {
        size_t a = j == 0 ? 0 : fit->at[j - 1], b = j == m ? n : fit->at[j];
        fit->level[j] = (s1[b] - s1[a]) / (s0[b] - s0[a]);
    }
    free(F);
    free(last);
    free(cand);
    free(val);
done:
    free(s0);
    free(s1);
    free(s2);
}

/* The pooled standard deviation of the points around their segments'
   levels (n - segments degrees of freedom), or 0 when there are none. */
static double residual_sigma(const double *y, size_t n, const kbc_stepfit *fit)
{
    size_t segs = fit->n_steps + 1;
    if (n <= segs)
        return 0;
    double ss = 0;
    for (size_t j = 0, i = 0; j < segs; j++) {
        size_t b = j == fit->n_steps ? n : fit->at[j];
        for (; i < b; i++)
            ss += (y[i] - fit->level[j]) * (y[i] - fit->level[j]);
    }
    return sqrt(ss / (double)(n - segs));
}

void kbc_stepfit_run(const double *y, const double *se, size_t n, double penalty_k,
                     kbc_stepfit *fit)
{
    memset(fit, 0, sizeof *fit);
    fit->at = kbc_xcalloc(n ? n : 1, sizeof *fit->at);
    fit->level = kbc_xcalloc(n ? n : 1, sizeof *fit->level);
    if (n == 0)
        return;
    if (penalty_k <= 0)
        penalty_k = KBC_STEP_PENALTY_K;

    /* The noise floor: the typical point's own error (a series of
       identical medians would otherwise weigh infinitely) and 1e-4 (0.01%,
       below any timer's resolution). */
    double floor = 1e-4;
    double *own = kbc_xmalloc(n * sizeof *own);
    size_t n_own = 0;
    for (size_t i = 0; i < n; i++)
        if (se && isfinite(se[i]) && se[i] > 0)
            own[n_own++] = se[i];
    if (n_own > 0) {
        double m = kbc_median(own, n_own);
        floor = floor > m ? floor : m;
    }
    free(own);

    /* The noise between runs: first the median difference of neighbours
       (robust to the steps, but a loose estimate from few points), then,
       until the segments stop changing, the scatter around the fitted
       segments (tighter: every point counts).  A loose first estimate that
       came out low and let noise pass for a step is corrected by the
       second fit. */
    double sigma = n >= 2 ? neighbour_sigma(y, n) : 0;
    fit_once(y, se, n, penalty_k, sigma > floor ? sigma : floor, fit);
    for (int round = 0; round < KBC_STEP_ROUNDS && n >= KBC_STEP_MIN_POINTS; round++) {
        double r = residual_sigma(y, n, fit);
        r = r > floor ? r : floor;
        size_t before = fit->n_steps;
        size_t first = before ? fit->at[0] : 0;
        fit_once(y, se, n, penalty_k, r, fit);
        if (fit->n_steps == before && (before == 0 || fit->at[0] == first))
            break;
    }
}

void kbc_stepfit_free(kbc_stepfit *fit)
{
    free(fit->at);
    free(fit->level);
    memset(fit, 0, sizeof *fit);
}
