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
 * plugin never links against the kbench executable.  The optional kit
 * (kbench/kit.h) carries the plumbing every family needs.
 *
 * Reading order: versions and compatibility, parameters, variants, work and
 * check, host services, the lifecycle (struct kb_ops), the descriptor, then
 * small inline helpers.
 *
 * The words MUST, MUST NOT, SHOULD and MAY are meant as in RFC 2119.
 */
#ifndef KBENCH_PLUGIN_H
#define KBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Versions and compatibility.
 *
 * The host refuses a plugin whose abi_major differs from its own.  Within
 * one major version:
 *
 *   - A minor version only ever adds fields at the END of a growable
 *     structure.  Growable are: kb_plugin, kb_ops, kb_param, kb_variant
 *     (each array's stride is the plugin's param_size / variant_size),
 *     kb_host, kb_work and kb_check.  Nothing is removed, moved or retyped.
 *   - Frozen (never change within a major): kb_value, the enums' existing
 *     values, the meaning of every existing field and flag.
 *   - A newer host reads an older plugin: it reads a field only where the
 *     plugin's size (kb_plugin.size, kb_ops.size, param_size, variant_size)
 *     says it is there, and uses the documented default otherwise.
 *   - An older host reads a newer plugin: it ignores the fields past its own
 *     structures.  A value a newer minor adds to an existing field (an enum
 *     value, a flag bit) cannot be ignored safely, so an older host refuses
 *     such a plugin, saying which minor it was built for.
 *   - A field a minor adds starts at or past the previous minor's sizeof,
 *     never in its tail padding, so that a declared size tells exactly which
 *     fields exist.  A declared size is therefore always a multiple of the
 *     structure's alignment; the host refuses one that is not.
 *   - Out-parameters (kb_work, kb_check) are zeroed by the host to its own
 *     size before each call.  A plugin MUST NOT write a field added in minor
 *     m unless host->abi_minor >= m.
 *
 * A new major version is the only way to change what a minor may not.  Its
 * changes, each with the code before and after and what the host says to a
 * plugin that was not ported, are listed in docs/migrating.md, which the
 * host's refusal of a plugin of another major points to.
 *
 * History:
 *   1.0  the first ABI: kb_ops inside the descriptor, kb_plan, NULL-
 *        terminated enum choices, no sizes for the parameter and variant
 *        tables.
 *   2.0  kb_ops by pointer with its size, kb_work (was kb_plan), strides
 *        param_size and variant_size, counted choices (n_choices), variant
 *        flags and uses, kb_host.abi_minor, extension(); the host decides
 *        pass or fail from error and tolerance.  docs/migrating.md, "ABI 1
 *        to ABI 2".
 *   2.1  kb_work.peak.
 *   2.2  kb_work.variant_device_bytes (device memory per variant); what
 *        plan() may read from the host is stated (struct kb_ops, plan).
 *   2.3  kb_host.refuse (plan() refuses one variant of a point, the others
 *        run); kb_param.multiple_of (integer values the host accepts).
 *        docs/migrating.md, "Minor versions of ABI 2".
 * ---------------------------------------------------------------------- */
#define KB_ABI_MAJOR 2
#define KB_ABI_MINOR 3 /* 1: kb_work.peak; 2: kb_work.variant_device_bytes;
                          3: kb_host.refuse, kb_param.multiple_of */

/* Marks the entry symbol as the one thing a plugin exports. */
#if defined(__GNUC__)
#define KB_EXPORT __attribute__((visibility("default")))
#define KB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KB_EXPORT
#define KB_PRINTF(f, a)
#endif

/* Every kb_ops function that can fail returns one of these; on failure it
 * first writes one sentence through kb_host.fail(). */
enum kb_status {
    KB_OK = 0,
    KB_EINVAL = 1,       /* the parameters make no sense together (from
                            plan(), with a sentence: a refused point)    */
    KB_ENOMEM = 2,       /* host or device allocation failed             */
    KB_ECUDA = 3,        /* a CUDA call or launch failed                 */
    KB_EUNSUPPORTED = 4, /* this variant cannot run this point (a limit;
                            from plan(), with a sentence: a refused
                            point, see kb_ops, plan)                     */
    KB_EFAIL = 5         /* anything else                                */
};

/* ------------------------------------------------------------------------
 * Parameters, declared as data.
 *
 * The host parses every value (INI file or default) according to its type,
 * checks it against [min, max], multiple_of or the allowed choices, expands
 * sweeps, and hands the plugin one kb_value per declared parameter, in
 * declaration order, so the plugin indexes values with its own enum.
 * ---------------------------------------------------------------------- */
#define KB_MAX_PARAMS 64 /* variants name the parameters they use in a mask */

typedef enum kb_param_type {
    KB_PARAM_INT = 0,   /* signed 64-bit integer, value.i                  */
    KB_PARAM_SIZE = 1,  /* unsigned 64-bit count, value.u; accepts K, M, G
                           (binary multiples) and 2^k, each optionally
                           followed by +N or -N (2^20+3, 1M-1)             */
    KB_PARAM_FLOAT = 2, /* double, value.f                                 */
    KB_PARAM_ENUM = 3,  /* index into choices, value.i                     */
    KB_PARAM_BOOL = 4   /* 0 or 1, value.i; accepts true/false/yes/no/on/off/1/0 */
} kb_param_type;

typedef union kb_value {
    int64_t i;
    uint64_t u;
    double f;
} kb_value;

/* Growable; the array's stride is kb_plugin.param_size. */
typedef struct kb_param {
    const char *name;           /* INI key: lower case, digits, '_'        */
    kb_param_type type;
    const char *def;            /* default, written as in an INI file      */
    double min, max;            /* inclusive range for INT, SIZE, FLOAT;
                                   min > max means unbounded.  Integer
                                   values are compared with them exactly.  */
    const char *const *choices; /* ENUM: n_choices allowed values (no NULL
                                   terminator is needed or read)           */
    uint32_t n_choices;
    const char *help;           /* one line for `kbench describe`; optional:
                                   NULL or absent (param_size) is ""       */
    /* Minor 3; absent (param_size ends before it) is 0. */
    uint64_t multiple_of;       /* INT and SIZE: every value, the default
                                   and each value of a sweep must be a
                                   multiple of it (0 and 1: any value; 0 is
                                   a multiple of everything).  The host
                                   refuses a value that is not, naming the
                                   nearest ones, and `kbench describe`
                                   shows it.  An older host ignores it, so
                                   a plan() that cannot take other values
                                   still refuses them itself.  Not allowed
                                   on FLOAT, ENUM and BOOL parameters.     */
} kb_param;

/* Fills .choices and .n_choices from an array: KB_CHOICES(dtype_names). */
#define KB_CHOICES(arr) .choices = (arr), .n_choices = (uint32_t)(sizeof(arr) / sizeof((arr)[0]))

/* ------------------------------------------------------------------------
 * Variants: the kernels (or CPU codes) a plugin can run on one point.
 * All variants of a point see the same inputs.
 * ---------------------------------------------------------------------- */
#define KB_MAX_VARIANTS 64 /* variants are selected with a 64-bit mask */

typedef enum kb_backend {
    KB_BACKEND_CPU = 0,  /* timed with a monotonic clock around run()     */
    KB_BACKEND_CUDA = 1  /* timed with CUDA events on kb_host.stream      */
} kb_backend;

/* Variant flags: facts the host shows and acts on, never prose. */
#define KB_VARIANT_SYNCS 0x1u    /* run() waits for the stream (a library call that
                                    returns to the host); timing then includes
                                    that wait                                  */
#define KB_VARIANT_NONDETERM 0x2u /* results may differ bit for bit between runs:
                                    the order of floating-point operations
                                    changes from run to run (float atomics,
                                    blocks finishing in any order).  Integer
                                    atomics alone do not set it: integer
                                    addition is associative, so any order
                                    gives the same bits                        */
#define KB_VARIANT_LIBRARY 0x4u  /* a vendor library's implementation: what
                                    `reference` is meant to name               */

/* Bit for parameter p in kb_variant.uses. */
#define KB_USES(p) (1ULL << (p))

/* Growable; the array's stride is kb_plugin.variant_size. */
typedef struct kb_variant {
    const char *name;    /* as written in `variants = ...`                 */
    kb_backend backend;
    const char *summary; /* one line: what it changes from the one before */
    /* Optional from here on (variant_size may end before them). */
    uint32_t flags;      /* KB_VARIANT_*; default 0                        */
    uint64_t uses;       /* KB_USES(p) for every parameter p whose value
                            can change what this variant runs or computes.
                            0 (the default) means every parameter.  The
                            host runs each distinct combination of the used
                            parameters once per sweep.                    */
} kb_variant;

/* ------------------------------------------------------------------------
 * The work of one point, filled in by kb_ops.plan().  The host derives GB/s
 * from the bytes, GFLOP/s from the flops and items/s from items, checks
 * host_bytes and the device memory of the variants it will run (below)
 * against free memory before setup, picks the bandwidth ceiling that
 * matches the read/write mix, and compares GFLOP/s with the compute
 * ceiling that `peak` names.
 *
 * Device memory (minor 2).  setup() takes device_bytes whatever variants
 * it is asked for, plus variant_device_bytes[v] for each variant v in its
 * mask: what that variant alone adds (its scratch, a library's temporary
 * storage or workspace).  The host's figure for a set of variants is
 * device_bytes plus the sum of theirs; it checks that figure before setup,
 * admitting variants in order while it fits free memory, and the dry run
 * prints it for the experiment's variants.  A buffer that several variants
 * share is either counted in device_bytes or in each of them (an
 * over-estimate, never an under-estimate).  A library's figure that only
 * the library can tell (a size query needs CUDA, which plan() may not use)
 * is a bound derived from the library's documented storage; setup() SHOULD
 * log a warning when the library asks for more.  A plugin of minor 0 or 1
 * leaves the array zero (the host zeroes it): device_bytes is everything.
 * ---------------------------------------------------------------------- */

/* Which measured compute ceiling a point's flops are compared with
   (kb_work.peak, minor 1).  The host measures each once per run. */
typedef enum kb_peak {
    KB_PEAK_FP32 = 0, /* FP32 FMA on the CUDA cores (the default)          */
    KB_PEAK_TF32 = 1, /* TF32 tensor-core MMA, f32 accumulate              */
    KB_PEAK_BF16 = 2, /* BF16 tensor-core MMA, f32 accumulate              */
    KB_PEAK_NONE = 3  /* none applies (FP64, integer work ...): no percent */
} kb_peak;

typedef struct kb_work {
    uint64_t bytes_read;    /* fewest bytes one run must read              */
    uint64_t bytes_written; /* fewest bytes one run must write             */
    double flops;           /* floating-point operations of one run        */
    uint64_t items;         /* elements, keys, ... one run processes       */
    uint64_t host_bytes;    /* host memory setup() will take               */
    uint64_t device_bytes;  /* device memory setup() will take             */
    /* Minor 1: write only when host->abi_minor >= 1 (kb_work_set_peak). */
    uint32_t peak;          /* kb_peak of the flops; KB_PEAK_FP32 (0) when
                               left alone                                  */
    /* Minor 2: write only when host->abi_minor >= 2
       (kb_work_add_variant_bytes). */
    uint64_t variant_device_bytes[KB_MAX_VARIANTS]; /* device memory variant
                               v adds to device_bytes when it runs; 0 when
                               left alone                                  */
} kb_work;

/* kb_work_set_peak(out, host, peak) and kb_work_add_variant_bytes(out,
   host, v, bytes), at the end of this header, write the fields only where
   the host has them. */

/* The outcome of kb_ops.verify().  The host decides pass or fail itself:
 * error <= tolerance, and neither is NaN.  A plugin whose `passed`
 * contradicts its own numbers is reported as a plugin error. */
typedef struct kb_check {
    int passed;          /* the plugin's view: error <= tolerance          */
    double error;        /* the measure below                              */
    double tolerance;    /* what error was compared against, derived and
                            documented by the family                       */
    const char *measure; /* static string: "abs", "rel", "mismatches", ... */
} kb_check;

/* ------------------------------------------------------------------------
 * Host services.  The host owns this structure; a plugin reads it and
 * calls its functions, and MUST NOT free it or keep pointers into it past
 * teardown().
 * ---------------------------------------------------------------------- */
typedef enum kb_log_level { KB_LOG_DEBUG = 0, KB_LOG_INFO = 1, KB_LOG_WARN = 2 } kb_log_level;

typedef struct kb_host kb_host;
struct kb_host {
    uint32_t size;        /* sizeof(struct kb_host) as the host built it   */
    uint32_t abi_minor;   /* the host's KB_ABI_MINOR (see Compatibility)   */
    uint64_t seed;        /* inputs are a function of the seed alone: the
                             same for every point and variant              */
    void *stream;         /* cudaStream_t to launch on; NULL without a GPU
                             (and always in plan(): see kb_ops, plan)      */
    int device;           /* CUDA device ordinal; -1 without a GPU         */
    int sm_count;         /* multiprocessors of that device; 0 without     */
    uint64_t l2_bytes;    /* its L2 cache size; 0 without                  */
    int cpu_threads;      /* threads a parallel CPU variant may use (also
                             in plan(), which may size host memory by it)  */

    /* Logs one line (no trailing newline needed). */
    void (*log)(kb_host *h, kb_log_level level, const char *fmt, ...) KB_PRINTF(3, 4);
    /* Records one sentence saying what went wrong and returns code, so that
       `return h->fail(h, KB_EINVAL, "n must be ...");` reads naturally. */
    int (*fail)(kb_host *h, int code, const char *fmt, ...) KB_PRINTF(3, 4);

    void *host_private;   /* the host's; plugins leave it alone            */

    /* Minor 3: read only where kb_host_can_refuse(h) says it is there.
       From plan() only (elsewhere it does nothing): this point is not for
       variant v, with one sentence saying why (see kb_ops, plan). */
    void (*refuse)(kb_host *h, uint32_t variant, const char *fmt, ...) KB_PRINTF(3, 4);
};

/* ------------------------------------------------------------------------
 * The lifecycle.  For each point of an experiment the host calls:
 *
 *   plan                          pure; once per point, when the plan is
 *                                 made (also for a dry run, without a
 *                                 GPU, and by `kbench check`)
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
 * Threads: plan() MUST be pure (a function of its parameters alone: no
 * allocation that outlives it, no CUDA, no global state) and MAY be called
 * from any thread at any time.  Separate states MAY live on separate threads
 * and devices at once; one state is used by one thread at a time, so the
 * calls on one state need no locking.  A plugin MUST NOT keep mutable
 * global state.
 *
 * Ownership: the state made by setup() belongs to the plugin until
 * teardown().  Parameter values and the kb_host are the host's and live
 * until teardown().
 *
 * plan(params, &work, host)
 *   MUST fill work.  The host asks it once per point, when it reads the
 *   experiment, and keeps the answer for the dry run, kbench check, kbench
 *   tune and the run alike (a worker is handed the answer; it does not ask
 *   again).  What a failure means is one rule, the same everywhere:
 *     - KB_EINVAL or KB_EUNSUPPORTED with a sentence through fail() refuses
 *       the point: the parameters make no sense together (overflow) or the
 *       kernel cannot take them (a tile larger than the problem, a block
 *       size above the limit).  The point runs nothing and is an `invalid`
 *       row with the sentence; the sweep goes on, kbench tune records an
 *       invalid candidate, and kbench check passes it.
 *     - Any other code, or either of those two without a sentence, is the
 *       plugin's error: an `error` row with its sentence (the exit code
 *       says a row failed), and a failure of kbench check.
 *   A point that suits some variants and not others (a block size that one
 *   kernel cannot take, while the CPU code ignores it) is refused for those
 *   variants alone (minor 3): plan() calls host->refuse(host, v, "...")
 *   for each such variant v, fills work for the others and returns KB_OK.
 *   Variant v's row is then `invalid` with the sentence, setup() is not
 *   asked for v, v's variant_device_bytes is not counted, and the other
 *   variants run; the dry run, kbench check and kbench tune read the same
 *   refusals.  The first sentence given for a variant is kept.  A refusal
 *   without a sentence, or of a variant the plugin does not declare, is the
 *   plugin's error (the point's rows are `error`).  When plan() fails,
 *   its refusals are dropped: the point's rule above applies.  On a host
 *   older than minor 3 (kb_host_can_refuse is false) the whole point is
 *   refused through fail() instead, as before:
 *       if (!kb_host_can_refuse(host))
 *           return host->fail(host, KB_EUNSUPPORTED, "block = %d ...", b);
 *       host->refuse(host, V_BLOCK, "block = %d ...", b);
 *   Of the host, plan() MAY read size, abi_minor, seed and
 *   cpu_threads (the experiment's thread count, as setup() will see it;
 *   with cpu_threads = auto, the CPUs of the machine that plans), and MAY
 *   call log(), fail() and (minor 3) refuse().  It sees no device on any
 *   path (run, dry run, kbench check): the host hands it stream NULL,
 *   device -1, sm_count 0
 *   and l2_bytes 0 even on a GPU machine, so that a plan, and the memory
 *   check made from it, does not depend on where it was made.  A figure
 *   that depends on the device (a library's temporary storage) is a bound
 *   (see kb_work, "Device memory").
 *
 * setup(params, variants, host, &state)
 *   MAY allocate host and device memory, create library handles, generate
 *   inputs from host->seed (see kb_rand_* below and the kit) and compute
 *   or prepare the reference.  Inputs MUST NOT hide a wrong answer: no
 *   input of zeros, none that makes a result of zero likely (an output
 *   left unwritten or zeroed would pass); 0 itself is fine where it is a
 *   valid value of the data, such as a key or a count.  Host memory
 *   SHOULD stay at inputs + reference + one output copy.  `variants` has
 *   bit v set for each variant that will run; without a GPU (host->stream
 *   == NULL) only CPU variants are set and setup MUST NOT touch CUDA.
 *   Uploads the inputs to the device once.  On failure it MAY hand back a
 *   partly built state.
 *
 * prepare(state, v, host)
 *   MUST fill variant v's outputs (device and host copy) with a poison
 *   value (NaN for floats, 0xff bytes for integers) so that an unwritten
 *   output fails verification.  MAY synchronise.
 *
 * upload(state, v, host)      optional (NULL): host->device input copies,
 *                             enqueued on host->stream.  Called for every
 *                             variant, CPU ones too (with stream NULL
 *                             without a GPU): the plugin decides what a
 *                             variant copies, usually nothing for CPU ones.
 *                             When: once per variant, after prepare and
 *                             before the checked run; with include_copies
 *                             also before every warm-up and timed run (and
 *                             each run of a batch), inside the timing.
 *                             setup() already put the inputs on the device
 *                             and run() leaves them alone, so nothing needs
 *                             re-uploading for correctness: upload() is
 *                             what include_copies times, so it SHOULD copy
 *                             the inputs the variant reads (the same bytes
 *                             again) and MUST only enqueue, like run().
 * run(state, v, host)         the work that is timed.  A CUDA variant
 *                             enqueues on host->stream and MUST NOT
 *                             allocate, print, read inputs from the host or
 *                             synchronise (unless it declares
 *                             KB_VARIANT_SYNCS).  run() MUST NOT modify the
 *                             inputs: the host runs it many times.  A CPU
 *                             variant computes into the host output copy.
 * download(state, v, host)    optional (NULL): device->host output copies,
 *                             enqueued on host->stream.  Called for every
 *                             variant, like upload().
 *
 * verify(state, v, &check, host)
 *   Called after download() and a stream synchronisation.  Compares the
 *   host output copy with a reference in higher precision and fills check.
 *   A wrong answer is not an error: return KB_OK with error > tolerance.
 *
 * teardown(state, host)
 *   MUST free everything setup() made; called even when a variant or setup
 *   failed, and MUST accept a partly built state.
 *
 * extension(name)
 *   Optional (NULL): returns a pointer to the plugin's data for an
 *   extension the host asks for by name (for what no version foresaw), or
 *   NULL when the plugin has none of that name.  The host knows one:
 *   KB_PREFETCH_EXTENSION (struct kb_prefetch, below).
 * ---------------------------------------------------------------------- */
/* Growable: the host reads a field only where ops->size says it exists. */
typedef struct kb_ops {
    uint32_t size; /* sizeof(struct kb_ops): use KB_OPS_HEADER */
    int (*plan)(const kb_value *params, kb_work *out, kb_host *host);
    int (*setup)(const kb_value *params, uint64_t variants, kb_host *host, void **state);
    int (*prepare)(void *state, uint32_t variant, kb_host *host);
    int (*upload)(void *state, uint32_t variant, kb_host *host);
    int (*run)(void *state, uint32_t variant, kb_host *host);
    int (*download)(void *state, uint32_t variant, kb_host *host);
    int (*verify)(void *state, uint32_t variant, kb_check *out, kb_host *host);
    void (*teardown)(void *state, kb_host *host);
    const void *(*extension)(const char *name);
} kb_ops;

#define KB_OPS_HEADER .size = sizeof(kb_ops)

/* ------------------------------------------------------------------------
 * The prefetch extension: setup() in two halves, so that the CPU work of a
 * worker's next point (its inputs and reference) is done while the current
 * point's GPU work is timed.  A plugin whose extension(KB_PREFETCH_EXTENSION)
 * returns a struct kb_prefetch offers it; one that does not works as
 * before (setup() on the thread that runs the point).  The ABI is
 * unchanged: this is data behind extension(), growable like kb_ops (the
 * host reads a field only where size says it exists).
 *
 * setup_host(params, variants, host, &host_state)
 *   The CPU half of setup(): everything that needs no device (inputs from
 *   host->seed, the reference, host buffers).  MUST NOT call CUDA or any
 *   library that does: host->stream is NULL here, while `variants` may
 *   still name CUDA variants, and host->device, sm_count and l2_bytes are
 *   those of the device the point will run on (-1, 0, 0 without one).  MAY
 *   run on another thread than the point's other calls, at the same time
 *   as calls on another state (of this or an earlier point: plugins keep no
 *   mutable global state), and MAY call log() and fail() (on a host of its
 *   own; that host lives for the call only).  Takes at most the point's
 *   host_bytes.  On failure MAY hand back a partly built host state.
 * setup_device(host_state, variants, host, &state)
 *   The rest of setup(), on the point's thread with the full host: device
 *   buffers, uploads, library handles.  `variants` is a subset of those
 *   setup_host was given (the device memory check admits variants only
 *   when the point starts).  It takes host_state over whatever it
 *   returns: from then on only *state exists, which teardown() frees as it
 *   frees setup()'s, partly built or not.
 * drop_host(host_state, host)
 *   Frees a host state that never reached setup_device() (the point went
 *   elsewhere, or setup_host failed).  MUST NOT call CUDA.
 *
 * setup_host followed by setup_device MUST leave a state that behaves as
 * setup()'s does (the same inputs, the same reference), so that a row is
 * the same whether its host half was made ahead or not; the kit writes
 * setup() from the two halves (kbench/kit.h, KBK_PREFETCH).
 * docs/plugins.md, "Prefetch", says when the host makes the host half
 * ahead and what it waits for.
 * ---------------------------------------------------------------------- */
#define KB_PREFETCH_EXTENSION "kbench.prefetch.v1"

typedef struct kb_prefetch {
    uint32_t size; /* sizeof(struct kb_prefetch) as the plugin built it */
    int (*setup_host)(const kb_value *params, uint64_t variants, kb_host *host,
                      void **host_state);
    int (*setup_device)(void *host_state, uint64_t variants, kb_host *host, void **state);
    void (*drop_host)(void *host_state, kb_host *host);
} kb_prefetch;

/* ------------------------------------------------------------------------
 * The descriptor.  abi_major, abi_minor and size come first and stay first
 * in every version, so that any host can read them.  Write it with
 * designated initialisers:
 *
 *   static const kb_ops ops = { KB_OPS_HEADER, .plan = my_plan, ... };
 *   static const kb_plugin desc = {
 *       KB_PLUGIN_HEADER, .name = "reduce", .summary = "...",
 *       KB_PARAMS(params), KB_VARIANTS(variants), .ops = &ops };
 * ---------------------------------------------------------------------- */
typedef struct kb_plugin {
    uint32_t abi_major;        /* KB_ABI_MAJOR                             */
    uint32_t abi_minor;        /* KB_ABI_MINOR                             */
    uint32_t size;             /* sizeof(struct kb_plugin)                 */
    const char *name;          /* family name, as in `plugin = ...`        */
    const char *summary;       /* one line for `kbench list`               */
    const kb_param *params;    /* n_params entries, param_size bytes apart */
    uint32_t n_params;         /* 0 .. KB_MAX_PARAMS                       */
    uint32_t param_size;       /* sizeof(kb_param) as the plugin built it  */
    const kb_variant *variants;/* n_variants entries, variant_size apart   */
    uint32_t n_variants;       /* 1 .. KB_MAX_VARIANTS                     */
    uint32_t variant_size;     /* sizeof(kb_variant) as the plugin built it */
    const kb_ops *ops;         /* plan, setup, prepare, run, verify and
                                  teardown are required                    */
    /* Optional from here on: a descriptor whose size ends before a field
       gets the default written beside it. */
    const char *item_name;     /* "elements", "keys"... for items/s; NULL  */
} kb_plugin;

#define KB_PLUGIN_HEADER                                                        \
    .abi_major = KB_ABI_MAJOR, .abi_minor = KB_ABI_MINOR, .size = sizeof(kb_plugin)
#define KB_PARAMS(arr)                                                          \
    .params = (arr), .n_params = (uint32_t)(sizeof(arr) / sizeof((arr)[0])),    \
    .param_size = sizeof((arr)[0])
#define KB_VARIANTS(arr)                                                        \
    .variants = (arr), .n_variants = (uint32_t)(sizeof(arr) / sizeof((arr)[0])), \
    .variant_size = sizeof((arr)[0])

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

/* Sets out->peak where the host has the field (an older host's kb_work
   ends before it: writing it there would write past the host's structure),
   so that a plugin's plan() says which peak applies in one line. */
static inline void kb_work_set_peak(kb_work *out, const kb_host *host, kb_peak peak)
{
    if (host && host->abi_minor >= 1)
        out->peak = (uint32_t)peak;
}

/* Adds `bytes` to variant v's device memory (kb_work.variant_device_bytes,
   minor 2).  An older host has no such field: there the bytes go to
   device_bytes, which that host checks whatever the variants, so that its
   memory check still counts them.  v past KB_MAX_VARIANTS is ignored. */
static inline void kb_work_add_variant_bytes(kb_work *out, const kb_host *host, uint32_t v,
                                             uint64_t bytes)
{
    if (v >= KB_MAX_VARIANTS)
        return;
    if (host && host->abi_minor >= 2)
        out->variant_device_bytes[v] += bytes;
    else
        out->device_bytes += bytes;
}

/* Whether host has refuse() (minor 3): a plugin built against minor 3 may
   run on an older kbench, whose kb_host ends before the field. */
static inline int kb_host_can_refuse(const kb_host *host)
{
    return host && host->abi_minor >= 3 &&
           host->size >= offsetof(kb_host, refuse) + sizeof host->refuse && host->refuse;
}

/* Bit set for variant v in a variant mask. */
#define KB_VARIANT_BIT(v) (1ULL << (v))

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_PLUGIN_H */
