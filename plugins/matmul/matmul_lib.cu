/*
 * matmul_lib.cu -- the library reference: cublasSgemm in pedantic fp32 math
 * (CUBLAS_PEDANTIC_MATH: no tensor cores, no TF32), on the host's stream, with
 * a workspace allocated in setup() so that run() never allocates.
 *
 * cuBLAS is column-major.  A row-major m x n matrix C is the column-major
 * n x m matrix C^T, and C = A B is C^T = B^T A^T: so the call multiplies the
 * column-major n x k matrix B^T (leading dimension n) by the k x m matrix A^T
 * (leading dimension k) into the n x m matrix C^T (leading dimension n).  No
 * data moves.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "matmul.h"

namespace {

const char *cublas_name(cublasStatus_t st)
{
    switch (st) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "not initialised";
    case CUBLAS_STATUS_ALLOC_FAILED: return "allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "invalid value";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case CUBLAS_STATUS_MAPPING_ERROR: return "mapping error";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "internal error";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "not supported";
    default: return "unknown status";
    }
}

} // namespace

#define KBM_CUBLAS(host, call)                                                                \
    do {                                                                                      \
        cublasStatus_t st_ = (call);                                                          \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                                     \
            return (host)->fail((host), KB_ECUDA, "matmul: %s failed at %s:%d: %s (%d)",      \
                                #call, "matmul_lib.cu", __LINE__, cublas_name(st_), (int)st_); \
    } while (0)

extern "C" int kbm_cublas_setup(kbm_state *s, kb_host *host)
{
    cublasHandle_t h = nullptr;
    KBM_CUBLAS(host, cublasCreate(&h));
    s->cublas = h;
    KBM_CUBLAS(host, cublasSetStream(h, static_cast<cudaStream_t>(host->stream)));
    KBM_CUBLAS(host, cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    KBM_CUBLAS(host, cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    KBM_CUBLAS(host, cublasSetWorkspace(h, s->workspace.dev, s->workspace.bytes));
    return KB_OK;
}

extern "C" void kbm_cublas_teardown(kbm_state *s)
{
    if (s->cublas)
        cublasDestroy(static_cast<cublasHandle_t>(s->cublas));
    s->cublas = nullptr;
}

extern "C" int kbm_run_cublas(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    const float alpha = 1.0f, beta = 0.0f;
    cublasHandle_t h = static_cast<cublasHandle_t>(s->cublas);
    if (!h)
        return host->fail(host, KB_EFAIL, "matmul: cublas runs without a handle (setup did not "
                          "make one)");
    const int m = (int)s->m, n = (int)s->n, k = (int)s->k;
    KBM_CUBLAS(host, cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                 static_cast<const float *>(s->b.dev), n,
                                 static_cast<const float *>(s->a.dev), k, &beta,
                                 static_cast<float *>(s->c.dev), n));
    return KB_OK;
}
