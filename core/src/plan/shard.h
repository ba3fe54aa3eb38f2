/*
 * shard.h -- a plan as a list of jobs, and the jobs split into shards.
 *
 * A job is one point of one experiment at which at least one selected
 * variant's configuration starts (point.h): the unit a worker runs.  Each
 * job has an expected cost, a model from the plan's bytes and flops and
 * the experiment's runs and budget (not a measurement), used to hand out
 * the longest jobs first and to balance shards; where an earlier run of
 * the plan measured its points (kbc_costs), their seconds instead.
 *
 * Jobs that share a configuration (a variant that ignores a swept
 * parameter runs at the first point of its configuration only, and the
 * later points take its median for their speed-ups) are kept in one
 * shard, so that every shard computes its speed-ups on its own.
 */
#ifndef KBENCH_SHARD_H
#define KBENCH_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

typedef struct kbc_job {
    uint32_t exp;       /* index into plan->exps                  */
    uint64_t point;     /* index into the experiment's sweep      */
    double cost;        /* expected seconds (a model)             */
    uint32_t group;     /* jobs of one group share configurations */
    int shard;          /* the shard it belongs to (0 with one)   */
} kbc_job;

/* The plan's jobs in plan order (experiment, then point); *n of them.
   free() the array. */
kbc_job *kbc_plan_jobs(const kbc_plan *plan, size_t *n);

/* Measured seconds of a plan's points, from an earlier run (kbench run
   --costs; cli/costs.c reads them): seconds[x][p] for point p of
   experiment x, NaN where none was measured. */
typedef struct kbc_costs {
    double **seconds;
    size_t n_exps;
    size_t measured;   /* jobs of the plan with a measured cost          */
    char from[1100];   /* where they came from, for messages              */
} kbc_costs;

/* Gives each job its measured cost where c has one, and elsewhere the
   model's cost scaled by how the measured jobs compare with their model
   (the sum of their measured over the sum of their modelled seconds), so
   that both are seconds of the same clock.  c NULL: nothing changes. */
void kbc_jobs_use_costs(kbc_job *jobs, size_t n, const kbc_costs *c);
void kbc_costs_free(kbc_costs *c);

/* Assigns every job a shard in [0, count): whole groups, largest expected
   cost first, each to the least loaded shard (on a tie, the one with fewer
   groups, then the lowest index),
   so that the same plan always splits the same way.  loads (count
   doubles, or NULL) receives each shard's expected cost. */
void kbc_jobs_partition(kbc_job *jobs, size_t n, int count, double *loads);

/* The run's time, for the dry run: timed_cap, the most the timed runs can
   take (each variant's budget at each point where it runs: a bound);
   rest, the warm-up, checked runs and set-up, and each point's inputs and
   checks on the host (a model from the plan's bytes and flops, its rates
   measured on earlier runs: shard.c); energy, the energy windows of the
   CUDA variants (kbc_energy_seconds; 0 with energy off); expected, the
   model's whole run. */
void kbc_plan_estimate(const kbc_plan *plan, double *timed_cap, double *rest, double *energy,
                       double *expected);

/* The variant runs the run makes, as it makes them: at each point that
   runs (not one plan() refused), each variant whose configuration starts
   there (a variant that ignores a swept parameter runs once for the
   points that differ only in it: kbc_point_first_of). */
uint64_t kbc_plan_variant_runs(const kbc_plan *plan);

/* The watchdog of a job in seconds: the experiment's timeout key, or when
   it is auto, 300 s plus twice the budget of each variant that runs
   there (a variant stops timing at its budget; the rest is set-up,
   warm-up and verification, which the 300 s floor covers for a CPU
   variant at 2^28). */
double kbc_job_timeout(const kbc_plan *plan, const kbc_job *j);

/* The plan's identity: SHA-256 (hex) over each experiment's name, plugin,
   variants, baseline, reference and measure settings, and every point's
   parameter values as text.  Two plans with the same hash run the same
   rows.  Independent of paths and machines. */
void kbc_plan_hash(const kbc_plan *plan, char hex[65]);

/* "--shard i/N": parses text into *index, *count (0 <= i < N).  "auto"
   reads the launcher's environment (shard_count_hint: --shards N, for
   launchers that give only an index, 0 if not given): an MPI rank (Open
   MPI, MPICH) first, since mpirun inside a Slurm job inherits the job
   step's SLURM_PROCID; a Slurm array task (combined with the MPI rank when
   both are there: task * ranks + rank of tasks * ranks); srun's
   SLURM_PROCID; a Kubernetes Indexed Job.  Returns 0, or -1
   with why set to one sentence (naming every variable looked for when
   none was found). */
int kbc_shard_parse(const char *text, int shard_count_hint, int *index, int *count,
                    char *why, size_t n);

/* The launcher --shard auto found, for messages ("Slurm array", "Open
   MPI" ...); "" before a successful auto parse. */
const char *kbc_shard_launcher(void);

#endif
