/* check_child.c -- see check_child.h. */
#define _GNU_SOURCE
#include "check_child.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strays.h"
#include "text.h"
#include "util.h"

/* One plugin call of the check runs on points of at most 1 GiB: a minute
   is far beyond any that works. */
#define CK_WATCHDOG_DEFAULT_S 60.0
#define CK_WATCHDOG_MAX_S 1e6
/* How often the parent looks at its child. */
#define CK_POLL_S 0.005

void *ck_shared_alloc(size_t size)
{
    void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "kbench: out of memory (asked for %zu bytes shared with the check's "
                        "process).\n", size);
        exit(KBC_EXIT_SYSTEM);
    }
    return p;
}

void ck_shared_free(void *p, size_t size)
{
    if (p)
        munmap(p, size ? size : 1);
}

int ck_watchdog_seconds(double *secs, char *why, size_t n)
{
    const char *text = getenv("KBENCH_CHECK_TIMEOUT");
    *secs = CK_WATCHDOG_DEFAULT_S;
    if (!text || !*text)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v > 0) || v > CK_WATCHDOG_MAX_S) {
        char shown[120];
        kbc_text_visible_to(text, shown, sizeof shown);
        snprintf(why, n,
                 "$KBENCH_CHECK_TIMEOUT is '%.80s', not a number of seconds above 0 and at "
                 "most %g",
                 shown, CK_WATCHDOG_MAX_S);
        return -1;
    }
    *secs = v;
    return 0;
}

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

/* The child: a group of its own, stdout onto stderr line by line, the
   work, and _exit (never exit: atexit handlers are the parent's). */
static void child_main(void (*fn)(void *), void *arg, ck_watch *w,
                       const struct sigaction old[2])
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
    setpgid(0, 0);
    if (dup2(STDERR_FILENO, STDOUT_FILENO) >= 0)
        setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
    fn(arg);
    w->finished = 1;
    _exit(0);
}

/* Kills the child's group and waits for the child. */
static void child_kill(pid_t pid, int *status)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
}

/* Waits for the child: its end, its watchdog, or a signal to kbench. */
static void child_wait(pid_t pid, ck_watch *w, double timeout_s, ck_outcome *out)
{
    int status = 0;
    unsigned long beat = w->beat;
    double last = kbc_now();
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            out->end = CK_END_FAILED;
            snprintf(out->words, sizeof out->words, "cannot wait for the check's process: %s",
                     strerror(errno));
            child_kill(pid, &status);
            return;
        }
        if (stop_signal) {
            out->end = CK_END_INTERRUPTED;
            child_kill(pid, &status);
            return;
        }
        double now = kbc_now();
        if (w->beat != beat) {
            beat = w->beat;
            last = now;
        } else if (now - last > timeout_s) {
            out->end = CK_END_HUNG;
            snprintf(out->words, sizeof out->words,
                     "did not return within %g s (the check's watchdog, $KBENCH_CHECK_TIMEOUT) "
                     "and was stopped",
                     timeout_s);
            child_kill(pid, &status);
            return;
        }
        kbc_pause(CK_POLL_S);
    }
    if (w->finished) {
        out->end = CK_END_DONE;
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *abbrev = sigabbrev_np(sig);
        out->end = CK_END_SIGNAL;
        snprintf(out->words, sizeof out->words, "crashed with signal SIG%s (%s)",
                 abbrev ? abbrev : "?", strsignal(sig));
    } else {
        out->end = CK_END_EXIT;
        snprintf(out->words, sizeof out->words, "ended the process with exit status %d",
                 WIFEXITED(status) ? WEXITSTATUS(status) : status);
    }
}

void ck_child_run(void (*fn)(void *), void *arg, ck_watch *w, double timeout_s,
                  ck_outcome *out)
{
    memset(out, 0, sizeof *out);
    w->beat = 0;
    w->finished = 0;
    /* SIGINT and SIGTERM reach kbench alone (the child has a group of its
       own): they stop the child here. */
    struct sigaction sa, old[2];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
    /* Whatever the plugin starts stays a descendant of kbench, even a
       daemon that left the child's group, and is ended with the child. */
    kbc_strays_adopt();
    fflush(NULL); /* nothing buffered here is written twice */
    pid_t pid = fork();
    if (pid == 0)
        child_main(fn, arg, w, old);
    if (pid < 0) {
        out->end = CK_END_FAILED;
        snprintf(out->words, sizeof out->words, "cannot start the check's process: %s",
                 strerror(errno));
    } else {
        setpgid(pid, pid); /* as the child does: the group exists before it is killed */
        child_wait(pid, w, timeout_s, out);
        kbc_strays_end_children();
    }
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}
