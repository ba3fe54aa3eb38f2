/*
 * costs.h -- `kbench run --costs FROM`: the seconds an earlier run of the
 * plan spent on each of its points, for the shards and the order points
 * are handed out in (shard.h, kbc_costs; docs/scale.md, "Measured costs").
 *
 * FROM is the output folder of an earlier run (its journal.jsonl, else its
 * results.json) or `history` (the newest runs of the history database,
 * those of the same plan first, read from their results.json).  A point's
 * cost is the sum of its rows' wall_s (docs/output.md), matched by the
 * row's key (plugin, experiment, parameters, variant): the same plan, or
 * one that shares points with it.  A point of which some variant has no
 * such row is not measured; the model prices it (kbc_jobs_use_costs).
 */
#ifndef KBENCH_COSTS_H
#define KBENCH_COSTS_H

#include "config.h"
#include "shard.h"
#include "util.h"

/* Fills c for plan from `from` (history_db: --history, for FROM =
   history).  Returns 0, or an exit code with d set to one sentence
   (KBC_EXIT_USAGE: FROM is not a run's folder, holds no run, or the
   history cannot be read).  A source that matches no point of the plan
   is not an error: c->measured is then 0. */
int kbc_costs_load(const kbc_plan *plan, const char *from, const char *history_db, kbc_costs *c,
                   kbc_diag *d);

#endif
