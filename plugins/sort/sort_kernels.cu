/*
 * sort_kernels.cu -- the sort family's own kernels: the tutorial's odd-even
 * transposition sort (one block), its multi-block exercise, a classic LSD
 * radix sort (histogram, scan, scatter per digit) and a onesweep radix sort
 * (one histogram pass, then one kernel per digit with decoupled look-back).
 *
 * Keys are 32-bit patterns; ord<KEY>() maps them to the documented order
 * (sort.h, sort_ord): every comparison and digit uses it, every store moves
 * the original pattern.  Values (PAIRS) travel with their keys.  The
 * launchers only enqueue on host->stream and check each launch.
 */
#include <cuda_runtime.h>

#include <cstdint>

#include "sort.h"

namespace {

const unsigned FULL = 0xffffffffu;

template <int KEY> __device__ __forceinline__ uint32_t ord(uint32_t b)
{
    if (KEY == SORT_U32)
        return b;
    if (KEY == SORT_I32)
        return b ^ 0x80000000u;
    if (b == 0x80000000u)
        b = 0;
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }

/* ---- odd-even transposition, one block ----------------------------------
 * The tutorial's kernel: the keys in shared memory, thread t compares pair
 * (2t, 2t+1) in even phases and (2t+1, 2t+2) in odd ones, swapping only
 * when strictly out of order (so it is stable); n phases sort n keys.  With
 * n odd the last key has no partner in even phases and the first none in
 * odd ones: the bound i + 1 < n covers both ends.
 * ------------------------------------------------------------------------- */
template <int KEY, bool PAIRS>
__global__ void oddeven_block(const uint32_t *__restrict__ kin, const uint32_t *__restrict__ vin,
                              uint32_t *__restrict__ kout, uint32_t *__restrict__ vout, uint32_t n)
{
    __shared__ uint32_t sk[SORT_ODDEVEN_MAX];
    __shared__ uint32_t sv[PAIRS ? SORT_ODDEVEN_MAX : 1];
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
        sk[i] = kin[i];
        if (PAIRS)
            sv[i] = vin[i];
    }
    __syncthreads();
    for (uint32_t phase = 0; phase < n; phase++) {
        uint32_t i = 2 * threadIdx.x + (phase & 1);
        if (i + 1 < n) {
            uint32_t a = sk[i], b = sk[i + 1];
            if (ord<KEY>(a) > ord<KEY>(b)) {
                sk[i] = b;
                sk[i + 1] = a;
                if (PAIRS) {
                    uint32_t t = sv[i];
                    sv[i] = sv[i + 1];
                    sv[i + 1] = t;
                }
            }
        }
        __syncthreads();
    }
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
        kout[i] = sk[i];
        if (PAIRS)
            vout[i] = sv[i];
    }
}

/* ---- odd-even transposition across blocks ---------------------------------
 * Block b of a launch with offset `off` sorts the segment [off + b*S, off +
 * (b+1)*S) (cut at n) by odd-even transposition in shared memory, from src
 * to dst (the first launch reads the input, the later ones work in place on
 * the output).  Launches alternate between offset 0 and S/2, so that keys
 * cross block borders.  Seen as chunks of S/2 keys, each launch merges
 * neighbouring chunk pairs: an odd-even transposition sort whose elements
 * are chunks, which m = ceil(n / (S/2)) rounds sort (the 0-1 principle;
 * README.md): the launcher runs exactly m.
 * ------------------------------------------------------------------------- */
template <int KEY, bool PAIRS>
__global__ void oddeven_segment(const uint32_t *ksrc, const uint32_t *vsrc, uint32_t *kdst,
                                uint32_t *vdst, uint32_t n, uint32_t off)
{
    __shared__ uint32_t sk[SORT_MB_SEGMENT];
    __shared__ uint32_t sv[PAIRS ? SORT_MB_SEGMENT : 1];
    uint32_t start = off + blockIdx.x * SORT_MB_SEGMENT;
    if (start >= n)
        return; /* the whole block: no barrier is skipped by part of it */
    uint32_t len = n - start < SORT_MB_SEGMENT ? n - start : SORT_MB_SEGMENT;
    for (uint32_t i = threadIdx.x; i < len; i += blockDim.x) {
        sk[i] = ksrc[start + i];
        if (PAIRS)
            sv[i] = vsrc[start + i];
    }
    __syncthreads();
    for (uint32_t phase = 0; phase < len; phase++) {
        uint32_t i = 2 * threadIdx.x + (phase & 1);
        if (i + 1 < len) {
            uint32_t a = sk[i], b = sk[i + 1];
            if (ord<KEY>(a) > ord<KEY>(b)) {
                sk[i] = b;
                sk[i + 1] = a;
                if (PAIRS) {
                    uint32_t t = sv[i];
                    sv[i] = sv[i + 1];
                    sv[i + 1] = t;
                }
            }
        }
        __syncthreads();
    }
    for (uint32_t i = threadIdx.x; i < len; i += blockDim.x) {
        kdst[start + i] = sk[i];
        if (PAIRS)
            vdst[start + i] = sv[i];
    }
}

/* ---- classic LSD radix sort: three kernels per 8-bit digit ----------------
 * Tile t holds keys [t*TILE, (t+1)*TILE).  radix_hist counts each digit in
 * a tile into counts[digit * tiles + t] (digit-major, so that the scan of
 * one digit reads contiguous words); radix_scan (one block per digit) turns
 * each digit's row into exclusive prefixes over the tiles and writes the
 * digit's total; radix_scatter ranks the keys of its tile in 16 rounds of
 * 256 (key order: round, then thread), each round ranked inside a warp
 * with __match_any_sync and across the block's warps through shared
 * counts, and writes each key to digit start + tile prefix + rank: stable.
 * ------------------------------------------------------------------------- */
template <int KEY>
__global__ void __launch_bounds__(SORT_RADIX_THREADS)
    radix_hist(const uint32_t *__restrict__ keys, uint32_t n, int shift,
               uint32_t *__restrict__ counts, uint32_t tiles)
{
    __shared__ uint32_t h[256];
    h[threadIdx.x] = 0;
    __syncthreads();
    uint32_t base = blockIdx.x * SORT_RADIX_TILE;
#pragma unroll 4
    for (uint32_t k = 0; k < SORT_RADIX_ITEMS; k++) {
        uint32_t i = base + k * SORT_RADIX_THREADS + threadIdx.x;
        if (i < n)
            atomicAdd(&h[(ord<KEY>(keys[i]) >> shift) & 255u], 1u);
    }
    __syncthreads();
    counts[(size_t)threadIdx.x * tiles + blockIdx.x] = h[threadIdx.x];
}

/* 1024 threads, one block per digit. */
__global__ void __launch_bounds__(1024)
    radix_scan(uint32_t *__restrict__ counts, uint32_t tiles, uint32_t *__restrict__ totals)
{
    __shared__ uint32_t wsum[32];
    uint32_t *row = counts + (size_t)blockIdx.x * tiles;
    unsigned lane = lane_id(), w = threadIdx.x / 32;
    uint32_t carry = 0;
    for (uint32_t b = 0; b < tiles; b += 1024) {
        uint32_t i = b + threadIdx.x;
        uint32_t x = i < tiles ? row[i] : 0;
        uint32_t inc = x;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            uint32_t y = __shfl_up_sync(FULL, inc, d);
            if (lane >= (unsigned)d)
                inc += y;
        }
        if (lane == 31)
            wsum[w] = inc;
        __syncthreads();
        if (w == 0) {
            uint32_t s = wsum[lane];
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) {
                uint32_t y = __shfl_up_sync(FULL, s, d);
                if (lane >= (unsigned)d)
                    s += y;
            }
            wsum[lane] = s;
        }
        __syncthreads();
        uint32_t excl = carry + inc - x + (w ? wsum[w - 1] : 0);
        if (i < tiles)
            row[i] = excl;
        carry += wsum[31];
        __syncthreads(); /* wsum is rewritten by the next chunk */
    }
    if (threadIdx.x == 0)
        totals[blockIdx.x] = carry;
}

/* Exclusive scan of one value per thread over a block of 256 threads;
   wsum: 8 words of shared memory.  Ends with a barrier. */
__device__ __forceinline__ uint32_t block256_exclusive(uint32_t x, uint32_t *wsum)
{
    unsigned lane = lane_id(), w = threadIdx.x / 32;
    uint32_t inc = x;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        uint32_t y = __shfl_up_sync(FULL, inc, d);
        if (lane >= (unsigned)d)
            inc += y;
    }
    if (lane == 31)
        wsum[w] = inc;
    __syncthreads();
    uint32_t before = 0;
    for (unsigned k = 0; k < w; k++)
        before += wsum[k];
    __syncthreads();
    return before + inc - x;
}

template <int KEY, bool PAIRS>
__global__ void __launch_bounds__(SORT_RADIX_THREADS)
    radix_scatter(const uint32_t *__restrict__ kin, const uint32_t *__restrict__ vin,
                  uint32_t *__restrict__ kout, uint32_t *__restrict__ vout, uint32_t n, int shift,
                  const uint32_t *__restrict__ counts, uint32_t tiles,
                  const uint32_t *__restrict__ totals)
{
    const unsigned NW = SORT_RADIX_THREADS / 32;
    __shared__ uint32_t wcnt[NW][256]; /* this round: keys of each digit per warp */
    __shared__ uint32_t woff[NW][256]; /* this round: where warp w's keys of a digit start */
    __shared__ uint32_t next[256];     /* next free output position of each digit */
    __shared__ uint32_t wsum[NW];
    unsigned t = threadIdx.x, lane = lane_id(), w = t / 32;
    uint32_t start = block256_exclusive(totals[t], wsum);
    next[t] = start + counts[(size_t)t * tiles + blockIdx.x];
    for (unsigned k = 0; k < NW; k++)
        wcnt[k][t] = 0;
    __syncthreads();
    uint32_t base = blockIdx.x * SORT_RADIX_TILE;
    uint32_t lt = (1u << lane) - 1;
    for (uint32_t r = 0; r < SORT_RADIX_ITEMS; r++) {
        uint32_t i = base + r * SORT_RADIX_THREADS + t;
        bool valid = i < n;
        uint32_t key = valid ? kin[i] : 0;
        uint32_t d = valid ? (ord<KEY>(key) >> shift) & 255u : 256u;
        uint32_t peers = __match_any_sync(FULL, d);
        uint32_t rank = __popc(peers & lt);
        if (valid && lane == (unsigned)(__ffs(peers) - 1))
            wcnt[w][d] = __popc(peers);
        __syncthreads();
        /* thread t: digit t, over the warps in order */
        uint32_t run = next[t];
        for (unsigned k = 0; k < NW; k++) {
            uint32_t c = wcnt[k][t];
            woff[k][t] = run;
            wcnt[k][t] = 0;
            run += c;
        }
        next[t] = run;
        __syncthreads();
        if (valid) {
            uint32_t pos = woff[w][d] + rank;
            kout[pos] = key;
            if (PAIRS)
                vout[pos] = vin[i];
        }
        /* woff is next rewritten after the next round's first barrier */
    }
}

/* ---- onesweep ----------------------------------------------------------------
 * os_hist: the histograms of all four digits in one read of the keys
 * (shared-memory counters, then one global atomic per non-zero bin).
 *
 * os_pass, per digit: a block takes the next tile number from a counter (so
 * tiles start in order and a tile's predecessors are running or done), loads
 * its keys warp by warp (warp w owns a contiguous run of 32*ITEMS keys,
 * item j of lane l being key 32*j + l of the run), ranks them with
 * __match_any_sync against a per-warp digit counter (key order within the
 * warp: item, then lane), turns the per-warp counts into per-digit offsets,
 * publishes its per-digit counts and looks back over the predecessors'
 * status words (decoupled look-back: an aggregate, or an inclusive prefix
 * that ends the walk) to find where its keys of each digit go.  Keys are
 * staged in shared memory in digit order and written out from there, so
 * that neighbouring threads write neighbouring addresses.  Stable.
 *
 * A status word is 64 bits: the run's epoch (30 bits), a flag (2 bits: 1
 * aggregate, 2 inclusive prefix) and a count (32 bits).  A word from an
 * earlier run has another epoch and reads as not yet published, so the
 * status array is zeroed once in setup and never reset.
 * ------------------------------------------------------------------------- */
/* Keys [i, i + 16) of one thread, counted per digit position with runs: a
   counter is flushed to shared memory only when the digit changes, so that
   sorted and all-equal inputs do not pile every thread's atomics on one
   bin. */
template <int KEY> struct digit_runs {
    uint32_t prev[4], cnt[4];
    __device__ __forceinline__ void start()
    {
#pragma unroll
        for (int p = 0; p < 4; p++) {
            prev[p] = 0;
            cnt[p] = 0;
        }
    }
    __device__ __forceinline__ void add(uint32_t b, uint32_t (*h)[256])
    {
        uint32_t o = ord<KEY>(b);
#pragma unroll
        for (int p = 0; p < 4; p++) {
            uint32_t d = (o >> (8 * p)) & 255u;
            if (d != prev[p]) {
                if (cnt[p])
                    atomicAdd(&h[p][prev[p]], cnt[p]);
                prev[p] = d;
                cnt[p] = 0;
            }
            cnt[p]++;
        }
    }
    __device__ __forceinline__ void flush(uint32_t (*h)[256])
    {
#pragma unroll
        for (int p = 0; p < 4; p++)
            if (cnt[p])
                atomicAdd(&h[p][prev[p]], cnt[p]);
    }
};

template <int KEY>
__global__ void __launch_bounds__(256)
    os_hist(const uint32_t *__restrict__ keys, uint32_t n, uint32_t *__restrict__ ghist)
{
    __shared__ uint32_t h[4][256];
    for (unsigned k = threadIdx.x; k < 1024; k += blockDim.x)
        (&h[0][0])[k] = 0;
    __syncthreads();
    /* Whole groups of 16 keys, four 16-byte loads each (the buffer is
       cudaMalloc'ed: 256-byte aligned), at grid stride; then the tail. */
    uint32_t groups = n / 16;
    uint32_t stride = gridDim.x * blockDim.x; /* g + stride < 2^32: n < 2^31 */
    const uint4 *k4 = reinterpret_cast<const uint4 *>(keys);
    digit_runs<KEY> r;
    r.start();
    for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += stride) {
#pragma unroll
        for (int q = 0; q < 4; q++) {
            uint4 v = k4[(size_t)g * 4 + q];
            r.add(v.x, h);
            r.add(v.y, h);
            r.add(v.z, h);
            r.add(v.w, h);
        }
    }
    if (blockIdx.x == 0)
        for (uint32_t i = groups * 16 + threadIdx.x; i < n; i += blockDim.x)
            r.add(keys[i], h);
    r.flush(h);
    __syncthreads();
    for (unsigned k = threadIdx.x; k < 1024; k += blockDim.x) {
        uint32_t c = (&h[0][0])[k];
        if (c)
            atomicAdd(&ghist[k], c);
    }
}

const unsigned long long OS_FLAG_AGG = 1ull << 32, OS_FLAG_PRE = 2ull << 32;

__device__ __forceinline__ unsigned long long os_word(uint32_t epoch, unsigned long long flag,
                                                      uint32_t count)
{
    return ((unsigned long long)epoch << 34) | flag | count;
}

template <int KEY, bool PAIRS>
__global__ void __launch_bounds__(SORT_OS_THREADS, 2)
    os_pass(const uint32_t *__restrict__ kin, const uint32_t *__restrict__ vin,
            uint32_t *__restrict__ kout, uint32_t *__restrict__ vout, uint32_t n, int shift,
            const uint32_t *__restrict__ ghist, unsigned long long *status,
            uint32_t *tile_counter, uint32_t epoch)
{
    const unsigned NW = SORT_OS_THREADS / 32, IT = SORT_OS_ITEMS;
    __shared__ uint32_t whist[NW][256]; /* per warp: counts, then offsets */
    __shared__ uint32_t tstart[256];    /* tile-local start of each digit */
    __shared__ uint32_t gbase[256];     /* global position of that start  */
    __shared__ uint32_t stage[SORT_OS_TILE];
    __shared__ uint8_t sdig[SORT_OS_TILE]; /* the digit of each staged key */
    __shared__ uint32_t wsum[NW];
    __shared__ uint32_t tile_s;
    unsigned t = threadIdx.x, lane = lane_id(), w = t / 32;
    if (t == 0)
        tile_s = atomicAdd(tile_counter, 1u);
    for (unsigned k = 0; k < NW; k++)
        whist[k][t] = 0;
    __syncthreads();
    uint32_t tile = tile_s;
    uint32_t base = tile * SORT_OS_TILE;
    uint32_t tcount = n - base < SORT_OS_TILE ? n - base : SORT_OS_TILE;
    uint32_t wbase = base + w * 32 * IT; /* < n + TILE < 2^32 */

    uint32_t key[IT], pos[IT];
#pragma unroll
    for (unsigned j = 0; j < IT; j++) {
        uint32_t i = wbase + j * 32 + lane;
        bool valid = i < n;
        key[j] = valid ? kin[i] : 0;
        pos[j] = valid ? 0 : 0xffffffffu;
    }
    uint32_t lt = (1u << lane) - 1;
#pragma unroll
    for (unsigned j = 0; j < IT; j++) {
        bool valid = pos[j] == 0;
        uint32_t d = valid ? (ord<KEY>(key[j]) >> shift) & 255u : 256u;
        uint32_t peers = __match_any_sync(FULL, d);
        unsigned leader = __ffs(peers) - 1;
        uint32_t prev = 0;
        if (valid && lane == leader) {
            prev = whist[w][d];
            whist[w][d] = prev + __popc(peers);
        }
        prev = __shfl_sync(FULL, prev, leader);
        if (valid)
            pos[j] = prev + __popc(peers & lt); /* rank within the warp's digit */
        __syncwarp();
    }
    __syncthreads();
    /* thread t = digit t: offsets of each warp's keys, the tile's count */
    uint32_t count = 0;
    for (unsigned k = 0; k < NW; k++) {
        uint32_t c = whist[k][t];
        whist[k][t] = count;
        count += c;
    }
    unsigned long long *my = status + (size_t)tile * 256 + t;
    *(volatile unsigned long long *)my =
        os_word(epoch, tile == 0 ? OS_FLAG_PRE : OS_FLAG_AGG, count);
    uint32_t local = block256_exclusive(count, wsum);
    uint32_t gstart = block256_exclusive(ghist[t], wsum);
    tstart[t] = local;
    /* decoupled look-back for digit t */
    uint32_t excl = 0;
    if (tile > 0) {
        uint32_t p = tile - 1;
        for (;;) {
            unsigned long long s =
                *(volatile unsigned long long *)(status + (size_t)p * 256 + t);
            uint32_t flag = (uint32_t)(s >> 32) & 3u;
            if ((uint32_t)(s >> 34) != epoch || flag == 0)
                continue; /* not published yet in this run: read it again */
            excl += (uint32_t)s;
            if (flag == 2u || p == 0) /* tile 0 always publishes a prefix */
                break;
            p--;
        }
        *(volatile unsigned long long *)my = os_word(epoch, OS_FLAG_PRE, excl + count);
    }
    gbase[t] = gstart + excl;
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < IT; j++)
        if (pos[j] != 0xffffffffu) {
            uint32_t d = (ord<KEY>(key[j]) >> shift) & 255u;
            pos[j] += tstart[d] + whist[w][d];
            stage[pos[j]] = key[j];
            sdig[pos[j]] = (uint8_t)d;
        }
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < IT; k++) {
        uint32_t i = k * SORT_OS_THREADS + t;
        if (i < tcount) {
            uint32_t d = sdig[i];
            kout[gbase[d] + (i - tstart[d])] = stage[i];
        }
    }
    if (PAIRS) {
        __syncthreads(); /* every key has left the stage */
#pragma unroll
        for (unsigned j = 0; j < IT; j++)
            if (pos[j] != 0xffffffffu)
                stage[pos[j]] = vin[wbase + j * 32 + lane];
        __syncthreads();
#pragma unroll
        for (unsigned k = 0; k < IT; k++) {
            uint32_t i = k * SORT_OS_THREADS + t;
            if (i < tcount) {
                uint32_t d = sdig[i];
                vout[gbase[d] + (i - tstart[d])] = stage[i];
            }
        }
    }
}

/* ---- bitonic ------------------------------------------------------------------
 * The form of the network in which every comparator puts the smaller key at
 * the lower position: merging two sorted runs of k/2 starts with a "flip"
 * step (position lo of a k-run against its mirror k-1-lo), then half-cleaner
 * steps j = k/4 .. 1 (lo against lo + j).  Padding n up to a power of two
 * with +infinity is then free: a comparator whose upper position is at or
 * past n would compare a key with +infinity and never swap, so it is
 * skipped, and nothing past n is ever read or written.  Tiles of 2048 keys
 * run every step with j < 2048 in shared memory (1024 threads, one
 * comparator each); steps with j >= 2048 run as one global kernel each.
 * Not stable.
 * ------------------------------------------------------------------------- */
const uint32_t BT = 2048; /* bitonic tile */

template <int KEY, bool PAIRS>
__device__ __forceinline__ void bitonic_cx(uint32_t *sk, uint32_t *sv, uint32_t lo, uint32_t hi)
{
    uint32_t a = sk[lo], b = sk[hi];
    if (ord<KEY>(a) > ord<KEY>(b)) {
        sk[lo] = b;
        sk[hi] = a;
        if (PAIRS) {
            uint32_t x = sv[lo];
            sv[lo] = sv[hi];
            sv[hi] = x;
        }
    }
}

/* FULL: sort the tile from scratch (k = 2 .. BT); otherwise only the
   half-cleaners j = BT/2 .. 1 of a merge whose larger steps ran globally. */
template <int KEY, bool PAIRS, bool FULL_SORT>
__global__ void __launch_bounds__(1024)
    bitonic_tile(const uint32_t *ksrc, const uint32_t *vsrc, uint32_t *kdst, uint32_t *vdst,
                 uint32_t n)
{
    __shared__ uint32_t sk[BT];
    __shared__ uint32_t sv[PAIRS ? BT : 1];
    uint32_t start = blockIdx.x * BT;
    uint32_t len = n - start < BT ? n - start : BT;
    for (uint32_t i = threadIdx.x; i < len; i += blockDim.x) {
        sk[i] = ksrc[start + i];
        if (PAIRS)
            sv[i] = vsrc[start + i];
    }
    __syncthreads();
    uint32_t t = threadIdx.x; /* comparator t of BT/2 */
    for (uint32_t k = FULL_SORT ? 2 : BT; k <= BT; k <<= 1) {
        if (FULL_SORT) {
            uint32_t h = k / 2, lo = (t / h) * k + t % h, hi = (t / h) * k + k - 1 - t % h;
            if (hi < len)
                bitonic_cx<KEY, PAIRS>(sk, sv, lo, hi);
            __syncthreads();
        }
        for (uint32_t j = FULL_SORT ? k / 4 : BT / 2; j >= 1; j >>= 1) {
            uint32_t lo = (t / j) * 2 * j + t % j, hi = lo + j;
            if (hi < len)
                bitonic_cx<KEY, PAIRS>(sk, sv, lo, hi);
            __syncthreads();
        }
    }
    for (uint32_t i = threadIdx.x; i < len; i += blockDim.x) {
        kdst[start + i] = sk[i];
        if (PAIRS)
            vdst[start + i] = sv[i];
    }
}

/* One global step over `pairs` comparators: FLIP with run length k, or a
   half-cleaner with distance j. */
template <int KEY, bool PAIRS, bool FLIP>
__global__ void bitonic_global(uint32_t *k, uint32_t *v, uint32_t n, uint32_t pairs, uint32_t kj)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= pairs)
        return;
    uint32_t lo, hi;
    if (FLIP) {
        uint32_t h = kj / 2;
        lo = (t / h) * kj + t % h;
        hi = (t / h) * kj + kj - 1 - t % h;
    } else {
        lo = (t / kj) * 2 * kj + t % kj;
        hi = lo + kj;
    }
    if (hi >= n)
        return;
    uint32_t a = k[lo], b = k[hi];
    if (ord<KEY>(a) > ord<KEY>(b)) {
        k[lo] = b;
        k[hi] = a;
        if (PAIRS) {
            uint32_t x = v[lo];
            v[lo] = v[hi];
            v[hi] = x;
        }
    }
}

/* ---- merge ---------------------------------------------------------------------
 * Tiles of 2048 keys sorted by the bitonic tile kernel, then merge passes of
 * runs of width w = 2048, 4096, ... between two buffers.  Each thread of a
 * pass writes MI consecutive outputs of one merged pair of runs: it finds
 * where its first output's diagonal crosses the merge path by binary search
 * over the two runs (A's key taken on ties, so merges are stable), then
 * merges MI keys serially.  The passes ping-pong so that the last lands in
 * the output.  Not stable overall (the tile sort is bitonic).
 * ------------------------------------------------------------------------- */
const uint32_t MI = 8;
static_assert((2 * BT) % MI == 0, "a thread's outputs never cross into the next pair of runs");

template <int KEY, bool PAIRS>
__global__ void __launch_bounds__(256)
    merge_pass(const uint32_t *__restrict__ ks, const uint32_t *__restrict__ vs,
               uint32_t *__restrict__ kd, uint32_t *__restrict__ vd, uint32_t n, uint32_t w)
{
    uint64_t o = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) * MI;
    if (o >= n)
        return;
    uint64_t a0 = o / (2ull * w) * (2ull * w);
    uint64_t a1 = a0 + w < n ? a0 + w : n, b1 = a0 + 2ull * w < n ? a0 + 2ull * w : n;
    uint32_t la = (uint32_t)(a1 - a0), lb = (uint32_t)(b1 - a1);
    const uint32_t *A = ks + a0, *B = ks + a1;
    uint32_t diag = (uint32_t)(o - a0);
    uint32_t lo = diag > lb ? diag - lb : 0, hi = diag < la ? diag : la;
    while (lo < hi) { /* the number of A keys among the first diag outputs */
        uint32_t mid = (lo + hi) / 2;
        if (ord<KEY>(A[mid]) <= ord<KEY>(B[diag - mid - 1]))
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t i = lo, j = diag - lo;
    uint64_t end = o + MI < b1 ? o + MI : b1;
    for (uint64_t p = o; p < end; p++) {
        bool takeA = i < la && (j >= lb || ord<KEY>(A[i]) <= ord<KEY>(B[j]));
        if (takeA) {
            kd[p] = A[i];
            if (PAIRS)
                vd[p] = vs[a0 + i];
            i++;
        } else {
            kd[p] = B[j];
            if (PAIRS)
                vd[p] = vs[a1 + j];
            j++;
        }
    }
}

/* ---- launchers ---------------------------------------------------------------- */

template <int KEY, bool PAIRS> int oddeven_launch(sort_state *s, kb_host *host)
{
    uint32_t n = (uint32_t)s->n;
    unsigned threads = n / 2 > 0 ? n / 2 : 1;
    threads = (threads + 31) / 32 * 32;
    oddeven_block<KEY, PAIRS><<<1, threads, 0, (cudaStream_t)host->stream>>>(
        (const uint32_t *)s->keys_in.dev, (const uint32_t *)s->vals_in.dev,
        (uint32_t *)s->keys_out.dev, (uint32_t *)s->vals_out.dev, n);
    KBK_CUDA_LAUNCH(host, "oddeven_block");
    return KB_OK;
}

template <int KEY, bool PAIRS> int oddeven_mb_launch(sort_state *s, kb_host *host)
{
    cudaStream_t st = (cudaStream_t)host->stream;
    uint32_t n = (uint32_t)s->n, half = SORT_MB_SEGMENT / 2;
    uint32_t chunks = (uint32_t)sort_ceil_div(n, half);
    uint32_t *ko = (uint32_t *)s->keys_out.dev, *vo = (uint32_t *)s->vals_out.dev;
    for (uint32_t round = 0; round < chunks; round++) {
        uint32_t off = (round & 1) ? half : 0;
        if (off >= n) {
            if (round == 0)
                return host->fail(host, KB_EINVAL, "sort: odd-even-multiblock: empty input");
            continue;
        }
        uint32_t blocks = (uint32_t)sort_ceil_div(n - off, SORT_MB_SEGMENT);
        const uint32_t *ks = round == 0 ? (const uint32_t *)s->keys_in.dev : ko;
        const uint32_t *vs = round == 0 ? (const uint32_t *)s->vals_in.dev : vo;
        oddeven_segment<KEY, PAIRS><<<blocks, SORT_MB_SEGMENT / 2, 0, st>>>(ks, vs, ko, vo, n, off);
        KBK_CUDA_LAUNCH(host, "oddeven_segment");
    }
    return KB_OK;
}

template <int KEY, bool PAIRS> int bitonic_launch(sort_state *s, kb_host *host)
{
    cudaStream_t st = (cudaStream_t)host->stream;
    uint32_t n = (uint32_t)s->n;
    uint32_t *ko = (uint32_t *)s->keys_out.dev, *vo = (uint32_t *)s->vals_out.dev;
    uint32_t tiles = (uint32_t)sort_ceil_div(n, BT);
    bitonic_tile<KEY, PAIRS, true><<<tiles, BT / 2, 0, st>>>(
        (const uint32_t *)s->keys_in.dev, (const uint32_t *)s->vals_in.dev, ko, vo, n);
    KBK_CUDA_LAUNCH(host, "bitonic_tile");
    uint64_t np2 = BT;
    while (np2 < n)
        np2 <<= 1;
    uint32_t pairs = (uint32_t)(np2 / 2);
    unsigned blocks = (unsigned)sort_ceil_div(pairs, 256);
    for (uint64_t k = 2ull * BT; k <= np2; k <<= 1) {
        bitonic_global<KEY, PAIRS, true><<<blocks, 256, 0, st>>>(ko, vo, n, pairs, (uint32_t)k);
        KBK_CUDA_LAUNCH(host, "bitonic_global (flip)");
        for (uint64_t j = k / 4; j >= BT; j >>= 1) {
            bitonic_global<KEY, PAIRS, false><<<blocks, 256, 0, st>>>(ko, vo, n, pairs,
                                                                      (uint32_t)j);
            KBK_CUDA_LAUNCH(host, "bitonic_global (half-cleaner)");
        }
        bitonic_tile<KEY, PAIRS, false><<<tiles, BT / 2, 0, st>>>(ko, vo, ko, vo, n);
        KBK_CUDA_LAUNCH(host, "bitonic_tile (merge)");
    }
    return KB_OK;
}

template <int KEY, bool PAIRS> int merge_launch(sort_state *s, kb_host *host)
{
    cudaStream_t st = (cudaStream_t)host->stream;
    uint32_t n = (uint32_t)s->n;
    uint32_t *ko = (uint32_t *)s->keys_out.dev, *vo = (uint32_t *)s->vals_out.dev;
    uint32_t *ka = (uint32_t *)s->keys_alt.dev, *va = (uint32_t *)s->vals_alt.dev;
    uint32_t tiles = (uint32_t)sort_ceil_div(n, BT);
    int passes = 0;
    for (uint64_t w = BT; w < n; w <<= 1)
        passes++;
    /* the tile sort lands where an even number of passes later is the output */
    uint32_t *kc = passes % 2 ? ka : ko, *vc = passes % 2 ? va : vo;
    uint32_t *kn = passes % 2 ? ko : ka, *vn = passes % 2 ? vo : va;
    bitonic_tile<KEY, PAIRS, true><<<tiles, BT / 2, 0, st>>>(
        (const uint32_t *)s->keys_in.dev, (const uint32_t *)s->vals_in.dev, kc, vc, n);
    KBK_CUDA_LAUNCH(host, "bitonic_tile");
    unsigned blocks = (unsigned)sort_ceil_div(sort_ceil_div(n, MI), 256);
    for (uint64_t w = BT; w < n; w <<= 1) {
        merge_pass<KEY, PAIRS><<<blocks, 256, 0, st>>>(kc, vc, kn, vn, n, (uint32_t)w);
        KBK_CUDA_LAUNCH(host, "merge_pass");
        uint32_t *t = kc;
        kc = kn;
        kn = t;
        t = vc;
        vc = vn;
        vn = t;
    }
    return KB_OK;
}

template <int KEY, bool PAIRS> int radix_launch(sort_state *s, kb_host *host)
{
    cudaStream_t st = (cudaStream_t)host->stream;
    uint32_t n = (uint32_t)s->n;
    uint32_t tiles = (uint32_t)sort_ceil_div(n, SORT_RADIX_TILE);
    uint32_t *counts = (uint32_t *)s->radix_counts.dev;
    uint32_t *totals = counts + (size_t)tiles * 256;
    const uint32_t *kin = (const uint32_t *)s->keys_in.dev, *vin = (const uint32_t *)s->vals_in.dev;
    uint32_t *ko = (uint32_t *)s->keys_out.dev, *vo = (uint32_t *)s->vals_out.dev;
    uint32_t *ka = (uint32_t *)s->keys_alt.dev, *va = (uint32_t *)s->vals_alt.dev;
    /* in -> alt -> out -> alt -> out: the input is never written */
    for (int p = 0; p < 4; p++) {
        const uint32_t *ks = p == 0 ? kin : (p & 1) ? ka : ko;
        const uint32_t *vs = p == 0 ? vin : (p & 1) ? va : vo;
        uint32_t *kd = (p & 1) ? ko : ka, *vd = (p & 1) ? vo : va;
        radix_hist<KEY><<<tiles, SORT_RADIX_THREADS, 0, st>>>(ks, n, 8 * p, counts, tiles);
        KBK_CUDA_LAUNCH(host, "radix_hist");
        radix_scan<<<256, 1024, 0, st>>>(counts, tiles, totals);
        KBK_CUDA_LAUNCH(host, "radix_scan");
        radix_scatter<KEY, PAIRS><<<tiles, SORT_RADIX_THREADS, 0, st>>>(ks, vs, kd, vd, n, 8 * p,
                                                                        counts, tiles, totals);
        KBK_CUDA_LAUNCH(host, "radix_scatter");
    }
    return KB_OK;
}

template <int KEY, bool PAIRS> int onesweep_launch(sort_state *s, kb_host *host)
{
    cudaStream_t st = (cudaStream_t)host->stream;
    uint32_t n = (uint32_t)s->n;
    uint32_t tiles = (uint32_t)sort_ceil_div(n, SORT_OS_TILE);
    uint32_t *ghist = (uint32_t *)s->os_hist.dev;     /* 4 x 256 counts */
    uint32_t *counters = ghist + 1024;                /* 4 tile counters */
    unsigned long long *status = (unsigned long long *)s->os_status.dev;
    if (++s->os_epoch >= (1u << 30))
        s->os_epoch = 1;
    uint32_t epoch = s->os_epoch;
    KBK_CUDA(host, cudaMemsetAsync(ghist, 0, (1024 + 4) * sizeof(uint32_t), st));
    const uint32_t *kin = (const uint32_t *)s->keys_in.dev, *vin = (const uint32_t *)s->vals_in.dev;
    uint32_t *ko = (uint32_t *)s->keys_out.dev, *vo = (uint32_t *)s->vals_out.dev;
    uint32_t *ka = (uint32_t *)s->keys_alt.dev, *va = (uint32_t *)s->vals_alt.dev;
    uint64_t hblocks = sort_ceil_div(n, 256 * 16);
    uint64_t cap = (uint64_t)s->sm_count * 8;
    os_hist<KEY><<<(unsigned)(hblocks < cap ? hblocks : cap), 256, 0, st>>>(kin, n, ghist);
    KBK_CUDA_LAUNCH(host, "os_hist");
    for (int p = 0; p < 4; p++) {
        const uint32_t *ks = p == 0 ? kin : (p & 1) ? ka : ko;
        const uint32_t *vs = p == 0 ? vin : (p & 1) ? va : vo;
        uint32_t *kd = (p & 1) ? ko : ka, *vd = (p & 1) ? vo : va;
        os_pass<KEY, PAIRS><<<tiles, SORT_OS_THREADS, 0, st>>>(
            ks, vs, kd, vd, n, 8 * p, ghist + 256 * p, status + (size_t)p * tiles * 256,
            counters + p, epoch);
        KBK_CUDA_LAUNCH(host, "os_pass");
    }
    return KB_OK;
}

/* Dispatch on the key type and on pairs. */
#define SORT_DISPATCH(FN, s, host)                                                            \
    do {                                                                                     \
        if ((s)->pairs) {                                                                    \
            switch ((s)->key) {                                                              \
            case SORT_U32: return FN<SORT_U32, true>((s), (host));                           \
            case SORT_I32: return FN<SORT_I32, true>((s), (host));                           \
            default: return FN<SORT_F32, true>((s), (host));                                 \
            }                                                                                \
        }                                                                                    \
        switch ((s)->key) {                                                                  \
        case SORT_U32: return FN<SORT_U32, false>((s), (host));                              \
        case SORT_I32: return FN<SORT_I32, false>((s), (host));                              \
        default: return FN<SORT_F32, false>((s), (host));                                    \
        }                                                                                    \
    } while (0)

} // namespace

extern "C" uint64_t sort_os_status_bytes(uint64_t n)
{
    return 4 * sort_ceil_div(n, SORT_OS_TILE) * 256 * 8;
}

extern "C" int sort_run_oddeven(sort_state *s, const sort_impl *impl, kb_host *host)
{
    (void)impl;
    SORT_DISPATCH(oddeven_launch, s, host);
}

extern "C" int sort_run_oddeven_mb(sort_state *s, const sort_impl *impl, kb_host *host)
{
    (void)impl;
    SORT_DISPATCH(oddeven_mb_launch, s, host);
}

extern "C" int sort_run_bitonic(sort_state *s, const sort_impl *impl, kb_host *host)
{
    (void)impl;
    SORT_DISPATCH(bitonic_launch, s, host);
}

extern "C" int sort_run_merge(sort_state *s, const sort_impl *impl, kb_host *host)
{
    (void)impl;
    SORT_DISPATCH(merge_launch, s, host);
}

extern "C" int sort_run_radix(sort_state *s, const sort_impl *impl, kb_host *host)
{
    (void)impl;
    SORT_DISPATCH(radix_launch, s, host);
}

extern "C" int sort_run_onesweep(sort_state *s, const sort_impl *impl, kb_host *host)
{
    (void)impl;
    SORT_DISPATCH(onesweep_launch, s, host);
}
