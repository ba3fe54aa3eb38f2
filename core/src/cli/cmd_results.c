/*
 * cmd_results.c -- the commands that read the results of runs: compare,
 * report, plot, merge and history.  Each checks its options' values and
 * calls the part of the core that does the work (records/, history/).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare_cmd.h"
#include "merge_cmd.h"
#include "report_history.h"
#include "report_html.h"

/* A number from an option's value, within [lo, hi] (lo excluded when
   open_lo).  Returns 0, or an exit code after printing why. */
static int number_option(const char *name, const char *text, double lo, int open_lo, double hi,
                         double *out)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(text, &end);
    if (errno || end == text || *end || !(open_lo ? x > lo : x >= lo) || !(x <= hi)) {
        kbc_say(1, "option %s wants a number %s %g and at most %g, not '%s'", name,
                open_lo ? "above" : "from", lo, hi, text);
        return KBC_EXIT_USAGE;
    }
    *out = x;
    return 0;
}

/* compare's defaults with --threshold and --alpha (compare, report).
   Returns 0, or an exit code after printing why. */
static int compare_options(const kbc_cli *c, kbc_compare_opts *o)
{
    kbc_compare_defaults(o);
    double pct = o->threshold * 100;
    int code;
    if (c->threshold && (code = number_option("--threshold", c->threshold, 0, 0, 1000, &pct)))
        return code;
    o->threshold = pct / 100;
    if (c->alpha && (code = number_option("--alpha", c->alpha, 0, 1, 0.5, &o->alpha)))
        return code;
    return 0;
}

int kbc_cli_compare(const kbc_cli *c)
{
    kbc_compare_opts o;
    int code;
    if ((code = compare_options(c, &o)))
        return code;
    if (c->format) {
        if (strcmp(c->format, "table") == 0)
            o.format = KBC_CMP_TABLE;
        else if (strcmp(c->format, "markdown") == 0)
            o.format = KBC_CMP_MARKDOWN;
        else if (strcmp(c->format, "json") == 0)
            o.format = KBC_CMP_JSON;
        else {
            kbc_say(1, "option --format wants table, markdown or json, not '%s'", c->format);
            return KBC_EXIT_USAGE;
        }
    }
    if (c->sort) {
        if (strcmp(c->sort, "change") == 0)
            o.sort = KBC_SORT_CHANGE;
        else if (strcmp(c->sort, "file") != 0) {
            kbc_say(1, "option --sort wants file or change, not '%s'", c->sort);
            return KBC_EXIT_USAGE;
        }
    }
    o.only_changed = c->only_changed;
    return kbc_cmd_compare(c->args[0], c->args[1], &o, stdout, stderr);
}

int kbc_cli_report(const kbc_cli *c)
{
    kbc_compare_opts o;
    int code = compare_options(c, &o);
    if (code)
        return code;
    kbc_history *h = NULL;
    kbc_diag d;
    if (c->history.db && (code = kbc_report_history_open(c->history.db, &h, &d)) != 0) {
        kbc_say(0, "--history: %s", d.msg);
        return code;
    }
    code = kbc_cmd_report(c->args[0], c->baseline, c->out_dir, &o,
                          h ? kbc_report_history_row : NULL, h, stdout, stderr);
    kbc_history_close(h);
    return code;
}

int kbc_cli_plot(const kbc_cli *c)
{
    const char *results = c->args[0];
    char *dir = NULL;
    if (c->out_dir) {
        dir = kbc_xstrdup(c->out_dir);
    } else {
        /* Beside the results file. */
        const char *slash = strrchr(results, '/');
        dir = slash ? kbc_xstrndup(results, (size_t)(slash - results) + (slash == results))
                    : kbc_xstrdup(".");
    }
    int code;
    kbc_plot_opts opts = c->plot_opts;
    int metric = c->metric ? kbc_chart_metric_parse(c->metric) : KBC_METRIC_RATE;
    if (metric < 0) {
        kbc_say(1, "option --metric wants rate, time, energy or efficiency, not '%s'",
                c->metric);
        free(dir);
        return KBC_EXIT_USAGE;
    }
    opts.metric = (kbc_chart_metric)metric;
    if (kbc_make_dirs(dir) != 0) {
        kbc_say(0, "cannot create the output folder '%s': %s", dir, strerror(errno));
        code = KBC_EXIT_SYSTEM;
    } else {
        code = kbc_cmd_plot(results, dir, NULL, &opts, stdout, stderr);
    }
    free(dir);
    return code;
}

int kbc_cli_merge(const kbc_cli *c)
{
    if (!c->out_dir) {
        kbc_say(1, "kbench merge needs -o OUT, the folder the joined results go to");
        return KBC_EXIT_USAGE;
    }
    return kbc_cmd_merge((const char *const *)c->args, (size_t)c->n_args, c->out_dir,
                         c->allow_mixed, stdout, stderr);
}

int kbc_cli_history(const kbc_cli *c)
{
    kbc_history_opts o = c->history;
    o.threshold = c->threshold;
    return kbc_cmd_history(c->args, (size_t)c->n_args, &o, stdout, stderr);
}
