/* audit.c -- see audit.h.  CUPTI and the one driver call it needs
   (cuStreamGetCtx) are reached through dlopen()/dlsym(); the headers give
   only their types. */
#define _GNU_SOURCE
#include "audit.h"

#include <cuda.h>
#include <cupti_activity.h>
#include <cupti_result.h>
#include <cupti_version.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu.h"
#include "kbench/plugin.h"
#include "util.h"

/* ---- loading -------------------------------------------------------------- */

typedef struct cupti_api {
    CUptiResult (*get_version)(uint32_t *);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*timestamp)(uint64_t *);
    CUptiResult (*stream_id)(CUcontext, CUstream, uint8_t, uint32_t *);
    CUptiResult (*context_id)(CUcontext, uint32_t *);
    CUptiResult (*result_string)(CUptiResult, const char **);
    CUresult (*stream_ctx)(CUstream, CUcontext *);
} cupti_api;

static cupti_api api;
static int load_state; /* 0 not tried, 1 loaded, -1 refused */
static char load_why[1000];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* The major version of CUPTI this kbench was built against: its records
   are read with these headers' layouts, so another major is refused. */
#define CUPTI_MAJOR (CUPTI_API_VERSION / 10000)

/* The folder of the loaded CUDA runtime library, found among the
   process's loaded objects. */
static int find_cudart(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    if (base && strncmp(base + 1, "libcudart.so", 12) == 0) {
        snprintf((char *)data, 512, "%.*s", (int)(base - name), name);
        return 1;
    }
    return 0;
}

static void *open_cupti(char *tried, size_t n)
{
    char soname[64], path[1100], dir[512] = "";
    snprintf(soname, sizeof soname, "libcupti.so.%d", CUPTI_MAJOR);
    snprintf(tried, n, "%s", soname);
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (h)
        return h;
    /* Beside the runtime (a toolkit's lib64) and in its extras/CUPTI, then
       the toolkit's usual home. */
    dl_iterate_phdr(find_cudart, dir);
    const char *const rel[] = {"%s/%s", "%s/../extras/CUPTI/lib64/%s"};
    const char *const homes[] = {"/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64"};
    for (int i = 0; dir[0] && i < 2; i++) {
        snprintf(path, sizeof path, rel[i], dir, soname);
        if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            return h;
    }
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", homes[i], soname);
        if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            return h;
    }
    snprintf(tried, n, "%s (looked for by its name, beside the CUDA runtime%s%s and in "
                       "/usr/local/cuda)",
             soname, dir[0] ? " in " : "", dir);
    return NULL;
}

#define SYM(field, name)                                                                       \
    do {                                                                                       \
        *(void **)&api.field = dlsym(lib, name);                                               \
        if (!api.field) {                                                                      \
            snprintf(load_why, sizeof load_why, "the CUPTI library has no %s", name);          \
            goto refused;                                                              \
        }                                                                                      \
    } while (0)

static void load(void)
{
    const char *env = getenv("KBENCH_CUPTI");
    char tried[700];
    void *lib = NULL, *drv = NULL;
    const char *tool = getenv("CUDA_INJECTION64_PATH");
    if (env && strcmp(env, "off") == 0) {
        snprintf(load_why, sizeof load_why, "KBENCH_CUPTI=off");
        goto refused;
    }
    /* compute-sanitizer and the Nsight tools attach through this variable
       and may hold the callbacks CUPTI would need: kbench stays out of
       their way. */
    if (tool && *tool) {
        snprintf(load_why, sizeof load_why,
                 "a CUDA tool is attached to the process (CUDA_INJECTION64_PATH is set)");
        goto refused;
    }
    if (env && *env) {
        snprintf(tried, sizeof tried, "%s (KBENCH_CUPTI)", env);
        lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    } else {
        lib = open_cupti(tried, sizeof tried);
    }
    if (!lib) {
        snprintf(load_why, sizeof load_why, "CUPTI was not found: %s", tried);
        goto refused;
    }
    SYM(get_version, "cuptiGetVersion");
    SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
    SYM(enable, "cuptiActivityEnable");
    SYM(disable, "cuptiActivityDisable");
    SYM(flush_all, "cuptiActivityFlushAll");
    SYM(next_record, "cuptiActivityGetNextRecord");
    SYM(dropped, "cuptiActivityGetNumDroppedRecords");
    SYM(timestamp, "cuptiGetTimestamp");
    SYM(stream_id, "cuptiGetStreamIdEx");
    SYM(context_id, "cuptiGetContextId");
    SYM(result_string, "cuptiGetResultString");
    uint32_t v = 0;
    if (api.get_version(&v) != CUPTI_SUCCESS || v / 10000 != CUPTI_MAJOR ||
        v < CUPTI_API_VERSION) {
        snprintf(load_why, sizeof load_why,
                 "the CUPTI library found (%s) has API version %u; kbench reads the records "
                 "of version %d.x from %d on",
                 tried, v, CUPTI_MAJOR, CUPTI_API_VERSION);
        goto refused;
    }
    /* The driver is loaded already (the runtime opened it). */
    drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    *(void **)&api.stream_ctx = drv ? dlsym(drv, "cuStreamGetCtx") : NULL;
    if (!api.stream_ctx) {
        snprintf(load_why, sizeof load_why, "the CUDA driver's cuStreamGetCtx was not found");
        goto refused;
    }
    load_state = 1;
    return;
refused:
    /* The handles stay open: a library half used is not unloaded under a
       process that may still hold its pointers. */
    load_state = -1;
}

int kbc_audit_available(char *why, size_t n)
{
    pthread_once(&load_once, load);
    if (load_state != 1) {
        snprintf(why, n, "%s", load_why);
        return -1;
    }
    return 0;
}

static int cupti_fail(CUptiResult r, const char *what, char *why, size_t n)
{
    const char *s = NULL;
    if (api.result_string && api.result_string(r, &s) != CUPTI_SUCCESS)
        s = NULL;
    snprintf(why, n, "%s failed: %s (%d)", what, s ? s : "CUPTI error", (int)r);
    return -1;
}

/* ---- the records of the audit in progress ----------------------------------- */

typedef struct item {
    int cls;              /* KBC_AUDIT_*                      */
    uint64_t start, end;  /* ns; 0 when CUPTI never saw it end */
    uint32_t ctx, stream, corr;
    uint64_t window;      /* persisting access-policy bytes   */
    char name[96];
} item;

typedef struct api_call {
    uint32_t corr;
    uint64_t start;
} api_call;

static struct {
    pthread_mutex_t lock;
    item *items;
    size_t n_items, cap_items;
    api_call *calls;
    size_t n_calls, cap_calls;
    uint64_t dropped;
} rec = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define BUFFER_BYTES (1u << 20)

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static void add_item(int cls, uint64_t start, uint64_t end, uint32_t ctx, uint32_t stream,
                     uint32_t corr, uint64_t window, const char *name)
{
    if (rec.n_items == rec.cap_items) {
        size_t cap = rec.cap_items ? 2 * rec.cap_items : 256;
        item *x = realloc(rec.items, cap * sizeof *x);
        if (!x) {
            rec.dropped++;
            return;
        }
        rec.items = x;
        rec.cap_items = cap;
    }
    item *it = &rec.items[rec.n_items++];
    *it = (item){cls, start, end, ctx, stream, corr, window, ""};
    if (name)
        snprintf(it->name, sizeof it->name, "%s", name);
}

static void add_call(uint32_t corr, uint64_t start)
{
    if (rec.n_calls == rec.cap_calls) {
        size_t cap = rec.cap_calls ? 2 * rec.cap_calls : 1024;
        api_call *x = realloc(rec.calls, cap * sizeof *x);
        if (!x)
            return; /* the item then counts by its own start */
        rec.calls = x;
        rec.cap_calls = cap;
    }
    rec.calls[rec.n_calls++] = (api_call){corr, start};
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)size;
    CUpti_Activity *r = NULL;
    pthread_mutex_lock(&rec.lock);
    while (buffer && api.next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
        switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
            uint64_t window = 0;
            /* The window the kernel ran with, read while CUPTI's record
               still holds it. */
            if (k->pAccessPolicyWindow &&
                k->pAccessPolicyWindow->hitProp == CU_ACCESS_PROPERTY_PERSISTING &&
                k->pAccessPolicyWindow->hitRatio > 0)
                window = (uint64_t)k->pAccessPolicyWindow->num_bytes;
            add_item(KBC_AUDIT_KERNEL, k->start, k->end, k->contextId, k->streamId,
                     k->correlationId, window, k->name);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
            add_item(KBC_AUDIT_COPY, m->start, m->end, m->contextId, m->streamId,
                     m->correlationId, 0, NULL);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY2: {
            const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)r;
            add_item(KBC_AUDIT_COPY, m->start, m->end, m->contextId, m->streamId,
                     m->correlationId, 0, NULL);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)r;
            add_item(KBC_AUDIT_MEMSET, m->start, m->end, m->contextId, m->streamId,
                     m->correlationId, 0, NULL);
            break;
        }
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
            const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)r;
            add_call(a->correlationId, a->start);
            break;
        }
        default:
            break;
        }
    }
    size_t dropped = 0;
    if (buffer && api.dropped(context, stream_id, &dropped) == CUPTI_SUCCESS)
        rec.dropped += dropped;
    pthread_mutex_unlock(&rec.lock);
    free(buffer);
}

/* ---- the trace ---------------------------------------------------------------- */

static const CUpti_ActivityKind kinds[] = {
    /* CONCURRENT_KERNEL, not KERNEL: KERNEL serialises every kernel. */
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static int by_corr(const void *a, const void *b)
{
    uint32_t x = ((const api_call *)a)->corr, y = ((const api_call *)b)->corr;
    return (x > y) - (x < y);
}

static int by_start(const void *a, const void *b)
{
    uint64_t x = ((const item *)a)->start, y = ((const item *)b)->start;
    return (x > y) - (x < y);
}

/* The earliest API call with that correlation id (the runtime's call and
   the driver's under it share it), or NULL. */
static const api_call *call_of(uint32_t corr)
{
    api_call key = {corr, 0};
    const api_call *c = bsearch(&key, rec.calls, rec.n_calls, sizeof key, by_corr);
    while (c && c > rec.calls && c[-1].corr == corr)
        c--;
    return c;
}


/* Sorts the records out into *out.  t_call and t_ret bracket the call. */
static void judge(uint32_t our_ctx, uint32_t our_stream, uint32_t legacy_stream, int waits,
                  uint64_t t_call, uint64_t t_ret, uint64_t t_after, kbc_audit *out)
{
    qsort(rec.calls, rec.n_calls, sizeof *rec.calls, by_corr);
    qsort(rec.items, rec.n_items, sizeof *rec.items, by_start);
    uint64_t busy = 0, open_start = 0, open_end = 0;
    int first_late = 1, first_other = 1;
    for (size_t i = 0; i < rec.n_items; i++) {
        const item *it = &rec.items[i];
        const api_call *c = call_of(it->corr);
        uint64_t launched = c ? c->start : it->start;
        int ours = it->ctx == our_ctx && it->stream == our_stream;
        if (launched > t_after) {
            out->late[it->cls]++;
            if (first_late) {
                first_late = 0;
                out->late_s = (double)(launched - t_ret) * 1e-9;
                snprintf(out->late_name, sizeof out->late_name, "%s", it->name);
            }
            continue;
        }
        if (launched > t_ret) {
            /* The call after run() (download()): copies are its job, and
               are not timed wherever they go; kernels are not its job. */
            if (it->cls == KBC_AUDIT_KERNEL && out->after_kernels++ == 0)
                snprintf(out->after_name, sizeof out->after_name, "%s", it->name);
            continue;
        }
        /* Timed: launched by run() on kbench's stream; or, for a variant
           that declares it waits (syncs), anything run() waited for. */
        int timed = launched >= t_call && launched <= t_ret &&
                    (ours || (waits && it->end != 0 && it->end <= t_ret));
        if (!timed) {
            out->other[it->cls]++;
            if (first_other) {
                first_other = 0;
                out->other_stream = it->stream;
                out->other_context = it->ctx != our_ctx;
                out->other_legacy = it->ctx == our_ctx && it->stream == legacy_stream;
                snprintf(out->other_name, sizeof out->other_name, "%s", it->name);
            }
            continue;
        }
        out->ours++;
        if (it->window > out->window_bytes)
            out->window_bytes = it->window;
        /* The union of the intervals, in start order. */
        uint64_t end = it->end > it->start ? it->end : it->start;
        if (open_end == 0 || it->start > open_end) {
            busy += open_end - open_start;
            open_start = it->start;
            open_end = end;
        } else if (end > open_end) {
            open_end = end;
        }
    }
    busy += open_end - open_start;
    out->busy_s = (double)busy * 1e-9;
    out->dropped = rec.dropped;
}

int kbc_audit_trace(void *stream, int waits, double grace_s, kbc_audit_call fn,
                    kbc_audit_call after, void *ctx, int *status, kbc_audit *out, char *why,
                    size_t n)
{
    static int registered;
    memset(out, 0, sizeof *out);
    *status = KB_OK;
    if (kbc_audit_available(why, n) != 0)
        return -1;
    CUptiResult r;
    if (!registered) {
        if ((r = api.register_callbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS)
            return cupti_fail(r, "cuptiActivityRegisterCallbacks", why, n);
        registered = 1;
    }
    pthread_mutex_lock(&rec.lock);
    rec.n_items = rec.n_calls = 0;
    rec.dropped = 0;
    pthread_mutex_unlock(&rec.lock);

    size_t on = 0;
    int rc = 0;
    for (; on < N_KINDS; on++)
        if ((r = api.enable(kinds[on])) != CUPTI_SUCCESS) {
            rc = cupti_fail(r, "cuptiActivityEnable", why, n);
            goto off;
        }
    CUcontext cu = NULL;
    uint32_t our_ctx = 0, our_stream = 0, legacy = UINT32_MAX;
    if (api.stream_ctx((CUstream)stream, &cu) != CUDA_SUCCESS || !cu) {
        snprintf(why, n, "cuStreamGetCtx failed on kbench's stream");
        rc = -1;
        goto off;
    }
    if ((r = api.context_id(cu, &our_ctx)) != CUPTI_SUCCESS) {
        rc = cupti_fail(r, "cuptiGetContextId", why, n);
        goto off;
    }
    if ((r = api.stream_id(cu, (CUstream)stream, 0, &our_stream)) != CUPTI_SUCCESS) {
        rc = cupti_fail(r, "cuptiGetStreamIdEx", why, n);
        goto off;
    }
    /* Only to name it in a reason: a failure leaves it unnamed. */
    if (api.stream_id(cu, (CUstream)0, 0, &legacy) != CUPTI_SUCCESS)
        legacy = UINT32_MAX;

    uint64_t t_call = 0, t_ret = 0, t_after = 0;
    api.timestamp(&t_call);
    *status = fn(ctx);
    api.timestamp(&t_ret);
    if (after && *status == KB_OK)
        *status = after(ctx);
    api.timestamp(&t_after);
    /* Until the device is idle, then a grace period for a host thread that
       launches late, then until it is idle again. */
    if (kbc_gpu_device_sync(why, n) != 0 ||
        (kbc_pause(grace_s), kbc_gpu_device_sync(why, n) != 0)) {
        rc = -2;
        goto off;
    }
    if ((r = api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) != CUPTI_SUCCESS) {
        rc = cupti_fail(r, "cuptiActivityFlushAll", why, n);
        goto off;
    }
    pthread_mutex_lock(&rec.lock);
    judge(our_ctx, our_stream, legacy, waits, t_call, t_ret, t_after, out);
    pthread_mutex_unlock(&rec.lock);
off:
    /* Every kind off again, so that the timed runs of the next rows pay
       nothing for the audit; what the flush left is dropped. */
    while (on > 0)
        api.disable(kinds[--on]);
    api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&rec.lock);
    rec.n_items = rec.n_calls = 0;
    pthread_mutex_unlock(&rec.lock);
    return rc;
}
