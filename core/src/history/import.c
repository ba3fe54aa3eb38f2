/*
 * import.c -- one run's results.json into the history: the run, the
 * testbed of each row, each row's median and noise, its energy per run
 * where it has energy, and its samples, in one transaction.  A run is its
 * file's SHA-256: the same bytes again are the same run, and add nothing.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commit.h"
#include "history_db.h"
#include "results_read.h"
#include "sha256.h"

/* "2026-11-22T11:27:57Z" as Unix seconds, or 0. */
static int64_t iso_seconds(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm))
        return 0;
    return (int64_t)timegm(&tm);
}

/* CUDA's integer version 13000 as "13.0"; "" when unknown. */
static const char *str_at(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* The row's key: as the file spells it ("key"), or, in a file written
   before rows carried one, made the same way from its experiment's
   plugin, its parameters in the file's order and its variant. */
static void row_key(const json_t *root, size_t i, const kbc_record *r, char *buf, size_t n)
{
    const json_t *row = json_array_get(json_object_get(root, "results"), i);
    const json_t *k = json_object_get(row, "key");
    if (json_is_string(k)) {
        snprintf(buf, n, "%s", json_string_value(k));
        return;
    }
    if (r->plugin[0] || r->n_params > 0) {
        kbc_record_key(r, buf, n);
        return;
    }
    const char *plugin = "";
    size_t e;
    const json_t *x;
    json_array_foreach(json_object_get(json_object_get(root, "config"), "experiments"), e, x)
        if (strcmp(str_at(x, "name"), r->experiment) == 0)
            plugin = str_at(x, "plugin");
    size_t used = (size_t)snprintf(buf, n, "%s/%s/", plugin, r->experiment);
    const char *name;
    const json_t *v;
    int first = 1;
    json_object_foreach((json_t *)json_object_get(row, "params"), name, v)
    {
        char val[128];
        if (json_is_integer(v))
            snprintf(val, sizeof val, "%lld", (long long)json_integer_value(v));
        else if (json_is_real(v))
            snprintf(val, sizeof val, "%.17g", json_real_value(v));
        else if (json_is_string(v))
            snprintf(val, sizeof val, "%s", json_string_value(v));
        else
            snprintf(val, sizeof val, "%s", json_is_true(v) ? "true" : "false");
        if (used < n)
            used += (size_t)snprintf(buf + used, n - used, "%s%s=%s", first ? "" : ",", name,
                                     val);
        first = 0;
    }
    if (used < n)
        snprintf(buf + used, n - used, "/%s", r->variant);
}

static int exists(kbc_history *h, const char *sha, int *rc)
{
    sqlite3_stmt *st = NULL;
    int there = 0;
    *rc = sqlite3_prepare_v2(h->db, "SELECT 1 FROM runs WHERE sha256 = ?", -1, &st, NULL);
    if (*rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
        *rc = sqlite3_step(st);
        there = *rc == SQLITE_ROW;
        *rc = *rc == SQLITE_ROW || *rc == SQLITE_DONE ? SQLITE_OK : *rc;
    }
    sqlite3_finalize(st);
    return there;
}

/* The id of testbed t, inserted when new. */
static int64_t testbed_id(kbc_history *h, const kbc_hist_testbed *t, int *rc)
{
    static const char ins[] =
        "INSERT OR IGNORE INTO testbeds (gpu, gpu_uuid, driver, runtime, cccl, cublas, "
        "sm_max_mhz, mem_max_mhz) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
    static const char sel[] =
        "SELECT id FROM testbeds WHERE gpu = ?1 AND gpu_uuid = ?2 AND driver = ?3 AND "
        "runtime = ?4 AND cccl = ?5 AND cublas = ?6 AND sm_max_mhz = ?7 AND mem_max_mhz = ?8";
    int64_t id = -1;
    for (int pass = 0; pass < 2; pass++) {
        sqlite3_stmt *st = NULL;
        *rc = sqlite3_prepare_v2(h->db, pass ? sel : ins, -1, &st, NULL);
        if (*rc != SQLITE_OK)
            return -1;
        sqlite3_bind_text(st, 1, t->gpu, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, t->gpu_uuid, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, t->driver, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, t->runtime, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 5, t->cccl);
        sqlite3_bind_text(st, 6, t->cublas, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 7, t->sm_max_mhz);
        sqlite3_bind_int(st, 8, t->mem_max_mhz);
        *rc = sqlite3_step(st);
        if (pass && *rc == SQLITE_ROW)
            id = sqlite3_column_int64(st, 0);
        *rc = *rc == SQLITE_ROW || *rc == SQLITE_DONE ? SQLITE_OK : *rc;
        sqlite3_finalize(st);
        if (*rc != SQLITE_OK)
            return -1;
    }
    return id;
}

/* The run's row and everything below it; returns SQLite's result code. */
static int insert_run(kbc_history *h, const char *path, const char *sha, const json_t *root,
                      const kbc_run_doc *doc, const kbc_hist_commit *c)
{
    static const char ins_run[] =
        "INSERT INTO runs (sha256, path, started, finished, exit_code, kbench_version, "
        "kbench_git, commit_rev, commit_time, commit_source, plan_hash, host, command) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
    static const char ins_row[] =
        "INSERT INTO rows (run_id, testbed_id, key, status, median, noise, runs, j_per_run, "
        "j_lo, j_hi, watts) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
    static const char ins_sample[] = "INSERT INTO samples (row_id, idx, seconds) VALUES (?, ?, ?)";
    const json_t *kb = json_object_get(root, "kbench");
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(h->db, ins_run, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    const char *fin = str_at(root, "finished");
    sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, str_at(root, "started"), -1, SQLITE_STATIC);
    if (*fin)
        sqlite3_bind_text(st, 4, fin, -1, SQLITE_STATIC);
    if (doc->finished)
        sqlite3_bind_int(st, 5, doc->exit_code);
    sqlite3_bind_text(st, 6, str_at(kb, "version"), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, str_at(kb, "git"), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, c->rev, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 9, c->time);
    sqlite3_bind_text(st, 10, c->source, -1, SQLITE_STATIC);
    if (doc->has_plan)
        sqlite3_bind_text(st, 11, doc->plan_hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 12, doc->has_machine ? doc->machine.host : "", -1, SQLITE_STATIC);
    if (doc->command)
        sqlite3_bind_text(st, 13, doc->command, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return rc;
    int64_t run_id = sqlite3_last_insert_rowid(h->db);

    /* The testbed: what the file says about the GPU and the libraries.
       Files written before kbench kept the GPU's UUID, CCCL's or cuBLAS's
       version leave those fields empty. */
    kbc_hist_testbed tb;
    memset(&tb, 0, sizeof tb);
    const kbc_machine *m = &doc->machine;
    snprintf(tb.gpu, sizeof tb.gpu, "%s", doc->has_machine && m->has_gpu ? m->name : "none");
    kbc_cuda_version_text(m->driver_version, tb.driver, sizeof tb.driver);
    kbc_cuda_version_text(m->runtime_version, tb.runtime, sizeof tb.runtime);
    tb.cccl = doc->cccl_version;
    snprintf(tb.cublas, sizeof tb.cublas, "%s",
             str_at(json_object_get(root, "provenance"), "cublas_version"));
    tb.sm_max_mhz = m->clock_khz / 1000;
    tb.mem_max_mhz = m->mem_clock_khz / 1000;

    sqlite3_stmt *row = NULL, *smp = NULL;
    rc = sqlite3_prepare_v2(h->db, ins_row, -1, &row, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(h->db, ins_sample, -1, &smp, NULL);
    /* The rows of a run differ in their testbed only by the GPU's UUID (one
       a worker), mostly not at all: it is looked up when that changes. */
    int64_t tid = -1;
    for (size_t i = 0; i < doc->n_recs && rc == SQLITE_OK; i++) {
        const kbc_record *r = &doc->recs[i];
        if (tid < 0 || strcmp(tb.gpu_uuid, r->gpu_uuid) != 0) {
            snprintf(tb.gpu_uuid, sizeof tb.gpu_uuid, "%s", r->gpu_uuid);
            tid = testbed_id(h, &tb, &rc);
            if (rc != SQLITE_OK)
                break;
        }
        char key[2048];
        row_key(root, i, r, key, sizeof key);
        sqlite3_reset(row);
        sqlite3_clear_bindings(row);
        sqlite3_bind_int64(row, 1, run_id);
        sqlite3_bind_int64(row, 2, tid);
        sqlite3_bind_text(row, 3, key, -1, SQLITE_TRANSIENT);
        /* A row the integrity checks flagged joins no series. */
        sqlite3_bind_text(row, 4,
                          kbc_integrity_flagged(r) ? "suspect" : kbc_outcome_name(r->outcome),
                          -1, SQLITE_STATIC);
        if (isfinite(r->time.median))
            sqlite3_bind_double(row, 5, r->time.median);
        if (isfinite(r->noise))
            sqlite3_bind_double(row, 6, r->noise);
        sqlite3_bind_int64(row, 7, (int64_t)r->time.n);
        if (kbc_record_has_energy(r)) {
            const kbc_rec_energy *e = &r->energy;
            sqlite3_bind_double(row, 8, e->j_per_run);
            if (isfinite(e->j_lo) && isfinite(e->j_hi)) {
                sqlite3_bind_double(row, 9, e->j_lo);
                sqlite3_bind_double(row, 10, e->j_hi);
            }
            if (isfinite(e->watts))
                sqlite3_bind_double(row, 11, e->watts);
        }
        rc = sqlite3_step(row);
        if ((rc & 0xff) == SQLITE_CONSTRAINT) {
            rc = SQLITE_OK; /* a key twice in one file: the first row counts */
            continue;
        }
        if (rc != SQLITE_DONE)
            break;
        rc = SQLITE_OK;
        int64_t row_id = sqlite3_last_insert_rowid(h->db);
        for (size_t k = 0; k < r->n_samples && rc == SQLITE_OK; k++) {
            if (!isfinite(r->samples[k]))
                continue;
            sqlite3_reset(smp);
            sqlite3_bind_int64(smp, 1, row_id);
            sqlite3_bind_int64(smp, 2, (int64_t)k);
            sqlite3_bind_double(smp, 3, r->samples[k]);
            rc = sqlite3_step(smp);
            rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        }
    }
    sqlite3_finalize(row);
    sqlite3_finalize(smp);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int kbc_history_add(kbc_history *h, const char *path, const kbc_hist_commit *commit, int *added,
                    kbc_diag *d)
{
    *added = 0;
    char sha[65], why[600];
    if (kbc_sha256_file(path, sha, why, sizeof why) != 0) {
        kbc_diag_set(d, "%s", why);
        return KBC_EXIT_USAGE;
    }
    int rc;
    if (exists(h, sha, &rc))
        return 0;
    if (rc != SQLITE_OK)
        return kbc_hist_fail(h, rc, "looking the run up", d);
    json_t *root = kbc_results_load(path, d);
    if (!root)
        return KBC_EXIT_USAGE;
    kbc_run_doc doc;
    if (kbc_run_doc_from_json(root, path, &doc, d) != 0) {
        json_decref(root);
        return KBC_EXIT_USAGE;
    }
    if (!doc.finished) {
        kbc_diag_set(d, "%s is of a run that has not finished (still going, or cut short: "
                     "kbench run --resume finishes it), so it is not added", path);
        kbc_run_doc_free(&doc);
        json_decref(root);
        return KBC_EXIT_USAGE;
    }
    const char *started = str_at(root, "started");
    if (!*started) {
        kbc_diag_set(d, "%s has no \"started\" time, so it cannot be placed in the history",
                     path);
        kbc_run_doc_free(&doc);
        json_decref(root);
        return KBC_EXIT_USAGE;
    }

    /* The commit: as given, else as recorded beside the file, else the
       revision of kbench that made the file.  A commit whose time git
       does not know is placed at the run's start. */
    kbc_hist_commit c;
    memset(&c, 0, sizeof c);
    if (commit) {
        c = *commit;
    } else if (kbc_commit_read_beside(path, &c) != 0) {
        snprintf(c.rev, sizeof c.rev, "%s", str_at(json_object_get(root, "kbench"), "git"));
        snprintf(c.source, sizeof c.source, "kbench");
        char plain[sizeof c.rev];
        snprintf(plain, sizeof plain, "%.*s", (int)strcspn(c.rev, "-"), c.rev);
        kbc_hist_commit g;
        if (kbc_commit_from_git(plain, &g) == 0)
            c.time = g.time;
    }
    if (!c.rev[0])
        snprintf(c.rev, sizeof c.rev, "unknown");
    if (c.time <= 0)
        c.time = iso_seconds(started);

    /* The file as an absolute path, so that `runs` says where it is from
       anywhere. */
    char *abs = realpath(path, NULL);
    int code = 0;
    if ((rc = kbc_hist_exec(h, "BEGIN IMMEDIATE")) != SQLITE_OK) {
        code = kbc_hist_fail(h, rc, "locking it to add a run", d);
    } else if (exists(h, sha, &rc)) {
        kbc_hist_exec(h, "ROLLBACK"); /* another process added it meanwhile */
    } else if (rc != SQLITE_OK || (rc = insert_run(h, abs ? abs : path, sha, root, &doc, &c)) != SQLITE_OK ||
               (rc = kbc_hist_exec(h, "COMMIT")) != SQLITE_OK) {
        code = kbc_hist_fail(h, rc, "adding a run", d);
        kbc_hist_exec(h, "ROLLBACK");
    } else {
        *added = 1;
    }
    free(abs);
    kbc_run_doc_free(&doc);
    json_decref(root);
    return code;
}
