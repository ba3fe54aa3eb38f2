/*
 * history.h -- results over time: every run kept in a SQLite database
 * (docs/history.md), its rows grouped into series (one row key on one
 * testbed), and the steps of each series found across commits.  The
 * commands are in cli/history_cmd.c; this is the API they, and any other
 * reader (an HTML report), call.
 *
 * The run files stay the source of truth: a run is imported from its
 * results.json, identified by the SHA-256 of that file's bytes, so that
 * importing it again changes nothing and the database can be rebuilt.
 */
#ifndef KBENCH_HISTORY_H
#define KBENCH_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* The database layout this code writes (PRAGMA user_version); an older
   one is upgraded when opened for writing, a newer one refused. */
#define KBC_HISTORY_VERSION 3
/* PRAGMA application_id of a kbench history: "kbhi". */
#define KBC_HISTORY_APP_ID 0x6b626869

typedef struct kbc_history kbc_history;

/* The database a command uses: `flag` (--history) when not NULL, else
   $KBENCH_HISTORY, else $XDG_DATA_HOME/kbench/history.db, else
   ~/.local/share/kbench/history.db.  Returns a malloc'd path, or NULL with
   d set when none can be made (no HOME). */
char *kbc_history_path(const char *flag, kbc_diag *d);

/* Opens the database at path: for writing (creating it and its folder
   when missing, upgrading an older layout), or for reading (it must
   exist).  Returns 0 with *h set, or an exit code (util.h) with d set to
   one sentence: KBC_EXIT_USAGE for a file that is not a kbench history
   (another program's database, not SQLite at all) or one of a newer
   layout; KBC_EXIT_SYSTEM for one that is damaged, cannot be read, or
   cannot be written when writing.  The file is left untouched on error. */
int kbc_history_open(const char *path, int write, kbc_history **h, kbc_diag *d);
void kbc_history_close(kbc_history *h);

/* The commit a run measured: the revision of the code under test, when
   it was committed (Unix seconds; 0 when unknown), and where the
   revision came from ("option", "git", "kbench": docs/history.md). */
typedef struct kbc_hist_commit {
    char rev[80];
    int64_t time;
    char source[16];
} kbc_hist_commit;

/* kbc_history_add's flags: also add a run that was interrupted (exit
   code KBC_EXIT_INTERRUPTED), whose rows are only the points that
   finished before Ctrl-C. */
#define KBC_HIST_ADD_INTERRUPTED 1u

/* Imports the run whose results.json is at path.  commit: the revision to
   tag it with, or NULL to take the one recorded beside the file (a
   `commit` file written by `kbench run --record`), else kbench's own
   revision from the file.  *added is 1 when the run is new, 0 when it was
   there already (nothing changes).  Returns 0, or an exit code with d
   set (KBC_EXIT_USAGE: the file is not a readable results.json, or is
   of a run that has not finished: its file would still change; or of a
   run that was interrupted, without KBC_HIST_ADD_INTERRUPTED in flags:
   *added is then -1). */
int kbc_history_add(kbc_history *h, const char *path, const kbc_hist_commit *commit,
                    unsigned flags, int *added, kbc_diag *d);

/* A testbed: what a time depends on besides the code. */
typedef struct kbc_hist_testbed {
    int64_t id;
    char gpu[256];        /* the model, or "none"              */
    char gpu_uuid[96];    /* "" when the file did not say      */
    char driver[16];      /* CUDA driver "13.0", or ""         */
    char runtime[16];     /* CUDA runtime "13.0", or ""        */
    int cccl;             /* CCCL_VERSION, 0 unknown           */
    char cublas[16];      /* "13.0.2", or ""                   */
    int sm_max_mhz, mem_max_mhz; /* the clocks' maxima, 0 unknown */
} kbc_hist_testbed;

/* "NVIDIA H200 (GPU-5a..), driver 13.0, runtime 13.0, CCCL 3.0.1, SM 1980 MHz" */
void kbc_hist_testbed_text(const kbc_hist_testbed *t, char *buf, size_t n);

/* A series: one row key on one testbed, with its count of points (runs
   in which the row passed with a median). */
typedef struct kbc_hist_series {
    char *key;
    kbc_hist_testbed testbed;
    size_t n_points;
} kbc_hist_series;

/* Every series (key NULL) or those of one key, ordered by key and
   testbed.  Returns 0 with *s (free with kbc_hist_series_free), or an
   exit code with d set. */
int kbc_history_series(kbc_history *h, const char *key, kbc_hist_series **s, size_t *n,
                       kbc_diag *d);
void kbc_hist_series_free(kbc_hist_series *s, size_t n);

/* One point of a series: one run's median of the row, with the 95%
   interval of that median, in commit order; and beside it the row's
   energy per run in that run, where it had energy. */
typedef struct kbc_hist_point {
    char commit[80];
    int64_t commit_time; /* Unix seconds; 0 unknown                   */
    char started[32];    /* the run's start, "2026-11-22T11:27:57Z"   */
    int64_t run_id;
    double median, lo, hi; /* seconds; lo and hi NaN when unknown   */
    uint64_t runs;       /* timed runs behind the median              */
    double j_per_run, j_lo, j_hi; /* joules per run and its 95% interval
                            (the energy windows'); NaN where the row had
                            no energy (kbc_record_has_energy), or was
                            added at layout 2 or before               */
} kbc_hist_point;

/* The points of one series ordered by commit time, then start time.
   Returns 0 with *p (free()), or an exit code with d set. */
int kbc_history_points(kbc_history *h, const char *key, int64_t testbed, kbc_hist_point **p,
                       size_t *n, kbc_diag *d);

/* The commit time of the earliest run whose commit is rev or starts with
   it (an abbreviated hash).  Returns 0 with *t set, KBC_EXIT_USAGE with d
   set when no run has such a commit, or another exit code. */
int kbc_history_commit_time(kbc_history *h, const char *rev, int64_t *t, kbc_diag *d);

/* The runs in the database, newest first. */
typedef struct kbc_hist_run {
    int64_t id;
    char sha256[65];
    char path[1024];
    char started[32];
    char commit[80];
    char commit_source[16];
    char kbench_git[64];
    char host[256];
    size_t n_rows;
    char plan_hash[65];   /* the plan's identity (shard.h), "" unknown */
} kbc_hist_run;
int kbc_history_runs(kbc_history *h, kbc_hist_run **r, size_t *n, kbc_diag *d);

/* A step in a series: between points at - 1 and at, the level changed
   from `before` to `after` (seconds: the fitted segments' levels, each
   the weighted geometric mean of its points' medians);
   change = after / before - 1 (positive: slower). */
typedef struct kbc_hist_step {
    size_t at;
    double before, after, change;
    /* The step leads into or out of a lone run: a segment of one point
       (not the newest) whose neighbours' levels are nearer to each other
       than to it (within half the smaller jump).  One slow run that the
       next run undoes is an outlier (a throttled GPU, a busy machine),
       not a change of the code: regressions does not list such steps. */
    int lone;
} kbc_hist_step;

/* The steps of a series' points (stepfit.h), all of them, whatever their
   size.  Returns the count, with *steps malloc'd (free()). */
size_t kbc_history_steps(const kbc_hist_point *p, size_t n, kbc_hist_step **steps);

#endif
