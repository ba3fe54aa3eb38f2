/*
 * ini.c -- see ini.h.
 *
 * The system's inih does the splitting of `key = value` lines, but it reads
 * through our reader (feed() below), which sees each physical line whole
 * before inih does.  The reader
 *   - counts lines, so that every diagnostic names the right one (inih calls
 *     the handler right after it asked the reader for the line, so the
 *     reader's count is the handler's line);
 *   - strips leading white space, so that inih never takes an indented line
 *     for the continuation of the previous value;
 *   - records section headers itself, so that an empty section still exists
 *     and a duplicate one is caught with both lines named;
 *   - checks that each line is a comment, a header or `key = value`, with
 *     the reasons inih would not give;
 *   - hands a line too long for inih's buffer over as `key = <marker><n>`,
 *     with the real value parked in a side table that the handler reads;
 *   - expands ${NAME} and ${NAME:-default} from the environment in values
 *     (the handler; expand() below);
 *   - refuses what is not text (a NUL byte, a line over KBC_INI_MAX_LINE)
 *     as soon as it sees it, and names invisible characters that would
 *     otherwise make a key or value differ from what the user sees.
 * Sections and keys are found through open-addressing hash indexes (linear
 * probing, kept at most half full), so that the duplicate checks and the
 * lookups cost the same for the ten-thousandth name as for the first.
 */
#include "ini.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input.h"

/* The system inih's entry point.  Its header is also called ini.h, and the
   core's include folder (which holds our ini.h) comes first on the search
   path, so `#include <ini.h>` would find ours; we declare the one function
   we use instead.  Debian builds inih without INI_HANDLER_LINENO, so the
   handler takes no line number. */
typedef char *(*kbc_inih_reader)(char *str, int num, void *stream);
typedef int (*kbc_inih_handler)(void *user, const char *section, const char *name,
                                const char *value);
int ini_parse_stream(kbc_inih_reader reader, void *stream, kbc_inih_handler handler, void *user);

/* inih keeps section names in a 50-byte buffer; we hold ourselves to what it
   keeps, so that nothing downstream ever sees a name cut short. */
#define KBC_INI_MAX_SECTION 49

/* Keys are names, not text; a fixed limit keeps every key line well inside
   inih's buffer once a long value is parked. */
#define KBC_INI_MAX_KEY 64

/* Starts a parked value in the line handed to inih.  Control characters
   are refused in the file itself, so this byte cannot come from a user. */
#define KBC_INI_MARKER '\x1d'

/* A file whose reading an include interrupted, to go back to. */
typedef struct include_frame {
    FILE *f;
    const char *text;
    size_t pos;
    int line;
    const char *file;
} include_frame;

typedef struct reader {
    /* The source: a FILE or a string. */
    FILE *f;
    const char *text;
    size_t pos;

    int line;   /* physical lines read so far, in the current file */
    const char *file; /* the current file's name, for diagnostics */
    include_frame outer[KBC_INI_MAX_INCLUDE]; /* the files that include it */
    int depth;
    char *buf;  /* the current physical line */
    size_t cap;

    char **parked; /* values of lines too long for inih */
    size_t n_parked, cap_parked;

    kbc_ini *ini;
    long cur; /* index of the current section, or -1 before the first */
    kbc_diag *d;
    int failed; /* set with d; the reader then reports end of input */
} reader;

/* ------------------------------------------------------------------------
 * Hash indexes of names
 * ---------------------------------------------------------------------- */

/* FNV-1a: names are short, and it needs no state. */
static size_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return (size_t)h;
}

typedef const char *(*name_at_fn)(const void *arr, size_t i);

static const char *section_name_at(const void *arr, size_t i)
{
    return ((const kbc_section *)arr)[i].name;
}

static const char *entry_key_at(const void *arr, size_t i)
{
    return ((const kbc_entry *)arr)[i].key;
}

/* The position of name in arr[0..n), or -1.  An index that was never
   built (a structure filled by hand) is searched by a scan instead. */
static long index_find(const kbc_index *x, const void *arr, size_t n, name_at_fn name_at,
                       const char *name)
{
    if (!x->cap) {
        for (size_t i = 0; i < n; i++)
            if (strcmp(name_at(arr, i), name) == 0)
                return (long)i;
        return -1;
    }
    for (size_t h = hash_name(name) & (x->cap - 1);; h = (h + 1) & (x->cap - 1)) {
        size_t v = x->slots[h];
        if (!v)
            return -1;
        if (strcmp(name_at(arr, v - 1), name) == 0)
            return (long)(v - 1);
    }
}

static void index_put(kbc_index *x, size_t pos, const char *name)
{
    size_t h = hash_name(name) & (x->cap - 1);
    while (x->slots[h])
        h = (h + 1) & (x->cap - 1);
    x->slots[h] = pos + 1;
}

/* Records arr[n - 1], just appended, in x; doubles x when it would become
   more than half full, which keeps probes short. */
static void index_add(kbc_index *x, const void *arr, size_t n, name_at_fn name_at)
{
    if (2 * n > x->cap) {
        size_t cap = x->cap ? x->cap : 16;
        while (2 * n > cap)
            cap *= 2;
        free(x->slots);
        x->slots = kbc_xcalloc(cap, sizeof *x->slots);
        x->cap = cap;
        for (size_t i = 0; i < n; i++)
            index_put(x, i, name_at(arr, i));
        return;
    }
    index_put(x, n - 1, name_at(arr, n - 1));
}

static void index_free(kbc_index *x)
{
    free(x->slots);
    x->slots = NULL;
    x->cap = 0;
}

/* ------------------------------------------------------------------------
 * The reader
 * ---------------------------------------------------------------------- */

static void fail_at(reader *r, const char *fmt, ...) KB_PRINTF(2, 3);

static void fail_at(reader *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    char what[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    kbc_diag_set(r->d, "%s:%d: %s", r->file, r->line, what);
    r->failed = 1;
}

/* Reads one physical line into r->buf, without its '\n'.  Returns the
   number of bytes, or -1 at the end of input or on a failure (r->failed).
   A NUL byte or a line longer than KBC_INI_MAX_LINE stops the reading at
   once: such a file is not text, and /dev/zero would otherwise be read
   until memory runs out. */
static long read_line(reader *r)
{
    size_t n = 0;
    int any = 0;
    for (;;) {
        int c;
        if (r->f) {
            c = getc(r->f);
            if (c == EOF && ferror(r->f)) {
                /* An included file's failure names the include line too. */
                const include_frame *o = r->depth ? &r->outer[r->depth - 1] : NULL;
                if (o)
                    kbc_diag_set(r->d, "%s:%d: the file it includes, %s, cannot be read (%s).",
                                 o->file, o->line, r->file, strerror(errno));
                else
                    kbc_diag_set(r->d, "%s: cannot be read (%s).", r->file, strerror(errno));
                r->failed = 1;
                return -1;
            }
        } else {
            c = r->text[r->pos] ? (unsigned char)r->text[r->pos++] : EOF;
        }
        if (c == EOF)
            break;
        any = 1;
        if (c == '\n')
            break;
        if (c == '\0' || n >= KBC_INI_MAX_LINE) {
            r->line++;
            if (c == '\0')
                fail_at(r, "column %zu: a NUL byte; this is not a text file, and an INI file "
                           "must be one.",
                        n + 1);
            else
                fail_at(r, "the line is longer than %d bytes; this does not look like an INI "
                           "file.",
                        KBC_INI_MAX_LINE);
            return -1;
        }
        if (n + 2 > r->cap) {
            r->cap = r->cap ? r->cap * 2 : 256;
            r->buf = kbc_xrealloc(r->buf, r->cap);
        }
        r->buf[n++] = (char)c;
    }
    if (!any)
        return -1;
    if (!r->buf) {
        r->cap = 256;
        r->buf = kbc_xmalloc(r->cap);
    }
    r->buf[n] = '\0';
    return (long)n;
}

/* A short quotation of a line for a diagnostic. */
static void quote(const char *s, char *out, size_t n)
{
    size_t len = strlen(s);
    if (len < 60)
        snprintf(out, n, "'%s'", s);
    else
        snprintf(out, n, "'%.50s...'", s);
}

static int key_char(int c)
{
    return isalnum(c) || c == '_' || c == '-' || c == '.';
}

/* Cuts an inline comment the way inih does for the lines it reads: a ';'
   that follows white space starts a comment.  Used for parked values, which
   inih never sees, so that long and short lines behave alike. */
static void cut_inline_comment(char *v)
{
    int was_space = 0;
    for (char *p = v; *p; p++) {
        if (was_space && *p == ';') {
            *p = '\0';
            return;
        }
        was_space = isspace((unsigned char)*p);
    }
}

static void add_section(reader *r, const char *name)
{
    kbc_ini *ini = r->ini;
    long prev = index_find(&ini->names, ini->sections, ini->n, section_name_at, name);
    if (prev >= 0) {
        const kbc_section *p = &ini->sections[prev];
        const char *pf = p->file ? p->file : ini->path;
        if (strcmp(pf, r->file) != 0)
            fail_at(r, "section [%s] appears twice (%s:%d and here); merge the two.", name, pf,
                    p->line);
        else
            fail_at(r, "section [%s] appears twice (lines %d and %d); merge the two.", name,
                    p->line, r->line);
        return;
    }
    if (ini->n == ini->cap) {
        ini->cap = ini->cap ? ini->cap * 2 : 8;
        ini->sections = kbc_xrealloc(ini->sections, ini->cap * sizeof *ini->sections);
    }
    kbc_section *s = &ini->sections[ini->n];
    memset(s, 0, sizeof *s);
    s->name = kbc_xstrdup(name);
    s->line = r->line;
    s->file = r->depth ? r->file : NULL;
    r->cur = (long)ini->n++;
    index_add(&ini->names, ini->sections, ini->n, section_name_at);
}

/* Handles a line that starts with '['.  s is trimmed on both sides. */
static char *feed_header(reader *r, char *s, char *out, int num)
{
    char *end = strchr(s, ']');
    char q[80];
    if (!end) {
        quote(s, q, sizeof q);
        fail_at(r, "the section header %s has no closing ']'.", q);
        return NULL;
    }
    char *after = end + 1;
    while (isspace((unsigned char)*after))
        after++;
    if (*after && *after != ';' && *after != '#') {
        quote(after, q, sizeof q);
        fail_at(r, "unexpected text %s after the section header (only a comment may follow "
                   "']').",
                q);
        return NULL;
    }
    *end = '\0';
    char *name = kbc_trim_dup(s + 1);
    size_t len = strlen(name);
    if (len == 0) {
        fail_at(r, "the section header '[]' has no name.");
    } else if (strpbrk(name, "[;#")) {
        /* inih would read ';' as the start of a comment. */
        fail_at(r, "the section name '%s' contains '%c', which section names may not.", name,
                *strpbrk(name, "[;#"));
    } else if (len > KBC_INI_MAX_SECTION) {
        fail_at(r, "the section name '%.30s...' is %zu characters long; the limit is %d.", name,
                len, KBC_INI_MAX_SECTION);
    } else {
        add_section(r, name);
    }
    if (!r->failed)
        snprintf(out, (size_t)num, "[%s]", name);
    free(name);
    return r->failed ? NULL : out;
}

/* Handles a `key = value` line.  s is trimmed on both sides. */
static char *feed_entry(reader *r, char *s, char *out, int num)
{
    char q[80];
    char *eq = strchr(s, '=');
    if (!eq) {
        quote(s, q, sizeof q);
        fail_at(r, "%s is not a 'key = value' line, a [section] header or a comment.", q);
        return NULL;
    }
    *eq = '\0';
    char *key = kbc_trim_dup(s);
    char *raw = eq + 1;
    if (!*key) {
        fail_at(r, "the line has no key before '='.");
        goto out;
    }
    for (const char *p = key; *p; p++) {
        if (!key_char((unsigned char)*p)) {
            quote(key, q, sizeof q);
            fail_at(r, "%s is not a valid key (keys are made of letters, digits, '_', '-' "
                       "and '.').",
                    q);
            goto out;
        }
    }
    if (strlen(key) > KBC_INI_MAX_KEY) {
        fail_at(r, "the key '%.30s...' is %zu characters long; the limit is %d.", key,
                strlen(key), KBC_INI_MAX_KEY);
        goto out;
    }
    if (r->cur < 0) {
        fail_at(r, "key '%s' comes before any section; put it under [global] or under an "
                   "experiment's [name].",
                key);
        goto out;
    }

    /* inih's buffer must hold the line plus "\r\n\0" (so its header says);
       leave that much room. */
    size_t room = num > 3 ? (size_t)num - 3 : 0;
    size_t whole = strlen(key) + 3 + strlen(raw);
    if (whole <= room) {
        snprintf(out, (size_t)num, "%s =%s", key, raw);
    } else {
        char *v = kbc_xstrdup(raw);
        cut_inline_comment(v);
        char *t = kbc_trim_dup(v);
        free(v);
        if (r->n_parked == r->cap_parked) {
            r->cap_parked = r->cap_parked ? r->cap_parked * 2 : 8;
            r->parked = kbc_xrealloc(r->parked, r->cap_parked * sizeof *r->parked);
        }
        size_t idx = r->n_parked;
        r->parked[r->n_parked++] = t;
        int len = snprintf(out, (size_t)num, "%s = %c%zu", key, KBC_INI_MARKER, idx);
        if (len < 0 || (size_t)len > room) {
            fail_at(r, "the key '%s' does not fit in the INI parser's %d-byte line.", key, num);
            goto out;
        }
    }
out:
    free(key);
    return r->failed ? NULL : out;
}

/* Characters that show as a blank or as nothing at all, so that a key or
   value holding one looks right and is not: pasted from a web page or a
   word processor, usually. */
static const struct invisible {
    const char *bytes; /* UTF-8 */
    const char *code, *name;
} invisibles[] = {
    {"\xC2\xA0", "U+00A0", "no-break space"},
    {"\xE2\x80\x8B", "U+200B", "zero-width space"},
    {"\xE2\x80\x8C", "U+200C", "zero-width non-joiner"},
    {"\xE2\x80\x8D", "U+200D", "zero-width joiner"},
    {"\xE2\x80\xAF", "U+202F", "narrow no-break space"},
    {"\xE2\x81\xA0", "U+2060", "word joiner"},
    {"\xEF\xBB\xBF", "U+FEFF", "byte order mark"},
};

/* Refuses an invisible character in a line that is not a comment, naming
   its column in characters (a UTF-8 sequence counts as one).  Returns 0,
   or -1 after fail_at. */
static int check_invisible(reader *r, const char *s, long n)
{
    const char *first = s;
    while (isspace((unsigned char)*first))
        first++;
    if (*first == ';' || *first == '#')
        return 0;
    long column = 0;
    for (long i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80)
            column++;
        if (c < 0x80)
            continue;
        for (size_t k = 0; k < sizeof invisibles / sizeof *invisibles; k++) {
            const struct invisible *v = &invisibles[k];
            size_t len = strlen(v->bytes);
            if ((size_t)(n - i) >= len && memcmp(s + i, v->bytes, len) == 0) {
                fail_at(r, "column %ld: an invisible %s (%s) is in the line; replace it with a "
                           "plain space or delete it.",
                        column, v->code, v->name);
                return -1;
            }
        }
    }
    return 0;
}

/* Whether a and b are one file (the same device and inode). */
static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* `include = FILE`: FILE (relative to the current file's folder) is read
   from here on, and the current file after it.  Returns 0, or -1 after
   fail_at. */
static int include(reader *r, const char *raw)
{
    char *v = kbc_xstrdup(raw);
    cut_inline_comment(v);
    char *name = kbc_trim_dup(v);
    free(v);
    int rc = -1;
    char *path = NULL;
    if (!*name) {
        fail_at(r, "'include =' names no file; write include = FILE.");
        goto out;
    }
    const char *slash = strrchr(r->file, '/');
    if (name[0] == '/' || !slash)
        path = kbc_xstrdup(name);
    else
        path = kbc_xasprintf("%.*s/%s", (int)(slash - r->file), r->file, name);
    if (r->depth >= KBC_INI_MAX_INCLUDE) {
        fail_at(r, "include = %s: includes nest deeper than %d files; a file probably "
                   "includes itself through another.",
                name, KBC_INI_MAX_INCLUDE);
        goto out;
    }
    /* A file that is being read already would be read forever. */
    for (int k = 0; k <= r->depth; k++) {
        const char *f = k < r->depth ? r->outer[k].file : r->file;
        if (same_file(path, f)) {
            fail_at(r, "include = %s: %s is already being read (it includes this file, "
                       "directly or through others); remove one of the includes.",
                    name, f);
            goto out;
        }
    }
    char why[200];
    FILE *f = kbc_input_fopen(path, KBC_INPUT_TEXT_MAX, why, sizeof why);
    if (!f) {
        fail_at(r, "include = %s: %s cannot be opened (%s).", name, path, why);
        goto out;
    }
    kbc_ini *ini = r->ini;
    ini->files = kbc_xrealloc(ini->files, (ini->n_files + 1) * sizeof *ini->files);
    ini->files[ini->n_files++] = path;
    r->outer[r->depth++] = (include_frame){r->f, r->text, r->pos, r->line, r->file};
    r->f = f;
    r->text = NULL;
    r->pos = 0;
    r->line = 0;
    r->file = path;
    path = NULL;
    rc = 0;
out:
    free(path);
    free(name);
    return rc;
}

/* The ini_reader: hands inih one physical line, checked and rewritten. */
static char *feed(char *out, int num, void *stream)
{
    reader *r = stream;
    if (r->failed)
        return NULL;
    long n;
    /* The end of an included file: back to the one that includes it. */
    while ((n = read_line(r)) < 0 && !r->failed && r->depth > 0) {
        fclose(r->f);
        include_frame *o = &r->outer[--r->depth];
        r->f = o->f;
        r->text = o->text;
        r->pos = o->pos;
        r->line = o->line;
        r->file = o->file;
    }
    if (n < 0)
        return NULL;
    r->line++;
    char *s = r->buf;
    if (n > 0 && s[n - 1] == '\r')
        s[--n] = '\0';
    /* A UTF-8 byte order mark, as some editors write one. */
    if (r->line == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
        s += 3;
        n -= 3;
    }
    for (long i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            fail_at(r, "the line contains a control character (byte 0x%02x at column %ld); only "
                       "tabs are allowed.",
                    c, i + 1);
            return NULL;
        }
    }
    if (check_invisible(r, s, n) != 0)
        return NULL;
    while (isspace((unsigned char)*s))
        s++;
    n = (long)strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';

    if (*s == '\0' || *s == ';' || *s == '#') {
        /* Blank or comment: inih has nothing to do, but must still count
           the line, so it gets an empty one. */
        out[0] = '\0';
        return out;
    }
    if (*s == '[')
        return feed_header(r, s, out, num);
    if (strncmp(s, "include", 7) == 0 && (s[7] == '=' || isspace((unsigned char)s[7]))) {
        const char *eq = s + 7;
        while (isspace((unsigned char)*eq))
            eq++;
        if (*eq == '=') {
            if (include(r, eq + 1) != 0)
                return NULL;
            out[0] = '\0'; /* inih sees an empty line */
            return out;
        }
    }
    return feed_entry(r, s, out, num);
}

/* Expands ${NAME} and ${NAME:-default} in value from the environment (as
   fio does): NAME is a letter or '_' then letters, digits and '_'; the
   default is used when NAME is unset or empty, and may not itself hold
   '}'.  "$$" is one '$'; any other '$' is kept as it is.  Returns a new
   string, or NULL after fail_at (an unset NAME without a default, an
   unterminated ${, a bad name, a control character from the
   environment). */
static char *expand(reader *r, const char *key, const char *section, const char *value)
{
    if (!strchr(value, '$'))
        return kbc_xstrdup(value);
    size_t cap = strlen(value) + 64, n = 0;
    char *out = kbc_xmalloc(cap);
    for (const char *p = value; *p;) {
        const char *piece = p;
        size_t len = 1;
        char name[128];
        if (p[0] == '$' && p[1] == '$') {
            len = 1;
            p += 2;
        } else if (p[0] == '$' && p[1] == '{') {
            const char *close = strchr(p + 2, '}');
            if (!close) {
                fail_at(r, "key '%s' in [%s]: '${' without its '}'; write $$ for a '$'.", key,
                        section);
                free(out);
                return NULL;
            }
            const char *q = p + 2;
            size_t nl = 0;
            while (q < close && (isalnum((unsigned char)*q) || *q == '_') && nl + 1 < sizeof name)
                name[nl++] = *q++;
            name[nl] = '\0';
            const char *def = NULL;
            size_t deflen = 0;
            if (q + 1 < close && q[0] == ':' && q[1] == '-') {
                def = q + 2;
                deflen = (size_t)(close - def);
            } else if (q != close) {
                fail_at(r,
                        "key '%s' in [%s]: '%.*s' is not a variable: write ${NAME} or "
                        "${NAME:-default}, NAME of letters, digits and '_'.",
                        key, section, (int)(close - p + 1), p);
                free(out);
                return NULL;
            }
            if (!nl || isdigit((unsigned char)name[0])) {
                fail_at(r, "key '%s' in [%s]: '%.*s' names no variable.", key, section,
                        (int)(close - p + 1), p);
                free(out);
                return NULL;
            }
            const char *env = getenv(name);
            if (env && *env) {
                for (const char *c = env; *c; c++)
                    if ((unsigned char)*c < 0x20 || *c == 0x7f) {
                        fail_at(r,
                                "key '%s' in [%s]: the environment variable %s holds a control "
                                "character.",
                                key, section, name);
                        free(out);
                        return NULL;
                    }
                piece = env;
                len = strlen(env);
            } else if (def) {
                piece = def;
                len = deflen;
            } else {
                fail_at(r,
                        "key '%s' in [%s]: the environment variable %s is %s; set it, or write "
                        "${%s:-default}.",
                        key, section, name, env ? "empty" : "not set", name);
                free(out);
                return NULL;
            }
            p = close + 1;
        } else {
            p++;
        }
        if (n + len + 1 > cap) {
            cap = (n + len + 1) * 2;
            out = kbc_xrealloc(out, cap);
        }
        memcpy(out + n, piece, len);
        n += len;
    }
    out[n] = '\0';
    return out;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    reader *r = user;
    if (r->failed)
        return 0;
    kbc_section *s = &r->ini->sections[r->cur];
    if (strcmp(section, s->name) != 0) {
        /* Cannot happen while the reader and inih agree on the headers; a
           clear sentence beats a value filed under the wrong section. */
        fail_at(r, "internal error: the INI parser placed key '%s' in [%s], not [%s].", name,
                section, s->name);
        return 0;
    }
    long prev = index_find(&s->keys, s->entries, s->n, entry_key_at, name);
    if (prev >= 0) {
        const kbc_entry *p = &s->entries[prev];
        const char *pf = p->file ? p->file : r->ini->path;
        if (strcmp(pf, r->file) != 0)
            fail_at(r, "key '%s' in [%s] is set twice (%s:%d and here); keep one.", name,
                    s->name, pf, p->line);
        else
            fail_at(r, "key '%s' in [%s] is set twice (lines %d and %d); keep one.", name,
                    s->name, p->line, r->line);
        return 0;
    }
    /* A parked value is already trimmed and cut; the entry takes it over. */
    char *v = NULL;
    if (value[0] == KBC_INI_MARKER) {
        size_t idx = strtoul(value + 1, NULL, 10);
        if (idx < r->n_parked && r->parked[idx]) {
            v = r->parked[idx];
            r->parked[idx] = NULL;
        } else {
            v = kbc_xstrdup("");
        }
    } else {
        v = kbc_trim_dup(value);
    }
    char *x = expand(r, name, s->name, v);
    free(v);
    if (!x)
        return 0;
    v = x;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->entries = kbc_xrealloc(s->entries, s->cap * sizeof *s->entries);
    }
    kbc_entry *e = &s->entries[s->n++];
    e->key = kbc_xstrdup(name);
    e->value = v;
    e->line = r->line;
    e->file = r->depth ? r->file : NULL;
    index_add(&s->keys, s->entries, s->n, entry_key_at);
    return 1;
}

static int parse(reader *r, kbc_ini *ini, kbc_diag *d)
{
    r->ini = ini;
    r->d = d;
    r->cur = -1;
    r->file = ini->path;
    int rc = ini_parse_stream(feed, r, handler, r);
    /* Included files still open after a failure. */
    while (r->depth > 0) {
        fclose(r->f);
        r->f = r->outer[--r->depth].f;
    }
    if (!r->failed && rc != 0) {
        /* Every line inih could refuse was checked by the reader first, so
           this is a disagreement between the two; say where it happened. */
        if (rc > 0)
            kbc_diag_set(d, "%s:%d: the line could not be parsed.", ini->path, rc);
        else
            kbc_diag_set(d, "%s: the INI parser failed (code %d).", ini->path, rc);
        r->failed = 1;
    }
    free(r->buf);
    for (size_t i = 0; i < r->n_parked; i++)
        free(r->parked[i]);
    free(r->parked);
    if (r->failed) {
        kbc_ini_free(ini);
        return -1;
    }
    return 0;
}

int kbc_ini_load(const char *path, kbc_ini *ini, kbc_diag *d)
{
    memset(ini, 0, sizeof *ini);
    char why[200];
    FILE *f = kbc_input_fopen(path, KBC_INPUT_TEXT_MAX, why, sizeof why);
    if (!f) {
        kbc_diag_set(d, "%s: cannot be opened (%s).", path, why);
        return -1;
    }
    ini->path = kbc_xstrdup(path);
    reader r = {0};
    r.f = f;
    int rc = parse(&r, ini, d);
    fclose(f);
    return rc;
}

int kbc_ini_load_string(const char *name, const char *text, kbc_ini *ini, kbc_diag *d)
{
    memset(ini, 0, sizeof *ini);
    ini->path = kbc_xstrdup(name);
    reader r = {0};
    r.text = text;
    return parse(&r, ini, d);
}

/* What one section owns: its entries, its name, its key index. */
static void section_free(kbc_section *s)
{
    for (size_t j = 0; j < s->n; j++) {
        free(s->entries[j].key);
        free(s->entries[j].value);
    }
    free(s->entries);
    free(s->name);
    index_free(&s->keys);
}

void kbc_ini_free(kbc_ini *ini)
{
    if (!ini)
        return;
    for (size_t i = 0; i < ini->n; i++)
        section_free(&ini->sections[i]);
    free(ini->sections);
    index_free(&ini->names);
    free(ini->path);
    for (size_t i = 0; i < ini->n_files; i++)
        free(ini->files[i]);
    free(ini->files);
    memset(ini, 0, sizeof *ini);
}

const char *kbc_ini_where(const kbc_ini *ini, const char *file, int line, char *buf, size_t n)
{
    if (line == KBC_INI_LINE_VARIANTS)
        snprintf(buf, n, "--variants");
    else if (line < 0)
        snprintf(buf, n, "--set");
    else
        snprintf(buf, n, "%s:%d", file ? file : ini->path, line);
    return buf;
}

const kbc_section *kbc_ini_section(const kbc_ini *ini, const char *name)
{
    long i = index_find(&ini->names, ini->sections, ini->n, section_name_at, name);
    return i < 0 ? NULL : &ini->sections[i];
}

const kbc_entry *kbc_section_get(const kbc_section *s, const char *key)
{
    long i = index_find(&s->keys, s->entries, s->n, entry_key_at, key);
    return i < 0 ? NULL : &s->entries[i];
}

/* Rebuilds an index from scratch (after a removal). */
static void index_rebuild(kbc_index *x, const void *arr, size_t n, name_at_fn name_at)
{
    index_free(x);
    for (size_t i = 1; i <= n; i++)
        index_add(x, arr, i, name_at);
}

void kbc_ini_set(kbc_ini *ini, const char *section, const char *key, const char *value,
                 int line)
{
    long at = index_find(&ini->names, ini->sections, ini->n, section_name_at, section);
    if (at < 0) {
        if (ini->n == ini->cap) {
            ini->cap = ini->cap ? ini->cap * 2 : 8;
            ini->sections = kbc_xrealloc(ini->sections, ini->cap * sizeof *ini->sections);
        }
        kbc_section *s = &ini->sections[ini->n];
        memset(s, 0, sizeof *s);
        s->name = kbc_xstrdup(section);
        s->line = line;
        /* [global] goes first, as a file would have it. */
        if (strcmp(section, "global") == 0 && ini->n > 0) {
            kbc_section g = *s;
            memmove(&ini->sections[1], &ini->sections[0], ini->n * sizeof *ini->sections);
            ini->sections[0] = g;
            ini->n++;
            index_rebuild(&ini->names, ini->sections, ini->n, section_name_at);
            at = 0;
        } else {
            at = (long)ini->n++;
            index_add(&ini->names, ini->sections, ini->n, section_name_at);
        }
    }
    kbc_section *s = &ini->sections[at];
    long e = index_find(&s->keys, s->entries, s->n, entry_key_at, key);
    if (e >= 0) {
        free(s->entries[e].value);
        s->entries[e].value = kbc_xstrdup(value);
        s->entries[e].line = line;
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->entries = kbc_xrealloc(s->entries, s->cap * sizeof *s->entries);
    }
    kbc_entry *n = &s->entries[s->n++];
    n->key = kbc_xstrdup(key);
    n->value = kbc_xstrdup(value);
    n->line = line;
    index_add(&s->keys, s->entries, s->n, entry_key_at);
}

void kbc_ini_drop(kbc_ini *ini, const char *section)
{
    long at = index_find(&ini->names, ini->sections, ini->n, section_name_at, section);
    if (at < 0)
        return;
    section_free(&ini->sections[at]);
    memmove(&ini->sections[at], &ini->sections[at + 1],
            (ini->n - (size_t)at - 1) * sizeof *ini->sections);
    ini->n--;
    index_rebuild(&ini->names, ini->sections, ini->n, section_name_at);
}
