/*
 * test_prefetch.c -- the next point's host half made beside the current
 * point (exec/prefetch.c, its hooks in exec/point.c): when it may run
 * beside a variant (kbc_prefetch_may_overlap), the memory rule, and, with
 * the two-halves plugin of tests/fixtures/prefetch run point after point
 * in this process as a worker runs them, the order of the calls: the host
 * half of point p+1 runs on its own thread beside the variants of point p
 * that may overlap it, is waited for before any other, and point p+1 then
 * runs only its device half on that state; a host half made for a point
 * that does not come next is dropped; a failed host half is the setup's
 * failure; a plugin without the extension sets up as before.  Without a
 * GPU no variant may overlap (every one is a CPU variant), so the tests
 * that need overlap name the variant that may.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "gpu.h"
#include "host.h"
#include "ini.h"
#include "loader.h"
#include "point.h"
#include "pre.h"
#include "prefetch.h"

#define PRE_DIR KBENCH_FIXTURE_DIR "/prefetch"
#define TOY_DIR KBENCH_FIXTURE_DIR "/runner"

/* ---- when a host half may run beside a variant ---- */

static kbc_record row_of(int backend, uint32_t flags)
{
    kbc_record r;
    kbc_record_init(&r);
    r.backend = backend;
    r.flags = flags;
    return r;
}

Test(policy, only_hold_protected_cuda_variants_without_energy)
{
    kbc_experiment e;
    memset(&e, 0, sizeof e);
    e.measure.prefetch = KBC_PREFETCH_AUTO;
    kbc_device dev;
    memset(&dev, 0, sizeof dev);
    static volatile int words[2];
    dev.hold = words;
    kbc_record cuda = row_of(KB_BACKEND_CUDA, 0), cpu = row_of(KB_BACKEND_CPU, 0);
    kbc_record syncs = row_of(KB_BACKEND_CUDA, KB_VARIANT_SYNCS);
    kbc_record lib = row_of(KB_BACKEND_CUDA, KB_VARIANT_LIBRARY | KB_VARIANT_NONDETERM);
    cr_assert_eq(kbc_prefetch_may_overlap(&e, &cuda, &dev), 1);
    cr_assert_eq(kbc_prefetch_may_overlap(&e, &lib, &dev), 1);
    cr_assert_eq(kbc_prefetch_may_overlap(&e, &cpu, &dev), 0, "never beside a CPU variant");
    cr_assert_eq(kbc_prefetch_may_overlap(&e, &syncs, &dev), 0, "run() waits: no hold");
    e.measure.include_copies = 1;
    cr_assert_eq(kbc_prefetch_may_overlap(&e, &cuda, &dev), 0, "copies are timed: no hold");
    e.measure.include_copies = 0;
    e.measure.energy = KBC_ENERGY_AUTO;
    cr_assert_eq(kbc_prefetch_may_overlap(&e, &cuda, &dev), 0, "energy windows need the host");
    e.measure.energy = KBC_ENERGY_OFF;
    e.measure.prefetch = KBC_PREFETCH_OFF;
    cr_assert_eq(kbc_prefetch_may_overlap(&e, &cuda, &dev), 0, "prefetch = off");
    e.measure.prefetch = KBC_PREFETCH_AUTO;
    dev.hold = NULL;
    cr_assert_eq(kbc_prefetch_may_overlap(&e, &cuda, &dev), 0, "no hold on this device");
    cr_assert_eq(kbc_prefetch_may_overlap(&e, &cuda, NULL), 0);
}

Test(policy, memory_rule)
{
    cr_assert_eq(kbc_prefetch_fits(100, 1000, 1), 1);
    cr_assert_eq(kbc_prefetch_fits(1000, 1000, 1), 1);
    cr_assert_eq(kbc_prefetch_fits(1001, 1000, 1), 0);
    cr_assert_eq(kbc_prefetch_fits(600, 1000, 2), 0, "two workers share the memory");
    cr_assert_eq(kbc_prefetch_fits(500, 1000, 2), 1);
    cr_assert_eq(kbc_prefetch_fits(1, 0, 1), 0, "unknown memory: never");
    cr_assert_gt(kbc_host_available_bytes(), 0);
}

/* ---- the calls' order, with the fixture plugin ---- */

static char dir[256];
static kbc_registry reg;
static kbc_ini ini;
static kbc_plan plan;
static pre_trace_fn trace;

static void setup_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/kbench-prefetch-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    kbc_host_set_quiet(1);
}

static void teardown_dir(void)
{
    kbc_plan_free(&plan);
    kbc_ini_free(&ini);
    kbc_registry_free(&reg);
    memset(&plan, 0, sizeof plan);
    memset(&ini, 0, sizeof ini);
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "rm -rf '%s'", dir), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

TestSuite(prefetch, .init = setup_dir, .fini = teardown_dir);

/* Builds the plan of one experiment written in text (with the fixture and
   the toy on the plugin path). */
static const kbc_experiment *build_plan(const char *text)
{
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s/p.ini", dir), 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    kbc_registry_init(&reg);
    kbc_diag d = {{0}};
    cr_assert_geq(kbc_registry_add_path(&reg, PRE_DIR, &d), 0, "%s", d.msg);
    cr_assert_geq(kbc_registry_add_path(&reg, TOY_DIR, &d), 0, "%s", d.msg);
    cr_assert_eq(kbc_ini_load(path, &ini, &d), 0, "%s", d.msg);
    cr_assert_eq(kbc_plan_build(&ini, &reg, 0, &plan, &d), 0, "%s", d.msg);
    free(path);
    const kbc_experiment *e = &plan.exps[0];
    void *dl = dlopen(PRE_DIR "/kbench-pre.so", RTLD_NOW | RTLD_NOLOAD);
    if (dl) {
        trace = (pre_trace_fn)dlsym(dl, "pre_trace");
        ((pre_trace_reset_fn)dlsym(dl, "pre_trace_reset"))();
        dlclose(dl);
    }
    return e;
}

/* The worker's side: which point comes next (the point after the one
   running, or the one named in `hinted`). */
typedef struct nexts {
    const kbc_experiment *e;
    uint64_t next;
    int told, asked;
} nexts;

static int next_of(void *ctx, kbc_ahead *a)
{
    nexts *x = ctx;
    x->asked++;
    if (x->told || x->next >= x->e->n_points)
        return 0;
    x->told = 1;
    memset(a, 0, sizeof *a);
    a->e = *x->e;
    a->point = x->next;
    kbc_plan_point(x->e, x->next, &a->plan);
    a->cpu_threads = 1;
    a->share = 1;
    return 1;
}

/* Variant "cpu" (and the toy's "good") plays a hold-protected CUDA
   variant; the others do not. */
static int cpu_overlaps(const kbc_experiment *e, const kbc_record *r, const kbc_device *dev)
{
    (void)e, (void)dev;
    return strcmp(r->variant, "cpu") == 0 || strcmp(r->variant, "good") == 0;
}

static uint64_t plenty(void)
{
    return 1ULL << 40;
}

static uint64_t little(void)
{
    return 1000;
}

typedef struct ran {
    kbc_record recs[8][4];
    size_t n[8];
    kbc_point_times times[8];
} ran;

/* Runs points first..last of e in order, as one worker, with a prefetch
   (pf NULL: none) that is told, during point p, that p + skip comes next. */
static void run_points(const kbc_experiment *e, uint64_t first, uint64_t last, kbc_prefetch *pf,
                       nexts *x, uint64_t skip, ran *out)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.device = -1;
    snprintf(m.no_gpu_reason, sizeof m.no_gpu_reason, "no CUDA device (the test says so)");
    m.cpu_threads = 1;
    kbc_device dev;
    kbc_device_open(&dev, &m, 1);
    kbc_hostctx hc;
    memset(&hc, 0, sizeof hc);
    kb_host host;
    kbc_host_init(&host, &hc, e->plugin->desc->name, e->measure.seed, 1);
    for (uint64_t p = first; p <= last; p++) {
        if (x) {
            x->next = p + skip;
            x->told = 0;
        }
        kbc_point_plan pp;
        kbc_plan_point(e, p, &pp);
        kbc_point_aside aside = {.prefetch = pf, .overlap = cpu_overlaps};
        out->n[p] = kbc_point_run_aside(e, p, &pp, &dev, &host, NULL, out->recs[p], &aside);
        out->times[p] = aside.times;
    }
    kbc_device_close(&dev);
}

static void free_ran(ran *r)
{
    for (size_t p = 0; p < 8; p++)
        for (size_t i = 0; i < r->n[p]; i++)
            kbc_record_free(&r->recs[p][i]);
}

/* The events of kind `what` for point n (by its n), in order. */
static size_t events_of(char what, uint64_t n, const pre_event **out, size_t max)
{
    size_t total, k = 0;
    const pre_event *ev = trace(&total);
    for (size_t i = 0; i < total && k < max; i++)
        if (ev[i].what == what && ev[i].n == n)
            out[k++] = &ev[i];
    return k;
}

static const char *const STUDY = "[e]\nplugin = pre\nvariants = cpu, cpu2\n"
                                 "n = 100, 200, 300\nhost_ms = 60\nrun_us = 20000\n"
                                 "warmup = 0\nruns = 3\ncpu_threads = 1\n";

Test(prefetch, host_half_runs_beside_the_variant_that_may_overlap_and_is_waited_for)
{
    const kbc_experiment *e = build_plan(STUDY);
    nexts x = {.e = e};
    kbc_prefetch_opts po = {.next = next_of, .ctx = &x, .available = plenty};
    kbc_prefetch *pf = kbc_prefetch_new(&po);
    ran r;
    memset(&r, 0, sizeof r);
    run_points(e, 0, 1, pf, &x, 1, &r);
    const long me = (long)syscall(SYS_gettid);

    /* Point 1's host half (n = 200) ran once, on another thread. */
    const pre_event *h[4], *d[4], *runs[16], *prep[8];
    cr_assert_eq(events_of('H', 200, h, 4), 1, "one host half for point 1");
    cr_assert_neq(h[0]->tid, me, "the host half runs on a thread of its own");
    /* ... beside point 0's "cpu" runs (n = 100): one of them started
       while the host half ran ... */
    size_t nr = events_of('R', 100, runs, 16);
    int beside = 0;
    for (size_t i = 0; i < nr; i++)
        if (runs[i]->variant == PRE_CPU && runs[i]->t0 > h[0]->t0 && runs[i]->t0 < h[0]->t1)
            beside = 1;
    cr_assert(beside, "a run of cpu started while point 1's host half ran");
    /* ... and ended before anything of cpu2 (which may not overlap). */
    size_t np = events_of('P', 100, prep, 8);
    for (size_t i = 0; i < np; i++)
        if (prep[i]->variant == PRE_CPU2)
            cr_assert_lt(h[0]->t1, prep[i]->t0, "the host half ends before cpu2 starts");
    for (size_t i = 0; i < nr; i++)
        if (runs[i]->variant == PRE_CPU2)
            cr_assert_lt(h[0]->t1, runs[i]->t0);
    cr_assert_gt(r.times[0].joins_s, 0.0, "point 0 waited for it before cpu2");
    /* Point 1 then ran only its device half, on that state, on this thread. */
    cr_assert_eq(events_of('D', 200, d, 4), 1);
    cr_assert_eq(d[0]->state, h[0]->state);
    cr_assert_eq(d[0]->tid, me);
    cr_assert_eq(r.times[1].ahead, 1);
    cr_assert_gt(r.times[1].ahead_s, 0.05, "the host half's own 60 ms");
    cr_assert_eq(r.times[0].ahead, 0, "point 0 had nothing made ahead");
    /* Its rows are right. */
    for (size_t i = 0; i < r.n[1]; i++)
        cr_assert_eq(r.recs[1][i].outcome, KBC_PASS, "%s", r.recs[1][i].reason);
    const pre_event *bad[2];
    cr_assert_eq(events_of('!', 200, bad, 2), 0, "the host half never sees a stream");
    kbc_prefetch_free(pf);
    free_ran(&r);
}

Test(prefetch, rows_are_the_same_with_or_without_it)
{
    const kbc_experiment *e = build_plan(STUDY);
    ran with, without;
    memset(&with, 0, sizeof with);
    memset(&without, 0, sizeof without);
    nexts x = {.e = e};
    kbc_prefetch_opts po = {.next = next_of, .ctx = &x, .available = plenty};
    kbc_prefetch *pf = kbc_prefetch_new(&po);
    run_points(e, 0, 2, pf, &x, 1, &with);
    cr_assert_eq(kbc_prefetch_started(pf), 2, "points 1 and 2 were made ahead");
    kbc_prefetch_free(pf);
    run_points(e, 0, 2, NULL, NULL, 1, &without);
    for (uint64_t p = 0; p < 3; p++) {
        cr_assert_eq(with.n[p], without.n[p]);
        for (size_t i = 0; i < with.n[p]; i++) {
            const kbc_record *a = &with.recs[p][i], *b = &without.recs[p][i];
            cr_assert_eq(a->outcome, b->outcome);
            cr_assert_eq(a->outcome, KBC_PASS);
            cr_assert_eq(a->check.error, b->check.error);
            cr_assert_eq(a->time.n, b->time.n);
            cr_assert(isfinite(a->wall_s) && a->wall_s > 0, "wall_s %g", a->wall_s);
        }
    }
    free_ran(&with);
    free_ran(&without);
}

Test(prefetch, memory_rule_keeps_it_from_starting)
{
    const kbc_experiment *e = build_plan(STUDY);
    nexts x = {.e = e};
    kbc_prefetch_opts po = {.next = next_of, .ctx = &x, .available = little};
    kbc_prefetch *pf = kbc_prefetch_new(&po);
    ran r;
    memset(&r, 0, sizeof r);
    run_points(e, 0, 1, pf, &x, 1, &r);
    cr_assert_eq(kbc_prefetch_started(pf), 0, "24 n bytes do not fit in 1000");
    cr_assert_gt(x.asked, 0, "the next point was asked for");
    const pre_event *h[4];
    cr_assert_eq(events_of('H', 200, h, 4), 1);
    cr_assert_eq(h[0]->tid, (long)syscall(SYS_gettid), "point 1 set up alone, on this thread");
    cr_assert_eq(r.times[1].ahead, 0);
    kbc_prefetch_free(pf);
    free_ran(&r);
}

Test(prefetch, the_machines_memory_rule_with_a_point_too_large_to_double)
{
    /* host_share = 1: the point states all of the machine's memory, which
       is never available beside the current point. */
    const kbc_experiment *e =
        build_plan("[e]\nplugin = pre\nvariants = cpu, cpu2\nn = 100, 200\nhost_share = 1\n"
                   "warmup = 0\nruns = 2\ncpu_threads = 1\n");
    nexts x = {.e = e};
    kbc_prefetch_opts po = {.next = next_of, .ctx = &x};
    kbc_prefetch *pf = kbc_prefetch_new(&po);
    ran r;
    memset(&r, 0, sizeof r);
    run_points(e, 0, 1, pf, &x, 1, &r);
    cr_assert_eq(kbc_prefetch_started(pf), 0);
    cr_assert_eq(r.recs[1][0].outcome, KBC_PASS);
    kbc_prefetch_free(pf);
    free_ran(&r);
}

Test(prefetch, a_host_half_for_a_point_that_does_not_come_is_dropped)
{
    const kbc_experiment *e = build_plan(STUDY);
    nexts x = {.e = e};
    kbc_prefetch_opts po = {.next = next_of, .ctx = &x, .available = plenty};
    kbc_prefetch *pf = kbc_prefetch_new(&po);
    ran r;
    memset(&r, 0, sizeof r);
    /* Told that point 2 comes after point 0, but point 1 runs. */
    run_points(e, 0, 0, pf, &x, 2, &r);
    x.next = 99; /* nothing more */
    x.told = 1;
    kbc_point_plan pp;
    kbc_plan_point(e, 1, &pp);
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.device = -1;
    kbc_device dev;
    kbc_device_open(&dev, &m, 1);
    kbc_hostctx hc;
    memset(&hc, 0, sizeof hc);
    kb_host host;
    kbc_host_init(&host, &hc, "pre", e->measure.seed, 1);
    kbc_point_aside aside = {.prefetch = pf, .overlap = cpu_overlaps};
    r.n[1] = kbc_point_run_aside(e, 1, &pp, &dev, &host, NULL, r.recs[1], &aside);
    kbc_device_close(&dev);
    const pre_event *ev[4];
    cr_assert_eq(events_of('H', 300, ev, 4), 1, "point 2's host half was made");
    cr_assert_eq(events_of('X', 300, ev, 4), 1, "and dropped when point 1 came instead");
    cr_assert_eq(events_of('D', 300, ev, 4), 0);
    cr_assert_eq(aside.times.ahead, 0);
    cr_assert_eq(r.recs[1][0].outcome, KBC_PASS);
    kbc_prefetch_free(pf);
    free_ran(&r);
}

Test(prefetch, a_failed_host_half_is_the_setups_failure)
{
    const kbc_experiment *e =
        build_plan("[e]\nplugin = pre\nvariants = cpu, cpu2\nn = 100\nfail_host = false, true\n"
                   "warmup = 0\nruns = 2\nrun_us = 20000\ncpu_threads = 1\n");
    nexts x = {.e = e};
    kbc_prefetch_opts po = {.next = next_of, .ctx = &x, .available = plenty};
    kbc_prefetch *pf = kbc_prefetch_new(&po);
    ran r;
    memset(&r, 0, sizeof r);
    run_points(e, 0, 1, pf, &x, 1, &r);
    cr_assert_eq(kbc_prefetch_started(pf), 1);
    for (size_t i = 0; i < r.n[1]; i++) {
        cr_assert_eq(r.recs[1][i].outcome, KBC_ERROR);
        cr_assert_not_null(strstr(r.recs[1][i].reason, "the host half fails on purpose"), "%s",
                           r.recs[1][i].reason);
    }
    const pre_event *ev[4];
    cr_assert_eq(events_of('X', 100, ev, 4), 1, "the failed host state was dropped");
    kbc_prefetch_free(pf);
    free_ran(&r);
}

Test(prefetch, a_plugin_without_the_extension_sets_up_as_before)
{
    const kbc_experiment *e = build_plan("[e]\nplugin = toy\nvariants = good\nn = 100, 200\n"
                                         "warmup = 0\nruns = 2\ncpu_threads = 1\n");
    cr_assert_null(kbc_prefetch_of(e->plugin->desc));
    nexts x = {.e = e};
    kbc_prefetch_opts po = {.next = next_of, .ctx = &x, .available = plenty};
    kbc_prefetch *pf = kbc_prefetch_new(&po);
    ran r;
    memset(&r, 0, sizeof r);
    /* "good" may overlap here, yet nothing starts: no host half to make. */
    run_points(e, 0, 1, pf, &x, 1, &r);
    cr_assert_eq(kbc_prefetch_started(pf), 0);
    cr_assert_eq(r.recs[1][0].outcome, KBC_PASS);
    cr_assert_eq(r.times[1].ahead, 0);
    kbc_prefetch_free(pf);
    free_ran(&r);
}
