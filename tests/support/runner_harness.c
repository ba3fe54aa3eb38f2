/*
 * runner_harness.c -- see runner_harness.h.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "point_plan.h"
#include "runner_harness.h"

/* Criterion's workers leave with _exit(), so LeakSanitizer's check at exit
   never runs in them; under -fsanitize=address each test asks for the
   check itself when it ends (see unload_toy). */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "LeakSanitizer found leaks")
#else
#define LEAK_CHECK() ((void)0)
#endif

/* ---- the toy plugin, loaded as the host would ------------------------ */

static void *toy_dl;
kbc_plugin toy_plugin;
toy_trace_fn toy_trace;

void load_toy(void)
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

void unload_toy(void)
{
    free_built_and_captured();
    LEAK_CHECK();
    if (toy_dl)
        dlclose(toy_dl);
}

/* ---- building one experiment by hand -------------------------------- */

spec default_spec(void)
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

void build(kbc_experiment *e, const spec *s)
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
    e->measure.integrity = s->integrity;
    e->n_points = s->n_n * (s->n_slow > 1 ? s->n_slow : 1);
}

/* ---- a sink that keeps copies of every row -------------------------- */

int cap_begin(void *ctx, const kbc_run_info *info)
{
    capture *c = ctx;
    if (c->begins == 0 && n_captured < sizeof captured / sizeof captured[0])
        c->slot = (int)n_captured++;
    c->begins++;
    c->copy_gbps = info->ceilings.copy_gbps;
    return 0;
}

int cap_point(void *ctx, const kbc_record *rows, size_t n)
{
    capture *c = ctx;
    c->points++;
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

int cap_end(void *ctx, int code)
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

kbc_machine no_gpu_machine(void)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.device = -1;
    snprintf(m.no_gpu_reason, sizeof m.no_gpu_reason, "no CUDA device (the test says so)");
    m.cpu_threads = 2;
    return m;
}

/* The points of experiment e into c, on dev; whether a row failed. */
static int run_experiment(kbc_experiment *e, const kbc_machine *m, kbc_device *dev, capture *c)
{
    int failed = 0;
    int threads = e->measure.cpu_threads > 0 ? e->measure.cpu_threads
                                             : (m->cpu_threads > 0 ? m->cpu_threads : 1);
    kbc_hostctx hc;
    memset(&hc, 0, sizeof hc);
    kb_host host;
    kbc_host_init(&host, &hc, e->plugin->desc->name, e->measure.seed, threads);
    kbc_record *recs = calloc(e->n_variants ? e->n_variants : 1, sizeof *recs);
    kbc_point_memory mem;
    kbc_point_memory_init(&mem, e);
    kbc_experiment_plan_points(e);
    kbc_point_plan pp;
    for (uint64_t p = 0; p < e->n_points; p++) {
        kbc_plan_point(e, p, &pp);
        size_t n = kbc_point_run(e, p, &pp, dev, &host, &mem, recs);
        for (size_t k = 0; k < n; k++)
            failed |= kbc_outcome_failed((int)recs[k].outcome);
        if (n)
            cap_point(c, recs, n);
        for (size_t k = 0; k < n; k++)
            kbc_record_free(&recs[k]);
    }
    kbc_experiment_unplan(e);
    kbc_point_memory_free(&mem);
    free(recs);
    return failed;
}

int run_points(kbc_plan *plan, const kbc_machine *m, capture *c)
{
    kbc_host_set_quiet(1);
    kbc_device dev;
    if (kbc_plan_wants_gpu(plan) || !m->has_gpu)
        kbc_device_open(&dev, m, 1);
    else
        kbc_device_open(&dev, NULL, 0);
    kbc_run_info info = {.config_file = plan->path, .machine = m, .ceilings = dev.ceilings,
                         .flops = dev.flops};
    cap_begin(c, &info);
    int failed = 0;
    for (size_t i = 0; i < plan->n; i++)
        failed |= run_experiment(&plan->exps[i], m, &dev, c);
    int code = failed ? KBC_EXIT_FAILED : KBC_EXIT_OK;
    cap_end(c, code);
    kbc_device_close(&dev);
    return code;
}

int run_spec(const spec *s, capture *c)
{
    static kbc_experiment e;
    build(&e, s);
    kbc_plan plan = {.path = "test.ini", .exps = &e, .n = 1, .n_points = e.n_points};
    kbc_machine m = no_gpu_machine();
    return run_points(&plan, &m, c);
}

const kbc_record *find_row(const capture *c, uint64_t point, int variant)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].point == point && c->rows[i].variant_index == (uint32_t)variant)
            return &c->rows[i];
    cr_assert_fail("no row for point %llu variant %d", (unsigned long long)point, variant);
    return NULL;
}

const toy_event *events(size_t *n)
{
    return toy_trace(n);
}

/* How many events of kind `what` variant v has in the whole trace. */
size_t count_events(char what, int v)
{
    size_t n, k = 0;
    const toy_event *ev = events(&n);
    for (size_t i = 0; i < n; i++)
        if (ev[i].what == what && ev[i].variant == v)
            k++;
    return k;
}

double expected_input_sum(uint64_t seed, uint64_t n)
{
    double sum = 0.0;
    for (uint64_t i = 0; i < n; i++)
        sum += kb_rand_uniform(seed, 0, i, 1.0, 2.0);
    return sum;
}

/* n = {100, 200} x slow_repeat = {1, 2, 3}: six points.  good uses every
   parameter and runs at all six; nonly uses only n and runs once per n. */
spec uses_spec(void)
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
