/*
 * energy.h -- joules per run of a CUDA variant, from NVML's cumulative
 * energy counter (docs/energy.md).
 *
 * After a row's timed runs, kbench measures windows: the variant's runs
 * repeated back to back as its timed samples ran them (measure.h,
 * kbc_replay: the batch's CUDA graph, or run by run), each window at
 * least the experiment's energy_window long, the counter read at each edge
 * with the stream synchronised.  The counter moves every 20-100 ms on
 * Hopper, which is why a window must last about a second, and why a
 * window in which it did not move spoils the others (its energy lands in
 * the next one).  A window spoilt by the counter (backwards, wrapped) or
 * shorter than energy_window is dropped and another measured, up to
 * KBC_ENERGY_SPARE_WINDOWS more in all; energy_windows (KBC_ENERGY_WINDOWS
 * unless set) must be kept.
 *
 * The logic (windows, readings, statistics, sentences) is
 * kbc_energy_windows, which runs its steps through callbacks, so that
 * the tests drive it with a fake NVML and a fake variant; kbc_energy_row
 * is the one call the runner makes, with the variant's real runs.
 */
#ifndef KBENCH_ENERGY_H
#define KBENCH_ENERGY_H

#include <stdint.h>

#include "core_keys.h"
#include "measure.h"
#include "nvml.h"
#include "record.h"

/* What the windows are made of. */
typedef struct kbc_energy_plan {
    double window_s;        /* the shortest window (energy_window)              */
    uint32_t windows;       /* the windows to keep (energy_windows); 0: the
                               default, KBC_ENERGY_WINDOWS                    */
    double step_s;          /* one step's expected seconds (the row's median
                               times its batch); 0 or NaN: unknown, one step
                               per window to start                            */
    uint32_t runs_per_step; /* runs of the variant in one step (its batch)      */
    double bytes;           /* one run's bytes read plus written (plan())      */
    double flops;           /* one run's flops                                 */
} kbc_energy_plan;

/* The variant's steps: enqueue(ctx, k, f) puts k steps on the stream back
   to back (it may return before they finish); wait(ctx, f) returns once
   they have.  Each returns 0, or -1 with f filled. */
typedef struct kbc_energy_steps {
    int (*enqueue)(void *ctx, uint64_t steps, kbc_fault *f);
    int (*wait)(void *ctx, kbc_fault *f);
    void *ctx;
} kbc_energy_steps;

/* Measures the windows of p through nvml into out (requested and idle_w
   are left as they are; window_s is p's): status KBC_ENERGY_MEASURED with the
   median joules per run, its 95% interval, watts, efficiency and the
   throttled windows; or another status with why.  Returns 0, or -1 when a
   step failed (f filled; out says nothing then). */
int kbc_energy_windows(kbc_nvml *nvml, const kbc_energy_plan *p, const kbc_energy_steps *s,
                       kbc_rec_energy *out, kbc_fault *f);

/* Reads the board power into dev->idle_w (NaN without NVML), before a
   point's setup: the row's idle_w. */
void kbc_energy_point_start(kbc_device *dev);

/* Row r of variant v has been timed (r->time, r->mode and r->work are
   filled): measures its energy as ms says into r->energy, or says there
   why not (energy = off: nothing; a CPU variant; cache = cold; no NVML;
   what kbc_energy_windows says).  Returns 0, or -1 when a run failed in
   the windows (f filled: the row failed, as it would in its timed runs). */
int kbc_energy_row(kbc_instance in, void *state, const kbc_measure *ms, kbc_device *dev,
                   kbc_record *r, kbc_fault *f);

#endif
