/* compare.c -- see compare.h. */
#define _GNU_SOURCE
#include "compare.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"
#include "text.h"
#include "util.h"

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

const char *kbc_energy_verdict_name(kbc_verdict v)
{
    return v == KBC_FASTER ? "less energy" : v == KBC_SLOWER ? "more energy" : kbc_verdict_name(v);
}

const char *kbc_verdict_sgr(kbc_verdict v)
{
    return v == KBC_SLOWER     ? KBC_SGR_BAD
           : v == KBC_FASTER   ? KBC_SGR_GOOD
           : v == KBC_NOISY    ? KBC_SGR_WARN
           : v == KBC_UNTESTED ? KBC_SGR_DIM
                               : NULL;
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

/* ---- finding rows by key ---- */

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
