/*
 * report_history.h -- the history column of `kbench report --history FILE`:
 * each row's series in a history database (history.h), on the testbed of
 * the report's GPU, with the steps the detector finds in it.  The report
 * (records/report_html.c) reads no database; this gives it one.
 */
#ifndef KBENCH_REPORT_HISTORY_H
#define KBENCH_REPORT_HISTORY_H

#include "history.h"
#include "report_html.h"

/* Opens the database that --history names (db; history.h's rules when
   NULL) for reading.  Returns 0 with *h set, or an exit code with d set
   to one sentence. */
int kbc_report_history_open(const char *db, kbc_history **h, kbc_diag *d);

/* A kbc_html_history_fn over the database ctx (a kbc_history *): row r's
   series on a testbed whose GPU is gpu ("none" when NULL) and, where both
   name one, the row's card (UUID); the one with the most runs where
   several match (another driver, CUDA or CCCL); its steps without those into or out
   of a lone run (history.h).  A row the history lacks gets none. */
void kbc_report_history_row(void *ctx, const kbc_record *r, const char *gpu,
                            kbc_html_history *out);

#endif
