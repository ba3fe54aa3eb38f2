/*
 * runner_harness.h -- what the point's suites (test_point.c,
 * test_measure.c, test_value.c) share: the toy CPU plugin of
 * fixtures/runner loaded as the host would, one experiment built by hand
 * from a spec (the structures of config.h are public, so the suites check
 * the point alone), its points run in this process one after another as a
 * worker runs each (kbc_point_run, with the point's plan), and a sink that
 * keeps copies of every row.  The scheduler itself, the supervisor, has its
 * own suites (test_schedule.c in process, test_supervise.c end to end).
 *
 * Each suite declares
 *   TestSuite(NAME, .init = load_toy, .fini = unload_toy);
 * so that every test starts with the toy's trace empty and ends with what
 * it built and captured freed (and, under AddressSanitizer, checked for
 * leaks).  Linked into each suite (tests/runner.cmake).
 */
#ifndef KBENCH_TEST_RUNNER_HARNESS_H
#define KBENCH_TEST_RUNNER_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"
#include "point.h"
#include "toy.h"

/* ---- the toy plugin ------------------------------------------------- */

extern kbc_plugin toy_plugin;
extern toy_trace_fn toy_trace;

void load_toy(void);
/* Frees what the test built and captured; closes the toy. */
void unload_toy(void);

/* ---- building one experiment by hand -------------------------------- */

typedef struct spec {
    int variants[TOY_NVARIANTS + 1]; /* variant indices, ended by -1 */
    int baseline, reference;         /* variant index or -1          */
    uint32_t warmup, runs;
    double budget;
    int include_copies;
    uint64_t seed;
    uint64_t n[4];
    size_t n_n;
    uint64_t limit;
    int64_t slow_repeat, sleep_us;
    int64_t slow_sweep[4]; /* when n_slow > 1: slow_repeat's values */
    size_t n_slow;
    int fail_setup;
    int cache_cold;
    double noise_pct, min_time;       /* stopping on noise (0: off) */
    uint32_t min_runs, max_runs;
    int integrity;                    /* KBC_INTEGRITY_*: strict (0) by default */
} spec;

/* The toy's basic variants at n = 1024, 2 warm-up and 3 timed runs. */
spec default_spec(void);
/* Two variants over six points: good uses every parameter, nonly only n
   (distinct configurations, kb_variant.uses). */
spec uses_spec(void);
/* Fills e from s (its axes are freed when the test ends). */
void build(kbc_experiment *e, const spec *s);

/* ---- a sink that keeps copies of every row -------------------------- */

typedef struct capture {
    int begins, ends, end_code, destroys;
    double copy_gbps;
    kbc_record *rows;
    size_t n, cap;
    size_t points;
    int slot;          /* in captured[], for freeing the rows at the end  */
} capture;

int cap_begin(void *ctx, const kbc_run_info *info);
int cap_point(void *ctx, const kbc_record *rows, size_t n);
int cap_end(void *ctx, int code);

/* A machine without a GPU, two CPU threads. */
kbc_machine no_gpu_machine(void);
/* Plans every point of plan's experiments (point_plan.h) and runs them in
   order in this process on a device opened from m, as a worker runs the
   points its supervisor sends (kbc_point_run with each point's plan), into
   c.  Returns the exit code the supervisor gives such rows: 1 when one
   failed (kbc_outcome_failed), else 0. */
int run_points(kbc_plan *plan, const kbc_machine *m, capture *c);
/* Builds s, runs it on no_gpu_machine() into c; returns run_points's exit
   code. */
int run_spec(const spec *s, capture *c);
/* The row of point and variant; fails the test when there is none. */
const kbc_record *find_row(const capture *c, uint64_t point, int variant);

/* The toy's trace of calls, and how many events of kind `what` variant v
   has in it. */
const toy_event *events(size_t *n);
size_t count_events(char what, int v);
/* The sum of the toy's n inputs for a seed. */
double expected_input_sum(uint64_t seed, uint64_t n);

#endif
