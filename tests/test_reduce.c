/*
 * test_reduce.c -- the reduce plugin on the CPU path (no GPU): its descriptor,
 * plan() numbers and errors, the two CPU variants at awkward sizes for every
 * element type, and verify() catching outputs that are wrong.
 *
 * The plugin is dlopen'ed from the build tree, as the host would, and driven
 * through a kb_host built here (no stream, device -1), so setup() must not
 * touch CUDA.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kbench/plugin.h"

#define PLUGIN_PATH KBENCH_BINARY_DIR "/plugins/kbench-reduce.so"

enum { P_N, P_DTYPE, P_BLOCK, P_ITEMS, P_BULK_MIN, N_PARAMS };
enum { F32, F64, I32 };

static void *handle;
static const kb_plugin *plug;
static char last_error[512];
static int fail_calls;

static void test_log(kb_host *h, kb_log_level level, const char *fmt, ...)
{
    (void)h;
    (void)level;
    (void)fmt;
}

static int test_fail(kb_host *h, int code, const char *fmt, ...)
{
    (void)h;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    fail_calls++;
    return code;
}

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
    last_error[0] = 0;
    fail_calls = 0;
}

static void unload(void)
{
    if (handle)
        dlclose(handle);
    handle = NULL;
    plug = NULL;
}

TestSuite(reduce, .init = load, .fini = unload, .timeout = 120);

static int variant_index(const char *name)
{
    for (uint32_t v = 0; v < plug->n_variants; v++)
        if (strcmp(plug->variants[v].name, name) == 0)
            return (int)v;
    cr_assert_fail("no variant named %s", name);
    return -1;
}

static void params_of(kb_value *p, uint64_t n, int dtype)
{
    p[P_N].u = n;
    p[P_DTYPE].i = dtype;
    p[P_BLOCK].i = 256;
    p[P_ITEMS].i = 8;
    p[P_BULK_MIN].u = 512u << 20;
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
    static const char *const order[] = {"cpu", "cpu-parallel", "interleaved",
                                        "interleaved-strided", "sequential", "first-add",
                                        "unroll-warp", "unroll-complete", "multi-element",
                                        "shuffle", "multipass", "onepass", "onepass-atomic",
                                        "onepass-bulk", "cub", "thrust"};
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
   test rebuilds the documented inputs (uniform in [-1, 1) from kb_rand_uniform,
   stored as float), repeats the cpu variant's documented order (chunks of
   `block` = 256 summed in float, then the chunk sums), and computes the exact
   sum itself.  Then a wrong output could not hide: any other value would
   give another error. */
Test(reduce, error_is_the_real_distance)
{
    const uint64_t n = 1000;
    const uint64_t seed = 11;
    long double exact = 0;
    float total = 0;
    for (uint64_t c = 0; c < n; c += 256) {
        float part = 0;
        for (uint64_t i = c; i < n && i < c + 256; i++) {
            float x = (float)kb_rand_uniform(seed, 0, i, -1.0, 1.0);
            part += x;
            exact += x;
        }
        total += part;
    }
    double want = (double)fabsl((long double)total - exact);
    kb_check c = run_point(n, F32, variant_index("cpu"), 1, seed);
    cr_assert_eq(c.error, want, "verify reported %.17g, the output is %.17g off", c.error, want);
    cr_assert_str_eq(c.measure, "abs");
    /* A different seed gives other inputs and another error. */
    kb_check d = run_point(n, F32, variant_index("cpu"), 1, seed + 1);
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

/* ---- verify() catches a sum that misses one element -------------------------
 * tests/reduce.cmake builds the same plugin with KBR_TEST_DROP_LAST, whose
 * cpu variant leaves out the last element.  On points where that element is
 * not tiny, verify() must fail it, and the shipped plugin must pass the same
 * point: so the check sees one missing element, at sizes where the derived
 * tolerance is below it (every i32 size; f64 up to large n; f32 small n). */
#define DROP_LAST_PATH KBENCH_FIXTURE_DIR "/reduce/kbench-reduce-drop-last.so"

static const kb_plugin *load_other(const char *path, void **h)
{
    *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(*h, "cannot load %s: %s", path, dlerror());
    kb_entry_fn entry = (kb_entry_fn)dlsym(*h, KB_ENTRY_SYMBOL);
    cr_assert_not_null(entry);
    const kb_plugin *p = entry(0);
    cr_assert_not_null(p);
    return p;
}

/* The first seed from 1 whose last element is at least 0.25 in magnitude
   (floats) or not zero (i32), so the dropped element cannot be negligible. */
static uint64_t seed_with_visible_last(uint64_t n, int dtype)
{
    for (uint64_t seed = 1;; seed++) {
        if (dtype == I32) {
            if ((int)(kb_rand_u64(seed, 0, n - 1) % 201) - 100 != 0)
                return seed;
        } else if (fabs(kb_rand_uniform(seed, 0, n - 1, -1.0, 1.0)) >= 0.25) {
            return seed;
        }
    }
}

Test(reduce, dropped_element_is_caught)
{
    void *hd = NULL;
    const kb_plugin *dropping = load_other(DROP_LAST_PATH, &hd);
    const kb_plugin *shipped = plug;
    static const struct {
        int dtype;
        uint64_t n;
    } cases[] = {{F32, 31}, {F32, 1000}, {F64, 1000}, {F64, (1u << 20) + 1},
                 {I32, 2}, {I32, 1000}, {I32, (1u << 20) + 1}};
    int v = variant_index("cpu");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint64_t seed = seed_with_visible_last(cases[k].n, cases[k].dtype);
        plug = shipped;
        kb_check good = run_point(cases[k].n, cases[k].dtype, v, 1, seed);
        plug = dropping;
        kb_check bad = run_point(cases[k].n, cases[k].dtype, v, 1, seed);
        plug = shipped;
        cr_assert_eq(good.passed, 1, "dtype %d n=%llu: the shipped cpu variant failed",
                     cases[k].dtype, (unsigned long long)cases[k].n);
        cr_assert_eq(bad.passed, 0,
                     "dtype %d n=%llu: a sum missing its last element passed (error %g, "
                     "tolerance %g)",
                     cases[k].dtype, (unsigned long long)cases[k].n, bad.error, bad.tolerance);
        cr_assert_gt(bad.error, bad.tolerance);
    }
    dlclose(hd);
}
