/*
 * test_text.c -- text kbench did not write (names, parameter texts,
 * reasons, descriptions, the GPU's and host's names) in every output but
 * the gnuplot scripts (test_plot.c): the terminal table carries no control
 * character, a markdown table cell is never broken, a CSV field is quoted
 * so that it reads back whole, JSON keeps every text (as U+FFFD where it
 * is not UTF-8) and reads back as written.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "host.h"
#include "report.h"
#include "results_read.h"
#include "text.h"

static char tmpdir[] = "/tmp/kbench-text-XXXXXX";

static void setup_all(void)
{
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp failed: %s", strerror(errno));
}

static void teardown_all(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(text, .init = setup_all, .fini = teardown_all);

/* A name with a line break, a carriage return, an escape sequence that
   would clear the terminal, a C1 control (CSI, U+009B), a pipe, a quote, a
   comma, a backquote and a backslash. */
static const char hostile[] = "a|b\nc\rd\x1b[2J,e\"f`g\\h\xc2\x9bi";

/* ---- the functions themselves ------------------------------------------ */

Test(text, utf8_len_takes_well_formed_sequences_and_refuses_the_rest)
{
    cr_assert_eq(kbc_utf8_len("a"), 1);
    cr_assert_eq(kbc_utf8_len("\xc3\xa9"), 2);         /* e acute */
    cr_assert_eq(kbc_utf8_len("\xe2\x82\xac"), 3);     /* euro sign */
    cr_assert_eq(kbc_utf8_len("\xf0\x9f\x98\x80"), 4); /* an emoji */
    cr_assert_eq(kbc_utf8_len("\xff"), 0);
    cr_assert_eq(kbc_utf8_len("\x80"), 0);             /* a stray continuation */
    cr_assert_eq(kbc_utf8_len("\xc0\xaf"), 0);         /* overlong '/' */
    cr_assert_eq(kbc_utf8_len("\xe0\x80\xaf"), 0);     /* overlong '/' */
    cr_assert_eq(kbc_utf8_len("\xed\xa0\x80"), 0);     /* a surrogate */
    cr_assert_eq(kbc_utf8_len("\xf4\x90\x80\x80"), 0); /* above U+10FFFF */
    cr_assert_eq(kbc_utf8_len("\xe2\x82"), 0);         /* cut short */
    cr_assert_eq(kbc_utf8_len(""), 0);
}

Test(text, visible_text_spells_controls_and_bad_bytes_as_escapes)
{
    char buf[256];
    kbc_text_visible_to("a\nb\tc\x1b[2J\x7f\xff\xc2\x9b\xc3\xa9", buf, sizeof buf);
    cr_assert_str_eq(buf, "a\\nb\\tc\\x1b[2J\\x7f\\xff\\u009b\xc3\xa9");
}

Test(text, visible_text_is_cut_whole)
{
    /* 6 bytes of room: "ab" and the 4 of "\x1b" do not fit with the NUL. */
    char buf[6];
    kbc_text_visible_to("ab\x1b" "c", buf, sizeof buf);
    cr_assert_str_eq(buf, "ab");
}

Test(text, utf8_repair_replaces_each_bad_byte)
{
    cr_assert_null(kbc_text_utf8("fine \xc3\xa9"));
    char *f = kbc_text_utf8("a\xff" "b\xc3");
    cr_assert_str_eq(f, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
    free(f);
}

/* ---- the terminal table and markdown ------------------------------------ */

/* A passing row of experiment e (one size parameter and one enum, both
   swept) with the given variant, parameter name and text. */
static kbc_record row(const char *e, const char *variant, const char *pname, const char *ptext)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.experiment, sizeof r.experiment, "%s", e);
    snprintf(r.plugin, sizeof r.plugin, "%s", e);
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    r.backend = KB_BACKEND_CPU;
    r.n_params = 2;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = 1024;
    snprintf(r.params[0].text, sizeof r.params[0].text, "1024");
    r.params[0].swept = 1;
    snprintf(r.params[1].name, sizeof r.params[1].name, "%s", pname);
    r.params[1].type = KB_PARAM_ENUM;
    snprintf(r.params[1].text, sizeof r.params[1].text, "%s", ptext);
    r.params[1].swept = 1;
    r.n_points = 1;
    r.outcome = KBC_PASS;
    double t[3] = {1e-3, 1.1e-3, 0.9e-3};
    kbc_record_set_samples(&r, t, 3);
    kbc_stats_compute(t, 3, &r.time);
    r.items_per_s = 1e6;
    return r;
}

/* One hostile row, and a failed one whose reason and sanitizer report are
   hostile too, through a sink; its run_info names a hostile host, GPU-less
   reason and command line. */
static void feed(kbc_sink *s)
{
    static kbc_machine m;
    memset(&m, 0, sizeof m);
    snprintf(m.host, sizeof m.host, "%s", hostile);
    snprintf(m.no_gpu_reason, sizeof m.no_gpu_reason, "%s", hostile);
    kbc_run_info info = {.machine = &m, .command_line = hostile};
    cr_assert_eq(s->begin(s->ctx, &info), 0);
    kbc_record r[2] = {row(hostile, hostile, hostile, hostile), row(hostile, "v", hostile, hostile)};
    r[1].outcome = KBC_FAIL;
    snprintf(r[1].reason, sizeof r[1].reason, "%s", hostile);
    snprintf(r[1].sanitizer, sizeof r[1].sanitizer, "%s", hostile);
    snprintf(r[1].ignores, sizeof r[1].ignores, "%s", hostile);
    r[1].points = 2;
    cr_assert_eq(s->point(s->ctx, r, 2), 0);
    cr_assert_eq(s->end(s->ctx, 1), 0);
    s->destroy(s->ctx);
    kbc_record_free(&r[0]);
    kbc_record_free(&r[1]);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int c;
    while ((c = fgetc(f)) != EOF)
        fputc(c, m);
    fclose(f);
    fclose(m);
    return buf;
}

/* Whether text holds a control character other than the line feed, or a
   C1 control, or a byte that is not UTF-8. */
static int has_raw_control(const char *text)
{
    for (const char *p = text; *p;) {
        size_t len = kbc_utf8_len(p);
        unsigned char c = (unsigned char)*p;
        if (len == 0 || (c < 0x20 && c != '\n') || c == 0x7f ||
            (len == 2 && c == 0xc2 && (unsigned char)p[1] < 0xa0))
            return 1;
        p += len;
    }
    return 0;
}

Test(text, the_terminal_table_carries_no_control_character)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kbc_sink s;
    cr_assert_eq(kbc_report_table(out, &s, NULL), 0);
    feed(&s);
    fclose(out);
    cr_assert_not(has_raw_control(buf), "%s", buf);
    /* The names are there, spelled visibly: the heading, the cell, the
       reason and the sanitizer's line. */
    cr_assert_not_null(strstr(buf, "a|b\\nc\\rd\\x1b[2J,e\"f`g\\h\\u009bi  point 1/1"), "%s", buf);
    cr_assert_not_null(strstr(buf, "FAIL: a|b\\nc"), "%s", buf);
    cr_assert_not_null(strstr(buf, "sanitizer: a|b\\nc"), "%s", buf);
    free(buf);
}

/* The markdown file's table: every row line has as many cells as the
   header, whatever the names hold. */
Test(text, a_markdown_table_cell_is_never_broken)
{
    char path[512];
    snprintf(path, sizeof path, "%s/results.md", tmpdir);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_markdown(path, &s, &d), 0, "%s", d.msg);
    feed(&s);
    char *text = slurp(path);
    cr_assert_not(has_raw_control(text), "%s", text);
    /* Count the unescaped pipes of each table line. */
    int header = -1, rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] != '|')
            continue;
        int pipes = 0;
        for (char *p = line; *p; p++)
            pipes += *p == '|' && (p == line || p[-1] != '\\');
        if (header < 0)
            header = pipes;
        else
            cr_assert_eq(pipes, header, "a broken row: %s", line);
        rows++;
    }
    cr_assert_eq(rows, 4, "header, rule and two rows");
    free(text);
}

/* HTML and markdown in a name stay text in results.md: every '<', '[' and
   '&' of the names is escaped, wherever the name goes (heading, cell,
   note, machine line). */
Test(text, a_script_in_a_name_stays_text_in_markdown)
{
    static const char script[] = "<script>alert(1)</script>[x](javascript:y)&amp;";
    char path[512];
    snprintf(path, sizeof path, "%s/script.md", tmpdir);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_markdown(path, &s, &d), 0, "%s", d.msg);
    static kbc_machine m;
    memset(&m, 0, sizeof m);
    snprintf(m.host, sizeof m.host, "%s", script);
    snprintf(m.no_gpu_reason, sizeof m.no_gpu_reason, "%s", script);
    kbc_run_info info = {.machine = &m};
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    kbc_record r[2] = {row(script, script, "p", script), row(script, "v", "p", script)};
    r[1].outcome = KBC_FAIL;
    snprintf(r[1].reason, sizeof r[1].reason, "%s", script);
    cr_assert_eq(s.point(s.ctx, r, 2), 0);
    cr_assert_eq(s.end(s.ctx, 1), 0);
    s.destroy(s.ctx);
    kbc_record_free(&r[0]);
    kbc_record_free(&r[1]);
    char *text = slurp(path);
    int names = 0;
    for (const char *p = text; (p = strstr(p, "alert(1)")); p++)
        names++;
    cr_assert_geq(names, 5, "heading, cell, reason, host and param: %s", text);
    for (const char *p = text; *p; p++)
        if (*p == '<' || *p == '[' || *p == '&')
            cr_assert(p > text && p[-1] == '\\', "an unescaped '%c' at %.40s", *p, p);
    cr_assert_not_null(strstr(text, "\\<script\\>alert(1)\\</script\\>"), "%s", text);
    free(text);
}

Test(text, the_markdown_command_line_is_one_code_span)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cmd.md", tmpdir);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_markdown(path, &s, &d), 0, "%s", d.msg);
    feed(&s);
    char *text = slurp(path);
    /* One backquote inside: a fence of two, the text between. */
    cr_assert_not_null(strstr(text, "command: ``a|b\\nc\\rd\\x1b[2J,e\"f`g\\h\\u009bi``\n"), "%s",
                       text);
    free(text);
}

/* ---- CSV ------------------------------------------------------------------ */

/* The fields of one CSV record at *s (RFC 4180), moving *s past it. */
static size_t csv_record(const char **s, char fields[][256], size_t max)
{
    size_t n = 0, k = 0;
    const char *p = *s;
    int quoted = 0;
    for (;;) {
        char ch = *p;
        cr_assert_neq(ch, '\0', "the record does not end");
        if (quoted) {
            if (ch == '"' && p[1] == '"') {
                fields[n][k++] = '"';
                p += 2;
            } else if (ch == '"') {
                quoted = 0;
                p++;
            } else {
                fields[n][k++] = ch;
                p++;
            }
            continue;
        }
        if (ch == '"') {
            cr_assert_eq(k, 0, "a quote inside an unquoted field");
            quoted = 1;
            p++;
        } else if (ch == ',' || ch == '\n') {
            fields[n][k] = '\0';
            cr_assert_lt(++n, max);
            k = 0;
            p++;
            if (ch == '\n')
                break;
        } else {
            cr_assert_neq(ch, '\r', "a bare carriage return outside quotes");
            fields[n][k++] = ch;
            p++;
        }
    }
    *s = p;
    return n;
}

Test(text, a_csv_field_with_a_line_break_quote_or_comma_reads_back_whole)
{
    char path[512];
    snprintf(path, sizeof path, "%s/results.csv", tmpdir);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_csv(path, &s, &d), 0, "%s", d.msg);
    /* The run names the hostile parameter, so that it has a column. */
    static kbc_machine m;
    char *names[2] = {"n", (char *)hostile};
    size_t n_values[2] = {0, 0};
    char **values[2] = {NULL, NULL};
    kbc_exp_info x = {.name = (char *)hostile, .plugin = "p", .n_params = 2, .param_names = names,
                      .param_values = values, .n_values = n_values};
    kbc_run_info info = {.machine = &m, .exps = &x, .n_exps = 1};
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    /* A line break alone, a carriage return alone: quoted too. */
    kbc_record r = row(hostile, "line\nbreak", hostile, "cr\rhere");
    cr_assert_eq(s.point(s.ctx, &r, 1), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    kbc_record_free(&r);
    char *text = slurp(path);
    static char head[128][256], rec[128][256];
    const char *p = text;
    size_t nh = csv_record(&p, head, 128), nr = csv_record(&p, rec, 128);
    cr_assert_eq(*p, '\0', "two records, nothing after");
    cr_assert_eq(nh, nr);
    int seen = 0;
    for (size_t i = 0; i < nh; i++) {
        const char *want = strcmp(head[i], "experiment") == 0 ? hostile
                           : strcmp(head[i], "variant") == 0  ? "line\nbreak"
                           : strcmp(head[i], hostile) == 0    ? "cr\rhere"
                                                              : NULL;
        if (want) {
            cr_assert_str_eq(rec[i], want, "column %s", head[i]);
            seen++;
        }
    }
    cr_assert_eq(seen, 3, "experiment, variant and the parameter's column");
    free(text);
}

/* ---- JSON ----------------------------------------------------------------- */

/* Runs the JSON sink over one row (variant variant, description desc),
   with stderr in a file; returns what stderr got. */
static char *json_with(const char *path, const char *variant, const char *desc)
{
    char errpath[600];
    snprintf(errpath, sizeof errpath, "%s.err", path);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert_geq(fd, 0);
    dup2(fd, 2);
    close(fd);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    static kbc_machine m;
    kbc_exp_info x = {.name = "e", .plugin = "p", .description = (char *)desc};
    kbc_run_info info = {.machine = &m, .exps = &x, .n_exps = 1};
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    kbc_record r = row("e", variant, "dtype", "f32");
    cr_assert_eq(s.point(s.ctx, &r, 1), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    kbc_record_free(&r);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    return slurp(errpath);
}

Test(text, json_reads_back_hostile_text_as_written)
{
    char path[512];
    snprintf(path, sizeof path, "%s/hostile.json", tmpdir);
    free(json_with(path, hostile, hostile));
    kbc_run_doc doc;
    kbc_diag d;
    cr_assert_eq(kbc_results_read_run(path, &doc, &d), 0, "%s", d.msg);
    cr_assert_eq(doc.n_recs, 1);
    cr_assert_str_eq(doc.recs[0].variant, hostile);
    cr_assert_str_eq(doc.exps[0].description, hostile);
    kbc_run_doc_free(&doc);
}

/* A description with a byte that is not UTF-8 (0xff) is kept, that byte
   as U+FFFD, and stderr says so once. */
Test(text, a_description_that_is_not_utf8_is_kept_and_said_once)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bad-desc.json", tmpdir);
    char *err = json_with(path, "v", "sum \xff of all");
    kbc_run_doc doc;
    kbc_diag d;
    cr_assert_eq(kbc_results_read_run(path, &doc, &d), 0, "%s", d.msg);
    cr_assert_not_null(doc.exps[0].description, "the description vanished");
    cr_assert_str_eq(doc.exps[0].description, "sum \xef\xbf\xbd of all");
    kbc_run_doc_free(&doc);
    cr_assert_not_null(strstr(err, "\"sum \\xff of all\" is not UTF-8"), "%s", err);
    cr_assert_null(strstr(strstr(err, "not UTF-8") + 1, "not UTF-8"), "said more than once: %s",
                   err);
    free(err);
}

/* The same for a variant's name, which also reaches the row's key and
   the experiment's list of variants. */
Test(text, a_variant_name_that_is_not_utf8_is_kept)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bad-variant.json", tmpdir);
    free(json_with(path, "k\xff", NULL));
    kbc_record *recs;
    size_t n;
    kbc_diag d;
    cr_assert_eq(kbc_results_read(path, &recs, &n, &d), 0, "%s", d.msg);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(recs[0].variant, "k\xef\xbf\xbd");
    kbc_records_free(recs, n);
    json_t *doc = json_load_file(path, 0, NULL);
    json_t *row0 = json_array_get(json_object_get(doc, "results"), 0);
    cr_assert(json_is_string(json_object_get(row0, "key")), "the key vanished");
    json_decref(doc);
}

/* A parameter's name that is not UTF-8 keeps its value (a JSON key). */
Test(text, a_parameter_name_that_is_not_utf8_keeps_its_value)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bad-param.json", tmpdir);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
    static kbc_machine m;
    kbc_run_info info = {.machine = &m};
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    kbc_record r = row("e", "v", "d\xfe", "f32");
    cr_assert_eq(s.point(s.ctx, &r, 1), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    kbc_record_free(&r);
    json_t *doc = json_load_file(path, 0, NULL);
    json_t *row0 = json_array_get(json_object_get(doc, "results"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(row0, "params"),
                                                       "d\xef\xbf\xbd")),
                     "f32");
    json_decref(doc);
}

/* ---- a plugin's log lines ------------------------------------------------ */

/* A log line reaches stderr with its escape sequences spelled out, in the
   process that calls the plugin (kbench check; a worker's stderr is
   passed on the same way, test_supervise). */
Test(text, a_plugins_log_line_carries_no_control_character, .init = cr_redirect_stderr)
{
    kb_host h;
    kbc_hostctx hc;
    memset(&hc, 0, sizeof hc);
    kbc_host_init(&h, &hc, "p\x1b[1m", 1, 1);
    h.log(&h, KB_LOG_WARN, "bad \x1b]0;title\x07 line\rover %s", "\x9b");
    fflush(stderr);
    FILE *err = cr_get_redirected_stderr();
    char got[512] = "";
    size_t n = fread(got, 1, sizeof got - 1, err);
    got[n] = '\0';
    cr_assert_str_eq(got, "kbench: p\\x1b[1m: warning: bad \\x1b]0;title\\x07 line\\rover \\x9b\n");
}
