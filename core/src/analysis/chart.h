/*
 * chart.h -- what the charts of a run's rows show, decided once for every
 * renderer: `kbench plot`'s gnuplot scripts (views/plot.c) and the SVG of
 * `kbench report` (views/report_html.c) draw the same charts.
 *
 * An experiment that sweeps a number gets line charts: x is its first swept
 * size parameter, else its first swept integer or float, one chart per
 * combination of its other swept parameters (its group), one line per
 * variant.  An experiment that sweeps no number gets one bar chart of its
 * variants, a group of bars per point.  A chart shows a metric
 * (kbc_chart_metric): a rate, the side of the roofline that binds (GB/s,
 * GFLOP/s or items/s: kbc_rate_pick), the median time, the energy per run,
 * or the work per joule on the same side of the roofline as the rate (GB/J,
 * GFLOP/J or items/J); its y axis takes the unit that puts its largest
 * value in 1 to 999 (1.2 TB/s, 46 TFLOP/s, 120 us, 3.4 mJ); its ceiling
 * line (rates only) is the largest ceiling of that rate among the rows
 * drawn; its x axis is log for a geometric sweep, linear, or one slot per
 * value where values would crowd (4096 beside 4097); and a variant that
 * ignores x (one row standing for every x) is a flat line.  Only rows that
 * ran (kbc_record_ran) with a value are drawn: for the energy metrics, rows
 * whose energy was measured (kbc_record_has_energy).
 */
#ifndef KBENCH_CHART_H
#define KBENCH_CHART_H

#include <stddef.h>

#include "record.h"

/* The rate a chart shows. */
typedef enum kbc_rate { KBC_RATE_GBPS, KBC_RATE_GFLOPS, KBC_RATE_ITEMS } kbc_rate;

/* Rows without a measured ceiling (CPU rows) are judged in FLOP/s when they
   do at least this many flops per byte they move: above a machine's
   balance of flops to bandwidth, which is 10 to 20 on the CPUs and GPUs
   kbench meets, the arithmetic binds (matmul does n/6); reduce's 0.25
   stays in GB/s. */
#define KBC_COMPUTE_INTENSITY 4.0

/* The rate rows[0..n) are judged in, as a chart of them is drawn (chart.c
   says the rule); kbench tune reports each candidate in its row's. */
kbc_rate kbc_rate_pick(const kbc_record *rows, size_t n);
/* The same for rows given by pointer. */
kbc_rate kbc_rate_pick_of(const kbc_record *const *rows, size_t n);
/* The rate's unit without a prefix: "B/s", "FLOP/s", "items/s" or the
   plugin's items ("keys/s", from item_name); a string that stays valid. */
const char *kbc_rate_unit(kbc_rate k, const char *item_name);

/* What a chart's y axis shows (kbench plot --metric). */
typedef enum kbc_chart_metric {
    KBC_METRIC_RATE,      /* the rate (kbc_rate), higher is better            */
    KBC_METRIC_TIME,      /* the median time, lower is better                 */
    KBC_METRIC_ENERGY,    /* the median joules per run, lower is better        */
    KBC_METRIC_EFFICIENCY /* the rate's work per joule (GB/J, GFLOP/J, items/J),
                             higher is better                                 */
} kbc_chart_metric;
#define KBC_N_METRICS 4

/* A metric's name on the command line ("rate", "time", "energy",
   "efficiency") and back (-1 when unknown). */
const char *kbc_chart_metric_name(kbc_chart_metric m);
int kbc_chart_metric_parse(const char *name);

/* Whether the metric is one of the energy's (energy, efficiency). */
int kbc_chart_metric_energy(kbc_chart_metric m);

/* How the x axis places its values. */
typedef enum kbc_x_scale {
    KBC_X_LOG,    /* all positive, each at least 1.25 times the one before,
                     spanning a factor of 4 or more                      */
    KBC_X_LINEAR, /* no two closer than a fiftieth of their span         */
    KBC_X_SLOTS   /* anything else: one slot per value, labelled with it  */
} kbc_x_scale;

/* One row drawn: x (NaN in a bar chart), its value y and its slowest and
   fastest run on the y axis (lo, hi: NaN where unknown; for the energy
   metrics the lowest and highest of its energy windows), all in the row's
   units (GB/s, GFLOP/s, items/s, seconds, joules, GB/J, GFLOP/J or
   items/J; multiply by the chart's scale for its unit). */
typedef struct kbc_chart_point {
    double x, y, lo, hi;
    const kbc_record *r;
} kbc_chart_point;

/* A variant's line: its points sorted by x.  flat: the variant ignores x,
   so its one row is drawn at every x of the chart. */
typedef struct kbc_chart_line {
    const char *variant;
    int library; /* KB_VARIANT_LIBRARY */
    int flat;
    kbc_chart_point *pts;
    size_t n;
} kbc_chart_line;

typedef struct kbc_chart {
    const char *experiment;
    /* The swept parameter on the x axis (its first swept size, else its
       first swept number); NULL for a bar chart. */
    const char *x;
    /* The chart's group: the other swept parameters of its rows as
       kbc_record_group spells them with ',' ("" for none; for a bar chart,
       all swept parameters, or "point<N>" when there are none), and its
       first row. */
    char group[512];
    const kbc_record *first;
    /* The y axis: the metric (for the rate and the efficiency, of the rate
       `rate`); a row's value times scale is in unit ("TB/s", "GFLOP/s",
       "Mitems/s", "us", "mJ", "GB/J" ...); largest is the largest value
       drawn (with the runs' band when asked for), in the row's units. */
    kbc_chart_metric metric;
    kbc_rate rate;
    double scale;
    char unit[24];
    double largest;
    /* The ceiling line (rate charts only): value in the row's units,
       0 for none; kind "read", "write", "mixed", "fp32", "tf32", "bf16" or
       "" (the rows' own spelling). */
    double ceiling;
    const char *ceiling_kind;
    /* A line chart: every variant of its rows in the order they first
       appear (a variant none of whose rows ran has no points), and the
       distinct x values of the points drawn, ascending. */
    kbc_chart_line *lines;
    size_t n_lines;
    double *xs;
    size_t nx;
    kbc_x_scale x_scale;
    int x_pow2; /* KBC_X_LOG with every value a power of two */
    /* A bar chart: every row of its points, and those drawn (in order).
       An experiment that sweeps no number but other values (dtype = f32,
       f64) is one chart with a group of bars per point, not a chart per
       point: bar_group[j] is bar j's group and group_labels[g] the group's
       swept values ("dtype=f32"); n_groups is 1 for a chart of one point.
       bar_variant[j] is bar j's variant among variants[0..n_variants) (in
       order of first appearance), so that a variant keeps its colour from
       group to group. */
    const kbc_record **rows;
    size_t n_rows;
    kbc_chart_point *bars;
    size_t n_bars;
    size_t *bar_group, *bar_variant;
    char (*group_labels)[256];
    size_t n_groups;
    const char **variants;
    size_t n_variants;
    /* Whether a drawn row is a library's, and whether one is not: a legend
       names only what the chart draws. */
    int any_library, any_kernel;
} kbc_chart;

typedef struct kbc_chart_opts {
    kbc_chart_metric metric; /* what y is (kbench plot --metric)               */
    int band; /* the slowest-to-fastest band counts for the unit (--band) */
} kbc_chart_opts;

/* Every chart of recs[0..n) (a results file's rows, in its order): the
   experiments in the order they first appear; an experiment's line charts
   in the order their groups first appear, or its bar chart, one per run
   of consecutive rows of the experiment (a group per point).  A chart none of whose rows can be
   drawn is listed too (nx == 0 or n_bars == 0: "none of its rows ran").
   The charts point into recs.  opt NULL: the rate, no band. */
kbc_chart *kbc_charts(const kbc_record *recs, size_t n, const kbc_chart_opts *opt,
                      size_t *n_charts);
void kbc_charts_free(kbc_chart *charts, size_t n);

/* Whether the chart has anything to draw. */
int kbc_chart_drawn(const kbc_chart *c);

/* A row's value on the chart's y axis, in the row's units: its median
   time, its rate, its joules per run or its work per joule; NaN for a row
   that did not run, and for the energy metrics one without energy. */
double kbc_chart_value(const kbc_chart *c, const kbc_record *r);

/* The slot of x on a KBC_X_SLOTS axis (its index among c->xs). */
size_t kbc_chart_slot(const kbc_chart *c, double x);

/* Whether the x axis has a tic at each value, labelled with it: slots,
   and a linear axis of at most 16 values. */
int kbc_chart_value_tics(const kbc_chart *c);

/* The axis titles and the ceiling's: "throughput (TB/s, bytes read +
   written)", "throughput (Gkeys/s)", "median time (ms, lower is better)",
   "energy per run (mJ, lower is better)", "energy efficiency (GB/J, bytes
   read + written per joule)"; "n (log2 scale)" (a size may count elements
   or be a shape's side, so the title names no unit); "read ceiling (3.35
   TB/s)", in the y axis's unit.  malloc'd. */
char *kbc_chart_ylabel(const kbc_chart *c);
char *kbc_chart_xlabel(const kbc_chart *c);
char *kbc_chart_ceiling_title(const kbc_chart *c);

#endif
