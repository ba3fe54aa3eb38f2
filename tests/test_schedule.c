/*
 * test_schedule.c -- kbench's one scheduler, the supervisor
 * (exec/supervisor.c), driven in process as `kbench run` drives it: a
 * plan built from an INI file of the toy plugin (tests/fixtures/runner),
 * the built kbench binary as its workers, and sinks that keep what they
 * are fed.  The exit code counts failed rows one way
 * (kbc_outcome_failed): skipped rows do not fail a run, failed and
 * erring rows do; a sink that cannot write is dropped, makes a system
 * error, and the run goes on for the others.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "gpu.h"
#include "ini.h"
#include "loader.h"
#include "supervisor.h"

#define TOY_DIR KBENCH_FIXTURE_DIR "/runner"

static char dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/kbench-schedule-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "rm -rf '%s'", dir), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

TestSuite(schedule, .init = make_dir, .fini = remove_dir);

/* A sink that keeps copies of its rows; point() fails from call
   fail_at on (1-based; 0: never). */
typedef struct keeper {
    int begins, ends, end_code, suspect_calls;
    size_t points, n;
    kbc_record rows[8];
    int fail_at;
} keeper;

static int keep_begin(void *ctx, const kbc_run_info *info)
{
    (void)info;
    ((keeper *)ctx)->begins++;
    return 0;
}

static int keep_point(void *ctx, const kbc_record *rows, size_t n)
{
    keeper *k = ctx;
    k->points++;
    if (k->fail_at && (int)k->points >= k->fail_at)
        return -1;
    for (size_t i = 0; i < n && k->n < sizeof k->rows / sizeof *k->rows; i++) {
        k->rows[k->n] = rows[i];
        /* The samples are the supervisor's to free. */
        k->rows[k->n].samples = NULL;
        k->n++;
    }
    return 0;
}

static int keep_end(void *ctx, int code)
{
    keeper *k = ctx;
    k->ends++;
    k->end_code = code;
    return 0;
}

static int keep_suspects(void *ctx, const kbc_suspect *list, size_t n)
{
    (void)list;
    (void)n;
    ((keeper *)ctx)->suspect_calls++;
    return 0;
}

static kbc_sink sink_of(keeper *k)
{
    return (kbc_sink){.ctx = k, .begin = keep_begin, .point = keep_point, .end = keep_end,
                      .suspects = keep_suspects};
}

static const kbc_record *row_of(const keeper *k, uint64_t point, const char *variant)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->rows[i].point == point && strcmp(k->rows[i].variant, variant) == 0)
            return &k->rows[i];
    cr_assert_fail("no row for point %llu variant %s", (unsigned long long)point, variant);
    return NULL;
}

/* Writes text as DIR/run.ini, builds its plan and supervises it into the
   sinks, as `kbench run -q` does; returns the exit code. */
static int supervise(const char *text, kbc_sink *sinks, size_t n_sinks)
{
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s/run.ini", dir), 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    kbc_registry reg;
    kbc_registry_init(&reg);
    kbc_registry_add_defaults(&reg);
    kbc_diag d = {{0}};
    cr_assert_geq(kbc_registry_add_path(&reg, TOY_DIR, &d), 0, "%s", d.msg);
    kbc_ini ini = {0};
    kbc_plan plan = {0};
    cr_assert_eq(kbc_ini_load(path, &ini, &d), 0, "%s", d.msg);
    cr_assert_eq(kbc_plan_build(&ini, &reg, 0, &plan, &d), 0, "%s", d.msg);
    static const char *const paths[] = {TOY_DIR};
    kbc_super_opts o;
    memset(&o, 0, sizeof o);
    o.request = (kbc_request){.self = KBENCH_BINARY_DIR "/kbench", .ini_path = path,
                              .plugin_paths = paths, .n_plugin_paths = 1, .quiet = 1};
    kbc_run_set_quiet(1);
    int code = kbc_supervise(&plan, &o, sinks, n_sinks, "kbench run run.ini -q");
    kbc_plan_free(&plan);
    kbc_ini_free(&ini);
    kbc_registry_free(&reg);
    free(path);
    return code;
}

Test(schedule, skipped_rows_do_not_fail_a_run)
{
    keeper k = {0};
    kbc_sink s = sink_of(&k);
    /* n above limit: limited refuses it in setup (KB_EUNSUPPORTED). */
    int code = supervise("[toyexp]\nplugin = toy\nvariants = good, limited, gpu\n"
                         "n = 100000\nwarmup = 2\nruns = 3\nseed = 77\ncpu_threads = 1\n",
                         &s, 1);
    cr_assert_eq(code, KBC_EXIT_OK);
    cr_assert_eq(k.end_code, KBC_EXIT_OK);
    cr_assert_eq(row_of(&k, 0, "good")->outcome, KBC_PASS);
    cr_assert_eq(row_of(&k, 0, "limited")->outcome, KBC_SKIPPED);
    kbc_machine m;
    kbc_gpu_probe(&m);
    if (!m.has_gpu)
        cr_assert_eq(row_of(&k, 0, "gpu")->outcome, KBC_SKIPPED);
}

/* FAIL and error rows fail the run (exit 1), fed to the sinks with the
   code. */
Test(schedule, failed_and_erring_rows_fail_the_run)
{
    keeper k = {0};
    kbc_sink s = sink_of(&k);
    int code = supervise("[toyexp]\nplugin = toy\nvariants = good, wrong, broken\n"
                         "n = 1024\nwarmup = 1\nruns = 2\ncpu_threads = 1\n",
                         &s, 1);
    cr_assert_eq(code, KBC_EXIT_FAILED);
    cr_assert_eq(k.end_code, KBC_EXIT_FAILED);
    cr_assert_eq(row_of(&k, 0, "good")->outcome, KBC_PASS);
    cr_assert_eq(row_of(&k, 0, "wrong")->outcome, KBC_FAIL);
    cr_assert_eq(row_of(&k, 0, "broken")->outcome, KBC_ERROR);
}

Test(schedule, a_sink_that_cannot_write_makes_a_system_error)
{
    keeper bad = {.fail_at = 2}, good = {0};
    kbc_sink s[2] = {sink_of(&bad), sink_of(&good)};
    int code = supervise("[toyexp]\nplugin = toy\nvariants = good\nn = 16, 32, 64\n"
                         "warmup = 1\nruns = 2\ncpu_threads = 1\n",
                         s, 2);
    cr_assert_eq(code, KBC_EXIT_SYSTEM);
    /* The failing sink is not fed again, and gets no end(). */
    cr_assert_eq(bad.points, 2);
    cr_assert_eq(bad.n, 1);
    cr_assert_eq(bad.ends, 0);
    /* The run went on to its end for the other sink. */
    cr_assert_eq(good.points, 3);
    cr_assert_eq(good.n, 3);
    cr_assert_eq(good.ends, 1);
    cr_assert_eq(good.end_code, KBC_EXIT_SYSTEM);
}

/* The run's rows go through the one fan-out (views/fanout.h), which finds
   the suspect rows once and hands them to every sink before its end(). */
Test(schedule, the_sinks_are_handed_the_suspects_before_the_end)
{
    keeper a = {0}, b = {0};
    kbc_sink s[2] = {sink_of(&a), sink_of(&b)};
    int code = supervise("[toyexp]\nplugin = toy\nvariants = good\nn = 16, 32\n"
                         "warmup = 1\nruns = 2\ncpu_threads = 1\n",
                         s, 2);
    cr_assert_eq(code, KBC_EXIT_OK);
    cr_assert_eq(a.suspect_calls, 1);
    cr_assert_eq(b.suspect_calls, 1);
    cr_assert_eq(a.ends, 1);
}
