/*
 * record.h -- what a run produces, as plain data: one result record per
 * (point, variant) that holds copies of everything a reporter shows
 * (names, typed and formatted parameter values, outcome, statistics, work,
 * check, rates, device), and the run's header (machine, ceilings, the
 * expanded configuration).  Nothing here points into a plan or into a
 * plugin's memory, so that reporters (report*.c) and the results reader
 * (results_read.c) build and link without the configuration layer.
 */
#ifndef KBENCH_RECORD_H
#define KBENCH_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_facts.h"
#include "kbench/plugin.h"
#include "stats.h"

/* The machine a run is on: its host, and the GPU its CUDA rows ran on
   (filled by a worker, cuda/gpu.h; plain data here, so that reporters
   and readers need no CUDA). */
typedef struct kbc_machine {
    int has_gpu;
    char no_gpu_reason[256]; /* why not, when has_gpu == 0 */
    int device;
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    int clock_khz, mem_clock_khz;
    uint64_t mem_bytes, l2_bytes;
    int driver_version, runtime_version; /* CUDA's integers, e.g. 13000 */
    char host[256];
    int cpu_threads;
    /* The host's CPU and its load around the run (base/cpu_facts.h): set
       by the supervisor, on the host that runs the workers. */
    kbc_cpu_facts cpu;
} kbc_machine;

typedef enum kbc_outcome {
    KBC_PASS = 0,    /* ran and verified                         */
    KBC_FAIL = 1,    /* ran, but verification failed             */
    KBC_ERROR = 2,   /* a plugin call or CUDA call failed        */
    KBC_SKIPPED = 3, /* could not run here (no GPU, too big ...) */
    KBC_CRASHED = 4, /* the worker running it died, wrote garbage, or
                        its CUDA context was lost (supervisor.h)   */
    KBC_TIMEOUT = 5, /* the point ran past its watchdog            */
    KBC_INVALID = 6  /* plan() refused the point (a limit of the
                        kernel): nothing ran; not a failure          */
} kbc_outcome;
#define KBC_N_OUTCOMES 7

/* Whether an outcome counts as a failure in the exit code, the summary
   and compare: FAIL, error, crashed and timeout. */
int kbc_outcome_failed(int outcome);

#define KBC_REC_NAME 128 /* experiment, plugin, variant names  */
#define KBC_REC_PNAME 64 /* a parameter's name                  */
#define KBC_REC_TEXT 64  /* a parameter's value, as in an INI file */

/* One parameter of the point: typed and as text. */
typedef struct kbc_rec_param {
    char name[KBC_REC_PNAME];
    kb_param_type type;
    kb_value value;
    char text[KBC_REC_TEXT];
    int swept; /* the experiment gives it more than one value */
} kbc_rec_param;

/* The bandwidth ceilings of a device in GB/s (bytes moved per second);
   0 when not measured. */
typedef struct kbc_ceilings {
    double read_gbps;  /* a kernel that only reads          */
    double write_gbps; /* a kernel that only writes (memset) */
    double copy_gbps;  /* cudaMemcpyAsync device to device   */
} kbc_ceilings;

/* The compute ceilings of a device in GFLOP/s (10^9 floating-point
   operations per second, an FMA counting two), measured in the run; 0 when
   not measured.  See docs/output.md, "Compute ceilings". */
typedef struct kbc_flops_ceilings {
    double fp32_gflops;      /* FP32 FMA chains on the CUDA cores        */
    double tf32_gflops;      /* mma.sync m16n8k8 TF32 on tensor cores   */
    double bf16_gflops;      /* mma.sync m16n8k16 BF16 on tensor cores  */
} kbc_flops_ceilings;

/* One reading of the GPU's clocks through NVML (nvml.h).  `known` says
   which fields were read (KBC_CLK_* bits); the others are 0. */
#define KBC_CLK_SM 0x1u
#define KBC_CLK_MEM 0x2u
#define KBC_CLK_TEMP 0x4u
#define KBC_CLK_POWER 0x8u
#define KBC_CLK_REASONS 0x10u
typedef struct kbc_clock_sample {
    unsigned known;      /* KBC_CLK_* of the fields read; 0: no reading */
    unsigned sm_mhz;     /* SM clock now                               */
    unsigned mem_mhz;    /* memory clock now                           */
    unsigned temp_c;     /* GPU temperature                            */
    double power_w;      /* board power draw                           */
    uint64_t reasons;    /* NVML's clocks-event (throttle) reason bits */
} kbc_clock_sample;

/* NVML's clocks-event reason bits (nvmlClocksEventReason*), and the ones
   that count as throttling: SW power cap, HW slowdown, SW thermal, HW
   thermal, HW power brake.  GPU idle, application clocks, sync boost and
   display clock do not (docs/output.md, "Clocks and throttling"). */
#define KBC_REASON_GPU_IDLE 0x1ULL
#define KBC_REASON_APP_CLOCKS 0x2ULL
#define KBC_REASON_SW_POWER_CAP 0x4ULL
#define KBC_REASON_HW_SLOWDOWN 0x8ULL
#define KBC_REASON_SYNC_BOOST 0x10ULL
#define KBC_REASON_SW_THERMAL 0x20ULL
#define KBC_REASON_HW_THERMAL 0x40ULL
#define KBC_REASON_HW_POWER_BRAKE 0x80ULL
#define KBC_REASON_DISPLAY_CLOCK 0x100ULL
#define KBC_THROTTLE_MASK                                                                  \
    (KBC_REASON_SW_POWER_CAP | KBC_REASON_HW_SLOWDOWN | KBC_REASON_SW_THERMAL |           \
     KBC_REASON_HW_THERMAL | KBC_REASON_HW_POWER_BRAKE)

/* A row is marked low when its lowest SM clock is below this fraction of
   the device's maximum SM clock. */
#define KBC_LOW_CLOCK_FRACTION 0.9

/* A row's clocks: the readings just before its timed runs (after the
   warm-up) and just after them, and what they add up to. */
typedef struct kbc_rec_clocks {
    int n;                   /* readings taken: 0 (none: a CPU row, no
                                NVML, nothing timed), 1 or 2             */
    kbc_clock_sample before, after;
    unsigned sm_max_mhz;     /* the device's maximum SM clock; 0 unknown */
    unsigned sm_min_mhz;     /* the lowest SM clock read; 0 unknown      */
    unsigned temp_max_c;     /* the highest temperature read             */
    double power_max_w;      /* the highest power read                   */
    uint64_t reasons;        /* every reason bit read, ORed              */
    unsigned known;          /* KBC_CLK_* read at least once             */
    int throttled;           /* reasons & KBC_THROTTLE_MASK              */
    int low_clock;           /* sm_min_mhz < 0.9 sm_max_mhz              */
} kbc_rec_clocks;

/* Starts c empty for a device whose maximum SM clock is sm_max_mhz (0:
   unknown), and adds one reading as `before` (after == 0) or `after`,
   updating the minimum, maxima, reasons and the two marks.  A reading
   with known == 0 is ignored. */
/* A CUDA version integer (13000) as "13.0" into buf; "" for 0 or less
   (not known). */
void kbc_cuda_version_text(int v, char *buf, size_t n);

void kbc_clocks_start(kbc_rec_clocks *c, unsigned sm_max_mhz);
void kbc_clocks_add(kbc_rec_clocks *c, const kbc_clock_sample *s, int after);

/* The reason bits as names separated by sep ("sw_power_cap,hw_slowdown";
   an unnamed bit as 0x...; "" for none).  Returns buf. */
const char *kbc_clock_reasons_text(uint64_t reasons, const char *sep, char *buf, size_t n);
/* One name back to its bit (0 when unknown). */
uint64_t kbc_clock_reason_parse(const char *name);

/* How a row's timed runs were made (measure.c): one run per timed sample,
   or a batch of `batch` back-to-back runs between one pair of events,
   each sample being the batch's time divided by `batch`; the batch is
   captured once into a CUDA graph and replayed, or, where capturing fails,
   launched run by run. */
typedef struct kbc_rec_mode {
    uint32_t batch;          /* runs per timed sample: 1 single, >= 2 batch */
    int graph;               /* a batch replayed as one CUDA graph (1) or
                                launched run by run (0, the fallback)     */
    int requested;           /* the experiment's batch: 0 off, 1 auto, N   */
    char note[400];          /* why the row was not batched when the
                                experiment asked for it, how auto chose,
                                or why a batch is launched run by run;
                                "" otherwise                              */
} kbc_rec_mode;

/* A row's energy (cuda/energy.h measures it; docs/energy.md says how):
   after the timed runs, windows of the variant's runs back to back, each
   at least the experiment's energy_window long, NVML's cumulative energy
   counter read at both edges with the stream synchronised. */
typedef enum kbc_energy_status {
    KBC_ENERGY_NOT_RUN = 0,  /* no windows were tried: energy = off, or the
                                row was not timed (skipped, an error)    */
    KBC_ENERGY_MEASURED,     /* the numbers below are the windows'       */
    KBC_ENERGY_CPU,          /* a CPU variant: NVML measures the GPU     */
    KBC_ENERGY_COLD,         /* cache = cold: the flushes would be counted */
    KBC_ENERGY_NO_NVML,      /* NVML could not be loaded or has no device */
    KBC_ENERGY_UNSUPPORTED,  /* NVML cannot read the counter here        */
    KBC_ENERGY_STILL,        /* the counter did not move                 */
    KBC_ENERGY_BACKWARDS,    /* the counter went backwards               */
    KBC_ENERGY_WRAPPED,      /* the counter wrapped past its largest value */
    KBC_ENERGY_TOO_SHORT     /* the windows were too short for the counter */
} kbc_energy_status;
#define KBC_N_ENERGY_STATUS 10
/* The most windows a row keeps (the measurement wants KBC_ENERGY_WINDOWS,
   energy.h, and drops bad ones). */
#define KBC_ENERGY_MAX_KEPT 16

typedef struct kbc_rec_energy {
    int requested;           /* the experiment's energy: 0 off, 1 auto, 2 on */
    kbc_energy_status status;
    char why[400];           /* a sentence when status is neither
                                MEASURED nor NOT_RUN; "" otherwise       */
    double window_s;         /* the experiment's energy_window            */
    uint64_t runs_per_window;/* runs of the variant in each window        */
    uint32_t windows;        /* windows kept (<= KBC_ENERGY_MAX_KEPT)     */
    double window_j[KBC_ENERGY_MAX_KEPT]; /* each kept window's joules per
                                run, in the order they ran               */
    double window_sec[KBC_ENERGY_MAX_KEPT]; /* and its length in seconds  */
    uint32_t dropped;        /* windows measured and not kept (note says why) */
    char note[300];          /* why windows were dropped; "" when none    */
    double j_per_run;        /* the median over the windows; NaN unknown  */
    double j_lo, j_hi;       /* its 95% interval (kbc_median_interval)    */
    double watts;            /* joules over seconds of all kept windows   */
    double idle_w;           /* board power read before the point's setup */
    double power_limit_w;    /* the enforced power limit                  */
    double gb_per_j;         /* (bytes read + written) / 1e9 per joule    */
    double gflops_per_j;     /* flops / 1e9 per joule                     */
    uint32_t throttled_windows; /* windows NVML counted held back by a
                                   power or thermal limit, or in which
                                   such a clocks-event reason was read    */
    double throttled_s;      /* seconds of the kept windows NVML counted
                                held back (its violation counters); NaN
                                where it cannot say                      */
    uint64_t reasons;        /* the reasons read, ORed (KBC_THROTTLE_MASK) */
} kbc_rec_energy;

/* A status's name in the files ("measured", "no_nvml" ...) and back (-1
   when unknown); energy's requested value as "off", "auto", "on". */
const char *kbc_energy_status_name(int status);
int kbc_energy_status_parse(const char *name);
const char *kbc_energy_requested_name(int requested);

/* The outcome of verify(), as the host judged it. */
typedef struct kbc_rec_check {
    int passed;         /* the host's verdict: error <= tolerance, no NaN */
    double error, tolerance;
    char measure[32];   /* "" when verification never ran                */
} kbc_rec_check;

typedef struct kbc_record {
    /* What ran: the key of the point is (plugin, experiment, parameters,
       variant); kbc_record_key spells it. */
    char experiment[KBC_REC_NAME];
    char plugin[KBC_REC_NAME];
    char variant[KBC_REC_NAME];
    uint32_t variant_index; /* in the plugin's variant list          */
    kb_backend backend;
    uint32_t flags;         /* KB_VARIANT_*                          */
    uint64_t point;         /* index in the experiment's sweep       */
    uint64_t n_points;      /* the experiment's point count          */
    uint32_t n_params;
    kbc_rec_param params[KB_MAX_PARAMS];
    char baseline[KBC_REC_NAME];  /* the experiment's baseline, or "" */
    char reference[KBC_REC_NAME]; /* its reference variant, or ""     */
    char device[256];       /* the GPU for a CUDA row; "cpu" else    */
    /* Where it ran (set by the supervisor; "" and 0 when unknown, as in
       files written before kbench ran points in workers). */
    char host[256];         /* the host's name                       */
    char gpu_uuid[96];      /* NVML's UUID of the worker's GPU        */
    char pci_bus_id[32];    /* its PCI bus id                         */
    int worker_pid;         /* the worker process that ran the point  */
    /* Device memory the point left behind: free memory before its setup
       minus after its teardown, in bytes (every row of the point carries
       it); -1 when not measured (no GPU, a CPU-only point). */
    int64_t device_left_bytes;
#define KBC_LEFT_NOTE_BYTES (16LL << 20) /* the table notes more than this */
    /* Processes the point's plugin started and left running, which kbench
       ended (exec/strays.h): every row a worker ran of the point carries
       it; -1 when not known (files written before kbench looked). */
    int processes_left;
    /* Seconds the row took in its worker: its variant's calls (poison,
       the checked run, verify, warm-up and timed runs, energy windows)
       plus an equal share of the point's setup and teardown, so that a
       point's rows add up to its time there; NaN when not measured (files
       written before it, rows that never reached a worker). */
    double wall_s;
    int cache_cold;         /* L2 flushed before every timed run     */

    /* Distinct configurations: the record stands for `points` points of
       the sweep (>= 1), those that differ from this one only in the swept
       parameters named in `ignores` (comma-separated), which the variant
       does not use. */
    uint64_t points;
    char ignores[256];

    /* How it went. */
    kbc_outcome outcome;
    char reason[700];       /* for FAIL, ERROR and SKIPPED            */
    /* For a crashed CUDA row rerun under compute-sanitizer
       (--sanitize-on-crash): the first report memcheck printed, or why
       there is none; "" otherwise. */
    char sanitizer[1024];
    /* What kbench's integrity checks made of the row's timing
       (docs/integrity.md): "ok", "flagged: <what they found>" (the reason
       says it too), "partial: <what could not be checked>", "off"
       (integrity = off); "" where nothing was timed or checked. */
    char integrity[700];
    kb_work work;
    kbc_rec_check check;
    kbc_stats time;         /* seconds                                */
    /* Every timed run's seconds, in the order they ran (n_samples of
       them, normally time.n; NULL when none, for example in a file written
       before samples were kept).  Owned by the record: kbc_record_free
       releases it, and a record copied by value shares it. */
    double *samples;
    size_t n_samples;
    /* The achieved noise (kbc_median_noise: the 95% interval of the
       median's half-width over the median, a fraction; NaN below 2 runs),
       the experiment's target (a fraction; 0 when it set none) and whether
       the runs stopped on max_runs or the budget above the target. */
    double noise, noise_target;
    int noise_capped;
    double gbps;            /* (bytes_read + bytes_written) / median / 1e9 */
    double gflops;          /* NaN when flops == 0                    */
    double items_per_s;     /* NaN when items == 0                    */
    char item_name[32];     /* what the plugin calls its items ("keys";
                               kb_plugin.item_name), "" when it says not */
    double ceiling_gbps;    /* the ceiling matched to the traffic mix */
    char ceiling[8];        /* "read", "write", "mixed" or ""         */
    double pct_ceiling;     /* gbps / ceiling_gbps * 100, or NaN      */
    /* The compute ceiling a row with flops is compared with: the peak
       its plugin declares (kb_work.peak), its measured GFLOP/s (NaN when
       not measured) and gflops as a percentage of it (NaN). */
    char peak[8];           /* "fp32", "tf32", "bf16" or ""          */
    double peak_gflops;
    double pct_peak;
    kbc_rec_clocks clocks;  /* the GPU's clocks around the timed runs */
    kbc_rec_mode mode;      /* single runs or batches                */
    double speedup_baseline, speedup_cpu, speedup_reference; /* or NaN */
    kbc_rec_energy energy;  /* joules per run, when measured          */
} kbc_record;

/* A record with nothing measured: every number NaN, outcome SKIPPED,
   points 1. */
void kbc_record_init(kbc_record *r);

/* Frees what a record owns (its samples) and leaves it without them;
   kbc_records_free does that for n records and frees the array. */
void kbc_record_free(kbc_record *r);
void kbc_records_free(kbc_record *recs, size_t n);

/* Gives r a copy of x[0..n) as its samples (replacing any it had). */
void kbc_record_set_samples(kbc_record *r, const double *x, size_t n);

/* The group of r within its experiment, as a plot draws it: the swept
   parameters other than x (NULL: all of them) as "dtype=f32<sep>block=256"
   into buf ("" for none). */
void kbc_record_group(const kbc_record *r, const char *x, const char *sep, char *buf, size_t n);

/* A parameter's value as a number (a size, an integer, a float), or NaN
   for an enum or a bool: the x of a plot. */
double kbc_param_number(const kbc_rec_param *q);

/* The stable key "plugin/experiment/n=1024,dtype=f32/variant" into buf;
   returns the length the whole key needs (like snprintf). */
size_t kbc_record_key(const kbc_record *r, char *buf, size_t n);

/* The check's measure, or NULL when verification never ran. */
const char *kbc_check_measure(const kbc_record *r);

/* Whether row r ran: its variant was timed (time.n > 0) and its outcome is
   pass or FAIL (a failed check still ran and was timed).  A skipped,
   invalid, erred, crashed or timed-out row did not run, nor one without
   timed runs.  What a speed-up, a plot, compare and the report's verdicts
   take into account; one place, so that they cannot disagree. */
int kbc_record_ran(const kbc_record *r);

/* Whether row r has energy to show and compare: it ran (kbc_record_ran),
   its energy was measured and its median joules per run is a positive
   number.  What the plot's energy metrics, compare's energy verdict, the
   history's energy series and the tuner's energy objectives all take. */
int kbc_record_has_energy(const kbc_record *r);

/* Whether kbench's integrity checks flagged the row (its integrity begins
   "flagged"): its timing is not of the work it verified, so compare, the
   history and the tuner leave it out (docs/integrity.md). */
int kbc_integrity_flagged(const kbc_record *r);

/* The name of an outcome: "pass", "FAIL", "error", "skipped", "crashed",
   "timeout", "invalid"; and back
   (-1 when unknown). */
const char *kbc_outcome_name(int outcome);
int kbc_outcome_parse(const char *name);

/* The colour of an outcome's name on a terminal (text.h's SGR): pass
   green, a failure red, skipped yellow, invalid dim. */
const char *kbc_outcome_sgr(int outcome);

/* Variant flags as "syncs|nondeterm|library" ("" for none); and one
   name back to its bit (0 when unknown). */
const char *kbc_flags_text(uint32_t flags, char *buf, size_t n);
uint32_t kbc_flag_parse(const char *name);

/* One experiment of the run, as the reports show the configuration. */
typedef struct kbc_exp_info {
    char *name;
    int line;
    char *description;   /* or NULL */
    char *plugin;
    char *plugin_file;   /* or NULL */
    char **variants;
    size_t n_variants;
    char *baseline;      /* or NULL */
    char *reference;     /* or NULL */
    uint32_t warmup, runs;
    double budget_s;
    uint32_t min_runs, max_runs; /* stopping on noise (config.h)  */
    double noise_pct, min_time_s;
    int include_copies;
    uint64_t seed;
    int cpu_threads;
    int cache_cold;
    int batch;            /* 0 off, 1 auto, N >= 2 (config.h)    */
    size_t n_params;
    char **param_names;
    char ***param_values; /* param_values[i][k], k < n_values[i], as text */
    size_t *n_values;
    uint64_t n_points;
} kbc_exp_info;

/* One plugin file a run used. */
typedef struct kbc_build_info {
    char name[KBC_REC_NAME];
    char file[1024];
    char sha256[65];        /* "" when the file could not be read */
} kbc_build_info;

/* What a reporter learns when the run begins. */
typedef struct kbc_run_info {
    const char *config_file;  /* or NULL */
    /* The machine stays valid until the sinks' end(): its cpu.load_after,
       cpu_s and wall_s are set just before it (results.json reads them
       there). */
    const kbc_machine *machine;
    kbc_ceilings ceilings;    /* of the device the CUDA rows ran on */
    kbc_flops_ceilings flops; /* its compute ceilings               */
    /* The device's clocks as NVML reports them when the run starts:
       clocks_known is 0 and clocks_why says why when there is no NVML (or
       no GPU); sm_max_mhz and mem_max_mhz are the maximum clocks. */
    int clocks_known;
    const char *clocks_why;
    unsigned sm_max_mhz, mem_max_mhz;
    kbc_clock_sample clocks_at_start;
    const char *command_line;
    const kbc_exp_info *exps;
    size_t n_exps;
    /* The plan's identity (shard.h) and this run's share of it: shard
       index of count (count 0: the run is not a shard); jobs: the points
       this run was to run.  plan_hash NULL: unknown (results.json then
       has no "plan"). */
    const char *plan_hash;
    int shard_index, shard_count;
    uint64_t jobs;
    /* Provenance: each plugin the plan uses, with the SHA-256 of its file,
       and the libraries' versions (0: unknown). */
    const kbc_build_info *builds;
    size_t n_builds;
    int cccl_version;
    int cublas_version;       /* major * 10000 + minor * 100 + patch */
} kbc_run_info;

/* A suspect row (docs/output.md, "Suspect rows"): a row of a variant whose
   median is more than twice that of the same variant at a point of the
   same experiment with at least as much work, which says more about the
   measurement than about the kernel.  analysis/suspect.h finds them; here
   is what every output carries and the results reader reads back. */
typedef struct kbc_suspect {
    const char *key;        /* kbc_record_key of the suspect row          */
    double median_s;        /* its median                                 */
    const char *than_key;   /* the row with more work                     */
    double than_median_s;   /* its median, below median_s / FACTOR        */
    double work_ratio;      /* its work over the suspect's (>= 1)         */
    size_t key_row;         /* the suspect's place among the rows looked
                               at (0 when read back from a file)          */
    int cpu;                /* a CPU variant's row: what to do about it
                               differs (kbc_suspect_text)                 */
} kbc_suspect;

struct kbc_sweep; /* an experiment's sweep at a glance: analysis/sweep_summary.h */

/* A reporter.  point() gets all records of one point at once (so a table
   can group them and speed-ups are known); it should write them out at
   once, so that a crash later loses nothing already reported.  begin(),
   point(), end(), tick() and suspects() return 0, or -1 when the output
   could not be written: the sink then says nothing itself and is not
   called again but for destroy(); error() gives its sentence for whoever
   runs it to say once, with what the failure means there (views/fanout.h
   does, for a run and for merge). */
typedef struct kbc_sink {
    void *ctx;
    int (*begin)(void *ctx, const kbc_run_info *info);
    int (*point)(void *ctx, const kbc_record *recs, size_t n);
    int (*end)(void *ctx, int exit_code);
    void (*destroy)(void *ctx);
    /* "cannot write PATH: why; what the file holds now", or NULL when the
       sink has no sentence (the table on stdout: the command says that
       standard output failed as it exits).  May be NULL. */
    const char *(*error)(void *ctx);
    /* Called now and then (a few times a second) while a run waits for
       its points: a sink that held rows back writes them when it is time.
       May be NULL. */
    int (*tick)(void *ctx);
    /* Called once before end() with the run's suspect rows (list[0..n),
       borrowed for the call), found once for all sinks by the fan-out
       (views/fanout.h); a sink keeps what it needs.  May be NULL. */
    int (*suspects)(void *ctx, const kbc_suspect *list, size_t n);
    /* Called once before end(), after suspects(), with the summary of
       each experiment's sweep (analysis/sweep_summary.h; list[0..n), borrowed for
       the call), made once for all sinks by the fan-out.  May be NULL. */
    int (*sweeps)(void *ctx, const struct kbc_sweep *list, size_t n);
} kbc_sink;

#endif
