/*
 * report_html.h -- `kbench report RESULTS [--baseline OLD] -o report.html`:
 * one self-contained HTML file of a run (no network: inline CSS, inline SVG
 * and one small inline script) with the machine header, a table per
 * experiment that sorts by a click on a column header, compare's verdict
 * columns when given a baseline, and the plots of `kbench plot` drawn as
 * inline SVG (rate with its ceiling line, or median time on a log axis,
 * against the swept size on a log-2 axis).  docs/cli.md and docs/output.md
 * describe it.  Needs the records, the results reader and compare only.
 */
#ifndef KBENCH_REPORT_HTML_H
#define KBENCH_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "compare.h"

/* Writes the report of the results at path (a results.json, or a folder
   holding one) to out_path (NULL: report.html beside the results file),
   through a temporary file renamed into place, so that a report is whole
   or absent.  With base_path (a results.json or a folder; NULL for none),
   each row is compared with the baseline's row of the same key by
   kbc_compare_many() under o (NULL: kbc_compare_defaults()).  Names the
   file written on out.  Returns 0; 2 for a results file that cannot be
   read (one sentence on err); 3 when the report cannot be written. */
int kbc_cmd_report(const char *path, const char *base_path, const char *out_path,
                   const kbc_compare_opts *o, FILE *out, FILE *err);

/* A sparkline of y[0..n) (NaN for a missing point: the line breaks
   there) as one inline <svg> element of w by h pixels, its y axis
   spanning the finite values; malloc'd, for the caller to free.  For a
   history column of the report (one series per row). */
char *kbc_html_sparkline(const double *y, size_t n, int w, int h);

#endif
