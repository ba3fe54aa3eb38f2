/*
 * history_cmd.h -- `kbench history ...` (add, rebuild, runs, list, show,
 * series, regressions) and the end of `kbench run --record`: the command
 * side of core/src/history (docs/history.md, docs/cli.md).
 */
#ifndef KBENCH_HISTORY_CMD_H
#define KBENCH_HISTORY_CMD_H

#include <stddef.h>
#include <stdio.h>

/* The options of the history commands, as typed (NULL: not given). */
typedef struct kbc_history_opts {
    const char *db;        /* --history FILE                        */
    const char *commit;    /* --commit REV                          */
    const char *since;     /* --since REV                           */
    const char *threshold; /* --threshold PCT                       */
    int csv;               /* --csv                                 */
    int interrupted;       /* --interrupted                         */
} kbc_history_opts;

/* The step a regression must exceed by default, in percent. */
#define KBC_HISTORY_THRESHOLD_PCT 2.0

/* `kbench history SUB ARGS...` with args[0] the subcommand.  Returns the
   exit code: 0, 1 (regressions found), 2 (usage, a file that is not a
   results file or not a kbench history, an unknown key or revision), 3
   (the database is damaged or cannot be written). */
int kbc_cmd_history(const char *const *args, size_t n, const kbc_history_opts *o, FILE *out,
                    FILE *err);

/* Adds the run just written to dir (dir/results.json) to the history,
   tagged with o->commit, else the git checkout of the current folder's
   HEAD, else kbench's own revision; the commit is kept in dir/commit.
   Returns 0 or an exit code after one sentence on err. */
int kbc_history_record(const char *dir, const kbc_history_opts *o, FILE *out, FILE *err);

#endif
