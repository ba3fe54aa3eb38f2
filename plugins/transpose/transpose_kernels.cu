/*
 * transpose_kernels.cu -- the transpose family's kernels and their launchers
 * (one per row of transpose_variants.def), and the copy ceiling.
 *
 * Every kernel moves elements as unsigned integers of their width (bits, not
 * values), indexes with 64-bit offsets, checks every access that can fall
 * outside the matrix, and loops over its blocks or tiles with a grid stride,
 * so that any shape runs with a grid of at most 2^31 - 1 blocks.  The input is
 * rows x cols, row-major; the output cols x rows: out[c * rows + r] =
 * in[r * cols + c].
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "transpose.h"

namespace {

/* Blocks of a launch: the work's blocks, at most 2^31 - 1 (kernels loop). */
unsigned grid_of(uint64_t nblocks)
{
    return (unsigned)(nblocks < KBT_MAX_GRID ? nblocks : KBT_MAX_GRID);
}

/* ---- naive ----------------------------------------------------------------
 * Block (bx, by) covers bx columns of by rows.  A warp's threads run along
 * threadIdx.x: consecutive input columns (coalesced reads), and so output
 * rows rows elements apart (each write in its own sector).
 * ------------------------------------------------------------------------ */
template <typename T>
__global__ void naive_kernel(const T *__restrict__ in, T *__restrict__ out, uint64_t rows,
                             uint64_t cols, uint64_t bcols, uint64_t nblocks)
{
    for (uint64_t b = blockIdx.x; b < nblocks; b += gridDim.x) {
        uint64_t c = (b % bcols) * blockDim.x + threadIdx.x;
        uint64_t r = (b / bcols) * blockDim.y + threadIdx.y;
        if (r < rows && c < cols)
            out[c * rows + r] = in[r * cols + c];
    }
}

/* The mirror: threadIdx.x runs along the input rows, so along each output
   row (coalesced writes) and down the input columns (scattered reads). */
template <typename T>
__global__ void naive_mirror_kernel(const T *__restrict__ in, T *__restrict__ out, uint64_t rows,
                                    uint64_t cols, uint64_t brows, uint64_t nblocks)
{
    for (uint64_t b = blockIdx.x; b < nblocks; b += gridDim.x) {
        uint64_t r = (b % brows) * blockDim.x + threadIdx.x;
        uint64_t c = (b / brows) * blockDim.y + threadIdx.y;
        if (r < rows && c < cols)
            out[c * rows + r] = in[r * cols + c];
    }
}

/* ---- smem: the tutorial's 32 x 32 shared-memory tile ------------------------
 * 32 x 32 threads, one element each: a coalesced read of a tile's row into
 * shared memory, a barrier, a coalesced write of the output row read down a
 * tile column.  LAYOUT 0: tile[32][32] (a column's 32 elements sit in one
 * bank: a 32-way conflict for 4-byte elements); 1: rows of 33 (each column
 * element in its own bank); 2: column index XOR row (the same, no padding).
 * ------------------------------------------------------------------------ */
template <int LAYOUT>
__device__ __forceinline__ unsigned smem_col(unsigned y, unsigned x)
{
    return LAYOUT == 2 ? (x ^ y) : x;
}

template <typename T, int LAYOUT>
__global__ void __launch_bounds__(1024) smem_kernel(const T *__restrict__ in, T *__restrict__ out,
                                                    uint64_t rows, uint64_t cols, uint64_t bcols,
                                                    uint64_t nblocks)
{
    __shared__ T tile[32][LAYOUT == 1 ? 33 : 32];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    for (uint64_t b = blockIdx.x; b < nblocks; b += gridDim.x) { /* b is the same for the block */
        uint64_t r0 = (b / bcols) * 32, c0 = (b % bcols) * 32;
        if (r0 + ty < rows && c0 + tx < cols)
            tile[ty][smem_col<LAYOUT>(ty, tx)] = in[(r0 + ty) * cols + c0 + tx];
        __syncthreads();
        /* Output row c0 + ty, column r0 + tx: input element (r0 + tx, c0 + ty). */
        if (c0 + ty < cols && r0 + tx < rows)
            out[(c0 + ty) * rows + r0 + tx] = tile[tx][smem_col<LAYOUT>(tx, ty)];
        __syncthreads(); /* the next tile overwrites this one */
    }
}

/* ---- reg4, reg2: the tutorial's register tiles ------------------------------
 * Each thread moves an N x N tile: N vector loads (N consecutive elements of
 * N consecutive input rows), then for each j the output row c0 + j built from
 * element j of every load and stored at once as one vector.  No shared
 * memory.  Vector accesses need rows and cols to be multiples of N (aligned);
 * otherwise, and for tiles that cross the matrix's edge, the thread moves its
 * elements one by one.
 * ------------------------------------------------------------------------ */
template <typename T, int N>
struct alignas(N * sizeof(T)) vecn {
    T e[N];
};

template <typename T, int N>
__global__ void reg_kernel(const T *__restrict__ in, T *__restrict__ out, uint64_t rows,
                           uint64_t cols, uint64_t bcols, uint64_t nblocks, int aligned)
{
    typedef vecn<T, N> V;
    for (uint64_t b = blockIdx.x; b < nblocks; b += gridDim.x) {
        uint64_t r0 = ((b / bcols) * blockDim.y + threadIdx.y) * N;
        uint64_t c0 = ((b % bcols) * blockDim.x + threadIdx.x) * N;
        if (r0 >= rows || c0 >= cols)
            continue;
        if (aligned && r0 + N <= rows && c0 + N <= cols) {
            V a[N];
#pragma unroll
            for (int i = 0; i < N; i++)
                a[i] = *reinterpret_cast<const V *>(in + (r0 + i) * cols + c0);
#pragma unroll
            for (int j = 0; j < N; j++) {
                V o;
#pragma unroll
                for (int i = 0; i < N; i++)
                    o.e[i] = a[i].e[j];
                *reinterpret_cast<V *>(out + (c0 + j) * rows + r0) = o;
            }
        } else {
            for (int i = 0; i < N && r0 + i < rows; i++)
                for (int j = 0; j < N && c0 + j < cols; j++)
                    out[(c0 + j) * rows + r0 + i] = in[(r0 + i) * cols + c0 + j];
        }
    }
}

/* ---- vec16: 16-byte accesses on both sides ------------------------------------
 * A block moves TM x TN tiles (TM input rows, TN input columns) through shared
 * memory.  W = 16 / sizeof(T) elements make a 16-byte granule.
 *
 * Aligned path (rows and cols multiples of W, the tile inside the matrix):
 *   load:  each thread issues all its 16-byte loads of input rows (a warp
 *          reads 256 or 512 contiguous bytes per instruction) before storing
 *          them to shared memory, so several are in flight;
 *   store: each thread takes W x W sub-tiles: W 16-byte shared loads (W
 *          consecutive input rows, one granule), a transpose in registers,
 *          W 16-byte global stores (W output rows; consecutive threads take
 *          consecutive granules of one output row, so a warp writes 256
 *          contiguous bytes per row).
 *   Shared memory is swizzled at granule level: granule g of tile row y sits
 *   at g ^ ((y / W) & 7), so that eight threads reading W-row groups 0..7 of
 *   one granule column, or eight consecutive granules of one row, hit eight
 *   different 16-byte bank groups (a 16-byte access is served eight threads
 *   at a time): no conflicts on either side, no padding.
 * Edge tiles of an aligned matrix move element by element in the same layout.
 *
 * Unaligned path (rows or cols not a multiple of W: 16-byte accesses would
 * straddle rows): every access is one element, still coalesced (consecutive
 * threads, consecutive addresses), in batches of 16 loads in flight per thread (8 for f64), through
 * a tile swizzled per element (column x of row y at x ^ (y & 31), in whole
 * 4-byte words for u16): a warp's 32 elements of a row or of a column fall in
 * 32 different banks.
 *
 * The tile per dtype (TM = TN, THREADS): f32 64, 128 threads (2 sub-tiles and
 * 8 loads of 16 bytes per thread, 16 KiB); f64 64, 256 threads (4 sub-tiles,
 * 8 loads, 32 KiB); u16 128, 128 threads (2 sub-tiles of 8 x 8, 16 loads, 32
 * KiB).  Each tile row is 256 bytes (f32, u16) or 512 (f64) of the matrix.
 * ------------------------------------------------------------------------ */
template <typename T> struct vec16_cfg;
/* MIN_BLOCKS: resident blocks per multiprocessor asked of the compiler (a
   register cap of 65536 / (THREADS * MIN_BLOCKS)), so that enough tiles are
   in flight per multiprocessor. */
/* PIPE_BLOCKS: the same for vec16-pipe, which keeps a second tile's loads in
   registers (fewer blocks, more registers each), and its grid: PIPE_BLOCKS
   per multiprocessor. */
template <> struct vec16_cfg<uint32_t> {
    static constexpr int TILE = 64, THREADS = 128, MIN_BLOCKS = 8, PIPE_BLOCKS = 4;
};
template <> struct vec16_cfg<uint64_t> {
    static constexpr int TILE = 64, THREADS = 256, MIN_BLOCKS = 3, PIPE_BLOCKS = 2;
};
template <> struct vec16_cfg<uint16_t> {
    static constexpr int TILE = 128, THREADS = 128, MIN_BLOCKS = 6, PIPE_BLOCKS = 4;
};

template <typename T>
union granule {
    uint4 q;
    T e[16 / sizeof(T)];
};

/* Element (y, x) of the tile, in the aligned (granule-swizzled) layout. */
template <typename T, int TILE>
__device__ __forceinline__ unsigned vec_index(unsigned y, unsigned x)
{
    constexpr unsigned W = 16 / sizeof(T);
    return y * TILE + (((x / W) ^ ((y / W) & 7u)) * W) + x % W;
}

/* Element (y, x) of the tile, in the unaligned (element-swizzled) layout:
   x ^ (y & 31), scaled to whole 4-byte words for 2-byte elements, so that the
   32 elements of a column land in 32 different banks. */
template <typename T, int TILE>
__device__ __forceinline__ unsigned elem_index(unsigned y, unsigned x)
{
    constexpr unsigned S = sizeof(T) < 4 ? 4 / sizeof(T) : 1;
    static_assert(TILE >= 32 * S, "the swizzle stays inside a tile row");
    return y * TILE + (x ^ ((y & 31u) * S));
}

/* One tile, element by element with bounds checks (edges, unaligned shapes),
   in the aligned layout (VEC: an edge tile of vec16's 16-byte path) or the
   element-swizzled one.  A full tile skips the checks. */
template <typename T, int TILE, int THREADS, bool VEC>
__device__ __forceinline__ void tile_scalar(const T *__restrict__ in, T *__restrict__ out,
                                            T *sm, uint64_t rows, uint64_t cols, uint64_t r0,
                                            uint64_t c0)
{
    constexpr int PER = TILE * TILE / THREADS; /* elements per thread per phase */
    constexpr int BATCH = sizeof(T) == 8 ? 8 : 16; /* loads in flight per thread */
    static_assert(PER % BATCH == 0, "the batches cover a thread's elements");
    const unsigned t = threadIdx.x;
    const bool full = r0 + TILE <= rows && c0 + TILE <= cols;
#pragma unroll 1
    for (int k0 = 0; k0 < PER; k0 += BATCH) {
        T v[BATCH];
#pragma unroll
        for (int k = 0; k < BATCH; k++) {
            unsigned e = t + (unsigned)(k0 + k) * THREADS;
            unsigned y = e / TILE, x = e % TILE;
            if (full || (r0 + y < rows && c0 + x < cols))
                v[k] = in[(r0 + y) * cols + c0 + x];
        }
#pragma unroll
        for (int k = 0; k < BATCH; k++) {
            unsigned e = t + (unsigned)(k0 + k) * THREADS;
            unsigned y = e / TILE, x = e % TILE;
            if (full || (r0 + y < rows && c0 + x < cols))
                sm[VEC ? vec_index<T, TILE>(y, x) : elem_index<T, TILE>(y, x)] = v[k];
        }
    }
    __syncthreads();
    /* Output row c0 + oy holds input column c0 + oy; its element ox is input
       row r0 + ox. */
#pragma unroll 1
    for (int k0 = 0; k0 < PER; k0 += BATCH) {
#pragma unroll
        for (int k = 0; k < BATCH; k++) {
            unsigned e = t + (unsigned)(k0 + k) * THREADS;
            unsigned oy = e / TILE, ox = e % TILE;
            if (full || (c0 + oy < cols && r0 + ox < rows))
                out[(c0 + oy) * rows + r0 + ox] =
                    sm[VEC ? vec_index<T, TILE>(ox, oy) : elem_index<T, TILE>(ox, oy)];
        }
    }
}

/* One full tile of an aligned matrix: 16-byte accesses on both sides. */
template <typename T, int TILE, int THREADS>
__device__ __forceinline__ void tile_vector(const T *__restrict__ in, T *__restrict__ out,
                                            uint4 *smq, uint64_t rows, uint64_t cols, uint64_t r0,
                                            uint64_t c0)
{
    constexpr unsigned W = 16 / sizeof(T);
    constexpr unsigned G = TILE / W;                  /* granules per tile row */
    constexpr int LOADS = TILE * G / THREADS;         /* 16-byte loads per thread */
    constexpr int SUBS = G * G / THREADS;             /* W x W sub-tiles per thread */
    static_assert(LOADS * THREADS == TILE * G && SUBS * THREADS == G * G, "even split");
    static_assert(G >= 8, "the swizzle XORs granule indices with 0..7");
    const unsigned t = threadIdx.x;
    uint4 v[LOADS];
#pragma unroll
    for (int k = 0; k < LOADS; k++) {
        unsigned i = t + (unsigned)k * THREADS, y = i / G, g = i % G;
        v[k] = *reinterpret_cast<const uint4 *>(in + (r0 + y) * cols + c0 + g * W);
    }
#pragma unroll
    for (int k = 0; k < LOADS; k++) {
        unsigned i = t + (unsigned)k * THREADS, y = i / G, g = i % G;
        smq[y * G + (g ^ ((y / W) & 7u))] = v[k];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < SUBS; k++) {
        unsigned s = t + (unsigned)k * THREADS;
        unsigned gr = s % G; /* input rows gr*W .. gr*W + W - 1 */
        unsigned gc = s / G; /* input columns gc*W .. gc*W + W - 1 */
        granule<T> a[W], o;
#pragma unroll
        for (unsigned i = 0; i < W; i++)
            a[i].q = smq[(gr * W + i) * G + (gc ^ (gr & 7u))];
#pragma unroll
        for (unsigned j = 0; j < W; j++) {
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                o.e[i] = a[i].e[j];
            *reinterpret_cast<uint4 *>(out + (c0 + gc * W + j) * rows + r0 + gr * W) = o.q;
        }
    }
}

template <typename T, bool VEC>
__global__ void __launch_bounds__(vec16_cfg<T>::THREADS, vec16_cfg<T>::MIN_BLOCKS)
    vec16_kernel(const T *__restrict__ in, T *__restrict__ out, uint64_t rows, uint64_t cols,
                 uint64_t tcols, uint64_t ntiles)
{
    constexpr int TILE = vec16_cfg<T>::TILE, THREADS = vec16_cfg<T>::THREADS;
    __shared__ uint4 smq[TILE * TILE * sizeof(T) / 16];
    T *sm = reinterpret_cast<T *>(smq);
    for (uint64_t b = blockIdx.x; b < ntiles; b += gridDim.x) { /* b is the same for the block */
        uint64_t r0 = (b / tcols) * TILE, c0 = (b % tcols) * TILE;
        if (VEC && r0 + TILE <= rows && c0 + TILE <= cols)
            tile_vector<T, TILE, THREADS>(in, out, smq, rows, cols, r0, c0);
        else
            tile_scalar<T, TILE, THREADS, VEC>(in, out, sm, rows, cols, r0, c0);
        __syncthreads(); /* the next tile overwrites this one */
    }
}

/* ---- vec16-pipe: vec16 with the next tile's loads in flight -----------------
 * A grid of at most PIPE_BLOCKS blocks per multiprocessor loops over the
 * tiles.  While a block writes tile b out of shared memory, its 16-byte loads
 * of tile b + gridDim.x are already in flight into registers, so a block
 * never waits for a whole tile's loads after its first.  Same tiles, layout,
 * swizzle and edge handling as vec16 (aligned shapes only: the launcher runs
 * vec16's element path otherwise).
 * ------------------------------------------------------------------------ */
template <typename T, int TILE, int THREADS, int LOADS>
__device__ __forceinline__ void vec_load(const T *__restrict__ in, uint4 (&v)[LOADS],
                                         uint64_t cols, uint64_t r0, uint64_t c0)
{
    constexpr unsigned W = 16 / sizeof(T), G = TILE / W;
    const unsigned t = threadIdx.x;
#pragma unroll
    for (int k = 0; k < LOADS; k++) {
        unsigned i = t + (unsigned)k * THREADS, y = i / G, g = i % G;
        v[k] = *reinterpret_cast<const uint4 *>(in + (r0 + y) * cols + c0 + g * W);
    }
}

template <typename T>
__global__ void __launch_bounds__(vec16_cfg<T>::THREADS, vec16_cfg<T>::PIPE_BLOCKS)
    vec16_pipe_kernel(const T *__restrict__ in, T *__restrict__ out, uint64_t rows, uint64_t cols,
                      uint64_t tcols, uint64_t ntiles)
{
    constexpr int TILE = vec16_cfg<T>::TILE, THREADS = vec16_cfg<T>::THREADS;
    constexpr unsigned W = 16 / sizeof(T), G = TILE / W;
    constexpr int LOADS = TILE * G / THREADS, SUBS = G * G / THREADS;
    static_assert(LOADS * THREADS == TILE * G && SUBS * THREADS == G * G, "even split");
    __shared__ uint4 smq[TILE * G];
    T *sm = reinterpret_cast<T *>(smq);
    const unsigned t = threadIdx.x;
    uint4 v[LOADS];
    uint64_t b = blockIdx.x; /* the same for the whole block */
    if (b < ntiles) {
        uint64_t r0 = (b / tcols) * TILE, c0 = (b % tcols) * TILE;
        if (r0 + TILE <= rows && c0 + TILE <= cols)
            vec_load<T, TILE, THREADS, LOADS>(in, v, cols, r0, c0);
    }
    for (; b < ntiles; b += gridDim.x) {
        uint64_t r0 = (b / tcols) * TILE, c0 = (b % tcols) * TILE;
        uint64_t nb = b + gridDim.x;
        uint64_t nr0 = (nb / tcols) * TILE, nc0 = (nb % tcols) * TILE;
        bool next_full = nb < ntiles && nr0 + TILE <= rows && nc0 + TILE <= cols;
        if (r0 + TILE <= rows && c0 + TILE <= cols) {
            /* v holds tile b (loaded before the loop or by the last round). */
#pragma unroll
            for (int k = 0; k < LOADS; k++) {
                unsigned i = t + (unsigned)k * THREADS, y = i / G, g = i % G;
                smq[y * G + (g ^ ((y / W) & 7u))] = v[k];
            }
            __syncthreads();
            if (next_full)
                vec_load<T, TILE, THREADS, LOADS>(in, v, cols, nr0, nc0);
#pragma unroll
            for (int k = 0; k < SUBS; k++) {
                unsigned s = t + (unsigned)k * THREADS;
                unsigned gr = s % G, gc = s / G;
                granule<T> a[W], o;
#pragma unroll
                for (unsigned i = 0; i < W; i++)
                    a[i].q = smq[(gr * W + i) * G + (gc ^ (gr & 7u))];
#pragma unroll
                for (unsigned j = 0; j < W; j++) {
#pragma unroll
                    for (unsigned i = 0; i < W; i++)
                        o.e[i] = a[i].e[j];
                    *reinterpret_cast<uint4 *>(out + (c0 + gc * W + j) * rows + r0 + gr * W) =
                        o.q;
                }
            }
        } else {
            tile_scalar<T, TILE, THREADS, true>(in, out, sm, rows, cols, r0, c0);
            /* v is written again before any later use, but the compiler
               cannot see it (the next round's test is its own): overwriting
               it here ends its old value's life before the element path, so
               that it does not hold registers there. */
#pragma unroll
            for (int k = 0; k < LOADS; k++)
                v[k] = make_uint4(0, 0, 0, 0);
            if (next_full)
                vec_load<T, TILE, THREADS, LOADS>(in, v, cols, nr0, nc0);
        }
        __syncthreads(); /* the next tile overwrites this one */
    }
}

/* ---- launchers ------------------------------------------------------------- */

template <typename T>
int launch_naive(kbt_state *s, kb_host *host, bool mirror)
{
    cudaStream_t st = (cudaStream_t)host->stream;
    dim3 block((unsigned)s->block_x, (unsigned)s->block_y);
    const T *in = static_cast<const T *>(s->in.dev);
    T *out = static_cast<T *>(s->out.dev);
    if (!mirror) {
        uint64_t bcols = kbt_ceil_div(s->cols, block.x);
        uint64_t nb = bcols * kbt_ceil_div(s->rows, block.y);
        naive_kernel<T><<<grid_of(nb), block, 0, st>>>(in, out, s->rows, s->cols, bcols, nb);
        KBK_CUDA_LAUNCH(host, "naive_kernel");
    } else {
        uint64_t brows = kbt_ceil_div(s->rows, block.x);
        uint64_t nb = brows * kbt_ceil_div(s->cols, block.y);
        naive_mirror_kernel<T><<<grid_of(nb), block, 0, st>>>(in, out, s->rows, s->cols, brows, nb);
        KBK_CUDA_LAUNCH(host, "naive_mirror_kernel");
    }
    return KB_OK;
}

template <typename T, int LAYOUT>
int launch_smem(kbt_state *s, kb_host *host)
{
    uint64_t bcols = kbt_ceil_div(s->cols, 32);
    uint64_t nb = bcols * kbt_ceil_div(s->rows, 32);
    smem_kernel<T, LAYOUT><<<grid_of(nb), dim3(32, 32), 0, (cudaStream_t)host->stream>>>(
        static_cast<const T *>(s->in.dev), static_cast<T *>(s->out.dev), s->rows, s->cols, bcols,
        nb);
    KBK_CUDA_LAUNCH(host, "smem_kernel");
    return KB_OK;
}

template <typename T, int N>
int launch_reg(kbt_state *s, kb_host *host)
{
    dim3 block((unsigned)s->block_x, (unsigned)s->block_y);
    uint64_t bcols = kbt_ceil_div(s->cols, (uint64_t)block.x * N);
    uint64_t nb = bcols * kbt_ceil_div(s->rows, (uint64_t)block.y * N);
    int aligned = s->rows % N == 0 && s->cols % N == 0;
    reg_kernel<T, N><<<grid_of(nb), block, 0, (cudaStream_t)host->stream>>>(
        static_cast<const T *>(s->in.dev), static_cast<T *>(s->out.dev), s->rows, s->cols, bcols,
        nb, aligned);
    KBK_CUDA_LAUNCH(host, "reg_kernel");
    return KB_OK;
}

template <typename T>
int launch_vec16(kbt_state *s, kb_host *host)
{
    constexpr int TILE = vec16_cfg<T>::TILE, THREADS = vec16_cfg<T>::THREADS;
    constexpr uint64_t W = 16 / sizeof(T);
    uint64_t tcols = kbt_ceil_div(s->cols, TILE);
    uint64_t nt = tcols * kbt_ceil_div(s->rows, TILE);
    const T *in = static_cast<const T *>(s->in.dev);
    T *out = static_cast<T *>(s->out.dev);
    cudaStream_t st = (cudaStream_t)host->stream;
    if (s->rows % W == 0 && s->cols % W == 0) {
        vec16_kernel<T, true><<<grid_of(nt), THREADS, 0, st>>>(in, out, s->rows, s->cols, tcols, nt);
        KBK_CUDA_LAUNCH(host, "vec16_kernel (16-byte path)");
    } else {
        vec16_kernel<T, false><<<grid_of(nt), THREADS, 0, st>>>(in, out, s->rows, s->cols, tcols,
                                                                nt);
        KBK_CUDA_LAUNCH(host, "vec16_kernel (element path)");
    }
    return KB_OK;
}

template <typename T>
int launch_vec16_pipe(kbt_state *s, kb_host *host)
{
    constexpr int TILE = vec16_cfg<T>::TILE, THREADS = vec16_cfg<T>::THREADS;
    constexpr uint64_t W = 16 / sizeof(T);
    if (s->rows % W != 0 || s->cols % W != 0)
        return launch_vec16<T>(s, host); /* the element path: nothing to pipeline */
    uint64_t tcols = kbt_ceil_div(s->cols, TILE);
    uint64_t nt = tcols * kbt_ceil_div(s->rows, TILE);
    uint64_t cap = (uint64_t)(s->sm_count > 0 ? s->sm_count : 1) * vec16_cfg<T>::PIPE_BLOCKS;
    vec16_pipe_kernel<T><<<grid_of(nt < cap ? nt : cap), THREADS, 0, (cudaStream_t)host->stream>>>(
        static_cast<const T *>(s->in.dev), static_cast<T *>(s->out.dev), s->rows, s->cols, tcols,
        nt);
    KBK_CUDA_LAUNCH(host, "vec16_pipe_kernel");
    return KB_OK;
}

} /* namespace */

/* ---- the run entries --------------------------------------------------------- */

#define KBT_DISPATCH(s, call3)                                                                \
    do {                                                                                      \
        if ((s)->esize == 4)                                                                  \
            return call3(uint32_t);                                                           \
        if ((s)->esize == 8)                                                                  \
            return call3(uint64_t);                                                           \
        return call3(uint16_t);                                                               \
    } while (0)

extern "C" int kbt_run_naive(kbt_state *s, const kbt_impl *, kb_host *host)
{
#define CALL(T) launch_naive<T>(s, host, false)
    KBT_DISPATCH(s, CALL);
#undef CALL
}

extern "C" int kbt_run_naive_mirror(kbt_state *s, const kbt_impl *, kb_host *host)
{
#define CALL(T) launch_naive<T>(s, host, true)
    KBT_DISPATCH(s, CALL);
#undef CALL
}

extern "C" int kbt_run_smem(kbt_state *s, const kbt_impl *, kb_host *host)
{
#define CALL(T) launch_smem<T, 0>(s, host)
    KBT_DISPATCH(s, CALL);
#undef CALL
}

extern "C" int kbt_run_smem_padded(kbt_state *s, const kbt_impl *, kb_host *host)
{
#define CALL(T) launch_smem<T, 1>(s, host)
    KBT_DISPATCH(s, CALL);
#undef CALL
}

extern "C" int kbt_run_smem_swizzled(kbt_state *s, const kbt_impl *, kb_host *host)
{
#define CALL(T) launch_smem<T, 2>(s, host)
    KBT_DISPATCH(s, CALL);
#undef CALL
}

extern "C" int kbt_run_reg4(kbt_state *s, const kbt_impl *, kb_host *host)
{
#define CALL(T) launch_reg<T, 4>(s, host)
    KBT_DISPATCH(s, CALL);
#undef CALL
}

extern "C" int kbt_run_reg2(kbt_state *s, const kbt_impl *, kb_host *host)
{
#define CALL(T) launch_reg<T, 2>(s, host)
    KBT_DISPATCH(s, CALL);
#undef CALL
}

extern "C" int kbt_run_vec16(kbt_state *s, const kbt_impl *, kb_host *host)
{
#define CALL(T) launch_vec16<T>(s, host)
    KBT_DISPATCH(s, CALL);
#undef CALL
}

extern "C" int kbt_run_vec16_pipe(kbt_state *s, const kbt_impl *, kb_host *host)
{
#define CALL(T) launch_vec16_pipe<T>(s, host)
    KBT_DISPATCH(s, CALL);
#undef CALL
}

/* The ceiling: the same bytes copied device to device, in order. */
extern "C" int kbt_run_copy(kbt_state *s, const kbt_impl *, kb_host *host)
{
    KBK_CUDA(host, cudaMemcpyAsync(s->out.dev, s->in.dev, s->in.bytes, cudaMemcpyDeviceToDevice,
                                   (cudaStream_t)host->stream));
    return KB_OK;
}
