/*
 * test_sort.c -- the sort plugin on the CPU path (no GPU): its descriptor,
 * plan() refusals, the two CPU variants at awkward sizes for every key type,
 * value mode and distribution, prepare()'s size limits, and verify()
 * rejecting plausibly wrong outputs.
 *
 * The plugin is dlopen'ed from the build tree and driven through a kb_host
 * built here (no stream), so setup() must not touch CUDA.  sort.h gives the
 * parameter indices and the test extension, through which tests damage an
 * output before verify().
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kbench/plugin.h"
#include "sort.h"

#define FIXTURE_PLUGIN_PATH KBENCH_BINARY_DIR "/plugins/kbench-sort.so"
#include "plugin_fixture.h"

static const sort_test_ext *ext;

static kb_host make_host(void) { return fixture_host(42, 2); }

static void load(void)
{
    fixture_load();
    ext = plug->ops->extension(SORT_TEST_EXTENSION);
    cr_assert_not_null(ext);
}

TestSuite(sort, .init = load, .fini = fixture_unload, .timeout = 120);

static uint32_t variant(const char *name) { return fixture_variant(name); }

static void params(kb_value *p, uint64_t n, int key, int pairs, int dist)
{
    p[SORT_P_N].u = n;
    p[SORT_P_KEY].i = key;
    p[SORT_P_VALUES].i = pairs;
    p[SORT_P_DIST].i = dist;
    p[SORT_P_TILE].i = SORT_TILE_AUTO;
    p[SORT_P_HIST].i = SORT_HIST_AUTO;
}

/* setup with the CPU variants, prepare + run variant v; returns the state. */
static void *sorted_by(const char *name, uint64_t n, int key, int pairs, int dist, kb_host *h)
{
    kb_value p[SORT_N_PARAMS];
    params(p, n, key, pairs, dist);
    uint32_t v = variant(name);
    void *st = NULL;
    cr_assert_eq(plug->ops->setup(p, KB_VARIANT_BIT(variant("cpu-qsort")) |
                                        KB_VARIANT_BIT(variant("cpu-radix")),
                                  h, &st),
                 KB_OK, "setup: %s", last_error);
    cr_assert_eq(plug->ops->prepare(st, v, h), KB_OK, "prepare: %s", last_error);
    cr_assert_eq(plug->ops->run(st, v, h), KB_OK, "run: %s", last_error);
    return st;
}

static kb_check verify(void *st, const char *name, kb_host *h)
{
    kb_check c;
    memset(&c, 0, sizeof c);
    cr_assert_eq(plug->ops->verify(st, variant(name), &c, h), KB_OK);
    return c;
}

Test(sort, descriptor)
{
    static const char *const order[] = {"cpu-qsort", "cpu-radix", "odd-even",
                                        "odd-even-multiblock", "bitonic", "merge",
                                        "radix", "onesweep", "onesweep-early",
                                        "onesweep-split-hold",
                                        "cub-radix", "cub-merge", "thrust"};
    cr_assert_str_eq(plug->name, "sort");
    cr_assert_eq(plug->n_params, SORT_N_PARAMS);
    cr_assert_eq(plug->n_variants, sizeof order / sizeof order[0]);
    for (uint32_t v = 0; v < plug->n_variants; v++) {
        const kb_variant *x = &plug->variants[v];
        cr_assert_str_eq(x->name, order[v]);
        cr_assert_eq(x->backend, v < 2 ? KB_BACKEND_CPU : KB_BACKEND_CUDA, "%s", x->name);
        cr_assert_eq(x->flags & KB_VARIANT_LIBRARY, v >= 10 ? KB_VARIANT_LIBRARY : 0u, "%s",
                     x->name);
        /* tile and hist are onesweep-early's (and onesweep-split-hold's, which
           is it with another pairs pass) alone; every variant reads the rest */
        uint64_t all = (1ull << SORT_N_PARAMS) - 1;
        uint64_t early = (1ull << SORT_P_TILE) | (1ull << SORT_P_HIST);
        uint64_t want = strncmp(x->name, "onesweep-", 9) == 0 ? all : all & ~early;
        cr_assert_eq(x->uses, want, "%s: the parameters it reads", x->name);
    }
}

/* plan() refuses p with KB_EINVAL and a sentence that holds `word`. */
static void assert_plan_refuses(const kb_value *p, const char *word)
{
    kb_host h = make_host();
    kb_work w;
    memset(&w, 0, sizeof w);
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_EINVAL);
    cr_assert_not_null(strstr(last_error, word), "sentence: %s", last_error);
}

Test(sort, plan_refuses_special_for_integer_keys)
{
    kb_value p[SORT_N_PARAMS];
    params(p, 100, SORT_U32, SORT_KEYS_ONLY, SORT_SPECIAL);
    assert_plan_refuses(p, "key = f32");
}

Test(sort, plan_refuses_a_tile_that_is_no_shape)
{
    kb_value p[SORT_N_PARAMS];
    params(p, 100, SORT_U32, SORT_KEYS_ONLY, SORT_UNIFORM);
    p[SORT_P_TILE].i = SORT_N_TILES;
    assert_plan_refuses(p, "tile");
}

Test(sort, plan_refuses_a_hist_that_is_no_choice)
{
    kb_value p[SORT_N_PARAMS];
    params(p, 100, SORT_U32, SORT_KEYS_ONLY, SORT_UNIFORM);
    p[SORT_P_HIST].i = SORT_N_HISTS;
    assert_plan_refuses(p, "hist");
}

/* hist: auto is the single copy; each choice its number of parts; no
   parts for a value that is no choice. */
Test(sort, early_hist_parts)
{
    cr_assert_eq(sort_early_hist_parts(SORT_HIST_AUTO), 1);
    cr_assert_eq(sort_early_hist_parts(SORT_HIST_1), 1);
    cr_assert_eq(sort_early_hist_parts(SORT_HIST_4), 4);
    cr_assert_eq(sort_early_hist_parts(SORT_HIST_8), 8);
    cr_assert_eq(sort_early_hist_parts(SORT_N_HISTS), 0);
}

/* Each shape's tile is threads x keys per thread, and the status holds
   four passes of 256 words of 8 bytes per tile, the partial last tile
   included, for the smallest tiles the part's row picks. */
Test(sort, early_tile_shapes_and_status_bytes)
{
    cr_assert_eq(sort_early_tile_keys(SORT_TILE_384X23), 384u * 23);
    cr_assert_eq(sort_early_tile_keys(SORT_TILE_256X24), 256u * 24);
    cr_assert_eq(sort_early_tile_keys(SORT_TILE_384X20_MATCH), 384u * 20);
    cr_assert_eq(sort_early_tile_keys(SORT_TILE_256X20), 256u * 20);
    cr_assert_eq(sort_early_tile_keys(SORT_TILE_384X21), 384u * 21);
    cr_assert_eq(sort_early_tile_keys(SORT_TILE_AUTO), 0u);
    for (int part = SORT_PART_ANY; part < SORT_N_PARTS; part++) {
        cr_assert_eq(sort_early_status_bytes(1, SORT_TILE_AUTO, 0, part), 4u * 256 * 8);
        cr_assert_eq(sort_early_status_bytes(6144, SORT_TILE_AUTO, 0, part), 4u * 256 * 8);
        cr_assert_eq(sort_early_status_bytes(6145, SORT_TILE_AUTO, 0, part), 2u * 4 * 256 * 8);
    }
    /* pairs: 384x20 (7680 keys) is onesweep-early's on the H200 and others */
    cr_assert_eq(sort_early_status_bytes(7680, SORT_TILE_AUTO, 1, SORT_PART_H200), 4u * 256 * 8);
    cr_assert_eq(sort_early_status_bytes(7681, SORT_TILE_AUTO, 1, SORT_PART_H200),
                 2u * 4 * 256 * 8);
    /* the H100 row's pairs run 384x21 (8064 keys) for both variants */
    cr_assert_eq(sort_early_status_bytes(8064, SORT_TILE_AUTO, 1, SORT_PART_H100), 4u * 256 * 8);
    cr_assert_eq(sort_early_status_bytes(8065, SORT_TILE_AUTO, 1, SORT_PART_H100),
                 2u * 4 * 256 * 8);
    /* plan(), before the part is known: the smallest tiles of every row */
    cr_assert_eq(sort_early_status_bytes(7681, SORT_TILE_AUTO, 1, SORT_PART_ANY),
                 2u * 4 * 256 * 8);
    /* a shape given is every part's */
    cr_assert_eq(sort_early_status_bytes(512 * 16 + 1, SORT_TILE_512X16, 1, SORT_PART_ANY),
                 2u * 4 * 256 * 8);
}

/* tile = auto's table (sort.h): keys 256x24 everywhere; pairs held across
   the look-back at 384x21 on an H100 for both variants; elsewhere
   onesweep-early's 384x20 staged and onesweep-split-hold's 384x21 held.
   A shape given keeps each variant's own values' mode. */
Test(sort, auto_reads_the_row_of_the_part)
{
    for (int part = 0; part < SORT_N_PARTS; part++)
        for (int hold = 0; hold < 2; hold++) {
            sort_early_pick k = sort_early_pick_of(SORT_TILE_AUTO, 0, part, hold);
            cr_assert_eq(k.shape, SORT_TILE_256X24, "part %d", part);
            cr_assert_eq(k.hold, 0, "keys alone hold no values");
        }
    sort_early_pick e = sort_early_pick_of(SORT_TILE_AUTO, 1, SORT_PART_H100, 0);
    cr_assert(e.shape == SORT_TILE_384X21 && e.hold, "H100: onesweep-early's pairs hold, 384x21");
    e = sort_early_pick_of(SORT_TILE_AUTO, 1, SORT_PART_H200, 0);
    cr_assert(e.shape == SORT_TILE_384X20 && !e.hold, "H200: onesweep-early's pairs 384x20");
    e = sort_early_pick_of(SORT_TILE_AUTO, 1, SORT_PART_OTHER, 0);
    cr_assert(e.shape == SORT_TILE_384X20 && !e.hold, "others: the H200's row");
    for (int part = 0; part < SORT_N_PARTS; part++) {
        sort_early_pick h = sort_early_pick_of(SORT_TILE_AUTO, 1, part, 1);
        cr_assert(h.shape == SORT_TILE_384X21 && h.hold, "part %d: split-hold 384x21", part);
    }
    e = sort_early_pick_of(SORT_TILE_512X16, 1, SORT_PART_H100, 0);
    cr_assert(e.shape == SORT_TILE_512X16 && !e.hold, "a shape given: onesweep-early stages");
    e = sort_early_pick_of(SORT_TILE_512X16, 1, SORT_PART_H200, 1);
    cr_assert(e.shape == SORT_TILE_512X16 && e.hold, "a shape given: split-hold holds");
}

/* The part from the device's name: whole words "H100" and "H200" only. */
Test(sort, part_of_a_device_name)
{
    cr_assert_eq(sort_part_of("NVIDIA H100 80GB HBM3"), SORT_PART_H100);
    cr_assert_eq(sort_part_of("NVIDIA H100 PCIe"), SORT_PART_H100);
    cr_assert_eq(sort_part_of("NVIDIA H200"), SORT_PART_H200);
    cr_assert_eq(sort_part_of("NVIDIA H200 NVL"), SORT_PART_H200);
    cr_assert_eq(sort_part_of("NVIDIA GH200 480GB"), SORT_PART_OTHER);
    cr_assert_eq(sort_part_of("NVIDIA H1000"), SORT_PART_OTHER);
    cr_assert_eq(sort_part_of("NVIDIA A100-SXM4-80GB"), SORT_PART_OTHER);
    cr_assert_eq(sort_part_of(""), SORT_PART_OTHER);
    cr_assert_eq(sort_part_of(NULL), SORT_PART_OTHER);
}

Test(sort, plan_counts_keys_and_values_once)
{
    kb_value p[SORT_N_PARAMS];
    params(p, 1000, SORT_F32, SORT_PAIRS, SORT_UNIFORM);
    kb_host h = make_host();
    kb_work w;
    memset(&w, 0, sizeof w);
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK);
    cr_assert_eq(w.bytes_read, 8000);
    cr_assert_eq(w.bytes_written, 8000);
    cr_assert_eq(w.items, 1000);
}

/* Device memory (minor 2): the buffers every GPU run shares in
   device_bytes, and per variant what its row adds; a library's storage
   (an alternate of keys and values, twice, plus the slack for its state)
   only on the library variants, so that the own kernels' runs are not
   charged for it. */
Test(sort, plan_counts_library_storage_per_variant)
{
    kb_value p[SORT_N_PARAMS];
    params(p, 1u << 20, SORT_U32, SORT_PAIRS, SORT_UNIFORM);
    kb_host h = make_host();
    kb_work w;
    memset(&w, 0, sizeof w);
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "%s", last_error);
    uint64_t n = 1u << 20, lib = n * 4 * 2 * 2 + (64ull << 20);
    cr_assert_eq(w.device_bytes, n * 4 * 3 * 2, "inputs, outputs, alternates of keys and values");
    static const char *const libs[] = {"cub-radix", "cub-merge", "thrust"};
    for (size_t k = 0; k < 3; k++)
        cr_assert_eq(w.variant_device_bytes[variant(libs[k])], lib, "%s", libs[k]);
    static const char *const none[] = {"cpu-qsort", "cpu-radix", "odd-even",
                                       "odd-even-multiblock", "bitonic", "merge"};
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++)
        cr_assert_eq(w.variant_device_bytes[variant(none[k])], 0, "%s", none[k]);
    /* radix: its per-tile digit counts; onesweep-early: its tile status. */
    cr_assert_eq(w.variant_device_bytes[variant("radix")],
                 sort_ceil_div(n, SORT_RADIX_TILE) * 256 * 4 + 256 * 4);
    cr_assert_geq(w.variant_device_bytes[variant("onesweep-early")],
                  sort_early_status_bytes(n, SORT_TILE_AUTO, 1, SORT_PART_ANY));
    cr_assert_lt(w.variant_device_bytes[variant("onesweep-early")], lib);
}

/* Keys alone: half the shared buffers and half the library bound's
   copies. */
Test(sort, plan_device_memory_of_keys_alone)
{
    kb_value p[SORT_N_PARAMS];
    params(p, 1000, SORT_F32, SORT_KEYS_ONLY, SORT_UNIFORM);
    kb_host h = make_host();
    kb_work w;
    memset(&w, 0, sizeof w);
    cr_assert_eq(plug->ops->plan(p, &w, &h), KB_OK, "%s", last_error);
    cr_assert_eq(w.device_bytes, 1000 * 4 * 3);
    cr_assert_eq(w.variant_device_bytes[variant("cub-radix")], 1000 * 4 * 2 + (64ull << 20));
}

/* Every CPU variant, key type, value mode and distribution at awkward
   sizes: each output must verify. */
Test(sort, cpu_variants_pass_everywhere)
{
    static const uint64_t sizes[] = {1, 2, 31, 1023, 1025, 65537};
    static const char *const names[] = {"cpu-qsort", "cpu-radix"};
    kb_host h = make_host();
    for (size_t a = 0; a < 2; a++)
        for (int key = 0; key < 3; key++)
            for (int pairs = 0; pairs < 2; pairs++)
                for (int dist = 0; dist < SORT_N_DISTS; dist++) {
                    if (dist == SORT_SPECIAL && key != SORT_F32)
                        continue;
                    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                        void *st = sorted_by(names[a], sizes[k], key, pairs, dist, &h);
                        kb_check c = verify(st, names[a], &h);
                        cr_assert(c.passed && c.error == 0,
                                  "%s key %d pairs %d dist %d n %llu: %g mismatches", names[a],
                                  key, pairs, dist, (unsigned long long)sizes[k], c.error);
                        plug->ops->teardown(st, &h);
                    }
                }
}

/* The reference is the stable radix sort; check it against a plain
   insertion sort on the key order at a small size for each key type. */
Test(sort, reference_matches_insertion_sort)
{
    kb_host h = make_host();
    for (int key = 0; key < 3; key++) {
        void *st = sorted_by("cpu-radix", 300, key, SORT_KEYS_ONLY,
                             key == SORT_F32 ? SORT_SPECIAL : SORT_UNIFORM, &h);
        const uint32_t *in = ext->keys_in(st), *ref = ext->reference(st);
        uint32_t a[300];
        memcpy(a, in, sizeof a);
        for (int i = 1; i < 300; i++) /* stable */
            for (int j = i; j > 0 && sort_ord(a[j - 1], key) > sort_ord(a[j], key); j--) {
                uint32_t t = a[j];
                a[j] = a[j - 1];
                a[j - 1] = t;
            }
        cr_assert_eq(memcmp(a, ref, sizeof a), 0, "key %d", key);
        plug->ops->teardown(st, &h);
    }
}

Test(sort, special_floats_hold_both_zeros_and_infinities)
{
    kb_host h = make_host();
    void *st = sorted_by("cpu-radix", 4096, SORT_F32, SORT_KEYS_ONLY, SORT_SPECIAL, &h);
    const uint32_t *ref = ext->reference(st);
    int negz = 0, posz = 0;
    for (int i = 0; i < 4096; i++) {
        negz += ref[i] == 0x80000000u;
        posz += ref[i] == 0u;
    }
    cr_assert_gt(negz, 0);
    cr_assert_gt(posz, 0);
    cr_assert_eq(ref[0], 0xff800000u, "-inf first");
    cr_assert_eq(ref[4095], 0x7f800000u, "+inf last");
    plug->ops->teardown(st, &h);
}

Test(sort, poisoned_output_fails)
{
    kb_host h = make_host();
    kb_value p[SORT_N_PARAMS];
    params(p, 1000, SORT_U32, SORT_KEYS_ONLY, SORT_UNIFORM);
    void *st = NULL;
    cr_assert_eq(plug->ops->setup(p, KB_VARIANT_BIT(variant("cpu-radix")), &h, &st), KB_OK);
    cr_assert_eq(plug->ops->prepare(st, variant("cpu-radix"), &h), KB_OK);
    kb_check c = verify(st, "cpu-radix", &h); /* not run: the poison is checked */
    cr_assert_eq(c.passed, 0);
    cr_assert_gt(c.error, 0);
    plug->ops->teardown(st, &h);
}

/* One key duplicated in place of its neighbour: still sorted, no longer a
   permutation.  Checked on an unstable variant, so that the key-order
   comparison (not the bit-for-bit one of stable variants) catches it. */
Test(sort, duplicated_key_fails)
{
    kb_host h = make_host();
    void *st = sorted_by("cpu-qsort", 1000, SORT_U32, SORT_KEYS_ONLY, SORT_UNIFORM, &h);
    cr_assert(verify(st, "cpu-qsort", &h).passed);
    uint32_t *out = ext->keys_out(st);
    cr_assert_neq(out[500], out[501]);
    out[500] = out[501];
    kb_check c = verify(st, "cpu-qsort", &h);
    cr_assert_eq(c.passed, 0);
    cr_assert_eq(c.error, 1);
    plug->ops->teardown(st, &h);
}

Test(sort, swapped_neighbours_fail)
{
    kb_host h = make_host();
    void *st = sorted_by("cpu-qsort", 1000, SORT_I32, SORT_KEYS_ONLY, SORT_PERMUTATION, &h);
    uint32_t *out = ext->keys_out(st);
    uint32_t t = out[10];
    out[10] = out[11];
    out[11] = t;
    kb_check c = verify(st, "cpu-qsort", &h);
    cr_assert_eq(c.passed, 0);
    cr_assert_eq(c.error, 2);
    plug->ops->teardown(st, &h);
}

Test(sort, perturbed_key_fails)
{
    kb_host h = make_host();
    void *st = sorted_by("cpu-radix", 1000, SORT_F32, SORT_KEYS_ONLY, SORT_UNIFORM, &h);
    ext->keys_out(st)[999] ^= 1u; /* the last bit of the largest key */
    cr_assert_eq(verify(st, "cpu-radix", &h).passed, 0);
    plug->ops->teardown(st, &h);
}

/* -0 and +0 compare equal, so only the count of -0 tells a -0 turned into
   +0; the unstable qsort variant has no bit-for-bit check to lean on. */
Test(sort, negative_zero_turned_positive_fails)
{
    kb_host h = make_host();
    void *st = sorted_by("cpu-qsort", 4096, SORT_F32, SORT_KEYS_ONLY, SORT_SPECIAL, &h);
    cr_assert(verify(st, "cpu-qsort", &h).passed);
    uint32_t *out = ext->keys_out(st);
    int k = 0;
    while (out[k] != 0x80000000u)
        k++;
    out[k] = 0;
    kb_check c = verify(st, "cpu-qsort", &h);
    cr_assert_eq(c.passed, 0);
    cr_assert_eq(c.error, 1);
    plug->ops->teardown(st, &h);
}

/* Pairs: a value that points at another key with the same bits nowhere
   near fails (the key of value v must be input key v). */
Test(sort, pair_value_swapped_between_keys_fails)
{
    kb_host h = make_host();
    void *st = sorted_by("cpu-qsort", 1000, SORT_U32, SORT_PAIRS, SORT_UNIFORM, &h);
    cr_assert(verify(st, "cpu-qsort", &h).passed);
    uint32_t *v = ext->vals_out(st);
    uint32_t t = v[3];
    v[3] = v[700];
    v[700] = t;
    kb_check c = verify(st, "cpu-qsort", &h);
    cr_assert_eq(c.passed, 0);
    cr_assert_eq(c.error, 2);
    plug->ops->teardown(st, &h);
}

Test(sort, pair_value_repeated_fails)
{
    kb_host h = make_host();
    void *st = sorted_by("cpu-radix", 1000, SORT_U32, SORT_PAIRS, SORT_ALL_EQUAL, &h);
    uint32_t *v = ext->vals_out(st);
    v[9] = v[8]; /* same key: only the permutation rule sees it */
    cr_assert_eq(verify(st, "cpu-radix", &h).passed, 0);
    plug->ops->teardown(st, &h);
}

/* A stable variant's equal keys must keep their input order: two values of
   equal keys exchanged are a valid unstable result, not a stable one. */
Test(sort, stable_variant_rejects_reordered_equal_keys)
{
    kb_host h = make_host();
    void *st = sorted_by("cpu-radix", 1000, SORT_I32, SORT_PAIRS, SORT_FEW_UNIQUE, &h);
    cr_assert(verify(st, "cpu-radix", &h).passed);
    uint32_t *k = ext->keys_out(st), *v = ext->vals_out(st);
    cr_assert_eq(k[0], k[1]);
    uint32_t t = v[0];
    v[0] = v[1];
    v[1] = t;
    cr_assert_eq(verify(st, "cpu-radix", &h).passed, 0, "cpu-radix claims stability");
    cr_assert_eq(verify(st, "cpu-qsort", &h).passed, 1, "cpu-qsort does not");
    plug->ops->teardown(st, &h);
}

Test(sort, prepare_refuses_beyond_a_variants_limit)
{
    kb_host h = make_host();
    kb_value p[SORT_N_PARAMS];
    params(p, SORT_ODDEVEN_MAX + 1, SORT_U32, SORT_KEYS_ONLY, SORT_UNIFORM);
    void *st = NULL;
    cr_assert_eq(plug->ops->setup(p, KB_VARIANT_BIT(variant("cpu-radix")), &h, &st), KB_OK);
    cr_assert_eq(plug->ops->prepare(st, variant("odd-even"), &h), KB_EUNSUPPORTED);
    cr_assert_not_null(strstr(last_error, "at most n = 2049"), "sentence: %s", last_error);
    cr_assert_eq(plug->ops->prepare(st, variant("odd-even-multiblock"), &h), KB_OK);
    plug->ops->teardown(st, &h);
}
