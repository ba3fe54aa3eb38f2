/*
 * journal.h -- DIR/journal.jsonl: every finished point of a run, appended
 * and flushed to disk before the next point is reported, so that a run that
 * is killed loses at most the points that were running, and `kbench run
 * --resume` skips what is there.
 *
 * The file is JSON lines.  The first line is the header:
 *   {"kbench_journal": 1, "plan_hash": H, "shard": [i, N] or null}
 * then one line per finished point:
 *   {"exp": NAME, "exp_index": I, "point": P, "plugin": NAME,
 *    "plugin_sha256": S, "gpu_model": M, "rows": [rows as results.json]}
 * The last line, when it is not a whole entry (what a crash mid-write
 * leaves: a line without its newline, or one that is not JSON), is read up
 * to, with one warning, and cut off before new lines are added; such a line
 * anywhere else is damage, and the resume is refused.
 */
#ifndef KBENCH_JOURNAL_H
#define KBENCH_JOURNAL_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

typedef struct kbc_journal_entry {
    char *exp;
    uint32_t exp_index;
    uint64_t point;
    char *plugin_sha256;
    char *gpu_model;
    json_t *rows; /* the array, owned */
} kbc_journal_entry;

typedef struct kbc_journal {
    char *path;
    int fd;
    kbc_journal_entry *entries; /* read by --resume, in file order */
    size_t n_entries;
    char old_hash[65];           /* the plan hash of a resumed journal */
} kbc_journal;

/* Starts DIR/journal.jsonl for a new run (replacing any), writing the
   header.  Returns 0, or -1 with d set. */
int kbc_journal_create(kbc_journal *j, const char *dir, const char *plan_hash, int shard_index,
                       int shard_count, kbc_diag *d);

/* Opens DIR/journal.jsonl to resume: reads its entries (warning on err
   once about a cut last line, which is dropped from the file), checks the
   header's plan hash against plan_hash (a mismatch is refused unless
   accept_other_plan) and the shard, and leaves the file open for
   appending.  Returns 0, or -1 with d set (no journal, another plan,
   another shard, a line in the middle that is not a journal entry); j is
   then empty (nothing to close). */
int kbc_journal_resume(kbc_journal *j, const char *dir, const char *plan_hash, int shard_index,
                       int shard_count, int accept_other_plan, FILE *err, kbc_diag *d);

/* Appends one entry (steals rows) and syncs it to disk.  Returns 0, or -1
   with d set. */
int kbc_journal_append(kbc_journal *j, const char *exp, uint32_t exp_index, uint64_t point,
                       const char *plugin_sha256, const char *gpu_model, json_t *rows,
                       kbc_diag *d);

/* Drops the entries a resumed journal read (j->entries), keeping the file
   open for appending: what it held is then no run to finish. */
void kbc_journal_forget(kbc_journal *j);

void kbc_journal_close(kbc_journal *j);

#endif
