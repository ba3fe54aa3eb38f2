/*
 * merge.h -- the results of a plan's shards (each written by `kbench run
 * FILE --shard i/N -o DIR`) joined into the results of the whole plan, as
 * if one run had made them: the parts read and checked, their rows in plan
 * order, and the merged results.json.  Needs the data layer only;
 * `kbench merge`, which writes the join out, is views/merge_cmd.h.
 */
#ifndef KBENCH_MERGE_H
#define KBENCH_MERGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "record.h"

/* The parts read (merge.c). */
struct kbc_merge_parts;

typedef struct kbc_merged {
    /* The rows of every part in plan order (experiments as the first
       part's configuration lists them, then point, then variant); they
       share their samples with the parts. */
    kbc_record *recs;
    size_t n_recs;
    /* The header a sink is given: the first part's, with the plan whole
       (shard 0 of 0) and the parts' jobs summed; it points into the parts. */
    kbc_run_info info;
    /* The merged results.json: "schema_version", then the first part's
       members in their order, with "plan" (shard null, the jobs summed),
       "merged_from" (the files read), the rows untouched in plan order, the
       earliest "started", the latest "finished" and "exit_code" its own. */
    json_t *doc;
    int code;      /* KBC_EXIT_FAILED when a row failed (kbc_outcome_failed),
                      else KBC_EXIT_OK: the merged exit code               */
    size_t n_parts;
    struct kbc_merge_parts *parts;
} kbc_merged;

/* Reads inputs[0..n) (each a folder holding results.json, or a
   results.json path) and joins them into *m.  Refuses a part that cannot
   be read, one without a plan (not written by a kbench run that knows
   plans), one that is not a shard unless it is the only input, parts of
   different plans or shard counts, a shard given twice, missing shards
   (each named with the command that reruns it), a part that ended early
   (with the command that finishes it), a row key found in two parts, and
   parts run on different GPU models unless allow_mixed: then says one
   sentence per problem on err, each starting "kbench: merge: ", and
   returns -1 (*m is then empty).  Returns 0; kbc_merge_free releases *m. */
int kbc_merge_join(kbc_merged *m, const char *const *inputs, size_t n, int allow_mixed,
                   FILE *err);

/* The input whose results.json is the file at path, or NULL. */
const char *kbc_merge_part_of(const kbc_merged *m, const char *path);

void kbc_merge_free(kbc_merged *m);

#endif
