/*
 * query.c -- reading the history back: its runs, its series (one row key
 * on one testbed), a series' points in commit order with their energy,
 * and the steps the detector (stepfit.h) finds in them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history_db.h"
#include "stepfit.h"

/* A passing row with a median is a point; the others (failed, skipped,
   crashed) have no time to follow. */
#define POINT_ROWS "rows.status = 'pass' AND rows.median IS NOT NULL"

static void col_text(sqlite3_stmt *st, int i, char *buf, size_t n)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    snprintf(buf, n, "%s", s ? (const char *)s : "");
}

/* A REAL column, NaN for NULL. */
static double col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

void kbc_hist_testbed_text(const kbc_hist_testbed *t, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "%s", t->gpu);
#define ADD(...)                                                                             \
    do {                                                                                     \
        if (used < n)                                                                        \
            used += (size_t)snprintf(buf + used, n - used, __VA_ARGS__);                     \
    } while (0)
    if (t->gpu_uuid[0])
        ADD(" (%s)", t->gpu_uuid);
    if (t->driver[0])
        ADD(", driver %s", t->driver);
    if (t->runtime[0])
        ADD(", runtime %s", t->runtime);
    if (t->cccl > 0)
        ADD(", CCCL %d.%d.%d", t->cccl / 1000000, t->cccl / 1000 % 1000, t->cccl % 1000);
    if (t->cublas[0])
        ADD(", cuBLAS %s", t->cublas);
    if (t->sm_max_mhz > 0)
        ADD(", SM %d MHz, memory %d MHz", t->sm_max_mhz, t->mem_max_mhz);
#undef ADD
}

static void read_testbed(sqlite3_stmt *st, int at, kbc_hist_testbed *t)
{
    memset(t, 0, sizeof *t);
    t->id = sqlite3_column_int64(st, at);
    col_text(st, at + 1, t->gpu, sizeof t->gpu);
    col_text(st, at + 2, t->gpu_uuid, sizeof t->gpu_uuid);
    col_text(st, at + 3, t->driver, sizeof t->driver);
    col_text(st, at + 4, t->runtime, sizeof t->runtime);
    t->cccl = sqlite3_column_int(st, at + 5);
    col_text(st, at + 6, t->cublas, sizeof t->cublas);
    t->sm_max_mhz = sqlite3_column_int(st, at + 7);
    t->mem_max_mhz = sqlite3_column_int(st, at + 8);
}

int kbc_history_series(kbc_history *h, const char *key, kbc_hist_series **out, size_t *n,
                       kbc_diag *d)
{
    /* Two texts rather than "?1 IS NULL OR rows.key = ?1", which SQLite
       answers by scanning every row: with the key, the rows_series index
       finds the series at once (one call per row of a report). */
#define SERIES_SELECT                                                                          \
    "SELECT rows.key, t.id, t.gpu, t.gpu_uuid, t.driver, t.runtime, t.cccl, t.cublas, "       \
    "t.sm_max_mhz, t.mem_max_mhz, "                                                            \
    "sum(" POINT_ROWS ") FROM rows JOIN testbeds t ON t.id = rows.testbed_id "
#define SERIES_ORDER " GROUP BY rows.key, t.id ORDER BY rows.key, t.id"
    static const char one[] = SERIES_SELECT "WHERE rows.key = ?1" SERIES_ORDER;
    static const char all[] = SERIES_SELECT SERIES_ORDER;
#undef SERIES_SELECT
#undef SERIES_ORDER
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(h->db, key ? one : all, -1, &st, NULL);
    size_t cap = 0;
    kbc_hist_series *s = NULL;
    if (rc == SQLITE_OK) {
        if (key)
            sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (*n == cap)
                s = kbc_xrealloc(s, (cap = cap ? 2 * cap : 64) * sizeof *s);
            kbc_hist_series *x = &s[(*n)++];
            x->key = kbc_xstrdup((const char *)sqlite3_column_text(st, 0));
            read_testbed(st, 1, &x->testbed);
            x->n_points = (size_t)sqlite3_column_int64(st, 10);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        kbc_hist_series_free(s, *n);
        *n = 0;
        return kbc_hist_fail(h, rc, "reading its series", d);
    }
    *out = s;
    return 0;
}

void kbc_hist_series_free(kbc_hist_series *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i].key);
    free(s);
}

int kbc_history_points(kbc_history *h, const char *key, int64_t testbed, kbc_hist_point **out,
                       size_t *n, kbc_diag *d)
{
    static const char sql[] =
        "SELECT runs.commit_rev, runs.commit_time, runs.started, runs.id, rows.median, "
        "rows.noise, rows.runs, rows.j_per_run, rows.j_lo, rows.j_hi "
        "FROM rows JOIN runs ON runs.id = rows.run_id "
        "WHERE rows.key = ?1 AND rows.testbed_id = ?2 AND " POINT_ROWS
        " ORDER BY runs.commit_time, runs.started, runs.id";
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    kbc_hist_point *p = NULL;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, testbed);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (*n == cap)
                p = kbc_xrealloc(p, (cap = cap ? 2 * cap : 64) * sizeof *p);
            kbc_hist_point *x = &p[(*n)++];
            memset(x, 0, sizeof *x);
            col_text(st, 0, x->commit, sizeof x->commit);
            x->commit_time = sqlite3_column_int64(st, 1);
            col_text(st, 2, x->started, sizeof x->started);
            x->run_id = sqlite3_column_int64(st, 3);
            x->median = sqlite3_column_double(st, 4);
            /* The interval of the median: noise is its half-width over
               the median (docs/output.md). */
            double noise = sqlite3_column_type(st, 5) == SQLITE_NULL
                               ? NAN
                               : sqlite3_column_double(st, 5);
            x->lo = x->median * (1 - noise);
            x->hi = x->median * (1 + noise);
            x->runs = (uint64_t)sqlite3_column_int64(st, 6);
            x->j_per_run = col_real(st, 7);
            x->j_lo = col_real(st, 8);
            x->j_hi = col_real(st, 9);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(p);
        *n = 0;
        return kbc_hist_fail(h, rc, "reading a series", d);
    }
    *out = p;
    return 0;
}

int kbc_history_runs(kbc_history *h, kbc_hist_run **out, size_t *n, kbc_diag *d)
{
    static const char sql[] =
        "SELECT runs.id, sha256, path, started, commit_rev, commit_source, kbench_git, host, "
        "(SELECT count(*) FROM rows WHERE rows.run_id = runs.id), plan_hash FROM runs "
        "ORDER BY commit_time DESC, started DESC, id DESC";
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    kbc_hist_run *r = NULL;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap)
            r = kbc_xrealloc(r, (cap = cap ? 2 * cap : 16) * sizeof *r);
        kbc_hist_run *x = &r[(*n)++];
        x->id = sqlite3_column_int64(st, 0);
        col_text(st, 1, x->sha256, sizeof x->sha256);
        col_text(st, 2, x->path, sizeof x->path);
        col_text(st, 3, x->started, sizeof x->started);
        col_text(st, 4, x->commit, sizeof x->commit);
        col_text(st, 5, x->commit_source, sizeof x->commit_source);
        col_text(st, 6, x->kbench_git, sizeof x->kbench_git);
        col_text(st, 7, x->host, sizeof x->host);
        x->n_rows = (size_t)sqlite3_column_int64(st, 8);
        col_text(st, 9, x->plan_hash, sizeof x->plan_hash);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_OK) {
        free(r);
        *n = 0;
        return kbc_hist_fail(h, rc, "reading its runs", d);
    }
    *out = r;
    return 0;
}

size_t kbc_history_steps(const kbc_hist_point *p, size_t n, kbc_hist_step **steps)
{
    *steps = NULL;
    if (n == 0)
        return 0;
    double *y = kbc_xmalloc(n * sizeof *y), *se = kbc_xmalloc(n * sizeof *se);
    for (size_t i = 0; i < n; i++) {
        y[i] = log(p[i].median);
        /* The interval's half-width on the log scale, as a standard
           error (a 95% interval is 1.96 of them each side). */
        se[i] = isfinite(p[i].hi) && p[i].hi > p[i].median
                    ? log(p[i].hi / p[i].median) / 1.96
                    : NAN;
    }
    kbc_stepfit fit;
    kbc_stepfit_run(y, se, n, 0, &fit);
    kbc_hist_step *s = kbc_xcalloc(fit.n_steps ? fit.n_steps : 1, sizeof *s);
    for (size_t j = 0; j < fit.n_steps; j++) {
        s[j].at = fit.at[j];
        s[j].before = exp(fit.level[j]);
        s[j].after = exp(fit.level[j + 1]);
        s[j].change = s[j].after / s[j].before - 1;
    }
    size_t m = fit.n_steps;
    /* Segment j (1 <= j < m) lies between steps j - 1 and j. */
    for (size_t j = 1; j < m; j++) {
        if (fit.at[j] != fit.at[j - 1] + 1)
            continue;
        double in = fabs(fit.level[j] - fit.level[j - 1]);
        double out = fabs(fit.level[j + 1] - fit.level[j]);
        double across = fabs(fit.level[j + 1] - fit.level[j - 1]);
        if (across < 0.5 * (in < out ? in : out))
            s[j - 1].lone = s[j].lone = 1;
    }
    kbc_stepfit_free(&fit);
    free(y);
    free(se);
    *steps = s;
    return m;
}

int kbc_history_commit_time(kbc_history *h, const char *rev, int64_t *t, kbc_diag *d)
{
    static const char sql[] = "SELECT min(commit_time) FROM runs WHERE "
                              "substr(commit_rev, 1, length(?1)) = ?1";
    sqlite3_stmt *st = NULL;
    int found = 0;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, rev, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
            *t = sqlite3_column_int64(st, 0);
            found = 1;
        }
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK)
        return kbc_hist_fail(h, rc, "looking a commit up", d);
    if (!found) {
        kbc_diag_set(d, "no run in %s has the commit '%s' (kbench history runs lists them)",
                     h->path, rev);
        return KBC_EXIT_USAGE;
    }
    return 0;
}
