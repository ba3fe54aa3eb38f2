/*
 * test_runner.c -- kbc_run_plan with the toy CPU plugin and a sink that
 * captures every row.  Plans are built by hand (the structures of config.h
 * are public), so these tests check the runner alone.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "point.h"
#include "runner.h"

/* Criterion's workers leave with _exit(), so LeakSanitizer's check at exit
   never runs in them; under -fsanitize=address each test asks for the
   check itself when it ends (see unload_toy). */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "LeakSanitizer found leaks")
#else
#define LEAK_CHECK() ((void)0)
#endif
#include "toy.h"

/* ---- the toy plugin, loaded as the host would ------------------------ */

static void *toy_dl;
static kbc_plugin toy_plugin;
static toy_trace_fn toy_trace;

static void load_toy(void)
{
    const char *path = KBENCH_FIXTURE_DIR "/runner/kbench-toy.so";
    toy_dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(toy_dl, "cannot load %s: %s", path, dlerror());
    kb_entry_fn entry = (kb_entry_fn)dlsym(toy_dl, KB_ENTRY_SYMBOL);
    cr_assert_not_null(entry);
    toy_plugin.desc = entry(0);
    toy_plugin.path = (char *)path;
    toy_plugin.dl = toy_dl;
    cr_assert_not_null(toy_plugin.desc);
    toy_trace = (toy_trace_fn)dlsym(toy_dl, "toy_trace");
    toy_trace_reset_fn reset = (toy_trace_reset_fn)dlsym(toy_dl, "toy_trace_reset");
    cr_assert_not_null(toy_trace);
    cr_assert_not_null(reset);
    reset();
}

/* What a test built or captured, freed when it ends so that
   LeakSanitizer sees only the runner's own leaks. */
static struct kbc_experiment *built[8];
static size_t n_built;
static void *captured[8]; /* the captures' row arrays (captures live on stacks) */
static size_t n_captured;
static void free_built_and_captured(void);

static void unload_toy(void)
{
    free_built_and_captured();
    LEAK_CHECK();
    if (toy_dl)
        dlclose(toy_dl);
}

TestSuite(runner, .init = load_toy, .fini = unload_toy);

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
} spec;

static spec default_spec(void)
{
    spec s;
    memset(&s, 0, sizeof s);
    for (int v = 0; v < TOY_NBASIC; v++)
        s.variants[v] = v;
    s.variants[TOY_NBASIC] = -1;
    s.baseline = TOY_GOOD;
    s.reference = -1;
    s.warmup = 2;
    s.runs = 3;
    s.budget = 10.0;
    s.seed = 77;
    s.n[0] = 1024;
    s.n_n = 1;
    s.limit = 4096;
    s.slow_repeat = 8;
    return s;
}

static kbc_axis one_value_axis(const kb_param *p, kb_value v)
{
    kbc_axis a = {.param = p, .values = malloc(sizeof(kb_value)), .n = 1, .line = 0};
    a.values[0] = v;
    return a;
}

static void build(kbc_experiment *e, const spec *s)
{
    const kb_plugin *d = toy_plugin.desc;
    memset(e, 0, sizeof *e);
    e->name = "toyexp";
    e->plugin = &toy_plugin;
    for (int i = 0; s->variants[i] >= 0; i++)
        e->variants[e->n_variants++] = (uint32_t)s->variants[i];
    e->baseline = s->baseline;
    e->reference = s->reference;
    e->measure.warmup = s->warmup;
    e->measure.runs = s->runs;
    e->measure.budget_s = s->budget;
    e->measure.include_copies = s->include_copies;
    e->measure.seed = s->seed;
    e->measure.cpu_threads = 1;
    e->axes = calloc(TOY_NPARAMS, sizeof *e->axes);
    if (n_built < sizeof built / sizeof built[0])
        built[n_built++] = e;
    kbc_axis *n = &e->axes[TOY_N];
    n->param = &d->params[TOY_N];
    n->values = calloc(s->n_n, sizeof(kb_value));
    n->n = s->n_n;
    for (size_t i = 0; i < s->n_n; i++)
        n->values[i].u = s->n[i];
    e->axes[TOY_LIMIT] = one_value_axis(&d->params[TOY_LIMIT], (kb_value){.u = s->limit});
    e->axes[TOY_SLOW_REPEAT] =
        one_value_axis(&d->params[TOY_SLOW_REPEAT], (kb_value){.i = s->slow_repeat});
    if (s->n_slow > 1) {
        kbc_axis *a = &e->axes[TOY_SLOW_REPEAT];
        a->values = realloc(a->values, s->n_slow * sizeof(kb_value));
        a->n = s->n_slow;
        for (size_t i = 0; i < s->n_slow; i++)
            a->values[i].i = s->slow_sweep[i];
    }
    e->axes[TOY_SLEEP_US] = one_value_axis(&d->params[TOY_SLEEP_US], (kb_value){.i = s->sleep_us});
    e->axes[TOY_FAIL_SETUP] =
        one_value_axis(&d->params[TOY_FAIL_SETUP], (kb_value){.i = s->fail_setup});
    e->measure.cache_cold = s->cache_cold;
    e->measure.noise_pct = s->noise_pct;
    e->measure.min_time_s = s->min_time;
    e->measure.min_runs = s->min_runs;
    e->measure.max_runs = s->max_runs;
    e->n_points = s->n_n * (s->n_slow > 1 ? s->n_slow : 1);
}

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

static int cap_begin(void *ctx, const kbc_run_info *info)
{
    capture *c = ctx;
    if (c->begins == 0 && n_captured < sizeof captured / sizeof captured[0])
        c->slot = (int)n_captured++;
    c->begins++;
    c->copy_gbps = info->ceilings.copy_gbps;
    return 0;
}

static int cap_point(void *ctx, const kbc_record *rows, size_t n)
{
    capture *c = ctx;
    c->points++;
    if (c->fail_at_point && (int)c->points >= c->fail_at_point)
        return -1;
    if (c->n + n > c->cap) {
        c->cap = (c->n + n) * 2;
        c->rows = realloc(c->rows, c->cap * sizeof *c->rows);
        captured[c->slot] = c->rows;
    }
    /* Records are copies: nothing in them points into the runner. */
    for (size_t i = 0; i < n; i++)
        c->rows[c->n++] = rows[i];
    return 0;
}

static int cap_end(void *ctx, int code)
{
    capture *c = ctx;
    c->ends++;
    c->end_code = code;
    return 0;
}

static void free_built_and_captured(void)
{
    for (size_t i = 0; i < n_built; i++) {
        for (size_t k = 0; k < TOY_NPARAMS; k++)
            free(built[i]->axes[k].values);
        free(built[i]->axes);
        built[i]->axes = NULL;
    }
    n_built = 0;
    for (size_t i = 0; i < n_captured; i++) {
        free(captured[i]);
        captured[i] = NULL;
    }
    n_captured = 0;
}

static kbc_machine no_gpu_machine(void)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.device = -1;
    snprintf(m.no_gpu_reason, sizeof m.no_gpu_reason, "no CUDA device (the test says so)");
    m.cpu_threads = 2;
    return m;
}

static int run_spec(const spec *s, capture *c)
{
    static kbc_experiment e;
    build(&e, s);
    kbc_plan plan = {.path = "test.ini", .exps = &e, .n = 1, .n_points = e.n_points};
    kbc_machine m = no_gpu_machine();
    kbc_sink sink = {.ctx = c, .begin = cap_begin, .point = cap_point, .end = cap_end};
    kbc_run_set_quiet(1);
    return kbc_run_plan(&plan, &m, &sink, 1, "kbench run test.ini");
}

static const kbc_record *find_row(const capture *c, uint64_t point, int variant)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].point == point && c->rows[i].variant_index == (uint32_t)variant)
            return &c->rows[i];
    cr_assert_fail("no row for point %llu variant %d", (unsigned long long)point, variant);
    return NULL;
}

static const toy_event *events(size_t *n)
{
    return toy_trace(n);
}

/* How many events of kind `what` variant v has in the whole trace. */
static size_t count_events(char what, int v)
{
    size_t n, k = 0;
    const toy_event *ev = events(&n);
    for (size_t i = 0; i < n; i++)
        if (ev[i].what == what && ev[i].variant == v)
            k++;
    return k;
}

static double expected_input_sum(uint64_t seed, uint64_t n)
{
    double sum = 0.0;
    for (uint64_t i = 0; i < n; i++)
        sum += kb_rand_uniform(seed, 0, i, 1.0, 2.0);
    return sum;
}

/* ---- tests --------------------------------------------------------- */

Test(runner, each_variant_gets_its_outcome)
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

Test(runner, lifecycle_order_poison_and_same_inputs)
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
        for (int k = 0; k < 3; k++) {
            int v = s.variants[k];
            /* Poison first, then the checked run with its copies, then
               verify, then warm-up and timed runs of run() alone. */
            cr_assert_eq(ev[i].what, 'P');
            cr_assert_eq(ev[i].variant, v);
            cr_assert_eq(ev[i + 1].what, 'U');
            cr_assert_eq(ev[i + 2].what, 'R');
            cr_assert_eq(ev[i + 2].out_poisoned, 1, "variant %d ran on an unpoisoned output", v);
            cr_assert_eq(ev[i + 3].what, 'D');
            cr_assert_eq(ev[i + 4].what, 'V');
            i += 5;
            for (uint32_t r = 0; r < s.warmup + s.runs; r++, i++) {
                cr_assert_eq(ev[i].what, 'R');
                cr_assert_eq(ev[i].variant, v);
            }
        }
        cr_assert_eq(ev[i].what, 'T');
        cr_assert_eq(ev[i].state, state, "teardown gets the state setup made");
        i++;
        /* Every call of this point saw the same seed and the same inputs. */
        size_t first = i - (2 + 3 * (5 + s.warmup + s.runs));
        for (size_t j = first; j < i; j++) {
            cr_assert_eq(ev[j].seed, s.seed);
            cr_assert_eq(ev[j].n, s.n[p]);
            cr_assert_float_eq(ev[j].input_sum, want, 1e-9 * want, "event %zu", j);
        }
    }
    cr_assert_eq(i, n, "no calls after the last teardown");
}

Test(runner, timed_runs_follow_runs_when_the_budget_allows)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = -1;
    s.warmup = 4;
    s.runs = 7;
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

Test(runner, include_copies_repeats_upload_and_download)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = -1;
    s.warmup = 2;
    s.runs = 5;
    s.include_copies = 1;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    cr_assert_eq(count_events('U', TOY_GOOD), 1 + 2 + 5);
    cr_assert_eq(count_events('D', TOY_GOOD), 1 + 2 + 5);
    cr_assert_eq(count_events('R', TOY_GOOD), 1 + 2 + 5);
}

Test(runner, budget_stops_timed_runs_early)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = -1;
    s.warmup = 0;
    s.runs = 1000;
    s.budget = 0.05;
    s.sleep_us = 10000; /* each run sleeps at least 10 ms */
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GOOD);
    /* Five runs of at least 10 ms use up 50 ms, so a sixth never starts. */
    cr_assert_geq(r->time.n, 1);
    cr_assert_leq(r->time.n, 5);
    cr_assert_geq(r->time.min, 0.010);
    cr_assert_eq(count_events('R', TOY_GOOD), 1 + r->time.n);
}

Test(runner, a_zero_budget_still_times_one_run)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = -1;
    s.runs = 50;
    s.budget = 0.0;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    cr_assert_eq(find_row(&c, 0, TOY_GOOD)->time.n, 1);
    cr_assert_eq(count_events('R', TOY_GOOD), 1 + s.warmup + 1);
}

Test(runner, a_failed_setup_errs_every_runnable_variant_and_still_tears_down)
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

Test(runner, speedups_and_rates_come_from_the_medians)
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

Test(runner, a_baseline_that_did_not_run_gives_no_speedup)
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

/* Where a GPU is present: an error the runtime forgets costs only its own
   variant; one that stays in the context (an illegal address) costs every
   later CUDA variant, which is then skipped with the earlier error named,
   while CPU variants still run. */
Test(runner, cuda_errors_passing_and_sticky)
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
    kbc_sink sink = {.ctx = &c, .begin = cap_begin, .point = cap_point, .end = cap_end};
    kbc_run_set_quiet(1);
    /* Every point repeats the single parameterless point; n_points = 2
       checks that the loss carries over to the next point. */
    static kbc_axis none;
    e.axes = &none;
    int code = kbc_run_plan(&plan, &m, &sink, 1, "x");
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

/* n = {100, 200} x slow_repeat = {1, 2, 3}: six points.  good uses every
   parameter and runs at all six; nonly uses only n and runs once per n. */
static spec uses_spec(void)
{
    spec s = default_spec();
    s.variants[0] = TOY_GOOD;
    s.variants[1] = TOY_NONLY;
    s.variants[2] = -1;
    s.n[0] = 100;
    s.n[1] = 200;
    s.n_n = 2;
    s.slow_sweep[0] = 1;
    s.slow_sweep[1] = 2;
    s.slow_sweep[2] = 3;
    s.n_slow = 3;
    return s;
}

Test(runner, a_variant_runs_once_per_distinct_configuration)
{
    spec s = uses_spec();
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    /* One checked run (verify) and warm-up + timed runs per configuration. */
    cr_assert_eq(count_events('V', TOY_NONLY), 2);
    cr_assert_eq(count_events('R', TOY_NONLY), 2 * (1 + s.warmup + s.runs));
    cr_assert_eq(count_events('V', TOY_GOOD), 6);
}

Test(runner, a_deduplicated_row_is_reported_once_and_says_how_many_points)
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

Test(runner, a_point_with_nothing_left_to_run_reaches_no_sink)
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

Test(runner, a_verify_that_claims_a_pass_above_its_tolerance_is_an_error)
{
    capture c = {0};
    const kbc_record *r = run_one_variant(TOY_LIAR, &c);
    cr_assert_eq(r->outcome, KBC_ERROR);
    cr_assert_not_null(strstr(r->reason, "verify() contradicts itself: it says passed"), "%s",
                       r->reason);
    cr_assert_eq(r->check.passed, 0, "the record keeps the host's verdict");
    cr_assert_eq(r->time.n, 0, "a plugin error is not timed");
}

Test(runner, a_verify_that_claims_a_failure_within_its_tolerance_is_an_error)
{
    capture c = {0};
    const kbc_record *r = run_one_variant(TOY_STRICT, &c);
    cr_assert_eq(r->outcome, KBC_ERROR);
    cr_assert_not_null(strstr(r->reason, "it says failed"), "%s", r->reason);
    cr_assert_not_null(strstr(r->reason, "is within the tolerance"), "%s", r->reason);
}

Test(runner, a_nan_error_fails_verification)
{
    capture c = {0};
    const kbc_record *r = run_one_variant(TOY_NANERR, &c);
    cr_assert_eq(r->outcome, KBC_FAIL);
    cr_assert(isnan(r->check.error));
    cr_assert_eq(r->check.passed, 0);
    cr_assert_not_null(strstr(r->reason, "verification failed"), "%s", r->reason);
}

/* ---- records are self-contained ------------------------------------- */

Test(runner, a_record_names_what_ran_and_has_a_stable_key)
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

/* ---- cold cache ------------------------------------------------------- */

Test(runner, cache_cold_marks_cuda_rows_and_not_cpu_ones)
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

/* ---- the ceiling that matches the traffic ----------------------------- */

Test(runner, ceiling_for_read_only_write_only_and_mixed)
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

/* ---- on a GPU only: ceilings and the L2 flush --------------------------- */

Test(runner, a_device_measures_three_ceilings)
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

Test(runner, the_l2_flush_buffer_is_twice_the_l2_and_writes_cleanly)
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

Test(runner, a_cold_cache_cuda_row_runs_and_says_cold)
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
    kbc_sink sink = {.ctx = &c, .begin = cap_begin, .point = cap_point, .end = cap_end};
    kbc_run_set_quiet(1);
    cr_assert_eq(kbc_run_plan(&plan, &m, &sink, 1, "x"), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GPU);
    cr_assert_eq(r->outcome, KBC_PASS, "%s", r->reason);
    cr_assert_eq(r->cache_cold, 1);
    cr_assert_str_eq(r->device, m.name);
    cr_assert_eq(r->time.n, s.runs);
    cr_assert_eq(count_events('X', TOY_GPU), 0);
}

/* ---- speed-ups against a baseline that ran at an earlier point -------- */

Test(runner, the_representative_point_zeroes_the_unused_axes)
{
    spec s = uses_spec();
    static kbc_experiment e;
    build(&e, &s);
    /* Points: n = 100 at 0, 1, 2 and n = 200 at 3, 4, 5. */
    cr_assert_eq(kbc_point_representative(&e, 2, TOY_NONLY), 0);
    cr_assert_eq(kbc_point_representative(&e, 4, TOY_NONLY), 3);
    cr_assert_eq(kbc_point_representative(&e, 4, TOY_GOOD), 4, "good uses everything");
}

Test(runner, a_deduplicated_baseline_still_gives_speedups_at_later_points)
{
    spec s = uses_spec();
    s.baseline = TOY_NONLY;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *base = find_row(&c, 3, TOY_NONLY);
    const kbc_record *good = find_row(&c, 5, TOY_GOOD);
    cr_assert_eq(good->speedup_baseline, base->time.median / good->time.median);
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

Test(runner, a_met_noise_target_stops_at_min_runs)
{
    spec s = noise_spec(100.0, 4, 100);
    s.sleep_us = 2000; /* 2 ms a run: far steadier than +-100% */
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GOOD);
    cr_assert_eq(r->time.n, 4);
    cr_assert_eq(r->noise_capped, 0);
}

Test(runner, an_unreachable_noise_target_stops_at_max_runs_and_is_marked)
{
    spec s = noise_spec(1e-9, 2, 6);
    s.sleep_us = 100;
    capture c = {0};
    cr_assert_eq(run_spec(&s, &c), KBC_EXIT_OK);
    const kbc_record *r = find_row(&c, 0, TOY_GOOD);
    cr_assert_eq(r->time.n, 6);
    cr_assert_eq(r->noise_capped, 1);
}

Test(runner, the_budget_caps_a_noise_target)
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

Test(runner, min_time_holds_off_the_noise_judgement)
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

Test(runner, a_fixed_run_count_reports_its_noise_without_a_target)
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
