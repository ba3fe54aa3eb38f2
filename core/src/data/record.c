/* record.c -- see record.h. */
#include "record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "util.h"

void kbc_record_init(kbc_record *r)
{
    memset(r, 0, sizeof *r);
    r->outcome = KBC_SKIPPED;
    r->device_left_bytes = -1;
    r->processes_left = -1;
    r->wall_s = NAN;
    r->points = 1;
    r->check.error = NAN;
    r->check.tolerance = NAN;
    r->noise = NAN;
    kbc_stats_compute(NULL, 0, &r->time);
    r->gbps = r->gflops = r->items_per_s = r->ceiling_gbps = r->pct_ceiling = NAN;
    r->peak_gflops = r->pct_peak = NAN;
    kbc_clocks_start(&r->clocks, 0);
    r->mode.batch = 1;
    r->speedup_baseline = r->speedup_cpu = r->speedup_reference = NAN;
    kbc_rec_energy *en = &r->energy;
    en->window_s = en->j_per_run = en->j_lo = en->j_hi = en->watts = NAN;
    en->idle_w = en->power_limit_w = en->gb_per_j = en->gflops_per_j = NAN;
    en->throttled_s = NAN;
}

static const char *const energy_status_names[KBC_N_ENERGY_STATUS] = {
    "not_run", "measured", "cpu_variant", "cache_cold", "no_nvml", "unsupported",
    "counter_still", "counter_backwards", "counter_wrapped", "window_too_short"};

const char *kbc_energy_status_name(int status)
{
    return status >= 0 && status < KBC_N_ENERGY_STATUS ? energy_status_names[status]
                                                       : "unknown";
}

int kbc_energy_status_parse(const char *name)
{
    for (int i = 0; name && i < KBC_N_ENERGY_STATUS; i++)
        if (strcmp(name, energy_status_names[i]) == 0)
            return i;
    return -1;
}

const char *kbc_energy_requested_name(int requested)
{
    return requested == 1 ? "auto" : requested == 2 ? "on" : "off";
}

void kbc_record_free(kbc_record *r)
{
    free(r->samples);
    r->samples = NULL;
    r->n_samples = 0;
}

void kbc_records_free(kbc_record *recs, size_t n)
{
    for (size_t i = 0; recs && i < n; i++)
        kbc_record_free(&recs[i]);
    free(recs);
}

void kbc_record_set_samples(kbc_record *r, const double *x, size_t n)
{
    kbc_record_free(r);
    if (n == 0)
        return;
    r->samples = kbc_xmalloc(n * sizeof *r->samples);
    memcpy(r->samples, x, n * sizeof *x);
    r->n_samples = n;
}

size_t kbc_record_key(const kbc_record *r, char *buf, size_t n)
{
    size_t used = 0;
    int k;
    /* snprintf's return is what it would have written; keep counting past
       the buffer so that the caller learns the length it needs. */
#define KEY_PUT(...)                                                             \
    do {                                                                         \
        k = snprintf(used < n ? buf + used : NULL, used < n ? n - used : 0,      \
                     __VA_ARGS__);                                               \
        if (k > 0)                                                               \
            used += (size_t)k;                                                   \
    } while (0)
    if (n)
        buf[0] = '\0';
    KEY_PUT("%s/%s/", r->plugin, r->experiment);
    for (uint32_t i = 0; i < r->n_params; i++)
        KEY_PUT("%s%s=%s", i ? "," : "", r->params[i].name, r->params[i].text);
    KEY_PUT("/%s", r->variant);
#undef KEY_PUT
    return used;
}

const char *kbc_check_measure(const kbc_record *r)
{
    return r->check.measure[0] ? r->check.measure : NULL;
}

int kbc_integrity_flagged(const kbc_record *r)
{
    return strncmp(r->integrity, "flagged", 7) == 0;
}

static const char *const outcome_names[KBC_N_OUTCOMES] = {
    "pass", "FAIL", "error", "skipped", "crashed", "timeout", "invalid"};

int kbc_record_ran(const kbc_record *r)
{
    return (r->outcome == KBC_PASS || r->outcome == KBC_FAIL) && r->time.n > 0;
}

int kbc_record_has_energy(const kbc_record *r)
{
    const kbc_rec_energy *e = &r->energy;
    return kbc_record_ran(r) && e->status == KBC_ENERGY_MEASURED && e->windows > 0 &&
           isfinite(e->j_per_run) && e->j_per_run > 0;
}

int kbc_outcome_failed(int outcome)
{
    return outcome == KBC_FAIL || outcome == KBC_ERROR || outcome == KBC_CRASHED ||
           outcome == KBC_TIMEOUT;
}

const char *kbc_outcome_name(int outcome)
{
    if (outcome >= 0 && outcome < KBC_N_OUTCOMES)
        return outcome_names[outcome];
    return "unknown";
}

int kbc_outcome_parse(const char *name)
{
    for (int i = 0; i < KBC_N_OUTCOMES; i++)
        if (name && strcmp(name, outcome_names[i]) == 0)
            return i;
    return -1;
}

static const struct {
    uint32_t bit;
    const char *name;
} flag_names[] = {{KB_VARIANT_SYNCS, "syncs"},
                  {KB_VARIANT_NONDETERM, "nondeterm"},
                  {KB_VARIANT_LIBRARY, "library"}};

const char *kbc_flags_text(uint32_t flags, char *buf, size_t n)
{
    size_t used = 0;
    if (n)
        buf[0] = '\0';
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if ((flags & flag_names[i].bit) && used < n) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? "|" : "", flag_names[i].name);
            if (w > 0)
                used += (size_t)w;
        }
    return buf;
}

uint32_t kbc_flag_parse(const char *name)
{
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (strcmp(name, flag_names[i].name) == 0)
            return flag_names[i].bit;
    return 0;
}

void kbc_clocks_start(kbc_rec_clocks *c, unsigned sm_max_mhz)
{
    memset(c, 0, sizeof *c);
    c->sm_max_mhz = sm_max_mhz;
    c->power_max_w = NAN;
}

void kbc_clocks_add(kbc_rec_clocks *c, const kbc_clock_sample *s, int after)
{
    if (!s->known)
        return;
    if (after)
        c->after = *s;
    else
        c->before = *s;
    c->n++;
    c->known |= s->known;
    if ((s->known & KBC_CLK_SM) && (c->sm_min_mhz == 0 || s->sm_mhz < c->sm_min_mhz))
        c->sm_min_mhz = s->sm_mhz;
    if ((s->known & KBC_CLK_TEMP) && s->temp_c > c->temp_max_c)
        c->temp_max_c = s->temp_c;
    if ((s->known & KBC_CLK_POWER) && !(s->power_w <= c->power_max_w))
        c->power_max_w = s->power_w; /* the first reading replaces the NaN */
    if (s->known & KBC_CLK_REASONS)
        c->reasons |= s->reasons;
    c->throttled = (c->reasons & KBC_THROTTLE_MASK) != 0;
    /* Integer arithmetic: 1781 of 1980 MHz is below 90% (1782), 1782 is not. */
    c->low_clock = c->sm_max_mhz > 0 && (c->known & KBC_CLK_SM) &&
                   (uint64_t)c->sm_min_mhz * 10 < (uint64_t)c->sm_max_mhz * 9;
}

static const struct {
    uint64_t bit;
    const char *name;
} reason_names[] = {{KBC_REASON_GPU_IDLE, "gpu_idle"},
                    {KBC_REASON_APP_CLOCKS, "app_clocks"},
                    {KBC_REASON_SW_POWER_CAP, "sw_power_cap"},
                    {KBC_REASON_HW_SLOWDOWN, "hw_slowdown"},
                    {KBC_REASON_SYNC_BOOST, "sync_boost"},
                    {KBC_REASON_SW_THERMAL, "sw_thermal"},
                    {KBC_REASON_HW_THERMAL, "hw_thermal"},
                    {KBC_REASON_HW_POWER_BRAKE, "hw_power_brake"},
                    {KBC_REASON_DISPLAY_CLOCK, "display_clock"}};
#define N_REASON_NAMES (sizeof reason_names / sizeof reason_names[0])

const char *kbc_clock_reasons_text(uint64_t reasons, const char *sep, char *buf, size_t n)
{
    size_t used = 0;
    if (n)
        buf[0] = '\0';
    uint64_t named = 0;
    for (size_t i = 0; i < N_REASON_NAMES; i++) {
        named |= reason_names[i].bit;
        if ((reasons & reason_names[i].bit) && used < n) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? sep : "", reason_names[i].name);
            if (w > 0)
                used += (size_t)w;
        }
    }
    /* A bit a newer driver added is kept, by its value. */
    for (int b = 0; b < 64; b++) {
        uint64_t bit = 1ULL << b;
        if ((reasons & bit) && !(named & bit) && used < n) {
            int w = snprintf(buf + used, n - used, "%s0x%llx", used ? sep : "",
                             (unsigned long long)bit);
            if (w > 0)
                used += (size_t)w;
        }
    }
    return buf;
}

uint64_t kbc_clock_reason_parse(const char *name)
{
    for (size_t i = 0; i < N_REASON_NAMES; i++)
        if (strcmp(name, reason_names[i].name) == 0)
            return reason_names[i].bit;
    if (strncmp(name, "0x", 2) == 0) {
        char *end = NULL;
        unsigned long long v = strtoull(name + 2, &end, 16);
        if (end && !*end && v && (v & (v - 1)) == 0)
            return (uint64_t)v;
    }
    return 0;
}

double kbc_param_number(const kbc_rec_param *q)
{
    switch (q->type) {
    case KB_PARAM_SIZE:
        return (double)q->value.u;
    case KB_PARAM_INT:
        return (double)q->value.i;
    case KB_PARAM_FLOAT:
        return q->value.f;
    default:
        return NAN;
    }
}

void kbc_record_group(const kbc_record *r, const char *x, const char *sep, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < r->n_params && used < n; i++) {
        const kbc_rec_param *q = &r->params[i];
        if (!q->swept || (x && strcmp(q->name, x) == 0))
            continue;
        int w = snprintf(buf + used, n - used, "%s%s=%s", used ? sep : "", q->name, q->text);
        if (w > 0)
            used += (size_t)w;
    }
}

void kbc_cuda_version_text(int v, char *buf, size_t n)
{
    if (v > 0)
        snprintf(buf, n, "%d.%d", v / 1000, v % 1000 / 10);
    else if (n)
        buf[0] = '\0';
}

const char *kbc_outcome_sgr(int outcome)
{
    switch (outcome) {
    case KBC_PASS:
        return KBC_SGR_GOOD;
    case KBC_SKIPPED:
        return KBC_SGR_WARN;
    case KBC_INVALID:
        return KBC_SGR_DIM;
    default:
        return kbc_outcome_failed(outcome) ? KBC_SGR_BAD : "";
    }
}
