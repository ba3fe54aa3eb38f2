/* strays.c -- see strays.h. */
#define _GNU_SOURCE
#include "strays.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

/* Rounds of looking and signalling before the ending gives up: at 10 ms
   apart, the grace and over a second of SIGKILL for processes that fork
   as fast as they are ended, or sit in an uninterruptible wait. */
#define ROUNDS 200
#define ROUND_S 0.01

/* One living process as /proc/PID/stat tells it. */
typedef struct proc {
    pid_t pid, ppid, pgrp;
} proc;

static int by_pid(const void *a, const void *b)
{
    const proc *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The fields of /proc/NAME/stat after the command's name (from the state
   on) into text (n bytes), or NULL when the process is gone.  The name, in
   parentheses, may hold anything: the fields start after the last ')'. */
static const char *stat_fields(const char *name, char *text, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/stat", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t r = read(fd, text, n - 1);
    close(fd);
    if (r <= 0)
        return NULL;
    text[r] = '\0';
    const char *after = strrchr(text, ')');
    return after ? after + 1 : NULL;
}

/* Reads /proc/PID/stat; returns 0 for a process that has not ended. */
static int proc_read(const char *name, proc *p)
{
    char text[512];
    const char *after = stat_fields(name, text, sizeof text);
    char state;
    int ppid, pgrp;
    /* The state, the parent and the group. */
    if (!after || sscanf(after, " %c %d %d", &state, &ppid, &pgrp) != 3)
        return -1;
    if (state == 'Z' || state == 'X' || state == 'x')
        return -1;
    *p = (proc){(pid_t)atoi(name), (pid_t)ppid, (pid_t)pgrp};
    return 0;
}

/* Every living process, sorted by pid. */
static proc *procs_read(size_t *n)
{
    *n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return NULL;
    size_t cap = 512;
    proc *all = kbc_xmalloc(cap * sizeof *all);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (*n == cap) {
            cap *= 2;
            all = kbc_xrealloc(all, cap * sizeof *all);
        }
        if (proc_read(e->d_name, &all[*n]) == 0)
            (*n)++;
    }
    closedir(d);
    qsort(all, *n, sizeof *all, by_pid);
    return all;
}

/* Which processes are strays: the descendants of `root`, or the members
   of group `root`. */
typedef enum { OF_DESCENT, OF_GROUP } kin;

/* Marks in[i] for each stray of all[0..n) and returns how many. */
static size_t strays_mark(const proc *all, size_t n, pid_t root, kin k, char *in)
{
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        in[i] = k == OF_GROUP ? all[i].pgrp == root && all[i].pid != root
                              : all[i].ppid == root;
        found += (size_t)in[i];
    }
    /* A descendant's children, until no more are found (a chain is short). */
    for (int grew = k == OF_DESCENT; grew;) {
        grew = 0;
        for (size_t i = 0; i < n; i++) {
            if (in[i])
                continue;
            proc key = {.pid = all[i].ppid};
            const proc *parent = bsearch(&key, all, n, sizeof *all, by_pid);
            if (parent && in[parent - all]) {
                in[i] = 1;
                found++;
                grew = 1;
            }
        }
    }
    return found;
}

/* Reaps the caller's children that have ended.  Returns 1 while it has
   children left, 0 when it has none. */
static int reap_children(void)
{
    for (;;) {
        pid_t r = waitpid(-1, NULL, WNOHANG);
        if (r > 0)
            continue;
        if (r < 0 && errno == EINTR)
            continue;
        return r == 0;
    }
}

/* Whether pid is in seen[0..n), adding it when not. */
static int seen_before(pid_t **seen, size_t *n, size_t *cap, pid_t pid)
{
    for (size_t i = 0; i < *n; i++)
        if ((*seen)[i] == pid)
            return 1;
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        *seen = kbc_xrealloc(*seen, *cap * sizeof **seen);
    }
    (*seen)[(*n)++] = pid;
    return 0;
}

/* Signals the strays of root (SIGTERM, then SIGKILL once the grace is
   over) until none is left.  Returns how many different ones were seen. */
static int strays_end(pid_t root, kin k)
{
    pid_t *seen = NULL;
    size_t n_seen = 0, cap_seen = 0;
    double grace_end = kbc_now() + KBC_STRAYS_GRACE_S;
    for (int round = 0; round < ROUNDS; round++) {
        int sig = kbc_now() < grace_end ? SIGTERM : SIGKILL;
        size_t n;
        proc *all = procs_read(&n);
        char *in = kbc_xcalloc(n ? n : 1, 1);
        size_t left = all ? strays_mark(all, n, root, k, in) : 0;
        for (size_t i = 0; i < n; i++) {
            if (!in[i])
                continue;
            int again = seen_before(&seen, &n_seen, &cap_seen, all[i].pid);
            /* The group at once (a stray that forks cannot outrun it);
               each descendant by itself, SIGTERM once. */
            if (k == OF_DESCENT && (sig == SIGKILL || !again))
                kill(all[i].pid, sig);
        }
        if (k == OF_GROUP && left)
            kill(-root, sig);
        free(in);
        free(all);
        if (k == OF_DESCENT)
            reap_children();
        if (!left)
            break;
        kbc_pause(ROUND_S);
    }
    if (k == OF_DESCENT)
        reap_children();
    free(seen);
    return (int)n_seen;
}

int kbc_process_exiting(pid_t pid)
{
    char name[24], text[1024];
    snprintf(name, sizeof name, "%d", (int)pid);
    const char *after = stat_fields(name, text, sizeof text);
    char state;
    int ppid, pgrp, session, tty, tpgid;
    unsigned flags;
    if (!after || sscanf(after, " %c %d %d %d %d %d %u", &state, &ppid, &pgrp, &session, &tty,
                         &tpgid, &flags) != 7)
        return 1; /* gone */
    /* PF_EXITING (include/linux/sched.h): set as the process starts to
       exit. */
    return state == 'Z' || state == 'X' || (flags & 0x4u) != 0;
}

void kbc_strays_adopt(void)
{
    /* Without it (an old kernel), only the worker's children and their
       children are found, not a daemon that left them. */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

int kbc_strays_end_children(void)
{
    if (!reap_children())
        return 0; /* no child: with kbc_strays_adopt, no descendant */
    return strays_end(getpid(), OF_DESCENT);
}

int kbc_strays_end_group(pid_t pgid)
{
    /* kill(-pgid, 0) fails when the group has no member at all: the
       usual case, with no walk through /proc. */
    if (pgid <= 1 || pgid == getpgrp() || kill(-pgid, 0) != 0)
        return 0;
    return strays_end(pgid, OF_GROUP);
}

const char *kbc_strays_words(int n, char *out, size_t size)
{
    if (n <= 0)
        snprintf(out, size, "%s", "");
    else if (n == 1)
        snprintf(out, size, "1 process the plugin started was still running and was ended");
    else
        snprintf(out, size, "%d processes the plugin started were still running and were ended",
                 n);
    return out;
}
