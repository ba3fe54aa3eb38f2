/*
 * kit_internal.h -- what the kit's files share and plugins do not see.
 */
#ifndef KBENCH_KIT_INTERNAL_H
#define KBENCH_KIT_INTERNAL_H

#include "kbench/kit.h"

/* kbk_parallel_for with an explicit thread count (clamped to 1 ..
   KBK_MAX_THREADS and to n). */
int kbk__parallel_run(int threads, uint64_t n, kbk_range_fn fn, void *ctx);

/* Threads worth starting for n cheap elements: one per `grain` elements,
   at most host->cpu_threads. */
int kbk__threads_for(const kb_host *host, uint64_t n, uint64_t grain);

#endif
