/* point.c -- see point.h and the lifecycle comment in kbench/plugin.h. */
#include "point.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy.h"
#include "instance.h"
#include "integrity.h"
#include "measure.h"
#include "prefetch.h"
#include "sweep.h"
#include "util.h"

static void set_text(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

static const char *variant_name(const kb_plugin *d, int v)
{
    return v >= 0 && (uint32_t)v < d->n_variants ? d->variants[v].name : "";
}

void kbc_record_identify(kbc_record *r, const kbc_experiment *e, uint64_t p,
                         const kb_value *values, uint32_t v)
{
    const kb_plugin *d = e->plugin->desc;
    kbc_record_init(r);
    set_text(r->experiment, sizeof r->experiment, e->name);
    set_text(r->plugin, sizeof r->plugin, d->name);
    set_text(r->item_name, sizeof r->item_name, d->item_name ? d->item_name : "");
    r->variant_index = v;
    if (v < d->n_variants) {
        set_text(r->variant, sizeof r->variant, d->variants[v].name);
        r->backend = d->variants[v].backend;
        r->flags = d->variants[v].flags;
    }
    r->point = p;
    r->n_points = e->n_points;
    r->n_params = d->n_params < KB_MAX_PARAMS ? d->n_params : KB_MAX_PARAMS;
    for (uint32_t i = 0; i < r->n_params; i++) {
        kbc_rec_param *q = &r->params[i];
        set_text(q->name, sizeof q->name, d->params[i].name);
        q->type = d->params[i].type;
        q->value = values[i];
        kbc_value_format(&d->params[i], values[i], q->text, sizeof q->text);
        q->swept = e->axes && e->axes[i].n > 1;
    }
    set_text(r->baseline, sizeof r->baseline, variant_name(d, e->baseline));
    set_text(r->reference, sizeof r->reference, variant_name(d, e->reference));
    r->cache_cold = e->measure.cache_cold && r->backend == KB_BACKEND_CUDA;
    r->mode.requested = e->measure.batch;
    r->energy.requested = e->measure.energy;
    set_text(r->device, sizeof r->device, r->backend == KB_BACKEND_CUDA ? "" : "cpu");
}

static double *nan_array(uint64_t n)
{
    double *a = kbc_xmalloc((n ? n : 1) * sizeof *a);
    for (uint64_t i = 0; i < n; i++)
        a[i] = NAN;
    return a;
}

void kbc_point_memory_init(kbc_point_memory *m, const kbc_experiment *e)
{
    m->baseline = e->baseline >= 0 ? nan_array(e->n_points) : NULL;
    m->reference = e->reference >= 0 ? nan_array(e->n_points) : NULL;
}

void kbc_point_memory_free(kbc_point_memory *m)
{
    free(m->baseline);
    free(m->reference);
    m->baseline = m->reference = NULL;
}

double kbc_ceiling_for(const kbc_ceilings *c, uint64_t bytes_read, uint64_t bytes_written,
                       const char **kind)
{
    *kind = "";
    if (bytes_read == 0 && bytes_written == 0)
        return 0.0;
    if (bytes_written == 0) {
        *kind = "read";
        return c->read_gbps;
    }
    if (bytes_read == 0) {
        *kind = "write";
        return c->write_gbps;
    }
    *kind = "mixed";
    if (c->read_gbps <= 0 || c->write_gbps <= 0)
        return c->copy_gbps; /* one of the two is missing: the copy is a mix too */
    double r = (double)bytes_read, w = (double)bytes_written;
    /* The time to read at the read ceiling plus the time to write at the
       write ceiling: the rate of a row that moves both at their best. */
    return (r + w) / (r / c->read_gbps + w / c->write_gbps);
}

/* kb_work.peak came in minor 1, past the 48 bytes of minor 0's kb_work
   (plugin.h: a field a minor adds never lies in the tail padding). */
_Static_assert(offsetof(kb_work, peak) == 48, "kb_work.peak starts where minor 0 ended");
/* kb_work.variant_device_bytes came in minor 2, past minor 1's 56 bytes. */
_Static_assert(offsetof(kb_work, variant_device_bytes) == 56,
               "kb_work.variant_device_bytes starts where minor 1 ended");

double kbc_peak_for(const kbc_flops_ceilings *c, uint32_t peak, const char **kind)
{
    switch (peak) {
    case KB_PEAK_FP32:
        *kind = "fp32";
        return c->fp32_gflops;
    case KB_PEAK_TF32:
        *kind = "tf32";
        return c->tf32_gflops;
    case KB_PEAK_BF16:
        *kind = "bf16";
        return c->bf16_gflops;
    }
    *kind = "";
    return 0.0;
}

/* A plugin call's failure as the record's outcome and reason:
   KB_EUNSUPPORTED is a limit of the variant (SKIPPED), anything else an
   ERROR; the reason is the error's sentence (instance.h). */
static void from_error(kbc_record *r, const kbc_error *err)
{
    r->outcome = err->code == KB_EUNSUPPORTED ? KBC_SKIPPED : KBC_ERROR;
    snprintf(r->reason, sizeof r->reason, "%s", err->sentence);
}

static void cuda_error(kbc_record *r, const char *stage, const char *why)
{
    r->outcome = KBC_ERROR;
    snprintf(r->reason, sizeof r->reason, "the CUDA runtime reported an error in %s: %s", stage,
             why);
    kbc_stats_compute(NULL, 0, &r->time);
}

/* Tells the plugin there is no GPU from now on, so that later calls keep
   their hands off a dead context. */
static void host_gpu(kb_host *host, const kbc_device *dev)
{
    int on = dev && dev->usable && !dev->lost;
    host->stream = on ? dev->stream : NULL;
    host->device = on ? dev->ordinal : -1;
    host->sm_count = on ? dev->sm_count : 0;
    host->l2_bytes = on ? dev->l2_bytes : 0;
}

static void lost_after(kbc_device *dev, kb_host *host, const char *after)
{
    kbc_device_check_lost(dev, after);
    host_gpu(host, dev);
}

/* The host decides from the numbers: error <= tolerance, neither NaN.  The
   plugin's own verdict is only checked against them, so that a verify that
   cannot fail (or one that fails what it measured as good) is caught
   rather than believed.  Returns 0 to go on measuring, -1 when the record
   is final (a contradiction). */
static int judge(kbc_record *r, const kb_check *c)
{
    const char *m = c->measure ? c->measure : "unnamed";
    set_text(r->check.measure, sizeof r->check.measure, m);
    r->check.error = c->error;
    r->check.tolerance = c->tolerance;
    int pass = kbc_check_passes(c);
    r->check.passed = pass;
    if (!c->passed != !pass) {
        r->outcome = KBC_ERROR;
        snprintf(r->reason, sizeof r->reason,
                 "verify() contradicts itself: it says %s, but its %s error %g is %s the "
                 "tolerance %g",
                 c->passed ? "passed" : "failed", m, c->error, pass ? "within" : "not within",
                 c->tolerance);
        return -1;
    }
    if (!pass) {
        /* A wrong answer is still timed: a fast wrong kernel is worth
           seeing next to its error. */
        r->outcome = KBC_FAIL;
        snprintf(r->reason, sizeof r->reason,
                 "verification failed: %s error %g is not within the tolerance %g", m, c->error,
                 c->tolerance);
    } else {
        r->outcome = KBC_PASS;
    }
    return 0;
}

/* With integrity = off, a batched row's output is still verified again
   after its timed runs: they ran back to back with no synchronisation
   between them, and the last one's output must still be right.  A wrong
   answer now fails the row; a failing call errs it.  (Otherwise the
   post-check of integrity.h does this for every row.) */
static void verify_after_batch(const kbc_experiment *e, void *state, kbc_device *dev,
                               kb_host *host, kbc_record *r)
{
    const kbc_instance in = kbc_instance_of(e->plugin->desc, host);
    const uint32_t v = r->variant_index;
    kbc_error err;
    char why[400];
    int st;
    if ((st = kbc_call_download(in, state, v, &err)) != KB_OK) {
        from_error(r, &err);
        if (st == KB_ECUDA)
            lost_after(dev, host, r->reason);
        return;
    }
    if (kbc_device_settle(dev, why, sizeof why) != 0) {
        r->outcome = KBC_ERROR;
        snprintf(r->reason, sizeof r->reason,
                 "the CUDA runtime reported an error after the batched runs: %s", why);
        lost_after(dev, host, why);
        return;
    }
    kb_check check;
    if (kbc_call_verify(in, state, v, &check, &err) != KB_OK) {
        from_error(r, &err);
        return;
    }
    const char *m = check.measure ? check.measure : "unnamed";
    int pass = kbc_check_passes(&check);
    if (!pass && r->outcome == KBC_PASS) {
        r->outcome = KBC_FAIL;
        r->check.passed = 0;
        r->check.error = check.error;
        r->check.tolerance = check.tolerance;
        snprintf(r->reason, sizeof r->reason,
                 "the output after the batched runs (x%u) did not verify: %s error %g is not "
                 "within the tolerance %g, though the checked run's did",
                 r->mode.batch, m, check.error, check.tolerance);
    }
}

/* One variant of a set-up point: poison, the checked run, verify, the
   measurement, then the checks that its timing is of the work it verified
   (integrity.h).  Rates and speed-ups come later, once every variant ran. */
static void run_variant(const kbc_experiment *e, void *state, kbc_device *dev, kb_host *host,
                        kbc_record *r, kbc_prefetch *pf, double *joins_s)
{
    const kbc_instance in = kbc_instance_of(e->plugin->desc, host);
    const uint32_t v = r->variant_index;
    const int cuda = r->backend == KB_BACKEND_CUDA;
    kbc_error err;
    char why[400];
    int st;

    /* Poison, then one checked run with the copies, so that verify() sees
       what this variant wrote and nothing left by another. */
    if ((st = kbc_call_prepare(in, state, v, &err)) != KB_OK)
        goto plugin_failed;
    if ((st = kbc_one_run(in, state, v, 1, &err)) != KB_OK)
        goto plugin_failed;
    if (cuda && kbc_device_settle(dev, why, sizeof why) != 0) {
        cuda_error(r, "the checked run", why);
        lost_after(dev, host, why);
        return;
    }
    kb_check check;
    if ((st = kbc_call_verify(in, state, v, &check, &err)) != KB_OK)
        goto plugin_failed;
    if (judge(r, &check) != 0)
        return;

    kbc_fault f;
    kbc_measured got;
    if (kbc_measure_variant(in, state, v, cuda, r->flags, &e->measure, dev, &got, &f) == 0) {
        kbc_record_free(r);
        r->time = got.time;
        r->samples = got.samples;
        r->n_samples = got.samples ? got.time.n : 0;
        r->noise_target = e->measure.noise_pct / 100.0;
        r->noise_capped = got.capped;
        r->clocks = got.clocks;
        r->mode = got.mode;
        if (r->samples) {
            double *x = kbc_xmalloc(r->n_samples * sizeof *x);
            memcpy(x, r->samples, r->n_samples * sizeof *x);
            kbc_stats summary;
            kbc_stats_compute(x, r->n_samples, &summary); /* sorts x */
            r->noise = kbc_median_noise(x, r->n_samples);
            free(x);
        }
        /* The next point's host half (prefetch.h) ran beside the timed
           samples only: it ends before the integrity checks, which count
           the process's threads around run() and would take its threads
           for ones run() left behind. */
        *joins_s += kbc_prefetch_before(pf, 0, dev);
        if (e->measure.integrity == KBC_INTEGRITY_OFF && r->mode.batch > 1)
            verify_after_batch(e, state, dev, host, r);
        /* The checks that the timing is of the work the row verified, then
           the energy windows (more runs of the same work: a run that fails
           there fails the row, as in its timed runs). */
        if (kbc_integrity_check(e, in, state, dev, r, &got, &f) == 0 &&
            kbc_energy_row(in, state, &e->measure, dev, r, &f) == 0)
            return;
        kbc_record_free(r);
    }
    if (f.kind == KBC_FAULT_CUDA) {
        cuda_error(r, f.stage, f.why);
        lost_after(dev, host, f.why);
        return;
    }
    err = f.err;
    st = err.code;
plugin_failed:
    from_error(r, &err);
    kbc_stats_compute(NULL, 0, &r->time);
    if (cuda && st == KB_ECUDA)
        lost_after(dev, host, r->reason);
}

static int ran(const kbc_record *r)
{
    return kbc_record_ran(r) && r->time.median > 0.0; /* a speed-up divides by it */
}

static const kbc_record *record_of(const kbc_record *recs, size_t n, int variant)
{
    for (size_t i = 0; variant >= 0 && i < n; i++)
        if (recs[i].variant_index == (uint32_t)variant)
            return &recs[i];
    return NULL;
}

static double median_of(const kbc_record *r)
{
    return r && ran(r) ? r->time.median : NAN;
}

static double ratio(double base, const kbc_record *r)
{
    return !isnan(base) && ran(r) ? base / r->time.median : NAN;
}

/* The median of variant v (the baseline or the reference) for point p:
   its record here, or what mem kept from the point where its
   configuration ran; and remembers it when it ran here. */
static double median_for(const kbc_experiment *e, uint64_t p, int v, const kbc_record *here,
                         double *kept)
{
    if (v < 0)
        return NAN;
    if (here) {
        double m = median_of(here);
        if (kept)
            kept[p] = m;
        return m;
    }
    return kept ? kept[kbc_point_representative(e, p, (uint32_t)v)] : NAN;
}

void kbc_point_speedups(const kbc_experiment *e, uint64_t p, kbc_record *recs, size_t n,
                        kbc_point_memory *mem)
{
    const kbc_record *cpu = NULL;
    for (size_t i = 0; i < n && !cpu; i++)
        if (recs[i].backend == KB_BACKEND_CPU && ran(&recs[i]))
            cpu = &recs[i];
    double base = median_for(e, p, e->baseline, record_of(recs, n, e->baseline),
                             mem ? mem->baseline : NULL);
    double ref = median_for(e, p, e->reference, record_of(recs, n, e->reference),
                            mem ? mem->reference : NULL);
    double cpu_med = median_of(cpu);
    for (size_t i = 0; i < n; i++) {
        kbc_record *r = &recs[i];
        r->speedup_baseline = ratio(base, r);
        r->speedup_cpu = ratio(cpu_med, r);
        r->speedup_reference = ratio(ref, r);
    }
}

/* Rates from the work numbers, the ceiling that matches the traffic, and
   the speed-ups (kbc_point_speedups). */
static void derive(const kbc_experiment *e, uint64_t p, kbc_record *recs, size_t n,
                   const kbc_device *dev, kbc_point_memory *mem)
{
    for (size_t i = 0; i < n; i++) {
        kbc_record *r = &recs[i];
        if (r->backend == KB_BACKEND_CUDA && dev && dev->usable)
            set_text(r->device, sizeof r->device, dev->name);
        if (!ran(r))
            continue;
        double med = r->time.median;
        double bytes = (double)r->work.bytes_read + (double)r->work.bytes_written;
        r->gbps = bytes > 0 ? bytes / med / 1e9 : NAN;
        r->gflops = r->work.flops > 0 ? r->work.flops / med / 1e9 : NAN;
        r->items_per_s = r->work.items > 0 ? (double)r->work.items / med : NAN;
        if (r->backend == KB_BACKEND_CUDA && dev && bytes > 0) {
            const char *kind;
            double c = kbc_ceiling_for(&dev->ceilings, r->work.bytes_read,
                                       r->work.bytes_written, &kind);
            set_text(r->ceiling, sizeof r->ceiling, kind);
            if (c > 0) {
                r->ceiling_gbps = c;
                r->pct_ceiling = r->gbps / c * 100.0;
            }
        }
        if (r->work.flops > 0 && r->backend == KB_BACKEND_CUDA && dev) {
            const char *kind;
            double c = kbc_peak_for(&dev->flops, r->work.peak, &kind);
            set_text(r->peak, sizeof r->peak, kind);
            if (c > 0) {
                r->peak_gflops = c;
                r->pct_peak = r->gflops / c * 100.0;
            }
        }
    }
    kbc_point_speedups(e, p, recs, n, mem);
}

size_t kbc_point_run(const kbc_experiment *e, uint64_t p, const kbc_point_plan *plan,
                     kbc_device *dev, kb_host *host, kbc_point_memory *mem, kbc_record *recs)
{
    return kbc_point_run_aside(e, p, plan, dev, host, mem, recs, NULL);
}

/* Each row's wall_s: its variant's own seconds (own[i]) plus an equal
   share of the setup and teardown (shared) among the rows set up. */
static void walls(kbc_record *recs, size_t n, const double *own, uint64_t set_up, double shared)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (set_up & KB_VARIANT_BIT(recs[i].variant_index)) != 0;
    for (size_t i = 0; i < n; i++)
        recs[i].wall_s = own[i] + ((set_up & KB_VARIANT_BIT(recs[i].variant_index)) && k
                                       ? shared / (double)k
                                       : 0.0);
}

size_t kbc_point_run_aside(const kbc_experiment *e, uint64_t p, const kbc_point_plan *plan,
                           kbc_device *dev, kb_host *host, kbc_point_memory *mem,
                           kbc_record *recs, kbc_point_aside *aside)
{
    kbc_point_times scratch, *tm = aside ? &aside->times : &scratch;
    memset(tm, 0, sizeof *tm);
    tm->start = kbc_now();
    kbc_prefetch *pf = aside ? aside->prefetch : NULL;
    const unsigned pf_before = kbc_prefetch_started(pf);
    double own[KB_MAX_VARIANTS] = {0};
    uint64_t set_up = 0;
    const kb_plugin *d = e->plugin->desc;
    kbc_hostctx *hc = host->host_private;
    kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
    kbc_experiment_point(e, p, values);
    host_gpu(host, dev);

    /* The variants whose configuration starts here. */
    size_t n = 0;
    for (uint32_t i = 0; i < e->n_variants; i++) {
        uint64_t points;
        char ignores[256];
        if (!kbc_point_first_of(e, p, e->variants[i], &points, ignores, sizeof ignores))
            continue;
        kbc_record_identify(&recs[n], e, p, values, e->variants[i]);
        recs[n].points = points;
        set_text(recs[n].ignores, sizeof recs[n].ignores, ignores);
        n++;
    }
    if (n == 0)
        goto out;

    const kbc_instance in = kbc_instance_of(d, host);
    kbc_error err;
    int st;
    /* The point's plan is the plan's record (point_plan.h), made once when
       the plan was built, never asked of plan() again here.  A row's
       device_bytes is what its variant's run needs: the shared figure plus
       its own (kb_work, "Device memory"). */
    const kb_work work = plan->work;
    for (size_t i = 0; i < n; i++) {
        recs[i].work = work;
        recs[i].work.device_bytes =
            kbc_work_device_bytes(&work, KB_VARIANT_BIT(recs[i].variant_index));
    }
    /* A refused point (kbc_plan_refused), or a variant plan() refused
       alone (kb_host.refuse), is `invalid` with the plugin's sentence and
       runs nothing; a point whose plan() failed otherwise is the plugin's
       error.  kbc_plan_variant is the one rule. */
    uint64_t decided = 0;
    for (size_t i = 0; i < n; i++) {
        const char *why;
        int says = kbc_plan_variant(plan, recs[i].variant_index, &why);
        if (says == KBC_PLAN_RUNS)
            continue;
        recs[i].outcome = says == KBC_PLAN_REFUSED ? KBC_INVALID : KBC_ERROR;
        set_text(recs[i].reason, sizeof recs[i].reason, why);
        decided |= KB_VARIANT_BIT(recs[i].variant_index);
    }
    if (plan->status != KBC_PLAN_RUNS)
        goto report;

    /* Which variants can run here at all.  CUDA variants are admitted in
       order while the device memory of those admitted so far (device_bytes
       plus each one's variant_device_bytes, kbench/plugin.h) fits. */
    uint64_t mask = 0, free_mem = 0;
    int free_known = 0;
    for (size_t i = 0; i < n; i++) {
        kbc_record *r = &recs[i];
        if (decided & KB_VARIANT_BIT(r->variant_index))
            continue;
        if (r->backend != KB_BACKEND_CUDA) {
            mask |= KB_VARIANT_BIT(r->variant_index);
            continue;
        }
        if (!dev || !dev->usable) {
            set_text(r->reason, sizeof r->reason,
                     dev ? dev->why_not : "no CUDA device was given to this point");
            continue;
        }
        if (dev->lost) {
            snprintf(r->reason, sizeof r->reason, KBC_LOST_REASON "%s",
                     dev->lost_after);
            continue;
        }
        if (e->measure.cache_cold && kbc_device_flush_prepare(dev) != 0) {
            set_text(r->reason, sizeof r->reason, dev->flush_why);
            continue;
        }
        if (!free_known) {
            free_mem = kbc_gpu_free_memory();
            free_known = 1;
        }
        uint64_t need_bytes;
        if (!kbc_work_fits(&work, mask, r->variant_index, free_mem, &need_bytes)) {
            char need[32], have[32];
            kbc_human_bytes(need_bytes, need, sizeof need);
            kbc_human_bytes(free_mem, have, sizeof have);
            snprintf(r->reason, sizeof r->reason,
                     "the point needs %s of device memory and only %s is free", need, have);
            continue;
        }
        mask |= KB_VARIANT_BIT(r->variant_index);
    }
    if (!mask)
        goto report;

    void *state = NULL;
    if (e->measure.energy != KBC_ENERGY_OFF)
        kbc_energy_point_start(dev); /* the idle power, before the setup's work */
    /* The host half may have been made ahead, while the point before this
       one ran (prefetch.h); then only setup_device runs here. */
    double t_setup = kbc_now();
    kbc_prefetch_took took;
    st = kbc_prefetch_setup(pf, in, e, p, values, mask, &state, &err, &took);
    tm->setup_s = kbc_now() - t_setup - took.wait_s;
    tm->wait_s = took.wait_s;
    tm->ahead = took.ahead;
    tm->ahead_s = took.host_s;
    set_up = mask;
    if (st != KB_OK) {
        for (size_t i = 0; i < n; i++)
            if (mask & KB_VARIANT_BIT(recs[i].variant_index))
                from_error(&recs[i], &err);
    } else {
        char why[400];
        int any_cuda = 0;
        for (size_t i = 0; i < n; i++)
            if ((mask & KB_VARIANT_BIT(recs[i].variant_index)) &&
                recs[i].backend == KB_BACKEND_CUDA)
                any_cuda = 1;
        /* An error that setup() left behind unnoticed would otherwise be
           blamed on the first CUDA variant's checked run. */
        if (any_cuda && kbc_device_settle(dev, why, sizeof why) != 0) {
            for (size_t i = 0; i < n; i++)
                if ((mask & KB_VARIANT_BIT(recs[i].variant_index)) &&
                    recs[i].backend == KB_BACKEND_CUDA) {
                    recs[i].outcome = KBC_ERROR;
                    snprintf(recs[i].reason, sizeof recs[i].reason,
                             "the CUDA runtime reported an error after setup(): %s", why);
                    mask &= ~KB_VARIANT_BIT(recs[i].variant_index);
                }
            lost_after(dev, host, why);
        }
        for (size_t i = 0; i < n; i++) {
            kbc_record *r = &recs[i];
            if (!(mask & KB_VARIANT_BIT(r->variant_index)))
                continue;
            if (r->backend == KB_BACKEND_CUDA && dev->lost) {
                snprintf(r->reason, sizeof r->reason, KBC_LOST_REASON "%s",
                         dev->lost_after);
                continue;
            }
            /* The next point's host half runs beside this variant only
               where its timing cannot feel it; else it is waited for. */
            int beside = (aside && aside->overlap ? aside->overlap : kbc_prefetch_may_overlap)(
                e, r, dev);
            tm->joins_s += kbc_prefetch_before(pf, beside, dev);
            double t_variant = kbc_now();
            kbc_host_progress(hc, e->name, r->variant);
            run_variant(e, state, dev, host, r, pf, &tm->joins_s);
            own[i] = kbc_now() - t_variant;
        }
    }
    /* Teardown also after a failed setup: the contract lets setup hand
       back a half-built state, and leaking it would starve later points. */
    double t_teardown = kbc_now();
    kbc_call_teardown(in, state);
    tm->teardown_s = kbc_now() - t_teardown;

report:
    derive(e, p, recs, n, dev, mem);
    walls(recs, n, own, set_up, tm->setup_s + tm->wait_s + tm->teardown_s);
out:
    free(values);
    tm->prefetches = kbc_prefetch_started(pf) - pf_before;
    tm->end = kbc_now();
    return n;
}
