/* report_history.c -- see report_history.h. */
#include "report_history.h"

#include <stdlib.h>
#include <string.h>

int kbc_report_history_open(const char *db, kbc_history **h, kbc_diag *d)
{
    char *path = kbc_history_path(db, d);
    if (!path)
        return KBC_EXIT_USAGE;
    int rc = kbc_history_open(path, 0, h, d);
    free(path);
    return rc;
}

void kbc_report_history_row(void *ctx, const kbc_record *r, const char *gpu,
                            kbc_html_history *out)
{
    kbc_history *h = ctx;
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    char *key = kbc_xmalloc(need);
    kbc_record_key(r, key, need);
    kbc_diag d;
    kbc_hist_series *s = NULL;
    size_t ns = 0;
    /* A row the database cannot answer for has no history: the report
       shows "-" there rather than failing. */
    if (kbc_history_series(h, key, &s, &ns, &d) != 0)
        ns = 0;
    long best = -1;
    for (size_t i = 0; i < ns; i++) {
        const kbc_hist_testbed *t = &s[i].testbed;
        /* The same model, and the same card where both name theirs. */
        if (strcmp(t->gpu, gpu ? gpu : "none") != 0 ||
            (r->gpu_uuid[0] && t->gpu_uuid[0] && strcmp(r->gpu_uuid, t->gpu_uuid) != 0))
            continue;
        if (best < 0 || s[i].n_points > s[best].n_points)
            best = (long)i;
    }
    kbc_hist_point *p = NULL;
    size_t np = 0;
    if (best >= 0 && kbc_history_points(h, key, s[best].testbed.id, &p, &np, &d) != 0)
        np = 0;
    if (np > 0) {
        out->median = kbc_xcalloc(np, sizeof *out->median);
        for (size_t i = 0; i < np; i++)
            out->median[i] = p[i].median;
        out->n = np;
        kbc_hist_step *st = NULL;
        size_t n_st = kbc_history_steps(p, np, &st);
        out->steps = kbc_xcalloc(n_st ? n_st : 1, sizeof *out->steps);
        for (size_t k = 0; k < n_st; k++) {
            if (st[k].lone || st[k].at >= np)
                continue;
            kbc_html_step *o = &out->steps[out->n_steps++];
            o->at = st[k].at;
            o->change = st[k].change;
            snprintf(o->commit, sizeof o->commit, "%s", p[st[k].at].commit);
        }
        free(st);
    }
    free(p);
    kbc_hist_series_free(s, ns);
    free(key);
}
