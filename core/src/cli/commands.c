/*
 * commands.c -- the commands of kbench as a table (cli.h says what a row
 * holds and who reads it), and the checks of a command line against its
 * row: the options it takes and the number of its arguments.
 *
 * The order of the rows is the order of `kbench help`, of the man page and
 * of the sentence a bare `kbench` prints.  Help texts are lines of at most
 * 56 characters, so that `kbench CMD --help` fits 80 columns; an option's
 * entry without a text of its own shows the option's (options.c).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "text.h"

const kbc_command kbc_commands[] = {
    {
        .name = "list",
        .run = kbc_cli_list,
        .min_args = 0, .max_args = 0, .args_what = "no arguments", .arg_noun = "argument",
        .summary = "the plugins found, their variants and backends",
        .synopsis = "kbench list",
        .examples = {"kbench list", "kbench list --plugin-path ~/my-plugins"},
    },
    {
        .name = "describe",
        .run = kbc_cli_describe,
        .min_args = 1, .max_args = 1, .args_what = "one plugin name", .arg_noun = "plugin name",
        .complete = "plugin",
        .summary = "one plugin's parameters: types, defaults, ranges, help",
        .synopsis = "kbench describe PLUGIN",
        .examples = {"kbench describe reduce", "kbench describe mine --plugin-path ~/my-plugins"},
    },
    {
        .name = "run",
        .run = kbc_cli_run,
        .min_args = 1, .max_args = -1, .args_what = "one INI file", .arg_noun = "file name",
        .complete = "ini",
        .summary = "run the experiments of an INI file and print a table",
        .synopsis = "kbench run FILE|PLUGIN [KEY=VALUE...] [--dry-run] [-o DIR [--plot]\n"
                    "           [--resume[=accept] | --force]] [-q] [--wide]\n"
                    "           [--summary-only] [--variants LIST] [--experiment NAMES]\n"
                    "           [--set K=V]... [--baseline OLD.json] [--gpus all|LIST\n"
                    "           [--allow-shared] [--allow-mixed]] [--shard i/N|auto\n"
                    "           [--shards N]] [--isolate point] [--sanitize-on-crash]\n"
                    "           [--costs DIR|history] [--timeline FILE]\n"
                    "           [--sanitize memcheck|racecheck|synccheck|initcheck]\n"
                    "           [--record [--commit REV] [--history FILE]]",
        .options = {
            {"--dry-run", "print the expanded plan, run nothing, touch no GPU"},
            {"--output", "also write DIR/results.csv, results.json,\n"
                         "results.md and journal.jsonl (a DIR that holds\n"
                         "results is refused without --resume or --force)"},
            {"--plot", "with -o, also plot the results into DIR (kbench plot)\n"
                       "and link the plots from DIR/results.md"},
            {"--resume", "with -o, skip the points DIR/journal.jsonl holds\n"
                         "(same key, plugin build and GPU model); =accept\n"
                         "keeps them also when the INI file's plan changed"},
            {"--force", "with -o, start afresh in a DIR that holds results"},
            {"--quiet", NULL},
            {"--summary-only", "each experiment's sweep at a glance, and the failed\n"
                               "rows, not a table per point"},
            {"--wide", "the table also shows min, max, runs, noise, the\n"
                       "variants' flags and the check"},
            {"--variants", "the variants of every experiment (comma-separated\n"
                           "names or globs); a baseline or reference of the\n"
                           "file they leave out is dropped, with a note"},
            {"--experiment", NULL},
            {"--set", NULL},
            {"--baseline", NULL},
            {"--gpus", NULL},
            {"--allow-shared", NULL},
            {"--allow-mixed", NULL},
            {"--shard", "only shard i of N of the plan (i/N, from 0), or auto:\n"
                        "i and N from Slurm, Open MPI, MPICH or Kubernetes"},
            {"--shards", "the count for --shard auto where the launcher gives\n"
                         "only an index (a Kubernetes Indexed Job)"},
            {"--costs", "balance shards and order points by the seconds an\n"
                        "earlier run of the plan took (its -o DIR, or history)"},
            {"--timeline", "write where each worker's time went to FILE"},
            {"--isolate", "point: a fresh worker for every point (default: one\n"
                          "worker per GPU for the whole run)"},
            {"--sanitize-on-crash", "rerun a crashed CUDA variant once under\n"
                                    "compute-sanitizer memcheck; its first report\n"
                                    "joins the row"},
            {"--sanitize", "each variant in a worker of its own under\n"
                           "compute-sanitizer TOOL (memcheck, racecheck,\n"
                           "synccheck, initcheck): a row with errors is an error"},
            {"--record", "with -o, add the run to the history when it ends\n"
                         "(kbench history add; docs/history.md)"},
            {"--commit", "with --record: the commit of the code under test\n"
                         "(default: git HEAD here, else kbench's revision)"},
            {"--history", "with --record or --costs history: the database\n"
                          "(default $KBENCH_HISTORY, else the XDG data folder's)"},
        },
        .examples = {"kbench run conf/reduce.ini -o out/reduce --gpus all",
                     "kbench run reduce n=2^24 variants=onepass,cub"},
    },
    {
        .name = "check",
        .run = kbc_cli_check,
        .min_args = 1, .max_args = 1, .args_what = "one plugin name", .arg_noun = "plugin name",
        .complete = "plugin",
        .summary = "conformance check of a plugin against the plugin rules",
        .synopsis = "kbench check PLUGIN [--variants LIST]",
        .options = {
            {"--variants", "only these variants (comma-separated)"},
        },
        .examples = {"kbench check reduce", "kbench check reduce --variants cpu,onepass"},
    },
    {
        .name = "compare",
        .run = kbc_cli_compare,
        .min_args = 2, .max_args = 2,
        .args_what = "two runs, BASE and NEW (results files or folders)",
        .arg_noun = "file name",
        .complete = "json",
        .summary = "each row's change between two runs; exit 1 when one is slower",
        .synopsis = "kbench compare BASE NEW [--threshold PCT] [--alpha ALPHA]\n"
                    "               [--format table|markdown|json] [--only-changed]\n"
                    "               [--sort file|change]",
        .options = {
            {"--threshold", "a change smaller than PCT percent is no change\n(default 5)"},
            {"--alpha", NULL},
            {"--format", "table (default), markdown or json"},
            {"--only-changed", "list only the rows judged slower, faster or noisy\n"
                               "(and rows lost in new)"},
            {"--sort", "file (default: the base file's order) or change\n"
                       "(the largest slowdown first)"},
        },
        .examples = {"kbench compare before/ after/",
                     "kbench compare old.json new.json --threshold 3 --format markdown"},
    },
    {
        .name = "plot",
        .run = kbc_cli_plot,
        .min_args = 1, .max_args = 1, .args_what = "one results file or run folder",
        .arg_noun = "file name",
        .complete = "json",
        .summary = "gnuplot scripts (and SVG and PNG, with gnuplot) of a run",
        .synopsis = "kbench plot RESULTS [-o DIR] [--metric rate|time|energy|efficiency]\n"
                    "            [--logy] [--band]",
        .options = {
            {"--output", "write into DIR (default: the results file's folder)"},
            {"--metric", "rate (default: GB/s, FLOP/s or items/s), time\n(the median), energy "
                         "(joules per run) or efficiency\n(GB/J, GFLOP/J or items/J); the "
                         "last two need\nrows with energy measured (docs/energy.md)"},
            {"--logy", "a log y axis"},
            {"--band", "each line's slowest to fastest run as a band\n"
                       "(error bars on a bar chart)"},
        },
        .examples = {"kbench plot out/results.json -o out/plots",
                     "kbench plot out/results.json --metric energy --band"},
    },
    {
        .name = "merge",
        .run = kbc_cli_merge,
        .min_args = 1, .max_args = -1, .args_what = "the folders of the shards to join",
        .arg_noun = "folder name",
        .complete = "dir",
        .summary = "join the folders of a sharded run (--shard) into one",
        .synopsis = "kbench merge DIR... -o OUT [--allow-mixed]",
        .options = {
            {"--output", "the folder of the joined results (made when missing)"},
            {"--allow-mixed", "join parts that ran on GPUs of different models"},
        },
        .examples = {"kbench merge part-0 part-1 part-2 part-3 -o merged",
                     "kbench merge part-* -o merged --allow-mixed"},
    },
    {
        .name = "tune",
        .run = kbc_cli_tune,
        .min_args = 1, .max_args = 1, .args_what = "one INI file", .arg_noun = "file name",
        .complete = "ini",
        .summary = "search the parameter space of the sections with a tune key",
        .synopsis = "kbench tune FILE -o DIR [--simulate DIR] [--gpus all|LIST\n"
                    "           [--allow-shared] [--allow-mixed]] [--experiment NAMES]\n"
                    "           [--set K=V]... [-q]",
        .options = {
            {"--output", "the folder of the cache, tried.csv and best.ini\n"
                         "(the best of each problem)"},
            {"--simulate", "replay the search from DIR (the -o folder of an\n"
                           "earlier tuning) without running anything"},
            {"--gpus", NULL},
            {"--allow-shared", NULL},
            {"--allow-mixed", NULL},
            {"--experiment", NULL},
            {"--set", NULL},
            {"--quiet", NULL},
        },
        .examples = {"kbench tune tests/gpu/tune/sort.ini -o tuned",
                     "kbench tune sort.ini -o tuned --gpus all --set runs=20"},
    },
    {
        .name = "history",
        .run = kbc_cli_history,
        /* history_cmd.c checks the subcommand and its arguments. */
        .min_args = 0, .max_args = -1, .args_what = "what to do", .arg_noun = "file name",
        .complete = "file",
        .summary = "results over time, in a SQLite database (docs/history.md)",
        .synopsis = "kbench history add DIR|RESULTS.json... [--commit REV] [--interrupted]\n"
                    "           [--history FILE]\n"
                    "kbench history rebuild DIR... [--interrupted] [--history FILE]\n"
                    "kbench history runs|list [--csv] [--history FILE]\n"
                    "kbench history show KEY [--history FILE]\n"
                    "kbench history series KEY [--csv] [--history FILE]\n"
                    "kbench history regressions [--since REV] [--threshold PCT] [--csv]\n"
                    "           [--history FILE]",
        .options = {
            {"--history", "the database (default $KBENCH_HISTORY, else\n"
                          "$XDG_DATA_HOME/kbench/history.db)"},
            {"--commit", "add: the commit of the code under test (default:\n"
                         "git HEAD here, else kbench's revision)"},
            {"--since", "regressions: only steps at commit REV or later"},
            {"--threshold", "regressions: the smallest step listed (default 2)"},
            {"--csv", "runs, list, series, regressions: CSV"},
            {"--interrupted", "add, rebuild: also a run cut short by Ctrl-C\n"
                              "(exit code 130), which holds only the points\n"
                              "done by then"},
        },
        .examples = {"kbench history add out/today --commit v1.2",
                     "kbench history regressions --since v1.2 --threshold 5"},
    },
    {
        .name = "report",
        .run = kbc_cli_report,
        .min_args = 1, .max_args = 1, .args_what = "one results file or folder",
        .arg_noun = "file name",
        .complete = "json",
        .summary = "one self-contained HTML page of a run: tables, plots, verdicts",
        .synopsis = "kbench report RESULTS [--baseline OLD] [--history FILE] [-o report.html]",
        .options = {
            {"--output", "the HTML file to write, or a folder for report.html\n"
                         "(default: report.html beside the results)"},
            {"--baseline", "compare's verdict for each row against OLD (a\n"
                           "results.json, or a folder holding one)"},
            {"--threshold", "with --baseline: a change smaller than PCT percent\n"
                            "is no change (default 5)"},
            {"--alpha", NULL},
            {"--history", "a history column from that database"},
        },
        .examples = {"kbench report out/today --baseline out/yesterday -o today.html",
                     "kbench report out/results.json --history runs.db"},
    },
    {
        .name = "help",
        .run = kbc_cli_help,
        .min_args = 0, .max_args = 1, .args_what = "one command name",
        .arg_noun = "command name",
        .complete = "command",
        .summary = "every command, or one command's options and examples",
        .synopsis = "kbench help [COMMAND] | --help | --version",
        .examples = {"kbench help run", "kbench compare --help"},
    },
};
const size_t kbc_n_commands = sizeof kbc_commands / sizeof *kbc_commands;

const kbc_command *kbc_command_find(const char *name)
{
    for (size_t i = 0; i < kbc_n_commands; i++)
        if (strcmp(kbc_commands[i].name, name) == 0)
            return &kbc_commands[i];
    return NULL;
}

int kbc_command_takes(const kbc_command *cmd, const kbc_option *o, const char **help)
{
    const char *h = o->help;
    int takes = o->everywhere;
    for (const kbc_command_option *e = cmd->options; !takes && e->name; e++)
        if (strcmp(e->name, o->name) == 0) {
            takes = 1;
            h = e->help ? e->help : o->help;
        }
    if (help)
        *help = h;
    return takes;
}

/* "kbench run", "kbench check and kbench run", "kbench merge, kbench plot
   and kbench run": the commands that take o, in the order of their names. */
static void commands_taking(const kbc_option *o, char *buf, size_t n)
{
    const char *names[sizeof kbc_commands / sizeof *kbc_commands];
    size_t k = 0;
    for (size_t i = 0; i < kbc_n_commands; i++) {
        if (!kbc_command_takes(&kbc_commands[i], o, NULL))
            continue;
        size_t at = k++;
        while (at > 0 && strcmp(names[at - 1], kbc_commands[i].name) > 0) {
            names[at] = names[at - 1];
            at--;
        }
        names[at] = kbc_commands[i].name;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < k && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%skbench %s",
                                 i == 0 ? "" : i + 1 == k ? " and " : ", ", names[i]);
}

int kbc_command_check_options(const kbc_command *cmd, const kbc_cli *c)
{
    for (int i = 0; i < c->n_given; i++) {
        if (kbc_command_takes(cmd, c->given[i], NULL))
            continue;
        char cmds[256];
        commands_taking(c->given[i], cmds, sizeof cmds);
        kbc_say(1, "option %s applies only to %s", c->given_as[i], cmds);
        return KBC_EXIT_USAGE;
    }
    return 0;
}

void kbc_command_names(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < kbc_n_commands && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s",
                                 i == 0 ? "" : i + 1 == kbc_n_commands ? " or " : ", ",
                                 kbc_commands[i].name);
}

int kbc_cli_arity(const kbc_cli *c, const kbc_command *cmd, int min, int max)
{
    /* An empty argument ('' from a shell variable that was not set) gets
       its own sentence rather than "kbench: : cannot be opened". */
    for (int i = 0; i < c->n_args; i++) {
        if (!*c->args[i]) {
            kbc_say(1, "kbench %s was given an empty %s", cmd->name, cmd->arg_noun);
            return KBC_EXIT_USAGE;
        }
    }
    if (c->n_args < min) {
        kbc_say(1, "kbench %s needs %s", cmd->name, cmd->args_what);
        return KBC_EXIT_USAGE;
    }
    if (max >= 0 && c->n_args > max) {
        kbc_say(1, "kbench %s takes %s, and '%s' is one too many", cmd->name,
                max ? cmd->args_what : "no arguments", kbc_text_visible(c->args[max]));
        return KBC_EXIT_USAGE;
    }
    return 0;
}
