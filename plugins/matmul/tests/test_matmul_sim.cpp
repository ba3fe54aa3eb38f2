/*
 * test_matmul_sim.cpp -- the index arithmetic, copy pattern and pipeline
 * order of matmul_kernels.cu's 64 x 64 warp-tile kernels, run on the CPU (no
 * GPU here or in CI): the source of the kernels is cut out of the .cu file at
 * build time (extract_kernels.sh) and run on sim_shim.h's threads, one per CUDA
 * thread, with cp.async copies landing either when they are waited for or at
 * once (sim_shim.h).  What the GPU adds -- the real cp.async, timing,
 * registers -- is for gpu.sh.
 *
 * Inputs are small integers (in [-3, 3], k <= 131: every sum is an integer
 * far below 2^24), so each element of C must equal the double reference
 * exactly; C starts as NaN, so an element no thread writes fails too.
 * Shapes: 1 x 1 x 1, one row, primes (the 4-byte paths), 4-aligned n with
 * ragged tiles (the 16-byte paths), k one step past a tile, more block
 * rows than one group of the block order, and blocks wholly inside C over
 * whole k tiles (16-byte: 264 x 260 x 48; 4-byte: 257 x 513 x 17).  Every
 * copy goes through sim_shim.h's zero-fill form, which fails a copy that
 * reads outside A and B.
 */
#include <criterion/criterion.h>

#include <cmath>
#include <thread>

#include "sim_shim.h"

/* The kernels (generated from matmul_kernels.cu). */
#include "matmul_kernels_sim.inc"

namespace {

/* The 64 x 64 warp-tile shapes of the pipelined variant: the BIG rows of
   matmul_tiles.def, as BW_<ID> (BW_T256x128x8 ...). */
#define KBM_ARGS(...) __VA_ARGS__
#define KBM_SIM_SHAPE_PIPE(id, shape)
#define KBM_SIM_SHAPE_BIG(id, shape) using BW_##id = bw_shape<KBM_ARGS shape>;
#define KBM_TILE(id, name, kind, wt, shape) KBM_SIM_SHAPE_##kind(id, shape)
#include "matmul_tiles.def"
#undef KBM_TILE

struct shape {
    int m, n, k;
};
const shape awkward[] = {{1, 1, 1},     {1, 300, 3},   {127, 129, 131}, {132, 260, 36},
                         {260, 132, 9}, {257, 513, 17}, {264, 260, 48}};

struct problem {
    int m, n, k;
    std::vector<float> A, B, C;
    problem(int m_, int n_, int k_, unsigned seed)
        : m(m_), n(n_), k(k_), A((size_t)m_ * k_), B((size_t)k_ * n_), C((size_t)m_ * n_, NAN)
    {
        std::mt19937 rng(seed);
        for (float &x : A)
            x = (float)((int)(rng() % 7) - 3);
        for (float &x : B)
            x = (float)((int)(rng() % 7) - 3);
        sim.g_lo[0] = (const char *)A.data();
        sim.g_hi[0] = (const char *)(A.data() + A.size());
        sim.g_lo[1] = (const char *)B.data();
        sim.g_hi[1] = (const char *)(B.data() + B.size());
        sim.first_error.clear();
    }
    /* Elements of C that differ from the exact product (NaN included). */
    long wrong() const
    {
        long bad = 0;
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double r = 0;
                for (int p = 0; p < k; ++p)
                    r += (double)A[(size_t)i * k + p] * (double)B[(size_t)p * n + j];
                if (!(C[(size_t)i * n + j] == (float)r))
                    ++bad;
            }
        return bad;
    }
};

/* Runs `body` on nt threads for one block, then checks that every copy has
   landed (all groups waited for) on each thread. */
template <class F>
void run_block(int nt, unsigned bx, unsigned by, unsigned seed, float4 *smem, F body)
{
    sim_barrier bar(nt);
    std::vector<std::thread> threads;
    for (int t = 0; t < nt; ++t)
        threads.emplace_back([&, t] {
            threadIdx = {(unsigned)t, 0, 0};
            blockIdx = {bx, by, 0};
            sim_smem = smem;
            sim_bar = &bar;
            std::mt19937 rng(seed * 7919u + (unsigned)t * 31u + bx);
            sim_rng = &rng;
            sim_groups.clear();
            sim_open.clear();
            body();
            bool pending = !sim_open.empty();
            for (const auto &g : sim_groups)
                pending |= !g.empty();
            if (pending)
                sim.fail("a thread returned with cp.async copies never waited for");
        });
    for (std::thread &th : threads)
        th.join();
}

/* One block's threads of mm_bigwarp at a stage count (a template argument). */
template <class S, int STAGES>
void launch(problem &p, int m, int n, int k)
{
    if (n % 4 == 0)
        mm_bigwarp<S, STAGES, true>(p.A.data(), p.B.data(), p.C.data(), m, n, k);
    else
        mm_bigwarp<S, STAGES, false>(p.A.data(), p.B.data(), p.C.data(), m, n, k);
}

/* The pipelined kernel at a 64 x 64 warp tile, as launch_bigwarp launches it. */
template <class S>
long bigwarp(int m, int n, int k, int stages, int landing)
{
    problem p(m, n, k, (unsigned)(m * 131 + n * 7 + k + stages));
    sim.landing = landing;
    const int blocks = ((m + S::BM - 1) / S::BM) * ((n + S::BN - 1) / S::BN);
    const size_t f4 = (size_t)stages * S::STAGE / 4;
    for (int b = 0; b < blocks; ++b) {
        std::vector<float4> smem(f4, float4{NAN, NAN, NAN, NAN});
        sim.smem_lo = (char *)smem.data();
        sim.smem_hi = (char *)(smem.data() + f4);
        run_block(S::NT, (unsigned)b, 0, (unsigned)(b + stages), smem.data(), [&] {
            if (stages == 2)
                launch<S, 2>(p, m, n, k);
            else if (stages == 3)
                launch<S, 3>(p, m, n, k);
            else
                launch<S, 4>(p, m, n, k);
        });
    }
    cr_expect(sim.first_error.empty(), "%d x %d x %d, stages %d: %s", m, n, k, stages,
              sim.first_error.c_str());
    return p.wrong();
}

/* The warp-tiled kernel, as launch_warptile launches it (grid x over column
   tiles, y over row tiles). */
template <int BM, int BN, int BK, int WM, int WN, int MINB>
long warptile(int m, int n, int k)
{
    problem p(m, n, k, (unsigned)(m + n + k));
    const int nt = wt_shape<BM, BN, BK, WM, WN>::NT;
    const bool vec = n % 4 == 0 && k % 4 == 0;
    for (int by = 0; by < (m + BM - 1) / BM; ++by)
        for (int bx = 0; bx < (n + BN - 1) / BN; ++bx)
            run_block(nt, (unsigned)bx, (unsigned)by, 1u, nullptr, [&] {
                if (vec)
                    mm_warptile<BM, BN, BK, WM, WN, true, MINB>(p.A.data(), p.B.data(),
                                                                p.C.data(), m, n, k);
                else
                    mm_warptile<BM, BN, BK, WM, WN, false, MINB>(p.A.data(), p.B.data(),
                                                                 p.C.data(), m, n, k);
            });
    return p.wrong();
}

template <class S>
void bigwarp_awkward(const char *tile, int landing)
{
    for (const shape &s : awkward)
        for (int stages = 2; stages <= 4; ++stages) {
            long bad = bigwarp<S>(s.m, s.n, s.k, stages, landing);
            cr_expect_eq(bad, 0, "pipelined %s at %d x %d x %d, stages %d: %ld wrong elements",
                         tile, s.m, s.n, s.k, stages, bad);
        }
}

} // namespace

TestSuite(matmul_sim, .timeout = 170);

/* bigwarp_awkward for every BIG row of matmul_tiles.def. */
static void every_bigwarp_awkward(int landing)
{
#define KBM_SIM_AWK_PIPE(id, name)
#define KBM_SIM_AWK_BIG(id, name) bigwarp_awkward<BW_##id>(name, landing);
#define KBM_TILE(id, name, kind, wt, shape) KBM_SIM_AWK_##kind(id, name)
#include "matmul_tiles.def"
#undef KBM_TILE
}

/* Copies land only when waited for: a missing wait or barrier reads the NaN
   the shared buffer starts with, or the previous tile. */
Test(matmul_sim, pipelined_64x64_warp_tiles_exact_copies_landing_at_the_wait)
{
    every_bigwarp_awkward(SIM_AT_WAIT);
}

/* Copies land at once: a copy into a stage that another thread still reads
   changes what it reads. */
Test(matmul_sim, pipelined_64x64_warp_tiles_exact_copies_landing_at_issue)
{
    every_bigwarp_awkward(SIM_AT_ISSUE);
}

/* More block rows than one group of the block order (2048 rows): the last,
   short group maps its blocks onto the remaining tiles. */
Test(matmul_sim, pipelined_block_order_covers_a_short_last_group)
{
    cr_expect_eq(bigwarp<BW_T256x128x8>(2300, 260, 5, 3, SIM_AT_WAIT), 0);
    cr_expect_eq(bigwarp<BW_T128x128x8W64>(2100, 300, 8, 2, SIM_AT_WAIT), 0);
}

Test(matmul_sim, warptile_64x64_warp_tiles_exact)
{
    for (const shape &s : awkward) {
#define KBM_SIM_WT_PIPE(name, wt)
#define KBM_SIM_WT_BIG(name, wt)                                                               \
    cr_expect_eq((warptile<KBM_ARGS wt>(s.m, s.n, s.k)), 0, name " at %d x %d x %d", s.m, s.n,  \
                 s.k);
#define KBM_TILE(id, name, kind, wt, shape) KBM_SIM_WT_##kind(name, wt)
#include "matmul_tiles.def"
#undef KBM_TILE
    }
}
