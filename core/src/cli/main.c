/*
 * main.c -- the kbench command line: the usage text, the option table,
 * and each command's checks and call (list, describe, run, check, compare,
 * plot, merge, tune, history, help).
 *
 * The command line is read in one pass that accepts options anywhere (so
 * `kbench --plugin-path P run x.ini` and `kbench run x.ini --plugin-path P`
 * mean the same), then checked against the command it belongs to.  Every
 * mistake gets one sentence and an exit code from util.h; docs/cli.md
 * documents both.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "tune.h"
#include "compare.h"
#include "plot.h"
#include "quick.h"
#include "config.h"
#include "history_cmd.h"
#include "version.h"
#include "gpu.h"
#include "ini.h"
#include "journal.h"
#include "loader.h"
#include "merge.h"
#include "report.h"
#include "report_html.h"
#include "report_history.h"
#include "results_read.h"
#include "shard.h"
#include "supervisor.h"
#include "worker.h"
#include "util.h"

/* The usage text before the options, and after them; the options part
   is made from the option table, so that a new option is one row. */
static const char usage_head[] =
    "usage: kbench list\n"
    "       kbench describe PLUGIN\n"
    "       kbench run FILE|PLUGIN [KEY=VALUE...] [--dry-run] [-o DIR [--plot]\n"
    "                  [--resume[=accept] | --force]] [-q] [--wide]\n"
    "                  [--variants LIST] [--experiment NAMES] [--set K=V]...\n"
    "                  [--baseline OLD.json] [--gpus all|LIST [--allow-shared]\n"
    "                  [--allow-mixed]] [--shard i/N|auto [--shards N]]\n"
    "                  [--isolate point] [--sanitize-on-crash]\n"
    "                  [--record [--commit REV] [--history FILE]]\n"
    "       kbench check PLUGIN [--variants LIST]\n"
    "       kbench compare BASE.json NEW.json [--threshold PCT] [--alpha ALPHA]\n"
    "                      [--format table|markdown|json] [--only-changed]\n"
    "                      [--sort file|change]\n"
    "       kbench plot RESULTS.json [-o DIR] [--metric rate|time] [--logy] [--band]\n"
    "       kbench merge DIR... -o OUT [--allow-mixed]\n"
    "       kbench tune FILE -o DIR [--simulate DIR] [--gpus all|LIST\n"
    "                  [--allow-shared] [--allow-mixed]] [--experiment NAMES]\n"
    "                  [--set K=V]... [-q]\n"
    "       kbench history add DIR|RESULTS.json... [--commit REV] [--history FILE]\n"
    "       kbench history rebuild DIR... [--history FILE]\n"
    "       kbench history runs|list [--csv] [--history FILE]\n"
    "       kbench history show KEY [--history FILE]\n"
    "       kbench history series KEY [--csv] [--history FILE]\n"
    "       kbench history regressions [--since REV] [--threshold PCT] [--csv]\n"
    "                  [--history FILE]\n"
    "       kbench report RESULTS [--baseline OLD] [--history FILE] [-o report.html]\n"
    "       kbench help | --help | --version\n"
    "\n"
    "Commands:\n"
    "  list              the plugins found, their variants and backends\n"
    "  describe PLUGIN   one plugin's parameters: types, defaults, ranges, help\n"
    "  run FILE          run the experiments of an INI file and print a table\n"
    "  check PLUGIN      conformance check of a plugin against the plugin rules\n"
    "  compare BASE NEW  each row's change between two results.json files, with a\n"
    "                    confidence interval and a verdict; exit 1 when one is slower\n"
    "  plot RESULTS      gnuplot scripts (and SVG and PNG, with gnuplot) of a run\n"
    "  report RESULTS    one self-contained HTML page of a run: tables, plots and,\n"
    "                    with --baseline, compare's verdicts\n"
    "  merge DIR...      join the folders of a sharded run (--shard) into one\n"
    "  tune FILE         search the parameter space of the sections with a tune\n"
    "                    key; the best of each problem into DIR/best.ini\n"
    "  history SUB       results over time (docs/history.md): add DIR|FILE...,\n"
    "                    rebuild DIR..., runs, list, show KEY, series KEY,\n"
    "                    regressions; exit 1 when a step is slower\n"
    "  help              this text\n"
    "\n"
    "Options:\n";

static const char usage_tail[] =
    "\n"
    "Exit codes: 0 everything that could run passed (skipped variants do not\n"
    "fail a run); 1 a verification failed, a variant erred, crashed or timed\n"
    "out; 2 a usage, configuration or plugin error; 3 a system error (out of\n"
    "memory, an output that cannot be written, a worker that cannot start);\n"
    "130 interrupted (rerun with --resume to finish).  Plugins are searched in\n"
    "the build's plugin folder (for a build) or PREFIX/lib/kbench/plugins (when\n"
    "installed), then $KBENCH_PLUGIN_PATH, then plugin_path and --plugin-path.\n";

static const char *const commands[] = {"list",  "describe", "run",     "check",  "compare",
                                       "plot",  "merge",    "tune",    "history", "report",
                                       "help"};

/* Prints "kbench: <sentence>" and, for usage errors, where help is. */
static void say(int with_help, const char *fmt, ...) KB_PRINTF(2, 3);

/* A run without a file (quick.h): its INI file's places are named by the
   arguments they came from. */
static const kbc_quick *say_quick;

static void say(int with_help, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (say_quick)
        kbc_quick_name(say_quick, msg, sizeof msg);
    /* Diagnostics come from several parts of the core, some ending in a
       full stop and some not; the user sees one style. */
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '.' || msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = '\0';
    /* A sentence that ends in a question ("did you mean 'n'?") keeps its
       question mark and takes no full stop. */
    int question = n > 0 && msg[n - 1] == '?';
    if (with_help)
        fprintf(stderr, "kbench: %s%s see kbench --help.\n", msg, question ? "" : ";");
    else
        fprintf(stderr, "kbench: %s%s\n", msg, question ? "" : ".");
}

typedef struct cli {
    const char *command;
    const char **args; /* positional arguments after the command */
    int n_args;
    const char **plugin_paths;
    int n_plugin_paths;
    const char *out_dir;
    int dry_run, quiet, help, version, plot;
    /* The command-specific options seen, as typed, and the commands each
       belongs to, checked against the command once it is known: one entry
       per option of the table, however often it is given, so that none
       is ever left unchecked. */
    char only[48][64];
    const char *only_cmd[48];
    const void *only_row[48];
    int n_only;
    const char *variants;  /* check, run: --variants                          */
    const char *experiment;/* run: --experiment                               */
    const char **sets;     /* run: every --set, in order                      */
    int n_sets;
    const char *threshold, *alpha, *format; /* compare                        */
    const char *sort;      /* compare: --sort                                 */
    int only_changed;      /* compare: --only-changed                         */
    const char *baseline;  /* run: --baseline                                 */
    const char *gpus;      /* run: --gpus                                     */
    const char *shard;     /* run: --shard                                    */
    const char *shards;    /* run: --shards (with --shard auto)               */
    const char *isolate;   /* run: --isolate                                  */
    const char *resume;    /* run: --resume ("" or "accept"), or NULL         */
    int force, allow_mixed, allow_shared, sanitize_on_crash;
    int record;            /* run: --record                                   */
    kbc_history_opts history; /* history, run --record: --history, --commit,
                                 --since, --csv (and --threshold)            */
    kbc_plot_opts plot_opts; /* plot: --logy, --metric, --band            */
    const char *metric;      /* plot: --metric, as given                  */
    int wide;              /* run: --wide                                     */
    const char *simulate;  /* tune: --simulate                                */
} cli;

/* One command-line option.  A row names the option, says whether it takes
   a value (arg names it in --help and in errors) and whether it belongs to
   run alone, and handles it. */
typedef struct option_row {
    const char *name; /* "--output" */
    char short_name;  /* 'o', or 0 */
    const char *arg;  /* "DIR" when the option takes a value, else NULL */
    int repeatable;   /* a value option that may be given more than once */
    /* A flag that may also be given a value after '=' (--resume=accept);
       arg names that value in --help. */
    int optional_value;
    const char *only; /* the commands that take it ("run plot"), or NULL for any */
    const char *help; /* lines separated by '\n' */
    void (*handle)(cli *c, const char *value);
} option_row;

static void opt_plugin_path(cli *c, const char *v)
{
    c->plugin_paths[c->n_plugin_paths++] = v;
}
static void opt_dry_run(cli *c, const char *v)
{
    c->dry_run = 1;
}
static void opt_simulate(cli *c, const char *v)
{
    c->simulate = v;
}
static void opt_output(cli *c, const char *v)
{
    c->out_dir = v;
}
static void opt_experiment(cli *c, const char *v)
{
    c->experiment = v;
}
static void opt_set(cli *c, const char *v)
{
    c->sets[c->n_sets++] = v;
}
static void opt_variants(cli *c, const char *v)
{
    c->variants = v;
}
static void opt_baseline(cli *c, const char *v)
{
    c->baseline = v;
}
static void opt_threshold(cli *c, const char *v)
{
    c->threshold = v;
}
static void opt_alpha(cli *c, const char *v)
{
    c->alpha = v;
}
static void opt_format(cli *c, const char *v)
{
    c->format = v;
}
static void opt_sort(cli *c, const char *v)
{
    c->sort = v;
}
static void opt_only_changed(cli *c, const char *v)
{
    c->only_changed = 1;
}
static void opt_wide(cli *c, const char *v)
{
    c->wide = 1;
}
static void opt_plot(cli *c, const char *v)
{
    c->plot = 1;
}
static void opt_quiet(cli *c, const char *v)
{
    c->quiet = 1;
}
static void opt_gpus(cli *c, const char *v)
{
    c->gpus = v;
}
static void opt_shard(cli *c, const char *v)
{
    c->shard = v;
}
static void opt_shards(cli *c, const char *v)
{
    c->shards = v;
}
static void opt_isolate(cli *c, const char *v)
{
    c->isolate = v;
}
static void opt_resume(cli *c, const char *v)
{
    c->resume = v ? v : "";
}
static void opt_force(cli *c, const char *v)
{
    c->force = 1;
}
static void opt_allow_mixed(cli *c, const char *v)
{
    c->allow_mixed = 1;
}
static void opt_allow_shared(cli *c, const char *v)
{
    c->allow_shared = 1;
}
static void opt_sanitize_on_crash(cli *c, const char *v)
{
    c->sanitize_on_crash = 1;
}
static void opt_record(cli *c, const char *v)
{
    c->record = 1;
}
static void opt_history(cli *c, const char *v)
{
    c->history.db = v;
}
static void opt_commit(cli *c, const char *v)
{
    c->history.commit = v;
}
static void opt_since(cli *c, const char *v)
{
    c->history.since = v;
}
static void opt_csv(cli *c, const char *v)
{
    c->history.csv = 1;
}
static void opt_logy(cli *c, const char *v)
{
    c->plot_opts.logy = 1;
}
static void opt_metric(cli *c, const char *v)
{
    c->metric = v;
}
static void opt_band(cli *c, const char *v)
{
    c->plot_opts.band = 1;
}
static void opt_help(cli *c, const char *v)
{
    c->help = 1;
}
static void opt_version(cli *c, const char *v)
{
    c->version = 1;
}

static const option_row option_table[] = {
    {"--plugin-path", 0, "P", 1, 0, NULL,
     "also load plugins from folder or file P (repeatable;\nbefore or after the command)",
     opt_plugin_path},
    {"--dry-run", 'n', NULL, 0, 0, "run", "run: print the expanded plan, run nothing, touch no GPU",
     opt_dry_run},
    {"--output", 'o', "DIR", 0, 0, "run plot merge tune report",
     "run: also write DIR/results.csv, DIR/results.json,\nDIR/results.md and DIR/journal.jsonl (a DIR that holds\nresults is refused without --resume or --force); plot:\nwrite into DIR; merge: the merged results (DIR is\ncreated when missing); tune: the cache, best.ini ...;\nreport: the HTML file to write",
     opt_output},
    {"--resume", 0, "accept", 0, 1, "run",
     "run: with -o, skip the points DIR/journal.jsonl holds\n(same key, plugin build and GPU model); =accept keeps\nthem also when the INI file's plan changed",
     opt_resume},
    {"--force", 0, NULL, 0, 0, "run", "run: with -o, start afresh in a DIR that holds results",
     opt_force},
    {"--gpus", 0, "GPUS", 0, 0, "run tune",
     "run, tune: one worker per GPU: all, or NVML indices or\nUUIDs (0,2 or GPU-...); default: one GPU ($KBENCH_DEVICE)",
     opt_gpus},
    {"--allow-shared", 0, NULL, 0, 0, "run tune",
     "run, tune: let --gpus name one GPU more than once, and run\non a GPU another kbench run is using",
     opt_allow_shared},
    {"--allow-mixed", 0, NULL, 0, 0, "run merge tune",
     "run, merge, tune: accept GPUs of different models in one\nrun", opt_allow_mixed},
    {"--shard", 0, "SPEC", 0, 0, "run",
     "run: only shard i of N of the plan (i/N, from 0), or auto:\ni and N from Slurm, Open MPI, MPICH or Kubernetes",
     opt_shard},
    {"--shards", 0, "N", 0, 0, "run", "run: the count for --shard auto where the launcher\ngives only an index (a Kubernetes Indexed Job)", opt_shards},
    {"--isolate", 0, "MODE", 0, 0, "run",
     "run: point: a fresh worker for every point (default: one\nworker per GPU for the whole run)",
     opt_isolate},
    {"--sanitize-on-crash", 0, NULL, 0, 0, "run",
     "run: rerun a crashed CUDA variant once under compute-sanitizer\nmemcheck and attach its first report to the row",
     opt_sanitize_on_crash},
    {"--baseline", 0, "OLD", 0, 0, "run report",
     "run, report: beside each row, its change against the same\nrow of OLD (an earlier results.json), as compare judges it",
     opt_baseline},
    {"--plot", 0, NULL, 0, 0, "run",
     "run: with -o, also plot the results into DIR (kbench plot)\nand link the plots from DIR/results.md",
     opt_plot},
    {"--quiet", 'q', NULL, 0, 0, "run tune", "run, tune: no progress line, only warnings on stderr", opt_quiet},
    {"--wide", 0, NULL, 0, 0, "run",
     "run: the table also shows min, max, runs, noise, the variants'\nflags and the check",
     opt_wide},
    {"--variants", 0, "LIST", 0, 0, "check run",
     "check: only these variants (comma-separated); run: the\nvariants of every experiment",
     opt_variants},
    {"--experiment", 0, "NAMES", 0, 0, "run tune",
     "run, tune: only the experiments named (comma-separated;\nglobs such as 'reduce-*' match)",
     opt_experiment},
    {"--set", 0, "K=V", 1, 0, "run tune",
     "run, tune: KEY=VALUE for [global], or SECTION.KEY=VALUE, as\nif written in the file (repeatable)",
     opt_set},
    {"--threshold", 0, "PCT", 0, 0, "compare history report",
     "compare, report: a change smaller than PCT percent is no change\n(default 5); history regressions: the smallest step\nlisted (default 2)", opt_threshold},
    {"--simulate", 0, "DIR", 0, 0, "tune",
     "tune: replay the search from DIR (the -o folder of an\nearlier tuning) without running anything",
     opt_simulate},
    {"--alpha", 0, "ALPHA", 0, 0, "compare report",
     "compare, report: the interval has confidence 1 - ALPHA (default 0.05)", opt_alpha},
    {"--format", 0, "FMT", 0, 0, "compare", "compare: table (default), markdown or json",
     opt_format},
    {"--record", 0, NULL, 0, 0, "run",
     "run: with -o, add the run to the history when it ends\n(kbench history add; docs/history.md)", opt_record},
    {"--history", 0, "FILE", 0, 0, "history run report",
     "history, run --record: the database (default\n$KBENCH_HISTORY, else $XDG_DATA_HOME/kbench/history.db);\nreport: a history column from that database",
     opt_history},
    {"--commit", 0, "REV", 0, 0, "history run",
     "history add, run --record: the commit of the code under\ntest (default: git HEAD here, else kbench's revision)",
     opt_commit},
    {"--since", 0, "REV", 0, 0, "history",
     "history regressions: only steps at commit REV or later", opt_since},
    {"--csv", 0, NULL, 0, 0, "history", "history runs, list, series, regressions: CSV", opt_csv},
    {"--metric", 0, "WHAT", 0, 0, "plot",
     "plot: rate (default: GB/s, FLOP/s or items/s) or time\n(the median)", opt_metric},
    {"--logy", 0, NULL, 0, 0, "plot", "plot: a log y axis", opt_logy},
    {"--band", 0, NULL, 0, 0, "plot",
     "plot: each line's slowest to fastest run as a band\n(error bars on a bar chart)", opt_band},
    {"--only-changed", 0, NULL, 0, 0, "compare",
     "compare: list only the rows judged slower, faster or noisy\n(and rows lost in new)",
     opt_only_changed},
    {"--sort", 0, "ORDER", 0, 0, "compare",
     "compare: file (default: the base file's order) or change\n(the largest slowdown first)",
     opt_sort},
    {"--help", 'h', NULL, 0, 0, NULL, "this text", opt_help},
    {"--version", 'V', NULL, 0, 0, NULL, "the version and git revision", opt_version},
};
#define N_OPTIONS (sizeof option_table / sizeof *option_table)
_Static_assert(N_OPTIONS <= sizeof ((cli *)0)->only / sizeof *((cli *)0)->only,
               "cli.only holds one entry per option");

/* What an option's value is, in words, for errors. */
static const char *arg_noun(const option_row *o)
{
    return strcmp(o->arg, "DIR") == 0     ? "folder"
           : strcmp(o->arg, "LIST") == 0  ? "list of variants"
           : strcmp(o->arg, "PCT") == 0   ? "percentage"
           : strcmp(o->arg, "ALPHA") == 0 ? "significance level"
           : strcmp(o->arg, "FMT") == 0   ? "format"
           : strcmp(o->arg, "OLD") == 0   ? "results file"
           : strcmp(o->arg, "GPUS") == 0  ? "list of GPUs"
           : strcmp(o->arg, "SPEC") == 0  ? "shard (i/N or auto)"
           : strcmp(o->arg, "N") == 0     ? "count"
           : strcmp(o->arg, "MODE") == 0  ? "mode"
           : strcmp(o->arg, "NAMES") == 0 ? "list of experiments"
           : strcmp(o->arg, "K=V") == 0   ? "KEY=VALUE"
           : strcmp(o->arg, "REV") == 0   ? "revision"
           : strcmp(o->arg, "FILE") == 0  ? "file"
           : strcmp(o->arg, "WHAT") == 0  ? "metric (rate or time)"
           : strcmp(o->arg, "ORDER") == 0 ? "order"
                                          : "path";
}

/* "-o, --output DIR" */
static void option_left(const option_row *o, char *buf, size_t n)
{
    char shrt[8] = "    ";
    if (o->short_name)
        snprintf(shrt, sizeof shrt, "-%c, ", o->short_name);
    if (o->optional_value)
        snprintf(buf, n, "%s%s[=%s]", shrt, o->name, o->arg);
    else
        snprintf(buf, n, "%s%s%s%s", shrt, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* The usage text, with one entry per row of the option table. */
static void print_usage(FILE *out)
{
    fputs(usage_head, out);
    char left[64];
    int width = 0;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        option_left(&option_table[i], left, sizeof left);
        if ((int)strlen(left) > width)
            width = (int)strlen(left);
    }
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option_row *o = &option_table[i];
        option_left(o, left, sizeof left);
        const char *h = o->help;
        for (int first = 1; *h; first = 0) {
            size_t len = strcspn(h, "\n");
            fprintf(out, "  %-*s  %.*s\n", width, first ? left : "", (int)len, h);
            h += len + (h[len] == '\n');
        }
    }
    fputs(usage_tail, out);
}

/* The text s as one field of `kbench __options`: a backslash, a tab and a
   line break written as \\, \t and \n, so that a field never spans a
   tab or a line. */
static void dump_field(FILE *out, const char *s)
{
    fputc('\t', out);
    for (const char *p = s ? s : ""; *p; p++)
        fputs(*p == '\\' ? "\\\\" : *p == '\t' ? "\\t" : *p == '\n' ? "\\n" : (char[]){*p, 0}, out);
}

/* `kbench __options` (hidden): the usage text and the option table as
   data, one record a line, fields separated by tabs.  The build runs it
   and gen_manual.c turns it into the man page and the bash and zsh
   completions (core/CMakeLists.txt), so that those stay one row of
   option_table[] away from --help. */
static void dump_options(FILE *out)
{
    fprintf(out, "version");
    dump_field(out, KBENCH_VERSION);
    fprintf(out, "\nhead");
    dump_field(out, usage_head);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        fprintf(out, "\ncommand");
        dump_field(out, commands[i]);
    }
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option_row *o = &option_table[i];
        char shrt[2] = {o->short_name, 0};
        fprintf(out, "\noption");
        dump_field(out, o->name);
        dump_field(out, shrt);
        dump_field(out, o->arg);
        dump_field(out, o->repeatable ? "repeatable" : "");
        dump_field(out, o->optional_value ? "optional" : "");
        dump_field(out, o->only);
        dump_field(out, o->help);
    }
    fprintf(out, "\ntail");
    dump_field(out, usage_tail);
    fputc('\n', out);
}

/* The row for name as typed ("-o" or "--output"), or NULL. */
static const option_row *find_option(const char *name)
{
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option_row *o = &option_table[i];
        if (strcmp(name, o->name) == 0 ||
            (o->short_name && name[0] == '-' && name[1] == o->short_name && !name[2]))
            return o;
    }
    return NULL;
}

/* Remembers a command-specific option for the check against the command
   (options may come before the command). */
static void note_only(cli *c, const option_row *o, const char *name)
{
    if (!o->only)
        return;
    for (int i = 0; i < c->n_only; i++)
        if (c->only_row[i] == o)
            return; /* given again: the first spelling is named */
    snprintf(c->only[c->n_only], sizeof c->only[0], "%s", name);
    c->only_row[c->n_only] = o;
    c->only_cmd[c->n_only++] = o->only;
}

/* Returns 0, or an exit code after printing why. */
static int parse(int argc, char **argv, cli *c)
{
    memset(c, 0, sizeof *c);
    c->args = kbc_xcalloc((size_t)argc + 1, sizeof *c->args);
    c->plugin_paths = kbc_xcalloc((size_t)argc + 1, sizeof *c->plugin_paths);
    c->sets = kbc_xcalloc((size_t)argc + 1, sizeof *c->sets);
    /* The value options seen, so that one given twice is refused instead
       of the last one silently winning. */
    const char *seen[N_OPTIONS] = {0};
    int only_positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_positional || a[0] != '-' || strcmp(a, "-") == 0) {
            if (!c->command)
                c->command = a;
            else
                c->args[c->n_args++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_positional = 1;
            continue;
        }
        /* Options with a value take it from the next word or after '='. */
        const char *value = NULL;
        const char *eq = strchr(a, '=');
        char name[64];
        if (eq && a[1] == '-' && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            value = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        const option_row *o = find_option(name);
        if (!o) {
            const char *names[2 * N_OPTIONS];
            char shorts[N_OPTIONS][3];
            size_t m = 0;
            for (size_t k = 0; k < N_OPTIONS; k++) {
                names[m++] = option_table[k].name;
                if (option_table[k].short_name) {
                    snprintf(shorts[k], sizeof shorts[k], "-%c", option_table[k].short_name);
                    names[m++] = shorts[k];
                }
            }
            const char *near = kbc_closest(name, names, m);
            if (near)
                say(1, "unknown option '%s' (did you mean '%s'?)", name, near);
            else
                say(1, "unknown option '%s'", name);
            return KBC_EXIT_USAGE;
        }
        if (o->optional_value) {
            if (value && strcmp(value, o->arg) != 0) {
                say(1, "option %s takes no value but %s (%s=%s), not '%s'", name, o->arg, name,
                    o->arg, value);
                return KBC_EXIT_USAGE;
            }
            note_only(c, o, name);
            o->handle(c, value);
            continue;
        }
        if (!o->arg && value) {
            say(1, "option %s takes no value", name);
            return KBC_EXIT_USAGE;
        }
        if (o->arg && !value) {
            if (i + 1 >= argc) {
                say(1, "option %s needs a %s after it",
                    name, arg_noun(o));
                return KBC_EXIT_USAGE;
            }
            value = argv[++i];
            /* "-o -q" is far more likely a forgotten value than a folder
               called -q; such a name can still be given as ./-q or -o=... */
            if (value[0] == '-' && value[1] != '\0') {
                say(1, "option %s needs a %s after it, and '%s' looks like an option (write "
                       "./%s for a folder of that name)",
                    name, arg_noun(o), value, value);
                return KBC_EXIT_USAGE;
            }
        }
        if (o->arg && !*value) {
            /* "an empty folder name", "an empty percentage" */
            const char *noun = arg_noun(o);
            int named = strcmp(noun, "folder") == 0 || strcmp(noun, "path") == 0 ||
                        strcmp(noun, "results file") == 0 || strcmp(noun, "file") == 0;
            say(1, "option %s was given an empty %s%s", name, noun, named ? " name" : "");
            return KBC_EXIT_USAGE;
        }
        size_t row = (size_t)(o - option_table);
        if (o->arg && !o->repeatable) {
            if (seen[row]) {
                say(1, "option %s is given twice ('%s' and '%s')", name,
                    seen[row], value);
                return KBC_EXIT_USAGE;
            }
            seen[row] = value;
        }
        note_only(c, o, name);
        o->handle(c, value);
    }
    return 0;
}

/* Loads the default plugin places and every --plugin-path.  Returns 0, or
   an exit code after printing why. */
static int load_plugins(const cli *c, kbc_registry *reg)
{
    kbc_registry_init(reg);
    kbc_registry_add_defaults(reg);
    for (int i = 0; i < c->n_plugin_paths; i++) {
        kbc_diag d = {{0}};
        int added = kbc_registry_add_path(reg, c->plugin_paths[i], &d);
        if (added == KBC_PATH_EMPTY)
            fprintf(stderr,
                    "kbench: warning: --plugin-path: the folder '%s' holds no plugin (no .so "
                    "file), so it adds nothing.\n",
                    c->plugin_paths[i]);
        else if (added < 0) {
            say(0, "--plugin-path: %s", d.msg);
            return KBC_EXIT_USAGE;
        }
    }
    return 0;
}

static char *join_args(int argc, char **argv)
{
    size_t n = 1;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *s = kbc_xcalloc(n, 1);
    for (int i = 0; i < argc; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

/* Whether dir holds the results of an earlier run. */
static const char *earlier_results(const char *dir)
{
    static const char *const names[] = {"journal.jsonl", "results.json", "results.csv"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *p = kbc_xasprintf("%s/%s", dir, names[i]);
        int there = access(p, F_OK) == 0;
        free(p);
        if (there)
            return names[i];
    }
    return NULL;
}

/* The options of kbench run that shape how it runs (not what): checked
   before the INI file is read.  Returns 0, or an exit code after saying
   why. */
static int run_options(const cli *c, kbc_super_opts *o)
{
    if (c->plot && !c->out_dir) {
        say(1, "option --plot needs -o DIR, the folder the plots go to");
        return KBC_EXIT_USAGE;
    }
    if (c->resume && !c->out_dir) {
        say(1, "option --resume needs -o DIR, the folder of the run to resume");
        return KBC_EXIT_USAGE;
    }
    if (c->resume && c->force) {
        say(1, "options --resume and --force contradict each other (finish the run in DIR, or "
               "start it afresh)");
        return KBC_EXIT_USAGE;
    }
    if (c->isolate && strcmp(c->isolate, "point") != 0) {
        say(1, "option --isolate wants point, not '%s'", c->isolate);
        return KBC_EXIT_USAGE;
    }
    o->isolate_point = c->isolate != NULL;
    if (c->record && !c->out_dir) {
        say(1, "option --record needs -o DIR: the history takes the run from DIR/results.json");
        return KBC_EXIT_USAGE;
    }
    if ((c->history.commit || c->history.db) && !c->record) {
        say(1, "options --commit and --history go with --record in kbench run");
        return KBC_EXIT_USAGE;
    }
    int hint = 0;
    if (c->shards) {
        char *end;
        errno = 0;
        long v = strtol(c->shards, &end, 10);
        if (errno || *end || v < 1 || v > 1000000) {
            say(1, "option --shards wants a count of at least 1, not '%s'", c->shards);
            return KBC_EXIT_USAGE;
        }
        if (!c->shard || strcmp(c->shard, "auto") != 0) {
            say(1, "option --shards goes with --shard auto (with --shard i/N the count is N)");
            return KBC_EXIT_USAGE;
        }
        hint = (int)v;
    }
    if (c->shard) {
        char why[600];
        if (kbc_shard_parse(c->shard, hint, &o->shard_index, &o->shard_count, why,
                            sizeof why) != 0) {
            say(1, "%s", why);
            return KBC_EXIT_USAGE;
        }
        if (!c->out_dir && !c->dry_run) {
            say(1, "option --shard needs -o DIR: a shard's results are merged from its folder "
                   "(kbench merge)");
            return KBC_EXIT_USAGE;
        }
    }
    return 0;
}

/* The dry run of a shard: which of the plan's points are its own, and
   how the expected cost splits. */
static void print_shards(const kbc_plan *plan, const kbc_super_opts *o, FILE *out)
{
    size_t n;
    kbc_job *jobs = kbc_plan_jobs(plan, &n);
    double *loads = kbc_xcalloc((size_t)o->shard_count, sizeof *loads);
    kbc_jobs_partition(jobs, n, o->shard_count, loads);
    double lo = loads[0], hi = loads[0], sum = 0;
    size_t mine = 0;
    for (int i = 0; i < o->shard_count; i++) {
        lo = loads[i] < lo ? loads[i] : lo;
        hi = loads[i] > hi ? loads[i] : hi;
        sum += loads[i];
    }
    for (size_t j = 0; j < n; j++)
        mine += jobs[j].shard == o->shard_index;
    char hash[65];
    kbc_plan_hash(plan, hash);
    fprintf(out,
            "\nshard %d of %d (plan %.12s): %zu of %zu points; expected cost %.4g s of %.4g s "
            "(shards from %.4g to %.4g s: imbalance %.1f%% over the mean)\n",
            o->shard_index, o->shard_count, hash, mine, n, loads[o->shard_index], sum, lo, hi,
            sum > 0 ? (hi / (sum / o->shard_count) - 1) * 100 : 0.0);
    for (size_t j = 0; j < n; j++)
        if (jobs[j].shard == o->shard_index)
            fprintf(out, "  [%s] point %llu\n", plan->exps[jobs[j].exp].name,
                    (unsigned long long)jobs[j].point);
    free(loads);
    free(jobs);
}

/* The kbench binary's own path into buf (its workers are started from it):
   0, or -1 after saying why. */
static int self_path(char *buf, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", buf, n - 1);
    if (len <= 0) {
        say(0, "cannot find the kbench binary to start its workers (/proc/self/exe: %s)",
            strerror(errno));
        return -1;
    }
    buf[len] = '\0';
    return 0;
}

static int cmd_run(const cli *c, int argc, char **argv)
{
    const char *path = c->args[0];
    kbc_registry reg;
    kbc_ini ini = {0};
    kbc_plan plan = {0};
    kbc_diag d = {{0}};
    kbc_super_opts so;
    memset(&so, 0, sizeof so);
    int code = load_plugins(c, &reg);
    int have_ini = 0, have_plan = 0;
    kbc_sink sinks[4];
    size_t n_sinks = 0;
    char *cmdline = NULL;
    kbc_record *base = NULL;
    size_t n_base = 0;
    kbc_gpu_pick *picks = NULL;
    size_t n_picks = 0;
    kbc_journal journal;
    int have_journal = 0;
    unsigned long long min_mem = 0;
    char self[4096];
    if (code)
        goto out;
    if ((code = run_options(c, &so)) != 0)
        goto out;
    if (kbc_ini_load(path, &ini, &d) != 0) {
        say(0, "%s", d.msg);
        code = KBC_EXIT_USAGE;
        goto out;
    }
    have_ini = 1;
    if (kbc_ini_narrow(&ini, c->experiment, c->sets, (size_t)c->n_sets, c->variants, &d) != 0) {
        say(1, "%s", d.msg);
        code = KBC_EXIT_USAGE;
        goto out;
    }
    /* The supervisor never touches CUDA: the GPUs come from NVML, and
       their size lets the plan refuse a point too big for them before
       anything runs.  A dry run asks nothing of the machine. */
    const char *gpus = c->gpus;
    const kbc_entry *gpus_key = NULL;
    if (!gpus) {
        /* [global] gpus = ..., unless --gpus was given. */
        const kbc_section *g = kbc_ini_section(&ini, "global");
        gpus_key = g ? kbc_section_get(g, "gpus") : NULL;
        gpus = gpus_key ? gpus_key->value : NULL;
    }
    if (gpus && !c->dry_run &&
        kbc_gpus_pick(gpus, c->allow_mixed, c->allow_shared, &picks, &n_picks, &min_mem, d.msg,
                      sizeof d.msg) != 0) {
        if (gpus_key)
        {
            char at[1100];
            say(0, "%s: key 'gpus' in [global]: %s",
                kbc_ini_where(&ini, gpus_key->file, gpus_key->line, at, sizeof at), d.msg);
        }
        else
            say(1, "%s", d.msg);
        code = KBC_EXIT_USAGE;
        goto out;
    }
    if (kbc_plan_build(&ini, &reg, min_mem, &plan, &d) != 0) {
        kbc_registry_print_refused(&reg, stderr);
        say(0, "%s", d.msg);
        code = KBC_EXIT_USAGE;
        goto out;
    }
    have_plan = 1;
    kbc_registry_print_refused(&reg, stderr);

    if (c->dry_run) {
        kbc_plan_print(&plan, stdout);
        if (so.shard_count > 0)
            print_shards(&plan, &so, stdout);
        fflush(stdout);
        code = ferror(stdout) ? KBC_EXIT_SYSTEM : KBC_EXIT_OK;
        goto out;
    }

    /* The baseline is read before anything runs: a bad file costs no GPU
       time. */
    if (c->baseline && kbc_results_read(c->baseline, &base, &n_base, &d) != 0) {
        say(0, "--baseline: %s", d.msg);
        code = KBC_EXIT_USAGE;
        goto out;
    }
    if (c->out_dir && !c->resume && !c->force && earlier_results(c->out_dir)) {
        say(0,
            "the output folder '%s' holds an earlier run (%s); add --resume to finish that run, "
            "or --force to start afresh in it",
            c->out_dir, earlier_results(c->out_dir));
        code = KBC_EXIT_USAGE;
        goto out;
    }
    if (c->resume) {
        char *j = kbc_xasprintf("%s/journal.jsonl", c->out_dir);
        int there = access(j, F_OK) == 0;
        free(j);
        if (!there) {
            say(0, "--resume: '%s' holds no journal.jsonl, so there is no run to resume there",
                c->out_dir);
            code = KBC_EXIT_USAGE;
            goto out;
        }
    }
    /* The journal comes first: a --resume that is refused (another plan,
       another shard, a damaged file) leaves DIR as it was, and a run
       killed from here on leaves a journal to resume from. */
    if (c->out_dir) {
        if (kbc_make_dirs(c->out_dir) != 0) {
            say(0, "cannot create the output folder '%s': %s", c->out_dir, strerror(errno));
            code = KBC_EXIT_SYSTEM;
            goto out;
        }
        char hash[65];
        kbc_plan_hash(&plan, hash);
        int sc = so.shard_count > 1 ? so.shard_count : 0;
        int r = c->resume ? kbc_journal_resume(&journal, c->out_dir, hash, so.shard_index, sc,
                                               strcmp(c->resume, "accept") == 0, stderr, &d)
                          : kbc_journal_create(&journal, c->out_dir, hash, so.shard_index, sc,
                                               &d);
        have_journal = 1;
        if (r != 0) {
            say(0, "%s", d.msg);
            code = c->resume ? KBC_EXIT_USAGE : KBC_EXIT_SYSTEM;
            goto out;
        }
    }
    if (kbc_report_table(stdout, &sinks[n_sinks], &d) != 0) {
        say(0, "%s", d.msg);
        code = KBC_EXIT_SYSTEM;
        goto out;
    }
    if (base)
        kbc_report_table_baseline(&sinks[n_sinks], base, n_base);
    kbc_report_table_wide(&sinks[n_sinks], c->wide);
    n_sinks++;
    if (c->out_dir) {
        if (kbc_make_dirs(c->out_dir) != 0) {
            say(0, "cannot create the output folder '%s': %s", c->out_dir, strerror(errno));
            code = KBC_EXIT_SYSTEM;
            goto out;
        }
        if (access(c->out_dir, W_OK | X_OK) != 0) {
            say(0, "cannot write into the output folder '%s': %s", c->out_dir, strerror(errno));
            code = KBC_EXIT_SYSTEM;
            goto out;
        }
        char *csv = kbc_xasprintf("%s/results.csv", c->out_dir);
        char *json = kbc_xasprintf("%s/results.json", c->out_dir);
        char *md = kbc_xasprintf("%s/results.md", c->out_dir);
        int ok = kbc_report_csv(csv, &sinks[n_sinks], &d) == 0;
        if (ok) {
            n_sinks++;
            ok = kbc_report_json(json, &sinks[n_sinks], &d) == 0;
            if (ok)
                n_sinks++;
        }
        if (ok) {
            ok = kbc_report_markdown(md, &sinks[n_sinks], &d) == 0;
            if (ok && base)
                kbc_report_table_baseline(&sinks[n_sinks], base, n_base);
            if (ok)
                n_sinks++;
        }
        free(csv);
        free(json);
        free(md);
        if (!ok) {
            say(0, "%s", d.msg);
            code = KBC_EXIT_SYSTEM;
            goto out;
        }
    }
    if (self_path(self, sizeof self) != 0) {
        code = KBC_EXIT_SYSTEM;
        goto out;
    }
    cmdline = join_args(argc, argv);
    kbc_run_set_quiet(c->quiet);
    so.request = (kbc_request){.self = self, .ini_path = path, .plugin_paths = c->plugin_paths,
                               .n_plugin_paths = c->n_plugin_paths,
                               .experiment = c->experiment, .sets = c->sets,
                               .n_sets = c->n_sets, .variants = c->variants,
                               .quiet = c->quiet, .allow_shared = c->allow_shared};
    so.journal = have_journal ? &journal : NULL;
    so.sanitize_on_crash = c->sanitize_on_crash;
    so.gpus = picks;
    so.n_gpus = n_picks;
    code = kbc_supervise(&plan, &so, sinks, n_sinks, cmdline);
    if (c->plot && code != KBC_EXIT_INTERRUPTED) {
        /* The reports are complete once their sinks are closed. */
        for (size_t i = 0; i < n_sinks; i++)
            if (sinks[i].destroy)
                sinks[i].destroy(sinks[i].ctx);
        n_sinks = 0;
        char *json = kbc_xasprintf("%s/results.json", c->out_dir);
        char *md = kbc_xasprintf("%s/results.md", c->out_dir);
        int pc = kbc_cmd_plot(json, c->out_dir, md, NULL, stdout, stderr);
        if (pc != 0 && code != KBC_EXIT_SYSTEM)
            code = KBC_EXIT_SYSTEM; /* the plots or their links are missing */
        free(json);
        free(md);
    }
    if (c->record && code != KBC_EXIT_INTERRUPTED) {
        for (size_t i = 0; i < n_sinks; i++)
            if (sinks[i].destroy)
                sinks[i].destroy(sinks[i].ctx);
        n_sinks = 0;
        int rc = kbc_history_record(c->out_dir, &c->history, stdout, stderr);
        if (rc != 0 && code == KBC_EXIT_OK)
            code = rc; /* the run is in DIR, but not in the history */
    }

out:
    for (size_t i = 0; i < n_sinks; i++)
        if (sinks[i].destroy)
            sinks[i].destroy(sinks[i].ctx);
    free(cmdline);
    free(picks);
    if (have_journal)
        kbc_journal_close(&journal);
    kbc_records_free(base, n_base);
    if (have_plan)
        kbc_plan_free(&plan);
    if (have_ini)
        kbc_ini_free(&ini);
    kbc_registry_free(&reg);
    return code;
}

/* A number from an option's value, within [lo, hi] (lo excluded when
   open_lo).  Returns 0, or an exit code after printing why. */
static int number_option(const char *name, const char *text, double lo, int open_lo, double hi,
                         double *out)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(text, &end);
    if (errno || end == text || *end || !(open_lo ? x > lo : x >= lo) || !(x <= hi)) {
        say(1, "option %s wants a number %s %g and at most %g, not '%s'", name,
            open_lo ? "above" : "from", lo, hi, text);
        return KBC_EXIT_USAGE;
    }
    *out = x;
    return 0;
}

/* compare's defaults with --threshold and --alpha (compare, report).
   Returns 0, or an exit code after printing why. */
static int compare_options(const cli *c, kbc_compare_opts *o)
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

static int cmd_compare(const cli *c)
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
            say(1, "option --format wants table, markdown or json, not '%s'", c->format);
            return KBC_EXIT_USAGE;
        }
    }
    if (c->sort) {
        if (strcmp(c->sort, "change") == 0)
            o.sort = KBC_SORT_CHANGE;
        else if (strcmp(c->sort, "file") != 0) {
            say(1, "option --sort wants file or change, not '%s'", c->sort);
            return KBC_EXIT_USAGE;
        }
    }
    o.only_changed = c->only_changed;
    return kbc_cmd_compare(c->args[0], c->args[1], &o, stdout, stderr);
}

static int cmd_report(const cli *c)
{
    kbc_compare_opts o;
    int code = compare_options(c, &o);
    if (code)
        return code;
    kbc_history *h = NULL;
    kbc_diag d;
    if (c->history.db && (code = kbc_report_history_open(c->history.db, &h, &d)) != 0) {
        say(0, "--history: %s", d.msg);
        return code;
    }
    code = kbc_cmd_report(c->args[0], c->baseline, c->out_dir, &o,
                          h ? kbc_report_history_row : NULL, h, stdout, stderr);
    kbc_history_close(h);
    return code;
}

static int cmd_plot(const cli *c)
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
    if (c->metric && strcmp(c->metric, "time") != 0 && strcmp(c->metric, "rate") != 0) {
        say(1, "option --metric wants rate or time, not '%s'", c->metric);
        free(dir);
        return KBC_EXIT_USAGE;
    }
    opts.metric_time = c->metric && strcmp(c->metric, "time") == 0;
    if (kbc_make_dirs(dir) != 0) {
        say(0, "cannot create the output folder '%s': %s", dir, strerror(errno));
        code = KBC_EXIT_SYSTEM;
    } else {
        code = kbc_cmd_plot(results, dir, NULL, &opts, stdout, stderr);
    }
    free(dir);
    return code;
}

/* `kbench run PLUGIN KEY=VALUE ...`: the run of a one-experiment INI file
   made from the arguments (quick.h). */
static int run_quick(const cli *c, int argc, char **argv)
{
    kbc_quick q;
    char why[700];
    if (kbc_quick_write(&q, c->args[0], c->args + 1, (size_t)c->n_args - 1, why,
                        sizeof why) != 0) {
        say(1, "%s", why);
        return KBC_EXIT_USAGE;
    }
    cli file = *c;
    const char *path = q.path;
    file.args = &path;
    file.n_args = 1;
    say_quick = &q;
    int code = cmd_run(&file, argc, argv);
    say_quick = NULL;
    kbc_quick_free(&q);
    return code;
}

/* kbench tune FILE -o DIR (tune.h). */
static int cmd_tune(const cli *c, int argc, char **argv)
{
    if (!c->out_dir) {
        say(1, "kbench tune needs -o DIR, the folder of its cache and results");
        return KBC_EXIT_USAGE;
    }
    kbc_registry reg;
    int code = load_plugins(c, &reg);
    kbc_gpu_pick *picks = NULL;
    size_t n_picks = 0;
    unsigned long long min_mem = 0;
    char self[4096], why[600];
    if (code == 0 && self_path(self, sizeof self) != 0)
        code = KBC_EXIT_SYSTEM;
    if (code == 0 && c->gpus && !c->simulate &&
        kbc_gpus_pick(c->gpus, c->allow_mixed, c->allow_shared, &picks, &n_picks, &min_mem, why,
                      sizeof why) != 0) {
        say(1, "%s", why);
        code = KBC_EXIT_USAGE;
    }
    if (code == 0 && kbc_make_dirs(c->out_dir) != 0) {
        say(0, "cannot create the output folder '%s': %s", c->out_dir, strerror(errno));
        code = KBC_EXIT_SYSTEM;
    }
    if (code == 0) {
        char *cmdline = join_args(argc, argv);
        kbc_run_set_quiet(c->quiet);
        kbc_tune_opts o = {.self = self, .ini_path = c->args[0],
                           .plugin_paths = c->plugin_paths, .n_plugin_paths = c->n_plugin_paths,
                           .experiment = c->experiment, .sets = c->sets, .n_sets = c->n_sets,
                           .out_dir = c->out_dir, .simulate = c->simulate, .quiet = c->quiet,
                           .gpus = picks, .n_gpus = n_picks, .allow_shared = c->allow_shared,
                           .device_mem = min_mem, .command_line = cmdline};
        code = kbc_tune(&o, &reg, stdout, stderr);
        free(cmdline);
    }
    free(picks);
    kbc_registry_free(&reg);
    return code;
}

/* Checks that cmd got exactly `want` positional arguments. */
static int check_args(const cli *c, int want, const char *what)
{
    if (c->n_args < want) {
        say(1, "kbench %s needs %s", c->command, what);
        return KBC_EXIT_USAGE;
    }
    if (c->n_args > want) {
        say(1, "kbench %s takes %s, and '%s' is one too many", c->command,
            want ? what : "no arguments", c->args[want]);
        return KBC_EXIT_USAGE;
    }
    return 0;
}

/* Flushes and closes stdout.  A write that failed earlier (the error flag
   stays set even when a later flush empties the buffer) or now means the
   output is incomplete: say so, and exit 3.  Returns the exit code. */
static int finish_stdout(int code)
{
    errno = 0;
    int failed = fflush(stdout) != 0;
    int err = failed ? errno : 0;
    failed |= ferror(stdout) != 0;
    if (fclose(stdout) != 0) {
        if (!err)
            err = errno;
        failed = 1;
    }
    if (!failed)
        return code;
    if (err)
        say(0, "cannot write to standard output (%s), so what it shows is incomplete",
            strerror(err));
    else
        say(0, "cannot write to standard output, so what it shows is incomplete");
    return KBC_EXIT_SYSTEM;
}

int main(int argc, char **argv)
{
    /* A worker of a run (worker.h): not a user's command. */
    if (argc > 1 && strcmp(argv[1], KBC_WORKER_COMMAND) == 0)
        return kbc_worker_main(argc - 1, argv + 1);
    /* The option table as data, for the build (dump_options). */
    if (argc == 2 && strcmp(argv[1], "__options") == 0) {
        dump_options(stdout);
        return finish_stdout(KBC_EXIT_OK);
    }
    cli c;
    int code = parse(argc, argv, &c);
    if (code)
        goto out;
    if (c.help || (c.command && strcmp(c.command, "help") == 0)) {
        print_usage(stdout);
        goto out;
    }
    if (c.version) {
        printf("kbench %s (git %s), plugin ABI %d.%d\n", KBENCH_VERSION, kbc_git_rev,
               KB_ABI_MAJOR, KB_ABI_MINOR);
        goto out;
    }
    if (!c.command) {
        char all[256] = "";
        size_t nc = sizeof commands / sizeof *commands;
        for (size_t i = 0; i < nc; i++)
            snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s",
                     i == 0 ? "" : i + 1 == nc ? " or " : ", ", commands[i]);
        say(1, "no command given (one of %s)", all);
        code = KBC_EXIT_USAGE;
        goto out;
    }
    int known = 0;
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        known |= strcmp(c.command, commands[i]) == 0;
    if (!known) {
        const char *near = kbc_closest(c.command, commands, sizeof commands / sizeof *commands);
        if (near)
            say(1, "unknown command '%s' (did you mean '%s'?)", c.command, near);
        else
            say(1, "unknown command '%s'", c.command);
        code = KBC_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < c.n_only; i++) {
        if (kbc_word_in(c.only_cmd[i], c.command))
            continue;
        /* "kbench run", "kbench run and kbench plot", "kbench run, kbench
           plot and kbench merge" */
        char cmds[256] = "";
        size_t used = 0, words = 0, at = 0;
        for (const char *p = c.only_cmd[i]; *p; p += strcspn(p, " "), p += *p == ' ')
            words++;
        for (const char *p = c.only_cmd[i]; *p; at++) {
            size_t w = strcspn(p, " ");
            used += (size_t)snprintf(cmds + used, sizeof cmds - used, "%skbench %.*s",
                                     at == 0 ? "" : at + 1 == words ? " and " : ", ", (int)w, p);
            p += w + (p[w] == ' ');
        }
        say(1, "option %s applies only to %s", c.only[i], cmds);
        code = KBC_EXIT_USAGE;
        goto out;
    }

    /* An empty argument ('' from a shell variable that was not set) gets
       its own sentence rather than "kbench: : cannot be opened". */
    for (int i = 0; i < c.n_args; i++) {
        if (*c.args[i])
            continue;
        const char *what = strcmp(c.command, "describe") == 0 || strcmp(c.command, "check") == 0
                               ? "plugin name"
                           : strcmp(c.command, "merge") == 0 ? "folder name"
                                                             : "file name";
        say(1, "kbench %s was given an empty %s", c.command, what);
        code = KBC_EXIT_USAGE;
        goto out;
    }

    if (strcmp(c.command, "run") == 0) {
        if (kbc_quick_wanted(c.args, (size_t)c.n_args))
            code = run_quick(&c, argc, argv);
        else if ((code = check_args(&c, 1, "one INI file")) == 0)
            code = cmd_run(&c, argc, argv);
    } else if (strcmp(c.command, "tune") == 0) {
        if ((code = check_args(&c, 1, "one INI file")) == 0)
            code = cmd_tune(&c, argc, argv);
    } else if (strcmp(c.command, "plot") == 0) {
        if ((code = check_args(&c, 1, "one results file")) == 0)
            code = cmd_plot(&c);
    } else if (strcmp(c.command, "report") == 0) {
        if ((code = check_args(&c, 1, "one results file or folder")) == 0)
            code = cmd_report(&c);
    } else if (strcmp(c.command, "merge") == 0) {
        if (c.n_args < 1) {
            say(1, "kbench merge needs the folders of the shards to join");
            code = KBC_EXIT_USAGE;
        } else if (!c.out_dir) {
            say(1, "kbench merge needs -o OUT, the folder the joined results go to");
            code = KBC_EXIT_USAGE;
        } else {
            code = kbc_cmd_merge((const char *const *)c.args, (size_t)c.n_args, c.out_dir,
                                 c.allow_mixed, stdout, stderr);
        }
    } else if (strcmp(c.command, "compare") == 0) {
        if ((code = check_args(&c, 2, "two results files, BASE.json and NEW.json")) == 0)
            code = cmd_compare(&c);
    } else if (strcmp(c.command, "history") == 0) {
        c.history.threshold = c.threshold;
        code = kbc_cmd_history(c.args, (size_t)c.n_args, &c.history, stdout, stderr);
    } else if (strcmp(c.command, "list") == 0) {
        if ((code = check_args(&c, 0, "")) == 0) {
            kbc_registry reg;
            if ((code = load_plugins(&c, &reg)) == 0) {
                kbc_registry_print_refused(&reg, stderr);
                kbc_cmd_list(&reg, stdout);
            }
            kbc_registry_free(&reg);
        }
    } else if (strcmp(c.command, "check") == 0) {
        if ((code = check_args(&c, 1, "one plugin name")) == 0) {
            kbc_registry reg;
            if ((code = load_plugins(&c, &reg)) == 0) {
                kbc_registry_print_refused(&reg, stderr);
                code = kbc_cmd_check(&reg, c.args[0], c.variants, stdout, stderr);
            }
            kbc_registry_free(&reg);
        }
    } else if (strcmp(c.command, "describe") == 0) {
        if ((code = check_args(&c, 1, "one plugin name")) == 0) {
            kbc_registry reg;
            if ((code = load_plugins(&c, &reg)) == 0) {
                kbc_registry_print_refused(&reg, stderr);
                code = kbc_cmd_describe(&reg, c.args[0], stdout, stderr);
            }
            kbc_registry_free(&reg);
        }
    }
out:
    free(c.args);
    free(c.plugin_paths);
    free(c.sets);
    return finish_stdout(code);
}
