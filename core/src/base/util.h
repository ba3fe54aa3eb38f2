/*
 * util.h -- small helpers shared by the core: allocation that cannot return
 * NULL, one-sentence diagnostics, and the edit distance behind "did you mean".
 */
#ifndef KBENCH_UTIL_H
#define KBENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kbench/plugin.h"

/* A diagnostic: one sentence, normally "FILE:LINE: key 'x' ...: what is wrong". */
typedef struct kbc_diag {
    char msg[1024];
} kbc_diag;

void kbc_diag_set(kbc_diag *d, const char *fmt, ...) KB_PRINTF(2, 3);

/* Allocation that prints one sentence and exits(3) when memory runs out. */
void *kbc_xmalloc(size_t n);
void *kbc_xcalloc(size_t n, size_t size);
void *kbc_xrealloc(void *p, size_t n);
char *kbc_xstrdup(const char *s);
char *kbc_xstrndup(const char *s, size_t n);
char *kbc_xasprintf(const char *fmt, ...) KB_PRINTF(1, 2);

/* Levenshtein distance between a and b, capped at 255. */
unsigned kbc_edit_distance(const char *a, const char *b);

/* The closest of candidates[0..n) to word, or NULL when none is close enough
   (distance at most 2, or a third of the word's length when longer). */
const char *kbc_closest(const char *word, const char *const *candidates, size_t n);

/* mkdir -p: creates dir and its missing parents (trailing slashes
   ignored).  Returns 0 when dir is then a folder, or -1 with errno set by
   the step that failed (ENOTDIR when dir is a file, ENOENT when empty). */
int kbc_make_dirs(const char *dir);

/* Whether word is one of the space-separated words of words ("run plot"). */
int kbc_word_in(const char *words, const char *word);

/* Copies s into a buffer trimmed of leading and trailing white space. */
char *kbc_trim_dup(const char *s);

/* b bytes as "512 B", "1.5 KiB", "4.0 GiB" ...  Returns buf. */
char *kbc_human_bytes(uint64_t b, char *buf, size_t n);

/* A duration of s seconds with the unit (ns, us, ms, s) that puts the
   number in [1, 1000), at most 4 significant digits: "123.4 us"; "-" for
   a negative or non-finite s.  Returns buf. */
const char *kbc_human_seconds(double s, char *buf, size_t n);

/* An energy of j joules the same way (nJ, uJ, mJ, J, kJ): "3.412 mJ";
   "-" for a negative or non-finite j.  Returns buf. */
const char *kbc_human_joules(double j, char *buf, size_t n);

/* Appends printf-style text to buf (n bytes) at *used, cutting it at the
   end of buf, and advances *used (at most n - 1): notes built of clauses. */
void kbc_appendf(char *buf, size_t n, size_t *used, const char *fmt, ...) KB_PRINTF(4, 5);

/* Monotonic clock in seconds. */
double kbc_now(void);
/* Sleeps for s seconds (a signal does not cut it short). */
void kbc_pause(double s);
/* The CPU time every thread of the process has used (exited ones too), in
   seconds; NaN when it cannot be read. */
double kbc_process_cpu(void);

/* Writes p[0..n) whole at offset *end of fd (a file that grows by whole
   pieces: a point's rows, a table).  On success *end moves past them.  On
   failure the file is cut back to *end, so that it still ends where its
   last whole piece did, and -1 is returned with errno saying why. */
int kbc_write_whole(int fd, int64_t *end, const void *p, size_t n);

/* Exit codes of the kbench command, documented in README.md. */
enum kbc_exit {
    KBC_EXIT_OK = 0,      /* everything that could run passed              */
    KBC_EXIT_FAILED = 1,  /* a verification failed or a variant erred      */
    KBC_EXIT_USAGE = 2,   /* bad command line, INI file, or plugin choice  */
    KBC_EXIT_SYSTEM = 3,  /* out of memory, or an output file not writable */
    /* run or tune interrupted by SIGINT or SIGTERM before its last point
       (128 + SIGINT, as shells report it); results.json keeps it */
    KBC_EXIT_INTERRUPTED = 130
};

#endif
