/*
 * suspect.h -- rows that contradict their neighbours: a row of a variant
 * whose median is more than KBC_SUSPECT_FACTOR times that of the same
 * variant at a point of the same experiment that differs only in its
 * sizes (every other parameter equal) and has at least as much work
 * (bytes, flops and items all at least as many, one of them more).  A
 * larger problem that runs much faster is no property of the kernel but of
 * the measurement (a GPU that had not left its idle clocks, a library's
 * first use, another process), so such a row is named in the table's
 * notes, in results.md, in results.json ("suspects") and in the HTML
 * report rather than reported as clean; rerunning its point tells which.
 * docs/output.md, "Suspect rows".
 *
 * The fan-out to the outputs (views/fanout.h) feeds every row to an
 * accumulator and hands the list to each output at the end of the run
 * (kbc_sink.suspects, record.h); the outputs find none themselves.
 */
#ifndef KBENCH_SUSPECT_H
#define KBENCH_SUSPECT_H

#include <stddef.h>

#include "record.h"

#define KBC_SUSPECT_FACTOR 2.0
/* Rows faster than this are left out: below a microsecond a median is
   mostly the clock's resolution and a launch's or a call's cost. */
#define KBC_SUSPECT_MIN_S 1e-6

typedef struct kbc_suspects kbc_suspects;

kbc_suspects *kbc_suspects_new(void);
/* Notes one row (a copy of what the check needs; r is not kept).  Only
   passed rows with a median and some work take part. */
void kbc_suspects_add(kbc_suspects *s, const kbc_record *r);
/* The findings so far, at most one per suspect row (the neighbour with the
   largest ratio of medians), in the order the rows were added; *n gets
   their count.  Valid until the next add or free. */
const kbc_suspect *kbc_suspects_list(kbc_suspects *s, size_t *n);
void kbc_suspects_free(kbc_suspects *s);

/* One finding as the notes say it: "KEY: 62.1 us, more than 2x the 25.3 us
   of KEY2, which does 5.6x the work; rerun its point" (for a CPU row, the
   advice says why a rerun on the same host would not help).  Returns
   buf. */
const char *kbc_suspect_text(const kbc_suspect *x, char *buf, size_t n);

#endif
