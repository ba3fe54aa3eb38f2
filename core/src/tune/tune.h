/*
 * tune.h -- `kbench tune FILE -o DIR`: every experiment section of FILE
 * with a `tune` key is a tuning experiment.  Its swept parameters (but
 * those that name problems, tune_problem) and its selected variants (but
 * the library ones) are the search space, pruned by `constrain`; each
 * problem (a combination of the problem parameters' values) is searched on
 * its own by the strategy (search.h).
 *
 * A tuning run is a sweep whose points are chosen as it goes: each round
 * asks every problem's search for candidates and runs them through the
 * supervisor (supervisor.h, kbc_super_opts.picks) in workers, with their
 * containment, watchdog and --gpus, measured with few runs (tune_screen);
 * the best (tune_top) and the library variants of each problem are then
 * measured with the experiment's own settings.  A candidate plan() refuses
 * is recorded as invalid with the plugin's sentence and costs nothing; a
 * failed, crashed or timed-out one is recorded and never tried again.
 *
 * DIR holds the cache: DIR/screen/journal.jsonl and DIR/full/journal.jsonl
 * (journal.h), read again by every later tuning into DIR, which reuses
 * each measurement of the same point, plugin build and GPU model (and
 * says how many it reused).  --simulate JOURNAL_DIR replays a search from
 * such a folder without running anything.
 *
 * Outputs (tune_report.c): the table of what was tried, best first, with
 * the library in it, on stdout and in DIR/tried.csv; DIR/best.ini (a
 * section per problem that reruns the winner and the library);
 * DIR/best.json; DIR/trace.csv and the trace's gnuplot script.
 */
#ifndef KBENCH_TUNE_H
#define KBENCH_TUNE_H

#include <stddef.h>
#include <stdio.h>

#include "ini.h"
#include "loader.h"
#include "supervisor.h"

typedef struct kbc_tune_opts {
    const char *self;                /* the kbench binary the workers exec */
    const char *ini_path;
    const char *const *plugin_paths; /* --plugin-path, passed on */
    int n_plugin_paths;
    const char *experiment;          /* --experiment, --set: as for run */
    const char *const *sets;
    int n_sets;
    const char *out_dir;             /* -o DIR (required)               */
    const char *simulate;            /* --simulate DIR, or NULL          */
    int quiet;
    const kbc_gpu_pick *gpus;        /* --gpus: one worker each          */
    size_t n_gpus;
    int allow_shared;
    unsigned long long device_mem;   /* the smallest GPU's memory, or 0 */
    const char *command_line;
} kbc_tune_opts;

/* Tunes the file; prints the table on out and one sentence per problem
   on err.  Returns an exit code (util.h): 0 when every tuning found a
   passing best; 1 when a problem has none; 2 for a mistake in the file
   or the options (one sentence naming the file, line and key); 3 for an
   output that cannot be written; 130 when interrupted (what was measured
   is in the journals, and the outputs are written for it). */
int kbc_tune(const kbc_tune_opts *o, kbc_registry *reg, FILE *out, FILE *err);

#endif
