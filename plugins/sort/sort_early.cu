/*
 * sort_early.cu -- onesweep-early on the GPU: the kernels of sort_early.cuh
 * instantiated for each tile shape, key kind (integers, or f32, whose pass
 * kernel holds the four key modes of sort_early.cuh's oe_key_mode and runs
 * the one its plan word names) and value mode, and their launchers.
 *
 * One run: clear the 8 KiB buffer (counts, starts, ticket, tile counters,
 * plan), one histogram launch (which also scans and writes the pass plan),
 * then one pass launch per digit.  Every pass gets the three buffers (in,
 * alt, out) and its plan word, which says whether it runs and what it
 * reads and writes: in -> alt -> out -> alt -> out when every digit varies,
 * fewer passes when some digit is the same for every key (sort_early.cuh,
 * oe_plan_word); the input is never written, and no host decision waits
 * on the device.  The launchers only enqueue on host->stream and check
 * every call and launch.
 *
 * Shapes (sort.h, SORT_TILE_*; `tile` in an INI file): threads x keys per
 * thread.  384x20 is CUB's choice for 32-bit keys on sm_90, 384x23 its
 * choice for pairs; auto takes 256x24 for keys and 384x23 for pairs, the
 * fastest in the H200 sweep (sort.h).  Blocks per SM asked
 * of the compiler: 2 (384 and 512 threads: registers capped at 85 and 64),
 * 3 for 256 threads (85).  Shared memory is dynamic (pairs need more than
 * the 48 KiB of a static array); setup raises each kernel's limit.
 */
#include <cuda_runtime.h>

#include <cstdint>

#include "sort.h"
#include "sort_early.cuh"

namespace {

typedef oe_cfg<384, 20, false, 3> cfg_384x20;
typedef oe_cfg<384, 23, false, 2> cfg_384x23;
typedef oe_cfg<512, 16, false, 2> cfg_512x16;
typedef oe_cfg<256, 24, false, 4> cfg_256x24;
typedef oe_cfg<384, 20, true, 2> cfg_384x20_hw;
typedef oe_cfg<256, 20, false, 4> cfg_256x20;
typedef oe_cfg<256, 18, false, 4> cfg_256x18;
typedef oe_cfg<384, 16, false, 3> cfg_384x16;
typedef oe_cfg<384, 21, false, 2> cfg_384x21;

template <class C, bool F32, bool PAIRS, int VM>
__global__ void __launch_bounds__(C::NT, C::MINB) oe_pass(oe_pass_args a)
{
    oe_pass_body<C, F32, PAIRS, VM>(a, threadIdx.x);
}

/* The shape and values' mode a variant runs on the state's part: `tile`,
   or auto's row (sort.h, sort_early_pick_of; impl NULL: setup's untimed
   run, onesweep-early). */
inline sort_early_pick pick_of(const sort_state *s, const sort_impl *impl)
{
    int hold_variant = impl && (impl->needs & SORT_NEEDS_VALS_HOLD);
    return sort_early_pick_of(s->tile, s->pairs, s->part, hold_variant);
}

template <bool F32, int P>
__global__ void __launch_bounds__(OE_HIST_THREADS) oe_hist(oe_hist_args a)
{
    oe_hist_body<F32, P>(a, threadIdx.x, blockIdx.x, gridDim.x);
}

/* Histogram blocks per SM: 12 x 128 threads (CUB's grid on sm_90) while
   their counters fit: P = 8 parts take 32 KiB a block, so 6 of them. */
template <int P> unsigned hist_blocks_per_sm() { return P >= 8 ? 6u : 12u; }
template <int P> size_t hist_smem() { return (size_t)oe_hist_smem<P>::WORDS * sizeof(uint32_t); }

/* The histogram's parts for `hist` (sort.h, sort_early_hist_parts). */
template <bool F32, int P> int hist_attrs(kb_host *host)
{
    KBK_CUDA(host, cudaFuncSetAttribute(oe_hist<F32, P>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)hist_smem<P>()));
    KBK_CUDA(host, cudaFuncSetAttribute(oe_hist<F32, P>,
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        (int)cudaSharedmemCarveoutMaxShared));
    return KB_OK;
}

template <bool F32, int P>
int hist_launch(const sort_state *s, const oe_hist_args &h, cudaStream_t st, kb_host *host)
{
    uint64_t hblocks = h.n / OE_HIST_TILE;
    uint64_t cap = (uint64_t)s->sm_count * hist_blocks_per_sm<P>();
    if (hblocks > cap)
        hblocks = cap;
    if (hblocks < 1)
        hblocks = 1;
    oe_hist<F32, P><<<(unsigned)hblocks, OE_HIST_THREADS, hist_smem<P>(), st>>>(h);
    KBK_CUDA_LAUNCH(host, "oe_hist");
    return KB_OK;
}

template <bool F32> int hist_setup(const sort_state *s, kb_host *host)
{
    switch (sort_early_hist_parts(s->hist)) {
    case 1: return hist_attrs<F32, 1>(host);
    case 4: return hist_attrs<F32, 4>(host);
    case 8: return hist_attrs<F32, 8>(host);
    default: return host->fail(host, KB_EINVAL, "sort: onesweep-early: no histogram %d", s->hist);
    }
}

template <bool F32>
int hist_run(const sort_state *s, const oe_hist_args &h, cudaStream_t st, kb_host *host)
{
    switch (sort_early_hist_parts(s->hist)) {
    case 1: return hist_launch<F32, 1>(s, h, st, host);
    case 4: return hist_launch<F32, 4>(s, h, st, host);
    case 8: return hist_launch<F32, 8>(s, h, st, host);
    default: return host->fail(host, KB_EINVAL, "sort: onesweep-early: no histogram %d", s->hist);
    }
}

template <class C, bool PAIRS, int VM> size_t pass_smem()
{
    return (size_t)oe_smem_layout<C, PAIRS, VM>::WORDS * sizeof(uint32_t);
}

/* Lets the pass kernel of this shape take its dynamic shared memory, and
   prefers shared memory over L1 (the pass streams; its blocks per SM need
   up to 3 x 74 KiB: 384x20 pairs). */
template <class C, bool F32, bool PAIRS, int VM> int pass_attrs(kb_host *host)
{
    KBK_CUDA(host, cudaFuncSetAttribute(oe_pass<C, F32, PAIRS, VM>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)pass_smem<C, PAIRS, VM>()));
    KBK_CUDA(host, cudaFuncSetAttribute(oe_pass<C, F32, PAIRS, VM>,
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        (int)cudaSharedmemCarveoutMaxShared));
    return KB_OK;
}

/* The histogram and the pass kernel of one pick (hold: the values held
   across the look-back; keys alone have one pass kernel). */
template <class C, bool F32, bool PAIRS> int attrs(sort_state *s, int hold, kb_host *host)
{
    int rc = hist_setup<F32>(s, host);
    if (rc)
        return rc;
    if (PAIRS && hold)
        return pass_attrs<C, F32, PAIRS, OE_VALS_HOLD>(host);
    return pass_attrs<C, F32, PAIRS, OE_VALS_STAGED>(host);
}

template <class C, bool F32, bool PAIRS, int VM>
int pass_launch(const oe_pass_args &a, uint32_t tiles, cudaStream_t st, kb_host *host)
{
    oe_pass<C, F32, PAIRS, VM><<<tiles, C::NT, pass_smem<C, PAIRS, VM>(), st>>>(a);
    KBK_CUDA_LAUNCH(host, "oe_pass");
    return KB_OK;
}

template <class C, bool F32, bool PAIRS>
int launch(sort_state *s, const sort_impl *impl, kb_host *host)
{
    cudaStream_t st = (cudaStream_t)host->stream;
    uint32_t n = (uint32_t)s->n;
    uint32_t tiles = (uint32_t)sort_ceil_div(n, (uint64_t)C::TILE);
    uint32_t *buf = (uint32_t *)s->oe_buf.dev;
    unsigned long long *status = (unsigned long long *)s->oe_status.dev;
    if (++s->oe_epoch >= (1u << 30))
        s->oe_epoch = 1;
    uint32_t flip = s->key == SORT_I32 ? 0x80000000u : 0u;
    KBK_CUDA(host, cudaMemsetAsync(buf, 0, OE_BUF_WORDS * sizeof(uint32_t), st));

    oe_hist_args h;
    h.keys = (const uint32_t *)s->keys_in.dev;
    h.n = n;
    h.flip = flip;
    h.buf = buf;
    int rc = hist_run<F32>(s, h, st, host);
    if (rc)
        return rc;

    const uint32_t *kin = (const uint32_t *)s->keys_in.dev, *vin = (const uint32_t *)s->vals_in.dev;
    uint32_t *ko = (uint32_t *)s->keys_out.dev, *vo = (uint32_t *)s->vals_out.dev;
    uint32_t *ka = (uint32_t *)s->keys_alt.dev, *va = (uint32_t *)s->vals_alt.dev;
    for (uint32_t p = 0; p < 4; p++) {
        oe_pass_args a;
        a.kin = kin; /* the pass's plan word says which of the three it reads and writes */
        a.vin = vin;
        a.kalt = ka;
        a.valt = va;
        a.kout = ko;
        a.vout = vo;
        a.plan = buf + OE_BUF_PLAN + p;
        a.n = n;
        a.pos = p;
        a.flip = flip;
        a.gstart = buf + OE_BUF_STARTS + 256 * p;
        a.status = status + (size_t)p * tiles * 256;
        a.tile_counter = buf + OE_BUF_TILES + p;
        a.epoch = s->oe_epoch;
        a.zero = 0;
        if (PAIRS && pick_of(s, impl).hold)
            rc = pass_launch<C, F32, PAIRS, OE_VALS_HOLD>(a, tiles, st, host);
        else
            rc = pass_launch<C, F32, PAIRS, OE_VALS_STAGED>(a, tiles, st, host);
        if (rc)
            return rc;
    }
    return KB_OK;
}

/* FN<shape, F32, PAIRS>(s, ARG, host) for the state's shape, key kind and
   value mode. */
#define OE_DISPATCH_KEYS(FN, C, s, arg, host)                                                  \
    do {                                                                                       \
        bool f32_ = (s)->key == SORT_F32;                                                      \
        if ((s)->pairs)                                                                        \
            return f32_ ? FN<C, true, true>((s), arg, (host))                                  \
                        : FN<C, false, true>((s), arg, (host));                                \
        return f32_ ? FN<C, true, false>((s), arg, (host)) : FN<C, false, false>((s), arg, (host)); \
    } while (0)

#define OE_DISPATCH(FN, shape, s, arg, host)                                                   \
    do {                                                                                       \
        switch (shape) {                                                                       \
        case SORT_TILE_384X20: OE_DISPATCH_KEYS(FN, cfg_384x20, s, arg, host);                 \
        case SORT_TILE_384X23: OE_DISPATCH_KEYS(FN, cfg_384x23, s, arg, host);                 \
        case SORT_TILE_512X16: OE_DISPATCH_KEYS(FN, cfg_512x16, s, arg, host);                 \
        case SORT_TILE_256X24: OE_DISPATCH_KEYS(FN, cfg_256x24, s, arg, host);                 \
        case SORT_TILE_384X20_MATCH: OE_DISPATCH_KEYS(FN, cfg_384x20_hw, s, arg, host);        \
        case SORT_TILE_256X20: OE_DISPATCH_KEYS(FN, cfg_256x20, s, arg, host);                 \
        case SORT_TILE_256X18: OE_DISPATCH_KEYS(FN, cfg_256x18, s, arg, host);                 \
        case SORT_TILE_384X16: OE_DISPATCH_KEYS(FN, cfg_384x16, s, arg, host);                 \
        case SORT_TILE_384X21: OE_DISPATCH_KEYS(FN, cfg_384x21, s, arg, host);                 \
        default:                                                                               \
            return (host)->fail((host), KB_EINVAL, "sort: onesweep-early: no tile shape %d",   \
                                (s)->tile);                                                    \
        }                                                                                      \
    } while (0)

static_assert(OE_BUF_WORDS * sizeof(uint32_t) == SORT_EARLY_BUF_BYTES, "sort.h's buffer size");

/* The table in sort.h and the instantiations here must agree. */
static_assert(cfg_384x20::TILE == 384 * 20 && cfg_384x23::TILE == 384 * 23 &&
                  cfg_512x16::TILE == 512 * 16 && cfg_256x24::TILE == 256 * 24 &&
                  cfg_384x20_hw::TILE == 384 * 20,
              "tile shapes");

} // namespace

namespace {
int setup_pick(sort_state *s, sort_early_pick p, kb_host *host)
{
    OE_DISPATCH(attrs, p.shape, s, p.hold, host);
}
} // namespace

/* The kernels of onesweep-early's pick (setup's untimed run is its), and
   of onesweep-split-hold's when the state runs it and it differs. */
extern "C" int sort_early_setup(sort_state *s, kb_host *host)
{
    sort_early_pick e = pick_of(s, NULL);
    int rc = setup_pick(s, e, host);
    if (rc == KB_OK && (s->needs & SORT_NEEDS_VALS_HOLD)) {
        sort_early_pick h = sort_early_pick_of(s->tile, s->pairs, s->part, 1);
        if (h.shape != e.shape || (s->pairs && h.hold != e.hold))
            rc = setup_pick(s, h, host);
    }
    return rc;
}

extern "C" int sort_run_early(sort_state *s, const sort_impl *impl, kb_host *host)
{
    OE_DISPATCH(launch, pick_of(s, impl).shape, s, impl, host);
}
