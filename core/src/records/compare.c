/* compare.c -- see compare.h. */
#define _GNU_SOURCE
#include "compare.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"
#include "stats.h"
#include "results_read.h"
#include "text.h"
#include "util.h"

/* Text from a file, as the output needs it: markdown or the terminal. */
void kbc_compare_defaults(kbc_compare_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threshold = 0.05;
    o->alpha = 0.05;
    o->resamples = 1000;
    o->seed = 0x6b62656e6368ULL;
    o->format = KBC_CMP_TABLE;
    o->boot_max = KBC_COMPARE_BOOT_MAX;
}

const char *kbc_verdict_name(kbc_verdict v)
{
    switch (v) {
    case KBC_FASTER:
        return "faster";
    case KBC_SLOWER:
        return "slower";
    case KBC_NO_CHANGE:
        return "no change";
    case KBC_NOISY:
        return "noisy";
    case KBC_UNTESTED:
        break;
    }
    return "untested";
}

/* ---- the bootstrap ----
 *
 * Each resample k draws the base's nb samples with replacement, then the
 * new side's nn, from one splitmix64 sequence that starts at o->seed and
 * runs on through the resamples; its ratio is the new resample's median
 * over the base resample's.  The interval is two quantiles of the B ratios.
 *
 * What costs is B * (nb + nn) draws; everything else is linear in them:
 * - both sides are sorted once, so a resample is a count of how often each
 *   index was drawn, and its median is found by walking the counts (no
 *   sort per resample).  Only counts near the middle are kept (a window of
 *   about 16 sqrt(n) indices around n / 2, beyond which a resample's median
 *   falls with a probability far below 1e-50); a resample whose median
 *   falls outside is counted again in full, so the result is exact;
 * - the state before resample k is o->seed + k * (nb + nn) * GAMMA, since
 *   each draw adds GAMMA: resamples are computed in any order, on several
 *   threads, and give the same ratios as one thread in order would;
 * - the two quantiles are selected (quickselect), not sorted for.
 * The medians and ratios are bit for bit those of sorting each resample. */

#define GAMMA 0x9e3779b97f4a7c15ULL

/* splitmix64: small, fast, and the same sequence on every machine. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += GAMMA);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A draw is an index below n: next_u64() % n (the modulo bias is below
   n / 2^64, far beneath any resampling error).  x % d is computed without
   a division instruction (a slow one on some processors):
   Granlund and Montgomery's multiply by an inverse rounded up, with the
   65th bit of the multiplier handled by a halving add, exact for every
   64-bit x and every d >= 1 (a power of two by a mask). */
typedef struct divisor {
    uint64_t d, m, mask;
    int shift, pow2;
} divisor;

static divisor divisor_of(uint64_t d)
{
    divisor v = {.d = d, .mask = d - 1, .pow2 = (d & (d - 1)) == 0};
    if (v.pow2)
        return v;
    int l = 0; /* ceil(log2 d): 2^(l-1) < d < 2^l */
    while (l < 64 && ((uint64_t)1 << l) < d)
        l++;
    /* m = floor(2^64 (2^l - d) / d) + 1, which fits in 64 bits. */
    unsigned __int128 two_l = (unsigned __int128)1 << l;
    v.m = (uint64_t)((((two_l - d) << 64) / d) + 1);
    v.shift = l - 1;
    return v;
}

static inline uint64_t mod_by(uint64_t x, const divisor *v)
{
    if (v->pow2)
        return x & v->mask;
    uint64_t t = (uint64_t)(((unsigned __int128)v->m * x) >> 64);
    uint64_t q = (t + ((x - t) >> 1)) >> v->shift;
    return x - q * v->d;
}

uint64_t kbc_compare_mod(uint64_t x, uint64_t d)
{
    divisor v = divisor_of(d);
    return mod_by(x, &v);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of x[0..n) (reordered in place). */
static double median_of(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
    return (n % 2) ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* A thread's counts: the window's, and the whole side's for a resample
   whose median falls outside the window. */
typedef struct counts {
    uint32_t *win;
    size_t win_cap;
    uint32_t *all;
    size_t all_cap;
} counts;

static uint32_t *counts_zeroed(uint32_t **p, size_t *cap, size_t n)
{
    if (*cap < n) {
        free(*p);
        *p = kbc_xmalloc(n * sizeof **p);
        *cap = n;
    }
    memset(*p, 0, n * sizeof **p);
    return *p;
}

/* Half the width of the window of counts kept for n samples (see above;
   the median's index in a resample varies by about sqrt(n) / 2). */
size_t kbc_compare_window(size_t n)
{
    return (size_t)(8.0 * sqrt((double)n)) + 64;
}

/* Walks counts c[0..w) of indices lo.. (below of them under lo): the
   values at ranks r1 <= r2 of the resample, into *v1 and *v2.  Returns 0,
   or -1 when either rank lies outside the window. */
static int walk(const double *x, const uint32_t *c, size_t lo, size_t w, size_t below,
                size_t r1, size_t r2, double *v1, double *v2)
{
    if (below > r1)
        return -1;
    size_t seen = below;
    int have1 = 0;
    for (size_t t = 0; t < w; t++) {
        seen += c[t];
        if (!have1 && seen > r1) {
            *v1 = x[lo + t];
            have1 = 1;
        }
        if (seen > r2) {
            *v2 = x[lo + t];
            return 0;
        }
    }
    return -1;
}

/* The median of one resample of the sorted x[0..n): n draws from *s (which
   moves on by n).  half: kbc_compare_window(n), or less (tests). */
double kbc_resample_median(const double *x, size_t n, uint64_t *s, size_t half, void *scratch)
{
    counts *k = scratch;
    size_t r2 = n / 2, r1 = n % 2 ? r2 : r2 - 1;
    size_t lo = r2 > half ? r2 - half : 0;
    size_t hi = n - r2 > half + 1 ? r2 + half + 1 : n;
    size_t w = hi - lo, below = 0;
    uint32_t *c = counts_zeroed(&k->win, &k->win_cap, w);
    uint64_t s0 = *s;
    divisor dv = divisor_of(n);
    for (size_t i = 0; i < n; i++) {
        size_t j = (size_t)mod_by(next_u64(s), &dv);
        below += j < lo;
        if (j - lo < w) /* wraps for j < lo */
            c[j - lo]++;
    }
    double v1 = 0, v2 = 0;
    if (walk(x, c, lo, w, below, r1, r2, &v1, &v2) != 0) {
        /* Outside the window: the same draws again, all counted. */
        uint64_t t = s0;
        c = counts_zeroed(&k->all, &k->all_cap, n);
        for (size_t i = 0; i < n; i++)
            c[mod_by(next_u64(&t), &dv)]++;
        walk(x, c, 0, n, 0, r1, r2, &v1, &v2);
    }
    return n % 2 ? v2 : 0.5 * (v1 + v2);
}

void *kbc_resample_scratch(void)
{
    return kbc_xcalloc(1, sizeof(counts));
}

void kbc_resample_scratch_free(void *scratch)
{
    counts *k = scratch;
    if (!k)
        return;
    free(k->win);
    free(k->all);
    free(k);
}

/* The k-th smallest of x[0..n) (x reordered): quickselect, Hoare's
   partition around the median of three. */
static double select_kth(double *x, size_t n, size_t k)
{
    size_t l = 0, r = n - 1;
    while (l < r) {
        size_t m = l + (r - l) / 2;
        double a = x[l], b = x[m], c = x[r];
        double p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        size_t i = l, j = r;
        for (;;) {
            while (x[i] < p)
                i++;
            while (x[j] > p)
                j--;
            if (i >= j)
                break;
            double t = x[i];
            x[i] = x[j];
            x[j] = t;
            i++;
            j--;
        }
        /* x[l..j] <= p <= x[j+1..r] */
        if (k <= j)
            r = j;
        else
            l = j + 1;
    }
    return x[k];
}

/* One comparison's bootstrap: both sides sorted, B ratios to fill. */
typedef struct boot {
    const double *a, *b;
    size_t na, nb;
    double *ratios;
} boot;

/* fn(ctx, i, scratch) for every i below n, on up to `threads` threads
   (this one among them), each i taken once; scratch is the thread's own
   (kbc_resample_scratch). */
typedef void par_fn(void *ctx, size_t i, void *scratch);
typedef struct par {
    par_fn *fn;
    void *ctx;
    size_t n;
    size_t next; /* the next i to take (atomic) */
} par;

static void *par_main(void *arg)
{
    par *p = arg;
    void *scratch = kbc_resample_scratch();
    for (size_t i; (i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n;)
        p->fn(p->ctx, i, scratch);
    kbc_resample_scratch_free(scratch);
    return NULL;
}

static void parallel(size_t n, unsigned threads, par_fn *fn, void *ctx)
{
    par p = {fn, ctx, n, 0};
    if (threads > n)
        threads = (unsigned)n;
    pthread_t *tid = kbc_xcalloc(threads ? threads : 1, sizeof *tid);
    unsigned started = 0;
    for (unsigned i = 1; i < threads; i++)
        if (pthread_create(&tid[i], NULL, par_main, &p) == 0)
            started = i;
        else
            break;
    par_main(&p); /* this thread works too, and finishes what is left */
    for (unsigned i = 1; i <= started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
}

/* A piece of work for a thread: resamples k0 .. k1 of one comparison. */
typedef struct piece {
    size_t boot;
    unsigned k0, k1;
} piece;

typedef struct pool {
    boot *boots;
    piece *pieces;
    uint64_t seed;
} pool;

static void piece_work(void *ctx, size_t at, void *scratch)
{
    pool *p = ctx;
    const piece *pc = &p->pieces[at];
    boot *b = &p->boots[pc->boot];
    uint64_t s = p->seed + (uint64_t)pc->k0 * (uint64_t)(b->na + b->nb) * GAMMA;
    for (unsigned k = pc->k0; k < pc->k1; k++) {
        double ma = kbc_resample_median(b->a, b->na, &s, kbc_compare_window(b->na), scratch);
        double mb = kbc_resample_median(b->b, b->nb, &s, kbc_compare_window(b->nb), scratch);
        b->ratios[k] = ma > 0 ? mb / ma : INFINITY;
    }
}

/* The threads to use: o->threads, or one per CPU this process may run on
   (at most 64). */
static unsigned threads_of(const kbc_compare_opts *o)
{
    if (o->threads)
        return o->threads;
    long n = 0;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
#endif
    if (n < 1)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

/* Draws per piece: about a millisecond's work, so that the pieces of one
   large comparison spread over the threads. */
#define PIECE_DRAWS (1u << 20)

/* Fills every boot's B ratios, on as many threads as pay. */
static void run_boots(boot *boots, size_t n, const kbc_compare_opts *o)
{
    unsigned B = o->resamples;
    size_t n_pieces = 0, cap = 16;
    piece *pieces = kbc_xmalloc(cap * sizeof *pieces);
    double draws = 0;
    for (size_t i = 0; i < n; i++) {
        size_t per = boots[i].na + boots[i].nb;
        unsigned step = per >= PIECE_DRAWS ? 1 : (unsigned)(PIECE_DRAWS / per);
        draws += (double)per * B;
        for (unsigned k = 0; k < B; k += step) {
            if (n_pieces == cap)
                pieces = kbc_xrealloc(pieces, (cap *= 2) * sizeof *pieces);
            pieces[n_pieces++] = (piece){i, k, B - k > step ? k + step : B};
        }
    }
    pool p = {.boots = boots, .pieces = pieces, .seed = o->seed};
    /* Fewer than 2^22 draws (a few milliseconds) stay on this thread. */
    parallel(n_pieces, draws < 4194304.0 ? 1 : threads_of(o), piece_work, &p);
    free(pieces);
}

kbc_verdict kbc_compare_judge(const kbc_change *c, double threshold)
{
    /* A side known only to within +-N% cannot show a change smaller than
       N%: the larger noise stands in for the threshold, and a row that does
       not clear it is noisy rather than "no change" (which would claim
       what the samples cannot tell). */
    double noise = 0;
    if (isfinite(c->base_noise) && c->base_noise > noise)
        noise = c->base_noise;
    if (isfinite(c->new_noise) && c->new_noise > noise)
        noise = c->new_noise;
    double m = noise > threshold ? noise : threshold;
    if (c->lo > 1 + m)
        return KBC_SLOWER;
    if (c->hi < 1 - m)
        return KBC_FASTER;
    return noise > threshold ? KBC_NOISY : KBC_NO_CHANGE;
}

int kbc_compare_significant(const kbc_change *c)
{
    return isfinite(c->lo) && isfinite(c->hi) && (c->lo > 1 || c->hi < 1);
}

double kbc_normal_quantile(double alpha)
{
    /* Bisection on P(|Z| > z) = erfc(z / sqrt 2), which falls from 1 at
       z = 0: 200 halvings reach the last bit. */
    double lo = 0, hi = 40;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (erfc(mid / sqrt(2.0)) > alpha)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* The verdict of one comparison from its B ratios. */
static void finish(kbc_change *out, double *ratios, const kbc_compare_opts *o)
{
    unsigned B = o->resamples;
    /* The percentile interval: the alpha/2 and 1 - alpha/2 quantiles of the
       resampled ratios (lowest and highest index that keeps alpha/2 of the
       resamples outside on each side). */
    size_t lo = (size_t)floor(o->alpha / 2 * B);
    size_t hi = (size_t)ceil((1 - o->alpha / 2) * B);
    if (hi > 0)
        hi--;
    if (lo >= B)
        lo = B - 1;
    if (hi >= B)
        hi = B - 1;
    out->lo = select_kth(ratios, B, lo);
    out->hi = select_kth(ratios, B, hi);
    out->bootstrap = 1;
    out->verdict = kbc_compare_judge(out, o->threshold);
}

/* The spread of log(median) of the sorted x[0..n): the distribution-free
   interval of the median (the order statistics at ranks n/2 -+ z sqrt(n) / 2,
   the normal approximation of the binomial) as a standard error. */
static double log_median_se(const double *x, size_t n, double z)
{
    double half = z / 2 * sqrt((double)n);
    double l = floor((double)n / 2 - half), h = ceil((double)n / 2 + half);
    size_t li = l < 0 ? 0 : (size_t)l, hi = h > (double)(n - 1) ? n - 1 : (size_t)h;
    if (!(x[li] > 0))
        return INFINITY;
    return (log(x[hi]) - log(x[li])) / (2 * z);
}

/* The interval of the ratio for sides too large to resample cheaply: each
   median's order-statistic interval as a standard error of its logarithm,
   the two added in quadrature (the sides are independent), around the
   ratio of the medians. */
static void order_interval(kbc_change *c, const double *a, size_t na, const double *b, size_t nb,
                           const kbc_compare_opts *o)
{
    double z = kbc_normal_quantile(o->alpha);
    double sa = log_median_se(a, na, z), sb = log_median_se(b, nb, z);
    double w = z * sqrt(sa * sa + sb * sb);
    c->lo = c->ratio * exp(-w);
    c->hi = c->ratio * exp(w);
    c->bootstrap = 0;
    c->verdict = kbc_compare_judge(c, o->threshold);
}

typedef struct prep {
    const kbc_compare_pair *pairs;
    kbc_change *out;
    boot *sorted; /* each pair's sides, sorted (NULL when it has no bootstrap) */
    const kbc_compare_opts *o;
} prep;

/* Pair i's medians and ratio, and its sides sorted for the bootstrap. */
static void prepare(void *ctx, size_t i, void *scratch)
{
    prep *w = ctx;
    const kbc_compare_pair *p = &w->pairs[i];
    kbc_change *c = &w->out[i];
    (void)scratch;
    c->base_median = c->new_median = c->ratio = c->lo = c->hi = NAN;
    c->base_noise = c->new_noise = NAN;
    c->bootstrap = 0;
    c->verdict = KBC_UNTESTED;
    if (p->nb == 0 || p->nn == 0)
        return;
    double *a = kbc_xmalloc(p->nb * sizeof *a), *b = kbc_xmalloc(p->nn * sizeof *b);
    memcpy(a, p->base, p->nb * sizeof *a);
    memcpy(b, p->newer, p->nn * sizeof *b);
    c->base_median = median_of(a, p->nb);
    c->new_median = median_of(b, p->nn);
    if (c->base_median > 0)
        c->ratio = c->new_median / c->base_median;
    c->base_noise = kbc_median_noise(a, p->nb);
    c->new_noise = kbc_median_noise(b, p->nn);
    /* One sample has no spread to resample, and a zero median no ratio. */
    if (p->nb < 2 || p->nn < 2 || !(c->base_median > 0) || !(c->new_median > 0) ||
        w->o->resamples == 0) {
        free(a);
        free(b);
        return;
    }
    if (p->nb > w->o->boot_max || p->nn > w->o->boot_max) {
        order_interval(c, a, p->nb, b, p->nn, w->o);
        free(a);
        free(b);
        return;
    }
    w->sorted[i] = (boot){a, b, p->nb, p->nn, kbc_xmalloc(w->o->resamples * sizeof(double))};
}

void kbc_compare_many(const kbc_compare_pair *pairs, size_t n, const kbc_compare_opts *o,
                      kbc_change *out)
{
    boot *boots = kbc_xcalloc(n ? n : 1, sizeof *boots);
    size_t *of = kbc_xcalloc(n ? n : 1, sizeof *of); /* boot of pair i, or SIZE_MAX */
    /* Sorting the sides is n log n in the samples: on the threads too when
       there are many. */
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += pairs[i].nb + pairs[i].nn;
    prep w = {pairs, out, kbc_xcalloc(n ? n : 1, sizeof(boot)), o};
    parallel(n, total < 65536 ? 1 : threads_of(o), prepare, &w);
    size_t nboot = 0;
    for (size_t i = 0; i < n; i++) {
        of[i] = SIZE_MAX;
        if (w.sorted[i].a) {
            of[i] = nboot;
            boots[nboot++] = w.sorted[i];
        }
    }
    free(w.sorted);
    run_boots(boots, nboot, o);
    for (size_t i = 0; i < n; i++)
        if (of[i] != SIZE_MAX)
            finish(&out[i], boots[of[i]].ratios, o);
    for (size_t k = 0; k < nboot; k++) {
        free((void *)boots[k].a);
        free((void *)boots[k].b);
        free(boots[k].ratios);
    }
    free(boots);
    free(of);
}

void kbc_compare_samples(const double *base, size_t nb, const double *newer, size_t nn,
                         const kbc_compare_opts *o, kbc_change *out)
{
    kbc_compare_pair p = {base, nb, newer, nn};
    kbc_compare_many(&p, 1, o, out);
}

/* ---- the two files ---- */

typedef struct side {
    const char *path;
    json_t *doc;
    kbc_record *recs;
    size_t n;
    char **keys;
    size_t *order; /* rows by key, then by place: for find_key */
    kbc_diag why;  /* why it could not be loaded */
    int bad;
} side;

static void side_free(side *s)
{
    for (size_t i = 0; s->keys && i < s->n; i++)
        free(s->keys[i]);
    free(s->keys);
    free(s->order);
    kbc_records_free(s->recs, s->n);
    json_decref(s->doc);
}

static char *key_of(const kbc_record *r)
{
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    char *k = kbc_xmalloc(need);
    kbc_record_key(r, k, need);
    return k;
}

/* Rows ordered by key, rows of one key by their place in the file. */
static int by_key(const void *x, const void *y, void *keys)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    int c = strcmp(((char **)keys)[a], ((char **)keys)[b]);
    return c ? c : (a > b) - (a < b);
}

void kbc_key_order(char **keys, size_t n, size_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, n, sizeof *order, by_key, keys);
}

long kbc_key_find(char *const *keys, const size_t *order, size_t n, const char *key)
{
    /* The first of the rows with this key: the lowest place. */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(keys[order[mid]], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && strcmp(keys[order[lo]], key) == 0 ? (long)order[lo] : -1;
}

/* Loads s->path; returns 0, or -1 with s->why set. */
static int side_load(side *s)
{
    /* Parsed once: the rows and the header both come from this document. */
    s->doc = kbc_results_load(s->path, &s->why);
    if (!s->doc || kbc_results_from_json(s->doc, s->path, &s->recs, &s->n, &s->why) != 0)
        return -1;
    if (!json_is_object(json_object_get(s->doc, "kbench"))) {
        kbc_diag_set(&s->why, "%s: has no \"kbench\" object, so it is not a kbench results file.",
                     s->path);
        return -1;
    }
    s->keys = kbc_xcalloc(s->n ? s->n : 1, sizeof *s->keys);
    for (size_t i = 0; i < s->n; i++)
        s->keys[i] = key_of(&s->recs[i]);
    s->order = kbc_xcalloc(s->n ? s->n : 1, sizeof *s->order);
    kbc_key_order(s->keys, s->n, s->order);
    return 0;
}

static void *side_load_main(void *arg)
{
    side *s = arg;
    s->bad = side_load(s) != 0;
    return NULL;
}

static long find_key(const side *s, const char *key)
{
    return kbc_key_find(s->keys, s->order, s->n, key);
}

/* Text as a JSON string, made UTF-8 first (a path from the command line,
   a warning cut inside a character): jansson makes no string otherwise. */
static json_t *text_json(const char *s)
{
    char *fixed = kbc_text_utf8(s);
    json_t *v = json_string(fixed ? fixed : s);
    free(fixed);
    return v;
}

/* A JSON scalar as text, "none" for null or absent. */
static void scalar_text(const json_t *v, char *buf, size_t n)
{
    if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    else
        snprintf(buf, n, "none");
}

/* Two experiments' measurement settings are equal when every key is,
   where a file written before batch mode (no "batch") counts as "off". */
static int measure_equal(const json_t *a, const json_t *b)
{
    json_t *x = json_is_object(a) ? json_copy((json_t *)a) : NULL;
    json_t *y = json_is_object(b) ? json_copy((json_t *)b) : NULL;
    if (!x || !y) {
        json_decref(x);
        json_decref(y);
        return json_equal(a, b);
    }
    if (!json_object_get(x, "batch"))
        json_object_set_new(x, "batch", json_string("off"));
    if (!json_object_get(y, "batch"))
        json_object_set_new(y, "batch", json_string("off"));
    int eq = json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return eq;
}

/* The machine and configuration differences, one sentence each, into a
   JSON array of strings. */
static json_t *differences(const side *a, const side *b)
{
    /* optional: a field that older files lack; it is compared only when
       both files have it, so that an old file does not differ in it. */
    static const struct {
        const char *what, *obj, *sub, *key;
        int optional;
    } fields[] = {
        {"kbench version", "kbench", NULL, "version", 0},
        {"kbench revision", "kbench", NULL, "git", 0},
        {"host", "machine", NULL, "host", 0},
        {"GPU", "machine", NULL, "gpu", 0},
        {"compute capability", "machine", NULL, "cc", 0},
        {"driver", "machine", NULL, "driver_version_string", 0},
        {"runtime", "machine", NULL, "runtime_version_string", 0},
        {"SM clock (kHz)", "machine", "clocks_khz", "sm", 0},
        {"memory clock (kHz)", "machine", "clocks_khz", "memory", 0},
        {"maximum SM clock (MHz, NVML)", "machine", "nvml", "sm_max_mhz", 1},
        {"maximum memory clock (MHz, NVML)", "machine", "nvml", "mem_max_mhz", 1},
    };
    json_t *out = json_array();
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        const json_t *x = json_object_get(a->doc, fields[i].obj);
        const json_t *y = json_object_get(b->doc, fields[i].obj);
        if (fields[i].sub) {
            x = json_object_get(x, fields[i].sub);
            y = json_object_get(y, fields[i].sub);
        }
        x = json_object_get(x, fields[i].key);
        y = json_object_get(y, fields[i].key);
        if (fields[i].optional && (!x || !y || json_is_null(x) || json_is_null(y)))
            continue;
        char tx[256], ty[256];
        scalar_text(x, tx, sizeof tx);
        scalar_text(y, ty, sizeof ty);
        if (strcmp(tx, ty) != 0) {
            char *s = kbc_xasprintf("%s differs: '%s' in base, '%s' in new", fields[i].what, tx, ty);
            json_array_append_new(out, text_json(s));
            free(s);
        }
    }
    /* Per experiment of both: the measurement settings and the plugin file. */
    const json_t *ea = json_object_get(json_object_get(a->doc, "config"), "experiments");
    const json_t *eb = json_object_get(json_object_get(b->doc, "config"), "experiments");
    size_t i, k;
    const json_t *x, *y;
    json_array_foreach(ea, i, x)
    {
        const char *name = json_string_value(json_object_get(x, "name"));
        json_array_foreach(eb, k, y)
        {
            const char *nb = json_string_value(json_object_get(y, "name"));
            if (!name || !nb || strcmp(name, nb) != 0)
                continue;
            if (!measure_equal(json_object_get(x, "measure"), json_object_get(y, "measure"))) {
                char *s = kbc_xasprintf("experiment '%s': the measurement settings differ", name);
                json_array_append_new(out, text_json(s));
                free(s);
            }
            char tx[256], ty[256];
            scalar_text(json_object_get(x, "plugin_file"), tx, sizeof tx);
            scalar_text(json_object_get(y, "plugin_file"), ty, sizeof ty);
            if (strcmp(tx, ty) != 0) {
                char *s = kbc_xasprintf("experiment '%s': plugin file differs: '%s' in base, '%s' "
                                        "in new",
                                        name, tx, ty);
                json_array_append_new(out, text_json(s));
                free(s);
            }
        }
    }
    return out;
}

/* ---- output ---- */

static const char *fmt_pct(double ratio, char *buf, size_t n)
{
    if (!isfinite(ratio))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%+.1f%%", (ratio - 1) * 100);
    return buf;
}

typedef struct cmp_row {
    const char *key;   /* the stable key */
    char *shown;       /* the key as the table shows it (see short_keys) */
    kbc_change c;
    const char *note;  /* why untested, or NULL */
    int lost;          /* crashed or timed out in new: fails the compare */
    const kbc_record *rec; /* the base side's row */
} cmp_row;

/* A row that did not run on a side (skipped, error): the table folds such
   rows into one line per experiment instead of a line each. */
static int folded(const cmp_row *r)
{
    return r->c.verdict == KBC_UNTESTED && !r->lost && r->note &&
           strncmp(r->note, "did not run", 11) == 0;
}

/* The fold lines: per experiment, in order of first appearance, the
   variants (each once) of its rows that did not run. */
static void print_folds(FILE *out, int md, cmp_row *const *rows, size_t nr)
{
    char *done = kbc_xcalloc(nr ? nr : 1, 1);
    for (size_t r = 0; r < nr; r++) {
        if (done[r] || !folded(rows[r]))
            continue;
        const char *exp = rows[r]->rec->experiment;
        size_t count = 0;
        fprintf(out, "%s%s: did not run on a side (untested): ", md ? "- " : "  ",
                kbc_text_shown(md, exp));
        int k = 0;
        for (size_t q = r; q < nr; q++) {
            if (done[q] || !folded(rows[q]) || strcmp(rows[q]->rec->experiment, exp) != 0)
                continue;
            done[q] = 1;
            count++;
            int seen = 0; /* the variant named already */
            for (size_t p = r; p < q && !seen; p++)
                seen = folded(rows[p]) && strcmp(rows[p]->rec->experiment, exp) == 0 &&
                       strcmp(rows[p]->rec->variant, rows[q]->rec->variant) == 0;
            if (!seen)
                fprintf(out, "%s%s", k++ ? ", " : "", kbc_text_shown(md, rows[q]->rec->variant));
        }
        fprintf(out, " (%zu row%s)\n", count, count == 1 ? "" : "s");
    }
    free(done);
}

/* The key a reader needs: experiment/swept parameters/variant, where the
   swept parameters are those the file marks as swept (the others are the
   same on every row of the experiment and only make the line long).  When
   two rows would read the same, every row keeps its whole key. */
static char *short_key(const kbc_record *r)
{
    size_t cap = strlen(r->experiment) + strlen(r->variant) + 8, used = 0;
    for (uint32_t i = 0; i < r->n_params; i++)
        if (r->params[i].swept)
            cap += strlen(r->params[i].name) + strlen(r->params[i].text) + 2;
    char *k = kbc_xmalloc(cap);
    used += (size_t)snprintf(k, cap, "%s/", r->experiment);
    int first = 1;
    for (uint32_t i = 0; i < r->n_params; i++)
        if (r->params[i].swept) {
            used += (size_t)snprintf(k + used, cap - used, "%s%s=%s", first ? "" : ",",
                                     r->params[i].name, r->params[i].text);
            first = 0;
        }
    snprintf(k + used, cap - used, "%s%s", first ? "" : "/", r->variant);
    return k;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static void short_keys(cmp_row *rows, size_t nr, const kbc_record *const *recs)
{
    char **sorted = kbc_xcalloc(nr ? nr : 1, sizeof *sorted);
    for (size_t r = 0; r < nr; r++)
        sorted[r] = rows[r].shown = short_key(recs[r]);
    qsort(sorted, nr, sizeof *sorted, cmp_str);
    int clash = 0;
    for (size_t r = 1; r < nr && !clash; r++)
        clash = strcmp(sorted[r - 1], sorted[r]) == 0;
    free(sorted);
    if (!clash)
        return;
    for (size_t r = 0; r < nr; r++) {
        free(rows[r].shown);
        rows[r].shown = kbc_xasprintf("%s", rows[r].key);
    }
}

/* --sort change: the largest slowdown first, rows without a ratio last,
   rows of one change in file order. */
static int by_change(const void *x, const void *y)
{
    const cmp_row *a = *(const cmp_row *const *)x, *b = *(const cmp_row *const *)y;
    int fa = isfinite(a->c.ratio), fb = isfinite(b->c.ratio);
    if (fa != fb)
        return fb - fa;
    if (fa && a->c.ratio != b->c.ratio)
        return a->c.ratio < b->c.ratio ? 1 : -1;
    return (a > b) - (a < b);
}

/* Whether --only-changed keeps the row: a verdict other than no change,
   or a new run that lost it. */
static int changed(const cmp_row *r)
{
    return r->c.verdict == KBC_SLOWER || r->c.verdict == KBC_FASTER ||
           r->c.verdict == KBC_NOISY || r->lost;
}

static int ran(const kbc_record *r)
{
    return r->outcome == KBC_PASS || r->outcome == KBC_FAIL;
}

static void print_text(FILE *out, int md, const side *a, const side *b, const kbc_compare_opts *o,
                       const json_t *warn, cmp_row *const *rows, size_t nr, char **only_a,
                       size_t na, char **only_b, size_t nb, const size_t *count, int code)
{
    size_t i;
    const json_t *w;
    /* Names and keys come from the files: kbc_text_visible() in the table;
       in markdown, a code span (its pipes escaped) for a key and
       kbc_text_md() for other text. */
    json_array_foreach(warn, i, w) fprintf(out, "%swarning: %s\n", md ? "> " : "",
                                           kbc_text_shown(md, json_string_value(w)));
    if (json_array_size(warn))
        fprintf(out, "\n");
    double conf = (1 - o->alpha) * 100;
    fprintf(out,
            "%sbase %s, new %s\n%schange of the median time; %.4g%% interval of the ratio of "
            "medians (%u bootstrap resamples;\norder statistics above %zu samples a side); "
            "threshold %.4g%%\n",
            md ? "" : "compare: ", kbc_text_shown(md, a->path), kbc_text_shown(md, b->path),
            md ? "\n" : "", conf, o->resamples, o->boot_max, o->threshold * 100);
    fprintf(out, "\n");
    int kw = 3;
    size_t n_folded = 0;
    for (size_t r = 0; r < nr; r++)
        n_folded += folded(rows[r]);
    for (size_t r = 0; r < nr; r++)
        if (!folded(rows[r]) && (int)strlen(kbc_text_visible(rows[r]->shown)) > kw)
            kw = (int)strlen(kbc_text_visible(rows[r]->shown));
    char ci_head[32];
    snprintf(ci_head, sizeof ci_head, "%.4g%% interval", conf);
    if (md) {
        fprintf(out, "| row | base | new | change | %s | significant | verdict |\n", ci_head);
        fprintf(out, "|---|---:|---:|---:|---|---|---|\n");
    } else if (nr > n_folded) {
        fprintf(out, "  %-*s %9s %9s %8s  %-18s %-3s %s\n", kw, "row", "base", "new",
                "change", ci_head, "sig", "verdict");
    }
    for (size_t r = 0; r < nr; r++) {
        if (folded(rows[r]))
            continue;
        const kbc_change *c = &rows[r]->c;
        char t1[32], t2[32], ch[32], lo[32], hi[32], ci[80], verdict[200];
        kbc_human_seconds(c->base_median, t1, sizeof t1);
        kbc_human_seconds(c->new_median, t2, sizeof t2);
        fmt_pct(c->ratio, ch, sizeof ch);
        if (isfinite(c->lo))
            snprintf(ci, sizeof ci, "[%s, %s]", fmt_pct(c->lo, lo, sizeof lo),
                     fmt_pct(c->hi, hi, sizeof hi));
        else
            snprintf(ci, sizeof ci, "-");
        const char *sig = isfinite(c->lo) ? (kbc_compare_significant(c) ? "yes" : "no") : "-";
        if (rows[r]->note)
            snprintf(verdict, sizeof verdict, "untested: %s", rows[r]->note);
        else if (c->verdict == KBC_NOISY)
            snprintf(verdict, sizeof verdict, "noisy (%.1f%%)",
                     100 * (c->base_noise > c->new_noise ? c->base_noise : c->new_noise));
        else
            snprintf(verdict, sizeof verdict, "%s", kbc_verdict_name(c->verdict));
        if (md) {
            fputs("| ", out);
            kbc_text_md_code(out, rows[r]->shown, 1);
            fprintf(out, " | %s | %s | %s | %s | %s | %s%s%s |\n", t1, t2, ch, ci, sig,
                    c->verdict == KBC_SLOWER ? "**" : "", verdict,
                    c->verdict == KBC_SLOWER ? "**" : "");
        } else {
            fprintf(out, "  %-*s %9s %9s %8s  %-18s %-3s %s\n", kw,
                    kbc_text_visible(rows[r]->shown), t1, t2, ch, ci, sig, verdict);
        }
    }
    if (n_folded) {
        fprintf(out, "\n");
        print_folds(out, md, rows, nr);
    }
    if (na || nb)
        fprintf(out, "\n");
    for (int in_new = 0; in_new < 2; in_new++)
        for (size_t k = 0; k < (in_new ? nb : na); k++) {
            const char *key = in_new ? only_b[k] : only_a[k];
            fprintf(out, "%sonly in %s: ", md ? "- " : "", in_new ? "new" : "base");
            if (md)
                kbc_text_md_code(out, key, 0);
            else
                fputs(kbc_text_visible(key), out);
            fputc('\n', out);
        }
    fprintf(out,
            "\nsummary: %zu slower, %zu faster, %zu noisy, %zu no change, %zu untested, %zu only "
            "in base, %zu only in new; exit code %d\n",
            count[KBC_SLOWER], count[KBC_FASTER], count[KBC_NOISY], count[KBC_NO_CHANGE],
            count[KBC_UNTESTED], na, nb, code);
    if (o->only_changed)
        fprintf(out, "%s(--only-changed: the rows with no change or untested are not listed)\n",
                md ? "\n" : "");
    if (count[KBC_NOISY])
        fprintf(out,
                "%snoisy (N%%): a side's median is known only to within N%%, more than the %.4g%% "
                "threshold\n(N: the half-width of its 95%% interval), so a change inside it "
                "cannot be told;\nrerun with more runs or a noise target\n",
                md ? "\n" : "", o->threshold * 100);
}

static json_t *num_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}


static void print_json(FILE *out, const side *a, const side *b, const kbc_compare_opts *o,
                       json_t *warn, cmp_row *const *rows, size_t nr, char **only_a, size_t na,
                       char **only_b, size_t nb, const size_t *count, int code)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "base", text_json(a->path));
    json_object_set_new(doc, "new", text_json(b->path));
    json_object_set_new(doc, "threshold", json_real(o->threshold));
    json_object_set_new(doc, "alpha", json_real(o->alpha));
    json_object_set_new(doc, "resamples", json_integer(o->resamples));
    json_object_set_new(doc, "warnings", json_incref(warn));
    json_t *rs = json_array();
    for (size_t r = 0; r < nr; r++) {
        const kbc_change *c = &rows[r]->c;
        json_t *x = json_object();
        json_object_set_new(x, "key", text_json(rows[r]->key));
        json_object_set_new(x, "row", text_json(rows[r]->shown));
        json_object_set_new(x, "base_median_s", num_or_null(c->base_median));
        json_object_set_new(x, "new_median_s", num_or_null(c->new_median));
        json_object_set_new(x, "ratio", num_or_null(c->ratio));
        json_object_set_new(x, "ratio_low", num_or_null(c->lo));
        json_object_set_new(x, "ratio_high", num_or_null(c->hi));
        json_object_set_new(x, "interval", json_string(!isfinite(c->lo) ? "none"
                                                       : c->bootstrap ? "bootstrap"
                                                                      : "order statistics"));
        json_object_set_new(x, "significant", isfinite(c->lo)
                                                  ? json_boolean(kbc_compare_significant(c))
                                                  : json_null());
        json_object_set_new(x, "base_noise", num_or_null(c->base_noise));
        json_object_set_new(x, "new_noise", num_or_null(c->new_noise));
        json_object_set_new(x, "verdict", json_string(kbc_verdict_name(c->verdict)));
        json_object_set_new(x, "note", rows[r]->note ? json_string(rows[r]->note) : json_null());
        json_array_append_new(rs, x);
    }
    json_object_set_new(doc, "rows", rs);
    json_t *oa = json_array(), *ob = json_array();
    for (size_t k = 0; k < na; k++)
        json_array_append_new(oa, text_json(only_a[k]));
    for (size_t k = 0; k < nb; k++)
        json_array_append_new(ob, text_json(only_b[k]));
    json_object_set_new(doc, "only_in_base", oa);
    json_object_set_new(doc, "only_in_new", ob);
    json_t *s = json_object();
    json_object_set_new(s, "slower", json_integer((json_int_t)count[KBC_SLOWER]));
    json_object_set_new(s, "faster", json_integer((json_int_t)count[KBC_FASTER]));
    json_object_set_new(s, "noisy", json_integer((json_int_t)count[KBC_NOISY]));
    json_object_set_new(s, "no_change", json_integer((json_int_t)count[KBC_NO_CHANGE]));
    json_object_set_new(s, "untested", json_integer((json_int_t)count[KBC_UNTESTED]));
    json_object_set_new(doc, "summary", s);
    json_object_set_new(doc, "exit_code", json_integer(code));
    json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    fputc('\n', out);
    json_decref(doc);
}

int kbc_cmd_compare(const char *base_path, const char *new_path, const kbc_compare_opts *o,
                    FILE *out, FILE *err)
{
    side a = {.path = base_path}, b = {.path = new_path};
    /* Both files are parsed at once, the new one on a second thread
       (jansson's hash seed is set first, here, as its threads need). */
    json_object_seed(0);
    pthread_t t;
    int threaded = pthread_create(&t, NULL, side_load_main, &b) == 0;
    int bad_a = side_load(&a) != 0;
    int bad_b = threaded ? (pthread_join(t, NULL), b.bad) : side_load(&b) != 0;
    if (bad_a || bad_b) {
        fprintf(err, "kbench: %s\n", bad_a ? a.why.msg : b.why.msg);
        side_free(&a);
        side_free(&b);
        return KBC_EXIT_USAGE;
    }
    json_t *warn = differences(&a, &b);
    cmp_row *rows = kbc_xcalloc(a.n ? a.n : 1, sizeof *rows);
    char **only_a = kbc_xcalloc(a.n ? a.n : 1, sizeof *only_a);
    char **only_b = kbc_xcalloc(b.n ? b.n : 1, sizeof *only_b);
    size_t nr = 0, na = 0, nb = 0, count[KBC_N_VERDICTS] = {0}, lost_new = 0;
    const kbc_record **rec_of = kbc_xcalloc(a.n ? a.n : 1, sizeof *rec_of);
    /* The rows both ran, compared all at once (their resamples shared
       among the threads). */
    kbc_compare_pair *pairs = kbc_xcalloc(a.n ? a.n : 1, sizeof *pairs);
    kbc_change *changes = kbc_xcalloc(a.n ? a.n : 1, sizeof *changes);
    size_t np = 0;
    for (size_t i = 0; i < a.n; i++) {
        long j = find_key(&b, a.keys[i]);
        if (j >= 0 && ran(&a.recs[i]) && ran(&b.recs[j]) &&
            !kbc_integrity_flagged(&a.recs[i]) && !kbc_integrity_flagged(&b.recs[j]))
            pairs[np++] = (kbc_compare_pair){a.recs[i].samples, a.recs[i].n_samples,
                                             b.recs[j].samples, b.recs[j].n_samples};
    }
    kbc_compare_many(pairs, np, o, changes);
    np = 0;
    for (size_t i = 0; i < a.n; i++) {
        long j = find_key(&b, a.keys[i]);
        if (j < 0) {
            only_a[na++] = a.keys[i];
            continue;
        }
        const kbc_record *x = &a.recs[i], *y = &b.recs[j];
        rec_of[nr] = &a.recs[i];
        cmp_row *r = &rows[nr++];
        r->key = a.keys[i];
        r->rec = &a.recs[i];
        if (!ran(x) || !ran(y)) {
            kbc_compare_samples(NULL, 0, NULL, 0, o, &r->c);
            r->note = !ran(x) ? "did not run in base" : "did not run in new";
            /* A new row that crashed or timed out is a failure of the new
               run, not a row without a verdict: it fails the compare. */
            if (y->outcome == KBC_CRASHED || y->outcome == KBC_TIMEOUT) {
                r->note = y->outcome == KBC_CRASHED ? "crashed in new" : "timed out in new";
                r->lost = 1;
                lost_new++;
            }
        } else if (kbc_integrity_flagged(x) || kbc_integrity_flagged(y)) {
            /* Its time is not of the work it verified (docs/integrity.md):
               no verdict, and a new run that has one fails the compare. */
            kbc_compare_samples(NULL, 0, NULL, 0, o, &r->c);
            r->note = kbc_integrity_flagged(y) ? "flagged by the integrity checks in new"
                                               : "flagged by the integrity checks in base";
            if (kbc_integrity_flagged(y)) {
                r->lost = 1;
                lost_new++;
            }
        } else {
            r->c = changes[np++];
            if (r->c.verdict == KBC_UNTESTED)
                r->note = (x->n_samples < 2 || y->n_samples < 2)
                              ? "fewer than 2 samples on a side"
                              : "a median of zero";
        }
        count[r->c.verdict]++;
    }
    for (size_t j = 0; j < b.n; j++)
        if (find_key(&a, b.keys[j]) < 0)
            only_b[nb++] = b.keys[j];
    /* Noisy rows do not fail the compare: they say the measurement cannot
       tell, which a gate should report rather than act on. */
    int code = count[KBC_SLOWER] || lost_new ? KBC_EXIT_FAILED : KBC_EXIT_OK;
    short_keys(rows, nr, rec_of);
    cmp_row **shown = kbc_xcalloc(nr ? nr : 1, sizeof *shown);
    size_t ns = 0;
    for (size_t r = 0; r < nr; r++)
        if (!o->only_changed || changed(&rows[r]))
            shown[ns++] = &rows[r];
    if (o->sort == KBC_SORT_CHANGE)
        qsort(shown, ns, sizeof *shown, by_change);
    if (o->format == KBC_CMP_JSON)
        print_json(out, &a, &b, o, warn, shown, ns, only_a, na, only_b, nb, count, code);
    else
        print_text(out, o->format == KBC_CMP_MARKDOWN, &a, &b, o, warn, shown, ns, only_a, na,
                   only_b, nb, count, code);
    for (size_t r = 0; r < nr; r++)
        free(rows[r].shown);
    free(shown);
    free(rec_of);
    json_decref(warn);
    free(pairs);
    free(changes);
    free(rows);
    free(only_a);
    free(only_b);
    side_free(&a);
    side_free(&b);
    return code;
}
