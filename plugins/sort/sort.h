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

/* ---- tile = auto: a table per part ---------------------------------------
 * No one shape is fastest on both Hopper parts: on an H100 onesweep-early's
 * pairs at 384x20 (three blocks an SM, the H200's fastest) ran 11% slower
 * than the two-block shapes, and the pass that holds the values across the
 * look-back (onesweep-split-hold's) at 384x21 was the fastest there, while
 * on an H200 that pass was 10% slower than onesweep-early's 384x20.  So
 * `auto` reads a row of this table for the part the run is on, told apart
 * by the device's name (sort_part_of); README.md's "tile = auto" gives each
 * row's measurements.  A row says, for keys alone and for pairs, the shape
 * and whether the values are held in registers across the look-back
 * (sort_early.cuh, OE_VALS_HOLD) -- for onesweep-early, and for
 * onesweep-split-hold, which always holds them.  A part the table does not
 * know takes the row of SORT_PART_OTHER (the H200's shapes, the first
 * sweep's). */
enum { SORT_PART_OTHER, SORT_PART_H100, SORT_PART_H200, SORT_N_PARTS };
#define SORT_PART_ANY (-1) /* plan(): no device yet, every row bounds */

/* What a run of onesweep-early (hold_variant 0) or onesweep-split-hold (1)
   launches: a shape (never SORT_TILE_AUTO) and the values' mode. */
typedef struct sort_early_pick {
    int shape;
    int hold; /* pairs: the values held across the look-back */
} sort_early_pick;

/* The part of a device named `name` (cudaDeviceProp.name): "NVIDIA H100
   80GB HBM3", "NVIDIA H200", ... ; a GH200's H100-class GPU ("NVIDIA
   GH200 480GB") is not an H200. */
static inline int sort_part_of(const char *name)
{
    for (const char *c = name; c && *c; c++) {
        if (c != name && c[-1] != ' ')
            continue; /* words only */
        if (c[0] == 'H' && c[1] == '1' && c[2] == '0' && c[3] == '0' &&
            (c[4] == ' ' || c[4] == '\0'))
            return SORT_PART_H100;
        if (c[0] == 'H' && c[1] == '2' && c[2] == '0' && c[3] == '0' &&
            (c[4] == ' ' || c[4] == '\0'))
            return SORT_PART_H200;
    }
    return SORT_PART_OTHER;
}

/* The table (the measurements behind each row: README.md, "tile = auto").
   Keys alone: 256x24 (four blocks of 64 registers an SM) on both parts.
   Pairs: H100, the held values at 384x21 for both variants (2^28 u32:
   8.90 ms against 9.02 for onesweep-early's best staged shape, 384x23,
   and 10.10 for 384x20); H200 and others, onesweep-early at 384x20
   staged (7.49 ms against 7.96 at 384x23) and onesweep-split-hold at
   384x21 (its shape with no spill). */
static inline sort_early_pick sort_early_auto(int part, int pairs, int hold_variant)
{
    sort_early_pick k = {SORT_TILE_256X24, 0};
    if (!pairs)
        return k;
    if (hold_variant || part == SORT_PART_H100) {
        sort_early_pick h = {SORT_TILE_384X21, 1};
        return h;
    }
    sort_early_pick e = {SORT_TILE_384X20, 0};
    return e;
}

/* What `tile` stands for on `part`: auto's row, or the shape given, with
   the variant's own values' mode. */
static inline sort_early_pick sort_early_pick_of(int tile, int pairs, int part, int hold_variant)
{
    if (tile == SORT_TILE_AUTO)
        return sort_early_auto(part, pairs, hold_variant);
    sort_early_pick p = {tile, pairs && hold_variant};
    return p;
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
   one 64-bit word per tile and digit, for the smallest tiles either
   variant runs on `part` (SORT_PART_ANY: on any part), so that one array
   serves onesweep-early and onesweep-split-hold. */
static inline uint64_t sort_early_status_bytes(uint64_t n, int tile, int pairs, int part)
{
    uint32_t keys = 0;
    for (int q = 0; q < SORT_N_PARTS; q++) {
        if (part != SORT_PART_ANY && q != part)
            continue;
        for (int hold = 0; hold < 2; hold++) {
            uint32_t k = sort_early_tile_keys(sort_early_pick_of(tile, pairs, q, hold).shape);
            if (!k)
                return 0;
            if (!keys || k < keys)
                keys = k;
        }
    }
    return keys ? 4 * sort_ceil_div(n, keys) * 256 * 8 : 0;
}

/* onesweep-early's buffer: counts and starts of 4 x 256 digits, a ticket,
   4 tile counters, padding, the pass plan (sort_early.cuh: OE_BUF_WORDS). */
#define SORT_EARLY_BUF_BYTES (2064u * 4u)

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
    int part;         /* SORT_PART_*: the row tile = auto reads  */
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
