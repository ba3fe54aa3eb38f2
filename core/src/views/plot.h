/*
 * plot.h -- `kbench plot RESULTS.json -o DIR`: a gnuplot script per
 * experiment (and per combination of its other swept parameters) that draws
 * throughput (or, with --metric, the median time, the energy per run or
 * the work per joule) against the swept size, one line per variant in
 * sixteen distinct colours and markers, library variants and the matching ceiling drawn distinctly; an
 * experiment that sweeps nothing numeric gets a bar chart of its variants
 * at each point, and one where nothing ran gets no chart.  The charts, their
 * axes, units and ceilings are analysis/chart.h's, which the HTML report
 * draws too; this file writes them as gnuplot scripts.  The scripts carry
 * their data, so they run on their own; kbench runs them through gnuplot
 * when it is installed, which writes an SVG and a PNG beside each script.
 * docs/cli.md describes it.
 */
#ifndef KBENCH_PLOT_H
#define KBENCH_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "chart.h"

/* How the charts are drawn (all zero: the default). */
typedef struct kbc_plot_opts {
    int logy;        /* --logy: a log y axis                                  */
    kbc_chart_metric metric; /* --metric: rate (0, the default), time, energy,
                                efficiency                                 */
    int band;        /* --band: each line's slowest-to-fastest run as a band  */
} kbc_plot_opts;

/* Writes the scripts for the results file at path into dir (which must
   exist) and, when gnuplot is on PATH, runs them there.  Names each
   script written on out.  With md (a results.md in dir, or NULL), appends
   a "Plots" section linking each picture (or, without gnuplot, naming
   each script).  opt NULL draws the default charts.  gnuplot's own
   messages never reach err: a script it refuses is named with its last
   line.  Returns 0; 2 for a results file that cannot be read, or, with
   an energy metric, one none of whose rows has energy (one sentence on
   err); 3 when dir cannot be written or gnuplot refuses a script. */
int kbc_cmd_plot(const char *path, const char *dir, const char *md, const kbc_plot_opts *opt,
                 FILE *out, FILE *err);

/* kbench tune's trace: a script dir/stem.gp (and, with gnuplot, its SVG
   and PNG) drawing, for each of n_series searches, every evaluation's
   value (values[s][0..n[s]); NaN or infinite ones are not drawn) and the
   best so far, on a log scale.  Names the script on out; gnuplot is not
   run when no value is finite.  Returns 0, -1 when the script cannot be
   written (errno says why), -2 when gnuplot refuses it. */
int kbc_plot_trace(const char *dir, const char *stem, const char *title, const char *ylabel,
                   const char *const *names, const double *const *values,
                   const double *const *best, const size_t *n, size_t n_series, FILE *out);

/* Whether an executable gnuplot is on PATH. */
int kbc_have_gnuplot(void);

#endif
