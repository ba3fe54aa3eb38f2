/*
 * options.c -- the options of kbench as a table, and the one pass that
 * reads the command line.
 *
 * The command line is read in one pass that accepts options anywhere (so
 * `kbench --plugin-path P run x.ini` and `kbench run x.ini --plugin-path P`
 * mean the same); main() then checks each option given against the row of
 * the command (commands.c), which says which options it takes.  Every
 * mistake gets one sentence and exit code 2; docs/cli.md documents both.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text.h"

static void opt_plugin_path(kbc_cli *c, const char *v)
{
    c->plugin_paths[c->n_plugin_paths++] = v;
}
static void opt_dry_run(kbc_cli *c, const char *v)
{
    c->dry_run = 1;
}
static void opt_simulate(kbc_cli *c, const char *v)
{
    c->simulate = v;
}
static void opt_output(kbc_cli *c, const char *v)
{
    c->out_dir = v;
}
static void opt_experiment(kbc_cli *c, const char *v)
{
    c->experiment = v;
}
static void opt_set(kbc_cli *c, const char *v)
{
    c->sets[c->n_sets++] = v;
}
static void opt_variants(kbc_cli *c, const char *v)
{
    c->variants = v;
}
static void opt_baseline(kbc_cli *c, const char *v)
{
    c->baseline = v;
}
static void opt_threshold(kbc_cli *c, const char *v)
{
    c->threshold = v;
}
static void opt_alpha(kbc_cli *c, const char *v)
{
    c->alpha = v;
}
static void opt_format(kbc_cli *c, const char *v)
{
    c->format = v;
}
static void opt_sort(kbc_cli *c, const char *v)
{
    c->sort = v;
}
static void opt_only_changed(kbc_cli *c, const char *v)
{
    c->only_changed = 1;
}
static void opt_wide(kbc_cli *c, const char *v)
{
    c->wide = 1;
}
static void opt_plot(kbc_cli *c, const char *v)
{
    c->plot = 1;
}
static void opt_quiet(kbc_cli *c, const char *v)
{
    c->quiet = 1;
}
static void opt_gpus(kbc_cli *c, const char *v)
{
    c->gpus = v;
}
static void opt_shard(kbc_cli *c, const char *v)
{
    c->shard = v;
}
static void opt_shards(kbc_cli *c, const char *v)
{
    c->shards = v;
}
static void opt_isolate(kbc_cli *c, const char *v)
{
    c->isolate = v;
}
static void opt_resume(kbc_cli *c, const char *v)
{
    c->resume = v ? v : "";
}
static void opt_force(kbc_cli *c, const char *v)
{
    c->force = 1;
}
static void opt_allow_mixed(kbc_cli *c, const char *v)
{
    c->allow_mixed = 1;
}
static void opt_allow_shared(kbc_cli *c, const char *v)
{
    c->allow_shared = 1;
}
static void opt_sanitize_on_crash(kbc_cli *c, const char *v)
{
    c->sanitize_on_crash = 1;
}
static void opt_record(kbc_cli *c, const char *v)
{
    c->record = 1;
}
static void opt_history(kbc_cli *c, const char *v)
{
    c->history.db = v;
}
static void opt_commit(kbc_cli *c, const char *v)
{
    c->history.commit = v;
}
static void opt_since(kbc_cli *c, const char *v)
{
    c->history.since = v;
}
static void opt_csv(kbc_cli *c, const char *v)
{
    c->history.csv = 1;
}
static void opt_logy(kbc_cli *c, const char *v)
{
    c->plot_opts.logy = 1;
}
static void opt_metric(kbc_cli *c, const char *v)
{
    c->metric = v;
}
static void opt_band(kbc_cli *c, const char *v)
{
    c->plot_opts.band = 1;
}
static void opt_help(kbc_cli *c, const char *v)
{
    c->help = 1;
}
static void opt_version(kbc_cli *c, const char *v)
{
    c->version = 1;
}

/* The rows: name, short name, value, the value in words, repeatable,
   optional value, taken by every command, help, handler.  An option that
   means one thing wherever it is taken has its help here; one that means
   something else for each command has it in the commands' rows. */
const kbc_option kbc_options[] = {
    {"--plugin-path", 0, "P", "path", 1, 0, 1,
     "also load plugins from folder or file P (repeatable)",
     opt_plugin_path},
    {"--dry-run", 'n', NULL, NULL, 0, 0, 0, NULL, opt_dry_run},
    {"--output", 'o', "DIR", "folder", 0, 0, 0, NULL, opt_output},
    {"--resume", 0, "accept", NULL, 0, 1, 0, NULL, opt_resume},
    {"--force", 0, NULL, NULL, 0, 0, 0, NULL, opt_force},
    {"--gpus", 0, "GPUS", "list of GPUs", 0, 0, 0,
     "one worker per GPU: all, or NVML indices or UUIDs\n(0,2 or GPU-...); default: one GPU "
     "($KBENCH_DEVICE)",
     opt_gpus},
    {"--allow-shared", 0, NULL, NULL, 0, 0, 0,
     "let --gpus name one GPU more than once, and run\non a GPU another kbench run is using",
     opt_allow_shared},
    {"--allow-mixed", 0, NULL, NULL, 0, 0, 0, "accept GPUs of different models in one run",
     opt_allow_mixed},
    {"--shard", 0, "SPEC", "shard (i/N or auto)", 0, 0, 0, NULL, opt_shard},
    {"--shards", 0, "N", "count", 0, 0, 0, NULL, opt_shards},
    {"--isolate", 0, "MODE", "mode", 0, 0, 0, NULL, opt_isolate},
    {"--sanitize-on-crash", 0, NULL, NULL, 0, 0, 0, NULL, opt_sanitize_on_crash},
    {"--baseline", 0, "OLD", "results file", 0, 0, 0,
     "beside each row, its change against the same row\nof OLD (an earlier results.json), "
     "as compare\njudges it",
     opt_baseline},
    {"--plot", 0, NULL, NULL, 0, 0, 0, NULL, opt_plot},
    {"--quiet", 'q', NULL, NULL, 0, 0, 0, "no progress line, only warnings on stderr", opt_quiet},
    {"--wide", 0, NULL, NULL, 0, 0, 0, NULL, opt_wide},
    {"--variants", 0, "LIST", "list of variants", 0, 0, 0, NULL, opt_variants},
    {"--experiment", 0, "NAMES", "list of experiments", 0, 0, 0,
     "only the experiments named (comma-separated; globs\nsuch as 'reduce-*' match)",
     opt_experiment},
    {"--set", 0, "K=V", "KEY=VALUE", 1, 0, 0,
     "KEY=VALUE for [global], or SECTION.KEY=VALUE, as if\nwritten in the file (repeatable)",
     opt_set},
    {"--threshold", 0, "PCT", "percentage", 0, 0, 0, NULL, opt_threshold},
    {"--simulate", 0, "DIR", "folder", 0, 0, 0, NULL, opt_simulate},
    {"--alpha", 0, "ALPHA", "significance level", 0, 0, 0,
     "the interval has confidence 1 - ALPHA (default 0.05)", opt_alpha},
    {"--format", 0, "FMT", "format", 0, 0, 0, NULL, opt_format},
    {"--record", 0, NULL, NULL, 0, 0, 0, NULL, opt_record},
    {"--history", 0, "FILE", "file", 0, 0, 0, NULL, opt_history},
    {"--commit", 0, "REV", "revision", 0, 0, 0, NULL, opt_commit},
    {"--since", 0, "REV", "revision", 0, 0, 0, NULL, opt_since},
    {"--csv", 0, NULL, NULL, 0, 0, 0, NULL, opt_csv},
    {"--metric", 0, "WHAT", "metric (rate or time)", 0, 0, 0, NULL, opt_metric},
    {"--logy", 0, NULL, NULL, 0, 0, 0, NULL, opt_logy},
    {"--band", 0, NULL, NULL, 0, 0, 0, NULL, opt_band},
    {"--only-changed", 0, NULL, NULL, 0, 0, 0, NULL, opt_only_changed},
    {"--sort", 0, "ORDER", "order", 0, 0, 0, NULL, opt_sort},
    {"--help", 'h', NULL, NULL, 0, 0, 1,
     "this text; after a command, that command's help",
     opt_help},
    {"--version", 'V', NULL, NULL, 0, 0, 1, "the version and git revision", opt_version},
};
const size_t kbc_n_options = sizeof kbc_options / sizeof *kbc_options;
_Static_assert(sizeof kbc_options / sizeof *kbc_options <= KBC_MAX_OPTIONS,
               "kbc_cli.given holds one entry per option");

const kbc_option *kbc_option_find(const char *name)
{
    for (size_t i = 0; i < kbc_n_options; i++) {
        const kbc_option *o = &kbc_options[i];
        if (strcmp(name, o->name) == 0 ||
            (o->short_name && name[0] == '-' && name[1] == o->short_name && !name[2]))
            return o;
    }
    return NULL;
}

/* Remembers an option given, for the check against the command (options
   may come before the command): once, as first spelt. */
static void note_given(kbc_cli *c, const kbc_option *o, const char *name)
{
    for (int i = 0; i < c->n_given; i++)
        if (c->given[i] == o)
            return;
    snprintf(c->given_as[c->n_given], sizeof c->given_as[0], "%s", name);
    c->given[c->n_given++] = o;
}

/* An option kbench does not have, with the nearest one that it does. */
static int unknown_option(const char *name)
{
    const char *names[2 * KBC_MAX_OPTIONS];
    char shorts[KBC_MAX_OPTIONS][3];
    size_t m = 0;
    for (size_t k = 0; k < kbc_n_options; k++) {
        names[m++] = kbc_options[k].name;
        if (kbc_options[k].short_name) {
            snprintf(shorts[k], sizeof shorts[k], "-%c", kbc_options[k].short_name);
            names[m++] = shorts[k];
        }
    }
    const char *near = kbc_closest(name, names, m);
    if (near)
        kbc_say(1, "unknown option '%s' (did you mean '%s'?)", kbc_text_visible(name), near);
    else
        kbc_say(1, "unknown option '%s'", kbc_text_visible(name));
    return KBC_EXIT_USAGE;
}

/* The value of option o spelt name at argv[*i] (after '=': eq_value, or
   the next word), into *value (NULL for a flag).  Returns 0, or an exit
   code after saying why. */
static int option_value(const kbc_option *o, const char *name, const char *eq_value, int argc,
                        char **argv, int *i, const char **value)
{
    *value = eq_value;
    if (o->optional_value) {
        if (eq_value && strcmp(eq_value, o->arg) != 0) {
            kbc_say(1, "option %s takes no value but %s (%s=%s), not '%s'", name, o->arg, name,
                    o->arg, eq_value);
            return KBC_EXIT_USAGE;
        }
        return 0;
    }
    if (!o->arg && eq_value) {
        kbc_say(1, "option %s takes no value", name);
        return KBC_EXIT_USAGE;
    }
    if (o->arg && !eq_value) {
        if (*i + 1 >= argc) {
            kbc_say(1, "option %s needs a %s after it", name, o->noun);
            return KBC_EXIT_USAGE;
        }
        *value = argv[++*i];
        /* "-o -q" is far more likely a forgotten value than a folder
           called -q; such a name can still be given as ./-q or -o=... */
        if ((*value)[0] == '-' && (*value)[1] != '\0') {
            kbc_say(1,
                    "option %s needs a %s after it, and '%s' looks like an option (write "
                    "./%s for a folder of that name)",
                    name, o->noun, *value, *value);
            return KBC_EXIT_USAGE;
        }
    }
    if (o->arg && !**value) {
        /* "an empty folder name", "an empty percentage" */
        int named = strcmp(o->noun, "folder") == 0 || strcmp(o->noun, "path") == 0 ||
                    strcmp(o->noun, "results file") == 0 || strcmp(o->noun, "file") == 0;
        kbc_say(1, "option %s was given an empty %s%s", name, o->noun, named ? " name" : "");
        return KBC_EXIT_USAGE;
    }
    return 0;
}

int kbc_cli_parse(int argc, char **argv, kbc_cli *c)
{
    memset(c, 0, sizeof *c);
    c->argc = argc;
    c->argv = argv;
    c->args = kbc_xcalloc((size_t)argc + 1, sizeof *c->args);
    c->plugin_paths = kbc_xcalloc((size_t)argc + 1, sizeof *c->plugin_paths);
    c->sets = kbc_xcalloc((size_t)argc + 1, sizeof *c->sets);
    /* The value options seen, so that one given twice is refused instead
       of the last one silently winning. */
    const char *seen[KBC_MAX_OPTIONS] = {0};
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
        const char *eq = strchr(a, '=');
        char name[64];
        if (eq && a[1] == '-' && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
        } else {
            snprintf(name, sizeof name, "%s", a);
            eq = NULL;
        }
        const kbc_option *o = kbc_option_find(name);
        if (!o)
            return unknown_option(name);
        const char *value;
        int code = option_value(o, name, eq ? eq + 1 : NULL, argc, argv, &i, &value);
        if (code)
            return code;
        size_t row = (size_t)(o - kbc_options);
        if (o->arg && !o->repeatable && !o->optional_value) {
            if (seen[row]) {
                kbc_say(1, "option %s is given twice ('%s' and '%s')", name, seen[row], value);
                return KBC_EXIT_USAGE;
            }
            seen[row] = value;
        }
        note_given(c, o, name);
        o->handle(c, value);
    }
    return 0;
}

void kbc_cli_free(kbc_cli *c)
{
    free(c->args);
    free(c->plugin_paths);
    free(c->sets);
}
