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

#define PLUGIN_PATH KBENCH_BINARY_DIR "/plugins/kbench-matmul.so"

static void *handle;
static const kb_plugin *plug;
static const kbm_test_ext *ext;
#include "fake_host.h"

static kb_host make_host(uint64_t seed)
{
    kb_host h = {.size = sizeof(kb_host), .seed = seed, .stream = NULL, .device = -1,
                 .sm_count = 0, .l2_bytes = 0, .cpu_threads = 4, .log = test_log,
                 .fail = test_fail};
    return h;
}

static void load(void)
{
    handle = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(handle, "cannot load %s: %s", PLUGIN_PATH, dlerror());
    kb_entry_fn entry = (kb_entry_fn)dlsym(handle, KB_ENTRY_SYMBOL);
    cr_assert_not_null(entry, "no %s in the plugin", KB_ENTRY_SYMBOL);
    plug = entry(0);
    cr_assert_not_null(plug);
    cr_assert_not_null(plug->ops->extension);
    ext = plug->ops->extension(KBM_TEST_EXTENSION);
    cr_assert_not_null(ext);
    cr_assert_eq(ext->size, sizeof(kbm_test_ext));
    last_error[0] = 0;
    fail_calls = 0;
}

static void unload(void)
{
    if (handle)
        dlclose(handle);
    handle = NULL;
    plug = NULL;
    ext = NULL;
}

TestSuite(matmul, .init = load, .fini = unload, .timeout = 240);

static int variant_index(const char *name)
{
    for (uint32_t v = 0; v < plug->n_variants; v++)
        if (strcmp(plug->variants[v].name, name) == 0)
            return (int)v;
    cr_assert_fail("no variant named %s", name);
    return -1;
}

static void params_of(kb_value *p, uint64_t m, uint64_t n, uint64_t k, int inputs, int check)
{
    memset(p, 0, sizeof(kb_value) * KBM_N_PARAMS);
    p[KBM_P_M].u = m;
    p[KBM_P_N].u = n;
    p[KBM_P_K].u = k;
    p[KBM_P_PRECISION].i = KBM_F32;
    p[KBM_P_INPUTS].i = inputs;
    p[KBM_P_CHECK].i = check;
    p[KBM_P_BLOCK].i = 16;
    p[KBM_P_TILE].i = KBM_T128x128x16;
    p[KBM_P_STAGES].i = 3;
}

/* A point set up for variant v, prepared (C poisoned) and, with do_run, run. */
typedef struct point {
    kb_host h;
    void *state;
    uint64_t m, n, k;
    int v;
} point;

static void point_open(point *pt, uint64_t m, uint64_t n, uint64_t k, int inputs, int check,
                       const char *variant, int do_run)
{
    kb_value p[KBM_N_PARAMS];
    params_of(p, m, n, k, inputs, check);
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
    static const char *const order[] = {"cpu",   "cpu-blocked", "naive", "tiled",
                                        "coalesced", "reg1d",   "reg2d", "vec4",
                                        "warptile",  "pipelined", "cublas"};
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
        cr_assert_eq(x->uses, want, "%s uses %llx, not %llx", x->name,
                     (unsigned long long)x->uses, (unsigned long long)want);
        uint32_t flags = strcmp(x->name, "cublas") == 0 ? KB_VARIANT_LIBRARY : 0;
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
