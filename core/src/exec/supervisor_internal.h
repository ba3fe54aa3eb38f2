/*
 * supervisor_internal.h -- the supervisor's state, shared by its files and
 * by nothing else (the sv_ prefix):
 *   supervisor.c  kbc_supervise in steps: the slots, the order points are
 *                 handed out in, the loop that feeds and waits for the
 *                 workers, the progress line, the end of the run
 *   rows.c        each point's rows gathered in its slot, the journal, and
 *                 the rows fed to the sinks in plan order
 *   workers.c     the worker processes: start, orders, stderr, reaping,
 *                 and the rows a lost worker costs
 *   messages.c    what workers say on their channel
 *   sanitize.c    a crashed CUDA variant run again under memcheck
 *   resume.c      --resume: the journal's rows matched to this run's points
 *   gpus.c        --gpus through NVML
 *   ahead.c       which point an idle worker runs, and the next one hinted
 *                 to it so that its host half is made ahead (prefetch.h)
 *   timeline.c    --timeline: where each worker's time went
 */
#ifndef KBENCH_SUPERVISOR_INTERNAL_H
#define KBENCH_SUPERVISOR_INTERNAL_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fanout.h"
#include "hello.h"
#include "journal.h"
#include "point.h"
#include "shard.h"
#include "supervisor.h"

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
    int hinted_to;      /* the worker told it is likely next (its host
                           half may be made ahead there), or -1          */
    int solo;           /* never hinted, nor run beside a hint: a worker
                           died where a host half made ahead may have
                           been the cause, so it runs again alone         */
} slot;

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

/* What compute-sanitizer found in one worker under --sanitize (its worker
   ran one variant of one point, so it is that row's). */
typedef struct sv_verdict {
    int known;          /* the worker ended and its output was read       */
    long errors;        /* errors and hazards it counted (0: clean)       */
    char summary[200];  /* its summary line ("ERROR SUMMARY: 3 errors")    */
    char report[1024];  /* its first report, lines joined by " / "         */
} sv_verdict;

/* A worker under compute-sanitizer (--sanitize, --sanitize-on-crash's
   rerun) has this many times the point's watchdog: the sanitizer slows
   kernels down, ten times and more. */
#define SV_SANITIZER_SLOWDOWN 10

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
    long hint;          /* the slot hinted to it (request.h, ahead) that
                           it may run next, or -1 (also once another
                           worker took that slot)                         */
    long hint_sent;     /* the slot hinted during its current job, or -1:
                           that host half may be running now               */
    long hint_before;   /* the slot hinted during its previous job, or -1:
                           that host half may still run while the current
                           job sets up                                     */
    uint64_t sent;      /* the variants its point's order named            */
    /* --sanitize (sanitize.c): it runs under compute-sanitizer, whose
       lines ("========= ...") are kept in san rather than shown; its
       point's answer is held until the sanitizer's verdict is known. */
    int sanitized;
    buf san;
    char *held;
    sv_verdict verdict;
    int strays;         /* processes of its group ended once it was waited
                           for (strays.h); -1 before                      */
} worker;

typedef struct super {
    const kbc_plan *plan;
    const kbc_super_opts *o;
    kbc_fanout out;     /* the sinks: their failure policy, the suspects  */
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
    int killed;         /* the second signal stopped every worker         */
    char fatal[1200];   /* a sentence that stops the run                  */
    int fatal_code;     /* its exit code (0: KBC_EXIT_SYSTEM)             */
    kbc_exp_info *xs;
    kbc_run_info info;
    kbc_hello first;    /* the first hello: the header's machine facts    */
    int have_first;
    int progress_shown;
    double t0;          /* when the first point was handed out            */
    kbc_cpu_facts cpu;  /* the host's CPU and load as the run started,
                           given to the header's machine                  */
    double cpu0_s, started; /* kbc_cpu_seconds() and kbc_now() then       */
    double cost_all, cost_done; /* expected seconds of the run's points
                           (shard.c's model), and of those done here     */
    kbc_job *jobs;      /* the plan's jobs, for picks added as it goes    */
    size_t n_jobs;
    double t_begin;     /* kbc_now() when kbc_supervise began: the
                           timeline's zero                               */
    struct sv_timeline *tl; /* --timeline's accounts, or NULL              */
} super;

/* SIGINT and SIGTERM seen since the run began (supervisor.c). */
extern volatile sig_atomic_t sv_signals_seen;

static inline const kbc_experiment *sv_exp_of(const super *s, const slot *sl)
{
    return &s->plan->exps[sl->job.exp];
}

/* The position of plugin variant v in e's selection, or -1. */
static inline int sv_position(const kbc_experiment *e, uint32_t v)
{
    for (uint32_t k = 0; k < e->n_variants; k++)
        if (e->variants[k] == v)
            return (int)k;
    return -1;
}

/* ---- supervisor.c ---- */
/* Gives worker w, when it is ready and idle, its next point and the hint
   of the one after (ahead.c); with --isolate, a worker that ran a point is
   told to exit instead.  Called as soon as a worker's point is back,
   before the journal and the outputs take their time. */
void sv_feed(super *s, worker *w);
void sv_progress_clear(super *s);
void sv_progress(super *s, const worker *w);
const char *sv_gpu_model(const super *s);
const kbc_build_info *sv_build_of(const super *s, const kbc_experiment *e);

/* ---- rows.c ---- */
void sv_slot_init(super *s, slot *sl);
void sv_slot_store(super *s, slot *sl, const kbc_record *r, const worker *w);
void sv_slot_lose(super *s, slot *sl, uint32_t v, int outcome, const char *why,
                  const worker *w);
void sv_slot_finish(super *s, slot *sl);
void sv_emit(super *s, int flush);
void sv_sinks_init(super *s, kbc_sink *sinks, size_t n_sinks);
void sv_begin_sinks(super *s);
void sv_tick_sinks(super *s);
void sv_end_sinks(super *s);

/* ---- workers.c ---- */
void sv_buf_add(buf *b, const char *p, size_t n);
int sv_buf_line(buf *b, char **line);
void sv_child_setup(const kbc_super_opts *o, const int to[2], const int from[2],
                    const int err[2], int gpu, int stdout_to_err);
void sv_worker_spawn(super *s, worker *w, int gpu);
void sv_worker_kill(worker *w);
void sv_worker_stderr(super *s, worker *w, int final);
void sv_worker_close(worker *w);
void sv_worker_reap(super *s, worker *w, int kill_it);
/* Stops the worker and records the point it was running with outcome and
   why (its watchdog), once the processes its plugin left are ended. */
void sv_worker_stop(super *s, worker *w, int outcome, const char *why);
/* Whether the worker process has ended (not yet waited for): a process
   its plugin left may hold its channel open, so that the channel's end
   never comes. */
int sv_worker_ended(const worker *w);
/* The descriptor number of a worker's channel (in the worker). */
int sv_channel_fd(void);
void sv_send_point(super *s, worker *w, size_t si);
/* The order of slot sl for a worker: its point, the variants still to
   run there (or only `mask` when not 0), and its plan (request.h).  A
   line to free(). */
char *sv_point_order(const super *s, const slot *sl, uint64_t mask);
void sv_lose_job(super *s, worker *w, int outcome, const char *why);

/* The argv a worker is started with: kbench's own, or under --sanitize
   compute-sanitizer's with the worker after it.  To free() (its strings
   are the options'). */
char **sv_worker_argv(const kbc_super_opts *o);

/* ---- messages.c ---- */
int sv_worker_channel(super *s, worker *w);
/* Takes the point's answer that a sanitized worker's output held back
   (w->held), now that its verdict is known. */
void sv_worker_take_held(super *s, worker *w);

/* ---- ahead.c ---- */
/* The point idle worker w runs next (a slot index), or -1. */
long sv_pick_for(super *s, const worker *w);
/* After w was sent a point: hints the next one to it when it may be
   prepared ahead (request.h, "ahead"). */
void sv_send_hint(super *s, worker *w);
/* Forgets what was hinted to w (it ended). */
void sv_hint_release(super *s, worker *w);
/* Whether w's end (a crash or a timeout) may have been a host half made
   ahead rather than its running variant; if so, marks the slots involved
   solo and returns 1 (the job's rows are then not charged). */
int sv_hint_suspect(super *s, worker *w);

/* ---- timeline.c ---- */
/* --timeline (kbc_super_opts.timeline): a worker said hello, a point came
   back (m: its done message), a worker ended, the run ended. */
void sv_timeline_hello(super *s, const worker *w);
void sv_timeline_point(super *s, const worker *w, const slot *sl, const json_t *m);
void sv_timeline_end(super *s);

/* ---- sanitize.c ---- */
void sv_sanitize_rerun(super *s, const slot *sl, uint32_t v, int gpu, char *out, size_t n);
/* --sanitize: the words that come before the worker's own in its argv
   (compute-sanitizer and its options) into lead (room for 16); returns
   their count. */
size_t sv_sanitizer_lead(const kbc_super_opts *o, const char **lead);
/* A sanitized worker has ended with wait status `status`: its verdict from
   what the sanitizer printed (w->san), shown on stderr when it found
   something. */
void sv_sanitize_judge(super *s, worker *w, int status);
/* Makes row r the sanitizer's when the verdict of the worker that ran it
   found errors: the report in r->sanitizer, and a row that had not failed
   is an error with the summary. */
void sv_sanitize_apply(const super *s, const worker *w, kbc_record *r);

/* ---- resume.c ---- */
void sv_resume_from_journal(super *s);

#endif
