/* tune.c -- see tune.h: the settings of each tuning experiment, its
   problems and their searches, the rounds through the supervisor (or a
   replay of a journal), the cache, and the final measurements. */
#define _GNU_SOURCE
#include "tune.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chart.h"
#include "input.h"
#include "journal.h"
#include "point.h"
#include "point_plan.h"
#include "record_json.h"
#include "shard.h"
#include "value.h"
#include "tune_internal.h"
#include "util.h"

/* The candidates one round may hand one problem's search (the exhaustive
   and random searches fill it; the others ask for fewer). */
#define ROUND_ROOM 4096
/* The candidates a round may hand a search whose budget is a duration. */
#define TIMED_ROUND_ROOM 8
/* Evaluations of a search that the budget leaves by default: a quarter
   of the allowed space (rounded down), at least this many. */
#define DEFAULT_BUDGET_MIN 4
/* Spaces up to this size have their valid candidates counted (plan() on
   each) for the default budget. */
#define VALID_COUNT_MAX 1000000

/* ---- the cache: measurements read from the journals ---- */

typedef struct measured {
    char *key;          /* kbc_record_key                       */
    char sha[65];
    char gpu[256];
    int outcome;
    double median, gbps, gflops, items, noise;
    kbc_rate rate;      /* the rate its row is judged in (chart.h)  */
    const char *unit;   /* and its unit: "GB/s", "GFLOP/s", "keys/s" */
    double joules;      /* joules per run; NaN without energy   */
    char energy_why[400]; /* why there are none, or ""          */
    char reason[700];
} measured;

typedef struct cache {
    measured *m;
    size_t n, cap;
} cache;

static void cache_add(cache *c, const kbc_record *r, const char *sha, const char *gpu)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->m = kbc_xrealloc(c->m, c->cap * sizeof *c->m);
    }
    measured *x = &c->m[c->n++];
    memset(x, 0, sizeof *x);
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    x->key = kbc_xmalloc(need);
    kbc_record_key(r, x->key, need);
    snprintf(x->sha, sizeof x->sha, "%s", sha ? sha : "");
    snprintf(x->gpu, sizeof x->gpu, "%s", gpu ? gpu : "");
    /* A row the integrity checks flagged (kept by integrity = warn) is
       never a candidate's time: it counts as failed. */
    x->outcome = kbc_integrity_flagged(r) ? KBC_FAIL : (int)r->outcome;
    x->median = r->time.n > 0 ? r->time.median : NAN;
    x->gbps = r->gbps;
    x->gflops = r->gflops;
    x->items = r->items_per_s;
    x->rate = kbc_rate_pick(r, 1);
    x->unit = x->rate == KBC_RATE_GBPS     ? "GB/s"
              : x->rate == KBC_RATE_GFLOPS ? "GFLOP/s"
                                           : kbc_rate_unit(KBC_RATE_ITEMS, r->item_name);
    x->noise = r->noise;
    x->joules = kbc_record_has_energy(r) ? r->energy.j_per_run : NAN;
    if (isnan(x->joules))
        snprintf(x->energy_why, sizeof x->energy_why, "%s",
                 r->energy.why[0] ? r->energy.why : kbc_energy_status_name((int)r->energy.status));
    snprintf(x->reason, sizeof x->reason, "%s", r->reason);
}

static void cache_free(cache *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->m[i].key);
    free(c->m);
    memset(c, 0, sizeof *c);
}

/* The latest measurement of key (with sha and gpu unless NULL). */
static const measured *cache_find(const cache *c, const char *key, const char *sha,
                                  const char *gpu)
{
    for (size_t i = c->n; i-- > 0;)
        if (strcmp(c->m[i].key, key) == 0 && (!sha || strcmp(c->m[i].sha, sha) == 0) &&
            (!gpu || strcmp(c->m[i].gpu, gpu) == 0))
            return &c->m[i];
    return NULL;
}

/* Every row of a journal file into c, read only (a line that is not an
   entry is passed over: a cut last line, the header).  Returns the rows
   read, or -1 when the file cannot be opened. */
static long cache_read(cache *c, const char *path)
{
    /* A FIFO or a device in its place is no cache (open_journal then
       refuses it with a sentence). */
    char not_read[200];
    FILE *f = kbc_input_fopen(path, KBC_INPUT_DATA_MAX, not_read, sizeof not_read);
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    long rows = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *e = json_loads(line, 0, NULL);
        const json_t *a = e ? json_object_get(e, "rows") : NULL;
        const char *sha = e ? json_string_value(json_object_get(e, "plugin_sha256")) : NULL;
        const char *gpu = e ? json_string_value(json_object_get(e, "gpu_model")) : NULL;
        size_t i;
        const json_t *row;
        if (json_is_array(a))
            json_array_foreach(a, i, row)
            {
                kbc_record r;
                char why[256];
                if (kbc_record_from_json(row, &r, why, sizeof why) != 0)
                    continue;
                cache_add(c, &r, sha, gpu);
                kbc_record_free(&r);
                rows++;
            }
        json_decref(e);
    }
    free(line);
    fclose(f);
    return rows;
}

/* ---- settings ---- */

typedef struct ctx {
    tune *t;
    const kbc_ini *ini;
    kbc_diag *d;
} ctx;

/* The entry of key for experiment section sec (its own, or [global]'s),
   and the section it is in. */
static const kbc_entry *setting(const ctx *c, const char *sec, const char *key,
                                const char **where)
{
    const kbc_section *s = kbc_ini_section(c->ini, sec);
    const kbc_entry *e = s ? kbc_section_get(s, key) : NULL;
    *where = sec;
    if (!e) {
        const kbc_section *g = kbc_ini_section(c->ini, "global");
        e = g ? kbc_section_get(g, key) : NULL;
        *where = "global";
    }
    return e;
}

static int bad_key(const ctx *c, const kbc_entry *e, const char *where, const char *fmt, ...)
    KB_PRINTF(4, 5);
static int bad_key(const ctx *c, const kbc_entry *e, const char *where, const char *fmt, ...)
{
    char what[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t len = strlen(what);
    char at[600];
    const char *end = len && (what[len - 1] == '.' || what[len - 1] == '?') ? "" : ".";
    kbc_diag_set(c->d, "%s: key '%s' in [%s]: %s%s",
                 kbc_ini_where(c->ini, e->file, e->line, at, sizeof at), e->key, where, what,
                 end);
    return -1;
}

/* Digits only, the whole text; *out is left alone otherwise. */
static int parse_count(const char *s, uint64_t *out)
{
    const char *end;
    uint64_t v;
    if (kbc_parse_digits(s, &end, &v) != 0 || *end)
        return -1;
    *out = v;
    return 0;
}

/* "90s", "500ms", "5min", "2h" (a number alone is not a duration). */
static int parse_duration(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v > 0) || !isfinite(v))
        return -1;
    while (*end == ' ')
        end++;
    double mul = strcmp(end, "s") == 0     ? 1
                 : strcmp(end, "ms") == 0  ? 1e-3
                 : strcmp(end, "min") == 0 ? 60
                 : strcmp(end, "h") == 0   ? 3600
                                           : 0;
    if (mul == 0)
        return -1;
    *out = v * mul;
    return 0;
}

/* Whether parameter k is named in the comma-separated list. */
static int listed(const char *list, const char *name)
{
    char *copy = kbc_xstrdup(list);
    int hit = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !hit;
         tok = strtok_r(NULL, ",", &save)) {
        char *t = kbc_trim_dup(tok);
        hit = strcmp(t, name) == 0;
        free(t);
    }
    free(copy);
    return hit;
}

/* tune (the strategy) and objective. */
static int read_strategy(const ctx *c, tune_exp *x)
{
    tune *t = c->t;
    const kbc_experiment *e = &t->full.exps[x->exp];
    const char *where;
    const kbc_entry *k;

    k = setting(c, e->name, "tune", &where);
    x->strategy = kbc_strategy_parse(k->value);
    if (x->strategy < 0) {
        const char *names[KBC_TUNE_N_STRATEGIES];
        for (int i = 0; i < KBC_TUNE_N_STRATEGIES; i++)
            names[i] = kbc_strategy_name(i);
        const char *best = kbc_closest(k->value, names, KBC_TUNE_N_STRATEGIES);
        return bad_key(c, k, where,
                       "'%s' is not a strategy (exhaustive, random, local, anneal or auto)%s%s%s",
                       k->value, best ? "; did you mean '" : "", best ? best : "",
                       best ? "'?" : "");
    }

    x->objective = TUNE_TIME;
    if ((k = setting(c, e->name, "objective", &where))) {
        int o = kbc_tune_objective_parse(k->value);
        if (o < 0)
            return bad_key(c, k, where, "'%s' is not an objective (time, rate, energy or edp)",
                           k->value);
        x->objective = (tune_objective)o;
        /* The energy objectives rank by the joules the experiment's own
           measurement takes (the screening runs without). */
        if (kbc_tune_objective_energy(x->objective) && e->measure.energy == KBC_ENERGY_OFF)
            return bad_key(c, k, where,
                           "objective = %s needs the energy measured, and energy is off in "
                           "[%s]: add energy = on to [%s] or [global] (docs/energy.md)",
                           k->value, e->name, e->name);
        if (kbc_tune_objective_energy(x->objective) && e->measure.cache_cold)
            return bad_key(c, k, where,
                           "objective = %s needs the energy measured, which cache = cold in "
                           "[%s] leaves out (the L2 flushes would be counted): use cache = hot",
                           k->value, e->name);
    }
    return 0;
}

/* tune_seed, tune_top, tune_screen and tune_budget. */
static int read_counts(const ctx *c, tune_exp *x)
{
    tune *t = c->t;
    const kbc_experiment *e = &t->full.exps[x->exp];
    const char *where;
    const kbc_entry *k;

    x->seed = 1;
    if ((k = setting(c, e->name, "tune_seed", &where)) && parse_count(k->value, &x->seed) != 0)
        return bad_key(c, k, where, "'%s' is not a seed (a count: 1, 2, ...)", k->value);
    x->top = 3;
    uint64_t v;
    if ((k = setting(c, e->name, "tune_top", &where))) {
        if (parse_count(k->value, &v) != 0 || v < 1 || v > 1000)
            return bad_key(c, k, where, "'%s' is not a count from 1 to 1000", k->value);
        x->top = (uint32_t)v;
    }
    x->screen = 3;
    if ((k = setting(c, e->name, "tune_screen", &where))) {
        if (strcmp(k->value, "off") == 0)
            x->screen = 0;
        else if (parse_count(k->value, &v) != 0 || v < 1 || v > 100000)
            return bad_key(c, k, where, "'%s' is not a count of runs (from 1) nor off",
                           k->value);
        else
            x->screen = (uint32_t)v;
    }
    if ((k = setting(c, e->name, "tune_budget", &where))) {
        if (parse_count(k->value, &x->budget_n) == 0) {
            if (x->budget_n < 1)
                return bad_key(c, k, where, "a budget of 0 evaluations tries nothing");
        } else if (parse_duration(k->value, &x->budget_s) != 0) {
            return bad_key(c, k, where,
                           "'%s' is neither a count of evaluations (40) nor a duration (90s, "
                           "500ms, 5min, 2h)",
                           k->value);
        }
    }
    return 0;
}

/* tune_problem, and from it the problem parameters, the searched ones
   and the variants searched (the library variants are measured beside). */
static int read_space(const ctx *c, tune_exp *x)
{
    tune *t = c->t;
    const kbc_experiment *e = &t->full.exps[x->exp];
    const kb_plugin *d = e->plugin->desc;
    const char *where;

    /* The problem parameters, the search's, and the variants. */
    const kbc_entry *pk = setting(c, e->name, "tune_problem", &where);
    const char *pwhere = where;
    if (pk) {
        char *copy = kbc_xstrdup(pk->value);
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            char *name = kbc_trim_dup(tok);
            int found = 0;
            for (uint32_t i = 0; i < d->n_params; i++)
                found |= strcmp(d->params[i].name, name) == 0;
            if (!found) {
                bad_key(c, pk, pwhere, "'%s' is not a parameter of plugin '%s'", name, d->name);
                free(name);
                free(copy);
                return -1;
            }
            free(name);
        }
        free(copy);
    }
    uint64_t stride = 1;
    for (uint32_t i = d->n_params; i-- > 0;) {
        const kbc_axis *a = &e->axes[i];
        if (a->lead_plus1)
            continue;
        x->stride[i] = stride;
        stride *= a->n;
    }
    for (uint32_t i = 0; i < d->n_params; i++) {
        const kbc_axis *a = &e->axes[i];
        if (a->lead_plus1 || a->n < 2)
            continue;
        /* A zip group is a problem when any of its parameters is named. */
        int problem = 0;
        for (uint32_t j = 0; j < d->n_params; j++)
            if (j == i || e->axes[j].lead_plus1 == i + 1)
                problem |= pk ? listed(pk->value, d->params[j].name)
                              : d->params[j].type == KB_PARAM_SIZE;
        if (problem)
            x->problem[x->n_problem++] = i;
        else
            x->search[x->n_search++] = i;
    }
    for (uint32_t k2 = 0; k2 < e->n_variants; k2++) {
        uint32_t vi = e->variants[k2];
        if (d->variants[vi].flags & KB_VARIANT_LIBRARY)
            x->libs[x->n_libs++] = vi;
        else
            x->variants[x->n_variants++] = vi;
    }
    if (!x->n_variants) {
        kbc_diag_set(c->d,
                     "%s:%d: experiment [%s] selects only library variants, so there is "
                     "nothing to tune; select the variants whose parameters are searched.",
                     c->ini->path, e->line, e->name);
        return -1;
    }
    return 0;
}

/* constrain: parsed against the plugin's parameters and variants. */
static int read_constraint(const ctx *c, tune_exp *x)
{
    tune *t = c->t;
    const kbc_experiment *e = &t->full.exps[x->exp];
    const kb_plugin *d = e->plugin->desc;
    const char *where;
    const kbc_entry *k;

    if ((k = setting(c, e->name, "constrain", &where))) {
        const char *vnames[KB_MAX_VARIANTS];
        for (uint32_t i = 0; i < d->n_variants; i++)
            vnames[i] = d->variants[i].name;
        kbc_expr_names nm = {d->params, d->n_params, vnames, d->n_variants};
        char why[700];
        x->constrain = kbc_expr_parse(k->value, &nm, why, sizeof why);
        if (!x->constrain)
            return bad_key(c, k, where, "%s", why);
        x->constrain_key = k;
        x->constrain_where = where;
    }
    return 0;
}

static int read_settings(const ctx *c, tune_exp *x)
{
    if (read_strategy(c, x) != 0 || read_counts(c, x) != 0 || read_space(c, x) != 0)
        return -1;
    return read_constraint(c, x);
}

/* ---- candidates ---- */

uint64_t kbc_tune_point(const tune *t, const tune_problem *p, uint64_t cand, uint32_t *variant)
{
    const tune_exp *x = &t->exps[p->te];
    const kbc_search *s = p->search;
    uint64_t point = 0;
    for (size_t i = 0; i < x->n_problem; i++)
        point += (uint64_t)p->at[i] * x->stride[x->problem[i]];
    for (size_t i = 0; i < x->n_search; i++)
        point += (uint64_t)kbc_search_coord(s, cand, i) * x->stride[x->search[i]];
    *variant = x->variants[kbc_search_coord(s, cand, x->n_search)];
    return point;
}

int kbc_tune_uses(const kbc_experiment *e, uint32_t v, uint32_t i)
{
    uint64_t u = kbc_variant_uses(e, v);
    return !u || (u & KB_USES(i));
}

/* Whether the constraint holds at a candidate. */
static int constraint_holds(const tune *t, const tune_problem *p, uint64_t cand)
{
    const tune_exp *x = &t->exps[p->te];
    if (!x->constrain)
        return 1;
    const kbc_experiment *e = &t->full.exps[x->exp];
    const kb_plugin *d = e->plugin->desc;
    uint32_t v;
    uint64_t point = kbc_tune_point(t, p, cand, &v);
    kb_value values[KB_MAX_PARAMS];
    kbc_experiment_point(e, point, values);
    int64_t ival[KB_MAX_PARAMS + 1 + KBC_EXPR_N_FACTS];
    for (uint32_t i = 0; i < d->n_params; i++)
        ival[i] = d->params[i].type == KB_PARAM_SIZE ? (int64_t)values[i].u
                  : d->params[i].type == KB_PARAM_FLOAT ? 0
                                                        : values[i].i;
    ival[d->n_params] = v;
    for (int i = 0; i < KBC_EXPR_N_FACTS; i++)
        ival[d->n_params + 1 + i] = t->facts[i];
    kbc_expr_env env = {ival};
    return kbc_expr_holds(x->constrain, &env);
}

/* Whether a candidate is in the space (search.h's ok): the constraint
   holds, and it is the one candidate of its configuration.  A variant
   that ignores searched parameters measures the same whatever their
   values, so it is tried once: at the first of their combinations (in
   index order) where the constraint holds. */
static int candidate_ok(void *arg, uint64_t cand)
{
    tune_problem *p = arg;
    tune *t = p->t;
    const tune_exp *x = &t->exps[p->te];
    const kbc_experiment *e = &t->full.exps[x->exp];
    uint32_t v = x->variants[kbc_search_coord(p->search, cand, x->n_search)];
    if (!constraint_holds(t, p, cand))
        return 0;
    /* The ignored coordinates, and the candidate with them all at 0. */
    size_t ignored[KB_MAX_PARAMS], n_ignored = 0;
    uint64_t base = cand, stride[KB_MAX_PARAMS];
    for (size_t i = 0; i < x->n_search; i++) {
        if (kbc_tune_uses(e, v, x->search[i]))
            continue;
        uint64_t st = 1;
        for (size_t j = i + 1; j <= x->n_search; j++)
            st *= j < x->n_search ? e->axes[x->search[j]].n : x->n_variants;
        stride[n_ignored] = st;
        ignored[n_ignored++] = i;
        base -= (uint64_t)kbc_search_coord(p->search, cand, i) * st;
    }
    if (!n_ignored)
        return 1;
    /* The first combination of the ignored coordinates that holds. */
    uint32_t at[KB_MAX_PARAMS] = {0};
    for (;;) {
        uint64_t c = base;
        for (size_t k = 0; k < n_ignored; k++)
            c += (uint64_t)at[k] * stride[k];
        if (c == cand)
            return 1;
        if (constraint_holds(t, p, c))
            return 0;
        size_t k = n_ignored;
        while (k-- > 0) {
            if (++at[k] < e->axes[x->search[ignored[k]]].n)
                break;
            at[k] = 0;
        }
        if (k == (size_t)-1)
            return 0;
    }
}

/* "block_x=32, block_y=8, variant=fast": the searched parameters and the
   variant; a library row names its variant only. */
static void candidate_text(const tune *t, const tune_exp *x, uint64_t point, uint32_t v,
                           int library, char *buf, size_t n)
{
    const kbc_experiment *e = &t->full.exps[x->exp];
    const kb_plugin *d = e->plugin->desc;
    kb_value values[KB_MAX_PARAMS];
    kbc_experiment_point(e, point, values);
    size_t used = 0;
    buf[0] = '\0';
    /* Each searched dimension the variant depends on, by the parameters of
       its zip group that the variant itself reads (all of them when it
       reads every parameter): "x=13", not the group's first, "y=7", for a
       variant that reads x alone. */
    uint64_t own = d->variants[v].uses;
    for (size_t i = 0; i < x->n_search && !library && used < n; i++) {
        uint32_t lead = x->search[i];
        if (!kbc_tune_uses(e, v, lead))
            continue;
        for (uint32_t j = 0; j < d->n_params && used < n; j++) {
            if (j != lead && e->axes[j].lead_plus1 != lead + 1)
                continue;
            if (own && !(own & KB_USES(j)))
                continue;
            char val[64];
            kbc_value_format(&d->params[j], values[j], val, sizeof val);
            used += (size_t)snprintf(buf + used, n - used, "%s=%s, ", d->params[j].name, val);
        }
    }
    if (used < n)
        snprintf(buf + used, n - used, "variant=%s", d->variants[v].name);
}

/* The row key of (point, variant), as the journals and workers spell it. */
static char *row_key(const kbc_plan *plan, size_t exp, uint64_t point, uint32_t v)
{
    const kbc_experiment *e = &plan->exps[exp];
    kb_value values[KB_MAX_PARAMS];
    kbc_experiment_point(e, point, values);
    kbc_record r;
    kbc_record_identify(&r, e, point, values, v);
    size_t need = kbc_record_key(&r, NULL, 0) + 1;
    char *k = kbc_xmalloc(need);
    kbc_record_key(&r, k, need);
    return k;
}

static tune_row *add_row(tune *t)
{
    if (t->n_rows == t->cap_rows) {
        t->cap_rows = t->cap_rows ? 2 * t->cap_rows : 256;
        t->rows = kbc_xrealloc(t->rows, t->cap_rows * sizeof *t->rows);
    }
    tune_row *r = &t->rows[t->n_rows++];
    memset(r, 0, sizeof *r);
    r->screen = r->full = r->rate_screen = r->rate_full = r->noise = NAN;
    r->j_screen = r->j_full = NAN;
    r->cost = INFINITY;
    r->full_outcome = -1;
    return r;
}

/* The objective's rate of a measurement, and its unit: the rate its row
   is judged in by run's charts and summary (kbc_rate_pick), so that a
   candidate reads as its row does. */
static double rate_of(const measured *m, const char **unit)
{
    *unit = m->unit ? m->unit : "items/s";
    return m->rate == KBC_RATE_GFLOPS ? m->gflops : m->rate == KBC_RATE_GBPS ? m->gbps : m->items;
}

/* ---- the objective ---- */

static const char *const objective_names[TUNE_N_OBJECTIVES] = {"time", "rate", "energy", "edp"};

const char *kbc_tune_objective_name(tune_objective o)
{
    return (int)o >= 0 && o < TUNE_N_OBJECTIVES ? objective_names[o] : "time";
}

int kbc_tune_objective_parse(const char *name)
{
    for (int i = 0; name && i < TUNE_N_OBJECTIVES; i++)
        if (strcmp(name, objective_names[i]) == 0)
            return i;
    return -1;
}

int kbc_tune_objective_energy(tune_objective o)
{
    return o == TUNE_ENERGY || o == TUNE_EDP;
}

double kbc_tune_value(const tune_exp *x, double median, double rate, double joules)
{
    switch (x->objective) {
    case TUNE_RATE:
        return rate > 0 ? rate : NAN;
    case TUNE_ENERGY:
        return joules > 0 ? joules : NAN;
    case TUNE_EDP:
        /* The energy-delay product: a faster run of the same joules is
           better, and so is a run of fewer joules at the same speed. */
        return joules > 0 && median > 0 ? joules * median : NAN;
    case TUNE_TIME:
        break;
    }
    return median > 0 ? median : NAN;
}

int kbc_tune_better(const tune_exp *x, double a, double b)
{
    return x->objective == TUNE_RATE ? a > b : a < b;
}

/* What the search is told for a measurement: the objective's value,
   made lower-is-better (one over the rate); INFINITY for anything but a
   pass.  A screening measurement has no energy (it runs with energy =
   off), so under energy and edp the search screens by the time, and the
   experiment's own measurement of the best (tune_top) ranks them by the
   objective; without screening it is told the objective itself, and a
   candidate without energy counts as failed. */
static double cost_of(tune_exp *x, const measured *m)
{
    if (m->outcome != KBC_PASS || !(m->median > 0))
        return INFINITY;
    if (kbc_tune_objective_energy(x->objective) && x->screen)
        return m->median;
    const char *unit;
    double v = kbc_tune_value(x, m->median, rate_of(m, &unit), m->joules);
    if (x->objective == TUNE_RATE)
        v = 1.0 / v;
    return isfinite(v) && v > 0 ? v : INFINITY;
}

/* A measurement into a row: the search's (screening) or the final one. */
static void row_screened(tune_exp *x, tune_row *r, const measured *m)
{
    r->outcome = m->outcome;
    snprintf(r->reason, sizeof r->reason, "%s", m->reason);
    r->screen = m->median;
    r->noise = m->noise;
    r->rate_screen = rate_of(m, &x->rate_unit);
    r->j_screen = m->joules;
    snprintf(r->energy_why, sizeof r->energy_why, "%s", m->energy_why);
    r->cost = cost_of(x, m);
}

static void row_measured(tune_exp *x, tune_row *r, const measured *m)
{
    r->full_outcome = m->outcome;
    r->full = m->median;
    r->noise = m->noise;
    r->rate_full = rate_of(m, &x->rate_unit);
    r->j_full = m->joules;
    snprintf(r->energy_why, sizeof r->energy_why, "%s", m->energy_why);
    if (r->library) {
        r->outcome = m->outcome;
        snprintf(r->reason, sizeof r->reason, "%s", m->reason);
    }
}

/* ---- a round through the supervisor ---- */

/* A sink that keeps a round's rows (got) and, from the run's header, the
   machine (into the tune) and each plugin's build. */
typedef struct collect {
    tune *t;
    cache got;
    char sha[64][65];
    char plugin[64][KBC_REC_NAME];
    size_t n_builds;
} collect;

static int collect_begin(void *arg, const kbc_run_info *info)
{
    collect *c = arg;
    tune *t = c->t;
    const kbc_machine *m = info->machine;
    if (m && !t->have_machine) {
        t->have_machine = 1;
        snprintf(t->gpu_model, sizeof t->gpu_model, "%s", m->has_gpu ? m->name : "none");
        snprintf(t->no_gpu, sizeof t->no_gpu, "%s",
                 m->has_gpu ? "" : m->no_gpu_reason[0] ? m->no_gpu_reason : "no CUDA device");
        t->facts[0] = m->cpu_threads;
        t->facts[1] = m->has_gpu ? m->sm_count : 0;
        t->facts[2] = m->has_gpu ? m->cc_major * 10 + m->cc_minor : 0;
        t->facts[3] = m->has_gpu ? (int64_t)m->l2_bytes : 0;
        t->facts[4] = m->has_gpu ? (int64_t)m->mem_bytes : 0;
    }
    for (size_t i = 0; i < info->n_builds && i < 64; i++) {
        snprintf(c->plugin[i], sizeof c->plugin[i], "%s", info->builds[i].name);
        snprintf(c->sha[i], sizeof c->sha[i], "%s", info->builds[i].sha256);
    }
    c->n_builds = info->n_builds < 64 ? info->n_builds : 64;
    return 0;
}

static int collect_point(void *arg, const kbc_record *recs, size_t n)
{
    collect *c = arg;
    for (size_t i = 0; i < n; i++)
        cache_add(&c->got, &recs[i], "", "");
    return 0;
}

/* The SHA-256 of plugin name's file, as the hello round saw it. */
static const char *sha_of(const collect *c, const char *plugin)
{
    for (size_t i = 0; i < c->n_builds; i++)
        if (strcmp(c->plugin[i], plugin) == 0)
            return c->sha[i];
    return "";
}

/* Runs the picks on plan (full or screening) through the supervisor, into
   c->got.  Returns the supervisor's exit code but for 1 (failed rows are
   rows here). */
static size_t next_round(void *arg, const kbc_point_pick **out);

/* rounds (below): with one, the supervisor asks it for the next round's
   picks as each round ends (kbc_super_opts.more). */
static int round_run(tune *t, const kbc_plan *plan, int screening, kbc_journal *j,
                     const kbc_point_pick *picks, size_t n_picks, collect *c, void *rounds)
{
    const kbc_tune_opts *o = t->o;
    const char **sets = kbc_xcalloc((size_t)o->n_sets + 4 * t->n_exps + 1, sizeof *sets);
    char **own = kbc_xcalloc(4 * t->n_exps + 1, sizeof *own);
    size_t ns = 0, no = 0;
    for (int i = 0; i < o->n_sets; i++)
        sets[ns++] = o->sets[i];
    for (size_t i = 0; screening && i < t->n_exps; i++) {
        const tune_exp *x = &t->exps[i];
        if (!x->screen)
            continue;
        const char *name = t->full.exps[x->exp].name;
        own[no] = kbc_xasprintf("%s.runs=%u", name, x->screen);
        sets[ns++] = own[no++];
        own[no] = kbc_xasprintf("%s.warmup=1", name);
        sets[ns++] = own[no++];
        own[no] = kbc_xasprintf("%s.noise=0", name);
        sets[ns++] = own[no++];
        own[no] = kbc_xasprintf("%s.energy=off", name);
        sets[ns++] = own[no++];
    }
    kbc_super_opts so;
    memset(&so, 0, sizeof so);
    so.request = (kbc_request){.self = o->self, .ini_path = o->ini_path,
                               .plugin_paths = o->plugin_paths,
                               .n_plugin_paths = o->n_plugin_paths,
                               .experiment = o->experiment, .sets = sets, .n_sets = (int)ns,
                               .quiet = o->quiet, .allow_shared = o->allow_shared};
    so.journal = j;
    so.gpus = o->gpus;
    so.n_gpus = o->n_gpus;
    static const kbc_point_pick none;
    so.picks = n_picks ? picks : &none;
    so.n_picks = n_picks;
    if (rounds) {
        so.more = next_round;
        so.more_ctx = rounds;
    }
    kbc_sink sink = {.ctx = c, .begin = collect_begin, .point = collect_point};
    int code = kbc_supervise(plan, &so, &sink, 1, o->command_line);
    for (size_t i = 0; i < no; i++)
        free(own[i]);
    free(own);
    free(sets);
    return code == KBC_EXIT_FAILED ? KBC_EXIT_OK : code;
}

/* ---- the tuning ---- */

/* A problem's evaluation of candidate cand: a point the plan's record
   says does not run for its variant is a row at once (plan() refused the
   point or the variant: invalid; plan() failed otherwise: error;
   kbc_plan_variant); cached rows are told at
   once; the rest is picked for the round.  Returns 1 when it needs the
   round. */
static int evaluate(tune *t, tune_problem *p, uint64_t cand, int arm, const cache *cached,
                    const collect *builds, size_t *row_index)
{
    tune_exp *x = &t->exps[p->te];
    const kbc_experiment *e = &t->full.exps[x->exp];
    const kb_plugin *d = e->plugin->desc;
    uint32_t v;
    uint64_t point = kbc_tune_point(t, p, cand, &v);
    /* A variant that ignores a searched parameter runs at the first point
       of its configuration: the same measurement for every value. */
    uint64_t rep = kbc_point_representative(e, point, v);
    tune_row *r = add_row(t);
    *row_index = t->n_rows - 1;
    r->prob = (size_t)(p - t->probs);
    r->cand = cand;
    r->point = rep;
    r->variant = v;
    r->arm = arm;
    candidate_text(t, x, point, v, 0, r->text, sizeof r->text);
    kbc_point_plan pp;
    kbc_plan_point(e, rep, &pp);
    const char *says;
    int status = kbc_plan_variant(&pp, v, &says);
    if (status != KBC_PLAN_RUNS) {
        int refused = status == KBC_PLAN_REFUSED;
        r->outcome = refused ? KBC_INVALID : KBC_ERROR;
        snprintf(r->reason, sizeof r->reason, "%s", says);
        if (refused)
            p->invalid++;
        else
            p->failed++;
        kbc_search_tell(p->search, cand, INFINITY);
        return 0;
    }
    p->evaluations++;
    r->eval = (int)p->evaluations;
    char *key = row_key(x->screen ? &t->screen : &t->full, x->exp, rep, v);
    const measured *m = cache_find(cached, key, t->o->simulate ? NULL : sha_of(builds, d->name),
                                   t->o->simulate ? NULL : t->gpu_model);
    free(key);
    if (m || t->o->simulate) {
        /* A replay counts what the journal holds as cached, and the rest
           as missing from it: neither was measured, and only a measurement
           can fail. */
        if (m) {
            row_screened(x, r, m);
            r->cached_screen = 1;
            p->cached++;
            if (!isfinite(r->cost))
                p->failed++;
        } else {
            r->outcome = KBC_SKIPPED;
            snprintf(r->reason, sizeof r->reason,
                     "--simulate: the journal holds no measurement of this candidate");
            p->missing++;
        }
        kbc_search_tell(p->search, cand, r->cost);
        return 0;
    }
    return 1;
}

/* Takes a round's measurement of row r (screening). */
static void take(tune *t, tune_problem *p, tune_row *r, const collect *c)
{
    tune_exp *x = &t->exps[p->te];
    char *key = row_key(x->screen ? &t->screen : &t->full, x->exp, r->point, r->variant);
    const measured *m = cache_find(&c->got, key, NULL, NULL);
    free(key);
    if (m) {
        row_screened(x, r, m);
    } else {
        r->outcome = KBC_SKIPPED;
        snprintf(r->reason, sizeof r->reason,
                 "the run stopped before this candidate came back");
    }
    if (!isfinite(r->cost))
        p->failed++;
    kbc_search_tell(p->search, r->cand, r->cost);
}

static void add_pick(kbc_point_pick **picks, size_t *n, size_t *cap, uint32_t exp,
                     uint64_t point, uint32_t v)
{
    for (size_t i = 0; i < *n; i++)
        if ((*picks)[i].exp == exp && (*picks)[i].point == point) {
            (*picks)[i].mask |= KB_VARIANT_BIT(v);
            return;
        }
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *picks = kbc_xrealloc(*picks, *cap * sizeof **picks);
    }
    (*picks)[(*n)++] = (kbc_point_pick){exp, point, KB_VARIANT_BIT(v)};
}

/* The problems of experiment te: the cross product of its problem axes. */
static void make_problems(tune *t, size_t te)
{
    tune_exp *x = &t->exps[te];
    const kbc_experiment *e = &t->full.exps[x->exp];
    const kb_plugin *d = e->plugin->desc;
    uint64_t count = 1;
    for (size_t i = 0; i < x->n_problem; i++)
        count *= e->axes[x->problem[i]].n;
    t->probs = kbc_xrealloc(t->probs, (t->n_probs + count) * sizeof *t->probs);
    for (uint64_t q = 0; q < count; q++) {
        tune_problem *p = &t->probs[t->n_probs++];
        memset(p, 0, sizeof *p);
        p->t = t;
        p->te = te;
        uint64_t rest = q;
        for (size_t i = x->n_problem; i-- > 0;) {
            size_t len = e->axes[x->problem[i]].n;
            p->at[i] = (uint32_t)(rest % len);
            rest /= len;
        }
        size_t used = 0;
        kb_value values[KB_MAX_PARAMS];
        uint64_t point = 0;
        for (size_t i = 0; i < x->n_problem; i++)
            point += (uint64_t)p->at[i] * x->stride[x->problem[i]];
        kbc_experiment_point(e, point, values);
        p->name[0] = '\0';
        for (uint32_t i = 0; i < d->n_params && used < sizeof p->name; i++) {
            int mine = 0;
            for (size_t j = 0; j < x->n_problem; j++)
                mine |= x->problem[j] == i || e->axes[i].lead_plus1 == x->problem[j] + 1;
            if (!mine)
                continue;
            char val[64];
            kbc_value_format(&d->params[i], values[i], val, sizeof val);
            used += (size_t)snprintf(p->name + used, sizeof p->name - used, "%s%s=%s",
                                     used ? ", " : "", d->params[i].name, val);
        }
        if (!p->name[0])
            snprintf(p->name, sizeof p->name, "the problem");
    }
}

/* The search's state between rounds: the candidates of the round that
   runs, and the picks that run them. */
typedef struct rounds {
    tune *t;
    const cache *cached;
    collect *builds;
    collect got;            /* the rows of the round that ran            */
    uint64_t *batch;
    kbc_point_pick *picks;
    size_t n_picks, cap_picks;
    size_t *pending, n_pending;
    size_t round;
} rounds;

/* Tells each search what the last round measured (rows missing from it:
   the run stopped first). */
static void take_round(rounds *rs)
{
    tune *t = rs->t;
    for (size_t k = 0; k < rs->n_pending; k++) {
        tune_row *r = &t->rows[rs->pending[k]];
        take(t, &t->probs[r->prob], r, &rs->got);
    }
    rs->n_pending = 0;
    cache_free(&rs->got.got);
}

/* The next round's picks: each problem's search is asked until it has a
   candidate that needs running (cached and invalid ones are told at
   once), its budget is spent or it has nothing left.  Returns how many
   points (0: every search is done).  The supervisor's `more`. */
static size_t next_round(void *arg, const kbc_point_pick **out)
{
    rounds *rs = arg;
    tune *t = rs->t;
    take_round(rs);
    rs->n_picks = 0;
    for (size_t i = 0; i < t->n_probs; i++) {
        tune_problem *p = &t->probs[i];
        tune_exp *x = &t->exps[p->te];
        if (p->done)
            continue;
        if (!p->t0)
            p->t0 = kbc_now();
        size_t before = rs->n_pending;
        while (rs->n_pending == before) {
            uint64_t left = p->budget > p->evaluations ? p->budget - p->evaluations : 0;
            if (!left || (x->budget_s > 0 && kbc_now() - p->t0 > x->budget_s)) {
                p->done = 1;
                break;
            }
            size_t room = left < ROUND_ROOM ? (size_t)left : ROUND_ROOM;
            /* A budget of time is checked between rounds, so rounds stay
               short under one. */
            if (x->budget_s > 0 && room > TIMED_ROUND_ROOM)
                room = TIMED_ROUND_ROOM;
            size_t n = kbc_search_ask(p->search, rs->batch, room);
            if (!n) {
                p->done = 1;
                break;
            }
            int arm = kbc_search_arm(p->search);
            for (size_t k = 0; k < n; k++) {
                size_t ri;
                if (!evaluate(t, p, rs->batch[k], arm, rs->cached, rs->builds, &ri))
                    continue;
                rs->pending = kbc_xrealloc(rs->pending, (rs->n_pending + 1) * sizeof *rs->pending);
                rs->pending[rs->n_pending++] = ri;
                add_pick(&rs->picks, &rs->n_picks, &rs->cap_picks, (uint32_t)x->exp,
                         t->rows[ri].point, t->rows[ri].variant);
            }
        }
        if (p->done)
            p->wall = kbc_now() - p->t0;
    }
    if (rs->n_pending) {
        rs->round++;
        if (!t->o->quiet)
            fprintf(t->err, "kbench tune: round %zu: %zu candidate%s\n", rs->round,
                    rs->n_pending, rs->n_pending == 1 ? "" : "s");
    }
    *out = rs->picks;
    return rs->n_picks;
}

/* How many candidates of the space the constraint allows and plan()
   accepts (what an exhaustive search evaluates), for the default budget;
   the allowed count where the space is too large to ask plan() of each. */
static uint64_t count_valid(tune *t, tune_problem *p)
{
    const tune_exp *x = &t->exps[p->te];
    const kbc_experiment *e = &t->full.exps[x->exp];
    uint64_t size = kbc_search_size(p->search), n = 0;
    kbc_point_plan pp;
    if (size > VALID_COUNT_MAX)
        return p->allowed;
    for (uint64_t c = 0; c < size; c++) {
        if (!candidate_ok(p, c))
            continue;
        uint32_t v = 0;
        uint64_t rep = kbc_point_representative(e, kbc_tune_point(t, p, c, &v), v);
        kbc_plan_point(e, rep, &pp);
        n += kbc_plan_variant(&pp, v, NULL) == KBC_PLAN_RUNS;
    }
    return n ? n : 1;
}

/* Searches, round after round, until every problem is done: the rounds
   run in one supervisor session (its workers stay up), fed by
   next_round. */
static int search_all(tune *t, const cache *screen_cache, collect *builds, kbc_journal *j)
{
    rounds rs = {.t = t, .cached = screen_cache, .builds = builds};
    rs.got.t = t;
    rs.batch = kbc_xmalloc(ROUND_ROOM * sizeof *rs.batch);
    int code = 0;
    const kbc_point_pick *picks;
    size_t n = next_round(&rs, &picks);
    if (n) {
        int any_screen = 0;
        for (size_t i = 0; i < t->n_exps; i++)
            any_screen |= t->exps[i].screen > 0;
        code = round_run(t, any_screen ? &t->screen : &t->full, any_screen, j, picks, n,
                         &rs.got, &rs);
        take_round(&rs);
        t->interrupted = code == KBC_EXIT_INTERRUPTED;
    }
    for (size_t i = 0; i < t->n_probs; i++)
        if (t->probs[i].t0 && !t->probs[i].wall)
            t->probs[i].wall = kbc_now() - t->probs[i].t0;
    free(rs.batch);
    free(rs.picks);
    free(rs.pending);
    return code;
}

/* The best rows of each problem (tune_top of them, passing) and its
   library variants, measured with the experiment's own settings. */
static int final_round(tune *t, const cache *full_cache, collect *builds, kbc_journal *j)
{
    kbc_point_pick *picks = NULL;
    size_t n_picks = 0, cap = 0;
    size_t *want = NULL, n_want = 0;
    size_t n_rows0 = t->n_rows;
    for (size_t i = 0; i < t->n_probs; i++) {
        tune_problem *p = &t->probs[i];
        tune_exp *x = &t->exps[p->te];
        const kbc_experiment *e = &t->full.exps[x->exp];
        /* The best passing rows, by what the search was told. */
        for (uint32_t k = 0; k < x->top; k++) {
            long best = -1;
            for (size_t r = 0; r < n_rows0; r++) {
                tune_row *row = &t->rows[r];
                if (row->prob != i || row->library || !isfinite(row->cost) ||
                    row->full_outcome == -2)
                    continue;
                if (best < 0 || row->cost < t->rows[best].cost)
                    best = (long)r;
            }
            if (best < 0)
                break;
            t->rows[best].full_outcome = -2; /* chosen */
            want = kbc_xrealloc(want, (n_want + 1) * sizeof *want);
            want[n_want++] = (size_t)best;
        }
        /* The library, at the problem's point (the first values of the
           searched parameters, which a library variant ignores or not). */
        for (size_t l = 0; l < x->n_libs; l++) {
            tune_row *r = add_row(t);
            uint64_t point = 0;
            for (size_t a = 0; a < x->n_problem; a++)
                point += (uint64_t)p->at[a] * x->stride[x->problem[a]];
            r->prob = i;
            r->library = 1;
            r->variant = x->libs[l];
            r->point = kbc_point_representative(e, point, x->libs[l]);
            r->outcome = KBC_SKIPPED;
            candidate_text(t, x, r->point, r->variant, 1, r->text, sizeof r->text);
            want = kbc_xrealloc(want, (n_want + 1) * sizeof *want);
            want[n_want++] = t->n_rows - 1;
        }
    }
    /* The cache first; the rest in one round. */
    size_t n_run = 0;
    for (size_t k = 0; k < n_want; k++) {
        tune_row *r = &t->rows[want[k]];
        tune_exp *x = &t->exps[t->probs[r->prob].te];
        const kbc_experiment *e = &t->full.exps[x->exp];
        r->full_outcome = -1;
        if (!x->screen && !r->library) {
            /* The search measured it with the full settings already. */
            r->full = r->screen;
            r->rate_full = r->rate_screen;
            r->j_full = r->j_screen;
            r->full_outcome = r->outcome;
            r->cached_full = r->cached_screen;
            continue;
        }
        char *key = row_key(&t->full, x->exp, r->point, r->variant);
        const measured *m =
            cache_find(full_cache, key, t->o->simulate ? NULL : sha_of(builds, e->plugin->desc->name),
                       t->o->simulate ? NULL : t->gpu_model);
        free(key);
        if (m) {
            row_measured(x, r, m);
            r->cached_full = 1;
            continue;
        }
        if (t->o->simulate)
            continue;
        add_pick(&picks, &n_picks, &cap, (uint32_t)x->exp, r->point, r->variant);
        want[n_run++] = want[k];
    }
    int code = 0;
    if (n_picks && !t->interrupted) {
        if (!t->o->quiet)
            fprintf(t->err, "kbench tune: the best %s and the library: %zu row%s with the full "
                            "measure settings\n",
                    "candidates", n_run, n_run == 1 ? "" : "s");
        collect c = {.t = t};
        code = round_run(t, &t->full, 0, j, picks, n_picks, &c, NULL);
        for (size_t k = 0; k < n_run; k++) {
            tune_row *r = &t->rows[want[k]];
            tune_exp *x = &t->exps[t->probs[r->prob].te];
            char *key = row_key(&t->full, x->exp, r->point, r->variant);
            const measured *m = cache_find(&c.got, key, NULL, NULL);
            free(key);
            if (m)
                row_measured(x, r, m);
        }
        cache_free(&c.got);
        if (code == KBC_EXIT_INTERRUPTED)
            t->interrupted = 1;
    }
    free(picks);
    free(want);
    return code;
}

/* Opens (or starts) DIR/SUB/journal.jsonl for appending. */
static int open_journal(const char *dir, const char *sub, const kbc_plan *plan, kbc_journal *j,
                        kbc_diag *d)
{
    char *folder = kbc_xasprintf("%s/%s", dir, sub);
    char *file = kbc_xasprintf("%s/journal.jsonl", folder);
    if (kbc_make_dirs(folder) != 0) {
        kbc_diag_set(d, "cannot create the folder '%s': %s", folder, strerror(errno));
        free(folder);
        free(file);
        return -1;
    }
    char hash[65];
    kbc_plan_hash(plan, hash);
    int rc = access(file, F_OK) == 0
                 ? kbc_journal_resume(j, folder, hash, 0, 0, 1, stderr, d)
                 : kbc_journal_create(j, folder, hash, 0, 0, d);
    if (rc == 0) {
        /* What it held is read as the cache (cache_read); the supervisor
           must not take it for a run to finish. */
        kbc_journal_forget(j);
    }
    free(folder);
    free(file);
    return rc;
}

/* The INI file as the command line narrows and sets it. */
static int load_ini(const kbc_tune_opts *o, kbc_ini *ini, kbc_diag *d)
{
    if (kbc_ini_load(o->ini_path, ini, d) != 0)
        return -1;
    return kbc_ini_narrow(ini, o->experiment, o->sets, (size_t)o->n_sets, NULL, d);
}

/* Whether the constraint names a fact of the GPU, which only a worker's
   hello tells (cpu_threads is known at once). */
static int names_gpu_fact(const tune *t, const tune_exp *x)
{
    if (!x->constrain)
        return 0;
    uint32_t np = t->full.exps[x->exp].plugin->desc->n_params;
    unsigned char named[KB_MAX_PARAMS + 1 + KBC_EXPR_N_FACTS];
    kbc_expr_slots(x->constrain, named, np + 1 + KBC_EXPR_N_FACTS);
    for (int f = 1; f < KBC_EXPR_N_FACTS; f++)
        if (named[np + 1 + f])
            return 1;
    return 0;
}

/* Counts what each constraint allows of each problem not counted yet
   (allowed.c); one that names a fact of the GPU waits for gpu_known.
   Returns 0, or -1 with c->d set to the sentence of the constrain key: an
   overflow, or a problem left no candidate (naming the term that holds
   for none, when one does). */
static int count_allowed(const ctx *c, int gpu_known)
{
    tune *t = c->t;
    for (size_t i = 0; i < t->n_probs; i++) {
        tune_problem *p = &t->probs[i];
        const tune_exp *x = &t->exps[p->te];
        if (p->scanned || (!gpu_known && names_gpu_fact(t, x)))
            continue;
        tune_allowed a;
        kbc_tune_allowed(t, p, &a);
        if (a.overflow)
            return bad_key(c, x->constrain_key, x->constrain_where, "%s", a.why);
        if (a.n == 0) {
            const kbc_experiment *e = &t->full.exps[x->exp];
            char of[600], term[200];
            if (strcmp(p->name, "the problem") == 0)
                snprintf(of, sizeof of, "experiment [%s]", e->name);
            else
                snprintf(of, sizeof of, "experiment [%s] at %s", e->name, p->name);
            if (a.empty_term < 0)
                return bad_key(c, x->constrain_key, x->constrain_where,
                               "no candidate of %s satisfies all of its terms at once (each "
                               "holds for some), so there is nothing to try at column 1",
                               of);
            return bad_key(
                c, x->constrain_key, x->constrain_where,
                "no candidate of %s satisfies '%s', so there is nothing to try at column %d",
                of, kbc_expr_term_text(x->constrain, (size_t)a.empty_term, term, sizeof term),
                kbc_expr_term_col(x->constrain, (size_t)a.empty_term));
        }
        p->allowed = a.n;
        p->scanned = 1;
    }
    return 0;
}

static int build_plan(const kbc_tune_opts *o, kbc_registry *reg, int screening, tune *t,
                      kbc_plan *plan, kbc_ini *ini, kbc_diag *d)
{
    if (load_ini(o, ini, d) != 0)
        return -1;
    for (size_t i = 0; screening && i < t->n_exps; i++) {
        const tune_exp *x = &t->exps[i];
        if (!x->screen)
            continue;
        char runs[32];
        snprintf(runs, sizeof runs, "%u", x->screen);
        char *name = kbc_xstrdup(t->full.exps[x->exp].name);
        kbc_ini_set(ini, name, "runs", runs, KBC_INI_LINE_CLI);
        kbc_ini_set(ini, name, "warmup", "1", KBC_INI_LINE_CLI);
        kbc_ini_set(ini, name, "noise", "0", KBC_INI_LINE_CLI);
        /* The screening is a quick look at the time: at least five energy
           windows of a second each per candidate are not quick. */
        kbc_ini_set(ini, name, "energy", "off", KBC_INI_LINE_CLI);
        free(name);
    }
    if (!screening)
        return kbc_plan_build(ini, reg, o->device_mem, plan, d);
    /* The screening plan has the full plan's points: they were planned
       once, with it, and their records are copied. */
    if (kbc_plan_build_unplanned(ini, reg, plan, d) != 0)
        return -1;
    if (kbc_plan_copy_points(plan, &t->full) != 0) {
        kbc_diag_set(d, "%s: the screening plan does not have the points of the full plan",
                     o->ini_path);
        return -1;
    }
    return 0;
}

/* Whether the searched variants can run on this machine, told by the
   hello round: without a GPU in use no CUDA variant runs, so an experiment
   that searches only CUDA variants would try every candidate for nothing
   and call each one failed.  That is said first, with exit 2; where some
   of its variants run on the CPU, a note names the others (their
   candidates are skipped).  Returns 0 or the exit code. */
static int runnable_here(tune *t)
{
    if (!t->no_gpu[0])
        return 0;
    for (size_t i = 0; i < t->n_exps; i++) {
        const tune_exp *x = &t->exps[i];
        const kbc_experiment *e = &t->full.exps[x->exp];
        const kb_plugin *d = e->plugin->desc;
        char names[800] = "";
        size_t cuda = 0, used = 0;
        for (size_t k = 0; k < x->n_variants; k++) {
            const kb_variant *v = &d->variants[x->variants[k]];
            if (v->backend != KB_BACKEND_CUDA)
                continue;
            cuda++;
            if (used < sizeof names)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                         used ? ", " : "", v->name);
        }
        if (!cuda)
            continue;
        if (cuda == x->n_variants) {
            fprintf(t->err,
                    "kbench: %s:%d: experiment [%s] tunes only CUDA variants (%s), and this "
                    "machine has no GPU in use (%s): none of its candidates could run; tune it "
                    "on a machine with a GPU, or add a CPU variant to its variants.\n",
                    t->o->ini_path, e->line, e->name, names, t->no_gpu);
            return KBC_EXIT_USAGE;
        }
        if (!t->o->quiet)
            fprintf(t->err,
                    "kbench tune: note: [%s]: %s run%s on CUDA, and this machine has no GPU in "
                    "use (%s): their candidates are skipped.\n",
                    e->name, names, cuda == 1 ? "s" : "", t->no_gpu);
    }
    return 0;
}

/* The journals of DIR/screen (when a search screens) and DIR/full, which
   record every measurement for the cache of a later tuning; 0, or exit 3
   (said on err) when one cannot be opened. */
static int open_journals(tune *t, int have_screen, kbc_journal *js, int *have_js,
                         kbc_journal *jf, int *have_jf, kbc_diag *d)
{
    if (have_screen) {
        if (open_journal(t->o->out_dir, "screen", &t->screen, js, d) != 0) {
            fprintf(t->err, "kbench: %s\n", d->msg);
            return KBC_EXIT_SYSTEM;
        }
        *have_js = 1;
    }
    if (open_journal(t->o->out_dir, "full", &t->full, jf, d) != 0) {
        fprintf(t->err, "kbench: %s\n", d->msg);
        return KBC_EXIT_SYSTEM;
    }
    *have_jf = 1;
    return 0;
}

/* The experiments with a 'tune' key, each with its settings read; -1
   (said on err) when a setting is wrong or no experiment tunes. */
static int find_tunings(ctx *c)
{
    tune *t = c->t;
    t->exps = kbc_xcalloc(t->full.n ? t->full.n : 1, sizeof *t->exps);
    for (size_t i = 0; i < t->full.n; i++) {
        const char *where;
        if (!setting(c, t->full.exps[i].name, "tune", &where))
            continue;
        tune_exp *x = &t->exps[t->n_exps++];
        x->exp = i;
        if (read_settings(c, x) != 0) {
            fprintf(t->err, "kbench: %s\n", c->d->msg);
            return -1;
        }
    }
    if (!t->n_exps) {
        fprintf(t->err,
                "kbench: %s: no experiment has a 'tune' key, so there is nothing to tune; add "
                "tune = auto (or exhaustive, random, local, anneal) to a section (see "
                "docs/tune.md).\n",
                t->o->ini_path);
        return -1;
    }
    return 0;
}

/* Problem i's search over its space (the searched parameters' values and
   the variants), and its budget of evaluations. */
static void start_search(tune *t, size_t i)
{
    tune_problem *p = &t->probs[i];
    tune_exp *x = &t->exps[p->te];
    uint32_t sizes[KB_MAX_PARAMS + 1];
    unsigned char cat[KB_MAX_PARAMS + 1];
    const kbc_experiment *e = &t->full.exps[x->exp];
    for (size_t k = 0; k < x->n_search; k++) {
        sizes[k] = (uint32_t)e->axes[x->search[k]].n;
        cat[k] = e->plugin->desc->params[x->search[k]].type == KB_PARAM_ENUM;
    }
    sizes[x->n_search] = (uint32_t)x->n_variants;
    cat[x->n_search] = 1;
    p->search = kbc_search_new(x->strategy, sizes, cat, x->n_search + 1, x->seed + i,
                               candidate_ok, p);
    p->valid = count_valid(t, p);
    if (x->budget_n)
        p->budget = x->budget_n;
    else if (x->budget_s > 0 || x->strategy == KBC_TUNE_EXHAUSTIVE)
        p->budget = p->allowed;
    else
        p->budget = p->valid / 4 > DEFAULT_BUDGET_MIN ? p->valid / 4 : DEFAULT_BUDGET_MIN;
}

/* The outputs, and the exit code: the searches' (code), the report's
   failure, or 1 when a problem found no passing candidate (with energy
   and edp, none with its energy measured). */
static int report(tune *t, int code)
{
    int rc = kbc_tune_report(t);
    if (rc != 0)
        return rc;
    if (code == 0)
        for (size_t i = 0; i < t->n_probs; i++)
            if (!kbc_tune_has_best(t, i))
                return KBC_EXIT_FAILED;
    return code;
}

int kbc_tune(const kbc_tune_opts *o, kbc_registry *reg, FILE *out, FILE *err)
{
    tune tt;
    tune *t = &tt;
    memset(t, 0, sizeof *t);
    t->o = o;
    t->out = out;
    t->err = err;
    kbc_ini ini = {0}, ini2 = {0};
    kbc_diag d = {{0}};
    int code = KBC_EXIT_USAGE, have_screen = 0;
    cache screen_cache = {0}, full_cache = {0};
    kbc_journal js, jf;
    int have_js = 0, have_jf = 0;
    collect builds = {.t = t};
    snprintf(t->gpu_model, sizeof t->gpu_model, "none");
    t->facts[0] = sysconf(_SC_NPROCESSORS_ONLN);

    /* The experiments and their axes first, without planning a point:
       the settings and the constraints are checked before the points of
       a large space are planned (ten million take seconds). */
    if (load_ini(o, &ini, &d) != 0 || kbc_plan_build_unplanned(&ini, reg, &t->full, &d) != 0) {
        kbc_registry_print_refused(reg, err);
        fprintf(err, "kbench: %s\n", d.msg);
        goto out;
    }
    ctx c = {t, &ini, &d};
    if (find_tunings(&c) != 0)
        goto out;
    /* The problems, and what each constraint allows; a constraint that
       names a fact of the GPU is counted once a worker said hello. */
    for (size_t i = 0; i < t->n_exps; i++)
        make_problems(t, i);
    if (count_allowed(&c, 0) != 0) {
        fprintf(err, "kbench: %s\n", d.msg);
        goto out;
    }
    if (kbc_plan_points(&ini, o->device_mem, &t->full, &d) != 0) {
        fprintf(err, "kbench: %s\n", d.msg);
        goto out;
    }
    for (size_t i = 0; i < t->n_exps; i++)
        have_screen |= t->exps[i].screen > 0;
    if (have_screen && build_plan(o, reg, 1, t, &t->screen, &ini2, &d) != 0) {
        fprintf(err, "kbench: %s\n", d.msg);
        goto out;
    }

    /* The cache: what earlier tunings into DIR measured (or, for
       --simulate, the folder replayed). */
    const char *from = o->simulate ? o->simulate : o->out_dir;
    char *sp = kbc_xasprintf("%s/screen/journal.jsonl", from);
    char *fp = kbc_xasprintf("%s/full/journal.jsonl", from);
    long n_screen = cache_read(&screen_cache, sp), n_full = cache_read(&full_cache, fp);
    free(sp);
    free(fp);
    if (o->simulate && n_screen < 0 && n_full < 0) {
        fprintf(err,
                "kbench: --simulate: '%s' holds no screen/journal.jsonl nor full/journal.jsonl "
                "(give the -o folder of an earlier kbench tune).\n",
                o->simulate);
        goto out;
    }
    if (!o->simulate) {
        code = open_journals(t, have_screen, &js, &have_js, &jf, &have_jf, &d);
        if (code != 0)
            goto out;
        /* A round with no point: a worker says hello, which tells the GPU
           model and the plugins' builds that key the cache, and the facts
           a constraint may name. */
        code = round_run(t, &t->full, 0, NULL, NULL, 0, &builds, NULL);
        if (code == 0)
            code = runnable_here(t);
        if (code != 0)
            goto out;
    }

    /* The searches. */
    if (count_allowed(&c, 1) != 0) {
        fprintf(err, "kbench: %s\n", d.msg);
        code = KBC_EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < t->n_probs; i++)
        start_search(t, i);

    code = search_all(t, have_screen ? &screen_cache : &full_cache, &builds,
                      have_js ? &js : have_jf ? &jf : NULL);
    if (code == 0 || code == KBC_EXIT_INTERRUPTED) {
        int fc = final_round(t, &full_cache, &builds, have_jf ? &jf : NULL);
        if (fc != 0)
            code = fc;
    }
    if (code == 0 || code == KBC_EXIT_INTERRUPTED)
        code = report(t, code);

out:
    if (have_js)
        kbc_journal_close(&js);
    if (have_jf)
        kbc_journal_close(&jf);
    cache_free(&screen_cache);
    cache_free(&full_cache);
    for (size_t i = 0; i < t->n_probs; i++)
        kbc_search_free(t->probs[i].search);
    free(t->probs);
    for (size_t i = 0; i < t->n_exps; i++)
        kbc_expr_free(t->exps[i].constrain);
    free(t->exps);
    free(t->rows);
    kbc_plan_free(&t->full);
    kbc_plan_free(&t->screen);
    kbc_ini_free(&ini);
    kbc_ini_free(&ini2);
    return code;
}
