/*
 * kit_parallel.c -- the CPU parallel-for.
 *
 * [0, n) is cut into t contiguous chunks whose sizes differ by at most one:
 * chunk k has n/t elements, plus one for the first n%t chunks.  The
 * boundaries depend only on n and t.  Worker 0 runs on the calling thread;
 * a worker whose thread cannot be started runs inline, on the same chunk,
 * so the result does not change, only the time.
 */
#include <pthread.h>

#include "kit_internal.h"

typedef struct kbk_job {
    kbk_range_fn fn;
    void *ctx;
    uint64_t begin, end;
    int worker;
    int rc;
} kbk_job;

static void *kbk_job_run(void *arg)
{
    kbk_job *j = arg;
    j->rc = j->fn(j->ctx, j->begin, j->end, j->worker);
    return NULL;
}

int kbk__parallel_run(int threads, uint64_t n, kbk_range_fn fn, void *ctx)
{
    if (n == 0)
        return KB_OK;
    uint64_t t = threads < 1 ? 1 : (uint64_t)threads;
    if (t > KBK_MAX_THREADS)
        t = KBK_MAX_THREADS;
    if (t > n)
        t = n;
    if (t == 1)
        return fn(ctx, 0, n, 0);

    kbk_job jobs[KBK_MAX_THREADS];
    pthread_t tids[KBK_MAX_THREADS];
    int started[KBK_MAX_THREADS];
    uint64_t q = n / t, r = n % t;
    for (uint64_t k = 0; k < t; k++) {
        uint64_t begin = k * q + (k < r ? k : r);
        jobs[k] = (kbk_job){.fn = fn, .ctx = ctx, .begin = begin,
                            .end = begin + q + (k < r), .worker = (int)k, .rc = KB_OK};
        started[k] = 0;
    }
    for (uint64_t k = 1; k < t; k++)
        started[k] = pthread_create(&tids[k], NULL, kbk_job_run, &jobs[k]) == 0;
    kbk_job_run(&jobs[0]);
    for (uint64_t k = 1; k < t; k++) {
        if (started[k])
            pthread_join(tids[k], NULL);
        else
            kbk_job_run(&jobs[k]);
    }
    /* The lowest worker's error, so that the answer does not depend on
       which thread finished first. */
    for (uint64_t k = 0; k < t; k++)
        if (jobs[k].rc != KB_OK)
            return jobs[k].rc;
    return KB_OK;
}

int kbk_parallel_for(kb_host *host, uint64_t n, kbk_range_fn fn, void *ctx)
{
    return kbk__parallel_run(host ? host->cpu_threads : 1, n, fn, ctx);
}

int kbk__threads_for(const kb_host *host, uint64_t n, uint64_t grain)
{
    uint64_t want = grain ? (n + grain - 1) / grain : n;
    int t = host && host->cpu_threads > 0 ? host->cpu_threads : 1;
    if (want < (uint64_t)t)
        t = want < 1 ? 1 : (int)want;
    return t;
}
