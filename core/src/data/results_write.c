/*
 * results_write.c -- one JSON document per run: which kbench, which machine,
 * the expanded configuration, and every row.
 *
 * The document is kept in memory and written whole to PATH.tmp, then
 * renamed over PATH, at begin(), after the first point, after later points
 * or on a tick while the run waits (see json_due for how often) and at
 * end().  A rename within one folder
 * is atomic, so whoever reads PATH (a person, a script, a run that crashed
 * half way) always finds a complete document.  Until end() has run,
 * "exit_code" and "finished" are null, which is how a reader tells a
 * cut-short run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "results_write.h"
#include "record_json.h"
#include "text.h"
#include "version.h"
#include "util.h"

typedef struct json_ctx {
    char *path;
    char *tmp;
    json_t *doc;     /* the whole document */
    json_t *results; /* borrowed: doc's "results" array */
    int failed;      /* a write failed: nothing more is written           */
    char why[1200];  /* its sentence (error())                            */
    int writes;      /* documents written so far                          */
    double last_end; /* kbc_now() when the last write finished            */
    double last_cost;/* seconds the last write took                       */
    double started;  /* kbc_now() when the first write began              */
    double spent;    /* seconds all writes took                           */
    size_t written;  /* rows in the document PATH holds                   */
    const kbc_machine *machine; /* begin()'s, read again at end() for the
                                   end's CPU facts (kbc_run_info)         */
} json_ctx;

/* A number, or null for NaN and infinities (which JSON cannot spell and
   jansson refuses). */
static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *u64(uint64_t x)
{
    /* jansson's integers are signed 64-bit; anything larger is kept as a
       real rather than wrapped to a negative number. */
    return x <= (uint64_t)INT64_MAX ? json_integer((json_int_t)x) : json_real((double)x);
}

/* Text from outside kbench (a name, a reason, a description, a path) as a
   JSON string.  jansson makes no string of text that is not UTF-8, so the
   value, and the key it was for, would vanish from the file without a
   word: instead each byte that is not part of well-formed UTF-8 becomes
   U+FFFD, and the first such text of the process is named on stderr. */
static json_t *jtext(const char *s)
{
    char *fixed = kbc_text_utf8(s);
    if (!fixed)
        return json_string(s);
    static int said;
    if (!said++)
        fprintf(stderr,
                "kbench: \"%s\" is not UTF-8; the JSON has U+FFFD for each byte that is not "
                "(said once)\n",
                kbc_text_visible(s));
    json_t *v = json_string(fixed);
    free(fixed);
    return v;
}

/* o[key] = v, the key made UTF-8 as jtext() does. */
static void jset(json_t *o, const char *key, json_t *v)
{
    json_t *k = jtext(key);
    json_object_set_new(o, json_string_value(k), v);
    json_decref(k);
}

static json_t *str_or_null(const char *s)
{
    return s ? jtext(s) : json_null();
}

static json_t *cuda_version(int v)
{
    if (v <= 0)
        return json_null();
    char buf[32];
    kbc_cuda_version_text(v, buf, sizeof buf);
    return json_string(buf);
}

static json_t *utc_now(void)
{
    char buf[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(buf);
}

static json_t *reasons_json(uint64_t reasons)
{
    json_t *a = json_array();
    char buf[400];
    kbc_clock_reasons_text(reasons, ",", buf, sizeof buf);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        json_array_append_new(a, json_string(t));
    return a;
}

/* One NVML reading: only the fields that were read, the reasons as names. */
static json_t *sample_json(const kbc_clock_sample *s)
{
    if (!s->known)
        return json_null();
    json_t *o = json_object();
    if (s->known & KBC_CLK_SM)
        json_object_set_new(o, "sm_mhz", json_integer(s->sm_mhz));
    if (s->known & KBC_CLK_MEM)
        json_object_set_new(o, "mem_mhz", json_integer(s->mem_mhz));
    if (s->known & KBC_CLK_TEMP)
        json_object_set_new(o, "temp_c", json_integer(s->temp_c));
    if (s->known & KBC_CLK_POWER)
        json_object_set_new(o, "power_w", num(s->power_w));
    if (s->known & KBC_CLK_REASONS)
        json_object_set_new(o, "reasons", reasons_json(s->reasons));
    return o;
}

static json_t *gflops_or_null(double x)
{
    return x > 0 ? num(x) : json_null();
}

/* machine.cpu: the host's CPU and its load around the run (cpu_facts.h);
   null where not known (an end's fact until the run ends). */
static json_t *cpu_json(const kbc_cpu_facts *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "model", f->model[0] ? jtext(f->model) : json_null());
    json_object_set_new(o, "governor", f->governor[0] ? jtext(f->governor) : json_null());
    json_object_set_new(o, "mhz", isfinite(f->mhz) && f->mhz > 0 ? num(f->mhz) : json_null());
    json_object_set_new(o, "load_before", isfinite(f->load_before) ? num(f->load_before)
                                                                   : json_null());
    json_object_set_new(o, "load_after", isfinite(f->load_after) ? num(f->load_after)
                                                                 : json_null());
    json_object_set_new(o, "cpu_seconds", isfinite(f->cpu_s) ? num(f->cpu_s) : json_null());
    json_object_set_new(o, "wall_seconds", isfinite(f->wall_s) ? num(f->wall_s) : json_null());
    return o;
}

static json_t *machine_json(const kbc_run_info *info)
{
    const kbc_machine *m = info->machine;
    const kbc_ceilings *k = &info->ceilings;
    json_t *o = json_object();
    if (!m)
        return o;
    int g = m->has_gpu;
    json_object_set_new(o, "has_gpu", json_boolean(g));
    json_object_set_new(o, "reason", g ? json_null() : jtext(m->no_gpu_reason));
    json_object_set_new(o, "gpu", g ? jtext(m->name) : json_null());
    if (g) {
        char cc[32];
        snprintf(cc, sizeof cc, "%d.%d", m->cc_major, m->cc_minor);
        json_object_set_new(o, "cc", json_string(cc));
    } else {
        json_object_set_new(o, "cc", json_null());
    }
    json_object_set_new(o, "device", g ? json_integer(m->device) : json_null());
    json_object_set_new(o, "sm_count", g ? json_integer(m->sm_count) : json_null());
    json_t *clocks = json_object();
    json_object_set_new(clocks, "sm", g ? json_integer(m->clock_khz) : json_null());
    json_object_set_new(clocks, "memory", g ? json_integer(m->mem_clock_khz) : json_null());
    json_object_set_new(o, "clocks_khz", clocks);
    json_object_set_new(o, "memory_bytes", g ? u64(m->mem_bytes) : json_null());
    json_object_set_new(o, "l2_bytes", g ? u64(m->l2_bytes) : json_null());
    /* Driver and runtime may be known without a usable device (that is
       often the reason there is none), so they do not depend on has_gpu. */
    json_object_set_new(o, "driver_version",
                        m->driver_version > 0 ? json_integer(m->driver_version) : json_null());
    json_object_set_new(o, "driver_version_string", cuda_version(m->driver_version));
    json_object_set_new(o, "runtime_version",
                        m->runtime_version > 0 ? json_integer(m->runtime_version) : json_null());
    json_object_set_new(o, "runtime_version_string", cuda_version(m->runtime_version));
    json_object_set_new(o, "host", jtext(m->host));
    json_object_set_new(o, "cpu_threads", json_integer(m->cpu_threads));
    json_object_set_new(o, "cpu", cpu_json(&m->cpu));
    /* The three ceilings of the device the CUDA rows ran on (null where
       not measured); copy_gbps keeps its old place and meaning. */
    json_object_set_new(o, "copy_gbps", k->copy_gbps > 0 ? num(k->copy_gbps) : json_null());
    json_t *c = json_object();
    json_object_set_new(c, "read_gbps", k->read_gbps > 0 ? num(k->read_gbps) : json_null());
    json_object_set_new(c, "write_gbps", k->write_gbps > 0 ? num(k->write_gbps) : json_null());
    json_object_set_new(c, "copy_gbps", k->copy_gbps > 0 ? num(k->copy_gbps) : json_null());
    json_object_set_new(c, "fp32_gflops", gflops_or_null(info->flops.fp32_gflops));
    json_object_set_new(c, "tf32_gflops", gflops_or_null(info->flops.tf32_gflops));
    json_object_set_new(c, "bf16_gflops", gflops_or_null(info->flops.bf16_gflops));
    json_object_set_new(o, "ceilings", c);
    /* The clock readings (NVML): their maxima, and one reading after the
       ceilings; or why there are none. */
    json_t *nv = json_object();
    json_object_set_new(nv, "available", json_boolean(info->clocks_known));
    json_object_set_new(nv, "reason", info->clocks_known ? json_null()
                                                         : str_or_null(info->clocks_why));
    json_object_set_new(nv, "sm_max_mhz",
                        info->sm_max_mhz ? json_integer(info->sm_max_mhz) : json_null());
    json_object_set_new(nv, "mem_max_mhz",
                        info->mem_max_mhz ? json_integer(info->mem_max_mhz) : json_null());
    json_object_set_new(nv, "at_start", sample_json(&info->clocks_at_start));
    json_object_set_new(o, "nvml", nv);
    return o;
}

/* batch as written in an INI file: "off", "auto" or the count. */
static json_t *batch_json(int batch)
{
    return batch == 0 ? json_string("off") : batch == 1 ? json_string("auto") : json_integer(batch);
}

static json_t *experiment_json(const kbc_exp_info *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", jtext(e->name));
    json_object_set_new(o, "line", json_integer(e->line));
    json_object_set_new(o, "description", str_or_null(e->description));
    json_object_set_new(o, "plugin", jtext(e->plugin));
    json_object_set_new(o, "plugin_file", str_or_null(e->plugin_file));
    json_t *vs = json_array();
    for (size_t i = 0; i < e->n_variants; i++)
        json_array_append_new(vs, jtext(e->variants[i]));
    json_object_set_new(o, "variants", vs);
    json_object_set_new(o, "baseline", str_or_null(e->baseline));
    json_object_set_new(o, "reference", str_or_null(e->reference));
    json_t *m = json_object();
    json_object_set_new(m, "warmup", json_integer(e->warmup));
    json_object_set_new(m, "runs", json_integer(e->runs));
    json_object_set_new(m, "budget_s", num(e->budget_s));
    json_object_set_new(m, "noise_pct", num(e->noise_pct));
    json_object_set_new(m, "min_runs", json_integer(e->min_runs));
    json_object_set_new(m, "max_runs", json_integer(e->max_runs));
    json_object_set_new(m, "min_time_s", num(e->min_time_s));
    json_object_set_new(m, "include_copies", json_boolean(e->include_copies));
    json_object_set_new(m, "seed", u64(e->seed));
    json_object_set_new(m, "cpu_threads", e->cpu_threads > 0 ? json_integer(e->cpu_threads)
                                                          : json_string("auto"));
    json_object_set_new(m, "cache", json_string(e->cache_cold ? "cold" : "hot"));
    json_object_set_new(m, "batch", batch_json(e->batch));
    json_object_set_new(o, "measure", m);
    json_t *params = json_object();
    for (size_t i = 0; i < e->n_params; i++) {
        json_t *vals = json_array();
        for (size_t k = 0; k < e->n_values[i]; k++)
            json_array_append_new(vals, jtext(e->param_values[i][k]));
        jset(params, e->param_names[i], vals);
    }
    json_object_set_new(o, "params", params);
    json_object_set_new(o, "points", u64(e->n_points));
    return o;
}

/* A parameter value with its JSON type: numbers for int, size and float,
   the choice's name for an enum, true/false for a bool. */
static json_t *value_json(const kbc_rec_param *q)
{
    switch (q->type) {
    case KB_PARAM_INT:
        return json_integer(q->value.i);
    case KB_PARAM_SIZE:
        return u64(q->value.u);
    case KB_PARAM_FLOAT:
        return num(q->value.f);
    case KB_PARAM_BOOL:
        return json_boolean(q->value.i != 0);
    case KB_PARAM_ENUM:
        return jtext(q->text);
    }
    return json_null();
}

static const char *const type_names[] = {"int", "size", "float", "enum", "bool"};

/* A row's energy (docs/output.md, "Energy"): every member always, null
   where it does not apply; the windows as two arrays. */
static json_t *energy_json(const kbc_rec_energy *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "requested", json_string(kbc_energy_requested_name(e->requested)));
    json_object_set_new(o, "status", json_string(kbc_energy_status_name((int)e->status)));
    json_object_set_new(o, "why", e->why[0] ? jtext(e->why) : json_null());
    json_object_set_new(o, "j_per_run", num(e->j_per_run));
    json_object_set_new(o, "j_lo", num(e->j_lo));
    json_object_set_new(o, "j_hi", num(e->j_hi));
    json_object_set_new(o, "watts", num(e->watts));
    json_object_set_new(o, "idle_w", num(e->idle_w));
    json_object_set_new(o, "power_limit_w", num(e->power_limit_w));
    json_object_set_new(o, "gb_per_j", num(e->gb_per_j));
    json_object_set_new(o, "gflops_per_j", num(e->gflops_per_j));
    json_object_set_new(o, "window_s", num(e->window_s));
    json_object_set_new(o, "runs_per_window", e->windows ? u64(e->runs_per_window) : json_null());
    json_t *wj = json_array(), *ws = json_array();
    for (uint32_t i = 0; i < e->windows && i < KBC_ENERGY_MAX_KEPT; i++) {
        json_array_append_new(wj, num(e->window_j[i]));
        json_array_append_new(ws, num(e->window_sec[i]));
    }
    json_object_set_new(o, "windows_j", wj);
    json_object_set_new(o, "windows_s", ws);
    json_object_set_new(o, "dropped", json_integer(e->dropped));
    json_object_set_new(o, "note", e->note[0] ? jtext(e->note) : json_null());
    json_object_set_new(o, "throttled_windows", json_integer(e->throttled_windows));
    json_object_set_new(o, "throttled_s", num(e->throttled_s));
    json_object_set_new(o, "reasons", reasons_json(e->reasons));
    return o;
}

/* A row's parameters: their values by name, and what a reader needs to
   rebuild the typed values exactly. */
static void put_params(json_t *o, const kbc_record *r)
{
    json_t *params = json_object();
    for (uint32_t i = 0; i < r->n_params; i++)
        jset(params, r->params[i].name, value_json(&r->params[i]));
    json_object_set_new(o, "params", params);
    json_t *pm = json_array();
    for (uint32_t i = 0; i < r->n_params; i++) {
        const kbc_rec_param *q = &r->params[i];
        json_t *x = json_object();
        json_object_set_new(x, "name", jtext(q->name));
        json_object_set_new(x, "type", json_string((unsigned)q->type < 5 ? type_names[q->type]
                                                                         : "int"));
        json_object_set_new(x, "text", jtext(q->text));
        json_object_set_new(x, "swept", json_boolean(q->swept));
        /* An enum's choice by number too, so that a row read back (from a
           worker, a journal or a shard) has the typed value it was run with. */
        if (q->type == KB_PARAM_ENUM)
            json_object_set_new(x, "index", json_integer(q->value.i));
        json_array_append_new(pm, x);
    }
    json_object_set_new(o, "param_info", pm);
}

/* The timed runs: their count, statistics, every sample and the noise. */
static void put_time(json_t *o, const kbc_record *r)
{
    json_object_set_new(o, "runs", json_integer((json_int_t)r->time.n));
    json_t *t = json_object();
    json_object_set_new(t, "median", num(r->time.median));
    json_object_set_new(t, "min", num(r->time.min));
    json_object_set_new(t, "max", num(r->time.max));
    json_object_set_new(t, "mean", num(r->time.mean));
    json_object_set_new(t, "stddev", num(r->time.stddev));
    json_object_set_new(o, "time_s", t);
    /* Every timed run, in the order it ran, so that later analysis
       (kbench compare) has the distribution and not only its summary. */
    json_t *sm = json_array();
    for (size_t i = 0; r->samples && i < r->n_samples; i++)
        json_array_append_new(sm, num(r->samples[i]));
    json_object_set_new(o, "samples_s", sm);
    json_t *nz = json_object();
    json_object_set_new(nz, "achieved", num(r->noise));
    json_object_set_new(nz, "target", r->noise_target > 0 ? num(r->noise_target) : json_null());
    json_object_set_new(nz, "capped", json_boolean(r->noise_capped));
    json_object_set_new(o, "noise", nz);
}

/* The work plan() counted, the rates and the ceilings they are read
   against. */
static void put_work(json_t *o, const kbc_record *r)
{
    json_t *w = json_object();
    json_object_set_new(w, "bytes_read", u64(r->work.bytes_read));
    json_object_set_new(w, "bytes_written", u64(r->work.bytes_written));
    json_object_set_new(w, "flops", num(r->work.flops));
    json_object_set_new(w, "items", u64(r->work.items));
    json_object_set_new(w, "host_bytes", u64(r->work.host_bytes));
    json_object_set_new(w, "device_bytes", u64(r->work.device_bytes));
    json_object_set_new(o, "work", w);
    json_object_set_new(o, "gbps", num(r->gbps));
    json_object_set_new(o, "gflops", num(r->gflops));
    json_object_set_new(o, "items_per_s", num(r->items_per_s));
    json_object_set_new(o, "item_name", r->item_name[0] ? jtext(r->item_name) : json_null());
    json_object_set_new(o, "ceiling", r->ceiling[0] ? jtext(r->ceiling) : json_null());
    json_object_set_new(o, "ceiling_gbps", num(r->ceiling_gbps));
    json_object_set_new(o, "pct_ceiling", num(r->pct_ceiling));
    json_object_set_new(o, "peak", r->peak[0] ? jtext(r->peak) : json_null());
    json_object_set_new(o, "peak_gflops", num(r->peak_gflops));
    json_object_set_new(o, "pct_peak", num(r->pct_peak));
}

/* How the row was launched: single runs, a loop or a graph of a batch. */
static void put_mode(json_t *o, const kbc_record *r)
{
    json_t *md = json_object();
    json_object_set_new(md, "batch", r->time.n > 0 ? json_integer(r->mode.batch) : json_null());
    json_object_set_new(md, "how", r->time.n == 0        ? json_null()
                                   : r->mode.batch <= 1 ? json_string("single")
                                   : r->mode.graph      ? json_string("graph")
                                                        : json_string("loop"));
    json_object_set_new(md, "requested", batch_json(r->mode.requested));
    json_object_set_new(md, "note", r->mode.note[0] ? jtext(r->mode.note) : json_null());
    json_object_set_new(o, "mode", md);
}

/* The clocks NVML read around the row, or null. */
static void put_clocks(json_t *o, const kbc_record *r)
{
    const kbc_rec_clocks *k = &r->clocks;
    if (k->n > 0) {
        json_t *ck = json_object();
        json_object_set_new(ck, "sm_min_mhz",
                            (k->known & KBC_CLK_SM) ? json_integer(k->sm_min_mhz) : json_null());
        json_object_set_new(ck, "sm_max_mhz",
                            k->sm_max_mhz ? json_integer(k->sm_max_mhz) : json_null());
        json_object_set_new(ck, "temp_max_c",
                            (k->known & KBC_CLK_TEMP) ? json_integer(k->temp_max_c) : json_null());
        json_object_set_new(ck, "power_max_w",
                            (k->known & KBC_CLK_POWER) ? num(k->power_max_w) : json_null());
        json_object_set_new(ck, "reasons",
                            (k->known & KBC_CLK_REASONS) ? reasons_json(k->reasons) : json_null());
        json_object_set_new(ck, "throttled", json_boolean(k->throttled));
        json_object_set_new(ck, "low_clock", json_boolean(k->low_clock));
        json_object_set_new(ck, "before", sample_json(&k->before));
        json_object_set_new(ck, "after", sample_json(&k->after));
        json_object_set_new(o, "clocks", ck);
    } else {
        json_object_set_new(o, "clocks", json_null());
    }
}

/* Without a measure, verification never ran: null, not a fake pass. */
static void put_check(json_t *o, const kbc_record *r)
{
    const char *measure = kbc_check_measure(r);
    if (measure) {
        json_t *c = json_object();
        json_object_set_new(c, "passed", json_boolean(r->check.passed));
        json_object_set_new(c, "measure", json_string(measure));
        json_object_set_new(c, "error", num(r->check.error));
        json_object_set_new(c, "tolerance", num(r->check.tolerance));
        json_object_set_new(o, "check", c);
    } else {
        json_object_set_new(o, "check", json_null());
    }
}

json_t *kbc_record_to_json(const kbc_record *r)
{
    char buf[256];
    json_t *o = json_object();
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    char *key = kbc_xmalloc(need);
    kbc_record_key(r, key, need);
    json_object_set_new(o, "key", jtext(key));
    free(key);
    json_object_set_new(o, "experiment", jtext(r->experiment));
    json_object_set_new(o, "plugin", jtext(r->plugin));
    json_object_set_new(o, "point", u64(r->point));
    json_object_set_new(o, "of_points", u64(r->n_points));
    put_params(o, r);
    json_object_set_new(o, "variant", jtext(r->variant));
    json_object_set_new(o, "variant_index", json_integer(r->variant_index));
    json_object_set_new(o, "backend", json_string(r->backend == KB_BACKEND_CUDA ? "cuda" : "cpu"));
    json_t *fl = json_array();
    kbc_flags_text(r->flags, buf, sizeof buf);
    for (char *tok = strtok(buf, "|"); tok; tok = strtok(NULL, "|"))
        json_array_append_new(fl, json_string(tok));
    json_object_set_new(o, "flags", fl);
    json_object_set_new(o, "baseline", r->baseline[0] ? jtext(r->baseline) : json_null());
    json_object_set_new(o, "reference", r->reference[0] ? jtext(r->reference) : json_null());
    json_object_set_new(o, "device", r->device[0] ? jtext(r->device) : json_null());
    json_object_set_new(o, "cache", json_string(r->cache_cold ? "cold" : "hot"));
    json_object_set_new(o, "host", r->host[0] ? jtext(r->host) : json_null());
    json_object_set_new(o, "gpu_uuid", r->gpu_uuid[0] ? jtext(r->gpu_uuid) : json_null());
    json_object_set_new(o, "pci_bus_id",
                        r->pci_bus_id[0] ? jtext(r->pci_bus_id) : json_null());
    json_object_set_new(o, "worker_pid", r->worker_pid > 0 ? json_integer(r->worker_pid)
                                                           : json_null());
    json_object_set_new(o, "device_left_bytes", r->device_left_bytes >= 0
                                                    ? json_integer(r->device_left_bytes)
                                                    : json_null());
    json_object_set_new(o, "processes_left", r->processes_left >= 0
                                                 ? json_integer(r->processes_left)
                                                 : json_null());
    json_object_set_new(o, "wall_s", num(r->wall_s));
    json_object_set_new(o, "points", u64(r->points));
    json_t *ig = json_array();
    snprintf(buf, sizeof buf, "%s", r->ignores);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
        json_array_append_new(ig, jtext(tok));
    json_object_set_new(o, "ignores", ig);
    json_object_set_new(o, "status", json_string(kbc_outcome_name((int)r->outcome)));
    json_object_set_new(o, "reason", r->reason[0] ? jtext(r->reason) : json_null());
    if (r->sanitizer[0])
        json_object_set_new(o, "sanitizer", jtext(r->sanitizer));
    json_object_set_new(o, "integrity", r->integrity[0] ? jtext(r->integrity) : json_null());
    put_time(o, r);
    put_work(o, r);
    put_mode(o, r);
    put_clocks(o, r);
    json_object_set_new(o, "energy", energy_json(&r->energy));
    json_t *s = json_object();
    json_object_set_new(s, "baseline", num(r->speedup_baseline));
    json_object_set_new(s, "cpu", num(r->speedup_cpu));
    json_object_set_new(s, "reference", num(r->speedup_reference));
    json_object_set_new(o, "speedup", s);
    put_check(o, r);
    return o;
}

int kbc_results_write_file(const json_t *doc, const char *path, const char *tmp,
                           const char **what, int *err)
{
    *what = NULL;
    *err = 0;
    FILE *f = fopen(tmp, "w");
    if (!f) {
        *what = tmp;
        *err = errno;
        return -1;
    }
    /* 15 significant digits: every measurement is far coarser, and 17
       would turn 1.5e-4 into 0.00015000000000000001. */
    size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15);
    int bad = json_dumpf(doc, f, flags) != 0;
    bad |= fputc('\n', f) == EOF;
    bad |= fflush(f) != 0 || ferror(f);
    *err = errno;
    /* fsync so that a power cut after the rename cannot leave an empty
       file where the last complete document was. */
    if (!bad && fsync(fileno(f)) != 0 && errno != EINVAL) {
        bad = 1;
        *err = errno;
    }
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        *err = errno;
    }
    if (bad) {
        *what = tmp;
    } else if (rename(tmp, path) != 0) {
        *what = path;
        *err = errno;
    }
    if (*what) {
        unlink(tmp);
        return -1;
    }
    kbc_results_keep(doc, path);
    return 0;
}

/* Writes the document to PATH.tmp and renames it over PATH.  On failure
   PATH keeps the last document written, and error() says why. */
static int json_write(json_ctx *c)
{
    if (c->failed)
        return -1;
    double t0 = kbc_now();
    const char *what;
    int err;
    kbc_results_write_file(c->doc, c->path, c->tmp, &what, &err);
    if (!c->writes)
        c->started = t0;
    c->writes++;
    c->last_end = kbc_now();
    c->last_cost = c->last_end - t0;
    c->spent += c->last_cost;
    if (!what) {
        c->written = json_array_size(c->results);
        return 0;
    }
    if (c->writes == 1) {
        /* No document of this run was written: one from an earlier run
           in the folder must not stand for it. */
        unlink(c->path);
        snprintf(c->why, sizeof c->why, "cannot write %s: %s; there is no %s", what,
                 err ? strerror(err) : "write error", c->path);
    } else {
        snprintf(c->why, sizeof c->why,
                 "cannot write %s: %s; %s keeps its last whole document (%zu row%s)", what,
                 err ? strerror(err) : "write error", c->path, c->written,
                 c->written == 1 ? "" : "s");
    }
    c->failed = 1;
    return -1;
}

void kbc_results_keep(const json_t *doc, const char *path)
{
    const char *dir = getenv("KBENCH_KEEP_RESULTS");
    if (!dir || !*dir)
        return;
    /* FNV-1a of the path: one copy per file, overwritten as it grows. */
    uint64_t h = 1469598103934665603ull;
    for (const char *p = path; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    char *copy = kbc_xasprintf("%s/%ld-%016llx.json", dir, (long)getpid(),
                               (unsigned long long)h);
    /* Through a rename, as the document itself: a process killed while
       writing (the tests interrupt runs) leaves no half a copy. */
    char *tmp = kbc_xasprintf("%s.tmp", copy);
    mkdir(dir, 0777);
    if (json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) ==
            0 &&
        rename(tmp, copy) == 0) {
        free(tmp);
        free(copy);
        return;
    }
    unlink(tmp);
    free(tmp);
    free(copy);
}

static const char *json_error(void *vctx)
{
    json_ctx *c = vctx;
    return c->failed ? c->why : NULL;
}

/* Whether rows held back are due in PATH.  The whole document is
   rewritten each time, so writing it after every point would cost time
   quadratic in the rows of a long plan.  Instead it is written after the
   first point, then once ten times the last write's duration has passed
   since it ended and the writes so far, with one more like the last, stay
   within a tenth of the time since the first began.  Writing thus stays
   near a tenth of the run (a little above while the document more than
   doubles between writes, which only a plan of very short points does),
   and a finished point reaches PATH within about ten times the duration
   of one write (found by the next point or tick): a document that takes
   20 ms to write is at most 0.2 s behind, one of 0.2 s at most 2 s.  The
   last write's duration is measured afresh each time, so a slow moment
   of the disk delays the next write once, not the rest of the run. */
static int json_due(const json_ctx *c)
{
    if (json_array_size(c->results) == c->written)
        return 0;
    if (c->writes <= 1)
        return 1;
    double now = kbc_now();
    return now - c->last_end >= 10.0 * c->last_cost &&
           c->spent + c->last_cost <= 0.1 * (now - c->started);
}

static int json_tick(void *vctx)
{
    json_ctx *c = vctx;
    if (!c->doc || c->failed)
        return c->failed ? -1 : 0;
    return json_due(c) ? json_write(c) : 0;
}

static int json_begin(void *vctx, const kbc_run_info *info)
{
    json_ctx *c = vctx;
    json_t *doc = json_object();
    json_object_set_new(doc, "schema_version", json_integer(KBC_RESULTS_SCHEMA_VERSION));
    json_t *kb = json_object();
    json_object_set_new(kb, "version", json_string(KBENCH_VERSION));
    json_object_set_new(kb, "git", json_string(kbc_git_rev));
    json_object_set_new(doc, "kbench", kb);
    json_object_set_new(doc, "command", str_or_null(info->command_line));
    json_object_set_new(doc, "started", utc_now());
    json_object_set_new(doc, "machine", machine_json(info));
    c->machine = info->machine;
    json_t *config = json_object();
    json_object_set_new(config, "file", str_or_null(info->config_file));
    json_t *exps = json_array();
    for (size_t i = 0; i < info->n_exps; i++)
        json_array_append_new(exps, experiment_json(&info->exps[i]));
    json_object_set_new(config, "experiments", exps);
    json_object_set_new(doc, "config", config);
    if (info->plan_hash) {
        json_t *plan = json_object();
        json_object_set_new(plan, "hash", jtext(info->plan_hash));
        if (info->shard_count > 0) {
            json_t *sh = json_object();
            json_object_set_new(sh, "index", json_integer(info->shard_index));
            json_object_set_new(sh, "count", json_integer(info->shard_count));
            json_object_set_new(plan, "shard", sh);
        } else {
            json_object_set_new(plan, "shard", json_null());
        }
        json_object_set_new(plan, "jobs", u64(info->jobs));
        json_object_set_new(doc, "plan", plan);
    }
    json_t *prov = json_object();
    json_t *plugins = json_array();
    for (size_t i = 0; i < info->n_builds; i++) {
        const kbc_build_info *b = &info->builds[i];
        json_t *x = json_object();
        json_object_set_new(x, "name", jtext(b->name));
        json_object_set_new(x, "file", jtext(b->file));
        json_object_set_new(x, "sha256", b->sha256[0] ? jtext(b->sha256) : json_null());
        json_array_append_new(plugins, x);
    }
    json_object_set_new(prov, "plugins", plugins);
    json_object_set_new(prov, "cccl_version", info->cccl_version > 0
                                                  ? json_integer(info->cccl_version)
                                                  : json_null());
    if (info->cublas_version > 0) {
        char v[32];
        snprintf(v, sizeof v, "%d.%d.%d", info->cublas_version / 10000,
                 info->cublas_version / 100 % 100, info->cublas_version % 100);
        json_object_set_new(prov, "cublas_version", json_string(v));
    } else {
        json_object_set_new(prov, "cublas_version", json_null());
    }
    json_object_set_new(doc, "provenance", prov);
    c->results = json_array();
    json_object_set_new(doc, "results", c->results);
    json_object_set_new(doc, "exit_code", json_null());
    json_object_set_new(doc, "finished", json_null());
    json_decref(c->doc);
    c->doc = doc;
    return json_write(c);
}

static int json_point(void *vctx, const kbc_record *rows, size_t n)
{
    json_ctx *c = vctx;
    if (!c->doc)
        return -1; /* begin() never ran */
    if (c->failed)
        return -1;
    for (size_t i = 0; i < n; i++)
        json_array_append_new(c->results, kbc_record_to_json(&rows[i]));
    /* Held back when not due (json_due): a tick writes them soon; a
       crash loses them here, and the journal and the CSV keep them. */
    return json_due(c) ? json_write(c) : 0;
}

json_t *kbc_suspects_to_json(const kbc_suspect *list, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "key", jtext(list[i].key));
        json_object_set_new(x, "median_s", num(list[i].median_s));
        json_object_set_new(x, "than_key", jtext(list[i].than_key));
        json_object_set_new(x, "than_median_s", num(list[i].than_median_s));
        json_object_set_new(x, "work_ratio", num(list[i].work_ratio));
        json_object_set_new(x, "backend", json_string(list[i].cpu ? "cpu" : "cuda"));
        json_array_append_new(a, x);
    }
    return a;
}

/* The run's suspect rows (the fan-out's), written with the end. */
static int json_suspects(void *vctx, const kbc_suspect *list, size_t n)
{
    json_ctx *c = vctx;
    if (!c->doc || c->failed)
        return -1;
    json_object_set_new(c->doc, "suspects", kbc_suspects_to_json(list, n));
    return 0;
}

static int json_end(void *vctx, int exit_code)
{
    json_ctx *c = vctx;
    if (!c->doc)
        return -1;
    json_object_set_new(c->doc, "exit_code", json_integer(exit_code));
    json_object_set_new(c->doc, "finished", utc_now());
    /* The end's facts (the load after the run, its CPU time), which the
       supervisor set in the machine just before the end. */
    json_t *m = json_object_get(c->doc, "machine");
    if (c->machine && json_is_object(m))
        json_object_set_new(m, "cpu", cpu_json(&c->machine->cpu));
    return json_write(c);
}

static void json_destroy(void *vctx)
{
    json_ctx *c = vctx;
    json_decref(c->doc);
    free(c->path);
    free(c->tmp);
    free(c);
}

int kbc_report_json(const char *path, kbc_sink *sink, kbc_diag *d)
{
    /* Find out now, before any GPU time is spent, whether the document can
       be written: PATH must not be a folder, and PATH.tmp must be creatable
       beside it. */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        kbc_diag_set(d, "cannot write %s: %s.", path, strerror(EISDIR));
        return -1;
    }
    char *tmp = kbc_xasprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        kbc_diag_set(d, "cannot write %s: %s.", path, strerror(errno));
        free(tmp);
        return -1;
    }
    fclose(f);
    unlink(tmp);
    json_ctx *c = kbc_xcalloc(1, sizeof *c);
    c->path = kbc_xstrdup(path);
    c->tmp = tmp;
    *sink = (kbc_sink){.ctx = c,
                       .begin = json_begin,
                       .point = json_point,
                       .end = json_end,
                       .destroy = json_destroy,
                       .error = json_error,
                       .tick = json_tick,
                       .suspects = json_suspects};
    return 0;
}
