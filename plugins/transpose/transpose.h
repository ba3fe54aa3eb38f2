/*
 * transpose.h -- what the C side (transpose.c: descriptor, inputs, CPU
 * variants, verification) and the CUDA side (transpose_kernels.cu,
 * transpose_lib.cu) of the transpose plugin share.  Nothing here is exported
 * from the plugin.
 *
 * The operation: the input is a rows x cols matrix in row-major order, the
 * output its transpose, a cols x rows matrix in row-major order:
 *     out[c * rows + r] = in[r * cols + c].
 */
#ifndef KBT_TRANSPOSE_H
#define KBT_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

#include "kbench/kit.h"
#include "kbench/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types: 4, 8 and 2 bytes.  Transposition moves bits, so the
   2-byte type is plain unsigned 16-bit words (what a bf16 or f16 matrix
   would move too). */
enum kbt_dtype { KBT_F32 = 0, KBT_F64 = 1, KBT_U16 = 2, KBT_N_DTYPES };

/* Parameters, in declaration order (params[] is indexed with these). */
enum kbt_param {
    KBT_P_ROWS = 0,
    KBT_P_COLS,
    KBT_P_DTYPE,
    KBT_P_BLOCK_X,
    KBT_P_BLOCK_Y,
    KBT_P_BAND,      /* window, vec16-band: tile rows per band of the tile order */
    KBT_P_STREAMING, /* window, vec16-band: evict-first (.cs) stores          */
    KBT_N_PARAMS
};

typedef struct kbt_state kbt_state;
typedef struct kbt_impl kbt_impl;

/* One run: a CPU variant computes into the host output, a CUDA variant
   enqueues on host->stream.  Returns KB_OK, or a kb_status after
   host->fail() said what went wrong. */
typedef int (*kbt_run_fn)(kbt_state *s, const kbt_impl *impl, kb_host *host);

/* Called from prepare() before a variant runs on a GPU (building what its
   launches need, or skipping it with KB_EUNSUPPORTED and a sentence). */
typedef int (*kbt_prepare_fn)(kbt_state *s, kb_host *host);

/* What a variant needs from setup() beyond the input and the output, and
   what its output is. */
enum kbt_needs {
    KBT_NEEDS_CUBLAS = 1u << 0, /* a cuBLAS handle on host->stream           */
    KBT_OUTPUT_IS_COPY = 1u << 1 /* the output is a plain copy of the input
                                   (the copy ceiling), verified as such      */
};

#define KBT_DTYPE_BIT(d) (1u << (d))

struct kbt_impl {
    kbt_run_fn run;  /* the loop (CPU) or the launch (CUDA)                  */
    uint32_t dtypes; /* KBT_DTYPE_BIT of each dtype it runs; 0: all          */
    uint32_t needs;  /* enum kbt_needs                                       */
    kbt_prepare_fn prepare; /* or NULL: nothing to do before a run            */
};

/* The state of one point (setup() .. teardown()). */
struct kbt_state {
    uint64_t rows, cols; /* the input's shape                                */
    int dtype;
    size_t esize;        /* bytes per element                                */
    int block_x, block_y; /* the block shape of naive, naive-mirror, reg4, reg2 */
    uint64_t band;       /* window, vec16-band: tile rows per band (0: all)  */
    int streaming;       /* window, vec16-band: .cs stores                    */
    int gpu;             /* host->stream != NULL                              */
    int sm_count;
    uint64_t variants;   /* the variants setup() was asked for               */
    uint32_t needs;      /* the OR of their needs                            */
    kbk_buf in;          /* rows x cols, host copy and device copy           */
    kbk_buf out;         /* cols x rows                                      */
    void *cublas;        /* cublasHandle_t, or NULL                          */
    void *tma;           /* transpose_tma.cu's own data (tensor maps), or NULL */
};

/* The CPU variants' square block (elements per side). */
#define KBT_CPU_BLOCK 32u

/* gridDim.x may not exceed this; kernels loop over tiles past it. */
#define KBT_MAX_GRID 2147483647ull

/* cuBLAS takes int sizes. */
#define KBT_CUBLAS_MAX 2147483647ull

/* Device memory reserved for cuBLAS's workspace in plan(). */
#define KBT_CUBLAS_ALLOWANCE (32u << 20)

static inline uint64_t kbt_ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* ---- the CUDA side: the run entries of the rows (transpose_kernels.cu,
   transpose_fast.cu, transpose_lib.cu).  Each returns KB_OK, or a kb_status after host->fail()
   named the call. ------------------------------------------------------- */
int kbt_run_naive(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_naive_mirror(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_smem(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_smem_padded(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_smem_swizzled(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_reg4(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_reg2(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_vec16(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_vec16_pipe(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_window(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_vec16_band(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_window_hoist(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_vec16_band_hoist(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_ragged(kbt_state *s, const kbt_impl *impl, kb_host *host);
/* transpose_tma.cu (built for sm_90a): prepare() builds the tensor maps and
   sizes the grid, or skips the variant on a device that is not compute
   capability 9.0; run() launches (or runs the ragged kernel where TMA
   cannot map the strides); teardown() frees s->tma (NULL is fine). */
int kbt_tma_prepare(kbt_state *s, kb_host *host);
int kbt_run_tma(kbt_state *s, const kbt_impl *impl, kb_host *host);
void kbt_tma_teardown(kbt_state *s);
int kbt_run_copy(kbt_state *s, const kbt_impl *impl, kb_host *host);
int kbt_run_cublas(kbt_state *s, const kbt_impl *impl, kb_host *host);

/* cuBLAS: create the handle on host->stream (s->cublas), destroy it. */
int kbt_cublas_setup(kbt_state *s, kb_host *host);
void kbt_cublas_teardown(kbt_state *s, kb_host *host);

/* ---- the test extension ----------------------------------------------------
 * ops->extension(KBT_TEST_EXTENSION) returns a kbt_test_ext: the host copies
 * of a state's input and output, so that kbench's tests can damage an output
 * (swap two elements, perturb one) and show that verify() rejects it.
 * ------------------------------------------------------------------------ */
#define KBT_TEST_EXTENSION "transpose.test"

typedef struct kbt_test_ext {
    uint32_t size;                           /* sizeof(kbt_test_ext)        */
    const void *(*input)(const void *state); /* rows x cols, host copy      */
    void *(*output)(void *state);            /* cols x rows, host copy      */
} kbt_test_ext;

#ifdef __cplusplus
}
#endif

#endif
