/*
 * cli.h -- what the commands of kbench share: the command line as read
 * (kbc_cli), the table of options (options.c), the table of commands
 * (commands.c), and the one way a command says what went wrong.
 *
 * A command is one row of kbc_commands[]: its name, the function that runs
 * it, how many arguments it takes, a one-line summary, its synopsis, the
 * options it takes with their help, and two examples.  That row is all
 * there is: main() dispatches by it and checks the arguments and options
 * against it, help.c prints `kbench help`, `kbench help CMD` and `kbench
 * CMD --help` from it, and `kbench __options` hands it to gen_manual.c for
 * the man page and the bash and zsh completions.  A new command is one row
 * and one function; a new option is one row of kbc_options[] and an entry
 * in the rows of the commands that take it.
 */
#ifndef KBENCH_CLI_H
#define KBENCH_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "history_cmd.h"
#include "loader.h"
#include "plot.h"
#include "quick.h"
#include "util.h"

/* Room in a row for the options of one command, and in kbc_cli for every
   option given. */
enum { KBC_CMD_MAX_OPTIONS = 28, KBC_MAX_OPTIONS = 48 };

typedef struct kbc_option kbc_option;

/* The command line as read: the command, its arguments, and what every
   option set.  Filled by kbc_cli_parse(), read by the commands. */
typedef struct kbc_cli {
    int argc;    /* the whole command line, for results.json's "command" */
    char **argv;
    const char *command;
    const char **args; /* positional arguments after the command */
    int n_args;
    /* Every option given, once, as first spelt ("-o" or "--output"):
       checked against the command once it is known, since options may
       stand before it. */
    const kbc_option *given[KBC_MAX_OPTIONS];
    char given_as[KBC_MAX_OPTIONS][64];
    int n_given;
    const char **plugin_paths; /* every --plugin-path                   */
    int n_plugin_paths;
    const char *out_dir;   /* -o                                        */
    int dry_run, quiet, help, version, plot;
    const char *variants;  /* check, run: --variants                    */
    const char *experiment;/* run, tune: --experiment                   */
    const char **sets;     /* run, tune: every --set, in order          */
    int n_sets;
    const char *threshold, *alpha, *format; /* compare, report          */
    const char *sort;      /* compare: --sort                           */
    int only_changed;      /* compare: --only-changed                   */
    const char *baseline;  /* run, report: --baseline                   */
    const char *gpus;      /* run, tune: --gpus                         */
    const char *shard;     /* run: --shard                              */
    const char *shards;    /* run: --shards (with --shard auto)         */
    const char *isolate;   /* run: --isolate                            */
    const char *costs;     /* run: --costs (a run's folder, or history) */
    const char *timeline;  /* run: --timeline FILE                      */
    const char *sanitize;  /* run: --sanitize TOOL                      */
    const char *resume;    /* run: --resume ("" or "accept"), or NULL   */
    int force, allow_mixed, allow_shared, sanitize_on_crash;
    int record;            /* run: --record                             */
    kbc_history_opts history; /* history, run --record: --history,
                                 --commit, --since, --csv               */
    kbc_plot_opts plot_opts;  /* plot: --logy, --band                   */
    const char *metric;    /* plot: --metric, as given                  */
    int wide;              /* run: --wide                               */
    int summary_only;      /* run: --summary-only                       */
    const char *simulate;  /* tune: --simulate                          */
} kbc_cli;

/* One option.  Which commands take it is said by the commands' rows
   (kbc_command.options), unless every command does. */
struct kbc_option {
    const char *name; /* "--output" */
    char short_name;  /* 'o', or 0 */
    const char *arg;  /* "DIR" when the option takes a value, else NULL */
    const char *noun; /* the value in words, for errors ("folder") */
    int repeatable;   /* a value option that may be given more than once */
    /* A flag that may also be given a value after '=' (--resume=accept);
       arg names that value. */
    int optional_value;
    int everywhere;   /* every command takes it (--plugin-path, --help) */
    /* The help of an option every command takes, and of a command's entry
       that has no text of its own; lines separated by '\n'. */
    const char *help;
    /* Where it goes in kbc_cli (offsets): an int a flag sets to 1, a
       string that takes the value ("" for an optional value not given),
       or, repeatable, an array of strings and the int that counts it. */
    size_t field, count;
};

extern const kbc_option kbc_options[];
extern const size_t kbc_n_options;

/* An option a command takes, with its help for that command (NULL: the
   option's own help). */
typedef struct kbc_command_option {
    const char *name;
    const char *help;
} kbc_command_option;

/* One command: a row of kbc_commands[]. */
typedef struct kbc_command {
    const char *name;
    int (*run)(const kbc_cli *c);
    /* How many arguments it takes (max -1: any number), and what they are
       in words: "kbench plot needs one results file", "kbench list takes
       no arguments".  An empty one is "an empty <arg_noun>". */
    int min_args, max_args;
    const char *args_what;
    const char *arg_noun;
    /* What its arguments complete to in the shell: ini, json, dir, file,
       plugin, command, or NULL for nothing. */
    const char *complete;
    const char *summary;  /* one line, for `kbench help` and the man page */
    /* Its usage lines, each starting "kbench NAME", continuation lines
       indented under the first one's arguments. */
    const char *synopsis;
    kbc_command_option options[KBC_CMD_MAX_OPTIONS]; /* up to a NULL name */
    const char *examples[2];
} kbc_command;

extern const kbc_command kbc_commands[];
extern const size_t kbc_n_commands;

/* ---- the tables (commands.c, options.c) ---- */

/* The command called name, or NULL. */
const kbc_command *kbc_command_find(const char *name);

/* Whether cmd takes option o, and with which help (*help, may be NULL). */
int kbc_command_takes(const kbc_command *cmd, const kbc_option *o, const char **help);

/* Returns 0 when cmd takes every option c was given, or an exit code after
   naming the first it does not take and the commands that do. */
int kbc_command_check_options(const kbc_command *cmd, const kbc_cli *c);

/* "list, describe, ... or help": every command, for sentences. */
void kbc_command_names(char *buf, size_t n);

/* The option spelt name ("-o" or "--output"), or NULL. */
const kbc_option *kbc_option_find(const char *name);

/* Reads argv into *c (options anywhere, `--` ends them).  Returns 0, or an
   exit code after saying why; kbc_cli_free() either way. */
int kbc_cli_parse(int argc, char **argv, kbc_cli *c);
void kbc_cli_free(kbc_cli *c);

/* ---- help (help.c) ---- */

/* `kbench help` and `kbench --help`: every synopsis, the commands, the
   options every command takes, the exit codes. */
void kbc_help_all(FILE *out);

/* `kbench help CMD` and `kbench CMD --help`: cmd's synopsis, summary,
   options and examples. */
void kbc_help_command(const kbc_command *cmd, FILE *out);

/* Says that name is no command (with the nearest one, or `kbench run
   NAME` for an INI file); topic: it was asked for by `kbench help`.
   Returns KBC_EXIT_USAGE. */
int kbc_help_unknown(const char *name, int topic);

/* `kbench __options`: the tables as tab-separated records for
   gen_manual.c.  Returns an exit code (3 when a command names an option
   the option table lacks, so that the build stops). */
int kbc_help_dump(FILE *out);

/* ---- what the commands share (cli.c) ---- */

/* Prints "kbench: <sentence>." on stderr and, for usage errors
   (with_help), where help is. */
void kbc_say(int with_help, const char *fmt, ...) KB_PRINTF(2, 3);

/* While q is set, the places of its INI file in a sentence are named by
   the arguments they came from (a run without a file, quick.h). */
void kbc_say_quick(const kbc_quick *q);

/* Loads the default plugin places and every --plugin-path.  Returns 0, or
   an exit code after saying why. */
int kbc_cli_load_plugins(const kbc_cli *c, kbc_registry *reg);

/* The command line as one string (malloc'd), for results.json. */
char *kbc_cli_command_line(const kbc_cli *c);

/* The kbench binary's own path into buf (its workers are started from
   it): 0, or -1 after saying why. */
int kbc_cli_self_path(char *buf, size_t n);

/* Checks that c has from min to max arguments (max -1: any number), none
   of them empty, in the words of cmd's row (commands.c).  Returns 0, or an
   exit code after saying why. */
int kbc_cli_arity(const kbc_cli *c, const kbc_command *cmd, int min, int max);

/* ---- the commands: the functions of the rows ---- */

int kbc_cli_list(const kbc_cli *c);     /* cmd_plugins.c */
int kbc_cli_describe(const kbc_cli *c);
int kbc_cli_check(const kbc_cli *c);
int kbc_cli_run(const kbc_cli *c);      /* cmd_run.c */
int kbc_cli_tune(const kbc_cli *c);     /* cmd_tune.c */
int kbc_cli_compare(const kbc_cli *c);  /* cmd_results.c */
int kbc_cli_report(const kbc_cli *c);
int kbc_cli_plot(const kbc_cli *c);
int kbc_cli_merge(const kbc_cli *c);
int kbc_cli_history(const kbc_cli *c);
int kbc_cli_help(const kbc_cli *c);     /* help.c */

#endif
