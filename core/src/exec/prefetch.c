/* prefetch.c -- see prefetch.h. */
#define _GNU_SOURCE
#include "prefetch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "measure.h"
#include "util.h"

/* Where the next point's host half stands. */
enum {
    PF_NONE,    /* no next point known                                   */
    PF_KNOWN,   /* known; its host half not started (not yet, or never:
                   refused by the rules)                                  */
    PF_RUNNING, /* its host half runs on the thread                      */
    PF_READY    /* the thread ended (joined); host_state and rc hold what
                   it made                                                */
};

struct kbc_prefetch {
    kbc_prefetch_opts o;
    int state;
    int refused;            /* PF_KNOWN: the rules said no; not asked again */
    kbc_ahead job;
    kb_value *values;       /* the job's parameter values                 */
    uint64_t mask;          /* the variants given to setup_host           */
    const kb_prefetch *x;
    kbc_hostctx hc;         /* the thread's own host: its fail() sentence
                               and its log lines are its own              */
    kb_host host;
    void *host_state;
    int rc;
    kbc_error err;
    pthread_t tid;
    double t0, t1;          /* the host half's start and end              */
    unsigned started;
};

kbc_prefetch *kbc_prefetch_new(const kbc_prefetch_opts *o)
{
    kbc_prefetch *pf = kbc_xcalloc(1, sizeof *pf);
    pf->o = *o;
    if (!pf->o.available)
        pf->o.available = kbc_host_available_bytes;
    return pf;
}

int kbc_prefetch_may_overlap(const kbc_experiment *e, const kbc_record *r,
                             const kbc_device *dev)
{
    if (e->measure.prefetch == KBC_PREFETCH_OFF || r->backend != KB_BACKEND_CUDA)
        return 0;
    /* Energy windows are enqueued by the host as they go: a busy host
       would leave the GPU idle inside them. */
    if (e->measure.energy != KBC_ENERGY_OFF)
        return 0;
    return kbc_hold_wanted(1, r->flags, e->measure.include_copies, dev && dev->hold != NULL);
}

int kbc_prefetch_fits(uint64_t next_bytes, uint64_t available, int workers)
{
    if (available == 0)
        return 0;
    return next_bytes <= available / (uint64_t)(workers < 1 ? 1 : workers);
}

uint64_t kbc_host_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                fclose(f);
                return (uint64_t)kb * 1024;
            }
        fclose(f);
    }
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

static kbc_instance job_instance(kbc_prefetch *pf)
{
    return kbc_instance_of(pf->job.e.plugin->desc, &pf->host);
}

/* The variants the next point may set up: those whose configuration
   starts there, its CUDA ones only on a device that is usable.  The device
   memory check comes when the point starts (it may admit fewer). */
static uint64_t candidates(const kbc_ahead *a, const kbc_device *dev)
{
    uint64_t mask = 0;
    const kb_plugin *d = a->e.plugin->desc;
    for (uint32_t i = 0; i < a->e.n_variants; i++) {
        uint32_t v = a->e.variants[i];
        uint64_t points;
        if (!kbc_point_first_of(&a->e, a->point, v, &points, NULL, 0))
            continue;
        if (d->variants[v].backend == KB_BACKEND_CUDA && (!dev || !dev->usable || dev->lost))
            continue;
        mask |= KB_VARIANT_BIT(v);
    }
    return mask;
}

static void *host_half(void *arg)
{
    kbc_prefetch *pf = arg;
    pf->t0 = kbc_now();
    pf->rc = kbc_call_setup_host(job_instance(pf), pf->x, pf->values, pf->mask,
                                 &pf->host_state, &pf->err);
    pf->t1 = kbc_now();
    return NULL;
}

/* Decides whether the known job's host half may start now, and starts it. */
static void start(kbc_prefetch *pf, const kbc_device *dev)
{
    const kbc_ahead *a = &pf->job;
    const kb_plugin *d = a->e.plugin->desc;
    pf->refused = 1; /* unless it starts below */
    if (a->e.measure.prefetch == KBC_PREFETCH_OFF || a->plan.status != KBC_PLAN_RUNS)
        return;
    if (!(pf->x = kbc_prefetch_of(d)))
        return;
    if (!kbc_prefetch_fits(a->plan.work.host_bytes, pf->o.available(), a->share))
        return;
    if (!(pf->mask = candidates(a, dev)))
        return;
    pf->values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *pf->values);
    kbc_experiment_point(&a->e, a->point, pf->values);
    memset(&pf->hc, 0, sizeof pf->hc);
    kbc_host_init(&pf->host, &pf->hc, d->name, a->e.measure.seed, a->cpu_threads);
    /* The device's facts, but no stream: the host half may not touch CUDA
       (kbc_call_setup_host hides the stream again). */
    if (dev && dev->usable && !dev->lost) {
        pf->host.device = dev->ordinal;
        pf->host.sm_count = dev->sm_count;
        pf->host.l2_bytes = dev->l2_bytes;
    }
    pf->host_state = NULL;
    pf->rc = KB_OK;
    if (pthread_create(&pf->tid, NULL, host_half, pf) != 0) {
        free(pf->values);
        pf->values = NULL;
        return; /* no thread: the point sets up as ever */
    }
    pf->refused = 0;
    pf->state = PF_RUNNING;
    pf->started++;
}

/* Waits for a running host half; returns the seconds waited. */
static double join(kbc_prefetch *pf)
{
    if (pf->state != PF_RUNNING)
        return 0.0;
    double t = kbc_now();
    pthread_join(pf->tid, NULL);
    pf->state = PF_READY;
    return kbc_now() - t;
}

/* Forgets the job, dropping what its host half made. */
static void forget(kbc_prefetch *pf)
{
    join(pf);
    if (pf->state == PF_READY)
        kbc_call_drop_host(job_instance(pf), pf->x, pf->host_state);
    free(pf->values);
    pf->values = NULL;
    pf->host_state = NULL;
    pf->state = PF_NONE;
    pf->refused = 0;
}

double kbc_prefetch_before(kbc_prefetch *pf, int overlap, const kbc_device *dev)
{
    if (!pf)
        return 0.0;
    if (!overlap)
        return join(pf);
    if (pf->state == PF_NONE && pf->o.next && pf->o.next(pf->o.ctx, &pf->job))
        pf->state = PF_KNOWN;
    if (pf->state == PF_KNOWN && !pf->refused)
        start(pf, dev);
    return 0.0;
}

/* Whether the job is point p of e (the same experiment narrowed to the
   same variants). */
static int is_job(const kbc_prefetch *pf, const kbc_experiment *e, uint64_t p)
{
    const kbc_experiment *j = &pf->job.e;
    return pf->job.point == p && j->n_variants == e->n_variants && j->name && e->name &&
           strcmp(j->name, e->name) == 0 &&
           memcmp(j->variants, e->variants, e->n_variants * sizeof *e->variants) == 0;
}

int kbc_prefetch_setup(kbc_prefetch *pf, kbc_instance in, const kbc_experiment *e, uint64_t p,
                       const kb_value *values, uint64_t mask, void **state, kbc_error *err,
                       kbc_prefetch_took *took)
{
    memset(took, 0, sizeof *took);
    if (pf && (pf->state == PF_RUNNING || pf->state == PF_READY) && is_job(pf, e, p) &&
        (mask & ~pf->mask) == 0) {
        took->wait_s = join(pf);
        took->ahead = 1;
        took->host_s = pf->t1 - pf->t0;
        int rc = pf->rc;
        if (rc != KB_OK) {
            /* The host half's failure is the setup's. */
            if (err)
                *err = pf->err;
            *state = NULL;
            kbc_call_drop_host(job_instance(pf), pf->x, pf->host_state);
        } else {
            rc = kbc_call_setup_device(in, pf->x, pf->host_state, mask, state, err);
        }
        pf->host_state = NULL;
        pf->state = PF_NONE; /* taken: nothing left to drop */
        forget(pf);
        return rc;
    }
    if (pf)
        forget(pf);
    return kbc_call_setup(in, values, mask, state, err);
}

void kbc_prefetch_free(kbc_prefetch *pf)
{
    if (!pf)
        return;
    forget(pf);
    free(pf);
}

unsigned kbc_prefetch_started(const kbc_prefetch *pf)
{
    return pf ? pf->started : 0;
}

int kbc_prefetch_running(const kbc_prefetch *pf)
{
    return pf && pf->state == PF_RUNNING;
}
