/*
 * compare_cmd.h -- `kbench compare BASE.json NEW.json`: the rows of two runs
 * matched by their stable key and judged (analysis/baseline.h, with the
 * statistics of analysis/compare.h), printed as a table, markdown or JSON,
 * with an exit code that can gate a CI job.  docs/cli.md states the rule.
 */
#ifndef KBENCH_COMPARE_CMD_H
#define KBENCH_COMPARE_CMD_H

#include <stdio.h>

#include "compare.h"

/* The whole command: reads both files, prints the comparison on out in
   o->format, warnings on err and out (see docs/cli.md).  Returns 0 when no
   row is slower (noisy rows do not fail it), 1 when one is, 2 for bad
   input (after one sentence on err). */
int kbc_cmd_compare(const char *base_path, const char *new_path, const kbc_compare_opts *o,
                    FILE *out, FILE *err);

#endif
