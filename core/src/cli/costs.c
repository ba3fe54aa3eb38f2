/* costs.c -- see costs.h. */
#define _GNU_SOURCE
#include "costs.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "history.h"
#include "input.h"
#include "point.h"
#include "record_json.h"
#include "results_read.h"

/* The history's runs read at most, newest first (those of the same plan
   before the others). */
#define MAX_HISTORY_FILES 50

/* One row the plan will make: its key, its point, and the wall_s found. */
typedef struct want {
    char *key;
    uint32_t exp;
    uint64_t point;
    double wall;
} want;

typedef struct wants {
    want *w;
    size_t n, found;
} wants;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const want *)a)->key, ((const want *)b)->key);
}

/* Every row of the plan's points (a variant whose configuration starts
   there), by key. */
static void wants_make(const kbc_plan *plan, wants *ws)
{
    size_t cap = 64;
    ws->w = kbc_xmalloc(cap * sizeof *ws->w);
    ws->n = ws->found = 0;
    kbc_record r;
    char key[4096];
    for (size_t x = 0; x < plan->n; x++) {
        const kbc_experiment *e = &plan->exps[x];
        const kb_plugin *d = e->plugin->desc;
        kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
        for (uint64_t p = 0; p < e->n_points; p++) {
            kbc_experiment_point(e, p, values);
            for (uint32_t k = 0; k < e->n_variants; k++) {
                uint64_t pts;
                if (!kbc_point_first_of(e, p, e->variants[k], &pts, NULL, 0))
                    continue;
                kbc_record_identify(&r, e, p, values, e->variants[k]);
                kbc_record_key(&r, key, sizeof key);
                if (ws->n == cap)
                    ws->w = kbc_xrealloc(ws->w, (cap *= 2) * sizeof *ws->w);
                ws->w[ws->n++] = (want){kbc_xstrdup(key), (uint32_t)x, p, NAN};
            }
        }
        free(values);
    }
    qsort(ws->w, ws->n, sizeof *ws->w, by_key);
}

static void wants_free(wants *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        free(ws->w[i].key);
    free(ws->w);
}

/* A row read from an earlier run: its wall_s, where the plan wants its key
   and has none yet (the newest source comes first). */
static void take(wants *ws, const kbc_record *r)
{
    if (!isfinite(r->wall_s) || r->wall_s < 0)
        return;
    char key[4096];
    kbc_record_key(r, key, sizeof key);
    want k = {.key = key};
    want *w = bsearch(&k, ws->w, ws->n, sizeof *ws->w, by_key);
    if (w && !isfinite(w->wall)) {
        w->wall = r->wall_s;
        ws->found++;
    }
}

static int regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The rows of a journal's entries (a line that is not one, such as the
   header or a line cut by a kill, is passed over).  Returns 0, or -1 when
   the file cannot be read. */
static int from_journal(const char *path, wants *ws)
{
    /* A journal is a user's file: a regular one of at most
       KBC_INPUT_DATA_MAX (a FIFO or /dev/zero in its place is no journal). */
    char refused[200];
    FILE *f = kbc_input_fopen(path, KBC_INPUT_DATA_MAX, refused, sizeof refused);
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        json_error_t je;
        json_t *o = json_loadb(line, (size_t)len, 0, &je);
        const json_t *rows = o ? json_object_get(o, "rows") : NULL;
        size_t i;
        const json_t *row;
        json_array_foreach(rows, i, row)
        {
            kbc_record r;
            char why[700];
            if (kbc_record_from_json(row, &r, why, sizeof why) == 0) {
                take(ws, &r);
                kbc_record_free(&r);
            }
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
    return 0;
}

/* The rows of a results.json.  Returns 0, or -1 with d set. */
static int from_results(const char *path, wants *ws, kbc_diag *d)
{
    if (!regular_file(path)) {
        kbc_diag_set(d, "%s is not a file", path);
        return -1;
    }
    kbc_record *recs;
    size_t n;
    if (kbc_results_read(path, &recs, &n, d) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        take(ws, &recs[i]);
    kbc_records_free(recs, n);
    return 0;
}

/* FROM a run's folder (its journal, else its results.json) or a
   results.json. */
static int from_run(const char *from, wants *ws, kbc_diag *d)
{
    struct stat st;
    if (stat(from, &st) != 0) {
        kbc_diag_set(d, "--costs: '%s' does not exist; give the output folder of an earlier "
                        "run of the plan (-o DIR), or history",
                     from);
        return KBC_EXIT_USAGE;
    }
    if (S_ISDIR(st.st_mode)) {
        char *j = kbc_xasprintf("%s/journal.jsonl", from);
        int ok = from_journal(j, ws) == 0;
        free(j);
        if (ok)
            return 0;
    }
    char *r = kbc_results_path(from);
    kbc_diag rd = {{0}};
    int rc = from_results(r, ws, &rd);
    free(r);
    if (rc != 0) {
        kbc_diag_set(d, "--costs: '%s' holds no run to take costs from: no readable "
                        "journal.jsonl or results.json (%s)",
                     from, rd.msg);
        return KBC_EXIT_USAGE;
    }
    return 0;
}

/* The history's runs, those of the same plan first, newest first within
   each, until every row is found. */
static int from_history(const kbc_plan *plan, const char *db, wants *ws, kbc_diag *d)
{
    char *path = kbc_history_path(db, d);
    if (!path)
        return KBC_EXIT_USAGE;
    kbc_history *h;
    int code = kbc_history_open(path, 0, &h, d);
    free(path);
    if (code)
        return code;
    kbc_hist_run *runs;
    size_t n;
    code = kbc_history_runs(h, &runs, &n, d);
    kbc_history_close(h);
    if (code)
        return code;
    char hash[65];
    kbc_plan_hash(plan, hash);
    size_t read = 0;
    for (int same = 1; same >= 0; same--)
        for (size_t i = 0; i < n && ws->found < ws->n && read < MAX_HISTORY_FILES; i++) {
            if ((strcmp(runs[i].plan_hash, hash) == 0) != same)
                continue;
            kbc_diag ignored = {{0}};
            read += from_results(runs[i].path, ws, &ignored) == 0;
        }
    free(runs);
    return 0;
}

int kbc_costs_load(const kbc_plan *plan, const char *from, const char *history_db, kbc_costs *c,
                   kbc_diag *d)
{
    memset(c, 0, sizeof *c);
    wants ws;
    wants_make(plan, &ws);
    int code = strcmp(from, "history") == 0 ? from_history(plan, history_db, &ws, d)
                                             : from_run(from, &ws, d);
    if (code) {
        wants_free(&ws);
        return code;
    }
    snprintf(c->from, sizeof c->from, "%s", from);
    c->n_exps = plan->n;
    c->seconds = kbc_xcalloc(plan->n ? plan->n : 1, sizeof *c->seconds);
    for (size_t x = 0; x < plan->n; x++) {
        uint64_t np = plan->exps[x].n_points;
        c->seconds[x] = kbc_xmalloc((np ? np : 1) * sizeof **c->seconds);
        for (uint64_t p = 0; p < np; p++)
            c->seconds[x][p] = 0.0;
    }
    /* A point is measured when every row it makes was found. */
    for (size_t i = 0; i < ws.n; i++) {
        double *s = &c->seconds[ws.w[i].exp][ws.w[i].point];
        *s += ws.w[i].wall; /* NaN for a row not found spoils the point */
    }
    size_t n_jobs;
    kbc_job *jobs = kbc_plan_jobs(plan, &n_jobs);
    for (size_t j = 0; j < n_jobs; j++)
        c->measured += isfinite(c->seconds[jobs[j].exp][jobs[j].point]);
    free(jobs);
    wants_free(&ws);
    return 0;
}
