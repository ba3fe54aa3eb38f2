/*
 * reduce.h -- what the C side (reduce.c: descriptor, inputs, CPU variants,
 * verification) and the CUDA side (reduce_kernels.cu, reduce_lib.cu) of the
 * reduce plugin share.  Nothing here is exported from the plugin.
 *
 * The launch shapes live here, as inline functions both sides call, so that
 * verify() derives its error bound from exactly the grid the kernels used.
 */
#ifndef KBR_REDUCE_H
#define KBR_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "kbench/kit.h"
#include "kbench/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

enum kbr_dtype { KBR_F32 = 0, KBR_F64 = 1, KBR_I32 = 2 };

/* The `inputs` parameter: random draws (f32/f64 uniform in [-1, 1), checked
   against a derived error bound) or exact ones (small non-zero integers whose
   sums every variant computes exactly, checked for equality). */
enum kbr_inputs { KBR_RANDOM = 0, KBR_EXACT = 1 };

/* Parameters, in declaration order (params[] is indexed with these). */
enum kbr_param {
    KBR_P_N = 0,
    KBR_P_DTYPE,
    KBR_P_BLOCK,
    KBR_P_ITEMS,
    KBR_P_BULK_MIN,
    KBR_P_INPUTS,
    KBR_N_PARAMS
};

/* ---- the variant table ----------------------------------------------------
 * Each variant is one row of reduce_variants.def: the kb_variant the host sees
 * and the kbr_impl below, which says how the plugin runs it.  Nothing else in
 * the plugin names a variant: setup(), run(), verify() and the CUDA files act
 * on the row they are given.
 * ------------------------------------------------------------------------ */
typedef struct kbr_state kbr_state;
typedef struct kbr_impl kbr_impl;

/* One run: a CPU variant computes into the host output, a CUDA variant
   enqueues on host->stream.  Returns KB_OK, or a kb_status after
   host->fail() said what went wrong. */
typedef int (*kbr_run_fn)(kbr_state *s, const kbr_impl *impl, kb_host *host);

/* The variant's d for the error bound (README.md): the most additions any
   one element passes through on its way to the result, from the same shape
   functions the launchers use. */
typedef double (*kbr_depth_fn)(const kbr_state *s, const kbr_impl *impl, kb_host *host);

/* The classic variants' pass: blocks of `block` threads, each thread loading
   `per_thread` elements per round; a grid capped at `blocks_per_sm` blocks
   per multiprocessor loops over the rest (grid stride).  Passes repeat on the
   partial sums until one block is left. */
typedef struct kbr_pass {
    uint32_t block;         /* threads per block; 0: the `block` parameter   */
    uint32_t per_thread;    /* elements per thread per round; 0: `items`     */
    uint32_t blocks_per_sm; /* grid cap per multiprocessor; 0: no cap        */
} kbr_pass;

/* What a variant needs from setup() beyond the input and the output. */
enum kbr_needs {
    KBR_NEEDS_PARTIALS = 1u << 0, /* ping-pong buffers for the partial sums
                                     (a classic variant: `pass` is set)      */
    KBR_NEEDS_FINISH = 1u << 1,   /* per-block partials and the ticket
                                     counter of the onepass finish           */
    KBR_NEEDS_CUB = 1u << 2,      /* cub's temporary storage                 */
    KBR_NEEDS_THRUST = 1u << 3,   /* thrust's preallocated pool              */
    KBR_RESULT_ON_HOST = 1u << 4  /* run() hands the sum to the host
                                     (s->lib_result); download() copies it   */
};

/* Bit for dtype d in kbr_impl.dtypes. */
#define KBR_DTYPE_BIT(d) (1u << (d))

struct kbr_impl {
    kbr_run_fn run;     /* the launch (CUDA) or the loop (CPU)               */
    kbr_depth_fn depth; /* the error bound's depth rule                      */
    kbr_pass pass;      /* classic variants (KBR_NEEDS_PARTIALS) only        */
    uint32_t dtypes;    /* KBR_DTYPE_BIT of each dtype it runs; 0: all       */
    uint32_t needs;     /* enum kbr_needs                                    */
};

/* The multipass variant's fixed shape (the tutorial's): 1024 threads, two
   loads per thread. */
#define KBR_MULTIPASS_BLOCK 1024u

/* The multi-element variant keeps this many blocks per multiprocessor at
   most (a grid-stride loop does the rest), so that its second pass is one
   block; without a device count it assumes this many multiprocessors. */
#define KBR_MULTI_BLOCKS_PER_SM 4u
#define KBR_DEFAULT_SMS 132u

/* onepass: threads per block, the most blocks its partial array holds, and
   the vector loads each thread keeps in flight.  Why these values: see
   reduce_kernels.cu, next to the kernel. */
#define KBR_ONEPASS_BLOCK 256u
#define KBR_ONEPASS_BLOCKS_PER_SM 8u
#define KBR_ONEPASS_UNROLL 4u
#define KBR_ONEPASS_MAX_BLOCKS 4096u

/* onepass-bulk: the copy engine fills a ring of KBR_BULK_STAGES shared-memory
   stages of KBR_BULK_STAGE_BYTES each, KBR_BULK_BLOCKS_PER_SM blocks of
   KBR_ONEPASS_BLOCK threads per multiprocessor.  Inputs under the `bulk_min`
   parameter's bytes (default 512 MiB: on the H200 the copy engine overtakes
   the onepass kernel's 16-byte loads between 256 MiB and 512 MiB, see
   RESULTS.md) take the onepass path instead (same finish).  Why these values:
   see reduce_kernels.cu. */
#define KBR_BULK_STAGE_BYTES 16384u
#define KBR_BULK_STAGES 4u
#define KBR_BULK_BLOCKS_PER_SM 2u

/* onepass-bulk's schedule: after all but KBR_BULK_DYN_ROUNDS whole rounds of
   fixed chunks, a block takes the remaining chunks one at a time from a global
   counter (so that blocks on faster paths take more and all finish together);
   each such chunk's sum goes to its own slot after the block partials in
   s->blk (KBR_ONEPASS_MAX_BLOCKS * 8 bytes, allocated in setup), which
   bounds the dynamic rounds (13 with 264 blocks in f64). */
#define KBR_BULK_DYN_ROUNDS 13u

/* Exact inputs in i32: non-zero integers in [-KBR_EXACT_I32_K, KBR_EXACT_I32_K]
   (i32 sums are exact modulo 2^32 in any order, so no bound on n is needed). */
#define KBR_EXACT_I32_K 100

/* The device memory plan() states for each library variant
   (kb_work.variant_device_bytes): a bound on its temporary storage, which
   only a size query on the device could tell (cub::DeviceReduce keeps a
   partial per block of its first pass, a few thousand blocks at most;
   thrust::reduce asks its allocator for the same).  setup() logs a
   warning if a library asks for more. */
#define KBR_LIB_TEMP_ALLOWANCE (1u << 20)

/* gridDim.x may not exceed this. */
#define KBR_MAX_GRID 2147483647ull

/* The state of one point (setup() .. teardown()). */
struct kbr_state {
    uint64_t n;
    int dtype;
    size_t esize;   /* bytes per element */
    uint32_t block; /* the `block` parameter */
    uint32_t items; /* the `items` parameter */
    uint64_t bulk_min; /* the `bulk_min` parameter: bytes */
    int inputs;     /* the `inputs` parameter (enum kbr_inputs) */
    int32_t exact_k; /* exact inputs: non-zero integers in [-exact_k, exact_k] */
    int sm_count;   /* host->sm_count, or KBR_DEFAULT_SMS without a GPU */
    int gpu;        /* host->stream != NULL */
    uint64_t variants; /* the variants setup() was asked for */
    uint32_t needs;    /* the OR of their kbr_impl.needs */

    /* Buffers (kbench/kit.h): a host copy, and a device copy with a GPU. */
    kbk_buf in;  /* the n inputs; the host copy pinned with a GPU */
    kbk_buf out; /* the output scalar (esize bytes) */

    long double ref;  /* exact-enough sum of the stored inputs (floats) */
    uint32_t ref_u32; /* the sum modulo 2^32 (i32) */
    double abs_sum;   /* sum of |x_i|, for the error bound */

    /* Device only. */
    kbk_buf ping, pong; /* partial sums between passes */
    kbk_buf blk;        /* onepass per-block partials (and onepass-bulk's slots) */
    kbk_buf counter;    /* onepass blocks done, onepass-bulk's chunk claims */
    kbk_buf cub_temp;   /* cub's temporary storage */
    kbk_buf thrust_pool; /* thrust's preallocated pool */
    size_t thrust_offset, thrust_outstanding; /* the pool's bump allocator */
    int thrust_fallback;   /* thrust asked for more than the pool in run() */
    int bulk_smem_raised;  /* onepass-bulk's shared-memory limit is raised */
    unsigned char lib_result[16]; /* a KBR_RESULT_ON_HOST variant's sum */
};

/* ---- launch shapes, shared with verify() -------------------------------- */

static inline uint64_t kbr_ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Threads per block of one pass. */
static inline uint32_t kbr_pass_block(const kbr_pass *p, uint32_t block)
{
    return p->block ? p->block : block;
}

/* Elements one block of a pass covers (per grid-stride round). */
static inline uint64_t kbr_block_elems(const kbr_pass *p, uint32_t block, uint32_t items)
{
    return (uint64_t)kbr_pass_block(p, block) * (p->per_thread ? p->per_thread : items);
}

/* Blocks of one pass over cnt elements. */
static inline uint64_t kbr_pass_blocks(const kbr_pass *p, uint64_t cnt, uint32_t block,
                                       uint32_t items, int sm_count)
{
    uint64_t b = kbr_ceil_div(cnt, kbr_block_elems(p, block, items));
    if (p->blocks_per_sm) {
        uint64_t cap = (sm_count > 0 ? (uint64_t)sm_count : (uint64_t)KBR_DEFAULT_SMS) *
                       p->blocks_per_sm;
        if (b > cap)
            b = cap;
    }
    return b;
}

/* onepass: blocks for n elements of esize bytes: enough to fill every
   multiprocessor, but no more than there are rounds of vector loads, so that a
   small input is one block and one launch. */
static inline uint64_t kbr_onepass_blocks(uint64_t n, size_t esize, int sm_count)
{
    uint64_t vecs = n / (16 / esize);
    uint64_t b = kbr_ceil_div(vecs, (uint64_t)KBR_ONEPASS_BLOCK * KBR_ONEPASS_UNROLL);
    uint64_t cap =
        (sm_count > 0 ? (uint64_t)sm_count : (uint64_t)KBR_DEFAULT_SMS) * KBR_ONEPASS_BLOCKS_PER_SM;
    if (cap > KBR_ONEPASS_MAX_BLOCKS)
        cap = KBR_ONEPASS_MAX_BLOCKS;
    if (b > cap)
        b = cap;
    return b ? b : 1;
}

/* onepass-bulk: whether n elements of esize bytes take the copy-engine path
   (else the onepass kernel runs), and its blocks: one per whole stage of
   input, at most KBR_BULK_BLOCKS_PER_SM per multiprocessor. */
static inline int kbr_bulk_path(uint64_t n, size_t esize, uint64_t bulk_min)
{
    return n >= bulk_min / esize;
}

static inline uint64_t kbr_bulk_blocks(uint64_t n, size_t esize, int sm_count)
{
    uint64_t chunks = n / (KBR_BULK_STAGE_BYTES / esize);
    uint64_t cap = (sm_count > 0 ? (uint64_t)sm_count : (uint64_t)KBR_DEFAULT_SMS) *
                   KBR_BULK_BLOCKS_PER_SM;
    if (cap > KBR_ONEPASS_MAX_BLOCKS)
        cap = KBR_ONEPASS_MAX_BLOCKS;
    if (chunks > cap)
        chunks = cap;
    return chunks ? chunks : 1;
}

/* onepass-bulk: the most dynamic rounds the slots hold with g blocks (fewer
   than (rounds + 1) * g slots are used, after the g block partials). */
static inline uint64_t kbr_bulk_dyn_cap(uint64_t g, size_t esize)
{
    uint64_t slots = (uint64_t)KBR_ONEPASS_MAX_BLOCKS * 8 / esize;
    return slots >= 2 * g ? (slots - g) / g - 1 : 0;
}

/* onepass-bulk: the dynamic rounds of n elements (at most the whole rounds
   there are, and what the slots hold). */
static inline uint64_t kbr_bulk_dyn_rounds(uint64_t n, size_t esize, int sm_count)
{
    uint64_t g = kbr_bulk_blocks(n, esize, sm_count);
    uint64_t rounds = n / (KBR_BULK_STAGE_BYTES / esize) / g;
    uint64_t d = KBR_BULK_DYN_ROUNDS, cap = kbr_bulk_dyn_cap(g, esize);
    if (d > cap)
        d = cap;
    return d < rounds ? d : rounds;
}

/* ---- the CUDA side: the run entries of the rows ---------------------------
 * reduce_kernels.cu: the hand-written kernels; reduce_lib.cu: the libraries.
 * Each returns KB_OK, or a kb_status after host->fail() named the call.
 * ------------------------------------------------------------------------ */
int kbr_run_interleaved(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_interleaved_strided(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_sequential(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_first_add(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_unroll_warp(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_unroll_complete(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_multi_element(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_shuffle(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_multipass(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_onepass(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_onepass_atomic(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_onepass_bulk(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_onepass_pdl(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_onepass_pdl_late(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_cub(kbr_state *s, const kbr_impl *impl, kb_host *host);
int kbr_run_thrust(kbr_state *s, const kbr_impl *impl, kb_host *host);

/* The libraries' temporary storage (s->cub_temp, s->thrust_pool), for
   s->needs (KBR_NEEDS_CUB, KBR_NEEDS_THRUST); teardown frees the buffers. */
int kbr_lib_setup(kbr_state *s, kb_host *host);

/* ---- the test extension ----------------------------------------------------
 * ops->extension(KBR_TEST_EXTENSION) returns a kbr_test_ext: what kbench's
 * tests reach inside a state made by setup(), so that they can write a
 * chosen sum into the output and show that verify() rejects it.  Pointers
 * stay valid until teardown().
 * ------------------------------------------------------------------------ */
#define KBR_TEST_EXTENSION "reduce.test"

typedef struct kbr_test_ext {
    uint32_t size;                           /* sizeof(kbr_test_ext)      */
    const void *(*input)(const void *state); /* the n inputs, host copy,
                                                in the element type       */
    void *(*output)(void *state);            /* the output scalar, host
                                                copy, in the element type */
} kbr_test_ext;

#ifdef __cplusplus
}
#endif

#endif
