/*
 * audit.h -- the tracer of the audit run (docs/integrity.md, "The audit"):
 * everything the GPU did from the moment a CUDA variant's run() was called
 * until the device was idle again, traced with CUPTI's activity API, and
 * told apart into the work run() put on kbench's stream (what the timing
 * sees) and everything else (what it does not).
 *
 * CUPTI ships with the CUDA toolkit, not with the driver, so kbench never
 * links it: the first audit loads libcupti with dlopen() (its soname, then
 * beside the CUDA runtime library and in the toolkit's usual folders).  A
 * machine without it still runs: kbc_audit_available() says why, and the
 * rows say that their audit was partial.  KBENCH_CUPTI=off leaves CUPTI
 * alone; KBENCH_CUPTI=PATH loads that file.
 *
 * CUPTI's buffers arrive through callbacks without a user pointer, so the
 * records of the audit in progress are kept in this file; one audit runs
 * at a time in a process (a worker audits its rows one after another).
 */
#ifndef KBENCH_AUDIT_H
#define KBENCH_AUDIT_H

#include <stddef.h>
#include <stdint.h>

/* The classes of work the GPU does. */
enum { KBC_AUDIT_KERNEL, KBC_AUDIT_COPY, KBC_AUDIT_MEMSET, KBC_AUDIT_CLASSES };

/* What one traced call of run() did on the GPU. */
typedef struct kbc_audit {
    /* Work that run() launched on kbench's stream while it ran (and, for
       a variant that declares that run() waits for its work (syncs), work
       on any stream that ended before run() returned: its events, never
       held, spanned it). */
    uint32_t ours;
    double busy_s;            /* the union of that work's intervals       */
    /* Work on another stream or in another context, launched while run()
       ran or before it: not inside what the events time. */
    uint32_t other[KBC_AUDIT_CLASSES];
    uint32_t other_stream;    /* the first such item's stream id          */
    int other_context;        /* it was in another context                */
    int other_legacy;         /* it was on the legacy default stream      */
    char other_name[96];      /* its kernel's name ("" for a copy)        */
    /* Kernels that the call after run() (download(), which only copies)
       launched: work kept out of the timed run. */
    uint32_t after_kernels;
    char after_name[96];
    /* Work whose launch began after run() (and the call after it) had
       returned. */
    uint32_t late[KBC_AUDIT_CLASSES];
    double late_s;            /* how long after run() returned the first
                                 of them was launched                      */
    char late_name[96];
    /* The largest L2 access-policy window with persisting hits that a
       kernel of run() ran with (a launch attribute or the stream's). */
    uint64_t window_bytes;
    /* Records CUPTI lost (a full buffer): the audit then saw less than all. */
    uint64_t dropped;
} kbc_audit;

/* Whether CUPTI can be used: loads it the first time.  0, or -1 with why
   set to one clause ("KBENCH_CUPTI=off", "libcupti.so.13 was not found
   (...)"); the answer does not change within a process. */
int kbc_audit_available(char *why, size_t n);

/* The call to trace; returns a KB_* status. */
typedef int (*kbc_audit_call)(void *ctx);

/* Traces one call fn(ctx) that enqueues on `stream`, and then after(ctx)
   when it is not NULL (a download() that the timed runs do not make):
   CUPTI's activity records on; the calls; the device synchronised, grace_s
   seconds of
   waiting (a host thread that launches late still gets to), synchronised
   again; the records flushed; CUPTI's records off again, so that nothing
   of it stays on the timed runs.  `waits`: the variant declares that its
   run() waits for its work (KB_VARIANT_SYNCS; its samples are never held),
   so work on another stream that ended before run() returned lay between
   the events and counts as its own.
   Returns 0 with *out filled and fn's status in *status (after's when fn
   succeeded and after failed); -1 with why when
   CUPTI failed (the audit is then partial); -2 with why when the CUDA
   runtime reported an error after the call (the variant's). */
int kbc_audit_trace(void *stream, int waits, double grace_s, kbc_audit_call fn,
                    kbc_audit_call after, void *ctx, int *status, kbc_audit *out, char *why,
                    size_t n);

#endif
