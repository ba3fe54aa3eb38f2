/*
 * physical.h -- what a device can physically do at most (docs/integrity.md,
 * "The physical limit"), so that a row whose rate is above it is known to
 * be a measurement of something other than the work it declares.
 *
 * The measured ceilings (device.h) are references a good kernel may pass;
 * these are bounds nothing passes, each with a stated margin:
 *
 *   - GPU memory: 2 x the memory clock x the bus width (the attributes the
 *     driver reports), x KBC_LIMIT_DRAM_MARGIN.  A working set in the L2
 *     is served from there: a hot row may read from the L2 what the L2
 *     holds, so only the bytes beyond it must cross the memory, and its
 *     bound is that rate scaled by W / (W - L2), and at most the L2 bound;
 *   - GPU L2: the measured L2 read rate (gpu.h) x KBC_LIMIT_L2_MARGIN, for
 *     reads and writes each (they travel in opposite directions);
 *   - GPU arithmetic: SMs x the highest SM clock x the most operations an
 *     SM of that generation finishes per clock on its fastest unit for the
 *     declared precision, x KBC_LIMIT_FLOPS_MARGIN;
 *   - CPU: every online CPU moving KBC_CPU_BYTES_PER_CYCLE bytes a cycle at
 *     its highest clock, for any working set; and beyond the caches the
 *     measured memory copy rate of all CPUs together x
 *     KBC_LIMIT_CPU_MEM_MARGIN, scaled by W / (W - caches) as for the L2.
 */
#ifndef KBENCH_PHYSICAL_H
#define KBENCH_PHYSICAL_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define KBC_LIMIT_DRAM_MARGIN 1.10   /* the clock may read a little low   */
#define KBC_LIMIT_L2_MARGIN 2.0      /* a measured rate, not the L2's own */
#define KBC_LIMIT_FLOPS_MARGIN 1.10
#define KBC_LIMIT_CPU_MEM_MARGIN 4.0 /* a copy on a busy machine          */
#define KBC_CPU_BYTES_PER_CYCLE 256  /* two 64-byte loads and a store, and
                                        more, per core and cycle           */
#define KBC_CPU_GHZ_ASSUMED 6.0      /* when the CPU's clock is unknown    */

typedef struct kbc_limits {
    /* The GPU (0: unknown). */
    double dram_gbps;       /* theoretical, before the margin          */
    double l2_gbps;         /* measured L2 read rate                   */
    uint64_t l2_bytes;
    int sm_count, cc_major;
    double sm_ghz;          /* the highest SM clock                    */
    /* The CPU. */
    int cpus;               /* online CPUs                             */
    double cpu_ghz;         /* the highest clock any CPU reports       */
    uint64_t cache_bytes;   /* every instance of the last-level cache  */
    double cpu_copy_gbps;   /* measured when first needed: 0 not yet,
                               -1 could not                            */
} kbc_limits;

/* The CPU's facts (sysfs; no measurement). */
void kbc_limits_cpu(kbc_limits *l);

/* The GPU's facts: m, its bus width (gpu.h), its highest SM clock in MHz
   (0: m's clock_khz alone) and its measured L2 read rate. */
void kbc_limits_gpu(kbc_limits *l, const kbc_machine *m, int bus_bits, unsigned sm_max_mhz,
                    double l2_gbps);

/* The most GB/s a run of a GPU (cuda) or CPU row can move that reads R and
   writes W bytes (cold: after an L2 flush).  basis says what bounds it, as
   the end of a sentence ("its memory can move at most 3.69 TB/s for a
   working set of 1 GiB, beyond its 50 MiB L2").  0 when unknown.  May
   measure the CPU's copy rate the first time a CPU row needs it. */
double kbc_limit_gbps(kbc_limits *l, int cuda, uint64_t r, uint64_t w, int cold, char *basis,
                      size_t n);

/* Measures the CPUs' copy rate again and keeps the higher of the two: a
   busy machine may have slowed the first measurement, so a CPU row above
   the memory's bound is judged once more before it is flagged. */
void kbc_limit_cpu_again(kbc_limits *l);

/* The most GFLOP/s a GPU row of precision `peak` (kb_peak) can do, with
   its basis as above; 0 when unknown. */
double kbc_limit_gflops(const kbc_limits *l, uint32_t peak, char *basis, size_t n);

/* The bound of a working set of w bytes in a cache of c bytes served at
   `cache` GB/s, behind a memory of `memory` GB/s: at most c bytes come from
   the cache, the rest from the memory (either 0: unknown). */
double kbc_limit_behind_cache(double cache, double memory, uint64_t w, uint64_t c);

/* The threaded copy rate of the CPUs in GB/s (2 x bytes per second, as the
   GPU's copy ceiling counts it), the best of a few copies of buffers well
   beyond the caches; 0 when it could not be measured. */
double kbc_cpu_copy_gbps(int threads, uint64_t cache_bytes);

#endif
