/* version.h -- what kbench says of its own version. */
#ifndef KBENCH_VERSION_H
#define KBENCH_VERSION_H

/* `git describe --always --dirty` of the tree when kbench was built (or
   "unknown" outside a git checkout); defined in a file generated at build
   time.  KBENCH_VERSION, the release number, is a compile definition. */
extern const char kbc_git_rev[];

#endif
