/*
 * test_refuse.c -- the one refusal rule (kbc_plan_refused, kbench/plugin.h
 * at plan()) as every command applies it, on the refuse fixture
 * (tests/fixtures/refuse): plan() returning KB_EUNSUPPORTED with a
 * sentence refuses the point (an `invalid` row in run, check passes it,
 * tune records an invalid candidate, the dry run marks it invalid), and
 * KB_EFAIL is a plugin error (an `error` row, a check failure, an error
 * candidate, marked error), while the other points run.  And a point is
 * planned once: a worker never asks plan() again.  A point refused to one
 * variant (kb_host.refuse, ABI 2.3: the split fixture) is an `invalid` row
 * for that variant while the others run, in run, the dry run, check and
 * tune alike; and an integer parameter's multiple_of is checked with its
 * range.
 */
#define _GNU_SOURCE
#include <jansson.h>

#include "kbench_cmd.h"

#define PP "--plugin-path " KBENCH_FIXTURE_DIR "/refuse"

/* x = 0..4: x = 1 refused with KB_EUNSUPPORTED. */
#define REFUSED_INI "[r]\nplugin = refuse\nx = 0..4:+1\nwarmup = 0\nruns = 2\n"
/* x = 0..6: also x = 5, whose plan() fails with KB_EFAIL. */
#define BOTH_INI "[r]\nplugin = refuse\nx = 0..6:+1\nwarmup = 0\nruns = 2\n"

#define REFUSAL "x = 1 is a tile this kernel cannot take"
#define FAILURE "the plan table of x = 5 is broken"

TestSuite(refuse, .init = kc_tmp, .fini = kc_tmp_remove);

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

Test(refuse, run_gives_an_invalid_row_for_unsupported_and_exits_0)
{
    kc_write("r.ini", REFUSED_INI);
    kc_result r = kc_run("run r.ini " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "summary: 4 pass, 0 FAIL, 0 error, 0 skipped, 1 invalid; exit code 0");
    kc_assert_has(r.out, "invalid: " REFUSAL);
    kc_free(&r);
}

Test(refuse, run_gives_an_error_row_for_efail_and_goes_on)
{
    kc_write("r.ini", BOTH_INI);
    kc_result r = kc_run("run r.ini " PP " -o out");
    cr_assert_eq(r.code, 1, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "summary: 5 pass, 0 FAIL, 1 error, 0 skipped, 1 invalid; exit code 1");
    kc_assert_has(r.out, "error: " FAILURE);
    json_error_t je;
    json_t *doc = json_load_file(kc_path("out/results.json"), 0, &je);
    cr_assert_not_null(doc, "%s", je.text);
    size_t i, errors = 0, invalid = 0;
    json_t *row;
    json_array_foreach(json_object_get(doc, "results"), i, row)
    {
        const char *status = json_string_value(json_object_get(row, "status"));
        const char *reason = json_string_value(json_object_get(row, "reason"));
        if (strcmp(status, "error") == 0) {
            errors++;
            kc_assert_has(reason, FAILURE);
        } else if (strcmp(status, "invalid") == 0) {
            invalid++;
            kc_assert_has(reason, REFUSAL);
        }
    }
    cr_assert_eq(errors, 1);
    cr_assert_eq(invalid, 1);
    json_decref(doc);
    char *csv = kc_slurp(kc_path("out/results.csv"));
    cr_assert_eq(count_of(csv, ",error," FAILURE), 1, "%s", csv);
    cr_assert_eq(count_of(csv, ",invalid," REFUSAL), 1, "%s", csv);
    free(csv);
    kc_free(&r);
}

Test(refuse, the_dry_run_marks_the_invalid_and_the_error_point)
{
    kc_write("r.ini", BOTH_INI);
    kc_result r = kc_run("run r.ini " PP " --dry-run");
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert_eq(count_of(r.out, "| invalid: " REFUSAL), 1, "%s", r.out);
    cr_assert_eq(count_of(r.out, "| error: " FAILURE), 1, "%s", r.out);
    kc_assert_has(r.out, "1 invalid point (refused by the plugin's plan()");
    kc_assert_has(r.out, "1 point whose plan() failed (a plugin error: each becomes an `error` "
                         "row");
    kc_free(&r);
}

Test(refuse, check_passes_a_plugin_that_refuses_with_unsupported)
{
    kc_result r = kc_run("check refuse " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "ok   plan-errors (");
    kc_assert_has(r.out, "points refused with KB_EINVAL or KB_EUNSUPPORTED and a sentence (each "
                         "is invalid in a run; the first at x=1: " REFUSAL);
    kc_free(&r);
}

Test(refuse, check_fails_a_plugin_whose_plan_fails_with_efail)
{
    kc_result r = kc_run("check refuse_fail " PP);
    cr_assert_eq(r.code, 1, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "FAIL plan-errors: at x=1, plan() returned 5 (KB_EFAIL), a plugin error");
    kc_free(&r);
}

Test(refuse, tune_records_an_invalid_and_an_error_candidate)
{
    kc_write("t.ini", "[t]\nplugin = refuse\ntune = exhaustive\nx = 0..6:+1\nwarmup = 0\n"
                      "runs = 2\n");
    kc_result r = kc_run("tune t.ini -o out -q " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "of 7 allowed, 1 invalid, 1 failed");
    kc_assert_has(r.out, "1 invalid (refused by plan()), the first: " REFUSAL);
    kc_assert_has(r.out, "error: " FAILURE);
    char *csv = kc_slurp(kc_path("out/tried.csv"));
    cr_assert_eq(count_of(csv, ",invalid," REFUSAL), 1, "%s", csv);
    cr_assert_eq(count_of(csv, ",error," FAILURE), 1, "%s", csv);
    free(csv);
    kc_free(&r);
}

/* plan() fails whenever it runs in a worker: the run passes only if the
   worker takes each point's plan from its supervisor. */
Test(refuse, a_worker_never_calls_plan)
{
    kc_write("w.ini", "[w]\nplugin = refuse\nin_worker = true\nx = 0, 2, 3\nwarmup = 0\n"
                      "runs = 2\n");
    kc_result r = kc_run("run w.ini " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "summary: 3 pass, 0 FAIL, 0 error, 0 skipped; exit code 0");
    kc_free(&r);
}

/* kbench tune's screening plan has the full plan's points: their records
   are copied from it, and its workers never call plan() either. */
Test(refuse, tune_screens_with_the_full_plans_records)
{
    kc_write("s.ini", "[s]\nplugin = refuse\ntune = exhaustive\ntune_screen = 2\n"
                      "in_worker = true\nx = 0..6:+1\nwarmup = 0\nruns = 3\n");
    kc_result r = kc_run("tune s.ini -o out -q " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "5 evaluations of 7 allowed, 1 invalid, 1 failed");
    char *csv = kc_slurp(kc_path("out/tried.csv"));
    cr_assert_eq(count_of(csv, ",pass,"), 5, "%s", csv);
    free(csv);
    kc_free(&r);
}

/* ---- one variant refused at a point (kb_host.refuse, ABI 2.3) ----------- */

/* The split fixture: threads above 128 is not for `block`; `cpu` ignores
   threads and still runs there. */
#define VREFUSAL "block takes at most 128 threads, not threads = 129"

Test(refuse, a_variant_refused_alone_is_invalid_and_the_others_run)
{
    kc_write("s.ini", "[s]\nplugin = split\nthreads = 129\nwarmup = 0\nruns = 2\n");
    kc_result r = kc_run("run s.ini -o out " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "summary: 1 pass, 0 FAIL, 0 error, 0 skipped, 1 invalid; exit code 0");
    kc_assert_has(r.out, "invalid: " VREFUSAL);
    /* The worker was handed the refusal with the point: setup() fails when
       it is asked for a refused variant, so cpu's pass says it was not. */
    char *csv = kc_slurp(kc_path("out/results.csv"));
    cr_assert_eq(count_of(csv, ",cpu,cpu,,cpu,hot,pass,"), 1, "%s", csv);
    cr_assert_eq(count_of(csv, ",block,cpu,,cpu,hot,invalid,\"" VREFUSAL), 1, "%s", csv);
    free(csv);
    kc_free(&r);
}

Test(refuse, the_dry_run_and_check_name_the_variant_refused)
{
    kc_write("s.ini", "[s]\nplugin = split\nthreads = 64, 129\n");
    kc_result r = kc_run("run s.ini --dry-run " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert_eq(count_of(r.out, "invalid for block: " VREFUSAL), 1, "%s", r.out);
    cr_assert_eq(count_of(r.out, "invalid for cpu"), 0, "%s", r.out);
    kc_assert_has(r.out, "1 variant refused at its point by plan() (each becomes an `invalid` "
                         "row; the point's other variants run)");
    kc_free(&r);
    r = kc_run("check split " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "variants refused alone at their point through refuse() (each is "
                         "invalid in a run; the first at threads=");
    /* setup() was never asked for block where plan() refused it. */
    kc_assert_has(r.out, "ok   setup-teardown");
    kc_free(&r);
}

Test(refuse, tune_records_a_variant_refused_alone_as_invalid)
{
    kc_write("t.ini", "[t]\nplugin = split\ntune = exhaustive\nthreads = 64, 129\n"
                      "warmup = 0\nruns = 2\n");
    kc_result r = kc_run("tune t.ini -o out -q " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    char *csv = kc_slurp(kc_path("out/tried.csv"));
    cr_assert_eq(count_of(csv, "threads=129, variant=block\",0,invalid,\"" VREFUSAL), 1, "%s",
                 csv);
    cr_assert_eq(count_of(csv, ",pass,"), 2, "%s", csv);
    free(csv);
    kc_free(&r);
}

Test(refuse, an_experiment_whose_every_variant_is_refused_is_a_mistake)
{
    kc_write("s.ini", "[s]\nplugin = split\nthreads = 1000\n");
    kc_result r = kc_run("run s.ini " PP);
    cr_assert_eq(r.code, 2, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.err, "s.ini:1: experiment [s] point n=64, threads=1000, quirk=0: variant "
                         "'cpu': cpu cannot split its work into 1000 threads.");
    kc_free(&r);
}

Test(refuse, a_refusal_without_a_sentence_or_of_no_variant_is_a_plugin_error)
{
    kc_write("s.ini", "[s]\nplugin = split_bad\nquirk = 1, 2\nwarmup = 0\nruns = 1\n");
    kc_result r = kc_run("run s.ini " PP);
    cr_assert_eq(r.code, 1, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "error: plan() refused variant 'block' without saying why");
    kc_assert_has(r.out, "error: plan() refused variant number 7, which plugin 'split_bad' does "
                         "not declare (it has 2 variants, numbered from 0)");
    kc_assert_has(r.out, "summary: 0 pass, 0 FAIL, 4 error");
    kc_free(&r);
    r = kc_run("check split_bad " PP);
    cr_assert_eq(r.code, 1, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "FAIL plan-errors: at quirk=1");
    kc_free(&r);
}

/* ---- multiple_of (kb_param, ABI 2.3) ------------------------------------- */

Test(refuse, a_value_that_is_not_a_multiple_is_refused_with_the_nearest)
{
    kc_write("s.ini", "[s]\nplugin = split\nn = 10\n");
    kc_result r = kc_run("run s.ini " PP);
    cr_assert_eq(r.code, 2, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.err, "kbench: s.ini:3: key 'n' in [s]: 10 is not a multiple of 4 (the "
                         "nearest are 8 and 12).");
    kc_free(&r);
    /* Each value of a sweep is checked. */
    kc_write("s.ini", "[s]\nplugin = split\nn = 4..20:+3\n");
    r = kc_run("run s.ini " PP);
    cr_assert_eq(r.code, 2, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.err, "7 is not a multiple of 4 (the nearest are 4 and 8)");
    kc_free(&r);
    kc_write("s.ini", "[s]\nplugin = split\nn = 4..20:+4\nwarmup = 0\nruns = 1\n");
    r = kc_run("run s.ini -q " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_free(&r);
}

Test(refuse, describe_shows_multiple_of)
{
    kc_result r = kc_run("describe split " PP);
    cr_assert_eq(r.code, 0, "%s", r.err);
    kc_assert_has(r.out, "[4, 2^20], multiple of 4");
    kc_free(&r);
}
