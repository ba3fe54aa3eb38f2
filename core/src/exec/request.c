/* request.c -- see request.h. */
#include "request.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The worker's options after its INI file, one row each: what
   kbc_request_argv writes and kbc_request_read reads back, so that the two
   cannot drift apart.  at is the field's offset in kbc_request; for a
   list, count_at is its count's. */
enum { ONE, LIST, FLAG };
typedef struct option {
    const char *name;
    int kind;
    size_t at, count_at;
} option;

static const option options[] = {
    {"--plugin-path", LIST, offsetof(kbc_request, plugin_paths),
     offsetof(kbc_request, n_plugin_paths)},
    {"--experiment", ONE, offsetof(kbc_request, experiment), 0},
    {"--set", LIST, offsetof(kbc_request, sets), offsetof(kbc_request, n_sets)},
    {"--variants", ONE, offsetof(kbc_request, variants), 0},
    {"-q", FLAG, offsetof(kbc_request, quiet), 0},
    {"--allow-shared", FLAG, offsetof(kbc_request, allow_shared), 0},
    {"--sanitized", ONE, offsetof(kbc_request, sanitized), 0},
};
#define N_OPTIONS (sizeof options / sizeof *options)

/* The fields of r a row names. */
static const char **one_of(const kbc_request *r, const option *o)
{
    return (const char **)((char *)r + o->at);
}

static const char *const **list_of(const kbc_request *r, const option *o)
{
    return (const char *const **)((char *)r + o->at);
}

static int *int_of(const kbc_request *r, size_t at)
{
    return (int *)((char *)r + at);
}

char **kbc_request_argv(const kbc_request *r, const char *const *lead, size_t n_lead)
{
    size_t room = n_lead + 2 * (size_t)(r->n_plugin_paths + r->n_sets) + 2 * N_OPTIONS + 4;
    char **argv = kbc_xcalloc(room, sizeof *argv);
    size_t a = 0;
    for (size_t i = 0; i < n_lead; i++)
        argv[a++] = (char *)lead[i];
    argv[a++] = (char *)r->self;
    argv[a++] = (char *)KBC_WORKER_COMMAND;
    argv[a++] = (char *)r->ini_path;
    for (size_t k = 0; k < N_OPTIONS; k++) {
        const option *o = &options[k];
        if (o->kind == ONE && *one_of(r, o)) {
            argv[a++] = (char *)o->name;
            argv[a++] = (char *)*one_of(r, o);
        } else if (o->kind == LIST) {
            for (int i = 0; i < *int_of(r, o->count_at); i++) {
                argv[a++] = (char *)o->name;
                argv[a++] = (char *)(*list_of(r, o))[i];
            }
        } else if (o->kind == FLAG && *int_of(r, o->at)) {
            argv[a++] = (char *)o->name;
        }
    }
    argv[a] = NULL;
    return argv;
}

static const option *option_named(const char *name)
{
    for (size_t k = 0; k < N_OPTIONS; k++)
        if (strcmp(options[k].name, name) == 0)
            return &options[k];
    return NULL;
}

int kbc_request_read(int argc, char **argv, kbc_request *r, kbc_diag *d)
{
    memset(r, 0, sizeof *r);
    /* Each list gets room for every argument. */
    for (size_t k = 0; k < N_OPTIONS; k++)
        if (options[k].kind == LIST)
            *list_of(r, &options[k]) = kbc_xcalloc((size_t)argc + 1, sizeof(char *));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const option *o = option_named(a);
        if (o && o->kind != FLAG && i + 1 >= argc) {
            kbc_diag_set(d, "the worker was given %s without its value", a);
            return -1;
        }
        if (o && o->kind == ONE) {
            *one_of(r, o) = argv[++i];
        } else if (o && o->kind == LIST) {
            int *n = int_of(r, o->count_at);
            ((const char **)*list_of(r, o))[(*n)++] = argv[++i];
        } else if (o) {
            *int_of(r, o->at) = 1;
        } else if (!r->ini_path && a[0] != '-') {
            r->ini_path = a;
        } else {
            kbc_diag_set(d, "the worker was given '%s', which it does not take", a);
            return -1;
        }
    }
    if (!r->ini_path) {
        kbc_diag_set(d, "the worker was given no INI file");
        return -1;
    }
    return 0;
}

void kbc_request_release(kbc_request *r)
{
    for (size_t k = 0; k < N_OPTIONS; k++)
        if (options[k].kind == LIST) {
            free((void *)*list_of(r, &options[k]));
            *list_of(r, &options[k]) = NULL;
        }
}

/* ---- orders ---- */

static json_t *hex_of(const void *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = p;
    char *t = kbc_xmalloc(2 * n + 1);
    for (size_t i = 0; i < n; i++) {
        t[2 * i] = digits[b[i] >> 4];
        t[2 * i + 1] = digits[b[i] & 15];
    }
    t[2 * n] = '\0';
    json_t *s = json_string(t);
    free(t);
    return s;
}

static int nibble(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Fills n bytes at p from hex text of exactly 2n digits; 0 or -1. */
static int from_hex(const char *t, void *p, size_t n)
{
    unsigned char *b = p;
    if (!t || strlen(t) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = nibble(t[2 * i]), lo = nibble(t[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        b[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

/* The variants a point's plan refused: [{"variant": V, "sentence": S}, ...]
   in the order of their bits. */
static json_t *refusals_json(const kbc_refusals *r)
{
    json_t *a = json_array();
    for (uint32_t v = 0; v < KB_MAX_VARIANTS; v++) {
        const char *s = kbc_refusals_sentence(r, v);
        if (!s)
            continue;
        json_t *one = json_object();
        json_object_set_new(one, "variant", json_integer(v));
        json_object_set_new(one, "sentence", json_string(s));
        json_array_append_new(a, one);
    }
    return a;
}

/* Reads refusals_json's array (absent: none) into r; 0 or -1. */
static int refusals_read(const json_t *a, kbc_refusals *r)
{
    kbc_refusals_clear(r);
    if (!a)
        return 0;
    if (!json_is_array(a))
        return -1;
    size_t i;
    const json_t *one;
    json_array_foreach(a, i, one)
    {
        const json_t *v = json_object_get(one, "variant");
        const json_t *s = json_object_get(one, "sentence");
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) >= KB_MAX_VARIANTS || !json_is_string(s))
            return -1;
        kbc_refusals_add(r, (uint32_t)json_integer_value(v), json_string_value(s));
    }
    return 0;
}

char *kbc_order_line(const kbc_order *o)
{
    json_t *m = json_object();
    if (o->quit) {
        json_object_set_new(m, "quit", json_true());
    } else {
        char mask[32];
        snprintf(mask, sizeof mask, "%llx", (unsigned long long)o->mask);
        json_t *plan = json_object();
        json_object_set_new(plan, "status", json_string(kbc_plan_status_name(o->plan.status)));
        json_object_set_new(plan, "code", json_integer(o->plan.code));
        json_object_set_new(plan, "sentence", json_string(o->plan.sentence));
        json_object_set_new(plan, "work", hex_of(&o->plan.work, sizeof o->plan.work));
        if (o->plan.refusals.mask)
            json_object_set_new(plan, "refused", refusals_json(&o->plan.refusals));
        json_t *pt = json_object();
        json_object_set_new(pt, "exp", json_integer(o->exp));
        json_object_set_new(pt, "point", json_integer((json_int_t)o->point));
        json_object_set_new(pt, "mask", json_string(mask));
        json_object_set_new(pt, "plan", plan);
        if (o->ahead)
            json_object_set_new(pt, "share", json_integer(o->share > 0 ? o->share : 1));
        json_object_set_new(m, o->ahead ? "ahead" : "point", pt);
    }
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (!text) {
        /* json_dumps fails only when memory runs out, as kbc_xmalloc says. */
        fprintf(stderr, "kbench: out of memory (writing a worker's order).\n");
        exit(KBC_EXIT_SYSTEM);
    }
    char *line = kbc_xasprintf("%s\n", text);
    free(text);
    return line;
}

/* The plan member of a point order into *pp; 0 or -1 with why. */
static int plan_read(const json_t *j, kbc_point_plan *pp, char *why, size_t n)
{
    const json_t *status = json_object_get(j, "status"), *code = json_object_get(j, "code");
    const json_t *sentence = json_object_get(j, "sentence");
    memset(pp, 0, sizeof *pp);
    pp->status = json_is_string(status) ? kbc_plan_status_parse(json_string_value(status)) : -1;
    if (pp->status < 0 || !json_is_integer(code) || !json_is_string(sentence) ||
        from_hex(json_string_value(json_object_get(j, "work")), &pp->work, sizeof pp->work) != 0 ||
        refusals_read(json_object_get(j, "refused"), &pp->refusals) != 0) {
        snprintf(why, n, "its plan is not a point's plan of this kbench (status, code, sentence, "
                         "a work of %zu bytes and the variants refused)",
                 sizeof pp->work);
        return -1;
    }
    pp->code = (int)json_integer_value(code);
    snprintf(pp->sentence, sizeof pp->sentence, "%s", json_string_value(sentence));
    pp->carried = 1;
    return 0;
}

int kbc_order_read(const char *line, kbc_order *o, char *why, size_t n)
{
    memset(o, 0, sizeof *o);
    json_error_t je;
    json_t *m = json_loads(line, JSON_REJECT_DUPLICATES, &je);
    const json_t *pt = m ? json_object_get(m, "point") : NULL;
    if (m && !pt && (pt = json_object_get(m, "ahead")))
        o->ahead = 1;
    int rc = -1;
    if (m && json_is_true(json_object_get(m, "quit"))) {
        o->quit = 1;
        rc = 0;
    } else if (!json_is_object(pt)) {
        snprintf(why, n, "it is not an order (a point or quit)");
    } else {
        const json_t *x = json_object_get(pt, "exp"), *p = json_object_get(pt, "point");
        const char *mask = json_string_value(json_object_get(pt, "mask"));
        char *end = NULL;
        unsigned long long mk = mask && *mask ? strtoull(mask, &end, 16) : 0;
        if (!json_is_integer(x) || json_integer_value(x) < 0 || !json_is_integer(p) ||
            json_integer_value(p) < 0 || !mask || !*mask || *end) {
            snprintf(why, n, "its point is not an experiment, a point and a mask");
        } else if (plan_read(json_object_get(pt, "plan"), &o->plan, why, n) == 0) {
            const json_t *share = json_object_get(pt, "share");
            o->share = json_is_integer(share) && json_integer_value(share) > 0 &&
                               json_integer_value(share) < 1 << 20
                           ? (int)json_integer_value(share)
                           : 1;
            o->exp = (uint32_t)json_integer_value(x);
            o->point = (uint64_t)json_integer_value(p);
            o->mask = mk;
            rc = 0;
        }
    }
    json_decref(m);
    return rc;
}
