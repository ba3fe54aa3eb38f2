/*
 * test_busy.c -- keeping every GPU busy, through the kbench binary: the
 * prefetch key changes no row (prefetch = off against auto, on the
 * two-halves plugin of tests/fixtures/prefetch, whose hints the workers
 * take); --timeline writes where each worker's time went; --costs prices
 * a plan's points from an earlier run's journal, so that shards balance
 * where the model cannot (a plan whose time is in repeats the model does
 * not see), and refuses a folder that holds no run.
 */
#include "kbench_cmd.h"

#include <jansson.h>
#include <math.h>
#include <sys/stat.h>

#define PRE_DIR KBENCH_FIXTURE_DIR "/prefetch"
#define TOY_DIR KBENCH_FIXTURE_DIR "/runner"

TestSuite(busy, .init = kc_tmp, .fini = kc_tmp_remove);

static json_t *results_of(const char *dir)
{
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s/%s/results.json", kc_dir, dir), 0);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    cr_assert_not_null(root, "%s: %s", path, je.text);
    free(path);
    return root;
}

static const char *const STUDY = "[global]\nwarmup = 0\nruns = 3\ncpu_threads = 1\n"
                                 "[e]\nplugin = pre\nvariants = cpu, cpu2, gpu\n"
                                 "n = 100, 200, 300, 400\nrun_us = 2000\nhost_ms = 5\n";

Test(busy, prefetch_off_and_auto_give_the_same_rows)
{
    kc_write("s.ini", STUDY);
    kc_result a = kc_run("run s.ini --plugin-path " PRE_DIR " -q -o auto");
    kc_result b = kc_run("run s.ini --plugin-path " PRE_DIR " -q -o off --set prefetch=off");
    cr_assert_eq(a.code, 0, "%s", a.err);
    cr_assert_eq(b.code, 0, "%s", b.err);
    json_t *ra = results_of("auto"), *rb = results_of("off");
    const json_t *xa = json_object_get(ra, "results"), *xb = json_object_get(rb, "results");
    cr_assert_eq(json_array_size(xa), 12);
    cr_assert_eq(json_array_size(xb), 12);
    for (size_t i = 0; i < 12; i++) {
        const json_t *p = json_array_get(xa, i), *q = json_array_get(xb, i);
        cr_assert_str_eq(json_string_value(json_object_get(p, "variant")),
                         json_string_value(json_object_get(q, "variant")));
        cr_assert_str_eq(json_string_value(json_object_get(p, "status")),
                         json_string_value(json_object_get(q, "status")));
        cr_assert_eq(json_integer_value(json_object_get(p, "runs")),
                     json_integer_value(json_object_get(q, "runs")));
        const json_t *ep = json_object_get(json_object_get(p, "check"), "error");
        const json_t *eq = json_object_get(json_object_get(q, "check"), "error");
        cr_assert((!ep && !eq) || json_equal(ep, eq), "the check's error differs at row %zu",
                  i);
        /* Every row that ran says how long it took. */
        if (strcmp(json_string_value(json_object_get(p, "status")), "pass") == 0)
            cr_assert_gt(json_number_value(json_object_get(p, "wall_s")), 0.0);
    }
    json_decref(ra);
    json_decref(rb);
    kc_free(&a);
    kc_free(&b);
}

Test(busy, timeline_says_where_the_time_went)
{
    kc_write("s.ini", STUDY);
    kc_result r = kc_run("run s.ini --plugin-path " PRE_DIR " -q --timeline tl.jsonl");
    cr_assert_eq(r.code, 0, "%s", r.err);
    char *text = kc_slurp(kc_path("tl.jsonl"));
    size_t starts = 0, points = 0, summaries = 0;
    json_t *last = NULL;
    double end_max = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        cr_assert_not_null(o, "not JSON: %s", line);
        const char *ev = json_string_value(json_object_get(o, "event"));
        cr_assert_not_null(ev);
        if (strcmp(ev, "start") == 0) {
            starts++;
            cr_assert_geq(json_number_value(json_object_get(o, "hello")),
                          json_number_value(json_object_get(o, "spawn")));
        } else if (strcmp(ev, "point") == 0) {
            points++;
            double s = json_number_value(json_object_get(o, "start"));
            double e = json_number_value(json_object_get(o, "end"));
            cr_assert_lt(s, e);
            end_max = e > end_max ? e : end_max;
            cr_assert_eq(json_array_size(json_object_get(o, "variants")), 3);
            cr_assert_geq(json_number_value(json_object_get(o, "setup_s")), 0.0);
        } else {
            cr_assert_str_eq(ev, "summary");
            summaries++;
        }
        json_decref(last);
        last = o;
    }
    cr_assert_eq(starts, 1);
    cr_assert_eq(points, 4);
    cr_assert_eq(summaries, 1);
    cr_assert_str_eq(json_string_value(json_object_get(last, "event")), "summary",
                     "the summary is the last line");
    const json_t *w = json_array_get(json_object_get(last, "workers"), 0);
    cr_assert_eq(json_integer_value(json_object_get(w, "points")), 4);
    double wall = json_number_value(json_object_get(last, "wall_s"));
    cr_assert_geq(wall, end_max);
    /* 4 points x 2 CPU variants x 3 runs of at least 2 ms. */
    cr_assert_gt(json_number_value(json_object_get(w, "timed_cpu_s")), 0.048);
    cr_assert_leq(json_number_value(json_object_get(w, "busy_s")), wall);
    json_decref(last);
    free(text);
    kc_free(&r);

    kc_result bad = kc_run("run s.ini --plugin-path " PRE_DIR " -q --timeline no/such/dir/tl");
    cr_assert_eq(bad.code, 2);
    kc_assert_has(bad.err, "--timeline: cannot write 'no/such/dir/tl'");
    kc_free(&bad);
}

/* Eight points whose model is the same (one n), half of them repeating
   their work 200 times: the model splits them by count, alternately,
   which puts every slow point in shard 0; the clock sees the repeats. */
static const char *const SKEWED =
    "[global]\nwarmup = 1\nruns = 3\ncpu_threads = 1\n"
    "[skew]\nplugin = toy\nvariants = slow\nn = 64K\n"
    "slow_repeat = 200, 1, 201, 2, 202, 3, 203, 4\n";

/* The seconds each point of the skewed plan took (its rows' wall_s), from
   a results.json. */
static void walls_of(const char *path, double *wall, size_t n)
{
    json_error_t je;
    json_t *root = json_load_file(kc_path(path), 0, &je);
    cr_assert_not_null(root, "%s", je.text);
    size_t i;
    const json_t *row;
    for (size_t p = 0; p < n; p++)
        wall[p] = 0;
    json_array_foreach(json_object_get(root, "results"), i, row)
    {
        json_int_t p = json_integer_value(json_object_get(row, "point"));
        cr_assert_lt(p, (json_int_t)n);
        wall[p] += json_number_value(json_object_get(row, "wall_s"));
    }
    json_decref(root);
}

/* The imbalance (percent over the mean) of shard 0/2 as the dry run with
   `extra` splits the plan, at the seconds each point really took. */
static double imbalance(const char *extra, const double *wall, size_t n)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "run skew.ini --plugin-path " TOY_DIR " --dry-run --shard 0/2 %s",
                          extra),
                 0);
    kc_result r = kc_run(cmd);
    free(cmd);
    cr_assert_eq(r.code, 0, "%s", r.err);
    double mine = 0, all = 0;
    for (size_t p = 0; p < n; p++) {
        char line[64];
        snprintf(line, sizeof line, "  [skew] point %zu\n", p);
        if (strstr(r.out, line))
            mine += wall[p];
        all += wall[p];
    }
    kc_free(&r);
    double most = mine > all - mine ? mine : all - mine;
    return (most / (all / 2) - 1) * 100;
}

Test(busy, costs_from_a_journal_balance_the_shards)
{
    kc_write("skew.ini", SKEWED);
    kc_result base = kc_run("run skew.ini --plugin-path " TOY_DIR " -q -o base");
    cr_assert_eq(base.code, 0, "%s", base.err);
    kc_free(&base);
    double wall[8];
    walls_of("base/results.json", wall, 8);
    /* The journal alone, as a run cut short leaves it. */
    cr_assert_eq(rename(kc_path("base/results.json"), kc_path("base.json")), 0);
    double model = imbalance("", wall, 8), measured = imbalance("--costs base", wall, 8);
    cr_assert_gt(model, 15.0, "the model cannot see the repeats (imbalance %.1f%%)", model);
    cr_assert_leq(measured, 15.0, "measured costs balance within 15%% (imbalance %.1f%%)",
                  measured);

    kc_result r = kc_run("run skew.ini --plugin-path " TOY_DIR
                         " --dry-run --shard 1/2 --costs base");
    kc_assert_has(r.err, "--costs: 8 of 8 points measured by base");
    kc_assert_has(r.out, "measured cost");
    kc_free(&r);
}

Test(busy, costs_from_elsewhere_are_refused_or_leave_the_model)
{
    kc_write("skew.ini", SKEWED);
    kc_result r = kc_run("run skew.ini --plugin-path " TOY_DIR " --dry-run --shard 0/2 "
                         "--costs nowhere");
    cr_assert_eq(r.code, 2);
    kc_assert_has(r.err, "--costs: 'nowhere' does not exist");
    kc_free(&r);
    cr_assert_eq(mkdir(kc_path("empty"), 0755), 0);
    r = kc_run("run skew.ini --plugin-path " TOY_DIR " --dry-run --shard 0/2 --costs empty");
    cr_assert_eq(r.code, 2);
    kc_assert_has(r.err, "--costs: 'empty' holds no run to take costs from");
    kc_free(&r);
    /* A run of another plan: no point matches, and the model prices all. */
    kc_write("other.ini", "[other]\nplugin = toy\nvariants = good\nn = 8\nruns = 2\n");
    r = kc_run("run other.ini --plugin-path " TOY_DIR " -q -o other");
    cr_assert_eq(r.code, 0, "%s", r.err);
    kc_free(&r);
    r = kc_run("run skew.ini --plugin-path " TOY_DIR " --dry-run --shard 0/2 --costs other");
    cr_assert_eq(r.code, 0, "%s", r.err);
    kc_assert_has(r.err, "0 of 8 points measured by other; none matches this plan");
    kc_free(&r);
}

/* The rows of a results.json in a folder of kc_dir: status and reason of
   each (point, variant). */
static const char *status_of(json_t *root, json_int_t point, const char *variant,
                             const char **reason, json_int_t *pid)
{
    size_t i;
    const json_t *row;
    json_array_foreach(json_object_get(root, "results"), i, row)
    {
        if (json_integer_value(json_object_get(row, "point")) == point &&
            strcmp(json_string_value(json_object_get(row, "variant")), variant) == 0) {
            *reason = json_string_value(json_object_get(row, "reason"));
            *pid = json_integer_value(json_object_get(row, "worker_pid"));
            return json_string_value(json_object_get(row, "status"));
        }
    }
    cr_assert_fail("no row for point %lld, %s", (long long)point, variant);
    return NULL;
}

Test(busy, a_worker_that_dies_beside_a_hint_costs_the_right_rows)
{
    /* Point 1 dies in its setup's host half, point 3 in cpu2's run; each
       ran while a later point was hinted to its worker, so each death is
       first not charged (a host half made ahead could have been the
       cause) and its point runs again alone, in the next worker, where it
       is charged. */
    /* Each run takes 20 ms, so that a hint reaches its worker before the
       point it came with dies (a hint the worker never read cannot have
       been the cause: the supervisor charges such a death at once). */
    kc_write("c.ini", "[global]\nwarmup = 0\nruns = 2\ncpu_threads = 1\n"
                      "[e]\nplugin = pre\nvariants = cpu, cpu2\nrun_us = 20000\n"
                      "n = 100, 200, 300, 400, 500\ncrash = none, host, none, run, none\n"
                      "zip = n, crash\n");
    kc_result r = kc_run("run c.ini --plugin-path " PRE_DIR " -q -o out");
    cr_assert_eq(r.code, 1, "a crashed row fails the run: %s", r.err);
    json_t *root = results_of("out");
    static const char *const want[5][2] = {{"pass", "pass"},
                                           {"crashed", "crashed"},
                                           {"pass", "pass"},
                                           {"pass", "crashed"},
                                           {"pass", "pass"}};
    static const char *const names[2] = {"cpu", "cpu2"};
    const char *why[5][2];
    json_int_t pid[5][2];
    for (int p = 0; p < 5; p++)
        for (int v = 0; v < 2; v++)
            cr_assert_str_eq(status_of(root, p, names[v], &why[p][v], &pid[p][v]), want[p][v],
                             "point %d, %s: %s", p, names[v], why[p][v]);
    kc_assert_has(why[1][0], "before any variant started");
    kc_assert_has(why[3][1], "SIGABRT");
    /* The worker that ran point 0 (and point 2) died first on point 1
       (point 3), uncharged: the rows were charged in the next one. */
    cr_assert_neq(pid[1][0], pid[0][0], "point 1's first death was not charged");
    cr_assert_neq(pid[3][1], pid[2][0], "point 3's first death was not charged");
    json_decref(root);
    kc_free(&r);
}
