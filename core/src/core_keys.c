/*
 * core_keys.c -- the table of core keys (see core_keys.h).
 *
 * The typed measure keys (warmup ... cpu_threads) are parsed with the
 * declarations in sweep.c, which also knows their special syntaxes (a
 * duration for budget, auto for cpu_threads, off and auto for batch); cache
 * is declared here.
 */
#include "core_keys.h"

#include <string.h>

#include "config.h"
#include "sweep.h"

static const char *const cache_choices[] = {"hot", "cold"};

const kb_param kbc_key_cache = {
    .name = "cache", .type = KB_PARAM_ENUM, .def = "hot", KB_CHOICES(cache_choices),
    .help = "cold flushes the L2 before every timed run, outside the timed region"};

#define MEASURE(key, st, field)                                                                \
    .kind = KBC_KIND_MEASURE, .param = &(key), .store = (st),                                  \
    .offset = offsetof(kbc_measure, field)

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
     MEASURE(kbc_key_budget, KBC_STORE_DOUBLE, budget_s)},
    {.name = "min_runs", .where = KBC_IN_ANY,
     MEASURE(kbc_key_min_runs, KBC_STORE_U32, min_runs)},
    {.name = "max_runs", .where = KBC_IN_ANY,
     MEASURE(kbc_key_max_runs, KBC_STORE_U32, max_runs)},
    {.name = "noise", .where = KBC_IN_ANY, MEASURE(kbc_key_noise, KBC_STORE_DOUBLE, noise_pct)},
    {.name = "min_time", .where = KBC_IN_ANY,
     MEASURE(kbc_key_min_time, KBC_STORE_DOUBLE, min_time_s)},
    {.name = "seed", .where = KBC_IN_ANY, MEASURE(kbc_key_seed, KBC_STORE_U64, seed)},
    {.name = "include_copies", .where = KBC_IN_ANY,
     MEASURE(kbc_key_include_copies, KBC_STORE_INT, include_copies)},
    {.name = "cpu_threads", .where = KBC_IN_ANY,
     MEASURE(kbc_key_cpu_threads, KBC_STORE_INT, cpu_threads)},
    {.name = "cache", .where = KBC_IN_ANY, MEASURE(kbc_key_cache, KBC_STORE_INT, cache_cold)},
    {.name = "batch", .where = KBC_IN_ANY, MEASURE(kbc_key_batch, KBC_STORE_INT, batch)},
    {.name = "timeout", .where = KBC_IN_ANY,
     MEASURE(kbc_key_timeout, KBC_STORE_DOUBLE, timeout_s)},
    {.name = "description", .kind = KBC_KIND_TEXT, .where = KBC_IN_ANY, .def = "none",
     .help = "free text, carried into the reports"},
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
