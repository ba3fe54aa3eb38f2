/*
 * describe.c -- `kbench list` and `kbench describe NAME`.
 *
 * Both print only what the loader has already checked, so every field read
 * here is known to be present (names, variants, parameter defaults).  The
 * summaries and help lines are optional and print as "-" when missing.
 *
 * A variant's flags print as words ("syncs", "nondeterministic",
 * "library") in a column that appears only when some variant has a flag,
 * so plugins without flags print as before.  `describe` adds, per
 * parameter, the variants that read it ("used by"): "all", a list, or the
 * shorter of "all but ..." and "K of N variants" when the list is long.
 */
#define _GNU_SOURCE
#include "loader.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

static const char *backend_name(kb_backend b)
{
    return b == KB_BACKEND_CUDA ? "cuda" : "cpu";
}

static const char *type_name(kb_param_type t)
{
    switch (t) {
    case KB_PARAM_INT: return "int";
    case KB_PARAM_SIZE: return "size";
    case KB_PARAM_FLOAT: return "float";
    case KB_PARAM_ENUM: return "enum";
    case KB_PARAM_BOOL: return "bool";
    }
    return "?";
}

/* The width of the longest variant name, so the columns line up. */
static int variant_width(const kb_plugin *d)
{
    size_t w = 4;
    for (uint32_t v = 0; v < d->n_variants; v++)
        if (strlen(d->variants[v].name) > w)
            w = strlen(d->variants[v].name);
    return (int)w;
}

/* The flags as words joined by ',', or "-" when there are none. */
static const char *flags_text(uint32_t flags, char *buf, size_t n)
{
    static const struct {
        uint32_t bit;
        const char *word;
    } words[] = {{KB_VARIANT_SYNCS, "syncs"},
                 {KB_VARIANT_NONDETERM, "nondeterministic"},
                 {KB_VARIANT_LIBRARY, "library"}};
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof words / sizeof words[0] && used < n; i++)
        if (flags & words[i].bit)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "," : "",
                                     words[i].word);
    return used ? buf : "-";
}

/* Text that ends a line already `col` characters long, wrapped at spaces
   so that no line passes 120 columns; continuation lines start at `col`
   (or at 8 when fewer than 40 columns would be left). */
#define DESCRIBE_COLUMNS 120
static void put_wrapped(FILE *out, int col, const char *text)
{
    int room = DESCRIBE_COLUMNS - col;
    if (room < 40) {
        col = 8;
        room = DESCRIBE_COLUMNS - col;
        fprintf(out, "\n%*s", col, "");
    }
    const char *t = text;
    int first = 1;
    while (*t) {
        size_t len = strlen(t);
        size_t take = len;
        if (len > (size_t)room) {
            /* The last space that keeps the line inside; a word longer
               than the room is cut where it must be. */
            take = (size_t)room;
            while (take > 0 && t[take] != ' ')
                take--;
            if (take == 0)
                take = (size_t)room;
        }
        if (!first)
            fprintf(out, "\n%*s", col, "");
        fprintf(out, "%.*s", (int)take, t);
        t += take;
        while (*t == ' ')
            t++;
        first = 0;
    }
    fputc('\n', out);
}

static void print_variants(const kb_plugin *d, FILE *out)
{
    int w = variant_width(d);
    int wf = 0; /* the flags column, only when some variant has flags */
    char buf[64];
    for (uint32_t v = 0; v < d->n_variants; v++)
        if (d->variants[v].flags) {
            int len = (int)strlen(flags_text(d->variants[v].flags, buf, sizeof buf));
            wf = len > wf ? len : wf;
        }
    for (uint32_t v = 0; v < d->n_variants; v++) {
        const kb_variant *var = &d->variants[v];
        int col;
        if (wf)
            col = fprintf(out, "    %-*s  %-4s  %-*s  ", w, var->name, backend_name(var->backend),
                          wf, flags_text(var->flags, buf, sizeof buf));
        else
            col = fprintf(out, "    %-*s  %-4s  ", w, var->name, backend_name(var->backend));
        put_wrapped(out, col, or_dash(var->summary));
    }
}

/* Whether variant v reads parameter p (uses 0 means every parameter). */
static int variant_uses(const kb_variant *v, uint32_t p)
{
    return v->uses == 0 || (p < 64 && (v->uses >> p) & 1u);
}

/* The names of the variants whose use of p is `want`, joined by ','. */
static char *names_where(const kb_plugin *d, uint32_t p, int want, uint32_t *count)
{
    size_t len = 1;
    *count = 0;
    for (uint32_t v = 0; v < d->n_variants; v++)
        if (variant_uses(&d->variants[v], p) == want)
            len += strlen(d->variants[v].name) + 1;
    char *s = kbc_xmalloc(len);
    s[0] = '\0';
    for (uint32_t v = 0; v < d->n_variants; v++)
        if (variant_uses(&d->variants[v], p) == want) {
            if ((*count)++)
                strcat(s, ",");
            strcat(s, d->variants[v].name);
        }
    return s;
}

/* A list longer than this is summarised. */
#define KBC_USED_BY_WIDTH 32

char *kbc_used_by_text(const kb_plugin *d, uint32_t p)
{
    uint32_t k, rest;
    char *with = names_where(d, p, 1, &k);
    char *without = names_where(d, p, 0, &rest);
    char *s;
    if (k == d->n_variants)
        s = kbc_xstrdup("all");
    else if (k == 0)
        s = kbc_xstrdup("none");
    else if (strlen(with) <= KBC_USED_BY_WIDTH)
        s = kbc_xstrdup(with);
    else if (strlen(without) + 8 <= KBC_USED_BY_WIDTH)
        s = kbc_xasprintf("all but %s", without);
    else
        s = kbc_xasprintf("%u of %u variants", (unsigned)k, (unsigned)d->n_variants);
    free(with);
    free(without);
    return s;
}

void kbc_cmd_list(const kbc_registry *r, FILE *out)
{
    if (r->n == 0) {
        fprintf(out, "No plugins found.\n");
        return;
    }
    for (size_t i = 0; i < r->n; i++) {
        const kb_plugin *d = r->items[i].desc;
        if (i > 0)
            fputc('\n', out);
        fprintf(out, "%s  %s\n", d->name, or_dash(d->summary));
        fprintf(out, "  file: %s\n", r->items[i].path);
        fprintf(out, "  variants:\n");
        print_variants(d, out);
    }
}

/* One bound of a range: integer bounds that are large powers of two read
   best as 2^k (as they are written in INI files); other bounds keep every
   digit (%.17g is exact for integers up to 2^53, shortest-faithful beyond). */
static const char *bound_text(const kb_param *p, double v, char *buf, size_t n)
{
    if ((p->type == KB_PARAM_SIZE || p->type == KB_PARAM_INT) && v >= 65536.0) {
        int e;
        double m = frexp(v, &e);
        if (m == 0.5) {
            snprintf(buf, n, "2^%d", e - 1);
            return buf;
        }
    }
    snprintf(buf, n, "%.17g", v);
    return buf;
}

/* The allowed values of a parameter, as one cell: "[min, max]", the enum's
   choices joined by '|', "true|false", or "any" when unbounded; with
   ", multiple of M" after an integer's range when it declares one.
   Returns a malloc'ed string. */
static char *allowed_cell(const kb_param *p)
{
    if (p->type == KB_PARAM_ENUM) {
        size_t len = 1;
        for (uint32_t k = 0; k < p->n_choices; k++)
            len += strlen(p->choices[k]) + 1;
        char *s = kbc_xmalloc(len);
        s[0] = '\0';
        for (uint32_t k = 0; k < p->n_choices; k++) {
            if (k)
                strcat(s, "|");
            strcat(s, p->choices[k]);
        }
        return s;
    }
    if (p->type == KB_PARAM_BOOL)
        return kbc_xstrdup("true|false");
    /* multiple_of (kbench/plugin.h, minor 3) follows the range. */
    char mult[48] = "";
    if (p->multiple_of > 1 && (p->type == KB_PARAM_INT || p->type == KB_PARAM_SIZE))
        snprintf(mult, sizeof mult, ", multiple of %llu", (unsigned long long)p->multiple_of);
    if (p->min > p->max)
        return kbc_xasprintf("any%s", mult);
    char lo[32], hi[32];
    return kbc_xasprintf("[%s, %s]%s", bound_text(p, p->min, lo, sizeof lo),
                         bound_text(p, p->max, hi, sizeof hi), mult);
}

int kbc_cmd_describe(const kbc_registry *r, const char *name, FILE *out, FILE *err)
{
    const kbc_plugin *pl = kbc_registry_find(r, name);
    if (!pl) {
        const char **names = kbc_xcalloc(r->n ? r->n : 1, sizeof *names);
        size_t len = 1;
        for (size_t i = 0; i < r->n; i++) {
            names[i] = r->items[i].desc->name;
            len += strlen(names[i]) + 2;
        }
        char *found = kbc_xmalloc(len + 8);
        found[0] = '\0';
        for (size_t i = 0; i < r->n; i++) {
            if (i)
                strcat(found, ", ");
            strcat(found, names[i]);
        }
        if (r->n == 0)
            strcpy(found, "none");
        const char *close = name ? kbc_closest(name, names, r->n) : NULL;
        if (close)
            fprintf(err, "kbench: no plugin named '%s' (found: %s); did you mean '%s'?\n",
                    name ? name : "", found, close);
        else
            fprintf(err, "kbench: no plugin named '%s' (found: %s).\n", name ? name : "", found);
        free(found);
        free(names);
        return KBC_EXIT_USAGE;
    }

    const kb_plugin *d = pl->desc;
    put_wrapped(out, fprintf(out, "%s  ", d->name), or_dash(d->summary));
    fprintf(out, "  file: %s\n", pl->path);
    fprintf(out, "  abi: %u.%u\n", (unsigned)d->abi_major, (unsigned)d->abi_minor);
    if (d->item_name)
        fprintf(out, "  items: %s\n", d->item_name);
    fprintf(out, "  variants:\n");
    print_variants(d, out);

    if (d->n_params == 0) {
        fprintf(out, "  parameters: none\n");
        return KBC_EXIT_OK;
    }
    /* Two passes: measure every column, then print aligned. */
    char **allowed = kbc_xcalloc(d->n_params, sizeof *allowed);
    char **used = kbc_xcalloc(d->n_params, sizeof *used);
    int wn = 4, wt = 4, wd = 7, wa = 7, wu = 7;
    for (uint32_t i = 0; i < d->n_params; i++) {
        const kb_param *p = &d->params[i];
        allowed[i] = allowed_cell(p);
        used[i] = kbc_used_by_text(d, i);
        if ((int)strlen(used[i]) > wu)
            wu = (int)strlen(used[i]);
        if ((int)strlen(p->name) > wn)
            wn = (int)strlen(p->name);
        if ((int)strlen(type_name(p->type)) > wt)
            wt = (int)strlen(type_name(p->type));
        if ((int)strlen(p->def) > wd)
            wd = (int)strlen(p->def);
        if ((int)strlen(allowed[i]) > wa)
            wa = (int)strlen(allowed[i]);
    }
    fprintf(out, "  parameters:\n");
    fprintf(out, "    %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", wn, "name", wt, "type", wd, "default",
            wa, "allowed", wu, "used by", "help");
    for (uint32_t i = 0; i < d->n_params; i++) {
        const kb_param *p = &d->params[i];
        int col = fprintf(out, "    %-*s  %-*s  %-*s  %-*s  %-*s  ", wn, p->name, wt,
                          type_name(p->type), wd, p->def, wa, allowed[i], wu, used[i]);
        put_wrapped(out, col, or_dash(p->help));
        free(allowed[i]);
        free(used[i]);
    }
    free(allowed);
    free(used);
    return KBC_EXIT_OK;
}
