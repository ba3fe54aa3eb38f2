/*
 * config.c -- see config.h.
 *
 * kbc_plan_build works in passes, so that errors come out in the order a
 * user would fix them:
 *   1. plugin_path from [global] goes into the registry;
 *   2. every experiment's plugin is resolved;
 *   3. every parameter key in [global] must belong to one of those plugins;
 *   4. each experiment's keys, variants, measure settings and sweeps are
 *      checked and expanded;
 *   5. plan() runs on every point, so that a point that cannot exist (an
 *      overflow, a size the device cannot hold) is refused before anything
 *      is allocated.
 */
#define _GNU_SOURCE
#include "config.h"

#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core_keys.h"
#include "host.h"
#include "instance.h"
#include "point_plan.h"
#include "shard.h"
#include "sweep.h"

/* More points than this is a typing mistake, not an experiment; the cap
   also keeps the product of the axes far from overflowing. */
#define KBC_MAX_POINTS 10000000ULL

/* The core keys are the rows of kbc_core_keys (core_keys.c). */
#define N_CORE_KEYS kbc_n_core_keys

/* Where a key's value came from: the experiment's own section or [global]. */
typedef struct found {
    const kbc_entry *e;
    const kbc_section *s;
} found;

typedef struct ctx {
    const kbc_ini *ini;
    kbc_registry *reg;
    kbc_diag *d;
    const kbc_section *glob;
} ctx;

static found lookup(const ctx *c, const kbc_section *sec, const char *key)
{
    found f = {kbc_section_get(sec, key), sec};
    if (!f.e && c->glob) {
        f.e = kbc_section_get(c->glob, key);
        f.s = c->glob;
    }
    if (!f.e)
        f.s = NULL;
    return f;
}

/* Copies what into a buffer with a final period, so that a clause from
   elsewhere ends the sentence properly. */
static void end_sentence(char *buf, size_t n, const char *what)
{
    size_t len = strlen(what);
    snprintf(buf, n, "%s%s", what, len && what[len - 1] == '.' ? "" : ".");
}

/* The place a diagnostic names ("FILE:LINE"), built just before the
   sentence that uses it: the plan is built on one thread. */
static char at_[1200];

/* Where a key was set, for a diagnostic: "FILE:LINE", or "--set" for a
   value from the command line (kbc_ini_set, KBC_INI_LINE_CLI). */
static const char *where_set(const ctx *c, const kbc_entry *e, char *buf, size_t n)
{
    return kbc_ini_where(c->ini, e->file, e->line, buf, n);
}

/* "FILE:LINE" of a section: its own file, for one read through include. */
static const char *sec_at(const kbc_ini *ini, const kbc_section *s, char *buf, size_t n)
{
    return kbc_ini_where(ini, s->file, s->line, buf, n);
}

/* "FILE:LINE: key 'K' in [S]: what." -- naming the experiment too when the
   key was inherited from [global]. */
static int key_error(const ctx *c, found f, const kbc_section *exp, const char *fmt, ...)
    KB_PRINTF(4, 5);

static int key_error(const ctx *c, found f, const kbc_section *exp, const char *fmt, ...)
{
    char what[700], end[720], via[160] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    end_sentence(end, sizeof end, what);
    if (exp && f.s != exp)
        snprintf(via, sizeof via, " (inherited by [%s])", exp->name);
    char at[600];
    kbc_diag_set(c->d, "%s: key '%s' in [%s]%s: %s", where_set(c, f.e, at, sizeof at),
                 f.e->key, f.s->name, via, end);
    return -1;
}

/* Joins names with ", " into buf. */
static void join(char *buf, size_t n, const char *const *names, size_t count)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", names[i]);
}

/* " did you mean 'x'?" or "" */
static void suggest(char *buf, size_t n, const char *word, const char *const *cands, size_t count)
{
    const char *best = kbc_closest(word, cands, count);
    if (best)
        snprintf(buf, n, "; did you mean '%s'?", best);
    else
        buf[0] = '\0';
}

/* ------------------------------------------------------------------------
 * plugin_path
 * ---------------------------------------------------------------------- */

static int add_plugin_paths(const ctx *c)
{
    if (!c->glob)
        return 0;
    found f = {kbc_section_get(c->glob, "plugin_path"), c->glob};
    if (!f.e)
        return 0;
    /* Relative paths are relative to the INI file's folder, so that a
       configuration and its plugins can move together. */
    const char *slash = strrchr(c->ini->path, '/');
    char *dir = slash ? kbc_xstrndup(c->ini->path, (size_t)(slash - c->ini->path + 1))
                      : kbc_xstrdup("");
    char *list = kbc_xstrdup(f.e->value);
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(list, ":,", &save); tok && rc == 0;
         tok = strtok_r(NULL, ":,", &save)) {
        char *t = kbc_trim_dup(tok);
        if (*t) {
            char *full = t[0] == '/' ? kbc_xstrdup(t) : kbc_xasprintf("%s%s", dir, t);
            kbc_diag why;
            why.msg[0] = '\0';
            int added = kbc_registry_add_path(c->reg, full, &why);
            if (added == KBC_PATH_EMPTY)
                /* A warning, not an error: an empty plugin folder is a
                   normal state of a checkout before plugins are built. */
                fprintf(stderr,
                        "kbench: warning: %s: key 'plugin_path' in [%s]: the folder '%s' "
                        "holds no plugin (no .so file), so it adds nothing.\n",
                        where_set(c, f.e, at_, sizeof at_), f.s->name, full);
            else if (added < 0)
                rc = key_error(c, f, NULL, "%s", why.msg[0] ? why.msg : "the path cannot be used");
            free(full);
        }
        free(t);
    }
    free(list);
    free(dir);
    return rc;
}

/* ------------------------------------------------------------------------
 * Plugins of the experiments
 * ---------------------------------------------------------------------- */

static int resolve_plugin(const ctx *c, const kbc_section *sec, const kbc_plugin **out)
{
    found f = lookup(c, sec, "plugin");
    if (!f.e) {
        if (kbc_edit_distance(sec->name, "global") <= 2)
            kbc_diag_set(c->d,
                         "%s: section [%s] has no key 'plugin'; did you mean [global]?",
                         sec_at(c->ini, sec, at_, sizeof at_), sec->name);
        else
            kbc_diag_set(c->d,
                         "%s: experiment [%s] has no key 'plugin' (nor does [global]); add "
                         "plugin = NAME.",
                         sec_at(c->ini, sec, at_, sizeof at_), sec->name);
        return -1;
    }
    if (!*f.e->value)
        return key_error(c, f, sec, "the value is empty; write plugin = NAME");
    const kbc_plugin *pl = kbc_registry_find(c->reg, f.e->value);
    if (pl) {
        *out = pl;
        return 0;
    }
    size_t n = c->reg->n;
    const char **names = kbc_xcalloc(n ? n : 1, sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = c->reg->items[i].desc->name;
    char list[400], sug[120];
    join(list, sizeof list, names, n);
    suggest(sug, sizeof sug, f.e->value, names, n);
    free(names);
    if (n)
        key_error(c, f, sec, "no plugin named '%s' was found (searched: %s)%s", f.e->value, list,
                  sug);
    else
        key_error(c, f, sec,
                  "no plugin named '%s' was found, and no plugins were found at all (build "
                  "them, or set plugin_path or KBENCH_PLUGIN_PATH)",
                  f.e->value);
    return -1;
}

/* A parameter key in [global] is fine when some experiment's plugin
   declares it; otherwise it is a typing mistake and gets a suggestion. */
static int check_global_keys(const ctx *c, const kbc_plugin *const *plugins, size_t n_exps)
{
    if (!c->glob)
        return 0;
    for (size_t k = 0; k < c->glob->n; k++) {
        const kbc_entry *e = &c->glob->entries[k];
        const kbc_core_key *ck = kbc_core_key_find(e->key);
        if (ck && !(ck->where & KBC_IN_GLOBAL)) {
            char at[600];
            kbc_diag_set(c->d, "%s: key '%s' is read from experiment sections only; move it "
                               "out of [global].",
                         where_set(c, e, at, sizeof at), e->key);
            return -1;
        }
        if (ck)
            continue;
        int declared = 0;
        size_t n_cands = N_CORE_KEYS;
        for (size_t x = 0; x < n_exps; x++) {
            const kb_plugin *d = plugins[x]->desc;
            n_cands += d->n_params;
            for (uint32_t i = 0; i < d->n_params; i++)
                if (strcmp(d->params[i].name, e->key) == 0)
                    declared = 1;
        }
        if (declared)
            continue;
        const char **cands = kbc_xcalloc(n_cands, sizeof *cands);
        const char **used = kbc_xcalloc(n_exps ? n_exps : 1, sizeof *used);
        size_t m = 0, n_used = 0;
        for (size_t i = 0; i < N_CORE_KEYS; i++)
            cands[m++] = kbc_core_keys[i].name;
        for (size_t x = 0; x < n_exps; x++) {
            const kb_plugin *d = plugins[x]->desc;
            for (uint32_t i = 0; i < d->n_params; i++)
                cands[m++] = d->params[i].name;
            int seen = 0;
            for (size_t j = 0; j < n_used; j++)
                seen |= strcmp(used[j], d->name) == 0;
            if (!seen)
                used[n_used++] = d->name;
        }
        char list[300], sug[120];
        join(list, sizeof list, used, n_used);
        suggest(sug, sizeof sug, e->key, cands, m);
        char at[600];
        kbc_diag_set(c->d,
                     "%s: unknown key '%s' in [global] (no experiment's plugin has such a "
                     "parameter: %s)%s",
                     where_set(c, e, at, sizeof at), e->key, list, sug[0] ? sug : ".");
        free(cands);
        free(used);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * One experiment
 * ---------------------------------------------------------------------- */

static int variant_index(const kb_plugin *d, const char *name)
{
    for (uint32_t i = 0; i < d->n_variants; i++)
        if (strcmp(d->variants[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* "'shufle' is not a variant of plugin 'reduce' (it has: ...); did you
   mean 'shuffle'?" */
static int unknown_variant(const ctx *c, found f, const kbc_section *sec, const kb_plugin *d,
                           const char *name)
{
    const char **names = kbc_xcalloc(d->n_variants ? d->n_variants : 1, sizeof *names);
    for (uint32_t i = 0; i < d->n_variants; i++)
        names[i] = d->variants[i].name;
    char list[600], sug[120];
    join(list, sizeof list, names, d->n_variants);
    suggest(sug, sizeof sug, name, names, d->n_variants);
    free(names);
    return key_error(c, f, sec, "'%s' is not a variant of plugin '%s' (it has: %s)%s", name,
                     d->name, list, sug);
}

/* A glob in a list of variants (`cpu*`, as --experiment takes them):
   every variant it matches, in the plugin's order, that the list has not
   selected yet.  A glob that matches nothing is a typo, not an empty run. */
static int add_variant_glob(const ctx *c, found f, const kbc_section *sec, kbc_experiment *x,
                            const char *glob)
{
    const kb_plugin *d = x->plugin->desc;
    int hits = 0;
    for (uint32_t i = 0; i < d->n_variants && i < KB_MAX_VARIANTS; i++) {
        if (fnmatch(glob, d->variants[i].name, 0) != 0)
            continue;
        hits++;
        int have = 0;
        for (uint32_t k = 0; k < x->n_variants && !have; k++)
            have = x->variants[k] == i;
        if (!have)
            x->variants[x->n_variants++] = i;
    }
    if (hits)
        return 0;
    const char **names = kbc_xcalloc(d->n_variants ? d->n_variants : 1, sizeof *names);
    for (uint32_t i = 0; i < d->n_variants; i++)
        names[i] = d->variants[i].name;
    char list[600];
    join(list, sizeof list, names, d->n_variants);
    free(names);
    return key_error(c, f, sec, "'%s' matches no variant of plugin '%s' (it has: %s)", glob,
                     d->name, list);
}

static int parse_variants(const ctx *c, const kbc_section *sec, kbc_experiment *x)
{
    const kb_plugin *d = x->plugin->desc;
    found f = lookup(c, sec, "variants");
    if (!f.e || strcasecmp(f.e->value, "all") == 0) {
        for (uint32_t i = 0; i < d->n_variants && i < KB_MAX_VARIANTS; i++)
            x->variants[x->n_variants++] = i;
        return 0;
    }
    if (!*f.e->value)
        return key_error(c, f, sec, "the value is empty; write all or a list of variants");
    char *list = kbc_xstrdup(f.e->value);
    int rc = 0;
    char *start = list;
    while (rc == 0) {
        char *comma = strchr(start, ',');
        if (comma)
            *comma = '\0';
        char *name = kbc_trim_dup(start);
        int v = *name ? variant_index(d, name) : -1;
        if (v < 0 && strpbrk(name, "*?[")) {
            rc = add_variant_glob(c, f, sec, x, name);
        } else if (v < 0 && strcasecmp(name, "all") == 0) {
            /* "all" selects every variant, so it cannot be one of several. */
            rc = key_error(c, f, sec,
                           "'all' stands alone: it selects every variant, so write either "
                           "'variants = all' or a list of variant names without it (the list "
                           "was '%s')",
                           f.e->value);
        } else if (!*name) {
            rc = key_error(c, f, sec,
                           "the list '%s' has an empty element (two commas in a row, or a "
                           "comma at an end)",
                           f.e->value);
        } else if (v < 0) {
            rc = unknown_variant(c, f, sec, d, name);
        } else {
            for (uint32_t k = 0; k < x->n_variants; k++)
                if (x->variants[k] == (uint32_t)v)
                    rc = key_error(c, f, sec, "variant '%s' is listed twice", name);
            if (rc == 0)
                x->variants[x->n_variants++] = (uint32_t)v;
        }
        free(name);
        if (!comma)
            break;
        start = comma + 1;
    }
    free(list);
    return rc;
}

/* baseline and reference: a variant of the plugin that is also selected,
   or `none` for the reference.  A narrowing from the command line never
   fights the file: when --variants (or --set variants=) leaves out the
   variant the file names, the key is dropped (*dropped says which, for the
   note kbc_plan_notes prints) and the baseline falls back to the first
   selected variant.  A baseline or reference typed on the command line
   itself must be among the variants. */
static int pick_variant(const ctx *c, const kbc_section *sec, kbc_experiment *x, const char *key,
                        int *out, int *dropped)
{
    const kb_plugin *d = x->plugin->desc;
    int is_reference = strcmp(key, "reference") == 0;
    found f = lookup(c, sec, key);
    if (!f.e)
        return 0;
    if (!*f.e->value)
        return key_error(c, f, sec, "the value is empty; name one of the selected variants%s",
                         is_reference ? ", or none for no reference" : "");
    int v = variant_index(d, f.e->value);
    if (v < 0 && is_reference && strcasecmp(f.e->value, "none") == 0)
        return 0;
    if (v < 0)
        return unknown_variant(c, f, sec, d, f.e->value);
    for (uint32_t k = 0; k < x->n_variants; k++) {
        if (x->variants[k] == (uint32_t)v) {
            *out = v;
            return 0;
        }
    }
    found list_key = lookup(c, sec, "variants");
    if (list_key.e && list_key.e->line < 0 && f.e->line >= 0) {
        *dropped = v;
        x->dropped_by =
            list_key.e->line == KBC_INI_LINE_VARIANTS ? "--variants" : "--set variants=";
        return 0;
    }
    const char *names[KB_MAX_VARIANTS];
    for (uint32_t k = 0; k < x->n_variants; k++)
        names[k] = d->variants[x->variants[k]].name;
    char list[600], where[40] = "'variants'";
    join(list, sizeof list, names, x->n_variants);
    if (list_key.e && list_key.e->line < 0)
        kbc_ini_where(c->ini, NULL, list_key.e->line, where, sizeof where);
    return key_error(c, f, sec, "'%s' is not among the selected variants (%s); add it to %s%s",
                     f.e->value, list, where,
                     is_reference ? ", or write none for no reference" : "");
}

/* One core key with a single typed value, or its default. */
static int core_value(const ctx *c, const kbc_section *sec, const kbc_core_key *k,
                      kb_value *out)
{
    const kb_param *p = k->param;
    found f = lookup(c, sec, p->name);
    char why[400];
    if (!f.e) {
        if (kbc_core_key_parse(k, p->def, out, why, sizeof why) == 0)
            return 0;
        kbc_diag_set(c->d, "%s: internal error: the default of '%s' is bad: %s.", c->ini->path,
                     p->name, why);
        return -1;
    }
    if (strchr(f.e->value, ',') || strstr(f.e->value, "..")) {
        /* Core keys are the experiment's settings, not axes of its sweep:
           comparing two is comparing two experiments, and the sentence
           says how to write them. */
        char v1[64], v2[64];
        size_t l1 = strcspn(f.e->value, ",");
        if (strstr(f.e->value, "..") && (!strchr(f.e->value, ',') ||
                                         strstr(f.e->value, "..") < strchr(f.e->value, ',')))
            l1 = (size_t)(strstr(f.e->value, "..") - f.e->value);
        snprintf(v1, sizeof v1, "%.*s", (int)(l1 < 60 ? l1 : 60), f.e->value);
        const char *rest = f.e->value + l1 + (f.e->value[l1] == ',' ? 1 : 2);
        size_t l2 = strcspn(rest, ",.:");
        snprintf(v2, sizeof v2, "%.*s", (int)(l2 < 60 ? l2 : 60), rest);
        char *a = kbc_trim_dup(v1), *b = kbc_trim_dup(v2);
        int rc = key_error(c, f, sec,
                           "'%s' is a sweep, but '%s' takes one value (it is a setting of the "
                         "experiment, not a parameter); to compare them, write one experiment "
                         "per value, each with the same other keys: [%s-%s-%s] with %s = %s, "
                         "and [%s-%s-%s] with %s = %s",
                         f.e->value, p->name, sec->name, p->name, a, p->name, a, sec->name,
                         p->name, b, p->name, b);
        free(a);
        free(b);
        return rc;
    }
    if (kbc_core_key_parse(k, f.e->value, out, why, sizeof why) != 0)
        return key_error(c, f, sec, "%s", why);
    return 0;
}

/* Every measure row of the core-key table, in table order: its value or
   its default, into its field. */
static int parse_measure(const ctx *c, const kbc_section *sec, kbc_measure *m)
{
    for (size_t i = 0; i < kbc_n_core_keys; i++) {
        const kbc_core_key *k = &kbc_core_keys[i];
        if (k->kind != KBC_KIND_MEASURE)
            continue;
        kb_value v;
        if (core_value(c, sec, k, &v))
            return -1;
        kbc_core_key_store_value(k, v, m);
    }
    /* A cold cache flushes the L2 before every run, so no two runs can be
       back to back: a count asked for with it cannot be honoured.  (auto
       leaves cold rows single, and says so in each row.) */
    if (m->cache_cold && m->batch >= 2) {
        found f = lookup(c, sec, "batch");
        return key_error(c, f, sec,
                         "batch = %d cannot be used with cache = cold, which flushes the L2 "
                         "before every run, so runs cannot be back to back; write batch = off "
                         "(or auto, which times cold runs singly)",
                         m->batch);
    }
    return 0;
}

/* Every key written in the experiment's own section must mean something. */
static int check_own_keys(const ctx *c, const kbc_section *sec, const kb_plugin *d)
{
    for (size_t k = 0; k < sec->n; k++) {
        const kbc_entry *e = &sec->entries[k];
        found f = {e, sec};
        const kbc_core_key *ck = kbc_core_key_find(e->key);
        if (ck && !(ck->where & KBC_IN_EXPERIMENT))
            return key_error(c, f, sec, "%s is read from [global] only; move it there", ck->name);
        if (ck)
            continue;
        int known = 0;
        for (uint32_t i = 0; i < d->n_params; i++)
            known |= strcmp(d->params[i].name, e->key) == 0;
        if (known)
            continue;
        const char **cands = kbc_xcalloc(N_CORE_KEYS + d->n_params, sizeof *cands);
        size_t m = 0;
        for (size_t i = 0; i < N_CORE_KEYS; i++)
            cands[m++] = kbc_core_keys[i].name;
        for (uint32_t i = 0; i < d->n_params; i++)
            cands[m++] = d->params[i].name;
        char sug[120];
        suggest(sug, sizeof sug, e->key, cands, m);
        free(cands);
        char at[600];
        kbc_diag_set(c->d, "%s: unknown key '%s' in [%s] (plugin '%s' has no such parameter)%s",
                     where_set(c, e, at, sizeof at), e->key, sec->name, d->name,
                     sug[0] ? sug : ".");
        return -1;
    }
    return 0;
}

/* zip = a, b, ...: ties the named parameters' axes to the first one's, so
   that they advance together; the point count is recomputed over the axes
   of their own.  Every name must be a parameter of the plugin, named once,
   and every axis of the group as long as the first. */
static int tie_axes(const ctx *c, const kbc_section *sec, kbc_experiment *x)
{
    found f = lookup(c, sec, "zip");
    if (!f.e)
        return 0;
    const kb_plugin *d = x->plugin->desc;
    char *copy = kbc_xstrdup(f.e->value);
    int lead = -1, members = 0, rc = 0;
    for (char *tok = strtok(copy, ","); tok && rc == 0; tok = strtok(NULL, ",")) {
        char *name = kbc_trim_dup(tok);
        int k = -1;
        for (uint32_t i = 0; i < d->n_params; i++)
            if (strcmp(d->params[i].name, name) == 0)
                k = (int)i;
        if (k < 0)
            rc = key_error(c, f, sec, "'%s' is not a parameter of plugin '%s'", name, d->name);
        else if (k == lead || x->axes[k].lead_plus1)
            rc = key_error(c, f, sec, "'%s' is named twice", name);
        else if (lead < 0)
            lead = k;
        else if (x->axes[k].n != x->axes[lead].n)
            rc = key_error(c, f, sec,
                           "'%s' has %zu values and '%s' %zu; the parameters of a zip advance "
                           "together, so their sweeps must be equally long",
                           name, x->axes[k].n, d->params[lead].name, x->axes[lead].n);
        else
            x->axes[k].lead_plus1 = (uint32_t)lead + 1;
        members += rc == 0;
        free(name);
    }
    free(copy);
    if (rc == 0 && members < 2)
        rc = key_error(c, f, sec, "a zip needs at least two parameters (zip = m, n, k)");
    if (rc != 0)
        return rc;
    x->n_points = 1;
    for (uint32_t i = 0; i < d->n_params; i++)
        if (!x->axes[i].lead_plus1)
            x->n_points *= x->axes[i].n;
    return 0;
}

static int build_axes(const ctx *c, const kbc_section *sec, kbc_experiment *x)
{
    const kbc_plugin *pl = x->plugin;
    const kb_plugin *d = pl->desc;
    x->axes = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *x->axes);
    x->n_points = 1;
    char why[400];
    for (uint32_t i = 0; i < d->n_params; i++) {
        const kb_param *p = &d->params[i];
        kbc_axis *a = &x->axes[i];
        a->param = p;
        found f = lookup(c, sec, p->name);
        if (f.e) {
            if (kbc_sweep_parse(p, f.e->value, KBC_MAX_POINTS, &a->values, &a->n, why,
                                sizeof why) != 0)
                return key_error(c, f, sec, "%s", why);
            a->line = f.e->line;
        } else if (!p->def) {
            kbc_diag_set(c->d,
                         "%s: experiment [%s]: parameter '%s' of plugin '%s' has no default, "
                         "so it must be set.",
                         sec_at(c->ini, sec, at_, sizeof at_), sec->name, p->name, d->name);
            return -1;
        } else {
            a->values = kbc_xmalloc(sizeof *a->values);
            a->n = 1;
            if (kbc_value_parse(p, p->def, &a->values[0], why, sizeof why) != 0) {
                kbc_diag_set(c->d,
                             "%s: experiment [%s]: plugin '%s' (%s) declares the default "
                             "'%s' for its parameter '%s', which is invalid: %s; the plugin "
                             "must be fixed.",
                             sec_at(c->ini, sec, at_, sizeof at_), sec->name, d->name, pl->path, p->def,
                             p->name, why);
                return -1;
            }
        }
        if (x->n_points * a->n > KBC_MAX_POINTS) {
            char list[400] = "";
            size_t used = 0;
            for (uint32_t j = 0; j <= i && used < sizeof list; j++)
                if (x->axes[j].n > 1)
                    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s: %zu values",
                                             used ? ", " : "", x->axes[j].param->name,
                                             x->axes[j].n);
            kbc_diag_set(c->d,
                         "%s: experiment [%s] expands to more than %llu points (%s); narrow "
                         "a sweep.",
                         sec_at(c->ini, sec, at_, sizeof at_), sec->name, KBC_MAX_POINTS, list);
            return -1;
        }
        x->n_points *= a->n;
    }
    return tie_axes(c, sec, x);
}

/* ------------------------------------------------------------------------
 * plan() on every point
 * ---------------------------------------------------------------------- */

/* "n=1024, dtype=f32" */
static void point_text(const kbc_experiment *x, const kb_value *values, char *buf, size_t n)
{
    const kb_plugin *d = x->plugin->desc;
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < d->n_params && used < n; i++) {
        char v[64];
        kbc_value_format(&d->params[i], values[i], v, sizeof v);
        used += (size_t)snprintf(buf + used, n - used, "%s%s=%s", i ? ", " : "",
                                 d->params[i].name, v);
    }
}

/* The machine's physical memory in bytes, or 0 when it cannot be told. */
static uint64_t host_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 0;
    return (uint64_t)pages * (uint64_t)page;
}

/* The mask of the experiment's variants: the device memory its points
   are checked and shown with (kbc_work_device_bytes). */
static uint64_t experiment_mask(const kbc_experiment *x)
{
    uint64_t mask = 0;
    for (uint32_t i = 0; i < x->n_variants; i++)
        mask |= KB_VARIANT_BIT(x->variants[i]);
    return mask;
}

static int check_points(const ctx *c, kbc_experiment *x, uint64_t device_mem)
{
    /* Host memory is checked like device memory, against what the machine
       has: a point that could never be set up fails the dry run, not the
       run an hour later. */
    uint64_t host_mem = host_memory();
    const kb_plugin *d = x->plugin->desc;
    if (!d->ops->plan) {
        kbc_diag_set(c->d, "%s: experiment [%s]: plugin '%s' has no plan() function.",
                     kbc_ini_where(c->ini, x->file, x->line, at_, sizeof at_), x->name, d->name);
        return -1;
    }
    kbc_experiment_plan_points(x);
    kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
    int rc = 0;
    char first_refusal[1400] = "";
    uint64_t none_run = 0;
    kbc_point_plan pp;
    for (uint64_t p = 0; p < x->n_points && rc == 0; p++) {
        kbc_plan_point(x, p, &pp);
        /* A refused point (a limit of the kernel, a shape it cannot take)
           becomes an `invalid` row with the plugin's sentence, and a point
           whose plan() failed an `error` row; the sweep goes on.  So does a
           point refused to some variants (kbc_plan_variant).  Only an
           experiment where nothing at all would run is a mistake. */
        int runs = kbc_plan_any_runs(&pp, experiment_mask(x));
        none_run += !runs && pp.status != KBC_PLAN_FAILED;
        if (!runs && pp.status != KBC_PLAN_FAILED && !first_refusal[0]) {
            char pt[600], what[700], named[800];
            const char *why = pp.sentence;
            if (pp.status == KBC_PLAN_RUNS) {
                /* Every variant refused alone: the first one's sentence. */
                kbc_plan_variant(&pp, x->variants[0], &why);
                snprintf(named, sizeof named, "variant '%s': %s",
                         d->variants[x->variants[0]].name, why);
                why = named;
            }
            kbc_experiment_point(x, p, values);
            point_text(x, values, pt, sizeof pt);
            end_sentence(what, sizeof what, why);
            snprintf(first_refusal, sizeof first_refusal, "%s: %s", pt, what);
        }
        if (!runs)
            continue;
        uint64_t dev_bytes =
            kbc_work_device_bytes(&pp.work, experiment_mask(x) & ~pp.refusals.mask);
        int too_big_dev = device_mem > 0 && dev_bytes > device_mem;
        int too_big_host = host_mem > 0 && pp.work.host_bytes > host_mem;
        if (!too_big_dev && !too_big_host)
            continue;
        char pt[600], what[700], need[32], have[32];
        kbc_experiment_point(x, p, values);
        point_text(x, values, pt, sizeof pt);
        if (too_big_dev)
            snprintf(what, sizeof what,
                     "it needs %s of device memory and the device has %s.",
                     kbc_human_bytes(dev_bytes, need, sizeof need),
                     kbc_human_bytes(device_mem, have, sizeof have));
        else
            snprintf(what, sizeof what,
                     "it needs %s of host memory and this machine has %s.",
                     kbc_human_bytes(pp.work.host_bytes, need, sizeof need),
                     kbc_human_bytes(host_mem, have, sizeof have));
        kbc_diag_set(c->d, "%s: experiment [%s] point %s: %s", kbc_ini_where(c->ini, x->file, x->line, at_, sizeof at_),
                     x->name, pt, what);
        rc = -1;
    }
    if (rc == 0 && x->n_points > 0 && none_run == x->n_points) {
        if (x->n_points == 1)
            kbc_diag_set(c->d, "%s: experiment [%s] point %s",
                         kbc_ini_where(c->ini, x->file, x->line, at_, sizeof at_), x->name,
                         first_refusal);
        else
            kbc_diag_set(c->d,
                         "%s: experiment [%s]: plugin '%s' refuses every one of its %llu "
                         "points, so nothing would run (the first, %s)",
                         kbc_ini_where(c->ini, x->file, x->line, at_, sizeof at_), x->name,
                         d->name,
                         (unsigned long long)x->n_points, first_refusal);
        rc = -1;
    }
    free(values);
    return rc;
}

/* ------------------------------------------------------------------------
 * The plan
 * ---------------------------------------------------------------------- */

/* kbc_plan_build and kbc_plan_build_unplanned: with plan_points, each
   point is planned and checked (check_points). */
static int build(const kbc_ini *ini, kbc_registry *reg, uint64_t device_mem, int plan_points,
                 kbc_plan *plan, kbc_diag *d)
{
    memset(plan, 0, sizeof *plan);
    plan->path = kbc_xstrdup(ini->path);
    ctx c = {ini, reg, d, kbc_ini_section(ini, "global")};

    /* [Global] or [GLOBAL] would silently become an experiment without a
       plugin; say what was meant instead. */
    for (size_t i = 0; i < ini->n; i++) {
        const kbc_section *s = &ini->sections[i];
        if (strcasecmp(s->name, "global") == 0 && strcmp(s->name, "global") != 0) {
            kbc_diag_set(d,
                         "%s: section [%s]: section names are case-sensitive; the defaults "
                         "section is [global].",
                         sec_at(ini, s, at_, sizeof at_), s->name);
            goto fail;
        }
    }

    if (add_plugin_paths(&c) != 0)
        goto fail;

    size_t n_exps = 0;
    for (size_t i = 0; i < ini->n; i++)
        if (&ini->sections[i] != c.glob)
            n_exps++;
    if (n_exps == 0) {
        kbc_diag_set(d,
                     "%s: there are no experiments (every section but [global] is one); add a "
                     "section such as [first] with plugin = NAME.",
                     ini->path);
        goto fail;
    }
    plan->exps = kbc_xcalloc(n_exps, sizeof *plan->exps);
    const kbc_section **secs = kbc_xcalloc(n_exps, sizeof *secs);
    const kbc_plugin **plugins = kbc_xcalloc(n_exps, sizeof *plugins);
    size_t k = 0;
    for (size_t i = 0; i < ini->n; i++)
        if (&ini->sections[i] != c.glob)
            secs[k++] = &ini->sections[i];

    int rc = 0;
    for (size_t i = 0; i < n_exps && rc == 0; i++)
        rc = resolve_plugin(&c, secs[i], &plugins[i]);
    if (rc == 0)
        rc = check_global_keys(&c, plugins, n_exps);

    for (size_t i = 0; i < n_exps && rc == 0; i++) {
        const kbc_section *sec = secs[i];
        kbc_experiment *x = &plan->exps[plan->n++];
        x->name = kbc_xstrdup(sec->name);
        x->line = sec->line;
        x->file = sec->file;
        x->plugin = plugins[i];
        x->baseline = x->reference = -1;
        x->dropped_baseline = x->dropped_reference = -1;
        found desc = lookup(&c, sec, "description");
        x->description = desc.e ? kbc_xstrdup(desc.e->value) : NULL;

        if (check_own_keys(&c, sec, x->plugin->desc) || parse_variants(&c, sec, x) ||
            pick_variant(&c, sec, x, "baseline", &x->baseline, &x->dropped_baseline) ||
            pick_variant(&c, sec, x, "reference", &x->reference, &x->dropped_reference) ||
            parse_measure(&c, sec, &x->measure) || build_axes(&c, sec, x)) {
            rc = -1;
            break;
        }
        if (x->baseline < 0 && x->n_variants > 0)
            x->baseline = (int)x->variants[0];
        if (plan->n_points + x->n_points > KBC_MAX_POINTS) {
            kbc_diag_set(d,
                         "%s: experiment [%s] brings the plan to more than %llu points; "
                         "narrow a sweep or split the file.",
                         sec_at(ini, sec, at_, sizeof at_), sec->name, KBC_MAX_POINTS);
            rc = -1;
            break;
        }
        plan->n_points += x->n_points;
    }
    for (size_t i = 0; i < plan->n && rc == 0 && plan_points; i++)
        rc = check_points(&c, &plan->exps[i], device_mem);

    free(secs);
    free(plugins);
    if (rc == 0)
        return 0;
fail:
    kbc_plan_free(plan);
    return -1;
}

int kbc_plan_build(const kbc_ini *ini, kbc_registry *reg, uint64_t device_mem, kbc_plan *plan,
                   kbc_diag *d)
{
    return build(ini, reg, device_mem, 1, plan, d);
}

int kbc_plan_build_unplanned(const kbc_ini *ini, kbc_registry *reg, kbc_plan *plan,
                             kbc_diag *d)
{
    return build(ini, reg, 0, 0, plan, d);
}

int kbc_plan_points(const kbc_ini *ini, uint64_t device_mem, kbc_plan *plan, kbc_diag *d)
{
    ctx c = {ini, NULL, d, kbc_ini_section(ini, "global")};
    for (size_t i = 0; i < plan->n; i++)
        if (check_points(&c, &plan->exps[i], device_mem) != 0)
            return -1;
    return 0;
}

void kbc_plan_free(kbc_plan *plan)
{
    if (!plan)
        return;
    for (size_t i = 0; i < plan->n; i++) {
        kbc_experiment *x = &plan->exps[i];
        kbc_experiment_unplan(x);
        if (x->axes) {
            for (uint32_t j = 0; j < x->plugin->desc->n_params; j++)
                free(x->axes[j].values);
            free(x->axes);
        }
        free(x->name);
        free(x->description);
    }
    free(plan->exps);
    free(plan->path);
    memset(plan, 0, sizeof *plan);
}

void kbc_experiment_point(const kbc_experiment *e, uint64_t p, kb_value *values)
{
    /* Mixed radix over the axes of their own, the last parameter the
       fastest digit; a zipped axis takes its group's first axis's index. */
    uint32_t np = e->plugin->desc->n_params;
    size_t idx[KB_MAX_PARAMS] = {0};
    for (uint32_t i = np; i-- > 0;) {
        const kbc_axis *a = &e->axes[i];
        if (a->lead_plus1)
            continue;
        idx[i] = (size_t)(p % a->n);
        p /= a->n;
    }
    for (uint32_t i = 0; i < np; i++) {
        const kbc_axis *a = &e->axes[i];
        values[i] = a->values[a->lead_plus1 ? idx[a->lead_plus1 - 1] : idx[i]];
    }
}

/* A variant's uses mask with zip groups whole: a group counts as used when
   any of its parameters is (its axes move as one). */
static uint64_t uses_with_zip(const kbc_experiment *e, uint64_t uses)
{
    if (!uses || !e->axes)
        return uses;
    const kb_plugin *d = e->plugin->desc;
    for (uint32_t k = 0; k < d->n_params; k++)
        if (e->axes[k].lead_plus1 && (uses & KB_USES(k)))
            uses |= KB_USES(e->axes[k].lead_plus1 - 1);
    for (uint32_t k = 0; k < d->n_params; k++)
        if (e->axes[k].lead_plus1 && (uses & KB_USES(e->axes[k].lead_plus1 - 1)))
            uses |= KB_USES(k);
    return uses;
}

uint64_t kbc_variant_uses(const kbc_experiment *e, uint32_t v)
{
    const kb_plugin *d = e->plugin->desc;
    return uses_with_zip(e, v < d->n_variants ? d->variants[v].uses : 0);
}

/* Seconds for a person: "45 s", "12 min", "3.2 h". */
static const char *seconds_text(double s, char *buf, size_t n)
{
    if (s < 9.95)
        snprintf(buf, n, "%.1f s", s);
    else if (s < 90)
        snprintf(buf, n, "%.0f s", s);
    else if (s < 5400)
        snprintf(buf, n, "%.0f min", s / 60);
    else
        snprintf(buf, n, "%.1f h", s / 3600);
    return buf;
}

void kbc_plan_print(const kbc_plan *plan, FILE *out)
{
    kbc_plan_print_with(plan, NAN, NULL, out);
}

/* text on out, cut at spaces into lines of at most 96 columns, the lines
   after the first indented by indent spaces. */
static void print_wrapped(FILE *out, const char *text, int indent)
{
    const int width = 96;
    int col = 0;
    for (const char *p = text; *p;) {
        size_t word = strcspn(p, " ");
        if (col > indent && col + 1 + (int)word > width) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > 0 && p != text) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)word, p);
        col += (int)word;
        p += word;
        p += strspn(p, " ");
    }
    fputc('\n', out);
}

/* The totals, as the run counts them, and the time in one sentence: an
   earlier run's of the same plan when there is one (earlier_s), else the
   model's, beside the budgets' bound. */
static void print_totals(const kbc_plan *plan, double earlier_s, const char *earlier_from,
                         FILE *out)
{
    uint64_t rows = 0, runs = kbc_plan_variant_runs(plan);
    for (size_t i = 0; i < plan->n; i++)
        rows += plan->exps[i].n_points * plan->exps[i].n_variants;
    char *line = kbc_xasprintf("%zu experiment%s, %llu point%s, %llu variant run%s", plan->n,
                               plan->n == 1 ? "" : "s", (unsigned long long)plan->n_points,
                               plan->n_points == 1 ? "" : "s", (unsigned long long)runs,
                               runs == 1 ? "" : "s");
    if (runs != rows) {
        char *more = kbc_xasprintf("%s for %llu rows (a variant that ignores a swept parameter "
                                   "runs once for the points that differ only in it; a point "
                                   "plan() refuses runs nothing)",
                                   line, (unsigned long long)rows);
        free(line);
        line = more;
    }
    fputc('\n', out);
    print_wrapped(out, line, 2);
    free(line);
    double timed_cap, rest, energy, expected;
    kbc_plan_estimate(plan, &timed_cap, &rest, &energy, &expected);
    char a[32], e[32], en[32];
    if (isfinite(earlier_s))
        line = kbc_xasprintf("time: about %s on one worker, as the last run of this plan took "
                             "(%s); the timed runs take at most %s (each variant's budget, at "
                             "each point where it runs)",
                             seconds_text(earlier_s, e, sizeof e), earlier_from,
                             seconds_text(timed_cap, a, sizeof a));
    else
        line = kbc_xasprintf("time: about %s on one worker (a model: the timed runs, and each "
                             "point's inputs and checks on the host at about 1 GB/s; a GPU "
                             "worker's start and ceilings come on top), at most %s of timed "
                             "runs if every variant spends its budget at each point where it "
                             "runs",
                             seconds_text(expected, e, sizeof e),
                             seconds_text(timed_cap, a, sizeof a));
    print_wrapped(out, line, 6);
    free(line);
    /* The windows per row: one count where the experiments with energy
       agree, else the most of them. */
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < plan->n; i++) {
        const kbc_measure *m = &plan->exps[i].measure;
        if (m->energy == KBC_ENERGY_OFF)
            continue;
        lo = m->energy_windows < lo ? m->energy_windows : lo;
        hi = m->energy_windows > hi ? m->energy_windows : hi;
    }
    if (energy > 0)
        fprintf(out, "      (the energy windows are %s of it: %s%u windows of at least\n"
                     "      energy_window for each CUDA variant at each point; docs/energy.md)\n",
                seconds_text(energy, en, sizeof en), lo < hi ? "up to " : "", hi);
}

void kbc_plan_print_with(const kbc_plan *plan, double earlier_s, const char *earlier_from,
                         FILE *out)
{
    for (size_t i = 0; i < plan->n; i++) {
        const kbc_experiment *x = &plan->exps[i];
        const kb_plugin *d = x->plugin->desc;
        const kbc_measure *m = &x->measure;

        fprintf(out, "%s[%s]  plugin %s (%s)\n", i ? "\n" : "", x->name, d->name,
                x->plugin->path ? x->plugin->path : "?");
        if (x->description)
            fprintf(out, "  description: %s\n", x->description);
        fprintf(out, "  variants:");
        for (uint32_t k = 0; k < x->n_variants; k++)
            fprintf(out, "%s %s", k ? "," : "", d->variants[x->variants[k]].name);
        if (x->baseline >= 0)
            fprintf(out, "  (baseline %s", d->variants[x->baseline].name);
        if (x->reference >= 0)
            fprintf(out, ", reference %s", d->variants[x->reference].name);
        fprintf(out, "%s\n", x->baseline >= 0 ? ")" : "");
        fprintf(out,
                "  measure: warmup %u, runs %u, budget %g s, seed %llu, copies %s, cpu_threads "
                "%d\n",
                m->warmup, m->runs, m->budget_s, (unsigned long long)m->seed,
                m->include_copies ? "timed" : "not timed", m->cpu_threads);
        if (m->cpu_threads == 0)
            fprintf(out, "  (cpu_threads 0: auto, every CPU of the machine that runs it)\n");
        if (m->batch != KBC_BATCH_OFF || m->cache_cold) {
            char b[16];
            snprintf(b, sizeof b, "%d", m->batch);
            fprintf(out, "  cache %s, batch %s\n", m->cache_cold ? "cold" : "hot",
                    m->batch == KBC_BATCH_OFF    ? "off"
                    : m->batch == KBC_BATCH_AUTO ? "auto"
                                                 : b);
        }
        if (m->energy != KBC_ENERGY_OFF)
            fprintf(out, "  energy %s, energy_window %g s, energy_windows %u\n",
                    kbc_key_energy.choices[m->energy], m->energy_window_s, m->energy_windows);
        if (m->noise_pct > 0)
            fprintf(out,
                    "  noise: stop at %g%% (runs not used), min_runs %u, max_runs %u, min_time "
                    "%g s\n",
                    m->noise_pct, m->min_runs, m->max_runs, m->min_time_s);

        /* Column widths: the widest of the name and its values. */
        int *w = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *w);
        char buf[64];
        for (uint32_t j = 0; j < d->n_params; j++) {
            w[j] = (int)strlen(d->params[j].name);
            for (size_t v = 0; v < x->axes[j].n; v++) {
                int len = (int)strlen(kbc_value_format(&d->params[j], x->axes[j].values[v], buf,
                                                       sizeof buf));
                if (len > w[j])
                    w[j] = len;
            }
        }
        int wp = 5;
        for (uint64_t t = x->n_points; t >= 100000; t /= 10)
            wp++;
        fprintf(out, "  %*s", wp, "point");
        for (uint32_t j = 0; j < d->n_params; j++)
            fprintf(out, "  %-*s", w[j], d->params[j].name);
        fprintf(out, "  | %-10s  %-10s  %s\n", "read", "written", "device");

        kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
        kbc_point_plan pp;
        uint64_t refused_runs = 0;
        for (uint64_t p = 0; p < x->n_points; p++) {
            kbc_experiment_point(x, p, values);
            fprintf(out, "  %*llu", wp, (unsigned long long)p);
            for (uint32_t j = 0; j < d->n_params; j++)
                fprintf(out, "  %-*s", w[j],
                        kbc_value_format(&d->params[j], values[j], buf, sizeof buf));
            kbc_plan_point(x, p, &pp);
            if (pp.status != KBC_PLAN_RUNS) {
                /* The row the run will give it (kbc_plan_refused). */
                fprintf(out, "  | %s: %s\n",
                        pp.status == KBC_PLAN_REFUSED ? "invalid" : "error", pp.sentence);
                continue;
            }
            char r[32], wr[32], dv[32];
            const kb_work *work = &pp.work;
            uint64_t kept = experiment_mask(x) & ~pp.refusals.mask;
            fprintf(out, "  | %-10s  %-10s  %s\n", kbc_human_bytes(work->bytes_read, r, sizeof r),
                    kbc_human_bytes(work->bytes_written, wr, sizeof wr),
                    kbc_human_bytes(kbc_work_device_bytes(work, kept), dv, sizeof dv));
            /* The variants plan() refused here: the rows the run will give
               them (kbc_plan_variant). */
            for (uint32_t k = 0; k < x->n_variants; k++) {
                const char *why;
                uint64_t pts;
                if (kbc_plan_variant(&pp, x->variants[k], &why) != KBC_PLAN_REFUSED ||
                    !kbc_point_first_of(x, p, x->variants[k], &pts, NULL, 0))
                    continue;
                fprintf(out, "  %*s  invalid for %s: %s\n", wp, "",
                        d->variants[x->variants[k]].name, why);
                refused_runs++;
            }
        }
        free(values);
        free(w);
        fprintf(out, "  %llu point%s x %u variant%s\n", (unsigned long long)x->n_points,
                x->n_points == 1 ? "" : "s", x->n_variants, x->n_variants == 1 ? "" : "s");
        if (x->n_invalid)
            fprintf(out, "  %llu invalid point%s (refused by the plugin's plan(): each becomes "
                         "an `invalid` row and runs nothing)\n",
                    (unsigned long long)x->n_invalid, x->n_invalid == 1 ? "" : "s");
        if (x->n_failed)
            fprintf(out, "  %llu point%s whose plan() failed (a plugin error: each becomes an "
                         "`error` row and runs nothing)\n",
                    (unsigned long long)x->n_failed, x->n_failed == 1 ? "" : "s");
        if (refused_runs)
            fprintf(out, "  %llu variant%s refused at %s point by plan() (each becomes an "
                         "`invalid` row; the point's other variants run)\n",
                    (unsigned long long)refused_runs, refused_runs == 1 ? "" : "s",
                    refused_runs == 1 ? "its" : "their");
    }
    print_totals(plan, earlier_s, earlier_from, out);
}

/* ---- distinct configurations (config.h) ---- */

int kbc_point_first_of(const kbc_experiment *e, uint64_t p, uint32_t v, uint64_t *points,
                       char *ignores, size_t n)
{
    const kb_plugin *d = e->plugin->desc;
    uint64_t uses = kbc_variant_uses(e, v);
    *points = 1;
    if (ignores && n)
        ignores[0] = '\0';
    if (uses == 0 || !e->axes)
        return 1;
    /* The first parameter varies slowest, so the last axis index is the
       remainder; the first point of a configuration is the one whose
       unused axes are all at their first value. */
    uint64_t rest = p, count = 1;
    int first = 1;
    size_t used = 0;
    for (uint32_t k = d->n_params; k-- > 0;) {
        if (e->axes[k].lead_plus1)
            continue;
        uint64_t len = e->axes[k].n ? e->axes[k].n : 1;
        uint64_t idx = rest % len;
        rest /= len;
        if (uses & KB_USES(k))
            continue;
        if (idx != 0)
            first = 0;
        count *= len;
    }
    if (!first)
        return 0;
    *points = count;
    for (uint32_t k = 0; ignores && k < d->n_params; k++)
        if (!(uses & KB_USES(k)) && e->axes[k].n > 1 && used < n) {
            int w = snprintf(ignores + used, n - used, "%s%s", used ? "," : "",
                             d->params[k].name);
            if (w > 0)
                used += (size_t)w;
        }
    return 1;
}

uint64_t kbc_point_representative(const kbc_experiment *e, uint64_t p, uint32_t v)
{
    const kb_plugin *d = e->plugin->desc;
    uint64_t uses = kbc_variant_uses(e, v);
    if (uses == 0 || !e->axes)
        return p;
    /* Decompose p (the last axis varies fastest), zero the unused axes,
       and compose again. */
    uint64_t rest = p, rep = 0, scale = 1;
    for (uint32_t k = d->n_params; k-- > 0;) {
        if (e->axes[k].lead_plus1)
            continue;
        uint64_t len = e->axes[k].n ? e->axes[k].n : 1;
        uint64_t idx = rest % len;
        rest /= len;
        if (uses & KB_USES(k))
            rep += idx * scale;
        scale *= len;
    }
    return rep;
}

/* ---- narrowing and changing a run from the command line ---- */

int kbc_ini_narrow(kbc_ini *ini, const char *experiments, const char *const *sets,
                   size_t n_sets, const char *variants, kbc_diag *d)
{
    if (experiments) {
        char *copy = kbc_xstrdup(experiments);
        const char *globs[256];
        size_t ng = 0;
        for (char *tok = strtok(copy, ","); tok && ng < 256; tok = strtok(NULL, ",")) {
            while (*tok == ' ')
                tok++;
            size_t len = strlen(tok);
            while (len && tok[len - 1] == ' ')
                tok[--len] = '\0';
            if (!*tok) {
                kbc_diag_set(d, "--experiment '%s' holds an empty name", experiments);
                free(copy);
                return -1;
            }
            globs[ng++] = tok;
        }
        /* Every glob must match an experiment: a typo is not an empty run. */
        for (size_t g = 0; g < ng; g++) {
            int hit = 0;
            for (size_t i = 0; i < ini->n && !hit; i++)
                hit = strcmp(ini->sections[i].name, "global") != 0 &&
                      fnmatch(globs[g], ini->sections[i].name, 0) == 0;
            if (!hit) {
                char list[600] = "";
                size_t used = 0;
                for (size_t i = 0; i < ini->n && used < sizeof list; i++)
                    if (strcmp(ini->sections[i].name, "global") != 0)
                        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                                 used ? ", " : "", ini->sections[i].name);
                kbc_diag_set(d, "--experiment: no experiment of %s matches '%s' (it has: %s)",
                             ini->path, globs[g], list);
                free(copy);
                return -1;
            }
        }
        for (size_t i = ini->n; i-- > 0;) {
            const char *name = ini->sections[i].name;
            int keep = strcmp(name, "global") == 0;
            for (size_t g = 0; g < ng && !keep; g++)
                keep = fnmatch(globs[g], name, 0) == 0;
            if (!keep) {
                char *gone = kbc_xstrdup(name);
                kbc_ini_drop(ini, gone);
                free(gone);
            }
        }
        free(copy);
    }
    for (size_t k = 0; k < n_sets; k++) {
        const char *eq = strchr(sets[k], '=');
        if (!eq || eq == sets[k]) {
            kbc_diag_set(d, "--set '%s' is not KEY=VALUE or SECTION.KEY=VALUE", sets[k]);
            return -1;
        }
        char *lhs = kbc_xstrndup(sets[k], (size_t)(eq - sets[k]));
        char *trimmed = kbc_trim_dup(lhs);
        free(lhs);
        /* SECTION.KEY when the part before the first '.' names a section
           of the file (or global); a key in [global] otherwise (keys may
           hold '.'). */
        const char *section = "global", *key = trimmed;
        int whole_run = 1;
        char *dot = strchr(trimmed, '.');
        if (dot) {
            *dot = '\0';
            if (kbc_ini_section(ini, trimmed) || strcmp(trimmed, "global") == 0) {
                section = trimmed;
                key = dot + 1;
                whole_run = 0;
            } else {
                *dot = '.';
            }
        }
        if (!*key) {
            kbc_diag_set(d, "--set '%s' names no key", sets[k]);
            free(trimmed);
            return -1;
        }
        char *value = kbc_trim_dup(eq + 1);
        kbc_ini_set(ini, section, key, value, KBC_INI_LINE_CLI);
        /* KEY=VALUE changes the whole run: an experiment that sets the key
           itself gets the value too (SECTION.KEY=VALUE changes one). */
        for (size_t i = 0; whole_run && i < ini->n; i++)
            if (strcmp(ini->sections[i].name, "global") != 0 &&
                kbc_section_get(&ini->sections[i], key)) {
                char *name = kbc_xstrdup(ini->sections[i].name);
                kbc_ini_set(ini, name, key, value, KBC_INI_LINE_CLI);
                free(name);
            }
        free(value);
        free(trimmed);
    }
    if (variants) {
        for (size_t i = 0; i < ini->n; i++)
            if (strcmp(ini->sections[i].name, "global") != 0) {
                char *name = kbc_xstrdup(ini->sections[i].name);
                kbc_ini_set(ini, name, "variants", variants, KBC_INI_LINE_VARIANTS);
                free(name);
            }
    }
    return 0;
}

/* Whether experiments a and b left out the same variant as their baseline
   (role 0, with the same fallback) or reference (role 1): one note names
   them together. */
static int same_drop(const kbc_experiment *a, const kbc_experiment *b, int role)
{
    int va = role ? a->dropped_reference : a->dropped_baseline;
    int vb = role ? b->dropped_reference : b->dropped_baseline;
    if (va < 0 || vb < 0 || a->plugin != b->plugin || va != vb ||
        strcmp(a->dropped_by, b->dropped_by) != 0)
        return 0;
    return role || a->baseline == b->baseline;
}

void kbc_plan_notes(const kbc_plan *plan, FILE *out)
{
    for (int role = 0; role < 2; role++) {
        for (size_t i = 0; i < plan->n; i++) {
            const kbc_experiment *e = &plan->exps[i];
            int v = role ? e->dropped_reference : e->dropped_baseline;
            int first = v >= 0;
            for (size_t j = 0; j < i && first; j++)
                first = !same_drop(&plan->exps[j], e, role);
            if (!first)
                continue;
            char names[400];
            size_t used = 0, count = 0;
            names[0] = '\0';
            for (size_t j = i; j < plan->n; j++) {
                if (!same_drop(&plan->exps[j], e, role))
                    continue;
                if (count++ < 3)
                    kbc_appendf(names, sizeof names, &used, "%s[%s]", count > 1 ? ", " : "",
                                plan->exps[j].name);
            }
            if (count > 3)
                kbc_appendf(names, sizeof names, &used, " and %zu more", count - 3);
            const kb_variant *vs = e->plugin->desc->variants;
            if (role == 0)
                fprintf(out,
                        "kbench: note: %s leaves out the baseline '%s' of %s: speed-ups are "
                        "against '%s', the first selected variant\n",
                        e->dropped_by, vs[v].name, names, vs[e->baseline].name);
            else
                fprintf(out,
                        "kbench: note: %s leaves out the reference '%s' of %s: the run has no "
                        "reference\n",
                        e->dropped_by, vs[v].name, names);
        }
    }
}

int kbc_plan_wants_gpu(const kbc_plan *plan)
{
    for (size_t i = 0; i < plan->n; i++) {
        const kbc_experiment *e = &plan->exps[i];
        for (uint32_t k = 0; k < e->n_variants; k++)
            if (e->plugin->desc->variants[e->variants[k]].backend == KB_BACKEND_CUDA)
                return 1;
    }
    return 0;
}
