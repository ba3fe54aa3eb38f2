/*
 * kit_inputs.c -- inputs on plugin.h's counter-based generator, filled in
 * parallel.  Element i depends on (seed, stream, i) alone, so the thread
 * count never changes a value.
 *
 * The uniform and exact fills never produce zero: a draw that gives zero
 * (or, after rounding to the element type, falls outside [lo, hi)) is
 * redrawn from a second counter sequence, and after KBK_REDRAWS attempts
 * replaced by a fixed non-zero value of the range.  Both depend only on
 * (seed, stream, i).  The integer fills (u8, u32 in a range, Zipf) produce
 * zero where it is a value of their range: a key or a count of 0 is a
 * valid input, and one that a wrong answer cannot hide behind.
 */
#include <float.h>
#include <math.h>

#include "kit_internal.h"

#define KBK_FILL_GRAIN (1u << 16) /* elements per thread worth starting */
#define KBK_REDRAWS 16

/* Draw number `attempt` for element i: attempt 0 is kb_rand_u64 itself. */
static uint64_t kbk_draw(uint64_t seed, uint32_t stream, uint64_t i, int attempt)
{
    if (attempt == 0)
        return kb_rand_u64(seed, stream, i);
    return kb_rand_u64(kb_mix64(seed + 0x51ed2701u * (uint64_t)attempt), stream, i);
}

/* A value in [0, span) from 64 random bits: the high 32 bits scaled, which
   is uniform enough for spans far below 2^32 and exact in 64 bits. */
static uint64_t kbk_below(uint64_t bits, uint64_t span)
{
    return ((bits >> 32) * span) >> 32;
}

static double kbk_unit(uint64_t bits)
{
    return (double)(bits >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct kbk_fill_job {
    void *dst;
    uint64_t seed;
    uint32_t stream;
    double lo, hi;          /* uniform floats                       */
    double fallback;        /* a non-zero value of the range        */
    int64_t ilo;            /* uniform i32: lo, span; exact: k     */
    uint64_t span;
    int32_t k;
} kbk_fill_job;

static int kbk_fill_uniform_f32_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    const kbk_fill_job *j = ctx;
    float *dst = j->dst;
    for (uint64_t i = begin; i < end; i++) {
        float f = (float)j->fallback;
        for (int a = 0; a < KBK_REDRAWS; a++) {
            float x = (float)(j->lo + (j->hi - j->lo) * kbk_unit(kbk_draw(j->seed, j->stream, i, a)));
            if (x != 0.0f && x >= j->lo && x < j->hi) {
                f = x;
                break;
            }
        }
        dst[i] = f;
    }
    return KB_OK;
}

static int kbk_fill_uniform_f64_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    const kbk_fill_job *j = ctx;
    double *dst = j->dst;
    for (uint64_t i = begin; i < end; i++) {
        double f = j->fallback;
        for (int a = 0; a < KBK_REDRAWS; a++) {
            double x = j->lo + (j->hi - j->lo) * kbk_unit(kbk_draw(j->seed, j->stream, i, a));
            if (x != 0.0 && x >= j->lo && x < j->hi) {
                f = x;
                break;
            }
        }
        dst[i] = f;
    }
    return KB_OK;
}

static int kbk_fill_uniform_i32_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    const kbk_fill_job *j = ctx;
    int32_t *dst = j->dst;
    for (uint64_t i = begin; i < end; i++) {
        int64_t v = (int64_t)j->fallback;
        for (int a = 0; a < KBK_REDRAWS; a++) {
            int64_t x = j->ilo + (int64_t)kbk_below(kbk_draw(j->seed, j->stream, i, a), j->span);
            if (x != 0) {
                v = x;
                break;
            }
        }
        dst[i] = (int32_t)v;
    }
    return KB_OK;
}

/* One of the 2k values -k .. -1, 1 .. k, uniformly. */
static int32_t kbk_exact_value(uint64_t bits, int32_t k)
{
    int64_t m = (int64_t)kbk_below(bits, 2 * (uint64_t)k);
    return (int32_t)(m < k ? m - k : m - k + 1);
}

static int kbk_fill_exact_f32_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    const kbk_fill_job *j = ctx;
    float *dst = j->dst;
    for (uint64_t i = begin; i < end; i++)
        dst[i] = (float)kbk_exact_value(kb_rand_u64(j->seed, j->stream, i), j->k);
    return KB_OK;
}

static int kbk_fill_exact_f64_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    const kbk_fill_job *j = ctx;
    double *dst = j->dst;
    for (uint64_t i = begin; i < end; i++)
        dst[i] = (double)kbk_exact_value(kb_rand_u64(j->seed, j->stream, i), j->k);
    return KB_OK;
}

/* The high 64 bits of a * b: (bits * span) >> 64 maps 64 random bits to
   [0, span) with a bias of at most span / 2^64 per value. */
static uint64_t kbk_mulhi(uint64_t a, uint64_t b)
{
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

static int kbk_fill_u8_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    const kbk_fill_job *j = ctx;
    uint8_t *dst = j->dst;
    for (uint64_t i = begin; i < end; i++)
        dst[i] = (uint8_t)(kb_rand_u64(j->seed, j->stream, i) >> 56);
    return KB_OK;
}

static int kbk_fill_u32_range_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    const kbk_fill_job *j = ctx;
    uint32_t *dst = j->dst;
    for (uint64_t i = begin; i < end; i++)
        dst[i] = (uint32_t)((uint64_t)j->ilo +
                            kbk_mulhi(kb_rand_u64(j->seed, j->stream, i), j->span));
    return KB_OK;
}

/*
 * Zipf over [0, N): value k has probability (k+1)^-s / Z, with
 * Z = sum_{m=1..N} m^-s.  Write m = k + 1 and h(x) = x^-s.
 *
 * Rejection from a hat whose integral inverts in closed form.  The hat
 * gives m = 1 a point mass of h(1) = 1, exactly its weight, and each
 * m >= 2 the cell [m - 1/2, m + 1/2) under h, whose area
 * A_m = G(m + 1/2) - G(m - 1/2), with G(x) = integral of h from 3/2 to x.
 * h is convex, so A_m >= h(m) (the mean of a convex function over an
 * interval is at least its value at the midpoint).  One attempt draws v
 * uniform in [0, 1 + C), C = G(N + 1/2):
 *   - v < 1: the point mass, m = 1, accepted;
 *   - else g = v - 1, x = G^-1(g), m = round(x): g is uniform within
 *     cell m, and the attempt is accepted when g - G(m - 1/2) < h(m),
 *     with probability h(m) / A_m.
 * Cell m is then taken with probability proportional to
 * A_m * h(m) / A_m = h(m): exactly Zipf.  Every attempt is accepted with
 * probability at least 9/16: for m >= 2, A_m <= h(m - 1/2) (h falls), so
 * h(m) / A_m >= ((m - 1/2) / m)^s >= (3/4)^s, at least 9/16 for s <= 2;
 * for s >= 2, C <= (3/2)^(1-s) / (s - 1) <= 2/3 and the point mass alone
 * is accepted with probability 1 / (1 + C) >= 3/5.  After KBK_ZIPF_TRIES
 * rejected attempts (probability below (7/16)^64 < 1e-22) the last
 * candidate is kept.  Attempt a of element i draws from kbk_draw(seed,
 * stream, i, a), so the value is a function of (seed, stream, i) alone.
 *
 * G in closed form, with q = 1 - s, a = 3/2, L = ln(x / a):
 *   G(x) = a^q (e^(qL) - 1) / q = a^q L e1(qL),  e1(t) = expm1(t) / t,
 * and its inverse, r = g / a^q:
 *   L = log1p(q r) / q = r l1(q r),  l1(t) = log1p(t) / t,  x = a e^L,
 * which holds for every s including s = 1 (e1(0) = l1(0) = 1) without the
 * cancellation of x^q - a^q near s = 1.
 */
#define KBK_ZIPF_TRIES 64

static double kbk_e1(double t)
{
    return t == 0.0 ? 1.0 : expm1(t) / t;
}

static double kbk_l1(double t)
{
    return t == 0.0 ? 1.0 : log1p(t) / t;
}

/* G(x) above, for x >= 3/2. */
static double kbk_zipf_g(double x, double q, double aq)
{
    double L = log(x / 1.5);
    return aq * L * kbk_e1(q * L);
}

static double kbk_zipf_ginv(double g, double q, double aq)
{
    double r = g / aq;
    return 1.5 * exp(r * kbk_l1(q * r));
}

static int kbk_fill_zipf_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    const kbk_fill_job *j = ctx;
    uint32_t *dst = j->dst;
    const double s = j->lo, q = 1.0 - s, aq = pow(1.5, q);
    const double c = j->hi; /* C = G(N + 1/2) */
    const uint64_t nv = j->span;
    for (uint64_t i = begin; i < end; i++) {
        uint64_t m = 1;
        for (int a = 0; a < KBK_ZIPF_TRIES; a++) {
            double v = kbk_unit(kbk_draw(j->seed, j->stream, i, a)) * (1.0 + c);
            if (v < 1.0) {
                m = 1;
                break;
            }
            double g = v - 1.0;
            double x = kbk_zipf_ginv(g, q, aq);
            /* Rounding may put x a hair outside [3/2, N + 1/2). */
            m = x < 2.5 ? 2 : x >= (double)nv ? nv : (uint64_t)(x + 0.5);
            if (m > nv)
                m = nv;
            if (g - kbk_zipf_g((double)m - 0.5, q, aq) < pow((double)m, -s))
                break;
        }
        dst[i] = (uint32_t)(m - 1);
    }
    return KB_OK;
}

static int kbk_fill(kb_host *host, uint64_t n, kbk_range_fn fn, kbk_fill_job *j)
{
    return kbk__parallel_run(kbk__threads_for(host, n, KBK_FILL_GRAIN), n, fn, j);
}

int kbk_fill_uniform_f32(kb_host *host, float *dst, uint64_t n, uint32_t stream, double lo,
                         double hi)
{
    /* The fallback: the smallest float >= lo, or the smallest positive one
       when that is zero; it must lie below hi. */
    float fb = (float)lo;
    if (fb < lo)
        fb = nextafterf(fb, INFINITY);
    if (fb == 0.0f)
        fb = nextafterf(0.0f, INFINITY);
    if (!(lo < hi) || !(fb < hi) || !isfinite(lo) || !isfinite(hi))
        return host->fail(host, KB_EINVAL,
                          "kbk_fill_uniform_f32: [%g, %g) holds no non-zero float", lo, hi);
    kbk_fill_job j = {.dst = dst, .seed = host->seed, .stream = stream, .lo = lo, .hi = hi,
                      .fallback = fb};
    return kbk_fill(host, n, kbk_fill_uniform_f32_range, &j);
}

int kbk_fill_uniform_f64(kb_host *host, double *dst, uint64_t n, uint32_t stream, double lo,
                         double hi)
{
    double fb = lo != 0.0 ? lo : nextafter(0.0, INFINITY);
    if (!(lo < hi) || !(fb < hi) || !isfinite(lo) || !isfinite(hi))
        return host->fail(host, KB_EINVAL,
                          "kbk_fill_uniform_f64: [%g, %g) holds no non-zero double", lo, hi);
    kbk_fill_job j = {.dst = dst, .seed = host->seed, .stream = stream, .lo = lo, .hi = hi,
                      .fallback = fb};
    return kbk_fill(host, n, kbk_fill_uniform_f64_range, &j);
}

int kbk_fill_uniform_i32(kb_host *host, int32_t *dst, uint64_t n, uint32_t stream, int32_t lo,
                         int32_t hi)
{
    if (!(lo < hi) || (lo == 0 && hi == 1))
        return host->fail(host, KB_EINVAL,
                          "kbk_fill_uniform_i32: [%d, %d) holds no non-zero integer", (int)lo,
                          (int)hi);
    kbk_fill_job j = {.dst = dst, .seed = host->seed, .stream = stream, .ilo = lo,
                      .span = (uint64_t)((int64_t)hi - lo), .fallback = lo != 0 ? lo : 1};
    return kbk_fill(host, n, kbk_fill_uniform_i32_range, &j);
}

int kbk_fill_exact_f32(kb_host *host, float *dst, uint64_t n, uint32_t stream, int32_t k)
{
    if (k < 1 || k > (1 << 24))
        return host->fail(host, KB_EINVAL,
                          "kbk_fill_exact_f32: k = %d; it must lie in [1, 2^24] (0 from "
                          "kbk_exact_bound means no exact input exists at this n)", (int)k);
    kbk_fill_job j = {.dst = dst, .seed = host->seed, .stream = stream, .k = k};
    return kbk_fill(host, n, kbk_fill_exact_f32_range, &j);
}

int kbk_fill_exact_f64(kb_host *host, double *dst, uint64_t n, uint32_t stream, int32_t k)
{
    if (k < 1)
        return host->fail(host, KB_EINVAL,
                          "kbk_fill_exact_f64: k = %d; it must be at least 1 (0 from "
                          "kbk_exact_bound means no exact input exists at this n)", (int)k);
    kbk_fill_job j = {.dst = dst, .seed = host->seed, .stream = stream, .k = k};
    return kbk_fill(host, n, kbk_fill_exact_f64_range, &j);
}

int kbk_fill_u8(kb_host *host, uint8_t *dst, uint64_t n, uint32_t stream)
{
    kbk_fill_job j = {.dst = dst, .seed = host->seed, .stream = stream};
    return kbk_fill(host, n, kbk_fill_u8_range, &j);
}

int kbk_fill_u32_range(kb_host *host, uint32_t *dst, uint64_t n, uint32_t stream, uint32_t lo,
                       uint32_t hi)
{
    if (lo > hi || hi == 0)
        return host->fail(host, KB_EINVAL,
                          "kbk_fill_u32_range: [%u, %u] %s", (unsigned)lo, (unsigned)hi,
                          lo > hi ? "is empty (lo is above hi)"
                                  : "holds 0 alone, and an input of zeros hides wrong answers");
    kbk_fill_job j = {.dst = dst, .seed = host->seed, .stream = stream, .ilo = lo,
                      .span = (uint64_t)hi - lo + 1};
    return kbk_fill(host, n, kbk_fill_u32_range_range, &j);
}

int kbk_fill_zipf_u32(kb_host *host, uint32_t *dst, uint64_t n, uint32_t stream,
                      uint64_t n_values, double s)
{
    if (n_values < 2 || n_values > (1ULL << 32))
        return host->fail(host, KB_EINVAL,
                          "kbk_fill_zipf_u32: %llu values; there must be 2 to 2^32 of them "
                          "(one value would make every element 0)",
                          (unsigned long long)n_values);
    if (!(s >= 0.0 && s <= KBK_ZIPF_MAX_S))
        return host->fail(host, KB_EINVAL,
                          "kbk_fill_zipf_u32: exponent s = %g; it must lie in [0, %g] (beyond, "
                          "nearly every element is 0)", s, (double)KBK_ZIPF_MAX_S);
    kbk_fill_job j = {.dst = dst, .seed = host->seed, .stream = stream, .lo = s,
                      .span = n_values};
    j.hi = kbk_zipf_g((double)n_values + 0.5, 1.0 - s, pow(1.5, 1.0 - s));
    return kbk_fill(host, n, kbk_fill_zipf_range, &j);
}

int32_t kbk_exact_bound(uint64_t n, int mantissa_bits)
{
    if (mantissa_bits < 1 || mantissa_bits > 63)
        return 0;
    if (n == 0)
        n = 1;
    uint64_t k = (1ULL << mantissa_bits) / n;
    return k > INT32_MAX ? INT32_MAX : (int32_t)k;
}
