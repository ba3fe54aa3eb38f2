/*
 * stepfit.h -- the step detector of `kbench history regressions`: a
 * piecewise-constant fit of a series of medians (one per run, in commit
 * order), found by optimal partitioning with PELT's pruning, with a
 * penalty per step chosen so that pure noise rarely shows one (docs/
 * history.md, "Finding steps").  Plain arithmetic: no database here, so
 * that the tests feed it synthetic series.
 */
#ifndef KBENCH_STEPFIT_H
#define KBENCH_STEPFIT_H

#include <stddef.h>

/* The penalty for one more step is KBC_STEP_PENALTY_K * ln(n) in units of
   the weighted squared error (each point weighted by one over its
   variance), and a series needs KBC_STEP_MIN_POINTS points before any
   step is looked for: with fewer, the noise cannot be estimated. */
#define KBC_STEP_PENALTY_K 5.0
#define KBC_STEP_MIN_POINTS 4
#define KBC_STEP_ROUNDS 5

/* The fit of one series. */
typedef struct kbc_stepfit {
    size_t n_steps;  /* segments - 1                                     */
    size_t *at;      /* at[j]: the index of the first point after step j */
    double *level;   /* level[j]: segment j's weighted mean (n_steps + 1) */
    double sigma;    /* the noise of one point the fit assumed (robust)  */
} kbc_stepfit;

/* Fits y[0..n) (the logarithms of the medians, so that a step is a ratio)
   where se[i] is point i's own standard error in the same units (from
   its interval; NaN or 0 when unknown).  Each point's variance is the
   larger of se[i]^2 and the series' robust noise (the median absolute
   difference of neighbours, scaled to a standard deviation), so a point
   with a wide interval counts less and none counts more than the scatter
   between runs allows.  fit is filled (free with kbc_stepfit_free); a
   series below KBC_STEP_MIN_POINTS points gets no step.  penalty_k <= 0
   takes KBC_STEP_PENALTY_K. */
void kbc_stepfit_run(const double *y, const double *se, size_t n, double penalty_k,
                     kbc_stepfit *fit);

void kbc_stepfit_free(kbc_stepfit *fit);

#endif
