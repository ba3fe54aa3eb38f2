/* compare.c -- see compare.h. */
#include "compare.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "results_read.h"
#include "util.h"

void kbc_compare_defaults(kbc_compare_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threshold = 0.05;
    o->alpha = 0.05;
    o->resamples = 2000;
    o->seed = 0x6b62656e6368ULL;
    o->format = KBC_CMP_TABLE;
}

const char *kbc_verdict_name(kbc_verdict v)
{
    switch (v) {
    case KBC_FASTER:
        return "faster";
    case KBC_SLOWER:
        return "slower";
    case KBC_NO_CHANGE:
        return "no change";
    case KBC_UNTESTED:
        break;
    }
    return "untested";
}

/* splitmix64: small, fast, and the same sequence on every machine. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* An index below n; the modulo bias is below n / 2^64, far beneath any
   resampling error. */
static size_t draw(uint64_t *s, size_t n)
{
    return (size_t)(next_u64(s) % (uint64_t)n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of x[0..n) (reordered in place). */
static double median_of(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
    return (n % 2) ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

void kbc_compare_samples(const double *base, size_t nb, const double *newer, size_t nn,
                         const kbc_compare_opts *o, kbc_change *out)
{
    out->base_median = out->new_median = out->ratio = out->lo = out->hi = NAN;
    out->verdict = KBC_UNTESTED;
    if (nb == 0 || nn == 0)
        return;
    double *a = kbc_xmalloc(nb * sizeof *a), *b = kbc_xmalloc(nn * sizeof *b);
    memcpy(a, base, nb * sizeof *a);
    memcpy(b, newer, nn * sizeof *b);
    out->base_median = median_of(a, nb);
    out->new_median = median_of(b, nn);
    if (out->base_median > 0)
        out->ratio = out->new_median / out->base_median;
    /* One sample has no spread to resample, and a zero median no ratio. */
    if (nb < 2 || nn < 2 || !(out->base_median > 0) || !(out->new_median > 0) ||
        o->resamples == 0) {
        free(a);
        free(b);
        return;
    }
    unsigned B = o->resamples;
    double *ratios = kbc_xmalloc(B * sizeof *ratios);
    double *ra = kbc_xmalloc(nb * sizeof *ra), *rb = kbc_xmalloc(nn * sizeof *rb);
    uint64_t s = o->seed;
    for (unsigned k = 0; k < B; k++) {
        for (size_t i = 0; i < nb; i++)
            ra[i] = a[draw(&s, nb)];
        for (size_t i = 0; i < nn; i++)
            rb[i] = b[draw(&s, nn)];
        double ma = median_of(ra, nb), mb = median_of(rb, nn);
        ratios[k] = ma > 0 ? mb / ma : INFINITY;
    }
    qsort(ratios, B, sizeof *ratios, cmp_double);
    /* The percentile interval: the alpha/2 and 1 - alpha/2 quantiles of the
       resampled ratios (lowest and highest index that keeps alpha/2 of the
       resamples outside on each side). */
    size_t lo = (size_t)floor(o->alpha / 2 * B);
    size_t hi = (size_t)ceil((1 - o->alpha / 2) * B);
    if (hi > 0)
        hi--;
    if (lo >= B)
        lo = B - 1;
    if (hi >= B)
        hi = B - 1;
    out->lo = ratios[lo];
    out->hi = ratios[hi];
    if (out->lo > 1 + o->threshold)
        out->verdict = KBC_SLOWER;
    else if (out->hi < 1 - o->threshold)
        out->verdict = KBC_FASTER;
    else
        out->verdict = KBC_NO_CHANGE;
    free(ratios);
    free(ra);
    free(rb);
    free(a);
    free(b);
}

/* ---- the two files ---- */

typedef struct side {
    const char *path;
    json_t *doc;
    kbc_record *recs;
    size_t n;
    char **keys;
} side;

static void side_free(side *s)
{
    for (size_t i = 0; s->keys && i < s->n; i++)
        free(s->keys[i]);
    free(s->keys);
    kbc_records_free(s->recs, s->n);
    json_decref(s->doc);
}

static char *key_of(const kbc_record *r)
{
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    char *k = kbc_xmalloc(need);
    kbc_record_key(r, k, need);
    return k;
}

static int side_load(side *s, const char *path, FILE *err)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    kbc_diag d = {{0}};
    if (kbc_results_read(path, &s->recs, &s->n, &d) != 0) {
        fprintf(err, "kbench: %s\n", d.msg);
        return -1;
    }
    s->doc = json_load_file(path, 0, NULL);
    if (!json_is_object(json_object_get(s->doc, "kbench"))) {
        fprintf(err, "kbench: %s: has no \"kbench\" object, so it is not a kbench results file.\n",
                path);
        return -1;
    }
    s->keys = kbc_xcalloc(s->n ? s->n : 1, sizeof *s->keys);
    for (size_t i = 0; i < s->n; i++)
        s->keys[i] = key_of(&s->recs[i]);
    return 0;
}

static long find_key(const side *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->keys[i], key) == 0)
            return (long)i;
    return -1;
}

/* A JSON scalar as text, "none" for null or absent. */
static void scalar_text(const json_t *v, char *buf, size_t n)
{
    if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    else
        snprintf(buf, n, "none");
}

/* Two experiments' measurement settings are equal when every key is,
   where a file written before batch mode (no "batch") counts as "off". */
static int measure_equal(const json_t *a, const json_t *b)
{
    json_t *x = json_is_object(a) ? json_copy((json_t *)a) : NULL;
    json_t *y = json_is_object(b) ? json_copy((json_t *)b) : NULL;
    if (!x || !y) {
        json_decref(x);
        json_decref(y);
        return json_equal(a, b);
    }
    if (!json_object_get(x, "batch"))
        json_object_set_new(x, "batch", json_string("off"));
    if (!json_object_get(y, "batch"))
        json_object_set_new(y, "batch", json_string("off"));
    int eq = json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return eq;
}

/* The machine and configuration differences, one sentence each, into a
   JSON array of strings. */
static json_t *differences(const side *a, const side *b)
{
    /* optional: a field that older files lack; it is compared only when
       both files have it, so that an old file does not differ in it. */
    static const struct {
        const char *what, *obj, *sub, *key;
        int optional;
    } fields[] = {
        {"kbench version", "kbench", NULL, "version", 0},
        {"kbench revision", "kbench", NULL, "git", 0},
        {"host", "machine", NULL, "host", 0},
        {"GPU", "machine", NULL, "gpu", 0},
        {"compute capability", "machine", NULL, "cc", 0},
        {"driver", "machine", NULL, "driver_version_string", 0},
        {"runtime", "machine", NULL, "runtime_version_string", 0},
        {"SM clock (kHz)", "machine", "clocks_khz", "sm", 0},
        {"memory clock (kHz)", "machine", "clocks_khz", "memory", 0},
        {"maximum SM clock (MHz, NVML)", "machine", "nvml", "sm_max_mhz", 1},
        {"maximum memory clock (MHz, NVML)", "machine", "nvml", "mem_max_mhz", 1},
    };
    json_t *out = json_array();
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        const json_t *x = json_object_get(a->doc, fields[i].obj);
        const json_t *y = json_object_get(b->doc, fields[i].obj);
        if (fields[i].sub) {
            x = json_object_get(x, fields[i].sub);
            y = json_object_get(y, fields[i].sub);
        }
        x = json_object_get(x, fields[i].key);
        y = json_object_get(y, fields[i].key);
        if (fields[i].optional && (!x || !y || json_is_null(x) || json_is_null(y)))
            continue;
        char tx[256], ty[256];
        scalar_text(x, tx, sizeof tx);
        scalar_text(y, ty, sizeof ty);
        if (strcmp(tx, ty) != 0) {
            char *s = kbc_xasprintf("%s differs: '%s' in base, '%s' in new", fields[i].what, tx, ty);
            json_array_append_new(out, json_string(s));
            free(s);
        }
    }
    /* Per experiment of both: the measurement settings and the plugin file. */
    const json_t *ea = json_object_get(json_object_get(a->doc, "config"), "experiments");
    const json_t *eb = json_object_get(json_object_get(b->doc, "config"), "experiments");
    size_t i, k;
    const json_t *x, *y;
    json_array_foreach(ea, i, x)
    {
        const char *name = json_string_value(json_object_get(x, "name"));
        json_array_foreach(eb, k, y)
        {
            const char *nb = json_string_value(json_object_get(y, "name"));
            if (!name || !nb || strcmp(name, nb) != 0)
                continue;
            if (!measure_equal(json_object_get(x, "measure"), json_object_get(y, "measure"))) {
                char *s = kbc_xasprintf("experiment '%s': the measurement settings differ", name);
                json_array_append_new(out, json_string(s));
                free(s);
            }
            char tx[256], ty[256];
            scalar_text(json_object_get(x, "plugin_file"), tx, sizeof tx);
            scalar_text(json_object_get(y, "plugin_file"), ty, sizeof ty);
            if (strcmp(tx, ty) != 0) {
                char *s = kbc_xasprintf("experiment '%s': plugin file differs: '%s' in base, '%s' "
                                        "in new",
                                        name, tx, ty);
                json_array_append_new(out, json_string(s));
                free(s);
            }
        }
    }
    return out;
}

/* ---- output ---- */

static const char *fmt_time(double s, char *buf, size_t n)
{
    if (!isfinite(s)) {
        snprintf(buf, n, "-");
        return buf;
    }
    static const char *const units[] = {"ns", "us", "ms", "s"};
    double v = s * 1e9;
    int u = 0;
    while (u < 3 && fabs(v) >= 1000.0) {
        v /= 1000.0;
        u++;
    }
    snprintf(buf, n, "%.4g %s", v, units[u]);
    return buf;
}

static const char *fmt_pct(double ratio, char *buf, size_t n)
{
    if (!isfinite(ratio))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%+.1f%%", (ratio - 1) * 100);
    return buf;
}

typedef struct cmp_row {
    const char *key;
    kbc_change c;
    const char *note; /* why untested, or NULL */
} cmp_row;

static int ran(const kbc_record *r)
{
    return r->outcome == KBC_PASS || r->outcome == KBC_FAIL;
}

static void print_text(FILE *out, int md, const side *a, const side *b, const kbc_compare_opts *o,
                       const json_t *warn, const cmp_row *rows, size_t nr, char **only_a,
                       size_t na, char **only_b, size_t nb, const size_t *count, int code)
{
    size_t i;
    const json_t *w;
    json_array_foreach(warn, i, w) fprintf(out, "%swarning: %s\n", md ? "> " : "",
                                           json_string_value(w));
    if (json_array_size(warn))
        fprintf(out, "\n");
    double conf = (1 - o->alpha) * 100;
    fprintf(out,
            "%sbase %s, new %s: change of the median time, %.4g%% interval of the ratio of "
            "medians (%u bootstrap resamples), threshold %.4g%%\n",
            md ? "" : "compare: ", a->path, b->path, conf, o->resamples, o->threshold * 100);
    fprintf(out, "\n");
    int kw = 3;
    for (size_t r = 0; r < nr; r++)
        if ((int)strlen(rows[r].key) > kw)
            kw = (int)strlen(rows[r].key);
    char ci_head[32];
    snprintf(ci_head, sizeof ci_head, "%.4g%% interval", conf);
    if (md) {
        fprintf(out, "| row | base | new | change | %s | verdict |\n", ci_head);
        fprintf(out, "|---|---:|---:|---:|---|---|\n");
    } else {
        fprintf(out, "  %-*s  %10s  %10s  %8s  %-18s  %s\n", kw, "row", "base", "new", "change",
                ci_head, "verdict");
    }
    for (size_t r = 0; r < nr; r++) {
        const kbc_change *c = &rows[r].c;
        char t1[32], t2[32], ch[32], lo[32], hi[32], ci[80], verdict[200];
        fmt_time(c->base_median, t1, sizeof t1);
        fmt_time(c->new_median, t2, sizeof t2);
        fmt_pct(c->ratio, ch, sizeof ch);
        if (isfinite(c->lo))
            snprintf(ci, sizeof ci, "[%s, %s]", fmt_pct(c->lo, lo, sizeof lo),
                     fmt_pct(c->hi, hi, sizeof hi));
        else
            snprintf(ci, sizeof ci, "-");
        if (rows[r].note)
            snprintf(verdict, sizeof verdict, "untested: %s", rows[r].note);
        else
            snprintf(verdict, sizeof verdict, "%s", kbc_verdict_name(c->verdict));
        if (md)
            fprintf(out, "| `%s` | %s | %s | %s | %s | %s%s%s |\n", rows[r].key, t1, t2, ch, ci,
                    c->verdict == KBC_SLOWER ? "**" : "", verdict,
                    c->verdict == KBC_SLOWER ? "**" : "");
        else
            fprintf(out, "  %-*s  %10s  %10s  %8s  %-18s  %s\n", kw, rows[r].key, t1, t2, ch, ci,
                    verdict);
    }
    if (na || nb)
        fprintf(out, "\n");
    for (size_t k = 0; k < na; k++)
        fprintf(out, "%sonly in base: %s%s%s\n", md ? "- " : "", md ? "`" : "", only_a[k],
                md ? "`" : "");
    for (size_t k = 0; k < nb; k++)
        fprintf(out, "%sonly in new: %s%s%s\n", md ? "- " : "", md ? "`" : "", only_b[k],
                md ? "`" : "");
    fprintf(out,
            "\nsummary: %zu slower, %zu faster, %zu no change, %zu untested, %zu only in base, "
            "%zu only in new; exit code %d\n",
            count[KBC_SLOWER], count[KBC_FASTER], count[KBC_NO_CHANGE], count[KBC_UNTESTED], na,
            nb, code);
}

static json_t *num_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static void print_json(FILE *out, const side *a, const side *b, const kbc_compare_opts *o,
                       json_t *warn, const cmp_row *rows, size_t nr, char **only_a, size_t na,
                       char **only_b, size_t nb, const size_t *count, int code)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "base", json_string(a->path));
    json_object_set_new(doc, "new", json_string(b->path));
    json_object_set_new(doc, "threshold", json_real(o->threshold));
    json_object_set_new(doc, "alpha", json_real(o->alpha));
    json_object_set_new(doc, "resamples", json_integer(o->resamples));
    json_object_set_new(doc, "warnings", json_incref(warn));
    json_t *rs = json_array();
    for (size_t r = 0; r < nr; r++) {
        const kbc_change *c = &rows[r].c;
        json_t *x = json_object();
        json_object_set_new(x, "key", json_string(rows[r].key));
        json_object_set_new(x, "base_median_s", num_or_null(c->base_median));
        json_object_set_new(x, "new_median_s", num_or_null(c->new_median));
        json_object_set_new(x, "ratio", num_or_null(c->ratio));
        json_object_set_new(x, "ratio_low", num_or_null(c->lo));
        json_object_set_new(x, "ratio_high", num_or_null(c->hi));
        json_object_set_new(x, "verdict", json_string(kbc_verdict_name(c->verdict)));
        json_object_set_new(x, "note", rows[r].note ? json_string(rows[r].note) : json_null());
        json_array_append_new(rs, x);
    }
    json_object_set_new(doc, "rows", rs);
    json_t *oa = json_array(), *ob = json_array();
    for (size_t k = 0; k < na; k++)
        json_array_append_new(oa, json_string(only_a[k]));
    for (size_t k = 0; k < nb; k++)
        json_array_append_new(ob, json_string(only_b[k]));
    json_object_set_new(doc, "only_in_base", oa);
    json_object_set_new(doc, "only_in_new", ob);
    json_t *s = json_object();
    json_object_set_new(s, "slower", json_integer((json_int_t)count[KBC_SLOWER]));
    json_object_set_new(s, "faster", json_integer((json_int_t)count[KBC_FASTER]));
    json_object_set_new(s, "no_change", json_integer((json_int_t)count[KBC_NO_CHANGE]));
    json_object_set_new(s, "untested", json_integer((json_int_t)count[KBC_UNTESTED]));
    json_object_set_new(doc, "summary", s);
    json_object_set_new(doc, "exit_code", json_integer(code));
    json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    fputc('\n', out);
    json_decref(doc);
}

int kbc_cmd_compare(const char *base_path, const char *new_path, const kbc_compare_opts *o,
                    FILE *out, FILE *err)
{
    side a, b;
    if (side_load(&a, base_path, err) != 0) {
        side_free(&a);
        return KBC_EXIT_USAGE;
    }
    if (side_load(&b, new_path, err) != 0) {
        side_free(&a);
        side_free(&b);
        return KBC_EXIT_USAGE;
    }
    json_t *warn = differences(&a, &b);
    cmp_row *rows = kbc_xcalloc(a.n ? a.n : 1, sizeof *rows);
    char **only_a = kbc_xcalloc(a.n ? a.n : 1, sizeof *only_a);
    char **only_b = kbc_xcalloc(b.n ? b.n : 1, sizeof *only_b);
    size_t nr = 0, na = 0, nb = 0, count[4] = {0}, lost_new = 0;
    for (size_t i = 0; i < a.n; i++) {
        long j = find_key(&b, a.keys[i]);
        if (j < 0) {
            only_a[na++] = a.keys[i];
            continue;
        }
        const kbc_record *x = &a.recs[i], *y = &b.recs[j];
        cmp_row *r = &rows[nr++];
        r->key = a.keys[i];
        if (!ran(x) || !ran(y)) {
            kbc_compare_samples(NULL, 0, NULL, 0, o, &r->c);
            r->note = !ran(x) ? "did not run in base" : "did not run in new";
            /* A new row that crashed or timed out is a failure of the new
               run, not a row without a verdict: it fails the compare. */
            if (y->outcome == KBC_CRASHED || y->outcome == KBC_TIMEOUT) {
                r->note = y->outcome == KBC_CRASHED ? "crashed in new" : "timed out in new";
                lost_new++;
            }
        } else {
            kbc_compare_samples(x->samples, x->n_samples, y->samples, y->n_samples, o, &r->c);
            if (r->c.verdict == KBC_UNTESTED)
                r->note = (x->n_samples < 2 || y->n_samples < 2)
                              ? "fewer than 2 samples on a side"
                              : "a median of zero";
        }
        count[r->c.verdict]++;
    }
    for (size_t j = 0; j < b.n; j++)
        if (find_key(&a, b.keys[j]) < 0)
            only_b[nb++] = b.keys[j];
    int code = count[KBC_SLOWER] || lost_new ? KBC_EXIT_FAILED : KBC_EXIT_OK;
    if (o->format == KBC_CMP_JSON)
        print_json(out, &a, &b, o, warn, rows, nr, only_a, na, only_b, nb, count, code);
    else
        print_text(out, o->format == KBC_CMP_MARKDOWN, &a, &b, o, warn, rows, nr, only_a, na,
                   only_b, nb, count, code);
    json_decref(warn);
    free(rows);
    free(only_a);
    free(only_b);
    side_free(&a);
    side_free(&b);
    return code;
}
