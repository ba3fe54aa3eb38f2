/*
 * history.c -- opening a kbench history: where it lives, telling it from
 * other files, creating its tables, upgrading an older layout, and the
 * settings that let several processes add to it at once (WAL, a busy
 * timeout, one IMMEDIATE transaction per import).  docs/history.md
 * describes the tables.
 */
#define _GNU_SOURCE
#include "history_db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long a writer waits for another one to finish, in milliseconds:
   an import of a large run holds the lock for a second or two. */
#define BUSY_TIMEOUT_MS 60000

/* The tables of layout version 1.  Each later version is a migration
   below, so a database of any version is brought to the current one by
   the same steps, and a new database takes them all. */
static const char schema_v1[] =
    "CREATE TABLE testbeds ("
    "  id INTEGER PRIMARY KEY,"
    "  gpu TEXT NOT NULL, gpu_uuid TEXT NOT NULL, driver TEXT NOT NULL,"
    "  runtime TEXT NOT NULL, cccl INTEGER NOT NULL, cublas TEXT NOT NULL,"
    "  sm_max_mhz INTEGER NOT NULL, mem_max_mhz INTEGER NOT NULL,"
    "  UNIQUE (gpu, gpu_uuid, driver, runtime, cccl, cublas, sm_max_mhz, mem_max_mhz));"
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY,"
    "  sha256 TEXT NOT NULL UNIQUE,"
    "  path TEXT NOT NULL,"
    "  started TEXT NOT NULL, finished TEXT, exit_code INTEGER,"
    "  kbench_version TEXT NOT NULL, kbench_git TEXT NOT NULL,"
    "  commit_rev TEXT NOT NULL, commit_time INTEGER NOT NULL,"
    "  plan_hash TEXT, host TEXT NOT NULL, command TEXT);"
    "CREATE TABLE rows ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  testbed_id INTEGER NOT NULL REFERENCES testbeds(id),"
    "  key TEXT NOT NULL, status TEXT NOT NULL,"
    "  median REAL, noise REAL, runs INTEGER NOT NULL,"
    "  UNIQUE (run_id, key));"
    "CREATE INDEX rows_series ON rows (key, testbed_id);"
    "CREATE TABLE samples ("
    "  row_id INTEGER NOT NULL REFERENCES rows(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL, seconds REAL NOT NULL,"
    "  PRIMARY KEY (row_id, idx)) WITHOUT ROWID;";

/* Version 1 -> 2: where a run's commit came from (--commit, the git
   checkout, or kbench's own revision); runs of version 1 say "unknown". */
static const char migrate_v2[] =
    "ALTER TABLE runs ADD COLUMN commit_source TEXT NOT NULL DEFAULT 'unknown';";

/* Version 2 -> 3: each row's energy per run beside its time (the median
   over its energy windows, that median's 95% interval, and the windows'
   average power; docs/energy.md); NULL where a row had no energy, and in
   rows added before (kbench history rebuild reads them again). */
static const char migrate_v3[] =
    "ALTER TABLE rows ADD COLUMN j_per_run REAL;"
    "ALTER TABLE rows ADD COLUMN j_lo REAL;"
    "ALTER TABLE rows ADD COLUMN j_hi REAL;"
    "ALTER TABLE rows ADD COLUMN watts REAL;";

/* migrations[v] takes version v to v + 1 (migrations[0] creates). */
static const char *const migrations[KBC_HISTORY_VERSION] = {schema_v1, migrate_v2, migrate_v3};

int kbc_hist_exec(kbc_history *h, const char *sql)
{
    return sqlite3_exec(h->db, sql, NULL, NULL, NULL);
}

int kbc_hist_fail(const kbc_history *h, int rc, const char *doing, kbc_diag *d)
{
    int prim = rc & 0xff;
    const char *what = h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(rc);
    if (prim == SQLITE_NOTADB) {
        kbc_diag_set(d, "%s is not a kbench history (not a SQLite database at all); name "
                     "another file with --history or KBENCH_HISTORY", h->path);
        return KBC_EXIT_USAGE;
    }
    if (prim == SQLITE_CORRUPT)
        kbc_diag_set(d, "%s is damaged (%s while %s); recreate it from the run files with "
                     "kbench history rebuild DIR...", h->path, what, doing);
    else if (prim == SQLITE_READONLY || prim == SQLITE_CANTOPEN || prim == SQLITE_PERM)
        kbc_diag_set(d, "%s cannot be written (%s while %s)", h->path, what, doing);
    else
        kbc_diag_set(d, "%s: %s while %s", h->path, what, doing);
    return KBC_EXIT_SYSTEM;
}

char *kbc_history_path(const char *flag, kbc_diag *d)
{
    if (flag)
        return kbc_xstrdup(flag);
    const char *env = getenv("KBENCH_HISTORY");
    if (env && *env)
        return kbc_xstrdup(env);
    const char *xdg = getenv("XDG_DATA_HOME");
    if (xdg && xdg[0] == '/') /* the XDG rule: a relative value is ignored */
        return kbc_xasprintf("%s/kbench/history.db", xdg);
    const char *home = getenv("HOME");
    if (!home || !*home) {
        kbc_diag_set(d, "no history database: HOME, XDG_DATA_HOME and KBENCH_HISTORY are all "
                     "unset; name one with --history FILE");
        return NULL;
    }
    return kbc_xasprintf("%s/.local/share/kbench/history.db", home);
}

/* mkdir -p of the folder that holds path. */
static int make_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    char *dir = kbc_xstrndup(path, (size_t)(slash - path));
    int r = kbc_make_dirs(dir);
    free(dir);
    return r;
}

/* One integer from a query of one row; rc is SQLite's result. */
static int64_t query_int(kbc_history *h, const char *sql, int *rc)
{
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    *rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);
    if (*rc == SQLITE_OK) {
        *rc = sqlite3_step(st);
        if (*rc == SQLITE_ROW) {
            v = sqlite3_column_int64(st, 0);
            *rc = SQLITE_OK;
        } else if (*rc == SQLITE_DONE) {
            *rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return v;
}

/* Reads the file's identity: 0 when it is a kbench history (or empty,
   *fresh then 1), else an exit code with d set. */
static int identify_in(kbc_history *h, int *fresh, int64_t *version, kbc_diag *d);

/* The three readings come from one snapshot (one read transaction, unless
   the caller holds one), so that another process creating the file in
   between cannot show tables without their header. */
static int identify(kbc_history *h, int *fresh, int64_t *version, kbc_diag *d)
{
    int own = sqlite3_get_autocommit(h->db) && kbc_hist_exec(h, "BEGIN") == SQLITE_OK;
    int code = identify_in(h, fresh, version, d);
    if (own)
        kbc_hist_exec(h, "COMMIT");
    return code;
}

static int identify_in(kbc_history *h, int *fresh, int64_t *version, kbc_diag *d)
{
    int rc;
    int64_t app = query_int(h, "PRAGMA application_id", &rc);
    if (rc != SQLITE_OK)
        return kbc_hist_fail(h, rc, "reading its header", d);
    int64_t tables = query_int(h, "SELECT count(*) FROM sqlite_master", &rc);
    if (rc != SQLITE_OK)
        return kbc_hist_fail(h, rc, "reading its tables", d);
    *version = query_int(h, "PRAGMA user_version", &rc);
    if (rc != SQLITE_OK)
        return kbc_hist_fail(h, rc, "reading its version", d);
    *fresh = app == 0 && tables == 0;
    if (!*fresh && app != KBC_HISTORY_APP_ID) {
        kbc_diag_set(d, "%s is a SQLite database of another program, not a kbench history; name "
                     "another file with --history or KBENCH_HISTORY", h->path);
        return KBC_EXIT_USAGE;
    }
    if (*version > KBC_HISTORY_VERSION) {
        kbc_diag_set(d, "%s has layout version %lld, newer than this kbench's %d; use a newer "
                     "kbench, or rebuild an own history from the run files", h->path,
                     (long long)*version, KBC_HISTORY_VERSION);
        return KBC_EXIT_USAGE;
    }
    return 0;
}

/* Creates or upgrades the tables in one transaction, so that two
   processes opening a new file at once create it once. */
static int bring_up(kbc_history *h, kbc_diag *d)
{
    int rc = kbc_hist_exec(h, "BEGIN IMMEDIATE");
    if (rc != SQLITE_OK)
        return kbc_hist_fail(h, rc, "locking it", d);
    int fresh;
    int64_t version;
    int code = identify(h, &fresh, &version, d);
    for (int64_t v = fresh ? 0 : version; code == 0 && v < KBC_HISTORY_VERSION; v++) {
        if ((rc = kbc_hist_exec(h, migrations[v])) != SQLITE_OK)
            code = kbc_hist_fail(h, rc, v == 0 ? "creating its tables" : "upgrading its layout",
                                 d);
    }
    if (code == 0 && (fresh || version < KBC_HISTORY_VERSION)) {
        char sql[128];
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d",
                 KBC_HISTORY_APP_ID, KBC_HISTORY_VERSION);
        if ((rc = kbc_hist_exec(h, sql)) != SQLITE_OK)
            code = kbc_hist_fail(h, rc, "writing its version", d);
    }
    if (code == 0 && (rc = kbc_hist_exec(h, "COMMIT")) != SQLITE_OK)
        code = kbc_hist_fail(h, rc, "writing its tables", d);
    if (code != 0)
        kbc_hist_exec(h, "ROLLBACK");
    return code;
}

int kbc_history_open(const char *path, int write, kbc_history **out, kbc_diag *d)
{
    *out = NULL;
    kbc_history *h = kbc_xcalloc(1, sizeof *h);
    h->path = kbc_xstrdup(path);
    struct stat st;
    int exists = stat(path, &st) == 0;
    int code = 0;
    if (exists && !S_ISREG(st.st_mode)) {
        kbc_diag_set(d, "%s is not a file, so not a kbench history", path);
        code = KBC_EXIT_USAGE;
        goto fail;
    }
    if (!exists && !write) {
        kbc_diag_set(d, "%s does not exist: no run was added yet (kbench history add DIR)", path);
        code = KBC_EXIT_USAGE;
        goto fail;
    }
    /* A file nobody may write is read-only for kbench too, also when run
       by root (whom the system would let write it). */
    if (write && exists && ((st.st_mode & 0222) == 0 || access(path, W_OK) != 0)) {
        kbc_diag_set(d, "%s is read-only, so no run can be added to it; make it writable "
                     "(chmod u+w) or name another file with --history", path);
        code = KBC_EXIT_SYSTEM;
        goto fail;
    }
    if (!exists && make_parent(path) != 0) {
        kbc_diag_set(d, "cannot create the folder of %s: %s", path, strerror(errno));
        code = KBC_EXIT_SYSTEM;
        goto fail;
    }
    int flags = write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    int rc = sqlite3_open_v2(path, &h->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        code = kbc_hist_fail(h, rc, "opening it", d);
        goto fail;
    }
    sqlite3_extended_result_codes(h->db, 1);
    sqlite3_busy_timeout(h->db, BUSY_TIMEOUT_MS);
    int fresh;
    int64_t version;
    if ((code = identify(h, &fresh, &version, d)) != 0)
        goto fail;
    if (!write && fresh) {
        kbc_diag_set(d, "%s is empty: no run was added yet (kbench history add DIR)", path);
        code = KBC_EXIT_USAGE;
        goto fail;
    }
    if (!write && version < KBC_HISTORY_VERSION) {
        kbc_diag_set(d, "%s has the older layout version %lld; kbench history add (of any run) "
                     "upgrades it to version %d", path, (long long)version, KBC_HISTORY_VERSION);
        code = KBC_EXIT_USAGE;
        goto fail;
    }
    if (write) {
        /* WAL: readers never block the writer, and a writer's commit is
           one append; the mode is kept in the file. */
        /* SQLite does not call the busy handler for this pragma while
           another connection sets up a new file (two first adders at
           once): it is retried here within the same timeout. */
        for (int waited = 0;; waited += 10) {
            rc = kbc_hist_exec(h, "PRAGMA journal_mode = WAL");
            if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
                break;
            if (waited >= BUSY_TIMEOUT_MS)
                break;
            usleep(10000);
        }
        if (rc != SQLITE_OK) {
            code = kbc_hist_fail(h, rc, "turning on its write-ahead log", d);
            goto fail;
        }
        if ((code = bring_up(h, d)) != 0)
            goto fail;
    }
    kbc_hist_exec(h, "PRAGMA foreign_keys = ON");
    *out = h;
    return 0;
fail:
    kbc_history_close(h);
    return code;
}

void kbc_history_close(kbc_history *h)
{
    if (!h)
        return;
    sqlite3_close(h->db);
    free(h->path);
    free(h);
}
