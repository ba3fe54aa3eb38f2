/*
 * sweep.c -- see sweep.h.
 *
 * Decisions (documented for users in docs/ini-format.md):
 *   - SIZE: decimal digits, optionally followed by K, M, G or T in either
 *     case, optionally followed by "i" or "iB" (4K = 4k = 4KiB = 4096: the
 *     multiples are binary).  "KB" is refused because it reads as 1000.
 *     Or 2^k with 0 <= k <= 63.  No sign, no fraction.
 *   - INT: an optional sign and decimal digits.
 *   - FLOAT: a decimal number (strtod), finite; no hex, inf or nan.
 *   - Ranges go upwards only; a geometric range must start above zero.
 *   - Repeated values in a list are kept as written.
 */
#define _GNU_SOURCE
#include "sweep.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util.h"

static const char *const bool_true[] = {"true", "yes", "on", "1"};
static const char *const bool_false[] = {"false", "no", "off", "0"};

const kb_param kbc_key_warmup = {
    .name = "warmup", .type = KB_PARAM_INT, .def = "3", .min = 0, .max = 1e6,
    .help = "untimed runs of each variant before the timed ones"};
const kb_param kbc_key_runs = {
    .name = "runs", .type = KB_PARAM_INT, .def = "20", .min = 1, .max = 1e7,
    .help = "timed runs of each variant per point"};
const kb_param kbc_key_budget = {
    .name = "budget", .type = KB_PARAM_FLOAT, .def = "10", .min = 1e-6, .max = 1e6,
    .help = "seconds of timed runs per variant before stopping early (a trailing s or ms is "
            "allowed)"};
const kb_param kbc_key_seed = {
    .name = "seed", .type = KB_PARAM_SIZE, .def = "1", .min = 1, .max = 0,
    .help = "seed of the generated inputs"};
const kb_param kbc_key_include_copies = {
    .name = "include_copies", .type = KB_PARAM_BOOL, .def = "false", .min = 1, .max = 0,
    .help = "time host-device copies together with the kernel"};
/* "auto" is resolved when the value is parsed, to the CPUs online then:
   a descriptor is constant data and cannot hold the count itself. */
const kb_param kbc_key_cpu_threads = {
    .name = "cpu_threads", .type = KB_PARAM_INT, .def = "auto", .min = 1, .max = 4096,
    .help = "threads of the parallel CPU variants (auto: every online CPU)"};

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

/* A bound written as an integer when it is one, so that messages read
   "above the maximum 1024" rather than "1024.000000". */
static void fmt_bound(double x, char *buf, size_t n)
{
    if (x == floor(x) && fabs(x) < 1e18)
        snprintf(buf, n, "%.0f", x);
    else
        snprintf(buf, n, "%g", x);
}

/* Decimal digits into a uint64.  Returns 0, -1 when there are none, -2 on
   overflow; *end is set past the digits. */
static int digits_u64(const char *s, const char **end, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    *end = p;
    while (isdigit((unsigned char)*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -2;
        v = v * 10 + d;
        p++;
    }
    *end = p;
    if (p == s)
        return -1;
    *out = v;
    return 0;
}

static int parse_size(const char *s, uint64_t *out, char *why, size_t n)
{
    const char *p;
    uint64_t v;
    if (s[0] == '-') {
        say(why, n, "'%s' is negative, and a size cannot be", s);
        return -1;
    }
    if (s[0] == '2' && s[1] == '^') {
        uint64_t k;
        int rc = digits_u64(s + 2, &p, &k);
        if (rc == -1 || *p) {
            say(why, n, "'%s' is not a size (use digits with K, M, G, or 2^k)", s);
            return -1;
        }
        if (rc == -2 || k > 63) {
            say(why, n, "'%s' does not fit in 64 bits (2^63 is the largest power)", s);
            return -1;
        }
        *out = 1ULL << k;
        return 0;
    }
    int rc = digits_u64(s, &p, &v);
    if (rc == -2) {
        say(why, n, "'%s' does not fit in 64 bits", s);
        return -1;
    }
    if (rc == -1) {
        say(why, n, "'%s' is not a size (use digits with K, M, G, or 2^k)", s);
        return -1;
    }
    unsigned shift = 0;
    if (*p) {
        switch (toupper((unsigned char)*p)) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        case 'T': shift = 40; break;
        default: shift = 99;
        }
        if (shift != 99) {
            p++;
            if (strcasecmp(p, "i") == 0 || strcasecmp(p, "ib") == 0)
                p += strlen(p);
        }
        if (shift == 99 || *p) {
            if (shift != 99 && strcasecmp(p, "b") == 0)
                say(why, n,
                    "'%s' is ambiguous (KB often means 1000); write %.*s or %.*siB for binary "
                    "multiples",
                    s, (int)(p - s), s, (int)(p - s), s);
            else
                say(why, n, "'%s' is not a size (use digits with K, M, G, or 2^k)", s);
            return -1;
        }
    }
    if (shift && v > (UINT64_MAX >> shift)) {
        say(why, n, "'%s' does not fit in 64 bits", s);
        return -1;
    }
    *out = v << shift;
    return 0;
}

static int parse_int(const char *s, int64_t *out, char *why, size_t n)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p)) {
        say(why, n, "'%s' is not an integer", s);
        return -1;
    }
    for (const char *q = p; *q; q++) {
        if (!isdigit((unsigned char)*q)) {
            say(why, n, "'%s' is not an integer", s);
            return -1;
        }
    }
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE) {
        say(why, n, "'%s' does not fit in a 64-bit integer", s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_float(const char *s, double *out, char *why, size_t n)
{
    /* strtod also reads hex, inf and nan; a measurement parameter is a
       plain decimal number, so the characters are checked first. */
    int digits = 0, other = 0;
    for (const char *q = s; *q; q++) {
        if (isdigit((unsigned char)*q))
            digits = 1;
        else if (!strchr("+-.eE", *q))
            other = 1;
    }
    if (other)
        digits = 0;
    char *end = NULL;
    double v = digits > 0 ? strtod(s, &end) : 0;
    if (digits <= 0 || !end || *end) {
        say(why, n, "'%s' is not a number", s);
        return -1;
    }
    if (!isfinite(v)) {
        say(why, n, "'%s' is not a finite number", s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_bool(const char *s, int64_t *out, char *why, size_t n)
{
    for (size_t i = 0; i < sizeof bool_true / sizeof *bool_true; i++) {
        if (strcasecmp(s, bool_true[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(s, bool_false[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    say(why, n, "'%s' is not a boolean (use true/false, yes/no, on/off or 1/0)", s);
    return -1;
}

static int parse_enum(const kb_param *p, const char *s, int64_t *out, char *why, size_t n)
{
    if (p->choices) {
        for (size_t i = 0; i < p->n_choices; i++) {
            if (strcmp(s, p->choices[i]) == 0) {
                *out = (int64_t)i;
                return 0;
            }
        }
    }
    char list[512] = "";
    size_t used = 0;
    for (size_t i = 0; p->choices && i < p->n_choices && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                 p->choices[i]);
    say(why, n, "'%s' is not one of the allowed values (%s)", s, list);
    return -1;
}

/* Parses one value of p's type without the range check.  s is trimmed. */
static int parse_plain(const kb_param *p, const char *s, kb_value *out, char *why, size_t n)
{
    if (!*s) {
        say(why, n, "the value is empty");
        return -1;
    }
    kb_value v = {0};
    int rc = -1;
    switch (p->type) {
    case KB_PARAM_SIZE: rc = parse_size(s, &v.u, why, n); break;
    case KB_PARAM_INT:
        if (p == &kbc_key_cpu_threads && strcasecmp(s, "auto") == 0) {
            long cpus = sysconf(_SC_NPROCESSORS_ONLN);
            v.i = cpus < 1 ? 1 : cpus > 4096 ? 4096 : cpus;
            rc = 0;
        } else {
            rc = parse_int(s, &v.i, why, n);
        }
        break;
    case KB_PARAM_FLOAT:
        if (p == &kbc_key_budget) {
            /* The budget alone takes a unit: "500ms", "2s". */
            size_t len = strlen(s);
            char tmp[128];
            double scale = 1;
            if (len > 2 && strcasecmp(s + len - 2, "ms") == 0) {
                len -= 2;
                scale = 1e-3;
            } else if (len > 1 && (s[len - 1] == 's' || s[len - 1] == 'S')) {
                len -= 1;
            }
            while (len > 0 && isspace((unsigned char)s[len - 1]))
                len--;
            if (len >= sizeof tmp) {
                say(why, n, "'%s' is not a number", s);
                return -1;
            }
            memcpy(tmp, s, len);
            tmp[len] = '\0';
            rc = parse_float(tmp, &v.f, why, n);
            if (rc != 0)
                say(why, n, "'%s' is not a duration (use seconds, e.g. 2, 2s or 500ms)", s);
            v.f *= scale;
        } else {
            rc = parse_float(s, &v.f, why, n);
        }
        break;
    case KB_PARAM_ENUM: rc = parse_enum(p, s, &v.i, why, n); break;
    case KB_PARAM_BOOL: rc = parse_bool(s, &v.i, why, n); break;
    default: say(why, n, "parameter '%s' has an unknown type %d", p->name, (int)p->type);
    }
    if (rc == 0)
        *out = v;
    return rc;
}

/* Checks v against p's [min, max] (skipped when min > max). */
static int check_range(const kb_param *p, kb_value v, char *why, size_t n)
{
    if (p->min > p->max)
        return 0;
    double x;
    switch (p->type) {
    case KB_PARAM_SIZE: x = (double)v.u; break;
    case KB_PARAM_INT: x = (double)v.i; break;
    case KB_PARAM_FLOAT: x = v.f; break;
    default: return 0;
    }
    char val[64], bound[64];
    if (x < p->min || x > p->max) {
        kbc_value_format(p, v, val, sizeof val);
        fmt_bound(x < p->min ? p->min : p->max, bound, sizeof bound);
        say(why, n, "%s is %s the %s %s", val, x < p->min ? "below" : "above",
            x < p->min ? "minimum" : "maximum", bound);
        return -1;
    }
    return 0;
}

int kbc_value_parse(const kb_param *p, const char *text, kb_value *out, char *why, size_t whyn)
{
    if (!text) {
        say(why, whyn, "there is no value");
        return -1;
    }
    char *s = kbc_trim_dup(text);
    kb_value v;
    int rc = parse_plain(p, s, &v, why, whyn);
    if (rc == 0)
        rc = check_range(p, v, why, whyn);
    if (rc == 0)
        *out = v;
    free(s);
    return rc;
}

/* The values of a growing sweep. */
typedef struct vec {
    kb_value *v;
    size_t n, cap, max;
} vec;

static int push(vec *a, const kb_param *p, kb_value v, const char *whole, char *why, size_t n)
{
    if (check_range(p, v, why, n) != 0)
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
    if (parse_plain(p, lo_s, &lo, why, n) != 0 || parse_plain(p, hi_s, &hi, why, n) != 0)
        goto out;
    int down = p->type == KB_PARAM_SIZE ? hi.u < lo.u
               : p->type == KB_PARAM_INT ? hi.i < lo.i
                                         : hi.f < lo.f;
    if (down) {
        say(why, n, "the range '%s' runs downwards; write ranges from low to high", e);
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

    if (kind == 'x') {
        double f;
        if (p->type == KB_PARAM_FLOAT) {
            if (parse_float(num, &f, why, n) != 0)
                goto out;
        } else {
            uint64_t k;
            const char *end;
            if (digits_u64(num, &end, &k) != 0 || *end) {
                say(why, n, "the factor in '%s' must be a whole number of at least 2", e);
                goto out;
            }
            f = (double)k;
        }
        if (!(f > 1)) {
            say(why, n, "the step '%s' in '%s' does not advance; use a factor above 1", step_s,
                e);
            goto out;
        }
        int positive = p->type == KB_PARAM_SIZE ? lo.u > 0
                       : p->type == KB_PARAM_INT ? lo.i > 0
                                                 : lo.f > 0;
        if (!positive) {
            say(why, n, "the geometric range '%s' must start above 0", e);
            goto out;
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
                    goto out;
                if (v.f == hi.f)
                    break;
            }
        } else {
            uint64_t k = (uint64_t)f;
            if (p->type == KB_PARAM_SIZE) {
                for (uint64_t x = lo.u;;) {
                    if (push(a, p, (kb_value){.u = x}, whole, why, n) != 0)
                        goto out;
                    if (x > hi.u / k)
                        break;
                    x *= k;
                    if (x > hi.u)
                        break;
                }
            } else {
                for (int64_t x = lo.i;;) {
                    if (push(a, p, (kb_value){.i = x}, whole, why, n) != 0)
                        goto out;
                    if (x > hi.i / (int64_t)k)
                        break;
                    x *= (int64_t)k;
                    if (x > hi.i)
                        break;
                }
            }
        }
    } else {
        if (p->type == KB_PARAM_FLOAT) {
            double s;
            if (parse_float(num, &s, why, n) != 0)
                goto out;
            if (!(s > 0)) {
                say(why, n, "the step '%s' in '%s' does not advance; use a step above 0", step_s,
                    e);
                goto out;
            }
            /* start + i*step, not repeated sums, so errors do not pile up;
               the end is kept when a step lands on it within rounding. */
            double count = floor((hi.f - lo.f) / s + 1e-9) + 1;
            if (too_many(a, count, whole, why, n))
                goto out;
            for (double i = 0; i < count; i++) {
                kb_value v = {.f = lo.f + i * s};
                if (fabs(v.f - hi.f) <= 1e-9 * s || v.f > hi.f)
                    v.f = hi.f;
                if (push(a, p, v, whole, why, n) != 0)
                    goto out;
            }
        } else if (p->type == KB_PARAM_SIZE) {
            uint64_t s;
            if (parse_size(num, &s, why, n) != 0)
                goto out;
            if (s == 0) {
                say(why, n, "the step '%s' in '%s' does not advance; use a step above 0", step_s,
                    e);
                goto out;
            }
            if (too_many(a, (double)((hi.u - lo.u) / s) + 1, whole, why, n))
                goto out;
            for (uint64_t x = lo.u;;) {
                if (push(a, p, (kb_value){.u = x}, whole, why, n) != 0)
                    goto out;
                if (hi.u - x < s)
                    break;
                x += s;
            }
        } else {
            int64_t s;
            if (parse_int(num, &s, why, n) != 0)
                goto out;
            if (s <= 0) {
                say(why, n, "the step '%s' in '%s' does not advance; use a step above 0", step_s,
                    e);
                goto out;
            }
            uint64_t span = (uint64_t)hi.i - (uint64_t)lo.i;
            if (too_many(a, (double)(span / (uint64_t)s) + 1, whole, why, n))
                goto out;
            for (int64_t x = lo.i;;) {
                if (push(a, p, (kb_value){.i = x}, whole, why, n) != 0)
                    goto out;
                if ((uint64_t)hi.i - (uint64_t)x < (uint64_t)s)
                    break;
                x += s;
            }
        }
    }
    rc = 0;
out:
    free(lo_s);
    free(hi_s);
    free(step_s);
    return rc;
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
                rc = parse_plain(p, e, &v, why, whyn);
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

char *kbc_value_format(const kb_param *p, kb_value v, char *buf, size_t n)
{
    switch (p->type) {
    case KB_PARAM_SIZE: snprintf(buf, n, "%" PRIu64, v.u); break;
    case KB_PARAM_INT: snprintf(buf, n, "%" PRId64, v.i); break;
    case KB_PARAM_FLOAT: snprintf(buf, n, "%g", v.f); break;
    case KB_PARAM_ENUM: {
        /* Guard the index: a value can come from a caller, not only from
           the parser. */
        const char *name = NULL;
        if (p->choices && v.i >= 0 && (uint64_t)v.i < p->n_choices)
            name = p->choices[v.i];
        snprintf(buf, n, "%s", name ? name : "?");
        break;
    }
    case KB_PARAM_BOOL: snprintf(buf, n, "%s", v.i ? "true" : "false"); break;
    default: snprintf(buf, n, "?");
    }
    return buf;
}
