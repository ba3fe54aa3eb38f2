/*
 * supervisor.h -- `kbench run` as a supervisor: it runs every point in a
 * worker process (worker.h), one worker per GPU, and never touches CUDA
 * itself.  It is kbench's one scheduler: `kbench run` and `kbench tune`
 * run their points through it.  Each point is sent with its plan, as the
 * plan built here holds it (point_plan.h, request.h), so that no worker
 * calls plan() again.
 *
 * Points are handed out one at a time (the longest expected first when
 * several workers share the plan); with each, the worker is told which
 * point is likely next, so that its host half is made while this one's
 * GPU work is timed (prefetch.h).  Their rows are reported in plan
 * order, so that the table, CSV, JSON and markdown read as one process's
 * run.  A point whose worker dies (a signal, exit(), abort()), writes
 * something that is not a message, loses its CUDA context to a sticky
 * error, or runs past its watchdog is recorded as `crashed` or `timeout`
 * with the reason (and the plugin's last log lines); the worker is
 * replaced and the other variants of that point run again in the new one.
 *
 * With an output folder every finished point is appended to
 * DIR/journal.jsonl (journal.h) before it is reported; --resume skips the
 * points found there.  SIGINT and SIGTERM stop handing out points; the
 * running ones finish, everything is written, and the run exits 130; a
 * second signal stops the workers at once.
 */
#ifndef KBENCH_SUPERVISOR_H
#define KBENCH_SUPERVISOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "record.h"
#include "request.h"

/* An interrupted run exits with KBC_EXIT_INTERRUPTED (util.h). */

/* The progress line into line (n bytes): head, then name (the experiment
   and variant running), then " ...", the name cut with "~" so that the
   whole stays within columns - 1 (a line that wraps is not cleared by the
   next one's carriage return). */
void kbc_progress_fit(char *line, size_t n, const char *head, const char *name, int columns);

/* One GPU a worker is bound to, found through NVML (nvml.h). */
typedef struct kbc_gpu_pick {
    char uuid[96];
    char pci_bus_id[32];
    char name[96];
} kbc_gpu_pick;

typedef struct kbc_super_opts {
    kbc_request request;         /* what makes the workers' plan this
                                    run's, and how they behave (request.h);
                                    its quiet also silences the progress
                                    line here                             */
    struct kbc_journal *journal; /* DIR/journal.jsonl, opened by the
                                    caller (created, or read by --resume:
                                    its points are not run again), or NULL */
    int isolate_point;           /* a fresh worker for every point      */
    int sanitize_on_crash;       /* rerun a crashed CUDA variant once
                                    under compute-sanitizer memcheck     */
    /* --sanitize: the tool ("memcheck", ...) and the compute-sanitizer
       that runs it (kbc_sanitizer_find), or NULL.  Every variant of every
       point then runs alone in a worker started under it, and what it
       reports goes into that row (sanitize.c). */
    const char *sanitize_tool, *sanitizer;
    const kbc_gpu_pick *gpus;    /* one worker each; NULL: one worker on
                                    the default device ($KBENCH_DEVICE)  */
    size_t n_gpus;
    int shard_index, shard_count;/* count 0: the whole plan             */
    /* When picks is not NULL, only these n_picks points run (none: the
       workers start, say hello and stop) (kbench tune hands out its
       candidates this way), each with only the plugin variants whose bits
       are set in its mask (0: every selected variant), instead of the
       plan's or the shard's points. */
    const struct kbc_point_pick *picks;
    size_t n_picks;
    /* With picks: called once every point so far has finished and been
       fed to the sinks, for the next ones (*more, owned by the caller
       until the next call); the run ends when it returns 0.  The workers
       stay up between the calls.  NULL: none. */
    size_t (*more)(void *ctx, const struct kbc_point_pick **more);
    void *more_ctx;
    /* --timeline: where each worker's time went, as JSON lines (docs/cli.md,
       "The timeline"), written as the run goes; NULL: none.  The caller
       opens and closes it. */
    FILE *timeline;
    /* --costs: the measured seconds of the plan's points, for the shards,
       the order points are handed out in and the ETA (shard.h); NULL: the
       model. */
    const struct kbc_costs *costs;
} kbc_super_opts;

/* One point a run is limited to (kbc_super_opts.picks). */
typedef struct kbc_point_pick {
    uint32_t exp;
    uint64_t point;
    uint64_t mask;
} kbc_point_pick;

/* Resolves --gpus (spec: "all", or comma-separated NVML indices or UUIDs)
   through NVML into *picks (malloc'd, *n of them).  Refuses, with one
   sentence in why: a GPU that does not exist (naming those that do), one
   named twice unless allow_shared, models that differ unless allow_mixed,
   and a machine whose GPUs NVML cannot list.  *min_mem: the smallest
   memory among them (for the plan's size check).  Returns 0 or -1. */
int kbc_gpus_pick(const char *spec, int allow_mixed, int allow_shared, kbc_gpu_pick **picks,
                  size_t *n, unsigned long long *min_mem, char *why, size_t whyn);

/* The tools --sanitize takes, and whether tool is one of them. */
#define KBC_SANITIZE_TOOLS "memcheck, racecheck, synccheck or initcheck"
int kbc_sanitize_tool_ok(const char *tool);

/* The compute-sanitizer --sanitize runs, into path: the first found on
   $PATH, else the one in the bin folder of the CUDA toolkit kbench was
   built with (beside its nvcc).  Returns 0, or -1 with why set to one
   sentence saying where it looked and what to do. */
int kbc_sanitizer_find(char *path, size_t n, char *why, size_t whyn);

/* The exit status kbench asks compute-sanitizer for when it finds an
   error (--error-exitcode). */
#define KBC_SANITIZER_ERROR_EXIT 86

/* Quiet mode (kbench run -q) in this process: no progress line and only
   the plugins' warnings on stderr (the workers get -q from the request). */
void kbc_run_set_quiet(int quiet);

/* Runs plan's points (this shard's) in workers and feeds every sink.
   Returns an exit code (util.h; KBC_EXIT_INTERRUPTED when stopped by a
   signal). */
int kbc_supervise(const kbc_plan *plan, const kbc_super_opts *o, kbc_sink *sinks,
                  size_t n_sinks, const char *command_line);

#endif
