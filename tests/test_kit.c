/*
 * test_kit.c -- the plugin kit (kbench/kit.h) on the CPU paths: the
 * parallel-for, the input generators, the exact-sum guarantee, tolerances
 * and comparisons, and buffers with a kb_host that has no stream (no GPU),
 * so that no CUDA function may run.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kbench/kit.h"

#include "fake_host.h"

static kb_host make_host(uint64_t seed, int threads)
{
    kb_host h = {.size = sizeof(kb_host), .abi_minor = KB_ABI_MINOR, .seed = seed,
                 .stream = NULL, .device = -1, .cpu_threads = threads, .log = test_log,
                 .fail = test_fail};
    return h;
}

/* ---- parallel-for --------------------------------------------------------- */

#define MAX_WORKERS 64

typedef struct cover {
    unsigned *hits;
    int max_worker;
    int bad_range;
    uint64_t begin_of[MAX_WORKERS];
    pthread_t thread_of[MAX_WORKERS];
} cover;

static int cover_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    cover *c = ctx;
    if (begin >= end || worker < 0 || worker >= MAX_WORKERS)
        __atomic_store_n(&c->bad_range, 1, __ATOMIC_RELAXED);
    else {
        c->begin_of[worker] = begin;
        c->thread_of[worker] = pthread_self();
    }
    int w = c->max_worker;
    while (worker > w && !__atomic_compare_exchange_n(&c->max_worker, &w, worker, 0,
                                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    for (uint64_t i = begin; i < end; i++)
        __atomic_fetch_add(&c->hits[i], 1u, __ATOMIC_RELAXED);
    return KB_OK;
}

Test(kit_parallel, covers_every_index_exactly_once)
{
    const int threads[] = {1, 2, 3, 8, 64};
    const uint64_t sizes[] = {0, 1, 2, 5, 63, 1000003};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            uint64_t n = sizes[s];
            kb_host h = make_host(1, threads[t]);
            cover c = {.hits = calloc(n + 1, sizeof(unsigned)), .max_worker = -1};
            cr_assert_eq(kbk_parallel_for(&h, n, cover_range, &c), KB_OK);
            cr_assert_eq(c.bad_range, 0, "an empty or misnumbered chunk at n=%llu threads=%d",
                         (unsigned long long)n, threads[t]);
            for (uint64_t i = 0; i < n; i++)
                cr_assert_eq(c.hits[i], 1u, "index %llu visited %u times (n=%llu, threads=%d)",
                             (unsigned long long)i, c.hits[i], (unsigned long long)n, threads[t]);
            cr_assert_eq(c.hits[n], 0u, "index n was visited (n=%llu)", (unsigned long long)n);
            cr_assert_lt(c.max_worker, threads[t], "worker %d of %d threads", c.max_worker,
                         threads[t]);
            free(c.hits);
        }
    }
}

Test(kit_parallel, zero_elements_call_nothing)
{
    kb_host h = make_host(1, 4);
    cover c = {.hits = calloc(1, sizeof(unsigned)), .max_worker = -1};
    cr_assert_eq(kbk_parallel_for(&h, 0, cover_range, &c), KB_OK);
    cr_assert_eq(c.max_worker, -1, "fn was called for n = 0");
    free(c.hits);
}

Test(kit_parallel, uses_all_threads_when_there_is_work)
{
    kb_host h = make_host(1, 8);
    cover c = {.hits = calloc(1000, sizeof(unsigned)), .max_worker = -1};
    cr_assert_eq(kbk_parallel_for(&h, 1000, cover_range, &c), KB_OK);
    cr_assert_eq(c.max_worker, 7);
    free(c.hits);
}

Test(kit_parallel, chunk_boundaries_are_deterministic)
{
    kb_host h = make_host(1, 7);
    cover a = {.hits = calloc(100000, sizeof(unsigned)), .max_worker = -1};
    cover b = {.hits = calloc(100000, sizeof(unsigned)), .max_worker = -1};
    cr_assert_eq(kbk_parallel_for(&h, 100000, cover_range, &a), KB_OK);
    cr_assert_eq(kbk_parallel_for(&h, 100000, cover_range, &b), KB_OK);
    cr_assert_eq(a.max_worker, 6);
    for (int w = 0; w <= a.max_worker; w++)
        cr_assert_eq(a.begin_of[w], b.begin_of[w], "worker %d began at %llu, then at %llu", w,
                     (unsigned long long)a.begin_of[w], (unsigned long long)b.begin_of[w]);
    /* Contiguous and ordered: worker w starts where worker w-1 ended. */
    for (int w = 1; w <= a.max_worker; w++)
        cr_assert_gt(a.begin_of[w], a.begin_of[w - 1]);
    free(a.hits);
    free(b.hits);
}

Test(kit_parallel, one_thread_runs_on_the_caller)
{
    kb_host h = make_host(1, 1);
    cover c = {.hits = calloc(50, sizeof(unsigned)), .max_worker = -1};
    cr_assert_eq(kbk_parallel_for(&h, 50, cover_range, &c), KB_OK);
    cr_assert_eq(c.max_worker, 0);
    cr_assert(pthread_equal(c.thread_of[0], pthread_self()), "the one chunk ran on another thread");
    free(c.hits);
}

/* Workers 1 and 3 fail with different codes: the lowest worker's comes back. */
static int fail_some(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)ctx;
    (void)begin;
    (void)end;
    if (worker == 1)
        return KB_EINVAL;
    if (worker == 3)
        return KB_EFAIL;
    return KB_OK;
}

Test(kit_parallel, returns_the_lowest_workers_error)
{
    kb_host h = make_host(1, 4);
    cr_assert_eq(kbk_parallel_for(&h, 400, fail_some, NULL), KB_EINVAL);
}

Test(kit_parallel, propagates_an_error_from_one_thread)
{
    kb_host h = make_host(1, 1);
    cr_assert_eq(kbk_parallel_for(&h, 400, fail_some, NULL), KB_OK); /* worker 0 only */
    h.cpu_threads = 2;
    cr_assert_eq(kbk_parallel_for(&h, 400, fail_some, NULL), KB_EINVAL);
}

/* ---- inputs ----------------------------------------------------------------- */

Test(kit_inputs, exact_values_are_nonzero_integers_within_k)
{
    enum { N = 100000 };
    kb_host h = make_host(42, 4);
    float *x = malloc(N * sizeof *x);
    cr_assert_eq(kbk_fill_exact_f32(&h, x, N, 0, 3), KB_OK);
    int seen_min = 0, seen_max = 0;
    for (int i = 0; i < N; i++) {
        cr_assert_neq(x[i], 0.0f, "x[%d] is zero", i);
        cr_assert_eq(x[i], floorf(x[i]), "x[%d] = %g is not an integer", i, x[i]);
        cr_assert_leq(fabsf(x[i]), 3.0f, "x[%d] = %g lies outside [-3, 3]", i, x[i]);
        seen_min |= x[i] == -3.0f;
        seen_max |= x[i] == 3.0f;
    }
    cr_assert(seen_min && seen_max, "the values never reach -k and k");
    free(x);
}

Test(kit_inputs, exact_f64_values_are_nonzero_integers_within_k)
{
    enum { N = 10000 };
    kb_host h = make_host(42, 4);
    double *x = malloc(N * sizeof *x);
    cr_assert_eq(kbk_fill_exact_f64(&h, x, N, 0, 1000), KB_OK);
    for (int i = 0; i < N; i++) {
        cr_assert_neq(x[i], 0.0, "x[%d] is zero", i);
        cr_assert_eq(x[i], floor(x[i]), "x[%d] = %g is not an integer", i, x[i]);
        cr_assert_leq(fabs(x[i]), 1000.0, "x[%d] = %g lies outside [-1000, 1000]", i, x[i]);
    }
    free(x);
}

Test(kit_inputs, same_seed_gives_same_values_at_any_thread_count)
{
    enum { N = 300000 };
    kb_host h1 = make_host(7, 1), h8 = make_host(7, 8);
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    cr_assert_eq(kbk_fill_exact_f32(&h1, a, N, 0, 100), KB_OK);
    cr_assert_eq(kbk_fill_exact_f32(&h8, b, N, 0, 100), KB_OK);
    cr_assert_eq(memcmp(a, b, N * sizeof *a), 0, "the same seed gave different values");
    free(a);
    free(b);
}

static int count_differences(const float *a, const float *b, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++)
        d += a[i] != b[i];
    return d;
}

Test(kit_inputs, another_seed_or_stream_gives_other_values)
{
    enum { N = 10000 };
    kb_host h7 = make_host(7, 2), h8 = make_host(8, 2);
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
    cr_assert_eq(kbk_fill_exact_f32(&h7, a, N, 0, 100), KB_OK);
    cr_assert_eq(kbk_fill_exact_f32(&h8, b, N, 0, 100), KB_OK);
    cr_assert_eq(kbk_fill_exact_f32(&h7, c, N, 1, 100), KB_OK);
    /* Two independent draws from 200 values agree about 1 time in 200. */
    cr_assert_gt(count_differences(a, b, N), N * 9 / 10, "seeds 7 and 8 gave similar values");
    cr_assert_gt(count_differences(a, c, N), N * 9 / 10, "streams 0 and 1 gave similar values");
    free(a);
    free(b);
    free(c);
}

Test(kit_inputs, exact_fill_refuses_k_below_one)
{
    kb_host h = make_host(1, 1);
    float x[4];
    fail_calls = 0;
    cr_assert_eq(kbk_fill_exact_f32(&h, x, 4, 0, 0), KB_EINVAL);
    cr_assert_eq(fail_calls, 1, "no sentence went through fail()");
}

Test(kit_inputs, exact_bound_is_the_largest_k_with_n_k_within_2_to_bits)
{
    cr_assert_eq(kbk_exact_bound(1u << 24, 24), 1);
    cr_assert_eq(kbk_exact_bound((1u << 24) + 1, 24), 0, "f32 beyond 2^24 has no exact k");
    cr_assert_eq(kbk_exact_bound(1000, 24), 16777); /* 2^24 / 1000 = 16777.2 */
    cr_assert_eq(kbk_exact_bound(3, 2), 1);
    cr_assert_eq(kbk_exact_bound(1, 53), INT32_MAX, "k must be capped to int32");
    const uint64_t ns[] = {1, 3, 1000, 123457, 1u << 20};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        uint64_t k = (uint64_t)kbk_exact_bound(ns[i], 24);
        cr_assert_leq(ns[i] * k, 1u << 24);
        cr_assert_gt(ns[i] * (k + 1), 1u << 24);
    }
}

Test(kit_inputs, f32_sum_at_2_to_24_is_exact)
{
    const uint64_t n = 1u << 24;
    int32_t k = kbk_exact_bound(n, 24);
    cr_assert_geq(k, 1);
    kb_host h = make_host(2026, 8);
    float *x = malloc(n * sizeof *x);
    cr_assert_not_null(x);
    cr_assert_eq(kbk_fill_exact_f32(&h, x, n, 0, k), KB_OK);
    volatile float fsum = 0.0f; /* volatile: every partial sum is rounded to f32 */
    double dsum = 0.0;
    for (uint64_t i = 0; i < n; i++) {
        fsum += x[i];
        dsum += x[i];
    }
    cr_assert_eq((double)fsum, dsum, "f32 sum %.1f, exact sum %.1f", (double)fsum, dsum);
    /* Dropping one element changes the f32 result: a verify that demands
       equality catches a missed element. */
    volatile float short_sum = 0.0f;
    for (uint64_t i = 0; i + 1 < n; i++)
        short_sum += x[i];
    cr_assert_neq((double)short_sum, dsum, "a sum missing the last element still matched");
    free(x);
}

Test(kit_inputs, uniform_values_stay_in_range_and_avoid_zero)
{
    enum { N = 50000 };
    kb_host h = make_host(3, 4);
    float *f = malloc(N * sizeof *f);
    double *d = malloc(N * sizeof *d);
    int32_t *k = malloc(N * sizeof *k);
    cr_assert_eq(kbk_fill_uniform_f32(&h, f, N, 0, -1.0, 1.0), KB_OK);
    cr_assert_eq(kbk_fill_uniform_f64(&h, d, N, 1, 0.5, 2.0), KB_OK);
    cr_assert_eq(kbk_fill_uniform_i32(&h, k, N, 2, -2, 3), KB_OK);
    for (int i = 0; i < N; i++) {
        cr_assert(f[i] != 0.0f && f[i] >= -1.0f && f[i] < 1.0f, "f[%d] = %g", i, f[i]);
        cr_assert(d[i] >= 0.5 && d[i] < 2.0, "d[%d] = %g", i, d[i]);
        cr_assert(k[i] != 0 && k[i] >= -2 && k[i] < 3, "k[%d] = %d", i, k[i]);
    }
    free(f);
    free(d);
    free(k);
}

Test(kit_inputs, uniform_refuses_a_range_without_nonzero_values)
{
    kb_host h = make_host(3, 1);
    int32_t k[4];
    float f[4];
    cr_assert_eq(kbk_fill_uniform_i32(&h, k, 4, 0, 0, 1), KB_EINVAL);
    cr_assert_eq(kbk_fill_uniform_f32(&h, f, 4, 0, 1.0, 1.0), KB_EINVAL);
}

/* ---- integer inputs: u8, u32 in a range, Zipf ----------------------------- */

/* A count of n draws that each hit with probability p is binomial: mean
   n p, standard deviation sqrt(n p (1 - p)).  The fills are deterministic
   for a seed, so a test either always passes or always fails; 6 standard
   deviations is a bound that a correct generator misses for about one
   seed in 5e8, while a wrong distribution (a shifted or missing value, a
   wrong exponent) is off by far more at these sizes. */
static void assert_share(const char *what, uint64_t count, uint64_t n, double p)
{
    double mean = (double)n * p, sd = sqrt((double)n * p * (1.0 - p));
    cr_assert_leq(fabs((double)count - mean), 6.0 * sd,
                  "%s: %llu of %llu, expected %.1f +- %.1f (6 sd)", what,
                  (unsigned long long)count, (unsigned long long)n, mean, 6.0 * sd);
}

Test(kit_inputs, u8_same_seed_gives_same_bytes_at_any_thread_count)
{
    enum { N = 300000 };
    kb_host h1 = make_host(11, 1), h8 = make_host(11, 8);
    uint8_t *a = malloc(N), *b = malloc(N);
    cr_assert_eq(kbk_fill_u8(&h1, a, N, 0), KB_OK);
    cr_assert_eq(kbk_fill_u8(&h8, b, N, 0), KB_OK);
    cr_assert_eq(memcmp(a, b, N), 0, "the same seed gave different bytes");
    free(a);
    free(b);
}

Test(kit_inputs, u8_another_seed_gives_other_bytes)
{
    enum { N = 10000 };
    kb_host h11 = make_host(11, 2), h12 = make_host(12, 2);
    uint8_t *a = malloc(N), *b = malloc(N);
    cr_assert_eq(kbk_fill_u8(&h11, a, N, 0), KB_OK);
    cr_assert_eq(kbk_fill_u8(&h12, b, N, 0), KB_OK);
    int same = 0;
    for (int i = 0; i < N; i++)
        same += a[i] == b[i];
    /* Two independent bytes agree 1 time in 256: about 39 of 10000. */
    cr_assert_lt(same, N / 20, "seeds 11 and 12 gave %d equal bytes of %d", same, N);
    free(a);
    free(b);
}

Test(kit_inputs, u8_takes_each_byte_value_with_share_one_in_256)
{
    enum { N = 1 << 20 };
    kb_host h = make_host(5, 4);
    uint8_t *x = malloc(N);
    cr_assert_eq(kbk_fill_u8(&h, x, N, 3), KB_OK);
    uint64_t count[256] = {0};
    for (int i = 0; i < N; i++)
        count[x[i]]++;
    for (int v = 0; v < 256; v++) {
        char what[32];
        snprintf(what, sizeof what, "byte %d", v);
        assert_share(what, count[v], N, 1.0 / 256);
    }
    free(x);
}

Test(kit_inputs, u32_range_stays_within_both_ends_and_reaches_them)
{
    enum { N = 10000 };
    kb_host h = make_host(5, 4);
    uint32_t *x = malloc(N * sizeof *x);
    cr_assert_eq(kbk_fill_u32_range(&h, x, N, 0, 5, 9), KB_OK);
    int lo = 0, hi = 0;
    for (int i = 0; i < N; i++) {
        cr_assert(x[i] >= 5 && x[i] <= 9, "x[%d] = %u lies outside [5, 9]", i, x[i]);
        lo |= x[i] == 5;
        hi |= x[i] == 9;
    }
    cr_assert(lo && hi, "the values never reach 5 or 9");
    free(x);
}

Test(kit_inputs, u32_range_gives_zero_its_share_and_never_only_zeros)
{
    enum { N = 100000 };
    kb_host h = make_host(5, 4);
    uint32_t *x = malloc(N * sizeof *x);
    cr_assert_eq(kbk_fill_u32_range(&h, x, N, 1, 0, 3), KB_OK);
    uint64_t zeros = 0;
    for (int i = 0; i < N; i++)
        zeros += x[i] == 0;
    assert_share("zeros in [0, 3]", zeros, N, 0.25);
    free(x);
}

Test(kit_inputs, u32_range_of_every_u32_fills_the_top_half_too)
{
    enum { N = 100000 };
    kb_host h = make_host(5, 4);
    uint32_t *x = malloc(N * sizeof *x);
    cr_assert_eq(kbk_fill_u32_range(&h, x, N, 2, 0, UINT32_MAX), KB_OK);
    uint64_t top = 0;
    for (int i = 0; i < N; i++)
        top += x[i] >= 0x80000000u;
    assert_share("values at or above 2^31", top, N, 0.5);
    free(x);
}

/* Element i is lo + (bits * span) >> 64 for the generator's 64 bits: the
   product's high half, computed here with the compiler's 128-bit type. */
Test(kit_inputs, u32_range_is_the_high_half_of_the_bits_times_the_span)
{
    enum { N = 10000 };
    kb_host h = make_host(21, 4);
    uint32_t *x = malloc(N * sizeof *x);
    const uint32_t lo = 1, hi = UINT32_MAX - 1; /* span 2^32 - 1: both halves matter */
    cr_assert_eq(kbk_fill_u32_range(&h, x, N, 5, lo, hi), KB_OK);
    for (int i = 0; i < N; i++) {
        unsigned __int128 p = (unsigned __int128)kb_rand_u64(21, 5, (uint64_t)i) *
                              ((uint64_t)hi - lo + 1);
        cr_assert_eq(x[i], lo + (uint32_t)(p >> 64), "x[%d] = %u", i, x[i]);
    }
    free(x);
}

Test(kit_inputs, u32_range_same_seed_gives_same_values_at_any_thread_count)
{
    enum { N = 300000 };
    kb_host h1 = make_host(13, 1), h8 = make_host(13, 8);
    uint32_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    cr_assert_eq(kbk_fill_u32_range(&h1, a, N, 0, 100, 1000000), KB_OK);
    cr_assert_eq(kbk_fill_u32_range(&h8, b, N, 0, 100, 1000000), KB_OK);
    cr_assert_eq(memcmp(a, b, N * sizeof *a), 0, "the same seed gave different values");
    free(a);
    free(b);
}

Test(kit_inputs, u32_range_refuses_an_empty_range_with_a_sentence)
{
    kb_host h = make_host(1, 1);
    uint32_t x[4];
    fail_calls = 0;
    cr_assert_eq(kbk_fill_u32_range(&h, x, 4, 0, 9, 5), KB_EINVAL);
    cr_assert_eq(fail_calls, 1, "no sentence went through fail()");
    cr_assert(strstr(last_error, "empty") != NULL, "%s", last_error);
}

Test(kit_inputs, u32_range_refuses_zero_alone)
{
    kb_host h = make_host(1, 1);
    uint32_t x[4];
    fail_calls = 0;
    cr_assert_eq(kbk_fill_u32_range(&h, x, 4, 0, 0, 0), KB_EINVAL);
    cr_assert_eq(fail_calls, 1, "no sentence went through fail()");
}

/* Z = sum over m = 1 .. n of m^-s: the share of key k is (k+1)^-s / Z. */
static double zipf_z(uint64_t n, double s)
{
    double z = 0.0;
    for (uint64_t m = n; m >= 1; m--) /* smallest first */
        z += pow((double)m, -s);
    return z;
}

static uint32_t *zipf_fill(uint64_t seed, int threads, uint64_t n, uint64_t values, double s)
{
    kb_host h = make_host(seed, threads);
    uint32_t *x = malloc(n * sizeof *x);
    cr_assert_not_null(x);
    cr_assert_eq(kbk_fill_zipf_u32(&h, x, n, 0, values, s), KB_OK, "%s", last_error);
    return x;
}

static uint64_t count_of(const uint32_t *x, uint64_t n, uint32_t v)
{
    uint64_t c = 0;
    for (uint64_t i = 0; i < n; i++)
        c += x[i] == v;
    return c;
}

Test(kit_inputs, zipf_same_seed_gives_same_keys_at_any_thread_count)
{
    enum { N = 300000 };
    uint32_t *a = zipf_fill(17, 1, N, 1000, 1.2), *b = zipf_fill(17, 8, N, 1000, 1.2);
    cr_assert_eq(memcmp(a, b, N * sizeof *a), 0, "the same seed gave different keys");
    free(a);
    free(b);
}

Test(kit_inputs, zipf_another_seed_gives_other_keys)
{
    enum { N = 10000 };
    uint32_t *a = zipf_fill(17, 2, N, 1000, 1.0), *b = zipf_fill(18, 2, N, 1000, 1.0);
    /* Two independent keys agree with probability sum p_k^2, about 0.03
       here (s = 1, 1000 keys): some 300 of 10000. */
    uint64_t same = 0;
    for (int i = 0; i < N; i++)
        same += a[i] == b[i];
    cr_assert_lt(same, N / 10, "seeds 17 and 18 gave %llu equal keys of %d",
                 (unsigned long long)same, N);
    free(a);
    free(b);
}

Test(kit_inputs, zipf_keys_stay_below_the_number_of_values)
{
    enum { N = 100000 };
    uint32_t *x = zipf_fill(3, 4, N, 37, 0.7);
    for (int i = 0; i < N; i++)
        cr_assert_lt(x[i], 37u, "x[%d] = %u", i, x[i]);
    free(x);
}

Test(kit_inputs, zipf_most_frequent_key_is_zero_with_share_one_over_z)
{
    enum { N = 200000 };
    const uint64_t values = 1000;
    const double s = 1.0;
    uint32_t *x = zipf_fill(2026, 4, N, values, s);
    uint64_t *count = calloc(values, sizeof *count);
    for (int i = 0; i < N; i++)
        count[x[i]]++;
    uint32_t top = 0;
    for (uint32_t v = 1; v < values; v++)
        top = count[v] > count[top] ? v : top;
    cr_assert_eq(top, 0, "the most frequent key is %u, not 0", top);
    assert_share("key 0 at s = 1 over 1000 keys", count[0], N, 1.0 / zipf_z(values, s));
    free(count);
    free(x);
}

Test(kit_inputs, zipf_key_one_is_2_to_the_s_times_rarer_than_key_zero)
{
    enum { N = 200000 };
    const uint64_t values = 500;
    const double s = 1.7;
    uint32_t *x = zipf_fill(4, 4, N, values, s);
    assert_share("key 1 at s = 1.7 over 500 keys", count_of(x, N, 1), N,
                 pow(2.0, -s) / zipf_z(values, s));
    free(x);
}

Test(kit_inputs, zipf_reaches_the_far_keys_of_2_to_the_32)
{
    /* s = 1 over 2^32 keys: the share of keys at or above 2^20 is
       (H(2^32) - H(2^20)) / H(2^32), H(n) = ln n + gamma + 1/(2n) - ... */
    enum { N = 100000 };
    const double gamma = 0.57721566490153286, ln2 = 0.69314718055994531;
    double h32 = 32 * ln2 + gamma, h20 = 20 * ln2 + gamma + 1.0 / (2.0 * 1048576.0);
    uint32_t *x = zipf_fill(8, 4, N, 1ULL << 32, 1.0);
    uint64_t far = 0;
    for (int i = 0; i < N; i++)
        far += x[i] >= (1u << 20);
    assert_share("keys at or above 2^20", far, N, (h32 - h20) / h32);
    free(x);
}

Test(kit_inputs, zipf_exponent_zero_is_uniform)
{
    enum { N = 160000 };
    uint32_t *x = zipf_fill(9, 4, N, 16, 0.0);
    for (uint32_t v = 0; v < 16; v++) {
        char what[32];
        snprintf(what, sizeof what, "key %u at s = 0", v);
        assert_share(what, count_of(x, N, v), N, 1.0 / 16);
    }
    free(x);
}

Test(kit_inputs, zipf_at_the_steepest_exponent_is_not_all_zeros)
{
    /* s = 4 over 2 keys: key 1 has share 2^-4 / (1 + 2^-4) = 1/17. */
    enum { N = 100000 };
    uint32_t *x = zipf_fill(10, 4, N, 2, KBK_ZIPF_MAX_S);
    uint64_t ones = count_of(x, N, 1);
    cr_assert_gt(ones, 0, "every key is 0");
    assert_share("key 1 at s = 4 over 2 keys", ones, N, 1.0 / 17);
    free(x);
}

Test(kit_inputs, zipf_refuses_fewer_than_two_keys)
{
    kb_host h = make_host(1, 1);
    uint32_t x[4];
    fail_calls = 0;
    cr_assert_eq(kbk_fill_zipf_u32(&h, x, 4, 0, 1, 1.0), KB_EINVAL);
    cr_assert_eq(fail_calls, 1, "no sentence went through fail()");
}

Test(kit_inputs, zipf_refuses_more_keys_than_a_u32_holds)
{
    kb_host h = make_host(1, 1);
    uint32_t x[4];
    cr_assert_eq(kbk_fill_zipf_u32(&h, x, 4, 0, (1ULL << 32) + 1, 1.0), KB_EINVAL);
}

Test(kit_inputs, zipf_refuses_an_exponent_outside_0_to_4)
{
    kb_host h = make_host(1, 1);
    uint32_t x[4];
    cr_assert_eq(kbk_fill_zipf_u32(&h, x, 4, 0, 10, -0.5), KB_EINVAL);
    cr_assert_eq(kbk_fill_zipf_u32(&h, x, 4, 0, 10, 4.5), KB_EINVAL);
    cr_assert_eq(kbk_fill_zipf_u32(&h, x, 4, 0, 10, NAN), KB_EINVAL);
}

/* ---- tolerances and comparisons --------------------------------------------- */

Test(kit_check, unit_roundoff_and_gamma_bound)
{
    cr_assert_eq(kbk_unit_roundoff(24), ldexp(1.0, -24));
    cr_assert_eq(kbk_unit_roundoff(53), ldexp(1.0, -53));
    double u = ldexp(1.0, -24);
    cr_assert_eq(kbk_sum_bound(10, 3.0, 24), 10 * u / (1 - 10 * u) * 3.0);
    cr_assert_eq(kbk_sum_bound(0, 3.0, 24), 0.0);
    cr_assert(isinf(kbk_sum_bound(1 << 24, 1.0, 24)), "d*u >= 1 must give no bound");
}

Test(kit_check, abs_passes_within_and_fails_beyond_tolerance)
{
    kb_check c = {0};
    kbk_check_abs(&c, 1.5, 1.0, 0.5);
    cr_assert_eq(c.passed, 1);
    cr_assert_eq(c.error, 0.5);
    cr_assert_str_eq(c.measure, "abs");
    kbk_check_abs(&c, 1.5, 1.0, 0.25);
    cr_assert_eq(c.passed, 0);
}

Test(kit_check, abs_flags_nan)
{
    kb_check c = {0};
    kbk_check_abs(&c, NAN, 1.0, 1e300);
    cr_assert_eq(c.passed, 0);
}

#define NA 1000

static void make_arrays(float *got, double *want)
{
    for (int i = 0; i < NA; i++) {
        want[i] = (i % 7) - 3.5;
        got[i] = (float)want[i];
    }
}

Test(kit_check, f32_passes_on_equal_arrays)
{
    float got[NA];
    double want[NA];
    make_arrays(got, want);
    kb_check c = {0};
    uint64_t first = 0;
    kbk_check_f32(&c, got, want, NA, 0.0, 0.0, &first);
    cr_assert_eq(c.passed, 1);
    cr_assert_eq(c.error, 0.0);
    cr_assert_eq(first, NA);
    cr_assert_str_eq(c.measure, "worst err/bound");
    cr_assert_eq(c.tolerance, 1.0);
}

Test(kit_check, f32_flags_nan)
{
    float got[NA];
    double want[NA];
    make_arrays(got, want);
    got[500] = NAN;
    kb_check c = {0};
    uint64_t first = 0;
    kbk_check_f32(&c, got, want, NA, 1.0, 1.0, &first);
    cr_assert_eq(c.passed, 0);
    cr_assert(isinf(c.error), "a NaN element is infinitely far from its bound, got %g", c.error);
    cr_assert_eq(first, 500);
}

Test(kit_check, f32_flags_one_perturbed_element)
{
    float got[NA];
    double want[NA];
    make_arrays(got, want);
    got[999] += 0.01f;
    kb_check c = {0};
    uint64_t first = 0;
    kbk_check_f32(&c, got, want, NA, 1e-3, 1e-3, &first);
    cr_assert_eq(c.passed, 0);
    /* want[999] = 1.5: the bound is 1e-3 + 1.5e-3, the miss about 0.01. */
    double bound = 1e-3 + 1e-3 * fabs(want[999]), miss = fabs((double)got[999] - want[999]);
    cr_assert_float_eq(c.error, miss / bound, 1e-12);
    cr_assert_gt(c.error, 2.0);
    cr_assert_eq(first, 999);
}

Test(kit_check, f32_accepts_a_difference_within_atol_plus_rtol)
{
    float got[NA];
    double want[NA];
    make_arrays(got, want);
    got[7] = (float)(want[7] + 0.004); /* want[7] = -3.5: atol + rtol*3.5 = 0.0045 */
    kb_check c = {0};
    kbk_check_f32(&c, got, want, NA, 1e-3, 1e-3, NULL);
    cr_assert_eq(c.passed, 1, "error %g", c.error);
    /* The row says how close it came: 0.004 of a 0.0045 bound. */
    cr_assert_float_eq(c.error, fabs((double)got[7] - want[7]) / 0.0045, 1e-9);
    cr_assert_lt(c.error, 1.0);
    cr_assert_gt(c.error, 0.8);
    kbk_check_f32(&c, got, want, NA, 1e-3, 0.0, NULL);
    cr_assert_eq(c.passed, 0, "rtol was not what let it pass");
}

Test(kit_check, exact_passes_on_equal_arrays)
{
    int32_t a[NA], b[NA];
    for (int i = 0; i < NA; i++)
        a[i] = b[i] = i * 3 - 7;
    kb_check c = {0};
    uint64_t first = 0;
    kbk_check_exact(&c, a, b, NA, sizeof a[0], &first);
    cr_assert_eq(c.passed, 1);
    cr_assert_eq(c.error, 0.0);
    cr_assert_eq(first, NA);
}

Test(kit_check, exact_flags_a_swapped_pair)
{
    int32_t a[NA], b[NA];
    for (int i = 0; i < NA; i++)
        a[i] = b[i] = i * 3 - 7;
    a[41] = b[42];
    a[42] = b[41];
    kb_check c = {0};
    uint64_t first = 0;
    kbk_check_exact(&c, a, b, NA, sizeof a[0], &first);
    cr_assert_eq(c.passed, 0);
    cr_assert_eq(c.error, 2.0);
    cr_assert_eq(first, 41);
}

Test(kit_check, exact_flags_one_perturbed_element)
{
    int32_t a[NA], b[NA];
    for (int i = 0; i < NA; i++)
        a[i] = b[i] = i * 3 - 7;
    a[NA - 1] += 1;
    kb_check c = {0};
    uint64_t first = 0;
    kbk_check_exact(&c, a, b, NA, sizeof a[0], &first);
    cr_assert_eq(c.passed, 0);
    cr_assert_eq(c.error, 1.0);
    cr_assert_eq(first, NA - 1);
}

Test(kit_check, exact_flags_nan)
{
    float a[NA], b[NA];
    for (int i = 0; i < NA; i++)
        a[i] = b[i] = (float)i;
    a[7] = NAN;
    kb_check c = {0};
    uint64_t first = 0;
    kbk_check_exact(&c, a, b, NA, sizeof a[0], &first);
    cr_assert_eq(c.passed, 0);
    cr_assert_eq(c.error, 1.0);
    cr_assert_eq(first, 7);
}

Test(kit_check, ulp_of_f32_is_the_float_spacing)
{
    cr_assert_eq(kbk_ulp_f32(1.0), ldexp(1.0, -23));
    cr_assert_eq(kbk_ulp_f32(1.5), ldexp(1.0, -23));
    cr_assert_eq(kbk_ulp_f32(-2.0), ldexp(1.0, -22));
    cr_assert_eq(kbk_ulp_f32(0.0), ldexp(1.0, -149));
    cr_assert_eq(kbk_ulp_f32(ldexp(1.0, -130)), ldexp(1.0, -149));
}

Test(kit_check, ulps_reports_the_worst_element_against_its_bound)
{
    float got[NA];
    double want[NA];
    for (int i = 0; i < NA; i++) {
        want[i] = exp((i - 500) / 50.0);
        got[i] = (float)want[i]; /* rounded: within half an ulp */
    }
    kb_check c = {0};
    uint64_t at = 0;
    kbk_check_ulps_f32(&c, got, want, NA, 2.5, &at);
    cr_assert_eq(c.passed, 1, "error %g", c.error);
    cr_assert_leq(c.error, 0.5);
    cr_assert_str_eq(c.measure, "ulps");
    cr_assert_eq(c.tolerance, 2.5);
    /* Two ulps off at one element: still within 2.5, and named. */
    got[321] = nextafterf(nextafterf(got[321], INFINITY), INFINITY);
    kbk_check_ulps_f32(&c, got, want, NA, 2.5, &at);
    cr_assert_eq(c.passed, 1);
    cr_assert_eq(at, 321);
    cr_assert_gt(c.error, 1.5);
    /* Three more: out. */
    got[654] = nextafterf(nextafterf(nextafterf(got[654], 0.0f), 0.0f), 0.0f);
    kbk_check_ulps_f32(&c, got, want, NA, 2.5, &at);
    cr_assert_eq(c.passed, 0);
    cr_assert_eq(at, 654);
    cr_assert_gt(c.error, 2.5);
}

Test(kit_check, ulps_flags_nan_and_a_wrong_infinity)
{
    float got[4] = {1.0f, 2.0f, INFINITY, NAN};
    double want[4] = {1.0, 2.0, INFINITY, NAN};
    kb_check c = {0};
    kbk_check_ulps_f32(&c, got, want, 4, 1.0, NULL);
    cr_assert_eq(c.passed, 1, "NaN against NaN and inf against inf match: %g", c.error);
    got[1] = NAN;
    kbk_check_ulps_f32(&c, got, want, 4, 1.0, NULL);
    cr_assert_eq(c.passed, 0);
    got[1] = 2.0f;
    got[2] = -INFINITY;
    kbk_check_ulps_f32(&c, got, want, 4, 1.0, NULL);
    cr_assert_eq(c.passed, 0);
}

/* ---- buffers without a GPU --------------------------------------------------- */

Test(kit_buf, both_without_gpu_gives_a_plain_host_copy)
{
    kb_host h = make_host(1, 2);
    kbk_buf b = {0};
    cr_assert_eq(kbk_buf_alloc(&h, &b, 4096, KBK_BOTH), KB_OK);
    cr_assert_not_null(b.host);
    cr_assert_null(b.dev, "a device copy without a stream");
    cr_assert_eq(b.pinned, 0);
    cr_assert_eq(b.bytes, 4096);
    kbk_buf_free(&h, &b);
}

Test(kit_buf, device_only_without_gpu_allocates_nothing)
{
    kb_host h = make_host(1, 2);
    kbk_buf b = {0};
    cr_assert_eq(kbk_buf_alloc(&h, &b, 4096, KBK_DEVICE), KB_OK);
    cr_assert_null(b.host);
    cr_assert_null(b.dev);
    kbk_buf_free(&h, &b);
}

Test(kit_buf, poison_fills_every_byte)
{
    kb_host h = make_host(1, 4);
    kbk_buf b = {0};
    const size_t bytes = (32u << 20) + 3; /* large enough for several threads, odd */
    cr_assert_eq(kbk_buf_alloc(&h, &b, bytes, KBK_BOTH), KB_OK);
    memset(b.host, 0, bytes);
    cr_assert_eq(kbk_buf_poison(&h, &b, 0xff), KB_OK);
    const unsigned char *p = b.host;
    for (size_t i = 0; i < bytes; i++)
        cr_assert_eq(p[i], 0xff, "byte %zu was not poisoned", i);
    cr_assert(isnan(((float *)b.host)[0]), "0xff bytes are not a NaN float");
    kbk_buf_free(&h, &b);
}

Test(kit_buf, copies_without_gpu_do_nothing)
{
    kb_host h = make_host(1, 1);
    kbk_buf b = {0};
    cr_assert_eq(kbk_buf_alloc(&h, &b, 64, KBK_BOTH), KB_OK);
    memset(b.host, 5, 64);
    cr_assert_eq(kbk_buf_upload(&h, &b), KB_OK);
    cr_assert_eq(kbk_buf_download(&h, &b), KB_OK);
    cr_assert_eq(((unsigned char *)b.host)[63], 5);
    kbk_buf_free(&h, &b);
}

Test(kit_buf, free_empties_and_accepts_an_empty_buffer)
{
    kb_host h = make_host(1, 1);
    kbk_buf b = {0};
    kbk_buf_free(&h, &b);
    cr_assert_eq(kbk_buf_alloc(&h, &b, 64, KBK_HOST), KB_OK);
    kbk_buf_free(&h, &b);
    cr_assert_null(b.host);
    cr_assert_eq(b.bytes, 0);
    kbk_buf_free(&h, &b); /* twice is harmless */
}

Test(kit_buf, allocation_failure_says_so_and_leaves_it_empty)
{
    kb_host h = make_host(1, 1);
    kbk_buf b = {0};
    fail_calls = 0;
    cr_assert_eq(kbk_buf_alloc(&h, &b, SIZE_MAX / 2, KBK_HOST), KB_ENOMEM);
    cr_assert_eq(fail_calls, 1);
    cr_assert(strstr(last_error, "host memory") != NULL, "message: %s", last_error);
    cr_assert_null(b.host);
}

/* ---- KBK_OPS and KBK_EXPORT_ONE ------------------------------------------ */

KBK_OPS(tk);
static int tk_plan(const kb_value *p, kb_work *o, kb_host *h) { (void)p; (void)o; (void)h; return 1; }
static int tk_setup(const kb_value *p, uint64_t m, kb_host *h, void **s) { (void)p; (void)m; (void)h; (void)s; return 2; }
static int tk_prepare(void *s, uint32_t v, kb_host *h) { (void)s; (void)v; (void)h; return 3; }
static int tk_upload(void *s, uint32_t v, kb_host *h) { (void)s; (void)v; (void)h; return 4; }
static int tk_run(void *s, uint32_t v, kb_host *h) { (void)s; (void)v; (void)h; return 5; }
static int tk_download(void *s, uint32_t v, kb_host *h) { (void)s; (void)v; (void)h; return 6; }
static int tk_verify(void *s, uint32_t v, kb_check *c, kb_host *h) { (void)s; (void)v; (void)c; (void)h; return 7; }
static void tk_teardown(void *s, kb_host *h) { (void)s; (void)h; }
static const void *tk_extension(const char *name) { return name; }

/* The table KBK_OPS defines carries the ABI header and each entry of its
   own name, none swapped. */
Test(kit, kbk_ops_points_each_entry_at_its_function)
{
    cr_assert_eq(tk_ops.size, sizeof(kb_ops));
    cr_assert_eq(tk_ops.plan(NULL, NULL, NULL), 1);
    cr_assert_eq(tk_ops.setup(NULL, 0, NULL, NULL), 2);
    cr_assert_eq(tk_ops.prepare(NULL, 0, NULL), 3);
    cr_assert_eq(tk_ops.upload(NULL, 0, NULL), 4);
    cr_assert_eq(tk_ops.run(NULL, 0, NULL), 5);
    cr_assert_eq(tk_ops.download(NULL, 0, NULL), 6);
    cr_assert_eq(tk_ops.verify(NULL, 0, NULL, NULL), 7);
    cr_assert(tk_ops.teardown == tk_teardown);
    cr_assert_str_eq((const char *)tk_ops.extension("x"), "x");
}

/* ---- kb_work_set_peak (plugin.h, minor 1) ---------------------------------- */

Test(kit_peak, a_minor_1_host_gets_the_peak)
{
    kb_host h = make_host(1, 1);
    kb_work w = {0};
    kb_work_set_peak(&w, &h, KB_PEAK_TF32);
    cr_assert_eq(w.peak, (uint32_t)KB_PEAK_TF32);
}

/* An older host's kb_work ends before `peak`: nothing may be written there. */
Test(kit_peak, a_minor_0_host_is_left_alone)
{
    kb_host h = make_host(1, 1);
    h.abi_minor = 0;
    kb_work w;
    memset(&w, 0xab, sizeof w);
    kb_work_set_peak(&w, &h, KB_PEAK_BF16);
    cr_assert_eq(w.peak, 0xababababu);
}

/* ---- kb_work_add_variant_bytes (plugin.h, minor 2) ------------------------ */

Test(kit_variant_bytes, a_minor_2_host_gets_them_per_variant)
{
    kb_host h = make_host(1, 1);
    kb_work w = {0};
    kb_work_add_variant_bytes(&w, &h, 3, 1000);
    kb_work_add_variant_bytes(&w, &h, 3, 24);
    cr_assert_eq(w.variant_device_bytes[3], 1024);
    cr_assert_eq(w.device_bytes, 0);
}

/* An older host's kb_work ends before the array: the bytes go to
   device_bytes, which it checks whatever the variants; nothing is written
   past minor 1's fields. */
Test(kit_variant_bytes, an_older_host_gets_them_in_device_bytes)
{
    kb_host h = make_host(1, 1);
    h.abi_minor = 1;
    kb_work w;
    memset(&w, 0xab, sizeof w);
    w.device_bytes = 100;
    kb_work_add_variant_bytes(&w, &h, 3, 1000);
    cr_assert_eq(w.device_bytes, 1100);
    cr_assert_eq(w.variant_device_bytes[3], 0xababababababababull);
}

Test(kit_variant_bytes, a_variant_past_the_mask_is_ignored)
{
    kb_host h = make_host(1, 1);
    kb_work w = {0};
    kb_work_add_variant_bytes(&w, &h, KB_MAX_VARIANTS, 1000);
    cr_assert_eq(w.device_bytes, 0);
}

/* ---- setup() in two halves (KBK_PREFETCH) ---------------------------------- */

typedef struct halves_seen {
    void *host_stream, *device_stream;
    int host_calls, device_calls;
    uint64_t device_mask;
} halves_seen;

static halves_seen seen_by_halves;

static int half_host(const kb_value *params, uint64_t vmask, kb_host *host, void **state)
{
    (void)params, (void)vmask;
    seen_by_halves.host_calls++;
    seen_by_halves.host_stream = host->stream;
    kbk_buf *b = calloc(1, sizeof *b);
    *state = b;
    return kbk_buf_alloc(host, b, 64, KBK_BOTH);
}

static int half_device(void *state, uint64_t vmask, kb_host *host)
{
    (void)state;
    seen_by_halves.device_calls++;
    seen_by_halves.device_stream = host->stream;
    seen_by_halves.device_mask = vmask;
    return KB_OK;
}

Test(kit_halves, the_host_half_sees_no_stream_and_the_device_half_the_host)
{
    kb_host h = make_host(1, 1);
    h.stream = (void *)&h; /* a stream neither half may use here */
    memset(&seen_by_halves, 0, sizeof seen_by_halves);
    void *state = NULL;
    cr_assert_eq(kbk_setup_halves(NULL, 5, &h, &state, half_host, half_device), KB_OK);
    cr_assert_eq(seen_by_halves.host_calls, 1);
    cr_assert_null(seen_by_halves.host_stream, "the host half must not see a stream");
    cr_assert_eq(seen_by_halves.device_calls, 1);
    cr_assert_eq(seen_by_halves.device_stream, h.stream);
    cr_assert_eq(seen_by_halves.device_mask, 5);
    kbk_buf *b = state;
    cr_assert_not_null(b->host, "the host half made the host copy");
    cr_assert_null(b->dev, "and no device copy, without a stream");
    cr_assert_eq(b->pinned, 0);
    h.stream = NULL;
    kbk_buf_free(&h, b);
    free(b);
}

static int half_host_fails(const kb_value *params, uint64_t vmask, kb_host *host, void **state)
{
    (void)params, (void)vmask, (void)state;
    seen_by_halves.host_calls++;
    return host->fail(host, KB_EINVAL, "no");
}

Test(kit_halves, a_failed_host_half_skips_the_device_half)
{
    kb_host h = make_host(1, 1);
    memset(&seen_by_halves, 0, sizeof seen_by_halves);
    void *state = NULL;
    cr_assert_eq(kbk_setup_halves(NULL, 1, &h, &state, half_host_fails, half_device), KB_EINVAL);
    cr_assert_eq(seen_by_halves.host_calls, 1);
    cr_assert_eq(seen_by_halves.device_calls, 0);
}

Test(kit_halves, attach_without_a_stream_leaves_the_buffer_as_it_is)
{
    kb_host h = make_host(1, 1);
    kbk_buf b;
    cr_assert_eq(kbk_buf_alloc(&h, &b, 128, KBK_BOTH), KB_OK);
    void *host_copy = b.host;
    cr_assert_eq(kbk_buf_attach(&h, &b), KB_OK);
    cr_assert_eq(b.host, host_copy);
    cr_assert_null(b.dev);
    cr_assert_eq(b.pinned, 0);
    cr_assert_eq(b.registered, 0);
    kbk_buf_free(&h, &b);
}
