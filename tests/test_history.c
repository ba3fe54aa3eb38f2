/*
 * test_history.c -- results over time (docs/history.md).
 *
 *   stepfit   the detector on seeded synthetic series: a 5% step in 2%
 *             noise found at its commit, pure 2% noise giving no step
 *   db        the database through its API: imports, identity, two
 *             processes adding at once, the upgrade of an older layout,
 *             files that are not a usable history
 *   cmd       the commands through the binary: exit codes and output
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commit.h"
#include "history.h"
#include "stepfit.h"
#include "util.h"

#define KBENCH KBENCH_BINARY_DIR "/kbench"
#define TOY_DIR KBENCH_FIXTURE_DIR "/runner"

/* ---- seeded noise ---- */

static uint64_t rng_state;

static double uniform01(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}

/* A standard normal draw (Box-Muller). */
static double gauss(void)
{
    double u = uniform01(), v = uniform01();
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* n medians around 1 ms with relative noise `noise`, times 1 + step from
   point `at` on; each point's interval as its run would report it. */
static void synth(uint64_t seed, size_t n, double noise, size_t at, double step,
                  kbc_hist_point *p)
{
    rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (size_t i = 0; i < n; i++) {
        memset(&p[i], 0, sizeof p[i]);
        snprintf(p[i].commit, sizeof p[i].commit, "c%03zu", i);
        p[i].commit_time = 1000 + (int64_t)i;
        p[i].median = 1e-3 * (1 + noise * gauss()) * (i >= at ? 1 + step : 1);
        /* A run's own interval is narrower than the scatter between runs
           (the usual case on a GPU): half of it here. */
        p[i].lo = p[i].median * (1 - 0.5 * noise * 1.96);
        p[i].hi = p[i].median * (1 + 0.5 * noise * 1.96);
    }
}

#define SERIES 40

Test(stepfit, a_5pct_step_in_2pct_noise_is_found_at_its_commit)
{
    kbc_hist_point p[SERIES];
    synth(1, SERIES, 0.02, 20, 0.05, p);
    kbc_hist_step *s;
    size_t n = kbc_history_steps(p, SERIES, &s);
    cr_assert_eq(n, 1, "%zu steps", n);
    cr_assert_eq(s[0].at, 20);
    cr_assert_str_eq(p[s[0].at].commit, "c020");
    cr_assert_gt(s[0].change, 0.03, "change %g", s[0].change);
    cr_assert_lt(s[0].change, 0.07, "change %g", s[0].change);
    free(s);
}

/* Over 100 seeded series the step is found in every one, at its commit
   or next to it; where exactly is a matter of the two points either side
   (a 5% step is 2.5 standard deviations of 2% noise, so a neighbour looks
   like the other level about one time in ten). */
Test(stepfit, a_5pct_step_is_found_near_its_commit_in_100_series)
{
    kbc_hist_point p[SERIES];
    int exact = 0, near = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        synth(seed, SERIES, 0.02, 20, 0.05, p);
        kbc_hist_step *s;
        size_t n = kbc_history_steps(p, SERIES, &s);
        for (size_t k = 0; k < n; k++) {
            if (s[k].at == 20) {
                exact++;
                near++;
                break;
            }
            if (s[k].at == 19 || s[k].at == 21) {
                near++;
                break;
            }
        }
        free(s);
    }
    cr_log_info("5%% step: at its commit in %d of 100, within one commit in %d", exact, near);
    cr_assert_geq(near, 90, "within one commit in %d of 100", near);
    cr_assert_geq(exact, 60, "at its commit in %d of 100", exact);
}

Test(stepfit, pure_2pct_noise_gives_no_step_in_99_of_100_series)
{
    kbc_hist_point p[SERIES];
    int with_step = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        synth(1000 + seed, SERIES, 0.02, SERIES, 0, p);
        kbc_hist_step *s;
        size_t n = kbc_history_steps(p, SERIES, &s);
        with_step += n > 0;
        free(s);
    }
    cr_log_info("pure noise: %d of 100 series show a step", with_step);
    cr_assert_leq(with_step, 1, "%d of 100 noise series show a step", with_step);
}

Test(stepfit, a_step_at_the_newest_commit_is_found)
{
    kbc_hist_point p[SERIES];
    synth(7, SERIES, 0.01, SERIES - 1, 0.10, p);
    kbc_hist_step *s;
    size_t n = kbc_history_steps(p, SERIES, &s);
    cr_assert_eq(n, 1, "%zu steps", n);
    cr_assert_eq(s[0].at, SERIES - 1);
    free(s);
}

Test(stepfit, fewer_than_the_minimum_points_give_no_step)
{
    double y[] = {0, 0, 1};
    kbc_stepfit f;
    kbc_stepfit_run(y, NULL, 3, 0, &f);
    cr_assert_eq(f.n_steps, 0);
    kbc_stepfit_free(&f);
}

/* A point with a wide interval counts less: the same outlier that is a
   step with a narrow interval is none with a wide one. */
Test(stepfit, a_point_with_a_wide_interval_weighs_less)
{
    double y[12], se[12];
    for (int i = 0; i < 12; i++) {
        y[i] = 0.001 * ((i * 7) % 5 - 2); /* +-0.2%, deterministic */
        se[i] = 0.001;
    }
    y[11] = 0.03; /* the newest run 3% slower */
    kbc_stepfit narrow, wide;
    kbc_stepfit_run(y, se, 12, 0, &narrow);
    se[11] = 0.05;
    kbc_stepfit_run(y, se, 12, 0, &wide);
    cr_assert_eq(narrow.n_steps, 1);
    cr_assert_eq(wide.n_steps, 0);
    kbc_stepfit_free(&narrow);
    kbc_stepfit_free(&wide);
}

/* ---- the database ---- */

static char tmp[256];

static void make_tmp(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/kbench-history-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

static void remove_tmp(void)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "chmod -R u+w '%s'; rm -rf '%s'", tmp, tmp), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

/* tmp/NAME */
static char *at(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmp, name);
    return buf[k];
}

/* Writes tmp/DIR/results.json: one run at hour `hour` of one GPU, its
   rows `rows` keys toy/e/n=K/v with the median `median` seconds; with
   joules > 0, row K's energy windows are 0.98, 1 and 1.02 times joules
   times K + 1 per run (their median and its interval as the file has
   them). */
static void write_run_j(const char *dir, int hour, int rows, double median, const char *gpu_uuid,
                        double joules)
{
    mkdir(at(dir), 0777);
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s/%s/results.json", tmp, dir), 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "{\"kbench\": {\"version\": \"0.1.0\", \"git\": \"abc%d\"},\n"
            " \"started\": \"2026-01-01T%02d:00:00Z\",\n"
            " \"machine\": {\"has_gpu\": true, \"gpu\": \"Test GPU\", \"driver_version\": 13000,"
            " \"runtime_version\": 13000, \"clocks_khz\": {\"sm\": 1980000, \"memory\": 2619000},"
            " \"host\": \"h\", \"cpu_threads\": 4},\n"
            " \"provenance\": {\"plugins\": [], \"cccl_version\": 3000001,"
            " \"cublas_version\": \"13.0.2\"},\n"
            " \"results\": [",
            hour, hour);
    for (int r = 0; r < rows; r++) {
        fprintf(f,
                "%s{\"key\": \"toy/e/n=%d/v\", \"experiment\": \"e\", \"plugin\": \"toy\","
                " \"variant\": \"v\", \"status\": \"pass\", \"runs\": 3,"
                " \"time_s\": {\"median\": %.9g}, \"samples_s\": [%.9g, %.9g, %.9g],"
                " \"noise\": {\"achieved\": 0.01}, \"gpu_uuid\": \"%s\"",
                r ? ", " : "", r, median, median, median, median, gpu_uuid);
        double j = joules * (r + 1);
        if (joules > 0)
            fprintf(f,
                    ", \"energy\": {\"requested\": \"on\", \"status\": \"measured\","
                    " \"j_per_run\": %.9g, \"j_lo\": %.9g, \"j_hi\": %.9g, \"watts\": 300,"
                    " \"windows_j\": [%.9g, %.9g, %.9g], \"windows_s\": [1, 1, 1]}",
                    j, 0.98 * j, 1.02 * j, 0.98 * j, j, 1.02 * j);
        fprintf(f, "}\n");
    }
    fprintf(f, "], \"exit_code\": 0, \"finished\": \"2026-01-01T%02d:01:00Z\"}\n", hour);
    fclose(f);
    free(path);
}

static void write_run(const char *dir, int hour, int rows, double median, const char *gpu_uuid)
{
    write_run_j(dir, hour, rows, median, gpu_uuid, 0);
}

/* One integer from the database at path. */
static long long db_int(const char *path, const char *sql)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s",
                 sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static kbc_history *open_db(const char *path)
{
    kbc_history *h;
    kbc_diag d = {{0}};
    int code = kbc_history_open(path, 1, &h, &d);
    cr_assert_eq(code, 0, "%s", d.msg);
    return h;
}

static int add(kbc_history *h, const char *dir, const char *rev, int64_t t)
{
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s/%s/results.json", tmp, dir), 0);
    kbc_hist_commit c = {.time = t};
    snprintf(c.rev, sizeof c.rev, "%s", rev);
    snprintf(c.source, sizeof c.source, "option");
    int added = -1;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_history_add(h, path, &c, 0, &added, &d), 0, "%s", d.msg);
    free(path);
    return added;
}

TestSuite(db, .init = make_tmp, .fini = remove_tmp);

Test(db, a_run_imported_twice_is_there_once)
{
    write_run("r", 1, 3, 1e-3, "GPU-1");
    kbc_history *h = open_db(at("h.db"));
    cr_assert_eq(add(h, "r", "c1", 100), 1);
    cr_assert_eq(add(h, "r", "c1", 100), 0);
    kbc_history_close(h);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM runs"), 1);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM rows"), 3);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM samples"), 9);
}

Test(db, a_new_database_is_versioned_and_in_wal_mode)
{
    kbc_history *h = open_db(at("h.db"));
    kbc_history_close(h);
    cr_assert_eq(db_int(at("h.db"), "PRAGMA user_version"), KBC_HISTORY_VERSION);
    cr_assert_eq(db_int(at("h.db"), "PRAGMA application_id"), KBC_HISTORY_APP_ID);
    sqlite3 *db;
    sqlite3_open(at("h.db"), &db);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

Test(db, another_gpu_is_another_series)
{
    write_run("a", 1, 1, 1e-3, "GPU-1");
    write_run("b", 2, 1, 2e-3, "GPU-2");
    kbc_history *h = open_db(at("h.db"));
    add(h, "a", "c1", 100);
    add(h, "b", "c2", 200);
    kbc_hist_series *s;
    size_t n;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_history_series(h, "toy/e/n=0/v", &s, &n, &d), 0);
    cr_assert_eq(n, 2);
    cr_assert_eq(s[0].n_points, 1);
    cr_assert_str_eq(s[0].testbed.gpu_uuid, "GPU-1");
    cr_assert_str_eq(s[0].testbed.cublas, "13.0.2");
    cr_assert_eq(s[0].testbed.cccl, 3000001);
    kbc_hist_series_free(s, n);
    kbc_history_close(h);
}

Test(db, points_come_in_commit_order)
{
    write_run("a", 1, 1, 1e-3, "GPU-1");
    write_run("b", 2, 1, 2e-3, "GPU-1");
    kbc_history *h = open_db(at("h.db"));
    add(h, "a", "late", 300); /* started first, committed last */
    add(h, "b", "early", 200);
    kbc_hist_series *s;
    size_t n, np;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_history_series(h, NULL, &s, &n, &d), 0);
    kbc_hist_point *p;
    cr_assert_eq(kbc_history_points(h, s[0].key, s[0].testbed.id, &p, &np, &d), 0);
    cr_assert_eq(np, 2);
    cr_assert_str_eq(p[0].commit, "early");
    cr_assert_str_eq(p[1].commit, "late");
    cr_assert_float_eq(p[1].median, 1e-3, 1e-12);
    cr_assert_float_eq(p[1].hi, 1.01e-3, 1e-12);
    free(p);
    kbc_hist_series_free(s, n);
    kbc_history_close(h);
}

/* Two processes add 20 runs each into one new database at once: all 40
   are there, none lost to the other's lock. */
Test(db, two_processes_adding_at_once_lose_nothing)
{
    for (int i = 0; i < 40; i++) {
        char dir[16];
        snprintf(dir, sizeof dir, "r%02d", i);
        write_run(dir, i % 24, 20, 1e-3 * (1 + i), "GPU-1");
    }
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        cr_assert_geq(kids[k], 0);
        if (kids[k] == 0) {
            kbc_history *h;
            kbc_diag d = {{0}};
            if (kbc_history_open(at("h.db"), 1, &h, &d) != 0) {
                fprintf(stderr, "%s\n", d.msg);
                _exit(10);
            }
            for (int i = k; i < 40; i += 2) {
                char path[512];
                snprintf(path, sizeof path, "%s/r%02d/results.json", tmp, i);
                int added;
                if (kbc_history_add(h, path, NULL, 0, &added, &d) != 0 || !added) {
                    fprintf(stderr, "%s\n", d.msg);
                    _exit(11);
                }
            }
            kbc_history_close(h);
            _exit(0);
        }
    }
    for (int k = 0; k < 2; k++) {
        int st;
        cr_assert_eq(waitpid(kids[k], &st, 0), kids[k]);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "adder %d: status %d", k, st);
    }
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM runs"), 40);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM rows"), 800);
}

/* A database of layout version 1, made by hand as the first kbench
   history wrote it, is upgraded in place: its run kept, the new column
   filled. */
Test(db, a_version_1_database_is_upgraded)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(at("old.db"), &db), SQLITE_OK);
    const char *v1 =
        "CREATE TABLE testbeds (id INTEGER PRIMARY KEY, gpu TEXT NOT NULL, gpu_uuid TEXT NOT "
        "NULL, driver TEXT NOT NULL, runtime TEXT NOT NULL, cccl INTEGER NOT NULL, cublas TEXT "
        "NOT NULL, sm_max_mhz INTEGER NOT NULL, mem_max_mhz INTEGER NOT NULL, UNIQUE (gpu, "
        "gpu_uuid, driver, runtime, cccl, cublas, sm_max_mhz, mem_max_mhz));"
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, path TEXT NOT "
        "NULL, started TEXT NOT NULL, finished TEXT, exit_code INTEGER, kbench_version TEXT "
        "NOT NULL, kbench_git TEXT NOT NULL, commit_rev TEXT NOT NULL, commit_time INTEGER NOT "
        "NULL, plan_hash TEXT, host TEXT NOT NULL, command TEXT);"
        "CREATE TABLE rows (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id) "
        "ON DELETE CASCADE, testbed_id INTEGER NOT NULL REFERENCES testbeds(id), key TEXT NOT "
        "NULL, status TEXT NOT NULL, median REAL, noise REAL, runs INTEGER NOT NULL, UNIQUE "
        "(run_id, key));"
        "CREATE INDEX rows_series ON rows (key, testbed_id);"
        "CREATE TABLE samples (row_id INTEGER NOT NULL REFERENCES rows(id) ON DELETE CASCADE, "
        "idx INTEGER NOT NULL, seconds REAL NOT NULL, PRIMARY KEY (row_id, idx)) WITHOUT ROWID;"
        "INSERT INTO testbeds VALUES (1, 'Old GPU', '', '12.0', '12.0', 0, '', 1000, 1000);"
        "INSERT INTO runs VALUES (1, 'aa', '/x/results.json', '2025-01-01T00:00:00Z', NULL, 0, "
        "'0.0.9', 'old', 'old', 5, NULL, 'h', NULL);"
        "INSERT INTO rows VALUES (1, 1, 1, 'toy/e/n=0/v', 'pass', 0.002, 0.01, 3);"
        "PRAGMA application_id = 1801611369; PRAGMA user_version = 1;";
    cr_assert_eq(sqlite3_exec(db, v1, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    sqlite3_close(db);

    write_run("a", 1, 1, 1e-3, "GPU-1");
    kbc_history *h = open_db(at("old.db"));
    cr_assert_eq(add(h, "a", "new", 10), 1);
    kbc_history_close(h);
    cr_assert_eq(db_int(at("old.db"), "PRAGMA user_version"), KBC_HISTORY_VERSION);
    cr_assert_eq(db_int(at("old.db"), "SELECT count(*) FROM runs"), 2);
    cr_assert_eq(db_int(at("old.db"),
                        "SELECT count(*) FROM runs WHERE commit_source = 'unknown' AND id = 1"),
                 1);
    cr_assert_eq(db_int(at("old.db"),
                        "SELECT count(*) FROM runs WHERE commit_source = 'option'"),
                 1);
}

/* The whole file, to check that a refused one is left as it was. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc(*n + 1);
    cr_assert_eq(fread(s, 1, *n, f), *n);
    fclose(f);
    return s;
}

/* Opens path for writing, expecting exit code `code` and a sentence
   holding `words`; the file must come out as it went in. */
static void refused(const char *path, int code, const char *words)
{
    size_t n0, n1;
    char *before = slurp(path, &n0);
    kbc_history *h = NULL;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_history_open(path, 1, &h, &d), code, "%s", d.msg);
    cr_assert_null(h);
    cr_assert_not_null(strstr(d.msg, words), "%s", d.msg);
    cr_assert_null(strchr(d.msg, '\n'), "%s", d.msg);
    char *after = slurp(path, &n1);
    cr_assert_eq(n0, n1);
    cr_assert_eq(memcmp(before, after, n0), 0, "the file was changed");
    free(before);
    free(after);
}

Test(db, a_text_file_is_not_a_history)
{
    FILE *f = fopen(at("notes.db"), "w");
    fputs("these are my notes, and they are long enough to fill a page header..........\n"
          "......................................................................\n", f);
    fclose(f);
    refused(at("notes.db"), KBC_EXIT_USAGE, "is not a kbench history (not a SQLite database");
}

Test(db, another_programs_database_is_not_a_history)
{
    sqlite3 *db;
    sqlite3_open(at("other.db"), &db);
    cr_assert_eq(sqlite3_exec(db, "CREATE TABLE songs (title TEXT)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    refused(at("other.db"), KBC_EXIT_USAGE, "is a SQLite database of another program");
}

Test(db, a_newer_layout_is_refused)
{
    kbc_history *h = open_db(at("h.db"));
    kbc_history_close(h);
    sqlite3 *db;
    sqlite3_open(at("h.db"), &db);
    sqlite3_exec(db, "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(db);
    char words[128];
    snprintf(words, sizeof words, "has layout version 99, newer than this kbench's %d",
             KBC_HISTORY_VERSION);
    refused(at("h.db"), KBC_EXIT_USAGE, words);
}

/* A history whose header says version v (a signed field: a shared,
   copied or damaged file can hold anything); journal_mode DELETE so that
   the file holds it whole. */
static void with_version(const char *path, long long v)
{
    kbc_history *h = open_db(path);
    kbc_history_close(h);
    sqlite3 *db;
    sqlite3_open(path, &db);
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA journal_mode = DELETE; PRAGMA user_version = %lld", v);
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* The version indexed the table of migrations: -1 ran the word before it
   as SQL (a syntax error), -2^31 crashed. */
Test(db, a_negative_layout_version_is_refused_and_left_untouched)
{
    with_version(at("h.db"), -1);
    refused(at("h.db"), KBC_EXIT_USAGE,
            "has layout version -1, which no kbench writes (the first is 1)");
    with_version(at("min.db"), -2147483648LL);
    refused(at("min.db"), KBC_EXIT_USAGE, "has layout version -2147483648, which no kbench");
}

Test(db, a_negative_layout_version_is_refused_for_reading_too)
{
    with_version(at("h.db"), -1);
    kbc_history *h = NULL;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_history_open(at("h.db"), 0, &h, &d), KBC_EXIT_USAGE);
    cr_assert_null(h);
    /* Not "kbench history add upgrades it", which would fail the same way. */
    cr_assert_null(strstr(d.msg, "upgrades"), "%s", d.msg);
    cr_assert_not_null(strstr(d.msg, "kbench history rebuild"), "%s", d.msg);
}

/* Version 0 with kbench's tables would have created them again. */
Test(db, a_layout_version_0_with_tables_is_refused)
{
    with_version(at("h.db"), 0);
    refused(at("h.db"), KBC_EXIT_USAGE, "has layout version 0, which no kbench writes");
}

Test(db, a_kbench_header_without_the_tables_is_refused)
{
    sqlite3 *db;
    sqlite3_open(at("h.db"), &db);
    cr_assert_eq(sqlite3_exec(db, "PRAGMA application_id = 1801611369; PRAGMA user_version = 2;"
                                  "CREATE TABLE runs (id INTEGER)",
                              NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(db);
    refused(at("h.db"), KBC_EXIT_USAGE, "says it is a kbench history but lacks its tables");
}

Test(db, a_read_only_file_is_refused_for_writing)
{
    kbc_history *h = open_db(at("h.db"));
    kbc_history_close(h);
    cr_assert_eq(chmod(at("h.db"), 0444), 0);
    refused(at("h.db"), KBC_EXIT_SYSTEM, "is read-only, so no run can be added to it");
    /* ... and still read. */
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_history_open(at("h.db"), 0, &h, &d), 0, "%s", d.msg);
    kbc_history_close(h);
}

/* A kbench history whose pages after the header are overwritten: SQLite
   finds it damaged on the first query that reads them. */
Test(db, a_damaged_file_gets_one_sentence)
{
    write_run("a", 1, 50, 1e-3, "GPU-1");
    kbc_history *h = open_db(at("h.db"));
    add(h, "a", "c1", 1);
    kbc_history_close(h);
    FILE *f = fopen(at("h.db"), "r+b");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    cr_assert_gt(size, 4096 * 3);
    fseek(f, 4096, SEEK_SET); /* past the first page: the header stays */
    for (long i = 4096; i < size; i++)
        fputc(0x5a, f);
    fclose(f);
    kbc_diag d = {{0}};
    int code = kbc_history_open(at("h.db"), 0, &h, &d);
    if (code == 0) {
        kbc_hist_series *s;
        size_t n;
        code = kbc_history_series(h, NULL, &s, &n, &d);
        kbc_history_close(h);
    }
    cr_assert_eq(code, KBC_EXIT_SYSTEM, "%s", d.msg);
    cr_assert_not_null(strstr(d.msg, "is damaged"), "%s", d.msg);
    cr_assert_not_null(strstr(d.msg, "kbench history rebuild"), "%s", d.msg);
}

/* ---- the commands ---- */

TestSuite(cmd, .init = make_tmp, .fini = remove_tmp);

typedef struct result {
    int code;
    char out[16384], err[4096];
} result;

static void read_into(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(buf, 1, n - 1, f) : 0;
    buf[got] = '\0';
    if (f)
        fclose(f);
}

/* kbench ARGS in tmp, with the history tmp/h.db unless ARGS names one. */
static void kb(result *r, const char *args)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd,
                          "cd '%s' && KBENCH_PLUGIN_PATH= KBENCH_HISTORY='%s/h.db' '%s' %s "
                          ">out.txt 2>err.txt",
                          tmp, tmp, KBENCH, args),
                 0);
    int st = system(cmd);
    free(cmd);
    cr_assert(WIFEXITED(st));
    r->code = WEXITSTATUS(st);
    read_into(at("out.txt"), r->out, sizeof r->out);
    read_into(at("err.txt"), r->err, sizeof r->err);
}

/* Twelve runs of one row on one GPU, the last four 10% slower, added with
   commits c00..c11. */
static void stepped_history(result *r)
{
    for (int i = 0; i < 12; i++) {
        char dir[16], args[256];
        snprintf(dir, sizeof dir, "r%02d", i);
        double wobble = 1 + 0.002 * ((i * 7) % 5 - 2);
        write_run(dir, i, 1, 1e-3 * wobble * (i >= 8 ? 1.10 : 1), "GPU-1");
        snprintf(args, sizeof args, "history add %s --commit c%02d", dir, i);
        kb(r, args);
        cr_assert_eq(r->code, 0, "%s", r->err);
    }
}

Test(cmd, regressions_names_the_first_commit_after_a_step_and_exits_1)
{
    result r;
    stepped_history(&r);
    kb(&r, "history regressions");
    cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
    cr_assert_eq(strncmp(r.out, "slower ", 7), 0, "%s", r.out);
    cr_assert_not_null(strstr(r.out, "+9.9%  toy/e/n=0/v"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "at commit c08 "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "1 slower, 0 faster"), "%s", r.out);
}

Test(cmd, regressions_since_a_later_commit_finds_none)
{
    result r;
    stepped_history(&r);
    kb(&r, "history regressions --since c09");
    cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
    cr_assert_not_null(strstr(r.out, "0 slower"), "%s", r.out);
}

Test(cmd, regressions_above_a_larger_threshold_finds_none)
{
    result r;
    stepped_history(&r);
    kb(&r, "history regressions --threshold 15");
    cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
}

Test(cmd, since_naming_no_commit_is_refused)
{
    result r;
    stepped_history(&r);
    kb(&r, "history regressions --since nosuch");
    cr_assert_eq(r.code, 2, "%s%s", r.out, r.err);
    cr_assert_not_null(strstr(r.err, "no run in"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "has the commit 'nosuch'"), "%s", r.err);
}

Test(cmd, series_csv_gives_one_line_a_run)
{
    result r;
    stepped_history(&r);
    kb(&r, "history series toy/e/n=0/v --csv");
    cr_assert_eq(r.code, 0, "%s", r.err);
    int lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 13, "%s", r.out);
    cr_assert_not_null(strstr(r.out, "key,testbed,commit,commit_time,started,median_s"),
                       "%s", r.out);
    cr_assert_not_null(strstr(r.out, "toy/e/n=0/v,1,c11,"), "%s", r.out);
}

Test(cmd, show_of_an_unknown_key_is_refused)
{
    result r;
    stepped_history(&r);
    kb(&r, "history show toy/e/n=9/v");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "no row of the history has the key 'toy/e/n=9/v'"), "%s",
                       r.err);
}

Test(cmd, a_results_file_that_is_not_one_is_refused)
{
    result r;
    FILE *f = fopen(at("results.json"), "w");
    fputs("{\"results\": [", f); /* cut short */
    fclose(f);
    kb(&r, "history add results.json");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "results.json:1: cannot read the results"), "%s", r.err);
}

Test(cmd, rebuild_recreates_the_history_from_the_run_files)
{
    result r;
    stepped_history(&r);
    /* A damaged database is replaced whole. */
    FILE *f = fopen(at("h.db"), "w");
    fputs("garbage", f);
    fclose(f);
    kb(&r, "history rebuild .");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "rebuilt from 12 runs"), "%s", r.out);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM runs"), 12);
    /* The commits given to add were kept beside the runs. */
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM runs WHERE commit_rev = 'c05' AND "
                                    "commit_source = 'option'"),
                 1);
}

Test(cmd, a_run_that_has_not_finished_is_refused)
{
    result r;
    write_run("r", 1, 1, 1e-3, "GPU-1");
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "sed -i 's/\"finished\": \"[^\"]*\"/\"finished\": null/' "
                                "'%s/r/results.json'", tmp), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    kb(&r, "history add r");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "is of a run that has not finished"), "%s", r.err);
}

/* A run stopped by Ctrl-C writes its file whole, with exit code 130: its
   rows are the points done by then, which a series would take for the
   plan's.  docs/history.md. */
static void interrupted_run(const char *dir)
{
    write_run(dir, 1, 1, 1e-3, "GPU-1");
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "sed -i 's/\"exit_code\": 0/\"exit_code\": 130/' "
                                "'%s/%s/results.json'", tmp, dir), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

Test(cmd, an_interrupted_run_is_refused)
{
    result r;
    interrupted_run("r");
    kb(&r, "history add r");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "r/results.json is of a run that was interrupted (exit "
                                     "code 130: Ctrl-C or SIGTERM), so it holds only the points "
                                     "that finished and is not added; finish it with kbench run "
                                     "--resume, or add it as it is with --interrupted.\n"),
                       "%s", r.err);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM runs"), 0);
}

Test(cmd, an_interrupted_run_is_added_when_asked)
{
    result r;
    interrupted_run("r");
    kb(&r, "history add r --interrupted");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM runs WHERE exit_code = 130"), 1);
}

Test(cmd, rebuild_skips_an_interrupted_run_with_a_note)
{
    result r;
    write_run("a", 1, 1, 1e-3, "GPU-1");
    interrupted_run("b");
    kb(&r, "history rebuild .");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "b/results.json: skipped: the run was interrupted "
                                     "(--interrupted adds it)"),
                       "%s", r.out);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM runs"), 1);
    kb(&r, "history rebuild . --interrupted");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM runs"), 2);
}

Test(cmd, an_option_of_another_subcommand_is_refused)
{
    result r;
    kb(&r, "history list --since abc");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "option --since applies only to kbench history "
                                     "regressions"), "%s", r.err);
}

/* A run with --record is in the history when it ends, tagged with the
   commit given, which is also kept in DIR/commit for a rebuild. */
Test(cmd, run_record_adds_the_run)
{
    result r;
    FILE *f = fopen(at("p.ini"), "w");
    fputs("[global]\nruns = 3\nwarmup = 1\n[pass]\nplugin = toy\nvariants = good\nn = 1K\n", f);
    fclose(f);
    kb(&r, "run p.ini -o out -q --record --commit v1.2 --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "recorded in"), "%s", r.out);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM runs WHERE commit_rev = 'v1.2' AND "
                                    "commit_source = 'option'"),
                 1);
    char line[256];
    read_into(at("out/commit"), line, sizeof line);
    cr_assert_eq(strncmp(line, "v1.2 ", 5), 0, "%s", line);
}

Test(cmd, record_without_an_output_folder_is_refused)
{
    result r;
    FILE *f = fopen(at("p.ini"), "w");
    fputs("[pass]\nplugin = toy\nn = 1K\n", f);
    fclose(f);
    kb(&r, "run p.ini --record --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "option --record needs -o DIR"), "%s", r.err);
}

Test(cmd, show_marks_the_step_where_it_falls)
{
    result r;
    stepped_history(&r);
    kb(&r, "history show toy/e/n=0/v");
    cr_assert_eq(r.code, 0, "%s", r.err);
    const char *step = strstr(r.out, "-- step: +9.9%");
    const char *c07 = strstr(r.out, "c07 "), *c08 = strstr(r.out, "c08 ");
    cr_assert(step && c07 && c08, "%s", r.out);
    cr_assert_lt(c07, step, "%s", r.out);
    cr_assert_lt(step, c08, "%s", r.out);
    cr_assert_not_null(strstr(r.out, "on testbed 1: Test GPU (GPU-1), driver 13.0, runtime 13.0, "
                                     "CCCL 3.0.1, cuBLAS 13.0.2"),
                       "%s", r.out);
}

Test(cmd, since_takes_a_prefix_of_a_commit)
{
    result r;
    stepped_history(&r);
    kb(&r, "history regressions --since c0");
    cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
}

Test(cmd, list_csv_gives_a_heading_and_a_line_a_series)
{
    result r;
    write_run("a", 1, 3, 1e-3, "GPU-1");
    kb(&r, "history add a");
    cr_assert_eq(r.code, 0, "%s", r.err);
    kb(&r, "history list --csv");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_eq(strncmp(r.out, "key,testbed,gpu,gpu_uuid,driver,runtime,cccl,cublas,sm_max_mhz,"
                                "mem_max_mhz,points\n", 80),
                 0, "%s", r.out);
    cr_assert_not_null(strstr(r.out, "toy/e/n=2/v,1,Test GPU,GPU-1,13.0,13.0,3000001,13.0.2,"
                                     "1980,2619,1\n"),
                       "%s", r.out);
}

Test(cmd, a_folder_without_results_is_refused)
{
    result r;
    mkdir(at("empty"), 0777);
    kb(&r, "history add empty");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "empty/results.json: No such file or directory"), "%s",
                       r.err);
}

/* ---- where the database is ---- */

Test(path, the_option_comes_first)
{
    setenv("KBENCH_HISTORY", "/e/h.db", 1);
    kbc_diag d = {{0}};
    char *p = kbc_history_path("/o/h.db", &d);
    cr_assert_str_eq(p, "/o/h.db");
    free(p);
}

Test(path, then_kbench_history)
{
    setenv("KBENCH_HISTORY", "/e/h.db", 1);
    setenv("XDG_DATA_HOME", "/x", 1);
    kbc_diag d = {{0}};
    char *p = kbc_history_path(NULL, &d);
    cr_assert_str_eq(p, "/e/h.db");
    free(p);
}

Test(path, then_xdg_data_home)
{
    unsetenv("KBENCH_HISTORY");
    setenv("XDG_DATA_HOME", "/x", 1);
    kbc_diag d = {{0}};
    char *p = kbc_history_path(NULL, &d);
    cr_assert_str_eq(p, "/x/kbench/history.db");
    free(p);
}

Test(path, a_relative_xdg_data_home_is_ignored)
{
    unsetenv("KBENCH_HISTORY");
    setenv("XDG_DATA_HOME", "rel", 1);
    setenv("HOME", "/home/u", 1);
    kbc_diag d = {{0}};
    char *p = kbc_history_path(NULL, &d);
    cr_assert_str_eq(p, "/home/u/.local/share/kbench/history.db");
    free(p);
}

Test(path, without_home_there_is_none)
{
    unsetenv("KBENCH_HISTORY");
    unsetenv("XDG_DATA_HOME");
    unsetenv("HOME");
    kbc_diag d = {{0}};
    cr_assert_null(kbc_history_path(NULL, &d));
    cr_assert_not_null(strstr(d.msg, "name one with --history FILE"), "%s", d.msg);
}

/* One run 30% slower in the middle of a flat series: a lone run, marked
   so, and not a regression. */
Test(stepfit, a_lone_slow_run_is_an_outlier)
{
    kbc_hist_point p[SERIES];
    synth(3, SERIES, 0.02, SERIES, 0, p);
    p[20].median *= 1.3;
    p[20].lo *= 1.3;
    p[20].hi *= 1.3;
    kbc_hist_step *s;
    size_t n = kbc_history_steps(p, SERIES, &s);
    cr_assert_eq(n, 2, "%zu steps", n);
    cr_assert_eq(s[0].at, 20);
    cr_assert_eq(s[1].at, 21);
    cr_assert(s[0].lone && s[1].lone);
    free(s);
}

/* The same at the newest commit is a step like any other: nothing says
   yet that the next run will undo it. */
Test(stepfit, a_slow_newest_run_is_not_lone)
{
    kbc_hist_point p[SERIES];
    synth(3, SERIES, 0.02, SERIES - 1, 0.3, p);
    kbc_hist_step *s;
    size_t n = kbc_history_steps(p, SERIES, &s);
    cr_assert_eq(n, 1, "%zu steps", n);
    cr_assert_not(s[0].lone);
    free(s);
}

/* A step up and, two runs later, back down is two steps, not lone. */
Test(stepfit, two_slow_runs_are_not_lone)
{
    kbc_hist_point p[SERIES];
    synth(3, SERIES, 0.01, SERIES, 0, p);
    for (int i = 20; i < 22; i++)
        p[i].median *= 1.3;
    kbc_hist_step *s;
    size_t n = kbc_history_steps(p, SERIES, &s);
    cr_assert_eq(n, 2, "%zu steps", n);
    cr_assert_not(s[0].lone);
    cr_assert_not(s[1].lone);
    free(s);
}

Test(cmd, regressions_passes_over_a_lone_slow_run)
{
    result r;
    for (int i = 0; i < 12; i++) {
        char dir[16], args[256];
        snprintf(dir, sizeof dir, "r%02d", i);
        double wobble = 1 + 0.002 * ((i * 7) % 5 - 2);
        write_run(dir, i, 1, 1e-3 * wobble * (i == 6 ? 1.3 : 1), "GPU-1");
        snprintf(args, sizeof args, "history add %s --commit c%02d", dir, i);
        kb(&r, args);
        cr_assert_eq(r.code, 0, "%s", r.err);
    }
    kb(&r, "history regressions");
    cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
    cr_assert_not_null(strstr(r.out, "0 slower, 0 faster"), "%s", r.out);
    kb(&r, "history show toy/e/n=0/v");
    cr_assert_not_null(strstr(r.out, ", around a lone run (an outlier)"), "%s", r.out);
}

/* ---- commit: asking git (commit.c) ---- */

/* A git repository in a new temporary folder with one commit made at
   Unix time 1700000000; the current folder becomes it. */
static void enter_git_repo(char *dir)
{
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chdir(dir), 0);
    cr_assert_eq(system("git init -q . && GIT_COMMITTER_DATE='1700000000 +0000' "
                        "GIT_AUTHOR_DATE='1700000000 +0000' git -c user.name=t "
                        "-c user.email=t@t commit -q --allow-empty -m one"),
                 0);
}

static void leave_git_repo(const char *dir)
{
    char *rm = kbc_xasprintf("rm -rf '%s'", dir);
    cr_assert_eq(chdir("/"), 0);
    cr_assert_eq(system(rm), 0);
    free(rm);
}

Test(commit, git_gives_the_full_hash_and_time_of_head)
{
    char dir[] = "/tmp/kbench-commit-XXXXXX";
    enter_git_repo(dir);
    FILE *p = popen("git rev-parse HEAD", "r");
    char head[64] = "";
    cr_assert_not_null(fgets(head, sizeof head, p));
    pclose(p);
    head[strcspn(head, "\n")] = '\0';
    kbc_hist_commit c = {0};
    cr_assert_eq(kbc_commit_from_git(NULL, &c), 0);
    cr_assert_str_eq(c.rev, head);
    cr_assert_eq(c.time, 1700000000);
    leave_git_repo(dir);
}

Test(commit, a_revision_git_does_not_know_is_not_found)
{
    char dir[] = "/tmp/kbench-commit-XXXXXX";
    enter_git_repo(dir);
    kbc_hist_commit c = {0};
    cr_assert_eq(kbc_commit_from_git("no-such-branch", &c), -1);
    cr_assert_str_eq(c.rev, "");
    leave_git_repo(dir);
}

/* ---- energy beside the time ---- */

/* A row with energy keeps its joules per run and their interval beside
   its time; a row without has none (NaN). */
Test(db, a_row_with_energy_keeps_its_joules_beside_its_time)
{
    write_run_j("a", 1, 1, 1e-3, "GPU-1", 2e-3);
    write_run("b", 2, 1, 1e-3, "GPU-1");
    kbc_history *h = open_db(at("h.db"));
    add(h, "a", "c1", 100);
    add(h, "b", "c2", 200);
    kbc_hist_point *p;
    size_t np;
    kbc_diag d = {{0}};
    kbc_hist_series *s;
    size_t n;
    cr_assert_eq(kbc_history_series(h, "toy/e/n=0/v", &s, &n, &d), 0, "%s", d.msg);
    cr_assert_eq(n, 1);
    cr_assert_eq(kbc_history_points(h, s[0].key, s[0].testbed.id, &p, &np, &d), 0, "%s", d.msg);
    cr_assert_eq(np, 2);
    cr_assert_float_eq(p[0].j_per_run, 2e-3, 1e-12);
    cr_assert_float_eq(p[0].j_lo, 0.98 * 2e-3, 1e-12);
    cr_assert_float_eq(p[0].j_hi, 1.02 * 2e-3, 1e-12);
    cr_assert(isnan(p[1].j_per_run), "%g", p[1].j_per_run);
    cr_assert(isnan(p[1].j_lo));
    free(p);
    kbc_hist_series_free(s, n);
    kbc_history_close(h);
    cr_assert_eq(db_int(at("h.db"), "SELECT count(*) FROM rows WHERE watts = 300"), 1);
}

/* A database of layout version 2 (version 1 and the commit's source), made
   by hand, is upgraded in place: its row kept without energy, a new run's
   row with. */
Test(db, a_version_2_database_gains_the_energy_columns)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(at("old.db"), &db), SQLITE_OK);
    const char *v2 =
        "CREATE TABLE testbeds (id INTEGER PRIMARY KEY, gpu TEXT NOT NULL, gpu_uuid TEXT NOT "
        "NULL, driver TEXT NOT NULL, runtime TEXT NOT NULL, cccl INTEGER NOT NULL, cublas TEXT "
        "NOT NULL, sm_max_mhz INTEGER NOT NULL, mem_max_mhz INTEGER NOT NULL, UNIQUE (gpu, "
        "gpu_uuid, driver, runtime, cccl, cublas, sm_max_mhz, mem_max_mhz));"
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, path TEXT NOT "
        "NULL, started TEXT NOT NULL, finished TEXT, exit_code INTEGER, kbench_version TEXT "
        "NOT NULL, kbench_git TEXT NOT NULL, commit_rev TEXT NOT NULL, commit_time INTEGER NOT "
        "NULL, plan_hash TEXT, host TEXT NOT NULL, command TEXT, commit_source TEXT NOT NULL "
        "DEFAULT 'unknown');"
        "CREATE TABLE rows (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id) "
        "ON DELETE CASCADE, testbed_id INTEGER NOT NULL REFERENCES testbeds(id), key TEXT NOT "
        "NULL, status TEXT NOT NULL, median REAL, noise REAL, runs INTEGER NOT NULL, UNIQUE "
        "(run_id, key));"
        "CREATE INDEX rows_series ON rows (key, testbed_id);"
        "CREATE TABLE samples (row_id INTEGER NOT NULL REFERENCES rows(id) ON DELETE CASCADE, "
        "idx INTEGER NOT NULL, seconds REAL NOT NULL, PRIMARY KEY (row_id, idx)) WITHOUT ROWID;"
        "INSERT INTO testbeds VALUES (1, 'Test GPU', 'GPU-1', '13.0', '13.0', 3000001, "
        "'13.0.2', 1980, 2619);"
        "INSERT INTO runs VALUES (1, 'aa', '/x/results.json', '2025-01-01T00:00:00Z', NULL, 0, "
        "'0.1.0', 'old', 'old', 5, NULL, 'h', NULL, 'git');"
        "INSERT INTO rows VALUES (1, 1, 1, 'toy/e/n=0/v', 'pass', 0.002, 0.01, 3);"
        "PRAGMA application_id = 1801611369; PRAGMA user_version = 2;";
    cr_assert_eq(sqlite3_exec(db, v2, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    sqlite3_close(db);

    /* A reading command asks for the upgrade first. */
    kbc_history *h = NULL;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_history_open(at("old.db"), 0, &h, &d), KBC_EXIT_USAGE);
    cr_assert_not_null(strstr(d.msg, "has the older layout version 2"), "%s", d.msg);

    write_run_j("a", 1, 1, 1e-3, "GPU-1", 5e-3);
    h = open_db(at("old.db"));
    cr_assert_eq(add(h, "a", "new", 10), 1);
    kbc_history_close(h);
    cr_assert_eq(db_int(at("old.db"), "PRAGMA user_version"), 3);
    cr_assert_eq(db_int(at("old.db"), "SELECT count(*) FROM rows"), 2);
    cr_assert_eq(db_int(at("old.db"), "SELECT count(*) FROM rows WHERE id = 1 AND "
                                      "j_per_run IS NULL AND median = 0.002"),
                 1);
    cr_assert_eq(db_int(at("old.db"), "SELECT count(*) FROM rows WHERE run_id = 2 AND "
                                      "abs(j_per_run - 5e-3) < 1e-12"),
                 1);
}

/* Four runs of two rows, the first two without energy: the series gives
   each run's joules beside its time, empty where it has none. */
static void energy_history(result *r)
{
    for (int i = 0; i < 4; i++) {
        char dir[16], args[256];
        snprintf(dir, sizeof dir, "e%02d", i);
        write_run_j(dir, i, 2, 1e-3, "GPU-1", i < 2 ? 0 : 1e-3 * (i + 1));
        snprintf(args, sizeof args, "history add %s --commit c%02d", dir, i);
        kb(r, args);
        cr_assert_eq(r->code, 0, "%s", r->err);
    }
}

Test(cmd, series_gives_the_energy_beside_the_time)
{
    result r;
    energy_history(&r);
    kb(&r, "history series toy/e/n=1/v --csv");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "key,testbed,commit,commit_time,started,median_s,lo_s,hi_s,"
                                     "runs,j_per_run,j_lo,j_hi\n"),
                       "%s", r.out);
    /* Row 1 of run 3: twice 4 mJ, its interval 2% either side. */
    cr_assert_not_null(strstr(r.out, ",3,0.008,0.00784,0.00816\n"), "%s", r.out);
    /* Runs 0 and 1 had no energy: the three fields empty. */
    cr_assert_not_null(strstr(r.out, "toy/e/n=1/v,1,c00,"), "%s", r.out);
    const char *c00 = strstr(r.out, "toy/e/n=1/v,1,c00,");
    cr_assert_not_null(strstr(c00, ",3,,,\n"), "%s", r.out);
    kb(&r, "history series toy/e/n=1/v");
    cr_assert_not_null(strstr(r.out, "\t3\t0.008\t0.00784\t0.00816\n"), "%s", r.out);
}

Test(cmd, show_adds_a_joules_column_where_a_point_has_energy)
{
    result r;
    energy_history(&r);
    kb(&r, "history show toy/e/n=0/v");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "95% interval            J/run\n"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "  4 mJ\n"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "  -\n"), "the runs without energy: %s", r.out);
}

/* ---- a history that explains itself ---- */

Test(cmd, regressions_says_when_no_series_has_the_runs_a_step_needs)
{
    result r;
    for (int i = 0; i < 3; i++) {
        char dir[16], args[256];
        snprintf(dir, sizeof dir, "r%02d", i);
        write_run(dir, i, 1, 1e-3, "GPU-1");
        snprintf(args, sizeof args, "history add %s --commit c%02d", dir, i);
        kb(&r, args);
        cr_assert_eq(r.code, 0, "%s", r.err);
    }
    kb(&r, "history regressions");
    cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
    cr_assert_not_null(strstr(r.out, "no series has the 4 runs a step needs yet (the longest "
                                     "has 3)"),
                       "%s", r.out);
    /* With enough runs, the sentence is not said. */
    stepped_history(&r);
    kb(&r, "history regressions");
    cr_assert_null(strstr(r.out, "no series has"), "%s", r.out);
}

Test(cmd, series_takes_a_glob)
{
    result r;
    stepped_history(&r);
    kb(&r, "history series 'toy/*/v' --csv");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "toy/e/n=0/v,1,c11,"), "%s", r.out);
}

Test(cmd, show_takes_compares_short_name_of_a_row)
{
    result r;
    stepped_history(&r);
    /* compare shows the row as experiment/swept values/variant. */
    kb(&r, "history series e/n=0/v --csv");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "toy/e/n=0/v,1,c11,"), "%s", r.out);
    kb(&r, "history show e/v");
    cr_assert_eq(r.code, 0, "%s", r.err);
    /* A short name whose value is not the row's names nothing. */
    kb(&r, "history show e/n=9/v");
    cr_assert_eq(r.code, 2, "%s", r.out);
}
