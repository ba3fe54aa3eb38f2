/*
 * kit_buf.c -- arrays with a host copy and, where a GPU is in use, a device
 * copy.  Without a GPU (host->stream == NULL) no CUDA function is called.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "kit_internal.h"

/* Host copies at least this large are poisoned by several threads. */
#define KBK_POISON_GRAIN (8u << 20)

int kbk_buf_alloc(kb_host *host, kbk_buf *b, size_t bytes, int where)
{
    memset(b, 0, sizeof *b);
    b->bytes = bytes;
    int want_dev = (where & KBK_DEVICE) && host->stream != NULL;
    int want_host = (where & KBK_HOST) != 0;
    if (bytes == 0)
        return KB_OK;
    if (want_dev) {
        cudaError_t e = cudaMalloc(&b->dev, bytes);
        if (e != cudaSuccess) {
            b->dev = NULL;
            (void)cudaGetLastError(); /* an allocation failure is not sticky: clear it */
            int code = e == cudaErrorMemoryAllocation ? KB_ENOMEM : KB_ECUDA;
            kbk_buf_free(host, b);
            return host->fail(host, code, "cannot allocate %zu bytes of device memory: %s",
                              bytes, cudaGetErrorString(e));
        }
    }
    if (want_host && want_dev) {
        cudaError_t e = cudaMallocHost(&b->host, bytes);
        if (e != cudaSuccess) {
            b->host = NULL;
            (void)cudaGetLastError();
            int code = e == cudaErrorMemoryAllocation ? KB_ENOMEM : KB_ECUDA;
            kbk_buf_free(host, b);
            return host->fail(host, code, "cannot allocate %zu bytes of pinned host memory: %s",
                              bytes, cudaGetErrorString(e));
        }
        b->pinned = 1;
    } else if (want_host) {
        b->host = malloc(bytes);
        if (!b->host) {
            kbk_buf_free(host, b);
            return host->fail(host, KB_ENOMEM, "cannot allocate %zu bytes of host memory", bytes);
        }
    }
    return KB_OK;
}

void kbk_buf_free(kb_host *host, kbk_buf *b)
{
    (void)host;
    if (!b)
        return;
    /* Errors are ignored: freeing happens in teardown, which frees what it can. */
    if (b->host) {
        if (b->registered) {
            (void)cudaHostUnregister(b->host);
            free(b->host);
        } else if (b->pinned) {
            (void)cudaFreeHost(b->host);
        } else {
            free(b->host);
        }
    }
    if (b->dev)
        (void)cudaFree(b->dev);
    memset(b, 0, sizeof *b);
}

typedef struct kbk_poison_job {
    unsigned char *p;
    unsigned char byte;
} kbk_poison_job;

static int kbk_poison_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    kbk_poison_job *j = ctx;
    memset(j->p + begin, j->byte, (size_t)(end - begin));
    return KB_OK;
}

int kbk_buf_poison(kb_host *host, kbk_buf *b, unsigned char byte)
{
    if (b->dev && b->bytes)
        KBK_CUDA(host, cudaMemsetAsync(b->dev, byte, b->bytes, (cudaStream_t)host->stream));
    if (b->host && b->bytes) {
        kbk_poison_job j = {.p = b->host, .byte = byte};
        return kbk__parallel_run(kbk__threads_for(host, b->bytes, KBK_POISON_GRAIN), b->bytes,
                                 kbk_poison_range, &j);
    }
    return KB_OK;
}

int kbk_buf_upload(kb_host *host, kbk_buf *b)
{
    if (b->dev && b->host && b->bytes)
        KBK_CUDA(host, cudaMemcpyAsync(b->dev, b->host, b->bytes, cudaMemcpyHostToDevice,
                                       (cudaStream_t)host->stream));
    return KB_OK;
}

int kbk_buf_attach(kb_host *host, kbk_buf *b)
{
    if (!host->stream || !b->bytes || b->dev)
        return KB_OK;
    cudaError_t e = cudaMalloc(&b->dev, b->bytes);
    if (e != cudaSuccess) {
        b->dev = NULL;
        (void)cudaGetLastError(); /* an allocation failure is not sticky: clear it */
        return host->fail(host, e == cudaErrorMemoryAllocation ? KB_ENOMEM : KB_ECUDA,
                          "cannot allocate %zu bytes of device memory: %s", b->bytes,
                          cudaGetErrorString(e));
    }
    if (!b->host || b->pinned)
        return KB_OK;
    /* The host copy was made without CUDA (a host half): lock its pages
       where they are, so that copies run as from kbk_buf_alloc's pinned
       memory. */
    e = cudaHostRegister(b->host, b->bytes, cudaHostRegisterDefault);
    if (e == cudaSuccess) {
        b->pinned = b->registered = 1;
        return KB_OK;
    }
    (void)cudaGetLastError();
    void *p = NULL;
    e = cudaMallocHost(&p, b->bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return host->fail(host, e == cudaErrorMemoryAllocation ? KB_ENOMEM : KB_ECUDA,
                          "cannot allocate %zu bytes of pinned host memory: %s", b->bytes,
                          cudaGetErrorString(e));
    }
    memcpy(p, b->host, b->bytes);
    free(b->host);
    b->host = p;
    b->pinned = 1;
    return KB_OK;
}

int kbk_buf_download(kb_host *host, kbk_buf *b)
{
    if (b->dev && b->host && b->bytes)
        KBK_CUDA(host, cudaMemcpyAsync(b->host, b->dev, b->bytes, cudaMemcpyDeviceToHost,
                                       (cudaStream_t)host->stream));
    return KB_OK;
}
