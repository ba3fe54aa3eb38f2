/*
 * history_db.h -- what the files of the history layer share: the open
 * database and the translation of SQLite's errors into one sentence and
 * an exit code.  Not for use outside core/src/history.
 */
#ifndef KBENCH_HISTORY_DB_H
#define KBENCH_HISTORY_DB_H

#include <sqlite3.h>

#include "history.h"

struct kbc_history {
    sqlite3 *db;
    char *path;
};

/* Sets d to "PATH: <doing>: <SQLite's words>" and returns the exit code
   that fits SQLite's result code rc: KBC_EXIT_USAGE for a file that is
   not a database, KBC_EXIT_SYSTEM for everything else (damaged, full,
   read-only, locked past the busy timeout). */
int kbc_hist_fail(const kbc_history *h, int rc, const char *doing, kbc_diag *d);

/* Runs sql (no results); returns SQLite's result code. */
int kbc_hist_exec(kbc_history *h, const char *sql);

#endif
