/*
 * histo_kernel.cu -- the histo plugin's CUDA variants: a histogram per
 * block in shared memory, and cub::DeviceHistogram::HistogramEven.  Each
 * launcher only enqueues on the host's stream and checks what it enqueued.
 */
#include <cuda_runtime.h>

#include <cub/device/device_histogram.cuh>

#include <kbench/kit.h>

/* Each block counts its keys (a grid-stride loop) into bins counters in
   shared memory, then adds the non-zero ones to the global counts.  Both
   steps are integer atomics: their order changes nothing. */
__global__ void histo_shared_kernel(const uint32_t *__restrict__ keys, uint64_t n, uint32_t bins,
                                    unsigned int *__restrict__ counts)
{
    extern __shared__ unsigned int local[];
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&local[keys[i]], 1u);
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        if (local[b])
            atomicAdd(&counts[b], local[b]);
}

extern "C" int histo_shared(kb_host *host, const uint32_t *keys, uint32_t *counts, uint32_t bins,
                            uint64_t n, int block)
{
    cudaStream_t stream = (cudaStream_t)host->stream;
    /* The global counts start from zero in every run: prepare() poisoned
       them, and a run must not depend on the one before. */
    KBK_CUDA(host, cudaMemsetAsync(counts, 0, bins * sizeof(uint32_t), stream));
    /* A few blocks per multiprocessor: each block pays for zeroing and
       adding its bins once, so fewer, longer blocks. */
    uint64_t blocks = (n + (uint64_t)block - 1) / (uint64_t)block;
    uint64_t cap = host->sm_count > 0 ? 4ull * (uint64_t)host->sm_count : 1024ull;
    if (blocks > cap)
        blocks = cap;
    histo_shared_kernel<<<(unsigned)blocks, (unsigned)block, bins * sizeof(unsigned int),
                          stream>>>(keys, n, bins, counts);
    KBK_CUDA_LAUNCH(host, "histo_shared_kernel");
    return KB_OK;
}

/* Bins of width one: levels 0, 1, ..., bins, so key k falls in bin k
   (for integer samples CUB computes (key - 0) * bins / (bins - 0)). */
static cudaError_t histo_cub_call(void *temp, size_t &bytes, const uint32_t *keys,
                                  uint32_t *counts, uint32_t bins, uint64_t n,
                                  cudaStream_t stream)
{
    return cub::DeviceHistogram::HistogramEven(temp, bytes, keys,
                                               reinterpret_cast<unsigned int *>(counts),
                                               (int)bins + 1, 0u, bins, (int)n, stream);
}

/* The size query: with no storage, CUB only says how much it needs. */
extern "C" int histo_cub_bytes(kb_host *host, const uint32_t *keys, uint32_t *counts,
                               uint32_t bins, uint64_t n, size_t *bytes)
{
    *bytes = 0;
    KBK_CUDA(host, histo_cub_call(nullptr, *bytes, keys, counts, bins, n,
                                  (cudaStream_t)host->stream));
    return KB_OK;
}

/* The timed call: storage from setup, enqueued on the stream. */
extern "C" int histo_cub(kb_host *host, void *temp, size_t bytes, const uint32_t *keys,
                         uint32_t *counts, uint32_t bins, uint64_t n)
{
    KBK_CUDA(host, histo_cub_call(temp, bytes, keys, counts, bins, n,
                                  (cudaStream_t)host->stream));
    KBK_CUDA_LAUNCH(host, "cub::DeviceHistogram::HistogramEven");
    return KB_OK;
}
