/*
 * report_table.c -- the terminal table: a machine line, then for each point
 * a heading naming the experiment and its swept parameters, a line of
 * column titles and one line per variant, and at the end a summary of the
 * outcomes.  Plain ASCII and fixed widths, so that the output reads the
 * same in a terminal, a log file or a pasted bug report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baseline.h"
#include "chart.h"
#include "report.h"
#include "suspect.h"
#include "sweep_summary.h"
#include "text.h"
#include "util.h"

/* Text from outside kbench as the output shows it: visible on a terminal,
   and in markdown also with what markdown or HTML would act on escaped. */
typedef struct table_ctx {
    FILE *out;
    int markdown;       /* results.md: headings and pipe tables            */
    int own;            /* out was opened here and is closed at destroy    */
    unsigned counts[KBC_N_OUTCOMES]; /* rows per outcome, indexed by kbc_outcome */
    int began;
    kbc_baseline *base; /* --baseline: an earlier run's rows, or NULL      */
    int clocks;         /* the run reads the GPU's clocks (NVML)           */
    int wide;           /* min, max, runs, noise, backend flags and the
                           check as columns (--wide; results.md always)    */
    char folded[KBC_REC_NAME]; /* the experiment whose run-wide skips were
                                  last folded into one line             */
    char nogpu[512];    /* the run-wide skip reason, shown once at the end */
    unsigned nogpu_rows;/* rows skipped for it                             */
    int summary_only;   /* --summary-only: the sweep summaries, no points  */
    int colour;         /* statuses and verdicts in colour (a terminal
                           without NO_COLOR; never in markdown)            */
    int noisy_said;     /* the noisy rows' explanation was given once      */
    char **suspects;    /* the run's suspect rows as the notes say them    */
    size_t n_suspects;  /* (kbc_sink.suspects), listed at the end          */
    /* results.md (own): each callback's text is gathered in memory (out,
       an open_memstream) and written whole to fd, so that a failed write
       leaves the file at the end of its last whole point. */
    int fd;
    int64_t end;        /* where the last whole piece ends                 */
    char *text;
    size_t n_text;
    char *path;
    size_t points;      /* points in the file                              */
    int failed;         /* a write failed: nothing more is written         */
    char why[1200];     /* its sentence (error())                          */
} table_ctx;

/* A skip reason that holds for the whole run rather than the row: no
   driver, no device.  The table says it once, in the summary. */
static int run_wide(const kbc_record *r)
{
    return r->outcome == KBC_SKIPPED && (strncmp(r->reason, "no CUDA driver", 14) == 0 ||
                                         strncmp(r->reason, "no CUDA device", 14) == 0);
}

/* Widths of the fixed columns.  A time such as "123.4 ms" takes 8. */
enum { W_BACKEND = 7, W_STATUS = 7, W_TIME = 9, W_RUNS = 5, W_NOISE = 7, W_GBPS = 8, W_PCT = 6,
       W_GFLOPS = 9, W_SPEEDUP = 8, W_CHANGE = 16, W_CLOCK = 9, W_BATCH = 8, W_JOULES = 9,
       W_WATTS = 6, W_EFF = 8 };
/* The default table's narrower columns, so that a point with every
   optional column and a 19-character variant fits 120 columns. */
enum { N_GBPS = 7, N_PCT = 5, N_SPEEDUP = 7 };

/* A row whose noise is above this is marked noisy ("~" after its median
   and a note under the point), whether or not --wide shows the noise. */
#define NOISY_ROW 0.05

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
static const char *fmt_check(const kbc_record *r, char *buf, size_t n)
{
    const kbc_rec_check *c = &r->check;
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

/* The achieved noise as "1.2%", with a "!" when the runs stopped on the
   cap above the experiment's target. */
static const char *fmt_noise(const kbc_record *r, char *buf, size_t n)
{
    if (!isfinite(r->noise))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f%%%s", r->noise * 100 < 0.1 ? 2 : 1, r->noise * 100,
                 r->noise_capped ? "!" : "");
    return buf;
}

/* The row's lowest SM clock in MHz, with "low" when it fell below 90% of
   the maximum or "thr" when a throttle reason was seen (which the note
   line spells out); "-" without readings. */
static const char *fmt_clock(const kbc_record *r, char *buf, size_t n)
{
    const kbc_rec_clocks *k = &r->clocks;
    if (k->n == 0 || !(k->known & KBC_CLK_SM))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%u%s", k->sm_min_mhz,
                 k->throttled ? " thr" : k->low_clock ? " low" : "");
    return buf;
}

/* How the row was timed: "x64" for batches of 64 runs replayed as a CUDA
   graph, "x64 loop" for batches launched run by run, "single". */
static const char *fmt_batch(const kbc_record *r, char *buf, size_t n)
{
    if (r->mode.batch > 1)
        snprintf(buf, n, "x%u%s", r->mode.batch, r->mode.graph ? "" : " loop");
    else if (r->time.n > 0)
        snprintf(buf, n, "single");
    else
        snprintf(buf, n, "-");
    return buf;
}

/* Whether a row's energy status says the counter itself misbehaved
   (worth a note even where energy = auto). */
static int energy_anomaly(const kbc_rec_energy *e)
{
    return e->status == KBC_ENERGY_STILL || e->status == KBC_ENERGY_BACKWARDS ||
           e->status == KBC_ENERGY_WRAPPED || e->status == KBC_ENERGY_TOO_SHORT;
}

/* Whether a point shows the energy columns: energy = on and a CUDA row,
   or a row whose counter was read (measured, or misbehaving). */
static int energy_shown(const kbc_record *r)
{
    const kbc_rec_energy *e = &r->energy;
    return (e->requested == 2 && r->backend == KB_BACKEND_CUDA) ||
           e->status == KBC_ENERGY_MEASURED || energy_anomaly(e);
}

/* A number of a few significant digits: "612", "61.2", "6.12". */
static const char *fmt_sig(double x, const char *suffix, char *buf, size_t n)
{
    if (!isfinite(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f%s", fabs(x) >= 100 ? 0 : fabs(x) >= 10 ? 1 : 2, x, suffix);
    return buf;
}

/* Joules per run in a unit that keeps three digits: "123 uJ", "1.23 mJ". */
static const char *fmt_joules(double j, char *buf, size_t n)
{
    static const struct {
        double scale;
        const char *unit;
    } units[] = {{1e-9, " nJ"}, {1e-6, " uJ"}, {1e-3, " mJ"}, {1, " J"}};
    if (!isfinite(j) || j <= 0) {
        snprintf(buf, n, "-");
        return buf;
    }
    size_t u = 0;
    while (u + 1 < sizeof units / sizeof units[0] && j >= units[u + 1].scale)
        u++;
    return fmt_sig(j / units[u].scale, units[u].unit, buf, n);
}

/* The half-width of the energy's 95% interval over its median: "1.2%". */
static const char *fmt_energy_spread(const kbc_rec_energy *e, char *buf, size_t n)
{
    if (e->status != KBC_ENERGY_MEASURED || !(e->j_per_run > 0))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f%%", (e->j_hi - e->j_lo) / 2 / e->j_per_run * 100);
    return buf;
}

/* The note of a row's energy: why it was not measured (energy = on, or a
   counter that misbehaved), or what throttled or dropped its windows.
   Empty when there is nothing to say; the caller makes it visible (or
   markdown), since why may quote NVML. */
static const char *energy_note(const kbc_record *r, char *buf, size_t n)
{
    const kbc_rec_energy *e = &r->energy;
    buf[0] = '\0';
    if (r->backend != KB_BACKEND_CUDA)
        return buf;
    if (e->status != KBC_ENERGY_MEASURED) {
        if (e->why[0] && (e->requested == 2 || energy_anomaly(e)))
            snprintf(buf, n, "not measured: %s", e->why);
        return buf;
    }
    size_t used = 0;
    if (e->throttled_windows) {
        char names[200] = "", held[48] = "", lim[48] = "";
        if (e->reasons) {
            names[0] = ' ';
            names[1] = '(';
            kbc_clock_reasons_text(e->reasons, ", ", names + 2, sizeof names - 3);
            strcat(names, ")");
        }
        if (isfinite(e->throttled_s))
            snprintf(held, sizeof held, ", held back %.2g s in all", e->throttled_s);
        if (isfinite(e->power_limit_w) && isfinite(e->watts))
            snprintf(lim, sizeof lim, "; %.0f W of a %.0f W limit", e->watts, e->power_limit_w);
        int w = snprintf(buf, n, "a power or thermal limit throttled %u of %u windows%s%s%s",
                         e->throttled_windows, e->windows, names, held, lim);
        used = w > 0 ? (size_t)w : 0;
    }
    if (e->note[0] && used < n)
        snprintf(buf + used, n - used, "%s%s", used ? "; " : "", e->note);
    return buf;
}

/* The sentence of a row marked for its clocks: "SM clock 1650 MHz, below
   90% of its 1980 MHz maximum; throttled (sw_power_cap); 71 C, 690 W".
   Empty when the row is not marked. */
static const char *clock_note(const kbc_record *r, char *buf, size_t n)
{
    const kbc_rec_clocks *k = &r->clocks;
    buf[0] = '\0';
    if (k->n == 0 || (!k->throttled && !k->low_clock))
        return buf;
    size_t used = 0;
#define NOTE(...) kbc_appendf(buf, n, &used, __VA_ARGS__)
    if (k->low_clock)
        NOTE("SM clock fell to %u MHz, below %.0f%% of its %u MHz maximum", k->sm_min_mhz,
             KBC_LOW_CLOCK_FRACTION * 100, k->sm_max_mhz);
    if (k->throttled) {
        char names[200];
        kbc_clock_reasons_text(k->reasons & KBC_THROTTLE_MASK, ", ", names, sizeof names);
        NOTE("%sthrottled (%s)", used ? "; " : "", names);
    }
    if (k->known & KBC_CLK_TEMP)
        NOTE("; %u C", k->temp_max_c);
    if ((k->known & KBC_CLK_POWER) && isfinite(k->power_max_w))
        NOTE("%s%.0f W", (k->known & KBC_CLK_TEMP) ? ", " : "; ", k->power_max_w);
#undef NOTE
    return buf;
}

/* Whether rows[i] is the row of its point that notes the processes its
   plugin left running: every row a worker ran carries the count and the
   table says it once; a crashed or timed-out row says it in its reason. */
static int strays_noted_here(const kbc_record *rows, size_t i)
{
    for (size_t j = 0; j <= i; j++) {
        int lost = rows[j].outcome == KBC_CRASHED || rows[j].outcome == KBC_TIMEOUT;
        if (rows[j].processes_left > 0 && !lost)
            return j == i;
    }
    return 0;
}

static const char *strays_note(const kbc_record *r, char *buf, size_t n)
{
    if (r->processes_left == 1)
        snprintf(buf, n, "1 process the plugin started was still running when the point "
                         "ended, and was ended");
    else
        snprintf(buf, n, "%d processes the plugin started were still running when the point "
                         "ended, and were ended",
                 r->processes_left);
    return buf;
}

/* The note of a CUDA row that asked for a batch count and was timed
   singly (a syncs variant), or whose batch is launched run by run (the
   capture failed); auto's choices and CPU rows are in the JSON only. */
static const char *batch_note(const kbc_record *r)
{
    if (r->backend != KB_BACKEND_CUDA || r->time.n == 0 || !r->mode.note[0])
        return NULL;
    if (r->mode.batch > 1 && !r->mode.graph)
        return r->mode.note;
    return r->mode.requested >= 2 && r->mode.batch <= 1 ? r->mode.note : NULL;
}

/* The change against the baseline run's row with the same key, as
   kbench compare judges it (baseline.h): change "+9.8%" (or "-" without a
   ratio), the verdict's word ("slower", "faster", "no change", "noisy",
   "untested"), or "only in new" for a row the baseline lacks; sig "yes"
   when the interval excludes no change, "no", or "-". */
typedef struct old_change {
    char change[24], verdict[16], sig[4];
} old_change;

static void old_cells(const kbc_match *m, old_change *o)
{
    snprintf(o->change, sizeof o->change, "-");
    snprintf(o->sig, sizeof o->sig, "-");
    snprintf(o->verdict, sizeof o->verdict, "%s",
             m->base < 0 ? KBC_NOTE_ONLY_IN_NEW : kbc_verdict_name(m->change.verdict));
    if (isfinite(m->change.ratio))
        snprintf(o->change, sizeof o->change, "%+.1f%%", (m->change.ratio - 1) * 100);
    if (isfinite(m->change.lo))
        snprintf(o->sig, sizeof o->sig, "%s", kbc_compare_significant(&m->change) ? "yes" : "no");
}

/* The table's one cell: "+9.8% slower", "untested", "only in new". */
static const char *fmt_change(const old_change *o, char *buf, size_t n)
{
    if (strcmp(o->change, "-") == 0)
        snprintf(buf, n, "%s", o->verdict);
    else
        snprintf(buf, n, "%s %s", o->change, o->verdict);
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

/* A row's variant cell: its name, and its flags in brackets when it has
   any ("thrust [syncs|library]"), so that a library reference or a run()
   that waits for the stream is seen beside its time. */
static const char *variant_label(const kbc_record *r, int wide, char *buf, size_t n)
{
    char flags[64];
    kbc_flags_text(r->flags, flags, sizeof flags);
    if (flags[0] && wide)
        snprintf(buf, n, "%s [%s]", r->variant, flags);
    else
        snprintf(buf, n, "%s", r->variant);
    return buf;
}

/* The width of the variant column: the point's longest variant label. */
static int variant_width(const kbc_record *recs, size_t n, int wide)
{
    int w = (int)strlen("variant");
    for (size_t i = 0; i < n; i++) {
        char label[KBC_REC_NAME + 72]; /* a name, " [", the flags and "]" */
        int l = (int)strlen(kbc_text_visible(variant_label(&recs[i], wide, label, sizeof label)));
        if (l > w)
            w = l;
    }
    return w;
}

/* "compute ceilings: FP32 FMA 60.1, mma.sync TF32 370.2, BF16 740.9 TFLOP/s" */
static void print_compute_line(FILE *out, const kbc_flops_ceilings *f)
{
    if (!(f->fp32_gflops > 0) && !(f->tf32_gflops > 0) && !(f->bf16_gflops > 0)) {
        fprintf(out, "compute ceilings: not measured\n");
        return;
    }
    char a[32], b[32], d[32];
    fprintf(out, "compute ceilings: FP32 FMA %s, mma.sync TF32 %s, BF16 %s TFLOP/s\n",
            fmt_fixed(f->fp32_gflops > 0 ? f->fp32_gflops / 1e3 : NAN, 1, "", a, sizeof a),
            fmt_fixed(f->tf32_gflops > 0 ? f->tf32_gflops / 1e3 : NAN, 1, "", b, sizeof b),
            fmt_fixed(f->bf16_gflops > 0 ? f->bf16_gflops / 1e3 : NAN, 1, "", d, sizeof d));
}

/* "clocks: SM 1980 MHz (max 1980), memory 3201 MHz (max 3201), 38 C, 121 W at the start"
   or "clocks: not read (why)". */
static void print_clocks_line(FILE *out, int md, const kbc_run_info *info)
{
    if (!info->clocks_known) {
        fprintf(out, "clocks: not read (%s)\n",
                info->clocks_why ? kbc_text_shown(md, info->clocks_why) : "unknown");
        return;
    }
    const kbc_clock_sample *s = &info->clocks_at_start;
    fprintf(out, "clocks:");
    const char *sep = " ";
    if (s->known & KBC_CLK_SM) {
        fprintf(out, "%sSM %u MHz (max %u)", sep, s->sm_mhz, info->sm_max_mhz);
        sep = ", ";
    }
    if (s->known & KBC_CLK_MEM) {
        fprintf(out, "%smemory %u MHz (max %u)", sep, s->mem_mhz, info->mem_max_mhz);
        sep = ", ";
    }
    if (s->known & KBC_CLK_TEMP) {
        fprintf(out, "%s%u C", sep, s->temp_c);
        sep = ", ";
    }
    if (s->known & KBC_CLK_POWER)
        fprintf(out, "%s%.0f W", sep, s->power_w);
    fprintf(out, "%s\n", s->known ? " after the ceilings (NVML)" : " no reading (NVML)");
}

/* The widest line of the terminal table's header. */
#define HEADER_COLUMNS 120

/* text (one line, no line break) on out, broken where it passes
   HEADER_COLUMNS: before the last " (" or after the last "; " that keeps
   a line within them, else at the last space, the lines after the first
   indented by two spaces.  markdown: as it is. */
static void print_fitted(FILE *out, int md, const char *text)
{
    const char *p = text;
    int indent = 0;
    while (!md && (int)strlen(p) + indent > HEADER_COLUMNS) {
        int room = HEADER_COLUMNS - indent;
        int cut = -1;
        for (int i = room; i > 0 && cut < 0; i--)
            if (strncmp(p + i, " (", 2) == 0)
                cut = i;
            else if (strncmp(p + i - 1, "; ", 2) == 0)
                cut = i;
        for (int i = room; i > 0 && cut < 0; i--)
            if (p[i] == ' ')
                cut = i;
        if (cut <= 0)
            break;
        fprintf(out, "%*s%.*s\n", indent, "", cut, p);
        p += cut;
        p += strspn(p, " ");
        indent = 2;
    }
    fprintf(out, "%*s%s\n", indent, "", p);
}

static int table_begin(void *vctx, const kbc_run_info *info)
{
    table_ctx *c = vctx;
    const kbc_machine *m = info->machine;
    c->began = 1;
    c->clocks = info->clocks_known;
    if (c->markdown) {
        fprintf(c->out, "# kbench results\n\n");
        if (info->command_line) {
            fprintf(c->out, "command: ");
            kbc_text_md_code(c->out, info->command_line, 0);
            fprintf(c->out, "\n\n");
        }
    }
    if (!m) {
        fprintf(c->out, "machine: unknown\n");
    } else if (!m->has_gpu) {
        char *line = kbc_xasprintf("machine: %s, %d CPU threads; no GPU: %s",
                                   kbc_text_shown(c->markdown, m->host), m->cpu_threads,
                                   m->no_gpu_reason[0]
                                       ? kbc_text_shown(c->markdown, m->no_gpu_reason)
                                       : "no reason given");
        print_fitted(c->out, c->markdown, line);
        free(line);
    } else {
        char *line = kbc_xasprintf(
            "machine: %s, %d CPU threads; GPU %s (cc %d.%d, %d SMs), driver %d.%d, runtime %d.%d",
            kbc_text_shown(c->markdown, m->host), m->cpu_threads,
            kbc_text_shown(c->markdown, m->name), m->cc_major, m->cc_minor, m->sm_count,
            m->driver_version / 1000, m->driver_version % 1000 / 10, m->runtime_version / 1000,
            m->runtime_version % 1000 / 10);
        print_fitted(c->out, c->markdown, line);
        free(line);
        /* The ceilings on a line of their own, so that neither passes 120
           columns. */
        const kbc_ceilings *k = &info->ceilings;
        fprintf(c->out, "%s", c->markdown ? "\n" : "");
        if (k->read_gbps > 0 || k->write_gbps > 0 || k->copy_gbps > 0)
            fprintf(c->out, "bandwidth ceilings: read %.1f, write %.1f, copy %.1f GB/s\n",
                    k->read_gbps, k->write_gbps, k->copy_gbps);
        else
            fprintf(c->out, "bandwidth ceilings: not measured\n");
        if (c->markdown)
            fputc('\n', c->out);
        print_compute_line(c->out, &info->flops);
        if (c->markdown)
            fputc('\n', c->out);
        print_clocks_line(c->out, c->markdown, info);
    }
    if (c->markdown)
        fputc('\n', c->out);
    fflush(c->out);
    return ferror(c->out) ? -1 : 0;
}

/* The heading of a point: the experiment, the point's number, and the
   parameters that the experiment sweeps (all of them when it sweeps none,
   so that the line still says what ran). */
static void print_heading(FILE *out, int md, const kbc_record *recs, size_t n)
{
    const kbc_record *r = &recs[0];
    fprintf(out, "%s  point %" PRIu64 "/%" PRIu64, kbc_text_shown(md, r->experiment), r->point + 1,
            r->n_points);
    int swept = 0;
    for (uint32_t i = 0; i < r->n_params; i++)
        swept += r->params[i].swept;
    for (uint32_t i = 0; i < r->n_params; i++) {
        const kbc_rec_param *q = &r->params[i];
        if (swept && !q->swept)
            continue;
        char compact[32];
        fprintf(out, "  %s=%s", kbc_text_shown(md, q->name), kbc_text_shown(md, q->text));
        if (q->type == KB_PARAM_SIZE && size_compact(q->value.u, compact, sizeof compact)[0])
            fprintf(out, " (%s)", compact);
    }
    int cold = 0;
    for (size_t i = 0; i < n; i++)
        cold |= recs[i].cache_cold;
    if (cold)
        fputs("  [cache cold]", out);
    fputc('\n', out);
}

/* One line of cells: the plain table pads each to its width (a negative
   width aligns left), markdown separates them with pipes. */
#define MAX_CELLS 32
typedef struct line {
    char cell[MAX_CELLS][160];
    int width[MAX_CELLS];
    const char *sgr[MAX_CELLS]; /* the cell's colour (text.h), or NULL */
    int n;
} line;

/* Every cell's text passes here: nothing in it acts on a terminal
   (kbc_text_visible), and print_line escapes a markdown cell's pipes. */
static void put(line *l, int width, const char *text)
{
    if (l->n >= MAX_CELLS)
        return;
    kbc_text_visible_to(text, l->cell[l->n], sizeof l->cell[l->n]);
    l->sgr[l->n] = NULL;
    l->width[l->n++] = width;
}

/* The same in colour sgr (when the table is in colour). */
static void put_sgr(line *l, int width, const char *text, const char *sgr)
{
    put(l, width, text);
    if (l->n > 0 && sgr && sgr[0])
        l->sgr[l->n - 1] = sgr;
}

static void print_line(FILE *out, int md, const line *l)
{
    if (md) {
        /* A pipe inside a cell would end it early, and a name's "<script>"
           would be HTML. */
        for (int i = 0; i < l->n; i++) {
            fprintf(out, "| %s ", kbc_text_md(l->cell[i]));
        }
        fputs("|\n", out);
        return;
    }
    fputs(" ", out);
    for (int i = 0; i < l->n; i++) {
        /* The check (width 0) is last and takes two spaces before it. */
        if (i == l->n - 1 && l->width[i] == 0) {
            fprintf(out, "  %s", l->cell[i]);
        } else if (l->sgr[i]) {
            /* The padding outside the colour, so that the columns keep
               their widths. */
            int w = abs(l->width[i]), len = (int)strlen(l->cell[i]);
            int pad = w > len ? w - len : 0;
            fprintf(out, " %*s%s%s%s%*s", l->width[i] > 0 ? pad : 0, "", l->sgr[i], l->cell[i],
                    KBC_SGR_RESET, l->width[i] < 0 ? pad : 0, "");
        } else {
            fprintf(out, " %*s", l->width[i], l->cell[i]);
        }
    }
    fputc('\n', out);
}

/* Whether the row is hidden from the point's table and folded into its
   experiment's one line (a skip for the whole run: no driver, no device). */
static int folded_row(const kbc_record *r)
{
    return run_wide(r);
}

/* The experiment's one line for its rows skipped for the whole run, the
   first time the experiment has such rows: "CUDA variants skipped:
   shuffle, onepass, cub: no CUDA driver (...)".  Returns whether it was
   printed. */
static int print_fold(table_ctx *c, const kbc_record *rows, size_t n)
{
    FILE *out = c->out;
    const kbc_record *first = NULL;
    for (size_t i = 0; i < n && !first; i++)
        if (folded_row(&rows[i]))
            first = &rows[i];
    if (!first || strcmp(c->folded, first->experiment) == 0)
        return 0;
    snprintf(c->folded, sizeof c->folded, "%s", first->experiment);
    fputs(c->markdown ? "\n- " : "  ", out);
    fprintf(out, "%s variants skipped: ", first->backend == KB_BACKEND_CUDA ? "CUDA" : "CPU");
    int k = 0;
    for (size_t i = 0; i < n; i++)
        if (folded_row(&rows[i]))
            fprintf(out, "%s%s", k++ ? ", " : "", kbc_text_shown(c->markdown, rows[i].variant));
    /* The reason's words before its detail ("no CUDA driver"); the whole
       reason is in the summary and in every row of the CSV and JSON. */
    const char *why = kbc_text_shown(c->markdown, first->reason);
    size_t cut = strcspn(why, "(");
    while (cut > 0 && why[cut - 1] == ' ')
        cut--;
    fprintf(out, ": %.*s\n", (int)(cut ? cut : strlen(why)), why);
    return 1;
}

static int noisy_row(const kbc_record *r)
{
    return isfinite(r->noise) && r->noise > NOISY_ROW;
}

/* The note under a point with noisy rows: which; and, the first time in
   the run, what that means and what to do. */
static void print_noisy_note(FILE *out, int md, const kbc_record *rows, size_t n, int *said)
{
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        const kbc_record *r = &rows[i];
        if (folded_row(r) || !noisy_row(r))
            continue;
        if (!k++)
            fprintf(out, "%s~ noisy (noise above %.0f%%): ", md ? "\n- " : "  ", NOISY_ROW * 100);
        fprintf(out, "%s%s %.1f%%", k > 1 ? ", " : "", kbc_text_shown(md, r->variant),
                r->noise * 100);
    }
    if (k && !*said)
        fprintf(out, "\n%s(a median known only to within that: the half-width of its 95%% "
                     "interval); rerun with more runs or a noise target\n",
                md ? "  " : "    ");
    else if (k)
        fputc('\n', out);
    *said |= k > 0;
}

/* A point under --summary-only: its rows are counted, and only a failed
   row is said, on one line with its reason. */
static int summary_only_point(table_ctx *c, const kbc_record *all, size_t n_all)
{
    for (size_t i = 0; i < n_all; i++) {
        const kbc_record *r = &all[i];
        if ((unsigned)r->outcome < KBC_N_OUTCOMES)
            c->counts[r->outcome]++;
        if (folded_row(r)) {
            if (!c->nogpu[0] || strcmp(c->nogpu, r->reason) == 0) {
                snprintf(c->nogpu, sizeof c->nogpu, "%s", r->reason);
                c->nogpu_rows++;
            }
            continue;
        }
        if (kbc_outcome_failed((int)r->outcome))
            fprintf(c->out, "%s  point %" PRIu64 "/%" PRIu64 "  %s: %s%s%s\n",
                    kbc_text_visible(r->experiment), r->point + 1, r->n_points,
                    kbc_text_visible(r->variant), kbc_outcome_name((int)r->outcome),
                    r->reason[0] ? ": " : "", kbc_text_visible(r->reason));
    }
    fflush(c->out);
    return ferror(c->out) ? -1 : 0;
}

/* The columns one point's table shows, decided from the records'
   backends, the experiment's reference and the point's work, never from
   which rows happened to succeed, so that columns stay put. */
typedef struct columns {
    int md, wide;
    int has_cuda, has_cpu, has_flops, has_batch, has_energy, has_ref;
    int show_clock, show_mem_pct;
    char peak_title[16]; /* %fp32, %tf32, %bf16, or "" */
    int wv;              /* the variant column's width */
    int w_gbps, w_pct, w_speedup;
} columns;

static void decide_columns(const table_ctx *c, const kbc_record *rows, size_t n, columns *k)
{
    memset(k, 0, sizeof *k);
    k->md = c->markdown;
    k->wide = c->wide;
    int has_clock = 0;
    for (size_t i = 0; i < n; i++) {
        k->has_cuda |= rows[i].backend == KB_BACKEND_CUDA;
        k->has_cpu |= rows[i].backend == KB_BACKEND_CPU;
        k->has_flops |= rows[i].work.flops > 0;
        /* Clocks are read for every CUDA row of a run that has NVML. */
        has_clock |= rows[i].clocks.n > 0 || (c->clocks && rows[i].backend == KB_BACKEND_CUDA);
        k->has_batch |= rows[i].mode.requested != 0;
        k->has_energy |= energy_shown(&rows[i]);
    }
    /* The default table keeps 120 columns with J/run in the place of the
       SM clock (a marked row still gets its clocks: note); --wide has both. */
    k->show_clock = has_clock && (k->wide || !k->has_energy);
    /* The percentage of the ceiling that binds only (analysis/chart.h's
       rate rule): a memory-bound reduce's 2% of the FP32 peak, or a
       matmul's 2% of the bandwidth, says nothing. */
    const kbc_rate binds = kbc_rate_pick(rows, n);
    k->show_mem_pct = k->has_cuda && binds != KBC_RATE_GFLOPS;
    /* The compute ceiling is the point's (kb_work.peak is per point); its
       column is titled by it: %fp32, %tf32, %bf16. */
    for (size_t i = 0; i < n && !k->peak_title[0] && binds == KBC_RATE_GFLOPS; i++)
        if (rows[i].backend == KB_BACKEND_CUDA && rows[i].peak[0])
            snprintf(k->peak_title, sizeof k->peak_title, "%%%s", rows[i].peak);
    k->has_ref = rows[0].reference[0] != '\0';
    /* "vs cpu" is against the point's first CPU variant: when that is the
       baseline, the column is "vs base" again and is left out. */
    for (size_t i = 0; i < n && k->has_cpu; i++)
        if (rows[i].backend == KB_BACKEND_CPU) {
            k->has_cpu = strcmp(rows[i].variant, rows[i].baseline) != 0;
            break;
        }
    k->wv = variant_width(rows, n, k->wide);
    k->w_gbps = k->wide ? W_GBPS : N_GBPS;
    k->w_pct = k->wide ? W_PCT : N_PCT;
    k->w_speedup = k->wide ? W_SPEEDUP : N_SPEEDUP;
}

/* The table's head (and markdown's alignment row). */
static void print_head(const table_ctx *c, const columns *k)
{
    line h = {.n = 0};
    put(&h, -k->wv, "variant");
    put(&h, -W_BACKEND, "backend");
    put(&h, -W_STATUS, "status");
    put(&h, W_TIME, "median");
    if (k->wide) {
        put(&h, W_TIME, "min");
        put(&h, W_TIME, "max");
        put(&h, W_RUNS, "runs");
        put(&h, W_NOISE, "noise");
    }
    put(&h, k->w_gbps, "GB/s");
    if (k->show_mem_pct)
        put(&h, k->w_pct, "%peak");
    if (k->has_flops)
        put(&h, W_GFLOPS, "GFLOP/s");
    if (k->has_flops && k->peak_title[0])
        put(&h, k->w_pct, k->peak_title);
    if (k->show_clock)
        put(&h, W_CLOCK, "SM MHz");
    if (k->has_energy) {
        put(&h, W_JOULES, "J/run");
        if (k->wide) {
            put(&h, W_NOISE, "J +-");
            put(&h, W_WATTS, "W");
            put(&h, W_WATTS, "idle W");
            put(&h, W_EFF, k->has_flops ? "GFLOP/J" : "GB/J");
        }
    }
    if (k->has_batch)
        put(&h, W_BATCH, "batch");
    put(&h, k->w_speedup, "vs base");
    if (k->has_cpu)
        put(&h, k->w_speedup, "vs cpu");
    if (k->has_ref)
        put(&h, k->w_speedup, "vs ref");
    if (c->base)
        put(&h, W_CHANGE, "vs old");
    if (c->base && k->md) {
        /* For a pull request: the verdict and its significance in columns
           of their own. */
        put(&h, -7, "verdict");
        put(&h, -3, "significant");
    }
    if (k->wide)
        put(&h, 0, "check");
    print_line(c->out, k->md, &h);
    if (k->md) {
        /* Text columns left, numbers right. */
        for (int i = 0; i < h.n; i++)
            fputs(h.width[i] < 0 || i == h.n - 1 ? "|---" : "|--:", c->out);
        fputs("|\n", c->out);
    }
}

/* One row's line of the table; old is its --baseline match, or NULL. */
static void print_row(const table_ctx *c, const columns *k, const kbc_record *r,
                      const kbc_match *old)
{
    int cuda = r->backend == KB_BACKEND_CUDA;
    char buf[64], chk[128];
    line l = {.n = 0};
    char label[KBC_REC_NAME + 72]; /* a name, " [", the flags and "]" */
    put(&l, -k->wv, variant_label(r, k->wide, label, sizeof label));
    put(&l, -W_BACKEND, cuda ? "cuda" : "cpu");
    put_sgr(&l, -W_STATUS, kbc_outcome_name((int)r->outcome),
            c->colour ? kbc_outcome_sgr((int)r->outcome) : NULL);
    kbc_human_seconds(r->time.median, buf, sizeof buf);
    if (noisy_row(r))
        strcat(buf, "~");
    put(&l, W_TIME, buf);
    if (k->wide) {
        put(&l, W_TIME, kbc_human_seconds(r->time.min, buf, sizeof buf));
        put(&l, W_TIME, kbc_human_seconds(r->time.max, buf, sizeof buf));
        if (r->time.n > 0)
            snprintf(buf, sizeof buf, "%zu", r->time.n);
        else
            snprintf(buf, sizeof buf, "-");
        put(&l, W_RUNS, buf);
        put(&l, W_NOISE, fmt_noise(r, buf, sizeof buf));
    }
    put(&l, k->w_gbps, fmt_fixed(r->gbps, 1, "", buf, sizeof buf));
    if (k->show_mem_pct)
        put(&l, k->w_pct, fmt_fixed(cuda ? r->pct_ceiling : NAN, 0, "%", buf, sizeof buf));
    if (k->has_flops)
        put(&l, W_GFLOPS, fmt_fixed(r->gflops, 1, "", buf, sizeof buf));
    if (k->has_flops && k->peak_title[0])
        put(&l, k->w_pct, fmt_fixed(cuda ? r->pct_peak : NAN, 0, "%", buf, sizeof buf));
    if (k->show_clock)
        put(&l, W_CLOCK, fmt_clock(r, buf, sizeof buf));
    if (k->has_energy) {
        const kbc_rec_energy *en = &r->energy;
        int got = en->status == KBC_ENERGY_MEASURED;
        put(&l, W_JOULES, fmt_joules(got ? en->j_per_run : NAN, buf, sizeof buf));
        if (k->wide) {
            put(&l, W_NOISE, fmt_energy_spread(en, buf, sizeof buf));
            put(&l, W_WATTS, fmt_sig(got ? en->watts : NAN, "", buf, sizeof buf));
            put(&l, W_WATTS, fmt_sig(got ? en->idle_w : NAN, "", buf, sizeof buf));
            put(&l, W_EFF, fmt_sig(!got ? NAN : k->has_flops ? en->gflops_per_j : en->gb_per_j,
                                   "", buf, sizeof buf));
        }
    }
    if (k->has_batch)
        put(&l, W_BATCH, fmt_batch(r, buf, sizeof buf));
    put(&l, k->w_speedup, fmt_fixed(r->speedup_baseline, 2, "x", buf, sizeof buf));
    if (k->has_cpu)
        put(&l, k->w_speedup, fmt_fixed(r->speedup_cpu, 2, "x", buf, sizeof buf));
    if (k->has_ref)
        put(&l, k->w_speedup, fmt_fixed(r->speedup_reference, 2, "x", buf, sizeof buf));
    if (old) {
        old_change oc;
        old_cells(old, &oc);
        if (k->md) {
            put(&l, W_CHANGE, oc.change);
            put(&l, -7, oc.verdict);
            put(&l, -3, oc.sig);
        } else {
            put_sgr(&l, W_CHANGE, fmt_change(&oc, buf, sizeof buf),
                    c->colour && old->base >= 0 ? kbc_verdict_sgr(old->change.verdict) : NULL);
        }
    }
    if (k->wide)
        put(&l, 0, fmt_check(r, chk, sizeof chk));
    print_line(c->out, k->md, &l);
}

/* The lines under row i of a terminal table: what a reader must see and
   no column holds. */
static void print_row_notes(FILE *out, const columns *k, const kbc_record *rows, size_t i)
{
    const kbc_record *r = &rows[i];
    const int wv = k->wv;
    char chk[128];
    /* A failed check is what a reader must see: without the check column
       it gets a line of its own (a row failed by the integrity checks
       passed its check; its reason says why it failed). */
    if (!k->wide && r->outcome == KBC_FAIL && kbc_check_measure(r) && !r->check.passed)
        fprintf(out, "  %*s  check: %s\n", wv, "",
                kbc_text_visible(fmt_check(r, chk, sizeof chk)));
    /* A row that stands for several points says so, and why. */
    if (r->points > 1)
        fprintf(out, "  %*s  x%" PRIu64 ": stands for %" PRIu64
                     " points; this variant ignores %s\n",
                wv, "", r->points, r->points,
                r->ignores[0] ? kbc_text_visible(r->ignores) : "them");
    /* The reason is the one thing a user needs to act on, so it gets its
       own line and is never cut to a column. */
    if (r->reason[0])
        fprintf(out, "  %*s  %s: %s\n", wv, "", kbc_outcome_name((int)r->outcome),
                kbc_text_visible(r->reason));
    if (r->sanitizer[0])
        fprintf(out, "  %*s  sanitizer: %s\n", wv, "", kbc_text_visible(r->sanitizer));
    if (r->device_left_bytes > KBC_LEFT_NOTE_BYTES && i == 0) {
        char b[32];
        fprintf(out, "  %*s  device memory: this point left %s behind (free before its "
                     "setup minus after its teardown)\n",
                wv, "", kbc_human_bytes((uint64_t)r->device_left_bytes, b, sizeof b));
    }
    if (strays_noted_here(rows, i)) {
        char sn[200];
        fprintf(out, "  %*s  processes: %s\n", wv, "", strays_note(r, sn, sizeof sn));
    }
    char note[800];
    if (clock_note(r, note, sizeof note)[0])
        fprintf(out, "  %*s  clocks: %s\n", wv, "", note);
    if (batch_note(r))
        fprintf(out, "  %*s  batch: %s\n", wv, "", kbc_text_visible(batch_note(r)));
    if (energy_note(r, note, sizeof note)[0])
        fprintf(out, "  %*s  energy: %s\n", wv, "", kbc_text_visible(note));
}

/* The notes of a markdown table go below it, one bullet each. */
static void print_md_notes(FILE *out, const kbc_record *rows, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        const kbc_record *r = &rows[i];
        if (r->points > 1)
            fprintf(out, "%s- %s: stands for %" PRIu64 " points; this variant ignores %s\n",
                    any++ ? "" : "\n", kbc_text_md(r->variant), r->points,
                    r->ignores[0] ? kbc_text_md(r->ignores) : "them");
        if (r->reason[0])
            fprintf(out, "%s- %s %s: %s\n", any++ ? "" : "\n", kbc_text_md(r->variant),
                    kbc_outcome_name((int)r->outcome), kbc_text_md(r->reason));
        if (r->sanitizer[0])
            fprintf(out, "%s- %s sanitizer: %s\n", any++ ? "" : "\n", kbc_text_md(r->variant),
                    kbc_text_md(r->sanitizer));
        if (r->device_left_bytes > KBC_LEFT_NOTE_BYTES && i == 0) {
            char b[32];
            fprintf(out, "%s- device memory: this point left %s behind\n", any++ ? "" : "\n",
                    kbc_human_bytes((uint64_t)r->device_left_bytes, b, sizeof b));
        }
        if (strays_noted_here(rows, i)) {
            char sn[200];
            fprintf(out, "%s- processes: %s\n", any++ ? "" : "\n", strays_note(r, sn, sizeof sn));
        }
        char note[800];
        if (clock_note(r, note, sizeof note)[0])
            fprintf(out, "%s- %s clocks: %s\n", any++ ? "" : "\n", kbc_text_md(r->variant),
                    note);
        if (batch_note(r))
            fprintf(out, "%s- %s batch: %s\n", any++ ? "" : "\n", kbc_text_md(r->variant),
                    kbc_text_md(batch_note(r)));
        if (energy_note(r, note, sizeof note)[0])
            fprintf(out, "%s- %s energy: %s\n", any++ ? "" : "\n", kbc_text_md(r->variant),
                    kbc_text_md(note));
    }
}

/* The rows of the point that the table shows: those skipped for the whole
   run are counted and folded into one line per experiment instead. */
static size_t shown_rows(table_ctx *c, const kbc_record *all, size_t n_all, kbc_record *rows)
{
    size_t n = 0;
    for (size_t i = 0; i < n_all; i++) {
        const kbc_record *r = &all[i];
        if (folded_row(r)) {
            if ((unsigned)r->outcome < KBC_N_OUTCOMES)
                c->counts[r->outcome]++;
            if (!c->nogpu[0] || strcmp(c->nogpu, r->reason) == 0) {
                snprintf(c->nogpu, sizeof c->nogpu, "%s", r->reason);
                c->nogpu_rows++;
            }
            continue;
        }
        rows[n++] = *r;
    }
    return n;
}

static int table_point(void *vctx, const kbc_record *all, size_t n_all)
{
    table_ctx *c = vctx;
    if (n_all == 0)
        return 0;
    if (c->summary_only)
        return summary_only_point(c, all, n_all);
    FILE *out = c->out;
    const int md = c->markdown;
    kbc_record *rows = kbc_xcalloc(n_all, sizeof *rows);
    size_t n = shown_rows(c, all, n_all, rows);
    if (n == 0) {
        /* Nothing of the point ran anywhere: its heading and the fold line
           once per experiment, nothing for its later points. */
        if (strcmp(c->folded, all[0].experiment) != 0) {
            if (md)
                fputs("### ", out);
            print_heading(out, md, all, n_all);
            print_fold(c, all, n_all);
            fputc('\n', out);
        }
        free(rows);
        fflush(out);
        return ferror(out) ? -1 : 0;
    }
    columns k;
    decide_columns(c, rows, n, &k);
    /* --baseline: the point's rows judged at once, with compare's defaults. */
    kbc_match *old = NULL;
    if (c->base) {
        kbc_compare_opts opts;
        kbc_compare_defaults(&opts);
        old = kbc_xcalloc(n, sizeof *old);
        kbc_baseline_judge(c->base, rows, n, &opts, old);
    }
    if (md)
        fputs("### ", out);
    print_heading(out, md, all, n_all);
    if (md)
        fputc('\n', out);
    print_head(c, &k);
    for (size_t i = 0; i < n; i++) {
        print_row(c, &k, &rows[i], old ? &old[i] : NULL);
        if ((unsigned)rows[i].outcome < KBC_N_OUTCOMES)
            c->counts[rows[i].outcome]++;
        if (!md) /* markdown's notes follow the whole table */
            print_row_notes(out, &k, rows, i);
    }
    if (md)
        print_md_notes(out, rows, n);
    print_fold(c, all, n_all);
    print_noisy_note(out, md, rows, n, &c->noisy_said);
    fputc('\n', out);
    free(old);
    free(rows);
    fflush(out);
    return ferror(out) ? -1 : 0;
}

/* The run's suspect rows, kept as the notes say them for end(). */
static int table_suspects(void *vctx, const kbc_suspect *list, size_t n)
{
    table_ctx *c = vctx;
    c->suspects = kbc_xrealloc(c->suspects, (c->n_suspects + n + 1) * sizeof *c->suspects);
    for (size_t i = 0; i < n; i++) {
        char t[2048];
        c->suspects[c->n_suspects++] = kbc_xstrdup(kbc_suspect_text(&list[i], t, sizeof t));
    }
    return 0;
}

/* One experiment's sweep at a glance (analysis/sweep_summary.h): a row per
   swept value, a column per variant with its median (the fastest marked
   with *), then a line per variant against the baseline and the
   reference. */
static void print_sweep(FILE *out, int md, const kbc_sweep *w)
{
    size_t np = w->n_params, nv = w->n_variants;
    if (np + nv > MAX_CELLS)
        nv = MAX_CELLS - np;
    if (md)
        fprintf(out, "## Sweep of %s\n\nmedian time per variant; * the fastest of its row\n\n",
                kbc_text_md(w->experiment));
    else
        fprintf(out, "sweep of %s: median time per variant; * the fastest of its row\n",
                kbc_text_visible(w->experiment));
    int widths[MAX_CELLS];
    for (size_t q = 0; q < np; q++) {
        widths[q] = (int)strlen(kbc_text_visible(w->params[q]));
        for (size_t r = 0; r < w->n_rows; r++) {
            int l = (int)strlen(kbc_text_visible(w->labels[r * np + q]));
            widths[q] = l > widths[q] ? l : widths[q];
        }
    }
    for (size_t v = 0; v < nv; v++) {
        int l = (int)strlen(kbc_text_visible(w->variants[v]));
        widths[np + v] = l > W_TIME + 1 ? l : W_TIME + 1;
    }
    line h = {.n = 0};
    for (size_t q = 0; q < np; q++)
        put(&h, -widths[q], w->params[q]);
    if (np == 0)
        put(&h, -5, "point");
    for (size_t v = 0; v < nv; v++)
        put(&h, widths[np + v], w->variants[v]);
    print_line(out, md, &h);
    if (md) {
        for (int i = 0; i < h.n; i++)
            fputs(i < (int)(np ? np : 1) ? "|---" : "|--:", out);
        fputs("|\n", out);
    }
    for (size_t r = 0; r < w->n_rows; r++) {
        line l = {.n = 0};
        for (size_t q = 0; q < np; q++)
            put(&l, -widths[q], w->labels[r * np + q]);
        if (np == 0)
            put(&l, -5, "1");
        for (size_t v = 0; v < nv; v++) {
            char buf[64];
            double m = w->median[r * w->n_variants + v];
            int o = w->outcome[r * w->n_variants + v];
            if (isfinite(m)) {
                kbc_human_seconds(m, buf, sizeof buf);
                if (w->best[r] == (int)v)
                    strcat(buf, "*");
            } else {
                snprintf(buf, sizeof buf, "%s", o >= 0 ? kbc_outcome_name(o) : "-");
            }
            put(&l, widths[np + v], buf);
        }
        print_line(out, md, &l);
    }
    if (md && w->n_vs)
        fputc('\n', out);
    for (size_t i = 0; i < w->n_vs; i++) {
        char t[600];
        kbc_sweep_vs_text(&w->vs[i], t, sizeof t);
        fprintf(out, "%s%s\n", md ? "- " : "  ", md ? kbc_text_md(t) : kbc_text_visible(t));
    }
    fputc('\n', out);
}

/* The summaries of the run's sweeps: every experiment's under
   --summary-only, else those of more than one row (a point's table says
   the rest). */
static int table_sweeps(void *vctx, const kbc_sweep *list, size_t n)
{
    table_ctx *c = vctx;
    if (c->summary_only && n)
        fputc('\n', c->out); /* after the machine line and the failed rows */
    for (size_t i = 0; i < n; i++)
        if (c->summary_only || list[i].n_rows > 1)
            print_sweep(c->out, c->markdown, &list[i]);
    fflush(c->out);
    return ferror(c->out) ? -1 : 0;
}

static int table_end(void *vctx, int exit_code)
{
    table_ctx *c = vctx;
    for (size_t i = 0; i < c->n_suspects; i++)
        fprintf(c->out, "%ssuspect row (more than twice as slow as its variant with more work): %s\n",
                c->markdown ? "- " : "", kbc_text_shown(c->markdown, c->suspects[i]));
    if (c->n_suspects)
        fputc('\n', c->out);
    fprintf(c->out, "summary: %u pass, %u FAIL, %u error, %u skipped", c->counts[KBC_PASS],
            c->counts[KBC_FAIL], c->counts[KBC_ERROR], c->counts[KBC_SKIPPED]);
    /* Crashed and timed-out rows are named only when there are some, so
       that the summary of a clean run reads as it always has. */
    if (c->counts[KBC_CRASHED] || c->counts[KBC_TIMEOUT])
        fprintf(c->out, ", %u crashed, %u timeout", c->counts[KBC_CRASHED],
                c->counts[KBC_TIMEOUT]);
    if (c->counts[KBC_INVALID])
        fprintf(c->out, ", %u invalid", c->counts[KBC_INVALID]);
    fprintf(c->out, "; exit code %d\n", exit_code);
    if (c->nogpu_rows)
        fprintf(c->out, "skipped: %u CUDA row%s: %s\n", c->nogpu_rows,
                c->nogpu_rows == 1 ? "" : "s", kbc_text_shown(c->markdown, c->nogpu));
    fflush(c->out);
    return ferror(c->out) ? -1 : 0;
}

static void table_destroy(void *vctx)
{
    table_ctx *c = vctx;
    kbc_baseline_free(c->base);
    for (size_t i = 0; i < c->n_suspects; i++)
        free(c->suspects[i]);
    free(c->suspects);
    if (c->own) {
        if (c->out)
            fclose(c->out);
        free(c->text);
        if (c->fd >= 0)
            close(c->fd);
        free(c->path);
    }
    free(c);
}

int kbc_report_table(FILE *out, kbc_sink *sink, kbc_diag *d)
{
    if (!out || !sink) {
        kbc_diag_set(d, "the table report needs an open stream.");
        return -1;
    }
    table_ctx *c = kbc_xcalloc(1, sizeof *c);
    c->out = out;
    c->fd = -1;
    c->colour = kbc_colour_for(out);
    /* No error(): a table on a stream that fails (stdout) is the
       command's to report as it exits. */
    *sink = (kbc_sink){.ctx = c,
                       .begin = table_begin,
                       .point = table_point,
                       .end = table_end,
                       .destroy = table_destroy,
                       .suspects = table_suspects,
                       .sweeps = table_sweeps};
    return 0;
}

/* ---- results.md: written a whole piece at a time ---- */

static int md_fail(table_ctx *c, int err)
{
    if (!c->failed && c->points == 0)
        snprintf(c->why, sizeof c->why, "cannot write %s: %s; it holds no point", c->path,
                 strerror(err));
    else if (!c->failed)
        snprintf(c->why, sizeof c->why,
                 "cannot write %s: %s; it ends with its last whole point (%zu point%s)",
                 c->path, strerror(err), c->points, c->points == 1 ? "" : "s");
    c->failed = 1;
    return -1;
}

/* Starts gathering one callback's text in memory. */
static int md_open(table_ctx *c)
{
    if (c->failed)
        return -1;
    c->out = open_memstream(&c->text, &c->n_text);
    return c->out ? 0 : md_fail(c, errno);
}

/* Writes the gathered text whole (rc: the callback's own result). */
static int md_commit(table_ctx *c, int rc, size_t points)
{
    int err = EIO;
    if (fclose(c->out) != 0) {
        rc = -1;
        err = errno;
    }
    c->out = NULL;
    if (rc == 0 && kbc_write_whole(c->fd, &c->end, c->text, c->n_text) != 0) {
        rc = -1;
        err = errno;
    }
    free(c->text);
    c->text = NULL;
    c->n_text = 0;
    if (rc != 0)
        return md_fail(c, err);
    c->points += points;
    return 0;
}

static int md_begin(void *vctx, const kbc_run_info *info)
{
    table_ctx *c = vctx;
    if (md_open(c) != 0)
        return -1;
    return md_commit(c, table_begin(c, info), 0);
}

static int md_point(void *vctx, const kbc_record *rows, size_t n)
{
    table_ctx *c = vctx;
    if (md_open(c) != 0)
        return -1;
    return md_commit(c, table_point(c, rows, n), n > 0);
}

static int md_end(void *vctx, int exit_code)
{
    table_ctx *c = vctx;
    if (md_open(c) != 0)
        return -1;
    if (md_commit(c, table_end(c, exit_code), 0) != 0)
        return -1;
    int fd = c->fd;
    c->fd = -1;
    return close(fd) != 0 ? md_fail(c, errno) : 0;
}

static int md_sweeps(void *vctx, const kbc_sweep *list, size_t n)
{
    table_ctx *c = vctx;
    if (md_open(c) != 0)
        return -1;
    return md_commit(c, table_sweeps(c, list, n), 0);
}

static const char *md_error(void *vctx)
{
    table_ctx *c = vctx;
    return c->failed ? c->why : NULL;
}

int kbc_report_markdown(const char *path, kbc_sink *sink, kbc_diag *d)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        kbc_diag_set(d, "cannot write %s: %s.", path, strerror(errno));
        return -1;
    }
    table_ctx *c = kbc_xcalloc(1, sizeof *c);
    c->markdown = 1;
    c->wide = 1; /* a file to read, not a terminal: every column */
    c->own = 1;
    c->fd = fd;
    c->path = kbc_xstrdup(path);
    *sink = (kbc_sink){.ctx = c,
                       .begin = md_begin,
                       .point = md_point,
                       .end = md_end,
                       .destroy = table_destroy,
                       .error = md_error,
                       .suspects = table_suspects,
                       .sweeps = md_sweeps};
    return 0;
}

void kbc_report_table_wide(kbc_sink *sink, int wide)
{
    table_ctx *c = sink->ctx;
    if (!c->markdown)
        c->wide = wide;
}

void kbc_report_table_baseline(kbc_sink *sink, const kbc_record *base, size_t n)
{
    table_ctx *c = sink->ctx;
    kbc_baseline_free(c->base);
    c->base = kbc_baseline_new(base, n);
}

void kbc_report_table_summary_only(kbc_sink *sink, int on)
{
    table_ctx *c = sink->ctx;
    if (!c->markdown)
        c->summary_only = on;
}

void kbc_report_table_colour(kbc_sink *sink, int on)
{
    table_ctx *c = sink->ctx;
    c->colour = on && !c->markdown;
}
