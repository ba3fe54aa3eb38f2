/* gpu_kernels.cu -- the core's own kernels: a read-only streaming kernel
   for the read ceiling (gpu.c measures it).  C linkage, so that gpu.c stays
   plain C. */
#include <cuda_runtime_api.h>
#include <stdint.h>

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
