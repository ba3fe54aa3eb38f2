/*
 * reduce_kernels.cu -- the GPU variants of the reduce family, in the order of
 * the optimisation path: interleaved, interleaved-strided, sequential,
 * first-add, unroll-warp, unroll-complete, multi-element, shuffle, multipass,
 * onepass and onepass-atomic.
 *
 * Every kernel is a template on the accumulation type T: float, double, or
 * unsigned int for i32 (unsigned additions wrap modulo 2^32, so the i32 sum is
 * exact in any order).  Every variant leaves the final scalar on the device
 * (s->d_out): the classic ones relaunch themselves on their partial sums,
 * which ping-pong between s->d_ping and s->d_pong, until one block is left.
 * run() only enqueues on the host's stream; each launch is followed by
 * cudaGetLastError.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "reduce.h"

#define KBR_LAUNCH_CHECK(what)                                                                \
    do {                                                                                      \
        cudaError_t e_ = cudaGetLastError();                                                  \
        if (e_ != cudaSuccess)                                                                \
            return host->fail(host, KB_ECUDA, "reduce: launch of %s failed: %s", what,        \
                              cudaGetErrorString(e_));                                        \
    } while (0)

namespace {

/* ---- classic shared-memory trees (one value per block) ------------------- */

template <class T> __device__ T *shared_array()
{
    /* One dynamic shared buffer, viewed as T (the alignment of double). */
    extern __shared__ double kbr_smem[];
    return reinterpret_cast<T *>(kbr_smem);
}

/* interleaved: the tutorial baseline.  Half the threads of each warp idle at
   the first level and the `%` is slow, but it is the starting point. */
template <class T> __global__ void k_interleaved(const T *in, T *out, uint64_t n)
{
    T *sm = shared_array<T>();
    unsigned tid = threadIdx.x;
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + tid;
    sm[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0)
            sm[tid] += sm[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sm[0];
}

/* interleaved-strided: contiguous threads work, so warps do not diverge, but
   index 2*s*tid makes threads of a warp hit the same bank. */
template <class T> __global__ void k_interleaved_strided(const T *in, T *out, uint64_t n)
{
    T *sm = shared_array<T>();
    unsigned tid = threadIdx.x;
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + tid;
    sm[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        unsigned idx = 2 * s * tid;
        if (idx < blockDim.x)
            sm[idx] += sm[idx + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sm[0];
}

/* sequential: thread tid adds tid + s, s halving: consecutive words, no bank
   conflicts. */
template <class T> __device__ void tree_sequential(T *sm, unsigned tid, unsigned down_to)
{
    for (unsigned s = blockDim.x / 2; s > down_to; s >>= 1) {
        if (tid < s)
            sm[tid] += sm[tid + s];
        __syncthreads();
    }
}

template <class T> __global__ void k_sequential(const T *in, T *out, uint64_t n)
{
    T *sm = shared_array<T>();
    unsigned tid = threadIdx.x;
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + tid;
    sm[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    tree_sequential(sm, tid, 0);
    if (tid == 0)
        out[blockIdx.x] = sm[0];
}

/* first-add: each thread loads two elements a block apart and adds them, so
   no thread idles during the load and half as many blocks run. */
template <class T> __device__ T load_two(const T *in, uint64_t n)
{
    uint64_t i = (uint64_t)blockIdx.x * (2ull * blockDim.x) + threadIdx.x;
    T v = i < n ? in[i] : T(0);
    if (i + blockDim.x < n)
        v += in[i + blockDim.x];
    return v;
}

template <class T> __global__ void k_first_add(const T *in, T *out, uint64_t n)
{
    T *sm = shared_array<T>();
    unsigned tid = threadIdx.x;
    sm[tid] = load_two(in, n);
    __syncthreads();
    tree_sequential(sm, tid, 0);
    if (tid == 0)
        out[blockIdx.x] = sm[0];
}

/* The last warp's levels: one warp only, so __syncwarp orders its shared
   memory accesses (a volatile pointer alone is not enough since Volta's
   independent thread scheduling).  Each step reads, waits, then writes. */
template <class T> __device__ void warp_tail(T *sm, unsigned tid, unsigned top)
{
#pragma unroll
    for (unsigned s = 32; s > 0; s >>= 1) {
        if (s <= top) {
            /* With a block of 32, tid + s may pass the array: skip those. */
            T v = tid + s < blockDim.x ? sm[tid] + sm[tid + s] : sm[tid];
            __syncwarp();
            sm[tid] = v;
            __syncwarp();
        }
    }
}

/* unroll-warp: the tree stops at 64 threads with barriers; the last warp
   finishes with __syncwarp only. */
template <class T> __global__ void k_unroll_warp(const T *in, T *out, uint64_t n)
{
    T *sm = shared_array<T>();
    unsigned tid = threadIdx.x;
    sm[tid] = load_two(in, n);
    __syncthreads();
    tree_sequential(sm, tid, 32);
    if (tid < 32)
        warp_tail(sm, tid, blockDim.x / 2);
    if (tid == 0)
        out[blockIdx.x] = sm[0];
}

/* unroll-complete: the block size is a template parameter, so every level's
   test folds at compile time and the loop disappears. */
template <class T, unsigned BS> __device__ void tree_complete(T *sm, unsigned tid)
{
#pragma unroll
    for (unsigned s = BS / 2; s > 32; s >>= 1) {
        if (tid < s)
            sm[tid] += sm[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
#pragma unroll
        for (unsigned s = 32; s > 0; s >>= 1) {
            if (s <= BS / 2) {
                T v = tid + s < BS ? sm[tid] + sm[tid + s] : sm[tid];
                __syncwarp();
                sm[tid] = v;
                __syncwarp();
            }
        }
    }
}

template <class T, unsigned BS> __global__ void __launch_bounds__(BS)
    k_unroll_complete(const T *in, T *out, uint64_t n)
{
    T *sm = shared_array<T>();
    unsigned tid = threadIdx.x;
    sm[tid] = load_two(in, n);
    __syncthreads();
    tree_complete<T, BS>(sm, tid);
    if (tid == 0)
        out[blockIdx.x] = sm[0];
}

/* multi-element: a grid-stride loop lets a grid of a few blocks per SM read
   everything, each thread adding `items` elements per round, so the partial
   sums fit in one block and the whole reduction is two launches. */
template <class T, unsigned BS> __global__ void __launch_bounds__(BS)
    k_multi_element(const T *in, T *out, uint64_t n, unsigned items)
{
    T *sm = shared_array<T>();
    unsigned tid = threadIdx.x;
    T v = T(0);
    uint64_t step = (uint64_t)gridDim.x * BS * items;
    for (uint64_t base = (uint64_t)blockIdx.x * BS * items + tid; base < n; base += step)
        for (unsigned k = 0; k < items; k++) {
            uint64_t i = base + (uint64_t)k * BS;
            if (i < n)
                v += in[i];
        }
    sm[tid] = v;
    __syncthreads();
    tree_complete<T, BS>(sm, tid);
    if (tid == 0)
        out[blockIdx.x] = sm[0];
}

/* ---- shuffles ------------------------------------------------------------ */

template <class T> __device__ T warp_sum(T v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/* Sums v over the block: shuffles inside each warp, one value per warp in
   shared memory, a second shuffle round in warp 0.  Thread 0 holds the
   result.  sm needs blockDim.x / 32 slots. */
template <class T> __device__ T block_sum(T v, T *sm)
{
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0)
        sm[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (blockDim.x >> 5) ? sm[lane] : T(0);
        v = warp_sum(v);
    }
    return v;
}

/* shuffle: the tutorial's optimised kernel.  Thread t of a block reads t,
   t + block, t + 2 block ... (`items` of them), so each warp load is one
   contiguous 128-byte line. */
template <class T> __global__ void k_shuffle(const T *in, T *out, uint64_t n, unsigned items)
{
    T *sm = shared_array<T>();
    uint64_t base = (uint64_t)blockIdx.x * blockDim.x * items + threadIdx.x;
    T v = T(0);
    for (unsigned k = 0; k < items; k++) {
        uint64_t i = base + (uint64_t)k * blockDim.x;
        if (i < n)
            v += in[i];
    }
    v = block_sum(v, sm);
    if (threadIdx.x == 0)
        out[blockIdx.x] = v;
}

/* multipass: the tutorial's double kernel; block 1024, loads i and
   i + blockDim, sequential addressing.  Unlike the tutorial it writes its
   partial sums to a separate buffer: run() may not modify the input. */
__global__ void __launch_bounds__(KBR_MULTIPASS_BLOCK)
    k_multipass(const double *in, double *out, uint64_t n)
{
    __shared__ double sm[KBR_MULTIPASS_BLOCK];
    unsigned t = threadIdx.x;
    sm[t] = load_two(in, n);
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            sm[t] += sm[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = sm[0];
}

/* ---- the relaunch driver ------------------------------------------------- */

/* Runs pass after pass of launch(in, out, cnt, blocks) until a pass has one
   block, which writes s->d_out.  Pass k > 1 reads what pass k-1 wrote. */
template <class T, class Launch>
int passes(kbr_state *s, int v, kb_host *host, const char *what, Launch launch)
{
    const T *in = static_cast<const T *>(s->d_in);
    uint64_t cnt = s->n;
    T *bufs[2] = {static_cast<T *>(s->d_ping), static_cast<T *>(s->d_pong)};
    for (int level = 0;; level++) {
        uint64_t blocks = kbr_pass_blocks(v, cnt, s->block, s->items, s->sm_count);
        T *out = blocks == 1 ? static_cast<T *>(s->d_out) : bufs[level & 1];
        launch(in, out, cnt, (unsigned)blocks);
        KBR_LAUNCH_CHECK(what);
        if (blocks == 1)
            return KB_OK;
        in = out;
        cnt = blocks;
    }
}

/* Launches a kernel templated on the block size; bs is a power of two in
   32..1024 (plan() checked). */
#define KBR_BLOCK_SWITCH(bs, CALL)                                                            \
    switch (bs) {                                                                             \
    case 32: CALL(32); break;                                                                 \
    case 64: CALL(64); break;                                                                 \
    case 128: CALL(128); break;                                                               \
    case 256: CALL(256); break;                                                               \
    case 512: CALL(512); break;                                                               \
    default: CALL(1024); break;                                                               \
    }

/* ---- onepass --------------------------------------------------------------
 * Launch shape and why: KBR_ONEPASS_BLOCK (256) threads, up to
 * KBR_ONEPASS_BLOCKS_PER_SM (8) blocks per multiprocessor: 2048 threads, the
 * most an SM holds, every one with KBR_ONEPASS_UNROLL (4) independent 16-byte
 * loads in flight, which is 128 KiB in flight per SM; the memory system needs
 * roughly bandwidth x latency (about 4.8 TB/s x 1 us / 132 SMs = 36 KiB) to
 * stay busy.  A fixed grid means each block's partial is one value in a small
 * array (KBR_ONEPASS_MAX_BLOCKS); the last block to finish (a threadfence,
 * then an atomic ticket) sums that array in a fixed order, so the result does
 * not depend on which block finished last and there is no second launch.
 * ------------------------------------------------------------------------ */

template <class T> struct vec16;
template <> struct vec16<float> {
    typedef float4 type;
    static __device__ float sum(float4 a) { return (a.x + a.y) + (a.z + a.w); }
};
template <> struct vec16<double> {
    typedef double2 type;
    static __device__ double sum(double2 a) { return a.x + a.y; }
};
template <> struct vec16<unsigned> {
    typedef uint4 type;
    static __device__ unsigned sum(uint4 a) { return (a.x + a.y) + (a.z + a.w); }
};

/* The per-thread part: vector loads through the read-only path, UNROLL of
   them issued before any is added. */
template <class T> __device__ T onepass_thread_sum(const T *in, uint64_t n)
{
    typedef typename vec16<T>::type V;
    const unsigned W = 16 / sizeof(T);
    const unsigned U = KBR_ONEPASS_UNROLL;
    /* The input may start off a 16-byte boundary (it does not when it comes
       from cudaMalloc, but a caller may pass an offset): the first `head`
       elements and the last n - tail_start are read one by one. */
    uint64_t mis = ((uintptr_t)in & 15u) / sizeof(T);
    uint64_t head = mis ? W - mis : 0;
    if (head > n)
        head = n;
    const V *vin = reinterpret_cast<const V *>(in + head);
    uint64_t nv = (n - head) / W;
    uint64_t tail_start = head + nv * W;

    uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    T acc[U];
#pragma unroll
    for (unsigned u = 0; u < U; u++)
        acc[u] = T(0);
    uint64_t i = tid;
    for (; i + (U - 1) * stride < nv; i += U * stride) {
        V x[U];
#pragma unroll
        for (unsigned u = 0; u < U; u++)
            x[u] = __ldg(vin + i + u * stride);
#pragma unroll
        for (unsigned u = 0; u < U; u++)
            acc[u] += vec16<T>::sum(x[u]);
    }
    for (; i < nv; i += stride)
        acc[0] += vec16<T>::sum(__ldg(vin + i));
    T v = T(0);
#pragma unroll
    for (unsigned u = 0; u < U; u++)
        v += acc[u];
    if (tid < head)
        v += in[tid];
    if (tid < n - tail_start)
        v += in[tail_start + tid];
    return v;
}

template <class T, bool ATOMIC>
__global__ void __launch_bounds__(KBR_ONEPASS_BLOCK)
    k_onepass(const T *in, uint64_t n, T *blk, unsigned *counter, T *out)
{
    __shared__ T sm[KBR_ONEPASS_BLOCK / 32];
    __shared__ bool last;
    T v = block_sum(onepass_thread_sum(in, n), sm);
    if (ATOMIC) {
        /* out was zeroed by the launcher; the blocks' order decides how float
           additions round. */
        if (threadIdx.x == 0)
            atomicAdd(out, v);
        return;
    }
    if (threadIdx.x == 0) {
        blk[blockIdx.x] = v;
        /* Make the partial visible device-wide before taking a ticket, so the
           last block reads every partial. */
        __threadfence();
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    /* Fixed order: thread t sums partials t, t + block, ... then the block
       tree; volatile reads bypass any stale L1 copy. */
    const volatile T *vb = blk;
    T w = T(0);
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
        w += vb[b];
    __syncthreads(); /* sm is reused */
    w = block_sum(w, sm);
    if (threadIdx.x == 0) {
        *out = w;
        *counter = 0; /* ready for the next launch on the stream */
    }
}

template <class T> int run_typed(kbr_state *s, int v, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned bs = s->block;
    size_t shm = (size_t)bs * sizeof(T);
    const char *name = "reduce kernel";
    switch (v) {
    case KBR_INTERLEAVED:
        return passes<T>(s, v, host, "interleaved", [&](const T *i, T *o, uint64_t c, unsigned b) {
            k_interleaved<T><<<b, bs, shm, st>>>(i, o, c);
        });
    case KBR_INTERLEAVED_STRIDED:
        return passes<T>(s, v, host, "interleaved-strided",
                         [&](const T *i, T *o, uint64_t c, unsigned b) {
                             k_interleaved_strided<T><<<b, bs, shm, st>>>(i, o, c);
                         });
    case KBR_SEQUENTIAL:
        return passes<T>(s, v, host, "sequential", [&](const T *i, T *o, uint64_t c, unsigned b) {
            k_sequential<T><<<b, bs, shm, st>>>(i, o, c);
        });
    case KBR_FIRST_ADD:
        return passes<T>(s, v, host, "first-add", [&](const T *i, T *o, uint64_t c, unsigned b) {
            k_first_add<T><<<b, bs, shm, st>>>(i, o, c);
        });
    case KBR_UNROLL_WARP:
        return passes<T>(s, v, host, "unroll-warp", [&](const T *i, T *o, uint64_t c, unsigned b) {
            k_unroll_warp<T><<<b, bs, shm, st>>>(i, o, c);
        });
    case KBR_UNROLL_COMPLETE:
        return passes<T>(s, v, host, "unroll-complete",
                         [&](const T *i, T *o, uint64_t c, unsigned b) {
#define KBR_UC(BS) k_unroll_complete<T, BS><<<b, BS, shm, st>>>(i, o, c)
                             KBR_BLOCK_SWITCH(bs, KBR_UC)
#undef KBR_UC
                         });
    case KBR_MULTI_ELEMENT: {
        unsigned items = s->items;
        return passes<T>(s, v, host, "multi-element",
                         [&](const T *i, T *o, uint64_t c, unsigned b) {
#define KBR_ME(BS) k_multi_element<T, BS><<<b, BS, shm, st>>>(i, o, c, items)
                             KBR_BLOCK_SWITCH(bs, KBR_ME)
#undef KBR_ME
                         });
    }
    case KBR_SHUFFLE: {
        unsigned items = s->items;
        size_t wshm = (bs / 32) * sizeof(T);
        return passes<T>(s, v, host, "shuffle", [&](const T *i, T *o, uint64_t c, unsigned b) {
            k_shuffle<T><<<b, bs, wshm, st>>>(i, o, c, items);
        });
    }
    case KBR_ONEPASS:
    case KBR_ONEPASS_ATOMIC: {
        unsigned g = (unsigned)kbr_onepass_blocks(s->n, sizeof(T), s->sm_count);
        const T *in = static_cast<const T *>(s->d_in);
        T *out = static_cast<T *>(s->d_out);
        if (v == KBR_ONEPASS) {
            k_onepass<T, false><<<g, KBR_ONEPASS_BLOCK, 0, st>>>(
                in, s->n, static_cast<T *>(s->d_blk), s->d_counter, out);
            KBR_LAUNCH_CHECK("onepass");
        } else {
            cudaError_t e = cudaMemsetAsync(out, 0, sizeof(T), st);
            if (e != cudaSuccess)
                return host->fail(host, KB_ECUDA, "reduce: cudaMemsetAsync of the output failed: %s",
                                  cudaGetErrorString(e));
            k_onepass<T, true><<<g, KBR_ONEPASS_BLOCK, 0, st>>>(
                in, s->n, static_cast<T *>(s->d_blk), s->d_counter, out);
            KBR_LAUNCH_CHECK("onepass-atomic");
        }
        return KB_OK;
    }
    default: break;
    }
    return host->fail(host, KB_EINVAL, "reduce: %s: variant %d is not a kernel of this file", name, v);
}

} // namespace

extern "C" int kbr_cuda_run(kbr_state *s, int v, kb_host *host)
{
    if (v == KBR_MULTIPASS) {
        cudaStream_t st = static_cast<cudaStream_t>(host->stream);
        return passes<double>(s, v, host, "multipass",
                              [&](const double *i, double *o, uint64_t c, unsigned b) {
                                  k_multipass<<<b, KBR_MULTIPASS_BLOCK, 0, st>>>(i, o, c);
                              });
    }
    switch (s->dtype) {
    case KBR_F32: return run_typed<float>(s, v, host);
    case KBR_F64: return run_typed<double>(s, v, host);
    default: return run_typed<unsigned>(s, v, host);
    }
}
