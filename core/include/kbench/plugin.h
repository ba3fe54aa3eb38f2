/*
 * kbench/plugin.h -- the one header a kbench plugin includes.
 *
 * A plugin is a shared object that exports one C symbol, kbench_plugin(),
 * which returns a constant descriptor (struct kb_plugin) for each index it
 * holds and NULL past the last.  The descriptor says what the plugin is
 * (name, summary), what it can run (variants), what it takes (parameters,
 * declared as data so that the host validates, sweeps and documents them
 * before any plugin code runs) and how to run it (struct kb_ops).
 *
 * Everything the plugin needs from the host (the CUDA stream, the seed for
 * its inputs, a logger, an error channel) arrives in a struct kb_host.  A
 * plugin never links against the kbench executable.
 *
 * Reading order: versions, parameters, variants, work, host services, the
 * lifecycle (struct kb_ops), the descriptor, then small inline helpers.
 *
 * Compatibility: the host refuses a plugin whose abi_major differs from its
 * own.  Minor versions only add fields at the end of structures, and every
 * structure that can grow carries its size, so a newer host reads an older
 * plugin.
 */
#ifndef KBENCH_PLUGIN_H
#define KBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KB_ABI_MAJOR 1
#define KB_ABI_MINOR 0

/* Marks the entry symbol as the one thing a plugin exports. */
#if defined(__GNUC__)
#define KB_EXPORT __attribute__((visibility("default")))
#else
#define KB_EXPORT
#endif

#if defined(__GNUC__)
#define KB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KB_PRINTF(f, a)
#endif

/* ------------------------------------------------------------------------
 * Return codes.  Every kb_ops function that can fail returns one of these;
 * on failure it first writes one sentence through kb_host.fail().
 * ---------------------------------------------------------------------- */
enum kb_status {
    KB_OK = 0,
    KB_EINVAL = 1,       /* the parameters make no sense together        */
    KB_ENOMEM = 2,       /* host or device allocation failed             */
    KB_ECUDA = 3,        /* a CUDA call or launch failed                 */
    KB_EUNSUPPORTED = 4, /* this variant cannot run this point (a limit) */
    KB_EFAIL = 5         /* anything else                                */
};

/* ------------------------------------------------------------------------
 * Parameters, declared as data.
 *
 * The host parses every value (INI file or default) according to its type,
 * checks it against [min, max] or the allowed choices, expands sweeps, and
 * hands the plugin one kb_value per declared parameter, in declaration
 * order.  So the plugin indexes values with its own enum.
 * ---------------------------------------------------------------------- */
typedef enum kb_param_type {
    KB_PARAM_INT = 0,   /* signed 64-bit integer, value.i                  */
    KB_PARAM_SIZE = 1,  /* unsigned 64-bit count, value.u; accepts K, M, G
                           (binary multiples) and 2^k                      */
    KB_PARAM_FLOAT = 2, /* double, value.f                                 */
    KB_PARAM_ENUM = 3,  /* index into choices, value.i                     */
    KB_PARAM_BOOL = 4   /* 0 or 1, value.i; accepts true/false/yes/no/on/off/1/0 */
} kb_param_type;

typedef union kb_value {
    int64_t i;
    uint64_t u;
    double f;
} kb_value;

typedef struct kb_param {
    const char *name;           /* INI key: lower case, digits, '_'        */
    kb_param_type type;
    const char *def;            /* default, written as in an INI file      */
    double min, max;            /* inclusive range for INT, SIZE, FLOAT;
                                   min > max means unbounded               */
    const char *const *choices; /* ENUM: NULL-terminated allowed values    */
    const char *help;           /* one line for `kbench describe`          */
} kb_param;

/* ------------------------------------------------------------------------
 * Variants: the kernels (or CPU codes) a plugin can run on one point.
 * All variants of a point see the same inputs.
 * ---------------------------------------------------------------------- */
typedef enum kb_backend {
    KB_BACKEND_CPU = 0,  /* timed with a monotonic clock around run()     */
    KB_BACKEND_CUDA = 1  /* timed with CUDA events on kb_host.stream      */
} kb_backend;

typedef struct kb_variant {
    const char *name;    /* as written in `variants = ...`                 */
    kb_backend backend;
    const char *summary; /* one line: what it changes from the one before */
} kb_variant;

/* ------------------------------------------------------------------------
 * The work of one point, filled in by kb_ops.plan() without allocating
 * anything.  The host derives GB/s from the bytes, GFLOP/s from the flops
 * and items/s from items, and checks device_bytes against free memory.
 * ---------------------------------------------------------------------- */
typedef struct kb_plan {
    uint64_t bytes_read;    /* fewest bytes one run must read              */
    uint64_t bytes_written; /* fewest bytes one run must write             */
    double flops;           /* floating-point operations of one run        */
    uint64_t items;         /* elements, keys, ... one run processes       */
    uint64_t host_bytes;    /* host memory setup() will take               */
    uint64_t device_bytes;  /* device memory setup() will take             */
} kb_plan;

/* ------------------------------------------------------------------------
 * The outcome of kb_ops.verify().
 * ---------------------------------------------------------------------- */
typedef struct kb_check {
    int passed;          /* 1 when error <= tolerance (and nothing is NaN) */
    double error;        /* the measure below, for the report              */
    double tolerance;    /* what error was compared against                */
    const char *measure; /* static string: "abs", "rel", "mismatches", ... */
} kb_check;

/* ------------------------------------------------------------------------
 * Host services.  The host owns this structure; a plugin reads it and
 * calls its functions, never frees or keeps pointers into it past
 * teardown().
 * ---------------------------------------------------------------------- */
typedef enum kb_log_level { KB_LOG_DEBUG = 0, KB_LOG_INFO = 1, KB_LOG_WARN = 2 } kb_log_level;

typedef struct kb_host kb_host;
struct kb_host {
    uint32_t size;        /* sizeof(struct kb_host) as the host built it   */
    uint64_t seed;        /* inputs are a function of (seed, point)        */
    void *stream;         /* cudaStream_t to launch on; NULL without a GPU */
    int device;           /* CUDA device ordinal; -1 without a GPU         */
    int sm_count;         /* multiprocessors of that device; 0 without     */
    uint64_t l2_bytes;    /* its L2 cache size; 0 without                  */
    int cpu_threads;      /* threads a parallel CPU variant may use        */

    /* Logs one line (no trailing newline needed). */
    void (*log)(kb_host *h, kb_log_level level, const char *fmt, ...) KB_PRINTF(3, 4);
    /* Records one sentence saying what went wrong and returns code, so that
       `return h->fail(h, KB_EINVAL, "n must be ...");` reads naturally. */
    int (*fail)(kb_host *h, int code, const char *fmt, ...) KB_PRINTF(3, 4);

    void *host_private;   /* the host's; plugins leave it alone            */
};

/* ------------------------------------------------------------------------
 * The lifecycle.  For each point of an experiment the host calls:
 *
 *   plan                          once; pure (no allocation, no CUDA), also
 *                                 in a dry run and without a GPU
 *   setup                         once; allocates and fills the inputs
 *   for each selected variant:
 *     prepare                     poison the variant's outputs
 *     upload, run, download       one checked run
 *     verify                      compare the output with the reference
 *     run ...                     warm-up runs, then timed runs; with
 *                                 include_copies each timed run is
 *                                 upload + run + download
 *   teardown                      once; frees everything
 *
 * Who owns what: the state made by setup() belongs to the plugin until
 * teardown().  Parameter values are the host's and live until teardown().
 *
 * setup(params, variants, host, &state)
 *   May allocate host and device memory, create library handles, generate
 *   inputs from host->seed (never zeros; see kb_rand_* below) and compute or
 *   prepare the reference.  Host memory should stay at inputs + reference +
 *   one output copy.  `variants` has bit v set for each variant that will
 *   run; without a GPU (host->stream == NULL) only CPU variants are set and
 *   setup must not touch CUDA.  Uploads the inputs to the device once.
 *
 * prepare(state, v, host)
 *   Fills variant v's outputs (device and host copy) with a poison value
 *   (NaN for floats, 0xff bytes for integers) so that an unwritten output
 *   fails verification.  May synchronise.
 *
 * upload(state, v, host)      optional (NULL): host->device input copies,
 *                             enqueued on host->stream.
 * run(state, v, host)         the work that is timed.  CUDA variants only
 *                             enqueue on host->stream; run() may not
 *                             allocate, synchronise, print or read the
 *                             inputs from the host.  It must not modify the
 *                             inputs: the host runs it many times.  CPU
 *                             variants compute into the host output copy.
 * download(state, v, host)    optional (NULL): device->host output copies,
 *                             enqueued on host->stream.
 *
 * verify(state, v, &check, host)
 *   Called after download() and a stream synchronisation.  Compares the host
 *   output copy with a reference in higher precision and fills check.  A
 *   wrong answer is not an error: return KB_OK with check.passed = 0.
 *
 * teardown(state, host)
 *   Frees everything setup() made; called even when a variant failed.
 *   Must accept a partly built state (setup may fail half way and still
 *   hand back a state to tear down).
 * ---------------------------------------------------------------------- */
typedef struct kb_ops {
    int (*plan)(const kb_value *params, kb_plan *out, kb_host *host);
    int (*setup)(const kb_value *params, uint64_t variants, kb_host *host, void **state);
    int (*prepare)(void *state, uint32_t variant, kb_host *host);
    int (*upload)(void *state, uint32_t variant, kb_host *host);
    int (*run)(void *state, uint32_t variant, kb_host *host);
    int (*download)(void *state, uint32_t variant, kb_host *host);
    int (*verify)(void *state, uint32_t variant, kb_check *out, kb_host *host);
    void (*teardown)(void *state, kb_host *host);
} kb_ops;

/* ------------------------------------------------------------------------
 * The descriptor.  abi_major, abi_minor and size come first and stay first
 * in every version, so that any host can read them.
 * ---------------------------------------------------------------------- */
#define KB_MAX_VARIANTS 64 /* variants are selected with a 64-bit mask */

typedef struct kb_plugin {
    uint32_t abi_major;        /* KB_ABI_MAJOR                             */
    uint32_t abi_minor;        /* KB_ABI_MINOR                             */
    uint32_t size;             /* sizeof(struct kb_plugin)                 */
    const char *name;          /* family name, as in `plugin = ...`        */
    const char *summary;       /* one line for `kbench list`               */
    const kb_param *params;
    uint32_t n_params;
    const kb_variant *variants;
    uint32_t n_variants;       /* 1 .. KB_MAX_VARIANTS                     */
    const char *item_name;     /* "elements", "keys"... for items/s; or NULL */
    kb_ops ops;                /* plan, setup, prepare, run, verify and
                                  teardown are required                    */
} kb_plugin;

/* Fills the version fields; use as the first line of a descriptor:
 *   static const kb_plugin desc = { KB_PLUGIN_HEADER, .name = "reduce", ... }; */
#define KB_PLUGIN_HEADER                                                        \
    .abi_major = KB_ABI_MAJOR, .abi_minor = KB_ABI_MINOR, .size = sizeof(kb_plugin)

/* The entry symbol: returns descriptor number `index`, NULL past the last. */
#define KB_ENTRY_SYMBOL "kbench_plugin"
typedef const kb_plugin *(*kb_entry_fn)(uint32_t index);
KB_EXPORT const kb_plugin *kbench_plugin(uint32_t index);

/* ------------------------------------------------------------------------
 * Inputs: a counter-based generator, so that element i of an input depends
 * only on (seed, stream, i) and can be made in any order, by any thread.
 * Every plugin uses it, so that the same seed gives the same inputs.
 * ---------------------------------------------------------------------- */
static inline uint64_t kb_mix64(uint64_t x)
{
    /* A 64-bit finaliser (the splitmix64 constants): a bijection that
       spreads every input bit over the whole output. */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* 64 random bits for element i of input `stream` (0, 1, ... per array). */
static inline uint64_t kb_rand_u64(uint64_t seed, uint32_t stream, uint64_t i)
{
    return kb_mix64(kb_mix64(seed ^ ((uint64_t)stream << 56)) + i);
}

/* A double uniform in [lo, hi), from the top 53 bits. */
static inline double kb_rand_uniform(uint64_t seed, uint32_t stream, uint64_t i, double lo,
                                     double hi)
{
    double u = (double)(kb_rand_u64(seed, stream, i) >> 11) * (1.0 / 9007199254740992.0);
    return lo + (hi - lo) * u;
}

/* Bit set for variant v in a variant mask. */
#define KB_VARIANT_BIT(v) (1ULL << (v))

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_PLUGIN_H */
