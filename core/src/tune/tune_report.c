/* tune_report.c -- kbench tune's outputs (tune.h): the table, tried.csv,
   best.ini, best.json, trace.csv and the trace's plot. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "value.h"
#include "text.h"
#include "tune_internal.h"
#include "util.h"

/* Rows shown per problem on stdout (all of them go to tried.csv). */
#define TABLE_ROWS 25

/* A candidate's time, "1.23 ms"; "-" when it has none (0: not measured). */
static const char *fmt_time(double s, char *buf, size_t n)
{
    return kbc_human_seconds(s > 0 ? s : NAN, buf, n);
}

/* What a row is ranked by: the objective's value (kbc_tune_value) of the
   full run where it passed, else of the screening; *tier 0 (full), 1
   (screening), 2 (energy and edp: a screening, which has no energy, ranked
   by its time after every row with energy) or 3 (nothing: NaN). */
static double rank_value(const tune_exp *x, const tune_row *r, int *tier)
{
    if (r->full_outcome == KBC_PASS && r->full > 0) {
        double v = kbc_tune_value(x, r->full, r->rate_full, r->j_full);
        if (!isnan(v)) {
            *tier = 0;
            return v;
        }
    }
    if (!r->library && r->outcome == KBC_PASS && r->screen > 0) {
        double v = kbc_tune_value(x, r->screen, r->rate_screen, r->j_screen);
        if (!isnan(v)) {
            *tier = 1;
            return v;
        }
        if (kbc_tune_objective_energy(x->objective)) {
            *tier = 2;
            return r->screen;
        }
    }
    *tier = 3;
    return NAN;
}

/* A value of the objective as the table shows it: "1.23 ms", "45.6
   GFLOP/s", "3.41 mJ", "1.2e-07 J*s"; "-" for none. */
static const char *fmt_value(const tune_exp *x, double v, char *buf, size_t n)
{
    if (!isfinite(v) || !(v > 0))
        snprintf(buf, n, "-");
    else if (x->objective == TUNE_RATE)
        snprintf(buf, n, "%.4g %s", v, x->rate_unit ? x->rate_unit : "");
    else if (x->objective == TUNE_ENERGY)
        kbc_human_joules(v, buf, n);
    else if (x->objective == TUNE_EDP)
        snprintf(buf, n, "%.4g J*s", v);
    else
        kbc_human_seconds(v, buf, n);
    return buf;
}

/* A row's joules per run: the full run's, else the screening's. */
static double joules_of(const tune_row *r)
{
    return r->full_outcome == KBC_PASS && isfinite(r->j_full) ? r->j_full : r->j_screen;
}

/* The tune whose rows by_rank compares (qsort has no context). */
static const tune *sorting;

static int by_rank(const void *pa, const void *pb)
{
    const tune_row *a = &sorting->rows[*(const size_t *)pa];
    const tune_row *b = &sorting->rows[*(const size_t *)pb];
    const tune_exp *x = &sorting->exps[sorting->probs[a->prob].te];
    int ta, tb;
    double va = rank_value(x, a, &ta), vb = rank_value(x, b, &tb);
    /* A row measured in full ranks with the screened ones by its value;
       then (energy and edp) the rows with a time only, by their time;
       rows with no value go last, invalid ones after the failed. */
    int ga = ta <= 1 ? 0 : ta == 2 ? 1 : a->outcome == KBC_INVALID ? 3 : 2;
    int gb = tb <= 1 ? 0 : tb == 2 ? 1 : b->outcome == KBC_INVALID ? 3 : 2;
    if (ga != gb)
        return ga - gb;
    if (ga == 0 && va != vb)
        return kbc_tune_better(x, va, vb) ? -1 : 1;
    if (ga == 1 && va != vb)
        return va < vb ? -1 : 1;
    if (ga == 0 && ta != tb)
        return ta - tb;
    return a->eval - b->eval;
}

/* The rows of problem i, ranked; *n of them (malloc'd). */
static size_t *ranked(const tune *t, size_t i, size_t *n)
{
    size_t *idx = kbc_xmalloc((t->n_rows ? t->n_rows : 1) * sizeof *idx);
    *n = 0;
    for (size_t r = 0; r < t->n_rows; r++)
        if (t->rows[r].prob == i)
            idx[(*n)++] = r;
    sorting = t;
    qsort(idx, *n, sizeof *idx, by_rank);
    return idx;
}

/* The best candidate row of a problem (not a library one) with a value
   of the objective, or NULL. */
static const tune_row *best_row(const tune *t, const size_t *idx, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const tune_row *r = &t->rows[idx[k]];
        int tier;
        rank_value(&t->exps[t->probs[r->prob].te], r, &tier);
        if (!r->library && tier <= 1)
            return r;
    }
    return NULL;
}

int kbc_tune_has_best(const tune *t, size_t i)
{
    size_t n;
    size_t *idx = ranked(t, i, &n);
    int has = best_row(t, idx, n) != NULL;
    free(idx);
    return has;
}

/* The first library row with a value of the objective, or NULL. */
static const tune_row *library_row(const tune *t, const size_t *idx, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const tune_row *r = &t->rows[idx[k]];
        int tier;
        if (r->library && r->full_outcome == KBC_PASS &&
            !isnan(rank_value(&t->exps[t->probs[r->prob].te], r, &tier)) && tier == 0)
            return r;
    }
    return NULL;
}

static const char *fmt_rate(double v, const char *unit, char *buf, size_t n)
{
    if (!(v > 0) || !isfinite(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.4g %s", v, unit ? unit : "");
    return buf;
}

static void print_problem(tune *t, size_t i, const size_t *idx, size_t n)
{
    FILE *f = t->out;
    const tune_problem *p = &t->probs[i];
    const tune_exp *x = &t->exps[p->te];
    const kbc_experiment *e = &t->full.exps[x->exp];
    fprintf(f, "\n[%s] %s, %s: %s, %llu evaluation%s", kbc_text_visible(e->name),
            kbc_text_visible(p->name), e->plugin->desc->name, kbc_strategy_name(x->strategy),
            (unsigned long long)p->evaluations, p->evaluations == 1 ? "" : "s");
    if (p->cached || p->missing) {
        fprintf(f, " (");
        if (p->cached)
            fprintf(f, "%llu from the cache%s", (unsigned long long)p->cached,
                    p->missing ? ", " : "");
        if (p->missing)
            fprintf(f, "%llu not in the journal", (unsigned long long)p->missing);
        fprintf(f, ")");
    }
    fprintf(f, " of %llu allowed, %llu invalid, %llu failed; %.1f s\n",
            (unsigned long long)kbc_search_allowed(p->search), (unsigned long long)p->invalid,
            (unsigned long long)p->failed, p->wall);
    int w = 9;
    for (size_t k = 0; k < n && k < TABLE_ROWS; k++) {
        int len = (int)strlen(t->rows[idx[k]].text);
        if (len > w)
            w = len;
    }
    /* Under energy and edp, a column of joules per run (none in the
       screening, which runs without energy). */
    int energy = kbc_tune_objective_energy(x->objective);
    fprintf(f, "  %4s  %-*s  %-8s  %10s  %10s  %6s  %14s%s\n", "rank", w, "candidate", "status",
            "screen", "full", "noise", "rate", energy ? "       J/run" : "");
    size_t shown = 0, invalid = 0;
    const char *first_invalid = NULL;
    int rank = 0;
    for (size_t k = 0; k < n; k++) {
        const tune_row *r = &t->rows[idx[k]];
        if (r->outcome == KBC_INVALID) {
            if (!invalid++)
                first_invalid = r->reason;
            continue;
        }
        int tier;
        int ranked_row = !r->library && !isnan(rank_value(x, r, &tier));
        rank += !r->library;
        if (shown >= TABLE_ROWS && !r->library)
            continue;
        shown++;
        char a[32], b[32], c[32], jr[48] = "", rk[16];
        if (energy) {
            char j[32];
            snprintf(jr, sizeof jr, "  %10s", kbc_human_joules(joules_of(r), j, sizeof j));
        }
        double rate = r->full_outcome == KBC_PASS ? r->rate_full : r->rate_screen;
        snprintf(rk, sizeof rk, "%d", rank);
        if (!ranked_row)
            snprintf(rk, sizeof rk, "-");
        const char *status = r->library ? "library"
                             : r->full_outcome >= 0 && r->full_outcome != KBC_PASS
                                 ? kbc_outcome_name(r->full_outcome)
                                 : kbc_outcome_name(r->outcome);
        char noise[16] = "-";
        if (r->noise >= 0 && isfinite(r->noise))
            snprintf(noise, sizeof noise, "%.1f%%", r->noise * 100);
        fprintf(f, "  %4s  %-*s  %-8s  %10s  %10s  %6s  %14s%s%s\n", r->library ? "-" : rk, w,
                kbc_text_visible(r->text), status, fmt_time(r->screen, a, sizeof a),
                fmt_time(r->full, b, sizeof b), noise, fmt_rate(rate, x->rate_unit, c, sizeof c),
                jr, r->cached_screen || r->cached_full ? "  cached" : "");
        if (r->reason[0] && r->outcome != KBC_PASS)
            fprintf(f, "        %s: %s\n", kbc_outcome_name(r->outcome),
                    kbc_text_visible(r->reason));
    }
    if (rank > TABLE_ROWS)
        fprintf(f, "  ... %d more candidates in %s/tried.csv\n", rank - TABLE_ROWS,
                t->o->out_dir);
    if (invalid)
        fprintf(f, "  %zu invalid (refused by plan()), the first: %s\n", invalid,
                kbc_text_visible(first_invalid));
    const tune_row *best = best_row(t, idx, n), *lib = library_row(t, idx, n);
    if (!best) {
        /* Under energy and edp, candidates may have passed without their
           energy measured: the first of them says why. */
        const tune_row *why = NULL;
        for (size_t k = 0; k < n && energy && !why; k++) {
            const tune_row *r = &t->rows[idx[k]];
            if (r->full_outcome == KBC_PASS && r->energy_why[0])
                why = r;
        }
        if (why)
            fprintf(f, "  no candidate has its energy measured, so none ranks by %s; the "
                       "first, %s: %s\n",
                    kbc_tune_objective_name(x->objective), kbc_text_visible(why->text),
                    kbc_text_visible(why->energy_why));
        else
            fprintf(f, "  no candidate passed\n");
        return;
    }
    int tier;
    double bv = rank_value(x, best, &tier);
    char a[32], b[32], c[32];
    fprintf(f, "  best: %s: %s%s", kbc_text_visible(best->text), fmt_value(x, bv, a, sizeof a),
            tier ? " (screening only)" : "");
    /* The winner's row carries both: its time beside its energy. */
    if (energy)
        fprintf(f, " (%s, %s per run)", fmt_time(tier ? best->screen : best->full, b, sizeof b),
                kbc_human_joules(joules_of(best), c, sizeof c));
    if (lib) {
        double lv = rank_value(x, lib, &tier);
        fprintf(f, "; the library (%s) %s: %.2fx",
                t->full.exps[x->exp].plugin->desc->variants[lib->variant].name,
                fmt_value(x, lv, b, sizeof b), x->objective == TUNE_RATE ? bv / lv : lv / bv);
    }
    fprintf(f, "\n");
}

static int write_tried(tune *t, char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "experiment,problem,rank,evaluation,strategy,candidate,library,status,reason,"
               "screen_s,full_s,noise,rate,cached,j_per_run,edp_js\n");
    for (size_t i = 0; i < t->n_probs; i++) {
        size_t n;
        size_t *idx = ranked(t, i, &n);
        const tune_exp *x = &t->exps[t->probs[i].te];
        int rank = 0;
        for (size_t k = 0; k < n; k++) {
            const tune_row *r = &t->rows[idx[k]];
            rank += !r->library && r->outcome != KBC_INVALID;
            kbc_text_csv(f, t->full.exps[x->exp].name);
            fputc(',', f);
            kbc_text_csv(f, t->probs[i].name);
            fprintf(f, ",%d,%d,%s,", r->library || r->outcome == KBC_INVALID ? 0 : rank, r->eval,
                    r->library ? "" : kbc_strategy_name(r->arm));
            kbc_text_csv(f, r->text);
            fprintf(f, ",%d,%s,", r->library,
                    kbc_outcome_name(r->full_outcome >= 0 ? r->full_outcome : r->outcome));
            kbc_text_csv(f, r->reason);
            double rate = r->full_outcome == KBC_PASS ? r->rate_full : r->rate_screen;
            double j = joules_of(r), s = r->full_outcome == KBC_PASS ? r->full : r->screen;
            fprintf(f, ",%.9g,%.9g,%.4g,%.6g,%d,%.9g,%.9g\n", r->screen, r->full, r->noise, rate,
                    r->cached_screen || r->cached_full, j, j * s);
        }
        free(idx);
    }
    int bad = ferror(f);
    return fclose(f) != 0 || bad ? -1 : 0;
}

/* The plugin folders a rerun needs: --plugin-path and the folders the
   experiments' plugins came from, as absolute paths, each once. */
static void plugin_paths(const tune *t, FILE *f)
{
    size_t n = (size_t)t->o->n_plugin_paths + t->full.n;
    char **seen = kbc_xcalloc(n ? n : 1, sizeof *seen);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char dir[PATH_MAX], abs[PATH_MAX];
        if (i < (size_t)t->o->n_plugin_paths) {
            snprintf(dir, sizeof dir, "%s", t->o->plugin_paths[i]);
        } else {
            const char *p = t->full.exps[i - (size_t)t->o->n_plugin_paths].plugin->path;
            const char *slash = p ? strrchr(p, '/') : NULL;
            if (!slash)
                continue;
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - p), p);
        }
        const char *path = realpath(dir, abs) ? abs : dir;
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++)
            dup = strcmp(seen[j], path) == 0;
        if (!dup)
            seen[k++] = kbc_xstrdup(path);
    }
    for (size_t j = 0; j < k; j++) {
        fprintf(f, "%s%s", j ? ":" : "plugin_path = ", seen[j]);
        free(seen[j]);
    }
    if (k)
        fputc('\n', f);
    free(seen);
}

static int write_best_ini(tune *t, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "; Written by kbench tune from %s: the best candidate of each problem with its\n"
               "; library, measured again by: kbench run %s\n\n[global]\n",
            t->o->ini_path, path);
    plugin_paths(t, f);
    size_t per_exp[256] = {0};
    for (size_t i = 0; i < t->n_probs; i++) {
        size_t n;
        size_t *idx = ranked(t, i, &n);
        const tune_row *best = best_row(t, idx, n);
        const tune_problem *p = &t->probs[i];
        const tune_exp *x = &t->exps[p->te];
        const kbc_experiment *e = &t->full.exps[x->exp];
        const kb_plugin *d = e->plugin->desc;
        size_t count = 0;
        for (size_t j = 0; j < t->n_probs; j++)
            count += t->probs[j].te == p->te;
        per_exp[p->te % 256]++;
        if (!best) {
            fprintf(f, "\n; [%s] %s: no candidate passed\n", e->name, p->name);
            free(idx);
            continue;
        }
        if (count > 1)
            fprintf(f, "\n[%s-best-%zu]\n", e->name, per_exp[p->te % 256]);
        else
            fprintf(f, "\n[%s-best]\n", e->name);
        fprintf(f, "description = kbench tune (%s) of [%s], %s: the best of %llu evaluations\n",
                kbc_strategy_name(x->strategy), e->name, p->name,
                (unsigned long long)p->evaluations);
        fprintf(f, "plugin = %s\nvariants = %s", d->name, d->variants[best->variant].name);
        for (size_t l = 0; l < x->n_libs; l++)
            fprintf(f, ", %s", d->variants[x->libs[l]].name);
        fprintf(f, "\n");
        if (x->n_libs)
            fprintf(f, "reference = %s\n", d->variants[x->libs[0]].name);
        uint32_t v;
        uint64_t point = kbc_tune_point(t, p, best->cand, &v);
        kb_value values[KB_MAX_PARAMS];
        kbc_experiment_point(e, point, values);
        for (uint32_t k = 0; k < d->n_params; k++) {
            char val[64];
            fprintf(f, "%s = %s\n", d->params[k].name,
                    kbc_value_format(&d->params[k], values[k], val, sizeof val));
        }
        const kbc_measure *m = &e->measure;
        fprintf(f, "warmup = %u\nruns = %u\nbudget = %g\nseed = %llu\ncache = %s\n", m->warmup,
                m->runs, m->budget_s, (unsigned long long)m->seed,
                m->cache_cold ? "cold" : "hot");
        if (m->include_copies)
            fprintf(f, "include_copies = true\n");
        if (m->cpu_threads > 0)
            fprintf(f, "cpu_threads = %d\n", m->cpu_threads);
        if (m->noise_pct > 0)
            fprintf(f, "noise = %g\nmin_runs = %u\nmax_runs = %u\nmin_time = %g\n", m->noise_pct,
                    m->min_runs, m->max_runs, m->min_time_s);
        if (m->batch == KBC_BATCH_AUTO)
            fprintf(f, "batch = auto\n");
        else if (m->batch >= 2)
            fprintf(f, "batch = %d\n", m->batch);
        /* The rerun measures the energy as the tuning did. */
        if (m->energy != KBC_ENERGY_OFF)
            fprintf(f, "energy = %s\nenergy_window = %g\nenergy_windows = %u\n",
                    kbc_energy_requested_name(m->energy), m->energy_window_s,
                    m->energy_windows);
        free(idx);
    }
    int bad = ferror(f);
    return fclose(f) != 0 || bad ? -1 : 0;
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static int write_best_json(tune *t, const char *path)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "kbench_tune", json_integer(1));
    json_object_set_new(doc, "config_file", json_string(t->o->ini_path));
    json_object_set_new(doc, "gpu_model", json_string(t->gpu_model));
    json_t *probs = json_array();
    for (size_t i = 0; i < t->n_probs; i++) {
        size_t n;
        size_t *idx = ranked(t, i, &n);
        const tune_problem *p = &t->probs[i];
        const tune_exp *x = &t->exps[p->te];
        const kbc_experiment *e = &t->full.exps[x->exp];
        const kb_plugin *d = e->plugin->desc;
        json_t *o = json_object();
        json_object_set_new(o, "experiment", json_string(e->name));
        json_object_set_new(o, "plugin", json_string(d->name));
        json_object_set_new(o, "problem", json_string(p->name));
        json_object_set_new(o, "strategy", json_string(kbc_strategy_name(x->strategy)));
        json_object_set_new(o, "objective", json_string(kbc_tune_objective_name(x->objective)));
        json_object_set_new(o, "evaluations", json_integer((json_int_t)p->evaluations));
        json_object_set_new(o, "cached", json_integer((json_int_t)p->cached));
        if (t->o->simulate)
            json_object_set_new(o, "not_in_journal", json_integer((json_int_t)p->missing));
        json_object_set_new(o, "invalid", json_integer((json_int_t)p->invalid));
        json_object_set_new(o, "failed", json_integer((json_int_t)p->failed));
        json_object_set_new(o, "allowed", json_integer((json_int_t)kbc_search_allowed(p->search)));
        json_object_set_new(o, "valid", json_integer((json_int_t)p->valid));
        json_object_set_new(o, "space", json_integer((json_int_t)kbc_search_size(p->search)));
        json_object_set_new(o, "wall_s", json_real(p->wall));
        const tune_row *best = best_row(t, idx, n);
        if (best) {
            json_t *b = json_object();
            json_object_set_new(b, "candidate", json_string(best->text));
            json_object_set_new(b, "variant", json_string(d->variants[best->variant].name));
            uint32_t v;
            kb_value values[KB_MAX_PARAMS];
            kbc_experiment_point(e, kbc_tune_point(t, p, best->cand, &v), values);
            json_t *params = json_object();
            for (uint32_t k = 0; k < d->n_params; k++) {
                char val[64];
                json_object_set_new(params, d->params[k].name,
                                    json_string(kbc_value_format(&d->params[k], values[k], val,
                                                                 sizeof val)));
            }
            json_object_set_new(b, "params", params);
            json_object_set_new(b, "evaluation", json_integer(best->eval));
            json_object_set_new(b, "screen_median_s", num(best->screen));
            json_object_set_new(b, "median_s", num(best->full));
            json_object_set_new(b, "noise", num(best->noise));
            json_object_set_new(b, "rate", num(best->full_outcome == KBC_PASS ? best->rate_full
                                                                             : best->rate_screen));
            json_object_set_new(b, "rate_unit", x->rate_unit ? json_string(x->rate_unit)
                                                             : json_null());
            /* Both the time and the energy: the joules per run of its
               full measurement (else its screening's; null without
               energy) and the energy-delay product. */
            double j = joules_of(best);
            double s = best->full_outcome == KBC_PASS ? best->full : best->screen;
            json_object_set_new(b, "j_per_run", num(j));
            json_object_set_new(b, "edp_js", num(j * s));
            json_object_set_new(o, "best", b);
        } else {
            json_object_set_new(o, "best", json_null());
        }
        json_t *libs = json_array();
        for (size_t k = 0; k < n; k++) {
            const tune_row *r = &t->rows[idx[k]];
            if (!r->library)
                continue;
            json_t *l = json_object();
            json_object_set_new(l, "variant", json_string(d->variants[r->variant].name));
            json_object_set_new(l, "status", json_string(kbc_outcome_name(r->outcome)));
            json_object_set_new(l, "median_s", num(r->full));
            json_object_set_new(l, "rate", num(r->rate_full));
            json_object_set_new(l, "j_per_run", num(r->j_full));
            json_array_append_new(libs, l);
        }
        json_object_set_new(o, "library", libs);
        json_array_append_new(probs, o);
        free(idx);
    }
    json_object_set_new(doc, "problems", probs);
    int rc = json_dump_file(doc, path, JSON_INDENT(2) | JSON_REAL_PRECISION(9));
    json_decref(doc);
    return rc;
}

/* Whether the search of x ranked its candidates by their time where the
   objective is energy or edp: the screening runs without energy. */
static int screened_by_time(const tune_exp *x)
{
    return kbc_tune_objective_energy(x->objective) && x->screen > 0;
}

/* trace.csv and one trace plot per experiment. */
static int write_trace(tune *t, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "experiment,problem,evaluation,strategy,candidate,status,value,best_so_far,"
               "cached\n");
    int rc = 0;
    for (size_t te = 0; te < t->n_exps; te++) {
        const tune_exp *x = &t->exps[te];
        const kbc_experiment *e = &t->full.exps[x->exp];
        size_t ns = 0;
        const char **names = kbc_xcalloc(t->n_probs, sizeof *names);
        double **vals = kbc_xcalloc(t->n_probs, sizeof *vals);
        double **bests = kbc_xcalloc(t->n_probs, sizeof *bests);
        size_t *lens = kbc_xcalloc(t->n_probs, sizeof *lens);
        for (size_t i = 0; i < t->n_probs; i++) {
            const tune_problem *p = &t->probs[i];
            if (p->te != te)
                continue;
            names[ns] = p->name;
            vals[ns] = kbc_xmalloc((p->evaluations + 1) * sizeof **vals);
            bests[ns] = kbc_xmalloc((p->evaluations + 1) * sizeof **bests);
            double best = NAN;
            for (size_t r = 0; r < t->n_rows; r++) {
                const tune_row *row = &t->rows[r];
                if (row->prob != i || row->library || row->eval <= 0)
                    continue;
                /* What the search saw: the objective's value of the
                   screening (its time under energy and edp, the
                   screening having no energy). */
                double v = row->outcome != KBC_PASS ? NAN
                           : screened_by_time(x)    ? row->screen
                                                    : kbc_tune_value(x, row->screen,
                                                                     row->rate_screen,
                                                                     row->j_screen);
                if (!isnan(v) && (isnan(best) || (screened_by_time(x) ? v < best
                                                                      : kbc_tune_better(x, v,
                                                                                        best))))
                    best = v;
                kbc_text_csv(f, e->name);
                fputc(',', f);
                kbc_text_csv(f, p->name);
                fprintf(f, ",%d,%s,", row->eval, kbc_strategy_name(row->arm));
                kbc_text_csv(f, row->text);
                fprintf(f, ",%s,%.9g,%.9g,%d\n", kbc_outcome_name(row->outcome), v, best,
                        row->cached_screen);
                if (lens[ns] < p->evaluations) {
                    vals[ns][lens[ns]] = v;
                    bests[ns][lens[ns]++] = best;
                }
            }
            ns++;
        }
        /* The stem: trace-EXPERIMENT with only letters, digits, - _ . */
        char stem[200];
        snprintf(stem, sizeof stem, "trace-%s", e->name);
        for (char *q = stem; *q; q++)
            if (!(isalnum((unsigned char)*q) || *q == '-' || *q == '_' || *q == '.'))
                *q = '_';
        char title[600];
        snprintf(title, sizeof title, "kbench tune [%s] (%s): each evaluation and the best so far",
                 e->name, kbc_strategy_name(x->strategy));
        char ylabel[64];
        snprintf(ylabel, sizeof ylabel, "%s",
                 screened_by_time(x)            ? "median time (s), the screening's"
                 : x->objective == TUNE_RATE   ? (x->rate_unit ? x->rate_unit : "rate")
                 : x->objective == TUNE_ENERGY ? "joules per run"
                 : x->objective == TUNE_EDP    ? "energy-delay product (J*s)"
                                               : "median time (s)");
        FILE *sink = fopen("/dev/null", "w");
        int pr = kbc_plot_trace(t->o->out_dir, stem, title, ylabel, names,
                                (const double *const *)vals, (const double *const *)bests, lens,
                                ns, sink ? sink : stderr);
        if (sink)
            fclose(sink);
        if (pr == -2)
            fprintf(t->err, "kbench: gnuplot could not draw %s/%s.gp; the script and %s "
                            "hold the trace.\n",
                    t->o->out_dir, stem, path);
        else if (pr != 0)
            fprintf(t->err, "kbench: cannot write %s/%s.gp: %s.\n", t->o->out_dir, stem,
                    strerror(errno));
        if (pr != 0)
            rc = -1;
        for (size_t s = 0; s < ns; s++) {
            free(vals[s]);
            free(bests[s]);
        }
        free(names);
        free(vals);
        free(bests);
        free(lens);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return -1;
    return rc ? -2 : 0; /* the plot's failure is said already */
}

int kbc_tune_report(tune *t)
{
    uint64_t cached = 0;
    for (size_t i = 0; i < t->n_probs; i++) {
        size_t n;
        size_t *idx = ranked(t, i, &n);
        print_problem(t, i, idx, n);
        cached += t->probs[i].cached;
        free(idx);
    }
    fflush(t->out);
    if (cached && !t->o->simulate)
        fprintf(t->err,
                "kbench tune: %llu evaluation%s came from earlier tunings in %s (the same "
                "point, plugin build and GPU model), not measured again.\n",
                (unsigned long long)cached, cached == 1 ? "" : "s", t->o->out_dir);
    static const char *const names[] = {"tried.csv", "best.ini", "best.json", "trace.csv"};
    for (int k = 0; k < 4; k++) {
        errno = 0;
        char *path = kbc_xasprintf("%s/%s", t->o->out_dir, names[k]);
        int rc = k == 0   ? write_tried(t, path)
                 : k == 1 ? write_best_ini(t, path)
                 : k == 2 ? write_best_json(t, path)
                          : write_trace(t, path);
        if (rc == -1)
            fprintf(t->err, "kbench: cannot write %s%s%s.\n", path, errno ? ": " : "",
                    errno ? strerror(errno) : "");
        if (rc != 0) {
            free(path);
            return KBC_EXIT_SYSTEM;
        }
        free(path);
    }
    return 0;
}
