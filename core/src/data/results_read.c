/* results_read.c -- see results_read.h; the inverse of kbc_record_to_json()
   in results_write.c.  Reals were written with 15 significant digits, so a
   number read back equals the one written to that precision.
 *
 * Every number that becomes an integer is checked against its field's
 * range first (docs/output.md, "Reading results back"): a field that is
 * absent, null or not a number is unknown (0, as in a file that predates
 * it); a number that is there but does not fit (negative where a count is
 * due, a fraction, too large for the field) refuses the file with a
 * sentence that names the file, the result and the field.
 */
#include "results_read.h"

#include <sys/stat.h>
#include "record_json.h"
#include "results_write.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input.h"
#include "text.h"

static double get_num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Where a reading stands: the object being read ("work", "measure"; NULL
   for the row itself), and the first complaint. */
typedef struct rd {
    const char *at;
    char *why;
    size_t n;
    int bad;
} rd;

/* 2^64 as a double, and the largest real a writer of 15 significant digits
   spells for a count just below it (2^64 - 1 reads back as 1.84467440737096e19,
   a little above 2^64); such a real is read as 2^64 - 1. */
#define TWO_64 18446744073709551616.0
#define U64_MAX_15 1.84467440737096e19

/* The complaint about key's value v, which is not "what". */
static void rd_fail(rd *c, const char *key, const json_t *v, const char *what)
{
    if (c->bad++)
        return;
    char num[64];
    if (json_is_integer(v))
        snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
    else
        snprintf(num, sizeof num, "%.17g", json_real_value(v));
    snprintf(c->why, c->n, "\"%s%s%s\" is %s, which is not %s", c->at ? c->at : "",
             c->at ? "." : "", kbc_text_visible(key), num, what);
}

/* o[key] as a whole number from lo to hi (both within int64): 0 when it
   is absent, null or not a number; a real must have no fraction. */
static int64_t rd_int(rd *c, const json_t *o, const char *key, int64_t lo, int64_t hi,
                      const char *what)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x >= lo && x <= hi)
            return (int64_t)x;
    } else if (json_is_real(v)) {
        double x = json_real_value(v);
        /* Compared as doubles before any conversion: out of range is no
           conversion at all. */
        if (x == floor(x) && x >= (double)lo && x <= (double)hi && x < 9223372036854775808.0)
            return (int64_t)x;
    } else {
        return 0;
    }
    rd_fail(c, key, v, what);
    return 0;
}

/* o[key] as a count from 0 to 2^64 - 1 (a real above INT64_MAX as the
   writer keeps such counts; see U64_MAX_15). */
static uint64_t rd_u64(rd *c, const json_t *o, const char *key)
{
    static const char what[] = "a whole number from 0 to 18446744073709551615";
    const json_t *v = json_object_get(o, key);
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (x == floor(x) && x >= 0 && x < TWO_64)
            return (uint64_t)x;
        if (x >= TWO_64 && x <= U64_MAX_15)
            return UINT64_MAX;
        rd_fail(c, key, v, what);
        return 0;
    }
    return (uint64_t)rd_int(c, o, key, 0, INT64_MAX, what);
}

static uint32_t rd_u32(rd *c, const json_t *o, const char *key)
{
    return (uint32_t)rd_int(c, o, key, 0, UINT32_MAX, "a whole number from 0 to 4294967295");
}

static int rd_i32(rd *c, const json_t *o, const char *key)
{
    return (int)rd_int(c, o, key, INT_MIN, INT_MAX,
                       "a whole number from -2147483648 to 2147483647");
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
static int batch_of(rd *c, const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_number(v))
        return (int)rd_int(c, o, key, 0, INT_MAX, "a batch count from 0 to 2147483647");
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

static void read_sample(rd *c, const json_t *o, kbc_clock_sample *s)
{
    memset(s, 0, sizeof *s);
    if (!json_is_object(o))
        return;
    const json_t *v;
    if (json_is_integer(v = json_object_get(o, "sm_mhz"))) {
        s->sm_mhz = rd_u32(c, o, "sm_mhz");
        s->known |= KBC_CLK_SM;
    }
    if (json_is_integer(v = json_object_get(o, "mem_mhz"))) {
        s->mem_mhz = rd_u32(c, o, "mem_mhz");
        s->known |= KBC_CLK_MEM;
    }
    if (json_is_integer(v = json_object_get(o, "temp_c"))) {
        s->temp_c = rd_u32(c, o, "temp_c");
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
static void read_clocks(rd *d, const json_t *ck, kbc_rec_clocks *c)
{
    d->at = "clocks";
    kbc_clocks_start(c, rd_u32(d, ck, "sm_max_mhz"));
    kbc_clock_sample s;
    d->at = "clocks.before";
    read_sample(d, json_object_get(ck, "before"), &s);
    kbc_clocks_add(c, &s, 0);
    d->at = "clocks.after";
    read_sample(d, json_object_get(ck, "after"), &s);
    kbc_clocks_add(c, &s, 1);
    d->at = NULL;
}

/* The row's energy (report_json.c, energy_json): absent in a file before
   schema 2, which reads as not run. */
static void read_energy(rd *c, const json_t *en, kbc_rec_energy *e)
{
    if (!json_is_object(en))
        return;
    c->at = "energy";
    char buf[64];
    get_str(en, "requested", buf, sizeof buf);
    for (int k = 0; k <= 2; k++)
        if (strcmp(buf, kbc_energy_requested_name(k)) == 0)
            e->requested = k;
    get_str(en, "status", buf, sizeof buf);
    int st = kbc_energy_status_parse(buf);
    e->status = st < 0 ? KBC_ENERGY_NOT_RUN : (kbc_energy_status)st;
    get_str(en, "why", e->why, sizeof e->why);
    e->j_per_run = get_num(en, "j_per_run");
    e->j_lo = get_num(en, "j_lo");
    e->j_hi = get_num(en, "j_hi");
    e->watts = get_num(en, "watts");
    e->idle_w = get_num(en, "idle_w");
    e->power_limit_w = get_num(en, "power_limit_w");
    e->gb_per_j = get_num(en, "gb_per_j");
    e->gflops_per_j = get_num(en, "gflops_per_j");
    e->window_s = get_num(en, "window_s");
    e->runs_per_window = rd_u64(c, en, "runs_per_window");
    const json_t *wj = json_object_get(en, "windows_j"), *ws = json_object_get(en, "windows_s");
    size_t i;
    const json_t *x;
    /* Windows past what a row keeps are left out, not read past the array. */
    json_array_foreach(wj, i, x) if (i < KBC_ENERGY_MAX_KEPT)
    {
        e->window_j[i] = json_is_number(x) ? json_number_value(x) : NAN;
        const json_t *t = json_array_get(ws, i);
        e->window_sec[i] = json_is_number(t) ? json_number_value(t) : NAN;
        e->windows = (uint32_t)i + 1;
    }
    e->dropped = rd_u32(c, en, "dropped");
    get_str(en, "note", e->note, sizeof e->note);
    e->throttled_windows = rd_u32(c, en, "throttled_windows");
    e->throttled_s = get_num(en, "throttled_s");
    e->reasons = reasons_of(json_object_get(en, "reasons"));
    c->at = NULL;
}

/* A row's parameters: param_info's names, types and texts, each value
   read from params by its type. */
static void read_params(rd *c, const json_t *o, kbc_record *r)
{
    size_t i;
    const json_t *x;
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
        c->at = "params";
        switch (q->type) {
        case KB_PARAM_INT:
            q->value.i = rd_int(c, params, q->name, INT64_MIN, INT64_MAX,
                                "a whole number from -2^63 to 2^63 - 1");
            break;
        case KB_PARAM_SIZE:
            q->value.u = rd_u64(c, params, q->name);
            break;
        case KB_PARAM_FLOAT:
            q->value.f = json_is_number(v) ? json_number_value(v) : NAN;
            break;
        case KB_PARAM_BOOL:
            q->value.i = json_is_true(v);
            break;
        case KB_PARAM_ENUM:
            /* Files before kbench 3 wrote only the choice's name (the text
               identifies the value); later ones also its index. */
            c->at = "param_info";
            q->value.i = rd_int(c, x, "index", 0, INT32_MAX,
                                "a choice's index from 0 to 2147483647");
            break;
        }
        c->at = NULL;
    }
}

/* Where the row ran and what it left: the worker, the device memory and
   the processes a point left behind (-1: not known). */
static void read_placement(const json_t *o, kbc_record *r)
{
    {
        const json_t *pid = json_object_get(o, "worker_pid");
        r->worker_pid = json_is_integer(pid) && json_integer_value(pid) > 0 &&
                                json_integer_value(pid) <= 0x7fffffff
                            ? (int)json_integer_value(pid)
                            : 0;
    }
    {
        const json_t *left = json_object_get(o, "device_left_bytes");
        r->device_left_bytes = json_is_integer(left) && json_integer_value(left) >= 0
                                   ? (int64_t)json_integer_value(left)
                                   : -1;
    }
    {
        const json_t *left = json_object_get(o, "processes_left");
        r->processes_left = json_is_integer(left) && json_integer_value(left) >= 0 &&
                                    json_integer_value(left) <= 0x7fffffff
                                ? (int)json_integer_value(left)
                                : -1;
    }
}

/* The swept parameters the variant ignores, as one comma-separated text. */
static void read_ignores(const json_t *o, kbc_record *r)
{
    size_t i;
    const json_t *x;
    const json_t *ig = json_object_get(o, "ignores");
    size_t used = 0;
    json_array_foreach(ig, i, x) if (json_is_string(x) && used < sizeof r->ignores)
    {
        int w = snprintf(r->ignores + used, sizeof r->ignores - used, "%s%s", used ? "," : "",
                         json_string_value(x));
        if (w > 0)
            used += (size_t)w;
    }
}

/* The timed runs: their count, statistics, noise and samples.  -1 (with
   why) when a sample is not a number. */
static int read_time(rd *c, const json_t *o, kbc_record *r, char *why, size_t n)
{
    size_t i;
    const json_t *x;
    const json_t *t = json_object_get(o, "time_s");
    r->time.n = (size_t)rd_u64(c, o, "runs");
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
                return -1;
            }
            r->samples[r->n_samples++] = json_number_value(x);
        }
    }
    return 0;
}

/* The work plan() counted, the rates and the ceilings they are read
   against. */
static void read_work(rd *c, const json_t *o, kbc_record *r)
{
    const json_t *w = json_object_get(o, "work");
    c->at = "work";
    r->work.bytes_read = rd_u64(c, w, "bytes_read");
    r->work.bytes_written = rd_u64(c, w, "bytes_written");
    r->work.flops = get_num(w, "flops");
    r->work.items = rd_u64(c, w, "items");
    r->work.host_bytes = rd_u64(c, w, "host_bytes");
    r->work.device_bytes = rd_u64(c, w, "device_bytes");
    c->at = NULL;
    r->gbps = get_num(o, "gbps");
    r->gflops = get_num(o, "gflops");
    r->items_per_s = get_num(o, "items_per_s");
    get_str(o, "item_name", r->item_name, sizeof r->item_name);
    get_str(o, "ceiling", r->ceiling, sizeof r->ceiling);
    r->ceiling_gbps = get_num(o, "ceiling_gbps");
    r->pct_ceiling = get_num(o, "pct_ceiling");
    get_str(o, "peak", r->peak, sizeof r->peak);
    r->peak_gflops = get_num(o, "peak_gflops");
    r->pct_peak = get_num(o, "pct_peak");
}

/* How the row was launched: the batch and whether a graph. */
static void read_mode(rd *c, const json_t *o, kbc_record *r)
{
    const json_t *md = json_object_get(o, "mode");
    if (json_is_object(md)) {
        /* The batch a row ran with: 1 where unknown or 0. */
        c->at = "mode";
        r->mode.batch = rd_u32(c, md, "batch");
        if (r->mode.batch == 0)
            r->mode.batch = 1;
        r->mode.requested = batch_of(c, md, "requested");
        c->at = NULL;
        const json_t *how = json_object_get(md, "how");
        r->mode.graph = json_is_string(how) && strcmp(json_string_value(how), "graph") == 0;
        get_str(md, "note", r->mode.note, sizeof r->mode.note);
    }
}

static void read_check(const json_t *o, kbc_record *r)
{
    const json_t *ch = json_object_get(o, "check");
    if (json_is_object(ch)) {
        r->check.passed = json_is_true(json_object_get(ch, "passed"));
        get_str(ch, "measure", r->check.measure, sizeof r->check.measure);
        r->check.error = get_num(ch, "error");
        r->check.tolerance = get_num(ch, "tolerance");
    }
}

int kbc_record_from_json(const json_t *o, kbc_record *r, char *why, size_t n)
{
    kbc_record_init(r);
    if (!json_is_object(o)) {
        snprintf(why, n, "a result is not an object");
        return -1;
    }
    rd c = {.why = why, .n = n};
    get_str(o, "experiment", r->experiment, sizeof r->experiment);
    get_str(o, "plugin", r->plugin, sizeof r->plugin);
    get_str(o, "variant", r->variant, sizeof r->variant);
    r->variant_index = rd_u32(&c, o, "variant_index");
    char buf[64];
    get_str(o, "backend", buf, sizeof buf);
    r->backend = strcmp(buf, "cuda") == 0 ? KB_BACKEND_CUDA : KB_BACKEND_CPU;
    const json_t *fl = json_object_get(o, "flags");
    size_t i;
    const json_t *x;
    json_array_foreach(fl, i, x) if (json_is_string(x)) r->flags |= kbc_flag_parse(json_string_value(x));
    r->point = rd_u64(&c, o, "point");
    r->n_points = rd_u64(&c, o, "of_points");
    read_params(&c, o, r);
    get_str(o, "baseline", r->baseline, sizeof r->baseline);
    get_str(o, "reference", r->reference, sizeof r->reference);
    get_str(o, "device", r->device, sizeof r->device);
    get_str(o, "host", r->host, sizeof r->host);
    get_str(o, "gpu_uuid", r->gpu_uuid, sizeof r->gpu_uuid);
    get_str(o, "pci_bus_id", r->pci_bus_id, sizeof r->pci_bus_id);
    read_placement(o, r);
    r->wall_s = get_num(o, "wall_s");
    get_str(o, "cache", buf, sizeof buf);
    r->cache_cold = strcmp(buf, "cold") == 0;
    r->points = rd_u64(&c, o, "points");
    read_ignores(o, r);
    get_str(o, "status", buf, sizeof buf);
    int oc = kbc_outcome_parse(buf);
    if (oc < 0) {
        snprintf(why, n, "a result has the unknown status '%s'", kbc_text_visible(buf));
        return -1;
    }
    r->outcome = (kbc_outcome)oc;
    get_str(o, "reason", r->reason, sizeof r->reason);
    get_str(o, "sanitizer", r->sanitizer, sizeof r->sanitizer);
    get_str(o, "integrity", r->integrity, sizeof r->integrity);
    if (read_time(&c, o, r, why, n) != 0) {
        kbc_record_free(r);
        return -1;
    }
    read_work(&c, o, r);
    read_mode(&c, o, r);
    const json_t *ck = json_object_get(o, "clocks");
    if (json_is_object(ck))
        read_clocks(&c, ck, &r->clocks);
    read_energy(&c, json_object_get(o, "energy"), &r->energy);
    const json_t *s = json_object_get(o, "speedup");
    r->speedup_baseline = get_num(s, "baseline");
    r->speedup_cpu = get_num(s, "cpu");
    r->speedup_reference = get_num(s, "reference");
    read_check(o, r);
    if (c.bad) {
        kbc_record_free(r);
        return -1;
    }
    return 0;
}

/* Refuses a document of a later layout than this kbench's (report.h).  A
   file without "schema_version" is from before it was written, and reads
   as version 1.  Returns 0, or -1 with d set. */
static int check_schema_version(const json_t *root, const char *path, kbc_diag *d)
{
    const json_t *sv = json_object_get(root, "schema_version");
    if (sv && (!json_is_integer(sv) || json_integer_value(sv) < 1)) {
        kbc_diag_set(d, "%s: \"schema_version\" is not a whole number from 1; is it a kbench "
                        "results file?", path);
        return -1;
    }
    if (sv && json_integer_value(sv) > KBC_RESULTS_SCHEMA_VERSION) {
        kbc_diag_set(d, "%s: its \"schema_version\" is %lld and this kbench reads up to %d; "
                        "read it with a newer kbench.", path, (long long)json_integer_value(sv),
                     KBC_RESULTS_SCHEMA_VERSION);
        return -1;
    }
    return 0;
}

int kbc_results_from_json(const json_t *root, const char *path, kbc_record **recs, size_t *n,
                          kbc_diag *d)
{
    *recs = NULL;
    *n = 0;
    const json_t *rs = json_object_get(root, "results");
    if (!json_is_array(rs)) {
        kbc_diag_set(d, "%s: has no \"results\" array; is it a kbench results file?", path);
        return -1;
    }
    if (check_schema_version(root, path, d) != 0)
        return -1;
    size_t count = json_array_size(rs);
    kbc_record *out = kbc_xcalloc(count ? count : 1, sizeof *out);
    for (size_t i = 0; i < count; i++) {
        char why[512];
        if (kbc_record_from_json(json_array_get(rs, i), &out[i], why, sizeof why) != 0) {
            kbc_diag_set(d, "%s: result %zu: %s.", path, i, why);
            kbc_records_free(out, i);
            return -1;
        }
    }
    *recs = out;
    *n = count;
    return 0;
}

/* The pieces json_load_callback asks for, read from the file as it
   parses: the text is never held whole. */
typedef struct load_src {
    int fd;
    int err; /* errno of a failed read */
} load_src;

static size_t load_piece(void *buf, size_t n, void *arg)
{
    load_src *s = arg;
    for (;;) {
        ssize_t got = read(s->fd, buf, n);
        if (got >= 0)
            return (size_t)got;
        if (errno != EINTR) {
            s->err = errno;
            return (size_t)-1;
        }
    }
}

json_t *kbc_results_load(const char *path, kbc_diag *d)
{
    /* A regular file of at most KBC_INPUT_DATA_MAX (a FIFO, a device or a
       file of many gigabytes is refused before a byte is read), parsed
       from pieces of it: jansson reads a FILE a character at a time (a
       fifth of the time on a file of a million samples). */
    char why[200];
    load_src src = {kbc_input_open(path, KBC_INPUT_DATA_MAX, why, sizeof why), 0};
    if (src.fd < 0) {
        kbc_diag_set(d, "%s: cannot read the results: %s.", path, why);
        return NULL;
    }
    json_error_t err;
    json_t *doc = json_load_callback(load_piece, &src, 0, &err);
    close(src.fd);
    if (src.err) {
        json_decref(doc);
        kbc_diag_set(d, "%s: cannot read the results: %s.", path, strerror(src.err));
        return NULL;
    }
    if (!doc)
        kbc_diag_set(d, "%s:%d: cannot read the results: %s.", path, err.line,
                     kbc_text_visible(err.text));
    return doc;
}

int kbc_results_read(const char *path, kbc_record **recs, size_t *n, kbc_diag *d)
{
    *recs = NULL;
    *n = 0;
    json_t *doc = kbc_results_load(path, d);
    if (!doc)
        return -1;
    int rc = kbc_results_from_json(doc, path, recs, n, d);
    json_decref(doc);
    return rc;
}

/* ---- The whole document: header and rows ---------------------------- */

static char *dup_str_or_null(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? kbc_xstrdup(json_string_value(v)) : NULL;
}

/* o[key] as an int (rd_i32), or fallback where it is absent, null or not
   a number. */
static int get_int(rd *c, const json_t *o, const char *key, int fallback)
{
    return json_is_number(json_object_get(o, key)) ? rd_i32(c, o, key) : fallback;
}

/* A ceiling: written null when not measured, which the run_info spells 0. */
static double get_ceiling(const json_t *o, const char *key)
{
    double x = get_num(o, key);
    return isnan(x) ? 0 : x;
}

/* "machine"."cpu" (cpu_json in results_write.c); unknown (NaN, "") in a
   file from before it. */
static void read_cpu(const json_t *o, kbc_cpu_facts *f)
{
    get_str(o, "model", f->model, sizeof f->model);
    get_str(o, "governor", f->governor, sizeof f->governor);
    f->mhz = get_num(o, "mhz");
    f->load_before = get_num(o, "load_before");
    f->load_after = get_num(o, "load_after");
    f->cpu_s = get_num(o, "cpu_seconds");
    f->wall_s = get_num(o, "wall_seconds");
}

/* "machine", as machine_json in results_write.c writes it. */
static void read_machine(rd *rc, const json_t *m, kbc_run_doc *doc)
{
    kbc_machine *k = &doc->machine;
    memset(k, 0, sizeof *k);
    if (!json_is_object(m))
        return;
    doc->has_machine = 1;
    k->has_gpu = json_is_true(json_object_get(m, "has_gpu"));
    get_str(m, "reason", k->no_gpu_reason, sizeof k->no_gpu_reason);
    get_str(m, "gpu", k->name, sizeof k->name);
    const json_t *cc = json_object_get(m, "cc");
    if (json_is_string(cc) &&
        sscanf(json_string_value(cc), "%d.%d", &k->cc_major, &k->cc_minor) != 2)
        k->cc_major = k->cc_minor = 0;
    rc->at = "machine";
    k->device = get_int(rc, m, "device", 0);
    k->sm_count = get_int(rc, m, "sm_count", 0);
    k->mem_bytes = rd_u64(rc, m, "memory_bytes");
    k->l2_bytes = rd_u64(rc, m, "l2_bytes");
    k->driver_version = get_int(rc, m, "driver_version", 0);
    k->runtime_version = get_int(rc, m, "runtime_version", 0);
    get_str(m, "host", k->host, sizeof k->host);
    k->cpu_threads = get_int(rc, m, "cpu_threads", 0);
    read_cpu(json_object_get(m, "cpu"), &k->cpu);
    rc->at = "machine.clocks_khz";
    const json_t *ck = json_object_get(m, "clocks_khz");
    k->clock_khz = get_int(rc, ck, "sm", 0);
    k->mem_clock_khz = get_int(rc, ck, "memory", 0);

    kbc_run_info *in = &doc->info;
    const json_t *c = json_object_get(m, "ceilings");
    in->ceilings.read_gbps = get_ceiling(c, "read_gbps");
    in->ceilings.write_gbps = get_ceiling(c, "write_gbps");
    in->ceilings.copy_gbps = get_ceiling(c, "copy_gbps");
    if (!json_is_object(c)) /* files from before the three ceilings */
        in->ceilings.copy_gbps = get_ceiling(m, "copy_gbps");
    in->flops.fp32_gflops = get_ceiling(c, "fp32_gflops");
    in->flops.tf32_gflops = get_ceiling(c, "tf32_gflops");
    in->flops.bf16_gflops = get_ceiling(c, "bf16_gflops");

    const json_t *nv = json_object_get(m, "nvml");
    in->clocks_known = json_is_true(json_object_get(nv, "available"));
    doc->clocks_why = dup_str_or_null(nv, "reason");
    rc->at = "machine.nvml";
    in->sm_max_mhz = rd_u32(rc, nv, "sm_max_mhz");
    in->mem_max_mhz = rd_u32(rc, nv, "mem_max_mhz");
    rc->at = "machine.nvml.at_start";
    read_sample(rc, json_object_get(nv, "at_start"), &in->clocks_at_start);
    rc->at = NULL;
}

static char **string_array(const json_t *a, size_t *n)
{
    *n = 0;
    size_t count = json_array_size(a);
    char **out = kbc_xcalloc(count ? count : 1, sizeof *out);
    size_t i;
    const json_t *x;
    json_array_foreach(a, i, x) if (json_is_string(x)) out[(*n)++] = kbc_xstrdup(json_string_value(x));
    return out;
}

/* One of "config"."experiments", as experiment_json writes it and
   kbc_exp_infos (exec/exp_info.c) fills it. */
static void read_experiment(rd *c, const json_t *o, kbc_exp_info *x)
{
    memset(x, 0, sizeof *x);
    const json_t *name = json_object_get(o, "name");
    x->name = kbc_xstrdup(json_is_string(name) ? json_string_value(name) : "");
    x->line = get_int(c, o, "line", 0);
    x->description = dup_str_or_null(o, "description");
    const json_t *plugin = json_object_get(o, "plugin");
    x->plugin = kbc_xstrdup(json_is_string(plugin) ? json_string_value(plugin) : "");
    x->plugin_file = dup_str_or_null(o, "plugin_file");
    x->variants = string_array(json_object_get(o, "variants"), &x->n_variants);
    x->baseline = dup_str_or_null(o, "baseline");
    x->reference = dup_str_or_null(o, "reference");
    const json_t *m = json_object_get(o, "measure");
    c->at = "measure";
    x->warmup = rd_u32(c, m, "warmup");
    x->runs = rd_u32(c, m, "runs");
    x->budget_s = get_num(m, "budget_s");
    x->noise_pct = get_num(m, "noise_pct");
    x->min_runs = rd_u32(c, m, "min_runs");
    x->max_runs = rd_u32(c, m, "max_runs");
    x->min_time_s = get_num(m, "min_time_s");
    x->include_copies = json_is_true(json_object_get(m, "include_copies"));
    x->seed = rd_u64(c, m, "seed");
    x->cpu_threads = get_int(c, m, "cpu_threads", 0);
    const json_t *cache = json_object_get(m, "cache");
    x->cache_cold = json_is_string(cache) && strcmp(json_string_value(cache), "cold") == 0;
    x->batch = batch_of(c, m, "batch");
    c->at = NULL;
    const json_t *params = json_object_get(o, "params");
    size_t np = json_object_size(params);
    x->param_names = kbc_xcalloc(np ? np : 1, sizeof *x->param_names);
    x->param_values = kbc_xcalloc(np ? np : 1, sizeof *x->param_values);
    x->n_values = kbc_xcalloc(np ? np : 1, sizeof *x->n_values);
    const char *key;
    const json_t *vals;
    json_object_foreach((json_t *)params, key, vals)
    {
        size_t k = x->n_params++;
        x->param_names[k] = kbc_xstrdup(key);
        x->param_values[k] = string_array(vals, &x->n_values[k]);
    }
    x->n_points = rd_u64(c, o, "points");
}

static void free_experiment(kbc_exp_info *x)
{
    free(x->name);
    free(x->description);
    free(x->plugin);
    free(x->plugin_file);
    for (size_t k = 0; k < x->n_variants; k++)
        free(x->variants[k]);
    free(x->variants);
    free(x->baseline);
    free(x->reference);
    for (size_t k = 0; k < x->n_params; k++) {
        for (size_t j = 0; j < x->n_values[k]; j++)
            free(x->param_values[k][j]);
        free(x->param_values[k]);
        free(x->param_names[k]);
    }
    free(x->param_names);
    free(x->param_values);
    free(x->n_values);
}

/* "plan": {"hash", "shard": {"index", "count"} or null, "jobs"}.  Returns
   0, or -1 with why set when the plan is there but malformed. */
static int read_plan(rd *rc, const json_t *p, kbc_run_doc *doc, char *why, size_t n)
{
    if (!p)
        return 0;
    const json_t *hash = json_object_get(p, "hash");
    if (!json_is_object(p) || !json_is_string(hash)) {
        snprintf(why, n, "its \"plan\" has no hash");
        return -1;
    }
    doc->has_plan = 1;
    doc->plan_hash = kbc_xstrdup(json_string_value(hash));
    const json_t *sh = json_object_get(p, "shard");
    if (json_is_object(sh)) {
        const json_t *i = json_object_get(sh, "index"), *c = json_object_get(sh, "count");
        if (!json_is_integer(i) || !json_is_integer(c) || json_integer_value(c) < 1 ||
            json_integer_value(c) > 1000000 || json_integer_value(i) < 0 ||
            json_integer_value(i) >= json_integer_value(c)) {
            snprintf(why, n, "its \"plan\" has a shard that is not an index below a count");
            return -1;
        }
        doc->shard_index = (int)json_integer_value(i);
        doc->shard_count = (int)json_integer_value(c);
    } else if (sh && !json_is_null(sh)) {
        snprintf(why, n, "its \"plan\" has a shard that is neither an object nor null");
        return -1;
    }
    rc->at = "plan";
    doc->jobs = rd_u64(rc, p, "jobs");
    rc->at = NULL;
    return 0;
}

static void read_provenance(rd *c, const json_t *pv, kbc_run_doc *doc)
{
    const json_t *pl = json_object_get(pv, "plugins");
    size_t count = json_array_size(pl);
    doc->builds = kbc_xcalloc(count ? count : 1, sizeof *doc->builds);
    size_t i;
    const json_t *x;
    json_array_foreach(pl, i, x)
    {
        if (!json_is_object(x))
            continue;
        kbc_build_info *b = &doc->builds[doc->n_builds++];
        get_str(x, "name", b->name, sizeof b->name);
        get_str(x, "file", b->file, sizeof b->file);
        get_str(x, "sha256", b->sha256, sizeof b->sha256);
    }
    c->at = "provenance";
    doc->cccl_version = get_int(c, pv, "cccl_version", 0);
    c->at = NULL;
}

/* "suspects": [{"key", "median_s", "than_key", "than_median_s",
   "work_ratio", "backend"}, ...] (kbc_suspects_to_json).  Returns 0, or -1 with why
   set when it is there but malformed. */
static int read_suspects(const json_t *a, kbc_run_doc *doc, char *why, size_t n)
{
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a)) {
        snprintf(why, n, "its \"suspects\" is not an array");
        return -1;
    }
    doc->has_suspects = 1;
    size_t count = json_array_size(a);
    doc->suspects = kbc_xcalloc(count ? count : 1, sizeof *doc->suspects);
    for (size_t i = 0; i < count; i++) {
        const json_t *x = json_array_get(a, i);
        const json_t *key = json_object_get(x, "key"), *than = json_object_get(x, "than_key");
        static const char *const nums[] = {"median_s", "than_median_s", "work_ratio"};
        double v[3];
        for (int k = 0; k < 3; k++) {
            const json_t *y = json_object_get(x, nums[k]);
            v[k] = json_is_number(y) ? json_number_value(y) : NAN;
            if (!json_is_number(y) || !(v[k] > 0)) {
                snprintf(why, n, "suspect %zu: \"%s\" is not a positive number", i, nums[k]);
                return -1;
            }
        }
        if (!json_is_string(key) || !json_is_string(than)) {
            snprintf(why, n, "suspect %zu: \"key\" and \"than_key\" are not both strings", i);
            return -1;
        }
        /* "backend" came later: a file without it gets the GPU's advice. */
        const char *backend = json_string_value(json_object_get(x, "backend"));
        doc->suspects[doc->n_suspects++] =
            (kbc_suspect){kbc_xstrdup(json_string_value(key)), v[0],
                          kbc_xstrdup(json_string_value(than)), v[1], v[2], 0,
                          backend && strcmp(backend, "cpu") == 0};
    }
    return 0;
}

/* Points info's pointers at what doc owns. */
static void link_info(kbc_run_doc *doc)
{
    kbc_run_info *in = &doc->info;
    in->config_file = doc->config_file;
    in->machine = doc->has_machine ? &doc->machine : NULL;
    in->clocks_why = doc->clocks_why;
    in->command_line = doc->command;
    in->exps = doc->exps;
    in->n_exps = doc->n_exps;
    in->plan_hash = doc->has_plan ? doc->plan_hash : NULL;
    in->shard_index = doc->shard_index;
    in->shard_count = doc->shard_count;
    in->jobs = doc->jobs;
    in->builds = doc->builds;
    in->n_builds = doc->n_builds;
    in->cccl_version = doc->cccl_version;
}

int kbc_run_doc_from_json(const json_t *root, const char *path, kbc_run_doc *doc, kbc_diag *d)
{
    memset(doc, 0, sizeof *doc);
    doc->exit_code = -1;
    const json_t *rs = json_object_get(root, "results");
    if (!json_is_object(root) || !json_is_array(rs)) {
        kbc_diag_set(d, "%s: has no \"results\" array; is it a kbench results file?", path);
        return -1;
    }
    if (check_schema_version(root, path, d) != 0)
        return -1;
    char why[512];
    rd c = {.why = why, .n = sizeof why};
    if (read_plan(&c, json_object_get(root, "plan"), doc, why, sizeof why) != 0 || c.bad) {
        kbc_diag_set(d, "%s: %s.", path, why);
        kbc_run_doc_free(doc);
        return -1;
    }
    doc->command = dup_str_or_null(root, "command");
    read_machine(&c, json_object_get(root, "machine"), doc);
    const json_t *config = json_object_get(root, "config");
    doc->config_file = dup_str_or_null(config, "file");
    const json_t *exps = json_object_get(config, "experiments");
    size_t ne = json_array_size(exps);
    doc->exps = kbc_xcalloc(ne ? ne : 1, sizeof *doc->exps);
    size_t i, bad_exp = SIZE_MAX;
    const json_t *x;
    json_array_foreach(exps, i, x)
    {
        if (!json_is_object(x) || c.bad)
            continue;
        read_experiment(&c, x, &doc->exps[doc->n_exps++]);
        if (c.bad)
            bad_exp = i;
    }
    read_provenance(&c, json_object_get(root, "provenance"), doc);
    doc->exit_code = get_int(&c, root, "exit_code", -1);
    if (c.bad) {
        if (bad_exp != SIZE_MAX)
            kbc_diag_set(d, "%s: experiment %zu: %s.", path, bad_exp, why);
        else
            kbc_diag_set(d, "%s: %s.", path, why);
        kbc_run_doc_free(doc);
        return -1;
    }
    if (read_suspects(json_object_get(root, "suspects"), doc, why, sizeof why) != 0) {
        kbc_diag_set(d, "%s: %s.", path, why);
        kbc_run_doc_free(doc);
        return -1;
    }
    const json_t *fin = json_object_get(root, "finished");
    doc->finished = fin != NULL && !json_is_null(fin);
    size_t count = json_array_size(rs);
    doc->recs = kbc_xcalloc(count ? count : 1, sizeof *doc->recs);
    for (i = 0; i < count; i++) {
        if (kbc_record_from_json(json_array_get(rs, i), &doc->recs[i], why, sizeof why) != 0) {
            kbc_diag_set(d, "%s: result %zu: %s.", path, i, why);
            doc->n_recs = i;
            kbc_run_doc_free(doc);
            return -1;
        }
        doc->n_recs = i + 1;
    }
    link_info(doc);
    return 0;
}

int kbc_results_read_run(const char *path, kbc_run_doc *doc, kbc_diag *d)
{
    memset(doc, 0, sizeof *doc);
    json_t *root = kbc_results_load(path, d);
    if (!root)
        return -1;
    int r = kbc_run_doc_from_json(root, path, doc, d);
    json_decref(root);
    return r;
}

void kbc_run_doc_free(kbc_run_doc *doc)
{
    free(doc->command);
    free(doc->config_file);
    free(doc->clocks_why);
    for (size_t i = 0; i < doc->n_exps; i++)
        free_experiment(&doc->exps[i]);
    free(doc->exps);
    free(doc->plan_hash);
    free(doc->builds);
    kbc_records_free(doc->recs, doc->n_recs);
    for (size_t i = 0; i < doc->n_suspects; i++) {
        free((char *)doc->suspects[i].key);
        free((char *)doc->suspects[i].than_key);
    }
    free(doc->suspects);
    memset(doc, 0, sizeof *doc);
    doc->exit_code = -1;
}

char *kbc_results_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return kbc_xasprintf("%s%sresults.json", path,
                             path[0] && path[strlen(path) - 1] == '/' ? "" : "/");
    return kbc_xstrdup(path);
}
