/*
 * check.c -- see check.h.
 *
 * The points.  Every parameter gets a few candidate values derived from its
 * declaration, each put through the same parser as an INI value (so that a
 * candidate outside [min, max] is dropped, and one that is not a multiple
 * of the parameter's multiple_of moves to the nearest one inside):
 *   SIZE   the default, min, 1, 31, 1000, 2^16+1, max
 *   INT    the default, min, min+1, max-1, max (unbounded: default +-1, 0, 1)
 *   FLOAT  the default, min, max and their middle (unbounded: 0, 1, -1)
 *   ENUM   every choice;  BOOL  false and true
 * The points are: the defaults; the defaults with one parameter set to each
 * of its candidates; and the defaults with one SIZE parameter and one other
 * parameter set to a candidate each (so that small and awkward sizes meet
 * every type, block size and flag).  Duplicates are dropped.
 *
 * plan() runs twice on every point.  The lifecycle runs on the points plan()
 * accepts (without the variants it refuses there alone) whose host_bytes and device_bytes are at most CK_SMALL_BYTES (or,
 * when there is none, on the smallest one if it needs at most
 * CK_LARGEST_BYTES of each), at most CK_MAX_LIFE of them.
 *
 * The plugin's calls run in a child process with a watchdog (check_child.h):
 * kbench's own process never calls the plugin nor starts the CUDA runtime.
 * A child that crashes, exits or hangs fails the check its call was being
 * judged for, with the signal, the status or the time; the check then goes
 * on in a fresh child: after a crash in plan() at the next point (at most
 * CK_MAX_CRASHES times), after a variant's crash at the next lifecycle
 * point without that variant, and after a crash in setup() or teardown()
 * not at all (the lifecycle's checks left are skipped with the reason).
 */
#define _GNU_SOURCE
#include "check.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check_child.h"
#include "gpu.h"
#include "host.h"
#include "instance.h"
#include "point_plan.h"
#include "supervisor.h"
#include "sweep.h"
#include "util.h"

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define CK_HAVE_HEAP_COUNTER 1
/* Bytes of the heap in use, over all arenas, mmap'ed blocks included. */
static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}
#else
#define CK_HAVE_HEAP_COUNTER 0
static size_t heap_in_use(void)
{
    return 0;
}
#endif

/* Whether heap_in_use() sees an allocation at all: under a replaced
   allocator (AddressSanitizer's, for one) mallinfo2() counts nothing, and
   a check built on it could not fail. */
static int heap_counter_works(void)
{
    if (!CK_HAVE_HEAP_COUNTER)
        return 0;
    size_t before = heap_in_use();
    void *volatile probe = malloc(4096);
    size_t after = heap_in_use();
    free(probe);
    return probe && after >= before + 4096;
}

#define CK_MAX_POINTS 4096
#define CK_MAX_LIFE 96
#define CK_SMALL_BYTES (32ULL << 20)
#define CK_LARGEST_BYTES (1ULL << 30) /* the fallback point's limit */
/* The CUDA driver hands out device memory in pages of 2 MiB: an allocation
   that outlives its caller and needs a page of its own lowers the free
   memory by at least this much, while the driver's own bookkeeping moves it
   by less.  A drop of one page or more is a leak; smaller drops are not
   counted (so a small leak that fits a page already held is not seen). */
#define CK_DEVICE_SLACK (2ULL << 20)
/* Free device memory is the whole device's, so another process can lower
   it: a drop is counted only when each of this many repetitions shows it. */
#define CK_REPEATS 3
/* plan() crashes after which the points left are not planned: each crash
   costs a fresh process (and on a GPU a fresh CUDA context). */
#define CK_MAX_CRASHES 3
/* planned[i] of a point plan() never answered for (it crashed there, or
   the check stopped planning before it). */
#define CK_NOT_PLANNED (-1)

static uint64_t drop_of(uint64_t before, uint64_t after)
{
    return before > after ? before - after : 0;
}

/* The first failure of one check, and how often it was judged. */
typedef struct ck_result {
    unsigned judged;  /* points at which the check was made */
    unsigned failed;  /* points at which it failed          */
    char first[640];  /* the first failure, one sentence    */
} ck_result;

enum { R_CAN_FAIL, R_CORRECT, R_POISONS, R_CONSISTENT, R_N };
static const char *const r_names[R_N] = {"verify-can-fail", "correct-run", "prepare-poisons",
                                         "verify-consistent"};

typedef struct ck_variant {
    ck_result r[R_N];
    unsigned unsupported;
    char unsup_why[1024];
    char stopped[900];     /* why its checks stopped (it crashed or hung) */
} ck_variant;

/* What the plan step found: the first failure of each check (one
   sentence each, "" when none), the refused points, and how far it got. */
typedef struct plan_found {
    char pure[800], alloc[800], errors[900];
    char first_refused[900];
    char def_msg[600];     /* why plan() does not run the defaults   */
    unsigned refused;
    char first_vrefused[900]; /* the first variant refused alone       */
    unsigned vrefused;        /* (point, variant) refusals of the selected */
    uint64_t drop;         /* free device memory lost over the calls */
    int drop_measured;     /* drop is known (no crash stopped it)    */
    size_t next;           /* the first point not yet planned        */
    size_t planned;        /* points plan() answered for             */
    char crash[900];       /* the first crash or hang of plan()      */
    unsigned crashes;
    size_t unplanned;      /* points left out after CK_MAX_CRASHES   */
} plan_found;

/* What the lifecycle found, and how far it got. */
typedef struct life_found {
    size_t next;           /* the next lifecycle point to check      */
    uint64_t mask;         /* the variants still checked             */
    char st_fail[2048], leak_fail[2048];
    unsigned st_judged, st_unsup, leak_judged;
    char stopped[900];     /* why the lifecycle stopped early, or "" */
} life_found;

/* Everything the check's child tells kbench (check_child.h): where it is,
   for the check a crash or a hang fails, and what it found. */
typedef struct ck_shared {
    ck_watch watch;
    const char *call;      /* the plugin call running ("plan", "run"...),
                              NULL before the first                  */
    size_t point;          /* the point it runs at (an index of pts) */
    int variant;           /* the variant whose call it is, or -1    */
    int item;              /* the R_* check the call is judged for   */
    int in_cycle;          /* the call is device-leak's cycle's      */
    int gpu;               /* the child found a GPU                  */
    char no_gpu[400];      /* why not                                */
    plan_found plan;
    life_found life;
} ck_shared;

typedef struct ck {
    FILE *out, *err;
    const kbc_plugin *pl;
    const kb_plugin *d;
    uint32_t np;           /* parameters (at least 1 for the arrays) */
    uint64_t selected;     /* variants to check                      */
    unsigned n_ok, n_fail, n_skip;
    kb_host host;
    kbc_hostctx hc;
    /* The core's log() (host.c), which check_log passes lines on to. */
    void (*core_log)(kb_host *h, kb_log_level level, const char *fmt, ...) KB_PRINTF(3, 4);
    int provoking;         /* a call whose failure check provokes     */
    kbc_machine m;
    int gpu;               /* a device and a stream are in use        */
    char no_gpu[400];
    void *stream;
    kb_value *pts;         /* n_pts rows of np values                 */
    size_t n_pts, cap_pts;
    /* Shared with the check's child (check_child.h): */
    ck_shared *sh;
    int *planned;          /* per point: the first answer's status
                              (kbc_plan_status, or CK_NOT_PLANNED)    */
    uint64_t *refused;     /* per point: the variants it refused alone
                              (kb_host.refuse), when it runs          */
    kb_work *work;         /* per point: plan()'s first work          */
    ck_variant *cv;        /* per variant: the lifecycle's checks     */
    double watchdog_s;     /* one plugin call's time at most          */
} ck;

/* ---- output ---------------------------------------------------------------- */

static void line(ck *c, const char *tag, const char *check, const char *fmt, va_list ap)
{
    char msg[1200];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '.' || msg[n - 1] == ' '))
        msg[--n] = '\0';
    fprintf(c->out, "%s %s%s%s%s\n", tag, check, tag[0] == 'o' ? (n ? " (" : "") : ": ", msg,
            tag[0] == 'o' ? (n ? ")" : "") : ".");
}

static void ck_ok(ck *c, const char *check, const char *fmt, ...) KB_PRINTF(3, 4);
static void ck_fail(ck *c, const char *check, const char *fmt, ...) KB_PRINTF(3, 4);
static void ck_skip(ck *c, const char *check, const char *fmt, ...) KB_PRINTF(3, 4);

static void ck_ok(ck *c, const char *check, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    line(c, "ok  ", check, fmt, ap);
    va_end(ap);
    c->n_ok++;
}

static void ck_fail(ck *c, const char *check, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    line(c, "FAIL", check, fmt, ap);
    va_end(ap);
    c->n_fail++;
}

static void ck_skip(ck *c, const char *check, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    line(c, "skip", check, fmt, ap);
    va_end(ap);
    c->n_skip++;
}

/* The plugin's log(): its lines go on as a run shows them, except during
   the calls that check makes fail on purpose (verify of an output that was
   never run), whose lines would tell of failures that are the point of the
   check.  KBENCH_DEBUG shows those too. */
static void check_log(kb_host *h, kb_log_level level, const char *fmt, ...) KB_PRINTF(3, 4);

static void check_log(kb_host *h, kb_log_level level, const char *fmt, ...)
{
    ck *c = (ck *)((char *)h->host_private - offsetof(ck, hc));
    if (c->provoking && !getenv("KBENCH_DEBUG"))
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    c->core_log(h, level, "%s", line);
}

/* ---- the check's child ------------------------------------------------------ */

/* Tells kbench which plugin call the child makes next, for which variant
   (-1: none) and which check (R_*, -1: none), and moves the watchdog's
   beat: a crash or a hang is blamed on that call. */
static void step(ck *c, const char *call, int v, int item)
{
    ck_shared *sh = c->sh;
    sh->call = call;
    sh->variant = v;
    sh->item = item;
    sh->watch.beat++;
}

/* The GPU, as a worker finds it, in the check's child (kbench's own
   process never starts the CUDA runtime: a context does not survive
   fork()); what it found is told to kbench. */
static void gpu_open(ck *c)
{
    char gw[300];
    c->gpu = 0;
    c->stream = NULL;
    kbc_gpu_probe(&c->m);
    c->host.cpu_threads = c->m.cpu_threads > 0 ? c->m.cpu_threads : 1;
    if (!c->m.has_gpu) {
        const char *rs = c->m.no_gpu_reason[0] ? c->m.no_gpu_reason : "no CUDA device";
        snprintf(c->no_gpu, sizeof c->no_gpu, "%s", rs);
    } else if (kbc_gpu_stream_create(&c->stream, gw, sizeof gw) != 0) {
        snprintf(c->no_gpu, sizeof c->no_gpu, "no CUDA device (%s)", gw);
    } else {
        c->gpu = 1;
        c->host.stream = c->stream;
        c->host.device = c->m.device;
        c->host.sm_count = c->m.sm_count;
        c->host.l2_bytes = c->m.l2_bytes;
    }
    c->sh->gpu = c->gpu;
    snprintf(c->sh->no_gpu, sizeof c->sh->no_gpu, "%s", c->no_gpu);
}

/* How a child ended, for the step that ran it: -1 when a plugin call
   crashed, exited or hung (the step blames it), 0 when its work was done,
   else an exit code after one sentence on c->err: kbench was interrupted,
   the child could not be started, or it crashed before any plugin call. */
static int child_fault(ck *c, const ck_outcome *o)
{
    switch (o->end) {
    case CK_END_DONE:
        return 0;
    case CK_END_INTERRUPTED:
        fprintf(c->err, "kbench: check interrupted; the checks left were not made.\n");
        return KBC_EXIT_INTERRUPTED;
    case CK_END_FAILED:
        fprintf(c->err, "kbench: %s.\n", o->words);
        return KBC_EXIT_SYSTEM;
    default:
        if (c->sh->call)
            return -1;
        fprintf(c->err, "kbench: the check's process %s before it called the plugin (as it "
                        "opened the GPU).\n", o->words);
        return KBC_EXIT_SYSTEM;
    }
}

/* "the plugin's sentence", or a note that it gave none. */
/* A failed call in check's words: the call, then the error's sentence
   (instance.h words a plugin that gave none). */
static const char *said(const kbc_error *err, char *buf, size_t n)
{
    snprintf(buf, n, "%s() returned %s: %s", err->origin, kbc_status_name(err->code),
             err->sentence);
    return buf;
}

/* ---- points ---------------------------------------------------------------- */

/* An integer candidate that is not a multiple of p's multiple_of moves to
   the multiple below it, or else the one above, where that one is allowed:
   "1000" with multiple_of 32 checks 992. */
static int cand_snap(const kb_param *p, const char *text, kb_value *v)
{
    char why[256];
    uint64_t m = p->multiple_of;
    if (m <= 1 || kbc_value_parse_plain(p, text, v, why, sizeof why) != 0)
        return -1;
    kb_value down = *v, up = *v;
    if (p->type == KB_PARAM_SIZE) {
        down.u = v->u - v->u % m;
        up.u = down.u <= UINT64_MAX - m ? down.u + m : down.u;
    } else if (m <= (uint64_t)INT64_MAX) {
        int64_t r = v->i % (int64_t)m;
        down.i = v->i - r - (r < 0 ? (int64_t)m : 0);
        up.i = down.i <= INT64_MAX - (int64_t)m ? down.i + (int64_t)m : down.i;
    } else {
        return -1;
    }
    if (kbc_value_check_range(p, down, why, sizeof why) == 0)
        *v = down;
    else if (kbc_value_check_range(p, up, why, sizeof why) == 0)
        *v = up;
    else
        return -1;
    return 0;
}

/* Appends the candidate written as text when it parses and is new. */
static void cand_add(const kb_param *p, const char *text, kb_value *vals, size_t *n, size_t cap)
{
    kb_value v;
    char why[256];
    if (*n >= cap ||
        (kbc_value_parse(p, text, &v, why, sizeof why) != 0 && cand_snap(p, text, &v) != 0))
        return;
    for (size_t i = 0; i < *n; i++)
        if (memcmp(&vals[i], &v, sizeof v) == 0)
            return;
    vals[(*n)++] = v;
}

#define CK_MAX_CANDS 16

/* Candidate values of parameter p (see the file comment); the default is
   first. */
static size_t candidates(const kb_param *p, kb_value *vals)
{
    size_t n = 0;
    char t[64];
    int bounded = !(p->min > p->max);
    cand_add(p, p->def, vals, &n, CK_MAX_CANDS);
    switch (p->type) {
    case KB_PARAM_SIZE: {
        if (bounded && p->min >= 0 && p->min < 18446744073709551616.0) {
            snprintf(t, sizeof t, "%.0f", p->min);
            cand_add(p, t, vals, &n, CK_MAX_CANDS);
        }
        static const char *const awkward[] = {"1", "31", "1000", "65537"};
        for (size_t i = 0; i < 4; i++)
            cand_add(p, awkward[i], vals, &n, CK_MAX_CANDS);
        if (bounded && p->max >= 0 && p->max < 18446744073709551616.0) {
            snprintf(t, sizeof t, "%.0f", p->max);
            cand_add(p, t, vals, &n, CK_MAX_CANDS);
        }
        if (!bounded)
            cand_add(p, "0", vals, &n, CK_MAX_CANDS);
        break;
    }
    case KB_PARAM_INT:
        if (bounded) {
            double e[4] = {p->min, p->min + 1, p->max - 1, p->max};
            for (int i = 0; i < 4; i++)
                if (fabs(e[i]) < 9.2e18) {
                    snprintf(t, sizeof t, "%.0f", e[i]);
                    cand_add(p, t, vals, &n, CK_MAX_CANDS);
                }
        } else {
            kb_value d;
            char why[256];
            if (kbc_value_parse(p, p->def, &d, why, sizeof why) == 0 && d.i > INT64_MIN &&
                d.i < INT64_MAX) {
                snprintf(t, sizeof t, "%lld", (long long)(d.i - 1));
                cand_add(p, t, vals, &n, CK_MAX_CANDS);
                snprintf(t, sizeof t, "%lld", (long long)(d.i + 1));
                cand_add(p, t, vals, &n, CK_MAX_CANDS);
            }
            cand_add(p, "0", vals, &n, CK_MAX_CANDS);
            cand_add(p, "1", vals, &n, CK_MAX_CANDS);
        }
        break;
    case KB_PARAM_FLOAT:
        if (bounded) {
            double e[3] = {p->min, p->max, p->min / 2 + p->max / 2};
            for (int i = 0; i < 3; i++) {
                snprintf(t, sizeof t, "%.17g", e[i]);
                cand_add(p, t, vals, &n, CK_MAX_CANDS);
            }
        } else {
            cand_add(p, "0", vals, &n, CK_MAX_CANDS);
            cand_add(p, "1", vals, &n, CK_MAX_CANDS);
            cand_add(p, "-1", vals, &n, CK_MAX_CANDS);
        }
        break;
    case KB_PARAM_ENUM:
        for (uint32_t k = 0; k < p->n_choices && n < CK_MAX_CANDS; k++)
            cand_add(p, p->choices[k], vals, &n, CK_MAX_CANDS);
        break;
    case KB_PARAM_BOOL:
        cand_add(p, "false", vals, &n, CK_MAX_CANDS);
        cand_add(p, "true", vals, &n, CK_MAX_CANDS);
        break;
    }
    return n;
}

static void point_add(ck *c, const kb_value *vals)
{
    size_t row = c->np * sizeof *vals;
    if (c->n_pts >= CK_MAX_POINTS)
        return;
    for (size_t i = 0; i < c->n_pts; i++)
        if (memcmp(&c->pts[i * c->np], vals, row) == 0)
            return;
    if (c->n_pts == c->cap_pts) {
        c->cap_pts = c->cap_pts ? 2 * c->cap_pts : 64;
        c->pts = kbc_xrealloc(c->pts, c->cap_pts * row);
    }
    memcpy(&c->pts[c->n_pts * c->np], vals, row);
    c->n_pts++;
}

/* Makes the points; returns -1 when a default does not parse (reported). */
static int make_points(ck *c)
{
    const kb_plugin *d = c->d;
    kb_value *def = kbc_xcalloc(c->np, sizeof *def);
    kb_value *cur = kbc_xcalloc(c->np, sizeof *cur);
    kb_value(*cand)[CK_MAX_CANDS] = kbc_xcalloc(c->np, sizeof *cand);
    size_t *nc = kbc_xcalloc(c->np, sizeof *nc);
    int rc = 0;
    for (uint32_t p = 0; p < d->n_params; p++) {
        char why[256];
        if (kbc_value_parse(&d->params[p], d->params[p].def, &def[p], why, sizeof why) != 0) {
            ck_fail(c, "defaults", "the default '%s' of parameter '%s' does not parse: %s",
                    d->params[p].def, d->params[p].name, why);
            rc = -1;
            goto out;
        }
        nc[p] = candidates(&d->params[p], cand[p]);
    }
    point_add(c, def);
    for (uint32_t p = 0; p < d->n_params; p++)
        for (size_t i = 0; i < nc[p]; i++) {
            memcpy(cur, def, c->np * sizeof *cur);
            cur[p] = cand[p][i];
            point_add(c, cur);
        }
    for (uint32_t s = 0; s < d->n_params; s++) {
        if (d->params[s].type != KB_PARAM_SIZE)
            continue;
        for (size_t i = 0; i < nc[s]; i++)
            for (uint32_t q = 0; q < d->n_params; q++) {
                if (q == s)
                    continue;
                for (size_t j = 0; j < nc[q]; j++) {
                    memcpy(cur, def, c->np * sizeof *cur);
                    cur[s] = cand[s][i];
                    cur[q] = cand[q][j];
                    point_add(c, cur);
                }
            }
    }
out:
    free(nc);
    free(cand);
    free(cur);
    free(def);
    return rc;
}

/* "at the defaults" or "at n=31, dtype=i32": the parameters that differ
   from point 0, the defaults. */
static const char *where(const ck *c, size_t pt, char *buf, size_t n)
{
    const kb_value *v = &c->pts[pt * c->np], *def = c->pts;
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t p = 0; p < c->d->n_params && len + 1 < n; p++) {
        if (memcmp(&v[p], &def[p], sizeof v[p]) == 0)
            continue;
        char val[128];
        kbc_value_format(&c->d->params[p], v[p], val, sizeof val);
        int w = snprintf(buf + len, n - len, "%s%s=%s", len ? ", " : "at ", c->d->params[p].name,
                         val);
        if (w < 0)
            break;
        len += (size_t)w;
        if (len >= n)
            len = n - 1;
    }
    if (!buf[0])
        snprintf(buf, n, "at the defaults");
    return buf;
}

/* ---- plan ------------------------------------------------------------------ */

/* plan-errors on one point's answer (kbc_plan_refused, the rule every
   command uses): a refusal is fine and counted; any other failure is a
   plugin error, as it is an `error` row in a run. */
static void judge_plan_error(ck *c, size_t i, const kbc_point_plan *pp, plan_found *f)
{
    char at[400];
    for (uint32_t v = 0; pp->status == KBC_PLAN_RUNS && v < c->d->n_variants; v++) {
        const char *why;
        if (!(c->selected & KB_VARIANT_BIT(v)) ||
            kbc_plan_variant(pp, v, &why) != KBC_PLAN_REFUSED)
            continue;
        if (!f->vrefused)
            snprintf(f->first_vrefused, sizeof f->first_vrefused, "%s to %s: %s",
                     where(c, i, at, sizeof at), c->d->variants[v].name, why);
        f->vrefused++;
    }
    if (pp->status == KBC_PLAN_REFUSED) {
        if (!f->refused && i > 0)
            snprintf(f->first_refused, sizeof f->first_refused, "%s: %s",
                     where(c, i, at, sizeof at), pp->sentence);
        f->refused++;
    } else if (pp->status == KBC_PLAN_FAILED && !f->errors[0]) {
        if (pp->code == KB_EINVAL || pp->code == KB_EUNSUPPORTED)
            snprintf(f->errors, sizeof f->errors,
                     "%s, plan() returned %s without a sentence through fail(), which makes "
                     "it a plugin error (an `error` row in a run), not a refusal",
                     where(c, i, at, sizeof at), kbc_status_name(pp->code));
        else
            snprintf(f->errors, sizeof f->errors,
                     "%s, plan() returned %d (%s), a plugin error (an `error` row in a run); a "
                     "point it cannot take is refused with KB_EINVAL or KB_EUNSUPPORTED and a "
                     "sentence: %s",
                     where(c, i, at, sizeof at), pp->code, kbc_status_name(pp->code),
                     pp->sentence);
    }
}

/* plan-pure on two answers for point i. */
static void judge_purity(ck *c, size_t i, const kbc_point_plan *a, const kbc_point_plan *b,
                         plan_found *f)
{
    char at[400];
    const kb_work *w1 = &a->work, *w2 = &b->work;
    if (a->code != b->code)
        snprintf(f->pure, sizeof f->pure,
                 "%s, plan() returned %d the first time and %d the second",
                 where(c, i, at, sizeof at), a->code, b->code);
    else if (a->refusals.mask != b->refusals.mask)
        snprintf(f->pure, sizeof f->pure,
                 "%s, two calls of plan() refused different variants (mask %#llx and %#llx)",
                 where(c, i, at, sizeof at), (unsigned long long)a->refusals.mask,
                 (unsigned long long)b->refusals.mask);
    else if (a->code == KB_OK && memcmp(w1, w2, sizeof *w1) != 0)
        snprintf(f->pure, sizeof f->pure,
                 "%s, two calls of plan() gave different work (bytes read %llu and "
                 "%llu, written %llu and %llu, flops %g and %g, items %llu and %llu, "
                 "host bytes %llu and %llu, device bytes %llu and %llu)",
                 where(c, i, at, sizeof at), (unsigned long long)w1->bytes_read,
                 (unsigned long long)w2->bytes_read, (unsigned long long)w1->bytes_written,
                 (unsigned long long)w2->bytes_written, w1->flops, w2->flops,
                 (unsigned long long)w1->items, (unsigned long long)w2->items,
                 (unsigned long long)w1->host_bytes, (unsigned long long)w2->host_bytes,
                 (unsigned long long)w1->device_bytes, (unsigned long long)w2->device_bytes);
}

/* plan() twice on every point from f->next on, through the plan layer's
   one door (kbc_point_plan_make, as every command plans a point), keeping
   the first answer of each; then, on a GPU, the passes that measure free
   device memory.  In the check's child. */
static void plan_points(ck *c, plan_found *f)
{
    const kbc_instance in = kbc_instance_of(c->d, &c->host);
    char at[400];
    /* Made before the heap readings: nothing between two of them may
       allocate, only the plugin's call (kbc_point_plan_make allocates
       nothing, nor does step). */
    kbc_point_plan *p1 = kbc_xmalloc(sizeof *p1), *p2 = kbc_xmalloc(sizeof *p2);
    const size_t from = f->next;
    uint64_t free0 = c->gpu ? kbc_gpu_free_memory() : 0;
    for (size_t i = from; i < c->n_pts; i++) {
        const kb_value *v = &c->pts[i * c->np];
        c->sh->point = i;
        step(c, "plan()", -1, -1);
        size_t h0 = heap_in_use();
        kbc_point_plan_make(in, v, p1);
        size_t h1 = heap_in_use();
        step(c, "plan()", -1, -1);
        size_t h2 = heap_in_use();
        kbc_point_plan_make(in, v, p2);
        size_t h3 = heap_in_use();
        c->planned[i] = p1->status;
        c->refused[i] = p1->status == KBC_PLAN_RUNS ? p1->refusals.mask : 0;
        c->work[i] = p1->work;
        if (i == 0 && p1->status != KBC_PLAN_RUNS)
            snprintf(f->def_msg, sizeof f->def_msg, "%s", p1->sentence);
        if (!f->pure[0])
            judge_purity(c, i, p1, p2, f);
        if (!f->alloc[0] && (h1 > h0 || h3 > h2))
            snprintf(f->alloc, sizeof f->alloc,
                     "%s, %llu bytes of heap allocated by plan() were still allocated after it "
                     "returned",
                     where(c, i, at, sizeof at),
                     (unsigned long long)(h1 > h0 ? h1 - h0 : h3 - h2));
        judge_plan_error(c, i, p1, f);
        f->planned++;
        f->next = i + 1;
    }
    /* Free memory is the whole device's: another process can move it.  A
       drop counts only when every one of CK_REPEATS passes shows it: the
       pass above when it began at the first point, then passes over every
       point planned (not those where plan() crashed). */
    uint64_t drop = UINT64_MAX;
    int passes = 0;
    if (c->gpu && from == 0) {
        drop = drop_of(free0, kbc_gpu_free_memory());
        passes = 1;
    }
    for (; c->gpu && passes < CK_REPEATS && drop >= CK_DEVICE_SLACK; passes++) {
        uint64_t f0 = kbc_gpu_free_memory();
        for (size_t i = 0; i < c->n_pts; i++) {
            if (c->planned[i] == CK_NOT_PLANNED)
                continue;
            c->sh->point = i;
            step(c, "plan()", -1, -1);
            kbc_point_plan_make(in, &c->pts[i * c->np], p1);
        }
        uint64_t d2 = drop_of(f0, kbc_gpu_free_memory());
        drop = d2 < drop ? d2 : drop;
    }
    f->drop = c->gpu ? drop : 0;
    f->drop_measured = 1;
    free(p1);
    free(p2);
}

/* The check's child for the plan step. */
static void plan_child(void *arg)
{
    ck *c = arg;
    gpu_open(c);
    plan_points(c, &c->sh->plan);
}

/* A plan() that crashed or hung at the point the child was at: that point
   is not planned, and the next child goes on after it. */
static void plan_blame(ck *c, const ck_outcome *o)
{
    plan_found *f = &c->sh->plan;
    size_t i = c->sh->point;
    char at[400];
    c->planned[i] = CK_NOT_PLANNED;
    if (f->next <= i)
        f->next = i + 1;
    if (!f->crashes++)
        snprintf(f->crash, sizeof f->crash, "%s, %s %s", where(c, i, at, sizeof at),
                 c->sh->call, o->words);
    if (i == 0)
        snprintf(f->def_msg, sizeof f->def_msg, "%s %s at the plugin's own defaults",
                 c->sh->call, o->words);
    if (f->crashes >= CK_MAX_CRASHES && f->next < c->n_pts)
        f->unplanned = c->n_pts - f->next;
}

/* Runs the plan step in children until it is done (the GPU they found
   kept for the lifecycle).  Returns 0, or an exit code after saying why
   on c->err. */
static int plan_step(ck *c)
{
    plan_found *f = &c->sh->plan;
    for (size_t i = 0; i < c->n_pts; i++)
        c->planned[i] = CK_NOT_PLANNED;
    for (;;) {
        ck_outcome o;
        c->sh->call = NULL;
        ck_child_run(plan_child, c, &c->sh->watch, c->watchdog_s, &o);
        int code = child_fault(c, &o);
        if (code > 0)
            return code;
        if (code == 0)
            break;
        /* The next child goes on after the point (or, when the crash came
           in the device passes after the points, makes only those). */
        plan_blame(c, &o);
        if (f->crashes >= CK_MAX_CRASHES)
            break;
    }
    c->gpu = c->sh->gpu;
    snprintf(c->no_gpu, sizeof c->no_gpu, "%s", c->sh->no_gpu);
    return 0;
}

/* plan-errors' failure: plan()'s first crash, else its first error. */
static void plan_errors_fail(ck *c, const plan_found *f)
{
    if (!f->crash[0]) {
        ck_fail(c, "plan-errors", "%s", f->errors);
        return;
    }
    char more[300] = "";
    if (f->unplanned)
        snprintf(more, sizeof more,
                 "; after %u crashes the last %zu points were not planned, nor checked",
                 f->crashes, f->unplanned);
    else if (f->crashes > 1)
        snprintf(more, sizeof more, "; plan() crashed or hung at %u points", f->crashes);
    ck_fail(c, "plan-errors", "%s%s", f->crash, more);
}

/* Prints the plan step's checks.  Returns 0, or an exit code. */
static int check_plan(ck *c)
{
    int code = plan_step(c);
    if (code)
        return code;
    const plan_found f = c->sh->plan;

    if (c->planned[0] == CK_NOT_PLANNED)
        ck_fail(c, "defaults", "%s", f.def_msg);
    else if (c->planned[0] != KBC_PLAN_RUNS)
        ck_fail(c, "defaults", "plan() refuses the plugin's own defaults: %s", f.def_msg);
    else
        ck_ok(c, "defaults", "every default parses and plan() accepts them");

    if (f.pure[0])
        ck_fail(c, "plan-pure", "%s", f.pure);
    else
        ck_ok(c, "plan-pure", "two calls agree at each of %zu points", f.planned);

    if (!CK_HAVE_HEAP_COUNTER)
        ck_skip(c, "plan-alloc", "this C library has no mallinfo2() to count the heap with");
    else if (!heap_counter_works())
        ck_skip(c, "plan-alloc",
                "mallinfo2() does not see this process's allocations (a replaced allocator, "
                "such as AddressSanitizer's), so a leak could not be told");
    else if (f.alloc[0])
        ck_fail(c, "plan-alloc", "%s", f.alloc);
    else
        ck_ok(c, "plan-alloc", "the heap in use is unchanged by each call");

    if (!c->gpu)
        ck_skip(c, "plan-device", "%s", c->no_gpu);
    else if (!f.drop_measured)
        ck_skip(c, "plan-device", "plan() crashed or hung %u times, so free device memory "
                "was not measured over whole passes", f.crashes);
    else if (f.drop >= CK_DEVICE_SLACK) {
        char b[32];
        ck_fail(c, "plan-device",
                "free device memory fell by at least %s over each of %d passes of plan() "
                "calls, so plan() keeps device memory",
                kbc_human_bytes(f.drop, b, sizeof b), CK_REPEATS);
    } else
        ck_ok(c, "plan-device", "free device memory unchanged within %llu MiB",
              (unsigned long long)(CK_DEVICE_SLACK >> 20));

    /* A variant refused alone at a point is an `invalid` row in a run, as
       a refused point is: counted, and the first named. */
    char alone[1100] = "";
    if (f.vrefused)
        snprintf(alone, sizeof alone,
                 "; %u variant%s refused alone at %s point through refuse() (each is invalid "
                 "in a run; the first %s)",
                 f.vrefused, f.vrefused == 1 ? "" : "s", f.vrefused == 1 ? "its" : "their",
                 f.first_vrefused);
    if (f.crash[0] || f.errors[0])
        plan_errors_fail(c, &f);
    else if (f.first_refused[0])
        /* A refused point is an `invalid` row in a run, not a failure:
           the first one is named so that the author sees the rule. */
        ck_ok(c, "plan-errors",
              "%u of %zu points refused with KB_EINVAL or KB_EUNSUPPORTED and a sentence "
              "(each is invalid in a run; the first %s)%s",
              f.refused, f.planned, f.first_refused, alone);
    else
        ck_ok(c, "plan-errors",
              "%u of %zu points refused with KB_EINVAL or KB_EUNSUPPORTED and a sentence%s",
              f.refused, f.planned, alone);
    return 0;
}

/* ---- the lifecycle ----------------------------------------------------------- */

static int is_cuda(const ck *c, uint32_t v)
{
    return c->d->variants[v].backend == KB_BACKEND_CUDA;
}

/* After a CUDA variant's calls: wait for the stream and collect a launch
   error.  Returns 0, or -1 with why. */
static int gpu_settle(ck *c, uint32_t v, char *why, size_t n)
{
    if (!c->gpu || !is_cuda(c, v))
        return 0;
    step(c, "the stream's synchronisation after its calls", (int)v, c->sh->item);
    if (kbc_gpu_sync(c->stream, why, n) != 0 || kbc_gpu_last_error(why, n) != 0)
        return -1;
    return 0;
}

/* One verify of what the output holds now, after prepare (and, when run is
   set, upload, run, download) -- or download alone without run -- for
   check `item`.  Returns KB_OK and fills chk, KB_EUNSUPPORTED, or another
   code with why set. */
static int attempt(ck *c, void *state, uint32_t v, int item, int run, kb_check *chk, char *why,
                   size_t n)
{
    const kbc_instance in = kbc_instance_of(c->d, &c->host);
    kbc_error err;
    const int vi = (int)v;
    step(c, "prepare()", vi, item);
    int r = kbc_call_prepare(in, state, v, &err);
    if (r == KB_OK && run) {
        step(c, "upload()", vi, item);
        r = kbc_call_upload(in, state, v, &err);
    }
    if (r == KB_OK && run) {
        step(c, "run()", vi, item);
        r = kbc_call_run(in, state, v, &err);
    }
    if (r == KB_OK) {
        step(c, "download()", vi, item);
        r = kbc_call_download(in, state, v, &err);
    }
    if (r != KB_OK) {
        said(&err, why, n);
        return r;
    }
    char cw[400];
    if (gpu_settle(c, v, cw, sizeof cw) != 0) {
        snprintf(why, n, "the CUDA runtime reported an error: %s", cw);
        return KB_ECUDA;
    }
    /* Without a run, verify is meant to fail: what it logs about that is
       not news. */
    c->provoking = !run;
    step(c, "verify()", vi, item);
    r = kbc_call_verify(in, state, v, chk, &err);
    c->provoking = 0;
    if (r != KB_OK) {
        said(&err, why, n);
        return r;
    }
    return KB_OK;
}

static void result_fail(ck_result *r, const char *fmt, ...) KB_PRINTF(2, 3);

static void result_fail(ck_result *r, const char *fmt, ...)
{
    r->failed++;
    if (r->first[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->first, sizeof r->first, fmt, ap);
    va_end(ap);
}

/* Judges verify-consistent on one verify. */
static void consistent(ck_variant *cv, const kb_check *k, const char *when, const char *at)
{
    int pass = kbc_check_passes(k);
    cv->r[R_CONSISTENT].judged++;
    if (!k->passed != !pass)
        result_fail(&cv->r[R_CONSISTENT],
                    "%s, %s, verify() said %s, but its %s error %g is %s the tolerance %g", at,
                    when, k->passed ? "passed" : "failed", k->measure ? k->measure : "(unnamed)",
                    k->error, pass ? "within" : "not within", k->tolerance);
}

/* The checks of one variant on one set-up state.  Each check's count goes
   up before its calls, so that a crash in them is counted where it is
   blamed (life_blame). */
static void life_variant(ck *c, void *state, uint32_t v, const char *at, ck_variant *cv)
{
    kb_check k1, k2, k3;
    char why[700];
    cv->r[R_CAN_FAIL].judged++;
    int r = attempt(c, state, v, R_CAN_FAIL, 0, &k1, why, sizeof why);
    if (r == KB_EUNSUPPORTED) {
        cv->r[R_CAN_FAIL].judged--;
        if (!cv->unsupported++)
            snprintf(cv->unsup_why, sizeof cv->unsup_why, "%s",
                     c->hc.fail_msg[0] ? c->hc.fail_msg : why);
        return;
    }
    if (r != KB_OK) {
        result_fail(&cv->r[R_CAN_FAIL], "%s, with no run: %s", at, why);
        return;
    }
    consistent(cv, &k1, "on an output that was never run", at);
    int pass1 = kbc_check_passes(&k1);
    if (pass1)
        result_fail(&cv->r[R_CAN_FAIL],
                    "%s, verify() passed an output that was prepared but never run (%s error "
                    "%g within tolerance %g): either verify cannot fail or prepare does not "
                    "poison",
                    at, k1.measure ? k1.measure : "(unnamed)", k1.error, k1.tolerance);

    cv->r[R_CORRECT].judged++;
    r = attempt(c, state, v, R_CORRECT, 1, &k2, why, sizeof why);
    if (r != KB_OK) {
        result_fail(&cv->r[R_CORRECT], "%s: %s", at, why);
        return;
    }
    consistent(cv, &k2, "after a run", at);
    int pass2 = kbc_check_passes(&k2);
    if (!pass2)
        result_fail(&cv->r[R_CORRECT], "%s, %s error %g is not within the tolerance %g", at,
                    k2.measure ? k2.measure : "(unnamed)", k2.error, k2.tolerance);

    /* After a correct run, prepare must wipe it: judged only where verify
       can tell a poisoned output from a correct one. */
    if (pass1 || !pass2)
        return;
    cv->r[R_POISONS].judged++;
    r = attempt(c, state, v, R_POISONS, 0, &k3, why, sizeof why);
    if (r != KB_OK) {
        result_fail(&cv->r[R_POISONS], "%s, prepare after a run: %s", at, why);
        return;
    }
    consistent(cv, &k3, "after prepare following a run", at);
    if (kbc_check_passes(&k3))
        result_fail(&cv->r[R_POISONS],
                    "%s, after a correct run, prepare() and download() without a run still "
                    "verify (%s error %g within tolerance %g): prepare does not poison the "
                    "output",
                    at, k3.measure ? k3.measure : "(unnamed)", k3.error, k3.tolerance);
}

/* Runs prepare/upload/run/download of every variant in mask once, ignoring
   results: the measured cycle of the leak check (a crash there is blamed
   on the variant's correct-run). */
static void run_all(ck *c, void *state, uint64_t mask)
{
    const kbc_instance in = kbc_instance_of(c->d, &c->host);
    char why[400];
    for (uint32_t v = 0; v < c->d->n_variants; v++) {
        if (!(mask & KB_VARIANT_BIT(v)))
            continue;
        const int vi = (int)v;
        step(c, "prepare()", vi, R_CORRECT);
        int r = kbc_call_prepare(in, state, v, NULL);
        if (r == KB_OK) {
            step(c, "upload()", vi, R_CORRECT);
            r = kbc_call_upload(in, state, v, NULL);
        }
        if (r == KB_OK) {
            step(c, "run()", vi, R_CORRECT);
            r = kbc_call_run(in, state, v, NULL);
        }
        if (r == KB_OK) {
            step(c, "download()", vi, R_CORRECT);
            kbc_call_download(in, state, v, NULL);
        }
        gpu_settle(c, v, why, sizeof why);
    }
}

/* setup, one run of every variant, teardown: how far free device memory
   fell over it. */
static uint64_t measured_cycle(ck *c, const kb_value *vals, uint64_t mask)
{
    char why[400];
    void *state = NULL;
    kbc_gpu_sync(c->stream, why, sizeof why);
    uint64_t before = kbc_gpu_free_memory();
    const kbc_instance in = kbc_instance_of(c->d, &c->host);
    c->sh->in_cycle = 1;
    step(c, "setup()", -1, -1);
    if (kbc_call_setup(in, vals, mask, &state, NULL) == KB_OK)
        run_all(c, state, mask);
    step(c, "teardown()", -1, -1);
    kbc_call_teardown(in, state);
    step(c, "the stream's synchronisation after teardown()", -1, -1);
    kbc_gpu_sync(c->stream, why, sizeof why);
    kbc_gpu_last_error(why, sizeof why);
    c->sh->in_cycle = 0;
    return drop_of(before, kbc_gpu_free_memory());
}

/* The lifecycle's points: the small ones plan() accepted, or, when there
   is none, the smallest (if it is not too big); n of them into a new
   array. */
static size_t *life_points(ck *c, uint64_t mask, size_t *n)
{
    size_t *life = kbc_xcalloc(c->n_pts ? c->n_pts : 1, sizeof *life);
    size_t n_life = 0, smallest = (size_t)-1;
    for (size_t i = 0; i < c->n_pts; i++) {
        if (c->planned[i] != KBC_PLAN_RUNS || !(mask & ~c->refused[i]))
            continue;
        const kb_work *w = &c->work[i];
        /* The device memory of the variants that will run (kbench/plugin.h,
           kb_work, "Device memory"). */
        uint64_t dev = kbc_work_device_bytes(w, mask & ~c->refused[i]);
        if (w->host_bytes <= CK_SMALL_BYTES && dev <= CK_SMALL_BYTES && n_life < CK_MAX_LIFE)
            life[n_life++] = i;
        if (smallest == (size_t)-1 ||
            w->host_bytes + dev <
                c->work[smallest].host_bytes +
                    kbc_work_device_bytes(&c->work[smallest], mask & ~c->refused[smallest]))
            smallest = i;
    }
    if (!n_life && smallest != (size_t)-1 &&
        c->work[smallest].host_bytes <= CK_LARGEST_BYTES &&
        kbc_work_device_bytes(&c->work[smallest], mask & ~c->refused[smallest]) <=
            CK_LARGEST_BYTES)
        life[n_life++] = smallest;
    *n = n_life;
    return life;
}

/* The lifecycle at one point, for the variants of lf->mask but those
   plan() refused there alone (they are not set up, as in a run). */
static void life_point(ck *c, size_t i, life_found *lf)
{
    const kbc_instance in = kbc_instance_of(c->d, &c->host);
    const kb_value *vals = &c->pts[i * c->np];
    kbc_error err;
    char at[400], why[700];
    where(c, i, at, sizeof at);
    c->sh->point = i;
    for (uint32_t v = 0; v < c->d->n_variants; v++) {
        ck_variant *cv = &c->cv[v];
        if ((lf->mask & c->refused[i] & KB_VARIANT_BIT(v)) && !cv->unsupported++)
            snprintf(cv->unsup_why, sizeof cv->unsup_why, "plan() refused it %s", at);
    }
    const uint64_t mask = lf->mask & ~c->refused[i];
    if (!mask)
        return;

    /* Teardown straight after setup, nothing run. */
    void *state = NULL;
    step(c, "setup()", -1, -1);
    int r = kbc_call_setup(in, vals, mask, &state, &err);
    if (r == KB_EUNSUPPORTED) {
        lf->st_unsup++;
        step(c, "teardown()", -1, -1);
        kbc_call_teardown(in, state);
        return;
    }
    lf->st_judged++;
    if (r != KB_OK) {
        if (!lf->st_fail[0])
            snprintf(lf->st_fail, sizeof lf->st_fail, "%s, %s", at, said(&err, why, sizeof why));
        step(c, "teardown()", -1, -1);
        kbc_call_teardown(in, state);
        return;
    }
    step(c, "teardown()", -1, -1);
    kbc_call_teardown(in, state);
    step(c, "the stream's synchronisation after teardown()", -1, -1);
    if (c->gpu && (kbc_gpu_sync(c->stream, why, sizeof why) != 0 ||
                   kbc_gpu_last_error(why, sizeof why) != 0) && !lf->st_fail[0])
        snprintf(lf->st_fail, sizeof lf->st_fail,
                 "%s, the CUDA runtime reported an error after setup and teardown: %s", at, why);

    /* The checks of each variant on one fresh state. */
    state = NULL;
    step(c, "setup()", -1, -1);
    r = kbc_call_setup(in, vals, mask, &state, &err);
    if (r != KB_OK) {
        if (!lf->st_fail[0])
            snprintf(lf->st_fail, sizeof lf->st_fail, "%s, the second time: %s", at,
                     said(&err, why, sizeof why));
        step(c, "teardown()", -1, -1);
        kbc_call_teardown(in, state);
        return;
    }
    for (uint32_t v = 0; v < c->d->n_variants; v++)
        if (mask & KB_VARIANT_BIT(v))
            life_variant(c, state, v, at, &c->cv[v]);
    step(c, "teardown()", -1, -1);
    kbc_call_teardown(in, state);

    /* A third cycle, now that lazily loaded kernels and library state
       exist, measured for device memory. */
    if (c->gpu) {
        uint64_t drop = UINT64_MAX;
        for (int rep = 0; rep < CK_REPEATS && drop >= CK_DEVICE_SLACK; rep++) {
            uint64_t d2 = measured_cycle(c, vals, mask);
            drop = d2 < drop ? d2 : drop;
        }
        lf->leak_judged++;
        if (drop >= CK_DEVICE_SLACK && !lf->leak_fail[0]) {
            char b[32];
            snprintf(lf->leak_fail, sizeof lf->leak_fail,
                     "%s, free device memory was at least %s lower after setup, runs and "
                     "teardown than before, in each of %d cycles",
                     at, kbc_human_bytes(drop, b, sizeof b), CK_REPEATS);
        }
    }
}

/* What the lifecycle's child is given. */
typedef struct life_arg {
    ck *c;
    const size_t *life;
    size_t n_life;
} life_arg;

/* The check's child for the lifecycle: its points from lf->next on. */
static void life_child(void *arg)
{
    const life_arg *a = arg;
    ck *c = a->c;
    life_found *lf = &c->sh->life;
    gpu_open(c);
    for (; lf->next < a->n_life && lf->mask; lf->next++)
        life_point(c, a->life[lf->next], lf);
}

/* A call that crashed or hung at lifecycle point k: a variant's fails the
   check it was judged for, and that variant is checked no more; setup's
   or teardown's fails setup-teardown and ends the lifecycle. */
static void life_blame(ck *c, const ck_outcome *o, const size_t *life)
{
    life_found *lf = &c->sh->life;
    const ck_shared *sh = c->sh;
    char at[400];
    where(c, life[lf->next], at, sizeof at);
    const char *cycle = sh->in_cycle ? " (the device-leak cycle)" : "";
    if (sh->variant >= 0 && sh->item >= 0) {
        ck_variant *cv = &c->cv[sh->variant];
        if (sh->in_cycle)
            cv->r[sh->item].judged++;
        result_fail(&cv->r[sh->item], "%s%s, %s %s", at, cycle, sh->call, o->words);
        snprintf(cv->stopped, sizeof cv->stopped, "not checked after its %s %s %s%s", sh->call,
                 o->words, at, cycle);
        lf->mask &= ~KB_VARIANT_BIT((uint32_t)sh->variant);
        lf->next++;
    } else {
        if (!lf->st_fail[0])
            snprintf(lf->st_fail, sizeof lf->st_fail, "%s%s, %s %s", at, cycle, sh->call,
                     o->words);
        snprintf(lf->stopped, sizeof lf->stopped, "not checked after %s %s %s%s", sh->call,
                 o->words, at, cycle);
        lf->next = (size_t)-1; /* no point more */
    }
}

/* Runs the lifecycle in children until it is done.  Returns 0, or an exit
   code after saying why on c->err. */
static int life_step(ck *c, const size_t *life, size_t n_life)
{
    life_found *lf = &c->sh->life;
    life_arg a = {c, life, n_life};
    while (lf->next < n_life && lf->mask) {
        ck_outcome o;
        c->sh->call = NULL;
        c->sh->in_cycle = 0;
        ck_child_run(life_child, &a, &c->sh->watch, c->watchdog_s, &o);
        int code = child_fault(c, &o);
        if (code > 0)
            return code;
        if (code == 0)
            break;
        life_blame(c, &o, life);
    }
    return 0;
}

/* The line of one of variant v's checks. */
static void print_variant_check(ck *c, uint32_t v, int k)
{
    const ck_variant *cv = &c->cv[v];
    const ck_result *res = &cv->r[k];
    char name[256];
    snprintf(name, sizeof name, "%s %s", r_names[k], c->d->variants[v].name);
    if (res->failed)
        ck_fail(c, name, "%s (failed at %u of %u %s)", res->first, res->failed, res->judged,
                k == R_CONSISTENT ? "verify calls" : "points");
    else if (res->judged)
        ck_ok(c, name, k == R_CONSISTENT ? "%u verify calls" : "%u points", res->judged);
    else if (cv->stopped[0])
        ck_skip(c, name, "%s", cv->stopped);
    else if (c->sh->life.stopped[0])
        ck_skip(c, name, "%s", c->sh->life.stopped);
    else if (k == R_POISONS && cv->r[R_CORRECT].judged)
        ck_skip(c, name, "no point had both a failing unrun output and a correct run");
    else if (cv->unsupported)
        ck_skip(c, name, "the variant refused every point checked: %s", cv->unsup_why);
    else
        ck_skip(c, name, "no point could be set up");
}

/* Runs and prints the lifecycle's checks.  Returns 0, or an exit code. */
static int check_lifecycle(ck *c)
{
    const kb_plugin *d = c->d;
    life_found *lf = &c->sh->life;
    uint64_t mask = 0;
    for (uint32_t v = 0; v < d->n_variants; v++)
        if ((c->selected & KB_VARIANT_BIT(v)) && (!is_cuda(c, v) || c->gpu))
            mask |= KB_VARIANT_BIT(v);
    lf->mask = mask;
    size_t n_life;
    size_t *life = life_points(c, mask, &n_life);
    int code = mask ? life_step(c, life, n_life) : 0;
    free(life);
    if (code)
        return code;

    if (!mask)
        ck_skip(c, "setup-teardown", "no selected variant can run here (%s)", c->no_gpu);
    else if (!n_life)
        ck_skip(c, "setup-teardown", "plan() accepted no point that needs at most %llu GiB",
                (unsigned long long)(CK_LARGEST_BYTES >> 30));
    else if (lf->st_fail[0])
        ck_fail(c, "setup-teardown", "%s", lf->st_fail);
    else if (!lf->st_judged)
        ck_skip(c, "setup-teardown", "setup() returned KB_EUNSUPPORTED at all %u points",
                lf->st_unsup);
    else
        ck_ok(c, "setup-teardown", "teardown right after setup at %u points", lf->st_judged);

    if (!c->gpu)
        ck_skip(c, "device-leak", "%s", c->no_gpu);
    else if (lf->leak_fail[0])
        ck_fail(c, "device-leak", "%s", lf->leak_fail);
    else if (!lf->leak_judged)
        ck_skip(c, "device-leak", "%s",
                lf->stopped[0] ? lf->stopped : "no point could be set up");
    else
        ck_ok(c, "device-leak", "free device memory back within %llu MiB at %u points",
              (unsigned long long)(CK_DEVICE_SLACK >> 20), lf->leak_judged);

    for (uint32_t v = 0; v < d->n_variants; v++) {
        if (!(c->selected & KB_VARIANT_BIT(v)))
            continue;
        if (!(mask & KB_VARIANT_BIT(v))) {
            char name[256];
            snprintf(name, sizeof name, "variant %s", d->variants[v].name);
            ck_skip(c, name, "it runs on CUDA, and %s", c->no_gpu);
            continue;
        }
        for (int k = 0; k < R_N; k++)
            print_variant_check(c, v, k);
    }
    return 0;
}

/* ---- the command ------------------------------------------------------------ */

/* Sets c->selected from the list; returns 0, or KBC_EXIT_USAGE after saying
   why on err. */
static int select_variants(ck *c, const char *csv, FILE *err)
{
    const kb_plugin *d = c->d;
    if (!csv) {
        c->selected = d->n_variants >= 64 ? ~0ULL : (1ULL << d->n_variants) - 1;
        return 0;
    }
    char *copy = kbc_xstrdup(csv), *rest = copy, *tok;
    const char **names = kbc_xcalloc(d->n_variants, sizeof *names);
    for (uint32_t v = 0; v < d->n_variants; v++)
        names[v] = d->variants[v].name;
    int rc = 0;
    /* strsep keeps the empty names that strtok would skip: "cpu,,x" and
       "cpu," are mistakes to name, not lists of one or two. */
    while ((tok = strsep(&rest, ",")) != NULL) {
        char *t = kbc_trim_dup(tok);
        if (!*t) {
            fprintf(err, "kbench: --variants '%s' holds an empty variant name (two commas in a "
                         "row, or one at an end); see kbench --help.\n", csv);
            free(t);
            rc = KBC_EXIT_USAGE;
            break;
        }
        uint32_t v = 0;
        while (v < d->n_variants && strcmp(names[v], t) != 0)
            v++;
        if (v == d->n_variants) {
            const char *near = kbc_closest(t, names, d->n_variants);
            if (near)
                fprintf(err, "kbench: plugin '%s' has no variant '%s'; did you mean '%s'?\n",
                        d->name, t, near);
            else
                fprintf(err, "kbench: plugin '%s' has no variant '%s' (kbench describe %s "
                             "lists them).\n", d->name, t, d->name);
            free(t);
            rc = KBC_EXIT_USAGE;
            break;
        }
        c->selected |= KB_VARIANT_BIT(v);
        free(t);
    }
    if (!rc && !c->selected) {
        fprintf(err, "kbench: --variants names no variant.\n");
        rc = KBC_EXIT_USAGE;
    }
    free(names);
    free(copy);
    return rc;
}

static int unknown_plugin(const kbc_registry *r, const char *name, FILE *err)
{
    const char **names = kbc_xcalloc(r->n ? r->n : 1, sizeof *names);
    for (size_t i = 0; i < r->n; i++)
        names[i] = r->items[i].desc->name;
    const char *near = name ? kbc_closest(name, names, r->n) : NULL;
    if (near)
        fprintf(err, "kbench: no plugin named '%s'; did you mean '%s'?\n", name ? name : "", near);
    else
        fprintf(err, "kbench: no plugin named '%s' (kbench list shows the plugins found).\n",
                name ? name : "");
    free(names);
    return KBC_EXIT_USAGE;
}

int kbc_cmd_check(kbc_registry *r, const char *plugin, const char *variants_csv, FILE *out,
                  FILE *err)
{
    const kbc_plugin *pl = kbc_registry_find(r, plugin);
    if (!pl)
        return unknown_plugin(r, plugin, err);

    ck c;
    memset(&c, 0, sizeof c);
    c.out = out;
    c.err = err;
    c.pl = pl;
    c.d = pl->desc;
    c.np = c.d->n_params ? c.d->n_params : 1;
    int code = select_variants(&c, variants_csv, err);
    if (code)
        return code;
    char why[512];
    if (ck_watchdog_seconds(&c.watchdog_s, why, sizeof why) != 0) {
        fprintf(err, "kbench: %s.\n", why);
        return KBC_EXIT_USAGE;
    }

    /* The core's one kb_host implementation (host.c), as a worker's; its
       GPU is opened in the check's child (gpu_open). */
    kbc_host_init(&c.host, &c.hc, c.d->name, 1, 1);
    c.core_log = c.host.log;
    c.host.log = check_log;

    /* Each line is out as soon as it is judged, whatever out is. */
    setvbuf(out, NULL, _IOLBF, BUFSIZ);
    fprintf(out, "kbench check %s (%s)\n", c.d->name, pl->path);
    /* The loader refused anything malformed; reading the descriptor again
       here keeps this check true whoever built the registry. */
    if (kbc_descriptor_check(pl->raw, why, sizeof why))
        ck_fail(&c, "descriptor", "%s", why);
    else
        ck_ok(&c, "descriptor",
              "ABI %u.%u: sizes, names, required operations, backends, flags, used-parameter "
              "masks, types, choices and defaults as the loader checks them",
              (unsigned)pl->raw->abi_major, (unsigned)pl->raw->abi_minor);

    /* What the check's children find, shared with them. */
    c.sh = ck_shared_alloc(sizeof *c.sh);
    c.cv = ck_shared_alloc(c.d->n_variants * sizeof *c.cv);
    if (make_points(&c) == 0) {
        c.planned = ck_shared_alloc(c.n_pts * sizeof *c.planned);
        c.refused = ck_shared_alloc(c.n_pts * sizeof *c.refused);
        c.work = ck_shared_alloc(c.n_pts * sizeof *c.work);
        code = check_plan(&c);
        if (!code)
            code = check_lifecycle(&c);
        ck_shared_free(c.planned, c.n_pts * sizeof *c.planned);
        ck_shared_free(c.refused, c.n_pts * sizeof *c.refused);
        ck_shared_free(c.work, c.n_pts * sizeof *c.work);
    }
    if (!code)
        fprintf(out, "summary: %u ok, %u FAIL, %u skip\n", c.n_ok, c.n_fail, c.n_skip);

    free(c.pts);
    ck_shared_free(c.cv, c.d->n_variants * sizeof *c.cv);
    ck_shared_free(c.sh, sizeof *c.sh);
    /* Whoever opened out says that it failed (kbench says so of its
       standard output as it exits): one sentence, not two. */
    if (fflush(out) != 0 || ferror(out))
        return KBC_EXIT_SYSTEM;
    if (code)
        return code;
    return c.n_fail ? KBC_EXIT_FAILED : KBC_EXIT_OK;
}
