/*
 * matmul.h -- what the C side (matmul.c: descriptor, inputs, reference, CPU
 * variants, verification) and the CUDA side (matmul_kernels.cu,
 * matmul_lib.cu) of the matmul plugin share.  Nothing here is exported from
 * the plugin.
 *
 * The product is C = A * B, row-major: A is m x k (row stride k), B is k x n
 * (row stride n), C is m x n (row stride n), all f32.
 */
#ifndef KBM_MATMUL_H
#define KBM_MATMUL_H

#include <stddef.h>
#include <stdint.h>

#include "kbench/kit.h"
#include "kbench/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The `precision` parameter: f32 (SIMT, and the cublas reference), and the
   tensor-core precisions: tf32 (f32 inputs rounded to tf32, f32
   accumulation), bf16 (bf16 inputs, f32 accumulation and output) and fp32x3
   (f32 inputs, each split into two tf32 parts, three tensor-core products:
   f32 accuracy).  The choices' order in matmul.c follows this enum. */
enum kbm_precision { KBM_F32 = 0, KBM_TF32, KBM_BF16, KBM_FP32X3, KBM_N_PRECISIONS };

/* The `inputs` parameter: random floats uniform in [-1, 1), checked against
   a derived error bound; or exact: non-zero integers in [-q, q] with
   k * q^2 <= 2^24, whose products are exact in f32 in any summation order,
   checked for equality. */
enum kbm_inputs { KBM_RANDOM = 0, KBM_EXACT = 1 };

/* The `check` parameter: full (every element against a double reference),
   sampled (whole sampled rows and columns plus a random projection, for
   shapes where a full double product on the CPU is too slow), or auto
   (full when m*n*k <= KBM_FULL_MAX_MNK and m*n <= KBM_FULL_MAX_MN). */
enum kbm_check { KBM_CHECK_AUTO = 0, KBM_CHECK_FULL = 1, KBM_CHECK_SAMPLED = 2 };
#define KBM_FULL_MAX_MNK (1ull << 30)
#define KBM_FULL_MAX_MN (1ull << 24)
/* Rows and columns of C the sampled check computes in double (the first and
   the last of each among them, where the ragged edges are). */
#define KBM_SAMPLES 8

/* The `tile` parameter of the warp-tiled and pipelined variants: block tile
   BM x BN, BK deep, warp tile WM x WN, one row of matmul_tiles.def each
   (instantiated in matmul_kernels.cu).  The tiles from KBM_T256x128x8 on
   have 64 x 64 warp tiles (a kernel of their own, pipelined only; w64 names
   the 128 x 128 one that has them). */
enum kbm_tile {
#define KBM_TILE(id, name, kind, wt, shape) KBM_##id,
#include "matmul_tiles.def"
#undef KBM_TILE
    KBM_N_TILES
};

/* Parameters, in declaration order (params[] is indexed with these). */
enum kbm_param {
    KBM_P_M = 0,
    KBM_P_N,
    KBM_P_K,
    KBM_P_PRECISION,
    KBM_P_INPUTS,
    KBM_P_CHECK,
    KBM_P_BLOCK,
    KBM_P_TILE,
    KBM_P_STAGES,
    KBM_N_PARAMS
};

/* The largest m, n or k: every grid dimension of every kernel stays within
   CUDA's limits (65535 blocks in y with blocks of 8 or more rows). */
#define KBM_MAX_DIM (1u << 18)

/* cuBLAS workspace, allocated in setup so that run() never allocates: the
   large one for every shape that is measured, the small one for small
   products (matmul.c, cublas_workspace()). */
#define KBM_CUBLAS_WORKSPACE (32u << 20)
#define KBM_CUBLAS_WORKSPACE_SMALL (4u << 20)

typedef struct kbm_state kbm_state;
typedef struct kbm_impl kbm_impl;

/* One run: a CPU variant computes into the host copy of C, a CUDA variant
   enqueues on host->stream.  Returns KB_OK or a kb_status after
   host->fail(). */
typedef int (*kbm_run_fn)(kbm_state *s, const kbm_impl *impl, kb_host *host);

enum kbm_needs {
    KBM_NEEDS_CUBLAS = 1u << 0,  /* a cuBLAS handle and its workspace */
    KBM_NEEDS_BF16 = 1u << 1,    /* a16 and b16: A and B as bf16 */
    KBM_NEEDS_SCRATCH = 1u << 2  /* scratch: kbm_wgmma_scratch_bytes() of device memory */
};

#define KBM_PRECISION_BIT(p) (1u << (p))

/* Called from the plugin's prepare() before variant runs on a GPU (raising a
   kernel's shared-memory limit, checking the device); KB_EUNSUPPORTED with a
   sentence skips the variant. */
typedef int (*kbm_prepare_fn)(kbm_state *s, kb_host *host);

struct kbm_impl {
    kbm_run_fn run;
    uint32_t precisions; /* KBM_PRECISION_BIT of each it runs; 0: all */
    uint32_t needs;      /* enum kbm_needs */
    kbm_prepare_fn prepare; /* or NULL: nothing to do before a run */
};

/* The state of one point (setup() .. teardown()). */
struct kbm_state {
    uint64_t m, n, k;
    int precision, inputs, check; /* enums above; check is resolved (full or sampled) */
    int block, tile, stages;      /* the block, tile and stages parameters */
    int gpu;                      /* host->stream != NULL */
    uint64_t variants;
    uint32_t needs;

    kbk_buf a, b, c; /* inputs and output: host copy, and device copy with a GPU */
    kbk_buf workspace; /* cuBLAS's workspace (device) */
    /* The tensor-core operands (see "the tensor-core contract" below). */
    kbk_buf a16, b16;  /* bf16: A (m x k) and B (k x n) as bf16 bit patterns, host and device */
    kbk_buf scratch;   /* device memory a tensor-core kernel rebuilds in every run */
    void *wgmma;       /* matmul_wgmma.cu's own data (tensor maps ...), or NULL */
    void *cublas;      /* cublasHandle_t, or NULL */
    int smem_raised;   /* the pipelined kernels' shared-memory limits are raised */

    /* Reference, full check: C in double and |A||B| (m*n each). */
    double *ref, *ref_abs;
    /* Reference, sampled check: KBM_SAMPLES rows (each n long) and columns
       (each m long) of C and of |A||B|; the projection vector x (n), z =
       A (B x) and w = |A| (|B| |x|) (m each). */
    uint64_t rows[KBM_SAMPLES], cols[KBM_SAMPLES];
    double *row_ref, *row_abs, *col_ref, *col_abs;
    double *x, *z, *w;
    double q;     /* exact inputs: |entries| <= q */
};

static inline uint64_t kbm_ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* ---- the CUDA side: the run entries of the rows -------------------------- */
int kbm_run_naive(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_coalesced(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_tiled(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_reg1d(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_reg2d(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_vec4(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_warptile(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_pipelined(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_cublas(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_cublas_tf32(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_cublas_bf16(kbm_state *s, const kbm_impl *impl, kb_host *host);
/* matmul_tc.cu: the warp-level tensor-core kernels (wmma, mma.sync). */
int kbm_run_wmma(kbm_state *s, const kbm_impl *impl, kb_host *host);
int kbm_run_mma(kbm_state *s, const kbm_impl *impl, kb_host *host);
/* Raises the mma kernel's dynamic shared-memory limit for the state's
   precision and stages (called from prepare, not from run). */
int kbm_mma_prepare(kbm_state *s, kb_host *host);

/* Raises the dynamic shared-memory limit of the pipelined kernel for the
   state's tile and stages (called from prepare, not from run). */
int kbm_pipelined_prepare(kbm_state *s, kb_host *host);
/* Shared-memory bytes the pipelined kernel needs for a tile and stages. */
size_t kbm_pipelined_smem(int tile, int stages);

/* cuBLAS: the handle, its stream and workspace (each run sets the math mode
   its row asks for: pedantic fp32, TF32 tensor ops, or the default, which
   uses tensor cores for bf16); and its release (teardown). */
int kbm_cublas_setup(kbm_state *s, kb_host *host);
void kbm_cublas_teardown(kbm_state *s);

/* ---- the tensor-core contract ------------------------------------------------
 * What matmul.c prepares for the tensor-core kernels (matmul_tc.cu,
 * matmul_wgmma.cu), per precision.  Inputs are generated in f32 and rounded to
 * the precision once, in setup(), so the double reference is computed from
 * exactly the values the kernels see.
 *   bf16:   a.host and b.host hold values rounded to bf16 (nearest, ties to
 *           even); a16 and b16 hold the same values as bf16 bit patterns
 *           (host and device), row-major like A and B.
 *   tf32:   a and b hold values rounded to tf32 (10 explicit mantissa bits,
 *           nearest, ties away from zero, as cvt.rna.tf32.f32 rounds); the
 *           kernels read a.dev and b.dev as f32.
 *   fp32x3: a and b hold full f32 values; the kernels split each into a tf32
 *           "big" part and a tf32 remainder themselves, inside run().
 * scratch: kbm_wgmma_scratch_bytes() bytes of device memory, allocated in
 * setup() when a selected variant needs it; a kernel may write anything there
 * in run() (B transposed, split operands), and every run rebuilds what it
 * reads from it, so the time of that work is in the measurement.
 * ------------------------------------------------------------------------ */
/* matmul_wgmma.cu (built for sm_90a): the device memory its run() needs as
   scratch for a shape and precision (0 when none); prepare(), called before
   a wgmma run, which skips the variant with a sentence (KB_EUNSUPPORTED) on a
   device that is not compute capability 9.0 and raises the kernels'
   shared-memory limits; and the run entry. */
size_t kbm_wgmma_scratch_bytes(uint64_t m, uint64_t n, uint64_t k, int precision);
int kbm_wgmma_prepare(kbm_state *s, kb_host *host);
int kbm_run_wgmma(kbm_state *s, const kbm_impl *impl, kb_host *host);
/* Frees s->wgmma (teardown() calls it for every state; NULL is fine). */
void kbm_wgmma_teardown(kbm_state *s);

/* ---- the test extension -----------------------------------------------------
 * ops->extension(KBM_TEST_EXTENSION) returns a kbm_test_ext, through which
 * kbench's tests read a state's inputs and write chosen values into its
 * output before verify().  Pointers stay valid until teardown().
 * ------------------------------------------------------------------------ */
#define KBM_TEST_EXTENSION "matmul.test"

typedef struct kbm_test_ext {
    uint32_t size;                       /* sizeof(kbm_test_ext) */
    const float *(*a)(const void *state); /* A, m x k, host copy */
    const float *(*b)(const void *state); /* B, k x n, host copy */
    float *(*c)(void *state);             /* C, m x n, host copy */
    int (*full)(const void *state);       /* 1: the full check; 0: sampled */
} kbm_test_ext;

#ifdef __cplusplus
}
#endif

#endif
