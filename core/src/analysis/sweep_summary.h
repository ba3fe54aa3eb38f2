/*
 * sweep_summary.h -- an experiment's sweep read at a glance: one row per swept
 * value (the combinations of the parameters the experiment sweeps, in the
 * plan's order), one column per variant holding its median time, the
 * fastest passed cell of each row marked; and one line per variant against
 * the baseline and against the reference over the whole sweep: the
 * geometric mean of the speed-ups at the rows where both passed, with the
 * smallest and the largest ("onesweep-early 1.12x cub-radix over 10 points
 * (0.98x .. 1.19x)").  docs/output.md, "The sweep summary".
 *
 * A row of a variant that ignores a swept parameter (kbc_record.points >
 * 1) stands for every row it covers, as the run reports it.  A speed-up is
 * the other variant's median over this one's, as the table's "vs base"
 * column is, so a number above 1 means faster.
 *
 * Computed once from the records: the fan-out (views/fanout.h) feeds every
 * row of a run or a merge to an accumulator and hands the summaries to
 * each output (kbc_sink.sweeps, record.h); the HTML report makes them from
 * the rows of results.json the same way (kbc_sweeps_add for each).  The
 * views only render them.
 */
#ifndef KBENCH_SWEEP_SUMMARY_H
#define KBENCH_SWEEP_SUMMARY_H

#include <stddef.h>

#include "record.h"

/* A variant against the baseline or the reference over the sweep. */
typedef struct kbc_sweep_vs {
    const char *variant;
    const char *against;     /* the baseline's or the reference's name     */
    int reference;           /* 1: against the reference; 0: the baseline */
    size_t n;                /* rows where both passed                     */
    double geomean, min, max;/* the speed-ups; NaN when n is 0             */
} kbc_sweep_vs;

typedef struct kbc_sweep {
    const char *experiment;
    const char *baseline, *reference; /* "" when the experiment has none    */
    size_t n_params;         /* the swept parameters (the rows' labels)     */
    const char **params;
    size_t n_rows;
    const char **labels;     /* labels[row * n_params + k]: the text of
                                parameter k at that row                   */
    size_t n_variants;       /* in the order the run reported them         */
    const char **variants;
    /* cell (row, v) at [row * n_variants + v]: the median in seconds of a
       passed row, NaN otherwise; its outcome (kbc_outcome), -1 when the
       run has no row of the variant there. */
    double *median;
    int *outcome;
    int *best;               /* per row: the fastest passed variant, or -1
                                (fewer than two passed)                   */
    size_t n_vs;
    kbc_sweep_vs *vs;        /* every variant but the baseline against it,
                                then every variant but the reference
                                against it                                */
} kbc_sweep;

typedef struct kbc_sweeps kbc_sweeps;

kbc_sweeps *kbc_sweeps_new(void);
/* Notes one row (a copy of what the summary needs; r is not kept). */
void kbc_sweeps_add(kbc_sweeps *s, const kbc_record *r);
/* The summaries of the rows added so far, one per experiment in the order
   the experiments first appeared; *n gets their count.  Valid until the
   next add or free. */
const kbc_sweep *kbc_sweeps_list(kbc_sweeps *s, size_t *n);
void kbc_sweeps_free(kbc_sweeps *s);

/* One line of the summary: "onesweep-early 1.12x cub-radix over 10 points
   (0.98x .. 1.19x)", "... at 1 point", or "x: no point where both x and
   cub passed".  Returns buf. */
const char *kbc_sweep_vs_text(const kbc_sweep_vs *x, char *buf, size_t n);

/* A speed-up as the summary writes it: "1.12x", "31.4x", "1234x". */
const char *kbc_sweep_ratio_text(double r, char *buf, size_t n);

#endif
