/*
 * merge.h -- kbench merge: the results of a plan's shards (each written by
 * `kbench run FILE --shard i/N -o DIR`) joined into the results of the
 * whole plan, as if one run had made them.  Needs the records library
 * only (results_read.h to read the parts, report.h to write the CSV and
 * markdown reports).
 */
#ifndef KBENCH_MERGE_H
#define KBENCH_MERGE_H

#include <stddef.h>
#include <stdio.h>

/* Joins the shards' results (each inputs[k] is a folder holding
   results.json, or a results.json path given directly) into
   out_dir/results.json, out_dir/results.csv and out_dir/results.md
   (out_dir and its missing parents are created).

   Refuses (KBC_EXIT_USAGE) a part that cannot be read, one without a plan
   (not written by a kbench run that knows plans), one that is not a shard
   unless it is the only input, parts of different plans or shard counts,
   a shard given twice, missing shards (each named with the command that
   reruns it), a part that ended early (with the command that finishes
   it), a row key found in two parts, parts run on different GPU models
   unless allow_mixed, and an out_dir whose results.json is one of the
   inputs.  Nothing is written when it refuses.

   The merged results.json has the first part's header, "plan" with shard
   null and the parts' jobs summed, "merged_from" (the files read), the
   earliest "started" and the latest "finished", the rows in plan order
   (experiments as the configuration lists them, then point, then
   variant), and the exit code of the merged rows.

   Returns KBC_EXIT_OK, KBC_EXIT_FAILED when a merged row failed
   (kbc_outcome_failed), KBC_EXIT_USAGE for a refused merge, or
   KBC_EXIT_SYSTEM when an output cannot be written; prints one sentence
   per problem, each starting "kbench: merge: ", to err, and on success
   one line "merge: N parts, M rows, into OUT" to out. */
int kbc_cmd_merge(const char *const *inputs, size_t n, const char *out_dir, int allow_mixed,
                  FILE *out, FILE *err);

#endif
