/*
 * check.h -- `kbench check PLUGIN`: the conformance check every plugin gets
 * for free.  It calls the plugin the way the runner does, on points derived
 * from each parameter's declared range, and tests the rules of
 * kbench/plugin.h that a benchmark run alone cannot see: plan() is pure,
 * a never-run output fails verify(), prepare() poisons, verify() agrees with
 * its own numbers, teardown() takes a state straight from setup(), and (on a
 * GPU) setup/teardown and plan leave device memory as they found it.
 * The plugin is called in a child process with a watchdog (check_child.h):
 * a call that crashes, exits or hangs fails one check, and the check goes
 * on.  docs/cli.md lists the checks and their limits.
 */
#ifndef KBENCH_CHECK_H
#define KBENCH_CHECK_H

#include <stdio.h>

#include "loader.h"

/* Checks the plugin called `plugin` in r.  variants_csv: NULL for every
   variant, else a comma-separated list of variant names.  Prints one line
   per check on out ("ok   CHECK ...", "FAIL CHECK: sentence.", "skip
   CHECK: why.") and a summary, out being made line-buffered; usage errors
   go to err.  Returns 0 when every check passed (skips included), 1 when
   one failed, 2 for an unknown plugin, an unknown or empty variant name or
   a $KBENCH_CHECK_TIMEOUT that is no number of seconds, 3 when out cannot
   be written (said by whoever opened out: kbench says it of its standard
   output as it exits) or the check's process cannot be started, 130 when
   SIGINT or SIGTERM stopped the check.  The plugin's log lines go to
   stderr as in a run, but for those of the calls whose failure the check
   provokes on purpose. */
int kbc_cmd_check(kbc_registry *r, const char *plugin, const char *variants_csv, FILE *out,
                  FILE *err);

#endif
