/*
 * results_write.h -- results.json, the document a run writes (results_write.c)
 * and the results reader reads back (results_read.h): its version and its
 * sink.
 */
#ifndef KBENCH_RESULTS_WRITE_H
#define KBENCH_RESULTS_WRITE_H

#include "record.h"
#include "util.h"

/* The version of results.json's layout, its "schema_version": raised when a
   field changes meaning or goes away, so that a reader can refuse a file
   it would misread.  docs/results.schema.json describes this version. */
#define KBC_RESULTS_SCHEMA_VERSION 2

/* When $KBENCH_KEEP_RESULTS names a folder, a copy of doc, the document just
   written to path, as DIR/<pid>-<hash of path>.json (the last document of
   each file a process writes).  The test suite sets it so that every
   results.json its tests write is checked against the JSON Schema
   (tests/schema.cmake); unset, it does nothing.  A copy that cannot be
   written is left out without a word: it is no result of the run. */
struct json_t;
void kbc_results_keep(const struct json_t *doc, const char *path);

/* Writes doc whole to path: to tmp (a file beside it), synced, then
   renamed over path (a rename within a folder is atomic, so a reader finds
   the last whole document or this one), then kept (kbc_results_keep).
   Returns 0, or -1 with *what the file that could not be written (tmp or
   path; tmp is removed) and *err its errno (0: a write error without
   one). */
struct json_t;
int kbc_results_write_file(const struct json_t *doc, const char *path, const char *tmp,
                           const char **what, int *err);

/* One JSON document at path: machine, kbench version and git revision,
   the expanded configuration, every row.  Written at begin(), after the
   first point and at end(), and rewritten after later points or on a
   tick() as often as a tenth of the run allows, so that a crash leaves the
   rows so far (results_write.c, json_due). */
int kbc_report_json(const char *path, kbc_sink *sink, kbc_diag *d);

#endif
