/*
 * workers.c -- the supervisor's worker processes: started with the request
 * of request.h on their GPU, sent one point at a time, their stderr passed
 * on, and reaped; a point whose worker is lost keeps the rows it lost as
 * `crashed` or `timeout` and runs the rest again elsewhere.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "request.h"
#include "strays.h"
#include "supervisor_internal.h"
#include "text.h"
#include "util.h"
#include "worker.h"

void sv_buf_add(buf *b, const char *p, size_t n)
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
int sv_buf_line(buf *b, char **line)
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


/* dup()s fd to a descriptor of at least 10, closed on exec: only the
   copies dup2() puts in place reach the worker. */
static int high_dup(int fd)
{
    return fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

/* The descriptor of a worker's channel: the highest below the open-file
   limit (at most 1023), where no plugin's open() lands (it takes the
   lowest free number) and a stale number a plugin closes by mistake is
   unlikely to point (those are low); 3 when the limit leaves no room. */
int sv_channel_fd(void)
{
    struct rlimit rl;
    rlim_t top = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < top)
        top = rl.rlim_cur;
    return top > 16 ? (int)top - 1 : 3;
}

/* Closes every descriptor above 2 but keep: what kbench holds, and what
   whoever started kbench left open (a CI runner's pipe), is no business of
   a worker, nor of a program its plugin runs. */
static void close_others(int keep)
{
    if ((keep <= 3 || close_range(3, (unsigned)keep - 1, 0) == 0) &&
        close_range((unsigned)keep + 1, ~0U, 0) == 0)
        return;
    long top = sysconf(_SC_OPEN_MAX); /* a kernel without close_range */
    for (long fd = 3; fd < (top > 0 ? top : 1024); fd++)
        if (fd != keep)
            close((int)fd);
}

/* In a forked child before the exec of a worker: its own process group (a
   Ctrl-C at the terminal reaches the supervisor, which decides what the
   workers do; the processes a plugin leaves are ended with the group,
   strays.h), the pipes on stdin, stderr (and stdout when stdout_to_err)
   and the channel's descriptor (sv_channel_fd) and no other, the
   channel's variable, and the GPU it may see.  Exits 127 when the
   descriptors cannot be set. */
void sv_child_setup(const kbc_super_opts *o, const int to[2], const int from[2],
                    const int err[2], int gpu, int stdout_to_err)
{
    setpgid(0, 0);
    int chan = sv_channel_fd();
    int i0 = high_dup(to[0]), i2 = high_dup(err[1]), i3 = high_dup(from[1]);
    if (i0 < 0 || i2 < 0 || i3 < 0 || dup2(i0, 0) < 0 || dup2(i2, 2) < 0 ||
        (stdout_to_err && dup2(i2, 1) < 0) || dup2(i3, chan) < 0)
        _exit(127);
    if (i3 == chan && fcntl(chan, F_SETFD, 0) != 0) /* dup2 onto itself kept close-on-exec */
        _exit(127);
    close_others(chan);
    char num[16];
    snprintf(num, sizeof num, "%d", chan);
    setenv(KBC_WORKER_FD_ENV, num, 1);
    if (gpu >= 0) {
        setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
        setenv("CUDA_VISIBLE_DEVICES", o->gpus[gpu].uuid, 1);
        unsetenv("KBENCH_DEVICE");
    }
}

char **sv_worker_argv(const kbc_super_opts *o)
{
    const char *lead[16];
    size_t n_lead = o->sanitizer ? sv_sanitizer_lead(o, lead) : 0;
    return kbc_request_argv(&o->request, lead, n_lead);
}

void sv_worker_spawn(super *s, worker *w, int gpu)
{
    int to[2], from[2], err[2];
    memset(w, 0, sizeof *w);
    w->to = w->from = w->err = -1;
    w->job = -1;
    w->hint = w->hint_sent = w->hint_before = -1;
    w->gpu = gpu;
    w->strays = -1;
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0 ||
        pipe2(err, O_CLOEXEC) != 0) {
        snprintf(s->fatal, sizeof s->fatal, "cannot make a worker's pipes: %s", strerror(errno));
        return;
    }
    const kbc_super_opts *o = s->o;
    char **argv = sv_worker_argv(o);
    w->sanitized = o->sanitizer != NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(s->fatal, sizeof s->fatal, "cannot start a worker: %s", strerror(errno));
        free(argv);
        return;
    }
    if (pid == 0) {
        /* compute-sanitizer prints its reports on its standard output: that
           goes to the worker's stderr pipe, not to kbench's table. */
        sv_child_setup(o, to, from, err, gpu, w->sanitized);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        execv(argv[0], argv);
        char msg[600];
        int n = snprintf(msg, sizeof msg,
                         "{\"fatal\": \"cannot start the worker: exec of %s failed (%s)\"}\n",
                         argv[0], strerror(errno));
        if (n > 0 && write(sv_channel_fd(), msg, (size_t)n) < 0)
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
void sv_worker_kill(worker *w)
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
void sv_worker_stderr(super *s, worker *w, int final)
{
    char chunk[4096];
    ssize_t r;
    while ((r = read(w->err, chunk, sizeof chunk)) > 0)
        sv_buf_add(&w->errb, chunk, (size_t)r);
    char *line;
    while (sv_buf_line(&w->errb, &line)) {
        if (w->sanitized && strncmp(line, "=========", 9) == 0) {
            /* The sanitizer's own lines: its verdict (sanitize.c) shows
               them when it found something. */
            sv_buf_add(&w->san, line, strlen(line));
            sv_buf_add(&w->san, "\n", 1);
            free(line);
            continue;
        }
        sv_progress_clear(s);
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
        sv_progress_clear(s);
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

void sv_worker_close(worker *w)
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
    free(w->san.p);
    free(w->held);
    w->held = NULL;
    memset(&w->in, 0, sizeof w->in);
    memset(&w->errb, 0, sizeof w->errb);
    memset(&w->san, 0, sizeof w->san);
    w->pid = 0;
}

/* One lost row, with the processes its worker's plugin left (known once
   the worker was waited for and its group ended; -1 before). */
static void lose_row(super *s, slot *sl, uint32_t v, int outcome, const char *reason,
                     const worker *w)
{
    sv_slot_lose(s, sl, v, outcome, reason, w);
    int k = sv_position(sv_exp_of(s, sl), v);
    if (k >= 0)
        sl->recs[k].processes_left = w->strays;
}

/* The point the worker was running lost variant `w->variant` (or, when
   none had started, every variant left): those rows are recorded with
   outcome and why, and the rest of the point runs again elsewhere. */
void sv_lose_job(super *s, worker *w, int outcome, const char *why)
{
    /* A sanitized worker whose answer came is not lost: its rows are
       taken, with what its sanitizer said by now. */
    sv_worker_take_held(s, w);
    if (w->job < 0)
        return;
    slot *sl = &s->slots[w->job];
    if (sv_hint_suspect(s, w)) {
        /* A host half made ahead on another thread may be what failed
           (ahead.c): nothing is charged, and the points involved run
           again alone, where a failure is their own. */
        w->job = -1;
        w->variant[0] = '\0';
        sl->state = JOB_PENDING;
        return;
    }
    const kbc_experiment *e = sv_exp_of(s, sl);
    char logs[600], reason[700];
    last_log(w, logs, sizeof logs);
    int v = -1;
    for (uint32_t k = 0; w->variant[0] && k < e->n_variants; k++)
        if (strcmp(e->plugin->desc->variants[e->variants[k]].name, w->variant) == 0 &&
            (sl->remaining & KB_VARIANT_BIT(e->variants[k])))
            v = (int)e->variants[k];
    if (v >= 0) {
        snprintf(reason, sizeof reason, "%s%s", why, logs);
        lose_row(s, sl, (uint32_t)v, outcome, reason, w);
        sv_sanitize_apply(s, w, &sl->recs[sv_position(e, (uint32_t)v)]);
        if (s->o->sanitize_on_crash && outcome == KBC_CRASHED &&
            e->plugin->desc->variants[v].backend == KB_BACKEND_CUDA) {
            kbc_record *r = &sl->recs[sv_position(e, (uint32_t)v)];
            sv_sanitize_rerun(s, sl, (uint32_t)v, w->gpu, r->sanitizer, sizeof r->sanitizer);
        }
    } else {
        snprintf(reason, sizeof reason, "%s before any variant started%s", why, logs);
        for (uint32_t k = 0; k < e->n_variants; k++)
            if (sl->remaining & KB_VARIANT_BIT(e->variants[k]))
                lose_row(s, sl, e->variants[k], outcome, reason, w);
    }
    w->job = -1;
    w->variant[0] = '\0';
    if (sl->remaining)
        sl->state = JOB_PENDING; /* the others run again in a fresh worker */
    else
        sv_slot_finish(s, sl);
}

/* Why the worker ended, in words; closed: a plugin closed its channel
   (channel_closed). */
static void exit_words(int status, int in_point, int closed, char *out, size_t n)
{
    if (closed) {
        snprintf(out, n,
                 "the plugin closed kbench's channel to its worker (descriptor %d), so the "
                 "worker could not report and was stopped; a plugin must not close descriptors "
                 "it did not open",
                 sv_channel_fd());
    } else if (WIFSIGNALED(status)) {
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

/* Whether a worker's channel was closed under it by a plugin: the worker
   said so with its exit status (worker.h), or its channel ended while it
   went on running (lived: not on its way out a second later). */
static int channel_closed(int status, int lived)
{
    return lived ||
           (WIFEXITED(status) && WEXITSTATUS(status) == KBC_WORKER_EXIT_CHANNEL_CLOSED);
}

/* "; 2 processes the plugin started were still running and were ended"
   added to why, when its group held any. */
static void strays_add(const worker *w, char *why, size_t n)
{
    char words[200];
    size_t used = strlen(why);
    if (w->strays > 0)
        kbc_appendf(why, n, &used, "; %s", kbc_strays_words(w->strays, words, sizeof words));
}

/* Waits for a worker whose channel ended (killing it when it does not end
   within a second, or at once with kill_it), ends the processes its
   plugin left (its process group), and records what it was running:
   with `why` and `outcome` when given, else as crashed with the words of
   its end. */
static void reap(super *s, worker *w, int kill_it, int outcome, const char *given)
{
    int status = 0;
    pid_t r = 0;
    if (kill_it)
        kill(w->pid, SIGKILL);
    /* compute-sanitizer writes its summary after its worker ends: it is
       given a minute, its output read meanwhile, so that it never waits on
       a full pipe. */
    int tries = w->sanitized && !kill_it ? 6000 : 100;
    for (int i = 0; i < tries && (r = waitpid(w->pid, &status, WNOHANG)) == 0; i++) {
        usleep(10000);
        if (w->sanitized)
            sv_worker_stderr(s, w, 0);
    }
    /* Its channel ended and it runs on, not on its way out: a plugin
       closed the channel.  (A sanitizer outlives its worker by design.) */
    int lived = r == 0 && !kill_it && !w->sanitized && !kbc_process_exiting(w->pid);
    if (r == 0) {
        kill(w->pid, SIGKILL);
        waitpid(w->pid, &status, 0);
    }
    w->strays = kbc_strays_end_group(w->pid);
    sv_worker_stderr(s, w, 1);
    sv_hint_release(s, w);
    if (w->sanitized) {
        sv_sanitize_judge(s, w, status);
        sv_worker_take_held(s, w);
    }
    if (w->job >= 0) {
        char why[700];
        if (given)
            snprintf(why, sizeof why, "%s", given);
        else
            exit_words(status, 1, channel_closed(status, lived), why, sizeof why);
        strays_add(w, why, sizeof why);
        sv_lose_job(s, w, given ? outcome : KBC_CRASHED, why);
    } else if (!w->has_hello && !s->fatal[0] && !sv_signals_seen) {
        char why[300];
        exit_words(status, 0, 0, why, sizeof why);
        char logs[600];
        last_log(w, logs, sizeof logs);
        snprintf(s->fatal, sizeof s->fatal, "a worker could not start: %s%s", why, logs);
    }
    sv_worker_close(w);
}

void sv_worker_reap(super *s, worker *w, int kill_it)
{
    reap(s, w, kill_it, KBC_CRASHED, NULL);
}

void sv_worker_stop(super *s, worker *w, int outcome, const char *why)
{
    reap(s, w, 1, outcome, why);
}

int sv_worker_ended(const worker *w)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)w->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           si.si_pid == w->pid;
}

/* The variant a sanitized worker runs next: the first one left. */
static uint64_t first_left(uint64_t remaining)
{
    return remaining & (~remaining + 1);
}

char *sv_point_order(const super *s, const slot *sl, uint64_t mask)
{
    kbc_order o = {.exp = sl->job.exp, .point = sl->job.point,
                   .mask = mask ? mask : sl->remaining};
    kbc_plan_point(sv_exp_of(s, sl), sl->job.point, &o.plan);
    return kbc_order_line(&o);
}

void sv_send_point(super *s, worker *w, size_t si)
{
    slot *sl = &s->slots[si];
    /* Under --sanitize a worker runs one variant of one point and exits, so
       that what its sanitizer prints is that row's alone. */
    w->sent = w->sanitized ? first_left(sl->remaining) : sl->remaining;
    char *line = sv_point_order(s, sl, w->sanitized ? w->sent : 0);
    if (w->sanitized) {
        kbc_order quit = {.quit = 1};
        char *end = kbc_order_line(&quit), *both = kbc_xasprintf("%s%s", line, end);
        free(line);
        free(end);
        line = both;
        w->retiring = 1;
    }
    size_t n = strlen(line);
    sl->state = JOB_RUNNING;
    w->job = (long)si;
    w->variant[0] = '\0';
    if (s->t0 == 0)
        s->t0 = kbc_now();
    w->n_log = 0;
    w->n_vlog = 0;
    w->started = kbc_now();
    w->deadline = w->started +
                  kbc_job_timeout(s->plan, &sl->job) * (w->sanitized ? SV_SANITIZER_SLOWDOWN : 1);
    w->points_run++;
    if (write(w->to, line, n) != (ssize_t)n) {
        /* It died before reading: its channel ends soon, and the reap
           records the point. */
    }
    if (w->sanitized) {
        close(w->to); /* its orders end here */
        w->to = -1;
    }
    free(line);
}
