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
    cr_assert_not_null(strstr(s, "set ylabel 'throughput (GB/s"), "%s", s);
}

Test(plot, the_library_and_the_ceiling_are_drawn_distinctly)
{
    cr_assert_eq(plot("results.json -o p", "/nonexistent"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/p/study-dtype_f32.gp", tmpdir);
    char *s = slurp(path);
    cr_assert_not_null(s);
    cr_assert_not_null(strstr(s, "title 'cub (library)' lw 3 dt 2"), "%s", s);
    cr_assert_not_null(strstr(s, "title 'read ceiling (3000 GB/s)' with lines"), "%s", s);
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
    cr_assert_not_null(strstr(s, "set ylabel 'throughput (GFLOP/s)'"), "%s", s);
    cr_assert_not_null(strstr(s, "title 'fp32 ceiling (65800 GFLOP/s)' with lines"), "%s", s);
}

Test(plot, a_memory_bound_point_that_counts_flops_stays_in_gbps)
{
    cr_assert_eq(plot("results.json -o p", "/nonexistent"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/p/sum-point1.gp", tmpdir);
    char *s = slurp(path);
    cr_assert_not_null(s);
    cr_assert_not_null(strstr(s, "set ylabel 'throughput (GB/s"), "%s", s);
    cr_assert_not_null(strstr(s, "ceiling (3000 GB/s)' with lines"), "%s", s);
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
    "^set logscale x 2$",
    "^set format x S$",
    "^set yrange \\[0:\\*\\]$",
    "^set xrange \\[-0\\.6:[0-9]+\\.4\\]$",
    "^set offsets 0, 0, graph 0\\.08, 0$",
    "^set grid( ytics)?$",
    "^set key (outside right top vertical|above horizontal)$",
    "^set style data linespoints$",
    "^set style fill solid 0\\.7 border -1$",
    "^set boxwidth 0\\.7$",
    "^set xtics rotate by -35 \\(S [0-9]+(, S [0-9]+)*\\)$",
    "^set terminal svg size 900,560 dynamic enhanced font S$",
    "^set output( S)?$",
    "^plot \\\\$",
    "^  \\$v[0-9]+ using 1:2 title S lw 1\\.5 pt [0-9]+ lc [0-9]+(, \\\\)?$",
    "^  \\$v[0-9]+ using 1:2 title S lw 3 dt 2 pt 4 ps 1\\.2 lc rgb S(, \\\\)?$",
    "^  [0-9.e+]+ title S with lines lw 2 dt 4 lc rgb S$",
    "^plot \\$bars using 0:\\(\\$2 == 0 \\? \\$1 : 1/0\\) with boxes lc 1 title S, \\\\$",
    "^  \\$bars using 0:\\(\\$2 == 1 \\? \\$1 : 1/0\\) with boxes lc rgb S fs pattern 2 title "
    "S(, \\\\)?$",
    "^if \\(strstrt\\(GPVAL_TERMINALS, S\\) > 0\\) \\{$",
    "^    set terminal pngcairo size 900,560 enhanced font S$",
    "^\\} else \\{$",
    "^    set terminal png size 900,560 enhanced$",
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
        cr_assert_eq(regcomp(&num, "^-?[0-9][0-9.e+-]* -?[0-9][0-9.e+-]*$",
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
   into hostile-K/p (gnuplot there only if with_gnuplot). */
static int plot_hostile(size_t k, int with_gnuplot)
{
    char dir[512], path[600], args[700];
    snprintf(dir, sizeof dir, "%s/hostile-%zu", tmpdir, k);
    cr_assert_eq(mkdir(dir, 0777), 0, "%s: %s", dir, strerror(errno));
    snprintf(path, sizeof path, "%s/results.json", dir);
    write_hostile(path, payloads[k], short_payloads[k % 4]);
    snprintf(args, sizeof args, "hostile-%zu/results.json -o hostile-%zu/p", k, k);
    return plot(args, with_gnuplot ? NULL : "/nonexistent");
}

/* Every script's every line is a statement kbench writes, whatever the
   names: the payload in the experiment's, variant's, parameter's and
   GPU's names, a parameter's text and the ceilings' kinds. */
Test(plot, hostile_names_leave_only_kbench_statements_in_the_scripts)
{
    for (size_t k = 0; k < N_PAYLOADS; k++) {
        cr_assert_eq(plot_hostile(k, 0), 0, "payload %zu", k);
        char cmd[600];
        snprintf(cmd, sizeof cmd, "ls '%s/hostile-%zu/p'", tmpdir, k);
        FILE *ls = popen(cmd, "r");
        cr_assert_not_null(ls);
        char name[512];
        int scripts = 0;
        while (fgets(name, sizeof name, ls)) {
            name[strcspn(name, "\n")] = '\0';
            char path[1200];
            snprintf(path, sizeof path, "%s/hostile-%zu/p/%s", tmpdir, k, name);
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
