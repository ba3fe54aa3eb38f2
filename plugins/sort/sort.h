/*
 * sort.h -- the sort family's shared declarations: parameter indices, the
 * state, the per-variant implementation row, the CUDA entry points
 * (sort_kernels.cu, sort_lib.cu) and the test extension.
 *
 * Keys are handled as 32-bit patterns whatever their type; sort_ord() maps a
 * pattern to an unsigned integer whose order is the documented key order:
 *   u32: the value; i32: the value with its sign bit flipped;
 *   f32: -0 is first mapped to +0 (the two compare equal), then a negative
 *        float has all its bits flipped and a positive one its sign bit set,
 *        so that -inf < ... < -subnormals < -0 = +0 < ... < +inf.
 * NaN is never generated.  Every variant sorts by sort_ord() and moves the
 * original bit patterns, so -0 stays -0.
 */
#ifndef KBENCH_SORT_H
#define KBENCH_SORT_H

#include <stddef.h>
#include <stdint.h>

#include <kbench/kit.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { SORT_P_N, SORT_P_KEY, SORT_P_VALUES, SORT_P_DIST, SORT_P_TILE, SORT_P_HIST, SORT_N_PARAMS };
enum { SORT_U32, SORT_I32, SORT_F32 };
enum { SORT_KEYS_ONLY, SORT_PAIRS };
enum {
    SORT_UNIFORM,
    SORT_PERMUTATION,
    SORT_SORTED,
    SORT_REVERSED,
    SORT_NEARLY,
    SORT_FEW_UNIQUE,
    SORT_ALL_EQUAL,
    SORT_SPECIAL,
    SORT_N_DISTS
};

/* The largest n: positions and original indices are 32-bit, and CUB's radix
   sort takes an int count. */
#define SORT_MAX_N 2147483647ull

/* Limits of the quadratic variants (prepare() refuses larger n). */
#define SORT_ODDEVEN_MAX 2049u          /* one block of 1024 threads, one per pair */
#define SORT_MB_SEGMENT 2048u           /* odd-even-multiblock: keys per block      */
#define SORT_MB_MAX (1u << 20)          /* odd-even-multiblock: n limit             */

/* Classic radix: 256 threads, 16 keys each per tile; 8-bit digits. */
#define SORT_RADIX_THREADS 256u
#define SORT_RADIX_ITEMS 16u
#define SORT_RADIX_TILE (SORT_RADIX_THREADS * SORT_RADIX_ITEMS)

/* Onesweep: 256 threads, 24 keys each per tile. */
#define SORT_OS_THREADS 256u
#define SORT_OS_ITEMS 24u
#define SORT_OS_TILE (SORT_OS_THREADS * SORT_OS_ITEMS)

static inline uint64_t sort_ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static inline uint32_t sort_ord(uint32_t b, int key)
{
    if (key == SORT_U32)
        return b;
    if (key == SORT_I32)
        return b ^ 0x80000000u;
    if (b == 0x80000000u)
        b = 0;
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

/* onesweep-early's tile shapes (the `tile` parameter): threads x keys per
   thread; 384x20-match groups digits with __match_any_sync instead of
   ballots.  Each shape has a number of blocks per SM asked of the
   compiler (sort_early.cu), which caps its registers: 2 for 384x23,
   384x21, 512x16 and 384x20-match, 3 for 384x20 and 384x16, 4 for 256x24,
   256x20 and 256x18.  sort_early.cu instantiates each one. */
enum {
    SORT_TILE_AUTO,
    SORT_TILE_384X20,
    SORT_TILE_384X23,
    SORT_TILE_512X16,
    SORT_TILE_256X24,
    SORT_TILE_384X20_MATCH,
    SORT_TILE_256X20,
    SORT_TILE_256X18,
    SORT_TILE_384X16,
    SORT_TILE_384X21,
    SORT_N_TILES
};

/* The shape `tile` stands for (auto resolved); never SORT_TILE_AUTO. */
/* auto: the shapes that were fastest on an H200 (tune.ini;
   results/2026-11-22-h200/run19-sort-rank): keys alone 256x24, four
   blocks of 64 registers an SM (2^28 f32 5.18 ms, u32 5.31; 384x20 at
   three blocks 5.20 and 5.34, 256x20 5.49 and 5.65), pairs 384x20 at
   three blocks (7.58 ms against 7.96 for 384x23 and 8.75 for 256x20). */
static inline int sort_early_shape(int tile, int pairs)
{
    if (tile == SORT_TILE_AUTO)
        return pairs ? SORT_TILE_384X20 : SORT_TILE_256X24;
    return tile;
}

/* onesweep-split-hold's shape: its pairs take 384x21 for auto (the values it
   holds across the look-back spill from the three-block shapes' 56
   registers; 384x21 holds them in 80, and was its fastest H100 shape);
   otherwise sort_early_shape's.  Its tiles are never smaller than
   sort_early_shape's, so the status array sized for that holds them. */
static inline int sort_early_hold_shape(int tile, int pairs)
{
    if (tile == SORT_TILE_AUTO && pairs)
        return SORT_TILE_384X21;
    return sort_early_shape(tile, pairs);
}

/* onesweep-early's histogram (the `hist` parameter): how many copies
   ("parts") of its shared counters a block keeps, lane l adding to part
   l % P (sort_early.cuh, oe_hist_body).  1 is the single copy it had
   before, and auto: on an H200 (2^26 keys, ncu) 4 parts took the kernel
   from 82 to 68 us on all-equal keys but from 122 to 130 us on uniform u32
   and from 108 to 113 us on uniform f32, and the whole sort did not move
   on f32 (README). */
enum { SORT_HIST_AUTO, SORT_HIST_1, SORT_HIST_4, SORT_HIST_8, SORT_N_HISTS };

/* The parts `hist` stands for (auto resolved); 0 for a value that is none. */
static inline int sort_early_hist_parts(int hist)
{
    switch (hist) {
    case SORT_HIST_AUTO:
    case SORT_HIST_1:
        return 1;
    case SORT_HIST_4:
        return 4;
    case SORT_HIST_8:
        return 8;
    default:
        return 0;
    }
}

/* Keys per tile of a shape; 0 for a value that is no shape. */
static inline uint32_t sort_early_tile_keys(int shape)
{
    switch (shape) {
    case SORT_TILE_384X20:
    case SORT_TILE_384X20_MATCH:
        return 384 * 20;
    case SORT_TILE_384X23:
        return 384 * 23;
    case SORT_TILE_512X16:
        return 512 * 16;
    case SORT_TILE_256X24:
        return 256 * 24;
    case SORT_TILE_256X20:
        return 256 * 20;
    case SORT_TILE_256X18:
        return 256 * 18;
    case SORT_TILE_384X16:
        return 384 * 16;
    case SORT_TILE_384X21:
        return 384 * 21;
    default:
        return 0;
    }
}

/* Device bytes of onesweep-early's tile status for n keys: four passes of
   one 64-bit word per tile and digit. */
static inline uint64_t sort_early_status_bytes(uint64_t n, int tile, int pairs)
{
    uint32_t keys = sort_early_tile_keys(sort_early_shape(tile, pairs));
    return keys ? 4 * sort_ceil_div(n, keys) * 256 * 8 : 0;
}

/* onesweep-early's buffer: counts and starts of 4 x 256 digits, a ticket,
   4 tile counters, padding (sort_early.cuh: OE_BUF_WORDS). */
#define SORT_EARLY_BUF_BYTES (2056u * 4u)

/* What a variant needs beyond the inputs and outputs. */
#define SORT_NEEDS_ALT 0x1u      /* alternate key/value buffers (LSD ping-pong) */
#define SORT_NEEDS_RADIX 0x2u    /* classic radix: per-tile digit counts       */
#define SORT_NEEDS_ONESWEEP 0x4u /* onesweep: histograms, tile status          */
#define SORT_NEEDS_LIB 0x8u      /* a library's temporary storage              */
#define SORT_NEEDS_HOST_SCRATCH 0x10u /* CPU variants: 2n words of host memory */
#define SORT_NEEDS_EARLY 0x20u   /* onesweep-early: its buffer and tile status  */
/* onesweep-split-hold: onesweep-early whose pairs send the values through
   the keys' stage after the keys, held in registers over the look-back
   (sort_early.cuh, oe_vals_mode); with SORT_NEEDS_EARLY. */
#define SORT_NEEDS_VALS_HOLD 0x40u /* values held in registers over the look-back */

typedef struct sort_state sort_state;
typedef struct sort_impl sort_impl;
typedef int (*sort_run_fn)(sort_state *s, const sort_impl *impl, kb_host *host);

/* Library variants, for sort_lib.cu. */
enum { SORT_LIB_NONE, SORT_LIB_CUB_RADIX, SORT_LIB_CUB_MERGE, SORT_LIB_THRUST };

struct sort_impl {
    sort_run_fn run;
    uint32_t needs;   /* SORT_NEEDS_*                                         */
    int stable;       /* equal keys keep their input order (checked on pairs) */
    uint64_t max_n;   /* 0: SORT_MAX_N                                        */
    const char *limit; /* why max_n, for the sentence prepare() gives        */
    int lib;          /* SORT_LIB_*                                           */
};

struct sort_state {
    uint64_t n;
    int key, pairs, dist;
    int tile;         /* SORT_TILE_*, as given (onesweep-early) */
    int hist;         /* SORT_HIST_*, as given (onesweep-early) */
    int gpu;
    int sm_count;
    uint64_t variants; /* the mask setup() received */
    uint32_t needs;
    kbk_buf keys_in, vals_in, keys_out, vals_out; /* both copies          */
    kbk_buf keys_alt, vals_alt;                   /* device only          */
    kbk_buf radix_counts;                         /* device only          */
    kbk_buf os_hist;   /* device only: 4 x 256 digit counts, then 4 tile counters */
    kbk_buf os_status; /* device only: 4 x tiles x 256 status words (64-bit)     */
    kbk_buf lib_temp;                             /* device only          */
    size_t lib_temp_bytes[4];                     /* per SORT_LIB_*        */
    uint32_t os_epoch;                            /* onesweep run counter  */
    kbk_buf oe_buf;    /* device only: onesweep-early's counts, starts, counters */
    kbk_buf oe_status; /* device only: its tile status (64-bit words)            */
    uint32_t oe_epoch;                            /* its run counter       */
    uint32_t *ref;        /* the reference: keys_in sorted, stable          */
    uint32_t *scratch;    /* 2n words of host memory for the CPU variants   */
    uint64_t neg_zeros;   /* f32: how many -0 keys the input holds          */
};

/* CUDA entry points (only enqueue on host->stream). */
int sort_run_oddeven(sort_state *s, const sort_impl *impl, kb_host *host);
int sort_run_oddeven_mb(sort_state *s, const sort_impl *impl, kb_host *host);
int sort_run_bitonic(sort_state *s, const sort_impl *impl, kb_host *host);
int sort_run_merge(sort_state *s, const sort_impl *impl, kb_host *host);
int sort_run_radix(sort_state *s, const sort_impl *impl, kb_host *host);
int sort_run_onesweep(sort_state *s, const sort_impl *impl, kb_host *host);
int sort_run_lib(sort_state *s, const sort_impl *impl, kb_host *host);
int sort_run_early(sort_state *s, const sort_impl *impl, kb_host *host);
/* Raises the shared-memory limit of the onesweep-early pass kernel that the
   state's tile shape, key type and value mode select. */
int sort_early_setup(sort_state *s, kb_host *host);
/* Sizes and allocates the libraries' temporary storage for the variants in
   s->variants whose rows name a library (impls: the table, count rows). */
int sort_lib_setup(sort_state *s, const sort_impl *impls, uint32_t count, kb_host *host);
/* Device bytes of onesweep's tile status for n keys. */
uint64_t sort_os_status_bytes(uint64_t n);

/* ---- the test extension ----------------------------------------------------
 * ops->extension(SORT_TEST_EXTENSION): pointers into a state made by setup()
 * (host copies, valid until teardown) so that tests can damage an output and
 * show that verify() rejects it.
 * ------------------------------------------------------------------------ */
#define SORT_TEST_EXTENSION "sort.test"

typedef struct sort_test_ext {
    uint32_t size;
    const uint32_t *(*keys_in)(const void *state);
    uint32_t *(*keys_out)(void *state);
    uint32_t *(*vals_out)(void *state);
    const uint32_t *(*reference)(const void *state);
} sort_test_ext;

#ifdef __cplusplus
}
#endif

#endif
