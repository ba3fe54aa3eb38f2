/*
 * test_integrity.c -- kbench's integrity checks (docs/integrity.md) against
 * the CPU cheats of tests/fixtures/integrity/cheats.c, through the kbench
 * binary as a user runs it: each cheat FAILs with its own reason under the
 * default (strict), the honest variant passes with integrity "ok", and the
 * run's exit code says so; warn keeps the rows (exit 0) with the flags as
 * their reasons; off checks nothing.  Also the `integrity` key itself and
 * the physical limit's arithmetic.
 */
#include "kbench_cmd.h"

#include "physical.h"
#include "results_read.h"

#define CHEATS_DIR KBENCH_FIXTURE_DIR "/integrity"

/* n = 65536 (1 MiB in, 1 MiB out) keeps every run well above the clock's
   resolution and the whole file at about a second. */
static const char *const ini_body = "[cheats]\n"
                                    "plugin = cheats\n"
                                    "variants = all\n"
                                    "n = 65536\n"
                                    "warmup = 1\n"
                                    "runs = 5\n"
                                    "%s"
                                    "\n"
                                    "[inflated]\n"
                                    "plugin = cheats_inflated\n"
                                    "n = 65536\n"
                                    "warmup = 1\n"
                                    "runs = 5\n"
                                    "%s";

typedef struct ran {
    kc_result res;
    kbc_record *recs;
    size_t n;
} ran;

/* Runs both experiments with `line` added to each ("" for the default). */
static ran run_cheats(const char *line)
{
    char ini[1024];
    snprintf(ini, sizeof ini, ini_body, line, line);
    kc_tmp();
    kc_write("cheats.ini", ini);
    ran r = {0};
    r.res = kc_run("run cheats.ini -o out -q --plugin-path " CHEATS_DIR);
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_results_read(kc_path("out/results.json"), &r.recs, &r.n, &d), 0,
                 "%s\n%s", d.msg, r.res.err);
    return r;
}

static void ran_free(ran *r)
{
    kbc_records_free(r->recs, r->n);
    kc_free(&r->res);
    kc_tmp_remove();
}

static const kbc_record *row(const ran *r, const char *variant)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->recs[i].variant, variant) == 0)
            return &r->recs[i];
    cr_assert_fail("no row for %s", variant);
    return NULL;
}

#define assert_flagged(r, variant, status, words)                                             \
    do {                                                                                       \
        const kbc_record *x_ = row(r, variant);                                                \
        cr_assert_eq(x_->outcome, status, "%s: %s", variant, x_->reason);                     \
        kc_assert_has(x_->reason, words);                                                      \
        cr_assert_eq(strncmp(x_->integrity, "flagged: ", 9), 0, "%s: %s", variant,             \
                     x_->integrity);                                                           \
        kc_assert_has(x_->integrity, words);                                                   \
    } while (0)

Test(integrity, strict_fails_each_cheat_with_its_reason_and_passes_the_honest)
{
    ran r = run_cheats("");
    cr_assert_eq(r.res.code, 1, "a FAIL row fails the run:\n%s", r.res.out);
    const kbc_record *h = row(&r, "honest");
    cr_assert_eq(h->outcome, KBC_PASS, "%s", h->reason);
    cr_assert_str_eq(h->reason, "");
    cr_assert_str_eq(h->integrity, "ok");
    const char *post = "the output after the timed runs is wrong (the checked run was right): "
                       "the timed runs did not do all the work";
    assert_flagged(&r, "memo", KBC_FAIL, post);
    assert_flagged(&r, "half", KBC_FAIL, post);
    assert_flagged(&r, "thread", KBC_FAIL, "run() left 1 thread running after it returned");
    const char *unpoisoned = "the output verifies after prepare() and download() with no run "
                             "between them";
    assert_flagged(&r, "lazy", KBC_FAIL, unpoisoned);
    assert_flagged(&r, "download", KBC_FAIL, "download() takes");
    assert_flagged(&r, "inflated", KBC_FAIL, "suspect: ");
    /* The checked run was right in every row: the check says so still. */
    cr_assert_eq(row(&r, "memo")->check.passed, 1);
    /* The table tells the reason too. */
    kc_assert_has(r.res.out, "FAIL: the output after the timed runs is wrong");
    ran_free(&r);
}

Test(integrity, warn_keeps_the_rows_and_says_why)
{
    ran r = run_cheats("integrity = warn\n");
    cr_assert_eq(r.res.code, 0, "warn keeps the exit code:\n%s", r.res.out);
    cr_assert_str_eq(row(&r, "honest")->integrity, "ok");
    const char *kept = "flagged (integrity = warn keeps the row): ";
    cr_assert_eq(strncmp(row(&r, "memo")->reason, kept, strlen(kept)), 0, "%s",
                 row(&r, "memo")->reason);
    assert_flagged(&r, "memo", KBC_PASS, "did not do all the work");
    assert_flagged(&r, "thread", KBC_PASS, "left 1 thread running");
    assert_flagged(&r, "inflated", KBC_PASS, "suspect: ");
    kc_assert_has(r.res.out, "pass: flagged (integrity = warn keeps the row)");
    /* The CSV carries the integrity column. */
    char *csv = kc_slurp(kc_path("out/results.csv"));
    kc_assert_has(csv, ",integrity,");
    kc_assert_has(csv, ",ok,");
    free(csv);
    ran_free(&r);
}

Test(integrity, off_checks_nothing)
{
    ran r = run_cheats("integrity = off\n");
    cr_assert_eq(r.res.code, 0, "%s", r.res.out);
    for (size_t i = 0; i < r.n; i++) {
        cr_assert_eq(r.recs[i].outcome, KBC_PASS, "%s: %s", r.recs[i].variant, r.recs[i].reason);
        cr_assert_str_eq(r.recs[i].integrity, "off");
    }
    ran_free(&r);
}

/* compare: no verdict on a flagged row, and a flagged row in the new run
   fails it, as a crashed one does. */
Test(integrity, compare_gives_a_flagged_row_no_verdict)
{
    kc_tmp();
    char ini[1024];
    snprintf(ini, sizeof ini, ini_body, "", "");
    kc_write("base.ini", ini);
    kc_result a = kc_run("run base.ini -o base -q --experiment cheats --set variants=honest,memo "
                         "--set integrity=off --plugin-path " CHEATS_DIR);
    cr_assert_eq(a.code, 0, "%s", a.err);
    kc_result b = kc_run("run base.ini -o new -q --experiment cheats --set variants=honest,memo "
                         "--set integrity=warn --plugin-path " CHEATS_DIR);
    cr_assert_eq(b.code, 0, "%s", b.err);
    kc_result c = kc_run("compare base/results.json new/results.json");
    cr_assert_eq(c.code, 1, "a flagged row in new fails the compare:\n%s%s", c.out, c.err);
    kc_assert_has(c.out, "untested: flagged by the integrity checks in new");
    kc_free(&a);
    kc_free(&b);
    kc_free(&c);
    kc_tmp_remove();
}

/* The history keeps a flagged row (kept by warn) out of every series. */
Test(integrity, the_history_gives_a_flagged_row_no_point)
{
    kc_tmp();
    char ini[1024];
    snprintf(ini, sizeof ini, ini_body, "", "");
    kc_write("c.ini", ini);
    kc_result a = kc_run("run c.ini -o out -q --experiment cheats --set variants=honest,memo "
                         "--set integrity=warn --record --commit abc123 --history h.db "
                         "--plugin-path " CHEATS_DIR);
    cr_assert_eq(a.code, 0, "%s", a.err);
    kc_result b = kc_run("history list --history h.db");
    cr_assert_eq(b.code, 0, "%s", b.err);
    kc_assert_has(b.out, "      1  cheats/cheats/n=65536/honest");
    kc_assert_has(b.out, "      0  cheats/cheats/n=65536/memo");
    kc_free(&a);
    kc_free(&b);
    kc_tmp_remove();
}

Test(integrity, the_key_takes_strict_warn_or_off)
{
    kc_tmp();
    kc_write("bad.ini", "[a]\nplugin = cheats\nintegrity = lenient\n");
    kc_result res = kc_run("run bad.ini --dry-run --plugin-path " CHEATS_DIR);
    cr_assert_eq(res.code, 2, "%s", res.err);
    kc_assert_has(res.err, "bad.ini:3");
    kc_assert_has(res.err, "integrity");
    kc_free(&res);
    kc_tmp_remove();
}

/* ---- the physical limit's arithmetic ------------------------------------- */

Test(integrity, a_working_set_in_the_cache_is_bound_by_the_cache)
{
    /* 1 MiB in a 50 MiB cache: the cache's rate alone. */
    cr_assert_float_eq(kbc_limit_behind_cache(8000, 3000, 1 << 20, 50u << 20), 8000, 1e-9);
    /* Twice the cache: half of it comes from the memory, so twice its rate. */
    cr_assert_float_eq(kbc_limit_behind_cache(8000, 3000, 100u << 20, 50u << 20), 6000, 1e-9);
    /* Far beyond the cache: the memory's rate, a little above. */
    double far = kbc_limit_behind_cache(8000, 3000, 50ull << 30, 50u << 20);
    cr_assert_gt(far, 3000);
    cr_assert_lt(far, 3003.1);
    /* No cache rate known: the memory bound alone; no memory rate: the cache's. */
    cr_assert_float_eq(kbc_limit_behind_cache(0, 3000, 100u << 20, 50u << 20), 6000, 1e-9);
    cr_assert_float_eq(kbc_limit_behind_cache(8000, 0, 100u << 20, 50u << 20), 8000, 1e-9);
}

Test(integrity, the_gpu_bounds_follow_the_working_set)
{
    /* An H100 as kbench sees it: 2619 MHz memory clock, 5120-bit bus, 50 MiB
       L2, 132 SMs at 1980 MHz, an L2 read rate of 7000 GB/s. */
    kbc_machine m = {.has_gpu = 1, .cc_major = 9, .sm_count = 132, .clock_khz = 1980000,
                     .mem_clock_khz = 2619000, .l2_bytes = 50u << 20};
    kbc_limits l = {0};
    kbc_limits_gpu(&l, &m, 5120, 0, 7000);
    cr_assert_float_eq(l.dram_gbps, 3352.32, 1e-6);
    char basis[400];
    /* 256 MiB read and written, hot: the memory's bound, a little above
       (the L2 may hold a fifth of it). */
    double big = kbc_limit_gbps(&l, 1, 256u << 20, 256u << 20, 0, basis, sizeof basis);
    cr_assert_gt(big, 3352.32 * 1.10);
    cr_assert_lt(big, 3352.32 * 1.10 * 1.11);
    kc_assert_has(basis, "its memory can move at most");
    /* The cheat: 512 MiB in 1.25 us is some 430 TB/s. */
    cr_assert_gt((double)(512u << 20) / 1.25e-6 / 1e9, 100 * big);
    /* Cold: the memory's bound whatever the size. */
    double cold = kbc_limit_gbps(&l, 1, 2u << 20, 2u << 20, 1, basis, sizeof basis);
    cr_assert_float_eq(cold, 3352.32 * 1.10, 1e-6);
    /* 4 MiB hot, read only: twice the L2 read rate. */
    double small = kbc_limit_gbps(&l, 1, 4u << 20, 0, 0, basis, sizeof basis);
    cr_assert_float_eq(small, 14000, 1e-9);
    kc_assert_has(basis, "its L2 serves at most");
    /* Reads and writes together: each at that rate. */
    double both = kbc_limit_gbps(&l, 1, 4u << 20, 4u << 20, 0, basis, sizeof basis);
    cr_assert_float_eq(both, 28000, 1e-9);
    /* BF16 on 132 SMs at 1.98 GHz: 4096 a cycle, +10%; FP32 at TF32's rate. */
    double bf16 = kbc_limit_gflops(&l, KB_PEAK_BF16, basis, sizeof basis);
    cr_assert_float_eq(bf16, 4096.0 * 132 * 1.98 * 1.10, 1e-6);
    cr_assert_float_eq(kbc_limit_gflops(&l, KB_PEAK_FP32, basis, sizeof basis), bf16 / 2, 1e-6);
}

Test(integrity, the_cpu_bound_covers_every_cpu)
{
    kbc_limits l = {.cpus = 4, .cpu_ghz = 3.0, .cache_bytes = 64u << 20};
    char basis[400];
    double b = kbc_limit_gbps(&l, 0, 1 << 20, 1 << 20, 0, basis, sizeof basis);
    cr_assert_float_eq(b, 4 * 256 * 3.0, 1e-9);
    kc_assert_has(basis, "its 4 CPUs move at most");
}
