/*
 * test_plot.c -- kbench plot on a fixture results.json written here: the
 * scripts it writes, and, where gnuplot is installed, that gnuplot accepts
 * them and makes the SVG and PNG files.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "energy_rows.h"
#include "plot.h"
#include "report.h"

#define KBENCH KBENCH_BINARY_DIR "/kbench"

static char tmpdir[] = "/tmp/kbench-plot-XXXXXX";

/* One row: experiment e, variant v, the given parameters, a rate. */
static kbc_record row(const char *e, const char *v, uint32_t flags, uint64_t n, int n_swept,
                      const char *dtype, int dtype_swept, uint64_t point, double gbps)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.experiment, sizeof r.experiment, "%s", e);
    snprintf(r.plugin, sizeof r.plugin, "reduce");
    snprintf(r.variant, sizeof r.variant, "%s", v);
    r.flags = flags;
    r.backend = KB_BACKEND_CUDA;
    r.n_params = 2;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = n;
    snprintf(r.params[0].text, sizeof r.params[0].text, "%llu", (unsigned long long)n);
    r.params[0].swept = n_swept;
    snprintf(r.params[1].name, sizeof r.params[1].name, "dtype");
    r.params[1].type = KB_PARAM_ENUM;
    snprintf(r.params[1].text, sizeof r.params[1].text, "%s", dtype);
    r.params[1].swept = dtype_swept;
    r.point = point;
    r.n_points = 22;
    r.outcome = KBC_PASS;
    double t[3] = {1e-3, 1e-3, 1e-3};
    kbc_stats_compute(t, 3, &r.time);
    r.work.bytes_read = n * 4;
    r.gbps = gbps;
    r.ceiling_gbps = 3000.0;
    snprintf(r.ceiling, sizeof r.ceiling, "read");
    return r;
}

/* A study: n = 2^10 .. 2^20 for f32 and f64, three variants (one a
   library); and a headline experiment that sweeps nothing. */
static void write_results(const char *path)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.has_gpu = 1;
    snprintf(m.name, sizeof m.name, "NVIDIA H200");
    snprintf(m.host, sizeof m.host, "fixture");
    kbc_run_info info = {.machine = &m, .command_line = "kbench run study.ini -o out"};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    uint64_t p = 0;
    for (int dt = 0; dt < 2; dt++)
        for (int k = 10; k <= 20; k++, p++) {
            double sat = 1.0 - exp(-(double)(k - 9) / 3.0);
            const char *ty = dt ? "f64" : "f32";
            kbc_record rs[3] = {
                row("study", "naive", 0, 1ULL << k, 1, ty, 1, p, 900 * sat),
                row("study", "shuffle", 0, 1ULL << k, 1, ty, 1, p, 2500 * sat),
                row("study", "cub", KB_VARIANT_LIBRARY, 1ULL << k, 1, ty, 1, p, 2600 * sat)};
            cr_assert_eq(s.point(s.ctx, rs, 3), 0);
        }
    kbc_record h[3] = {row("headline", "naive", 0, 1ULL << 28, 0, "f32", 0, 0, 1000),
                       row("headline", "shuffle", 0, 1ULL << 28, 0, "f32", 0, 0, 2700),
                       row("headline", "cub", KB_VARIANT_LIBRARY, 1ULL << 28, 0, "f32", 0, 0,
                           2750)};
    cr_assert_eq(s.point(s.ctx, h, 3), 0);
    /* A compute-bound point (70% of the FP32 ceiling, 2% of the memory
       one) and a memory-bound one that also counts flops (99% against 2%). */
    kbc_record mm[2] = {row("mm", "tiled", 0, 1ULL << 12, 0, "f32", 0, 0, 60),
                        row("mm", "cublas", KB_VARIANT_LIBRARY, 1ULL << 12, 0, "f32", 0, 0, 66)};
    kbc_record sum[2] = {row("sum", "onepass", 0, 1ULL << 28, 0, "f32", 0, 0, 2970),
                         row("sum", "cub", KB_VARIANT_LIBRARY, 1ULL << 28, 0, "f32", 0, 0, 2950)};
    for (int i = 0; i < 2; i++) {
        mm[i].pct_ceiling = mm[i].gbps / 30.0;
        mm[i].gflops = 46000 + 5000 * i;
        snprintf(mm[i].peak, sizeof mm[i].peak, "fp32");
        mm[i].peak_gflops = 65800;
        mm[i].pct_peak = mm[i].gflops / 658.0;
        sum[i].pct_ceiling = sum[i].gbps / 30.0;
        sum[i].gflops = 740;
        snprintf(sum[i].peak, sizeof sum[i].peak, "fp32");
        sum[i].peak_gflops = 65800;
        sum[i].pct_peak = sum[i].gflops / 658.0;
    }
    cr_assert_eq(s.point(s.ctx, mm, 2), 0);
    cr_assert_eq(s.point(s.ctx, sum, 2), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
}

static void setup_all(void)
{
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp failed: %s", strerror(errno));
    char path[512];
    snprintf(path, sizeof path, "%s/results.json", tmpdir);
    write_results(path);
}

static void teardown_all(void)
{
    /* KBENCH_TEST_KEEP=1 keeps the folder, to look at the plots. */
    if (getenv("KBENCH_TEST_KEEP")) {
        fprintf(stderr, "kept %s\n", tmpdir);
        return;
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(plot, .init = setup_all, .fini = teardown_all);

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Runs `kbench plot ARGS` in tmpdir with PATH as given (NULL: as it is);
   returns the exit code. */
static int plot(const char *args, const char *path_env)
{
    char cmd[2048];
    if (path_env)
        snprintf(cmd, sizeof cmd, "cd '%s' && PATH='%s' '%s' plot %s >out.txt 2>err.txt", tmpdir,
                 path_env, KBENCH, args);
    else
        snprintf(cmd, sizeof cmd, "cd '%s' && '%s' plot %s >out.txt 2>err.txt", tmpdir, KBENCH,
                 args);
    int st = system(cmd);
    cr_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static off_t size_of(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/%s", tmpdir, dir, name);
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

Test(plot, a_script_per_experiment_and_group)
{
    cr_assert_eq(plot("results.json -o p", "/nonexistent"), 0);
    cr_assert_gt(size_of("p", "study-dtype_f32.gp"), 0);
    cr_assert_gt(size_of("p", "study-dtype_f64.gp"), 0);
    cr_assert_gt(size_of("p", "headline-point1.gp"), 0);
}

Test(plot, the_sweep_script_has_a_log2_axis_with_units)
{
    cr_assert_eq(plot("results.json -o p", "/nonexistent"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/p/study-dtype_f32.gp", tmpdir);
    char *s = slurp(path);
    cr_assert_not_null(s);
    cr_assert_not_null(strstr(s, "set logscale x 2\n"), "%s", s);
    cr_assert_not_null(strstr(s, "set xlabel 'n (elements, log2 scale)'"), "%s", s);
    cr_assert_not_null(strstr(s, "set ylabel 'throughput (TB/s, bytes read + written)'"), "%s", s);
}

Test(plot, the_library_and_the_ceiling_are_drawn_distinctly)
{
    cr_assert_eq(plot("results.json -o p", "/nonexistent"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/p/study-dtype_f32.gp", tmpdir);
    char *s = slurp(path);
    cr_assert_not_null(s);
    cr_assert_not_null(strstr(s, "title 'cub (library)' lw 3 dt 2"), "%s", s);
    cr_assert_not_null(strstr(s, "title 'read ceiling (3.00 TB/s)' with lines"), "%s", s);
    cr_assert_not_null(strstr(s, "title 'naive' lw 1.5"), "%s", s);
}

/* The rate is the roofline's binding side: GFLOP/s and the compute
   ceiling where rows come nearer the compute ceiling than the memory one. */
Test(plot, a_compute_bound_point_shows_gflops_and_the_compute_ceiling)
{
    cr_assert_eq(plot("results.json -o p", "/nonexistent"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/p/mm-point1.gp", tmpdir);
    char *s = slurp(path);
    cr_assert_not_null(s);
    cr_assert_not_null(strstr(s, "set ylabel 'throughput (TFLOP/s)'"), "%s", s);
    cr_assert_not_null(strstr(s, "title 'fp32 ceiling (65.8 TFLOP/s)' with lines"), "%s", s);
}

Test(plot, a_memory_bound_point_that_counts_flops_stays_in_gbps)
{
    cr_assert_eq(plot("results.json -o p", "/nonexistent"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/p/sum-point1.gp", tmpdir);
    char *s = slurp(path);
    cr_assert_not_null(s);
    cr_assert_not_null(strstr(s, "set ylabel 'throughput (TB/s"), "%s", s);
    cr_assert_not_null(strstr(s, "ceiling (3.00 TB/s)' with lines"), "%s", s);
}

Test(plot, without_gnuplot_it_says_how_to_get_it_and_exits_zero)
{
    cr_assert_eq(plot("results.json -o q", "/nonexistent"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/err.txt", tmpdir);
    char *e = slurp(path);
    cr_assert_not_null(e);
    cr_assert_not_null(strstr(e, "apt-get install gnuplot-nox"), "%s", e);
}

Test(plot, a_file_that_is_not_results_exits_two)
{
    char path[512];
    snprintf(path, sizeof path, "%s/x.json", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("[1, 2]\n", f);
    fclose(f);
    cr_assert_eq(plot("x.json -o r", NULL), 2);
}

Test(plot, gnuplot_accepts_the_scripts_and_makes_svg_and_png)
{
    if (!kbc_have_gnuplot())
        cr_skip_test("gnuplot is not installed (apt-get install gnuplot-nox)");
    cr_assert_eq(plot("results.json -o g", NULL), 0);
    static const char *const files[] = {"study-dtype_f32.svg", "study-dtype_f32.png",
                                        "study-dtype_f64.png", "headline-point1.svg",
                                        "headline-point1.png"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        cr_assert_gt(size_of("g", files[i]), 1000, "%s", files[i]);
}

/* ---- hostile names: nothing from the file runs as a gnuplot command ---- */

/* Texts that end gnuplot's string or line and start a command: a line
   break, backquotes, each quote, '@' macros, a trailing backslash, a data
   block's end; each short enough for a parameter's name (63 bytes). */
static const char *const payloads[] = {
    "a\n!touch PWNED\n#",
    "`touch PWNED`",
    "a'.system(\"touch PWNED\").'",
    "a\".system(\"touch PWNED\").\"",
    "a\nEOD\n!touch PWNED\n",
    "@PW; !touch PWNED # $x \\",
    "a\\\n!touch PWNED",
    "a\r!touch PWNED\r",
    "../../x/-y \x1b[2J \xff\xfe \xc2\x9b",
    "<script>alert(1)</script>\n!touch PWNED",
};
#define N_PAYLOADS (sizeof payloads / sizeof *payloads)
/* The same for the ceiling's and compute ceiling's kinds (7 bytes). */
static const char *const short_payloads[] = {"\n!>PW\n", "`>PW`", "'.`>PW`", "\\\n!>PW"};

/* A results file whose every name is payload p: a sweep (a line plot per
   group) and a point that sweeps nothing (a bar chart), on a GPU named p. */
static void write_hostile(const char *path, const char *p, const char *shortp)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.has_gpu = 1;
    snprintf(m.name, sizeof m.name, "%s", p);
    snprintf(m.host, sizeof m.host, "%s", p);
    kbc_run_info info = {.machine = &m, .command_line = p};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    char v2[64];
    snprintf(v2, sizeof v2, "%s2", p);
    for (int k = 10; k <= 12; k++) {
        kbc_record rs[2] = {row(p, p, 0, 1ULL << k, 1, p, 1, (uint64_t)k, 100.0 * k),
                            row(p, v2, KB_VARIANT_LIBRARY, 1ULL << k, 1, p, 1, (uint64_t)k, 90.0 * k)};
        for (int i = 0; i < 2; i++) {
            snprintf(rs[i].params[0].name, sizeof rs[i].params[0].name, "%s", p);
            snprintf(rs[i].ceiling, sizeof rs[i].ceiling, "%s", shortp);
            /* Passed at the last size: the note on the chart says why. */
            rs[i].ceiling_gbps = 1100;
        }
        cr_assert_eq(s.point(s.ctx, rs, 2), 0);
    }
    char e2[64];
    snprintf(e2, sizeof e2, "b%s", p);
    kbc_record bars[2] = {row(e2, p, 0, 1ULL << 12, 0, p, 0, 0, 60),
                          row(e2, v2, KB_VARIANT_LIBRARY, 1ULL << 12, 0, p, 0, 0, 66)};
    for (int i = 0; i < 2; i++) {
        snprintf(bars[i].params[1].name, sizeof bars[i].params[1].name, "%s", p);
        /* Compute-bound, so that the compute ceiling's kind is drawn. */
        bars[i].pct_ceiling = 2;
        bars[i].gflops = 46000;
        snprintf(bars[i].peak, sizeof bars[i].peak, "%s", shortp);
        bars[i].peak_gflops = 65800;
        bars[i].pct_peak = 70;
    }
    cr_assert_eq(s.point(s.ctx, bars, 2), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
}

/* line with every single-quoted gnuplot string replaced by S (and a quote
   joined in, 'a'."'".'b', part of it); NULL when a string is not closed on
   its line. */
static char *strings_as_s(const char *line)
{
    char *out = malloc(strlen(line) + 2), *o = out;
    for (const char *p = line; *p;) {
        if (*p == '"') {
            /* A double-quoted string, kept as it is (allowed[] names the
               two kbench writes). */
            const char *end = strchr(p + 1, '"');
            if (!end) {
                free(out);
                return NULL;
            }
            memcpy(o, p, (size_t)(end - p) + 1);
            o += end - p + 1;
            p = end + 1;
            continue;
        }
        if (*p != '\'') {
            *o++ = *p++;
            continue;
        }
        for (p++;; p++) {
            if (!*p) {
                free(out);
                return NULL;
            }
            if (*p == '\'')
                break;
        }
        p++;
        *o++ = 'S';
    }
    *o = '\0';
    /* A quote in a text is joined in: S."'".S is one string. */
    for (char *j; (j = strstr(out, "S.\"'\".S"));)
        memmove(j + 1, j + 7, strlen(j + 7) + 1);
    return out;
}

/* The statements kbench plot writes, with S for a single-quoted string
   (POSIX extended expressions); nothing else may appear in a script. */
static const char *const allowed[] = {
    "^# Written by kbench plot; run with: gnuplot [A-Za-z0-9_][A-Za-z0-9._-]*\\.gp \\(writes "
    "[A-Za-z0-9._-]+\\.svg and [A-Za-z0-9._-]+\\.png\\)$",
    "^reset$",
    "^set encoding utf8$",
    "^set title S( \\. \"\\\\n\" \\. S)*$",
    "^set [xy]label S$",
    "^set logscale x (2|10)$",
    "^set logscale y$",
    "^set format x S$",
    "^set yrange \\[(0|\\*):\\*\\]$",
    "^set xrange \\[-0\\.[56]:[0-9]+\\.[45]\\]$",
    "^set xtics \\(S [0-9.e+-]+(, S [0-9.e+-]+)*\\)$",
    "^set label 1 S at graph 0\\.01, graph 0\\.97 left front font S textcolor rgb S$",
    "^set offsets 0, 0, graph 0\\.08, 0$",
    "^set grid( ytics)?$",
    "^set key (below center horizontal|above horizontal)$",
    "^set style data linespoints$",
    "^set style fill solid 0\\.7 border -1$",
    "^set boxwidth 0\\.7$",
    "^set xtics rotate by -35 \\(S [0-9]+(, S [0-9]+)*\\)$",
    "^set terminal svg size 900,[0-9]+ dynamic enhanced font S$",
    "^set output( S)?$",
    "^plot \\\\$",
    "^  \\$v[0-9]+ using 1:2 title S lw 1\\.5 pt [0-9]+ ps 1 lc rgb S(, \\\\)?$",
    "^  \\$v[0-9]+ using 1:2 title S lw 3 dt 2 pt [0-9]+ ps 1\\.2 lc rgb S(, \\\\)?$",
    "^  \\$v[0-9]+ using 1:3:4 with filledcurves fs transparent solid 0\\.15 noborder lc rgb S "
    "notitle, \\\\$",
    "^  [0-9.e+]+ title S with lines lw 2 dt 4 lc rgb S$",
    "^plot \\$bars using 0:\\(\\$2 == 0 \\? \\$1 : 1/0\\) with boxes lc rgb S title S, \\\\$",
    "^  \\$bars using 0:1:3:4 with yerrorbars lc rgb S pt 7 ps 0 title S(, \\\\)?$",
    "^  \\$bars using 0:\\(\\$2 == 1 \\? \\$1 : 1/0\\) with boxes lc rgb S fs pattern 2 title "
    "S(, \\\\)?$",
    "^if \\(strstrt\\(GPVAL_TERMINALS, S\\) > 0\\) \\{$",
    "^    set terminal pngcairo size 900,[0-9]+ enhanced font S$",
    "^\\} else \\{$",
    "^    set terminal png size 900,[0-9]+ enhanced$",
    "^\\}$",
    "^replot$",
};

/* Checks the script at path line by line: every line outside a data block
   is one of the allowed statements, every line inside one holds two
   numbers, and no line has a control character. */
static void check_script(const char *path)
{
    static regex_t re[sizeof allowed / sizeof *allowed], num;
    static int compiled;
    if (!compiled) {
        for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++)
            cr_assert_eq(regcomp(&re[i], allowed[i], REG_EXTENDED | REG_NOSUB), 0, "%s",
                         allowed[i]);
        cr_assert_eq(regcomp(&num, "^-?[0-9][0-9.e+-]*( -?[0-9][0-9.e+-]*){1,3}$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
        compiled = 1;
    }
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[8192];
    int in_data = 0, lines = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        size_t len = strlen(line);
        cr_assert(len > 0 && line[len - 1] == '\n', "%s:%d: a line too long", path, lines);
        line[len - 1] = '\0';
        for (const char *p = line; *p; p++)
            cr_assert((unsigned char)*p >= 0x20 && *p != 0x7f,
                      "%s:%d: a control character in '%s'", path, lines, line);
        if (in_data) {
            if (strcmp(line, "EOD") == 0)
                in_data = 0;
            else
                cr_assert_eq(regexec(&num, line, 0, NULL, 0), 0, "%s:%d: not numbers: %s", path,
                             lines, line);
            continue;
        }
        if (strcmp(line, "$bars << EOD") == 0 ||
            (strncmp(line, "$v", 2) == 0 && strstr(line, " << EOD") &&
             strspn(line + 2, "0123456789") + 2 + strlen(" << EOD") == strlen(line))) {
            in_data = 1;
            continue;
        }
        char *bare = strings_as_s(line);
        cr_assert_not_null(bare, "%s:%d: a string not closed: %s", path, lines, line);
        int ok = 0;
        for (size_t i = 0; i < sizeof allowed / sizeof *allowed && !ok; i++)
            ok = regexec(&re[i], bare, 0, NULL, 0) == 0;
        cr_assert(ok, "%s:%d: not a statement kbench writes: %s", path, lines, line);
        free(bare);
    }
    fclose(f);
    cr_assert_eq(in_data, 0, "%s: a data block is not closed", path);
}

/* Whether a file named PWNED or PW is anywhere under tmpdir. */
static int pwned(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' \\( -name PWNED -o -name PW \\) -print)\"",
             tmpdir);
    return system(cmd) != 0;
}

/* Writes results for payload k in hostile-K/ and runs kbench plot on them
   into hostile-K/p (gnuplot there only if with_gnuplot); with the options
   that draw the band, the log axis and the time (every other statement
   kbench writes), into hostile-K/q. */
static int plot_hostile_with(size_t k, int with_gnuplot, int options)
{
    char dir[512], path[600], args[700];
    snprintf(dir, sizeof dir, "%s/hostile-%zu", tmpdir, k);
    if (mkdir(dir, 0777) == 0) {
        snprintf(path, sizeof path, "%s/results.json", dir);
        write_hostile(path, payloads[k], short_payloads[k % 4]);
    } else {
        cr_assert_eq(errno, EEXIST, "%s: %s", dir, strerror(errno));
    }
    snprintf(args, sizeof args, "hostile-%zu/results.json -o hostile-%zu/%s%s", k, k,
             options ? "q" : "p", options ? " --band --logy --metric time" : "");
    return plot(args, with_gnuplot ? NULL : "/nonexistent");
}

static int plot_hostile(size_t k, int with_gnuplot)
{
    return plot_hostile_with(k, with_gnuplot, 0);
}

/* Every script's every line is a statement kbench writes, whatever the
   names: the payload in the experiment's, variant's, parameter's and
   GPU's names, a parameter's text and the ceilings' kinds. */
Test(plot, hostile_names_leave_only_kbench_statements_in_the_scripts)
{
    for (size_t k = 0; k < 2 * N_PAYLOADS; k++) {
        int options = k >= N_PAYLOADS;
        cr_assert_eq(plot_hostile_with(k % N_PAYLOADS, 0, options), 0, "payload %zu", k);
        char cmd[600];
        snprintf(cmd, sizeof cmd, "ls '%s/hostile-%zu/%s'", tmpdir, k % N_PAYLOADS,
                 options ? "q" : "p");
        FILE *ls = popen(cmd, "r");
        cr_assert_not_null(ls);
        char name[512];
        int scripts = 0;
        while (fgets(name, sizeof name, ls)) {
            name[strcspn(name, "\n")] = '\0';
            char path[1200];
            snprintf(path, sizeof path, "%s/hostile-%zu/%s/%s", tmpdir, k % N_PAYLOADS,
                     options ? "q" : "p", name);
            check_script(path);
            scripts++;
        }
        pclose(ls);
        cr_assert_eq(scripts, 2, "payload %zu: a line plot and a bar chart", k);
    }
    cr_assert_not(pwned());
}

/* The file names made from the names: letters, digits, '-', '_' and '.',
   no "..", no leading '-' or '.', all inside the output folder. */
Test(plot, hostile_names_make_safe_file_names)
{
    regex_t re;
    cr_assert_eq(regcomp(&re, "^[A-Za-z0-9_][A-Za-z0-9_.-]*\\.gp$", REG_EXTENDED | REG_NOSUB), 0);
    for (size_t k = 0; k < N_PAYLOADS; k++) {
        cr_assert_eq(plot_hostile(k, 0), 0, "payload %zu", k);
        char cmd[600];
        /* Everything kbench wrote is the results file and the folder p. */
        snprintf(cmd, sizeof cmd, "cd '%s/hostile-%zu' && find . | sort | tr '\\n' ' '", tmpdir, k);
        FILE *ls = popen(cmd, "r");
        char all[4096] = "";
        cr_assert_not_null(fgets(all, sizeof all, ls));
        pclose(ls);
        snprintf(cmd, sizeof cmd, "ls -A '%s/hostile-%zu/p'", tmpdir, k);
        ls = popen(cmd, "r");
        char name[512];
        int n = 0;
        while (fgets(name, sizeof name, ls)) {
            name[strcspn(name, "\n")] = '\0';
            cr_assert_eq(regexec(&re, name, 0, NULL, 0), 0, "payload %zu: %s", k, name);
            cr_assert_null(strstr(name, ".."), "payload %zu: %s", k, name);
            n++;
        }
        pclose(ls);
        cr_assert_eq(n, 2, "payload %zu: %s", k, all);
    }
    regfree(&re);
}

/* With gnuplot: it accepts every script, and no payload runs. */
Test(plot, gnuplot_runs_no_command_from_hostile_names)
{
    if (!kbc_have_gnuplot())
        cr_skip_test("gnuplot is not installed (apt-get install gnuplot-nox)");
    for (size_t k = 0; k < N_PAYLOADS; k++) {
        cr_assert_eq(plot_hostile(k, 1), 0, "payload %zu", k);
        cr_assert_eq(plot_hostile_with(k, 1, 1), 0, "payload %zu with the options", k);
        cr_assert_not(pwned(), "payload %zu ran", k);
    }
    /* And the SVG shows the names as they are spelled (their control
       characters as escapes): the variant's backquotes and all. */
    char path[600];
    snprintf(path, sizeof path, "%s/hostile-1/p", tmpdir);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "grep -l -F '`touch PWNED`' '%s'/*.svg >/dev/null", path);
    cr_assert_eq(system(cmd), 0);
}

/* Two experiments whose names differ only in what a file name cannot
   hold get two scripts, not one written over the other. */
Test(plot, names_that_make_the_same_file_name_get_two_files)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/clash", tmpdir);
    cr_assert_eq(mkdir(dir, 0777), 0);
    snprintf(path, sizeof path, "%s/results.json", dir);
    kbc_machine m;
    memset(&m, 0, sizeof m);
    kbc_run_info info = {.machine = &m};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    kbc_record a[1] = {row("x y", "v", 0, 1ULL << 12, 0, "f32", 0, 0, 60)};
    kbc_record b[1] = {row("x/y", "v", 0, 1ULL << 12, 0, "f32", 0, 0, 60)};
    cr_assert_eq(s.point(s.ctx, a, 1), 0);
    cr_assert_eq(s.point(s.ctx, b, 1), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    cr_assert_eq(plot("clash/results.json -o clash/p", "/nonexistent"), 0);
    cr_assert_gt(size_of("clash/p", "x_y-point1.gp"), 0);
    cr_assert_gt(size_of("clash/p", "x_y-point1-2.gp"), 0);
}

/* ---- what the charts show ------------------------------------------------ */

/* A second results file, written into tmpdir/more: sizes that crowd (4096
   beside 4097), sixteen variants, an experiment where nothing ran, bars
   above their ceiling and runs that spread. */
static const char *more_results(void)
{
    static char path[600];
    char dir[512];
    snprintf(dir, sizeof dir, "%s/more", tmpdir);
    snprintf(path, sizeof path, "%s/results.json", dir);
    if (mkdir(dir, 0777) != 0) {
        cr_assert_eq(errno, EEXIST);
        return path;
    }
    kbc_machine m;
    memset(&m, 0, sizeof m);
    kbc_run_info info = {.machine = &m};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    const uint64_t crowd[] = {4096, 4097, 8192};
    for (uint64_t p = 0; p < 3; p++) {
        kbc_record r[1] = {row("crowd", "v", 0, crowd[p], 1, "f32", 0, p, 100.0 + (double)p)};
        cr_assert_eq(s.point(s.ctx, r, 1), 0);
    }
    for (uint64_t p = 0; p < 3; p++) {
        kbc_record r[16];
        for (int v = 0; v < 16; v++) {
            char name[16];
            snprintf(name, sizeof name, "v%02d", v);
            r[v] = row("many", name, v % 5 == 4 ? KB_VARIANT_LIBRARY : 0, 1024ULL << p, 1, "f32",
                       0, p, 100.0 * (v + 1));
        }
        cr_assert_eq(s.point(s.ctx, r, 16), 0);
    }
    for (uint64_t p = 0; p < 2; p++) {
        kbc_record r[2] = {row("none", "a", 0, 1024ULL << p, 1, "f32", 0, p, NAN),
                           row("none", "b", 0, 1024ULL << p, 1, "f32", 0, p, NAN)};
        for (int i = 0; i < 2; i++) {
            r[i].outcome = KBC_SKIPPED;
            r[i].time.n = 0;
            snprintf(r[i].reason, sizeof r[i].reason, "no CUDA driver");
        }
        cr_assert_eq(s.point(s.ctx, r, 2), 0);
    }
    kbc_record over[2] = {row("over", "l2", 0, 1ULL << 20, 0, "f32", 0, 0, 4200),
                          row("over", "dram", 0, 1ULL << 20, 0, "f32", 0, 0, 2900)};
    cr_assert_eq(s.point(s.ctx, over, 2), 0);
    for (uint64_t p = 0; p < 3; p++) {
        kbc_record r[1] = {row("spread", "v", 0, 1024ULL << p, 1, "f32", 0, p, 500)};
        double t[3] = {0.8e-3, 1e-3, 1.6e-3};
        kbc_stats_compute(t, 3, &r[0].time);
        cr_assert_eq(s.point(s.ctx, r, 1), 0);
    }
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    return path;
}

/* The script dir/name, or a failed test. */
static char *script(const char *dir, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s/%s", tmpdir, dir, name);
    char *s = slurp(path);
    cr_assert_not_null(s, "%s was not written", path);
    return s;
}

Test(plot, logy_draws_a_log_y_axis)
{
    more_results();
    cr_assert_eq(plot("more/results.json -o logy --logy", "/nonexistent"), 0);
    char *s = script("logy", "spread.gp");
    cr_assert_not_null(strstr(s, "set logscale y\nset yrange [*:*]\n"), "%s", s);
}

Test(plot, metric_time_draws_the_median_time_in_a_unit_that_suits_it)
{
    more_results();
    cr_assert_eq(plot("more/results.json -o time --metric time", "/nonexistent"), 0);
    char *s = script("time", "spread.gp");
    cr_assert_not_null(strstr(s, "set ylabel 'median time (ms, lower is better)'"), "%s", s);
    cr_assert_not_null(strstr(s, "\n1024 1\n"), "1 ms as 1: %s", s);
    /* A time has no ceiling. */
    cr_assert_null(strstr(s, "ceiling"), "%s", s);
}

Test(plot, a_metric_that_is_not_one_of_the_four_is_a_usage_error)
{
    more_results();
    cr_assert_eq(plot("more/results.json -o bad --metric speed", "/nonexistent"), 2);
    char *e = script(".", "err.txt");
    cr_assert_not_null(
        strstr(e, "option --metric wants rate, time, energy or efficiency, not 'speed'"), "%s", e);
}

/* 4096 and 4097 are two x values: one slot each, labelled. */
Test(plot, sizes_that_would_crowd_get_one_slot_each)
{
    more_results();
    cr_assert_eq(plot("more/results.json -o crowd", "/nonexistent"), 0);
    char *s = script("crowd", "crowd.gp");
    cr_assert_not_null(strstr(s, "set xtics ('4096' 0, '4097' 1, '8192' 2)"), "%s", s);
    cr_assert_not_null(strstr(s, "\n0 100\n1 101\n2 102\nEOD\n"), "%s", s);
    cr_assert_null(strstr(s, "logscale x"), "%s", s);
}

/* Sixteen lines: sixteen colours, and no marker twice among the first
   fifteen. */
Test(plot, sixteen_lines_get_sixteen_colours_and_distinct_markers)
{
    more_results();
    cr_assert_eq(plot("more/results.json -o many", "/nonexistent"), 0);
    char *s = script("many", "many.gp");
    char colours[16][16];
    int pts[16], n = 0;
    for (const char *p = s; (p = strstr(p, " using 1:2 title ")); p++) {
        const char *pt = strstr(p, " pt "), *lc = strstr(p, " lc rgb '");
        cr_assert_not_null(pt);
        cr_assert_not_null(lc);
        cr_assert_lt(n, 16);
        pts[n] = atoi(pt + 4);
        snprintf(colours[n], sizeof colours[n], "%.7s", lc + 9);
        n++;
    }
    cr_assert_eq(n, 16, "%s", s);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            cr_assert_str_neq(colours[i], colours[j], "lines %d and %d share a colour", j, i);
            if (i < 15)
                cr_assert_neq(pts[i], pts[j], "lines %d and %d share a marker", j, i);
        }
}

Test(plot, an_experiment_where_nothing_ran_gets_no_chart)
{
    more_results();
    cr_assert_eq(plot("more/results.json -o none", "/nonexistent"), 0);
    cr_assert_eq(size_of("none", "none.gp"), -1);
    char *o = script(".", "out.txt");
    cr_assert_not_null(strstr(o, "no plot for none: none of its rows ran"), "%s", o);
}

/* The band runs from the slowest run's rate to the fastest's. */
Test(plot, band_draws_the_slowest_to_fastest_run)
{
    more_results();
    cr_assert_eq(plot("more/results.json -o band --band", "/nonexistent"), 0);
    char *s = script("band", "spread.gp");
    cr_assert_not_null(strstr(s, "using 1:3:4 with filledcurves"), "%s", s);
    /* 500 GB/s at the median of 1 ms: 312.5 at 1.6 ms, 625 at 0.8 ms. */
    cr_assert_not_null(strstr(s, "\n1024 500 312.5 625\n"), "%s", s);
    cr_assert_eq(plot("more/results.json -o band-bars --band", "/nonexistent"), 0);
    s = script("band-bars", "over-point1.gp");
    cr_assert_not_null(strstr(s, "with yerrorbars"), "%s", s);
}

Test(plot, a_bar_above_its_ceiling_is_explained_on_the_chart)
{
    more_results();
    cr_assert_eq(plot("more/results.json -o over", "/nonexistent"), 0);
    char *s = script("over", "over-point1.gp");
    cr_assert_not_null(strstr(s, "set label 1 'above the ceiling: it is a measured"), "%s", s);
    /* Below it, no note. */
    s = script("over", "crowd.gp");
    cr_assert_null(strstr(s, "set label"), "%s", s);
}

/* gnuplot's own messages (a warning when it succeeds, its reason when it
   fails) stay off kbench's stderr; a failure is named with its last line. */
Test(plot, gnuplots_own_messages_stay_off_stderr)
{
    more_results();
    char bin[600], cmd[1400];
    snprintf(bin, sizeof bin, "%s/fakebin", tmpdir);
    cr_assert_eq(mkdir(bin, 0777), 0);
    snprintf(cmd, sizeof cmd,
             "printf '#!/bin/sh\\necho \"warning: Skipping data file\" >&2\\n"
             "[ -n \"$FAIL\" ] && { echo \"line 7: undefined variable\" >&2; exit 1; }\\n"
             "exit 0\\n' > '%s/gnuplot' && chmod +x '%s/gnuplot'",
             bin, bin);
    cr_assert_eq(system(cmd), 0);
    char path_env[1200];
    snprintf(path_env, sizeof path_env, "%s:/usr/bin:/bin", bin);
    cr_assert_eq(plot("more/results.json -o fake", path_env), 0);
    char *e = script(".", "err.txt");
    cr_assert_eq(e[0], '\0', "stderr: %s", e);
    snprintf(path_env, sizeof path_env, "%s:/usr/bin:/bin' FAIL='1", bin);
    cr_assert_eq(plot("more/results.json -o fake2", path_env), 3);
    e = script(".", "err.txt");
    cr_assert_not_null(strstr(e, "(exit status 1: line 7: undefined variable)"), "%s", e);
    cr_assert_null(strstr(e, "warning: Skipping"), "%s", e);
}

/* ---- the energy metrics --------------------------------------------------- */

/* A third results file, tmpdir/energy: an experiment over n = 2^20, 2^21,
   2^22 whose variants `a` and `b` have energy (a: 1, 2 and 4 mJ per run,
   its windows 10% apart; b: twice a's) and `c` has none (energy = on, no
   NVML); an experiment none of whose rows has energy; and a bar chart of
   one point. */
static const char *energy_results(void)
{
    static char path[600];
    char dir[512];
    snprintf(dir, sizeof dir, "%s/energy", tmpdir);
    snprintf(path, sizeof path, "%s/results.json", dir);
    if (mkdir(dir, 0777) != 0) {
        cr_assert_eq(errno, EEXIST);
        return path;
    }
    kbc_machine m;
    memset(&m, 0, sizeof m);
    kbc_run_info info = {.machine = &m};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    for (uint64_t p = 0; p < 3; p++) {
        uint64_t n = 1ULL << (20 + p);
        kbc_record r[3] = {row("joules", "a", 0, n, 1, "f32", 0, p, 1000),
                           row("joules", "b", 0, n, 1, "f32", 0, p, 900),
                           row("joules", "c", 0, n, 1, "f32", 0, p, 800)};
        double j = 1e-3 * (double)(1u << p);
        double wa[5] = {0.95 * j, 0.98 * j, j, 1.02 * j, 1.05 * j};
        double wb[5] = {2 * j, 2 * j, 2 * j, 2 * j, 2 * j};
        er_measured(&r[0], wa, 5, 1.0);
        er_measured(&r[1], wb, 5, 1.0);
        er_not_measured(&r[2], KBC_ENERGY_NO_NVML, "NVML could not be loaded");
        cr_assert_eq(s.point(s.ctx, r, 3), 0);
    }
    for (uint64_t p = 0; p < 2; p++) {
        kbc_record r[1] = {row("unmeasured", "a", 0, 1024ULL << p, 1, "f32", 0, p, 100)};
        cr_assert_eq(s.point(s.ctx, r, 1), 0);
    }
    kbc_record bars[2] = {row("one", "x", 0, 1ULL << 20, 0, "f32", 0, 0, 100),
                          row("one", "y", 0, 1ULL << 20, 0, "f32", 0, 0, 100)};
    double wx[5] = {3e-3, 3e-3, 3e-3, 3e-3, 3e-3}, wy[5] = {6e-3, 6e-3, 6e-3, 6e-3, 6e-3};
    er_measured(&bars[0], wx, 5, 1.0);
    er_measured(&bars[1], wy, 5, 1.0);
    cr_assert_eq(s.point(s.ctx, bars, 2), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    return path;
}

Test(plot, metric_energy_draws_joules_per_run_in_a_unit_that_suits_it)
{
    energy_results();
    cr_assert_eq(plot("energy/results.json -o en --metric energy", "/nonexistent"), 0);
    char *s = script("en", "joules.gp");
    cr_assert_not_null(strstr(s, "set ylabel 'energy per run (mJ, lower is better)'"), "%s", s);
    /* a's median windows: 1, 2, 4 mJ at n = 2^20, 2^21, 2^22. */
    cr_assert_not_null(strstr(s, "$v0 << EOD\n1048576 1\n2097152 2\n4194304 4\nEOD\n"), "%s", s);
    cr_assert_not_null(strstr(s, "$v1 << EOD\n1048576 2\n2097152 4\n4194304 8\nEOD\n"), "%s", s);
    /* c has no energy: no line, no legend entry; and no ceiling. */
    cr_assert_null(strstr(s, "title 'c'"), "%s", s);
    cr_assert_null(strstr(s, "ceiling"), "%s", s);
}

Test(plot, metric_efficiency_draws_the_work_per_joule)
{
    energy_results();
    cr_assert_eq(plot("energy/results.json -o eff --metric efficiency", "/nonexistent"), 0);
    char *s = script("eff", "joules.gp");
    cr_assert_not_null(strstr(s, "set ylabel 'energy efficiency (GB/J, bytes read + written "
                                 "per joule)'"),
                       "%s", s);
    /* 4 bytes per element: 2^22 bytes = 0.004194304 GB for 1 mJ is 4.194304
       GB/J, and the same at every n (the joules grow with the bytes). */
    cr_assert_not_null(strstr(s, "$v0 << EOD\n1048576 4.194304\n2097152 4.194304\n"), "%s", s);
    cr_assert_not_null(strstr(s, "$v1 << EOD\n1048576 2.097152\n"), "%s", s);
}

Test(plot, the_energy_band_runs_from_the_lowest_window_to_the_highest)
{
    energy_results();
    cr_assert_eq(plot("energy/results.json -o enband --metric energy --band", "/nonexistent"),
                 0);
    char *s = script("enband", "joules.gp");
    cr_assert_not_null(strstr(s, "\n1048576 1 0.95 1.05\n"), "%s", s);
    cr_assert_eq(plot("energy/results.json -o effband --metric efficiency --band", "/nonexistent"),
                 0);
    s = script("effband", "joules.gp");
    /* The work per joule is lowest in the window of the most joules. */
    cr_assert_not_null(strstr(s, "\n1048576 4.194304 3.99457524 4.41505684\n"), "%s", s);
}

Test(plot, an_energy_bar_chart_draws_the_rows_with_energy)
{
    energy_results();
    cr_assert_eq(plot("energy/results.json -o enbars --metric energy", "/nonexistent"), 0);
    char *s = script("enbars", "one-point1.gp");
    cr_assert_not_null(strstr(s, "$bars << EOD\n3 0 3 3\n6 0 6 6\nEOD\n"), "%s", s);
    cr_assert_not_null(strstr(s, "set ylabel 'energy per run (mJ, lower is better)'"), "%s", s);
}

Test(plot, an_experiment_without_energy_gets_no_energy_chart_and_says_why)
{
    energy_results();
    cr_assert_eq(plot("energy/results.json -o enwhy --metric energy", "/nonexistent"), 0);
    cr_assert_eq(size_of("enwhy", "unmeasured.gp"), -1);
    char *o = script(".", "out.txt");
    cr_assert_not_null(strstr(o, "no plot for unmeasured: none of its rows has energy measured "
                                 "(energy = on; docs/energy.md)"),
                       "%s", o);
}

/* A file none of whose rows has energy: one sentence, exit 2. */
Test(plot, an_energy_metric_on_a_file_without_energy_is_one_sentence_and_exit_2)
{
    cr_assert_eq(plot("results.json -o noen --metric efficiency", "/nonexistent"), 2);
    char *e = script(".", "err.txt");
    cr_assert_not_null(strstr(e, "results.json: no row has its energy measured, so --metric "
                                 "efficiency has nothing to draw; measure it with energy = on"),
                       "%s", e);
    cr_assert_eq(size_of("noen", "study-dtype_f32.gp"), -1);
}
