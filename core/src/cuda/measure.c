/* measure.c -- see measure.h. */
#include "measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int kbc_one_run(kbc_instance in, void *state, uint32_t v, int copies, kbc_error *err)
{
    int r;
    if (copies && (r = kbc_call_upload(in, state, v, err)) != KB_OK)
        return r;
    if ((r = kbc_call_run(in, state, v, err)) != KB_OK)
        return r;
    if (copies && (r = kbc_call_download(in, state, v, err)) != KB_OK)
        return r;
    return KB_OK;
}

int kbc_fault_plugin(kbc_fault *f)
{
    f->kind = KBC_FAULT_PLUGIN;
    return -1;
}

int kbc_fault_cuda(kbc_fault *f, const char *stage)
{
    f->kind = KBC_FAULT_CUDA;
    f->stage = stage;
    return -1;
}

static void note_set(char *note, size_t n, const char *text)
{
    if (note && n)
        snprintf(note, n, "%s", text);
}

uint32_t kbc_batch_choose(int requested, int cuda, uint32_t flags, int cache_cold, char *note,
                          size_t n)
{
    note_set(note, n, "");
    if (requested == KBC_BATCH_OFF)
        return 1;
    /* A CPU variant is timed with the monotonic clock, whose resolution
       and overhead are far below a run's; nothing to amortise. */
    if (!cuda) {
        note_set(note, n, "not batched: a CPU variant is timed singly");
        return 1;
    }
    if (flags & KB_VARIANT_SYNCS) {
        note_set(note, n, "not batched: run() waits for the stream (syncs), so its runs cannot "
                          "be back to back");
        return 1;
    }
    if (cache_cold) {
        note_set(note, n, "not batched: cache = cold flushes the L2 before every run");
        return 1;
    }
    if (requested == KBC_BATCH_AUTO)
        return 0;
    return requested >= 2 ? (uint32_t)requested : 1;
}

/* "12.3 us" */
static const char *short_time(double s, char *buf, size_t n)
{
    if (s < 1e-3)
        snprintf(buf, n, "%.3g us", s * 1e6);
    else if (s < 1)
        snprintf(buf, n, "%.3g ms", s * 1e3);
    else
        snprintf(buf, n, "%.3g s", s);
    return buf;
}

uint32_t kbc_batch_size_for(double per_run_s)
{
    if (!(per_run_s > 0) || !isfinite(per_run_s))
        return KBC_BATCH_MAX;
    double want = ceil(KBC_BATCH_SAMPLE_S / per_run_s);
    return want >= KBC_BATCH_MAX ? KBC_BATCH_MAX : want <= 2 ? 2 : (uint32_t)want;
}

uint32_t kbc_batch_auto(double single_s, char *note, size_t n)
{
    char t[32];
    if (!(single_s > 0) || !isfinite(single_s)) {
        note_set(note, n, "auto: a single run could not be timed, so runs are timed singly");
        return 1;
    }
    if (single_s >= KBC_BATCH_AUTO_BELOW_S) {
        if (note && n)
            snprintf(note, n, "auto: one run takes %s, at least %g us, so runs are timed singly",
                     short_time(single_s, t, sizeof t), KBC_BATCH_AUTO_BELOW_S * 1e6);
        return 1;
    }
    uint32_t b = kbc_batch_size_for(single_s);
    if (note && n)
        snprintf(note, n, "auto: one run takes %s alone, under %g us, so %u runs make a sample",
                 short_time(single_s, t, sizeof t), KBC_BATCH_AUTO_BELOW_S * 1e6, b);
    return b;
}

static void read_clocks(kbc_device *dev, kbc_rec_clocks *c, int after)
{
    kbc_clock_sample s;
    if (kbc_device_clocks(dev, &s) == 0)
        kbc_clocks_add(c, &s, after);
}

/* Captures `batch` runs into a CUDA graph (*exec).  Returns 0; or -1 with
   *exec NULL and note saying why, and the batch is then launched run by
   run: a run() that cannot be captured (a call that is not allowed while
   a stream captures, copies from pageable host memory) still runs.  A
   capture that succeeded with no work in it sets *nothing. */
static int capture_batch(kbc_instance in, void *state, uint32_t v, int copies, uint32_t batch,
                         kbc_device *dev, void **exec, int *nothing, char *note, size_t n)
{
    kbc_error err;
    char why[300];
    size_t nodes = 0;
    int r = KB_OK;
    *exec = NULL;
    if (kbc_gpu_capture_begin(dev->stream, why, sizeof why) != 0) {
        snprintf(note, n, "launched run by run: %s", why);
        return -1;
    }
    for (uint32_t j = 0; j < batch && r == KB_OK; j++)
        r = kbc_one_run(in, state, v, copies, &err);
    int e = kbc_gpu_capture_end(dev->stream, exec, &nodes, why, sizeof why);
    if (r != KB_OK || e != 0 || nodes == 0) {
        if (r != KB_OK)
            snprintf(note, n, "launched run by run: %s() failed while a CUDA graph captured it: %.160s",
                     err.origin, err.sentence);
        else if (e != 0)
            snprintf(note, n, "launched run by run: the CUDA graph capture failed: %s", why);
        else
            snprintf(note, n, "launched run by run: a CUDA graph captured nothing (run() does "
                              "not enqueue on the stream kbench gives it)");
        if (r == KB_OK && e == 0 && nodes == 0)
            *nothing = 1;
        kbc_gpu_graph_destroy(*exec);
        *exec = NULL;
        kbc_host_clear(in.host->host_private);
        kbc_gpu_last_error(why, sizeof why);
        return -1;
    }
    return 0;
}

int kbc_hold_wanted(int cuda, uint32_t flags, int include_copies, int have_hold)
{
    return cuda && have_hold && !(flags & KB_VARIANT_SYNCS) && !include_copies;
}

/* One sample's runs with nothing between them: the batch's graph exec
   launched once when there is one, else `batch` runs one by one.  Returns
   0, or -1 with f filled (a failed graph launch named `stage`). */
static int launch_runs(kbc_instance in, void *state, uint32_t v, int copies, uint32_t batch,
                       void *exec, kbc_device *dev, const char *stage, kbc_fault *f)
{
    if (exec)
        return kbc_gpu_graph_launch(exec, dev->stream, f->why, sizeof f->why) != 0
                   ? kbc_fault_cuda(f, stage)
                   : 0;
    for (uint32_t j = 0; j < batch; j++)
        if (kbc_one_run(in, state, v, copies, &f->err) != KB_OK)
            return kbc_fault_plugin(f);
    return 0;
}

/* One timed sample of a CUDA variant: the hold (when *hold), the flush
   (cold), the start event, `batch` runs with nothing between them (the
   graph exec when there is one), the stop event, the release.  *total is
   the seconds between the events.  A hold that timed out before the
   release sets *hold to 0 (the sample stands: it then carries the host's
   launch latency, as a sample without the hold does).  Returns 0, or -1
   with f filled. */
static int cuda_sample(kbc_instance in, void *state, uint32_t v, int copies, int cold,
                       uint32_t batch, void *exec, kbc_device *dev, int *hold, double *total,
                       kbc_fault *f)
{
    float msec = 0.0f;
    const int held = hold && *hold;
    int rc = 0;
    /* Before the hold: the reset is no stream operation, and the hold
       keeps the GPU busy until the release. */
    if (cold)
        kbc_device_l2_cold(dev);
    if (held && kbc_gpu_hold(dev->hold, dev->hold_dev, KBC_HOLD_TIMEOUT_S, dev->stream, f->why,
                             sizeof f->why) != 0)
        return kbc_fault_cuda(f, "the hold before a timed run");
    if (cold && kbc_device_flush(dev, f->why, sizeof f->why) != 0)
        rc = kbc_fault_cuda(f, "the L2 flush before a timed run");
    else if (kbc_gpu_event_record(dev->ev0, dev->stream, f->why, sizeof f->why) != 0)
        rc = kbc_fault_cuda(f, "the timed runs");
    else
        rc = launch_runs(in, state, v, copies, batch, exec, dev,
                         "the timed runs (a CUDA graph of the batch)", f);
    if (rc == 0 && kbc_gpu_event_record(dev->ev1, dev->stream, f->why, sizeof f->why) != 0)
        rc = kbc_fault_cuda(f, "the timed runs");
    if (held)
        kbc_gpu_release(dev->hold);
    if (rc != 0)
        return rc;
    if (kbc_gpu_event_elapsed(dev->ev0, dev->ev1, &msec, f->why, sizeof f->why) != 0)
        return kbc_fault_cuda(f, "the timed runs");
    if (held && dev->hold[1])
        *hold = 0;
    *total = (double)msec * 1e-3;
    return 0;
}


static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int kbc_measure_variant(kbc_instance in, void *state, uint32_t v, int cuda, uint32_t flags,
                        const kbc_measure *ms, kbc_device *dev, kbc_measured *out, kbc_fault *f)
{
    const int cold = cuda && ms->cache_cold;
    memset(f, 0, sizeof *f);
    memset(out, 0, sizeof *out);
    kbc_stats_compute(NULL, 0, &out->time);
    kbc_clocks_start(&out->clocks, cuda ? kbc_device_sm_max_mhz(dev) : 0);
    out->mode.requested = ms->batch;
    uint32_t batch = kbc_batch_choose(ms->batch, cuda, flags, cold, out->mode.note,
                                      sizeof out->mode.note);

    /* The flush goes on the stream before each run (and before the start
       event of a timed one), so it is ordered before the run and outside
       what the events measure. */
    for (uint32_t i = 0; i < ms->warmup; i++) {
        if (cold)
            kbc_device_l2_cold(dev);
        if (cold && kbc_device_flush(dev, f->why, sizeof f->why) != 0)
            return kbc_fault_cuda(f, "the L2 flush before a warm-up run");
        if (kbc_one_run(in, state, v, ms->include_copies, &f->err) != KB_OK)
            return kbc_fault_plugin(f);
    }
    if (cuda && kbc_device_settle(dev, f->why, sizeof f->why) != 0)
        return kbc_fault_cuda(f, "the warm-up runs");

    /* The hold: on for the whole row, off for good once it timed out. */
    int hold = kbc_hold_wanted(cuda, flags, ms->include_copies, dev && dev->hold != NULL);
    const int had_hold = hold;
    const int is_auto = batch == 0;
    if (is_auto) {
        /* Auto: a few runs timed alone decide; they count as warm-up. */
        double one[KBC_BATCH_PROBE_RUNS];
        for (int i = 0; i < KBC_BATCH_PROBE_RUNS; i++)
            if (cuda_sample(in, state, v, ms->include_copies, 0, 1, NULL, dev, &hold,
                            &one[i], f))
                return -1;
        qsort(one, KBC_BATCH_PROBE_RUNS, sizeof one[0], cmp_double);
        batch = kbc_batch_auto(one[KBC_BATCH_PROBE_RUNS / 2], out->mode.note,
                               sizeof out->mode.note);
    }
    void *exec = NULL;
    if (batch > 1) {
        char why[sizeof out->mode.note];
        if (capture_batch(in, state, v, ms->include_copies, batch, dev, &exec,
                          &out->captured_nothing, why, sizeof why) != 0)
            snprintf(out->mode.note, sizeof out->mode.note, "%s", why);
        /* One untimed sample uploads the graph (its first launch costs
           more).  For auto it also calibrates: a run alone carries the
           launch latency, so the batch is sized again from the time a run
           takes inside the batch, so that a sample lasts about
           KBC_BATCH_SAMPLE_S. */
        double whole = 0.0;
        int st = cuda_sample(in, state, v, ms->include_copies, 0, batch, exec, dev, &hold,
                             &whole, f);
        if (st == 0 && is_auto) {
            uint32_t better = kbc_batch_size_for(whole / (double)batch);
            if (better > batch) {
                char t[32];
                batch = better;
                if (exec) {
                    kbc_gpu_graph_destroy(exec);
                    if (capture_batch(in, state, v, ms->include_copies, batch, dev,
                                      &exec, &out->captured_nothing, why, sizeof why) != 0)
                        snprintf(out->mode.note, sizeof out->mode.note, "%s", why);
                    else
                        st = cuda_sample(in, state, v, ms->include_copies, 0, batch,
                                         exec, dev, &hold, &whole, f);
                }
                if (exec || !strstr(out->mode.note, "run by run"))
                    snprintf(out->mode.note, sizeof out->mode.note,
                             "auto: a run takes %s in a batch, so %u runs make a sample",
                             short_time(whole / (double)batch, t, sizeof t), batch);
            }
        }
        if (st != 0) {
            kbc_gpu_graph_destroy(exec);
            return -1;
        }
    }
    out->mode.batch = batch;
    out->mode.graph = exec != NULL;

    /* With a noise target: at least min_runs and min_time, then until the
       noise of the median is within the target, at most max_runs; without
       one, `runs`.  The budget caps both.  In batch mode each of these is
       a sample of `batch` runs, and the budget counts the whole batch. */
    const int adaptive = ms->noise_pct > 0;
    const double target = ms->noise_pct / 100.0;
    uint32_t runs = adaptive ? (ms->max_runs > ms->min_runs ? ms->max_runs : ms->min_runs)
                             : ms->runs;
    if (runs == 0)
        runs = 1;
    size_t room = runs < 1024 ? runs : 1024;
    double *t = kbc_xmalloc(room * sizeof *t);
    double *sorted = adaptive ? kbc_xmalloc(room * sizeof *sorted) : NULL;
    size_t n = 0;
    double spent = 0.0, cpu = 0.0;
    int rc = 0;
    /* The post-check's poison: whatever the outputs hold after the timed
       runs, the timed runs wrote (docs/integrity.md). */
    if (ms->integrity != KBC_INTEGRITY_OFF &&
        kbc_call_prepare(in, state, v, &f->err) != KB_OK) {
        kbc_gpu_graph_destroy(exec);
        free(t);
        free(sorted);
        return kbc_fault_plugin(f);
    }
    if (cuda)
        read_clocks(dev, &out->clocks, 0);
    while (n < runs && (n == 0 || spent < ms->budget_s)) {
        if (adaptive && n >= ms->min_runs && spent >= ms->min_time_s &&
            kbc_median_noise(sorted, n) <= target)
            break;
        if (n == room) {
            room *= 2;
            t = kbc_xrealloc(t, room * sizeof *t);
            if (sorted)
                sorted = kbc_xrealloc(sorted, room * sizeof *sorted);
        }
        double whole, s;
        if (cuda) {
            if ((rc = cuda_sample(in, state, v, ms->include_copies, cold, batch, exec,
                                  dev, &hold, &whole, f)) != 0)
                break;
            s = whole / (double)batch;
        } else {
            /* The CPU time around the wall clock's readings, so that its
               reading is not timed. */
            double c0 = kbc_process_cpu();
            double t0 = kbc_now();
            int r = kbc_one_run(in, state, v, ms->include_copies, &f->err);
            s = whole = kbc_now() - t0;
            cpu += kbc_process_cpu() - c0;
            if (r != KB_OK) {
                rc = kbc_fault_plugin(f);
                break;
            }
        }
        if (sorted) {
            /* Kept sorted by insertion: the noise is judged after each run. */
            size_t at = n;
            while (at > 0 && sorted[at - 1] > s) {
                sorted[at] = sorted[at - 1];
                at--;
            }
            sorted[at] = s;
        }
        t[n++] = s;
        spent += whole;
    }
    if (rc == 0 && cuda)
        read_clocks(dev, &out->clocks, 1);
    if (had_hold && !hold) {
        size_t used = strlen(out->mode.note);
        snprintf(out->mode.note + used, sizeof out->mode.note - used,
                 "%sthe hold before a sample timed out (run() waited for the GPU?), so the "
                 "samples after it carry the host's launch latency",
                 used ? "; " : "");
    }
    kbc_gpu_graph_destroy(exec);
    if (rc == 0 && adaptive)
        out->capped = !(kbc_median_noise(sorted, n) <= target);
    free(sorted);
    /* Launch errors of the timed runs surface only here. */
    if (rc == 0 && cuda && kbc_gpu_last_error(f->why, sizeof f->why) != 0)
        rc = kbc_fault_cuda(f, "the timed runs");
    if (rc == 0 && n > 0) {
        /* In run order, before the summary sorts t. */
        out->samples = kbc_xmalloc(n * sizeof *out->samples);
        memcpy(out->samples, t, n * sizeof *t);
    }
    if (rc == 0)
        kbc_stats_compute(t, n, &out->time);
    out->cpu_per_run_s = !cuda && n > 0 ? cpu / (double)n : NAN;
    free(t);
    return rc;
}

/* ---- the runs replayed outside the timed samples (measure.h) ---- */

void kbc_replay_open(kbc_replay *p, kbc_instance in, void *state, uint32_t v, int copies,
                     const kbc_rec_mode *mode, kbc_device *dev)
{
    memset(p, 0, sizeof *p);
    p->in = in;
    p->state = state;
    p->v = v;
    p->copies = copies;
    p->dev = dev;
    p->batch = mode->batch > 1 ? mode->batch : 1;
    /* The timed samples replayed a graph: so do these.  A capture that
       fails now leaves exec NULL, and the batch is launched run by run, as
       the timing would have done. */
    int nothing = 0; /* an empty capture was the timing's to flag (integrity.h) */
    if (p->batch > 1 && mode->graph)
        (void)capture_batch(in, state, v, copies, p->batch, dev, &p->exec, &nothing, p->note,
                            sizeof p->note);
}

int kbc_replay_steps(kbc_replay *p, uint64_t steps, kbc_fault *f)
{
    memset(f, 0, sizeof *f);
    for (uint64_t i = 0; i < steps; i++)
        if (launch_runs(p->in, p->state, p->v, p->copies, p->batch, p->exec, p->dev,
                        "the energy windows (a CUDA graph of the batch)", f) != 0)
            return -1;
    return 0;
}

int kbc_replay_wait(kbc_replay *p, kbc_fault *f)
{
    if (kbc_device_settle(p->dev, f->why, sizeof f->why) != 0)
        return kbc_fault_cuda(f, "the energy windows");
    return 0;
}

void kbc_replay_close(kbc_replay *p)
{
    kbc_gpu_graph_destroy(p->exec);
    p->exec = NULL;
}
