/* worker.c -- see worker.h. */
#define _GNU_SOURCE
#include "worker.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/file.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "device.h"
#include "gpu.h"
#include "hello.h"
#include "host.h"
#include "ini.h"
#include "loader.h"
#include "point.h"
#include "prefetch.h"
#include "record_json.h"
#include "request.h"
#include "shard.h"
#include "strays.h"
#include "util.h"

static int chan = -1; /* the descriptor the supervisor reads */
static struct stat chan_was; /* what it was when the worker began */

/* Takes the channel at descriptor fd: close-on-exec, so that no program a
   plugin runs holds it (the supervisor would not see the worker end), and
   remembered, so that a plugin that closes it is told from a supervisor
   that went away (channel_intact).  Returns 0, or -1 when fd is no open
   descriptor. */
static int channel_take(int fd)
{
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || fstat(fd, &chan_was) != 0)
        return -1;
    chan = fd;
    return 0;
}

/* Whether the channel is still the pipe the worker began with: not closed,
   nor closed and its number taken by a file a plugin opened. */
static int channel_intact(void)
{
    struct stat now;
    return fstat(chan, &now) == 0 && now.st_dev == chan_was.st_dev &&
           now.st_ino == chan_was.st_ino;
}

/* A message cannot be sent: when the channel is no longer the worker's
   own, a plugin closed it, and the exit status says so (worker.h); else
   the supervisor is gone. */
static void channel_lost(void)
{
    exit(channel_intact() ? KBC_EXIT_SYSTEM : KBC_WORKER_EXIT_CHANNEL_CLOSED);
}

/* Writes one message as one line with one write() where it can, so that
   the supervisor never sees half of it next to something else.  A channel
   that is gone (the supervisor died) ends the worker. */
static void send_json(json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(msg);
    if (!text)
        exit(KBC_EXIT_SYSTEM);
    size_t n = strlen(text);
    text[n] = '\n';
    const char *p = text;
    size_t left = n + 1;
    if (!channel_intact())
        channel_lost();
    while (left > 0) {
        ssize_t w = write(chan, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            channel_lost();
        p += w;
        left -= (size_t)w;
    }
    free(text);
}

/* Tells the supervisor the worker cannot go on, with the exit code the
   run should end with, and returns it. */
static int fatal_code(int code, const char *fmt, ...) KB_PRINTF(2, 3);

static int fatal_code(int code, const char *fmt, ...)
{
    char buf[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_t *m = json_object();
    json_object_set_new(m, "fatal", json_string(buf));
    json_object_set_new(m, "code", json_integer(code));
    send_json(m);
    return code;
}

#define fatal(...) fatal_code(KBC_EXIT_SYSTEM, __VA_ARGS__)

/* One kbench worker per GPU on a host at a time: two runs on one GPU (two
   MPI ranks left on the default device, two users) would time each
   other's kernels.  The worker holds an exclusive flock() on
   $KBENCH_LOCK_DIR (default /tmp)/kbench-gpu-<UUID>.lock for its life; the
   kernel drops it when the process ends, however it ends.  Returns 0, or
   -1 with why set when another process holds it.  A lock file that cannot
   be opened (another user's, a read-only folder) is not a refusal. */
static int lock_gpu(const char *uuid, char *why, size_t n)
{
    const char *dir = getenv("KBENCH_LOCK_DIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char path[1024];
    snprintf(path, sizeof path, "%s/kbench-gpu-%s.lock", dir, uuid);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return 0;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t r = pread(fd, pid, sizeof pid - 1, 0);
        pid[r > 0 ? r : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        snprintf(why, n,
                 "GPU %s is in use by another kbench run (its worker, pid %s, holds %.300s): two "
                 "runs on one GPU time each other's kernels; give each run its own GPU "
                 "(--gpus, or one GPU a rank through CUDA_VISIBLE_DEVICES), or add "
                 "--allow-shared",
                 uuid, pid[0] ? pid : "unknown", path);
        close(fd);
        return -1;
    }
    if (ftruncate(fd, 0) == 0)
        dprintf(fd, "%d\n", (int)getpid());
    return 0; /* fd stays open: the lock lasts as long as the worker */
}

static void on_variant(void *arg, const char *experiment, const char *variant)
{
    (void)arg;
    (void)experiment;
    json_t *m = json_object();
    json_object_set_new(m, "variant", json_string(variant));
    send_json(m);
}

/* The records of a lost context: the variant whose run spoilt it (the last
   CUDA row in error before the first row skipped for the lost context) is
   crashed, naming the error; the rows skipped because of it are left for
   the supervisor to run again in a fresh worker (it sees them by their
   reason). */
static void blame_lost(kbc_record *recs, size_t n, const char *lost)
{
    long cause = -1;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(recs[i].reason, KBC_LOST_REASON, strlen(KBC_LOST_REASON)) == 0)
            break;
        if (recs[i].backend == KB_BACKEND_CUDA && recs[i].outcome == KBC_ERROR)
            cause = (long)i;
    }
    if (cause < 0)
        return;
    kbc_record *r = &recs[cause];
    r->outcome = KBC_CRASHED;
    char was[sizeof r->reason];
    snprintf(was, sizeof was, "%s", r->reason);
    snprintf(r->reason, sizeof r->reason, "the CUDA context was lost (%.300s): %.360s", lost, was);
}

static void on_log(void *arg, const char *line)
{
    (void)arg;
    json_t *m = json_object();
    json_object_set_new(m, "log", json_string(line));
    send_json(m);
}

/* The cuBLAS version of the library a plugin brought into this process
   (dlopen with RTLD_NOLOAD finds it only when it is loaded already), or 0:
   library baselines move between releases, so a run records it. */
static int cublas_version(void)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *dl = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!dl)
            continue;
        /* cublasGetProperty(libraryPropertyType, int *): MAJOR_VERSION 0,
           MINOR_VERSION 1, PATCH_LEVEL 2, as cuBLAS documents it. */
        int (*prop)(int, int *) = (int (*)(int, int *))dlsym(dl, "cublasGetProperty");
        int major = 0, minor = 0, patch = 0;
        int ok = prop && prop(0, &major) == 0 && prop(1, &minor) == 0 && prop(2, &patch) == 0;
        dlclose(dl);
        if (ok)
            return major * 10000 + minor * 100 + patch;
    }
    return 0;
}

/* Ends the processes the point's plugin left running (strays.h) and
   gives their count to each of the point's rows. */
static void rows_strays(kbc_record *recs, size_t n)
{
    int left = kbc_strays_end_children();
    for (size_t k = 0; k < n; k++)
        recs[k].processes_left = left;
}

/* The variants an order asks for, as an experiment of their own. */
static void narrow(const kbc_plan *plan, const kbc_order *o, kbc_experiment *e)
{
    const kbc_experiment *full = &plan->exps[o->exp];
    *e = *full;
    if (o->mask) {
        e->n_variants = 0;
        for (uint32_t k = 0; k < full->n_variants; k++)
            if (o->mask & KB_VARIANT_BIT(full->variants[k]))
                e->variants[e->n_variants++] = full->variants[k];
    }
}

/* ---- the orders on standard input ----
 * Read without stdio, so that the prefetch can look for a hint of the
 * next point between the variants of this one without blocking
 * (prefetch.h). */
typedef struct inbox {
    char *p;
    size_t n, cap;
    int eof;
} inbox;

/* Reads what standard input holds, waiting for it when block is set.
   Returns -1 at its end or on an error. */
static int inbox_fill(inbox *b, int block)
{
    for (;;) {
        struct pollfd pf = {.fd = STDIN_FILENO, .events = POLLIN};
        int r = poll(&pf, 1, block ? -1 : 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -1 : 0;
        if (b->n + 65536 + 1 > b->cap) {
            b->cap = (b->n + 65536 + 1) * 2;
            b->p = kbc_xrealloc(b->p, b->cap);
        }
        ssize_t got = read(STDIN_FILENO, b->p + b->n, 65536);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            b->eof = 1;
            return -1;
        }
        b->n += (size_t)got;
        return 0;
    }
}

/* The first whole line in b (NUL-terminated in place, without its
   newline), or NULL; inbox_drop takes it out. */
static char *inbox_peek(inbox *b, size_t *len)
{
    char *nl = b->n ? memchr(b->p, '\n', b->n) : NULL;
    if (!nl)
        return NULL;
    *nl = '\0';
    *len = (size_t)(nl - b->p) + 1;
    return b->p;
}

static void inbox_drop(inbox *b, size_t len)
{
    memmove(b->p, b->p + len, b->n - len);
    b->n -= len;
}

/* What the worker knows of its next point: the last hint (an "ahead"
   order) the supervisor sent, and whether the prefetch has been told. */
typedef struct worker_state {
    const kbc_plan *plan;
    inbox in;
    kbc_order hint;
    int have_hint, hint_told;
    int threads;
} worker_state;

/* Takes every hint at the head of the input; stops at the first order of
   another kind, which the main loop reads after the point. */
static void take_hints(worker_state *ws)
{
    char *line;
    size_t len;
    while ((line = inbox_peek(&ws->in, &len))) {
        kbc_order o;
        char why[300];
        if (kbc_order_read(line, &o, why, sizeof why) != 0 || !o.ahead) {
            line[len - 1] = '\n'; /* put back whole */
            return;
        }
        inbox_drop(&ws->in, len);
        if (o.exp < ws->plan->n && o.point < ws->plan->exps[o.exp].n_points) {
            ws->hint = o;
            ws->have_hint = 1;
            ws->hint_told = 0;
        }
    }
}

/* kbc_ahead_fn: the hinted point, once. */
static int next_point(void *ctx, kbc_ahead *a)
{
    worker_state *ws = ctx;
    if (!ws->in.eof)
        inbox_fill(&ws->in, 0);
    take_hints(ws);
    if (!ws->have_hint || ws->hint_told)
        return 0;
    ws->hint_told = 1;
    memset(a, 0, sizeof *a);
    narrow(ws->plan, &ws->hint, &a->e);
    a->point = ws->hint.point;
    a->plan = ws->hint.plan;
    a->cpu_threads = a->e.measure.cpu_threads > 0 ? a->e.measure.cpu_threads : ws->threads;
    a->share = ws->hint.share;
    return 1;
}

/* The point's times for the timeline: kbc_now() instants and seconds. */
static json_t *times_json(const kbc_point_times *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "start", json_real(t->start));
    json_object_set_new(o, "end", json_real(t->end));
    json_object_set_new(o, "setup_s", json_real(t->setup_s));
    json_object_set_new(o, "ahead", json_boolean(t->ahead));
    json_object_set_new(o, "ahead_s", json_real(t->ahead_s));
    json_object_set_new(o, "wait_s", json_real(t->wait_s));
    json_object_set_new(o, "joins_s", json_real(t->joins_s));
    json_object_set_new(o, "teardown_s", json_real(t->teardown_s));
    json_object_set_new(o, "prefetches", json_integer(t->prefetches));
    return o;
}

static int run_point(const kbc_plan *plan, const kbc_order *o, kbc_device *dev,
                     int threads_default, kbc_prefetch *pf)
{
    const uint32_t x = o->exp;
    const uint64_t p = o->point;
    kbc_experiment e;
    narrow(plan, o, &e);
    int threads = e.measure.cpu_threads > 0 ? e.measure.cpu_threads : threads_default;
    kbc_hostctx hc;
    memset(&hc, 0, sizeof hc);
    kb_host host;
    kbc_host_init(&host, &hc, e.plugin->desc->name, e.measure.seed, threads);
    hc.on_variant = on_variant;
    hc.on_log = on_log;
    hc.total = plan->n_points;
    kbc_record *recs = kbc_xcalloc(e.n_variants ? e.n_variants : 1, sizeof *recs);
    /* Device memory the point leaves behind, as kbench check measures a
       plugin's set-up and teardown: free memory before and after. */
    int any_cuda = 0;
    for (uint32_t k = 0; k < e.n_variants; k++)
        any_cuda |= e.plugin->desc->variants[e.variants[k]].backend == KB_BACKEND_CUDA;
    uint64_t free0 = any_cuda && dev->usable && !dev->lost ? kbc_gpu_free_memory() : 0;
    kbc_point_aside aside = {.prefetch = pf};
    size_t n = kbc_point_run_aside(&e, p, &o->plan, dev, &host, NULL, recs, &aside);
    if (free0 && !dev->lost) {
        uint64_t free1 = kbc_gpu_free_memory();
        int64_t left = free1 && free1 < free0 ? (int64_t)(free0 - free1) : 0;
        for (size_t k = 0; free1 && k < n; k++)
            recs[k].device_left_bytes = left;
    }
    kbc_host_progress_clear(&hc);
    rows_strays(recs, n);
    const char *lost = dev->lost ? dev->lost_after : NULL;
    if (lost)
        blame_lost(recs, n, lost);
    json_t *m = json_object();
    json_t *done = json_object();
    json_object_set_new(done, "exp", json_integer(x));
    json_object_set_new(done, "point", json_integer((json_int_t)p));
    json_object_set_new(done, "lost", lost ? json_string(lost) : json_null());
    json_object_set_new(m, "done", done);
    json_t *rows = json_array();
    for (size_t k = 0; k < n; k++)
        json_array_append_new(rows, kbc_record_to_json(&recs[k]));
    json_object_set_new(m, "rows", rows);
    json_object_set_new(m, "times", times_json(&aside.times));
    send_json(m);
    kbc_records_free(recs, n);
    return lost ? 1 : 0;
}

/* The supervisor's orders, one line each, until it says quit or closes
   the input: a point to run now, or one hinted to come next (its host
   half may be made ahead).  Returns the worker's exit code. */
static int serve_orders(worker_state *ws, kbc_plan *plan, kbc_device *dev, int threads,
                        kbc_prefetch *pf)
{
    int code = KBC_EXIT_OK;
    kbc_order *o = kbc_xmalloc(sizeof *o);
    for (;;) {
        char *line;
        size_t len;
        while (!(line = inbox_peek(&ws->in, &len)) && inbox_fill(&ws->in, 1) == 0)
            ;
        if (!line)
            break; /* the end of input: quit */
        char why[300] = "";
        int bad = kbc_order_read(line, o, why, sizeof why) != 0;
        if (!bad && o->quit)
            break;
        if (bad || o->exp >= plan->n || o->point >= plan->exps[o->exp].n_points) {
            code = fatal("the worker was sent '%.80s', which is not a point of its plan%s%s",
                         line, why[0] ? ": " : "", why);
            break;
        }
        inbox_drop(&ws->in, len);
        if (o->ahead) {
            ws->hint = *o;
            ws->have_hint = 1;
            ws->hint_told = 0;
            continue;
        }
        /* A point to run: whatever was hinted is this one or no more. */
        ws->have_hint = 0;
        if (run_point(plan, o, dev, threads, pf) != 0)
            break; /* the context is lost: a fresh worker takes over */
    }
    free(o);
    return code;
}

int kbc_worker_main(int argc, char **argv)
{
    const double t_main = kbc_now();
    const char *fd_text = getenv(KBC_WORKER_FD_ENV);
    char *end = NULL;
    long fd = fd_text ? strtol(fd_text, &end, 10) : -1;
    if (!fd_text || *end || fd < 3 || fd > 1 << 20) {
        fprintf(stderr, "kbench: %s is an internal command that `kbench run` starts; it needs "
                        "%s.\n",
                KBC_WORKER_COMMAND, KBC_WORKER_FD_ENV);
        return KBC_EXIT_USAGE;
    }
    if (channel_take((int)fd) != 0) {
        fprintf(stderr, "kbench: %s names descriptor %ld, which is not open.\n",
                KBC_WORKER_FD_ENV, fd);
        return KBC_EXIT_USAGE;
    }
    /* Every process a plugin starts stays a descendant of the worker, so
       that it is found and ended after its point. */
    kbc_strays_adopt();
    /* A plugin's printf must not reach the supervisor as a message. */
    if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        return fatal("cannot point standard output at standard error: %s", strerror(errno));

    kbc_request req;
    kbc_registry reg;
    kbc_registry_init(&reg);
    kbc_registry_add_defaults(&reg);
    kbc_diag d = {{0}};
    if (kbc_request_read(argc, argv, &req, &d) != 0)
        return fatal("%s", d.msg);
    for (int i = 0; i < req.n_plugin_paths; i++) {
        d.msg[0] = '\0';
        if (kbc_registry_add_path(&reg, req.plugin_paths[i], &d) < 0 && d.msg[0])
            return fatal("--plugin-path: %s", d.msg);
    }
    kbc_host_set_quiet(req.quiet);

    kbc_ini ini = {0};
    kbc_plan plan = {0};
    if (kbc_ini_load(req.ini_path, &ini, &d) != 0 ||
        kbc_ini_narrow(&ini, req.experiment, req.sets, (size_t)req.n_sets, req.variants, &d) !=
            0)
        return fatal("%s", d.msg);
    kbc_hello h;
    memset(&h, 0, sizeof h);
    h.pid = (int)getpid();
    h.t_main = t_main;
    kbc_gpu_probe(&h.machine);
    h.t_probe = kbc_now();
    /* The GPU: the one the supervisor gave (its UUID), or the device the
       runtime chose. */
    const char *given = getenv("CUDA_VISIBLE_DEVICES");
    if (given && strncmp(given, "GPU-", 4) == 0 && !strchr(given, ','))
        snprintf(h.gpu_uuid, sizeof h.gpu_uuid, "%s", given);
    else if (h.machine.has_gpu) {
        char why[300];
        kbc_gpu_uuid(h.machine.device, h.gpu_uuid, sizeof h.gpu_uuid, why, sizeof why);
    }
    if (h.gpu_uuid[0] && !req.allow_shared && lock_gpu(h.gpu_uuid, d.msg, sizeof d.msg) != 0)
        return fatal_code(KBC_EXIT_USAGE, "%s", d.msg);
    /* The points come planned by the supervisor (request.h): this plan is
       their shape only, and plan() is not called here. */
    if (kbc_plan_build_unplanned(&ini, &reg, &plan, &d) != 0)
        return fatal("%s", d.msg);
    kbc_plan_hash(&plan, h.plan_hash);
    h.t_plan = kbc_now();

    kbc_device dev;
    /* Under compute-sanitizer (--sanitize) the ceilings would be the
       sanitizer's and cost minutes: none are measured. */
    if (kbc_plan_wants_gpu(&plan) || !h.machine.has_gpu)
        kbc_device_open(&dev, &h.machine, !req.sanitized);
    else
        kbc_device_open(&dev, NULL, 0);
    dev.sanitized = req.sanitized != NULL;
    h.t_device = kbc_now();
    kbc_hello_from_device(&h, &dev);
    h.cublas_version = cublas_version();
    if (h.machine.has_gpu) {
        char why[300];
        kbc_gpu_uuid(h.machine.device, h.gpu_uuid, sizeof h.gpu_uuid, why, sizeof why);
        kbc_gpu_pci_bus_id(h.machine.device, h.pci_bus_id, sizeof h.pci_bus_id, why,
                           sizeof why);
    } else {
        h.gpu_uuid[0] = '\0'; /* a UUID the runtime could not open is no row's GPU */
    }
    send_json(kbc_hello_to_json(&h));

    int threads = h.machine.cpu_threads > 0 ? h.machine.cpu_threads : 1;
    worker_state *ws = kbc_xcalloc(1, sizeof *ws);
    ws->plan = &plan;
    ws->threads = threads;
    kbc_prefetch_opts po = {.next = next_point, .ctx = ws};
    kbc_prefetch *pf = kbc_prefetch_new(&po);
    int code = serve_orders(ws, &plan, &dev, threads, pf);
    kbc_prefetch_free(pf);
    free(ws->in.p);
    free(ws);
    kbc_device_close(&dev);
    kbc_plan_free(&plan);
    kbc_ini_free(&ini);
    kbc_registry_free(&reg);
    kbc_request_release(&req);
    return code;
}
