/* point_plan.c -- see point_plan.h. */
#include "point_plan.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "util.h"

/* A record as the plan keeps it, one per point: the whole record is 1.2 KB
   (a kb_work has room for 64 variants' device memory, and the sentence
   600 bytes), and a plan may hold millions of points, so the plan keeps
   the variants' figures and the sentence only where there are some.  The
   rest of the kb_work is kept as the bytes before variant_device_bytes:
   a layout the ABI freezes (kbench/plugin.h, "Versions and
   compatibility"). */
#define WORK_HEAD offsetof(kb_work, variant_device_bytes)
struct kbc_planned {
    unsigned char head[WORK_HEAD]; /* the kb_work before the variants' figures */
    int16_t status, code;
    uint64_t *variant_bytes;       /* the plugin's n_variants; NULL when all 0 */
    char *sentence;                /* NULL when it runs                       */
    uint64_t refused;              /* variants plan() refused here            */
    char *refusals;                /* their sentences, one after the other in
                                      the order of their bits; NULL for none */
};

/* A point's plan that names variants the plugin does not have, or refuses
   one without a sentence, is the plugin's error, as a refused point
   without a sentence is.  Returns 1 (and sets pp) when it is. */
static int refusals_wrong(const kb_plugin *d, kbc_point_plan *pp)
{
    const kbc_refusals *r = &pp->refusals;
    uint32_t beyond = r->beyond;
    for (uint32_t v = d->n_variants; !beyond && v < KB_MAX_VARIANTS; v++)
        if (r->mask & KB_VARIANT_BIT(v))
            beyond = v + 1;
    if (beyond)
        snprintf(pp->sentence, sizeof pp->sentence,
                 "plan() refused variant number %u, which plugin '%s' does not declare (it "
                 "has %u variants, numbered from 0)",
                 beyond - 1, d->name, d->n_variants);
    for (uint32_t v = 0; !beyond && v < d->n_variants; v++) {
        const char *s = kbc_refusals_sentence(r, v);
        if (s && !*s) {
            snprintf(pp->sentence, sizeof pp->sentence,
                     "plan() refused variant '%s' without saying why (refuse() takes a "
                     "sentence, as fail() does)",
                     d->variants[v].name);
            beyond = 1;
        }
    }
    if (!beyond)
        return 0;
    pp->status = KBC_PLAN_FAILED;
    pp->code = KB_EFAIL;
    kbc_refusals_clear(&pp->refusals);
    return 1;
}

void kbc_point_plan_make(kbc_instance in, const kb_value *values, kbc_point_plan *pp)
{
    kbc_error err;
    pp->carried = 0;
    pp->code = kbc_call_plan(in, values, &pp->work, &pp->refusals, &err);
    if (pp->code == KB_OK) {
        pp->status = KBC_PLAN_RUNS;
        pp->sentence[0] = '\0';
        refusals_wrong(in.desc, pp);
        return;
    }
    pp->status = kbc_plan_refused(&err) ? KBC_PLAN_REFUSED : KBC_PLAN_FAILED;
    snprintf(pp->sentence, sizeof pp->sentence, "%s", err.sentence);
}

int kbc_plan_variant(const kbc_point_plan *pp, uint32_t v, const char **sentence)
{
    const char *why = pp->sentence;
    int status = pp->status;
    if (status == KBC_PLAN_RUNS) {
        const char *s = kbc_refusals_sentence(&pp->refusals, v);
        why = s ? s : "";
        status = s ? KBC_PLAN_REFUSED : KBC_PLAN_RUNS;
    }
    if (sentence)
        *sentence = why;
    return status;
}

int kbc_plan_any_runs(const kbc_point_plan *pp, uint64_t mask)
{
    return pp->status == KBC_PLAN_RUNS && (mask & ~pp->refusals.mask) != 0;
}

/* plan() should be quiet; warnings still reach the user, the rest is
   dropped because plan() runs once per point. */
static void plan_log(kb_host *h, kb_log_level level, const char *fmt, ...)
{
    if (level < KB_LOG_WARN)
        return;
    kbc_hostctx *hc = h->host_private;
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "kbench: warning: plugin '%s': %s\n", hc->plugin, line);
}

static void keep(struct kbc_planned *k, const kbc_point_plan *pp, uint32_t n_variants)
{
    memset(k, 0, sizeof *k);
    memcpy(k->head, &pp->work, WORK_HEAD);
    k->status = (int16_t)pp->status;
    k->code = (int16_t)pp->code;
    uint32_t n = n_variants < KB_MAX_VARIANTS ? n_variants : KB_MAX_VARIANTS;
    for (uint32_t v = 0; v < n && !k->variant_bytes; v++)
        if (pp->work.variant_device_bytes[v]) {
            k->variant_bytes = kbc_xmalloc(n * sizeof *k->variant_bytes);
            memcpy(k->variant_bytes, pp->work.variant_device_bytes,
                   n * sizeof *k->variant_bytes);
        }
    if (pp->status != KBC_PLAN_RUNS)
        k->sentence = kbc_xstrdup(pp->sentence);
    k->refused = pp->status == KBC_PLAN_RUNS ? pp->refusals.mask : 0;
    if (k->refused) {
        size_t len = 0;
        for (uint32_t v = 0; v < KB_MAX_VARIANTS; v++)
            if (k->refused & KB_VARIANT_BIT(v))
                len += strlen(kbc_refusals_sentence(&pp->refusals, v)) + 1;
        char *at = k->refusals = kbc_xmalloc(len);
        for (uint32_t v = 0; v < KB_MAX_VARIANTS; v++)
            if (k->refused & KB_VARIANT_BIT(v)) {
                const char *s = kbc_refusals_sentence(&pp->refusals, v);
                size_t one = strlen(s) + 1;
                memcpy(at, s, one);
                at += one;
            }
    }
}

void kbc_experiment_plan_points(kbc_experiment *x)
{
    const kb_plugin *d = x->plugin->desc;
    kbc_experiment_unplan(x);
    x->planned = kbc_xcalloc(x->n_points ? x->n_points : 1, sizeof *x->planned);
    kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
    kb_host h;
    kbc_hostctx hc;
    kbc_host_init(&h, &hc, d->name, x->measure.seed, kbc_cpu_threads(x->measure.cpu_threads));
    h.log = plan_log;
    kbc_point_plan pp;
    for (uint64_t p = 0; p < x->n_points; p++) {
        kbc_experiment_point(x, p, values);
        kbc_point_plan_make(kbc_instance_of(d, &h), values, &pp);
        keep(&x->planned[p], &pp, d->n_variants);
        x->n_invalid += pp.status == KBC_PLAN_REFUSED;
        x->n_failed += pp.status == KBC_PLAN_FAILED;
    }
    free(values);
}

void kbc_experiment_unplan(kbc_experiment *x)
{
    for (uint64_t p = 0; x->planned && p < x->n_points; p++) {
        free(x->planned[p].variant_bytes);
        free(x->planned[p].sentence);
        free(x->planned[p].refusals);
    }
    free(x->planned);
    x->planned = NULL;
    x->n_invalid = x->n_failed = 0;
}

int kbc_plan_copy_points(kbc_plan *dst, const kbc_plan *src)
{
    if (dst->n != src->n)
        return -1;
    for (size_t i = 0; i < src->n; i++)
        if (dst->exps[i].n_points != src->exps[i].n_points || !src->exps[i].planned ||
            dst->exps[i].plugin != src->exps[i].plugin)
            return -1;
    kbc_point_plan pp;
    for (size_t i = 0; i < src->n; i++) {
        kbc_experiment *x = &dst->exps[i];
        kbc_experiment_unplan(x);
        x->planned = kbc_xcalloc(x->n_points ? x->n_points : 1, sizeof *x->planned);
        for (uint64_t p = 0; p < x->n_points; p++) {
            kbc_plan_point(&src->exps[i], p, &pp);
            keep(&x->planned[p], &pp, x->plugin->desc->n_variants);
        }
        x->n_invalid = src->exps[i].n_invalid;
        x->n_failed = src->exps[i].n_failed;
    }
    return 0;
}

void kbc_plan_point(const kbc_experiment *x, uint64_t p, kbc_point_plan *pp)
{
    memset(pp, 0, sizeof *pp);
    if (!x->planned || p >= x->n_points) {
        pp->status = KBC_PLAN_FAILED;
        pp->code = KB_EFAIL;
        snprintf(pp->sentence, sizeof pp->sentence,
                 "kbench holds no plan of point %llu of experiment [%s] here (a worker runs "
                 "only the points its supervisor planned)",
                 (unsigned long long)p, x->name);
        return;
    }
    const struct kbc_planned *k = &x->planned[p];
    memcpy(&pp->work, k->head, WORK_HEAD);
    uint32_t n = x->plugin->desc->n_variants;
    if (k->variant_bytes)
        memcpy(pp->work.variant_device_bytes, k->variant_bytes,
               (n < KB_MAX_VARIANTS ? n : KB_MAX_VARIANTS) * sizeof *k->variant_bytes);
    pp->status = k->status;
    pp->code = k->code;
    if (k->sentence)
        snprintf(pp->sentence, sizeof pp->sentence, "%s", k->sentence);
    kbc_refusals_clear(&pp->refusals);
    const char *s = k->refusals;
    for (uint32_t v = 0; k->refused && v < KB_MAX_VARIANTS; v++)
        if (k->refused & KB_VARIANT_BIT(v)) {
            kbc_refusals_add(&pp->refusals, v, s);
            s += strlen(s) + 1;
        }
}

static const char *const status_names[] = {"runs", "refused", "failed"};

const char *kbc_plan_status_name(int status)
{
    return status >= 0 && status <= KBC_PLAN_FAILED ? status_names[status] : "?";
}

int kbc_plan_status_parse(const char *name)
{
    for (int s = 0; s <= KBC_PLAN_FAILED; s++)
        if (strcmp(name, status_names[s]) == 0)
            return s;
    return -1;
}
