/*
 * test_sweep_summary.c -- an experiment's sweep at a glance
 * (analysis/sweep_summary.h): a row per swept value in the plan's order, a
 * column per variant, the fastest passed cell of each row marked, the
 * speed-ups over the sweep as a geometric mean with their extremes, a row
 * of a variant that ignores a swept parameter standing for every row it
 * covers; handed by the fan-out to each output before its end; rendered by
 * the table (at the end, or alone with --summary-only), results.md and the
 * HTML report.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fanout.h"
#include "report.h"
#include "sweep_summary.h"

#include "kbench_cmd.h"

#define TOY_DIR KBENCH_FIXTURE_DIR "/runner"

/* A row of reduce/[sweep] at n (and dtype, when not NULL), taking median
   seconds; the experiment's baseline is `base`, its reference `ref`. */
static kbc_record row(const char *variant, uint64_t n, const char *dtype, double median,
                      uint64_t point)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.plugin, sizeof r.plugin, "reduce");
    snprintf(r.experiment, sizeof r.experiment, "sweep");
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    snprintf(r.baseline, sizeof r.baseline, "base");
    snprintf(r.reference, sizeof r.reference, "ref");
    r.n_params = dtype ? 2 : 1;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = n;
    snprintf(r.params[0].text, sizeof r.params[0].text, "%llu", (unsigned long long)n);
    r.params[0].swept = 1;
    if (dtype) {
        snprintf(r.params[1].name, sizeof r.params[1].name, "dtype");
        r.params[1].type = KB_PARAM_ENUM;
        snprintf(r.params[1].text, sizeof r.params[1].text, "%s", dtype);
        r.params[1].swept = 1;
    }
    r.point = point;
    r.n_points = 4;
    r.outcome = KBC_PASS;
    r.time.n = 3;
    r.time.median = median;
    return r;
}

static kbc_sweeps *acc;

static void acc_free(void)
{
    kbc_sweeps_free(acc);
    acc = NULL;
}

TestSuite(sweep_summary, .fini = acc_free);

static const kbc_sweep *summed(const kbc_record *rows, size_t n, size_t *count)
{
    acc = kbc_sweeps_new();
    for (size_t i = 0; i < n; i++)
        kbc_sweeps_add(acc, &rows[i]);
    return kbc_sweeps_list(acc, count);
}

static const kbc_sweep_vs *vs_of(const kbc_sweep *w, const char *variant, int reference)
{
    for (size_t i = 0; i < w->n_vs; i++)
        if (strcmp(w->vs[i].variant, variant) == 0 && w->vs[i].reference == reference)
            return &w->vs[i];
    cr_assert_fail("no line for %s against the %s", variant, reference ? "reference" : "baseline");
    return NULL;
}

Test(sweep_summary, rows_are_the_swept_values_in_plan_order_and_columns_the_variants)
{
    /* Delivered out of order: the rows still follow the points. */
    kbc_record rows[] = {row("base", 2048, NULL, 4e-6, 1), row("fast", 2048, NULL, 2e-6, 1),
                         row("base", 1024, NULL, 2e-6, 0), row("fast", 1024, NULL, 1e-6, 0)};
    size_t n;
    const kbc_sweep *w = summed(rows, 4, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(w->n_rows, 2);
    cr_assert_eq(w->n_params, 1);
    cr_assert_str_eq(w->labels[0], "1024");
    cr_assert_str_eq(w->labels[1], "2048");
    cr_assert_eq(w->n_variants, 2);
    cr_assert_str_eq(w->variants[0], "base");
    cr_assert_float_eq(w->median[0 * 2 + 1], 1e-6, 1e-15);
    cr_assert_float_eq(w->median[1 * 2 + 0], 4e-6, 1e-15);
    cr_assert_eq(w->best[0], 1, "fast is the fastest at n=1024");
}

Test(sweep_summary, a_speedup_line_is_the_geometric_mean_with_min_and_max)
{
    /* fast against base: 2/1, 2/2, 2/4 = 2, 1, 0.5: the geometric mean
       is 1, not the arithmetic 1.17. */
    kbc_record rows[] = {row("base", 1, NULL, 2, 0), row("fast", 1, NULL, 1, 0),
                         row("base", 2, NULL, 2, 1), row("fast", 2, NULL, 2, 1),
                         row("base", 3, NULL, 2, 2), row("fast", 3, NULL, 4, 2)};
    size_t n;
    const kbc_sweep *w = summed(rows, 6, &n);
    const kbc_sweep_vs *x = vs_of(w, "fast", 0);
    cr_assert_eq(x->n, 3);
    cr_assert_float_eq(x->geomean, 1.0, 1e-12);
    char t[200];
    cr_assert_str_eq(kbc_sweep_vs_text(x, t, sizeof t),
                     "fast 1.00x base over 3 points (0.50x .. 2.00x)");
}

Test(sweep_summary, each_variant_gets_a_line_against_the_reference_too)
{
    kbc_record rows[] = {row("base", 1, NULL, 8, 0), row("fast", 1, NULL, 1, 0),
                         row("ref", 1, NULL, 1.12, 0), row("base", 2, NULL, 8, 1),
                         row("fast", 2, NULL, 1, 1), row("ref", 2, NULL, 1.12, 1)};
    size_t n;
    const kbc_sweep *w = summed(rows, 6, &n);
    cr_assert_eq(w->n_vs, 4, "fast and ref against base, base and fast against ref");
    char t[200];
    cr_assert_str_eq(kbc_sweep_vs_text(vs_of(w, "fast", 1), t, sizeof t),
                     "fast 1.12x ref over 2 points (1.12x .. 1.12x)");
    cr_assert_str_eq(kbc_sweep_vs_text(vs_of(w, "base", 1), t, sizeof t),
                     "base 0.14x ref over 2 points (0.14x .. 0.14x)");
}

Test(sweep_summary, a_failed_row_is_neither_best_nor_counted)
{
    kbc_record rows[] = {row("base", 1, NULL, 2, 0), row("fast", 1, NULL, 1, 0),
                         row("base", 2, NULL, 2, 1), row("fast", 2, NULL, 1, 1)};
    rows[3].outcome = KBC_FAIL;
    size_t n;
    const kbc_sweep *w = summed(rows, 4, &n);
    cr_assert_eq(w->best[1], -1, "one passed cell has nothing to beat");
    cr_assert_eq(w->outcome[1 * 2 + 1], KBC_FAIL);
    cr_assert(isnan(w->median[1 * 2 + 1]));
    const kbc_sweep_vs *x = vs_of(w, "fast", 0);
    cr_assert_eq(x->n, 1);
    char t[200];
    cr_assert_str_eq(kbc_sweep_vs_text(x, t, sizeof t), "fast 2.00x base at 1 point");
}

Test(sweep_summary, a_row_that_ignores_a_parameter_stands_for_every_row_it_covers)
{
    /* base reads n and dtype; flat ignores dtype, so its one row per n
       stands for both dtypes. */
    kbc_record rows[] = {row("base", 1, "f32", 2, 0), row("flat", 1, "f32", 1, 0),
                         row("base", 1, "f64", 4, 1)};
    rows[1].points = 2;
    snprintf(rows[1].ignores, sizeof rows[1].ignores, "dtype");
    size_t n;
    const kbc_sweep *w = summed(rows, 3, &n);
    cr_assert_eq(w->n_rows, 2);
    cr_assert_str_eq(w->labels[1 * 2 + 1], "f64");
    cr_assert_float_eq(w->median[1 * 2 + 1], 1.0, 1e-12, "flat's row at dtype=f64");
    const kbc_sweep_vs *x = vs_of(w, "flat", 0);
    cr_assert_eq(x->n, 2);
    cr_assert_float_eq(x->geomean, sqrt(2.0 * 4.0), 1e-12);
}

Test(sweep_summary, experiments_are_summed_up_apart_in_the_order_they_came)
{
    kbc_record rows[] = {row("base", 1, NULL, 2, 0), row("base", 1, NULL, 2, 0)};
    snprintf(rows[0].experiment, sizeof rows[0].experiment, "zeta");
    snprintf(rows[1].experiment, sizeof rows[1].experiment, "alpha");
    size_t n;
    const kbc_sweep *w = summed(rows, 2, &n);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(w[0].experiment, "zeta");
    cr_assert_str_eq(w[1].experiment, "alpha");
}

/* ---- through the fan-out to the table ---- */

static size_t seen_sweeps;
static int sweeps_before_end;

static int fake_sweeps(void *ctx, const kbc_sweep *list, size_t n)
{
    (void)ctx;
    (void)list;
    seen_sweeps = n;
    return 0;
}

static int fake_end(void *ctx, int code)
{
    (void)ctx;
    sweeps_before_end = seen_sweeps > 0;
    return 0;
}

Test(sweep_summary, the_fanout_hands_every_sink_the_summaries_before_its_end)
{
    kbc_sink sink = {.sweeps = fake_sweeps, .end = fake_end};
    kbc_fanout f;
    kbc_fanout_init(&f, &sink, 1, stderr, "kbench: ");
    kbc_run_info info = {0};
    kbc_record a = row("base", 1, NULL, 2, 0), b = row("fast", 1, NULL, 1, 0);
    kbc_fanout_begin(&f, &info);
    kbc_fanout_point(&f, &a, 1);
    kbc_fanout_point(&f, &b, 1);
    cr_assert_eq(kbc_fanout_end(&f, 0), 0);
    kbc_fanout_free(&f);
    cr_assert_eq(seen_sweeps, 1);
    cr_assert(sweeps_before_end);
}

/* The table of two points of [sweep] through a fan-out, as text. */
static char *table_text(int summary_only)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    kbc_sink sink;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_report_table(out, &sink, &d), 0);
    kbc_report_table_summary_only(&sink, summary_only);
    kbc_fanout f;
    kbc_fanout_init(&f, &sink, 1, stderr, "kbench: ");
    kbc_run_info info = {0};
    kbc_record p0[] = {row("base", 1024, NULL, 2e-6, 0), row("fast", 1024, NULL, 1e-6, 0)};
    kbc_record p1[] = {row("base", 2048, NULL, 4e-6, 1), row("fast", 2048, NULL, 3e-6, 1)};
    p1[1].outcome = KBC_FAIL;
    snprintf(p1[1].reason, sizeof p1[1].reason, "verification failed");
    kbc_fanout_begin(&f, &info);
    kbc_fanout_point(&f, p0, 2);
    kbc_fanout_point(&f, p1, 2);
    kbc_fanout_end(&f, 1);
    kbc_fanout_free(&f);
    sink.destroy(sink.ctx);
    fclose(out);
    return text;
}

Test(sweep_summary, the_table_ends_with_the_summary_of_a_sweep)
{
    char *t = table_text(0);
    char *points = strstr(t, "sweep  point 2/4");
    char *sum = strstr(t, "sweep of sweep: median time per variant");
    cr_assert_not_null(points, "%s", t);
    cr_assert_not_null(sum, "%s", t);
    cr_assert_gt(sum - points, 0, "the summary follows the points: %s", t);
    cr_assert_not_null(strstr(t, "  1024       2 us      1 us*\n"), "%s", t);
    cr_assert_not_null(strstr(t, "  2048       4 us       FAIL\n"), "%s", t);
    cr_assert_not_null(strstr(t, "  fast 2.00x base at 1 point\n"), "%s", t);
    free(t);
}

Test(sweep_summary, summary_only_shows_the_summary_and_the_failures_not_the_points)
{
    char *t = table_text(1);
    cr_assert_null(strstr(t, "point 1/4  n="), "%s", t);
    cr_assert_null(strstr(t, "backend"), "no point's table: %s", t);
    cr_assert_not_null(strstr(t, "sweep  point 2/4  fast: FAIL: verification failed\n"), "%s",
                       t);
    cr_assert_not_null(strstr(t, "sweep of sweep: median time per variant"), "%s", t);
    cr_assert_not_null(strstr(t, "summary: 3 pass, 1 FAIL"), "%s", t);
    free(t);
}

/* ---- the command ---- */

TestSuite(sweep_cmd, .init = kc_tmp, .fini = kc_tmp_remove);

Test(sweep_cmd, run_summary_only_and_results_md_and_the_html_report)
{
    kc_write("s.ini", "[global]\nruns = 3\n[s]\nplugin = toy\nvariants = good, slow\n"
                      "baseline = slow\nn = 1K, 2K, 4K\n");
    kc_result r = kc_run("run s.ini --summary-only -o out --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "sweep of s: median time per variant"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "  good "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, " slow over 3 points ("), "%s", r.out);
    cr_assert_null(strstr(r.out, "point 1/3"), "%s", r.out);
    char *md = kc_slurp(kc_path("out/results.md"));
    cr_assert_not_null(strstr(md, "### s  point 1/3"), "results.md keeps its tables");
    cr_assert_not_null(strstr(md, "## Sweep of s"), "%s", md);
    cr_assert_not_null(strstr(md, "- good "), "%s", md);
    free(md);
    kc_free(&r);
    r = kc_run("report out");
    cr_assert_eq(r.code, 0, "%s", r.err);
    char *html = kc_slurp(kc_path("out/report.html"));
    cr_assert_not_null(strstr(html, "<table class=\"sweep\">"));
    cr_assert_not_null(strstr(html, " slow over 3 points ("));
    free(html);
    kc_free(&r);
}
