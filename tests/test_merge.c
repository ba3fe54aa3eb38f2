/*
 * test_merge.c -- kbench merge (merge.h) on shard folders written by hand:
 * each test writes the results.json documents that `kbench run FILE
 * --shard i/N -o DIR` would write, merges them with kbc_cmd_merge, and
 * looks at the exit code, what was said and what was written.  Also the
 * header reader (kbc_results_read_run) on a document from the JSON
 * reporter.  Links kbench_views only.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "merge_cmd.h"
#include "record_json.h"
#include "report.h"
#include "results_read.h"

#define HASH_A "aaaa1111bbbb2222cccc3333dddd4444eeee5555ffff6666aaaa7777bbbb8888"
#define HASH_B "1234123412341234123412341234123412341234123412341234123412341234"
#define H100 "NVIDIA H100 80GB HBM3"
#define H200 "NVIDIA H200"

static char tmp[256];

static void make_tmp(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/kbench-merge-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

static void remove_tmp(void)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "rm -rf '%s'", tmp), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

TestSuite(merge, .init = make_tmp, .fini = remove_tmp);

/* tmp/name, in a buffer that lives until the test ends. */
static const char *at(const char *name)
{
    static char bufs[64][512];
    static int next;
    char *b = bufs[next++ % 64];
    snprintf(b, sizeof bufs[0], "%s/%s", tmp, name);
    return b;
}

/* The plan of every test: experiment "zeta" (3 points, variants a and b)
   listed before "alpha" (2 points, variant a), so that plan order is not
   the order of the names. */
static json_t *experiment(const char *name, const char *const *variants, size_t nv,
                          int points)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "line", json_integer(1));
    json_object_set_new(o, "description", json_null());
    json_object_set_new(o, "plugin", json_string("toy"));
    json_object_set_new(o, "plugin_file", json_string("/lib/toy.so"));
    json_t *vs = json_array();
    for (size_t i = 0; i < nv; i++)
        json_array_append_new(vs, json_string(variants[i]));
    json_object_set_new(o, "variants", vs);
    json_object_set_new(o, "baseline", json_null());
    json_object_set_new(o, "reference", json_null());
    /* Every field a run writes (docs/results.schema.json, checked on the
       merged documents by the test schema). */
    json_t *m = json_loads("{\"warmup\": 1, \"runs\": 5, \"budget_s\": 10.0, \"noise_pct\": 0.0, "
                           "\"min_runs\": 5, \"max_runs\": 1000, \"min_time_s\": 0.0, "
                           "\"include_copies\": false, \"seed\": 42, \"cpu_threads\": \"auto\", "
                           "\"cache\": \"hot\", \"batch\": \"off\"}",
                           0, NULL);
    cr_assert_not_null(m);
    json_object_set_new(o, "measure", m);
    json_t *params = json_object();
    json_t *vals = json_array();
    for (int i = 0; i < points; i++) {
        char t[16];
        snprintf(t, sizeof t, "%d", 64 << i);
        json_array_append_new(vals, json_string(t));
    }
    json_object_set_new(params, "n", vals);
    json_object_set_new(o, "params", params);
    json_object_set_new(o, "points", json_integer(points));
    return o;
}

/* A shard's results.json with no rows yet: index < 0 writes shard null
   (a run without --shard); hash NULL writes no plan at all. */
static json_t *shard_doc(const char *hash, int index, int count, unsigned jobs, const char *gpu)
{
    json_t *d = json_object();
    json_t *kb = json_object();
    json_object_set_new(kb, "version", json_string("3.0.0"));
    json_object_set_new(kb, "git", json_string("0123456789ab"));
    json_object_set_new(d, "kbench", kb);
    char cmd[256];
    if (index >= 0)
        snprintf(cmd, sizeof cmd, "kbench run conf/x.ini --shard %d/%d -o part-%d", index, count,
                 index);
    else
        snprintf(cmd, sizeof cmd, "kbench run conf/x.ini -o whole");
    json_object_set_new(d, "command", json_string(cmd));
    char started[32];
    snprintf(started, sizeof started, "2026-01-0%dT10:00:00Z", index >= 0 ? index + 1 : 1);
    json_object_set_new(d, "started", json_string(started));
    /* The machine as a run on that GPU writes it. */
    json_t *m = json_loads("{\"has_gpu\": true, \"reason\": null, \"gpu\": null, \"cc\": null, "
                           "\"device\": 0, \"sm_count\": 132, "
                           "\"clocks_khz\": {\"sm\": 1980000, \"memory\": 2619000}, "
                           "\"memory_bytes\": 85000000000, \"l2_bytes\": 52428800, "
                           "\"driver_version\": 13000, \"driver_version_string\": \"13.0\", "
                           "\"runtime_version\": 13000, \"runtime_version_string\": \"13.0\", "
                           "\"host\": null, \"cpu_threads\": 0, \"copy_gbps\": null, "
                           "\"ceilings\": {\"read_gbps\": null, \"write_gbps\": null, "
                           "\"copy_gbps\": null, \"fp32_gflops\": null, \"tf32_gflops\": null, "
                           "\"bf16_gflops\": null}, "
                           "\"nvml\": {\"available\": false, \"reason\": \"off\", "
                           "\"sm_max_mhz\": null, \"mem_max_mhz\": null, \"at_start\": null}}",
                           0, NULL);
    cr_assert_not_null(m);
    /* gpu NULL: a machine without a GPU, as such a run writes it. */
    json_object_set_new(m, "has_gpu", json_boolean(gpu != NULL));
    json_object_set_new(m, "reason", gpu ? json_null() : json_string("no CUDA device"));
    json_object_set_new(m, "gpu", gpu ? json_string(gpu) : json_null());
    json_object_set_new(m, "cc", gpu ? json_string("9.0") : json_null());
    json_object_set_new(m, "host", json_string("node"));
    json_object_set_new(m, "cpu_threads", json_integer(16));
    json_object_set_new(d, "machine", m);
    json_t *config = json_object();
    json_object_set_new(config, "file", json_string("conf/x.ini"));
    static const char *const ab[] = {"a", "b"}, *const a[] = {"a"};
    json_t *exps = json_array();
    json_array_append_new(exps, experiment("zeta", ab, 2, 3));
    json_array_append_new(exps, experiment("alpha", a, 1, 2));
    json_object_set_new(config, "experiments", exps);
    json_object_set_new(d, "config", config);
    if (hash) {
        json_t *plan = json_object();
        json_object_set_new(plan, "hash", json_string(hash));
        if (index >= 0) {
            json_t *sh = json_object();
            json_object_set_new(sh, "index", json_integer(index));
            json_object_set_new(sh, "count", json_integer(count));
            json_object_set_new(plan, "shard", sh);
        } else {
            json_object_set_new(plan, "shard", json_null());
        }
        json_object_set_new(plan, "jobs", json_integer(jobs));
        json_object_set_new(d, "plan", plan);
    }
    json_object_set_new(d, "provenance", json_loads("{\"plugins\": [], \"cccl_version\": null, "
                                                    "\"cublas_version\": null}", 0, NULL));
    json_object_set_new(d, "results", json_array());
    json_object_set_new(d, "exit_code", json_integer(0));
    char finished[32];
    snprintf(finished, sizeof finished, "2026-01-0%dT11:00:00Z", index >= 0 ? index + 1 : 1);
    json_object_set_new(d, "finished", json_string(finished));
    return d;
}

/* Appends the row of experiment exp, point p, variant v (index vi). */
static void add_row(json_t *doc, const char *exp, unsigned p, unsigned vi, kbc_outcome outcome)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.experiment, sizeof r.experiment, "%s", exp);
    snprintf(r.plugin, sizeof r.plugin, "toy");
    snprintf(r.variant, sizeof r.variant, "%s", vi == 0 ? "a" : "b");
    r.variant_index = vi;
    r.point = p;
    r.n_points = strcmp(exp, "zeta") == 0 ? 3 : 2;
    r.n_params = 1;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = 64u << p;
    snprintf(r.params[0].text, sizeof r.params[0].text, "%u", 64u << p);
    r.params[0].swept = 1;
    r.outcome = outcome;
    r.time.n = 3;
    r.time.median = 1e-3 * (p + 1);
    double s[3] = {r.time.median, r.time.median, r.time.median};
    kbc_record_set_samples(&r, s, 3);
    json_array_append_new(json_object_get(doc, "results"), kbc_record_to_json(&r));
    kbc_record_free(&r);
}

/* Writes doc as tmp/name/results.json and drops it. */
static const char *save(json_t *doc, const char *name)
{
    const char *dir = at(name);
    cr_assert_eq(mkdir(dir, 0777), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/results.json", dir);
    cr_assert_eq(json_dump_file(doc, path, JSON_INDENT(2)), 0);
    json_decref(doc);
    return dir;
}

/* The usual two shards of the plan, 0/2 and 1/2, each with its rows in
   an order of its own. */
static const char *shard0(const char *gpu)
{
    json_t *d = shard_doc(HASH_A, 0, 2, 3, gpu);
    add_row(d, "alpha", 1, 0, KBC_PASS);
    add_row(d, "zeta", 2, 1, KBC_PASS);
    add_row(d, "zeta", 0, 1, KBC_PASS);
    add_row(d, "zeta", 0, 0, KBC_PASS);
    add_row(d, "zeta", 2, 0, KBC_PASS);
    return save(d, "part-0");
}

static const char *shard1(const char *gpu)
{
    json_t *d = shard_doc(HASH_A, 1, 2, 2, gpu);
    add_row(d, "alpha", 0, 0, KBC_PASS);
    add_row(d, "zeta", 1, 1, KBC_PASS);
    add_row(d, "zeta", 1, 0, KBC_PASS);
    return save(d, "part-1");
}

/* What a merge said and returned. */
typedef struct said {
    int code;
    char *out, *err;
} said;

static said merge(const char *const *in, size_t n, int allow_mixed)
{
    said s = {0};
    size_t lo = 0, le = 0;
    FILE *out = open_memstream(&s.out, &lo), *err = open_memstream(&s.err, &le);
    cr_assert(out && err);
    s.code = kbc_cmd_merge(in, n, at("out"), allow_mixed, out, err);
    fclose(out);
    fclose(err);
    return s;
}

static void said_free(said *s)
{
    free(s->out);
    free(s->err);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A refused merge: exit 2, the sentence, and nothing written. */
static void assert_refused(said *s, const char *sentence)
{
    cr_assert_eq(s->code, KBC_EXIT_USAGE, "exit %d; said: %s", s->code, s->err);
    cr_assert_not_null(strstr(s->err, sentence), "expected \"%s\" in: %s", sentence, s->err);
    cr_assert_not(exists(at("out/results.json")));
    cr_assert_str_eq(s->out, "");
}

Test(merge, two_shards_merge_into_plan_order)
{
    const char *in[] = {shard1(H100), shard0(H100)};
    said s = merge(in, 2, 0);
    cr_assert_eq(s.code, KBC_EXIT_OK, "said: %s", s.err);
    kbc_run_doc doc;
    kbc_diag d;
    cr_assert_eq(kbc_results_read_run(at("out/results.json"), &doc, &d), 0, "%s", d.msg);
    /* zeta (listed first) before alpha, then point, then variant. */
    static const struct {
        const char *exp;
        unsigned point, variant;
    } want[] = {{"zeta", 0, 0}, {"zeta", 0, 1}, {"zeta", 1, 0}, {"zeta", 1, 1},
                {"zeta", 2, 0}, {"zeta", 2, 1}, {"alpha", 0, 0}, {"alpha", 1, 0}};
    cr_assert_eq(doc.n_recs, 8);
    for (size_t i = 0; i < 8; i++) {
        cr_assert_str_eq(doc.recs[i].experiment, want[i].exp, "row %zu", i);
        cr_assert_eq(doc.recs[i].point, want[i].point, "row %zu", i);
        cr_assert_eq(doc.recs[i].variant_index, want[i].variant, "row %zu", i);
        cr_assert_eq(doc.recs[i].n_samples, 3, "row %zu keeps its samples", i);
    }
    kbc_run_doc_free(&doc);
    said_free(&s);
}

Test(merge, the_merged_plan_is_whole_and_names_its_parts)
{
    const char *in[] = {shard0(H100), shard1(H100)};
    said s = merge(in, 2, 0);
    cr_assert_eq(s.code, KBC_EXIT_OK, "said: %s", s.err);
    json_error_t e;
    json_t *doc = json_load_file(at("out/results.json"), 0, &e);
    cr_assert_not_null(doc, "%s", e.text);
    json_t *plan = json_object_get(doc, "plan");
    cr_assert_str_eq(json_string_value(json_object_get(plan, "hash")), HASH_A);
    cr_assert(json_is_null(json_object_get(plan, "shard")));
    cr_assert_eq(json_integer_value(json_object_get(plan, "jobs")), 5);
    json_t *from = json_object_get(doc, "merged_from");
    cr_assert_eq(json_array_size(from), 2);
    cr_assert_not_null(strstr(json_string_value(json_array_get(from, 1)), "part-1/results.json"));
    cr_assert_eq(json_integer_value(json_object_get(doc, "exit_code")), 0);
    /* The earliest start, the latest finish; the rest from the first. */
    cr_assert_str_eq(json_string_value(json_object_get(doc, "started")), "2026-01-01T10:00:00Z");
    cr_assert_str_eq(json_string_value(json_object_get(doc, "finished")),
                     "2026-01-02T11:00:00Z");
    cr_assert_str_eq(json_string_value(json_object_get(doc, "command")),
                     "kbench run conf/x.ini --shard 0/2 -o part-0");
    json_decref(doc);
    char want[600];
    snprintf(want, sizeof want, "merge: 2 parts, 8 rows, into %s\n", at("out"));
    cr_assert_str_eq(s.out, want);
    said_free(&s);
}

Test(merge, the_csv_and_markdown_reports_hold_every_row)
{
    const char *in[] = {shard0(H100), shard1(H100)};
    said s = merge(in, 2, 0);
    cr_assert_eq(s.code, KBC_EXIT_OK, "said: %s", s.err);
    FILE *f = fopen(at("out/results.csv"), "r");
    cr_assert_not_null(f);
    char line[8192];
    int lines = 0;
    while (fgets(line, sizeof line, f))
        lines++;
    fclose(f);
    cr_assert_eq(lines, 1 + 8, "a header and one line a row");
    f = fopen(at("out/results.md"), "r");
    cr_assert_not_null(f);
    int headings = 0, summary = 0;
    while (fgets(line, sizeof line, f)) {
        headings += strncmp(line, "### zeta  point ", 16) == 0 ||
                    strncmp(line, "### alpha  point ", 17) == 0;
        summary += strstr(line, "summary: 8 pass") != NULL;
    }
    fclose(f);
    cr_assert_eq(headings, 5, "one heading a point: 3 of zeta, 2 of alpha");
    cr_assert_eq(summary, 1);
    said_free(&s);
}

Test(merge, a_failed_row_makes_the_exit_code_one)
{
    json_t *d = shard_doc(HASH_A, 0, 2, 3, H100);
    add_row(d, "alpha", 1, 0, KBC_PASS);
    add_row(d, "zeta", 0, 0, KBC_PASS);
    add_row(d, "zeta", 0, 1, KBC_TIMEOUT);
    add_row(d, "zeta", 2, 0, KBC_PASS);
    add_row(d, "zeta", 2, 1, KBC_PASS);
    const char *in[] = {save(d, "part-0"), shard1(H100)};
    said s = merge(in, 2, 0);
    cr_assert_eq(s.code, KBC_EXIT_FAILED, "said: %s", s.err);
    json_t *doc = json_load_file(at("out/results.json"), 0, NULL);
    cr_assert_eq(json_integer_value(json_object_get(doc, "exit_code")), 1);
    json_decref(doc);
    said_free(&s);
}

Test(merge, a_results_file_may_be_given_instead_of_its_folder)
{
    shard0(H100);
    const char *in[] = {at("part-0/results.json"), shard1(H100)};
    said s = merge(in, 2, 0);
    cr_assert_eq(s.code, KBC_EXIT_OK, "said: %s", s.err);
    said_free(&s);
}

Test(merge, a_missing_shard_is_named_with_the_command_that_reruns_it)
{
    json_t *d = shard_doc(HASH_A, 0, 3, 3, H100);
    add_row(d, "zeta", 0, 0, KBC_PASS);
    add_row(d, "zeta", 1, 0, KBC_PASS);
    add_row(d, "zeta", 2, 0, KBC_PASS);
    const char *p0 = save(d, "part-0");
    d = shard_doc(HASH_A, 1, 3, 1, H100);
    add_row(d, "alpha", 0, 0, KBC_PASS);
    const char *in[] = {p0, save(d, "part-1")};
    said s = merge(in, 2, 0);
    assert_refused(&s, "shard 2 of 3 is missing; rerun it with: "
                       "kbench run conf/x.ini --shard 2/3 -o part-2\n");
    cr_assert_null(strstr(s.err, "shard 0 of 3 is missing"));
    cr_assert_null(strstr(s.err, "shard 1 of 3 is missing"));
    said_free(&s);
}

Test(merge, a_shard_given_twice_is_refused_naming_both_folders)
{
    const char *p1 = shard1(H100);
    json_t *d = shard_doc(HASH_A, 1, 2, 2, H100);
    add_row(d, "alpha", 0, 0, KBC_PASS);
    add_row(d, "zeta", 1, 1, KBC_PASS);
    add_row(d, "zeta", 1, 0, KBC_PASS);
    const char *again = save(d, "part-1-again");
    const char *in[] = {shard0(H100), p1, again};
    said s = merge(in, 3, 0);
    char want[1200];
    snprintf(want, sizeof want, "%s and %s are both shard 1 of 2", p1, again);
    assert_refused(&s, want);
    said_free(&s);
}

Test(merge, a_folder_given_twice_is_refused)
{
    const char *p1 = shard1(H100);
    const char *in[] = {shard0(H100), p1, p1};
    said s = merge(in, 3, 0);
    char want[600];
    snprintf(want, sizeof want, "%s is given twice; give each shard once.", p1);
    assert_refused(&s, want);
    said_free(&s);
}

Test(merge, shards_of_two_plans_are_refused)
{
    json_t *d = shard_doc(HASH_B, 1, 2, 2, H100);
    add_row(d, "alpha", 0, 0, KBC_PASS);
    const char *other = save(d, "other");
    const char *p0 = shard0(H100);
    const char *in[] = {p0, other};
    said s = merge(in, 2, 0);
    char want[1200];
    snprintf(want, sizeof want, "%s belongs to another plan (hash 123412341234... against "
                                "aaaa1111bbbb... of %s)", other, p0);
    assert_refused(&s, want);
    said_free(&s);
}

Test(merge, different_shard_counts_are_refused)
{
    json_t *d = shard_doc(HASH_A, 1, 3, 2, H100);
    add_row(d, "alpha", 0, 0, KBC_PASS);
    const char *odd = save(d, "odd");
    const char *in[] = {shard0(H100), odd};
    said s = merge(in, 2, 0);
    assert_refused(&s, "is shard 1/3 but");
    said_free(&s);
}

Test(merge, a_row_in_two_parts_is_refused)
{
    json_t *d = shard_doc(HASH_A, 1, 2, 2, H100);
    add_row(d, "alpha", 0, 0, KBC_PASS);
    add_row(d, "zeta", 1, 0, KBC_PASS);
    add_row(d, "zeta", 2, 1, KBC_PASS); /* shard 0 has it too */
    const char *p1 = save(d, "part-1");
    const char *p0 = shard0(H100);
    const char *in[] = {p0, p1};
    said s = merge(in, 2, 0);
    char want[1200];
    snprintf(want, sizeof want, "the row toy/zeta/n=256/b is in both %s and %s.", p0, p1);
    assert_refused(&s, want);
    said_free(&s);
}

Test(merge, shards_from_two_gpu_models_are_refused)
{
    const char *p0 = shard0(H100), *p1 = shard1(H200);
    const char *in[] = {p0, p1};
    said s = merge(in, 2, 0);
    char want[1200];
    snprintf(want, sizeof want, "%s ran on " H200 " but %s on " H100, p1, p0);
    assert_refused(&s, want);
    cr_assert_not_null(strstr(s.err, "--allow-mixed"));
    said_free(&s);
}

/* A shard run where no GPU was found (a node whose driver failed, a job
   without its GPU) is a different machine from one with an H200: its
   CUDA rows are skips, not the H200's timings.  --allow-mixed, which joins
   GPU models, joined them with exit 0. */
Test(merge, a_shard_without_a_gpu_is_refused_even_with_allow_mixed)
{
    const char *p0 = shard0(NULL), *p1 = shard1(H200);
    const char *in[] = {p0, p1};
    for (int allow_mixed = 0; allow_mixed <= 1; allow_mixed++) {
        said s = merge(in, 2, allow_mixed);
        char want[1200];
        snprintf(want, sizeof want, "%s ran on " H200 " but %s on no GPU; a part without a GPU "
                                    "skipped the CUDA rows the other ran",
                 p1, p0);
        assert_refused(&s, want);
        said_free(&s);
    }
}

Test(merge, allow_mixed_merges_shards_from_two_gpu_models)
{
    const char *in[] = {shard0(H100), shard1(H200)};
    said s = merge(in, 2, 1);
    cr_assert_eq(s.code, KBC_EXIT_OK, "said: %s", s.err);
    cr_assert_str_eq(s.err, "");
    cr_assert(exists(at("out/results.json")));
    said_free(&s);
}

Test(merge, an_unfinished_shard_is_refused_with_the_command_that_finishes_it)
{
    /* Every point has its rows, but the run never wrote its end. */
    json_t *d = shard_doc(HASH_A, 1, 2, 2, H100);
    add_row(d, "alpha", 0, 0, KBC_PASS);
    add_row(d, "zeta", 1, 1, KBC_PASS);
    add_row(d, "zeta", 1, 0, KBC_PASS);
    json_object_set_new(d, "finished", json_null());
    json_object_set_new(d, "exit_code", json_null());
    const char *p1 = save(d, "part-1");
    const char *in[] = {shard0(H100), p1};
    said s = merge(in, 2, 0);
    char want[1200];
    snprintf(want, sizeof want,
             "%s ended early (its run never finished; 2 of its 2 points have rows); finish "
             "it in that folder with: kbench run conf/x.ini --shard 1/2 -o %s --resume\n",
             p1, p1);
    assert_refused(&s, want);
    said_free(&s);
}

Test(merge, a_finished_shard_with_fewer_points_than_its_jobs_is_refused)
{
    json_t *d = shard_doc(HASH_A, 1, 2, 2, H100);
    add_row(d, "zeta", 1, 1, KBC_PASS);
    add_row(d, "zeta", 1, 0, KBC_PASS);
    const char *p1 = save(d, "part-1");
    const char *in[] = {shard0(H100), p1};
    said s = merge(in, 2, 0);
    char want[1200];
    snprintf(want, sizeof want, "%s ended early (1 of its 2 points have rows)", p1);
    assert_refused(&s, want);
    said_free(&s);
}

/* Two complete shards of one plan that left zeta's point 2 to neither
   (each ran the points its own split gave it). */
Test(merge, a_point_no_shard_ran_is_refused_naming_it)
{
    json_t *d0 = shard_doc(HASH_A, 0, 2, 2, H100);
    add_row(d0, "zeta", 0, 0, KBC_PASS);
    add_row(d0, "zeta", 0, 1, KBC_PASS);
    add_row(d0, "alpha", 1, 0, KBC_PASS);
    const char *p0 = save(d0, "part-0");
    const char *in[] = {p0, shard1(H100)};
    said s = merge(in, 2, 0);
    assert_refused(&s, "point 3/3 of [zeta] has rows in no part");
    cr_assert_null(strstr(s.err, "point 2/3"), "said: %s", s.err);
    said_free(&s);
}

Test(merge, a_whole_run_among_shards_is_refused)
{
    json_t *d = shard_doc(HASH_A, -1, 0, 5, H100);
    add_row(d, "alpha", 0, 0, KBC_PASS);
    const char *whole = save(d, "whole");
    const char *in[] = {shard0(H100), whole};
    said s = merge(in, 2, 0);
    char want[600];
    snprintf(want, sizeof want, "%s is not a shard (run with --shard i/N).", whole);
    assert_refused(&s, want);
    said_free(&s);
}

Test(merge, a_whole_run_alone_merges_to_itself)
{
    json_t *d = shard_doc(HASH_A, -1, 0, 5, H100);
    for (unsigned p = 0; p < 3; p++)
        add_row(d, "zeta", p, 0, KBC_PASS);
    for (unsigned p = 0; p < 2; p++)
        add_row(d, "alpha", p, 0, KBC_PASS);
    const char *in[] = {save(d, "whole")};
    said s = merge(in, 1, 0);
    cr_assert_eq(s.code, KBC_EXIT_OK, "said: %s", s.err);
    cr_assert(exists(at("out/results.json")));
    said_free(&s);
}

Test(merge, a_file_without_a_plan_is_refused)
{
    json_t *d = shard_doc(NULL, 1, 2, 2, H100);
    add_row(d, "alpha", 0, 0, KBC_PASS);
    const char *old = save(d, "old");
    const char *in[] = {shard0(H100), old};
    said s = merge(in, 2, 0);
    char want[600];
    snprintf(want, sizeof want, "%s has no \"plan\"", old);
    assert_refused(&s, want);
    said_free(&s);
}

Test(merge, a_folder_without_results_is_refused)
{
    const char *empty = at("empty");
    cr_assert_eq(mkdir(empty, 0777), 0);
    const char *in[] = {shard0(H100), empty};
    said s = merge(in, 2, 0);
    char want[600];
    snprintf(want, sizeof want, "the folder %s holds no results.json", empty);
    assert_refused(&s, want);
    said_free(&s);
}

Test(merge, writing_over_a_part_is_refused)
{
    const char *p0 = shard0(H100);
    const char *in[] = {p0, shard1(H100)};
    said s = {0};
    size_t lo = 0, le = 0;
    FILE *out = open_memstream(&s.out, &lo), *err = open_memstream(&s.err, &le);
    s.code = kbc_cmd_merge(in, 2, p0, 0, out, err);
    fclose(out);
    fclose(err);
    cr_assert_eq(s.code, KBC_EXIT_USAGE, "said: %s", s.err);
    cr_assert_not_null(strstr(s.err, "is one of the parts"), "said: %s", s.err);
    /* The part is as it was: five rows, still shard 0 of 2. */
    kbc_run_doc doc;
    kbc_diag d;
    cr_assert_eq(kbc_results_read_run(at("part-0/results.json"), &doc, &d), 0, "%s", d.msg);
    cr_assert_eq(doc.n_recs, 5);
    cr_assert_eq(doc.shard_count, 2);
    kbc_run_doc_free(&doc);
    said_free(&s);
}

Test(merge, an_output_that_cannot_be_written_exits_three)
{
    const char *in[] = {shard0(H100), shard1(H100)};
    FILE *f = fopen(at("file"), "w");
    cr_assert_not_null(f);
    fclose(f);
    said s = {0};
    size_t lo = 0, le = 0;
    FILE *out = open_memstream(&s.out, &lo), *err = open_memstream(&s.err, &le);
    s.code = kbc_cmd_merge(in, 2, at("file/out"), 0, out, err);
    fclose(out);
    fclose(err);
    cr_assert_eq(s.code, KBC_EXIT_SYSTEM, "said: %s", s.err);
    cr_assert_not_null(strstr(s.err, "cannot create the folder"), "said: %s", s.err);
    said_free(&s);
}

/* Appends the row of zeta's variant a at point p, with work (4 bytes an
   element) and median t. */
static void add_timed_row(json_t *doc, unsigned p, double t)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.experiment, sizeof r.experiment, "zeta");
    snprintf(r.plugin, sizeof r.plugin, "toy");
    snprintf(r.variant, sizeof r.variant, "a");
    r.point = p;
    r.n_points = 3;
    r.n_params = 1;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = 64u << p;
    snprintf(r.params[0].text, sizeof r.params[0].text, "%u", 64u << p);
    r.params[0].swept = 1;
    r.outcome = KBC_PASS;
    r.work.bytes_read = 4 * (64u << p);
    double x[3] = {t, t, t};
    kbc_record_set_samples(&r, x, 3);
    kbc_stats_compute(x, 3, &r.time);
    json_array_append_new(json_object_get(doc, "results"), kbc_record_to_json(&r));
    kbc_record_free(&r);
}

Test(merge, a_suspect_row_seen_only_across_the_shards_is_named_in_every_output)
{
    /* zeta's a: 62 us at n = 64 (shard 0), 25 us at n = 128 (shard 1),
       300 us at n = 256 (shard 0): n = 64 is suspect against n = 128,
       which neither shard holds alone. */
    json_t *d0 = shard_doc(HASH_A, 0, 2, 3, H100);
    add_row(d0, "alpha", 1, 0, KBC_PASS);
    add_timed_row(d0, 0, 62e-6);
    add_row(d0, "zeta", 0, 1, KBC_PASS);
    add_timed_row(d0, 2, 300e-6);
    add_row(d0, "zeta", 2, 1, KBC_PASS);
    json_t *d1 = shard_doc(HASH_A, 1, 2, 2, H100);
    add_row(d1, "alpha", 0, 0, KBC_PASS);
    add_timed_row(d1, 1, 25e-6);
    add_row(d1, "zeta", 1, 1, KBC_PASS);
    const char *in[] = {save(d0, "part-0"), save(d1, "part-1")};
    said s = merge(in, 2, 0);
    cr_assert_eq(s.code, KBC_EXIT_OK, "said: %s", s.err);
    json_t *doc = json_load_file(at("out/results.json"), 0, NULL);
    cr_assert_not_null(doc);
    json_t *sus = json_object_get(doc, "suspects");
    cr_assert_eq(json_array_size(sus), 1, "%s", json_dumps(sus, 0));
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(sus, 0), "key")),
                     "toy/zeta/n=64/a");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(sus, 0), "than_key")),
                     "toy/zeta/n=128/a");
    json_decref(doc);
    FILE *f = fopen(at("out/results.md"), "r");
    cr_assert_not_null(f);
    char text[1 << 16];
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    cr_assert_not_null(strstr(text, "suspect row (more than twice as slow as its variant with "
                                    "more work): toy/zeta/n=64/a: 62 us"),
                       "%s", text);
    said_free(&s);
}

/* The header reader, on a document from the JSON reporter itself. */
Test(merge, the_header_reads_back_as_the_reporter_was_given_it)
{
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.has_gpu = 1;
    snprintf(m.name, sizeof m.name, H200);
    m.cc_major = 9;
    m.cc_minor = 0;
    m.sm_count = 132;
    m.clock_khz = 1980000;
    m.mem_bytes = 150ull << 30;
    m.driver_version = 13000;
    m.runtime_version = 12080;
    snprintf(m.host, sizeof m.host, "node7");
    m.cpu_threads = 32;
    char *variants[] = {"a", "b"};
    char *names[] = {"n"};
    char *v0[] = {"64", "128"};
    char **values[] = {v0};
    size_t n_values[] = {2};
    kbc_exp_info x = {.name = "zeta", .line = 3, .plugin = "toy", .variants = variants,
                      .n_variants = 2, .baseline = "a", .warmup = 2, .runs = 7,
                      .budget_s = 1.5, .batch = 1, .cache_cold = 1, .seed = 42, .n_params = 1,
                      .param_names = names, .param_values = values, .n_values = n_values,
                      .n_points = 2};
    kbc_build_info b = {.name = "toy", .file = "/lib/toy.so", .sha256 = "abc"};
    kbc_run_info info = {.config_file = "conf/x.ini", .machine = &m,
                         .ceilings = {.read_gbps = 4000, .copy_gbps = 3500},
                         .flops = {.fp32_gflops = 60000}, .clocks_known = 0,
                         .clocks_why = "no NVML", .command_line = "kbench run conf/x.ini",
                         .exps = &x, .n_exps = 1, .plan_hash = HASH_A, .shard_index = 1,
                         .shard_count = 4, .jobs = 9, .builds = &b, .n_builds = 1,
                         .cccl_version = 3001};
    const char *path = at("r.json");
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    cr_assert_eq(s.end(s.ctx, 1), 0);
    s.destroy(s.ctx);

    kbc_run_doc doc;
    cr_assert_eq(kbc_results_read_run(path, &doc, &d), 0, "%s", d.msg);
    const kbc_run_info *in = &doc.info;
    cr_assert_str_eq(in->config_file, "conf/x.ini");
    cr_assert_str_eq(in->command_line, "kbench run conf/x.ini");
    cr_assert_not_null(in->machine);
    cr_assert_str_eq(in->machine->name, H200);
    cr_assert_eq(in->machine->cc_major, 9);
    cr_assert_eq(in->machine->sm_count, 132);
    cr_assert_eq(in->machine->clock_khz, 1980000);
    cr_assert_eq(in->machine->mem_bytes, 150ull << 30);
    cr_assert_eq(in->machine->runtime_version, 12080);
    cr_assert_str_eq(in->machine->host, "node7");
    cr_assert_eq(in->ceilings.read_gbps, 4000);
    cr_assert_eq(in->ceilings.write_gbps, 0);
    cr_assert_eq(in->flops.fp32_gflops, 60000);
    cr_assert_eq(in->clocks_known, 0);
    cr_assert_str_eq(in->clocks_why, "no NVML");
    cr_assert_eq(in->n_exps, 1);
    const kbc_exp_info *e = &in->exps[0];
    cr_assert_str_eq(e->name, "zeta");
    cr_assert_eq(e->line, 3);
    cr_assert_eq(e->n_variants, 2);
    cr_assert_str_eq(e->variants[1], "b");
    cr_assert_str_eq(e->baseline, "a");
    cr_assert_null(e->reference);
    cr_assert_eq(e->runs, 7);
    cr_assert_eq(e->budget_s, 1.5);
    cr_assert_eq(e->batch, 1);
    cr_assert_eq(e->cache_cold, 1);
    cr_assert_eq(e->seed, 42);
    cr_assert_eq(e->n_params, 1);
    cr_assert_str_eq(e->param_names[0], "n");
    cr_assert_eq(e->n_values[0], 2);
    cr_assert_str_eq(e->param_values[0][1], "128");
    cr_assert_eq(e->n_points, 2);
    cr_assert_str_eq(in->plan_hash, HASH_A);
    cr_assert_eq(in->shard_index, 1);
    cr_assert_eq(in->shard_count, 4);
    cr_assert_eq(in->jobs, 9);
    cr_assert_eq(in->n_builds, 1);
    cr_assert_str_eq(in->builds[0].sha256, "abc");
    cr_assert_eq(in->cccl_version, 3001);
    cr_assert_eq(doc.exit_code, 1);
    cr_assert_eq(doc.finished, 1);
    cr_assert_eq(doc.n_recs, 0);
    kbc_run_doc_free(&doc);
}
