/* plot.c -- see plot.h. */
#define _GNU_SOURCE
#include "plot.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The ceiling's line in a plot command (none when there is no ceiling). */
static void ceiling_line(FILE *f, rate_kind rk, const plot_ceiling *c)
{
    if (!(c->value > 0))
        return;
    const char *kind = c->kind && c->kind[0] ? c->kind : rk == RATE_GFLOPS ? "compute" : "bandwidth";
    /* The tensor ceilings are measured with mma.sync (docs/output.md), which
       wgmma kernels pass: the label says so. */
    int mma = strcmp(kind, "tf32") == 0 || strcmp(kind, "bf16") == 0;
    char *title = kbc_xasprintf("%s%s ceiling (%.0f %s)", kind, mma ? " mma.sync" : "", c->value,
                                rk == RATE_GFLOPS ? "GFLOP/s" : "GB/s");
    fprintf(f, "  %.9g title ", c->value);
    gp_quote(f, title);
    fprintf(f, " with lines lw 2 dt 4 lc rgb '#c00000'\n");
    free(title);
}

static double rate_of(const kbc_record *r, rate_kind k)
{
    return k == RATE_GBPS ? r->gbps : k == RATE_GFLOPS ? r->gflops : r->items_per_s;
}

static const char *rate_label(rate_kind k)
{
    return k == RATE_GBPS     ? "throughput (GB/s, bytes read + written)"
           : k == RATE_GFLOPS ? "throughput (GFLOP/s)"
                              : "throughput (items/s)";
}

static int ran(const kbc_record *r)
{
    return (r->outcome == KBC_PASS || r->outcome == KBC_FAIL) && r->time.n > 0;
}

/* A parameter's value as a number for the x axis, or NaN. */
static double param_number(const kbc_rec_param *q)
{
    switch (q->type) {
    case KB_PARAM_SIZE:
        return (double)q->value.u;
    case KB_PARAM_INT:
        return (double)q->value.i;
    case KB_PARAM_FLOAT:
        return q->value.f;
    default:
        return NAN;
    }
}

static long param_index(const kbc_record *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_params; i++)
        if (strcmp(r->params[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* The group a row belongs to within its experiment: the values of the
   swept parameters other than x, as "dtype=f32,block=256" ("" for none). */
static void group_of(const kbc_record *r, const char *x, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < r->n_params && used < n; i++) {
        const kbc_rec_param *q = &r->params[i];
        if (!q->swept || (x && strcmp(q->name, x) == 0))
            continue;
        int w = snprintf(buf + used, n - used, "%s%s=%s", used ? "," : "", q->name, q->text);
        if (w > 0)
            used += (size_t)w;
    }
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
static void gp_svg(FILE *f, const char *stem)
{
    fprintf(f, "set terminal svg size 900,560 dynamic enhanced font 'sans,13'\n");
    fprintf(f, "set output ");
    gp_file(f, stem, "svg");
    fputc('\n', f);
}

static void gp_outputs(FILE *f, const char *stem)
{
    fprintf(f, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
               "    set terminal pngcairo size 900,560 enhanced font 'sans,11'\n"
               "} else {\n"
               "    set terminal png size 900,560 enhanced\n"
               "}\n");
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
    char **written; /* stems written, for running gnuplot */
    size_t n_written;
} plot_ctx;

/* One line plot: rows of experiment exp and group, x the swept parameter. */
static int line_plot(plot_ctx *c, const char *exp, const char *group, const char *x, int log2x)
{
    /* The variants in the order they first appear, and the rate. */
    const char *vars[KB_MAX_VARIANTS];
    uint32_t flags[KB_MAX_VARIANTS];
    size_t nv = 0;
    rate_votes votes = {0};
    char g[512];
    for (size_t i = 0; i < c->n; i++) {
        const kbc_record *r = &c->recs[i];
        group_of(r, x, g, sizeof g);
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
    rate_kind rk = rate_pick(&votes);
    char *stem = file_stem((const char *const *)c->written, c->n_written, exp, group);
    char *path = kbc_xasprintf("%s/%s.gp", c->dir, stem);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "kbench: cannot write %s: %s.\n", path, strerror(errno));
        free(path);
        free(stem);
        return -1;
    }
    gp_head(f, stem);
    /* Each variant's points, sorted by x, as a data block. */
    plot_ceiling ceiling = {0, ""};
    for (size_t k = 0; k < nv; k++) {
        fprintf(f, "$v%zu << EOD\n", k);
        /* Rows in file order are in sweep order; sort by x here. */
        size_t m = 0;
        double *xs = kbc_xcalloc(c->n + 1, sizeof *xs), *ys = kbc_xcalloc(c->n + 1, sizeof *ys);
        for (size_t i = 0; i < c->n; i++) {
            const kbc_record *r = &c->recs[i];
            group_of(r, x, g, sizeof g);
            if (strcmp(r->experiment, exp) != 0 || strcmp(g, group) != 0 ||
                strcmp(r->variant, vars[k]) != 0 || !ran(r))
                continue;
            long pi = param_index(r, x);
            double xv = pi >= 0 ? param_number(&r->params[pi]) : NAN;
            double yv = rate_of(r, rk);
            if (!isfinite(xv) || !isfinite(yv))
                continue;
            ceiling_note(&ceiling, rk, r);
            size_t at = m++;
            while (at > 0 && xs[at - 1] > xv) {
                xs[at] = xs[at - 1];
                ys[at] = ys[at - 1];
                at--;
            }
            xs[at] = xv;
            ys[at] = yv;
        }
        for (size_t i = 0; i < m; i++)
            fprintf(f, "%.17g %.9g\n", xs[i], ys[i]);
        fprintf(f, "EOD\n");
        free(xs);
        free(ys);
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
    char *xl = kbc_xasprintf("%s%s", x, log2x ? " (elements, log2 scale)" : "");
    fprintf(f, "\nset xlabel ");
    gp_quote(f, xl);
    free(xl);
    fprintf(f, "\nset ylabel ");
    gp_quote(f, rate_label(rk));
    fputc('\n', f);
    if (log2x)
        fprintf(f, "set logscale x 2\nset format x '2^{%%L}'\n");
    /* Room above the highest line, so that a ceiling is not hidden in
       the border. */
    fprintf(f, "set yrange [0:*]\nset offsets 0, 0, graph 0.08, 0\nset grid\n"
               "set key outside right top vertical\n");
    fprintf(f, "set style data linespoints\n");
    gp_svg(f, stem);
    fprintf(f, "plot \\\n");
    size_t lib = 0, own = 0;
    for (size_t k = 0; k < nv; k++) {
        fprintf(f, "  $v%zu using 1:2 title ", k);
        if (flags[k] & KB_VARIANT_LIBRARY) {
            /* Libraries: thick dashed black-to-grey lines, open squares. */
            char *t = kbc_xasprintf("%s (library)", vars[k]);
            gp_quote(f, t);
            free(t);
            fprintf(f, " lw 3 dt 2 pt 4 ps 1.2 lc rgb '%s'", (lib++ % 2) ? "#606060" : "#000000");
        } else {
            gp_quote(f, vars[k]);
            fprintf(f, " lw 1.5 pt %zu lc %zu", 5 + own % 9, 1 + own);
            own++;
        }
        fprintf(f, "%s", k + 1 < nv || ceiling.value > 0 ? ", \\\n" : "\n");
    }
    ceiling_line(f, rk, &ceiling);
    gp_outputs(f, stem);
    int bad = fclose(f) != 0;
    if (bad)
        fprintf(stderr, "kbench: cannot write %s.\n", path);
    else {
        fprintf(c->out, "wrote %s\n", path);
        c->written = kbc_xrealloc(c->written, (c->n_written + 1) * sizeof *c->written);
        c->written[c->n_written++] = kbc_xstrdup(stem);
    }
    free(path);
    free(stem);
    return bad ? -1 : 0;
}

/* A bar chart of the variants at one point (an experiment that sweeps no
   numeric parameter): rows i0 .. i1 of the file. */
static int bar_plot(plot_ctx *c, size_t i0, size_t i1)
{
    const kbc_record *r0 = &c->recs[i0];
    rate_votes votes = {0};
    for (size_t i = i0; i < i1; i++)
        rate_vote(&votes, &c->recs[i]);
    rate_kind rk = rate_pick(&votes);
    char g[512], pt[32];
    group_of(r0, NULL, g, sizeof g);
    if (!g[0])
        snprintf(g, sizeof g, "point%llu", (unsigned long long)r0->point + 1);
    char *stem = file_stem((const char *const *)c->written, c->n_written, r0->experiment, g);
    char *path = kbc_xasprintf("%s/%s.gp", c->dir, stem);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "kbench: cannot write %s: %s.\n", path, strerror(errno));
        free(path);
        free(stem);
        return -1;
    }
    gp_head(f, stem);
    plot_ceiling ceiling = {0, ""};
    /* The data: the rate and whether the row is a library's, numbers only;
       the variants' names are the tic labels, below. */
    fprintf(f, "$bars << EOD\n");
    for (size_t i = i0; i < i1; i++) {
        const kbc_record *r = &c->recs[i];
        double y = ran(r) ? rate_of(r, rk) : NAN;
        fprintf(f, "%.9g %d\n", isfinite(y) ? y : 0.0, (r->flags & KB_VARIANT_LIBRARY) ? 1 : 0);
        if (ran(r))
            ceiling_note(&ceiling, rk, r);
    }
    fprintf(f, "EOD\n");
    /* The title: the experiment and point, the parameters four to a line
       (so that a long title is not cut off at the canvas's edges), the
       GPU; its lines joined by gnuplot's string concatenation. */
    snprintf(pt, sizeof pt, "%llu", (unsigned long long)r0->point + 1);
    char *line = kbc_xasprintf("%s point %s", r0->experiment, pt);
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
    fprintf(f, "\nset ylabel ");
    gp_quote(f, rate_label(rk));
    fprintf(f, "\nset yrange [0:*]\nset offsets 0, 0, graph 0.08, 0\n"
               "set grid ytics\nset xrange [-0.6:%zu.4]\n",
            i1 - i0 - 1);
    fprintf(f, "set style fill solid 0.7 border -1\nset boxwidth 0.7\n");
    fprintf(f, "set xtics rotate by -35 (");
    for (size_t i = i0; i < i1; i++) {
        gp_quote(f, c->recs[i].variant);
        fprintf(f, " %zu%s", i - i0, i + 1 < i1 ? ", " : "");
    }
    fprintf(f, ")\n");
    fprintf(f, "set key above horizontal\n");
    gp_svg(f, stem);
    fprintf(f, "plot $bars using 0:($2 == 0 ? $1 : 1/0) with boxes lc 1 title 'kernel', \\\n");
    fprintf(f, "  $bars using 0:($2 == 1 ? $1 : 1/0) with boxes lc rgb '#404040' fs pattern 2 "
               "title 'library'%s\n",
            ceiling.value > 0 ? ", \\" : "");
    ceiling_line(f, rk, &ceiling);
    gp_outputs(f, stem);
    int bad = fclose(f) != 0;
    if (!bad) {
        fprintf(c->out, "wrote %s\n", path);
        c->written = kbc_xrealloc(c->written, (c->n_written + 1) * sizeof *c->written);
        c->written[c->n_written++] = kbc_xstrdup(stem);
    }
    free(path);
    free(stem);
    return bad ? -1 : 0;
}

/* Runs gnuplot on dir/stem.gp in dir.  Returns its exit status (-1 when
   it could not be started). */
static int run_gnuplot(const char *dir, const char *stem)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(127);
        /* "./": the script is never taken for an option. */
        char *script = kbc_xasprintf("./%s.gp", stem);
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int kbc_cmd_plot(const char *path, const char *dir, const char *md, FILE *out, FILE *err)
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
        /* The x axis: the first swept size parameter (log 2), else the first
           swept number. */
        const char *x = NULL;
        int log2x = 0;
        for (uint32_t q = 0; q < r->n_params && !x; q++)
            if (r->params[q].swept && r->params[q].type == KB_PARAM_SIZE) {
                x = r->params[q].name;
                log2x = 1;
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
            group_of(&recs[k], x, g, sizeof g);
            int done = 0;
            for (size_t j = i; j < k && !done; j++) {
                char h[512];
                group_of(&recs[j], x, h, sizeof h);
                done = strcmp(recs[j].experiment, r->experiment) == 0 && strcmp(g, h) == 0;
            }
            if (!done)
                code = line_plot(&c, r->experiment, g, x, log2x) ? KBC_EXIT_SYSTEM : 0;
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
                int st = run_gnuplot(dir, c.written[k]);
                if (st != 0) {
                    fprintf(err, "kbench: gnuplot refused %s/%s.gp (exit status %d).\n", dir,
                            c.written[k], st);
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
    gp_svg(f, stem);
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
    gp_outputs(f, stem);
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
    if (any && kbc_have_gnuplot() && run_gnuplot(dir, stem) != 0)
        return -2;
    return 0;
}
