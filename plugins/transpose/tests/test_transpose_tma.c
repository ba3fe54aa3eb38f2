/*
 * test_transpose_tma.c -- the tma variant's host-side decisions
 * (transpose_tma.h), without a GPU: which shapes TMA can map (the others
 * run the ragged kernel), the tile's shape and boxes, the tile order, and
 * the consumers' work on one tile: every chunk read and written once,
 * conflict-free quarter-warps, and a whole tile transposed through the
 * layout TMA's 128-byte swizzle gives (written out here from its
 * definition, not from the header), so that the header's offsets and
 * register transposes are checked against it.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "transpose_tma.h"

static const unsigned esizes[] = {2, 4, 8};
#define N_ESIZES (sizeof esizes / sizeof esizes[0])

/* Both strides multiples of 16 bytes, or the ragged kernel. */
Test(transpose_tma, strides_decide_the_path)
{
    static const struct { uint64_t rows, cols; unsigned es; int ok; } cases[] = {
        {8192, 8192, 4, 1},  {16384, 16384, 4, 1}, {12000, 5000, 4, 1}, {8191, 8193, 4, 0},
        {8192, 8193, 4, 0},  {8191, 8192, 4, 0},   {1, 1, 4, 0},        {1, 4096, 4, 0},
        {4096, 1, 4, 0},     {4, 4, 4, 1},         {2, 2, 8, 1},        {2, 3, 8, 0},
        {8, 8, 2, 1},        {8, 12, 2, 0},        {12, 8, 2, 0},       {136, 200, 4, 1},
        {4099, 4100, 4, 0},  {4096, 4100, 4, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_eq(kbt_tma_strides_ok(cases[i].rows, cases[i].cols, cases[i].es), cases[i].ok,
                     "%llu x %llu, %u bytes", (unsigned long long)cases[i].rows,
                     (unsigned long long)cases[i].cols, cases[i].es);
}

/* 16 KiB tiles; load boxes side by side cover the tile's columns, store
   boxes its rows; a box's outer extent stays within TMA's 256. */
Test(transpose_tma, tile_and_boxes)
{
    for (size_t e = 0; e < N_ESIZES; e++) {
        unsigned es = esizes[e], r = kbt_tma_rows(es), cb = kbt_tma_cb(es);
        cr_assert_eq(r * KBT_TMA_COLS * es, KBT_TMA_TILE_BYTES);
        cr_assert_eq(cb * es, KBT_TMA_ROW_BYTES);
        cr_assert_eq(kbt_tma_load_boxes(es) * cb, KBT_TMA_COLS);
        cr_assert_eq(kbt_tma_store_boxes(es) * cb, r);
        cr_assert_leq(r, 256u);
        cr_assert_eq(kbt_tma_steps(es) * KBT_TMA_CONSUMERS * kbt_tma_w(es) * kbt_tma_w(es),
                     r * KBT_TMA_COLS);
    }
}

/* Every tile once, in band order: within a band, column by column. */
Test(transpose_tma, tile_order_visits_every_tile_once)
{
    static const uint64_t shapes[][2] = {{1, 1}, {31, 33}, {1033, 777}, {4096, 64}, {64, 4096}};
    static const uint64_t bands[] = {0, 1, 3, 1000000};
    static unsigned char seen[20000];
    for (size_t e = 0; e < N_ESIZES; e++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (size_t k = 0; k < sizeof bands / sizeof bands[0]; k++) {
                kbt_tma_geom g = kbt_tma_geom_make(shapes[i][0], shapes[i][1], esizes[e], bands[k]);
                cr_assert_leq(g.ntiles, sizeof seen);
                cr_assert_eq(g.trows * kbt_tma_rows(esizes[e]) >= g.rows, 1);
                cr_assert_eq(g.tcols * KBT_TMA_COLS >= g.cols, 1);
                memset(seen, 0, sizeof seen);
                uint64_t prev_tr = 0, prev_tc = 0;
                for (uint64_t b = 0; b < g.ntiles; b++) {
                    uint64_t tr, tc;
                    kbt_tma_tile_of(&g, b, &tr, &tc);
                    cr_assert_lt(tr, g.trows);
                    cr_assert_lt(tc, g.tcols);
                    cr_assert_eq(seen[tr * g.tcols + tc], 0, "tile (%llu, %llu) twice",
                                 (unsigned long long)tr, (unsigned long long)tc);
                    seen[tr * g.tcols + tc] = 1;
                    /* One band (0, or more than the tile rows): column-major. */
                    if ((bands[k] == 0 || bands[k] >= g.trows) && b > 0)
                        cr_assert(tc == prev_tc ? tr == prev_tr + 1 : tc == prev_tc + 1 && tr == 0);
                    /* Band 1: row-major. */
                    if (bands[k] == 1 && b > 0)
                        cr_assert(tr == prev_tr ? tc == prev_tc + 1 : tr == prev_tr + 1 && tc == 0);
                    prev_tr = tr;
                    prev_tc = tc;
                }
            }
}

/* The sub-blocks of all consumer threads and steps read each input chunk
   once and write each output chunk once, inside the tile. */
Test(transpose_tma, sub_blocks_cover_the_tile_once)
{
    static unsigned char rd[KBT_TMA_TILE_BYTES / 16], wr[KBT_TMA_TILE_BYTES / 16];
    for (size_t e = 0; e < N_ESIZES; e++) {
        unsigned es = esizes[e], w = kbt_tma_w(es);
        memset(rd, 0, sizeof rd);
        memset(wr, 0, sizeof wr);
        for (unsigned t = 0; t < KBT_TMA_CONSUMERS; t++)
            for (unsigned k = 0; k < kbt_tma_steps(es); k++) {
                unsigned rb, cb;
                kbt_tma_sub(es, t, k, &rb, &cb);
                cr_assert_lt(rb, kbt_tma_rows(es) / w);
                cr_assert_lt(cb, KBT_TMA_COLS / w);
                for (unsigned j = 0; j < w; j++) {
                    unsigned a = kbt_tma_in_off(es, w * rb + j, cb);
                    unsigned b = kbt_tma_out_off(w * cb + j, rb);
                    cr_assert_lt(a, KBT_TMA_TILE_BYTES);
                    cr_assert_lt(b, KBT_TMA_TILE_BYTES);
                    cr_assert_eq(a % 16, 0u);
                    cr_assert_eq(b % 16, 0u);
                    rd[a / 16]++;
                    wr[b / 16]++;
                }
            }
        for (unsigned c = 0; c < KBT_TMA_TILE_BYTES / 16; c++) {
            cr_assert_eq(rd[c], 1, "%u-byte elements: input chunk %u read %u times", es, c, rd[c]);
            cr_assert_eq(wr[c], 1, "%u-byte elements: output chunk %u written %u times", es, c,
                         wr[c]);
        }
    }
}

/* Each 16-byte LDS and STS instruction (step k, row j) of each quarter-warp
   touches 8 different 16-byte slots of the 128-byte bank line: one
   wavefront, no bank conflict. */
Test(transpose_tma, quarter_warps_are_conflict_free)
{
    for (size_t e = 0; e < N_ESIZES; e++) {
        unsigned es = esizes[e], w = kbt_tma_w(es);
        for (unsigned q = 0; q < KBT_TMA_QUARTERS; q++)
            for (unsigned k = 0; k < kbt_tma_steps(es); k++)
                for (unsigned j = 0; j < w; j++) {
                    unsigned rmask = 0, wmask = 0;
                    for (unsigned i = 0; i < 8; i++) {
                        unsigned rb, cb;
                        kbt_tma_sub(es, 8 * q + i, k, &rb, &cb);
                        rmask |= 1u << ((kbt_tma_in_off(es, w * rb + j, cb) / 16) % 8);
                        wmask |= 1u << ((kbt_tma_out_off(w * cb + j, rb) / 16) % 8);
                    }
                    cr_assert_eq(rmask, 0xffu, "%u bytes, quarter %u, step %u, row %u: reads "
                                 "%#x", es, q, k, j, rmask);
                    cr_assert_eq(wmask, 0xffu, "%u bytes, quarter %u, step %u, row %u: writes "
                                 "%#x", es, q, k, j, wmask);
                }
    }
}

/* TMA's 128-byte swizzle, from its definition: element (y, x) of a box
   whose rows are 128 bytes (box starting on 1024 bytes) lies in row y at
   16-byte slot ((x * es) / 16) ^ (y % 8), byte (x * es) % 16 inside it.
   The input stage is its load boxes side by side (CB columns each), the
   output tile its store boxes (CB input rows each). */
static unsigned tma_in_byte(unsigned es, unsigned y, unsigned x)
{
    unsigned cb = 128 / es, box = x / cb, xx = x % cb;
    return box * kbt_tma_rows(es) * 128 + y * 128 + ((((xx * es) / 16) ^ (y % 8)) * 16) +
           (xx * es) % 16;
}

static unsigned tma_out_byte(unsigned es, unsigned x, unsigned y)
{
    unsigned cb = 128 / es, box = y / cb, yy = y % cb;
    return box * KBT_TMA_COLS * 128 + x * 128 + ((((yy * es) / 16) ^ (x % 8)) * 16) +
           (yy * es) % 16;
}

/* A tile of distinct elements placed as TMA loads it, moved by every
   consumer thread's steps (the header's offsets and register transpose),
   read back as TMA stores it: output row x, column y holds input (y, x). */
Test(transpose_tma, a_tile_comes_out_transposed)
{
    static uint8_t in[KBT_TMA_TILE_BYTES], out[KBT_TMA_TILE_BYTES];
    for (size_t e = 0; e < N_ESIZES; e++) {
        unsigned es = esizes[e], w = kbt_tma_w(es), r = kbt_tma_rows(es);
        /* element (y, x): its index y * C + x + 1 in es bytes (little end
           first; u16 indices stay below 2^16 - 1: 8192 elements) */
        for (unsigned y = 0; y < r; y++)
            for (unsigned x = 0; x < KBT_TMA_COLS; x++) {
                uint64_t val = (uint64_t)y * KBT_TMA_COLS + x + 1;
                if (es == 8)
                    val |= val << 40;
                memcpy(in + tma_in_byte(es, y, x), &val, es);
            }
        memset(out, 0, sizeof out);
        for (unsigned t = 0; t < KBT_TMA_CONSUMERS; t++)
            for (unsigned k = 0; k < kbt_tma_steps(es); k++) {
                unsigned rb, cb;
                kbt_tma_sub(es, t, k, &rb, &cb);
                uint32_t v[8][4], o[8][4]; /* w <= 8 (u16) */
                for (unsigned j = 0; j < w && j < 8; j++)
                    memcpy(v[j], in + kbt_tma_in_off(es, w * rb + j, cb), 16);
                kbt_tma_transpose_chunks(es, (const uint32_t(*)[4])v, o);
                for (unsigned j = 0; j < w && j < 8; j++)
                    memcpy(out + kbt_tma_out_off(w * cb + j, rb), o[j], 16);
            }
        unsigned bad = 0;
        for (unsigned x = 0; x < KBT_TMA_COLS; x++)
            for (unsigned y = 0; y < r; y++) {
                uint64_t got = 0, want = 0;
                memcpy(&got, out + tma_out_byte(es, x, y), es);
                memcpy(&want, in + tma_in_byte(es, y, x), es);
                bad += got != want;
            }
        cr_assert_eq(bad, 0u, "%u-byte elements: %u of %u elements misplaced", es, bad,
                     r * KBT_TMA_COLS);
    }
}
