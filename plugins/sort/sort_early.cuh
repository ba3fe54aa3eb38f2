/*
 * sort_early.cuh -- the kernel bodies of onesweep-early: a onesweep LSD radix
 * sort whose tiles publish their digit counts before they rank their keys.
 *
 * What it computes.  Four passes over 8-bit digits of a value in sort.h's
 * sort_ord order (oe_sort_value: for f32 keys, which travel between passes
 * in a flipped form, see "Keys and their digits" below), stable,
 * in -> alt -> out -> alt -> out, after one histogram kernel that counts all
 * four digits and turns the counts into each digit's first output position.
 * A pass whose digit is the same for every key would be the identity
 * permutation: the histogram sees it (one digit holds all n keys) and
 * writes a plan (oe_plan_word) that the four pass launches read, so such a
 * pass exits at once and the others route the keys in -> ... -> out through
 * alt and out without it; with no pass left, the last launch copies in to
 * out.  The decision stays on the device: the host launches four passes
 * whatever the keys are.
 *
 * This file holds only the bodies, written against a handful of primitives
 * (oe_sync, oe_ballot, oe_shfl, ...) so that the same code runs on the GPU
 * (sort_early.cu, where __CUDACC__ maps them to CUDA intrinsics) and in the
 * CPU model of a GPU that the unit tests use (tests/simt.h, which defines
 * them before including this file and defines SORT_OE_HOST_MODEL).
 *
 * The histogram (oe_hist_body, 128 threads, tiles of 2048 keys): a thread
 * reads 16 keys with four 16-byte loads, and for each digit position either
 * adds 16 to one counter (when its 16 keys share that digit: sorted and
 * repetitive inputs) or adds 1 per key; counters live in shared memory (in
 * P lane-indexed copies, `hist`) and go to global memory with one atomic
 * per non-zero bin.  The last block to
 * finish (a ticket counter) turns the 4 x 256 counts into exclusive starts
 * and writes the pass plan.
 *
 * A pass (oe_pass_body, NT threads x IT keys per tile):
 *   0. every thread reads the pass's plan word: a skipped pass's blocks
 *      return before they touch anything; otherwise the word names the
 *      buffers the pass reads and writes (and, for f32, whether it flips
 *      the keys in or back, see oe_key_mode);
 *   1. thread 0 takes the next tile number from a counter (tiles start in
 *      order, so every predecessor of a tile is running or done);
 *   2. each warp loads its 32*IT consecutive keys, item j of lane l being key
 *      32j + l of the warp's run (coalesced 128-byte rows), and groups equal
 *      digits of an item with a match (8 ballots, or __match_any_sync); the
 *      group's highest lane adds the group size to the warp's counter of the
 *      digit in shared memory (one atomic per distinct digit), and the
 *      counter's value before it, handed to the group by a shuffle, plus
 *      the group's lanes below a key is the key's rank among the warp's
 *      keys of that digit (stable: items in order, lanes in order);
 *   3. thread d < 256 turns digit d's per-warp counts into per-warp offsets,
 *      publishes the tile's count of digit d (status word: aggregate, or the
 *      inclusive prefix for tile 0) -- early, before any key's position in
 *      the tile is known -- and the block scans the 256 counts into the
 *      tile-local start of each digit;
 *   4. a key's tile-local position is its warp's start of its digit plus
 *      its rank from step 2, and the key is written to shared memory there;
 *   5. values are written to shared memory at the same positions; thread
 *      d walks the predecessors' status words back to an inclusive prefix
 *      (decoupled look-back), publishes its own inclusive prefix and stores
 *      dbase[d] = global start of d + prefix - tile-local start of d;
 *   6. slot i of the staged tile goes to out[i + dbase[digit]]: neighbouring
 *      threads write neighbouring addresses within a digit's run.
 *
 * Status words are 64 bits: the run's epoch (30 bits), a flag (2 bits: 1
 * aggregate, 2 inclusive prefix) and a count (32 bits).  A word of an
 * earlier run has another epoch and reads as not yet published, so the
 * status array is zeroed once and never per run.  A block waits only on
 * tiles numbered below its own; those took their numbers earlier, so they
 * are resident or done, and they publish their aggregate before they wait
 * on anything: the look-back always ends.
 */
#ifndef KBENCH_SORT_EARLY_CUH
#define KBENCH_SORT_EARLY_CUH

#include <stdint.h>

#if defined(__CUDACC__)
/* ---- the primitives on the GPU ---------------------------------------------- */
#define OE_FN __device__ __forceinline__

extern __shared__ uint32_t oe_dyn_smem[];

OE_FN uint32_t *oe_smem() { return oe_dyn_smem; }
OE_FN void oe_sync() { __syncthreads(); }
OE_FN uint32_t oe_ballot(bool p) { return __ballot_sync(0xffffffffu, p); }
OE_FN uint32_t oe_shfl(uint32_t v, unsigned src) { return __shfl_sync(0xffffffffu, v, src); }
OE_FN uint32_t oe_shfl_up(uint32_t v, unsigned d) { return __shfl_up_sync(0xffffffffu, v, d); }
OE_FN uint32_t oe_match_any(uint32_t v) { return __match_any_sync(0xffffffffu, v); }
OE_FN uint32_t oe_popc(uint32_t v) { return (uint32_t)__popc(v); }
OE_FN uint32_t oe_clz(uint32_t v) { return (uint32_t)__clz(v); }
/* Byte `pos` (0..3) of v, as a number 0..255 (one PRMT). */
OE_FN uint32_t oe_byte(uint32_t v, uint32_t pos) { return __byte_perm(v, 0u, 0x4440u | pos); }
OE_FN uint32_t oe_atomic_add(uint32_t *p, uint32_t v) { return atomicAdd(p, v); }
/* Status words: single-copy-atomic 64-bit accesses at GPU scope.  The word
   carries the flag and the count together, so no other data needs ordering
   with it: relaxed is enough.  The asm is volatile with a memory clobber so
   that the compiler neither hoists the load out of the spin loop nor moves
   other memory accesses across it. */
OE_FN unsigned long long oe_ld_relaxed(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
OE_FN void oe_st_relaxed(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}
OE_FN void oe_fence() { __threadfence(); }
/* A load that bypasses L1 (the value was produced by other blocks' atomics). */
OE_FN uint32_t oe_ldcg(const uint32_t *p) { return __ldcg(p); }
OE_FN uint4 oe_ld4(const uint4 *p) { return *p; }
/* The pass plan: written by the histogram kernel, read-only for a pass
   kernel's whole run, so through the read-only (non-coherent) path: after
   the first block of an SM, an L1 hit. */
OE_FN uint32_t oe_ld_plan(const uint32_t *p) { return __ldg(p); }
/* A buffer's address as bits through the global window and back
   (oe_buf_put / oe_buf_get with GLOBAL): the compiler then knows the
   pointer is global memory's. */
OE_FN unsigned long long oe_global_bits(const uint32_t *p) { return __cvta_generic_to_global(p); }
OE_FN uint32_t *oe_global_ptr(unsigned long long b)
{
    return static_cast<uint32_t *>(__cvta_global_to_generic((size_t)b));
}

#elif defined(SORT_OE_HOST_MODEL)
/* The CPU model (tests/simt.h) has defined the same names. */
#define OE_FN inline
#else
#error "sort_early.cuh: compile with nvcc, or define the primitives (tests/simt.h) first"
#endif

/* ---- shapes ------------------------------------------------------------------- */

/* A pass's tile: NT threads, IT keys each, HW: group digits with
   __match_any_sync instead of 8 ballots; MINB: blocks per SM asked of the
   compiler (it caps registers at 65536 / (NT * MINB)). */
template <int NT_, int IT_, bool HW_, int MINB_> struct oe_cfg {
    static const int NT = NT_, IT = IT_, NW = NT_ / 32, TILE = NT_ * IT_, MINB = MINB_;
    static const bool HW = HW_;
    static_assert(NT_ % 32 == 0 && NT_ >= 256, "one thread per digit: at least 256 threads");
};

/* How a pass of pairs moves the values (the VM template argument).
   OE_VALS_STAGED: loaded after the keys are ranked and staged beside them
   (a second stage), both written out from there in one loop.
   OE_VALS_HOLD: the keys go out first and the values after them through
   the keys' stage (half the shared memory): loaded before the look-back and
   held in registers across it (their latency hidden by its wait), each
   key's stage position kept as two 16-bit positions a register. */
enum oe_vals_mode { OE_VALS_STAGED = 0, OE_VALS_HOLD = 1 };

/* Shared memory of a pass, in 32-bit words: per-warp digit counters, then
   dbase, then scratch (warp totals of the scan, the tile number), then the
   staged keys and, for pairs in OE_VALS_STAGED, the staged values. */
template <class C, bool PAIRS, int VM = OE_VALS_STAGED> struct oe_smem_layout {
    static const int WHIST = 0;
    static const int DBASE = C::NW * 256;
    static const int MISC = DBASE + 256;
    static const int MISC_WORDS = 32; /* warp totals, then OE_MISC_* */
    static const int KEYS = MISC + MISC_WORDS;
    static const int VALS = KEYS + C::TILE;
    static const int WORDS = VALS + (PAIRS && VM == OE_VALS_STAGED ? C::TILE : 0);
    static_assert(C::TILE <= 65536, "OE_VALS_HOLD: 16-bit stage positions");
};

/* Words of a pass's scratch past the warp totals (at most 16 warps): the
   tile number, the plan word, and the four buffers it names (keys and
   values read, keys and values written: two words each, 8-byte aligned),
   which a thread reads from here where it needs one (oe_buf_get) instead
   of keeping the chosen pointers in registers across the tile's barriers
   (with them, the shapes at their register caps spilled). */
const int OE_MISC_TILE = 16, OE_MISC_PLAN = 17;
const int OE_MISC_KIN = 18, OE_MISC_VIN = 20, OE_MISC_KOUT = 22, OE_MISC_VOUT = 24;

/* The form of those pointers, per pass kernel, as measured (H200,
   2026-11-28, one call, cub-radix beside each, sort/RESULTS.md).  Made
   from plain bits, a pointer is generic: its accesses may alias shared
   memory, so the compiler keeps them in order with the shared ones.
   That costs onesweep-early's staged pairs 10-19% (their values are
   loaded between shared stores, and so one at a time), so those take the
   global form (oe_global_ptr).  Keys alone and the held values ran 3-6%
   faster in the generic form than in the global one (2^26 u32 keys 1.323
   against 1.398 ms, f32 1.342 against 1.378; held pairs 2.028 against
   2.118), so they keep it; why the order helps them was not found (no
   SASS was read). */
template <bool PAIRS, int VM> struct oe_buf_form {
    static const bool GLOBAL = PAIRS && VM == OE_VALS_STAGED;
};
template <bool GLOBAL> OE_FN void oe_buf_put(uint32_t *m, const uint32_t *p)
{
    unsigned long long v = GLOBAL ? oe_global_bits(p) : (unsigned long long)p;
    m[0] = (uint32_t)v;
    m[1] = (uint32_t)(v >> 32);
}
template <bool GLOBAL> OE_FN uint32_t *oe_buf_get(const uint32_t *m)
{
    unsigned long long v = (unsigned long long)m[0] | (unsigned long long)m[1] << 32;
    return GLOBAL ? oe_global_ptr(v) : (uint32_t *)v;
}

/* The histogram: 128 threads, 16 keys each per 2048-key tile.  Its shared
   counters come in P copies ("parts"): lane l adds to part l % P, so lanes
   of a warp that share a digit hit P different words (in P different
   banks) instead of one; that divides the serialization of same-address
   shared atomics by P when digits concentrate (f32's top byte, few distinct
   keys).  Counter (pos, d, part) is word (pos * 256 + d) * P + part; the
   ticket follows the 1024 * P counters. */
const int OE_HIST_THREADS = 128;
const int OE_HIST_TILE = OE_HIST_THREADS * 16;
template <int P> struct oe_hist_smem {
    static_assert(P == 1 || P == 2 || P == 4 || P == 8, "parts: a power of two, at most 8");
    static const int TICKET = 1024 * P;
    static const int FULL = TICKET + 1; /* the last block: 4 words, a digit holds all keys */
    static const int WORDS = FULL + 4;
};
/* Its buffer (32-bit words): counts[4][256], starts[4][256], the ticket of
   the histogram blocks, one tile counter per pass, padding, then the pass
   plan (one word per pass, oe_plan_word).  Zeroed per run (a zero plan
   word skips its pass: an output nothing wrote fails verification). */
const int OE_BUF_COUNTS = 0, OE_BUF_STARTS = 1024, OE_BUF_TICKET = 2048, OE_BUF_TILES = 2049;
const int OE_BUF_PLAN = 2056;
const int OE_BUF_WORDS = 2064;

const unsigned long long OE_FLAG_AGG = 1ull << 32, OE_FLAG_PRE = 2ull << 32;

OE_FN unsigned long long oe_word(uint32_t epoch, unsigned long long flag, uint32_t count)
{
    return ((unsigned long long)epoch << 34) | flag | count;
}

/* Keys and their digits.
 *
 * Integers: the digits are those of b ^ flip (0 for u32, the sign bit for
 * i32), sort.h's sort_ord; keys move as they are.
 *
 * f32: sort_ord (-0 mapped to +0, then negatives flipped entirely and
 * positives' sign bit set) costs four instructions a digit, and a pass
 * takes a key's digit three times (count, rank, scatter): measured on an
 * H200, that made every f32 pass about 7% slower than a u32 pass.  So f32
 * keys travel between passes in a flipped form, s = fwd(b) (negatives
 * flipped entirely, positives' sign bit set: a bijection, so -0, which
 * becomes 0x7fffffff, stays apart from +0, 0x80000000), pass 0 flipping
 * them once as it loads them and pass 3 flipping them back once as it
 * writes them (oe_key_mode).  The digits are those of
 * rk(s) = s - (s >> 31): the identity below 0x80000000 and one less from
 * there, so -0 and +0 both become 0x7fffffff, and everything else stays
 * strictly in sort_ord's order (NaN, which is outside the order, aside).
 * Sorting by rk(fwd(b)) is therefore sorting by sort_ord with -0 equal to
 * +0, and the histogram counts the same digits.  rk is two instructions.
 */
enum oe_key_mode {
    OE_KEY_INT = 0,      /* integer keys, as they are */
    OE_KEY_F32_IN = 1,   /* f32: loads raw floats, writes the flipped form (first pass) */
    OE_KEY_F32_MID = 2,  /* f32: flipped form in and out (the passes between) */
    OE_KEY_F32_OUT = 3,  /* f32: flipped form in, raw floats out (last pass) */
    OE_KEY_F32_INOUT = 4 /* f32: raw in, raw out (the one pass the plan keeps) */
};
/* Which passes run (and so which flips) is the plan's (oe_plan_word):
   the first pass that runs flips in, the last flips back. */
OE_FN bool oe_km_loads_raw(int km) { return km == OE_KEY_F32_IN || km == OE_KEY_F32_INOUT; }
OE_FN bool oe_km_writes_raw(int km) { return km == OE_KEY_F32_OUT || km == OE_KEY_F32_INOUT; }
OE_FN uint32_t oe_f32_fwd(uint32_t b) { return b ^ ((uint32_t)((int32_t)b >> 31) | 0x80000000u); }
OE_FN uint32_t oe_f32_back(uint32_t s)
{
    return s ^ ((uint32_t)((int32_t)~s >> 31) | 0x80000000u);
}
OE_FN uint32_t oe_f32_rk(uint32_t s) { return s - (s >> 31); }

/* The value whose digits are sorted, of a key as it is stored between
   passes in key mode KM (the f32 modes: the flipped form). */
template <int KM> OE_FN uint32_t oe_sort_value(uint32_t k, uint32_t flip)
{
    if (KM == OE_KEY_INT)
        return k ^ flip;
    return oe_f32_rk(k);
}

/* The same value, of a key as the caller gave it (the histogram). */
template <bool F32> OE_FN uint32_t oe_sort_value_raw(uint32_t b, uint32_t flip)
{
    if (F32)
        return oe_f32_rk(oe_f32_fwd(b));
    return b ^ flip;
}

/* Lanes of the warp whose d equals this lane's (d < 256): for each of the
   8 bits, the ballot of that bit, complemented in the lanes where it is 0,
   and the AND of the eight.  On the GPU it is written in PTX: the eight
   predicates come from one R2P and one test, each bit is a ballot and a
   predicated complement, and the AND of the eight takes four LOP3s, about
   22 instructions an item.  Written in C as `m &= bit ? v : ~v`, the
   compiler tested each bit twice (once for the ballot, once for a select)
   and ANDed one ballot at a time: about 55 instructions an item, on every
   key of every pass (SASS of the sm_90 build, 2026-11-23).  HW: the
   hardware's match.any instead. */
template <bool HW> OE_FN uint32_t oe_match(uint32_t d)
{
    if (HW)
        return oe_match_any(d);
#if defined(__CUDACC__)
    uint32_t m;
    asm("{\n\t"
        ".reg .pred p<8>;\n\t"
        ".reg .b32 t, v<8>;\n\t"
#define OE_MATCH_BIT(b, bit)                                                                 \
    "and.b32 t, %1, " #bit ";\n\t"                                                          \
    "setp.ne.u32 p" #b ", t, 0;\n\t"                                                        \
    "vote.sync.ballot.b32 v" #b ", p" #b ", 0xffffffff;\n\t"                               \
    "@!p" #b " not.b32 v" #b ", v" #b ";\n\t"
        OE_MATCH_BIT(0, 1) OE_MATCH_BIT(1, 2) OE_MATCH_BIT(2, 4) OE_MATCH_BIT(3, 8)
        OE_MATCH_BIT(4, 16) OE_MATCH_BIT(5, 32) OE_MATCH_BIT(6, 64) OE_MATCH_BIT(7, 128)
#undef OE_MATCH_BIT
        "lop3.b32 v0, v0, v1, v2, 0x80;\n\t"
        "lop3.b32 v3, v3, v4, v5, 0x80;\n\t"
        "lop3.b32 %0, v0, v3, v6, 0x80;\n\t"
        "and.b32 %0, %0, v7;\n\t"
        "}"
        : "=r"(m)
        : "r"(d));
    return m;
#else
    uint32_t m = 0xffffffffu;
    for (int b = 0; b < 8; b++) {
        bool bit = (d >> b) & 1u;
        uint32_t v = oe_ballot(bit);
        m &= bit ? v : ~v;
    }
    return m;
#endif
}

/* ---- the pass plan ---------------------------------------------------------------- */

/* A pass whose digit is the same for every key moves no key: a stable sort
   on a constant digit is the identity permutation.  So it need not run,
   and the keys stay where the pass before left them; the passes that run
   alternate between alt and out, counted back from the last one, which
   writes out; the first reads in, which is never written.  With no pass
   left (every key the same, or n = 1) the last launch copies in to out.
   CUB's onesweep decides per tile (a tile of one digit writes its keys
   without ranking them, but every pass still reads and writes every key);
   this decides per pass, once, on the device.

   One word per pass: its action (bits 0-1), the buffer it reads (2-3) and
   writes (4-5), and for f32 keys its key mode (6-8), from `live`, the
   passes whose digit is not constant (bit p for pass p). */
enum { OE_SKIP = 0, OE_SORT = 1, OE_COPY = 2 };
enum { OE_IN = 0, OE_ALT = 1, OE_OUT = 2 };
OE_FN uint32_t oe_plan_action(uint32_t w) { return w & 3u; }
OE_FN uint32_t oe_plan_src(uint32_t w) { return (w >> 2) & 3u; }
OE_FN uint32_t oe_plan_dst(uint32_t w) { return (w >> 4) & 3u; }
OE_FN int oe_plan_key_mode(uint32_t w) { return (int)((w >> 6) & 7u); }

OE_FN uint32_t oe_plan_word(uint32_t live, uint32_t p, bool f32)
{
    const uint32_t m = oe_popc(live & 15u);            /* passes that run */
    const uint32_t k = oe_popc(live & ((1u << p) - 1u)); /* of those, before p */
    if (m == 0)
        return p == 3 ? OE_COPY | OE_IN << 2 | OE_OUT << 4 | (f32 ? OE_KEY_F32_INOUT : 0) << 6
                      : (uint32_t)OE_SKIP;
    if (!((live >> p) & 1u))
        return OE_SKIP;
    /* the j-th pass that runs writes out when m - 1 - j is even */
    uint32_t dst = ((m - 1 - k) & 1u) ? OE_ALT : OE_OUT;
    uint32_t src = k == 0 ? OE_IN : ((m - k) & 1u) ? OE_ALT : OE_OUT;
    uint32_t km = OE_KEY_INT;
    if (f32)
        km = k == 0 ? (k == m - 1 ? OE_KEY_F32_INOUT : OE_KEY_F32_IN)
                    : (k == m - 1 ? OE_KEY_F32_OUT : OE_KEY_F32_MID);
    return OE_SORT | src << 2 | dst << 4 | km << 6;
}

/* ---- the histogram ---------------------------------------------------------------- */

struct oe_hist_args {
    const uint32_t *keys;
    uint32_t n;
    uint32_t flip;
    uint32_t *buf; /* OE_BUF_WORDS words, zeroed */
};

/* Adds the four digits of one ordered key to the shared counters. */
template <int P> OE_FN void oe_hist_add1(uint32_t *h, uint32_t o)
{
#pragma unroll
    for (uint32_t p = 0; p < 4; p++)
        oe_atomic_add(&h[(p * 256 + oe_byte(o, p)) * P], 1u);
}

template <bool F32, int P>
OE_FN void oe_hist_body(const oe_hist_args &a, unsigned t, unsigned block, unsigned grid)
{
    typedef oe_hist_smem<P> HS;
    uint32_t *hs = oe_smem(); /* [4][256][P] counters, then one word: the ticket */
    for (unsigned k = t; k < 1024u * P; k += OE_HIST_THREADS)
        hs[k] = 0;
    oe_sync();
    /* this lane's part: h[(pos * 256 + d) * P] is its counter of (pos, d) */
    uint32_t *h = hs + (t & (unsigned)(P - 1));
    const uint32_t tiles = a.n / OE_HIST_TILE;
    /* Whole tiles: four coalesced 16-byte loads per thread (the buffer is
       cudaMalloc'ed, hence 256-byte aligned, and a tile is 8 KiB). */
    for (uint32_t tile = block; tile < tiles; tile += grid) {
        const uint4 *p = reinterpret_cast<const uint4 *>(a.keys) + (size_t)tile * (OE_HIST_TILE / 4);
        uint32_t o[16];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            uint4 v = oe_ld4(p + q * OE_HIST_THREADS + t);
            o[4 * q + 0] = oe_sort_value_raw<F32>(v.x, a.flip);
            o[4 * q + 1] = oe_sort_value_raw<F32>(v.y, a.flip);
            o[4 * q + 2] = oe_sort_value_raw<F32>(v.z, a.flip);
            o[4 * q + 3] = oe_sort_value_raw<F32>(v.w, a.flip);
        }
        /* x has a 1 wherever some key differs from the first: a zero byte
           means all 16 keys share that digit. */
        uint32_t x = 0;
#pragma unroll
        for (int i = 1; i < 16; i++)
            x |= o[i] ^ o[0];
#pragma unroll
        for (uint32_t pos = 0; pos < 4; pos++) {
            uint32_t *hp = h + pos * 256 * P;
            if (oe_byte(x, pos) == 0) {
                oe_atomic_add(&hp[oe_byte(o[0], pos) * P], 16u);
            } else {
#pragma unroll
                for (int i = 0; i < 16; i++)
                    oe_atomic_add(&hp[oe_byte(o[i], pos) * P], 1u);
            }
        }
    }
    /* The keys past the last whole tile (fewer than 2048): the last block. */
    if (block == grid - 1)
        for (uint32_t i = tiles * OE_HIST_TILE + t; i < a.n; i += OE_HIST_THREADS)
            oe_hist_add1<P>(h, oe_sort_value_raw<F32>(a.keys[i], a.flip));
    oe_sync();
    for (unsigned k = t; k < 1024; k += OE_HIST_THREADS) {
        uint32_t c = 0;
#pragma unroll
        for (int q = 0; q < P; q++)
            c += hs[k * P + q];
        if (c)
            oe_atomic_add(&a.buf[OE_BUF_COUNTS + k], c);
    }
    /* The last block to get here sees every block's counts: each thread
       fences its own atomics before the barrier, and the ticket is taken
       after it. */
    oe_fence();
    oe_sync();
    if (t == 0)
        hs[HS::TICKET] = oe_atomic_add(&a.buf[OE_BUF_TICKET], 1u);
    oe_sync();
    if (hs[HS::TICKET] != grid - 1)
        return; /* the whole block: no barrier follows for it */
    oe_fence();
    /* From here on the first 1024 words hold the device-wide counts, one
       copy (the parts are no longer needed). */
    h = hs;
    for (unsigned k = t; k < 1024; k += OE_HIST_THREADS)
        h[k] = oe_ldcg(&a.buf[OE_BUF_COUNTS + k]);
    oe_sync();
    /* Warp w scans digit position w: lane l sums digits 8l .. 8l+7, the
       warp scans the 32 sums, each lane writes its 8 exclusive starts. */
    const unsigned lane = t & 31u, w = t >> 5;
    const uint32_t *c = h + w * 256 + lane * 8;
    uint32_t s = 0;
#pragma unroll
    for (int i = 0; i < 8; i++)
        s += c[i];
    uint32_t inc = s;
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        uint32_t y = oe_shfl_up(inc, d);
        if (lane >= d)
            inc += y;
    }
    uint32_t run = inc - s;
    uint32_t *start = a.buf + OE_BUF_STARTS + w * 256 + lane * 8;
    bool full = false; /* one of this lane's digits holds every key */
#pragma unroll
    for (int i = 0; i < 8; i++) {
        start[i] = run;
        run += c[i];
        full |= c[i] == a.n;
    }
    /* The plan: position w's pass runs unless one digit holds all n keys. */
    uint32_t any_full = oe_ballot(full);
    if (lane == 0)
        hs[HS::FULL + w] = any_full != 0;
    oe_sync();
    if (t < 4) {
        uint32_t live = 0;
        for (unsigned q = 0; q < 4; q++)
            live |= hs[HS::FULL + q] ? 0u : 1u << q;
        a.buf[OE_BUF_PLAN + t] = oe_plan_word(live, t, F32);
    }
}
static_assert(OE_HIST_THREADS == 128, "oe_hist_body: one warp per digit position");

/* ---- a pass ------------------------------------------------------------------------ */

struct oe_pass_args {
    const uint32_t *kin, *vin; /* the sort's input (OE_IN), never written */
    uint32_t *kalt, *valt;     /* OE_ALT */
    uint32_t *kout, *vout;     /* OE_OUT, the sort's output */
    const uint32_t *plan;      /* this pass's plan word (oe_plan_word) */
    uint32_t n;
    uint32_t pos;   /* digit position 0..3 (bits 8*pos .. 8*pos+7) */
    uint32_t flip;
    const uint32_t *gstart;      /* 256 exclusive starts of this position */
    unsigned long long *status;  /* tiles x 256 words of this pass */
    uint32_t *tile_counter;
    uint32_t epoch;              /* 1 .. 2^30-1 */
    uint32_t zero;               /* always 0: see oe_tile's ranking */
};

/* The buffers a pass's plan word w names: keys (V false) or values. */
template <bool V> OE_FN const uint32_t *oe_src(const oe_pass_args &a, uint32_t w)
{
    uint32_t b = oe_plan_src(w);
    if (V)
        return b == OE_IN ? a.vin : b == OE_ALT ? a.valt : a.vout;
    return b == OE_IN ? a.kin : b == OE_ALT ? a.kalt : a.kout;
}
template <bool V> OE_FN uint32_t *oe_dst(const oe_pass_args &a, uint32_t w)
{
    if (V)
        return oe_plan_dst(w) == OE_ALT ? a.valt : a.vout;
    return oe_plan_dst(w) == OE_ALT ? a.kalt : a.kout;
}

/* One tile; FULL: all TILE keys exist.  The last tile may be partial: its
   missing keys (positions tcount .. TILE-1 of the tile) are ranked as if
   their digit were 255.  Ranking is stable and they come after every real
   key in tile order, so they take the last tile-local slots, tcount ..
   TILE-1, which are never written out; digit 255's published count leaves
   them out, and no other digit's start moves (255 is the last digit).  So
   the partial tile runs the same code as a full one but for the loads, the
   digit of a missing key, that one count and the bound of the scatter. */
template <class C, int KM, bool PAIRS, bool FULL, int VM>
OE_FN void oe_tile(const oe_pass_args &a, unsigned t, uint32_t tile)
{
    /* the values through their own stage, or after the keys through theirs */
    const bool VSTAGE = PAIRS && VM == OE_VALS_STAGED, VHOLD = PAIRS && VM == OE_VALS_HOLD;
    const bool G = oe_buf_form<PAIRS, VM>::GLOBAL;
    typedef oe_smem_layout<C, PAIRS, VM> L;
    const int IT = C::IT, NW = C::NW;
    uint32_t *sm = oe_smem();
    uint32_t *whist = sm + L::WHIST, *dbase = sm + L::DBASE, *misc = sm + L::MISC;
    uint32_t *sk = sm + L::KEYS, *sv = sm + L::VALS;
    const unsigned lane = t & 31u, w = t >> 5;
    const uint32_t base = tile * (uint32_t)C::TILE; /* < n < 2^31 */
    const uint32_t tcount = FULL ? (uint32_t)C::TILE : a.n - base;
    const uint32_t wbase = base + w * 32u * IT; /* < n + TILE: no overflow */
    uint32_t *wh = whist + w * 256;

    /* 2. load and count.  In a partial tile, key j of this lane exists when
       32j + lane < rem (rem <= 0: none of the warp's). */
    const int32_t rem = FULL ? 0 : (int32_t)(a.n - wbase);
    /* Loads through one pointer and constant offsets: no index per item
       stays alive until the values are loaded. */
    const uint32_t *kp = oe_buf_get<G>(misc + OE_MISC_KIN) + wbase + lane;
    /* rank[]: each key's rank among the warp's keys of its digit, two
       16-bit ranks a word (a rank is below 32 * IT <= 2^16), so that a
       tile holds IT + IT / 2 words a thread across the barriers below
       instead of 2 * IT. */
    uint32_t key[IT], rank[(IT + 1) / 2];
#pragma unroll
    for (int j = 0; j < IT; j++)
        key[j] = (FULL || (int32_t)(32u * j + lane) < rem) ? kp[32 * j] : 0u;
    /* f32: the first pass that runs flips its raw keys in (the plan's key
       mode; a branch the whole block takes or skips); from here on, the
       flipped form */
    if (KM != OE_KEY_INT && oe_km_loads_raw(oe_plan_key_mode(misc[OE_MISC_PLAN]))) {
#pragma unroll
        for (int j = 0; j < IT; j++)
            key[j] = oe_f32_fwd(key[j]);
    }
    const uint32_t below = (1u << lane) - 1u;
#pragma unroll
    for (int j = 0; j < IT; j++) {
        uint32_t d = oe_byte(oe_sort_value<KM>(key[j], a.flip), a.pos);
        if (!FULL && (int32_t)(32u * j + lane) >= rem)
            d = 255u;
        uint32_t m = oe_match<C::HW>(d);
        /* The group's highest lane adds the group's size to the warp's
           count of d; the count before it is where the group starts among
           the warp's keys of d (items in order: stable), and each lane
           adds the group's lanes below it. */
        unsigned leader = 31u - oe_clz(m); /* m holds this lane: never 0 */
        uint32_t b = 0;
        if (lane == leader)
            b = oe_atomic_add(&wh[d], oe_popc(m));
        uint32_t r = oe_shfl(b, leader) + oe_popc(m & below);
        rank[j / 2] = (j & 1) ? rank[j / 2] | (r << 16) : r;
    }
    oe_sync();

    /* 3. per digit: warp offsets, early publication, tile-local start */
    uint32_t count = 0, inc = 0, local = 0;
    if (t < 256) {
        uint32_t total = 0; /* the missing keys included */
#pragma unroll
        for (int k = 0; k < NW; k++) {
            uint32_t c = whist[k * 256 + t];
            whist[k * 256 + t] = total;
            total += c;
        }
        count = total;
        if (!FULL && t == 255)
            count -= (uint32_t)C::TILE - tcount;
        oe_st_relaxed(&a.status[(size_t)tile * 256 + t],
                      oe_word(a.epoch, tile == 0 ? OE_FLAG_PRE : OE_FLAG_AGG, count));
        inc = total; /* warps 0..7 hold the 256 digits whole */
#pragma unroll
        for (unsigned d = 1; d < 32; d <<= 1) {
            uint32_t y = oe_shfl_up(inc, d);
            if (lane >= d)
                inc += y;
        }
        if (lane == 31)
            misc[w] = inc;
        inc -= total; /* exclusive within the warp */
    }
    oe_sync();
    if (t < 256) {
        local = inc; /* exclusive within the warp, then the warps before */
        for (unsigned k = 0; k < w; k++)
            local += misc[k];
#pragma unroll
        for (int k = 0; k < NW; k++)
            whist[k * 256 + t] += local;
    }
    oe_sync();

    /* 4. rank: a key's tile-local position is its warp's start of its
       digit plus its rank among the warp's keys of that digit.  The digit
       is computed again from the key XOR a.zero, which the compiler cannot
       know to be 0: otherwise it keeps the count phase's digits alive
       across the barriers, IT more registers, and spills them.  For the
       same reason each phase of a partial tile tells missing keys with its
       own form of rem. */
    uint32_t pos[IT];
#pragma unroll
    for (int j = 0; j < IT; j++) {
        uint32_t d = oe_byte(oe_sort_value<KM>(key[j] ^ a.zero, a.flip), a.pos);
        if (!FULL && (int32_t)(32u * j + lane) >= (int32_t)(rem + a.zero))
            d = 255u;
        pos[j] = wh[d] + ((rank[j / 2] >> (16 * (j & 1))) & 0xffffu);
        sk[pos[j]] = key[j]; /* stage (missing keys too: their slots are past tcount) */
    }

    /* 5. stage the values (OE_VALS_HOLD: load them), look back */
    /* OE_VALS_HOLD: each key's stage position, two 16-bit positions a
       word, for the values' round through the stage after the keys went
       out, and the values, in flight during the look-back. */
    uint32_t ppos[VHOLD ? (IT + 1) / 2 : 1], vreg[VHOLD ? IT : 1];
    if (VHOLD) {
        const uint32_t *vp = oe_buf_get<G>(misc + OE_MISC_VIN) + wbase + lane;
#pragma unroll
        for (int j = 0; j < IT; j++) {
            ppos[j / 2] = (j & 1) ? ppos[j / 2] | (pos[j] << 16) : pos[j];
            vreg[j] = (FULL || (int32_t)(32u * j + lane) < (int32_t)(rem ^ a.zero)) ? vp[32 * j]
                                                                                     : 0u;
        }
    }
    if (VSTAGE) {
        /* Values are loaded here, not with the keys, and staged before the
           look-back: holding them across it (or across the ranking) costs
           IT registers more than the shapes' register caps allow, and
           spills. */
        const uint32_t *vp = oe_buf_get<G>(misc + OE_MISC_VIN) + wbase + lane;
#pragma unroll
        for (int j = 0; j < IT; j++)
            sv[pos[j]] = (FULL || (int32_t)(32u * j + lane) < (int32_t)(rem ^ a.zero)) ? vp[32 * j]
                                                                                    : 0u;
    }
    if (t < 256) {
        uint32_t excl = 0;
        if (tile > 0) {
            uint32_t p = tile - 1;
            for (;;) {
                unsigned long long s = oe_ld_relaxed(&a.status[(size_t)p * 256 + t]);
                uint32_t hi = (uint32_t)(s >> 32);
                if ((hi >> 2) != a.epoch || (hi & 3u) == 0)
                    continue; /* not published in this run yet: read it again */
                excl += (uint32_t)s;
                if ((hi & 3u) == 2u || p == 0) /* tile 0 publishes a prefix */
                    break;
                p--;
            }
            oe_st_relaxed(&a.status[(size_t)tile * 256 + t],
                          oe_word(a.epoch, OE_FLAG_PRE, excl + count));
        }
        dbase[t] = a.gstart[t] + excl - local;
    }
    oe_sync();

    /* 6. scatter from the stage (OE_VALS_HOLD: keep each slot's digit,
       four 8-bit digits a word) */
    uint32_t sdig[VHOLD ? (IT + 3) / 4 : 1];
    uint32_t *kout = oe_buf_get<G>(misc + OE_MISC_KOUT);
    uint32_t *vout = PAIRS && !VHOLD ? oe_buf_get<G>(misc + OE_MISC_VOUT) : nullptr;
#pragma unroll
    for (int k = 0; k < IT; k++) {
        uint32_t i = (uint32_t)k * C::NT + t;
        if (VHOLD) { /* every slot holds a key, a missing one's too */
            uint32_t kb = sk[i];
            uint32_t d = oe_byte(oe_sort_value<KM>(kb, a.flip), a.pos);
            sdig[k / 4] = (k & 3) ? sdig[k / 4] | (d << (8 * (k & 3))) : d;
            if (FULL || i < tcount)
                kout[i + dbase[d]] = oe_km_writes_raw(KM) ? oe_f32_back(kb) : kb;
        } else if (FULL || i < tcount) {
            uint32_t kb = sk[i];
            uint32_t o = i + dbase[oe_byte(oe_sort_value<KM>(kb, a.flip), a.pos)];
            kout[o] = oe_km_writes_raw(KM) ? oe_f32_back(kb) : kb;
            if (PAIRS)
                vout[o] = sv[i];
        }
    }
    /* 7. the values through the keys' stage, once every key has been read
       from it (the barrier): slot i's value goes out where key i went. */
    if (VHOLD) {
        oe_sync();
#pragma unroll
        for (int j = 0; j < IT; j++)
            sk[(ppos[j / 2] >> (16 * (j & 1))) & 0xffffu] = vreg[j];
        oe_sync();
        uint32_t *hvout = oe_buf_get<G>(misc + OE_MISC_VOUT);
#pragma unroll
        for (int k = 0; k < IT; k++) {
            uint32_t i = (uint32_t)k * C::NT + t;
            if (FULL || i < tcount)
                hvout[i + dbase[(sdig[k / 4] >> (8 * (k & 3))) & 0xffu]] = sk[i];
        }
    }
}

/* One tile of a pass that runs, in key mode KM. */
template <class C, int KM, bool PAIRS, int VM>
OE_FN void oe_tile_any(const oe_pass_args &a, unsigned t, uint32_t tile)
{
    /* base + TILE < 2^31 + 2^16: no overflow */
    if (tile * (uint32_t)C::TILE + (uint32_t)C::TILE <= a.n)
        oe_tile<C, KM, PAIRS, true, VM>(a, t, tile);
    else
        oe_tile<C, KM, PAIRS, false, VM>(a, t, tile);
}

/* The plan's copy (no pass runs): the tile's keys and values, in to out,
   as they are (f32 keys too: no pass flipped them; oe_plan_word's copy
   always reads in and writes out).  Four loads of a thread are issued
   before their stores, so that they are in flight together; four, not
   all IT: the copy shares the kernel's register budget with the pass. */
template <class C, bool PAIRS>
OE_FN void oe_copy_tile(const oe_pass_args &a, unsigned t, uint32_t tile)
{
    const uint32_t base = tile * (uint32_t)C::TILE + t;
    for (int j0 = 0; j0 < C::IT; j0 += 4) {
        uint32_t k[4], v[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            uint32_t i = base + (uint32_t)(j0 + j) * C::NT;
            bool in = j0 + j < C::IT && i < a.n;
            k[j] = in ? a.kin[i] : 0u;
            v[j] = PAIRS && in ? a.vin[i] : 0u;
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            uint32_t i = base + (uint32_t)(j0 + j) * C::NT;
            if (j0 + j < C::IT && i < a.n) {
                a.kout[i] = k[j];
                if (PAIRS)
                    a.vout[i] = v[j];
            }
        }
    }
}

/* A pass: F32 keys run the key mode the plan names (oe_key_mode). */
template <class C, bool F32, bool PAIRS, int VM = OE_VALS_STAGED>
OE_FN void oe_pass_body(const oe_pass_args &a, unsigned t)
{
    const uint32_t w = oe_ld_plan(a.plan);
    const uint32_t act = oe_plan_action(w);
    if (act == OE_SKIP)
        return; /* the whole block: the digit is the same for every key */
    typedef oe_smem_layout<C, PAIRS, VM> L;
    const bool G = oe_buf_form<PAIRS, VM>::GLOBAL;
    uint32_t *sm = oe_smem();
    uint32_t *misc = sm + L::MISC;
    if (t == 0) {
        misc[OE_MISC_TILE] = oe_atomic_add(a.tile_counter, 1u);
        misc[OE_MISC_PLAN] = w;
        oe_buf_put<G>(misc + OE_MISC_KIN, oe_src<false>(a, w));
        oe_buf_put<G>(misc + OE_MISC_VIN, oe_src<true>(a, w));
        oe_buf_put<G>(misc + OE_MISC_KOUT, oe_dst<false>(a, w));
        oe_buf_put<G>(misc + OE_MISC_VOUT, oe_dst<true>(a, w));
    }
    for (unsigned k = t; k < (unsigned)C::NW * 256; k += C::NT)
        sm[L::WHIST + k] = 0;
    oe_sync();
    /* The plan word again from shared memory, not the register: a value
       kept across the barrier costs a register in every tile. */
    const uint32_t tile = misc[OE_MISC_TILE], plan = misc[OE_MISC_PLAN];
    if (oe_plan_action(plan) == OE_COPY) {
        oe_copy_tile<C, PAIRS>(a, t, tile);
        return;
    }
    if (!F32) {
        oe_tile_any<C, OE_KEY_INT, PAIRS, VM>(a, t, tile);
        return;
    }
    /* Two bodies: the last pass that runs writes raw floats (OUT, INOUT),
       the others the flipped form (IN, MID); the flip in is a branch
       inside (oe_tile). */
    if (oe_km_writes_raw(oe_plan_key_mode(plan)))
        oe_tile_any<C, OE_KEY_F32_OUT, PAIRS, VM>(a, t, tile);
    else
        oe_tile_any<C, OE_KEY_F32_MID, PAIRS, VM>(a, t, tile);
}

#endif
