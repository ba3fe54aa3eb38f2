/* quick.c -- see quick.h. */
#define _GNU_SOURCE
#include "quick.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text.h"
#include "util.h"

/* The file's layout: a comment, the section, its plugin line, then one line
   per argument, so that line FIRST_ARG_LINE + k is args[k]. */
enum { SECTION_LINE = 2, PLUGIN_LINE = 3, FIRST_ARG_LINE = 4 };

int kbc_quick_wanted(const char *const *args, size_t n)
{
    if (n > 1)
        return 1;
    if (n == 0)
        return 0;
    struct stat st;
    return stat(args[0], &st) != 0 && !strchr(args[0], '/') && !strchr(args[0], '.');
}

int kbc_quick_write(kbc_quick *q, const char *plugin, const char *const *args, size_t n,
                    char *why, size_t why_n)
{
    memset(q, 0, sizeof *q);
    q->plugin = plugin;
    q->args = args;
    q->n = n;
    /* The plugin name is the section's name: the characters a section may
       not hold, or a line break, would make another file. */
    if (!*plugin || strpbrk(plugin, "[];#=\n\r")) {
        snprintf(why, why_n, "'%s' is neither an INI file nor a plugin name",
                 kbc_text_visible(plugin));
        return KBC_EXIT_USAGE;
    }
    for (size_t k = 0; k < n; k++) {
        const char *eq = strchr(args[k], '=');
        if (!eq || eq == args[k]) {
            snprintf(why, why_n,
                     "argument '%s' is not KEY=VALUE (for example n=2^24 or "
                     "variants=onepass,cub)",
                     kbc_text_visible(args[k]));
            return KBC_EXIT_USAGE;
        }
        if (strpbrk(args[k], "\n\r")) {
            snprintf(why, why_n, "argument '%s' holds a line break", kbc_text_visible(args[k]));
            return KBC_EXIT_USAGE;
        }
        /* A key is a word: what else would be another line of the file
           (";n=4" a comment, "[x]=1" a section) and be dropped or
           misread without a word. */
        char *key = kbc_xstrndup(args[k], (size_t)(eq - args[k]));
        char *word = kbc_trim_dup(key);
        free(key);
        int ok = *word != '\0';
        for (const char *c = word; *c && ok; c++)
            ok = isalnum((unsigned char)*c) || strchr("_-.", *c);
        int is_plugin = strcmp(word, "plugin") == 0;
        free(word);
        if (!ok) {
            snprintf(why, why_n,
                     "argument '%s' is not KEY=VALUE: a key is made of letters, digits, '_', "
                     "'-' and '.' (a quick run has no comments or sections)",
                     kbc_text_visible(args[k]));
            return KBC_EXIT_USAGE;
        }
        if (is_plugin) {
            snprintf(why, why_n, "argument '%s': the plugin is the first argument, not a key",
                     kbc_text_visible(args[k]));
            return KBC_EXIT_USAGE;
        }
    }
    /* The file is written elsewhere, but a file the arguments name is where
       the user typed it: an include is made absolute from here. */
    char *here = getcwd(NULL, 0);
    const char *dir = getenv("TMPDIR");
    char *path = kbc_xasprintf("%s/kbench-run-XXXXXX.ini", dir && *dir ? dir : "/tmp");
    int fd = mkstemps(path, 4);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(why, why_n, "cannot write the INI file %s of the run of %s: %s",
                 kbc_text_visible(path), plugin, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        free(path);
        free(here);
        return KBC_EXIT_SYSTEM;
    }
    fprintf(f, "; kbench run %s, from the command line\n", plugin);
    fprintf(f, "[%s]\n", plugin);
    fprintf(f, "plugin = %s\n", plugin);
    for (size_t k = 0; k < n; k++) {
        const char *eq = strchr(args[k], '=');
        char *key = kbc_xstrndup(args[k], (size_t)(eq - args[k]));
        char *word = kbc_trim_dup(key);
        char *value = kbc_trim_dup(eq + 1);
        if (strcmp(word, "include") == 0 && value[0] && value[0] != '/' && here)
            fprintf(f, "include = %s/%s\n", here, value);
        else
            fprintf(f, "%s = %s\n", word, eq + 1);
        free(value);
        free(word);
        free(key);
    }
    free(here);
    if (fclose(f) != 0) {
        snprintf(why, why_n, "cannot write the INI file %s of the run of %s: %s",
                 kbc_text_visible(path), plugin, strerror(errno));
        unlink(path);
        free(path);
        return KBC_EXIT_SYSTEM;
    }
    q->path = path;
    return 0;
}

char *kbc_quick_name(const kbc_quick *q, char *msg, size_t size)
{
    if (!q->path)
        return msg;
    size_t pl = strlen(q->path);
    if (strncmp(msg, q->path, pl) != 0 || msg[pl] != ':')
        return msg;
    char *end = NULL;
    long line = strtol(msg + pl + 1, &end, 10);
    const char *rest = end && *end == ':' ? end + 1 : msg + pl + 1;
    while (*rest == ' ')
        rest++;
    char who[600];
    if (end && *end == ':' && line >= FIRST_ARG_LINE && (size_t)(line - FIRST_ARG_LINE) < q->n)
        snprintf(who, sizeof who, "argument '%s'", q->args[line - FIRST_ARG_LINE]);
    else
        snprintf(who, sizeof who, "plugin '%s'", q->plugin);
    char *out = kbc_xasprintf("%s: %s", who, rest);
    snprintf(msg, size, "%s", out);
    free(out);
    return msg;
}

void kbc_quick_free(kbc_quick *q)
{
    if (q->path) {
        unlink(q->path);
        free(q->path);
    }
    q->path = NULL;
}
