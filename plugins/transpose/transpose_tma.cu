/*
 * transpose_tma.cu -- the tma variant: the Tensor Memory Accelerator (TMA)
 * copies tiles of the input into shared memory and the transposed tiles out
 * of it, in a persistent grid with a ring of stages guarded by mbarriers.
 * Built for sm_90a alone (plugins/transpose/CMakeLists.txt); prepare()
 * skips the variant on any device that is not compute capability 9.0.
 *
 * Why: the family's best kernels move every byte through registers with
 * 16-byte loads and stores issued by every thread, and stop at 96-97% of the
 * copy.  Here one thread issues a tile's loads (cp.async.bulk.tensor, a few
 * instructions per 16 KiB) STAGES tiles ahead, so the loads of the next
 * tiles are in flight while the current one is transposed; another issues
 * its stores (cp.async.bulk.tensor from shared memory), which drain while
 * the next tile is transposed.  The four consumer warps only move data
 * between two shared-memory tiles (16-byte LDS and STS, a W x W register
 * transpose in between), so few instructions touch global memory.
 *
 * Shapes: TMA needs every row of a global tensor to start a multiple of 16
 * bytes after the one before (cols * esize for the input, rows * esize for
 * the output).  When either breaks that (8191 x 8193, any odd shape in f32),
 * the variant runs the family's ragged kernel instead (kbt_run_ragged) and
 * says so at debug level; README.md's summary says so too.  At aligned
 * strides every shape >= 1 runs here: a box that sticks out of the matrix
 * is zero-filled on load and clipped on store, and boxes that lie wholly
 * outside are not issued at all (their bytes are not expected by the
 * barrier; the stale shared data they would have replaced lands only in
 * places that are clipped on the way out).
 *
 * The tile, the shared-memory layout (TMA's 128-byte swizzle on both the
 * load and the store boxes) and the conflict-free cut into sub-blocks are
 * transpose_tma.h's, where the host test checks them.
 *
 * The block: warp 0 is the producer (lane 0 issues the loads; the other
 * lanes idle), warps 1-4 the consumers.  Shared memory holds STAGES input
 * tiles (the ring: full[s] completes when the loads' bytes have landed,
 * empty[s] when the four consumer warps have read the stage) and OUT_BUFS
 * output tiles.  Per tile, the consumers:
 *   1. wait until the store that last used this output tile has finished
 *      reading it (cp.async.bulk.wait_group.read, by the thread that issues
 *      the stores, then a named barrier of the 128 consumers);
 *   2. wait for full[s], transpose the stage into the output tile, release
 *      the stage (one arrival per warp on empty[s]);
 *   3. fence their shared writes for the async proxy, meet at the barrier,
 *      and consumer 0 issues the tile's store boxes as one bulk group (with
 *      streaming = 1, an L2 evict-first policy: written lines leave first).
 * Two blocks fit on a multiprocessor (96 KiB each), so one block's barriers
 * overlap the other's copies.
 *
 * A wait on an mbarrier that lasts 2^35 clock cycles (about 17 s) means a
 * lost transaction or arrival: the kernel traps (a launch error the host
 * reports) instead of hanging the process.
 */
#include <cuda.h>         /* CUtensorMap and the driver's enums: types only, no libcuda */
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kbench/kit_tma.cuh" /* mbarriers and TMA loads; kbk_mbar_wait traps on a hang */
#include "transpose.h"
#include "transpose_tma.h"

namespace {

/* ---- tuning constants ------------------------------------------------------ */

/* Input tiles in flight per block: 4 x 16 KiB, and with two blocks per
   multiprocessor 128 KiB of loads may be outstanding per SM, several times
   what the DRAM's latency needs at the copy's rate (about 36 bytes/ns per
   SM on an H200). */
constexpr int TMA_STAGES = 4;
/* Output tiles: one being written by the consumers while the other drains
   to global memory. */
constexpr int TMA_OUT_BUFS = 2;
/* One producer warp and four consumer warps. */
constexpr int TMA_THREADS = 32 + KBT_TMA_CONSUMERS;
constexpr int TMA_MIN_BLOCKS = 2;
/* The swizzle's period: every box starts on it. */
constexpr uint32_t TMA_ALIGN = 1024;
constexpr size_t TMA_SMEM = (size_t)(TMA_STAGES + TMA_OUT_BUFS) * KBT_TMA_TILE_BYTES + TMA_ALIGN;
/* The consumers' named barrier (0 is __syncthreads'). */
constexpr int TMA_CONSUMER_BAR = 1;

static_assert(TMA_SMEM * TMA_MIN_BLOCKS <= 232448, "two blocks must fit a multiprocessor");

/* ---- PTX wrappers ---------------------------------------------------------- */

/* The mbarrier, TMA-load and address wrappers both Hopper kernels of the
   repository use are the kit's (kbench/kit_tma.cuh); these are this file's own. */

/* A 2-D box from shared memory at src to (c0, c1) of the map's tensor, in
   the current bulk group; STREAM adds an L2 cache policy (evict-first). */
template <bool STREAM>
__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, uint32_t src, int c0, int c1,
                                             uint64_t policy)
{
    if (STREAM)
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint"
                     " [%0, {%1, %2}], [%3], %4;" ::"l"(reinterpret_cast<uint64_t>(map)),
                     "r"(c0), "r"(c1), "r"(src), "l"(policy)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
                     " [%0, {%1, %2}], [%3];" ::"l"(reinterpret_cast<uint64_t>(map)),
                     "r"(c0), "r"(c1), "r"(src)
                     : "memory");
}

__device__ __forceinline__ uint64_t evict_first_policy()
{
    uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}

__device__ __forceinline__ void bulk_commit()
{
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/* Waits until at most N bulk groups still read shared memory. */
template <int N>
__device__ __forceinline__ void bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/* Waits until every bulk group is complete (its writes performed). */
__device__ __forceinline__ void bulk_wait_all()
{
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

/* Orders this thread's shared-memory writes before later accesses by the
   async proxy (the TMA store that reads them). */
__device__ __forceinline__ void fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void consumers_sync()
{
    asm volatile("bar.sync %0, %1;" ::"n"(TMA_CONSUMER_BAR), "n"(KBT_TMA_CONSUMERS) : "memory");
}

__device__ __forceinline__ void lds16(uint32_t a, uint32_t (&v)[4])
{
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                 : "r"(a)
                 : "memory");
}

__device__ __forceinline__ void sts16(uint32_t a, const uint32_t (&v)[4])
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v[0]), "r"(v[1]),
                 "r"(v[2]), "r"(v[3])
                 : "memory");
}

/* ---- the kernel ------------------------------------------------------------- */

/* Consumer thread t moves its sub-blocks of the stage at `in` into the
   output tile at `out` (shared addresses). */
template <int EB>
__device__ __forceinline__ void transpose_tile(unsigned t, uint32_t in, uint32_t out)
{
    constexpr unsigned W = 16 / EB;
#pragma unroll
    for (unsigned k = 0; k < kbt_tma_steps(EB); ++k) {
        unsigned rb, cb;
        kbt_tma_sub(EB, t, k, &rb, &cb);
        uint32_t v[W][4], o[W][4];
#pragma unroll
        for (unsigned j = 0; j < W; ++j)
            lds16(in + kbt_tma_in_off(EB, W * rb + j, cb), v[j]);
        kbt_tma_transpose_chunks(EB, v, o);
#pragma unroll
        for (unsigned j = 0; j < W; ++j)
            sts16(out + kbt_tma_out_off(W * cb + j, rb), o[j]);
    }
}

template <int EB, bool STREAM>
__global__ void __launch_bounds__(TMA_THREADS, TMA_MIN_BLOCKS)
    tma_kernel(const __grid_constant__ CUtensorMap in_map,
               const __grid_constant__ CUtensorMap out_map, const kbt_tma_geom g)
{
    constexpr unsigned R = 256 / EB, CB = KBT_TMA_ROW_BYTES / EB;
    constexpr unsigned NLOAD = KBT_TMA_COLS / CB, NSTORE = R / CB;
    constexpr uint32_t LOAD_BOX = R * KBT_TMA_ROW_BYTES, STORE_BOX = KBT_TMA_COLS * KBT_TMA_ROW_BYTES;
    __shared__ __align__(8) uint64_t full[TMA_STAGES];
    __shared__ __align__(8) uint64_t empty[TMA_STAGES];
    extern __shared__ uint8_t tma_smem_raw[];
    const uint32_t base = (kbk_smem_addr(tma_smem_raw) + (TMA_ALIGN - 1)) & ~(TMA_ALIGN - 1);
    const uint32_t out_base = base + TMA_STAGES * KBT_TMA_TILE_BYTES;

    if (threadIdx.x == 0) {
        for (int s = 0; s < TMA_STAGES; ++s) {
            kbk_mbar_init(kbk_smem_addr(&full[s]), 1);                            /* the producer */
            kbk_mbar_init(kbk_smem_addr(&empty[s]), KBT_TMA_CONSUMERS / 32);     /* each consumer warp */
        }
        kbk_mbar_fence_init();
        kbk_tma_prefetch_map(&in_map);
        kbk_tma_prefetch_map(&out_map);
    }
    __syncthreads();

    if (threadIdx.x < 32) {
        /* The producer: lane 0 keeps up to TMA_STAGES tiles' loads in flight. */
        if (threadIdx.x != 0)
            return;
        uint32_t it = 0;
        for (uint64_t b = blockIdx.x; b < g.ntiles; b += gridDim.x, ++it) {
            const uint32_t s = it % TMA_STAGES;
            kbk_mbar_wait(kbk_smem_addr(&empty[s]), ((it / TMA_STAGES) & 1u) ^ 1u);
            uint64_t tr, tc;
            kbt_tma_tile_of(&g, b, &tr, &tc);
            const uint64_t r0 = tr * R, c0 = tc * KBT_TMA_COLS;
            unsigned n = 1; /* box 0 starts inside the matrix; the others may not */
            while (n < NLOAD && c0 + n * CB < g.cols)
                ++n;
            const uint32_t bar = kbk_smem_addr(&full[s]), dst = base + s * KBT_TMA_TILE_BYTES;
            kbk_mbar_arrive_expect_tx(bar, n * LOAD_BOX);
            for (unsigned k = 0; k < n; ++k)
                kbk_tma_load_2d(dst + k * LOAD_BOX, &in_map, bar, (int)(c0 + k * CB), (int)r0);
        }
        return;
    }

    /* The consumers. */
    const unsigned t = threadIdx.x - 32, lane = threadIdx.x % 32;
    const uint64_t policy = STREAM ? evict_first_policy() : 0;
    uint32_t it = 0;
    for (uint64_t b = blockIdx.x; b < g.ntiles; b += gridDim.x, ++it) {
        const uint32_t s = it % TMA_STAGES;
        const uint32_t ob = out_base + (it % TMA_OUT_BUFS) * KBT_TMA_TILE_BYTES;
        /* 1. The store that last read this output tile is done with it. */
        if (t == 0)
            bulk_wait_read<TMA_OUT_BUFS - 1>();
        consumers_sync();
        /* 2. The stage, transposed into the output tile, then released. */
        kbk_mbar_wait(kbk_smem_addr(&full[s]), (it / TMA_STAGES) & 1u);
        transpose_tile<EB>(t, base + s * KBT_TMA_TILE_BYTES, ob);
        __syncwarp();
        if (lane == 0)
            kbk_mbar_arrive(kbk_smem_addr(&empty[s]));
        /* 3. Every consumer's writes visible to TMA, then the store. */
        fence_proxy_async();
        consumers_sync();
        if (t == 0) {
            uint64_t tr, tc;
            kbt_tma_tile_of(&g, b, &tr, &tc);
            const uint64_t r0 = tr * R, c0 = tc * KBT_TMA_COLS;
            /* Store box k covers output columns r0 + k CB ..; the first
               always starts inside the output. */
            for (unsigned k = 0; k < NSTORE && r0 + k * CB < g.rows; ++k)
                tma_store_2d<STREAM>(&out_map, ob + k * STORE_BOX, (int)(r0 + k * CB), (int)c0,
                                     policy);
            bulk_commit();
        }
    }
    if (t == 0)
        bulk_wait_all(); /* the shared tiles stay until the last store has read them */
}

/* ---- the host side ------------------------------------------------------------ */

/* What prepare() builds for run(): the maps hold the buffers' addresses, so
   run() checks that they are still the state's. */
struct tma_data {
    CUtensorMap in_map;  /* 64-byte aligned: the struct is allocated so */
    CUtensorMap out_map;
    kbt_tma_geom g;
    const void *in;
    void *out;
    uint64_t rows, cols;
    size_t esize;
    unsigned grid;
    int fallback;        /* strides TMA cannot map: run the ragged kernel */
    int ready;           /* prepare() succeeded */
};

template <int EB, bool STREAM> int set_smem(kb_host *host)
{
    KBK_CUDA(host, cudaFuncSetAttribute(tma_kernel<EB, STREAM>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)TMA_SMEM));
    return KB_OK;
}

/* Raises the kernel's shared-memory limit and sizes the persistent grid:
   as many blocks as fit at once (two per multiprocessor), at most one per
   tile. */
template <int EB, bool STREAM> int size_grid(tma_data *d, int sms, kb_host *host)
{
    int rc = set_smem<EB, STREAM>(host);
    if (rc != KB_OK)
        return rc;
    int per_sm = 0;
    KBK_CUDA(host, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tma_kernel<EB, STREAM>,
                                                                 TMA_THREADS, TMA_SMEM));
    if (per_sm < 1)
        return host->fail(host, KB_EUNSUPPORTED,
                          "transpose: tma's block (%d threads, %zu bytes of shared memory) does "
                          "not fit a multiprocessor of this device",
                          TMA_THREADS, TMA_SMEM);
    uint64_t grid = (uint64_t)per_sm * (uint64_t)(sms > 0 ? sms : 1);
    d->grid = (unsigned)(grid < d->g.ntiles ? grid : d->g.ntiles);
    return KB_OK;
}

template <int EB> int size_grid_for(tma_data *d, int sms, int streaming, kb_host *host)
{
    return streaming ? size_grid<EB, true>(d, sms, host) : size_grid<EB, false>(d, sms, host);
}

/* One 2-D tensor map of a row-major matrix: inner x outer elements, rows
   pitch_bytes apart, boxes of one 128-byte row x box_outer, 128-byte
   swizzle, zeros outside.  promote: L2 promotion of the loads (256 bytes:
   a tile's load boxes are side by side). */
int encode_map(kb_host *host, PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap *map,
               size_t esize, const void *ptr, uint64_t inner, uint64_t outer, uint32_t box_outer,
               CUtensorMapL2promotion promote, const char *what)
{
    const CUtensorMapDataType type = esize == 8   ? CU_TENSOR_MAP_DATA_TYPE_UINT64
                                     : esize == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                                  : CU_TENSOR_MAP_DATA_TYPE_UINT16;
    const cuuint64_t dims[2] = {inner, outer};
    const cuuint64_t strides[1] = {inner * esize};
    const cuuint32_t box[2] = {(cuuint32_t)(KBT_TMA_ROW_BYTES / esize), box_outer};
    const cuuint32_t elem_strides[2] = {1, 1};
    const CUresult r = encode(map, type, 2, const_cast<void *>(ptr), dims, strides, box,
                              elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, promote,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return host->fail(host, KB_ECUDA,
                          "transpose: cuTensorMapEncodeTiled refused tma's %s map (%llu x %llu "
                          "elements, rows %llu bytes apart, box %u x %u): driver error %d",
                          what, (unsigned long long)inner, (unsigned long long)outer,
                          (unsigned long long)(inner * esize), (unsigned)box[0], box_outer,
                          (int)r);
    return KB_OK;
}

int build_maps(tma_data *d, kb_host *host)
{
    PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    int erc = kbk_tma_encoder(host, "transpose: tma", &encode);
    if (erc != KB_OK)
        return erc;
    const unsigned es = (unsigned)d->esize;
    /* The input: cols x rows (inner first), boxes of R rows.  The output:
       rows x cols, boxes of C rows (input columns). */
    int rc = encode_map(host, encode, &d->in_map, d->esize, d->in, d->cols, d->rows,
                        kbt_tma_rows(es), CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "input");
    if (rc != KB_OK)
        return rc;
    return encode_map(host, encode, &d->out_map, d->esize, d->out, d->rows, d->cols, KBT_TMA_COLS,
                      CU_TENSOR_MAP_L2_PROMOTION_NONE, "output");
}

template <int EB, bool STREAM> int launch(const tma_data *d, kb_host *host)
{
    tma_kernel<EB, STREAM><<<d->grid, TMA_THREADS, TMA_SMEM, (cudaStream_t)host->stream>>>(
        d->in_map, d->out_map, d->g);
    KBK_CUDA_LAUNCH(host, "tma_kernel");
    return KB_OK;
}

template <int EB> int launch_as(const tma_data *d, int streaming, kb_host *host)
{
    return streaming ? launch<EB, true>(d, host) : launch<EB, false>(d, host);
}

} // namespace

extern "C" int kbt_tma_prepare(kbt_state *s, kb_host *host)
{
    if (s->tma)
        static_cast<tma_data *>(s->tma)->ready = 0; /* run() refuses until this one succeeds */
    int dev = host->device, major = 0, minor = 0;
    if (dev < 0)
        KBK_CUDA(host, cudaGetDevice(&dev));
    KBK_CUDA(host, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    KBK_CUDA(host, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major != 9 || minor != 0)
        return host->fail(host, KB_EUNSUPPORTED,
                          "transpose: tma needs a compute capability 9.0 device (sm_90a); this "
                          "one is %d.%d",
                          major, minor);
    if (!s->tma) {
        void *p = nullptr;
        if (posix_memalign(&p, 64, sizeof(tma_data)) != 0)
            return host->fail(host, KB_ENOMEM, "transpose: tma could not allocate its %zu-byte "
                              "state", sizeof(tma_data));
        std::memset(p, 0, sizeof(tma_data));
        s->tma = p;
    }
    tma_data *d = static_cast<tma_data *>(s->tma);
    d->in = s->in.dev;
    d->out = s->out.dev;
    d->rows = s->rows;
    d->cols = s->cols;
    d->esize = s->esize;
    d->fallback = !kbt_tma_strides_ok(s->rows, s->cols, (unsigned)s->esize);
    if (d->fallback) {
        host->log(host, KB_LOG_DEBUG,
                  "transpose: tma: rows of %llu x %zu and %llu x %zu bytes are not all multiples "
                  "of 16 bytes, which TMA needs: the ragged kernel runs instead",
                  (unsigned long long)s->cols, s->esize, (unsigned long long)s->rows, s->esize);
        d->ready = 1;
        return KB_OK;
    }
    if (!d->in || !d->out || ((uintptr_t)d->in | (uintptr_t)d->out) % 16 != 0)
        return host->fail(host, KB_EFAIL,
                          "transpose: tma needs 16-byte aligned device copies of the input and "
                          "output (setup made none, or unaligned ones)");
    d->g = kbt_tma_geom_make(s->rows, s->cols, (unsigned)s->esize, s->band);
    int sms = host->sm_count;
    if (sms <= 0)
        KBK_CUDA(host, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    int rc = s->esize == 8   ? size_grid_for<8>(d, sms, s->streaming, host)
             : s->esize == 4 ? size_grid_for<4>(d, sms, s->streaming, host)
                             : size_grid_for<2>(d, sms, s->streaming, host);
    if (rc != KB_OK || (rc = build_maps(d, host)) != KB_OK)
        return rc;
    d->ready = 1;
    return KB_OK;
}

extern "C" int kbt_run_tma(kbt_state *s, const kbt_impl *impl, kb_host *host)
{
    const tma_data *d = static_cast<const tma_data *>(s->tma);
    if (!d || !d->ready)
        return host->fail(host, KB_EFAIL, "transpose: tma runs without its tensor maps "
                          "(kbt_tma_prepare did not succeed)");
    if (d->in != s->in.dev || d->out != s->out.dev || d->rows != s->rows || d->cols != s->cols ||
        d->esize != s->esize)
        return host->fail(host, KB_EFAIL, "transpose: tma's tensor maps were built for another "
                          "shape or other buffers");
    if (d->fallback)
        return kbt_run_ragged(s, impl, host);
    if (s->esize == 8)
        return launch_as<8>(d, s->streaming, host);
    if (s->esize == 4)
        return launch_as<4>(d, s->streaming, host);
    return launch_as<2>(d, s->streaming, host);
}

extern "C" void kbt_tma_teardown(kbt_state *s)
{
    std::free(s->tma);
    s->tma = nullptr;
}
