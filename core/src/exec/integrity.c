/* integrity.c -- see integrity.h and docs/integrity.md. */
#define _GNU_SOURCE
#include "integrity.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "gpu.h"
#include "physical.h"
#include "util.h"

/* What the checks found: flags (the row's timing is not of the work it
   verified) and what could not be checked. */
typedef struct found {
    char flags[700];
    char partial[400];
} found;

static void add(char *to, size_t n, const char *fmt, va_list ap)
{
    size_t used = strlen(to);
    if (used && used + 2 < n) {
        memcpy(to + used, "; ", 3);
        used += 2;
    }
    if (used < n)
        vsnprintf(to + used, n - used, fmt, ap);
}

static void flag(found *x, const char *fmt, ...) KB_PRINTF(2, 3);
static void flag(found *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add(x->flags, sizeof x->flags, fmt, ap);
    va_end(ap);
}

static void partial(found *x, const char *fmt, ...) KB_PRINTF(2, 3);
static void partial(found *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add(x->partial, sizeof x->partial, fmt, ap);
    va_end(ap);
}


/* The process's threads now (/proc/self/task), or -1 when they cannot be
   counted. */
static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* CPU seconds the process's other threads have used (exited ones too). */
static double others_cpu_s(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
        return NAN;
    return kbc_process_cpu() - ((double)t.tv_sec + (double)t.tv_nsec * 1e-9);
}

static const char *plural(unsigned n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* What a row's checks share. */
typedef struct job {
    kbc_instance in;
    void *state;
    uint32_t v;
    int cuda, copies;
    kbc_device *dev;
    kbc_record *r;
    kbc_error err; /* the last failed plugin call */
} job;

/* The device is idle on kbench's stream and no error is pending. */
static int settle(job *j, kbc_fault *f, const char *stage)
{
    if (j->cuda && kbc_device_settle(j->dev, f->why, sizeof f->why) != 0)
        return kbc_fault_cuda(f, stage);
    return 0;
}

/* Downloads and verifies: 1 when the output verifies, 0 when it does not
   (c says how), -1 with f filled when a call failed.  A verify() that
   fails as a call on a poisoned output (it should say "wrong" instead)
   counts as not verifying when `poisoned`. */
static int verifies(job *j, kb_check *c, int poisoned, kbc_fault *f, const char *stage)
{
    if (kbc_call_download(j->in, j->state, j->v, &f->err) != KB_OK)
        return kbc_fault_plugin(f);
    if (settle(j, f, stage) != 0)
        return -1;
    if (kbc_call_verify(j->in, j->state, j->v, c, &f->err) != KB_OK) {
        if (poisoned) {
            kbc_host_clear(j->in.host->host_private);
            return 0;
        }
        return kbc_fault_plugin(f);
    }
    return kbc_check_passes(c);
}

static const char *measure_of(const kb_check *c)
{
    return c->measure ? c->measure : "unnamed";
}

/* 1. The post-check. */
static int post_check(job *j, found *x, kbc_fault *f)
{
    kb_check c;
    int ok = verifies(j, &c, 0, f, "the post-check after the timed runs");
    if (ok < 0)
        return -1;
    if (!ok)
        flag(x,
             "the output after the timed runs is wrong (the checked run was right): the timed "
             "runs did not do all the work (%s error %g, tolerance %g)",
             measure_of(&c), c.error, c.tolerance);
    return 0;
}

/* The poison check of the audit round: right after prepare(), the output
   must not verify. */
static int poison_check(job *j, found *x, kbc_fault *f)
{
    kb_check c;
    int ok = verifies(j, &c, 1, f, "the check of prepare()'s poison");
    if (ok < 0)
        return -1;
    if (ok)
        flag(x, "the output verifies after prepare() and download() with no run between them: "
                "something other than run() writes it (prepare() does not poison, download() "
                "computes, or work launched earlier lands late), so a run that does nothing "
                "cannot be told from one that works");
    return 0;
}

/* The threads run() left running, counted before and after it (-1: they
   could not be counted, which the row says). */
static void threads_left(found *x, int before, int after)
{
    if (before < 0)
        partial(x, "the threads could not be counted (no /proc/self/task)");
    if (before >= 0 && after > before)
        flag(x, "run() left %d %s running after it returned", after - before,
             plural((unsigned)(after - before), "thread", "threads"));
}

/* ---- the CPU variant's audit round ------------------------------------------ */

/* The process's CPU time (every thread's) that a run alone and its
   download() used: unlike their wall times, not lengthened by a busy
   machine's scheduling, and comparable with the timed runs' own
   (kbc_measured.cpu_per_run_s). */
typedef struct cpu_round {
    double run_s, download_s;
} cpu_round;

/* One audit round of a CPU variant: poison, (the first round: the poison
   check, the threads counted around the run and watched after it), one
   run alone, its download() and verify(). */
static int cpu_audit_round(job *j, int first, found *x, cpu_round *t, kbc_fault *f)
{
    if (kbc_call_prepare(j->in, j->state, j->v, &f->err) != KB_OK)
        return kbc_fault_plugin(f);
    if (first && poison_check(j, x, f) != 0)
        return -1;
    if (first && kbc_call_prepare(j->in, j->state, j->v, &f->err) != KB_OK)
        return kbc_fault_plugin(f);
    int n0 = count_threads();
    double c0 = kbc_process_cpu();
    int st = kbc_one_run(j->in, j->state, j->v, j->copies, &f->err);
    double c1 = kbc_process_cpu();
    int n1 = count_threads();
    if (st != KB_OK)
        return kbc_fault_plugin(f);
    t->run_s = c1 - c0;
    if (first) {
        threads_left(x, n0, n1);
        /* Other threads' CPU time once run() returned: work it handed to
           threads that outlive it (a pool of its own, say). */
        double o0 = others_cpu_s();
        kbc_pause(KBC_CPU_WATCH_S);
        double used = others_cpu_s() - o0;
        if (used > 0.25 * KBC_CPU_WATCH_S)
            flag(x, "other threads went on working after run() returned (%.1f ms of CPU time "
                    "in the %.0f ms after it)",
                 used * 1e3, KBC_CPU_WATCH_S * 1e3);
    }
    double c2 = kbc_process_cpu();
    if (kbc_call_download(j->in, j->state, j->v, &f->err) != KB_OK)
        return kbc_fault_plugin(f);
    t->download_s = kbc_process_cpu() - c2;
    kb_check c;
    if (kbc_call_verify(j->in, j->state, j->v, &c, &f->err) != KB_OK)
        return kbc_fault_plugin(f);
    if (first && !kbc_check_passes(&c))
        flag(x, "the output of a run alone, after the timed runs, is wrong (%s error %g, "
                "tolerance %g): the run does not do its work every time",
             measure_of(&c), c.error, c.tolerance);
    return 0;
}

/* Whether a run alone and its download say that the timed runs did less
   than a run: a timed run's CPU time (`timed`, on average) under a third
   of the run's, or a download() many times the run (the work moved out of
   run()).  Below a floor of time, a CPU's noise decides, so neither
   counts.  The floor of a run's shortfall is also a quarter of the timed
   runs' median wall time (wall): a run that sleeps or waits (20 ms of wall
   time, 20 us of CPU time) uses so little CPU that a loaded machine's
   scheduling and page faults in a run alone (0.2 ms, measured under ctest
   -j2) would otherwise read as missing work; a run that skips work it did
   alone is short by at least its own wall time. */
static int cpu_slow_run(double timed, double wall, const cpu_round *t)
{
    double floor = isfinite(wall) && 0.25 * wall > 50e-6 ? 0.25 * wall : 50e-6;
    return timed < t->run_s * KBC_AUDIT_MEDIAN_FRACTION && t->run_s - timed > floor;
}

static int cpu_slow_download(double timed, const cpu_round *t)
{
    double run = timed > t->run_s ? timed : t->run_s;
    return t->download_s > 16 * run && t->download_s - run > 200e-6;
}

static int cpu_audit(job *j, double timed, found *x, kbc_fault *f)
{
    cpu_round a, b;
    /* Without the timed runs' CPU time (it could not be read), their wall
       time stands in. */
    double per_run = isfinite(timed) ? timed : j->r->time.median;
    if (cpu_audit_round(j, 1, x, &a, f) != 0)
        return -1;
    const double wall = j->r->time.median;
    if (!cpu_slow_run(per_run, wall, &a) && !cpu_slow_download(per_run, &a))
        return 0;
    /* One slow round may be the machine's doing: a second must agree. */
    if (cpu_audit_round(j, 0, x, &b, f) != 0)
        return -1;
    cpu_round least = {a.run_s < b.run_s ? a.run_s : b.run_s,
                       a.download_s < b.download_s ? a.download_s : b.download_s};
    char t1[32], t2[32];
    if (cpu_slow_run(per_run, wall, &least))
        flag(x, "a timed run used %s of CPU time on average, under a third of the %s a run "
                "alone used after the timed runs: the timed runs did less than a run does",
             kbc_human_seconds(per_run, t1, sizeof t1),
             kbc_human_seconds(least.run_s, t2, sizeof t2));
    if (cpu_slow_download(per_run, &least))
        flag(x, "download() takes %s of CPU time, more than 16 times a run (%s): the work is "
                "done outside the timed run()",
             kbc_human_seconds(least.download_s, t1, sizeof t1),
             kbc_human_seconds(per_run > least.run_s ? per_run : least.run_s, t2, sizeof t2));
    return 0;
}

/* ---- the CUDA variant's thread check and audit round -------------------------- */

static int run_call(void *ctx)
{
    job *j = ctx;
    return kbc_one_run(j->in, j->state, j->v, j->copies, &j->err);
}

static int download_call(void *ctx)
{
    job *j = ctx;
    return kbc_call_download(j->in, j->state, j->v, &j->err);
}

static int cuda_thread_check(job *j, int cupti, found *x, kbc_fault *f)
{
    int n0 = count_threads();
    int st = kbc_one_run(j->in, j->state, j->v, j->copies, &f->err);
    int n1 = count_threads();
    if (st != KB_OK)
        return kbc_fault_plugin(f);
    if (settle(j, f, "the thread check's run") != 0)
        return -1;
    threads_left(x, n0, n1);
    if (!cupti) {
        /* Without the audit: is the GPU still busy once kbench's stream is
           done?  Work elsewhere shows here when it outlasts the stream. */
        double t0 = kbc_now();
        if (kbc_gpu_device_sync(f->why, sizeof f->why) != 0)
            return kbc_fault_cuda(f, "the thread check's run");
        double busy = kbc_now() - t0;
        char t[32];
        if (busy > 50e-6)
            flag(x, "the GPU was still busy %s after kbench's stream had finished a run: work "
                    "on a stream kbench does not time",
                 kbc_human_seconds(busy, t, sizeof t));
    }
    return 0;
}

/* "3 kernels and 1 copy" */
static const char *work_text(const uint32_t *c, char *buf, size_t n)
{
    static const char *const one[] = {"kernel", "copy", "memset"};
    static const char *const many[] = {"kernels", "copies", "memsets"};
    buf[0] = '\0';
    size_t used = 0;
    int parts = 0, total = 0;
    for (int k = 0; k < KBC_AUDIT_CLASSES; k++)
        total += c[k] != 0;
    for (int k = 0; k < KBC_AUDIT_CLASSES; k++) {
        if (!c[k])
            continue;
        parts++;
        kbc_appendf(buf, n, &used, "%s%u %s", parts == 1 ? "" : parts == total ? " and " : ", ",
                    c[k], plural(c[k], one[k], many[k]));
    }
    return buf;
}

static uint32_t sum3(const uint32_t *c)
{
    return c[0] + c[1] + c[2];
}

static void audit_flags(const kbc_audit *a, found *x)
{
    char what[96], t[32];
    uint32_t other = sum3(a->other), late = sum3(a->late);
    if (other) {
        char where[160];
        if (a->other_context)
            snprintf(where, sizeof where, "in another CUDA context");
        else if (a->other_legacy)
            snprintf(where, sizeof where, "on a stream kbench does not time (the legacy "
                                          "default stream)");
        else
            snprintf(where, sizeof where, "on a stream kbench does not time (stream %u)",
                     a->other_stream);
        flag(x, "%s ran %s%s%s%s", work_text(a->other, what, sizeof what), where,
             a->other_name[0] ? " (the first: " : "", a->other_name,
             a->other_name[0] ? ")" : "");
    }
    if (late)
        flag(x, "%s %s launched %s after run() returned, outside the timing%s%s%s",
             work_text(a->late, what, sizeof what), plural(late, "was", "were"),
             kbc_human_seconds(a->late_s, t, sizeof t), a->late_name[0] ? " (the first: " : "",
             a->late_name, a->late_name[0] ? ")" : "");
    if (a->after_kernels)
        flag(x, "download() launched %u %s%s%s%s: work outside the timed run()",
             a->after_kernels, plural(a->after_kernels, "kernel", "kernels"),
             a->after_name[0] ? " (" : "",
             a->after_name, a->after_name[0] ? ")" : "");
    if (a->window_bytes) {
        char b[32];
        flag(x, "run() launched kernels with an L2 access-policy window of %s (persisting): "
                "its data stays in the L2 between runs",
             kbc_human_bytes(a->window_bytes, b, sizeof b));
    }
    if (a->ours == 0 && other == 0 && late == 0 && !a->after_kernels)
        flag(x, "run() put no work on the GPU: the audit saw no kernel, copy or memset of it");
    if (a->dropped)
        partial(x, "CUPTI dropped %llu records of the audit run", (unsigned long long)a->dropped);
}

static int cuda_audit(job *j, found *x, kbc_fault *f)
{
    char why[400];
    const int waits = (j->r->flags & KB_VARIANT_SYNCS) != 0;
    int cupti = kbc_audit_available(why, sizeof why) == 0;
    if (!cupti)
        partial(x, "the audit ran without CUPTI (%s): work on other streams was looked for only "
                   "as a GPU still busy after kbench's stream",
                why);
    if (cuda_thread_check(j, cupti, x, f) != 0)
        return -1;

    if (kbc_call_prepare(j->in, j->state, j->v, &f->err) != KB_OK)
        return kbc_fault_plugin(f);
    if (settle(j, f, "prepare() before the audit run") != 0 || poison_check(j, x, f) != 0)
        return -1;
    if (kbc_call_prepare(j->in, j->state, j->v, &f->err) != KB_OK)
        return kbc_fault_plugin(f);
    if (settle(j, f, "prepare() before the audit run") != 0)
        return -1;

    kbc_audit a;
    int status = KB_OK, traced = 0;
    kbc_audit_call after = j->copies ? NULL : download_call;
    if (cupti) {
        int rc = kbc_audit_trace(j->dev->stream, waits, KBC_AUDIT_GRACE_S, run_call, after, j,
                                 &status, &a, f->why, sizeof f->why);
        if (rc == -2)
            return kbc_fault_cuda(f, "the audit run");
        if (rc == -1) {
            partial(x, "the CUPTI trace failed (%s)", f->why);
            f->why[0] = '\0';
        }
        traced = rc == 0;
    }
    if (!traced) {
        status = run_call(j);
        if (status == KB_OK && after)
            status = after(j);
    }
    if (status != KB_OK) {
        f->err = j->err;
        return kbc_fault_plugin(f);
    }
    if (settle(j, f, "the audit run") != 0)
        return -1;
    kb_check c;
    if (kbc_call_verify(j->in, j->state, j->v, &c, &f->err) != KB_OK)
        return kbc_fault_plugin(f);
    if (!kbc_check_passes(&c))
        flag(x, "the output of a run alone, after the timed runs, is wrong (%s error %g, "
                "tolerance %g): the run does not do its work every time",
             measure_of(&c), c.error, c.tolerance);
    if (!traced)
        return 0;
    audit_flags(&a, x);

    double median = j->r->time.median;
    if (a.busy_s > 0 && median < a.busy_s * KBC_AUDIT_MEDIAN_FRACTION) {
        /* Once more before saying so: a GPU that had idled clocks down. */
        kbc_audit b;
        if (kbc_call_prepare(j->in, j->state, j->v, &f->err) != KB_OK)
            return kbc_fault_plugin(f);
        if (settle(j, f, "prepare() before the audit run") != 0)
            return -1;
        int rc = kbc_audit_trace(j->dev->stream, waits, KBC_AUDIT_GRACE_S, run_call, after, j,
                                 &status, &b, f->why, sizeof f->why);
        if (rc == -2)
            return kbc_fault_cuda(f, "the audit run");
        if (rc == 0 && status != KB_OK) {
            f->err = j->err;
            return kbc_fault_plugin(f);
        }
        double busy = rc == 0 && b.busy_s < a.busy_s ? b.busy_s : a.busy_s;
        char t1[32], t2[32];
        f->why[0] = '\0';
        if (median < busy * KBC_AUDIT_MEDIAN_FRACTION)
            flag(x, "the timed median (%s) is under a third of the %s the GPU spent on a run "
                    "alone in the audit: the timed runs did less than a run does",
                 kbc_human_seconds(median, t1, sizeof t1),
                 kbc_human_seconds(busy, t2, sizeof t2));
    }
    return 0;
}

/* 4. What run() may have changed of the L2 for every later run. */
static void l2_checks(job *j, found *x)
{
    char why[300], b[32];
    uint64_t bytes = 0;
    double hit = 0;
    int persisting = 0;
    if (kbc_gpu_stream_window(j->dev->stream, &bytes, &hit, &persisting, why, sizeof why) != 0)
        partial(x, "the stream's L2 access-policy window could not be read (%s)", why);
    else if (bytes > 0) {
        flag(x, "run() set an L2 access-policy window of %s on kbench's stream (hit ratio %.2g, "
                "%s): its data may stay in the L2 between runs",
             kbc_human_bytes(bytes, b, sizeof b), hit,
             persisting ? "persisting" : "not persisting");
        kbc_gpu_stream_window_clear(j->dev->stream);
    }
    uint64_t aside = kbc_gpu_persisting_l2();
    if (j->dev->sanitized) {
        /* compute-sanitizer sets aside L2 of its own (11.2 MiB on an H200),
           so a change is not the variant's to answer for. */
        if (aside != j->dev->persisting_l2)
            partial(x, "under compute-sanitizer, which sets aside L2 itself, the persisting-L2 "
                       "set-aside was not checked");
    } else if (aside != j->dev->persisting_l2) {
        flag(x, "run() set aside %s of the L2 for persisting lines",
             kbc_human_bytes(aside, b, sizeof b));
        kbc_gpu_persisting_l2_set(j->dev->persisting_l2);
    }
}

/* 5. The physical limit. */
static void physical_checks(job *j, const kbc_experiment *e, found *x)
{
    kbc_record *r = j->r;
    double med = r->time.median;
    if (!j->dev || !(med > 0))
        return;
    char basis[400];
    double bytes = (double)r->work.bytes_read + (double)r->work.bytes_written;
    double lim = kbc_limit_gbps(&j->dev->limits, j->cuda, r->work.bytes_read,
                                r->work.bytes_written, j->cuda && e->measure.cache_cold, basis,
                                sizeof basis);
    double gbps = bytes / med / 1e9;
    if (!j->cuda && lim > 0 && gbps > lim && j->dev->limits.cpu_copy_gbps > 0) {
        /* Above a measured bound: measured again first (physical.h). */
        kbc_limit_cpu_again(&j->dev->limits);
        lim = kbc_limit_gbps(&j->dev->limits, 0, r->work.bytes_read, r->work.bytes_written, 0,
                             basis, sizeof basis);
    }
    if (lim > 0 && gbps > lim)
        flag(x, "suspect: %.4g GB/s is %.0f%% of what the device can do: %s", gbps,
             gbps / lim * 100, basis);
    if (j->cuda && r->work.flops > 0) {
        double fl = kbc_limit_gflops(&j->dev->limits, r->work.peak, basis, sizeof basis);
        double gflops = r->work.flops / med / 1e9;
        if (fl > 0 && gflops > fl)
            flag(x, "suspect: %.4g TFLOP/s is %.0f%% of what the device can do: %s",
                 gflops / 1000, gflops / fl * 100, basis);
    }
}

/* What the row becomes.  The texts are cut to their fields (a reason of
   several flags can be long; the first flags say the most). */
static void settle_row(kbc_record *r, int mode, const found *x)
{
    if (x->flags[0]) {
        snprintf(r->integrity, sizeof r->integrity, "flagged: %.500s%s%.150s", x->flags,
                 x->partial[0] ? "; partial: " : "", x->partial);
        if (mode == KBC_INTEGRITY_STRICT) {
            if (r->outcome == KBC_PASS)
                r->outcome = KBC_FAIL;
            snprintf(r->reason, sizeof r->reason, "%.690s", x->flags);
        } else if (!r->reason[0]) {
            snprintf(r->reason, sizeof r->reason,
                     "flagged (integrity = warn keeps the row): %.640s", x->flags);
        }
    } else if (x->partial[0]) {
        snprintf(r->integrity, sizeof r->integrity, "partial: %.680s", x->partial);
    } else {
        snprintf(r->integrity, sizeof r->integrity, "ok");
    }
}

int kbc_integrity_check(const kbc_experiment *e, kbc_instance in, void *state, kbc_device *dev,
                        kbc_record *r, const kbc_measured *got, kbc_fault *f)
{
    const int mode = e->measure.integrity;
    memset(f, 0, sizeof *f);
    if (mode == KBC_INTEGRITY_OFF) {
        snprintf(r->integrity, sizeof r->integrity, "off");
        return 0;
    }
    if (r->outcome != KBC_PASS || r->time.n == 0)
        return 0;
    job j = {.in = in, .state = state, .v = r->variant_index,
             .cuda = r->backend == KB_BACKEND_CUDA, .copies = e->measure.include_copies,
             .dev = dev, .r = r};
    found x = {{0}, {0}};
    if (post_check(&j, &x, f) != 0)
        return -1;
    if (got->captured_nothing)
        flag(&x, "run() enqueued nothing on the stream kbench times: a CUDA graph of %u runs "
                 "captured no work",
             r->mode.batch);
    if (j.cuda) {
        if (cuda_audit(&j, &x, f) != 0)
            return -1;
        l2_checks(&j, &x);
    } else if (cpu_audit(&j, got->cpu_per_run_s, &x, f) != 0) {
        return -1;
    }
    physical_checks(&j, e, &x);
    settle_row(r, mode, &x);
    return 0;
}
