/*
 * transpose_lib.cu -- the library reference: cuBLAS's geam with the transpose
 * operation, C = alpha * op(A) + beta * op(B) with alpha = 1, beta = 0.
 *
 * cuBLAS is column-major.  Our rows x cols row-major input is, read
 * column-major, a cols x rows matrix A with lda = cols; our cols x rows
 * row-major output is a rows x cols column-major matrix C with ldc = rows.
 * So C (m = rows, n = cols) = A^T.  B is C itself with ldb = ldc and no
 * transpose (the in-place form cuBLAS allows), scaled by beta = 0; 1 * x + 0
 * is x for every finite non-zero x, so the result is exact bit for bit on
 * these inputs (never zero, never NaN).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "transpose.h"

static int cublas_fail(kb_host *host, cublasStatus_t st, const char *what)
{
    return host->fail(host, KB_ECUDA, "transpose: %s failed: %s (cuBLAS status %d)", what,
                      cublasGetStatusString(st), (int)st);
}

extern "C" int kbt_cublas_setup(kbt_state *s, kb_host *host)
{
    cublasHandle_t h = NULL;
    cublasStatus_t st = cublasCreate(&h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return cublas_fail(host, st, "cublasCreate");
    s->cublas = h;
    if ((st = cublasSetStream(h, (cudaStream_t)host->stream)) != CUBLAS_STATUS_SUCCESS)
        return cublas_fail(host, st, "cublasSetStream");
    if ((st = cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST)) != CUBLAS_STATUS_SUCCESS)
        return cublas_fail(host, st, "cublasSetPointerMode");
    return KB_OK;
}

extern "C" void kbt_cublas_teardown(kbt_state *s, kb_host *host)
{
    (void)host;
    if (s->cublas)
        cublasDestroy((cublasHandle_t)s->cublas);
    s->cublas = NULL;
}

extern "C" int kbt_run_cublas(kbt_state *s, const kbt_impl *, kb_host *host)
{
    cublasHandle_t h = (cublasHandle_t)s->cublas;
    if (!h)
        return host->fail(host, KB_EFAIL, "transpose: cublas has no handle (setup did not make one)");
    int m = (int)s->rows, n = (int)s->cols;
    cublasStatus_t st;
    if (s->dtype == KBT_F32) {
        const float one = 1.0f, zero = 0.0f;
        float *c = static_cast<float *>(s->out.dev);
        st = cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one,
                         static_cast<const float *>(s->in.dev), n, &zero, c, m, c, m);
        if (st != CUBLAS_STATUS_SUCCESS)
            return cublas_fail(host, st, "cublasSgeam");
    } else {
        const double one = 1.0, zero = 0.0;
        double *c = static_cast<double *>(s->out.dev);
        st = cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one,
                         static_cast<const double *>(s->in.dev), n, &zero, c, m, c, m);
        if (st != CUBLAS_STATUS_SUCCESS)
            return cublas_fail(host, st, "cublasDgeam");
    }
    KBK_CUDA_LAUNCH(host, "cublas geam");
    return KB_OK;
}
