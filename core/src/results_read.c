/* results_read.c -- see results_read.h; the inverse of row_json() in
   report_json.c.  Reals were written with 15 significant digits, so a
   number read back equals the one written to that precision. */
#include "results_read.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double get_num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static uint64_t get_u64(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        return (uint64_t)json_integer_value(v);
    if (json_is_real(v) && json_real_value(v) >= 0)
        return (uint64_t)json_real_value(v); /* written as a real above INT64_MAX */
    return 0;
}

static void get_str(const json_t *o, const char *key, char *buf, size_t n)
{
    const json_t *v = json_object_get(o, key);
    snprintf(buf, n, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static kb_param_type type_of(const char *s)
{
    static const char *const names[] = {"int", "size", "float", "enum", "bool"};
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0)
            return (kb_param_type)i;
    return KB_PARAM_INT;
}

/* batch as the JSON writes it ("off", "auto", a count) back to its
   integer (config.h); absent (a file older than batch mode) is off. */
static int batch_of(const json_t *v)
{
    if (json_is_integer(v))
        return (int)json_integer_value(v);
    if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0)
        return 1;
    return 0;
}

static uint64_t reasons_of(const json_t *a)
{
    uint64_t bits = 0;
    size_t i;
    const json_t *x;
    json_array_foreach(a, i, x) if (json_is_string(x)) bits |= kbc_clock_reason_parse(json_string_value(x));
    return bits;
}

static void read_sample(const json_t *o, kbc_clock_sample *s)
{
    memset(s, 0, sizeof *s);
    if (!json_is_object(o))
        return;
    const json_t *v;
    if (json_is_integer(v = json_object_get(o, "sm_mhz"))) {
        s->sm_mhz = (unsigned)json_integer_value(v);
        s->known |= KBC_CLK_SM;
    }
    if (json_is_integer(v = json_object_get(o, "mem_mhz"))) {
        s->mem_mhz = (unsigned)json_integer_value(v);
        s->known |= KBC_CLK_MEM;
    }
    if (json_is_integer(v = json_object_get(o, "temp_c"))) {
        s->temp_c = (unsigned)json_integer_value(v);
        s->known |= KBC_CLK_TEMP;
    }
    if (json_is_number(v = json_object_get(o, "power_w"))) {
        s->power_w = json_number_value(v);
        s->known |= KBC_CLK_POWER;
    }
    if (json_is_array(v = json_object_get(o, "reasons"))) {
        s->reasons = reasons_of(v);
        s->known |= KBC_CLK_REASONS;
    }
}

/* The row's clocks: the two readings are replayed, so that the minimum,
   maxima and marks are derived exactly as the run derived them. */
static void read_clocks(const json_t *ck, kbc_rec_clocks *c)
{
    const json_t *mx = json_object_get(ck, "sm_max_mhz");
    kbc_clocks_start(c, json_is_integer(mx) ? (unsigned)json_integer_value(mx) : 0);
    kbc_clock_sample s;
    read_sample(json_object_get(ck, "before"), &s);
    kbc_clocks_add(c, &s, 0);
    read_sample(json_object_get(ck, "after"), &s);
    kbc_clocks_add(c, &s, 1);
}

static int read_row(const json_t *o, kbc_record *r, char *why, size_t n)
{
    kbc_record_init(r);
    if (!json_is_object(o)) {
        snprintf(why, n, "a result is not an object");
        return -1;
    }
    get_str(o, "experiment", r->experiment, sizeof r->experiment);
    get_str(o, "plugin", r->plugin, sizeof r->plugin);
    get_str(o, "variant", r->variant, sizeof r->variant);
    r->variant_index = (uint32_t)get_u64(o, "variant_index");
    char buf[64];
    get_str(o, "backend", buf, sizeof buf);
    r->backend = strcmp(buf, "cuda") == 0 ? KB_BACKEND_CUDA : KB_BACKEND_CPU;
    const json_t *fl = json_object_get(o, "flags");
    size_t i;
    const json_t *x;
    json_array_foreach(fl, i, x) if (json_is_string(x)) r->flags |= kbc_flag_parse(json_string_value(x));
    r->point = get_u64(o, "point");
    r->n_points = get_u64(o, "of_points");
    const json_t *params = json_object_get(o, "params");
    const json_t *pm = json_object_get(o, "param_info");
    json_array_foreach(pm, i, x)
    {
        if (i >= KB_MAX_PARAMS)
            break;
        kbc_rec_param *q = &r->params[r->n_params++];
        get_str(x, "name", q->name, sizeof q->name);
        get_str(x, "text", q->text, sizeof q->text);
        char t[16];
        get_str(x, "type", t, sizeof t);
        q->type = type_of(t);
        q->swept = json_is_true(json_object_get(x, "swept"));
        const json_t *v = json_object_get(params, q->name);
        switch (q->type) {
        case KB_PARAM_INT:
            q->value.i = json_integer_value(v);
            break;
        case KB_PARAM_SIZE:
            q->value.u = get_u64(params, q->name);
            break;
        case KB_PARAM_FLOAT:
            q->value.f = json_is_number(v) ? json_number_value(v) : NAN;
            break;
        case KB_PARAM_BOOL:
            q->value.i = json_is_true(v);
            break;
        case KB_PARAM_ENUM:
            /* The index is not written (only the choice's name); the text
               is what identifies the value. */
            q->value.i = 0;
            break;
        }
    }
    get_str(o, "baseline", r->baseline, sizeof r->baseline);
    get_str(o, "reference", r->reference, sizeof r->reference);
    get_str(o, "device", r->device, sizeof r->device);
    get_str(o, "cache", buf, sizeof buf);
    r->cache_cold = strcmp(buf, "cold") == 0;
    r->points = get_u64(o, "points");
    const json_t *ig = json_object_get(o, "ignores");
    size_t used = 0;
    json_array_foreach(ig, i, x) if (json_is_string(x) && used < sizeof r->ignores)
    {
        int w = snprintf(r->ignores + used, sizeof r->ignores - used, "%s%s", used ? "," : "",
                         json_string_value(x));
        if (w > 0)
            used += (size_t)w;
    }
    get_str(o, "status", buf, sizeof buf);
    int oc = kbc_outcome_parse(buf);
    if (oc < 0) {
        snprintf(why, n, "a result has the unknown status '%s'", buf);
        return -1;
    }
    r->outcome = (kbc_outcome)oc;
    get_str(o, "reason", r->reason, sizeof r->reason);
    const json_t *t = json_object_get(o, "time_s");
    r->time.n = (size_t)get_u64(o, "runs");
    r->time.median = get_num(t, "median");
    r->time.min = get_num(t, "min");
    r->time.max = get_num(t, "max");
    r->time.mean = get_num(t, "mean");
    r->time.stddev = get_num(t, "stddev");
    const json_t *nz = json_object_get(o, "noise");
    r->noise = get_num(nz, "achieved");
    r->noise_target = get_num(nz, "target");
    if (isnan(r->noise_target))
        r->noise_target = 0;
    r->noise_capped = json_is_true(json_object_get(nz, "capped"));
    const json_t *sm = json_object_get(o, "samples_s");
    if (json_array_size(sm) > 0) {
        r->samples = kbc_xmalloc(json_array_size(sm) * sizeof *r->samples);
        json_array_foreach(sm, i, x)
        {
            if (!json_is_number(x)) {
                snprintf(why, n, "samples_s holds something that is not a number");
                kbc_record_free(r);
                return -1;
            }
            r->samples[r->n_samples++] = json_number_value(x);
        }
    }
    const json_t *w = json_object_get(o, "work");
    r->work.bytes_read = get_u64(w, "bytes_read");
    r->work.bytes_written = get_u64(w, "bytes_written");
    r->work.flops = get_num(w, "flops");
    r->work.items = get_u64(w, "items");
    r->work.host_bytes = get_u64(w, "host_bytes");
    r->work.device_bytes = get_u64(w, "device_bytes");
    r->gbps = get_num(o, "gbps");
    r->gflops = get_num(o, "gflops");
    r->items_per_s = get_num(o, "items_per_s");
    get_str(o, "ceiling", r->ceiling, sizeof r->ceiling);
    r->ceiling_gbps = get_num(o, "ceiling_gbps");
    r->pct_ceiling = get_num(o, "pct_ceiling");
    get_str(o, "peak", r->peak, sizeof r->peak);
    r->peak_gflops = get_num(o, "peak_gflops");
    r->pct_peak = get_num(o, "pct_peak");
    const json_t *md = json_object_get(o, "mode");
    if (json_is_object(md)) {
        const json_t *b = json_object_get(md, "batch");
        r->mode.batch = json_is_integer(b) && json_integer_value(b) > 0
                            ? (uint32_t)json_integer_value(b)
                            : 1;
        r->mode.requested = batch_of(json_object_get(md, "requested"));
        const json_t *how = json_object_get(md, "how");
        r->mode.graph = json_is_string(how) && strcmp(json_string_value(how), "graph") == 0;
        get_str(md, "note", r->mode.note, sizeof r->mode.note);
    }
    const json_t *ck = json_object_get(o, "clocks");
    if (json_is_object(ck))
        read_clocks(ck, &r->clocks);
    const json_t *s = json_object_get(o, "speedup");
    r->speedup_baseline = get_num(s, "baseline");
    r->speedup_cpu = get_num(s, "cpu");
    r->speedup_reference = get_num(s, "reference");
    const json_t *c = json_object_get(o, "check");
    if (json_is_object(c)) {
        r->check.passed = json_is_true(json_object_get(c, "passed"));
        get_str(c, "measure", r->check.measure, sizeof r->check.measure);
        r->check.error = get_num(c, "error");
        r->check.tolerance = get_num(c, "tolerance");
    }
    return 0;
}

int kbc_results_read(const char *path, kbc_record **recs, size_t *n, kbc_diag *d)
{
    *recs = NULL;
    *n = 0;
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    if (!doc) {
        kbc_diag_set(d, "%s:%d: cannot read the results: %s.", path, err.line, err.text);
        return -1;
    }
    const json_t *rs = json_object_get(doc, "results");
    if (!json_is_array(rs)) {
        kbc_diag_set(d, "%s: has no \"results\" array; is it a kbench results file?", path);
        json_decref(doc);
        return -1;
    }
    size_t count = json_array_size(rs);
    kbc_record *out = kbc_xcalloc(count ? count : 1, sizeof *out);
    for (size_t i = 0; i < count; i++) {
        char why[256];
        if (read_row(json_array_get(rs, i), &out[i], why, sizeof why) != 0) {
            kbc_diag_set(d, "%s: result %zu: %s.", path, i, why);
            kbc_records_free(out, i);
            json_decref(doc);
            return -1;
        }
    }
    json_decref(doc);
    *recs = out;
    *n = count;
    return 0;
}
