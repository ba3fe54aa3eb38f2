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
 * A plugin that crashes ends the check with the crash: the checks run in
 * this process, because a CUDA context does not survive fork().
 */
#define _GNU_SOURCE
#include "check.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "host.h"
#include "instance.h"
#include "point_plan.h"
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
} ck_variant;

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
    int *planned;          /* per point: the first answer's status
                              (kbc_plan_status)                       */
    uint64_t *refused;     /* per point: the variants it refused alone
                              (kb_host.refuse), when it runs          */
    kb_work *work;         /* per point: plan()'s first work          */
    char def_msg[600];     /* why plan() does not run the defaults    */
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

/* What the plan step found: the first failure of each check (one
   sentence each, "" when none) and the refused points. */
typedef struct plan_found {
    char pure[800], alloc[800], errors[900];
    char first_refused[900];
    unsigned refused;
    char first_vrefused[900]; /* the first variant refused alone       */
    unsigned vrefused;        /* (point, variant) refusals of the selected */
    uint64_t drop;         /* free device memory lost over the calls */
} plan_found;

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

/* plan() twice on every point, through the plan layer's one door
   (kbc_point_plan_make, as every command plans a point), keeping the
   first answer of each; then, on a GPU, the passes that measure free
   device memory. */
static void plan_points(ck *c, plan_found *f)
{
    const kbc_instance in = kbc_instance_of(c->d, &c->host);
    char at[400];
    /* Made before the heap readings: nothing between two of them may
       allocate, only the plugin's call (kbc_point_plan_make allocates
       nothing). */
    kbc_point_plan *p1 = kbc_xmalloc(sizeof *p1), *p2 = kbc_xmalloc(sizeof *p2);
    uint64_t free0 = c->gpu ? kbc_gpu_free_memory() : 0;
    for (size_t i = 0; i < c->n_pts; i++) {
        const kb_value *v = &c->pts[i * c->np];
        size_t h0 = heap_in_use();
        kbc_point_plan_make(in, v, p1);
        size_t h1 = heap_in_use();
        size_t h2 = heap_in_use();
        kbc_point_plan_make(in, v, p2);
        size_t h3 = heap_in_use();
        c->planned[i] = p1->status;
        c->refused[i] = p1->status == KBC_PLAN_RUNS ? p1->refusals.mask : 0;
        c->work[i] = p1->work;
        if (i == 0 && p1->status != KBC_PLAN_RUNS)
            snprintf(c->def_msg, sizeof c->def_msg, "%s", p1->sentence);
        if (!f->pure[0])
            judge_purity(c, i, p1, p2, f);
        if (!f->alloc[0] && (h1 > h0 || h3 > h2))
            snprintf(f->alloc, sizeof f->alloc,
                     "%s, %llu bytes of heap allocated by plan() were still allocated after it "
                     "returned",
                     where(c, i, at, sizeof at),
                     (unsigned long long)(h1 > h0 ? h1 - h0 : h3 - h2));
        judge_plan_error(c, i, p1, f);
    }
    f->drop = c->gpu ? drop_of(free0, kbc_gpu_free_memory()) : 0;
    /* Free memory is the whole device's: another process can move it.  A
       drop counts only when every one of CK_REPEATS passes shows it. */
    for (int rep = 1; rep < CK_REPEATS && f->drop >= CK_DEVICE_SLACK; rep++) {
        uint64_t f0 = kbc_gpu_free_memory();
        for (size_t i = 0; i < c->n_pts; i++)
            kbc_point_plan_make(in, &c->pts[i * c->np], p1);
        uint64_t d2 = drop_of(f0, kbc_gpu_free_memory());
        f->drop = d2 < f->drop ? d2 : f->drop;
    }
    free(p1);
    free(p2);
}

static void check_plan(ck *c)
{
    c->planned = kbc_xcalloc(c->n_pts, sizeof *c->planned);
    c->refused = kbc_xcalloc(c->n_pts, sizeof *c->refused);
    c->work = kbc_xcalloc(c->n_pts, sizeof *c->work);
    plan_found f;
    memset(&f, 0, sizeof f);
    plan_points(c, &f);

    if (c->planned[0] != KBC_PLAN_RUNS)
        ck_fail(c, "defaults", "plan() refuses the plugin's own defaults: %s", c->def_msg);
    else
        ck_ok(c, "defaults", "every default parses and plan() accepts them");

    if (f.pure[0])
        ck_fail(c, "plan-pure", "%s", f.pure);
    else
        ck_ok(c, "plan-pure", "two calls agree at each of %zu points", c->n_pts);

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
    if (f.errors[0])
        ck_fail(c, "plan-errors", "%s", f.errors);
    else if (f.first_refused[0])
        /* A refused point is an `invalid` row in a run, not a failure:
           the first one is named so that the author sees the rule. */
        ck_ok(c, "plan-errors",
              "%u of %zu points refused with KB_EINVAL or KB_EUNSUPPORTED and a sentence "
              "(each is invalid in a run; the first %s)%s",
              f.refused, c->n_pts, f.first_refused, alone);
    else
        ck_ok(c, "plan-errors",
              "%u of %zu points refused with KB_EINVAL or KB_EUNSUPPORTED and a sentence%s",
              f.refused, c->n_pts, alone);
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
    if (kbc_gpu_sync(c->stream, why, n) != 0 || kbc_gpu_last_error(why, n) != 0)
        return -1;
    return 0;
}

/* One verify of what the output holds now, after prepare (and, when run is
   set, upload, run, download) -- or download alone without run.  Returns
   KB_OK and fills chk, KB_EUNSUPPORTED, or another code with why set. */
static int attempt(ck *c, void *state, uint32_t v, int run, kb_check *chk, char *why, size_t n)
{
    const kbc_instance in = kbc_instance_of(c->d, &c->host);
    kbc_error err;
    int r;
    if ((r = kbc_call_prepare(in, state, v, &err)) != KB_OK ||
        (run && (r = kbc_call_upload(in, state, v, &err)) != KB_OK) ||
        (run && (r = kbc_call_run(in, state, v, &err)) != KB_OK) ||
        (r = kbc_call_download(in, state, v, &err)) != KB_OK) {
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

/* The checks of one variant on one set-up state. */
static void life_variant(ck *c, void *state, uint32_t v, const char *at, ck_variant *cv)
{
    kb_check k1, k2, k3;
    char why[700];
    int r = attempt(c, state, v, 0, &k1, why, sizeof why);
    if (r == KB_EUNSUPPORTED) {
        if (!cv->unsupported++)
            snprintf(cv->unsup_why, sizeof cv->unsup_why, "%s",
                     c->hc.fail_msg[0] ? c->hc.fail_msg : why);
        return;
    }
    cv->r[R_CAN_FAIL].judged++;
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
    r = attempt(c, state, v, 1, &k2, why, sizeof why);
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
    r = attempt(c, state, v, 0, &k3, why, sizeof why);
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
   results: the measured cycle of the leak check. */
static void run_all(ck *c, void *state, uint64_t mask)
{
    const kbc_instance in = kbc_instance_of(c->d, &c->host);
    char why[400];
    for (uint32_t v = 0; v < c->d->n_variants; v++) {
        if (!(mask & KB_VARIANT_BIT(v)))
            continue;
        if (kbc_call_prepare(in, state, v, NULL) == KB_OK &&
            kbc_call_upload(in, state, v, NULL) == KB_OK &&
            kbc_call_run(in, state, v, NULL) == KB_OK)
            kbc_call_download(in, state, v, NULL);
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
    if (kbc_call_setup(in, vals, mask, &state, NULL) == KB_OK)
        run_all(c, state, mask);
    kbc_call_teardown(in, state);
    kbc_gpu_sync(c->stream, why, sizeof why);
    kbc_gpu_last_error(why, sizeof why);
    return drop_of(before, kbc_gpu_free_memory());
}

static void check_lifecycle(ck *c)
{
    const kb_plugin *d = c->d;
    const kbc_instance in = kbc_instance_of(d, &c->host);
    kbc_error err;
    ck_variant *cv = kbc_xcalloc(d->n_variants, sizeof *cv);
    char at[400], why[700];
    char st_fail[2048] = "", leak_fail[2048] = "";
    unsigned st_judged = 0, st_unsup = 0, leak_judged = 0;

    uint64_t mask = 0;
    for (uint32_t v = 0; v < d->n_variants; v++)
        if ((c->selected & KB_VARIANT_BIT(v)) && (!is_cuda(c, v) || c->gpu))
            mask |= KB_VARIANT_BIT(v);

    /* The small points; when there is none, the smallest. */
    size_t *life = kbc_xcalloc(c->n_pts, sizeof *life);
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

    for (size_t k = 0; k < n_life && mask; k++) {
        size_t i = life[k];
        const kb_value *vals = &c->pts[i * c->np];
        where(c, i, at, sizeof at);
        /* The variants plan() refused here are not set up, as in a run. */
        for (uint32_t v = 0; v < d->n_variants; v++)
            if ((mask & c->refused[i] & KB_VARIANT_BIT(v)) && !cv[v].unsupported++)
                snprintf(cv[v].unsup_why, sizeof cv[v].unsup_why, "plan() refused it %s", at);
        const uint64_t here = mask & ~c->refused[i];

        /* Teardown straight after setup, nothing run. */
        void *state = NULL;
        int r = kbc_call_setup(in, vals, here, &state, &err);
        if (r == KB_EUNSUPPORTED) {
            st_unsup++;
            kbc_call_teardown(in, state);
            continue;
        }
        st_judged++;
        if (r != KB_OK) {
            if (!st_fail[0])
                snprintf(st_fail, sizeof st_fail, "%s, %s", at, said(&err, why, sizeof why));
            kbc_call_teardown(in, state);
            continue;
        }
        kbc_call_teardown(in, state);
        if (c->gpu && (kbc_gpu_sync(c->stream, why, sizeof why) != 0 ||
                       kbc_gpu_last_error(why, sizeof why) != 0) && !st_fail[0])
            snprintf(st_fail, sizeof st_fail,
                     "%s, the CUDA runtime reported an error after setup and teardown: %s", at,
                     why);

        /* The checks of each variant on one fresh state. */
        state = NULL;
        r = kbc_call_setup(in, vals, here, &state, &err);
        if (r != KB_OK) {
            if (!st_fail[0])
                snprintf(st_fail, sizeof st_fail, "%s, the second time: %s", at,
                         said(&err, why, sizeof why));
            kbc_call_teardown(in, state);
            continue;
        }
        for (uint32_t v = 0; v < d->n_variants; v++)
            if (here & KB_VARIANT_BIT(v))
                life_variant(c, state, v, at, &cv[v]);
        kbc_call_teardown(in, state);

        /* A third cycle, now that lazily loaded kernels and library state
           exist, measured for device memory. */
        if (c->gpu) {
            uint64_t drop = UINT64_MAX;
            for (int rep = 0; rep < CK_REPEATS && drop >= CK_DEVICE_SLACK; rep++) {
                uint64_t d2 = measured_cycle(c, vals, here);
                drop = d2 < drop ? d2 : drop;
            }
            leak_judged++;
            if (drop >= CK_DEVICE_SLACK && !leak_fail[0]) {
                char b[32];
                snprintf(leak_fail, sizeof leak_fail,
                         "%s, free device memory was at least %s lower after setup, runs and "
                         "teardown than before, in each of %d cycles",
                         at, kbc_human_bytes(drop, b, sizeof b), CK_REPEATS);
            }
        }
    }

    if (!mask)
        ck_skip(c, "setup-teardown", "no selected variant can run here (%s)", c->no_gpu);
    else if (!n_life)
        ck_skip(c, "setup-teardown", "plan() accepted no point that needs at most %llu GiB",
                (unsigned long long)(CK_LARGEST_BYTES >> 30));
    else if (st_fail[0])
        ck_fail(c, "setup-teardown", "%s", st_fail);
    else if (!st_judged)
        ck_skip(c, "setup-teardown", "setup() returned KB_EUNSUPPORTED at all %u points", st_unsup);
    else
        ck_ok(c, "setup-teardown", "teardown right after setup at %u points", st_judged);

    if (!c->gpu)
        ck_skip(c, "device-leak", "%s", c->no_gpu);
    else if (leak_fail[0])
        ck_fail(c, "device-leak", "%s", leak_fail);
    else if (!leak_judged)
        ck_skip(c, "device-leak", "no point could be set up");
    else
        ck_ok(c, "device-leak", "free device memory back within %llu MiB at %u points",
              (unsigned long long)(CK_DEVICE_SLACK >> 20), leak_judged);

    for (uint32_t v = 0; v < d->n_variants; v++) {
        if (!(c->selected & KB_VARIANT_BIT(v)))
            continue;
        const char *vn = d->variants[v].name;
        char name[256];
        if (!(mask & KB_VARIANT_BIT(v))) {
            snprintf(name, sizeof name, "variant %s", vn);
            ck_skip(c, name, "it runs on CUDA, and %s", c->no_gpu);
            continue;
        }
        for (int k = 0; k < R_N; k++) {
            const ck_result *res = &cv[v].r[k];
            snprintf(name, sizeof name, "%s %s", r_names[k], vn);
            if (res->failed)
                ck_fail(c, name, "%s (failed at %u of %u %s)", res->first, res->failed,
                        res->judged, k == R_CONSISTENT ? "verify calls" : "points");
            else if (res->judged)
                ck_ok(c, name, k == R_CONSISTENT ? "%u verify calls" : "%u points",
                      res->judged);
            else if (k == R_POISONS && cv[v].r[R_CORRECT].judged)
                ck_skip(c, name, "no point had both a failing unrun output and a correct run");
            else if (cv[v].unsupported)
                ck_skip(c, name, "the variant refused every point checked: %s", cv[v].unsup_why);
            else
                ck_skip(c, name, "no point could be set up");
        }
    }
    free(life);
    free(cv);
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

    /* The core's one kb_host implementation (host.c), as a worker's. */
    kbc_host_init(&c.host, &c.hc, c.d->name, 1, 1);
    c.core_log = c.host.log;
    c.host.log = check_log;

    /* The GPU, as a worker finds it. */
    char why[512], gw[300];
    kbc_gpu_probe(&c.m);
    c.host.cpu_threads = c.m.cpu_threads > 0 ? c.m.cpu_threads : 1;
    if (!c.m.has_gpu) {
        const char *rs = c.m.no_gpu_reason[0] ? c.m.no_gpu_reason : "no CUDA device";
        snprintf(c.no_gpu, sizeof c.no_gpu, "%s", rs);
    } else if (kbc_gpu_stream_create(&c.stream, gw, sizeof gw) != 0) {
        snprintf(c.no_gpu, sizeof c.no_gpu, "no CUDA device (%s)", gw);
    } else {
        c.gpu = 1;
        c.host.stream = c.stream;
        c.host.device = c.m.device;
        c.host.sm_count = c.m.sm_count;
        c.host.l2_bytes = c.m.l2_bytes;
    }

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

    if (make_points(&c) == 0) {
        check_plan(&c);
        check_lifecycle(&c);
    }
    fprintf(out, "summary: %u ok, %u FAIL, %u skip\n", c.n_ok, c.n_fail, c.n_skip);

    free(c.pts);
    free(c.planned);
    free(c.refused);
    free(c.work);
    kbc_gpu_stream_destroy(c.stream);
    /* Whoever opened out says that it failed (kbench says so of its
       standard output as it exits): one sentence, not two. */
    if (fflush(out) != 0 || ferror(out))
        return KBC_EXIT_SYSTEM;
    return c.n_fail ? KBC_EXIT_FAILED : KBC_EXIT_OK;
}
