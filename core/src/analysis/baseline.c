/* baseline.c -- see baseline.h. */
#include "baseline.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct kbc_baseline {
    const kbc_record *recs;
    size_t n;
    char **keys;   /* kbc_record_key of each row       */
    size_t *order; /* the rows by key (kbc_key_order)  */
    char *matched; /* per row: a judged row had its key */
};

static char *key_of(const kbc_record *r)
{
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    char *k = kbc_xmalloc(need);
    kbc_record_key(r, k, need);
    return k;
}

kbc_baseline *kbc_baseline_new(const kbc_record *base, size_t n)
{
    kbc_baseline *b = kbc_xcalloc(1, sizeof *b);
    b->recs = base;
    b->n = n;
    b->keys = kbc_xcalloc(n ? n : 1, sizeof *b->keys);
    for (size_t i = 0; i < n; i++)
        b->keys[i] = key_of(&base[i]);
    b->order = kbc_xcalloc(n ? n : 1, sizeof *b->order);
    kbc_key_order(b->keys, n, b->order);
    b->matched = kbc_xcalloc(n ? n : 1, 1);
    return b;
}

void kbc_baseline_free(kbc_baseline *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++)
        free(b->keys[i]);
    free(b->keys);
    free(b->order);
    free(b->matched);
    free(b);
}

int kbc_baseline_matched(const kbc_baseline *b, size_t j)
{
    return j < b->n && b->matched[j];
}

const char *kbc_baseline_key(const kbc_baseline *b, size_t j)
{
    return j < b->n ? b->keys[j] : NULL;
}

size_t kbc_baseline_rows(const kbc_baseline *b)
{
    return b->n;
}

int kbc_match_energy_shown(const kbc_match *m)
{
    return m->energy_note == NULL || strcmp(m->energy_note, KBC_NOTE_NO_ENERGY) != 0;
}

/* Why the energy of base row x and new row y cannot be compared, or NULL
   when it can: both ran and have energy (kbc_record_has_energy). */
static const char *energy_why_not(const kbc_record *x, const kbc_record *y, const char *note)
{
    int ex = kbc_record_has_energy(x), ey = kbc_record_has_energy(y);
    if (!kbc_record_ran(x) || !kbc_record_ran(y))
        return ex || ey ? note : KBC_NOTE_NO_ENERGY;
    if (!ex || !ey)
        return !ex && !ey ? KBC_NOTE_NO_ENERGY : !ex ? KBC_NOTE_NO_ENERGY_BASE
                                                     : KBC_NOTE_NO_ENERGY_NEW;
    return NULL;
}

void kbc_baseline_judge(kbc_baseline *b, const kbc_record *recs, size_t n,
                        const kbc_compare_opts *o, kbc_match *out)
{
    /* The time's pairs first, then the energy's: one call judges them
       all, each as it would be alone (compare.h). */
    kbc_compare_pair *pairs = kbc_xcalloc(2 * n + 1, sizeof *pairs);
    size_t *of = kbc_xcalloc(n ? n : 1, sizeof *of); /* pair of row i, or SIZE_MAX */
    size_t *eof = kbc_xcalloc(n ? n : 1, sizeof *eof); /* its energy's pair, or SIZE_MAX */
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        kbc_match *m = &out[i];
        char *key = key_of(&recs[i]);
        m->base = kbc_key_find(b->keys, b->order, b->n, key);
        free(key);
        kbc_compare_samples(NULL, 0, NULL, 0, o, &m->change); /* untested, NaN */
        m->energy = m->change;
        m->note = NULL;
        m->energy_note = KBC_NOTE_NO_ENERGY;
        m->lost = 0;
        of[i] = eof[i] = SIZE_MAX;
        if (m->base < 0) {
            m->note = KBC_NOTE_ONLY_IN_NEW;
            continue;
        }
        b->matched[m->base] = 1;
        const kbc_record *x = &b->recs[m->base], *y = &recs[i];
        m->energy_note = energy_why_not(x, y, !kbc_record_ran(x) ? KBC_NOTE_NOT_RUN_BASE
                                                                 : KBC_NOTE_NOT_RUN_NEW);
        if (kbc_record_ran(x) && kbc_record_ran(y) &&
            (kbc_integrity_flagged(x) || kbc_integrity_flagged(y))) {
            /* Its time is not of the work it verified (docs/integrity.md):
               no verdict, and a new row that has one fails the compare. */
            m->note = kbc_integrity_flagged(y) ? KBC_NOTE_FLAGGED_NEW : KBC_NOTE_FLAGGED_BASE;
            m->lost = kbc_integrity_flagged(y);
            /* Its joules are of that run too: where a side has energy, no
               verdict on them either. */
            if (kbc_match_energy_shown(m))
                m->energy_note = m->note;
            continue;
        }
        if (kbc_record_ran(x) && kbc_record_ran(y)) {
            of[i] = np;
            pairs[np++] = (kbc_compare_pair){x->samples, x->n_samples, y->samples, y->n_samples};
            continue;
        }
        m->note = !kbc_record_ran(x) ? KBC_NOTE_NOT_RUN_BASE : KBC_NOTE_NOT_RUN_NEW;
        /* A new row that crashed or timed out is a failure of the new run,
           not a row without a verdict. */
        if (y->outcome == KBC_CRASHED || y->outcome == KBC_TIMEOUT) {
            m->note = y->outcome == KBC_CRASHED ? KBC_NOTE_CRASHED_NEW : KBC_NOTE_TIMEOUT_NEW;
            m->lost = 1;
        }
    }
    /* The energy windows' joules per run are the samples of energy. */
    for (size_t i = 0; i < n; i++) {
        if (out[i].energy_note || out[i].base < 0)
            continue;
        const kbc_rec_energy *x = &b->recs[out[i].base].energy, *y = &recs[i].energy;
        eof[i] = np;
        pairs[np++] = (kbc_compare_pair){x->window_j, x->windows, y->window_j, y->windows};
    }
    kbc_change *ch = kbc_xcalloc(np ? np : 1, sizeof *ch);
    kbc_compare_many(pairs, np, o, ch);
    for (size_t i = 0; i < n; i++) {
        if (eof[i] != SIZE_MAX) {
            out[i].energy = ch[eof[i]];
            if (out[i].energy.verdict == KBC_UNTESTED)
                out[i].energy_note = KBC_NOTE_FEW_WINDOWS;
        }
        if (of[i] == SIZE_MAX)
            continue;
        out[i].change = ch[of[i]];
        if (out[i].change.verdict == KBC_UNTESTED)
            out[i].note = pairs[of[i]].nb < 2 || pairs[of[i]].nn < 2 ? KBC_NOTE_FEW_SAMPLES
                                                                     : KBC_NOTE_ZERO_MEDIAN;
    }
    free(ch);
    free(pairs);
    free(of);
    free(eof);
}

const char *kbc_machine_difference(const char *base_gpu, const char *base_host,
                                   const char *new_gpu, const char *new_host, char *buf,
                                   size_t n)
{
    buf[0] = '\0';
    const char *bg = base_gpu && base_gpu[0] ? base_gpu : NULL;
    const char *ng = new_gpu && new_gpu[0] ? new_gpu : NULL;
    if ((bg || ng) && (!bg || !ng || strcmp(bg, ng) != 0)) {
        snprintf(buf, n, "the base ran on %s, the new run on %s", bg ? bg : "no GPU",
                 ng ? ng : "no GPU");
        return buf;
    }
    if (base_host && new_host && base_host[0] && new_host[0] && strcmp(base_host, new_host)) {
        snprintf(buf, n, "the base ran on host %s, the new run on host %s", base_host, new_host);
        return buf;
    }
    return NULL;
}
