/*
 * histo.c -- the second walk-through of docs/plugins.md: a kbench plugin
 * whose reference variant is a library call, built outside the tree on the
 * plugin kit (kbench/kit.h).
 *
 * It counts n keys into `bins` bins.  The keys are skewed (Zipf with
 * exponent `skew` over [0, bins), kbk_fill_zipf_u32): key 0 is the most
 * frequent, so the hot bins are where atomics contend.  Three variants:
 *   cpu     each thread counts its chunk into a private histogram, then the
 *           private histograms are added in thread order;
 *   shared  (CUDA) each block counts into a histogram in shared memory and
 *           adds it to the global one: integer atomics;
 *   cub     (CUDA) cub::DeviceHistogram::HistogramEven, its temporary
 *           storage sized and allocated in setup.
 * histo_kernel.cu holds the CUDA code.
 *
 * Verify.  Counts are integers, and integer addition is exact and
 * associative: every variant, in any order of its atomics, must give the
 * reference counts exactly (bit for bit), so the check is an exact
 * comparison with tolerance 0, and `shared` is not KB_VARIANT_NONDETERM.
 * Inputs.  Key 0 is a valid key, and the most frequent one; no input hides
 * a wrong answer: prepare() poisons every count to 0xffffffff, which no
 * right count equals (there are fewer than 2^31 keys), so a bin a variant
 * leaves unwritten fails.
 */
#include <stdlib.h>
#include <string.h>

#include <kbench/kit.h>

/* The CUDA side, in histo_kernel.cu. */
int histo_cub_bytes(kb_host *host, const uint32_t *keys, uint32_t *counts, uint32_t bins,
                    uint64_t n, size_t *bytes);
int histo_cub(kb_host *host, void *temp, size_t bytes, const uint32_t *keys, uint32_t *counts,
              uint32_t bins, uint64_t n);
int histo_shared(kb_host *host, const uint32_t *keys, uint32_t *counts, uint32_t bins,
                 uint64_t n, int block);

enum { P_N, P_BINS, P_SKEW, P_BLOCK, P_COUNT };
enum { V_CPU, V_SHARED, V_CUB, V_COUNT };

static const kb_param params[P_COUNT] = {
    [P_N] = {.name = "n", .type = KB_PARAM_SIZE, .def = "1M", .min = 1, .max = 2147483647.0,
             .help = "number of keys (below 2^31: CUB counts them with an int)"},
    [P_BINS] = {.name = "bins", .type = KB_PARAM_INT, .def = "256", .min = 2, .max = 8192,
                .help = "number of bins; keys lie in [0, bins)"},
    [P_SKEW] = {.name = "skew", .type = KB_PARAM_FLOAT, .def = "1", .min = 0,
                .max = KBK_ZIPF_MAX_S,
                .help = "Zipf exponent of the keys: 0 uniform, 1 classic, 4 nearly all key 0"},
    [P_BLOCK] = {.name = "block", .type = KB_PARAM_INT, .def = "256", .min = 32, .max = 1024,
                 .help = "threads per block of the shared variant"},
};

#define U_DATA (KB_USES(P_N) | KB_USES(P_BINS) | KB_USES(P_SKEW))

static const kb_variant variants[V_COUNT] = {
    [V_CPU] = {.name = "cpu", .backend = KB_BACKEND_CPU, .uses = U_DATA,
               .summary = "a private histogram per thread, added in thread order"},
    [V_SHARED] = {.name = "shared", .backend = KB_BACKEND_CUDA,
                  .uses = U_DATA | KB_USES(P_BLOCK),
                  .summary = "a histogram per block in shared memory, integer atomics, then "
                             "added to the global one"},
    [V_CUB] = {.name = "cub", .backend = KB_BACKEND_CUDA, .uses = U_DATA,
               .flags = KB_VARIANT_LIBRARY,
               .summary = "the library: cub::DeviceHistogram::HistogramEven, temporary "
                          "storage allocated in setup"},
};

KBK_OPS(histo);

static const kb_plugin desc = {
    KB_PLUGIN_HEADER,
    .name = "histo",
    .summary = "a histogram of skewed keys, on the CPU, with shared-memory atomics and CUB",
    KB_PARAMS(params),
    KB_VARIANTS(variants),
    .item_name = "keys",
    .ops = &histo_ops,
};

KBK_EXPORT_ONE(desc)

typedef struct histo {
    uint64_t n;
    uint32_t bins;
    int block;
    int threads;       /* cpu_threads: one private histogram each       */
    kbk_buf keys;      /* n keys in [0, bins)                           */
    kbk_buf counts;    /* bins counts                                   */
    kbk_buf temp;      /* CUB's temporary storage (device only)         */
    uint32_t *want;    /* the reference counts                          */
    uint32_t *partial; /* cpu: threads x bins private counts            */
} histo;

static int threads_of(const kb_host *h)
{
    return h->cpu_threads > 0 ? h->cpu_threads : 1;
}

/* CUB's temporary storage, a bound: plan() may not ask CUB (a size query
   needs the device), so it states what CUB's documented layout allows.
   DeviceHistogram keeps one privatized histogram of `bins` 4-byte counters
   per thread block of its sweep, plus a small queue; it starts no more
   blocks than there are keys, nor more than fill the device (at most 32
   resident blocks per multiprocessor, 256 multiprocessors taken as the
   most any device has). */
static uint64_t histo_cub_bound(uint64_t n, uint64_t bins)
{
    uint64_t blocks = n < 32 * 256 ? n : 32 * 256;
    return 4 * bins * blocks + 4096;
}

static int histo_plan(const kb_value *p, kb_work *w, kb_host *h)
{
    uint64_t n = p[P_N].u, bins = (uint64_t)p[P_BINS].i;
    w->bytes_read = 4 * n;
    w->bytes_written = 4 * bins;
    w->flops = 0;
    w->items = n;
    w->host_bytes = 4 * n + 8 * bins + 4 * bins * (uint64_t)threads_of(h);
    /* Keys and counts, whatever runs; CUB's storage where cub runs. */
    w->device_bytes = 4 * n + 4 * bins;
    kb_work_add_variant_bytes(w, h, V_CUB, histo_cub_bound(n, bins));
    kb_work_set_peak(w, h, KB_PEAK_NONE); /* integer work: no FLOP ceiling */
    return KB_OK;
}

static int histo_setup(const kb_value *p, uint64_t vmask, kb_host *h, void **sp)
{
    histo *s = calloc(1, sizeof *s);
    *sp = s;
    if (!s)
        return h->fail(h, KB_ENOMEM, "histo: no memory for the state");
    s->n = p[P_N].u;
    s->bins = (uint32_t)p[P_BINS].i;
    s->block = (int)p[P_BLOCK].i;
    s->threads = threads_of(h);
    int rc;
    if ((rc = kbk_buf_alloc(h, &s->keys, s->n * sizeof(uint32_t), KBK_BOTH)) ||
        (rc = kbk_buf_alloc(h, &s->counts, s->bins * sizeof(uint32_t), KBK_BOTH)))
        return rc;
    s->want = calloc(s->bins, sizeof *s->want);
    s->partial = malloc((size_t)s->threads * s->bins * sizeof *s->partial);
    if (!s->want || !s->partial)
        return h->fail(h, KB_ENOMEM, "histo: no memory for the reference counts");
    if ((rc = kbk_fill_zipf_u32(h, s->keys.host, s->n, 0, s->bins, p[P_SKEW].f)))
        return rc;
    const uint32_t *keys = s->keys.host;
    for (uint64_t i = 0; i < s->n; i++)
        s->want[keys[i]]++;
    /* The inputs go to the device once; without a GPU this does nothing. */
    if ((rc = kbk_buf_upload(h, &s->keys)))
        return rc;
    /* CUB says how much temporary storage it needs when handed none; run()
       may not allocate, so it is allocated here, once. */
    if (vmask & KB_VARIANT_BIT(V_CUB)) {
        size_t bytes = 0;
        if ((rc = histo_cub_bytes(h, s->keys.dev, s->counts.dev, s->bins, s->n, &bytes)))
            return rc;
        if (bytes > histo_cub_bound(s->n, s->bins))
            h->log(h, KB_LOG_WARN, "histo: CUB asks for %zu bytes, more than plan() stated",
                   bytes);
        /* At least a byte: CUB takes a NULL storage pointer for a size query. */
        if ((rc = kbk_buf_alloc(h, &s->temp, bytes ? bytes : 1, KBK_DEVICE)))
            return rc;
    }
    return KB_OK;
}

static int histo_prepare(void *sp, uint32_t v, kb_host *h)
{
    histo *s = sp;
    return kbk_buf_poison(h, &s->counts, 0xff); /* every count 0xffffffff */
}

/* Called once before the checked run and, with include_copies, before
   every timed run: the keys are already on the device (setup) and no run
   changes them, so this copy is only there to be timed. */
static int histo_upload(void *sp, uint32_t v, kb_host *h)
{
    histo *s = sp;
    return v == V_CPU ? KB_OK : kbk_buf_upload(h, &s->keys);
}

typedef struct cpu_job {
    const uint32_t *keys;
    uint32_t *partial;
    uint32_t bins;
} cpu_job;

static int histo_cpu_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    const cpu_job *j = ctx;
    uint32_t *mine = j->partial + (size_t)worker * j->bins;
    for (uint64_t i = begin; i < end; i++)
        mine[j->keys[i]]++;
    return KB_OK;
}

static int histo_run(void *sp, uint32_t v, kb_host *h)
{
    histo *s = sp;
    if (v == V_SHARED)
        return histo_shared(h, s->keys.dev, s->counts.dev, s->bins, s->n, s->block);
    if (v == V_CUB)
        return histo_cub(h, s->temp.dev, s->temp.bytes, s->keys.dev, s->counts.dev, s->bins,
                         s->n);
    memset(s->partial, 0, (size_t)s->threads * s->bins * sizeof *s->partial);
    cpu_job j = {.keys = s->keys.host, .partial = s->partial, .bins = s->bins};
    int rc = kbk_parallel_for(h, s->n, histo_cpu_range, &j);
    if (rc)
        return rc;
    uint32_t *counts = s->counts.host;
    memcpy(counts, s->partial, s->bins * sizeof *counts);
    for (int t = 1; t < s->threads; t++)
        for (uint32_t b = 0; b < s->bins; b++)
            counts[b] += s->partial[(size_t)t * s->bins + b];
    return KB_OK;
}

static int histo_download(void *sp, uint32_t v, kb_host *h)
{
    histo *s = sp;
    return v == V_CPU ? KB_OK : kbk_buf_download(h, &s->counts);
}

static int histo_verify(void *sp, uint32_t v, kb_check *c, kb_host *h)
{
    histo *s = sp;
    uint64_t first = 0;
    kbk_check_exact(c, s->counts.host, s->want, s->bins, sizeof(uint32_t), &first);
    if (!c->passed) {
        const uint32_t *got = s->counts.host;
        h->log(h, KB_LOG_DEBUG, "histo: %s: bin %llu holds %u, want %u", variants[v].name,
               (unsigned long long)first, got[first], s->want[first]);
    }
    return KB_OK; /* a wrong answer is not an error */
}

static void histo_teardown(void *sp, kb_host *h)
{
    histo *s = sp;
    if (!s)
        return;
    kbk_buf_free(h, &s->keys);
    kbk_buf_free(h, &s->counts);
    kbk_buf_free(h, &s->temp);
    free(s->want);
    free(s->partial);
    free(s);
}

static const void *histo_extension(const char *name)
{
    return NULL;
}
