/*
 * prefetch.h -- the host half of a worker's next point, made while the
 * current point's GPU work is timed (kbench/plugin.h, struct kb_prefetch;
 * docs/plugins.md, "Prefetch").
 *
 * One kbc_prefetch per worker.  It learns of the next point from the
 * worker (kbc_ahead_fn: the supervisor names it ahead, request.h) and
 * starts that point's setup_host on a thread of its own once the current
 * point reaches a variant whose timing CPU work beside it cannot change
 * (kbc_prefetch_may_overlap); before any other variant it waits for that
 * thread, so that a CPU variant never shares the cores and a timing the
 * hold does not protect never shares the host.  The next point's setup
 * (kbc_prefetch_setup) then takes the host state and runs setup_device
 * alone.  Nothing of the host half touches CUDA.
 *
 * The memory rule: a host half starts only when the next point's
 * host_bytes fit in the host memory available then (MemAvailable, with
 * the current point's own already taken) shared among the run's workers
 * on this host.
 */
#ifndef KBENCH_PREFETCH_H
#define KBENCH_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "device.h"
#include "instance.h"
#include "point_plan.h"
#include "record.h"

/* The next point, as the worker knows it. */
typedef struct kbc_ahead {
    kbc_experiment e;    /* its experiment, narrowed to the variants the
                            order names (a copy; its pointers are the
                            plan's, which outlive the prefetch)          */
    uint64_t point;
    kbc_point_plan plan; /* the order's plan of the point                */
    int cpu_threads;     /* the host's cpu_threads for it                */
    int share;           /* the run's workers that share this host's
                            memory (>= 1): the memory rule's divisor     */
} kbc_ahead;

/* Fills *next and returns 1 when the worker knows its next point, else 0
   (asked again before the next variant that may overlap). */
typedef int (*kbc_ahead_fn)(void *ctx, kbc_ahead *next);

typedef struct kbc_prefetch_opts {
    kbc_ahead_fn next;
    void *ctx;
    uint64_t (*available)(void);/* host memory available now, in bytes;
                                   NULL: kbc_host_available_bytes       */
} kbc_prefetch_opts;

typedef struct kbc_prefetch kbc_prefetch;

kbc_prefetch *kbc_prefetch_new(const kbc_prefetch_opts *o);
/* Waits for a host half still running and drops what it made. */
void kbc_prefetch_free(kbc_prefetch *pf);

/* Whether the next point's host half may run beside record r's variant of
   experiment e on dev: a CUDA variant whose timed samples the hold
   protects (kbc_hold_wanted: not `syncs`, not include_copies, the hold
   exists) and whose energy is not measured, in an experiment whose
   prefetch is not off.  Never beside a CPU variant. */
int kbc_prefetch_may_overlap(const kbc_experiment *e, const kbc_record *r,
                             const kbc_device *dev);

/* Before a variant of the current point: when overlap is set, starts the
   next point's host half if it is known, admitted and not started (dev:
   the device the point runs on, whose facts it sees); otherwise waits for
   a host half that is running.  Returns the seconds it waited. */
double kbc_prefetch_before(kbc_prefetch *pf, int overlap, const kbc_device *dev);

/* What kbc_prefetch_setup did, for the point's times. */
typedef struct kbc_prefetch_took {
    int ahead;       /* the host half was made ahead and used            */
    double host_s;   /* that host half's seconds, on its own thread      */
    double wait_s;   /* waiting for it to end                            */
} kbc_prefetch_took;

/* The setup of point p of e for the variants in mask through `in`: when
   the host half made ahead is this point's (and its variants include
   mask), waits for it and runs setup_device on its host state; else drops
   any host half made for another point and calls setup().  Returns the
   status with *state and err as kbc_call_setup leaves them (a failed
   setup_host is the setup's failure).  pf NULL: setup(). */
int kbc_prefetch_setup(kbc_prefetch *pf, kbc_instance in, const kbc_experiment *e, uint64_t p,
                       const kb_value *values, uint64_t mask, void **state, kbc_error *err,
                       kbc_prefetch_took *took);

/* The memory rule: next_bytes of host memory may be taken ahead when
   they fit in a 1/workers share of available (0: unknown, never). */
int kbc_prefetch_fits(uint64_t next_bytes, uint64_t available, int workers);

/* MemAvailable of /proc/meminfo in bytes, else the free pages; 0 when
   neither can be read. */
uint64_t kbc_host_available_bytes(void);

/* For the worker's messages and tests: how many host halves this
   prefetch started, and whether one is running now. */
unsigned kbc_prefetch_started(const kbc_prefetch *pf);
int kbc_prefetch_running(const kbc_prefetch *pf);

#endif
