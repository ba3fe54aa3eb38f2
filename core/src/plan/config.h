/*
 * config.h -- from an INI file to a plan of experiments.
 *
 * [global] holds defaults that every experiment section inherits (as in
 * fio's job files); every other section is an experiment.  Core keys:
 *   plugin          the family to run (required in each experiment)
 *   variants        "all" (default) or a list of variant names
 *   baseline        the variant speed-ups are measured against (default:
 *                   the first listed)
 *   reference       the library variant to compare with (optional)
 *   warmup, runs    untimed and timed runs per variant (defaults 3, 20)
 *   budget          seconds of timed runs per variant before stopping early
 *                   (default 10; at least one run is always made)
 *   seed            input seed (default 1)
 *   include_copies  time host<->device copies with the kernel (default false)
 *   cpu_threads     threads for parallel CPU variants (default: all cores)
 *   cache           hot (default) or cold: flush the L2 before every timed
 *                   run, outside the timed region
 *   batch           off (default), auto or N: time N back-to-back runs of a
 *                   CUDA variant between one pair of events (measure.h)
 *   timeout         the watchdog of each point (default auto)
 *   zip             swept parameters that advance together (m, n, k)
 *   plugin_path     extra plugin folders or files (global only)
 *   description     free text, carried into the reports
 * The keys, their defaults and how they are parsed are one table, in
 * core_keys.c.  Any other key must be a parameter the plugin declares; its value may be a
 * sweep (sweep.h).  Swept parameters expand to their cross product.
 */
#ifndef KBENCH_CONFIG_H
#define KBENCH_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "core_keys.h"
#include "ini.h"
#include "loader.h"

typedef struct kbc_axis {
    const kb_param *param;
    kb_value *values;
    size_t n;
    int line; /* the line that set it; 0 when it is the plugin's default */
    /* zip: 0 for an axis of its own, else 1 + the index of the first axis
       of its group, whose position it takes (the group's axes advance
       together instead of making their cross product). */
    uint32_t lead_plus1;
} kbc_axis;

typedef struct kbc_experiment {
    char *name;
    int line; /* the section's line */
    const char *file; /* its file, when read through include (the ini's) */
    char *description;
    const kbc_plugin *plugin;
    uint32_t variants[KB_MAX_VARIANTS]; /* indices into desc->variants */
    uint32_t n_variants;
    int baseline;  /* variant index, or -1 */
    int reference; /* variant index, or -1 */
    /* The file's baseline and reference that --variants left out (variant
       indices, or -1): the run goes on without them (kbc_plan_notes). */
    int dropped_baseline, dropped_reference;
    const char *dropped_by; /* the option that left them out */
    kbc_measure measure;
    kbc_axis *axes; /* one per plugin parameter, in declaration order */
    uint64_t n_points;
    /* Each point's plan, as plan() gave it once when the plan was built
       (point_plan.h: read them with kbc_plan_point); NULL in a plan built
       without planning (a worker's). */
    struct kbc_planned *planned;
    uint64_t n_invalid; /* points plan() refuses (kbc_plan_refused): each
                           runs nothing and reports an `invalid` row */
    uint64_t n_failed;  /* points whose plan() failed otherwise: each runs
                           nothing and reports an `error` row */
} kbc_experiment;

typedef struct kbc_plan {
    char *path;
    kbc_experiment *exps;
    size_t n;
    uint64_t n_points;
} kbc_plan;

/* Resolves ini against the plugins in reg (adding the INI's plugin_path,
   relative to the INI file's folder, to reg first), checks every key and
   value, expands sweeps, and plans each point once (point_plan.h), keeping
   its record, so that a point larger than device_mem (0: unknown, not
   checked) or than the machine's memory is caught now.  Points that plan()
   refuses (kbc_plan_refused) are counted in n_invalid and points whose
   plan() fails otherwise in n_failed; neither stops the plan, unless every
   point of an experiment is refused.
   Returns 0, or -1 with d set to one sentence naming file, line and key. */
int kbc_plan_build(const kbc_ini *ini, kbc_registry *reg, uint64_t device_mem, kbc_plan *plan,
                   kbc_diag *d);
/* The same plan without calling plan() on any point: a worker's, whose
   points come planned from its supervisor (request.h).  Its experiments
   hold no records. */
int kbc_plan_build_unplanned(const kbc_ini *ini, kbc_registry *reg, kbc_plan *plan,
                             kbc_diag *d);
/* Plans and checks the points of a plan built without planning, from the
   same ini: the unplanned build and this are kbc_plan_build, in two steps
   (kbench tune checks its constraints in between, before the points of a
   large space are planned).  Returns 0, or -1 with d set (plan is then
   for kbc_plan_free). */
int kbc_plan_points(const kbc_ini *ini, uint64_t device_mem, kbc_plan *plan, kbc_diag *d);
void kbc_plan_free(kbc_plan *plan);

/* The parameter values of point p (0 <= p < e->n_points) of experiment e,
   one per plugin parameter; the first parameter varies slowest. */
void kbc_experiment_point(const kbc_experiment *e, uint64_t p, kb_value *values);

/* The parameters variant v uses (kb_variant.uses, 0: all), with each zip
   group whole: a group is used when any of its parameters is, since its
   axes move as one.  What run's distinct configurations and the tuner's
   ignored dimensions both read. */
uint64_t kbc_variant_uses(const kbc_experiment *e, uint32_t v);

/* Whether point p is the first point of variant v's configuration: the
   points that differ only in parameters v does not use (kb_variant.uses;
   0 means all) form one configuration, and only its first point runs v.
   On 1, *points says how many points it stands for and ignores (when not
   NULL) names the swept parameters v ignores, comma-separated. */
int kbc_point_first_of(const kbc_experiment *e, uint64_t p, uint32_t v, uint64_t *points,
                       char *ignores, size_t n);

/* The first point of variant v's configuration that contains point p
   (p itself when v uses every parameter that p's sweep varies). */
uint64_t kbc_point_representative(const kbc_experiment *e, uint64_t p, uint32_t v);

/* The command line's changes to a loaded file, before the plan is built
   (the worker makes the same ones): experiments, when not NULL, keeps only
   the experiment sections that match one of its comma-separated globs
   (each glob must match one); sets are KEY=VALUE ([global]) or
   SECTION.KEY=VALUE, applied as if written in the file (diagnostics name
   them "--set"); variants, when not NULL, is every kept experiment's
   `variants` (diagnostics name it "--variants"; names or globs, and a
   baseline or reference of the file it leaves out is dropped).  Returns
   0, or -1 with d set to one sentence. */
int kbc_ini_narrow(kbc_ini *ini, const char *experiments, const char *const *sets,
                   size_t n_sets, const char *variants, kbc_diag *d);

/* One note line for each baseline or reference of the file that the
   command line's variants left out, saying what the run uses instead
   (nothing when none was left out). */
void kbc_plan_notes(const kbc_plan *plan, FILE *out);

/* Whether any experiment selects a CUDA variant (a CPU-only plan never
   wakes the GPU). */
int kbc_plan_wants_gpu(const kbc_plan *plan);

/* Prints the expanded plan for --dry-run: one line per point, then the
   totals (the variant runs as the run makes them, kbc_plan_variant_runs)
   and the time it will take in one sentence: the model's
   (kbc_plan_estimate), or, with earlier_s finite, an earlier run's of the
   same plan (its seconds, scaled to this plan's points), which earlier_from
   names (a file). */
void kbc_plan_print(const kbc_plan *plan, FILE *out);
void kbc_plan_print_with(const kbc_plan *plan, double earlier_s, const char *earlier_from,
                         FILE *out);

#endif
