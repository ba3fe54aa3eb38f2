/*
 * test_sanitize.c -- kbench run --sanitize TOOL (docs/plugins.md,
 * "Sanitizers"), without a GPU or compute-sanitizer: a fake one on PATH
 * records each command line the supervisor starts a worker with (the
 * tool, --target-processes all, the worker after the options, one variant
 * of one point per worker) and reports two errors for the variant the
 * test names.  That row becomes an error carrying the report, the others
 * pass, and the run exits 1; a clean run exits 0.  With no
 * compute-sanitizer to be found, or a tool it does not have, one sentence
 * and exit 2.
 */
#define _GNU_SOURCE
#include <sys/stat.h>

#include "kbench_cmd.h"

#define PP "--plugin-path " KBENCH_FIXTURE_DIR "/refuse"
#define SPLIT_INI "[s]\nplugin = split\nn = 64, 128\nwarmup = 0\nruns = 2\n"

TestSuite(sanitize, .init = kc_tmp, .fini = kc_tmp_remove);

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* The fake first on PATH, its log in the test's folder, and errors for
   the variant whose mask is bad ("" for none). */
static void fake_on_path(const char *bad)
{
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s:%s", KBENCH_FAKE_SANITIZER_DIR, getenv("PATH")), 0);
    setenv("PATH", path, 1);
    free(path);
    setenv("FAKE_SANITIZER_LOG", kc_path("sanitizer.log"), 1);
    setenv("FAKE_SANITIZER_BAD", bad, 1);
}

Test(sanitize, each_worker_runs_one_variant_under_the_tool)
{
    fake_on_path("");
    kc_write("s.ini", SPLIT_INI);
    kc_result r = kc_run("run s.ini --sanitize racecheck -q " PP);
    cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "summary: 4 pass, 0 FAIL, 0 error");
    char *log = kc_slurp(kc_path("sanitizer.log"));
    /* Two points of two variants: four workers, each under the tool, all
       processes checked, kbench's worker after the options. */
    cr_assert_eq(count_of(log, "argv:"), 4, "%s", log);
    cr_assert_eq(count_of(log, "/compute-sanitizer --tool racecheck --target-processes all "
                               "--error-exitcode 86 --print-limit 10 " KBENCH_BINARY_DIR
                               "/kbench __worker s.ini --plugin-path"),
                 4, "%s", log);
    cr_assert_eq(count_of(log, "--sanitized racecheck"), 4, "%s", log);
    free(log);
    /* A clean summary is not shown. */
    cr_assert_null(strstr(r.err, "ERROR SUMMARY"), "%s", r.err);
    kc_free(&r);
}

Test(sanitize, the_variant_with_errors_is_an_error_with_the_report)
{
    fake_on_path("2"); /* block, variant 1 */
    kc_write("s.ini", SPLIT_INI);
    kc_result r = kc_run("run s.ini --sanitize memcheck -o out " PP);
    cr_assert_eq(r.code, 1, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.out, "summary: 2 pass, 0 FAIL, 2 error");
    kc_assert_has(r.out, "error: compute-sanitizer memcheck found 2 errors in this variant's "
                         "worker (ERROR SUMMARY: 2 errors)");
    kc_assert_has(r.out, "sanitizer: Invalid __global__ write of size 4 bytes / at "
                         "fake_kernel(float *)+0x70 / by thread (3,0,0) in block (0,0,0)");
    /* The whole report once on stderr, naming the row's worker. */
    kc_assert_has(r.err, "kbench: compute-sanitizer memcheck found 2 errors in the worker of "
                         "[s] point 1, variant block:");
    /* The journal and results.json keep the verdict. */
    char *json = kc_slurp(kc_path("out/results.json"));
    cr_assert_eq(count_of(json, "\"sanitizer\": \"Invalid __global__ write"), 2, "%s", json);
    free(json);
    char *csv = kc_slurp(kc_path("out/results.csv"));
    cr_assert_eq(count_of(csv, ",cpu,cpu,,cpu,hot,pass,"), 2, "%s", csv);
    free(csv);
    kc_free(&r);
}

Test(sanitize, no_compute_sanitizer_is_one_sentence_and_exit_2)
{
    /* Where the toolkit kbench was built with has one (a GPU machine),
       there is nothing to miss. */
    struct stat st;
    if (stat(KBENCH_CUDA_BIN_DIR "/compute-sanitizer", &st) == 0)
        cr_skip_test("the CUDA toolkit here has compute-sanitizer");
    setenv("PATH", "/usr/bin:/bin", 1);
    kc_write("s.ini", SPLIT_INI);
    kc_result r = kc_run("run s.ini --sanitize memcheck -o out " PP);
    cr_assert_eq(r.code, 2, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    kc_assert_has(r.err, "kbench: --sanitize needs compute-sanitizer, which comes with the CUDA "
                         "toolkit, and it is neither on PATH nor in " KBENCH_CUDA_BIN_DIR);
    cr_assert_eq(count_of(r.err, "\n"), 1, "one sentence: %s", r.err);
    /* Nothing ran, nothing was written. */
    cr_assert_eq(access(kc_path("out"), F_OK), -1);
    kc_free(&r);
    /* A dry run needs none. */
    r = kc_run("run s.ini --sanitize memcheck --dry-run " PP);
    cr_assert_eq(r.code, 0, "%s", r.err);
    kc_free(&r);
}

Test(sanitize, a_tool_it_does_not_have_and_sanitize_on_crash_are_usage_errors)
{
    kc_write("s.ini", SPLIT_INI);
    kc_result r = kc_run("run s.ini --sanitize leakcheck " PP);
    cr_assert_eq(r.code, 2, "%s", r.err);
    kc_assert_has(r.err, "option --sanitize wants one of compute-sanitizer's tools, memcheck, "
                         "racecheck, synccheck or initcheck, not 'leakcheck'");
    kc_free(&r);
    r = kc_run("run s.ini --sanitize memcheck --sanitize-on-crash " PP);
    cr_assert_eq(r.code, 2, "%s", r.err);
    kc_assert_has(r.err, "options --sanitize and --sanitize-on-crash go apart");
    kc_free(&r);
    r = kc_run("check split --sanitize memcheck " PP);
    cr_assert_eq(r.code, 2, "%s", r.err);
    kc_assert_has(r.err, "option --sanitize applies only to kbench run");
    kc_free(&r);
}
