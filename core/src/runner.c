/*
 * runner.c -- see runner.h and the lifecycle comment in kbench/plugin.h.
 *
 * For each point: plan, decide which variants can run here, set up once,
 * then per variant poison, one checked run, verify, warm up and time; tear
 * down; derive rates and speed-ups; hand the point's rows to the sinks and
 * forget them.  Nothing of a point outlives it, so a plan of any length
 * runs in constant host memory.
 */
#define _GNU_SOURCE
#include "runner.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the host services (log, fail) need to know about the call in
   flight.  Reached through kb_host.host_private. */
typedef struct kbc_hostctx {
    const char *plugin;  /* name for log lines                      */
    char fail_msg[512];  /* the last sentence given to fail()       */
    int progress_shown;  /* a progress line is on the terminal now  */
} kbc_hostctx;

/* Everything about the GPU that lasts for the whole run. */
typedef struct kbc_gpuctx {
    int usable;             /* a stream and events exist             */
    char why_not[512];      /* when not usable: why, for SKIPPED rows */
    void *stream, *ev0, *ev1;
    int lost;               /* a sticky error spoilt the context     */
    char lost_after[400];   /* the error that spoilt it              */
} kbc_gpuctx;

static int quiet_mode;

void kbc_run_set_quiet(int quiet)
{
    quiet_mode = quiet;
}

static int show_progress(void)
{
    return !quiet_mode && isatty(2);
}

/* Wipes the progress line so that the next stderr text starts clean. */
static void progress_clear(kbc_hostctx *hc)
{
    if (hc->progress_shown) {
        fputs("\r\033[K", stderr);
        hc->progress_shown = 0;
    }
}

static void host_log(kb_host *h, kb_log_level level, const char *fmt, ...)
{
    kbc_hostctx *hc = h->host_private;
    /* Debug lines are for whoever writes the plugin, asked for by name;
       -q keeps only warnings. */
    if (level == KB_LOG_DEBUG && !getenv("KBENCH_DEBUG"))
        return;
    if (quiet_mode && level != KB_LOG_WARN)
        return;
    progress_clear(hc);
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    fprintf(stderr, "kbench: %s: %s%s\n", hc->plugin, level == KB_LOG_WARN ? "warning: " : "",
            line);
}

static int host_fail(kb_host *h, int code, const char *fmt, ...)
{
    kbc_hostctx *hc = h->host_private;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(hc->fail_msg, sizeof hc->fail_msg, fmt, ap);
    va_end(ap);
    return code;
}

static const char *status_name(int code)
{
    switch (code) {
    case KB_EINVAL: return "KB_EINVAL";
    case KB_ENOMEM: return "KB_ENOMEM";
    case KB_ECUDA: return "KB_ECUDA";
    case KB_EUNSUPPORTED: return "KB_EUNSUPPORTED";
    case KB_EFAIL: return "KB_EFAIL";
    default: return "an unknown code";
    }
}

/* Turns a plugin call's non-KB_OK return into the row's outcome and
   reason: KB_EUNSUPPORTED is a limit of the variant (SKIPPED), anything
   else an ERROR.  The plugin's own sentence is the reason; a plugin that
   forgot to give one is named as such rather than leaving a blank. */
static void row_from_status(kbc_row *row, const kbc_hostctx *hc, const char *call, int code)
{
    row->outcome = code == KB_EUNSUPPORTED ? KBC_SKIPPED : KBC_ERROR;
    if (hc->fail_msg[0])
        snprintf(row->reason, sizeof row->reason, "%s", hc->fail_msg);
    else
        snprintf(row->reason, sizeof row->reason, "%s() returned %d (%s) without saying why", call,
                 code, status_name(code));
}

static void row_init(kbc_row *row, const kbc_experiment *e, uint64_t p, const kb_value *values,
                     uint32_t v, const kb_work *work)
{
    memset(row, 0, sizeof *row);
    row->exp = e;
    row->point = p;
    row->values = values;
    row->variant = v;
    row->outcome = KBC_SKIPPED;
    row->work = *work;
    row->check.error = NAN;
    row->check.tolerance = NAN;
    kbc_stats_compute(NULL, 0, &row->time);
    row->gbps = row->gflops = row->items_per_s = row->pct_copy = NAN;
    row->speedup_baseline = row->speedup_cpu = row->speedup_reference = NAN;
}

/* After a CUDA error: was it sticky?  A sticky error stays in the context
   and every later call returns it, so clearing the last error and
   synchronising tells the two kinds apart without a list of codes. */
static void gpu_check_lost(kbc_gpuctx *g, kb_host *host, const char *after)
{
    char why[400];
    kbc_gpu_last_error(why, sizeof why);
    if (kbc_gpu_sync(g->stream, why, sizeof why) != 0) {
        g->lost = 1;
        snprintf(g->lost_after, sizeof g->lost_after, "%s", after);
        /* From now on the plugin is told there is no GPU, so that later
           setups keep their hands off the dead context. */
        host->stream = NULL;
        host->device = -1;
        host->sm_count = 0;
        host->l2_bytes = 0;
    }
}

/* The sequence one run consists of: run() alone, or upload + run +
   download.  Returns KB_OK or the first failing call's code, with *call
   naming it. */
static int one_run(const kb_ops *ops, void *state, uint32_t v, kb_host *host, kbc_hostctx *hc,
                   int copies, const char **call)
{
    int r;
    hc->fail_msg[0] = '\0';
    if (copies && ops->upload) {
        *call = "upload";
        if ((r = ops->upload(state, v, host)) != KB_OK)
            return r;
    }
    *call = "run";
    if ((r = ops->run(state, v, host)) != KB_OK)
        return r;
    if (copies && ops->download) {
        *call = "download";
        if ((r = ops->download(state, v, host)) != KB_OK)
            return r;
    }
    return KB_OK;
}

/* Runs one variant of a set-up point and fills its row: outcome, check
   and times.  Rates and speed-ups come later, once every variant ran. */
static void run_variant(const kbc_experiment *e, void *state, uint32_t v, kb_host *host,
                        kbc_hostctx *hc, kbc_gpuctx *g, kbc_row *row)
{
    const kb_ops *ops = e->plugin->desc->ops;
    const kb_variant *var = &e->plugin->desc->variants[v];
    const int cuda = var->backend == KB_BACKEND_CUDA;
    const kbc_measure *ms = &e->measure;
    const char *call = "prepare";
    const char *stage = "the checked run";
    char why[400];
    int r;

    /* Poison, then one checked run with the copies, so that verify() sees
       what this variant wrote and nothing left by another. */
    hc->fail_msg[0] = '\0';
    if ((r = ops->prepare(state, v, host)) != KB_OK)
        goto plugin_failed;
    if ((r = one_run(ops, state, v, host, hc, 1, &call)) != KB_OK)
        goto plugin_failed;
    if (cuda && (kbc_gpu_sync(host->stream, why, sizeof why) != 0 ||
                 kbc_gpu_last_error(why, sizeof why) != 0))
        goto cuda_failed;
    hc->fail_msg[0] = '\0';
    call = "verify";
    memset(&row->check, 0, sizeof row->check);
    if ((r = ops->verify(state, v, &row->check, host)) != KB_OK)
        goto plugin_failed;
    /* The host decides from the numbers; the plugin's own verdict is only
       checked against them, so that a verify that cannot fail (or one that
       fails what it measured as good) is caught rather than believed. */
    {
        const kb_check *c = &row->check;
        const char *m = c->measure ? c->measure : "the";
        int pass = !isnan(c->error) && !isnan(c->tolerance) && c->error <= c->tolerance;
        if (!c->passed != !pass) {
            row->outcome = KBC_ERROR;
            snprintf(row->reason, sizeof row->reason,
                     "verify() contradicts itself: it says %s, but its %s error %g is %s the "
                     "tolerance %g",
                     c->passed ? "passed" : "failed", m, c->error,
                     pass ? "within" : "not within", c->tolerance);
            kbc_stats_compute(NULL, 0, &row->time);
            return;
        }
        if (!pass) {
            /* A wrong answer is still timed: a fast wrong kernel is worth
               seeing next to its error. */
            row->outcome = KBC_FAIL;
            snprintf(row->reason, sizeof row->reason,
                     "verification failed: %s error %g is not within the tolerance %g", m,
                     c->error, c->tolerance);
        } else {
            row->outcome = KBC_PASS;
        }
    }

    stage = "the warm-up runs";
    for (uint32_t i = 0; i < ms->warmup; i++)
        if ((r = one_run(ops, state, v, host, hc, ms->include_copies, &call)) != KB_OK)
            goto plugin_failed;
    if (cuda && (kbc_gpu_sync(host->stream, why, sizeof why) != 0 ||
                 kbc_gpu_last_error(why, sizeof why) != 0))
        goto cuda_failed;

    stage = "the timed runs";
    uint32_t runs = ms->runs ? ms->runs : 1;
    double *t = kbc_xmalloc(runs * sizeof *t);
    size_t n = 0;
    double spent = 0.0;
    while (n < runs && (n == 0 || spent < ms->budget_s)) {
        double s;
        if (cuda) {
            float msec = 0.0f;
            if (kbc_gpu_event_record(g->ev0, host->stream, why, sizeof why) != 0) {
                free(t);
                goto cuda_failed;
            }
            if ((r = one_run(ops, state, v, host, hc, ms->include_copies, &call)) != KB_OK) {
                free(t);
                goto plugin_failed;
            }
            if (kbc_gpu_event_record(g->ev1, host->stream, why, sizeof why) != 0 ||
                kbc_gpu_event_elapsed(g->ev0, g->ev1, &msec, why, sizeof why) != 0) {
                free(t);
                goto cuda_failed;
            }
            s = (double)msec * 1e-3;
        } else {
            double t0 = kbc_now();
            r = one_run(ops, state, v, host, hc, ms->include_copies, &call);
            s = kbc_now() - t0;
            if (r != KB_OK) {
                free(t);
                goto plugin_failed;
            }
        }
        t[n++] = s;
        spent += s;
    }
    /* Launch errors of the timed runs surface only here. */
    if (cuda && kbc_gpu_last_error(why, sizeof why) != 0) {
        free(t);
        goto cuda_failed;
    }
    kbc_stats_compute(t, n, &row->time);
    free(t);
    return;

plugin_failed:
    row_from_status(row, hc, call, r);
    kbc_stats_compute(NULL, 0, &row->time);
    if (cuda && r == KB_ECUDA)
        gpu_check_lost(g, host, row->reason);
    return;

cuda_failed:
    row->outcome = KBC_ERROR;
    snprintf(row->reason, sizeof row->reason, "the CUDA runtime reported an error in %s: %s",
             stage, why);
    kbc_stats_compute(NULL, 0, &row->time);
    gpu_check_lost(g, host, why);
}

static int ran(const kbc_row *r)
{
    return (r->outcome == KBC_PASS || r->outcome == KBC_FAIL) && r->time.n > 0 &&
           r->time.median > 0.0;
}

static const kbc_row *row_of(const kbc_row *rows, size_t n, int variant)
{
    if (variant < 0)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (rows[i].variant == (uint32_t)variant)
            return &rows[i];
    return NULL;
}

static double ratio(const kbc_row *base, const kbc_row *r)
{
    return base && ran(base) && ran(r) ? base->time.median / r->time.median : NAN;
}

/* Rates from the work numbers, and speed-ups against the baseline, the
   first CPU variant that ran, and the reference. */
static void derive(const kbc_experiment *e, kbc_row *rows, size_t n, double copy_gbps)
{
    const kb_plugin *d = e->plugin->desc;
    const kbc_row *cpu = NULL;
    for (size_t i = 0; i < n && !cpu; i++)
        if (d->variants[rows[i].variant].backend == KB_BACKEND_CPU && ran(&rows[i]))
            cpu = &rows[i];
    const kbc_row *base = row_of(rows, n, e->baseline);
    const kbc_row *ref = row_of(rows, n, e->reference);

    for (size_t i = 0; i < n; i++) {
        kbc_row *r = &rows[i];
        if (!ran(r))
            continue;
        double med = r->time.median;
        double bytes = (double)r->work.bytes_read + (double)r->work.bytes_written;
        r->gbps = bytes > 0 ? bytes / med / 1e9 : NAN;
        r->gflops = r->work.flops > 0 ? r->work.flops / med / 1e9 : NAN;
        r->items_per_s = r->work.items > 0 ? (double)r->work.items / med : NAN;
        if (d->variants[r->variant].backend == KB_BACKEND_CUDA && copy_gbps > 0 && bytes > 0)
            r->pct_copy = r->gbps / copy_gbps * 100.0;
        r->speedup_baseline = ratio(base, r);
        r->speedup_cpu = ratio(cpu, r);
        r->speedup_reference = ratio(ref, r);
    }
}

/* One point of one experiment, start to end; the rows go to the sinks. */
static void run_point(const kbc_experiment *e, uint64_t p, kb_host *host, kbc_hostctx *hc,
                      kbc_gpuctx *g, kbc_sink *sinks, int *sink_ok, size_t n_sinks,
                      double copy_gbps, uint64_t done, uint64_t total, int *any_failed)
{
    const kb_plugin *d = e->plugin->desc;
    kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
    kbc_experiment_point(e, p, values);
    kbc_row *rows = kbc_xcalloc(e->n_variants ? e->n_variants : 1, sizeof *rows);
    size_t n = e->n_variants;
    uint64_t mask = 0;

    kb_work work;
    memset(&work, 0, sizeof work);
    hc->fail_msg[0] = '\0';
    int r = d->ops->plan(values, &work, host);
    for (size_t i = 0; i < n; i++)
        row_init(&rows[i], e, p, values, e->variants[i], &work);

    if (r != KB_OK) {
        /* The plan was checked when the configuration was read, so this is
           a plugin whose plan() is not a function of its parameters. */
        for (size_t i = 0; i < n; i++)
            row_from_status(&rows[i], hc, "plan", r);
        goto report;
    }

    /* Which variants can run here at all. */
    uint64_t free_mem = 0;
    int free_known = 0;
    for (size_t i = 0; i < n; i++) {
        kbc_row *row = &rows[i];
        if (d->variants[row->variant].backend != KB_BACKEND_CUDA) {
            mask |= KB_VARIANT_BIT(row->variant);
            continue;
        }
        if (!g->usable) {
            snprintf(row->reason, sizeof row->reason, "%s", g->why_not);
            continue;
        }
        if (g->lost) {
            snprintf(row->reason, sizeof row->reason, "the CUDA context was lost after %s",
                     g->lost_after);
            continue;
        }
        if (!free_known) {
            free_mem = kbc_gpu_free_memory();
            free_known = 1;
        }
        if (free_mem > 0 && work.device_bytes > free_mem) {
            char need[32], have[32];
            kbc_human_bytes(work.device_bytes, need, sizeof need);
            kbc_human_bytes(free_mem, have, sizeof have);
            snprintf(row->reason, sizeof row->reason,
                     "the point needs %s of device memory and only %s is free", need, have);
            continue;
        }
        mask |= KB_VARIANT_BIT(row->variant);
    }
    if (!mask)
        goto report;

    void *state = NULL;
    hc->fail_msg[0] = '\0';
    r = d->ops->setup(values, mask, host, &state);
    if (r != KB_OK) {
        for (size_t i = 0; i < n; i++)
            if (mask & KB_VARIANT_BIT(rows[i].variant))
                row_from_status(&rows[i], hc, "setup", r);
    } else {
        char why[400];
        int cuda_mask = 0;
        for (size_t i = 0; i < n; i++)
            if ((mask & KB_VARIANT_BIT(rows[i].variant)) &&
                d->variants[rows[i].variant].backend == KB_BACKEND_CUDA)
                cuda_mask = 1;
        /* An error that setup() left behind unnoticed would otherwise be
           blamed on the first CUDA variant's checked run. */
        if (cuda_mask && (kbc_gpu_sync(host->stream, why, sizeof why) != 0 ||
                          kbc_gpu_last_error(why, sizeof why) != 0)) {
            for (size_t i = 0; i < n; i++)
                if ((mask & KB_VARIANT_BIT(rows[i].variant)) &&
                    d->variants[rows[i].variant].backend == KB_BACKEND_CUDA) {
                    rows[i].outcome = KBC_ERROR;
                    snprintf(rows[i].reason, sizeof rows[i].reason,
                             "the CUDA runtime reported an error after setup(): %s", why);
                    mask &= ~KB_VARIANT_BIT(rows[i].variant);
                }
            gpu_check_lost(g, host, why);
        }
        for (size_t i = 0; i < n; i++) {
            kbc_row *row = &rows[i];
            if (!(mask & KB_VARIANT_BIT(row->variant)))
                continue;
            if (d->variants[row->variant].backend == KB_BACKEND_CUDA && g->lost) {
                snprintf(row->reason, sizeof row->reason, "the CUDA context was lost after %s",
                         g->lost_after);
                continue;
            }
            if (show_progress()) {
                fprintf(stderr, "\r\033[K[%llu/%llu points] %s: %s ...",
                        (unsigned long long)done + 1, (unsigned long long)total, e->name,
                        d->variants[row->variant].name);
                fflush(stderr);
                hc->progress_shown = 1;
            }
            run_variant(e, state, row->variant, host, hc, g, row);
        }
    }
    /* Teardown also after a failed setup: the contract lets setup hand
       back a half-built state, and leaking it would starve later points. */
    if (state)
        d->ops->teardown(state, host);

report:
    derive(e, rows, n, copy_gbps);
    for (size_t i = 0; i < n; i++)
        if (rows[i].outcome == KBC_FAIL || rows[i].outcome == KBC_ERROR)
            *any_failed = 1;
    progress_clear(hc);
    for (size_t s = 0; s < n_sinks; s++)
        if (sink_ok[s] && sinks[s].point && sinks[s].point(sinks[s].ctx, rows, n) != 0) {
            /* The run goes on for the other reports; the exit code says
               that this one is incomplete. */
            fprintf(stderr, "kbench: a report could not be written; it stops at experiment "
                            "'%s' point %llu.\n", e->name, (unsigned long long)p);
            sink_ok[s] = 0;
        }
    free(rows);
    free(values);
}

/* Makes the stream and events and measures the copy ceiling, but only when
   some experiment wants a CUDA variant: a CPU-only plan never wakes the
   GPU. */
static double gpu_start(const kbc_plan *plan, const kbc_machine *m, kbc_gpuctx *g)
{
    int wanted = 0;
    for (size_t i = 0; i < plan->n && !wanted; i++) {
        const kbc_experiment *e = &plan->exps[i];
        for (uint32_t k = 0; k < e->n_variants; k++)
            if (e->plugin->desc->variants[e->variants[k]].backend == KB_BACKEND_CUDA)
                wanted = 1;
    }
    if (!m->has_gpu) {
        const char *r = m->no_gpu_reason[0] ? m->no_gpu_reason : "none was found";
        /* The probe's reason normally says "no CUDA device (...)" already. */
        if (strncmp(r, "no CUDA device", 14) == 0)
            snprintf(g->why_not, sizeof g->why_not, "%s", r);
        else
            snprintf(g->why_not, sizeof g->why_not, "no CUDA device: %s", r);
        return 0.0;
    }
    if (!wanted)
        return 0.0;
    char why[400];
    if (kbc_gpu_stream_create(&g->stream, why, sizeof why) != 0 ||
        kbc_gpu_event_create(&g->ev0, why, sizeof why) != 0 ||
        kbc_gpu_event_create(&g->ev1, why, sizeof why) != 0) {
        snprintf(g->why_not, sizeof g->why_not, "no CUDA device: %s", why);
        kbc_gpu_event_destroy(g->ev0);
        kbc_gpu_event_destroy(g->ev1);
        kbc_gpu_stream_destroy(g->stream);
        g->stream = g->ev0 = g->ev1 = NULL;
        return 0.0;
    }
    g->usable = 1;
    uint64_t bytes = kbc_gpu_free_memory() / 4;
    if (bytes > (1ULL << 30))
        bytes = 1ULL << 30;
    return kbc_gpu_copy_bandwidth(g->stream, bytes);
}

int kbc_run_plan(const kbc_plan *plan, const kbc_machine *m, kbc_sink *sinks, size_t n_sinks,
                 const char *command_line)
{
    kbc_gpuctx g;
    memset(&g, 0, sizeof g);
    double copy_gbps = gpu_start(plan, m, &g);

    int *sink_ok = kbc_xcalloc(n_sinks ? n_sinks : 1, sizeof *sink_ok);
    kbc_run_info info = {.plan = plan, .machine = m, .copy_gbps = copy_gbps,
                         .command_line = command_line};
    for (size_t s = 0; s < n_sinks; s++)
        sink_ok[s] = !sinks[s].begin || sinks[s].begin(sinks[s].ctx, &info) == 0;

    int any_failed = 0;
    uint64_t done = 0;
    kbc_hostctx hc;
    memset(&hc, 0, sizeof hc);
    for (size_t i = 0; i < plan->n; i++) {
        const kbc_experiment *e = &plan->exps[i];
        kb_host host;
        memset(&host, 0, sizeof host);
        host.size = sizeof host;
        host.seed = e->measure.seed;
        int on_gpu = g.usable && !g.lost;
        host.stream = on_gpu ? g.stream : NULL;
        host.device = on_gpu ? m->device : -1;
        host.sm_count = on_gpu ? m->sm_count : 0;
        host.l2_bytes = on_gpu ? m->l2_bytes : 0;
        host.cpu_threads = e->measure.cpu_threads > 0 ? e->measure.cpu_threads
                                                      : (m->cpu_threads > 0 ? m->cpu_threads : 1);
        host.log = host_log;
        host.fail = host_fail;
        host.host_private = &hc;
        hc.plugin = e->plugin->desc->name;
        for (uint64_t p = 0; p < e->n_points; p++, done++)
            run_point(e, p, &host, &hc, &g, sinks, sink_ok, n_sinks, copy_gbps, done,
                      plan->n_points, &any_failed);
    }
    progress_clear(&hc);

    int code = any_failed ? KBC_EXIT_FAILED : KBC_EXIT_OK;
    for (size_t s = 0; s < n_sinks; s++)
        if (!sink_ok[s])
            code = KBC_EXIT_SYSTEM;
    for (size_t s = 0; s < n_sinks; s++)
        if (sink_ok[s] && sinks[s].end && sinks[s].end(sinks[s].ctx, code) != 0)
            code = KBC_EXIT_SYSTEM;
    free(sink_ok);

    kbc_gpu_event_destroy(g.ev0);
    kbc_gpu_event_destroy(g.ev1);
    kbc_gpu_stream_destroy(g.stream);
    return code;
}
