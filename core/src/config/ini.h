/*
 * ini.h -- reading an INI file into sections and entries that remember
 * their line numbers.
 *
 * Built on the system's inih (ini_parse_stream) with our own line reader,
 * because Debian's inih r55 cuts lines at 200 characters without a word,
 * truncates section names at 50 and gives the handler no line number.  The
 * reader counts lines, strips leading white space (so an indented line is
 * never taken as a continuation), and lets a line of any length through:
 * a long value is parked in a side table and fetched back by the handler.
 * A section name longer than inih keeps, or a key too long to fit, gets a
 * clear error.  Sections and keys are found through hash indexes, so that a
 * file of any size loads in time proportional to its length.
 */
#ifndef KBENCH_INI_H
#define KBENCH_INI_H

#include <stddef.h>

#include "util.h"

/* A hash index of names: slot values are position + 1, 0 is empty.  A
   zeroed index is valid and empty (lookups then scan the array). */
typedef struct kbc_index {
    size_t *slots;
    size_t cap; /* a power of two, or 0 */
} kbc_index;

typedef struct kbc_entry {
    char *key;   /* trimmed, as written                         */
    char *value; /* trimmed, inline ';' comments removed        */
    int line;    /* 1-based line in the file                    */
    const char *file; /* the file it was read from, when that is an
                         included one (owned by the kbc_ini); NULL for
                         the file loaded itself                  */
} kbc_entry;

typedef struct kbc_section {
    char *name;
    int line;
    const char *file; /* as kbc_entry's */
    kbc_entry *entries;
    size_t n, cap;
    kbc_index keys; /* entries by key */
} kbc_section;

typedef struct kbc_ini {
    char *path; /* as given; used in every diagnostic */
    char **files; /* the files read through `include = FILE` lines */
    size_t n_files;
    kbc_section *sections;
    size_t n, cap;
    kbc_index names; /* sections by name */
} kbc_ini;

/* The longest physical line read, so that a file that is not text (a
   device, a binary) is refused at once instead of being read into memory. */
#define KBC_INI_MAX_LINE (1024 * 1024)

/* How deep includes may nest: a file that includes a file ... */
#define KBC_INI_MAX_INCLUDE 16

/* Reads the file at path.  A line `include = FILE` reads FILE (relative to
   the folder of the file that names it) in its place, as if its lines were
   written there; its sections and keys remember that file, and its errors
   name it.  A file that includes itself (at any depth), a missing one or
   nesting deeper than KBC_INI_MAX_INCLUDE is an error naming the include
   line.  Returns 0, or -1 with d set to one sentence
   "PATH:LINE: ...".  Duplicate sections and a key set twice in one section
   are errors; so is a key before the first section, a NUL byte, a line
   longer than KBC_INI_MAX_LINE, and an invisible character (a no-break
   space, a zero-width space, a byte order mark after the file's start)
   outside a comment line. */
int kbc_ini_load(const char *path, kbc_ini *ini, kbc_diag *d);

/* The same for text in memory; name stands in for the path in diagnostics. */
int kbc_ini_load_string(const char *name, const char *text, kbc_ini *ini, kbc_diag *d);

void kbc_ini_free(kbc_ini *ini);

/* Where an entry or section was set, for a diagnostic: "FILE:LINE" (its
   own file, for one read through an include), or the option that gave a
   value from the command line (a negative line): "--variants" for
   KBC_INI_LINE_VARIANTS, "--set" for any other. */
const char *kbc_ini_where(const kbc_ini *ini, const char *file, int line, char *buf, size_t n);

/* Sets key = value in [section] (made when missing; [global] first),
   replacing a value the file gave; line is what diagnostics show for it
   (negative: a value from the command line, KBC_INI_LINE_CLI). */
#define KBC_INI_LINE_CLI (-1)
#define KBC_INI_LINE_VARIANTS (-2) /* a value from --variants */
void kbc_ini_set(kbc_ini *ini, const char *section, const char *key, const char *value,
                 int line);

/* Removes [section] and its keys (nothing when there is none). */
void kbc_ini_drop(kbc_ini *ini, const char *section);

/* The section called name, or NULL. */
const kbc_section *kbc_ini_section(const kbc_ini *ini, const char *name);

/* The entry called key in s, or NULL. */
const kbc_entry *kbc_section_get(const kbc_section *s, const char *key);

#endif
