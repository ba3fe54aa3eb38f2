/*
 * cli.c -- what the commands share: how a sentence reaches the user,
 * loading the plugins, the command line as one string, kbench's own path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "text.h"

/* A run without a file (quick.h): its INI file's places are named by the
   arguments they came from. */
static const kbc_quick *say_quick;

void kbc_say_quick(const kbc_quick *q)
{
    say_quick = q;
}

void kbc_say(int with_help, const char *fmt, ...)
{
    char raw[1200], msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* What the user typed is quoted in the sentence: a line break in it is
       shown escaped, and the sentence stays one line. */
    kbc_text_visible_to(raw, msg, sizeof msg);
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

int kbc_cli_load_plugins(const kbc_cli *c, kbc_registry *reg)
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
            kbc_say(0, "--plugin-path: %s", d.msg);
            return KBC_EXIT_USAGE;
        }
    }
    return 0;
}

char *kbc_cli_command_line(const kbc_cli *c)
{
    size_t n = 1;
    for (int i = 0; i < c->argc; i++)
        n += strlen(c->argv[i]) + 1;
    char *s = kbc_xcalloc(n, 1);
    for (int i = 0; i < c->argc; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, c->argv[i]);
    }
    return s;
}

int kbc_cli_self_path(char *buf, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", buf, n - 1);
    if (len <= 0) {
        kbc_say(0, "cannot find the kbench binary to start its workers (/proc/self/exe: %s)",
                strerror(errno));
        return -1;
    }
    buf[len] = '\0';
    return 0;
}
