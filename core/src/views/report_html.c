/* report_html.c -- see report_html.h.
 *
 * Every text in the report that kbench did not write itself (a name, a
 * parameter's text, a reason, the GPU's name, the command line, a path)
 * reaches the file through kbc_text_html() only (text.h), between tags or
 * in a quoted attribute value alike; numbers are written by printf.  The
 * page's one script is kbench's own constant text (report_script below),
 * and the page's Content-Security-Policy allows that script alone (by its
 * SHA-256) and no network at all: a name that escaped its escaping would
 * still run nothing.
 *
 * The plots are the charts of `kbench plot` (analysis/chart.h): the same
 * charts, x axes, rates, units and ceilings, and the same flat line for a
 * variant that ignores x; this file only draws them as SVG.  Rows with
 * energy (kbc_record_has_energy) add the energy's views to their plots
 * (kbench plot --metric energy and efficiency) and its columns to the
 * tables; with a baseline, the energy's verdict too (baseline.h).
 */
#define _GNU_SOURCE
#include "report_html.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baseline.h"
#include "chart.h"
#include "record.h"
#include "results_read.h"
#include "sha256.h"
#include "suspect.h"
#include "sweep_summary.h"
#include "text.h"
#include "util.h"

/* ---- small pieces ---------------------------------------------------- */

#define H kbc_text_html

/* A number for a table cell: 4 significant digits, "-" for NaN. */
static const char *fmt_num(double x, const char *unit, char *buf, size_t n)
{
    if (!isfinite(x))
        snprintf(buf, n, "-");
    else if (fabs(x) >= 1e4 && fabs(x) < 1e15)
        snprintf(buf, n, "%.0f%s", x, unit);
    else
        snprintf(buf, n, "%.4g%s", x, unit);
    return buf;
}

/* A percentage for a table cell: "0.47%", "12.3%", "-" for NaN. */
static const char *fmt_pct(double x, char *buf, size_t n)
{
    if (!isfinite(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, fabs(x) < 10 ? "%.2f%%" : "%.1f%%", x);
    return buf;
}

/* A cell's sort value: data-v="x" for a finite x, nothing else (the
   script sorts a cell without one last). */
static void data_v(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, " data-v=\"%.17g\"", x);
}

/* s cut to at most max characters (at a character's end, never inside a
   UTF-8 sequence), with "…" where cut; malloc'd. */
static char *shorten(const char *s, size_t max)
{
    size_t chars = 0;
    const char *p = s;
    while (*p && chars < max) {
        size_t len = kbc_utf8_len(p);
        p += len ? len : 1;
        chars++;
    }
    if (!*p)
        return kbc_xstrdup(s);
    return kbc_xasprintf("%.*s\xe2\x80\xa6", (int)(p - s), s);
}


static const kbc_rec_param *param_of(const kbc_record *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_params; i++)
        if (strcmp(r->params[i].name, name) == 0)
            return &r->params[i];
    return NULL;
}

/* ---- SVG ---------------------------------------------------------------- */

/* Lines and bars of kernels: distinct colours, none red (the ceiling is
   red) and none grey (libraries are black and grey, their lines dashed). */
static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#bcbd22", "#7b4173", "#393b79",
                                      "#637939", "#a55194", "#6b6ecf", "#8c6d31"};
#define N_PALETTE (sizeof palette / sizeof *palette)
#define CEILING_COLOUR "#c00000"

/* A step of 1, 2 or 5 times a power of ten that cuts span into about
   `want` pieces. */
static double nice_step(double span, int want)
{
    double raw = span / want;
    double mag = pow(10, floor(log10(raw)));
    double norm = raw / mag;
    return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

/* One axis: a value's position from lo to hi (in log2 or log10 units when
   log is 2 or 10) mapped onto [p0, p1]. */
typedef struct axis {
    double lo, hi;
    int log;
    double p0, p1;
} axis;

static double axis_at(const axis *a, double v)
{
    double u = a->log == 2 ? log2(v) : a->log == 10 ? log10(v) : v;
    return a->p0 + (u - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

/* The plot area of a line plot, in pixels. */
enum { LW = 760, LH = 360, ML = 74, MR = 200, MT = 14, MB = 46 };

/* The tick label of a value on axis a (time: seconds). */
static void tick_label(FILE *f, const axis *a, double u, int time)
{
    char buf[48];
    if (a->log == 2) {
        fprintf(f, "2<tspan dy=\"-6\" font-size=\"9\">%.0f</tspan>", u);
        return;
    }
    double v = a->log == 10 ? pow(10, u) : u;
    if (time)
        fputs(kbc_human_seconds(v, buf, sizeof buf), f);
    else
        fprintf(f, "%.6g", v);
}

/* One tick of an axis at position p with its grid line: vertical for x,
   horizontal for y, over the box [x0, x1] by [y0, y1].  The caller writes
   its label and closes the <text>. */
static void tick_at(FILE *f, double p, int is_x, double x0, double x1, double y0, double y1)
{
    if (is_x) {
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", p, y0,
                p, y1);
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", p, y1 + 16);
    } else {
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, p,
                x1, p);
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", x0 - 5, p + 4);
    }
}

/* The ticks and grid of axis a, evenly spaced. */
static void svg_ticks(FILE *f, const axis *a, int is_x, int time, double x0, double x1, double y0,
                      double y1)
{
    double lo = a->lo, hi = a->hi;
    double step = a->log ? ceil((hi - lo) / 10) : nice_step(hi - lo, 6);
    if (step <= 0)
        step = 1;
    for (double u = ceil(lo / step - 1e-9) * step; u <= hi + 1e-9 * fabs(hi) + 1e-12; u += step) {
        if (fabs(u) < 1e-9 * step)
            u = 0; /* not "-0" */
        tick_at(f, a->p0 + (u - lo) / (hi - lo) * (a->p1 - a->p0), is_x, x0, x1, y0, y1);
        tick_label(f, a, u, time);
        fputs("</text>", f);
    }
}

/* The x axis of a line chart: log (base 2 for powers of two), linear, or
   one slot per value (chart.h); nothing drawn: 1 to 2. */
static axis x_axis(const kbc_chart *ch)
{
    axis a = {.log = ch->x_scale != KBC_X_LOG ? 0 : ch->x_pow2 ? 2 : 10, .p0 = ML, .p1 = LW - MR};
    if (ch->nx == 0) {
        a.log = 0;
        a.lo = 1;
        a.hi = 2;
    } else if (ch->x_scale == KBC_X_SLOTS) {
        a.lo = -0.5;
        a.hi = (double)ch->nx - 0.5;
    } else {
        double lo = ch->xs[0], hi = ch->xs[ch->nx - 1];
        a.lo = a.log == 2 ? log2(lo) : a.log == 10 ? log10(lo) : lo;
        a.hi = a.log == 2 ? log2(hi) : a.log == 10 ? log10(hi) : hi;
    }
    if (a.hi <= a.lo) {
        a.lo -= 1;
        a.hi += 1;
    }
    return a;
}

/* Where x goes on the x axis of ch. */
static double x_at(const kbc_chart *ch, const axis *a, double x)
{
    return ch->x_scale == KBC_X_SLOTS ? axis_at(a, (double)kbc_chart_slot(ch, x)) : axis_at(a, x);
}

/* The x axis's ticks: one per value where the chart labels each value
   (kbc_chart_value_tics), else evenly spaced. */
static void x_ticks(FILE *f, const kbc_chart *ch, const axis *a)
{
    if (!kbc_chart_value_tics(ch) || ch->nx == 0) {
        svg_ticks(f, a, 1, 0, ML, LW - MR, MT, LH - MB);
        return;
    }
    for (size_t i = 0; i < ch->nx; i++) {
        tick_at(f, x_at(ch, a, ch->xs[i]), 1, ML, LW - MR, MT, LH - MB);
        fprintf(f, "%.10g</text>", ch->xs[i]);
    }
}

/* The views of a line plot: the rate on a linear axis from zero (as
   `kbench plot` draws it), the rate on a log-10 axis, the median time on
   a log-10 axis; where rows have energy, the energy per run on a log-10
   axis (as the time) and the work per joule from zero (as the rate). */
typedef enum { VIEW_RATE, VIEW_LOGRATE, VIEW_TIME, VIEW_ENERGY, VIEW_EFFICIENCY } view;
static const char *const view_names[] = {"rate", "lograte", "time", "energy", "efficiency"};

/* Whether a view's y axis is logarithmic. */
static int view_log(view v)
{
    return v == VIEW_LOGRATE || v == VIEW_TIME || v == VIEW_ENERGY;
}

/* The view a bar chart of the metric's chart is. */
static view view_of_metric(kbc_chart_metric m)
{
    return m == KBC_METRIC_TIME       ? VIEW_TIME
           : m == KBC_METRIC_ENERGY   ? VIEW_ENERGY
           : m == KBC_METRIC_EFFICIENCY ? VIEW_EFFICIENCY
                                        : VIEW_RATE;
}

/* A library's line: black, dark and light grey in turn, each dashed its
   own way. */
static const char *const lib_colours[] = {"#000000", "#606060", "#a0a0a0"};
static const char *const lib_dashes[] = {"7 4", "2 3", "10 3 2 3"};

/* A point's y in view v (in the chart's unit for a rate, seconds for the
   time), or NaN where the view has none. */
static double view_y(const kbc_chart *ch, const kbc_chart_point *q, view v)
{
    double y = v == VIEW_TIME ? q->y : q->y * ch->scale;
    return isfinite(y) && (!view_log(v) || y > 0) ? y : NAN;
}

/* A value as a tooltip shows it: "12.3 us", "1.2 TB/s", "3.4 mJ". */
static const char *value_text(const kbc_chart *ch, double y, char *buf, size_t n)
{
    if (ch->metric == KBC_METRIC_TIME)
        return kbc_human_seconds(y, buf, n);
    snprintf(buf, n, "%.4g %s", y, ch->unit);
    return buf;
}

/* One view of a line chart: ch is the chart of the rate (VIEW_RATE,
   VIEW_LOGRATE), of the time (VIEW_TIME), of the energy (VIEW_ENERGY) or
   of the efficiency (VIEW_EFFICIENCY). */
static void svg_lines(FILE *f, const kbc_chart *ch, view v, const char *label)
{
    double ymin = INFINITY, ymax = -INFINITY;
    for (size_t k = 0; k < ch->n_lines; k++)
        for (size_t i = 0; i < ch->lines[k].n; i++) {
            double y = view_y(ch, &ch->lines[k].pts[i], v);
            if (isnan(y))
                continue;
            ymin = fmin(ymin, y);
            ymax = fmax(ymax, y);
        }
    double ceiling = ch->ceiling * ch->scale;
    int ceil_shown = (v == VIEW_RATE || v == VIEW_LOGRATE) && ceiling > 0;
    axis ax = x_axis(ch);
    axis ay = {.log = view_log(v) ? 10 : 0, .p0 = LH - MB, .p1 = MT};
    if (ceil_shown) {
        ymax = isfinite(ymax) ? fmax(ymax, ceiling) : ceiling;
        ymin = isfinite(ymin) ? fmin(ymin, ceiling) : ceiling;
    }
    if (!view_log(v)) {
        ay.lo = 0;
        ay.hi = isfinite(ymax) && ymax > 0 ? ymax * 1.08 : 1;
    } else {
        if (!isfinite(ymin)) {
            ymin = 1;
            ymax = 10;
        }
        ay.lo = floor(log10(ymin));
        ay.hi = ceil(log10(ymax));
        if (ay.hi <= ay.lo)
            ay.hi = ay.lo + 1;
    }
    fprintf(f, "<svg class=\"%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
               "aria-label=\"",
            view_names[v], LW, LH, LW, LH);
    H(f, label);
    fputs("\">", f);
    x_ticks(f, ch, &ax);
    svg_ticks(f, &ay, 0, v == VIEW_TIME, ML, LW - MR, MT, LH - MB);
    fprintf(f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", ML, MT,
            LW - MR - ML, LH - MB - MT);
    fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (ML + LW - MR) / 2,
            LH - 8);
    char *xl = kbc_chart_xlabel(ch);
    H(f, xl);
    free(xl);
    char *yl = v == VIEW_TIME ? kbc_xstrdup("median time") : kbc_chart_ylabel(ch);
    fprintf(f, "</text><text class=\"label\" transform=\"translate(14 %d) rotate(-90)\" "
               "text-anchor=\"middle\">",
            (MT + LH - MB) / 2);
    H(f, yl);
    fprintf(f, "%s</text>", view_log(v) ? ", log scale" : "");
    free(yl);
    /* The lines, and the legend beside them: the lines that have points,
       a library's in black and greys. */
    double lx = LW - MR + 12, ly = MT + 10;
    size_t own = 0, lib = 0;
    for (size_t k = 0; k < ch->n_lines; k++) {
        const kbc_chart_line *l = &ch->lines[k];
        if (!l->n)
            continue;
        const char *colour = l->library ? lib_colours[lib % 3] : palette[own++ % N_PALETTE];
        char dash[48] = "";
        if (l->library)
            snprintf(dash, sizeof dash, " stroke-dasharray=\"%s\"", lib_dashes[lib++ % 3]);
        double width = l->library ? 2.6 : 1.6;
        /* A variant that ignores x has its one row at every x. */
        size_t np = l->flat ? ch->nx : l->n;
        fprintf(f, "<g class=\"series\"><polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s "
                   "points=\"",
                colour, width, dash);
        for (size_t i = 0; i < np; i++) {
            const kbc_chart_point *q = l->flat ? &l->pts[0] : &l->pts[i];
            double y = view_y(ch, q, v);
            if (!isnan(y))
                fprintf(f, "%.1f,%.1f ", x_at(ch, &ax, l->flat ? ch->xs[i] : q->x),
                        axis_at(&ay, y));
        }
        fputs("\"/>", f);
        for (size_t i = 0; i < np; i++) {
            const kbc_chart_point *q = l->flat ? &l->pts[0] : &l->pts[i];
            double y = view_y(ch, q, v), xv = l->flat ? ch->xs[i] : q->x;
            if (isnan(y))
                continue;
            char buf[48];
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"><title>",
                    x_at(ch, &ax, xv), axis_at(&ay, y), l->library ? "3.2" : "2.6",
                    l->library ? "#ffffff" : colour);
            H(f, l->variant);
            fputs(", ", f);
            H(f, ch->x);
            fprintf(f, "=%.17g: %s</title></circle>", xv, value_text(ch, y, buf, sizeof buf));
        }
        char *name = shorten(l->variant, 24);
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
                   "stroke-width=\"%.1f\"%s/><text class=\"legend\" x=\"%.0f\" y=\"%.0f\"><title>",
                lx, ly, lx + 22, ly, colour, width, dash, lx + 28, ly + 4);
        H(f, l->variant);
        fputs("</title>", f);
        H(f, name);
        fprintf(f, "%s</text></g>", l->library ? " (library)" : "");
        free(name);
        ly += 18;
    }
    if (ceil_shown) {
        char *t = kbc_chart_ceiling_title(ch);
        double y = axis_at(&ay, ceiling);
        fprintf(f, "<g class=\"ceiling\"><line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                   "stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"3 3\"/>",
                ML, y, LW - MR, y, CEILING_COLOUR);
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
                   "stroke-width=\"2\" stroke-dasharray=\"3 3\"/><text class=\"legend\" x=\"%.0f\" "
                   "y=\"%.0f\">",
                lx, ly, lx + 22, ly, CEILING_COLOUR, lx + 28, ly + 4);
        H(f, t);
        fputs("</text></g>", f);
        free(t);
    }
    fputs("</svg>", f);
}

/* One view of a bar chart of the variants at one point: a bar per row,
   its rate (with the ceiling), its median time, its energy per run or its
   work per joule (ch is the chart of that), all from zero; a row that did
   not run shows its status, and one without energy says so. */
static void svg_bars(FILE *f, const kbc_chart *ch, const char *label)
{
    enum { BW = 760, BL = 190, BR = 40, BT = 24, BB = 40, ROW = 22 };
    size_t n = ch->n_rows;
    int time = ch->metric == KBC_METRIC_TIME;
    double scale = time ? 1 : ch->scale, ceiling = time ? 0 : ch->ceiling * ch->scale;
    int h = BT + (int)n * ROW + BB;
    double top = 0;
    for (size_t i = 0; i < n; i++) {
        double v = kbc_chart_value(ch, ch->rows[i]) * scale;
        if (isfinite(v) && v > top)
            top = v;
    }
    if (ceiling > top)
        top = ceiling;
    axis ax = {.lo = 0, .hi = top > 0 ? top * 1.08 : 1, .p0 = BL, .p1 = BW - BR};
    fprintf(f, "<svg class=\"%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
               "aria-label=\"",
            view_names[view_of_metric(ch->metric)], BW, h, BW, h);
    H(f, label);
    fputs("\">", f);
    svg_ticks(f, &ax, 1, time, BL, BW - BR, BT, h - BB);
    char *yl = time ? kbc_xstrdup("median time") : kbc_chart_ylabel(ch);
    fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (BL + BW - BR) / 2,
            h - 6);
    H(f, yl);
    fputs("</text>", f);
    free(yl);
    size_t own = 0, group = 0;
    for (size_t i = 0; i < n; i++) {
        const kbc_record *r = ch->rows[i];
        int library = (r->flags & KB_VARIANT_LIBRARY) != 0;
        double y = BT + (double)i * ROW;
        /* A chart of several points groups its bars by point: each bar is
           named by its group and variant, and a variant keeps its colour. */
        group += i > 0 && r->point != ch->rows[i - 1]->point;
        char *full = ch->n_groups > 1 && group < ch->n_groups
                         ? kbc_xasprintf("%s %s", ch->group_labels[group], r->variant)
                         : kbc_xstrdup(r->variant);
        char *name = shorten(full, 26);
        fprintf(f, "<g class=\"bar\"><text class=\"tick\" x=\"%d\" y=\"%.0f\" "
                   "text-anchor=\"end\"><title>",
                BL - 6, y + 15);
        H(f, full);
        fputs("</title>", f);
        H(f, name);
        fputs("</text>", f);
        free(name);
        free(full);
        double v = kbc_chart_value(ch, r) * scale;
        size_t vi = 0;
        while (ch->n_groups > 1 && vi < ch->n_variants && strcmp(ch->variants[vi], r->variant))
            vi++;
        const char *colour = library ? "#555555"
                             : ch->n_groups > 1 ? palette[vi % N_PALETTE]
                                                : palette[own % N_PALETTE];
        own += !library;
        if (isfinite(v) && v > 0) {
            char buf[48];
            fprintf(f, "<rect x=\"%d\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"%s>"
                       "<title>",
                    BL, y + 3, axis_at(&ax, v) - BL, ROW - 6, colour,
                    library ? " fill-opacity=\"0.75\"" : "");
            H(f, r->variant);
            fprintf(f, ": %s</title></rect>", value_text(ch, v, buf, sizeof buf));
        } else {
            fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.0f\">(%s)</text>", BL + 6, y + 15,
                    kbc_record_ran(r) && kbc_chart_metric_energy(ch->metric)
                        ? "no energy"
                        : kbc_outcome_name(r->outcome));
        }
        fputs("</g>", f);
    }
    if (ceiling > 0) {
        char *t = kbc_chart_ceiling_title(ch);
        double x = axis_at(&ax, ceiling);
        fprintf(f, "<g class=\"ceiling\"><line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                   "stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"3 3\"/><text "
                   "class=\"legend\" x=\"%.1f\" y=\"%d\" text-anchor=\"end\">",
                x, BT - 4, x, h - BB, CEILING_COLOUR, x, BT - 8);
        H(f, t);
        fputs("</text></g>", f);
        free(t);
    }
    fputs("</svg>", f);
}

/* A figure with its views (n of view_names, the first n) and the buttons
   that switch between them, showing view first. */
static void figure_open(FILE *f, const char *caption_exp, const char *caption_group,
                        const view *views, size_t n, view first)
{
    static const char *const button[] = {"rate", "log rate", "time", "energy", "efficiency"};
    fprintf(f, "<figure class=\"plot\" data-view=\"%s\"><figcaption>", view_names[first]);
    H(f, caption_exp);
    if (caption_group && caption_group[0]) {
        fputs(" <span class=\"group\">(", f);
        H(f, caption_group);
        fputs(")</span>", f);
    }
    fputs(" <span class=\"views\">", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "<button type=\"button\" data-view=\"%s\" aria-pressed=\"%s\">%s</button>",
                view_names[views[i]], views[i] == first ? "true" : "false", button[views[i]]);
    fputs("</span></figcaption>", f);
}

char *kbc_html_sparkline(const double *y, size_t n, const kbc_html_step *steps, size_t n_steps,
                         int w, int h)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return kbc_xstrdup("");
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(y[i])) {
            lo = fmin(lo, y[i]);
            hi = fmax(hi, y[i]);
        }
    fprintf(f, "<svg class=\"spark\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">", w, h, w,
            h);
    if (isfinite(lo)) {
        if (hi <= lo) {
            lo -= 1;
            hi += 1;
        }
        fputs("<path fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.2\" d=\"", f);
        int pen = 0; /* 0: the next finite point starts a piece */
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(y[i])) {
                pen = 0;
                continue;
            }
            double px = n > 1 ? 1 + (double)i * (w - 2) / (double)(n - 1) : w / 2.0;
            double py = h - 1 - (y[i] - lo) / (hi - lo) * (h - 2);
            fprintf(f, "%c%.1f %.1f", pen ? 'L' : 'M', px, py);
            pen = 1;
        }
        fputs("\"/>", f);
    }
    /* Each step between its two points, its commit in the tooltip. */
    for (size_t k = 0; k < n_steps; k++) {
        if (steps[k].at == 0 || steps[k].at >= n)
            continue;
        double px = 1 + ((double)steps[k].at - 0.5) * (w - 2) / (double)(n - 1);
        fprintf(f, "<line class=\"step\" x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%d\" "
                   "stroke=\"%s\" stroke-width=\"1.5\"><title>step %+.1f%% at ",
                px, px, h, steps[k].change > 0 ? "#c00000" : "#008000", steps[k].change * 100);
        H(f, steps[k].commit);
        fputs("</title></line>", f);
    }
    fputs("</svg>", f);
    fclose(f);
    return buf;
}

/* ---- the run's header -------------------------------------------------- */

static void dl_row(FILE *f, const char *term, const char *value)
{
    if (!value || !value[0])
        return;
    fputs("<dt>", f);
    fputs(term, f);
    fputs("</dt><dd>", f);
    H(f, value);
    fputs("</dd>", f);
}

static const char *json_str(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void machine_header(FILE *f, const kbc_run_doc *doc, const json_t *root)
{
    const kbc_machine *m = &doc->machine;
    const kbc_run_info *in = &doc->info;
    char buf[1400], a[64], b[64];
    fputs("<dl class=\"machine\">", f);
    if (doc->has_machine && m->has_gpu) {
        dl_row(f, "GPU", m->name);
        /* What the file knows (0: not recorded). */
        if (m->cc_major > 0 || m->sm_count > 0) {
            snprintf(buf, sizeof buf, "%d.%d, %d SMs, %s memory, %s L2", m->cc_major,
                     m->cc_minor, m->sm_count, kbc_human_bytes(m->mem_bytes, a, sizeof a),
                     kbc_human_bytes(m->l2_bytes, b, sizeof b));
            dl_row(f, "compute capability", buf);
        }
        kbc_cuda_version_text(m->driver_version, a, sizeof a);
        kbc_cuda_version_text(m->runtime_version, b, sizeof b);
        if (a[0] || b[0]) {
            snprintf(buf, sizeof buf, "driver %s, runtime %s", a[0] ? a : "?", b[0] ? b : "?");
            dl_row(f, "CUDA", buf);
        }
        if (m->clock_khz > 0) {
            snprintf(buf, sizeof buf, "SM %d MHz, memory %d MHz", m->clock_khz / 1000,
                     m->mem_clock_khz / 1000);
            dl_row(f, "clocks", buf);
        }
        const kbc_ceilings *c = &in->ceilings;
        if (c->read_gbps > 0 || c->write_gbps > 0 || c->copy_gbps > 0) {
            snprintf(buf, sizeof buf, "read %.0f, write %.0f, copy %.0f GB/s", c->read_gbps,
                     c->write_gbps, c->copy_gbps);
            dl_row(f, "memory ceilings", buf);
        }
        const kbc_flops_ceilings *p = &in->flops;
        if (p->fp32_gflops > 0 || p->tf32_gflops > 0 || p->bf16_gflops > 0) {
            snprintf(buf, sizeof buf,
                     "FP32 %.0f, TF32 %.0f, BF16 %.0f GFLOP/s (tensor: mma.sync)",
                     p->fp32_gflops, p->tf32_gflops, p->bf16_gflops);
            dl_row(f, "compute ceilings", buf);
        }
    } else if (doc->has_machine) {
        snprintf(buf, sizeof buf, "none (%s)", m->no_gpu_reason[0] ? m->no_gpu_reason : "unknown");
        dl_row(f, "GPU", buf);
    }
    if (doc->has_machine) {
        if (m->cpu_threads > 0)
            snprintf(buf, sizeof buf, "%s, %d CPU threads", m->host, m->cpu_threads);
        else
            snprintf(buf, sizeof buf, "%s", m->host);
        dl_row(f, "host", buf);
    }
    const char *ver = json_str(root, "kbench", "version"), *git = json_str(root, "kbench", "git");
    if (ver || git) {
        snprintf(buf, sizeof buf, "%s (git %s)", ver ? ver : "?", git ? git : "?");
        dl_row(f, "kbench", buf);
    }
    dl_row(f, "command", doc->command);
    dl_row(f, "configuration", doc->config_file);
    const char *started = json_str(root, "started", NULL), *done = json_str(root, "finished", NULL);
    if (started) {
        snprintf(buf, sizeof buf, "%s to %s", started, done ? done : "(not finished)");
        dl_row(f, "ran", buf);
    }
    if (doc->has_plan && doc->shard_count > 0) {
        snprintf(buf, sizeof buf, "%d of %d", doc->shard_index, doc->shard_count);
        dl_row(f, "shard", buf);
    }
    if (doc->exit_code >= 0) {
        snprintf(buf, sizeof buf, "%d", doc->exit_code);
        dl_row(f, "exit code", buf);
    }
    fputs("</dl>", f);
}

/* ---- the comparison with a baseline ------------------------------------ */

typedef struct baseline {
    const char *path;
    kbc_run_doc doc;
    json_t *root;
    kbc_baseline *rows;  /* doc's rows, matched by key (baseline.h)       */
    kbc_match *match;    /* per row of the report: its match and verdict */
} baseline;

/* Matches the report's rows with the baseline's and compares each pair
   that ran on both sides, all at once. */
static void baseline_compare(baseline *b, const kbc_record *recs, size_t n,
                             const kbc_compare_opts *o)
{
    b->rows = kbc_baseline_new(b->doc.recs, b->doc.n_recs);
    b->match = kbc_xcalloc(n ? n : 1, sizeof *b->match);
    kbc_baseline_judge(b->rows, recs, n, o, b->match);
}

static void baseline_free(baseline *b)
{
    kbc_baseline_free(b->rows);
    free(b->match);
    kbc_run_doc_free(&b->doc);
    json_decref(b->root);
}

/* The verdict's word as a class name: "no change" as "v-no-change". */
static void verdict_class(FILE *f, const char *name)
{
    fputs("v-", f);
    for (const char *p = name; *p; p++)
        fputc(*p == ' ' ? '-' : *p, f);
}

/* ---- one experiment ---------------------------------------------------- */

typedef struct report {
    FILE *f;
    const kbc_run_doc *doc;
    const kbc_record *recs;
    size_t n;
    baseline *base; /* or NULL */
    double alpha;
    kbc_html_history_fn hist; /* or NULL */
    void *hist_ctx;
    size_t n_tables;
    /* The charts of the rows (chart.h), of the rate, the time, the energy
       and the efficiency: the same charts in the same order. */
    kbc_chart *rate, *time, *energy, *efficiency;
    size_t n_charts;
    /* Each experiment's sweep at a glance (analysis/sweep_summary.h). */
    const kbc_sweep *sweeps;
    size_t n_sweeps;
} report;

static const kbc_exp_info *exp_info(const kbc_run_doc *doc, const char *name)
{
    for (size_t i = 0; i < doc->n_exps; i++)
        if (strcmp(doc->exps[i].name, name) == 0)
            return &doc->exps[i];
    return NULL;
}

/* The swept parameters of rows[0..n) in the order they first appear. */
static size_t swept_names(const kbc_record *const *rows, size_t n, const char **names)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t q = 0; q < rows[i]->n_params; q++) {
            const kbc_rec_param *p = &rows[i]->params[q];
            if (!p->swept)
                continue;
            size_t j = 0;
            while (j < k && strcmp(names[j], p->name) != 0)
                j++;
            if (j == k && k < KB_MAX_PARAMS)
                names[k++] = p->name;
        }
    return k;
}

/* A sortable column's header: cls "num" sorts by each cell's data-v,
   "text" by its text; extra: more attributes, or NULL. */
static void th(FILE *f, const char *cls, const char *extra, const char *text)
{
    int num = strcmp(cls, "num") == 0;
    fprintf(f, "<th scope=\"col\" tabindex=\"0\" data-sort=\"%s\"%s%s%s>", cls,
            num ? " class=\"num\"" : "", extra ? " " : "", extra ? extra : "");
    fputs(text, f);
    fputs("</th>", f);
}

/* The history column's cell of row r: the sparkline with its steps, and
   the newest step's change as the sort value. */
static void history_cell(FILE *f, const report *rp, const kbc_record *r)
{
    kbc_html_history h = {0};
    const char *gpu = rp->doc->has_machine && rp->doc->machine.has_gpu ? rp->doc->machine.name
                                                                       : NULL;
    rp->hist(rp->hist_ctx, r, gpu, &h);
    fputs("<td class=\"history\"", f);
    if (h.n_steps)
        data_v(f, h.steps[h.n_steps - 1].change * 100);
    fputs(">", f);
    if (h.n) {
        char *svg = kbc_html_sparkline(h.median, h.n, h.steps, h.n_steps, 96, 18);
        fputs(svg, f);
        free(svg);
        fprintf(f, " <span class=\"runs\">%zu</span>", h.n);
    } else {
        fputs("-", f);
    }
    fputs("</td>", f);
    free(h.median);
    free(h.steps);
}

/* The energy's cells of row r: joules per run (its interval, windows and
   throttled windows in the title; why there is none, where it was asked
   for), watts, and GB/J or GFLOP/J where shown. */
static void energy_cells(FILE *f, const kbc_record *r, int gb, int gflop)
{
    const kbc_rec_energy *e = &r->energy;
    int has = kbc_record_has_energy(r);
    char buf[64], lo[32], hi[32];
    fputs("<td class=\"num\"", f);
    data_v(f, has ? e->j_per_run : NAN);
    if (has) {
        fprintf(f, " title=\"95%% interval %s to %s over %u windows",
                kbc_human_joules(e->j_lo, lo, sizeof lo), kbc_human_joules(e->j_hi, hi, sizeof hi),
                e->windows);
        if (e->throttled_windows)
            fprintf(f, ", %u held back by a power or thermal limit", e->throttled_windows);
        fprintf(f, "\">%s</td>", kbc_human_joules(e->j_per_run, buf, sizeof buf));
    } else if (e->why[0]) {
        fputs(" title=\"", f);
        H(f, e->why);
        fputs("\">-</td>", f);
    } else {
        fputs(">-</td>", f);
    }
    double cells[3] = {e->watts, e->gb_per_j, e->gflops_per_j};
    int shown[3] = {1, gb, gflop};
    for (int c = 0; c < 3; c++) {
        if (!shown[c])
            continue;
        double v = has ? cells[c] : NAN;
        fputs("<td class=\"num\"", f);
        data_v(f, v);
        fprintf(f, ">%s</td>", fmt_num(v, "", buf, sizeof buf));
    }
}

/* A change's cell: new over base as a signed percentage, "-" without one. */
static void change_cell(FILE *f, double ratio)
{
    double pct = (ratio - 1) * 100;
    fputs("<td class=\"num\"", f);
    data_v(f, pct);
    if (isfinite(pct))
        fprintf(f, ">%+.1f%%</td>", pct);
    else
        fputs(">-</td>", f);
}

/* The energy's change and verdict against the baseline (baseline.h); a
   row with energy on neither side has none. */
static void energy_change_cells(FILE *f, const kbc_match *m)
{
    const kbc_change *ch = &m->energy;
    if (!kbc_match_energy_shown(m)) {
        fputs("<td class=\"num\">-</td><td>-</td>", f);
        return;
    }
    change_cell(f, ch->ratio);
    const char *v = kbc_energy_verdict_name(ch->verdict);
    fputs("<td class=\"", f);
    verdict_class(f, v);
    fputs("\">", f);
    fputs(v, f);
    if (m->energy_note) {
        fputs(" <span class=\"why\">(", f);
        H(f, m->energy_note);
        fputs(")</span>", f);
    }
    fputs("</td>", f);
}

/* The columns of one experiment's table of rows, decided from all its
   rows (so that a column stays put whatever a row did). */
typedef struct row_columns {
    int gbps, gflops, items, ceiling, peak, speedup, note, energy, gbj, gflopj, base_energy;
} row_columns;

static void decide_row_columns(const report *rp, const kbc_record *const *rows,
                               const size_t *at, size_t n, row_columns *k)
{
    memset(k, 0, sizeof *k);
    for (size_t i = 0; i < n; i++) {
        const kbc_record *r = rows[i];
        if (kbc_record_has_energy(r)) {
            k->energy = 1;
            k->gbj |= isfinite(r->energy.gb_per_j);
            k->gflopj |= isfinite(r->energy.gflops_per_j);
        }
        if (rp->base)
            k->base_energy |= kbc_match_energy_shown(&rp->base->match[at[i]]);
        k->gbps |= isfinite(r->gbps);
        k->gflops |= isfinite(r->gflops);
        k->items |= isfinite(r->items_per_s) && !isfinite(r->gbps) && !isfinite(r->gflops);
        k->ceiling |= isfinite(r->pct_ceiling);
        k->peak |= isfinite(r->pct_peak);
        k->speedup |= isfinite(r->speedup_baseline);
        k->note |= r->reason[0] != '\0';
    }
    /* The percentage of the ceiling that binds only: a memory-bound
       reduce's 1.7% of the FP32 peak, or a matmul's 2% of the bandwidth,
       is noise beside the other (chart.h's rate rule). */
    kbc_rate binds = kbc_rate_pick_of(rows, n);
    k->ceiling &= binds != KBC_RATE_GFLOPS;
    k->peak &= binds == KBC_RATE_GFLOPS;
    k->items |= binds == KBC_RATE_ITEMS;
}

static void rows_head(const report *rp, const kbc_record *first, const char *const *names,
                      size_t np, const row_columns *k)
{
    FILE *f = rp->f;
    fputs("<div class=\"scroll\"><table class=\"rows\"><thead><tr>", f);
    for (size_t i = 0; i < np; i++) {
        const kbc_rec_param *p = param_of(first, names[i]);
        int numeric = p && isfinite(kbc_param_number(p));
        fprintf(f, "<th scope=\"col\" tabindex=\"0\" data-sort=\"%s\"%s>", numeric ? "num" : "text",
                numeric ? " class=\"num\"" : "");
        H(f, names[i]);
        fputs("</th>", f);
    }
    th(f, "text", NULL, "variant");
    th(f, "text", NULL, "status");
    th(f, "num", "data-selftest=\"\"", "median time");
    th(f, "num", NULL, "noise");
    if (k->gbps)
        th(f, "num", NULL, "GB/s");
    if (k->ceiling)
        th(f, "num", NULL, "% of ceiling");
    if (k->gflops)
        th(f, "num", NULL, "GFLOP/s");
    if (k->peak)
        th(f, "num", NULL, "% of peak");
    if (k->items)
        th(f, "num", NULL, "items/s");
    if (k->speedup)
        th(f, "num", "title=\"the baseline variant's median time over this row's\"", "speed-up");
    if (k->energy) {
        th(f, "num", "title=\"the median joules per run over the energy windows "
                     "(docs/energy.md)\"",
           "J/run");
        th(f, "num", "title=\"the energy windows' joules over their seconds\"", "W");
        if (k->gbj)
            th(f, "num", NULL, "GB/J");
        if (k->gflopj)
            th(f, "num", NULL, "GFLOP/J");
    }
    if (rp->base) {
        char ci[64];
        snprintf(ci, sizeof ci, "%.4g%% interval", (1 - rp->alpha) * 100);
        th(f, "num", NULL, "baseline time");
        th(f, "num", NULL, "change");
        th(f, "num", NULL, ci);
        th(f, "text", NULL, "verdict");
        if (k->base_energy) {
            th(f, "num", "title=\"the change of the median joules per run\"", "energy change");
            th(f, "text", NULL, "energy verdict");
        }
    }
    if (rp->hist)
        th(f, "num", "title=\"the row's median in each run of the history, in commit order; "
                     "sorts by the newest step's change\"",
           "history");
    if (k->note)
        th(f, "text", NULL, "note");
    fputs("</tr></thead><tbody>", f);
}

/* A row's cells against the baseline: its time, the change, the interval
   and the verdict (with the match's note as its title and in words). */
static void baseline_cells(FILE *f, const kbc_match *m)
{
    char buf[64];
    const kbc_change *ch = &m->change;
    const char *note = m->note;
    fputs("<td class=\"num\"", f);
    data_v(f, ch->base_median);
    fprintf(f, ">%s</td>", kbc_human_seconds(ch->base_median, buf, sizeof buf));
    change_cell(f, ch->ratio);
    fputs("<td class=\"num\"", f);
    data_v(f, (ch->lo - 1) * 100);
    if (isfinite(ch->lo))
        fprintf(f, ">[%+.1f%%, %+.1f%%]</td>", (ch->lo - 1) * 100, (ch->hi - 1) * 100);
    else
        fputs(">-</td>", f);
    const char *v = kbc_verdict_name(ch->verdict);
    fputs("<td class=\"", f);
    verdict_class(f, v);
    fputs("\"", f);
    if (note) {
        fputs(" title=\"", f);
        H(f, note);
        fputs("\"", f);
    }
    fputs(">", f);
    fputs(v, f);
    if (note) {
        fputs(" <span class=\"why\">(", f);
        H(f, note);
        fputs(")</span>", f);
    }
    fputs("</td>", f);
}

/* Row i of an experiment's table; at[i] is its place in the baseline's
   matches. */
static void rows_row(report *rp, const kbc_record *r, size_t i, size_t at,
                     const char *const *names, size_t np, const row_columns *k)
{
    FILE *f = rp->f;
    char buf[64];
    fprintf(f, "<tr data-i=\"%zu\">", i);
    for (size_t q = 0; q < np; q++) {
        const kbc_rec_param *p = param_of(r, names[q]);
        fputs("<td", f);
        if (p)
            data_v(f, kbc_param_number(p));
        fputs(">", f);
        if (p)
            H(f, p->text);
        fputs("</td>", f);
    }
    fputs("<td class=\"variant\">", f);
    H(f, r->variant);
    if (r->flags & KB_VARIANT_LIBRARY)
        fputs(" <span class=\"tag\">library</span>", f);
    fputs("</td>", f);
    fprintf(f, "<td class=\"st-%s\">%s</td>",
            kbc_outcome_failed((int)r->outcome) ? "bad"
            : r->outcome == KBC_PASS            ? "pass"
                                                : "other",
            kbc_outcome_name((int)r->outcome));
    double t = kbc_record_ran(r) ? r->time.median : NAN;
    fputs("<td class=\"num\"", f);
    data_v(f, t);
    fprintf(f, ">%s</td>", kbc_human_seconds(t, buf, sizeof buf));
    fputs("<td class=\"num\"", f);
    data_v(f, r->noise * 100);
    fprintf(f, ">%s</td>", fmt_pct(r->noise * 100, buf, sizeof buf));
    double cells[6] = {r->gbps, r->pct_ceiling, r->gflops, r->pct_peak, r->items_per_s,
                       r->speedup_baseline};
    int shown[6] = {k->gbps, k->ceiling, k->gflops, k->peak, k->items, k->speedup};
    int percent[6] = {0, 1, 0, 1, 0, 0};
    for (int c = 0; c < 6; c++) {
        if (!shown[c])
            continue;
        double v = kbc_record_ran(r) ? cells[c] : NAN;
        fputs("<td class=\"num\"", f);
        data_v(f, v);
        if (percent[c])
            fmt_pct(v, buf, sizeof buf);
        else if (c == 5 && isfinite(v))
            snprintf(buf, sizeof buf, "%.3g\xc3\x97", v); /* 1.58x */
        else
            fmt_num(v, "", buf, sizeof buf);
        fprintf(f, ">%s</td>", buf);
    }
    if (k->energy)
        energy_cells(f, r, k->gbj, k->gflopj);
    if (rp->base) {
        baseline_cells(f, &rp->base->match[at]);
        if (k->base_energy)
            energy_change_cells(f, &rp->base->match[at]);
    }
    if (rp->hist)
        history_cell(f, rp, r);
    if (k->note) {
        fputs("<td class=\"note\">", f);
        H(f, r->reason);
        fputs("</td>", f);
    }
    fputs("</tr>", f);
}

static void exp_table(report *rp, const kbc_record *const *rows, const size_t *at, size_t n)
{
    const char *names[KB_MAX_PARAMS];
    size_t np = swept_names(rows, n, names);
    row_columns k;
    decide_row_columns(rp, rows, at, n, &k);
    rows_head(rp, rows[0], names, np, &k);
    for (size_t i = 0; i < n; i++)
        rows_row(rp, rows[i], i, at[i], names, np, &k);
    fputs("</tbody></table></div>", rp->f);
    rp->n_tables++;
}

/* The plots of one experiment: its charts (chart.h), each drawn from the
   chart of the rate (rate and log rate) and the chart of the time, and,
   where rows of it have energy, the charts of the energy and the
   efficiency. */
static void exp_plots(report *rp, const char *exp)
{
    FILE *f = rp->f;
    for (size_t k = 0; k < rp->n_charts; k++) {
        const kbc_chart *rate = &rp->rate[k], *time = &rp->time[k];
        const kbc_chart *energy = &rp->energy[k], *eff = &rp->efficiency[k];
        if (strcmp(rate->experiment, exp) != 0)
            continue;
        /* The energy's views where they have something to draw. */
        view views[5] = {VIEW_RATE, VIEW_LOGRATE, VIEW_TIME};
        const kbc_chart *of[5] = {rate, rate, time};
        size_t nv = 3;
        if (kbc_chart_drawn(energy)) {
            views[nv] = VIEW_ENERGY;
            of[nv++] = energy;
        }
        if (kbc_chart_drawn(eff)) {
            views[nv] = VIEW_EFFICIENCY;
            of[nv++] = eff;
        }
        char g[512];
        kbc_record_group(rate->first, rate->x, ", ", g, sizeof g);
        if (!rate->x) {
            /* A bar chart of one point, drawn whether its rows ran or not. */
            if (!g[0])
                snprintf(g, sizeof g, "point %llu", (unsigned long long)rate->first->point + 1);
            char *label = kbc_xasprintf("%s (%s)", exp, g);
            /* No log rate: the bars start at zero. */
            view bars[4] = {VIEW_RATE, VIEW_TIME};
            const kbc_chart *bar_of[4] = {rate, time};
            size_t nb = 2;
            for (size_t v = 3; v < nv; v++) {
                bars[nb] = views[v];
                bar_of[nb++] = of[v];
            }
            figure_open(f, exp, g, bars, nb, VIEW_RATE);
            for (size_t v = 0; v < nb; v++)
                svg_bars(f, bar_of[v], label);
            fputs("</figure>", f);
            free(label);
            continue;
        }
        if (!kbc_chart_drawn(rate) && !kbc_chart_drawn(time))
            continue; /* none of its rows ran */
        char *label = kbc_xasprintf("%s%s%s%s", exp, g[0] ? " (" : "", g, g[0] ? ")" : "");
        /* The log axis first where the lines stay below a fifth of the
           ceiling, which would flatten them at the bottom. */
        figure_open(f, exp, g, views, nv,
                    rate->ceiling > 5 * rate->largest ? VIEW_LOGRATE : VIEW_RATE);
        for (size_t v = 0; v < nv; v++)
            svg_lines(f, of[v], views[v], label);
        fputs("</figure>", f);
        free(label);
    }
}

/* The sweep of exp at a glance, for an experiment of more than one row:
   a row per swept value, a column per variant with its median (the
   fastest of the row in bold), and each variant against the baseline and
   the reference over the sweep. */
static void exp_sweep(report *rp, const char *exp)
{
    FILE *f = rp->f;
    const kbc_sweep *w = NULL;
    for (size_t i = 0; i < rp->n_sweeps && !w; i++)
        if (strcmp(rp->sweeps[i].experiment, exp) == 0)
            w = &rp->sweeps[i];
    if (!w || w->n_rows < 2)
        return;
    fputs("<div class=\"scroll sweep\"><p class=\"about\">The sweep at a glance: median time "
          "per variant, the fastest of each row in bold.</p><table class=\"sweep\"><thead><tr>",
          f);
    for (size_t q = 0; q < w->n_params; q++) {
        fputs("<th scope=\"col\">", f);
        H(f, w->params[q]);
        fputs("</th>", f);
    }
    for (size_t v = 0; v < w->n_variants; v++) {
        fputs("<th scope=\"col\" class=\"num\">", f);
        H(f, w->variants[v]);
        fputs("</th>", f);
    }
    fputs("</tr></thead><tbody>", f);
    for (size_t r = 0; r < w->n_rows; r++) {
        fputs("<tr>", f);
        for (size_t q = 0; q < w->n_params; q++) {
            fputs("<td>", f);
            H(f, w->labels[r * w->n_params + q]);
            fputs("</td>", f);
        }
        for (size_t v = 0; v < w->n_variants; v++) {
            char buf[64];
            double m = w->median[r * w->n_variants + v];
            int o = w->outcome[r * w->n_variants + v];
            int best = w->best[r] == (int)v;
            fprintf(f, "<td class=\"num%s\">", best ? " best" : "");
            if (isfinite(m))
                fputs(kbc_human_seconds(m, buf, sizeof buf), f);
            else
                fputs(o >= 0 ? kbc_outcome_name(o) : "-", f);
            fputs("</td>", f);
        }
        fputs("</tr>", f);
    }
    fputs("</tbody></table>", f);
    if (w->n_vs) {
        fputs("<ul class=\"sweep-vs\">", f);
        for (size_t i = 0; i < w->n_vs; i++) {
            char t[600];
            fputs("<li>", f);
            H(f, kbc_sweep_vs_text(&w->vs[i], t, sizeof t));
            fputs("</li>", f);
        }
        fputs("</ul>", f);
    }
    fputs("</div>", f);
}

static void experiment(report *rp, size_t idx, const char *exp)
{
    FILE *f = rp->f;
    const kbc_record **rows = kbc_xcalloc(rp->n, sizeof *rows);
    size_t *at = kbc_xcalloc(rp->n, sizeof *at);
    size_t n = 0;
    for (size_t i = 0; i < rp->n; i++)
        if (strcmp(rp->recs[i].experiment, exp) == 0) {
            at[n] = i;
            rows[n++] = &rp->recs[i];
        }
    const kbc_exp_info *x = exp_info(rp->doc, exp);
    fprintf(f, "<section class=\"experiment\" id=\"exp-%zu\"><h2>", idx);
    H(f, exp);
    fputs("</h2>", f);
    if (x && x->description) {
        fputs("<p class=\"description\">", f);
        H(f, x->description);
        fputs("</p>", f);
    }
    fputs("<p class=\"about\">plugin <code>", f);
    H(f, rows[0]->plugin);
    fputs("</code>", f);
    if (rows[0]->baseline[0]) {
        fputs(", baseline variant <code>", f);
        H(f, rows[0]->baseline);
        fputs("</code>", f);
    }
    /* The parameters that stay the same. */
    int first = 1;
    for (uint32_t q = 0; q < rows[0]->n_params; q++) {
        const kbc_rec_param *p = &rows[0]->params[q];
        if (p->swept)
            continue;
        fputs(first ? "; fixed: <code>" : ", <code>", f);
        H(f, p->name);
        fputs("=", f);
        H(f, p->text);
        fputs("</code>", f);
        first = 0;
    }
    fputs("</p>", f);
    exp_sweep(rp, exp);
    fputs("<div class=\"plots\">", f);
    exp_plots(rp, exp);
    fputs("</div>", f);
    /* The table below the plots: a reviewer sees the picture first. */
    fprintf(f, "<details class=\"table\" open><summary>%zu rows</summary>", n);
    exp_table(rp, rows, at, n);
    fputs("</details></section>", f);
    free(rows);
    free(at);
}

/* ---- the page ------------------------------------------------------------ */

static const char report_css[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;"
    "max-width:1400px;padding:16px 24px;color:#1a1a1a;background:#fff}"
    "h1{font-size:22px;margin:4px 0 12px}h2{font-size:18px;margin:28px 0 6px;"
    "border-bottom:1px solid #ddd;padding-bottom:4px}"
    "dl.machine{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0 0 12px}"
    "dl.machine dt{color:#555}dl.machine dd{margin:0;word-break:break-all}"
    ".summary span{margin-right:14px}nav a{margin-right:12px}"
    ".scroll{overflow-x:auto}"
    "table.rows{border-collapse:collapse;font-size:13px;margin:6px 0 10px}"
    "table.rows th,table.rows td{padding:3px 7px;border-bottom:1px solid #eee;text-align:left;"
    "white-space:nowrap}"
    "table.rows td.note{white-space:normal;max-width:420px;color:#555}"
    "table.rows th{background:#f4f4f4;cursor:pointer;user-select:none;position:sticky;top:0}"
    "table.rows th:hover{background:#e8e8e8}"
    "table.rows th[aria-sort=ascending]::after{content:' \\25B2';font-size:10px}"
    "table.rows th[aria-sort=descending]::after{content:' \\25BC';font-size:10px}"
    ".num{text-align:right!important;font-variant-numeric:tabular-nums}"
    "tbody tr:nth-child(even){background:#fafafa}"
    ".st-bad{color:#b00000;font-weight:600}.st-other{color:#777}"
    ".v-slower,.v-more-energy{color:#b00000;font-weight:600}"
    ".v-faster,.v-less-energy{color:#006400;font-weight:600}"
    ".v-noisy{color:#a05a00}.v-untested{color:#777}.why{color:#777;font-weight:normal}"
    ".tag{font-size:11px;background:#eee;border-radius:3px;padding:0 4px;color:#444}"
    ".plots{display:flex;flex-wrap:wrap;gap:12px}"
    "figure.plot{margin:0;border:1px solid #e4e4e4;border-radius:4px;padding:6px}"
    "figure.plot figcaption{font-weight:600;margin-bottom:4px}"
    "figure.plot .group{font-weight:normal;color:#555}"
    "figure.plot:not([data-view=rate]) svg.rate,figure.plot:not([data-view=lograte]) svg.lograte,"
    "figure.plot:not([data-view=time]) svg.time,"
    "figure.plot:not([data-view=energy]) svg.energy,"
    "figure.plot:not([data-view=efficiency]) svg.efficiency{display:none}"
    ".views{float:right}.views button{font:inherit;font-size:12px;margin-left:4px;"
    "border:1px solid #bbb;background:#fff;border-radius:3px;cursor:pointer}"
    ".views button[aria-pressed=true]{background:#333;color:#fff;border-color:#333}"
    "svg{max-width:100%;height:auto;font-family:inherit}"
    "svg .grid{stroke:#e6e6e6}svg .frame{fill:none;stroke:#999}"
    "svg .tick{font-size:11px;fill:#333}svg .label{font-size:12px;fill:#222}"
    "svg .legend{font-size:12px;fill:#222}"
    "details.table>summary{cursor:pointer;color:#555;margin:8px 0 0}"
    "svg.spark{vertical-align:middle;color:#333}.runs{color:#777;font-size:11px}"
    "code{background:#f4f4f4;padding:0 3px;border-radius:3px}"
    "table.sweep{border-collapse:collapse;font-size:13px;margin:4px 0 6px}"
    "table.sweep th,table.sweep td{padding:2px 8px;border-bottom:1px solid #eee;"
    "text-align:left;white-space:nowrap}table.sweep th{background:#f4f4f4}"
    "table.sweep td.best{font-weight:700}ul.sweep-vs{margin:4px 0 10px;padding-left:20px}"
    "footer{margin-top:30px;color:#777;font-size:12px}";

/* The page's one script: sorting by a click on a column header (or Enter
   on a focused one), the rate/time switch of each plot, and, for the
   browser test, a self-test that runs when the page is opened as
   report.html#selftest (tests/test_html.c). */
static const char report_script[] =
    "(function () {\n"
    "  'use strict';\n"
    "  var errors = 0;\n"
    "  window.addEventListener('error', function () { errors++; });\n"
    "  document.addEventListener('securitypolicyviolation', function () { errors++; });\n"
    "  function value(cell, numeric) {\n"
    "    if (!cell) return numeric ? NaN : '';\n"
    "    if (!numeric) return cell.textContent;\n"
    "    var v = cell.getAttribute('data-v');\n"
    "    return v === null ? NaN : Number(v);\n"
    "  }\n"
    "  function sortBy(th) {\n"
    "    var table = th.closest('table'), body = table.tBodies[0], col = th.cellIndex;\n"
    "    var numeric = th.getAttribute('data-sort') === 'num';\n"
    "    var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;\n"
    "    var heads = table.tHead.rows[0].cells;\n"
    "    for (var h = 0; h < heads.length; h++) heads[h].removeAttribute('aria-sort');\n"
    "    var rows = Array.prototype.slice.call(body.rows);\n"
    "    rows.sort(function (a, b) {\n"
    "      var x = value(a.cells[col], numeric), y = value(b.cells[col], numeric), c;\n"
    "      if (numeric) {\n"
    "        /* a cell without a value goes last either way */\n"
    "        if (isNaN(x) || isNaN(y)) c = isNaN(x) - isNaN(y);\n"
    "        else c = dir * (x < y ? -1 : x > y ? 1 : 0);\n"
    "      } else {\n"
    "        c = dir * x.localeCompare(y, undefined, {numeric: true});\n"
    "      }\n"
    "      return c || Number(a.getAttribute('data-i')) - Number(b.getAttribute('data-i'));\n"
    "    });\n"
    "    for (var k = 0; k < rows.length; k++) body.appendChild(rows[k]);\n"
    "    th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');\n"
    "  }\n"
    "  var heads = document.querySelectorAll('table.rows th[data-sort]');\n"
    "  for (var i = 0; i < heads.length; i++) {\n"
    "    heads[i].addEventListener('click', function (e) { sortBy(e.currentTarget); });\n"
    "    heads[i].addEventListener('keydown', function (e) {\n"
    "      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(e.currentTarget); }\n"
    "    });\n"
    "  }\n"
    "  var buttons = document.querySelectorAll('figure.plot .views button');\n"
    "  for (var b = 0; b < buttons.length; b++) {\n"
    "    buttons[b].addEventListener('click', function (e) {\n"
    "      var btn = e.currentTarget, fig = btn.closest('figure');\n"
    "      fig.setAttribute('data-view', btn.getAttribute('data-view'));\n"
    "      var all = fig.querySelectorAll('.views button');\n"
    "      for (var j = 0; j < all.length; j++)\n"
    "        all[j].setAttribute('aria-pressed', String(all[j] === btn));\n"
    "    });\n"
    "  }\n"
    "  function order(t) {\n"
    "    return Array.prototype.map.call(t.tBodies[0].rows, function (r) {\n"
    "      return r.getAttribute('data-i');\n"
    "    }).join(' ');\n"
    "  }\n"
    "  function selftest() {\n"
    "    var out = document.createElement('output');\n"
    "    out.id = 'kbench-selftest';\n"
    "    var t = document.querySelector('table.rows');\n"
    "    var th = t && t.querySelector('th[data-selftest]');\n"
    "    out.setAttribute('data-before', t ? order(t) : '');\n"
    "    if (th) {\n"
    "      th.click();\n"
    "      out.setAttribute('data-ascending', order(t));\n"
    "      th.click();\n"
    "      out.setAttribute('data-descending', order(t));\n"
    "    }\n"
    "    var fig = document.querySelector('figure.plot');\n"
    "    var to = fig && fig.querySelector('button[data-view=time]');\n"
    "    if (to) { to.click(); out.setAttribute('data-view', fig.getAttribute('data-view')); }\n"
    "    out.setAttribute('data-rows',\n"
    "      String(document.querySelectorAll('table.rows > tbody > tr').length));\n"
    "    out.setAttribute('data-tables', String(document.querySelectorAll('table.rows').length));\n"
    "    out.setAttribute('data-plots', String(document.querySelectorAll('figure.plot').length));\n"
    "    out.setAttribute('data-scripts', String(document.scripts.length));\n"
    "    out.setAttribute('data-errors', String(errors));\n"
    "    document.body.appendChild(out);\n"
    "  }\n"
    "  if (location.hash === '#selftest') selftest();\n"
    "})();\n";

static void base64(FILE *f, const unsigned char *p, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        fputc(a[v >> 18 & 63], f);
        fputc(a[v >> 12 & 63], f);
        fputc(i + 1 < n ? a[v >> 6 & 63] : '=', f);
        fputc(i + 2 < n ? a[v & 63] : '=', f);
    }
}

/* "against the baseline: " and the count of each verdict, by name in the
   order they first appear (so that a verdict compare gains later is
   counted without a change here); energy: the energy's verdicts of the
   rows with energy on a side, on a line of their own (none when no row
   has). */
static void verdict_counts(FILE *f, const report *rp, int energy)
{
    const char *names[16];
    size_t counts[16] = {0}, nv = 0;
    for (size_t i = 0; i < rp->n; i++) {
        const kbc_match *m = &rp->base->match[i];
        if (energy && !kbc_match_energy_shown(m))
            continue;
        const char *v = energy ? kbc_energy_verdict_name(m->energy.verdict)
                               : kbc_verdict_name(m->change.verdict);
        size_t k = 0;
        while (k < nv && strcmp(names[k], v) != 0)
            k++;
        if (k == nv && nv < 16)
            names[nv++] = v;
        if (k < nv)
            counts[k]++;
    }
    if (energy && !nv)
        return;
    fprintf(f, "<p class=\"summary\">%s: ", energy ? "energy against the baseline"
                                                   : "against the baseline");
    for (size_t k = 0; k < nv; k++) {
        fprintf(f, "<span class=\"");
        verdict_class(f, names[k]);
        fprintf(f, "\">%zu %s</span>", counts[k], names[k]);
    }
    if (energy)
        fputs("</p>", f);
}

/* A baseline from another machine, said in the page's summary beside the
   verdicts' counts, not only in the header's rows (baseline.h). */
static void machines_note(FILE *f, const report *rp)
{
    const kbc_run_doc *bd = &rp->base->doc, *nd = rp->doc;
    char mach[700];
    if (!kbc_machine_difference(bd->has_machine && bd->machine.has_gpu ? bd->machine.name : NULL,
                                bd->has_machine ? bd->machine.host : NULL,
                                nd->has_machine && nd->machine.has_gpu ? nd->machine.name : NULL,
                                nd->has_machine ? nd->machine.host : NULL, mach, sizeof mach))
        return;
    fputs("<p class=\"summary machines\"><b>Two machines:</b> ", f);
    H(f, mach);
    fputs(", so each verdict below is the machines' change as much as the code's.</p>", f);
}

/* Counts of the rows by outcome, and by verdict with a baseline. */
static void summary(FILE *f, const report *rp)
{
    size_t by[KBC_N_OUTCOMES] = {0};
    for (size_t i = 0; i < rp->n; i++)
        if ((int)rp->recs[i].outcome >= 0 && rp->recs[i].outcome < KBC_N_OUTCOMES)
            by[rp->recs[i].outcome]++;
    fprintf(f, "<p class=\"summary\"><span><b>%zu</b> rows</span>", rp->n);
    for (int o = 0; o < KBC_N_OUTCOMES; o++)
        if (by[o])
            fprintf(f, "<span class=\"st-%s\">%zu %s</span>",
                    kbc_outcome_failed(o) ? "bad" : o == KBC_PASS ? "pass" : "other", by[o],
                    kbc_outcome_name(o));
    fputs("</p>", f);
    if (!rp->base)
        return;
    size_t only = 0;
    for (size_t j = 0; j < rp->base->doc.n_recs; j++)
        only += !kbc_baseline_matched(rp->base->rows, j);
    machines_note(f, rp);
    verdict_counts(f, rp, 0);
    fprintf(f, "<span>%zu only in the baseline</span></p>", only);
    verdict_counts(f, rp, 1);
}

static void baseline_header(FILE *f, const baseline *b, const kbc_compare_opts *o)
{
    fputs("<dl class=\"machine\">", f);
    dl_row(f, "baseline", b->path);
    if (b->doc.has_machine && b->doc.machine.has_gpu)
        dl_row(f, "its GPU", b->doc.machine.name);
    const char *git = json_str(b->root, "kbench", "git");
    dl_row(f, "its kbench revision", git);
    dl_row(f, "its command", b->doc.command);
    char buf[200];
    snprintf(buf, sizeof buf,
             "change of the median time, %.4g%% bootstrap interval of the ratio of medians "
             "(%u resamples), threshold %.4g%% (kbench compare)",
             (1 - o->alpha) * 100, o->resamples, o->threshold * 100);
    dl_row(f, "verdicts", buf);
    fputs("</dl>", f);
}

static void only_in_base(FILE *f, const baseline *b)
{
    size_t only = 0;
    for (size_t j = 0; j < b->doc.n_recs; j++)
        only += !kbc_baseline_matched(b->rows, j);
    if (!only)
        return;
    fprintf(f, "<section id=\"only-in-baseline\"><h2>Only in the baseline (%zu rows)</h2><ul>",
            only);
    for (size_t j = 0; j < b->doc.n_recs; j++)
        if (!kbc_baseline_matched(b->rows, j)) {
            fputs("<li><code>", f);
            H(f, kbc_baseline_key(b->rows, j));
            fputs("</code></li>", f);
        }
    fputs("</ul></section>", f);
}

/* The run's suspect rows (results.json's "suspects", found once by the
   run's fan-out): each with the larger point that shows it. */
static void suspects(FILE *f, const kbc_run_doc *doc)
{
    if (!doc->n_suspects)
        return;
    fprintf(f, "<section id=\"suspects\"><h2>Suspect rows (%zu)</h2><p>Each is more than "
               "twice as slow as its variant at a point with more work, which says more about "
               "the measurement than about the kernel (each says what to do about it; "
               "docs/output.md, &quot;Suspect rows&quot;).</p><ul>",
            doc->n_suspects);
    for (size_t i = 0; i < doc->n_suspects; i++) {
        char t[2048];
        fputs("<li>", f);
        H(f, kbc_suspect_text(&doc->suspects[i], t, sizeof t));
        fputs("</li>", f);
    }
    fputs("</ul></section>\n", f);
}

static void page(FILE *f, report *rp, const json_t *root, const char *path,
                 const kbc_compare_opts *o)
{
    const kbc_run_doc *doc = rp->doc;
    unsigned char digest[32];
    kbc_sha256(report_script, strlen(report_script), digest);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; script-src 'sha256-",
          f);
    base64(f, digest, sizeof digest);
    fputs("'\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"kbench report\">\n<title>kbench report: ",
          f);
    H(f, doc->config_file ? doc->config_file : path);
    if (doc->has_machine && doc->machine.has_gpu) {
        fputs(" on ", f);
        H(f, doc->machine.name);
    }
    fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n<header><h1>kbench report: ", report_css);
    H(f, doc->config_file ? doc->config_file : path);
    fputs("</h1>", f);
    machine_header(f, doc, root);
    if (rp->base)
        baseline_header(f, rp->base, o);
    summary(f, rp);
    fputs("</header>\n", f);
    /* The experiments in the order they first appear. */
    const char **exps = kbc_xcalloc(rp->n ? rp->n : 1, sizeof *exps);
    size_t ne = 0;
    for (size_t i = 0; i < rp->n; i++) {
        size_t k = 0;
        while (k < ne && strcmp(exps[k], rp->recs[i].experiment) != 0)
            k++;
        if (k == ne)
            exps[ne++] = rp->recs[i].experiment;
    }
    if (ne > 1) {
        fputs("<nav>", f);
        for (size_t k = 0; k < ne; k++) {
            fprintf(f, "<a href=\"#exp-%zu\">", k);
            H(f, exps[k]);
            fputs("</a>", f);
        }
        fputs("</nav>\n", f);
    }
    if (ne == 0)
        fputs("<p>The results file holds no rows.</p>", f);
    suspects(f, doc);
    for (size_t k = 0; k < ne; k++) {
        experiment(rp, k, exps[k]);
        fputc('\n', f);
    }
    free(exps);
    if (rp->base)
        only_in_base(f, rp->base);
    fputs("<footer>Written by kbench report from ", f);
    H(f, path);
    fputs(". Click a column's header to sort by it; the buttons above a plot switch its view "
          "(rate, time, energy).</footer>\n",
          f);
    fprintf(f, "<script>%s</script>\n</body></html>\n", report_script);
}

int kbc_cmd_report(const char *path, const char *base_path, const char *out_path,
                   const kbc_compare_opts *o, kbc_html_history_fn hist, void *hist_ctx,
                   FILE *out, FILE *err)
{
    kbc_compare_opts defaults;
    if (!o) {
        kbc_compare_defaults(&defaults);
        o = &defaults;
    }
    char *in = kbc_results_path(path);
    kbc_diag d = {{0}};
    kbc_run_doc doc;
    json_t *root = kbc_results_load(in, &d);
    if (!root || kbc_run_doc_from_json(root, in, &doc, &d) != 0) {
        fprintf(err, "kbench: %s\n", d.msg);
        json_decref(root);
        free(in);
        return KBC_EXIT_USAGE;
    }
    baseline base = {0};
    char *bpath = NULL;
    if (base_path) {
        bpath = kbc_results_path(base_path);
        base.path = bpath;
        base.root = kbc_results_load(bpath, &d);
        if (!base.root || kbc_run_doc_from_json(base.root, bpath, &base.doc, &d) != 0) {
            fprintf(err, "kbench: --baseline: %s\n", d.msg);
            json_decref(base.root);
            kbc_run_doc_free(&doc);
            json_decref(root);
            free(bpath);
            free(in);
            return KBC_EXIT_USAGE;
        }
        baseline_compare(&base, doc.recs, doc.n_recs, o);
    }
    /* Beside the results file unless told; into a folder given as -o. */
    char *target;
    struct stat st;
    if (out_path && stat(out_path, &st) == 0 && S_ISDIR(st.st_mode)) {
        target = kbc_xasprintf("%s%sreport.html", out_path,
                               out_path[strlen(out_path) - 1] == '/' ? "" : "/");
    } else if (out_path) {
        target = kbc_xstrdup(out_path);
    } else {
        const char *slash = strrchr(in, '/');
        target = slash ? kbc_xasprintf("%.*sreport.html", (int)(slash - in + 1), in)
                       : kbc_xstrdup("report.html");
    }
    /* A temporary file beside the target, renamed over it when whole. */
    char *tmp = kbc_xasprintf("%s.tmp-XXXXXX", target);
    int code = KBC_EXIT_OK;
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(err, "kbench: cannot write %s: %s.\n", target, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        code = KBC_EXIT_SYSTEM;
    } else {
        report rp = {.f = f, .doc = &doc, .recs = doc.recs, .n = doc.n_recs,
                     .base = base_path ? &base : NULL, .alpha = o->alpha, .hist = hist,
                     .hist_ctx = hist_ctx};
        /* The charts of each metric: the same list, whatever the metric. */
        kbc_chart_opts time = {.metric = KBC_METRIC_TIME};
        kbc_chart_opts energy = {.metric = KBC_METRIC_ENERGY};
        kbc_chart_opts eff = {.metric = KBC_METRIC_EFFICIENCY};
        size_t n_time, n_energy, n_eff;
        rp.rate = kbc_charts(doc.recs, doc.n_recs, NULL, &rp.n_charts);
        rp.time = kbc_charts(doc.recs, doc.n_recs, &time, &n_time);
        rp.energy = kbc_charts(doc.recs, doc.n_recs, &energy, &n_energy);
        rp.efficiency = kbc_charts(doc.recs, doc.n_recs, &eff, &n_eff);
        kbc_sweeps *sweeps = kbc_sweeps_new();
        for (size_t i = 0; i < doc.n_recs; i++)
            kbc_sweeps_add(sweeps, &doc.recs[i]);
        rp.sweeps = kbc_sweeps_list(sweeps, &rp.n_sweeps);
        page(f, &rp, root, in, o);
        kbc_sweeps_free(sweeps);
        kbc_charts_free(rp.rate, rp.n_charts);
        kbc_charts_free(rp.time, n_time);
        kbc_charts_free(rp.energy, n_energy);
        kbc_charts_free(rp.efficiency, n_eff);
        int bad = ferror(f) != 0;
        int why = errno;
        if (fclose(f) != 0 && !bad) {
            bad = 1;
            why = errno;
        }
        /* mkstemp makes the file 0600; a report is for reading. */
        mode_t mask = umask(0);
        umask(mask);
        if (!bad && chmod(tmp, 0666 & ~mask) != 0) {
            bad = 1;
            why = errno;
        }
        if (!bad && rename(tmp, target) != 0) {
            bad = 1;
            why = errno;
        }
        if (bad) {
            fprintf(err, "kbench: cannot write %s: %s.\n", target, strerror(why));
            unlink(tmp);
            code = KBC_EXIT_SYSTEM;
        } else {
            fprintf(out, "wrote %s\n", target);
        }
    }
    free(tmp);
    free(target);
    if (base_path)
        baseline_free(&base);
    free(bpath);
    kbc_run_doc_free(&doc);
    json_decref(root);
    free(in);
    return code;
}
