/*
 * energy_rows.h -- gives a record built in a test the energy a row
 * measured on a GPU would carry (record.h, kbc_rec_energy): its windows'
 * joules per run, and what cuda/energy.c summarises from them (the median
 * and its interval, the watts, the work per joule).  No GPU runs here: the
 * tests of the outputs, compare, the history and the tuner need rows that
 * carry energy, not a measurement.  Included once per test program.
 */
#ifndef KBENCH_TEST_ENERGY_ROWS_H
#define KBENCH_TEST_ENERGY_ROWS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "record.h"
#include "stats.h"

#if defined(__GNUC__)
#define ENERGY_ROWS_MAYBE_UNUSED __attribute__((unused))
#else
#define ENERGY_ROWS_MAYBE_UNUSED
#endif

/* Row r measured n windows (n <= KBC_ENERGY_MAX_KEPT) of window_s seconds
   each, whose joules per run were j[0..n): energy = on, status measured,
   the median over the windows with its 95% interval (kbc_median_interval,
   as the measurement computes it), the watts of a window, and GB/J and
   GFLOP/J from r's declared work. */
static ENERGY_ROWS_MAYBE_UNUSED void er_measured(kbc_record *r, const double *j, uint32_t n,
                                                  double window_s)
{
    kbc_rec_energy *e = &r->energy;
    memset(e, 0, sizeof *e);
    e->requested = 2;
    e->status = KBC_ENERGY_MEASURED;
    e->window_s = window_s;
    e->windows = n;
    double sorted[KBC_ENERGY_MAX_KEPT], total = 0;
    for (uint32_t i = 0; i < n; i++) {
        e->window_j[i] = sorted[i] = j[i];
        e->window_sec[i] = window_s;
        total += j[i];
    }
    kbc_stats st;
    kbc_stats_compute(sorted, n, &st);
    e->j_per_run = st.median;
    kbc_median_interval(sorted, n, &e->j_lo, &e->j_hi);
    /* Each window held window_s / (median time) runs. */
    double runs = r->time.median > 0 ? window_s / r->time.median : 1;
    e->runs_per_window = (uint64_t)runs;
    e->watts = total / n * runs / window_s;
    e->idle_w = 70;
    e->power_limit_w = 700;
    double bytes = (double)r->work.bytes_read + (double)r->work.bytes_written;
    e->gb_per_j = bytes > 0 ? bytes / 1e9 / st.median : NAN;
    e->gflops_per_j = r->work.flops > 0 ? r->work.flops / 1e9 / st.median : NAN;
    e->throttled_s = 0;
}

/* Row r asked for energy, which could not be measured: status and why. */
static ENERGY_ROWS_MAYBE_UNUSED void er_not_measured(kbc_record *r, kbc_energy_status status,
                                                      const char *why)
{
    kbc_rec_energy *e = &r->energy;
    memset(e, 0, sizeof *e);
    e->requested = 2;
    e->status = status;
    snprintf(e->why, sizeof e->why, "%s", why);
    e->j_per_run = e->j_lo = e->j_hi = e->watts = e->idle_w = NAN;
    e->power_limit_w = e->gb_per_j = e->gflops_per_j = e->window_s = e->throttled_s = NAN;
}

#endif
