/*
 * test_plot.c -- kbench plot on a fixture results.json written here: the
 * scripts it writes, and, where gnuplot is installed, that gnuplot accepts
 * them and makes the SVG and PNG files.
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
    cr_assert_not_null(strstr(s, "set xlabel \"n (elements, log_2 scale)\""), "%s", s);
    cr_assert_not_null(strstr(s, "set ylabel \"throughput (GB/s"), "%s", s);
}

Test(plot, the_library_and_the_ceiling_are_drawn_distinctly)
{
    cr_assert_eq(plot("results.json -o p", "/nonexistent"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/p/study-dtype_f32.gp", tmpdir);
    char *s = slurp(path);
    cr_assert_not_null(s);
    cr_assert_not_null(strstr(s, "title \"cub (library)\" lw 3 dt 2"), "%s", s);
    cr_assert_not_null(strstr(s, "title \"read ceiling (3000 GB/s)\" with lines"), "%s", s);
    cr_assert_not_null(strstr(s, "title \"naive\" lw 1.5"), "%s", s);
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
    cr_assert_not_null(strstr(s, "set ylabel \"throughput (GFLOP/s)\""), "%s", s);
    cr_assert_not_null(strstr(s, "title \"fp32 ceiling (65800 GFLOP/s)\" with lines"), "%s", s);
}

Test(plot, a_memory_bound_point_that_counts_flops_stays_in_gbps)
{
    cr_assert_eq(plot("results.json -o p", "/nonexistent"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/p/sum-point1.gp", tmpdir);
    char *s = slurp(path);
    cr_assert_not_null(s);
    cr_assert_not_null(strstr(s, "set ylabel \"throughput (GB/s"), "%s", s);
    cr_assert_not_null(strstr(s, "ceiling (3000 GB/s)\" with lines"), "%s", s);
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
