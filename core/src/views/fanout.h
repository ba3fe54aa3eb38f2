/*
 * fanout.h -- a run's records delivered to all of its outputs (sinks,
 * record.h): the table, results.csv, results.json, results.md, or merge's
 * files.  The one place that decides what happens when an output cannot be
 * written, and that finds the run's suspect rows (analysis/suspect.h) and
 * sums up each experiment's sweep (analysis/sweep_summary.h), once for every
 * output.
 *
 * Order of calls, for whoever runs the points (the supervisor, merge):
 *
 *     kbc_fanout f;
 *     kbc_fanout_init(&f, sinks, n_sinks, stderr, "kbench: ");
 *     kbc_fanout_journal(&f, journal_path);      optional, see below
 *     kbc_fanout_quiet(&f, progress_clear, s);   optional, see below
 *     kbc_fanout_begin(&f, &info);               once the header is known
 *     kbc_fanout_point(&f, recs, n);             each point, in plan order
 *     kbc_fanout_tick(&f);                       now and then while waiting
 *     code = kbc_fanout_end(&f, code);           suspects, sweeps, then end()
 *     kbc_fanout_free(&f);
 *
 * point(), tick() and end() do nothing before begin() (a run that stopped
 * before its first worker said hello has nothing to report); the sinks
 * stay the caller's (kbc_fanout_free does not destroy them).
 *
 * The failure policy.  A sink whose begin(), point(), tick(), suspects(),
 * sweeps() or end() returns -1 is dropped: it is called no more.  Its sentence
 * (kbc_sink.error) is said once on err, after the prefix, with what that
 * means for the run:
 *   - when a journal keeps every finished point (kbc_fanout_journal) and
 *     the run goes on: "PREFIX WHY; the run goes on, and JOURNAL keeps
 *     every point: once there is room, run again with --resume and the
 *     same -o to write the results files whole.";
 *   - the same at the end (end() failed): "PREFIX WHY; every point the run
 *     finished is in JOURNAL: once there is room, run again with --resume
 *     and the same -o to write the results files whole.";
 *   - without a journal, or once it failed (kbc_fanout_journal(f, NULL),
 *     whose own sentence said what to do): "PREFIX WHY.".
 * A sink without a sentence (the table on stdout) is the caller's to
 * report (kbc_fanout_ok says which failed).  Before each sentence the
 * quiet hook runs (a progress line is cleared).  The run goes on for the
 * other sinks, and kbc_fanout_end returns KBC_EXIT_SYSTEM when any sink
 * failed: the code every sink's end() is given is the run's, made
 * KBC_EXIT_SYSTEM first when a sink failed before the end, and for the
 * sinks after one whose end() failed.
 *
 * The suspect rows and the sweep summaries (analysis/sweep_summary.h) are found
 * from every row handed to kbc_fanout_point and given to each sink's
 * suspects(), then sweeps(), just before the end.
 */
#ifndef KBENCH_FANOUT_H
#define KBENCH_FANOUT_H

#include <stddef.h>
#include <stdio.h>

#include "record.h"
#include "suspect.h"
#include "sweep_summary.h"

typedef struct kbc_fanout {
    kbc_sink *sinks; /* borrowed */
    size_t n;
    int *ok;         /* per sink: not dropped                       */
    int begun, ended;
    FILE *err;
    const char *prefix;
    const char *journal; /* the file that keeps every finished point */
    void (*quiet)(void *ctx);
    void *quiet_ctx;
    kbc_suspects *suspects;
    kbc_sweeps *sweeps;
} kbc_fanout;

/* sinks[0..n) are borrowed; err and prefix ("kbench: ") are where and how
   a failed sink's sentence is said. */
void kbc_fanout_init(kbc_fanout *f, kbc_sink *sinks, size_t n, FILE *err, const char *prefix);

/* The journal that keeps every point the run finishes (its path, which
   must outlive f), or NULL: none, or it failed and said so itself. */
void kbc_fanout_journal(kbc_fanout *f, const char *path);

/* fn(ctx) runs before the fan-out writes a sentence on err. */
void kbc_fanout_quiet(kbc_fanout *f, void (*fn)(void *ctx), void *ctx);

void kbc_fanout_begin(kbc_fanout *f, const kbc_run_info *info);
void kbc_fanout_point(kbc_fanout *f, const kbc_record *recs, size_t n);
void kbc_fanout_tick(kbc_fanout *f);

/* Hands the suspect rows and the sweep summaries to the sinks and ends them with code (see the
   failure policy above); returns code, or KBC_EXIT_SYSTEM when a sink
   failed.  Before kbc_fanout_begin: returns code and calls nothing. */
int kbc_fanout_end(kbc_fanout *f, int code);

/* Whether begin() ran, and whether sink k is still written. */
int kbc_fanout_began(const kbc_fanout *f);
int kbc_fanout_ok(const kbc_fanout *f, size_t k);

void kbc_fanout_free(kbc_fanout *f);

#endif
