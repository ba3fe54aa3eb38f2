/* util.c -- see util.h. */
#define _GNU_SOURCE
#include "util.h"
#include "text.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void kbc_diag_set(kbc_diag *d, const char *fmt, ...)
{
    if (!d)
        return;
    /* A sentence quotes what the user gave (a path, a name, a value): a
       line break or a terminal's control byte in it is shown escaped, so
       that the sentence stays one line and the terminal shows it. */
    char raw[sizeof d->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    kbc_text_visible_to(raw, d->msg, sizeof d->msg);
}

static void out_of_memory(size_t n)
{
    fprintf(stderr, "kbench: out of memory (asked for %zu bytes).\n", n);
    exit(KBC_EXIT_SYSTEM);
}

void *kbc_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *kbc_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

void *kbc_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *kbc_xstrdup(const char *s)
{
    return kbc_xstrndup(s, strlen(s));
}

char *kbc_xstrndup(const char *s, size_t n)
{
    char *p = kbc_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *kbc_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0)
        out_of_memory(strlen(fmt));
    return s;
}

unsigned kbc_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 255;
    unsigned row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned cost = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
            unsigned best = diag + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > 255 ? 255 : row[lb];
}

const char *kbc_closest(const char *word, const char *const *candidates, size_t n)
{
    const char *best = NULL;
    unsigned best_d = 255;
    for (size_t i = 0; i < n; i++) {
        if (!candidates[i])
            continue;
        unsigned d = kbc_edit_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    size_t len = strlen(word);
    unsigned limit = len > 6 ? (unsigned)(len / 3) : 2;
    return best && best_d <= limit ? best : NULL;
}

char *kbc_trim_dup(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    return kbc_xstrndup(s, n);
}

int kbc_word_in(const char *words, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = words; *p;) {
        size_t w = strcspn(p, " ");
        if (w == n && strncmp(p, word, n) == 0)
            return 1;
        p += w + (p[w] == ' ');
    }
    return 0;
}

int kbc_make_dirs(const char *dir)
{
    if (!*dir) {
        /* The option parser refuses an empty name; the walk below would
           otherwise start past the end of the string. */
        errno = ENOENT;
        return -1;
    }
    char *p = kbc_xstrdup(dir);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int r = 0;
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
        r = -1;
    struct stat st;
    if (r == 0 && stat(p, &st) != 0)
        r = -1;
    else if (r == 0 && !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        r = -1;
    }
    free(p);
    return r;
}


char *kbc_human_bytes(uint64_t b, char *buf, size_t n)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (b < 1024) {
        snprintf(buf, n, "%llu B", (unsigned long long)b);
        return buf;
    }
    double v = (double)b / 1024;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof *units) {
        v /= 1024;
        u++;
    }
    snprintf(buf, n, "%.1f %s", v, units[u]);
    return buf;
}

const char *kbc_human_seconds(double s, char *buf, size_t n)
{
    if (!isfinite(s) || s < 0) {
        snprintf(buf, n, "-");
        return buf;
    }
    static const char *const units[] = {"ns", "us", "ms", "s"};
    double v = s * 1e9;
    int u = 0;
    /* Rounding to 4 digits can carry 999.96 up to 1000, so step at the
       rounded value rather than the raw one. */
    while (u < 3 && v >= 999.95) {
        v /= 1000.0;
        u++;
    }
    snprintf(buf, n, "%.4g %s", v, units[u]);
    return buf;
}

const char *kbc_human_joules(double j, char *buf, size_t n)
{
    if (!isfinite(j) || j < 0) {
        snprintf(buf, n, "-");
        return buf;
    }
    static const char *const units[] = {"nJ", "uJ", "mJ", "J", "kJ"};
    double v = j * 1e9;
    int u = 0;
    while (u < 4 && v >= 999.95) {
        v /= 1000.0;
        u++;
    }
    snprintf(buf, n, "%.4g %s", v, units[u]);
    return buf;
}

double kbc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double kbc_process_cpu(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
        return NAN;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void kbc_pause(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int kbc_write_whole(int fd, int64_t *end, const void *p, size_t n)
{
    const char *at = p;
    size_t left = n;
    while (left > 0) {
        ssize_t w = write(fd, at, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int err = w < 0 ? errno : EIO;
            /* Part of the piece may be in the file: cut it off.  A file
               that cannot be cut (a device, a pipe) keeps what it took. */
            if (ftruncate(fd, (off_t)*end) == 0)
                lseek(fd, (off_t)*end, SEEK_SET);
            errno = err;
            return -1;
        }
        at += w;
        left -= (size_t)w;
    }
    *end += (int64_t)n;
    return 0;
}

void kbc_appendf(char *buf, size_t n, size_t *used, const char *fmt, ...)
{
    if (!n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *used, *used < n ? n - *used : 0, fmt, ap);
    va_end(ap);
    if (w > 0)
        *used += (size_t)w;
    if (*used >= n)
        *used = n - 1;
}
