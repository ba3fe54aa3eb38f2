/*
 * core_keys.h -- the keys kbench itself reads in an INI file, as one table.
 *
 * Each row says everything about one key: its name, what kind of value it
 * takes, where it may be written, its default, one line of help and, for
 * the measure settings, the typed declaration its value is parsed with and
 * the kbc_measure field it lands in.  config.c parses and defaults from this
 * table, the loader refuses a plugin parameter named like a row, and
 * kbc_core_keys_print() documents them.  A new core key is one row in
 * core_keys.c (plus, for a measure setting, its field in kbc_measure).
 */
#ifndef KBENCH_CORE_KEYS_H
#define KBENCH_CORE_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kbench/plugin.h"

/* What a core key's value is, and so who parses it. */
typedef enum kbc_key_kind {
    KBC_KIND_PLUGIN,   /* a plugin name (config.c: resolve_plugin)        */
    KBC_KIND_VARIANTS, /* "all" or a list of variant names                */
    KBC_KIND_VARIANT,  /* one selected variant                            */
    KBC_KIND_MEASURE,  /* one typed value (param) stored into kbc_measure */
    KBC_KIND_PATHS,    /* a list of plugin folders or files               */
    KBC_KIND_TEXT      /* free text                                       */
} kbc_key_kind;

/* Where a key may be written (a bit mask). */
#define KBC_IN_GLOBAL 0x1u
#define KBC_IN_EXPERIMENT 0x2u
#define KBC_IN_ANY (KBC_IN_GLOBAL | KBC_IN_EXPERIMENT)

/* How a KBC_KIND_MEASURE value is stored into its kbc_measure field. */
typedef enum kbc_key_store {
    KBC_STORE_NONE,
    KBC_STORE_U32,    /* uint32_t from value.i */
    KBC_STORE_INT,    /* int from value.i      */
    KBC_STORE_U64,    /* uint64_t from value.u */
    KBC_STORE_DOUBLE  /* double from value.f   */
} kbc_key_store;

/* How a measure key's value is written, beyond its type (value.h). */
typedef enum kbc_key_syntax {
    KBC_SYNTAX_PLAIN,         /* the type's own syntax                      */
    KBC_SYNTAX_DURATION,      /* seconds, with an optional unit: 2, 2s, 500ms */
    KBC_SYNTAX_DURATION_AUTO, /* a duration, or auto (stored as 0)          */
    KBC_SYNTAX_COUNT_AUTO,    /* a count, or auto (stored as 0)             */
    KBC_SYNTAX_BATCH          /* off (0), auto (1), or a count from 2       */
} kbc_key_syntax;

/* The measure settings of an experiment, each the value of a core key. */
typedef struct kbc_measure {
    uint32_t warmup;
    uint32_t runs;
    double budget_s;
    int include_copies;
    uint64_t seed;
    int cpu_threads; /* 0: auto, every online CPU (kbc_cpu_threads)     */
    int cache_cold;  /* cache = cold: flush the L2 before every timed run */
    /* Stopping on noise (noise_pct > 0): at least min_runs timed runs and
       min_time_s seconds of them, then stop once the achieved noise is at
       most noise_pct percent, or at max_runs, or when the budget is spent.
       With noise_pct == 0, `runs` timed runs (or the budget). */
    uint32_t min_runs, max_runs;
    double noise_pct;
    double min_time_s;
    /* batch: 0 off (one run per timed sample), 1 auto (batch a CUDA
       variant whose single run takes under KBC_BATCH_AUTO_BELOW_S), or N
       >= 2 (N back-to-back runs per timed sample).  measure.h. */
    int batch;
    /* The watchdog of each point in seconds; 0: auto, derived from the
       budget (shard.h, kbc_job_timeout). */
    double timeout_s;
    /* energy: KBC_ENERGY_OFF, _AUTO (measured where NVML reads the energy
       counter) or _ON (also where it cannot, each row saying why);
       energy_window_s: the shortest window (cuda/energy.h); energy_windows:
       the windows a row keeps (KBC_ENERGY_WINDOWS .. KBC_ENERGY_MAX_KEPT). */
    int energy;
    double energy_window_s;
    uint32_t energy_windows;
    /* What a row whose timing is not of the work it verified becomes
       (docs/integrity.md): KBC_INTEGRITY_*. */
    int integrity;
    /* prefetch: KBC_PREFETCH_OFF or _AUTO (a worker makes the next point's
       host half while this one's GPU variants run; exec/prefetch.h). */
    int prefetch;
} kbc_measure;

/* The values of kbc_measure.prefetch: the index of the choice in
   kbc_key_prefetch. */
#define KBC_PREFETCH_OFF 0
#define KBC_PREFETCH_AUTO 1

/* The values of kbc_measure.energy: the index of the choice in
   kbc_key_energy (and of record.h's kbc_rec_energy.requested). */
#define KBC_ENERGY_OFF 0
#define KBC_ENERGY_AUTO 1
#define KBC_ENERGY_ON 2

/* Energy windows a CUDA row measures by default and at least (the key
   energy_windows asks for more); a window the counter spoils is replaced,
   up to KBC_ENERGY_SPARE_WINDOWS more in all. */
#define KBC_ENERGY_WINDOWS 5
#define KBC_ENERGY_MOST_WINDOWS 16 /* energy_windows' largest (a row keeps
                                      them all: record.h's KBC_ENERGY_MAX_KEPT) */
#define KBC_ENERGY_SPARE_WINDOWS 7

/* The seconds the energy windows of one CUDA variant take at a point
   whose run takes about run_s seconds (0 when unknown): energy_windows
   windows, each the longer of energy_window and one run; 0 when energy is
   off.  The dry run and the watchdog count them. */
double kbc_energy_seconds(const kbc_measure *m, double run_s);

/* The values of kbc_measure.integrity, in the order of the key's choices:
   strict fails such a row, warn keeps its status and says why in its
   reason, off runs none of the checks. */
enum kbc_integrity_mode { KBC_INTEGRITY_STRICT = 0, KBC_INTEGRITY_WARN = 1, KBC_INTEGRITY_OFF = 2 };

/* The values of kbc_measure.batch other than a count. */
#define KBC_BATCH_OFF 0
#define KBC_BATCH_AUTO 1

typedef struct kbc_core_key {
    const char *name;
    kbc_key_kind kind;
    unsigned where;      /* KBC_IN_* */
    const char *def;     /* the default as a user reads it ("required", "none");
                            NULL for a measure key, whose param says it  */
    const char *help;    /* one line; NULL for a measure key (param->help) */
    const kb_param *param; /* KBC_KIND_MEASURE: the typed declaration */
    kbc_key_store store;
    size_t offset;       /* offsetof(kbc_measure, field) */
    kbc_key_syntax syntax; /* KBC_KIND_MEASURE: how its value is written */
} kbc_core_key;

extern const kbc_core_key kbc_core_keys[];
extern const size_t kbc_n_core_keys;

/* The row named name, or NULL. */
const kbc_core_key *kbc_core_key_find(const char *name);

/* Stores a parsed value v of key k into the structure at measure (a
   kbc_measure); does nothing for keys that are not KBC_KIND_MEASURE. */
void kbc_core_key_store_value(const kbc_core_key *k, kb_value v, void *measure);

/* The `cache` key: hot (default) or cold (flush the L2 before each timed
   run, outside the timed region). */
extern const kb_param kbc_key_cache;

/* The `integrity` key: strict (default), warn or off (kbc_integrity_mode). */
extern const kb_param kbc_key_integrity;

/* The default and the help line of a row, from its param when it has one. */
/* The typed declarations of the measure keys (their names, types,
   defaults, ranges and help, as `kbench --help` and the docs show them). */
extern const kb_param kbc_key_warmup, kbc_key_runs, kbc_key_budget, kbc_key_seed,
    kbc_key_include_copies, kbc_key_cpu_threads, kbc_key_min_runs, kbc_key_max_runs,
    kbc_key_noise, kbc_key_min_time, kbc_key_batch, kbc_key_timeout, kbc_key_energy,
    kbc_key_energy_window, kbc_key_energy_windows, kbc_key_prefetch;

/* Parses the value of measure key k (its syntax, then its range).  Returns
   0, or -1 with why set to one clause, as kbc_value_parse does. */
int kbc_core_key_parse(const kbc_core_key *k, const char *text, kb_value *out, char *why,
                       size_t n);

/* The threads of a CPU variant: the configured count, or for auto (0)
   every online CPU. */
int kbc_cpu_threads(int configured);

const char *kbc_core_key_default(const kbc_core_key *k);
const char *kbc_core_key_help(const kbc_core_key *k);

/* Prints the table: one line per key, "  name  default  help". */
void kbc_core_keys_print(FILE *out);

#endif
