/* gpu.c -- see gpu.h.  The only file of the core that calls the CUDA
   runtime, so that the rest of the core builds and reads as plain C. */
#define _GNU_SOURCE
#include "gpu.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"

/* Writes "what: <CUDA's sentence>" into why (when there is one) and
   returns -1, so that callers can `return cuda_fail(...)`. */
static int cuda_fail(cudaError_t e, const char *what, char *why, size_t n)
{
    if (why && n && what)
        snprintf(why, n, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    else if (why && n)
        snprintf(why, n, "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    return -1;
}

/* Reads $KBENCH_DEVICE.  Returns the ordinal, or -1 with why set when the
   variable holds something that is not an ordinal below count. */
static int chosen_device(int count, char *why, size_t n)
{
    const char *s = getenv("KBENCH_DEVICE");
    if (!s || !*s)
        return 0;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v >= count) {
        snprintf(why, n, "KBENCH_DEVICE='%s' is not a device ordinal between 0 and %d", s,
                 count - 1);
        return -1;
    }
    return (int)v;
}

void kbc_gpu_probe(kbc_machine *m)
{
    memset(m, 0, sizeof *m);
    m->device = -1;

    /* The host facts come first: they are wanted in every report, with or
       without a GPU. */
    if (gethostname(m->host, sizeof m->host - 1) != 0)
        snprintf(m->host, sizeof m->host, "unknown");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    m->cpu_threads = cpus > 0 ? (int)cpus : 1;

    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        /* cudaDriverGetVersion answers 0 when no driver is installed at
           all; that, or a driver the runtime cannot use, is "no CUDA
           driver".  A driver that works but sees no device is the other
           case. */
        int drv = 0;
        if (cudaDriverGetVersion(&drv) != cudaSuccess)
            drv = 0;
        int no_driver = drv == 0 || e == cudaErrorInsufficientDriver;
        m->driver_version = drv;
        if (cudaRuntimeGetVersion(&m->runtime_version) != cudaSuccess)
            m->runtime_version = 0;
        snprintf(m->no_gpu_reason, sizeof m->no_gpu_reason, "%s (cudaGetDeviceCount: %s)",
                 no_driver ? "no CUDA driver" : "no CUDA device", cudaGetErrorString(e));
        cudaGetLastError();
        return;
    }
    if (count <= 0) {
        snprintf(m->no_gpu_reason, sizeof m->no_gpu_reason,
                 "no CUDA device (the driver reports none)");
        return;
    }
    char why[200];
    int dev = chosen_device(count, why, sizeof why);
    if (dev < 0) {
        snprintf(m->no_gpu_reason, sizeof m->no_gpu_reason, "no CUDA device (%s)", why);
        return;
    }
    e = cudaSetDevice(dev);
    struct cudaDeviceProp p;
    if (e == cudaSuccess)
        e = cudaGetDeviceProperties(&p, dev);
    if (e != cudaSuccess) {
        snprintf(m->no_gpu_reason, sizeof m->no_gpu_reason,
                 "no CUDA device (device %d: %s)", dev, cudaGetErrorString(e));
        return;
    }
    m->has_gpu = 1;
    m->device = dev;
    snprintf(m->name, sizeof m->name, "%s", p.name);
    m->cc_major = p.major;
    m->cc_minor = p.minor;
    m->sm_count = p.multiProcessorCount;
    m->mem_bytes = (uint64_t)p.totalGlobalMem;
    m->l2_bytes = p.l2CacheSize > 0 ? (uint64_t)p.l2CacheSize : 0;
    /* The clocks left cudaDeviceProp in CUDA 13; the attributes remain.
       A failure leaves 0, which the reports show as unknown. */
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev) == cudaSuccess)
        m->clock_khz = v;
    v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev) == cudaSuccess)
        m->mem_clock_khz = v;
    cudaDriverGetVersion(&m->driver_version);
    cudaRuntimeGetVersion(&m->runtime_version);
}

uint64_t kbc_gpu_free_memory(void)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        return 0;
    return (uint64_t)free_b;
}

int kbc_gpu_stream_create(void **stream, char *why, size_t n)
{
    cudaStream_t s = NULL;
    /* Non-blocking, so that the legacy default stream that libraries or a
       plugin may use by mistake never serialises with the timed work. */
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        *stream = NULL;
        return cuda_fail(e, "cudaStreamCreateWithFlags", why, n);
    }
    *stream = s;
    return 0;
}

void kbc_gpu_stream_destroy(void *stream)
{
    if (stream)
        cudaStreamDestroy((cudaStream_t)stream);
}

int kbc_gpu_sync(void *stream, char *why, size_t n)
{
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaStreamSynchronize", why, n);
}

int kbc_gpu_event_create(void **ev, char *why, size_t n)
{
    cudaEvent_t e = NULL;
    cudaError_t r = cudaEventCreate(&e);
    if (r != cudaSuccess) {
        *ev = NULL;
        return cuda_fail(r, "cudaEventCreate", why, n);
    }
    *ev = e;
    return 0;
}

void kbc_gpu_event_destroy(void *ev)
{
    if (ev)
        cudaEventDestroy((cudaEvent_t)ev);
}

int kbc_gpu_event_record(void *ev, void *stream, char *why, size_t n)
{
    cudaError_t e = cudaEventRecord((cudaEvent_t)ev, (cudaStream_t)stream);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaEventRecord", why, n);
}

int kbc_gpu_event_elapsed(void *start, void *end, float *ms, char *why, size_t n)
{
    cudaError_t e = cudaEventSynchronize((cudaEvent_t)end);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaEventSynchronize", why, n);
    e = cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaEventElapsedTime", why, n);
}

int kbc_gpu_last_error(char *why, size_t n)
{
    cudaError_t e = cudaGetLastError();
    /* No call to name: the error belongs to an earlier launch or
       asynchronous call, which the caller knows better. */
    return e == cudaSuccess ? 0 : cuda_fail(e, NULL, why, n);
}

/* What one timed operation of a ceiling measurement does. */
enum ceiling_op { OP_COPY, OP_READ, OP_WRITE, OP_FMA, OP_MMA_TF32, OP_MMA_BF16, OP_L2_READ };

/* The launchers of gpu_kernels.cu; each returns a cudaError_t. */
int kbc_gpu_launch_read(const void *buf, uint64_t bytes, void *sink, int sm_count, void *stream);
int kbc_gpu_launch_l2_read(const void *buf, uint64_t bytes, void *sink, int sm_count,
                           void *stream);
/* The bytes one launch of the L2 read kernel reads from a buffer of `bytes`. */
double kbc_gpu_l2_read_bytes(uint64_t bytes);
int kbc_gpu_launch_fma(void *out, int sm_count, void *stream);
int kbc_gpu_launch_mma(int bf16, void *out, int sm_count, void *stream);
/* Floating-point operations of one launch of each, and the floats each
   writes (the size of `out`). */
double kbc_gpu_fma_flops(int sm_count);
double kbc_gpu_mma_flops(int bf16, int sm_count);
uint64_t kbc_gpu_compute_out_floats(int sm_count);

static cudaError_t ceiling_op_run(enum ceiling_op op, void *a, void *b, uint64_t bytes,
                                  int sm_count, cudaStream_t s)
{
    switch (op) {
    case OP_COPY:
        return cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s);
    case OP_READ:
        return (cudaError_t)kbc_gpu_launch_read(a, bytes, b, sm_count, s);
    case OP_WRITE:
        return cudaMemsetAsync(b, 0x02, bytes, s);
    case OP_FMA:
        return (cudaError_t)kbc_gpu_launch_fma(b, sm_count, s);
    case OP_MMA_TF32:
        return (cudaError_t)kbc_gpu_launch_mma(0, b, sm_count, s);
    case OP_MMA_BF16:
        return (cudaError_t)kbc_gpu_launch_mma(1, b, sm_count, s);
    case OP_L2_READ:
        return (cudaError_t)kbc_gpu_launch_l2_read(a, bytes, b, sm_count, s);
    }
    return cudaErrorInvalidValue;
}

/* Median time of TIMED runs of op on the buffers a (source) and b
   (destination; the read kernel's sink, the compute kernels' output),
   after WARMUP untimed runs; moved = bytes the op moves per run (or
   floating-point operations, for the compute kernels).  Units per second
   / 1e9 (GB/s, GFLOP/s), or 0 on any failure. */
static double ceiling_measure(enum ceiling_op op, cudaStream_t s, void *a, void *b,
                              uint64_t bytes, int sm_count, double moved)
{
    enum { WARMUP = 3, TIMED = 15 };
    cudaEvent_t t0 = NULL, t1 = NULL;
    double gbps = 0.0;
    double sec[TIMED];

    if (cudaEventCreate(&t0) != cudaSuccess || cudaEventCreate(&t1) != cudaSuccess)
        goto out;
    for (int i = 0; i < WARMUP; i++)
        if (ceiling_op_run(op, a, b, bytes, sm_count, s) != cudaSuccess)
            goto out;
    if (cudaStreamSynchronize(s) != cudaSuccess)
        goto out;
    for (int i = 0; i < TIMED; i++) {
        float ms = 0.0f;
        if (cudaEventRecord(t0, s) != cudaSuccess ||
            ceiling_op_run(op, a, b, bytes, sm_count, s) != cudaSuccess ||
            cudaEventRecord(t1, s) != cudaSuccess || cudaEventSynchronize(t1) != cudaSuccess ||
            cudaEventElapsedTime(&ms, t0, t1) != cudaSuccess)
            goto out;
        sec[i] = (double)ms * 1e-3;
    }
    kbc_stats st;
    kbc_stats_compute(sec, TIMED, &st);
    if (st.median > 0.0)
        gbps = moved / st.median / 1e9;
out:
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    return gbps;
}

void kbc_gpu_ceilings(void *stream, uint64_t bytes, int sm_count, double *read_gbps,
                      double *write_gbps, double *copy_gbps)
{
    cudaStream_t s = (cudaStream_t)stream;
    void *a = NULL, *b = NULL;
    *read_gbps = *write_gbps = *copy_gbps = 0.0;
    bytes &= ~(uint64_t)15; /* whole 16-byte words for the read kernel */
    /* One pair of buffers for all three ceilings.  On the H200 a buffer
       allocated after another of the same size was freed streamed about
       13% slower in every one of several tries (3936 against 4521 GB/s for
       the read kernel on 1 GiB), so measuring each ceiling on fresh
       buffers gave ceilings that the kernels they judge beat. */
    if (bytes == 0 || cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess)
        goto out;
    /* Touch both buffers first so that no timed run pays for first use;
       0x01 bytes never meet the read kernel's write condition. */
    if (cudaMemsetAsync(a, 1, bytes, s) != cudaSuccess ||
        cudaMemsetAsync(b, 0, bytes, s) != cudaSuccess)
        goto out;
    *read_gbps = ceiling_measure(OP_READ, s, a, b, bytes, sm_count, (double)bytes);
    *write_gbps = ceiling_measure(OP_WRITE, s, a, b, bytes, sm_count, (double)bytes);
    /* Each byte is read once and written once. */
    *copy_gbps = ceiling_measure(OP_COPY, s, a, b, bytes, sm_count, 2.0 * (double)bytes);
out:
    /* A failure here must not leave an error behind for the first variant
       to be blamed for; the stream is drained before the buffers go. */
    cudaStreamSynchronize(s);
    cudaGetLastError();
    if (a)
        cudaFree(a);
    if (b)
        cudaFree(b);
    cudaGetLastError();
}

int kbc_gpu_launch_hold(void *flag_dev, unsigned long long timeout_ns, void *stream);

int kbc_gpu_hold_alloc(volatile int **host, void **dev, char *why, size_t n)
{
    void *p = NULL;
    *host = NULL;
    *dev = NULL;
    cudaError_t e = cudaHostAlloc(&p, 64, cudaHostAllocMapped);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return cuda_fail(e, "cudaHostAlloc", why, n);
    }
    e = cudaHostGetDevicePointer(dev, p, 0);
    if (e != cudaSuccess) {
        cudaGetLastError();
        cudaFreeHost(p);
        return cuda_fail(e, "cudaHostGetDevicePointer", why, n);
    }
    memset(p, 0, 64);
    *host = p;
    return 0;
}

void kbc_gpu_hold_free(volatile int *host)
{
    if (host)
        cudaFreeHost((void *)host);
}

int kbc_gpu_hold(volatile int *host, void *dev, double timeout_s, void *stream, char *why,
                 size_t n)
{
    host[0] = 0;
    host[1] = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    cudaError_t e = (cudaError_t)kbc_gpu_launch_hold(dev, (unsigned long long)(timeout_s * 1e9),
                                                     stream);
    return e == cudaSuccess ? 0 : cuda_fail(e, "the hold kernel's launch", why, n);
}

void kbc_gpu_release(volatile int *host)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    host[0] = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

int kbc_gpu_alloc(void **ptr, uint64_t bytes, char *why, size_t n)
{
    *ptr = NULL;
    cudaError_t e = cudaMalloc(ptr, bytes);
    if (e != cudaSuccess) {
        *ptr = NULL;
        cudaGetLastError();
        return cuda_fail(e, "cudaMalloc", why, n);
    }
    return 0;
}

void kbc_gpu_free(void *ptr)
{
    if (ptr)
        cudaFree(ptr);
}

int kbc_gpu_memset_async(void *ptr, int value, uint64_t bytes, void *stream, char *why, size_t n)
{
    cudaError_t e = cudaMemsetAsync(ptr, value, bytes, (cudaStream_t)stream);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaMemsetAsync", why, n);
}

void kbc_gpu_flops_ceilings(void *stream, int sm_count, int cc_major, double *fp32_gflops,
                            double *tf32_gflops, double *bf16_gflops)
{
    cudaStream_t s = (cudaStream_t)stream;
    void *out = NULL;
    *fp32_gflops = *tf32_gflops = *bf16_gflops = 0.0;
    if (sm_count <= 0 ||
        cudaMalloc(&out, kbc_gpu_compute_out_floats(sm_count) * sizeof(float)) != cudaSuccess)
        goto done;
    *fp32_gflops = ceiling_measure(OP_FMA, s, NULL, out, 0, sm_count, kbc_gpu_fma_flops(sm_count));
    /* mma.sync with TF32 and BF16 operands exists from compute capability
       8.0 (Ampere) on. */
    if (cc_major >= 8) {
        *tf32_gflops = ceiling_measure(OP_MMA_TF32, s, NULL, out, 0, sm_count,
                                       kbc_gpu_mma_flops(0, sm_count));
        *bf16_gflops = ceiling_measure(OP_MMA_BF16, s, NULL, out, 0, sm_count,
                                       kbc_gpu_mma_flops(1, sm_count));
    }
done:
    /* As for the bandwidth ceilings: leave no error behind for the first
       variant to be blamed for. */
    cudaStreamSynchronize(s);
    cudaGetLastError();
    if (out)
        cudaFree(out);
    cudaGetLastError();
}

int kbc_gpu_pci_bus_id(int dev, char *buf, size_t n, char *why, size_t whyn)
{
    if (n < 2 || n > (size_t)INT_MAX)
        return cuda_fail(cudaErrorInvalidValue, "cudaDeviceGetPCIBusId", why, whyn);
    cudaError_t e = cudaDeviceGetPCIBusId(buf, (int)n, dev);
    if (e != cudaSuccess) {
        buf[0] = '\0';
        cudaGetLastError();
        return cuda_fail(e, "cudaDeviceGetPCIBusId", why, whyn);
    }
    return 0;
}

int kbc_gpu_uuid(int dev, char *buf, size_t n, char *why, size_t whyn)
{
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, dev);
    if (e != cudaSuccess) {
        if (n)
            buf[0] = '\0';
        cudaGetLastError();
        return cuda_fail(e, "cudaGetDeviceProperties", why, whyn);
    }
    const unsigned char *u = (const unsigned char *)p.uuid.bytes;
    /* NVML's spelling: GPU-8-4-4-4-12 hexadecimal digits. */
    snprintf(buf, n,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
    return 0;
}

int kbc_gpu_capture_begin(void *stream, char *why, size_t n)
{
    /* Thread-local: a call that is not allowed during a capture fails in
       this thread only (and then the batch is timed as a launch loop). */
    cudaError_t e = cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return cuda_fail(e, "cudaStreamBeginCapture", why, n);
    }
    return 0;
}

int kbc_gpu_capture_end(void *stream, void **exec, size_t *nodes, char *why, size_t n)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    *exec = NULL;
    *nodes = 0;
    cudaError_t e = cudaStreamEndCapture((cudaStream_t)stream, &g);
    const char *what = "cudaStreamEndCapture";
    if (e == cudaSuccess && g) {
        what = "cudaGraphGetNodes";
        e = cudaGraphGetNodes(g, NULL, nodes);
    }
    if (e == cudaSuccess && g) {
        what = "cudaGraphInstantiate";
        e = cudaGraphInstantiate(&x, g, 0);
    }
    if (g)
        cudaGraphDestroy(g);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return cuda_fail(e, what, why, n);
    }
    *exec = x;
    return 0;
}

int kbc_gpu_graph_launch(void *exec, void *stream, char *why, size_t n)
{
    cudaError_t e = cudaGraphLaunch((cudaGraphExec_t)exec, (cudaStream_t)stream);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaGraphLaunch", why, n);
}

void kbc_gpu_graph_destroy(void *exec)
{
    if (exec)
        cudaGraphExecDestroy((cudaGraphExec_t)exec);
}

/* ---- what the integrity checks ask of the runtime (docs/integrity.md) ---- */

int kbc_gpu_memory_bus_bits(int dev)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return v > 0 ? v : 0;
}

double kbc_gpu_l2_read_ceiling(void *stream, uint64_t l2_bytes, int sm_count)
{
    cudaStream_t s = (cudaStream_t)stream;
    void *a = NULL, *sink = NULL;
    double gbps = 0.0;
    /* A quarter of the L2 stays resident however the L2 places lines (an
       H100's L2 is two halves, and a line may sit in both). */
    uint64_t bytes = (l2_bytes / 4) & ~(uint64_t)15;
    if (bytes < (1u << 20) || sm_count <= 0)
        return 0.0;
    if (cudaMalloc(&a, bytes) != cudaSuccess ||
        cudaMalloc(&sink, (size_t)sm_count * 8 * 16) != cudaSuccess)
        goto out;
    if (cudaMemsetAsync(a, 1, bytes, s) != cudaSuccess)
        goto out;
    gbps = ceiling_measure(OP_L2_READ, s, a, sink, bytes, sm_count, kbc_gpu_l2_read_bytes(bytes));
out:
    /* As for the other ceilings: no error is left for a variant to be
       blamed for. */
    cudaStreamSynchronize(s);
    cudaGetLastError();
    if (a)
        cudaFree(a);
    if (sink)
        cudaFree(sink);
    cudaGetLastError();
    return gbps;
}

void kbc_gpu_l2_cold(void *stream)
{
    /* Lines a variant marked persisting (an access-policy window on the
       stream or on a launch) would survive the flush.  Both calls fail on
       a GPU without L2 persistence (before compute capability 8.0), where
       nothing persists: their errors are cleared and mean nothing here. */
    if (cudaCtxResetPersistingL2Cache() != cudaSuccess)
        cudaGetLastError();
    kbc_gpu_stream_window_clear(stream);
}

int kbc_gpu_stream_window(void *stream, uint64_t *bytes, double *hit_ratio, int *persisting,
                          char *why, size_t n)
{
    cudaStreamAttrValue v;
    memset(&v, 0, sizeof v);
    *bytes = 0;
    *hit_ratio = 0.0;
    *persisting = 0;
    cudaError_t e = cudaStreamGetAttribute((cudaStream_t)stream,
                                           cudaStreamAttributeAccessPolicyWindow, &v);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return cuda_fail(e, "cudaStreamGetAttribute", why, n);
    }
    *bytes = (uint64_t)v.accessPolicyWindow.num_bytes;
    *hit_ratio = v.accessPolicyWindow.hitRatio;
    *persisting = v.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting;
    return 0;
}

void kbc_gpu_stream_window_clear(void *stream)
{
    cudaStreamAttrValue v;
    memset(&v, 0, sizeof v);
    /* An empty window: every access normal again.  See kbc_gpu_l2_cold on
       the error. */
    if (cudaStreamSetAttribute((cudaStream_t)stream, cudaStreamAttributeAccessPolicyWindow,
                               &v) != cudaSuccess)
        cudaGetLastError();
}

uint64_t kbc_gpu_persisting_l2(void)
{
    size_t v = 0;
    if (cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return (uint64_t)v;
}

void kbc_gpu_persisting_l2_set(uint64_t bytes)
{
    /* See kbc_gpu_l2_cold on the error. */
    if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)bytes) != cudaSuccess)
        cudaGetLastError();
}

int kbc_gpu_device_sync(char *why, size_t n)
{
    cudaError_t e = cudaDeviceSynchronize();
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaDeviceSynchronize", why, n);
}
