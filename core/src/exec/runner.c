/*
 * runner.c -- the scheduler; see runner.h.  Nothing of a point outlives
 * it but the baseline's and reference's medians (8 bytes per point each,
 * for speed-ups at points where their configuration ran earlier).
 */
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "host.h"
#include "point.h"
#include "sweep.h"
#include "util.h"

void kbc_run_set_quiet(int quiet)
{
    kbc_host_set_quiet(quiet);
}

static char *dup_or_null(const char *s)
{
    return s ? kbc_xstrdup(s) : NULL;
}

kbc_exp_info *kbc_exp_infos(const kbc_plan *plan)
{
    kbc_exp_info *xs = kbc_xcalloc(plan->n ? plan->n : 1, sizeof *xs);
    for (size_t i = 0; i < plan->n; i++) {
        const kbc_experiment *e = &plan->exps[i];
        const kb_plugin *d = e->plugin->desc;
        kbc_exp_info *x = &xs[i];
        x->name = kbc_xstrdup(e->name);
        x->line = e->line;
        x->description = dup_or_null(e->description);
        x->plugin = kbc_xstrdup(d->name);
        x->plugin_file = dup_or_null(e->plugin->path);
        x->variants = kbc_xcalloc(e->n_variants ? e->n_variants : 1, sizeof *x->variants);
        for (uint32_t k = 0; k < e->n_variants; k++)
            if (e->variants[k] < d->n_variants)
                x->variants[x->n_variants++] = kbc_xstrdup(d->variants[e->variants[k]].name);
        x->baseline = e->baseline >= 0 && (uint32_t)e->baseline < d->n_variants
                          ? kbc_xstrdup(d->variants[e->baseline].name)
                          : NULL;
        x->reference = e->reference >= 0 && (uint32_t)e->reference < d->n_variants
                           ? kbc_xstrdup(d->variants[e->reference].name)
                           : NULL;
        x->warmup = e->measure.warmup;
        x->runs = e->measure.runs;
        x->budget_s = e->measure.budget_s;
        x->min_runs = e->measure.min_runs;
        x->max_runs = e->measure.max_runs;
        x->noise_pct = e->measure.noise_pct;
        x->min_time_s = e->measure.min_time_s;
        x->include_copies = e->measure.include_copies;
        x->seed = e->measure.seed;
        x->cpu_threads = e->measure.cpu_threads;
        x->cache_cold = e->measure.cache_cold;
        x->batch = e->measure.batch;
        x->n_params = e->axes ? d->n_params : 0;
        x->param_names = kbc_xcalloc(x->n_params ? x->n_params : 1, sizeof *x->param_names);
        x->param_values = kbc_xcalloc(x->n_params ? x->n_params : 1, sizeof *x->param_values);
        x->n_values = kbc_xcalloc(x->n_params ? x->n_params : 1, sizeof *x->n_values);
        for (size_t k = 0; k < x->n_params; k++) {
            x->param_names[k] = kbc_xstrdup(d->params[k].name);
            x->n_values[k] = e->axes[k].n;
            x->param_values[k] = kbc_xcalloc(e->axes[k].n ? e->axes[k].n : 1, sizeof(char *));
            for (size_t j = 0; j < e->axes[k].n; j++) {
                char buf[128];
                x->param_values[k][j] = kbc_xstrdup(
                    kbc_value_format(&d->params[k], e->axes[k].values[j], buf, sizeof buf));
            }
        }
        x->n_points = e->n_points;
    }
    return xs;
}

void kbc_exp_infos_free(kbc_exp_info *xs, size_t n)
{
    for (size_t i = 0; xs && i < n; i++) {
        kbc_exp_info *x = &xs[i];
        free(x->name);
        free(x->description);
        free(x->plugin);
        free(x->plugin_file);
        for (size_t k = 0; k < x->n_variants; k++)
            free(x->variants[k]);
        free(x->variants);
        free(x->baseline);
        free(x->reference);
        for (size_t k = 0; k < x->n_params; k++) {
            free(x->param_names[k]);
            for (size_t j = 0; j < x->n_values[k]; j++)
                free(x->param_values[k][j]);
            free(x->param_values[k]);
        }
        free(x->param_names);
        free(x->param_values);
        free(x->n_values);
    }
    free(xs);
}

int kbc_run_plan(const kbc_plan *plan, const kbc_machine *m, kbc_sink *sinks, size_t n_sinks,
                 const char *command_line)
{
    kbc_device dev;
    if (kbc_plan_wants_gpu(plan) || !m->has_gpu)
        kbc_device_open(&dev, m, 1);
    else
        kbc_device_open(&dev, NULL, 0);

    kbc_exp_info *xs = kbc_exp_infos(plan);
    int *sink_ok = kbc_xcalloc(n_sinks ? n_sinks : 1, sizeof *sink_ok);
    kbc_run_info info = {.config_file = plan->path, .machine = m, .ceilings = dev.ceilings,
                         .flops = dev.flops, .command_line = command_line, .exps = xs,
                         .n_exps = plan->n};
    info.clocks_known = dev.nvml != NULL;
    info.clocks_why = dev.nvml            ? NULL
                      : dev.clocks_why[0] ? dev.clocks_why
                      : dev.usable        ? "not read"
                                          : "no GPU";
    info.sm_max_mhz = dev.sm_max_mhz;
    info.mem_max_mhz = dev.mem_max_mhz;
    info.clocks_at_start = dev.clocks_at_start;
    for (size_t s = 0; s < n_sinks; s++)
        sink_ok[s] = !sinks[s].begin || sinks[s].begin(sinks[s].ctx, &info) == 0;

    int any_failed = 0;
    kbc_hostctx hc;
    memset(&hc, 0, sizeof hc);
    hc.total = plan->n_points;
    for (size_t i = 0; i < plan->n; i++) {
        const kbc_experiment *e = &plan->exps[i];
        int threads = e->measure.cpu_threads > 0 ? e->measure.cpu_threads
                                                 : (m->cpu_threads > 0 ? m->cpu_threads : 1);
        kb_host host;
        kbc_host_init(&host, &hc, e->plugin->desc->name, e->measure.seed, threads);
        kbc_record *recs = kbc_xcalloc(e->n_variants ? e->n_variants : 1, sizeof *recs);
        kbc_point_memory mem;
        kbc_point_memory_init(&mem, e);
        for (uint64_t p = 0; p < e->n_points; p++, hc.done++) {
            size_t n = kbc_point_run(e, p, &dev, &host, &mem, recs);
            for (size_t k = 0; k < n; k++)
                if (recs[k].outcome == KBC_FAIL || recs[k].outcome == KBC_ERROR)
                    any_failed = 1;
            kbc_host_progress_clear(&hc);
            if (n == 0)
                continue; /* every variant's configuration ran earlier */
            for (size_t s = 0; s < n_sinks; s++)
                if (sink_ok[s] && sinks[s].point && sinks[s].point(sinks[s].ctx, recs, n) != 0) {
                    /* The run goes on for the other reports; the exit code
                       says that this one is incomplete. */
                    const char *why = sinks[s].error ? sinks[s].error(sinks[s].ctx) : NULL;
                    if (why)
                        fprintf(stderr, "kbench: %s; the run goes on without it.\n", why);
                    sink_ok[s] = 0;
                }
            /* The sinks have written the samples out; the next point's
               records start afresh. */
            for (size_t k = 0; k < n; k++)
                kbc_record_free(&recs[k]);
        }
        kbc_point_memory_free(&mem);
        free(recs);
    }
    kbc_host_progress_clear(&hc);

    int code = any_failed ? KBC_EXIT_FAILED : KBC_EXIT_OK;
    for (size_t s = 0; s < n_sinks; s++)
        if (!sink_ok[s])
            code = KBC_EXIT_SYSTEM;
    for (size_t s = 0; s < n_sinks; s++)
        if (sink_ok[s] && sinks[s].end && sinks[s].end(sinks[s].ctx, code) != 0)
            code = KBC_EXIT_SYSTEM;
    free(sink_ok);
    kbc_exp_infos_free(xs, plan->n);
    kbc_device_close(&dev);
    return code;
}
