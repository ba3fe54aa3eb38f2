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

#include "chart.h"
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

/* The ceiling's line in a plot command (none when there is no ceiling). */
static void ceiling_line(FILE *f, const kbc_chart *ch)
{
    if (!(ch->ceiling > 0))
        return;
    char *title = kbc_chart_ceiling_title(ch);
    fprintf(f, "  %.9g title ", ch->ceiling * ch->scale);
    gp_quote(f, title);
    fprintf(f, " with lines lw 2 dt 4 lc rgb '#c00000'\n");
    free(title);
}

/* A note on the chart where a value passes its ceiling: the ceiling is a
   measured reference, not the hardware's limit (docs/output.md, "%peak
   above 100%"). */
static void above_note(FILE *f, const kbc_chart *ch)
{
    if (ch->metric != KBC_METRIC_RATE || !(ch->ceiling > 0) || !(ch->largest > ch->ceiling))
        return;
    fprintf(f, "set label 1 ");
    gp_quote(f, ch->rate == KBC_RATE_GFLOPS
                    ? "above the ceiling: it is a measured mma.sync/FMA reference, not the "
                      "hardware's limit (docs/output.md)"
                    : "above the ceiling: it is a measured copy/stream reference, which data "
                      "in L2 can pass (docs/output.md)");
    fprintf(f, " at graph 0.01, graph 0.97 left front font ',9' textcolor rgb '#c00000'\n");
}

/* Sixteen colours that tell lines apart (no red: the ceiling is red), and
   fifteen markers; a chart's k-th line takes colour k and marker k, and a
   library's line is thicker and dashed. */
static const char *const palette[16] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
    "#bcbd22", "#393b79", "#637939", "#8c6d31", "#7b4173", "#3b9ab2", "#fdae61", "#1a1a1a"};
static const int markers[15] = {7, 5, 9, 11, 13, 15, 1, 2, 3, 6, 4, 8, 10, 12, 14};


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
    const char *gpu;
    const char *dir;
    FILE *out;
    kbc_plot_opts opt;
    char **written; /* stems written, for running gnuplot */
    size_t n_written;
} plot_ctx;

/* Opens the script of chart ch, dir/STEM.gp (STEM from file_stem), and
   writes its head; NULL after saying why. */
static FILE *open_script(plot_ctx *c, const kbc_chart *ch, char **stem, char **path)
{
    *stem = file_stem((const char *const *)c->written, c->n_written, ch->experiment, ch->group);
    *path = kbc_xasprintf("%s/%s.gp", c->dir, *stem);
    FILE *f = fopen(*path, "w");
    if (!f) {
        fprintf(stderr, "kbench: cannot write %s: %s.\n", *path, strerror(errno));
        free(*path);
        free(*stem);
        return NULL;
    }
    gp_head(f, *stem);
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

/* The y axis's title, scale and range lines: log (--logy) or from zero. */
static void y_lines(FILE *f, const plot_ctx *c, const kbc_chart *ch)
{
    char *yl = kbc_chart_ylabel(ch);
    fprintf(f, "set ylabel ");
    gp_quote(f, yl);
    free(yl);
    if (c->opt.logy)
        fprintf(f, "\nset logscale y\nset yrange [*:*]\n");
    else
        fprintf(f, "\nset yrange [0:*]\n");
}

/* Why a chart has nothing to draw: none of its rows ran, or, for the
   energy metrics, none has its energy measured. */
static const char *not_drawn_why(const kbc_chart *ch)
{
    return kbc_chart_metric_energy(ch->metric)
               ? "none of its rows has energy measured (energy = on; docs/energy.md)"
               : "none of its rows ran";
}

/* One line chart (chart.h) as a script. */
static int line_plot(plot_ctx *c, const kbc_chart *ch)
{
    const char *exp = ch->experiment, *group = ch->group;
    if (!kbc_chart_drawn(ch)) {
        /* Nothing ran (every row skipped, erred or crashed), or nothing
           has the metric: no chart. */
        fprintf(c->out, "no plot for %s%s%s%s: %s\n", kbc_text_visible(exp),
                group[0] ? " (" : "", kbc_text_visible(group), group[0] ? ")" : "",
                not_drawn_why(ch));
        return 0;
    }
    char *stem, *path;
    FILE *f = open_script(c, ch, &stem, &path);
    if (!f)
        return -1;
    /* Each variant's points, sorted by x, as a data block: x (its slot on
       a slotted axis), y, and the slowest and fastest run; a variant that
       ignores x has its one row at every x. */
    for (size_t k = 0; k < ch->n_lines; k++) {
        const kbc_chart_line *l = &ch->lines[k];
        fprintf(f, "$v%zu << EOD\n", k);
        for (size_t j = 0; j < (l->flat && l->n ? ch->nx : l->n); j++) {
            kbc_chart_point q = l->flat ? l->pts[0] : l->pts[j];
            double xv = l->flat ? ch->xs[j] : q.x;
            if (ch->x_scale == KBC_X_SLOTS)
                xv = (double)kbc_chart_slot(ch, xv);
            fprintf(f, "%.17g %.9g", xv, q.y * ch->scale);
            if (c->opt.band)
                fprintf(f, " %.9g %.9g", (isfinite(q.lo) ? q.lo : q.y) * ch->scale,
                        (isfinite(q.hi) ? q.hi : q.y) * ch->scale);
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
    char *xl = kbc_chart_xlabel(ch);
    fprintf(f, "\nset xlabel ");
    gp_quote(f, xl);
    free(xl);
    fputc('\n', f);
    if (ch->x_scale == KBC_X_LOG && ch->x_pow2)
        fprintf(f, "set logscale x 2\nset format x '2^{%%L}'\n");
    else if (ch->x_scale == KBC_X_LOG)
        fprintf(f, "set logscale x 10\n");
    if (kbc_chart_value_tics(ch)) {
        /* A tic at each value, labelled with it (a slot's position is
           its index). */
        fprintf(f, "set xtics (");
        for (size_t i = 0; i < ch->nx; i++) {
            char label[40];
            snprintf(label, sizeof label, "%.10g", ch->xs[i]);
            gp_quote(f, label);
            fprintf(f, " %.17g%s", ch->x_scale == KBC_X_SLOTS ? (double)i : ch->xs[i],
                    i + 1 < ch->nx ? ", " : ")\n");
        }
        if (ch->x_scale == KBC_X_SLOTS)
            fprintf(f, "set xrange [-0.5:%zu.5]\n", ch->nx - 1);
    }
    y_lines(f, c, ch);
    above_note(f, ch);
    /* Room above the highest line, so that a ceiling is not hidden in
       the border; the legend below the chart, outside the data. */
    fprintf(f, "set offsets 0, 0, graph 0.08, 0\nset grid\n"
               "set key below center horizontal\n");
    fprintf(f, "set style data linespoints\n");
    size_t drawn = 0;
    for (size_t k = 0; k < ch->n_lines; k++)
        drawn += ch->lines[k].n > 0;
    /* The legend takes three entries a row below the chart: a taller
       canvas past two rows, so that the data keeps its height. */
    size_t key_rows = (drawn + (ch->ceiling > 0) + 2) / 3;
    int height = 560 + 20 * (key_rows > 2 ? (int)key_rows - 2 : 0);
    gp_svg(f, stem, height);
    fprintf(f, "plot \\\n");
    size_t at = 0;
    for (size_t k = 0; k < ch->n_lines; k++) {
        const kbc_chart_line *l = &ch->lines[k];
        if (!l->n)
            continue; /* nothing of it ran here: no empty legend entry */
        const char *colour = palette[at % 16];
        int mk = markers[at % 15];
        if (c->opt.band) {
            fprintf(f, "  $v%zu using 1:3:4 with filledcurves fs transparent solid 0.15 noborder "
                       "lc rgb ",
                    k);
            gp_string(f, colour, 0);
            fprintf(f, " notitle, \\\n");
        }
        fprintf(f, "  $v%zu using 1:2 title ", k);
        if (l->library) {
            char *t = kbc_xasprintf("%s (library)", l->variant);
            gp_quote(f, t);
            free(t);
            fprintf(f, " lw 3 dt 2 pt %d ps 1.2 lc rgb ", mk);
        } else {
            gp_quote(f, l->variant);
            fprintf(f, " lw 1.5 pt %d ps 1 lc rgb ", mk);
        }
        gp_string(f, colour, 0);
        at++;
        fprintf(f, "%s", at < drawn || ch->ceiling > 0 ? ", \\\n" : "\n");
    }
    ceiling_line(f, ch);
    gp_outputs(f, stem, height);
    int rc = close_script(c, f, path, stem);
    free(path);
    free(stem);
    return rc;
}

/* The series of a bar chart's plot command, each with its continuation:
   only those that draw something (no "library" swatch where no library
   ran). */
static void bar_series(FILE *f, const plot_ctx *c, const kbc_chart *ch)
{
    char *items[KB_MAX_VARIANTS + 4];
    size_t n = 0;
    if (ch->n_groups > 1) {
        /* A box per variant and group, coloured by the variant. */
        for (size_t v = 0; v < ch->n_variants && n < KB_MAX_VARIANTS; v++) {
            int library = 0;
            for (size_t j = 0; j < ch->n_bars; j++)
                library |= ch->bar_variant[j] == v && (ch->bars[j].r->flags & KB_VARIANT_LIBRARY);
            char *title = kbc_xasprintf("%s%s", ch->variants[v], library ? " (library)" : "");
            char *quoted = NULL;
            size_t len = 0;
            FILE *q = open_memstream(&quoted, &len);
            gp_quote(q, title);
            fclose(q);
            items[n++] = kbc_xasprintf("$bars using 1:($3 == %zu ? $2 : 1/0) with boxes lc rgb "
                                       "'%s'%s title %s",
                                       v, library ? "#404040" : palette[v % 16],
                                       library ? " fs pattern 2" : "", quoted);
            free(quoted);
            free(title);
        }
        if (c->opt.band)
            items[n++] = kbc_xstrdup("$bars using 1:2:4:5 with yerrorbars lc rgb '#000000' pt 7 "
                                     "ps 0 title 'slowest to fastest run'");
    } else {
        if (ch->any_kernel)
            items[n++] = kbc_xasprintf("$bars using 0:($2 == 0 ? $1 : 1/0) with boxes lc rgb "
                                       "'%s' title 'kernel'",
                                       palette[0]);
        if (ch->any_library)
            items[n++] = kbc_xstrdup("$bars using 0:($2 == 1 ? $1 : 1/0) with boxes lc rgb "
                                     "'#404040' fs pattern 2 title 'library'");
        if (c->opt.band)
            items[n++] = kbc_xstrdup("$bars using 0:1:3:4 with yerrorbars lc rgb '#000000' pt 7 "
                                     "ps 0 title 'slowest to fastest run'");
    }
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s%s%s\n", i ? "  " : "plot ", items[i],
                i + 1 < n || ch->ceiling > 0 ? ", \\" : "");
        free(items[i]);
    }
    ceiling_line(f, ch);
}

/* The title of a bar chart: the experiment and point (a chart of one
   point) or the experiment and its fixed parameters (grouped), four to a
   line (so that a long title is not cut off at the canvas's edges), the
   GPU; its lines joined by gnuplot's string concatenation. */
static void bar_title(FILE *f, const plot_ctx *c, const kbc_chart *ch)
{
    const kbc_record *r0 = ch->first;
    char *line = ch->n_groups > 1
                     ? kbc_xstrdup(r0->experiment)
                     : kbc_xasprintf("%s point %llu", r0->experiment,
                                     (unsigned long long)r0->point + 1);
    fprintf(f, "set title ");
    uint32_t k = 0;
    for (uint32_t i = 0; i < r0->n_params; i++) {
        if (ch->n_groups > 1 && r0->params[i].swept)
            continue;
        if (k++ % 4 == 0) {
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
}

/* One bar chart (chart.h) as a script: the variants of one point, or a
   group of them per point (each variant in its colour, the groups named
   by their swept values). */
static int bar_plot(plot_ctx *c, const kbc_chart *ch)
{
    const kbc_record *r0 = ch->first;
    if (!kbc_chart_drawn(ch)) {
        fprintf(c->out, "no plot for %s (%s): %s\n", kbc_text_visible(r0->experiment),
                kbc_text_visible(ch->group), not_drawn_why(ch));
        return 0;
    }
    size_t m = ch->n_bars, nv = ch->n_variants ? ch->n_variants : 1;
    int grouped = ch->n_groups > 1;
    char *stem, *path;
    FILE *f = open_script(c, ch, &stem, &path);
    if (!f)
        return -1;
    /* The data, numbers only: one chart point's value, whether the row is
       a library's, its slowest and fastest run; grouped, its place on the
       x axis first and its variant third.  The names are the tic labels
       and the titles. */
    fprintf(f, "$bars << EOD\n");
    for (size_t j = 0; j < m; j++) {
        const kbc_chart_point *q = &ch->bars[j];
        double lo = (isfinite(q->lo) ? q->lo : q->y) * ch->scale;
        double hi = (isfinite(q->hi) ? q->hi : q->y) * ch->scale;
        if (grouped)
            fprintf(f, "%zu %.9g %zu %.9g %.9g\n", ch->bar_group[j] * (nv + 1) + ch->bar_variant[j],
                    q->y * ch->scale, ch->bar_variant[j], lo, hi);
        else
            fprintf(f, "%.9g %d %.9g %.9g\n", q->y * ch->scale,
                    (q->r->flags & KB_VARIANT_LIBRARY) ? 1 : 0, lo, hi);
    }
    fprintf(f, "EOD\n");
    bar_title(f, c, ch);
    y_lines(f, c, ch);
    above_note(f, ch);
    if (grouped) {
        fprintf(f, "set offsets 0, 0, graph 0.08, 0\n"
                   "set grid ytics\nset xrange [-0.6:%zu.4]\n",
                ch->n_groups * (nv + 1) - 2);
        fprintf(f, "set style fill solid 0.7 border -1\nset boxwidth 0.9\n");
        fprintf(f, "set xtics rotate by -35 (");
        for (size_t g = 0; g < ch->n_groups; g++) {
            gp_quote(f, ch->group_labels[g]);
            fprintf(f, " %.1f%s", (double)(g * (nv + 1)) + (double)(nv - 1) / 2,
                    g + 1 < ch->n_groups ? ", " : "");
        }
        fprintf(f, ")\n");
    } else {
        fprintf(f, "set offsets 0, 0, graph 0.08, 0\n"
                   "set grid ytics\nset xrange [-0.6:%zu.4]\n",
                m - 1);
        fprintf(f, "set style fill solid 0.7 border -1\nset boxwidth 0.7\n");
        fprintf(f, "set xtics rotate by -35 (");
        for (size_t j = 0; j < m; j++) {
            gp_quote(f, ch->bars[j].r->variant);
            fprintf(f, " %zu%s", j, j + 1 < m ? ", " : "");
        }
        fprintf(f, ")\n");
    }
    fprintf(f, "set key above horizontal\n");
    gp_svg(f, stem, 560);
    /* With a log y axis the boxes start at the axis's bottom. */
    bar_series(f, c, ch);
    gp_outputs(f, stem, 560);
    int rc = close_script(c, f, path, stem);
    free(path);
    free(stem);
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
    plot_ctx c = {.gpu = json_is_string(gpu) ? json_string_value(gpu) : NULL, .dir = dir,
                  .out = out};
    if (opt)
        c.opt = *opt;
    kbc_chart_opts co = {.metric = c.opt.metric, .band = c.opt.band};
    /* An energy metric on a file none of whose rows has energy would draw
       nothing at all: the one sentence says so, rather than a line per
       chart. */
    size_t with_energy = 0;
    for (size_t i = 0; i < n; i++)
        with_energy += (size_t)kbc_record_has_energy(&recs[i]);
    if (kbc_chart_metric_energy(co.metric) && n > 0 && !with_energy) {
        fprintf(err, "kbench: %s: no row has its energy measured, so --metric %s has nothing "
                     "to draw; measure it with energy = on in the experiment "
                     "(docs/energy.md).\n",
                path, kbc_chart_metric_name(co.metric));
        json_decref(doc);
        kbc_records_free(recs, n);
        return KBC_EXIT_USAGE;
    }
    size_t n_charts;
    kbc_chart *charts = kbc_charts(recs, n, &co, &n_charts);
    int code = 0;
    for (size_t k = 0; k < n_charts && code == 0; k++)
        code = (charts[k].x ? line_plot(&c, &charts[k]) : bar_plot(&c, &charts[k]))
                   ? KBC_EXIT_SYSTEM
                   : 0;
    kbc_charts_free(charts, n_charts);
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
