/*
 * test_suspect.c -- a row whose median is more than twice that of the same
 * variant at a point with more work is named (suspect.c), and only then:
 * not a smaller slowdown, not another variant, not a point with the same
 * work, not a row that did not pass; found once by the fan-out to the
 * outputs (fanout.h), the table, results.md and results.json say it, the
 * results reader reads it back and the HTML report lists it.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fanout.h"
#include "report.h"
#include "results_read.h"
#include "suspect.h"

#define KBENCH KBENCH_BINARY_DIR "/kbench"

/* A passed row of reduce/sweep at n items of 4 bytes, taking `median` s. */
static kbc_record row(const char *variant, uint64_t n, double median)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.plugin, sizeof r.plugin, "reduce");
    snprintf(r.experiment, sizeof r.experiment, "sweep");
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    r.n_params = 1;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = n;
    snprintf(r.params[0].text, sizeof r.params[0].text, "%llu", (unsigned long long)n);
    r.params[0].swept = 1;
    r.outcome = KBC_PASS;
    r.backend = KB_BACKEND_CUDA;
    r.work.bytes_read = 4 * n;
    r.work.items = n;
    r.time.median = median;
    return r;
}

static size_t count(kbc_record *rows, size_t n, const kbc_suspect **out)
{
    static kbc_suspects *s;
    kbc_suspects_free(s);
    s = kbc_suspects_new();
    for (size_t i = 0; i < n; i++)
        kbc_suspects_add(s, &rows[i]);
    size_t k;
    *out = kbc_suspects_list(s, &k);
    return k;
}

Test(suspect, a_small_point_slower_than_a_larger_one_is_named)
{
    kbc_record rows[] = {row("cub", 3000017, 62e-6), row("cub", 1 << 24, 25e-6),
                         row("cub", 1 << 20, 2e-6)};
    const kbc_suspect *s;
    cr_assert_eq(count(rows, 3, &s), 1);
    cr_assert(strstr(s[0].key, "n=3000017") != NULL, "%s", s[0].key);
    cr_assert(strstr(s[0].than_key, "n=16777216") != NULL, "%s", s[0].than_key);
    cr_assert_gt(s[0].work_ratio, 5.5);
    cr_assert_lt(s[0].work_ratio, 5.7);
}

/* A GPU row's cause goes away when its point runs again; a CPU variant's at
   a small point (starting its threads, the scheduler) does not, and the
   advice says so (docs/output.md, "Suspect rows"). */
Test(suspect, the_advice_for_a_cpu_row_is_not_to_rerun_its_point)
{
    kbc_record rows[] = {row("cpu-parallel", 1000, 4e-3), row("cpu-parallel", 1 << 20, 1e-3)};
    rows[0].backend = rows[1].backend = KB_BACKEND_CPU;
    const kbc_suspect *s;
    cr_assert_eq(count(rows, 2, &s), 1);
    cr_assert(s[0].cpu);
    char t[2048];
    kbc_suspect_text(&s[0], t, sizeof t);
    cr_assert(strstr(t, "rerun its point") == NULL, "%s", t);
    cr_assert(strstr(t, "; a CPU variant's time there is mostly starting its threads and the "
                        "scheduler's slices, which a rerun meets again: compare it on an idle "
                        "host, with cpu_threads = 1, or where the work outweighs the start-up") !=
                  NULL,
              "%s", t);
    rows[0].backend = rows[1].backend = KB_BACKEND_CUDA;
    cr_assert_eq(count(rows, 2, &s), 1);
    kbc_suspect_text(&s[0], t, sizeof t);
    cr_assert(strstr(t, "; rerun its point") != NULL, "%s", t);
}

Test(suspect, a_slowdown_below_twice_is_not_named)
{
    kbc_record rows[] = {row("cub", 3000017, 45e-6), row("cub", 1 << 24, 25e-6)};
    const kbc_suspect *s;
    cr_assert_eq(count(rows, 2, &s), 0);
}

Test(suspect, a_row_under_a_microsecond_is_not_named)
{
    kbc_record rows[] = {row("cpu", 1, 110e-9), row("cpu", 5, 30e-9)};
    const kbc_suspect *s;
    cr_assert_eq(count(rows, 2, &s), 0);
}

Test(suspect, another_variant_is_no_neighbour)
{
    kbc_record rows[] = {row("cub", 3000017, 62e-6), row("onepass", 1 << 24, 25e-6)};
    const kbc_suspect *s;
    cr_assert_eq(count(rows, 2, &s), 0);
}

Test(suspect, a_point_that_differs_in_more_than_its_size_is_no_neighbour)
{
    /* block = 32 against block = 256: a slower kernel, not a bad row. */
    kbc_record rows[] = {row("cub", 16777215, 123e-6), row("cub", 16777216, 36e-6)};
    rows[0].n_params = rows[1].n_params = 2;
    for (int i = 0; i < 2; i++) {
        snprintf(rows[i].params[1].name, sizeof rows[i].params[1].name, "block");
        rows[i].params[1].type = KB_PARAM_INT;
    }
    snprintf(rows[0].params[1].text, sizeof rows[0].params[1].text, "32");
    snprintf(rows[1].params[1].text, sizeof rows[1].params[1].text, "256");
    const kbc_suspect *s;
    cr_assert_eq(count(rows, 2, &s), 0);
    snprintf(rows[0].params[1].text, sizeof rows[0].params[1].text, "256");
    cr_assert_eq(count(rows, 2, &s), 1);
}

Test(suspect, a_point_with_the_same_work_is_no_neighbour)
{
    /* Two distributions of the same size: either may be faster. */
    kbc_record rows[] = {row("cub", 1 << 24, 62e-6), row("cub", 1 << 24, 25e-6)};
    const kbc_suspect *s;
    cr_assert_eq(count(rows, 2, &s), 0);
}

Test(suspect, a_row_that_did_not_pass_takes_no_part)
{
    kbc_record rows[] = {row("cub", 3000017, 62e-6), row("cub", 1 << 24, 25e-6)};
    rows[1].outcome = KBC_FAIL;
    const kbc_suspect *s;
    cr_assert_eq(count(rows, 2, &s), 0);
}

/* The run's header as the sinks need it: a machine and nothing else. */
static kbc_run_info info(void)
{
    static kbc_machine m;
    snprintf(m.host, sizeof m.host, "host");
    kbc_run_info i = {0};
    i.machine = &m;
    return i;
}

/* Feeds the two rows of a suspect (n = 3000017 at 62 us, slower than
   n = 2^24 at 25 us) through a fan-out to sinks[0..n). */
static void feed(kbc_sink *sinks, size_t n)
{
    kbc_run_info ri = info();
    kbc_record a = row("cub", 3000017, 62e-6), b = row("cub", 1 << 24, 25e-6);
    b.point = 1;
    kbc_fanout f;
    kbc_fanout_init(&f, sinks, n, stderr, "kbench: ");
    kbc_fanout_begin(&f, &ri);
    kbc_fanout_point(&f, &a, 1);
    kbc_fanout_point(&f, &b, 1);
    cr_assert_eq(kbc_fanout_end(&f, 0), 0);
    kbc_fanout_free(&f);
}

#define SUSPECT_LINE                                                                           \
    "suspect row (more than twice as slow as its variant with more work): "                    \
    "reduce/sweep/n=3000017/cub: 62 us, more than 2x the 25 us"

Test(suspect, the_table_names_the_row_at_the_end)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    kbc_sink sink;
    cr_assert_eq(kbc_report_table(out, &sink, NULL), 0);
    feed(&sink, 1);
    sink.destroy(sink.ctx);
    fclose(out);
    cr_assert(strstr(text, SUSPECT_LINE) != NULL, "%s", text);
    free(text);
}

/* A scratch folder for the test (each test runs in a process of its
   own), removed after it, and a file in it. */
static char scratch_dir[] = "/tmp/kbench-suspect-XXXXXX";

static const char *scratch(const char *name)
{
    static char path[128];
    if (scratch_dir[sizeof scratch_dir - 2] == 'X')
        cr_assert_not_null(mkdtemp(scratch_dir));
    snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
    return path;
}

static void scratch_remove(void)
{
    if (scratch_dir[sizeof scratch_dir - 2] == 'X')
        return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(suspect, .fini = scratch_remove);

Test(suspect, results_json_and_results_md_list_the_row)
{
    char json[128], md[128];
    snprintf(json, sizeof json, "%s", scratch("results.json"));
    snprintf(md, sizeof md, "%s", scratch("results.md"));
    kbc_sink sinks[2];
    kbc_diag d = {0};
    cr_assert_eq(kbc_report_json(json, &sinks[0], &d), 0);
    cr_assert_eq(kbc_report_markdown(md, &sinks[1], &d), 0);
    feed(sinks, 2);
    sinks[0].destroy(sinks[0].ctx);
    sinks[1].destroy(sinks[1].ctx);
    json_t *doc = json_load_file(json, 0, NULL);
    cr_assert_not_null(doc);
    json_t *sus = json_object_get(doc, "suspects");
    cr_assert_eq(json_array_size(sus), 1);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(sus, 0), "key")),
                     "reduce/sweep/n=3000017/cub");
    json_decref(doc);
    FILE *f = fopen(md, "r");
    cr_assert_not_null(f);
    char text[8192];
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    cr_assert(strstr(text, "- " SUSPECT_LINE) != NULL, "%s", text);
}

Test(suspect, the_reader_reads_them_back)
{
    const char *path = scratch("back.json");
    kbc_sink sink;
    kbc_diag d = {0};
    cr_assert_eq(kbc_report_json(path, &sink, &d), 0);
    feed(&sink, 1);
    sink.destroy(sink.ctx);
    kbc_run_doc doc;
    cr_assert_eq(kbc_results_read_run(path, &doc, &d), 0, "%s", d.msg);
    cr_assert(doc.has_suspects);
    cr_assert_eq(doc.n_suspects, 1);
    cr_assert_str_eq(doc.suspects[0].key, "reduce/sweep/n=3000017/cub");
    cr_assert_str_eq(doc.suspects[0].than_key, "reduce/sweep/n=16777216/cub");
    cr_assert_float_eq(doc.suspects[0].median_s, 62e-6, 1e-12);
    cr_assert_float_eq(doc.suspects[0].than_median_s, 25e-6, 1e-12);
    cr_assert_gt(doc.suspects[0].work_ratio, 5.5);
    cr_assert_eq(doc.suspects[0].cpu, 0, "cub's row is a GPU row, and reads back as one");
    kbc_run_doc_free(&doc);
}

Test(suspect, a_suspects_member_that_is_not_a_list_of_suspects_is_refused)
{
    const char *path = scratch("bad.json");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"results\": [], \"suspects\": [{\"key\": \"k\", \"median_s\": \"slow\", "
          "\"than_key\": \"j\", \"than_median_s\": 1e-5, \"work_ratio\": 2}]}\n",
          f);
    fclose(f);
    kbc_run_doc doc;
    kbc_diag d = {0};
    cr_assert_eq(kbc_results_read_run(path, &doc, &d), -1);
    cr_assert(strstr(d.msg, "bad.json: suspect 0: \"median_s\" is not a positive number") != NULL,
              "%s", d.msg);
}

Test(suspect, the_html_report_lists_them)
{
    const char *path = scratch("html.json");
    kbc_sink sink;
    kbc_diag d = {0};
    cr_assert_eq(kbc_report_json(path, &sink, &d), 0);
    feed(&sink, 1);
    sink.destroy(sink.ctx);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' report '%s' -o '%s.html' >/dev/null", KBENCH, path, path);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s.html", path);
    FILE *f = fopen(cmd, "r");
    cr_assert_not_null(f);
    static char page[1 << 18];
    page[fread(page, 1, sizeof page - 1, f)] = '\0';
    fclose(f);
    cr_assert(strstr(page, "<h2>Suspect rows (1)</h2>") != NULL, "%s", page);
    cr_assert(strstr(page, "<li>reduce/sweep/n=3000017/cub: 62 us, more than 2x the 25 us of "
                           "reduce/sweep/n=16777216/cub") != NULL,
              "%s", page);
}
