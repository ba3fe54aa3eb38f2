/*
 * child.h -- starting a program whose output kbench reads (git for the
 * commit of a run, gnuplot for the plots) and waiting for it.
 */
#ifndef KBENCH_CHILD_H
#define KBENCH_CHILD_H

#include <sys/types.h>

/* Starts argv[0], looked up on PATH, with argv (NULL-terminated) in folder
   dir (NULL: the current one).  Its stream out_fd (STDOUT_FILENO or
   STDERR_FILENO) goes into a pipe whose reading end is stored in *rd;
   with quiet, its standard input and its other output stream are
   /dev/null, else they are kbench's.  A program that cannot be run exits
   127.  Returns the child's pid, or -1 when the pipe or the process
   cannot be made (nothing is left open then).  The caller reads *rd to
   its end (so that the child never blocks on a full pipe), closes it and
   calls kbc_child_wait(). */
pid_t kbc_child_start(char *const argv[], const char *dir, int out_fd, int quiet, int *rd);

/* Waits for the child pid (retrying after signals); returns its exit
   code, or -1 when it was killed by a signal or cannot be waited for. */
int kbc_child_wait(pid_t pid);

#endif
