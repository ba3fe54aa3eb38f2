/*
 * reduce.c -- the reduce family: the sum of n numbers, from a serial CPU loop
 * through the classic steps of a GPU reduction to a one-pass kernel and the
 * libraries (CUB, Thrust).
 *
 * This file holds the descriptor, plan(), the inputs and the reference, the
 * two CPU variants and verify().  The kernels are in reduce_kernels.cu, the
 * library calls in reduce_lib.cu.  Without a GPU (host->stream == NULL) no
 * CUDA function is called here.
 *
 * Inputs.  f32 and f64 draw uniformly from [-1, 1): the signs mix, so the sum
 * is much smaller than sum|x| and any element counted twice or dropped moves
 * the result; the error bound below is relative to sum|x| and so does not
 * depend on cancellation.  i32 draws integers in [-100, 100], summed modulo
 * 2^32 in unsigned arithmetic, so the check is exact whatever the order of
 * the additions: the i32 runs prove each variant's indexing exactly, the float
 * runs its rounding.
 *
 * The error bound (README.md has the full derivation).  A sum computed by any
 * tree of additions in a format with unit roundoff u satisfies, to first
 * order, |s_hat - s| <= d * u * sum|x_i|, where d is the largest number of
 * additions any one element passes through on its way to the result.  Each
 * variant's d follows from its shape (kbr_depth below).  The reference is a
 * long double sum (64-bit significand) whose own error, n * 2^-64 * sum|x|, is
 * added to the tolerance.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "reduce.h"

/* ---- the descriptor ------------------------------------------------------ */

static const char *const dtype_choices[] = {"f32", "f64", "i32"};

static const kb_param params[KBR_N_PARAMS] = {
    [KBR_P_N] = {.name = "n", .type = KB_PARAM_SIZE, .def = "2^24", .min = 1,
                 .max = 4611686018427387904.0 /* 2^62 */, .help = "number of elements to sum"},
    [KBR_P_DTYPE] = {.name = "dtype", .type = KB_PARAM_ENUM, .def = "f32", KB_CHOICES(dtype_choices),
                     .help = "element type: f32, f64, or i32 (summed modulo 2^32)"},
    [KBR_P_BLOCK] = {.name = "block", .type = KB_PARAM_INT, .def = "256", .min = 32, .max = 1024,
                     .help = "threads per block (a power of two) for the classic variants; "
                             "also the CPU variants' chunk"},
    [KBR_P_ITEMS] = {.name = "items", .type = KB_PARAM_INT, .def = "8", .min = 1, .max = 64,
                     .help = "elements per thread for multi-element and shuffle"},
    [KBR_P_BULK_MIN] = {.name = "bulk_min", .type = KB_PARAM_SIZE, .def = "512M", .min = 0,
                        .max = 4611686018427387904.0,
                        .help = "onepass-bulk: input bytes from which the copy engine streams "
                                "(below, the onepass kernel runs)"},
};

/* The parameters each variant's code reads (n and dtype always). */
#define U_BASE (KB_USES(KBR_P_N) | KB_USES(KBR_P_DTYPE))
#define U_BLOCK (U_BASE | KB_USES(KBR_P_BLOCK))
#define U_ITEMS (U_BLOCK | KB_USES(KBR_P_ITEMS))
#define U_BULK (U_BASE | KB_USES(KBR_P_BULK_MIN))

static const kb_variant variants[KBR_N_VARIANTS] = {
    [KBR_CPU] = {.name = "cpu", .backend = KB_BACKEND_CPU, .uses = U_BLOCK,
        .summary = "serial loop summing chunks of `block` elements in the element type, then "
                 "the chunk sums (the classic CPU baseline)"},
    [KBR_CPU_PARALLEL] = {.name = "cpu-parallel", .backend = KB_BACKEND_CPU, .uses = U_BLOCK,
        .summary = "the same chunked sum split over cpu_threads threads, eight "
                          "independent accumulators per chunk (the honest CPU baseline)"},
    [KBR_INTERLEAVED] = {.name = "interleaved", .backend = KB_BACKEND_CUDA, .uses = U_BLOCK,
        .summary = "one element per thread into shared memory, interleaved addressing "
                         "with the divergent tid % (2s) test, relaunched on the partial sums"},
    [KBR_INTERLEAVED_STRIDED] = {.name = "interleaved-strided", .backend = KB_BACKEND_CUDA, .uses = U_BLOCK,
        .summary = "strided index 2*s*tid: no divergent branch, but shared-memory "
                                 "bank conflicts instead"},
    [KBR_SEQUENTIAL] = {.name = "sequential", .backend = KB_BACKEND_CUDA, .uses = U_BLOCK,
        .summary = "sequential addressing (tid < s, s halving): no bank conflicts"},
    [KBR_FIRST_ADD] = {.name = "first-add", .backend = KB_BACKEND_CUDA, .uses = U_BLOCK,
        .summary = "two elements per thread, added during the load: half the blocks"},
    [KBR_UNROLL_WARP] = {.name = "unroll-warp", .backend = KB_BACKEND_CUDA, .uses = U_BLOCK,
        .summary = "last warp unrolled with __syncwarp instead of __syncthreads"},
    [KBR_UNROLL_COMPLETE] = {.name = "unroll-complete", .backend = KB_BACKEND_CUDA, .uses = U_BLOCK,
        .summary = "the whole tree unrolled for the block size (a template per size)"},
    [KBR_MULTI_ELEMENT] = {.name = "multi-element", .backend = KB_BACKEND_CUDA, .uses = U_ITEMS,
        .summary = "grid-stride loop, `items` elements per thread, a grid capped at a "
                           "few blocks per SM: two launches in all"},
    [KBR_SHUFFLE] = {.name = "shuffle", .backend = KB_BACKEND_CUDA, .uses = U_ITEMS,
        .summary = "coalesced loads at block stride, `items` per thread, warp shuffles, one "
                     "value per warp in shared memory and a second shuffle round"},
    [KBR_MULTIPASS] = {.name = "multipass", .backend = KB_BACKEND_CUDA, .uses = U_BASE,
        .summary = "f64 only: block 1024, two loads per thread, sequential addressing, "
                       "relaunched on its own partial sums until one block is left"},
    [KBR_ONEPASS] = {.name = "onepass", .backend = KB_BACKEND_CUDA, .uses = U_BASE,
        .summary = "one launch: 16-byte loads, several in flight per thread, a grid sized from "
                     "the SM count, shuffles, last block done sums the partials in fixed order"},
    [KBR_ONEPASS_ATOMIC] = {.name = "onepass-atomic", .backend = KB_BACKEND_CUDA, .uses = U_BASE, .flags = KB_VARIANT_NONDETERM,
        .summary = "onepass finishing with one atomicAdd per block: float results "
                            "depend on the blocks' order (not deterministic)"},
    [KBR_ONEPASS_BULK] = {.name = "onepass-bulk", .backend = KB_BACKEND_CUDA, .uses = U_BULK,
        .summary = "onepass whose blocks stream through a ring of shared-memory stages "
                          "filled by the bulk copy engine, the last chunks handed out from a "
                          "counter (from 16 MiB; onepass below)"},
    [KBR_CUB] = {.name = "cub", .backend = KB_BACKEND_CUDA, .uses = U_BASE, .flags = KB_VARIANT_LIBRARY,
        .summary = "the library: cub::DeviceReduce::Sum, temporary storage allocated in setup"},
    [KBR_THRUST] = {.name = "thrust", .backend = KB_BACKEND_CUDA, .uses = U_BASE, .flags = KB_VARIANT_LIBRARY | KB_VARIANT_SYNCS,
        .summary = "the library: thrust::reduce on the stream with a preallocated pool; it "
                    "returns the sum to the host, so run() waits for the stream"},
};

static int kbr_plan(const kb_value *p, kb_work *out, kb_host *host);
static int kbr_setup(const kb_value *p, uint64_t vmask, kb_host *host, void **state);
static int kbr_prepare(void *state, uint32_t v, kb_host *host);
static int kbr_upload(void *state, uint32_t v, kb_host *host);
static int kbr_run(void *state, uint32_t v, kb_host *host);
static int kbr_download(void *state, uint32_t v, kb_host *host);
static int kbr_verify(void *state, uint32_t v, kb_check *out, kb_host *host);
static void kbr_teardown(void *state, kb_host *host);

static const kb_ops ops = {
    KB_OPS_HEADER,          .plan = kbr_plan,     .setup = kbr_setup,
    .prepare = kbr_prepare, .upload = kbr_upload, .run = kbr_run,
    .download = kbr_download, .verify = kbr_verify, .teardown = kbr_teardown,
};

static const kb_plugin descriptor = {
    KB_PLUGIN_HEADER,
    .name = "reduce",
    .summary = "sum of n numbers (f32, f64, i32): the classic GPU reduction path, a one-pass "
               "kernel, CUB and Thrust",
    KB_PARAMS(params),
    KB_VARIANTS(variants),
    .item_name = "elements",
    .ops = &ops,
};

KB_EXPORT const kb_plugin *kbench_plugin(uint32_t index)
{
    return index == 0 ? &descriptor : NULL;
}

/* ---- small helpers -------------------------------------------------------- */

static size_t dtype_size(int dtype) { return dtype == KBR_F64 ? 8 : 4; }

static int is_cuda(uint32_t v) { return variants[v].backend == KB_BACKEND_CUDA; }

static int is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

static uint32_t ilog2_ceil(uint64_t x)
{
    uint32_t k = 0;
    while ((1ull << k) < x)
        k++;
    return k;
}

#define CUDA_TRY(call)                                                                        \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess)                                                                \
            return host->fail(host, KB_ECUDA, "reduce: %s failed: %s", #call,                 \
                              cudaGetErrorString(e_));                                        \
    } while (0)

/* Checks n, dtype and block, and computes the byte counts that plan() and
   setup() share.  Returns KB_OK or fails with one sentence. */
typedef struct kbr_sizes {
    uint64_t in_bytes, ping_elems, pong_elems, device_bytes, host_bytes;
} kbr_sizes;

static int kbr_sizes_of(const kb_value *p, kbr_sizes *z, kb_host *host)
{
    uint64_t n = p[KBR_P_N].u;
    int64_t block = p[KBR_P_BLOCK].i;
    size_t es = dtype_size((int)p[KBR_P_DTYPE].i);
    if (n < 1)
        return host->fail(host, KB_EINVAL, "reduce: n must be at least 1");
    if (!is_pow2((uint64_t)block))
        return host->fail(host, KB_EINVAL,
                          "reduce: block = %lld is not a power of two (use 32, 64, ... 1024)",
                          (long long)block);
    if (n > UINT64_MAX / es)
        return host->fail(host, KB_EINVAL,
                          "reduce: n = %llu elements of %zu bytes overflow a 64-bit byte count",
                          (unsigned long long)n, es);
    z->in_bytes = n * es;
    /* Partial sums of the classic variants ping-pong between two buffers: the
       first pass writes at most ceil(n / block) values (one element per
       thread), the second ceil(that / block); later passes are smaller and
       reuse them.  Sizes rounded up to 16 bytes keep each buffer aligned. */
    z->ping_elems = kbr_ceil_div(n, (uint64_t)block);
    z->pong_elems = kbr_ceil_div(z->ping_elems, (uint64_t)block);
    uint64_t scratch = (z->ping_elems + z->pong_elems) * es + 32 /* two roundings */ +
                       16 /* output */ + (uint64_t)KBR_ONEPASS_MAX_BLOCKS * 8 + 16 /* counter */ +
                       2ull * KBR_LIB_TEMP_ALLOWANCE /* cub and thrust */;
    if (z->in_bytes > UINT64_MAX - scratch)
        return host->fail(host, KB_EINVAL,
                          "reduce: n = %llu needs more device memory than 64 bits can count",
                          (unsigned long long)n);
    z->device_bytes = z->in_bytes + scratch;
    z->host_bytes = z->in_bytes + 16 /* one output scalar */;
    return KB_OK;
}

/* ---- plan ----------------------------------------------------------------- */

static int kbr_plan(const kb_value *p, kb_work *out, kb_host *host)
{
    kbr_sizes z = {0};
    int rc = kbr_sizes_of(p, &z, host);
    if (rc)
        return rc;
    uint64_t n = p[KBR_P_N].u;
    out->bytes_read = z.in_bytes;
    out->bytes_written = dtype_size((int)p[KBR_P_DTYPE].i);
    out->flops = (double)(n - 1);
    out->items = n;
    out->host_bytes = z.host_bytes;
    out->device_bytes = z.device_bytes;
    return KB_OK;
}

/* ---- inputs and reference ------------------------------------------------- */

typedef struct gen_job {
    kbr_state *s;
    uint64_t seed, lo, hi;
    long double sum;
    double abs_sum;
    uint32_t usum;
} gen_job;

/* Fills elements [lo, hi) and sums them, so that the reference costs no
   second pass over memory.  Element i depends only on (seed, i). */
static void *gen_range(void *arg)
{
    gen_job *j = arg;
    kbr_state *s = j->s;
    long double sum = 0;
    double abs_sum = 0;
    uint32_t usum = 0;
    for (uint64_t i = j->lo; i < j->hi; i++) {
        if (s->dtype == KBR_I32) {
            int32_t x = (int32_t)(kb_rand_u64(j->seed, 0, i) % 201) - 100;
            ((int32_t *)s->h_in)[i] = x;
            usum += (uint32_t)x;
        } else {
            double x = kb_rand_uniform(j->seed, 0, i, -1.0, 1.0);
            if (s->dtype == KBR_F32) {
                float f = (float)x;
                ((float *)s->h_in)[i] = f;
                x = f; /* the reference sums what is stored */
            } else {
                ((double *)s->h_in)[i] = x;
            }
            sum += (long double)x;
            abs_sum += fabs(x);
        }
    }
    j->sum = sum;
    j->abs_sum = abs_sum;
    j->usum = usum;
    return NULL;
}

#define KBR_MAX_THREADS 256

static int kbr_threads(kb_host *host)
{
    int t = host->cpu_threads;
    if (t < 1)
        t = 1;
    if (t > KBR_MAX_THREADS)
        t = KBR_MAX_THREADS;
    return t;
}

static void generate(kbr_state *s, kb_host *host)
{
    int t = kbr_threads(host);
    if ((uint64_t)t > kbr_ceil_div(s->n, 1u << 16))
        t = (int)kbr_ceil_div(s->n, 1u << 16);
    gen_job jobs[KBR_MAX_THREADS];
    pthread_t tids[KBR_MAX_THREADS];
    int started[KBR_MAX_THREADS];
    uint64_t per = kbr_ceil_div(s->n, (uint64_t)t);
    for (int k = 0; k < t; k++) {
        jobs[k] = (gen_job){.s = s, .seed = host->seed, .lo = per * k,
                            .hi = per * (k + 1) < s->n ? per * (k + 1) : s->n};
        if (jobs[k].lo > jobs[k].hi)
            jobs[k].lo = jobs[k].hi;
        /* A thread that cannot start is done inline: same result, slower. */
        started[k] = k > 0 && pthread_create(&tids[k], NULL, gen_range, &jobs[k]) == 0;
        if (!started[k] && k > 0)
            gen_range(&jobs[k]);
    }
    gen_range(&jobs[0]);
    long double sum = 0;
    double abs_sum = 0;
    uint32_t usum = 0;
    for (int k = 0; k < t; k++) {
        if (started[k])
            pthread_join(tids[k], NULL);
        sum += jobs[k].sum; /* fixed order: the reference does not vary */
        abs_sum += jobs[k].abs_sum;
        usum += jobs[k].usum;
    }
    s->ref = sum;
    s->abs_sum = abs_sum;
    s->ref_u32 = usum;
}

/* ---- setup and teardown --------------------------------------------------- */

static int setup_device(kbr_state *s, const kbr_sizes *z, kb_host *host)
{
    cudaStream_t st = (cudaStream_t)host->stream;
    CUDA_TRY(cudaMalloc(&s->d_in, z->in_bytes));
    CUDA_TRY(cudaMalloc(&s->d_out, 16));
    uint64_t classic = 0;
    for (int v = KBR_INTERLEAVED; v <= KBR_MULTIPASS; v++)
        classic |= KB_VARIANT_BIT(v);
    if (s->variants & classic) {
        s->ping_elems = z->ping_elems;
        s->pong_elems = z->pong_elems;
        CUDA_TRY(cudaMalloc(&s->d_ping, z->ping_elems * s->esize + 16));
        CUDA_TRY(cudaMalloc(&s->d_pong, z->pong_elems * s->esize + 16));
    }
    if (s->variants & (KB_VARIANT_BIT(KBR_ONEPASS) | KB_VARIANT_BIT(KBR_ONEPASS_ATOMIC) |
                       KB_VARIANT_BIT(KBR_ONEPASS_BULK))) {
        CUDA_TRY(cudaMalloc(&s->d_blk, (size_t)KBR_ONEPASS_MAX_BLOCKS * 8));
        CUDA_TRY(cudaMalloc((void **)&s->d_counter, 16));
        /* The last block of each onepass launch resets the counter to zero. */
        CUDA_TRY(cudaMemsetAsync(s->d_counter, 0, 16, st));
    }
    CUDA_TRY(cudaMemcpyAsync(s->d_in, s->h_in, z->in_bytes, cudaMemcpyHostToDevice, st));
    CUDA_TRY(cudaStreamSynchronize(st));
    if (s->variants & (KB_VARIANT_BIT(KBR_CUB) | KB_VARIANT_BIT(KBR_THRUST))) {
        int rc = kbr_lib_setup(s, host);
        if (rc)
            return rc;
    }
    return KB_OK;
}

static int kbr_setup(const kb_value *p, uint64_t vmask, kb_host *host, void **state)
{
    kbr_sizes z = {0};
    int rc = kbr_sizes_of(p, &z, host);
    if (rc)
        return rc;
    kbr_state *s = calloc(1, sizeof *s);
    if (!s)
        return host->fail(host, KB_ENOMEM, "reduce: out of host memory for the state");
    *state = s;
    s->n = p[KBR_P_N].u;
    s->dtype = (int)p[KBR_P_DTYPE].i;
    s->esize = dtype_size(s->dtype);
    s->block = (uint32_t)p[KBR_P_BLOCK].i;
    s->items = (uint32_t)p[KBR_P_ITEMS].i;
    s->bulk_min = p[KBR_P_BULK_MIN].u;
    s->gpu = host->stream != NULL;
    s->sm_count = host->sm_count > 0 ? host->sm_count : (int)KBR_DEFAULT_SMS;
    s->variants = vmask;
    if (s->gpu) {
        /* Pinned memory lets the uploads run at full speed and asynchronously. */
        CUDA_TRY(cudaMallocHost(&s->h_in, z.in_bytes));
        s->pinned = 1;
        CUDA_TRY(cudaMallocHost(&s->h_out, 16));
    } else {
        if (z.in_bytes > SIZE_MAX || !(s->h_in = malloc((size_t)z.in_bytes)))
            return host->fail(host, KB_ENOMEM,
                              "reduce: cannot allocate %llu bytes of host memory for the input",
                              (unsigned long long)z.in_bytes);
        if (!(s->h_out = malloc(16)))
            return host->fail(host, KB_ENOMEM, "reduce: out of host memory for the output");
    }
    generate(s, host);
    if (s->gpu)
        return setup_device(s, &z, host);
    return KB_OK;
}

static void kbr_teardown(void *state, kb_host *host)
{
    kbr_state *s = state;
    if (!s)
        return;
    if (s->gpu) {
        /* Errors are ignored here: teardown frees what it can. */
        if (s->variants & (KB_VARIANT_BIT(KBR_CUB) | KB_VARIANT_BIT(KBR_THRUST)))
            kbr_lib_teardown(s);
        cudaFree(s->d_in);
        cudaFree(s->d_out);
        cudaFree(s->d_ping);
        cudaFree(s->d_pong);
        cudaFree(s->d_blk);
        cudaFree(s->d_counter);
    }
    if (s->pinned) {
        cudaFreeHost(s->h_in);
        cudaFreeHost(s->h_out);
    } else {
        free(s->h_in);
        free(s->h_out);
    }
    free(s);
}

/* ---- prepare, upload, download -------------------------------------------- */

static int unsupported(kbr_state *s, uint32_t v, kb_host *host)
{
    if (v == KBR_MULTIPASS && s->dtype != KBR_F64)
        return host->fail(host, KB_EUNSUPPORTED,
                          "reduce: multipass is the tutorial's double-precision kernel and runs "
                          "with dtype = f64 only");
    if (v >= KBR_INTERLEAVED && v <= KBR_MULTIPASS &&
        kbr_pass_blocks((int)v, s->n, s->block, s->items, s->sm_count) > KBR_MAX_GRID)
        return host->fail(host, KB_EUNSUPPORTED,
                          "reduce: %s needs more than 2^31-1 blocks for n = %llu; raise block",
                          variants[v].name, (unsigned long long)s->n);
    return KB_OK;
}

static int kbr_prepare(void *state, uint32_t v, kb_host *host)
{
    kbr_state *s = state;
    if (v >= KBR_N_VARIANTS)
        return host->fail(host, KB_EINVAL, "reduce: no variant number %u", v);
    int rc = unsupported(s, v, host);
    if (rc)
        return rc;
    /* 0xff bytes are NaN in f32 and f64 and -1 in i32, which no correct sum of
       these inputs may be expected to equal by accident (verify rejects NaN). */
    memset(s->h_out, 0xff, 16);
    memset(s->thrust_result, 0xff, sizeof s->thrust_result);
    if (s->gpu && is_cuda(v)) {
        cudaStream_t st = (cudaStream_t)host->stream;
        CUDA_TRY(cudaMemsetAsync(s->d_out, 0xff, 16, st));
        CUDA_TRY(cudaStreamSynchronize(st));
    }
    return KB_OK;
}

static int kbr_upload(void *state, uint32_t v, kb_host *host)
{
    kbr_state *s = state;
    if (!s->gpu || !is_cuda(v))
        return KB_OK;
    CUDA_TRY(cudaMemcpyAsync(s->d_in, s->h_in, s->n * s->esize, cudaMemcpyHostToDevice,
                             (cudaStream_t)host->stream));
    return KB_OK;
}

static int kbr_download(void *state, uint32_t v, kb_host *host)
{
    kbr_state *s = state;
    if (!s->gpu || !is_cuda(v))
        return KB_OK;
    if (v == KBR_THRUST) {
        /* thrust::reduce already handed its sum to the host in run(). */
        memcpy(s->h_out, s->thrust_result, s->esize);
        return KB_OK;
    }
    CUDA_TRY(cudaMemcpyAsync(s->h_out, s->d_out, s->esize, cudaMemcpyDeviceToHost,
                             (cudaStream_t)host->stream));
    return KB_OK;
}

/* ---- the CPU variants ------------------------------------------------------ */

/* Sums x[lo, hi) in chunks of `chunk` elements, each chunk serially in the
   element type, then the chunk sums serially (the tutorial's CPU code). */
#define DEFINE_CHUNKED(NAME, T)                                                              \
    static T NAME(const T *x, uint64_t lo, uint64_t hi, uint64_t chunk)                     \
    {                                                                                        \
        T total = 0;                                                                         \
        for (uint64_t c = lo; c < hi; c += chunk) {                                          \
            uint64_t e = c + chunk < hi ? c + chunk : hi;                                    \
            T part = 0;                                                                      \
            for (uint64_t i = c; i < e; i++)                                                 \
                part += x[i];                                                                \
            total += part;                                                                   \
        }                                                                                    \
        return total;                                                                        \
    }
DEFINE_CHUNKED(chunked_f32, float)
DEFINE_CHUNKED(chunked_f64, double)
DEFINE_CHUNKED(chunked_u32, uint32_t)

/* The parallel variant's inner loop: eight accumulators per chunk, so that
   additions do not wait on each other and the compiler may vectorise them;
   the lanes are added pairwise (three levels), then the chunk sums serially. */
#define KBR_LANES 8
#define DEFINE_LANES(NAME, T)                                                                \
    static T NAME(const T *x, uint64_t lo, uint64_t hi, uint64_t chunk)                     \
    {                                                                                        \
        T total = 0;                                                                         \
        for (uint64_t c = lo; c < hi; c += chunk) {                                          \
            uint64_t e = c + chunk < hi ? c + chunk : hi;                                    \
            T acc[KBR_LANES] = {0};                                                          \
            uint64_t i = c;                                                                  \
            for (; i + KBR_LANES <= e; i += KBR_LANES)                                       \
                for (int l = 0; l < KBR_LANES; l++)                                          \
                    acc[l] += x[i + l];                                                      \
            for (int l = 0; i < e; i++, l++)                                                 \
                acc[l] += x[i];                                                              \
            for (int w = KBR_LANES / 2; w > 0; w /= 2)                                       \
                for (int l = 0; l < w; l++)                                                  \
                    acc[l] += acc[l + w];                                                    \
            total += acc[0];                                                                 \
        }                                                                                    \
        return total;                                                                        \
    }
DEFINE_LANES(lanes_f32, float)
DEFINE_LANES(lanes_f64, double)
DEFINE_LANES(lanes_u32, uint32_t)

/* The parallel variant's chunk: large enough that the eight lanes have work,
   a multiple of the lanes. */
#define KBR_PAR_CHUNK 4096u

typedef struct par_job {
    const kbr_state *s;
    uint64_t lo, hi;
    unsigned char out[8];
} par_job;

static void *par_range(void *arg)
{
    par_job *j = arg;
    const kbr_state *s = j->s;
    if (s->dtype == KBR_F32) {
        float r = lanes_f32(s->h_in, j->lo, j->hi, KBR_PAR_CHUNK);
        memcpy(j->out, &r, sizeof r);
    } else if (s->dtype == KBR_F64) {
        double r = lanes_f64(s->h_in, j->lo, j->hi, KBR_PAR_CHUNK);
        memcpy(j->out, &r, sizeof r);
    } else {
        uint32_t r = lanes_u32(s->h_in, j->lo, j->hi, KBR_PAR_CHUNK);
        memcpy(j->out, &r, sizeof r);
    }
    return NULL;
}

/* Threads the parallel variant uses for n elements: at most one per chunk. */
static int par_threads(uint64_t n, kb_host *host)
{
    int t = kbr_threads(host);
    uint64_t chunks = kbr_ceil_div(n, KBR_PAR_CHUNK);
    return (uint64_t)t > chunks ? (int)chunks : t;
}

static int run_cpu_parallel(kbr_state *s, kb_host *host)
{
    int t = par_threads(s->n, host);
    par_job jobs[KBR_MAX_THREADS];
    pthread_t tids[KBR_MAX_THREADS];
    int started[KBR_MAX_THREADS];
    /* Whole chunks per thread, so that every thread's chunks are the same as
       in the bound verify() derives. */
    uint64_t per = kbr_ceil_div(kbr_ceil_div(s->n, KBR_PAR_CHUNK), (uint64_t)t) * KBR_PAR_CHUNK;
    for (int k = 0; k < t; k++) {
        uint64_t lo = per * k, hi = per * (k + 1);
        jobs[k] = (par_job){.s = s, .lo = lo < s->n ? lo : s->n, .hi = hi < s->n ? hi : s->n};
        started[k] = k > 0 && pthread_create(&tids[k], NULL, par_range, &jobs[k]) == 0;
        if (!started[k] && k > 0)
            par_range(&jobs[k]);
    }
    par_range(&jobs[0]);
    float f = 0;
    double d = 0;
    uint32_t u = 0;
    for (int k = 0; k < t; k++) {
        if (started[k])
            pthread_join(tids[k], NULL);
        float jf;
        double jd;
        uint32_t ju;
        memcpy(&jf, jobs[k].out, sizeof jf);
        memcpy(&jd, jobs[k].out, sizeof jd);
        memcpy(&ju, jobs[k].out, sizeof ju);
        f += jf;
        d += jd;
        u += ju;
    }
    if (s->dtype == KBR_F32)
        memcpy(s->h_out, &f, sizeof f);
    else if (s->dtype == KBR_F64)
        memcpy(s->h_out, &d, sizeof d);
    else
        memcpy(s->h_out, &u, sizeof u);
    return KB_OK;
}

static int kbr_run(void *state, uint32_t v, kb_host *host)
{
    kbr_state *s = state;
    if (v >= KBR_N_VARIANTS)
        return host->fail(host, KB_EINVAL, "reduce: no variant number %u", v);
    if (v == KBR_CPU) {
        uint64_t n = s->n;
#ifdef KBR_TEST_DROP_LAST
        /* A build made only for kbench's tests (tests/reduce.cmake) leaves the
           last element out here, so that the tests can show verify() catching
           a sum that misses one element.  The plugin kbench ships never
           defines this. */
        n -= n > 1;
#endif
        if (s->dtype == KBR_F32) {
            float r = chunked_f32(s->h_in, 0, n, s->block);
            memcpy(s->h_out, &r, sizeof r);
        } else if (s->dtype == KBR_F64) {
            double r = chunked_f64(s->h_in, 0, n, s->block);
            memcpy(s->h_out, &r, sizeof r);
        } else {
            uint32_t r = chunked_u32(s->h_in, 0, n, s->block);
            memcpy(s->h_out, &r, sizeof r);
        }
        return KB_OK;
    }
    if (v == KBR_CPU_PARALLEL)
        return run_cpu_parallel(s, host);
    if (!s->gpu)
        return host->fail(host, KB_EUNSUPPORTED, "reduce: %s needs a GPU and none is in use",
                          variants[v].name);
    int rc = unsupported(s, v, host);
    if (rc)
        return rc;
    if (v == KBR_CUB || v == KBR_THRUST)
        return kbr_lib_run(s, (int)v, host);
    return kbr_cuda_run(s, (int)v, host);
}

/* ---- verification ----------------------------------------------------------- */

/* d: the most additions any one element passes through in variant v (see the
   file comment and README.md).  Additions of the zeros that pad a partial
   block are exact and are counted anyway, which only loosens d by a little. */
static double kbr_depth(const kbr_state *s, uint32_t v, kb_host *host)
{
    uint64_t n = s->n;
    switch (v) {
    case KBR_CPU:
        /* block - 1 additions inside a chunk, then one per later chunk sum. */
        return (double)s->block + (double)kbr_ceil_div(n, s->block);
    case KBR_CPU_PARALLEL: {
        int t = par_threads(n, host);
        uint64_t per = kbr_ceil_div(kbr_ceil_div(n, KBR_PAR_CHUNK), (uint64_t)t);
        /* A lane holds chunk/8 elements, three pairwise levels join the lanes,
           the thread adds its chunks serially, the caller its t totals. */
        return (double)(KBR_PAR_CHUNK / KBR_LANES) + 3 + (double)per + (double)t;
    }
    case KBR_ONEPASS:
    case KBR_ONEPASS_ATOMIC: {
        uint64_t w = 16 / s->esize;
        uint64_t g = kbr_onepass_blocks(n, s->esize, s->sm_count);
        uint64_t per_thread = kbr_ceil_div(n / w, g * KBR_ONEPASS_BLOCK);
        /* Per thread: its vectors, split over UNROLL accumulators (each at most
           per_thread serial additions), log2(w) inside a vector, UNROLL - 1
           to join the accumulators (the kernel adds them one after another),
           two for the scalar head and tail; then the block tree; then the
           finish: serial over the partials a thread owns plus a block tree
           (or, with atomics, up to g serial additions). */
        double d = (double)per_thread + ilog2_ceil(w) + (KBR_ONEPASS_UNROLL - 1) + 2 +
                   ilog2_ceil(KBR_ONEPASS_BLOCK);
        if (v == KBR_ONEPASS)
            d += (double)kbr_ceil_div(g, KBR_ONEPASS_BLOCK) + ilog2_ceil(KBR_ONEPASS_BLOCK);
        else
            d += (double)g;
        return d;
    }
    case KBR_ONEPASS_BULK: {
        if (!kbr_bulk_path(n, s->esize, s->bulk_min))
            return kbr_depth(s, KBR_ONEPASS, host);
        uint64_t w = 16 / s->esize;
        uint64_t g = kbr_bulk_blocks(n, s->esize, s->sm_count);
        uint64_t vpt = KBR_BULK_STAGE_BYTES / 16 / KBR_ONEPASS_BLOCK; /* vectors per thread per stage */
        uint64_t cv = KBR_BULK_STAGE_BYTES / 16; /* vectors per chunk */
        uint64_t chunks = (n / w) / cv;          /* whole chunks */
        uint64_t rounds = chunks / g;            /* whole rounds of chunks */
        uint64_t dyn = kbr_bulk_dyn_rounds(n, s->esize, s->sm_count);
        uint64_t stat = rounds - dyn;            /* fixed chunks per block */
        /* The dynamic chunks, each summed into its own slot. */
        uint64_t slots = dyn ? chunks - stat * g : 0;
        /* The vectors after the scheduled chunks, at grid stride, summed
           serially in one more accumulator: less than one chunk with a
           dynamic part, fewer than g + 1 chunks without. */
        uint64_t rest = kbr_ceil_div((dyn ? 1 : g + 1) * cv, g * KBR_ONEPASS_BLOCK);
        uint64_t serial = stat + (uint64_t)ilog2_ceil(vpt);
        if (rest > serial)
            serial = rest;
        /* A block partial: log2(w) inside a vector, then the serial additions
           of one of its vpt fixed-chunk accumulators plus log2(vpt) joining
           them (or the leftover accumulator's), one to join the leftover, two
           for the scalar head and tail, the block tree. */
        double part = (double)ilog2_ceil(w) + (double)serial + 1 + 2 + ilog2_ceil(KBR_ONEPASS_BLOCK);
        /* A dynamic chunk's slot: log2(w), log2(vpt) over a thread's vectors,
           log2(32) in the warp, the 8 warp sums added serially. */
        double slot = (double)ilog2_ceil(w) + ilog2_ceil(vpt) + 5 + KBR_ONEPASS_BLOCK / 32;
        /* The finish: a thread adds its partials serially, its slots
           serially, one joins them, then the block tree. */
        double fin = 1 + ilog2_ceil(KBR_ONEPASS_BLOCK);
        double dp = part + (double)kbr_ceil_div(g, KBR_ONEPASS_BLOCK) + fin;
        double ds = slot + (double)kbr_ceil_div(slots, KBR_ONEPASS_BLOCK) + fin;
        return dp > ds ? dp : ds;
    }
    case KBR_CUB:
    case KBR_THRUST: {
        /* The libraries' code is not ours; this bound assumes only their
           documented shape: a first pass whose grid has at least one block of
           32 or more threads per multiprocessor once n fills the device, each
           thread summing its share serially (a small n runs as one tile of at
           most 64 items per thread), then at most one more pass, each with a
           block tree of at most 1024 threads. */
        double share = (double)kbr_ceil_div(n, (uint64_t)s->sm_count * 32);
        return (share > 64 ? share : 64) + 2 * 10 + 2;
    }
    default: {
        /* The classic variants: each pass adds the elements a thread owns
           serially, then a tree of log2(block) levels; passes repeat on the
           partial sums until one block is left. */
        double d = 0;
        uint64_t cnt = n;
        uint32_t pb = kbr_pass_block((int)v, s->block);
        for (;;) {
            uint64_t b = kbr_pass_blocks((int)v, cnt, s->block, s->items, s->sm_count);
            d += (double)kbr_ceil_div(cnt, b * pb) + ilog2_ceil(pb);
            if (b <= 1)
                break;
            cnt = b;
        }
        return d;
    }
    }
}

static int kbr_verify(void *state, uint32_t v, kb_check *out, kb_host *host)
{
    kbr_state *s = state;
    if (v >= KBR_N_VARIANTS)
        return host->fail(host, KB_EINVAL, "reduce: no variant number %u", v);
    if (v == KBR_THRUST && s->thrust_fallback)
        host->log(host, KB_LOG_WARN,
                  "reduce: thrust asked for more temporary memory than its pool during run(); "
                  "those runs allocated");
    if (s->dtype == KBR_I32) {
        uint32_t got;
        memcpy(&got, s->h_out, sizeof got);
        out->measure = "mismatches";
        out->error = got != s->ref_u32;
        out->tolerance = 0;
        out->passed = got == s->ref_u32;
        return KB_OK;
    }
    double got;
    double u;
    if (s->dtype == KBR_F32) {
        float f;
        memcpy(&f, s->h_out, sizeof f);
        got = f;
        u = ldexp(1.0, -24);
    } else {
        memcpy(&got, s->h_out, sizeof got);
        u = ldexp(1.0, -53);
    }
    double d = kbr_depth(s, v, host);
    out->measure = "abs";
    out->tolerance = (d * u + (double)s->n * ldexp(1.0, -64)) * s->abs_sum;
    if (!isfinite(got)) {
        /* NaN or infinity never passes (a poisoned output reads as NaN). */
        out->error = got;
        out->passed = 0;
        return KB_OK;
    }
    out->error = (double)fabsl((long double)got - s->ref);
    out->passed = out->error <= out->tolerance;
    return KB_OK;
}
