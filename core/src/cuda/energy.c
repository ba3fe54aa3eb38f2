/* energy.c -- see energy.h and docs/energy.md. */
#include "energy.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

/* record.h's kbc_rec_energy.requested holds the core key's value. */
_Static_assert(KBC_ENERGY_OFF == 0 && KBC_ENERGY_AUTO == 1 && KBC_ENERGY_ON == 2,
               "energy's values are record.h's requested");
_Static_assert(KBC_ENERGY_MOST_WINDOWS <= KBC_ENERGY_MAX_KEPT, "a row keeps every window");
_Static_assert(KBC_ENERGY_WINDOWS <= KBC_ENERGY_MOST_WINDOWS, "the default is allowed");

/* A window's steps are enqueued in chunks of 1, 2, 4 ... steps, and after
   each the clocks-event reasons are read (the host is then ahead of the
   GPU, so the readings fall while the window runs, not at its idle edges)
   and the host's clock looked at: a window whose enqueuing alone has taken
   HOST_CAP times energy_window (launch-bound runs, or a median far below
   what a run takes back to back) ends there, holding what was enqueued. */
#define HOST_CAP 2.0
/* A window shorter than energy_window is measured again with its steps
   scaled by energy_window over its length, times this margin against
   jitter, and by at most RESIZE_MAX at once (a step that took no time). */
#define RESIZE_MARGIN 1.1
#define RESIZE_MAX 1000.0
/* The most steps in a window: far beyond any kernel, so that the count
   never overflows. */
#define STEPS_MAX 1e12
/* A counter that stood still this long is stopped, not slow: on Hopper
   it moves every 20-100 ms. */
#define STILL_S 1.0

static int say(kbc_rec_energy *e, kbc_energy_status st, const char *fmt, ...) KB_PRINTF(3, 4);

/* Sets a status other than MEASURED and its sentence, and leaves no
   window behind: a row without energy has no numbers of it.  Returns 0
   (no step failed). */
static int say(kbc_rec_energy *e, kbc_energy_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->why, sizeof e->why, fmt, ap);
    va_end(ap);
    e->status = st;
    e->windows = e->dropped = e->throttled_windows = 0;
    e->runs_per_window = 0;
    e->reasons = 0;
    e->throttled_s = NAN;
    e->note[0] = '\0';
    return 0;
}

/* Whether a counter that fell from `from` to `to` wrapped past the top of
   a 32- or a 64-bit register (it was in the register's top quarter and is
   now in its bottom quarter), rather than going back (reset by a driver
   reload, or broken). */
static int wrapped(unsigned long long from, unsigned long long to)
{
    if (from < (1ULL << 32) && from >= (3ULL << 30) && to < (1ULL << 30))
        return 1;
    return from >= (3ULL << 62) && to < (1ULL << 62);
}

/* The power and thermal clocks-event reasons now (0 when not read). */
static uint64_t throttle_now(kbc_nvml *nvml)
{
    kbc_clock_sample s;
    if (kbc_nvml_sample(nvml, &s) != 0 || !(s.known & KBC_CLK_REASONS))
        return 0;
    return s.reasons & KBC_THROTTLE_MASK;
}

/* What happened to the windows not kept. */
typedef struct drops {
    uint32_t still, backwards, wrapped, too_short;
    double still_s;                     /* seconds of still windows       */
    unsigned long long from, to;        /* the first fall's readings (mJ) */
    double short_s;                     /* the last short window's length */
} drops;

/* The sentence of the windows that were dropped, for a measured row's note. */
static void drop_note(const drops *d, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
#define NOTE(...) kbc_appendf(buf, n, &used, __VA_ARGS__)
    uint32_t all = d->backwards + d->wrapped + d->too_short;
    if (!all)
        return;
    NOTE("%u window%s dropped:", all, all == 1 ? "" : "s");
    if (d->backwards)
        NOTE(" %u where the energy counter went backwards (first from %llu to %llu mJ);",
             d->backwards, d->from, d->to);
    if (d->wrapped)
        NOTE(" %u where it wrapped (first from %llu to %llu mJ);", d->wrapped, d->from, d->to);
    if (d->too_short)
        NOTE(" %u shorter than energy_window, measured again with more runs;", d->too_short);
#undef NOTE
    if (used > 0 && buf[used - 1] == ';')
        buf[used - 1] = '\0';
}

/* The numbers of the kept windows: median joules per run and its
   interval, watts, efficiency. */
static void summarise(const kbc_energy_plan *p, double joules, double seconds,
                      kbc_rec_energy *out)
{
    double sorted[KBC_ENERGY_MAX_KEPT];
    memcpy(sorted, out->window_j, out->windows * sizeof *sorted);
    kbc_stats st;
    kbc_stats_compute(sorted, out->windows, &st); /* sorts */
    out->j_per_run = st.median;
    kbc_median_interval(sorted, out->windows, &out->j_lo, &out->j_hi);
    out->watts = seconds > 0 ? joules / seconds : NAN;
    out->gb_per_j = p->bytes > 0 && st.median > 0 ? p->bytes / 1e9 / st.median : NAN;
    out->gflops_per_j = p->flops > 0 && st.median > 0 ? p->flops / 1e9 / st.median : NAN;
    out->status = KBC_ENERGY_MEASURED;
    out->why[0] = '\0';
}

/* Why too few windows were kept, from what was dropped. */
static int too_few(const drops *d, uint32_t tries, double window_s, kbc_rec_energy *out)
{
    if (d->backwards)
        return say(out, KBC_ENERGY_BACKWARDS,
                   "the energy counter went backwards (from %llu to %llu mJ) in %u of %u "
                   "windows, so too few were left (a driver reload resets it)",
                   d->from, d->to, d->backwards, tries);
    if (d->wrapped)
        return say(out, KBC_ENERGY_WRAPPED,
                   "the energy counter wrapped (from %llu to %llu mJ) in %u of %u windows, "
                   "so too few were left",
                   d->from, d->to, d->wrapped, tries);
    return say(out, KBC_ENERGY_TOO_SHORT,
               "%u of %u windows were shorter than energy_window = %g s (the last %.3g s) "
               "even with more runs in each",
               d->too_short, tries, window_s, d->short_s);
}

int kbc_energy_windows(kbc_nvml *nvml, const kbc_energy_plan *p, const kbc_energy_steps *s,
                       kbc_rec_energy *out, kbc_fault *f)
{
    memset(f, 0, sizeof *f);
    out->status = KBC_ENERGY_NOT_RUN;
    out->why[0] = out->note[0] = '\0';
    out->windows = out->dropped = out->throttled_windows = 0;
    out->runs_per_window = 0;
    out->reasons = 0;
    out->j_per_run = out->j_lo = out->j_hi = out->watts = NAN;
    out->gb_per_j = out->gflops_per_j = NAN;
    out->throttled_s = NAN;
    out->window_s = p->window_s;
    out->power_limit_w = kbc_nvml_power_limit_w(nvml);

    /* The first edge: whatever ran before has finished. */
    if (s->wait(s->ctx, f) != 0)
        return -1;
    char why[300];
    unsigned long long prev;
    if (kbc_nvml_energy_mj(nvml, &prev, why, sizeof why) != KBC_NVML_OK)
        return say(out, KBC_ENERGY_UNSUPPORTED, "NVML cannot read the energy counter: %s", why);
    /* The violation counters, where NVML has them, see the whole window;
       the reasons only the moments they are read. */
    unsigned long long held;
    int held_known = kbc_nvml_violation_ns(nvml, &held) == 0;
    double held_s = 0;
    const uint32_t runs = p->runs_per_step ? p->runs_per_step : 1;
    double want = p->step_s > 0 && isfinite(p->step_s) ? ceil(p->window_s / p->step_s) : 1;
    /* The windows to keep (energy_windows), and the spoiled ones that may
       be replaced on top of them. */
    const int asked = p->windows >= KBC_ENERGY_WINDOWS && p->windows <= KBC_ENERGY_MOST_WINDOWS;
    const uint32_t keep = asked ? p->windows : KBC_ENERGY_WINDOWS;
    uint64_t steps = want < 1 ? 1 : want > STEPS_MAX ? (uint64_t)STEPS_MAX : (uint64_t)want;

    drops d = {0};
    uint32_t tries = 0, moved = 0;
    double joules = 0, seconds = 0, t0 = kbc_now();
    while (out->windows < keep && tries < keep + KBC_ENERGY_SPARE_WINDOWS) {
        tries++;
        uint64_t reasons = 0, done = 0;
        for (uint64_t chunk = 1; done < steps; chunk *= 2) {
            uint64_t k = chunk < steps - done ? chunk : steps - done;
            if (s->enqueue(s->ctx, k, f) != 0)
                return -1;
            done += k;
            reasons |= throttle_now(nvml);
            if (kbc_now() - t0 > HOST_CAP * p->window_s)
                break;
        }
        if (s->wait(s->ctx, f) != 0)
            return -1;
        double t1 = kbc_now();
        unsigned long long now;
        if (kbc_nvml_energy_mj(nvml, &now, why, sizeof why) != KBC_NVML_OK)
            return say(out, KBC_ENERGY_UNSUPPORTED,
                       "NVML stopped reading the energy counter after %u window%s: %s",
                       tries - 1, tries == 2 ? "" : "s", why);
        unsigned long long held_now = 0;
        double held_dt = 0;
        if (held_known && kbc_nvml_violation_ns(nvml, &held_now) == 0 && held_now >= held) {
            held_dt = (double)(held_now - held) * 1e-9;
            held = held_now;
        } else {
            held_known = 0;
        }
        const double dt = t1 - t0;
        const unsigned long long before = prev;
        t0 = t1;
        prev = now;
        if (now == before) {
            /* A window the counter missed puts its joules into the next
               one: no window of this length can be trusted. */
            d.still++;
            d.still_s += dt;
            if (dt >= STILL_S || (!moved && d.still_s >= STILL_S && d.still >= 2))
                return say(out, KBC_ENERGY_STILL,
                           "the energy counter did not move in %u window%s of %.3g s in all "
                           "(%llu runs in the last)%s",
                           d.still, d.still == 1 ? "" : "s", d.still_s,
                           (unsigned long long)(done * runs),
                           moved ? ", after it moved in the ones before" : "");
            if (moved)
                break;
            continue;
        }
        moved++;
        if (d.still)
            break;
        if (now < before) {
            if (!d.backwards && !d.wrapped) {
                d.from = before;
                d.to = now;
            }
            if (wrapped(before, now))
                d.wrapped++;
            else
                d.backwards++;
            continue;
        }
        if (dt < p->window_s) {
            /* Sized from the timed median, the window came out short (a
               run is faster back to back than alone): more steps. */
            d.too_short++;
            d.short_s = dt;
            double grow = dt > 0 ? p->window_s / dt * RESIZE_MARGIN : RESIZE_MAX;
            double more = ceil((double)done * (grow < RESIZE_MAX ? grow : RESIZE_MAX));
            steps = more > STEPS_MAX ? (uint64_t)STEPS_MAX : (uint64_t)more;
            continue;
        }
        double j = (double)(now - before) / 1000.0; /* NVML counts millijoules */
        out->window_j[out->windows] = j / (double)(done * runs);
        out->window_sec[out->windows] = dt;
        out->windows++;
        out->runs_per_window = done * runs;
        joules += j;
        seconds += dt;
        held_s += held_dt;
        if (reasons || held_dt > 0)
            out->throttled_windows++;
        out->reasons |= reasons;
    }
    out->dropped = tries - out->windows;
    if (d.still)
        return say(out, KBC_ENERGY_TOO_SHORT,
                   "the energy counter did not move in %u of %u windows of %.3g s or more: it "
                   "moves every 20-100 ms on Hopper, so windows this short get its updates "
                   "unevenly; make energy_window longer (1 s or more)",
                   d.still, tries, p->window_s);
    if (out->windows < keep)
        return too_few(&d, tries, p->window_s, out);
    summarise(p, joules, seconds, out);
    out->throttled_s = held_known ? held_s : NAN;
    drop_note(&d, out->note, sizeof out->note);
    return 0;
}

void kbc_energy_point_start(kbc_device *dev)
{
    if (!dev)
        return;
    kbc_clock_sample s;
    dev->idle_w = NAN;
    if (kbc_device_clocks(dev, &s) == 0 && (s.known & KBC_CLK_POWER))
        dev->idle_w = s.power_w;
}

static int replay_enqueue(void *ctx, uint64_t steps, kbc_fault *f)
{
    return kbc_replay_steps(ctx, steps, f);
}

static int replay_wait(void *ctx, kbc_fault *f)
{
    return kbc_replay_wait(ctx, f);
}

int kbc_energy_row(kbc_instance in, void *state, const kbc_measure *ms, kbc_device *dev,
                   kbc_record *r, kbc_fault *f)
{
    kbc_rec_energy *en = &r->energy;
    memset(f, 0, sizeof *f);
    en->requested = ms->energy;
    if (ms->energy == KBC_ENERGY_OFF)
        return 0;
    if (r->backend != KB_BACKEND_CUDA)
        return say(en, KBC_ENERGY_CPU, "a CPU variant: NVML's energy counter measures the GPU");
    if (r->cache_cold)
        return say(en, KBC_ENERGY_COLD,
                   "cache = cold flushes the L2 before every run, and the energy counter "
                   "cannot tell the flushes' joules from the runs'");
    if (!dev || !dev->nvml)
        return say(en, KBC_ENERGY_NO_NVML, "no NVML: %s",
                   dev && dev->clocks_why[0] ? dev->clocks_why : "it was not loaded");
    en->idle_w = dev->idle_w;
    const uint32_t batch = r->mode.batch > 1 ? r->mode.batch : 1;
    kbc_energy_plan p = {.window_s = ms->energy_window_s,
                         .windows = ms->energy_windows,
                         .step_s = r->time.median * batch,
                         .runs_per_step = batch,
                         .bytes = (double)r->work.bytes_read + (double)r->work.bytes_written,
                         .flops = r->work.flops};
    kbc_replay rp;
    kbc_replay_open(&rp, in, state, r->variant_index, ms->include_copies, &r->mode, dev);
    kbc_energy_steps steps = {.enqueue = replay_enqueue, .wait = replay_wait, .ctx = &rp};
    int rc = kbc_energy_windows(dev->nvml, &p, &steps, en, f);
    if (rc == 0 && rp.note[0]) {
        size_t used = strlen(en->note);
        snprintf(en->note + used, sizeof en->note - used, "%sthe windows' batch was %s",
                 used ? "; " : "", rp.note);
    }
    kbc_replay_close(&rp);
    return rc;
}
