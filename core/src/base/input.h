/*
 * input.h -- the one door through which kbench opens a file a user hands
 * it (an INI file and its includes, a results.json, a journal, a commit
 * file, a file to hash).  Such a file may be anything a path can name: a
 * folder, a FIFO that nobody writes (an open() that never returns), a
 * device that never ends (/dev/zero), or a regular file of many
 * gigabytes.  Only a regular file of at most the reader's limit is opened;
 * everything else is one clause saying what the path is, which the caller
 * puts in its own sentence with the file's name.
 */
#ifndef KBENCH_INPUT_H
#define KBENCH_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The largest file of each kind that kbench reads.  An INI file is
   written by hand (the largest generated ones are well under a
   megabyte); a results.json or a journal holds every sample of a run
   (tens of megabytes for a long study) and is parsed into memory, which
   takes several times its size. */
#define KBC_INPUT_TEXT_MAX ((uint64_t)64 << 20)
#define KBC_INPUT_DATA_MAX ((uint64_t)1 << 30)
/* No limit on the size: a file that is read in pieces and kept nowhere
   (hashed). */
#define KBC_INPUT_ANY_SIZE UINT64_MAX

/* Opens path for reading when it is a regular file of at most max bytes,
   without ever blocking (a FIFO is looked at, not waited on).  Returns
   the descriptor (blocking, close-on-exec), or -1 with why set to a
   clause without the path: "No such file or directory", "it is a named
   pipe, not a regular file", "it is 3.0 GiB, over the 1.0 GiB that kbench
   reads from such a file".  errno is then the system's error, EISDIR for a
   folder, EINVAL for another path that is not a regular file, or EFBIG
   for a file over max. */
int kbc_input_open(const char *path, uint64_t max, char *why, size_t n);

/* kbc_input_open() as a stdio stream ("r"). */
FILE *kbc_input_fopen(const char *path, uint64_t max, char *why, size_t n);

#endif
