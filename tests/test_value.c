/*
 * test_value.c -- the values a row derives from its measurements: speed-ups
 * against the baseline (also one that ran at an earlier point), rates from
 * the medians, and the bandwidth ceiling that matches the row's traffic.
 * Plans are built by hand with the toy CPU plugin (support/runner_harness.h).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "point.h"
#include "runner_harness.h"

TestSuite(value, .init = load_toy, .fini = unload_toy);

Test(value, speedups_and_rates_come_from_the_medians)
{
    spec s = default_spec();
    s.variants[0] = TOY_SLOW;
    s.variants[1] = TOY_GOOD;
    s.variants[2] = TOY_BROKEN;
    s.variants[3] = TOY_GPU;
    s.variants[4] = -1;
    s.baseline = TOY_GOOD;
    s.reference = TOY_SLOW;
    s.n[0] = 1 << 16;
    s.slow_repeat = 16;
    s.runs = 5;
    capture c = {0};
    run_spec(&s, &c);
    const kbc_record *slow = find_row(&c, 0, TOY_SLOW);
    const kbc_record *good = find_row(&c, 0, TOY_GOOD);
    const kbc_record *broken = find_row(&c, 0, TOY_BROKEN);
    const kbc_record *gpu = find_row(&c, 0, TOY_GPU);
    double ms = slow->time.median, mg = good->time.median;

    cr_assert_eq(good->speedup_baseline, 1.0);
    cr_assert_eq(slow->speedup_baseline, mg / ms);
    /* Sixteen times the work is slower. */
    cr_assert_lt(slow->speedup_baseline, 1.0);
    /* The first CPU variant of the list that ran is slow. */
    cr_assert_eq(slow->speedup_cpu, 1.0);
    cr_assert_eq(good->speedup_cpu, ms / mg);
    cr_assert_gt(good->speedup_cpu, 1.0);
    cr_assert_eq(good->speedup_reference, ms / mg);
    cr_assert_eq(slow->speedup_reference, 1.0);
    /* No speed-ups or rates for what did not run. */
    cr_assert(isnan(broken->speedup_baseline));
    cr_assert(isnan(broken->gbps));
    cr_assert(isnan(gpu->speedup_cpu));
    cr_assert(isnan(gpu->pct_ceiling));

    double n = (double)s.n[0];
    cr_assert_eq(good->work.items, s.n[0]);
    cr_assert_eq(good->gbps, (16.0 * n) / mg / 1e9);
    cr_assert_eq(good->gflops, (2.0 * n) / mg / 1e9);
    cr_assert_eq(good->items_per_s, n / mg);
    /* CPU variants have no copy ceiling to compare with. */
    cr_assert(isnan(good->pct_ceiling));
}

Test(value, a_baseline_that_did_not_run_gives_no_speedup)
{
    spec s = default_spec();
    s.variants[0] = TOY_BROKEN;
    s.variants[1] = TOY_GOOD;
    s.variants[2] = -1;
    s.baseline = TOY_BROKEN;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_FAILED);
    const kbc_record *good = find_row(&c, 0, TOY_GOOD);
    cr_assert_eq(good->outcome, KBC_PASS);
    cr_assert(isnan(good->speedup_baseline));
    cr_assert(isnan(good->speedup_reference));
    cr_assert_eq(good->speedup_cpu, 1.0);
}

/* ---- the ceiling that matches the traffic ----------------------------- */

Test(value, ceiling_for_read_only_write_only_and_mixed)
{
    kbc_ceilings k = {.read_gbps = 3000, .write_gbps = 2000, .copy_gbps = 2500};
    const char *kind;
    cr_assert_eq(kbc_ceiling_for(&k, 100, 0, &kind), 3000);
    cr_assert_str_eq(kind, "read");
    cr_assert_eq(kbc_ceiling_for(&k, 0, 100, &kind), 2000);
    cr_assert_str_eq(kind, "write");
    /* Equal bytes: 2 / (1/3000 + 1/2000) = 2400. */
    cr_assert_float_eq(kbc_ceiling_for(&k, 100, 100, &kind), 2400.0, 1e-9);
    cr_assert_str_eq(kind, "mixed");
    /* Mostly reads lean to the read ceiling. */
    cr_assert_gt(kbc_ceiling_for(&k, 900, 100, &kind), 2800.0);
    k.read_gbps = 0;
    cr_assert_eq(kbc_ceiling_for(&k, 100, 100, &kind), 2500, "the copy ceiling stands in");
    cr_assert_eq(kbc_ceiling_for(&k, 0, 0, &kind), 0);
    cr_assert_str_eq(kind, "");
}

/* ---- speed-ups against a baseline that ran at an earlier point -------- */

Test(value, the_representative_point_zeroes_the_unused_axes)
{
    spec s = uses_spec();
    static kbc_experiment e;
    build(&e, &s);
    /* Points: n = 100 at 0, 1, 2 and n = 200 at 3, 4, 5. */
    cr_assert_eq(kbc_point_representative(&e, 2, TOY_NONLY), 0);
    cr_assert_eq(kbc_point_representative(&e, 4, TOY_NONLY), 3);
    cr_assert_eq(kbc_point_representative(&e, 4, TOY_GOOD), 4, "good uses everything");
}

Test(value, a_deduplicated_baseline_still_gives_speedups_at_later_points)
{
    spec s = uses_spec();
    s.baseline = TOY_NONLY;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *base = find_row(&c, 3, TOY_NONLY);
    const kbc_record *good = find_row(&c, 5, TOY_GOOD);
    cr_assert_eq(good->speedup_baseline, base->time.median / good->time.median);
}
