/*
 * core_keys.c -- the table of core keys (see core_keys.h).
 *
 * The typed measure keys are declared here with their types, defaults and
 * ranges (kb_param, as a plugin declares its parameters), and each row says
 * how its value is written beyond its type: a duration with a unit, auto,
 * off (kbc_key_syntax).  kbc_core_key_parse reads them; value.c knows
 * nothing of core keys.
 */
#include "core_keys.h"

#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util.h"
#include "value.h"

const kb_param kbc_key_warmup = {
    .name = "warmup", .type = KB_PARAM_INT, .def = "3", .min = 0, .max = 1e6,
    .help = "untimed runs of each variant before the timed ones"};
const kb_param kbc_key_runs = {
    .name = "runs", .type = KB_PARAM_INT, .def = "20", .min = 1, .max = 1e7,
    .help = "timed runs of each variant per point"};
const kb_param kbc_key_budget = {
    .name = "budget", .type = KB_PARAM_FLOAT, .def = "10", .min = 1e-6, .max = 1e6,
    .help = "seconds of timed runs per variant before stopping early (a trailing s or ms is "
            "allowed)"};
const kb_param kbc_key_min_runs = {
    .name = "min_runs", .type = KB_PARAM_INT, .def = "5", .min = 1, .max = 1e7,
    .help = "with noise: timed runs before the noise is judged"};
const kb_param kbc_key_max_runs = {
    .name = "max_runs", .type = KB_PARAM_INT, .def = "1000", .min = 1, .max = 1e7,
    .help = "with noise: the most timed runs (budget stays the cap too)"};
const kb_param kbc_key_noise = {
    .name = "noise", .type = KB_PARAM_FLOAT, .def = "0", .min = 0, .max = 100,
    .help = "target noise in percent: stop once the 95% interval of the median is within "
            "+-noise% (0: off, time `runs` runs)"};
const kb_param kbc_key_min_time = {
    .name = "min_time", .type = KB_PARAM_FLOAT, .def = "0", .min = 0, .max = 1e6,
    .help = "with noise: seconds of timed runs before the noise is judged (s or ms allowed)"};
/* auto is stored as 0: the supervisor derives each point's watchdog from
   its budget (shard.h, kbc_job_timeout).  A written 0 is refused. */
const kb_param kbc_key_timeout = {
    .name = "timeout", .type = KB_PARAM_FLOAT, .def = "auto", .min = 1e-3, .max = 1e6,
    .help = "seconds a point may run before its worker is stopped and the point recorded as "
            "timeout (auto: 300 s plus twice the point's budget; s or ms allowed)"};
/* The seed's maximum is 2^64, above every size, so that the range check
   (skipped when min > max) still refuses 0. */
const kb_param kbc_key_seed = {
    .name = "seed", .type = KB_PARAM_SIZE, .def = "1", .min = 1, .max = 18446744073709551616.0,
    .help = "seed of the generated inputs"};
const kb_param kbc_key_include_copies = {
    .name = "include_copies", .type = KB_PARAM_BOOL, .def = "false", .min = 1, .max = 0,
    .help = "time host-device copies together with the kernel"};
/* auto is stored as 0 and resolved where the threads are made
   (kbc_cpu_threads), so that a plan means the same on every machine. */
const kb_param kbc_key_cpu_threads = {
    .name = "cpu_threads", .type = KB_PARAM_INT, .def = "auto", .min = 1, .max = 4096,
    .help = "threads of the parallel CPU variants (auto: every online CPU)"};

/* batch: off (0), auto (1) or a count of at least 2, so that the stored
   integer says everything; the range admits 0 and 1 for off and auto, and
   the parser refuses them written as numbers (kbc_core_key_parse). */
const kb_param kbc_key_batch = {
    .name = "batch", .type = KB_PARAM_INT, .def = "off", .min = 0, .max = 100000,
    .help = "off, auto, or N: time N back-to-back runs of a CUDA variant between one pair of "
            "events (auto: when one run takes under 20 us)"};

/* energy's choices in the order of KBC_ENERGY_OFF, _AUTO, _ON. */
static const char *const energy_choices[] = {"off", "auto", "on"};
const kb_param kbc_key_energy = {
    .name = "energy", .type = KB_PARAM_ENUM, .def = "off", KB_CHOICES(energy_choices),
    .help = "off, auto or on: after the timed runs, joules per run of each CUDA variant from "
            "NVML's energy counter (auto: where NVML reads it; docs/energy.md)"};
/* The counter moves every 20-100 ms on Hopper, so a window much under a
   second is coarse; shorter ones are allowed (a row whose counter did not
   move says so) but not below a millisecond. */
const kb_param kbc_key_energy_window = {
    .name = "energy_window", .type = KB_PARAM_FLOAT, .def = "1", .min = 1e-3, .max = 3600,
    .help = "with energy: the shortest energy window, each of back-to-back runs (s or ms "
            "allowed)"};
/* Five windows give an interval from the lowest to the highest; more give
   one inside them, and compare's bootstrap more to resample (docs/energy.md,
   "Comparing energy"). */
const kb_param kbc_key_energy_windows = {
    .name = "energy_windows", .type = KB_PARAM_INT, .def = "5", .min = KBC_ENERGY_WINDOWS,
    .max = KBC_ENERGY_MOST_WINDOWS,
    .help = "with energy: the energy windows each CUDA row keeps (more: a tighter interval "
            "and comparison, and more time)"};

/* prefetch's choices in the order of KBC_PREFETCH_OFF, _AUTO. */
static const char *const prefetch_choices[] = {"off", "auto"};
const kb_param kbc_key_prefetch = {
    .name = "prefetch", .type = KB_PARAM_ENUM, .def = "auto", KB_CHOICES(prefetch_choices),
    .help = "auto or off: make a point's inputs and reference on the CPU while the point "
            "before it runs on the GPU, where its plugin can (docs/plugins.md, Prefetch)"};

static const char *const cache_choices[] = {"hot", "cold"};

const kb_param kbc_key_cache = {
    .name = "cache", .type = KB_PARAM_ENUM, .def = "hot", KB_CHOICES(cache_choices),
    .help = "cold flushes the L2 before every timed run, outside the timed region"};

/* The order is kbc_integrity_mode's: strict (0, the default), warn, off. */
static const char *const integrity_choices[] = {"strict", "warn", "off"};

const kb_param kbc_key_integrity = {
    .name = "integrity", .type = KB_PARAM_ENUM, .def = "strict",
    KB_CHOICES(integrity_choices),
    .help = "strict fails a row whose timing is not of the work it verified (docs/integrity.md); "
            "warn keeps it with the flag; off checks nothing"};

#define MEASURE(key, st, field)                                                                \
    .kind = KBC_KIND_MEASURE, .param = &(key), .store = (st),                                  \
    .offset = offsetof(kbc_measure, field)
#define SYNTAX(s) .syntax = KBC_SYNTAX_##s

/* The order is the order of docs/ini-format.md and of `kbench --help`. */
const kbc_core_key kbc_core_keys[] = {
    {.name = "plugin", .kind = KBC_KIND_PLUGIN, .where = KBC_IN_ANY, .def = "required",
     .help = "the plugin (family) to run, as listed by `kbench list`"},
    {.name = "variants", .kind = KBC_KIND_VARIANTS, .where = KBC_IN_ANY, .def = "all",
     .help = "all, or a list of variant names"},
    {.name = "baseline", .kind = KBC_KIND_VARIANT, .where = KBC_IN_ANY,
     .def = "the first selected", .help = "the selected variant speed-ups are measured against"},
    {.name = "reference", .kind = KBC_KIND_VARIANT, .where = KBC_IN_ANY, .def = "none",
     .help = "a selected variant to compare with (a library, usually)"},
    /* The measure settings: parsed with param, stored into kbc_measure. */
    {.name = "warmup", .where = KBC_IN_ANY, MEASURE(kbc_key_warmup, KBC_STORE_U32, warmup)},
    {.name = "runs", .where = KBC_IN_ANY, MEASURE(kbc_key_runs, KBC_STORE_U32, runs)},
    {.name = "budget", .where = KBC_IN_ANY,
     MEASURE(kbc_key_budget, KBC_STORE_DOUBLE, budget_s), SYNTAX(DURATION)},
    {.name = "min_runs", .where = KBC_IN_ANY,
     MEASURE(kbc_key_min_runs, KBC_STORE_U32, min_runs)},
    {.name = "max_runs", .where = KBC_IN_ANY,
     MEASURE(kbc_key_max_runs, KBC_STORE_U32, max_runs)},
    {.name = "noise", .where = KBC_IN_ANY, MEASURE(kbc_key_noise, KBC_STORE_DOUBLE, noise_pct)},
    {.name = "min_time", .where = KBC_IN_ANY,
     MEASURE(kbc_key_min_time, KBC_STORE_DOUBLE, min_time_s), SYNTAX(DURATION)},
    {.name = "seed", .where = KBC_IN_ANY, MEASURE(kbc_key_seed, KBC_STORE_U64, seed)},
    {.name = "include_copies", .where = KBC_IN_ANY,
     MEASURE(kbc_key_include_copies, KBC_STORE_INT, include_copies)},
    {.name = "cpu_threads", .where = KBC_IN_ANY,
     MEASURE(kbc_key_cpu_threads, KBC_STORE_INT, cpu_threads), SYNTAX(COUNT_AUTO)},
    {.name = "cache", .where = KBC_IN_ANY, MEASURE(kbc_key_cache, KBC_STORE_INT, cache_cold)},
    {.name = "batch", .where = KBC_IN_ANY, MEASURE(kbc_key_batch, KBC_STORE_INT, batch),
     SYNTAX(BATCH)},
    {.name = "timeout", .where = KBC_IN_ANY,
     MEASURE(kbc_key_timeout, KBC_STORE_DOUBLE, timeout_s), SYNTAX(DURATION_AUTO)},
    {.name = "energy", .where = KBC_IN_ANY, MEASURE(kbc_key_energy, KBC_STORE_INT, energy)},
    {.name = "energy_window", .where = KBC_IN_ANY,
     MEASURE(kbc_key_energy_window, KBC_STORE_DOUBLE, energy_window_s), SYNTAX(DURATION)},
    {.name = "energy_windows", .where = KBC_IN_ANY,
     MEASURE(kbc_key_energy_windows, KBC_STORE_U32, energy_windows)},
    {.name = "integrity", .where = KBC_IN_ANY,
     MEASURE(kbc_key_integrity, KBC_STORE_INT, integrity)},
    {.name = "prefetch", .where = KBC_IN_ANY,
     MEASURE(kbc_key_prefetch, KBC_STORE_INT, prefetch)},
    {.name = "zip", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY, .def = "none",
     .help = "swept parameters that advance together instead of making their cross product "
             "(zip = m, n, k: m = n = k at each point; their sweeps must be equally long)"},
    {.name = "description", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY, .def = "none",
     .help = "free text, carried into the reports"},
    /* kbench tune's keys (docs/tune.md); kbench run reads none of them. */
    {.name = "tune", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY, .def = "none",
     .help = "kbench tune: the search strategy (exhaustive, random, local, anneal, auto); the "
             "swept parameters and the variants are the search space"},
    {.name = "constrain", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY, .def = "none",
     .help = "kbench tune: a C-like expression the candidates must satisfy "
             "(block_x * block_y <= 1024)"},
    {.name = "objective", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY, .def = "time",
     .help = "kbench tune: time (the lowest median), rate (the highest median rate), energy "
             "(the fewest joules per run) or edp (joules per run times the median); energy "
             "and edp need energy = on"},
    {.name = "tune_budget", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY,
     .def = "all (exhaustive), else a quarter of the space",
     .help = "kbench tune: evaluations per problem (40), or a duration (90s, 5min)"},
    {.name = "tune_seed", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY, .def = "1",
     .help = "kbench tune: the seed of the random strategies"},
    {.name = "tune_problem", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY,
     .def = "the swept size parameters",
     .help = "kbench tune: swept parameters whose values are separate problems, each tuned on "
             "its own"},
    {.name = "tune_screen", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY, .def = "3",
     .help = "kbench tune: timed runs of each candidate during the search (off: the full "
             "measure settings)"},
    {.name = "tune_top", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY, .def = "3",
     .help = "kbench tune: the best candidates measured again with the full measure settings"},
    {.name = "gpus", .kind = KBC_KIND_TEXT, .where = KBC_IN_GLOBAL, .def = "one GPU",
     .help = "the GPUs kbench run uses, one worker each: all, or NVML indices or UUIDs "
             "(as --gpus, which wins)"},
    {.name = "plugin_path", .kind = KBC_KIND_PATHS, .where = KBC_IN_GLOBAL, .def = "none",
     .help = "extra plugin folders or files, separated by : or ,"},
};

const size_t kbc_n_core_keys = sizeof kbc_core_keys / sizeof kbc_core_keys[0];

const kbc_core_key *kbc_core_key_find(const char *name)
{
    for (size_t i = 0; name && i < kbc_n_core_keys; i++)
        if (strcmp(kbc_core_keys[i].name, name) == 0)
            return &kbc_core_keys[i];
    return NULL;
}

const char *kbc_core_key_default(const kbc_core_key *k)
{
    return k->param ? k->param->def : k->def;
}

const char *kbc_core_key_help(const kbc_core_key *k)
{
    return k->param && k->param->help ? k->param->help : k->help ? k->help : "";
}

void kbc_core_key_store_value(const kbc_core_key *k, kb_value v, void *measure)
{
    if (k->kind != KBC_KIND_MEASURE)
        return;
    char *at = (char *)measure + k->offset;
    switch (k->store) {
    case KBC_STORE_U32: {
        uint32_t x = (uint32_t)v.i;
        memcpy(at, &x, sizeof x);
        break;
    }
    case KBC_STORE_INT: {
        int x = (int)v.i;
        memcpy(at, &x, sizeof x);
        break;
    }
    case KBC_STORE_U64:
        memcpy(at, &v.u, sizeof v.u);
        break;
    case KBC_STORE_DOUBLE:
        memcpy(at, &v.f, sizeof v.f);
        break;
    case KBC_STORE_NONE:
        break;
    }
}

void kbc_core_keys_print(FILE *out)
{
    int wn = 0, wd = 0;
    for (size_t i = 0; i < kbc_n_core_keys; i++) {
        int n = (int)strlen(kbc_core_keys[i].name);
        int d = (int)strlen(kbc_core_key_default(&kbc_core_keys[i]));
        wn = n > wn ? n : wn;
        wd = d > wd ? d : wd;
    }
    for (size_t i = 0; i < kbc_n_core_keys; i++) {
        const kbc_core_key *k = &kbc_core_keys[i];
        fprintf(out, "  %-*s  %-*s  %s%s\n", wn, k->name, wd, kbc_core_key_default(k), kbc_core_key_help(k),
                k->where == KBC_IN_GLOBAL ? " ([global] only)" : "");
    }
}

static void say(char *why, size_t n, const char *fmt, ...) KB_PRINTF(3, 4);

static void say(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
}

/* Seconds with an optional unit: "500ms", "2s", "2". */
static int parse_duration(const char *s, double *out, char *why, size_t n)
{
    size_t len = strlen(s);
    char tmp[128];
    double scale = 1;
    if (len > 2 && strcasecmp(s + len - 2, "ms") == 0) {
        len -= 2;
        scale = 1e-3;
    } else if (len > 1 && (s[len - 1] == 's' || s[len - 1] == 'S')) {
        len -= 1;
    }
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    if (len >= sizeof tmp) {
        say(why, n, "'%s' is not a number", s);
        return -1;
    }
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    if (kbc_parse_float(tmp, out, why, n) != 0) {
        say(why, n, "'%s' is not a duration (use seconds, e.g. 2, 2s or 500ms)", s);
        return -1;
    }
    *out *= scale;
    return 0;
}

int kbc_core_key_parse(const kbc_core_key *k, const char *text, kb_value *out, char *why,
                       size_t n)
{
    if (!k->param) {
        say(why, n, "'%s' takes no typed value", k->name);
        return -1;
    }
    if (!text) {
        say(why, n, "there is no value");
        return -1;
    }
    char *s = kbc_trim_dup(text);
    kb_value v = {0};
    int rc, ranged = 1;
    int is_auto = strcasecmp(s, "auto") == 0;
    switch (k->syntax) {
    case KBC_SYNTAX_DURATION:
        rc = *s ? parse_duration(s, &v.f, why, n) : kbc_value_parse_plain(k->param, s, &v, why, n);
        break;
    case KBC_SYNTAX_DURATION_AUTO:
        if (is_auto) {
            v.f = 0;
            rc = 0;
            ranged = 0;
        } else {
            rc = *s ? parse_duration(s, &v.f, why, n)
                    : kbc_value_parse_plain(k->param, s, &v, why, n);
        }
        break;
    case KBC_SYNTAX_COUNT_AUTO:
        if (is_auto) {
            v.i = 0;
            rc = 0;
            ranged = 0;
        } else {
            rc = kbc_value_parse_plain(k->param, s, &v, why, n);
        }
        break;
    case KBC_SYNTAX_BATCH:
        ranged = 0;
        if (strcasecmp(s, "off") == 0) {
            v.i = KBC_BATCH_OFF;
            rc = 0;
        } else if (is_auto) {
            v.i = KBC_BATCH_AUTO;
            rc = 0;
        } else if (kbc_parse_int(s, &v.i, why, n) != 0 || v.i < 2 || v.i > k->param->max) {
            say(why, n, "'%s' is not off, auto or a number of runs per sample from 2 to %g", s,
                k->param->max);
            rc = -1;
        } else {
            rc = 0;
        }
        break;
    default:
        rc = kbc_value_parse_plain(k->param, s, &v, why, n);
    }
    if (rc == 0 && ranged)
        rc = kbc_value_check_range(k->param, v, why, n);
    if (rc == 0)
        *out = v;
    free(s);
    return rc;
}

double kbc_energy_seconds(const kbc_measure *m, double run_s)
{
    if (m->energy == KBC_ENERGY_OFF)
        return 0.0;
    double w = m->energy_window_s;
    if (run_s > w && isfinite(run_s))
        w = run_s;
    return (m->energy_windows ? m->energy_windows : KBC_ENERGY_WINDOWS) * w;
}

int kbc_cpu_threads(int configured)
{
    if (configured > 0)
        return configured;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 4096 ? 4096 : (int)cpus;
}
