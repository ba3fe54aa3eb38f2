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

void kbc_baseline_judge(kbc_baseline *b, const kbc_record *recs, size_t n,
                        const kbc_compare_opts *o, kbc_match *out)
{
    kbc_compare_pair *pairs = kbc_xcalloc(n ? n : 1, sizeof *pairs);
    size_t *of = kbc_xcalloc(n ? n : 1, sizeof *of); /* pair of row i, or SIZE_MAX */
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        kbc_match *m = &out[i];
        char *key = key_of(&recs[i]);
        m->base = kbc_key_find(b->keys, b->order, b->n, key);
        free(key);
        kbc_compare_samples(NULL, 0, NULL, 0, o, &m->change); /* untested, NaN */
        m->note = NULL;
        m->lost = 0;
        of[i] = SIZE_MAX;
        if (m->base < 0) {
            m->note = KBC_NOTE_ONLY_IN_NEW;
            continue;
        }
        b->matched[m->base] = 1;
        const kbc_record *x = &b->recs[m->base], *y = &recs[i];
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
    kbc_change *ch = kbc_xcalloc(np ? np : 1, sizeof *ch);
    kbc_compare_many(pairs, np, o, ch);
    for (size_t i = 0; i < n; i++) {
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
