/* text.c -- see text.h. */
#include "text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static int cont(unsigned char c)
{
    return c >= 0x80 && c <= 0xbf;
}

size_t kbc_utf8_len(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char c = p[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return cont(p[1]) ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        /* E0 needs A0..BF next (no overlong form), ED 80..9F (no
           surrogate). */
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return p[1] >= lo && p[1] <= hi && cont(p[2]) ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        /* F0 needs 90..BF next (no overlong form), F4 80..8F (nothing
           above U+10FFFF). */
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3]) ? 4 : 0;
    }
    return 0; /* 80..C1 (a continuation byte, or an overlong lead), F5..FF */
}

/* The visible spelling of the character at s (len bytes, 0 for a byte that
   is not UTF-8) into esc, or "" when it is kept as it is. */
static void escape_of(const char *s, size_t len, char esc[8])
{
    unsigned char c = (unsigned char)s[0];
    esc[0] = '\0';
    if (len == 0)
        snprintf(esc, 8, "\\x%02x", c);
    else if (c == '\n')
        snprintf(esc, 8, "\\n");
    else if (c == '\r')
        snprintf(esc, 8, "\\r");
    else if (c == '\t')
        snprintf(esc, 8, "\\t");
    else if (c < 0x20 || c == 0x7f)
        snprintf(esc, 8, "\\x%02x", c);
    else if (len == 2 && c == 0xc2 && (unsigned char)s[1] < 0xa0)
        snprintf(esc, 8, "\\u%04x", (unsigned char)s[1]); /* C1: U+0080..U+009F */
}

int kbc_text_needs_escape(const char *s)
{
    for (const char *p = s; p && *p;) {
        size_t len = kbc_utf8_len(p);
        char esc[8];
        escape_of(p, len, esc);
        if (esc[0])
            return 1;
        p += len;
    }
    return 0;
}

const char *kbc_text_visible_to(const char *s, char *buf, size_t n)
{
    if (n == 0)
        return buf;
    size_t used = 0;
    buf[0] = '\0';
    for (const char *p = s ? s : ""; *p;) {
        size_t len = kbc_utf8_len(p);
        char esc[8];
        escape_of(p, len, esc);
        const char *piece = esc[0] ? esc : p;
        size_t k = esc[0] ? strlen(esc) : len;
        if (used + k + 1 > n)
            break;
        memcpy(buf + used, piece, k);
        used += k;
        p += len ? len : 1;
    }
    buf[used] = '\0';
    return buf;
}

const char *kbc_text_visible(const char *s)
{
    static _Thread_local char ring[8][4096];
    static _Thread_local unsigned at;
    char *buf = ring[at++ % 8];
    return kbc_text_visible_to(s, buf, sizeof ring[0]);
}

const char *kbc_text_md(const char *s)
{
    static _Thread_local char ring[8][8192];
    static _Thread_local unsigned at;
    char *buf = ring[at++ % 8];
    const char *v = kbc_text_visible(s);
    size_t used = 0;
    for (const char *p = v; *p && used + 3 < sizeof ring[0]; p++) {
        if (strchr("\\`*[]<>&|", *p))
            buf[used++] = '\\';
        buf[used++] = *p;
    }
    buf[used] = '\0';
    return buf;
}

const char *kbc_text_shown(int md, const char *s)
{
    return md ? kbc_text_md(s) : kbc_text_visible(s);
}

void kbc_text_md_code(FILE *f, const char *s, int in_cell)
{
    const char *v = kbc_text_visible(s);
    size_t run = 0, longest = 0;
    for (const char *p = v; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    int pad = v[0] == '`' || (v[0] && v[strlen(v) - 1] == '`');
    for (size_t i = 0; i <= longest; i++)
        fputc('`', f);
    if (pad)
        fputc(' ', f);
    for (const char *p = v; *p; p++) {
        if (in_cell && *p == '|')
            fputc('\\', f);
        fputc(*p, f);
    }
    if (pad)
        fputc(' ', f);
    for (size_t i = 0; i <= longest; i++)
        fputc('`', f);
}

char *kbc_text_utf8(const char *s)
{
    size_t bad = 0;
    for (const char *p = s; *p;) {
        size_t len = kbc_utf8_len(p);
        bad += len == 0;
        p += len ? len : 1;
    }
    if (bad == 0)
        return NULL;
    /* U+FFFD is three bytes (EF BF BD) for each bad byte. */
    char *out = kbc_xmalloc(strlen(s) + 2 * bad + 1), *o = out;
    for (const char *p = s; *p;) {
        size_t len = kbc_utf8_len(p);
        if (len == 0) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            p++;
        } else {
            memcpy(o, p, len);
            o += len;
            p += len;
        }
    }
    *o = '\0';
    return out;
}

/* Whether a spreadsheet would take the text s for a formula: it starts
   with =, +, - or @ (or a tab or CR, which some strip first) and is not a
   number as a whole ("-1", "+2.5e3" stay numbers). */
static int formula_like(const char *s)
{
    if (!s[0] || !strchr("=+-@\t\r", s[0]))
        return 0;
    char *end;
    double x = strtod(s, &end);
    return end == s || *end || !isfinite(x);
}

void kbc_text_csv(FILE *f, const char *s)
{
    if (!s)
        return;
    int formula = formula_like(s);
    if (!formula && strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    if (formula)
        fputc('\'', f);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

void kbc_text_html(FILE *f, const char *s)
{
    if (!s)
        return;
    size_t need = 4 * strlen(s) + 1; /* the longest escape (\xHH) is 4 per byte */
    char *vis = kbc_xmalloc(need);
    kbc_text_visible_to(s, vis, need);
    for (const char *p = vis; *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*p, f);
        }
    }
    free(vis);
}

int kbc_colour_wanted(int is_tty, const char *no_color)
{
    return is_tty && !(no_color && no_color[0]);
}

int kbc_colour_for(FILE *f)
{
    return f && kbc_colour_wanted(isatty(fileno(f)), getenv("NO_COLOR"));
}
