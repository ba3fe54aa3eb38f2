/*
 * value.c -- see value.h.
 *
 * Decisions (documented for users in docs/ini-format.md):
 *   - SIZE: decimal digits, optionally followed by K, M, G or T in either
 *     case, optionally followed by "i" or "iB" (4K = 4k = 4KiB = 4096: the
 *     multiples are binary).  "KB" is refused because it reads as 1000.
 *     Or 2^k with 0 <= k <= 63.  No sign, no fraction.  Either may be
 *     followed by + or - and a whole number without a multiple (2^20+3,
 *     1M-1): sizes one off a power of two are common test points.  A
 *     result beyond 64 bits or below 0 is refused, never wrapped.
 *   - INT: an optional sign and decimal digits.
 *   - FLOAT: a decimal number (strtod), finite; no hex, inf or nan.
 *   - Limits: an integer is within [min, max] by exact comparison with
 *     the double limits; a limit prints as 2^k when it is a large power
 *     of two, as `kbench describe` shows it.
 */
#define _GNU_SOURCE
#include "value.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

static const char *const bool_true[] = {"true", "yes", "on", "1"};
static const char *const bool_false[] = {"false", "no", "off", "0"};

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

char *kbc_bound_format(const kb_param *p, double x, char *buf, size_t n)
{
    if (x == floor(x) && fabs(x) < 18446744073709551616.0) {
        int e;
        if ((p->type == KB_PARAM_SIZE || p->type == KB_PARAM_INT) && x >= 65536.0 &&
            frexp(x, &e) == 0.5)
            snprintf(buf, n, "2^%d", e - 1);
        else
            snprintf(buf, n, "%.0f", x);
    } else {
        snprintf(buf, n, "%g", x);
    }
    return buf;
}

int kbc_cmp_u64_double(uint64_t v, double d)
{
    if (isnan(d))
        return 0;
    if (d < 0)
        return 1;
    if (d >= 18446744073709551616.0)
        return -1;
    /* floor(d) is now in [0, 2^64) and a whole number, so the conversion
       is exact; a fraction left over puts d just above that integer. */
    double fl = floor(d);
    uint64_t di = (uint64_t)fl;
    if (v != di)
        return v < di ? -1 : 1;
    return fl < d ? -1 : 0;
}

int kbc_cmp_i64_double(int64_t v, double d)
{
    if (isnan(d))
        return 0;
    if (d >= 9223372036854775808.0)
        return -1;
    if (d < -9223372036854775808.0)
        return 1;
    double fl = floor(d);
    int64_t di = (int64_t)fl;
    if (v != di)
        return v < di ? -1 : 1;
    return fl < d ? -1 : 0;
}

int kbc_parse_digits(const char *s, const char **end, uint64_t *out)
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

#define SIZE_HINT "use digits with K, M, G, or 2^k"

/* One size term, term[0 .. len): digits with an optional binary multiple,
   or 2^k.  whole is the value as written, for the messages. */
static int parse_size_term(const char *term, size_t len, const char *whole, uint64_t *out,
                           char *why, size_t n)
{
    char buf[128];
    if (len == 0 || len >= sizeof buf) {
        say(why, n, "'%s' is not a size (" SIZE_HINT ")", whole);
        return -1;
    }
    memcpy(buf, term, len);
    buf[len] = '\0';
    const char *s = buf, *p;
    uint64_t v;
    if (s[0] == '2' && s[1] == '^') {
        uint64_t k;
        int rc = kbc_parse_digits(s + 2, &p, &k);
        if (rc == -1 || *p) {
            say(why, n, "'%s' is not a size (" SIZE_HINT ")", whole);
            return -1;
        }
        if (rc == -2 || k > 63) {
            say(why, n, "'%s' does not fit in 64 bits (2^63 is the largest power)", whole);
            return -1;
        }
        *out = 1ULL << k;
        return 0;
    }
    int rc = kbc_parse_digits(s, &p, &v);
    if (rc == -2) {
        say(why, n, "'%s' does not fit in 64 bits", whole);
        return -1;
    }
    if (rc == -1) {
        say(why, n, "'%s' is not a size (" SIZE_HINT ")", whole);
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
                    whole, (int)(p - s), s, (int)(p - s), s);
            else
                say(why, n, "'%s' is not a size (" SIZE_HINT ")", whole);
            return -1;
        }
    }
    if (shift && v > (UINT64_MAX >> shift)) {
        say(why, n, "'%s' does not fit in 64 bits", whole);
        return -1;
    }
    *out = v << shift;
    return 0;
}

int kbc_parse_size(const char *s, uint64_t *out, char *why, size_t n)
{
    if (s[0] == '-') {
        say(why, n, "'%s' is negative, and a size cannot be", s);
        return -1;
    }
    /* One word: a space inside (2^20 + 3) is refused, as ever. */
    if (s[strcspn(s, " \t")]) {
        say(why, n, "'%s' is not a size (" SIZE_HINT "; no spaces inside: 2^20+3)", s);
        return -1;
    }
    /* A term, then optionally + or - and a whole number: 2^20+3, 1M-1.  The
       term holds no sign, so the first one after its start is the offset's. */
    size_t at = s[0] ? 1 + strcspn(s + 1, "+-") : 0;
    uint64_t base;
    if (parse_size_term(s, at, s, &base, why, n) != 0)
        return -1;
    if (!s[at]) {
        *out = base;
        return 0;
    }
    const char sign = s[at];
    const char *q = s + at + 1, *end;
    uint64_t off;
    int rc = kbc_parse_digits(q, &end, &off);
    while (rc == -2 && isdigit((unsigned char)*end))
        end++; /* a number too large: still a number, refused below */
    if (rc == -1 || *end) {
        say(why, n,
            "'%s' is not a size: after the %c comes a whole number without a multiple "
            "(2^20+3, 1M-1)",
            s, sign);
        return -1;
    }
    if (sign == '+') {
        if (rc == -2 || off > UINT64_MAX - base) {
            say(why, n, "'%s' does not fit in 64 bits", s);
            return -1;
        }
        *out = base + off;
        return 0;
    }
    if (rc == -2 || off > base) {
        say(why, n, "'%s' is below 0, and a size cannot be", s);
        return -1;
    }
    *out = base - off;
    return 0;
}

int kbc_parse_int(const char *s, int64_t *out, char *why, size_t n)
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

int kbc_parse_float(const char *s, double *out, char *why, size_t n)
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

int kbc_value_parse_plain(const kb_param *p, const char *s, kb_value *out, char *why, size_t n)
{
    if (!*s) {
        say(why, n, "the value is empty");
        return -1;
    }
    kb_value v = {0};
    int rc = -1;
    switch (p->type) {
    case KB_PARAM_SIZE: rc = kbc_parse_size(s, &v.u, why, n); break;
    case KB_PARAM_INT: rc = kbc_parse_int(s, &v.i, why, n); break;
    case KB_PARAM_FLOAT: rc = kbc_parse_float(s, &v.f, why, n); break;
    case KB_PARAM_ENUM: rc = parse_enum(p, s, &v.i, why, n); break;
    case KB_PARAM_BOOL: rc = parse_bool(s, &v.i, why, n); break;
    default: say(why, n, "parameter '%s' has an unknown type %d", p->name, (int)p->type);
    }
    if (rc == 0)
        *out = v;
    return rc;
}

/* The multiples of m next to a value that is not one, as text: "96 and
   128", or one of them where the other would pass 64 bits. */
static void nearest_multiples(const kb_param *p, kb_value v, uint64_t m, char *out, size_t n)
{
    if (p->type == KB_PARAM_SIZE) {
        uint64_t lo = v.u - v.u % m;
        if (lo > UINT64_MAX - m)
            snprintf(out, n, "%" PRIu64, lo);
        else
            snprintf(out, n, "%" PRIu64 " and %" PRIu64, lo, lo + m);
        return;
    }
    /* INT: m <= INT64_MAX here.  C's % takes the dividend's sign, so t is
       the multiple next to v on the side of 0, and the other one is a step
       further out: neither end may pass 64 bits. */
    int64_t mi = (int64_t)m, t = v.i - v.i % mi;
    int out_ok = v.i >= 0 ? t <= INT64_MAX - mi : t >= INT64_MIN + mi;
    int64_t lo = v.i >= 0 ? t : out_ok ? t - mi : t;
    int64_t hi = v.i >= 0 ? (out_ok ? t + mi : t) : t;
    if (out_ok)
        snprintf(out, n, "%" PRId64 " and %" PRId64, lo, hi);
    else
        snprintf(out, n, "%" PRId64, t);
}

/* p's multiple_of (kbench/plugin.h, minor 3): INT and SIZE values must be
   multiples of it; 0 and 1 allow every value. */
static int check_multiple(const kb_param *p, kb_value v, char *why, size_t n)
{
    uint64_t m = p->multiple_of;
    if (m <= 1 || (p->type != KB_PARAM_SIZE && p->type != KB_PARAM_INT))
        return 0;
    int ok;
    if (p->type == KB_PARAM_SIZE)
        ok = v.u % m == 0;
    else if (m > (uint64_t)INT64_MAX)
        ok = v.i == 0; /* no other int64 is a multiple of so large an m */
    else
        ok = v.i % (int64_t)m == 0;
    if (ok)
        return 0;
    char val[64], near[96];
    kbc_value_format(p, v, val, sizeof val);
    if (p->type == KB_PARAM_INT && m > (uint64_t)INT64_MAX)
        snprintf(near, sizeof near, "0");
    else
        nearest_multiples(p, v, m, near, sizeof near);
    say(why, n, "%s is not a multiple of %" PRIu64 " (the nearest %s %s)", val, m,
        strchr(near, ' ') ? "are" : "is", near);
    return -1;
}

int kbc_value_check_range(const kb_param *p, kb_value v, char *why, size_t n)
{
    if (p->min > p->max)
        return check_multiple(p, v, why, n);
    /* Integers are compared with the limits as integers: (double)v would
       round 2^62 + 1 down to 2^62 and let it pass a maximum of 2^62. */
    int below, above;
    switch (p->type) {
    case KB_PARAM_SIZE:
        below = kbc_cmp_u64_double(v.u, p->min) < 0;
        above = kbc_cmp_u64_double(v.u, p->max) > 0;
        break;
    case KB_PARAM_INT:
        below = kbc_cmp_i64_double(v.i, p->min) < 0;
        above = kbc_cmp_i64_double(v.i, p->max) > 0;
        break;
    case KB_PARAM_FLOAT:
        below = v.f < p->min;
        above = v.f > p->max;
        break;
    default: return 0;
    }
    if (below || above) {
        char val[64], bound[64];
        kbc_value_format(p, v, val, sizeof val);
        kbc_bound_format(p, below ? p->min : p->max, bound, sizeof bound);
        say(why, n, "%s is %s the %s %s", val, below ? "below" : "above",
            below ? "minimum" : "maximum", bound);
        return -1;
    }
    return check_multiple(p, v, why, n);
}

int kbc_value_parse(const kb_param *p, const char *text, kb_value *out, char *why, size_t whyn)
{
    if (!text) {
        say(why, whyn, "there is no value");
        return -1;
    }
    char *s = kbc_trim_dup(text);
    kb_value v;
    int rc = kbc_value_parse_plain(p, s, &v, why, whyn);
    if (rc == 0)
        rc = kbc_value_check_range(p, v, why, whyn);
    if (rc == 0)
        *out = v;
    free(s);
    return rc;
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
