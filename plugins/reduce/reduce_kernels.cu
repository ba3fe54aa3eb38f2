/*
 * reduce_kernels.cu -- the GPU variants of the reduce family, in the order of
 * the optimisation path: interleaved, interleaved-strided, sequential,
 * first-add, unroll-warp, unroll-complete, multi-element, shuffle, multipass,
 * onepass, onepass-atomic and onepass-bulk.
 *
 * Every kernel is a template on the accumulation type T: float, double, or
 * unsigned int for i32 (unsigned additions wrap modulo 2^32, so the i32 sum is
 * exact in any order).  Every variant leaves the final scalar on the device
 * (s->out.dev): the classic ones relaunch themselves on their partial sums,
 * which ping-pong between s->ping.dev and s->pong.dev, until one block is left.
 * run() only enqueues on the host's stream; each launch is followed by
 * KBK_CUDA_LAUNCH (kbench/kit.h), other CUDA calls are wrapped in KBK_CUDA.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "reduce.h"

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
   block, which writes s->out.dev.  Pass k > 1 reads what pass k-1 wrote. */
template <class T, class Launch>
int passes(kbr_state *s, const kbr_impl *impl, kb_host *host, const char *what, Launch launch)
{
    const T *in = static_cast<const T *>(s->in.dev);
    uint64_t cnt = s->n;
    T *bufs[2] = {static_cast<T *>(s->ping.dev), static_cast<T *>(s->pong.dev)};
    for (int level = 0;; level++) {
        uint64_t blocks = kbr_pass_blocks(&impl->pass, cnt, s->block, s->items, s->sm_count);
        T *out = blocks == 1 ? static_cast<T *>(s->out.dev) : bufs[level & 1];
        launch(in, out, cnt, (unsigned)blocks);
        KBK_CUDA_LAUNCH(host, what);
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
template <class T, unsigned U> __device__ T onepass_thread_sum(const T *in, uint64_t n)
{
    typedef typename vec16<T>::type V;
    const unsigned W = 16 / sizeof(T);
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

/* Thread t's share of g block partials: partials t, t + 256, ... added in
   index order (the finish's fixed order).  Groups of G loads through L2
   (ld.cg skips any stale L1 line): one group covers G * 256 partials (every
   grid of the launchers up to 2048 blocks), all of a group's loads in flight
   before any is added, and keeps the register count low. */
template <class T> __device__ T partials_in_order(const T *blk, unsigned g)
{
    const unsigned P = KBR_ONEPASS_MAX_BLOCKS / KBR_ONEPASS_BLOCK, G = 8;
    T w = T(0);
#pragma unroll
    for (unsigned k0 = 0; k0 < P; k0 += G) {
        if (k0 * KBR_ONEPASS_BLOCK >= g)
            break;
        T x[G];
#pragma unroll
        for (unsigned k = 0; k < G; k++) {
            unsigned b = threadIdx.x + (k0 + k) * KBR_ONEPASS_BLOCK;
            x[k] = b < g ? __ldcg(blk + b) : T(0);
        }
#pragma unroll
        for (unsigned k = 0; k < G; k++)
            w += x[k];
    }
    return w;
}

/* The deterministic finish, run by every block once its partial v (valid in
   thread 0) is final: thread 0 stores it and takes a ticket; the block that
   takes the last ticket sums the partials in a fixed order.  The ticket is one
   acquire-release atomic: its release half makes thread 0's store visible
   before the ticket count, its acquire half (with the barrier after it) makes
   every other block's partial visible to the last block; this costs less than
   a full sequentially consistent fence.  Then each thread loads all of its
   partials (at most KBR_ONEPASS_MAX_BLOCKS / KBR_ONEPASS_BLOCK) at once
   through L2 (ld.cg skips any stale L1 line) and only then adds them, in index
   order, so the loads overlap instead of waiting one L2 round trip each. */
template <class T, bool SLOTS = false>
__device__ void finish_fixed(T v, T *blk, unsigned *counter, T *out, T *sm, unsigned nslots = 0)
{
    __shared__ bool last;
    if (threadIdx.x == 0) {
        blk[blockIdx.x] = v;
        unsigned ticket;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                     : "=r"(ticket)
                     : "l"(counter)
                     : "memory");
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    const unsigned G = 8;
    /* onepass-bulk's per-chunk slots (after the g block partials): the first
       GS * 256 of them (all, with the launcher's cap) are loaded before the
       partials, so that both sets of loads share one round trip. */
    const unsigned GS = SLOTS ? 16 : 1;
    const T *slot = blk + gridDim.x;
    T y[GS];
#pragma unroll
    for (unsigned k = 0; k < GS; k++) {
        unsigned i = threadIdx.x + k * KBR_ONEPASS_BLOCK;
        y[k] = SLOTS && i < nslots ? __ldcg(slot + i) : T(0);
    }
    T w = partials_in_order(blk, gridDim.x);
    /* Thread t adds slots t, t + 256, ... in index order. */
    T z = T(0);
#pragma unroll
    for (unsigned k = 0; k < GS; k++)
        z += y[k];
    for (unsigned i0 = threadIdx.x + GS * KBR_ONEPASS_BLOCK; SLOTS && i0 < nslots;
         i0 += G * KBR_ONEPASS_BLOCK) {
        T x[G];
#pragma unroll
        for (unsigned k = 0; k < G; k++) {
            unsigned i = i0 + k * KBR_ONEPASS_BLOCK;
            x[k] = i < nslots ? __ldcg(slot + i) : T(0);
        }
#pragma unroll
        for (unsigned k = 0; k < G; k++)
            z += x[k];
    }
    w += z;
    w = block_sum(w, sm);
    if (threadIdx.x == 0) {
        *out = w;
        counter[0] = 0; /* ready for the next launch on the stream */
        counter[1] = 0; /* onepass-bulk's chunk claims */
    }
}

/* The launch bound asks for KBR_ONEPASS_BLOCKS_PER_SM resident blocks (at most
   32 registers): without it the f64 kernel took 38 registers, so only 6 of
   the grid's 8 blocks per SM were resident and the rest ran as a second,
   partial wave. */
template <class T, bool ATOMIC, unsigned U = KBR_ONEPASS_UNROLL,
          unsigned MINB = KBR_ONEPASS_BLOCKS_PER_SM>
__global__ void __launch_bounds__(KBR_ONEPASS_BLOCK, MINB)
    k_onepass(const T *in, uint64_t n, T *blk, unsigned *counter, T *out)
{
    __shared__ T sm[KBR_ONEPASS_BLOCK / 32];
    T v = block_sum(onepass_thread_sum<T, U>(in, n), sm);
    if (ATOMIC) {
        /* out was zeroed by the launcher; the blocks' order decides how float
           additions round. */
        if (threadIdx.x == 0)
            atomicAdd(out, v);
        return;
    }
    __syncthreads(); /* sm is reused by the finish */
    finish_fixed(v, blk, counter, out, sm);
}

/* ---- onepass-pdl ------------------------------------------------------------
 * onepass's blocks without the ticket: each stores its partial and exits; a
 * second kernel of one block sums the partials in the same fixed order.  The
 * second kernel is launched with programmatic dependent launch: the first
 * kernel's blocks say at their start that it may be scheduled
 * (griddepcontrol.launch_dependents), so its launch overlaps the first
 * kernel, and it waits in griddepcontrol.wait until every block of the first
 * kernel has finished and its stores are visible.  What this saves against
 * onepass: no block waits for an atomic's round trip before it exits, and no
 * second launch's latency is seen after the first kernel, which is what two
 * plain launches (CUB's reduce) pay.
 * ------------------------------------------------------------------------ */
template <class T, bool EARLY>
__global__ void __launch_bounds__(KBR_ONEPASS_BLOCK, KBR_ONEPASS_BLOCKS_PER_SM)
    k_onepass_partials(const T *in, uint64_t n, T *blk)
{
    __shared__ T sm[KBR_ONEPASS_BLOCK / 32];
    if (EARLY)
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    T v = block_sum(onepass_thread_sum<T, KBR_ONEPASS_UNROLL>(in, n), sm);
    if (threadIdx.x == 0)
        blk[blockIdx.x] = v;
    if (!EARLY)
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

template <class T>
__global__ void __launch_bounds__(KBR_ONEPASS_BLOCK) k_onepass_finish(const T *blk, unsigned g, T *out)
{
    __shared__ T sm[KBR_ONEPASS_BLOCK / 32];
    asm volatile("griddepcontrol.wait;" ::: "memory");
    T w = block_sum(partials_in_order(blk, g), sm);
    if (threadIdx.x == 0)
        *out = w;
}

/* ---- onepass-bulk ----------------------------------------------------------
 * The same sum and finish as onepass, but the input reaches the block through
 * the Hopper bulk copy engine (cp.async.bulk, one-dimensional, no tensor map):
 * thread 0 keeps STAGES copies of SB bytes each in flight into a ring of
 * shared-memory stages, each completing on its own mbarrier (the barrier's
 * transaction count is the bytes still to land).  Every thread waits for the
 * stage, adds its SB / 16 / 256 vectors from shared memory (conflict-free:
 * thread t reads vector t + 256 k), and after a block barrier thread 0
 * refills the stage with the block's next chunk.  Why: the bytes in flight are
 * no longer bounded by registers (onepass holds 4 vectors per thread, 128 KiB
 * per SM), and the loads cost one instruction per 16 KiB instead of 1024.
 * Chunk c of the input goes to block c mod grid, so at any moment the grid
 * reads one window of memory, as onepass does; the last KBR_BULK_DYN_ROUNDS
 * rounds (and the whole chunks after them) are handed out one at a time from
 * a global counter, so that blocks on faster paths take more and all finish
 * together.  Such a chunk's sum is a fixed tree over its contents, stored in
 * its own slot, and the finish adds the slots in chunk order: the result
 * stays deterministic.  The vectors after the last whole chunk, and the
 * scalar head and tail, are read directly at grid stride.  Shape (reduce.h): 16 KiB stages, 4 deep, 2 blocks per SM,
 * so 128 KiB in flight per SM; screened on the H200 against 32 KiB x 3 x 2,
 * 32 KiB x 4 x 1, 32 KiB x 6 x 1, 16 KiB x 6 x 2, 16 KiB x 8 x 1 and 8 KiB x 8 x 2:
 * all within about 0.5% of each other at 1 GiB.  Under `bulk_min` bytes
 * (512 MiB by default) the onepass kernel runs instead: on the H200 it was as
 * fast or faster up to 256 MiB (the ring's set-up is not paid back there).
 * ------------------------------------------------------------------------ */

__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count)
                 : "memory");
}

/* Thread 0's arrival announces `bytes` of incoming data, then the copy
   engine moves them and completes the transaction. */
__device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)),
                 "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1], %2, [%3];" ::"r"(smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
    uint32_t done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(smem_u32(bar)), "r"(parity)
                     : "memory");
    } while (!done);
}

/* The chunk schedule (see the comment above the kernel): `stat` whole rounds
   of chunks per block, fixed (chunk b + k g), then the chunks from `first` to
   `end` handed out one at a time from a global counter. */
#define KBR_NO_CHUNK (~0ull)

template <class T, unsigned SB, unsigned STAGES>
__global__ void __launch_bounds__(KBR_ONEPASS_BLOCK)
    k_onepass_bulk(const T *in, uint64_t n, T *blk, unsigned *counter, T *out, unsigned dyn)
{
    typedef typename vec16<T>::type V;
    const unsigned W = 16 / sizeof(T);
    const unsigned CV = SB / 16;                   /* vectors per chunk */
    const unsigned VPT = CV / KBR_ONEPASS_BLOCK;   /* per thread per chunk */
    const unsigned NW = KBR_ONEPASS_BLOCK / 32;
    extern __shared__ __align__(128) unsigned char kbr_ring[];
    __shared__ __align__(8) uint64_t full[STAGES];
    __shared__ uint64_t idx[STAGES];    /* the chunk in each stage, or KBR_NO_CHUNK */
    __shared__ T wsum[STAGES][NW];      /* a dynamic chunk's warp sums */
    __shared__ T sm[NW];
    V *ring = reinterpret_cast<V *>(kbr_ring);
    const unsigned t = threadIdx.x;

    uint64_t mis = ((uintptr_t)in & 15u) / sizeof(T);
    uint64_t head = mis ? W - mis : 0;
    if (head > n)
        head = n;
    const V *vin = reinterpret_cast<const V *>(in + head);
    uint64_t nv = (n - head) / W;
    uint64_t tail_start = head + nv * W;
    const unsigned g = gridDim.x, b = blockIdx.x;
    uint64_t rounds = nv / CV / g;
    if (dyn > rounds)
        dyn = (unsigned)rounds;
    const uint64_t stat = rounds - dyn;          /* fixed rounds per block */
    const uint64_t first = stat * g;             /* the first dynamic chunk */
    const uint64_t end = dyn ? nv / CV : first;  /* after the last dynamic chunk */
    uint64_t gt = (uint64_t)b * KBR_ONEPASS_BLOCK + t;
    uint64_t gs = (uint64_t)g * KBR_ONEPASS_BLOCK;

    /* Thread 0's producer state: the next fixed round, and a claim taken one
       refill ahead so that the atomic's round trip overlaps the stage's wait. */
    uint64_t item = 0;
    unsigned pend = 0;
    bool done = false;
    auto next_chunk = [&]() -> uint64_t {
        if (item < stat) {
            uint64_t c = b + item * g;
            if (++item == stat && end > first)
                pend = atomicAdd(counter + 1, 1u);
            return c;
        }
        if (done || end == first)
            return KBR_NO_CHUNK;
        unsigned c = pend;
        if (first + c >= end) {
            done = true;
            return KBR_NO_CHUNK;
        }
        pend = atomicAdd(counter + 1, 1u);
        return first + c;
    };
    auto refill = [&](unsigned s) {
        uint64_t c = next_chunk();
        idx[s] = c;
        if (c != KBR_NO_CHUNK)
            bulk_load(ring + s * CV, vin + c * CV, SB, &full[s]);
    };

    if (t == 0) {
        for (unsigned s = 0; s < STAGES; s++)
            mbar_init(&full[s], 1);
        /* The initialised barriers must be visible to the copy engine. */
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        if (stat == 0 && end > first)
            pend = atomicAdd(counter + 1, 1u);
        for (unsigned s = 0; s < STAGES; s++)
            refill(s);
    }

    /* The vectors after the last whole chunk the schedule covers (with a
       dynamic part: less than one chunk; without: fewer than g + 1 chunks),
       VPT + 1 loads in flight at a time, while the ring fills. */
    T r = T(0);
    for (uint64_t i0 = end * CV + gt; i0 < nv; i0 += (VPT + 1) * gs) {
        V y[VPT + 1];
#pragma unroll
        for (unsigned j = 0; j <= VPT; j++) {
            uint64_t i = i0 + j * gs;
            y[j] = i < nv ? __ldg(vin + i) : V{};
        }
#pragma unroll
        for (unsigned j = 0; j <= VPT; j++)
            r += vec16<T>::sum(y[j]);
    }
    __syncthreads();

    T acc[VPT];
#pragma unroll
    for (unsigned j = 0; j < VPT; j++)
        acc[j] = T(0);
    for (uint64_t k = 0;; k++) {
        unsigned s = (unsigned)(k % STAGES);
        uint64_t c = idx[s];
        if (c == KBR_NO_CHUNK)
            break;
        mbar_wait(&full[s], (unsigned)((k / STAGES) & 1));
        const V *st = ring + s * CV;
        V x[VPT];
#pragma unroll
        for (unsigned j = 0; j < VPT; j++)
            x[j] = st[t + j * KBR_ONEPASS_BLOCK];
        if (c < first) {
#pragma unroll
            for (unsigned j = 0; j < VPT; j++)
                acc[j] += vec16<T>::sum(x[j]);
        } else {
            /* A dynamic chunk's sum depends only on its contents (a fixed
               tree over threads and warps), never on the block that took it:
               it goes to its own slot, after the g block partials. */
            T y[VPT];
#pragma unroll
            for (unsigned j = 0; j < VPT; j++)
                y[j] = vec16<T>::sum(x[j]);
#pragma unroll
            for (unsigned h = VPT / 2; h > 0; h /= 2)
#pragma unroll
                for (unsigned j = 0; j < h; j++)
                    y[j] += y[j + h];
            T ws = warp_sum(y[0]);
            if ((t & 31) == 0)
                wsum[s][t / 32] = ws;
        }
        /* Every thread has read stage s (and written its warp sums) before it
           is overwritten. */
        __syncthreads();
        if (t == 0) {
            if (c >= first) {
                T cs = T(0);
#pragma unroll
                for (unsigned w = 0; w < NW; w++)
                    cs += wsum[s][w];
                blk[g + (c - first)] = cs;
            }
            refill(s);
        }
    }
    /* Fixed order: a pairwise tree over the stage accumulators. */
#pragma unroll
    for (unsigned h = VPT / 2; h > 0; h /= 2)
#pragma unroll
        for (unsigned j = 0; j < h; j++)
            acc[j] += acc[j + h];
    T v = acc[0];

    v += r;
    if (gt < head)
        v += in[gt];
    if (gt < n - tail_start)
        v += in[tail_start + gt];

    v = block_sum(v, sm);
    __syncthreads(); /* sm is reused by the finish */
    finish_fixed<T, true>(v, blk, counter, out, sm, (unsigned)(end - first));
}

/* Launches onepass-bulk with the ring's shape; the first launch on a state
   raises the kernel's dynamic shared-memory limit (above 48 KiB). */
template <class T, unsigned SB, unsigned STAGES>
int launch_bulk(kbr_state *s, unsigned g, cudaStream_t st, kb_host *host)
{
    const size_t shm = (size_t)SB * STAGES;
    if (!s->bulk_smem_raised) {
        KBK_CUDA(host, cudaFuncSetAttribute(k_onepass_bulk<T, SB, STAGES>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
        s->bulk_smem_raised = 1;
    }
    unsigned dyn = (unsigned)kbr_bulk_dyn_rounds(s->n, sizeof(T), s->sm_count);
    k_onepass_bulk<T, SB, STAGES><<<g, KBR_ONEPASS_BLOCK, shm, st>>>(
        static_cast<const T *>(s->in.dev), s->n, static_cast<T *>(s->blk.dev), static_cast<unsigned *>(s->counter.dev),
        static_cast<T *>(s->out.dev), dyn);
    KBK_CUDA_LAUNCH(host, "onepass-bulk");
    return KB_OK;
}

/* ---- the run entries: one per row of reduce_variants.def ------------------- */

/* Each row's launch, for element type T; the entries below pick T from the
   state's dtype (i32 sums as unsigned: wrapping modulo 2^32). */
template <class T> int run_interleaved(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned bs = s->block;
    size_t shm = (size_t)bs * sizeof(T);
    return passes<T>(s, impl, host, "interleaved", [&](const T *i, T *o, uint64_t c, unsigned b) {
        k_interleaved<T><<<b, bs, shm, st>>>(i, o, c);
    });
}

template <class T> int run_interleaved_strided(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned bs = s->block;
    size_t shm = (size_t)bs * sizeof(T);
    return passes<T>(s, impl, host, "interleaved-strided",
                     [&](const T *i, T *o, uint64_t c, unsigned b) {
                         k_interleaved_strided<T><<<b, bs, shm, st>>>(i, o, c);
                     });
}

template <class T> int run_sequential(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned bs = s->block;
    size_t shm = (size_t)bs * sizeof(T);
    return passes<T>(s, impl, host, "sequential", [&](const T *i, T *o, uint64_t c, unsigned b) {
        k_sequential<T><<<b, bs, shm, st>>>(i, o, c);
    });
}

template <class T> int run_first_add(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned bs = s->block;
    size_t shm = (size_t)bs * sizeof(T);
    return passes<T>(s, impl, host, "first-add", [&](const T *i, T *o, uint64_t c, unsigned b) {
        k_first_add<T><<<b, bs, shm, st>>>(i, o, c);
    });
}

template <class T> int run_unroll_warp(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned bs = s->block;
    size_t shm = (size_t)bs * sizeof(T);
    return passes<T>(s, impl, host, "unroll-warp", [&](const T *i, T *o, uint64_t c, unsigned b) {
        k_unroll_warp<T><<<b, bs, shm, st>>>(i, o, c);
    });
}

template <class T> int run_unroll_complete(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned bs = s->block;
    size_t shm = (size_t)bs * sizeof(T);
    return passes<T>(s, impl, host, "unroll-complete",
                     [&](const T *i, T *o, uint64_t c, unsigned b) {
#define KBR_UC(BS) k_unroll_complete<T, BS><<<b, BS, shm, st>>>(i, o, c)
                         KBR_BLOCK_SWITCH(bs, KBR_UC)
#undef KBR_UC
                     });
}

template <class T> int run_multi_element(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned bs = s->block;
    size_t shm = (size_t)bs * sizeof(T);
    unsigned items = s->items;
    return passes<T>(s, impl, host, "multi-element",
                     [&](const T *i, T *o, uint64_t c, unsigned b) {
#define KBR_ME(BS) k_multi_element<T, BS><<<b, BS, shm, st>>>(i, o, c, items)
                         KBR_BLOCK_SWITCH(bs, KBR_ME)
#undef KBR_ME
                     });
}

template <class T> int run_shuffle(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned bs = s->block;
    unsigned items = s->items;
    size_t wshm = (bs / 32) * sizeof(T);
    return passes<T>(s, impl, host, "shuffle", [&](const T *i, T *o, uint64_t c, unsigned b) {
        k_shuffle<T><<<b, bs, wshm, st>>>(i, o, c, items);
    });
}

/* onepass and onepass-atomic (and onepass-bulk below bulk_min). */
template <class T> int run_onepass_kernel(kbr_state *s, bool atomic, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned g = (unsigned)kbr_onepass_blocks(s->n, sizeof(T), s->sm_count);
    const T *in = static_cast<const T *>(s->in.dev);
    T *out = static_cast<T *>(s->out.dev);
    if (!atomic) {
        k_onepass<T, false><<<g, KBR_ONEPASS_BLOCK, 0, st>>>(
            in, s->n, static_cast<T *>(s->blk.dev), static_cast<unsigned *>(s->counter.dev), out);
        KBK_CUDA_LAUNCH(host, "onepass");
    } else {
        KBK_CUDA(host, cudaMemsetAsync(out, 0, sizeof(T), st));
        k_onepass<T, true><<<g, KBR_ONEPASS_BLOCK, 0, st>>>(
            in, s->n, static_cast<T *>(s->blk.dev), static_cast<unsigned *>(s->counter.dev), out);
        KBK_CUDA_LAUNCH(host, "onepass-atomic");
    }
    return KB_OK;
}

template <class T> int run_onepass(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    return run_onepass_kernel<T>(s, false, host);
}

template <class T> int run_onepass_atomic(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    return run_onepass_kernel<T>(s, true, host);
}

/* onepass-pdl: the partials kernel, then the finish with programmatic
   stream serialization (it may start before the partials kernel ends, and
   waits for it inside). */
template <class T, bool EARLY> int run_onepass_pdl_as(kbr_state *s, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned g = (unsigned)kbr_onepass_blocks(s->n, sizeof(T), s->sm_count);
    T *blk = static_cast<T *>(s->blk.dev);
    k_onepass_partials<T, EARLY><<<g, KBR_ONEPASS_BLOCK, 0, st>>>(static_cast<const T *>(s->in.dev), s->n, blk);
    KBK_CUDA_LAUNCH(host, "onepass-pdl partials");
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(KBR_ONEPASS_BLOCK);
    cfg.stream = st;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    KBK_CUDA(host, cudaLaunchKernelEx(&cfg, k_onepass_finish<T>, static_cast<const T *>(blk), g,
                                      static_cast<T *>(s->out.dev)));
    KBK_CUDA_LAUNCH(host, "onepass-pdl finish");
    return KB_OK;
}

template <class T> int run_onepass_pdl(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    return run_onepass_pdl_as<T, true>(s, host);
}

template <class T> int run_onepass_pdl_late(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    return run_onepass_pdl_as<T, false>(s, host);
}

template <class T> int run_onepass_bulk(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    if (!kbr_bulk_path(s->n, sizeof(T), s->bulk_min))
        return run_onepass_kernel<T>(s, false, host); /* a small input takes the onepass path */
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    unsigned g = (unsigned)kbr_bulk_blocks(s->n, sizeof(T), s->sm_count);
    return launch_bulk<T, KBR_BULK_STAGE_BYTES, KBR_BULK_STAGES>(s, g, st, host);
}

} // namespace

/* The entries: F<T> for the state's element type. */
#define KBR_ENTRY(ENTRY, F)                                                                    \
    extern "C" int ENTRY(kbr_state *s, const kbr_impl *impl, kb_host *host)                   \
    {                                                                                          \
        switch (s->dtype) {                                                                    \
        case KBR_F32: return F<float>(s, impl, host);                                          \
        case KBR_F64: return F<double>(s, impl, host);                                         \
        default: return F<unsigned>(s, impl, host);                                            \
        }                                                                                      \
    }

KBR_ENTRY(kbr_run_interleaved, run_interleaved)
KBR_ENTRY(kbr_run_interleaved_strided, run_interleaved_strided)
KBR_ENTRY(kbr_run_sequential, run_sequential)
KBR_ENTRY(kbr_run_first_add, run_first_add)
KBR_ENTRY(kbr_run_unroll_warp, run_unroll_warp)
KBR_ENTRY(kbr_run_unroll_complete, run_unroll_complete)
KBR_ENTRY(kbr_run_multi_element, run_multi_element)
KBR_ENTRY(kbr_run_shuffle, run_shuffle)
KBR_ENTRY(kbr_run_onepass, run_onepass)
KBR_ENTRY(kbr_run_onepass_atomic, run_onepass_atomic)
KBR_ENTRY(kbr_run_onepass_bulk, run_onepass_bulk)
KBR_ENTRY(kbr_run_onepass_pdl, run_onepass_pdl)
KBR_ENTRY(kbr_run_onepass_pdl_late, run_onepass_pdl_late)

/* multipass is the tutorial's double kernel: its row runs it for f64 only
   (reduce.c checks the row's dtypes before run). */
extern "C" int kbr_run_multipass(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    cudaStream_t st = static_cast<cudaStream_t>(host->stream);
    return passes<double>(s, impl, host, "multipass",
                          [&](const double *i, double *o, uint64_t c, unsigned b) {
                              k_multipass<<<b, KBR_MULTIPASS_BLOCK, 0, st>>>(i, o, c);
                          });
}
