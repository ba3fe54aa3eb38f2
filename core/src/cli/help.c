/*
 * help.c -- what kbench says about itself, all of it printed from the
 * table of commands (commands.c) and the table of options (options.c):
 * `kbench help` (every synopsis, the commands, the options of every
 * command, the exit codes), `kbench help CMD` and `kbench CMD --help` (one
 * command's synopsis, options and examples), the sentence for a command
 * that does not exist, and `kbench __options`, the same tables as data for
 * the man page and the shell completions (gen_manual.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "text.h"
#include "version.h"

/* After the general help's lists: exit codes and where plugins come from
   (also the man page's EXIT STATUS). */
static const char help_tail[] =
    "Exit codes: 0 everything that could run passed (skipped variants do not\n"
    "fail a run); 1 a verification failed, a variant erred, crashed or timed\n"
    "out; 2 a usage, configuration or plugin error; 3 a system error (out of\n"
    "memory, an output that cannot be written, a worker that cannot start);\n"
    "130 interrupted (rerun with --resume to finish).  Plugins are searched in\n"
    "the build's plugin folder (for a build) or PREFIX/lib/kbench/plugins (when\n"
    "installed), then $KBENCH_PLUGIN_PATH, then plugin_path and --plugin-path.\n";

/* The synopsis lines of cmd, the first after `first` ("usage: " or seven
   spaces), the others after seven spaces. */
static void print_synopsis(const kbc_command *cmd, const char *first, FILE *out)
{
    const char *s = cmd->synopsis;
    for (const char *lead = first; *s; lead = "       ") {
        size_t len = strcspn(s, "\n");
        fprintf(out, "%s%.*s\n", lead, (int)len, s);
        s += len + (s[len] == '\n');
    }
}

/* "-o, --output DIR", "    --resume[=accept]" */
static void option_left(const kbc_option *o, char *buf, size_t n)
{
    char shrt[8] = "    ";
    if (o->short_name)
        snprintf(shrt, sizeof shrt, "-%c, ", o->short_name);
    if (o->optional_value)
        snprintf(buf, n, "%s%s[=%s]", shrt, o->name, o->arg);
    else
        snprintf(buf, n, "%s%s%s%s", shrt, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* The options shown on a help page: cmd's (in its row's order), then
   those of every command; cmd NULL: only those of every command.
   Returns how many, into list and helps. */
static size_t shown_options(const kbc_command *cmd, const kbc_option **list, const char **helps)
{
    size_t k = 0;
    for (const kbc_command_option *e = cmd ? cmd->options : NULL; e && e->name; e++) {
        const kbc_option *o = kbc_option_find(e->name);
        if (o && !o->everywhere && kbc_command_takes(cmd, o, &helps[k]))
            list[k++] = o;
    }
    for (size_t i = 0; i < kbc_n_options; i++)
        if (kbc_options[i].everywhere) {
            helps[k] = kbc_options[i].help;
            list[k++] = &kbc_options[i];
        }
    return k;
}

/* The options of cmd (NULL: of every command), one entry each, their
   help in a column. */
static void print_options(const kbc_command *cmd, FILE *out)
{
    const kbc_option *list[KBC_MAX_OPTIONS];
    const char *helps[KBC_MAX_OPTIONS];
    size_t k = shown_options(cmd, list, helps);
    char left[64];
    int width = 0;
    for (size_t i = 0; i < k; i++) {
        option_left(list[i], left, sizeof left);
        if ((int)strlen(left) > width)
            width = (int)strlen(left);
    }
    for (size_t i = 0; i < k; i++) {
        option_left(list[i], left, sizeof left);
        const char *h = helps[i] ? helps[i] : "";
        for (int first = 1; first || *h; first = 0) {
            size_t len = strcspn(h, "\n");
            fprintf(out, "  %-*s  %.*s\n", width, first ? left : "", (int)len, h);
            h += len + (h[len] == '\n');
        }
    }
}

void kbc_help_all(FILE *out)
{
    for (size_t i = 0; i < kbc_n_commands; i++)
        print_synopsis(&kbc_commands[i], i == 0 ? "usage: " : "       ", out);
    fputs("\nCommands:\n", out);
    int width = 0;
    for (size_t i = 0; i < kbc_n_commands; i++)
        if ((int)strlen(kbc_commands[i].name) > width)
            width = (int)strlen(kbc_commands[i].name);
    for (size_t i = 0; i < kbc_n_commands; i++)
        fprintf(out, "  %-*s  %s\n", width, kbc_commands[i].name, kbc_commands[i].summary);
    fputs("\nOptions of every command (they may stand before or after it):\n", out);
    print_options(NULL, out);
    fputs("\nkbench help COMMAND, or kbench COMMAND --help, shows the options and\n"
          "examples of one command; man kbench and docs/cli.md say everything.\n\n",
          out);
    fputs(help_tail, out);
}

void kbc_help_command(const kbc_command *cmd, FILE *out)
{
    print_synopsis(cmd, "usage: ", out);
    fprintf(out, "\n%c%s.\n\nOptions:\n", toupper((unsigned char)cmd->summary[0]),
            cmd->summary + 1);
    print_options(cmd, out);
    fputs("\nExamples:\n", out);
    for (size_t i = 0; i < sizeof cmd->examples / sizeof *cmd->examples; i++)
        fprintf(out, "  %s\n", cmd->examples[i]);
}

int kbc_help_unknown(const char *name, int topic)
{
    const char *names[32];
    size_t n = 0;
    for (size_t i = 0; i < kbc_n_commands && n < sizeof names / sizeof *names; i++)
        names[n++] = kbc_commands[i].name;
    const char *near = kbc_closest(name, names, n);
    const char *shown = kbc_text_visible(name);
    size_t len = strlen(name);
    char all[256];
    kbc_command_names(all, sizeof all);
    if (!topic && len > 4 && strcmp(name + len - 4, ".ini") == 0)
        kbc_say(1, "unknown command '%s' (did you mean 'kbench run %s'?)", shown, shown);
    else if (near)
        kbc_say(1, "%s '%s' (did you mean 'kbench %s%s'?)",
                topic ? "no help on" : "unknown command", shown, topic ? "help " : "", near);
    else
        kbc_say(1, "%s '%s' (the commands are %s)",
                topic ? "no help on" : "unknown command", shown, all);
    return KBC_EXIT_USAGE;
}

int kbc_cli_help(const kbc_cli *c)
{
    if (c->n_args == 0) {
        kbc_help_all(stdout);
        return KBC_EXIT_OK;
    }
    const kbc_command *cmd = kbc_command_find(c->args[0]);
    if (!cmd)
        return kbc_help_unknown(c->args[0], 1);
    kbc_help_command(cmd, stdout);
    return KBC_EXIT_OK;
}

/* ---- kbench __options ---------------------------------------------- */

/* The text s as one field of `kbench __options`: a backslash, a tab and a
   line break written as \\, \t and \n, so that a field never spans a
   tab or a line. */
static void dump_field(FILE *out, const char *s)
{
    fputc('\t', out);
    for (const char *p = s ? s : ""; *p; p++)
        fputs(*p == '\\' ? "\\\\" : *p == '\t' ? "\\t" : *p == '\n' ? "\\n" : (char[]){*p, 0}, out);
}

/* Whether the rows agree with each other: every option a command names is
   in the option table, not one that every command takes, named once, and
   has a help; every other option is taken by some command.  Says what is
   wrong on stderr. */
static int rows_agree(void)
{
    int ok = 1;
    for (size_t i = 0; i < kbc_n_commands; i++) {
        const kbc_command *cmd = &kbc_commands[i];
        for (const kbc_command_option *e = cmd->options; e->name; e++) {
            const kbc_option *o = kbc_option_find(e->name);
            const char *why = !o                  ? "is not in the option table"
                              : o->everywhere     ? "is taken by every command already"
                              : !e->help && !o->help ? "has no help"
                                                  : NULL;
            for (const kbc_command_option *f = cmd->options; !why && f < e; f++)
                if (strcmp(f->name, e->name) == 0)
                    why = "is named twice";
            if (why) {
                fprintf(stderr, "kbench __options: option %s of command %s %s.\n", e->name,
                        cmd->name, why);
                ok = 0;
            }
        }
    }
    for (size_t k = 0; k < kbc_n_options; k++) {
        int taken = kbc_options[k].everywhere;
        for (size_t i = 0; i < kbc_n_commands && !taken; i++)
            taken = kbc_command_takes(&kbc_commands[i], &kbc_options[k], NULL);
        if (!taken) {
            fprintf(stderr, "kbench __options: no command takes option %s.\n",
                    kbc_options[k].name);
            ok = 0;
        }
    }
    return ok;
}

static void dump_command(const kbc_command *cmd, FILE *out)
{
    fprintf(out, "command");
    dump_field(out, cmd->name);
    dump_field(out, cmd->summary);
    dump_field(out, cmd->synopsis);
    dump_field(out, cmd->examples[0]);
    dump_field(out, cmd->examples[1]);
    dump_field(out, cmd->complete);
    fputc('\n', out);
    for (const kbc_command_option *e = cmd->options; e->name; e++) {
        const char *help = NULL;
        kbc_command_takes(cmd, kbc_option_find(e->name), &help);
        fprintf(out, "takes");
        dump_field(out, cmd->name);
        dump_field(out, e->name);
        dump_field(out, help);
        fputc('\n', out);
    }
}

/* An option, with the commands that take it ("run tune"; empty: every
   command) in the order of the command table. */
static void dump_option(const kbc_option *o, FILE *out)
{
    char only[256] = "";
    size_t used = 0;
    for (size_t i = 0; !o->everywhere && i < kbc_n_commands; i++)
        if (kbc_command_takes(&kbc_commands[i], o, NULL) && used < sizeof only)
            used += (size_t)snprintf(only + used, sizeof only - used, "%s%s", used ? " " : "",
                                     kbc_commands[i].name);
    char shrt[2] = {o->short_name, 0};
    fprintf(out, "option");
    dump_field(out, o->name);
    dump_field(out, shrt);
    dump_field(out, o->arg);
    dump_field(out, o->repeatable ? "repeatable" : "");
    dump_field(out, o->optional_value ? "optional" : "");
    dump_field(out, only);
    dump_field(out, o->help);
    fputc('\n', out);
}

/* One record a line, fields separated by tabs: the version; per command
   its row ("command") and each option it takes with that command's help
   ("takes"); per option its row ("option"); the exit codes ("tail").  The
   build runs it and gen_manual.c turns it into the man page and the bash
   and zsh completions (core/CMakeLists.txt). */
int kbc_help_dump(FILE *out)
{
    if (!rows_agree())
        return KBC_EXIT_SYSTEM;
    fprintf(out, "version");
    dump_field(out, KBENCH_VERSION);
    fputc('\n', out);
    for (size_t i = 0; i < kbc_n_commands; i++)
        dump_command(&kbc_commands[i], out);
    for (size_t i = 0; i < kbc_n_options; i++)
        dump_option(&kbc_options[i], out);
    fprintf(out, "tail");
    dump_field(out, help_tail);
    fputc('\n', out);
    return KBC_EXIT_OK;
}
