/*
 * hello.c -- the smallest useful kbench plugin, built outside the tree.
 *
 * It computes y[i] = 3 x[i] + 1 over n 32-bit integers on the CPU.  The
 * "scalar" variant is right; "off_by_one" skips the last element on
 * purpose, so that a run of it shows verification failing (exit code 1).
 */
#include <stdint.h>
#include <stdlib.h>

#include <kbench/plugin.h>

enum { P_N, P_COUNT };

static const kb_param params[P_COUNT] = {
    [P_N] = {.name = "n", .type = KB_PARAM_SIZE, .def = "4K", .min = 1, .max = 1 << 26,
             .help = "number of elements"},
};

static const kb_variant variants[] = {
    {.name = "scalar", .backend = KB_BACKEND_CPU, .summary = "one element per iteration"},
    {.name = "off_by_one", .backend = KB_BACKEND_CPU,
     .summary = "forgets the last element (fails verification on purpose)"},
};

typedef struct hello {
    uint64_t n;
    uint32_t *x, *y;
} hello;

static int hello_plan(const kb_value *p, kb_work *out, kb_host *h)
{
    uint64_t n = p[P_N].u;
    out->bytes_read = 4 * n;
    out->bytes_written = 4 * n;
    out->items = n;
    out->host_bytes = 8 * n;
    return KB_OK;
}

static int hello_setup(const kb_value *p, uint64_t v, kb_host *h, void **sp)
{
    hello *s = calloc(1, sizeof *s);
    *sp = s;
    if (!s)
        return h->fail(h, KB_ENOMEM, "no memory for the state");
    s->n = p[P_N].u;
    s->x = malloc(s->n * sizeof *s->x);
    s->y = malloc(s->n * sizeof *s->y);
    if (!s->x || !s->y)
        return h->fail(h, KB_ENOMEM, "no memory for %llu elements", (unsigned long long)s->n);
    for (uint64_t i = 0; i < s->n; i++)
        s->x[i] = (uint32_t)kb_rand_u64(h->seed, 0, i);
    return KB_OK;
}

static int hello_prepare(void *sp, uint32_t v, kb_host *h)
{
    hello *s = sp;
    for (uint64_t i = 0; i < s->n; i++)
        s->y[i] = 0xffffffffu;
    return KB_OK;
}

static int hello_run(void *sp, uint32_t v, kb_host *h)
{
    hello *s = sp;
    uint64_t end = v == 1 ? s->n - 1 : s->n;
    for (uint64_t i = 0; i < end; i++)
        s->y[i] = 3u * s->x[i] + 1u;
    return KB_OK;
}

static int hello_verify(void *sp, uint32_t v, kb_check *c, kb_host *h)
{
    hello *s = sp;
    /* Integer arithmetic is exact: any differing element is a mismatch. */
    uint64_t bad = 0;
    for (uint64_t i = 0; i < s->n; i++)
        bad += s->y[i] != 3u * s->x[i] + 1u;
    c->measure = "mismatches";
    c->error = (double)bad;
    c->tolerance = 0;
    c->passed = bad == 0;
    return KB_OK;
}

static void hello_teardown(void *sp, kb_host *h)
{
    hello *s = sp;
    if (!s)
        return;
    free(s->x);
    free(s->y);
    free(s);
}

static const kb_ops hello_ops = {KB_OPS_HEADER,          .plan = hello_plan,
                                 .setup = hello_setup,   .prepare = hello_prepare,
                                 .run = hello_run,       .verify = hello_verify,
                                 .teardown = hello_teardown};

static const kb_plugin desc = {
    KB_PLUGIN_HEADER,
    .name = "hello",
    .summary = "y = 3x + 1 over 32-bit integers, built outside the kbench tree",
    KB_PARAMS(params),
    KB_VARIANTS(variants),
    .item_name = "elements",
    .ops = &hello_ops,
};

KB_EXPORT const kb_plugin *kbench_plugin(uint32_t index)
{
    return index == 0 ? &desc : NULL;
}
