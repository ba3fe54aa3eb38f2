/*
 * ahead.c -- which point an idle worker runs next, and the point hinted to
 * it beside each one (request.h, "ahead"), so that the worker makes the
 * hinted point's host half while the current point's GPU work is timed
 * (prefetch.h).
 *
 * A hint is not a promise: the supervisor still sends every point when
 * the worker is idle.  So the order points are handed out in stays the
 * one of order_make (longest first with several workers), an interrupted
 * run starts nothing that was only hinted, and at the end of the run an
 * idle worker takes a point hinted to a busy one rather than wait: the
 * busy one then drops what it made (kbc_prefetch_setup), and only CPU
 * time is lost.
 */
#include <string.h>
#include <unistd.h>

#include "instance.h"
#include "request.h"
#include "supervisor_internal.h"
#include "util.h"

static int worker_index(const super *s, const worker *w)
{
    return (int)(w - s->w);
}

/* Whether slot k is pending and hinted to a worker other than w that is
   alive. */
static int hinted_elsewhere(const super *s, const slot *sl, const worker *w)
{
    if (sl->hinted_to < 0 || sl->hinted_to == worker_index(s, w))
        return 0;
    const worker *o = &s->w[sl->hinted_to];
    return o->pid && o->hint == sl - s->slots;
}

long sv_pick_for(super *s, const worker *w)
{
    /* The point hinted to w, if it is still to run. */
    if (w->hint >= 0 && s->slots[w->hint].state == JOB_PENDING)
        return w->hint;
    long stolen = -1;
    for (size_t i = 0; i < s->n_slots; i++) {
        size_t k = s->order[i];
        const slot *sl = &s->slots[k];
        if (sl->state != JOB_PENDING)
            continue;
        if (!hinted_elsewhere(s, sl, w))
            return (long)k;
        if (stolen < 0)
            stolen = (long)k;
    }
    /* Only points hinted to busy workers are left: rather than wait, take
       the first of them (the end of the run). */
    if (stolen >= 0) {
        worker *o = &s->w[s->slots[stolen].hinted_to];
        o->hint = -1;
        s->slots[stolen].hinted_to = -1;
    }
    return stolen;
}

/* Whether point sl may be prepared ahead at all: not alone, its
   experiment's prefetch on, and its plugin with the extension. */
static int preparable(const super *s, const slot *sl)
{
    const kbc_experiment *e = sv_exp_of(s, sl);
    return !sl->solo && e->measure.prefetch != KBC_PREFETCH_OFF &&
           kbc_prefetch_of(e->plugin->desc) != NULL;
}

void sv_send_hint(super *s, worker *w)
{
    w->hint_before = w->hint_sent;
    w->hint_sent = -1;
    sv_hint_release(s, w);
    if (s->o->isolate_point || w->job < 0 || w->to < 0)
        return;
    const slot *cur = &s->slots[w->job];
    if (cur->solo || sv_exp_of(s, cur)->measure.prefetch == KBC_PREFETCH_OFF)
        return;
    long k = -1;
    for (size_t i = 0; i < s->n_slots && k < 0; i++) {
        size_t j = s->order[i];
        const slot *sl = &s->slots[j];
        if (sl->state == JOB_PENDING && sl->hinted_to < 0 && preparable(s, sl))
            k = (long)j;
    }
    if (k < 0)
        return;
    slot *sl = &s->slots[k];
    kbc_order o = {.ahead = 1, .share = (int)s->n_w, .exp = sl->job.exp,
                   .point = sl->job.point, .mask = sl->remaining};
    kbc_plan_point(sv_exp_of(s, sl), sl->job.point, &o.plan);
    char *line = kbc_order_line(&o);
    size_t n = strlen(line);
    if (write(w->to, line, n) == (ssize_t)n) {
        sl->hinted_to = worker_index(s, w);
        w->hint = w->hint_sent = k;
    }
    free(line);
}

void sv_hint_release(super *s, worker *w)
{
    if (w->hint >= 0 && s->slots[w->hint].hinted_to == worker_index(s, w))
        s->slots[w->hint].hinted_to = -1;
    w->hint = -1;
}

int sv_hint_suspect(super *s, worker *w)
{
    /* A host half runs while the job that was sent with its hint runs,
       and may still run while the next job sets up (before any variant
       of it started). */
    long during = w->hint_sent;
    long before = !w->variant[0] ? w->hint_before : -1;
    if (during < 0 && before < 0)
        return 0;
    if (w->job >= 0)
        s->slots[w->job].solo = 1;
    if (during >= 0)
        s->slots[during].solo = 1;
    if (before >= 0)
        s->slots[before].solo = 1;
    return 1;
}
