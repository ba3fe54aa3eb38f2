/*
 * strays.h -- processes a plugin started and left running.
 *
 * A plugin that forks (a helper, a system() whose child it did not wait
 * for, a daemon) can leave processes that outlive its call.  Re-parented to
 * init they would keep what they inherited from the worker: its channel to
 * the supervisor, its stderr, and on a GPU the worker's lock on that GPU,
 * so that the next run finds the GPU "in use".  Two sides end them:
 *   - a worker becomes a child subreaper (kbc_strays_adopt), so that every
 *     process it or its descendants start stays its descendant even after
 *     a double fork or setsid(), and ends them after each point
 *     (kbc_strays_end_children), so that the point's rows can say so;
 *   - a worker that is gone (crashed, killed by its watchdog, or done)
 *     leaves its process group, which the supervisor ends
 *     (kbc_strays_end_group); kbench check ends its child's group the same
 *     way.
 * Both send SIGTERM, wait KBC_STRAYS_GRACE_S, then SIGKILL what is left.
 * The processes are found through /proc (Linux).
 */
#ifndef KBENCH_STRAYS_H
#define KBENCH_STRAYS_H

#include <stddef.h>
#include <sys/types.h>

/* How long a stray has to end after SIGTERM before SIGKILL. */
#define KBC_STRAYS_GRACE_S 0.5

/* Makes the calling process a child subreaper (prctl): orphans of its
   descendants are re-parented to it rather than to init. */
void kbc_strays_adopt(void);

/* Ends every process descended from the caller (its children, theirs, and
   the orphans kbc_strays_adopt brought back) and reaps its children.
   Returns how many were still running; 0 at once (one system call) when
   the caller has no child at all. */
int kbc_strays_end_children(void);

/* Ends every process of group pgid, whose leader has been waited for (it
   would be ended too).  Returns how many were still running. */
int kbc_strays_end_group(pid_t pgid);

/* Whether process pid is on its way out (the kernel is tearing it down:
   it closes its files after its memory, which can take a while on a GPU),
   rather than running. */
int kbc_process_exiting(pid_t pid);

/* "2 processes the plugin started were still running and were ended" (or
   the singular) into out, for a row's reason; "" for n <= 0.  Returns
   out. */
const char *kbc_strays_words(int n, char *out, size_t size);

#endif
