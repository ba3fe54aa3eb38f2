#define _GNU_SOURCE
/*
 * suspect.c -- rows slower than a larger point of the same variant
 * (suspect.h).  At the end, the rows are ordered by experiment and
 * variant, and every pair within one such group is looked at: a group is
 * one variant's points, tens to thousands.
 */
#include "suspect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct seen {
    char *group; /* plugin/experiment/variant */
    char *key;
    double median;
    double bytes, flops, items;
    int cpu;
} seen;

struct kbc_suspects {
    seen *rows;
    size_t n, cap;
    kbc_suspect *found;
    size_t n_found;
};

kbc_suspects *kbc_suspects_new(void)
{
    return kbc_xcalloc(1, sizeof(kbc_suspects));
}

void kbc_suspects_add(kbc_suspects *s, const kbc_record *r)
{
    double bytes = (double)r->work.bytes_read + (double)r->work.bytes_written;
    double flops = isfinite(r->work.flops) && r->work.flops > 0 ? r->work.flops : 0;
    double items = (double)r->work.items;
    if (r->outcome != KBC_PASS || !isfinite(r->time.median) || r->time.median <= 0 ||
        bytes + flops + items <= 0)
        return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->rows = kbc_xrealloc(s->rows, s->cap * sizeof *s->rows);
    }
    seen *x = &s->rows[s->n++];
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    x->key = kbc_xmalloc(need);
    kbc_record_key(r, x->key, need);
    /* The group: the variant and every parameter that is not a size, so
       that only points that differ in their sizes are compared (a block
       size or a type changes the kernel, not only the work). */
    size_t g = strlen(r->plugin) + strlen(r->experiment) + strlen(r->variant) + 3;
    for (uint32_t i = 0; i < r->n_params; i++)
        if (r->params[i].type != KB_PARAM_SIZE)
            g += strlen(r->params[i].name) + strlen(r->params[i].text) + 2;
    x->group = kbc_xmalloc(g);
    size_t at = (size_t)snprintf(x->group, g, "%s/%s/%s", r->plugin, r->experiment, r->variant);
    for (uint32_t i = 0; i < r->n_params; i++)
        if (r->params[i].type != KB_PARAM_SIZE)
            at += (size_t)snprintf(x->group + at, g - at, ",%s=%s", r->params[i].name,
                                   r->params[i].text);
    x->median = r->time.median;
    x->cpu = r->backend == KB_BACKEND_CPU;
    x->bytes = bytes;
    x->flops = flops;
    x->items = items;
}

/* Whether b does at least the work of a in every measure, and more in one;
   the ratio of the largest measure's growth goes to *ratio. */
static int more_work(const seen *a, const seen *b, double *ratio)
{
    if (b->bytes < a->bytes || b->flops < a->flops || b->items < a->items)
        return 0;
    double r = 1;
    if (a->bytes > 0 && b->bytes / a->bytes > r)
        r = b->bytes / a->bytes;
    if (a->flops > 0 && b->flops / a->flops > r)
        r = b->flops / a->flops;
    if (a->items > 0 && b->items / a->items > r)
        r = b->items / a->items;
    *ratio = r;
    return r > 1;
}

static int by_group(const void *x, const void *y, void *arg)
{
    const seen *rows = arg;
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    int c = strcmp(rows[i].group, rows[j].group);
    return c ? c : (i > j) - (i < j);
}

static int by_index(const void *x, const void *y)
{
    size_t i = ((const kbc_suspect *)x)->key_row, j = ((const kbc_suspect *)y)->key_row;
    return (i > j) - (i < j);
}

const kbc_suspect *kbc_suspects_list(kbc_suspects *s, size_t *n)
{
    free(s->found);
    s->found = kbc_xcalloc(s->n ? s->n : 1, sizeof *s->found);
    s->n_found = 0;
    size_t *order = kbc_xcalloc(s->n ? s->n : 1, sizeof *order);
    for (size_t i = 0; i < s->n; i++)
        order[i] = i;
    qsort_r(order, s->n, sizeof *order, by_group, s->rows);
    for (size_t g = 0; g < s->n;) {
        size_t end = g + 1;
        while (end < s->n && strcmp(s->rows[order[g]].group, s->rows[order[end]].group) == 0)
            end++;
        for (size_t i = g; i < end; i++) {
            const seen *a = &s->rows[order[i]];
            const seen *worst = NULL;
            double worst_work = 0;
            for (size_t j = g; j < end; j++) {
                const seen *b = &s->rows[order[j]];
                double w;
                if (j == i || !more_work(a, b, &w))
                    continue;
                if (a->median >= KBC_SUSPECT_MIN_S && a->median > KBC_SUSPECT_FACTOR * b->median &&
                    (!worst || b->median < worst->median)) {
                    worst = b;
                    worst_work = w;
                }
            }
            if (worst)
                s->found[s->n_found++] = (kbc_suspect){a->key, a->median, worst->key,
                                                        worst->median, worst_work, order[i],
                                                        a->cpu};
        }
        g = end;
    }
    free(order);
    qsort(s->found, s->n_found, sizeof *s->found, by_index);
    *n = s->n_found;
    return s->found;
}

void kbc_suspects_free(kbc_suspects *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->rows[i].key);
        free(s->rows[i].group);
    }
    free(s->rows);
    free(s->found);
    free(s);
}

/* What to do about a suspect row.  A GPU row's cause is gone when its
   point runs again (idle clocks, a library's first call, another
   process).  A CPU row's is usually not: at a small point a CPU variant's
   time is mostly starting its threads for each run and waiting for the
   scheduler (a slice is milliseconds on a busy host), and a rerun on the
   same host meets the same again. */
static const char *advice(const kbc_suspect *x)
{
    return x->cpu ? "a CPU variant's time there is mostly starting its threads and the "
                    "scheduler's slices, which a rerun meets again: compare it on an idle host, "
                    "with cpu_threads = 1, or where the work outweighs the start-up"
                  : "rerun its point";
}

const char *kbc_suspect_text(const kbc_suspect *x, char *buf, size_t n)
{
    char a[32], b[32];
    snprintf(buf, n, "%s: %s, more than %.0fx the %s of %s, which does %.3gx the work; %s",
             x->key, kbc_human_seconds(x->median_s, a, sizeof a), KBC_SUSPECT_FACTOR,
             kbc_human_seconds(x->than_median_s, b, sizeof b), x->than_key, x->work_ratio,
             advice(x));
    return buf;
}
