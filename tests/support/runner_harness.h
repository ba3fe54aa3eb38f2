/*
 * runner_harness.h -- what the runner's suites (test_runner.c, test_point.c,
 * test_measure.c, test_value.c) share: the toy CPU plugin of
 * fixtures/runner loaded as the host would, one experiment built by hand
 * from a spec (the structures of config.h are public, so the suites check
 * the runner alone), and a sink that keeps copies of every row.
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

#include "point.h"
#include "runner.h"
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
    int fail_at_point; /* point() returns -1 from this call on (1-based), 0: never */
    int slot;          /* in captured[], for freeing the rows at the end  */
} capture;

int cap_begin(void *ctx, const kbc_run_info *info);
int cap_point(void *ctx, const kbc_record *rows, size_t n);
int cap_end(void *ctx, int code);

/* A machine without a GPU, two CPU threads. */
kbc_machine no_gpu_machine(void);
/* Builds s, runs it on no_gpu_machine() into c; returns the exit code. */
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
