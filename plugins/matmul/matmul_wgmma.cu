/*
 * matmul_wgmma.cu -- PLACEHOLDER until the wgmma kernels land: Hopper's
 * warpgroup MMA fed by TMA.  Built for sm_90a (plugins/matmul/CMakeLists.txt).
 * Until then every entry says the variant is not built.
 */
#include "matmul.h"

extern "C" size_t kbm_wgmma_scratch_bytes(uint64_t m, uint64_t n, uint64_t k, int precision)
{
    (void)m, (void)n, (void)k, (void)precision;
    return 0;
}

extern "C" int kbm_wgmma_prepare(kbm_state *s, kb_host *host)
{
    (void)s;
    return host->fail(host, KB_EUNSUPPORTED, "matmul: wgmma is not built yet");
}

extern "C" int kbm_run_wgmma(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    (void)s, (void)impl;
    return host->fail(host, KB_EUNSUPPORTED, "matmul: wgmma is not built yet");
}

extern "C" void kbm_wgmma_teardown(kbm_state *s)
{
    (void)s;
}
