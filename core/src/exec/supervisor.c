/* supervisor.c -- see supervisor.h. */
#define _GNU_SOURCE
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"
#include "hello.h"
#include "journal.h"
#include "nvml.h"
#include "point.h"
#include "record_json.h"
#include "runner.h"
#include "sha256.h"
#include "text.h"
#include "shard.h"
#include "util.h"
#include "worker.h"

/* A worker's last lines on stderr kept for a crashed row's reason. */
#define LOG_KEEP 4
#define LOG_LINE 240
/* A worker that has not said hello after this long is stuck. */
#define HELLO_TIMEOUT_S 600.0
/* One message may not be longer than this (a point's rows with every
   sample stay far below it). */
#define MAX_MESSAGE (256u << 20)

enum { JOB_PENDING, JOB_RUNNING, JOB_DONE };

/* One point to run: its state and the rows gathered so far (a point whose
   worker crashed runs again in parts). */
typedef struct slot {
    kbc_job job;
    int state;
    uint64_t remaining; /* plugin variant bits still to run here          */
    kbc_record *recs;   /* one per position in the experiment's variants   */
    unsigned char *have;
} slot;

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

typedef struct worker {
    pid_t pid;          /* 0: no process                                   */
    int to, from, err;  /* its stdin, its channel, its stderr; -1 closed   */
    buf in, errb;
    char log[LOG_KEEP][LOG_LINE];
    unsigned n_log;     /* stderr lines kept since the job started         */
    char vlog[LOG_KEEP][LOG_LINE];
    unsigned n_vlog;    /* the plugin's log lines (channel) since the
                           running variant started, in order with it     */
    int has_hello;
    kbc_hello hello;
    long job;           /* the slot it runs, or -1                         */
    char variant[KBC_REC_NAME];
    double started, deadline;
    int gpu;            /* index into the picks, or -1                     */
    int retiring;       /* it will exit: no more points for it             */
    int killed;         /* kbench stopped it: its channel is not read on   */
    int points_run;
} worker;

typedef struct super {
    const kbc_plan *plan;
    const kbc_super_opts *o;
    kbc_sink *sinks;
    size_t n_sinks;
    int *sink_ok;
    slot *slots;        /* this run's jobs, in plan order                 */
    size_t n_slots, n_done, next_emit;
    size_t *order;      /* the order points are handed out                */
    worker *w;
    size_t n_w;
    kbc_journal *journal; /* NULL: none, or it failed */
    kbc_point_memory *mems;
    kbc_build_info *builds;
    size_t n_builds;
    char plan_hash[65];
    int begun, resumed, any_failed, code;
    int stop;           /* the journal failed: no more points start       */
    int ended;          /* the points are over: the sinks' end() runs     */
    char fatal[1200];   /* a sentence that stops the run                  */
    int fatal_code;     /* its exit code (0: KBC_EXIT_SYSTEM)             */
    kbc_exp_info *xs;
    kbc_run_info info;
    kbc_hello first;    /* the first hello: the header's machine facts    */
    int have_first;
    int progress_shown;
    double t0;          /* when the first point was handed out            */
    double cost_all, cost_done; /* expected seconds of the run's points
                           (shard.c's model), and of those done here     */
    kbc_job *jobs;      /* the plan's jobs, for picks added as it goes    */
    size_t n_jobs;
} super;

static volatile sig_atomic_t signals_seen;

static void on_signal(int sig)
{
    (void)sig;
    signals_seen++;
}

/* ---- small helpers ---- */

static void buf_add(buf *b, const char *p, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = kbc_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

/* Takes the first whole line out of b into *line (malloc'd, without its
   newline).  Returns 1 when there was one. */
static int buf_line(buf *b, char **line)
{
    char *nl = b->n ? memchr(b->p, '\n', b->n) : NULL;
    if (!nl)
        return 0;
    size_t len = (size_t)(nl - b->p);
    *line = kbc_xstrndup(b->p, len);
    memmove(b->p, nl + 1, b->n - len - 1);
    b->n -= len + 1;
    b->p[b->n] = '\0';
    return 1;
}

static void progress_clear(super *s)
{
    if (s->progress_shown) {
        fputs("\r\033[K", stderr);
        s->progress_shown = 0;
    }
}

/* "1:05" or "1:02:03". */
static const char *clock_text(double secs, char *out, size_t n)
{
    long t = secs > 0 ? (long)(secs + 0.5) : 0;
    if (t >= 3600)
        snprintf(out, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(out, n, "%ld:%02ld", t / 60, t % 60);
    return out;
}

static void progress(super *s, const worker *w)
{
    if (s->o->quiet || !isatty(STDERR_FILENO))
        return;
    const kbc_experiment *e = w->job >= 0 ? &s->plan->exps[s->slots[w->job].job.exp] : NULL;
    /* The ETA scales the model's cost of what is left by how the run has
       gone against the model so far (none before a point is done). */
    char el[32], eta[64] = "";
    double elapsed = s->t0 > 0 ? kbc_now() - s->t0 : 0;
    if (s->cost_done > 0 && s->cost_all > s->cost_done) {
        char t[32];
        snprintf(eta, sizeof eta, ", about %s left",
                 clock_text(elapsed / s->cost_done * (s->cost_all - s->cost_done), t,
                            sizeof t));
    }
    fprintf(stderr, "\r\033[K[%zu/%zu points, %s%s] %s: %s ...", s->n_done + 1, s->n_slots,
            clock_text(elapsed, el, sizeof el), eta, e ? e->name : "", w->variant);
    fflush(stderr);
    s->progress_shown = 1;
}

static const kbc_experiment *exp_of(const super *s, const slot *sl)
{
    return &s->plan->exps[sl->job.exp];
}

/* The position of plugin variant v in e's selection, or -1. */
static int position(const kbc_experiment *e, uint32_t v)
{
    for (uint32_t k = 0; k < e->n_variants; k++)
        if (e->variants[k] == v)
            return (int)k;
    return -1;
}

static const char *gpu_model(const super *s)
{
    return s->first.machine.has_gpu ? s->first.machine.name : "none";
}

static const kbc_build_info *build_of(const super *s, const kbc_experiment *e)
{
    for (size_t i = 0; i < s->n_builds; i++)
        if (strcmp(s->builds[i].name, e->plugin->desc->name) == 0)
            return &s->builds[i];
    return NULL;
}

/* ---- the rows of a slot ---- */

static void slot_init(super *s, slot *sl)
{
    const kbc_experiment *e = exp_of(s, sl);
    sl->recs = kbc_xcalloc(e->n_variants ? e->n_variants : 1, sizeof *sl->recs);
    sl->have = kbc_xcalloc(e->n_variants ? e->n_variants : 1, 1);
    for (uint32_t k = 0; k < e->n_variants; k++) {
        uint64_t pts;
        if (kbc_point_first_of(e, sl->job.point, e->variants[k], &pts, NULL, 0))
            sl->remaining |= KB_VARIANT_BIT(e->variants[k]);
    }
}

/* Stamps where a row ran, and keeps it at its variant's place. */
static void slot_store(super *s, slot *sl, const kbc_record *r, const worker *w)
{
    const kbc_experiment *e = exp_of(s, sl);
    int k = position(e, r->variant_index);
    if (k < 0)
        return;
    if (sl->have[k])
        kbc_record_free(&sl->recs[k]);
    sl->recs[k] = *r;
    sl->have[k] = 1;
    sl->remaining &= ~KB_VARIANT_BIT(r->variant_index);
    if (w) {
        kbc_record *x = &sl->recs[k];
        snprintf(x->host, sizeof x->host, "%s", w->hello.machine.host);
        /* The worker's own view of its device, else the GPU it was given. */
        const char *uuid = w->hello.gpu_uuid[0] ? w->hello.gpu_uuid
                           : w->gpu >= 0        ? s->o->gpus[w->gpu].uuid
                                                : "";
        const char *pci = w->hello.pci_bus_id[0] ? w->hello.pci_bus_id
                          : w->gpu >= 0          ? s->o->gpus[w->gpu].pci_bus_id
                                                 : "";
        snprintf(x->gpu_uuid, sizeof x->gpu_uuid, "%s", uuid);
        snprintf(x->pci_bus_id, sizeof x->pci_bus_id, "%s", pci);
        x->worker_pid = (int)w->pid;
    }
}

/* A row for variant v at the slot's point that never came back from a
   worker: crashed or timeout, with why. */
static void slot_lose(super *s, slot *sl, uint32_t v, int outcome, const char *why,
                      const worker *w)
{
    const kbc_experiment *e = exp_of(s, sl);
    const kb_plugin *d = e->plugin->desc;
    kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
    kbc_experiment_point(e, sl->job.point, values);
    kbc_record r;
    kbc_record_identify(&r, e, sl->job.point, values, v);
    kbc_point_first_of(e, sl->job.point, v, &r.points, r.ignores, sizeof r.ignores);
    r.outcome = outcome;
    snprintf(r.reason, sizeof r.reason, "%s", why);
    free(values);
    slot_store(s, sl, &r, w);
}

/* The slot's rows in the experiment's order, as one JSON array. */
static json_t *slot_rows_json(const super *s, const slot *sl)
{
    json_t *a = json_array();
    const kbc_experiment *e = exp_of(s, sl);
    for (uint32_t k = 0; k < e->n_variants; k++)
        if (sl->have[k])
            json_array_append_new(a, kbc_record_to_json(&sl->recs[k]));
    return a;
}

/* A point is finished: journal it before it is reported. */
static void slot_finish(super *s, slot *sl)
{
    sl->state = JOB_DONE;
    s->n_done++;
    s->cost_done += sl->job.cost;
    if (!s->journal)
        return;
    const kbc_experiment *e = exp_of(s, sl);
    const kbc_build_info *b = build_of(s, e);
    kbc_diag d = {{0}};
    if (kbc_journal_append(s->journal, e->name, sl->job.exp, sl->job.point, b ? b->sha256 : "",
                           gpu_model(s), slot_rows_json(s, sl), &d) != 0) {
        /* The journal is what --resume finishes from and what the results
           files are rewritten from: a point that finishes without it
           cannot be kept, so none starts.  The append left the journal at
           its last whole entry; this point is still reported, and
           --resume runs it again. */
        progress_clear(s);
        fprintf(stderr,
                "kbench: %s; no more points start, since none could be kept (the journal "
                "holds %zu of %zu points: run again with --resume and the same -o once "
                "there is room, to finish).\n",
                d.msg, s->n_done - 1, s->n_slots);
        s->journal = NULL;
        s->stop = 1;
        s->code = KBC_EXIT_SYSTEM;
    }
}

/* Sink k could not write: it is dropped, and its sentence is said once
   with what it means for the run.  A sink without a sentence (the table
   on stdout) is the command's to report as it exits. */
static void sink_failed(super *s, size_t k)
{
    s->sink_ok[k] = 0;
    const char *why = s->sinks[k].error ? s->sinks[k].error(s->sinks[k].ctx) : NULL;
    if (!why)
        return;
    progress_clear(s);
    if (!s->o->journal || s->stop)
        fprintf(stderr, "kbench: %s.\n", why); /* the journal's sentence said what to do */
    else if (s->ended)
        fprintf(stderr,
                "kbench: %s; every point the run finished is in %s: once there is room, "
                "run again with --resume and the same -o to write the results files whole.\n",
                why, s->o->journal->path);
    else
        fprintf(stderr,
                "kbench: %s; the run goes on, and %s keeps every point: once there is room, "
                "run again with --resume and the same -o to write the results files whole.\n",
                why, s->o->journal->path);
}

/* Reports every finished point that is next in plan order (all of them,
   gaps skipped, when flush is set: the end of an interrupted run). */
static void emit(super *s, int flush)
{
    while (s->begun && s->next_emit < s->n_slots) {
        slot *sl = &s->slots[s->next_emit];
        if (sl->state != JOB_DONE) {
            if (!flush)
                return;
            s->next_emit++;
            continue;
        }
        s->next_emit++;
        const kbc_experiment *e = exp_of(s, sl);
        kbc_record *recs = kbc_xcalloc(e->n_variants ? e->n_variants : 1, sizeof *recs);
        size_t n = 0;
        for (uint32_t k = 0; k < e->n_variants; k++)
            if (sl->have[k])
                recs[n++] = sl->recs[k];
        kbc_point_speedups(e, sl->job.point, recs, n, &s->mems[sl->job.exp]);
        for (size_t k = 0; k < n; k++)
            if (kbc_outcome_failed((int)recs[k].outcome))
                s->any_failed = 1;
        progress_clear(s);
        for (size_t k = 0; k < s->n_sinks; k++)
            if (s->sink_ok[k] && s->sinks[k].point &&
                s->sinks[k].point(s->sinks[k].ctx, recs, n) != 0)
                sink_failed(s, k);
        for (size_t k = 0; k < n; k++)
            kbc_record_free(&recs[k]);
        free(recs);
        memset(sl->have, 0, e->n_variants ? e->n_variants : 1);
    }
}

/* ---- workers ---- */

/* The worker's arguments after its INI file that make its plan this
   run's: the plugin paths, --experiment, every --set, --variants.  argv
   has room for them; returns the next free index. */
static size_t narrow_args(const kbc_super_opts *o, char **argv, size_t a)
{
    for (int i = 0; i < o->n_plugin_paths; i++) {
        argv[a++] = (char *)"--plugin-path";
        argv[a++] = (char *)o->plugin_paths[i];
    }
    if (o->experiment) {
        argv[a++] = (char *)"--experiment";
        argv[a++] = (char *)o->experiment;
    }
    for (int i = 0; i < o->n_sets; i++) {
        argv[a++] = (char *)"--set";
        argv[a++] = (char *)o->sets[i];
    }
    if (o->variants) {
        argv[a++] = (char *)"--variants";
        argv[a++] = (char *)o->variants;
    }
    return a;
}

/* dup()s fd to a descriptor of at least 10, without close-on-exec. */
static int high_dup(int fd)
{
    return fcntl(fd, F_DUPFD, 10);
}

/* In a forked child before the exec of a worker: its own process group (a
   Ctrl-C at the terminal reaches the supervisor, which decides what the
   workers do), the pipes on stdin, stderr (and stdout when
   stdout_to_err) and descriptor 3, the channel's variable, and the GPU it
   may see.  Exits 127 when the descriptors cannot be set. */
static void child_setup(const kbc_super_opts *o, const int to[2], const int from[2],
                        const int err[2], int gpu, int stdout_to_err)
{
    setpgid(0, 0);
    int i0 = high_dup(to[0]), i2 = high_dup(err[1]), i3 = high_dup(from[1]);
    if (i0 < 0 || i2 < 0 || i3 < 0 || dup2(i0, 0) < 0 || dup2(i2, 2) < 0 ||
        (stdout_to_err && dup2(i2, 1) < 0) || dup2(i3, 3) < 0)
        _exit(127);
    setenv(KBC_WORKER_FD_ENV, "3", 1);
    if (gpu >= 0) {
        setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
        setenv("CUDA_VISIBLE_DEVICES", o->gpus[gpu].uuid, 1);
        unsetenv("KBENCH_DEVICE");
    }
}

static void worker_spawn(super *s, worker *w, int gpu)
{
    int to[2], from[2], err[2];
    memset(w, 0, sizeof *w);
    w->to = w->from = w->err = -1;
    w->job = -1;
    w->gpu = gpu;
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0 ||
        pipe2(err, O_CLOEXEC) != 0) {
        snprintf(s->fatal, sizeof s->fatal, "cannot make a worker's pipes: %s", strerror(errno));
        return;
    }
    const kbc_super_opts *o = s->o;
    char **argv = kbc_xcalloc((size_t)(o->n_plugin_paths + o->n_sets) * 2 + 12, sizeof *argv);
    size_t a = 0;
    argv[a++] = (char *)o->self;
    argv[a++] = (char *)KBC_WORKER_COMMAND;
    argv[a++] = (char *)o->ini_path;
    a = narrow_args(o, argv, a);
    if (o->quiet)
        argv[a++] = (char *)"-q";
    if (o->allow_shared)
        argv[a++] = (char *)"--allow-shared";
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(s->fatal, sizeof s->fatal, "cannot start a worker: %s", strerror(errno));
        free(argv);
        return;
    }
    if (pid == 0) {
        child_setup(o, to, from, err, gpu, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        execv(o->self, argv);
        char msg[600];
        int n = snprintf(msg, sizeof msg,
                         "{\"fatal\": \"cannot start the worker: exec of %s failed (%s)\"}\n",
                         o->self, strerror(errno));
        if (n > 0 && write(3, msg, (size_t)n) < 0)
            _exit(127);
        _exit(127);
    }
    free(argv);
    close(to[0]);
    close(from[1]);
    close(err[1]);
    w->pid = pid;
    w->to = to[1];
    w->from = from[0];
    w->err = err[0];
    fcntl(w->from, F_SETFL, O_NONBLOCK);
    fcntl(w->err, F_SETFL, O_NONBLOCK);
    w->started = kbc_now();
    w->deadline = w->started + HELLO_TIMEOUT_S;
}

/* Stops a worker whose point cannot be trusted; the reap follows when
   its channel ends. */
static void worker_kill(worker *w)
{
    kill(w->pid, SIGKILL);
    w->killed = 1;
    w->retiring = 1;
}

static void keep_log(worker *w, const char *line)
{
    snprintf(w->log[w->n_log % LOG_KEEP], LOG_LINE, "%s", line);
    w->n_log++;
}

/* line as it may reach a terminal: what a worker writes on stderr comes
   from plugins too (a log line, or their own fprintf), so every control
   character and escape sequence in it is spelled out (kbc_text_visible).
   A new string to free(). */
static char *visible_line(const char *line)
{
    size_t n = 6 * strlen(line) + 1; /* "\u0080" for two bytes at most */
    char *v = kbc_xmalloc(n);
    kbc_text_visible_to(line, v, n);
    return v;
}

/* Passes the worker's stderr on, line by line, and keeps the last lines. */
static void worker_stderr(super *s, worker *w, int final)
{
    char chunk[4096];
    ssize_t r;
    while ((r = read(w->err, chunk, sizeof chunk)) > 0)
        buf_add(&w->errb, chunk, (size_t)r);
    char *line;
    while (buf_line(&w->errb, &line)) {
        progress_clear(s);
        char *v = visible_line(line);
        if (s->n_w > 1)
            fprintf(stderr, "[worker %zu] %s\n", (size_t)(w - s->w), v);
        else
            fprintf(stderr, "%s\n", v);
        free(v);
        keep_log(w, line);
        free(line);
    }
    if (final && w->errb.n) {
        progress_clear(s);
        char *v = visible_line(w->errb.p);
        fprintf(stderr, "%s\n", v);
        free(v);
        keep_log(w, w->errb.p);
        w->errb.n = 0;
    }
}

/* "; its last log lines: 'a' | 'b'": the lines the plugin logged since
   its variant started (they come through the channel, in order with the
   variant), or else the last lines the worker wrote on stderr during the
   point (a plugin's own fprintf; those may run past the variant, since
   the two pipes are read apart); "" when there are none. */
static void last_log(const worker *w, char *out, size_t n)
{
    out[0] = '\0';
    const char(*lines)[LOG_LINE] = w->n_vlog ? w->vlog : w->log;
    unsigned count = w->n_vlog ? w->n_vlog : w->n_log;
    unsigned have = count < LOG_KEEP ? count : LOG_KEEP;
    if (!have)
        return;
    size_t used = (size_t)snprintf(out, n, "; its last log line%s: ", have > 1 ? "s" : "");
    for (unsigned i = count - have; i < count && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s'%s'", i > count - have ? " | " : "",
                                 lines[i % LOG_KEEP]);
}

static void worker_close(worker *w)
{
    if (w->to >= 0)
        close(w->to);
    if (w->from >= 0)
        close(w->from);
    if (w->err >= 0)
        close(w->err);
    w->to = w->from = w->err = -1;
    free(w->in.p);
    free(w->errb.p);
    memset(&w->in, 0, sizeof w->in);
    memset(&w->errb, 0, sizeof w->errb);
    w->pid = 0;
}

/* Reruns variant v of the slot's point once in a throw-away worker under
   compute-sanitizer memcheck, on the GPU of the worker that crashed, and
   keeps memcheck's first report (its lines joined by " / ") in out.
   Blocks; the time it takes is added to the other workers' watchdogs. */
static void sanitize_rerun(super *s, const slot *sl, uint32_t v, int gpu, char *out, size_t n)
{
    double t0 = kbc_now();
    int to[2], from[2], err[2];
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0 ||
        pipe2(err, O_CLOEXEC) != 0) {
        snprintf(out, n, "not rerun: cannot make pipes (%s)", strerror(errno));
        return;
    }
    const kbc_super_opts *o = s->o;
    char **argv = kbc_xcalloc((size_t)(o->n_plugin_paths + o->n_sets) * 2 + 18, sizeof *argv);
    size_t a = 0;
    argv[a++] = (char *)"compute-sanitizer";
    argv[a++] = (char *)"--tool";
    argv[a++] = (char *)"memcheck";
    argv[a++] = (char *)"--print-limit";
    argv[a++] = (char *)"1";
    argv[a++] = (char *)o->self;
    argv[a++] = (char *)KBC_WORKER_COMMAND;
    argv[a++] = (char *)o->ini_path;
    a = narrow_args(o, argv, a);
    argv[a++] = (char *)"-q";
    /* The crashed worker may still hold its GPU's lock: this rerun is
       meant to share it. */
    argv[a++] = (char *)"--allow-shared";
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* compute-sanitizer prints its reports on its standard output:
           that goes to the pipe read here, not to kbench's table. */
        child_setup(o, to, from, err, gpu, 1);
        execvp("compute-sanitizer", argv);
        dprintf(2, "compute-sanitizer could not be started (%s)\n", strerror(errno));
        _exit(127);
    }
    free(argv);
    close(to[0]);
    close(from[1]);
    close(err[1]);
    if (pid < 0) {
        snprintf(out, n, "not rerun: cannot fork (%s)", strerror(errno));
        close(to[1]);
        close(from[0]);
        close(err[0]);
        return;
    }
    char line[96];
    int len = snprintf(line, sizeof line, "point %u %llu %llx\nquit\n", sl->job.exp,
                       (unsigned long long)sl->job.point,
                       (unsigned long long)KB_VARIANT_BIT(v));
    if (write(to[1], line, (size_t)len) != len) {
        /* it died at once; what it printed says why */
    }
    close(to[1]);
    /* Read both pipes to their end (the channel only to keep the worker
       from blocking on it), under the point's watchdog, ten times over:
       memcheck slows kernels down. */
    double deadline = t0 + 10 * kbc_job_timeout(s->plan, &sl->job);
    buf eb = {0};
    int open_from = 1, open_err = 1;
    while ((open_from || open_err) && kbc_now() < deadline) {
        struct pollfd pf[2] = {{.fd = open_from ? from[0] : -1, .events = POLLIN},
                               {.fd = open_err ? err[0] : -1, .events = POLLIN}};
        if (poll(pf, 2, 250) < 0 && errno != EINTR)
            break;
        char chunk[4096];
        ssize_t r;
        if (open_from && (pf[0].revents & (POLLIN | POLLHUP)) &&
            (r = read(from[0], chunk, sizeof chunk)) <= 0)
            open_from = 0;
        if (open_err && (pf[1].revents & (POLLIN | POLLHUP))) {
            if ((r = read(err[0], chunk, sizeof chunk)) > 0)
                buf_add(&eb, chunk, (size_t)r);
            else
                open_err = 0;
        }
    }
    kill(pid, SIGKILL);
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(from[0]);
    close(err[0]);
    /* memcheck's report: the lines that begin "========= " from the first
       error line (after its banner) to the host backtrace or the blank
       line that ends the report. */
    out[0] = '\0';
    size_t used = 0;
    int in_report = 0;
    for (char *p = eb.p, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        int tagged = strncmp(p, "========= ", 10) == 0;
        const char *body = tagged ? p + 10 : p;
        while (*body == ' ')
            body++;
        if (tagged && !in_report && *body && !strstr(body, "SUMMARY") &&
            !strstr(body, "COMPUTE-SANITIZER"))
            in_report = 1;
        else if (in_report && (!tagged || !*body || strstr(body, "host backtrace")))
            break;
        if (in_report && used < n)
            used += (size_t)snprintf(out + used, n - used, "%s%s", used ? " / " : "", body);
        if (!nl)
            break;
    }
    if (!out[0]) {
        const char *last = eb.p ? eb.p : "";
        snprintf(out, n, "memcheck reported nothing for this variant%s%.300s",
                 *last ? "; it printed: " : "", last);
        for (char *c = out; *c; c++)
            if (*c == '\n')
                *c = ' ';
    }
    free(eb.p);
    double spent = kbc_now() - t0;
    for (size_t i = 0; i < s->n_w; i++)
        if (s->w[i].deadline > 0)
            s->w[i].deadline += spent;
}

/* The point the worker was running lost variant `w->variant` (or, when
   none had started, every variant left): those rows are recorded with
   outcome and why, and the rest of the point runs again elsewhere. */
static void lose_job(super *s, worker *w, int outcome, const char *why)
{
    if (w->job < 0)
        return;
    slot *sl = &s->slots[w->job];
    const kbc_experiment *e = exp_of(s, sl);
    char logs[600], reason[700];
    last_log(w, logs, sizeof logs);
    int v = -1;
    for (uint32_t k = 0; w->variant[0] && k < e->n_variants; k++)
        if (strcmp(e->plugin->desc->variants[e->variants[k]].name, w->variant) == 0 &&
            (sl->remaining & KB_VARIANT_BIT(e->variants[k])))
            v = (int)e->variants[k];
    if (v >= 0) {
        snprintf(reason, sizeof reason, "%s%s", why, logs);
        slot_lose(s, sl, (uint32_t)v, outcome, reason, w);
        if (s->o->sanitize_on_crash && outcome == KBC_CRASHED &&
            e->plugin->desc->variants[v].backend == KB_BACKEND_CUDA) {
            kbc_record *r = &sl->recs[position(e, (uint32_t)v)];
            sanitize_rerun(s, sl, (uint32_t)v, w->gpu, r->sanitizer, sizeof r->sanitizer);
        }
    } else {
        snprintf(reason, sizeof reason, "%s before any variant started%s", why, logs);
        for (uint32_t k = 0; k < e->n_variants; k++)
            if (sl->remaining & KB_VARIANT_BIT(e->variants[k]))
                slot_lose(s, sl, e->variants[k], outcome, reason, w);
    }
    w->job = -1;
    w->variant[0] = '\0';
    if (sl->remaining)
        sl->state = JOB_PENDING; /* the others run again in a fresh worker */
    else
        slot_finish(s, sl);
}

/* Why the worker ended, in words. */
static void exit_words(int status, int in_point, char *out, size_t n)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *abbrev = sigabbrev_np(sig);
        snprintf(out, n, "the worker was killed by signal SIG%s (%s)", abbrev ? abbrev : "?",
                 strsignal(sig));
    } else if (WIFEXITED(status)) {
        if (in_point)
            snprintf(out, n, "the worker exited with status %d in the middle of the point (a "
                             "plugin called exit()?)",
                     WEXITSTATUS(status));
        else
            snprintf(out, n, "the worker exited with status %d%s", WEXITSTATUS(status),
                     WEXITSTATUS(status) == 127 ? " (it could not be started)" : "");
    } else {
        snprintf(out, n, "the worker ended (wait status %#x)", status);
    }
}

/* Waits for a worker that closed its channel (killing it when it does not
   end within a second) and records what it was running. */
static void worker_reap(super *s, worker *w, int kill_it)
{
    int status = 0;
    pid_t r = 0;
    if (kill_it)
        kill(w->pid, SIGKILL);
    for (int i = 0; i < 100 && (r = waitpid(w->pid, &status, WNOHANG)) == 0; i++)
        usleep(10000);
    if (r == 0) {
        kill(w->pid, SIGKILL);
        waitpid(w->pid, &status, 0);
    }
    worker_stderr(s, w, 1);
    if (w->job >= 0) {
        char why[300];
        exit_words(status, 1, why, sizeof why);
        lose_job(s, w, KBC_CRASHED, why);
    } else if (!w->has_hello && !s->fatal[0] && !signals_seen) {
        char why[300];
        exit_words(status, 0, why, sizeof why);
        char logs[600];
        last_log(w, logs, sizeof logs);
        snprintf(s->fatal, sizeof s->fatal, "a worker could not start: %s%s", why, logs);
    }
    worker_close(w);
}

static void send_point(super *s, worker *w, size_t si)
{
    slot *sl = &s->slots[si];
    char line[96];
    int n = snprintf(line, sizeof line, "point %u %llu %llx\n", sl->job.exp,
                     (unsigned long long)sl->job.point, (unsigned long long)sl->remaining);
    sl->state = JOB_RUNNING;
    w->job = (long)si;
    w->variant[0] = '\0';
    if (s->t0 == 0)
        s->t0 = kbc_now();
    w->n_log = 0;
    w->n_vlog = 0;
    w->started = kbc_now();
    w->deadline = w->started + kbc_job_timeout(s->plan, &sl->job);
    w->points_run++;
    if (write(w->to, line, (size_t)n) != n) {
        /* It died before reading: its channel ends soon, and the reap
           records the point. */
    }
}

/* A point's identity as its rows spell it: a row's key without its
   variant ("plugin/experiment/n=1024,dtype=f32"), malloc'd. */
static char *point_key(const kbc_record *r)
{
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    char *k = kbc_xmalloc(need);
    kbc_record_key(r, k, need);
    char *slash = strrchr(k, '/');
    if (slash)
        *slash = '\0';
    return k;
}

typedef struct keyed {
    char *key;
    size_t slot;
} keyed;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const keyed *)a)->key, ((const keyed *)b)->key);
}

/* Matches the journal's rows to this run's points by what they are (the
   row's key: plugin, experiment, parameter values; not its index, which
   an edited INI may shift), with the same plugin build and GPU model, and
   marks the points whose every variant has a row done. */
static void resume_from_journal(super *s)
{
    keyed *index = kbc_xcalloc(s->n_slots ? s->n_slots : 1, sizeof *index);
    for (size_t k = 0; k < s->n_slots; k++) {
        slot *sl = &s->slots[k];
        const kbc_experiment *e = exp_of(s, sl);
        const kb_plugin *d = e->plugin->desc;
        kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
        kbc_experiment_point(e, sl->job.point, values);
        kbc_record r;
        kbc_record_identify(&r, e, sl->job.point, values, e->variants[0]);
        index[k] = (keyed){.key = point_key(&r), .slot = k};
        free(values);
    }
    qsort(index, s->n_slots, sizeof *index, by_key);
    size_t other_gpu = 0, other_build = 0;
    char other_model[128] = "";
    for (size_t i = 0; i < s->journal->n_entries; i++) {
        const kbc_journal_entry *je = &s->journal->entries[i];
        if (strcmp(gpu_model(s), je->gpu_model) != 0) {
            other_gpu++;
            snprintf(other_model, sizeof other_model, "%s", je->gpu_model);
            continue;
        }
        size_t j;
        const json_t *row;
        json_array_foreach(je->rows, j, row)
        {
            kbc_record r;
            char why[256];
            if (kbc_record_from_json(row, &r, why, sizeof why) != 0)
                continue;
            keyed probe = {.key = point_key(&r)};
            const keyed *hit = s->n_slots ? bsearch(&probe, index, s->n_slots, sizeof *index,
                                                    by_key)
                                          : NULL;
            free(probe.key);
            slot *sl = hit ? &s->slots[hit->slot] : NULL;
            const kbc_experiment *e = sl ? exp_of(s, sl) : NULL;
            const kbc_build_info *b = e ? build_of(s, e) : NULL;
            int v = e ? position(e, r.variant_index) : -1;
            if (sl && b && strcmp(b->sha256, je->plugin_sha256) != 0 && j == 0)
                other_build++;
            if (!sl || sl->state == JOB_DONE || !b || strcmp(b->sha256, je->plugin_sha256) != 0 ||
                v < 0 || strcmp(e->plugin->desc->variants[r.variant_index].name, r.variant) != 0 ||
                (!(sl->remaining & KB_VARIANT_BIT(r.variant_index)) && !sl->have[v])) {
                kbc_record_free(&r);
                continue;
            }
            /* The point's index in this plan, which an edit may have
               moved. */
            r.point = sl->job.point;
            r.n_points = e->n_points;
            slot_store(s, sl, &r, NULL);
        }
    }
    size_t taken = 0;
    for (size_t k = 0; k < s->n_slots; k++) {
        slot *sl = &s->slots[k];
        if (!sl->remaining && sl->state != JOB_DONE) {
            sl->state = JOB_DONE;
            s->n_done++;
            s->cost_all -= sl->job.cost; /* the ETA counts what runs here */
            taken++;
        } else if (sl->remaining) {
            /* A point not wholly in the journal runs again, whole: its
               rows come from one worker, with one set of inputs. */
            const kbc_experiment *e = exp_of(s, sl);
            for (uint32_t v = 0; v < e->n_variants; v++)
                if (sl->have[v]) {
                    kbc_record_free(&sl->recs[v]);
                    sl->have[v] = 0;
                }
            sl->remaining = 0;
            for (uint32_t v = 0; v < e->n_variants; v++) {
                uint64_t pts;
                if (kbc_point_first_of(e, sl->job.point, e->variants[v], &pts, NULL, 0))
                    sl->remaining |= KB_VARIANT_BIT(e->variants[v]);
            }
        }
    }
    for (size_t k = 0; k < s->n_slots; k++)
        free(index[k].key);
    free(index);
    s->resumed = (int)taken;
    if (!s->o->quiet)
        fprintf(stderr, "kbench: --resume: %zu of %zu points were finished already.\n", taken,
                s->n_slots);
    /* Points the journal holds that do not count here are named, so that
       a resume on another machine or after a rebuild is no surprise. */
    if (other_gpu)
        fprintf(stderr,
                "kbench: --resume: %zu journaled point%s ran on another GPU model (%s, this "
                "run has %s) and run%s again.\n",
                other_gpu, other_gpu == 1 ? "" : "s", other_model, gpu_model(s),
                other_gpu == 1 ? "s" : "");
    if (other_build)
        fprintf(stderr,
                "kbench: --resume: %zu journaled point%s came from another build of %s "
                "plugin and run%s again.\n",
                other_build, other_build == 1 ? "" : "s", other_build == 1 ? "its" : "their",
                other_build == 1 ? "s" : "");
}

static void begin_sinks(super *s)
{
    s->info.config_file = s->plan->path;
    kbc_hello_run_info(&s->first, &s->info);
    s->begun = 1;
    for (size_t k = 0; k < s->n_sinks; k++) {
        s->sink_ok[k] = 1;
        if (s->sinks[k].begin && s->sinks[k].begin(s->sinks[k].ctx, &s->info) != 0)
            sink_failed(s, k);
    }
}

/* Lets the sinks write what they held back (results.json) while the run
   waits. */
static void tick_sinks(super *s)
{
    for (size_t k = 0; s->begun && k < s->n_sinks; k++)
        if (s->sink_ok[k] && s->sinks[k].tick && s->sinks[k].tick(s->sinks[k].ctx) != 0)
            sink_failed(s, k);
}

/* One line from a worker's channel. */
static void on_message(super *s, worker *w, const char *line)
{
    json_error_t je;
    json_t *m = json_loads(line, JSON_REJECT_DUPLICATES, &je);
    const json_t *v;
    char why[700];
    if (m && (v = json_object_get(m, "hello")) && !w->has_hello) {
        if (kbc_hello_from_json(v, &w->hello, why, sizeof why) != 0) {
            snprintf(s->fatal, sizeof s->fatal, "a worker could not start: %s", why);
        } else if (strcmp(w->hello.plan_hash, s->plan_hash) != 0) {
            snprintf(s->fatal, sizeof s->fatal,
                     "a worker read %s as another plan (the file changed while kbench ran?)",
                     s->o->ini_path);
        } else {
            w->has_hello = 1;
            w->deadline = 0;
            w->hello.pid = (int)w->pid;
            if (!s->have_first) {
                s->first = w->hello;
                s->have_first = 1;
                if (s->journal && s->journal->n_entries)
                    resume_from_journal(s);
                begin_sinks(s);
            }
        }
    } else if (m && json_is_string(v = json_object_get(m, "fatal"))) {
        const json_t *code = json_object_get(m, "code");
        s->fatal_code = json_is_integer(code) && json_integer_value(code) == KBC_EXIT_USAGE
                            ? KBC_EXIT_USAGE
                            : KBC_EXIT_SYSTEM;
        if (s->fatal_code == KBC_EXIT_USAGE)
            snprintf(s->fatal, sizeof s->fatal, "%s", json_string_value(v));
        else
            snprintf(s->fatal, sizeof s->fatal, "a worker could not go on: %s",
                     json_string_value(v));
    } else if (m && json_is_string(v = json_object_get(m, "variant")) && w->job >= 0) {
        snprintf(w->variant, sizeof w->variant, "%s", json_string_value(v));
        w->n_vlog = 0;
        progress(s, w);
    } else if (m && json_is_string(v = json_object_get(m, "log"))) {
        snprintf(w->vlog[w->n_vlog % LOG_KEEP], LOG_LINE, "%s", json_string_value(v));
        w->n_vlog++;
    } else if (m && (v = json_object_get(m, "done")) && w->job >= 0 &&
               json_is_array(json_object_get(m, "rows"))) {
        slot *sl = &s->slots[w->job];
        const json_t *lost = json_object_get(v, "lost");
        if ((uint64_t)json_integer_value(json_object_get(v, "exp")) != sl->job.exp ||
            (uint64_t)json_integer_value(json_object_get(v, "point")) != sl->job.point) {
            json_decref(m);
            worker_kill(w);
            lose_job(s, w, KBC_CRASHED, "the worker answered for another point than it ran");
            return;
        }
        size_t i;
        const json_t *row;
        kbc_record *got = kbc_xcalloc(json_array_size(json_object_get(m, "rows")) + 1,
                                      sizeof *got);
        size_t n = 0;
        int bad = 0;
        json_array_foreach(json_object_get(m, "rows"), i, row)
        {
            if (kbc_record_from_json(row, &got[n], why, sizeof why) != 0) {
                bad = 1;
                break;
            }
            n++;
        }
        if (bad) {
            kbc_records_free(got, n);
            json_decref(m);
            worker_kill(w);
            lose_job(s, w, KBC_CRASHED, "the worker sent a row that cannot be read");
            return;
        }
        for (size_t k = 0; k < n; k++) {
            /* A row skipped for a context that an earlier variant spoilt
               runs again in a fresh worker. */
            if (json_is_string(lost) &&
                strncmp(got[k].reason, KBC_LOST_REASON, strlen(KBC_LOST_REASON)) == 0)
                kbc_record_free(&got[k]);
            else {
                int sanitize = s->o->sanitize_on_crash && got[k].outcome == KBC_CRASHED &&
                               got[k].backend == KB_BACKEND_CUDA;
                uint32_t vi = got[k].variant_index;
                slot_store(s, sl, &got[k], w);
                int at = position(exp_of(s, sl), vi);
                if (sanitize && at >= 0)
                    sanitize_rerun(s, sl, vi, w->gpu, sl->recs[at].sanitizer,
                                   sizeof sl->recs[at].sanitizer);
            }
        }
        free(got);
        w->job = -1;
        w->variant[0] = '\0';
        if (json_is_string(lost))
            w->retiring = 1;
        if (sl->remaining && !json_is_string(lost)) {
            /* Rows a worker left out are a fault of the worker, not a
               pass; they are named rather than dropped. */
            const kbc_experiment *e = exp_of(s, sl);
            for (uint32_t k = 0; k < e->n_variants; k++)
                if (sl->remaining & KB_VARIANT_BIT(e->variants[k]))
                    slot_lose(s, sl, e->variants[k], KBC_CRASHED,
                              "the worker's answer left this variant out", w);
        }
        if (sl->remaining)
            sl->state = JOB_PENDING;
        else
            slot_finish(s, sl);
    } else {
        /* Anything else on the channel is not kbench's: a plugin wrote to
           it, or the worker is broken.  Either way its point cannot be
           trusted. */
        char shown[80];
        size_t k = 0;
        for (const char *p = line; *p && k + 5 < sizeof shown; p++)
            shown[k++] = (*p >= 32 && *p < 127) ? *p : '?';
        shown[k] = '\0';
        snprintf(why, sizeof why,
                 "the worker wrote something on its channel that is not a kbench message "
                 "('%s'); a plugin must not write to descriptor %s",
                 shown, "3");
        json_decref(m);
        worker_kill(w);
        lose_job(s, w, KBC_CRASHED, why);
        return;
    }
    json_decref(m);
}

/* Reads what the worker's channel holds; returns -1 at its end. */
static int worker_channel(super *s, worker *w)
{
    char chunk[65536];
    for (;;) {
        ssize_t r = read(w->from, chunk, sizeof chunk);
        if (r > 0) {
            buf_add(&w->in, chunk, (size_t)r);
            if (w->in.n > MAX_MESSAGE) {
                worker_kill(w);
                lose_job(s, w, KBC_CRASHED, "the worker wrote a message too long to be one");
                return -1;
            }
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        char *line;
        while (w->pid && !w->killed && buf_line(&w->in, &line)) {
            on_message(s, w, line);
            free(line);
        }
        if (r == 0)
            return -1;
        return 0; /* EAGAIN: nothing more now */
    }
}

/* ---- the run ---- */

static int by_cost(const void *a, const void *b, void *arg)
{
    const slot *sl = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (sl[x].job.cost != sl[y].job.cost)
        return sl[x].job.cost > sl[y].job.cost ? -1 : 1;
    return x < y ? -1 : x > y;
}

static void builds_make(super *s)
{
    s->builds = kbc_xcalloc(s->plan->n ? s->plan->n : 1, sizeof *s->builds);
    for (size_t i = 0; i < s->plan->n; i++) {
        const kbc_plugin *p = s->plan->exps[i].plugin;
        if (build_of(s, &s->plan->exps[i]))
            continue;
        kbc_build_info *b = &s->builds[s->n_builds++];
        snprintf(b->name, sizeof b->name, "%s", p->desc->name);
        snprintf(b->file, sizeof b->file, "%s", p->path ? p->path : "");
        char why[300];
        if (!p->path || kbc_sha256_file(p->path, b->sha256, why, sizeof why) != 0)
            b->sha256[0] = '\0';
    }
}

/* Picks the next point for a worker: the first pending one in the
   hand-out order. */
static long next_pending(super *s)
{
    for (size_t i = 0; i < s->n_slots; i++) {
        size_t k = s->order[i];
        if (s->slots[k].state == JOB_PENDING)
            return (long)k;
    }
    return -1;
}

/* The pick (kbc_super_opts.picks) that names job j's point, or NULL. */
static const kbc_point_pick *pick_of(const kbc_super_opts *o, const kbc_job *j)
{
    for (size_t i = 0; i < o->n_picks; i++)
        if (o->picks[i].exp == j->exp && o->picks[i].point == j->point)
            return &o->picks[i];
    return NULL;
}

static int by_job(const void *a, const void *b)
{
    const kbc_job *x = a, *y = b;
    if (x->exp != y->exp)
        return x->exp < y->exp ? -1 : 1;
    return x->point < y->point ? -1 : x->point > y->point;
}

/* Asks the caller for more picks (kbc_super_opts.more) and adds them as
   pending slots.  Returns how many were added. */
static size_t add_more(super *s)
{
    const kbc_point_pick *more = NULL;
    size_t n = s->o->more(s->o->more_ctx, &more), added = 0;
    s->slots = kbc_xrealloc(s->slots, (s->n_slots + n + 1) * sizeof *s->slots);
    s->order = kbc_xrealloc(s->order, (s->n_slots + n + 1) * sizeof *s->order);
    for (size_t i = 0; i < n; i++) {
        kbc_job key = {.exp = more[i].exp, .point = more[i].point};
        const kbc_job *j = bsearch(&key, s->jobs, s->n_jobs, sizeof *s->jobs, by_job);
        if (!j)
            continue; /* no variant's configuration starts there */
        slot *sl = &s->slots[s->n_slots];
        memset(sl, 0, sizeof *sl);
        sl->job = *j;
        slot_init(s, sl);
        if (more[i].mask)
            sl->remaining &= more[i].mask;
        if (!sl->remaining) {
            free(sl->recs);
            free(sl->have);
            continue;
        }
        s->cost_all += sl->job.cost;
        s->order[s->n_slots] = s->n_slots;
        s->n_slots++;
        added++;
    }
    s->info.jobs = s->n_slots;
    return added;
}

static int running(const super *s)
{
    for (size_t i = 0; i < s->n_w; i++)
        if (s->w[i].job >= 0)
            return 1;
    return 0;
}

int kbc_supervise(const kbc_plan *plan, const kbc_super_opts *o, kbc_sink *sinks,
                  size_t n_sinks, const char *command_line)
{
    super st;
    super *s = &st;
    memset(s, 0, sizeof *s);
    s->plan = plan;
    s->o = o;
    s->sinks = sinks;
    s->n_sinks = n_sinks;
    s->sink_ok = kbc_xcalloc(n_sinks ? n_sinks : 1, sizeof *s->sink_ok);
    kbc_plan_hash(plan, s->plan_hash);
    builds_make(s);

    /* This run's points, in plan order. */
    size_t n_jobs;
    kbc_job *jobs = kbc_plan_jobs(plan, &n_jobs);
    if (o->shard_count > 1)
        kbc_jobs_partition(jobs, n_jobs, o->shard_count, NULL);
    s->slots = kbc_xcalloc(n_jobs ? n_jobs : 1, sizeof *s->slots);
    for (size_t j = 0; j < n_jobs; j++)
        if (o->picks ? pick_of(o, &jobs[j]) != NULL
                       : o->shard_count <= 1 || jobs[j].shard == o->shard_index)
            s->slots[s->n_slots++].job = jobs[j];
    s->jobs = jobs;
    s->n_jobs = n_jobs;
    size_t kept = 0;
    for (size_t i = 0; i < s->n_slots; i++) {
        slot *sl = &s->slots[kept];
        *sl = s->slots[i];
        slot_init(s, sl);
        const kbc_point_pick *pk = o->picks ? pick_of(o, &sl->job) : NULL;
        if (pk && pk->mask)
            sl->remaining &= pk->mask;
        if (sl->remaining) {
            kept++;
            continue;
        }
        /* A pick whose variants start no configuration here runs nothing
           (a worker told mask 0 would run every variant). */
        free(sl->recs);
        free(sl->have);
    }
    s->n_slots = kept;
    for (size_t i = 0; i < s->n_slots; i++)
        s->cost_all += s->slots[i].job.cost;
    s->mems = kbc_xcalloc(plan->n ? plan->n : 1, sizeof *s->mems);
    for (size_t i = 0; i < plan->n; i++)
        kbc_point_memory_init(&s->mems[i], &plan->exps[i]);

    /* Several workers take the longest points first, so that no long one
       is left for the end; one worker runs them in plan order, so that
       the table grows as it goes. */
    s->n_w = o->gpus && o->n_gpus > 0 ? o->n_gpus : 1;
    s->order = kbc_xmalloc((s->n_slots ? s->n_slots : 1) * sizeof *s->order);
    for (size_t i = 0; i < s->n_slots; i++)
        s->order[i] = i;
    if (s->n_w > 1)
        qsort_r(s->order, s->n_slots, sizeof *s->order, by_cost, s->slots);

    s->xs = kbc_exp_infos(plan);
    s->info.command_line = command_line;
    s->info.exps = s->xs;
    s->info.n_exps = plan->n;
    s->info.plan_hash = s->plan_hash;
    s->info.shard_index = o->shard_index;
    s->info.shard_count = o->shard_count > 1 ? o->shard_count : 0;
    s->info.jobs = s->n_slots;
    s->info.builds = s->builds;
    s->info.n_builds = s->n_builds;
    s->info.cccl_version = kbc_gpu_cccl_version();

    s->journal = o->journal;

    struct sigaction sa, old_int, old_term, old_pipe;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, &old_pipe);
    signals_seen = 0;

    s->w = kbc_xcalloc(s->n_w, sizeof *s->w);
    for (size_t i = 0; i < s->n_w; i++) {
        s->w[i].pid = 0;
        s->w[i].to = s->w[i].from = s->w[i].err = -1;
        s->w[i].job = -1;
    }
    int killed = 0;
    struct pollfd *pf = kbc_xcalloc(2 * s->n_w, sizeof *pf);
    for (;;) {
        if (signals_seen >= 2 && !killed) {
            /* The second signal: stop at once. */
            for (size_t i = 0; i < s->n_w; i++)
                if (s->w[i].pid)
                    kill(s->w[i].pid, SIGKILL);
            killed = 1;
        }
        emit(s, 0);
        tick_sinks(s);
        int pending = next_pending(s) >= 0;
        if (s->fatal[0] || s->stop || (killed && !running(s)))
            break;
        if (!running(s) && !pending && !signals_seen && s->have_first && o->picks && o->more &&
            add_more(s))
            continue;
        if (!running(s) && (!pending || signals_seen) && s->have_first)
            break;
        if (!running(s) && !pending && !s->n_slots && s->have_first)
            break;
        /* Start and feed the workers. */
        for (size_t i = 0; i < s->n_w && !signals_seen; i++) {
            worker *w = &s->w[i];
            int gpu = o->gpus && o->n_gpus > 0 ? (int)i : -1;
            if (!w->pid && (pending || !s->have_first))
                worker_spawn(s, w, gpu);
            if (s->fatal[0])
                break;
            if (w->pid && w->has_hello && w->job < 0 && !w->retiring) {
                if (o->isolate_point && w->points_run > 0) {
                    if (w->to >= 0) {
                        close(w->to); /* end of input: it exits */
                        w->to = -1;
                    }
                    w->retiring = 1;
                    continue;
                }
                long k = next_pending(s);
                if (k >= 0)
                    send_point(s, w, (size_t)k);
                pending = next_pending(s) >= 0;
            }
        }
        if (s->fatal[0])
            break;
        /* Wait for the workers. */
        size_t np = 0;
        double now = kbc_now(), wait_s = 0.25;
        for (size_t i = 0; i < s->n_w; i++) {
            worker *w = &s->w[i];
            if (!w->pid)
                continue;
            if (w->deadline > 0 && w->deadline - now < wait_s)
                wait_s = w->deadline - now;
            pf[np++] = (struct pollfd){.fd = w->from, .events = POLLIN};
            pf[np++] = (struct pollfd){.fd = w->err, .events = POLLIN};
        }
        int ms = wait_s <= 0 ? 0 : (int)(wait_s * 1000) + 1;
        if (poll(pf, np, ms) < 0 && errno != EINTR) {
            snprintf(s->fatal, sizeof s->fatal, "cannot wait for the workers: %s",
                     strerror(errno));
            break;
        }
        for (size_t i = 0; i < s->n_w; i++) {
            worker *w = &s->w[i];
            if (!w->pid)
                continue;
            worker_stderr(s, w, 0);
            if (worker_channel(s, w) != 0 && w->pid)
                worker_reap(s, w, 0);
            else if (w->pid && w->deadline > 0 && kbc_now() > w->deadline) {
                if (w->job >= 0) {
                    char why[300];
                    snprintf(why, sizeof why,
                             "the point ran past its watchdog of %.4g s (the timeout key) and "
                             "its worker was stopped",
                             w->deadline - w->started);
                    lose_job(s, w, KBC_TIMEOUT, why);
                    worker_reap(s, w, 1);
                } else {
                    snprintf(s->fatal, sizeof s->fatal,
                             "a worker did not start within %.0f s", HELLO_TIMEOUT_S);
                    worker_reap(s, w, 1);
                }
            }
        }
    }
    free(pf);
    /* Every worker ends: told to quit, or stopped. */
    for (size_t i = 0; i < s->n_w; i++) {
        worker *w = &s->w[i];
        if (!w->pid)
            continue;
        int stop = s->fatal[0] || s->stop || killed || w->job >= 0;
        if (w->to >= 0 && write(w->to, "quit\n", 5) < 0)
            stop = 1;
        if (stop)
            kill(w->pid, SIGKILL);
        int status;
        waitpid(w->pid, &status, 0);
        worker_stderr(s, w, 1);
        worker_close(w);
    }
    free(s->w);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);

    /* A signal that came after the last point is not an interruption. */
    int interrupted = signals_seen > 0 && s->n_done < s->n_slots;
    emit(s, 1);
    progress_clear(s);
    if (s->fatal[0]) {
        fprintf(stderr, "kbench: %s.\n", s->fatal);
        s->code = s->fatal_code ? s->fatal_code : KBC_EXIT_SYSTEM;
    } else if (interrupted) {
        fprintf(stderr,
                "kbench: interrupted after %zu of %zu points%s.\n", s->n_done, s->n_slots,
                o->journal ? "; run again with --resume and the same -o to finish" : "");
        s->code = KBC_EXIT_INTERRUPTED;
    } else if (!s->code) {
        s->code = s->any_failed ? KBC_EXIT_FAILED : KBC_EXIT_OK;
    }
    if (s->begun) {
        s->ended = 1;
        for (size_t k = 0; k < n_sinks; k++)
            if (!s->sink_ok[k])
                s->code = KBC_EXIT_SYSTEM;
        for (size_t k = 0; k < n_sinks; k++)
            if (s->sink_ok[k] && sinks[k].end && sinks[k].end(sinks[k].ctx, s->code) != 0) {
                sink_failed(s, k);
                s->code = KBC_EXIT_SYSTEM;
            }
    }

    for (size_t i = 0; i < s->n_slots; i++) {
        const kbc_experiment *e = exp_of(s, &s->slots[i]);
        for (uint32_t k = 0; k < e->n_variants; k++)
            if (s->slots[i].have && s->slots[i].have[k])
                kbc_record_free(&s->slots[i].recs[k]);
        free(s->slots[i].recs);
        free(s->slots[i].have);
    }
    free(s->slots);
    free(s->order);
    free(s->jobs);
    for (size_t i = 0; i < plan->n; i++)
        kbc_point_memory_free(&s->mems[i]);
    free(s->mems);
    free(s->builds);
    kbc_exp_infos_free(s->xs, plan->n);
    free(s->sink_ok);
    return s->code;
}

/* ---- --gpus ---- */

#define MAX_GPUS 64

int kbc_gpus_pick(const char *spec, int allow_mixed, int allow_shared, kbc_gpu_pick **picks,
                  size_t *n, unsigned long long *min_mem, char *why, size_t whyn)
{
    *picks = NULL;
    *n = 0;
    *min_mem = 0;
    kbc_gpu_id ids[MAX_GPUS];
    char nwhy[400];
    int count = kbc_nvml_list(ids, MAX_GPUS, nwhy, sizeof nwhy);
    if (count < 0) {
        snprintf(why, whyn, "--gpus %s: the GPUs cannot be listed, because %s", spec, nwhy);
        return -1;
    }
    /* What there is, for the messages. */
    char there[600];
    size_t used = (size_t)snprintf(there, sizeof there, "NVML sees %d GPU%s", count,
                                   count == 1 ? "" : "s");
    for (int i = 0; i < count && used < sizeof there; i++)
        used += (size_t)snprintf(there + used, sizeof there - used, "%s%u %s", i ? ", " : ": ",
                                 ids[i].index, ids[i].name);
    int chosen[MAX_GPUS];
    size_t k = 0;
    if (strcmp(spec, "all") == 0) {
        for (int i = 0; i < count; i++)
            chosen[k++] = i;
    } else {
        char *copy = kbc_xstrdup(spec);
        for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
            int found = -1;
            char *end;
            errno = 0;
            long idx = strtol(tok, &end, 10);
            if (*tok >= '0' && *tok <= '9' && !*end && !errno) {
                for (int i = 0; i < count; i++)
                    if ((long)ids[i].index == idx)
                        found = i;
            } else {
                for (int i = 0; i < count; i++)
                    if (strcmp(ids[i].uuid, tok) == 0)
                        found = i;
            }
            if (found < 0 || k >= MAX_GPUS) {
                snprintf(why, whyn, "--gpus %s: there is no GPU '%s' on this machine (%s)", spec,
                         tok, there);
                free(copy);
                return -1;
            }
            for (size_t j = 0; j < k; j++)
                if (chosen[j] == found && !allow_shared) {
                    snprintf(why, whyn,
                             "--gpus %s: GPU %u is named twice; two workers on one GPU time "
                             "each other's kernels (add --allow-shared if that is meant)",
                             spec, ids[found].index);
                    free(copy);
                    return -1;
                }
            chosen[k++] = found;
        }
        free(copy);
    }
    if (k == 0) {
        snprintf(why, whyn, "--gpus %s: no GPU to run on (%s)", spec, there);
        return -1;
    }
    for (size_t j = 1; j < k; j++)
        if (strcmp(ids[chosen[j]].name, ids[chosen[0]].name) != 0 && !allow_mixed) {
            snprintf(why, whyn,
                     "--gpus %s: GPU %u is a %s and GPU %u a %s; rows of different models are "
                     "not comparable (add --allow-mixed if that is meant)",
                     spec, ids[chosen[0]].index, ids[chosen[0]].name, ids[chosen[j]].index,
                     ids[chosen[j]].name);
            return -1;
        }
    *picks = kbc_xcalloc(k, sizeof **picks);
    for (size_t j = 0; j < k; j++) {
        const kbc_gpu_id *g = &ids[chosen[j]];
        snprintf((*picks)[j].uuid, sizeof (*picks)[j].uuid, "%s", g->uuid);
        snprintf((*picks)[j].pci_bus_id, sizeof (*picks)[j].pci_bus_id, "%s", g->pci_bus_id);
        snprintf((*picks)[j].name, sizeof (*picks)[j].name, "%s", g->name);
        if (g->mem_bytes && (!*min_mem || g->mem_bytes < *min_mem))
            *min_mem = g->mem_bytes;
    }
    *n = k;
    return 0;
}
