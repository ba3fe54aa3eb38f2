/* instance.c -- see instance.h. */
#include "instance.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Clears the host's last fail() before a call. */
static kbc_hostctx *before(kbc_instance in)
{
    kbc_hostctx *hc = in.host->host_private;
    kbc_host_clear(hc);
    return hc;
}

/* The error record of a call that returned code: the plugin's sentence,
   or, for a plugin that forgot to give one, words that name the call. */
static int after(kbc_instance in, const char *call, int code, kbc_error *err)
{
    if (code == KB_OK || !err)
        return code;
    const kbc_hostctx *hc = in.host->host_private;
    err->code = code;
    err->origin = call;
    err->said = hc->fail_msg[0] != '\0';
    if (hc->fail_msg[0])
        snprintf(err->sentence, sizeof err->sentence, "%s", hc->fail_msg);
    else
        snprintf(err->sentence, sizeof err->sentence,
                 "%s() returned %d (%s) without saying why", call, code, kbc_status_name(code));
    return code;
}

int kbc_call_plan(kbc_instance in, const kb_value *values, kb_work *out, kbc_refusals *refused,
                  kbc_error *err)
{
    kbc_hostctx *hc = before(in);
    memset(out, 0, sizeof *out);
    if (refused)
        kbc_refusals_clear(refused);
    if (!in.desc->ops->plan)
        return after(in, "plan", KB_EFAIL, err);
    /* What plan() may read of the host is stated in plugin.h; the device's
       fields are hidden here, on every path, so that no plan can come to
       depend on them. */
    kb_host seen = *in.host;
    seen.stream = NULL;
    seen.device = -1;
    seen.sm_count = 0;
    seen.l2_bytes = 0;
    /* refuse() writes into refused for the length of this call only. */
    hc->refusals = refused;
    int code = in.desc->ops->plan(values, out, &seen);
    hc->refusals = NULL;
    if (code != KB_OK && refused)
        kbc_refusals_clear(refused); /* a failed plan() refuses the point whole */
    return after(in, "plan", code, err);
}

int kbc_plan_refused(const kbc_error *err)
{
    return (err->code == KB_EINVAL || err->code == KB_EUNSUPPORTED) && err->said;
}

uint64_t kbc_work_device_bytes(const kb_work *w, uint64_t mask)
{
    uint64_t total = w->device_bytes;
    for (uint32_t v = 0; v < KB_MAX_VARIANTS; v++) {
        if (!(mask & KB_VARIANT_BIT(v)))
            continue;
        uint64_t b = w->variant_device_bytes[v];
        total = b > UINT64_MAX - total ? UINT64_MAX : total + b;
    }
    return total;
}

int kbc_call_setup(kbc_instance in, const kb_value *values, uint64_t variants, void **state,
                   kbc_error *err)
{
    before(in);
    *state = NULL;
    return after(in, "setup", in.desc->ops->setup(values, variants, in.host, state), err);
}

int kbc_call_prepare(kbc_instance in, void *state, uint32_t v, kbc_error *err)
{
    before(in);
    return after(in, "prepare", in.desc->ops->prepare(state, v, in.host), err);
}

int kbc_call_upload(kbc_instance in, void *state, uint32_t v, kbc_error *err)
{
    if (!in.desc->ops->upload)
        return KB_OK;
    before(in);
    return after(in, "upload", in.desc->ops->upload(state, v, in.host), err);
}

int kbc_call_run(kbc_instance in, void *state, uint32_t v, kbc_error *err)
{
    before(in);
    return after(in, "run", in.desc->ops->run(state, v, in.host), err);
}

int kbc_call_download(kbc_instance in, void *state, uint32_t v, kbc_error *err)
{
    if (!in.desc->ops->download)
        return KB_OK;
    before(in);
    return after(in, "download", in.desc->ops->download(state, v, in.host), err);
}

int kbc_call_verify(kbc_instance in, void *state, uint32_t v, kb_check *check, kbc_error *err)
{
    before(in);
    memset(check, 0, sizeof *check);
    return after(in, "verify", in.desc->ops->verify(state, v, check, in.host), err);
}

void kbc_call_teardown(kbc_instance in, void *state)
{
    if (!state)
        return;
    before(in);
    in.desc->ops->teardown(state, in.host);
}

const kb_prefetch *kbc_prefetch_of(const kb_plugin *d)
{
    const kb_ops *ops = d ? d->ops : NULL;
    if (!ops || ops->size < offsetof(kb_ops, extension) + sizeof ops->extension ||
        !ops->extension)
        return NULL;
    const kb_prefetch *x = ops->extension(KB_PREFETCH_EXTENSION);
    /* The first version's three functions are all needed. */
    if (!x || x->size < offsetof(kb_prefetch, drop_host) + sizeof x->drop_host ||
        !x->setup_host || !x->setup_device || !x->drop_host)
        return NULL;
    return x;
}

int kbc_call_setup_host(kbc_instance in, const kb_prefetch *x, const kb_value *values,
                        uint64_t variants, void **host_state, kbc_error *err)
{
    before(in);
    *host_state = NULL;
    /* No stream: the host half may not touch CUDA (kbench/plugin.h). */
    kb_host seen = *in.host;
    seen.stream = NULL;
    return after(in, "setup_host", x->setup_host(values, variants, &seen, host_state), err);
}

int kbc_call_setup_device(kbc_instance in, const kb_prefetch *x, void *host_state,
                          uint64_t variants, void **state, kbc_error *err)
{
    before(in);
    *state = NULL;
    return after(in, "setup_device", x->setup_device(host_state, variants, in.host, state), err);
}

void kbc_call_drop_host(kbc_instance in, const kb_prefetch *x, void *host_state)
{
    if (!host_state)
        return;
    before(in);
    x->drop_host(host_state, in.host);
}

int kbc_check_passes(const kb_check *c)
{
    return !isnan(c->error) && !isnan(c->tolerance) && c->error <= c->tolerance;
}

int kbc_work_fits(const kb_work *w, uint64_t admitted, uint32_t v, uint64_t free_bytes,
                  uint64_t *need)
{
    *need = kbc_work_device_bytes(w, admitted | (v < KB_MAX_VARIANTS ? KB_VARIANT_BIT(v) : 0));
    return free_bytes == 0 || *need <= free_bytes;
}
