/*
 * test_matmul.c -- the matmul plugin on the CPU path (no GPU): its
 * descriptor, plan() numbers and errors, the two CPU variants at awkward
 * shapes with both checks and both kinds of inputs, and verify() catching
 * outputs that are plausibly wrong (poisoned, one term of one dot product
 * dropped, two elements swapped, one element perturbed), at 4096^3 and at
 * shapes with ragged edges.
 *
 * The plugin is dlopen'ed from the build tree, as the host would, and driven
 * through a kb_host built here (no stream, device -1), so setup() must not
 * touch CUDA.  matmul.h gives the parameter indices and the test extension
 * (ops->extension(KBM_TEST_EXTENSION)), through which the tests read A and B
 * and write into C before verify().
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kbench/plugin.h"
#include "matmul.h"

#define FIXTURE_PLUGIN_PATH KBENCH_BINARY_DIR "/plugins/kbench-matmul.so"
#include "plugin_fixture.h"

static const kbm_test_ext *ext;

static kb_host make_host(uint64_t seed) { return fixture_host(seed, 4); }

static void load(void)
{
    fixture_load();
    cr_assert_not_null(plug->ops->extension);
    ext = plug->ops->extension(KBM_TEST_EXTENSION);
    cr_assert_not_null(ext);
    cr_assert_eq(ext->size, sizeof(kbm_test_ext));
}

static void unload(void)
{
    fixture_unload();
    ext = NULL;
}

TestSuite(matmul, .init = load, .fini = unload, .timeout = 240);

static int variant_index(const char *name) { return (int)fixture_variant(name); }

static void params_of_p(kb_value *p, uint64_t m, uint64_t n, uint64_t k, int inputs, int check,
                        int precision)
{
    memset(p, 0, sizeof(kb_value) * KBM_N_PARAMS);
    p[KBM_P_M].u = m;
    p[KBM_P_N].u = n;
    p[KBM_P_K].u = k;
    p[KBM_P_PRECISION].i = precision;
    p[KBM_P_INPUTS].i = inputs;
    p[KBM_P_CHECK].i = check;
    p[KBM_P_BLOCK].i = 16;
    p[KBM_P_TILE].i = KBM_T128x128x16;
    p[KBM_P_STAGES].i = 3;
}

static void params_of(kb_value *p, uint64_t m, uint64_t n, uint64_t k, int inputs, int check)
{
    params_of_p(p, m, n, k, inputs, check, KBM_F32);
}

/* A point set up for variant v, prepared (C poisoned) and, with do_run, run. */
typedef struct point {
    kb_host h;
    void *state;
    uint64_t m, n, k;
    int v;
} point;

/* A point at a precision.  A CUDA variant may be named without a GPU when
   the test only writes C itself and verifies it (do_run = 0): setup, prepare
   and verify touch no CUDA without a stream, and verify's bound depends on
   the precision alone. */
static void point_open_p(point *pt, uint64_t m, uint64_t n, uint64_t k, int inputs, int check,
                         int precision, const char *variant, int do_run)
{
    kb_value p[KBM_N_PARAMS];
    params_of_p(p, m, n, k, inputs, check, precision);
    pt->h = make_host(7);
    pt->state = NULL;
    pt->m = m;
    pt->n = n;
    pt->k = k;
    pt->v = variant_index(variant);
    int rc = plug->ops->setup(p, KB_VARIANT_BIT(pt->v), &pt->h, &pt->state);
    cr_assert_eq(rc, KB_OK, "setup %llux%llux%llu: %s", (unsigned long long)m,
                 (unsigned long long)n, (unsigned long long)k, last_error);
    cr_assert_eq(plug->ops->prepare(pt->state, (uint32_t)pt->v, &pt->h), KB_OK, "prepare: %s",
                 last_error);
    if (do_run)
        cr_assert_eq(plug->ops->run(pt->state, (uint32_t)pt->v, &pt->h), KB_OK, "run: %s",
                     last_error);
}

static void point_open(point *pt, uint64_t m, uint64_t n, uint64_t k, int inputs, int check,
                       const char *variant, int do_run)
{
    point_open_p(pt, m, n, k, inputs, check, KBM_F32, variant, do_run);
}

static kb_check point_verify(point *pt)
{
    kb_check c;
    memset(&c, 0, sizeof c);
    c.passed = -1;
    cr_assert_eq(plug->ops->verify(pt->state, (uint32_t)pt->v, &c, &pt->h), KB_OK, "verify: %s",
                 last_error);
    cr_assert_str_eq(c.measure, "mismatches");
    cr_assert_eq(c.tolerance, 0.0);
    /* The plugin's view agrees with the host's rule. */
    cr_assert_eq(c.passed, c.error <= c.tolerance);
    return c;
}

static void point_close(point *pt)
{
    plug->ops->teardown(pt->state, &pt->h);
    pt->state = NULL;
}

/* Removes the term A[i][p] * B[p][j] from C[i][j]: the product with that
   term dropped from that dot product (in double, then rounded). */
static void drop_term(point *pt, uint64_t i, uint64_t j, uint64_t p)
{
    const float *A = ext->a(pt->state), *B = ext->b(pt->state);
    float *C = ext->c(pt->state);
    double t = (double)A[i * pt->k + p] * (double)B[p * pt->n + j];
    C[i * pt->n + j] = (float)((double)C[i * pt->n + j] - t);
}

/* The p whose term |A[i][p] B[p][j]| is largest: dropping it is the
   plausible error that is still within reach of the random-input bound. */
static uint64_t largest_term(point *pt, uint64_t i, uint64_t j)
{
    const float *A = ext->a(pt->state), *B = ext->b(pt->state);
    uint64_t best = 0;
    double big = -1;
    for (uint64_t p = 0; p < pt->k; p++) {
        double t = fabs((double)A[i * pt->k + p] * (double)B[p * pt->n + j]);
        if (t > big) {
            big = t;
            best = p;
        }
    }
    return best;
}

/* ---- the descriptor and plan -------------------------------------------- */

Test(matmul, descriptor_lists_the_path_in_order)
{
    static const char *const order[] = {"cpu",       "cpu-blocked", "naive",  "tiled",
                                        "coalesced", "reg1d",       "reg2d",  "vec4",
                                        "warptile",  "pipelined",   "wmma",   "mma",
                                        "wgmma",     "cublas",      "cublas-tf32",
                                        "cublas-bf16"};
    cr_assert_str_eq(plug->name, "matmul");
    cr_assert_eq(plug->n_params, KBM_N_PARAMS);
    cr_assert_eq(plug->n_variants, sizeof order / sizeof order[0]);
    for (uint32_t v = 0; v < plug->n_variants; v++) {
        cr_assert_str_eq(plug->variants[v].name, order[v]);
        cr_assert_eq(plug->variants[v].backend, v < 2 ? KB_BACKEND_CPU : KB_BACKEND_CUDA,
                     "%s has the wrong backend", order[v]);
        cr_assert_gt(strlen(plug->variants[v].summary), 20);
    }
}

Test(matmul, descriptor_flags_and_uses)
{
    uint64_t base = KB_USES(KBM_P_M) | KB_USES(KBM_P_N) | KB_USES(KBM_P_K) |
                    KB_USES(KBM_P_PRECISION) | KB_USES(KBM_P_INPUTS) | KB_USES(KBM_P_CHECK);
    for (uint32_t v = 0; v < plug->n_variants; v++) {
        const kb_variant *x = &plug->variants[v];
        uint64_t want = base;
        if (strcmp(x->name, "tiled") == 0)
            want |= KB_USES(KBM_P_BLOCK);
        if (strcmp(x->name, "warptile") == 0)
            want |= KB_USES(KBM_P_TILE);
        if (strcmp(x->name, "pipelined") == 0)
            want |= KB_USES(KBM_P_TILE) | KB_USES(KBM_P_STAGES);
        if (strcmp(x->name, "mma") == 0)
            want |= KB_USES(KBM_P_STAGES);
        cr_assert_eq(x->uses, want, "%s uses %llx, not %llx", x->name,
                     (unsigned long long)x->uses, (unsigned long long)want);
        uint32_t flags = strncmp(x->name, "cublas", 6) == 0 ? KB_VARIANT_LIBRARY : 0;
        cr_assert_eq(x->flags, flags, "%s has flags %x", x->name, x->flags);
    }
}

Test(matmul, plan_counts_flops_and_bytes)
{
    kb_value p[KBM_N_PARAMS];
    params_of(p, 127, 129, 131, KBM_RANDOM, KBM_CHECK_AUTO);
    kb_host h = make_host(1);
    kb_work w;
    memset(&w, 0, sizeof w);
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "plan: %s", last_error);
    cr_assert_eq(w.flops, 2.0 * 127 * 129 * 131);
    cr_assert_eq(w.bytes_read, 4ull * (127 * 131 + 131 * 129));
    cr_assert_eq(w.bytes_written, 4ull * 127 * 129);
    cr_assert_eq(w.items, 127ull * 129);
    /* Full check: A, B, C and two doubles per element of C. */
    cr_assert_eq(w.host_bytes, 4ull * (127 * 131 + 131 * 129 + 127 * 129) + 16ull * 127 * 129);
    cr_assert_geq(w.device_bytes, 4ull * (127 * 131 + 131 * 129 + 127 * 129));
}

Test(matmul, plan_refuses_a_full_check_too_large_for_the_cpu)
{
    kb_value p[KBM_N_PARAMS];
    params_of(p, 65536, 65536, 65536, KBM_RANDOM, KBM_CHECK_FULL);
    kb_host h = make_host(1);
    kb_work w;
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_EINVAL);
    cr_assert_eq(fail_calls, 1);
    cr_assert_not_null(strstr(last_error, "check = sampled"), "message: %s", last_error);
    /* auto picks the sampled check there, which plan accepts. */
    p[KBM_P_CHECK].i = KBM_CHECK_AUTO;
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "plan: %s", last_error);
}

Test(matmul, plan_refuses_a_block_the_tiled_kernel_lacks)
{
    kb_value p[KBM_N_PARAMS];
    params_of(p, 100, 100, 100, KBM_RANDOM, KBM_CHECK_AUTO);
    p[KBM_P_BLOCK].i = 12;
    kb_host h = make_host(1);
    kb_work w;
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_EINVAL);
    cr_assert_not_null(strstr(last_error, "8, 16 or 32"), "message: %s", last_error);
}

/* ---- the CPU variants pass ------------------------------------------------- */

static void expect_pass(uint64_t m, uint64_t n, uint64_t k, int inputs, int check,
                        const char *variant)
{
    point pt;
    point_open(&pt, m, n, k, inputs, check, variant, 1);
    kb_check c = point_verify(&pt);
    cr_assert_eq(c.error, 0.0, "%s at %llux%llux%llu (inputs %d, check %d): %g mismatches",
                 variant, (unsigned long long)m, (unsigned long long)n, (unsigned long long)k,
                 inputs, check, c.error);
    point_close(&pt);
}

static const uint64_t shapes[][3] = {
    {1, 1, 1}, {1, 4097, 3}, {3, 1, 4097}, {127, 129, 131}, {65, 300, 257}, {200, 80, 200}};

Test(matmul, cpu_passes_awkward_shapes_full_check)
{
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int in = KBM_RANDOM; in <= KBM_EXACT; in++)
            expect_pass(shapes[s][0], shapes[s][1], shapes[s][2], in, KBM_CHECK_FULL, "cpu");
}

Test(matmul, cpu_blocked_passes_awkward_shapes_full_check)
{
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int in = KBM_RANDOM; in <= KBM_EXACT; in++)
            expect_pass(shapes[s][0], shapes[s][1], shapes[s][2], in, KBM_CHECK_FULL,
                        "cpu-blocked");
}

Test(matmul, cpu_blocked_passes_awkward_shapes_sampled_check)
{
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int in = KBM_RANDOM; in <= KBM_EXACT; in++)
            expect_pass(shapes[s][0], shapes[s][1], shapes[s][2], in, KBM_CHECK_SAMPLED,
                        "cpu-blocked");
}

Test(matmul, exact_inputs_are_small_integers)
{
    point pt;
    point_open(&pt, 3, 5, 4096, KBM_EXACT, KBM_CHECK_FULL, "cpu", 0);
    const float *A = ext->a(pt.state);
    int nonint = 0, big = 0, zero = 0;
    for (uint64_t e = 0; e < 3 * 4096; e++) {
        nonint += A[e] != floorf(A[e]);
        big += fabsf(A[e]) > 64; /* 4096 * 64^2 = 2^24 */
        zero += A[e] == 0;
    }
    cr_assert_eq(nonint + big + zero, 0, "%d non-integers, %d over 64, %d zeros", nonint, big,
                 zero);
    point_close(&pt);
}

/* ---- verify catches wrong outputs ------------------------------------------ */

Test(matmul, poisoned_output_fails_both_checks)
{
    for (int check = KBM_CHECK_FULL; check <= KBM_CHECK_SAMPLED; check++) {
        point pt;
        point_open(&pt, 127, 129, 131, KBM_RANDOM, check, "cpu-blocked", 0);
        kb_check c = point_verify(&pt);
        cr_assert_gt(c.error, 0.0, "check %d passed a poisoned C", check);
        point_close(&pt);
    }
}

/* One element of C is NaN: the rest right. */
Test(matmul, one_nan_element_fails_the_sampled_check)
{
    point pt;
    point_open(&pt, 127, 129, 131, KBM_RANDOM, KBM_CHECK_SAMPLED, "cpu-blocked", 1);
    cr_assert_eq(point_verify(&pt).error, 0.0);
    ext->c(pt.state)[50 * 129 + 60] = NAN;
    cr_assert_gt(point_verify(&pt).error, 0.0);
    point_close(&pt);
}

Test(matmul, dropped_term_fails_at_a_ragged_shape_random_inputs)
{
    point pt;
    point_open(&pt, 127, 129, 131, KBM_RANDOM, KBM_CHECK_FULL, "cpu-blocked", 1);
    cr_assert_eq(point_verify(&pt).error, 0.0);
    /* The last row and column: the ragged edge of every tiling. */
    drop_term(&pt, 126, 128, largest_term(&pt, 126, 128));
    cr_assert_eq(point_verify(&pt).error, 1.0);
    point_close(&pt);
}

Test(matmul, dropped_term_fails_at_a_ragged_shape_exact_inputs)
{
    point pt;
    point_open(&pt, 127, 129, 131, KBM_EXACT, KBM_CHECK_FULL, "cpu", 1);
    cr_assert_eq(point_verify(&pt).error, 0.0);
    drop_term(&pt, 64, 17, 130); /* any term: exact inputs hide nothing */
    cr_assert_eq(point_verify(&pt).error, 1.0);
    point_close(&pt);
}

/* Sampled check, ragged shape, an element in no sampled row or column: only
   the projection can see it, and with exact inputs it does. */
static int sampled_somewhere(point *pt, uint64_t i, uint64_t j);

Test(matmul, dropped_term_fails_the_projection_at_a_ragged_shape)
{
    point pt;
    point_open(&pt, 1000, 1001, 999, KBM_EXACT, KBM_CHECK_SAMPLED, "cpu-blocked", 1);
    cr_assert_eq(point_verify(&pt).error, 0.0);
    uint64_t i = 501, j = 333;
    cr_assert_not(sampled_somewhere(&pt, i, j));
    drop_term(&pt, i, j, 998);
    cr_assert_eq(point_verify(&pt).error, 1.0);
    point_close(&pt);
}

/* Sampled check, random inputs: a term dropped from an element of a sampled
   row (the last row, always sampled) exceeds that element's bound. */
Test(matmul, dropped_term_fails_a_sampled_row_random_inputs)
{
    point pt;
    point_open(&pt, 1000, 1001, 999, KBM_RANDOM, KBM_CHECK_SAMPLED, "cpu-blocked", 1);
    cr_assert_eq(point_verify(&pt).error, 0.0);
    drop_term(&pt, 999, 500, largest_term(&pt, 999, 500));
    cr_assert_geq(point_verify(&pt).error, 1.0);
    point_close(&pt);
}

Test(matmul, swapped_elements_fail)
{
    point pt;
    point_open(&pt, 127, 129, 131, KBM_RANDOM, KBM_CHECK_FULL, "cpu-blocked", 1);
    float *C = ext->c(pt.state);
    float t = C[10 * 129 + 20];
    C[10 * 129 + 20] = C[10 * 129 + 21];
    C[10 * 129 + 21] = t;
    cr_assert_eq(point_verify(&pt).error, 2.0);
    point_close(&pt);
}

Test(matmul, perturbed_element_fails_exact_inputs)
{
    point pt;
    point_open(&pt, 65, 300, 257, KBM_EXACT, KBM_CHECK_FULL, "cpu-blocked", 1);
    ext->c(pt.state)[64 * 300 + 299] += 1.0f;
    cr_assert_eq(point_verify(&pt).error, 1.0);
    point_close(&pt);
}

/* 4096^3, exact inputs, sampled check: a term dropped from one dot product in
   no sampled row or column fails the projection; one in a sampled row fails
   that row too. */
Test(matmul, dropped_term_fails_at_4096_cubed)
{
    point pt;
    point_open(&pt, 4096, 4096, 4096, KBM_EXACT, KBM_CHECK_SAMPLED, "cpu-blocked", 1);
    cr_assert_not(ext->full(pt.state));
    cr_assert_eq(point_verify(&pt).error, 0.0);
    uint64_t i = 2049, j = 1023;
    cr_assert_not(sampled_somewhere(&pt, i, j));
    drop_term(&pt, i, j, 4095);
    cr_assert_eq(point_verify(&pt).error, 1.0); /* the projection's row i */
    drop_term(&pt, i, j, 0); /* a second term of the same element */
    cr_assert_eq(point_verify(&pt).error, 1.0);
    /* The last row is always sampled: dropping a term there fails the row
       check and the projection. */
    drop_term(&pt, 4095, 7, 0);
    cr_assert_geq(point_verify(&pt).error, 3.0);
    point_close(&pt);
}

/* Whether (i, j) lies in a sampled row or column, found by perturbing nothing:
   the sampled indices are the first, the last and six drawn from the seed, so
   the test recomputes them as the plugin does. */
static int sampled_somewhere(point *pt, uint64_t i, uint64_t j)
{
    for (int t = 0; t < KBM_SAMPLES; t++) {
        uint64_t r = t == 0 ? 0 : t == 1 ? pt->m - 1 : kb_rand_u64(pt->h.seed, 4, (uint64_t)t) % pt->m;
        uint64_t c = t == 0 ? 0 : t == 1 ? pt->n - 1 : kb_rand_u64(pt->h.seed, 5, (uint64_t)t) % pt->n;
        if (r == i || c == j)
            return 1;
    }
    return 0;
}

/* ---- the tensor-core precisions ------------------------------------------ */

static uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* x rounded to `keep` significand bits (tf32: 11, bf16: 8) by the test's own
   rule, not the plugin's bit trick: the nearer of the two neighbours that
   have `keep` bits (truncated, and one unit further from zero), ties going
   away from zero (ties_even = 0) or to the one with an even last bit. */
static float round_to_bits(float x, int keep, int ties_even)
{
    uint32_t drop = 24 - (uint32_t)keep, mask = (1u << drop) - 1;
    float lo = float_of(bits_of(x) & ~mask);
    float hi = float_of((bits_of(x) & ~mask) + (1u << drop));
    double dlo = fabs((double)x - lo), dhi = fabs((double)hi - x);
    if (dlo != dhi)
        return dlo < dhi ? lo : hi;
    if (!ties_even)
        return hi;
    return ((bits_of(lo) >> drop) & 1u) ? hi : lo;
}

static const char *const precision_names[KBM_N_PRECISIONS] = {"f32", "tf32", "bf16", "fp32x3"};

Test(matmul, precision_choices_follow_the_enum)
{
    const kb_param *p = (const kb_param *)((const char *)plug->params +
                                           (size_t)KBM_P_PRECISION * plug->param_size);
    cr_assert_str_eq(p->name, "precision");
    cr_assert_eq(p->n_choices, KBM_N_PRECISIONS);
    for (int i = 0; i < KBM_N_PRECISIONS; i++)
        cr_assert_str_eq(p->choices[i], precision_names[i]);
    cr_assert_str_eq(p->def, "f32");
}

/* prepare() says which precision a variant lacks, in a sentence. */
Test(matmul, a_variant_skips_a_precision_it_lacks)
{
    static const struct { const char *variant; int precision; } lacks[] = {
        {"cpu", KBM_FP32X3}, {"cpu-blocked", KBM_FP32X3}, {"wmma", KBM_FP32X3},
        {"wmma", KBM_F32},   {"mma", KBM_F32},            {"pipelined", KBM_BF16},
        {"cublas", KBM_TF32}, {"cublas-tf32", KBM_BF16},  {"cublas-bf16", KBM_FP32X3}};
    for (size_t i = 0; i < sizeof lacks / sizeof lacks[0]; i++) {
        kb_value p[KBM_N_PARAMS];
        params_of_p(p, 17, 19, 23, KBM_RANDOM, KBM_CHECK_FULL, lacks[i].precision);
        kb_host h = make_host(3);
        void *state = NULL;
        int v = variant_index(lacks[i].variant);
        cr_assert_eq(plug->ops->setup(p, KB_VARIANT_BIT(v), &h, &state), KB_OK, "setup: %s",
                     last_error);
        cr_assert_eq(plug->ops->prepare(state, (uint32_t)v, &h), KB_EUNSUPPORTED, "%s at %s",
                     lacks[i].variant, precision_names[lacks[i].precision]);
        char want[64];
        snprintf(want, sizeof want, "does not run precision = %s",
                 precision_names[lacks[i].precision]);
        cr_assert_not_null(strstr(last_error, want), "message: %s", last_error);
        plug->ops->teardown(state, &h);
    }
}

/* A and B of a point at `precision`, and the same point's f32 inputs. */
static void inputs_at(int precision, uint64_t m, uint64_t n, uint64_t k, int inputs,
                      const char *variant, point *pt, point *f32)
{
    point_open_p(pt, m, n, k, inputs, KBM_CHECK_FULL, precision, variant, 0);
    point_open_p(f32, m, n, k, inputs, KBM_CHECK_FULL, KBM_F32, "cpu", 0);
}

Test(matmul, setup_rounds_inputs_to_tf32_nearest_ties_away)
{
    point pt, f;
    inputs_at(KBM_TF32, 65, 67, 129, KBM_RANDOM, "cpu-blocked", &pt, &f);
    const float *A = ext->a(pt.state), *A0 = ext->a(f.state);
    const float *B = ext->b(pt.state), *B0 = ext->b(f.state);
    int wrong = 0, changed = 0;
    for (uint64_t e = 0; e < 65 * 129; e++) {
        wrong += bits_of(A[e]) != bits_of(round_to_bits(A0[e], 11, 0));
        changed += A[e] != A0[e];
    }
    for (uint64_t e = 0; e < 129 * 67; e++)
        wrong += bits_of(B[e]) != bits_of(round_to_bits(B0[e], 11, 0));
    cr_assert_eq(wrong, 0, "%d inputs are not their nearest tf32 value", wrong);
    cr_assert_gt(changed, 65 * 129 / 2, "the rounding changed only %d of A's values", changed);
    point_close(&pt);
    point_close(&f);
}

Test(matmul, setup_rounds_inputs_to_bf16_nearest_ties_even)
{
    point pt, f;
    inputs_at(KBM_BF16, 65, 67, 129, KBM_RANDOM, "cpu-blocked", &pt, &f);
    const float *A = ext->a(pt.state), *A0 = ext->a(f.state);
    const float *B = ext->b(pt.state), *B0 = ext->b(f.state);
    int wrong = 0;
    for (uint64_t e = 0; e < 65 * 129; e++)
        wrong += bits_of(A[e]) != bits_of(round_to_bits(A0[e], 8, 1));
    for (uint64_t e = 0; e < 129 * 67; e++)
        wrong += bits_of(B[e]) != bits_of(round_to_bits(B0[e], 8, 1));
    cr_assert_eq(wrong, 0, "%d inputs are not their nearest bf16 value", wrong);
    point_close(&pt);
    point_close(&f);
}

/* The rounding rules at their ties, on values built to be ties. */
Test(matmul, the_test_rounding_rules_break_ties_as_the_hardware_does)
{
    /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10 (tf32): away gives the
       latter; 1 + 2^-8 is halfway between 1 and 1 + 2^-7 (bf16): even
       gives 1, and 1 + 3 * 2^-8 gives 1 + 2^-6 (the even neighbour above). */
    cr_assert_eq(round_to_bits(1.0f + ldexpf(1, -11), 11, 0), 1.0f + ldexpf(1, -10));
    cr_assert_eq(round_to_bits(-1.0f - ldexpf(1, -11), 11, 0), -1.0f - ldexpf(1, -10));
    cr_assert_eq(round_to_bits(1.0f + ldexpf(1, -8), 8, 1), 1.0f);
    cr_assert_eq(round_to_bits(1.0f + 3 * ldexpf(1, -8), 8, 1), 1.0f + ldexpf(1, -6));
}

Test(matmul, fp32x3_inputs_are_plain_f32)
{
    point pt, f;
    inputs_at(KBM_FP32X3, 33, 35, 37, KBM_RANDOM, "mma", &pt, &f);
    cr_assert_eq(memcmp(ext->a(pt.state), ext->a(f.state), 33 * 37 * sizeof(float)), 0);
    cr_assert_eq(memcmp(ext->b(pt.state), ext->b(f.state), 37 * 35 * sizeof(float)), 0);
    point_close(&pt);
    point_close(&f);
}

Test(matmul, plan_counts_the_bf16_copies)
{
    kb_value p[KBM_N_PARAMS];
    kb_host h = make_host(1);
    kb_work f32, b16;
    memset(&f32, 0, sizeof f32);
    memset(&b16, 0, sizeof b16);
    params_of_p(p, 127, 129, 131, KBM_RANDOM, KBM_CHECK_AUTO, KBM_F32);
    cr_assert_eq(plug->ops->plan(p, &f32, &h), KB_OK, "plan: %s", last_error);
    params_of_p(p, 127, 129, 131, KBM_RANDOM, KBM_CHECK_AUTO, KBM_BF16);
    cr_assert_eq(plug->ops->plan(p, &b16, &h), KB_OK, "plan: %s", last_error);
    uint64_t copies = 2ull * (127 * 131 + 131 * 129);
    cr_assert_geq(b16.device_bytes, f32.device_bytes + copies);
    cr_assert_eq(b16.host_bytes, f32.host_bytes + copies);
    /* The same flops; A and B are read as bf16, C written as f32. */
    cr_assert_eq(b16.flops, f32.flops);
    cr_assert_eq(b16.bytes_read, f32.bytes_read / 2);
    cr_assert_eq(b16.bytes_written, f32.bytes_written);
}

/* The device memory of every variant at once: device_bytes plus each
   variant's own (minor 2). */
static uint64_t all_variants_bytes(const kb_work *w)
{
    uint64_t total = w->device_bytes;
    for (uint32_t v = 0; v < plug->n_variants; v++)
        total += w->variant_device_bytes[v];
    return total;
}

/* Small points fit the conformance check's 32 MiB with every variant
   (cuBLAS's small workspace); the measured shapes keep the 32 MiB
   workspace. */
Test(matmul, plan_keeps_small_points_under_32_mib)
{
    kb_value p[KBM_N_PARAMS];
    kb_host h = make_host(1);
    kb_work w;
    for (int prec = 0; prec < KBM_N_PRECISIONS; prec++) {
        params_of_p(p, 256, 256, 256, KBM_RANDOM, KBM_CHECK_AUTO, prec);
        memset(&w, 0, sizeof w);
        cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "plan: %s", last_error);
        cr_assert_leq(all_variants_bytes(&w), 32ull << 20, "%s: %llu bytes",
                      precision_names[prec], (unsigned long long)all_variants_bytes(&w));
    }
    params_of_p(p, 2000, 2000, 80, KBM_RANDOM, KBM_CHECK_AUTO, KBM_F32);
    memset(&w, 0, sizeof w);
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "plan: %s", last_error);
    cr_assert_eq(w.variant_device_bytes[variant_index("cublas")], KBM_CUBLAS_WORKSPACE);
}

/* cuBLAS's workspace is the cuBLAS variants' own (minor 2): a run of the
   own kernels is not charged for it. */
Test(matmul, plan_counts_the_cublas_workspace_per_variant)
{
    kb_value p[KBM_N_PARAMS];
    kb_host h = make_host(1);
    kb_work w;
    params_of_p(p, 256, 256, 256, KBM_RANDOM, KBM_CHECK_AUTO, KBM_F32);
    memset(&w, 0, sizeof w);
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "plan: %s", last_error);
    for (uint32_t v = 0; v < plug->n_variants; v++) {
        int lib = strncmp(plug->variants[v].name, "cublas", 6) == 0;
        cr_assert_eq(w.variant_device_bytes[v], lib ? KBM_CUBLAS_WORKSPACE_SMALL : 0, "%s",
                     plug->variants[v].name);
    }
    cr_assert_eq(w.device_bytes, 3ull * 256 * 256 * 4, "A, B and C in f32, no workspace");
}

Test(matmul, exact_inputs_fit_the_precision)
{
    /* k = 16 allows q = 1024 in f32; bf16 holds every integer only up to
       256, tf32 (and fp32x3's tf32 parts) up to 2048 -- at k = 2 f32 would
       allow 2896. */
    static const struct { int precision; uint64_t k; float q; } cases[] = {
        {KBM_BF16, 16, 256}, {KBM_TF32, 2, 2048}, {KBM_FP32X3, 2, 2048}, {KBM_F32, 16, 1024}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        point pt;
        point_open_p(&pt, 300, 5, cases[c].k, KBM_EXACT, KBM_CHECK_FULL, cases[c].precision,
                     cases[c].precision == KBM_FP32X3 ? "mma" : "cpu", 0);
        const float *A = ext->a(pt.state);
        float big = 0;
        int nonint = 0;
        for (uint64_t e = 0; e < 300 * cases[c].k; e++) {
            big = fabsf(A[e]) > big ? fabsf(A[e]) : big;
            nonint += A[e] != floorf(A[e]) || A[e] == 0;
        }
        cr_assert_eq(nonint, 0);
        cr_assert_leq(big, cases[c].q, "%s: an entry of %g", precision_names[cases[c].precision],
                      big);
        cr_assert_gt(big, cases[c].q * 0.9f, "%s: entries only up to %g",
                     precision_names[cases[c].precision], big);
        point_close(&pt);
    }
}

Test(matmul, cpu_blocked_passes_tf32_and_bf16_at_awkward_shapes)
{
    for (int prec = KBM_TF32; prec <= KBM_BF16; prec++)
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
            for (int in = KBM_RANDOM; in <= KBM_EXACT; in++)
                for (int check = KBM_CHECK_FULL; check <= KBM_CHECK_SAMPLED; check++) {
                    point pt;
                    point_open_p(&pt, shapes[sh][0], shapes[sh][1], shapes[sh][2], in, check,
                                 prec, "cpu-blocked", 1);
                    cr_assert_eq(point_verify(&pt).error, 0.0, "%s, shape %zu, inputs %d, "
                                 "check %d", precision_names[prec], sh, in, check);
                    point_close(&pt);
                }
}

Test(matmul, poisoned_output_fails_every_precision)
{
    for (int prec = 0; prec < KBM_N_PRECISIONS; prec++)
        for (int check = KBM_CHECK_FULL; check <= KBM_CHECK_SAMPLED; check++) {
            point pt;
            point_open_p(&pt, 127, 129, 131, KBM_RANDOM, check, prec,
                         prec == KBM_FP32X3 ? "mma" : "cpu-blocked", 0);
            cr_assert_gt(point_verify(&pt).error, 0.0, "%s, check %d passed a poisoned C",
                         precision_names[prec], check);
            point_close(&pt);
        }
}

Test(matmul, dropped_term_fails_at_bf16_random_inputs)
{
    point pt;
    point_open_p(&pt, 127, 129, 131, KBM_RANDOM, KBM_CHECK_FULL, KBM_BF16, "cpu-blocked", 1);
    cr_assert_eq(point_verify(&pt).error, 0.0);
    drop_term(&pt, 126, 128, largest_term(&pt, 126, 128));
    cr_assert_eq(point_verify(&pt).error, 1.0);
    point_close(&pt);
}

Test(matmul, dropped_term_fails_at_bf16_exact_inputs_sampled)
{
    point pt;
    point_open_p(&pt, 1000, 1001, 999, KBM_EXACT, KBM_CHECK_SAMPLED, KBM_BF16, "cpu-blocked", 1);
    cr_assert_eq(point_verify(&pt).error, 0.0);
    uint64_t i = 501, j = 333;
    cr_assert_not(sampled_somewhere(&pt, i, j));
    drop_term(&pt, i, j, 500);
    cr_assert_eq(point_verify(&pt).error, 1.0); /* the projection's row i */
    point_close(&pt);
}

/* C in double from the state's (rounded) inputs, rounded to f32, and the
   |A||B| of element e. */
static void exact_product(point *pt, double *abs_out, uint64_t e)
{
    const float *A = ext->a(pt->state), *B = ext->b(pt->state);
    float *C = ext->c(pt->state);
    for (uint64_t i = 0; i < pt->m; i++)
        for (uint64_t j = 0; j < pt->n; j++) {
            double r = 0, ra = 0;
            for (uint64_t p = 0; p < pt->k; p++) {
                double t = (double)A[i * pt->k + p] * (double)B[p * pt->n + j];
                r += t;
                ra += fabs(t);
            }
            C[i * pt->n + j] = (float)r;
            if (i * pt->n + j == e)
                *abs_out = ra;
        }
}

/* C exact but element e moved by f * unit * (|A||B|)_e: the mismatches. */
static double perturbed(int precision, double f, double unit)
{
    point pt;
    const uint64_t e = 5 * 129 + 7;
    double ra = 0;
    point_open_p(&pt, 127, 129, 131, KBM_RANDOM, KBM_CHECK_FULL, precision,
                 precision == KBM_FP32X3 ? "mma" : "cpu", 0);
    exact_product(&pt, &ra, e);
    float *C = ext->c(pt.state);
    C[e] = (float)((double)C[e] + f * unit * ra);
    double bad = point_verify(&pt).error;
    point_close(&pt);
    return bad;
}

static double gamma_test(double d, int bits)
{
    return d * ldexp(1, -bits) / (1 - d * ldexp(1, -bits));
}

/* tf32 and bf16 are held to gamma(k + 1) at u = 2^-22, four times the f32
   bound: an error of 3 f32 bounds passes there, 5 do not. */
Test(matmul, tensor_core_bound_is_four_f32_bounds)
{
    double g = gamma_test(132, 24);
    for (int prec = KBM_TF32; prec <= KBM_BF16; prec++) {
        cr_assert_eq(perturbed(prec, 3, g), 0.0, "%s", precision_names[prec]);
        cr_assert_eq(perturbed(prec, 5, g), 1.0, "%s", precision_names[prec]);
    }
    cr_assert_eq(perturbed(KBM_F32, 0.5, g), 0.0);
    cr_assert_eq(perturbed(KBM_F32, 1.5, g), 1.0);
}

/* fp32x3 is held to the f32 bound plus the split's 3 * 2^-22, times
   (1 + 2^-9). */
Test(matmul, fp32x3_bound_is_the_f32_bound_plus_the_split)
{
    double b = (gamma_test(132, 24) + 3 * ldexp(1, -22)) * (1 + ldexp(1, -9));
    cr_assert_eq(perturbed(KBM_FP32X3, 0.97, b), 0.0);
    cr_assert_eq(perturbed(KBM_FP32X3, 1.03, b), 1.0);
}

/* 64 x 64 x 256, random inputs, verified as fp32x3 (against the f32 inputs
   and the bound fp32x3 must meet).  fill: 0 writes C as plain tf32 would
   compute it (inputs rounded to tf32, the exact products summed in double,
   rounded once); 1 as 3xTF32 does (each input split into big = tf32(x) and
   small = tf32(x - big), small*big + big*small + big*big summed in f32 in k
   order, small*small dropped).  Returns the mismatches. */
static double tf32_or_3xtf32(int fill)
{
    point pt;
    const uint64_t m = 64, n = 64, k = 256;
    point_open_p(&pt, m, n, k, KBM_RANDOM, KBM_CHECK_FULL, KBM_FP32X3, "mma", 0);
    const float *A = ext->a(pt.state), *B = ext->b(pt.state);
    float *C = ext->c(pt.state);
    for (uint64_t i = 0; i < m; i++)
        for (uint64_t j = 0; j < n; j++) {
            double r = 0;
            float acc = 0;
            for (uint64_t p = 0; p < k; p++) {
                float a = A[i * k + p], b = B[p * n + j];
                float ab = round_to_bits(a, 11, 0), bb = round_to_bits(b, 11, 0);
                if (fill == 0) {
                    r += (double)ab * (double)bb;
                } else {
                    float as = round_to_bits(a - ab, 11, 0), bs = round_to_bits(b - bb, 11, 0);
                    /* Each product of two tf32 values is exact in f32. */
                    acc += as * bb;
                    acc += ab * bs;
                    acc += ab * bb;
                }
            }
            C[i * n + j] = fill == 0 ? (float)r : acc;
        }
    double bad = point_verify(&pt).error;
    point_close(&pt);
    return bad;
}

Test(matmul, plain_tf32_fails_the_bound_fp32x3_meets)
{
    double bad = tf32_or_3xtf32(0);
    /* Not a marginal miss: a good share of the 4096 elements. */
    cr_assert_gt(bad, 4096 / 10, "plain tf32 failed at only %g elements", bad);
}

Test(matmul, emulated_3xtf32_meets_the_fp32x3_bound)
{
    cr_assert_eq(tf32_or_3xtf32(1), 0.0);
}
