/*
 * matmul_tc.cu -- the warp-level tensor-core kernels of the matmul family:
 * wmma (the CUDA C++ warp-matrix API) and mma (mma.sync through inline PTX,
 * fed by ldmatrix from a cp.async pipeline in swizzled shared memory).
 *
 * C = A * B, row-major: A is m x k, B is k x n, C is m x n, C in f32.  What
 * the kernels read, per precision (matmul.h, "the tensor-core contract"):
 *   bf16    A and B as bf16 (a16, b16), products summed in f32;
 *   tf32    A and B as f32 values that setup() already rounded to tf32: their
 *           bits are handed to the tensor cores as they are (the 13 low bits
 *           are zero, so no conversion is needed or done);
 *   fp32x3  A and B as plain f32: each fragment element x is split in
 *           registers into big = tf32(x) and small = tf32(x - big) (x - big is
 *           exact in f32), and each k step runs three products,
 *           small*big + big*small + big*big, into the same f32 accumulator
 *           (the small terms first, while the accumulator is still the
 *           previous step's).  small*small is dropped: at most 2^-22 |a||b|.
 * Both kernels take any m, n, k >= 1: tiles that stick out of A or B are
 * zero-filled (a zero product is exact) and only elements inside C are
 * stored.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>

#include "matmul.h"

namespace {

/* ===========================================================================
 * wmma: the simplest tensor-core kernel.
 *
 * A 64 x 64 block tile, 4 warps in 2 x 2, each warp a 32 x 32 tile of 2 x 2
 * accumulator fragments of 16 x 16.  Per k tile (W_BK: 32 for bf16, 16 for
 * tf32), the block copies the A and B tiles into shared memory with plain
 * guarded loads (zeros outside), and each warp loads its fragments with
 * load_matrix_sync and multiplies with mma_sync (16 x 16 x 16 for bf16,
 * 16 x 16 x 8 for tf32).  The accumulators go through shared memory
 * (store_matrix_sync) so that the global stores can be guarded element by
 * element.  Rows of the shared tiles are padded (8 bf16 or 4 floats) against
 * bank conflicts, keeping every fragment pointer 32-byte aligned and every
 * leading dimension a multiple of 16 bytes, as wmma requires.
 * ======================================================================== */
constexpr int W_BM = 64, W_BN = 64, W_THREADS = 128;

template <int P> struct wmma_traits;

template <> struct wmma_traits<KBM_BF16> {
    using elem = __nv_bfloat16; /* in global and shared memory */
    using frag_t = __nv_bfloat16;
    static constexpr int BK = 32, FK = 16, PAD = 8;
    static __device__ __forceinline__ elem zero() { return __ushort_as_bfloat16(0); }
};

template <> struct wmma_traits<KBM_TF32> {
    using elem = float;
    using frag_t = nvcuda::wmma::precision::tf32;
    static constexpr int BK = 16, FK = 8, PAD = 4;
    static __device__ __forceinline__ elem zero() { return 0.0f; }
};

template <int P>
__global__ void __launch_bounds__(W_THREADS)
    mm_wmma(const typename wmma_traits<P>::elem *__restrict__ A,
            const typename wmma_traits<P>::elem *__restrict__ B, float *__restrict__ C, int m,
            int n, int k)
{
    namespace wmma = nvcuda::wmma;
    using T = wmma_traits<P>;
    using E = typename T::elem;
    constexpr int BK = T::BK, FK = T::FK;
    constexpr int ALD = BK + T::PAD, BLD = W_BN + T::PAD, CLD = W_BN + 4;
    __shared__ __align__(128) E As[W_BM * ALD];
    __shared__ __align__(128) E Bs[BK * BLD];
    __shared__ __align__(128) float Cs[W_BM * CLD];

    const int tid = threadIdx.x, warp = tid / 32;
    const int wr = (warp / 2) * 32, wc = (warp % 2) * 32;
    const int bm0 = blockIdx.y * W_BM, bn0 = blockIdx.x * W_BN;

    wmma::fragment<wmma::accumulator, 16, 16, FK, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < k; k0 += BK) {
        for (int e = tid; e < W_BM * BK; e += W_THREADS) {
            int r = e / BK, c = e % BK, gr = bm0 + r, gc = k0 + c;
            As[r * ALD + c] = (gr < m && gc < k) ? A[(size_t)gr * k + gc] : T::zero();
        }
        for (int e = tid; e < BK * W_BN; e += W_THREADS) {
            int r = e / W_BN, c = e % W_BN, gr = k0 + r, gc = bn0 + c;
            Bs[r * BLD + c] = (gr < k && gc < n) ? B[(size_t)gr * n + gc] : T::zero();
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += FK) {
            wmma::fragment<wmma::matrix_a, 16, 16, FK, typename T::frag_t, wmma::row_major> a[2];
            wmma::fragment<wmma::matrix_b, 16, 16, FK, typename T::frag_t, wmma::row_major> b[2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                wmma::load_matrix_sync(a[i], As + (wr + i * 16) * ALD + kk, ALD);
                wmma::load_matrix_sync(b[i], Bs + kk * BLD + wc + i * 16, BLD);
                if constexpr (P == KBM_TF32) {
                    /* The API asks for the conversion; the inputs are tf32
                       already, so it changes no value. */
#pragma unroll
                    for (int t = 0; t < a[i].num_elements; ++t)
                        a[i].x[t] = wmma::__float_to_tf32(a[i].x[t]);
#pragma unroll
                    for (int t = 0; t < b[i].num_elements; ++t)
                        b[i].x[t] = wmma::__float_to_tf32(b[i].x[t]);
                }
            }
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j)
                    wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(Cs + (wr + i * 16) * CLD + wc + j * 16, acc[i][j], CLD,
                                    wmma::mem_row_major);
    __syncthreads();
    for (int e = tid; e < W_BM * W_BN; e += W_THREADS) {
        int r = e / W_BN, c = e % W_BN, gr = bm0 + r, gc = bn0 + c;
        if (gr < m && gc < n)
            C[(size_t)gr * n + gc] = Cs[r * CLD + c];
    }
}

/* ===========================================================================
 * mma: mma.sync through inline PTX, fed by ldmatrix from a cp.async pipeline.
 *
 * Block tile BM x BN, BK deep, 8 warps of WM x WN each; per k step (16 for
 * bf16, 8 for tf32) a warp holds WM/16 A fragments and WN/8 B fragments and
 * issues (WM/16) (WN/8) mma.sync (three times that for fp32x3).
 *
 * Shared memory: `stages` copies of the A tile (BM rows of BK elements) and
 * the B tile (BK rows of BN elements), both row-major as in global memory,
 * filled by 16-byte cp.async copies (source size 0 outside the matrix, which
 * zero-fills).  Tiles t + 1 .. t + stages - 1 are in flight while tile t is
 * multiplied.  Each row is a run of 16-byte chunks whose position is XORed
 * with a function of the row (the swizzle), so that the eight 16-byte rows
 * one ldmatrix phase reads, and the 32 words of a plain fragment load, fall
 * in distinct banks:
 *   ldmatrix tiles (A; B for bf16): chunk ^ ((row / L) % min(R, 8)), where R
 *     is the row's chunks and L = max(1, 8 / R) rows share one 128-byte line:
 *     eight consecutive rows at one logical chunk land on eight different
 *     16-byte bank groups;
 *   tf32 B (plain 32-bit loads: ldmatrix's transpose works on 16-bit
 *     elements only, so a 32-bit B fragment, two k values of one column, is
 *     read word by word): chunk ^ ((row % 4) * 2): a fragment load reads rows
 *     k0 .. k0 + 3 at two neighbouring chunks, which this spreads over the
 *     eight bank groups.
 *
 * Fragments (PTX ISA, "Matrix fragments for mma.m16n8k16 / m16n8k8"; g = lane
 * / 4, t = lane % 4):
 *   bf16 A (16 x 16): ldmatrix.x4 of the four 8 x 8 quarters, lanes 0-15
 *     naming rows 0-15 at k 0-7 and lanes 16-31 rows 0-15 at k 8-15;
 *   bf16 B (16 x 8, two at a time): ldmatrix.x4.trans of the k x n tile,
 *     which hands each lane two k values of one column, as mma wants;
 *   tf32 A (16 x 8): ldmatrix.x4 too: an 8 x 8 matrix of 16-bit elements is
 *     8 rows of 4 floats, and lane l receives row l / 4, float l % 4: the
 *     (g, t) element of the A fragment;
 *   tf32 B (8 x 8): b0 = B[t][g], b1 = B[t + 4][g], plain shared loads.
 *
 * Edges and alignment: with rows of A and B that start on 16 bytes (k and n
 * multiples of 8 for bf16, of 4 for f32) a 16-byte chunk is wholly inside or
 * wholly outside its row, and cp.async copies it or zero-fills it.
 * Otherwise (VEC = false) each thread loads its chunk element by element,
 * guarded, and stores it to shared memory itself: slower, same layout, any
 * shape.  C is stored from the accumulators, two floats at a time where n is
 * even, guarded.
 *
 * Block order: the grid is one-dimensional and walks groups of MMA_GROUP_M
 * block rows column by column, so that the blocks resident at one time share
 * A's rows and B's columns in L2.
 * ======================================================================== */
constexpr int MMA_THREADS = 256;
constexpr int MMA_GROUP_M = 8;

template <int P> struct mma_cfg;

/* bf16: 128 x 256 x 64 (128-byte rows of A), warps of 64 x 64 (4 x 8
   fragments, 128 accumulator registers a thread: one block per SM), 48 KiB a
   stage; 64 deep so that a barrier serves four k steps. */
template <> struct mma_cfg<KBM_BF16> {
    static constexpr int BM = 128, BN = 256, BK = 64, WM = 64, WN = 64, ESIZE = 2, KSTEP = 16;
    static constexpr int MIN_BLOCKS = 1;
};

/* tf32 and fp32x3: 128 x 128 x 32 (32 floats: 128-byte rows of A), warps of
   64 x 32. */
template <> struct mma_cfg<KBM_TF32> {
    static constexpr int BM = 128, BN = 128, BK = 32, WM = 64, WN = 32, ESIZE = 4, KSTEP = 8;
    static constexpr int MIN_BLOCKS = 1;
};
template <> struct mma_cfg<KBM_FP32X3> : mma_cfg<KBM_TF32> {};

template <int P> struct mma_shape {
    using c = mma_cfg<P>;
    static constexpr int EPC = 16 / c::ESIZE;            /* elements per 16-byte chunk */
    static constexpr int RA = c::BK * c::ESIZE / 16;     /* chunks per A row */
    static constexpr int RB = c::BN * c::ESIZE / 16;     /* chunks per B row */
    static constexpr int A_CHUNKS = c::BM * RA, B_CHUNKS = c::BK * RB;
    static constexpr int A_BYTES = A_CHUNKS * 16, B_BYTES = B_CHUNKS * 16;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int MT = c::WM / 16, NT = c::WN / 8; /* fragments per warp */
    static constexpr int WARPS_N = c::BN / c::WN;
    static_assert((c::BM / c::WM) * (c::BN / c::WN) * 32 == MMA_THREADS, "8 warps cover the tile");
    static_assert(A_CHUNKS % MMA_THREADS == 0 && B_CHUNKS % MMA_THREADS == 0,
                  "every thread copies the same number of chunks");
    static_assert(c::BK % c::KSTEP == 0 && NT % 2 == 0, "whole k steps, B fragments in pairs");
    static_assert(RA == 2 || RA == 4 || RA % 8 == 0, "the ldmatrix swizzle's row widths");
    static_assert(RB % 8 == 0, "B rows of whole 128-byte lines");
};

/* The swizzled chunk of an ldmatrix tile whose rows hold R chunks. */
template <int R> __device__ __forceinline__ int swz(int row, int chunk)
{
    constexpr int L = R >= 8 ? 1 : 8 / R, W = R >= 8 ? 8 : R;
    return chunk ^ ((row / L) % W);
}

/* The swizzled chunk of the tf32 B tile (plain 32-bit fragment loads). */
__device__ __forceinline__ int swz_b32(int row, int chunk)
{
    return chunk ^ ((row & 3) << 1);
}

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most `pending` groups are in flight (pending = stages - 2,
   0 .. 2 for stages 2 .. 4: the instruction takes an immediate). */
__device__ __forceinline__ void cp_async_wait(int pending)
{
    if (pending <= 0)
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    else if (pending == 1)
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    else
        asm volatile("cp.async.wait_group 2;\n" ::: "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* tf32(x), to nearest with ties away from zero: the 3xTF32 "big" part. */
__device__ __forceinline__ uint32_t to_tf32(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

/* x = big + small + (at most 2^-22 |x|): big = tf32(x), small = tf32(x - big),
   where x - big is exact in f32. */
__device__ __forceinline__ void split_tf32(uint32_t x, uint32_t &big, uint32_t &small)
{
    big = to_tf32(__uint_as_float(x));
    small = to_tf32(__uint_as_float(x) - __uint_as_float(big));
}

/* One 16-byte chunk of a row: elements col .. col + EPC - 1 of row `row` of
   a matrix with `cols` columns (row < rows, or the chunk is zeros).  VEC:
   one cp.async (the chunk is wholly inside or wholly outside, since rows
   start on 16 bytes and col is a multiple of EPC); otherwise guarded element
   loads and one 16-byte shared store. */
template <bool VEC, int E>
__device__ __forceinline__ void copy_chunk(char *dst, const char *__restrict__ M, int row,
                                           int rows, int col, int cols)
{
    constexpr int EPC = 16 / E;
    if constexpr (VEC) {
        bool in = row < rows && col < cols;
        cp_async16(smem_addr(dst), in ? M + ((size_t)row * cols + col) * E : M, in ? 16 : 0);
    } else {
        uint4 v = make_uint4(0, 0, 0, 0);
        char *pv = reinterpret_cast<char *>(&v);
#pragma unroll
        for (int e = 0; e < EPC; ++e)
            if (row < rows && col + e < cols) {
                const char *src = M + ((size_t)row * cols + col + e) * E;
                if constexpr (E == 2)
                    *reinterpret_cast<uint16_t *>(pv + e * 2) =
                        *reinterpret_cast<const uint16_t *>(src);
                else
                    *reinterpret_cast<uint32_t *>(pv + e * 4) =
                        *reinterpret_cast<const uint32_t *>(src);
            }
        *reinterpret_cast<uint4 *>(dst) = v;
    }
}

/* Copies one k tile of A and B into a stage, every thread its chunks (the
   element-wise path one chunk at a time, which keeps its registers few). */
template <int P, bool VEC>
__device__ __forceinline__ void mma_load_tile(char *stage, const char *__restrict__ A,
                                              const char *__restrict__ B, int m, int n, int k,
                                              int bm0, int bn0, int k0, int tid)
{
    using c = mma_cfg<P>;
    using S = mma_shape<P>;
    constexpr int E = c::ESIZE, EPC = S::EPC;
    char *as = stage, *bs = stage + S::A_BYTES;
#pragma unroll(VEC ? S::A_CHUNKS / MMA_THREADS : 1)
    for (int it = 0; it < S::A_CHUNKS / MMA_THREADS; ++it) {
        int i = tid + it * MMA_THREADS, r = i / S::RA, ch = i % S::RA;
        copy_chunk<VEC, E>(as + (r * S::RA + swz<S::RA>(r, ch)) * 16, A, bm0 + r, m,
                           k0 + ch * EPC, k);
    }
#pragma unroll(VEC ? S::B_CHUNKS / MMA_THREADS : 1)
    for (int it = 0; it < S::B_CHUNKS / MMA_THREADS; ++it) {
        int i = tid + it * MMA_THREADS, r = i / S::RB, ch = i % S::RB;
        int pch = P == KBM_BF16 ? swz<S::RB>(r, ch) : swz_b32(r, ch);
        copy_chunk<VEC, E>(bs + (r * S::RB + pch) * 16, B, k0 + r, k, bn0 + ch * EPC, n);
    }
}

/* One stage's products: every k step of the tile, into acc. */
template <int P>
__device__ __forceinline__ void mma_compute_tile(const char *stage,
                                                 float (&acc)[mma_shape<P>::MT][mma_shape<P>::NT][4],
                                                 int wm0, int wn0, int lane)
{
    using c = mma_cfg<P>;
    using S = mma_shape<P>;
    const char *as = stage, *bs = stage + S::A_BYTES;
    const uint32_t as_addr = smem_addr(as), bs_addr = smem_addr(bs);
#pragma unroll
    for (int ks = 0; ks < c::BK / c::KSTEP; ++ks) {
        uint32_t a[S::MT][4], b[S::NT][2];
        /* A: rows wm0 + mt*16 + (lane % 16), chunk 2 ks + lane / 16 (8 bf16 or
           4 floats a chunk, two chunks a k step). */
#pragma unroll
        for (int mt = 0; mt < S::MT; ++mt) {
            int r = wm0 + mt * 16 + (lane & 15), ch = 2 * ks + (lane >> 4);
            ldmatrix_x4(a[mt], as_addr + (r * S::RA + swz<S::RA>(r, ch)) * 16);
        }
        if constexpr (P == KBM_BF16) {
            /* B: k rows 16 ks + (lane % 16), columns wn0 + np*16 + 8 (lane / 16):
               b0 and b1 of fragment 2 np, then of fragment 2 np + 1. */
#pragma unroll
            for (int np = 0; np < S::NT / 2; ++np) {
                int r = ks * 16 + (lane & 15), ch = (wn0 + np * 16) / 8 + (lane >> 4);
                uint32_t q[4];
                ldmatrix_x4_trans(q, bs_addr + (r * S::RB + swz<S::RB>(r, ch)) * 16);
                b[2 * np][0] = q[0];
                b[2 * np][1] = q[1];
                b[2 * np + 1][0] = q[2];
                b[2 * np + 1][1] = q[3];
            }
#pragma unroll
            for (int mt = 0; mt < S::MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < S::NT; ++nt)
                    mma_bf16(acc[mt][nt], a[mt], b[nt][0], b[nt][1]);
        } else {
            /* B: b0 = B[8 ks + t][col], b1 = B[8 ks + t + 4][col], col = wn0 +
               nt*8 + g, as 32-bit words of the swizzled rows. */
            const uint32_t *bw = reinterpret_cast<const uint32_t *>(bs);
            const int g = lane >> 2, t = lane & 3;
#pragma unroll
            for (int nt = 0; nt < S::NT; ++nt) {
                int col = wn0 + nt * 8 + g, r0 = ks * 8 + t, r1 = r0 + 4;
                b[nt][0] = bw[r0 * S::RB * 4 + swz_b32(r0, col >> 2) * 4 + (col & 3)];
                b[nt][1] = bw[r1 * S::RB * 4 + swz_b32(r1, col >> 2) * 4 + (col & 3)];
            }
            if constexpr (P == KBM_TF32) {
#pragma unroll
                for (int mt = 0; mt < S::MT; ++mt)
#pragma unroll
                    for (int nt = 0; nt < S::NT; ++nt)
                        mma_tf32(acc[mt][nt], a[mt], b[nt][0], b[nt][1]);
            } else {
                uint32_t ab[S::MT][4], as_[S::MT][4], bb[S::NT][2], bsm[S::NT][2];
#pragma unroll
                for (int mt = 0; mt < S::MT; ++mt)
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        split_tf32(a[mt][e], ab[mt][e], as_[mt][e]);
#pragma unroll
                for (int nt = 0; nt < S::NT; ++nt)
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        split_tf32(b[nt][e], bb[nt][e], bsm[nt][e]);
#pragma unroll
                for (int mt = 0; mt < S::MT; ++mt)
#pragma unroll
                    for (int nt = 0; nt < S::NT; ++nt) {
                        mma_tf32(acc[mt][nt], as_[mt], bb[nt][0], bb[nt][1]);
                        mma_tf32(acc[mt][nt], ab[mt], bsm[nt][0], bsm[nt][1]);
                        mma_tf32(acc[mt][nt], ab[mt], bb[nt][0], bb[nt][1]);
                    }
            }
        }
    }
}

template <int P, bool VEC>
__global__ void __launch_bounds__(MMA_THREADS, mma_cfg<P>::MIN_BLOCKS)
    mm_mma(const void *__restrict__ Av, const void *__restrict__ Bv, float *__restrict__ C,
           int m, int n, int k, int stages)
{
    using c = mma_cfg<P>;
    using S = mma_shape<P>;
    extern __shared__ __align__(128) char smem[];
    const char *A = static_cast<const char *>(Av), *B = static_cast<const char *>(Bv);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

    /* Grouped block order: MMA_GROUP_M block rows at a time, column by column. */
    const int tiles_m = (m + c::BM - 1) / c::BM, tiles_n = (n + c::BN - 1) / c::BN;
    const int pid = blockIdx.x, per_group = MMA_GROUP_M * tiles_n;
    const int first_m = (pid / per_group) * MMA_GROUP_M;
    const int group_m = min(tiles_m - first_m, MMA_GROUP_M);
    const int tm = first_m + (pid % per_group) % group_m, tn = (pid % per_group) / group_m;
    const int bm0 = tm * c::BM, bn0 = tn * c::BN;
    const int wm0 = (warp / S::WARPS_N) * c::WM, wn0 = (warp % S::WARPS_N) * c::WN;

    float acc[S::MT][S::NT][4];
#pragma unroll
    for (int mt = 0; mt < S::MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < S::NT; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc[mt][nt][e] = 0.0f;

    const int ktiles = (k + c::BK - 1) / c::BK;
    /* The prologue: tiles 0 .. stages - 2 in flight (a group each, empty
       past the last tile, so that the count of groups stays the same). */
    for (int s = 0; s < stages - 1; ++s) {
        if (s < ktiles)
            mma_load_tile<P, VEC>(smem + s * S::STAGE_BYTES, A, B, m, n, k, bm0, bn0,
                                  s * c::BK, tid);
        cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; ++kt) {
        /* Tile kt has landed (at most stages - 2 newer groups pending), and
           every warp is done with tile kt - 1, whose stage is refilled next. */
        cp_async_wait(stages - 2);
        __syncthreads();
        int next = kt + stages - 1;
        if (next < ktiles)
            mma_load_tile<P, VEC>(smem + (next % stages) * S::STAGE_BYTES, A, B, m, n, k, bm0,
                                  bn0, next * c::BK, tid);
        cp_async_commit();
        mma_compute_tile<P>(smem + (kt % stages) * S::STAGE_BYTES, acc, wm0, wn0, lane);
    }
    cp_async_wait(0);

    /* C: lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each
       16 x 8 fragment. */
    const int g = lane >> 2, t = lane & 3;
    const bool pairs = (n & 1) == 0; /* then every even column starts 8 bytes */
#pragma unroll
    for (int mt = 0; mt < S::MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < S::NT; ++nt)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                int row = bm0 + wm0 + mt * 16 + g + h * 8, col = bn0 + wn0 + nt * 8 + 2 * t;
                if (row >= m)
                    continue;
                float *p = C + (size_t)row * n + col;
                if (pairs && col + 1 < n) {
                    *reinterpret_cast<float2 *>(p) = make_float2(acc[mt][nt][2 * h],
                                                                 acc[mt][nt][2 * h + 1]);
                } else {
                    if (col < n)
                        p[0] = acc[mt][nt][2 * h];
                    if (col + 1 < n)
                        p[1] = acc[mt][nt][2 * h + 1];
                }
            }
}

template <int P> size_t mma_smem(int stages)
{
    return (size_t)stages * mma_shape<P>::STAGE_BYTES;
}

template <int P> int mma_prepare(int stages, kb_host *host)
{
    int bytes = (int)mma_smem<P>(stages);
    KBK_CUDA(host, cudaFuncSetAttribute(mm_mma<P, true>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    KBK_CUDA(host, cudaFuncSetAttribute(mm_mma<P, false>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return KB_OK;
}

template <int P> int mma_launch(kbm_state *s, const void *A, const void *B, kb_host *host)
{
    using c = mma_cfg<P>;
    const int m = (int)s->m, n = (int)s->n, k = (int)s->k;
    /* 16-byte chunks need every row of A and B to start on 16 bytes. */
    const bool vec = ((size_t)k * c::ESIZE) % 16 == 0 && ((size_t)n * c::ESIZE) % 16 == 0;
    const uint64_t blocks = kbm_ceil_div(s->m, c::BM) * kbm_ceil_div(s->n, c::BN);
    size_t bytes = mma_smem<P>(s->stages);
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    if (vec)
        mm_mma<P, true><<<(unsigned)blocks, MMA_THREADS, bytes, st>>>(
            A, B, static_cast<float *>(s->c.dev), m, n, k, s->stages);
    else
        mm_mma<P, false><<<(unsigned)blocks, MMA_THREADS, bytes, st>>>(
            A, B, static_cast<float *>(s->c.dev), m, n, k, s->stages);
    KBK_CUDA_LAUNCH(host, "mm_mma");
    return KB_OK;
}

template <int P> int wmma_launch(kbm_state *s, const void *A, const void *B, kb_host *host)
{
    using E = typename wmma_traits<P>::elem;
    dim3 grid((unsigned)kbm_ceil_div(s->n, W_BN), (unsigned)kbm_ceil_div(s->m, W_BM));
    mm_wmma<P><<<grid, W_THREADS, 0, static_cast<cudaStream_t>(host->stream)>>>(
        static_cast<const E *>(A), static_cast<const E *>(B), static_cast<float *>(s->c.dev),
        (int)s->m, (int)s->n, (int)s->k);
    KBK_CUDA_LAUNCH(host, "mm_wmma");
    return KB_OK;
}

/* The operands a tensor-core kernel reads: the bf16 copies for bf16, the f32
   ones otherwise.  Returns KB_OK, or fails with a sentence when setup did not
   make them. */
int operands(kbm_state *s, const void **A, const void **B, kb_host *host)
{
    const kbk_buf *a = s->precision == KBM_BF16 ? &s->a16 : &s->a;
    const kbk_buf *b = s->precision == KBM_BF16 ? &s->b16 : &s->b;
    if (!a->dev || !b->dev)
        return host->fail(host, KB_EFAIL, "matmul: the %s operands are not on the device "
                          "(setup did not make them)",
                          s->precision == KBM_BF16 ? "bf16" : "f32");
    *A = a->dev;
    *B = b->dev;
    return KB_OK;
}

int bad_stages(kbm_state *s, kb_host *host)
{
    return host->fail(host, KB_EINVAL, "matmul: mma takes stages = 2 .. 4, not %d", s->stages);
}

} // namespace

extern "C" int kbm_run_wmma(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    (void)impl;
    const void *A, *B;
    int rc = operands(s, &A, &B, host);
    if (rc)
        return rc;
    switch (s->precision) {
    case KBM_BF16: return wmma_launch<KBM_BF16>(s, A, B, host);
    case KBM_TF32: return wmma_launch<KBM_TF32>(s, A, B, host);
    default:
        return host->fail(host, KB_EUNSUPPORTED, "matmul: wmma runs bf16 and tf32 only");
    }
}

extern "C" int kbm_mma_prepare(kbm_state *s, kb_host *host)
{
    if (s->stages < 2 || s->stages > 4)
        return bad_stages(s, host);
    switch (s->precision) {
    case KBM_BF16: return mma_prepare<KBM_BF16>(s->stages, host);
    case KBM_TF32: return mma_prepare<KBM_TF32>(s->stages, host);
    case KBM_FP32X3: return mma_prepare<KBM_FP32X3>(s->stages, host);
    default:
        return host->fail(host, KB_EUNSUPPORTED, "matmul: mma runs bf16, tf32 and fp32x3 only");
    }
}

extern "C" int kbm_run_mma(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    (void)impl;
    if (s->stages < 2 || s->stages > 4)
        return bad_stages(s, host);
    const void *A, *B;
    int rc = operands(s, &A, &B, host);
    if (rc)
        return rc;
    switch (s->precision) {
    case KBM_BF16: return mma_launch<KBM_BF16>(s, A, B, host);
    case KBM_TF32: return mma_launch<KBM_TF32>(s, A, B, host);
    case KBM_FP32X3: return mma_launch<KBM_FP32X3>(s, A, B, host);
    default:
        return host->fail(host, KB_EUNSUPPORTED, "matmul: mma runs bf16, tf32 and fp32x3 only");
    }
}
