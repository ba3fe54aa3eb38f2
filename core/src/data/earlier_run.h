/*
 * earlier_run.h -- how long an earlier run of a plan took, read from its
 * results.json: the history of the same plan, which calibrates the dry
 * run's estimate better than any model (plan/config.h, kbc_plan_print_with).
 */
#ifndef KBENCH_EARLIER_RUN_H
#define KBENCH_EARLIER_RUN_H

#include <stdint.h>

/* Whether path holds a finished run (exit code 0 or 1) of the plan whose
   hash is plan_hash: 0 with *seconds its wall time (machine.cpu's
   wall_seconds, else finished less started) and *jobs the points it ran
   (plan.jobs), or -1, saying nothing, when it does not (no file, another
   plan, a run interrupted or still going, no times). */
int kbc_earlier_run_seconds(const char *path, const char *plan_hash, double *seconds,
                            uint64_t *jobs);

#endif
