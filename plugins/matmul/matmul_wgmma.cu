/*
 * matmul_wgmma.cu -- the Hopper kernels of the matmul family: warpgroup MMA
 * (wgmma.mma_async) on operands that the Tensor Memory Accelerator (TMA)
 * copies into shared memory.  Built for sm_90a alone (plugins/matmul/
 * CMakeLists.txt); prepare() skips the variant on any other device.
 *
 * What it computes: C = A * B, row-major, any m, n, k >= 1, in the three
 * tensor-core precisions of matmul.h's "tensor-core contract":
 *   bf16    wgmma m64nNk16 .bf16 on a16 (A) and b16 (B), f32 accumulators;
 *   tf32    wgmma m64nNk8 .tf32 on a and b (already rounded to tf32);
 *   fp32x3  the same tf32 instruction three times per step on the two tf32
 *           parts of each operand, big = tf32(x) and small = tf32(x - big):
 *           C += Abig Bbig + Abig Bsmall + Asmall Bbig (3xTF32: the dropped
 *           Asmall Bsmall term is about 2^-22 |a||b|, f32-level accuracy),
 *           with promotion: the wgmmas of a chunk of k stages accumulate
 *           into a partial set started from zero, added to C's registers
 *           with round-to-nearest FADDs (the tensor cores' accumulation
 *           truncates; see wg_consume and README.md "Tensor cores").
 *
 * Operand layouts.  wgmma reads A and B from shared memory through 64-bit
 * matrix descriptors.  A (row-major, k contiguous) is "K-major", which every
 * type accepts.  B is row-major k x n, n contiguous: "N-major".  For 16-bit
 * types wgmma takes an N-major B directly (its transpose bit, imm-trans-b =
 * 1), so bf16 reads B where it is.  tf32 accepts K-major operands only, so a
 * pre-pass kernel writes B transposed (n x k) into the scratch buffer; for
 * fp32x3 pre-passes also split A and Bt into their big and small parts (four
 * arrays in scratch).  The pre-passes run inside run(), so their time is in
 * the measurement, as the contract asks.
 *
 * TMA needs every row of a global tensor to start on 16 bytes.  When k (for
 * A, and for the transposed copies) or n (for bf16's B) breaks that, the
 * operand goes through a scratch copy whose rows are padded to 16 bytes; the
 * padding is never read, because each tensor map declares the true extent
 * and TMA fills a box that sticks out of the tensor with zeros (adding a zero
 * product is exact).  No box starts wholly outside its tensor (a tile past an
 * edge copies the last real rows or columns instead, into places that only
 * feed elements of C past the edge; a box's inner coordinate stays a
 * multiple of 128 bytes).  Only elements inside C are stored.
 *
 * Shared-memory layout: every operand tile is a stack of 128-byte rows (64
 * bf16 or 32 f32 of the contiguous dimension) written by TMA with its
 * 128-byte swizzle (the 16-byte chunk index of each row XORed with the row
 * index mod 8), which is exactly the canonical "128B swizzle" layout the
 * descriptors name; tiles start on 1024 bytes, the swizzle's period.
 *   K-major tile (A, Bt): rows = M (or N) index, 128 bytes of k each.  The
 *     descriptor's stride byte offset (SBO) is 1024, the distance between
 *     groups of 8 rows; the leading byte offset is unused for a swizzled
 *     K-major operand (set to 16, i.e. 1); the k step inside the 128-byte
 *     row (32 bytes per wgmma) is added to the start address.
 *   N-major B tile (bf16): BN/64 TMA boxes of 64 k rows x 64 n (128 bytes),
 *     8 KiB each.  Its descriptor: LBO = 8192, the distance between 64-wide
 *     blocks of n (the swizzle atoms along N); SBO = 1024, between groups of
 *     8 k rows; the k step (16 rows) adds 2048 bytes to the start address.
 *
 * The kernel: a block tile of BM = 128 rows x BN (256 or 128) columns, three
 * warpgroups of 128 threads.  Warpgroup 0 is the producer: one thread issues
 * the TMA copies of each k step into a ring of STAGES shared-memory stages
 * (full and empty mbarriers per stage; the copies complete the full barrier's
 * transaction count).  Warpgroups 1 and 2 are the consumers: each owns 64
 * rows of the block tile, waits for a stage to be full, issues its wgmmas
 * (64 x BN x BK), commits them as one group and releases the previous stage
 * once wgmma.wait_group 1 says its group is done, so one group is always in
 * flight.  The producer gives registers away (setmaxnreg 40), the consumers
 * take them (232): 128 f32 accumulators per consumer thread at BN = 256.  The
 * grid is persistent (one block per SM, block tiles dealt round-robin), so
 * the producer fills the next tile's stages while the consumers store the
 * last one; block tiles are visited in groups of group_m rows of tiles so
 * that the blocks running at once share A and B in L2.  The epilogue writes
 * C straight from the accumulators, guarded at the m and n edges.
 *
 * Clusters (an option, off by default until timed on a GPU): two blocks of
 * a cluster take vertically adjacent block tiles, which share B; each copies
 * its own A and half of B, multicast into both blocks' shared memory, so a
 * block reads 32 instead of 48 KiB from L2 per stage.  Each block's full
 * barrier then counts both halves' bytes, and a stage is free again only
 * when the consumers of both blocks have released it (empty barriers count
 * 16 arrivals, each consumer warp arriving on both blocks' barrier).
 *
 * Configurations (wg_options): BN 256 or 128; persistent or one tile per
 * block; bf16's B N-major or transposed into scratch; clusters of 2 or not;
 * fp32x3's promotion chunk; the rasterisation group.  wg_defaults() picks
 * run()'s configuration per precision (BN 256, persistent, bf16 B N-major,
 * no clusters; fp32x3: BN 128 with promotion every 4 k stages); the self-test
 * (tools/wgmma_selftest.cu) checks and times every configuration, so that a
 * failing default can be replaced by a passing simpler one there and a
 * faster one adopted.
 *
 * Reading order: tuning constants, PTX wrappers, the wgmma instructions, the
 * GEMM kernel, the pre-pass kernels, the host side (scratch layout, tensor
 * maps, prepare, run).
 */
#include <cuda.h>          /* CUtensorMap and the driver's enums: types only, no libcuda */
#include <cudaTypedefs.h>  /* PFN_cuTensorMapEncodeTiled */
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kbench/kit_tma.cuh" /* mbarriers and TMA loads; kbk_mbar_wait traps on a hang */
#include "matmul.h"

namespace {

/* ---- tuning constants ------------------------------------------------------ */

/* Rows of a block tile: two consumer warpgroups of one m64 wgmma each. */
constexpr int WG_BM = 128;
/* Threads: one producer warpgroup and two consumer warpgroups. */
constexpr int WG_THREADS = 384;
/* Registers per thread after setmaxnreg: the producer needs a loop counter
   and a few coordinates; a consumer holds BN/2 accumulators (128 at BN =
   256) plus addresses.  128*40 + 256*232 = 64512 <= 65536 registers. */
constexpr int WG_PRODUCER_REGS = 40;
constexpr int WG_CONSUMER_REGS = 232;
/* Block-tile rows per group of the rasterisation (the default; wg_options
   can change it): 8 rows of 128 and the columns that 132 blocks cover keep
   the running blocks' operands in L2. */
constexpr int WG_GROUP_M = 8;
/* fp32x3 promotion (BN 128): k stages of 32 per chunk of partial
   accumulation (see wg_consume and README.md "Tensor cores").  Chosen on
   the H200 by the self-test's timing of 1, 2 and 4 (8192^3: 9.66, 9.53,
   9.20 ms; max error 0.16, 0.17, 0.24 of cublasSgemm's). */
constexpr int WG_PROMOTE_EVERY = 4;
/* Bytes of one swizzled row, the swizzle's period, and one k step of wgmma
   (16 bf16 or 8 tf32). */
constexpr int WG_ROW_BYTES = 128;
constexpr int WG_ATOM_BYTES = 1024;
constexpr int WG_KSTEP_BYTES = 32;
/* The most dynamic shared memory a block may have on sm_90 (227 KiB). */
constexpr size_t WG_SMEM_MAX = 232448;

/* The configurations.  EB: element bytes (2 bf16, 4 tf32); BN: block tile
   columns; ST: stages; NPROD: products per k step (1, or 3 for fp32x3);
   BMN: B is read N-major with the transpose bit (bf16 only); CL: blocks
   per cluster (1, or 2: B multicast to both). */
template <int EB, int BN_, int ST, int NPROD, bool BMN, int CL = 1>
struct wg_cfg {
    static constexpr int eb = EB;
    static constexpr int bn = BN_;
    static constexpr int stages = ST;
    static constexpr int nprod = NPROD;
    static constexpr bool b_mn = BMN;
    static constexpr int bk = WG_ROW_BYTES / EB;    /* k per stage: one swizzled row */
    static constexpr int kstep = WG_KSTEP_BYTES / EB; /* k per wgmma */
    static constexpr int ksteps = bk / kstep;       /* wgmmas per product per stage: 4 */
    static constexpr int parts = NPROD == 3 ? 2 : 1; /* big (and small) copies of each operand */
    static constexpr int a_bytes = WG_BM * WG_ROW_BYTES;
    static constexpr int b_bytes = BN_ * WG_ROW_BYTES;
    static constexpr int cluster = CL;
    static constexpr int b_rows = BN_ / CL; /* rows of Bt one block copies */
    static constexpr int stage_bytes = parts * (a_bytes + b_bytes);
    /* fp32x3 at BN 128: each k stage's wgmmas accumulate into a partial
       set started from zero, which the consumer adds to the f32 result with
       ordinary (round-to-nearest) FADDs ("promotion", see wg_consume).  At
       BN 256 a second set of 128 accumulators does not fit in the
       registers, so that configuration accumulates in the wgmmas alone. */
    static constexpr bool promote = NPROD == 3 && BN_ == 128;
    /* One atom of slack to align the dynamic shared memory to 1024 bytes. */
    static constexpr size_t smem = (size_t)ST * stage_bytes + WG_ATOM_BYTES;
    static_assert(EB == 2 || EB == 4, "bf16 or tf32");
    static_assert(BN_ == 128 || BN_ == 256, "wgmma n is 128 or 256 here");
    static_assert(!BMN || (EB == 2 && NPROD == 1), "only 16-bit B can be N-major");
    static_assert(NPROD == 1 || (NPROD == 3 && EB == 4), "three products are fp32x3's");
    static_assert(CL == 1 || CL == 2, "clusters of 1 or 2 blocks");
    static_assert(smem <= WG_SMEM_MAX, "stages must fit in shared memory");
};

/* ---- PTX wrappers ---------------------------------------------------------- */

/* The mbarrier, TMA-load and address wrappers both Hopper kernels of the
   repository use are the kit's (kbench/kit_tma.cuh); these are this file's own. */

/* The same copy into the shared memory of every block of the cluster in
   `mask` (at the same offset), completing each one's barrier at bar's
   offset. */
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap *map,
                                                      uint32_t bar, int c0, int c1,
                                                      uint16_t mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                 : "memory");
}

/* B's copy: plain, or to both blocks of a cluster of 2. */
template <int CL>
__device__ __forceinline__ void wg_load_b(uint32_t dst, const CUtensorMap *map, uint32_t bar,
                                          int c0, int c1)
{
    if (CL == 1)
        kbk_tma_load_2d(dst, map, bar, c0, c1);
    else
        tma_load_2d_multicast(dst, map, bar, c0, c1, (uint16_t)((1u << CL) - 1u));
}

__device__ __forceinline__ uint32_t cluster_ctarank()
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

/* All threads of all blocks of the cluster (release / acquire). */
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}

/* One arrival on the barrier at local offset `bar` in block `rank` of the
   cluster (this block's own included).  The default semantics (release at
   CTA scope) suffice: what the arrival publishes is that this block's
   wgmmas have finished reading its own shared memory (wgmma.wait_group
   returned), and .release.cluster would put a GPU-wide memory barrier in
   front of every arrival. */
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank)
{
    asm volatile("{\n\t.reg .b32 ra;\n\t"
                 "mapa.shared::cluster.u32 ra, %0, %1;\n\t"
                 "mbarrier.arrive.shared::cluster.b64 _, [ra];\n\t}" ::"r"(bar),
                 "r"(rank)
                 : "memory");
}

/* A consumer warp gives a stage back to the producer of every block of the
   cluster. */
template <int CL>
__device__ __forceinline__ void wg_release(uint32_t bar)
{
    if (CL == 1) {
        kbk_mbar_arrive(bar);
    } else {
        for (uint32_t r = 0; r < (uint32_t)CL; ++r)
            mbar_arrive_cluster(bar, r);
    }
}

__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

template <int N>
__device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/* Keeps the compiler from moving accesses to an accumulator across the
   asynchronous wgmma's issue and wait (the registers are written behind its
   back). */
__device__ __forceinline__ void reg_fence(float &r)
{
    asm volatile("" : "+f"(r)::"memory");
}

template <int N>
__device__ __forceinline__ void setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

template <int N>
__device__ __forceinline__ void setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

/* A shared-memory matrix descriptor with 128-byte swizzle: bits 0-13 the
   start address >> 4, 16-29 the leading byte offset >> 4, 32-45 the stride
   byte offset >> 4, 49-51 the base offset (0: tiles start on 1024 bytes),
   62-63 the swizzle mode (1 = 128 bytes). */
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3ffffu) >> 4) | ((uint64_t)((lbo >> 4) & 0x3fffu) << 16) |
           ((uint64_t)((sbo >> 4) & 0x3fffu) << 32) | (1ull << 62);
}

/* Round to tf32 (10 explicit mantissa bits), nearest, ties away from zero. */
__device__ __forceinline__ float tf32_rna(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

/* ---- the wgmma instructions ---------------------------------------------------
 * D (64 x N, f32) += A (64 x K, from a descriptor) * B (K x N, from a
 * descriptor); scale_d = 0 ignores D's old value (the first step of a tile).
 * Thread t of the warpgroup holds D[16 w + t/4 + 8 h][8 j + 2 (t%4) + e] in
 * d[4 j + 2 h + e] (w = warp, h, e in {0, 1}).
 * ------------------------------------------------------------------------ */
#define WG_REGS64                                                                          \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "     \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define WG_REGS128                                                                         \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "     \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "     \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "     \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "     \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "     \
    "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "      \
    "%123, %124, %125, %126, %127}"
#define WG_D8(i)                                                                           \
    "+f"(d[(i) + 0]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]),                \
        "+f"(d[(i) + 4]), "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7])
#define WG_D64                                                                             \
    WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56)
#define WG_D128                                                                            \
    WG_D64, WG_D8(64), WG_D8(72), WG_D8(80), WG_D8(88), WG_D8(96), WG_D8(104), WG_D8(112),  \
        WG_D8(120)

template <int EB, int N, bool TB>
struct wg_mma;

/* bf16: imm-scale-a = imm-scale-b = 1, imm-trans-a = 0 (A K-major),
   imm-trans-b = TB (1: B N-major). */
template <bool TB>
struct wg_mma<2, 256, TB> {
    static __device__ __forceinline__ void run(float (&d)[128], uint64_t da, uint64_t db,
                                               int scale_d)
    {
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %130, 0;\n\t"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " WG_REGS128
                     ", %128, %129, p, 1, 1, 0, %131;\n\t}"
                     : WG_D128
                     : "l"(da), "l"(db), "r"(scale_d), "n"(TB ? 1 : 0));
    }
};

template <bool TB>
struct wg_mma<2, 128, TB> {
    static __device__ __forceinline__ void run(float (&d)[64], uint64_t da, uint64_t db,
                                               int scale_d)
    {
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %66, 0;\n\t"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " WG_REGS64
                     ", %64, %65, p, 1, 1, 0, %67;\n\t}"
                     : WG_D64
                     : "l"(da), "l"(db), "r"(scale_d), "n"(TB ? 1 : 0));
    }
};

/* tf32: both operands K-major (the instruction has no transpose for tf32). */
template <>
struct wg_mma<4, 256, false> {
    static __device__ __forceinline__ void run(float (&d)[128], uint64_t da, uint64_t db,
                                               int scale_d)
    {
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %130, 0;\n\t"
                     "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " WG_REGS128
                     ", %128, %129, p, 1, 1;\n\t}"
                     : WG_D128
                     : "l"(da), "l"(db), "r"(scale_d));
    }
};

template <>
struct wg_mma<4, 128, false> {
    static __device__ __forceinline__ void run(float (&d)[64], uint64_t da, uint64_t db,
                                               int scale_d)
    {
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %66, 0;\n\t"
                     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " WG_REGS64
                     ", %64, %65, p, 1, 1;\n\t}"
                     : WG_D64
                     : "l"(da), "l"(db), "r"(scale_d));
    }
};

#undef WG_D128
#undef WG_D64
#undef WG_D8
#undef WG_REGS128
#undef WG_REGS64

/* ---- the GEMM kernel ---------------------------------------------------------- */

/* Block unit u of the rasterisation (a unit is one block tile, or with
   clusters of 2 the pair of vertically adjacent tiles the cluster's blocks
   share B for): groups of WG_GROUP_M tile rows, each group walked column by
   column, so that consecutive units (the blocks that run at once) share rows
   of A and columns of B in L2. */
__device__ __forceinline__ void wg_unit_coords(int u, int units_m, int tiles_n, int group_m,
                                               int &um, int &tn)
{
    const int per_group = group_m * tiles_n;
    const int group = u / per_group;
    const int first = group * group_m;
    const int rows = min(units_m - first, group_m);
    const int local = u - group * per_group;
    um = first + local % rows;
    tn = local / rows;
}

/* Issues one k stage's wgmmas on this warpgroup's 64 rows (A at sa, B at
   sb) into acc, and commits them as one group; `zero` starts acc from zero
   (scale-d = 0 on the first wgmma). */
template <class C>
__device__ __forceinline__ void wg_issue_stage(float (&acc)[C::bn / 2], uint32_t sa, uint32_t sb,
                                               bool zero)
{
    /* Descriptor constants: K-major (A, Bt): LBO unused (16), SBO = 8 rows;
       N-major B: LBO = one 64-column box (64 k rows of 128 bytes), SBO = 8
       k rows. */
    constexpr uint32_t k_lbo = 16, k_sbo = 8 * WG_ROW_BYTES;
    constexpr uint32_t n_lbo = 64 * WG_ROW_BYTES, n_sbo = 8 * WG_ROW_BYTES;
    /* Bytes one k step advances the B descriptor: 32 inside the row
       (K-major), or kstep rows (N-major). */
    constexpr uint32_t b_step = C::b_mn ? C::kstep * WG_ROW_BYTES : WG_KSTEP_BYTES;
#pragma unroll
    for (int i = 0; i < C::bn / 2; ++i)
        reg_fence(acc[i]);
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < C::ksteps; ++j) {
        const uint64_t da = sw128_desc(sa + j * WG_KSTEP_BYTES, k_lbo, k_sbo);
        const uint64_t db = C::b_mn ? sw128_desc(sb + j * b_step, n_lbo, n_sbo)
                                    : sw128_desc(sb + j * b_step, k_lbo, k_sbo);
        wg_mma<C::eb, C::bn, C::b_mn>::run(acc, da, db, (zero && j == 0) ? 0 : 1);
        if (C::nprod == 3) {
            const uint64_t da_small =
                sw128_desc(sa + C::a_bytes + j * WG_KSTEP_BYTES, k_lbo, k_sbo);
            const uint64_t db_small = sw128_desc(sb + C::b_bytes + j * b_step, k_lbo, k_sbo);
            wg_mma<C::eb, C::bn, false>::run(acc, da, db_small, 1);
            wg_mma<C::eb, C::bn, false>::run(acc, da_small, db, 1);
        }
    }
    wgmma_commit();
}

/* Promotion: d += part with round-to-nearest FADDs, once part's group is
   done (wgmma.wait_group). */
template <class C>
__device__ __forceinline__ void wg_promote(float (&d)[C::bn / 2], float (&part)[C::bn / 2])
{
#pragma unroll
    for (int i = 0; i < C::bn / 2; ++i) {
        reg_fence(part[i]);
        d[i] += part[i];
    }
}

/* The consumers' work: for each block tile, every k step's wgmmas on this
   warpgroup's 64 rows (cw: 0 or 1), then the epilogue.  A stage is released
   to the producer of every block of the cluster (each of them writes its
   half of B into this block's stage). */
template <class C>
__device__ __forceinline__ void wg_consume(uint64_t *full, uint64_t *empty, uint32_t base,
                                           float *__restrict__ c, int m, int n, int nk,
                                           int nunits, int units_m, int tiles_n, uint32_t rank,
                                           int cw, int every, int group_m)
{
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    float d[C::bn / 2];
    /* The partial set of promotion (C::promote); unused (and given no
       registers) otherwise. */
    float p[C::bn / 2];
#pragma unroll
    for (int i = 0; i < C::bn / 2; ++i)
        d[i] = p[i] = 0.0f;

    uint32_t it = 0; /* k steps consumed so far, over all tiles */
    for (int u = blockIdx.x / C::cluster; u < nunits; u += gridDim.x / C::cluster) {
        int um, tn;
        wg_unit_coords(u, units_m, tiles_n, group_m, um, tn);
        const int tm = um * C::cluster + (int)rank;
        uint32_t prev = 0;
        if (C::promote) {
            /* Promotion: the wgmmas of `every` consecutive k stages (a
               chunk) accumulate into p, from zero at the chunk's first
               wgmma; at the chunk's end wgmma.wait_group 0, and p joins d
               with round-to-nearest FADDs.  Inside a chunk one group stays
               in flight, as without promotion; at its end the next stage's
               wgmmas wait for the FADDs (they overwrite p), while the other
               consumer warpgroup keeps the tensor cores busy.  A second
               partial set to overlap that too would not fit in the
               registers (ptxas spills). */
#pragma unroll
            for (int i = 0; i < C::bn / 2; ++i)
                d[i] = 0.0f;
            bool pending = false; /* stage `prev` is committed but not released */
            int in_chunk = 0;     /* stages of the current chunk issued before this one */
            for (int kt = 0; kt < nk; ++kt, ++it) {
                const uint32_t s = it % C::stages;
                kbk_mbar_wait(kbk_smem_addr(&full[s]), (it / C::stages) & 1u);
                const uint32_t st = base + s * C::stage_bytes;
                wg_issue_stage<C>(p, st + cw * (64 * WG_ROW_BYTES), st + C::parts * C::a_bytes,
                                  in_chunk == 0);
                if (in_chunk + 1 == every || kt + 1 == nk) {
                    wgmma_wait<0>();
                    if (lane == 0) {
                        if (pending)
                            wg_release<C::cluster>(kbk_smem_addr(&empty[prev]));
                        wg_release<C::cluster>(kbk_smem_addr(&empty[s]));
                    }
                    wg_promote<C>(d, p);
                    pending = false;
                    in_chunk = 0;
                } else {
                    if (pending) {
                        wgmma_wait<1>();
                        if (lane == 0)
                            wg_release<C::cluster>(kbk_smem_addr(&empty[prev]));
                    }
                    pending = true;
                    prev = s;
                    ++in_chunk;
                }
            }
        } else {
            for (int kt = 0; kt < nk; ++kt, ++it) {
                const uint32_t s = it % C::stages;
                kbk_mbar_wait(kbk_smem_addr(&full[s]), (it / C::stages) & 1u);
                const uint32_t st = base + s * C::stage_bytes;
                const uint32_t sa = st + cw * (64 * WG_ROW_BYTES); /* this warpgroup's 64 rows */
                const uint32_t sb = st + C::parts * C::a_bytes;
                /* The first wgmma of a tile starts d from zero (scale-d = 0). */
                wg_issue_stage<C>(d, sa, sb, kt == 0);
                if (kt > 0) {
                    /* The previous stage's group is done: give the stage back. */
                    wgmma_wait<1>();
                    if (lane == 0)
                        wg_release<C::cluster>(kbk_smem_addr(&empty[prev]));
                }
                prev = s;
            }
            wgmma_wait<0>();
            if (lane == 0)
                wg_release<C::cluster>(kbk_smem_addr(&empty[prev]));
        }
#pragma unroll
        for (int i = 0; i < C::bn / 2; ++i)
            reg_fence(d[i]);

        /* Epilogue: registers to global memory, guarded at the edges (a tile
           row past m, a cluster's second tile past the last tile row
           included); 8-byte stores where the row length keeps them aligned
           (n even). */
        const int row0 = tm * WG_BM + cw * 64 + warp * 16 + lane / 4;
        const int col0 = tn * C::bn + (lane % 4) * 2;
        const bool pairs = (n % 2) == 0;
#pragma unroll
        for (int j = 0; j < C::bn / 8; ++j) {
            const int col = col0 + j * 8;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row0 + 8 * h;
                if (row < m && col < n) {
                    float *p = c + (size_t)row * (size_t)n + col;
                    const float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
                    if (pairs) {
                        *reinterpret_cast<float2 *>(p) = make_float2(v0, v1);
                    } else {
                        p[0] = v0;
                        if (col + 1 < n)
                            p[1] = v1;
                    }
                }
            }
        }
    }
}

/* ta0/tb0: A and B (or Bt) tensor maps; ta1/tb1: their small parts
   (fp32x3), unused otherwise.  Each stage holds [A big][A small][B big]
   [B small] (the small tiles for fp32x3 only).  The units (block tiles, or
   pairs of them with clusters) are dealt round-robin over the grid's
   clusters; with clusters of 2, block `rank` of a cluster takes tile row
   2 um + rank and copies half of the B tile into both blocks' shared memory
   (TMA multicast), so each block reads A and half of B from L2. */
template <class C>
__global__ void __launch_bounds__(WG_THREADS, 1)
    wg_gemm(const __grid_constant__ CUtensorMap ta0, const __grid_constant__ CUtensorMap ta1,
            const __grid_constant__ CUtensorMap tb0, const __grid_constant__ CUtensorMap tb1,
            float *__restrict__ c, int m, int n, int k, int tiles_m, int tiles_n, int every,
            int group_m)
{
    __shared__ __align__(8) uint64_t full[C::stages];
    __shared__ __align__(8) uint64_t empty[C::stages];
    extern __shared__ uint8_t wg_smem_raw[];
    /* Stage tiles start on the 128-byte swizzle's period (1024 bytes). */
    const uint32_t base =
        (kbk_smem_addr(wg_smem_raw) + (WG_ATOM_BYTES - 1)) & ~uint32_t(WG_ATOM_BYTES - 1);

    const int units_m = (tiles_m + C::cluster - 1) / C::cluster;
    const int nunits = units_m * tiles_n;
    const int nk = (k + C::bk - 1) / C::bk;
    const int warpgroup = threadIdx.x / 128;
    const uint32_t rank = C::cluster > 1 ? cluster_ctarank() : 0u;

    if (threadIdx.x == 0) {
        for (int s = 0; s < C::stages; ++s) {
            /* full: the producer's arrive.expect_tx; empty: one arrival per
               consumer warp of every block of the cluster. */
            kbk_mbar_init(kbk_smem_addr(&full[s]), 1);
            kbk_mbar_init(kbk_smem_addr(&empty[s]), 8 * C::cluster);
        }
        kbk_mbar_fence_init();
        kbk_tma_prefetch_map(&ta0);
        kbk_tma_prefetch_map(&tb0);
        if (C::nprod == 3) {
            kbk_tma_prefetch_map(&ta1);
            kbk_tma_prefetch_map(&tb1);
        }
    }
    /* Every barrier of the cluster is initialised before any block copies
       into another's shared memory or arrives on its barriers. */
    if (C::cluster > 1)
        cluster_sync();
    else
        __syncthreads();

    /* The two roles are the two branches of one if/else, so that ptxas
       applies each branch's setmaxnreg to it. */
    if (warpgroup == 0) {
        /* ---- producer: one thread issues every copy ---- */
        setmaxnreg_dec<WG_PRODUCER_REGS>();
        uint32_t it = 0; /* k steps issued so far, over all tiles */
        for (int u = blockIdx.x / C::cluster; threadIdx.x == 0 && u < nunits;
             u += gridDim.x / C::cluster) {
            int um, tn;
            wg_unit_coords(u, units_m, tiles_n, group_m, um, tn);
            /* Boxes never start outside their tensor: a block whose tile
               row or columns lie past the edge (the second tile of a pair,
               B boxes past n) copies the last real rows or columns instead.
               They land where only rows or columns of C past the edge are
               computed, which the epilogue does not store. */
            const int a_row = min(um * C::cluster + (int)rank, tiles_m - 1) * WG_BM;
            for (int kt = 0; kt < nk; ++kt, ++it) {
                const uint32_t s = it % C::stages;
                const uint32_t parity = (it / C::stages) & 1u;
                const uint32_t fb = kbk_smem_addr(&full[s]);
                kbk_mbar_wait(kbk_smem_addr(&empty[s]), parity ^ 1u);
                /* This block's A and the whole B tile (its own half and the
                   other block's half, with clusters) land on fb. */
                kbk_mbar_arrive_expect_tx(fb, C::stage_bytes);
                const uint32_t st = base + s * C::stage_bytes;
                const uint32_t sa = st, sb = st + C::parts * C::a_bytes;
                const int k0 = kt * C::bk;
                kbk_tma_load_2d(sa, &ta0, fb, k0, a_row);
                if (C::nprod == 3)
                    kbk_tma_load_2d(sa + C::a_bytes, &ta1, fb, k0, a_row);
                if (C::b_mn) {
                    /* B's boxes: 64 k rows x 64 columns (128 bytes) each;
                       this block copies BN/64/cluster of them. */
                    constexpr int boxes = C::bn / 64 / C::cluster;
                    /* The column a box starts on is B's inner coordinate:
                       a box past n starts on the last box that holds real
                       columns (a multiple of 64), never on n - 1.  A box
                       whose inner start is not a multiple of 16 bytes
                       (n - 1 for most n) is what every shape that trapped
                       on the H200 had and no shape that passed had (bf16
                       B N-major at n = 128 with BN 256, n = 300, n = 264:
                       the full barrier never completed). */
                    const int last_box = ((n - 1) / 64) * 64;
                    for (int q = (int)rank * boxes; q < ((int)rank + 1) * boxes; ++q)
                        wg_load_b<C::cluster>(sb + q * (64 * WG_ROW_BYTES), &tb0, fb,
                                              min(tn * C::bn + q * 64, last_box), k0);
                } else {
                    /* Bt's box: BN/cluster rows of n, 128 bytes of k each. */
                    const uint32_t half = rank * C::b_rows * WG_ROW_BYTES;
                    const int n0 = min(tn * C::bn + (int)rank * C::b_rows, n - 1);
                    wg_load_b<C::cluster>(sb + half, &tb0, fb, k0, n0);
                    if (C::nprod == 3)
                        wg_load_b<C::cluster>(sb + C::b_bytes + half, &tb1, fb, k0, n0);
                }
            }
        }
    } else {
        /* ---- consumers: warpgroup 1 takes rows 0-63 of the block tile, 2
           rows 64-127 ---- */
        setmaxnreg_inc<WG_CONSUMER_REGS>();
        wg_consume<C>(full, empty, base, c, m, n, nk, nunits, units_m, tiles_n, rank,
                      warpgroup - 1, every, group_m);
    }
    /* No block of a cluster leaves while another may still arrive on its
       barriers (the last releases) or copy into its shared memory. */
    if (C::cluster > 1)
        cluster_sync();
}

/* ---- pre-pass kernels ------------------------------------------------------------
 * They rebuild in scratch what the GEMM reads from there: operands with rows
 * padded to 16 bytes, B transposed (tf32, fp32x3), and the big and small
 * tf32 parts of fp32x3's operands.  Padding columns are left unwritten: the
 * tensor maps end at the true row length.
 * ------------------------------------------------------------------------ */

/* dst0 (and dst1) = src (rows x cols, row stride cols) with row stride
   pitch; SPLIT: dst0 = tf32(x), dst1 = tf32(x - dst0). */
template <typename T, bool SPLIT>
__global__ void wg_repitch(const T *__restrict__ src, T *__restrict__ dst0, T *__restrict__ dst1,
                           int rows, int cols, size_t pitch)
{
    for (int r = blockIdx.y; r < rows; r += gridDim.y) {
        const T *s = src + (size_t)r * cols;
        for (int col = blockIdx.x * blockDim.x + threadIdx.x; col < cols;
             col += gridDim.x * blockDim.x) {
            const T x = s[col];
            if constexpr (SPLIT) {
                const float big = tf32_rna(x);
                dst0[(size_t)r * pitch + col] = big;
                dst1[(size_t)r * pitch + col] = tf32_rna(x - big);
            } else {
                dst0[(size_t)r * pitch + col] = x;
            }
        }
    }
}

/* dst0 (cols x rows, row stride pitch) = src^T (src rows x cols, row stride
   cols), through a 32 x 32 shared tile (one column of padding: no bank
   conflicts for f32); SPLIT as above.  Blocks of 32 x 8 threads. */
constexpr int WG_T_TILE = 32, WG_T_ROWS = 8;

template <typename T, bool SPLIT>
__global__ void wg_transpose(const T *__restrict__ src, T *__restrict__ dst0,
                             T *__restrict__ dst1, int rows, int cols, size_t pitch)
{
    __shared__ T tile[WG_T_TILE][WG_T_TILE + 1];
    const int r0 = blockIdx.y * WG_T_TILE, c0 = blockIdx.x * WG_T_TILE;
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int i = ty; i < WG_T_TILE; i += WG_T_ROWS) {
        const int r = r0 + i, col = c0 + tx;
        if (r < rows && col < cols)
            tile[i][tx] = src[(size_t)r * cols + col];
    }
    __syncthreads();
    for (int i = ty; i < WG_T_TILE; i += WG_T_ROWS) {
        const int orow = c0 + i, ocol = r0 + tx; /* dst row = src column */
        if (orow < cols && ocol < rows) {
            const T x = tile[tx][i];
            if constexpr (SPLIT) {
                const float big = tf32_rna(x);
                dst0[(size_t)orow * pitch + ocol] = big;
                dst1[(size_t)orow * pitch + ocol] = tf32_rna(x - big);
            } else {
                dst0[(size_t)orow * pitch + ocol] = x;
            }
        }
    }
}

/* ---- the host side ---------------------------------------------------------------- */

/* The configurations in use; wg_options picks one per precision.  Stages:
   as many as fit in 227 KiB (48 KiB per stage at BN = 256, 32 KiB at 128;
   twice that for fp32x3's four operand tiles). */
using cfg_bf16_mn_256 = wg_cfg<2, 256, 4, 1, true>;
using cfg_bf16_k_256 = wg_cfg<2, 256, 4, 1, false>;
using cfg_bf16_mn_128 = wg_cfg<2, 128, 6, 1, true>;
using cfg_bf16_k_128 = wg_cfg<2, 128, 6, 1, false>;
using cfg_bf16_mn_256_c2 = wg_cfg<2, 256, 4, 1, true, 2>;
using cfg_bf16_k_256_c2 = wg_cfg<2, 256, 4, 1, false, 2>;
using cfg_tf32_256 = wg_cfg<4, 256, 4, 1, false>;
using cfg_tf32_128 = wg_cfg<4, 128, 6, 1, false>;
using cfg_tf32_256_c2 = wg_cfg<4, 256, 4, 1, false, 2>;
using cfg_x3_256 = wg_cfg<4, 256, 2, 3, false>;
using cfg_x3_128 = wg_cfg<4, 128, 3, 3, false>;
using cfg_x3_256_c2 = wg_cfg<4, 256, 2, 3, false, 2>;

/* The choices a run makes beyond the precision. */
struct wg_options {
    int bf16_b_transposed; /* bf16: B transposed into scratch (K-major) instead of N-major */
    int wide;              /* BN = 256 (else 128) */
    int persistent;        /* one block (cluster) per SM (pair) looping over tiles, else one
                              tile (pair) per block (cluster) */
    int cluster;           /* clusters of 2 blocks sharing B through TMA multicast (wide only) */
    int promote_every;     /* fp32x3 at BN 128: k stages (of 32) per promotion chunk; 0 takes
                              WG_PROMOTE_EVERY */
    int group_m;           /* tile rows per group of the rasterisation; 0 takes WG_GROUP_M */
};

/* The configuration run() uses for each precision: BN = 256 (128 for
   fp32x3), persistent, B N-major for bf16, no clusters.  The self-test (tools/wgmma_selftest.cu)
   checks and times every configuration; should one of these fail on a GPU,
   or another be faster, this table is the one place to change (the scratch
   size follows it). */
wg_options wg_defaults(int precision)
{
    /* fp32x3: BN 128, the configuration with promotion (and the faster one
       on the H200 before promotion: 2.46x cublasSgemm at 4096^3 against
       1.97x for BN 256). */
    if (precision == KBM_FP32X3)
        return wg_options{0, 0, 1, 0, WG_PROMOTE_EVERY, WG_GROUP_M};
    return wg_options{0, 1, 1, 0, 0, WG_GROUP_M};
}

/* Where each operand lives: in the caller's buffers or in scratch, with its
   row pitch in elements. */
struct wg_layout {
    int a_copied, b_copied; /* A / B go through scratch (padded, split or transposed) */
    int b_transposed;       /* B is read as Bt (n x k, K-major) */
    uint64_t a_pitch, b_pitch;
    size_t a_off[2], b_off[2]; /* scratch offsets: big (or only) part, small part */
    size_t bytes;              /* scratch needed */
};

uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* Scratch pieces start on 256 bytes (TMA needs 16). */
size_t wg_take(size_t &at, uint64_t elems, int eb)
{
    const size_t off = at;
    at += (size_t)round_up(elems * (uint64_t)eb, 256);
    return off;
}

wg_layout wg_plan(uint64_t m, uint64_t n, uint64_t k, int precision, const wg_options &o)
{
    wg_layout l;
    std::memset(&l, 0, sizeof l);
    size_t at = 0;
    if (precision == KBM_BF16) {
        /* 16-byte rows: multiples of 8 bf16. */
        const uint64_t kp = round_up(k, 8), np = round_up(n, 8);
        l.a_copied = (k % 8) != 0;
        l.a_pitch = l.a_copied ? kp : k;
        if (l.a_copied)
            l.a_off[0] = wg_take(at, m * kp, 2);
        l.b_transposed = o.bf16_b_transposed;
        if (l.b_transposed) {
            l.b_copied = 1;
            l.b_pitch = kp;
            l.b_off[0] = wg_take(at, n * kp, 2);
        } else {
            l.b_copied = (n % 8) != 0;
            l.b_pitch = l.b_copied ? np : n;
            if (l.b_copied)
                l.b_off[0] = wg_take(at, k * np, 2);
        }
    } else if (precision == KBM_TF32) {
        const uint64_t kp = round_up(k, 4); /* 16-byte rows: multiples of 4 f32 */
        l.a_copied = (k % 4) != 0;
        l.a_pitch = l.a_copied ? kp : k;
        if (l.a_copied)
            l.a_off[0] = wg_take(at, m * kp, 4);
        l.b_copied = l.b_transposed = 1;
        l.b_pitch = kp;
        l.b_off[0] = wg_take(at, n * kp, 4);
    } else if (precision == KBM_FP32X3) {
        const uint64_t kp = round_up(k, 4);
        l.a_copied = l.b_copied = l.b_transposed = 1;
        l.a_pitch = l.b_pitch = kp;
        l.a_off[0] = wg_take(at, m * kp, 4);
        l.a_off[1] = wg_take(at, m * kp, 4);
        l.b_off[0] = wg_take(at, n * kp, 4);
        l.b_off[1] = wg_take(at, n * kp, 4);
    }
    l.bytes = at;
    return l;
}

/* What prepare() builds and run() uses. */
struct wg_data {
    CUtensorMap maps[4]; /* A big, A small, B big, B small (64-byte aligned: see wg_alloc) */
    wg_options opt;
    wg_layout lay;
    int precision;
    int m, n, k, tiles_m, tiles_n, grid, sms;
    int every;   /* fp32x3 promotion: k stages per chunk (>= 1) */
    int group_m; /* units (tile rows, or pairs) per group of the rasterisation (>= 1) */
    size_t smem;
    const void *a_src, *b_src;     /* the caller's A and B (f32 or bf16) */
    uint8_t *scratch;
    int (*launch)(const wg_data *w, float *c, cudaStream_t stream, kb_host *host);
};

/* The launch configuration of a cluster launch (the grid is a whole number
   of clusters). */
template <class C>
cudaLaunchConfig_t wg_cluster_config(unsigned grid, cudaStream_t stream,
                                     cudaLaunchAttribute *attr)
{
    cudaLaunchConfig_t cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(WG_THREADS);
    cfg.dynamicSmemBytes = C::smem;
    cfg.stream = stream;
    std::memset(attr, 0, sizeof *attr);
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = C::cluster;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

template <class C>
int wg_launch(const wg_data *w, float *c, cudaStream_t stream, kb_host *host)
{
    if (C::cluster == 1) {
        wg_gemm<C><<<w->grid, WG_THREADS, C::smem, stream>>>(w->maps[0], w->maps[1],
                                                              w->maps[2], w->maps[3], c, w->m,
                                                              w->n, w->k, w->tiles_m,
                                                              w->tiles_n, w->every,
                                                              w->group_m);
        KBK_CUDA_LAUNCH(host, "wgmma gemm");
    } else {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg = wg_cluster_config<C>((unsigned)w->grid, stream, &attr);
        KBK_CUDA(host, cudaLaunchKernelEx(&cfg, wg_gemm<C>, w->maps[0], w->maps[1], w->maps[2],
                                          w->maps[3], c, w->m, w->n, w->k, w->tiles_m,
                                          w->tiles_n, w->every, w->group_m));
        KBK_CUDA_LAUNCH(host, "wgmma gemm (clusters of 2)");
    }
    return KB_OK;
}

/* Raises the kernel's shared-memory limit and sizes the grid: all units
   (tiles, or pairs of tiles with clusters), or with `persistent` as many
   blocks as run at once (one per SM; with clusters, as many clusters as the
   GPU can hold at once, which its partition into GPCs may make fewer than
   half the SMs). */
template <class C>
int wg_setup_kernel(wg_data *w, kb_host *host)
{
    KBK_CUDA(host, cudaFuncSetAttribute(wg_gemm<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)C::smem));
    w->launch = wg_launch<C>;
    w->smem = C::smem;
    w->tiles_m = (int)kbm_ceil_div((uint64_t)w->m, WG_BM);
    w->tiles_n = (int)kbm_ceil_div((uint64_t)w->n, C::bn);
    const long long units = (long long)kbm_ceil_div((uint64_t)w->tiles_m, C::cluster) * w->tiles_n;
    long long slots = units;
    if (w->opt.persistent) {
        slots = w->sms / C::cluster;
        if (C::cluster > 1) {
            cudaLaunchAttribute attr;
            const cudaLaunchConfig_t cfg =
                wg_cluster_config<C>((unsigned)(C::cluster * (slots > 0 ? slots : 1)), nullptr,
                                     &attr);
            int fit = 0;
            KBK_CUDA(host, cudaOccupancyMaxActiveClusters(&fit, wg_gemm<C>, &cfg));
            if (fit > 0 && fit < slots)
                slots = fit;
        }
        if (slots < 1)
            slots = 1;
        if (slots > units)
            slots = units;
    }
    w->grid = (int)(slots * C::cluster);
    return KB_OK;
}

/* Picks the configuration for the precision and options. */
int wg_pick_kernel(wg_data *w, kb_host *host)
{
    const wg_options &o = w->opt;
    if (o.cluster && !o.wide)
        return host->fail(host, KB_EINVAL,
                          "matmul: wgmma's clusters share a 256-column B tile (wide only)");
    switch (w->precision) {
    case KBM_BF16:
        if (o.cluster)
            return o.bf16_b_transposed ? wg_setup_kernel<cfg_bf16_k_256_c2>(w, host)
                                       : wg_setup_kernel<cfg_bf16_mn_256_c2>(w, host);
        if (o.bf16_b_transposed)
            return o.wide ? wg_setup_kernel<cfg_bf16_k_256>(w, host)
                          : wg_setup_kernel<cfg_bf16_k_128>(w, host);
        return o.wide ? wg_setup_kernel<cfg_bf16_mn_256>(w, host)
                      : wg_setup_kernel<cfg_bf16_mn_128>(w, host);
    case KBM_TF32:
        if (o.cluster)
            return wg_setup_kernel<cfg_tf32_256_c2>(w, host);
        return o.wide ? wg_setup_kernel<cfg_tf32_256>(w, host)
                      : wg_setup_kernel<cfg_tf32_128>(w, host);
    case KBM_FP32X3:
        if (o.cluster)
            return wg_setup_kernel<cfg_x3_256_c2>(w, host);
        return o.wide ? wg_setup_kernel<cfg_x3_256>(w, host)
                      : wg_setup_kernel<cfg_x3_128>(w, host);
    default:
        return host->fail(host, KB_EUNSUPPORTED,
                          "matmul: wgmma runs tf32, bf16 and fp32x3 only (precision %d)",
                          w->precision);
    }
}

/* One 2-D tensor map: inner x outer elements, rows `pitch` elements apart,
   boxes of box_inner x box_outer, 128-byte swizzle, zero fill outside. */
int wg_encode(kb_host *host, PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap *map,
              CUtensorMapDataType type, int eb, const void *ptr, uint64_t inner, uint64_t outer,
              uint64_t pitch, uint32_t box_inner, uint32_t box_outer, const char *what)
{
    const cuuint64_t dims[2] = {inner, outer};
    const cuuint64_t strides[1] = {pitch * (uint64_t)eb};
    const cuuint32_t box[2] = {box_inner, box_outer};
    const cuuint32_t elem_strides[2] = {1, 1};
    const CUresult r =
        encode(map, type, 2, const_cast<void *>(ptr), dims, strides, box, elem_strides,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return host->fail(host, KB_ECUDA,
                          "matmul: cuTensorMapEncodeTiled refused the %s map (%llu x %llu "
                          "elements, rows %llu bytes apart, box %u x %u): driver error %d",
                          what, (unsigned long long)inner, (unsigned long long)outer,
                          (unsigned long long)(pitch * (uint64_t)eb), box_inner, box_outer,
                          (int)r);
    return KB_OK;
}

/* Builds the tensor maps of w's layout. */
int wg_build_maps(wg_data *w, kb_host *host)
{
    PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    int erc = kbk_tma_encoder(host, "matmul: wgmma", &encode);
    if (erc != KB_OK)
        return erc;

    const wg_layout &l = w->lay;
    const int bf16 = w->precision == KBM_BF16;
    const int eb = bf16 ? 2 : 4;
    const CUtensorMapDataType type =
        bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    const uint32_t bk = (uint32_t)(WG_ROW_BYTES / eb);
    /* Bt's box: the block tile's columns, half of them with clusters (each
       block of a pair copies its half to both). */
    const uint32_t bn = (w->opt.wide ? 256u : 128u) / (w->opt.cluster ? 2u : 1u);
    const uint64_t m = (uint64_t)w->m, n = (uint64_t)w->n, k = (uint64_t)w->k;
    const int parts = w->precision == KBM_FP32X3 ? 2 : 1;

    for (int p = 0; p < parts; ++p) {
        const void *a = l.a_copied ? (const void *)(w->scratch + l.a_off[p]) : w->a_src;
        int rc = wg_encode(host, encode, &w->maps[0 + p], type, eb, a, k, m, l.a_pitch, bk,
                           (uint32_t)WG_BM, p ? "A (small part)" : "A");
        if (rc != KB_OK)
            return rc;
        const void *b = l.b_copied ? (const void *)(w->scratch + l.b_off[p]) : w->b_src;
        if (l.b_transposed)
            rc = wg_encode(host, encode, &w->maps[2 + p], type, eb, b, k, n, l.b_pitch, bk, bn,
                           p ? "B transposed (small part)" : "B transposed");
        else /* N-major B: boxes of 64 columns (128 bytes) x bk rows */
            rc = wg_encode(host, encode, &w->maps[2 + p], type, eb, b, n, k, l.b_pitch, 64u, bk,
                           "B");
        if (rc != KB_OK)
            return rc;
    }
    if (parts == 1) { /* the small maps are passed but never read */
        w->maps[1] = w->maps[0];
        w->maps[3] = w->maps[2];
    }
    return KB_OK;
}

/* The pre-passes of w's layout, enqueued on the stream. */
int wg_prepasses(const wg_data *w, cudaStream_t stream, kb_host *host)
{
    const wg_layout &l = w->lay;
    const int m = w->m, n = w->n, k = w->k;
    const dim3 rp_block(256);
    auto rp_grid = [](int rows, int cols) {
        return dim3((unsigned)kbm_ceil_div((uint64_t)cols, 256) > 64u
                        ? 64u
                        : (unsigned)kbm_ceil_div((uint64_t)cols, 256),
                    (unsigned)(rows < 65535 ? rows : 65535));
    };
    const dim3 t_block(WG_T_TILE, WG_T_ROWS);
    /* B is k x n: transposed grids run over n (x) and k (y) tiles; both
       dimensions are at most 2^18, so at most 8192 tiles each. */
    const dim3 t_grid((unsigned)kbm_ceil_div((uint64_t)n, WG_T_TILE),
                      (unsigned)kbm_ceil_div((uint64_t)k, WG_T_TILE));
    uint8_t *sc = w->scratch;

    if (w->precision == KBM_BF16) {
        const uint16_t *a = static_cast<const uint16_t *>(w->a_src);
        const uint16_t *b = static_cast<const uint16_t *>(w->b_src);
        if (l.a_copied) {
            wg_repitch<uint16_t, false><<<rp_grid(m, k), rp_block, 0, stream>>>(
                a, reinterpret_cast<uint16_t *>(sc + l.a_off[0]), nullptr, m, k, l.a_pitch);
            KBK_CUDA_LAUNCH(host, "wgmma pre-pass: A padded (bf16)");
        }
        if (l.b_transposed) {
            wg_transpose<uint16_t, false><<<t_grid, t_block, 0, stream>>>(
                b, reinterpret_cast<uint16_t *>(sc + l.b_off[0]), nullptr, k, n, l.b_pitch);
            KBK_CUDA_LAUNCH(host, "wgmma pre-pass: B transposed (bf16)");
        } else if (l.b_copied) {
            wg_repitch<uint16_t, false><<<rp_grid(k, n), rp_block, 0, stream>>>(
                b, reinterpret_cast<uint16_t *>(sc + l.b_off[0]), nullptr, k, n, l.b_pitch);
            KBK_CUDA_LAUNCH(host, "wgmma pre-pass: B padded (bf16)");
        }
        return KB_OK;
    }
    const float *a = static_cast<const float *>(w->a_src);
    const float *b = static_cast<const float *>(w->b_src);
    if (w->precision == KBM_TF32) {
        if (l.a_copied) {
            wg_repitch<float, false><<<rp_grid(m, k), rp_block, 0, stream>>>(
                a, reinterpret_cast<float *>(sc + l.a_off[0]), nullptr, m, k, l.a_pitch);
            KBK_CUDA_LAUNCH(host, "wgmma pre-pass: A padded (tf32)");
        }
        wg_transpose<float, false><<<t_grid, t_block, 0, stream>>>(
            b, reinterpret_cast<float *>(sc + l.b_off[0]), nullptr, k, n, l.b_pitch);
        KBK_CUDA_LAUNCH(host, "wgmma pre-pass: B transposed (tf32)");
        return KB_OK;
    }
    /* fp32x3 */
    wg_repitch<float, true><<<rp_grid(m, k), rp_block, 0, stream>>>(
        a, reinterpret_cast<float *>(sc + l.a_off[0]), reinterpret_cast<float *>(sc + l.a_off[1]),
        m, k, l.a_pitch);
    KBK_CUDA_LAUNCH(host, "wgmma pre-pass: A split (fp32x3)");
    wg_transpose<float, true><<<t_grid, t_block, 0, stream>>>(
        b, reinterpret_cast<float *>(sc + l.b_off[0]), reinterpret_cast<float *>(sc + l.b_off[1]),
        k, n, l.b_pitch);
    KBK_CUDA_LAUNCH(host, "wgmma pre-pass: B transposed and split (fp32x3)");
    return KB_OK;
}

wg_data *wg_alloc()
{
    void *p = nullptr;
    if (posix_memalign(&p, 64, sizeof(wg_data)) != 0)
        return nullptr;
    std::memset(p, 0, sizeof(wg_data));
    return static_cast<wg_data *>(p);
}

/* prepare() with explicit options (the self-test calls it directly). */
int wg_prepare_with(kbm_state *s, kb_host *host, const wg_options &opt)
{
    if (s->wgmma) /* run() refuses until this prepare has succeeded */
        static_cast<wg_data *>(s->wgmma)->launch = nullptr;
    int dev = host->device, major = 0, minor = 0;
    if (dev < 0)
        KBK_CUDA(host, cudaGetDevice(&dev));
    KBK_CUDA(host, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    KBK_CUDA(host, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major != 9 || minor != 0)
        return host->fail(host, KB_EUNSUPPORTED,
                          "matmul: wgmma needs a compute capability 9.0 device (sm_90a); this "
                          "one is %d.%d",
                          major, minor);
    if (s->precision != KBM_BF16 && s->precision != KBM_TF32 && s->precision != KBM_FP32X3)
        return host->fail(host, KB_EUNSUPPORTED,
                          "matmul: wgmma runs the tf32, bf16 and fp32x3 precisions only");
    if (s->m < 1 || s->n < 1 || s->k < 1 || s->m > KBM_MAX_DIM || s->n > KBM_MAX_DIM ||
        s->k > KBM_MAX_DIM)
        return host->fail(host, KB_EINVAL, "matmul: wgmma takes 1 <= m, n, k <= %u",
                          (unsigned)KBM_MAX_DIM);

    if (!s->wgmma) {
        s->wgmma = wg_alloc();
        if (!s->wgmma)
            return host->fail(host, KB_ENOMEM, "matmul: wgmma could not allocate its %zu-byte "
                              "state", sizeof(wg_data));
    }
    wg_data *w = static_cast<wg_data *>(s->wgmma);
    w->opt = opt;
    w->every = opt.promote_every > 0 ? opt.promote_every : WG_PROMOTE_EVERY;
    {
        const int g = opt.group_m > 0 ? opt.group_m : WG_GROUP_M;
        w->group_m = opt.cluster ? (g / 2 > 0 ? g / 2 : 1) : g; /* units are pairs of rows */
    }
    w->precision = s->precision;
    w->m = (int)s->m;
    w->n = (int)s->n;
    w->k = (int)s->k;
    w->lay = wg_plan(s->m, s->n, s->k, s->precision, opt);
    w->scratch = static_cast<uint8_t *>(s->scratch.dev);
    if (w->lay.bytes > 0 && (!w->scratch || s->scratch.bytes < w->lay.bytes))
        return host->fail(host, KB_EFAIL,
                          "matmul: wgmma needs %zu bytes of scratch for this shape and "
                          "precision; setup made %zu",
                          w->lay.bytes, s->scratch.dev ? s->scratch.bytes : (size_t)0);
    w->a_src = s->precision == KBM_BF16 ? s->a16.dev : s->a.dev;
    w->b_src = s->precision == KBM_BF16 ? s->b16.dev : s->b.dev;
    if (!w->a_src || !w->b_src || !s->c.dev)
        return host->fail(host, KB_EFAIL,
                          "matmul: wgmma found no device copy of A, B or C (setup made none "
                          "for this precision)");

    int sms = host->sm_count;
    if (sms <= 0)
        KBK_CUDA(host, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    w->sms = sms;
    const int rc = wg_pick_kernel(w, host);
    if (rc != KB_OK)
        return rc;
    return wg_build_maps(w, host);
}

} // namespace

extern "C" size_t kbm_wgmma_scratch_bytes(uint64_t m, uint64_t n, uint64_t k, int precision)
{
    return wg_plan(m, n, k, precision, wg_defaults(precision)).bytes;
}

extern "C" int kbm_wgmma_prepare(kbm_state *s, kb_host *host)
{
    return wg_prepare_with(s, host, wg_defaults(s->precision));
}

extern "C" int kbm_run_wgmma(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    (void)impl;
    const wg_data *w = static_cast<const wg_data *>(s->wgmma);
    if (!w || !w->launch)
        return host->fail(host, KB_EFAIL, "matmul: wgmma runs without its tensor maps "
                          "(kbm_wgmma_prepare did not succeed)");
    if (w->precision != s->precision || (uint64_t)w->m != s->m || (uint64_t)w->n != s->n ||
        (uint64_t)w->k != s->k)
        return host->fail(host, KB_EFAIL, "matmul: wgmma's tensor maps were built for another "
                          "shape or precision");
    cudaStream_t stream = static_cast<cudaStream_t>(host->stream);
    int rc = wg_prepasses(w, stream, host);
    if (rc != KB_OK)
        return rc;
    return w->launch(w, static_cast<float *>(s->c.dev), stream, host);
}

extern "C" void kbm_wgmma_teardown(kbm_state *s)
{
    std::free(s->wgmma);
    s->wgmma = nullptr;
}
