/*
 * test_measure.c -- the measurement loop (cuda/measure.c) through a
 * point: warm-up and timed runs against runs and budget, include_copies,
 * the cold cache, the ceilings and the L2 flush (on a GPU), and stopping on
 * noise.  Plans are built by hand with the toy CPU plugin
 * (support/runner_harness.h).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "point.h"
#include "runner_harness.h"

TestSuite(measure, .init = load_toy, .fini = unload_toy);

Test(measure, timed_runs_follow_runs_when_the_budget_allows)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = -1;
    s.warmup = 4;
    s.runs = 7;
    /* The measurement loop's calls alone (integrity.h adds its own). */
    s.integrity = KBC_INTEGRITY_OFF;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GOOD);
    cr_assert_eq(r->time.n, 7);
    cr_assert_eq(count_events('R', TOY_GOOD), 1 + 4 + 7);
    /* Without include_copies only the checked run copies. */
    cr_assert_eq(count_events('U', TOY_GOOD), 1);
    cr_assert_eq(count_events('D', TOY_GOOD), 1);
    cr_assert_leq(r->time.min, r->time.median);
    cr_assert_leq(r->time.median, r->time.max);
    cr_assert_gt(r->time.min, 0.0);
}

Test(measure, include_copies_repeats_upload_and_download)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = -1;
    s.warmup = 2;
    s.runs = 5;
    s.include_copies = 1;
    /* The measurement loop's calls alone (integrity.h adds its own). */
    s.integrity = KBC_INTEGRITY_OFF;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    cr_assert_eq(count_events('U', TOY_GOOD), 1 + 2 + 5);
    cr_assert_eq(count_events('D', TOY_GOOD), 1 + 2 + 5);
    cr_assert_eq(count_events('R', TOY_GOOD), 1 + 2 + 5);
}

Test(measure, budget_stops_timed_runs_early)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = -1;
    s.warmup = 0;
    s.runs = 1000;
    s.budget = 0.05;
    s.sleep_us = 10000; /* each run sleeps at least 10 ms */
    /* The measurement loop's calls alone (integrity.h adds its own). */
    s.integrity = KBC_INTEGRITY_OFF;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GOOD);
    /* Five runs of at least 10 ms use up 50 ms, so a sixth never starts. */
    cr_assert_geq(r->time.n, 1);
    cr_assert_leq(r->time.n, 5);
    cr_assert_geq(r->time.min, 0.010);
    cr_assert_eq(count_events('R', TOY_GOOD), 1 + r->time.n);
}

Test(measure, a_zero_budget_still_times_one_run)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = -1;
    s.runs = 50;
    s.budget = 0.0;
    /* The measurement loop's calls alone (integrity.h adds its own). */
    s.integrity = KBC_INTEGRITY_OFF;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    cr_assert_eq(find_row(&c, 0, TOY_GOOD)->time.n, 1);
    cr_assert_eq(count_events('R', TOY_GOOD), 1 + s.warmup + 1);
}

/* ---- cold cache ------------------------------------------------------- */

Test(measure, cache_cold_marks_cuda_rows_and_not_cpu_ones)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = TOY_GPU;
    s.variants[2] = -1;
    s.cache_cold = 1;
    capture c = {0};
    run_spec(&s, &c);
    cr_assert_eq(find_row(&c, 0, TOY_GPU)->cache_cold, 1);
    cr_assert_eq(find_row(&c, 0, TOY_GOOD)->cache_cold, 0,
                 "the L2 flush is a device's; CPU rows run hot");
}

/* ---- on a GPU only: ceilings and the L2 flush --------------------------- */

Test(measure, a_device_measures_three_ceilings)
{
    kbc_machine m;
    kbc_gpu_probe(&m);
    if (!m.has_gpu)
        cr_skip_test("needs a GPU: %s", m.no_gpu_reason);
    kbc_device d;
    kbc_device_open(&d, &m, 1);
    cr_assert_eq(d.usable, 1, "%s", d.why_not);
    cr_assert_gt(d.ceilings.read_gbps, 0.0);
    cr_assert_gt(d.ceilings.write_gbps, 0.0);
    cr_assert_gt(d.ceilings.copy_gbps, 0.0);
    kbc_device_close(&d);
}

Test(measure, the_l2_flush_buffer_is_twice_the_l2_and_writes_cleanly)
{
    kbc_machine m;
    kbc_gpu_probe(&m);
    if (!m.has_gpu)
        cr_skip_test("needs a GPU: %s", m.no_gpu_reason);
    kbc_device d;
    kbc_device_open(&d, &m, 0);
    cr_assert_eq(d.usable, 1, "%s", d.why_not);
    cr_assert_eq(kbc_device_flush_prepare(&d), 0, "%s", d.flush_why);
    if (m.l2_bytes > 0)
        cr_assert_eq(d.flush_bytes, 2 * m.l2_bytes);
    char why[400];
    cr_assert_eq(kbc_device_flush(&d, why, sizeof why), 0, "%s", why);
    cr_assert_eq(kbc_device_settle(&d, why, sizeof why), 0, "%s", why);
    kbc_device_close(&d);
}

Test(measure, a_cold_cache_cuda_row_runs_and_says_cold)
{
    kbc_machine m;
    kbc_gpu_probe(&m);
    if (!m.has_gpu)
        cr_skip_test("needs a GPU: %s", m.no_gpu_reason);
    spec s = default_spec();
    s.variants[0] = TOY_GPU;
    s.variants[1] = -1;
    s.baseline = TOY_GPU;
    s.cache_cold = 1;
    static kbc_experiment e;
    build(&e, &s);
    kbc_plan plan = {.path = "test.ini", .exps = &e, .n = 1, .n_points = 1};
    capture c = {0};
    cr_assert_eq(run_points(&plan, &m, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GPU);
    cr_assert_eq(r->outcome, KBC_PASS, "%s", r->reason);
    cr_assert_eq(r->cache_cold, 1);
    cr_assert_str_eq(r->device, m.name);
    cr_assert_eq(r->time.n, s.runs);
    cr_assert_eq(count_events('X', TOY_GPU), 0);
}

/* ---- stopping on noise ---------------------------------------------- */

static spec noise_spec(double noise_pct, uint32_t min_runs, uint32_t max_runs)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = -1;
    s.warmup = 0;
    s.noise_pct = noise_pct;
    s.min_runs = min_runs;
    s.max_runs = max_runs;
    return s;
}

Test(measure, a_met_noise_target_stops_at_min_runs)
{
    spec s = noise_spec(100.0, 4, 100);
    s.sleep_us = 2000; /* 2 ms a run: far steadier than +-100% */
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GOOD);
    cr_assert_eq(r->time.n, 4);
    cr_assert_eq(r->noise_capped, 0);
}

Test(measure, an_unreachable_noise_target_stops_at_max_runs_and_is_marked)
{
    spec s = noise_spec(1e-9, 2, 6);
    s.sleep_us = 100;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GOOD);
    cr_assert_eq(r->time.n, 6);
    cr_assert_eq(r->noise_capped, 1);
}

Test(measure, the_budget_caps_a_noise_target)
{
    spec s = noise_spec(1e-9, 2, 1000);
    s.budget = 0.03;
    s.sleep_us = 10000; /* three runs spend the budget */
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GOOD);
    cr_assert_leq(r->time.n, 3);
    cr_assert_eq(r->noise_capped, 1);
}

Test(measure, min_time_holds_off_the_noise_judgement)
{
    spec s = noise_spec(100.0, 1, 1000);
    s.min_time = 0.03;
    s.sleep_us = 2000;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GOOD);
    /* Without min_time two runs (4 ms) would do. */
    cr_assert_geq((double)r->time.n * r->time.max, 0.03, "%zu runs", r->time.n);
}

Test(measure, a_fixed_run_count_reports_its_noise_without_a_target)
{
    spec s = noise_spec(0.0, 0, 0);
    s.runs = 5;
    s.sleep_us = 100;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GOOD);
    cr_assert_eq(r->time.n, 5);
    cr_assert(isfinite(r->noise));
    cr_assert_eq(r->noise_target, 0.0);
    cr_assert_eq(r->noise_capped, 0);
}

/* The hold before a timed sample (measure.h): only CUDA rows, only with
   the hold's memory, never for a run() that waits for the stream or for
   timed copies (either would only wait out the hold's timeout). */
Test(measure, the_hold_is_for_cuda_rows_that_enqueue_and_return)
{
    cr_assert_eq(kbc_hold_wanted(1, 0, 0, 1), 1);
    cr_assert_eq(kbc_hold_wanted(0, 0, 0, 1), 0);
    cr_assert_eq(kbc_hold_wanted(1, 0, 0, 0), 0);
    cr_assert_eq(kbc_hold_wanted(1, KB_VARIANT_SYNCS, 0, 1), 0);
    cr_assert_eq(kbc_hold_wanted(1, KB_VARIANT_NONDETERM, 0, 1), 1);
    cr_assert_eq(kbc_hold_wanted(1, 0, 1, 1), 0);
}
