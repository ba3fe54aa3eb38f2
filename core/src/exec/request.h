/*
 * request.h -- what a supervisor tells a worker (worker.h): written and
 * read here, and nowhere else.
 *
 * A worker is started as
 *   kbench __worker INI [--plugin-path P]... [--experiment E] [--set S]...
 *                       [--variants V] [-q] [--allow-shared] [--sanitized T]
 * so that it builds the supervisor's plan from the same file with the same
 * changes (config.h, kbc_ini_narrow), and is then sent orders, one line of
 * JSON each, on its standard input:
 *   {"point": {"exp": X, "point": P, "mask": "HEX", "plan": {...}}}
 *       run point P of experiment X (indices into the plan), only the
 *       plugin variants whose bits are set in MASK (hexadecimal; 0: every
 *       selected variant), with the point's plan as the supervisor's plan
 *       holds it (point_plan.h): {"status", "code", "sentence", "work",
 *       "refused"}, the work as the hexadecimal image of its kb_work and
 *       refused (absent when none) as [{"variant": V, "sentence": S}...],
 *       the variants plan() refused at the point (kb_host.refuse).  The
 *       worker is the supervisor's own binary exec'd again, so both ends
 *       share the layout; an image of another size is refused.  The worker does not
 *       call plan(): the point was planned once, by the supervisor.
 *   {"ahead": {...as point...}}
 *       the point the worker will most likely be told to run next (a
 *       hint, not an order): it may make that point's host half while the
 *       current one runs (prefetch.h), with "share": the workers that
 *       share the host's memory.  A later hint replaces it; a point order
 *       for another point drops what was made for it.
 *   {"quit": true}
 *       (or the end of input) exit.
 */
#ifndef KBENCH_REQUEST_H
#define KBENCH_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "point_plan.h"
#include "util.h"

/* The hidden command's name. */
#define KBC_WORKER_COMMAND "__worker"

/* What makes a worker's plan the run's, and how it behaves. */
typedef struct kbc_request {
    const char *self;                /* the kbench binary the workers exec */
    const char *ini_path;
    const char *const *plugin_paths; /* --plugin-path, in order           */
    int n_plugin_paths;
    /* --experiment, --set and --variants (kbc_ini_narrow). */
    const char *experiment;
    const char *const *sets;
    int n_sets;
    const char *variants;
    int quiet;                       /* -q: no progress, only warnings    */
    int allow_shared;                /* it may share its GPU (worker.c's
                                        lock)                              */
    const char *sanitized;           /* --sanitize's tool: the worker runs
                                        under compute-sanitizer, and so
                                        measures no ceilings (NULL: not)   */
} kbc_request;

/* The argv that starts a worker for r: the n_lead words of lead first (a
   program that runs the worker, such as compute-sanitizer), then r->self
   and the worker's arguments.  A NULL-terminated array to free(); its
   strings are r's and lead's. */
char **kbc_request_argv(const kbc_request *r, const char *const *lead, size_t n_lead);

/* Reads a worker's arguments (argv[0] is KBC_WORKER_COMMAND) into r, whose
   self is NULL and whose arrays point into argv.  Returns 0, or -1 with d
   set to one sentence.  kbc_request_release frees the arrays. */
int kbc_request_read(int argc, char **argv, kbc_request *r, kbc_diag *d);
void kbc_request_release(kbc_request *r);

/* One order on the worker's standard input. */
typedef struct kbc_order {
    int quit;             /* the run is over for this worker             */
    int ahead;            /* a hint of the next point, not an order to run */
    int share;            /* with ahead: the workers that share this
                             host's memory (the prefetch's memory rule)  */
    uint32_t exp;         /* else: run this point of this experiment     */
    uint64_t point;
    uint64_t mask;        /* its plugin variants; 0: every selected one  */
    kbc_point_plan plan;  /* its plan, the supervisor's record           */
} kbc_order;

/* The order as one line, with its newline (a string to free()). */
char *kbc_order_line(const kbc_order *o);

/* Reads one line of the channel into *o (the plan marked carried).
   Returns 0, or -1 with why set to one clause. */
int kbc_order_read(const char *line, kbc_order *o, char *why, size_t n);

#endif
