/*
 * test_invalid.c -- a point that the plugin's plan() refuses is an
 * `invalid` row with the plugin's sentence, in every output, and the
 * sweep goes on: kbench run exits 0 when every other row passed; the dry
 * run and kbench check name the refused points; an experiment whose every
 * point is refused is a mistake in the file (exit 2).  The landscape
 * fixture's "half" shape refuses every point whose x + y is odd.
 */
#define _GNU_SOURCE
#include <jansson.h>

#include "kbench_cmd.h"

#define PP "--plugin-path " KBENCH_FIXTURE_DIR "/tune"

/* x = 0..3, y = 0..1 with the grid variant: 8 points, 4 of them odd. */
#define HALF_INI                                                                               \
    "[half]\nplugin = landscape\nshape = half\nvariants = grid\nx = 0..3:+1\ny = 0, 1\n"        \
    "unit_us = 5\nwarmup = 0\nruns = 2\n"

TestSuite(invalid, .init = kc_tmp, .fini = kc_tmp_remove);

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

Test(invalid, the_sweep_goes_on_and_exits_0)
{
    kc_write("half.ini", HALF_INI);
    kc_result r = kc_run("run half.ini " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "summary: 4 pass, 0 FAIL, 0 error, 0 skipped, 4 invalid; exit code 0");
    kc_assert_has(r.out, "invalid: x + y must be even (x=1, y=0)");
    kc_free(&r);
}

Test(invalid, every_output_says_invalid_with_the_sentence)
{
    kc_write("half.ini", HALF_INI);
    kc_result r = kc_run("run half.ini " PP " -o out");
    cr_assert_eq(r.code, 0, "%s", r.err);
    char *csv = kc_slurp(kc_path("out/results.csv"));
    cr_assert_eq(count_of(csv, ",invalid,\"x + y must be even"), 4, "%s", csv);
    char *md = kc_slurp(kc_path("out/results.md"));
    cr_assert_eq(count_of(md, "invalid: x + y must be even"), 4, "%s", md);
    char *journal = kc_slurp(kc_path("out/journal.jsonl"));
    cr_assert_eq(count_of(journal, "\"status\":\"invalid\""), 4, "%s", journal);
    json_error_t je;
    json_t *doc = json_load_file(kc_path("out/results.json"), 0, &je);
    cr_assert_not_null(doc, "%s", je.text);
    size_t i, invalid = 0;
    json_t *row;
    json_array_foreach(json_object_get(doc, "results"), i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "status")), "invalid") != 0)
            continue;
        invalid++;
        kc_assert_has(json_string_value(json_object_get(row, "reason")), "x + y must be even");
    }
    cr_assert_eq(invalid, 4);
    json_decref(doc);
    free(csv);
    free(md);
    free(journal);
    kc_free(&r);
}

Test(invalid, a_failing_row_still_fails_the_run)
{
    /* The fixture's verify fails nothing, so the check is on the code the
       table prints: invalid rows never make it 1 on their own, and the
       failing case is covered by kbc_outcome_failed (test_records). */
    kc_write("half.ini", HALF_INI);
    kc_result r = kc_run("run half.ini " PP " -q");
    cr_assert_eq(r.code, 0);
    kc_free(&r);
}

Test(invalid, compare_treats_them_like_skipped_rows)
{
    kc_write("half.ini", HALF_INI);
    kc_result r = kc_run("run half.ini " PP " -q -o a");
    cr_assert_eq(r.code, 0, "%s", r.err);
    kc_free(&r);
    r = kc_run("compare a/results.json a/results.json");
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    /* The four refused points are untested, folded into one line. */
    cr_assert_not_null(strstr(r.out, "summary: 0 slower, 0 faster"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, ", 4 untested"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "did not run on a side (untested)"), "%s", r.out);
    kc_free(&r);
}

Test(invalid, the_dry_run_names_each_refused_point)
{
    kc_write("half.ini", HALF_INI);
    kc_result r = kc_run("run half.ini " PP " --dry-run");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_eq(count_of(r.out, "| invalid: x + y must be even"), 4, "%s", r.out);
    kc_assert_has(r.out, "4 invalid points (refused by the plugin's plan()");
    kc_free(&r);
}

Test(invalid, an_experiment_with_no_valid_point_is_refused)
{
    kc_write("odd.ini", "[odd]\nplugin = landscape\nshape = half\nx = 1\ny = 0, 2\n");
    kc_result r = kc_run("run odd.ini " PP " -q");
    cr_assert_eq(r.code, 2, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.err, "odd.ini:1: experiment [odd]: plugin 'landscape' refuses every one of "
                         "its 2 points, so nothing would run (the first, shape=half, x=1, y=0, "
                         "unit_us=50: x + y must be even (x=1, y=0).)");
    kc_free(&r);
}

Test(invalid, check_names_the_refused_points)
{
    kc_result r = kc_run("check landscape " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "points refused with KB_EINVAL or KB_EUNSUPPORTED and a sentence");
    kc_assert_has(r.out, "(each is invalid in a run; the first at x=1: x + y must be even");
    kc_free(&r);
}

Test(invalid, merge_keeps_them_and_exits_0)
{
    kc_write("half.ini", HALF_INI);
    kc_result r = kc_run("run half.ini " PP " -q --shard 0/2 -o s0");
    cr_assert_eq(r.code, 0, "%s", r.err);
    kc_free(&r);
    r = kc_run("run half.ini " PP " -q --shard 1/2 -o s1");
    cr_assert_eq(r.code, 0, "%s", r.err);
    kc_free(&r);
    r = kc_run("merge s0 s1 -o merged");
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    char *csv = kc_slurp(kc_path("merged/results.csv"));
    cr_assert_eq(count_of(csv, ",invalid,\"x + y must be even"), 4, "%s", csv);
    free(csv);
    kc_free(&r);
}
