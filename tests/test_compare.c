/*
 * test_compare.c -- kbench compare: the bootstrap verdict on samples, and
 * the command on the fixture pairs of tests/data/compare/ (written by
 * write_fixture below; set KBENCH_COMPARE_FIXTURES_OUT=DIR and run this
 * test to write them again).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <jansson.h>
#include <unistd.h>

#include "compare.h"
#include "report.h"
#include "results_read.h"

#define KBENCH KBENCH_BINARY_DIR "/kbench"
#define DATA KBENCH_SOURCE_DIR "/tests/data/compare"

static char tmpdir[] = "/tmp/kbench-compare-XXXXXX";

static void setup_all(void)
{
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp failed: %s", strerror(errno));
}

static void teardown_all(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(compare, .init = setup_all, .fini = teardown_all);

/* n samples around median m, each m * (1 + spread * u) with u uniform in
   [-1, 1] from a fixed generator: the same numbers on every machine. */
static void samples(double *x, size_t n, double m, double spread, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        double u = (double)(z >> 11) / 9007199254740992.0 * 2 - 1;
        x[i] = m * (1 + spread * u);
    }
}

static kbc_change compare_with(double m_base, double m_new, double spread, size_t n)
{
    double a[64], b[64];
    cr_assert_leq(n, 64);
    samples(a, n, m_base, spread, 1);
    samples(b, n, m_new, spread, 2);
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    kbc_change c;
    kbc_compare_samples(a, n, b, n, &o, &c);
    return c;
}

Test(compare, a_tight_ten_percent_slowdown_is_slower)
{
    kbc_change c = compare_with(1e-3, 1.1e-3, 0.01, 30);
    cr_assert_eq(c.verdict, KBC_SLOWER, "interval [%g, %g]", c.lo, c.hi);
}

Test(compare, a_tight_ten_percent_speedup_is_faster)
{
    kbc_change c = compare_with(1e-3, 0.9e-3, 0.01, 30);
    cr_assert_eq(c.verdict, KBC_FASTER, "interval [%g, %g]", c.lo, c.hi);
}

Test(compare, noise_alone_is_no_change)
{
    kbc_change c = compare_with(1e-3, 1e-3, 0.01, 30);
    cr_assert_eq(c.verdict, KBC_NO_CHANGE, "interval [%g, %g]", c.lo, c.hi);
}

Test(compare, a_ten_percent_change_within_huge_noise_is_no_change)
{
    kbc_change c = compare_with(1e-3, 1.1e-3, 0.6, 15);
    cr_assert_eq(c.verdict, KBC_NO_CHANGE, "interval [%g, %g]", c.lo, c.hi);
}

Test(compare, a_slowdown_below_the_threshold_is_no_change)
{
    /* 3% slower, measured tightly: real, but under the 5% threshold. */
    kbc_change c = compare_with(1e-3, 1.03e-3, 0.002, 30);
    cr_assert_gt(c.lo, 1.0, "the interval is above 1: [%g, %g]", c.lo, c.hi);
    cr_assert_eq(c.verdict, KBC_NO_CHANGE);
}

Test(compare, the_interval_holds_the_ratio_of_medians)
{
    kbc_change c = compare_with(1e-3, 1.1e-3, 0.05, 30);
    cr_assert_leq(c.lo, c.ratio);
    cr_assert_geq(c.hi, c.ratio);
    cr_assert_float_eq(c.ratio, c.new_median / c.base_median, 1e-12);
}

Test(compare, the_same_seed_gives_the_same_interval)
{
    kbc_change a = compare_with(1e-3, 1.05e-3, 0.1, 20);
    kbc_change b = compare_with(1e-3, 1.05e-3, 0.1, 20);
    cr_assert_eq(a.lo, b.lo);
    cr_assert_eq(a.hi, b.hi);
}

Test(compare, one_sample_a_side_is_untested)
{
    double a[1] = {1e-3}, b[3] = {2e-3, 2e-3, 2e-3};
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    kbc_change c;
    kbc_compare_samples(a, 1, b, 3, &o, &c);
    cr_assert_eq(c.verdict, KBC_UNTESTED);
    cr_assert(isnan(c.lo));
}

/* ---- the fixture files ---- */

typedef struct fixture_row {
    const char *variant;
    double median, spread;
    size_t n;
    uint64_t seed;
} fixture_row;

/* Writes a results file at path with the given rows (experiment "e" of
   plugin "p", n = 1024) on a machine with the given GPU and driver. */
static void write_fixture(const char *path, const char *gpu, int driver, const fixture_row *rows,
                          size_t n_rows)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.has_gpu = 1;
    snprintf(m.name, sizeof m.name, "%s", gpu);
    m.cc_major = 9;
    m.driver_version = driver;
    m.runtime_version = 13000;
    m.clock_khz = 1980000;
    m.mem_clock_khz = 2619000;
    snprintf(m.host, sizeof m.host, "fixture");
    m.cpu_threads = 16;
    kbc_run_info info = {.machine = &m, .command_line = "kbench run fixture.ini -o out"};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    for (size_t i = 0; i < n_rows; i++) {
        kbc_record r;
        kbc_record_init(&r);
        snprintf(r.experiment, sizeof r.experiment, "e");
        snprintf(r.plugin, sizeof r.plugin, "p");
        snprintf(r.variant, sizeof r.variant, "%s", rows[i].variant);
        r.backend = KB_BACKEND_CUDA;
        r.n_params = 1;
        snprintf(r.params[0].name, sizeof r.params[0].name, "n");
        r.params[0].type = KB_PARAM_SIZE;
        r.params[0].value.u = 1024;
        snprintf(r.params[0].text, sizeof r.params[0].text, "1024");
        r.n_points = 1;
        r.outcome = KBC_PASS;
        double x[64], y[64];
        samples(x, rows[i].n, rows[i].median, rows[i].spread, rows[i].seed);
        kbc_record_set_samples(&r, x, rows[i].n);
        memcpy(y, x, sizeof x);
        kbc_stats_compute(y, rows[i].n, &r.time);
        cr_assert_eq(s.point(s.ctx, &r, 1), 0);
        kbc_record_free(&r);
    }
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
}

/* Every fixture pair: NAME-base.json and NAME-new.json. */
static void write_fixtures(const char *dir)
{
    char a[512], b[512];
#define PAIR(name, gpu_b, drv_b, ra, rb)                                                         \
    do {                                                                                         \
        snprintf(a, sizeof a, "%s/" name "-base.json", dir);                                     \
        snprintf(b, sizeof b, "%s/" name "-new.json", dir);                                      \
        write_fixture(a, "NVIDIA H200", 13000, ra, sizeof ra / sizeof *ra);                      \
        write_fixture(b, gpu_b, drv_b, rb, sizeof rb / sizeof *rb);                              \
    } while (0)
    /* 10% slower with 1% spread. */
    static const fixture_row slow_a[] = {{"k", 1e-3, 0.01, 30, 1}};
    static const fixture_row slow_b[] = {{"k", 1.1e-3, 0.01, 30, 2}};
    PAIR("slower", "NVIDIA H200", 13000, slow_a, slow_b);
    /* The same time, 1% spread, other samples. */
    static const fixture_row noise_a[] = {{"k", 1e-3, 0.01, 30, 3}};
    static const fixture_row noise_b[] = {{"k", 1e-3, 0.01, 30, 4}};
    PAIR("noise", "NVIDIA H200", 13000, noise_a, noise_b);
    /* The same samples 10% slower, within +-60% spread. */
    static const fixture_row noisy_a[] = {{"k", 1e-3, 0.6, 15, 5}};
    static const fixture_row noisy_b[] = {{"k", 1.1e-3, 0.6, 15, 5}};
    PAIR("noisy-slower", "NVIDIA H200", 13000, noisy_a, noisy_b);
    /* Another GPU and driver; rows a and k in base, k and z in new. */
    static const fixture_row mach_a[] = {{"a", 1e-3, 0.01, 30, 7}, {"k", 1e-3, 0.01, 30, 8}};
    static const fixture_row mach_b[] = {{"k", 1e-3, 0.01, 30, 9}, {"z", 1e-3, 0.01, 30, 10}};
    PAIR("machine", "NVIDIA H100 80GB HBM3", 12080, mach_a, mach_b);
#undef PAIR
}

static const char *const fixture_files[] = {
    "slower-base.json", "slower-new.json",        "noise-base.json",   "noise-new.json",
    "noisy-slower-base.json", "noisy-slower-new.json", "machine-base.json", "machine-new.json"};

Test(compare, the_checked_in_fixtures_are_what_the_helper_writes)
{
    const char *out = getenv("KBENCH_COMPARE_FIXTURES_OUT");
    write_fixtures(out && *out ? out : tmpdir);
    for (size_t f = 0; f < sizeof fixture_files / sizeof *fixture_files; f++) {
        char fresh[512], kept[512];
        snprintf(fresh, sizeof fresh, "%s/%s", out && *out ? out : tmpdir, fixture_files[f]);
        snprintf(kept, sizeof kept, "%s/%s", DATA, fixture_files[f]);
        kbc_record *x = NULL, *y = NULL;
        size_t nx = 0, ny = 0;
        kbc_diag d;
        cr_assert_eq(kbc_results_read(fresh, &x, &nx, &d), 0, "%s", d.msg);
        cr_assert_eq(kbc_results_read(kept, &y, &ny, &d), 0, "%s", d.msg);
        cr_assert_eq(nx, ny, "%s", fixture_files[f]);
        for (size_t i = 0; i < nx; i++) {
            cr_assert_eq(x[i].n_samples, y[i].n_samples, "%s", fixture_files[f]);
            for (size_t k = 0; k < x[i].n_samples; k++)
                cr_assert_float_eq(x[i].samples[k], y[i].samples[k], 1e-15, "%s",
                                   fixture_files[f]);
        }
        kbc_records_free(x, nx);
        kbc_records_free(y, ny);
    }
}

typedef struct result {
    int code;
    char out[16384], err[4096];
} result;

static void slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (!f)
        return;
    size_t k = fread(buf, 1, n - 1, f);
    buf[k] = '\0';
    fclose(f);
}

/* Runs `kbench compare ARGS`, collecting exit code, stdout and stderr. */
static result *compare(const char *args)
{
    static result r;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' compare %s >'%s/out.txt' 2>'%s/err.txt'", DATA,
             KBENCH, args, tmpdir, tmpdir);
    int st = system(cmd);
    cr_assert(WIFEXITED(st));
    r.code = WEXITSTATUS(st);
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", tmpdir);
    slurp(path, r.out, sizeof r.out);
    unlink(path);
    snprintf(path, sizeof path, "%s/err.txt", tmpdir);
    slurp(path, r.err, sizeof r.err);
    unlink(path);
    return &r;
}

Test(compare, cli_a_tight_slowdown_exits_one)
{
    result *r = compare("slower-base.json slower-new.json");
    cr_assert_eq(r->code, 1, "%s%s", r->out, r->err);
    cr_assert_not_null(strstr(r->out, " slower\n"), "%s", r->out);
}

Test(compare, cli_noise_alone_exits_zero)
{
    result *r = compare("noise-base.json noise-new.json");
    cr_assert_eq(r->code, 0, "%s%s", r->out, r->err);
    cr_assert_not_null(strstr(r->out, "no change"), "%s", r->out);
}

Test(compare, cli_a_slowdown_within_huge_noise_exits_zero)
{
    result *r = compare("noisy-slower-base.json noisy-slower-new.json");
    cr_assert_eq(r->code, 0, "%s%s", r->out, r->err);
    cr_assert_not_null(strstr(r->out, "no change"), "%s", r->out);
}

Test(compare, cli_a_high_threshold_lets_the_slowdown_pass)
{
    result *r = compare("slower-base.json slower-new.json --threshold 20");
    cr_assert_eq(r->code, 0, "%s%s", r->out, r->err);
}

Test(compare, cli_machine_differences_are_warned_at_the_top)
{
    result *r = compare("machine-base.json machine-new.json");
    cr_assert_eq(strncmp(r->out, "warning: GPU differs", 20), 0, "%s", r->out);
    cr_assert_not_null(strstr(r->out, "warning: driver differs: '13.0' in base, '12.8' in new"),
                       "%s", r->out);
}

Test(compare, cli_rows_in_one_file_only_are_listed)
{
    result *r = compare("machine-base.json machine-new.json");
    cr_assert_not_null(strstr(r->out, "only in base: p/e/n=1024/a\n"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "only in new: p/e/n=1024/z\n"), "%s", r->out);
}

Test(compare, cli_markdown_is_a_pipe_table)
{
    result *r = compare("slower-base.json slower-new.json --format markdown");
    cr_assert_eq(r->code, 1);
    cr_assert_not_null(strstr(r->out, "| `p/e/n=1024/k` |"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "| **slower** |"), "%s", r->out);
}

Test(compare, cli_json_parses_and_carries_the_verdict)
{
    result *r = compare("slower-base.json slower-new.json --format json");
    cr_assert_eq(r->code, 1);
    json_error_t je;
    json_t *doc = json_loads(r->out, 0, &je);
    cr_assert_not_null(doc, "%s: %s", je.text, r->out);
    json_t *row = json_array_get(json_object_get(doc, "rows"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(row, "verdict")), "slower");
    cr_assert_gt(json_real_value(json_object_get(row, "ratio_low")), 1.05);
    json_decref(doc);
}

Test(compare, cli_a_missing_file_exits_two_naming_it)
{
    result *r = compare("slower-base.json nothere.json");
    cr_assert_eq(r->code, 2);
    cr_assert_not_null(strstr(r->err, "nothere.json"), "%s", r->err);
}

Test(compare, cli_a_json_file_that_is_not_results_exits_two)
{
    char path[512];
    snprintf(path, sizeof path, "%s/other.json", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"results\": []}\n", f);
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "slower-base.json '%s'", path);
    result *r = compare(args);
    cr_assert_eq(r->code, 2);
    cr_assert_not_null(strstr(r->err, "not a kbench results file"), "%s", r->err);
}

Test(compare, cli_a_bad_threshold_exits_two)
{
    result *r = compare("slower-base.json slower-new.json --threshold much");
    cr_assert_eq(r->code, 2);
    cr_assert_not_null(strstr(r->err, "--threshold"), "%s", r->err);
}

Test(compare, cli_an_unknown_format_exits_two)
{
    result *r = compare("slower-base.json slower-new.json --format html");
    cr_assert_eq(r->code, 2);
    cr_assert_not_null(strstr(r->err, "html"), "%s", r->err);
}
