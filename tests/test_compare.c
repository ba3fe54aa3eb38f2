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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <jansson.h>
#include <unistd.h>

#include "baseline.h"
#include "compare_cmd.h"
#include "energy_rows.h"
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

Test(compare, a_ten_percent_change_within_huge_noise_is_noisy)
{
    kbc_change c = compare_with(1e-3, 1.1e-3, 0.6, 15);
    cr_assert_eq(c.verdict, KBC_NOISY, "interval [%g, %g]", c.lo, c.hi);
    cr_assert_gt(c.base_noise, 0.05, "the base's own noise %g is above the threshold",
                 c.base_noise);
}

/* The rule itself, on hand-set intervals and noises. */
static kbc_change judged(double lo, double hi, double nb, double nn)
{
    kbc_change c = {.ratio = (lo + hi) / 2, .lo = lo, .hi = hi, .base_noise = nb,
                    .new_noise = nn};
    c.verdict = kbc_compare_judge(&c, 0.05);
    return c;
}

Test(compare, a_clear_slowdown_with_quiet_sides_is_slower)
{
    cr_assert_eq(judged(1.08, 1.12, 0.01, 0.01).verdict, KBC_SLOWER);
}

Test(compare, a_slowdown_inside_a_sides_noise_is_noisy_not_slower)
{
    /* The interval clears 5% but not the new side's 15% noise. */
    cr_assert_eq(judged(1.08, 1.12, 0.01, 0.15).verdict, KBC_NOISY);
}

Test(compare, a_speedup_inside_a_sides_noise_is_noisy_not_faster)
{
    cr_assert_eq(judged(0.88, 0.92, 0.15, 0.01).verdict, KBC_NOISY);
}

Test(compare, a_change_larger_than_the_noise_keeps_its_verdict)
{
    /* Twice as slow with 10% noise: a gate must still see it. */
    cr_assert_eq(judged(1.9, 2.1, 0.1, 0.1).verdict, KBC_SLOWER);
    cr_assert_eq(judged(0.45, 0.55, 0.1, 0.1).verdict, KBC_FASTER);
}

Test(compare, no_change_inside_a_sides_noise_is_noisy)
{
    cr_assert_eq(judged(0.9, 1.1, 0.08, 0.01).verdict, KBC_NOISY);
    cr_assert_eq(judged(0.99, 1.01, 0.01, 0.01).verdict, KBC_NO_CHANGE);
}

Test(compare, significance_is_an_interval_that_excludes_one)
{
    cr_assert_eq(kbc_compare_significant(&(kbc_change){.lo = 1.01, .hi = 1.02}), 1);
    cr_assert_eq(kbc_compare_significant(&(kbc_change){.lo = 0.98, .hi = 0.99}), 1);
    cr_assert_eq(kbc_compare_significant(&(kbc_change){.lo = 0.99, .hi = 1.01}), 0);
}

Test(compare, the_normal_quantile_is_the_tables)
{
    cr_assert_float_eq(kbc_normal_quantile(0.05), 1.959964, 1e-6);
    cr_assert_float_eq(kbc_normal_quantile(0.01), 2.575829, 1e-6);
    cr_assert_float_eq(kbc_normal_quantile(0.5), 0.674490, 1e-6);
}

/* Above boot_max samples a side the interval comes from the order
   statistics, and agrees with the bootstrap's on the same samples (both
   estimate the one interval; at 5000 samples they differ by a small part
   of its width). */
Test(compare, large_sides_get_the_order_statistic_interval_close_to_the_bootstrap)
{
    size_t n = 5000;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    samples(a, n, 1e-3, 0.05, 21);
    samples(b, n, 1.002e-3, 0.05, 22);
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    kbc_change os, bs;
    kbc_compare_samples(a, n, b, n, &o, &os);
    cr_assert_eq(os.bootstrap, 0, "5000 samples a side are above the default boot_max");
    o.boot_max = n;
    kbc_compare_samples(a, n, b, n, &o, &bs);
    cr_assert_eq(bs.bootstrap, 1);
    cr_assert_eq(os.ratio, bs.ratio);
    double width = bs.hi - bs.lo;
    cr_assert_gt(width, 0);
    cr_assert_lt(fabs(os.lo - bs.lo), 0.15 * width, "order [%a, %a] boot [%a, %a]", os.lo, os.hi,
                 bs.lo, bs.hi);
    cr_assert_lt(fabs(os.hi - bs.hi), 0.15 * width, "order [%a, %a] boot [%a, %a]", os.lo, os.hi,
                 bs.lo, bs.hi);
    free(a);
    free(b);
}

Test(compare, a_large_tight_slowdown_is_slower_by_the_order_statistics)
{
    size_t n = 4000;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    samples(a, n, 1e-3, 0.01, 31);
    samples(b, n, 1.1e-3, 0.01, 32);
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    kbc_change c;
    kbc_compare_samples(a, n, b, n, &o, &c);
    cr_assert_eq(c.bootstrap, 0);
    cr_assert_eq(c.verdict, KBC_SLOWER, "[%g, %g]", c.lo, c.hi);
    cr_assert_lt(c.lo, c.ratio);
    cr_assert_gt(c.hi, c.ratio);
    free(a);
    free(b);
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

Test(compare, cli_a_slowdown_within_huge_noise_is_noisy_and_exits_zero)
{
    result *r = compare("noisy-slower-base.json noisy-slower-new.json");
    cr_assert_eq(r->code, 0, "%s%s", r->out, r->err);
    cr_assert_not_null(strstr(r->out, " noisy ("), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "0 slower, 0 faster, 1 noisy,"), "%s", r->out);
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
    cr_assert_not_null(strstr(r->out, "| `e/k` |"), "%s", r->out);
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

/* ---- the bootstrap, linear in the samples, and the same as before ---- */

/* What kbench compare gave for the checked-in fixture pairs before its
   bootstrap was made linear (each resample sorted, the ratios sorted):
   the ratio and the interval's ends, bit for bit, with the 2000 resamples
   it then drew by default. */
static const struct {
    const char *pair;
    double ratio, lo, hi;
    kbc_verdict verdict;
} fixture_intervals[] = {
    {"slower", 0x1.18fb3dcade796p+0, 0x1.181d9957cc8fp+0, 0x1.1a44aeb6d8c46p+0, KBC_SLOWER},
    {"noise", 0x1.ff917f8ded6e2p-1, 0x1.fe544fd7ea69ep-1, 0x1.0190f7c863586p+0, KBC_NO_CHANGE},
    {"noisy-slower", 0x1.19999999999adp+0, 0x1.959222f1924aap-1, 0x1.860a230c40cf8p+0,
     KBC_NOISY},
    {"machine", 0x1.00ef43bd5eca6p+0, 0x1.feb32aba906fp-1, 0x1.01a3ed0c81c2ap+0, KBC_NO_CHANGE},
};

Test(compare, the_fixture_intervals_are_bit_for_bit_what_they_were)
{
    for (size_t i = 0; i < sizeof fixture_intervals / sizeof *fixture_intervals; i++) {
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/%s-base.json", DATA, fixture_intervals[i].pair);
        snprintf(b, sizeof b, "%s/%s-new.json", DATA, fixture_intervals[i].pair);
        kbc_record *x, *y;
        size_t nx, ny;
        kbc_diag d;
        cr_assert_eq(kbc_results_read(a, &x, &nx, &d), 0, "%s", d.msg);
        cr_assert_eq(kbc_results_read(b, &y, &ny, &d), 0, "%s", d.msg);
        /* The row both files have: k. */
        const kbc_record *rx = NULL, *ry = NULL;
        for (size_t k = 0; k < nx; k++)
            if (strcmp(x[k].variant, "k") == 0)
                rx = &x[k];
        for (size_t k = 0; k < ny; k++)
            if (strcmp(y[k].variant, "k") == 0)
                ry = &y[k];
        cr_assert(rx && ry);
        kbc_compare_opts o;
        kbc_compare_defaults(&o);
        o.resamples = 2000;
        kbc_change c;
        kbc_compare_samples(rx->samples, rx->n_samples, ry->samples, ry->n_samples, &o, &c);
        cr_assert_eq(c.ratio, fixture_intervals[i].ratio, "%s: %a", fixture_intervals[i].pair,
                     c.ratio);
        cr_assert_eq(c.lo, fixture_intervals[i].lo, "%s: %a", fixture_intervals[i].pair, c.lo);
        cr_assert_eq(c.hi, fixture_intervals[i].hi, "%s: %a", fixture_intervals[i].pair, c.hi);
        cr_assert_eq(c.verdict, fixture_intervals[i].verdict, "%s", fixture_intervals[i].pair);
        kbc_records_free(x, nx);
        kbc_records_free(y, ny);
    }
}

/* The bootstrap as it was first written, as the reference: each resample
   drawn into an array and sorted, the ratios sorted. */
static uint64_t ref_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int ref_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ref_median(double *x, size_t n)
{
    qsort(x, n, sizeof *x, ref_cmp);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* The resample of sorted-or-not x[0..n) from *s, its median. */
static double ref_resample_median(const double *x, size_t n, uint64_t *s)
{
    double *r = malloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = x[ref_next(s) % n];
    double m = ref_median(r, n);
    free(r);
    return m;
}

static void ref_interval(const double *base, size_t nb, const double *nw, size_t nn,
                         const kbc_compare_opts *o, double *lo_out, double *hi_out)
{
    double *a = malloc(nb * sizeof *a), *b = malloc(nn * sizeof *b);
    memcpy(a, base, nb * sizeof *a);
    memcpy(b, nw, nn * sizeof *b);
    ref_median(a, nb); /* sorted, as the resamples index the sorted sides */
    ref_median(b, nn);
    unsigned B = o->resamples;
    double *ratios = malloc(B * sizeof *ratios);
    uint64_t s = o->seed;
    for (unsigned k = 0; k < B; k++) {
        double ma = ref_resample_median(a, nb, &s), mb = ref_resample_median(b, nn, &s);
        ratios[k] = ma > 0 ? mb / ma : INFINITY;
    }
    qsort(ratios, B, sizeof *ratios, ref_cmp);
    size_t lo = (size_t)floor(o->alpha / 2 * B), hi = (size_t)ceil((1 - o->alpha / 2) * B);
    if (hi > 0)
        hi--;
    *lo_out = ratios[lo < B ? lo : B - 1];
    *hi_out = ratios[hi < B ? hi : B - 1];
    free(ratios);
    free(a);
    free(b);
}

/* Samples with many ties (a coarse grid), of odd and even counts, some
   sets with a zero: the linear bootstrap gives the reference's interval. */
Test(compare, the_linear_bootstrap_is_the_sorting_one)
{
    static const size_t sizes[] = {2, 3, 4, 7, 10, 31, 64, 101, 500, 1001};
    uint64_t g = 99;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int ties = 0; ties < 2; ties++) {
            size_t nb = sizes[i], nn = sizes[(i + 3) % (sizeof sizes / sizeof *sizes)];
            double *a = malloc(nb * sizeof *a), *b = malloc(nn * sizeof *b);
            for (size_t k = 0; k < nb; k++) {
                double u = (double)(ref_next(&g) >> 11) / 9007199254740992.0;
                a[k] = ties ? 1e-3 * (1 + floor(u * 4) / 100) : 1e-3 * (1 + 0.2 * u);
            }
            for (size_t k = 0; k < nn; k++) {
                double u = (double)(ref_next(&g) >> 11) / 9007199254740992.0;
                b[k] = ties ? 1e-3 * (1 + floor(u * 3) / 100) : 1.04e-3 * (1 + 0.2 * u);
            }
            if (ties && nb > 2)
                a[0] = 0; /* a zero median in some resamples: ratio infinity */
            kbc_compare_opts o;
            kbc_compare_defaults(&o);
            o.resamples = 500;
            o.boot_max = SIZE_MAX; /* the bootstrap at every size */
            o.alpha = ties ? 0.1 : 0.05;
            double lo, hi;
            ref_interval(a, nb, b, nn, &o, &lo, &hi);
            kbc_change c;
            kbc_compare_samples(a, nb, b, nn, &o, &c);
            cr_assert_eq(c.lo, lo, "nb %zu nn %zu ties %d: %a against %a", nb, nn, ties, c.lo, lo);
            cr_assert_eq(c.hi, hi, "nb %zu nn %zu ties %d: %a against %a", nb, nn, ties, c.hi, hi);
            free(a);
            free(b);
        }
}

/* A resample whose median falls outside the window of counts is counted
   again in full: with a window of 1 (misses all the time) and the window
   in use, every median is the sorted resample's. */
Test(compare, a_resample_median_is_exact_whatever_the_window)
{
    static const size_t sizes[] = {1, 2, 3, 5, 8, 100, 257, 1000, 4099};
    void *scratch = kbc_resample_scratch();
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i];
        double *x = malloc(n * sizeof *x);
        for (size_t k = 0; k < n; k++)
            x[k] = (double)(k / 3); /* sorted, with ties */
        for (uint64_t seed = 1; seed < 40; seed++) {
            uint64_t s1 = seed * 12345, s2 = s1, s3 = s1;
            double want = ref_resample_median(x, n, &s1);
            double narrow = kbc_resample_median(x, n, &s2, 1, scratch);
            cr_assert_eq(narrow, want, "n %zu seed %llu", n, (unsigned long long)seed);
            cr_assert_eq(s2, s1, "the state moved on by n draws");
            double wide = kbc_resample_median(x, n, &s3, kbc_compare_window(n), scratch);
            cr_assert_eq(wide, want, "n %zu seed %llu", n, (unsigned long long)seed);
            cr_assert_eq(s3, s1);
        }
        free(x);
    }
    kbc_resample_scratch_free(scratch);
}

/* Large enough to be cut in pieces (2^20 draws each, so each piece
   starts the sequence at its own resample) and spread over threads (more
   than 2^22 draws): the reference's interval, whatever the threads. */
Test(compare, the_pieces_and_threads_do_not_change_the_interval)
{
    size_t n = 20000;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    samples(a, n, 1e-3, 0.05, 11);
    samples(b, n, 1.001e-3, 0.05, 12);
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    o.resamples = 120;
    o.boot_max = SIZE_MAX; /* the bootstrap at every size */
    kbc_change one, many[3];
    o.threads = 1;
    kbc_compare_samples(a, n, b, n, &o, &one);
    double lo, hi;
    ref_interval(a, n, b, n, &o, &lo, &hi);
    cr_assert_eq(one.lo, lo, "%a against %a", one.lo, lo);
    cr_assert_eq(one.hi, hi, "%a against %a", one.hi, hi);
    static const unsigned threads[] = {2, 3, 16};
    for (int k = 0; k < 3; k++) {
        o.threads = threads[k];
        kbc_compare_samples(a, n, b, n, &o, &many[k]);
        cr_assert_eq(many[k].lo, one.lo, "%u threads", threads[k]);
        cr_assert_eq(many[k].hi, one.hi, "%u threads", threads[k]);
    }
    free(a);
    free(b);
}

/* Many pairs at once are each what they are alone. */
Test(compare, many_pairs_at_once_are_each_as_alone)
{
    enum { P = 5 };
    double a[P][40], b[P][40];
    kbc_compare_pair pairs[P];
    for (int k = 0; k < P; k++) {
        samples(a[k], 40, 1e-3, 0.1, 100 + k);
        samples(b[k], 40, 1e-3 * (1 + 0.03 * k), 0.1, 200 + k);
        pairs[k] = (kbc_compare_pair){a[k], 40, b[k], 40};
    }
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    kbc_change all[P];
    kbc_compare_many(pairs, P, &o, all);
    for (int k = 0; k < P; k++) {
        kbc_change one;
        kbc_compare_samples(a[k], 40, b[k], 40, &o, &one);
        cr_assert_eq(all[k].lo, one.lo);
        cr_assert_eq(all[k].hi, one.hi);
        cr_assert_eq(all[k].verdict, one.verdict);
    }
}

/* A million samples a side: linear, so it completes (the test's time
   limit is the check; a sort per resample took minutes). */
Test(compare, a_million_samples_a_side_complete)
{
    size_t n = 1000000;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    samples(a, n, 1e-3, 0.05, 21);
    samples(b, n, 1.2e-3, 0.05, 22);
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    o.resamples = 100;
    kbc_change c;
    kbc_compare_samples(a, n, b, n, &o, &c);
    cr_assert_eq(c.verdict, KBC_SLOWER, "[%g, %g]", c.lo, c.hi);
    free(a);
    free(b);
}

/* A results file of rows v00000 .. v(rows-1) (in reverse order when
   reverse), each with three samples, written as text: the sink would
   spend its time rewriting the document. */
static void write_many(const char *path, int rows, int reverse)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"kbench\": {\"version\": \"0\"}, \"results\": [", f);
    for (int k = 0; k < rows; k++) {
        int i = reverse ? rows - 1 - k : k;
        fprintf(f,
                "%s{\"experiment\": \"e\", \"plugin\": \"p\", \"variant\": \"v%05d\", "
                "\"params\": {}, \"param_info\": [], \"status\": \"pass\", \"runs\": 3, "
                "\"samples_s\": [0.001, 0.00101, 0.00099]}",
                k ? ", " : "", i);
    }
    fputs("]}\n", f);
    cr_assert_eq(fclose(f), 0);
}

/* Thirty thousand rows a side, in opposite orders: rows are matched by
   key in O(n log n) (the test's time limit is the check; a search per
   row was quadratic). */
Test(compare, cli_thirty_thousand_rows_are_matched)
{
    enum { ROWS = 30000 };
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/many-base.json", tmpdir);
    snprintf(b, sizeof b, "%s/many-new.json", tmpdir);
    write_many(a, ROWS, 0);
    write_many(b, ROWS, 1);
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    o.resamples = 20;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    FILE *err = fopen("/dev/null", "w");
    cr_assert_eq(kbc_cmd_compare(a, b, &o, out, err), 0);
    fclose(out);
    fclose(err);
    cr_assert_not_null(strstr(text, "summary: 0 slower, 0 faster, 0 noisy, 30000 no change, 0 untested, "
                                    "0 only in base, 0 only in new;"),
                       "%.400s", text);
    free(text);
}

/* The draws' remainder without a division is x % d for every x: small
   divisors, powers of two and their neighbours, large ones, each with the
   edges of x (0, multiples of d and their neighbours, the top of 2^64)
   and random x. */
Test(compare, the_remainder_of_a_draw_is_x_mod_d)
{
    uint64_t g = 7;
    uint64_t ds[4096 + 200];
    size_t nd = 0;
    for (uint64_t d = 1; d <= 4096; d++)
        ds[nd++] = d;
    for (int k = 12; k < 64; k++) {
        ds[nd++] = (1ULL << k) - 1;
        ds[nd++] = (1ULL << k) + 1;
        ds[nd++] = ref_next(&g) >> (64 - k);
    }
    ds[nd++] = UINT64_MAX;
    ds[nd++] = UINT64_MAX - 1;
    for (size_t i = 0; i < nd; i++) {
        uint64_t d = ds[i] ? ds[i] : 1;
        uint64_t edges[] = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, UINT64_MAX, UINT64_MAX - 1,
                            UINT64_MAX - d, (UINT64_MAX / d) * d, (UINT64_MAX / d) * d - 1};
        for (size_t e = 0; e < sizeof edges / sizeof *edges; e++)
            cr_assert_eq(kbc_compare_mod(edges[e], d), edges[e] % d, "%llu %% %llu",
                         (unsigned long long)edges[e], (unsigned long long)d);
        for (int k = 0; k < 200; k++) {
            uint64_t x = ref_next(&g);
            cr_assert_eq(kbc_compare_mod(x, d), x % d, "%llu %% %llu", (unsigned long long)x,
                         (unsigned long long)d);
        }
    }
}

/* ---- the table: short keys, --only-changed, --sort change ---- */

/* A file of one experiment "sweep" of plugin "p" that sweeps n (1K, 2K,
   4K) and holds dtype = f32 fixed: variant k's median at each n is
   medians[i], 1% spread, 30 samples. */
static void write_sweep(const char *path, const double *medians, uint64_t seed)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    snprintf(m.host, sizeof m.host, "fixture");
    kbc_run_info info = {.machine = &m, .command_line = "kbench run sweep.ini"};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    for (int i = 0; i < 3; i++) {
        kbc_record r;
        kbc_record_init(&r);
        snprintf(r.experiment, sizeof r.experiment, "sweep");
        snprintf(r.plugin, sizeof r.plugin, "p");
        snprintf(r.variant, sizeof r.variant, "k");
        r.backend = KB_BACKEND_CPU;
        r.n_params = 2;
        snprintf(r.params[0].name, sizeof r.params[0].name, "n");
        r.params[0].type = KB_PARAM_SIZE;
        r.params[0].value.u = 1024u << i;
        snprintf(r.params[0].text, sizeof r.params[0].text, "%u", 1024u << i);
        r.params[0].swept = 1;
        snprintf(r.params[1].name, sizeof r.params[1].name, "dtype");
        r.params[1].type = KB_PARAM_ENUM;
        snprintf(r.params[1].text, sizeof r.params[1].text, "f32");
        r.point = (uint64_t)i;
        r.n_points = 3;
        r.outcome = KBC_PASS;
        double x[30], y[30];
        samples(x, 30, medians[i], 0.01, seed + (uint64_t)i);
        kbc_record_set_samples(&r, x, 30);
        memcpy(y, x, sizeof x);
        kbc_stats_compute(y, 30, &r.time);
        cr_assert_eq(s.point(s.ctx, &r, 1), 0);
        kbc_record_free(&r);
    }
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
}

/* n=1K unchanged, n=2K 20% faster, n=4K 10% slower. */
static void sweep_pair(char *a, char *b, size_t len)
{
    static const double base[3] = {1e-3, 2e-3, 4e-3}, newer[3] = {1e-3, 1.6e-3, 4.4e-3};
    snprintf(a, len, "%s/sweep-base.json", tmpdir);
    snprintf(b, len, "%s/sweep-new.json", tmpdir);
    write_sweep(a, base, 100);
    write_sweep(b, newer, 200);
}

Test(compare, cli_keys_show_only_the_swept_parameters)
{
    char a[512], b[512], args[1100];
    sweep_pair(a, b, sizeof a);
    snprintf(args, sizeof args, "'%s' '%s'", a, b);
    result *r = compare(args);
    cr_assert_eq(r->code, 1, "%s%s", r->out, r->err);
    cr_assert_not_null(strstr(r->out, "  sweep/n=2048/k  "), "%s", r->out);
    cr_assert_null(strstr(r->out, "dtype"), "the fixed dtype is left out: %s", r->out);
    cr_assert_null(strstr(r->out, "p/sweep"), "the plugin is left out: %s", r->out);
}

Test(compare, cli_json_keeps_the_whole_key_beside_the_short_one)
{
    char a[512], b[512], args[1100];
    sweep_pair(a, b, sizeof a);
    snprintf(args, sizeof args, "'%s' '%s' --format json", a, b);
    result *r = compare(args);
    cr_assert_not_null(strstr(r->out, "\"key\": \"p/sweep/n=2048,dtype=f32/k\""), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "\"row\": \"sweep/n=2048/k\""), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "\"significant\": true"), "%s", r->out);
}

Test(compare, cli_only_changed_drops_the_rows_with_no_change)
{
    char a[512], b[512], args[1100];
    sweep_pair(a, b, sizeof a);
    snprintf(args, sizeof args, "'%s' '%s' --only-changed", a, b);
    result *r = compare(args);
    cr_assert_eq(r->code, 1, "%s%s", r->out, r->err);
    cr_assert_null(strstr(r->out, "sweep/n=1024/k"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "sweep/n=2048/k"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "sweep/n=4096/k"), "%s", r->out);
    /* The summary still counts every row. */
    cr_assert_not_null(strstr(r->out, "1 slower, 1 faster, 0 noisy, 1 no change"), "%s", r->out);
}

Test(compare, cli_sort_change_puts_the_largest_slowdown_first)
{
    char a[512], b[512], args[1100];
    sweep_pair(a, b, sizeof a);
    snprintf(args, sizeof args, "'%s' '%s' --sort change", a, b);
    result *r = compare(args);
    const char *k4 = strstr(r->out, "sweep/n=4096/k"), *k1 = strstr(r->out, "sweep/n=1024/k"),
               *k2 = strstr(r->out, "sweep/n=2048/k");
    cr_assert(k4 && k1 && k2, "%s", r->out);
    cr_assert_lt(k4, k1, "%s", r->out);
    cr_assert_lt(k1, k2, "%s", r->out);
}

Test(compare, cli_sort_file_keeps_the_base_order)
{
    char a[512], b[512], args[1100];
    sweep_pair(a, b, sizeof a);
    snprintf(args, sizeof args, "'%s' '%s' --sort file", a, b);
    result *r = compare(args);
    const char *k4 = strstr(r->out, "sweep/n=4096/k"), *k1 = strstr(r->out, "sweep/n=1024/k");
    cr_assert(k4 && k1, "%s", r->out);
    cr_assert_lt(k1, k4, "%s", r->out);
}

Test(compare, cli_an_unknown_sort_exits_two)
{
    result *r = compare("slower-base.json slower-new.json --sort speed");
    cr_assert_eq(r->code, 2);
    cr_assert_not_null(strstr(r->err, "--sort wants file or change, not 'speed'"), "%s", r->err);
}

Test(compare, cli_markdown_has_significance_and_verdict_columns)
{
    char a[512], b[512], args[1100];
    sweep_pair(a, b, sizeof a);
    snprintf(args, sizeof args, "'%s' '%s' --format markdown", a, b);
    result *r = compare(args);
    cr_assert_not_null(strstr(r->out, "| significant | verdict |"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "| yes | **slower** |"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "| yes | faster |"), "%s", r->out);
}

/* A file whose experiment "mixed" ran variant k and skipped variants g1
   and g2 at two points. */
static void write_skips(const char *path, uint64_t seed)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    kbc_run_info info = {.machine = &m, .command_line = "kbench run mixed.ini"};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    static const char *const variants[] = {"k", "g1", "g2"};
    for (int p = 0; p < 2; p++)
        for (int v = 0; v < 3; v++) {
            kbc_record r;
            kbc_record_init(&r);
            snprintf(r.experiment, sizeof r.experiment, "mixed");
            snprintf(r.plugin, sizeof r.plugin, "p");
            snprintf(r.variant, sizeof r.variant, "%s", variants[v]);
            r.n_params = 1;
            snprintf(r.params[0].name, sizeof r.params[0].name, "n");
            r.params[0].type = KB_PARAM_SIZE;
            r.params[0].value.u = 1024u << p;
            snprintf(r.params[0].text, sizeof r.params[0].text, "%u", 1024u << p);
            r.params[0].swept = 1;
            r.point = (uint64_t)p;
            r.n_points = 2;
            if (v == 0) {
                r.outcome = KBC_PASS;
                double x[30], y[30];
                samples(x, 30, 1e-3, 0.01, seed + (uint64_t)p);
                kbc_record_set_samples(&r, x, 30);
                memcpy(y, x, sizeof x);
                kbc_stats_compute(y, 30, &r.time);
            } else {
                r.backend = KB_BACKEND_CUDA;
                r.outcome = KBC_SKIPPED;
                snprintf(r.reason, sizeof r.reason, "no CUDA driver (test)");
            }
            cr_assert_eq(s.point(s.ctx, &r, 1), 0);
            kbc_record_free(&r);
        }
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
}

Test(compare, cli_rows_that_did_not_run_fold_into_one_line_per_experiment)
{
    char a[512], b[512], args[1100];
    snprintf(a, sizeof a, "%s/skips-base.json", tmpdir);
    snprintf(b, sizeof b, "%s/skips-new.json", tmpdir);
    write_skips(a, 300);
    write_skips(b, 400);
    snprintf(args, sizeof args, "'%s' '%s'", a, b);
    result *r = compare(args);
    cr_assert_eq(r->code, 0, "%s%s", r->out, r->err);
    cr_assert_not_null(strstr(r->out, "\n  mixed: did not run on a side (untested): g1, g2 (4 rows)\n"),
                       "%s", r->out);
    cr_assert_null(strstr(r->out, "mixed/n=1024/g1"), "no row of its own: %s", r->out);
    cr_assert_not_null(strstr(r->out, "mixed/n=1024/k"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "4 untested"), "the summary counts them: %s", r->out);
}

Test(compare, cli_the_table_fits_120_columns_for_a_sweep)
{
    char a[512], b[512], args[1100];
    sweep_pair(a, b, sizeof a);
    snprintf(args, sizeof args, "'%s' '%s'", a, b);
    result *r = compare(args);
    /* The first line names the two files (paths of any length). */
    const char *rest = strchr(r->out, '\n');
    cr_assert_not_null(rest);
    for (const char *l = rest + 1; *l;) {
        size_t n = strcspn(l, "\n");
        cr_assert_leq(n, 120, "%.*s", (int)n, l);
        l += n + (l[n] == '\n');
    }
}

/* ---- one matching: compare, the report and the table agree ---- */

/* Rows of experiment "e" (plugin "p", n = 1024) whose base side is odd in
   one way each: "timed" is normal on both sides, "nosamples" has its
   statistics but no samples in base (a file written before samples were
   kept), "untimed" passed without timed runs in base, "crashed" crashed in
   new, "gone" is only in base and "added" only in new. */
static const char *const agree_variants[] = {"timed", "nosamples", "untimed", "crashed", "gone",
                                             "added"};
#define N_AGREE (sizeof agree_variants / sizeof *agree_variants)

static void agree_row(kbc_record *r, const char *variant, int newer)
{
    kbc_record_init(r);
    snprintf(r->experiment, sizeof r->experiment, "e");
    snprintf(r->plugin, sizeof r->plugin, "p");
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    r->backend = KB_BACKEND_CPU;
    r->n_params = 1;
    snprintf(r->params[0].name, sizeof r->params[0].name, "n");
    r->params[0].type = KB_PARAM_SIZE;
    r->params[0].value.u = 1024;
    snprintf(r->params[0].text, sizeof r->params[0].text, "1024");
    r->n_points = 1;
    r->outcome = KBC_PASS;
    double x[30], y[30];
    samples(x, 30, 1e-3, 0.01, newer ? 50 : 60);
    memcpy(y, x, sizeof x);
    kbc_stats_compute(y, 30, &r->time);
    if (!newer && strcmp(variant, "untimed") == 0)
        kbc_stats_compute(NULL, 0, &r->time);
    else if (newer || strcmp(variant, "nosamples") != 0)
        kbc_record_set_samples(r, x, 30);
    if (newer && strcmp(variant, "crashed") == 0) {
        r->outcome = KBC_CRASHED;
        kbc_record_free(r);
        kbc_stats_compute(NULL, 0, &r->time);
        snprintf(r->reason, sizeof r->reason, "the worker died (test)");
    }
}

static void write_agree(const char *path, int newer)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    kbc_run_info info = {.machine = &m, .command_line = "kbench run agree.ini"};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    for (size_t v = 0; v < N_AGREE; v++) {
        if (strcmp(agree_variants[v], newer ? "gone" : "added") == 0)
            continue;
        kbc_record r;
        agree_row(&r, agree_variants[v], newer);
        cr_assert_eq(s.point(s.ctx, &r, 1), 0);
        kbc_record_free(&r);
    }
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
}

/* The report's verdict cell of the row of variant v: "WORD" or
   "WORD (NOTE)" into buf. */
static void report_verdict(const char *page, const char *v, char *buf, size_t n)
{
    char cell[160];
    snprintf(cell, sizeof cell, "<td class=\"variant\">%s</td>", v);
    const char *row = strstr(page, cell);
    cr_assert_not_null(row, "no row %s in the report", v);
    const char *td = strstr(row, "<td class=\"v-");
    const char *end = strstr(row, "</tr>");
    cr_assert(td && end && td < end, "no verdict cell in the row of %s", v);
    td = strchr(td, '>') + 1;
    size_t k = 0;
    for (int tag = 0; *td && strncmp(td, "</td>", 5) != 0 && k + 1 < n; td++) {
        if (*td == '<')
            tag = 1;
        else if (*td == '>')
            tag = 0;
        else if (!tag)
            buf[k++] = *td;
    }
    buf[k] = '\0';
}

Test(compare, compare_the_report_and_the_table_agree_on_rows_without_samples)
{
    char a[512], b[512], args[1100], html[600], cmd[2048];
    snprintf(a, sizeof a, "%s/agree-base.json", tmpdir);
    snprintf(b, sizeof b, "%s/agree-new.json", tmpdir);
    snprintf(html, sizeof html, "%s/agree.html", tmpdir);
    write_agree(a, 0);
    write_agree(b, 1);
    snprintf(args, sizeof args, "'%s' '%s' --format json", a, b);
    result *r = compare(args);
    json_error_t e;
    json_t *doc = json_loads(r->out, 0, &e);
    cr_assert_not_null(doc, "%s: %s", e.text, r->out);
    snprintf(cmd, sizeof cmd, "'%s' report '%s' --baseline '%s' -o '%s' >/dev/null", KBENCH, b,
             a, html);
    cr_assert_eq(system(cmd), 0);
    FILE *f = fopen(html, "r");
    cr_assert_not_null(f);
    static char page[1 << 18];
    page[fread(page, 1, sizeof page - 1, f)] = '\0';
    fclose(f);
    /* The table of the new rows against the base rows, as `kbench run
       --baseline` shows it. */
    kbc_record *base = NULL, *newer = NULL;
    size_t nb = 0, nn = 0;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(a, &base, &nb, &d), 0, "%s", d.msg);
    cr_assert_eq(kbc_results_read(b, &newer, &nn, &d), 0, "%s", d.msg);
    char *table = NULL;
    size_t table_len = 0;
    FILE *out = open_memstream(&table, &table_len);
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    kbc_report_table_baseline(&s, base, nb);
    kbc_run_info info = {0};
    kbc_machine m;
    memset(&m, 0, sizeof m);
    info.machine = &m;
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, newer, nn), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    fclose(out);

    size_t i;
    json_t *row;
    size_t seen = 0;
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        const char *key = json_string_value(json_object_get(row, "key"));
        const char *verdict = json_string_value(json_object_get(row, "verdict"));
        const char *note = json_string_value(json_object_get(row, "note"));
        const char *v = strrchr(key, '/') + 1;
        char want[200], got[200];
        snprintf(want, sizeof want, note ? "%s (%s)" : "%s", verdict, note);
        report_verdict(page, v, got, sizeof got);
        cr_assert_str_eq(got, want, "row %s: the report says '%s', compare '%s'", v, got, want);
        /* The table's cell ends with the verdict's word. */
        char line[64];
        snprintf(line, sizeof line, "\n  %s ", v);
        const char *l = strstr(table, line);
        cr_assert_not_null(l, "%s", table);
        size_t len = strcspn(l + 1, "\n");
        cr_assert(len > strlen(verdict) && strncmp(l + 1 + len - strlen(verdict), verdict,
                                                   strlen(verdict)) == 0,
                  "row %s: the table says '%.*s', compare '%s'", v, (int)len, l + 1, verdict);
        seen++;
    }
    cr_assert_eq(seen, 4, "the four rows both files have: %s", r->out);
    /* The row without timed runs did not run in base, for all three. */
    char got[200];
    report_verdict(page, "untimed", got, sizeof got);
    cr_assert_str_eq(got, "untested (did not run in base)");
    /* A row only in new: compare lists it apart, the report and the table
       say so in its verdict. */
    cr_assert_not_null(strstr(r->out, "p/e/n=1024/added"), "%s", r->out);
    report_verdict(page, "added", got, sizeof got);
    cr_assert_str_eq(got, "untested (only in new)");
    cr_assert_not_null(strstr(table, "only in new\n"), "%s", table);
    free(table);
    kbc_records_free(base, nb);
    kbc_records_free(newer, nn);
    json_decref(doc);
}

/* ---- energy ---- */

/* A row of an energy fixture: its time as fixture_row says, and its
   energy windows' joules per run around `joules` (spread as for the
   samples; 0: the row has no energy, energy = on without NVML). */
typedef struct energy_row {
    const char *variant;
    double joules, spread;
    uint32_t windows;
    uint64_t seed;
} energy_row;

/* A results file at path whose rows are named by e[], each timed 1 ms
   with 1% spread (30 samples, the same on both sides of a pair) and with
   the energy e[] gives it. */
static void write_energy(const char *path, const energy_row *e, size_t n_rows)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.has_gpu = 1;
    snprintf(m.name, sizeof m.name, "NVIDIA H200");
    kbc_run_info info = {.machine = &m, .command_line = "kbench run energy.ini -o out"};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    for (size_t i = 0; i < n_rows; i++) {
        kbc_record r;
        kbc_record_init(&r);
        snprintf(r.experiment, sizeof r.experiment, "e");
        snprintf(r.plugin, sizeof r.plugin, "p");
        snprintf(r.variant, sizeof r.variant, "%s", e[i].variant);
        r.backend = KB_BACKEND_CUDA;
        r.n_params = 1;
        snprintf(r.params[0].name, sizeof r.params[0].name, "n");
        r.params[0].type = KB_PARAM_SIZE;
        r.params[0].value.u = 1024;
        snprintf(r.params[0].text, sizeof r.params[0].text, "1024");
        r.n_points = 1;
        r.outcome = KBC_PASS;
        r.work.bytes_read = 1 << 30;
        double x[64], y[64];
        samples(x, 30, 1e-3, 0.01, 100 + i);
        kbc_record_set_samples(&r, x, 30);
        memcpy(y, x, sizeof x);
        kbc_stats_compute(y, 30, &r.time);
        if (e[i].joules > 0) {
            double w[KBC_ENERGY_MAX_KEPT];
            samples(w, e[i].windows, e[i].joules, e[i].spread, e[i].seed);
            er_measured(&r, w, e[i].windows, 1.0);
        } else {
            er_not_measured(&r, KBC_ENERGY_NO_NVML, "NVML could not be loaded");
        }
        cr_assert_eq(s.point(s.ctx, &r, 1), 0);
        kbc_record_free(&r);
    }
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
}

/* The pair NAME-base.json and NAME-new.json in tmpdir, and the arguments
   that compare them (with more options after). */
static const char *energy_pair(const char *name, const energy_row *a, size_t na,
                               const energy_row *b, size_t nb, const char *more)
{
    static char args[1400];
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/%s-base.json", tmpdir, name);
    snprintf(pb, sizeof pb, "%s/%s-new.json", tmpdir, name);
    write_energy(pa, a, na);
    write_energy(pb, b, nb);
    snprintf(args, sizeof args, "'%s' '%s' %s", pa, pb, more);
    return args;
}

/* The line of the energy table for variant v ("  e/V ..."), or a failed
   test. */
static const char *energy_line(const result *r, const char *v, char *buf, size_t n)
{
    const char *t = strstr(r->out, "\nenergy: change of the median joules per run");
    cr_assert_not_null(t, "no energy table: %s", r->out);
    char want[64];
    snprintf(want, sizeof want, "\n  e/%s ", v);
    const char *l = strstr(t, want);
    cr_assert_not_null(l, "no energy line for %s: %s", v, r->out);
    snprintf(buf, n, "%.*s", (int)strcspn(l + 1, "\n"), l + 1);
    return buf;
}

/* Ten per cent more joules in windows 1% apart: more energy, while the
   time (the same samples' spread on both sides) has no change, so the
   exit code (which follows the time) is 0. */
Test(compare, cli_ten_percent_more_joules_is_more_energy)
{
    static const energy_row a[] = {{"k", 2e-3, 0.01, 5, 1}};
    static const energy_row b[] = {{"k", 2.2e-3, 0.01, 5, 2}};
    result *r = compare(energy_pair("more", a, 1, b, 1, ""));
    cr_assert_eq(r->code, 0, "%s%s", r->out, r->err);
    char line[400];
    energy_line(r, "k", line, sizeof line);
    cr_assert_not_null(strstr(line, "2.003 mJ  2.204 mJ   +10.1%"), "%s", line);
    cr_assert(strlen(line) > 12 && strcmp(line + strlen(line) - 12, " more energy") == 0, "%s",
              line);
    cr_assert_not_null(strstr(r->out, "energy: 1 more, 0 less, 0 noisy, 0 no change, 0 untested"),
                       "%s", r->out);
}

Test(compare, cli_ten_percent_fewer_joules_is_less_energy)
{
    static const energy_row a[] = {{"k", 2e-3, 0.01, 5, 3}};
    static const energy_row b[] = {{"k", 1.8e-3, 0.01, 5, 4}};
    result *r = compare(energy_pair("less", a, 1, b, 1, ""));
    cr_assert_eq(r->code, 0, "%s%s", r->out, r->err);
    char line[400];
    energy_line(r, "k", line, sizeof line);
    cr_assert(strlen(line) > 12 && strcmp(line + strlen(line) - 12, " less energy") == 0, "%s",
              line);
}

Test(compare, cli_the_same_joules_is_no_change_in_energy)
{
    static const energy_row a[] = {{"k", 2e-3, 0.01, 5, 5}};
    static const energy_row b[] = {{"k", 2e-3, 0.01, 5, 6}};
    result *r = compare(energy_pair("same", a, 1, b, 1, ""));
    cr_assert_eq(r->code, 0, "%s%s", r->out, r->err);
    char line[400];
    energy_line(r, "k", line, sizeof line);
    cr_assert(strlen(line) > 10 && strcmp(line + strlen(line) - 10, " no change") == 0, "%s",
              line);
}

/* Windows 20% apart cannot tell a 10% change: noisy, as the time's rule
   says of samples. */
Test(compare, cli_windows_that_spread_more_than_the_threshold_are_noisy)
{
    static const energy_row a[] = {{"k", 2e-3, 0.2, 5, 7}};
    static const energy_row b[] = {{"k", 2.2e-3, 0.2, 5, 8}};
    result *r = compare(energy_pair("noisy-energy", a, 1, b, 1, ""));
    char line[400];
    energy_line(r, "k", line, sizeof line);
    cr_assert_not_null(strstr(line, " noisy ("), "%s", line);
}

/* A row with energy on one side only is listed, untested, with why; a row
   with energy on neither side is not in the energy table. */
Test(compare, cli_energy_on_one_side_only_is_untested_and_says_which)
{
    static const energy_row a[] = {{"k", 2e-3, 0.01, 5, 9}, {"cpu", 0, 0, 0, 0}};
    static const energy_row b[] = {{"k", 0, 0, 0, 0}, {"cpu", 0, 0, 0, 0}};
    result *r = compare(energy_pair("one-side", a, 2, b, 2, ""));
    cr_assert_eq(r->code, 0, "%s%s", r->out, r->err);
    char line[400];
    energy_line(r, "k", line, sizeof line);
    cr_assert_not_null(strstr(line, "untested: no energy in new"), "%s", line);
    const char *t = strstr(r->out, "\nenergy: change");
    cr_assert_null(strstr(t, "e/cpu"), "%s", r->out);
    cr_assert_not_null(strstr(r->out, "energy: 0 more, 0 less, 0 noisy, 0 no change, 1 untested"),
                       "%s", r->out);
}

Test(compare, cli_json_carries_the_energy_change_and_its_summary)
{
    static const energy_row a[] = {{"k", 2e-3, 0.01, 5, 1}, {"cpu", 0, 0, 0, 0}};
    static const energy_row b[] = {{"k", 2.2e-3, 0.01, 5, 2}, {"cpu", 0, 0, 0, 0}};
    result *r = compare(energy_pair("json-energy", a, 2, b, 2, "--format json"));
    json_error_t je;
    json_t *doc = json_loads(r->out, 0, &je);
    cr_assert_not_null(doc, "%s: %s", je.text, r->out);
    json_t *row = json_array_get(json_object_get(doc, "rows"), 0);
    json_t *en = json_object_get(row, "energy");
    cr_assert(json_is_object(en), "%s", r->out);
    cr_assert_str_eq(json_string_value(json_object_get(en, "verdict")), "more energy");
    cr_assert_gt(json_real_value(json_object_get(en, "new_j_per_run")), 2.1e-3);
    cr_assert_gt(json_real_value(json_object_get(en, "ratio_low")), 1.05);
    cr_assert_str_eq(json_string_value(json_object_get(en, "interval")), "bootstrap");
    cr_assert(json_is_null(json_object_get(en, "note")));
    /* The row with energy on neither side has none. */
    json_t *cpu = json_array_get(json_object_get(doc, "rows"), 1);
    cr_assert(json_is_null(json_object_get(cpu, "energy")), "%s", r->out);
    json_t *sum = json_object_get(json_object_get(doc, "summary"), "energy");
    cr_assert_eq(json_integer_value(json_object_get(sum, "more")), 1, "%s", r->out);
    cr_assert_eq(json_integer_value(json_object_get(sum, "untested")), 0, "%s", r->out);
    json_decref(doc);
}

Test(compare, cli_markdown_has_an_energy_table)
{
    static const energy_row a[] = {{"k", 2e-3, 0.01, 5, 1}};
    static const energy_row b[] = {{"k", 2.2e-3, 0.01, 5, 2}};
    result *r = compare(energy_pair("md-energy", a, 1, b, 1, "--format markdown"));
    const char *t = strstr(r->out, "**energy: change of the median joules per run");
    cr_assert_not_null(t, "%s", r->out);
    cr_assert_not_null(strstr(t, "| `e/k` | 2"), "%s", r->out);
    cr_assert_not_null(strstr(t, "| **more energy** |"), "%s", r->out);
}

/* The energy's verdict is compare's statistics with the windows as the
   samples: the same interval as comparing the windows directly. */
Test(compare, the_energy_interval_is_the_windows_compared_as_samples)
{
    double wa[5], wb[5];
    samples(wa, 5, 2e-3, 0.03, 11);
    samples(wb, 5, 2.3e-3, 0.03, 12);
    kbc_record x, y;
    kbc_record_init(&x);
    kbc_record_init(&y);
    for (kbc_record *r = &x; r; r = r == &x ? &y : NULL) {
        snprintf(r->experiment, sizeof r->experiment, "e");
        snprintf(r->variant, sizeof r->variant, "k");
        r->outcome = KBC_PASS;
        double t[3] = {1e-3, 1e-3, 1e-3};
        kbc_record_set_samples(r, t, 3);
        kbc_stats_compute(t, 3, &r->time);
    }
    er_measured(&x, wa, 5, 1.0);
    er_measured(&y, wb, 5, 1.0);
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    kbc_baseline *b = kbc_baseline_new(&x, 1);
    kbc_match m;
    kbc_baseline_judge(b, &y, 1, &o, &m);
    kbc_change direct;
    kbc_compare_samples(wa, 5, wb, 5, &o, &direct);
    cr_assert_null(m.energy_note, "%s", m.energy_note);
    cr_assert_eq(m.energy.lo, direct.lo);
    cr_assert_eq(m.energy.hi, direct.hi);
    cr_assert_eq(m.energy.ratio, direct.ratio);
    cr_assert_eq(m.energy.verdict, direct.verdict);
    cr_assert_eq(m.energy.verdict, KBC_SLOWER, "lo %g hi %g", m.energy.lo, m.energy.hi);
    kbc_baseline_free(b);
    kbc_record_free(&x);
    kbc_record_free(&y);
}

/* What five windows a side can tell (docs/energy.md, "Comparing energy"):
   over 1000 seeded pairs of five windows each, spread +-3% around the same
   joules, the bootstrap interval excludes a ratio of 1 about as often as a
   95% interval should, and the verdict (threshold 5%, the noise guard) calls
   no change more or less; a 10% change in windows +-1% apart is found
   every time. */
Test(compare, five_windows_a_side_rarely_see_a_change_that_is_not_there)
{
    kbc_compare_opts o;
    kbc_compare_defaults(&o);
    int significant = 0, judged = 0, noisy = 0, found = 0;
    for (uint64_t k = 0; k < 1000; k++) {
        double a[5], b[5];
        samples(a, 5, 2e-3, 0.03, 5000 + 2 * k);
        samples(b, 5, 2e-3, 0.03, 5001 + 2 * k);
        kbc_change c;
        kbc_compare_samples(a, 5, b, 5, &o, &c);
        significant += kbc_compare_significant(&c);
        judged += c.verdict == KBC_SLOWER || c.verdict == KBC_FASTER;
        noisy += c.verdict == KBC_NOISY;
        samples(b, 5, 2.2e-3, 0.01, 9001 + 2 * k);
        samples(a, 5, 2e-3, 0.01, 9000 + 2 * k);
        kbc_compare_samples(a, 5, b, 5, &o, &c);
        found += c.verdict == KBC_SLOWER;
    }
    if (getenv("KBENCH_TEST_VERBOSE"))
        fprintf(stderr, "significant %d, judged %d, noisy %d of 1000; found %d of 1000\n",
                significant, judged, noisy, found);
    cr_assert_leq(significant, 60, "%d of 1000 intervals exclude 1", significant);
    cr_assert_eq(judged, 0, "%d of 1000 called a change", judged);
    cr_assert_eq(found, 1000, "%d of 1000 found the 10%% change", found);
}
