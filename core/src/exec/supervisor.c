/*
 * supervisor.c -- see supervisor.h; how its work is split among files is
 * in supervisor_internal.h.  Here: kbc_supervise in steps, the order points
 * are handed out in, the loop that feeds and waits for the workers, and the
 * progress line.
 */
#define _GNU_SOURCE
#include "supervisor.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exp_info.h"
#include "gpu.h"
#include "host.h"
#include "request.h"
#include "sha256.h"
#include "strays.h"
#include "supervisor_internal.h"
#include "text.h"
#include "util.h"

volatile sig_atomic_t sv_signals_seen;

static void on_signal(int sig)
{
    (void)sig;
    sv_signals_seen++;
}

void kbc_run_set_quiet(int quiet)
{
    kbc_host_set_quiet(quiet);
}

/* ---- the progress line ---- */

void sv_progress_clear(super *s)
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

/* The terminal's width on stderr (80 when it does not say). */
static int terminal_columns(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

void kbc_progress_fit(char *line, size_t n, const char *head, const char *name, int columns)
{
    /* The head ("[3/17 points, 0:05, about 0:12 left] ") and " ..." stay
       whole; the name is cut to what is left of the line, with "~" where
       cut, so that the line never wraps (a wrapped line is not cleared by
       the next one's \r). */
    int room = columns - 1 - (int)strlen(head) - 4;
    int len = (int)strlen(name);
    if (room < 1)
        snprintf(line, n, "%.*s", columns > 1 ? columns - 1 : 0, head);
    else if (len <= room)
        snprintf(line, n, "%s%s ...", head, name);
    else
        snprintf(line, n, "%s%.*s~ ...", head, room - 1, name);
}

void sv_progress(super *s, const worker *w)
{
    if (s->o->request.quiet || !isatty(STDERR_FILENO))
        return;
    const kbc_experiment *e = w->job >= 0 ? sv_exp_of(s, &s->slots[w->job]) : NULL;
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
    char head[160], name[600], line[800];
    snprintf(head, sizeof head, "[%zu/%zu points, %s%s] ", s->n_done + 1, s->n_slots,
             clock_text(elapsed, el, sizeof el), eta);
    snprintf(name, sizeof name, "%s: %s", e ? kbc_text_visible(e->name) : "",
             kbc_text_visible(w->variant));
    kbc_progress_fit(line, sizeof line, head, name, terminal_columns());
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    s->progress_shown = 1;
}

/* ---- the facts that key the journal: the GPU model, the builds ---- */

const char *sv_gpu_model(const super *s)
{
    return s->first.machine.has_gpu ? s->first.machine.name : "none";
}

const kbc_build_info *sv_build_of(const super *s, const kbc_experiment *e)
{
    for (size_t i = 0; i < s->n_builds; i++)
        if (strcmp(s->builds[i].name, e->plugin->desc->name) == 0)
            return &s->builds[i];
    return NULL;
}

/* SHA-256 of each plugin's file, once per plugin. */
static void builds_make(super *s)
{
    s->builds = kbc_xcalloc(s->plan->n ? s->plan->n : 1, sizeof *s->builds);
    for (size_t i = 0; i < s->plan->n; i++) {
        const kbc_plugin *p = s->plan->exps[i].plugin;
        if (sv_build_of(s, &s->plan->exps[i]))
            continue;
        kbc_build_info *b = &s->builds[s->n_builds++];
        snprintf(b->name, sizeof b->name, "%s", p->desc->name);
        snprintf(b->file, sizeof b->file, "%s", p->path ? p->path : "");
        char why[300];
        if (!p->path || kbc_sha256_file(p->path, b->sha256, why, sizeof why) != 0)
            b->sha256[0] = '\0';
    }
}

/* ---- the points and the order they are handed out in ---- */

static int by_cost(const void *a, const void *b, void *arg)
{
    const slot *sl = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (sl[x].job.cost != sl[y].job.cost)
        return sl[x].job.cost > sl[y].job.cost ? -1 : 1;
    return x < y ? -1 : x > y;
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
        sv_slot_init(s, sl);
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

/* ---- kbc_supervise in steps ---- */

/* The run's slots in plan order: the plan's points (this shard's, or only
   the picks) at which a selected variant's configuration starts, each with
   the variants left to run there.  A pick whose variants start no
   configuration here runs nothing (a worker told mask 0 would run every
   variant). */
static void slots_make(super *s)
{
    const kbc_super_opts *o = s->o;
    size_t n_jobs;
    kbc_job *jobs = kbc_plan_jobs(s->plan, &n_jobs);
    kbc_jobs_use_costs(jobs, n_jobs, o->costs);
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
        sv_slot_init(s, sl);
        const kbc_point_pick *pk = o->picks ? pick_of(o, &sl->job) : NULL;
        if (pk && pk->mask)
            sl->remaining &= pk->mask;
        if (sl->remaining) {
            kept++;
            continue;
        }
        free(sl->recs);
        free(sl->have);
    }
    s->n_slots = kept;
    for (size_t i = 0; i < s->n_slots; i++)
        s->cost_all += s->slots[i].job.cost;
    s->mems = kbc_xcalloc(s->plan->n ? s->plan->n : 1, sizeof *s->mems);
    for (size_t i = 0; i < s->plan->n; i++)
        kbc_point_memory_init(&s->mems[i], &s->plan->exps[i]);
}

/* The order points are handed out in.  Several workers take the longest
   points first, so that no long one is left for the end; one worker runs
   them in plan order, so that the table grows as it goes. */
static void order_make(super *s)
{
    s->n_w = s->o->gpus && s->o->n_gpus > 0 ? s->o->n_gpus : 1;
    s->order = kbc_xmalloc((s->n_slots ? s->n_slots : 1) * sizeof *s->order);
    for (size_t i = 0; i < s->n_slots; i++)
        s->order[i] = i;
    if (s->n_w > 1)
        qsort_r(s->order, s->n_slots, sizeof *s->order, by_cost, s->slots);
}

/* The run's header, but for what the first worker's hello tells. */
static void info_make(super *s, const char *command_line)
{
    s->xs = kbc_exp_infos(s->plan);
    s->info.command_line = command_line;
    s->info.exps = s->xs;
    s->info.n_exps = s->plan->n;
    s->info.plan_hash = s->plan_hash;
    s->info.shard_index = s->o->shard_index;
    s->info.shard_count = s->o->shard_count > 1 ? s->o->shard_count : 0;
    s->info.jobs = s->n_slots;
    s->info.builds = s->builds;
    s->info.n_builds = s->n_builds;
    s->info.cccl_version = kbc_gpu_cccl_version();
}

/* SIGINT and SIGTERM are counted (the loop decides), SIGPIPE ignored (a
   worker that died is seen on its channel); old keeps what was there. */
static void signals_catch(struct sigaction old[3])
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, &old[2]);
    sv_signals_seen = 0;
}

static void signals_restore(const struct sigaction old[3])
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
    sigaction(SIGPIPE, &old[2], NULL);
}

void sv_feed(super *s, worker *w)
{
    if (sv_signals_seen || s->fatal[0] || s->stop || !w->pid || !w->has_hello || w->job >= 0 ||
        w->retiring)
        return;
    if (s->o->isolate_point && w->points_run > 0) {
        if (w->to >= 0) {
            close(w->to); /* end of input: it exits */
            w->to = -1;
        }
        w->retiring = 1;
        return;
    }
    long k = sv_pick_for(s, w);
    if (k >= 0) {
        sv_send_point(s, w, (size_t)k);
        sv_send_hint(s, w);
    }
}

/* Starts the workers that are missing (while points are pending, or before
   the first hello) and feeds each idle one (sv_feed). */
static void feed_workers(super *s, int pending)
{
    const kbc_super_opts *o = s->o;
    for (size_t i = 0; i < s->n_w && !sv_signals_seen; i++) {
        worker *w = &s->w[i];
        int gpu = o->gpus && o->n_gpus > 0 ? (int)i : -1;
        if (!w->pid && (pending || !s->have_first))
            sv_worker_spawn(s, w, gpu);
        if (s->fatal[0])
            break;
        sv_feed(s, w);
        pending = next_pending(s) >= 0;
    }
}

/* After the wait: what worker w wrote, its end, or its watchdog. */
static void watch_worker(super *s, worker *w)
{
    sv_worker_stderr(s, w, 0);
    if (sv_worker_channel(s, w) != 0 && w->pid) {
        sv_worker_reap(s, w, 0);
    } else if (w->pid && w->deadline > 0 && kbc_now() > w->deadline) {
        if (w->job >= 0) {
            char why[300];
            snprintf(why, sizeof why,
                     "the point ran past its watchdog of %.4g s (the timeout key) and its "
                     "worker was stopped",
                     w->deadline - w->started);
            sv_worker_stop(s, w, KBC_TIMEOUT, why);
        } else {
            snprintf(s->fatal, sizeof s->fatal, "a worker did not start within %.0f s",
                     HELLO_TIMEOUT_S);
            sv_worker_reap(s, w, 1);
        }
    }
}

/* Waits for the workers (until the nearest watchdog, at most 0.25 s) and
   takes what they did.  Returns 0, or -1 with s->fatal set. */
static int wait_workers(super *s, struct pollfd *pf)
{
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
        snprintf(s->fatal, sizeof s->fatal, "cannot wait for the workers: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < s->n_w; i++)
        if (s->w[i].pid)
            watch_worker(s, &s->w[i]);
    return 0;
}

/* Whether the loop is over: a fatal sentence, a failed journal, every
   worker stopped by a second signal, or nothing left to run (after asking
   the caller for more picks). */
static int loop_done(super *s, int pending, int *again)
{
    *again = 0;
    if (s->fatal[0] || s->stop || (s->killed && !running(s)))
        return 1;
    if (running(s) || !s->have_first)
        return 0;
    if (!pending && !sv_signals_seen && s->o->picks && s->o->more && add_more(s)) {
        *again = 1;
        return 0;
    }
    return !pending || sv_signals_seen;
}

/* Hands out the points and takes their rows until the run is over. */
static void run_loop(super *s)
{
    s->w = kbc_xcalloc(s->n_w, sizeof *s->w);
    for (size_t i = 0; i < s->n_w; i++) {
        s->w[i].pid = 0;
        s->w[i].to = s->w[i].from = s->w[i].err = -1;
        s->w[i].job = -1;
        s->w[i].hint = s->w[i].hint_sent = s->w[i].hint_before = -1;
    }
    struct pollfd *pf = kbc_xcalloc(2 * s->n_w, sizeof *pf);
    for (;;) {
        if (sv_signals_seen >= 2 && !s->killed) {
            /* The second signal: stop at once. */
            for (size_t i = 0; i < s->n_w; i++)
                if (s->w[i].pid)
                    kill(s->w[i].pid, SIGKILL);
            s->killed = 1;
        }
        sv_emit(s, 0);
        sv_tick_sinks(s);
        int again, pending = next_pending(s) >= 0;
        if (loop_done(s, pending, &again))
            break;
        if (again)
            continue;
        feed_workers(s, pending);
        if (s->fatal[0] || wait_workers(s, pf) != 0)
            break;
    }
    free(pf);
}

/* Every worker ends: told to quit, or stopped. */
static void workers_end(super *s)
{
    kbc_order quit = {.quit = 1};
    char *line = kbc_order_line(&quit);
    for (size_t i = 0; i < s->n_w; i++) {
        worker *w = &s->w[i];
        if (!w->pid)
            continue;
        int stop = s->fatal[0] || s->stop || s->killed || w->job >= 0;
        if (w->to >= 0 && write(w->to, line, strlen(line)) < 0)
            stop = 1;
        if (stop)
            kill(w->pid, SIGKILL);
        int status;
        waitpid(w->pid, &status, 0);
        kbc_strays_end_group(w->pid); /* what a plugin started as the worker ended */
        sv_worker_stderr(s, w, 1);
        sv_worker_close(w);
    }
    free(line);
    free(s->w);
}

/* The rows still held, what stopped the run, and its exit code; then the
   sinks end. */
static void run_end(super *s)
{
    /* A signal that came after the last point is not an interruption. */
    int interrupted = sv_signals_seen > 0 && s->n_done < s->n_slots;
    sv_emit(s, 1);
    sv_progress_clear(s);
    if (s->fatal[0]) {
        fprintf(stderr, "kbench: %s.\n", s->fatal);
        s->code = s->fatal_code ? s->fatal_code : KBC_EXIT_SYSTEM;
    } else if (interrupted) {
        fprintf(stderr, "kbench: interrupted after %zu of %zu points%s.\n", s->n_done,
                s->n_slots,
                s->o->journal ? "; run again with --resume and the same -o to finish" : "");
        s->code = KBC_EXIT_INTERRUPTED;
    } else if (!s->code) {
        s->code = s->any_failed ? KBC_EXIT_FAILED : KBC_EXIT_OK;
    }
    sv_end_sinks(s);
}

static void super_free(super *s)
{
    for (size_t i = 0; i < s->n_slots; i++) {
        const kbc_experiment *e = sv_exp_of(s, &s->slots[i]);
        for (uint32_t k = 0; k < e->n_variants; k++)
            if (s->slots[i].have && s->slots[i].have[k])
                kbc_record_free(&s->slots[i].recs[k]);
        free(s->slots[i].recs);
        free(s->slots[i].have);
    }
    free(s->slots);
    free(s->order);
    free(s->jobs);
    for (size_t i = 0; i < s->plan->n; i++)
        kbc_point_memory_free(&s->mems[i]);
    free(s->mems);
    free(s->builds);
    kbc_exp_infos_free(s->xs, s->plan->n);
    kbc_fanout_free(&s->out);
}

int kbc_supervise(const kbc_plan *plan, const kbc_super_opts *o, kbc_sink *sinks,
                  size_t n_sinks, const char *command_line)
{
    super st;
    super *s = &st;
    memset(s, 0, sizeof *s);
    s->t_begin = kbc_now();
    s->plan = plan;
    s->o = o;
    /* The host's load before any worker starts, and the CPU time from
       here on, so that a noisy CPU row can be told from a loaded host. */
    kbc_cpu_facts_start(&s->cpu);
    s->cpu0_s = kbc_cpu_seconds();
    s->started = kbc_now();
    sv_sinks_init(s, sinks, n_sinks);
    kbc_plan_hash(plan, s->plan_hash);
    builds_make(s);
    slots_make(s);
    order_make(s);
    info_make(s, command_line);
    s->journal = o->journal;

    struct sigaction old[3];
    signals_catch(old);
    run_loop(s);
    workers_end(s);
    signals_restore(old);
    run_end(s);
    sv_timeline_end(s);
    int code = s->code;
    super_free(s);
    return code;
}
