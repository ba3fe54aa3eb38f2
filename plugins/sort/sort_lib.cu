/*
 * sort_lib.cu -- the library variants: cub::DeviceRadixSort (SortKeys,
 * SortPairs), cub::DeviceMergeSort (SortKeysCopy, SortPairsCopy) and
 * thrust::sort / thrust::sort_by_key, the references the family's kernels
 * are measured against.
 *
 * Temporary storage is sized in setup() for every selected library variant
 * and one device buffer of the largest size is allocated (the variants run
 * one at a time).  thrust takes its temporary storage through an allocator:
 * setup() runs it once with an allocator that records the peak it asks for;
 * run() hands out pieces of the buffer in order and falls back to cudaMalloc
 * only if a call asks for more (it should not: the size depends on n and the
 * types alone).  thrust sorts in place, so its run copies the input to the
 * output first (device to device, inside the timed region).
 *
 * cub's radix sort orders -0 and +0 as equal and is stable: the documented
 * order.  The merge sort compares with the family's order (sort.h).  No C++
 * exception may leave this file: thrust reports errors by throwing.
 */
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <kbench/kit_thrust.h>

#include "sort.h"

namespace {

template <int KEY> struct key_type;
template <> struct key_type<SORT_U32> { typedef uint32_t type; };
template <> struct key_type<SORT_I32> { typedef int32_t type; };
template <> struct key_type<SORT_F32> { typedef float type; };

/* The family's order on 32-bit patterns (sort.h, sort_ord). */
template <int KEY> struct ord_less {
    __host__ __device__ static uint32_t ord(uint32_t b)
    {
        if (KEY == SORT_U32)
            return b;
        if (KEY == SORT_I32)
            return b ^ 0x80000000u;
        if (b == 0x80000000u)
            b = 0;
        return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    }
    __host__ __device__ bool operator()(uint32_t a, uint32_t b) const { return ord(a) < ord(b); }
};

const size_t lib_align = 256;

/* Hands out pieces of the buffer in order, 256-byte aligned; the buffer is
   reused once everything handed out has come back. */
struct pool_alloc {
    typedef char value_type;
    char *base;
    size_t size, *offset, *outstanding;
    char *allocate(std::ptrdiff_t bytes)
    {
        size_t need = ((size_t)bytes + lib_align - 1) / lib_align * lib_align;
        if (*offset + need <= size) {
            char *p = base + *offset;
            *offset += need;
            ++*outstanding;
            return p;
        }
        void *p = nullptr;
        if (cudaMalloc(&p, (size_t)bytes) != cudaSuccess)
            throw std::bad_alloc();
        return static_cast<char *>(p);
    }
    void deallocate(char *p, size_t)
    {
        if (p >= base && p < base + size) {
            if (--*outstanding == 0)
                *offset = 0;
        } else {
            cudaFree(p);
        }
    }
};

/* One library call for variant `lib`, KEY, PAIRS; temp == nullptr asks cub
   for its size.  thrust (lib == SORT_LIB_THRUST) runs with allocator a. */
template <int KEY, bool PAIRS>
int cub_call(sort_state *s, int lib, void *temp, size_t &bytes, kb_host *host)
{
    typedef typename key_type<KEY>::type T;
    cudaStream_t st = (cudaStream_t)host->stream;
    int n = (int)s->n;
    const T *kin = static_cast<const T *>(s->keys_in.dev);
    T *kout = static_cast<T *>(s->keys_out.dev);
    const uint32_t *vin = static_cast<const uint32_t *>(s->vals_in.dev);
    uint32_t *vout = static_cast<uint32_t *>(s->vals_out.dev);
    if (lib == SORT_LIB_CUB_RADIX) {
        if (PAIRS)
            KBK_CUDA(host, cub::DeviceRadixSort::SortPairs(temp, bytes, kin, kout, vin, vout, n,
                                                           0, 32, st));
        else
            KBK_CUDA(host, cub::DeviceRadixSort::SortKeys(temp, bytes, kin, kout, n, 0, 32, st));
    } else {
        const uint32_t *kb = static_cast<const uint32_t *>(s->keys_in.dev);
        uint32_t *kob = static_cast<uint32_t *>(s->keys_out.dev);
        if (PAIRS)
            KBK_CUDA(host, cub::DeviceMergeSort::SortPairsCopy(temp, bytes, kb, vin, kob, vout, n,
                                                               ord_less<KEY>(), st));
        else
            KBK_CUDA(host, cub::DeviceMergeSort::SortKeysCopy(temp, bytes, kb, kob, n,
                                                              ord_less<KEY>(), st));
    }
    return KB_OK;
}

template <int KEY, bool PAIRS, class Alloc> void thrust_sort(sort_state *s, Alloc a, cudaStream_t st)
{
    typedef typename key_type<KEY>::type T;
    T *k = static_cast<T *>(s->keys_out.dev);
    uint32_t *v = static_cast<uint32_t *>(s->vals_out.dev);
    if (PAIRS)
        thrust::sort_by_key(thrust::cuda::par_nosync(a).on(st), k, k + s->n, v);
    else
        thrust::sort(thrust::cuda::par_nosync(a).on(st), k, k + s->n);
}

template <int KEY, bool PAIRS> int thrust_copy_in(sort_state *s, kb_host *host)
{
    cudaStream_t st = (cudaStream_t)host->stream;
    KBK_CUDA(host, cudaMemcpyAsync(s->keys_out.dev, s->keys_in.dev, s->n * 4,
                                   cudaMemcpyDeviceToDevice, st));
    if (PAIRS)
        KBK_CUDA(host, cudaMemcpyAsync(s->vals_out.dev, s->vals_in.dev, s->n * 4,
                                       cudaMemcpyDeviceToDevice, st));
    return KB_OK;
}

template <int KEY, bool PAIRS> int size_one(sort_state *s, int lib, size_t *bytes, kb_host *host)
{
    *bytes = 0;
    if (lib != SORT_LIB_THRUST)
        return cub_call<KEY, PAIRS>(s, lib, nullptr, *bytes, host);
    int rc = thrust_copy_in<KEY, PAIRS>(s, host);
    if (rc)
        return rc;
    size_t live = 0, peak = 0;
    try {
        thrust_sort<KEY, PAIRS>(s, kbk_recording_alloc{&live, &peak}, (cudaStream_t)host->stream);
    } catch (const std::exception &e) {
        return host->fail(host, KB_ECUDA, "sort: thrust failed while sizing its pool: %s",
                          e.what());
    }
    KBK_CUDA(host, cudaStreamSynchronize((cudaStream_t)host->stream));
    *bytes = peak;
    return KB_OK;
}

template <int KEY, bool PAIRS> int run_one(sort_state *s, int lib, kb_host *host)
{
    if (lib != SORT_LIB_THRUST) {
        size_t bytes = s->lib_temp_bytes[lib];
        int rc = cub_call<KEY, PAIRS>(s, lib, s->lib_temp.dev, bytes, host);
        if (rc)
            return rc;
        KBK_CUDA_LAUNCH(host, lib == SORT_LIB_CUB_RADIX ? "cub::DeviceRadixSort"
                                                        : "cub::DeviceMergeSort");
        return KB_OK;
    }
    int rc = thrust_copy_in<KEY, PAIRS>(s, host);
    if (rc)
        return rc;
    size_t offset = 0, outstanding = 0;
    pool_alloc a{static_cast<char *>(s->lib_temp.dev), s->lib_temp.bytes, &offset, &outstanding};
    try {
        thrust_sort<KEY, PAIRS>(s, a, (cudaStream_t)host->stream);
    } catch (const std::exception &e) {
        return host->fail(host, KB_ECUDA, "sort: thrust failed: %s", e.what());
    }
    KBK_CUDA_LAUNCH(host, "thrust::sort");
    return KB_OK;
}

#define LIB_DISPATCH(FN, s, ...)                                                              \
    do {                                                                                     \
        if ((s)->pairs) {                                                                    \
            switch ((s)->key) {                                                              \
            case SORT_U32: return FN<SORT_U32, true>((s), __VA_ARGS__);                      \
            case SORT_I32: return FN<SORT_I32, true>((s), __VA_ARGS__);                      \
            default: return FN<SORT_F32, true>((s), __VA_ARGS__);                            \
            }                                                                                \
        }                                                                                    \
        switch ((s)->key) {                                                                  \
        case SORT_U32: return FN<SORT_U32, false>((s), __VA_ARGS__);                         \
        case SORT_I32: return FN<SORT_I32, false>((s), __VA_ARGS__);                         \
        default: return FN<SORT_F32, false>((s), __VA_ARGS__);                               \
        }                                                                                    \
    } while (0)

int size_dispatch(sort_state *s, int lib, size_t *bytes, kb_host *host)
{
    LIB_DISPATCH(size_one, s, lib, bytes, host);
}

} // namespace

extern "C" int sort_lib_setup(sort_state *s, const sort_impl *impls, uint32_t count, kb_host *host)
{
    size_t most = 1;
    for (uint32_t v = 0; v < count; v++) {
        int lib = impls[v].lib;
        if (lib == SORT_LIB_NONE || !(s->variants & KB_VARIANT_BIT(v)) ||
            s->lib_temp_bytes[lib])
            continue;
        size_t bytes = 0;
        int rc = size_dispatch(s, lib, &bytes, host);
        if (rc)
            return rc;
        s->lib_temp_bytes[lib] = bytes ? bytes : 1;
        if (bytes > most)
            most = bytes;
    }
    return kbk_buf_alloc(host, &s->lib_temp, most, KBK_DEVICE);
}

extern "C" int sort_run_lib(sort_state *s, const sort_impl *impl, kb_host *host)
{
    LIB_DISPATCH(run_one, s, impl->lib, host);
}
