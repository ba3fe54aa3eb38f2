/* gpu_kernels.cu -- the core's own kernels: a read-only streaming kernel
   for the read ceiling, FP32 FMA chains for the FP32 compute ceiling, and
   mma.sync on register-resident fragments for the TF32 and BF16 tensor
   ceilings (gpu.c measures them all).  C linkage, so that gpu.c stays
   plain C. */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include <cuda/std/version>

/* Reads n 16-byte words with a grid-stride loop and writes one word per
   block only when a condition that never holds on the buffer's contents
   (all bytes 0x01) is met, so the compiler cannot drop the loads and the
   kernel writes (almost) nothing. */
__global__ void kbc_read_kernel(const uint4 *__restrict__ in, uint64_t n, uint4 *sink)
{
    uint4 acc = make_uint4(0, 0, 0, 0);
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    /* Four independent loads per thread per step keep enough bytes in
       flight to reach the memory's peak; the tail takes one at a time. */
    for (; i + 3 * stride < n; i += 4 * stride) {
        uint4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
        acc.x ^= a.x ^ b.x ^ c.x ^ d.x;
        acc.y ^= a.y ^ b.y ^ c.y ^ d.y;
        acc.z ^= a.z ^ b.z ^ c.z ^ d.z;
        acc.w ^= a.w ^ b.w ^ c.w ^ d.w;
    }
    for (; i < n; i += stride) {
        uint4 v = in[i];
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
    }
    if (acc.x == 0xdeadbeefu && acc.y == 0x0badf00du)
        sink[blockIdx.x] = acc;
}

extern "C" int kbc_gpu_launch_read(const void *buf, uint64_t bytes, void *sink, int sm_count,
                                   void *stream)
{
    uint64_t n = bytes / sizeof(uint4);
    if (n == 0)
        return (int)cudaErrorInvalidValue;
    unsigned blocks = (unsigned)(sm_count > 0 ? sm_count * 8 : 1024);
    kbc_read_kernel<<<blocks, 256, 0, (cudaStream_t)stream>>>((const uint4 *)buf, n,
                                                              (uint4 *)sink);
    return (int)cudaGetLastError();
}

/* ---- the L2 read rate -----------------------------------------------------

   The physical limit of a row whose working set fits in the L2 is what the
   L2 can deliver (docs/integrity.md).  This kernel reads a buffer that sits
   in the L2 (a quarter of it) L2_READ_REPEATS times over, each load through
   ld.global.cg, which bypasses the L1: the first pass brings the buffer into
   the L2 and every later one reads it from there, and the repeats inside one
   launch keep the launch's own cost out of the rate.  The write condition
   never holds on bytes of 0x01, as in kbc_read_kernel. */
#define L2_READ_REPEATS 32

/* One 16-byte load through the L2 alone; volatile, so that the compiler
   neither drops a pass nor keeps one pass's words for the next. */
__device__ __forceinline__ uint4 ld_cg(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

__global__ void kbc_l2_read_kernel(const uint4 *in, uint64_t n, uint4 *sink)
{
    uint4 acc = make_uint4(0, 0, 0, 0);
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t first = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < L2_READ_REPEATS; r++) {
        uint64_t i = first;
        for (; i + 3 * stride < n; i += 4 * stride) {
            uint4 a = ld_cg(in + i), b = ld_cg(in + i + stride), c = ld_cg(in + i + 2 * stride),
                  d = ld_cg(in + i + 3 * stride);
            acc.x ^= a.x ^ b.x ^ c.x ^ d.x;
            acc.y ^= a.y ^ b.y ^ c.y ^ d.y;
            acc.z ^= a.z ^ b.z ^ c.z ^ d.z;
            acc.w ^= a.w ^ b.w ^ c.w ^ d.w;
        }
        for (; i < n; i += stride) {
            uint4 v = ld_cg(in + i);
            acc.x ^= v.x;
            acc.y ^= v.y;
            acc.z ^= v.z;
            acc.w ^= v.w;
        }
        /* The next pass reads the same words: rotated, so that two passes
           do not cancel in the xor. */
        acc = make_uint4(acc.y, acc.z, acc.w, acc.x);
    }
    if (acc.x == 0xdeadbeefu && acc.y == 0x0badf00du)
        sink[blockIdx.x] = acc;
}

extern "C" int kbc_gpu_launch_l2_read(const void *buf, uint64_t bytes, void *sink, int sm_count,
                                      void *stream)
{
    uint64_t n = bytes / sizeof(uint4);
    if (n == 0)
        return (int)cudaErrorInvalidValue;
    unsigned blocks = (unsigned)(sm_count > 0 ? sm_count * 8 : 1024);
    kbc_l2_read_kernel<<<blocks, 256, 0, (cudaStream_t)stream>>>((const uint4 *)buf, n,
                                                                 (uint4 *)sink);
    return (int)cudaGetLastError();
}

extern "C" double kbc_gpu_l2_read_bytes(uint64_t bytes)
{
    return (double)(bytes / sizeof(uint4) * sizeof(uint4)) * L2_READ_REPEATS;
}

/* ---- the hold before a timed sample -------------------------------------

   One thread spins until the host writes a non-zero word to flag[0] (host
   memory mapped into the device), or until timeout_ns of the GPU's global
   timer have passed, when it writes 1 to flag[1] and returns.  Launched
   before a timed sample's start event, it keeps the GPU from starting the
   sample until the host has enqueued all of it, so that the time between
   the events is the GPU's alone, not the host's launch latency (measure.c,
   docs/output.md "The hold"). */
__global__ void kbc_hold_kernel(volatile int *flag, unsigned long long timeout_ns)
{
    unsigned long long t0, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (flag[0] == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - t0 > timeout_ns) {
            flag[1] = 1;
            return;
        }
    }
}

extern "C" int kbc_gpu_launch_hold(void *flag_dev, unsigned long long timeout_ns, void *stream)
{
    kbc_hold_kernel<<<1, 1, 0, (cudaStream_t)stream>>>((volatile int *)flag_dev, timeout_ns);
    return (int)cudaGetLastError();
}

/* ---- the FP32 compute ceiling ------------------------------------------

   Each thread runs FMA_CHAINS independent chains a = a * mul + add, so
   that a warp always has independent FMAs to issue while earlier ones are
   in flight, for FMA_ITERS x FMA_UNROLL steps.  mul and add are kernel
   arguments (the compiler cannot fold the chains), and every chain's
   result reaches the store at the end (it cannot drop them).  With mul
   just below 1 each chain converges to add / (1 - mul) = 1: no overflow,
   no subnormals.  The grid is as many blocks as fit on the device at once
   (occupancy), so that every SM is full for the whole launch and there is
   no partial last wave.  About 2 ms on an H100. */
#define FMA_THREADS 256
#define FMA_CHAINS 8
#define FMA_UNROLL 32
#define FMA_ITERS 1024

__global__ void __launch_bounds__(FMA_THREADS) kbc_fma_kernel(float *out, float mul, float add,
                                                              int iters)
{
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a[FMA_CHAINS];
#pragma unroll
    for (int c = 0; c < FMA_CHAINS; c++)
        a[c] = (float)((tid + (unsigned)c) & 1023u) * (1.0f / 1024.0f);
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < FMA_UNROLL; u++) {
#pragma unroll
            for (int c = 0; c < FMA_CHAINS; c++)
                a[c] = fmaf(a[c], mul, add);
        }
    }
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < FMA_CHAINS; c++)
        sum += a[c];
    out[tid] = sum;
}

/* ---- the TF32 and BF16 tensor ceilings -----------------------------------

   Each warp keeps MMA_CHAINS independent accumulator fragments and issues
   mma.sync m16n8k8 (TF32) or m16n8k16 (BF16) into each in turn, with the
   A and B fragments held in registers the whole time: nothing but the
   tensor cores is measured.  This is the legacy warp-level MMA; on Hopper
   the warpgroup instructions (wgmma) reach a higher rate, so a wgmma
   kernel can show more than 100% of these ceilings (docs/output.md).  The
   operands are small (about 2^-8), so the accumulators grow by about 2^-12
   per step and stay far from overflow.  Compute capability 8.0 and up;
   built for an older architecture the kernel writes zeros and gpu.c does
   not launch it. */
#define MMA_THREADS 128
#define MMA_CHAINS 8
#define MMA_UNROLL 4
#define MMA_ITERS 4096

template <int BF16>
__global__ void __launch_bounds__(MMA_THREADS) kbc_mma_kernel(float *out, int iters, float scale)
{
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    float d[MMA_CHAINS][4];
#pragma unroll
    for (int c = 0; c < MMA_CHAINS; c++)
        d[c][0] = d[c][1] = d[c][2] = d[c][3] = 0.0f;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    /* Operand values near 2^-8 that differ between lanes. */
    const float x = scale * (1.0f + (float)(threadIdx.x & 31u) * (1.0f / 64.0f));
    const float y = scale * (1.5f - (float)(threadIdx.x & 31u) * (1.0f / 128.0f));
    unsigned a0, a1, a2, a3, b0, b1;
    if (BF16) {
        /* Two bf16 per register: the upper halves of the f32 encodings. */
        const unsigned hx = __float_as_uint(x) >> 16, hy = __float_as_uint(y) >> 16;
        a0 = a2 = (hx << 16) | hy;
        a1 = a3 = (hy << 16) | hx;
        b0 = (hx << 16) | hx;
        b1 = (hy << 16) | hy;
    } else {
        /* One tf32 per register: an f32 encoding (the low 13 bits are
           ignored by the instruction). */
        a0 = a2 = __float_as_uint(x);
        a1 = a3 = __float_as_uint(y);
        b0 = __float_as_uint(y);
        b1 = __float_as_uint(x);
    }
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < MMA_UNROLL; u++) {
#pragma unroll
            for (int c = 0; c < MMA_CHAINS; c++) {
                if (BF16)
                    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                        : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
                else
                    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                        : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
            }
        }
    }
#endif
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < MMA_CHAINS; c++)
        sum += d[c][0] + d[c][1] + d[c][2] + d[c][3];
    out[tid] = sum;
}

/* Blocks per SM that are resident at once for kernel k with `threads`
   threads per block (at least 1). */
template <typename K> static int resident_blocks(K k, int threads)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, 0) != cudaSuccess ||
        per_sm < 1) {
        cudaGetLastError();
        per_sm = 1;
    }
    return per_sm;
}

static unsigned fma_blocks(int sm_count)
{
    return (unsigned)(sm_count * resident_blocks(kbc_fma_kernel, FMA_THREADS));
}

static unsigned mma_blocks(int bf16, int sm_count)
{
    int per_sm = bf16 ? resident_blocks(kbc_mma_kernel<1>, MMA_THREADS)
                      : resident_blocks(kbc_mma_kernel<0>, MMA_THREADS);
    return (unsigned)(sm_count * per_sm);
}

/* Every grid above has at most 2048 threads per SM (the most any
   architecture keeps resident), so `out` needs sm_count * 2048 floats. */
extern "C" uint64_t kbc_gpu_compute_out_floats(int sm_count)
{
    return (uint64_t)(sm_count > 0 ? sm_count : 1) * 2048u;
}

extern "C" double kbc_gpu_fma_flops(int sm_count)
{
    /* Two operations per FMA. */
    return 2.0 * FMA_CHAINS * FMA_UNROLL * (double)FMA_ITERS * FMA_THREADS *
           (double)fma_blocks(sm_count);
}

extern "C" double kbc_gpu_mma_flops(int bf16, int sm_count)
{
    /* 2 m n k per mma: m16n8k16 (BF16) or m16n8k8 (TF32), one per warp. */
    const double per_mma = 2.0 * 16 * 8 * (bf16 ? 16 : 8);
    const double warps = (double)mma_blocks(bf16, sm_count) * (MMA_THREADS / 32);
    return per_mma * MMA_CHAINS * MMA_UNROLL * (double)MMA_ITERS * warps;
}

extern "C" int kbc_gpu_launch_fma(void *out, int sm_count, void *stream)
{
    if (sm_count <= 0)
        return (int)cudaErrorInvalidValue;
    kbc_fma_kernel<<<fma_blocks(sm_count), FMA_THREADS, 0, (cudaStream_t)stream>>>(
        (float *)out, 0.9999f, 1e-4f, FMA_ITERS);
    return (int)cudaGetLastError();
}

extern "C" int kbc_gpu_launch_mma(int bf16, void *out, int sm_count, void *stream)
{
    if (sm_count <= 0)
        return (int)cudaErrorInvalidValue;
    const float scale = 1.0f / 256.0f;
    if (bf16)
        kbc_mma_kernel<1><<<mma_blocks(1, sm_count), MMA_THREADS, 0, (cudaStream_t)stream>>>(
            (float *)out, MMA_ITERS, scale);
    else
        kbc_mma_kernel<0><<<mma_blocks(0, sm_count), MMA_THREADS, 0, (cudaStream_t)stream>>>(
            (float *)out, MMA_ITERS, scale);
    return (int)cudaGetLastError();
}

/* The CCCL (CUB, Thrust, libcu++) version this kbench was built with, as
   CCCL_VERSION spells it (3000001 for 3.0.1): a constant of the build,
   read without touching the device. */
extern "C" int kbc_gpu_cccl_version(void)
{
#ifdef CCCL_VERSION
    return CCCL_VERSION;
#else
    return 0;
#endif
}
