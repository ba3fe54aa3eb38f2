/*
 * commit.c -- asking git which commit a run measured, and keeping the
 * answer beside the run's files so that a rebuilt history finds it again.
 */
#define _GNU_SOURCE
#include "commit.h"

#include "child.h"
#include "input.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kbc_commit_rev_ok(const char *rev)
{
    if (!rev || !*rev || rev[0] == '-' || strlen(rev) >= sizeof ((kbc_hist_commit *)0)->rev)
        return 0;
    for (const char *p = rev; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._/~^@-", *p))
            return 0;
    return 1;
}

/* Runs git with argv (NULL-terminated) and returns its first line of
   output in out, or -1 when git is missing, fails or prints nothing.
   git's stderr is silenced: "not a git repository" is an answer here. */
static int git_line(char *const argv[], char *out, size_t n)
{
    int rd;
    pid_t pid = kbc_child_start(argv, NULL, STDOUT_FILENO, 1, &rd);
    if (pid < 0)
        return -1;
    size_t len = 0;
    ssize_t got;
    while (len + 1 < n && (got = read(rd, out + len, n - 1 - len)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        len += (size_t)got;
    }
    char sink[256];
    while (read(rd, sink, sizeof sink) > 0)
        ; /* the rest, so git never blocks on a full pipe */
    close(rd);
    int code = kbc_child_wait(pid);
    out[len] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return code == 0 && out[0] ? 0 : -1;
}

int kbc_commit_from_git(const char *rev, kbc_hist_commit *c)
{
    char spec[128];
    snprintf(spec, sizeof spec, "%s^{commit}", rev ? rev : "HEAD");
    if (rev && !kbc_commit_rev_ok(rev))
        return -1;
    char *argv[] = {"git", "log", "-1", "--format=%H %ct", "--end-of-options", spec, "--", NULL};
    char line[256];
    if (git_line(argv, line, sizeof line) != 0)
        return -1;
    char hash[80];
    long long t;
    if (sscanf(line, "%79s %lld", hash, &t) != 2)
        return -1;
    snprintf(c->rev, sizeof c->rev, "%s", hash);
    c->time = t;
    return 0;
}

/* The commit file is one line: "REV UNIXTIME SOURCE". */
#define COMMIT_FILE_MAX 4096

/* DIR/commit for the folder holding path. */
static char *beside(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return kbc_xstrdup("commit");
    return kbc_xasprintf("%.*s/commit", (int)(slash - path), path);
}

int kbc_commit_read_beside(const char *path, kbc_hist_commit *c)
{
    char *p = beside(path);
    char why[200];
    FILE *f = kbc_input_fopen(p, COMMIT_FILE_MAX, why, sizeof why);
    free(p);
    if (!f)
        return -1;
    char rev[sizeof c->rev], source[sizeof c->source];
    long long t;
    int got = fscanf(f, "%79s %lld %15s", rev, &t, source);
    fclose(f);
    if (got != 3 || !kbc_commit_rev_ok(rev))
        return -1;
    snprintf(c->rev, sizeof c->rev, "%s", rev);
    snprintf(c->source, sizeof c->source, "%s", source);
    c->time = t;
    return 0;
}

int kbc_commit_write(const char *dir, const kbc_hist_commit *c)
{
    char *p = kbc_xasprintf("%s/commit", dir);
    FILE *f = fopen(p, "w");
    free(p);
    if (!f)
        return -1;
    fprintf(f, "%s %lld %s\n", c->rev, (long long)c->time, c->source);
    return fclose(f) == 0 ? 0 : -1;
}
