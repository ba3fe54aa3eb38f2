/*
 * messages.c -- what workers say on their channel (worker.h): hello, a
 * variant starting, the plugin's log lines, a point's rows, a fatal
 * sentence; anything else costs the worker its point.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_json.h"
#include "supervisor_internal.h"
#include "util.h"

/* {"hello": ...}: the worker is ready; the first hello begins the run's
   outputs (after --resume took the journal's points). */
static void on_hello(super *s, worker *w, const json_t *v)
{
    char why[700];
    if (kbc_hello_from_json(v, &w->hello, why, sizeof why) != 0) {
        snprintf(s->fatal, sizeof s->fatal, "a worker could not start: %s", why);
    } else if (strcmp(w->hello.plan_hash, s->plan_hash) != 0) {
        snprintf(s->fatal, sizeof s->fatal,
                 "a worker read %s as another plan (the file changed while kbench ran?)",
                 s->o->request.ini_path);
    } else {
        w->has_hello = 1;
        w->deadline = 0;
        w->hello.pid = (int)w->pid;
        sv_timeline_hello(s, w);
        if (!s->have_first) {
            s->first = w->hello;
            s->have_first = 1;
            if (s->journal && s->journal->n_entries)
                sv_resume_from_journal(s);
            sv_begin_sinks(s);
        }
    }
}

/* {"fatal": SENTENCE, "code": N}: the run stops with the worker's
   sentence. */
static void on_fatal(super *s, const json_t *m, const json_t *v)
{
    const json_t *code = json_object_get(m, "code");
    s->fatal_code = json_is_integer(code) && json_integer_value(code) == KBC_EXIT_USAGE
                        ? KBC_EXIT_USAGE
                        : KBC_EXIT_SYSTEM;
    if (s->fatal_code == KBC_EXIT_USAGE)
        snprintf(s->fatal, sizeof s->fatal, "%s", json_string_value(v));
    else
        snprintf(s->fatal, sizeof s->fatal, "a worker could not go on: %s",
                 json_string_value(v));
}

/* Reads a done message's rows into *got (n of them).  Returns 0, or -1
   when one cannot be read. */
static int rows_read(const json_t *rows, kbc_record **got, size_t *n)
{
    size_t i;
    const json_t *row;
    char why[700];
    *got = kbc_xcalloc(json_array_size(rows) + 1, sizeof **got);
    *n = 0;
    json_array_foreach(rows, i, row)
    {
        if (kbc_record_from_json(row, &(*got)[*n], why, sizeof why) != 0) {
            kbc_records_free(*got, *n);
            *got = NULL;
            return -1;
        }
        (*n)++;
    }
    return 0;
}

/* Keeps the rows that came back in the slot; a row skipped for a context
   that an earlier variant spoilt (lost) runs again in a fresh worker. */
static void rows_take(super *s, worker *w, slot *sl, kbc_record *got, size_t n, int lost)
{
    for (size_t k = 0; k < n; k++) {
        if (lost && strncmp(got[k].reason, KBC_LOST_REASON, strlen(KBC_LOST_REASON)) == 0) {
            kbc_record_free(&got[k]);
            continue;
        }
        int sanitize = s->o->sanitize_on_crash && got[k].outcome == KBC_CRASHED &&
                       got[k].backend == KB_BACKEND_CUDA;
        uint32_t vi = got[k].variant_index;
        sv_sanitize_apply(s, w, &got[k]); /* --sanitize: its verdict */
        sv_slot_store(s, sl, &got[k], w);
        int at = sv_position(sv_exp_of(s, sl), vi);
        if (sanitize && at >= 0)
            sv_sanitize_rerun(s, sl, vi, w->gpu, sl->recs[at].sanitizer,
                              sizeof sl->recs[at].sanitizer);
    }
}

/* {"done": {"exp", "point", "lost"}, "rows": [...]}: the point's rows.
   Returns 0, or -1 when the worker was stopped for a bad answer. */
static int on_done(super *s, worker *w, const json_t *m, const json_t *v)
{
    slot *sl = &s->slots[w->job];
    const json_t *lost = json_object_get(v, "lost");
    if ((uint64_t)json_integer_value(json_object_get(v, "exp")) != sl->job.exp ||
        (uint64_t)json_integer_value(json_object_get(v, "point")) != sl->job.point) {
        sv_worker_kill(w);
        sv_lose_job(s, w, KBC_CRASHED, "the worker answered for another point than it ran");
        return -1;
    }
    kbc_record *got;
    size_t n;
    if (rows_read(json_object_get(m, "rows"), &got, &n) != 0) {
        sv_worker_kill(w);
        sv_lose_job(s, w, KBC_CRASHED, "the worker sent a row that cannot be read");
        return -1;
    }
    rows_take(s, w, sl, got, n, json_is_string(lost));
    free(got);
    sv_timeline_point(s, w, sl, m);
    w->job = -1;
    w->variant[0] = '\0';
    if (json_is_string(lost))
        w->retiring = 1;
    /* The worker's next point goes out now: the journal's sync and the
       outputs below are the supervisor's time, not the GPU's. */
    sv_feed(s, w);
    if ((sl->remaining & w->sent) && !json_is_string(lost)) {
        /* Rows a worker left out are a fault of the worker, not a
           pass; they are named rather than dropped. */
        const kbc_experiment *e = sv_exp_of(s, sl);
        for (uint32_t k = 0; k < e->n_variants; k++)
            if (sl->remaining & w->sent & KB_VARIANT_BIT(e->variants[k]))
                sv_slot_lose(s, sl, e->variants[k], KBC_CRASHED,
                             "the worker's answer left this variant out", w);
    }
    if (sl->remaining)
        sl->state = JOB_PENDING;
    else
        sv_slot_finish(s, sl);
    return 0;
}

/* Anything else on the channel is not kbench's: a plugin wrote to it, or
   the worker is broken.  Either way its point cannot be trusted. */
static void on_garbage(super *s, worker *w, const char *line)
{
    char shown[80], why[700];
    size_t k = 0;
    for (const char *p = line; *p && k + 5 < sizeof shown; p++)
        shown[k++] = (*p >= 32 && *p < 127) ? *p : '?';
    shown[k] = '\0';
    snprintf(why, sizeof why,
             "the worker wrote something on its channel that is not a kbench message "
             "('%s'); a plugin must not write to descriptor %d",
             shown, sv_channel_fd());
    sv_worker_kill(w);
    sv_lose_job(s, w, KBC_CRASHED, why);
}

/* One line from a worker's channel. */
static void on_message(super *s, worker *w, const char *line)
{
    json_error_t je;
    json_t *m = json_loads(line, JSON_REJECT_DUPLICATES, &je);
    const json_t *v;
    if (m && (v = json_object_get(m, "hello")) && !w->has_hello) {
        on_hello(s, w, v);
    } else if (m && json_is_string(v = json_object_get(m, "fatal"))) {
        on_fatal(s, m, v);
    } else if (m && json_is_string(v = json_object_get(m, "variant")) && w->job >= 0) {
        snprintf(w->variant, sizeof w->variant, "%s", json_string_value(v));
        w->n_vlog = 0;
        sv_progress(s, w);
    } else if (m && json_is_string(v = json_object_get(m, "log"))) {
        snprintf(w->vlog[w->n_vlog % LOG_KEEP], LOG_LINE, "%s", json_string_value(v));
        w->n_vlog++;
    } else if (m && (v = json_object_get(m, "done")) && w->job >= 0 && w->sanitized &&
               !w->held && json_is_array(json_object_get(m, "rows"))) {
        /* --sanitize: the rows wait for the sanitizer's verdict, which
           comes when the worker has ended (sanitize.c); meanwhile the
           watchdog gives the sanitizer its slowness again to end. */
        w->held = kbc_xstrdup(line);
        w->deadline = kbc_now() + SV_SANITIZER_SLOWDOWN * kbc_job_timeout(s->plan, &s->slots[w->job].job);
    } else if (m && (v = json_object_get(m, "done")) && w->job >= 0 &&
               json_is_array(json_object_get(m, "rows"))) {
        on_done(s, w, m, v);
    } else {
        on_garbage(s, w, line);
    }
    json_decref(m);
}

void sv_worker_take_held(super *s, worker *w)
{
    if (!w->held)
        return;
    char *line = w->held;
    w->held = NULL;
    if (!w->verdict.known) {
        /* Taken before the sanitizer ended: it gave no verdict, and a row
           it might have found errors in cannot pass for clean. */
        w->verdict = (sv_verdict){.known = 1, .errors = 1};
        snprintf(w->verdict.summary, sizeof w->verdict.summary,
                 "compute-sanitizer did not end after its worker answered, so it gave no "
                 "verdict");
    }
    json_error_t je;
    json_t *m = json_loads(line, JSON_REJECT_DUPLICATES, &je);
    const json_t *v = m ? json_object_get(m, "done") : NULL;
    if (v && w->job >= 0)
        on_done(s, w, m, v);
    json_decref(m);
    free(line);
}

/* Reads what the worker's channel holds; returns -1 at its end, or once
   the worker has ended: a process its plugin left may hold the channel
   open for ever.  That is asked before the channel is read, so that what
   the worker wrote before it ended is all read first. */
int sv_worker_channel(super *s, worker *w)
{
    char chunk[65536];
    int ended = sv_worker_ended(w);
    for (;;) {
        ssize_t r = read(w->from, chunk, sizeof chunk);
        if (r > 0) {
            sv_buf_add(&w->in, chunk, (size_t)r);
            if (w->in.n > MAX_MESSAGE) {
                sv_worker_kill(w);
                sv_lose_job(s, w, KBC_CRASHED, "the worker wrote a message too long to be one");
                return -1;
            }
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        char *line;
        while (w->pid && !w->killed && sv_buf_line(&w->in, &line)) {
            on_message(s, w, line);
            free(line);
        }
        if (r == 0 || ended)
            return -1;
        return 0; /* EAGAIN: nothing more now */
    }
}
