/*
 * kbench/kit_tma.cuh -- CUDA C++ only (a .cu file built for sm_90a): the
 * Hopper plumbing that a kernel feeding shared memory with the Tensor
 * Memory Accelerator needs, as inline device functions (device code cannot
 * cross a plugin's shared-object boundary, so each plugin compiles its own
 * copy of these).  matmul's wgmma kernels and transpose's tma kernel use it.
 *
 *   mbarriers   kbk_mbar_init, kbk_mbar_fence_init (before TMA sees them),
 *               kbk_mbar_arrive, kbk_mbar_arrive_expect_tx (an arrival that
 *               announces a stage's bytes), kbk_mbar_try, kbk_mbar_wait
 *   TMA         kbk_tma_prefetch_map, kbk_tma_load_2d (a box into shared
 *               memory, completing a barrier's transactions)
 *   addresses   kbk_smem_addr (a shared-memory pointer as PTX's 32 bits)
 *   host        kbk_tma_encoder: the driver's cuTensorMapEncodeTiled
 *
 * kbk_mbar_wait traps after KBK_MBAR_HANG_CYCLES clock cycles (2^35: about
 * 17 s at 1.98 GHz) instead of spinning for ever: a lost transaction or
 * arrival becomes a launch error that the host reports, not a hung worker.
 * The tensor maps themselves are made on the host with the encoder that
 * kbk_tma_encoder finds through the runtime, so that no plugin links libcuda.
 */
#ifndef KBENCH_KIT_TMA_CUH
#define KBENCH_KIT_TMA_CUH

#ifndef __CUDACC__
#error "kbench/kit_tma.cuh is CUDA C++ (include it from a .cu file)"
#endif

#include <cuda.h>          /* CUtensorMap: a type only, no libcuda */
#include <cudaTypedefs.h>  /* PFN_cuTensorMapEncodeTiled */
#include <cuda_runtime.h>

#include <cstdint>

#include "kbench/kit.h"

/* How long kbk_mbar_wait waits before it traps, in clock cycles. */
constexpr long long KBK_MBAR_HANG_CYCLES = 1ll << 35;

__device__ __forceinline__ uint32_t kbk_smem_addr(const void *p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void kbk_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/* Makes the initialised barriers visible to the async proxy (TMA). */
__device__ __forceinline__ void kbk_mbar_fence_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* One arrival that also announces `bytes` of transactions (a stage's TMA
   copies) before the phase can complete. */
__device__ __forceinline__ void kbk_mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("{\n\t.reg .b64 st;\n\t"
                 "mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void kbk_mbar_arrive(uint32_t bar)
{
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.shared::cta.b64 st, [%0];\n\t}" ::"r"(bar)
                 : "memory");
}

/* Whether the phase of parity `parity` has completed (one try). */
__device__ __forceinline__ uint32_t kbk_mbar_try(uint32_t bar, uint32_t parity)
{
    uint32_t done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return done;
}

/* Waits until the phase of parity `parity` has completed, trapping after
   KBK_MBAR_HANG_CYCLES.  A fresh barrier is in phase 0, so waiting for
   parity 1 returns at once (the "previous" phase counts as complete): a
   producer's first pass over its empty barriers relies on that. */
__device__ __forceinline__ void kbk_mbar_wait(uint32_t bar, uint32_t parity)
{
    if (kbk_mbar_try(bar, parity))
        return;
    const long long t0 = clock64();
    while (!kbk_mbar_try(bar, parity)) {
        if (clock64() - t0 > KBK_MBAR_HANG_CYCLES)
            __trap();
    }
}

__device__ __forceinline__ void kbk_tma_prefetch_map(const CUtensorMap *map)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

/* A 2-D box at (c0, c1) (inner, outer coordinates, in elements) into shared
   memory at dst; its bytes complete bar's transaction count. */
__device__ __forceinline__ void kbk_tma_load_2d(uint32_t dst, const CUtensorMap *map,
                                                uint32_t bar, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

/* The driver's cuTensorMapEncodeTiled in *encode, reached through the
   runtime (cudaGetDriverEntryPointByVersion); KB_EUNSUPPORTED with "<who>
   needs ..." (who: "matmul: wgmma") when the driver does not provide it. */
static inline int kbk_tma_encoder(kb_host *host, const char *who,
                                  PFN_cuTensorMapEncodeTiled_v12000 *encode)
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    KBK_CUDA(host, cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                    cudaEnableDefault, &q));
    if (!fn || q != cudaDriverEntryPointSuccess)
        return host->fail(host, KB_EUNSUPPORTED,
                          "%s needs the driver's cuTensorMapEncodeTiled (CUDA 12.0 or later), "
                          "which this driver does not provide",
                          who);
    *encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    return KB_OK;
}

#endif
