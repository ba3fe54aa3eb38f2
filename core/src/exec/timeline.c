/*
 * timeline.c -- `kbench run --timeline FILE`: where each worker's time
 * went, one JSON line per event as the run goes (docs/cli.md, "The
 * timeline").  Instants are seconds since the supervisor began (workers
 * read the same monotonic clock); a summary line ends the file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor_internal.h"
#include "util.h"

/* One worker's account (by its place: a worker started again after a
   crash adds to the same one). */
typedef struct account {
    int started;
    double start_s;          /* from its start to its hello, all starts    */
    double context_s, plan_s, device_s; /* of which: the CUDA probe, the
                                plan and its plugins, the device and its
                                ceilings                                 */
    unsigned points, ahead;  /* points run; of which set up from a host
                                half made ahead                          */
    double busy_s;           /* the points' own seconds, start to end     */
    double setup_s, ahead_s, wait_s, joins_s, teardown_s;
    double timed_cuda_s, timed_cpu_s; /* the timed runs of its rows       */
    double last_end;         /* when its last point ended                 */
} account;

struct sv_timeline {
    account *a;
    size_t n;
};

static struct sv_timeline *tl_of(super *s)
{
    if (!s->o->timeline)
        return NULL;
    if (!s->tl) {
        s->tl = kbc_xcalloc(1, sizeof *s->tl);
        s->tl->n = s->n_w;
        s->tl->a = kbc_xcalloc(s->n_w ? s->n_w : 1, sizeof *s->tl->a);
    }
    return s->tl;
}

static void put(super *s, json_t *line)
{
    char *text = json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(9));
    json_decref(line);
    if (!text)
        return;
    fprintf(s->o->timeline, "%s\n", text);
    fflush(s->o->timeline);
    free(text);
}

/* An instant of the worker's clock as seconds since the run began. */
static json_t *at(const super *s, double t)
{
    return json_real(t > 0 ? t - s->t_begin : 0.0);
}

void sv_timeline_hello(super *s, const worker *w)
{
    struct sv_timeline *tl = tl_of(s);
    if (!tl)
        return;
    size_t i = (size_t)(w - s->w);
    account *a = &tl->a[i];
    const kbc_hello *h = &w->hello;
    double now = kbc_now();
    a->started++;
    a->start_s += now - w->started;
    a->context_s += h->t_probe - h->t_main;
    a->plan_s += h->t_plan - h->t_probe;
    a->device_s += h->t_device - h->t_plan;
    json_t *o = json_object();
    json_object_set_new(o, "event", json_string("start"));
    json_object_set_new(o, "worker", json_integer((json_int_t)i));
    json_object_set_new(o, "gpu", json_string(h->gpu_uuid));
    json_object_set_new(o, "spawn", at(s, w->started));
    json_object_set_new(o, "main", at(s, h->t_main));
    json_object_set_new(o, "context_s", json_real(h->t_probe - h->t_main));
    json_object_set_new(o, "plan_s", json_real(h->t_plan - h->t_probe));
    json_object_set_new(o, "device_s", json_real(h->t_device - h->t_plan));
    json_object_set_new(o, "hello", at(s, now));
    put(s, o);
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

/* The seconds of a row's timed runs: its samples, each of `batch` runs. */
static double timed_of(const json_t *row)
{
    const json_t *batch = json_object_get(json_object_get(row, "mode"), "batch");
    double b = json_is_integer(batch) && json_integer_value(batch) > 1
                   ? (double)json_integer_value(batch)
                   : 1.0;
    size_t k;
    const json_t *x;
    double sum = 0;
    json_array_foreach(json_object_get(row, "samples_s"), k, x) sum += json_number_value(x);
    return sum * b;
}

void sv_timeline_point(super *s, const worker *w, const slot *sl, const json_t *m)
{
    struct sv_timeline *tl = tl_of(s);
    const json_t *t = json_object_get(m, "times");
    if (!tl || !json_is_object(t))
        return;
    size_t i = (size_t)(w - s->w);
    account *a = &tl->a[i];
    double start = num(t, "start"), end = num(t, "end");
    int ahead = json_is_true(json_object_get(t, "ahead"));
    a->points++;
    a->ahead += ahead;
    a->busy_s += end - start;
    a->setup_s += num(t, "setup_s");
    a->ahead_s += num(t, "ahead_s");
    a->wait_s += num(t, "wait_s");
    a->joins_s += num(t, "joins_s");
    a->teardown_s += num(t, "teardown_s");
    if (end > a->last_end)
        a->last_end = end;
    json_t *vs = json_array();
    size_t k;
    const json_t *row;
    json_array_foreach(json_object_get(m, "rows"), k, row)
    {
        const char *backend = json_string_value(json_object_get(row, "backend"));
        int cuda = backend && strcmp(backend, "cuda") == 0;
        double timed = timed_of(row);
        *(cuda ? &a->timed_cuda_s : &a->timed_cpu_s) += timed;
        json_t *v = json_object();
        json_object_set(v, "variant", json_object_get(row, "variant"));
        json_object_set_new(v, "backend", json_string(cuda ? "cuda" : "cpu"));
        json_object_set(v, "status", json_object_get(row, "status"));
        json_object_set(v, "wall_s", json_object_get(row, "wall_s"));
        json_object_set_new(v, "timed_s", json_real(timed));
        json_array_append_new(vs, v);
    }
    json_t *o = json_object();
    json_object_set_new(o, "event", json_string("point"));
    json_object_set_new(o, "worker", json_integer((json_int_t)i));
    json_object_set_new(o, "exp", json_string(sv_exp_of(s, sl)->name));
    json_object_set_new(o, "point", json_integer((json_int_t)sl->job.point));
    json_object_set_new(o, "start", at(s, start));
    json_object_set_new(o, "end", at(s, end));
    json_object_set_new(o, "setup_s", json_real(num(t, "setup_s")));
    json_object_set_new(o, "ahead", json_boolean(ahead));
    json_object_set_new(o, "ahead_s", json_real(num(t, "ahead_s")));
    json_object_set_new(o, "wait_s", json_real(num(t, "wait_s")));
    json_object_set_new(o, "joins_s", json_real(num(t, "joins_s")));
    json_object_set_new(o, "teardown_s", json_real(num(t, "teardown_s")));
    json_object_set_new(o, "prefetches", json_integer((json_int_t)num(t, "prefetches")));
    json_object_set_new(o, "variants", vs);
    put(s, o);
}

void sv_timeline_end(super *s)
{
    struct sv_timeline *tl = s->tl;
    if (!tl)
        return;
    double wall = kbc_now() - s->t_begin;
    json_t *ws = json_array();
    double timed = 0;
    for (size_t i = 0; i < tl->n; i++) {
        const account *a = &tl->a[i];
        json_t *o = json_object();
        json_object_set_new(o, "worker", json_integer((json_int_t)i));
        json_object_set_new(o, "starts", json_integer(a->started));
        json_object_set_new(o, "start_s", json_real(a->start_s));
        json_object_set_new(o, "context_s", json_real(a->context_s));
        json_object_set_new(o, "plan_s", json_real(a->plan_s));
        json_object_set_new(o, "device_s", json_real(a->device_s));
        json_object_set_new(o, "points", json_integer(a->points));
        json_object_set_new(o, "ahead", json_integer(a->ahead));
        json_object_set_new(o, "busy_s", json_real(a->busy_s));
        json_object_set_new(o, "setup_s", json_real(a->setup_s));
        json_object_set_new(o, "ahead_s", json_real(a->ahead_s));
        json_object_set_new(o, "wait_s", json_real(a->wait_s));
        json_object_set_new(o, "joins_s", json_real(a->joins_s));
        json_object_set_new(o, "teardown_s", json_real(a->teardown_s));
        json_object_set_new(o, "timed_cuda_s", json_real(a->timed_cuda_s));
        json_object_set_new(o, "timed_cpu_s", json_real(a->timed_cpu_s));
        /* After its last point, until the run ended: the tail. */
        json_object_set_new(o, "tail_s",
                            json_real(a->last_end > 0 ? wall - (a->last_end - s->t_begin) : wall));
        json_object_set_new(o, "idle_s", json_real(fmax(0.0, wall - a->start_s - a->busy_s)));
        json_array_append_new(ws, o);
        timed += a->timed_cuda_s;
    }
    json_t *o = json_object();
    json_object_set_new(o, "event", json_string("summary"));
    json_object_set_new(o, "wall_s", json_real(wall));
    json_object_set_new(o, "workers", ws);
    json_object_set_new(o, "timed_cuda_s", json_real(timed));
    put(s, o);
    free(tl->a);
    free(tl);
    s->tl = NULL;
}
