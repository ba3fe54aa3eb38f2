/*
 * matmul_kernels.cu -- the hand-written kernels of the matmul family, in the
 * order of the optimisation path: the tutorial's naive and tiled kernels, then
 * the SGEMM path (coalesced, 1-D and 2-D register blocking, 16-byte accesses,
 * warp tiling, a cp.async pipeline).
 *
 * C = A * B, row-major: A is m x k, B is k x n, C is m x n.  Every kernel
 * takes any m, n, k >= 1: tiles that stick out of a matrix are zero-filled
 * when loaded (adding a zero product is exact, so the result and its error
 * bound are those of the k real products) and only elements inside C are
 * stored.  16-byte global accesses are used only where every row of the
 * matrix starts on 16 bytes (k % 4 == 0 for A, n % 4 == 0 for B and C); a
 * 16-byte piece is then either wholly inside its row or wholly outside.
 * Otherwise the same kernel is instantiated with 4-byte accesses (vec =
 * false), still coalesced across the warp.
 *
 * Grids: x runs over column tiles, y over row tiles; with m, n <=
 * KBM_MAX_DIM (2^18) and at least 8 rows per block, y stays under 65536.
 */
#include <cuda_runtime.h>

#include <cstdint>

#include "matmul.h"

namespace {

/* ---- the tutorial: one thread per element -------------------------------- */

/* naive and coalesced: row = y, column = x, a dot product of a row of A and a
   column of B straight from global memory. */
__global__ void mm_naive(const float *__restrict__ A, const float *__restrict__ B,
                         float *__restrict__ C, int m, int n, int k)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n)
        return;
    const float *a = A + (size_t)row * k;
    const float *b = B + col;
    float acc = 0.0f;
    for (int p = 0; p < k; ++p)
        acc += a[p] * b[(size_t)p * n];
    C[(size_t)row * n + col] = acc;
}

/* The tutorial's matrix: {width, height, stride, elements}, and sub-matrix
   views into it.  An element outside the view's width and height reads as 0
   (the tutorial assumed there were none). */
struct mat_view {
    int width, height; /* columns and rows actually inside the matrix */
    size_t stride;     /* elements between rows */
    const float *elements;
};

__device__ __forceinline__ mat_view sub_view(mat_view v, int row0, int col0)
{
    mat_view s;
    s.width = v.width - col0;
    s.height = v.height - row0;
    s.stride = v.stride;
    s.elements = v.elements + (size_t)row0 * v.stride + col0;
    return s;
}

__device__ __forceinline__ float view_get(const mat_view &v, int r, int c)
{
    return (r < v.height && c < v.width) ? v.elements[(size_t)r * v.stride + c] : 0.0f;
}

/* tiled: a BS x BS block computes a BS x BS tile of C, looping over the
   BS-wide tiles of A's rows and B's columns staged in shared memory; a barrier
   before the products (the tile is loaded) and after (it may be replaced). */
template <int BS>
__global__ void mm_tiled(const float *__restrict__ A, const float *__restrict__ B,
                         float *__restrict__ C, int m, int n, int k)
{
    __shared__ float As[BS][BS];
    __shared__ float Bs[BS][BS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int brow = blockIdx.y * BS, bcol = blockIdx.x * BS;
    mat_view a = {k, m, (size_t)k, A}, b = {n, k, (size_t)n, B};
    float acc = 0.0f;
    for (int t = 0; t < k; t += BS) {
        mat_view as = sub_view(a, brow, t), bs = sub_view(b, t, bcol);
        As[ty][tx] = view_get(as, ty, tx);
        Bs[ty][tx] = view_get(bs, ty, tx);
        __syncthreads();
#pragma unroll
        for (int e = 0; e < BS; ++e)
            acc += As[ty][e] * Bs[e][tx];
        __syncthreads();
    }
    int row = brow + ty, col = bcol + tx;
    if (row < m && col < n)
        C[(size_t)row * n + col] = acc;
}

/* ---- 1-D register blocking -------------------------------------------------
 * BM x BN tile per block, BK deep; BM*BN/TM threads, each computing TM
 * consecutive rows of one column: per k step one B value from shared memory
 * and TM A values (broadcast within the warp) feed TM FMAs. */
template <int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__(BM * BN / TM)
    mm_reg1d(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
             int m, int n, int k)
{
    constexpr int NT = BM * BN / TM;
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int tcol = tid % BN, trow = tid / BN;
    const int bm0 = blockIdx.y * BM, bn0 = blockIdx.x * BN;
    float acc[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i)
        acc[i] = 0.0f;
    for (int t = 0; t < k; t += BK) {
        for (int i = tid; i < BM * BK; i += NT) {
            int r = i / BK, c = i % BK, gr = bm0 + r, gc = t + c;
            As[i] = (gr < m && gc < k) ? A[(size_t)gr * k + gc] : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += NT) {
            int r = i / BN, c = i % BN, gr = t + r, gc = bn0 + c;
            Bs[i] = (gr < k && gc < n) ? B[(size_t)gr * n + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < BK; ++p) {
            float b = Bs[p * BN + tcol];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                acc[i] += As[(trow * TM + i) * BK + p] * b;
        }
        __syncthreads();
    }
    const int col = bn0 + tcol;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int row = bm0 + trow * TM + i;
        if (row < m && col < n)
            C[(size_t)row * n + col] = acc[i];
    }
}

/* ---- 2-D register blocking -------------------------------------------------
 * BM x BN tile, BK deep, (BM/TM)*(BN/TN) threads each computing a TM x TN
 * block of C: per k step TM + TN shared loads feed TM*TN FMAs. */
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    mm_reg2d(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
             int m, int n, int k)
{
    constexpr int NT = (BM / TM) * (BN / TN);
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
    const int bm0 = blockIdx.y * BM, bn0 = blockIdx.x * BN;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;
    float ra[TM], rb[TN];
    for (int t = 0; t < k; t += BK) {
        for (int i = tid; i < BM * BK; i += NT) {
            int r = i / BK, c = i % BK, gr = bm0 + r, gc = t + c;
            As[i] = (gr < m && gc < k) ? A[(size_t)gr * k + gc] : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += NT) {
            int r = i / BN, c = i % BN, gr = t + r, gc = bn0 + c;
            Bs[i] = (gr < k && gc < n) ? B[(size_t)gr * n + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < BK; ++p) {
#pragma unroll
            for (int i = 0; i < TM; ++i)
                ra[i] = As[(trow * TM + i) * BK + p];
#pragma unroll
            for (int j = 0; j < TN; ++j)
                rb[j] = Bs[p * BN + tcol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int row = bm0 + trow * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            int col = bn0 + tcol * TN + j;
            if (row < m && col < n)
                C[(size_t)row * n + col] = acc[i][j];
        }
    }
}

/* ---- shared helpers of the 16-byte kernels ------------------------------- */

/* Four consecutive elements of row r of an M-row, K-column matrix (row stride
   K) from column c (a multiple of 4), zeros outside.  vec: K % 4 == 0, one
   16-byte load. */
template <bool VEC>
__device__ __forceinline__ float4 load4(const float *__restrict__ X, int r, int c, int rows,
                                        int cols)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r >= rows)
        return v;
    const float *p = X + (size_t)r * cols + c;
    if (VEC) {
        if (c < cols)
            v = *reinterpret_cast<const float4 *>(p);
    } else {
        if (c < cols)
            v.x = p[0];
        if (c + 1 < cols)
            v.y = p[1];
        if (c + 2 < cols)
            v.z = p[2];
        if (c + 3 < cols)
            v.w = p[3];
    }
    return v;
}

/* Stores four consecutive elements of row r of C from column c (a multiple
   of 4), only those inside C. */
template <bool VEC>
__device__ __forceinline__ void store4(float *__restrict__ C, int r, int c, int m, int n,
                                       float4 v)
{
    if (r >= m)
        return;
    float *p = C + (size_t)r * n + c;
    if (VEC) {
        if (c < n)
            *reinterpret_cast<float4 *>(p) = v;
    } else {
        if (c < n)
            p[0] = v.x;
        if (c + 1 < n)
            p[1] = v.y;
        if (c + 2 < n)
            p[2] = v.z;
        if (c + 3 < n)
            p[3] = v.w;
    }
}

/* ---- 16-byte accesses, A tile transposed -----------------------------------
 * reg2d's 128 x 128 x 8 tile and 8 x 8 outputs per thread, with 16-byte global
 * loads (one float4 of A and one of B per thread per tile) and stores, and
 * the A tile stored transposed (As[k][row]) so that a thread's 8 A values for
 * one k are two 16-byte shared loads, like its 8 B values. */
constexpr int V_BM = 128, V_BN = 128, V_BK = 8, V_TM = 8, V_TN = 8;
constexpr int V_NT = (V_BM / V_TM) * (V_BN / V_TN); /* 256 */

template <bool VEC>
__global__ void __launch_bounds__(V_NT)
    mm_vec4(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
            int m, int n, int k)
{
    __shared__ __align__(16) float As[V_BK][V_BM];
    __shared__ __align__(16) float Bs[V_BK][V_BN];
    const int tid = threadIdx.x;
    const int tcol = tid % (V_BN / V_TN), trow = tid / (V_BN / V_TN);
    const int bm0 = blockIdx.y * V_BM, bn0 = blockIdx.x * V_BN;
    /* One float4 of A (row ar, columns ac..ac+3) and one of B per thread. */
    const int ar = tid / (V_BK / 4), ac = (tid % (V_BK / 4)) * 4;
    const int br = tid / (V_BN / 4), bc = (tid % (V_BN / 4)) * 4;
    float acc[V_TM][V_TN];
#pragma unroll
    for (int i = 0; i < V_TM; ++i)
#pragma unroll
        for (int j = 0; j < V_TN; ++j)
            acc[i][j] = 0.0f;
    for (int t = 0; t < k; t += V_BK) {
        float4 va = load4<VEC>(A, bm0 + ar, t + ac, m, k);
        As[ac + 0][ar] = va.x;
        As[ac + 1][ar] = va.y;
        As[ac + 2][ar] = va.z;
        As[ac + 3][ar] = va.w;
        float4 vb = load4<VEC>(B, t + br, bn0 + bc, k, n);
        *reinterpret_cast<float4 *>(&Bs[br][bc]) = vb;
        __syncthreads();
#pragma unroll
        for (int p = 0; p < V_BK; ++p) {
            float ra[V_TM], rb[V_TN];
            float4 a0 = *reinterpret_cast<const float4 *>(&As[p][trow * V_TM]);
            float4 a1 = *reinterpret_cast<const float4 *>(&As[p][trow * V_TM + 4]);
            float4 b0 = *reinterpret_cast<const float4 *>(&Bs[p][tcol * V_TN]);
            float4 b1 = *reinterpret_cast<const float4 *>(&Bs[p][tcol * V_TN + 4]);
            ra[0] = a0.x; ra[1] = a0.y; ra[2] = a0.z; ra[3] = a0.w;
            ra[4] = a1.x; ra[5] = a1.y; ra[6] = a1.z; ra[7] = a1.w;
            rb[0] = b0.x; rb[1] = b0.y; rb[2] = b0.z; rb[3] = b0.w;
            rb[4] = b1.x; rb[5] = b1.y; rb[6] = b1.z; rb[7] = b1.w;
#pragma unroll
            for (int i = 0; i < V_TM; ++i)
#pragma unroll
                for (int j = 0; j < V_TN; ++j)
                    acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < V_TM; ++i) {
        int row = bm0 + trow * V_TM + i;
#pragma unroll
        for (int j = 0; j < V_TN; j += 4)
            store4<VEC>(C, row, bn0 + tcol * V_TN + j, m, n,
                        make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
    }
}

/* ---- warp tiling -----------------------------------------------------------
 * The block tile BM x BN (BK deep) is split into warp tiles WM x WN; inside a
 * warp the 32 lanes form 8 rows x 4 columns, each lane owning 4 x 4
 * sub-tiles repeated WM/32 times down and WN/16 times across the warp tile.
 * A lane's 16-byte fragment loads then hit 8 distinct A vectors and 4
 * distinct B vectors per warp (broadcast otherwise): no bank conflicts.
 * Threads: (BM/WM)*(BN/WN)*32. */
template <int BM, int BN, int BK, int WM, int WN>
struct wt_shape {
    static constexpr int NT = (BM / WM) * (BN / WN) * 32;
    static constexpr int WMI = WM / 32, WNI = WN / 16; /* sub-tiles per lane */
    static constexpr int LA = BM * BK / 4 / NT;          /* float4 of A per thread per tile */
    static constexpr int LB = BK * BN / 4 / NT;          /* float4 of B per thread per tile */
    static_assert(LA >= 1 && LA * NT * 4 == BM * BK, "A tile must split into float4 per thread");
    static_assert(LB >= 1 && LB * NT * 4 == BK * BN, "B tile must split into float4 per thread");
    static_assert(WM % 32 == 0 && WN % 16 == 0, "warp tile of whole sub-tiles");
};

constexpr int WT_APAD = 4; /* A tile row padding (floats), keeps 16-byte alignment */
/* Blocks per multiprocessor the warp-tiled kernels are compiled for: 2 caps
   them at 128 registers a thread with 256 threads (two blocks of 8 warps fit
   in the 64K registers), so that one block's barrier does not idle the SM.
   The 64 x 64 warp tiles (128 accumulators a lane) are compiled for one block
   of 8 warps, or two of 4, per SM instead (MINB). */
constexpr int WT_MIN_BLOCKS = 2;

template <int BM, int BN, int BK, int WM, int WN, bool VEC, int MINB = WT_MIN_BLOCKS>
__global__ void __launch_bounds__(wt_shape<BM, BN, BK, WM, WN>::NT, MINB)
    mm_warptile(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                int m, int n, int k)
{
    using S = wt_shape<BM, BN, BK, WM, WN>;
    __shared__ __align__(16) float As[BK][BM + WT_APAD];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;
    const int lr = lane / 4, lc = lane % 4;
    const int bm0 = blockIdx.y * BM, bn0 = blockIdx.x * BN;
    float acc[S::WMI * 4][S::WNI * 4];
#pragma unroll
    for (int i = 0; i < S::WMI * 4; ++i)
#pragma unroll
        for (int j = 0; j < S::WNI * 4; ++j)
            acc[i][j] = 0.0f;
    for (int t = 0; t < k; t += BK) {
#pragma unroll
        for (int l = 0; l < S::LA; ++l) {
            int idx = tid + l * S::NT, r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
            float4 v = load4<VEC>(A, bm0 + r, t + c, m, k);
            As[c + 0][r] = v.x;
            As[c + 1][r] = v.y;
            As[c + 2][r] = v.z;
            As[c + 3][r] = v.w;
        }
#pragma unroll
        for (int l = 0; l < S::LB; ++l) {
            int idx = tid + l * S::NT, r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
            *reinterpret_cast<float4 *>(&Bs[r][c]) = load4<VEC>(B, t + r, bn0 + c, k, n);
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < BK; ++p) {
            float ra[S::WMI * 4], rb[S::WNI * 4];
#pragma unroll
            for (int wi = 0; wi < S::WMI; ++wi) {
                float4 v = *reinterpret_cast<const float4 *>(&As[p][wm0 + wi * 32 + lr * 4]);
                ra[wi * 4 + 0] = v.x;
                ra[wi * 4 + 1] = v.y;
                ra[wi * 4 + 2] = v.z;
                ra[wi * 4 + 3] = v.w;
            }
#pragma unroll
            for (int wj = 0; wj < S::WNI; ++wj) {
                float4 v = *reinterpret_cast<const float4 *>(&Bs[p][wn0 + wj * 16 + lc * 4]);
                rb[wj * 4 + 0] = v.x;
                rb[wj * 4 + 1] = v.y;
                rb[wj * 4 + 2] = v.z;
                rb[wj * 4 + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < S::WMI * 4; ++i)
#pragma unroll
                for (int j = 0; j < S::WNI * 4; ++j)
                    acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int wi = 0; wi < S::WMI; ++wi)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            int row = bm0 + wm0 + wi * 32 + lr * 4 + i;
#pragma unroll
            for (int wj = 0; wj < S::WNI; ++wj) {
                const float *a = acc[wi * 4 + i] + wj * 4;
                store4<VEC>(C, row, bn0 + wn0 + wj * 16 + lc * 4, m, n,
                            make_float4(a[0], a[1], a[2], a[3]));
            }
        }
}

/* ---- the cp.async pipeline -------------------------------------------------
 * warptile's tiles, copied global -> shared by cp.async (no registers on the
 * way) into a ring of `stages` stages: while the block computes on tile t,
 * tiles t+1 .. t+stages-1 are in flight.  cp.async cannot transpose, so the
 * A tile stays row-major, each row padded to BK + 4 floats (16-byte aligned
 * rows), and a lane reads 4 k steps of one A row with one 16-byte load; a
 * lane's rows are 8 apart (lr + 8 i), so that the 8 rows a warp reads at once
 * are consecutive and, 20 (or 12) floats apart, fall in 8 different 16-byte
 * bank groups.  Out-of-range pieces are copied with a source size of 0, which
 * zero-fills them.  Inside a tile, the next k step's B fragment is loaded
 * into a second register set while the current one feeds the FMAs. */
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem),
                 "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async4(void *smem, const void *gmem, int src_bytes)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem),
                 "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

/* Copies with PTX's zero-fill predicate: the piece is copied when `idx` is
   below `lim`, else the source is not read and the destination gets zeros, so
   a copy outside A or B needs neither a branch nor a select of its address
   (ptxas makes it one compare and a predicated LDGSTS).  `dst` is a
   shared-window address. */
__device__ __forceinline__ void cp_async4_below(unsigned dst, const void *src, int idx, int lim)
{
    asm volatile("{\n .reg .pred p;\n setp.ge.s32 p, %2, %3;\n"
                 " cp.async.ca.shared.global.L2::128B [%0], [%1], 4, p;\n}\n" ::"r"(dst),
                 "l"(src), "r"(idx), "r"(lim)
                 : "memory");
}

__device__ __forceinline__ void cp_async16_below(unsigned dst, const void *src, int idx, int lim)
{
    asm volatile("{\n .reg .pred p;\n setp.ge.s32 p, %2, %3;\n"
                 " cp.async.cg.shared.global.L2::128B [%0], [%1], 16, p;\n}\n" ::"r"(dst),
                 "l"(src), "r"(idx), "r"(lim)
                 : "memory");
}

/* Waits until at most N groups are in flight. */
template <int N>
__device__ __forceinline__ void cp_async_wait_n()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Waits until at most `pending` groups are in flight (an immediate in PTX). */
__device__ __forceinline__ void cp_async_wait(int pending)
{
    if (pending <= 0)
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    else if (pending == 1)
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    else
        asm volatile("cp.async.wait_group 2;\n" ::: "memory");
}

/* Four elements of row r of X (rows x cols, row stride cols, cols % 4 == 0)
   from column c (a multiple of 4) into shared memory at dst with one 16-byte
   copy; zeros outside. */
__device__ __forceinline__ void copy16(float *dst, const float *__restrict__ X, int r, int c,
                                       int rows, int cols)
{
    bool in = r < rows && c < cols;
    const float *src = in ? X + (size_t)r * cols + c : X;
    cp_async16(dst, src, in ? 16 : 0);
}

template <int BM, int BN, int BK>
struct pl_layout {
    static constexpr int ASTRIDE = BK + 4;             /* floats per A row in shared memory */
    static constexpr int AFLOATS = BM * ASTRIDE;       /* one stage of A */
    static constexpr int STAGE = AFLOATS + BK * BN;    /* one stage of A and B */
};

template <int BM, int BN, int BK, int WM, int WN, bool VEC>
__global__ void __launch_bounds__(wt_shape<BM, BN, BK, WM, WN>::NT, WT_MIN_BLOCKS)
    mm_pipelined(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                 int m, int n, int k, int stages)
{
    using S = wt_shape<BM, BN, BK, WM, WN>;
    using L = pl_layout<BM, BN, BK>;
    extern __shared__ float4 pl_smem4[];
    float *smem = reinterpret_cast<float *>(pl_smem4);
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;
    const int lr = lane / 4, lc = lane % 4;
    const int bm0 = blockIdx.y * BM, bn0 = blockIdx.x * BN;
    const int ntiles = (k + BK - 1) / BK;

    auto load_tile = [&](int tile, int stage) {
        float *as = smem + stage * L::STAGE, *bs = as + L::AFLOATS;
        const int t = tile * BK;
        if (VEC) {
#pragma unroll
            for (int l = 0; l < S::LA; ++l) {
                int idx = tid + l * S::NT, r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
                copy16(as + r * L::ASTRIDE + c, A, bm0 + r, t + c, m, k);
            }
#pragma unroll
            for (int l = 0; l < S::LB; ++l) {
                int idx = tid + l * S::NT, r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
                copy16(bs + r * BN + c, B, t + r, bn0 + c, k, n);
            }
        } else {
            /* 4-byte copies: consecutive threads take consecutive elements,
               so that each copy instruction of a warp reads contiguous
               bytes (whole rows of the tile); a thread keeps its column and
               steps down NT / BK (NT / BN) rows per copy. */
            static_assert(S::NT % BK == 0 && S::NT % BN == 0, "whole tile rows per step");
            const int ar = tid / BK, ac = tid % BK, br = tid / BN, bc = tid % BN;
            const bool acol = t + ac < k, bcol = bn0 + bc < n;
            const float *pa = A + (size_t)t + ac, *pb = B + (size_t)t * n + bn0 + bc;
#pragma unroll
            for (int l = 0; l < S::LA * 4; ++l) {
                int r = ar + l * (S::NT / BK);
                bool in = acol && bm0 + r < m;
                cp_async4(as + r * L::ASTRIDE + ac, in ? pa + (size_t)(bm0 + r) * k : A, in ? 4 : 0);
            }
#pragma unroll
            for (int l = 0; l < S::LB * 4; ++l) {
                int r = br + l * (S::NT / BN);
                bool in = bcol && t + r < k;
                cp_async4(bs + r * BN + bc, in ? pb + (size_t)r * n : B, in ? 4 : 0);
            }
        }
    };

    float acc[S::WMI * 4][S::WNI * 4];
#pragma unroll
    for (int i = 0; i < S::WMI * 4; ++i)
#pragma unroll
        for (int j = 0; j < S::WNI * 4; ++j)
            acc[i][j] = 0.0f;

    /* Prologue: tiles 0 .. stages-2 in flight, one commit group each (empty
       groups past the last tile keep the count uniform). */
    for (int s = 0; s < stages - 1; ++s) {
        if (s < ntiles)
            load_tile(s, s);
        cp_async_commit();
    }
    for (int t = 0; t < ntiles; ++t) {
        /* Tile t has landed for this thread; the barrier makes every thread's
           copies visible and ends every thread's work on tile t - 1, whose
           stage the next copy overwrites. */
        cp_async_wait(stages - 2);
        __syncthreads();
        if (t + stages - 1 < ntiles)
            load_tile(t + stages - 1, (t + stages - 1) % stages);
        cp_async_commit();

        const float *as = smem + (t % stages) * L::STAGE, *bs = as + L::AFLOATS;
        auto load_b = [&](int p, float *fb) {
#pragma unroll
            for (int wj = 0; wj < S::WNI; ++wj) {
                float4 v = *reinterpret_cast<const float4 *>(bs + p * BN + wn0 + wj * 16 + lc * 4);
                fb[wj * 4 + 0] = v.x;
                fb[wj * 4 + 1] = v.y;
                fb[wj * 4 + 2] = v.z;
                fb[wj * 4 + 3] = v.w;
            }
        };
        /* Four k steps at a time: one 16-byte load per A row gives a lane
           its A values for all four (rows 20 or 12 floats apart: the 8 rows
           of a warp's lanes fall in 8 different 16-byte bank groups); B's
           fragments for the next step load while this one computes. */
#pragma unroll
        for (int g = 0; g < BK / 4; ++g) {
            float4 fa[S::WMI * 4];
#pragma unroll
            for (int wi = 0; wi < S::WMI; ++wi)
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    fa[wi * 4 + i] = *reinterpret_cast<const float4 *>(
                        as + (wm0 + wi * 32 + i * 8 + lr) * L::ASTRIDE + g * 4);
            float rb[2][S::WNI * 4];
            load_b(g * 4, rb[0]);
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                if (q + 1 < 4)
                    load_b(g * 4 + q + 1, rb[(q + 1) & 1]);
#pragma unroll
                for (int i = 0; i < S::WMI * 4; ++i) {
                    const float a = q == 0 ? fa[i].x : q == 1 ? fa[i].y : q == 2 ? fa[i].z : fa[i].w;
#pragma unroll
                    for (int j = 0; j < S::WNI * 4; ++j)
                        acc[i][j] += a * rb[q & 1][j];
                }
            }
        }
    }
    cp_async_wait(0);

#pragma unroll
    for (int wi = 0; wi < S::WMI; ++wi)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            int row = bm0 + wm0 + wi * 32 + i * 8 + lr;
#pragma unroll
            for (int wj = 0; wj < S::WNI; ++wj) {
                const float *a = acc[wi * 4 + i] + wj * 4;
                store4<VEC>(C, row, bn0 + wn0 + wj * 16 + lc * 4, m, n,
                            make_float4(a[0], a[1], a[2], a[3]));
            }
        }
}

/* ---- 64 x 64 warp tiles (the pipelined kernel's large tiles) ----------------
 * cuBLAS's SIMT shape: a 256 x 128 (or 128 x 256, 128 x 128) block tile, warps
 * of 64 x 64, lanes 4 down x 8 across, each lane 16 x 8 outputs (128
 * accumulators) as 4 x 2 sub-tiles of 4 x 4 spaced 16 rows and 32 columns
 * apart.  Per k step a lane loads 4 float4 of A and 2 float4 of B (6 shared
 * loads feed 128 FMAs, against 4 for 64 in the 64 x 32 warp tiles), and the
 * next step's fragments load into a second register set while this one
 * computes.  One block of 8 warps per SM (up to 255 registers a thread), or
 * two of 4 warps for the 128 x 128 tile.
 *
 * A is stored transposed (k-major, As[k][row], rows padded by 4 floats) so
 * that a lane's A values for one k step are whole float4: cp.async cannot
 * transpose 16-byte pieces, so A is copied element by element with 4-byte
 * cp.async, the 8 consecutive k of a row to 8 consecutive lanes (a warp's copy
 * reads 4 rows x 32 bytes, and the padding spreads its 32 shared stores over
 * the 32 banks).  That path does not depend on k % 4, so a ragged k costs
 * nothing.  B is copied in 16-byte pieces when n % 4 == 0, else in 4-byte
 * pieces.  Tiles sticking out of A or B are zero-filled (source size 0).
 *
 * The pipeline: `stages` shared stages; at the start of tile t the copies of
 * tile t + stages - 1 go into the stage of tile t - 1, which every thread has
 * finished reading (its last fragment was loaded before the barrier that
 * ended tile t - 1).  One barrier per tile: before the last k step of tile t
 * computes, the thread waits for its copies of tile t + 1, the block meets,
 * and the first fragments of tile t + 1 load while that last step computes.
 * The k loop has no branch but its own: the stage count is a template
 * argument (the wait is an immediate), every copy is predicated by one
 * compare against a per-block limit (zeros outside A and B, and for the
 * tiles past the last one), and the last tile waits and meets as the others
 * do.  An earlier form branched per tile between a checked and an unchecked
 * copy path and on the stage count; its SASS spent 10-15% of a k tile's
 * issue slots on compares, branches and their fixed-latency stalls.
 *
 * Block order: consecutive blocks walk down a group of BW_GROUP_ROWS / BM
 * block rows before moving one block column right, so that the blocks
 * resident at once share A rows and B columns in L2. */
template <int BM_, int BN_, int BK_, int WGM_, int WGN_, int MINB_>
struct bw_shape {
    static constexpr int BM = BM_, BN = BN_, BK = BK_;
    static constexpr int NT = WGM_ * WGN_ * 32;  /* threads */
    static constexpr int MINB = MINB_;           /* blocks per SM the registers allow */
    static constexpr int WGN = WGN_;             /* warps across */
    static constexpr int WM = BM / WGM_, WN = BN / WGN_;
    static constexpr int LR = 4, LC = 8;         /* lanes down, across */
    static constexpr int TM = WM / LR, TN = WN / LC; /* outputs per lane */
    static constexpr int MI = TM / 4, NI = TN / 4;   /* 4 x 4 sub-tiles per lane */
    static constexpr int ASTRIDE = BM + 4;       /* floats per k row of A in shared memory */
    static constexpr int AFLOATS = BK * ASTRIDE; /* one stage of A */
    static constexpr int STAGE = AFLOATS + BK * BN;  /* one stage of A and B, floats */
    static constexpr int LA = BM * BK / NT;      /* 4-byte copies of A per thread per tile */
    static_assert(WM == 64 && WN == 64, "64 x 64 warp tiles");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "whole 4 x 4 sub-tiles per lane");
    static_assert(BK % 8 == 0 && NT % 32 == 0, "A copies: 8 consecutive k per 8 lanes");
    static_assert(LA * NT == BM * BK && (NT / 8) % 4 == 0 && BM % (NT / 8) == 0,
                  "A tile split into 4-byte copies, 4 whole rows per warp");
    static_assert(BM % 32 == 0, "A's k rows padded to 4 banks past a multiple of 32");
    static_assert((ASTRIDE * 4) % 16 == 0 && (STAGE * 4) % 16 == 0, "16-byte aligned rows and stages");
};

/* Block rows a group of the block order spans (see above). */
constexpr int BW_GROUP_ROWS = 2048;

template <class S, int STAGES, bool VEC>
__global__ void __launch_bounds__(S::NT, S::MINB)
    mm_bigwarp(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
               int m, int n, int k)
{
    constexpr int BM = S::BM, BN = S::BN, BK = S::BK;
    extern __shared__ float4 bw_smem4[];
    float *smem = reinterpret_cast<float *>(bw_smem4);
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm0 = (warp / S::WGN) * S::WM, wn0 = (warp % S::WGN) * S::WN;
    const int lr = lane / S::LC, lc = lane % S::LC;

    /* The block's tile: groups of `group` block rows, column by column. */
    const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    const int group = BW_GROUP_ROWS / BM;
    const int per_group = group * tiles_n;
    const int g = (int)blockIdx.x / per_group, in_group = (int)blockIdx.x % per_group;
    const int first = g * group;
    const int rows_here = tiles_m - first < group ? tiles_m - first : group;
    const int bm0 = (first + in_group % rows_here) * BM;
    const int bn0 = (in_group / rows_here) * BN;
    const int ntiles = (k + BK - 1) / BK;

    /* Who copies what, worked out once.  A: a thread copies k column 8 h + akk
       (h < BK / 8) of tile rows ar0 + r NT / 8 (r < BM / (NT / 8)); 8
       consecutive lanes take the 8 k of a row.  B: tile rows br0 + e BROWS,
       one piece (column bc) each. */
    constexpr int AROWS = S::NT / 8, AR = BM / AROWS, AH = BK / 8;
    static_assert(AR * AH == S::LA && AR <= 32, "A copies: rows x k groups");
    const int akk = tid % 8, ar0 = tid / 8;
    const size_t a_step = (size_t)AROWS * (size_t)k;
    constexpr int BPR = VEC ? BN / 4 : BN; /* copies per B tile row */
    constexpr int BROWS = S::NT / BPR, BE = BK / BROWS;
    static_assert(S::NT % BPR == 0 && BE * BROWS == BK, "B copies: whole rows per step");
    const int br0 = tid / BPR, bc = (tid % BPR) * (VEC ? 4 : 1);
    const bool b_col = bn0 + bc < n; /* VEC: n % 4 == 0, so the piece is wholly in or out */
    const size_t b_step = (size_t)BROWS * (size_t)n;
    /* The next k tile's first column (t_next) and the thread's first sources
       in it; they move by a tile after each load.  Sources of pieces outside
       A or B are formed but never read (the copy's zero-fill predicate). */
    int t_next = 0;
    const float *a_src = A + (size_t)(bm0 + ar0) * (size_t)k + akk;
    const float *b_src = B + (size_t)br0 * (size_t)n + (bn0 + bc);
    /* A piece is copied when its k index is below its limit: k for rows and
       columns inside A and B, 0 (nothing) outside.  The limits are fixed for
       the block, so a k tile's copies need one compare each and no branch;
       the tiles past the last one (the pipeline's tail) zero-fill a stage
       that is never read. */
    int a_lim[AR];
#pragma unroll
    for (int r = 0; r < AR; ++r)
        a_lim[r] = bm0 + ar0 + r * AROWS < m ? k : 0;
    const int b_lim = b_col ? k : 0;
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
    const unsigned as_dst = sbase + 4u * (unsigned)(akk * S::ASTRIDE + ar0);
    const unsigned bs_dst = sbase + 4u * (unsigned)(S::AFLOATS + br0 * BN + bc);

    /* Copies k tiles 0, 1, 2 ... in turn, each into the stage at byte offset
       `stage`, zeros outside A and B. */
    auto load_next = [&](unsigned stage) {
        const int t0 = t_next;
        const unsigned as = as_dst + stage, bs = bs_dst + stage;
#pragma unroll
        for (int h = 0; h < AH; ++h) {
            const float *src = a_src + h * 8;
#pragma unroll
            for (int r = 0; r < AR; ++r) {
                cp_async4_below(as + 4u * (unsigned)(h * 8 * S::ASTRIDE + r * AROWS), src,
                                t0 + h * 8 + akk, a_lim[r]);
                src += a_step;
            }
        }
        const float *src = b_src;
#pragma unroll
        for (int e = 0; e < BE; ++e) {
            if (VEC)
                cp_async16_below(bs + 4u * (unsigned)(e * BROWS * BN), src, t0 + br0 + e * BROWS, b_lim);
            else
                cp_async4_below(bs + 4u * (unsigned)(e * BROWS * BN), src, t0 + br0 + e * BROWS, b_lim);
            src += b_step;
        }
        t_next += BK;
        a_src += BK;
        b_src += (size_t)BK * (size_t)n;
    };
    /* A lane's fragments for k step p of a stage: sub-tile rows 16 apart,
       columns 32 apart; the 4 (8) lanes of a row (column) read 4 (8)
       consecutive float4: one shared-memory wavefront each. */
    auto load_frag = [&](const float *st, int p, float4 *fa, float4 *fb) {
        const float *as = st + p * S::ASTRIDE + wm0 + lr * 4;
        const float *bs = st + S::AFLOATS + p * BN + wn0 + lc * 4;
#pragma unroll
        for (int i = 0; i < S::MI; ++i)
            fa[i] = *reinterpret_cast<const float4 *>(as + i * S::LR * 4);
#pragma unroll
        for (int j = 0; j < S::NI; ++j)
            fb[j] = *reinterpret_cast<const float4 *>(bs + j * S::LC * 4);
    };

    float acc[S::TM][S::TN];
#pragma unroll
    for (int i = 0; i < S::TM; ++i)
#pragma unroll
        for (int j = 0; j < S::TN; ++j)
            acc[i][j] = 0.0f;

    /* Prologue: tiles 0 .. STAGES-2, one commit group each (groups past the
       last tile copy zeros and keep the count uniform); then tile 0 has
       landed for every thread, and its first fragments load. */
    constexpr unsigned STAGE_BYTES = 4u * S::STAGE;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        load_next((unsigned)s * STAGE_BYTES);
        cp_async_commit();
    }
    cp_async_wait_n<STAGES - 2>();
    __syncthreads();
    float4 fa[2][S::MI], fb[2][S::NI];
    load_frag(smem, 0, fa[0], fb[0]);

    /* Byte offsets of the stages of tile t and of tile t + STAGES - 1.  The
       loop body has no branch: the last tile's copies and its barrier run as
       every other tile's (the copies zero-fill, the fragments loaded after
       the barrier are not used). */
    unsigned rs = 0, ws = (STAGES - 1) * STAGE_BYTES;
    for (int t = 0; t < ntiles; ++t) {
        load_next(ws); /* k tile t + STAGES - 1 */
        cp_async_commit();
        const float *cur = smem + rs / 4u;
        rs = rs + STAGE_BYTES == STAGES * STAGE_BYTES ? 0u : rs + STAGE_BYTES;
        ws = ws + STAGE_BYTES == STAGES * STAGE_BYTES ? 0u : ws + STAGE_BYTES;
#pragma unroll
        for (int p = 0; p < BK; ++p) {
            const int nb = (p + 1) & 1; /* BK is even: tile t + 1 starts in set 0 */
            if (p + 1 < BK) {
                load_frag(cur, p + 1, fa[nb], fb[nb]);
            } else {
                /* Groups committed: STAGES + t; tile t + 1 is group t + 1. */
                cp_async_wait_n<STAGES - 2>();
                __syncthreads();
                load_frag(smem + rs / 4u, 0, fa[nb], fb[nb]);
            }
            const float4 *a4 = fa[p & 1], *b4 = fb[p & 1];
#pragma unroll
            for (int i = 0; i < S::MI; ++i) {
#pragma unroll
                for (int ii = 0; ii < 4; ++ii) {
                    const float a = ii == 0 ? a4[i].x : ii == 1 ? a4[i].y : ii == 2 ? a4[i].z : a4[i].w;
                    float *c = acc[i * 4 + ii];
#pragma unroll
                    for (int j = 0; j < S::NI; ++j) {
                        c[j * 4 + 0] += a * b4[j].x;
                        c[j * 4 + 1] += a * b4[j].y;
                        c[j * 4 + 2] += a * b4[j].z;
                        c[j * 4 + 3] += a * b4[j].w;
                    }
                }
            }
        }
    }
    cp_async_wait(0);

#pragma unroll
    for (int i = 0; i < S::MI; ++i)
#pragma unroll
        for (int ii = 0; ii < 4; ++ii) {
            const int row = bm0 + wm0 + i * S::LR * 4 + lr * 4 + ii;
#pragma unroll
            for (int j = 0; j < S::NI; ++j) {
                const float *a = acc[i * 4 + ii] + j * 4;
                store4<VEC>(C, row, bn0 + wn0 + j * S::LC * 4 + lc * 4, m, n,
                            make_float4(a[0], a[1], a[2], a[3]));
            }
        }
}

/* ---- launch helpers -------------------------------------------------------- */

struct dims {
    const float *A, *B;
    float *C;
    int m, n, k;
    cudaStream_t st;
};

dims dims_of(kbm_state *s, kb_host *host)
{
    dims d;
    d.A = static_cast<const float *>(s->a.dev);
    d.B = static_cast<const float *>(s->b.dev);
    d.C = static_cast<float *>(s->c.dev);
    d.m = (int)s->m;
    d.n = (int)s->n;
    d.k = (int)s->k;
    d.st = static_cast<cudaStream_t>(host->stream);
    return d;
}

dim3 grid_of(const dims &d, int bm, int bn)
{
    return dim3((unsigned)kbm_ceil_div((uint64_t)d.n, (uint64_t)bn),
                (unsigned)kbm_ceil_div((uint64_t)d.m, (uint64_t)bm));
}

/* 16-byte accesses apply: every row of A, B and C starts on 16 bytes. */
bool vec_ok(const dims &d) { return d.k % 4 == 0 && d.n % 4 == 0; }

template <int BM, int BN, int BK, int WM, int WN, int MINB = WT_MIN_BLOCKS>
int launch_warptile(const dims &d, kb_host *host)
{
    using S = wt_shape<BM, BN, BK, WM, WN>;
    dim3 g = grid_of(d, BM, BN);
    if (vec_ok(d))
        mm_warptile<BM, BN, BK, WM, WN, true, MINB>
            <<<g, S::NT, 0, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
    else
        mm_warptile<BM, BN, BK, WM, WN, false, MINB>
            <<<g, S::NT, 0, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
    KBK_CUDA_LAUNCH(host, "mm_warptile");
    return KB_OK;
}

template <int BM, int BN, int BK, int WM, int WN>
size_t pipelined_smem(int stages)
{
    return (size_t)stages * pl_layout<BM, BN, BK>::STAGE * sizeof(float);
}

template <int BM, int BN, int BK, int WM, int WN>
int prepare_pipelined(int stages, kb_host *host)
{
    int bytes = (int)pipelined_smem<BM, BN, BK, WM, WN>(stages);
    KBK_CUDA(host, cudaFuncSetAttribute(mm_pipelined<BM, BN, BK, WM, WN, true>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    KBK_CUDA(host, cudaFuncSetAttribute(mm_pipelined<BM, BN, BK, WM, WN, false>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return KB_OK;
}

template <int BM, int BN, int BK, int WM, int WN>
int launch_pipelined(const dims &d, int stages, kb_host *host)
{
    using S = wt_shape<BM, BN, BK, WM, WN>;
    dim3 g = grid_of(d, BM, BN);
    size_t bytes = pipelined_smem<BM, BN, BK, WM, WN>(stages);
    if (vec_ok(d))
        mm_pipelined<BM, BN, BK, WM, WN, true>
            <<<g, S::NT, bytes, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k, stages);
    else
        mm_pipelined<BM, BN, BK, WM, WN, false>
            <<<g, S::NT, bytes, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k, stages);
    KBK_CUDA_LAUNCH(host, "mm_pipelined");
    return KB_OK;
}

template <class S>
size_t bigwarp_smem(int stages)
{
    return (size_t)stages * S::STAGE * sizeof(float);
}

template <class S, int STAGES>
int prepare_bigwarp_at(int bytes, kb_host *host)
{
    KBK_CUDA(host, cudaFuncSetAttribute(mm_bigwarp<S, STAGES, true>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    KBK_CUDA(host, cudaFuncSetAttribute(mm_bigwarp<S, STAGES, false>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return KB_OK;
}

/* The stage count is a template argument of the kernel (the pipeline's wait
   is an immediate and its stage offsets constants); `stages` (2 to 4, the
   parameter's range) picks the instantiation. */
template <class S>
int prepare_bigwarp(int stages, kb_host *host)
{
    int bytes = (int)bigwarp_smem<S>(stages);
    switch (stages) {
    case 2: return prepare_bigwarp_at<S, 2>(bytes, host);
    case 3: return prepare_bigwarp_at<S, 3>(bytes, host);
    default: return prepare_bigwarp_at<S, 4>(bytes, host);
    }
}

template <class S, int STAGES>
void launch_bigwarp_at(const dims &d, unsigned blocks, size_t bytes)
{
    if (d.n % 4 == 0)
        mm_bigwarp<S, STAGES, true><<<blocks, S::NT, bytes, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
    else
        mm_bigwarp<S, STAGES, false><<<blocks, S::NT, bytes, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
}

/* 16-byte B copies and C stores need only n % 4 == 0 here: A is copied in
   4-byte pieces whatever k is. */
template <class S>
int launch_bigwarp(const dims &d, int stages, kb_host *host)
{
    const unsigned blocks = (unsigned)(kbm_ceil_div((uint64_t)d.m, (uint64_t)S::BM) *
                                       kbm_ceil_div((uint64_t)d.n, (uint64_t)S::BN));
    size_t bytes = bigwarp_smem<S>(stages);
    switch (stages) {
    case 2: launch_bigwarp_at<S, 2>(d, blocks, bytes); break;
    case 3: launch_bigwarp_at<S, 3>(d, blocks, bytes); break;
    default: launch_bigwarp_at<S, 4>(d, blocks, bytes); break;
    }
    KBK_CUDA_LAUNCH(host, "mm_bigwarp");
    return KB_OK;
}

} // namespace

/* ---- the run entries ------------------------------------------------------- */

extern "C" int kbm_run_naive(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    dims d = dims_of(s, host);
    mm_naive<<<grid_of(d, 16, 16), dim3(16, 16), 0, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
    KBK_CUDA_LAUNCH(host, "mm_naive");
    return KB_OK;
}

extern "C" int kbm_run_coalesced(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    dims d = dims_of(s, host);
    mm_naive<<<grid_of(d, 8, 32), dim3(32, 8), 0, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
    KBK_CUDA_LAUNCH(host, "mm_naive (32 x 8)");
    return KB_OK;
}

extern "C" int kbm_run_tiled(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    dims d = dims_of(s, host);
    switch (s->block) {
    case 8:
        mm_tiled<8><<<grid_of(d, 8, 8), dim3(8, 8), 0, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
        break;
    case 16:
        mm_tiled<16><<<grid_of(d, 16, 16), dim3(16, 16), 0, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
        break;
    case 32:
        mm_tiled<32><<<grid_of(d, 32, 32), dim3(32, 32), 0, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
        break;
    default:
        return host->fail(host, KB_EINVAL, "matmul: tiled takes block = 8, 16 or 32, not %d",
                          s->block);
    }
    KBK_CUDA_LAUNCH(host, "mm_tiled");
    return KB_OK;
}

extern "C" int kbm_run_reg1d(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    dims d = dims_of(s, host);
    mm_reg1d<64, 64, 8, 8><<<grid_of(d, 64, 64), 64 * 64 / 8, 0, d.st>>>(d.A, d.B, d.C, d.m, d.n,
                                                                          d.k);
    KBK_CUDA_LAUNCH(host, "mm_reg1d");
    return KB_OK;
}

extern "C" int kbm_run_reg2d(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    dims d = dims_of(s, host);
    mm_reg2d<128, 128, 8, 8, 8><<<grid_of(d, 128, 128), 256, 0, d.st>>>(d.A, d.B, d.C, d.m, d.n,
                                                                         d.k);
    KBK_CUDA_LAUNCH(host, "mm_reg2d");
    return KB_OK;
}

extern "C" int kbm_run_vec4(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    dims d = dims_of(s, host);
    dim3 g = grid_of(d, V_BM, V_BN);
    if (vec_ok(d))
        mm_vec4<true><<<g, V_NT, 0, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
    else
        mm_vec4<false><<<g, V_NT, 0, d.st>>>(d.A, d.B, d.C, d.m, d.n, d.k);
    KBK_CUDA_LAUNCH(host, "mm_vec4");
    return KB_OK;
}

/* Tiles (enum kbm_tile): one case per row of matmul_tiles.def, whose KIND
   (PIPE or BIG) picks the pipelined kernel's form. */
#define KBM_ARGS(...) __VA_ARGS__
#define KBM_SMEM_PIPE(wt, shape) pipelined_smem<KBM_ARGS wt>(stages)
#define KBM_SMEM_BIG(wt, shape) bigwarp_smem<bw_shape<KBM_ARGS shape>>(stages)
#define KBM_PREPARE_PIPE(wt, shape) prepare_pipelined<KBM_ARGS wt>(s->stages, host)
#define KBM_PREPARE_BIG(wt, shape) prepare_bigwarp<bw_shape<KBM_ARGS shape>>(s->stages, host)
#define KBM_LAUNCH_PIPE(wt, shape) launch_pipelined<KBM_ARGS wt>(d, s->stages, host)
#define KBM_LAUNCH_BIG(wt, shape) launch_bigwarp<bw_shape<KBM_ARGS shape>>(d, s->stages, host)

extern "C" int kbm_run_warptile(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    dims d = dims_of(s, host);
    switch (s->tile) {
#define KBM_TILE(id, name, kind, wt, shape)                                                       \
    case KBM_##id: return launch_warptile<KBM_ARGS wt>(d, host);
#include "matmul_tiles.def"
#undef KBM_TILE
    }
    return host->fail(host, KB_EINVAL, "matmul: no tile number %d", s->tile);
}

extern "C" size_t kbm_pipelined_smem(int tile, int stages)
{
    switch (tile) {
#define KBM_TILE(id, name, kind, wt, shape)                                                       \
    case KBM_##id: return KBM_SMEM_##kind(wt, shape);
#include "matmul_tiles.def"
#undef KBM_TILE
    }
    return 0;
}

extern "C" int kbm_pipelined_prepare(kbm_state *s, kb_host *host)
{
    if (s->stages < 2 || s->stages > 4)
        return host->fail(host, KB_EINVAL, "matmul: pipelined takes stages = 2 .. 4, not %d",
                          s->stages);
    switch (s->tile) {
#define KBM_TILE(id, name, kind, wt, shape)                                                       \
    case KBM_##id: return KBM_PREPARE_##kind(wt, shape);
#include "matmul_tiles.def"
#undef KBM_TILE
    }
    return host->fail(host, KB_EINVAL, "matmul: no tile number %d", s->tile);
}

extern "C" int kbm_run_pipelined(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    dims d = dims_of(s, host);
    switch (s->tile) {
#define KBM_TILE(id, name, kind, wt, shape)                                                       \
    case KBM_##id: return KBM_LAUNCH_##kind(wt, shape);
#include "matmul_tiles.def"
#undef KBM_TILE
    }
    return host->fail(host, KB_EINVAL, "matmul: no tile number %d", s->tile);
}
