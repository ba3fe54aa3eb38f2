/*
 * runner.h -- the scheduler: walks a plan point by point (point.h), on one
 * device (device.h), through one host (host.h), and feeds the records of
 * each point to the sinks (record.h).
 */
#ifndef KBENCH_RUNNER_H
#define KBENCH_RUNNER_H

#include "config.h"
#include "gpu.h"
#include "record.h"

/* Runs the plan and feeds every sink.  Returns an exit code (util.h). */
int kbc_run_plan(const kbc_plan *plan, const kbc_machine *m, kbc_sink *sinks, size_t n_sinks,
                 const char *command_line);

/* Quiet mode (kbench run -q): no progress line and only the plugins'
   warnings on stderr.  Off by default. */
void kbc_run_set_quiet(int quiet);

/* The configuration part of a run's header, as copies (record.h), and
   its release. */
kbc_exp_info *kbc_exp_infos(const kbc_plan *plan);
void kbc_exp_infos_free(kbc_exp_info *x, size_t n);

#endif
