/*
 * reduce_lib.cu -- the library variants: cub::DeviceReduce::Sum and
 * thrust::reduce, the references the hand-written kernels are measured
 * against.
 *
 * cub: the temporary storage is sized and allocated in setup(), so run() only
 * enqueues the library's kernels on the stream.
 *
 * thrust: thrust::reduce allocates its temporary storage through the
 * execution policy's allocator.  setup() runs it once with an allocator that
 * records the peak it asks for, then allocates a pool of that size; run() uses
 * a bump allocator over the pool, so it does not allocate.  Should a later call
 * ask for more (it should not: the size depends only on n and the type), the
 * allocator falls back to cudaMalloc and verify() says so.  thrust::reduce
 * returns the sum to the host, so it waits for the stream inside run(): the
 * timed region of this variant includes that copy and wait.
 *
 * Buffers are kbk_buf (kbench/kit.h), freed by reduce.c's teardown; CUDA
 * calls are checked with KBK_CUDA.  No C++ exception may leave this file:
 * thrust reports errors by throwing, and the caller is C.
 */
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <exception>

#include <cub/device/device_reduce.cuh>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>

#include "kbench/kit_thrust.h"
#include "reduce.h"

namespace {

/* Hands out pieces of the pool in order, 256-byte aligned; the pool is
   reused once everything handed out has come back. */
const size_t kbr_align = 256;

struct pool_alloc {
    typedef char value_type;
    kbr_state *s;
    size_t *offset, *outstanding;
    char *allocate(std::ptrdiff_t bytes)
    {
        size_t need = ((size_t)bytes + kbr_align - 1) / kbr_align * kbr_align;
        if (*offset + need <= s->thrust_pool.bytes) {
            char *p = static_cast<char *>(s->thrust_pool.dev) + *offset;
            *offset += need;
            ++*outstanding;
            return p;
        }
        s->thrust_fallback = 1;
        void *p = nullptr;
        if (cudaMalloc(&p, (size_t)bytes) != cudaSuccess)
            throw std::bad_alloc();
        return static_cast<char *>(p);
    }
    void deallocate(char *p, size_t)
    {
        char *base = static_cast<char *>(s->thrust_pool.dev);
        if (p >= base && p < base + s->thrust_pool.bytes) {
            if (--*outstanding == 0)
                *offset = 0;
        } else {
            cudaFree(p);
        }
    }
};

/* cub's temporary storage for this point, in *bytes (at least 1). */
template <class T> int cub_size(kbr_state *s, size_t *bytes, kb_host *host)
{
    *bytes = 0;
    KBK_CUDA(host, cub::DeviceReduce::Sum(nullptr, *bytes, static_cast<const T *>(s->in.dev),
                                          static_cast<T *>(s->out.dev), (int64_t)s->n,
                                          static_cast<cudaStream_t>(host->stream)));
    if (*bytes == 0)
        *bytes = 1;
    return KB_OK;
}

template <class T> int cub_run(kbr_state *s, kb_host *host)
{
    size_t bytes = s->cub_temp.bytes;
    KBK_CUDA(host, cub::DeviceReduce::Sum(s->cub_temp.dev, bytes,
                                          static_cast<const T *>(s->in.dev),
                                          static_cast<T *>(s->out.dev), (int64_t)s->n,
                                          static_cast<cudaStream_t>(host->stream)));
    KBK_CUDA_LAUNCH(host, "cub::DeviceReduce::Sum");
    return KB_OK;
}

template <class T, class Alloc> T thrust_sum(kbr_state *s, Alloc a, cudaStream_t st)
{
    const T *p = static_cast<const T *>(s->in.dev);
    return thrust::reduce(thrust::cuda::par(a).on(st), p, p + s->n, T(0), thrust::plus<T>());
}

/* thrust's pool for this point, in *bytes: the peak of a recorded run, plus
   room for the alignment of four pieces. */
template <class T> int thrust_size(kbr_state *s, size_t *bytes, kb_host *host)
{
    size_t live = 0, peak = 0;
    kbk_recording_alloc a{&live, &peak};
    try {
        (void)thrust_sum<T>(s, a, static_cast<cudaStream_t>(host->stream));
    } catch (const std::exception &ex) {
        return host->fail(host, KB_ECUDA, "reduce: thrust::reduce (sizing run) failed: %s",
                          ex.what());
    }
    *bytes = (peak + 4 * kbr_align + kbr_align - 1) / kbr_align * kbr_align;
    return KB_OK;
}

template <class T> int thrust_run(kbr_state *s, kb_host *host)
{
    pool_alloc a{s, &s->thrust_offset, &s->thrust_outstanding};
    try {
        T r = thrust_sum<T>(s, a, static_cast<cudaStream_t>(host->stream));
        std::memcpy(s->lib_result, &r, sizeof r);
    } catch (const std::exception &ex) {
        return host->fail(host, KB_ECUDA, "reduce: thrust::reduce failed: %s", ex.what());
    }
    return KB_OK;
}

template <class T> int lib_setup(kbr_state *s, kb_host *host)
{
    size_t bytes = 0;
    int rc;
    if (s->needs & KBR_NEEDS_CUB) {
        if ((rc = cub_size<T>(s, &bytes, host)))
            return rc;
        if (bytes > KBR_LIB_TEMP_ALLOWANCE)
            host->log(host, KB_LOG_WARN,
                      "reduce: cub asks for %zu bytes of temporary storage, more than the %u "
                      "that plan() reported",
                      bytes, (unsigned)KBR_LIB_TEMP_ALLOWANCE);
        if ((rc = kbk_buf_alloc(host, &s->cub_temp, bytes, KBK_DEVICE)))
            return rc;
    }
    if (s->needs & KBR_NEEDS_THRUST) {
        if ((rc = thrust_size<T>(s, &bytes, host)))
            return rc;
        if (bytes > KBR_LIB_TEMP_ALLOWANCE)
            host->log(host, KB_LOG_WARN,
                      "reduce: thrust asks for %zu bytes of temporary storage, more than the %u "
                      "that plan() reported",
                      bytes, (unsigned)KBR_LIB_TEMP_ALLOWANCE);
        if ((rc = kbk_buf_alloc(host, &s->thrust_pool, bytes, KBK_DEVICE)))
            return rc;
    }
    return KB_OK;
}

} // namespace

extern "C" int kbr_lib_setup(kbr_state *s, kb_host *host)
{
    switch (s->dtype) {
    case KBR_F32: return lib_setup<float>(s, host);
    case KBR_F64: return lib_setup<double>(s, host);
    default: return lib_setup<unsigned>(s, host);
    }
}

extern "C" int kbr_run_cub(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    switch (s->dtype) {
    case KBR_F32: return cub_run<float>(s, host);
    case KBR_F64: return cub_run<double>(s, host);
    default: return cub_run<unsigned>(s, host);
    }
}

/* The sum comes back to the host (s->lib_result): the row says
   KBR_RESULT_ON_HOST, and its KB_VARIANT_SYNCS flag tells the host that run()
   waits for the stream. */
extern "C" int kbr_run_thrust(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    switch (s->dtype) {
    case KBR_F32: return thrust_run<float>(s, host);
    case KBR_F64: return thrust_run<double>(s, host);
    default: return thrust_run<unsigned>(s, host);
    }
}
