/*
 * check_child.h -- kbench check's plugin calls in a child process with a
 * watchdog, so that a plugin that crashes, exits or hangs costs the check
 * it was being judged for, not the whole check (check.c).
 *
 * The child is forked, not exec'd: it carries the check's points and the
 * plugin already loaded.  A CUDA context does not survive fork(), so the
 * process that forks never starts the CUDA runtime; each child opens the
 * GPU itself.  What a child finds goes into memory shared with kbench
 * (ck_shared_alloc), which is read once the child has ended, however it
 * ended.  The child runs in a process group of its own (a hung one is
 * killed with its group); kbench becomes a child subreaper, so that every
 * process the plugin starts, even a daemon, is ended with the child
 * (strays.h).  The child's standard output is its standard error,
 * line-buffered, so that what a plugin prints is neither lost in a crash
 * nor mixed into the check's lines.
 */
#ifndef KBENCH_CHECK_CHILD_H
#define KBENCH_CHECK_CHILD_H

#include <stddef.h>

/* What the child shows of its progress, in shared memory. */
typedef struct ck_watch {
    volatile unsigned long beat; /* moved before each plugin call */
    volatile int finished;       /* the child's work returned     */
} ck_watch;

/* How a child ended. */
typedef enum ck_end {
    CK_END_DONE,        /* its work returned                          */
    CK_END_SIGNAL,      /* killed by a signal (a crash)               */
    CK_END_EXIT,        /* it exited before its work returned          */
    CK_END_HUNG,        /* no beat for the watchdog's time: stopped   */
    CK_END_INTERRUPTED, /* SIGINT or SIGTERM reached kbench: stopped  */
    CK_END_FAILED       /* it could not be started                    */
} ck_end;

typedef struct ck_outcome {
    ck_end end;
    /* What the call that was running did, as words that follow its name
       ("run() " ...): "crashed with signal SIGSEGV (Segmentation fault)",
       "ended the process with exit status 3", "did not return within
       60 s ..."; for CK_END_FAILED why the child could not start. */
    char words[300];
} ck_outcome;

/* Memory shared with the children forked after this call, zeroed; freed
   with ck_shared_free (same size).  Exits kbench (as kbc_xmalloc does)
   when none can be had. */
void *ck_shared_alloc(size_t size);
void ck_shared_free(void *p, size_t size);

/* The watchdog's time in seconds: $KBENCH_CHECK_TIMEOUT, or 60.  Returns
   0, or -1 with why set when the variable is not a number of seconds. */
int ck_watchdog_seconds(double *secs, char *why, size_t n);

/* Runs fn(arg) in a child and waits for it: until it returns, ends, or
   goes timeout_s seconds without moving w->beat (then it is killed), or
   until SIGINT or SIGTERM reaches kbench (the child is killed and the
   signal is remembered: CK_END_INTERRUPTED).  w lives in shared memory. */
void ck_child_run(void (*fn)(void *), void *arg, ck_watch *w, double timeout_s,
                  ck_outcome *out);

#endif
