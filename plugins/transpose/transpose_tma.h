/*
 * transpose_tma.h -- the tma variant's decisions that need no GPU: when the
 * Tensor Memory Accelerator can serve a shape, the tile shape per element
 * size, the tile order, and how the consumer threads cut a tile into
 * sub-blocks and where each 16-byte chunk lives in shared memory.  The
 * kernel (transpose_tma.cu) computes its addresses with these functions and
 * the host test (tests/test_transpose_tma.c) checks them: every element
 * moved once to its transposed place, every quarter-warp's 16-byte shared
 * accesses on eight different bank groups.  Plain C, also compiled as CUDA
 * (host and device).
 *
 * The tile: R input rows x C input columns, 16 KiB whatever the element
 * size (esize 2, 4 or 8 bytes): C = 64 and R = 256 / esize (u16 128 x 64,
 * f32 64 x 64, f64 32 x 64).  TMA copies it in boxes whose inner extent is
 * one 128-byte row (CB = 128 / esize elements), the largest a box with the
 * 128-byte swizzle may have:
 *   load boxes   CB columns x R rows of the input, C / CB of them (u16 1,
 *                f32 2, f64 4), side by side in the stage;
 *   store boxes  CB columns (input rows) x C rows of the output, always 2
 *                (R / CB = 2).
 * In shared memory a box is a stack of 128-byte rows whose eight 16-byte
 * chunks are swizzled: chunk k of row y sits in slot k ^ (y % 8) (TMA's
 * 128-byte swizzle, boxes on 1024-byte boundaries).
 *
 * The transpose in shared memory works on sub-blocks of W x W elements
 * (W = 16 / esize elements per chunk): a thread reads the W chunks of one
 * sub-block from the input tile (W rows, one chunk column), transposes them
 * in registers and writes W chunks to the output tile.  A quarter-warp (8
 * threads) serves 16-byte accesses together, so it must touch 8 different
 * slots.  Sub-block (rb, cb) row j reads slot (cb % 8) ^ ((W rb + j) % 8)
 * and writes slot (rb % 8) ^ ((W cb + j) % 8).  Thread i of a quarter
 * takes rb = 8 P + i and cb = 8 Q + (i ^ d) (one "diagonal" d of an 8 x 8
 * block (P, Q) of sub-blocks): both slots are then i ^ ((W i) % 8) XORed
 * with a constant, and i -> i ^ ((W i) % 8) is one-to-one on 0..7 (the
 * shift only moves bits up), so the 8 slots differ.  The 8 diagonals of
 * every block cover its 64 sub-blocks once.
 */
#ifndef KBT_TRANSPOSE_TMA_H
#define KBT_TRANSPOSE_TMA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define KBT_TMA_HD static __host__ __device__ __forceinline__
#else
#define KBT_TMA_HD static inline
#endif

/* The box's inner extent (one swizzled row) and the swizzle's period. */
#define KBT_TMA_ROW_BYTES 128u
#define KBT_TMA_SWIZZLE_ROWS 8u
/* Bytes of one tile (and of one stage of the ring). */
#define KBT_TMA_TILE_BYTES 16384u
/* Input columns of a tile, for every element size. */
#define KBT_TMA_COLS 64u
/* The consumer threads of a block (4 warps) and the quarter-warps among
   them. */
#define KBT_TMA_CONSUMERS 128u
#define KBT_TMA_QUARTERS (KBT_TMA_CONSUMERS / 8u)
/* TMA requires every row of a global tensor (after the first) to start a
   multiple of this many bytes after the one before. */
#define KBT_TMA_STRIDE_ALIGN 16u

/* Input rows of a tile. */
KBT_TMA_HD unsigned kbt_tma_rows(unsigned esize) { return 256u / esize; }
/* Elements per 16-byte chunk (the sub-block's side). */
KBT_TMA_HD unsigned kbt_tma_w(unsigned esize) { return 16u / esize; }
/* Elements per 128-byte box row. */
KBT_TMA_HD unsigned kbt_tma_cb(unsigned esize) { return KBT_TMA_ROW_BYTES / esize; }
/* Load boxes per tile (C / CB) and store boxes per tile (R / CB). */
KBT_TMA_HD unsigned kbt_tma_load_boxes(unsigned esize) { return KBT_TMA_COLS / kbt_tma_cb(esize); }
KBT_TMA_HD unsigned kbt_tma_store_boxes(unsigned esize)
{
    return kbt_tma_rows(esize) / kbt_tma_cb(esize);
}
/* Sub-blocks each consumer thread moves per tile. */
KBT_TMA_HD unsigned kbt_tma_steps(unsigned esize)
{
    const unsigned w = kbt_tma_w(esize);
    return (kbt_tma_rows(esize) / w) * (KBT_TMA_COLS / w) / KBT_TMA_CONSUMERS;
}

/* Whether TMA can map both matrices: the input's rows are cols * esize
   bytes apart and the output's rows * esize, and both must be multiples of
   16 bytes.  Otherwise the variant runs the ragged path instead. */
KBT_TMA_HD int kbt_tma_strides_ok(uint64_t rows, uint64_t cols, unsigned esize)
{
    return (cols * esize) % KBT_TMA_STRIDE_ALIGN == 0 && (rows * esize) % KBT_TMA_STRIDE_ALIGN == 0;
}

/* The tiles and their order: the family's band order (the `band`
   parameter; transpose_tile.cuh's kbt_tile_of for square tiles): tiles
   walked column by column within bands of `band` tile rows, 0 meaning one
   band (column-major: consecutive tiles extend the same output rows). */
typedef struct kbt_tma_geom {
    uint64_t rows, cols;    /* the input's shape                         */
    uint64_t trows, tcols;  /* tiles down and across                     */
    uint64_t ntiles;
    uint64_t band;          /* 1 .. trows                                */
} kbt_tma_geom;

KBT_TMA_HD kbt_tma_geom kbt_tma_geom_make(uint64_t rows, uint64_t cols, unsigned esize,
                                          uint64_t band)
{
    kbt_tma_geom g;
    const uint64_t r = kbt_tma_rows(esize);
    g.rows = rows;
    g.cols = cols;
    g.trows = (rows + r - 1) / r;
    g.tcols = (cols + KBT_TMA_COLS - 1) / KBT_TMA_COLS;
    g.ntiles = g.trows * g.tcols;
    g.band = band == 0 || band > g.trows ? g.trows : band;
    return g;
}

/* Tile b -> its tile row and tile column. */
KBT_TMA_HD void kbt_tma_tile_of(const kbt_tma_geom *g, uint64_t b, uint64_t *tr, uint64_t *tc)
{
    const uint64_t per_band = g->band * g->tcols;
    const uint64_t first = (b / per_band) * g->band, within = b % per_band;
    const uint64_t h = g->trows - first < g->band ? g->trows - first : g->band; /* last band lower */
    *tr = first + within % h;
    *tc = within / h;
}

/* Consumer thread t (0 .. 127), step k (0 .. steps - 1) -> its sub-block
   (rb, cb), in units of W elements: the diagonal scheme of the header
   comment.  Groups of 8 sub-blocks (one per thread of a quarter) are
   numbered step by step over the 16 quarters; group g is diagonal g % 8 of
   8 x 8 block g / 8, blocks numbered row-major over the tile's 2 x
   (C / 8W) blocks. */
KBT_TMA_HD void kbt_tma_sub(unsigned esize, unsigned t, unsigned k, unsigned *rb, unsigned *cb)
{
    const unsigned qb = KBT_TMA_COLS / (8u * kbt_tma_w(esize)); /* blocks across */
    const unsigned q = t / 8u, i = t % 8u;
    const unsigned g = k * KBT_TMA_QUARTERS + q;
    const unsigned blk = g / 8u, d = g % 8u;
    *rb = (blk / qb) * 8u + i;
    *cb = (blk % qb) * 8u + (i ^ d);
}

/* Byte offset, from the stage's start, of chunk cc (0 .. C/W - 1) of row y
   (0 .. R - 1) of the input tile: load box cc / 8, its row y, slot
   (cc % 8) ^ (y % 8). */
KBT_TMA_HD unsigned kbt_tma_in_off(unsigned esize, unsigned y, unsigned cc)
{
    return (cc / 8u) * kbt_tma_rows(esize) * KBT_TMA_ROW_BYTES + y * KBT_TMA_ROW_BYTES +
           (((cc % 8u) ^ (y % KBT_TMA_SWIZZLE_ROWS)) * 16u);
}

/* Byte offset of chunk oc (0 .. R/W - 1) of row x (0 .. C - 1) of the
   output tile (x: an input column, oc: a chunk of input rows): store box
   oc / 8, its row x, slot (oc % 8) ^ (x % 8). */
KBT_TMA_HD unsigned kbt_tma_out_off(unsigned x, unsigned oc)
{
    return (oc / 8u) * KBT_TMA_COLS * KBT_TMA_ROW_BYTES + x * KBT_TMA_ROW_BYTES +
           (((oc % 8u) ^ (x % KBT_TMA_SWIZZLE_ROWS)) * 16u);
}

/* The W x W transpose of one sub-block in registers: in[j] is chunk row j
   (4 words each), out[j] the chunk of output row j.  Written with shifts
   and masks so that the host test runs the same code (the compiler makes
   PRMTs of the 2-byte case and plain register moves of the others). */
KBT_TMA_HD void kbt_tma_transpose_chunks(unsigned esize, const uint32_t in[][4], uint32_t out[][4])
{
    if (esize == 4) {
        for (unsigned j = 0; j < 4; j++)
            for (unsigned e = 0; e < 4; e++)
                out[j][e] = in[e][j];
    } else if (esize == 8) { /* element e of a chunk: words 2e, 2e + 1 */
        for (unsigned j = 0; j < 2; j++)
            for (unsigned e = 0; e < 2; e++) {
                out[j][2 * e] = in[e][2 * j];
                out[j][2 * e + 1] = in[e][2 * j + 1];
            }
    } else { /* esize 2: element e of a chunk is half e % 2 of word e / 2 */
        for (unsigned j = 0; j < 8; j++) {
            const unsigned sh = 16u * (j % 2u);
            for (unsigned w = 0; w < 4; w++)
                out[j][w] = ((in[2 * w][j / 2] >> sh) & 0xffffu) |
                            (((in[2 * w + 1][j / 2] >> sh) & 0xffffu) << 16);
        }
    }
}

#endif
