/*
 * report.h -- the reporters: a terminal table grouped by point, CSV and
 * JSON (results_write.h).  Each returns a sink (record.h) that takes records
 * only, or fills d and returns -1 when its file cannot be opened.
 */
#ifndef KBENCH_REPORT_H
#define KBENCH_REPORT_H

#include <stdio.h>

#include "record.h"
#include "results_write.h"
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

/* --summary-only: the terminal table shows each experiment's sweep
   summary (analysis/sweep_summary.h) and the failed rows, not a table per
   point.  results.md keeps its tables (and has the summaries of every
   experiment of more than one row). */
void kbc_report_table_summary_only(kbc_sink *sink, int on);

/* The table's statuses and verdicts in colour (on) or not; a table on a
   terminal starts in colour unless NO_COLOR is set (kbc_colour_for),
   results.md never is. */
void kbc_report_table_colour(kbc_sink *sink, int on);

/* Gives a table or markdown sink (from the two functions above) an
   earlier run's rows (base[0..n), borrowed: they must outlive the sink):
   each row then shows its change against the row with the same key, as
   kbench compare judges it and in its words (analysis/baseline.h; a
   column "vs old"). */
void kbc_report_table_baseline(kbc_sink *sink, const kbc_record *base, size_t n);

/* CSV at path: a header line, then one line per row, each point's rows
   written whole (a failed write is cut off: the file ends on a whole row). */
int kbc_report_csv(const char *path, kbc_sink *sink, kbc_diag *d);

#endif
