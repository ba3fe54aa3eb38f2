/*
 * sweep.c -- see sweep.h.
 *
 * Decisions (documented for users in docs/ini-format.md):
 *   - Ranges go upwards only; a geometric range must start above zero.
 *   - The factor of a geometric range and the step of a linear one are
 *     integers for sizes and integers, kept as such (a factor of 2^60 + 1
 *     is not rounded through a double).
 *   - Repeated values in a list are kept as written.
 */
#define _GNU_SOURCE
#include "sweep.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void say(char *why, size_t n, const char *fmt, ...) KB_PRINTF(3, 4);

static void say(char *why, size_t n, const char *fmt, ...)
{
    if (!why || !n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
}

/* The values of a growing sweep. */
typedef struct vec {
    kb_value *v;
    size_t n, cap, max;
} vec;

static int push(vec *a, const kb_param *p, kb_value v, const char *whole, char *why, size_t n)
{
    if (kbc_value_check_range(p, v, why, n) != 0)
        return -1;
    if (a->n >= a->max) {
        say(why, n, "the sweep '%s' has more than %zu values", whole, a->max);
        return -1;
    }
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = kbc_xrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = v;
    return 0;
}

static int too_many(vec *a, double count, const char *whole, char *why, size_t n)
{
    if ((double)a->n + count > (double)a->max) {
        say(why, n, "the sweep '%s' has more than %zu values", whole, a->max);
        return 1;
    }
    return 0;
}

/* Expands lo..hi:step into a.  e is the element as written. */
/* The values of a geometric range lo..hi:xN (num is N's text). */
static int geometric_range(const kb_param *p, kb_value lo, kb_value hi, const char *num,
                         const char *step_s, const char *e, vec *a, const char *whole, char *why,
                         size_t n)
{
    /* The factor: a double for floats, an exact integer otherwise. */
    double f = 0;
    uint64_t k = 0;
    if (p->type == KB_PARAM_FLOAT) {
        if (kbc_parse_float(num, &f, why, n) != 0)
            return -1;
    } else {
        const char *end;
        if (kbc_parse_digits(num, &end, &k) != 0 || *end) {
            say(why, n, "the factor in '%s' must be a whole number of at least 2 (and at "
                        "most 2^64 - 1)",
                e);
            return -1;
        }
    }
    if (p->type == KB_PARAM_FLOAT ? !(f > 1) : k < 2) {
        say(why, n, "the step '%s' in '%s' does not advance; use a factor above 1", step_s,
            e);
        return -1;
    }
    int positive = p->type == KB_PARAM_SIZE ? lo.u > 0
                   : p->type == KB_PARAM_INT ? lo.i > 0
                                             : lo.f > 0;
    if (!positive) {
        say(why, n, "the geometric range '%s' must start above 0", e);
        return -1;
    }
    if (p->type == KB_PARAM_FLOAT) {
        /* Powers of the start, snapped to the end when within rounding,
           so that 0.1..0.4:x2 ends on 0.4 exactly. */
        for (double i = 0;; i++) {
            kb_value v = {.f = lo.f * pow(f, i)};
            if (fabs(v.f - hi.f) <= 1e-12 * fabs(hi.f))
                v.f = hi.f;
            else if (v.f > hi.f)
                break;
            if (push(a, p, v, whole, why, n) != 0)
                return -1;
            if (v.f == hi.f)
                break;
        }
    } else if (p->type == KB_PARAM_SIZE) {
        /* x > hi / k is x * k > hi without the overflow. */
        for (uint64_t x = lo.u;;) {
            if (push(a, p, (kb_value){.u = x}, whole, why, n) != 0)
                return -1;
            if (x > hi.u / k)
                break;
            x *= k;
            if (x > hi.u)
                break;
        }
    } else {
        /* The start is positive, so a factor beyond INT64_MAX passes
           every 64-bit end after the first value. */
        for (int64_t x = lo.i;;) {
            if (push(a, p, (kb_value){.i = x}, whole, why, n) != 0)
                return -1;
            if (k > (uint64_t)INT64_MAX || x > hi.i / (int64_t)k)
                break;
            x *= (int64_t)k;
            if (x > hi.i)
                break;
        }
    }
    return 0;
}

/* The values of an arithmetic range lo..hi:+N (num is N's text). */
static int arithmetic_range(const kb_param *p, kb_value lo, kb_value hi, const char *num,
                          const char *step_s, const char *e, vec *a, const char *whole, char *why,
                          size_t n)
{
    if (p->type == KB_PARAM_FLOAT) {
        double s;
        if (kbc_parse_float(num, &s, why, n) != 0)
            return -1;
        if (!(s > 0)) {
            say(why, n, "the step '%s' in '%s' does not advance; use a step above 0", step_s,
                e);
            return -1;
        }
        /* start + i*step, not repeated sums, so errors do not pile up;
           the end is kept when a step lands on it within rounding. */
        double count = floor((hi.f - lo.f) / s + 1e-9) + 1;
        if (too_many(a, count, whole, why, n))
            return -1;
        for (double i = 0; i < count; i++) {
            kb_value v = {.f = lo.f + i * s};
            if (fabs(v.f - hi.f) <= 1e-9 * s || v.f > hi.f)
                v.f = hi.f;
            if (push(a, p, v, whole, why, n) != 0)
                return -1;
        }
    } else if (p->type == KB_PARAM_SIZE) {
        uint64_t s;
        if (kbc_parse_size(num, &s, why, n) != 0)
            return -1;
        if (s == 0) {
            say(why, n, "the step '%s' in '%s' does not advance; use a step above 0", step_s,
                e);
            return -1;
        }
        if (too_many(a, (double)((hi.u - lo.u) / s) + 1, whole, why, n))
            return -1;
        for (uint64_t x = lo.u;;) {
            if (push(a, p, (kb_value){.u = x}, whole, why, n) != 0)
                return -1;
            if (hi.u - x < s)
                break;
            x += s;
        }
    } else {
        int64_t s;
        if (kbc_parse_int(num, &s, why, n) != 0)
            return -1;
        if (s <= 0) {
            say(why, n, "the step '%s' in '%s' does not advance; use a step above 0", step_s,
                e);
            return -1;
        }
        uint64_t span = (uint64_t)hi.i - (uint64_t)lo.i;
        if (too_many(a, (double)(span / (uint64_t)s) + 1, whole, why, n))
            return -1;
        for (int64_t x = lo.i;;) {
            if (push(a, p, (kb_value){.i = x}, whole, why, n) != 0)
                return -1;
            if ((uint64_t)hi.i - (uint64_t)x < (uint64_t)s)
                break;
            x += s;
        }
    }
    return 0;
}

static int expand_range(const kb_param *p, const char *e, const char *dots, vec *a,
                        const char *whole, char *why, size_t n)
{
    if (p->type == KB_PARAM_ENUM || p->type == KB_PARAM_BOOL) {
        say(why, n, "'%s' is a range, but %s values take lists only", e,
            p->type == KB_PARAM_ENUM ? "choice" : "boolean");
        return -1;
    }
    char *lo_s = kbc_xstrndup(e, (size_t)(dots - e));
    const char *rest = dots + 2;
    const char *colon = strchr(rest, ':');
    char *hi_s = colon ? kbc_xstrndup(rest, (size_t)(colon - rest)) : kbc_xstrdup(rest);
    char *step_s = kbc_trim_dup(colon ? colon + 1 : "x2");
    char *t;
    t = kbc_trim_dup(lo_s);
    free(lo_s);
    lo_s = t;
    t = kbc_trim_dup(hi_s);
    free(hi_s);
    hi_s = t;
    int rc = -1;
    kb_value lo, hi;
    if (!*lo_s || !*hi_s) {
        say(why, n, "the range '%s' needs a start and an end, as in 1K..1M", e);
        goto out;
    }
    if (kbc_value_parse_plain(p, lo_s, &lo, why, n) != 0 || kbc_value_parse_plain(p, hi_s, &hi, why, n) != 0)
        goto out;
    int down = p->type == KB_PARAM_SIZE ? hi.u < lo.u
               : p->type == KB_PARAM_INT ? hi.i < lo.i
                                         : hi.f < lo.f;
    if (down) {
        say(why, n, "the range '%s' runs downwards; write ranges from low to high", e);
        goto out;
    }
    if (!*step_s) {
        say(why, n, "the range '%s' has a ':' with no step after it (use xN or *N to multiply, "
                    "+N to add)",
            e);
        goto out;
    }
    char kind = step_s[0];
    const char *num = step_s + 1;
    while (isspace((unsigned char)*num))
        num++;
    if (kind == 'X' || kind == '*')
        kind = 'x';
    if (kind != 'x' && kind != '+') {
        say(why, n, "'%s' in '%s' is not a step (use xN or *N to multiply, +N to add)", step_s,
            e);
        goto out;
    }

    if (kind == 'x' ? geometric_range(p, lo, hi, num, step_s, e, a, whole, why, n) != 0
                    : arithmetic_range(p, lo, hi, num, step_s, e, a, whole, why, n) != 0)
        goto out;
    rc = 0;
out:
    free(lo_s);
    free(hi_s);
    free(step_s);
    return rc;
}

/* Digits in groups of three after commas, with a group that starts with 0
   (1,000,000; 2,048): thousands separators, not a list -- nobody writes
   the element 000 or 048 of a list. */
static int thousands(const char *s)
{
    size_t first = strspn(s, "0123456789");
    if (first == 0 || first > 3 || s[first] != ',')
        return 0;
    int zero_led = 0;
    for (s += first; *s == ','; s += 4) {
        if (strspn(s + 1, "0123456789") != 3)
            return 0;
        zero_led |= s[1] == '0';
    }
    return *s == '\0' && zero_led;
}

/* Mistakes of form that a plain "is not a size" would leave a user to
   puzzle over: a thousands separator, a comment started with '#', a range
   written with three dots or with a colon alone.  Writes the advice and
   returns 1; 0 when none applies. */
static int advice(const kb_param *p, const char *whole, char *why, size_t n)
{
    int numeric = p->type == KB_PARAM_INT || p->type == KB_PARAM_SIZE ||
                  p->type == KB_PARAM_FLOAT;
    if (numeric && thousands(whole)) {
        char digits[64];
        size_t k = 0;
        for (const char *c = whole; *c && k + 1 < sizeof digits; c++)
            if (*c != ',')
                digits[k++] = *c;
        digits[k] = '\0';
        say(why, n,
            "'%s' would be read as a list (a comma separates values); for the number write "
            "%s (K, M and G are binary: 1M is 1048576)",
            whole, digits);
        return 1;
    }
    const char *hash = strchr(whole, '#');
    if (hash && (hash == whole || isspace((unsigned char)hash[-1]))) {
        int keep = (int)(hash - whole);
        while (keep > 0 && isspace((unsigned char)whole[keep - 1]))
            keep--;
        const char *note = hash + 1 + strspn(hash + 1, " \t");
        say(why, n,
            "'%s' holds a '#': comments start with ';' in kbench's INI files (write "
            "'%.*s ; %s')",
            whole, keep, whole, note);
        return 1;
    }
    if (!numeric)
        return 0;
    if (strstr(whole, "...")) {
        say(why, n, "'%s' is not a range: a range is a..b[:step], with two dots (1K..1M:x2)",
            whole);
        return 1;
    }
    if (!strstr(whole, "..") && strchr(whole, ':')) {
        say(why, n, "'%s' is not a range: a range is a..b[:step], the two dots first "
                    "(1K..1M:x2)",
            whole);
        return 1;
    }
    return 0;
}

int kbc_sweep_parse(const kb_param *p, const char *text, size_t max_values, kb_value **values,
                    size_t *n, char *why, size_t whyn)
{
    *values = NULL;
    *n = 0;
    if (!text) {
        say(why, whyn, "there is no value");
        return -1;
    }
    char *whole = kbc_trim_dup(text);
    vec a = {.max = max_values};
    int rc = 0;
    if (!*whole) {
        say(why, whyn, "the value is empty");
        rc = -1;
    } else if (advice(p, whole, why, whyn)) {
        rc = -1;
    }
    const char *start = whole;
    while (rc == 0) {
        const char *comma = strchr(start, ',');
        char *raw = comma ? kbc_xstrndup(start, (size_t)(comma - start)) : kbc_xstrdup(start);
        char *e = kbc_trim_dup(raw);
        free(raw);
        if (!*e) {
            say(why, whyn, "the list '%s' has an empty element (two commas in a row, or a comma "
                           "at an end)",
                whole);
            rc = -1;
        } else {
            const char *dots = strstr(e, "..");
            if (dots) {
                rc = expand_range(p, e, dots, &a, whole, why, whyn);
            } else {
                kb_value v;
                rc = kbc_value_parse_plain(p, e, &v, why, whyn);
                if (rc == 0)
                    rc = push(&a, p, v, whole, why, whyn);
            }
        }
        free(e);
        if (!comma)
            break;
        start = comma + 1;
    }
    free(whole);
    if (rc != 0) {
        free(a.v);
        return -1;
    }
    *values = a.v;
    *n = a.n;
    return 0;
}

