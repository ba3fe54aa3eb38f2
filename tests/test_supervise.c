/*
 * test_supervise.c -- `kbench run` as a supervisor of worker processes, as
 * a user meets it: a plugin that crashes, exits, hangs or writes on the
 * worker's channel costs its own rows only; every row says where it ran;
 * a run that is killed, cut or interrupted finishes with --resume as if
 * nothing had happened; and the mistakes around -o, --resume, --force and
 * --isolate are refused with one sentence and the right exit code.
 *
 * Each test runs the built kbench binary in a fresh temporary folder with
 * the crash fixture plugin (tests/fixtures/crash/crash.c) and reads what
 * it wrote.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sha256.h"

#define KBENCH KBENCH_BINARY_DIR "/kbench"
#define CRASH_DIR KBENCH_FIXTURE_DIR "/crash"
#define INI_DIR KBENCH_SOURCE_DIR "/tests/fixtures/crash"
#define PP " --plugin-path " CRASH_DIR
#define CONTAIN INI_DIR "/contain.ini"
#define HANG INI_DIR "/hang.ini"
#define GOOD INI_DIR "/good.ini"
#define SWEEP INI_DIR "/sweep.ini"
#define STRAYS INI_DIR "/strays.ini"
#define CHANNEL INI_DIR "/channel.ini"
/* sweep.ini: 20 points of good and slowpoke. */
#define SWEEP_POINTS 20
#define SWEEP_VARIANTS 2

/* How long one kbench command may take before the test gives up on it. */
#define COMMAND_LIMIT_S 60.0

static char tmp[256];

/* What a test collected (texts, JSON documents), freed with the folder. */
static char **kept_text;
static size_t n_text, cap_text;
static json_t *kept_json[64];
static size_t n_json;

static char *keep(char *s)
{
    if (n_text == cap_text) {
        cap_text = cap_text ? 2 * cap_text : 64;
        kept_text = realloc(kept_text, cap_text * sizeof *kept_text);
        cr_assert_not_null(kept_text);
    }
    kept_text[n_text++] = s;
    return s;
}

static json_t *keep_json(json_t *j)
{
    cr_assert_lt(n_json, sizeof kept_json / sizeof *kept_json, "too many documents kept");
    kept_json[n_json++] = j;
    return j;
}

static void make_tmp(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/kbench-supervise-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

static void remove_tmp(void)
{
    while (n_text > 0)
        free(kept_text[--n_text]);
    free(kept_text);
    kept_text = NULL;
    cap_text = 0;
    while (n_json > 0)
        json_decref(kept_json[--n_json]);
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "rm -rf '%s'", tmp), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

TestSuite(contain, .init = make_tmp, .fini = remove_tmp);
TestSuite(hang, .init = make_tmp, .fini = remove_tmp);
TestSuite(rows, .init = make_tmp, .fini = remove_tmp);
TestSuite(progress, .init = make_tmp, .fini = remove_tmp);
TestSuite(resume, .init = make_tmp, .fini = remove_tmp);
TestSuite(refuse, .init = make_tmp, .fini = remove_tmp);
TestSuite(compare, .init = make_tmp, .fini = remove_tmp);
TestSuite(channel, .init = make_tmp, .fini = remove_tmp);

/* ---- files ---- */

/* tmp/name, kept. */
static char *in_tmp(const char *name)
{
    char *p = NULL;
    cr_assert_gt(asprintf(&p, "%s/%s", tmp, name), 0);
    return keep(p);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return keep(strdup(""));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return keep(s);
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(in_tmp(name), "w");
    cr_assert_not_null(f, "cannot write %s", name);
    fputs(text, f);
    fclose(f);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* ---- running kbench ---- */

typedef struct result {
    int code;
    char *out, *err;
    double secs;
} result;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Starts `kbench ARGS` in the temporary folder (stdout to out.txt, stderr
   to err.txt), with no plugins from the environment and none of this
   process's other descriptors; nofile > 0 limits its open files.  The
   shell execs kbench, so the pid returned is kbench's own. */
static pid_t start(const char *args, rlim_t nofile)
{
    char *cmd = NULL, *out = in_tmp("out.txt"), *err = in_tmp("err.txt");
    cr_assert_gt(asprintf(&cmd, "exec '%s' %s", KBENCH, args), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || chdir(tmp) != 0)
            _exit(126);
        close_range(3, ~0U, 0);
        setenv("KBENCH_PLUGIN_PATH", "", 1);
        if (nofile) {
            struct rlimit rl = {nofile, nofile};
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
                _exit(126);
        }
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    free(cmd);
    return pid;
}

/* Waits for pid at most limit_s seconds (then kills it and fails). */
static int finish(pid_t pid, double limit_s)
{
    double end = now_s() + limit_s;
    int st = 0;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        cr_assert_eq(r, 0, "waitpid: %s", strerror(errno));
        if (now_s() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            cr_assert_fail("kbench ran longer than %.0f s", limit_s);
        }
        sleep_s(0.005);
    }
}

static result collect(int st, double secs)
{
    cr_assert(WIFEXITED(st), "kbench did not exit normally (wait status %#x)", st);
    result r = {.code = WEXITSTATUS(st), .secs = secs};
    r.out = slurp(in_tmp("out.txt"));
    r.err = slurp(in_tmp("err.txt"));
    return r;
}

static result kb_limited(const char *args, rlim_t nofile)
{
    double t0 = now_s();
    pid_t pid = start(args, nofile);
    int st = finish(pid, COMMAND_LIMIT_S);
    return collect(st, now_s() - t0);
}

static result kb(const char *args)
{
    return kb_limited(args, 0);
}

/* The parent pid of process pid (from /proc/PID/stat), or -1. */
static pid_t parent_of(pid_t pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *close = strrchr(text, ')');
    char state;
    int ppid;
    if (!close || sscanf(close + 1, " %c %d", &state, &ppid) != 2)
        return -1;
    return (pid_t)ppid;
}

/* kill -9 of a running kbench and of its workers, which sit in process
   groups of their own: kbench is stopped first, so that it starts no
   worker while they are looked for. */
static void kill_run(pid_t pid)
{
    int st;
    kill(pid, SIGSTOP);
    pid_t r = waitpid(pid, &st, WUNTRACED);
    cr_assert_eq(r, pid, "waitpid: %s", strerror(errno));
    if (!WIFSTOPPED(st))
        return; /* it had finished already */
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t child = (pid_t)atoi(e->d_name);
        if (parent_of(child) == pid)
            kill(child, SIGKILL);
    }
    closedir(d);
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
}

/* ---- results ---- */

static json_t *load_results(const char *dir)
{
    char *path = in_tmp(dir);
    char *file = NULL;
    cr_assert_gt(asprintf(&file, "%s/results.json", path), 0);
    json_error_t je;
    json_t *doc = json_load_file(file, 0, &je);
    cr_assert_not_null(doc, "%s does not parse: %s (line %d)", file, je.text, je.line);
    free(file);
    return keep_json(doc);
}

static json_t *rows_of(json_t *doc)
{
    json_t *rows = json_object_get(doc, "results");
    cr_assert(json_is_array(rows), "results.json has no results array");
    return rows;
}

static json_t *results_rows(const char *dir)
{
    return rows_of(load_results(dir));
}

static const char *str_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static long long n_of(const json_t *row)
{
    return json_integer_value(json_object_get(json_object_get(row, "params"), "n"));
}

/* The row of variant at experiment exp's point with parameter n (n < 0:
   any), or NULL. */
static json_t *find_row(json_t *rows, const char *exp, const char *variant, long long n)
{
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *x = str_of(row, "experiment"), *v = str_of(row, "variant");
        if (x && v && strcmp(x, exp) == 0 && strcmp(v, variant) == 0 && (n < 0 || n_of(row) == n))
            return row;
    }
    return NULL;
}

static json_t *must_row(json_t *rows, const char *exp, const char *variant, long long n)
{
    json_t *row = find_row(rows, exp, variant, n);
    cr_assert_not_null(row, "no row for %s/%s at n=%lld", exp, variant, n);
    return row;
}

static const char *status_of(const json_t *row)
{
    const char *s = str_of(row, "status");
    return s ? s : "(none)";
}

static const char *reason_of(const json_t *row)
{
    const char *s = str_of(row, "reason");
    return s ? s : "";
}

/* Two runs gave the same rows: the same keys with the same statuses, in
   the same order. */
static void assert_same_rows(json_t *want, json_t *got, const char *what)
{
    cr_assert_eq(json_array_size(got), json_array_size(want), "%s: %zu rows, %zu wanted", what,
                 json_array_size(got), json_array_size(want));
    for (size_t i = 0; i < json_array_size(want); i++) {
        const json_t *a = json_array_get(want, i), *b = json_array_get(got, i);
        cr_assert_str_eq(str_of(b, "key"), str_of(a, "key"), "%s: row %zu is %s, not %s", what,
                         i, str_of(b, "key"), str_of(a, "key"));
        cr_assert_str_eq(status_of(b), status_of(a), "%s: row %zu (%s) is %s, not %s", what, i,
                         str_of(a, "key"), status_of(b), status_of(a));
    }
}

/* Every row's key appears once. */
static void assert_keys_once(json_t *rows, const char *what)
{
    for (size_t i = 0; i < json_array_size(rows); i++)
        for (size_t j = i + 1; j < json_array_size(rows); j++)
            cr_assert_str_neq(str_of(json_array_get(rows, i), "key"),
                              str_of(json_array_get(rows, j), "key"),
                              "%s: rows %zu and %zu are both %s", what, i, j,
                              str_of(json_array_get(rows, i), "key"));
}

static int is_hex64(const char *s)
{
    if (!s || strlen(s) != 64)
        return 0;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s))
            return 0;
    return 1;
}

/* ---- containment: contain.ini ---- */

/* contain.ini run into tmp/out. */
static json_t *contain_run(result *r)
{
    *r = kb("run " CONTAIN PP " -o out -q");
    return results_rows("out");
}

Test(contain, the_good_experiments_before_and_after_pass)
{
    result r;
    json_t *rows = contain_run(&r);
    const json_t *checks[] = {
        must_row(rows, "contain-before", "good", 100),
        must_row(rows, "contain-before", "good", 200),
        must_row(rows, "contain-after", "good2", 100),
    };
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++)
        cr_assert_str_eq(status_of(checks[i]), "pass", "%s: %s", str_of(checks[i], "key"),
                         reason_of(checks[i]));
}

Test(contain, segv_is_crashed_by_sigsegv)
{
    result r;
    json_t *row = must_row(contain_run(&r), "contain-mixed", "segv", 200);
    cr_assert_str_eq(status_of(row), "crashed");
    cr_assert_not_null(strstr(reason_of(row), "SIGSEGV"), "%s", reason_of(row));
}

Test(contain, abort_is_crashed_by_sigabrt)
{
    result r;
    json_t *row = must_row(contain_run(&r), "contain-mixed", "abort", 200);
    cr_assert_str_eq(status_of(row), "crashed");
    cr_assert_not_null(strstr(reason_of(row), "SIGABRT"), "%s", reason_of(row));
}

Test(contain, exit3_is_crashed_with_status_3)
{
    result r;
    json_t *row = must_row(contain_run(&r), "contain-mixed", "exit3", 200);
    cr_assert_str_eq(status_of(row), "crashed");
    cr_assert_not_null(strstr(reason_of(row), "status 3"), "%s", reason_of(row));
}

Test(contain, mangle_is_crashed_for_a_line_that_is_not_a_message)
{
    result r;
    json_t *row = must_row(contain_run(&r), "contain-mixed", "mangle", 200);
    cr_assert_str_eq(status_of(row), "crashed");
    cr_assert_not_null(strstr(reason_of(row), "not a kbench message"), "%s", reason_of(row));
}

Test(contain, chatty_passes_its_printf_does_not_break_the_channel)
{
    result r;
    json_t *row = must_row(contain_run(&r), "contain-mixed", "chatty", 200);
    cr_assert_str_eq(status_of(row), "pass", "%s", reason_of(row));
}

Test(contain, good_and_good2_pass_at_every_point_of_the_mixed_experiment)
{
    result r;
    json_t *rows = contain_run(&r);
    const char *const variants[] = {"good", "good2"};
    const long long ns[] = {100, 200, 300};
    for (size_t v = 0; v < 2; v++)
        for (size_t k = 0; k < 3; k++) {
            json_t *row = must_row(rows, "contain-mixed", variants[v], ns[k]);
            cr_assert_str_eq(status_of(row), "pass", "%s: %s", str_of(row, "key"),
                             reason_of(row));
        }
}

Test(contain, every_variant_passes_where_n_is_not_bad_n)
{
    result r;
    json_t *rows = contain_run(&r);
    const char *const variants[] = {"good", "segv", "abort", "exit3", "mangle", "chatty", "good2"};
    const long long ns[] = {100, 300};
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++)
        for (size_t k = 0; k < 2; k++) {
            json_t *row = must_row(rows, "contain-mixed", variants[v], ns[k]);
            cr_assert_str_eq(status_of(row), "pass", "%s: %s", str_of(row, "key"),
                             reason_of(row));
        }
}

Test(contain, a_run_with_crashed_rows_exits_one)
{
    result r;
    contain_run(&r);
    cr_assert_eq(r.code, 1, "exit %d: %s", r.code, r.err);
}

Test(contain, the_summary_line_counts_the_crashed_rows)
{
    result r;
    json_t *rows = contain_run(&r);
    int crashed_rows = 0;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) crashed_rows += strcmp(status_of(row), "crashed") == 0;
    cr_assert_eq(crashed_rows, 4, "segv, abort, exit3 and mangle at n=200");
    const char *s = strstr(r.out, "summary:");
    cr_assert_not_null(s, "no summary line in: %s", r.out);
    int pass, fail, error, skipped, crashed;
    cr_assert_eq(sscanf(s, "summary: %d pass, %d FAIL, %d error, %d skipped, %d crashed", &pass,
                        &fail, &error, &skipped, &crashed),
                 5, "summary line: %.120s", s);
    cr_assert_eq(crashed, crashed_rows, "%.120s", s);
    cr_assert_eq(pass + crashed, (int)json_array_size(rows), "%.120s", s);
}

/* Lines of a markdown report that are rows of its points' tables (the
   sweep summaries after them are tables of their own). */
static int md_rows(const char *md)
{
    int n = 0;
    const char *end = strstr(md, "\n## Sweep of ");
    for (const char *line = md; line && *line && (!end || line < end);) {
        if (strncmp(line, "| ", 2) == 0 && strncmp(line, "| variant |", 11) != 0)
            n++;
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return n;
}

static int md_crashed_rows(const char *md)
{
    /* In the points' tables, not the sweep summaries after them. */
    char *points = strdup(md);
    char *end = strstr(points, "\n## Sweep of ");
    if (end)
        *end = '\0';
    int n = count_of(points, "| crashed |");
    free(points);
    return n;
}

Test(contain, json_csv_and_markdown_hold_every_row_crashed_ones_too)
{
    result r;
    json_t *rows = contain_run(&r);
    /* contain-before 2, contain-mixed 3 x 7, contain-after 1 */
    cr_assert_eq(json_array_size(rows), 24);
    char *csv = slurp(in_tmp("out/results.csv"));
    char *md = slurp(in_tmp("out/results.md"));
    cr_assert_eq(count_lines(csv) - 1, 24, "results.csv:\n%s", csv);
    cr_assert_eq(md_rows(md), 24, "results.md:\n%s", md);
    cr_assert_eq(count_of(csv, ",crashed,"), 4, "results.csv:\n%s", csv);
    cr_assert_eq(md_crashed_rows(md), 4, "results.md:\n%s", md);
}

Test(contain, a_crashed_row_carries_the_plugins_last_log_line)
{
    result r;
    json_t *row = must_row(contain_run(&r), "contain-mixed", "segv", 200);
    cr_assert_not_null(strstr(reason_of(row), "about to dereference NULL"), "%s",
                       reason_of(row));
}

Test(contain, a_plugins_stdout_goes_to_stderr_and_stdout_holds_only_the_table)
{
    result r;
    json_t *row = must_row(contain_run(&r), "contain-mixed", "chatty", 100);
    cr_assert_str_eq(status_of(row), "pass", "%s", reason_of(row));
    cr_assert_not_null(strstr(r.err, "chatty: hello from run"), "stderr: %s", r.err);
    /* The plugin's line on stdout would be a line of its own (a crashed
       row's reason may quote it in the table). */
    cr_assert_neq(strncmp(r.out, "chatty: hello", 13), 0, "stdout: %s", r.out);
    cr_assert_null(strstr(r.out, "\nchatty: hello"), "stdout: %s", r.out);
}

Test(contain, a_plugins_escape_sequences_reach_stderr_spelled_out)
{
    result r;
    json_t *row = must_row(contain_run(&r), "contain-mixed", "chatty", 100);
    cr_assert_str_eq(status_of(row), "pass", "%s", reason_of(row));
    /* Written raw to stderr, and through the host's log. */
    cr_assert_not_null(strstr(r.err, "chatty: raw \\x1b[2J\\x1b]0;owned\\x07 on stderr"),
                       "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench: crash: warning: chatty: logged \\x1b[31mred"),
                       "stderr: %s", r.err);
    for (const char *p = r.err; *p; p++)
        cr_assert(*p == '\n' || (unsigned char)*p >= 0x20,
                  "stderr holds the control character 0x%02x", (unsigned char)*p);
}

/* ---- a hang: hang.ini (timeout = 3s) ---- */

static json_t *hang_run(result *r)
{
    *r = kb("run " HANG PP " -o out -q");
    return results_rows("out");
}

Test(hang, a_run_that_never_returns_is_a_timeout_of_the_watchdog)
{
    result r;
    json_t *row = must_row(hang_run(&r), "hang", "hang", 100);
    cr_assert_str_eq(status_of(row), "timeout", "%s", reason_of(row));
    cr_assert_not_null(strstr(reason_of(row), "watchdog"), "%s", reason_of(row));
}

Test(hang, good_and_good2_pass_around_the_hang)
{
    result r;
    json_t *rows = hang_run(&r);
    json_t *good = must_row(rows, "hang", "good", 100);
    json_t *good2 = must_row(rows, "hang", "good2", 100);
    cr_assert_str_eq(status_of(good), "pass", "%s", reason_of(good));
    cr_assert_str_eq(status_of(good2), "pass", "%s", reason_of(good2));
}

Test(hang, the_watchdog_ends_the_run_within_seconds)
{
    result r;
    hang_run(&r);
    cr_assert_lt(r.secs, 15.0, "the run took %.1f s with a timeout of 3 s", r.secs);
}

/* ---- processes a plugin leaves running: strays.ini ---- */

/* Whether process pid runs (a zombie has ended). */
static int running_pid(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *close = strrchr(text, ')');
    char state = 'X';
    return close && sscanf(close + 1, " %c", &state) == 1 && state != 'Z' && state != 'X';
}

/* The pids the crash plugin's forking variants noted ($CRASH_PIDS). */
static size_t noted_pids(pid_t *pids, size_t cap)
{
    FILE *f = fopen(in_tmp("pids.txt"), "r");
    size_t n = 0;
    int pid;
    while (f && n < cap && fscanf(f, "%d", &pid) == 1)
        pids[n++] = (pid_t)pid;
    if (f)
        fclose(f);
    return n;
}

static void strays_init(void)
{
    make_tmp();
    cr_assert_eq(setenv("CRASH_PIDS", in_tmp("pids.txt"), 1), 0);
}

/* Whatever a failed test left running goes with its folder. */
static void strays_fini(void)
{
    pid_t pids[64];
    size_t n = noted_pids(pids, 64);
    for (size_t i = 0; i < n; i++)
        if (pids[i] > 1 && running_pid(pids[i]))
            kill(pids[i], SIGKILL);
    remove_tmp();
}

TestSuite(strays, .init = strays_init, .fini = strays_fini);

static json_t *strays_run(result *r)
{
    *r = kb("run " STRAYS PP " -o out");
    return results_rows("out");
}

static long long processes_left_of(const json_t *row)
{
    const json_t *v = json_object_get(row, "processes_left");
    cr_assert(json_is_integer(v), "%s: processes_left is not a number", str_of(row, "key"));
    return json_integer_value(v);
}

Test(strays, every_process_a_plugin_left_is_gone_after_the_run)
{
    result r;
    strays_run(&r);
    pid_t pids[64];
    size_t n = noted_pids(pids, 64);
    cr_assert_eq(n, 3, "forker, daemon and forksegv each leave one process: %zu noted", n);
    for (size_t i = 0; i < n; i++)
        cr_assert(!running_pid(pids[i]), "process %d, which a plugin left, still runs",
                  (int)pids[i]);
}

Test(strays, each_row_of_a_point_that_left_a_child_says_so)
{
    result r;
    json_t *rows = strays_run(&r);
    const char *const variants[] = {"good", "forker", "good2"};
    for (size_t v = 0; v < 3; v++) {
        json_t *row = must_row(rows, "forker", variants[v], 200);
        cr_assert_str_eq(status_of(row), "pass", "%s: %s", str_of(row, "key"), reason_of(row));
        cr_assert_eq(processes_left_of(row), 1, "%s", str_of(row, "key"));
    }
    cr_assert_not_null(strstr(r.out, "1 process the plugin started was still running when "
                                     "the point ended, and was ended"),
                       "no note in the table:\n%s", r.out);
}

Test(strays, a_daemon_deaf_to_sigterm_is_ended_too)
{
    result r;
    json_t *row = must_row(strays_run(&r), "daemon", "daemon", 200);
    cr_assert_str_eq(status_of(row), "pass", "%s", reason_of(row));
    cr_assert_eq(processes_left_of(row), 1);
}

Test(strays, a_point_that_leaves_nothing_says_none)
{
    result r;
    json_t *rows = strays_run(&r);
    const char *const exps[] = {"forker", "daemon", "forksegv"};
    for (size_t x = 0; x < 3; x++) {
        json_t *row = must_row(rows, exps[x], "good", 100);
        cr_assert_eq(processes_left_of(row), 0, "%s", str_of(row, "key"));
    }
}

/* The child holds the worker's channel open as the worker dies: its end
   is seen at once, not at the watchdog (20 s), and the row names both. */
Test(strays, a_crash_while_a_child_holds_the_channel_is_a_crash_and_says_so)
{
    result r;
    json_t *row = must_row(strays_run(&r), "forksegv", "forksegv", 200);
    cr_assert_str_eq(status_of(row), "crashed", "%s", reason_of(row));
    cr_assert_not_null(strstr(reason_of(row), "SIGSEGV"), "%s", reason_of(row));
    cr_assert_not_null(strstr(reason_of(row), "1 process the plugin started was still running "
                                              "and was ended"),
                       "%s", reason_of(row));
    cr_assert_eq(processes_left_of(row), 1);
    cr_assert_lt(r.secs, 15.0, "the run took %.1f s", r.secs);
}

/* ---- the worker's descriptors in a plugin's hands: channel.ini ---- */

static json_t *channel_run(result *r)
{
    *r = kb("run " CHANNEL PP " -o out -q");
    return results_rows("out");
}

/* The channel is not descriptor 3, which a plugin may close by mistake
   (a stale number of its own). */
Test(channel, closing_descriptor_3_leaves_the_channel_alone)
{
    result r;
    json_t *row = must_row(channel_run(&r), "close3", "close3", 200);
    cr_assert_str_eq(status_of(row), "pass", "%s", reason_of(row));
}

Test(channel, a_plugin_that_closes_the_channel_is_named_for_it)
{
    result r;
    json_t *row = must_row(channel_run(&r), "closeall", "closeall", 200);
    cr_assert_str_eq(status_of(row), "crashed", "%s", reason_of(row));
    cr_assert_not_null(strstr(reason_of(row), "the plugin closed kbench's channel"), "%s",
                       reason_of(row));
    cr_assert_null(strstr(reason_of(row), "exit()"), "%s", reason_of(row));
}

Test(channel, the_variants_after_a_closed_channel_pass)
{
    result r;
    json_t *row = must_row(channel_run(&r), "closeall", "good2", 200);
    cr_assert_str_eq(status_of(row), "pass", "%s", reason_of(row));
}

/* No descriptor of the worker's (the channel, a GPU's lock) outlives an
   exec: a program a plugin runs cannot hold it. */
Test(channel, a_program_a_plugin_runs_inherits_no_descriptor_of_the_worker)
{
    result r;
    json_t *row = must_row(channel_run(&r), "fdleak", "fdleak", 200);
    cr_assert_str_eq(status_of(row), "pass", "%s", reason_of(row));
}

/* A descriptor whoever started kbench left open (a CI runner's pipe; here
   descriptor 9 on /dev/null) does not reach the worker either. */
Test(channel, a_descriptor_kbench_was_handed_does_not_reach_the_worker)
{
    result r = kb("run " CHANNEL PP " -o out -q 9</dev/null");
    json_t *row = must_row(results_rows("out"), "fdleak", "fdleak", 200);
    cr_assert_str_eq(status_of(row), "pass", "%s", reason_of(row));
    cr_assert_eq(r.code, 1, "closeall crashes: %s", r.err);
}

/* ---- what rows and results.json say about where they ran ---- */

Test(rows, isolate_point_gives_every_point_a_worker_of_its_own)
{
    result r = kb("run " GOOD PP " -o out -q --isolate point");
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *rows = results_rows("out");
    const long long ns[] = {100, 200, 300};
    json_int_t pid[3];
    for (size_t k = 0; k < 3; k++) {
        pid[k] = json_integer_value(json_object_get(must_row(rows, "crash-good", "good", ns[k]),
                                                    "worker_pid"));
        json_int_t other = json_integer_value(
            json_object_get(must_row(rows, "crash-good", "good2", ns[k]), "worker_pid"));
        cr_assert_gt(pid[k], 0);
        cr_assert_eq(other, pid[k], "good and good2 at n=%lld ran in one worker", ns[k]);
    }
    cr_assert_neq(pid[0], pid[1]);
    cr_assert_neq(pid[0], pid[2]);
    cr_assert_neq(pid[1], pid[2]);
}

Test(rows, a_clean_run_uses_one_worker_throughout)
{
    result r = kb("run " GOOD PP " -o out -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *rows = results_rows("out");
    cr_assert_eq(json_array_size(rows), 6);
    json_int_t first = json_integer_value(json_object_get(json_array_get(rows, 0), "worker_pid"));
    cr_assert_gt(first, 0);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
        cr_assert_eq(json_integer_value(json_object_get(row, "worker_pid")), first, "row %zu", i);
}

Test(rows, every_row_names_its_host_and_worker_pid)
{
    result r = kb("run " GOOD PP " -o out -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *rows = results_rows("out");
    cr_assert_gt(json_array_size(rows), 0);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *host = str_of(row, "host");
        cr_assert_not_null(host, "row %zu has no host", i);
        cr_assert_gt(strlen(host), 0, "row %zu has an empty host", i);
        const json_t *pid = json_object_get(row, "worker_pid");
        cr_assert(json_is_integer(pid), "row %zu has no worker_pid", i);
        cr_assert_gt(json_integer_value(pid), 0, "row %zu", i);
    }
}

Test(rows, results_json_names_the_plan)
{
    result r = kb("run " GOOD PP " -o out -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *plan = json_object_get(load_results("out"), "plan");
    cr_assert(json_is_object(plan), "results.json has no plan object");
    cr_assert(is_hex64(str_of(plan, "hash")), "plan hash: %s", str_of(plan, "hash"));
    json_t *shard = json_object_get(plan, "shard");
    cr_assert_not_null(shard, "plan has no shard");
    cr_assert(json_is_null(shard), "a whole plan's shard is null");
    cr_assert(json_is_integer(json_object_get(plan, "jobs")), "plan has no jobs count");
    cr_assert_eq(json_integer_value(json_object_get(plan, "jobs")), 3, "good.ini has 3 points");
}

Test(rows, results_json_names_each_plugins_build)
{
    result r = kb("run " GOOD PP " -o out -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *plugins = json_object_get(json_object_get(load_results("out"), "provenance"),
                                      "plugins");
    cr_assert(json_is_array(plugins), "results.json has no provenance.plugins");
    cr_assert_eq(json_array_size(plugins), 1);
    json_t *p = json_array_get(plugins, 0);
    cr_assert_str_eq(str_of(p, "name"), "crash");
    char want[65], why[300];
    cr_assert_eq(kbc_sha256_file(CRASH_DIR "/kbench-crash.so", want, why, sizeof why), 0, "%s",
                 why);
    cr_assert(is_hex64(str_of(p, "sha256")), "sha256: %s", str_of(p, "sha256"));
    cr_assert_str_eq(str_of(p, "sha256"), want);
}

/* ---- resume ---- */

/* Lines in tmp/dir/journal.jsonl now. */
static int journal_lines(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/journal.jsonl", tmp, dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* The seed of the kill moments: $KBENCH_KILL_SEED, or the clock. */
static unsigned kill_seed(void)
{
    const char *env = getenv("KBENCH_KILL_SEED");
    if (env && *env)
        return (unsigned)strtoul(env, NULL, 10);
    return (unsigned)time(NULL) ^ (unsigned)getpid();
}

Test(resume, kill_9_at_ten_moments_then_resume_gives_the_uninterrupted_rows, .timeout = 150)
{
    result whole = kb("run " SWEEP PP " -o whole -q");
    cr_assert_eq(whole.code, 0, "%s", whole.err);
    json_t *want = results_rows("whole");
    cr_assert_eq(json_array_size(want), SWEEP_POINTS * SWEEP_VARIANTS);
    unsigned seed = kill_seed();
    fprintf(stderr, "kill moments: seed %u (KBENCH_KILL_SEED=%u repeats them); the run takes "
                    "%.2f s\n",
            seed, seed, whole.secs);
    srand(seed);
    int cut_short = 0; /* kills that left points to run */
    for (int trial = 0; trial < 10; trial++) {
        /* A moment of the sweep: from when the journal has its header
           (kbench has loaded its plugins and begun) to about the end of
           an uninterrupted run. */
        double at = (whole.secs - 0.1) * ((double)rand() / RAND_MAX);
        char args[512], what[128];
        snprintf(args, sizeof args, "run " SWEEP PP " -o cut%d -q", trial);
        snprintf(what, sizeof what, "seed %u, trial %d, killed %.3f s after the journal began",
                 seed, trial, at);
        char dir[32];
        snprintf(dir, sizeof dir, "cut%d", trial);
        pid_t pid = start(args, 0);
        double end = now_s() + COMMAND_LIMIT_S;
        int st = 0;
        pid_t done = 0;
        while (journal_lines(dir) < 1 && now_s() < end &&
               (done = waitpid(pid, &st, WNOHANG)) == 0)
            sleep_s(0.001);
        if (done == pid) {
            result early = collect(st, 0);
            cr_assert_fail("%s: kbench ended (exit %d) before its journal began: %s", what,
                           early.code, early.err);
        }
        cr_assert_geq(journal_lines(dir), 1, "%s: no journal", what);
        sleep_s(at);
        kill_run(pid);
        cut_short += journal_lines(dir) < 1 + SWEEP_POINTS;
        snprintf(args, sizeof args, "run " SWEEP PP " -o cut%d -q --resume", trial);
        result r = kb(args);
        cr_assert_eq(r.code, 0, "%s: --resume exits %d: %s", what, r.code, r.err);
        json_t *got = results_rows(dir);
        assert_same_rows(want, got, what);
        assert_keys_once(got, what);
    }
    /* The moments fall inside the run: most kills leave points to run. */
    cr_assert_geq(cut_short, 5, "seed %u: only %d of 10 kills came before the end of the run",
                  seed, cut_short);
}

/* Cuts the journal in dir in the middle of its last line; returns the
   number of that line. */
static int cut_last_line(const char *dir)
{
    char *name = NULL;
    cr_assert_gt(asprintf(&name, "%s/journal.jsonl", dir), 0);
    char *path = in_tmp(name);
    free(name);
    char *text = slurp(path);
    size_t n = strlen(text);
    cr_assert_gt(n, 1);
    cr_assert_eq(text[n - 1], '\n', "the journal ends with a whole line");
    size_t start = n - 1;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    cr_assert_gt(start, 0, "the journal has more than its header");
    cr_assert_eq(truncate(path, (off_t)(start + (n - start) / 2)), 0);
    return count_lines(text);
}

Test(resume, a_cut_last_line_is_warned_about_once_by_its_number)
{
    result r = kb("run " GOOD PP " -o out -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    int line = cut_last_line("out");
    cr_assert_eq(line, 4, "a header and 3 points");
    r = kb("run " GOOD PP " -o out -q --resume");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_eq(count_of(r.err, "warning"), 1, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "journal.jsonl"), "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "line 4"), "stderr: %s", r.err);
}

Test(resume, a_cut_last_line_resumes_to_the_uninterrupted_rows)
{
    result r = kb("run " GOOD PP " -o whole -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    r = kb("run " GOOD PP " -o out -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cut_last_line("out");
    r = kb("run " GOOD PP " -o out -q --resume");
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *got = results_rows("out");
    assert_same_rows(results_rows("whole"), got, "after the cut");
    assert_keys_once(got, "after the cut");
}

/* The sweep into tmp/out, with one SIGINT once two points are journaled;
   returns how it ended and the k of "interrupted after k of N". */
static result interrupted_sweep(int *k, int *of)
{
    double t0 = now_s();
    pid_t pid = start("run " SWEEP PP " -o out -q", 0);
    double end = t0 + COMMAND_LIMIT_S;
    while (journal_lines("out") < 3 && now_s() < end && waitpid(pid, NULL, WNOHANG) == 0)
        sleep_s(0.002);
    cr_assert_geq(journal_lines("out"), 3, "no point journaled");
    cr_assert_eq(kill(pid, SIGINT), 0, "kbench ended before the signal");
    result r = collect(finish(pid, COMMAND_LIMIT_S), now_s() - t0);
    *k = *of = -1;
    const char *s = strstr(r.err, "interrupted after ");
    if (s)
        sscanf(s, "interrupted after %d of %d points", k, of);
    return r;
}

Test(resume, one_sigint_exits_130_after_saying_how_far_it_got)
{
    int k, of;
    result r = interrupted_sweep(&k, &of);
    cr_assert_eq(r.code, 130, "exit %d: %s", r.code, r.err);
    cr_assert_eq(of, SWEEP_POINTS, "stderr: %s", r.err);
    cr_assert_geq(k, 2, "stderr: %s", r.err);
    cr_assert_lt(k, SWEEP_POINTS, "stderr: %s", r.err);
}

Test(resume, an_interrupted_runs_results_json_is_whole_with_the_finished_rows)
{
    int k, of;
    result r = interrupted_sweep(&k, &of);
    cr_assert_eq(r.code, 130, "exit %d: %s", r.code, r.err);
    cr_assert_geq(k, 1, "stderr: %s", r.err);
    json_t *doc = load_results("out");
    json_t *rows = rows_of(doc);
    cr_assert_eq(json_array_size(rows), (size_t)k * SWEEP_VARIANTS, "%d points finished", k);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
        cr_assert_str_eq(status_of(row), "pass", "%s", str_of(row, "key"));
    cr_assert_eq(json_integer_value(json_object_get(doc, "exit_code")), 130);
}

/* Lines of text that end in a line break (a torn last line does not). */
static int whole_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(resume, an_interrupted_runs_csv_and_markdown_are_whole)
{
    int k, of;
    result r = interrupted_sweep(&k, &of);
    cr_assert_eq(r.code, 130, "exit %d: %s", r.code, r.err);
    cr_assert_geq(k, 1, "stderr: %s", r.err);
    /* The CSV: its header and one whole line per finished row. */
    const char *csv = slurp(in_tmp("out/results.csv"));
    size_t len = strlen(csv);
    cr_assert_gt(len, 0);
    cr_assert_eq(csv[len - 1], '\n', "the CSV ends on a whole row: %s", csv);
    cr_assert_eq(whole_lines(csv), 1 + k * SWEEP_VARIANTS, "%d points finished: %s", k, csv);
    /* The markdown: every finished point's table, then the summary with
       the exit code. */
    const char *md = slurp(in_tmp("out/results.md"));
    len = strlen(md);
    cr_assert_gt(len, 0);
    cr_assert_eq(md[len - 1], '\n', "%s", md);
    cr_assert_not_null(strstr(md, "exit code 130"), "%s", md);
    int points = 0;
    for (const char *h = md; (h = strstr(h, "\n### ")) != NULL; h++)
        points++;
    cr_assert_eq(points, k, "%d points finished: %s", k, md);
}

Test(resume, an_interrupted_run_finishes_with_resume)
{
    int k, of;
    result r = interrupted_sweep(&k, &of);
    cr_assert_eq(r.code, 130, "exit %d: %s", r.code, r.err);
    r = kb("run " SWEEP PP " -o out -q --resume");
    cr_assert_eq(r.code, 0, "exit %d: %s", r.code, r.err);
    json_t *rows = results_rows("out");
    cr_assert_eq(json_array_size(rows), SWEEP_POINTS * SWEEP_VARIANTS);
    assert_keys_once(rows, "after --resume");
}

/* A plan, and the same plan with a fourth point after (more) or before
   (earlier) the others. */
#define PLAN_HEAD                                                                          \
    "[global]\nwarmup = 1\nruns = 3\nbudget = 1s\nseed = 7\n"                               \
    "[plan]\nplugin = crash\nvariants = good\n"
static const char plan_ini[] = PLAN_HEAD "n = 100, 200, 300\n";
static const char more_ini[] = PLAN_HEAD "n = 100, 200, 300, 400\n";
static const char earlier_ini[] = PLAN_HEAD "n = 50, 100, 200, 300\n";

Test(resume, accept_keeps_the_points_common_to_both_plans)
{
    write_file("plan.ini", plan_ini);
    result r = kb("run plan.ini" PP " -o out -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_int_t first = json_integer_value(
        json_object_get(must_row(results_rows("out"), "plan", "good", 100), "worker_pid"));
    write_file("plan.ini", more_ini);
    r = kb("run plan.ini" PP " -o out --resume=accept");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "3 of 4 points were finished already"), "stderr: %s", r.err);
    json_t *rows = results_rows("out");
    cr_assert_eq(json_array_size(rows), 4);
    const long long ns[] = {100, 200, 300};
    for (size_t k = 0; k < 3; k++)
        cr_assert_eq(json_integer_value(
                         json_object_get(must_row(rows, "plan", "good", ns[k]), "worker_pid")),
                     first, "n=%lld ran again", ns[k]);
    json_t *added = must_row(rows, "plan", "good", 400);
    cr_assert_str_eq(status_of(added), "pass");
    cr_assert_neq(json_integer_value(json_object_get(added, "worker_pid")), first);
}

/* A journal written on another GPU model: its points run again, and the
   resume says why. */
Test(resume, journaled_points_of_another_gpu_model_run_again_and_are_named)
{
    write_file("plan.ini", plan_ini);
    result r = kb("run plan.ini" PP " -o out -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_int_t first = json_integer_value(
        json_object_get(must_row(results_rows("out"), "plan", "good", 100), "worker_pid"));
    /* The journal as another machine would have written it. */
    char *path = in_tmp("out/journal.jsonl");
    char *text = slurp(path);
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "sed -i 's/\"gpu_model\":\"none\"/\"gpu_model\":\"Other GPU\"/' '%s'",
                          path),
                 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    cr_assert_str_neq(slurp(path), text, "the journal was not changed");
    r = kb("run plan.ini" PP " -o out --resume");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "0 of 3 points were finished already"), "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "ran on another GPU model (Other GPU"), "stderr: %s", r.err);
    cr_assert_neq(json_integer_value(json_object_get(must_row(results_rows("out"), "plan", "good",
                                                              100),
                                                     "worker_pid")),
                  first, "the point of another GPU model was not run again");
}

Test(resume, accept_matches_journaled_points_by_their_parameters)
{
    write_file("plan.ini", earlier_ini);
    result r = kb("run plan.ini" PP " -o whole -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    write_file("plan.ini", plan_ini);
    r = kb("run plan.ini" PP " -o out -q");
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_int_t first = json_integer_value(
        json_object_get(must_row(results_rows("out"), "plan", "good", 100), "worker_pid"));
    write_file("plan.ini", earlier_ini);
    r = kb("run plan.ini" PP " -o out -q --resume=accept");
    cr_assert_eq(r.code, 0, "%s", r.err);
    json_t *rows = results_rows("out");
    assert_same_rows(results_rows("whole"), rows, "n = 50 added before the journaled points");
    assert_keys_once(rows, "n = 50 added before the journaled points");
    const long long ns[] = {100, 200, 300};
    for (size_t k = 0; k < 3; k++)
        cr_assert_eq(json_integer_value(
                         json_object_get(must_row(rows, "plan", "good", ns[k]), "worker_pid")),
                     first, "n=%lld ran again", ns[k]);
}

/* ---- refusals ---- */

Test(refuse, resume_without_an_output_folder)
{
    result r = kb("run " GOOD PP " -q --resume");
    cr_assert_eq(r.code, 2, "exit %d: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "--resume needs -o"), "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
}

Test(refuse, resume_into_a_folder_without_a_journal)
{
    cr_assert_eq(mkdir(in_tmp("empty"), 0755), 0);
    result r = kb("run " GOOD PP " -q -o empty --resume");
    cr_assert_eq(r.code, 2, "exit %d: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "holds no journal.jsonl"), "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
}

Test(refuse, an_output_folder_that_holds_results)
{
    result r = kb("run " GOOD PP " -q -o out");
    cr_assert_eq(r.code, 0, "%s", r.err);
    r = kb("run " GOOD PP " -q -o out");
    cr_assert_eq(r.code, 2, "exit %d: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "holds an earlier run"), "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
}

Test(refuse, force_starts_afresh_in_a_folder_that_holds_results)
{
    result r = kb("run " GOOD PP " -q -o out");
    cr_assert_eq(r.code, 0, "%s", r.err);
    r = kb("run " GOOD PP " -q -o out --force");
    cr_assert_eq(r.code, 0, "exit %d: %s", r.code, r.err);
    cr_assert_eq(json_array_size(results_rows("out")), 6);
}

Test(refuse, resume_with_force)
{
    result r = kb("run " GOOD PP " -q -o out --resume --force");
    cr_assert_eq(r.code, 2, "exit %d: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "--resume and --force"), "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
}

Test(refuse, resume_with_a_value_other_than_accept)
{
    result r = kb("run " GOOD PP " -q -o out --resume=bogus");
    cr_assert_eq(r.code, 2, "exit %d: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "'bogus'"), "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "--resume"), "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
}

Test(refuse, isolate_other_than_point)
{
    result r = kb("run " GOOD PP " -q --isolate banana");
    cr_assert_eq(r.code, 2, "exit %d: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "--isolate"), "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "'banana'"), "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
}

Test(refuse, a_journal_with_a_garbage_line_in_the_middle)
{
    result r = kb("run " GOOD PP " -q -o out");
    cr_assert_eq(r.code, 0, "%s", r.err);
    /* Line 2 of 4 becomes garbage. */
    char *path = in_tmp("out/journal.jsonl");
    char *text = slurp(path);
    char *l2 = strchr(text, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fwrite(text, 1, (size_t)(l2 - text), f);
    fputs("garbage, not a journal line\n", f);
    fputs(l3, f);
    fclose(f);
    r = kb("run " GOOD PP " -q -o out --resume");
    cr_assert_eq(r.code, 2, "exit %d: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "journal.jsonl:2:"), "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
}

Test(refuse, a_journal_of_another_plan)
{
    write_file("plan.ini", plan_ini);
    result r = kb("run plan.ini" PP " -q -o out");
    cr_assert_eq(r.code, 0, "%s", r.err);
    write_file("plan.ini", more_ini);
    r = kb("run plan.ini" PP " -q -o out --resume");
    cr_assert_eq(r.code, 2, "exit %d: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "another plan"), "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
}

Test(refuse, a_refused_resume_leaves_the_earlier_results_as_they_were)
{
    write_file("plan.ini", plan_ini);
    result r = kb("run plan.ini" PP " -q -o out");
    cr_assert_eq(r.code, 0, "%s", r.err);
    const char *const files[] = {"out/results.json", "out/results.csv", "out/results.md",
                                 "out/journal.jsonl"};
    char *before[4];
    for (size_t i = 0; i < 4; i++)
        before[i] = slurp(in_tmp(files[i]));
    write_file("plan.ini", more_ini);
    r = kb("run plan.ini" PP " -q -o out --resume");
    cr_assert_eq(r.code, 2, "exit %d: %s", r.code, r.err);
    for (size_t i = 0; i < 4; i++)
        cr_assert_str_eq(slurp(in_tmp(files[i])), before[i], "%s changed", files[i]);
}

Test(refuse, a_shards_journal_resumed_as_the_whole_plan)
{
    result r = kb("run " GOOD PP " -q -o out --shard 0/2");
    cr_assert_eq(r.code, 0, "%s", r.err);
    r = kb("run " GOOD PP " -q -o out --resume");
    cr_assert_eq(r.code, 2, "exit %d: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "shard 0/2"), "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "whole plan"), "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
}

/* With at most 10 open files kbench itself has what it needs (its pipes
   are below 10), but a worker cannot put its channel above descriptor 10
   before the exec: it dies before it says hello. */
Test(refuse, a_worker_that_cannot_start_is_a_system_error)
{
    result r = kb_limited("run " GOOD PP " -q", 10);
    cr_assert_eq(r.code, 3, "exit %d: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "a worker could not start"), "stderr: %s", r.err);
}

/* ---- compare ---- */

/* Each crashed row of rows made a clean one: the measurements of the good
   row at its point. */
static void make_clean(json_t *rows)
{
    static const char *const taken[] = {"status", "reason", "runs", "time_s", "samples_s",
                                        "noise", "gbps", "gflops", "items_per_s", "speedup",
                                        "check"};
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (strcmp(status_of(row), "crashed") != 0)
            continue;
        json_t *good = must_row(rows, str_of(row, "experiment"), "good", n_of(row));
        cr_assert_str_eq(status_of(good), "pass");
        for (size_t k = 0; k < sizeof taken / sizeof *taken; k++)
            json_object_set(row, taken[k], json_object_get(good, taken[k]));
    }
}

Test(compare, a_crashed_row_against_a_clean_run_fails_the_compare)
{
    result r;
    contain_run(&r);
    cr_assert_eq(r.code, 1, "%s", r.err);
    json_t *base = json_deep_copy(load_results("out"));
    keep_json(base);
    make_clean(rows_of(base));
    cr_assert_eq(json_dump_file(base, in_tmp("clean.json"), JSON_INDENT(1)), 0);
    r = kb("compare clean.json out/results.json");
    cr_assert_eq(r.code, 1, "exit %d: %s%s", r.code, r.out, r.err);
    cr_assert_not_null(strstr(r.out, "crashed in new"), "stdout: %s", r.out);
}

/* On a terminal the progress line shows the time so far and, once a point
   is done, the time left.  script(1) gives kbench a terminal. */
Test(progress, the_progress_line_shows_the_time_and_what_is_left)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd,
                          "cd '%s' && KBENCH_PLUGIN_PATH= script -qec \"'%s' run '%s'" PP
                          " -o tty\" /dev/null > tty.txt 2>&1",
                          tmp, KBENCH, SWEEP),
                 0);
    int st = system(cmd);
    free(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "kbench under script: status %d", st);
    char *text = slurp(in_tmp("tty.txt"));
    cr_assert_not_null(strstr(text, "[1/20 points, 0:00] "), "no first progress line: %.600s",
                       text);
    cr_assert_not_null(strstr(text, " left] "), "no time left on any progress line: %.600s",
                       text);
}
