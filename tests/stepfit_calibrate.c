/*
 * stepfit_calibrate.c -- the table of docs/history.md ("Choosing the
 * penalty"): for series of n points with 2% Gaussian noise (each point's
 * own interval half the scatter, as on a GPU), how often the detector
 * (stepfit.h) shows a step in pure noise, and how often it finds a 5% step
 * in the middle: anywhere, at its point, or within one point.  1000 seeded
 * series per cell.  Not a test: run build/tests/stepfit_calibrate.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "stepfit.h"

static uint64_t state;

static double uniform01(void)
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(state >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
    double u = uniform01(), v = uniform01();
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

int main(void)
{
    static const size_t ns[] = {10, 20, 40, 100, 200};
    static const double ks[] = {3, 4, 5, 6};
    const int reps = 1000;
    printf("| points | K | noise: a step | 5%% step: found | at its point | within one |\n");
    printf("|---|---|---|---|---|---|\n");
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++) {
        size_t n = ns[a];
        double *y = malloc(n * sizeof *y), *se = malloc(n * sizeof *se);
        for (size_t b = 0; b < sizeof ks / sizeof *ks; b++) {
            int false_alarm = 0, found = 0, exact = 0, near = 0;
            for (int r = 0; r < reps; r++) {
                state = (uint64_t)r * 7919 + 1;
                for (size_t i = 0; i < n; i++) {
                    y[i] = log(1 + 0.02 * gauss());
                    se[i] = 0.01;
                }
                kbc_stepfit f;
                kbc_stepfit_run(y, se, n, ks[b], &f);
                false_alarm += f.n_steps > 0;
                kbc_stepfit_free(&f);
                for (size_t i = 0; i < n; i++)
                    y[i] = log((1 + 0.02 * gauss()) * (i >= n / 2 ? 1.05 : 1));
                kbc_stepfit_run(y, se, n, ks[b], &f);
                found += f.n_steps > 0;
                int e = 0, m = 0;
                for (size_t j = 0; j < f.n_steps; j++) {
                    e |= f.at[j] == n / 2;
                    m |= f.at[j] + 1 >= n / 2 && f.at[j] <= n / 2 + 1;
                }
                exact += e;
                near += m;
                kbc_stepfit_free(&f);
            }
            printf("| %zu | %g | %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n", n, ks[b],
                   100.0 * false_alarm / reps, 100.0 * found / reps, 100.0 * exact / reps,
                   100.0 * near / reps);
        }
        free(y);
        free(se);
    }
    return 0;
}
