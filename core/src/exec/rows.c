/*
 * rows.c -- the rows of each point, gathered in its slot as workers send
 * them (a point whose worker crashed comes back in parts), journaled when
 * the point is finished, and fed to the sinks in plan order, so that the
 * table, CSV, JSON and markdown read as one process's run.  Everything
 * that feeds the sinks is here (supervisor_internal.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_json.h"
#include "supervisor_internal.h"
#include "util.h"

/* ---- the rows of a slot ---- */

void sv_slot_init(super *s, slot *sl)
{
    const kbc_experiment *e = sv_exp_of(s, sl);
    sl->recs = kbc_xcalloc(e->n_variants ? e->n_variants : 1, sizeof *sl->recs);
    sl->have = kbc_xcalloc(e->n_variants ? e->n_variants : 1, 1);
    sl->hinted_to = -1;
    for (uint32_t k = 0; k < e->n_variants; k++) {
        uint64_t pts;
        if (kbc_point_first_of(e, sl->job.point, e->variants[k], &pts, NULL, 0))
            sl->remaining |= KB_VARIANT_BIT(e->variants[k]);
    }
}

/* Stamps where a row ran, and keeps it at its variant's place. */
void sv_slot_store(super *s, slot *sl, const kbc_record *r, const worker *w)
{
    const kbc_experiment *e = sv_exp_of(s, sl);
    int k = sv_position(e, r->variant_index);
    if (k < 0)
        return;
    if (sl->have[k])
        kbc_record_free(&sl->recs[k]);
    sl->recs[k] = *r;
    sl->have[k] = 1;
    sl->remaining &= ~KB_VARIANT_BIT(r->variant_index);
    if (w) {
        kbc_record *x = &sl->recs[k];
        snprintf(x->host, sizeof x->host, "%s", w->hello.machine.host);
        /* The worker's own view of its device, else the GPU it was given. */
        const char *uuid = w->hello.gpu_uuid[0] ? w->hello.gpu_uuid
                           : w->gpu >= 0        ? s->o->gpus[w->gpu].uuid
                                                : "";
        const char *pci = w->hello.pci_bus_id[0] ? w->hello.pci_bus_id
                          : w->gpu >= 0          ? s->o->gpus[w->gpu].pci_bus_id
                                                 : "";
        snprintf(x->gpu_uuid, sizeof x->gpu_uuid, "%s", uuid);
        snprintf(x->pci_bus_id, sizeof x->pci_bus_id, "%s", pci);
        x->worker_pid = (int)w->pid;
    }
}

/* A row for variant v at the slot's point that never came back from a
   worker: crashed or timeout, with why. */
void sv_slot_lose(super *s, slot *sl, uint32_t v, int outcome, const char *why,
                  const worker *w)
{
    const kbc_experiment *e = sv_exp_of(s, sl);
    const kb_plugin *d = e->plugin->desc;
    kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
    kbc_experiment_point(e, sl->job.point, values);
    kbc_record r;
    kbc_record_identify(&r, e, sl->job.point, values, v);
    kbc_point_first_of(e, sl->job.point, v, &r.points, r.ignores, sizeof r.ignores);
    r.outcome = outcome;
    snprintf(r.reason, sizeof r.reason, "%s", why);
    free(values);
    sv_slot_store(s, sl, &r, w);
}

/* The slot's rows in the experiment's order, as one JSON array. */
static json_t *slot_rows_json(const super *s, const slot *sl)
{
    json_t *a = json_array();
    const kbc_experiment *e = sv_exp_of(s, sl);
    for (uint32_t k = 0; k < e->n_variants; k++)
        if (sl->have[k])
            json_array_append_new(a, kbc_record_to_json(&sl->recs[k]));
    return a;
}

/* A point is finished: journal it before it is reported. */
void sv_slot_finish(super *s, slot *sl)
{
    sl->state = JOB_DONE;
    s->n_done++;
    s->cost_done += sl->job.cost;
    if (!s->journal)
        return;
    const kbc_experiment *e = sv_exp_of(s, sl);
    const kbc_build_info *b = sv_build_of(s, e);
    kbc_diag d = {{0}};
    if (kbc_journal_append(s->journal, e->name, sl->job.exp, sl->job.point, b ? b->sha256 : "",
                           sv_gpu_model(s), slot_rows_json(s, sl), &d) != 0) {
        /* The journal is what --resume finishes from and what the results
           files are rewritten from: a point that finishes without it
           cannot be kept, so none starts.  The append left the journal at
           its last whole entry; this point is still reported, and
           --resume runs it again. */
        sv_progress_clear(s);
        fprintf(stderr,
                "kbench: %s; no more points start, since none could be kept (the journal "
                "holds %zu of %zu points: run again with --resume and the same -o once "
                "there is room, to finish).\n",
                d.msg, s->n_done - 1, s->n_slots);
        s->journal = NULL;
        kbc_fanout_journal(&s->out, NULL);
        s->stop = 1;
        s->code = KBC_EXIT_SYSTEM;
    }
}

/* Reports every finished point that is next in plan order (all of them,
   gaps skipped, when flush is set: the end of an interrupted run). */
void sv_emit(super *s, int flush)
{
    while (s->begun && s->next_emit < s->n_slots) {
        slot *sl = &s->slots[s->next_emit];
        if (sl->state != JOB_DONE) {
            if (!flush)
                return;
            s->next_emit++;
            continue;
        }
        s->next_emit++;
        const kbc_experiment *e = sv_exp_of(s, sl);
        kbc_record *recs = kbc_xcalloc(e->n_variants ? e->n_variants : 1, sizeof *recs);
        size_t n = 0;
        for (uint32_t k = 0; k < e->n_variants; k++)
            if (sl->have[k])
                recs[n++] = sl->recs[k];
        kbc_point_speedups(e, sl->job.point, recs, n, &s->mems[sl->job.exp]);
        for (size_t k = 0; k < n; k++)
            if (kbc_outcome_failed((int)recs[k].outcome))
                s->any_failed = 1;
        sv_progress_clear(s);
        kbc_fanout_point(&s->out, recs, n);
        for (size_t k = 0; k < n; k++)
            kbc_record_free(&recs[k]);
        free(recs);
        memset(sl->have, 0, e->n_variants ? e->n_variants : 1);
    }
}

/* ---- workers ---- */

static void quiet(void *ctx)
{
    sv_progress_clear(ctx);
}

/* The sinks, through the one fan-out (views/fanout.h), which owns what a
   failed write means for the run and finds the suspect rows once. */
void sv_sinks_init(super *s, kbc_sink *sinks, size_t n_sinks)
{
    kbc_fanout_init(&s->out, sinks, n_sinks, stderr, "kbench: ");
    kbc_fanout_journal(&s->out, s->o->journal ? s->o->journal->path : NULL);
    kbc_fanout_quiet(&s->out, quiet, s);
}

void sv_begin_sinks(super *s)
{
    s->info.config_file = s->plan->path;
    s->first.machine.cpu = s->cpu;
    kbc_hello_run_info(&s->first, &s->info);
    s->begun = 1;
    kbc_fanout_begin(&s->out, &s->info);
}

/* Lets the sinks write what they held back (results.json) while the run
   waits. */
void sv_tick_sinks(super *s)
{
    kbc_fanout_tick(&s->out);
}

/* The points are over: the suspects, then the sinks end with the run's
   exit code. */
void sv_end_sinks(super *s)
{
    kbc_cpu_facts_end(&s->first.machine.cpu, s->cpu0_s, s->started);
    s->code = kbc_fanout_end(&s->out, s->code);
}
