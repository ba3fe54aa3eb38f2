/*
 * measure.h -- measurement: the warm-up runs, then timed runs until `runs`
 * are done or the budget is spent (at least one), each run optionally with
 * its copies and, for cache = cold, after an L2 flush outside the timed
 * region.  CUDA variants are timed with events on the device's stream, CPU
 * variants with the monotonic clock.
 *
 * Batch mode (kbc_measure.batch): a timed sample of a CUDA variant is one
 * pair of events around N back-to-back runs with no synchronisation
 * between them, divided by N, so that a kernel of a few microseconds is
 * not buried under one event pair's resolution and the launch latency of
 * a run timed alone.  The N runs are captured once into a CUDA graph and
 * the graph is replayed for each sample, so that the host's launch rate
 * (about 3 us a launch) does not bound a kernel shorter than that; where
 * the capture fails they are launched run by run.  The GPU's clocks are read (device.h, NVML) just
 * before the timed runs and just after them.
 */
#ifndef KBENCH_MEASURE_H
#define KBENCH_MEASURE_H

#include "core_keys.h"
#include "device.h"
#include "host.h"
#include "instance.h"
#include "stats.h"

/* Batch auto: a CUDA variant whose single run takes less than this (the
   median of KBC_BATCH_PROBE_RUNS runs timed alone after the warm-up) is
   batched, with N chosen so that one sample lasts about
   KBC_BATCH_SAMPLE_S, at most KBC_BATCH_MAX runs. */
#define KBC_BATCH_AUTO_BELOW_S 20e-6
#define KBC_BATCH_SAMPLE_S 200e-6
#define KBC_BATCH_MAX 1000
#define KBC_BATCH_PROBE_RUNS 5

/* What stopped a run or a measurement. */
typedef struct kbc_fault {
    enum { KBC_FAULT_NONE, KBC_FAULT_PLUGIN, KBC_FAULT_CUDA } kind;
    kbc_error err;     /* PLUGIN: the call that failed           */
    const char *stage; /* CUDA: "the warm-up runs", ...         */
    char why[400];     /* CUDA: the runtime's sentence          */
} kbc_fault;

/* Mark f as a plugin call's failure (f->err holds it) or a CUDA failure
   at stage; both return -1, for `return kbc_fault_cuda(f, "...")`. */
int kbc_fault_plugin(kbc_fault *f);
int kbc_fault_cuda(kbc_fault *f, const char *stage);

/* What a measurement gives. */
typedef struct kbc_measured {
    kbc_stats time;       /* seconds per run                              */
    double *samples;      /* malloc'd, time.n of them in the order they
                             ran (per run: a batch's time / batch); NULL
                             when none                                    */
    int capped;           /* a noise target was set and the runs stopped
                             on max_runs or the budget above it           */
    kbc_rec_clocks clocks;/* the GPU's clocks around the timed runs       */
    kbc_rec_mode mode;    /* single or batched, and why                   */
    int captured_nothing; /* a CUDA graph of the batch captured no work:
                             run() enqueued nothing on kbench's stream    */
    double cpu_per_run_s; /* a CPU variant's timed runs: the process's CPU
                             time (every thread's) per run, on average;
                             NaN for a CUDA variant                      */
} kbc_measured;

/* One run: run() alone, or upload + run + download.  Returns KB_OK or the
   first failing call's code, with err filled. */
int kbc_one_run(kbc_instance in, void *state, uint32_t v, int copies, kbc_error *err);

/* The batch a variant gets, before any probe: requested is
   kbc_measure.batch.  Returns 1 (single runs; note, when not NULL, says
   why when batching was asked for and cannot apply), N >= 2 (the count
   asked for), or 0 when auto must probe a single run's time first
   (kbc_batch_auto). */
uint32_t kbc_batch_choose(int requested, int cuda, uint32_t flags, int cache_cold, char *note,
                          size_t n);

/* The hold (docs/output.md, "The hold"): before each timed sample of a
   CUDA variant a one-thread kernel holds the stream until the host has
   enqueued the whole sample, so that the events time the GPU's work and
   not the host's launch latency (which once made a 2.6 us reduce read
   45 us for a whole row).  Not for variants whose run() waits for the
   stream (syncs) or that time their copies (include_copies): the hold
   would only time out.  After KBC_HOLD_TIMEOUT_S without a release the
   kernel lets go by itself; the row then goes on without it and says so. */
#define KBC_HOLD_TIMEOUT_S 0.1
int kbc_hold_wanted(int cuda, uint32_t flags, int include_copies, int have_hold);

/* Batch auto's choice from the median time of one run alone: 1 when it is
   at least KBC_BATCH_AUTO_BELOW_S (or not a positive number), else
   ceil(KBC_BATCH_SAMPLE_S / single_s) within [2, KBC_BATCH_MAX].  note
   says which and why. */
uint32_t kbc_batch_auto(double single_s, char *note, size_t n);

/* The batch size that makes a sample of runs of per_run_s seconds last
   about KBC_BATCH_SAMPLE_S: within [2, KBC_BATCH_MAX]. */
uint32_t kbc_batch_size_for(double per_run_s);

/* Warm-up and timed runs of variant v (flags: its KB_VARIANT_*) on a
   set-up, verified state.  Fills out and returns 0; or fills f and
   returns -1 with out->samples NULL.  With a noise target the runs stop
   as ms says (core_keys.h).  Unless ms->integrity is off, the variant's
   outputs are poisoned again (prepare()) just before the first timed
   sample, so that what they hold afterwards is the timed runs' work
   (docs/integrity.md, "The post-check").  With cache = cold, persisting L2
   lines are reset and the stream's access-policy window cleared before
   each flush.  dev is used for CUDA variants only (cuda != 0) and must
   then be usable. */
int kbc_measure_variant(kbc_instance in, void *state, uint32_t v, int cuda, uint32_t flags,
                        const kbc_measure *ms, kbc_device *dev, kbc_measured *out, kbc_fault *f);

/* A row's runs replayed as its timed samples ran them, outside them (the
   energy windows, energy.h): a step is one sample's runs, the batch's
   CUDA graph launched once or `batch` runs launched one by one (one run
   for a row timed singly), with no events, hold or flush, so that steps
   go back to back on the device's stream. */
typedef struct kbc_replay {
    kbc_instance in;
    void *state;
    uint32_t v;
    int copies;
    uint32_t batch;   /* runs per step                                  */
    void *exec;       /* the batch's graph exec, or NULL                */
    kbc_device *dev;
    char note[400];   /* why a graph row is launched run by run now      */
} kbc_replay;

/* Prepares the replay of variant v measured with mode (kbc_measured.mode):
   captures its batch into a graph again when its samples were one. */
void kbc_replay_open(kbc_replay *p, kbc_instance in, void *state, uint32_t v, int copies,
                     const kbc_rec_mode *mode, kbc_device *dev);
/* Enqueues `steps` steps.  0, or -1 with f filled. */
int kbc_replay_steps(kbc_replay *p, uint64_t steps, kbc_fault *f);
/* Waits for the stream and collects launch errors.  0, or -1 with f filled. */
int kbc_replay_wait(kbc_replay *p, kbc_fault *f);
void kbc_replay_close(kbc_replay *p);

#endif
