/*
 * test_shard.c -- a plan as jobs split into shards, and the GPUs of a run.
 *
 *   partition  the conf/ studies, built with the in-tree plugins, split into
 *              2, 3, 4 and 8 shards: every job in one shard, the same split
 *              twice, the expected cost balanced, a configuration's jobs
 *              together; and a toy plan whose variant ignores a swept
 *              parameter
 *   hash       the plan's identity: what changes it and what does not
 *   parse      --shard i/N and --shard auto under each launcher
 *   cli        `kbench run --shard`: a shard runs its own points, the shards
 *              together run the plan once, mistakes exit 2
 *   gpus       `kbench run --gpus` against the fake libnvidia-ml: one worker
 *              per GPU, rows stamped with their GPU, mistakes exit 2
 *
 * Criterion runs each test in its own process, so a setenv() here touches
 * no other test.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "ini.h"
#include "loader.h"
#include "point.h"
#include "shard.h"

#define KBENCH KBENCH_BINARY_DIR "/kbench"
#define PLUGINS_DIR KBENCH_BINARY_DIR "/plugins"
#define TOY_DIR KBENCH_FIXTURE_DIR "/runner"
#define CRASH_DIR KBENCH_FIXTURE_DIR "/crash"

static void assert_has(const char *s, const char *piece)
{
    cr_assert(strstr(s, piece) != NULL, "expected \"%s\" in: %s", piece, s);
}

/* ---- plans ----------------------------------------------------------------- */

typedef struct built {
    kbc_registry reg;
    kbc_ini ini;
    kbc_plan plan;
} built;

/* Builds a plan from INI text called name, with the plugins of folder dir
   (NULL: none but what the text's plugin_path brings), for no particular
   device (device_mem 0). */
static void build_text(built *b, const char *name, const char *text, const char *dir)
{
    kbc_diag d = {{0}};
    memset(b, 0, sizeof *b);
    kbc_registry_init(&b->reg);
    if (dir)
        cr_assert_eq(kbc_registry_add_path(&b->reg, dir, &d), 0, "%s: %s", dir, d.msg);
    cr_assert_eq(kbc_ini_load_string(name, text, &b->ini, &d), 0, "INI: %s", d.msg);
    cr_assert_eq(kbc_plan_build(&b->ini, &b->reg, 0, &b->plan, &d), 0, "plan: %s", d.msg);
}

/* Builds conf/<study>-study.ini with the in-tree plugins. */
static void build_study(built *b, const char *study)
{
    char path[512];
    kbc_diag d = {{0}};
    memset(b, 0, sizeof *b);
    kbc_registry_init(&b->reg);
    cr_assert_eq(kbc_registry_add_path(&b->reg, PLUGINS_DIR, &d), 0, "%s", d.msg);
    snprintf(path, sizeof path, "%s/conf/%s-study.ini", KBENCH_SOURCE_DIR, study);
    cr_assert_eq(kbc_ini_load(path, &b->ini, &d), 0, "%s", d.msg);
    cr_assert_eq(kbc_plan_build(&b->ini, &b->reg, 0, &b->plan, &d), 0, "%s: %s", path, d.msg);
}

static void built_free(built *b)
{
    kbc_plan_free(&b->plan);
    kbc_ini_free(&b->ini);
    kbc_registry_free(&b->reg);
}

/* The plan's jobs split into count shards; loads (count doubles) gets each
   shard's expected cost. */
static kbc_job *split(const kbc_plan *plan, int count, size_t *n, double *loads)
{
    kbc_job *jobs = kbc_plan_jobs(plan, n);
    cr_assert_not_null(jobs);
    cr_assert_gt(*n, 0, "the plan has no jobs");
    kbc_jobs_partition(jobs, *n, count, loads);
    return jobs;
}

/* The job at point p of experiment e, or -1 when that point has none. */
static long job_at(const kbc_job *jobs, size_t n, uint32_t e, uint64_t p)
{
    for (size_t j = 0; j < n; j++)
        if (jobs[j].exp == e && jobs[j].point == p)
            return (long)j;
    return -1;
}

/* ---- 1. the conf/ studies, split ------------------------------------------- */

typedef struct study_case {
    char name[16];
} study_case;

static const int shard_counts[] = {2, 3, 4, 8};
#define N_COUNTS (sizeof shard_counts / sizeof *shard_counts)

ParameterizedTestParameters(partition, every_job_in_exactly_one_shard)
{
    static study_case cases[] = {{"reduce"}, {"transpose"}, {"sort"}, {"matmul"}};
    return cr_make_param_array(study_case, cases, sizeof cases / sizeof *cases);
}

/* Every job has a shard in [0, N), and each shard's load is the sum of its
   own jobs' costs: no job counted twice or left out. */
ParameterizedTest(study_case *c, partition, every_job_in_exactly_one_shard)
{
    built b;
    build_study(&b, c->name);
    for (size_t k = 0; k < N_COUNTS; k++) {
        int count = shard_counts[k];
        double loads[8], mine[8] = {0}, total = 0;
        size_t n;
        kbc_job *jobs = split(&b.plan, count, &n, loads);
        for (size_t j = 0; j < n; j++) {
            cr_assert(jobs[j].shard >= 0 && jobs[j].shard < count,
                      "%s, %d shards: job %zu in shard %d", c->name, count, j, jobs[j].shard);
            mine[jobs[j].shard] += jobs[j].cost;
            total += jobs[j].cost;
        }
        double sum = 0;
        for (int s = 0; s < count; s++) {
            cr_assert_float_eq(loads[s], mine[s], 1e-9 * total + 1e-12,
                               "%s, %d shards: shard %d's load %g, its jobs %g", c->name, count,
                               s, loads[s], mine[s]);
            sum += loads[s];
        }
        cr_assert_float_eq(sum, total, 1e-9 * total, "%s, %d shards", c->name, count);
        free(jobs);
    }
    built_free(&b);
}

ParameterizedTestParameters(partition, the_same_plan_splits_the_same_way)
{
    static study_case cases[] = {{"reduce"}, {"transpose"}, {"sort"}, {"matmul"}};
    return cr_make_param_array(study_case, cases, sizeof cases / sizeof *cases);
}

/* Two plans built from the same file, each split on its own: the same jobs
   in the same shards. */
ParameterizedTest(study_case *c, partition, the_same_plan_splits_the_same_way)
{
    built a, b;
    build_study(&a, c->name);
    build_study(&b, c->name);
    for (size_t k = 0; k < N_COUNTS; k++) {
        int count = shard_counts[k];
        double la[8], lb[8];
        size_t na, nb;
        kbc_job *ja = split(&a.plan, count, &na, la);
        kbc_job *jb = split(&b.plan, count, &nb, lb);
        cr_assert_eq(na, nb);
        for (size_t j = 0; j < na; j++) {
            cr_assert_eq(ja[j].exp, jb[j].exp);
            cr_assert_eq(ja[j].point, jb[j].point);
            cr_assert_eq(ja[j].shard, jb[j].shard, "%s, %d shards: job %zu in %d, then in %d",
                         c->name, count, j, ja[j].shard, jb[j].shard);
        }
        for (int s = 0; s < count; s++)
            cr_assert_eq(la[s], lb[s]);
        free(ja);
        free(jb);
    }
    built_free(&a);
    built_free(&b);
}

ParameterizedTestParameters(partition, the_expected_cost_is_balanced)
{
    static study_case cases[] = {{"reduce"}, {"transpose"}, {"sort"}, {"matmul"}};
    return cr_make_param_array(study_case, cases, sizeof cases / sizeof *cases);
}

/* The imbalance, the largest shard's expected cost over the mean less one,
   is below 15%.  No split can do better than its largest group (a group's
   jobs share one shard), and where that group alone costs more than 1.15
   times the mean, 15% cannot be had: matmul at 3 shards and more (its five
   experiments are five groups, since cublas ignores the tile and stages
   they sweep; the largest is 53% of the plan), reduce at 4 and 8
   (the CPU variant at 2^30 is 29% of the plan), transpose and sort at 8
   (9 groups, 14 jobs).  There the largest shard must be that group alone,
   the best any split can do.  The figures are printed. */
ParameterizedTest(study_case *c, partition, the_expected_cost_is_balanced)
{
    built b;
    build_study(&b, c->name);
    for (size_t k = 0; k < N_COUNTS; k++) {
        int count = shard_counts[k];
        double loads[8];
        size_t n;
        kbc_job *jobs = split(&b.plan, count, &n, loads);
        /* Each group's cost (groups are named by one of their jobs). */
        double *group = calloc(n, sizeof *group);
        size_t n_groups = 0;
        for (size_t j = 0; j < n; j++) {
            cr_assert_lt(jobs[j].group, n);
            n_groups += group[jobs[j].group] == 0;
            group[jobs[j].group] += jobs[j].cost;
        }
        double largest = 0, hi = 0, sum = 0;
        for (size_t g = 0; g < n; g++)
            largest = group[g] > largest ? group[g] : largest;
        for (int s = 0; s < count; s++) {
            hi = loads[s] > hi ? loads[s] : hi;
            sum += loads[s];
        }
        double mean = sum / count;
        double imbalance = hi / mean - 1;
        int possible = largest <= 1.15 * mean;
        printf("partition: %-9s %d shards: %3zu jobs in %3zu groups, imbalance %6.1f%% "
               "(largest group %5.1f%% over the mean)%s\n",
               c->name, count, n, n_groups, 100 * imbalance, 100 * (largest / mean - 1),
               possible ? "" : ": 15% impossible");
        fflush(stdout);
        if (possible)
            cr_assert_lt(imbalance, 0.15, "%s, %d shards: imbalance %.1f%%", c->name, count,
                         100 * imbalance);
        else
            cr_assert_float_eq(hi, largest, 1e-9 * sum,
                               "%s, %d shards: the largest shard costs %g s, its largest group "
                               "alone %g s",
                               c->name, count, hi, largest);
        free(group);
        free(jobs);
    }
    built_free(&b);
}

ParameterizedTestParameters(partition, a_configuration_stays_in_one_shard)
{
    static study_case cases[] = {{"reduce"}, {"transpose"}, {"sort"}, {"matmul"}};
    return cr_make_param_array(study_case, cases, sizeof cases / sizeof *cases);
}

/* Where a variant runs at an earlier point of its configuration (it ignores
   a swept parameter), that point's job is in the same shard, so that every
   shard computes its speed-ups on its own; and jobs of one group share a
   shard.  (Transpose and matmul have such configurations; every variant of
   reduce and sort reads every parameter they sweep, so there each job is
   its own group and this holds trivially.) */
ParameterizedTest(study_case *c, partition, a_configuration_stays_in_one_shard)
{
    built b;
    build_study(&b, c->name);
    for (size_t k = 0; k < N_COUNTS; k++) {
        int count = shard_counts[k];
        double loads[8];
        size_t n;
        kbc_job *jobs = split(&b.plan, count, &n, loads);
        for (size_t j = 0; j < n; j++) {
            const kbc_experiment *e = &b.plan.exps[jobs[j].exp];
            for (uint32_t v = 0; v < e->n_variants; v++) {
                uint64_t r = kbc_point_representative(e, jobs[j].point, e->variants[v]);
                long o = job_at(jobs, n, jobs[j].exp, r);
                if (o >= 0)
                    cr_assert_eq(jobs[o].shard, jobs[j].shard,
                                 "%s, %d shards: [%s] point %llu in shard %d, but %s runs at "
                                 "point %llu in shard %d",
                                 c->name, count, e->name, (unsigned long long)jobs[j].point,
                                 jobs[j].shard, e->plugin->desc->variants[e->variants[v]].name,
                                 (unsigned long long)r, jobs[o].shard);
            }
            cr_assert_eq(jobs[j].shard, jobs[jobs[j].group].shard,
                         "%s, %d shards: job %zu apart from its group", c->name, count, j);
        }
        free(jobs);
    }
    built_free(&b);
}

/* ---- 2. a variant that ignores a swept parameter ---------------------------- */

/* nonly reads n alone, so each n is one configuration of it across the
   six slow_repeat values: nonly runs at the first and the other five take
   its median.  Equal costs would spread those six jobs over the shards. */
static const char nonly_ini[] = "[global]\n"
                                "runs = 3\n"
                                "[mixed]\n"
                                "plugin = toy\n"
                                "variants = good, nonly\n"
                                "n = 1K, 64K\n"
                                "slow_repeat = 1..6:+1\n";

Test(partition, a_variant_that_ignores_a_sweep_keeps_its_configuration_together)
{
    built b;
    build_text(&b, "nonly.ini", nonly_ini, TOY_DIR);
    const kbc_experiment *e = &b.plan.exps[0];
    cr_assert_eq(e->n_points, 12);
    kb_value values[16];
    cr_assert_leq(e->plugin->desc->n_params, 16);
    for (int count = 2; count <= 4; count++) {
        double loads[4];
        size_t n;
        kbc_job *jobs = split(&b.plan, count, &n, loads);
        cr_assert_eq(n, 12, "good runs at every point");
        int shard_of_n[2] = {-1, -1};
        for (size_t j = 0; j < n; j++) {
            kbc_experiment_point(e, jobs[j].point, values);
            int which = values[0].u == 1024 ? 0 : 1;
            if (shard_of_n[which] < 0)
                shard_of_n[which] = jobs[j].shard;
            cr_assert_eq(jobs[j].shard, shard_of_n[which],
                         "%d shards: point %llu (n=%llu) in shard %d, the first point of its "
                         "configuration in shard %d",
                         count, (unsigned long long)jobs[j].point,
                         (unsigned long long)values[0].u, jobs[j].shard, shard_of_n[which]);
        }
        free(jobs);
    }
    built_free(&b);
}

/* ---- 3. the plan's identity ------------------------------------------------ */

static const char hash_ini[] = "[global]\n"
                               "runs = 3\n"
                               "seed = 5\n"
                               "[h]\n"
                               "plugin = toy\n"
                               "variants = good, slow\n"
                               "n = 1K, 2K\n"
                               "slow_repeat = 2, 3\n";

static void hash_of(const char *name, const char *text, const char *dir, char hex[65])
{
    built b;
    build_text(&b, name, text, dir);
    kbc_plan_hash(&b.plan, hex);
    cr_assert_eq(strlen(hex), 64);
    built_free(&b);
}

Test(hash, the_same_file_twice_gives_the_same_hash)
{
    char a[65], b[65];
    hash_of("h.ini", hash_ini, TOY_DIR, a);
    hash_of("h.ini", hash_ini, TOY_DIR, b);
    cr_assert_str_eq(a, b);
}

typedef struct hash_change {
    char what[32];
    char from[32], to[32];
} hash_change;

ParameterizedTestParameters(hash, one_change_changes_the_hash)
{
    static hash_change cases[] = {
        {"a sweep's value", "n = 1K, 2K\n", "n = 1K, 4K\n"},
        {"the variant list", "variants = good, slow\n", "variants = good, wrong\n"},
        {"runs", "runs = 3\n", "runs = 4\n"},
        {"the seed", "seed = 5\n", "seed = 6\n"},
    };
    return cr_make_param_array(hash_change, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(hash_change *c, hash, one_change_changes_the_hash)
{
    char *changed = NULL;
    const char *at = strstr(hash_ini, c->from);
    cr_assert_not_null(at, "no '%s' in the INI", c->from);
    cr_assert_gt(asprintf(&changed, "%.*s%s%s", (int)(at - hash_ini), hash_ini, c->to,
                          at + strlen(c->from)),
                 0);
    char a[65], b[65];
    hash_of("h.ini", hash_ini, TOY_DIR, a);
    hash_of("h.ini", changed, TOY_DIR, b);
    cr_assert_str_neq(a, b, "changing %s left the hash as it was", c->what);
    free(changed);
}

/* The same plan read from another folder under another name. */
Test(hash, another_folder_and_file_name_keep_the_hash)
{
    char a[65], b[65];
    hash_of("/tmp/one/h.ini", hash_ini, TOY_DIR, a);
    hash_of("/srv/elsewhere/other-name.ini", hash_ini, TOY_DIR, b);
    cr_assert_str_eq(a, b);
}

/* cpu_threads = auto (the default) is not this machine's CPU count: the
   same INI must hash alike on nodes with different counts, so that their
   shards merge. */
Test(hash, cpu_threads_auto_is_not_the_machines_count)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char *explicit_count = NULL;
    cr_assert_gt(asprintf(&explicit_count, "[global]\ncpu_threads = %ld\n%s", cpus,
                          hash_ini + 9),
                 0);
    char a[65], b[65];
    hash_of("h.ini", hash_ini, TOY_DIR, a);
    hash_of("h.ini", explicit_count, TOY_DIR, b);
    cr_assert_str_neq(a, b, "auto hashed as this machine's %ld CPUs", cpus);
    free(explicit_count);
}

/* The same plugin found through another plugin_path: its folder, or the
   file itself. */
Test(hash, another_plugin_path_keeps_the_hash)
{
    char *by_dir = NULL, *by_file = NULL;
    cr_assert_gt(asprintf(&by_dir, "[global]\nplugin_path = %s\n%s", TOY_DIR, hash_ini + 9), 0);
    cr_assert_gt(asprintf(&by_file, "[global]\nplugin_path = %s/kbench-toy.so\n%s", TOY_DIR,
                          hash_ini + 9),
                 0);
    char a[65], b[65], plain[65];
    hash_of("/tmp/a/h.ini", by_dir, NULL, a);
    hash_of("/tmp/b/h.ini", by_file, NULL, b);
    hash_of("h.ini", hash_ini, TOY_DIR, plain);
    cr_assert_str_eq(a, b);
    cr_assert_str_eq(a, plain);
    free(by_dir);
    free(by_file);
}

/* ---- 4. --shard i/N and auto ----------------------------------------------- */

static const char *const launcher_vars[] = {
    "SLURM_ARRAY_TASK_ID",  "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_JOB_ID",
    "SLURM_PROCID",         "SLURM_NTASKS",         "SLURM_JOB_ID",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
    "PMI_SIZE",             "JOB_COMPLETION_INDEX",
};

static void clear_launchers(void)
{
    for (size_t i = 0; i < sizeof launcher_vars / sizeof *launcher_vars; i++)
        cr_assert_eq(unsetenv(launcher_vars[i]), 0);
}

typedef struct parsed {
    int rc, index, count;
    char why[600];
} parsed;

static parsed parse(const char *text, int hint)
{
    parsed p = {.index = -7, .count = -7};
    p.rc = kbc_shard_parse(text, hint, &p.index, &p.count, p.why, sizeof p.why);
    return p;
}

static void parses_to(const char *text, int hint, int index, int count)
{
    parsed p = parse(text, hint);
    cr_assert_eq(p.rc, 0, "'%s' refused: %s", text, p.why);
    cr_assert_eq(p.index, index, "'%s': index %d", text, p.index);
    cr_assert_eq(p.count, count, "'%s': count %d", text, p.count);
}

Test(parse, i_of_n_is_accepted)
{
    parses_to("0/1", 0, 0, 1);
    parses_to("2/3", 0, 2, 3);
}

typedef struct bad_spec {
    char text[16];
} bad_spec;

ParameterizedTestParameters(parse, a_bad_spec_is_refused_with_a_sentence)
{
    static bad_spec cases[] = {{"3/2"}, {"0/0"}, {"-1/2"}, {"1"},     {"a/b"},
                               {"1/2/3"}, {""},  {"2/2"},  {"1/-2"}, {"1/2x"}};
    return cr_make_param_array(bad_spec, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(bad_spec *c, parse, a_bad_spec_is_refused_with_a_sentence)
{
    clear_launchers();
    parsed p = parse(c->text, 0);
    cr_assert_eq(p.rc, -1, "'%s' was accepted as %d/%d", c->text, p.index, p.count);
    cr_assert_gt(strlen(p.why), 20, "'%s': why is '%s'", c->text, p.why);
    assert_has(p.why, "--shard");
    cr_assert_null(strchr(p.why, '\n'), "one sentence: %s", p.why);
}

static void auto_parses_to(int hint, int index, int count, const char *launcher)
{
    parses_to("auto", hint, index, count);
    cr_assert_str_eq(kbc_shard_launcher(), launcher);
}

Test(parse, auto_reads_a_slurm_array)
{
    clear_launchers();
    setenv("SLURM_ARRAY_TASK_ID", "5", 1);
    setenv("SLURM_ARRAY_TASK_MIN", "3", 1);
    setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
    auto_parses_to(0, 2, 4, "Slurm array");
}

/* --array=1-7:2 runs tasks 1, 3, 5 and 7: task 7 is the fourth. */
Test(parse, auto_reads_a_slurm_array_with_a_step)
{
    clear_launchers();
    setenv("SLURM_ARRAY_TASK_ID", "7", 1);
    setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
    setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
    setenv("SLURM_ARRAY_TASK_STEP", "2", 1);
    auto_parses_to(0, 3, 4, "Slurm array");
}

Test(parse, auto_reads_srun)
{
    clear_launchers();
    setenv("SLURM_PROCID", "1", 1);
    setenv("SLURM_NTASKS", "3", 1);
    auto_parses_to(0, 1, 3, "srun");
}

Test(parse, auto_reads_open_mpi)
{
    clear_launchers();
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "5", 1);
    auto_parses_to(0, 2, 5, "Open MPI");
}

Test(parse, auto_reads_mpich)
{
    clear_launchers();
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "2", 1);
    auto_parses_to(0, 0, 2, "MPICH");
}

Test(parse, auto_reads_a_kubernetes_indexed_job_with_shards)
{
    clear_launchers();
    setenv("JOB_COMPLETION_INDEX", "3", 1);
    auto_parses_to(4, 3, 4, "Kubernetes Indexed Job");
}

Test(parse, auto_refuses_a_kubernetes_index_without_shards)
{
    clear_launchers();
    setenv("JOB_COMPLETION_INDEX", "3", 1);
    parsed p = parse("auto", 0);
    cr_assert_eq(p.rc, -1, "accepted as %d/%d", p.index, p.count);
    assert_has(p.why, "JOB_COMPLETION_INDEX");
    assert_has(p.why, "--shards");
}

Test(parse, auto_refuses_a_kubernetes_index_not_below_shards)
{
    clear_launchers();
    setenv("JOB_COMPLETION_INDEX", "4", 1);
    parsed p = parse("auto", 4);
    cr_assert_eq(p.rc, -1, "accepted as %d/%d", p.index, p.count);
    assert_has(p.why, "--shards 4");
}

Test(parse, auto_without_a_launcher_names_every_variable_it_looked_for)
{
    clear_launchers();
    parsed p = parse("auto", 0);
    cr_assert_eq(p.rc, -1, "accepted as %d/%d", p.index, p.count);
    const char *names[] = {"SLURM_ARRAY_TASK_ID", "SLURM_PROCID", "SLURM_NTASKS",
                           "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMI_SIZE",
                           "JOB_COMPLETION_INDEX"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        assert_has(p.why, names[i]);
    cr_assert_str_eq(kbc_shard_launcher(), "");
}

Test(parse, auto_refuses_a_rank_not_below_the_size)
{
    clear_launchers();
    setenv("OMPI_COMM_WORLD_RANK", "5", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "5", 1);
    parsed p = parse("auto", 0);
    cr_assert_eq(p.rc, -1, "accepted as %d/%d", p.index, p.count);
    assert_has(p.why, "OMPI_COMM_WORLD_RANK");
}

/* mpirun inside a Slurm allocation: the ranks inherit the Slurm step's
   variables (the batch step's SLURM_PROCID=0 and the allocation's
   SLURM_NTASKS, or those of the srun that started mpirun's daemons), which
   are the same for every rank on a node; only the MPI rank tells them
   apart. */
Test(parse, auto_prefers_the_mpi_rank_to_the_slurm_step_around_it)
{
    clear_launchers();
    setenv("SLURM_PROCID", "0", 1);
    setenv("SLURM_NTASKS", "4", 1);
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    auto_parses_to(0, 2, 4, "Open MPI");
}

/* The launcher of an earlier auto parse is forgotten by an i/N one. */
Test(parse, an_explicit_shard_names_no_launcher)
{
    clear_launchers();
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "2", 1);
    auto_parses_to(0, 0, 2, "MPICH");
    parses_to("1/2", 0, 1, 2);
    cr_assert_str_eq(kbc_shard_launcher(), "");
}

/* ---- running kbench -------------------------------------------------------- */

static char tmp[256];

static void make_tmp(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/kbench-shard-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

/* Outputs collected by a test, freed with its folder. */
static char *collected[256];
static size_t n_collected;

static char *keep(char *s)
{
    cr_assert_lt(n_collected, sizeof collected / sizeof *collected, "too many outputs kept");
    collected[n_collected++] = s;
    return s;
}

static void remove_tmp(void)
{
    while (n_collected > 0)
        free(collected[--n_collected]);
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "rm -rf '%s'", tmp), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

typedef struct result {
    int code;
    char *out, *err;
} result;

/* Runs `ENV kbench ARGS` in the temporary folder, with no plugins and no
   launcher from the environment and the GPU locks in that folder (tests
   that run at once use the same fake GPUs), and collects the exit code and
   output. */
static result kb(const char *env, const char *args)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd,
                          "cd '%s' && env -u SLURM_ARRAY_TASK_ID -u SLURM_PROCID -u SLURM_NTASKS "
                          "-u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u PMI_RANK "
                          "-u PMI_SIZE -u JOB_COMPLETION_INDEX KBENCH_PLUGIN_PATH= "
                          "KBENCH_LOCK_DIR='%s' %s '%s' %s >out.txt 2>err.txt",
                          tmp, tmp, env, KBENCH, args),
                 0);
    int st = system(cmd);
    free(cmd);
    cr_assert(WIFEXITED(st), "kbench did not exit normally (status %d)", st);
    result r = {.code = WEXITSTATUS(st)};
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", tmp);
    r.out = keep(slurp(path));
    snprintf(path, sizeof path, "%s/err.txt", tmp);
    r.err = keep(slurp(path));
    return r;
}

/* DIR/results.json of the temporary folder, parsed. */
static json_t *results_of(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/results.json", tmp, dir);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    cr_assert_not_null(doc, "%s does not parse: %s", path, je.text);
    return doc;
}

static json_t *rows_of(json_t *doc)
{
    json_t *rows = json_object_get(doc, "results");
    cr_assert(json_is_array(rows), "no results array");
    return rows;
}

static const char *row_str(json_t *row, const char *field)
{
    json_t *v = json_object_get(row, field);
    cr_assert(json_is_string(v), "a row without a string '%s'", field);
    return json_string_value(v);
}

/* ---- 5. kbench run --shard -------------------------------------------------- */

/* 18 points: 12 where each point is its own configuration, 6 where nonly
   ties each n's three points together. */
static const char shard_ini[] = "[global]\n"
                                "runs = 3\n"
                                "warmup = 1\n"
                                "seed = 3\n"
                                "[sweep]\n"
                                "plugin = toy\n"
                                "variants = good, slow\n"
                                "n = 1K, 2K, 4K\n"
                                "slow_repeat = 1..4:+1\n"
                                "[grouped]\n"
                                "plugin = toy\n"
                                "variants = good, nonly\n"
                                "n = 1K, 8K\n"
                                "slow_repeat = 1..3:+1\n";

TestSuite(cli, .init = make_tmp, .fini = remove_tmp, .timeout = 60);

/* The points a dry run lists under "shard I of N ...", as "[exp] point P"
   lines, joined by '\n'; *n of them. */
static char *listed_points(const char *out, int index, int count, size_t *n)
{
    char head[64];
    snprintf(head, sizeof head, "\nshard %d of %d ", index, count);
    const char *at = strstr(out, head);
    cr_assert_not_null(at, "no line starting '%s' in: %s", head + 1, out);
    at = strchr(at + 1, '\n');
    cr_assert_not_null(at);
    char *list = keep(calloc(strlen(at) + 2, 1));
    *n = 0;
    for (const char *p = at + 1; strncmp(p, "  [", 3) == 0;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        strncat(list, p + 2, len - 2);
        strcat(list, "\n");
        (*n)++;
        p += len + (eol != NULL);
    }
    return list;
}

Test(cli, a_shard_runs_only_the_points_its_dry_run_lists)
{
    write_file("s.ini", shard_ini);
    result dry = kb("", "run s.ini --dry-run --shard 1/3 --plugin-path " TOY_DIR);
    cr_assert_eq(dry.code, 0, "%s", dry.err);
    size_t n_listed;
    char *listed = listed_points(dry.out, 1, 3, &n_listed);
    cr_assert_gt(n_listed, 0, "%s", dry.out);
    cr_assert_lt(n_listed, 18, "%s", dry.out);
    result r = kb("", "run s.ini -q --shard 1/3 -o part --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *doc = results_of("part");
    json_t *rows = rows_of(doc);
    cr_assert_gt(json_array_size(rows), 0);
    /* Every row is at a listed point, and every listed point has rows. */
    char *seen = keep(calloc(strlen(listed) + 1, 1));
    size_t n_seen = 0;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        char line[160];
        snprintf(line, sizeof line, "[%s] point %lld\n", row_str(row, "experiment"),
                 (long long)json_integer_value(json_object_get(row, "point")));
        cr_assert_not_null(strstr(listed, line), "row %s is not the shard's: %s",
                           row_str(row, "key"), listed);
        if (!strstr(seen, line)) {
            strcat(seen, line);
            n_seen++;
        }
    }
    cr_assert_eq(n_seen, n_listed, "rows at %zu points, the dry run lists %zu:\n%s", n_seen,
                 n_listed, listed);
    json_decref(doc);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the keys of DIR's rows to keys (*n of them). */
static void add_keys(const char *dir, char **keys, size_t *n, size_t max)
{
    json_t *doc = results_of(dir);
    size_t i;
    json_t *row;
    json_array_foreach(rows_of(doc), i, row) {
        cr_assert_lt(*n, max);
        keys[(*n)++] = keep(strdup(row_str(row, "key")));
    }
    json_decref(doc);
}

Test(cli, three_shards_together_run_every_row_once)
{
    write_file("s.ini", shard_ini);
    result r = kb("", "run s.ini -q -o whole --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    for (int s = 0; s < 3; s++) {
        char args[256];
        snprintf(args, sizeof args, "run s.ini -q --shard %d/3 -o part%d --plugin-path %s", s, s,
                 TOY_DIR);
        r = kb("", args);
        cr_assert_eq(r.code, 0, "shard %d: %s", s, r.err);
    }
    char *whole[64], *parts[64];
    size_t n_whole = 0, n_parts = 0;
    add_keys("whole", whole, &n_whole, 64);
    add_keys("part0", parts, &n_parts, 64);
    add_keys("part1", parts, &n_parts, 64);
    add_keys("part2", parts, &n_parts, 64);
    cr_assert_eq(n_whole, 32, "12 points x 2 variants, 6 goods and 2 nonlys");
    cr_assert_eq(n_parts, n_whole, "the shards ran %zu rows, the whole plan %zu", n_parts,
                 n_whole);
    qsort(whole, n_whole, sizeof *whole, by_string);
    qsort(parts, n_parts, sizeof *parts, by_string);
    for (size_t i = 0; i < n_whole; i++) {
        cr_assert_str_eq(parts[i], whole[i], "row %zu of the sorted keys", i);
        if (i > 0)
            cr_assert_str_neq(parts[i], parts[i - 1], "%s ran twice", parts[i]);
    }
}

Test(cli, a_shard_records_its_index_and_count_in_results_json)
{
    write_file("s.ini", shard_ini);
    result r = kb("", "run s.ini -q --shard 1/3 -o part --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *doc = results_of("part");
    json_t *shard = json_object_get(json_object_get(doc, "plan"), "shard");
    cr_assert(json_is_object(shard), "plan.shard is not an object");
    cr_assert(json_is_integer(json_object_get(shard, "index")));
    cr_assert(json_is_integer(json_object_get(shard, "count")));
    cr_assert_eq(json_integer_value(json_object_get(shard, "index")), 1);
    cr_assert_eq(json_integer_value(json_object_get(shard, "count")), 3);
    json_decref(doc);
}

/* The plan a shard's dry run names is the plan its run records, so that
   the dry run tells which folders `kbench merge` will join. */
Test(cli, the_dry_run_names_the_plan_the_run_records)
{
    write_file("s.ini", shard_ini);
    result dry = kb("", "run s.ini --dry-run --shard 2/3 --plugin-path " TOY_DIR);
    cr_assert_eq(dry.code, 0, "%s", dry.err);
    const char *at = strstr(dry.out, "\nshard 2 of 3 (plan ");
    cr_assert_not_null(at, "%s", dry.out);
    char named[13] = "";
    cr_assert_eq(sscanf(at, "\nshard 2 of 3 (plan %12[0-9a-f]", named), 1, "%s", at);
    cr_assert_eq(strlen(named), 12, "%s", at);
    result r = kb("", "run s.ini -q --shard 2/3 -o part --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *doc = results_of("part");
    json_t *hash = json_object_get(json_object_get(doc, "plan"), "hash");
    cr_assert(json_is_string(hash), "no plan.hash");
    cr_assert_eq(strlen(json_string_value(hash)), 64);
    cr_assert_eq(strncmp(json_string_value(hash), named, 12), 0, "the dry run names %s, the run %s",
                 named, json_string_value(hash));
    json_decref(doc);
}

/* --shard auto under MPICH's variables runs shard PMI_RANK of PMI_SIZE. */
Test(cli, auto_runs_the_launchers_shard)
{
    write_file("s.ini", shard_ini);
    result r = kb("PMI_RANK=2 PMI_SIZE=3", "run s.ini -q --shard auto -o part --plugin-path "
                                           TOY_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *doc = results_of("part");
    json_t *shard = json_object_get(json_object_get(doc, "plan"), "shard");
    cr_assert(json_is_object(shard), "plan.shard is not an object");
    cr_assert_eq(json_integer_value(json_object_get(shard, "index")), 2);
    cr_assert_eq(json_integer_value(json_object_get(shard, "count")), 3);
    json_decref(doc);
}

Test(cli, an_index_not_below_the_count_exits_two)
{
    write_file("s.ini", shard_ini);
    result r = kb("", "run s.ini -q --shard 3/2 -o part --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    assert_has(r.err, "--shard 3/2");
    cr_assert_eq(access("part", F_OK), -1, "a refused shard made its folder");
}

Test(cli, auto_without_a_launcher_exits_two_naming_the_variables)
{
    write_file("s.ini", shard_ini);
    result r = kb("", "run s.ini -q --shard auto -o part --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    assert_has(r.err, "SLURM_ARRAY_TASK_ID");
    assert_has(r.err, "OMPI_COMM_WORLD_RANK");
    assert_has(r.err, "PMI_RANK");
    assert_has(r.err, "JOB_COMPLETION_INDEX");
}

Test(cli, shards_without_shard_auto_exits_two)
{
    write_file("s.ini", shard_ini);
    result r = kb("", "run s.ini -q --shards 3 -o part --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    assert_has(r.err, "--shards");
    assert_has(r.err, "--shard auto");
}

Test(cli, a_shard_without_an_output_folder_exits_two)
{
    write_file("s.ini", shard_ini);
    result r = kb("", "run s.ini -q --shard 1/2 --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    assert_has(r.err, "needs -o");
    cr_assert_null(strstr(r.out, "good"), "something ran: %s", r.out);
}

/* ---- 6. kbench run --gpus, against the fake NVML ---------------------------- */

#define FAKE "KBENCH_NVML=" KBENCH_FAKE_NVML

/* Twelve points of 20 ms runs (five of them each: warm-up, the checked run
   and three timed), so that a worker is busy long enough for the others
   to take points too. */
static const char slow_ini[] = "[global]\n"
                               "runs = 3\n"
                               "warmup = 1\n"
                               "seed = 7\n"
                               "[slow]\n"
                               "plugin = crash\n"
                               "variants = slowpoke\n"
                               "n = 100..1200:+100\n";

/* Two quick points. */
static const char quick_ini[] = "[global]\n"
                                "runs = 3\n"
                                "warmup = 1\n"
                                "[quick]\n"
                                "plugin = crash\n"
                                "variants = good, good2\n"
                                "n = 100, 200\n";

/* Every row of DIR (want_rows of them) passed and carries the UUID of one
   of the fake's first n_named GPUs, with that GPU's PCI bus id (the fake
   has fake_count; its device i sits on bus 0x10 + fake_count - 1 - i).
   Returns how many distinct GPUs the rows name. */
static int rows_pass_on_fake_gpus(const char *dir, int fake_count, int n_named,
                                  size_t want_rows)
{
    json_t *doc = results_of(dir);
    json_t *rows = rows_of(doc);
    cr_assert_eq(json_array_size(rows), want_rows);
    int used[64] = {0}, distinct = 0;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        cr_assert_str_eq(row_str(row, "status"), "pass", "%s", row_str(row, "key"));
        const char *uuid = row_str(row, "gpu_uuid");
        int g = -1;
        cr_assert_eq(sscanf(uuid, "GPU-fake-0000-%d", &g), 1, "not a fake GPU: %s", uuid);
        cr_assert(g >= 0 && g < n_named, "%s is not among the %d named", uuid, n_named);
        char bus[32];
        snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x10 + fake_count - 1 - g);
        cr_assert_str_eq(row_str(row, "pci_bus_id"), bus, "%s", uuid);
        distinct += !used[g];
        used[g] = 1;
    }
    json_decref(doc);
    return distinct;
}

Test(cli, gpus_all_spreads_the_points_over_the_fake_gpus)
{
    write_file("slow.ini", slow_ini);
    result r = kb(FAKE " FAKE_NVML_GPUS=4", "run slow.ini -q --gpus all -o out --plugin-path "
                                            CRASH_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    int distinct = rows_pass_on_fake_gpus("out", 4, 4, 12);
    cr_assert_geq(distinct, 2, "every point ran on one GPU of 4");
}

/* Keys and statuses of a run on four fake GPUs, in order, as in a run on
   the default device. */
Test(cli, gpus_all_gives_the_rows_of_a_default_run_in_order)
{
    write_file("slow.ini", slow_ini);
    result r = kb("", "run slow.ini -q -o one --plugin-path " CRASH_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    r = kb(FAKE " FAKE_NVML_GPUS=4", "run slow.ini -q --gpus all -o four --plugin-path "
                                     CRASH_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *one = results_of("one"), *four = results_of("four");
    json_t *a = rows_of(one), *b = rows_of(four);
    cr_assert_eq(json_array_size(a), 12);
    cr_assert_eq(json_array_size(b), json_array_size(a));
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
        cr_assert_str_eq(row_str(y, "key"), row_str(x, "key"), "row %zu", i);
        cr_assert_str_eq(row_str(y, "status"), row_str(x, "status"), "row %zu", i);
    }
    json_decref(one);
    json_decref(four);
}

Test(cli, a_gpu_that_does_not_exist_exits_two_naming_those_that_do)
{
    write_file("q.ini", quick_ini);
    result r = kb(FAKE " FAKE_NVML_GPUS=1", "run q.ini -q --gpus 7 -o out --plugin-path "
                                            CRASH_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    assert_has(r.err, "'7'");
    assert_has(r.err, "NVML sees 1 GPU: 0 Fake H100");
}

Test(cli, a_gpu_named_twice_exits_two_mentioning_allow_shared)
{
    write_file("q.ini", quick_ini);
    result r = kb(FAKE " FAKE_NVML_GPUS=2", "run q.ini -q --gpus 0,0 -o out --plugin-path "
                                            CRASH_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    assert_has(r.err, "--allow-shared");
}

Test(cli, a_gpu_named_twice_runs_with_allow_shared)
{
    write_file("q.ini", quick_ini);
    result r = kb(FAKE " FAKE_NVML_GPUS=2",
                  "run q.ini -q --gpus 0,0 --allow-shared -o out --plugin-path " CRASH_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    rows_pass_on_fake_gpus("out", 2, 1, 4);
}

Test(cli, mixed_models_exit_two_mentioning_allow_mixed)
{
    write_file("q.ini", quick_ini);
    result r = kb(FAKE " FAKE_NVML_GPUS=2 FAKE_NVML_MIXED=1",
                  "run q.ini -q --gpus all -o out --plugin-path " CRASH_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    assert_has(r.err, "--allow-mixed");
    assert_has(r.err, "Fake H200");
}

Test(cli, mixed_models_run_with_allow_mixed)
{
    write_file("q.ini", quick_ini);
    result r = kb(FAKE " FAKE_NVML_GPUS=2 FAKE_NVML_MIXED=1",
                  "run q.ini -q --gpus all --allow-mixed -o out --plugin-path " CRASH_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    rows_pass_on_fake_gpus("out", 2, 2, 4);
}

/* The fake's device 1 of 3 sits on bus 0x11. */
Test(cli, a_uuid_selects_that_gpu)
{
    write_file("q.ini", quick_ini);
    result r = kb(FAKE " FAKE_NVML_GPUS=3",
                  "run q.ini -q --gpus GPU-fake-0000-1 -o out --plugin-path " CRASH_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *doc = results_of("out");
    json_t *rows = rows_of(doc);
    cr_assert_eq(json_array_size(rows), 4);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        cr_assert_str_eq(row_str(row, "gpu_uuid"), "GPU-fake-0000-1");
        cr_assert_str_eq(row_str(row, "pci_bus_id"), "00000000:11:00.0");
    }
    json_decref(doc);
}

Test(cli, gpus_without_nvml_exit_two_saying_they_cannot_be_listed)
{
    write_file("q.ini", quick_ini);
    result r = kb("KBENCH_NVML=off", "run q.ini -q --gpus all -o out --plugin-path " CRASH_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    assert_has(r.err, "cannot be listed");
    assert_has(r.err, "KBENCH_NVML is off");
}

/* [global] gpus = ... picks the GPUs as --gpus does. */
Test(cli, the_gpus_key_picks_the_gpus)
{
    char *ini = NULL;
    cr_assert_gt(asprintf(&ini, "[global]\ngpus = GPU-fake-0000-1\n%s", quick_ini + 9), 0);
    write_file("k.ini", ini);
    free(ini);
    result r = kb(FAKE " FAKE_NVML_GPUS=3", "run k.ini -q -o out --plugin-path " CRASH_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *doc = results_of("out");
    json_t *rows = rows_of(doc);
    cr_assert_eq(json_array_size(rows), 4);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) cr_assert_str_eq(row_str(row, "gpu_uuid"), "GPU-fake-0000-1");
    json_decref(doc);
}

/* A bad gpus key is named by file, line and key. */
Test(cli, a_bad_gpus_key_names_its_line)
{
    char *ini = NULL;
    cr_assert_gt(asprintf(&ini, "[global]\ngpus = 7\n%s", quick_ini + 9), 0);
    write_file("k.ini", ini);
    free(ini);
    result r = kb(FAKE " FAKE_NVML_GPUS=1", "run k.ini -q -o out --plugin-path " CRASH_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    assert_has(r.err, "k.ini:2: key 'gpus' in [global]");
    assert_has(r.err, "no GPU '7'");
}

/* Two runs on one GPU time each other's kernels: a second run on a GPU
   that a worker of another run holds is refused (exit 2), unless asked
   with --allow-shared.  The first run is started in the background and
   holds the fake GPU while its slow points run. */
Test(cli, a_gpu_in_use_by_another_run_is_refused)
{
    write_file("slow.ini", slow_ini);
    write_file("q.ini", quick_ini);
    char *lockdir = NULL;
    cr_assert_gt(asprintf(&lockdir, "%s/locks", tmp), 0);
    cr_assert_eq(mkdir(lockdir, 0777), 0);
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd,
                          "cd '%s' && { KBENCH_LOCK_DIR='%s' " FAKE " FAKE_NVML_GPUS=1 "
                          "KBENCH_PLUGIN_PATH= '%s' run slow.ini -q --gpus 0 -o first "
                          "--plugin-path " CRASH_DIR " >first.out 2>first.err & echo $! > pid; }",
                          tmp, lockdir, KBENCH),
                 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    /* Wait until the first run's worker holds the lock (its journal has
       a first point), at most 10 s. */
    char *journal = NULL;
    cr_assert_gt(asprintf(&journal, "%s/first/journal.jsonl", tmp), 0);
    for (int i = 0; i < 200; i++) {
        char *text = slurp(journal);
        int lines = 0;
        for (char *p = text; *p; p++)
            lines += *p == '\n';
        free(text);
        if (lines >= 2)
            break;
        usleep(50000);
    }
    free(journal);
    char *env = NULL;
    cr_assert_gt(asprintf(&env, "KBENCH_LOCK_DIR='%s' " FAKE " FAKE_NVML_GPUS=1", lockdir), 0);
    result r = kb(env, "run q.ini -q --gpus 0 -o second --plugin-path " CRASH_DIR);
    result shared = kb(env, "run q.ini -q --gpus 0 --allow-shared -o third --plugin-path " CRASH_DIR);
    free(env);
    cr_assert_gt(asprintf(&cmd, "cd '%s' && while kill -0 $(cat pid) 2>/dev/null; do "
                                "sleep 0.1; done",
                          tmp),
                 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    free(lockdir);
    cr_assert_eq(r.code, 2, "%s", r.err);
    assert_has(r.err, "is in use by another kbench run");
    assert_has(r.err, "--allow-shared");
    cr_assert_eq(shared.code, 0, "%s", shared.err);
}
