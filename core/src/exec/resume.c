/*
 * resume.c -- --resume: the journal's rows (journal.h) taken for this
 * run's points, so that the points it holds whole are not run again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_json.h"
#include "supervisor_internal.h"
#include "util.h"

/* A point's identity as its rows spell it: a row's key without its
   variant ("plugin/experiment/n=1024,dtype=f32"), malloc'd. */
static char *point_key(const kbc_record *r)
{
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    char *k = kbc_xmalloc(need);
    kbc_record_key(r, k, need);
    char *slash = strrchr(k, '/');
    if (slash)
        *slash = '\0';
    return k;
}

typedef struct keyed {
    char *key;
    size_t slot;
} keyed;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const keyed *)a)->key, ((const keyed *)b)->key);
}

/* The run's slots by their point's key, sorted (free each key). */
static keyed *slot_index(const super *s)
{
    keyed *index = kbc_xcalloc(s->n_slots ? s->n_slots : 1, sizeof *index);
    for (size_t k = 0; k < s->n_slots; k++) {
        const slot *sl = &s->slots[k];
        const kbc_experiment *e = sv_exp_of(s, sl);
        const kb_plugin *d = e->plugin->desc;
        kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
        kbc_experiment_point(e, sl->job.point, values);
        kbc_record r;
        kbc_record_identify(&r, e, sl->job.point, values, e->variants[0]);
        index[k] = (keyed){.key = point_key(&r), .slot = k};
        free(values);
    }
    qsort(index, s->n_slots, sizeof *index, by_key);
    return index;
}

/* Takes the rows of journal entry je that belong to this run's points (by
   key, with the same plugin build) into their slots; counts an entry of
   another build in *other_build. */
static void take_entry(super *s, const keyed *index, const kbc_journal_entry *je,
                       size_t *other_build)
{
    size_t j;
    const json_t *row;
    json_array_foreach(je->rows, j, row)
    {
        kbc_record r;
        char why[256];
        if (kbc_record_from_json(row, &r, why, sizeof why) != 0)
            continue;
        keyed probe = {.key = point_key(&r)};
        const keyed *hit =
            s->n_slots ? bsearch(&probe, index, s->n_slots, sizeof *index, by_key) : NULL;
        free(probe.key);
        slot *sl = hit ? &s->slots[hit->slot] : NULL;
        const kbc_experiment *e = sl ? sv_exp_of(s, sl) : NULL;
        const kbc_build_info *b = e ? sv_build_of(s, e) : NULL;
        int v = e ? sv_position(e, r.variant_index) : -1;
        if (sl && b && strcmp(b->sha256, je->plugin_sha256) != 0 && j == 0)
            (*other_build)++;
        if (!sl || sl->state == JOB_DONE || !b || strcmp(b->sha256, je->plugin_sha256) != 0 ||
            v < 0 || strcmp(e->plugin->desc->variants[r.variant_index].name, r.variant) != 0 ||
            (!(sl->remaining & KB_VARIANT_BIT(r.variant_index)) && !sl->have[v])) {
            kbc_record_free(&r);
            continue;
        }
        /* The point's index in this plan, which an edit may have moved. */
        r.point = sl->job.point;
        r.n_points = e->n_points;
        sv_slot_store(s, sl, &r, NULL);
    }
}

/* Marks the slots whose every variant has a row done; a point not wholly
   in the journal runs again, whole: its rows come from one worker, with
   one set of inputs.  Returns how many were done. */
static size_t settle_slots(super *s)
{
    size_t taken = 0;
    for (size_t k = 0; k < s->n_slots; k++) {
        slot *sl = &s->slots[k];
        if (!sl->remaining && sl->state != JOB_DONE) {
            sl->state = JOB_DONE;
            s->n_done++;
            s->cost_all -= sl->job.cost; /* the ETA counts what runs here */
            taken++;
        } else if (sl->remaining) {
            const kbc_experiment *e = sv_exp_of(s, sl);
            for (uint32_t v = 0; v < e->n_variants; v++)
                if (sl->have[v]) {
                    kbc_record_free(&sl->recs[v]);
                    sl->have[v] = 0;
                }
            sl->remaining = 0;
            for (uint32_t v = 0; v < e->n_variants; v++) {
                uint64_t pts;
                if (kbc_point_first_of(e, sl->job.point, e->variants[v], &pts, NULL, 0))
                    sl->remaining |= KB_VARIANT_BIT(e->variants[v]);
            }
        }
    }
    return taken;
}

/* Matches the journal's rows to this run's points by what they are (the
   row's key: plugin, experiment, parameter values; not its index, which
   an edited INI may shift), with the same plugin build and GPU model, and
   marks the points whose every variant has a row done. */
void sv_resume_from_journal(super *s)
{
    keyed *index = slot_index(s);
    size_t other_gpu = 0, other_build = 0;
    char other_model[128] = "";
    for (size_t i = 0; i < s->journal->n_entries; i++) {
        const kbc_journal_entry *je = &s->journal->entries[i];
        if (strcmp(sv_gpu_model(s), je->gpu_model) != 0) {
            other_gpu++;
            snprintf(other_model, sizeof other_model, "%s", je->gpu_model);
            continue;
        }
        take_entry(s, index, je, &other_build);
    }
    size_t taken = settle_slots(s);
    for (size_t k = 0; k < s->n_slots; k++)
        free(index[k].key);
    free(index);
    s->resumed = (int)taken;
    if (!s->o->request.quiet)
        fprintf(stderr, "kbench: --resume: %zu of %zu points were finished already.\n", taken,
                s->n_slots);
    /* Points the journal holds that do not count here are named, so that
       a resume on another machine or after a rebuild is no surprise. */
    if (other_gpu)
        fprintf(stderr,
                "kbench: --resume: %zu journaled point%s ran on another GPU model (%s, this "
                "run has %s) and run%s again.\n",
                other_gpu, other_gpu == 1 ? "" : "s", other_model, sv_gpu_model(s),
                other_gpu == 1 ? "s" : "");
    if (other_build)
        fprintf(stderr,
                "kbench: --resume: %zu journaled point%s came from another build of %s "
                "plugin and run%s again.\n",
                other_build, other_build == 1 ? "" : "s", other_build == 1 ? "its" : "their",
                other_build == 1 ? "s" : "");
}
