/* chart.c -- see chart.h. */
#include "chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- the rate: the side of the roofline that binds ---------------------
 *
 * GFLOP/s where the rows come nearer their compute ceiling than their
 * memory one (matmul: 70% of FP32 against 2% of the bandwidth), or, where
 * no ceiling is known (CPU rows), where they do at least
 * KBC_COMPUTE_INTENSITY flops per byte (matmul on the CPU as on the GPU);
 * items per second where the plugin names its items other than
 * "elements" (sort: keys/s, which a sort of several passes is judged in);
 * GB/s where the rows move bytes (reduce, transpose, and files written
 * before compute ceilings existed), else GFLOP/s, else items per second.
 * Every row of the chart votes, run or not.  Tune's rate is the same
 * (kbc_rate_pick), so that a candidate reads as its row does. */

typedef struct rate_votes {
    int any_gbps, any_gflops, any_items, named_items;
    double best_mem, best_compute; /* highest % of each ceiling seen */
    double flops, bytes;           /* summed over the rows that count flops */
} rate_votes;

static void rate_vote(rate_votes *v, const kbc_record *r)
{
    v->any_gbps |= isfinite(r->gbps) && r->gbps > 0;
    v->any_gflops |= isfinite(r->gflops) && r->gflops > 0;
    v->any_items |= r->work.items > 0;
    v->named_items |= r->item_name[0] && strcmp(r->item_name, "elements") != 0;
    if (isfinite(r->pct_ceiling) && r->pct_ceiling > v->best_mem)
        v->best_mem = r->pct_ceiling;
    if (isfinite(r->pct_peak) && r->pct_peak > v->best_compute)
        v->best_compute = r->pct_peak;
    if (isfinite(r->work.flops) && r->work.flops > 0) {
        v->flops += r->work.flops;
        v->bytes += (double)r->work.bytes_read + (double)r->work.bytes_written;
    }
}

static kbc_rate rate_pick(const rate_votes *v)
{
    int ceilings = v->best_mem > 0 || v->best_compute > 0;
    if (v->any_gflops && (ceilings ? v->best_compute > v->best_mem
                                   : v->flops >= KBC_COMPUTE_INTENSITY * v->bytes))
        return KBC_RATE_GFLOPS;
    if (v->named_items && v->any_items)
        return KBC_RATE_ITEMS;
    return v->any_gbps ? KBC_RATE_GBPS : v->any_gflops ? KBC_RATE_GFLOPS : KBC_RATE_ITEMS;
}

kbc_rate kbc_rate_pick(const kbc_record *rows, size_t n)
{
    rate_votes votes = {0};
    for (size_t i = 0; i < n; i++)
        rate_vote(&votes, &rows[i]);
    return rate_pick(&votes);
}

kbc_rate kbc_rate_pick_of(const kbc_record *const *rows, size_t n)
{
    rate_votes votes = {0};
    for (size_t i = 0; i < n; i++)
        rate_vote(&votes, rows[i]);
    return rate_pick(&votes);
}

static double rate_of(const kbc_record *r, kbc_rate k)
{
    return k == KBC_RATE_GBPS ? r->gbps : k == KBC_RATE_GFLOPS ? r->gflops : r->items_per_s;
}

const char *kbc_rate_unit(kbc_rate k, const char *item_name)
{
    if (k == KBC_RATE_GBPS)
        return "B/s";
    if (k == KBC_RATE_GFLOPS)
        return "FLOP/s";
    if (!item_name || !item_name[0] || strlen(item_name) > 20)
        return "items/s";
    /* The names a run meets are few: each is kept once, so that the
       string stays valid (a charts' or tune's unit points at it). */
    static char kept[16][24];
    static size_t n_kept;
    char unit[24];
    snprintf(unit, sizeof unit, "%s/s", item_name);
    for (size_t i = 0; i < n_kept; i++)
        if (strcmp(kept[i], unit) == 0)
            return kept[i];
    if (n_kept == sizeof kept / sizeof *kept)
        return "items/s";
    snprintf(kept[n_kept], sizeof kept[n_kept], "%s", unit);
    return kept[n_kept++];
}

/* ---- the metric ------------------------------------------------------------ */

static const char *const metric_names[KBC_N_METRICS] = {"rate", "time", "energy", "efficiency"};

const char *kbc_chart_metric_name(kbc_chart_metric m)
{
    return (int)m >= 0 && m < KBC_N_METRICS ? metric_names[m] : "rate";
}

int kbc_chart_metric_parse(const char *name)
{
    for (int i = 0; name && i < KBC_N_METRICS; i++)
        if (strcmp(name, metric_names[i]) == 0)
            return i;
    return -1;
}

int kbc_chart_metric_energy(kbc_chart_metric m)
{
    return m == KBC_METRIC_ENERGY || m == KBC_METRIC_EFFICIENCY;
}

/* The work of one run per joule of joules, on the rate's side of the
   roofline: GB/J and GFLOP/J as the measurement computed them (record.h),
   items/J from the declared items. */
static double per_joule(const kbc_record *r, kbc_rate k, double joules)
{
    if (!(joules > 0))
        return NAN;
    double bytes = (double)r->work.bytes_read + (double)r->work.bytes_written;
    double work = k == KBC_RATE_GBPS     ? bytes / 1e9
                  : k == KBC_RATE_GFLOPS ? r->work.flops / 1e9
                                         : (double)r->work.items;
    return work > 0 ? work / joules : NAN;
}

/* ---- the y axis ---------------------------------------------------------- */

/* The row's value before scaling; NaN where it has none. */
static double y_raw(const kbc_chart *c, const kbc_record *r)
{
    switch (c->metric) {
    case KBC_METRIC_TIME:
        return r->time.median;
    case KBC_METRIC_ENERGY:
        return kbc_record_has_energy(r) ? r->energy.j_per_run : NAN;
    case KBC_METRIC_EFFICIENCY:
        return kbc_record_has_energy(r) ? per_joule(r, c->rate, r->energy.j_per_run) : NAN;
    case KBC_METRIC_RATE:
        break;
    }
    return rate_of(r, c->rate);
}

double kbc_chart_value(const kbc_chart *c, const kbc_record *r)
{
    return kbc_record_ran(r) ? y_raw(c, r) : NAN;
}

/* The row's fastest and slowest run on the y axis (the min-max band):
   the rate scales with the inverse of the time; for the energy metrics,
   its lowest and highest window (the work per joule scales with the
   inverse of the joules). */
static void y_range(const kbc_chart *c, const kbc_record *r, double *lo, double *hi)
{
    const kbc_stats *t = &r->time;
    if (kbc_chart_metric_energy(c->metric)) {
        const kbc_rec_energy *e = &r->energy;
        double jmin = INFINITY, jmax = -INFINITY;
        for (uint32_t w = 0; w < e->windows && w < KBC_ENERGY_MAX_KEPT; w++) {
            jmin = fmin(jmin, e->window_j[w]);
            jmax = fmax(jmax, e->window_j[w]);
        }
        int known = isfinite(jmin) && jmin > 0;
        *lo = !known ? NAN : c->metric == KBC_METRIC_ENERGY ? jmin : per_joule(r, c->rate, jmax);
        *hi = !known ? NAN : c->metric == KBC_METRIC_ENERGY ? jmax : per_joule(r, c->rate, jmin);
    } else if (c->metric == KBC_METRIC_TIME) {
        *lo = t->min;
        *hi = t->max;
    } else {
        double v = rate_of(r, c->rate);
        *lo = t->max > 0 ? v * t->median / t->max : NAN;
        *hi = t->min > 0 ? v * t->median / t->min : NAN;
    }
}

/* The unit from the largest value to be drawn (in GB/s, GFLOP/s, items/s,
   seconds, joules, GB/J, GFLOP/J or items/J), so that the axis reads 1 to
   999: 1.2 TB/s, 46 TFLOP/s, 3.4 Gitems/s, 120 us, 3.4 mJ, 4.1 GB/J. */
static void y_unit(kbc_chart *c)
{
    static const struct {
        double at;
        const char *prefix;
    } si[] = {{1e-9, "n"}, {1e-6, "u"}, {1e-3, "m"}, {1, ""}, {1e3, "k"}, {1e6, "M"},
              {1e9, "G"},  {1e12, "T"}, {1e15, "P"}};
    /* Rates are counted in GB/s and GFLOP/s (1e9), items in items/s (1),
       time in seconds (1), energy in joules (1), and the work per joule as
       the rate's work (GB, GFLOP: 1e9; items: 1). */
    int time = c->metric == KBC_METRIC_TIME, energy = c->metric == KBC_METRIC_ENERGY;
    double base = time || energy || c->rate == KBC_RATE_ITEMS ? 1 : 1e9;
    double v = c->largest * base;
    size_t n = sizeof si / sizeof *si;
    int min_k = time || energy ? 0 : 3; /* rates: no smaller prefix than none */
    int max_k = time ? 3 : energy ? 4 : (int)n - 1;
    size_t k = (size_t)min_k;
    while ((int)k < max_k && isfinite(v) && v >= si[k + 1].at)
        k++;
    c->scale = base / si[k].at;
    const char *work = c->rate == KBC_RATE_GBPS     ? "B"
                       : c->rate == KBC_RATE_GFLOPS ? "FLOP"
                       : c->first && c->first->item_name[0] && strlen(c->first->item_name) < 12
                           ? c->first->item_name
                           : "items";
    if (time || energy)
        snprintf(c->unit, sizeof c->unit, "%s%s", si[k].prefix, time ? "s" : "J");
    else
        snprintf(c->unit, sizeof c->unit, "%s%s/%s", si[k].prefix, work,
                 c->metric == KBC_METRIC_EFFICIENCY ? "J" : "s");
}

char *kbc_chart_ylabel(const kbc_chart *c)
{
    switch (c->metric) {
    case KBC_METRIC_TIME:
        return kbc_xasprintf("median time (%s, lower is better)", c->unit);
    case KBC_METRIC_ENERGY:
        return kbc_xasprintf("energy per run (%s, lower is better)", c->unit);
    case KBC_METRIC_EFFICIENCY:
        return kbc_xasprintf("energy efficiency (%s%s)", c->unit,
                             c->rate == KBC_RATE_GBPS ? ", bytes read + written per joule" : "");
    case KBC_METRIC_RATE:
        break;
    }
    return kbc_xasprintf("throughput (%s%s)", c->unit,
                         c->rate == KBC_RATE_GBPS ? ", bytes read + written" : "");
}

/* ---- the ceiling ---------------------------------------------------------- */

/* The largest ceiling of the chart's rate among the rows drawn (memory
   ceilings in GB/s, compute ceilings in GFLOP/s). */
static void ceiling_note(kbc_chart *c, const kbc_record *r)
{
    if (c->metric != KBC_METRIC_RATE)
        return;
    if (c->rate == KBC_RATE_GBPS && isfinite(r->ceiling_gbps) && r->ceiling_gbps > c->ceiling) {
        c->ceiling = r->ceiling_gbps;
        c->ceiling_kind = r->ceiling;
    } else if (c->rate == KBC_RATE_GFLOPS && isfinite(r->peak_gflops) &&
               r->peak_gflops > c->ceiling) {
        c->ceiling = r->peak_gflops;
        c->ceiling_kind = r->peak;
    }
}

char *kbc_chart_ceiling_title(const kbc_chart *c)
{
    const char *kind = c->ceiling_kind && c->ceiling_kind[0] ? c->ceiling_kind
                       : c->rate == KBC_RATE_GFLOPS          ? "compute"
                                                             : "bandwidth";
    /* The tensor ceilings are measured with mma.sync (docs/output.md), which
       wgmma kernels pass: the title says so. */
    int mma = strcmp(kind, "tf32") == 0 || strcmp(kind, "bf16") == 0;
    double v = c->ceiling * c->scale;
    return kbc_xasprintf("%s%s ceiling (%.*f %s)", kind, mma ? " mma.sync" : "",
                         v >= 100 ? 0 : v >= 10 ? 1 : 2, v, c->unit);
}

/* ---- the x axis ------------------------------------------------------------ */

/* The scale of the distinct values v[0..n) (ascending): see kbc_x_scale;
   base 2 (pow2) when every value of a log axis is a power of two. */
static kbc_x_scale x_pick(const double *v, size_t n, int *pow2)
{
    *pow2 = 0;
    if (n < 2)
        return KBC_X_LINEAR;
    int geometric = v[0] > 0 && v[n - 1] / v[0] >= 4, spread = 1, p2 = 1;
    for (size_t i = 0; i < n; i++) {
        int e;
        p2 &= v[i] > 0 && frexp(v[i], &e) == 0.5;
        if (i == 0)
            continue;
        geometric &= v[i] >= 1.25 * v[i - 1];
        spread &= v[i] - v[i - 1] >= (v[n - 1] - v[0]) / 50;
    }
    if (geometric) {
        *pow2 = p2;
        return KBC_X_LOG;
    }
    return spread ? KBC_X_LINEAR : KBC_X_SLOTS;
}

size_t kbc_chart_slot(const kbc_chart *c, double x)
{
    size_t slot = 0;
    while (slot + 1 < c->nx && c->xs[slot] != x)
        slot++;
    return slot;
}

int kbc_chart_value_tics(const kbc_chart *c)
{
    return c->x_scale == KBC_X_SLOTS || (c->x_scale == KBC_X_LINEAR && c->nx <= 16);
}

char *kbc_chart_xlabel(const kbc_chart *c)
{
    /* A size may count elements (reduce's n) or be a shape's side
       (matmul's m): the title names its scale, not a unit it cannot know. */
    return kbc_xasprintf("%s%s%s", c->x,
                         c->x_scale == KBC_X_LOG ? (c->x_pow2 ? " (log2 scale)" : " (log scale)")
                                                 : "",
                         c->x_scale == KBC_X_SLOTS ? " (one slot per value)" : "");
}

/* ---- the charts -------------------------------------------------------------- */

int kbc_chart_drawn(const kbc_chart *c)
{
    return c->x ? c->nx > 0 : c->n_bars > 0;
}

static int by_x(const void *a, const void *b)
{
    double x = ((const kbc_chart_point *)a)->x, y = ((const kbc_chart_point *)b)->x;
    return (x > y) - (x < y);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long param_index(const kbc_record *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_params; i++)
        if (strcmp(r->params[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* Whether row r stands for every value of x (a variant that ignores it:
   one row for all the points). */
static int ignores_x(const kbc_record *r, const char *x)
{
    if (r->points <= 1)
        return 0;
    size_t n = strlen(x);
    for (const char *p = r->ignores; *p;) {
        size_t w = strcspn(p, ",");
        if (w == n && strncmp(p, x, n) == 0)
            return 1;
        p += w + (p[w] == ',');
    }
    return 0;
}

/* A drawn point of row r, or 0 when r has none. */
static int point_of(kbc_chart *c, const kbc_record *r, double x, kbc_chart_point *q)
{
    *q = (kbc_chart_point){x, y_raw(c, r), NAN, NAN, r};
    if (!kbc_record_ran(r) || !isfinite(q->y))
        return 0;
    y_range(c, r, &q->lo, &q->hi);
    return 1;
}

static void note_largest(kbc_chart *c, const kbc_chart_point *q, int band)
{
    c->largest = fmax(c->largest, band && isfinite(q->hi) ? fmax(q->y, q->hi) : q->y);
}

/* The line chart of experiment exp's rows in group (its first row first),
   x the swept parameter x. */
static void line_chart(kbc_chart *c, const kbc_record *recs, size_t n, const kbc_chart_opts *o)
{
    const char *x = c->x;
    char g[512];
    rate_votes votes = {0};
    c->lines = kbc_xcalloc(KB_MAX_VARIANTS, sizeof *c->lines);
    for (size_t i = 0; i < n; i++) {
        const kbc_record *r = &recs[i];
        kbc_record_group(r, x, ",", g, sizeof g);
        if (strcmp(r->experiment, c->experiment) != 0 || strcmp(g, c->group) != 0)
            continue;
        rate_vote(&votes, r);
        size_t k = 0;
        while (k < c->n_lines && strcmp(c->lines[k].variant, r->variant) != 0)
            k++;
        if (k == c->n_lines && c->n_lines < KB_MAX_VARIANTS)
            c->lines[c->n_lines++] = (kbc_chart_line){
                .variant = r->variant, .library = (r->flags & KB_VARIANT_LIBRARY) != 0};
    }
    c->rate = rate_pick(&votes);
    c->xs = kbc_xcalloc(n + 1, sizeof *c->xs);
    for (size_t k = 0; k < c->n_lines; k++) {
        kbc_chart_line *l = &c->lines[k];
        l->pts = kbc_xcalloc(n + 1, sizeof *l->pts);
        for (size_t i = 0; i < n; i++) {
            const kbc_record *r = &recs[i];
            kbc_record_group(r, x, ",", g, sizeof g);
            if (strcmp(r->experiment, c->experiment) != 0 || strcmp(g, c->group) != 0 ||
                strcmp(r->variant, l->variant) != 0)
                continue;
            long pi = param_index(r, x);
            kbc_chart_point q;
            if (!point_of(c, r, pi >= 0 ? kbc_param_number(&r->params[pi]) : NAN, &q) ||
                !isfinite(q.x))
                continue;
            ceiling_note(c, r);
            l->flat |= ignores_x(r, x);
            l->pts[l->n++] = q;
            c->xs[c->nx++] = q.x;
            note_largest(c, &q, o->band);
        }
        qsort(l->pts, l->n, sizeof *l->pts, by_x);
    }
    qsort(c->xs, c->nx, sizeof *c->xs, by_value);
    size_t nd = 0;
    for (size_t i = 0; i < c->nx; i++)
        if (nd == 0 || c->xs[i] != c->xs[nd - 1])
            c->xs[nd++] = c->xs[i];
    c->nx = nd;
    c->x_scale = x_pick(c->xs, c->nx, &c->x_pow2);
}

/* The label of the group of point row r: its swept values, or "point<N>"
   when the experiment sweeps nothing. */
static void group_label(const kbc_record *r, char *buf, size_t n)
{
    kbc_record_group(r, NULL, ",", buf, n);
    if (!buf[0])
        snprintf(buf, n, "point%llu", (unsigned long long)r->point + 1);
}

/* The bar chart of rows[0..n), the consecutive rows of one experiment
   that sweeps no number: a group of bars per point.  A chart of one point
   is named by its group, one of several by its experiment alone. */
static void bar_chart(kbc_chart *c, const kbc_record *rows, size_t n, const kbc_chart_opts *o)
{
    c->rate = kbc_rate_pick(rows, n);
    c->rows = kbc_xcalloc(n + 1, sizeof *c->rows);
    c->bars = kbc_xcalloc(n + 1, sizeof *c->bars);
    c->bar_group = kbc_xcalloc(n + 1, sizeof *c->bar_group);
    c->bar_variant = kbc_xcalloc(n + 1, sizeof *c->bar_variant);
    c->group_labels = kbc_xcalloc(n + 1, sizeof *c->group_labels);
    c->variants = kbc_xcalloc(n + 1, sizeof *c->variants);
    for (size_t i = 0; i < n; i++) {
        const kbc_record *r = &rows[i];
        c->rows[c->n_rows++] = r;
        if (i == 0 || r->point != rows[i - 1].point)
            group_label(r, c->group_labels[c->n_groups++], sizeof *c->group_labels);
        size_t v = 0;
        while (v < c->n_variants && strcmp(c->variants[v], r->variant) != 0)
            v++;
        if (v == c->n_variants)
            c->variants[c->n_variants++] = r->variant;
        kbc_chart_point q;
        if (!point_of(c, r, NAN, &q))
            continue;
        note_largest(c, &q, o->band);
        ceiling_note(c, r);
        c->bar_group[c->n_bars] = c->n_groups - 1;
        c->bar_variant[c->n_bars] = v;
        c->bars[c->n_bars++] = q;
        if (r->flags & KB_VARIANT_LIBRARY)
            c->any_library = 1;
        else
            c->any_kernel = 1;
    }
    if (c->n_groups == 1)
        snprintf(c->group, sizeof c->group, "%s", c->group_labels[0]);
}

/* The x of an experiment whose first row is r: its first swept size, else
   its first swept number; NULL when it sweeps none. */
static const char *x_of(const kbc_record *r)
{
    for (uint32_t q = 0; q < r->n_params; q++)
        if (r->params[q].swept && r->params[q].type == KB_PARAM_SIZE)
            return r->params[q].name;
    for (uint32_t q = 0; q < r->n_params; q++)
        if (r->params[q].swept &&
            (r->params[q].type == KB_PARAM_INT || r->params[q].type == KB_PARAM_FLOAT))
            return r->params[q].name;
    return NULL;
}

static kbc_chart *chart_add(kbc_chart **v, size_t *n, const kbc_record *first, const char *x,
                            const kbc_chart_opts *o)
{
    *v = kbc_xrealloc(*v, (*n + 1) * sizeof **v);
    kbc_chart *c = &(*v)[(*n)++];
    *c = (kbc_chart){.experiment = first->experiment, .x = x, .first = first,
                     .metric = o->metric, .ceiling_kind = ""};
    return c;
}

kbc_chart *kbc_charts(const kbc_record *recs, size_t n, const kbc_chart_opts *opt,
                      size_t *n_charts)
{
    kbc_chart_opts none = {0};
    const kbc_chart_opts *o = opt ? opt : &none;
    kbc_chart *v = NULL;
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        const kbc_record *r = &recs[i];
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(recs[k].experiment, r->experiment) == 0;
        if (seen)
            continue;
        const char *x = x_of(r);
        if (!x) {
            /* A bar chart per run of consecutive rows of the experiment. */
            for (size_t a = i; a < n;) {
                size_t b = a;
                while (b < n && strcmp(recs[b].experiment, r->experiment) == 0)
                    b++;
                if (b > a) {
                    kbc_chart *c = chart_add(&v, &nc, &recs[a], NULL, o);
                    bar_chart(c, &recs[a], b - a, o);
                }
                a = b > a ? b : a + 1;
            }
            continue;
        }
        char g[512];
        for (size_t k = i; k < n; k++) {
            if (strcmp(recs[k].experiment, r->experiment) != 0)
                continue;
            kbc_record_group(&recs[k], x, ",", g, sizeof g);
            int done = 0;
            for (size_t j = i; j < k && !done; j++) {
                char h[512];
                kbc_record_group(&recs[j], x, ",", h, sizeof h);
                done = strcmp(recs[j].experiment, r->experiment) == 0 && strcmp(g, h) == 0;
            }
            if (done)
                continue;
            kbc_chart *c = chart_add(&v, &nc, &recs[k], x, o);
            snprintf(c->group, sizeof c->group, "%s", g);
            line_chart(c, recs, n, o);
        }
    }
    for (size_t k = 0; k < nc; k++)
        y_unit(&v[k]);
    *n_charts = nc;
    return v;
}

void kbc_charts_free(kbc_chart *charts, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        kbc_chart *c = &charts[k];
        for (size_t l = 0; l < c->n_lines; l++)
            free(c->lines[l].pts);
        free(c->lines);
        free(c->xs);
        free(c->rows);
        free(c->bars);
        free(c->bar_group);
        free(c->bar_variant);
        free(c->group_labels);
        free(c->variants);
    }
    free(charts);
}
