/*
 * sort.c -- the sort family: n keys (u32, i32, f32), alone or with u32
 * values, sorted from the tutorial's odd-even transposition kernel to a
 * onesweep radix sort, beside CUB and Thrust.
 *
 * This file holds the descriptor (its variants are the rows of
 * sort_variants.def), plan(), the inputs of each distribution, the
 * reference, the two CPU variants and verify().  The kernels are in
 * sort_kernels.cu, the library calls in sort_lib.cu; buffers, CUDA checks,
 * threads and input fills come from the kit.  Without a GPU
 * (host->stream == NULL) no CUDA function is called here.
 *
 * The key order (sort.h, sort_ord): integers by value; floats by value with
 * -0 equal to +0, -inf first and +inf last; NaN is never generated.  Values,
 * when present, are the original indices 0 .. n-1.
 *
 * Verification is exact (README.md): position by position the output's key
 * must equal the reference's under the key order; for f32 the output must
 * hold as many -0 as the input (the one pair of bit patterns the order does
 * not tell apart), so together the output is the input's keys, permuted and
 * sorted.  Stable variants must match the reference bit for bit.  For pairs
 * every value must be an index below n, seen once, whose input key has the
 * output key's exact bits; a stable variant's values must increase within a
 * run of equal keys.  The error is the number of positions that break any
 * rule; the tolerance is 0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "sort.h"

/* ---- the descriptor ------------------------------------------------------ */

static const char *const key_choices[] = {"u32", "i32", "f32"};
static const char *const values_choices[] = {"none", "u32"};
static const char *const dist_choices[] = {"uniform",     "permutation", "sorted",
                                           "reversed",    "nearly-sorted", "few-unique",
                                           "all-equal",   "special"};
_Static_assert(sizeof dist_choices / sizeof dist_choices[0] == SORT_N_DISTS, "one name per dist");
static const char *const tile_choices[] = {"auto",   "384x20", "384x23", "512x16",
                                           "256x24", "384x20-match", "256x20", "256x18",
                                           "384x16", "384x21"};
_Static_assert(sizeof tile_choices / sizeof tile_choices[0] == SORT_N_TILES, "one name per tile");
static const char *const hist_choices[] = {"auto", "1", "4", "8"};
_Static_assert(sizeof hist_choices / sizeof hist_choices[0] == SORT_N_HISTS, "one name per hist");

static const kb_param params[SORT_N_PARAMS] = {
    [SORT_P_N] = {.name = "n", .type = KB_PARAM_SIZE, .def = "2^20", .min = 1,
                  .max = (double)SORT_MAX_N, .help = "number of keys (1 .. 2^31-1)"},
    [SORT_P_KEY] = {.name = "key", .type = KB_PARAM_ENUM, .def = "u32", KB_CHOICES(key_choices),
                    .help = "key type: u32, i32 or f32 (floats: -0 equals +0, no NaN)"},
    [SORT_P_VALUES] = {.name = "values", .type = KB_PARAM_ENUM, .def = "none",
                       KB_CHOICES(values_choices),
                       .help = "none: keys only; u32: key-value pairs, the value being the "
                               "key's original index"},
    [SORT_P_DIST] = {.name = "dist", .type = KB_PARAM_ENUM, .def = "uniform",
                     KB_CHOICES(dist_choices),
                     .help = "uniform (random bits; f32 in [-1, 1)), permutation (0..n-1 "
                             "shuffled), sorted, reversed, nearly-sorted (n/50 random swaps of a "
                             "sorted input), few-unique (16 keys), all-equal, special (f32 only: "
                             "+-0, subnormals, +-inf, extremes among random bits)"},
    [SORT_P_TILE] = {.name = "tile", .type = KB_PARAM_ENUM, .def = "auto",
                     KB_CHOICES(tile_choices),
                     .help = "onesweep-early's and onesweep-split-hold's tile, threads x keys per "
                             "thread: auto (by device, sort.h's table: keys 256x24; pairs on an "
                             "H100 384x21 with the values held over the look-back, elsewhere "
                             "onesweep-early 384x20 and onesweep-split-hold 384x21), 384x20, "
                             "384x23, 512x16, 256x24, 256x20, 256x18, 384x16, 384x21, or "
                             "384x20-match (__match_any_sync instead of ballots); the other "
                             "variants ignore it"},
    [SORT_P_HIST] = {.name = "hist", .type = KB_PARAM_ENUM, .def = "auto",
                     KB_CHOICES(hist_choices),
                     .help = "onesweep-early's histogram: copies of its shared counters per "
                             "block, lane l adding to copy l % hist: auto (1), 1, 4 or 8; the "
                             "other variants ignore it"},
};

static int run_cpu_qsort(sort_state *s, const sort_impl *impl, kb_host *host);
static int run_cpu_radix(sort_state *s, const sort_impl *impl, kb_host *host);

/* Every variant reads n, key, values and dist; only onesweep-early reads
   tile and hist (U_TILE), so a sweep over them runs the others once. */
#define U_ALL                                                                                 \
    (KB_USES(SORT_P_N) | KB_USES(SORT_P_KEY) | KB_USES(SORT_P_VALUES) | KB_USES(SORT_P_DIST))
#define U_TILE (U_ALL | KB_USES(SORT_P_TILE) | KB_USES(SORT_P_HIST))

/* The table (sort_variants.def, rows SORT_VARIANT): variants[], impls[],
   KBK_N_VARIANTS and the guards (kbench/kit_family.h). */
#define SORT_VARIANT KBK_ROW
#define KBK_FAMILY_NAME "sort"
#define KBK_FAMILY_IMPL sort_impl
#define KBK_FAMILY_DEF "sort_variants.def"
#include <kbench/kit_family.h>

KBK_FAMILY_PLUGIN(sort,
                  "sort n keys (u32, i32, f32) or key-value pairs: odd-even transposition, LSD "
                  "radix, onesweep, CUB and Thrust",
                  "keys")

/* ---- plan ----------------------------------------------------------------- */

/* A library variant's temporary storage (kb_work.variant_device_bytes):
   CUB's radix sort without a DoubleBuffer and its merge sort's copy keep
   an alternate of the keys and of the values, thrust's sort the same
   through its allocator; the bound is two such copies plus
   SORT_LIB_SLACK for their histograms, look-back and partition state.
   Only a size query on the device could tell the exact figure, which
   plan() may not make: setup() warns when a library asks for more. */
#define SORT_LIB_SLACK (64ull << 20)

static uint64_t lib_bound(uint64_t n, int pairs)
{
    return n * 4 * 2 * (pairs ? 2 : 1) + SORT_LIB_SLACK;
}

/* The device memory of what a variant's row needs beyond the buffers every
   GPU run shares (the inputs, the outputs and the alternates). */
static uint64_t needs_bytes(uint32_t needs, uint64_t n, int tile, int pairs)
{
    uint64_t b = 0;
    if (needs & SORT_NEEDS_RADIX)
        b += sort_ceil_div(n, SORT_RADIX_TILE) * 256 * 4 + 256 * 4;
    if (needs & SORT_NEEDS_ONESWEEP)
        b += (1024 + 4) * 4 + sort_os_status_bytes(n);
    if (needs & SORT_NEEDS_EARLY)
        b += SORT_EARLY_BUF_BYTES + sort_early_status_bytes(n, tile, pairs, SORT_PART_ANY);
    if (needs & SORT_NEEDS_LIB)
        b += lib_bound(n, pairs);
    return b;
}

static int check_params(const kb_value *p, kb_host *host)
{
    uint64_t n = p[SORT_P_N].u;
    if (n < 1 || n > SORT_MAX_N)
        return host->fail(host, KB_EINVAL, "sort: n = %llu is outside 1 .. 2^31-1",
                          (unsigned long long)n);
    if (p[SORT_P_TILE].i < 0 || p[SORT_P_TILE].i >= SORT_N_TILES)
        return host->fail(host, KB_EINVAL, "sort: tile = %lld is not one of the %d shapes",
                          (long long)p[SORT_P_TILE].i, SORT_N_TILES);
    if (p[SORT_P_HIST].i < 0 || p[SORT_P_HIST].i >= SORT_N_HISTS)
        return host->fail(host, KB_EINVAL, "sort: hist = %lld is not one of the %d choices",
                          (long long)p[SORT_P_HIST].i, SORT_N_HISTS);
    if (p[SORT_P_DIST].i == SORT_SPECIAL && p[SORT_P_KEY].i != SORT_F32)
        return host->fail(host, KB_EINVAL,
                          "sort: dist = special (signed zeros, subnormals, infinities) needs "
                          "key = f32, not key = %s",
                          key_choices[p[SORT_P_KEY].i]);
    return KB_OK;
}

static int sort_plan(const kb_value *p, kb_work *out, kb_host *host)
{
    int rc = check_params(p, host);
    if (rc)
        return rc;
    uint64_t n = p[SORT_P_N].u;
    uint64_t words = p[SORT_P_VALUES].i == SORT_PAIRS ? 2 : 1; /* 32-bit words per item */
    out->bytes_read = n * 4 * words;
    out->bytes_written = n * 4 * words;
    out->flops = 0;
    out->items = n;
    /* Host: inputs, outputs (keys and values each), the reference, 2n words
       of scratch. */
    out->host_bytes = n * 4 * 7;
    /* Device: inputs, outputs and alternates of keys (and values), shared
       by the GPU variants; then what each variant's row adds (needs_bytes):
       classic radix counts, onesweep's and onesweep-early's status, a
       library's temporary storage. */
    int pairs = p[SORT_P_VALUES].i == SORT_PAIRS;
    out->device_bytes = n * 4 * 3 * words;
    for (uint32_t v = 0; v < KBK_N_VARIANTS; v++)
        kb_work_add_variant_bytes(out, host, v,
                                  needs_bytes(impls[v].needs, n, (int)p[SORT_P_TILE].i, pairs));
    return KB_OK;
}

/* ---- inputs and the reference -------------------------------------------- */

/* The stable LSD radix sort (four 8-bit digits of sort_ord), shared by the
   reference and the cpu-radix variant: keys (and vals, when not NULL) from
   kin/vin into kout/vout through tk/tv (n words each).  vin == NULL with
   vals requested means the identity 0 .. n-1.  Passes whose digit is the
   same for every key are skipped (they would copy). */
static void radix_host(const uint32_t *kin, const uint32_t *vin, uint32_t *kout, uint32_t *vout,
                       uint32_t *tk, uint32_t *tv, uint64_t n, int key)
{
    static const int shifts[4] = {0, 8, 16, 24};
    uint64_t hist[4][256];
    memset(hist, 0, sizeof hist);
    int with_vals = vout != NULL;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t o = sort_ord(kin[i], key);
        hist[0][o & 255]++;
        hist[1][(o >> 8) & 255]++;
        hist[2][(o >> 16) & 255]++;
        hist[3][o >> 24]++;
    }
    /* The passes that do something; the last writes kout/vout. */
    int live[4], nlive = 0;
    for (int d = 0; d < 4; d++) {
        int one = 0;
        for (int b = 0; b < 256; b++)
            if (hist[d][b] == n)
                one = 1;
        if (!one)
            live[nlive++] = d;
    }
    /* Pass k reads from src, writes to dst; arrange so the last pass lands in
       kout: with an odd number of live passes start into kout. */
    const uint32_t *sk = kin, *sv = vin;
    uint32_t *bufk[2] = {kout, tk}, *bufv[2] = {vout, tv};
    int to = (nlive % 2 == 1) ? 0 : 1;
    for (int k = 0; k < nlive; k++) {
        int d = live[k];
        uint64_t pos[256], run = 0;
        for (int b = 0; b < 256; b++) {
            pos[b] = run;
            run += hist[d][b];
        }
        uint32_t *dk = bufk[to], *dv = bufv[to];
        for (uint64_t i = 0; i < n; i++) {
            uint32_t kbits = sk[i];
            uint32_t b = (sort_ord(kbits, key) >> shifts[d]) & 255;
            uint64_t at = pos[b]++;
            dk[at] = kbits;
            if (with_vals)
                dv[at] = sv ? sv[i] : (uint32_t)i;
        }
        sk = dk;
        sv = dv;
        to ^= 1;
    }
    if (nlive == 0) { /* every digit the same: the keys are all equal */
        memcpy(kout, kin, n * 4);
        if (with_vals)
            for (uint64_t i = 0; i < n; i++)
                vout[i] = vin ? vin[i] : (uint32_t)i;
    }
}

typedef struct gen_job {
    sort_state *s;
    uint64_t seed;
    uint32_t table[16];
} gen_job;

/* Random bits of a finite float (exponent 255 lowered to 254). */
static uint32_t finite_bits(uint64_t r)
{
    uint32_t b = (uint32_t)r;
    if (((b >> 23) & 255) == 255)
        b &= ~(1u << 23);
    return b;
}

static uint32_t f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static int gen_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    (void)worker;
    gen_job *j = ctx;
    sort_state *s = j->s;
    uint32_t *k = s->keys_in.host;
    for (uint64_t i = begin; i < end; i++) {
        uint64_t r = kb_rand_u64(j->seed, 1, i);
        switch (s->dist) {
        case SORT_FEW_UNIQUE:
            k[i] = j->table[r & 15];
            break;
        case SORT_ALL_EQUAL:
            k[i] = j->table[0];
            break;
        case SORT_SPECIAL: {
            static const uint32_t fixed[10] = {0x00000000u, 0x80000000u, 0x7f800000u,
                                               0xff800000u, 0x7f7fffffu, 0xff7fffffu,
                                               0x00800000u, 0x80800000u, 0x00000001u,
                                               0x80000001u};
            uint32_t c = (uint32_t)(r >> 59); /* 0 .. 31 */
            if (c < 10)
                k[i] = fixed[c];
            else if (c < 14) /* a subnormal of either sign */
                k[i] = (((uint32_t)r & 0x007fffffu) | 1u) | (c & 1 ? 0x80000000u : 0);
            else
                k[i] = finite_bits(r);
            break;
        }
        default: /* uniform, and the start of sorted, reversed, nearly-sorted */
            if (s->key == SORT_F32) {
                double u = kb_rand_uniform(j->seed, 1, i, -1.0, 1.0);
                float f = (float)u;
                if (f == 0.0f)
                    f = 0x1p-30f;
                k[i] = f32_bits(f);
            } else {
                k[i] = (uint32_t)r;
            }
        }
    }
    return KB_OK;
}

static int fill_inputs(sort_state *s, kb_host *host)
{
    uint64_t n = s->n;
    uint32_t *k = s->keys_in.host;
    gen_job j = {.s = s, .seed = host->seed};
    for (int t = 0; t < 16; t++) {
        uint64_t r = kb_rand_u64(host->seed, 2, (uint64_t)t);
        uint32_t b;
        if (s->key == SORT_F32) {
            float f = (float)kb_rand_uniform(host->seed, 2, (uint64_t)t, -1.0, 1.0);
            b = f32_bits(f == 0.0f ? 0.5f : f);
        } else {
            b = (uint32_t)r;
            if (b == 0 || b == 0xffffffffu) /* never zero, never the poison */
                b = 0x5a5a5a5au + (uint32_t)t;
        }
        j.table[t] = b;
    }
    if (s->dist == SORT_PERMUTATION) {
        /* The tutorial's input: 0 .. n-1 shuffled (Fisher-Yates on the
           seeded generator); f32 holds them exactly up to 2^24. */
        for (uint64_t i = 0; i < n; i++)
            k[i] = (uint32_t)i;
        for (uint64_t i = n - 1; i > 0; i--) {
            uint64_t r = kb_rand_u64(host->seed, 3, i) % (i + 1);
            uint32_t t = k[i];
            k[i] = k[r];
            k[r] = t;
        }
        if (s->key == SORT_F32)
            for (uint64_t i = 0; i < n; i++)
                k[i] = f32_bits((float)k[i]);
        return KB_OK;
    }
    int rc = kbk_parallel_for(host, n, gen_range, &j);
    if (rc)
        return rc;
    if (s->dist == SORT_SORTED || s->dist == SORT_REVERSED || s->dist == SORT_NEARLY) {
        uint32_t *tk = s->ref; /* free until the reference is computed */
        radix_host(k, NULL, tk, NULL, s->scratch, NULL, n, s->key);
        if (s->dist == SORT_REVERSED)
            for (uint64_t i = 0; i < n; i++)
                k[i] = tk[n - 1 - i];
        else
            memcpy(k, tk, n * 4);
        if (s->dist == SORT_NEARLY) /* a few percent of the keys moved */
            for (uint64_t t = 0; t < n / 50; t++) {
                uint64_t a = kb_rand_u64(host->seed, 4, 2 * t) % n;
                uint64_t b = kb_rand_u64(host->seed, 4, 2 * t + 1) % n;
                uint32_t x = k[a];
                k[a] = k[b];
                k[b] = x;
            }
    }
    return KB_OK;
}

static int reference(sort_state *s)
{
    radix_host(s->keys_in.host, NULL, s->ref, NULL, s->scratch, NULL, s->n, s->key);
    s->neg_zeros = 0;
    if (s->key == SORT_F32) {
        const uint32_t *k = s->keys_in.host;
        for (uint64_t i = 0; i < s->n; i++)
            s->neg_zeros += k[i] == 0x80000000u;
    }
    return KB_OK;
}

/* ---- setup and teardown --------------------------------------------------- */

/* The row of tile = auto's table (sort.h) for the device the run is on,
   said once in the log with what it picks. */
static int find_part(sort_state *s, kb_host *host)
{
    struct cudaDeviceProp prop;
    KBK_CUDA(host, cudaGetDeviceProperties(&prop, host->device));
    prop.name[sizeof prop.name - 1] = '\0';
    s->part = sort_part_of(prop.name);
    if (s->tile == SORT_TILE_AUTO && (s->needs & SORT_NEEDS_EARLY)) {
        static const char *const part_names[SORT_N_PARTS] = {"other parts", "H100", "H200"};
        sort_early_pick e = sort_early_pick_of(s->tile, s->pairs, s->part, 0);
        sort_early_pick h = sort_early_pick_of(s->tile, s->pairs, s->part, 1);
        host->log(host, KB_LOG_INFO,
                  "sort: tile = auto on %s (the %s row): onesweep-early %s%s, "
                  "onesweep-split-hold %s%s",
                  prop.name, part_names[s->part], tile_choices[e.shape],
                  e.hold ? " with held values" : "", tile_choices[h.shape],
                  h.hold ? " with held values" : "");
    }
    return KB_OK;
}

static int setup_device(sort_state *s, kb_host *host)
{
    cudaStream_t st = (cudaStream_t)host->stream;
    size_t words = (size_t)s->n * 4;
    int rc;
    if ((rc = find_part(s, host)))
        return rc;
    if (s->needs & SORT_NEEDS_ALT) {
        if ((rc = kbk_buf_alloc(host, &s->keys_alt, words, KBK_DEVICE)) ||
            (s->pairs && (rc = kbk_buf_alloc(host, &s->vals_alt, words, KBK_DEVICE))))
            return rc;
    }
    if (s->needs & SORT_NEEDS_RADIX) {
        size_t tiles = (size_t)sort_ceil_div(s->n, SORT_RADIX_TILE);
        if ((rc = kbk_buf_alloc(host, &s->radix_counts, tiles * 256 * 4 + 256 * 4, KBK_DEVICE)))
            return rc;
    }
    if (s->needs & SORT_NEEDS_ONESWEEP) {
        if ((rc = kbk_buf_alloc(host, &s->os_hist, (1024 + 4) * 4, KBK_DEVICE)) ||
            (rc = kbk_buf_alloc(host, &s->os_status, (size_t)sort_os_status_bytes(s->n),
                                KBK_DEVICE)))
            return rc;
        /* Status words carry the run's epoch: zero once, never again. */
        KBK_CUDA(host, cudaMemsetAsync(s->os_status.dev, 0, s->os_status.bytes, st));
        s->os_epoch = 0;
    }
    if (s->needs & SORT_NEEDS_EARLY) {
        if ((rc = kbk_buf_alloc(host, &s->oe_buf, SORT_EARLY_BUF_BYTES, KBK_DEVICE)) ||
            (rc = kbk_buf_alloc(host, &s->oe_status,
                                (size_t)sort_early_status_bytes(s->n, s->tile, s->pairs, s->part),
                                KBK_DEVICE)) ||
            (rc = sort_early_setup(s, host)))
            return rc;
        /* As for onesweep: zeroed once, epochs tell the runs apart. */
        KBK_CUDA(host, cudaMemsetAsync(s->oe_status.dev, 0, s->oe_status.bytes, st));
        s->oe_epoch = 0;
    }
    if ((rc = kbk_buf_upload(host, &s->keys_in)) ||
        (s->pairs && (rc = kbk_buf_upload(host, &s->vals_in))))
        return rc;
    KBK_CUDA(host, cudaStreamSynchronize(st));
    if (s->needs & SORT_NEEDS_EARLY) {
        /* One untimed run, for the same reason as onesweep's below. */
        if ((rc = sort_run_early(s, NULL, host)))
            return rc;
        KBK_CUDA(host, cudaStreamSynchronize(st));
    }
    if (s->needs & SORT_NEEDS_ONESWEEP) {
        /* One untimed run, so that even the first checked run meets status
           words left by an earlier run (of another epoch) and must ignore
           them. */
        if ((rc = sort_run_onesweep(s, NULL, host)))
            return rc;
        KBK_CUDA(host, cudaStreamSynchronize(st));
    }
    if (s->needs & SORT_NEEDS_LIB) {
        if ((rc = sort_lib_setup(s, impls, KBK_N_VARIANTS, host)))
            return rc;
        static const char *const lib_names[] = {"", "cub radix sort", "cub merge sort",
                                                "thrust sort"};
        for (int lib = SORT_LIB_CUB_RADIX; lib <= SORT_LIB_THRUST; lib++)
            if (s->lib_temp_bytes[lib] > lib_bound(s->n, s->pairs))
                host->log(host, KB_LOG_WARN,
                          "sort: %s asks for %zu bytes of temporary storage, more than the "
                          "%llu that plan() stated",
                          lib_names[lib], s->lib_temp_bytes[lib],
                          (unsigned long long)lib_bound(s->n, s->pairs));
    }
    return KB_OK;
}

static int sort_setup(const kb_value *p, uint64_t vmask, kb_host *host, void **state)
{
    int rc = check_params(p, host);
    if (rc)
        return rc;
    sort_state *s = calloc(1, sizeof *s);
    if (!s)
        return host->fail(host, KB_ENOMEM, "sort: out of host memory for the state");
    *state = s;
    s->n = p[SORT_P_N].u;
    s->key = (int)p[SORT_P_KEY].i;
    s->pairs = p[SORT_P_VALUES].i == SORT_PAIRS;
    s->dist = (int)p[SORT_P_DIST].i;
    s->tile = (int)p[SORT_P_TILE].i;
    s->hist = (int)p[SORT_P_HIST].i;
    s->gpu = host->stream != NULL;
    s->sm_count = host->sm_count > 0 ? host->sm_count : 132;
    s->variants = vmask;
    s->needs = kbk_needs_of(vmask);
    size_t words = (size_t)s->n * 4;
    if ((rc = kbk_buf_alloc(host, &s->keys_in, words, KBK_BOTH)) ||
        (rc = kbk_buf_alloc(host, &s->keys_out, words, KBK_BOTH)))
        return rc;
    if (s->pairs && ((rc = kbk_buf_alloc(host, &s->vals_in, words, KBK_BOTH)) ||
                     (rc = kbk_buf_alloc(host, &s->vals_out, words, KBK_BOTH))))
        return rc;
    if (!(s->ref = malloc(words)) || !(s->scratch = malloc(2 * words)))
        return host->fail(host, KB_ENOMEM,
                          "sort: no host memory for the reference and scratch (%zu bytes)",
                          3 * words);
    if ((rc = fill_inputs(s, host)) || (rc = reference(s)))
        return rc;
    if (s->pairs) {
        uint32_t *v = s->vals_in.host;
        for (uint64_t i = 0; i < s->n; i++)
            v[i] = (uint32_t)i;
    }
    if (s->gpu)
        return setup_device(s, host);
    return KB_OK;
}

static void sort_teardown(void *state, kb_host *host)
{
    sort_state *s = state;
    if (!s)
        return;
    kbk_buf *bufs[] = {&s->keys_in,  &s->vals_in,      &s->keys_out, &s->vals_out,
                       &s->keys_alt, &s->vals_alt,     &s->radix_counts,
                       &s->os_hist,  &s->os_status,    &s->oe_buf,
                       &s->oe_status, &s->lib_temp};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        kbk_buf_free(host, bufs[k]);
    free(s->ref);
    free(s->scratch);
    free(s);
}

/* ---- prepare, upload, download -------------------------------------------- */

static int sort_prepare(void *state, uint32_t v, kb_host *host)
{
    sort_state *s = state;
    int rc = kbk_variant_ok(host, v);
    if (rc)
        return rc;
    if (impls[v].max_n && s->n > impls[v].max_n)
        return host->fail(host, KB_EUNSUPPORTED,
                          "sort: %s sorts at most n = %llu keys (%s), not n = %llu",
                          variants[v].name, (unsigned long long)impls[v].max_n,
                          impls[v].limit, (unsigned long long)s->n);
    /* 0xff bytes: NaN for f32, -1 for i32, the largest u32; a variant that
       writes nothing fails (the reference is never all 0xffffffff). */
    if ((rc = kbk_buf_poison(host, &s->keys_out, 0xff)) ||
        (s->pairs && (rc = kbk_buf_poison(host, &s->vals_out, 0xff))))
        return rc;
    if (s->gpu)
        KBK_CUDA(host, cudaStreamSynchronize((cudaStream_t)host->stream));
    return KB_OK;
}

static int sort_upload(void *state, uint32_t v, kb_host *host)
{
    sort_state *s = state;
    if (!s->gpu || !kbk_is_cuda(v))
        return KB_OK;
    int rc = kbk_buf_upload(host, &s->keys_in);
    if (!rc && s->pairs)
        rc = kbk_buf_upload(host, &s->vals_in);
    return rc;
}

static int sort_download(void *state, uint32_t v, kb_host *host)
{
    sort_state *s = state;
    if (!s->gpu || !kbk_is_cuda(v))
        return KB_OK;
    int rc = kbk_buf_download(host, &s->keys_out);
    if (!rc && s->pairs)
        rc = kbk_buf_download(host, &s->vals_out);
    return rc;
}

/* ---- the CPU variants ------------------------------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}
static int cmp_i32(const void *a, const void *b)
{
    uint32_t x = sort_ord(*(const uint32_t *)a, SORT_I32);
    uint32_t y = sort_ord(*(const uint32_t *)b, SORT_I32);
    return (x > y) - (x < y);
}
static int cmp_f32(const void *a, const void *b)
{
    uint32_t x = sort_ord(*(const uint32_t *)a, SORT_F32);
    uint32_t y = sort_ord(*(const uint32_t *)b, SORT_F32);
    return (x > y) - (x < y);
}
/* Pairs: (ordered key, original index) packed in 64 bits, so the
   comparison is one integer comparison and the result is stable. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int run_cpu_qsort(sort_state *s, const sort_impl *impl, kb_host *host)
{
    (void)impl;
    (void)host;
    uint64_t n = s->n;
    const uint32_t *k = s->keys_in.host;
    uint32_t *ko = s->keys_out.host;
    if (!s->pairs) {
        static int (*const cmp[3])(const void *, const void *) = {cmp_u32, cmp_i32, cmp_f32};
        memcpy(ko, k, n * 4);
        qsort(ko, n, 4, cmp[s->key]);
        return KB_OK;
    }
    uint64_t *p = (uint64_t *)s->scratch; /* 2n words */
    const uint32_t *vi = s->vals_in.host;
    uint32_t *vo = s->vals_out.host;
    for (uint64_t i = 0; i < n; i++)
        p[i] = (uint64_t)sort_ord(k[i], s->key) << 32 | vi[i];
    qsort(p, n, 8, cmp_u64);
    for (uint64_t i = 0; i < n; i++) {
        uint32_t idx = (uint32_t)p[i];
        vo[i] = idx;
        ko[i] = k[idx]; /* the original bits (-0 stays -0) */
    }
    return KB_OK;
}

static int run_cpu_radix(sort_state *s, const sort_impl *impl, kb_host *host)
{
    (void)impl;
    (void)host;
    uint32_t *tk = s->scratch, *tv = s->scratch + s->n;
    radix_host(s->keys_in.host, s->pairs ? s->vals_in.host : NULL, s->keys_out.host,
               s->pairs ? s->vals_out.host : NULL, tk, tv, s->n, s->key);
    return KB_OK;
}

static int sort_run(void *state, uint32_t v, kb_host *host)
{
    sort_state *s = state;
    int rc = kbk_variant_runs(host, v);
    if (rc)
        return rc;
    return impls[v].run(s, &impls[v], host);
}

/* ---- verification ----------------------------------------------------------- */

static int sort_verify(void *state, uint32_t v, kb_check *out, kb_host *host)
{
    sort_state *s = state;
    int rc = kbk_variant_ok(host, v);
    if (rc)
        return rc;
    uint64_t n = s->n, bad = 0, first = n;
    const uint32_t *ki = s->keys_in.host, *ko = s->keys_out.host, *ref = s->ref;
    int key = s->key, stable = impls[v].stable;
    uint64_t negz = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t o = ko[i];
        negz += key == SORT_F32 && o == 0x80000000u;
        int wrong = sort_ord(o, key) != sort_ord(ref[i], key) || (stable && o != ref[i]);
        /* a NaN pattern never matches: the reference holds none */
        if (key == SORT_F32 && (o & 0x7f800000u) == 0x7f800000u && (o & 0x007fffffu))
            wrong = 1;
        if (wrong) {
            bad++;
            if (first == n)
                first = i;
        }
    }
    bad += negz > s->neg_zeros ? negz - s->neg_zeros : s->neg_zeros - negz;
    if (s->pairs) {
        uint8_t *seen = calloc((size_t)(n + 7) / 8, 1);
        if (!seen)
            return host->fail(host, KB_ENOMEM, "sort: no host memory for verify's bitmap");
        const uint32_t *vo = s->vals_out.host;
        for (uint64_t i = 0; i < n; i++) {
            uint32_t x = vo[i];
            int wrong = x >= n || (seen[x >> 3] >> (x & 7) & 1) || ki[x] != ko[i];
            if (!wrong)
                seen[x >> 3] |= (uint8_t)(1u << (x & 7));
            if (!wrong && stable && i > 0 &&
                sort_ord(ko[i], key) == sort_ord(ko[i - 1], key) && x <= vo[i - 1])
                wrong = 1;
            if (wrong) {
                bad++;
                if (first > i)
                    first = i;
            }
        }
        free(seen);
    }
    if (bad)
        host->log(host, KB_LOG_DEBUG, "sort: %s: %llu positions wrong, the first at %llu",
                  variants[v].name, (unsigned long long)bad, (unsigned long long)first);
    out->measure = "mismatches";
    out->error = (double)bad;
    out->tolerance = 0;
    out->passed = bad == 0;
    return KB_OK;
}

/* ---- the test extension ------------------------------------------------------ */

static const uint32_t *ext_keys_in(const void *st) { return ((const sort_state *)st)->keys_in.host; }
static uint32_t *ext_keys_out(void *st) { return ((sort_state *)st)->keys_out.host; }
static uint32_t *ext_vals_out(void *st) { return ((sort_state *)st)->vals_out.host; }
static const uint32_t *ext_ref(const void *st) { return ((const sort_state *)st)->ref; }

static const sort_test_ext test_ext = {
    .size = sizeof(sort_test_ext),
    .keys_in = ext_keys_in,
    .keys_out = ext_keys_out,
    .vals_out = ext_vals_out,
    .reference = ext_ref,
};

static const void *sort_extension(const char *name)
{
    return strcmp(name, SORT_TEST_EXTENSION) == 0 ? &test_ext : NULL;
}
