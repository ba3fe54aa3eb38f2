/*
 * baseline.h -- the rows of a run matched with the rows of an earlier run
 * (the baseline) by their stable key (kbc_record_key), and each pair's
 * change judged as compare.h judges it.  The one matching behind `kbench
 * compare`, the table's "vs old" column (`kbench run --baseline`) and the
 * verdict columns of `kbench report --baseline`, so that the three agree
 * on every row: the same verdicts (kbc_verdict_name), and the same note
 * for a row that gets none.  Where both rows have energy
 * (kbc_record_has_energy), their joules per run are judged the same way,
 * each row's energy windows standing for its samples.
 */
#ifndef KBENCH_BASELINE_H
#define KBENCH_BASELINE_H

#include <stddef.h>

#include "compare.h"
#include "record.h"

/* Why a row has no verdict (kbc_match.note), one sentence fragment each. */
#define KBC_NOTE_ONLY_IN_NEW "only in new"
#define KBC_NOTE_NOT_RUN_BASE "did not run in base"
#define KBC_NOTE_NOT_RUN_NEW "did not run in new"
#define KBC_NOTE_CRASHED_NEW "crashed in new"
#define KBC_NOTE_TIMEOUT_NEW "timed out in new"
#define KBC_NOTE_FEW_SAMPLES "fewer than 2 samples on a side"
#define KBC_NOTE_ZERO_MEDIAN "a median of zero"
/* Why a row's energy has no verdict, beside the notes above. */
#define KBC_NOTE_NO_ENERGY "no energy on either side"
#define KBC_NOTE_NO_ENERGY_BASE "no energy in base"
#define KBC_NOTE_NO_ENERGY_NEW "no energy in new"
#define KBC_NOTE_FEW_WINDOWS "fewer than 2 energy windows on a side"
#define KBC_NOTE_FLAGGED_NEW "flagged by the integrity checks in new"
#define KBC_NOTE_FLAGGED_BASE "flagged by the integrity checks in base"

/* One row of the new run against the baseline. */
typedef struct kbc_match {
    long base;         /* the baseline's row with the same key (the first
                          of them when several have it), or -1           */
    kbc_change change; /* the comparison of the two rows' samples; where
                          there is none, verdict KBC_UNTESTED and NaN    */
    const char *note;  /* why the verdict is KBC_UNTESTED (KBC_NOTE_*), or
                          NULL when the rows were judged                 */
    int lost;          /* the new row crashed, timed out or was flagged
                          by the integrity checks where the baseline has
                          a row: a failure of the new run, which fails
                          kbench compare                                 */
    kbc_change energy; /* the comparison of the two rows' joules per run,
                          each energy window a sample (medians in
                          joules); verdict KBC_UNTESTED and NaN where
                          there is none                                 */
    const char *energy_note; /* why energy has no verdict (KBC_NOTE_*), or
                                NULL when it was judged                  */
} kbc_match;

/* Whether a side of the match has energy (its energy was compared, or
   its note says why not: one side without it, too few windows, a row
   that did not run): the rows whose energy compare and the report show. */
int kbc_match_energy_shown(const kbc_match *m);

/* The baseline's rows indexed by key: made once, used for any number of
   kbc_baseline_judge() calls (the table judges point by point). */
typedef struct kbc_baseline kbc_baseline;

/* base[0..n) is borrowed: it must outlive the baseline. */
kbc_baseline *kbc_baseline_new(const kbc_record *base, size_t n);
void kbc_baseline_free(kbc_baseline *b);

/* Matches each of recs[0..n) with the baseline's row of its key and
   judges the pairs under o (all at once, their resamples shared among
   o->threads), into out[0..n).  A pair is judged only when both rows ran
   (kbc_record_ran); otherwise, and where a side has fewer than 2 samples
   or a median of zero, out[i] says why not in its note.  The energy of a
   pair both of whose rows have it is judged the same way (out[i].energy),
   or says why not (out[i].energy_note).  Marks the baseline's rows
   matched (kbc_baseline_matched). */
void kbc_baseline_judge(kbc_baseline *b, const kbc_record *recs, size_t n,
                        const kbc_compare_opts *o, kbc_match *out);

/* Whether some row judged so far had the key of the baseline's row j, and
   that row's key. */
int kbc_baseline_matched(const kbc_baseline *b, size_t j);
const char *kbc_baseline_key(const kbc_baseline *b, size_t j);

/* The baseline's rows. */
size_t kbc_baseline_rows(const kbc_baseline *b);

#endif
