/*
 * results_read.h -- reads a results.json written by report_json.c back into
 * the records it was written from (record.h), for comparisons between runs
 * and for tools.  Needs jansson and record.c only.
 */
#ifndef KBENCH_RESULTS_READ_H
#define KBENCH_RESULTS_READ_H

#include <stddef.h>

#include "record.h"
#include "util.h"

/* Loads every row of the document at path into *recs (malloc'd, *n of
   them, each with its samples; free with kbc_records_free).  Returns 0, or -1 with d set to one sentence. */
int kbc_results_read(const char *path, kbc_record **recs, size_t *n, kbc_diag *d);

#endif
