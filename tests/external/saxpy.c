/*
 * saxpy.c -- a whole kbench plugin with a CPU and a CUDA variant, built
 * outside the tree on the plugin kit (kbench/kit.h).
 *
 * It computes out = a*x + y over n floats.  The result goes to a separate
 * array rather than over y, because run() must leave its inputs alone: the
 * host runs it many times.  This file holds the descriptor, the inputs, the
 * CPU variant and verify(); saxpy_kernel.cu holds the kernel.
 *
 * Tolerance.  x and y are uniform in [-1, 1), so |a*x| + |y| <= |a| + 1.  The
 * CPU computes fl(fl(a*x) + y): two roundings, an error of at most
 * gamma(2) * (|a*x| + |y|) with gamma(k) = k*u / (1 - k*u), u = 2^-24; the
 * kernel's fused multiply-add rounds once, which is within the same bound.
 * The double reference a*x + y rounds once, at 2^-53 relative.  Every
 * element must therefore lie within
 *     gamma(2) * (|a| + 1) + 2^-53 * (|a| + 1)
 * of the reference: kbk_sum_bound() computes the first term.
 */
#include <math.h>
#include <stdlib.h>

#include <kbench/kit.h>

/* The kernel's launcher, in saxpy_kernel.cu. */
int saxpy_cuda(kb_host *host, uint64_t n, float a, const float *x, const float *y, float *out,
               int block);

enum { P_N, P_A, P_BLOCK, P_COUNT };
enum { V_CPU, V_CUDA, V_COUNT };

static const kb_param params[P_COUNT] = {
    [P_N] = {.name = "n", .type = KB_PARAM_SIZE, .def = "1M", .min = 1, .max = 1 << 30,
             .help = "number of elements"},
    [P_A] = {.name = "a", .type = KB_PARAM_FLOAT, .def = "2.5", .min = -1e6, .max = 1e6,
             .help = "the scalar a in a*x + y"},
    [P_BLOCK] = {.name = "block", .type = KB_PARAM_INT, .def = "256", .min = 32, .max = 1024,
                 .help = "threads per block of the cuda variant"},
};

static const kb_variant variants[V_COUNT] = {
    [V_CPU] = {.name = "cpu", .backend = KB_BACKEND_CPU,
               .summary = "a loop over cpu_threads contiguous chunks",
               .uses = KB_USES(P_N) | KB_USES(P_A)},
    [V_CUDA] = {.name = "cuda", .backend = KB_BACKEND_CUDA,
                .summary = "one element per thread in a grid-stride loop",
                .uses = KB_USES(P_N) | KB_USES(P_A) | KB_USES(P_BLOCK)},
};

typedef struct saxpy {
    uint64_t n;
    float a;
    int block;
    kbk_buf x, y, out; /* host copies, and device copies where a GPU is used */
    double *want;      /* the reference, in double                        */
} saxpy;

static int saxpy_plan(const kb_value *p, kb_work *w, kb_host *h)
{
    uint64_t n = p[P_N].u;
    w->bytes_read = 8 * n;
    w->bytes_written = 4 * n;
    w->flops = 2.0 * (double)n;
    w->items = n;
    w->host_bytes = 20 * n; /* x, y, out and the double reference */
    w->device_bytes = 12 * n;
    return KB_OK;
}

static int saxpy_setup(const kb_value *p, uint64_t vmask, kb_host *h, void **sp)
{
    saxpy *s = calloc(1, sizeof *s);
    *sp = s;
    if (!s)
        return h->fail(h, KB_ENOMEM, "saxpy: no memory for the state");
    s->n = p[P_N].u;
    s->a = (float)p[P_A].f;
    s->block = (int)p[P_BLOCK].i;
    size_t bytes = (size_t)s->n * sizeof(float);
    /* KBK_BOTH: a device copy only where a GPU is used (host->stream). */
    int rc;
    if ((rc = kbk_buf_alloc(h, &s->x, bytes, KBK_BOTH)) ||
        (rc = kbk_buf_alloc(h, &s->y, bytes, KBK_BOTH)) ||
        (rc = kbk_buf_alloc(h, &s->out, bytes, KBK_BOTH)))
        return rc;
    if (!(s->want = malloc((size_t)s->n * sizeof *s->want)))
        return h->fail(h, KB_ENOMEM, "saxpy: no memory for the reference");
    if ((rc = kbk_fill_uniform_f32(h, s->x.host, s->n, 0, -1.0, 1.0)) ||
        (rc = kbk_fill_uniform_f32(h, s->y.host, s->n, 1, -1.0, 1.0)))
        return rc;
    const float *x = s->x.host, *y = s->y.host;
    for (uint64_t i = 0; i < s->n; i++)
        s->want[i] = (double)s->a * x[i] + y[i];
    /* The inputs go to the device once; without a GPU these do nothing. */
    if ((rc = kbk_buf_upload(h, &s->x)) || (rc = kbk_buf_upload(h, &s->y)))
        return rc;
    return KB_OK;
}

static int saxpy_prepare(void *sp, uint32_t v, kb_host *h)
{
    saxpy *s = sp;
    return kbk_buf_poison(h, &s->out, 0xff); /* NaN in both copies */
}

typedef struct cpu_job {
    const float *x, *y;
    float *out;
    float a;
} cpu_job;

static int saxpy_cpu_range(void *ctx, uint64_t begin, uint64_t end, int worker)
{
    const cpu_job *j = ctx;
    for (uint64_t i = begin; i < end; i++)
        j->out[i] = j->a * j->x[i] + j->y[i];
    return KB_OK;
}

static int saxpy_run(void *sp, uint32_t v, kb_host *h)
{
    saxpy *s = sp;
    if (v == V_CUDA)
        return saxpy_cuda(h, s->n, s->a, s->x.dev, s->y.dev, s->out.dev, s->block);
    cpu_job j = {.x = s->x.host, .y = s->y.host, .out = s->out.host, .a = s->a};
    return kbk_parallel_for(h, s->n, saxpy_cpu_range, &j);
}

static int saxpy_download(void *sp, uint32_t v, kb_host *h)
{
    saxpy *s = sp;
    return v == V_CUDA ? kbk_buf_download(h, &s->out) : KB_OK;
}

static int saxpy_verify(void *sp, uint32_t v, kb_check *c, kb_host *h)
{
    saxpy *s = sp;
    double scale = fabs((double)s->a) + 1.0;
    double atol = kbk_sum_bound(2, scale, 24) + kbk_unit_roundoff(53) * scale;
    uint64_t first = 0;
    kbk_check_f32(c, s->out.host, s->want, s->n, atol, 0.0, &first);
    if (!c->passed) {
        const float *out = s->out.host;
        h->log(h, KB_LOG_DEBUG, "saxpy: %s: element %llu is %.9g, want %.9g (atol %.3g)",
               variants[v].name, (unsigned long long)first, (double)out[first], s->want[first],
               atol);
    }
    return KB_OK;
}

static void saxpy_teardown(void *sp, kb_host *h)
{
    saxpy *s = sp;
    if (!s)
        return;
    kbk_buf_free(h, &s->x);
    kbk_buf_free(h, &s->y);
    kbk_buf_free(h, &s->out);
    free(s->want);
    free(s);
}

static const kb_ops saxpy_ops = {
    KB_OPS_HEADER,
    .plan = saxpy_plan,
    .setup = saxpy_setup,
    .prepare = saxpy_prepare,
    .run = saxpy_run,
    .download = saxpy_download,
    .verify = saxpy_verify,
    .teardown = saxpy_teardown,
};

static const kb_plugin desc = {
    KB_PLUGIN_HEADER,
    .name = "saxpy",
    .summary = "out = a*x + y over floats, on the CPU and with CUDA, built outside the tree",
    KB_PARAMS(params),
    KB_VARIANTS(variants),
    .item_name = "elements",
    .ops = &saxpy_ops,
};

KB_EXPORT const kb_plugin *kbench_plugin(uint32_t index)
{
    return index == 0 ? &desc : NULL;
}
