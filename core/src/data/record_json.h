/*
 * record_json.h -- one record (record.h) as a JSON object and back: the
 * row of results.json, of a journal line (journal.h) and of a worker's
 * message to its supervisor (worker.h).  One spelling for all three, so
 * that a row that crossed a pipe or a disk reads back as it was written.
 */
#ifndef KBENCH_RECORD_JSON_H
#define KBENCH_RECORD_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "record.h"

/* A new JSON object for r (the caller owns the reference). */
json_t *kbc_record_to_json(const kbc_record *r);

/* Fills r from o (r's samples are malloc'd; kbc_record_free releases
   them).  Returns 0, or -1 with why set to one clause. */
int kbc_record_from_json(const json_t *o, kbc_record *r, char *why, size_t n);

/* The suspect rows list[0..n) as results.json's "suspects" array (a new
   reference): {"key", "median_s", "than_key", "than_median_s",
   "work_ratio"} each.  results_read.c reads them back (kbc_run_doc). */
json_t *kbc_suspects_to_json(const kbc_suspect *list, size_t n);

#endif
