/*
 * test_read_numbers.c -- the results reader on numbers that do not fit
 * their field: each is refused with a sentence naming the file, the result
 * and the field (docs/output.md, "Reading results back"), never converted
 * out of range; absent and null fields read as unknown.  Each case takes a
 * file the JSON sink wrote and puts one literal in one field.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "results_read.h"

static char tmpdir[] = "/tmp/kbench-numbers-XXXXXX";
static char base[600]; /* the file as the sink wrote it */

/* Placeholders the sink writes, one per field under test, each unique in
   the file. */
#define P_BYTES 1234567001ULL  /* work.bytes_read      (u64)   */
#define P_INDEX 1234567002U    /* variant_index        (u32)   */
#define P_SIZE 1234567003ULL   /* params.n             (u64)   */
#define P_INT 1234567004LL     /* params.k             (int64) */
#define P_RUNS 1234567005U     /* runs                 (size)  */
#define P_SMS 123456706        /* machine.sm_count     (int)   */
#define P_SEED 1234567007ULL   /* measure.seed         (u64)   */

static void write_base(void)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.has_gpu = 1;
    snprintf(m.name, sizeof m.name, "GPU");
    m.sm_count = P_SMS;
    char *names[1] = {"n"};
    size_t n_values[1] = {0};
    char **values[1] = {NULL};
    kbc_exp_info x = {.name = "e", .plugin = "p", .seed = P_SEED, .n_params = 1,
                      .param_names = names, .param_values = values, .n_values = n_values};
    kbc_run_info info = {.machine = &m, .exps = &x, .n_exps = 1};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(base, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.experiment, sizeof r.experiment, "e");
    snprintf(r.plugin, sizeof r.plugin, "p");
    snprintf(r.variant, sizeof r.variant, "v");
    r.variant_index = P_INDEX;
    r.n_params = 2;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = P_SIZE;
    snprintf(r.params[0].text, sizeof r.params[0].text, "n");
    snprintf(r.params[1].name, sizeof r.params[1].name, "k");
    r.params[1].type = KB_PARAM_INT;
    r.params[1].value.i = P_INT;
    snprintf(r.params[1].text, sizeof r.params[1].text, "k");
    r.n_points = 1;
    r.outcome = KBC_PASS;
    double t[2] = {1e-3, 2e-3};
    kbc_record_set_samples(&r, t, 2);
    kbc_stats_compute(t, 2, &r.time);
    r.time.n = P_RUNS;
    r.work.bytes_read = P_BYTES;
    cr_assert_eq(s.point(s.ctx, &r, 1), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    kbc_record_free(&r);
}

static void setup_all(void)
{
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp failed: %s", strerror(errno));
    snprintf(base, sizeof base, "%s/base.json", tmpdir);
    write_base();
}

static void teardown_all(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(numbers, .init = setup_all, .fini = teardown_all);

/* A copy of the base file with the placeholder's one occurrence replaced
   by literal; returns its path (static). */
static const char *with(unsigned long long placeholder, const char *literal)
{
    static char path[700];
    static int k;
    snprintf(path, sizeof path, "%s/case-%d.json", tmpdir, k++);
    FILE *f = fopen(base, "r");
    cr_assert_not_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    char needle[32];
    snprintf(needle, sizeof needle, "%llu", placeholder);
    char *at = strstr(text, needle);
    cr_assert_not_null(at, "%s not in the file", needle);
    cr_assert_null(strstr(at + 1, needle), "%s twice in the file", needle);
    FILE *o = fopen(path, "w");
    cr_assert_not_null(o);
    fwrite(text, 1, (size_t)(at - text), o);
    fputs(literal, o);
    fputs(at + strlen(needle), o);
    fclose(o);
    return path;
}

/* Reads path's rows; returns 0 and the first row in *r, or -1 with the
   sentence in d. */
static int read_row(const char *path, kbc_record *r, kbc_diag *d)
{
    kbc_record *recs;
    size_t n;
    if (kbc_results_read(path, &recs, &n, d) != 0)
        return -1;
    cr_assert_eq(n, 1);
    *r = recs[0];
    recs[0].samples = NULL;
    kbc_records_free(recs, n);
    return 0;
}

static void refused(unsigned long long placeholder, const char *literal, const char *field)
{
    const char *path = with(placeholder, literal);
    kbc_record r;
    kbc_diag d = {{0}};
    cr_assert_eq(read_row(path, &r, &d), -1, "%s in %s was taken", literal, field);
    cr_assert_not_null(strstr(d.msg, path), "%s", d.msg);
    cr_assert_not_null(strstr(d.msg, "result 0"), "%s", d.msg);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", field);
    cr_assert_not_null(strstr(d.msg, quoted), "%s", d.msg);
}

static uint64_t bytes_read_of(const char *literal)
{
    kbc_record r;
    kbc_diag d = {{0}};
    cr_assert_eq(read_row(with(P_BYTES, literal), &r, &d), 0, "%s", d.msg);
    free(r.samples);
    return r.work.bytes_read;
}

Test(numbers, the_base_file_reads_back)
{
    kbc_record r;
    kbc_diag d = {{0}};
    cr_assert_eq(read_row(base, &r, &d), 0, "%s", d.msg);
    cr_assert_eq(r.work.bytes_read, P_BYTES);
    cr_assert_eq(r.variant_index, P_INDEX);
    cr_assert_eq(r.params[0].value.u, P_SIZE);
    cr_assert_eq(r.params[1].value.i, P_INT);
    cr_assert_eq(r.time.n, P_RUNS);
    free(r.samples);
}

/* 2^64 as an integer: jansson refuses the file itself, naming it and the
   line. */
Test(numbers, two_to_the_64_as_an_integer_refuses_the_file)
{
    const char *path = with(P_BYTES, "18446744073709551616");
    kbc_record r;
    kbc_diag d = {{0}};
    cr_assert_eq(read_row(path, &r, &d), -1);
    cr_assert_not_null(strstr(d.msg, path), "%s", d.msg);
    cr_assert_not_null(strstr(d.msg, "too big integer"), "%s", d.msg);
}

/* 2^64 - 1 as an integer is beyond jansson's integers too; kbench writes
   such a count as a real (see the next tests). */
Test(numbers, two_to_the_64_minus_1_as_an_integer_refuses_the_file)
{
    kbc_record r;
    kbc_diag d = {{0}};
    cr_assert_eq(read_row(with(P_BYTES, "18446744073709551615"), &r, &d), -1);
    cr_assert_not_null(strstr(d.msg, "too big integer"), "%s", d.msg);
}

/* The reals a writer makes of 2^64 - 1: 17 digits (2^64 exactly) and 15
   digits (a little above); both are the largest count. */
Test(numbers, the_reals_written_for_the_largest_count_read_as_it)
{
    cr_assert_eq(bytes_read_of("1.8446744073709552e19"), UINT64_MAX);
    cr_assert_eq(bytes_read_of("1.84467440737096e+19"), UINT64_MAX);
}

Test(numbers, a_real_below_2_to_the_64_reads_exactly)
{
    cr_assert_eq(bytes_read_of("9.3e18"), 9300000000000000000ULL);
    cr_assert_eq(bytes_read_of("9223372036854775807"), 9223372036854775807ULL);
}

Test(numbers, a_real_beyond_the_largest_count_is_refused)
{
    refused(P_BYTES, "1.9e19", "work.bytes_read");
}

Test(numbers, a_negative_count_is_refused)
{
    refused(P_BYTES, "-1", "work.bytes_read");
}

Test(numbers, a_huge_real_is_refused)
{
    refused(P_BYTES, "1e300", "work.bytes_read");
}

Test(numbers, a_fraction_where_a_count_is_due_is_refused)
{
    refused(P_BYTES, "2.5", "work.bytes_read");
}

Test(numbers, null_is_unknown)
{
    cr_assert_eq(bytes_read_of("null"), 0);
}

Test(numbers, a_size_parameter_is_checked)
{
    refused(P_SIZE, "-1", "params.n");
    refused(P_SIZE, "1e300", "params.n");
}

Test(numbers, an_int_parameter_is_checked)
{
    refused(P_INT, "1e300", "params.k");
    refused(P_INT, "9.3e18", "params.k");
}

Test(numbers, a_variant_index_beyond_32_bits_is_refused)
{
    refused(P_INDEX, "4294967296", "variant_index");
}

Test(numbers, a_run_count_is_checked)
{
    refused(P_RUNS, "-5", "runs");
}

/* The header: the machine's and an experiment's fields, named too. */
Test(numbers, an_sm_count_beyond_int_is_refused_naming_the_machine)
{
    const char *path = with(P_SMS, "2147483648");
    kbc_run_doc doc;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_results_read_run(path, &doc, &d), -1);
    cr_assert_not_null(strstr(d.msg, path), "%s", d.msg);
    cr_assert_not_null(strstr(d.msg, "\"machine.sm_count\" is 2147483648"), "%s", d.msg);
}

Test(numbers, a_negative_seed_is_refused_naming_the_experiment)
{
    kbc_run_doc doc;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_results_read_run(with(P_SEED, "-1"), &doc, &d), -1);
    cr_assert_not_null(strstr(d.msg, "experiment 0: \"measure.seed\" is -1"), "%s", d.msg);
}

/* A count of 2^64 - 1 written by kbench reads back as itself. */
Test(numbers, the_largest_count_round_trips)
{
    char path[700];
    snprintf(path, sizeof path, "%s/max.json", tmpdir);
    kbc_machine m;
    memset(&m, 0, sizeof m);
    kbc_run_info info = {.machine = &m};
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.experiment, sizeof r.experiment, "e");
    r.outcome = KBC_PASS;
    r.work.bytes_read = UINT64_MAX;
    cr_assert_eq(s.point(s.ctx, &r, 1), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    kbc_record back;
    cr_assert_eq(read_row(path, &back, &d), 0, "%s", d.msg);
    cr_assert_eq(back.work.bytes_read, UINT64_MAX);
    free(back.samples);
}

/* ---- What is not a results file at all: compare, plot, report, merge,
   history and --baseline read through kbc_results_load, which once read
   /dev/zero until the OOM killer came and waited for ever on a FIFO. ---- */

static void refused_file(const char *path, const char *why)
{
    kbc_record *recs = NULL;
    size_t n = 0;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_results_read(path, &recs, &n, &d), -1);
    char want[800];
    snprintf(want, sizeof want, "%s: cannot read the results: %s.", path, why);
    cr_assert_str_eq(d.msg, want);
}

Test(numbers, a_fifo_nobody_writes_is_refused_at_once, .timeout = 10)
{
    char path[700];
    snprintf(path, sizeof path, "%s/pipe.json", tmpdir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    refused_file(path, "it is a named pipe, not a regular file");
}

Test(numbers, an_endless_device_is_refused_at_once, .timeout = 10)
{
    refused_file("/dev/zero", "it is a device, not a regular file");
}

Test(numbers, a_file_over_a_gigabyte_is_refused_unread, .timeout = 10)
{
    char path[700];
    snprintf(path, sizeof path, "%s/huge.json", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    cr_assert_eq(ftruncate(fileno(f), (off_t)5 << 30), 0); /* sparse: no disk */
    fclose(f);
    refused_file(path, "it is 5.0 GiB, over the 1.0 GiB that kbench reads from such a file");
}

Test(numbers, a_folder_is_refused)
{
    refused_file(tmpdir, "it is a folder, not a file");
}
