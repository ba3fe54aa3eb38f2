/*
 * merge_cmd.h -- `kbench merge`: the shards of a plan joined (data/merge.h)
 * and written out as the results of the whole plan.
 */
#ifndef KBENCH_MERGE_CMD_H
#define KBENCH_MERGE_CMD_H

#include <stddef.h>
#include <stdio.h>

/* Joins the shards' results (kbc_merge_join: each inputs[k] is a folder
   holding results.json, or a results.json path given directly) into
   out_dir/results.json, out_dir/results.csv and out_dir/results.md
   (out_dir and its missing parents are created), through one fan-out
   (fanout.h), which finds the suspect rows of all the parts' rows.

   Refuses (KBC_EXIT_USAGE) what kbc_merge_join refuses, and an out_dir
   whose results.json is one of the inputs.  Nothing is written when it
   refuses.

   Returns KBC_EXIT_OK, KBC_EXIT_FAILED when a merged row failed
   (kbc_outcome_failed), KBC_EXIT_USAGE for a refused merge, or
   KBC_EXIT_SYSTEM when an output cannot be written; prints one sentence
   per problem, each starting "kbench: merge: ", to err, and on success
   one line "merge: N parts, M rows, into OUT" to out. */
int kbc_cmd_merge(const char *const *inputs, size_t n, const char *out_dir, int allow_mixed,
                  FILE *out, FILE *err);

#endif
