/*
 * instance.h -- the one layer that calls into a plugin.
 *
 * Every call the core makes to a plugin's kb_ops (plan, setup, prepare,
 * upload, run, download, verify, teardown) and to its prefetch extension
 * (setup_host, setup_device, drop_host) goes through these functions:
 * a worker's points, the measurement loop, `kbench check`, and the plan's
 * record of each point (point_plan.c, where plan() is called once per
 * point and judged by kbc_plan_refused).  Each clears the host's last fail()
 * sentence before the call, and on a status other than KB_OK fills one
 * error record: the code, the call it came from, and one sentence (the
 * plugin's own, or words saying it gave none).  The pass/fail judgement of
 * a kb_check is here too, once.
 *
 * The optional calls (upload, download) succeed at once when the plugin
 * has none.
 */
#ifndef KBENCH_INSTANCE_H
#define KBENCH_INSTANCE_H

#include <stddef.h>
#include <stdint.h>

#include "host.h"
#include "kbench/plugin.h"

/* A plugin call that did not return KB_OK. */
typedef struct kbc_error {
    int code;             /* the KB_* status                          */
    const char *origin;   /* the call: "plan", "setup", "run", ...    */
    char sentence[600];   /* what the plugin said, or that it said nothing */
    int said;             /* the sentence is the plugin's own (fail())  */
} kbc_error;

/* One plugin as the core calls it: its descriptor and the host it is
   given (whose host_private is a kbc_hostctx). */
typedef struct kbc_instance {
    const kb_plugin *desc;
    kb_host *host;
} kbc_instance;

static inline kbc_instance kbc_instance_of(const kb_plugin *d, kb_host *host)
{
    kbc_instance in = {d, host};
    return in;
}

/* Each returns the plugin's status; err (may be NULL) is filled when it is
   not KB_OK. */
/* plan() with *out zeroed first, on a copy of the host that shows no
   device (stream NULL, device -1, sm_count 0, l2_bytes 0), so that a plan
   is the same on every path and machine (kbench/plugin.h, plan).  The
   variants it refuses through refuse() go to *refused (emptied first;
   emptied again when plan() fails, since the point's rule then applies);
   with refused NULL, refuse() does nothing. */
int kbc_call_plan(kbc_instance in, const kb_value *values, kb_work *out, kbc_refusals *refused,
                  kbc_error *err);
int kbc_call_setup(kbc_instance in, const kb_value *values, uint64_t variants, void **state,
                   kbc_error *err);
int kbc_call_prepare(kbc_instance in, void *state, uint32_t v, kbc_error *err);
int kbc_call_upload(kbc_instance in, void *state, uint32_t v, kbc_error *err);
int kbc_call_run(kbc_instance in, void *state, uint32_t v, kbc_error *err);
int kbc_call_download(kbc_instance in, void *state, uint32_t v, kbc_error *err);
/* verify() with *check zeroed first. */
int kbc_call_verify(kbc_instance in, void *state, uint32_t v, kb_check *check, kbc_error *err);
/* teardown() of a state (nothing for NULL). */
void kbc_call_teardown(kbc_instance in, void *state);

/* The plugin's prefetch extension (kbench/plugin.h, KB_PREFETCH_EXTENSION),
   or NULL: no extension(), none of that name, or a table that lacks one
   of the three functions. */
const kb_prefetch *kbc_prefetch_of(const kb_plugin *d);
/* Its three calls.  setup_host sees the host with no stream (it may not
   touch CUDA) but the device's other facts; setup_device takes
   host_state over (*state is then the one to tear down); drop_host frees
   a host state that never reached setup_device (nothing for NULL). */
int kbc_call_setup_host(kbc_instance in, const kb_prefetch *x, const kb_value *values,
                        uint64_t variants, void **host_state, kbc_error *err);
int kbc_call_setup_device(kbc_instance in, const kb_prefetch *x, void *host_state,
                          uint64_t variants, void **state, kbc_error *err);
void kbc_call_drop_host(kbc_instance in, const kb_prefetch *x, void *host_state);

/* The one rule of what plan()'s failure means (kbench/plugin.h, plan):
   KB_EINVAL or KB_EUNSUPPORTED with a sentence given through fail()
   refuses the point, which becomes an `invalid` row while the sweep goes
   on; any other failure (another code, or no sentence) is the plugin's
   error, an `error` row.  err is plan()'s error record (kbc_call_plan).
   run, the dry run, kbench check and kbench tune all ask this. */
int kbc_plan_refused(const kbc_error *err);

/* The device memory setup() takes for the variants in mask (kb_work,
   "Device memory"): device_bytes plus each one's variant_device_bytes,
   saturating at UINT64_MAX. */
uint64_t kbc_work_device_bytes(const kb_work *w, uint64_t mask);

/* Whether variant v may join the variants of `admitted` before setup(): the
   device memory of them all, put in *need, is at most free_bytes (0: not
   known, every variant fits).  The point admits its variants in order with
   this, so a variant that does not fit beside the earlier ones is skipped. */
int kbc_work_fits(const kb_work *w, uint64_t admitted, uint32_t v, uint64_t free_bytes,
                  uint64_t *need);

/* The host's verdict on a check: the error is within the tolerance and
   neither is NaN.  A plugin's own `passed` is compared with this, never
   believed. */
int kbc_check_passes(const kb_check *c);

#endif
