/*
 * test_check.c -- `kbench check` on fixture plugins that each break one rule
 * (tests/fixtures/check/checkfix.c, built by tests/check.cmake into
 * KBENCH_FIXTURE_DIR/check), and its usage errors.
 *
 * Every broken fixture must fail exactly the check named after its defect
 * and no other, so that a checker that fails everything (or nothing) is
 * caught as surely as one that names the wrong check.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "loader.h"

#define FIX KBENCH_FIXTURE_DIR "/check"
/* The crash plugin (tests/fixtures/crash/crash.c): variants that crash,
   exit or hang in run(). */
#define CRASH_FIX KBENCH_FIXTURE_DIR "/crash"

typedef struct result {
    int code;
    char *out, *err;
} result;

static result run_check_in(const char *dir, const char *plugin, const char *variants)
{
    kbc_registry r;
    kbc_diag d = {{0}};
    kbc_registry_init(&r);
    cr_assert_eq(kbc_registry_add_path(&r, dir, &d), 0, "the fixture folder: %s", d.msg);
    cr_assert_eq(r.n_refused, 0, "a fixture was refused: %s", r.n_refused ? r.refused[0] : "");
    result res = {0};
    size_t no, ne;
    FILE *out = open_memstream(&res.out, &no);
    FILE *err = open_memstream(&res.err, &ne);
    cr_assert(out && err);
    res.code = kbc_cmd_check(&r, plugin, variants, out, err);
    fclose(out);
    fclose(err);
    kbc_registry_free(&r);
    return res;
}

static result run_check(const char *plugin, const char *variants)
{
    return run_check_in(FIX, plugin, variants);
}

/* Lines of text that start with prefix. */
static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *s = text; s && *s;) {
        if (strncmp(s, prefix, len) == 0)
            n++;
        const char *nl = strchr(s, '\n');
        s = nl ? nl + 1 : NULL;
    }
    return n;
}

static int has_line(const char *text, const char *prefix)
{
    if (strncmp(text, prefix, strlen(prefix)) == 0)
        return 1;
    char *pat = NULL;
    cr_assert_geq(asprintf(&pat, "\n%s", prefix), 0);
    int found = strstr(text, pat) != NULL;
    free(pat);
    return found;
}

/* The broken fixture fails with exit 1, with exactly one FAIL line, which
   names `check`. */
static void expect_one_failure(const char *plugin, const char *check)
{
    result r = run_check(plugin, NULL);
    cr_assert_eq(r.code, 1, "%s: exit %d, output:\n%s%s", plugin, r.code, r.out, r.err);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "FAIL %s", check);
    cr_assert(has_line(r.out, prefix), "%s: no line '%s...' in:\n%s", plugin, prefix, r.out);
    cr_assert_eq(count_lines(r.out, "FAIL "), 1, "%s: more than one check failed:\n%s", plugin,
                 r.out);
    free(r.out);
    free(r.err);
}

Test(check, good_fixture_passes_with_exit_0)
{
    result r = run_check("checkfix_good", NULL);
    cr_assert_eq(r.code, 0, "exit %d, output:\n%s%s", r.code, r.out, r.err);
    cr_assert_eq(count_lines(r.out, "FAIL "), 0, "%s", r.out);
    free(r.out);
    free(r.err);
}

Test(check, good_fixture_runs_every_check)
{
    result r = run_check("checkfix_good", NULL);
    static const char *const want[] = {
        "ok   descriptor",          "ok   defaults",           "ok   plan-pure",
        "ok   plan-errors",         "ok   setup-teardown",     "ok   verify-can-fail plain",
        "ok   correct-run plain",   "ok   prepare-poisons plain", "ok   verify-consistent plain",
        "ok   verify-can-fail unrolled", "ok   correct-run unrolled",
        "ok   prepare-poisons unrolled", "ok   verify-consistent unrolled",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_assert(has_line(r.out, want[i]), "no line '%s' in:\n%s", want[i], r.out);
    /* On this CPU-only fixture the GPU checks are either made or skipped. */
    cr_assert(has_line(r.out, "ok   device-leak") || has_line(r.out, "skip device-leak"), "%s",
              r.out);
    cr_assert(has_line(r.out, "summary: "), "%s", r.out);
    free(r.out);
    free(r.err);
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
/* Under AddressSanitizer the heap counter is blind, and kbench check says
   so with a skip line; these two tests then have nothing to test. */
static void skip_without_heap_counter(void)
{
    result r = run_check("checkfix_good", NULL);
    int blind = has_line(r.out, "skip plan-alloc");
    free(r.out);
    free(r.err);
    if (blind)
        cr_skip_test("kbench check cannot count the heap in this build");
}

Test(check, good_plan_allocates_nothing)
{
    skip_without_heap_counter();
    result r = run_check("checkfix_good", NULL);
    cr_assert(has_line(r.out, "ok   plan-alloc"), "%s", r.out);
    free(r.out);
    free(r.err);
}

Test(check, plan_that_leaks_fails_plan_alloc)
{
    skip_without_heap_counter();
    expect_one_failure("checkfix_plan_leak", "plan-alloc");
}
#endif

Test(check, points_plan_refuses_are_skipped_not_failed)
{
    /* plan() refuses n * k > 2^20: those points are counted, not failed. */
    result r = run_check("checkfix_good", NULL);
    unsigned refused = 0, total = 0;
    const char *l = strstr(r.out, "ok   plan-errors (");
    cr_assert_not_null(l, "%s", r.out);
    cr_assert_eq(sscanf(l, "ok   plan-errors (%u of %u", &refused, &total), 2, "%s", l);
    cr_assert_gt(refused, 0, "no point was refused: the points do not reach the maximum");
    cr_assert_lt(refused, total);
    free(r.out);
    free(r.err);
}

Test(check, verify_that_cannot_fail_fails_verify_can_fail)
{
    expect_one_failure("checkfix_verify_always", "verify-can-fail plain");
}

Test(check, prepare_that_does_not_poison_fails_prepare_poisons)
{
    expect_one_failure("checkfix_no_poison", "prepare-poisons plain");
}

Test(check, impure_plan_fails_plan_pure)
{
    expect_one_failure("checkfix_impure_plan", "plan-pure");
}

Test(check, contradicting_verify_fails_verify_consistent)
{
    expect_one_failure("checkfix_contradict", "verify-consistent plain");
}

Test(check, wrong_run_fails_correct_run)
{
    expect_one_failure("checkfix_wrong_run", "correct-run plain");
}

Test(check, einval_without_a_sentence_fails_plan_errors)
{
    expect_one_failure("checkfix_silent_einval", "plan-errors");
}

/* plan() crashes at the points with mode = c: plan-errors fails with the
   signal, and the other checks are still made on the points planned. */
Test(check, plan_that_crashes_fails_plan_errors_and_the_check_goes_on, .timeout = 60)
{
    expect_one_failure("checkfix_plan_crash", "plan-errors");
    result r = run_check("checkfix_plan_crash", NULL);
    cr_assert_not_null(strstr(r.out, "SIGSEGV"), "%s", r.out);
    cr_assert(has_line(r.out, "ok   correct-run plain"), "%s", r.out);
    cr_assert(has_line(r.out, "ok   setup-teardown"), "%s", r.out);
    free(r.out);
    free(r.err);
}

/* A variant that crashes fails the check of the call it crashed in, with
   the signal; the variants before and after it are checked as usual. */
Test(check, a_crashing_variant_fails_one_check_and_the_others_are_made, .timeout = 60)
{
    result r = run_check_in(CRASH_FIX, "crash", "good,segv,good2");
    cr_assert_eq(r.code, 1, "exit %d:\n%s%s", r.code, r.out, r.err);
    cr_assert_eq(count_lines(r.out, "FAIL "), 1, "%s", r.out);
    cr_assert(has_line(r.out, "FAIL correct-run segv: "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "run() crashed with signal SIGSEGV"), "%s", r.out);
    cr_assert(has_line(r.out, "ok   correct-run good "), "%s", r.out);
    cr_assert(has_line(r.out, "ok   correct-run good2 "), "%s", r.out);
    cr_assert(has_line(r.out, "summary: "), "%s", r.out);
    free(r.out);
    free(r.err);
}

/* A run() that never returns is stopped by check's watchdog
   ($KBENCH_CHECK_TIMEOUT seconds for one plugin call). */
Test(check, a_hanging_variant_times_out_with_a_sentence, .timeout = 60)
{
    cr_assert_eq(setenv("KBENCH_CHECK_TIMEOUT", "1", 1), 0);
    result r = run_check_in(CRASH_FIX, "crash", "good,hang");
    cr_assert_eq(r.code, 1, "exit %d:\n%s%s", r.code, r.out, r.err);
    cr_assert(has_line(r.out, "FAIL correct-run hang: "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "run() did not return within 1 s"), "%s", r.out);
    cr_assert(has_line(r.out, "ok   correct-run good "), "%s", r.out);
    free(r.out);
    free(r.err);
}

Test(check, a_watchdog_that_is_not_a_number_of_seconds_is_refused)
{
    cr_assert_eq(setenv("KBENCH_CHECK_TIMEOUT", "soon", 1), 0);
    result r = run_check_in(CRASH_FIX, "crash", "good");
    cr_assert_eq(r.code, 2, "exit %d:\n%s%s", r.code, r.out, r.err);
    cr_assert_not_null(strstr(r.err, "KBENCH_CHECK_TIMEOUT"), "%s", r.err);
    cr_assert_str_eq(r.out, "", "nothing is checked: %s", r.out);
    free(r.out);
    free(r.err);
}

Test(check, variants_option_selects_variants)
{
    result r = run_check("checkfix_good", "unrolled");
    cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
    cr_assert(has_line(r.out, "ok   correct-run unrolled"), "%s", r.out);
    cr_assert_null(strstr(r.out, " plain"), "plain was checked though not selected:\n%s", r.out);
    free(r.out);
    free(r.err);
}

Test(check, unknown_plugin_exits_2_with_a_sentence)
{
    result r = run_check("checkfix_nosuch", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "no plugin named 'checkfix_nosuch'"), "%s", r.err);
    cr_assert_str_eq(r.out, "", "nothing is checked: %s", r.out);
    free(r.out);
    free(r.err);
}

Test(check, unknown_variant_exits_2_with_a_sentence)
{
    result r = run_check("checkfix_good", "plain,unrolld");
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "has no variant 'unrolld'; did you mean 'unrolled'?"), "%s",
                       r.err);
    cr_assert_str_eq(r.out, "", "nothing is checked: %s", r.out);
    free(r.out);
    free(r.err);
}

Test(check, unwritable_output_exits_3)
{
    FILE *full = fopen("/dev/full", "w");
    cr_assert_not_null(full, "no /dev/full");
    kbc_registry r;
    kbc_diag d = {{0}};
    kbc_registry_init(&r);
    cr_assert_eq(kbc_registry_add_path(&r, FIX, &d), 0, "%s", d.msg);
    char *err = NULL;
    size_t ne;
    FILE *e = open_memstream(&err, &ne);
    int code = kbc_cmd_check(&r, "checkfix_good", NULL, full, e);
    fclose(e);
    fclose(full);
    cr_assert_eq(code, 3, "exit %d: %s", code, err);
    free(err);
    kbc_registry_free(&r);
}

/* The command line: main.c hands `check` and --variants through.  The
   output is stdout and stderr together, or stdout alone with
   stdout_only. */
static int run_kbench_out(const char *args, char **text, int stdout_only)
{
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "KBENCH_NO_DEFAULT_PLUGINS=1 timeout -s KILL 50 %s/kbench %s %s",
                           KBENCH_BINARY_DIR, args, stdout_only ? "2>/dev/null" : "2>&1"),
                  0);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t cap = 1 << 16, n = 0;
    *text = calloc(cap, 1);
    size_t got;
    while ((got = fread(*text + n, 1, cap - 1 - n, p)) > 0)
        n += got;
    int st = pclose(p);
    free(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_kbench(const char *args, char **text)
{
    return run_kbench_out(args, text, 0);
}

/* Standard output into a pipe (fully buffered but for check's own
   setting): the lines printed before a crash are not lost with it. */
Test(check, the_lines_before_a_crash_reach_a_pipe, .timeout = 60)
{
    char *t = NULL;
    int code = run_kbench_out("check crash --variants good,segv --plugin-path " CRASH_FIX, &t, 1);
    cr_assert_eq(code, 1, "exit %d:\n%s", code, t);
    cr_assert(has_line(t, "kbench check crash "), "%s", t);
    cr_assert(has_line(t, "ok   descriptor"), "%s", t);
    cr_assert(has_line(t, "summary: "), "%s", t);
    free(t);
}

/* A plugin that calls exit() in run(): the status is named, and the check
   ends with its own exit code. */
Test(check, a_variant_that_exits_fails_with_its_status, .timeout = 60)
{
    char *t = NULL;
    int code = run_kbench_out("check crash --variants good,exit3 --plugin-path " CRASH_FIX, &t, 1);
    cr_assert_eq(code, 1, "exit %d:\n%s", code, t);
    cr_assert(has_line(t, "FAIL correct-run exit3: "), "%s", t);
    cr_assert_not_null(strstr(t, "run() ended the process with exit status 3"), "%s", t);
    free(t);
}

Test(check, command_line_exit_codes)
{
    char *t = NULL;
    cr_assert_eq(run_kbench("check --plugin-path " FIX " checkfix_good --variants plain", &t), 0,
                 "%s", t);
    cr_assert(has_line(t, "ok   correct-run plain"), "%s", t);
    free(t);
    cr_assert_eq(run_kbench("check checkfix_wrong_run --plugin-path " FIX, &t), 1, "%s", t);
    free(t);
    cr_assert_eq(run_kbench("check --plugin-path " FIX " checkfix_nosuch", &t), 2, "%s", t);
    free(t);
    cr_assert_eq(run_kbench("list --variants plain --plugin-path " FIX, &t), 2, "%s", t);
    cr_assert_not_null(strstr(t, "--variants applies only to kbench check"), "%s", t);
    free(t);
}
