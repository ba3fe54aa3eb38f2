/*
 * runner.h -- running a plan: for each point, set up once, then for each
 * variant poison, check, warm up, time, and record; then tear down.
 */
#ifndef KBENCH_RUNNER_H
#define KBENCH_RUNNER_H

#include "config.h"
#include "gpu.h"
#include "stats.h"

typedef enum kbc_outcome {
    KBC_PASS = 0,    /* ran and verified                         */
    KBC_FAIL = 1,    /* ran, but verification failed             */
    KBC_ERROR = 2,   /* a plugin call or CUDA call failed        */
    KBC_SKIPPED = 3  /* could not run here (no GPU, too big ...) */
} kbc_outcome;

typedef struct kbc_row {
    const kbc_experiment *exp;
    uint64_t point;          /* index within exp                      */
    const kb_value *values;  /* the point's parameter values          */
    uint32_t variant;        /* index into exp->plugin->desc->variants */
    kbc_outcome outcome;
    char reason[512];        /* for ERROR and SKIPPED, one sentence    */
    kb_work work;
    kb_check check;
    kbc_stats time;          /* seconds                                */
    double gbps;             /* (bytes_read + bytes_written) / median, 1e9 */
    double gflops;           /* NaN when flops == 0                    */
    double items_per_s;      /* NaN when items == 0                    */
    double pct_copy;         /* gbps / copy ceiling * 100, or NaN      */
    double speedup_baseline; /* baseline median / this median, or NaN  */
    double speedup_cpu;      /* first CPU variant's median / this one  */
    double speedup_reference;/* reference median / this one            */
} kbc_row;

typedef struct kbc_run_info {
    const kbc_plan *plan;
    const kbc_machine *machine;
    double copy_gbps; /* device-to-device copy ceiling, or 0 */
    const char *command_line;
} kbc_run_info;

/* A reporter.  point() gets all rows of one point at once (so a table can
   group them and speed-ups are known); it should write them out at once, so
   that a crash later loses nothing already reported. */
typedef struct kbc_sink {
    void *ctx;
    int (*begin)(void *ctx, const kbc_run_info *info);
    int (*point)(void *ctx, const kbc_row *rows, size_t n);
    int (*end)(void *ctx, int exit_code);
    void (*destroy)(void *ctx);
} kbc_sink;

/* Runs the plan and feeds every sink.  Returns an exit code (util.h). */
int kbc_run_plan(const kbc_plan *plan, const kbc_machine *m, kbc_sink *sinks, size_t n_sinks,
                 const char *command_line);

/* Quiet mode (kbench run -q): no progress line and only the plugins'
   warnings on stderr.  Off by default. */
void kbc_run_set_quiet(int quiet);

#endif
