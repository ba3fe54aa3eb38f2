/*
 * matmul_lib.cu -- the library references, on the host's stream, with a
 * workspace allocated in setup() so that run() never allocates:
 *   cublas       cublasSgemm in pedantic fp32 math (CUBLAS_PEDANTIC_MATH: no
 *                tensor cores, no TF32), for f32 and fp32x3 (whose inputs are
 *                plain f32);
 *   cublas-tf32  cublasSgemm with CUBLAS_TF32_TENSOR_OP_MATH, on inputs that
 *                setup() already rounded to tf32 (cuBLAS's own rounding of
 *                them changes nothing);
 *   cublas-bf16  cublasGemmEx on the bf16 copies a16 and b16, f32 output,
 *                CUBLAS_COMPUTE_32F, in the default math mode (tensor cores).
 * One handle serves the three: each run sets its row's math mode first (a
 * field of the handle; no synchronisation, no allocation).
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

/* The handle, with the math mode set; NULL after host->fail(). */
static cublasHandle_t handle_in_mode(kbm_state *s, cublasMath_t mode, kb_host *host)
{
    cublasHandle_t h = static_cast<cublasHandle_t>(s->cublas);
    if (!h) {
        host->fail(host, KB_EFAIL, "matmul: cuBLAS runs without a handle (setup did not make "
                   "one)");
        return nullptr;
    }
    cublasStatus_t st = cublasSetMathMode(h, mode);
    if (st != CUBLAS_STATUS_SUCCESS) {
        host->fail(host, KB_ECUDA, "matmul: cublasSetMathMode failed: %s (%d)", cublas_name(st),
                   (int)st);
        return nullptr;
    }
    return h;
}

/* cublasSgemm on the f32 copies of A and B in the given math mode. */
static int sgemm(kbm_state *s, cublasMath_t mode, kb_host *host)
{
    const float alpha = 1.0f, beta = 0.0f;
    cublasHandle_t h = handle_in_mode(s, mode, host);
    if (!h)
        return KB_ECUDA;
    const int m = (int)s->m, n = (int)s->n, k = (int)s->k;
    KBM_CUBLAS(host, cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                 static_cast<const float *>(s->b.dev), n,
                                 static_cast<const float *>(s->a.dev), k, &beta,
                                 static_cast<float *>(s->c.dev), n));
    return KB_OK;
}

extern "C" int kbm_run_cublas(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    (void)impl;
    return sgemm(s, CUBLAS_PEDANTIC_MATH, host);
}

extern "C" int kbm_run_cublas_tf32(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    (void)impl;
    return sgemm(s, CUBLAS_TF32_TENSOR_OP_MATH, host);
}

extern "C" int kbm_run_cublas_bf16(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    (void)impl;
    const float alpha = 1.0f, beta = 0.0f;
    if (!s->a16.dev || !s->b16.dev)
        return host->fail(host, KB_EFAIL, "matmul: cublas-bf16 runs without the bf16 copies of "
                          "A and B (setup did not make them)");
    cublasHandle_t h = handle_in_mode(s, CUBLAS_DEFAULT_MATH, host);
    if (!h)
        return KB_ECUDA;
    const int m = (int)s->m, n = (int)s->n, k = (int)s->k;
    KBM_CUBLAS(host, cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, s->b16.dev,
                                  CUDA_R_16BF, n, s->a16.dev, CUDA_R_16BF, k, &beta, s->c.dev,
                                  CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return KB_OK;
}
