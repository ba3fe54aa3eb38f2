/*
 * kit_cuda.c -- CUDA error checks: one sentence through host->fail() naming
 * the call, where it was made and what the runtime says.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "kit_internal.h"

/* The file's last path component: enough to find the line, short to read. */
static const char *kbk_base(const char *file)
{
    const char *slash = file ? strrchr(file, '/') : NULL;
    return slash ? slash + 1 : (file ? file : "?");
}

int kbk_cuda_check(kb_host *host, int err, const char *what, const char *file, int line)
{
    if (err == (int)cudaSuccess)
        return KB_OK;
    return host->fail(host, KB_ECUDA, "%s failed at %s:%d: %s", what, kbk_base(file), line,
                      cudaGetErrorString((cudaError_t)err));
}

int kbk_cuda_launch_check(kb_host *host, const char *what, const char *file, int line)
{
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess)
        return KB_OK;
    return host->fail(host, KB_ECUDA, "launching %s failed at %s:%d: %s", what, kbk_base(file),
                      line, cudaGetErrorString(err));
}
