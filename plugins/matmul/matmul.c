/*
 * matmul.c -- the matmul family: C = A * B, row-major, f32 output, any m, n,
 * k >= 1, from the tutorial's triple loop and tiled kernel along the SGEMM
 * path to cublasSgemm, and on the tensor cores (precisions tf32, bf16 and
 * fp32x3) against cuBLAS on the tensor cores.
 *
 * This file holds the descriptor (its variants are the rows of
 * matmul_variants.def), plan(), the inputs (rounded to the precision once)
 * and the reference, the two CPU variants and verify().  The SIMT kernels are
 * in matmul_kernels.cu, the warp-level tensor-core kernels in matmul_tc.cu,
 * the wgmma ones in matmul_wgmma.cu, the cuBLAS calls in matmul_lib.cu;
 * buffers, CUDA checks, threads and input generators come from the kit
 * (kbench/kit.h).  Without a GPU (host->stream == NULL) no CUDA function is
 * called here.
 *
 * Inputs (the `inputs` parameter).  random: A and B uniform in [-1, 1) (never
 * zero), rounded to tf32 or bf16 for those precisions, checked against the
 * worst-case bound of any summation order, |C^ - C| <= g |A||B|
 * elementwise, with g = gamma(k + 1) = (k + 1) u / (1 - (k + 1) u), u = 2^-24
 * for f32 and the precision's own g otherwise (see verification below;
 * README.md has the derivations).  exact: non-zero integers in [-q, q] with
 * k q^2 <= 2^24 (and q within the precision's exact integers): every product
 * and every partial sum of every dot product is an integer of magnitude at
 * most 2^24, which f32 holds, so every variant's result is exact in any order
 * and verify() demands equality.
 *
 * The check (the `check` parameter).  full: every element against a double
 * reference computed in setup().  sampled, for shapes where that is too slow
 * on the CPU: KBM_SAMPLES whole rows and columns of C (the first and last of
 * each among them) against double references, and a random projection, C x
 * against A (B x) in double, which sees every element of C.  With exact
 * inputs the projection is exact in double too (x integer in [-256, 256]),
 * so any element of C that is off by a non-zero integer fails it; with
 * random inputs the projection's bound is the sum of the per-element bounds
 * and catches gross errors (a wrong tile, a missing block), the sampled rows
 * and columns catch single wrong elements on them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "matmul.h"

/* ---- the descriptor ------------------------------------------------------ */

static const char *const precision_choices[] = {"f32", "tf32", "bf16", "fp32x3"};
static const char *const inputs_choices[] = {"random", "exact"};
static const char *const check_choices[] = {"auto", "full", "sampled"};
static const char *const tile_choices[] = {
#define KBM_TILE(id, name, kind, wt, shape) name,
#include "matmul_tiles.def"
#undef KBM_TILE
};

_Static_assert(sizeof tile_choices / sizeof tile_choices[0] == KBM_N_TILES, "one name per tile");
_Static_assert(sizeof precision_choices / sizeof precision_choices[0] == KBM_N_PRECISIONS,
               "one name per precision, in the order of enum kbm_precision");

static const kb_param params[KBM_N_PARAMS] = {
    [KBM_P_M] = {.name = "m", .type = KB_PARAM_SIZE, .def = "256", .min = 1, .max = KBM_MAX_DIM,
                 .help = "rows of A and C"},
    [KBM_P_N] = {.name = "n", .type = KB_PARAM_SIZE, .def = "256", .min = 1, .max = KBM_MAX_DIM,
                 .help = "columns of B and C"},
    [KBM_P_K] = {.name = "k", .type = KB_PARAM_SIZE, .def = "256", .min = 1, .max = KBM_MAX_DIM,
                 .help = "columns of A, rows of B (the dot products' length)"},
    [KBM_P_PRECISION] = {.name = "precision", .type = KB_PARAM_ENUM, .def = "f32",
                         KB_CHOICES(precision_choices),
                         .help = "arithmetic: f32 (inputs, products and sums in single precision); "
                                 "tensor cores: tf32 (inputs rounded to tf32), bf16 (inputs "
                                 "rounded to bf16), fp32x3 (f32 inputs split into two tf32 "
                                 "parts, three products), all accumulating in f32"},
    [KBM_P_INPUTS] = {.name = "inputs", .type = KB_PARAM_ENUM, .def = "random",
                      KB_CHOICES(inputs_choices),
                      .help = "random: uniform in [-1, 1), checked against a derived bound; "
                              "exact: integers whose products are exact in f32, checked for "
                              "equality"},
    [KBM_P_CHECK] = {.name = "check", .type = KB_PARAM_ENUM, .def = "auto",
                     KB_CHOICES(check_choices),
                     .help = "full: every element against a double reference; sampled: sampled "
                             "rows and columns plus a random projection; auto: full up to "
                             "m*n*k = 2^30 and m*n = 2^24"},
    [KBM_P_BLOCK] = {.name = "block", .type = KB_PARAM_INT, .def = "16", .min = 8, .max = 32,
                     .help = "tiled: the tile's side (8, 16 or 32)"},
    [KBM_P_TILE] = {.name = "tile", .type = KB_PARAM_ENUM, .def = "128x128x16",
                    KB_CHOICES(tile_choices),
                    .help = "warptile, pipelined: block tile rows x columns x depth"},
    [KBM_P_STAGES] = {.name = "stages", .type = KB_PARAM_INT, .def = "3", .min = 2, .max = 4,
                      .help = "pipelined, mma: shared-memory stages in flight"},
};

static int run_cpu(kbm_state *s, const kbm_impl *impl, kb_host *host);
static int run_cpu_blocked(kbm_state *s, const kbm_impl *impl, kb_host *host);

/* The parameters a row's code reads, for kb_variant.uses. */
#define U_BASE                                                                                 \
    (KB_USES(KBM_P_M) | KB_USES(KBM_P_N) | KB_USES(KBM_P_K) | KB_USES(KBM_P_PRECISION) |      \
     KB_USES(KBM_P_INPUTS) | KB_USES(KBM_P_CHECK))
#define U_BLOCK KB_USES(KBM_P_BLOCK)
#define U_TILE KB_USES(KBM_P_TILE)
#define U_STAGES KB_USES(KBM_P_STAGES)
/* The precisions a row runs, for kbm_impl.precisions. */
#define P_F32 KBM_PRECISION_BIT(KBM_F32)
#define P_TF32 KBM_PRECISION_BIT(KBM_TF32)
#define P_BF16 KBM_PRECISION_BIT(KBM_BF16)
#define P_FP32X3 KBM_PRECISION_BIT(KBM_FP32X3)

/* The table (matmul_variants.def, rows KBM_VARIANT): variants[], impls[],
   KBK_N_VARIANTS and the guards (kbench/kit_family.h). */
#define KBM_VARIANT KBK_ROW
#define KBK_FAMILY_NAME "matmul"
#define KBK_FAMILY_IMPL kbm_impl
#define KBK_FAMILY_DEF "matmul_variants.def"
#include "kbench/kit_family.h"

KBK_FAMILY_PLUGIN(kbm,
                  "C = A * B, any shape: the tutorial's naive and tiled kernels, the SGEMM path "
                  "to cublasSgemm, and tensor cores (tf32, bf16, 3xTF32) against cuBLAS",
                  "elements")

/* ---- sizes ---------------------------------------------------------------- */

/* Exact inputs: the largest q with k q^2 <= 2^24 (0 when k > 2^24, which the
   parameter range excludes), and no larger than the precision's largest
   integer that every smaller one is exact beside: bf16 holds every integer up
   to 2^8 (8 significant bits), tf32 every one up to 2^11 (11 bits).  fp32x3
   keeps to 2^11 as well, so that the tf32 "big" part of every input is the
   input itself and its "small" part is 0: the three products are then exact
   (README.md, Tensor cores). */
static double exact_q(uint64_t k, int precision)
{
    double q = floor(sqrt(16777216.0 / (double)k));
    while (q > 0 && (double)k * q * q > 16777216.0)
        q -= 1;
    double cap = precision == KBM_BF16 ? 256.0 : precision == KBM_F32 ? q : 2048.0;
    return q < cap ? q : cap;
}

/* cuBLAS's workspace: 32 MiB (what cuBLAS asks for on Hopper) for every
   shape a measurement cares about, 4 MiB (its default pool elsewhere) for
   products of at most KBM_SMALL_MNK multiply-adds, where no kernel needs more.
   The small figure keeps small points' device memory under the conformance
   check's 32 MiB limit, so that `kbench check` runs the lifecycle at every
   small point (every precision and variant) rather than at one. */
#define KBM_SMALL_MNK (1ull << 27)
static uint64_t cublas_workspace(uint64_t m, uint64_t n, uint64_t k)
{
    return m * n * k <= KBM_SMALL_MNK ? KBM_CUBLAS_WORKSPACE_SMALL : KBM_CUBLAS_WORKSPACE;
}

/* Projection vector entries in exact mode: integers in [-KBM_X_EXACT,
   KBM_X_EXACT], so that n 2^24 KBM_X_EXACT <= 2^53 for every n <= 2^21: C x and
   A (B x) are exact in double (README.md). */
#define KBM_X_EXACT 256

static int resolve_check(const kb_value *p)
{
    int c = (int)p[KBM_P_CHECK].i;
    if (c != KBM_CHECK_AUTO)
        return c;
    uint64_t m = p[KBM_P_M].u, n = p[KBM_P_N].u, k = p[KBM_P_K].u;
    return m * n * k <= KBM_FULL_MAX_MNK && m * n <= KBM_FULL_MAX_MN ? KBM_CHECK_FULL
                                                                       : KBM_CHECK_SAMPLED;
}

typedef struct kbm_sizes {
    uint64_t a_bytes, b_bytes, c_bytes, ref_bytes, device_bytes, host_bytes;
    uint64_t a16_bytes, b16_bytes; /* bf16 copies of A and B (precision bf16), else 0 */
    uint64_t scratch_bytes;        /* kbm_wgmma_scratch_bytes(), 0 when none */
    uint64_t workspace_bytes;      /* cuBLAS's */
} kbm_sizes;

static int sizes_of(const kb_value *p, kbm_sizes *z, kb_host *host)
{
    uint64_t m = p[KBM_P_M].u, n = p[KBM_P_N].u, k = p[KBM_P_K].u;
    if (m < 1 || n < 1 || k < 1 || m > KBM_MAX_DIM || n > KBM_MAX_DIM || k > KBM_MAX_DIM)
        return host->fail(host, KB_EINVAL, "matmul: m, n and k must each lie in 1 .. %u",
                          KBM_MAX_DIM);
    int64_t block = p[KBM_P_BLOCK].i;
    if (block != 8 && block != 16 && block != 32)
        return host->fail(host, KB_EINVAL, "matmul: block = %lld; the tiled kernel takes 8, 16 "
                          "or 32", (long long)block);
    int check = resolve_check(p);
    if (check == KBM_CHECK_FULL && (m * n > KBM_FULL_MAX_MN * 4 || m * n * k > (1ull << 36)))
        return host->fail(host, KB_EINVAL,
                          "matmul: check = full at %llu x %llu x %llu would take too long on "
                          "the CPU; use check = sampled or auto",
                          (unsigned long long)m, (unsigned long long)n, (unsigned long long)k);
    z->a_bytes = m * k * 4;
    z->b_bytes = k * n * 4;
    z->c_bytes = m * n * 4;
    if (check == KBM_CHECK_FULL)
        z->ref_bytes = 2 * m * n * 8;
    else /* sampled rows and columns with their bounds, x, z, w, gathered columns of B */
        z->ref_bytes = (2 * KBM_SAMPLES * (n + m) + n + 2 * m + KBM_SAMPLES * k) * 8;
    int precision = (int)p[KBM_P_PRECISION].i;
    if (precision < 0 || precision >= KBM_N_PRECISIONS)
        return host->fail(host, KB_EINVAL, "matmul: no precision number %d", precision);
    /* Upper bounds over the variants, shared by several of them: the bf16
       copies for precision bf16, the wgmma scratch.  cuBLAS's workspace is
       the cuBLAS variants' own (kbm_plan states it per variant). */
    z->a16_bytes = precision == KBM_BF16 ? m * k * 2 : 0;
    z->b16_bytes = precision == KBM_BF16 ? k * n * 2 : 0;
    z->scratch_bytes = kbm_wgmma_scratch_bytes(m, n, k, precision);
    z->workspace_bytes = cublas_workspace(m, n, k);
    z->host_bytes = z->a_bytes + z->b_bytes + z->c_bytes + z->ref_bytes + z->a16_bytes +
                    z->b16_bytes;
    z->device_bytes = z->a_bytes + z->b_bytes + z->c_bytes + z->a16_bytes + z->b16_bytes +
                      z->scratch_bytes;
    return KB_OK;
}

/* ---- plan ----------------------------------------------------------------- */

static int kbm_plan(const kb_value *p, kb_work *out, kb_host *host)
{
    kbm_sizes z = {0};
    int rc = sizes_of(p, &z, host);
    if (rc)
        return rc;
    uint64_t m = p[KBM_P_M].u, n = p[KBM_P_N].u, k = p[KBM_P_K].u;
    /* bf16 runs read A and B as bf16: half the bytes. */
    out->bytes_read = p[KBM_P_PRECISION].i == KBM_BF16 ? z.a16_bytes + z.b16_bytes
                                                       : z.a_bytes + z.b_bytes;
    out->bytes_written = z.c_bytes;
    out->flops = 2.0 * (double)m * (double)n * (double)k;
    /* The compute ceiling a row's GFLOP/s is read against: tf32 and bf16
       against the run's mma.sync ceilings (wgmma may pass 100% of them),
       f32 and fp32x3 against the FP32 FMA ceiling (fp32x3 runs on the
       tensor cores, so it may pass 100%: that is its point). */
    int prec = (int)p[KBM_P_PRECISION].i;
    kb_work_set_peak(out, host, prec == KBM_TF32   ? KB_PEAK_TF32
                                : prec == KBM_BF16 ? KB_PEAK_BF16
                                                   : KB_PEAK_FP32);
    out->items = m * n;
    out->host_bytes = z.host_bytes;
    out->device_bytes = z.device_bytes;
    /* cuBLAS's workspace where a cuBLAS variant runs (kb_work, "Device
       memory"): setup() allocates one for any of them, so each states it
       (an over-estimate when several are listed). */
    for (uint32_t v = 0; v < KBK_N_VARIANTS; v++)
        if (impls[v].needs & KBM_NEEDS_CUBLAS)
            kb_work_add_variant_bytes(out, host, v, z.workspace_bytes);
    return KB_OK;
}

/* ---- the reference -------------------------------------------------------- */

/* Full: row i of C and of |A||B| in double, rows of B streamed (vectorises). */
static int ref_full_rows(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    kbm_state *s = ctx;
    const float *A = s->a.host, *B = s->b.host;
    uint64_t n = s->n, k = s->k;
    for (uint64_t i = begin; i < end; i++) {
        double *r = s->ref + i * n, *ra = s->ref_abs + i * n;
        for (uint64_t j = 0; j < n; j++)
            r[j] = ra[j] = 0;
        for (uint64_t p = 0; p < k; p++) {
            double a = A[i * k + p], aa = fabs(a);
            const float *b = B + p * n;
            for (uint64_t j = 0; j < n; j++) {
                r[j] += a * (double)b[j];
                ra[j] += aa * fabs((double)b[j]);
            }
        }
    }
    return KB_OK;
}

/* Sampled rows: for columns [begin, end), the KBM_SAMPLES sampled rows. */
static int ref_sample_rows(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    kbm_state *s = ctx;
    const float *A = s->a.host, *B = s->b.host;
    uint64_t n = s->n, k = s->k;
    for (int t = 0; t < KBM_SAMPLES; t++) {
        double *r = s->row_ref + (uint64_t)t * n, *ra = s->row_abs + (uint64_t)t * n;
        for (uint64_t j = begin; j < end; j++)
            r[j] = ra[j] = 0;
        const float *arow = A + s->rows[t] * k;
        for (uint64_t p = 0; p < k; p++) {
            double a = arow[p], aa = fabs(a);
            const float *b = B + p * n;
            for (uint64_t j = begin; j < end; j++) {
                r[j] += a * (double)b[j];
                ra[j] += aa * fabs((double)b[j]);
            }
        }
    }
    return KB_OK;
}

/* Sampled columns (rows [begin, end) of each), over the sampled columns of B
   gathered into s->bcol (k each), and the projection z = A y, w = |A| y_abs. */
typedef struct col_job {
    kbm_state *s;
    const double *bcol; /* KBM_SAMPLES x k */
    const double *y, *y_abs; /* B x and |B||x|, k each */
} col_job;

static int ref_sample_cols(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    const col_job *j = ctx;
    kbm_state *s = j->s;
    const float *A = s->a.host;
    uint64_t m = s->m, k = s->k;
    for (uint64_t i = begin; i < end; i++) {
        const float *arow = A + i * k;
        for (int t = 0; t < KBM_SAMPLES; t++) {
            const double *bc = j->bcol + (uint64_t)t * k;
            double r = 0, ra = 0;
            for (uint64_t p = 0; p < k; p++) {
                r += (double)arow[p] * bc[p];
                ra += fabs((double)arow[p]) * fabs(bc[p]);
            }
            s->col_ref[(uint64_t)t * m + i] = r;
            s->col_abs[(uint64_t)t * m + i] = ra;
        }
        double z = 0, w = 0;
        for (uint64_t p = 0; p < k; p++) {
            z += (double)arow[p] * j->y[p];
            w += fabs((double)arow[p]) * j->y_abs[p];
        }
        s->z[i] = z;
        s->w[i] = w;
    }
    return KB_OK;
}

/* y = B x, y_abs = |B||x| (rows [begin, end) of B). */
typedef struct proj_job {
    kbm_state *s;
    double *y, *y_abs;
} proj_job;

static int ref_bx(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    const proj_job *j = ctx;
    kbm_state *s = j->s;
    const float *B = s->b.host;
    uint64_t n = s->n;
    for (uint64_t p = begin; p < end; p++) {
        double y = 0, ya = 0;
        for (uint64_t c = 0; c < n; c++) {
            y += (double)B[p * n + c] * s->x[c];
            ya += fabs((double)B[p * n + c]) * fabs(s->x[c]);
        }
        j->y[p] = y;
        j->y_abs[p] = ya;
    }
    return KB_OK;
}

static int reference(kbm_state *s, kb_host *host)
{
    if (s->check == KBM_CHECK_FULL) {
        if (!(s->ref = malloc(s->m * s->n * sizeof(double))) ||
            !(s->ref_abs = malloc(s->m * s->n * sizeof(double))))
            return host->fail(host, KB_ENOMEM, "matmul: out of host memory for the reference");
        return kbk_parallel_for(host, s->m, ref_full_rows, s);
    }
    /* Sampled rows and columns: the first and the last, then random ones
       drawn from the seed (stream 4 and 5). */
    for (int t = 0; t < KBM_SAMPLES; t++) {
        s->rows[t] = t == 0 ? 0 : t == 1 ? s->m - 1 : kb_rand_u64(host->seed, 4, (uint64_t)t) % s->m;
        s->cols[t] = t == 0 ? 0 : t == 1 ? s->n - 1 : kb_rand_u64(host->seed, 5, (uint64_t)t) % s->n;
    }
    uint64_t m = s->m, n = s->n, k = s->k;
    double *bcol = NULL, *y = NULL, *y_abs = NULL;
    int rc = KB_OK;
    if (!(s->row_ref = malloc(KBM_SAMPLES * n * sizeof(double))) ||
        !(s->row_abs = malloc(KBM_SAMPLES * n * sizeof(double))) ||
        !(s->col_ref = malloc(KBM_SAMPLES * m * sizeof(double))) ||
        !(s->col_abs = malloc(KBM_SAMPLES * m * sizeof(double))) ||
        !(s->x = malloc(n * sizeof(double))) || !(s->z = malloc(m * sizeof(double))) ||
        !(s->w = malloc(m * sizeof(double))) ||
        !(bcol = malloc(KBM_SAMPLES * k * sizeof(double))) ||
        !(y = malloc(k * sizeof(double))) || !(y_abs = malloc(k * sizeof(double)))) {
        rc = host->fail(host, KB_ENOMEM, "matmul: out of host memory for the sampled reference");
        goto out;
    }
    /* x: stream 3; integers in exact mode, so that the projection is exact. */
    if ((rc = s->inputs == KBM_EXACT ? kbk_fill_exact_f64(host, s->x, n, 3, KBM_X_EXACT)
                                     : kbk_fill_uniform_f64(host, s->x, n, 3, -1.0, 1.0)))
        goto out;
    const float *B = s->b.host;
    for (int t = 0; t < KBM_SAMPLES; t++)
        for (uint64_t p = 0; p < k; p++)
            bcol[(uint64_t)t * k + p] = B[p * n + s->cols[t]];
    proj_job pj = {.s = s, .y = y, .y_abs = y_abs};
    col_job cj = {.s = s, .bcol = bcol, .y = y, .y_abs = y_abs};
    if ((rc = kbk_parallel_for(host, n, ref_sample_rows, s)) ||
        (rc = kbk_parallel_for(host, k, ref_bx, &pj)) ||
        (rc = kbk_parallel_for(host, m, ref_sample_cols, &cj)))
        goto out;
out:
    free(bcol);
    free(y);
    free(y_abs);
    return rc;
}

/* ---- rounding the inputs to the precision ----------------------------------
 * Once, in setup(), on the host, so that the reference sees exactly what the
 * kernels see.  Bit arithmetic on finite values (the inputs are never NaN or
 * infinite, and far from overflow).
 *   tf32: 10 explicit significand bits, to nearest with ties away from zero,
 *         as cvt.rna.tf32.f32 rounds: adding half a tf32 ulp (bit 12) to the
 *         magnitude and clearing the 13 low bits rounds the magnitude half up
 *         (a carry into the exponent is the right answer).
 *   bf16: the top 16 bits, to nearest with ties to even: adding 0x7fff plus
 *         the lowest kept bit before truncating.
 * ------------------------------------------------------------------------- */
static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float f32_of(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static float round_tf32(float x)
{
    return f32_of((f32_bits(x) + 0x1000u) & 0xffffe000u);
}

static uint16_t bf16_bits(float x)
{
    uint32_t u = f32_bits(x);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

typedef struct round_job {
    float *x;      /* rounded in place */
    uint16_t *x16; /* bf16: the bit patterns, or NULL */
    int precision;
} round_job;

static int round_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    const round_job *j = ctx;
    for (uint64_t i = begin; i < end; i++) {
        if (j->precision == KBM_TF32) {
            j->x[i] = round_tf32(j->x[i]);
        } else if (j->precision == KBM_BF16) {
            uint16_t h = bf16_bits(j->x[i]);
            j->x[i] = f32_of((uint32_t)h << 16);
            if (j->x16)
                j->x16[i] = h;
        }
    }
    return KB_OK;
}

/* Rounds A or B (n elements) to the state's precision, writing the bf16 bit
   patterns into x16 when it is not NULL; nothing for f32 and fp32x3. */
static int round_inputs(kb_host *host, float *x, uint16_t *x16, uint64_t n, int precision)
{
    if (precision != KBM_TF32 && precision != KBM_BF16)
        return KB_OK;
    round_job j = {.x = x, .x16 = x16, .precision = precision};
    return kbk_parallel_for(host, n, round_range, &j);
}

/* ---- setup and teardown --------------------------------------------------- */

/* setup() is written in two halves (kbench/kit.h, KBK_PREFETCH): the host
   half makes the state, the inputs, their rounding and the reference
   without CUDA, so that kbench can make them while the point before runs
   on the GPU; the device half adds the device copies, the scratch and
   cuBLAS. */
KBK_PREFETCH(kbm);

/* Whether the variants in needs read the bf16 copies of A and B. */
static int with_bf16(const kbm_state *s, uint32_t needs)
{
    return s->precision == KBM_BF16 && (needs & KBM_NEEDS_BF16);
}

static int kbm_setup_host(const kb_value *p, uint64_t vmask, kb_host *host, void **state)
{
    kbm_sizes z = {0};
    int rc = sizes_of(p, &z, host);
    if (rc)
        return rc;
    kbm_state *s = calloc(1, sizeof *s);
    if (!s)
        return host->fail(host, KB_ENOMEM, "matmul: out of host memory for the state");
    *state = s;
    s->m = p[KBM_P_M].u;
    s->n = p[KBM_P_N].u;
    s->k = p[KBM_P_K].u;
    s->precision = (int)p[KBM_P_PRECISION].i;
    s->inputs = (int)p[KBM_P_INPUTS].i;
    s->check = resolve_check(p);
    s->block = (int)p[KBM_P_BLOCK].i;
    s->tile = (int)p[KBM_P_TILE].i;
    s->stages = (int)p[KBM_P_STAGES].i;
    s->gpu = 0; /* until the device half */
    s->variants = vmask;
    s->needs = kbk_needs_of(vmask);
    s->q = exact_q(s->k, s->precision);
    /* Host copies only (the host half has no stream): the device half adds
       the device copies and pins these.  The device-only buffers get their
       sizes here and their memory there. */
    if ((rc = kbk_buf_alloc(host, &s->a, (size_t)z.a_bytes, KBK_HOST)) ||
        (rc = kbk_buf_alloc(host, &s->b, (size_t)z.b_bytes, KBK_HOST)) ||
        (rc = kbk_buf_alloc(host, &s->c, (size_t)z.c_bytes, KBK_HOST)) ||
        (rc = kbk_buf_alloc(host, &s->scratch, (size_t)z.scratch_bytes, KBK_DEVICE)) ||
        (rc = kbk_buf_alloc(host, &s->workspace, (size_t)z.workspace_bytes, KBK_DEVICE)))
        return rc;
    /* The bf16 copies, for the variants that read A and B as bf16. */
    int with16 = with_bf16(s, s->needs);
    if (with16 && ((rc = kbk_buf_alloc(host, &s->a16, (size_t)z.a16_bytes, KBK_HOST)) ||
                   (rc = kbk_buf_alloc(host, &s->b16, (size_t)z.b16_bytes, KBK_HOST))))
        return rc;
    if (s->inputs == KBM_EXACT)
        rc = kbk_fill_exact_f32(host, s->a.host, s->m * s->k, 0, (int32_t)s->q);
    else
        rc = kbk_fill_uniform_f32(host, s->a.host, s->m * s->k, 0, -1.0, 1.0);
    if (rc)
        return rc;
    if (s->inputs == KBM_EXACT)
        rc = kbk_fill_exact_f32(host, s->b.host, s->k * s->n, 1, (int32_t)s->q);
    else
        rc = kbk_fill_uniform_f32(host, s->b.host, s->k * s->n, 1, -1.0, 1.0);
    if (rc)
        return rc;
    /* Rounded once, here: the reference below is computed from the rounded
       values (README.md, Tensor cores). */
    if ((rc = round_inputs(host, s->a.host, with16 ? s->a16.host : NULL, s->m * s->k,
                           s->precision)) ||
        (rc = round_inputs(host, s->b.host, with16 ? s->b16.host : NULL, s->k * s->n,
                           s->precision)))
        return rc;
    return reference(s, host);
}

static int kbm_setup_device(void *state, uint64_t vmask, kb_host *host)
{
    kbm_state *s = state;
    s->gpu = host->stream != NULL;
    if (!s->gpu)
        return KB_OK;
    /* The variants that run: the device memory check may have admitted
       fewer than the host half was told of, and only theirs is counted. */
    s->variants = vmask;
    s->needs = kbk_needs_of(vmask);
    int with16 = with_bf16(s, s->needs), rc;
    if ((rc = kbk_buf_attach(host, &s->a)) || (rc = kbk_buf_attach(host, &s->b)) ||
        (rc = kbk_buf_attach(host, &s->c)) ||
        (with16 && ((rc = kbk_buf_attach(host, &s->a16)) || (rc = kbk_buf_attach(host, &s->b16)))))
        return rc;
    if ((rc = kbk_buf_upload(host, &s->a)) || (rc = kbk_buf_upload(host, &s->b)) ||
        (with16 && ((rc = kbk_buf_upload(host, &s->a16)) || (rc = kbk_buf_upload(host, &s->b16)))))
        return rc;
    if ((s->needs & KBM_NEEDS_SCRATCH) && (rc = kbk_buf_attach(host, &s->scratch)))
        return rc;
    KBK_CUDA(host, cudaStreamSynchronize((cudaStream_t)host->stream));
    if (s->needs & KBM_NEEDS_CUBLAS) {
        if ((rc = kbk_buf_attach(host, &s->workspace)))
            return rc;
        return kbm_cublas_setup(s, host);
    }
    return KB_OK;
}

static void kbm_teardown(void *state, kb_host *host)
{
    kbm_state *s = state;
    if (!s)
        return;
    kbm_cublas_teardown(s); /* accepts a state without a handle */
    kbm_wgmma_teardown(s);  /* accepts a state without its data */
    kbk_buf *bufs[] = {&s->a, &s->b, &s->c, &s->workspace, &s->a16, &s->b16, &s->scratch};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        kbk_buf_free(host, bufs[i]);
    double *refs[] = {s->ref, s->ref_abs, s->row_ref, s->row_abs, s->col_ref,
                      s->col_abs, s->x, s->z, s->w};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
        free(refs[i]);
    free(s);
}

/* ---- prepare, upload, download -------------------------------------------- */

/* Whether variant v can run this point (its precisions). */
static int unsupported(kbm_state *s, uint32_t v, kb_host *host)
{
    const kbm_impl *impl = &impls[v];
    if (impl->precisions && !(impl->precisions & KBM_PRECISION_BIT(s->precision)))
        return host->fail(host, KB_EUNSUPPORTED, "matmul: %s does not run precision = %s",
                          variants[v].name, precision_choices[s->precision]);
    return KB_OK;
}

static int kbm_prepare(void *state, uint32_t v, kb_host *host)
{
    kbm_state *s = state;
    int rc = kbk_variant_ok(host, v);
    if (rc || (rc = unsupported(s, v, host)))
        return rc;
    /* 0xff bytes are NaN in f32: an element a variant does not write fails. */
    if ((rc = kbk_buf_poison(host, &s->c, 0xff)))
        return rc;
    if (s->gpu) {
        if (impls[v].prepare && (rc = impls[v].prepare(s, host)))
            return rc;
        KBK_CUDA(host, cudaStreamSynchronize((cudaStream_t)host->stream));
    }
    return KB_OK;
}

/* Which copies of A and B a variant reads: the bf16 ones when it takes them
   and the precision is bf16, the f32 ones otherwise. */
static int reads16(const kbm_state *s, uint32_t v)
{
    return s->precision == KBM_BF16 && (impls[v].needs & KBM_NEEDS_BF16);
}

static int kbm_upload(void *state, uint32_t v, kb_host *host)
{
    kbm_state *s = state;
    if (!s->gpu || !kbk_is_cuda(v))
        return KB_OK;
    int rc = reads16(s, v) ? kbk_buf_upload(host, &s->a16) : kbk_buf_upload(host, &s->a);
    if (rc)
        return rc;
    return reads16(s, v) ? kbk_buf_upload(host, &s->b16) : kbk_buf_upload(host, &s->b);
}

static int kbm_download(void *state, uint32_t v, kb_host *host)
{
    kbm_state *s = state;
    if (!s->gpu || !kbk_is_cuda(v))
        return KB_OK;
    return kbk_buf_download(host, &s->c);
}

/* ---- the CPU variants ------------------------------------------------------ */

/* cpu: the tutorial's loop, one f32 dot product per element, k in order. */
static int run_cpu(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    const float *A = s->a.host, *B = s->b.host;
    float *C = s->c.host;
    uint64_t m = s->m, n = s->n, k = s->k;
    for (uint64_t i = 0; i < m; i++)
        for (uint64_t j = 0; j < n; j++) {
            float acc = 0;
            for (uint64_t p = 0; p < k; p++)
                acc += A[i * k + p] * B[p * n + j];
            C[i * n + j] = acc;
        }
    return KB_OK;
}

/* cpu-blocked: blocks of KBM_CPU_BM rows of C per task, KBM_CPU_BN columns and
   KBM_CPU_BK deep: a row of B's block (1 KiB) streams into a row of C's block
   (1 KiB), both in L1, and the B block (256 KiB) stays in L2 across the rows.
   Each element still adds its k products in order, in f32. */
#define KBM_CPU_BM 64u
#define KBM_CPU_BN 256u
#define KBM_CPU_BK 256u

static int cpu_blocked_rows(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    kbm_state *s = ctx;
    const float *A = s->a.host, *B = s->b.host;
    float *C = s->c.host;
    uint64_t m = s->m, n = s->n, k = s->k;
    for (uint64_t rb = begin; rb < end; rb++) {
        uint64_t i0 = rb * KBM_CPU_BM, i1 = i0 + KBM_CPU_BM < m ? i0 + KBM_CPU_BM : m;
        for (uint64_t i = i0; i < i1; i++)
            memset(C + i * n, 0, n * sizeof(float));
        for (uint64_t j0 = 0; j0 < n; j0 += KBM_CPU_BN) {
            uint64_t j1 = j0 + KBM_CPU_BN < n ? j0 + KBM_CPU_BN : n;
            for (uint64_t p0 = 0; p0 < k; p0 += KBM_CPU_BK) {
                uint64_t p1 = p0 + KBM_CPU_BK < k ? p0 + KBM_CPU_BK : k;
                for (uint64_t i = i0; i < i1; i++) {
                    float *restrict c = C + i * n;
                    for (uint64_t p = p0; p < p1; p++) {
                        const float a = A[i * k + p];
                        const float *restrict b = B + p * n;
                        for (uint64_t j = j0; j < j1; j++)
                            c[j] += a * b[j];
                    }
                }
            }
        }
    }
    return KB_OK;
}

static int run_cpu_blocked(kbm_state *s, const kbm_impl *impl, kb_host *host)
{
    return kbk_parallel_for(host, kbm_ceil_div(s->m, KBM_CPU_BM), cpu_blocked_rows, s);
}

static int kbm_run(void *state, uint32_t v, kb_host *host)
{
    kbm_state *s = state;
    int rc = kbk_variant_runs(host, v);
    if (rc)
        return rc;
    return impls[v].run(s, &impls[v], host);
}

/* ---- verification -----------------------------------------------------------
 * Random inputs: |C^_ij - C_ij| <= g (|A||B|)_ij for the (rounded) inputs A
 * and B, plus the double reference's own error gamma64(k + 1) (|A||B|)_ij,
 * with g by precision (README.md derives each):
 *   f32     gamma(k + 1) at u = 2^-24: any order of the k products' additions,
 *           each rounded to nearest, one more rounding allowed for a final
 *           scaling or a split-k join;
 *   tf32,   gamma(k + 1) at u = 2^-22: the products of the rounded inputs are
 *   bf16    exact in f32, and a tensor core's f32 accumulation may truncate
 *           both the aligned addends and the normalised sum (two ulps, 2^-22,
 *           per addition at worst, where round to nearest costs half of one);
 *   fp32x3  (gamma(k + 1) at u = 2^-24 + 3 * 2^-22) (1 + 2^-9): the f32 bound
 *           plus the 3xTF32 split's own error (the dropped small * small
 *           product and the rounding of each remainder to tf32, at most
 *           3 * 2^-22 (1 + 2^-10) |a||b| per product), the factor covering
 *           the second-order terms.
 * Exact inputs: tolerance 0.  The projection: |(C^ x)_i - (A (B x))_i| <=
 * g w_i + gamma64(n + k + 2) (w_i + (|C^||x|)_i), w = |A|(|B||x|).
 * ------------------------------------------------------------------------- */

static double gamma_of(double d, int bits)
{
    double du = d * ldexp(1.0, -bits);
    return du < 1 ? du / (1 - du) : INFINITY;
}

/* g above: the factor of |A||B| in a product's error bound, by precision. */
static double bound_factor(int precision, uint64_t k)
{
    double d = (double)k + 1;
    switch (precision) {
    case KBM_TF32:
    case KBM_BF16: return gamma_of(d, 22);
    case KBM_FP32X3: return (gamma_of(d, 24) + 3 * ldexp(1.0, -22)) * (1 + ldexp(1.0, -9));
    default: return gamma_of(d, 24);
    }
}

typedef struct verify_job {
    const kbm_state *s;
    double g32, g64;      /* per-element bound factors (0, 0 in exact mode) */
    double gp32, gp64;    /* projection bound factors */
    uint64_t bad[KBK_MAX_THREADS]; /* per worker */
    uint64_t first[KBK_MAX_THREADS];
    double err[KBK_MAX_THREADS];   /* largest |C^ - C| per worker */
    double rel[KBK_MAX_THREADS];   /* largest |C^ - C| / (|A||B|) per worker */
} verify_job;

/* One element against its reference: whether it is out of bound, and the
   largest errors seen so far (NaN leaves them alone: it counts as bad). */
static int element_bad(double got, double ref, double ref_abs, double g, double *err, double *rel)
{
    double e = fabs(got - ref);
    if (e > *err)
        *err = e;
    if (ref_abs > 0 && e / ref_abs > *rel)
        *rel = e / ref_abs;
    return !(e <= g * ref_abs);
}

static int verify_full_rows(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    verify_job *j = ctx;
    const kbm_state *s = j->s;
    const float *C = s->c.host;
    uint64_t n = s->n, bad = 0, first = UINT64_MAX;
    double err = 0, rel = 0, g = j->g32 + j->g64;
    for (uint64_t e = begin * n; e < end * n; e++) {
        if (element_bad((double)C[e], s->ref[e], s->ref_abs[e], g, &err, &rel)) {
            if (!bad)
                first = e;
            bad++;
        }
    }
    j->bad[worker] += bad;
    if (first < j->first[worker])
        j->first[worker] = first;
    j->err[worker] = err > j->err[worker] ? err : j->err[worker];
    j->rel[worker] = rel > j->rel[worker] ? rel : j->rel[worker];
    return KB_OK;
}

static int verify_projection(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    verify_job *j = ctx;
    const kbm_state *s = j->s;
    const float *C = s->c.host;
    uint64_t n = s->n, bad = 0, first = UINT64_MAX;
    for (uint64_t i = begin; i < end; i++) {
        double cx = 0, cax = 0;
        for (uint64_t c = 0; c < n; c++) {
            cx += (double)C[i * n + c] * s->x[c];
            cax += fabs((double)C[i * n + c]) * fabs(s->x[c]);
        }
        double tol = j->gp32 * s->w[i] + j->gp64 * (s->w[i] + cax);
        if (!(fabs(cx - s->z[i]) <= tol)) {
            if (!bad)
                first = i * n;
            bad++;
        }
    }
    j->bad[worker] += bad;
    if (first < j->first[worker])
        j->first[worker] = first;
    return KB_OK;
}

static int kbm_verify(void *state, uint32_t v, kb_check *out, kb_host *host)
{
    kbm_state *s = state;
    if (kbk_variant_ok(host, v))
        return KB_EINVAL;
    verify_job *j = calloc(1, sizeof *j);
    if (!j)
        return host->fail(host, KB_ENOMEM, "matmul: out of host memory for verify");
    j->s = s;
    int exact = s->inputs == KBM_EXACT;
    double k = (double)s->k, n = (double)s->n;
    j->g32 = exact ? 0 : bound_factor(s->precision, s->k);
    j->g64 = exact ? 0 : gamma_of(k + 1, 53);
    j->gp32 = j->g32;
    j->gp64 = exact ? 0 : gamma_of(n + k + 2, 53);
    for (int w = 0; w < KBK_MAX_THREADS; w++)
        j->first[w] = UINT64_MAX;
    const float *C = s->c.host;
    uint64_t bad = 0, first = UINT64_MAX;
    double err = 0, rel = 0;
    int rc;
    if (s->check == KBM_CHECK_FULL) {
        rc = kbk_parallel_for(host, s->m, verify_full_rows, j);
    } else {
        /* The sampled rows and columns, element by element. */
        double g = j->g32 + j->g64;
        for (int t = 0; t < KBM_SAMPLES; t++) {
            for (uint64_t c = 0; c < s->n; c++) {
                uint64_t e = s->rows[t] * s->n + c;
                if (element_bad((double)C[e], s->row_ref[(uint64_t)t * s->n + c],
                                s->row_abs[(uint64_t)t * s->n + c], g, &err, &rel)) {
                    first = bad ? first : e;
                    bad++;
                }
            }
            for (uint64_t r = 0; r < s->m; r++) {
                uint64_t e = r * s->n + s->cols[t];
                if (element_bad((double)C[e], s->col_ref[(uint64_t)t * s->m + r],
                                s->col_abs[(uint64_t)t * s->m + r], g, &err, &rel)) {
                    first = bad ? (first < e ? first : e) : e;
                    bad++;
                }
            }
        }
        /* The projection: every row of C, every element of it. */
        rc = kbk_parallel_for(host, s->m, verify_projection, j);
    }
    for (int w = 0; w < KBK_MAX_THREADS; w++) {
        bad += j->bad[w];
        if (j->first[w] < first)
            first = j->first[w];
        err = j->err[w] > err ? j->err[w] : err;
        rel = j->rel[w] > rel ? j->rel[w] : rel;
    }
    double g32 = j->g32;
    free(j);
    if (rc)
        return rc;
    if (bad)
        host->log(host, KB_LOG_DEBUG,
                  "matmul: %s: %llu mismatches (%s check), the first at row %llu, column %llu "
                  "(a projection mismatch names the row's first column)",
                  variants[v].name, (unsigned long long)bad,
                  s->check == KBM_CHECK_FULL ? "full" : "sampled",
                  (unsigned long long)(first / s->n), (unsigned long long)(first % s->n));
    /* The tensor-core precisions are judged on their errors too (fp32x3
       against cublasSgemm's): say them, for every variant that runs one. */
    if (s->precision != KBM_F32)
        host->log(host, KB_LOG_INFO,
                  "matmul: %s, precision %s, %llu x %llu x %llu: max |C^ - C| = %.3g, max "
                  "|C^ - C| / (|A||B|) = %.3g (bound factor %.3g) over %s",
                  variants[v].name, precision_choices[s->precision], (unsigned long long)s->m,
                  (unsigned long long)s->n, (unsigned long long)s->k, err, rel, g32,
                  s->check == KBM_CHECK_FULL ? "every element" : "the sampled rows and columns");
    out->measure = "mismatches";
    out->error = (double)bad;
    out->tolerance = 0;
    out->passed = bad == 0;
    return KB_OK;
}

/* ---- the test extension ------------------------------------------------------ */

static const float *test_a(const void *state) { return ((const kbm_state *)state)->a.host; }
static const float *test_b(const void *state) { return ((const kbm_state *)state)->b.host; }
static float *test_c(void *state) { return ((kbm_state *)state)->c.host; }
static int test_full(const void *state)
{
    return ((const kbm_state *)state)->check == KBM_CHECK_FULL;
}

static const kbm_test_ext test_ext = {
    .size = sizeof(kbm_test_ext),
    .a = test_a,
    .b = test_b,
    .c = test_c,
    .full = test_full,
};

static const void *kbm_extension(const char *name)
{
    if (strcmp(name, KB_PREFETCH_EXTENSION) == 0)
        return &kbm_prefetch;
    return strcmp(name, KBM_TEST_EXTENSION) == 0 ? &test_ext : NULL;
}
