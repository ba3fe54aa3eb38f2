/*
 * report_csv.c -- one line per row, for spreadsheets and scripts.
 *
 * The columns are fixed when the run begins: experiment, plugin, point,
 * then one column per distinct parameter name over every experiment of the
 * plan (so that experiments of different families share one file), then the
 * measurements.  Fields are quoted as RFC 4180 says (only when they hold a
 * comma, a quote or a line break; quotes doubled), lines end in LF, a NaN is
 * an empty field and numbers carry 9 significant digits.  The file is
 * flushed after every point so that a crash later loses nothing written.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

typedef struct csv_ctx {
    FILE *f;
    char *path;
    char **params; /* distinct parameter names, in order of first use */
    size_t n_params;
    int failed; /* a write failed and was reported; stay quiet after */
} csv_ctx;

/* The measurement columns after the parameters. */
static const char *const tail_columns[] = {
    "variant", "backend", "flags", "device", "cache", "status", "reason", "runs", "median_s",
    "min_s", "max_s", "mean_s", "stddev_s", "bytes_read", "bytes_written", "flops", "items",
    "gbps", "gflops", "items_per_s", "ceiling", "ceiling_gbps", "pct_ceiling", "peak",
    "peak_gflops", "pct_peak", "speedup_baseline", "speedup_cpu", "speedup_reference",
    "check_measure", "check_error", "check_tolerance", "batch", "batch_how", "batch_note", "sm_mhz_min",
    "sm_mhz_max", "mem_mhz_min", "temp_c_max", "power_w_max", "clock_reasons", "throttled",
    "low_clock", "points", "ignores", "key"};
static const char *const head_columns[] = {"experiment", "plugin", "point"};

/* Writes one field, preceded by a comma unless it opens the line. */
static void put_field(FILE *f, int first, const char *s)
{
    if (!first)
        fputc(',', f);
    if (!s)
        return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

static void put_double(FILE *f, double x)
{
    fputc(',', f);
    if (isfinite(x))
        fprintf(f, "%.9g", x);
}

static void put_u64(FILE *f, uint64_t x)
{
    fprintf(f, ",%" PRIu64, x);
}

static int is_fixed_column(const char *name)
{
    for (size_t i = 0; i < sizeof head_columns / sizeof head_columns[0]; i++)
        if (strcmp(name, head_columns[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof tail_columns / sizeof tail_columns[0]; i++)
        if (strcmp(name, tail_columns[i]) == 0)
            return 1;
    return 0;
}

/* Says once, on stderr, that the file could not be written: the sink
   interface has no channel for a sentence, and a silent short file would
   be a wrong answer. */
static int csv_check(csv_ctx *c)
{
    if (fflush(c->f) == 0 && !ferror(c->f))
        return 0;
    if (!c->failed)
        fprintf(stderr, "kbench: cannot write %s: %s.\n", c->path, strerror(errno));
    c->failed = 1;
    return -1;
}

static int csv_begin(void *vctx, const kbc_run_info *info)
{
    csv_ctx *c = vctx;
    size_t cap = 0;
    for (size_t e = 0; e < info->n_exps; e++)
        cap += info->exps[e].n_params;
    c->params = kbc_xcalloc(cap ? cap : 1, sizeof *c->params);
    for (size_t e = 0; e < info->n_exps; e++) {
        const kbc_exp_info *x = &info->exps[e];
        for (size_t i = 0; i < x->n_params; i++) {
            size_t k = 0;
            while (k < c->n_params && strcmp(c->params[k], x->param_names[i]) != 0)
                k++;
            if (k == c->n_params)
                c->params[c->n_params++] = kbc_xstrdup(x->param_names[i]);
        }
    }
    for (size_t i = 0; i < sizeof head_columns / sizeof head_columns[0]; i++)
        put_field(c->f, i == 0, head_columns[i]);
    for (size_t i = 0; i < c->n_params; i++) {
        /* A parameter that shares a name with a fixed column is prefixed,
           so that no two columns carry the same title. */
        if (is_fixed_column(c->params[i])) {
            char buf[256];
            snprintf(buf, sizeof buf, "param_%s", c->params[i]);
            put_field(c->f, 0, buf);
        } else {
            put_field(c->f, 0, c->params[i]);
        }
    }
    for (size_t i = 0; i < sizeof tail_columns / sizeof tail_columns[0]; i++)
        put_field(c->f, 0, tail_columns[i]);
    fputc('\n', c->f);
    return csv_check(c);
}

static void csv_row(csv_ctx *c, const kbc_record *r)
{
    FILE *f = c->f;
    char buf[256];

    put_field(f, 1, r->experiment);
    put_field(f, 0, r->plugin);
    fprintf(f, ",%" PRIu64, r->point);
    for (size_t k = 0; k < c->n_params; k++) {
        const char *text = NULL;
        for (uint32_t i = 0; i < r->n_params; i++)
            if (strcmp(r->params[i].name, c->params[k]) == 0) {
                text = r->params[i].text;
                break;
            }
        put_field(f, 0, text);
    }
    put_field(f, 0, r->variant);
    put_field(f, 0, r->backend == KB_BACKEND_CUDA ? "cuda" : "cpu");
    put_field(f, 0, kbc_flags_text(r->flags, buf, sizeof buf));
    put_field(f, 0, r->device);
    put_field(f, 0, r->cache_cold ? "cold" : "hot");
    put_field(f, 0, kbc_outcome_name((int)r->outcome));
    put_field(f, 0, r->reason);
    fprintf(f, ",%zu", r->time.n);
    put_double(f, r->time.median);
    put_double(f, r->time.min);
    put_double(f, r->time.max);
    put_double(f, r->time.mean);
    put_double(f, r->time.stddev);
    put_u64(f, r->work.bytes_read);
    put_u64(f, r->work.bytes_written);
    put_double(f, r->work.flops);
    put_u64(f, r->work.items);
    put_double(f, r->gbps);
    put_double(f, r->gflops);
    put_double(f, r->items_per_s);
    put_field(f, 0, r->ceiling);
    put_double(f, r->ceiling_gbps);
    put_double(f, r->pct_ceiling);
    put_field(f, 0, r->peak);
    put_double(f, r->peak_gflops);
    put_double(f, r->pct_peak);
    put_double(f, r->speedup_baseline);
    put_double(f, r->speedup_cpu);
    put_double(f, r->speedup_reference);
    /* No measure means verification never ran: the check fields are then
       empty rather than zeros that would read as a perfect result. */
    const char *measure = kbc_check_measure(r);
    if (measure) {
        put_field(f, 0, measure);
        put_double(f, r->check.error);
        put_double(f, r->check.tolerance);
    } else {
        fputs(",,,", f);
    }
    /* batch is empty for a row that was not timed. */
    if (r->time.n > 0)
        fprintf(f, ",%u", r->mode.batch);
    else
        fputc(',', f);
    put_field(f, 0, r->time.n == 0      ? ""
                    : r->mode.batch <= 1 ? "single"
                    : r->mode.graph     ? "graph"
                                        : "loop");
    put_field(f, 0, r->mode.note);
    /* The clock fields are empty where nothing was read. */
    const kbc_rec_clocks *k = &r->clocks;
    unsigned mem_min = 0;
    if (k->before.known & KBC_CLK_MEM)
        mem_min = k->before.mem_mhz;
    if ((k->after.known & KBC_CLK_MEM) && (mem_min == 0 || k->after.mem_mhz < mem_min))
        mem_min = k->after.mem_mhz;
    put_double(f, (k->known & KBC_CLK_SM) ? (double)k->sm_min_mhz : NAN);
    put_double(f, k->n && k->sm_max_mhz ? (double)k->sm_max_mhz : NAN);
    put_double(f, (k->known & KBC_CLK_MEM) ? (double)mem_min : NAN);
    put_double(f, (k->known & KBC_CLK_TEMP) ? (double)k->temp_max_c : NAN);
    put_double(f, (k->known & KBC_CLK_POWER) ? k->power_max_w : NAN);
    put_field(f, 0, (k->known & KBC_CLK_REASONS)
                        ? kbc_clock_reasons_text(k->reasons, "|", buf, sizeof buf)
                        : "");
    put_field(f, 0, k->n ? (k->throttled ? "true" : "false") : "");
    put_field(f, 0, k->n && (k->known & KBC_CLK_SM) && k->sm_max_mhz
                        ? (k->low_clock ? "true" : "false")
                        : "");
    put_u64(f, r->points);
    put_field(f, 0, r->ignores);
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    char *key = kbc_xmalloc(need);
    kbc_record_key(r, key, need);
    put_field(f, 0, key);
    free(key);
    fputc('\n', f);
}

static int csv_point(void *vctx, const kbc_record *rows, size_t n)
{
    csv_ctx *c = vctx;
    if (!c->params)
        return -1; /* begin() never ran, so there is no header to match */
    for (size_t i = 0; i < n; i++)
        csv_row(c, &rows[i]);
    return csv_check(c);
}

static int csv_end(void *vctx, int exit_code)
{
    csv_ctx *c = vctx;
    int rc = csv_check(c);
    if (fclose(c->f) != 0 && rc == 0) {
        if (!c->failed)
            fprintf(stderr, "kbench: cannot write %s: %s.\n", c->path, strerror(errno));
        c->failed = 1;
        rc = -1;
    }
    c->f = NULL;
    return rc;
}

static void csv_destroy(void *vctx)
{
    csv_ctx *c = vctx;
    if (c->f)
        fclose(c->f);
    for (size_t i = 0; i < c->n_params; i++)
        free(c->params[i]);
    free(c->params);
    free(c->path);
    free(c);
}

int kbc_report_csv(const char *path, kbc_sink *sink, kbc_diag *d)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        kbc_diag_set(d, "cannot write %s: %s.", path, strerror(errno));
        return -1;
    }
    csv_ctx *c = kbc_xcalloc(1, sizeof *c);
    c->f = f;
    c->path = kbc_xstrdup(path);
    sink->ctx = c;
    sink->begin = csv_begin;
    sink->point = csv_point;
    sink->end = csv_end;
    sink->destroy = csv_destroy;
    return 0;
}
