/* measure.c -- see measure.h. */
#include "measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int kbc_one_run(const kb_ops *ops, void *state, uint32_t v, kb_host *host, kbc_hostctx *hc,
                int copies, const char **call)
{
    int r;
    kbc_host_clear(hc);
    if (copies && ops->upload) {
        *call = "upload";
        if ((r = ops->upload(state, v, host)) != KB_OK)
            return r;
    }
    *call = "run";
    if ((r = ops->run(state, v, host)) != KB_OK)
        return r;
    if (copies && ops->download) {
        *call = "download";
        if ((r = ops->download(state, v, host)) != KB_OK)
            return r;
    }
    return KB_OK;
}

static int plugin_fault(kbc_fault *f, int code, const char *call)
{
    f->kind = KBC_FAULT_PLUGIN;
    f->code = code;
    f->call = call;
    return -1;
}

static int cuda_fault(kbc_fault *f, const char *stage)
{
    f->kind = KBC_FAULT_CUDA;
    f->stage = stage;
    return -1;
}

int kbc_measure_variant(const kb_ops *ops, void *state, uint32_t v, int cuda,
                        const kbc_measure *ms, kb_host *host, kbc_hostctx *hc, kbc_device *dev,
                        kbc_stats *out, double **samples, int *capped,
                        kbc_fault *f)
{
    const char *call = "run";
    const int cold = cuda && ms->cache_cold;
    int r;
    memset(f, 0, sizeof *f);
    kbc_stats_compute(NULL, 0, out);
    if (samples)
        *samples = NULL;
    if (capped)
        *capped = 0;

    /* The flush goes on the stream before each run (and before the start
       event of a timed one), so it is ordered before the run and outside
       what the events measure. */
    for (uint32_t i = 0; i < ms->warmup; i++) {
        if (cold && kbc_device_flush(dev, f->why, sizeof f->why) != 0)
            return cuda_fault(f, "the L2 flush before a warm-up run");
        if ((r = kbc_one_run(ops, state, v, host, hc, ms->include_copies, &call)) != KB_OK)
            return plugin_fault(f, r, call);
    }
    if (cuda && kbc_device_settle(dev, f->why, sizeof f->why) != 0)
        return cuda_fault(f, "the warm-up runs");

    /* With a noise target: at least min_runs and min_time, then until the
       noise of the median is within the target, at most max_runs; without
       one, `runs`.  The budget caps both. */
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
    double spent = 0.0;
    int rc = 0;
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
        double s;
        if (cuda) {
            float msec = 0.0f;
            if (cold && kbc_device_flush(dev, f->why, sizeof f->why) != 0) {
                rc = cuda_fault(f, "the L2 flush before a timed run");
                break;
            }
            if (kbc_gpu_event_record(dev->ev0, dev->stream, f->why, sizeof f->why) != 0) {
                rc = cuda_fault(f, "the timed runs");
                break;
            }
            if ((r = kbc_one_run(ops, state, v, host, hc, ms->include_copies, &call)) != KB_OK) {
                rc = plugin_fault(f, r, call);
                break;
            }
            if (kbc_gpu_event_record(dev->ev1, dev->stream, f->why, sizeof f->why) != 0 ||
                kbc_gpu_event_elapsed(dev->ev0, dev->ev1, &msec, f->why, sizeof f->why) != 0) {
                rc = cuda_fault(f, "the timed runs");
                break;
            }
            s = (double)msec * 1e-3;
        } else {
            double t0 = kbc_now();
            r = kbc_one_run(ops, state, v, host, hc, ms->include_copies, &call);
            s = kbc_now() - t0;
            if (r != KB_OK) {
                rc = plugin_fault(f, r, call);
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
        spent += s;
    }
    if (rc == 0 && adaptive && capped)
        *capped = !(kbc_median_noise(sorted, n) <= target);
    free(sorted);
    /* Launch errors of the timed runs surface only here. */
    if (rc == 0 && cuda && kbc_gpu_last_error(f->why, sizeof f->why) != 0)
        rc = cuda_fault(f, "the timed runs");
    if (rc == 0 && samples && n > 0) {
        /* In run order, before the summary sorts t. */
        *samples = kbc_xmalloc(n * sizeof **samples);
        memcpy(*samples, t, n * sizeof *t);
    }
    if (rc == 0)
        kbc_stats_compute(t, n, out);
    free(t);
    return rc;
}
