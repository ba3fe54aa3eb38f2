/*
 * transpose_tile.cuh -- the tile code of the window, vec16-band and ragged variants
 * (transpose_fast.cu), written once for two callers: the kernels, and the
 * CPU emulator of tests/test_transpose_emu.cu, which runs the same functions
 * thread by thread and checks every access they make.
 *
 * What is computed: out[c * rows + r] = in[r * cols + c] for a rows x cols
 * input, one TILE x TILE tile at a time.  The tile (r0, c0) covers input
 * rows r0 .. r0 + TILE - 1 and input columns c0 .. c0 + TILE - 1, that is
 * output rows c0 .. and output columns r0 ..; at the matrix's edge it holds
 * R x C elements (R = min(TILE, rows - r0), C = min(TILE, cols - c0)).  A
 * tile is moved in two phases separated by a barrier: in (global memory to
 * shared memory) and out (shared memory to global memory).  Each phase is a
 * function of the thread index t, so that the emulator can run the threads
 * of a phase one after the other.
 *
 * W = 16 / sizeof(T) elements make a 16-byte chunk; every pointer the
 * kernels get is 16-byte aligned (cudaMalloc), so chunk k of the flat input
 * or output, elements k*W .. k*W + W - 1, is one aligned 16-byte access.
 *
 * Two paths move a tile:
 *
 * The window path, at any shape.  Input row r0 + y starts (flat index
 * base = (r0 + y) * cols + c0) at phase ph = base % W inside its chunk.  The
 * thread loads the aligned chunks that cover the tile's C elements of that
 * row (G + 1 chunks when ph > 0, G = TILE / W: a window one chunk wider
 * than the tile), and stores each element it needs to shared memory at its
 * own (y, x) place, which undoes the row's phase.  A chunk that would reach
 * past the end of the input (the last row's last window) is read element by
 * element.  Output row c0 + x receives the tile's R elements at flat
 * obase = (c0 + x) * rows + r0, phase q = obase % W: the chunks that lie
 * wholly inside that segment are written with one aligned 16-byte store
 * each; the partial chunks at its two ends (q > 0, or R not a multiple of
 * W) element by element.  So no 16-byte store ever covers an element of
 * another tile: each output element is written once, by its own tile.
 *
 * The vector path, for full tiles of a matrix whose rows and cols are both
 * multiples of W (vec16's 16-byte tile): 16-byte loads of the tile's rows,
 * 16-byte shared stores, W x W sub-tiles read back as W 16-byte shared
 * loads, transposed in registers and written as W 16-byte stores.
 *
 * Shared memory.  The window path keeps the tile as TILE x TILE elements,
 * element (y, x) at y * TILE + (x ^ F(y)), F(y) = W * ((y / W) & 7) ^ H[y % W]
 * (H: a table of W values below W, chosen per launch from rows % W and
 * cols % W by kbt_swizzle(), so that the element accesses of a warp fall in
 * different banks; transpose README, "window").  The vector path keeps
 * 16-byte granules, granule g of tile row y at y * G + (g ^ ((y / W) & 7))
 * (vec16's layout).  Both fit in TILE * TILE * sizeof(T) bytes.
 *
 * Memory accesses go through the model M, a class of static functions:
 * kbt_dev_mem on the GPU, the emulator's checking model on the CPU.  Each
 * shared-memory access names its `site`: the same number for the same
 * instruction of every thread of a warp, so that the emulator can count the
 * bank conflicts of one instruction.  The GPU model ignores it.
 */
#ifndef KBT_TRANSPOSE_TILE_CUH
#define KBT_TRANSPOSE_TILE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

/* Host and device functions; the emulator, which instantiates them with a
   host-only memory model, defines KBT_HOST_ONLY first so that they are
   plain host functions there. */
#ifdef KBT_HOST_ONLY
#define KBT_HD inline
#else
#define KBT_HD __host__ __device__ __forceinline__
#endif

/* The tile of each element type (TILE x TILE elements; TILE * sizeof(T) =
   256 or 512 bytes, a whole number of 16-byte chunks per tile row), the
   threads of a block, and the blocks per multiprocessor asked of the
   compiler (a register cap of 65536 / (THREADS * MIN_BLOCKS): 64 for f32,
   85 for f64 and u16), so that several tiles are in flight per
   multiprocessor.  The same numbers as vec16.  WIN_BATCHES, VEC_BATCHES:
   the batches of the in phases' loads (kbt_window_in, kbt_vec_in), more
   than one where all of a thread's loads in flight at once would not fit in
   the registers (u16: 17 window chunks, 16 vector chunks). */
template <typename T> struct kbt_tile_cfg;
template <> struct kbt_tile_cfg<uint32_t> {
    static constexpr unsigned TILE = 64, THREADS = 128, MIN_BLOCKS = 8, WIN_BATCHES = 1, VEC_BATCHES = 1;
};
template <> struct kbt_tile_cfg<uint64_t> {
    static constexpr unsigned TILE = 64, THREADS = 256, MIN_BLOCKS = 3, WIN_BATCHES = 1, VEC_BATCHES = 1;
};
template <> struct kbt_tile_cfg<uint16_t> {
    static constexpr unsigned TILE = 128, THREADS = 128, MIN_BLOCKS = 5, WIN_BATCHES = 3, VEC_BATCHES = 2;
};

/* The numbers every phase derives from the tile. */
template <typename T> struct kbt_shape {
    static constexpr unsigned TILE = kbt_tile_cfg<T>::TILE;
    static constexpr unsigned THREADS = kbt_tile_cfg<T>::THREADS;
    static constexpr unsigned W = 16 / sizeof(T); /* elements per chunk       */
    static constexpr unsigned G = TILE / W;       /* chunks per tile row      */
    /* A warp's 32 chunk jobs: RW rows (or output rows) of KW consecutive
       chunks each, 128 bytes per row: the element accesses of a warp then
       spread over all 32 banks (see F above). */
    static constexpr unsigned KW = 8, RW = 32 / KW;
    static constexpr unsigned JOBS = TILE * G / THREADS; /* chunk jobs per thread */
    static constexpr unsigned SUBS = G * G / THREADS;    /* vector path: W x W sub-tiles */
    static_assert(JOBS * THREADS == TILE * G, "the chunk jobs split evenly over the threads");
    static_assert(SUBS * THREADS == G * G, "the sub-tiles split evenly over the threads");
    static_assert(G % KW == 0 && THREADS % 32 == 0, "a warp's jobs are RW rows of KW chunks");
    static_assert(THREADS >= TILE, "one thread per row takes the window's extra chunk");
    static_assert(G >= 8 && (TILE & (TILE - 1)) == 0, "the swizzles stay inside a tile row");
    static constexpr unsigned SMEM_Q = TILE * TILE * sizeof(T) / 16; /* uint4s */
};

/* One 16-byte chunk seen as words or as elements. */
template <typename T> union kbt_chunk {
    uint4 q;
    uint32_t w[4];
    T e[16 / sizeof(T)];
};

/* ---- the geometry of one launch --------------------------------------------
 * Tiles are numbered b = 0 .. ntiles - 1 in the order the blocks take them
 * (block b first, then b + gridDim.x, ...; blocks start roughly in index
 * order, so consecutive numbers run at the same time).  The order walks
 * bands of `band` tile rows, left to right, each column of a band top to
 * bottom: band = trows (one band) is column-major order (tiles down the
 * input's columns: each output row written in one stretch), band = 1 is
 * row-major order (each input row read in one stretch); in between, the
 * tiles in flight form a block of about band rows of tiles.
 * ------------------------------------------------------------------------ */
struct kbt_geom {
    uint64_t rows, cols, n;       /* n = rows * cols                        */
    uint64_t trows, tcols, ntiles;
    uint64_t band;                /* 1 .. trows                             */
    uint32_t swz;                 /* H[r] = (swz >> 4r) & 15, r < W         */
    int aligned;                  /* rows and cols are multiples of W       */
};

/* H of the window layout for rows % W and cols % W.  The tables are the
   best of a search over the element accesses of every phase class (the
   emulator's bank-conflict tests hold each class to its bound): f32 and
   f64 are conflict-free except when rows is odd and cols even (at most two
   ways); u16 at most two ways. */
template <typename T> inline uint32_t kbt_swizzle(uint64_t rows, uint64_t cols)
{
    const unsigned W = 16 / sizeof(T);
    const unsigned rm = (unsigned)(rows % W), cm = (unsigned)(cols % W);
    if (W == 2) /* f64 */
        return rm == 0 && cm == 0 ? 0x10u : 0u;
    if (W == 4) { /* f32 */
        if (cm & 1u)
            return 0u;
        if (cm == 0)
            return (rm & 1u) ? 0x1100u : 0x3210u;
        return rm == 0 ? 0x1100u : rm == 2 ? 0x3210u : 0u; /* cols % 4 == 2 */
    }
    /* u16: H[r] = 2r mod 8 where cols % 4 == 0, else 0. */
    if ((cm & 3u) == 0)
        return 0x64206420u;
    return 0u;
}

template <typename T> inline kbt_geom kbt_geom_make(uint64_t rows, uint64_t cols, uint64_t band)
{
    const unsigned TILE = kbt_tile_cfg<T>::TILE, W = 16 / sizeof(T);
    kbt_geom g;
    g.rows = rows;
    g.cols = cols;
    g.n = rows * cols;
    g.trows = (rows + TILE - 1) / TILE;
    g.tcols = (cols + TILE - 1) / TILE;
    g.ntiles = g.trows * g.tcols;
    g.band = band == 0 || band > g.trows ? g.trows : band;
    g.swz = kbt_swizzle<T>(rows, cols);
    g.aligned = rows % W == 0 && cols % W == 0;
    return g;
}

/* Tile number b -> its first input row and column (see kbt_geom). */
template <unsigned TILE>
KBT_HD void kbt_tile_of(const kbt_geom &g, uint64_t b, uint64_t &r0, uint64_t &c0)
{
    uint64_t per_band = g.band * g.tcols;
    uint64_t first = (b / per_band) * g.band, within = b % per_band;
    uint64_t h = g.trows - first < g.band ? g.trows - first : g.band; /* the last band may be lower */
    r0 = (first + within % h) * TILE;
    c0 = (within / h) * TILE;
}

/* ---- the window path ---------------------------------------------------- */

/* Element (y, x) of the window layout. */
template <typename T>
KBT_HD unsigned kbt_widx(uint32_t swz, unsigned y, unsigned x)
{
    typedef kbt_shape<T> S;
    unsigned f = (S::W * ((y / S::W) & 7u)) ^ ((swz >> (4u * (y % S::W))) & 15u);
    return y * S::TILE + (x ^ f);
}

/* Chunk job j (0 .. TILE * G - 1) -> (row, chunk): 32 consecutive jobs are
   RW rows of KW consecutive chunks.  The same split serves the out phase
   (output row, chunk slot). */
template <typename T>
KBT_HD void kbt_job(unsigned j, unsigned &row, unsigned &k)
{
    typedef kbt_shape<T> S;
    unsigned grp = j / 32u, lane = j % 32u;
    constexpr unsigned KB = S::G / S::KW; /* chunk blocks per row */
    row = (grp / KB) * S::RW + lane / S::KW;
    k = (grp % KB) * S::KW + lane % S::KW;
}

/* Sentinel of a job with nothing to move. */
#define KBT_IDLE (-(1 << 30))

/* The window path's job s of thread t: s < JOBS a chunk job (kbt_job),
   s == JOBS the window's extra chunk G of row t (threads t < TILE). */
template <typename T>
KBT_HD bool kbt_window_job(unsigned t, unsigned s, unsigned &row, unsigned &k)
{
    typedef kbt_shape<T> S;
    if (s < S::JOBS) {
        kbt_job<T>(t + s * S::THREADS, row, k);
        return true;
    }
    row = t;
    k = S::G;
    return t < S::TILE;
}

/* The in phase of the window path for thread t.  Its JOBS + 1 chunk jobs
   run in WIN_BATCHES batches: every load of a batch first (all in flight
   together), then the batch's shared stores.  One batch where the registers
   allow it (f32, f64); two for u16, whose 17 chunks would not fit. */
template <typename T, class M>
KBT_HD void kbt_window_in(unsigned t, const T *__restrict__ in, T *sm, const kbt_geom &g,
                          uint64_t r0, uint64_t c0)
{
    typedef kbt_shape<T> S;
    constexpr unsigned W = S::W, NJ = S::JOBS + 1;
    constexpr unsigned NB = kbt_tile_cfg<T>::WIN_BATCHES, BATCH = (NJ + NB - 1) / NB;
    const int R = (int)(g.rows - r0 < S::TILE ? g.rows - r0 : S::TILE);
    const int C = (int)(g.cols - c0 < S::TILE ? g.cols - c0 : S::TILE);
#pragma unroll 1
    for (unsigned s0 = 0; s0 < NJ; s0 += BATCH) {
        kbt_chunk<T> v[BATCH];
        int lo[BATCH]; /* column of the chunk's first element, or KBT_IDLE */
#pragma unroll
        for (unsigned u = 0; u < BATCH; u++) {
            unsigned s = s0 + u, y, k;
            lo[u] = KBT_IDLE;
            if (s < NJ && kbt_window_job<T>(t, s, y, k) && (int)y < R) {
                uint64_t base = (r0 + y) * g.cols + c0;
                int ph = (int)(base % W);
                int l = (int)(k * W) - ph;
                if (l + (int)W > 0 && l < C) { /* some element of the chunk is the tile's */
                    lo[u] = l;
                    uint64_t f = base - (uint64_t)ph + k * W; /* the chunk's flat start */
                    if (f + W <= g.n) {
                        v[u].q = M::ld16(in + f);
                    } else { /* past the input's end: the tile's elements alone */
                        v[u].q = make_uint4(0, 0, 0, 0);
#pragma unroll
                        for (unsigned i = 0; i < W; i++)
                            if (l + (int)i >= 0 && l + (int)i < C)
                                v[u].e[i] = M::ld1(in + f + i);
                    }
                }
            }
        }
#pragma unroll
        for (unsigned u = 0; u < BATCH; u++) {
            if (lo[u] == KBT_IDLE)
                continue;
            unsigned s = s0 + u, y, k;
            kbt_window_job<T>(t, s, y, k);
#pragma unroll
            for (unsigned i = 0; i < W; i++) {
                int x = lo[u] + (int)i;
                if (x >= 0 && x < C)
                    M::sts(sm, kbt_widx<T>(g.swz, y, (unsigned)x), v[u].e[i], (int)(s * W + i));
            }
        }
    }
}

/* The out phase of the window path for thread t. */
template <typename T, class M>
KBT_HD void kbt_window_out(unsigned t, T *__restrict__ out, const T *sm, const kbt_geom &g,
                           uint64_t r0, uint64_t c0)
{
    typedef kbt_shape<T> S;
    constexpr unsigned W = S::W, NJ = S::JOBS + 1;
    const int R = (int)(g.rows - r0 < S::TILE ? g.rows - r0 : S::TILE);
    const int C = (int)(g.cols - c0 < S::TILE ? g.cols - c0 : S::TILE);
#pragma unroll
    for (unsigned s = 0; s < NJ; s++) {
        unsigned x, m; /* output row c0 + x, chunk slot m (G: the segment's last) */
        if (!kbt_window_job<T>(t, s, x, m) || (int)x >= C)
            continue;
        uint64_t obase = (c0 + x) * g.rows + r0; /* output row c0 + x, column r0 */
        int q = (int)(obase % W);
        int l = (int)(m * W) - q; /* tile row of the chunk's first element */
        if (l + (int)W <= 0 || l >= R)
            continue; /* the chunk holds none of the segment */
        uint64_t f = obase - (uint64_t)q + m * W;
        kbt_chunk<T> o;
        o.q = make_uint4(0, 0, 0, 0);
#pragma unroll
        for (unsigned i = 0; i < W; i++) {
            int y = l + (int)i;
            if (y >= 0 && y < R)
                o.e[i] = M::lds(sm, kbt_widx<T>(g.swz, (unsigned)y, x), (int)(s * W + i));
        }
        if (l >= 0 && l + (int)W <= R) {
            M::st16(out + f, o.q); /* the whole chunk is this tile's */
        } else {
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                if (l + (int)i >= 0 && l + (int)i < R)
                    M::st1(out + f + i, o.e[i]);
        }
    }
}

/* ---- the vector path (full tiles, rows and cols multiples of W) ---------- */

template <typename T>
KBT_HD unsigned kbt_vidx(unsigned y, unsigned gcol)
{
    typedef kbt_shape<T> S;
    return y * S::G + (gcol ^ ((y / S::W) & 7u));
}

/* The in phase of the vector path: JOBS 16-byte loads per thread in
   VEC_BATCHES batches (loads of a batch first, then its shared stores). */
template <typename T, class M>
KBT_HD void kbt_vec_in(unsigned t, const T *__restrict__ in, uint4 *smq, const kbt_geom &g,
                       uint64_t r0, uint64_t c0)
{
    typedef kbt_shape<T> S;
    constexpr unsigned BATCH = S::JOBS / kbt_tile_cfg<T>::VEC_BATCHES;
    static_assert(BATCH * kbt_tile_cfg<T>::VEC_BATCHES == S::JOBS, "even batches");
#pragma unroll 1
    for (unsigned s0 = 0; s0 < S::JOBS; s0 += BATCH) {
        uint4 v[BATCH];
#pragma unroll
        for (unsigned u = 0; u < BATCH; u++) {
            unsigned i = t + (s0 + u) * S::THREADS, y = i / S::G, gc = i % S::G;
            v[u] = M::ld16(in + (r0 + y) * g.cols + c0 + gc * S::W);
        }
#pragma unroll
        for (unsigned u = 0; u < BATCH; u++) {
            unsigned i = t + (s0 + u) * S::THREADS, y = i / S::G, gc = i % S::G;
            M::sts16(smq, kbt_vidx<T>(y, gc), v[u], (int)(s0 + u));
        }
    }
}

/* Column j of W chunks a[0 .. W-1] (W consecutive rows): element i of the
   result is element j of a[i]. */
template <typename T>
KBT_HD kbt_chunk<T> kbt_column(const kbt_chunk<T> (&a)[16 / sizeof(T)], unsigned j)
{
    kbt_chunk<T> o;
#pragma unroll
    for (unsigned i = 0; i < 16 / sizeof(T); i++)
        o.e[i] = a[i].e[j];
    return o;
}

/* u16: each output word joins the halves of two input words, one byte
   permutation per word (PRMT), 32 per 8 x 8 sub-tile. */
KBT_HD uint32_t kbt_join_halves(uint32_t a, uint32_t b, bool high)
{
#ifdef __CUDA_ARCH__
    return __byte_perm(a, b, high ? 0x7632u : 0x5410u);
#else
    return high ? (a >> 16) | (b & 0xffff0000u) : (a & 0xffffu) | (b << 16);
#endif
}

template <>
KBT_HD kbt_chunk<uint16_t> kbt_column<uint16_t>(const kbt_chunk<uint16_t> (&a)[8], unsigned j)
{
    kbt_chunk<uint16_t> o;
#pragma unroll
    for (unsigned p = 0; p < 4; p++)
        o.w[p] = kbt_join_halves(a[2 * p].w[j / 2], a[2 * p + 1].w[j / 2], (j & 1u) != 0);
    return o;
}

template <typename T, class M>
KBT_HD void kbt_vec_out(unsigned t, T *__restrict__ out, const uint4 *smq, const kbt_geom &g,
                        uint64_t r0, uint64_t c0)
{
    typedef kbt_shape<T> S;
    constexpr unsigned W = S::W;
#pragma unroll
    for (unsigned s = 0; s < S::SUBS; s++) {
        unsigned sub = t + s * S::THREADS;
        unsigned gr = sub % S::G; /* input rows gr*W .. gr*W + W - 1 */
        unsigned gc = sub / S::G; /* input columns gc*W .. gc*W + W - 1 */
        kbt_chunk<T> a[W];
#pragma unroll
        for (unsigned i = 0; i < W; i++)
            a[i].q = M::lds16(smq, kbt_vidx<T>(gr * W + i, gc), (int)(s * W + i));
#pragma unroll
        for (unsigned j = 0; j < W; j++)
            M::st16(out + (c0 + gc * W + j) * g.rows + r0 + gr * W, kbt_column<T>(a, j).q);
    }
}

/* ---- the hoisted paths (window-hoist, vec16-band-hoist) -------------------
 * The same tiles, the same shared layouts and the same accesses as the
 * window and vector paths above, with the per-job arithmetic taken out of
 * the loops (the window path above recomputes each job's row, phase and
 * 64-bit flat index, some hundred instructions per 16-byte chunk).  A
 * thread's chunk jobs, tile jobs t + s * THREADS, all keep one chunk column
 * and step RSTEP rows (a block's THREADS jobs cover whole rows); RSTEP is a
 * multiple of W, so all of a thread's rows (input rows in, output rows out)
 * have one phase, and what depends on the phase (which elements of the
 * chunk are the tile's, where they go) is worked out once per tile.  The
 * vector path's loads keep one granule column and step VSTEP rows, its
 * sub-tiles one granule row.  The tile number is split in 32-bit
 * arithmetic when the tile count allows.
 * ------------------------------------------------------------------------ */
template <typename T> struct kbt_hshape : kbt_shape<T> {
    typedef kbt_shape<T> S;
    static constexpr unsigned KB = S::G / S::KW; /* chunk blocks per row */
    static constexpr unsigned RSTEP = S::THREADS / 32 / KB * S::RW, VSTEP = S::THREADS / S::G;
    /* Load batches of the hoisted window in phase: u16's 16 chunks in two. */
    static constexpr unsigned BATCHES = sizeof(T) == 2 ? 2 : 1;
    static_assert((S::THREADS / 32) % KB == 0 && RSTEP % S::W == 0 && RSTEP * S::JOBS == S::TILE,
                  "a thread's chunk jobs: one chunk column, rows RSTEP apart, one phase");
    static_assert(S::THREADS % S::G == 0 && VSTEP * S::JOBS == S::TILE,
                  "the vector path's loads: one granule column, rows VSTEP apart");
    static_assert(S::SUBS * VSTEP == S::G, "the vector path's sub-tiles: one granule row");
    static_assert(S::JOBS % BATCHES == 0, "even batches");
};

/* kbt_tile_of, in 32-bit arithmetic when the tile count fits (a 64-bit
   division is a call of some dozens of instructions). */
template <unsigned TILE>
KBT_HD void kbt_tile_of_fast(const kbt_geom &g, uint64_t b, uint64_t &r0, uint64_t &c0)
{
    if (g.ntiles > 0xffffffffull) {
        kbt_tile_of<TILE>(g, b, r0, c0);
        return;
    }
    uint32_t band = (uint32_t)g.band, per_band = band * (uint32_t)g.tcols;
    uint32_t bi = (uint32_t)b / per_band, within = (uint32_t)b - bi * per_band;
    uint32_t first = bi * band, left = (uint32_t)g.trows - first;
    uint32_t h = left < band ? left : band; /* the last band may be lower */
    uint32_t col = within / h;
    r0 = (uint64_t)(first + (within - col * h)) * TILE;
    c0 = (uint64_t)col * TILE;
}

/* F(y) of the window layout (kbt_widx(swz, y, x) = y * TILE + (x ^ F(y))). */
template <typename T>
KBT_HD unsigned kbt_wswz(uint32_t swz, unsigned y)
{
    typedef kbt_shape<T> S;
    return (S::W * ((y / S::W) & 7u)) ^ ((swz >> (4u * (y % S::W))) & 15u);
}

/* The 16-byte chunk at flat index f, or (past the input's end) only its
   elements in mask ok, one by one. */
template <typename T, class M>
KBT_HD uint4 kbt_load_chunk(const T *__restrict__ in, uint64_t f, uint64_t n, unsigned ok)
{
    constexpr unsigned W = kbt_shape<T>::W;
    if (f + W <= n)
        return M::ld16(in + f);
    kbt_chunk<T> v;
    v.q = make_uint4(0, 0, 0, 0);
#pragma unroll
    for (unsigned i = 0; i < W; i++)
        if (ok >> i & 1u)
            v.e[i] = M::ld1(in + f + i);
    return v.q;
}

/* The in phase of the hoisted window path for thread t: the jobs of
   kbt_window_in.  Main jobs: rows row0 + s * RSTEP, chunk k of the row's
   window, elements at tile columns l .. l + W - 1 (l = k * W - ph), those
   in [0, C) kept (mask ok, the same for every s).  The extra job (threads
   t < TILE): chunk G of row t, the window's last, which holds the row's
   last ph elements.  Loads in BATCHES batches (each batch's loads first,
   all in flight together, then its shared stores); the extra load goes out
   with the first batch. */
template <typename T, class M>
KBT_HD void kbt_windowh_in(unsigned t, const T *__restrict__ in, T *sm, const kbt_geom &g,
                           uint64_t r0, uint64_t c0)
{
    typedef kbt_hshape<T> S;
    constexpr unsigned W = S::W, BATCH = S::JOBS / S::BATCHES;
    const int R = (int)(g.rows - r0 < S::TILE ? g.rows - r0 : S::TILE);
    const int C = (int)(g.cols - c0 < S::TILE ? g.cols - c0 : S::TILE);
    unsigned row0, k;
    kbt_job<T>(t, row0, k); /* job s is (row0 + s * RSTEP, k) */
    const uint64_t base = (r0 + row0) * g.cols + c0; /* flat index of (r0 + row0, c0) */
    const int ph = (int)(base % W);
    const int l = (int)(k * W) - ph;
    const uint64_t f0 = base + (uint64_t)(int64_t)l; /* the chunk's flat start, row row0 */
    const uint64_t step = (uint64_t)S::RSTEP * g.cols;
    unsigned ok = 0; /* the chunk's elements that are the tile's */
#pragma unroll
    for (unsigned i = 0; i < W; i++)
        ok |= (l + (int)i >= 0 && l + (int)i < C) ? 1u << i : 0u;
    /* The extra job: row t's window ends in chunk G, tile columns xl ..
       (xl = TILE - phase of row t); its elements i < TILE - xl are the
       row's last. */
    const uint64_t xbase = (r0 + t) * g.cols + c0;
    const int xl = (int)S::TILE - (int)(xbase % W);
    unsigned xok = 0;
    if (t < S::TILE && (int)t < R) {
#pragma unroll
        for (unsigned i = 0; i < W; i++)
            xok |= (xl + (int)i < C && xl + (int)i < (int)S::TILE) ? 1u << i : 0u;
    }
    kbt_chunk<T> xv;
    xv.q = make_uint4(0, 0, 0, 0);
#pragma unroll 1
    for (unsigned s0 = 0; s0 < S::JOBS; s0 += BATCH) {
        kbt_chunk<T> v[BATCH];
#pragma unroll
        for (unsigned u = 0; u < BATCH; u++) {
            v[u].q = make_uint4(0, 0, 0, 0);
            if (ok && (int)(row0 + (s0 + u) * S::RSTEP) < R)
                v[u].q = kbt_load_chunk<T, M>(in, f0 + (s0 + u) * step, g.n, ok);
        }
        if (s0 == 0 && xok)
            xv.q = kbt_load_chunk<T, M>(in, xbase + (uint64_t)xl, g.n, xok);
#pragma unroll
        for (unsigned u = 0; u < BATCH; u++) {
            unsigned s = s0 + u, y = row0 + s * S::RSTEP;
            if (!ok || (int)y >= R)
                continue;
            unsigned rowbase = y * S::TILE, fy = kbt_wswz<T>(g.swz, y);
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                if (ok >> i & 1u)
                    M::sts(sm, rowbase + ((unsigned)(l + (int)i) ^ fy), v[u].e[i], (int)(s * W + i));
        }
        if (s0 == 0 && xok) {
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                if (xok >> i & 1u)
                    M::sts(sm, kbt_widx<T>(g.swz, t, (unsigned)(xl + (int)i)), xv.e[i],
                           (int)(S::JOBS * W + i));
        }
    }
}

/* The out phase of the hoisted window path for thread t: the jobs of
   kbt_window_out.  Main jobs: output rows c0 + x, x = x0 + s * RSTEP,
   chunk slot m of the row's segment: the aligned chunk whose element i is
   tile row l + i (l = m * W - q, q the segment's phase, the same for every
   s), those in [0, R) kept; a chunk wholly inside the segment is one
   16-byte store, a partial one element stores.  The extra job (threads
   t < TILE): slot G of output row c0 + t, the segment's last q elements,
   element stores. */
template <typename T, class M>
KBT_HD void kbt_windowh_out(unsigned t, T *__restrict__ out, const T *sm, const kbt_geom &g,
                            uint64_t r0, uint64_t c0)
{
    typedef kbt_hshape<T> S;
    constexpr unsigned W = S::W;
    const int R = (int)(g.rows - r0 < S::TILE ? g.rows - r0 : S::TILE);
    const int C = (int)(g.cols - c0 < S::TILE ? g.cols - c0 : S::TILE);
    unsigned x0, m;
    kbt_job<T>(t, x0, m);
    const uint64_t obase = (c0 + x0) * g.rows + r0; /* flat index of output (c0 + x0, r0) */
    const int q = (int)(obase % W);
    const int l = (int)(m * W) - q;
    const uint64_t f0 = obase + (uint64_t)(int64_t)l;
    const uint64_t step = (uint64_t)S::RSTEP * g.rows;
    const bool whole = l >= 0 && l + (int)W <= R;
    unsigned ok = 0, rowbase[W], fy[W]; /* per element: its tile row's place and swizzle */
#pragma unroll
    for (unsigned i = 0; i < W; i++) {
        int y = l + (int)i;
        ok |= (y >= 0 && y < R) ? 1u << i : 0u;
        unsigned yy = (y >= 0 && y < R) ? (unsigned)y : 0u;
        rowbase[i] = yy * S::TILE;
        fy[i] = kbt_wswz<T>(g.swz, yy);
    }
#pragma unroll
    for (unsigned s = 0; s < S::JOBS; s++) {
        unsigned x = x0 + s * S::RSTEP;
        if (!ok || (int)x >= C)
            continue;
        kbt_chunk<T> o;
        o.q = make_uint4(0, 0, 0, 0);
#pragma unroll
        for (unsigned i = 0; i < W; i++)
            if (ok >> i & 1u)
                o.e[i] = M::lds(sm, rowbase[i] + (x ^ fy[i]), (int)(s * W + i));
        T *p = out + f0 + (uint64_t)s * step;
        if (whole) {
            M::st16(p, o.q);
        } else {
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                if (ok >> i & 1u)
                    M::st1(p + i, o.e[i]);
        }
    }
    if (t < S::TILE && (int)t < C) { /* the extra job */
        const uint64_t xbase = (c0 + t) * g.rows + r0;
        const int xl = (int)S::TILE - (int)(xbase % W);
#pragma unroll
        for (unsigned i = 0; i < W; i++) {
            int y = xl + (int)i;
            if (y < (int)S::TILE && y < R)
                M::st1(out + xbase + (uint64_t)y,
                       M::lds(sm, kbt_widx<T>(g.swz, (unsigned)y, t), (int)(S::JOBS * W + i)));
        }
    }
}

/* The hoisted vector path: kbt_vec_in's loads (granule column gc of rows
   row0 + s * VSTEP) and kbt_vec_out's sub-tiles (granule row gr = t % G,
   granule columns gc0 + s * VSTEP) from one base pointer each. */
template <typename T, class M>
KBT_HD void kbt_vech_in(unsigned t, const T *__restrict__ in, uint4 *smq, const kbt_geom &g,
                        uint64_t r0, uint64_t c0)
{
    typedef kbt_hshape<T> S;
    constexpr unsigned BATCH = S::JOBS / kbt_tile_cfg<T>::VEC_BATCHES;
    static_assert(BATCH * kbt_tile_cfg<T>::VEC_BATCHES == S::JOBS, "even batches");
    const unsigned row0 = t / S::G, gc = t % S::G;
    const T *p = in + (r0 + row0) * g.cols + c0 + gc * S::W;
    const uint64_t step = (uint64_t)S::VSTEP * g.cols;
#pragma unroll 1
    for (unsigned s0 = 0; s0 < S::JOBS; s0 += BATCH) {
        uint4 v[BATCH];
#pragma unroll
        for (unsigned u = 0; u < BATCH; u++)
            v[u] = M::ld16(p + (s0 + u) * step);
#pragma unroll
        for (unsigned u = 0; u < BATCH; u++)
            M::sts16(smq, kbt_vidx<T>(row0 + (s0 + u) * S::VSTEP, gc), v[u], (int)(s0 + u));
    }
}

template <typename T, class M>
KBT_HD void kbt_vech_out(unsigned t, T *__restrict__ out, const uint4 *smq, const kbt_geom &g,
                         uint64_t r0, uint64_t c0)
{
    typedef kbt_hshape<T> S;
    constexpr unsigned W = S::W;
    const unsigned gr = t % S::G, gc0 = t / S::G;
    T *p = out + (c0 + gc0 * W) * g.rows + r0 + gr * W;
#pragma unroll
    for (unsigned s = 0; s < S::SUBS; s++) {
        unsigned gc = gc0 + s * S::VSTEP;
        kbt_chunk<T> a[W];
#pragma unroll
        for (unsigned i = 0; i < W; i++)
            a[i].q = M::lds16(smq, kbt_vidx<T>(gr * W + i, gc), (int)(s * W + i));
#pragma unroll
        for (unsigned j = 0; j < W; j++)
            M::st16(p + (uint64_t)(s * S::VSTEP * W + j) * g.rows, kbt_column<T>(a, j).q);
    }
}

/* ---- the ragged path --------------------------------------------------------
 * For shapes whose rows break 16-byte alignment (8191 x 8193).  The window
 * path's idea (aligned 16-byte chunks of the flat input, each element put in
 * place in shared memory; output chunks wholly inside a segment stored
 * whole, partial ones element by element), with these differences:
 *
 *   - long pieces per warp instruction: the window path's warp takes 8
 *     chunks (128 bytes) of each of 4 rows, which at a ragged phase touch 2
 *     cache lines each; here a warp takes 32 consecutive chunks of one
 *     output row (f32: 512 bytes, 5 lines where 4 would do) and 16 of each
 *     of 2 input rows (256 bytes, 3 lines).  The H200 run counted 7.1 M L2
 *     requests at 8191 x 8193 f32 against the window path's 10.5 M;
 *   - a tile of TR input rows x TC input columns (f32 128 x 64, f64 64 x 64,
 *     u16 128 x 128), 256 threads, dynamic shared memory;
 *   - shared memory: element (y, x) at y * TC + (kbt_rsx(x) ^ kbt_rsy(y))
 *     (kbt_ridx): a warp's element i of the chunks of one output row (rows
 *     y = W * m + i - q) falls in different banks at every phase; for f32
 *     the in phase (two input rows per warp) is at most two-way, the out
 *     phase conflict-free (the emulator holds both bounds);
 *   - a thread's jobs are STEPI rows (STEPO output rows) apart, a multiple
 *     of W, so they share one chunk column, one phase, one element mask and
 *     one half of the swizzle, worked out once per tile; an element access
 *     costs one XOR and one add, and the out phase's shared loads are made
 *     without a branch (rows outside the segment read the neighbouring
 *     lane's word and are not stored).
 * ------------------------------------------------------------------------ */
template <typename T> struct kbt_ragged_cfg;
/* TR, TC: the tile; MIN_BLOCKS: resident blocks per multiprocessor asked of
   the compiler (registers: 64 for f32 and f64, 85 for u16, whose 8
   elements per chunk spill at 64; its loads go out BATCH = 4 at a time).
   f32's shape is the fastest of five tried on the H200 (transpose README,
   "ragged"). */
template <> struct kbt_ragged_cfg<uint32_t> {
    static constexpr unsigned TR = 128, TC = 64, THREADS = 256, MIN_BLOCKS = 4, BATCH = 8;
};
template <> struct kbt_ragged_cfg<uint64_t> {
    static constexpr unsigned TR = 64, TC = 64, THREADS = 256, MIN_BLOCKS = 4, BATCH = 8;
};
template <> struct kbt_ragged_cfg<uint16_t> {
    static constexpr unsigned TR = 128, TC = 128, THREADS = 256, MIN_BLOCKS = 3, BATCH = 4;
};

/* The numbers of the ragged path.  A tile is TR input rows x TC input
   columns (TC output rows of TR elements). */
template <typename T> struct kbt_rshape {
    static constexpr unsigned TR = kbt_ragged_cfg<T>::TR, TC = kbt_ragged_cfg<T>::TC;
    static constexpr unsigned THREADS = kbt_ragged_cfg<T>::THREADS;
    static constexpr unsigned BATCH = kbt_ragged_cfg<T>::BATCH;
    static constexpr unsigned W = 16 / sizeof(T);    /* elements per chunk              */
    static constexpr unsigned GI = TC / W;           /* chunks per tile row             */
    static constexpr unsigned GO = TR / W;           /* chunks per output segment       */
    static constexpr unsigned STEPI = THREADS / GI;  /* rows between a thread's in jobs */
    static constexpr unsigned STEPO = THREADS / GO;  /* output rows between its out jobs */
    static constexpr unsigned JOBSI = TR / STEPI, JOBSO = TC / STEPO;
    static constexpr unsigned LO = GO < 32 ? GO : 32; /* lanes of a warp per output row  */
    static constexpr unsigned SMEM_BYTES = TR * TC * sizeof(T);
    static_assert(THREADS % GI == 0 && TR % STEPI == 0, "whole rows per round of in jobs");
    static_assert(THREADS % GO == 0 && TC % STEPO == 0, "whole rows per round of out jobs");
    static_assert(STEPI % W == 0 && STEPO % W == 0, "a thread's rows share one phase");
    static_assert(JOBSI % BATCH == 0, "the batches cover a thread's in jobs");
    static_assert(THREADS >= TR && THREADS >= TC, "one thread per row takes the extra chunk");
    static_assert(TC % 32 == 0 && (LO & (LO - 1)) == 0, "the swizzle changes bits 0..4 of x only");
};

/* Element (y, x) of the ragged layout: y * TC + (x ^ s), s < 32 made of
   (x >> 5) & 3 (a warp's element i of consecutive chunks of one row, x =
   W * j + i - ph, then spans all the banks) and (y / W) mod LO, spread over
   bits 0..4 (the LO lanes of one output row read rows y = W * m + i - q:
   different banks, and the 32 / LO output rows of a warp differ in the low
   bits of x). */
/* The two halves of the swizzle: kbt_ridx(y, x) = y * TC + (kbt_rsx(x) ^
   kbt_rsy<T>(y)).  The phases work them out once per thread and per job, so
   that an element access costs one XOR and one add. */
KBT_HD unsigned kbt_rsx(unsigned x) { return x ^ ((x >> 5) & 3u); }
template <typename T> KBT_HD unsigned kbt_rsy(unsigned y)
{
    typedef kbt_rshape<T> S;
    return ((y / S::W) & (S::LO - 1u)) * (32u / S::LO);
}
template <typename T>
KBT_HD unsigned kbt_ridx(unsigned y, unsigned x)
{
    return y * kbt_rshape<T>::TC + (kbt_rsx(x) ^ kbt_rsy<T>(y));
}

/* The launch geometry of the ragged path: kbt_geom counted in its tiles. */
template <typename T> inline kbt_geom kbt_ragged_geom(uint64_t rows, uint64_t cols, uint64_t band)
{
    typedef kbt_rshape<T> S;
    kbt_geom g;
    g.rows = rows;
    g.cols = cols;
    g.n = rows * cols;
    g.trows = (rows + S::TR - 1) / S::TR;
    g.tcols = (cols + S::TC - 1) / S::TC;
    g.ntiles = g.trows * g.tcols;
    g.band = band == 0 || band > g.trows ? g.trows : band;
    g.swz = 0;
    g.aligned = rows % S::W == 0 && cols % S::W == 0;
    return g;
}

/* Tile number b -> its first input row and column, in band order. */
template <typename T>
KBT_HD void kbt_ragged_tile(const kbt_geom &g, uint64_t b, uint64_t &r0, uint64_t &c0)
{
    kbt_tile_of_fast<1>(g, b, r0, c0); /* tile row and column */
    r0 *= kbt_rshape<T>::TR;
    c0 *= kbt_rshape<T>::TC;
}

/* Mask of the elements i < W whose place l + i lies in [0, lim). */
template <unsigned W> KBT_HD unsigned kbt_rmask(int l, int lim)
{
    unsigned m = 0;
#pragma unroll
    for (unsigned i = 0; i < W; i++)
        if (l + (int)i >= 0 && l + (int)i < lim)
            m |= 1u << i;
    return m;
}

/* The in phase of the ragged path for thread t, at any tile (edge tiles,
   and tiles whose reads reach the input's end).  Main jobs s = 0 .. JOBSI-1:
   tile row y0 + s * STEPI, chunk k of its window (the aligned chunks from the
   one holding the row's first element), elements at tile columns
   l .. l + W - 1, l = k * W - ph, those in [0, C) kept.  The extra job
   (t < TR): chunk GI of row t, which holds the row's last ph elements.
   Loads in batches of BATCH (all of a batch in flight, then its shared
   stores); the extra load goes out with the first batch. */
template <typename T, class M>
KBT_HD void kbt_ragged_in_edge(unsigned t, const T *__restrict__ in, T *sm, const kbt_geom &g,
                               uint64_t r0, uint64_t c0)
{
    typedef kbt_rshape<T> S;
    constexpr unsigned W = S::W;
    const int R = (int)(g.rows - r0 < S::TR ? g.rows - r0 : S::TR);
    const int C = (int)(g.cols - c0 < S::TC ? g.cols - c0 : S::TC);
    const unsigned k = t % S::GI, y0 = t / S::GI;
    const uint64_t base0 = (r0 + y0) * g.cols + c0; /* flat index of (y0, 0) */
    const int ph = (int)(base0 % W);                 /* the same for y0 + s * STEPI */
    const int l = (int)(k * W) - ph;
    const unsigned ok = kbt_rmask<W>(l, C);
    const uint64_t f0 = base0 - (uint64_t)ph + k * W, fstep = (uint64_t)S::STEPI * g.cols;
    /* the extra job: chunk GI of row t */
    const bool xjob = t < S::TR && (int)t < R;
    uint64_t xf = 0;
    unsigned xok = 0;
    int xl = 0;
    if (xjob) {
        uint64_t xb = (r0 + t) * g.cols + c0;
        int xph = (int)(xb % W);
        xl = (int)S::TC - xph;
        xok = kbt_rmask<W>(xl, C);
        xf = xb - (uint64_t)xph + S::GI * W;
    }
    kbt_chunk<T> xv;
    xv.q = make_uint4(0, 0, 0, 0);
    unsigned xs[W]; /* kbt_rsx of the thread's W tile columns */
#pragma unroll
    for (unsigned i = 0; i < W; i++)
        xs[i] = kbt_rsx((unsigned)(l + (int)i));
#pragma unroll 1
    for (unsigned s0 = 0; s0 < S::JOBSI; s0 += S::BATCH) {
        kbt_chunk<T> v[S::BATCH];
        uint64_t f = f0 + s0 * fstep; /* the flat start of job s0's chunk */
#pragma unroll
        for (unsigned u = 0; u < S::BATCH; u++, f += fstep) {
            unsigned y = y0 + (s0 + u) * S::STEPI;
            v[u].q = make_uint4(0, 0, 0, 0);
            if ((int)y < R && ok)
                v[u].q = kbt_load_chunk<T, M>(in, f, g.n, ok);
        }
        if (s0 == 0 && xok)
            xv.q = kbt_load_chunk<T, M>(in, xf, g.n, xok);
#pragma unroll
        for (unsigned u = 0; u < S::BATCH; u++) {
            unsigned y = y0 + (s0 + u) * S::STEPI;
            if ((int)y >= R)
                continue;
            const unsigned rb = y * S::TC, sy = kbt_rsy<T>(y);
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                if (ok >> i & 1u)
                    M::sts(sm, rb + (xs[i] ^ sy), v[u].e[i], (int)((s0 + u) * W + i));
        }
    }
#pragma unroll
    for (unsigned i = 0; i < W; i++)
        if (xok >> i & 1u)
            M::sts(sm, kbt_ridx<T>(t, (unsigned)(xl + (int)i)), xv.e[i], (int)(S::JOBSI * W + i));
}

/* The out phase of the ragged path for thread t.  Main jobs: output row
   c0 + x, x = x0 + s * STEPO, chunk slot m of its segment (flat
   (c0 + x) * rows + r0, phase q, the same for every s): tile rows
   l .. l + W - 1, l = m * W - q, those in [0, R) written; a 16-byte store
   when all W are, element stores otherwise (the segment's first chunk when
   q > 0, or an edge tile's last).  The extra job (t < TC): slot GO of output
   row t, the segment's last q elements. */
template <typename T, class M>
KBT_HD void kbt_ragged_out_edge(unsigned t, T *__restrict__ out, const T *sm, const kbt_geom &g,
                                uint64_t r0, uint64_t c0)
{
    typedef kbt_rshape<T> S;
    constexpr unsigned W = S::W;
    const int R = (int)(g.rows - r0 < S::TR ? g.rows - r0 : S::TR);
    const int C = (int)(g.cols - c0 < S::TC ? g.cols - c0 : S::TC);
    const unsigned m = t % S::GO, x0 = t / S::GO;
    const uint64_t obase0 = (c0 + x0) * g.rows + r0; /* flat index of output (c0 + x0, r0) */
    const int q = (int)(obase0 % W);
    const int l = (int)(m * W) - q;
    const unsigned ok = kbt_rmask<W>(l, R);
    const bool whole = ok == (1u << W) - 1u;
    const uint64_t f0 = obase0 - (uint64_t)q + m * W, fstep = (uint64_t)S::STEPO * g.rows;
    if (ok) {
        /* Row starts and kbt_rsy of the thread's W tile rows.  Every shared
           load is made (no branch per element); one outside the segment is
           moved W rows in (the neighbouring lane's element: the same word,
           no bank conflict), then clamped into [0, R), so that it reads an
           element this tile wrote, and its value is not stored. */
        unsigned rb[W], sy[W];
#pragma unroll
        for (unsigned i = 0; i < W; i++) {
            int yi = l + (int)i;
            yi = yi < 0 ? yi + (int)W : yi >= R ? yi - (int)W : yi;
            unsigned y = (unsigned)(yi < 0 ? 0 : yi >= R ? R - 1 : yi);
            rb[i] = y * S::TC;
            sy[i] = kbt_rsy<T>(y);
        }
        T *p = out + f0; /* job s's chunk, stepped by STEPO output rows */
#pragma unroll
        for (unsigned s = 0; s < S::JOBSO; s++, p += fstep) {
            unsigned x = x0 + s * S::STEPO;
            if ((int)x >= C)
                continue;
            const unsigned sx = kbt_rsx(x);
            kbt_chunk<T> o;
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                o.e[i] = M::lds(sm, rb[i] + (sx ^ sy[i]), (int)(s * W + i));
            if (whole) {
                M::st16(p, o.q);
            } else {
#pragma unroll
                for (unsigned i = 0; i < W; i++)
                    if (ok >> i & 1u)
                        M::st1(p + i, o.e[i]);
            }
        }
    }
    if (t < S::TC && (int)t < C) {
        uint64_t xb = (c0 + t) * g.rows + r0;
        int xq = (int)(xb % W);
        int xl = (int)S::TR - xq;
        unsigned xok = kbt_rmask<W>(xl, R);
        T *p = out + (xb - (uint64_t)xq + S::GO * W);
#pragma unroll
        for (unsigned i = 0; i < W; i++)
            if (xok >> i & 1u)
                M::st1(p + i, M::lds(sm, kbt_ridx<T>((unsigned)(xl + (int)i), t),
                                     (int)(S::JOBSO * W + i)));
    }
}

/* ---- the ragged path's full tiles ------------------------------------------
 * A tile of TR x TC elements whose every chunk read lies inside the input
 * (kbt_ragged_full) takes these two functions instead: the same jobs, the
 * same accesses, the same layout and `site` numbers, with R = TR and C = TC
 * known at compile time, no end-of-input checks, and the element places
 * worked out once per thread.  The H200 profile of the general functions at
 * 8191 x 8193 f32 (ncu, per instruction) counted 1310 warp instructions a
 * tile of which 107 were memory accesses: 64-bit index arithmetic redone per
 * job, divergent branches around the partial chunks, places recomputed
 * under the 64-register cap.
 *
 *   - The shared place of (y, x), y * TC + (kbt_rsx(x) ^ kbt_rsy(y)), is
 *     (y * TC | kbt_rsy(y)) ^ kbt_rsx(x): TC is a power of two and both
 *     halves of the swizzle are below TC.  A job's row half is one value, a
 *     thread's column halves are fixed: one XOR per element.
 *   - The out phase stores with predicated instructions (M::st16_if,
 *     M::st1_if), so that the one lane of a row whose chunk is partial does
 *     not split its warp; a row at phase 0 (every chunk whole, the same for
 *     the warp's lanes of that row) takes plain 16-byte stores.
 * ------------------------------------------------------------------------ */

/* Every chunk the tile at (r0, c0) reads lies inside the input, and the tile
   is whole: the extra chunk of its last row ends at most at flat
   (r0 + TR - 1) * cols + c0 + TC + W. */
template <typename T>
KBT_HD bool kbt_ragged_full(const kbt_geom &g, uint64_t r0, uint64_t c0)
{
    typedef kbt_rshape<T> S;
    return r0 + S::TR <= g.rows && c0 + S::TC <= g.cols &&
           (r0 + S::TR - 1) * g.cols + c0 + S::TC + S::W <= g.n;
}

template <typename T, class M>
KBT_HD void kbt_ragged_in_full(unsigned t, const T *__restrict__ in, T *sm, const kbt_geom &g,
                               uint64_t r0, uint64_t c0)
{
    typedef kbt_rshape<T> S;
    constexpr unsigned W = S::W;
    static_assert((S::TC & (S::TC - 1)) == 0, "the place's two halves combine by XOR");
    const unsigned k = t % S::GI, y0 = t / S::GI;
    const uint64_t base0 = (r0 + y0) * g.cols + c0;
    const int ph = (int)(base0 % W);
    const int l = (int)(k * W) - ph;
    const unsigned ok = kbt_rmask<W>(l, (int)S::TC);
    const T *src = in + (base0 - (uint64_t)ph + k * W);
    const uint64_t step = (uint64_t)S::STEPI * g.cols;
    unsigned xs[W]; /* column halves; an element outside the tile is not stored */
#pragma unroll
    for (unsigned i = 0; i < W; i++)
        xs[i] = kbt_rsx((unsigned)(l + (int)i)) & (S::TC - 1u);
#pragma unroll 1
    for (unsigned s0 = 0; s0 < S::JOBSI; s0 += S::BATCH) {
        kbt_chunk<T> v[S::BATCH];
#pragma unroll
        for (unsigned u = 0; u < S::BATCH; u++)
            v[u].q = M::ld16(src + (s0 + u) * step);
#pragma unroll
        for (unsigned u = 0; u < S::BATCH; u++) {
            const unsigned y = y0 + (s0 + u) * S::STEPI;
            const unsigned cy = y * S::TC | kbt_rsy<T>(y);
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                if (ok >> i & 1u)
                    M::sts(sm, cy ^ xs[i], v[u].e[i], (int)((s0 + u) * W + i));
        }
    }
    /* the extra job: chunk GI of row t holds the row's last xph elements */
    if (t < S::TR) {
        const uint64_t xb = (r0 + t) * g.cols + c0;
        const int xph = (int)(xb % W);
        if (xph) {
            const int xl = (int)S::TC - xph;
            kbt_chunk<T> xv;
            xv.q = M::ld16(in + (xb - (uint64_t)xph + S::GI * W));
            const unsigned cy = t * S::TC | kbt_rsy<T>(t);
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                if ((int)i < xph)
                    M::sts(sm, cy ^ kbt_rsx((unsigned)(xl + (int)i)), xv.e[i],
                           (int)(S::JOBSI * W + i));
        }
    }
}

template <typename T, class M>
KBT_HD void kbt_ragged_out_full(unsigned t, T *__restrict__ out, const T *sm, const kbt_geom &g,
                                uint64_t r0, uint64_t c0)
{
    typedef kbt_rshape<T> S;
    constexpr unsigned W = S::W;
    const unsigned m = t % S::GO, x0 = t / S::GO;
    const uint64_t obase0 = (c0 + x0) * g.rows + r0;
    const int q = (int)(obase0 % W);
    const int l = (int)(m * W) - q;
    const unsigned ok = kbt_rmask<W>(l, (int)S::TR); /* all but the first chunk at q > 0 */
    const bool whole = ok == (1u << W) - 1u;
    /* Row halves of the thread's W tile rows; a row before the segment (the
       first chunk at q > 0) is moved W rows in, the neighbouring lane's
       element (the same word, no bank conflict), and is not stored. */
    unsigned cy[W];
#pragma unroll
    for (unsigned i = 0; i < W; i++) {
        const int yi = l + (int)i;
        const unsigned y = (unsigned)(yi < 0 ? yi + (int)W : yi);
        cy[i] = y * S::TC | kbt_rsy<T>(y);
    }
    T *p = out + (obase0 - (uint64_t)q + m * W);
    const uint64_t step = (uint64_t)S::STEPO * g.rows;
#pragma unroll
    for (unsigned s = 0; s < S::JOBSO; s++, p += step) {
        const unsigned sx = kbt_rsx(x0 + s * S::STEPO);
        kbt_chunk<T> o;
#pragma unroll
        for (unsigned i = 0; i < W; i++)
            o.e[i] = M::lds(sm, cy[i] ^ sx, (int)(s * W + i));
        if (q == 0) {
            M::st16(p, o.q);
        } else {
            M::st16_if(p, o.q, whole);
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                M::st1_if(p + i, o.e[i], !whole && (ok >> i & 1u));
        }
    }
    /* the extra job: slot GO of output row t, the segment's last xq elements */
    if (t < S::TC) {
        const uint64_t xb = (c0 + t) * g.rows + r0;
        const int xq = (int)(xb % W);
        if (xq) {
            const int xl = (int)S::TR - xq;
            T *xp = out + (xb - (uint64_t)xq + S::GO * W);
            const unsigned sx = kbt_rsx(t);
#pragma unroll
            for (unsigned i = 0; i < W; i++)
                if ((int)i < xq) {
                    const unsigned y = (unsigned)(xl + (int)i);
                    M::st1(xp + i, M::lds(sm, (y * S::TC | kbt_rsy<T>(y)) ^ sx,
                                          (int)(S::JOBSO * W + i)));
                }
        }
    }
}

/* The two phases of tile (r0, c0) for thread t: the full-tile code when
   `full` (kbt_ragged_full, worked out once per tile by the caller), the
   general code otherwise.  The kernel and the emulator both call these. */
template <typename T, class M>
KBT_HD void kbt_ragged_in(bool full, unsigned t, const T *__restrict__ in, T *sm,
                          const kbt_geom &g, uint64_t r0, uint64_t c0)
{
    if (full)
        kbt_ragged_in_full<T, M>(t, in, sm, g, r0, c0);
    else
        kbt_ragged_in_edge<T, M>(t, in, sm, g, r0, c0);
}

template <typename T, class M>
KBT_HD void kbt_ragged_out(bool full, unsigned t, T *__restrict__ out, const T *sm,
                           const kbt_geom &g, uint64_t r0, uint64_t c0)
{
    if (full)
        kbt_ragged_out_full<T, M>(t, out, sm, g, r0, c0);
    else
        kbt_ragged_out_edge<T, M>(t, out, sm, g, r0, c0);
}

#endif
