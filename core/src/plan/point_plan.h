/*
 * point_plan.h -- what the plugin's plan() says of one point, asked once.
 *
 * When a plan is built (config.h), plan() runs on every point of every
 * experiment and its answer is kept in the plan as the point's record: the
 * point runs with its kb_work, or plan() refused it (kbc_plan_refused:
 * an `invalid` row), or plan() failed (a plugin error: an `error` row),
 * with the plugin's sentence.  A point that runs may still be refused to
 * some variants (kb_host.refuse): their rows are `invalid`, each with its
 * sentence, and the others run.  kbc_plan_variant says what the record
 * means for one variant, for every path.  Everything after reads that record and
 * none asks plan() again: the dry run, the cost model of the shards, the
 * tuner, and the run, whose supervisor hands each point's record to the
 * worker with the point (request.h).  kbench check, which makes points of
 * its own, makes their records with the same function.
 */
#ifndef KBENCH_POINT_PLAN_H
#define KBENCH_POINT_PLAN_H

#include <stdint.h>

#include "config.h"
#include "instance.h"

typedef enum kbc_plan_status {
    KBC_PLAN_RUNS = 0,    /* plan() accepted the point                   */
    KBC_PLAN_REFUSED = 1, /* plan() refused it (kbc_plan_refused)        */
    KBC_PLAN_FAILED = 2   /* plan() failed otherwise: the plugin's error */
} kbc_plan_status;

/* One point's plan, whole.  It holds no pointers: it is copied, sent to a
   worker and made in the middle of kbench check's heap count. */
typedef struct kbc_point_plan {
    int status;          /* kbc_plan_status                              */
    int code;            /* what plan() returned (KB_OK when it runs)    */
    int carried;         /* 1: read from the supervisor's message, made
                            by the supervisor's plan (the worker's case);
                            0: made in this process                       */
    kb_work work;        /* what plan() wrote (zeroed before the call);
                            the point's work when it runs                 */
    char sentence[600];  /* refused or failed: the plugin's sentence, or
                            words saying it gave none (instance.h); ""
                            when it runs                                  */
    kbc_refusals refusals; /* when it runs: the variants plan() refused
                            here, with their sentences (empty otherwise) */
} kbc_point_plan;

/* Calls plan() on values through in (kbc_call_plan, the one call of plan()
   on every path) and fills *pp with its answer, judged by
   kbc_plan_refused.  Allocates nothing. */
void kbc_point_plan_make(kbc_instance in, const kb_value *values, kbc_point_plan *pp);

/* Plans every point of x into its records (x->planned), with a host that
   shows plan() the experiment's seed and thread count and passes its
   warnings on to stderr, and counts x->n_invalid and x->n_failed.  The
   plan build calls it; so may a test that builds an experiment by hand.
   kbc_plan_free, or kbc_experiment_unplan, frees the records. */
void kbc_experiment_plan_points(kbc_experiment *x);
void kbc_experiment_unplan(kbc_experiment *x);

/* Gives dst, a plan built without planning (kbc_plan_build_unplanned) of
   the same experiments and points as src (kbench tune's screening plan,
   which differs from the full one in its measure settings only), copies of
   src's records.  Returns 0, or -1 when the experiments or their points
   differ (dst is left unplanned). */
int kbc_plan_copy_points(kbc_plan *dst, const kbc_plan *src);

/* Point p's record, as the plan keeps it.  A plan built without planning
   (kbc_plan_build_unplanned: a worker's) holds none: the record then says
   the point was not planned, as a plugin error. */
void kbc_plan_point(const kbc_experiment *x, uint64_t p, kbc_point_plan *pp);

/* What the point's plan means for plugin variant v, the one rule that the
   run, the dry run, kbench check and kbench tune all ask: KBC_PLAN_RUNS;
   KBC_PLAN_REFUSED, the point refused whole or to v alone (an `invalid`
   row); or KBC_PLAN_FAILED (an `error` row).  *sentence (may be NULL) gets
   the row's reason, "" when it runs. */
int kbc_plan_variant(const kbc_point_plan *pp, uint32_t v, const char **sentence);

/* Whether any variant of mask runs at the point (kbc_plan_variant). */
int kbc_plan_any_runs(const kbc_point_plan *pp, uint64_t mask);

/* "runs", "refused", "failed"; and back (-1 for any other word). */
const char *kbc_plan_status_name(int status);
int kbc_plan_status_parse(const char *name);

#endif
