/*
 * commit.h -- the commit a run measured: asked of git in the current
 * folder, or read from the `commit` file that `kbench run --record` writes
 * into a run's folder (docs/history.md, "Commits").
 */
#ifndef KBENCH_COMMIT_H
#define KBENCH_COMMIT_H

#include "history.h"

/* Whether rev looks like a revision git could take (letters, digits and
   ._/~^@-, not starting with '-'), so that nothing else reaches git. */
int kbc_commit_rev_ok(const char *rev);

/* Fills c from git in the current folder: rev resolved to its full hash
   and its commit time (rev NULL: HEAD).  Returns 0, or -1 when the folder
   is not a git checkout or git does not know rev (c untouched). */
int kbc_commit_from_git(const char *rev, kbc_hist_commit *c);

/* The `commit` file of the folder holding path (a results.json): one
   line "REV TIME SOURCE".  Returns 0 with c filled, or -1 when there is
   none or it does not read. */
int kbc_commit_read_beside(const char *path, kbc_hist_commit *c);

/* Writes c as DIR/commit.  Returns 0, or -1 with errno set. */
int kbc_commit_write(const char *dir, const kbc_hist_commit *c);

#endif
