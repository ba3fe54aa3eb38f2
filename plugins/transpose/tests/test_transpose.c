/*
 * test_transpose.c -- the transpose plugin on the CPU path (no GPU): its
 * descriptor, plan() numbers and errors, the two CPU variants at awkward
 * shapes for every element type, and verify() catching outputs that are
 * wrong by one swap or one bit.
 *
 * The plugin is dlopen'ed from the build tree and driven through a kb_host
 * built here (no stream, device -1), so setup() must not touch CUDA.
 * transpose.h gives the parameter indices and the test extension, through
 * which the tests read the input and damage the output before verify().
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kbench/plugin.h"
#include "transpose.h"

#define FIXTURE_PLUGIN_PATH KBENCH_BINARY_DIR "/plugins/kbench-transpose.so"
#include "plugin_fixture.h"

static kb_host make_host(uint64_t seed) { return fixture_host(seed, 3); }

TestSuite(transpose, .init = fixture_load, .fini = fixture_unload, .timeout = 60);

static int variant_index(const char *name) { return (int)fixture_variant(name); }

static void params_of(kb_value *p, uint64_t rows, uint64_t cols, int dtype)
{
    p[KBT_P_ROWS].u = rows;
    p[KBT_P_COLS].u = cols;
    p[KBT_P_DTYPE].i = dtype;
    p[KBT_P_BLOCK_X].i = 32;
    p[KBT_P_BLOCK_Y].i = 8;
    p[KBT_P_BAND].i = 0;
    p[KBT_P_STREAMING].i = 0;
}

static size_t esize_of(int dtype) { return dtype == KBT_F64 ? 8 : dtype == KBT_U16 ? 2 : 4; }

Test(transpose, descriptor)
{
    cr_assert_eq(plug->abi_major, KB_ABI_MAJOR);
    cr_assert_str_eq(plug->name, "transpose");
    cr_assert_eq(plug->n_params, KBT_N_PARAMS);
    cr_assert_str_eq(plug->params[KBT_P_ROWS].name, "rows");
    cr_assert_str_eq(plug->params[KBT_P_COLS].name, "cols");
    cr_assert_str_eq(plug->params[KBT_P_DTYPE].name, "dtype");
    cr_assert_str_eq(plug->params[KBT_P_BLOCK_X].name, "block_x");
    cr_assert_str_eq(plug->params[KBT_P_BLOCK_Y].name, "block_y");
    cr_assert_str_eq(plug->params[KBT_P_BAND].name, "band");
    cr_assert_str_eq(plug->params[KBT_P_STREAMING].name, "streaming");
    static const char *const order[] = {"cpu",   "cpu-parallel", "naive",      "naive-mirror",
                                        "smem",  "smem-padded",  "smem-swizzled", "reg4",
                                        "reg2",  "vec16",        "vec16-pipe", "window",
                                        "vec16-band", "window-hoist", "vec16-band-hoist",
                                        "ragged", "tma", "cublas", "copy"};
    cr_assert_eq(plug->n_variants, sizeof order / sizeof order[0]);
    for (uint32_t v = 0; v < plug->n_variants; v++) {
        cr_assert_str_eq(plug->variants[v].name, order[v]);
        cr_assert_eq(plug->variants[v].backend, v < 2 ? KB_BACKEND_CPU : KB_BACKEND_CUDA);
    }
}

/* band is a non-negative tile-row count defaulting to 0 (one band:
   column-major order); streaming a boolean defaulting to off. */
Test(transpose, band_and_streaming_params)
{
    const kb_param *b = &plug->params[KBT_P_BAND], *st = &plug->params[KBT_P_STREAMING];
    cr_assert_eq(b->type, KB_PARAM_INT);
    cr_assert_str_eq(b->def, "0");
    cr_assert_eq(b->min, 0.0);
    cr_assert_eq(b->max, 2147483647.0);
    cr_assert_eq(st->type, KB_PARAM_BOOL);
    cr_assert_str_eq(st->def, "0");
}

/* Only the variants whose block shape comes from the INI file use block_x
   and block_y, only window, vec16-band, their -hoist forms, ragged and tma use
   band and streaming, so that a sweep of one re-times only those; only the two
   references are library rows; no variant waits for the stream. */
Test(transpose, uses_and_flags)
{
    uint64_t block = KB_USES(KBT_P_BLOCK_X) | KB_USES(KBT_P_BLOCK_Y);
    uint64_t order = KB_USES(KBT_P_BAND) | KB_USES(KBT_P_STREAMING);
    uint64_t base = KB_USES(KBT_P_ROWS) | KB_USES(KBT_P_COLS) | KB_USES(KBT_P_DTYPE);
    for (uint32_t v = 0; v < plug->n_variants; v++) {
        const kb_variant *k = &plug->variants[v];
        int blocky = !strcmp(k->name, "naive") || !strcmp(k->name, "naive-mirror") ||
                     !strcmp(k->name, "reg4") || !strcmp(k->name, "reg2");
        int banded = !strcmp(k->name, "window") || !strcmp(k->name, "vec16-band") ||
                     !strcmp(k->name, "window-hoist") || !strcmp(k->name, "vec16-band-hoist") ||
                     !strcmp(k->name, "ragged") || !strcmp(k->name, "tma");
        uint64_t want = base | (blocky ? block : 0) | (banded ? order : 0);
        cr_assert_eq(k->uses, want, "%s uses %llx", k->name, (unsigned long long)k->uses);
        int lib = !strcmp(k->name, "cublas") || !strcmp(k->name, "copy");
        cr_assert_eq(k->flags, lib ? KB_VARIANT_LIBRARY : 0u, "%s flags %x", k->name, k->flags);
    }
}

Test(transpose, plan_numbers)
{
    static const struct { uint64_t rows, cols; int dtype; } cases[] = {
        {1, 1, KBT_F32}, {2048, 512, KBT_F32}, {31, 33, KBT_F64}, {4097, 1, KBT_U16}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kb_value p[KBT_N_PARAMS];
        params_of(p, cases[c].rows, cases[c].cols, cases[c].dtype);
        kb_host h = make_host(1);
        kb_work w;
        memset(&w, 0, sizeof w);
        cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "plan: %s", last_error);
        uint64_t bytes = cases[c].rows * cases[c].cols * esize_of(cases[c].dtype);
        cr_assert_eq(w.bytes_read, bytes);
        cr_assert_eq(w.bytes_written, bytes);
        cr_assert_eq(w.items, cases[c].rows * cases[c].cols);
        cr_assert_eq(w.host_bytes, 2 * bytes);
        cr_assert_geq(w.device_bytes, 2 * bytes);
    }
}

/* block_x * block_y above 1024 is not for the variants that take their
   block from the file (kb_host.refuse, ABI 2.3): naive, naive-mirror, reg4
   and reg2 are refused, the others run; exactly 1024 is fine. */
Test(transpose, plan_refuses_too_many_threads_to_the_block_variants)
{
    kb_value p[KBT_N_PARAMS];
    params_of(p, 100, 100, KBT_F32);
    p[KBT_P_BLOCK_X].i = 64;
    p[KBT_P_BLOCK_Y].i = 32;
    kb_host h = make_host(1);
    kb_work w;
    refused_mask = 0;
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "plan: %s", last_error);
    uint64_t want = 0;
    static const char *const block[] = {"naive", "naive-mirror", "reg4", "reg2"};
    for (size_t i = 0; i < 4; i++)
        want |= KB_VARIANT_BIT(variant_index(block[i]));
    cr_assert_eq(refused_mask, want, "refused %#llx", (unsigned long long)refused_mask);
    cr_assert_not_null(strstr(last_refusal, "more than the 1024 threads"), "%s", last_refusal);
    refused_mask = 0;
    p[KBT_P_BLOCK_Y].i = 16; /* exactly 1024 is fine */
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "plan: %s", last_error);
    cr_assert_eq(refused_mask, 0);
}

/* A host older than ABI 2.3 has no refuse(): there the point is refused,
   as before. */
Test(transpose, plan_refuses_the_point_on_an_older_host)
{
    kb_value p[KBT_N_PARAMS];
    params_of(p, 100, 100, KBT_F32);
    p[KBT_P_BLOCK_X].i = 64;
    p[KBT_P_BLOCK_Y].i = 32;
    kb_host h = make_host(1);
    h.abi_minor = 2;
    kb_work w;
    refused_mask = 0;
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_EINVAL);
    cr_assert_not_null(strstr(last_error, "1024"), "message: %s", last_error);
    cr_assert_eq(refused_mask, 0);
}

Test(transpose, plan_rejects_overflow)
{
    kb_value p[KBT_N_PARAMS];
    params_of(p, 2147483647ull, 2147483647ull, KBT_F64);
    kb_host h = make_host(1);
    kb_work w;
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_EINVAL);
    cr_assert_not_null(strstr(last_error, "overflow"), "message: %s", last_error);
}

/* A state made by setup() for variant v, prepared (output poisoned). */
static void *make_state(uint64_t rows, uint64_t cols, int dtype, int v, kb_host *h)
{
    kb_value p[KBT_N_PARAMS];
    params_of(p, rows, cols, dtype);
    void *state = NULL;
    cr_assert_eq(plug->ops->setup(p, KB_VARIANT_BIT(v), h, &state), KB_OK, "setup: %s",
                 last_error);
    cr_assert_eq(plug->ops->prepare(state, (uint32_t)v, h), KB_OK, "prepare: %s", last_error);
    return state;
}

static kb_check verify_state(void *state, int v, kb_host *h)
{
    kb_check c;
    memset(&c, 0, sizeof c);
    c.passed = -1;
    cr_assert_eq(plug->ops->verify(state, (uint32_t)v, &c, h), KB_OK, "verify: %s", last_error);
    return c;
}

static const uint64_t shapes[][2] = {{1, 1}, {1, 37}, {37, 1}, {31, 33}, {64, 64}, {100, 257}};

static void cpu_variant_passes(const char *name)
{
    int v = variant_index(name);
    for (int dt = 0; dt < KBT_N_DTYPES; dt++)
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            kb_host h = make_host(7);
            void *s = make_state(shapes[k][0], shapes[k][1], dt, v, &h);
            cr_assert_eq(plug->ops->run(s, (uint32_t)v, &h), KB_OK, "run: %s", last_error);
            kb_check c = verify_state(s, v, &h);
            cr_assert_eq(c.passed, 1, "%s dtype %d %llux%llu: %g mismatches", name, dt,
                         (unsigned long long)shapes[k][0], (unsigned long long)shapes[k][1],
                         c.error);
            cr_assert_eq(c.error, 0.0);
            cr_assert_eq(c.tolerance, 0.0);
            cr_assert_str_eq(c.measure, "mismatches");
            plug->ops->teardown(s, &h);
        }
}

Test(transpose, cpu_passes) { cpu_variant_passes("cpu"); }
Test(transpose, cpu_parallel_passes) { cpu_variant_passes("cpu-parallel"); }

/* The CPU output is the transpose itself, checked here independently of
   verify(): out[c * rows + r] holds the bits of in[r * cols + c]. */
Test(transpose, cpu_output_is_the_transpose)
{
    int v = variant_index("cpu");
    kb_host h = make_host(5);
    void *s = make_state(31, 33, KBT_F32, v, &h);
    cr_assert_eq(plug->ops->run(s, (uint32_t)v, &h), KB_OK);
    const kbt_test_ext *ext = plug->ops->extension(KBT_TEST_EXTENSION);
    cr_assert_not_null(ext);
    const uint32_t *in = ext->input(s);
    const uint32_t *out = ext->output(s);
    for (uint64_t r = 0; r < 31; r++)
        for (uint64_t c = 0; c < 33; c++)
            cr_assert_eq(out[c * 31 + r], in[r * 33 + c], "element (%llu, %llu)",
                         (unsigned long long)r, (unsigned long long)c);
    plug->ops->teardown(s, &h);
}

/* prepare() poisons the output: verified without a run, every element of
   every type is wrong. */
Test(transpose, unwritten_output_fails)
{
    int v = variant_index("cpu");
    for (int dt = 0; dt < KBT_N_DTYPES; dt++) {
        kb_host h = make_host(7);
        void *s = make_state(31, 33, dt, v, &h);
        kb_check c = verify_state(s, v, &h);
        cr_assert_eq(c.passed, 0, "dtype %d passed unwritten", dt);
        cr_assert_eq(c.error, 31.0 * 33.0, "dtype %d: %g mismatches", dt, c.error);
        plug->ops->teardown(s, &h);
    }
}

/* A right output with two elements swapped: exactly those two fail. */
Test(transpose, swapped_elements_fail)
{
    int v = variant_index("cpu-parallel");
    for (int dt = 0; dt < KBT_N_DTYPES; dt++) {
        kb_host h = make_host(9);
        void *s = make_state(100, 257, dt, v, &h);
        cr_assert_eq(plug->ops->run(s, (uint32_t)v, &h), KB_OK);
        const kbt_test_ext *ext = plug->ops->extension(KBT_TEST_EXTENSION);
        unsigned char *out = ext->output(s);
        size_t es = esize_of(dt);
        size_t i = 5, j = 100 * 257 - 3; /* two elements with different bits */
        cr_assert_neq(memcmp(out + i * es, out + j * es, es), 0);
        unsigned char tmp[8];
        memcpy(tmp, out + i * es, es);
        memcpy(out + i * es, out + j * es, es);
        memcpy(out + j * es, tmp, es);
        kb_check c = verify_state(s, v, &h);
        cr_assert_eq(c.passed, 0);
        cr_assert_eq(c.error, 2.0, "dtype %d: %g mismatches", dt, c.error);
        plug->ops->teardown(s, &h);
    }
}

/* One bit of one element flipped (a value off by one ulp): it fails. */
Test(transpose, perturbed_element_fails)
{
    int v = variant_index("cpu");
    for (int dt = 0; dt < KBT_N_DTYPES; dt++) {
        kb_host h = make_host(9);
        void *s = make_state(37, 1, dt, v, &h);
        cr_assert_eq(plug->ops->run(s, (uint32_t)v, &h), KB_OK);
        const kbt_test_ext *ext = plug->ops->extension(KBT_TEST_EXTENSION);
        unsigned char *out = ext->output(s);
        out[36 * esize_of(dt)] ^= 1; /* lowest byte of the last element */
        kb_check c = verify_state(s, v, &h);
        cr_assert_eq(c.passed, 0);
        cr_assert_eq(c.error, 1.0, "dtype %d: %g mismatches", dt, c.error);
        plug->ops->teardown(s, &h);
    }
}

/* The copy variant is verified as a copy: a transposed output fails it
   (on a non-square matrix), a copied one passes. */
Test(transpose, copy_is_verified_as_a_copy)
{
    int vc = variant_index("copy");
    int vt = variant_index("cpu");
    kb_host h = make_host(3);
    kb_value p[KBT_N_PARAMS];
    params_of(p, 31, 33, KBT_F32);
    void *s = NULL;
    cr_assert_eq(plug->ops->setup(p, KB_VARIANT_BIT(vt), &h, &s), KB_OK);
    cr_assert_eq(plug->ops->prepare(s, (uint32_t)vt, &h), KB_OK);
    cr_assert_eq(plug->ops->run(s, (uint32_t)vt, &h), KB_OK);
    kb_check c = verify_state(s, vc, &h);
    cr_assert_eq(c.passed, 0, "a transpose passed as a copy");
    const kbt_test_ext *ext = plug->ops->extension(KBT_TEST_EXTENSION);
    memcpy(ext->output(s), ext->input(s), 31 * 33 * 4);
    c = verify_state(s, vc, &h);
    cr_assert_eq(c.passed, 1, "%g mismatches", c.error);
    plug->ops->teardown(s, &h);
}

/* cuBLAS has no 2-byte geam: prepare() refuses u16 with a sentence. */
Test(transpose, cublas_refuses_u16)
{
    int v = variant_index("cublas");
    kb_host h = make_host(1);
    kb_value p[KBT_N_PARAMS];
    params_of(p, 8, 8, KBT_U16);
    void *s = NULL;
    cr_assert_eq(plug->ops->setup(p, KB_VARIANT_BIT(v), &h, &s), KB_OK, "setup: %s", last_error);
    cr_assert_eq(plug->ops->prepare(s, (uint32_t)v, &h), KB_EUNSUPPORTED);
    cr_assert_not_null(strstr(last_error, "f32, f64"), "message: %s", last_error);
    plug->ops->teardown(s, &h);
}

/* u16 inputs are never 0 nor 0xffff (the poison), so no unwritten element
   can match its input. */
Test(transpose, u16_inputs_avoid_zero_and_poison)
{
    int v = variant_index("cpu");
    kb_host h = make_host(11);
    void *s = make_state(256, 1024, KBT_U16, v, &h);
    const kbt_test_ext *ext = plug->ops->extension(KBT_TEST_EXTENSION);
    const uint16_t *in = ext->input(s);
    int distinct_hi = 0;
    for (size_t i = 0; i < 256 * 1024; i++) {
        cr_assert_neq(in[i], 0);
        cr_assert_neq(in[i], 0xffff);
        distinct_hi |= 1 << (in[i] >> 12);
    }
    cr_assert_eq(distinct_hi, 0xffff, "inputs are not spread over the range");
    plug->ops->teardown(s, &h);
}
