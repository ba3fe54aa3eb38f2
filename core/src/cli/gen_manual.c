/*
 * gen_manual.c -- the man page (kbench.1) and the bash and zsh completions
 * of kbench, made from kbench's own tables of commands and options.
 *
 * The build runs `kbench __options`, which prints every row of the table
 * of commands (commands.c: name, summary, synopsis, examples, what its
 * arguments are, and each option it takes with its help for it) and of
 * the table of options (options.c) as tab-separated records (one a line;
 * backslash, tab and line break written as \\, \t and \n), and then this
 * program on what it printed:
 *
 *     kbench_gen_manual OPTIONS.tsv OUTDIR
 *
 * which writes OUTDIR/kbench.1, OUTDIR/kbench.bash and OUTDIR/_kbench.  So a
 * new command or option is still one row: help, the man page and both
 * completions follow it (core/CMakeLists.txt, tests/manual.cmake).  Reading
 * the tables from the built kbench rather than compiling them twice keeps
 * the commands, and everything they pull in, out of this program.
 *
 * What the value of an option can be is told by the name of its value in
 * the table (DIR, OLD, FMT, ...): value_kinds[] below; what a command's
 * arguments are, by its row's "complete" word: arg_kinds[].  A name it
 * does not know completes to nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

enum { MAX_OPTIONS = 64, MAX_COMMANDS = 16, MAX_TAKES = 128 };

typedef struct option {
    char *name, *short_name, *arg, *only, *help;
    int repeatable, optional;
} option;

typedef struct command {
    char *name, *summary, *synopsis, *examples[2], *complete;
} command;

/* An option a command takes, with its help for that command. */
typedef struct takes {
    char *command, *option, *help;
} takes;

static char *version, *tail;
static command commands[MAX_COMMANDS];
static size_t n_commands;
static option options[MAX_OPTIONS];
static size_t n_options;
static takes taken[MAX_TAKES];
static size_t n_taken;

/* How an option's value completes, by the name of the value. */
static const struct value_kind {
    const char *arg;
    const char *bash;  /* the words after compgen                       */
    const char *zsh;   /* the action of a zsh _arguments spec             */
} value_kinds[] = {
    {"DIR", "-d", "_directories"},
    {"P", "-f", "_files"},
    {"OLD", "-f -X '!*.json' -o plusdirs", "_files -g \"*.json\""},
    {"FMT", "-W 'table markdown json'", "(table markdown json)"},
    {"MODE", "-W 'point'", "(point)"},
    {"GPUS", "-W 'all'", "(all)"},
    {"SPEC", "-W 'auto'", "(auto)"},
    {"accept", "-W 'accept'", "(accept)"},
    {"WHAT", "-W 'rate time'", "(rate time)"},
    {"ORDER", "-W 'file change'", "(file change)"},
    {"FILE", "-f", "_files"},
};

/* How a command's arguments complete (after its subcommand, for a
   command with subcommands: subcommands() below), by the "complete" word
   of its row.  "command" completes to the commands (commands_words()). */
static const struct arg_kind {
    const char *kind;
    const char *bash; /* compgen words, or "PLUGINS" for the plugins' names */
    const char *zsh;
} arg_kinds[] = {
    {"ini", "-f -X '!*.ini' -o plusdirs", "_files -g \"*.ini\""},
    {"json", "-f -X '!*.json' -o plusdirs", "_files -g \"*.json\""},
    {"dir", "-d", "_directories"},
    {"file", "-f", "_files"},
    {"plugin", "PLUGINS", "_kbench_plugins"},
    {"command", "COMMANDS", "COMMANDS"},
};

static void die(const char *what)
{
    fprintf(stderr, "kbench_gen_manual: %s\n", what);
    exit(1);
}

static const struct value_kind *kind_of(const char *arg)
{
    for (size_t i = 0; arg && i < sizeof value_kinds / sizeof *value_kinds; i++)
        if (strcmp(value_kinds[i].arg, arg) == 0)
            return &value_kinds[i];
    return NULL;
}

static const struct arg_kind *arg_kind_of(const char *kind)
{
    for (size_t i = 0; kind && i < sizeof arg_kinds / sizeof *arg_kinds; i++)
        if (strcmp(arg_kinds[i].kind, kind) == 0)
            return &arg_kinds[i];
    return NULL;
}

/* A field of the dump with its escapes undone, in place. */
static char *unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            *o++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return s;
}

/* Splits line at tabs into at most n fields; returns how many. */
static size_t split(char *line, char **f, size_t n)
{
    size_t k = 0;
    f[k++] = line;
    for (char *p = line; *p && k < n; p++)
        if (*p == '\t') {
            *p = '\0';
            f[k++] = p + 1;
        }
    for (size_t i = 0; i < k; i++)
        unescape(f[i]);
    return k;
}

static char *dup_or_null(const char *s)
{
    if (!*s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        die("out of memory");
    return d;
}

/* One record of the dump, split into its n fields fl. */
static void read_record(char **fl, size_t n)
{
    if (strcmp(fl[0], "version") == 0 && n == 2)
        version = dup_or_null(fl[1]);
    else if (strcmp(fl[0], "tail") == 0 && n == 2)
        tail = dup_or_null(fl[1]);
    else if (strcmp(fl[0], "command") == 0 && n == 7 && n_commands < MAX_COMMANDS)
        commands[n_commands++] = (command){
            .name = dup_or_null(fl[1]),
            .summary = dup_or_null(fl[2]),
            .synopsis = dup_or_null(fl[3]),
            .examples = {dup_or_null(fl[4]), dup_or_null(fl[5])},
            .complete = dup_or_null(fl[6]),
        };
    else if (strcmp(fl[0], "takes") == 0 && n == 4 && n_taken < MAX_TAKES)
        taken[n_taken++] = (takes){
            .command = dup_or_null(fl[1]),
            .option = dup_or_null(fl[2]),
            .help = dup_or_null(fl[3]),
        };
    else if (strcmp(fl[0], "option") == 0 && n == 8 && n_options < MAX_OPTIONS)
        options[n_options++] = (option){
            .name = dup_or_null(fl[1]),
            .short_name = dup_or_null(fl[2]),
            .arg = dup_or_null(fl[3]),
            .repeatable = *fl[4] != '\0',
            .optional = *fl[5] != '\0',
            .only = dup_or_null(fl[6]),
            .help = dup_or_null(fl[7]),
        };
    else
        die("a line of the option dump is not a record it knows (kbench __options changed?)");
}

static void read_dump(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot open the option dump");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n')
            line[len - 1] = '\0';
        char *fl[8];
        read_record(fl, split(line, fl, 8));
    }
    free(line);
    fclose(f);
    if (!version || !tail || !n_commands || !n_options)
        die("the option dump lacks the version, the exit codes, the commands or the options");
    for (size_t i = 0; i < n_commands; i++)
        if (!commands[i].name || !commands[i].summary || !commands[i].synopsis)
            die("a command of the option dump lacks its name, summary or synopsis");
}

/* The subcommands of cmd, as its synopsis lines "kbench CMD a|b ..." name
   them (a lower-case word after the command), separated by spaces, in
   buf; returns buf, empty when cmd has none. */
static const char *subcommands(const command *cmd, char *buf, size_t n)
{
    buf[0] = '\0';
    size_t used = 0, len = strlen(cmd->name);
    for (const char *l = cmd->synopsis; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, "kbench ", 7) != 0 || strncmp(l + 7, cmd->name, len) != 0 ||
            l[7 + len] != ' ')
            continue;
        const char *k = l + 7 + len + 1;
        size_t w = strspn(k, "abcdefghijklmnopqrstuvwxyz|");
        if (w == 0 || (k[w] != ' ' && k[w] != '\n' && k[w]))
            continue;
        for (const char *p = k; p < k + w;) {
            size_t v = strcspn(p, "|");
            if (v > (size_t)(k + w - p))
                v = (size_t)(k + w - p);
            if (used + v + 2 > n)
                die("too many subcommands");
            used += (size_t)snprintf(buf + used, n - used, "%s%.*s", used ? " " : "", (int)v, p);
            p += v + 1;
        }
    }
    return buf;
}

/* The options that take the next word as their value, as a shell case
   pattern: "--plugin-path|--output|-o|...".  Both completions skip that
   word when they look for the command. */
static void value_option_names(FILE *o)
{
    int first = 1;
    for (size_t i = 0; i < n_options; i++) {
        const option *op = &options[i];
        if (!op->arg || op->optional)
            continue;
        fprintf(o, "%s%s", first ? "" : "|", op->name);
        if (op->short_name)
            fprintf(o, "|-%s", op->short_name);
        first = 0;
    }
}

/* Whether cmd takes op. */
static int command_takes(const char *cmd, const option *op)
{
    return !op->only || kbc_word_in(op->only, cmd);
}

/* The help texts of op, one per group of commands that give it the same
   text, in the order of the commands: calls emit(o, "run, tune", help)
   for each (commands NULL: an option every command takes). */
static void option_helps(FILE *o, const option *op,
                         void (*emit)(FILE *o, const char *commands, const char *help))
{
    if (!op->only) {
        emit(o, NULL, op->help ? op->help : "");
        return;
    }
    int done[MAX_TAKES] = {0};
    for (size_t i = 0; i < n_taken; i++) {
        if (done[i] || strcmp(taken[i].option, op->name) != 0)
            continue;
        char cmds[256] = "";
        size_t used = 0;
        for (size_t j = i; j < n_taken; j++) {
            if (strcmp(taken[j].option, op->name) != 0 || !taken[j].help != !taken[i].help ||
                (taken[i].help && strcmp(taken[j].help, taken[i].help) != 0))
                continue;
            done[j] = 1;
            used += (size_t)snprintf(cmds + used, sizeof cmds - used, "%s%s", used ? ", " : "",
                                     taken[j].command);
            if (used >= sizeof cmds)
                die("too many commands share an option's help");
        }
        emit(o, cmds, taken[i].help ? taken[i].help : "");
    }
}

/* ---- the man page ---------------------------------------------------- */

/* Text as roff: backslashes and hyphens escaped (so that options copy as
   typed), a line break as a space (join) or kept, and a line that would
   start with a control character guarded. */
static void roff(FILE *o, const char *s, int join)
{
    int bol = 1;
    for (const char *p = s; *p; p++) {
        if (bol && (*p == '.' || *p == '\''))
            fputs("\\&", o);
        bol = 0;
        if (*p == '\\')
            fputs("\\e", o);
        else if (*p == '-')
            fputs("\\-", o);
        else if (*p == '\n' && join)
            fputc(' ', o);
        else {
            fputc(*p, o);
            bol = *p == '\n';
        }
    }
}

/* One help text of an option in the man page: "run, tune: text". */
static void man_help(FILE *o, const char *cmds, const char *help)
{
    if (cmds) {
        roff(o, cmds, 0);
        fputs(": ", o);
    }
    roff(o, help, 1);
    fputs("\n.br\n", o);
}

static void man_option(FILE *o, const option *op)
{
    fprintf(o, ".TP\n");
    if (op->short_name)
        fprintf(o, "\\fB\\-%s\\fR, ", op->short_name);
    fputs("\\fB", o);
    roff(o, op->name, 0);
    fputs("\\fR", o);
    if (op->arg && op->optional) {
        fputs("[=\\fI", o);
        roff(o, op->arg, 0);
        fputs("\\fR]", o);
    } else if (op->arg) {
        fputs(" \\fI", o);
        roff(o, op->arg, 0);
        fputs("\\fR", o);
    }
    fputc('\n', o);
    option_helps(o, op, man_help);
}

static void man_head(FILE *o)
{
    fprintf(o, ".\\\" kbench.1, generated by gen_manual.c from `kbench __options`; do not edit.\n");
    fprintf(o, ".TH KBENCH 1 \"\" \"kbench %s\" \"User Commands\"\n", version);
    fprintf(o, ".SH NAME\nkbench \\- run, verify, compare and plot GPU kernel experiments\n");
    fprintf(o, ".SH SYNOPSIS\n.nf\n");
    for (size_t i = 0; i < n_commands; i++) {
        roff(o, commands[i].synopsis, 0);
        fputc('\n', o);
    }
    fprintf(o, ".fi\n");
    fprintf(o, ".SH DESCRIPTION\n"
               "kbench runs the experiments an INI file describes: every variant of a kernel "
               "family (a plugin) at every point of a sweep, on the same seeded inputs, each "
               "result verified against a reference, and reports the timings as a table on "
               "standard output and, with \\fB\\-o\\fR \\fIDIR\\fR, as results.csv, "
               "results.json and results.md.\n"
               ".PP\n"
               "Options may stand before or after the command.  An option that takes a value "
               "takes it from the next word or after \\(oq=\\(cq "
               "(\\fB\\-\\-output=\\fR\\fIDIR\\fR).  \\fBkbench help\\fR \\fICOMMAND\\fR prints one command's synopsis, options and "
               "examples.\n");
}

/* The commands, each with its summary and the options it takes. */
static void man_commands(FILE *o)
{
    fprintf(o, ".SH COMMANDS\n");
    for (size_t c = 0; c < n_commands; c++) {
        fprintf(o, ".TP\n.B %s\n", commands[c].name);
        roff(o, commands[c].summary, 0);
        int any = 0;
        for (size_t i = 0; i < n_taken; i++) {
            if (strcmp(taken[i].command, commands[c].name) != 0)
                continue;
            fputs(any++ ? ", " : ".  Options: ", o);
            fputs("\\fB", o);
            roff(o, taken[i].option, 0);
            fputs("\\fR", o);
        }
        fputs(".\n", o);
    }
}

static void man_tail(FILE *o)
{
    fprintf(o, ".SH EXAMPLES\n.nf\n");
    for (size_t c = 0; c < n_commands; c++)
        for (size_t e = 0; e < 2; e++)
            if (commands[c].examples[e]) {
                roff(o, commands[c].examples[e], 0);
                fputc('\n', o);
            }
    fprintf(o, ".fi\n");
    fprintf(o, ".SH EXIT STATUS\n");
    roff(o, tail + strspn(tail, "\n"), 1);
    fputc('\n', o);
    fprintf(o, ".SH ENVIRONMENT\n"
               ".TP\n.B KBENCH_PLUGIN_PATH\n"
               "more plugin folders or files, separated by colons\n"
               ".TP\n.B KBENCH_DEVICE\n"
               "the CUDA device ordinal of the default worker (default 0)\n"
               ".TP\n.B KBENCH_DEBUG\n"
               "set: show the plugins' debug log lines\n"
               ".PP\n"
               "The whole list is in cli.md.\n");
    fprintf(o, ".SH FILES\n"
               ".TP\n.I PREFIX/lib/kbench/plugins\n"
               "the installed kernel families\n"
               ".TP\n.I PREFIX/share/kbench/conf\n"
               "example experiment files\n"
               ".TP\n.I PREFIX/share/kbench/results.schema.json\n"
               "the JSON Schema of results.json\n");
    fprintf(o, ".SH SEE ALSO\n"
               "The documentation installed in \\fIPREFIX/share/doc/kbench\\fR: cli.md (the "
               "commands), ini\\-format.md (experiment files), output.md (the table and the "
               "files), plugins.md (writing a plugin), scale.md (GPUs, shards and clusters).\n");
}

static void write_man(FILE *o)
{
    man_head(o);
    man_commands(o);
    fprintf(o, ".SH OPTIONS\n");
    for (size_t i = 0; i < n_options; i++)
        man_option(o, &options[i]);
    man_tail(o);
}

/* ---- bash ------------------------------------------------------------ */

/* The command: the first word that is neither an option nor the value of
   one. */
static void bash_find_command(FILE *o)
{
    fprintf(o, "    local cmd= i\n");
    fprintf(o, "    for ((i = 1; i < COMP_CWORD; i++)); do\n");
    fprintf(o, "        case ${COMP_WORDS[i]} in\n");
    fprintf(o, "            ");
    value_option_names(o);
    fprintf(o, ") ((i++)) ;;\n");
    fprintf(o, "            -*) ;;\n");
    fprintf(o, "            *) cmd=${COMP_WORDS[i]}; break ;;\n");
    fprintf(o, "        esac\n    done\n");
}

/* The value of an option. */
static void bash_values(FILE *o)
{
    fprintf(o, "    case $prev in\n");
    for (size_t i = 0; i < n_options; i++) {
        const option *op = &options[i];
        if (!op->arg || op->optional)
            continue;
        const struct value_kind *k = kind_of(op->arg);
        fprintf(o, "        %s", op->name);
        if (op->short_name)
            fprintf(o, "|-%s", op->short_name);
        if (k)
            fprintf(o, ") COMPREPLY=($(compgen %s -- \"$cur\")); return ;;\n", k->bash);
        else
            fprintf(o, ") return ;;\n");
    }
    fprintf(o, "    esac\n");
}

/* An option: those the command takes (all of them before a command). */
static void bash_options(FILE *o)
{
    fprintf(o, "    if [[ $cur == -* ]]; then\n");
    fprintf(o, "        local opts=\n");
    fprintf(o, "        case $cmd in\n");
    for (size_t c = 0; c <= n_commands; c++) {
        const char *cmd = c < n_commands ? commands[c].name : NULL;
        fprintf(o, "            %s) opts='", cmd ? cmd : "*");
        int any = 0;
        for (size_t i = 0; i < n_options; i++) {
            const option *op = &options[i];
            if (cmd && !command_takes(cmd, op))
                continue;
            fprintf(o, "%s%s", any++ ? " " : "", op->name);
            if (op->optional)
                fprintf(o, " %s=%s", op->name, op->arg);
            if (op->short_name)
                fprintf(o, " -%s", op->short_name);
        }
        fprintf(o, "' ;;\n");
    }
    fprintf(o, "        esac\n");
    fprintf(o, "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n");
    fprintf(o, "        return\n    fi\n");
}

/* Every command's name, separated by spaces. */
static void commands_words(FILE *o)
{
    for (size_t c = 0; c < n_commands; c++)
        fprintf(o, "%s%s", c ? " " : "", commands[c].name);
}

/* The arguments of each command, by its row's "complete" word. */
static void bash_arguments(FILE *o)
{
    fprintf(o, "    case $cmd in\n");
    for (size_t c = 0; c < n_commands; c++) {
        const command *cmd = &commands[c];
        const struct arg_kind *a = arg_kind_of(cmd->complete);
        char subs[256];
        if (!a)
            continue;
        if (*subcommands(cmd, subs, sizeof subs))
            fprintf(o, "        %s) if [[ $prev == %s ]]; then COMPREPLY=($(compgen -W '%s' -- "
                       "\"$cur\")); else COMPREPLY=($(compgen %s -- \"$cur\")); fi ;;\n",
                    cmd->name, cmd->name, subs, a->bash);
        else if (strcmp(a->bash, "PLUGINS") == 0)
            fprintf(o, "        %s) COMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" list "
                       "2>/dev/null | sed -n 's/^\\([A-Za-z0-9_.-]*\\)  .*/\\1/p')\" -- "
                       "\"$cur\")) ;;\n",
                    cmd->name);
        else if (strcmp(a->bash, "COMMANDS") == 0) {
            fprintf(o, "        %s) COMPREPLY=($(compgen -W '", cmd->name);
            commands_words(o);
            fprintf(o, "' -- \"$cur\")) ;;\n");
        } else
            fprintf(o, "        %s) COMPREPLY=($(compgen %s -- \"$cur\")) ;;\n", cmd->name,
                    a->bash);
    }
    fprintf(o, "    esac\n");
}

static void write_bash(FILE *o)
{
    fprintf(o, "# bash completion for kbench, generated by gen_manual.c from `kbench "
               "__options`; do not edit.\n");
    fprintf(o, "_kbench()\n{\n");
    fprintf(o, "    local cur=${COMP_WORDS[COMP_CWORD]} prev=\n");
    fprintf(o, "    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n");
    fprintf(o, "    COMPREPLY=()\n");
    bash_find_command(o);
    bash_values(o);
    bash_options(o);
    /* The command, then its arguments. */
    fprintf(o, "    if [[ -z $cmd ]]; then\n");
    fprintf(o, "        COMPREPLY=($(compgen -W '");
    commands_words(o);
    fprintf(o, "' -- \"$cur\"))\n        return\n    fi\n");
    bash_arguments(o);
    fprintf(o, "}\n");
    fprintf(o, "complete -o filenames -F _kbench kbench\n");
}

/* ---- zsh ------------------------------------------------------------- */

/* A help text as the description of a zsh spec: one line, inside single
   quotes and square brackets. */
static void zsh_text(FILE *o, const char *s)
{
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", o);
        else if (*p == '[' || *p == ']' || *p == '\\' || *p == ':')
            fprintf(o, "\\%c", *p);
        else
            fputc(*p == '\n' ? ' ' : *p, o);
    }
}

static void zsh_spec(FILE *o, const option *op, const char *help, const char *spelling,
                     int is_short)
{
    fputc('\'', o);
    if (op->short_name && !op->repeatable)
        fprintf(o, "(-%s %s)", op->short_name, op->name);
    if (op->repeatable)
        fputc('*', o);
    fputs(spelling, o);
    if (op->arg && op->optional)
        fputs("=-", o);
    else if (op->arg)
        fputs(is_short ? "+" : "=", o);
    fputc('[', o);
    zsh_text(o, help);
    fputc(']', o);
    if (op->arg) {
        const struct value_kind *k = kind_of(op->arg);
        fprintf(o, "%s:%s:%s", op->optional ? ":" : "", op->arg, k ? k->zsh : " ");
    }
    fputs("'", o);
}

/* specs+=(...) of op with help, for both its spellings. */
static void zsh_specs(FILE *o, const option *op, const char *help)
{
    fprintf(o, "specs+=(");
    if (op->short_name) {
        char s[8];
        snprintf(s, sizeof s, "-%s", op->short_name);
        zsh_spec(o, op, help, s, 1);
        fputc(' ', o);
    }
    zsh_spec(o, op, help, op->name, 0);
    fprintf(o, ")\n");
}

/* The option being written by zsh_options (option_helps' emit has no
   room for it). */
static const option *zsh_option;

/* The spec of zsh_option for the commands cmds ("run, tune") with their
   help; an option every command takes is offered everywhere. */
static void zsh_group(FILE *o, const char *cmds, const char *help)
{
    if (!cmds) {
        fprintf(o, "    ");
        zsh_specs(o, zsh_option, help);
        return;
    }
    fprintf(o, "    [[");
    for (const char *p = cmds; *p;) {
        size_t w = strcspn(p, ",");
        fprintf(o, "%s$cmd == %.*s", p == cmds ? " " : " || ", (int)w, p);
        p += w;
        p += strspn(p, ", ");
    }
    fprintf(o, " ]] && ");
    zsh_specs(o, zsh_option, help);
}

/* One help text of an option as part of one line: "run, tune: text". */
static void plain_help(FILE *o, const char *cmds, const char *help)
{
    fprintf(o, "%s%s%s%s", ftell(o) > 0 ? "; " : "", cmds ? cmds : "", cmds ? ": " : "", help);
}

/* Before a command, every option is offered once, with its help for each
   command that takes it; after one, the options it takes, with its help. */
static void zsh_options(FILE *o)
{
    fprintf(o, "    local -a specs\n");
    for (size_t i = 0; i < n_options; i++) {
        zsh_option = &options[i];
        if (zsh_option->only) {
            char *all = NULL;
            size_t n = 0;
            FILE *m = open_memstream(&all, &n);
            if (!m)
                die("out of memory");
            option_helps(m, zsh_option, plain_help);
            if (fclose(m) != 0)
                die("out of memory");
            fprintf(o, "    [[ -z $cmd ]] && ");
            zsh_specs(o, zsh_option, all);
            free(all);
        }
        option_helps(o, zsh_option, zsh_group);
    }
}

static void zsh_commands(FILE *o)
{
    fprintf(o, "    local -a commands\n    commands=(\n");
    for (size_t c = 0; c < n_commands; c++) {
        fprintf(o, "        '%s:", commands[c].name);
        zsh_text(o, commands[c].summary);
        fprintf(o, "'\n");
    }
    fprintf(o, "    )\n");
    /* The command first, then what it takes. */
    fprintf(o, "    local -a args\n");
    fprintf(o, "    args=(\"1: :($cmd)\")\n");
    fprintf(o, "    case $cmd in\n");
    fprintf(o, "        ('') args=('1:command:{_describe -t commands \"kbench command\" "
               "commands}') ;;\n");
    for (size_t c = 0; c < n_commands; c++) {
        const struct arg_kind *a = arg_kind_of(commands[c].complete);
        char subs[256];
        if (!a)
            continue;
        fprintf(o, "        (%s) args+=(", commands[c].name);
        if (*subcommands(&commands[c], subs, sizeof subs))
            fprintf(o, "'2:subcommand:(%s)' ", subs);
        if (strcmp(a->zsh, "COMMANDS") == 0) {
            fprintf(o, "'2:command:(");
            commands_words(o);
            fprintf(o, ")'");
        } else {
            fprintf(o, "'*:argument:%s'", a->zsh);
        }
        fprintf(o, ") ;;\n");
    }
    fprintf(o, "    esac\n");
}

static void write_zsh(FILE *o)
{
    fprintf(o, "#compdef kbench\n");
    fprintf(o, "# zsh completion for kbench, generated by gen_manual.c from `kbench __options`; "
               "do not edit.\n\n");
    fprintf(o, "_kbench_plugins() {\n"
               "    local -a plugins\n"
               "    plugins=(${(f)\"$(${words[1]} list 2>/dev/null | sed -n "
               "'s/^\\([A-Za-z0-9_.-]*\\)  .*/\\1/p')\"})\n"
               "    _describe -t plugins 'plugin' plugins\n"
               "}\n\n");
    fprintf(o, "_kbench() {\n");
    fprintf(o, "    local cmd= i\n");
    fprintf(o, "    for ((i = 2; i < CURRENT; i++)); do\n");
    fprintf(o, "        case ${words[i]} in\n");
    fprintf(o, "            (");
    value_option_names(o);
    fprintf(o, ") ((i++)) ;;\n");
    fprintf(o, "            (-*) ;;\n");
    fprintf(o, "            (*) cmd=${words[i]}; break ;;\n");
    fprintf(o, "        esac\n    done\n");
    zsh_options(o);
    zsh_commands(o);
    fprintf(o, "    _arguments -s -S $specs $args\n");
    fprintf(o, "}\n\n_kbench \"$@\"\n");
}

/* ---- main ------------------------------------------------------------ */

static void write_file(const char *dir, const char *name, void (*write)(FILE *))
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (!path)
        die("out of memory");
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot create an output file");
    write(f);
    if (fflush(f) != 0 || ferror(f) || fclose(f) != 0)
        die("cannot write an output file");
    free(path);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: kbench_gen_manual OPTIONS.tsv OUTDIR\n");
        return 2;
    }
    read_dump(argv[1]);
    write_file(argv[2], "kbench.1", write_man);
    write_file(argv[2], "kbench.bash", write_bash);
    write_file(argv[2], "_kbench", write_zsh);
    return 0;
}
