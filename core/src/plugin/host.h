/*
 * host.h -- one implementation of struct kb_host's services for the core:
 * log() and fail() and their interplay with the progress line.  The state
 * of one caller (plugin name, the last fail() sentence, whether a progress
 * line is on the terminal) lives in a kbc_hostctx that kb_host.host_private
 * points at, so that several hosts may exist at once (one per device or
 * thread).
 */
#ifndef KBENCH_HOST_H
#define KBENCH_HOST_H

#include <stdint.h>

#include "kbench/plugin.h"

/* The variants plan() refused at one point (kb_host.refuse, minor 3), each
   with its sentence.  The sentences are packed into one table, so that the
   whole is a plain value (copied, sent to a worker, made without
   allocating).  A sentence that no longer fits is replaced by words that
   say so. */
#define KBC_REFUSAL_TEXT 4096
#define KBC_REFUSAL_NONE 0xffffu /* at[v]: no sentence                 */
#define KBC_REFUSAL_FULL 0xfffeu /* at[v]: its sentence did not fit    */
typedef struct kbc_refusals {
    uint64_t mask;                  /* bit v: plan() refused variant v     */
    uint32_t beyond;                /* a variant past KB_MAX_VARIANTS that
                                       plan() named, plus 1; 0: none       */
    uint16_t at[KB_MAX_VARIANTS];   /* where v's sentence starts in text   */
    uint16_t used;                  /* bytes of text in use                */
    char text[KBC_REFUSAL_TEXT];
} kbc_refusals;

/* Empties r. */
void kbc_refusals_clear(kbc_refusals *r);
/* Refuses variant v with sentence (kept as the first one given for v);
   a v past KB_MAX_VARIANTS is remembered in r->beyond. */
void kbc_refusals_add(kbc_refusals *r, uint32_t v, const char *sentence);
/* Variant v's sentence, or NULL when v is not refused. */
const char *kbc_refusals_sentence(const kbc_refusals *r, uint32_t v);

typedef struct kbc_hostctx {
    const char *plugin;  /* name for log lines                       */
    char fail_msg[600];  /* the last sentence given to fail()        */
    int said;            /* fail() was called since the last clear   */
    int progress_shown;  /* a progress line is on the terminal now   */
    uint64_t done, total;/* points so far and in all, for progress   */
    /* Called (when set) as each variant starts, before the progress line:
       a worker tells its supervisor which variant is running, so that a
       crash is blamed on the right one. */
    void (*on_variant)(void *arg, const char *experiment, const char *variant);
    /* Called (when set) with each line the plugin logs that is shown: a
       worker passes them to its supervisor in order with the variants,
       for the reason of a crashed row. */
    void (*on_log)(void *arg, const char *line);
    void *on_variant_arg; /* the argument of both hooks */
    /* Where refuse() writes during plan() (kbc_call_plan); NULL at any
       other time, when refuse() does nothing. */
    kbc_refusals *refusals;
} kbc_hostctx;

/* Fills h with the core's log(), fail() and refuse(), host_private = hc, and the
   given seed and thread count; no GPU (stream NULL, device -1). */
void kbc_host_init(kb_host *h, kbc_hostctx *hc, const char *plugin, uint64_t seed,
                   int cpu_threads);

/* The core's fail(): records one sentence in the kbc_hostctx. */
int kbc_host_fail(kb_host *h, int code, const char *fmt, ...) KB_PRINTF(3, 4);

/* Forgets the last fail() sentence (before each plugin call). */
void kbc_host_clear(kbc_hostctx *hc);

/* "[3/10 points] exp: variant ..." on a terminal, unless quiet; and the
   on_variant hook. */
void kbc_host_progress(kbc_hostctx *hc, const char *experiment, const char *variant);
/* Wipes the progress line so that the next stderr text starts clean. */
void kbc_host_progress_clear(kbc_hostctx *hc);

/* Quiet mode (kbench run -q): no progress line and only the plugins'
   warnings on stderr.  Off by default.  The one process-wide setting. */
void kbc_host_set_quiet(int quiet);
int kbc_host_is_quiet(void);

/* "KB_EINVAL" ... for a status code. */
const char *kbc_status_name(int code);

#endif
