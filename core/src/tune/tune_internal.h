/*
 * tune_internal.h -- what tune.c (the loop) and tune_report.c (the
 * outputs) share: the tuning experiments, their problems and every row
 * tried.  Not a public header.
 */
#ifndef KBENCH_TUNE_INTERNAL_H
#define KBENCH_TUNE_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "expr.h"
#include "search.h"
#include "tune.h"

/* What a tuning ranks by (the key `objective`, docs/tune.md): the median
   time, the rate, the joules per run, or the energy-delay product (joules
   per run times the median seconds); lower is better but for the rate. */
typedef enum tune_objective { TUNE_TIME, TUNE_RATE, TUNE_ENERGY, TUNE_EDP } tune_objective;
#define TUNE_N_OBJECTIVES 4

/* One candidate tried, or a library variant measured, for one problem. */
typedef struct tune_row {
    size_t prob;            /* index into tune.probs                       */
    uint64_t cand;          /* the search's candidate (library: unused)    */
    uint64_t point;         /* the point of the plan it ran as             */
    uint32_t variant;       /* the plugin's variant index                  */
    int eval;               /* its evaluation in the problem, from 1; 0 for
                               a library row                              */
    int arm;                /* the strategy that proposed it               */
    int library;
    int outcome;            /* kbc_outcome of the screening (or only) run  */
    char reason[700];
    double screen, full;    /* median seconds; NaN when not measured       */
    double rate_screen, rate_full; /* the objective's rate, or NaN        */
    double j_screen, j_full; /* joules per run, NaN where not measured (the
                               screening never measures it: it runs with
                               energy = off)                              */
    char energy_why[400];   /* why the full run has no joules per run, or "" */
    double noise;           /* the full run's (else the screening's) noise */
    int cached_screen, cached_full;
    int full_outcome;       /* kbc_outcome of the full run, -1 none        */
    double cost;            /* what the search was told (INFINITY: none)   */
    char text[400];         /* "block_x=32, block_y=8, variant=fast"       */
} tune_row;

typedef struct tune_exp {
    size_t exp;             /* index into the plans                         */
    int strategy;
    kbc_expr *constrain;
    const kbc_entry *constrain_key; /* its line, for its sentences         */
    const char *constrain_where;    /* the section it is in               */
    tune_objective objective;
    const char *rate_unit;  /* "GFLOP/s", "GB/s", "items/s" once known       */
    uint64_t budget_n;      /* evaluations (0: the default)                  */
    double budget_s;        /* or seconds (0: none)                          */
    uint64_t seed;
    uint32_t top, screen;   /* tune_top; tune_screen runs (0: off)           */
    uint32_t search[KB_MAX_PARAMS]; /* the search's parameters (own axes)    */
    size_t n_search;
    uint32_t problem[KB_MAX_PARAMS]; /* the problem parameters (own axes)    */
    size_t n_problem;
    uint32_t variants[KB_MAX_VARIANTS]; /* the search's variants             */
    size_t n_variants;
    uint32_t libs[KB_MAX_VARIANTS];     /* the library variants              */
    size_t n_libs;
    uint64_t stride[KB_MAX_PARAMS];     /* of each own axis in a point       */
} tune_exp;

typedef struct tune tune;

typedef struct tune_problem {
    tune *t;
    size_t te;              /* index into tune.exps                         */
    char name[400];         /* "rows=2048, cols=512", or "the problem"      */
    uint32_t at[KB_MAX_PARAMS]; /* each problem parameter's value index     */
    kbc_search *search;
    uint64_t budget, evaluations, cached, invalid, failed;
    uint64_t allowed;       /* candidates the constraint allows (allowed.c) */
    int scanned;            /* allowed is counted                           */
    uint64_t missing;       /* --simulate: evaluations the journal did not
                               hold (not counted as cached nor failed)   */
    uint64_t valid;         /* candidates allowed and accepted by plan()    */
    double t0, wall;
    int done;
} tune_problem;

struct tune {
    const kbc_tune_opts *o;
    kbc_plan full, screen;
    tune_exp *exps;
    size_t n_exps;
    tune_problem *probs;
    size_t n_probs;
    tune_row *rows;
    size_t n_rows, cap_rows;
    int64_t facts[KBC_EXPR_N_FACTS];
    char gpu_model[256];
    int have_machine;
    char no_gpu[256];       /* the hello's reason when it has no GPU; ""  */
    int interrupted;
    FILE *out, *err;
};

/* Whether variant v uses parameter i (kbc_variant_uses: kb_variant.uses
   with zip groups whole; 0: all). */
int kbc_tune_uses(const kbc_experiment *e, uint32_t v, uint32_t i);

/* What the constraint allows of a problem (allowed.c). */
typedef struct tune_allowed {
    uint64_t n;             /* candidates allowed, as candidate_ok counts    */
    int overflow;           /* an operation overflowed somewhere; why says   */
    char why[300];
    long empty_term;        /* n == 0: the first term of the constraint that
                               holds for no candidate by itself, or -1      */
} tune_allowed;

/* Counts the candidates of problem p that its constraint allows (all of
   them without one), evaluating it once per combination of the searched
   parameters it names and per variant.  t->full needs its axes only (a
   plan built without planning will do), and t->facts what the constraint
   names of them. */
void kbc_tune_allowed(const tune *t, const tune_problem *p, tune_allowed *a);

/* The candidate's parameter text and the point it runs as. */
uint64_t kbc_tune_point(const tune *t, const tune_problem *p, uint64_t cand, uint32_t *variant);

/* The objective (one place, for the search, the ranking and the
   outputs): its name in the file ("time", "rate", "energy", "edp") and
   back (-1 when unknown); whether it needs the energy measured; the
   value of a measurement of median seconds, rate and joules per run (NaN
   where it has none: an energy objective without joules); and whether
   value a is better than b. */
const char *kbc_tune_objective_name(tune_objective o);
int kbc_tune_objective_parse(const char *name);
int kbc_tune_objective_energy(tune_objective o);
double kbc_tune_value(const tune_exp *x, double median, double rate, double joules);
int kbc_tune_better(const tune_exp *x, double a, double b);

/* tune_report.c: the table on t->out, DIR/tried.csv, DIR/best.ini,
   DIR/best.json, DIR/trace.csv and the trace plot.  Returns 0, or 3 after
   one sentence on t->err for an output that cannot be written. */
int kbc_tune_report(tune *t);

/* Whether problem i has a best: a candidate that passed with a value of
   the objective (for energy and edp, its joules per run measured). */
int kbc_tune_has_best(const tune *t, size_t i);

#endif
