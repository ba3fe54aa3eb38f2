/*
 * compare.h -- `kbench compare BASE.json NEW.json`: the rows of two runs
 * matched by their stable key, the change of each row's median with a
 * bootstrap confidence interval of the ratio of medians, a verdict per row
 * (faster, slower, no change) and an exit code that can gate a CI job.
 * docs/cli.md states the rule.  Needs the records and the results reader
 * only.
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
    KBC_UNTESTED = 3   /* fewer than 2 samples on a side, or a row that did
                          not run (skipped, error): no interval, no verdict */
} kbc_verdict;

typedef enum kbc_compare_format { KBC_CMP_TABLE, KBC_CMP_MARKDOWN, KBC_CMP_JSON } kbc_compare_format;

typedef struct kbc_compare_opts {
    double threshold; /* a fraction: 0.05 for 5%                         */
    double alpha;     /* 1 - the interval's confidence: 0.05 for 95%     */
    unsigned resamples;
    uint64_t seed;    /* the same seed for every row                      */
    kbc_compare_format format;
    unsigned threads; /* for the bootstrap; 0: one per CPU (at most 64).
                         The result does not depend on it. */
} kbc_compare_opts;

/* The defaults: threshold 5%, alpha 0.05, 2000 resamples, a fixed seed,
   the table. */
void kbc_compare_defaults(kbc_compare_opts *o);

/* One row's comparison.  ratio = median(new) / median(base); lo and hi
   bound its (1 - alpha) bootstrap interval (percentile method: each
   resample draws both sides' samples with replacement, independently).
   NaN where not measured. */
typedef struct kbc_change {
    double base_median, new_median;
    double ratio, lo, hi;
    kbc_verdict verdict;
} kbc_change;

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

/* The verdict's word: "faster", "slower", "no change", "untested". */
const char *kbc_verdict_name(kbc_verdict v);

/* The whole command: reads both files, prints the comparison on out in
   o->format, warnings on err and out (see docs/cli.md).  Returns 0 when no
   row is slower, 1 when one is, 2 for bad input (after one sentence on
   err). */
int kbc_cmd_compare(const char *base_path, const char *new_path, const kbc_compare_opts *o,
                    FILE *out, FILE *err);

#endif
