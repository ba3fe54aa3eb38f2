/*
 * quick.h -- `kbench run PLUGIN KEY=VALUE ...`: a run without an INI file.
 * The plugin and the keys on the command line become a one-experiment INI
 * file (written to a temporary file that the run, its workers and its
 * journal read like any other); an error in it is named by the argument
 * it came from rather than by the file's line.  docs/cli.md, "A run
 * without a file".
 */
#ifndef KBENCH_QUICK_H
#define KBENCH_QUICK_H

#include <stddef.h>

typedef struct kbc_quick {
    char *path;             /* the INI file written, or NULL            */
    const char *plugin;     /* the first argument                       */
    const char *const *args;/* KEY=VALUE arguments, args[0..n)          */
    size_t n;
} kbc_quick;

/* Whether `kbench run` was given a quick run rather than a file: more than
   one argument, or one that is no file and looks like a plugin name (no
   '/' and no '.'). */
int kbc_quick_wanted(const char *const *args, size_t n);

/* Writes the INI file of plugin and args into $TMPDIR (default /tmp); a
   relative `include=FILE` is made absolute from the current folder, where
   the user typed it.  Returns 0, or an exit code with one sentence in why:
   KBC_EXIT_USAGE for an argument that is not KEY=VALUE (a key that is not
   a word, such as ";n", which would be a comment) or plugin given as a
   key, KBC_EXIT_SYSTEM for a file that cannot be written. */
int kbc_quick_write(kbc_quick *q, const char *plugin, const char *const *args, size_t n,
                    char *why, size_t why_n);

/* A diagnostic about q->path ("PATH:LINE: ...") with the file and line
   replaced by the argument they came from ("argument 'n=2^24': ...");
   others unchanged.  Returns msg (rewritten in place, up to size). */
char *kbc_quick_name(const kbc_quick *q, char *msg, size_t size);

/* Removes the file. */
void kbc_quick_free(kbc_quick *q);

#endif
