/*
 * transpose.c -- the transpose family: out-of-place transposition of a rows x
 * cols matrix, from a blocked CPU loop through the tutorial's kernels (naive,
 * shared-memory tiles, register tiles) to a kernel at the copy ceiling, beside
 * cuBLAS's geam and a plain device-to-device copy of the same bytes.
 *
 * This file holds the descriptor (its variants are the rows of
 * transpose_variants.def), plan(), the inputs, the two CPU variants and
 * verify().  The kernels are in transpose_kernels.cu, cuBLAS in
 * transpose_lib.cu; buffers, CUDA checks, threads and input generators come
 * from the kit.  Without a GPU (host->stream == NULL) no CUDA function is
 * called here.
 *
 * Correctness is exact.  A transpose moves bits and computes nothing, so every
 * output element must equal its input element bit for bit: verify() counts the
 * elements that differ (measure "mismatches", tolerance 0).  The reference is
 * the input itself, read at the transposed index, so no second copy of the
 * matrix is kept.  Inputs are never zero (f32, f64: uniform in [-1, 1); u16:
 * random non-zero words), so an element left unwritten, written twice or
 * written to the wrong place shows.  The copy variant's output is checked
 * against the input in the same order (it is the ceiling, not a transpose).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "transpose.h"

/* ---- the descriptor ------------------------------------------------------ */

static const char *const dtype_choices[] = {"f32", "f64", "u16"};

static const kb_param params[KBT_N_PARAMS] = {
    [KBT_P_ROWS] = {.name = "rows", .type = KB_PARAM_SIZE, .def = "2048", .min = 1,
                    .max = 2147483647.0, .help = "rows of the input (columns of the output)"},
    [KBT_P_COLS] = {.name = "cols", .type = KB_PARAM_SIZE, .def = "512", .min = 1,
                    .max = 2147483647.0, .help = "columns of the input (rows of the output)"},
    [KBT_P_DTYPE] = {.name = "dtype", .type = KB_PARAM_ENUM, .def = "f32",
                     KB_CHOICES(dtype_choices),
                     .help = "element type: f32, f64, or u16 (any 2-byte type: bits are moved)"},
    [KBT_P_BLOCK_X] = {.name = "block_x", .type = KB_PARAM_INT, .def = "32", .min = 1, .max = 1024,
                       .help = "threads per block along the columns (naive, naive-mirror: along "
                               "the coalesced side; reg4, reg2)"},
    [KBT_P_BLOCK_Y] = {.name = "block_y", .type = KB_PARAM_INT, .def = "8", .min = 1, .max = 1024,
                       .help = "threads per block along the rows; block_x * block_y <= 1024"},
    [KBT_P_BAND] = {.name = "band", .type = KB_PARAM_INT, .def = "0", .min = 0,
                    .max = 2147483647.0,
                    .help = "window, vec16-band (and -hoist), ragged, tma: tile order, tiles "
                            "walked column by column in bands of this many tile rows; 0 = one band "
                            "(column-major: each output row written in one stretch), "
                            "1 = row-major"},
    [KBT_P_STREAMING] = {.name = "streaming", .type = KB_PARAM_BOOL, .def = "0",
                         .help = "window, vec16-band (and -hoist), ragged, tma: streaming "
                                 "(evict-first: st.global.cs, or tma's L2 policy) stores of the "
                                 "output"},
};

static int run_cpu(kbt_state *s, const kbt_impl *impl, kb_host *host);
static int run_cpu_parallel(kbt_state *s, const kbt_impl *impl, kb_host *host);

/* The parameters a row's code reads, for kb_variant.uses. */
#define U_BASE (KB_USES(KBT_P_ROWS) | KB_USES(KBT_P_COLS) | KB_USES(KBT_P_DTYPE))
#define U_BLOCK (KB_USES(KBT_P_BLOCK_X) | KB_USES(KBT_P_BLOCK_Y))
#define U_ORDER (KB_USES(KBT_P_BAND) | KB_USES(KBT_P_STREAMING))

/* The table (transpose_variants.def, rows KBT_VARIANT): variants[],
   impls[], KBK_N_VARIANTS and the guards (kbench/kit_family.h). */
#define KBT_VARIANT KBK_ROW
#define KBK_FAMILY_NAME "transpose"
#define KBK_FAMILY_IMPL kbt_impl
#define KBK_FAMILY_DEF "transpose_variants.def"
#include "kbench/kit_family.h"

KBK_FAMILY_PLUGIN(kbt,
                  "out-of-place matrix transpose (f32, f64, u16): the tutorial's path, a kernel "
                  "at the copy ceiling, cuBLAS geam and the copy itself",
                  "elements")

/* ---- helpers ---------------------------------------------------------------- */

static size_t dtype_size(int dtype) { return dtype == KBT_F64 ? 8 : dtype == KBT_U16 ? 2 : 4; }

/* The threads a CUDA block may have: a block_x x block_y shape above it is
   not for the variants that take their block from the file (U_BLOCK). */
#define KBT_MAX_BLOCK_THREADS 1024

/* Whether block_x * block_y fits a block; else one sentence into why. */
static int block_fits(const kb_value *p, char *why, size_t n)
{
    int64_t bx = p[KBT_P_BLOCK_X].i, by = p[KBT_P_BLOCK_Y].i;
    if (bx * by <= KBT_MAX_BLOCK_THREADS)
        return 1;
    snprintf(why, n,
             "transpose: block_x * block_y = %lld * %lld is more than the %d threads a block "
             "may have",
             (long long)bx, (long long)by, KBT_MAX_BLOCK_THREADS);
    return 0;
}

/* Checks the parameters and computes the matrix's bytes. */
static int sizes_of(const kb_value *p, uint64_t *bytes, kb_host *host)
{
    uint64_t rows = p[KBT_P_ROWS].u, cols = p[KBT_P_COLS].u;
    size_t es = dtype_size((int)p[KBT_P_DTYPE].i);
    if (rows < 1 || cols < 1)
        return host->fail(host, KB_EINVAL, "transpose: rows and cols must be at least 1");
    /* rows, cols <= 2^31 - 1 (the declared range), so rows * cols < 2^62 and
       times 8 bytes stays under 2^65: check against 2^63 per side. */
    uint64_t n = rows * cols;
    if (n > (UINT64_MAX / 4) / es)
        return host->fail(host, KB_EINVAL,
                          "transpose: %llu x %llu elements of %zu bytes overflow a 64-bit byte "
                          "count",
                          (unsigned long long)rows, (unsigned long long)cols, es);
    *bytes = n * es;
    return KB_OK;
}

/* ---- plan ------------------------------------------------------------------- */

static int kbt_plan(const kb_value *p, kb_work *out, kb_host *host)
{
    uint64_t bytes = 0;
    int rc = sizes_of(p, &bytes, host);
    if (rc)
        return rc;
    /* A block shape too large for a CUDA block is not for the variants that
       take it from the file; the others (the CPU loops, the fixed-tile
       kernels, the library) ignore it and still run.  A kbench older than
       ABI 2.3 cannot refuse one variant: there the point is refused. */
    char why[200];
    if (!block_fits(p, why, sizeof why)) {
        if (!kb_host_can_refuse(host))
            return host->fail(host, KB_EINVAL, "%s", why);
        for (uint32_t v = 0; v < KBK_N_VARIANTS; v++)
            if (variants[v].uses & U_BLOCK)
                host->refuse(host, v, "%s", why);
    }
    out->bytes_read = bytes;
    out->bytes_written = bytes;
    out->flops = 0;
    out->items = p[KBT_P_ROWS].u * p[KBT_P_COLS].u;
    out->host_bytes = 2 * bytes;
    out->device_bytes = 2 * bytes + KBT_CUBLAS_ALLOWANCE;
    return KB_OK;
}

/* ---- inputs ---------------------------------------------------------------- */

typedef struct fill_job {
    uint16_t *dst;
    uint64_t seed;
} fill_job;

/* u16: the low 16 bits of the generator's element i, never zero and never
   0xffff (the poison), so that an unwritten element always shows. */
static int fill_u16_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    const fill_job *j = ctx;
    (void)worker;
    for (uint64_t i = begin; i < end; i++) {
        uint16_t w = (uint16_t)kb_rand_u64(j->seed, 0, i);
        j->dst[i] = w == 0 ? 1 : w == 0xffff ? 0xfffe : w;
    }
    return KB_OK;
}

static int fill_inputs(kbt_state *s, kb_host *host)
{
    uint64_t n = s->rows * s->cols;
    if (s->dtype == KBT_F32)
        return kbk_fill_uniform_f32(host, s->in.host, n, 0, -1.0, 1.0);
    if (s->dtype == KBT_F64)
        return kbk_fill_uniform_f64(host, s->in.host, n, 0, -1.0, 1.0);
    fill_job j = {.dst = s->in.host, .seed = host->seed};
    return kbk_parallel_for(host, n, fill_u16_range, &j);
}

/* ---- setup and teardown ---------------------------------------------------- */

/* setup() is written in two halves (kbench/kit.h, KBK_PREFETCH): the host
   half makes the state and the inputs without CUDA, so that kbench can
   make them while the point before runs on the GPU; the device half adds
   the device copies and cuBLAS. */
KBK_PREFETCH(kbt);

static int kbt_setup_host(const kb_value *p, uint64_t vmask, kb_host *host, void **state)
{
    uint64_t bytes = 0;
    int rc = sizes_of(p, &bytes, host);
    if (rc)
        return rc;
    char why[200];
    for (uint32_t v = 0; v < KBK_N_VARIANTS; v++)
        if ((vmask & KB_VARIANT_BIT(v)) && (variants[v].uses & U_BLOCK) &&
            !block_fits(p, why, sizeof why))
            return host->fail(host, KB_EINVAL, "%s", why);
    kbt_state *s = calloc(1, sizeof *s);
    if (!s)
        return host->fail(host, KB_ENOMEM, "transpose: out of host memory for the state");
    *state = s;
    s->rows = p[KBT_P_ROWS].u;
    s->cols = p[KBT_P_COLS].u;
    s->dtype = (int)p[KBT_P_DTYPE].i;
    s->esize = dtype_size(s->dtype);
    s->block_x = (int)p[KBT_P_BLOCK_X].i;
    s->block_y = (int)p[KBT_P_BLOCK_Y].i;
    s->band = (uint64_t)p[KBT_P_BAND].i;
    s->streaming = (int)p[KBT_P_STREAMING].i;
    s->gpu = 0; /* until the device half */
    /* The device's facts reach the host half (not its stream). */
    s->sm_count = host->sm_count > 0 ? host->sm_count : 132;
    s->variants = vmask;
    s->needs = kbk_needs_of(vmask);
    if (bytes > SIZE_MAX)
        return host->fail(host, KB_ENOMEM, "transpose: %llu bytes do not fit in memory",
                          (unsigned long long)bytes);
    /* Host copies only: the device half adds the device copies and pins
       these. */
    if ((rc = kbk_buf_alloc(host, &s->in, (size_t)bytes, KBK_HOST)) ||
        (rc = kbk_buf_alloc(host, &s->out, (size_t)bytes, KBK_HOST)) || (rc = fill_inputs(s, host)))
        return rc;
    return KB_OK;
}

static int kbt_setup_device(void *state, uint64_t vmask, kb_host *host)
{
    kbt_state *s = state;
    s->gpu = host->stream != NULL;
    if (!s->gpu)
        return KB_OK;
    /* The variants that run: the device memory check may have admitted
       fewer than the host half was told of. */
    s->variants = vmask;
    s->needs = kbk_needs_of(vmask);
    int rc;
    if ((rc = kbk_buf_attach(host, &s->in)) || (rc = kbk_buf_attach(host, &s->out)) ||
        (rc = kbk_buf_upload(host, &s->in)))
        return rc;
    KBK_CUDA(host, cudaStreamSynchronize((cudaStream_t)host->stream));
    if (s->needs & KBT_NEEDS_CUBLAS)
        return kbt_cublas_setup(s, host);
    return KB_OK;
}

static void kbt_teardown(void *state, kb_host *host)
{
    kbt_state *s = state;
    if (!s)
        return;
    kbt_cublas_teardown(s, host); /* accepts a state without a handle */
    kbt_tma_teardown(s);          /* accepts a state without tma's data */
    kbk_buf_free(host, &s->in);
    kbk_buf_free(host, &s->out);
    free(s);
}

/* ---- prepare, upload, download ------------------------------------------- */

/* Whether variant v can run this point: its dtypes, cuBLAS's int sizes. */
static int unsupported(kbt_state *s, uint32_t v, kb_host *host)
{
    const kbt_impl *impl = &impls[v];
    if (impl->dtypes && !(impl->dtypes & KBT_DTYPE_BIT(s->dtype))) {
        char names[32] = "";
        for (int d = 0; d < KBT_N_DTYPES; d++)
            if (impl->dtypes & KBT_DTYPE_BIT(d)) {
                if (names[0])
                    strcat(names, ", ");
                strcat(names, dtype_choices[d]);
            }
        return host->fail(host, KB_EUNSUPPORTED, "transpose: %s runs with dtype = %s only",
                          variants[v].name, names);
    }
    if ((impl->needs & KBT_NEEDS_CUBLAS) &&
        (s->rows > KBT_CUBLAS_MAX || s->cols > KBT_CUBLAS_MAX))
        return host->fail(host, KB_EUNSUPPORTED,
                          "transpose: %s takes at most 2^31 - 1 rows and columns",
                          variants[v].name);
    return KB_OK;
}

static int kbt_prepare(void *state, uint32_t v, kb_host *host)
{
    kbt_state *s = state;
    int rc = kbk_variant_ok(host, v);
    if (rc || (rc = unsupported(s, v, host)))
        return rc;
    /* 0xff bytes: NaN in f32 and f64, 0xffff in u16; no input element has
       those bits (floats are finite, u16 words skip 0xffff), so every element
       a variant leaves unwritten is counted by verify(). */
    if ((rc = kbk_buf_poison(host, &s->out, 0xff)))
        return rc;
    if (s->gpu) {
        if (impls[v].prepare && (rc = impls[v].prepare(s, host)))
            return rc;
        KBK_CUDA(host, cudaStreamSynchronize((cudaStream_t)host->stream));
    }
    return KB_OK;
}

static int kbt_upload(void *state, uint32_t v, kb_host *host)
{
    kbt_state *s = state;
    if (!s->gpu || !kbk_is_cuda(v))
        return KB_OK;
    return kbk_buf_upload(host, &s->in);
}

static int kbt_download(void *state, uint32_t v, kb_host *host)
{
    kbt_state *s = state;
    if (!s->gpu || !kbk_is_cuda(v))
        return KB_OK;
    return kbk_buf_download(host, &s->out);
}

/* ---- the CPU variants -------------------------------------------------------
 * The matrix is cut into KBT_CPU_BLOCK x KBT_CPU_BLOCK blocks (edge blocks
 * smaller); a block's 32 input rows and 32 output rows stay in the cache
 * while it is moved.  Blocks are numbered row of blocks by row of blocks;
 * cpu walks them all, cpu-parallel gives each worker a contiguous range.
 * Elements are moved as integers of their width (bits, not values).
 * ------------------------------------------------------------------------- */
#define DEFINE_BLOCKS(NAME, T)                                                                 \
    static void NAME(const void *inp, void *outp, uint64_t rows, uint64_t cols, uint64_t b0,    \
                     uint64_t b1)                                                               \
    {                                                                                           \
        const T *in = inp;                                                                      \
        T *out = outp;                                                                          \
        uint64_t bc = kbt_ceil_div(cols, KBT_CPU_BLOCK);                                        \
        for (uint64_t b = b0; b < b1; b++) {                                                    \
            uint64_t r0 = (b / bc) * KBT_CPU_BLOCK, c0 = (b % bc) * KBT_CPU_BLOCK;              \
            uint64_t r1 = r0 + KBT_CPU_BLOCK < rows ? r0 + KBT_CPU_BLOCK : rows;                \
            uint64_t c1 = c0 + KBT_CPU_BLOCK < cols ? c0 + KBT_CPU_BLOCK : cols;                \
            for (uint64_t r = r0; r < r1; r++)                                                  \
                for (uint64_t c = c0; c < c1; c++)                                              \
                    out[c * rows + r] = in[r * cols + c];                                       \
        }                                                                                       \
    }
DEFINE_BLOCKS(blocks_32, uint32_t)
DEFINE_BLOCKS(blocks_64, uint64_t)
DEFINE_BLOCKS(blocks_16, uint16_t)

static uint64_t n_blocks(const kbt_state *s)
{
    return kbt_ceil_div(s->rows, KBT_CPU_BLOCK) * kbt_ceil_div(s->cols, KBT_CPU_BLOCK);
}

static void move_blocks(const kbt_state *s, uint64_t b0, uint64_t b1)
{
    if (s->esize == 4)
        blocks_32(s->in.host, s->out.host, s->rows, s->cols, b0, b1);
    else if (s->esize == 8)
        blocks_64(s->in.host, s->out.host, s->rows, s->cols, b0, b1);
    else
        blocks_16(s->in.host, s->out.host, s->rows, s->cols, b0, b1);
}

static int run_cpu(kbt_state *s, const kbt_impl *impl, kb_host *host)
{
    (void)impl;
    (void)host;
    move_blocks(s, 0, n_blocks(s));
    return KB_OK;
}

static int cpu_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    move_blocks(ctx, begin, end);
    return KB_OK;
}

static int run_cpu_parallel(kbt_state *s, const kbt_impl *impl, kb_host *host)
{
    (void)impl;
    return kbk_parallel_for(host, n_blocks(s), cpu_range, s);
}

static int kbt_run(void *state, uint32_t v, kb_host *host)
{
    kbt_state *s = state;
    int rc = kbk_variant_runs(host, v);
    if (rc || (rc = unsupported(s, v, host)))
        return rc;
    return impls[v].run(s, &impls[v], host);
}

/* ---- verification ------------------------------------------------------------
 * Exact: the number of output elements whose bits differ from the input
 * element they must hold, over the same blocks as the CPU variants (so that
 * the strided side stays in the cache), each worker counting its own range
 * and noting its first bad element.
 * ------------------------------------------------------------------------- */
typedef struct verify_job {
    const kbt_state *s;
    int copy;            /* compare out[i] with in[i] (the copy variant)  */
    uint64_t *bad;       /* per worker                                    */
    uint64_t *first;     /* per worker: the first bad output index, or UINT64_MAX */
} verify_job;

#define DEFINE_COUNT(NAME, T)                                                                  \
    static void NAME(const kbt_state *s, int copy, uint64_t b0, uint64_t b1, uint64_t *bad,     \
                     uint64_t *first)                                                           \
    {                                                                                           \
        const T *in = s->in.host, *out = s->out.host;                                           \
        uint64_t rows = s->rows, cols = s->cols;                                                \
        uint64_t bc = kbt_ceil_div(cols, KBT_CPU_BLOCK);                                        \
        for (uint64_t b = b0; b < b1; b++) {                                                    \
            uint64_t r0 = (b / bc) * KBT_CPU_BLOCK, c0 = (b % bc) * KBT_CPU_BLOCK;              \
            uint64_t r1 = r0 + KBT_CPU_BLOCK < rows ? r0 + KBT_CPU_BLOCK : rows;                \
            uint64_t c1 = c0 + KBT_CPU_BLOCK < cols ? c0 + KBT_CPU_BLOCK : cols;                \
            for (uint64_t r = r0; r < r1; r++)                                                  \
                for (uint64_t c = c0; c < c1; c++) {                                            \
                    uint64_t o = copy ? r * cols + c : c * rows + r;                            \
                    if (out[o] != in[r * cols + c]) {                                           \
                        (*bad)++;                                                               \
                        if (o < *first)                                                         \
                            *first = o;                                                         \
                    }                                                                           \
                }                                                                               \
        }                                                                                       \
    }
DEFINE_COUNT(count_32, uint32_t)
DEFINE_COUNT(count_64, uint64_t)
DEFINE_COUNT(count_16, uint16_t)

static int verify_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    const verify_job *j = ctx;
    uint64_t *bad = &j->bad[worker], *first = &j->first[worker];
    if (j->s->esize == 4)
        count_32(j->s, j->copy, begin, end, bad, first);
    else if (j->s->esize == 8)
        count_64(j->s, j->copy, begin, end, bad, first);
    else
        count_16(j->s, j->copy, begin, end, bad, first);
    return KB_OK;
}

static int kbt_verify(void *state, uint32_t v, kb_check *out, kb_host *host)
{
    kbt_state *s = state;
    if (kbk_variant_ok(host, v))
        return KB_EINVAL;
    int workers = host->cpu_threads > 1 ? host->cpu_threads : 1;
    uint64_t *bad = calloc((size_t)workers * 2, sizeof *bad);
    if (!bad)
        return host->fail(host, KB_ENOMEM, "transpose: out of host memory for verify");
    uint64_t *first = bad + workers;
    for (int k = 0; k < workers; k++)
        first[k] = UINT64_MAX;
    verify_job j = {.s = s, .copy = (impls[v].needs & KBT_OUTPUT_IS_COPY) != 0, .bad = bad,
                    .first = first};
    int rc = kbk_parallel_for(host, n_blocks(s), verify_range, &j);
    uint64_t total = 0, first_bad = UINT64_MAX;
    for (int k = 0; k < workers; k++) {
        total += bad[k];
        if (first[k] < first_bad)
            first_bad = first[k];
    }
    free(bad);
    if (rc)
        return rc;
    out->measure = "mismatches";
    out->error = (double)total;
    out->tolerance = 0;
    out->passed = total == 0;
    if (total)
        host->log(host, KB_LOG_DEBUG,
                  "transpose: %s: %llu elements wrong, the first at output index %llu",
                  variants[v].name, (unsigned long long)total, (unsigned long long)first_bad);
    return KB_OK;
}

/* ---- the test extension ------------------------------------------------------ */

static const void *test_input(const void *state) { return ((const kbt_state *)state)->in.host; }

static void *test_output(void *state) { return ((kbt_state *)state)->out.host; }

static const kbt_test_ext test_ext = {
    .size = sizeof(kbt_test_ext),
    .input = test_input,
    .output = test_output,
};

static const void *kbt_extension(const char *name)
{
    if (strcmp(name, KB_PREFETCH_EXTENSION) == 0)
        return &kbt_prefetch;
    return strcmp(name, KBT_TEST_EXTENSION) == 0 ? &test_ext : NULL;
}
