/*
 * test_sort_early_model.cpp -- onesweep-early's kernel bodies
 * (sort_early.cuh) run on the CPU model of a GPU (simt.h): the same source
 * the GPU build compiles, driven the way sort_early.cu's launcher drives it
 * (histogram, then four pass launches, each given in, alt and out and its
 * plan word, which the histogram wrote), and checked against a stable sort
 * on the key order (sort.h, sort_ord), bit for bit, values included.
 *
 * Several blocks run interleaved in a seeded random order, so look-backs
 * meet aggregates, prefixes and unpublished words, and tile numbers are
 * taken out of launch order.  What this cannot show: the GPU's memory model,
 * speed, register or shared-memory limits, or the device build's inline
 * PTX (README.md says what the GPU run checks).
 */
#include "simt.h"

#include "sort_early.cuh"

#include <criterion/criterion.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "sort.h"

namespace {

typedef oe_cfg<384, 20, false, 2> cfg_384x20;
typedef oe_cfg<384, 23, false, 2> cfg_384x23;
typedef oe_cfg<512, 16, false, 2> cfg_512x16;
typedef oe_cfg<256, 24, false, 3> cfg_256x24;
typedef oe_cfg<384, 20, true, 2> cfg_384x20_hw;
typedef oe_cfg<256, 20, false, 4> cfg_256x20;

/* One sorter: its buffers outlive a run, like the plugin's state, so that
   a later run meets the status words of an earlier one. */
struct Sorter {
    simt::Model m;
    std::vector<uint32_t> buf;
    std::vector<unsigned long long> status;
    uint32_t epoch = 0;
    unsigned resident = 3;  /* pass blocks at once */
    unsigned hist_cap = 3;  /* most histogram blocks */
    int hist_parts = 4;     /* copies of the histogram's counters: 1, 4 or 8 */
    uint32_t ran = 0;       /* the last run: bit p when pass p's blocks took tiles */
    bool alt_written = false; /* the last run wrote the alternate keys */
    explicit Sorter(uint64_t seed) { m.rng.seed(seed); }
};

template <class C, bool F32, bool PAIRS, int VM = OE_VALS_STAGED>
void model_sort(Sorter &S, const std::vector<uint32_t> &kin, const std::vector<uint32_t> &vin,
                uint32_t flip, std::vector<uint32_t> &kout, std::vector<uint32_t> &vout)
{
    typedef oe_smem_layout<C, PAIRS, VM> L;
    uint32_t n = (uint32_t)kin.size();
    uint32_t tiles = (n + C::TILE - 1) / C::TILE;
    if (S.status.size() < (size_t)4 * tiles * 256)
        S.status.resize((size_t)4 * tiles * 256, 0);
    if (++S.epoch >= (1u << 30))
        S.epoch = 1;
    S.buf.assign(OE_BUF_WORDS, 0);
    kout.assign(n, 0xffffffffu);
    vout.assign(PAIRS ? n : 0, 0xffffffffu);
    std::vector<uint32_t> ka(n, 0xffffffffu), va(PAIRS ? n : 0, 0xffffffffu);

    oe_hist_args h;
    h.keys = kin.data();
    h.n = n;
    h.flip = flip;
    h.buf = S.buf.data();
    unsigned hgrid = std::max(1u, std::min(n / (uint32_t)OE_HIST_TILE, S.hist_cap));
    if (S.hist_parts == 1)
        simt::run_grid(S.m, hgrid, OE_HIST_THREADS, oe_hist_smem<1>::WORDS, 2,
                       [&](unsigned t, unsigned b, unsigned g) { oe_hist_body<F32, 1>(h, t, b, g); });
    else if (S.hist_parts == 8)
        simt::run_grid(S.m, hgrid, OE_HIST_THREADS, oe_hist_smem<8>::WORDS, 2,
                       [&](unsigned t, unsigned b, unsigned g) { oe_hist_body<F32, 8>(h, t, b, g); });
    else
        simt::run_grid(S.m, hgrid, OE_HIST_THREADS, oe_hist_smem<4>::WORDS, 2,
                       [&](unsigned t, unsigned b, unsigned g) { oe_hist_body<F32, 4>(h, t, b, g); });

    for (uint32_t p = 0; p < 4; p++) {
        oe_pass_args a;
        a.kin = kin.data(); /* the pass's plan word says which it reads and writes */
        a.vin = PAIRS ? vin.data() : nullptr;
        a.kalt = ka.data();
        a.valt = PAIRS ? va.data() : nullptr;
        a.kout = kout.data();
        a.vout = PAIRS ? vout.data() : nullptr;
        a.plan = S.buf.data() + OE_BUF_PLAN + p;
        a.n = n;
        a.pos = p;
        a.flip = flip;
        a.gstart = S.buf.data() + OE_BUF_STARTS + 256 * p;
        a.status = S.status.data() + (size_t)p * tiles * 256;
        a.tile_counter = S.buf.data() + OE_BUF_TILES + p;
        a.epoch = S.epoch;
        a.zero = 0;
        simt::run_grid(S.m, tiles, C::NT, L::WORDS, S.resident,
                       [&](unsigned t, unsigned, unsigned) { oe_pass_body<C, F32, PAIRS, VM>(a, t); });
    }
    S.ran = 0;
    for (uint32_t p = 0; p < 4; p++)
        S.ran |= S.buf[OE_BUF_TILES + p] ? 1u << p : 0u;
    S.alt_written = std::any_of(ka.begin(), ka.end(), [](uint32_t x) { return x != 0xffffffffu; });
}

enum Kind { U32, I32, F32K };

int sort_key_of(Kind k) { return k == U32 ? SORT_U32 : k == I32 ? SORT_I32 : SORT_F32; }

/* The model's result against a stable sort of the indices on the key
   order: same bits at every position, values the original indices. */
template <class C, bool PAIRS, int VM = OE_VALS_STAGED>
void check_sort(Sorter &S, const std::vector<uint32_t> &keys, Kind kind)
{
    std::vector<uint32_t> vals(keys.size()), ko, vo;
    std::iota(vals.begin(), vals.end(), 0u);
    if (kind == F32K)
        model_sort<C, true, PAIRS, VM>(S, keys, vals, 0, ko, vo);
    else
        model_sort<C, false, PAIRS, VM>(S, keys, vals, kind == I32 ? 0x80000000u : 0u, ko, vo);
    int key = sort_key_of(kind);
    std::vector<uint32_t> idx(keys.size());
    std::iota(idx.begin(), idx.end(), 0u);
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t x, uint32_t y) {
        return sort_ord(keys[x], key) < sort_ord(keys[y], key);
    });
    size_t bad = 0, first = keys.size();
    for (size_t i = 0; i < keys.size(); i++) {
        bool wrong = ko[i] != keys[idx[i]] || (PAIRS && vo[i] != idx[i]);
        if (wrong && bad++ == 0)
            first = i;
    }
    cr_assert_eq(bad, 0u, "n = %zu, tile %dx%d: %zu positions wrong, the first at %zu", keys.size(),
                 C::NT, C::IT, bad, first);
}

std::vector<uint32_t> random_keys(size_t n, uint64_t seed, uint32_t mask = 0xffffffffu)
{
    std::mt19937_64 r(seed);
    std::vector<uint32_t> k(n);
    for (auto &x : k)
        x = (uint32_t)r() & mask;
    return k;
}

/* Signed zeros, infinities, subnormals, extremes and random finite floats. */
std::vector<uint32_t> special_floats(size_t n, uint64_t seed)
{
    static const uint32_t fixed[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                     0x7f7fffffu, 0xff7fffffu, 0x00800000u, 0x80800000u,
                                     0x00000001u, 0x80000001u};
    std::mt19937_64 r(seed);
    std::vector<uint32_t> k(n);
    for (auto &x : k) {
        uint64_t v = r();
        if (v % 3 == 0)
            x = fixed[(v >> 8) % 10];
        else {
            x = (uint32_t)(v >> 16);
            if (((x >> 23) & 255) == 255)
                x &= ~(1u << 23); /* no NaN, no infinity from random bits */
        }
    }
    return k;
}

} // namespace

TestSuite(sort_early_model, .timeout = 170);

template <int P> void check_histogram()
{
    for (uint32_t n : {1u, 2047u, 2048u, 2049u, 3u * 2048 + 17, 9u * 2048 + 5, 20000u, 20001u}) {
        std::vector<uint32_t> k = random_keys(n, n, n % 2 ? 0xffffffffu : 0x0f0f0f0fu);
        if (n == 20000) /* runs of 4096 keys sharing their top 3 bytes: the
                           histogram counts whole groups of 16 at once */
            for (uint32_t i = 0; i < n; i++)
                k[i] = (k[i] & 0xffu) | ((uint32_t)(i / 4096 + 1) * 0x01010100u);
        if (n == 20001) /* three distinct top bytes at random: many lanes of
                           a warp share a counter (f32-like) */
            for (uint32_t i = 0; i < n; i++)
                k[i] = (k[i] & 0x00ffffffu) | ((k[i] % 3 + 0x3eu) << 24);
        Sorter S(n);
        S.buf.assign(OE_BUF_WORDS, 0);
        oe_hist_args h;
        h.keys = k.data();
        h.n = n;
        h.flip = 0;
        h.buf = S.buf.data();
        unsigned grid = std::max(1u, std::min(n / 2048, 4u)); /* several tiles per block */
        simt::run_grid(S.m, grid, OE_HIST_THREADS, oe_hist_smem<P>::WORDS, 3,
                       [&](unsigned t, unsigned b, unsigned g) { oe_hist_body<false, P>(h, t, b, g); });
        uint32_t count[1024] = {0};
        for (uint32_t x : k)
            for (int p = 0; p < 4; p++)
                count[p * 256 + ((x >> (8 * p)) & 255)]++;
        for (int p = 0; p < 4; p++) {
            uint32_t run = 0;
            for (int d = 0; d < 256; d++) {
                cr_assert_eq(S.buf[OE_BUF_COUNTS + p * 256 + d], count[p * 256 + d],
                             "parts %d, n = %u: count of digit %d at position %d", P, n, d, p);
                cr_assert_eq(S.buf[OE_BUF_STARTS + p * 256 + d], run,
                             "parts %d, n = %u: start of digit %d at position %d", P, n, d, p);
                run += count[p * 256 + d];
            }
        }
    }
}

Test(sort_early_model, histogram_counts_and_starts_1_part) { check_histogram<1>(); }
Test(sort_early_model, histogram_counts_and_starts_4_parts) { check_histogram<4>(); }
Test(sort_early_model, histogram_counts_and_starts_8_parts) { check_histogram<8>(); }

/* Full tiles whose keys share one digit in some passes (the case a
   single-digit shortcut would take; the branch tried two and reverted them,
   README): tiles of one key, of keys that differ only in their low byte,
   and random tiles, interleaved, with a partial last tile; pairs, so values
   and stability are checked too; three histogram copy counts. */
Test(sort_early_model, single_digit_tiles_among_others)
{
    Sorter S(31);
    const uint32_t T = 384 * 20;
    std::vector<uint32_t> k = random_keys(6 * T + 333, 32);
    for (uint32_t i = 0; i < 6 * T; i++) {
        uint32_t tile = i / T;
        if (tile % 3 == 0)
            k[i] = 0x12345678u; /* one digit in every pass */
        else if (tile % 3 == 1)
            k[i] = 0x9abcde00u | (k[i] & 0x3u); /* one digit in passes 1..3 */
    }
    check_sort<cfg_384x20, true>(S, k, U32);
    check_sort<cfg_384x20, false>(S, k, U32);
    S.hist_parts = 8;
    check_sort<cfg_256x24, true>(S, k, U32);
    S.hist_parts = 1;
    check_sort<cfg_384x23, false>(S, k, I32);
}

/* f32 keys travel between passes as fwd(b) and are sorted by the digits of
   rk(fwd(b)): fwd must round-trip every bit pattern, and rk(fwd(.)) must
   order special and random floats exactly as sort_ord does (-0 equal to
   +0 included). */
Test(sort_early_model, f32_flipped_form_round_trips_and_keeps_the_order)
{
    std::vector<uint32_t> k = special_floats(3000, 41);
    for (uint32_t b : k)
        cr_assert_eq(oe_f32_back(oe_f32_fwd(b)), b, "fwd/back of 0x%08x", b);
    for (size_t i = 0; i < k.size(); i++)
        for (size_t j = 0; j < k.size(); j += 7) {
            uint32_t ox = sort_ord(k[i], SORT_F32), oy = sort_ord(k[j], SORT_F32);
            uint32_t rx = oe_sort_value_raw<true>(k[i], 0), ry = oe_sort_value_raw<true>(k[j], 0);
            cr_assert_eq(ox < oy, rx < ry, "0x%08x against 0x%08x", k[i], k[j]);
            cr_assert_eq(ox == oy, rx == ry, "0x%08x against 0x%08x", k[i], k[j]);
            cr_assert_eq(oe_sort_value<OE_KEY_F32_MID>(oe_f32_fwd(k[i]), 0), rx);
        }
}

/* The plan of every set of passes that run (bit p: pass p's digit varies),
   followed the way the launches follow it: each pass that runs reads where
   the keys are, in the form they are in (f32: raw or flipped), and writes
   alt or out, never in; the passes whose digit is constant do nothing; the
   keys end in out, raw; with no pass left the last launch copies. */
Test(sort_early_model, plan_routes_every_set_of_passes_from_in_to_out)
{
    for (uint32_t live = 0; live < 16; live++)
        for (int f32 = 0; f32 < 2; f32++) {
            uint32_t at = OE_IN, runs = 0;
            bool raw = true;
            for (uint32_t p = 0; p < 4; p++) {
                uint32_t w = oe_plan_word(live, p, f32 != 0);
                uint32_t act = oe_plan_action(w);
                if (act == OE_SKIP) {
                    cr_assert(!(live >> p & 1u) || live == 0, "live %x: pass %u skipped", live, p);
                    continue;
                }
                cr_assert_eq(oe_plan_src(w), at, "live %x, f32 %d: pass %u reads %u, keys in %u",
                             live, f32, p, oe_plan_src(w), at);
                cr_assert_neq(oe_plan_dst(w), (uint32_t)OE_IN, "live %x: pass %u writes in", live, p);
                cr_assert_neq(oe_plan_dst(w), at, "live %x: pass %u writes what it reads", live, p);
                int km = oe_plan_key_mode(w);
                if (act == OE_COPY) {
                    cr_assert(live == 0 && p == 3, "live %x: pass %u copies", live, p);
                    cr_assert_eq(km, f32 ? OE_KEY_F32_INOUT : OE_KEY_INT);
                } else {
                    cr_assert_eq(act, (uint32_t)OE_SORT);
                    cr_assert(live >> p & 1u, "live %x: constant pass %u runs", live, p);
                    runs++;
                    if (f32) {
                        cr_assert_eq(oe_km_loads_raw(km), raw, "live %x: pass %u's flip in", live, p);
                        raw = oe_km_writes_raw(km);
                    } else {
                        cr_assert_eq(km, OE_KEY_INT);
                    }
                }
                at = oe_plan_dst(w);
            }
            cr_assert_eq(at, (uint32_t)OE_OUT, "live %x, f32 %d: the keys end in %u", live, f32, at);
            cr_assert(raw, "live %x: f32 keys end flipped", live);
            cr_assert_eq(runs, (uint32_t)__builtin_popcount(live));
        }
}

/* Keys whose digit is the same at some positions: those passes take no
   tile (their tile counters stay 0), the others sort, and the result is
   the stable sort's, keys and values: keys below 2^24 (the top pass
   skipped), keys differing in the low byte alone (one pass, for f32 the
   one that flips in and back), equal keys and n = 1 (the copy; f32 -0 and
   +0 among the equal keys keep their order). */
Test(sort_early_model, constant_digits_skip_their_passes)
{
    Sorter S(43);
    std::vector<uint32_t> k = random_keys(3 * 7680 + 77, 44, 0x00ffffffu);
    check_sort<cfg_384x20, true>(S, k, U32);
    cr_assert_eq(S.ran, 7u, "keys below 2^24: passes run %x", S.ran);
    check_sort<cfg_384x20, false>(S, k, I32);
    cr_assert_eq(S.ran, 7u, "i32 keys below 2^24: passes run %x", S.ran);
    k = random_keys(2 * 7680 + 5, 45, 0xffu);
    for (auto &x : k)
        x |= 0x5a5a5a00u;
    check_sort<cfg_384x20, true>(S, k, U32);
    cr_assert_eq(S.ran, 1u, "keys differing in the low byte: passes run %x", S.ran);
    cr_assert(!S.alt_written, "one pass writes out, not alt");
    for (auto &x : k) /* 1 + 2^-23 * (1 .. 255): rk(fwd(.)) differs in its low byte alone */
        x = 0x3f800000u | ((x & 0xffu) | 1u);
    check_sort<cfg_384x20, true>(S, k, F32K);
    cr_assert_eq(S.ran, 1u, "f32 keys differing in the low byte: passes run %x", S.ran);
    for (auto &x : k) /* and in the second byte too: two passes, flip in, flip back */
        x = 0x3f800000u | (x & 0xffu) | ((x * 7u) & 0x7f00u);
    check_sort<cfg_256x24, false>(S, k, F32K);
    cr_assert_eq(S.ran, 3u, "f32 keys differing in two bytes: passes run %x", S.ran);
    check_sort<cfg_384x20, true>(S, std::vector<uint32_t>(2 * 7680 + 3, 0x12345678u), U32);
    cr_assert_eq(S.ran, 8u, "equal keys: the last launch copies, passes run %x", S.ran);
    cr_assert(!S.alt_written, "the copy writes out alone");
    std::vector<uint32_t> zeros(7680 + 9, 0x80000000u);
    for (size_t i = 0; i < zeros.size(); i += 3)
        zeros[i] = 0;
    check_sort<cfg_384x20, true>(S, zeros, F32K);
    cr_assert_eq(S.ran, 8u, "-0 and +0: the copy, passes run %x", S.ran);
    check_sort<cfg_384x20, true>(S, random_keys(1, 46), I32);
    cr_assert_eq(S.ran, 8u, "n = 1: the copy, passes run %x", S.ran);
    /* every digit varies: four passes, as before */
    check_sort<cfg_384x20, true>(S, random_keys(7680 + 1, 47), U32);
    cr_assert_eq(S.ran, 15u, "random keys: passes run %x", S.ran);
}

Test(sort_early_model, keys_at_tile_edges)
{
    Sorter S(1);
    for (size_t n : {1u, 2u, 31u, 7679u, 7680u, 7681u, 2u * 7680 + 300})
        check_sort<cfg_384x20, false>(S, random_keys(n, 10 + n), U32);
}

Test(sort_early_model, pairs_stay_stable)
{
    Sorter S(2);
    /* few distinct keys: long runs of equal keys whose values must stay in
       input order */
    check_sort<cfg_384x20, true>(S, random_keys(3 * 7680 + 1234, 3, 0x03000300u), U32);
    check_sort<cfg_384x20, true>(S, random_keys(1000, 4), U32);
}

Test(sort_early_model, signed_and_float_keys)
{
    Sorter S(5);
    check_sort<cfg_384x20, false>(S, random_keys(2 * 7680 + 11, 6), I32);
    check_sort<cfg_384x20, true>(S, random_keys(7680 + 5, 7), I32);
    check_sort<cfg_384x20, false>(S, special_floats(2 * 7680 + 13, 8), F32K);
    check_sort<cfg_384x20, true>(S, special_floats(7680 + 7, 9), F32K);
}

Test(sort_early_model, sorted_reversed_and_equal_keys)
{
    Sorter S(11);
    std::vector<uint32_t> k = random_keys(2 * 7680 + 99, 12);
    std::sort(k.begin(), k.end());
    check_sort<cfg_384x20, false>(S, k, U32);
    std::reverse(k.begin(), k.end());
    check_sort<cfg_384x20, true>(S, k, U32);
    check_sort<cfg_384x20, true>(S, std::vector<uint32_t>(2 * 7680 + 1, 0x5a5a5a5au), U32);
    check_sort<cfg_384x20, false>(S, std::vector<uint32_t>(3 * 2048, 0xffffffffu), U32);
}

/* Words left by earlier runs (any epoch but this run's, either flag, any
   count) must read as unpublished; so must a second run's own earlier
   words. */
Test(sort_early_model, stale_status_words_are_ignored)
{
    Sorter S(13);
    size_t n = 3 * 7680 + 3;
    uint32_t tiles = (uint32_t)((n + 7679) / 7680);
    S.status.resize((size_t)4 * tiles * 256);
    std::mt19937_64 r(14);
    S.epoch = 100; /* the run will use 101 */
    for (auto &w : S.status) {
        uint64_t e = r() % 3 == 0 ? 100 : 102 + r() % 5;
        w = (e << 34) | ((1 + r() % 2) << 32) | (r() & 0xffff);
    }
    check_sort<cfg_384x20, true>(S, random_keys(n, 15), U32);
    check_sort<cfg_384x20, true>(S, random_keys(n, 16), U32); /* meets run 101's words */
}

Test(sort_early_model, one_block_at_a_time)
{
    Sorter S(17);
    S.resident = 1;
    check_sort<cfg_384x20, true>(S, random_keys(4 * 7680 + 17, 18), U32);
}

Test(sort_early_model, every_shape_sorts)
{
    Sorter S(19);
    check_sort<cfg_384x23, true>(S, random_keys(2 * 384 * 23 + 77, 20), U32);
    check_sort<cfg_512x16, true>(S, random_keys(2 * 512 * 16 + 77, 21), U32);
    check_sort<cfg_256x24, true>(S, random_keys(2 * 256 * 24 + 77, 22), U32);
    check_sort<cfg_384x20_hw, true>(S, random_keys(2 * 384 * 20 + 77, 23), U32);
    check_sort<cfg_384x20_hw, false>(S, special_floats(384 * 20 + 1, 24), F32K);
}

/* onesweep-split-hold's values (through the keys' stage after the keys,
   held in registers across the look-back): partial tiles, long runs of equal keys (stability), signed and
   float keys, one resident block, and the shapes it is measured at. */
template <int VM> void check_split_values()
{
    Sorter S(25 + VM);
    check_sort<cfg_384x20, true, VM>(S, random_keys(3 * 7680 + 1234, 26, 0x03000300u), U32);
    check_sort<cfg_384x20, true, VM>(S, random_keys(31, 27), U32);
    check_sort<cfg_384x20, true, VM>(S, random_keys(7680 + 5, 28), I32);
    check_sort<cfg_384x20, true, VM>(S, special_floats(2 * 7680 + 7, 29), F32K);
    check_sort<cfg_256x24, true, VM>(S, random_keys(2 * 256 * 24 + 77, 30), U32);
    check_sort<cfg_384x23, true, VM>(S, random_keys(2 * 384 * 23 + 1, 31), U32);
    check_sort<cfg_256x24, true, VM>(S, std::vector<uint32_t>(2 * 6144 + 3, 0x5a5a5a5au), U32);
    S.resident = 1;
    check_sort<cfg_256x20, true, VM>(S, random_keys(3 * 256 * 20 + 9, 32), U32);
}

Test(sort_early_model, split_values_held_across_the_look_back)
{
    check_split_values<OE_VALS_HOLD>();
}
