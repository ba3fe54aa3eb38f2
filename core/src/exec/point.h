/*
 * point.h -- one point of one experiment, start to end, with no globals
 * and no sinks: from the point's plan (point_plan.h) decide which variants
 * can run here, set up once, then per variant poison, one checked run,
 * verify (the host judges), measure; tear down; derive rates, ceilings and
 * speed-ups.  The unit that the worker (worker.c) calls for each point its
 * supervisor sends.
 */
#ifndef KBENCH_POINT_H
#define KBENCH_POINT_H

#include "config.h"
#include "device.h"
#include "host.h"
#include "point_plan.h"
#include "prefetch.h"
#include "record.h"

/* How a row skipped because an earlier variant spoilt the CUDA context
   begins its reason (the supervisor runs such rows again elsewhere). */
#define KBC_LOST_REASON "the CUDA context was lost after "

/* What a point remembers for later ones: the baseline's and the
   reference's median at each point where they ran (NaN elsewhere), so that
   a later point where they do not run again (their configuration ran
   earlier) still gets its speed-ups.  n_points doubles each; NULL arrays
   when the experiment has no such variant. */
typedef struct kbc_point_memory {
    double *baseline;
    double *reference;
} kbc_point_memory;

/* Makes (NaN-filled) and frees the memory for experiment e. */
void kbc_point_memory_init(kbc_point_memory *m, const kbc_experiment *e);
void kbc_point_memory_free(kbc_point_memory *m);

/* Fills a record's identity (names, flags, parameters, point, baseline and
   reference names) for variant v at point p with the given values;
   everything else as kbc_record_init leaves it. */
void kbc_record_identify(kbc_record *r, const kbc_experiment *e, uint64_t p,
                         const kb_value *values, uint32_t v);

/* Runs point p of e, whose plan is `plan` (its record in the plan,
   point_plan.h: in a worker, the one its supervisor sent), on dev (NULL or
   unusable: CUDA variants are skipped with dev's reason) through host,
   which kbc_host_init made (its host_private is the kbc_hostctx; its GPU
   fields are set here from dev).  plan() is not called: a point the record
   says does not run gives `invalid` rows (refused) or `error` rows (its
   plan() failed), with the plugin's sentence.  Writes one record per
   selected variant whose configuration starts at p into recs (room for
   e->n_variants) and returns how many.  mem (NULL or from
   kbc_point_memory_init, used for every point of e in order) gives
   speed-ups against a baseline or reference that ran at an earlier point of
   its configuration. */
size_t kbc_point_run(const kbc_experiment *e, uint64_t p, const kbc_point_plan *plan,
                     kbc_device *dev, kb_host *host, kbc_point_memory *mem, kbc_record *recs);

/* Where a point's time went in its worker, for the timeline (docs/cli.md,
   --timeline): kbc_now() seconds. */
typedef struct kbc_point_times {
    double start, end;   /* the point, from its first step to its last   */
    double setup_s;      /* setup(), or setup_device() after a host half
                            made ahead                                    */
    int ahead;           /* the setup took a host half made ahead         */
    double ahead_s;      /* that host half's own seconds, on its thread   */
    double wait_s;       /* the setup's wait for it                       */
    double joins_s;      /* waits, before this point's variants that may
                            not overlap it, for the next point's host half */
    double teardown_s;
    unsigned prefetches; /* host halves of a next point started during it */
} kbc_point_times;

/* What a worker adds to a point: the next point's host half made beside
   it (prefetch.h; NULL: setup() as ever), and where its time went. */
typedef struct kbc_point_aside {
    kbc_prefetch *prefetch;
    /* Which variants the next point's host half may run beside; NULL:
       kbc_prefetch_may_overlap (tests name their own, since without a GPU
       no variant may). */
    int (*overlap)(const kbc_experiment *e, const kbc_record *r, const kbc_device *dev);
    kbc_point_times times; /* filled by kbc_point_run_aside */
} kbc_point_aside;

/* kbc_point_run with a worker's additions (aside may be NULL; then it is
   kbc_point_run).  Each record's wall_s is the seconds its variant took
   here plus an equal share of the setup and teardown among the variants
   set up, so that a point's rows add up to its time in the worker. */
size_t kbc_point_run_aside(const kbc_experiment *e, uint64_t p, const kbc_point_plan *plan,
                           kbc_device *dev, kb_host *host, kbc_point_memory *mem,
                           kbc_record *recs, kbc_point_aside *aside);

/* The speed-ups of a point's records (recs[0..n), as kbc_point_run
   leaves them): against the baseline and the reference (their record
   here, or the median mem kept from the earlier point where their
   configuration ran; kept in mem when they ran here) and against the first
   CPU variant that ran here.  NaN where there is nothing to compare.  The
   supervisor calls it again on rows that came back from workers in plan
   order, since a worker sees only its own points. */
void kbc_point_speedups(const kbc_experiment *e, uint64_t p, kbc_record *recs, size_t n,
                        kbc_point_memory *mem);

/* The ceiling that matches a traffic mix (see docs/output.md): read-only
   rows against the read ceiling, write-only against the write ceiling,
   others against the byte-weighted harmonic mean of the two.  Returns GB/s
   or 0, and the kind ("read", "write", "mixed") in *kind. */
double kbc_ceiling_for(const kbc_ceilings *c, uint64_t bytes_read, uint64_t bytes_written,
                       const char **kind);

/* The measured compute ceiling for a kb_work.peak value (GFLOP/s, or 0
   when not measured), and its name in *kind ("fp32", "tf32", "bf16"; ""
   for KB_PEAK_NONE or a value this kbench does not know). */
double kbc_peak_for(const kbc_flops_ceilings *c, uint32_t peak, const char **kind);

#endif
