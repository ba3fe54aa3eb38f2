/*
 * measure.h -- measurement: the warm-up runs, then timed runs until `runs`
 * are done or the budget is spent (at least one), each run optionally with
 * its copies and, for cache = cold, after an L2 flush outside the timed
 * region.  CUDA variants are timed with events on the device's stream, CPU
 * variants with the monotonic clock.
 */
#ifndef KBENCH_MEASURE_H
#define KBENCH_MEASURE_H

#include "config.h"
#include "device.h"
#include "host.h"
#include "stats.h"

/* What stopped a run or a measurement. */
typedef struct kbc_fault {
    enum { KBC_FAULT_NONE, KBC_FAULT_PLUGIN, KBC_FAULT_CUDA } kind;
    int code;          /* PLUGIN: the call's kb_status          */
    const char *call;  /* PLUGIN: "upload", "run", "download"   */
    const char *stage; /* CUDA: "the warm-up runs", ...         */
    char why[400];     /* CUDA: the runtime's sentence          */
} kbc_fault;

/* One run: run() alone, or upload + run + download.  Returns KB_OK or the
   first failing call's code, with *call naming it. */
int kbc_one_run(const kb_ops *ops, void *state, uint32_t v, kb_host *host, kbc_hostctx *hc,
                int copies, const char **call);

/* Warm-up and timed runs of variant v on a set-up, verified state.  Fills
   out, gives *samples (when samples is not NULL) a malloc'd copy of every
   timed run's seconds in the order they ran (out->n of them; NULL when
   none), sets *capped (when not NULL) to 1 when ms sets a noise target and
   the runs stopped on max_runs or the budget with the noise above it (0
   otherwise), and returns 0; or fills f and returns -1 with *samples
   NULL.  With a noise target the runs stop as ms says (config.h).  dev is used for CUDA
   variants only (cuda != 0) and must then be usable. */
int kbc_measure_variant(const kb_ops *ops, void *state, uint32_t v, int cuda,
                        const kbc_measure *ms, kb_host *host, kbc_hostctx *hc, kbc_device *dev,
                        kbc_stats *out, double **samples, int *capped,
                        kbc_fault *f);

#endif
