/*
 * compare.h -- the statistics of `kbench compare`: the change of a row's
 * median between two runs, with a bootstrap confidence interval of the
 * ratio of medians, and a verdict (faster, slower, no change, noisy,
 * untested).  docs/cli.md states the rule; the energy per run is judged
 * by the same rule, its windows standing for the samples (docs/energy.md).  The rows are matched by
 * baseline.h; the command that prints them is views/compare_cmd.h.
 */
#ifndef KBENCH_COMPARE_H
#define KBENCH_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum kbc_verdict {
    KBC_NO_CHANGE = 0, /* the interval reaches inside +-threshold          */
    KBC_FASTER = 1,    /* the whole interval is below -threshold           */
    KBC_SLOWER = 2,    /* the whole interval is above +threshold           */
    KBC_UNTESTED = 3,  /* fewer than 2 samples on a side, or a row that did
                          not run (skipped, error): no interval, no verdict */
    KBC_NOISY = 4      /* a side's own noise is above the threshold, and the
                          interval does not clear that noise              */
} kbc_verdict;
#define KBC_N_VERDICTS 5

/* How compare orders its rows: as the base file has them, or by the size
   of the change (the largest slowdown first, the largest speed-up last). */
typedef enum kbc_compare_sort { KBC_SORT_FILE, KBC_SORT_CHANGE } kbc_compare_sort;

typedef enum kbc_compare_format { KBC_CMP_TABLE, KBC_CMP_MARKDOWN, KBC_CMP_JSON } kbc_compare_format;

typedef struct kbc_compare_opts {
    double threshold; /* a fraction: 0.05 for 5%                         */
    double alpha;     /* 1 - the interval's confidence: 0.05 for 95%     */
    unsigned resamples;
    uint64_t seed;    /* the same seed for every row                      */
    kbc_compare_format format;
    unsigned threads; /* for the bootstrap; 0: one per CPU (at most 64).
                         The result does not depend on it. */
    /* A row whose sides both have at most this many samples gets the
       bootstrap; a larger one the order-statistic interval (docs/cli.md
       says why).  Default KBC_COMPARE_BOOT_MAX. */
    size_t boot_max;
    kbc_compare_sort sort;
    int only_changed; /* the table lists only slower, faster and noisy rows */
} kbc_compare_opts;
#define KBC_COMPARE_BOOT_MAX 1000

/* The defaults: threshold 5%, alpha 0.05, 1000 resamples, a fixed seed,
   the table. */
void kbc_compare_defaults(kbc_compare_opts *o);

/* One row's comparison.  ratio = median(new) / median(base); lo and hi
   bound its (1 - alpha) bootstrap interval (percentile method: each
   resample draws both sides' samples with replacement, independently).
   NaN where not measured. */
typedef struct kbc_change {
    double base_median, new_median;
    double ratio, lo, hi;
    /* Each side's own noise: the half-width of the distribution-free 95%
       interval of its median over the median (kbc_median_noise, the
       `noise` column of run); NaN below 2 samples. */
    double base_noise, new_noise;
    int bootstrap; /* the interval is the bootstrap's (1) or the order
                      statistics' (0) */
    kbc_verdict verdict;
} kbc_change;

/* The verdict of a change whose ratio interval [lo, hi] and side noises
   are set, under threshold T (docs/cli.md): with m = max(T, both noises),
   slower when lo > 1 + m, faster when hi < 1 - m, else noisy when a noise
   is above T, else no change. */
kbc_verdict kbc_compare_judge(const kbc_change *c, double threshold);

/* Whether the interval excludes a ratio of 1 (the change is significant
   at the interval's level, whatever the threshold). */
int kbc_compare_significant(const kbc_change *c);

/* z such that a standard normal lies beyond +-z with probability alpha. */
double kbc_normal_quantile(double alpha);

/* Compares the samples base[0..nb) with new[0..nn) under o.  Deterministic
   for a given o->seed.  Time: O(resamples * (nb + nn)) draws, spread over
   o->threads. */
void kbc_compare_samples(const double *base, size_t nb, const double *newer, size_t nn,
                         const kbc_compare_opts *o, kbc_change *out);

/* kbc_compare_samples() for n pairs at once (out[i] for pairs[i]), their
   resamples shared among the threads: what each gets is what
   kbc_compare_samples() would give it. */
typedef struct kbc_compare_pair {
    const double *base;
    size_t nb;
    const double *newer;
    size_t nn;
} kbc_compare_pair;
void kbc_compare_many(const kbc_compare_pair *pairs, size_t n, const kbc_compare_opts *o,
                      kbc_change *out);

/* For tests: the median of one bootstrap resample of the sorted x[0..n),
   drawing n indices from *s; half is the half-width of the window of
   counts kept (kbc_compare_window(n) in use; a smaller one makes the
   exact recount that follows a miss happen more).  scratch comes from
   kbc_resample_scratch(). */
size_t kbc_compare_window(size_t n);
uint64_t kbc_compare_mod(uint64_t x, uint64_t d); /* x % d, as the draws compute it */
double kbc_resample_median(const double *x, size_t n, uint64_t *s, size_t half, void *scratch);
void *kbc_resample_scratch(void);
void kbc_resample_scratch_free(void *scratch);

/* Finding rows by key in O(log n): order[0..n) gets the indices of
   keys[0..n) sorted by key (rows of one key by index); kbc_key_find()
   returns the first (lowest) index whose key is key, or -1. */
void kbc_key_order(char **keys, size_t n, size_t *order);
long kbc_key_find(char *const *keys, const size_t *order, size_t n, const char *key);

/* The verdict's word: "faster", "slower", "no change", "untested",
   "noisy". */
const char *kbc_verdict_name(kbc_verdict v);

/* The same verdict said of energy per run, where the ratio is the new
   joules over the base's: "less energy" (KBC_FASTER), "more energy"
   (KBC_SLOWER), and the others as kbc_verdict_name says them. */
const char *kbc_energy_verdict_name(kbc_verdict v);

/* A verdict's colour on a terminal (text.h's SGR): slower red, faster
   green, noisy yellow, untested dim; NULL for no change.  The compare
   table and the run table's "vs old" column colour alike. */
const char *kbc_verdict_sgr(kbc_verdict v);

#endif
