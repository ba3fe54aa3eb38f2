/* plot.c -- see plot.h. */
#define _GNU_SOURCE
#include "plot.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
#include "record.h"
#include "results_read.h"
#include "text.h"
#include "util.h"

/* Every text in a script that kbench did not write itself (an experiment's,
   variant's or parameter's name, a parameter's text, the GPU's name, a
   ceiling's kind from the file, a file name) reaches the script through
   gp_string() only (gp_quote() for texts), as one single-quoted gnuplot
   string:
   - gnuplot substitutes backquotes (a shell command) everywhere but in
     single-quoted strings, expands '@' macros outside quotes, and reads
     backslash escapes in double-quoted ones; in single quotes nothing is
     special but the quote itself;
   - a quote in the text closes the string and is added by concatenation,
     'it'."'".'s' (gnuplot's own doubling, 'it''s', is misread where the
     text starts with a quote or has two in a row);
   - a line break would end the string and the command, and start another:
     control characters and bytes that are not UTF-8 are written as visible
     escapes instead (kbc_text_visible: a line feed as \n), so a string never
     spans two lines;
   - in a text (enhanced: a title, a label, a key entry) the enhanced-text
     specials (^ _ @ & ~ { } and the backslash) get one backslash each, so
     that a name prints as it is spelled; a file name (set output) is
     written as it is.
   The data blocks hold numbers only, file names are made of letters,
   digits, '-', '_' and '.' (file_stem), and the rest of each script is
   kbench's own text. */
static void gp_string(FILE *f, const char *s, int enhanced)
{
    size_t need = 4 * strlen(s) + 1; /* the longest escape (\xHH) is 4 per byte */
    char *vis = kbc_xmalloc(need);
    kbc_text_visible_to(s, vis, need);
    fputc('\'', f);
    for (const char *p = vis; *p; p++) {
        if (*p == '\'') {
            fputs("'.\"'\".'", f);
            continue;
        }
        if (enhanced && strchr("^_@&~{}\\", *p))
            fputc('\\', f);
        fputc(*p, f);
    }
    fputc('\'', f);
    free(vis);
}

/* A text for a title, a label or a key entry. */
static void gp_quote(FILE *f, const char *s)
{
    gp_string(f, s, 1);
}

int kbc_have_gnuplot(void)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char *p = kbc_xstrdup(path);
    int found = 0;
    for (char *save = NULL, *d = strtok_r(p, ":", &save); d && !found;
         d = strtok_r(NULL, ":", &save)) {
        char *f = kbc_xasprintf("%s/gnuplot", *d ? d : ".");
        found = access(f, X_OK) == 0;
        free(f);
    }
    free(p);
    return found;
}

/* Which rate a plot shows: the side of the roofline that binds.  GFLOP/s
   where the rows come nearer their compute ceiling than their memory one
   (matmul: 70% of FP32 against 2% of the bandwidth), GB/s where the rows
   move bytes and no compute share is larger (reduce, transpose, sort, and
   files written before compute ceilings existed), else GFLOP/s, else
   items per second. */
typedef enum { RATE_GBPS, RATE_GFLOPS, RATE_ITEMS } rate_kind;

typedef struct rate_votes {
    int any_gbps, any_gflops;
    double best_mem, best_compute; /* highest % of each ceiling seen */
} rate_votes;

static void rate_vote(rate_votes *v, const kbc_record *r)
{
    v->any_gbps |= isfinite(r->gbps) && r->gbps > 0;
    v->any_gflops |= isfinite(r->gflops) && r->gflops > 0;
    if (isfinite(r->pct_ceiling) && r->pct_ceiling > v->best_mem)
        v->best_mem = r->pct_ceiling;
    if (isfinite(r->pct_peak) && r->pct_peak > v->best_compute)
        v->best_compute = r->pct_peak;
}

static rate_kind rate_pick(const rate_votes *v)
{
    if (v->any_gflops && v->best_compute > v->best_mem)
        return RATE_GFLOPS;
    return v->any_gbps ? RATE_GBPS : v->any_gflops ? RATE_GFLOPS : RATE_ITEMS;
}

/* The ceiling line of a plot: the largest ceiling of the chosen rate among
   its rows (memory ceilings in GB/s, compute ceilings in GFLOP/s). */
typedef struct plot_ceiling {
    double value;
    const char *kind; /* "read", "mixed", ... or "fp32", "tf32", "bf16" */
} plot_ceiling;

static void ceiling_note(plot_ceiling *c, rate_kind rk, const kbc_record *r)
{
    if (rk == RATE_GBPS && isfinite(r->ceiling_gbps) && r->ceiling_gbps > c->value) {
        c->value = r->ceiling_gbps;
        c->kind = r->ceiling;
    } else if (rk == RATE_GFLOPS && isfinite(r->peak_gflops) && r->peak_gflops > c->value) {
        c->value = r->peak_gflops;
        c->kind = r->peak;
    }
}

/* The ceiling's title: "read ceiling (3.35 TB/s)". */
static char *ceiling_title(rate_kind rk, const plot_ceiling *c, double scale, const char *unit)
{
    const char *kind = c->kind && c->kind[0] ? c->kind : rk == RATE_GFLOPS ? "compute" : "bandwidth";
    /* The tensor ceilings are measured with mma.sync (docs/output.md), which
       wgmma kernels pass: the label says so. */
    int mma = strcmp(kind, "tf32") == 0 || strcmp(kind, "bf16") == 0;
    double v = c->value * scale;
    return kbc_xasprintf("%s%s ceiling (%.*f %s)", kind, mma ? " mma.sync" : "",
                         v >= 100 ? 0 : v >= 10 ? 1 : 2, v, unit);
}

/* The ceiling's line in a plot command (none when there is no ceiling). */
static void ceiling_line(FILE *f, rate_kind rk, const plot_ceiling *c, double scale,
                         const char *unit)
{
    if (!(c->value > 0))
        return;
    char *title = ceiling_title(rk, c, scale, unit);
    fprintf(f, "  %.9g title ", c->value * scale);
    gp_quote(f, title);
    fprintf(f, " with lines lw 2 dt 4 lc rgb '#c00000'\n");
    free(title);
}

/* A note on the chart where a value passes its ceiling: the ceiling is a
   measured reference, not the hardware's limit (docs/output.md, "%peak
   above 100%"). */
static void above_note(FILE *f, rate_kind rk)
{
    fprintf(f, "set label 1 ");
    gp_quote(f, rk == RATE_GFLOPS
                    ? "above the ceiling: it is a measured mma.sync/FMA reference, not the "
                      "hardware's limit (docs/output.md)"
                    : "above the ceiling: it is a measured copy/stream reference, which data "
                      "in L2 can pass (docs/output.md)");
    fprintf(f, " at graph 0.01, graph 0.97 left front font ',9' textcolor rgb '#c00000'\n");
}

static double rate_of(const kbc_record *r, rate_kind k)
{
    return k == RATE_GBPS ? r->gbps : k == RATE_GFLOPS ? r->gflops : r->items_per_s;
}

/* What a chart's y axis shows: a rate (the roofline's binding side, in a
   unit that suits its size) or the median time (--metric time). */
typedef struct y_axis {
    int time;          /* --metric time                                  */
    rate_kind rk;
    double scale;      /* a row's value (GB/s, GFLOP/s, items/s, s) times this */
    const char *unit;  /* "TB/s", "GFLOP/s", "Mitems/s", "ms", ...        */
} y_axis;

/* The row's value on the y axis, before scaling; NaN where it has none. */
static double y_raw(const y_axis *y, const kbc_record *r)
{
    return y->time ? r->time.median : rate_of(r, y->rk);
}

/* The row's fastest and slowest run on the y axis (the min-max band):
   the rate scales with the inverse of the time. */
static void y_range(const y_axis *y, const kbc_record *r, double *lo, double *hi)
{
    const kbc_stats *t = &r->time;
    if (y->time) {
        *lo = t->min;
        *hi = t->max;
    } else {
        double v = rate_of(r, y->rk);
        *lo = t->max > 0 ? v * t->median / t->max : NAN;
        *hi = t->min > 0 ? v * t->median / t->min : NAN;
    }
}

/* Picks the unit from the largest value to be drawn (in GB/s, GFLOP/s,
   items/s or seconds), so that the axis reads 1 to 999: 1.2 TB/s, 46
   TFLOP/s, 3.4 Gitems/s, 120 us. */
static void y_unit(y_axis *y, double largest)
{
    static const struct {
        double at;
        const char *prefix;
    } si[] = {{1e-9, "n"}, {1e-6, "u"}, {1e-3, "m"}, {1, ""}, {1e3, "k"}, {1e6, "M"},
              {1e9, "G"},  {1e12, "T"}, {1e15, "P"}};
    /* Rates are counted in GB/s and GFLOP/s (1e9), items in items/s (1),
       time in seconds (1). */
    double base = y->time || y->rk == RATE_ITEMS ? 1 : 1e9;
    double v = largest * base;
    size_t k = 0, n = sizeof si / sizeof *si;
    int min_k = y->time ? 0 : 3; /* rates: no smaller prefix than none */
    int max_k = y->time ? 3 : (int)n - 1;
    k = (size_t)min_k;
    while ((int)k < max_k && isfinite(v) && v >= si[k + 1].at)
        k++;
    y->scale = base / si[k].at;
    static char units[4][24];
    static int at;
    char *u = units[at++ % 4];
    snprintf(u, sizeof units[0], "%s%s", si[k].prefix,
             y->time ? "s" : y->rk == RATE_GBPS ? "B/s" : y->rk == RATE_GFLOPS ? "FLOP/s"
                                                                               : "items/s");
    y->unit = u;
}

static char *y_label(const y_axis *y)
{
    if (y->time)
        return kbc_xasprintf("median time (%s, lower is better)", y->unit);
    return kbc_xasprintf("throughput (%s%s)", y->unit,
                         y->rk == RATE_GBPS ? ", bytes read + written" : "");
}

/* Sixteen colours that tell lines apart (no red: the ceiling is red), and
   fifteen markers; a chart's k-th line takes colour k and marker k, and a
   library's line is thicker and dashed. */
static const char *const palette[16] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
    "#bcbd22", "#393b79", "#637939", "#8c6d31", "#7b4173", "#3b9ab2", "#fdae61", "#1a1a1a"};
static const int markers[15] = {7, 5, 9, 11, 13, 15, 1, 2, 3, 6, 4, 8, 10, 12, 14};


static long param_index(const kbc_record *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_params; i++)
        if (strcmp(r->params[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* A file name from an experiment and group, safe as a name and as
   gnuplot's argument: letters, digits, '-', '_' and '.' kept and anything
   else (a '/', a space, a control character, each byte of a non-ASCII
   character) made '_'; a '.' after a '.' made '_' too (no ".."), a name
   that would start with '-' or '.' (an option, a hidden file) or be empty
   gets a leading '_', and it is cut to 120 bytes.  "-2", "-3" ... is added
   when an earlier plot of this command took the name. */
static char *file_stem(const char *const *taken, size_t n_taken, const char *exp,
                       const char *group)
{
    char *s = group[0] ? kbc_xasprintf("_%s-%s", exp, group) : kbc_xasprintf("_%s", exp);
    char *o = s;
    for (const char *p = s + 1; *p && o - s < 120; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '-' || ch == '_' || (ch == '.' && *o != '.');
        *++o = ok ? ch : '_';
    }
    o[1] = '\0';
    /* s[0] is the '_' kept only where the name needs it. */
    if (s[1] && s[1] != '-' && s[1] != '.')
        memmove(s, s + 1, strlen(s));
    char *name = kbc_xstrdup(s);
    for (unsigned k = 2;; k++) {
        int clash = 0;
        for (size_t i = 0; i < n_taken && !clash; i++)
            clash = strcmp(taken[i], name) == 0;
        if (!clash)
            break;
        free(name);
        name = kbc_xasprintf("%s-%u", s, k);
    }
    free(s);
    return name;
}

/* s and t joined (s freed): for titles put together before gp_quote(). */
static char *join(char *s, const char *t)
{
    char *j = kbc_xasprintf("%s%s", s, t);
    free(s);
    return j;
}

/* The output file "stem.ext" as a gnuplot string. */
static void gp_file(FILE *f, const char *stem, const char *ext)
{
    char *name = kbc_xasprintf("%s.%s", stem, ext);
    gp_string(f, name, 0);
    free(name);
}

/* The lines common to every script: both terminals, the output names. */
static void gp_head(FILE *f, const char *stem)
{
    fprintf(f, "# Written by kbench plot; run with: gnuplot %s.gp (writes %s.svg and %s.png)\n",
            stem, stem, stem);
    fprintf(f, "reset\nset encoding utf8\n");
}

/* The SVG terminal goes before the plot command (so that no window ever
   opens), the PNG after it, through replot. */
static void gp_svg(FILE *f, const char *stem, int height)
{
    fprintf(f, "set terminal svg size 900,%d dynamic enhanced font 'sans,13'\n", height);
    fprintf(f, "set output ");
    gp_file(f, stem, "svg");
    fputc('\n', f);
}

static void gp_outputs(FILE *f, const char *stem, int height)
{
    fprintf(f, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
               "    set terminal pngcairo size 900,%d enhanced font 'sans,11'\n"
               "} else {\n"
               "    set terminal png size 900,%d enhanced\n"
               "}\n",
            height, height);
    fprintf(f, "set output ");
    gp_file(f, stem, "png");
    fprintf(f, "\nreplot\nset output\n");
}

typedef struct plot_ctx {
    const kbc_record *recs;
    size_t n;
    const char *gpu;
    const char *dir;
    FILE *out;
    kbc_plot_opts opt;
    char **written; /* stems written, for running gnuplot */
    size_t n_written;
} plot_ctx;

/* Opens dir/stem.gp; NULL after saying why. */
static FILE *open_script(plot_ctx *c, const char *stem, char **path)
{
    *path = kbc_xasprintf("%s/%s.gp", c->dir, stem);
    FILE *f = fopen(*path, "w");
    if (!f)
        fprintf(stderr, "kbench: cannot write %s: %s.\n", *path, strerror(errno));
    return f;
}

/* Closes a script and notes it for gnuplot.  Returns 0, or -1 after
   saying why. */
static int close_script(plot_ctx *c, FILE *f, const char *path, const char *stem)
{
    if (fclose(f) != 0) {
        fprintf(stderr, "kbench: cannot write %s.\n", path);
        return -1;
    }
    fprintf(c->out, "wrote %s\n", path);
    c->written = kbc_xrealloc(c->written, (c->n_written + 1) * sizeof *c->written);
    c->written[c->n_written++] = kbc_xstrdup(stem);
    return 0;
}

/* The y axis's scale and range lines: log (--logy) or from zero. */
static void y_lines(FILE *f, const plot_ctx *c, const y_axis *y)
{
    char *yl = y_label(y);
    fprintf(f, "set ylabel ");
    gp_quote(f, yl);
    free(yl);
    if (c->opt.logy)
        fprintf(f, "\nset logscale y\nset yrange [*:*]\n");
    else
        fprintf(f, "\nset yrange [0:*]\n");
}

/* How a chart's x axis places the values of its parameter. */
typedef enum { X_LOG, X_LINEAR, X_SLOTS } x_kind;

/* Chooses for the distinct values v[0..n) (ascending):
   - a geometric sweep (all positive, each value at least 1.25 times the
     one before, spanning a factor of 4 or more): a log axis, base 2 with
     2^k tics when every value is a power of two;
   - values no two of which are closer than a fiftieth of their span: a
     linear axis;
   - anything else (4096 and 4097 in a sweep to 8192, which would draw as
     one x): one slot per value, labelled with the value. */
static x_kind x_pick(const double *v, size_t n, int *pow2)
{
    *pow2 = 0;
    if (n < 2)
        return X_LINEAR;
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
        return X_LOG;
    }
    return spread ? X_LINEAR : X_SLOTS;
}

/* One point of a line: x (or its slot), y, and the band. */
typedef struct pt {
    double x, y, lo, hi;
} pt;

static int pt_cmp(const void *a, const void *b)
{
    double x = ((const pt *)a)->x, y = ((const pt *)b)->x;
    return (x > y) - (x < y);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether row r stands for every value of x (a variant that ignores it:
   one row for all the points, drawn flat across the chart). */
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

/* One line plot: rows of experiment exp and group, x the swept parameter
   (size_x: a size, labelled in elements). */
static int line_plot(plot_ctx *c, const char *exp, const char *group, const char *x, int size_x)
{
    /* The variants in the order they first appear, and the rate. */
    const char *vars[KB_MAX_VARIANTS];
    uint32_t flags[KB_MAX_VARIANTS];
    size_t nv = 0;
    rate_votes votes = {0};
    char g[512];
    for (size_t i = 0; i < c->n; i++) {
        const kbc_record *r = &c->recs[i];
        kbc_record_group(r, x, ",", g, sizeof g);
        if (strcmp(r->experiment, exp) != 0 || strcmp(g, group) != 0)
            continue;
        rate_vote(&votes, r);
        size_t k = 0;
        while (k < nv && strcmp(vars[k], r->variant) != 0)
            k++;
        if (k == nv && nv < KB_MAX_VARIANTS) {
            flags[nv] = r->flags;
            vars[nv++] = r->variant;
        }
    }
    y_axis y = {.time = c->opt.metric_time, .rk = rate_pick(&votes)};

    /* Each variant's points, and the distinct x values of the chart. */
    pt *pts[KB_MAX_VARIANTS];
    size_t npt[KB_MAX_VARIANTS] = {0};
    int flat[KB_MAX_VARIANTS] = {0};
    double *xs = kbc_xcalloc(c->n + 1, sizeof *xs);
    size_t nx = 0;
    plot_ceiling ceiling = {0, ""};
    double largest = 0;
    for (size_t k = 0; k < nv; k++) {
        pts[k] = kbc_xcalloc(c->n + 1, sizeof *pts[k]);
        for (size_t i = 0; i < c->n; i++) {
            const kbc_record *r = &c->recs[i];
            kbc_record_group(r, x, ",", g, sizeof g);
            if (strcmp(r->experiment, exp) != 0 || strcmp(g, group) != 0 ||
                strcmp(r->variant, vars[k]) != 0 || !kbc_record_ran(r))
                continue;
            long pi = param_index(r, x);
            pt q = {pi >= 0 ? kbc_param_number(&r->params[pi]) : NAN, y_raw(&y, r), NAN, NAN};
            if (!isfinite(q.x) || !isfinite(q.y))
                continue;
            y_range(&y, r, &q.lo, &q.hi);
            if (!y.time)
                ceiling_note(&ceiling, y.rk, r);
            flat[k] |= ignores_x(r, x);
            pts[k][npt[k]++] = q;
            xs[nx++] = q.x;
            largest = fmax(largest, c->opt.band && isfinite(q.hi) ? fmax(q.y, q.hi) : q.y);
        }
        qsort(pts[k], npt[k], sizeof *pts[k], pt_cmp);
    }
    qsort(xs, nx, sizeof *xs, dbl_cmp);
    size_t nd = 0;
    for (size_t i = 0; i < nx; i++)
        if (nd == 0 || xs[i] != xs[nd - 1])
            xs[nd++] = xs[i];
    int rc = 0;
    if (nd == 0) {
        /* Nothing ran (every row skipped, erred or crashed): no chart. */
        fprintf(c->out, "no plot for %s%s%s%s: none of its rows ran\n", kbc_text_visible(exp),
                group[0] ? " (" : "", kbc_text_visible(group), group[0] ? ")" : "");
        goto out;
    }
    int pow2;
    x_kind xk = x_pick(xs, nd, &pow2);
    y_unit(&y, largest);

    char *stem = file_stem((const char *const *)c->written, c->n_written, exp, group);
    char *path;
    FILE *f = open_script(c, stem, &path);
    if (!f) {
        free(path);
        free(stem);
        rc = -1;
        goto out;
    }
    gp_head(f, stem);
    /* Each variant's points, sorted by x, as a data block: x (its slot on
       a slotted axis), y, and the slowest and fastest run; a variant that
       ignores x has its one row at every x. */
    for (size_t k = 0; k < nv; k++) {
        fprintf(f, "$v%zu << EOD\n", k);
        for (size_t j = 0; j < (flat[k] && npt[k] ? nd : npt[k]); j++) {
            pt q = flat[k] ? pts[k][0] : pts[k][j];
            double xv = flat[k] ? xs[j] : q.x;
            if (xk == X_SLOTS) {
                size_t slot = 0;
                while (slot + 1 < nd && xs[slot] != xv)
                    slot++;
                xv = (double)slot;
            }
            fprintf(f, "%.17g %.9g", xv, q.y * y.scale);
            if (c->opt.band)
                fprintf(f, " %.9g %.9g", (isfinite(q.lo) ? q.lo : q.y) * y.scale,
                        (isfinite(q.hi) ? q.hi : q.y) * y.scale);
            fputc('\n', f);
        }
        fprintf(f, "EOD\n");
    }
    char *title = kbc_xstrdup(exp);
    if (group[0]) {
        title = join(title, " (");
        title = join(title, group);
        title = join(title, ")");
    }
    if (c->gpu) {
        title = join(title, ", ");
        title = join(title, c->gpu);
    }
    fprintf(f, "set title ");
    gp_quote(f, title);
    free(title);
    char *xl = kbc_xasprintf("%s%s%s", x,
                             xk == X_LOG ? (size_x ? " (elements, log2 scale)" : " (log scale)")
                             : size_x    ? " (elements)"
                                         : "",
                             xk == X_SLOTS ? ", one slot per value" : "");
    fprintf(f, "\nset xlabel ");
    gp_quote(f, xl);
    free(xl);
    fputc('\n', f);
    if (xk == X_LOG && pow2)
        fprintf(f, "set logscale x 2\nset format x '2^{%%L}'\n");
    else if (xk == X_LOG)
        fprintf(f, "set logscale x 10\n");
    if (xk == X_SLOTS || (xk == X_LINEAR && nd <= 16)) {
        /* A tic at each value, labelled with it (a slot's position is
           its index). */
        fprintf(f, "set xtics (");
        for (size_t i = 0; i < nd; i++) {
            char label[40];
            snprintf(label, sizeof label, "%.10g", xs[i]);
            gp_quote(f, label);
            fprintf(f, " %.17g%s", xk == X_SLOTS ? (double)i : xs[i], i + 1 < nd ? ", " : ")\n");
        }
        if (xk == X_SLOTS)
            fprintf(f, "set xrange [-0.5:%zu.5]\n", nd - 1);
    }
    y_lines(f, c, &y);
    if (!y.time && ceiling.value > 0 && largest > ceiling.value)
        above_note(f, y.rk);
    /* Room above the highest line, so that a ceiling is not hidden in
       the border; the legend below the chart, outside the data. */
    fprintf(f, "set offsets 0, 0, graph 0.08, 0\nset grid\n"
               "set key below center horizontal\n");
    fprintf(f, "set style data linespoints\n");
    size_t drawn = 0;
    for (size_t k = 0; k < nv; k++)
        drawn += npt[k] > 0;
    /* The legend takes three entries a row below the chart: a taller
       canvas past two rows, so that the data keeps its height. */
    size_t key_rows = (drawn + (ceiling.value > 0) + 2) / 3;
    int height = 560 + 20 * (key_rows > 2 ? (int)key_rows - 2 : 0);
    gp_svg(f, stem, height);
    fprintf(f, "plot \\\n");
    size_t at = 0;
    for (size_t k = 0; k < nv; k++) {
        if (!npt[k])
            continue; /* nothing of it ran here: no empty legend entry */
        const char *colour = palette[at % 16];
        int lib = (flags[k] & KB_VARIANT_LIBRARY) != 0;
        int mk = markers[at % 15];
        if (c->opt.band) {
            fprintf(f, "  $v%zu using 1:3:4 with filledcurves fs transparent solid 0.15 noborder "
                       "lc rgb ",
                    k);
            gp_string(f, colour, 0);
            fprintf(f, " notitle, \\\n");
        }
        fprintf(f, "  $v%zu using 1:2 title ", k);
        if (lib) {
            char *t = kbc_xasprintf("%s (library)", vars[k]);
            gp_quote(f, t);
            free(t);
            fprintf(f, " lw 3 dt 2 pt %d ps 1.2 lc rgb ", mk);
        } else {
            gp_quote(f, vars[k]);
            fprintf(f, " lw 1.5 pt %d ps 1 lc rgb ", mk);
        }
        gp_string(f, colour, 0);
        at++;
        fprintf(f, "%s", at < drawn || ceiling.value > 0 ? ", \\\n" : "\n");
    }
    ceiling_line(f, y.rk, &ceiling, y.scale, y.unit);
    gp_outputs(f, stem, height);
    rc = close_script(c, f, path, stem);
    free(path);
    free(stem);
out:
    for (size_t k = 0; k < nv; k++)
        free(pts[k]);
    free(xs);
    return rc;
}

/* A bar chart of the variants at one point (an experiment that sweeps no
   numeric parameter): the rows of i0 .. i1 of the file that ran. */
static int bar_plot(plot_ctx *c, size_t i0, size_t i1)
{
    const kbc_record *r0 = &c->recs[i0];
    rate_votes votes = {0};
    for (size_t i = i0; i < i1; i++)
        rate_vote(&votes, &c->recs[i]);
    y_axis y = {.time = c->opt.metric_time, .rk = rate_pick(&votes)};
    char g[512], pt_no[32];
    kbc_record_group(r0, NULL, ",", g, sizeof g);
    if (!g[0])
        snprintf(g, sizeof g, "point%llu", (unsigned long long)r0->point + 1);
    /* The rows drawn: those that ran and have a value. */
    size_t *rows = kbc_xcalloc(i1 - i0 + 1, sizeof *rows), m = 0;
    plot_ceiling ceiling = {0, ""};
    double largest = 0;
    for (size_t i = i0; i < i1; i++) {
        const kbc_record *r = &c->recs[i];
        double v = y_raw(&y, r), lo, hi;
        if (!kbc_record_ran(r) || !isfinite(v))
            continue;
        y_range(&y, r, &lo, &hi);
        largest = fmax(largest, c->opt.band && isfinite(hi) ? fmax(v, hi) : v);
        if (!y.time)
            ceiling_note(&ceiling, y.rk, r);
        rows[m++] = i;
    }
    if (m == 0) {
        fprintf(c->out, "no plot for %s (%s): none of its rows ran\n",
                kbc_text_visible(r0->experiment), kbc_text_visible(g));
        free(rows);
        return 0;
    }
    y_unit(&y, largest);
    char *stem = file_stem((const char *const *)c->written, c->n_written, r0->experiment, g);
    char *path;
    FILE *f = open_script(c, stem, &path);
    if (!f) {
        free(path);
        free(stem);
        free(rows);
        return -1;
    }
    gp_head(f, stem);
    /* The data: the value, whether the row is a library's, the slowest and
       fastest run; numbers only, the variants' names are the tic labels. */
    fprintf(f, "$bars << EOD\n");
    for (size_t j = 0; j < m; j++) {
        const kbc_record *r = &c->recs[rows[j]];
        double v = y_raw(&y, r), lo, hi;
        y_range(&y, r, &lo, &hi);
        fprintf(f, "%.9g %d %.9g %.9g\n", v * y.scale, (r->flags & KB_VARIANT_LIBRARY) ? 1 : 0,
                (isfinite(lo) ? lo : v) * y.scale, (isfinite(hi) ? hi : v) * y.scale);
    }
    fprintf(f, "EOD\n");
    /* The title: the experiment and point, the parameters four to a line
       (so that a long title is not cut off at the canvas's edges), the
       GPU; its lines joined by gnuplot's string concatenation. */
    snprintf(pt_no, sizeof pt_no, "%llu", (unsigned long long)r0->point + 1);
    char *line = kbc_xasprintf("%s point %s", r0->experiment, pt_no);
    fprintf(f, "set title ");
    for (uint32_t i = 0; i < r0->n_params; i++) {
        if (i % 4 == 0) {
            gp_quote(f, line);
            fprintf(f, " . \"\\n\" . ");
            free(line);
            line = kbc_xstrdup("");
        } else {
            line = join(line, ", ");
        }
        line = join(line, r0->params[i].name);
        line = join(line, "=");
        line = join(line, r0->params[i].text);
    }
    if (c->gpu) {
        gp_quote(f, line);
        fprintf(f, " . \"\\n\" . ");
        free(line);
        line = kbc_xstrdup(c->gpu);
    }
    gp_quote(f, line);
    free(line);
    fputc('\n', f);
    y_lines(f, c, &y);
    if (!y.time && ceiling.value > 0 && largest > ceiling.value)
        above_note(f, y.rk);
    fprintf(f, "set offsets 0, 0, graph 0.08, 0\n"
               "set grid ytics\nset xrange [-0.6:%zu.4]\n",
            m - 1);
    fprintf(f, "set style fill solid 0.7 border -1\nset boxwidth 0.7\n");
    fprintf(f, "set xtics rotate by -35 (");
    for (size_t j = 0; j < m; j++) {
        gp_quote(f, c->recs[rows[j]].variant);
        fprintf(f, " %zu%s", j, j + 1 < m ? ", " : "");
    }
    fprintf(f, ")\n");
    fprintf(f, "set key above horizontal\n");
    gp_svg(f, stem, 560);
    /* With a log y axis the boxes start at the axis's bottom. */
    fprintf(f, "plot $bars using 0:($2 == 0 ? $1 : 1/0) with boxes lc rgb '%s' title 'kernel', "
               "\\\n",
            palette[0]);
    fprintf(f, "  $bars using 0:($2 == 1 ? $1 : 1/0) with boxes lc rgb '#404040' fs pattern 2 "
               "title 'library'%s\n",
            c->opt.band || ceiling.value > 0 ? ", \\" : "");
    if (c->opt.band)
        fprintf(f, "  $bars using 0:1:3:4 with yerrorbars lc rgb '#000000' pt 7 ps 0 "
                   "title 'slowest to fastest run'%s\n",
                ceiling.value > 0 ? ", \\" : "");
    ceiling_line(f, y.rk, &ceiling, y.scale, y.unit);
    gp_outputs(f, stem, 560);
    int rc = close_script(c, f, path, stem);
    free(path);
    free(stem);
    free(rows);
    return rc;
}

/* Runs gnuplot on dir/stem.gp in dir, its stderr (warnings such as
   "Skipping data file with no valid points", or the reason it fails) into
   a pipe rather than onto kbench's.  Returns its exit status (-1 when it
   could not be started), with the last line it wrote on stderr in why. */
static int run_gnuplot(const char *dir, const char *stem, char *why, size_t n)
{
    why[0] = '\0';
    /* "./": the script is never taken for an option. */
    char *script = kbc_xasprintf("./%s.gp", stem);
    char *argv[] = {"gnuplot", script, NULL};
    int rd;
    pid_t pid = kbc_child_start(argv, dir, STDERR_FILENO, 0, &rd);
    free(script);
    if (pid < 0)
        return -1;
    /* Read to the end (so that gnuplot never blocks on a full pipe),
       keeping the last non-empty line. */
    char buf[4096], line[512] = "";
    size_t used = 0;
    ssize_t got;
    while ((got = read(rd, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR)) {
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] == '\n') {
                line[used] = '\0';
                if (used)
                    snprintf(why, n, "%s", kbc_text_visible(line));
                used = 0;
            } else if (used + 1 < sizeof line) {
                line[used++] = buf[i];
            }
        }
    }
    line[used] = '\0';
    if (used)
        snprintf(why, n, "%s", kbc_text_visible(line));
    close(rd);
    return kbc_child_wait(pid);
}

int kbc_cmd_plot(const char *path, const char *dir, const char *md, const kbc_plot_opts *opt,
                 FILE *out, FILE *err)
{
    kbc_record *recs = NULL;
    size_t n = 0;
    kbc_diag d = {{0}};
    /* Parsed once: the rows and the GPU's name both come from it. */
    json_t *doc = kbc_results_load(path, &d);
    if (!doc || kbc_results_from_json(doc, path, &recs, &n, &d) != 0) {
        fprintf(err, "kbench: %s\n", d.msg);
        json_decref(doc);
        return KBC_EXIT_USAGE;
    }
    const json_t *gpu = json_object_get(json_object_get(doc, "machine"), "gpu");
    plot_ctx c = {.recs = recs, .n = n, .gpu = json_is_string(gpu) ? json_string_value(gpu) : NULL,
                  .dir = dir, .out = out};
    if (opt)
        c.opt = *opt;
    int code = 0;
    /* Experiments in the order they first appear; within one, one plot per
       group of the other swept parameters. */
    for (size_t i = 0; i < n && code == 0; i++) {
        const kbc_record *r = &recs[i];
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(recs[k].experiment, r->experiment) == 0;
        if (seen)
            continue;
        /* The x axis: the first swept size parameter, else the first swept
           number (line_plot places its values: x_pick). */
        const char *x = NULL;
        int size_x = 0;
        for (uint32_t q = 0; q < r->n_params && !x; q++)
            if (r->params[q].swept && r->params[q].type == KB_PARAM_SIZE) {
                x = r->params[q].name;
                size_x = 1;
            }
        for (uint32_t q = 0; q < r->n_params && !x; q++)
            if (r->params[q].swept &&
                (r->params[q].type == KB_PARAM_INT || r->params[q].type == KB_PARAM_FLOAT))
                x = r->params[q].name;
        if (!x) {
            /* A bar chart per point: consecutive rows of one point. */
            for (size_t a = i; a < n && code == 0;) {
                size_t b = a;
                while (b < n && strcmp(recs[b].experiment, r->experiment) == 0 &&
                       recs[b].point == recs[a].point)
                    b++;
                if (strcmp(recs[a].experiment, r->experiment) == 0 && b > a)
                    code = bar_plot(&c, a, b) ? KBC_EXIT_SYSTEM : 0;
                a = b > a ? b : a + 1;
            }
            continue;
        }
        char g[512];
        for (size_t k = i; k < n && code == 0; k++) {
            if (strcmp(recs[k].experiment, r->experiment) != 0)
                continue;
            kbc_record_group(&recs[k], x, ",", g, sizeof g);
            int done = 0;
            for (size_t j = i; j < k && !done; j++) {
                char h[512];
                kbc_record_group(&recs[j], x, ",", h, sizeof h);
                done = strcmp(recs[j].experiment, r->experiment) == 0 && strcmp(g, h) == 0;
            }
            if (!done)
                code = line_plot(&c, r->experiment, g, x, size_x) ? KBC_EXIT_SYSTEM : 0;
        }
    }
    if (code == 0 && c.n_written) {
        if (!kbc_have_gnuplot()) {
            fprintf(err, "kbench: gnuplot is not installed, so only the scripts were written; "
                         "install it (apt-get install gnuplot-nox) and run gnuplot on each "
                         "script in %s to make the SVG and PNG files.\n",
                    dir);
        } else {
            for (size_t k = 0; k < c.n_written && code == 0; k++) {
                char why[600];
                int st = run_gnuplot(dir, c.written[k], why, sizeof why);
                if (st != 0) {
                    fprintf(err, "kbench: gnuplot refused %s/%s.gp (exit status %d%s%s).\n", dir,
                            c.written[k], st, why[0] ? ": " : "", why);
                    code = KBC_EXIT_SYSTEM;
                } else {
                    fprintf(out, "wrote %s/%s.svg and %s/%s.png\n", dir, c.written[k], dir,
                            c.written[k]);
                }
            }
        }
    }
    if (code == 0 && md && c.n_written) {
        FILE *f = fopen(md, "a");
        int drawn = kbc_have_gnuplot();
        if (f) {
            fprintf(f, "\n## Plots\n\n");
            for (size_t k = 0; k < c.n_written; k++)
                if (drawn)
                    fprintf(f, "![%s](%s.svg)\n\n", c.written[k], c.written[k]);
                else
                    fprintf(f, "- `%s.gp` (run gnuplot on it for %s.svg and %s.png)\n",
                            c.written[k], c.written[k], c.written[k]);
        }
        if (!f || fclose(f) != 0) {
            fprintf(err, "kbench: cannot write %s.\n", md);
            code = KBC_EXIT_SYSTEM;
        }
    }
    for (size_t k = 0; k < c.n_written; k++)
        free(c.written[k]);
    free(c.written);
    json_decref(doc);
    kbc_records_free(recs, n);
    return code;
}

/* ---- kbench tune's trace (plot.h) ---- */

int kbc_plot_trace(const char *dir, const char *stem, const char *title, const char *ylabel,
                   const char *const *names, const double *const *values,
                   const double *const *best, const size_t *n, size_t n_series, FILE *out)
{
    char *path = kbc_xasprintf("%s/%s.gp", dir, stem);
    FILE *f = fopen(path, "w");
    free(path);
    if (!f)
        return -1;
    gp_head(f, stem);
    gp_svg(f, stem, 560);
    fprintf(f, "set title ");
    gp_quote(f, title);
    fprintf(f, "\nset xlabel 'evaluation'\nset ylabel ");
    gp_quote(f, ylabel);
    fprintf(f, "\nset key outside right top\nset grid\nset logscale y\n");
    /* One data block per series: evaluation, value (NaN: invalid or
       failed, not drawn), best so far. */
    for (size_t s = 0; s < n_series; s++) {
        fprintf(f, "$trace%zu << EOD\n", s);
        for (size_t i = 0; i < n[s]; i++)
            fprintf(f, "%zu %.9g %.9g\n", i + 1, isfinite(values[s][i]) ? values[s][i] : NAN,
                    isfinite(best[s][i]) ? best[s][i] : NAN);
        fprintf(f, "EOD\n");
    }
    fprintf(f, "plot ");
    for (size_t s = 0; s < n_series; s++) {
        fprintf(f, "%s$trace%zu using 1:2 with points pt 7 ps 0.5 lc %zu title ", s ? ", \\\n     " : "",
                s, s + 1);
        char *t = kbc_xasprintf("%s: tried", names[s]);
        gp_quote(f, t);
        free(t);
        fprintf(f, ", $trace%zu using 1:3 with steps lw 2 lc %zu title ", s, s + 1);
        t = kbc_xasprintf("%s: best so far", names[s]);
        gp_quote(f, t);
        free(t);
    }
    fprintf(f, "\n");
    gp_outputs(f, stem, 560);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return -1;
    fprintf(out, "%s/%s.gp\n", dir, stem);
    /* Nothing finite to draw (every candidate failed): gnuplot would
       refuse the script, which still says what was tried. */
    int any = 0;
    for (size_t s = 0; s < n_series && !any; s++)
        for (size_t i = 0; i < n[s] && !any; i++)
            any = isfinite(values[s][i]);
    char why[512];
    if (any && kbc_have_gnuplot() && run_gnuplot(dir, stem, why, sizeof why) != 0)
        return -2;
    return 0;
}
