/*
 * test_reduce.c -- the reduce plugin on the CPU path (no GPU): its descriptor,
 * plan() numbers and errors, the two CPU variants at awkward sizes for every
 * element type, and verify() catching outputs that are wrong.
 *
 * The plugin is dlopen'ed from the build tree, as the host would, and driven
 * through a kb_host built here (no stream, device -1), so setup() must not
 * touch CUDA.  reduce.h gives the parameter indices and the test extension
 * (ops->extension(KBR_TEST_EXTENSION)), through which the exact-mode tests
 * read the inputs and write chosen sums into the output before verify().
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kbench/plugin.h"
#include "reduce.h"

#define FIXTURE_PLUGIN_PATH KBENCH_BINARY_DIR "/plugins/kbench-reduce.so"
#include "plugin_fixture.h"

enum {
    P_N = KBR_P_N,
    P_DTYPE = KBR_P_DTYPE,
    P_BLOCK = KBR_P_BLOCK,
    P_ITEMS = KBR_P_ITEMS,
    P_BULK_MIN = KBR_P_BULK_MIN,
    P_INPUTS = KBR_P_INPUTS,
    N_PARAMS = KBR_N_PARAMS
};
enum { F32 = KBR_F32, F64 = KBR_F64, I32 = KBR_I32 };

static kb_host make_host(uint64_t seed) { return fixture_host(seed, 4); }

TestSuite(reduce, .init = fixture_load, .fini = fixture_unload, .timeout = 120);

static int variant_index(const char *name) { return (int)fixture_variant(name); }

static void params_of(kb_value *p, uint64_t n, int dtype)
{
    p[P_N].u = n;
    p[P_DTYPE].i = dtype;
    p[P_BLOCK].i = 256;
    p[P_ITEMS].i = 8;
    p[P_BULK_MIN].u = 512u << 20;
    p[P_INPUTS].i = KBR_RANDOM;
}

Test(reduce, descriptor)
{
    cr_assert_eq(plug->abi_major, KB_ABI_MAJOR);
    cr_assert_str_eq(plug->name, "reduce");
    cr_assert_eq(plug->n_params, N_PARAMS);
    cr_assert_str_eq(plug->params[P_N].name, "n");
    cr_assert_str_eq(plug->params[P_DTYPE].name, "dtype");
    cr_assert_str_eq(plug->params[P_BLOCK].name, "block");
    cr_assert_str_eq(plug->params[P_ITEMS].name, "items");
    cr_assert_str_eq(plug->params[P_BULK_MIN].name, "bulk_min");
    cr_assert_str_eq(plug->params[P_INPUTS].name, "inputs");
    cr_assert_str_eq(plug->params[P_INPUTS].def, "random");
    static const char *const order[] = {"cpu", "cpu-parallel", "interleaved",
                                        "interleaved-strided", "sequential", "first-add",
                                        "unroll-warp", "unroll-complete", "multi-element",
                                        "shuffle", "multipass", "onepass", "onepass-atomic",
                                        "onepass-bulk", "onepass-pdl", "onepass-pdl-late", "cub",
                                        "thrust"};
    cr_assert_eq(plug->n_variants, sizeof order / sizeof order[0]);
    for (uint32_t v = 0; v < plug->n_variants; v++) {
        cr_assert_str_eq(plug->variants[v].name, order[v]);
        cr_assert_not_null(plug->variants[v].summary);
        cr_assert_eq(plug->variants[v].backend, v < 2 ? KB_BACKEND_CPU : KB_BACKEND_CUDA,
                     "%s has the wrong backend", order[v]);
    }
}

Test(reduce, plan_numbers)
{
    static const struct { uint64_t n; int dtype; uint64_t es; } cases[] = {
        {1, F32, 4}, {1000, F32, 4}, {1000, F64, 8}, {(1u << 20) + 1, I32, 4}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kb_value p[N_PARAMS];
        params_of(p, cases[c].n, cases[c].dtype);
        kb_host h = make_host(1);
        kb_work pl;
        memset(&pl, 0, sizeof pl);
        cr_assert_eq(plug->ops->plan(p, &pl, &h), KB_OK, "plan failed: %s", last_error);
        uint64_t in = cases[c].n * cases[c].es;
        cr_assert_eq(pl.bytes_read, in);
        cr_assert_eq(pl.bytes_written, cases[c].es);
        cr_assert_eq(pl.items, cases[c].n);
        cr_assert_eq(pl.flops, (double)(cases[c].n - 1));
        /* Host: the input and one output; device: input, output, partial sums. */
        cr_assert_geq(pl.host_bytes, in + cases[c].es);
        cr_assert_lt(pl.host_bytes, in + 4096);
        cr_assert_gt(pl.device_bytes, in + (cases[c].n / 256) * cases[c].es);
    }
}

/* The libraries' temporary storage is counted per variant (minor 2), so
   that a run of the own kernels is not charged for it. */
Test(reduce, plan_counts_library_storage_per_variant)
{
    kb_value p[N_PARAMS];
    params_of(p, 1u << 20, F32);
    kb_host h = make_host(1);
    kb_work w;
    memset(&w, 0, sizeof w);
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "plan failed: %s", last_error);
    for (uint32_t v = 0; v < plug->n_variants; v++) {
        const char *name = plug->variants[v].name;
        uint64_t want = strcmp(name, "cub") == 0 || strcmp(name, "thrust") == 0
                            ? KBR_LIB_TEMP_ALLOWANCE
                            : 0;
        cr_assert_eq(w.variant_device_bytes[v], want, "%s states %llu bytes", name,
                     (unsigned long long)w.variant_device_bytes[v]);
    }
    /* device_bytes: the input, the partials and the finish, no library. */
    uint64_t in = (1u << 20) * 4;
    cr_assert_lt(w.device_bytes, in + in / 128 + 65536);
}

/* A host of minor 1 has no per-variant field: the libraries' storage goes
   to device_bytes, which it checks whatever the variants. */
Test(reduce, plan_for_an_older_host_folds_library_storage_into_device_bytes)
{
    kb_value p[N_PARAMS];
    params_of(p, 1u << 20, F32);
    kb_host now = make_host(1), old = make_host(1);
    old.abi_minor = 1;
    kb_work w_now, w_old;
    memset(&w_now, 0, sizeof w_now);
    memset(&w_old, 0, sizeof w_old);
    cr_assert_eq(plug->ops->plan(p, &w_now, &now), KB_OK);
    cr_assert_eq(plug->ops->plan(p, &w_old, &old), KB_OK);
    cr_assert_eq(w_old.device_bytes, w_now.device_bytes + 2ull * KBR_LIB_TEMP_ALLOWANCE);
    for (uint32_t v = 0; v < plug->n_variants; v++)
        cr_assert_eq(w_old.variant_device_bytes[v], 0);
}

Test(reduce, plan_overflow_is_an_error)
{
    kb_value p[N_PARAMS];
    params_of(p, 1ull << 62, F64);
    kb_host h = make_host(1);
    kb_work pl;
    cr_assert_eq(plug->ops->plan(p, &pl, &h), KB_EINVAL);
    cr_assert_eq(fail_calls, 1);
    cr_assert_not_null(strstr(last_error, "overflow"), "message: %s", last_error);
    /* The same n in a 4-byte type still fits in 64 bits. */
    params_of(p, 1ull << 61, F32);
    cr_assert_eq(plug->ops->plan(p, &pl, &h), KB_OK, "plan failed: %s", last_error);
    cr_assert_eq(pl.bytes_read, 1ull << 63);
}

Test(reduce, plan_rejects_block_not_power_of_two)
{
    kb_value p[N_PARAMS];
    params_of(p, 1000, F32);
    p[P_BLOCK].i = 96;
    kb_host h = make_host(1);
    kb_work pl;
    cr_assert_eq(plug->ops->plan(p, &pl, &h), KB_EINVAL);
    cr_assert_not_null(strstr(last_error, "power of two"), "message: %s", last_error);
    void *state = NULL;
    cr_assert_eq(plug->ops->setup(p, 1, &h, &state), KB_EINVAL);
    if (state)
        plug->ops->teardown(state, &h);
}

/* One checked run of variant v on a fresh point; returns the check. */
static kb_check run_point(uint64_t n, int dtype, int v, int do_run, uint64_t seed)
{
    kb_value p[N_PARAMS];
    params_of(p, n, dtype);
    kb_host h = make_host(seed);
    void *state = NULL;
    int rc = plug->ops->setup(p, KB_VARIANT_BIT(v), &h, &state);
    cr_assert_eq(rc, KB_OK, "setup n=%llu: %s", (unsigned long long)n, last_error);
    cr_assert_eq(plug->ops->prepare(state, (uint32_t)v, &h), KB_OK, "prepare: %s", last_error);
    if (do_run)
        cr_assert_eq(plug->ops->run(state, (uint32_t)v, &h), KB_OK, "run: %s", last_error);
    kb_check c;
    memset(&c, 0, sizeof c);
    c.passed = -1;
    cr_assert_eq(plug->ops->verify(state, (uint32_t)v, &c, &h), KB_OK, "verify: %s", last_error);
    plug->ops->teardown(state, &h);
    return c;
}

static const uint64_t sizes[] = {1, 2, 31, 1000, (1u << 20) + 1};

static void cpu_variant_passes(const char *name)
{
    int v = variant_index(name);
    for (int dt = F32; dt <= I32; dt++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            kb_check c = run_point(sizes[k], dt, v, 1, 7);
            cr_assert_eq(c.passed, 1, "%s dtype %d n=%llu: error %g > tolerance %g", name, dt,
                         (unsigned long long)sizes[k], c.error, c.tolerance);
            cr_assert_not_null(c.measure);
            if (dt == I32) {
                cr_assert_eq(c.error, 0.0);
                cr_assert_eq(c.tolerance, 0.0);
            } else {
                cr_assert(isfinite(c.error) && c.error >= 0);
                cr_assert_gt(c.tolerance, 0.0);
            }
        }
}

Test(reduce, cpu_sums_pass) { cpu_variant_passes("cpu"); }
Test(reduce, cpu_parallel_sums_pass) { cpu_variant_passes("cpu-parallel"); }

/* prepare() poisons the output; verifying it without a run must fail for
   every type (NaN for floats, -1 for i32, a wrong integer). */
Test(reduce, unwritten_output_fails)
{
    for (int v = 0; v < 2; v++)
        for (int dt = F32; dt <= I32; dt++)
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                kb_check c = run_point(sizes[k], dt, v, 0, 7);
                cr_assert_eq(c.passed, 0, "variant %d dtype %d n=%llu passed unwritten", v, dt,
                             (unsigned long long)sizes[k]);
            }
}

/* The error verify() reports must be the real distance between the output and
   the exact sum, not a number that merely stays under the tolerance.  The
   test reads the stored inputs through the test extension, repeats the cpu
   variant's documented order (chunks of `block` = 256 summed in float, then
   the chunk sums), and computes the exact sum itself.  Then a wrong output
   could not hide: any other value would give another error. */
static kb_check cpu_error_and_want(uint64_t n, uint64_t seed, double *want)
{
    kb_value p[N_PARAMS];
    params_of(p, n, F32);
    kb_host h = make_host(seed);
    void *state = NULL;
    uint32_t v = (uint32_t)variant_index("cpu");
    cr_assert_eq(plug->ops->setup(p, KB_VARIANT_BIT(v), &h, &state), KB_OK, "%s", last_error);
    const kbr_test_ext *ext = plug->ops->extension(KBR_TEST_EXTENSION);
    cr_assert_not_null(ext);
    const float *x = ext->input(state);
    long double exact = 0;
    float total = 0;
    for (uint64_t c = 0; c < n; c += 256) {
        float part = 0;
        for (uint64_t i = c; i < n && i < c + 256; i++) {
            part += x[i];
            exact += x[i];
        }
        total += part;
    }
    *want = (double)fabsl((long double)total - exact);
    cr_assert_eq(plug->ops->prepare(state, v, &h), KB_OK, "%s", last_error);
    cr_assert_eq(plug->ops->run(state, v, &h), KB_OK, "%s", last_error);
    kb_check c;
    memset(&c, 0, sizeof c);
    cr_assert_eq(plug->ops->verify(state, v, &c, &h), KB_OK, "%s", last_error);
    plug->ops->teardown(state, &h);
    return c;
}

Test(reduce, error_is_the_real_distance)
{
    double want, want2;
    kb_check c = cpu_error_and_want(1000, 11, &want);
    cr_assert_eq(c.error, want, "verify reported %.17g, the output is %.17g off", c.error, want);
    cr_assert_str_eq(c.measure, "abs");
    /* A different seed gives other inputs and another error. */
    kb_check d = cpu_error_and_want(1000, 12, &want2);
    cr_assert_eq(d.error, want2);
    cr_assert_neq(d.error, c.error);
}

/* The bound is tight enough to mean something: at n = 1000 in f32, moving
   one element (|x| about 0.5) would exceed it. */
Test(reduce, tolerance_is_meaningful)
{
    kb_check c = run_point(1000, F32, variant_index("cpu"), 1, 3);
    cr_assert_lt(c.tolerance, 0.1, "tolerance %g would hide a dropped element", c.tolerance);
    kb_check d = run_point(1000, F64, variant_index("cpu-parallel"), 1, 3);
    cr_assert_lt(d.tolerance, 1e-9, "tolerance %g", d.tolerance);
}

Test(reduce, gpu_variants_refuse_without_gpu)
{
    kb_value p[N_PARAMS];
    params_of(p, 1000, F32);
    kb_host h = make_host(1);
    void *state = NULL;
    int cpu = variant_index("cpu");
    cr_assert_eq(plug->ops->setup(p, KB_VARIANT_BIT(cpu), &h, &state), KB_OK, "%s", last_error);
    int mp = variant_index("multipass");
    cr_assert_eq(plug->ops->prepare(state, (uint32_t)mp, &h), KB_EUNSUPPORTED);
    cr_assert_not_null(strstr(last_error, "f64"), "message: %s", last_error);
    last_error[0] = 0;
    cr_assert_eq(plug->ops->run(state, (uint32_t)variant_index("onepass"), &h), KB_EUNSUPPORTED);
    cr_assert_neq(last_error[0], 0);
    plug->ops->teardown(state, &h);
}


/* ---- the descriptor's facts: used parameters and flags ---------------------- */

static uint64_t uses_of(const char *name) { return plug->variants[variant_index(name)].uses; }

/* Every variant reads n, dtype and inputs; block, items and bulk_min only
   where its code reads them (cpu-parallel's chunk is fixed, not `block`). */
Test(reduce, variant_uses_masks)
{
    const uint64_t base = KB_USES(P_N) | KB_USES(P_DTYPE) | KB_USES(P_INPUTS);
    const uint64_t block = KB_USES(P_BLOCK), items = KB_USES(P_ITEMS),
                   bulk = KB_USES(P_BULK_MIN);
    static const struct { const char *name; uint64_t extra; } want[] = {
        {"cpu", 1}, {"cpu-parallel", 0}, {"interleaved", 1}, {"interleaved-strided", 1},
        {"sequential", 1}, {"first-add", 1}, {"unroll-warp", 1}, {"unroll-complete", 1},
        {"multi-element", 3}, {"shuffle", 3}, {"multipass", 0}, {"onepass", 0},
        {"onepass-atomic", 0}, {"onepass-bulk", 4}, {"onepass-pdl", 0}, {"onepass-pdl-late", 0}, {"cub", 0},
        {"thrust", 0}};
    cr_assert_eq(plug->n_variants, sizeof want / sizeof want[0]);
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        uint64_t m = base | (want[k].extra & 1 ? block : 0) | (want[k].extra & 2 ? items : 0) |
                     (want[k].extra & 4 ? bulk : 0);
        cr_assert_eq(uses_of(want[k].name), m, "%s uses %#llx, want %#llx", want[k].name,
                     (unsigned long long)uses_of(want[k].name), (unsigned long long)m);
    }
}

/* thrust returns its sum to the host (syncs), onepass-atomic's float order
   varies, cub and thrust are the libraries; no other variant has a flag. */
Test(reduce, variant_flags)
{
    for (uint32_t v = 0; v < plug->n_variants; v++) {
        const char *name = plug->variants[v].name;
        uint32_t want = strcmp(name, "thrust") == 0   ? KB_VARIANT_LIBRARY | KB_VARIANT_SYNCS
                        : strcmp(name, "cub") == 0    ? KB_VARIANT_LIBRARY
                        : strcmp(name, "onepass-atomic") == 0 ? KB_VARIANT_NONDETERM
                                                               : 0;
        cr_assert_eq(plug->variants[v].flags, want, "%s has flags %#x, want %#x", name,
                     plug->variants[v].flags, want);
    }
}

/* ---- exact inputs: equality, and one element wrong fails -------------------
 * With inputs = exact every partial sum is an integer the type holds, so the
 * cpu variant's sum is the exact sum and verify() demands equality.  Each
 * test sets up a point, runs the cpu variant through the plugin's ops, and
 * through the test extension writes into the output the sum as computed, or
 * that sum without element j, or with element j counted twice; then
 * verify(). */

static const uint64_t exact_sizes[] = {1, 31, 1000, (1u << 20) + 3, 1u << 24};

typedef struct exact_point {
    kb_host h;
    void *state;
    const kbr_test_ext *ext;
    uint64_t n;
    int dtype;
    unsigned char sum[8]; /* the output as the cpu variant computed it (4 or
                             8 bytes: the output holds one element) */
} exact_point;

static void exact_open(exact_point *pt, uint64_t n, int dtype)
{
    memset(pt, 0, sizeof *pt);
    pt->h = make_host(5);
    pt->n = n;
    pt->dtype = dtype;
    cr_assert_not_null(plug->ops->extension, "the plugin has no extension()");
    pt->ext = plug->ops->extension(KBR_TEST_EXTENSION);
    cr_assert_not_null(pt->ext, "no %s extension", KBR_TEST_EXTENSION);
    cr_assert_geq(pt->ext->size, sizeof(kbr_test_ext));
    kb_value p[N_PARAMS];
    params_of(p, n, dtype);
    p[P_INPUTS].i = KBR_EXACT;
    uint32_t v = (uint32_t)variant_index("cpu");
    cr_assert_eq(plug->ops->setup(p, KB_VARIANT_BIT(v), &pt->h, &pt->state), KB_OK,
                 "setup dtype %d n=%llu: %s", dtype, (unsigned long long)n, last_error);
    cr_assert_eq(plug->ops->prepare(pt->state, v, &pt->h), KB_OK, "%s", last_error);
    cr_assert_eq(plug->ops->run(pt->state, v, &pt->h), KB_OK, "%s", last_error);
    memcpy(pt->sum, pt->ext->output(pt->state), dtype == F64 ? 8 : 4);
}

static void exact_close(exact_point *pt) { plug->ops->teardown(pt->state, &pt->h); }

/* Element j of the inputs, as a double (exact for these integers). */
static double exact_input(const exact_point *pt, uint64_t j)
{
    const void *in = pt->ext->input(pt->state);
    switch (pt->dtype) {
    case F32: return ((const float *)in)[j];
    case F64: return ((const double *)in)[j];
    default: return ((const int32_t *)in)[j];
    }
}

/* Writes the computed sum plus times * x_j into the output, in the element
   type (i32 modulo 2^32), and verifies. */
static kb_check exact_verify(exact_point *pt, uint64_t j, int times)
{
    void *out = pt->ext->output(pt->state);
    double x = exact_input(pt, j);
    if (pt->dtype == F32) {
        float f;
        memcpy(&f, pt->sum, sizeof f);
        f = (float)((double)f + times * x); /* an integer below 2^24 + k: exact */
        memcpy(out, &f, sizeof f);
    } else if (pt->dtype == F64) {
        double d;
        memcpy(&d, pt->sum, sizeof d);
        d += times * x;
        memcpy(out, &d, sizeof d);
    } else {
        uint32_t u;
        memcpy(&u, pt->sum, sizeof u);
        u += (uint32_t)(int32_t)(times * (int32_t)x);
        memcpy(out, &u, sizeof u);
    }
    kb_check c;
    memset(&c, 0, sizeof c);
    c.passed = -1;
    cr_assert_eq(plug->ops->verify(pt->state, (uint32_t)variant_index("cpu"), &c, &pt->h), KB_OK,
                 "verify: %s", last_error);
    return c;
}

/* The elements each test moves: the first, one in the middle, the last. */
static uint64_t exact_element(uint64_t n, int k) { return k == 0 ? 0 : k == 1 ? n / 2 : n - 1; }

Test(reduce, exact_correct_sum_passes)
{
    for (int dt = F32; dt <= I32; dt++)
        for (size_t k = 0; k < sizeof exact_sizes / sizeof exact_sizes[0]; k++) {
            exact_point pt;
            exact_open(&pt, exact_sizes[k], dt);
            kb_check c = exact_verify(&pt, 0, 0);
            cr_assert_eq(c.passed, 1, "dtype %d n=%llu: the exact sum failed (error %g)", dt,
                         (unsigned long long)pt.n, c.error);
            cr_assert_eq(c.error, 0.0);
            cr_assert_eq(c.tolerance, 0.0, "dtype %d: exact mode has tolerance %g", dt,
                         c.tolerance);
            exact_close(&pt);
        }
}

Test(reduce, exact_sum_missing_one_element_fails)
{
    for (int dt = F32; dt <= I32; dt++)
        for (size_t k = 0; k < sizeof exact_sizes / sizeof exact_sizes[0]; k++) {
            exact_point pt;
            exact_open(&pt, exact_sizes[k], dt);
            for (int e = 0; e < 3; e++) {
                uint64_t j = exact_element(pt.n, e);
                kb_check c = exact_verify(&pt, j, -1);
                cr_assert_eq(c.passed, 0, "dtype %d n=%llu: the sum without element %llu passed",
                             dt, (unsigned long long)pt.n, (unsigned long long)j);
                cr_assert_gt(c.error, c.tolerance);
                /* The error is the missing element itself (one mismatch in i32). */
                cr_assert_eq(c.error, dt == I32 ? 1.0 : fabs(exact_input(&pt, j)));
            }
            exact_close(&pt);
        }
}

Test(reduce, exact_sum_with_one_element_doubled_fails)
{
    for (int dt = F32; dt <= I32; dt++)
        for (size_t k = 0; k < sizeof exact_sizes / sizeof exact_sizes[0]; k++) {
            exact_point pt;
            exact_open(&pt, exact_sizes[k], dt);
            for (int e = 0; e < 3; e++) {
                uint64_t j = exact_element(pt.n, e);
                kb_check c = exact_verify(&pt, j, +1);
                cr_assert_eq(c.passed, 0, "dtype %d n=%llu: the sum with element %llu twice "
                             "passed", dt, (unsigned long long)pt.n, (unsigned long long)j);
                cr_assert_gt(c.error, c.tolerance);
            }
            exact_close(&pt);
        }
}

/* What makes the sums exact: every input is a non-zero integer and sum|x_i|
   (a bound on every partial sum, in any order) is at most 2^24 in f32 and
   2^53 in f64. */
Test(reduce, exact_inputs_keep_every_partial_sum_exact)
{
    for (int dt = F32; dt <= I32; dt++)
        for (size_t k = 0; k < sizeof exact_sizes / sizeof exact_sizes[0]; k++) {
            exact_point pt;
            exact_open(&pt, exact_sizes[k], dt);
            long double abs_sum = 0;
            for (uint64_t i = 0; i < pt.n; i++) {
                double x = exact_input(&pt, i);
                cr_assert(x != 0 && x == floor(x), "dtype %d n=%llu: input %llu is %g", dt,
                          (unsigned long long)pt.n, (unsigned long long)i, x);
                abs_sum += fabs(x);
            }
            if (dt != I32)
                cr_assert_leq(abs_sum, ldexpl(1.0L, dt == F32 ? 24 : 53),
                              "dtype %d n=%llu: sum|x| = %Lg", dt, (unsigned long long)pt.n,
                              abs_sum);
            exact_close(&pt);
        }
}

/* f32 has no exact inputs past n = 2^24 (no k >= 1 keeps n*k <= 2^24): plan
   refuses that point with a sentence, and accepts n = 2^24 itself. */
Test(reduce, exact_f32_stops_at_2_24)
{
    kb_value p[N_PARAMS];
    kb_host h = make_host(1);
    kb_work w;
    params_of(p, (1u << 24) + 1, F32);
    p[P_INPUTS].i = KBR_EXACT;
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_EINVAL);
    cr_assert_eq(fail_calls, 1);
    cr_assert_not_null(strstr(last_error, "2^24"), "message: %s", last_error);
    params_of(p, 1u << 24, F32);
    p[P_INPUTS].i = KBR_EXACT;
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "plan refused n = 2^24: %s", last_error);
}
