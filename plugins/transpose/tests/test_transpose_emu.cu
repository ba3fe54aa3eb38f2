/*
 * test_transpose_emu.cu -- the window and vec16-band kernels' tile code
 * (transpose_tile.cuh) run on the CPU, thread by thread, phase by phase,
 * exactly as the kernel calls it (transpose_fast.cu: for each tile, the in
 * phase of every thread, a barrier, the out phase of every thread, a
 * barrier).  No GPU is needed; the functions under test are the ones the
 * kernels are compiled from, through a memory model (emu_mem) that checks
 * every access:
 *
 *   global: every load inside the input, every store inside the output,
 *           16-byte accesses 16-byte aligned; every output element written
 *           exactly once, with the bits of its input element;
 *   shared: inside the tile; written only in the in phase and read only in
 *           the out phase (the barriers' sides); no element written twice in
 *           one phase (a race between threads); every read finds a value
 *           written for the same tile (no stale or unwritten slot);
 *   banks:  per instruction (site) and warp, the wavefronts of the shared
 *           accesses against the fewest possible, as the hardware serves
 *           them (4-byte banks; 8-byte accesses a half-warp, 16-byte a
 *           quarter-warp at a time).
 *
 * Shapes cover every phase class (rows % W, cols % W) of each element type,
 * the family's awkward shapes and a few tile orders.  Built as CUDA so that
 * the header compiles as it does for the kernels; everything here runs on
 * the host.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#define KBT_HOST_ONLY 1
#include "transpose_tile.cuh"

/* ---- the checking memory model ------------------------------------------ */

enum { PH_IN = 0, PH_OUT = 1 };

struct access {
    unsigned lane;
    size_t addr; /* bytes from the start of shared memory */
    unsigned width;
};

struct emu_state {
    /* global memory */
    const unsigned char *in_base;
    size_t in_bytes;
    unsigned char *out_base;
    size_t out_bytes;
    size_t esize;
    std::vector<unsigned> writes; /* per output element */
    /* shared memory */
    const unsigned char *sm_base;
    size_t sm_bytes;
    std::vector<long> stamp;      /* per byte: the tile that wrote it (-1: never)   */
    std::vector<long> writer;     /* per byte: phase serial * threads + thread, of the last write */
    long tile, phase_serial;
    int phase;
    unsigned thread, threads;
    /* banks */
    std::map<std::pair<unsigned, int>, std::vector<access> > sites; /* (warp, site) */
    /* findings */
    long oob, misaligned, races, stale, wrong_phase;
    std::string first;
};

static emu_state E;

static void finding(long *counter, const std::string &what)
{
    (*counter)++;
    if (E.first.empty())
        E.first = what;
}

static bool inside(const unsigned char *base, size_t bytes, const void *p, size_t n)
{
    const unsigned char *c = static_cast<const unsigned char *>(p);
    return c >= base && c + n <= base + bytes;
}

static void shared_access(const void *p, size_t n, bool write, int site)
{
    if (!inside(E.sm_base, E.sm_bytes, p, n)) {
        finding(&E.oob, "shared access outside the tile");
        return;
    }
    size_t a = static_cast<const unsigned char *>(p) - E.sm_base;
    if (write != (E.phase == PH_IN))
        finding(&E.wrong_phase, write ? "shared store in the out phase" : "shared load in the in phase");
    long me = E.phase_serial * (long)E.threads + (long)E.thread;
    bool race = false, stale = false;
    for (size_t b = a; b < a + n; b++) {
        if (write) {
            race |= E.writer[b] >= 0 && E.writer[b] / (long)E.threads == E.phase_serial;
            E.writer[b] = me;
            E.stamp[b] = E.tile;
        } else {
            stale |= E.stamp[b] != E.tile;
        }
    }
    if (race)
        finding(&E.races, "shared element written twice in one phase");
    if (stale)
        finding(&E.stale, "shared element read that this tile did not write");
    E.sites[std::make_pair(E.thread / 32u, site)].push_back(access{E.thread % 32u, a, (unsigned)n});
}

struct emu_mem {
    template <typename T> static uint4 ld16(const T *p)
    {
        uint4 v = make_uint4(0, 0, 0, 0);
        if (!inside(E.in_base, E.in_bytes, p, 16)) {
            finding(&E.oob, "16-byte load outside the input");
            return v;
        }
        if ((reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(E.in_base)) % 16)
            finding(&E.misaligned, "misaligned 16-byte load");
        memcpy(&v, p, 16);
        return v;
    }
    template <typename T> static T ld1(const T *p)
    {
        if (!inside(E.in_base, E.in_bytes, p, sizeof(T))) {
            finding(&E.oob, "element load outside the input");
            return T(0);
        }
        return *p;
    }
    template <typename T> static void stored(T *p, size_t n)
    {
        size_t e = (reinterpret_cast<unsigned char *>(p) - E.out_base) / sizeof(T);
        for (size_t i = 0; i < n; i++)
            E.writes[e + i]++;
    }
    template <typename T> static void st16(T *p, uint4 v)
    {
        if (!inside(E.out_base, E.out_bytes, p, 16)) {
            finding(&E.oob, "16-byte store outside the output");
            return;
        }
        if ((reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(E.out_base)) % 16)
            finding(&E.misaligned, "misaligned 16-byte store");
        memcpy(p, &v, 16);
        stored(p, 16 / sizeof(T));
    }
    template <typename T> static void st1(T *p, T v)
    {
        if (!inside(E.out_base, E.out_bytes, p, sizeof(T))) {
            finding(&E.oob, "element store outside the output");
            return;
        }
        *p = v;
        stored(p, 1);
    }
    template <typename T> static void st16_if(T *p, uint4 v, bool c)
    {
        if (c)
            st16(p, v);
    }
    template <typename T> static void st1_if(T *p, T v, bool c)
    {
        if (c)
            st1(p, v);
    }
    template <typename T> static void sts(T *sm, unsigned i, T v, int site)
    {
        shared_access(sm + i, sizeof(T), true, site);
        if (inside(E.sm_base, E.sm_bytes, sm + i, sizeof(T)))
            sm[i] = v;
    }
    template <typename T> static T lds(const T *sm, unsigned i, int site)
    {
        shared_access(sm + i, sizeof(T), false, site);
        return inside(E.sm_base, E.sm_bytes, sm + i, sizeof(T)) ? sm[i] : T(0);
    }
    static void sts16(uint4 *sm, unsigned i, uint4 v, int site)
    {
        shared_access(sm + i, 16, true, site);
        if (inside(E.sm_base, E.sm_bytes, sm + i, 16))
            sm[i] = v;
    }
    static uint4 lds16(const uint4 *sm, unsigned i, int site)
    {
        shared_access(sm + i, 16, false, site);
        return inside(E.sm_base, E.sm_bytes, sm + i, 16) ? sm[i] : make_uint4(0, 0, 0, 0);
    }
};

/* ---- bank conflicts ---------------------------------------------------------
 * Wavefronts of one instruction of one warp: its lanes are served in groups
 * (all 32 for accesses of 4 bytes or less, half-warps for 8, quarter-warps
 * for 16); a group costs as many wavefronts as the largest number of
 * different 4-byte words that it touches in one of the 32 banks.  The
 * fewest possible is one per group that has an active lane.
 * ------------------------------------------------------------------------ */
static void wavefronts(const std::vector<access> &acc, unsigned *got, unsigned *least)
{
    unsigned width = acc.empty() ? 4 : acc[0].width;
    unsigned per = width == 16 ? 8 : width == 8 ? 16 : 32;
    *got = *least = 0;
    for (unsigned g0 = 0; g0 < 32; g0 += per) {
        std::map<unsigned, std::vector<size_t> > banks;
        bool any = false;
        for (const access &a : acc) {
            if (a.lane < g0 || a.lane >= g0 + per)
                continue;
            any = true;
            for (size_t w = a.addr / 4; w <= (a.addr + a.width - 1) / 4; w++) {
                std::vector<size_t> &words = banks[(unsigned)(w % 32)];
                bool seen = false;
                for (size_t x : words)
                    seen |= x == w;
                if (!seen)
                    words.push_back(w);
            }
        }
        unsigned worst = 0;
        for (auto &b : banks)
            worst = b.second.size() > worst ? (unsigned)b.second.size() : worst;
        *got += worst;
        *least += any ? 1 : 0;
    }
}

/* ---- one emulated launch ------------------------------------------------------ */

struct emu_report {
    long oob, misaligned, races, stale, wrong_phase;
    uint64_t unwritten, multiple, wrong; /* output elements */
    uint64_t tiles_seen_twice, tiles_missed;
    double worst_ratio;       /* bank conflicts of the chunk jobs, full tiles */
    double worst_ratio_extra; /* the window's extra chunk (one row per lane)  */
    double worst_ratio_out;   /* ragged: the out phase's chunk jobs (worst_ratio: its in phase's) */
    std::string first;
};

/* Input element i: distinct bits for distinct i (within the type's width),
   never the 0xff.. poison of the output. */
template <typename T> static T input_value(uint64_t i)
{
    uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
    if (sizeof(T) == 2)
        return (T)(1u + (uint32_t)(i % 65534u)); /* 1 .. 65534 */
    if (sizeof(T) == 4)
        return (T)(uint32_t)((i & 0x7fffffu) | ((h >> 40) & 0x3f800000u)); /* never all ones */
    return (T)((i & 0xffffffffffull) | (h & 0x7fff000000000000ull));
}

/* The matrices of one emulated run: input element i is input_value(i), the
   output poisoned with 0xff bytes; both 16-byte aligned with a spare chunk,
   as cudaMalloc's would be. */
template <typename T> struct emu_matrices {
    uint64_t n;
    std::vector<uint4> inq, outq;
    T *in, *out;
    explicit emu_matrices(uint64_t count)
        : n(count), inq((count * sizeof(T) + 15) / 16 + 1), outq((count * sizeof(T) + 15) / 16 + 1),
          in(reinterpret_cast<T *>(inq.data())), out(reinterpret_cast<T *>(outq.data()))
    {
        for (uint64_t i = 0; i < n; i++)
            in[i] = input_value<T>(i);
        memset(out, 0xff, n * sizeof(T));
    }
};

/* A fresh emulator state over io's matrices and the shared tile sm. */
template <typename T>
static void emu_reset(const emu_matrices<T> &io, const std::vector<uint4> &sm, unsigned threads)
{
    E = emu_state();
    E.in_base = reinterpret_cast<const unsigned char *>(io.in);
    E.in_bytes = io.n * sizeof(T);
    E.out_base = reinterpret_cast<unsigned char *>(io.out);
    E.out_bytes = io.n * sizeof(T);
    E.esize = sizeof(T);
    E.writes.assign(io.n, 0);
    E.sm_base = reinterpret_cast<const unsigned char *>(sm.data());
    E.sm_bytes = sm.size() * 16;
    E.stamp.assign(E.sm_bytes, -1);
    E.writer.assign(E.sm_bytes, -1);
    E.threads = threads;
}

/* After every tile: tiles seen twice or never, output elements unwritten,
   written twice or wrong, and the emulator's findings, into rep. */
template <typename T>
static void emu_tally(emu_report &rep, const std::vector<unsigned> &seen, const emu_matrices<T> &io,
                      uint64_t rows, uint64_t cols)
{
    for (size_t k = 0; k < seen.size(); k++) {
        rep.tiles_seen_twice += seen[k] > 1;
        rep.tiles_missed += seen[k] == 0;
    }
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t c = 0; c < cols; c++) {
            uint64_t o = c * rows + r;
            unsigned w = E.writes[o];
            rep.unwritten += w == 0;
            rep.multiple += w > 1;
            rep.wrong += w == 1 && io.out[o] != io.in[r * cols + c];
        }
    rep.oob = E.oob;
    rep.misaligned = E.misaligned;
    rep.races = E.races;
    rep.stale = E.stale;
    rep.wrong_phase = E.wrong_phase;
    rep.first = E.first;
}

/* HOIST: the hoisted tile code (window-hoist, vec16-band-hoist) instead of
   the plain one. */
template <typename T, bool VEC, bool HOIST = false>
static emu_report emulate(uint64_t rows, uint64_t cols, uint64_t band, bool banks = false,
                          const uint32_t *swz = NULL)
{
    typedef kbt_shape<T> S;
    emu_matrices<T> io(rows * cols);
    const T *in = io.in;
    T *out = io.out;
    std::vector<uint4> smq(S::SMEM_Q);

    emu_reset(io, smq, S::THREADS);

    kbt_geom g = kbt_geom_make<T>(rows, cols, band);
    if (swz)
        g.swz = *swz;
    emu_report rep = emu_report();
    std::vector<unsigned> seen(g.ntiles, 0);
    for (uint64_t b = 0; b < g.ntiles; b++) {
        uint64_t r0, c0;
        if (HOIST)
            kbt_tile_of_fast<S::TILE>(g, b, r0, c0);
        else
            kbt_tile_of<S::TILE>(g, b, r0, c0);
        uint64_t tr = r0 / S::TILE, tc = c0 / S::TILE;
        if (r0 % S::TILE || c0 % S::TILE || tr >= g.trows || tc >= g.tcols) {
            rep.tiles_missed++; /* a tile outside the matrix counts as a missed one */
            continue;
        }
        seen[tr * g.tcols + tc]++;
        bool full = r0 + S::TILE <= rows && c0 + S::TILE <= cols;
        bool vec = VEC && g.aligned && full;
        E.tile = (long)b;
        for (int phase = PH_IN; phase <= PH_OUT; phase++) {
            E.phase = phase;
            E.phase_serial++;
            E.sites.clear();
            for (unsigned t = 0; t < S::THREADS; t++) {
                E.thread = t;
                T *sm = reinterpret_cast<T *>(smq.data());
                if (vec && phase == PH_IN && HOIST)
                    kbt_vech_in<T, emu_mem>(t, in, smq.data(), g, r0, c0);
                else if (vec && phase == PH_IN)
                    kbt_vec_in<T, emu_mem>(t, in, smq.data(), g, r0, c0);
                else if (vec && HOIST)
                    kbt_vech_out<T, emu_mem>(t, out, smq.data(), g, r0, c0);
                else if (vec)
                    kbt_vec_out<T, emu_mem>(t, out, smq.data(), g, r0, c0);
                else if (phase == PH_IN && HOIST)
                    kbt_windowh_in<T, emu_mem>(t, in, sm, g, r0, c0);
                else if (phase == PH_IN)
                    kbt_window_in<T, emu_mem>(t, in, sm, g, r0, c0);
                else if (HOIST)
                    kbt_windowh_out<T, emu_mem>(t, out, sm, g, r0, c0);
                else
                    kbt_window_out<T, emu_mem>(t, out, sm, g, r0, c0);
            }
            if (banks && full) {
                for (auto &s : E.sites) {
                    unsigned got, least;
                    wavefronts(s.second, &got, &least);
                    double ratio = least ? (double)got / least : 1.0;
                    bool extra = !vec && s.first.second >= (int)(S::JOBS * S::W);
                    double &worst = extra ? rep.worst_ratio_extra : rep.worst_ratio;
                    worst = ratio > worst ? ratio : worst;
                }
            }
        }
    }
    emu_tally(rep, seen, io, rows, cols);
    return rep;
}

/* ---- the shapes ------------------------------------------------------------------ */

struct shape {
    uint64_t rows, cols;
};

/* The family's awkward shapes, plus one shape per phase class (rows % W,
   cols % W) with full tiles, edge tiles on both sides, and more than one
   tile in each direction. */
template <typename T> static std::vector<shape> shapes_of()
{
    typedef kbt_shape<T> S;
    std::vector<shape> v = {{1, 1}, {1, 4097}, {4097, 1}, {31, 33}, {33, 31}, {2, 3}, {7, 300}};
    for (unsigned rr = 0; rr < S::W; rr++)
        for (unsigned cr = 0; cr < S::W; cr++)
            v.push_back(shape{2 * S::TILE + 8 + rr, S::TILE + 24 + cr});
    v.push_back(shape{2 * S::TILE, 3 * S::TILE}); /* full tiles only */
    return v;
}

static std::string describe(const char *what, const shape &s, uint64_t band, const emu_report &r)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "%s %llux%llu band %llu: oob %ld misaligned %ld races %ld stale %ld phase %ld "
             "unwritten %llu multiple %llu wrong %llu tiles twice %llu missed %llu (%s)",
             what, (unsigned long long)s.rows, (unsigned long long)s.cols,
             (unsigned long long)band, r.oob, r.misaligned, r.races, r.stale, r.wrong_phase,
             (unsigned long long)r.unwritten, (unsigned long long)r.multiple,
             (unsigned long long)r.wrong, (unsigned long long)r.tiles_seen_twice,
             (unsigned long long)r.tiles_missed, r.first.c_str());
    return std::string(buf);
}

static bool clean(const emu_report &r)
{
    return r.oob == 0 && r.misaligned == 0 && r.races == 0 && r.stale == 0 &&
           r.wrong_phase == 0 && r.unwritten == 0 && r.multiple == 0 && r.wrong == 0 &&
           r.tiles_seen_twice == 0 && r.tiles_missed == 0;
}

/* Every shape, bands 0 (column-major) and 1 (row-major), and 2 (the last
   band lower than the others at odd tile-row counts). */
template <typename T, bool VEC, bool HOIST = false> static void all_shapes_exact(const char *what)
{
    for (const shape &s : shapes_of<T>())
        for (uint64_t band : {0ull, 1ull, 2ull}) {
            emu_report r = emulate<T, VEC, HOIST>(s.rows, s.cols, band);
            cr_assert(clean(r), "%s", describe(what, s, band, r).c_str());
        }
}

TestSuite(transpose_emu, .timeout = 300);

/* ---- tests ----------------------------------------------------------------------- */

/* The tile order is a permutation of the tiles for any band, including bands
   that do not divide the tile rows and bands taller than the matrix. */
Test(transpose_emu, tile_order_visits_every_tile_once)
{
    const uint64_t dims[] = {1, 2, 3, 7, 64};
    for (uint64_t tr : dims)
        for (uint64_t tc : dims)
            for (uint64_t band : {0ull, 1ull, 2ull, 3ull, 5ull, 64ull, 1000ull}) {
                kbt_geom g = kbt_geom_make<uint32_t>(tr * 64, tc * 64, band);
                std::vector<int> seen(g.ntiles, 0);
                for (uint64_t b = 0; b < g.ntiles; b++) {
                    uint64_t r0, c0;
                    kbt_tile_of<64>(g, b, r0, c0);
                    cr_assert(r0 % 64 == 0 && c0 % 64 == 0 && r0 < tr * 64 && c0 < tc * 64);
                    seen[(r0 / 64) * tc + c0 / 64]++;
                }
                for (uint64_t k = 0; k < g.ntiles; k++)
                    cr_assert_eq(seen[k], 1, "%llu x %llu tiles, band %llu: tile %llu seen %d times",
                                 (unsigned long long)tr, (unsigned long long)tc,
                                 (unsigned long long)band, (unsigned long long)k, seen[k]);
            }
}

/* band = 0 walks down the columns (consecutive tiles share c0), band = 1
   along the rows (consecutive tiles share r0). */
Test(transpose_emu, tile_order_band_0_is_column_major_and_1_row_major)
{
    kbt_geom g = kbt_geom_make<uint32_t>(5 * 64, 3 * 64, 0);
    uint64_t r0, c0;
    kbt_tile_of<64>(g, 4, r0, c0);
    cr_assert(r0 == 4 * 64 && c0 == 0, "band 0, tile 4: (%llu, %llu)", (unsigned long long)r0,
              (unsigned long long)c0);
    kbt_tile_of<64>(g, 5, r0, c0);
    cr_assert(r0 == 0 && c0 == 64);
    g = kbt_geom_make<uint32_t>(5 * 64, 3 * 64, 1);
    kbt_tile_of<64>(g, 2, r0, c0);
    cr_assert(r0 == 0 && c0 == 2 * 64);
    kbt_tile_of<64>(g, 3, r0, c0);
    cr_assert(r0 == 64 && c0 == 0);
}

Test(transpose_emu, window_f32_exact_and_in_bounds) { all_shapes_exact<uint32_t, false>("window f32"); }
Test(transpose_emu, window_f64_exact_and_in_bounds) { all_shapes_exact<uint64_t, false>("window f64"); }
Test(transpose_emu, window_u16_exact_and_in_bounds) { all_shapes_exact<uint16_t, false>("window u16"); }
Test(transpose_emu, vec16_band_f32_exact_and_in_bounds) { all_shapes_exact<uint32_t, true>("vec16-band f32"); }
Test(transpose_emu, vec16_band_f64_exact_and_in_bounds) { all_shapes_exact<uint64_t, true>("vec16-band f64"); }
Test(transpose_emu, vec16_band_u16_exact_and_in_bounds) { all_shapes_exact<uint16_t, true>("vec16-band u16"); }

Test(transpose_emu, window_hoist_f32_exact_and_in_bounds)
{
    all_shapes_exact<uint32_t, false, true>("window-hoist f32");
}
Test(transpose_emu, window_hoist_f64_exact_and_in_bounds)
{
    all_shapes_exact<uint64_t, false, true>("window-hoist f64");
}
Test(transpose_emu, window_hoist_u16_exact_and_in_bounds)
{
    all_shapes_exact<uint16_t, false, true>("window-hoist u16");
}
Test(transpose_emu, vec16_band_hoist_f32_exact_and_in_bounds)
{
    all_shapes_exact<uint32_t, true, true>("vec16-band-hoist f32");
}
Test(transpose_emu, vec16_band_hoist_f64_exact_and_in_bounds)
{
    all_shapes_exact<uint64_t, true, true>("vec16-band-hoist f64");
}
Test(transpose_emu, vec16_band_hoist_u16_exact_and_in_bounds)
{
    all_shapes_exact<uint16_t, true, true>("vec16-band-hoist u16");
}

/* The 32-bit tile split is the 64-bit one, tile for tile, at every band. */
Test(transpose_emu, tile_order_fast_matches_plain)
{
    const uint64_t dims[] = {1, 2, 3, 7, 64, 129};
    for (uint64_t tr : dims)
        for (uint64_t tc : dims)
            for (uint64_t band : {0ull, 1ull, 2ull, 3ull, 5ull, 64ull, 1000ull}) {
                kbt_geom g = kbt_geom_make<uint32_t>(tr * 64 - 1, tc * 64 + 1, band);
                for (uint64_t b = 0; b < g.ntiles; b++) {
                    uint64_t r0, c0, r1, c1;
                    kbt_tile_of<64>(g, b, r0, c0);
                    kbt_tile_of_fast<64>(g, b, r1, c1);
                    cr_assert(r0 == r1 && c0 == c1, "tiles %llu x %llu band %llu tile %llu",
                              (unsigned long long)g.trows, (unsigned long long)g.tcols,
                              (unsigned long long)band, (unsigned long long)b);
                }
            }
}

/* The headline ragged shape itself, and the tutorial's: every tile of
   8191 x 8193 f32 (one phase class, thousands of tiles, the input's last
   window read element by element). */
Test(transpose_emu, window_f32_8191x8193_exact_and_in_bounds)
{
    emu_report r = emulate<uint32_t, false>(8191, 8193, 0);
    cr_assert(clean(r), "%s", describe("window f32", shape{8191, 8193}, 0, r).c_str());
}

Test(transpose_emu, window_hoist_f32_8191x8193_exact_and_in_bounds)
{
    emu_report r = emulate<uint32_t, false, true>(8191, 8193, 0);
    cr_assert(clean(r), "%s", describe("window-hoist f32", shape{8191, 8193}, 0, r).c_str());
}

Test(transpose_emu, vec16_band_f32_2048x512_exact_and_in_bounds)
{
    emu_report r = emulate<uint32_t, true>(2048, 512, 0);
    cr_assert(clean(r), "%s", describe("vec16-band f32", shape{2048, 512}, 0, r).c_str());
}

/* Bank conflicts of the window path's chunk jobs in full tiles, every phase
   class: at most the bound the README states (f32, f64: none, two ways when
   rows is odd and cols even; u16: two ways). */
template <typename T, bool HOIST = false> static void window_conflicts_bounded(const char *what)
{
    typedef kbt_shape<T> S;
    for (unsigned rr = 0; rr < S::W; rr++)
        for (unsigned cr = 0; cr < S::W; cr++) {
            shape s = {2 * S::TILE + 8 + rr, 2 * S::TILE + 24 + cr};
            emu_report r = emulate<T, false, HOIST>(s.rows, s.cols, 0, true);
            double bound = sizeof(T) == 2 ? 2.0 : (rr % 2 == 1 && cr % 2 == 0) ? 2.0 : 1.0;
            cr_assert(r.worst_ratio <= bound, "%s rows %% W = %u, cols %% W = %u: %.2f-way (bound %.0f)",
                      what, rr, cr, r.worst_ratio, bound);
            cr_log_info("%s rows %% W = %u, cols %% W = %u: chunk jobs %.2f-way, extra chunk %.2f-way",
                        what, rr, cr, r.worst_ratio, r.worst_ratio_extra);
        }
}

Test(transpose_emu, window_f32_bank_conflicts_bounded) { window_conflicts_bounded<uint32_t>("f32"); }
Test(transpose_emu, window_f64_bank_conflicts_bounded) { window_conflicts_bounded<uint64_t>("f64"); }
Test(transpose_emu, window_u16_bank_conflicts_bounded) { window_conflicts_bounded<uint16_t>("u16"); }
Test(transpose_emu, window_hoist_f32_bank_conflicts_bounded)
{
    window_conflicts_bounded<uint32_t, true>("hoist f32");
}
Test(transpose_emu, window_hoist_f64_bank_conflicts_bounded)
{
    window_conflicts_bounded<uint64_t, true>("hoist f64");
}
Test(transpose_emu, window_hoist_u16_bank_conflicts_bounded)
{
    window_conflicts_bounded<uint16_t, true>("hoist u16");
}

/* The vector path (vec16's layout) is conflict-free, each type. */
template <typename T, bool HOIST = false> static void vec_conflict_free()
{
    typedef kbt_shape<T> S;
    emu_report r = emulate<T, true, HOIST>(2 * S::TILE, 2 * S::TILE, 0, true);
    cr_assert(clean(r));
    cr_assert_eq(r.worst_ratio, 1.0, "%zu-byte elements: %.2f-way", sizeof(T), r.worst_ratio);
}

Test(transpose_emu, vec_path_f32_conflict_free) { vec_conflict_free<uint32_t>(); }
Test(transpose_emu, vec_path_f64_conflict_free) { vec_conflict_free<uint64_t>(); }
Test(transpose_emu, vec_path_u16_conflict_free) { vec_conflict_free<uint16_t>(); }
Test(transpose_emu, vec_hoist_f32_conflict_free) { vec_conflict_free<uint32_t, true>(); }
Test(transpose_emu, vec_hoist_f64_conflict_free) { vec_conflict_free<uint64_t, true>(); }
Test(transpose_emu, vec_hoist_u16_conflict_free) { vec_conflict_free<uint16_t, true>(); }

/* ---- the emulator's own checks can fail ----------------------------------------- */

/* With H = 0 at an aligned f32 shape, the window layout does conflict: the
   counter sees it (so a bound above is a measured one). */
Test(transpose_emu, conflict_counter_sees_a_bad_swizzle)
{
    uint32_t zero = 0;
    emu_report r = emulate<uint32_t, false>(256, 256, 0, true, &zero);
    cr_assert(clean(r), "the output is still right");
    cr_assert_gt(r.worst_ratio, 1.0, "H = 0 at 256 x 256 f32 measured %.2f-way", r.worst_ratio);
}

/* A store of a whole chunk into another tile's segment is caught as a
   double write: the model counts per element. */
Test(transpose_emu, double_write_is_caught)
{
    std::vector<uint4> outq(4);
    std::vector<uint4> inq(1);
    E = emu_state();
    E.in_base = reinterpret_cast<const unsigned char *>(inq.data());
    E.in_bytes = 16;
    E.out_base = reinterpret_cast<unsigned char *>(outq.data());
    E.out_bytes = 64;
    E.writes.assign(16, 0);
    uint32_t *out = reinterpret_cast<uint32_t *>(outq.data());
    emu_mem::st1<uint32_t>(out + 5, 1u);
    emu_mem::st16<uint32_t>(out + 4, make_uint4(1, 2, 3, 4));
    cr_assert_eq(E.writes[5], 2u);
    emu_mem::st16<uint32_t>(out + 6, make_uint4(1, 2, 3, 4));
    cr_assert_eq(E.misaligned, 1, "a 16-byte store at element 6 is misaligned");
    emu_mem::st16<uint32_t>(out + 16, make_uint4(1, 2, 3, 4));
    cr_assert_eq(E.oob, 1, "a store past the output is outside");
}

/* A shared read of a slot written for an earlier tile is stale. */
Test(transpose_emu, stale_shared_read_is_caught)
{
    std::vector<uint4> smq(4);
    E = emu_state();
    E.sm_base = reinterpret_cast<const unsigned char *>(smq.data());
    E.sm_bytes = 64;
    E.stamp.assign(64, -1);
    E.writer.assign(64, -1);
    E.threads = 32;
    uint32_t *sm = reinterpret_cast<uint32_t *>(smq.data());
    E.tile = 0;
    E.phase = PH_IN;
    E.phase_serial = 1;
    emu_mem::sts<uint32_t>(sm, 3, 7u, 0);
    E.thread = 1;
    emu_mem::sts<uint32_t>(sm, 3, 7u, 0);
    cr_assert_eq(E.races, 1, "two threads wrote one slot in one phase");
    E.tile = 1;
    E.phase = PH_OUT;
    E.phase_serial = 2;
    (void)emu_mem::lds<uint32_t>(sm, 3, 0);
    cr_assert_eq(E.stale, 1, "tile 1 read tile 0's slot");
}

/* Shapes drawn at random (a fixed seed): rows and cols from 1 to 700, a
   random band, each type: window, window-hoist and vec16-band-hoist, beyond
   the hand-picked shapes above. */
template <typename T> static void random_shapes_exact(const char *what)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < 40; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t rows = 1 + (x >> 33) % 700, cols = 1 + (x >> 13) % 700, band = (x >> 55) % 4;
        emu_report r = emulate<T, false, false>(rows, cols, band);
        cr_assert(clean(r), "%s (window)", describe(what, shape{rows, cols}, band, r).c_str());
        r = emulate<T, false, true>(rows, cols, band);
        cr_assert(clean(r), "%s (window-hoist)", describe(what, shape{rows, cols}, band, r).c_str());
        r = emulate<T, true, true>(rows, cols, band);
        cr_assert(clean(r), "%s (vec16-band-hoist)", describe(what, shape{rows, cols}, band, r).c_str());
    }
}

Test(transpose_emu, f32_random_shapes_exact) { random_shapes_exact<uint32_t>("f32"); }
Test(transpose_emu, f64_random_shapes_exact) { random_shapes_exact<uint64_t>("f64"); }
Test(transpose_emu, u16_random_shapes_exact) { random_shapes_exact<uint16_t>("u16"); }

/* ---- the ragged path ---------------------------------------------------------
 * The same checks for the ragged variant's tile code (kbt_ragged_in/out):
 * its own tile, threads and layout, tiles in band order as the kernel takes
 * them (kbt_tile_of_fast on kbt_ragged_geom).  worst_ratio: the main jobs'
 * shared accesses in full tiles; worst_ratio_extra: the extra chunk's.
 * ------------------------------------------------------------------------ */
template <typename T>
static emu_report emulate_ragged(uint64_t rows, uint64_t cols, uint64_t band, bool banks = false)
{
    typedef kbt_rshape<T> S;
    emu_matrices<T> io(rows * cols);
    const T *in = io.in;
    T *out = io.out;
    std::vector<uint4> smq(S::SMEM_BYTES / 16);

    emu_reset(io, smq, S::THREADS);

    kbt_geom g = kbt_ragged_geom<T>(rows, cols, band);
    emu_report rep = emu_report();
    std::vector<unsigned> seen(g.ntiles, 0);
    for (uint64_t b = 0; b < g.ntiles; b++) {
        uint64_t r0, c0;
        kbt_ragged_tile<T>(g, b, r0, c0);
        uint64_t tr = r0 / S::TR, tc = c0 / S::TC;
        if (r0 % S::TR || c0 % S::TC || tr >= g.trows || tc >= g.tcols) {
            rep.tiles_missed++;
            continue;
        }
        seen[tr * g.tcols + tc]++;
        bool full = r0 + S::TR <= rows && c0 + S::TC <= cols;
        const bool reads_inside = kbt_ragged_full<T>(g, r0, c0); /* the kernel's choice */
        E.tile = (long)b;
        for (int phase = PH_IN; phase <= PH_OUT; phase++) {
            E.phase = phase;
            E.phase_serial++;
            E.sites.clear();
            for (unsigned t = 0; t < S::THREADS; t++) {
                E.thread = t;
                T *sm = reinterpret_cast<T *>(smq.data());
                if (phase == PH_IN)
                    kbt_ragged_in<T, emu_mem>(reads_inside, t, in, sm, g, r0, c0);
                else
                    kbt_ragged_out<T, emu_mem>(reads_inside, t, out, sm, g, r0, c0);
            }
            if (banks && full) {
                for (auto &s : E.sites) {
                    unsigned got, least;
                    wavefronts(s.second, &got, &least);
                    double ratio = least ? (double)got / least : 1.0;
                    bool extra = s.first.second >= (int)((phase == PH_IN ? S::JOBSI : S::JOBSO) * S::W);
                    double &worst = extra ? rep.worst_ratio_extra
                                    : phase == PH_IN ? rep.worst_ratio : rep.worst_ratio_out;
                    worst = ratio > worst ? ratio : worst;
                }
            }
        }
    }
    emu_tally(rep, seen, io, rows, cols);
    return rep;
}

/* The family's awkward shapes and one shape per phase class with full and
   edge tiles on both sides (the ragged tile), bands 0, 1 and 2; then 40
   random shapes (1 .. 700, fixed seed, random band). */
template <typename T> static void ragged_exact(const char *what)
{
    typedef kbt_rshape<T> S;
    std::vector<shape> v = {{1, 1}, {1, 4097}, {4097, 1}, {31, 33}, {33, 31}, {2, 3}, {7, 300},
                            {127, 129}, {2048, 512}};
    for (unsigned rr = 0; rr < S::W; rr++)
        for (unsigned cr = 0; cr < S::W; cr++)
            v.push_back(shape{2 * S::TR + 8 + rr, S::TC + 24 + cr});
    v.push_back(shape{2 * S::TR, 3 * S::TC});
    for (const shape &s : v)
        for (uint64_t band : {0ull, 1ull, 2ull}) {
            emu_report r = emulate_ragged<T>(s.rows, s.cols, band);
            cr_assert(clean(r), "%s", describe(what, s, band, r).c_str());
        }
    uint64_t x = 0x2545f4914f6cdd1dull;
    for (int k = 0; k < 40; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t rows = 1 + (x >> 33) % 700, cols = 1 + (x >> 13) % 700, band = (x >> 55) % 4;
        emu_report r = emulate_ragged<T>(rows, cols, band);
        cr_assert(clean(r), "%s", describe(what, shape{rows, cols}, band, r).c_str());
    }
}

Test(transpose_emu, ragged_f32_exact_and_in_bounds) { ragged_exact<uint32_t>("ragged f32"); }
Test(transpose_emu, ragged_f64_exact_and_in_bounds) { ragged_exact<uint64_t>("ragged f64"); }
Test(transpose_emu, ragged_u16_exact_and_in_bounds) { ragged_exact<uint16_t>("ragged u16"); }

Test(transpose_emu, ragged_f32_8191x8193_exact_and_in_bounds)
{
    emu_report r = emulate_ragged<uint32_t>(8191, 8193, 0);
    cr_assert(clean(r), "%s", describe("ragged f32", shape{8191, 8193}, 0, r).c_str());
}

/* The shared accesses of the chunk jobs in full tiles, every phase class,
   against bounds: f32 (128 x 64 tile, two input rows per warp in the in
   phase) at most two-way in the in phase and conflict-free in the out phase;
   f64 and u16 logged, not bounded. */
template <typename T> static void ragged_conflicts(double bound_in, double bound_out)
{
    typedef kbt_rshape<T> S;
    for (unsigned rr = 0; rr < S::W; rr++)
        for (unsigned cr = 0; cr < S::W; cr++) {
            shape s = {2 * S::TR + 8 + rr, 2 * S::TC + 24 + cr};
            emu_report r = emulate_ragged<T>(s.rows, s.cols, 0, true);
            cr_assert(clean(r));
            cr_log_info("ragged %zu-byte rows %% W = %u, cols %% W = %u: in %.2f-way, out %.2f-way, "
                        "extra %.2f-way",
                        sizeof(T), rr, cr, r.worst_ratio, r.worst_ratio_out, r.worst_ratio_extra);
            if (bound_in > 0)
                cr_assert(r.worst_ratio <= bound_in && r.worst_ratio_out <= bound_out,
                          "ragged %zu-byte rows %% W = %u, cols %% W = %u: in %.2f-way, out %.2f-way",
                          sizeof(T), rr, cr, r.worst_ratio, r.worst_ratio_out);
        }
}

Test(transpose_emu, ragged_f32_conflicts_bounded) { ragged_conflicts<uint32_t>(2.0, 1.0); }
Test(transpose_emu, ragged_f64_u16_conflicts_logged)
{
    ragged_conflicts<uint64_t>(0, 0);
    ragged_conflicts<uint16_t>(0, 0);
}
