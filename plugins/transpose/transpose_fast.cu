/*
 * transpose_fast.cu -- the window and vec16-band variants: the tile code of
 * transpose_tile.cuh on the GPU, one tile per block in the order of the
 * `band` parameter, with plain or streaming (evict-first) stores.
 *
 *   window      every tile through the window path: 16-byte loads and
 *               stores at any shape (ragged rows included), element accesses
 *               only at the two ends of each output segment and past the
 *               input's end;
 *   vec16-band  full tiles of a matrix whose rows and cols are multiples of
 *               the 16-byte chunk through vec16's vector tile, every other
 *               tile (edges, ragged shapes) through the window path;
 *   window-hoist, vec16-band-hoist
 *               the same with the hoisted tile code (transpose_tile.cuh,
 *               "the hoisted paths"): the same accesses, the per-job index
 *               arithmetic worked out once per tile;
 *   ragged      every tile through the ragged path (transpose_tile.cuh):
 *               a warp takes 16 to 32 chunks of one row, so that ragged rows
 *               cost few extra cache lines; its own tile and launch below.
 *
 * Launch (all but ragged): TILE x TILE tiles, THREADS threads (kbt_tile_cfg), a block per
 * tile up to 2^31 - 1 blocks (blocks loop past that), static shared memory
 * of TILE * TILE * sizeof(T) bytes.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "transpose.h"
#include "transpose_tile.cuh"

namespace {

/* The GPU's memory model for the tile code.  Loads: 16-byte read-only
   loads (LDG.128 through the non-coherent path: the input is never written
   while a kernel runs).  Stores: plain, or with the .cs (streaming,
   evict-first) hint when STREAM is set, so that written lines leave L2
   first. */
/* `@q st.global<SUFFIX> [p], VALUE` with q = c: the store happens when c is
   set (p, c and the value operands are the caller's). */
#define KBT_ST_IF(SUFFIX, VALUE, ...)                                                          \
    asm volatile("{\n .reg .pred q;\n setp.ne.u32 q, %1, 0;\n @q st.global" SUFFIX           \
                 " [%0], " VALUE ";\n}" ::"l"(p), "r"((unsigned)c), __VA_ARGS__)

template <bool STREAM> struct dev_mem {
    template <typename T> static __device__ __forceinline__ uint4 ld16(const T *p)
    {
        return __ldg(reinterpret_cast<const uint4 *>(p));
    }
    template <typename T> static __device__ __forceinline__ T ld1(const T *p) { return __ldg(p); }
    template <typename T> static __device__ __forceinline__ void st16(T *p, uint4 v)
    {
        if (STREAM)
            asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x),
                         "r"(v.y), "r"(v.z), "r"(v.w));
        else
            *reinterpret_cast<uint4 *>(p) = v;
    }
    template <typename T> static __device__ __forceinline__ void st1(T *p, T v)
    {
        if (STREAM)
            st1_cs(p, v);
        else
            *p = v;
    }
    /* Predicated stores (one instruction each, no branch): the ragged
       path's full tiles mix whole and partial chunks within a warp. */
    template <typename T> static __device__ __forceinline__ void st16_if(T *p, uint4 v, bool c)
    {
        if (STREAM)
            KBT_ST_IF(".cs.v4.u32", "{%2, %3, %4, %5}", "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
        else
            KBT_ST_IF(".v4.u32", "{%2, %3, %4, %5}", "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
    }
    static __device__ __forceinline__ void st1_if(uint32_t *p, uint32_t v, bool c)
    {
        if (STREAM)
            KBT_ST_IF(".cs.u32", "%2", "r"(v));
        else
            KBT_ST_IF(".u32", "%2", "r"(v));
    }
    static __device__ __forceinline__ void st1_if(uint64_t *p, uint64_t v, bool c)
    {
        if (STREAM)
            KBT_ST_IF(".cs.u64", "%2", "l"(v));
        else
            KBT_ST_IF(".u64", "%2", "l"(v));
    }
    static __device__ __forceinline__ void st1_if(uint16_t *p, uint16_t v, bool c)
    {
        if (STREAM)
            KBT_ST_IF(".cs.u16", "%2", "h"(v));
        else
            KBT_ST_IF(".u16", "%2", "h"(v));
    }
    template <typename T> static __device__ __forceinline__ void sts(T *sm, unsigned i, T v, int)
    {
        sm[i] = v;
    }
    template <typename T> static __device__ __forceinline__ T lds(const T *sm, unsigned i, int)
    {
        return sm[i];
    }
    static __device__ __forceinline__ void sts16(uint4 *sm, unsigned i, uint4 v, int) { sm[i] = v; }
    static __device__ __forceinline__ uint4 lds16(const uint4 *sm, unsigned i, int) { return sm[i]; }

  private:
    /* The .cs stores written out, without the "memory" clobber of __stcs:
       nothing in a kernel reads the output, so the compiler may schedule
       them freely (with the clobber, u16's vec16-band spilled 16 bytes). */
    static __device__ __forceinline__ void st1_cs(uint32_t *p, uint32_t v)
    {
        asm volatile("st.global.cs.u32 [%0], %1;" ::"l"(p), "r"(v));
    }
    static __device__ __forceinline__ void st1_cs(uint64_t *p, uint64_t v)
    {
        asm volatile("st.global.cs.u64 [%0], %1;" ::"l"(p), "l"(v));
    }
    static __device__ __forceinline__ void st1_cs(uint16_t *p, uint16_t v)
    {
        asm volatile("st.global.cs.u16 [%0], %1;" ::"l"(p), "h"(v));
    }
};

/* One kernel for the four variants: VEC takes full tiles of an aligned
   matrix through the vector path (vec16-band), otherwise every tile goes
   through the window path (window); HOIST picks the hoisted tile code
   (window-hoist, vec16-band-hoist). */
template <typename T, bool VEC, bool HOIST, bool STREAM>
__global__ void __launch_bounds__(kbt_tile_cfg<T>::THREADS, kbt_tile_cfg<T>::MIN_BLOCKS)
    tiles_kernel(const T *__restrict__ in, T *__restrict__ out, const kbt_geom g)
{
    typedef kbt_shape<T> S;
    typedef dev_mem<STREAM> M;
    __shared__ uint4 smq[S::SMEM_Q];
    T *sm = reinterpret_cast<T *>(smq);
    const unsigned t = threadIdx.x;
    for (uint64_t b = blockIdx.x; b < g.ntiles; b += gridDim.x) { /* the same for the block */
        uint64_t r0, c0;
        if (HOIST)
            kbt_tile_of_fast<S::TILE>(g, b, r0, c0);
        else
            kbt_tile_of<S::TILE>(g, b, r0, c0);
        if (VEC && g.aligned && r0 + S::TILE <= g.rows && c0 + S::TILE <= g.cols) {
            if (HOIST)
                kbt_vech_in<T, M>(t, in, smq, g, r0, c0);
            else
                kbt_vec_in<T, M>(t, in, smq, g, r0, c0);
            __syncthreads();
            if (HOIST)
                kbt_vech_out<T, M>(t, out, smq, g, r0, c0);
            else
                kbt_vec_out<T, M>(t, out, smq, g, r0, c0);
        } else if (HOIST) {
            kbt_windowh_in<T, M>(t, in, sm, g, r0, c0);
            __syncthreads();
            kbt_windowh_out<T, M>(t, out, sm, g, r0, c0);
        } else {
            kbt_window_in<T, M>(t, in, sm, g, r0, c0);
            __syncthreads();
            kbt_window_out<T, M>(t, out, sm, g, r0, c0);
        }
        __syncthreads(); /* the next tile overwrites this one */
    }
}

template <typename T, bool VEC, bool HOIST>
int launch_tiles(kbt_state *s, kb_host *host, const char *name)
{
    const T *in = static_cast<const T *>(s->in.dev);
    T *out = static_cast<T *>(s->out.dev);
    /* The 16-byte accesses need 16-byte aligned matrices; cudaMalloc gives
       256 bytes, so this only guards against a future caller. */
    if (((uintptr_t)in | (uintptr_t)out) % 16 != 0)
        return host->fail(host, KB_EUNSUPPORTED,
                          "transpose: %s needs 16-byte aligned input and output buffers", name);
    kbt_geom g = kbt_geom_make<T>(s->rows, s->cols, s->band);
    unsigned grid = (unsigned)(g.ntiles < KBT_MAX_GRID ? g.ntiles : KBT_MAX_GRID);
    cudaStream_t st = (cudaStream_t)host->stream;
    if (s->streaming)
        tiles_kernel<T, VEC, HOIST, true><<<grid, kbt_tile_cfg<T>::THREADS, 0, st>>>(in, out, g);
    else
        tiles_kernel<T, VEC, HOIST, false><<<grid, kbt_tile_cfg<T>::THREADS, 0, st>>>(in, out, g);
    KBK_CUDA_LAUNCH(host, name);
    return KB_OK;
}

/* ragged: the ragged path of transpose_tile.cuh for every tile, in band
   order, one tile per block (a grid-stride loop past 2^31 - 1 tiles); its
   tile (TR x TC elements of kbt_ragged_cfg: 32 KiB for every dtype) lives in
   dynamic shared memory, its size set per launch (so that a larger tile
   past the 48 KiB of a static array needs no other change). */
template <typename T, bool STREAM>
__global__ void __launch_bounds__(kbt_ragged_cfg<T>::THREADS, kbt_ragged_cfg<T>::MIN_BLOCKS)
    ragged_kernel(const T *__restrict__ in, T *__restrict__ out, const kbt_geom g)
{
    typedef kbt_rshape<T> S;
    typedef dev_mem<STREAM> M;
    extern __shared__ uint4 rsmq[];
    T *sm = reinterpret_cast<T *>(rsmq);
    const unsigned t = threadIdx.x;
    for (uint64_t b = blockIdx.x; b < g.ntiles; b += gridDim.x) { /* the same for the block */
        uint64_t r0, c0;
        kbt_ragged_tile<T>(g, b, r0, c0);
        const bool full = kbt_ragged_full<T>(g, r0, c0); /* the same for the block */
        kbt_ragged_in<T, M>(full, t, in, sm, g, r0, c0);
        __syncthreads();
        kbt_ragged_out<T, M>(full, t, out, sm, g, r0, c0);
        __syncthreads(); /* the next tile overwrites this one */
    }
}

template <typename T, bool STREAM> int launch_ragged_as(kbt_state *s, kb_host *host, const kbt_geom &g)
{
    typedef kbt_rshape<T> S;
    const T *in = static_cast<const T *>(s->in.dev);
    T *out = static_cast<T *>(s->out.dev);
    unsigned grid = (unsigned)(g.ntiles < KBT_MAX_GRID ? g.ntiles : KBT_MAX_GRID);
    KBK_CUDA(host, cudaFuncSetAttribute(ragged_kernel<T, STREAM>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)S::SMEM_BYTES));
    ragged_kernel<T, STREAM><<<grid, S::THREADS, S::SMEM_BYTES, (cudaStream_t)host->stream>>>(in, out, g);
    KBK_CUDA_LAUNCH(host, "ragged_kernel");
    return KB_OK;
}

template <typename T> int launch_ragged(kbt_state *s, kb_host *host)
{
    if (((uintptr_t)s->in.dev | (uintptr_t)s->out.dev) % 16 != 0)
        return host->fail(host, KB_EUNSUPPORTED,
                          "transpose: ragged needs 16-byte aligned input and output buffers");
    kbt_geom g = kbt_ragged_geom<T>(s->rows, s->cols, s->band);
    if (s->streaming)
        return launch_ragged_as<T, true>(s, host, g);
    return launch_ragged_as<T, false>(s, host, g);
}

} /* namespace */

extern "C" int kbt_run_window(kbt_state *s, const kbt_impl *, kb_host *host)
{
    if (s->esize == 4)
        return launch_tiles<uint32_t, false, false>(s, host, "window tiles_kernel");
    if (s->esize == 8)
        return launch_tiles<uint64_t, false, false>(s, host, "window tiles_kernel");
    return launch_tiles<uint16_t, false, false>(s, host, "window tiles_kernel");
}

extern "C" int kbt_run_vec16_band(kbt_state *s, const kbt_impl *, kb_host *host)
{
    if (s->esize == 4)
        return launch_tiles<uint32_t, true, false>(s, host, "vec16-band tiles_kernel");
    if (s->esize == 8)
        return launch_tiles<uint64_t, true, false>(s, host, "vec16-band tiles_kernel");
    return launch_tiles<uint16_t, true, false>(s, host, "vec16-band tiles_kernel");
}

extern "C" int kbt_run_window_hoist(kbt_state *s, const kbt_impl *, kb_host *host)
{
    if (s->esize == 4)
        return launch_tiles<uint32_t, false, true>(s, host, "window-hoist tiles_kernel");
    if (s->esize == 8)
        return launch_tiles<uint64_t, false, true>(s, host, "window-hoist tiles_kernel");
    return launch_tiles<uint16_t, false, true>(s, host, "window-hoist tiles_kernel");
}

extern "C" int kbt_run_vec16_band_hoist(kbt_state *s, const kbt_impl *, kb_host *host)
{
    if (s->esize == 4)
        return launch_tiles<uint32_t, true, true>(s, host, "vec16-band-hoist tiles_kernel");
    if (s->esize == 8)
        return launch_tiles<uint64_t, true, true>(s, host, "vec16-band-hoist tiles_kernel");
    return launch_tiles<uint16_t, true, true>(s, host, "vec16-band-hoist tiles_kernel");
}

extern "C" int kbt_run_ragged(kbt_state *s, const kbt_impl *, kb_host *host)
{
    if (s->esize == 4)
        return launch_ragged<uint32_t>(s, host);
    if (s->esize == 8)
        return launch_ragged<uint64_t>(s, host);
    return launch_ragged<uint16_t>(s, host);
}
