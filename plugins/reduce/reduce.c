/*
 * reduce.c -- the reduce family: the sum of n numbers, from a serial CPU loop
 * through the classic steps of a GPU reduction to a one-pass kernel and the
 * libraries (CUB, Thrust).
 *
 * This file holds the descriptor (its variants are the rows of
 * reduce_variants.def), plan(), the inputs and the reference, the two CPU
 * variants, the depth rules and verify().  The kernels are in
 * reduce_kernels.cu, the library calls in reduce_lib.cu; buffers, CUDA
 * checks, threads and input generators come from the kit (kbench/kit.h).
 * Without a GPU (host->stream == NULL) no CUDA function is called here.
 *
 * Inputs (the `inputs` parameter).  random: f32 and f64 draw uniformly from
 * [-1, 1): the signs mix, so the sum is much smaller than sum|x| and any
 * element counted twice or dropped moves the result; the error bound below is
 * relative to sum|x| and so does not depend on cancellation.  i32 draws
 * integers in [-100, 100], summed modulo 2^32 in unsigned arithmetic, so the
 * check is exact whatever the order of the additions: the i32 runs prove each
 * variant's indexing exactly, the float runs its rounding.  exact: every type
 * draws non-zero integers in [-k, k], with k so large that n*k <= 2^24 (f32)
 * or 2^53 (f64): every partial sum, in any order, is an integer the type holds,
 * so every variant's sum is exact and verify() demands equality (tolerance 0):
 * a dropped, doubled or misplaced element fails at any n.  f32 at n > 2^24 has
 * no such k and plan() refuses it.
 *
 * The error bound (README.md has the full derivation).  A sum computed by any
 * tree of additions in a format with unit roundoff u satisfies, to first
 * order, |s_hat - s| <= d * u * sum|x_i|, where d is the largest number of
 * additions any one element passes through on its way to the result.  Each
 * variant's d follows from its shape (its row's depth rule, depth_* below).
 * The reference is a long double sum (64-bit significand) whose own error,
 * n * 2^-64 * sum|x|, is added to the tolerance.  With exact inputs the
 * tolerance is 0.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "reduce.h"

/* ---- the descriptor ------------------------------------------------------ */

static const char *const dtype_choices[] = {"f32", "f64", "i32"};
static const char *const inputs_choices[] = {"random", "exact"};

static const kb_param params[KBR_N_PARAMS] = {
    [KBR_P_N] = {.name = "n", .type = KB_PARAM_SIZE, .def = "2^24", .min = 1,
                 .max = 4611686018427387904.0 /* 2^62 */, .help = "number of elements to sum"},
    [KBR_P_DTYPE] = {.name = "dtype", .type = KB_PARAM_ENUM, .def = "f32", KB_CHOICES(dtype_choices),
                     .help = "element type: f32, f64, or i32 (summed modulo 2^32)"},
    [KBR_P_BLOCK] = {.name = "block", .type = KB_PARAM_INT, .def = "256", .min = 32, .max = 1024,
                     .help = "threads per block (a power of two) for the classic variants; "
                             "also the cpu variant's chunk"},
    [KBR_P_ITEMS] = {.name = "items", .type = KB_PARAM_INT, .def = "8", .min = 1, .max = 64,
                     .help = "elements per thread for multi-element and shuffle"},
    [KBR_P_BULK_MIN] = {.name = "bulk_min", .type = KB_PARAM_SIZE, .def = "512M", .min = 0,
                        .max = 4611686018427387904.0,
                        .help = "onepass-bulk: input bytes from which the copy engine streams "
                                "(below, the onepass kernel runs)"},
    [KBR_P_INPUTS] = {.name = "inputs", .type = KB_PARAM_ENUM, .def = "random",
                      KB_CHOICES(inputs_choices),
                      .help = "random: floats uniform in [-1, 1), checked against a derived error "
                              "bound; exact: non-zero integers whose sums are exact in any order, "
                              "checked for equality (f32: n <= 2^24)"},
};

/* The CPU variants and the depth rules, named by the rows below. */
static int run_cpu(kbr_state *s, const kbr_impl *impl, kb_host *host);
static int run_cpu_parallel(kbr_state *s, const kbr_impl *impl, kb_host *host);
static double depth_cpu(const kbr_state *s, const kbr_impl *impl, kb_host *host);
static double depth_cpu_parallel(const kbr_state *s, const kbr_impl *impl, kb_host *host);
static double depth_classic(const kbr_state *s, const kbr_impl *impl, kb_host *host);
static double depth_onepass(const kbr_state *s, const kbr_impl *impl, kb_host *host);
static double depth_onepass_atomic(const kbr_state *s, const kbr_impl *impl, kb_host *host);
static double depth_onepass_bulk(const kbr_state *s, const kbr_impl *impl, kb_host *host);
static double depth_library(const kbr_state *s, const kbr_impl *impl, kb_host *host);

/* The parameters a row's code reads, for kb_variant.uses. */
#define U_BASE (KB_USES(KBR_P_N) | KB_USES(KBR_P_DTYPE) | KB_USES(KBR_P_INPUTS))
#define U_BLOCK KB_USES(KBR_P_BLOCK)
#define U_ITEMS KB_USES(KBR_P_ITEMS)
#define U_BULK_MIN KB_USES(KBR_P_BULK_MIN)

/* The table (reduce_variants.def, rows KBR_VARIANT): variants[], impls[],
   KBK_N_VARIANTS and the guards (kbench/kit_family.h). */
#define KBR_VARIANT KBK_ROW
#define KBK_FAMILY_NAME "reduce"
#define KBK_FAMILY_IMPL kbr_impl
#define KBK_FAMILY_DEF "reduce_variants.def"
#include "kbench/kit_family.h"

KBK_FAMILY_PLUGIN(kbr,
                  "sum of n numbers (f32, f64, i32): the classic GPU reduction path, a one-pass "
                  "kernel, CUB and Thrust",
                  "elements")

/* ---- small helpers -------------------------------------------------------- */

static size_t dtype_size(int dtype) { return dtype == KBR_F64 ? 8 : 4; }

static int is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

static uint32_t ilog2_ceil(uint64_t x)
{
    uint32_t k = 0;
    while ((1ull << k) < x)
        k++;
    return k;
}

/* Significand bits of the float types (f32: 24, f64: 53). */
static int mantissa_bits(int dtype) { return dtype == KBR_F64 ? 53 : 24; }

/* Exact inputs: the largest k such that n values in [-k, k] sum exactly in
   any order, every partial sum an integer of at most n*k <= 2^bits in
   magnitude; 0 when no k >= 1 does (f32 at n > 2^24).  i32 sums are exact
   modulo 2^32 whatever k is: KBR_EXACT_I32_K. */
static int32_t exact_bound(uint64_t n, int dtype)
{
    return dtype == KBR_I32 ? KBR_EXACT_I32_K : kbk_exact_bound(n, mantissa_bits(dtype));
}

/* Checks n, dtype, block and inputs, and computes the byte counts that plan() and
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
    int dtype = (int)p[KBR_P_DTYPE].i;
    if (p[KBR_P_INPUTS].i == KBR_EXACT && exact_bound(n, dtype) < 1)
        return host->fail(host, KB_EINVAL,
                          "reduce: inputs = exact needs n <= 2^%d in %s (every partial sum must "
                          "be an integer the type holds exactly), not n = %llu; use inputs = "
                          "random%s",
                          mantissa_bits(dtype), dtype_choices[dtype], (unsigned long long)n,
                          dtype == KBR_F32 ? " or dtype = f64" : "");
    z->in_bytes = n * es;
    /* Partial sums of the classic variants ping-pong between two buffers: the
       first pass writes at most ceil(n / block) values (one element per
       thread), the second ceil(that / block); later passes are smaller and
       reuse them.  Sizes rounded up to 16 bytes keep each buffer aligned. */
    z->ping_elems = kbr_ceil_div(n, (uint64_t)block);
    z->pong_elems = kbr_ceil_div(z->ping_elems, (uint64_t)block);
    /* The partials and the onepass finish are shared by several variants
       and small: counted whatever runs.  The libraries' storage is counted
       per variant (lib_bytes). */
    uint64_t scratch = (z->ping_elems + z->pong_elems) * es + 32 /* two roundings */ +
                       16 /* output */ + (uint64_t)KBR_ONEPASS_MAX_BLOCKS * 8 + 16 /* counter */;
    if (z->in_bytes > UINT64_MAX - scratch)
        return host->fail(host, KB_EINVAL,
                          "reduce: n = %llu needs more device memory than 64 bits can count",
                          (unsigned long long)n);
    z->device_bytes = z->in_bytes + scratch;
    z->host_bytes = z->in_bytes + 16 /* one output scalar */;
    return KB_OK;
}

/* ---- plan ----------------------------------------------------------------- */

/* The device memory a library variant adds (kb_work.variant_device_bytes):
   its temporary storage, which only a size query on the device can tell,
   so plan() states the allowance (reduce.h, KBR_LIB_TEMP_ALLOWANCE) and
   setup() warns when the library asks for more. */
static uint64_t lib_bytes(uint32_t needs)
{
    return (needs & KBR_NEEDS_CUB ? KBR_LIB_TEMP_ALLOWANCE : 0) +
           (needs & KBR_NEEDS_THRUST ? KBR_LIB_TEMP_ALLOWANCE : 0);
}

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
    for (uint32_t v = 0; v < KBK_N_VARIANTS; v++)
        kb_work_add_variant_bytes(out, host, v, lib_bytes(impls[v].needs));
    return KB_OK;
}

/* ---- inputs and reference -------------------------------------------------- */

/* The inputs, from the kit's generators on stream 0 (element i depends on
   (seed, i) alone; never zero). */
static int fill_inputs(kbr_state *s, kb_host *host)
{
    void *x = s->in.host;
    if (s->dtype == KBR_I32) /* exact in both modes */
        return kbk_fill_uniform_i32(host, x, s->n, 0, -KBR_EXACT_I32_K, KBR_EXACT_I32_K + 1);
    if (s->inputs == KBR_EXACT)
        return s->dtype == KBR_F32 ? kbk_fill_exact_f32(host, x, s->n, 0, s->exact_k)
                                   : kbk_fill_exact_f64(host, x, s->n, 0, s->exact_k);
    return s->dtype == KBR_F32 ? kbk_fill_uniform_f32(host, x, s->n, 0, -1.0, 1.0)
                               : kbk_fill_uniform_f64(host, x, s->n, 0, -1.0, 1.0);
}

/* The reference: each worker sums its range of the stored inputs, the
   workers' sums are joined in worker order, so it does not vary. */
typedef struct ref_part {
    long double sum;
    double abs_sum;
    uint32_t usum;
} ref_part;

typedef struct ref_job {
    const kbr_state *s;
    ref_part *part; /* one per worker */
} ref_job;

static int ref_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    const ref_job *j = ctx;
    const kbr_state *s = j->s;
    ref_part r = {0};
    if (s->dtype == KBR_I32) {
        const int32_t *x = s->in.host;
        for (uint64_t i = begin; i < end; i++)
            r.usum += (uint32_t)x[i];
    } else if (s->dtype == KBR_F32) {
        const float *x = s->in.host;
        for (uint64_t i = begin; i < end; i++) {
            r.sum += (long double)x[i];
            r.abs_sum += fabs((double)x[i]);
        }
    } else {
        const double *x = s->in.host;
        for (uint64_t i = begin; i < end; i++) {
            r.sum += (long double)x[i];
            r.abs_sum += fabs(x[i]);
        }
    }
    j->part[worker] = r;
    return KB_OK;
}

static int reference(kbr_state *s, kb_host *host)
{
    int workers = host->cpu_threads > 1 ? host->cpu_threads : 1;
    ref_part *part = calloc((size_t)workers, sizeof *part);
    if (!part)
        return host->fail(host, KB_ENOMEM, "reduce: out of host memory for the reference");
    ref_job j = {.s = s, .part = part};
    int rc = kbk_parallel_for(host, s->n, ref_range, &j);
    s->ref = 0;
    s->abs_sum = 0;
    s->ref_u32 = 0;
    for (int k = 0; k < workers; k++) { /* fixed order; unused workers hold zeros */
        s->ref += part[k].sum;
        s->abs_sum += part[k].abs_sum;
        s->ref_u32 += part[k].usum;
    }
    free(part);
    return rc;
}

/* ---- setup and teardown --------------------------------------------------- */

/* setup() is written in two halves (kbench/kit.h, KBK_PREFETCH): the host
   half makes the state, the inputs and the reference without CUDA, so that
   kbench can make it while the point before runs on the GPU; the device
   half adds the device copies, the scratch buffers and the libraries. */
KBK_PREFETCH(kbr);

static int kbr_setup_device(void *state, uint64_t vmask, kb_host *host)
{
    kbr_state *s = state;
    s->gpu = host->stream != NULL;
    if (!s->gpu)
        return KB_OK;
    /* The variants that run: the device memory check may have admitted
       fewer than the host half was told of. */
    s->variants = vmask;
    s->needs = kbk_needs_of(vmask);
    cudaStream_t st = (cudaStream_t)host->stream;
    int rc = KB_OK;
    /* With a GPU the host copies are pinned: the uploads run at full speed
       and asynchronously. */
    if ((rc = kbk_buf_attach(host, &s->in)) || (rc = kbk_buf_attach(host, &s->out)))
        return rc;
    if (s->needs & KBR_NEEDS_PARTIALS) {
        /* As kbr_sizes_of counts them. */
        uint64_t ping = kbr_ceil_div(s->n, s->block), pong = kbr_ceil_div(ping, s->block);
        if ((rc = kbk_buf_alloc(host, &s->ping, ping * s->esize + 16, KBK_DEVICE)) ||
            (rc = kbk_buf_alloc(host, &s->pong, pong * s->esize + 16, KBK_DEVICE)))
            return rc;
    }
    if (s->needs & KBR_NEEDS_FINISH) {
        if ((rc = kbk_buf_alloc(host, &s->blk, (size_t)KBR_ONEPASS_MAX_BLOCKS * 8, KBK_DEVICE)) ||
            (rc = kbk_buf_alloc(host, &s->counter, 16, KBK_DEVICE)))
            return rc;
        /* The last block of each onepass launch resets the counter to zero. */
        KBK_CUDA(host, cudaMemsetAsync(s->counter.dev, 0, 16, st));
    }
    if ((rc = kbk_buf_upload(host, &s->in)))
        return rc;
    KBK_CUDA(host, cudaStreamSynchronize(st));
    if (s->needs & (KBR_NEEDS_CUB | KBR_NEEDS_THRUST))
        return kbr_lib_setup(s, host);
    return KB_OK;
}

static int kbr_setup_host(const kb_value *p, uint64_t vmask, kb_host *host, void **state)
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
    s->inputs = (int)p[KBR_P_INPUTS].i;
    s->exact_k = exact_bound(s->n, s->dtype);
    s->gpu = 0; /* until the device half */
    /* The device's facts reach the host half (not its stream). */
    s->sm_count = host->sm_count > 0 ? host->sm_count : (int)KBR_DEFAULT_SMS;
    s->variants = vmask;
    s->needs = kbk_needs_of(vmask);
    if (z.in_bytes > SIZE_MAX)
        return host->fail(host, KB_ENOMEM, "reduce: %llu bytes of input do not fit in memory",
                          (unsigned long long)z.in_bytes);
    /* Host copies only: the device half adds the device copies and pins
       these. */
    if ((rc = kbk_buf_alloc(host, &s->in, (size_t)z.in_bytes, KBK_HOST)) ||
        (rc = kbk_buf_alloc(host, &s->out, s->esize, KBK_HOST)) ||
        (rc = fill_inputs(s, host)) || (rc = reference(s, host)))
        return rc;
    return KB_OK;
}

static void kbr_teardown(void *state, kb_host *host)
{
    kbr_state *s = state;
    if (!s)
        return;
    /* kbk_buf_free ignores errors (teardown frees what it can) and empty
       buffers; without a GPU no buffer has a device copy. */
    kbk_buf *bufs[] = {&s->in, &s->out, &s->ping, &s->pong, &s->blk, &s->counter,
                       &s->cub_temp, &s->thrust_pool};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        kbk_buf_free(host, bufs[k]);
    free(s);
}

/* ---- prepare, upload, download -------------------------------------------- */

/* Whether variant v can run this point: its dtypes, and a grid that fits. */
static int unsupported(kbr_state *s, uint32_t v, kb_host *host)
{
    const kbr_impl *impl = &impls[v];
    if (impl->dtypes && !(impl->dtypes & KBR_DTYPE_BIT(s->dtype))) {
        char names[32] = "";
        for (int d = 0; d < (int)(sizeof dtype_choices / sizeof dtype_choices[0]); d++)
            if (impl->dtypes & KBR_DTYPE_BIT(d)) {
                if (names[0])
                    strcat(names, ", ");
                strcat(names, dtype_choices[d]);
            }
        return host->fail(host, KB_EUNSUPPORTED, "reduce: %s runs with dtype = %s only",
                          variants[v].name, names);
    }
    if ((impl->needs & KBR_NEEDS_PARTIALS) &&
        kbr_pass_blocks(&impl->pass, s->n, s->block, s->items, s->sm_count) > KBR_MAX_GRID)
        return host->fail(host, KB_EUNSUPPORTED,
                          "reduce: %s needs more than 2^31-1 blocks for n = %llu; raise block",
                          variants[v].name, (unsigned long long)s->n);
    return KB_OK;
}

static int kbr_prepare(void *state, uint32_t v, kb_host *host)
{
    kbr_state *s = state;
    int rc = kbk_variant_ok(host, v);
    if (rc || (rc = unsupported(s, v, host)))
        return rc;
    /* 0xff bytes are NaN in f32 and f64 and -1 in i32, which no correct sum of
       these inputs may be expected to equal by accident (verify rejects NaN). */
    memset(s->lib_result, 0xff, sizeof s->lib_result);
    if ((rc = kbk_buf_poison(host, &s->out, 0xff)))
        return rc;
    if (s->gpu)
        KBK_CUDA(host, cudaStreamSynchronize((cudaStream_t)host->stream));
    return KB_OK;
}

static int kbr_upload(void *state, uint32_t v, kb_host *host)
{
    kbr_state *s = state;
    if (!s->gpu || !kbk_is_cuda(v))
        return KB_OK;
    return kbk_buf_upload(host, &s->in);
}

static int kbr_download(void *state, uint32_t v, kb_host *host)
{
    kbr_state *s = state;
    if (!s->gpu || !kbk_is_cuda(v))
        return KB_OK;
    if (impls[v].needs & KBR_RESULT_ON_HOST) {
        /* The variant already handed its sum to the host in run(). */
        memcpy(s->out.host, s->lib_result, s->esize);
        return KB_OK;
    }
    return kbk_buf_download(host, &s->out);
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

/* Threads the parallel variant uses for n elements: host->cpu_threads (1 ..
   KBK_MAX_THREADS), at most one per chunk. */
static int par_threads(uint64_t n, kb_host *host)
{
    int t = host->cpu_threads < 1 ? 1 : host->cpu_threads;
    if (t > KBK_MAX_THREADS)
        t = KBK_MAX_THREADS;
    uint64_t chunks = kbr_ceil_div(n, KBR_PAR_CHUNK);
    return (uint64_t)t > chunks ? (int)chunks : t;
}

/* Thread k's share is [k * per, (k + 1) * per): whole chunks, the same as in
   the bound verify() derives.  kbk_parallel_for runs over the t shares, one
   per worker (t is at most host->cpu_threads), and each writes its sum to
   out[k]; the caller adds them in order. */
typedef struct par_job {
    const kbr_state *s;
    uint64_t per;
    unsigned char (*out)[8];
} par_job;

static int par_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    const par_job *j = ctx;
    const kbr_state *s = j->s;
    for (uint64_t k = begin; k < end; k++) {
        uint64_t lo = j->per * k, hi = j->per * (k + 1);
        lo = lo < s->n ? lo : s->n;
        hi = hi < s->n ? hi : s->n;
        if (s->dtype == KBR_F32) {
            float r = lanes_f32(s->in.host, lo, hi, KBR_PAR_CHUNK);
            memcpy(j->out[k], &r, sizeof r);
        } else if (s->dtype == KBR_F64) {
            double r = lanes_f64(s->in.host, lo, hi, KBR_PAR_CHUNK);
            memcpy(j->out[k], &r, sizeof r);
        } else {
            uint32_t r = lanes_u32(s->in.host, lo, hi, KBR_PAR_CHUNK);
            memcpy(j->out[k], &r, sizeof r);
        }
    }
    return KB_OK;
}

static int run_cpu_parallel(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    int t = par_threads(s->n, host);
    unsigned char out[KBK_MAX_THREADS][8];
    par_job j = {.s = s,
                 .per = kbr_ceil_div(kbr_ceil_div(s->n, KBR_PAR_CHUNK), (uint64_t)t) *
                        KBR_PAR_CHUNK,
                 .out = out};
    int rc = kbk_parallel_for(host, (uint64_t)t, par_range, &j);
    if (rc)
        return rc;
    float f = 0;
    double d = 0;
    uint32_t u = 0;
    for (int k = 0; k < t; k++) {
        float jf;
        double jd;
        uint32_t ju;
        memcpy(&jf, out[k], sizeof jf);
        memcpy(&jd, out[k], sizeof jd);
        memcpy(&ju, out[k], sizeof ju);
        f += jf;
        d += jd;
        u += ju;
    }
    if (s->dtype == KBR_F32)
        memcpy(s->out.host, &f, sizeof f);
    else if (s->dtype == KBR_F64)
        memcpy(s->out.host, &d, sizeof d);
    else
        memcpy(s->out.host, &u, sizeof u);
    return KB_OK;
}

static int run_cpu(kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    if (s->dtype == KBR_F32) {
        float r = chunked_f32(s->in.host, 0, s->n, s->block);
        memcpy(s->out.host, &r, sizeof r);
    } else if (s->dtype == KBR_F64) {
        double r = chunked_f64(s->in.host, 0, s->n, s->block);
        memcpy(s->out.host, &r, sizeof r);
    } else {
        uint32_t r = chunked_u32(s->in.host, 0, s->n, s->block);
        memcpy(s->out.host, &r, sizeof r);
    }
    return KB_OK;
}

static int kbr_run(void *state, uint32_t v, kb_host *host)
{
    kbr_state *s = state;
    int rc = kbk_variant_runs(host, v);
    if (rc || (kbk_is_cuda(v) && (rc = unsupported(s, v, host))))
        return rc;
    return impls[v].run(s, &impls[v], host);
}

/* ---- verification -----------------------------------------------------------
 * The depth rules: d, the most additions any one element passes through (see
 * the file comment and README.md).  Additions of the zeros that pad a partial
 * block are exact and are counted anyway, which only loosens d by a little.
 * ------------------------------------------------------------------------- */

/* cpu: block - 1 additions inside a chunk, then one per later chunk sum. */
static double depth_cpu(const kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    return (double)s->block + (double)kbr_ceil_div(s->n, s->block);
}

/* cpu-parallel: a lane holds chunk/8 elements, three pairwise levels join the
   lanes, the thread adds its chunks serially, the caller its t totals. */
static double depth_cpu_parallel(const kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    int t = par_threads(s->n, host);
    uint64_t per = kbr_ceil_div(kbr_ceil_div(s->n, KBR_PAR_CHUNK), (uint64_t)t);
    return (double)(KBR_PAR_CHUNK / KBR_LANES) + 3 + (double)per + (double)t;
}

/* The classic variants: each pass adds the elements a thread owns serially,
   then a tree of log2(block) levels; passes repeat on the partial sums until
   one block is left. */
static double depth_classic(const kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    double d = 0;
    uint64_t cnt = s->n;
    uint32_t pb = kbr_pass_block(&impl->pass, s->block);
    for (;;) {
        uint64_t b = kbr_pass_blocks(&impl->pass, cnt, s->block, s->items, s->sm_count);
        d += (double)kbr_ceil_div(cnt, b * pb) + ilog2_ceil(pb);
        if (b <= 1)
            break;
        cnt = b;
    }
    return d;
}

/* onepass up to its block tree.  Per thread: its vectors, split over UNROLL
   accumulators (each at most per_thread serial additions), log2(w) inside a
   vector, UNROLL - 1 to join the accumulators (the kernel adds them one after
   another), two for the scalar head and tail; then the block tree. */
static double depth_onepass_blocks(const kbr_state *s, uint64_t *grid)
{
    uint64_t w = 16 / s->esize;
    uint64_t g = kbr_onepass_blocks(s->n, s->esize, s->sm_count);
    uint64_t per_thread = kbr_ceil_div(s->n / w, g * KBR_ONEPASS_BLOCK);
    *grid = g;
    return (double)per_thread + ilog2_ceil(w) + (KBR_ONEPASS_UNROLL - 1) + 2 +
           ilog2_ceil(KBR_ONEPASS_BLOCK);
}

/* onepass: then the finish, serial over the partials a thread owns plus a
   block tree. */
static double depth_onepass(const kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    uint64_t g;
    double d = depth_onepass_blocks(s, &g);
    return d + (double)kbr_ceil_div(g, KBR_ONEPASS_BLOCK) + ilog2_ceil(KBR_ONEPASS_BLOCK);
}

/* onepass-atomic: then up to g serial atomic additions. */
static double depth_onepass_atomic(const kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    uint64_t g;
    double d = depth_onepass_blocks(s, &g);
    return d + (double)g;
}

/* onepass-bulk: the larger of a block partial's path and a dynamic chunk's
   (below bulk_min bytes, onepass's). */
static double depth_onepass_bulk(const kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    uint64_t n = s->n;
    if (!kbr_bulk_path(n, s->esize, s->bulk_min))
        return depth_onepass(s, impl, host);
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

/* cub, thrust: the libraries' code is not ours; this bound assumes only their
   documented shape: a first pass whose grid has at least one block of 32 or
   more threads per multiprocessor once n fills the device, each thread
   summing its share serially (a small n runs as one tile of at most 64 items
   per thread), then at most one more pass, each with a block tree of at most
   1024 threads. */
static double depth_library(const kbr_state *s, const kbr_impl *impl, kb_host *host)
{
    double share = (double)kbr_ceil_div(s->n, (uint64_t)s->sm_count * 32);
    return (share > 64 ? share : 64) + 2 * 10 + 2;
}

static int kbr_verify(void *state, uint32_t v, kb_check *out, kb_host *host)
{
    kbr_state *s = state;
    int rc = kbk_variant_ok(host, v);
    if (rc)
        return rc;
    if ((impls[v].needs & KBR_NEEDS_THRUST) && s->thrust_fallback)
        host->log(host, KB_LOG_WARN,
                  "reduce: thrust asked for more temporary memory than its pool during run(); "
                  "those runs allocated");
    if (s->dtype == KBR_I32) {
        uint32_t got;
        memcpy(&got, s->out.host, sizeof got);
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
        memcpy(&f, s->out.host, sizeof f);
        got = f;
        u = ldexp(1.0, -24);
    } else {
        memcpy(&got, s->out.host, sizeof got);
        u = ldexp(1.0, -53);
    }
    out->measure = "abs";
    if (s->inputs == KBR_EXACT) {
        /* Every partial sum is an integer the type holds: the sum is exact. */
        out->tolerance = 0;
    } else {
        double d = impls[v].depth(s, &impls[v], host);
        out->tolerance = (d * u + (double)s->n * ldexp(1.0, -64)) * s->abs_sum;
    }
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

/* ---- the test extension ------------------------------------------------------ */

static const void *test_input(const void *state) { return ((const kbr_state *)state)->in.host; }

static void *test_output(void *state) { return ((kbr_state *)state)->out.host; }

static const kbr_test_ext test_ext = {
    .size = sizeof(kbr_test_ext),
    .input = test_input,
    .output = test_output,
};

static const void *kbr_extension(const char *name)
{
    if (strcmp(name, KB_PREFETCH_EXTENSION) == 0)
        return &kbr_prefetch;
    return strcmp(name, KBR_TEST_EXTENSION) == 0 ? &test_ext : NULL;
}
