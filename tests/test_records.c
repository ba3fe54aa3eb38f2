/*
 * test_records.c -- records, reporters and the results reader on their own:
 * this file links kbench_views only (no configuration layer, no runner,
 * no CUDA), so that it builds at all is half the test.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "results_read.h"

static kbc_record one_record(void)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.experiment, sizeof r.experiment, "e");
    snprintf(r.plugin, sizeof r.plugin, "p");
    snprintf(r.variant, sizeof r.variant, "v");
    r.n_params = 1;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = 64;
    snprintf(r.params[0].text, sizeof r.params[0].text, "64");
    r.n_points = 1;
    r.outcome = KBC_PASS;
    snprintf(r.check.measure, sizeof r.check.measure, "abs");
    r.check.passed = 1;
    r.check.error = 0.0;
    r.check.tolerance = 1e-9;
    return r;
}

Test(records, a_fresh_record_has_nothing_measured)
{
    kbc_record r;
    kbc_record_init(&r);
    cr_assert_eq(r.outcome, KBC_SKIPPED);
    cr_assert_eq(r.points, 1);
    cr_assert(isnan(r.time.median));
    cr_assert(isnan(r.pct_ceiling));
    cr_assert_null(kbc_check_measure(&r));
}

Test(records, the_key_names_plugin_experiment_parameters_and_variant)
{
    kbc_record r = one_record();
    char key[64];
    cr_assert_eq(kbc_record_key(&r, key, sizeof key), strlen("p/e/n=64/v"));
    cr_assert_str_eq(key, "p/e/n=64/v");
    /* A short buffer gets a cut, terminated key and the length it needs. */
    char small[4];
    cr_assert_eq(kbc_record_key(&r, small, sizeof small), strlen("p/e/n=64/v"));
    cr_assert_str_eq(small, "p/e");
}

Test(records, outcomes_and_flags_spell_both_ways)
{
    for (int i = 0; i < 4; i++)
        cr_assert_eq(kbc_outcome_parse(kbc_outcome_name(i)), i);
    cr_assert_eq(kbc_outcome_parse("maybe"), -1);
    char buf[64];
    cr_assert_str_eq(kbc_flags_text(KB_VARIANT_SYNCS | KB_VARIANT_LIBRARY, buf, sizeof buf),
                     "syncs|library");
    cr_assert_eq(kbc_flag_parse("nondeterm"), KB_VARIANT_NONDETERM);
    cr_assert_eq(kbc_flag_parse("fast"), 0);
}

Test(records, json_written_from_records_alone_reads_back)
{
    char path[] = "/tmp/kbench-records-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    kbc_record r = one_record();
    kbc_run_info info = {.command_line = "test"};
    kbc_sink s;
    cr_assert_eq(kbc_report_json(path, &s, NULL), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, &r, 1), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    kbc_record *got = NULL;
    size_t n = 0;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, &got, &n, &d), 0, "%s", d.msg);
    unlink(path);
    cr_assert_eq(n, 1);
    char a[64], b[64];
    kbc_record_key(&r, a, sizeof a);
    kbc_record_key(&got[0], b, sizeof b);
    cr_assert_str_eq(a, b);
    cr_assert_eq(got[0].params[0].value.u, 64);
    cr_assert_eq(got[0].outcome, KBC_PASS);
    kbc_records_free(got, n);
}

/* Writes r alone to a fresh results file and reads it back into *got. */
static size_t round_trip(const kbc_record *r, kbc_record **got)
{
    char path[] = "/tmp/kbench-records-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    kbc_run_info info = {.command_line = "test"};
    kbc_sink s;
    cr_assert_eq(kbc_report_json(path, &s, NULL), 0);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.point(s.ctx, r, 1), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    size_t n = 0;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, got, &n, &d), 0, "%s", d.msg);
    unlink(path);
    return n;
}

Test(records, every_timed_sample_reads_back_in_run_order)
{
    kbc_record r = one_record();
    const double x[] = {3e-6, 1e-6, 2.5e-6, 1.25e-6};
    kbc_record_set_samples(&r, x, 4);
    kbc_stats_compute((double[]){3e-6, 1e-6, 2.5e-6, 1.25e-6}, 4, &r.time);
    kbc_record *got = NULL;
    size_t n = round_trip(&r, &got);
    cr_assert_eq(n, 1);
    cr_assert_eq(got[0].n_samples, 4);
    for (size_t i = 0; i < 4; i++)
        cr_assert_float_eq(got[0].samples[i], x[i], 1e-20, "sample %zu", i);
    kbc_record_free(&r);
    kbc_records_free(got, n);
}

Test(records, a_row_without_samples_reads_back_without_them)
{
    kbc_record r = one_record();
    kbc_record *got = NULL;
    size_t n = round_trip(&r, &got);
    cr_assert_eq(n, 1);
    cr_assert_eq(got[0].n_samples, 0);
    cr_assert_null(got[0].samples);
    kbc_records_free(got, n);
}

Test(records, the_noise_reads_back)
{
    kbc_record r = one_record();
    r.noise = 0.0123;
    r.noise_target = 0.01;
    r.noise_capped = 1;
    kbc_record *got = NULL;
    size_t n = round_trip(&r, &got);
    cr_assert_eq(n, 1);
    cr_assert_float_eq(got[0].noise, 0.0123, 1e-12);
    cr_assert_float_eq(got[0].noise_target, 0.01, 1e-12);
    cr_assert_eq(got[0].noise_capped, 1);
    kbc_records_free(got, n);
}
