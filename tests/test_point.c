/*
 * test_point.c -- one point of an experiment (exec/point.c), as a worker runs it:
 * each variant's outcome, the lifecycle's order, a failed setup, CUDA errors
 * that pass or stick (on a GPU), distinct configurations (kb_variant.uses),
 * the host's own judgement of verify(), and self-contained records.  Plans
 * are built by hand with the toy CPU plugin (support/runner_harness.h).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "point.h"
#include "runner_harness.h"

TestSuite(point, .init = load_toy, .fini = unload_toy);

Test(point, each_variant_gets_its_outcome)
{
    spec s = default_spec();
    s.n[0] = 1024;
    s.n[1] = 8192; /* above limit: limited refuses it */
    s.n_n = 2;
    capture c = {0};
    int code = run_spec(&s, &c);

    cr_assert_eq(code, KBC_EXIT_FAILED, "wrong and broken must fail the run");
    cr_assert_eq(c.begins, 1);
    cr_assert_eq(c.ends, 1);
    cr_assert_eq(c.end_code, KBC_EXIT_FAILED);
    cr_assert_eq(c.points, 2);
    cr_assert_eq(c.n, 2 * TOY_NBASIC);
    cr_assert_eq(c.copy_gbps, 0.0);

    for (uint64_t p = 0; p < 2; p++) {
        cr_assert_eq(find_row(&c, p, TOY_GOOD)->outcome, KBC_PASS);
        cr_assert_eq(find_row(&c, p, TOY_SLOW)->outcome, KBC_PASS);
        const kbc_record *w = find_row(&c, p, TOY_WRONG);
        cr_assert_eq(w->outcome, KBC_FAIL);
        cr_assert_eq(w->check.passed, 0);
        cr_assert_gt(w->check.error, w->check.tolerance);
        /* A wrong answer is still timed. */
        cr_assert_eq(w->time.n, s.runs);
        const kbc_record *b = find_row(&c, p, TOY_BROKEN);
        cr_assert_eq(b->outcome, KBC_ERROR);
        cr_assert_not_null(strstr(b->reason, "the broken variant fails on purpose"), "%s",
                           b->reason);
        cr_assert_eq(b->time.n, 0);
        cr_assert(isnan(b->time.median));
        const kbc_record *g = find_row(&c, p, TOY_GPU);
        cr_assert_eq(g->outcome, KBC_SKIPPED);
        cr_assert_not_null(strstr(g->reason, "no CUDA device"), "%s", g->reason);
        cr_assert_eq(g->params[TOY_N].value.u, s.n[p]);
    }
    cr_assert_eq(find_row(&c, 0, TOY_LIMITED)->outcome, KBC_PASS);
    const kbc_record *l = find_row(&c, 1, TOY_LIMITED);
    cr_assert_eq(l->outcome, KBC_SKIPPED);
    cr_assert_not_null(strstr(l->reason, "at most 4096"), "%s", l->reason);

    /* The CUDA variant's code never ran, and setup was told so. */
    cr_assert_eq(count_events('X', TOY_GPU), 0);
    size_t n;
    const toy_event *ev = events(&n);
    size_t setups = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_neq(ev[i].variant, TOY_GPU, "event '%c' reached the gpu variant", ev[i].what);
        if (ev[i].what == 'S') {
            setups++;
            cr_assert_eq(ev[i].mask & KB_VARIANT_BIT(TOY_GPU), 0);
            cr_assert_eq(ev[i].mask, (KB_VARIANT_BIT(TOY_NBASIC) - 1) & ~KB_VARIANT_BIT(TOY_GPU));
        }
    }
    cr_assert_eq(setups, 2);
}

Test(point, lifecycle_order_poison_and_same_inputs)
{
    spec s = default_spec();
    s.variants[0] = TOY_SLOW;
    s.variants[1] = TOY_GOOD;
    s.variants[2] = TOY_WRONG;
    s.variants[3] = -1;
    s.n[0] = 300;
    s.n[1] = 500;
    s.n_n = 2;
    s.seed = 12345;
    capture c = {0};
    run_spec(&s, &c);

    size_t n;
    const toy_event *ev = events(&n);
    size_t i = 0;
    for (uint64_t p = 0; p < 2; p++) {
        double want = expected_input_sum(s.seed, s.n[p]);
        cr_assert_eq(ev[i].what, 'S', "point %llu starts with setup", (unsigned long long)p);
        const void *state = ev[i].state;
        i++;
        size_t calls = 0;
        for (int k = 0; k < 3; k++) {
            int v = s.variants[k];
            size_t at = i;
            /* Poison first, then the checked run with its copies, then
               verify, then warm-up runs of run() alone, the poison again
               and the timed runs. */
            cr_assert_eq(ev[i].what, 'P');
            cr_assert_eq(ev[i].variant, v);
            cr_assert_eq(ev[i + 1].what, 'U');
            cr_assert_eq(ev[i + 2].what, 'R');
            cr_assert_eq(ev[i + 2].out_poisoned, 1, "variant %d ran on an unpoisoned output", v);
            cr_assert_eq(ev[i + 3].what, 'D');
            cr_assert_eq(ev[i + 4].what, 'V');
            i += 5;
            for (uint32_t r = 0; r < s.warmup; r++, i++) {
                cr_assert_eq(ev[i].what, 'R');
                cr_assert_eq(ev[i].variant, v);
            }
            cr_assert_eq(ev[i++].what, 'P', "the outputs are poisoned before the timed runs");
            cr_assert_eq(ev[i].what, 'R');
            cr_assert_eq(ev[i].out_poisoned, 1, "the first timed run starts on poison");
            for (uint32_t r = 0; r < s.runs; r++, i++) {
                cr_assert_eq(ev[i].what, 'R');
                cr_assert_eq(ev[i].variant, v);
            }
            if (v != TOY_WRONG) {
                /* The integrity checks of a passed row (integrity.h): the
                   post-check, the poison check, the audit round. */
                const char want[] = "DVPDVPRDV";
                for (size_t w = 0; w < sizeof want - 1; w++, i++) {
                    cr_assert_eq(ev[i].what, want[w], "variant %d: call %zu of the checks", v, w);
                    cr_assert_eq(ev[i].variant, v);
                }
            }
            calls += i - at;
        }
        cr_assert_eq(ev[i].what, 'T');
        cr_assert_eq(ev[i].state, state, "teardown gets the state setup made");
        i++;
        /* Every call of this point saw the same seed and the same inputs. */
        size_t first = i - (2 + calls);
        for (size_t j = first; j < i; j++) {
            cr_assert_eq(ev[j].seed, s.seed);
            cr_assert_eq(ev[j].n, s.n[p]);
            cr_assert_float_eq(ev[j].input_sum, want, 1e-9 * want, "event %zu", j);
        }
    }
    cr_assert_eq(i, n, "no calls after the last teardown");
}

Test(point, a_failed_setup_errs_every_runnable_variant_and_still_tears_down)
{
    spec s = default_spec();
    s.fail_setup = 1;
    s.n[0] = 64;
    s.n[1] = 128;
    s.n_n = 2;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_FAILED);
    for (uint64_t p = 0; p < 2; p++)
        for (int v = 0; v < TOY_NBASIC; v++) {
            const kbc_record *r = find_row(&c, p, v);
            if (v == TOY_GPU) {
                cr_assert_eq(r->outcome, KBC_SKIPPED);
                continue;
            }
            cr_assert_eq(r->outcome, KBC_ERROR, "variant %d", v);
            cr_assert_not_null(strstr(r->reason, "setup fails on purpose"), "%s", r->reason);
        }
    size_t n;
    const toy_event *ev = events(&n);
    cr_assert_eq(n, 4, "setup, teardown, setup, teardown; nothing else");
    cr_assert_eq(ev[0].what, 'S');
    cr_assert_eq(ev[1].what, 'T');
    cr_assert_eq(ev[1].state, ev[0].state);
    cr_assert_eq(ev[2].what, 'S');
    cr_assert_eq(ev[3].what, 'T');
}

/* Where a GPU is present: an error the runtime forgets costs only its own
   variant; one that stays in the context (an illegal address) costs every
   later CUDA variant, which is then skipped with the earlier error named,
   while CPU variants still run. */
Test(point, cuda_errors_passing_and_sticky)
{
    kbc_machine m;
    kbc_gpu_probe(&m);
    if (!m.has_gpu)
        cr_skip_test("needs a GPU: %s", m.no_gpu_reason);
    const char *path = KBENCH_FIXTURE_DIR "/runner/kbench-fault.so";
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(dl, "cannot load %s: %s", path, dlerror());
    kb_entry_fn entry = (kb_entry_fn)dlsym(dl, KB_ENTRY_SYMBOL);
    cr_assert_not_null(entry);
    static kbc_plugin fault;
    fault.desc = entry(0);
    fault.path = (char *)path;
    static kbc_experiment e;
    e.name = "faults";
    e.plugin = &fault;
    e.n_variants = fault.desc->n_variants;
    for (uint32_t v = 0; v < e.n_variants; v++)
        e.variants[v] = v;
    e.baseline = -1;
    e.reference = -1;
    e.measure = (kbc_measure){.warmup = 1, .runs = 3, .budget_s = 1.0, .seed = 1, .cpu_threads = 1};
    e.n_points = 2;
    kbc_plan plan = {.path = "faults.ini", .exps = &e, .n = 1, .n_points = 2};
    capture c = {0};
    /* Every point repeats the single parameterless point; n_points = 2
       checks that the loss carries over to the next point. */
    static kbc_axis none;
    e.axes = &none;
    int code = run_points(&plan, &m, &c);
    cr_assert_eq(code, KBC_EXIT_FAILED);
    cr_assert_gt(c.copy_gbps, 0.0);
    enum { LAUNCHBAD, OK, ILLEGAL, OK2, CPU };
    const kbc_record *r = find_row(&c, 0, LAUNCHBAD);
    cr_assert_eq(r->outcome, KBC_ERROR);
    /* The runtime names the bad launch InvalidConfiguration or
       InvalidValue depending on its version; either way it is named. */
    cr_assert_not_null(strstr(r->reason, "in the checked run"), "%s", r->reason);
    cr_assert_not_null(strstr(r->reason, "(cudaErrorInvalid"), "%s", r->reason);
    cr_assert_eq(find_row(&c, 0, OK)->outcome, KBC_PASS, "%s", find_row(&c, 0, OK)->reason);
    cr_assert(find_row(&c, 0, OK)->pct_ceiling >= 0.0);
    r = find_row(&c, 0, ILLEGAL);
    cr_assert_eq(r->outcome, KBC_ERROR);
    cr_assert_not_null(strstr(r->reason, "cudaErrorIllegalAddress"), "%s", r->reason);
    r = find_row(&c, 0, OK2);
    cr_assert_eq(r->outcome, KBC_SKIPPED);
    cr_assert_not_null(strstr(r->reason, "the CUDA context was lost after"), "%s", r->reason);
    cr_assert_not_null(strstr(r->reason, "cudaErrorIllegalAddress"), "%s", r->reason);
    cr_assert_eq(find_row(&c, 0, CPU)->outcome, KBC_PASS);
    for (int v = LAUNCHBAD; v <= OK2; v++) {
        r = find_row(&c, 1, v);
        cr_assert_eq(r->outcome, KBC_SKIPPED, "point 1 variant %d", v);
        cr_assert_not_null(strstr(r->reason, "the CUDA context was lost"), "%s", r->reason);
    }
    cr_assert_eq(find_row(&c, 1, CPU)->outcome, KBC_PASS);
}

/* ---- distinct configurations (kb_variant.uses) ------------------------ */

Test(point, a_variant_runs_once_per_distinct_configuration)
{
    spec s = uses_spec();
    /* The lifecycle's calls alone (integrity.h adds its own). */
    s.integrity = KBC_INTEGRITY_OFF;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    /* One checked run (verify) and warm-up + timed runs per configuration. */
    cr_assert_eq(count_events('V', TOY_NONLY), 2);
    cr_assert_eq(count_events('R', TOY_NONLY), 2 * (1 + s.warmup + s.runs));
    cr_assert_eq(count_events('V', TOY_GOOD), 6);
}

Test(point, a_deduplicated_row_is_reported_once_and_says_how_many_points)
{
    spec s = uses_spec();
    capture c = {0};
    run_spec(&s, &c);
    cr_assert_eq(c.n, 6 + 2, "six rows of good, two of nonly");
    size_t nonly = 0;
    for (size_t i = 0; i < c.n; i++) {
        const kbc_record *r = &c.rows[i];
        if (r->variant_index == TOY_GOOD) {
            cr_assert_eq(r->points, 1);
            cr_assert_str_eq(r->ignores, "");
            continue;
        }
        nonly++;
        /* The first point of each n: slow_repeat at its first value. */
        cr_assert_eq(r->point % 3, 0, "nonly ran at point %llu", (unsigned long long)r->point);
        cr_assert_eq(r->params[TOY_SLOW_REPEAT].value.i, 1);
        cr_assert_eq(r->points, 3);
        cr_assert_str_eq(r->ignores, "slow_repeat");
        cr_assert_eq(r->outcome, KBC_PASS);
    }
    cr_assert_eq(nonly, 2);
}

Test(point, a_point_with_nothing_left_to_run_reaches_no_sink)
{
    spec s = uses_spec();
    s.variants[0] = TOY_NONLY;
    s.variants[1] = -1;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    cr_assert_eq(c.points, 2);
    cr_assert_eq(c.n, 2);
    /* Nor is anything set up for it. */
    cr_assert_eq(count_events('S', -1), 2);
}

/* ---- the host judges verify() ------------------------------------------ */

static const kbc_record *run_one_variant(int v, capture *c)
{
    spec s = default_spec();
    s.variants[0] = v;
    s.variants[1] = -1;
    s.baseline = v;
    run_spec(&s, c);
    return find_row(c, 0, v);
}

Test(point, a_verify_that_claims_a_pass_above_its_tolerance_is_an_error)
{
    capture c = {0};
    const kbc_record *r = run_one_variant(TOY_LIAR, &c);
    cr_assert_eq(r->outcome, KBC_ERROR);
    cr_assert_not_null(strstr(r->reason, "verify() contradicts itself: it says passed"), "%s",
                       r->reason);
    cr_assert_eq(r->check.passed, 0, "the record keeps the host's verdict");
    cr_assert_eq(r->time.n, 0, "a plugin error is not timed");
}

Test(point, a_verify_that_claims_a_failure_within_its_tolerance_is_an_error)
{
    capture c = {0};
    const kbc_record *r = run_one_variant(TOY_STRICT, &c);
    cr_assert_eq(r->outcome, KBC_ERROR);
    cr_assert_not_null(strstr(r->reason, "it says failed"), "%s", r->reason);
    cr_assert_not_null(strstr(r->reason, "is within the tolerance"), "%s", r->reason);
}

Test(point, a_nan_error_fails_verification)
{
    capture c = {0};
    const kbc_record *r = run_one_variant(TOY_NANERR, &c);
    cr_assert_eq(r->outcome, KBC_FAIL);
    cr_assert(isnan(r->check.error));
    cr_assert_eq(r->check.passed, 0);
    cr_assert_not_null(strstr(r->reason, "verification failed"), "%s", r->reason);
}

/* ---- records are self-contained ------------------------------------- */

Test(point, a_record_names_what_ran_and_has_a_stable_key)
{
    spec s = uses_spec();
    capture c = {0};
    run_spec(&s, &c);
    const kbc_record *r = find_row(&c, 4, TOY_GOOD);
    cr_assert_str_eq(r->experiment, "toyexp");
    cr_assert_str_eq(r->plugin, "toy");
    cr_assert_str_eq(r->variant, "good");
    cr_assert_str_eq(r->device, "cpu");
    cr_assert_eq(r->n_points, 6);
    cr_assert_str_eq(r->params[TOY_N].text, "200");
    cr_assert_eq(r->params[TOY_N].swept, 1);
    cr_assert_eq(r->params[TOY_LIMIT].swept, 0);
    char key[256];
    kbc_record_key(r, key, sizeof key);
    cr_assert_str_eq(key, "toy/toyexp/n=200,limit=4096,slow_repeat=2,sleep_us=0,"
                          "fail_setup=false/good");
    cr_assert_eq(kbc_record_key(r, NULL, 0), strlen(key));
}

/* A machine that claims a GPU the runtime cannot reach (a driver without a
   device, or none at all): the stream cannot be made, and the CUDA
   variant must be skipped, not crash. */
Test(point, a_gpu_without_a_driver_skips_cuda_variants)
{
    kbc_machine real;
    kbc_gpu_probe(&real);
    if (real.has_gpu)
        cr_skip_test("a real GPU is present; this test is for machines without a driver");
    spec s = default_spec();
    static kbc_experiment e;
    build(&e, &s);
    kbc_plan plan = {.path = "test.ini", .exps = &e, .n = 1, .n_points = 1};
    kbc_machine m = no_gpu_machine();
    m.has_gpu = 1;
    m.device = 0;
    capture c = {0};
    run_points(&plan, &m, &c);
    const kbc_record *g = find_row(&c, 0, TOY_GPU);
    cr_assert_eq(g->outcome, KBC_SKIPPED);
    cr_assert_not_null(strstr(g->reason, "no CUDA device"), "%s", g->reason);
    cr_assert_eq(count_events('X', TOY_GPU), 0);
    cr_assert_eq(find_row(&c, 0, TOY_GOOD)->outcome, KBC_PASS);
}

Test(point, probe_without_a_driver_says_why)
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
Test(point, probe_names_a_missing_driver)
{
    kbc_machine m;
    kbc_gpu_probe(&m);
    if (m.has_gpu || m.driver_version > 0)
        cr_skip_test("a CUDA driver is installed here");
    cr_assert_eq(strncmp(m.no_gpu_reason, "no CUDA driver", 14), 0, "%s", m.no_gpu_reason);
}
