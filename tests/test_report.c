/*
 * test_report.c -- the three reporters, fed a plan and rows built by hand
 * (no plugin is loaded and nothing runs), then read back: the table as
 * text, the CSV through a small RFC 4180 reader, the JSON through jansson.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exp_info.h"
#include "point.h"
#include "report.h"
#include "results_read.h"
#include "version.h"

/* Criterion's workers leave with _exit(), so LeakSanitizer's check at exit
   never runs in them; under -fsanitize=address each test asks for the
   check itself when it ends (see teardown_all). */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "LeakSanitizer found leaks")
#else
#define LEAK_CHECK() ((void)0)
#endif

/* ---- a fake plan: two experiments of two made-up families ------------- */

static const char *const dtype_choices[] = {"f32", "f64"};
static const kb_param red_params[] = {
    {.name = "n", .type = KB_PARAM_SIZE, .def = "1M", .min = 1, .max = 0},
    {.name = "dtype", .type = KB_PARAM_ENUM, .def = "f32", KB_CHOICES(dtype_choices)},
    {.name = "alpha", .type = KB_PARAM_FLOAT, .def = "0.5", .min = 1, .max = 0},
    {.name = "fast", .type = KB_PARAM_BOOL, .def = "true"},
};
static const kb_variant red_variants[] = {
    {"cpu_serial", KB_BACKEND_CPU, "one thread"},
    {"cuda_naive", KB_BACKEND_CUDA, "one atomic per element"},
    {"cuda_lib", KB_BACKEND_CUDA, "the library's reduction"},
};
static const kb_plugin red_desc = {KB_PLUGIN_HEADER, .name = "fakereduce",
                                   .summary = "test family", .params = red_params,
                                   .n_params = 4, .variants = red_variants, .n_variants = 3,
                                   .item_name = "elements"};

static const kb_param scan_params[] = {
    {.name = "n", .type = KB_PARAM_SIZE, .def = "1K", .min = 1, .max = 0},
    {.name = "block", .type = KB_PARAM_INT, .def = "256", .min = 32, .max = 1024},
};
static const kb_variant scan_variants[] = {{"serial", KB_BACKEND_CPU, "one thread"}};
static const kb_plugin scan_desc = {KB_PLUGIN_HEADER, .name = "fakescan", .params = scan_params,
                                    .n_params = 2, .variants = scan_variants, .n_variants = 1};

static kbc_plugin red_plugin = {.desc = &red_desc, .path = "/tmp/fakereduce.so"};
static kbc_plugin scan_plugin = {.desc = &scan_desc, .path = "/tmp/fakescan.so"};

/* The reduce experiment sweeps n over two sizes; the rest is fixed. */
static kb_value red_n[] = {{.u = 1u << 20}, {.u = 1u << 28}};
static kb_value red_dtype[] = {{.i = 0}};
static kb_value red_alpha[] = {{.f = 0.25}};
static kb_value red_fast[] = {{.i = 1}};
static kbc_axis red_axes[] = {{&red_params[0], red_n, 2, 3},
                              {&red_params[1], red_dtype, 1, 0},
                              {&red_params[2], red_alpha, 1, 5},
                              {&red_params[3], red_fast, 1, 0}};
static kb_value scan_n[] = {{.u = 3000}};
static kb_value scan_block[] = {{.i = 128}};
static kbc_axis scan_axes[] = {{&scan_params[0], scan_n, 1, 9}, {&scan_params[1], scan_block, 1, 10}};

static kbc_experiment exps[2];
static kbc_plan plan;
static kbc_machine machine;
static kbc_run_info info;
static kbc_exp_info *infos;

/* Point values, as the runner would hand them over. */
static kb_value red_point0[4], red_point1[4], scan_point0[2];

static const char *skip_reason = "needs 2 GiB, and the device has 1 GiB free; say \"n = 256M\" to fit";

static void setup_plan(void)
{
    memset(exps, 0, sizeof exps);
    exps[0].name = "reduce-f32";
    exps[0].line = 2;
    exps[0].description = "sum, \"quoted\"";
    exps[0].plugin = &red_plugin;
    exps[0].n_variants = 3;
    exps[0].variants[0] = 0;
    exps[0].variants[1] = 1;
    exps[0].variants[2] = 2;
    exps[0].baseline = 0;
    exps[0].reference = 2;
    exps[0].measure = (kbc_measure){3, 20, 10.0, 0, 1, 4};
    exps[0].axes = red_axes;
    exps[0].n_points = 2;

    exps[1].name = "scan-x";
    exps[1].line = 8;
    exps[1].plugin = &scan_plugin;
    exps[1].n_variants = 1;
    exps[1].baseline = 0;
    exps[1].reference = -1;
    exps[1].measure = (kbc_measure){1, 5, 2.0, 0, 7, 2};
    exps[1].axes = scan_axes;
    exps[1].n_points = 1;

    plan = (kbc_plan){.path = "conf/test.ini", .exps = exps, .n = 2, .n_points = 3};

    memset(&machine, 0, sizeof machine);
    machine.has_gpu = 0;
    snprintf(machine.no_gpu_reason, sizeof machine.no_gpu_reason,
             "no CUDA driver was found (libcuda.so.1: cannot open)");
    snprintf(machine.host, sizeof machine.host, "testhost");
    machine.cpu_threads = 2;
    machine.runtime_version = 13000;
    /* The header the runner would hand over: copies, like the records. */
    infos = kbc_exp_infos(&plan);
    info = (kbc_run_info){.config_file = plan.path, .machine = &machine,
                          .command_line = "kbench run conf/test.ini", .exps = infos,
                          .n_exps = plan.n};

    red_point0[0] = red_n[0];
    red_point1[0] = red_n[1];
    red_point0[1] = red_point1[1] = red_dtype[0];
    red_point0[2] = red_point1[2] = red_alpha[0];
    red_point0[3] = red_point1[3] = red_fast[0];
    scan_point0[0] = scan_n[0];
    scan_point0[1] = scan_block[0];
}

static void fill_pass(kbc_record *r, const kbc_experiment *e, uint64_t point, const kb_value *v,
                      uint32_t variant, double median)
{
    kbc_record_identify(r, e, point, v, variant);
    r->outcome = KBC_PASS;
    r->work = (kb_work){.bytes_read = 4u << 20, .bytes_written = 4, .flops = 1 << 20,
                        .items = 1 << 20};
    r->check = (kbc_rec_check){.passed = 1, .error = 2.1e-7, .tolerance = 4.3e-5,
                               .measure = "rel"};
    r->time = (kbc_stats){.n = 20, .median = median, .min = median * 0.9, .max = median * 1.3,
                          .mean = median * 1.05, .stddev = median * 0.01};
    r->gbps = (double)(r->work.bytes_read + r->work.bytes_written) / median / 1e9;
    r->gflops = r->work.flops / median / 1e9;
    r->items_per_s = (double)r->work.items / median;
    r->speedup_baseline = NAN;
    r->speedup_cpu = NAN;
    r->speedup_reference = NAN;
}

static void fill_skipped(kbc_record *r, const kbc_experiment *e, uint64_t point,
                         const kb_value *v, uint32_t variant, const char *reason)
{
    kbc_record_identify(r, e, point, v, variant);
    r->outcome = KBC_SKIPPED;
    snprintf(r->reason, sizeof r->reason, "%s", reason);
}

/* Point 0 of reduce: the baseline passes, cuda_naive is skipped with a
   reason full of commas and quotes, cuda_lib fails its check. */
static kbc_record p0[3], p1[3], s0[1];

static void setup_rows(void)
{
    fill_pass(&p0[0], &exps[0], 0, red_point0, 0, 123.456e-6);
    p0[0].speedup_baseline = 1.0;
    p0[0].speedup_cpu = 1.0;
    fill_skipped(&p0[1], &exps[0], 0, red_point0, 1, skip_reason);
    fill_pass(&p0[2], &exps[0], 0, red_point0, 2, 1.5e-3);
    p0[2].outcome = KBC_FAIL;
    p0[2].check.passed = 0;
    p0[2].check.error = 0.5;
    p0[2].pct_ceiling = 41.0;
    p0[2].speedup_baseline = 123.456e-6 / 1.5e-3;

    fill_pass(&p1[0], &exps[0], 1, red_point1, 0, 2.5);
    p1[0].speedup_baseline = 1.0;
    fill_pass(&p1[1], &exps[0], 1, red_point1, 1, 0.01);
    p1[1].speedup_baseline = 250.0;
    p1[1].pct_ceiling = 88.0;
    fill_pass(&p1[2], &exps[0], 1, red_point1, 2, 0.005);
    p1[2].speedup_baseline = 500.0;
    p1[2].pct_ceiling = 95.0;

    fill_pass(&s0[0], &exps[1], 0, scan_point0, 0, 4e-6);
    s0[0].work.flops = 0;
    s0[0].gflops = NAN;
    s0[0].speedup_baseline = 1.0;
}

static char tmpdir[64];

static void setup_all(void)
{
    setup_plan();
    setup_rows();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kbench-report-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp failed: %s", strerror(errno));
}

static void teardown_all(void)
{
    kbc_exp_infos_free(infos, plan.n);
    infos = NULL;
    LEAK_CHECK();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

TestSuite(report, .init = setup_all, .fini = teardown_all);

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot read %s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    int ch;
    while ((ch = fgetc(f)) != EOF)
        fputc(ch, m);
    fclose(f);
    fclose(m);
    return buf;
}

/* ---- outcome names ----------------------------------------------------- */

Test(report, outcome_names)
{
    cr_assert_str_eq(kbc_outcome_name(KBC_PASS), "pass");
    cr_assert_str_eq(kbc_outcome_name(KBC_FAIL), "FAIL");
    cr_assert_str_eq(kbc_outcome_name(KBC_ERROR), "error");
    cr_assert_str_eq(kbc_outcome_name(KBC_SKIPPED), "skipped");
    cr_assert_str_eq(kbc_outcome_name(42), "unknown");
}

/* ---- the table ---------------------------------------------------------- */

/* The line of text that contains needle, copied out (or NULL). */
static char *line_with(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    if (!p)
        return NULL;
    const char *a = p, *b = p;
    while (a > text && a[-1] != '\n')
        a--;
    while (*b && *b != '\n')
        b++;
    return strndup(a, (size_t)(b - a));
}

Test(report, table_groups_rows_under_point_headings)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_table(out, &s, &d), 0);
    kbc_report_table_wide(&s, 1); /* every column */
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, p0, 3), 0);
    cr_assert_eq(s.point(s.ctx, p1, 3), 0);
    cr_assert_eq(s.point(s.ctx, s0, 1), 0);
    cr_assert_eq(s.end(s.ctx, 1), 0);
    s.destroy(s.ctx);
    fclose(out);

    /* The machine line says there is no GPU and why. */
    cr_assert_not_null(strstr(buf, "no GPU: no CUDA driver was found"), "%s", buf);

    /* Headings name the experiment and the swept size, with its compact
       form; the fixed parameters stay out of a swept heading. */
    const char *h0 = strstr(buf, "reduce-f32  point 1/2  n=1048576 (2^20)\n");
    const char *h1 = strstr(buf, "reduce-f32  point 2/2  n=268435456 (2^28)\n");
    cr_assert_not_null(h0, "%s", buf);
    cr_assert_not_null(h1, "%s", buf);
    /* scan-x sweeps nothing, so its heading shows every parameter. */
    const char *h2 = strstr(buf, "scan-x  point 1/1  n=3000  block=128\n");
    cr_assert_not_null(h2, "%s", buf);
    cr_assert(h0 < h1 && h1 < h2);

    /* Every variant of point 0 lies between heading 0 and heading 1. */
    const char *names[] = {"cpu_serial", "cuda_naive", "cuda_lib"};
    const char *prev = h0;
    for (int i = 0; i < 3; i++) {
        const char *at = strstr(prev, names[i]);
        cr_assert_not_null(at);
        cr_assert(at > prev && at < h1, "%s is not under the first heading", names[i]);
        prev = at;
    }

    /* Status, times with units, speed-up and the check of the baseline. */
    char *l = line_with(h0, "cpu_serial");
    cr_assert_not_null(strstr(l, " pass "), "%s", l);
    cr_assert_not_null(strstr(l, "123.5 us"), "%s", l);
    cr_assert_not_null(strstr(l, "111.1 us"), "%s", l); /* min = 0.9 x median */
    cr_assert_not_null(strstr(l, "1.00x"), "%s", l);
    cr_assert_not_null(strstr(l, "rel 2.1e-07 <= 4.3e-05"), "%s", l);
    free(l);
    l = line_with(h0, "cuda_lib");
    cr_assert_not_null(strstr(l, " FAIL "), "%s", l);
    cr_assert_not_null(strstr(l, "1.5 ms"), "%s", l);
    cr_assert_not_null(strstr(l, "41%"), "%s", l);
    cr_assert_not_null(strstr(l, "0.08x"), "%s", l);
    cr_assert_not_null(strstr(l, "rel 0.5 > 4.3e-05"), "%s", l);
    free(l);
    l = line_with(h1, "cpu_serial");
    cr_assert_not_null(strstr(l, "2.5 s "), "%s", l);
    free(l);

    /* The skipped row's reason follows it on the next line, whole. */
    const char *sk = strstr(h0, "cuda_naive");
    const char *nl = strchr(sk, '\n');
    cr_assert_not_null(strstr(sk, " skipped "));
    char *next = line_with(nl + 1, "");
    cr_assert_not_null(strstr(next, skip_reason), "reason line: %s", next);
    cr_assert_eq(next[0], ' ', "the reason line is indented");
    free(next);

    /* Optional columns: the reduce experiment names a reference and does
       flops; scan-x has neither, and no CUDA variant. */
    char *th = line_with(h0, "variant");
    cr_assert_not_null(strstr(th, "vs ref"), "%s", th);
    cr_assert_not_null(strstr(th, "GFLOP/s"), "%s", th);
    cr_assert_not_null(strstr(th, "%peak"), "%s", th);
    free(th);
    th = line_with(h2, "variant");
    cr_assert_null(strstr(th, "vs ref"), "%s", th);
    cr_assert_null(strstr(th, "GFLOP/s"), "%s", th);
    cr_assert_null(strstr(th, "%peak"), "%s", th);
    free(th);

    /* Columns line up: the status column starts at the same offset on the
       title line and on each row of a point. */
    char *t0 = line_with(h0, "variant"), *r0 = line_with(h0, "cpu_serial"),
         *r2 = line_with(h0, "cuda_lib");
    size_t col = (size_t)(strstr(t0, "status") - t0);
    cr_assert_eq((size_t)(strstr(r0, "pass") - r0), col);
    cr_assert_eq((size_t)(strstr(r2, "FAIL") - r2), col);
    cr_assert_eq(strlen(r0) - strlen(strstr(r0, "rel")), strlen(t0) - strlen("check"),
                 "the check column starts where its title does");
    free(t0);
    free(r0);
    free(r2);

    /* The summary counts every outcome. */
    cr_assert_not_null(strstr(buf, "summary: 5 pass, 1 FAIL, 0 error, 1 skipped; exit code 1"),
                       "%s", buf);
    free(buf);
}

Test(report, table_machine_line_with_gpu)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    machine.has_gpu = 1;
    snprintf(machine.name, sizeof machine.name, "Test GPU 80GB");
    machine.cc_major = 9;
    machine.sm_count = 132;
    machine.driver_version = 13000;
    info.ceilings = (kbc_ceilings){.read_gbps = 3100.04, .write_gbps = 2950.5,
                                   .copy_gbps = 2912.34};
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    kbc_report_table_wide(&s, 1); /* every column */
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    s.destroy(s.ctx);
    fclose(out);
    cr_assert_not_null(strstr(buf, "Test GPU 80GB (cc 9.0, 132 SMs), driver 13.0, runtime 13.0\n"
                                   "bandwidth ceilings: read 3100.0, write 2950.5, copy 2912.3 GB/s"),
                       "%s", buf);
    cr_assert_null(strstr(buf, "no GPU"));
    free(buf);
}

/* ---- CSV ---------------------------------------------------------------- */

/* A small RFC 4180 reader: splits text into records of fields. */
typedef struct csv_table {
    char ***rec;
    size_t *nf;
    size_t n;
} csv_table;

static csv_table csv_parse(const char *s)
{
    csv_table t = {0};
    char **fields = NULL;
    size_t nf = 0;
    char *cur = NULL;
    size_t cl = 0;
    FILE *m = open_memstream(&cur, &cl);
    while (*s) {
        if (*s == '"') {
            s++;
            for (;;) {
                cr_assert_neq(*s, '\0', "unterminated quoted field");
                if (*s == '"' && s[1] == '"') {
                    fputc('"', m);
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    fputc(*s++, m);
                }
            }
            cr_assert(*s == ',' || *s == '\n', "text after a closing quote");
        }
        if (*s == ',' || *s == '\n') {
            fclose(m);
            fields = realloc(fields, (nf + 1) * sizeof *fields);
            fields[nf++] = cur;
            cur = NULL;
            m = open_memstream(&cur, &cl);
            if (*s == '\n') {
                t.rec = realloc(t.rec, (t.n + 1) * sizeof *t.rec);
                t.nf = realloc(t.nf, (t.n + 1) * sizeof *t.nf);
                t.rec[t.n] = fields;
                t.nf[t.n++] = nf;
                fields = NULL;
                nf = 0;
            }
            s++;
        } else {
            cr_assert_neq(*s, '"', "a quote inside an unquoted field");
            fputc(*s++, m);
        }
    }
    fclose(m);
    free(cur);
    cr_assert_eq(nf, 0, "the last line has no line end");
    return t;
}

static void csv_free(csv_table *t)
{
    for (size_t r = 0; r < t->n; r++) {
        for (size_t i = 0; i < t->nf[r]; i++)
            free(t->rec[r][i]);
        free(t->rec[r]);
    }
    free(t->rec);
    free(t->nf);
    *t = (csv_table){0};
}

static int col_of(const csv_table *t, const char *name)
{
    for (size_t i = 0; i < t->nf[0]; i++)
        if (strcmp(t->rec[0][i], name) == 0)
            return (int)i;
    cr_assert_fail("no column %s", name);
    return -1;
}

static const char *field(const csv_table *t, size_t row, const char *name)
{
    return t->rec[row][col_of(t, name)];
}

Test(report, csv_header_quoting_and_nan)
{
    char path[128];
    snprintf(path, sizeof path, "%s/out.csv", tmpdir);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_csv(path, &s, &d), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, p0, 3), 0);

    /* Flushed per point: the file holds the header and point 0 already. */
    char *text = slurp(path);
    csv_table t = csv_parse(text);
    cr_assert_eq(t.n, 4, "header + 3 rows after the first point, got %zu records", t.n);
    csv_free(&t);
    free(text);

    /* A verified row whose plugin named no measure keeps its numbers. */
    snprintf(p1[1].check.measure, sizeof p1[1].check.measure, "unnamed");
    cr_assert_eq(s.point(s.ctx, p1, 3), 0);
    cr_assert_eq(s.point(s.ctx, s0, 1), 0);
    cr_assert_eq(s.end(s.ctx, 1), 0);
    s.destroy(s.ctx);

    text = slurp(path);
    t = csv_parse(text);
    cr_assert_eq(t.n, 8);

    const char *expect[] = {"experiment", "plugin", "point", "n", "dtype", "alpha", "fast",
                            "block", "variant", "backend", "flags", "device", "cache", "status",
                            "reason", "integrity", "runs", "median_s", "min_s", "max_s", "mean_s",
                            "stddev_s", "bytes_read", "bytes_written", "flops", "items", "gbps",
                            "gflops", "items_per_s", "ceiling", "ceiling_gbps", "pct_ceiling",
                            "peak", "peak_gflops", "pct_peak", "speedup_baseline",
                            "speedup_cpu", "speedup_reference", "check_measure", "check_error",
                            "check_tolerance", "batch", "batch_how", "batch_note", "sm_mhz_min",
                            "sm_mhz_max", "mem_mhz_min", "temp_c_max", "power_w_max",
                            "clock_reasons", "throttled", "low_clock", "energy", "energy_why",
                            "j_per_run", "j_lo", "j_hi", "watts", "idle_w", "power_limit_w",
                            "gb_per_j", "gflops_per_j", "energy_windows",
                            "energy_throttled_windows", "energy_throttled_s", "energy_note",
                            "points", "ignores",
                            "key"};
    size_t ncol = sizeof expect / sizeof expect[0];
    cr_assert_eq(t.nf[0], ncol, "header has %zu columns", t.nf[0]);
    for (size_t i = 0; i < ncol; i++)
        cr_assert_str_eq(t.rec[0][i], expect[i]);
    for (size_t r = 1; r < t.n; r++)
        cr_assert_eq(t.nf[r], ncol, "record %zu has %zu fields", r, t.nf[r]);

    /* Row 2 is the skipped one: its reason comes back exactly. */
    cr_assert_str_eq(field(&t, 2, "reason"), skip_reason);
    cr_assert_str_eq(field(&t, 2, "status"), "skipped");
    cr_assert_str_eq(field(&t, 2, "variant"), "cuda_naive");
    cr_assert_str_eq(field(&t, 2, "backend"), "cuda");
    /* NaN is an empty field, and a check that never ran is empty too. */
    cr_assert_str_eq(field(&t, 2, "median_s"), "");
    cr_assert_str_eq(field(&t, 2, "gbps"), "");
    cr_assert_str_eq(field(&t, 2, "check_measure"), "");
    cr_assert_str_eq(field(&t, 2, "check_error"), "");
    cr_assert_str_eq(field(&t, 1, "speedup_reference"), "");
    cr_assert_str_eq(field(&t, 1, "runs"), "20");

    /* Parameters are formatted, and empty where the plugin lacks them. */
    cr_assert_str_eq(field(&t, 1, "n"), "1048576");
    cr_assert_str_eq(field(&t, 4, "n"), "268435456");
    cr_assert_str_eq(field(&t, 1, "dtype"), "f32");
    cr_assert_str_eq(field(&t, 1, "fast"), "true");
    cr_assert_str_eq(field(&t, 1, "block"), "");
    cr_assert_str_eq(field(&t, 7, "experiment"), "scan-x");
    cr_assert_str_eq(field(&t, 7, "plugin"), "fakescan");
    cr_assert_str_eq(field(&t, 7, "dtype"), "");
    cr_assert_str_eq(field(&t, 7, "block"), "128");
    cr_assert_str_eq(field(&t, 7, "gflops"), "");
    cr_assert_str_eq(field(&t, 4, "point"), "1");

    /* Numbers keep 9 significant digits. */
    double med = strtod(field(&t, 1, "median_s"), NULL);
    cr_assert_float_eq(med, p0[0].time.median, 1e-9 * p0[0].time.median);
    double gb = strtod(field(&t, 3, "gbps"), NULL);
    cr_assert_float_eq(gb, p0[2].gbps, 1e-8 * p0[2].gbps);
    cr_assert_str_eq(field(&t, 3, "check_measure"), "rel");
    cr_assert_float_eq(strtod(field(&t, 3, "check_error"), NULL), 0.5, 1e-12);
    cr_assert_str_eq(field(&t, 3, "status"), "FAIL");
    cr_assert_str_eq(field(&t, 5, "check_measure"), "unnamed");
    cr_assert_str_eq(field(&t, 5, "check_error"), "2.1e-07");
    csv_free(&t);
    free(text);
}

/* Names and texts that a spreadsheet would run as a formula come back as
   text (a leading ', quoted); numbers that start with - or + stay
   numbers. */
Test(report, csv_neutralises_text_a_spreadsheet_would_run)
{
    char path[128];
    snprintf(path, sizeof path, "%s/formula.csv", tmpdir);
    kbc_record rows[3];
    memcpy(rows, p0, sizeof rows);
    snprintf(rows[0].variant, sizeof rows[0].variant, "=HYPERLINK(\"http://x\",\"y\")");
    snprintf(rows[1].reason, sizeof rows[1].reason, "@SUM(A1:A9)");
    snprintf(rows[2].variant, sizeof rows[2].variant, "+cmd|' /C calc'!A0");
    snprintf(rows[2].params[0].text, sizeof rows[2].params[0].text, "-1");
    snprintf(rows[2].device, sizeof rows[2].device, "-2+3");
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_csv(path, &s, &d), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, rows, 3), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    char *text = slurp(path);
    csv_table t = csv_parse(text);
    cr_assert_eq(t.n, 4);
    cr_assert_str_eq(field(&t, 1, "variant"), "'=HYPERLINK(\"http://x\",\"y\")");
    cr_assert_str_eq(field(&t, 2, "reason"), "'@SUM(A1:A9)");
    cr_assert_str_eq(field(&t, 3, "variant"), "'+cmd|' /C calc'!A0");
    cr_assert_str_eq(field(&t, 3, "device"), "'-2+3");
    cr_assert_str_eq(field(&t, 3, "n"), "-1");
    /* Every field that starts with one of = + - @ is a number. */
    for (size_t r = 1; r < t.n; r++)
        for (size_t i = 0; i < t.nf[r]; i++) {
            const char *v = t.rec[r][i];
            if (!strchr("=+-@", v[0]) || !v[0])
                continue;
            char *end;
            strtod(v, &end);
            cr_assert(*end == '\0', "record %zu field %zu '%s' reads as a formula", r, i, v);
        }
    csv_free(&t);
    free(text);
}

Test(report, csv_unwritable_path)
{
    kbc_sink s;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_report_csv("/nonexistent-kbench-dir/out.csv", &s, &d), -1);
    cr_assert_str_eq(d.msg, "cannot write /nonexistent-kbench-dir/out.csv: No such file or "
                            "directory.");
    cr_assert_eq(kbc_report_csv(tmpdir, &s, &d), -1);
    cr_assert_not_null(strstr(d.msg, "cannot write "), "%s", d.msg);
    cr_assert_not_null(strstr(d.msg, strerror(EISDIR)), "%s", d.msg);
}

/* ---- JSON --------------------------------------------------------------- */

static json_t *load(const char *path)
{
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    cr_assert_not_null(doc, "%s does not parse: %s at line %d", path, err.text, err.line);
    return doc;
}

Test(report, json_document_rewritten_per_point)
{
    char path[128], tmp[160];
    snprintf(path, sizeof path, "%s/out.json", tmpdir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);

    json_t *doc = load(path);
    cr_assert_eq(json_array_size(json_object_get(doc, "results")), 0);
    json_decref(doc);

    cr_assert_eq(s.point(s.ctx, p0, 3), 0);
    /* After one point the file is a whole document holding its rows, and
       says the run has not finished. */
    doc = load(path);
    cr_assert_eq(json_array_size(json_object_get(doc, "results")), 3);
    cr_assert(json_is_null(json_object_get(doc, "exit_code")));
    cr_assert(json_is_null(json_object_get(doc, "finished")));
    json_decref(doc);
    cr_assert_neq(access(tmp, F_OK), 0, "PATH.tmp is left behind");

    /* Later points are written once enough time has passed since the last
       write (ten times its duration, and the writes within a tenth of the
       run: json_due), by the next point or a tick.  A pause lets that time
       pass; on a loaded machine, where a write takes longer, ticks go on
       until it has (a point that never reaches the file still fails). */
    usleep(300 * 1000);
    cr_assert_eq(s.point(s.ctx, p1, 3), 0);
    size_t rows = 0;
    for (int tries = 0; tries < 100; tries++) {
        doc = load(path);
        rows = json_array_size(json_object_get(doc, "results"));
        json_decref(doc);
        if (rows == 6)
            break;
        usleep(100 * 1000);
        cr_assert_eq(s.tick(s.ctx), 0);
    }
    cr_assert_eq(rows, 6, "the second point's rows never reached %s", path);

    cr_assert_eq(s.point(s.ctx, s0, 1), 0);
    cr_assert_eq(s.end(s.ctx, 1), 0);
    s.destroy(s.ctx);

    doc = load(path);
    json_t *kb = json_object_get(doc, "kbench");
    cr_assert_str_eq(json_string_value(json_object_get(kb, "version")), KBENCH_VERSION);
    cr_assert_str_eq(json_string_value(json_object_get(kb, "git")), kbc_git_rev);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "command")),
                     "kbench run conf/test.ini");
    const char *started = json_string_value(json_object_get(doc, "started"));
    cr_assert_not_null(started);
    cr_assert_eq(strlen(started), 20, "ISO-8601 UTC such as 2025-01-02T03:04:05Z: %s", started);
    cr_assert_eq(started[10], 'T');
    cr_assert_eq(started[19], 'Z');
    cr_assert(json_is_string(json_object_get(doc, "finished")));
    cr_assert_eq(json_integer_value(json_object_get(doc, "exit_code")), 1);
    cr_assert(json_is_integer(json_object_get(doc, "exit_code")));

    json_t *m = json_object_get(doc, "machine");
    cr_assert(json_is_false(json_object_get(m, "has_gpu")));
    cr_assert_str_eq(json_string_value(json_object_get(m, "reason")), machine.no_gpu_reason);
    cr_assert(json_is_null(json_object_get(m, "gpu")));
    cr_assert(json_is_null(json_object_get(m, "copy_gbps")));
    cr_assert_str_eq(json_string_value(json_object_get(m, "runtime_version_string")), "13.0");
    cr_assert_eq(json_integer_value(json_object_get(m, "runtime_version")), 13000);
    cr_assert_str_eq(json_string_value(json_object_get(m, "host")), "testhost");
    cr_assert_eq(json_integer_value(json_object_get(m, "cpu_threads")), 2);

    json_t *cfg = json_object_get(doc, "config");
    cr_assert_str_eq(json_string_value(json_object_get(cfg, "file")), "conf/test.ini");
    json_t *e0 = json_array_get(json_object_get(cfg, "experiments"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(e0, "name")), "reduce-f32");
    cr_assert_str_eq(json_string_value(json_object_get(e0, "description")), "sum, \"quoted\"");
    cr_assert_str_eq(json_string_value(json_object_get(e0, "plugin")), "fakereduce");
    cr_assert_str_eq(json_string_value(json_object_get(e0, "plugin_file")), "/tmp/fakereduce.so");
    cr_assert_eq(json_array_size(json_object_get(e0, "variants")), 3);
    cr_assert_str_eq(json_string_value(json_object_get(e0, "baseline")), "cpu_serial");
    cr_assert_str_eq(json_string_value(json_object_get(e0, "reference")), "cuda_lib");
    cr_assert_eq(json_integer_value(json_object_get(e0, "points")), 2);
    json_t *meas = json_object_get(e0, "measure");
    cr_assert_eq(json_integer_value(json_object_get(meas, "runs")), 20);
    cr_assert(json_is_false(json_object_get(meas, "include_copies")));
    json_t *pn = json_object_get(json_object_get(e0, "params"), "n");
    cr_assert_eq(json_array_size(pn), 2);
    cr_assert_str_eq(json_string_value(json_array_get(pn, 1)), "268435456");
    json_t *e1 = json_array_get(json_object_get(cfg, "experiments"), 1);
    cr_assert(json_is_null(json_object_get(e1, "reference")));
    cr_assert(json_is_null(json_object_get(e1, "description")));

    json_t *res = json_object_get(doc, "results");
    cr_assert_eq(json_array_size(res), 7);
    /* Typed parameter values. */
    json_t *r0 = json_array_get(res, 0);
    json_t *pv = json_object_get(r0, "params");
    cr_assert(json_is_integer(json_object_get(pv, "n")));
    cr_assert_eq(json_integer_value(json_object_get(pv, "n")), 1 << 20);
    cr_assert_str_eq(json_string_value(json_object_get(pv, "dtype")), "f32");
    cr_assert(json_is_real(json_object_get(pv, "alpha")));
    cr_assert_float_eq(json_real_value(json_object_get(pv, "alpha")), 0.25, 1e-15);
    cr_assert(json_is_true(json_object_get(pv, "fast")));
    cr_assert_str_eq(json_string_value(json_object_get(r0, "experiment")), "reduce-f32");
    cr_assert_str_eq(json_string_value(json_object_get(r0, "status")), "pass");
    cr_assert_str_eq(json_string_value(json_object_get(r0, "backend")), "cpu");
    cr_assert(json_is_null(json_object_get(r0, "reason")));
    cr_assert_eq(json_integer_value(json_object_get(r0, "runs")), 20);
    cr_assert_float_eq(json_real_value(json_object_get(json_object_get(r0, "time_s"), "median")),
                       p0[0].time.median, 1e-15);
    json_t *w = json_object_get(r0, "work");
    cr_assert_eq(json_integer_value(json_object_get(w, "bytes_read")), 4 << 20);
    cr_assert_eq(json_integer_value(json_object_get(w, "items")), 1 << 20);
    json_t *sp = json_object_get(r0, "speedup");
    cr_assert_float_eq(json_real_value(json_object_get(sp, "baseline")), 1.0, 1e-15);
    /* NaN becomes null. */
    cr_assert(json_is_null(json_object_get(sp, "reference")));
    cr_assert(json_is_null(json_object_get(r0, "pct_ceiling")));
    json_t *chk = json_object_get(r0, "check");
    cr_assert(json_is_true(json_object_get(chk, "passed")));
    cr_assert_str_eq(json_string_value(json_object_get(chk, "measure")), "rel");
    cr_assert_float_eq(json_real_value(json_object_get(chk, "tolerance")), 4.3e-5, 1e-18);

    json_t *r1 = json_array_get(res, 1);
    cr_assert_str_eq(json_string_value(json_object_get(r1, "status")), "skipped");
    cr_assert_str_eq(json_string_value(json_object_get(r1, "reason")), skip_reason);
    cr_assert(json_is_null(json_object_get(json_object_get(r1, "time_s"), "median")));
    cr_assert(json_is_null(json_object_get(r1, "check")));
    json_t *r2 = json_array_get(res, 2);
    cr_assert(json_is_false(json_object_get(json_object_get(r2, "check"), "passed")));
    cr_assert_str_eq(json_string_value(json_object_get(r2, "status")), "FAIL");

    json_t *r6 = json_array_get(res, 6);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(r6, "params"), "block")), 128);
    /* A row carries its own plugin's parameters only. */
    cr_assert_null(json_object_get(json_object_get(r6, "params"), "dtype"));
    cr_assert(json_is_null(json_object_get(r6, "gflops")));
    json_decref(doc);
}

Test(report, json_unwritable_path)
{
    kbc_sink s;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_report_json("/nonexistent-kbench-dir/out.json", &s, &d), -1);
    cr_assert_str_eq(d.msg, "cannot write /nonexistent-kbench-dir/out.json: No such file or "
                            "directory.");
    cr_assert_eq(kbc_report_json(tmpdir, &s, &d), -1);
    cr_assert_not_null(strstr(d.msg, strerror(EISDIR)), "%s", d.msg);
}

/* A file that becomes unwritable during the run (its folder removed) makes
   point() return -1 rather than pretend the rows were kept. */
Test(report, json_write_failure_during_run)
{
    char dir[128], path[160];
    snprintf(dir, sizeof dir, "%s/sub", tmpdir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/out.json", dir);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(rmdir(dir), 0);
    cr_assert_eq(s.point(s.ctx, p0, 3), -1);
    s.destroy(s.ctx);
}

/* ---- a record that stands for several points ---------------------------- */

Test(report, table_shows_how_many_points_a_row_stands_for)
{
    kbc_record r[1];
    fill_pass(&r[0], &exps[0], 0, red_point0, 0, 1e-3);
    r[0].points = 3;
    snprintf(r[0].ignores, sizeof r[0].ignores, "dtype,alpha");
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    kbc_report_table_wide(&s, 1); /* every column */
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, 1), 0);
    s.destroy(s.ctx);
    fclose(out);
    char *l = line_with(buf, "x3:");
    cr_assert_not_null(l, "%s", buf);
    cr_assert_not_null(strstr(l, "stands for 3 points; this variant ignores dtype,alpha"), "%s",
                       l);
    free(l);
    free(buf);
}

Test(report, table_shows_variant_flags_beside_the_name)
{
    kbc_record r[2];
    fill_pass(&r[0], &exps[0], 0, red_point0, 0, 1e-3);
    fill_pass(&r[1], &exps[0], 0, red_point0, 1, 2e-3);
    r[0].flags = KB_VARIANT_SYNCS | KB_VARIANT_LIBRARY;
    r[1].flags = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    kbc_report_table_wide(&s, 1); /* every column */
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, 2), 0);
    s.destroy(s.ctx);
    fclose(out);
    char want[128];
    snprintf(want, sizeof want, "  %s [syncs|library] ", r[0].variant);
    cr_assert_not_null(strstr(buf, want), "%s", buf);
    snprintf(want, sizeof want, "  %s [", r[1].variant);
    cr_assert_null(strstr(buf, want), "a variant without flags has no brackets: %s", buf);
    free(buf);
}

/* The table of one passing row with the given noise, as text. */
static char *table_with_noise_in(double noise, double target, int capped, int wide)
{
    kbc_record r[1];
    fill_pass(&r[0], &exps[0], 0, red_point0, 0, 1e-3);
    r[0].noise = noise;
    r[0].noise_target = target;
    r[0].noise_capped = capped;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    kbc_report_table_wide(&s, wide);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, 1), 0);
    s.destroy(s.ctx);
    fclose(out);
    return buf;
}

static char *table_with_noise(double noise, double target, int capped)
{
    return table_with_noise_in(noise, target, capped, 1);
}

Test(report, a_noisy_row_is_marked_and_noted_without_wide)
{
    char *buf = table_with_noise_in(0.08, 0, 0, 0);
    cr_assert_not_null(strstr(buf, "1 ms~ "), "the median is marked: %s", buf);
    cr_assert_not_null(strstr(buf, "\n  ~ noisy (noise above 5%): cpu_serial 8.0%\n    (a median "),
                       "%s", buf);
    free(buf);
}

Test(report, a_row_at_the_noise_default_is_not_marked)
{
    char *buf = table_with_noise_in(0.05, 0, 0, 0);
    cr_assert_null(strstr(buf, "~"), "%s", buf);
    free(buf);
}

Test(report, the_default_table_has_no_min_or_runs_column)
{
    char *buf = table_with_noise_in(0.01, 0, 0, 0);
    cr_assert_null(strstr(buf, " min "), "%s", buf);
    cr_assert_null(strstr(buf, " runs "), "%s", buf);
    free(buf);
}

Test(report, table_shows_each_rows_noise)
{
    char *buf = table_with_noise(0.012, 0.01, 0);
    cr_assert_not_null(strstr(buf, " noise "), "%s", buf);
    cr_assert_not_null(strstr(buf, " 1.2% "), "%s", buf);
    free(buf);
}

Test(report, table_marks_a_row_that_stopped_on_the_cap_above_its_noise_target)
{
    char *buf = table_with_noise(0.034, 0.01, 1);
    cr_assert_not_null(strstr(buf, " 3.4%! "), "%s", buf);
    free(buf);
}

Test(report, table_says_a_missing_gpu_once_in_the_summary)
{
    kbc_record r[3];
    fill_pass(&r[0], &exps[0], 0, red_point0, 0, 1e-3);
    fill_skipped(&r[1], &exps[0], 0, red_point0, 1, machine.no_gpu_reason);
    fill_skipped(&r[2], &exps[0], 0, red_point0, 2, machine.no_gpu_reason);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    kbc_report_table_wide(&s, 1); /* every column */
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, 3), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    fclose(out);
    /* Once on the machine line, once in the experiment's one line, once in
       the summary; never per row. */
    const char *first = strstr(buf, "no CUDA driver was found");
    cr_assert_not_null(first, "%s", buf);
    const char *second = strstr(first + 1, "no CUDA driver was found");
    cr_assert_not_null(second, "%s", buf);
    const char *third = strstr(second + 1, "no CUDA driver was found");
    cr_assert_not_null(third, "%s", buf);
    cr_assert_null(strstr(third + 1, "no CUDA driver was found"), "%s", buf);
    cr_assert_not_null(strstr(buf, "\n  CUDA variants skipped: cuda_naive, cuda_lib: no CUDA "
                                   "driver was found"),
                       "%s", buf);
    cr_assert_null(strstr(buf, "  cuda_naive "), "the skipped rows are folded: %s", buf);
    cr_assert_not_null(strstr(buf, "skipped: 2 CUDA rows: no CUDA driver was found"), "%s", buf);
    free(buf);
}

Test(report, csv_and_json_keep_the_multiplicity_and_cache)
{
    kbc_record r[1];
    fill_pass(&r[0], &exps[0], 0, red_point0, 1, 1e-3);
    r[0].points = 4;
    r[0].cache_cold = 1;
    snprintf(r[0].ignores, sizeof r[0].ignores, "dtype");
    char csv[128], js[128];
    snprintf(csv, sizeof csv, "%s/mult.csv", tmpdir);
    snprintf(js, sizeof js, "%s/mult.json", tmpdir);
    kbc_sink s[2];
    cr_assert_eq(kbc_report_csv(csv, &s[0], NULL), 0);
    cr_assert_eq(kbc_report_json(js, &s[1], NULL), 0);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(s[i].begin(s[i].ctx, &info), 0);
        cr_assert_eq(s[i].point(s[i].ctx, r, 1), 0);
        cr_assert_eq(s[i].end(s[i].ctx, 0), 0);
        s[i].destroy(s[i].ctx);
    }
    char *text = slurp(csv);
    csv_table t = csv_parse(text);
    cr_assert_str_eq(field(&t, 1, "points"), "4");
    cr_assert_str_eq(field(&t, 1, "ignores"), "dtype");
    cr_assert_str_eq(field(&t, 1, "cache"), "cold");
    cr_assert_str_eq(field(&t, 1, "key"),
                     "fakereduce/reduce-f32/n=1048576,dtype=f32,alpha=0.25,fast=true/cuda_naive");
    csv_free(&t);
    free(text);
    json_t *doc = load(js);
    json_t *r0 = json_array_get(json_object_get(doc, "results"), 0);
    cr_assert_eq(json_integer_value(json_object_get(r0, "points")), 4);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(r0, "ignores"), 0)),
                     "dtype");
    cr_assert_str_eq(json_string_value(json_object_get(r0, "cache")), "cold");
    json_decref(doc);
}

/* ---- results.json read back ------------------------------------------- */

static void assert_num_eq(double a, double b, const char *what)
{
    if (isnan(a) || isnan(b)) {
        cr_assert(isnan(a) && isnan(b), "%s: %g and %g", what, a, b);
        return;
    }
    /* Reals are written with 15 significant digits. */
    cr_assert_float_eq(a, b, 1e-14 * fabs(b), "%s: %.17g and %.17g", what, a, b);
}

static void assert_records_eq(const kbc_record *a, const kbc_record *b)
{
    char ka[1024], kb[1024];
    kbc_record_key(a, ka, sizeof ka);
    kbc_record_key(b, kb, sizeof kb);
    cr_assert_str_eq(ka, kb);
    cr_assert_str_eq(a->experiment, b->experiment);
    cr_assert_str_eq(a->plugin, b->plugin);
    cr_assert_str_eq(a->variant, b->variant);
    cr_assert_eq(a->variant_index, b->variant_index);
    cr_assert_eq(a->backend, b->backend);
    cr_assert_eq(a->flags, b->flags);
    cr_assert_eq(a->point, b->point);
    cr_assert_eq(a->n_points, b->n_points);
    cr_assert_eq(a->n_params, b->n_params);
    for (uint32_t i = 0; i < a->n_params; i++) {
        const kbc_rec_param *p = &a->params[i], *q = &b->params[i];
        cr_assert_str_eq(p->name, q->name);
        cr_assert_eq(p->type, q->type);
        cr_assert_str_eq(p->text, q->text);
        cr_assert_eq(p->swept, q->swept);
        if (p->type == KB_PARAM_FLOAT)
            assert_num_eq(p->value.f, q->value.f, p->name);
        else if (p->type != KB_PARAM_ENUM)
            cr_assert_eq(p->value.u, q->value.u, "%s", p->name);
    }
    cr_assert_str_eq(a->baseline, b->baseline);
    cr_assert_str_eq(a->reference, b->reference);
    cr_assert_str_eq(a->device, b->device);
    cr_assert_eq(a->cache_cold, b->cache_cold);
    cr_assert_eq(a->points, b->points);
    cr_assert_str_eq(a->ignores, b->ignores);
    cr_assert_eq(a->outcome, b->outcome);
    cr_assert_str_eq(a->reason, b->reason);
    cr_assert_eq(memcmp(&a->work, &b->work, sizeof a->work), 0);
    cr_assert_eq(a->check.passed, b->check.passed);
    cr_assert_str_eq(a->check.measure, b->check.measure);
    assert_num_eq(a->check.error, b->check.error, "check.error");
    assert_num_eq(a->check.tolerance, b->check.tolerance, "check.tolerance");
    cr_assert_eq(a->time.n, b->time.n);
    assert_num_eq(a->time.median, b->time.median, "median");
    assert_num_eq(a->time.min, b->time.min, "min");
    assert_num_eq(a->time.max, b->time.max, "max");
    assert_num_eq(a->time.mean, b->time.mean, "mean");
    assert_num_eq(a->time.stddev, b->time.stddev, "stddev");
    assert_num_eq(a->gbps, b->gbps, "gbps");
    assert_num_eq(a->gflops, b->gflops, "gflops");
    assert_num_eq(a->items_per_s, b->items_per_s, "items_per_s");
    cr_assert_str_eq(a->ceiling, b->ceiling);
    assert_num_eq(a->ceiling_gbps, b->ceiling_gbps, "ceiling_gbps");
    assert_num_eq(a->pct_ceiling, b->pct_ceiling, "pct_ceiling");
    assert_num_eq(a->speedup_baseline, b->speedup_baseline, "speedup_baseline");
    assert_num_eq(a->speedup_cpu, b->speedup_cpu, "speedup_cpu");
    assert_num_eq(a->speedup_reference, b->speedup_reference, "speedup_reference");
}

Test(report, json_round_trip_gives_the_same_records)
{
    /* Every kind of field set to something other than its default. */
    p0[2].flags = KB_VARIANT_NONDETERM | KB_VARIANT_LIBRARY;
    p0[2].points = 2;
    p0[2].cache_cold = 1;
    snprintf(p0[2].ignores, sizeof p0[2].ignores, "alpha,fast");
    snprintf(p0[2].device, sizeof p0[2].device, "Test GPU");
    snprintf(p0[2].ceiling, sizeof p0[2].ceiling, "mixed");
    p0[2].ceiling_gbps = 2400.5;
    p0[2].work.device_bytes = 123456789;
    char path[128];
    snprintf(path, sizeof path, "%s/rt.json", tmpdir);
    kbc_sink s;
    cr_assert_eq(kbc_report_json(path, &s, NULL), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, p0, 3), 0);
    cr_assert_eq(s.point(s.ctx, p1, 3), 0);
    cr_assert_eq(s.point(s.ctx, s0, 1), 0);
    cr_assert_eq(s.end(s.ctx, 1), 0);
    s.destroy(s.ctx);

    kbc_record *got = NULL;
    size_t n = 0;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, &got, &n, &d), 0, "%s", d.msg);
    cr_assert_eq(n, 7);
    const kbc_record *want[] = {&p0[0], &p0[1], &p0[2], &p1[0], &p1[1], &p1[2], &s0[0]};
    for (size_t i = 0; i < n; i++)
        assert_records_eq(&got[i], want[i]);
    kbc_records_free(got, n);
}

/* A file of a later layout is refused, naming both versions; one without
   schema_version (written before it existed) is read. */
Test(report, results_read_refuses_a_newer_schema_version)
{
    char path[128];
    snprintf(path, sizeof path, "%s/newer.json", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"schema_version\": %d, \"results\": []}\n", KBC_RESULTS_SCHEMA_VERSION + 1);
    fclose(f);
    kbc_record *got = NULL;
    size_t n = 0;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, &got, &n, &d), -1);
    char want[120];
    snprintf(want, sizeof want, "its \"schema_version\" is %d and this kbench reads up to %d",
             KBC_RESULTS_SCHEMA_VERSION + 1, KBC_RESULTS_SCHEMA_VERSION);
    cr_assert_not_null(strstr(d.msg, want), "%s", d.msg);
    cr_assert_not_null(strstr(d.msg, path), "%s", d.msg);
}

Test(report, results_read_takes_a_file_without_schema_version)
{
    char path[128];
    snprintf(path, sizeof path, "%s/older.json", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"results\": []}\n", f);
    fclose(f);
    kbc_record *got = NULL;
    size_t n = 5;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, &got, &n, &d), 0, "%s", d.msg);
    cr_assert_eq(n, 0);
    kbc_records_free(got, n);
}

Test(report, results_read_refuses_a_file_without_results)
{
    char path[128];
    snprintf(path, sizeof path, "%s/notresults.json", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"machine\": {}}\n", f);
    fclose(f);
    kbc_record *got = NULL;
    size_t n = 0;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, &got, &n, &d), -1);
    cr_assert_not_null(strstr(d.msg, "has no \"results\" array"), "%s", d.msg);
    cr_assert_null(got);
}

/* ---- clocks, batch mode and the compute ceiling (issue 11 section 3) ------ */

/* The table of the given rows of point 0, as text. */
static char *table_of(kbc_record *r, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    kbc_report_table_wide(&s, 1); /* every column */
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, n), 0);
    s.destroy(s.ctx);
    fclose(out);
    return buf;
}

/* A passing cuda_naive row whose clocks were read twice: SM at `before`
   and `after` MHz of a 1980 MHz maximum, with the reason bits of after. */
static void fill_clocked(kbc_record *r, unsigned before, unsigned after, uint64_t reasons)
{
    fill_pass(r, &exps[0], 0, red_point0, 1, 1e-3);
    kbc_clocks_start(&r->clocks, 1980);
    kbc_clock_sample a = {.known = KBC_CLK_SM | KBC_CLK_TEMP | KBC_CLK_POWER | KBC_CLK_REASONS,
                          .sm_mhz = before, .temp_c = 60, .power_w = 400.0};
    kbc_clock_sample b = a;
    b.sm_mhz = after;
    b.temp_c = 71;
    b.power_w = 690.0;
    b.reasons = reasons;
    kbc_clocks_add(&r->clocks, &a, 0);
    kbc_clocks_add(&r->clocks, &b, 1);
}

Test(report, table_shows_the_lowest_sm_clock)
{
    kbc_record r[1];
    fill_clocked(&r[0], 1980, 1950, 0);
    char *buf = table_of(r, 1);
    cr_assert_not_null(strstr(buf, "SM MHz"), "%s", buf);
    cr_assert_not_null(strstr(buf, " 1950 "), "%s", buf);
    cr_assert_null(strstr(buf, "clocks:"), "an unmarked row has no clocks note: %s", buf);
    free(buf);
}

Test(report, table_marks_a_row_below_ninety_percent_of_the_maximum_clock)
{
    kbc_record r[1];
    fill_clocked(&r[0], 1980, 1650, 0);
    char *buf = table_of(r, 1);
    cr_assert_not_null(strstr(buf, " 1650 low "), "%s", buf);
    cr_assert_not_null(strstr(buf, "clocks: SM clock fell to 1650 MHz, below 90% of its 1980 MHz"),
                       "%s", buf);
    free(buf);
}

Test(report, table_marks_a_throttled_row)
{
    kbc_record r[1];
    fill_clocked(&r[0], 1980, 1980, KBC_REASON_SW_POWER_CAP);
    char *buf = table_of(r, 1);
    cr_assert_not_null(strstr(buf, "1980 thr"), "%s", buf);
    cr_assert_not_null(strstr(buf, "throttled (sw_power_cap); 71 C, 690 W"), "%s", buf);
    free(buf);
}

Test(report, table_shows_a_graph_batch)
{
    kbc_record r[1];
    fill_pass(&r[0], &exps[0], 0, red_point0, 1, 3e-6);
    r[0].mode = (kbc_rec_mode){.batch = 64, .graph = 1, .requested = 64};
    char *buf = table_of(r, 1);
    cr_assert_not_null(strstr(buf, " batch "), "%s", buf);
    cr_assert_not_null(strstr(buf, " x64 "), "%s", buf);
    cr_assert_null(strstr(buf, "batch:"), "a graph batch needs no note: %s", buf);
    free(buf);
}

Test(report, table_says_why_a_batch_was_launched_run_by_run)
{
    kbc_record r[1];
    fill_pass(&r[0], &exps[0], 0, red_point0, 1, 3e-6);
    r[0].mode = (kbc_rec_mode){.batch = 64, .graph = 0, .requested = 64};
    snprintf(r[0].mode.note, sizeof r[0].mode.note, "launched run by run: capture failed");
    char *buf = table_of(r, 1);
    cr_assert_not_null(strstr(buf, "x64 loop"), "%s", buf);
    cr_assert_not_null(strstr(buf, "batch: launched run by run: capture failed"), "%s", buf);
    free(buf);
}

Test(report, table_says_why_a_syncs_row_was_not_batched)
{
    kbc_record r[1];
    fill_pass(&r[0], &exps[0], 0, red_point0, 1, 3e-6);
    r[0].mode = (kbc_rec_mode){.batch = 1, .requested = 64};
    snprintf(r[0].mode.note, sizeof r[0].mode.note, "not batched: run() waits for the stream");
    char *buf = table_of(r, 1);
    cr_assert_not_null(strstr(buf, " single "), "%s", buf);
    cr_assert_not_null(strstr(buf, "batch: not batched: run() waits for the stream"), "%s", buf);
    free(buf);
}

Test(report, table_shows_the_percentage_of_the_compute_ceiling)
{
    kbc_record r[1];
    fill_pass(&r[0], &exps[0], 0, red_point0, 1, 1e-3);
    snprintf(r[0].peak, sizeof r[0].peak, "tf32");
    r[0].peak_gflops = 400000.0;
    r[0].pct_peak = 61.5;
    char *buf = table_of(r, 1);
    cr_assert_not_null(strstr(buf, "%tf32"), "%s", buf);
    cr_assert_not_null(strstr(buf, " 62% "), "61.5%% to no decimals: %s", buf);
    free(buf);
}

Test(report, json_round_trip_keeps_the_clocks_and_the_mode)
{
    kbc_record r[1];
    fill_clocked(&r[0], 1980, 1650, KBC_REASON_HW_SLOWDOWN | KBC_REASON_GPU_IDLE);
    r[0].mode = (kbc_rec_mode){.batch = 40, .graph = 1, .requested = 1};
    snprintf(r[0].mode.note, sizeof r[0].mode.note, "auto: a run takes 5 us");
    char path[128];
    snprintf(path, sizeof path, "%s/clocks.json", tmpdir);
    kbc_sink s;
    cr_assert_eq(kbc_report_json(path, &s, NULL), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, 1), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);

    kbc_record *got = NULL;
    size_t n = 0;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, &got, &n, &d), 0, "%s", d.msg);
    cr_assert_eq(n, 1);
    const kbc_rec_clocks *k = &got[0].clocks;
    cr_assert_eq(k->n, 2);
    cr_assert_eq(k->sm_min_mhz, 1650);
    cr_assert_eq(k->sm_max_mhz, 1980);
    cr_assert_eq(k->temp_max_c, 71);
    cr_assert_float_eq(k->power_max_w, 690.0, 1e-9);
    cr_assert_eq(k->reasons, KBC_REASON_HW_SLOWDOWN | KBC_REASON_GPU_IDLE);
    cr_assert_eq(k->throttled, 1);
    cr_assert_eq(k->low_clock, 1);
    cr_assert_eq(got[0].mode.batch, 40);
    cr_assert_eq(got[0].mode.graph, 1);
    cr_assert_eq(got[0].mode.requested, 1);
    cr_assert_str_eq(got[0].mode.note, "auto: a run takes 5 us");
    kbc_records_free(got, n);
}

/* The default table of a point with every optional column (CUDA rows that
   count flops against a named peak, clocks read, a batch, a reference, a
   CPU row) and 19-character variant names, the longest in conf/, fits 120
   columns: the header and every row. */
Test(report, the_default_table_of_the_widest_point_fits_120_columns)
{
    static const char *const names[3] = {"odd-even-multiblock", "interleaved-strided",
                                         "unroll-complete"};
    kbc_record r[3];
    for (int i = 0; i < 3; i++) {
        fill_pass(&r[i], &exps[0], 0, red_point0, (uint32_t)i, 123.456e-3);
        snprintf(r[i].variant, sizeof r[i].variant, "%s", names[i]);
        r[i].speedup_baseline = 123.45;
        r[i].speedup_cpu = 123.45;
        r[i].speedup_reference = 123.45;
        r[i].gbps = 3050.2;
        r[i].gflops = 370123.4;
        r[i].pct_ceiling = 99;
        r[i].pct_peak = 99;
        r[i].time.median = 999.9e-3;
        if (r[i].backend == KB_BACKEND_CUDA) {
            snprintf(r[i].peak, sizeof r[i].peak, "fp32");
            r[i].clocks.n = 2;
            r[i].clocks.known = KBC_CLK_SM;
            r[i].clocks.sm_min_mhz = 1650;
            r[i].clocks.throttled = 1;
            r[i].mode = (kbc_rec_mode){.batch = 64, .graph = 0, .requested = 64};
        }
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, 3), 0);
    s.destroy(s.ctx);
    fclose(out);
    const char *head = strstr(buf, "\n  variant ");
    cr_assert_not_null(head, "%s", buf);
    const char *cols[] = {"%peak", "GFLOP/s", "%fp32", "SM MHz", "batch", "vs cpu", "vs ref"};
    char *titles = strndup(head + 1, strcspn(head + 1, "\n"));
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++)
        cr_assert_not_null(strstr(titles, cols[k]), "every column is there: %s", titles);
    cr_assert_leq(strlen(titles), 120, "%s", buf);
    free(titles);
    for (int i = 0; i < 3; i++) {
        char key[40];
        snprintf(key, sizeof key, "\n  %s ", names[i]);
        const char *row = strstr(buf, key);
        cr_assert_not_null(row, "%s", buf);
        cr_assert_leq(strcspn(row + 1, "\n"), 120, "%s", buf);
    }
    free(buf);
}

/* ---- text from a plugin or a results file, escaped for its output ------- */

/* A failed check's measure (the plugin's word, or a results file's) on the
   terminal's check line: a control character is spelled out, never sent. */
Test(report, table_check_line_spells_out_control_characters)
{
    kbc_record r = p0[2]; /* FAIL, with a check */
    snprintf(r.check.measure, sizeof r.check.measure, "max\x1b[31m|err`!");
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, &r, 1), 0);
    s.destroy(s.ctx);
    fclose(out);
    cr_assert_not_null(strstr(buf, "check: max"), "%s", buf);
    cr_assert_null(strchr(buf, '\x1b'), "%s", buf);
    free(buf);
}

/* Why the clocks were not read (a worker's sentence, or a results file's)
   in results.md: markdown's specials are escaped like every other text. */
Test(report, markdown_clocks_reason_is_escaped)
{
    char path[] = "/tmp/kbench-clocks-md-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    machine.has_gpu = 1; /* the clocks line belongs to a GPU's header */
    kbc_run_info i = info;
    i.clocks_known = 0;
    i.clocks_why = "nvml said <script>alert(1)</script> | `x`";
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_markdown(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &i), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    char *md = slurp(path);
    unlink(path);
    cr_assert_not_null(strstr(md, "clocks: not read (nvml said \\<script\\>"), "%s", md);
    cr_assert_null(strstr(md, "<script>"), "%s", md);
    free(md);
}

/* ---- energy (docs/output.md, "Energy") ------------------------------------ */

/* A passing cuda_naive row (1 ms) whose energy was measured: five windows
   of 0.024 .. 0.026 J per run, median 0.025 J. */
static void fill_energy(kbc_record *r)
{
    fill_clocked(r, 1980, 1980, 0);
    kbc_rec_energy *e = &r->energy;
    e->requested = 1;
    e->status = KBC_ENERGY_MEASURED;
    e->window_s = 1.0;
    e->runs_per_window = 1000;
    e->windows = 5;
    const double j[5] = {0.025, 0.026, 0.024, 0.025, 0.0255};
    for (int i = 0; i < 5; i++) {
        e->window_j[i] = j[i];
        e->window_sec[i] = 1.0 + 0.01 * i;
    }
    e->j_per_run = 0.025;
    e->j_lo = 0.024;
    e->j_hi = 0.026;
    e->watts = 612.5;
    e->idle_w = 71.25;
    e->power_limit_w = 700.0;
    e->gb_per_j = 0.16;
    e->gflops_per_j = 0.042;
    e->throttled_s = 0;
}

Test(report, json_round_trip_keeps_the_energy)
{
    kbc_record r[2];
    fill_energy(&r[0]);
    r[0].energy.dropped = 1;
    r[0].energy.throttled_windows = 2;
    r[0].energy.throttled_s = 0.125;
    r[0].energy.reasons = KBC_REASON_SW_POWER_CAP | KBC_REASON_HW_THERMAL;
    snprintf(r[0].energy.note, sizeof r[0].energy.note, "1 window dropped: 1 where it wrapped");
    fill_clocked(&r[1], 1980, 1980, 0);
    r[1].energy.requested = 2;
    r[1].energy.status = KBC_ENERGY_UNSUPPORTED;
    snprintf(r[1].energy.why, sizeof r[1].energy.why, "NVML cannot read the energy counter");
    char path[128];
    snprintf(path, sizeof path, "%s/energy.json", tmpdir);
    kbc_sink s;
    cr_assert_eq(kbc_report_json(path, &s, NULL), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, 2), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);

    kbc_record *got = NULL;
    size_t n = 0;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, &got, &n, &d), 0, "%s", d.msg);
    cr_assert_eq(n, 2);
    const kbc_rec_energy *a = &got[0].energy, *b = &r[0].energy;
    cr_assert_eq(a->requested, 1);
    cr_assert_eq(a->status, KBC_ENERGY_MEASURED);
    cr_assert_str_empty(a->why);
    assert_num_eq(a->j_per_run, b->j_per_run, "j_per_run");
    assert_num_eq(a->j_lo, b->j_lo, "j_lo");
    assert_num_eq(a->j_hi, b->j_hi, "j_hi");
    assert_num_eq(a->watts, b->watts, "watts");
    assert_num_eq(a->idle_w, b->idle_w, "idle_w");
    assert_num_eq(a->power_limit_w, b->power_limit_w, "power_limit_w");
    assert_num_eq(a->gb_per_j, b->gb_per_j, "gb_per_j");
    assert_num_eq(a->gflops_per_j, b->gflops_per_j, "gflops_per_j");
    assert_num_eq(a->window_s, b->window_s, "window_s");
    cr_assert_eq(a->runs_per_window, 1000);
    cr_assert_eq(a->windows, 5);
    for (int i = 0; i < 5; i++) {
        assert_num_eq(a->window_j[i], b->window_j[i], "window_j");
        assert_num_eq(a->window_sec[i], b->window_sec[i], "window_sec");
    }
    cr_assert_eq(a->dropped, 1);
    cr_assert_str_eq(a->note, b->note);
    cr_assert_eq(a->throttled_windows, 2);
    assert_num_eq(a->throttled_s, 0.125, "throttled_s");
    cr_assert(isnan(got[1].energy.throttled_s), "unknown stays unknown");
    cr_assert_eq(a->reasons, KBC_REASON_SW_POWER_CAP | KBC_REASON_HW_THERMAL);
    cr_assert_eq(got[1].energy.requested, 2);
    cr_assert_eq(got[1].energy.status, KBC_ENERGY_UNSUPPORTED);
    cr_assert_str_eq(got[1].energy.why, "NVML cannot read the energy counter");
    cr_assert(isnan(got[1].energy.j_per_run));
    kbc_records_free(got, n);
}

/* A file written before energy (schema 1) reads as energy never tried. */
Test(report, results_read_takes_a_row_without_energy)
{
    char path[128];
    snprintf(path, sizeof path, "%s/old-energy.json", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"schema_version\": 1, \"results\": [{\"experiment\": \"e\", \"plugin\": \"p\", "
               "\"variant\": \"v\", \"status\": \"pass\"}]}\n");
    fclose(f);
    kbc_record *got = NULL;
    size_t n = 0;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, &got, &n, &d), 0, "%s", d.msg);
    cr_assert_eq(got[0].energy.status, KBC_ENERGY_NOT_RUN);
    cr_assert_eq(got[0].energy.requested, 0);
    cr_assert(isnan(got[0].energy.j_per_run));
    kbc_records_free(got, n);
}

Test(report, json_energy_counts_out_of_range_are_refused)
{
    char path[128];
    snprintf(path, sizeof path, "%s/bad-energy.json", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"results\": [{\"status\": \"pass\", \"energy\": {\"status\": \"measured\", "
               "\"dropped\": -3}}]}\n");
    fclose(f);
    kbc_record *got = NULL;
    size_t n = 0;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, &got, &n, &d), -1);
    cr_assert_not_null(strstr(d.msg, "\"energy.dropped\" is -3"), "%s", d.msg);
}

Test(report, csv_carries_the_energy)
{
    kbc_record r[2];
    fill_energy(&r[0]);
    fill_pass(&r[1], &exps[0], 0, red_point0, 0, 2e-3); /* energy off */
    char path[128];
    snprintf(path, sizeof path, "%s/energy.csv", tmpdir);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_csv(path, &s, &d), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, 2), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    char *text = slurp(path);
    csv_table t = csv_parse(text);
    cr_assert_str_eq(field(&t, 1, "energy"), "measured");
    cr_assert_str_eq(field(&t, 1, "j_per_run"), "0.025");
    cr_assert_str_eq(field(&t, 1, "j_lo"), "0.024");
    cr_assert_str_eq(field(&t, 1, "j_hi"), "0.026");
    cr_assert_str_eq(field(&t, 1, "watts"), "612.5");
    cr_assert_str_eq(field(&t, 1, "idle_w"), "71.25");
    cr_assert_str_eq(field(&t, 1, "power_limit_w"), "700");
    cr_assert_str_eq(field(&t, 1, "gflops_per_j"), "0.042");
    cr_assert_str_eq(field(&t, 1, "energy_windows"), "5");
    cr_assert_str_eq(field(&t, 1, "energy_throttled_windows"), "0");
    cr_assert_str_eq(field(&t, 1, "energy_throttled_s"), "0");
    /* Energy off: every energy field empty. */
    cr_assert_str_eq(field(&t, 2, "energy"), "");
    cr_assert_str_eq(field(&t, 2, "j_per_run"), "");
    cr_assert_str_eq(field(&t, 2, "energy_windows"), "");
    csv_free(&t);
    free(text);
}

/* The default table (no --wide) of rows of point 0. */
static char *default_table_of(kbc_record *r, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, n), 0);
    s.destroy(s.ctx);
    fclose(out);
    return buf;
}

Test(report, table_shows_joules_per_run_in_place_of_the_sm_clock)
{
    kbc_record r[1];
    fill_energy(&r[0]);
    char *buf = default_table_of(r, 1);
    cr_assert_not_null(strstr(buf, "J/run"), "%s", buf);
    cr_assert_not_null(strstr(buf, " 25.0 mJ "), "%s", buf);
    cr_assert_null(strstr(buf, "SM MHz"), "the default table trades the clock for J/run: %s",
                   buf);
    cr_assert_null(strstr(buf, "idle W"), "details are behind --wide: %s", buf);
    free(buf);
}

Test(report, wide_table_shows_the_energy_details_and_the_clock)
{
    kbc_record r[1];
    fill_energy(&r[0]);
    char *buf = table_of(r, 1);
    const char *cols[] = {"SM MHz", "J/run", "J +-", "idle W", "GFLOP/J"};
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++)
        cr_assert_not_null(strstr(buf, cols[k]), "%s: %s", cols[k], buf);
    /* Half of 0.026 - 0.024 over 0.025 is 4%; 612.5 W; 71.25 W idle. */
    cr_assert_not_null(strstr(buf, " 4.0% "), "%s", buf);
    cr_assert_not_null(strstr(buf, " 612 "), "%s", buf);
    cr_assert_not_null(strstr(buf, " 71.2 "), "%s", buf);
    free(buf);
}

Test(report, table_without_energy_has_no_energy_column)
{
    kbc_record r[1];
    fill_clocked(&r[0], 1980, 1980, 0);
    char *buf = default_table_of(r, 1);
    cr_assert_null(strstr(buf, "J/run"), "%s", buf);
    cr_assert_not_null(strstr(buf, "SM MHz"), "%s", buf);
    free(buf);
}

Test(report, table_says_why_energy_was_not_measured_when_it_is_on)
{
    kbc_record r[1];
    fill_clocked(&r[0], 1980, 1980, 0);
    r[0].energy.requested = 2;
    r[0].energy.status = KBC_ENERGY_UNSUPPORTED;
    snprintf(r[0].energy.why, sizeof r[0].energy.why,
             "NVML cannot read the energy counter: Not Supported");
    char *buf = default_table_of(r, 1);
    cr_assert_not_null(strstr(buf, "J/run"), "%s", buf);
    cr_assert_not_null(
        strstr(buf, "energy: not measured: NVML cannot read the energy counter: Not Supported"),
        "%s", buf);
    free(buf);
}

Test(report, table_with_energy_auto_is_silent_where_the_counter_cannot_be_read)
{
    kbc_record r[1];
    fill_clocked(&r[0], 1980, 1980, 0);
    r[0].energy.requested = 1;
    r[0].energy.status = KBC_ENERGY_UNSUPPORTED;
    snprintf(r[0].energy.why, sizeof r[0].energy.why, "NVML cannot read the energy counter");
    char *buf = default_table_of(r, 1);
    cr_assert_null(strstr(buf, "J/run"), "%s", buf);
    cr_assert_null(strstr(buf, "energy:"), "%s", buf);
    free(buf);
}

Test(report, table_with_energy_auto_says_a_counter_that_misbehaved)
{
    kbc_record r[1];
    fill_clocked(&r[0], 1980, 1980, 0);
    r[0].energy.requested = 1;
    r[0].energy.status = KBC_ENERGY_STILL;
    snprintf(r[0].energy.why, sizeof r[0].energy.why, "the energy counter did not move");
    char *buf = default_table_of(r, 1);
    cr_assert_not_null(strstr(buf, "energy: not measured: the energy counter did not move"),
                       "%s", buf);
    free(buf);
}

Test(report, table_notes_throttled_energy_windows)
{
    kbc_record r[1];
    fill_energy(&r[0]);
    r[0].energy.throttled_windows = 3;
    r[0].energy.throttled_s = 1.25;
    r[0].energy.reasons = KBC_REASON_SW_POWER_CAP;
    char *buf = default_table_of(r, 1);
    cr_assert_not_null(strstr(buf, "energy: a power or thermal limit throttled 3 of 5 windows "
                                    "(sw_power_cap), held back 1.2 s in all; 612 W of a 700 W "
                                    "limit"),
                       "%s", buf);
    free(buf);
}

Test(report, markdown_energy_note_is_escaped)
{
    char path[] = "/tmp/kbench-energy-md-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    kbc_record r[1];
    fill_clocked(&r[0], 1980, 1980, 0);
    r[0].energy.requested = 2;
    r[0].energy.status = KBC_ENERGY_NO_NVML;
    snprintf(r[0].energy.why, sizeof r[0].energy.why, "no NVML: <script>|x\n");
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_markdown(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, 1), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    char *md = slurp(path);
    unlink(path);
    cr_assert_not_null(strstr(md, "energy: not measured: no NVML: \\<script\\>\\|x\\\\n"), "%s",
                       md);
    free(md);
}

/* With energy, the widest point of the 120-column test still fits. */
Test(report, the_default_table_with_energy_fits_120_columns)
{
    static const char *const names[3] = {"odd-even-multiblock", "interleaved-strided",
                                         "unroll-complete"};
    kbc_record r[3];
    for (int i = 0; i < 3; i++) {
        fill_pass(&r[i], &exps[0], 0, red_point0, (uint32_t)i, 123.456e-3);
        snprintf(r[i].variant, sizeof r[i].variant, "%s", names[i]);
        r[i].speedup_baseline = r[i].speedup_cpu = r[i].speedup_reference = 123.45;
        r[i].gbps = 3050.2;
        r[i].gflops = 370123.4;
        r[i].pct_ceiling = r[i].pct_peak = 99;
        r[i].time.median = 999.9e-3;
        if (r[i].backend == KB_BACKEND_CUDA) {
            snprintf(r[i].peak, sizeof r[i].peak, "fp32");
            r[i].clocks.n = 2;
            r[i].clocks.known = KBC_CLK_SM;
            r[i].clocks.sm_min_mhz = 1650;
            r[i].clocks.throttled = 1;
            r[i].mode = (kbc_rec_mode){.batch = 64, .graph = 0, .requested = 64};
            r[i].energy.requested = 2;
            r[i].energy.status = KBC_ENERGY_MEASURED;
            r[i].energy.j_per_run = 123.4e-3;
        }
    }
    char *buf = default_table_of(r, 3);
    const char *head = strstr(buf, "\n  variant ");
    cr_assert_not_null(head, "%s", buf);
    const char *cols[] = {"%peak", "GFLOP/s", "%fp32", "J/run", "batch", "vs cpu", "vs ref"};
    char *titles = strndup(head + 1, strcspn(head + 1, "\n"));
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++)
        cr_assert_not_null(strstr(titles, cols[k]), "every column is there: %s", titles);
    cr_assert_leq(strlen(titles), 120, "%s", buf);
    free(titles);
    for (int i = 0; i < 3; i++) {
        char key[40];
        snprintf(key, sizeof key, "\n  %s ", names[i]);
        const char *row = strstr(buf, key);
        cr_assert_not_null(row, "%s", buf);
        cr_assert_leq(strcspn(row + 1, "\n"), 120, "%s", buf);
    }
    free(buf);
}
