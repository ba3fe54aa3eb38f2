/*
 * test_runner.c -- kbc_run_plan as a whole (exec/runner.c): skipped rows and
 * the exit code, a sink that cannot write, the machine probe and a GPU
 * without a driver.  The point, the measurement loop and the derived values
 * have their own suites (test_point.c, test_measure.c, test_value.c); all
 * share the toy plugin and the capturing sink of support/runner_harness.h.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "point.h"
#include "runner.h"
#include "runner_harness.h"

TestSuite(runner, .init = load_toy, .fini = unload_toy);

Test(runner, skipped_rows_do_not_fail_a_run)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = TOY_LIMITED;
    s.variants[2] = TOY_GPU;
    s.variants[3] = -1;
    s.n[0] = 100000; /* above limit */
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    cr_assert_eq(c.end_code, KBC_EXIT_OK);
    cr_assert_eq(find_row(&c, 0, TOY_LIMITED)->outcome, KBC_SKIPPED);
    cr_assert_eq(find_row(&c, 0, TOY_GPU)->outcome, KBC_SKIPPED);
}

Test(runner, a_sink_that_cannot_write_makes_a_system_error)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = -1;
    s.n[0] = 16;
    s.n[1] = 32;
    s.n[2] = 64;
    s.n_n = 3;
    capture c = {.fail_at_point = 2};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_SYSTEM);
    /* The failing sink is not fed again, and gets no end(). */
    cr_assert_eq(c.points, 2);
    cr_assert_eq(c.n, 1);
    cr_assert_eq(c.ends, 0);
    /* The plan still ran to its end. */
    cr_assert_eq(count_events('T', -1), 3);
}

Test(runner, a_gpu_without_a_driver_skips_cuda_variants)
{
    kbc_machine real;
    kbc_gpu_probe(&real);
    if (real.has_gpu)
        cr_skip_test("a real GPU is present; this test is for machines without a driver");
    spec s = default_spec();
    static kbc_experiment e;
    build(&e, &s);
    kbc_plan plan = {.path = "test.ini", .exps = &e, .n = 1, .n_points = 1};
    /* A machine that claims a GPU the runtime cannot reach: the stream
       cannot be made, and the CUDA variant must be skipped, not crash. */
    kbc_machine m = no_gpu_machine();
    m.has_gpu = 1;
    m.device = 0;
    capture c = {0};
    kbc_sink sink = {.ctx = &c, .begin = cap_begin, .point = cap_point, .end = cap_end};
    kbc_run_set_quiet(1);
    kbc_run_plan(&plan, &m, &sink, 1, "x");
    const kbc_record *g = find_row(&c, 0, TOY_GPU);
    cr_assert_eq(g->outcome, KBC_SKIPPED);
    cr_assert_not_null(strstr(g->reason, "no CUDA device"), "%s", g->reason);
    cr_assert_eq(count_events('X', TOY_GPU), 0);
    cr_assert_eq(find_row(&c, 0, TOY_GOOD)->outcome, KBC_PASS);
}

Test(runner, probe_without_a_driver_says_why)
{
    kbc_machine m;
    kbc_gpu_probe(&m);
    cr_assert_gt(m.cpu_threads, 0);
    cr_assert_gt(strlen(m.host), 0);
    if (m.has_gpu) {
        cr_assert_gt(m.sm_count, 0);
        cr_assert_gt(m.mem_bytes, 0);
    } else {
        /* Which of the two depends on the machine; either names itself. */
        cr_assert(strncmp(m.no_gpu_reason, "no CUDA driver", 14) == 0 ||
                      strncmp(m.no_gpu_reason, "no CUDA device", 14) == 0,
                  "%s", m.no_gpu_reason);
        cr_assert_eq(m.device, -1);
    }
}

/* Without a driver at all (this machine, CI), the reason says so rather
   than blaming a device. */
Test(runner, probe_names_a_missing_driver)
{
    kbc_machine m;
    kbc_gpu_probe(&m);
    if (m.has_gpu || m.driver_version > 0)
        cr_skip_test("a CUDA driver is installed here");
    cr_assert_eq(strncmp(m.no_gpu_reason, "no CUDA driver", 14), 0, "%s", m.no_gpu_reason);
}
