/* exp_info.c -- see exp_info.h. */
#include "exp_info.h"

#include <stdlib.h>

#include "util.h"
#include "value.h"

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
