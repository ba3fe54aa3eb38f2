/*
 * saxpy_kernel.cu -- the saxpy plugin's CUDA variant: one element per
 * thread in a grid-stride loop, launched on the host's stream.
 */
#include <cuda_runtime.h>

#include <kbench/kit.h>

__global__ void saxpy_kernel(uint64_t n, float a, const float *__restrict__ x,
                             const float *__restrict__ y, float *__restrict__ out)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = a * x[i] + y[i];
}

/* Enqueues the kernel; called by run(), so it neither allocates nor waits. */
extern "C" int saxpy_cuda(kb_host *host, uint64_t n, float a, const float *x, const float *y,
                          float *out, int block)
{
    /* Enough blocks to fill the device a few times over; the loop does the rest. */
    uint64_t blocks = (n + (uint64_t)block - 1) / (uint64_t)block;
    uint64_t cap = host->sm_count > 0 ? 32ull * (uint64_t)host->sm_count : 65535ull;
    if (blocks > cap)
        blocks = cap;
    saxpy_kernel<<<(unsigned)blocks, (unsigned)block, 0, (cudaStream_t)host->stream>>>(n, a, x, y,
                                                                                      out);
    KBK_CUDA_LAUNCH(host, "saxpy_kernel");
    return KB_OK;
}
