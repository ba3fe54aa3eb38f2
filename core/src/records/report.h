/*
 * report.h -- the reporters: a terminal table grouped by point, CSV and
 * JSON.  Each returns a sink (record.h) that takes records only, or fills d and returns -1 when
 * its file cannot be opened.
 */
#ifndef KBENCH_REPORT_H
#define KBENCH_REPORT_H

#include <stdio.h>

#include "record.h"
#include "util.h"

/* A table on out (normally stdout); colours never, widths fixed. */
int kbc_report_table(FILE *out, kbc_sink *sink, kbc_diag *d);

/* The same table as markdown at path (results.md): a title, the command
   line, the machine line, then per point a heading and a pipe table with
   the rows' notes below it, and the summary; ready to paste into a README
   or a pull request. */
int kbc_report_markdown(const char *path, kbc_sink *sink, kbc_diag *d);

/* The table's columns: 0 (the default) fits 120 columns: variant,
   backend, status, median, throughput, %peak, speed-ups; 1 (--wide) adds
   min, max, runs, noise, the variants' flags and the check.  results.md
   is always wide. */
void kbc_report_table_wide(kbc_sink *sink, int wide);

/* Gives a table or markdown sink (from the two functions above) an
   earlier run's rows (base[0..n), borrowed: they must outlive the sink):
   each row then shows its change against the row with the same key, as
   kbench compare judges it (a column "vs old"). */
void kbc_report_table_baseline(kbc_sink *sink, const kbc_record *base, size_t n);

/* CSV at path: a header line, then one line per row, each point's rows
   written whole (a failed write is cut off: the file ends on a whole row). */
int kbc_report_csv(const char *path, kbc_sink *sink, kbc_diag *d);

/* The version of results.json's layout, its "schema_version": raised when a
   field changes meaning or goes away, so that a reader can refuse a file
   it would misread.  docs/results.schema.json describes this version.
   2: each row's "energy" object. */
#define KBC_RESULTS_SCHEMA_VERSION 2

/* When $KBENCH_KEEP_RESULTS names a folder, a copy of doc, the document just
   written to path, as DIR/<pid>-<hash of path>.json (the last document of
   each file a process writes).  The test suite sets it so that every
   results.json its tests write is checked against the JSON Schema
   (tests/schema.cmake); unset, it does nothing.  A copy that cannot be
   written is left out without a word: it is no result of the run. */
struct json_t;
void kbc_results_keep(const struct json_t *doc, const char *path);

/* One JSON document at path: machine, kbench version and git revision,
   the expanded configuration, every row.  Written at begin(), after the
   first point and at end(), and rewritten after later points or on a
   tick() as often as a tenth of the run allows, so that a crash leaves the
   rows so far (report_json.c, json_due). */
int kbc_report_json(const char *path, kbc_sink *sink, kbc_diag *d);

#endif
