/*
 * integrity.h -- the checks that a row's timing is of the work it verified
 * (docs/integrity.md).  Once a row's checked run passed and its timed runs
 * ran (measure.c poisoned the outputs just before the first timed sample),
 * kbc_integrity_check makes, in this order:
 *
 *   1. the post-check: the outputs the timed runs left, downloaded and
 *      verified: right only if the timed runs did all the work;
 *   2. for a CUDA variant, one run with the process's threads counted
 *      before and after: a thread that run() left running;
 *   3. the audit round: the outputs poisoned and verified to fail (a
 *      prepare() that does not poison would blind every other check), one
 *      run alone (traced with CUPTI for a CUDA variant: work on another
 *      stream or context, launched after run() returned, kernels in
 *      download(), an L2 access-policy window; for a CPU variant, the
 *      threads counted and other threads' CPU time watched after it
 *      returned), its output verified, and its time set against the timed
 *      median;
 *   4. the stream's L2 access-policy window and the persisting-L2
 *      set-aside, which a variant may have changed;
 *   5. the physical limit of the row's rates (physical.h);
 *
 * and writes what it found into the row: r->integrity always; under
 * `integrity = strict` a row with a flag becomes FAIL with the flags as
 * its reason, under `warn` it keeps its status and the flags are its
 * reason.  Nothing of this is timed.
 */
#ifndef KBENCH_INTEGRITY_H
#define KBENCH_INTEGRITY_H

#include "config.h"
#include "device.h"
#include "instance.h"
#include "measure.h"
#include "record.h"

/* After the device is idle, how long the audit waits for a host thread
   that launches late (it must catch one 0.2 ms late), and how long a CPU
   variant's other threads are watched after run() returned. */
#define KBC_AUDIT_GRACE_S 0.005
#define KBC_CPU_WATCH_S 0.010
/* A timed median under this fraction of what a run alone took in the
   audit round is flagged (a batch's runs overlap; no honest run is three
   times faster in a loop). */
#define KBC_AUDIT_MEDIAN_FRACTION (1.0 / 3.0)

/* The checks on row r (variant r->variant_index, timed: got) of a set-up
   state, as above; dev may be NULL for a CPU row (no physical limit then).
   Returns 0; or -1 with f filled when a plugin or CUDA call failed (the
   caller errs the row as for a failed measurement). */
int kbc_integrity_check(const kbc_experiment *e, kbc_instance in, void *state, kbc_device *dev,
                        kbc_record *r, const kbc_measured *got, kbc_fault *f);

#endif
