/*
 * test_html.c -- kbench report: the HTML page of a results file written
 * here (a sweep and a headline experiment, with hostile names in the GPU,
 * the command line, an experiment, a variant, a parameter's text and a
 * reason), against a baseline; and the page opened in headless Chromium
 * (Debian's chromium package, which tools/setup.sh installs): it renders
 * with no console message, holds every row, sorts on a click, and runs no
 * script but its own.  Without Chromium the browser tests skip, saying why.
 *
 * The browser tests open report.html#selftest: the page's own script then
 * clicks the median-time header of the first table twice, switches the
 * first plot to time, and records the row orders and counts as attributes
 * of an <output id="kbench-selftest"> element, which --dump-dom shows.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "energy_rows.h"
#include "report.h"
#include "report_html.h"
#include "text.h"

#define KBENCH KBENCH_BINARY_DIR "/kbench"

static char tmpdir[] = "/tmp/kbench-html-XXXXXX";

/* The hostile texts, one per place a results file carries text. */
#define EVIL_GPU "NVIDIA \"><img src=x onerror=alert(1)>`!system(\"g\")`"
#define EVIL_EXP "sweep & <b>bold</b> 'q'"
#define EVIL_VARIANT "</svg><script>alert(2)</script>\nx`!system(\"v\")`"
#define EVIL_PARAM "f32'<i>&amp;`!system(\"p\")`"
#define EVIL_REASON "<iframe src=x></iframe>"
#define EVIL_COMMAND "kbench run '<script>alert(3)</script>'"

/* The sweep: N_POINTS sizes, three variants; its first-table rows are in
   this order, each with its median time (distinct, so that sorting by time
   has one answer); the hostile variant's last point is skipped. */
#define N_POINTS 5
#define N_VARIANTS 3
#define N_SWEEP (N_POINTS * N_VARIANTS)
#define N_HEADLINE 3
#define SKIPPED_ROW (N_SWEEP - 2) /* point 4, the hostile variant */
static const char *const variants[N_VARIANTS] = {"naive", EVIL_VARIANT, "cub"};

static double sweep_time(int row)
{
    int p = row / N_VARIANTS, v = row % N_VARIANTS;
    static const double scale[N_VARIANTS] = {3.0, 1.0, 1.7};
    return 1e-5 * scale[v] * pow(1.9, p);
}

/* One row with 20 samples spread 1% around t (t NaN: skipped). */
static kbc_record row(const char *exp, const char *variant, uint32_t flags, uint64_t n, int swept,
                      uint64_t point, double t)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.experiment, sizeof r.experiment, "%s", exp);
    snprintf(r.plugin, sizeof r.plugin, "reduce");
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    r.flags = flags;
    r.backend = KB_BACKEND_CUDA;
    r.n_params = 2;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = n;
    snprintf(r.params[0].text, sizeof r.params[0].text, "%llu", (unsigned long long)n);
    r.params[0].swept = swept;
    snprintf(r.params[1].name, sizeof r.params[1].name, "dtype");
    r.params[1].type = KB_PARAM_ENUM;
    snprintf(r.params[1].text, sizeof r.params[1].text, "%s", EVIL_PARAM);
    r.point = point;
    r.n_points = N_POINTS;
    if (isnan(t)) {
        r.outcome = KBC_SKIPPED;
        snprintf(r.reason, sizeof r.reason, "%s", EVIL_REASON);
        return r;
    }
    r.outcome = KBC_PASS;
    double x[20];
    for (int k = 0; k < 20; k++)
        x[k] = t * (1 + 0.01 * (((k * 7) % 11) - 5) / 5.0);
    kbc_record_set_samples(&r, x, 20);
    kbc_stats_compute(x, 20, &r.time);
    r.work.bytes_read = n * 4;
    r.gbps = (double)(n * 4) / t / 1e9;
    r.ceiling_gbps = 3000.0;
    snprintf(r.ceiling, sizeof r.ceiling, "read");
    r.pct_ceiling = r.gbps / 30.0;
    return r;
}

/* The results at path with every time times scale; slow_naive: naive's
   times doubled (the baseline is written with 0, the new run with 1);
   extra: a row only here. */
static void write_results(const char *path, double scale, int slow_naive, int extra)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.has_gpu = 1;
    snprintf(m.name, sizeof m.name, "%s", EVIL_GPU);
    snprintf(m.host, sizeof m.host, "fixture");
    kbc_run_info info = {.machine = &m, .command_line = EVIL_COMMAND};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    for (int p = 0; p < N_POINTS; p++) {
        kbc_record rs[N_VARIANTS];
        for (int v = 0; v < N_VARIANTS; v++) {
            int i = p * N_VARIANTS + v;
            double t = i == SKIPPED_ROW ? NAN
                                        : scale * sweep_time(i) * (v == 0 && slow_naive ? 2 : 1);
            rs[v] = row(EVIL_EXP, variants[v], v == 2 ? KB_VARIANT_LIBRARY : 0, 1024ULL << p, 1,
                        (uint64_t)p, t);
        }
        cr_assert_eq(s.point(s.ctx, rs, N_VARIANTS), 0);
        for (int v = 0; v < N_VARIANTS; v++)
            kbc_record_free(&rs[v]);
    }
    kbc_record h[N_HEADLINE + 1];
    h[0] = row("headline", "naive", 0, 1ULL << 28, 0, 0, scale * 4e-3);
    h[1] = row("headline", "shuffle", 0, 1ULL << 28, 0, 0, scale * 1e-3);
    h[2] = row("headline", "cub", KB_VARIANT_LIBRARY, 1ULL << 28, 0, 0, scale * 0.9e-3);
    h[3] = row("headline", "retired", 0, 1ULL << 28, 0, 0, scale * 2e-3);
    cr_assert_eq(s.point(s.ctx, h, N_HEADLINE + (extra ? 1 : 0)), 0);
    for (int i = 0; i < N_HEADLINE + 1; i++)
        kbc_record_free(&h[i]);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
}

static void setup(void)
{
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp failed: %s", strerror(errno));
    char path[512];
    snprintf(path, sizeof path, "%s/new", tmpdir);
    cr_assert_eq(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/new/results.json", tmpdir);
    write_results(path, 1, 1, 0);
    snprintf(path, sizeof path, "%s/base.json", tmpdir);
    write_results(path, 1, 0, 1);
}

static void teardown(void)
{
    /* KBENCH_TEST_KEEP=1 keeps the folder, to look at the pages. */
    if (getenv("KBENCH_TEST_KEEP")) {
        fprintf(stderr, "kept %s\n", tmpdir);
        return;
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(html, .init = setup, .fini = teardown);

/* The whole of a file (malloc'd; NULL when it cannot be read). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; (got = fread(buf + n, 1, cap - n - 1, f)) > 0;)
        if ((n += got) == cap - 1)
            buf = realloc(buf, cap *= 2);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static char *slurp_in(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return slurp(path);
}

/* Runs `kbench report ARGS` in tmpdir (stdout in out.txt, stderr in
   err.txt); returns the exit code. */
static int report(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' report %s >out.txt 2>err.txt", tmpdir, KBENCH,
             args);
    int st = system(cmd);
    cr_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* ---- the escaping and the sparkline ------------------------------------- */

Test(html, text_html_escapes_markup_quotes_and_controls)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    kbc_text_html(f, "<a href=\"x\">'&'</a>\n\xff");
    fclose(f);
    cr_assert_str_eq(buf, "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\\n\\xff");
    free(buf);
}

Test(html, a_sparkline_is_one_svg_broken_at_missing_points)
{
    double y[5] = {1, 2, NAN, 3, 2};
    char *s = kbc_html_sparkline(y, 5, NULL, 0, 80, 16);
    cr_assert_eq(strncmp(s, "<svg class=\"spark\" viewBox=\"0 0 80 16\"", 38), 0, "%s", s);
    cr_assert_eq(count(s, "</svg>"), 1, "%s", s);
    cr_assert_eq(count(s, "M"), 2, "two pieces: %s", s); /* each piece starts with M */
    cr_assert_eq(count(s, "L"), 2, "%s", s);
    free(s);
}

/* ---- the page as text ------------------------------------------------------ */

Test(html, writes_the_report_beside_the_results_of_a_folder)
{
    cr_assert_eq(report("new"), 0);
    char *out = slurp_in("out.txt");
    cr_assert_str_eq(out, "wrote new/report.html\n");
    free(out);
    char *page = slurp_in("new/report.html");
    cr_assert_not_null(page);
    cr_assert_eq(strncmp(page, "<!DOCTYPE html>", 15), 0);
    free(page);
}

Test(html, an_output_folder_gets_report_html)
{
    char path[512];
    snprintf(path, sizeof path, "%s/pages", tmpdir);
    cr_assert_eq(mkdir(path, 0777), 0);
    cr_assert_eq(report("new -o pages"), 0);
    char *out = slurp_in("out.txt");
    cr_assert_str_eq(out, "wrote pages/report.html\n");
    free(out);
}

Test(html, a_run_without_rows_says_so)
{
    char path[512];
    snprintf(path, sizeof path, "%s/empty.json", tmpdir);
    kbc_run_info info = {.command_line = "kbench run empty.ini"};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    cr_assert_eq(report("empty.json -o r.html"), 0);
    char *page = slurp_in("r.html");
    cr_assert_not_null(page);
    cr_assert_not_null(strstr(page, "<p>The results file holds no rows.</p>"));
    cr_assert_eq(count(page, "<table"), 0);
    free(page);
}

Test(html, the_page_needs_nothing_from_outside)
{
    cr_assert_eq(report("new/results.json -o r.html"), 0);
    char *page = slurp_in("r.html");
    cr_assert_not_null(page);
    cr_assert_eq(count(page, "<script"), 1, "one script, kbench's own");
    cr_assert_eq(count(page, "src=\""), 0, "nothing loaded");
    cr_assert_eq(count(page, "href=\"http"), 0);
    cr_assert_eq(count(page, "<link"), 0);
    cr_assert_eq(count(page, "url("), 0);
    cr_assert_eq(count(page, "@import"), 0);
    cr_assert_not_null(strstr(page, "Content-Security-Policy\" content=\"default-src 'none'; "
                                    "style-src 'unsafe-inline'; script-src 'sha256-"));
    free(page);
}

Test(html, every_text_from_the_results_is_escaped)
{
    cr_assert_eq(report("new/results.json -o r.html"), 0);
    char *page = slurp_in("r.html");
    cr_assert_not_null(page);
    /* None of the hostile texts as written; each as text. */
    cr_assert_null(strstr(page, "<img"));
    cr_assert_null(strstr(page, "<iframe"));
    cr_assert_null(strstr(page, "<b>bold"));
    cr_assert_null(strstr(page, "<i>"));
    cr_assert_null(strstr(page, "<script>alert"));
    cr_assert_not_null(strstr(page, "NVIDIA &quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
    cr_assert_not_null(strstr(page, "sweep &amp; &lt;b&gt;bold&lt;/b&gt; &#39;q&#39;"));
    cr_assert_not_null(strstr(page, "&lt;/svg&gt;&lt;script&gt;alert(2)&lt;/script&gt;\\nx"));
    /* A backquote, '!' and system( stay text in the GPU, variant and
       parameter names; their quotes are escaped. */
    cr_assert_null(strstr(page, "system(\""));
    cr_assert_not_null(strstr(page, "`!system(&quot;g&quot;)`"));
    cr_assert_not_null(strstr(page, "`!system(&quot;v&quot;)`"));
    cr_assert_not_null(strstr(page, "`!system(&quot;p&quot;)`"));
    cr_assert_not_null(strstr(page, "f32&#39;&lt;i&gt;&amp;amp;"));
    cr_assert_not_null(strstr(page, "&lt;iframe src=x&gt;&lt;/iframe&gt;"));
    cr_assert_not_null(strstr(page, "kbench run &#39;&lt;script&gt;alert(3)&lt;/script&gt;&#39;"));
    /* Every <svg> is closed once: no name closed one early. */
    cr_assert_eq(count(page, "<svg"), count(page, "</svg>"));
    free(page);
}

Test(html, a_table_row_per_result_and_the_plots)
{
    cr_assert_eq(report("new/results.json -o r.html"), 0);
    char *page = slurp_in("r.html");
    cr_assert_not_null(page);
    cr_assert_eq(count(page, "<tr data-i="), N_SWEEP + N_HEADLINE);
    cr_assert_eq(count(page, "<table class=\"rows\">"), 2);
    /* One line plot (the sweep: rate, log rate and time views) and one
       bar chart (the headline: rate and time); the ceiling drawn in the
       rate views. */
    cr_assert_eq(count(page, "<figure class=\"plot\""), 2);
    cr_assert_eq(count(page, "<svg class=\"rate\""), 2);
    cr_assert_eq(count(page, "<svg class=\"lograte\""), 1);
    cr_assert_eq(count(page, "<svg class=\"time\""), 2);
    /* The ceiling in the unit of the chart's y axis, as kbench plot
       titles it: the sweep's rates are in MB/s, the headline's in TB/s. */
    cr_assert_eq(count(page, "read ceiling (3000000 MB/s)"), 2, "%s", page);
    cr_assert_eq(count(page, "read ceiling (3.00 TB/s)"), 1, "%s", page);
    cr_assert_not_null(strstr(page, "median time, log scale"));
    cr_assert_not_null(strstr(page, "throughput (MB/s, bytes read + written), log scale"));
    cr_assert_not_null(strstr(page, "n (elements, log2 scale)"));
    free(page);
}

/* ---- the charts are kbench plot's (analysis/chart.h) ----------------------- */

/* Runs `kbench plot RESULTS -o DIR` in tmpdir without gnuplot (the scripts
   only); returns the exit code. */
static int plot(const char *results, const char *dir)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p '%s' && PATH=/nonexistent '%s' plot %s -o '%s' >plot.txt 2>&1",
             tmpdir, dir, KBENCH, results, dir);
    int st = system(cmd);
    cr_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* Every "... ceiling (...)" title of the scripts in tmpdir/dir, each
   ending in '\n', into one malloc'd string. */
static char *plot_ceilings(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s/%s' && grep -oh \"[a-z0-9. ]*ceiling ([^)]*)\" *.gp | sort -u > ../ceilings.txt",
             tmpdir, dir);
    cr_assert_eq(system(cmd), 0);
    return slurp_in("ceilings.txt");
}

Test(html, each_ceiling_is_titled_as_the_plot_titles_it)
{
    cr_assert_eq(plot("new/results.json", "plots"), 0);
    cr_assert_eq(report("new/results.json -o r.html"), 0);
    char *page = slurp_in("r.html");
    char *ceilings = plot_ceilings("plots");
    cr_assert_not_null(page);
    cr_assert_not_null(ceilings);
    size_t n = 0;
    for (char *l = strtok(ceilings, "\n"); l; l = strtok(NULL, "\n"), n++)
        cr_assert_not_null(strstr(page, l), "the plot's '%s' is not in the report", l);
    cr_assert_eq(n, 2, "the sweep's and the headline's");
    free(ceilings);
    free(page);
}

/* A results file of experiment "x" sweeping n over sizes[0..n_sizes):
   variant "k" at every size, and variant "flat", which ignores n, once
   (its row stands for every size). */
static void write_flat(const char *name, const uint64_t *sizes, size_t n_sizes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    kbc_machine m;
    memset(&m, 0, sizeof m);
    kbc_run_info info = {.machine = &m, .command_line = "kbench run x.ini"};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    for (size_t p = 0; p < n_sizes; p++) {
        kbc_record rs[2];
        rs[0] = row("x", "k", 0, sizes[p], 1, p, 1e-5 * (double)(p + 1));
        size_t n = 1;
        if (p == 0) {
            rs[1] = row("x", "flat", 0, sizes[p], 1, p, 2e-5);
            rs[1].points = n_sizes;
            snprintf(rs[1].ignores, sizeof rs[1].ignores, "n");
            n = 2;
        }
        cr_assert_eq(s.point(s.ctx, rs, n), 0);
        for (size_t k = 0; k < n; k++)
            kbc_record_free(&rs[k]);
    }
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
}

Test(html, a_variant_that_ignores_x_is_a_flat_line_as_in_plot)
{
    static const uint64_t sizes[] = {1024, 4096, 16384, 65536};
    write_flat("flat.json", sizes, 4);
    cr_assert_eq(report("flat.json -o r.html"), 0);
    char *page = slurp_in("r.html");
    cr_assert_not_null(page);
    /* Its one row at each of the four sizes, in each of the three views. */
    cr_assert_eq(count(page, "<title>flat, n="), 3 * 4, "%s", page);
    cr_assert_eq(count(page, "<title>flat, n=65536: "), 3);
    free(page);
}

Test(html, values_that_would_crowd_get_a_slot_each_as_in_plot)
{
    /* 4096 beside 4097 in a sweep to 8192: plot gives each a slot. */
    static const uint64_t sizes[] = {4096, 4097, 8192};
    write_flat("slots.json", sizes, 3);
    cr_assert_eq(plot("slots.json", "slots"), 0);
    cr_assert_eq(report("slots.json -o r.html"), 0);
    char *page = slurp_in("r.html");
    cr_assert_not_null(page);
    char *script = slurp_in("slots/x.gp");
    cr_assert_not_null(script);
    cr_assert_not_null(strstr(script, "n (elements), one slot per value"), "%s", script);
    cr_assert_eq(count(page, "n (elements), one slot per value"), 3, "%s", page);
    /* A tick labelled with each value. */
    cr_assert_eq(count(page, ">4097</text>"), 3, "%s", page);
    free(script);
    free(page);
}

Test(html, lines_far_below_the_ceiling_open_on_the_log_axis)
{
    /* The sweep's rates are below 1 GB/s against a 3000 GB/s ceiling; the
       bar chart has no log view. */
    cr_assert_eq(report("new/results.json -o r.html"), 0);
    char *page = slurp_in("r.html");
    cr_assert_not_null(page);
    const char *first = strstr(page, "<figure class=\"plot\"");
    cr_assert_not_null(first);
    const char *lograte = "<figure class=\"plot\" data-view=\"lograte\">";
    cr_assert_eq(strncmp(first, lograte, strlen(lograte)), 0, "%.60s", first);
    const char *second = strstr(first + 1, "<figure class=\"plot\"");
    cr_assert_not_null(second);
    const char *rate = "<figure class=\"plot\" data-view=\"rate\">";
    cr_assert_eq(strncmp(second, rate, strlen(rate)), 0, "%.60s", second);
    free(page);
}

Test(html, a_baseline_adds_compare_verdicts)
{
    cr_assert_eq(report("new --baseline base.json -o r.html"), 0);
    char *page = slurp_in("r.html");
    cr_assert_not_null(page);
    cr_assert_not_null(strstr(page, ">verdict</th>"));
    /* naive's sweep rows are twice as slow; the others are the same rows;
       the skipped row has no verdict. */
    cr_assert_eq(count(page, "<td class=\"v-slower\">slower</td>"), N_POINTS);
    cr_assert_eq(count(page, "<td class=\"v-no-change\">no change</td>"),
                 N_SWEEP - N_POINTS - 1 + N_HEADLINE);
    cr_assert_eq(count(page, "did not run"), 2, "the skipped row, in its title and cell");
    cr_assert_not_null(strstr(page, "+100.0%"));
    /* The baseline's extra row is listed. */
    cr_assert_not_null(strstr(page, "Only in the baseline (1 rows)"));
    cr_assert_not_null(strstr(page, "/retired</code>"));
    free(page);
}

/* ---- energy ---------------------------------------------------------------- */

/* A results file tmpdir/name with energy: experiment "esweep" over n =
   2^20, 2^21, 2^22 with variants "a" (j_scale times 1, 2, 4 mJ per run),
   "b" (twice a's) and "c" (energy = on, no NVML: no energy), and
   experiment "ebars" at one point, whose "x" has j_scale times 3 mJ per
   run. */
static void write_energy(const char *name, double j_scale)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    kbc_machine m;
    memset(&m, 0, sizeof m);
    kbc_run_info info = {.machine = &m, .command_line = "kbench run energy.ini"};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    for (uint64_t p = 0; p < 3; p++) {
        kbc_record rs[3] = {row("esweep", "a", 0, 1ULL << (20 + p), 1, p, 1e-4 * (double)(p + 1)),
                            row("esweep", "b", 0, 1ULL << (20 + p), 1, p, 2e-4 * (double)(p + 1)),
                            row("esweep", "c", 0, 1ULL << (20 + p), 1, p, 3e-4 * (double)(p + 1))};
        double j = j_scale * 1e-3 * (double)(1u << p);
        double wa[5] = {0.99 * j, 0.995 * j, j, 1.005 * j, 1.01 * j};
        double wb[5] = {2 * wa[0], 2 * wa[1], 2 * wa[2], 2 * wa[3], 2 * wa[4]};
        er_measured(&rs[0], wa, 5, 1.0);
        er_measured(&rs[1], wb, 5, 1.0);
        er_not_measured(&rs[2], KBC_ENERGY_NO_NVML, "NVML could not be loaded <here>");
        cr_assert_eq(s.point(s.ctx, rs, 3), 0);
        for (int k = 0; k < 3; k++)
            kbc_record_free(&rs[k]);
    }
    kbc_record x = row("ebars", "x", 0, 1ULL << 24, 0, 0, 1e-3);
    double wx[5] = {3e-3 * j_scale, 3e-3 * j_scale, 3e-3 * j_scale, 3e-3 * j_scale,
                    3e-3 * j_scale};
    er_measured(&x, wx, 5, 1.0);
    cr_assert_eq(s.point(s.ctx, &x, 1), 0);
    kbc_record_free(&x);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
}

Test(html, rows_with_energy_add_its_views_and_columns)
{
    write_energy("energy.json", 1);
    cr_assert_eq(report("energy.json -o e.html"), 0);
    char *page = slurp_in("e.html");
    cr_assert_not_null(page);
    /* The energy and efficiency views of the line plot and of the bar
       chart, each with its button. */
    cr_assert_eq(count(page, "<svg class=\"energy\""), 2, "%s", page);
    cr_assert_eq(count(page, "<svg class=\"efficiency\""), 2, "%s", page);
    cr_assert_eq(count(page, "<button type=\"button\" data-view=\"energy\""), 2);
    cr_assert_not_null(strstr(page, "energy per run (mJ, lower is better), log scale"), "%s",
                       page);
    cr_assert_not_null(strstr(page, "energy efficiency (GB/J, bytes read + written per joule)"),
                       "%s", page);
    /* a's point at n = 2^21: 2 mJ. */
    cr_assert_not_null(strstr(page, "<title>a, n=2097152: 2 mJ</title>"), "%s", page);
    /* The columns, a row's joules, and why c has none. */
    cr_assert_not_null(strstr(page, ">J/run</th>"), "%s", page);
    cr_assert_not_null(strstr(page, ">W</th>"), "%s", page);
    cr_assert_not_null(strstr(page, ">GB/J</th>"), "%s", page);
    cr_assert_not_null(strstr(page, ">4 mJ</td>"), "%s", page);
    cr_assert_eq(count(page, "title=\"NVML could not be loaded &lt;here&gt;\">-</td>"), 3, "%s",
                 page);
    free(page);
    /* A page without energy has neither. */
    cr_assert_eq(report("new/results.json -o r.html"), 0);
    page = slurp_in("r.html");
    cr_assert_null(strstr(page, "svg class=\"energy\""));
    cr_assert_null(strstr(page, "J/run"));
    free(page);
}

/* The energy view is `kbench plot --metric energy`'s chart: the same axis
   title, in the same unit. */
Test(html, the_energy_view_is_the_plots_energy_chart)
{
    write_energy("energy.json", 1);
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p eplots && PATH=/nonexistent '%s' plot energy.json -o eplots "
             "--metric energy >plot.txt 2>&1",
             tmpdir, KBENCH);
    cr_assert_eq(system(cmd), 0);
    char *script = slurp_in("eplots/esweep.gp");
    cr_assert_not_null(script);
    const char *yl = strstr(script, "set ylabel '");
    cr_assert_not_null(yl, "%s", script);
    char title[200];
    snprintf(title, sizeof title, "%.*s", (int)strcspn(yl + 12, "'"), yl + 12);
    cr_assert_eq(report("energy.json -o e.html"), 0);
    char *page = slurp_in("e.html");
    cr_assert_not_null(strstr(page, title), "the plot's '%s' is not in the report", title);
    free(page);
    free(script);
}

Test(html, a_baseline_with_energy_adds_the_energy_verdict)
{
    write_energy("energy.json", 1.1);
    write_energy("energy-base.json", 1);
    cr_assert_eq(report("energy.json --baseline energy-base.json -o e.html"), 0);
    char *page = slurp_in("e.html");
    cr_assert_not_null(page);
    cr_assert_not_null(strstr(page, ">energy verdict</th>"), "%s", page);
    /* a and b at three points and x: 10% more joules in windows 1% apart;
       c has energy on neither side and gets no energy verdict at all. */
    cr_assert_eq(count(page, "<td class=\"v-more-energy\">more energy</td>"), 7, "%s", page);
    cr_assert_eq(count(page, "no energy on either side"), 0, "%s", page);
    cr_assert_eq(count(page, "<td class=\"v-untested\">"), 0, "%s", page);
    cr_assert_not_null(strstr(page, ">+10.0%</td>"), "%s", page);
    cr_assert_not_null(strstr(page, "energy against the baseline: <span class=\"v-more-energy\">7 "
                                    "more energy</span></p>"),
                       "%s", page);
    free(page);
}

/* ---- bad input ---------------------------------------------------------- */

Test(html, a_missing_results_file_is_one_sentence_and_exit_2)
{
    cr_assert_eq(report("nothere.json -o r.html"), 2);
    char *err = slurp_in("err.txt");
    cr_assert_eq(count(err, "\n"), 1, "%s", err);
    cr_assert_not_null(strstr(err, "kbench: nothere.json: cannot read the results:"), "%s", err);
    free(err);
    cr_assert_null(slurp_in("r.html"));
}

Test(html, a_file_that_is_not_results_is_one_sentence_and_exit_2)
{
    char path[512];
    snprintf(path, sizeof path, "%s/other.json", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("{\"rows\": []}\n", f);
    fclose(f);
    cr_assert_eq(report("other.json -o r.html"), 2);
    char *err = slurp_in("err.txt");
    cr_assert_str_eq(err, "kbench: other.json: has no \"results\" array; is it a kbench results "
                          "file?\n");
    free(err);
}

Test(html, a_bad_baseline_is_named_and_exit_2)
{
    cr_assert_eq(report("new --baseline gone.json -o r.html"), 2);
    char *err = slurp_in("err.txt");
    cr_assert_not_null(strstr(err, "kbench: --baseline: gone.json: cannot read the results:"),
                       "%s", err);
    free(err);
    cr_assert_null(slurp_in("r.html"));
}

Test(html, an_output_that_cannot_be_written_is_exit_3_and_leaves_nothing)
{
    cr_assert_eq(report("new -o missing/r.html"), 3);
    char *err = slurp_in("err.txt");
    cr_assert_not_null(strstr(err, "kbench: cannot write missing/r.html: No such file or directory."),
                       "%s", err);
    free(err);
    struct stat st;
    char path[512];
    snprintf(path, sizeof path, "%s/missing", tmpdir);
    cr_assert_neq(stat(path, &st), 0);
}

Test(html, report_takes_one_results_file)
{
    cr_assert_eq(report(""), 2);
    char *err = slurp_in("err.txt");
    cr_assert_not_null(strstr(err, "kbench report needs one results file or folder"), "%s", err);
    free(err);
}

/* ---- in a browser --------------------------------------------------------- */

/* Chromium's command, or NULL (then *why says why not). */
static const char *chromium(const char **why)
{
    const char *env = getenv("KBENCH_CHROMIUM");
    if (env && *env)
        return env;
    static const char *const names[] = {"chromium", "chromium-browser"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", names[i]);
        if (system(cmd) == 0)
            return names[i];
    }
    *why = "chromium is not installed (tools/setup.sh installs Debian's chromium package; "
           "apt-get install chromium, or set KBENCH_CHROMIUM to a Chromium binary)";
    return NULL;
}

/* Opens tmpdir/page in headless Chromium with what (--dump-dom, or
   --screenshot=...) and its own profile; stdout into out, stderr into
   log.  Skips the test when there is no Chromium. */
static void browse(const char *page, const char *what, const char *out, const char *log)
{
    const char *why = NULL;
    const char *bin = chromium(&why);
    if (!bin)
        cr_skip_test("%s", why);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && timeout 120 %s --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
             "--user-data-dir='%s/profile-%d' --no-first-run --window-size=1280,900 "
             "--enable-logging=stderr --v=0 %s 'file://%s/%s' >%s 2>%s",
             tmpdir, bin, tmpdir, (int)getpid(), what, tmpdir, page, out, log);
    int st = system(cmd);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char *text = slurp_in(log);
        size_t len = text ? strlen(text) : 0;
        cr_assert_fail("chromium failed (status %d); the end of its log:\n%s", WEXITSTATUS(st),
                       text ? text + (len > 3000 ? len - 3000 : 0) : "(none)");
    }
}

/* The value of attribute name of the self-test's element in the dumped
   page (malloc'd), or NULL. */
static char *selftest(const char *dom, const char *name)
{
    const char *o = strstr(dom, "<output id=\"kbench-selftest\"");
    if (!o)
        return NULL;
    const char *end = strchr(o, '>');
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *a = strstr(o, key);
    if (!a || a > end)
        return NULL;
    a += strlen(key);
    return strndup(a, strcspn(a, "\""));
}

/* The console lines Chromium logged ("...:CONSOLE(12)] ..."): the page
   logs nothing, so any is an error, a warning or a refused script; but
   for Chromium's "[Violation]" hints (a handler that took long on a busy
   machine), which say nothing about the page. */
static char *console_lines(const char *log)
{
    char *text = slurp_in(log);
    cr_assert_not_null(text);
    char *lines = calloc(1, strlen(text) + 1);
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
        if (strstr(l, ":CONSOLE") && !strstr(l, "\"[Violation] ")) {
            strcat(lines, l);
            strcat(lines, "\n");
        }
    free(text);
    return lines;
}

/* Opens the report with the self-test and returns the dumped page. */
static char *selftest_dom(const char *args)
{
    char a[512];
    snprintf(a, sizeof a, "%s -o r.html", args);
    cr_assert_eq(report(a), 0);
    browse("r.html#selftest", "--dump-dom", "dom.html", "chromium.log");
    char *dom = slurp_in("dom.html");
    cr_assert_not_null(dom);
    if (!strstr(dom, "<output id=\"kbench-selftest\"")) {
        /* Say why: what the browser logged, and how much page it dumped. */
        char *lines = console_lines("chromium.log");
        cr_assert_fail("the self-test did not run (is the script broken?); the dumped page has "
                       "%zu bytes; console:\n%s",
                       strlen(dom), lines);
    }
    return dom;
}

Test(html, renders_in_chromium_without_console_errors)
{
    char *dom = selftest_dom("new --baseline base.json");
    char *lines = console_lines("chromium.log");
    cr_assert_str_eq(lines, "", "the page logged to the console:\n%s", lines);
    char *errors = selftest(dom, "data-errors");
    cr_assert_not_null(errors, "the self-test did not run (is the script broken?)");
    cr_assert_str_eq(errors, "0");
    free(errors);
    free(lines);
    free(dom);
}

Test(html, chromium_shows_every_row_and_plot)
{
    char *dom = selftest_dom("new");
    char *rows = selftest(dom, "data-rows"), *tables = selftest(dom, "data-tables"),
         *plots = selftest(dom, "data-plots");
    cr_assert_not_null(rows, "the self-test did not run (is the script broken?)");
    char want[16];
    snprintf(want, sizeof want, "%d", N_SWEEP + N_HEADLINE);
    cr_assert_str_eq(rows, want);
    cr_assert_str_eq(tables, "2");
    cr_assert_str_eq(plots, "2");
    free(rows);
    free(tables);
    free(plots);
    free(dom);
}

/* The first table's rows (data-i, in file order) sorted by median time:
   ascending (dir 1) or descending (-1), the skipped row last either way. */
static void expected_order(int dir, char *buf, size_t n)
{
    int idx[N_SWEEP], m = 0;
    for (int i = 0; i < N_SWEEP; i++)
        if (i != SKIPPED_ROW)
            idx[m++] = i;
    for (int i = 1; i < m; i++)
        for (int j = i; j > 0; j--) {
            /* naive's times are doubled in the new run */
            double a = sweep_time(idx[j - 1]) * (idx[j - 1] % N_VARIANTS == 0 ? 2 : 1);
            double b = sweep_time(idx[j]) * (idx[j] % N_VARIANTS == 0 ? 2 : 1);
            if (dir * (a - b) > 0) {
                int t = idx[j];
                idx[j] = idx[j - 1];
                idx[j - 1] = t;
            }
        }
    idx[m++] = SKIPPED_ROW;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < m; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%d", i ? " " : "", idx[i]);
}

Test(html, a_click_on_a_header_sorts_the_table_in_chromium)
{
    char *dom = selftest_dom("new");
    char *before = selftest(dom, "data-before"), *up = selftest(dom, "data-ascending"),
         *down = selftest(dom, "data-descending");
    cr_assert_not_null(before, "the self-test did not run (is the script broken?)");
    char want[256];
    snprintf(want, sizeof want, "0");
    for (int i = 1; i < N_SWEEP; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), " %d", i);
    cr_assert_str_eq(before, want, "the file's order before any click");
    cr_assert_not_null(up, "the sort header was not found");
    expected_order(1, want, sizeof want);
    cr_assert_str_eq(up, want, "the first click sorts by time, ascending");
    expected_order(-1, want, sizeof want);
    cr_assert_str_eq(down, want, "the second click sorts descending");
    free(before);
    free(up);
    free(down);
    free(dom);
}

Test(html, a_click_switches_a_plot_to_time_in_chromium)
{
    char *dom = selftest_dom("new");
    char *view = selftest(dom, "data-view");
    cr_assert_not_null(view, "the self-test did not run (is the script broken?)");
    cr_assert_str_eq(view, "time");
    free(view);
    free(dom);
}

Test(html, hostile_names_run_nothing_in_chromium)
{
    char *dom = selftest_dom("new --baseline base.json");
    char *scripts = selftest(dom, "data-scripts");
    cr_assert_not_null(scripts, "the self-test did not run (is the script broken?)");
    cr_assert_str_eq(scripts, "1", "only kbench's own script is in the page");
    /* The names are text in the page as the browser built it. */
    cr_assert_null(strstr(dom, "<img"));
    cr_assert_null(strstr(dom, "<iframe"));
    cr_assert_not_null(strstr(dom, "&lt;/svg&gt;&lt;script&gt;alert(2)&lt;/script&gt;\\nx"));
    cr_assert_not_null(strstr(dom, "NVIDIA \"&gt;&lt;img src=x onerror=alert(1)&gt;"));
    free(scripts);
    free(dom);
}

/* A PNG's width and height (from its IHDR chunk); 0 when it is not one. */
static void png_size(const char *path, unsigned *w, unsigned *h)
{
    unsigned char b[24] = {0};
    FILE *f = fopen(path, "rb");
    *w = *h = 0;
    if (!f)
        return;
    size_t got = fread(b, 1, sizeof b, f);
    fclose(f);
    if (got < 24 || memcmp(b, "\x89PNG\r\n\x1a\n", 8) != 0 || memcmp(b + 12, "IHDR", 4) != 0)
        return;
    *w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
    *h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
}

static off_t file_size(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

Test(html, a_screenshot_shows_a_drawn_page)
{
    cr_assert_eq(report("new --baseline base.json -o r.html"), 0);
    /* A blank page of the same size, for comparison. */
    char path[512];
    snprintf(path, sizeof path, "%s/blank.html", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("<!DOCTYPE html><html><body></body></html>\n", f);
    fclose(f);
    char what[600];
    snprintf(what, sizeof what, "--screenshot='%s/report.png'", tmpdir);
    browse("r.html", what, "shot.out", "shot.log");
    snprintf(what, sizeof what, "--screenshot='%s/blank.png'", tmpdir);
    browse("blank.html", what, "blank.out", "blank.log");
    snprintf(path, sizeof path, "%s/report.png", tmpdir);
    unsigned w, h;
    png_size(path, &w, &h);
    cr_assert_eq(w, 1280);
    cr_assert_eq(h, 900);
    /* Text, tables and plots compress far worse than a white page. */
    off_t page = file_size("report.png"), blank = file_size("blank.png");
    cr_assert_gt(blank, 0);
    cr_assert_gt(page, 10 * blank, "the screenshot (%lld bytes) is hardly more than a blank "
                                   "page's (%lld bytes)",
                 (long long)page, (long long)blank);
    char *lines = console_lines("shot.log");
    cr_assert_str_eq(lines, "", "the page logged to the console:\n%s", lines);
    free(lines);
}

/* ---- --history ----------------------------------------------------------- */

/* A history of six runs, commits c1 .. c6, every time 30% longer from c4
   on; returns the count of rows that passed in each. */
static int write_history(void)
{
    for (int k = 1; k <= 6; k++) {
        char path[512], cmd[1024];
        snprintf(path, sizeof path, "%s/run-%d", tmpdir, k);
        cr_assert_eq(mkdir(path, 0777), 0);
        snprintf(path, sizeof path, "%s/run-%d/results.json", tmpdir, k);
        /* Each run a little different (the history keeps a file once),
           the same three scales before and after the step. */
        write_results(path, (k >= 4 ? 1.3 : 1.0) * (1 + 0.002 * (k % 3)), 0, 0);
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && '%s' history add run-%d --commit c%d --history h.db >/dev/null", tmpdir,
                 KBENCH, k, k);
        cr_assert_eq(system(cmd), 0);
    }
    return N_SWEEP - 1 + N_HEADLINE;
}

Test(html, history_gives_each_row_a_sparkline_with_its_step)
{
    int passed = write_history();
    cr_assert_eq(report("run-6 --history h.db -o r.html"), 0);
    char *page = slurp_in("r.html");
    cr_assert_not_null(page);
    cr_assert_not_null(strstr(page, ">history</th>"));
    cr_assert_eq(count(page, "<svg class=\"spark\""), (size_t)passed);
    cr_assert_eq(count(page, "<td class=\"history\">-</td>"), 1, "the skipped row has none");
    /* Each series steps up 30% at c4, the fourth of its six runs. */
    cr_assert_eq(count(page, "<title>step +30.0% at c4</title>"), (size_t)passed);
    cr_assert_eq(count(page, "<span class=\"runs\">6</span>"), (size_t)passed);
    free(page);
}

Test(html, a_history_page_renders_in_chromium)
{
    write_history();
    char *dom = selftest_dom("run-6 --history h.db");
    char *lines = console_lines("chromium.log");
    cr_assert_str_eq(lines, "", "the page logged to the console:\n%s", lines);
    char *errors = selftest(dom, "data-errors");
    cr_assert_str_eq(errors, "0");
    cr_assert_not_null(strstr(dom, "<title>step +30.0% at c4</title>"));
    free(errors);
    free(lines);
    free(dom);
}

Test(html, a_history_that_cannot_be_read_is_one_sentence)
{
    cr_assert_eq(report("new --history nothere.db -o r.html"), 2);
    char *err = slurp_in("err.txt");
    cr_assert_eq(count(err, "\n"), 1, "%s", err);
    cr_assert_eq(strncmp(err, "kbench: --history: ", 19), 0, "%s", err);
    free(err);
    cr_assert_null(slurp_in("r.html"));
}
