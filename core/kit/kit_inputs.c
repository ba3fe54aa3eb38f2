/*
 * kit_inputs.c -- inputs on plugin.h's counter-based generator, filled in
 * parallel.  Element i depends on (seed, stream, i) alone, so the thread
 * count never changes a value.
 *
 * Zero is never produced: a draw that gives zero (or, after rounding to the
 * element type, falls outside [lo, hi)) is redrawn from a second counter
 * sequence, and after KBK_REDRAWS attempts replaced by a fixed non-zero value
 * of the range.  Both depend only on (seed, stream, i).
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

int32_t kbk_exact_bound(uint64_t n, int mantissa_bits)
{
    if (mantissa_bits < 1 || mantissa_bits > 63)
        return 0;
    if (n == 0)
        n = 1;
    uint64_t k = (1ULL << mantissa_bits) / n;
    return k > INT32_MAX ? INT32_MAX : (int32_t)k;
}
