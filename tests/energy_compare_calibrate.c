/*
 * energy_compare_calibrate.c -- the table of docs/energy.md, "Comparing
 * energy" (not a test): what compare's rule (analysis/compare.h) makes of
 * N energy windows a side, for N = 5, 11 and 16, windows spread uniformly
 * +-1% to +-10% around their joules, and a true change of 0, 5 and 10%:
 * over 1000 seeded pairs each, how many are judged more energy, noisy or
 * no change, and how often the interval excludes a ratio of 1.  Seeded, so
 * the table is the same on every machine.
 *
 * Run: build/tests/energy_compare_calibrate
 */
#include <stdint.h>
#include <stdio.h>

#include "compare.h"

/* n windows around m, each m * (1 + spread * u) with u uniform in [-1, 1]
   (splitmix64, as tests/test_compare.c draws its samples). */
static void windows(double *x, size_t n, double m, double spread, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        double u = (double)(z >> 11) / 9007199254740992.0 * 2 - 1;
        x[i] = m * (1 + spread * u);
    }
}

int main(void)
{
    enum { PAIRS = 1000 };
    static const int ns[] = {5, 11, 16};
    static const double spreads[] = {0.01, 0.03, 0.06, 0.10};
    static const double changes[] = {1.0, 1.05, 1.10};
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    printf("| windows | spread | change | more energy | noisy | no change "
           "| interval excludes 1 |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t s = 0; s < sizeof spreads / sizeof *spreads; s++)
            for (size_t c = 0; c < sizeof changes / sizeof *changes; c++) {
                size_t n = (size_t)ns[a];
                int count[KBC_N_VERDICTS] = {0}, excludes = 0;
                for (uint64_t k = 0; k < PAIRS; k++) {
                    double x[16], y[16];
                    kbc_change ch;
                    windows(x, n, 1, spreads[s], 100000 + 2 * k);
                    windows(y, n, changes[c], spreads[s], 100001 + 2 * k);
                    kbc_compare_samples(x, n, y, n, &o, &ch);
                    count[ch.verdict]++;
                    excludes += kbc_compare_significant(&ch);
                }
                printf("| %zu | +-%.0f%% | %+.0f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n", n,
                       spreads[s] * 100, (changes[c] - 1) * 100, 100.0 * count[KBC_SLOWER] / PAIRS,
                       100.0 * count[KBC_NOISY] / PAIRS, 100.0 * count[KBC_NO_CHANGE] / PAIRS,
                       100.0 * excludes / PAIRS);
            }
    return 0;
}
