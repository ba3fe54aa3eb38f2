/*
 * report_html.h -- `kbench report RESULTS [--baseline OLD] -o report.html`:
 * one self-contained HTML file of a run (no network: inline CSS, inline SVG
 * and one small inline script) with the machine header, a table per
 * experiment that sorts by a click on a column header, compare's verdict
 * columns when given a baseline, and the charts of `kbench plot`
 * (analysis/chart.h) drawn as inline SVG (rate with its ceiling line, or
 * median time on a log axis).  docs/cli.md and docs/output.md describe it.
 * Needs the data and the analysis layers only.
 */
#ifndef KBENCH_REPORT_HTML_H
#define KBENCH_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "compare.h"
#include "record.h"

/* A step the history's detector found in a row's series: between points
   at - 1 and at, by change (after / before - 1; positive: slower), first
   seen at commit. */
typedef struct kbc_html_step {
    size_t at;
    double change;
    char commit[80];
} kbc_html_step;

/* One row's history for the report's history column: its medians
   (seconds) over the runs of a history database in commit order, and the
   steps found in them; both malloc'd, freed by the report.  n == 0: the
   history has no such row. */
typedef struct kbc_html_history {
    double *median;
    size_t n;
    kbc_html_step *steps;
    size_t n_steps;
} kbc_html_history;

/* Fills *h (zeroed before the call) with the history of row r of a run on
   GPU gpu (the results' machine, NULL when it has none).  The report
   layer reads no database; `kbench report --history` passes one that
   does (cli/report_history.c). */
typedef void (*kbc_html_history_fn)(void *ctx, const kbc_record *r, const char *gpu,
                                    kbc_html_history *h);

/* Writes the report of the results at path (a results.json, or a folder
   holding one) to out_path (NULL: report.html beside the results file; a
   folder: report.html in it), through a temporary file renamed into
   place, so that a report is whole or absent.  With base_path (a
   results.json or a folder; NULL for none), each row is compared with the
   baseline's row of the same key by kbc_compare_many() under o (NULL:
   kbc_compare_defaults()).  With hist (NULL for none), each row gets a
   history column: a sparkline of hist's series with its steps marked.
   Names the file written on out.  Returns 0; 2 for a results file that
   cannot be read (one sentence on err); 3 when the report cannot be
   written. */
int kbc_cmd_report(const char *path, const char *base_path, const char *out_path,
                   const kbc_compare_opts *o, kbc_html_history_fn hist, void *hist_ctx,
                   FILE *out, FILE *err);

/* A sparkline of y[0..n) (NaN for a missing point: the line breaks
   there) as one inline <svg> element of w by h pixels, its y axis
   spanning the finite values, with a mark at each of steps[0..n_steps)
   (red for slower, green for faster) whose tooltip gives its change and
   commit; malloc'd, for the caller to free. */
char *kbc_html_sparkline(const double *y, size_t n, const kbc_html_step *steps, size_t n_steps,
                         int w, int h);

#endif
