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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text.h"

/* Where an option's value goes in kbc_cli, checked against its kind: a
   flag sets an int, a value option a string, a repeatable one appends to
   an array and counts in an int.  A field of another type does not
   compile. */
#define FIELD(f, type) _Generic(((kbc_cli *)0)->f, type: offsetof(kbc_cli, f))
#define FLAG(f) FIELD(f, int), 0
#define VALUE(f) FIELD(f, const char *), 0
#define LIST(f, n) FIELD(f, const char **), FIELD(n, int)

/* The rows: name, short name, value, the value in words, repeatable,
   optional value, taken by every command, help, where it goes.  An option
   that means one thing wherever it is taken has its help here; one that
   means something else for each command has it in the commands' rows. */
const kbc_option kbc_options[] = {
    {"--plugin-path", 0, "P", "path", 1, 0, 1,
     "also load plugins from folder or file P (repeatable)",
     LIST(plugin_paths, n_plugin_paths)},
    {"--dry-run", 'n', NULL, NULL, 0, 0, 0, NULL, FLAG(dry_run)},
    {"--output", 'o', "DIR", "folder", 0, 0, 0, NULL, VALUE(out_dir)},
    {"--resume", 0, "accept", NULL, 0, 1, 0, NULL, VALUE(resume)},
    {"--force", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(force)},
    {"--gpus", 0, "GPUS", "list of GPUs", 0, 0, 0,
     "one worker per GPU: all, or NVML indices or UUIDs\n(0,2 or GPU-...); default: one GPU "
     "($KBENCH_DEVICE)",
     VALUE(gpus)},
    {"--allow-shared", 0, NULL, NULL, 0, 0, 0,
     "let --gpus name one GPU more than once, and run\non a GPU another kbench run is using",
     FLAG(allow_shared)},
    {"--allow-mixed", 0, NULL, NULL, 0, 0, 0, "accept GPUs of different models in one run",
     FLAG(allow_mixed)},
    {"--shard", 0, "SPEC", "shard (i/N or auto)", 0, 0, 0, NULL, VALUE(shard)},
    {"--shards", 0, "N", "count", 0, 0, 0, NULL, VALUE(shards)},
    {"--isolate", 0, "MODE", "mode", 0, 0, 0, NULL, VALUE(isolate)},
    {"--costs", 0, "FROM", "run folder or history", 0, 0, 0, NULL, VALUE(costs)},
    {"--timeline", 0, "FILE", "file", 0, 0, 0, NULL, VALUE(timeline)},
    {"--sanitize", 0, "TOOL", "compute-sanitizer tool", 0, 0, 0, NULL, VALUE(sanitize)},
    {"--sanitize-on-crash", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(sanitize_on_crash)},
    {"--baseline", 0, "OLD", "results file", 0, 0, 0,
     "each row's change against the same row of OLD\n(an earlier results.json), "
     "as compare judges it",
     VALUE(baseline)},
    {"--plot", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(plot)},
    {"--quiet", 'q', NULL, NULL, 0, 0, 0, "no progress line, only warnings on stderr",
     FLAG(quiet)},
    {"--wide", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(wide)},
    {"--summary-only", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(summary_only)},
    {"--variants", 0, "LIST", "list of variants", 0, 0, 0, NULL, VALUE(variants)},
    {"--experiment", 0, "NAMES", "list of experiments", 0, 0, 0,
     "only the experiments named (comma-separated; globs\nsuch as 'reduce-*' match)",
     VALUE(experiment)},
    {"--set", 0, "K=V", "KEY=VALUE", 1, 0, 0,
     "KEY=VALUE for [global], or SECTION.KEY=VALUE, as if\nwritten in the file (repeatable)",
     LIST(sets, n_sets)},
    {"--threshold", 0, "PCT", "percentage", 0, 0, 0, NULL, VALUE(threshold)},
    {"--simulate", 0, "DIR", "folder", 0, 0, 0, NULL, VALUE(simulate)},
    {"--alpha", 0, "ALPHA", "significance level", 0, 0, 0,
     "the interval has confidence 1 - ALPHA (default 0.05)", VALUE(alpha)},
    {"--format", 0, "FMT", "format", 0, 0, 0, NULL, VALUE(format)},
    {"--record", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(record)},
    {"--history", 0, "FILE", "file", 0, 0, 0, NULL, VALUE(history.db)},
    {"--commit", 0, "REV", "revision", 0, 0, 0, NULL, VALUE(history.commit)},
    {"--since", 0, "REV", "revision", 0, 0, 0, NULL, VALUE(history.since)},
    {"--csv", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(history.csv)},
    {"--interrupted", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(history.interrupted)},
    {"--metric", 0, "WHAT", "metric (rate, time, energy or efficiency)", 0, 0, 0, NULL,
     VALUE(metric)},
    {"--logy", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(plot_opts.logy)},
    {"--band", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(plot_opts.band)},
    {"--only-changed", 0, NULL, NULL, 0, 0, 0, NULL, FLAG(only_changed)},
    {"--sort", 0, "ORDER", "order", 0, 0, 0, NULL, VALUE(sort)},
    {"--help", 'h', NULL, NULL, 0, 0, 1,
     "this text; after a command, that command's help",
     FLAG(help)},
    {"--version", 'V', NULL, NULL, 0, 0, 1, "the version and git revision", FLAG(version)},
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

/* Keeps the value of option o (NULL for a flag, or for an optional value
   not given) where its row says. */
static void store(kbc_cli *c, const kbc_option *o, const char *value)
{
    char *at = (char *)c + o->field;
    if (!o->arg)
        *(int *)at = 1;
    else if (o->repeatable)
        (*(const char ***)at)[(*(int *)((char *)c + o->count))++] = value;
    else
        *(const char **)at = value ? value : "";
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
static int unknown_option(const char *name, int had_value)
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
    /* --n=2^20: a parameter written as an option (a quick run takes
       KEY=VALUE words). */
    if (had_value && name[0] == '-' && name[1] == '-' && name[2] && (!near || strlen(name) <= 4))
        kbc_say(1, "unknown option '%s': parameters are written KEY=VALUE, without dashes "
                   "(kbench run PLUGIN %s=...)",
                kbc_text_visible(name), kbc_text_visible(name + 2));
    else if (near)
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
            return unknown_option(name, eq != NULL);
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
        store(c, o, value);
    }
    return 0;
}

void kbc_cli_free(kbc_cli *c)
{
    free(c->args);
    free(c->plugin_paths);
    free(c->sets);
}
