/*
 * report_csv.c -- one line per row, for spreadsheets and scripts.
 *
 * The columns are fixed when the run begins: experiment, plugin, point,
 * then one column per distinct parameter name over every experiment of the
 * plan (so that experiments of different families share one file), then the
 * measurements.  Fields are quoted as RFC 4180 says (only when they hold a
 * comma, a quote or a line break; quotes doubled), text that a spreadsheet
 * would take for a formula is neutralised (put_field), lines end in LF, a NaN is
 * an empty field and numbers carry 9 significant digits.  The file is
 * written after every point so that a crash later loses nothing written:
 * each point's rows are gathered in memory and written whole, and a write
 * that fails cuts the file back to its last whole row (kbc_write_whole).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "text.h"
#include "util.h"

typedef struct csv_ctx {
    FILE *f;       /* the text of one begin() or point(), in memory      */
    char *text;    /* f's buffer (open_memstream)                         */
    size_t n_text;
    int fd;        /* the file                                            */
    int64_t end;   /* where its last whole row ends                       */
    size_t rows;   /* rows in the file                                    */
    char *path;
    char **params; /* distinct parameter names, in order of first use */
    size_t n_params;
    int failed;      /* a write failed: nothing more is written          */
    char why[1200];  /* its sentence (error())                           */
} csv_ctx;

/* The measurement columns after the parameters. */
static const char *const tail_columns[] = {
    "variant", "backend", "flags", "device", "cache", "status", "reason", "integrity", "runs", "median_s",
    "min_s", "max_s", "mean_s", "stddev_s", "bytes_read", "bytes_written", "flops", "items",
    "gbps", "gflops", "items_per_s", "ceiling", "ceiling_gbps", "pct_ceiling", "peak",
    "peak_gflops", "pct_peak", "speedup_baseline", "speedup_cpu", "speedup_reference",
    "check_measure", "check_error", "check_tolerance", "batch", "batch_how", "batch_note", "sm_mhz_min",
    "sm_mhz_max", "mem_mhz_min", "temp_c_max", "power_w_max", "clock_reasons", "throttled",
    "low_clock", "energy", "energy_why", "j_per_run", "j_lo", "j_hi", "watts", "idle_w",
    "power_limit_w", "gb_per_j", "gflops_per_j", "energy_windows", "energy_throttled_windows",
    "energy_throttled_s", "energy_note", "points", "ignores", "key"};
static const char *const head_columns[] = {"experiment", "plugin", "point"};

/* Writes one field, preceded by a comma unless it opens the line, through
   kbc_text_csv (quoting, formulas neutralised). */
static void put_field(FILE *f, int first, const char *s)
{
    if (!first)
        fputc(',', f);
    kbc_text_csv(f, s);
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

/* Notes the first failure's sentence, for error(). */
static int csv_fail(csv_ctx *c, int err)
{
    if (!c->failed && c->rows == 0)
        snprintf(c->why, sizeof c->why, "cannot write %s: %s; it holds no row", c->path,
                 strerror(err));
    else if (!c->failed)
        snprintf(c->why, sizeof c->why, "cannot write %s: %s; it ends with its last whole row "
                 "(%zu row%s)", c->path, strerror(err), c->rows, c->rows == 1 ? "" : "s");
    c->failed = 1;
    return -1;
}

/* Starts gathering the text of one begin() or point() in memory. */
static int csv_open(csv_ctx *c)
{
    if (c->failed)
        return -1;
    c->f = open_memstream(&c->text, &c->n_text);
    return c->f ? 0 : csv_fail(c, errno);
}

/* Writes what was gathered (rows lines) to the file whole, or leaves the
   file at its last whole row. */
static int csv_check(csv_ctx *c, size_t rows)
{
    int bad = fclose(c->f) != 0;
    int err = errno;
    c->f = NULL;
    if (!bad && kbc_write_whole(c->fd, &c->end, c->text, c->n_text) != 0) {
        bad = 1;
        err = errno;
    }
    free(c->text);
    c->text = NULL;
    c->n_text = 0;
    if (bad)
        return csv_fail(c, err);
    c->rows += rows;
    return 0;
}

static const char *csv_error(void *vctx)
{
    csv_ctx *c = vctx;
    return c->failed ? c->why : NULL;
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
    if (csv_open(c) != 0)
        return -1;
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
    return csv_check(c, 0);
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
    put_field(f, 0, r->integrity);
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
    /* Energy (docs/output.md, "Energy"): empty when the experiment did
       not ask for it. */
    const kbc_rec_energy *en = &r->energy;
    put_field(f, 0, en->requested ? kbc_energy_status_name((int)en->status) : "");
    put_field(f, 0, en->why);
    put_double(f, en->j_per_run);
    put_double(f, en->j_lo);
    put_double(f, en->j_hi);
    put_double(f, en->watts);
    put_double(f, en->idle_w);
    put_double(f, en->power_limit_w);
    put_double(f, en->gb_per_j);
    put_double(f, en->gflops_per_j);
    if (en->status == KBC_ENERGY_MEASURED)
        fprintf(f, ",%u,%u", en->windows, en->throttled_windows);
    else
        fputs(",,", f);
    put_double(f, en->throttled_s);
    put_field(f, 0, en->note);
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
    if (csv_open(c) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        csv_row(c, &rows[i]);
    return csv_check(c, n);
}

static int csv_end(void *vctx, int exit_code)
{
    csv_ctx *c = vctx;
    (void)exit_code;
    if (c->failed)
        return -1;
    /* Every row is in the file already; closing is the last chance for a
       file system that reports errors late (NFS) to say so. */
    int fd = c->fd;
    c->fd = -1;
    if (close(fd) != 0)
        return csv_fail(c, errno);
    return 0;
}

static void csv_destroy(void *vctx)
{
    csv_ctx *c = vctx;
    if (c->f)
        fclose(c->f);
    free(c->text);
    if (c->fd >= 0)
        close(c->fd);
    for (size_t i = 0; i < c->n_params; i++)
        free(c->params[i]);
    free(c->params);
    free(c->path);
    free(c);
}

int kbc_report_csv(const char *path, kbc_sink *sink, kbc_diag *d)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        kbc_diag_set(d, "cannot write %s: %s.", path, strerror(errno));
        return -1;
    }
    csv_ctx *c = kbc_xcalloc(1, sizeof *c);
    c->fd = fd;
    c->path = kbc_xstrdup(path);
    *sink = (kbc_sink){.ctx = c,
                       .begin = csv_begin,
                       .point = csv_point,
                       .end = csv_end,
                       .destroy = csv_destroy,
                       .error = csv_error};
    return 0;
}
