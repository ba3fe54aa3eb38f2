/*
 * gen_manual.c -- the man page (kbench.1) and the bash and zsh completions
 * of kbench, made from kbench's own option table.
 *
 * The build runs `kbench __options`, which prints the usage text and every
 * row of option_table[] in main.c as tab-separated records (one a line;
 * backslash, tab and line break written as \\, \t and \n), and then this
 * program on what it printed:
 *
 *     kbench_gen_manual OPTIONS.tsv OUTDIR
 *
 * which writes OUTDIR/kbench.1, OUTDIR/kbench.bash and OUTDIR/_kbench.  So a
 * new option is still one row of the table: --help, the man page and both
 * completions follow it (core/CMakeLists.txt, tests/manual.cmake).  Reading
 * the table from the built kbench rather than compiling main.c twice keeps
 * the handlers, and everything they pull in, out of this program.
 *
 * What the value of an option can be is told by the name of its value in
 * the table (DIR, OLD, FMT, ...), as main.c's arg_noun() tells it in errors:
 * value_kinds[] below.  A value name it does not know completes to nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

enum { MAX_OPTIONS = 64, MAX_COMMANDS = 16 };

typedef struct option {
    char *name, *short_name, *arg, *only, *help;
    int repeatable, optional;
} option;

static char *version, *head, *tail;
static char *commands[MAX_COMMANDS];
static size_t n_commands;
static option options[MAX_OPTIONS];
static size_t n_options;

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

/* What each command takes as arguments (after its subcommand, for a
   command with subcommands: subcommands() below). */
static const struct command_args {
    const char *command;
    const char *bash; /* compgen words, or "PLUGINS" for the plugins' names */
    const char *zsh;
} command_args[] = {
    {"run", "-f -X '!*.ini' -o plusdirs", "_files -g \"*.ini\""},
    {"tune", "-f -X '!*.ini' -o plusdirs", "_files -g \"*.ini\""},
    {"history", "-f", "_files"},
    {"plot", "-f -X '!*.json' -o plusdirs", "_files -g \"*.json\""},
    {"compare", "-f -X '!*.json' -o plusdirs", "_files -g \"*.json\""},
    {"report", "-f -X '!*.json' -o plusdirs", "_files -g \"*.json\""},
    {"merge", "-d", "_directories"},
    {"describe", "PLUGINS", "_kbench_plugins"},
    {"check", "PLUGINS", "_kbench_plugins"},
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
        size_t n = split(line, fl, 8);
        if (strcmp(fl[0], "version") == 0 && n == 2)
            version = dup_or_null(fl[1]);
        else if (strcmp(fl[0], "head") == 0 && n == 2)
            head = dup_or_null(fl[1]);
        else if (strcmp(fl[0], "tail") == 0 && n == 2)
            tail = dup_or_null(fl[1]);
        else if (strcmp(fl[0], "command") == 0 && n == 2 && n_commands < MAX_COMMANDS)
            commands[n_commands++] = dup_or_null(fl[1]);
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
    free(line);
    fclose(f);
    if (!version || !head || !tail || !n_commands || !n_options)
        die("the option dump lacks the version, the usage text, the commands or the options");
}

/* The subcommands of cmd, as the usage lines "kbench CMD a|b ..." name
   them (a lower-case word after the command), separated by spaces, in
   buf; returns buf, empty when cmd has none. */
static const char *subcommands(const char *cmd, char *buf, size_t n)
{
    buf[0] = '\0';
    size_t used = 0, len = strlen(cmd);
    for (const char *l = head; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *k = strstr(l, "kbench ");
        const char *eol = l + strcspn(l, "\n");
        if (!k || k > eol || k - l > 7)
            continue;
        k += 7;
        if (strncmp(k, cmd, len) != 0 || k[len] != ' ')
            continue;
        k += len + 1;
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

/* The lines of text from the line that starts with `from` up to the next
   empty line, each a new string in out (at most n); returns how many. */
static size_t block(const char *text, const char *from, char **out, size_t n)
{
    const char *p = strstr(text, from);
    size_t k = 0;
    while (p && *p && *p != '\n' && k < n) {
        size_t len = strcspn(p, "\n");
        out[k] = strndup(p, len);
        if (!out[k++])
            die("out of memory");
        p += len + (p[len] == '\n');
    }
    return k;
}

static void write_man(FILE *o)
{
    fprintf(o, ".\\\" kbench.1, generated by gen_manual.c from `kbench __options`; do not edit.\n");
    fprintf(o, ".TH KBENCH 1 \"\" \"kbench %s\" \"User Commands\"\n", version);
    fprintf(o, ".SH NAME\nkbench \\- run, verify, compare and plot GPU kernel experiments\n");

    /* The synopsis: the usage lines, without "usage: ". */
    fprintf(o, ".SH SYNOPSIS\n.nf\n");
    char *lines[64];
    size_t n = block(head, "usage: ", lines, 64);
    for (size_t i = 0; i < n; i++) {
        const char *l = lines[i];
        l += strlen(l) >= 7 ? 7 : strlen(l);
        roff(o, l, 0);
        fputc('\n', o);
        free(lines[i]);
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
               "takes it from the next word or after \\(oq=\\(cq (\\fB\\-\\-output=\\fR\\fIDIR\\fR).\n");

    /* The commands: "  run FILE          run the experiments ..." with
       continuation lines indented further. */
    fprintf(o, ".SH COMMANDS\n");
    n = block(head, "Commands:", lines, 64);
    for (size_t i = 1; i < n; i++) {
        const char *l = lines[i];
        size_t indent = strspn(l, " ");
        const char *gap = strstr(l + indent, "  ");
        if (indent == 2 && gap) {
            fprintf(o, ".TP\n.B ");
            char *term = strndup(l + indent, (size_t)(gap - l - indent));
            if (!term)
                die("out of memory");
            roff(o, term, 0);
            free(term);
            fputc('\n', o);
            roff(o, gap + strspn(gap, " "), 0);
        } else {
            roff(o, l + indent, 0);
        }
        fputc('\n', o);
        free(lines[i]);
    }
    if (n)
        free(lines[0]);

    fprintf(o, ".SH OPTIONS\n");
    for (size_t i = 0; i < n_options; i++) {
        const option *op = &options[i];
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
        roff(o, op->help, 1);
        fputc('\n', o);
    }

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

/* ---- bash ------------------------------------------------------------ */

static void write_bash(FILE *o)
{
    fprintf(o, "# bash completion for kbench, generated by gen_manual.c from `kbench "
               "__options`; do not edit.\n");
    fprintf(o, "_kbench()\n{\n");
    fprintf(o, "    local cur=${COMP_WORDS[COMP_CWORD]} prev=\n");
    fprintf(o, "    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n");
    fprintf(o, "    COMPREPLY=()\n");
    /* The command: the first word that is neither an option nor the value
       of one. */
    fprintf(o, "    local cmd= i\n");
    fprintf(o, "    for ((i = 1; i < COMP_CWORD; i++)); do\n");
    fprintf(o, "        case ${COMP_WORDS[i]} in\n");
    fprintf(o, "            ");
    value_option_names(o);
    fprintf(o, ") ((i++)) ;;\n");
    fprintf(o, "            -*) ;;\n");
    fprintf(o, "            *) cmd=${COMP_WORDS[i]}; break ;;\n");
    fprintf(o, "        esac\n    done\n");

    /* The value of an option. */
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

    /* An option: those the command takes (all of them before a command). */
    fprintf(o, "    if [[ $cur == -* ]]; then\n");
    fprintf(o, "        local opts=\n");
    fprintf(o, "        case $cmd in\n");
    for (size_t c = 0; c <= n_commands; c++) {
        const char *cmd = c < n_commands ? commands[c] : NULL;
        fprintf(o, "            %s) opts='", cmd ? cmd : "*");
        int any = 0;
        for (size_t i = 0; i < n_options; i++) {
            const option *op = &options[i];
            if (cmd && op->only && !kbc_word_in(op->only, cmd))
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

    /* The command, then its arguments. */
    fprintf(o, "    if [[ -z $cmd ]]; then\n");
    fprintf(o, "        COMPREPLY=($(compgen -W '");
    for (size_t c = 0; c < n_commands; c++)
        fprintf(o, "%s%s", c ? " " : "", commands[c]);
    fprintf(o, "' -- \"$cur\"))\n        return\n    fi\n");
    fprintf(o, "    case $cmd in\n");
    for (size_t i = 0; i < sizeof command_args / sizeof *command_args; i++) {
        const struct command_args *a = &command_args[i];
        char subs[256];
        if (*subcommands(a->command, subs, sizeof subs))
            fprintf(o, "        %s) if [[ $prev == %s ]]; then COMPREPLY=($(compgen -W '%s' -- "
                       "\"$cur\")); else COMPREPLY=($(compgen %s -- \"$cur\")); fi ;;\n",
                    a->command, a->command, subs, a->bash);
        else if (strcmp(a->bash, "PLUGINS") == 0)
            fprintf(o, "        %s) COMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" list "
                       "2>/dev/null | sed -n 's/^\\([A-Za-z0-9_.-]*\\)  .*/\\1/p')\" -- "
                       "\"$cur\")) ;;\n",
                    a->command);
        else
            fprintf(o, "        %s) COMPREPLY=($(compgen %s -- \"$cur\")) ;;\n", a->command,
                    a->bash);
    }
    fprintf(o, "    esac\n}\n");
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

static void zsh_spec(FILE *o, const option *op, const char *spelling, int is_short)
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
    zsh_text(o, op->help);
    fputc(']', o);
    if (op->arg) {
        const struct value_kind *k = kind_of(op->arg);
        fprintf(o, "%s:%s:%s", op->optional ? ":" : "", op->arg, k ? k->zsh : " ");
    }
    fputs("'", o);
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
    fprintf(o, "    local -a specs\n");
    for (size_t i = 0; i < n_options; i++) {
        const option *op = &options[i];
        if (op->only) {
            fprintf(o, "    [[ -z $cmd");
            for (const char *p = op->only; *p;) {
                size_t w = strcspn(p, " ");
                fprintf(o, " || $cmd == %.*s", (int)w, p);
                p += w + (p[w] == ' ');
            }
            fprintf(o, " ]] && ");
        } else {
            fprintf(o, "    ");
        }
        fprintf(o, "specs+=(");
        if (op->short_name) {
            char s[8];
            snprintf(s, sizeof s, "-%s", op->short_name);
            zsh_spec(o, op, s, 1);
            fputc(' ', o);
        }
        zsh_spec(o, op, op->name, 0);
        fprintf(o, ")\n");
    }
    fprintf(o, "    local -a commands\n    commands=(\n");
    char *lines[64];
    size_t n = block(head, "Commands:", lines, 64);
    for (size_t c = 0; c < n_commands; c++) {
        /* The command's line of the usage text, for its description. */
        const char *desc = "";
        for (size_t i = 1; i < n; i++) {
            const char *l = lines[i] + strspn(lines[i], " ");
            size_t w = strlen(commands[c]);
            if (strncmp(l, commands[c], w) == 0 && (l[w] == ' ' || !l[w])) {
                const char *gap = strstr(l, "  ");
                desc = gap ? gap + strspn(gap, " ") : "";
                break;
            }
        }
        fprintf(o, "        '%s:", commands[c]);
        zsh_text(o, desc);
        fprintf(o, "'\n");
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    fprintf(o, "    )\n");
    /* The command first, then what it takes. */
    fprintf(o, "    local -a args\n");
    fprintf(o, "    args=(\"1: :($cmd)\")\n");
    fprintf(o, "    case $cmd in\n");
    fprintf(o, "        ('') args=('1:command:{_describe -t commands \"kbench command\" "
               "commands}') ;;\n");
    for (size_t i = 0; i < sizeof command_args / sizeof *command_args; i++) {
        char subs[256];
        fprintf(o, "        (%s) args+=(", command_args[i].command);
        if (*subcommands(command_args[i].command, subs, sizeof subs))
            fprintf(o, "'2:subcommand:(%s)' ", subs);
        fprintf(o, "'*:argument:%s') ;;\n", command_args[i].zsh);
    }
    fprintf(o, "    esac\n");
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
