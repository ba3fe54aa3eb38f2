/*
 * report_table.c -- the terminal table: a machine line, then for each point
 * a heading naming the experiment and its swept parameters, a line of
 * column titles and one line per variant, and at the end a summary of the
 * outcomes.  Plain ASCII and fixed widths, so that the output reads the
 * same in a terminal, a log file or a pasted bug report.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "sweep.h"
#include "util.h"

typedef struct table_ctx {
    FILE *out;
    unsigned counts[4]; /* rows per outcome, indexed by kbc_outcome */
    int began;
} table_ctx;

/* Widths of the fixed columns.  A time such as "123.4 ms" takes 8. */
enum { W_BACKEND = 7, W_STATUS = 7, W_TIME = 9, W_RUNS = 5, W_GBPS = 8, W_PCT = 6,
       W_GFLOPS = 9, W_SPEEDUP = 8 };

/* A duration in seconds with a unit chosen so that the number lies in
   [1, 1000), printed with at most 4 significant digits: "123.4 us". */
static const char *fmt_time(double s, char *buf, size_t n)
{
    if (!isfinite(s) || s < 0) {
        snprintf(buf, n, "-");
        return buf;
    }
    static const char *const units[] = {"ns", "us", "ms", "s"};
    double v = s * 1e9;
    int u = 0;
    /* Rounding to 4 digits can carry 999.96 up to 1000, so step at the
       rounded value rather than the raw one. */
    while (u < 3 && v >= 999.95) {
        v /= 1000.0;
        u++;
    }
    snprintf(buf, n, "%.4g %s", v, units[u]);
    return buf;
}

static const char *fmt_fixed(double x, int digits, const char *suffix, char *buf, size_t n)
{
    if (!isfinite(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f%s", digits, x, suffix);
    return buf;
}

/* The check as "rel 2.1e-07 <= 4.3e-05"; ">" when it failed.  Counts such
   as mismatches print as integers. */
static const char *fmt_check(const kbc_row *r, char *buf, size_t n)
{
    const kb_check *c = &r->check;
    const char *measure = kbc_check_measure(r);
    if (!measure) {
        snprintf(buf, n, "-");
        return buf;
    }
    char e[32], t[32];
    if (isfinite(c->error) && c->error == floor(c->error) && fabs(c->error) < 1e9)
        snprintf(e, sizeof e, "%.0f", c->error);
    else
        snprintf(e, sizeof e, "%.2g", c->error);
    if (isfinite(c->tolerance) && c->tolerance == floor(c->tolerance) &&
        fabs(c->tolerance) < 1e9)
        snprintf(t, sizeof t, "%.0f", c->tolerance);
    else
        snprintf(t, sizeof t, "%.2g", c->tolerance);
    snprintf(buf, n, "%s %s %s %s", measure, e, c->passed ? "<=" : ">", t);
    return buf;
}

/* A compact spelling of a size when it is exact: 2^k for powers of two
   from 1024 up, else 3K, 5M, 7G.  Empty when there is none. */
static const char *size_compact(uint64_t u, char *buf, size_t n)
{
    buf[0] = '\0';
    if (u >= 1024 && (u & (u - 1)) == 0) {
        int k = 0;
        while ((1ULL << k) != u)
            k++;
        snprintf(buf, n, "2^%d", k);
    } else if (u >= 1024) {
        static const char suffix[] = "KMGTPE";
        int s = -1;
        while (u >= 1024 && u % 1024 == 0) {
            u /= 1024;
            s++;
        }
        if (s >= 0)
            snprintf(buf, n, "%" PRIu64 "%c", u, suffix[s]);
    }
    return buf;
}

/* The width of the variant column for an experiment: its longest selected
   variant name, so that every point of it lines up. */
static int variant_width(const kbc_experiment *e)
{
    const kb_plugin *p = e->plugin->desc;
    int w = (int)strlen("variant");
    for (uint32_t i = 0; i < e->n_variants; i++) {
        uint32_t v = e->variants[i];
        if (v < p->n_variants) {
            int l = (int)strlen(p->variants[v].name);
            if (l > w)
                w = l;
        }
    }
    return w;
}

static int table_begin(void *vctx, const kbc_run_info *info)
{
    table_ctx *c = vctx;
    const kbc_machine *m = info->machine;
    c->began = 1;
    if (!m) {
        fprintf(c->out, "machine: unknown\n");
    } else if (!m->has_gpu) {
        fprintf(c->out, "machine: %s, %d CPU threads; no GPU: %s\n", m->host, m->cpu_threads,
                m->no_gpu_reason[0] ? m->no_gpu_reason : "no reason given");
    } else {
        fprintf(c->out,
                "machine: %s, %d CPU threads; GPU %s (cc %d.%d, %d SMs), driver %d.%d, "
                "runtime %d.%d",
                m->host, m->cpu_threads, m->name, m->cc_major, m->cc_minor, m->sm_count,
                m->driver_version / 1000, m->driver_version % 1000 / 10,
                m->runtime_version / 1000, m->runtime_version % 1000 / 10);
        if (info->copy_gbps > 0)
            fprintf(c->out, ", copy %.1f GB/s\n", info->copy_gbps);
        else
            fprintf(c->out, ", copy ceiling not measured\n");
    }
    fflush(c->out);
    return ferror(c->out) ? -1 : 0;
}

/* The heading of a point: the experiment, the point's number, and the
   parameters that the experiment sweeps (all of them when it sweeps none,
   so that the line still says what ran). */
static void print_heading(FILE *out, const kbc_row *r)
{
    const kbc_experiment *e = r->exp;
    const kb_plugin *p = e->plugin->desc;
    fprintf(out, "%s  point %" PRIu64 "/%" PRIu64, e->name, r->point + 1, e->n_points);
    int swept = 0;
    for (uint32_t i = 0; i < p->n_params && e->axes; i++)
        if (e->axes[i].n > 1)
            swept++;
    for (uint32_t i = 0; i < p->n_params && r->values; i++) {
        if (swept && !(e->axes && e->axes[i].n > 1))
            continue;
        char buf[128], compact[32];
        kbc_value_format(&p->params[i], r->values[i], buf, sizeof buf);
        fprintf(out, "  %s=%s", p->params[i].name, buf);
        if (p->params[i].type == KB_PARAM_SIZE &&
            size_compact(r->values[i].u, compact, sizeof compact)[0])
            fprintf(out, " (%s)", compact);
    }
    fputc('\n', out);
}

static int table_point(void *vctx, const kbc_row *rows, size_t n)
{
    table_ctx *c = vctx;
    if (n == 0)
        return 0;
    FILE *out = c->out;
    const kbc_experiment *e = rows[0].exp;
    const kb_plugin *p = e->plugin->desc;

    /* Which optional columns this point needs: decided from the
       experiment (its backends, its reference) and the point's work, never
       from which rows happened to succeed, so that columns stay put. */
    int has_cuda = 0, has_cpu = 0, has_flops = 0;
    for (uint32_t i = 0; i < e->n_variants; i++) {
        uint32_t v = e->variants[i];
        if (v < p->n_variants && p->variants[v].backend == KB_BACKEND_CUDA)
            has_cuda = 1;
        if (v < p->n_variants && p->variants[v].backend == KB_BACKEND_CPU)
            has_cpu = 1;
    }
    for (size_t i = 0; i < n; i++)
        if (rows[i].work.flops > 0)
            has_flops = 1;
    int has_ref = e->reference >= 0;
    int wv = variant_width(e);

    print_heading(out, &rows[0]);
    fprintf(out, "  %-*s %-*s %-*s %*s %*s %*s %*s %*s", wv, "variant", W_BACKEND, "backend",
            W_STATUS, "status", W_TIME, "median", W_TIME, "min", W_TIME, "max", W_RUNS, "runs",
            W_GBPS, "GB/s");
    if (has_cuda)
        fprintf(out, " %*s", W_PCT, "%copy");
    if (has_flops)
        fprintf(out, " %*s", W_GFLOPS, "GFLOP/s");
    fprintf(out, " %*s", W_SPEEDUP, "vs base");
    if (has_cpu)
        fprintf(out, " %*s", W_SPEEDUP, "vs cpu");
    if (has_ref)
        fprintf(out, " %*s", W_SPEEDUP, "vs ref");
    fprintf(out, "  check\n");

    for (size_t i = 0; i < n; i++) {
        const kbc_row *r = &rows[i];
        const char *vname = r->variant < p->n_variants ? p->variants[r->variant].name : "?";
        int cuda = r->variant < p->n_variants &&
                   p->variants[r->variant].backend == KB_BACKEND_CUDA;
        char t1[32], t2[32], t3[32], runs[32], buf[64], chk[128];
        if (r->time.n > 0)
            snprintf(runs, sizeof runs, "%zu", r->time.n);
        else
            snprintf(runs, sizeof runs, "-");
        fprintf(out, "  %-*s %-*s %-*s %*s %*s %*s %*s", wv, vname, W_BACKEND,
                cuda ? "cuda" : "cpu", W_STATUS, kbc_outcome_name((int)r->outcome), W_TIME,
                fmt_time(r->time.median, t1, sizeof t1), W_TIME,
                fmt_time(r->time.min, t2, sizeof t2), W_TIME,
                fmt_time(r->time.max, t3, sizeof t3), W_RUNS, runs);
        fprintf(out, " %*s", W_GBPS, fmt_fixed(r->gbps, 1, "", buf, sizeof buf));
        if (has_cuda)
            fprintf(out, " %*s", W_PCT,
                    fmt_fixed(cuda ? r->pct_copy : NAN, 0, "%", buf, sizeof buf));
        if (has_flops)
            fprintf(out, " %*s", W_GFLOPS, fmt_fixed(r->gflops, 1, "", buf, sizeof buf));
        fprintf(out, " %*s", W_SPEEDUP, fmt_fixed(r->speedup_baseline, 2, "x", buf, sizeof buf));
        if (has_cpu)
            fprintf(out, " %*s", W_SPEEDUP, fmt_fixed(r->speedup_cpu, 2, "x", buf, sizeof buf));
        if (has_ref)
            fprintf(out, " %*s", W_SPEEDUP,
                    fmt_fixed(r->speedup_reference, 2, "x", buf, sizeof buf));
        fprintf(out, "  %s\n", fmt_check(r, chk, sizeof chk));
        /* The reason is the one thing a user needs to act on, so it gets
           its own line and is never cut to a column. */
        if (r->reason[0])
            fprintf(out, "  %*s  %s: %s\n", wv, "", kbc_outcome_name((int)r->outcome),
                    r->reason);
        if ((unsigned)r->outcome < 4)
            c->counts[r->outcome]++;
    }
    fputc('\n', out);
    fflush(out);
    return ferror(out) ? -1 : 0;
}

static int table_end(void *vctx, int exit_code)
{
    table_ctx *c = vctx;
    fprintf(c->out, "summary: %u pass, %u FAIL, %u error, %u skipped; exit code %d\n",
            c->counts[KBC_PASS], c->counts[KBC_FAIL], c->counts[KBC_ERROR],
            c->counts[KBC_SKIPPED], exit_code);
    fflush(c->out);
    return ferror(c->out) ? -1 : 0;
}

static void table_destroy(void *vctx)
{
    free(vctx);
}

int kbc_report_table(FILE *out, kbc_sink *sink, kbc_diag *d)
{
    if (!out || !sink) {
        kbc_diag_set(d, "the table report needs an open stream.");
        return -1;
    }
    table_ctx *c = kbc_xcalloc(1, sizeof *c);
    c->out = out;
    sink->ctx = c;
    sink->begin = table_begin;
    sink->point = table_point;
    sink->end = table_end;
    sink->destroy = table_destroy;
    return 0;
}
