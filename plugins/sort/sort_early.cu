/*
 * sort_early.cu -- onesweep-early on the GPU: the kernels of sort_early.cuh
 * instantiated for each tile shape, key mode (sort_early.cuh, oe_key_mode:
 * integers one, f32 three: first, middle and last pass) and value mode,
 * and their launchers.
 *
 * One run: clear the 8 KiB buffer (counts, starts, ticket, tile counters),
 * one histogram launch (which also scans), then one pass launch per digit,
 * in -> alt -> out -> alt -> out, so the input is never written.  The
 * launchers only enqueue on host->stream and check every call and launch.
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

template <class C, int KM, bool PAIRS, int VM>
__global__ void __launch_bounds__(C::NT, C::MINB) oe_pass(oe_pass_args a)
{
    oe_pass_body<C, KM, PAIRS, VM>(a, threadIdx.x);
}

/* The values' mode of a variant (sort.h, SORT_NEEDS_VALS_*; impl NULL:
   setup's untimed run, onesweep-early's kernels). */
inline int vals_mode(const sort_impl *impl)
{
    if (impl && (impl->needs & SORT_NEEDS_VALS_HOLD))
        return OE_VALS_HOLD;
    return OE_VALS_STAGED;
}

/* The tile shape a variant runs in values' mode vm: `tile`, or its auto
   (sort.h: sort_early_hold_shape for onesweep-split-hold). */
inline int shape_of(const sort_state *s, int vm)
{
    return vm == OE_VALS_HOLD ? sort_early_hold_shape(s->tile, s->pairs)
                              : sort_early_shape(s->tile, s->pairs);
}

/* The key mode of pass p (sort_early.cuh, oe_key_mode). */
inline int key_mode(bool f32, uint32_t p)
{
    if (!f32)
        return OE_KEY_INT;
    return p == 0 ? OE_KEY_F32_IN : p == 3 ? OE_KEY_F32_OUT : OE_KEY_F32_MID;
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
template <class C, int KM, bool PAIRS, int VM> int pass_attrs(kb_host *host)
{
    KBK_CUDA(host, cudaFuncSetAttribute(oe_pass<C, KM, PAIRS, VM>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)pass_smem<C, PAIRS, VM>()));
    KBK_CUDA(host, cudaFuncSetAttribute(oe_pass<C, KM, PAIRS, VM>,
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        (int)cudaSharedmemCarveoutMaxShared));
    return KB_OK;
}

/* The pass kernels of one values' mode (the four key modes). */
template <class C, bool F32, bool PAIRS, int VM> int pass_attrs_vm(kb_host *host)
{
    int rc;
    if (!F32)
        return pass_attrs<C, OE_KEY_INT, PAIRS, VM>(host);
    if ((rc = pass_attrs<C, OE_KEY_F32_IN, PAIRS, VM>(host)) ||
        (rc = pass_attrs<C, OE_KEY_F32_MID, PAIRS, VM>(host)))
        return rc;
    return pass_attrs<C, OE_KEY_F32_OUT, PAIRS, VM>(host);
}

/* Every kernel the state's variants may launch: onesweep-early's always
   (setup's untimed run), the values' modes of the others when they run on
   pairs (keys alone, they run onesweep-early's kernels). */
template <class C, bool F32, bool PAIRS>
int attrs(sort_state *s, const sort_impl *impl, kb_host *host)
{
    (void)impl; /* every variant of the state: s->needs */
    int rc = hist_setup<F32>(s, host);
    if (rc || (rc = pass_attrs_vm<C, F32, PAIRS, OE_VALS_STAGED>(host)))
        return rc;
    if (PAIRS && (s->needs & SORT_NEEDS_VALS_HOLD) &&
        (rc = pass_attrs_vm<C, F32, PAIRS, OE_VALS_HOLD>(host)))
        return rc;
    return KB_OK;
}

template <class C, int KM, bool PAIRS, int VM>
int pass_launch(const oe_pass_args &a, uint32_t tiles, cudaStream_t st, kb_host *host)
{
    oe_pass<C, KM, PAIRS, VM><<<tiles, C::NT, pass_smem<C, PAIRS, VM>(), st>>>(a);
    KBK_CUDA_LAUNCH(host, "oe_pass");
    return KB_OK;
}

/* Pass p's kernel in key mode km and values' mode VM. */
template <class C, bool PAIRS, int VM>
int pass_launch_km(int km, const oe_pass_args &a, uint32_t tiles, cudaStream_t st,
                   kb_host *host)
{
    switch (km) {
    case OE_KEY_INT: return pass_launch<C, OE_KEY_INT, PAIRS, VM>(a, tiles, st, host);
    case OE_KEY_F32_IN: return pass_launch<C, OE_KEY_F32_IN, PAIRS, VM>(a, tiles, st, host);
    case OE_KEY_F32_MID: return pass_launch<C, OE_KEY_F32_MID, PAIRS, VM>(a, tiles, st, host);
    default: return pass_launch<C, OE_KEY_F32_OUT, PAIRS, VM>(a, tiles, st, host);
    }
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
        a.kin = p == 0 ? kin : (p & 1) ? ka : ko;
        a.vin = p == 0 ? vin : (p & 1) ? va : vo;
        a.kout = (p & 1) ? ko : ka;
        a.vout = (p & 1) ? vo : va;
        a.n = n;
        a.pos = p;
        a.flip = flip;
        a.gstart = buf + OE_BUF_STARTS + 256 * p;
        a.status = status + (size_t)p * tiles * 256;
        a.tile_counter = buf + OE_BUF_TILES + p;
        a.epoch = s->oe_epoch;
        a.zero = 0;
        int km = key_mode(F32, p), vm = PAIRS ? vals_mode(impl) : OE_VALS_STAGED;
        if (vm == OE_VALS_HOLD)
            rc = pass_launch_km<C, PAIRS, OE_VALS_HOLD>(km, a, tiles, st, host);
        else
            rc = pass_launch_km<C, PAIRS, OE_VALS_STAGED>(km, a, tiles, st, host);
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

/* The table in sort.h and the instantiations here must agree. */
static_assert(cfg_384x20::TILE == 384 * 20 && cfg_384x23::TILE == 384 * 23 &&
                  cfg_512x16::TILE == 512 * 16 && cfg_256x24::TILE == 256 * 24 &&
                  cfg_384x20_hw::TILE == 384 * 20,
              "tile shapes");

} // namespace

namespace {
int setup_shape(sort_state *s, int shape, kb_host *host)
{
    OE_DISPATCH(attrs, shape, s, (const sort_impl *)NULL, host);
}
} // namespace

extern "C" int sort_early_setup(sort_state *s, kb_host *host)
{
    int shape = sort_early_shape(s->tile, s->pairs);
    int rc = setup_shape(s, shape, host);
    if (rc == KB_OK && (s->needs & SORT_NEEDS_VALS_HOLD) && shape_of(s, OE_VALS_HOLD) != shape)
        rc = setup_shape(s, shape_of(s, OE_VALS_HOLD), host);
    return rc;
}

extern "C" int sort_run_early(sort_state *s, const sort_impl *impl, kb_host *host)
{
    OE_DISPATCH(launch, shape_of(s, vals_mode(impl)), s, impl, host);
}
