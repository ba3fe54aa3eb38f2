/* shard.c -- see shard.h. */
#include "shard.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instance.h"
#include "point_plan.h"
#include "sha256.h"
#include "util.h"
#include "value.h"

/* The cost model's rates: what a run of a variant is expected to move and
   compute per second, and what a variant costs besides its timed runs
   (set-up, the checked run, verification).  Only the ratios between jobs
   matter, for ordering and balancing. */
#define GPU_BYTES_PER_S 2e12
#define GPU_FLOPS_PER_S 3e13
#define CPU_BYTES_PER_S 1e10
#define CPU_FLOPS_PER_S 5e10
#define FIXED_PER_VARIANT_S 0.05
/* What a point costs the host besides its variants' runs, for the dry
   run's estimate (kbc_plan_estimate): its inputs generated, its reference
   computed and each output checked, at about a second per GB of the
   point's traffic.  Measured on the checked-in runs of reduce, transpose,
   matmul and the targets on an H100 and an H200 (results/2026-11-22-h200,
   2026-11-25-h100-c): 0.8 to 1.3 s per GB of the points' largest
   traffic, beyond their timed runs; sort's reference, a sort on the CPU,
   takes 6 to 8 s per GB, so its estimate is low. */
#define HOST_BYTES_PER_S 1e9

/* A variant's expected seconds at a point, split into the timed runs,
   the rest (set-up share, warm-up and the checked run) and the energy
   windows (a CUDA variant with energy on; kbc_energy_seconds).  The timed
   part never exceeds the budget; the rest is a model. */
static void variant_parts(const kbc_experiment *e, uint32_t v, const kb_work *w, double *timed,
                          double *rest, double *energy)
{
    const kb_variant *var = &e->plugin->desc->variants[v];
    int cuda = var->backend == KB_BACKEND_CUDA;
    double bytes = (double)w->bytes_read + (double)w->bytes_written;
    double run = bytes / (cuda ? GPU_BYTES_PER_S : CPU_BYTES_PER_S) +
                 w->flops / (cuda ? GPU_FLOPS_PER_S : CPU_FLOPS_PER_S);
    const kbc_measure *m = &e->measure;
    uint32_t runs = m->noise_pct > 0 ? m->max_runs : m->runs;
    *timed = run * runs;
    if (m->budget_s > 0 && *timed > m->budget_s)
        *timed = m->budget_s;
    *rest = FIXED_PER_VARIANT_S + run * (m->warmup + 1);
    *energy = cuda ? kbc_energy_seconds(m, run) : 0.0;
}

static double variant_cost(const kbc_experiment *e, uint32_t v, const kb_work *w)
{
    double timed, rest, energy;
    variant_parts(e, v, w, &timed, &rest, &energy);
    return timed + rest + energy;
}

/* Union-find over job indices, for the groups. */
static size_t find(size_t *up, size_t x)
{
    while (up[x] != x) {
        up[x] = up[up[x]];
        x = up[x];
    }
    return x;
}

/* Point p's work for the cost model, from its record (point_plan.h); a
   point that does not run (refused, or its plan() failed) costs only its
   set-up in the model. */
static void work_of(const kbc_experiment *e, uint64_t p, kbc_point_plan *pp)
{
    kbc_plan_point(e, p, pp);
    if (pp->status != KBC_PLAN_RUNS)
        memset(&pp->work, 0, sizeof pp->work);
}

kbc_job *kbc_plan_jobs(const kbc_plan *plan, size_t *n)
{
    size_t cap = 16, count = 0;
    kbc_job *jobs = kbc_xmalloc(cap * sizeof *jobs);
    /* Where each (experiment, point) landed, for the groups: a point
       without a job maps to SIZE_MAX. */
    size_t **at = kbc_xcalloc(plan->n ? plan->n : 1, sizeof *at);
    for (size_t i = 0; i < plan->n; i++) {
        const kbc_experiment *e = &plan->exps[i];
        at[i] = kbc_xmalloc((e->n_points ? e->n_points : 1) * sizeof **at);
        kbc_point_plan pp;
        for (uint64_t p = 0; p < e->n_points; p++) {
            at[i][p] = SIZE_MAX;
            double cost = 0;
            int any = 0, planned = 0;
            for (uint32_t k = 0; k < e->n_variants; k++) {
                uint64_t pts;
                if (!kbc_point_first_of(e, p, e->variants[k], &pts, NULL, 0))
                    continue;
                if (!planned) {
                    work_of(e, p, &pp);
                    planned = 1;
                }
                cost += variant_cost(e, e->variants[k], &pp.work);
                any = 1;
            }
            if (!any)
                continue;
            if (count == cap) {
                cap *= 2;
                jobs = kbc_xrealloc(jobs, cap * sizeof *jobs);
            }
            at[i][p] = count;
            jobs[count++] = (kbc_job){.exp = (uint32_t)i, .point = p, .cost = cost};
        }
    }
    /* Groups: a job joins the job of each of its variants' configuration
       representatives. */
    size_t *up = kbc_xmalloc((count ? count : 1) * sizeof *up);
    for (size_t j = 0; j < count; j++)
        up[j] = j;
    for (size_t j = 0; j < count; j++) {
        const kbc_experiment *e = &plan->exps[jobs[j].exp];
        for (uint32_t k = 0; k < e->n_variants; k++) {
            uint64_t r = kbc_point_representative(e, jobs[j].point, e->variants[k]);
            size_t o = at[jobs[j].exp][r];
            if (o != SIZE_MAX) {
                size_t a = find(up, j), b = find(up, o);
                if (a != b)
                    up[a > b ? a : b] = a < b ? a : b;
            }
        }
    }
    /* Points with no job of their own (every variant ran earlier) still
       take speed-ups from their representatives; those are in the job
       list already, so nothing more to join. */
    for (size_t j = 0; j < count; j++)
        jobs[j].group = (uint32_t)find(up, j);
    free(up);
    for (size_t i = 0; i < plan->n; i++)
        free(at[i]);
    free(at);
    *n = count;
    return jobs;
}

void kbc_jobs_use_costs(kbc_job *jobs, size_t n, const kbc_costs *c)
{
    if (!c)
        return;
    double measured = 0, modelled = 0;
    for (size_t j = 0; j < n; j++) {
        double s = jobs[j].exp < c->n_exps ? c->seconds[jobs[j].exp][jobs[j].point] : NAN;
        if (isfinite(s)) {
            measured += s;
            modelled += jobs[j].cost;
        }
    }
    double scale = measured > 0 && modelled > 0 ? measured / modelled : 1.0;
    for (size_t j = 0; j < n; j++) {
        double s = jobs[j].exp < c->n_exps ? c->seconds[jobs[j].exp][jobs[j].point] : NAN;
        jobs[j].cost = isfinite(s) ? s : jobs[j].cost * scale;
    }
}

void kbc_costs_free(kbc_costs *c)
{
    for (size_t i = 0; c && c->seconds && i < c->n_exps; i++)
        free(c->seconds[i]);
    if (c) {
        free(c->seconds);
        memset(c, 0, sizeof *c);
    }
}

typedef struct group_cost {
    uint32_t group;
    double cost;
} group_cost;

static int by_cost_desc(const void *a, const void *b)
{
    const group_cost *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return x->group < y->group ? -1 : x->group > y->group;
}

void kbc_jobs_partition(kbc_job *jobs, size_t n, int count, double *loads)
{
    if (count < 1)
        count = 1;
    double *load = kbc_xcalloc((size_t)count, sizeof *load);
    /* Group ids are job indices (the smallest of each group). */
    group_cost *g = kbc_xcalloc(n ? n : 1, sizeof *g);
    int *shard_of = kbc_xmalloc((n ? n : 1) * sizeof *shard_of);
    size_t ng = 0;
    for (size_t j = 0; j < n; j++)
        if (jobs[j].group == j)
            g[ng++] = (group_cost){.group = (uint32_t)j};
    for (size_t j = 0; j < n; j++) {
        /* g is sorted by group id (ids grow with the job index). */
        size_t lo = 0, hi = ng;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (g[mid].group < jobs[j].group)
                lo = mid + 1;
            else
                hi = mid;
        }
        g[lo].cost += jobs[j].cost;
    }
    qsort(g, ng, sizeof *g, by_cost_desc);
    /* Groups per shard: between shards of equal load, the one with fewer
       takes the next, so that groups that cost nothing (measured costs of
       points that ran nothing) still spread out. */
    size_t *groups = kbc_xcalloc((size_t)count, sizeof *groups);
    for (size_t k = 0; k < ng; k++) {
        int best = 0;
        for (int s = 1; s < count; s++)
            if (load[s] < load[best] || (load[s] == load[best] && groups[s] < groups[best]))
                best = s;
        load[best] += g[k].cost;
        groups[best]++;
        shard_of[g[k].group] = best;
    }
    free(groups);
    for (size_t j = 0; j < n; j++)
        jobs[j].shard = shard_of[jobs[j].group];
    if (loads)
        memcpy(loads, load, (size_t)count * sizeof *load);
    free(shard_of);
    free(g);
    free(load);
}

double kbc_job_timeout(const kbc_plan *plan, const kbc_job *j)
{
    const kbc_experiment *e = &plan->exps[j->exp];
    if (e->measure.timeout_s > 0)
        return e->measure.timeout_s;
    uint32_t variants = 0, cuda = 0;
    for (uint32_t k = 0; k < e->n_variants; k++) {
        uint64_t pts;
        int runs = kbc_point_first_of(e, j->point, e->variants[k], &pts, NULL, 0);
        variants += (uint32_t)runs;
        cuda += runs && e->plugin->desc->variants[e->variants[k]].backend == KB_BACKEND_CUDA;
    }
    /* The energy windows of each CUDA variant, twice over (a window the
       counter spoils is measured again). */
    return 300.0 + 2.0 * e->measure.budget_s * variants +
           2.0 * kbc_energy_seconds(&e->measure, 0) * cuda;
}

/* Feeds a string and its terminating zero, so that "ab","c" and "a","bc"
   hash differently. */
static void feed(kbc_sha256_ctx *c, const char *s)
{
    kbc_sha256_update(c, s ? s : "", strlen(s ? s : "") + 1);
}

static void feedf(kbc_sha256_ctx *c, const char *fmt, ...) KB_PRINTF(2, 3);

static void feedf(kbc_sha256_ctx *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    feed(c, buf);
}

void kbc_plan_hash(const kbc_plan *plan, char hex[65])
{
    kbc_sha256_ctx c;
    kbc_sha256_init(&c);
    feedf(&c, "kbench plan 1; %zu experiments", plan->n);
    for (size_t i = 0; i < plan->n; i++) {
        const kbc_experiment *e = &plan->exps[i];
        const kb_plugin *d = e->plugin->desc;
        const kbc_measure *m = &e->measure;
        feed(&c, e->name);
        feed(&c, d->name);
        for (uint32_t k = 0; k < e->n_variants; k++)
            feed(&c, d->variants[e->variants[k]].name);
        feed(&c, e->baseline >= 0 ? d->variants[e->baseline].name : "-");
        feed(&c, e->reference >= 0 ? d->variants[e->reference].name : "-");
        feedf(&c, "%u %u %.17g %d %llu %d %d %u %u %.17g %.17g %d", m->warmup, m->runs,
              m->budget_s, m->include_copies, (unsigned long long)m->seed, m->cpu_threads,
              m->cache_cold, m->min_runs, m->max_runs, m->noise_pct, m->min_time_s, m->batch);
        /* Only when on, so that a plan without energy keeps its hash (and
           its journals resume). */
        if (m->energy != KBC_ENERGY_OFF)
            feedf(&c, "energy %d %.17g", m->energy, m->energy_window_s);
        if (m->energy != KBC_ENERGY_OFF && m->energy_windows != KBC_ENERGY_WINDOWS)
            feedf(&c, "energy_windows %u", m->energy_windows);
        kb_value *values = kbc_xcalloc(d->n_params ? d->n_params : 1, sizeof *values);
        for (uint64_t p = 0; p < e->n_points; p++) {
            kbc_experiment_point(e, p, values);
            for (uint32_t k = 0; k < d->n_params; k++) {
                char buf[128];
                feed(&c, kbc_value_format(&d->params[k], values[k], buf, sizeof buf));
            }
        }
        free(values);
    }
    unsigned char out[32];
    kbc_sha256_final(&c, out);
    kbc_sha256_to_hex(out, hex);
}

/* ---- --shard ---- */

static char launcher[64];

const char *kbc_shard_launcher(void)
{
    return launcher;
}

/* A non-negative integer from the environment: 0 and *out, 1 when unset,
   -1 when set but not such a number. */
static int env_int(const char *name, long *out)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > 1000000)
        return -1;
    *out = v;
    return 0;
}

static int from_pair(const char *who, const char *iname, const char *nname, int *index,
                     int *count, char *why, size_t n)
{
    long i = 0, c = 0;
    int ri = env_int(iname, &i), rc = env_int(nname, &c);
    if (ri == 1 && rc == 1)
        return 1;
    if (ri != 0 || rc != 0 || c < 1 || i >= c) {
        snprintf(why, n,
                 "--shard auto: %s's %s='%s' and %s='%s' do not make a shard index below a "
                 "count",
                 who, iname, getenv(iname) ? getenv(iname) : "", nname,
                 getenv(nname) ? getenv(nname) : "");
        return -1;
    }
    *index = (int)i;
    *count = (int)c;
    snprintf(launcher, sizeof launcher, "%s", who);
    return 0;
}

/* The index and count of an MPI launcher (Open MPI, then MPICH): 0 found,
   1 none, -1 bad (why set). */
static int mpi_rank(int *index, int *count, char *why, size_t n)
{
    int r = from_pair("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", index, count,
                      why, n);
    if (r != 1)
        return r;
    return from_pair("MPICH", "PMI_RANK", "PMI_SIZE", index, count, why, n);
}

static int shard_auto(int hint, int *index, int *count, char *why, size_t n)
{
    /* An MPI rank comes first: mpirun inside an sbatch job or an srun
       step gives every rank that step's SLURM_PROCID, the same for all. */
    int mi = 0, mc = 0;
    int mr = mpi_rank(&mi, &mc, why, n);
    if (mr < 0)
        return -1;
    /* A Slurm array task: its id relative to the array's first, over the
       step (1 unless the array was given as a:b:step). */
    long id = 0, amin = 0, acount = 0, step = 1;
    int rid = env_int("SLURM_ARRAY_TASK_ID", &id);
    if (rid != 1) {
        int rmin = env_int("SLURM_ARRAY_TASK_MIN", &amin);
        int rcount = env_int("SLURM_ARRAY_TASK_COUNT", &acount);
        int rstep = env_int("SLURM_ARRAY_TASK_STEP", &step);
        if (rid != 0 || rmin != 0 || rcount != 0 || rstep == -1 || step < 1 || id < amin ||
            (id - amin) % step != 0 || (id - amin) / step >= acount) {
            snprintf(why, n,
                     "--shard auto: the Slurm array's SLURM_ARRAY_TASK_ID, _MIN, _COUNT and "
                     "_STEP do not make a shard index below a count (an array must be a:b or "
                     "a:b:step)");
            return -1;
        }
        int ai = (int)((id - amin) / step), ac = (int)acount;
        if (mr == 0) {
            /* An array of MPI jobs: each task's ranks split its share. */
            if ((long)ac * mc > 1000000) {
                snprintf(why, n, "--shard auto: %d array tasks of %d ranks are too many shards",
                         ac, mc);
                return -1;
            }
            *index = ai * mc + mi;
            *count = ac * mc;
            snprintf(launcher, sizeof launcher, "Slurm array of %s jobs",
                     getenv("OMPI_COMM_WORLD_RANK") ? "Open MPI" : "MPICH");
            return 0;
        }
        *index = ai;
        *count = ac;
        snprintf(launcher, sizeof launcher, "Slurm array");
        return 0;
    }
    if (mr == 0) {
        *index = mi;
        *count = mc;
        return 0;
    }
    int r;
    if ((r = from_pair("srun", "SLURM_PROCID", "SLURM_NTASKS", index, count, why, n)) != 1)
        return r;
    long k = 0;
    int rk = env_int("JOB_COMPLETION_INDEX", &k);
    if (rk == 0) {
        if (hint < 1) {
            snprintf(why, n,
                     "--shard auto: a Kubernetes Indexed Job gives JOB_COMPLETION_INDEX but not "
                     "the count; add --shards N (the Job's completions)");
            return -1;
        }
        if (k >= hint) {
            snprintf(why, n, "--shard auto: JOB_COMPLETION_INDEX=%ld is not below --shards %d",
                     k, hint);
            return -1;
        }
        *index = (int)k;
        *count = hint;
        snprintf(launcher, sizeof launcher, "Kubernetes Indexed Job");
        return 0;
    }
    if (rk == -1) {
        snprintf(why, n, "--shard auto: JOB_COMPLETION_INDEX='%s' is not an index",
                 getenv("JOB_COMPLETION_INDEX"));
        return -1;
    }
    snprintf(why, n,
             "--shard auto found no launcher: it looked for OMPI_COMM_WORLD_RANK and _SIZE "
             "(Open MPI), PMI_RANK and PMI_SIZE (MPICH), SLURM_ARRAY_TASK_ID (sbatch --array), "
             "SLURM_PROCID and SLURM_NTASKS (srun) and JOB_COMPLETION_INDEX (Kubernetes); give "
             "--shard i/N instead");
    return -1;
}

int kbc_shard_parse(const char *text, int hint, int *index, int *count, char *why, size_t n)
{
    launcher[0] = '\0';
    if (strcmp(text, "auto") == 0)
        return shard_auto(hint, index, count, why, n);
    char *end;
    errno = 0;
    long i = strtol(text, &end, 10);
    long c = -1;
    if (!errno && end != text && *end == '/') {
        const char *s = end + 1;
        c = strtol(s, &end, 10);
        if (errno || end == s || *end)
            c = -1;
    }
    if (c < 0 || text[0] == '-' || text[0] == '+') {
        snprintf(why, n, "--shard wants i/N (shard i of N, counting from 0) or auto, not '%s'",
                 text);
        return -1;
    }
    if (c < 1 || c > 1000000) {
        snprintf(why, n, "--shard %s: the count must be at least 1", text);
        return -1;
    }
    if (i < 0 || i >= c) {
        snprintf(why, n, "--shard %s: the index must be below the count (0 to %ld)", text, c - 1);
        return -1;
    }
    *index = (int)i;
    *count = (int)c;
    return 0;
}

/* The host's share of a point that runs (HOST_BYTES_PER_S). */
static double point_host_seconds(const kb_work *w)
{
    return ((double)w->bytes_read + (double)w->bytes_written) / HOST_BYTES_PER_S;
}

uint64_t kbc_plan_variant_runs(const kbc_plan *plan)
{
    uint64_t runs = 0;
    for (size_t i = 0; i < plan->n; i++) {
        const kbc_experiment *e = &plan->exps[i];
        kbc_point_plan pp;
        for (uint64_t p = 0; p < e->n_points; p++) {
            kbc_plan_point(e, p, &pp);
            if (pp.status != KBC_PLAN_RUNS)
                continue;
            for (uint32_t k = 0; k < e->n_variants; k++) {
                uint64_t pts;
                runs += (uint64_t)kbc_point_first_of(e, p, e->variants[k], &pts, NULL, 0);
            }
        }
    }
    return runs;
}

void kbc_plan_estimate(const kbc_plan *plan, double *timed_cap, double *rest, double *energy,
                       double *expected)
{
    *timed_cap = *rest = *energy = *expected = 0;
    for (size_t i = 0; i < plan->n; i++) {
        const kbc_experiment *e = &plan->exps[i];
        kbc_point_plan pp;
        for (uint64_t p = 0; p < e->n_points; p++) {
            int planned = 0;
            for (uint32_t k = 0; k < e->n_variants; k++) {
                uint64_t pts;
                if (!kbc_point_first_of(e, p, e->variants[k], &pts, NULL, 0))
                    continue;
                if (!planned) {
                    work_of(e, p, &pp);
                    planned = 1;
                    *rest += point_host_seconds(&pp.work);
                    *expected += point_host_seconds(&pp.work);
                }
                double t, r, en;
                variant_parts(e, e->variants[k], &pp.work, &t, &r, &en);
                *timed_cap += e->measure.budget_s;
                *rest += r;
                *energy += en;
                *expected += t + r + en;
            }
        }
    }
}
