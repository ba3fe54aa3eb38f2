/*
 * kbench/kit_thrust.h -- C++ only (a .cu file): what a library variant built
 * on Thrust needs to keep allocation out of run().
 *
 * Thrust takes its temporary storage through the execution policy's
 * allocator (thrust::cuda::par(alloc)).  run() may not allocate, so a family
 * runs the call once in setup() with kbk_recording_alloc, which allocates
 * for real and records the peak of the bytes live at once, then allocates a
 * pool of that size and hands run() pieces of it.  The peak depends only on
 * the call's sizes and types, so it holds for every later run.
 *
 *   size_t live = 0, peak = 0;
 *   thrust::reduce(thrust::cuda::par(kbk_recording_alloc{&live, &peak}).on(st), ...);
 *
 * It throws std::bad_alloc when cudaMalloc fails, as Thrust's allocators
 * do: the caller catches (no C++ exception may reach the host, which is C).
 */
#ifndef KBENCH_KIT_THRUST_H
#define KBENCH_KIT_THRUST_H

#ifndef __cplusplus
#error "kbench/kit_thrust.h is C++ (include it from a .cu file)"
#endif

#include <cstddef>
#include <new>

#include <cuda_runtime.h>

/* An allocator that allocates with cudaMalloc and records, in *peak, the
   most bytes live at once (*live: the bytes live now; both start at 0). */
struct kbk_recording_alloc {
    typedef char value_type;
    size_t *live, *peak;
    char *allocate(std::ptrdiff_t bytes)
    {
        void *p = nullptr;
        if (cudaMalloc(&p, (size_t)bytes) != cudaSuccess)
            throw std::bad_alloc();
        *live += (size_t)bytes;
        if (*live > *peak)
            *peak = *live;
        return static_cast<char *>(p);
    }
    void deallocate(char *p, size_t bytes)
    {
        *live -= bytes;
        cudaFree(p);
    }
};

#endif /* KBENCH_KIT_THRUST_H */
