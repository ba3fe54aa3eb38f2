#define _GNU_SOURCE
/*
 * sweep_summary.c -- the summary of each experiment's sweep
 * (sweep_summary.h).  The rows are kept as they come; at the end, per
 * experiment, the swept values are made into rows (each spelled as one
 * key, sorted, so that a run's row finds its place by binary search), the
 * variants into columns, and every kept row is put in the cells it stands
 * for.
 */
#include "sweep_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* What the summary needs of one row. */
typedef struct kept {
    char *experiment, *variant, *baseline, *reference;
    uint64_t point;
    uint32_t np;
    char *names[KB_MAX_PARAMS], *texts[KB_MAX_PARAMS]; /* the swept parameters */
    char *ignores; /* the swept parameters the variant ignores, comma-separated */
    int outcome;
    double median;
} kept;

struct kbc_sweeps {
    kept *rows;
    size_t n, cap;
    kbc_sweep *list;
    size_t n_list;
};

kbc_sweeps *kbc_sweeps_new(void)
{
    return kbc_xcalloc(1, sizeof(kbc_sweeps));
}

void kbc_sweeps_add(kbc_sweeps *s, const kbc_record *r)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->rows = kbc_xrealloc(s->rows, s->cap * sizeof *s->rows);
    }
    kept *k = &s->rows[s->n++];
    memset(k, 0, sizeof *k);
    k->experiment = kbc_xstrdup(r->experiment);
    k->variant = kbc_xstrdup(r->variant);
    k->baseline = kbc_xstrdup(r->baseline);
    k->reference = kbc_xstrdup(r->reference);
    k->point = r->point;
    for (uint32_t i = 0; i < r->n_params && i < KB_MAX_PARAMS; i++)
        if (r->params[i].swept) {
            k->names[k->np] = kbc_xstrdup(r->params[i].name);
            k->texts[k->np++] = kbc_xstrdup(r->params[i].text);
        }
    k->ignores = kbc_xstrdup(r->points > 1 ? r->ignores : "");
    k->outcome = (int)r->outcome;
    k->median = r->outcome == KBC_PASS && kbc_record_ran(r) ? r->time.median : NAN;
}

static void sweep_free(kbc_sweep *w)
{
    free(w->params);
    free(w->labels);
    free(w->variants);
    free(w->median);
    free(w->outcome);
    free(w->best);
    free(w->vs);
}

static void list_free(kbc_sweeps *s)
{
    for (size_t i = 0; i < s->n_list; i++)
        sweep_free(&s->list[i]);
    free(s->list);
    s->list = NULL;
    s->n_list = 0;
}

void kbc_sweeps_free(kbc_sweeps *s)
{
    if (!s)
        return;
    list_free(s);
    for (size_t i = 0; i < s->n; i++) {
        kept *k = &s->rows[i];
        free(k->experiment);
        free(k->variant);
        free(k->baseline);
        free(k->reference);
        for (uint32_t q = 0; q < k->np; q++) {
            free(k->names[q]);
            free(k->texts[q]);
        }
        free(k->ignores);
    }
    free(s->rows);
    free(s);
}

/* The text of parameter name at row k, or "" when it has none. */
static const char *text_of(const kept *k, const char *name)
{
    for (uint32_t q = 0; q < k->np; q++)
        if (strcmp(k->names[q], name) == 0)
            return k->texts[q];
    return "";
}

/* Whether name is one of the comma-separated names of list. */
static int listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        size_t l = strcspn(p, ",");
        if (l == len && strncmp(p, name, len) == 0)
            return 1;
        p += l;
        p += *p == ',';
    }
    return 0;
}

/* A row of the summary while it is made: its values as one key (each
   followed by a unit separator, which no parameter's text holds). */
typedef struct row {
    char *key;
    const kept *first; /* the kept row that made it */
    uint64_t point;
} row;

static char *row_key(const kept *k, const char *const *params, size_t np)
{
    size_t len = 1;
    for (size_t q = 0; q < np; q++)
        len += strlen(text_of(k, params[q])) + 1;
    char *key = kbc_xmalloc(len), *p = key;
    for (size_t q = 0; q < np; q++)
        p += sprintf(p, "%s\x1f", text_of(k, params[q]));
    *p = '\0';
    return key;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const row *)a)->key, ((const row *)b)->key);
}

static int by_point(const void *a, const void *b)
{
    const row *x = a, *y = b;
    return x->point < y->point ? -1 : x->point > y->point;
}

/* Whether kept row k stands for summary row r: every swept parameter it
   does not ignore has r's value. */
static int stands_for(const kept *k, const kept *r, const char *const *params, size_t np)
{
    for (size_t q = 0; q < np; q++)
        if (!listed(k->ignores, params[q]) &&
            strcmp(text_of(k, params[q]), text_of(r, params[q])) != 0)
            return 0;
    return 1;
}

/* One line against `against` (column a) for variant column v. */
static kbc_sweep_vs versus(const kbc_sweep *w, size_t v, size_t a, int reference)
{
    kbc_sweep_vs x = {.variant = w->variants[v], .against = w->variants[a],
                      .reference = reference, .geomean = NAN, .min = NAN, .max = NAN};
    double logs = 0;
    for (size_t i = 0; i < w->n_rows; i++) {
        double mv = w->median[i * w->n_variants + v], ma = w->median[i * w->n_variants + a];
        if (!(mv > 0) || !(ma > 0))
            continue;
        double s = ma / mv;
        logs += log(s);
        x.min = x.n && x.min < s ? x.min : s;
        x.max = x.n && x.max > s ? x.max : s;
        x.n++;
    }
    if (x.n)
        x.geomean = exp(logs / (double)x.n);
    return x;
}

static long column_of(const kbc_sweep *w, const char *name)
{
    for (size_t v = 0; name[0] && v < w->n_variants; v++)
        if (strcmp(w->variants[v], name) == 0)
            return (long)v;
    return -1;
}

/* The summary of the kept rows at[0..n) (one experiment's) into w. */
static void summarise(const kept *const *at, size_t n, kbc_sweep *w)
{
    const kept *k0 = at[0];
    w->experiment = k0->experiment;
    w->baseline = k0->baseline;
    w->reference = k0->reference;
    w->params = kbc_xcalloc(KB_MAX_PARAMS, sizeof *w->params);
    w->variants = kbc_xcalloc(n, sizeof *w->variants);
    for (size_t i = 0; i < n; i++) {
        for (uint32_t q = 0; q < at[i]->np; q++) {
            size_t j = 0;
            while (j < w->n_params && strcmp(w->params[j], at[i]->names[q]) != 0)
                j++;
            if (j == w->n_params && j < KB_MAX_PARAMS)
                w->params[w->n_params++] = at[i]->names[q];
        }
        size_t v = 0;
        while (v < w->n_variants && strcmp(w->variants[v], at[i]->variant) != 0)
            v++;
        if (v == w->n_variants)
            w->variants[w->n_variants++] = at[i]->variant;
    }

    /* The rows: the values of the kept rows that stand for one point
       each (all of them, when every variant ignores something), once
       each, in the plan's order. */
    int any_exact = 0;
    for (size_t i = 0; i < n && !any_exact; i++)
        any_exact = !at[i]->ignores[0];
    row *rows = kbc_xcalloc(n, sizeof *rows);
    size_t nr = 0;
    for (size_t i = 0; i < n; i++)
        if (!any_exact || !at[i]->ignores[0])
            rows[nr++] = (row){row_key(at[i], w->params, w->n_params), at[i], at[i]->point};
    qsort(rows, nr, sizeof *rows, by_key);
    size_t u = 0;
    for (size_t i = 0; i < nr; i++) {
        if (u && strcmp(rows[u - 1].key, rows[i].key) == 0) {
            if (rows[i].point < rows[u - 1].point)
                rows[u - 1].point = rows[i].point;
            free(rows[i].key);
            continue;
        }
        rows[u++] = rows[i];
    }
    nr = u;
    qsort(rows, nr, sizeof *rows, by_point);
    w->n_rows = nr;

    size_t nv = w->n_variants, cells = nr * nv;
    w->labels = kbc_xcalloc(nr * w->n_params + 1, sizeof *w->labels);
    w->median = kbc_xcalloc(cells + 1, sizeof *w->median);
    w->outcome = kbc_xcalloc(cells + 1, sizeof *w->outcome);
    w->best = kbc_xcalloc(nr + 1, sizeof *w->best);
    for (size_t c = 0; c < cells; c++) {
        w->median[c] = NAN;
        w->outcome[c] = -1;
    }
    for (size_t i = 0; i < nr; i++)
        for (size_t q = 0; q < w->n_params; q++)
            w->labels[i * w->n_params + q] = text_of(rows[i].first, w->params[q]);

    /* Each kept row into the cells it stands for: a row of its own finds
       its place by its key (the rows, sorted again by key for that); a
       row that ignores a parameter is looked for in every row. */
    row *sorted = kbc_xcalloc(nr + 1, sizeof *sorted);
    for (size_t i = 0; i < nr; i++) {
        sorted[i] = rows[i];
        sorted[i].point = i; /* its place in w */
    }
    qsort(sorted, nr, sizeof *sorted, by_key);
    for (size_t i = 0; i < n; i++) {
        const kept *k = at[i];
        size_t v = (size_t)column_of(w, k->variant);
        if (!k->ignores[0]) {
            row probe = {.key = row_key(k, w->params, w->n_params)};
            row *hit = nr ? bsearch(&probe, sorted, nr, sizeof *sorted, by_key) : NULL;
            free(probe.key);
            if (hit && w->outcome[hit->point * nv + v] < 0) {
                w->median[hit->point * nv + v] = k->median;
                w->outcome[hit->point * nv + v] = k->outcome;
            }
            continue;
        }
        for (size_t r = 0; r < nr; r++)
            if (w->outcome[r * nv + v] < 0 && stands_for(k, rows[r].first, w->params,
                                                         w->n_params)) {
                w->median[r * nv + v] = k->median;
                w->outcome[r * nv + v] = k->outcome;
            }
    }
    free(sorted);
    for (size_t i = 0; i < nr; i++)
        free(rows[i].key);
    free(rows);

    for (size_t r = 0; r < nr; r++) {
        int best = -1, passed = 0;
        for (size_t v = 0; v < nv; v++) {
            double m = w->median[r * nv + v];
            if (!(m > 0))
                continue;
            passed++;
            if (best < 0 || m < w->median[r * nv + (size_t)best])
                best = (int)v;
        }
        w->best[r] = passed >= 2 ? best : -1;
    }

    long b = column_of(w, w->baseline), ref = column_of(w, w->reference);
    w->vs = kbc_xcalloc(2 * nv + 1, sizeof *w->vs);
    for (size_t v = 0; b >= 0 && v < nv; v++)
        if ((long)v != b)
            w->vs[w->n_vs++] = versus(w, v, (size_t)b, 0);
    for (size_t v = 0; ref >= 0 && ref != b && v < nv; v++)
        if ((long)v != ref)
            w->vs[w->n_vs++] = versus(w, v, (size_t)ref, 1);
}

const kbc_sweep *kbc_sweeps_list(kbc_sweeps *s, size_t *n)
{
    list_free(s);
    /* The experiments in the order they first appear. */
    const char **names = kbc_xcalloc(s->n + 1, sizeof *names);
    size_t ne = 0;
    for (size_t i = 0; i < s->n; i++) {
        size_t e = 0;
        while (e < ne && strcmp(names[e], s->rows[i].experiment) != 0)
            e++;
        if (e == ne)
            names[ne++] = s->rows[i].experiment;
    }
    s->list = kbc_xcalloc(ne + 1, sizeof *s->list);
    const kept **at = kbc_xcalloc(s->n + 1, sizeof *at);
    for (size_t e = 0; e < ne; e++) {
        size_t m = 0;
        for (size_t i = 0; i < s->n; i++)
            if (strcmp(s->rows[i].experiment, names[e]) == 0)
                at[m++] = &s->rows[i];
        summarise(at, m, &s->list[s->n_list++]);
    }
    free(at);
    free(names);
    *n = s->n_list;
    return s->list;
}

const char *kbc_sweep_ratio_text(double r, char *buf, size_t n)
{
    if (!isfinite(r))
        snprintf(buf, n, "-");
    else if (r >= 99.95)
        snprintf(buf, n, "%.0fx", r);
    else if (r >= 9.995)
        snprintf(buf, n, "%.1fx", r);
    else
        snprintf(buf, n, "%.2fx", r);
    return buf;
}

const char *kbc_sweep_vs_text(const kbc_sweep_vs *x, char *buf, size_t n)
{
    char g[32], lo[32], hi[32];
    if (x->n == 0)
        snprintf(buf, n, "%s: no point where both %s and %s passed", x->variant, x->variant,
                 x->against);
    else if (x->n == 1)
        snprintf(buf, n, "%s %s %s at 1 point", x->variant,
                 kbc_sweep_ratio_text(x->geomean, g, sizeof g), x->against);
    else
        snprintf(buf, n, "%s %s %s over %zu points (%s .. %s)", x->variant,
                 kbc_sweep_ratio_text(x->geomean, g, sizeof g), x->against, x->n,
                 kbc_sweep_ratio_text(x->min, lo, sizeof lo),
                 kbc_sweep_ratio_text(x->max, hi, sizeof hi));
    return buf;
}
