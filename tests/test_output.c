/*
 * test_output.c -- what `kbench run -o DIR` leaves when its outputs fail
 * and how soon results.json follows the run:
 *
 * - a disk that fills up during the run (a small tmpfs mounted by the
 *   test; skipped, saying why, where mount is not permitted): every file
 *   ends on a whole row, each failure is one sentence naming its file and
 *   the error, the exit code is 3, a journal that cannot be written stops
 *   the run, and --resume with room writes the results whole;
 * - an output that is /dev/full (a symlink in DIR, no mount needed): one
 *   sentence, and the run goes on for the journal and the other files;
 * - kbc_write_whole under a file size limit: a piece that does not fit is
 *   cut off;
 * - results.json keeps up: a point held back is written by a tick, and a
 *   long point does not keep the finished ones out of the file.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report.h"
#include "util.h"

#define KBENCH KBENCH_BINARY_DIR "/kbench"
#define PP " --plugin-path " KBENCH_FIXTURE_DIR "/crash"
#define GOOD KBENCH_SOURCE_DIR "/tests/fixtures/crash/good.ini"
/* good.ini: 3 points of good and good2. */
#define GOOD_POINTS 3

#define COMMAND_LIMIT_S 60.0

static char tmp[256];
static char small[300]; /* the tmpfs, when a test mounted one */
static int mounted;

static char *kept[64];
static size_t n_kept;

static char *keep(char *s)
{
    cr_assert_lt(n_kept, sizeof kept / sizeof *kept, "too many texts kept");
    kept[n_kept++] = s;
    return s;
}

static void make_tmp(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/kbench-output-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    mounted = 0;
}

static void remove_tmp(void)
{
    if (mounted && umount2(small, MNT_DETACH) != 0)
        cr_log_warn("cannot unmount %s: %s", small, strerror(errno));
    mounted = 0;
    while (n_kept > 0)
        free(kept[--n_kept]);
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "rm -rf '%s'", tmp), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

TestSuite(full, .init = make_tmp, .fini = remove_tmp);
TestSuite(fault, .init = make_tmp, .fini = remove_tmp);
TestSuite(pace, .init = make_tmp, .fini = remove_tmp);

/* ---- files ---- */

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

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* Mounts a tmpfs of `size` (mount's size= option) at tmp/small, or skips
   the test with the reason. */
static void mount_small(const char *size)
{
    snprintf(small, sizeof small, "%s/small", tmp);
    cr_assert_eq(mkdir(small, 0755), 0, "%s", strerror(errno));
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s", size);
    if (mount("tmpfs", small, "tmpfs", 0, opts) != 0)
        cr_skip_test("a small tmpfs cannot be mounted here (mount: %s); the disk-full tests "
                     "need root with CAP_SYS_ADMIN",
                     strerror(errno));
    mounted = 1;
}

static void grow_small(const char *size)
{
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s", size);
    cr_assert_eq(mount("tmpfs", small, "tmpfs", MS_REMOUNT, opts), 0, "remount: %s",
                 strerror(errno));
}

/* ---- running kbench ---- */

typedef struct result {
    int code;
    char *out, *err;
} result;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Starts `kbench ARGS` in tmp: stdout to out.txt (or to stdout_path),
   stderr to err.txt; the shell execs kbench. */
static pid_t start_to(const char *args, const char *stdout_path)
{
    char *cmd = NULL, *out = stdout_path ? keep(strdup(stdout_path)) : in_tmp("out.txt");
    char *err = in_tmp("err.txt");
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
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    free(cmd);
    return pid;
}

static result finish(pid_t pid)
{
    double end = now_s() + COMMAND_LIMIT_S;
    int st = 0;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        cr_assert_eq(r, 0, "waitpid: %s", strerror(errno));
        if (now_s() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            cr_assert_fail("kbench ran longer than %.0f s", COMMAND_LIMIT_S);
        }
        sleep_s(0.005);
    }
    cr_assert(WIFEXITED(st), "kbench did not exit normally (wait status %#x)", st);
    result r = {.code = WEXITSTATUS(st)};
    r.out = slurp(in_tmp("out.txt"));
    r.err = slurp(in_tmp("err.txt"));
    return r;
}

static result kb(const char *args)
{
    return finish(start_to(args, NULL));
}

/* ---- what a whole file looks like ---- */

/* Fields of one CSV line (quotes as RFC 4180), or -1 when the text ends
   inside quotes.  *next: the next line. */
static int csv_fields(const char *line, const char **next)
{
    int n = 1, quoted = 0;
    const char *p = line;
    for (; *p; p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (*p == ',' && !quoted)
            n++;
        else if (*p == '\n' && !quoted)
            break;
    }
    *next = *p ? p + 1 : p;
    return quoted || !*p ? -1 : n;
}

/* results.csv ends on a whole row: every line ends, and has the header's
   number of fields.  Returns the rows. */
static int assert_csv_whole(const char *dir)
{
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s/results.csv", dir), 0);
    const char *text = slurp(keep(path));
    if (!*text)
        return 0;
    cr_assert(ends_with(text, "\n"), "results.csv ends inside a row: ...%s",
              text + (strlen(text) > 80 ? strlen(text) - 80 : 0));
    const char *p = text, *next;
    int want = csv_fields(p, &next), rows = -1;
    for (; *p; p = next, rows++) {
        int got = csv_fields(p, &next);
        cr_assert_eq(got, want, "results.csv line %d has %d fields, the header %d", rows + 2,
                     got, want);
    }
    return rows;
}

/* results.md ends on a whole point: each heading has its table, and the
   file ends after a blank line or on the summary. */
static void assert_md_whole(const char *dir)
{
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s/results.md", dir), 0);
    const char *text = slurp(keep(path));
    if (!*text)
        return;
    const char *last = text + strlen(text) - 1;
    while (last > text && last[-1] != '\n')
        last--;
    cr_assert(ends_with(text, "\n\n") || strncmp(last, "summary:", 8) == 0 ||
                  strncmp(last, "skipped:", 8) == 0,
              "results.md is cut: ...%s", text + (strlen(text) > 80 ? strlen(text) - 80 : 0));
    /* The points' headings and tables, before the sweep summaries. */
    char *points = strdup(text);
    char *sweeps = strstr(points, "\n## Sweep of ");
    if (sweeps)
        *sweeps = '\0';
    cr_assert_eq(count_of(points, "\n### "), count_of(points, "\n|---"),
                 "a heading of results.md lacks its table");
    free(points);
}

/* results.json, when there is one, is a whole document.  Returns its
   rows. */
static int assert_json_whole(const char *dir)
{
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s/results.json", dir), 0);
    keep(path);
    if (access(path, F_OK) != 0)
        return 0;
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    cr_assert_not_null(doc, "results.json does not parse: %s", je.text);
    int n = (int)json_array_size(json_object_get(doc, "results"));
    json_decref(doc);
    return n;
}

/* journal.jsonl ends on a whole line and every line is JSON.  Returns its
   entries (lines after the header). */
static int assert_journal_whole(const char *dir)
{
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s/journal.jsonl", dir), 0);
    const char *text = slurp(keep(path));
    cr_assert(*text, "there is no journal");
    cr_assert(ends_with(text, "\n"), "the journal ends inside a line");
    int lines = 0;
    for (const char *p = text; *p; lines++) {
        const char *nl = strchr(p, '\n');
        json_error_t je;
        json_t *o = json_loadb(p, (size_t)(nl - p), 0, &je);
        cr_assert_not_null(o, "journal line %d is not JSON: %s", lines + 1, je.text);
        json_decref(o);
        p = nl + 1;
    }
    return lines - 1;
}

/* ---- a disk that fills up ---- */

/* 400 quick points: far more than 64 KiB of results. */
static const char big_ini[] = "[global]\n"
                              "warmup = 0\n"
                              "runs = 2\n"
                              "budget = 1s\n"
                              "seed = 7\n"
                              "[sweep]\n"
                              "plugin = crash\n"
                              "variants = good, good2\n"
                              "n = 1..400:+1\n";
#define BIG_POINTS 400

static result fill_up(void)
{
    mount_small("64k");
    write_file("big.ini", big_ini);
    return kb("run big.ini -q -o small/out" PP);
}

Test(full, every_file_ends_on_a_whole_row)
{
    result r = fill_up();
    cr_assert_neq(r.code, 0, "the run did not fill the disk: %s", r.err);
    char *dir = in_tmp("small/out");
    assert_csv_whole(dir);
    assert_md_whole(dir);
    assert_json_whole(dir);
    assert_journal_whole(dir);
}

Test(full, each_failure_is_one_sentence_naming_its_file)
{
    result r = fill_up();
    cr_assert_gt(count_lines(r.err), 0, "nothing was said");
    const char *files[] = {"results.csv", "results.json", "results.md", "journal.jsonl"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char name[64];
        snprintf(name, sizeof name, "cannot write small/out/%s", files[i]);
        cr_assert_leq(count_of(r.err, name), 1, "%s is said more than once: %s", files[i],
                      r.err);
    }
    for (const char *l = r.err; *l;) {
        const char *nl = strchr(l, '\n');
        cr_assert_not_null(nl);
        cr_assert_eq(strncmp(l, "kbench: cannot write ", 21), 0, "%.*s", (int)(nl - l), l);
        cr_assert_not_null(memmem(l, (size_t)(nl - l), "No space left on device", 23),
                           "%.*s", (int)(nl - l), l);
        l = nl + 1;
    }
}

Test(full, a_full_disk_exits_three)
{
    result r = fill_up();
    cr_assert_eq(r.code, 3, "%s", r.err);
}

/* The journal is what --resume and the results files come from: once it
   cannot be written, no point starts. */
Test(full, a_journal_that_cannot_be_written_stops_the_run)
{
    result r = fill_up();
    cr_assert_not_null(strstr(r.err, "journal.jsonl: No space left on device; no more points "
                                     "start"),
                       "%s", r.err);
    int journaled = assert_journal_whole(in_tmp("small/out"));
    cr_assert_lt(journaled, BIG_POINTS);
    /* The point whose entry failed is still shown; none after it ran. */
    cr_assert_eq(count_of(r.out, "point "), journaled + 1, "%s", r.out);
}

Test(full, resume_with_room_writes_every_result_whole)
{
    fill_up();
    grow_small("16m");
    result r = kb("run big.ini -q -o small/out --resume" PP);
    cr_assert_eq(r.code, 0, "%s", r.err);
    char *dir = in_tmp("small/out");
    cr_assert_eq(assert_journal_whole(dir), BIG_POINTS);
    cr_assert_eq(assert_csv_whole(dir), 2 * BIG_POINTS);
    cr_assert_eq(assert_json_whole(dir), 2 * BIG_POINTS);
}

/* ---- an output that is /dev/full ---- */

/* DIR/name is a symlink to /dev/full; the run starts afresh there. */
static result run_with_full(const char *name)
{
    cr_assert_eq(mkdir(in_tmp("out"), 0755), 0);
    char link[64];
    snprintf(link, sizeof link, "out/%s", name);
    cr_assert_eq(symlink("/dev/full", in_tmp(link)), 0, "%s", strerror(errno));
    return kb("run " GOOD " -q -o out --force" PP);
}

Test(fault, a_csv_that_cannot_be_written_is_one_sentence)
{
    result r = run_with_full("results.csv");
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench: cannot write out/results.csv: No space left on "
                                     "device"),
                       "%s", r.err);
    cr_assert_not_null(strstr(r.err, "the run goes on"), "%s", r.err);
}

Test(fault, a_csv_that_cannot_be_written_exits_three)
{
    result r = run_with_full("results.csv");
    cr_assert_eq(r.code, 3, "%s", r.err);
}

Test(fault, the_run_goes_on_for_the_journal_and_the_other_files)
{
    run_with_full("results.csv");
    char *dir = in_tmp("out");
    cr_assert_eq(assert_journal_whole(dir), GOOD_POINTS);
    cr_assert_eq(assert_json_whole(dir), 2 * GOOD_POINTS);
    assert_md_whole(dir);
    cr_assert_not_null(strstr(slurp(in_tmp("out/results.md")), "summary: 6 pass"));
}

Test(fault, a_markdown_that_cannot_be_written_leaves_the_csv_whole)
{
    result r = run_with_full("results.md");
    cr_assert_eq(r.code, 3, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "cannot write out/results.md: No space left on device"),
                       "%s", r.err);
    cr_assert_eq(assert_csv_whole(in_tmp("out")), 2 * GOOD_POINTS);
}

/* A table that cannot reach stdout is said once, as kbench exits, and the
   files are written whole. */
Test(fault, a_table_on_a_full_stdout_is_one_sentence)
{
    result r = finish(start_to("run " GOOD " -q -o out" PP, "/dev/full"));
    cr_assert_eq(r.code, 3, "%s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench: cannot write to standard output"), "%s", r.err);
    cr_assert_eq(assert_csv_whole(in_tmp("out")), 2 * GOOD_POINTS);
}

/* A piece that does not fit under a file size limit (EFBIG, no mount
   needed) leaves the file at the end of the last whole piece. */
Test(fault, a_piece_that_does_not_fit_is_cut_off)
{
    char *path = in_tmp("pieces");
    char piece[100];
    memset(piece, 'x', sizeof piece - 1);
    piece[sizeof piece - 1] = '\n';
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {1050, 1050};
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(2);
        int64_t end = 0;
        for (int i = 0; i < 20; i++)
            if (kbc_write_whole(fd, &end, piece, sizeof piece) != 0)
                _exit(errno == EFBIG && end == 1000 ? 0 : 1);
        _exit(3);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the writer said %d",
              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_assert_eq(sb.st_size, 1000, "the file holds %lld bytes, not 10 whole pieces",
                 (long long)sb.st_size);
}

/* A sink says nothing itself: its sentence is for whoever runs it. */
Test(fault, a_sink_that_cannot_write_keeps_its_sentence)
{
    kbc_sink s;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_report_csv("/dev/full", &s, &d), 0, "%s", d.msg);
    kbc_run_info info = {.command_line = "test"};
    cr_assert_null(s.error(s.ctx));
    cr_assert_eq(s.begin(s.ctx, &info), -1);
    cr_assert_str_eq(s.error(s.ctx), "cannot write /dev/full: No space left on device; it "
                                     "holds no row");
    s.destroy(s.ctx);
}

/* ---- results.json keeps up ---- */

static kbc_record one_record(int point)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.experiment, sizeof r.experiment, "e");
    snprintf(r.plugin, sizeof r.plugin, "p");
    snprintf(r.variant, sizeof r.variant, "v");
    r.n_params = 1;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = (uint64_t)point + 1;
    snprintf(r.params[0].text, sizeof r.params[0].text, "%d", point + 1);
    r.point = (uint64_t)point;
    r.n_points = 2;
    r.outcome = KBC_PASS;
    return r;
}

static size_t rows_in(const char *path)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    cr_assert_not_null(doc, "%s: %s", path, je.text);
    size_t n = json_array_size(json_object_get(doc, "results"));
    json_decref(doc);
    return n;
}

/* A point that comes right after another is held back (rewriting the
   whole document after every point would cost time quadratic in the
   rows), and a tick writes it once its time has come.  "Right after" is
   a matter of timing: on a loaded machine the process may stop between
   the two points for longer than the rule waits, so the pair is tried on
   up to five fresh files and one of them must hold the second point back
   (a rule that never holds back fails all five).  The tick is then
   repeated until the point's time has come, which a slow write delays. */
Test(pace, a_point_held_back_is_written_by_a_tick)
{
    kbc_sink s;
    kbc_run_info info = {.command_line = "test"};
    kbc_record a = one_record(0), b = one_record(1);
    char *path = NULL;
    int held = 0;
    for (int attempt = 0; attempt < 5 && !held; attempt++) {
        if (attempt > 0)
            s.destroy(s.ctx);
        char name[32];
        snprintf(name, sizeof name, "results-%d.json", attempt);
        path = in_tmp(name);
        kbc_diag d = {{0}};
        cr_assert_eq(kbc_report_json(path, &s, &d), 0, "%s", d.msg);
        cr_assert_eq(s.begin(s.ctx, &info), 0);
        cr_assert_eq(s.point(s.ctx, &a, 1), 0);
        cr_assert_eq(s.point(s.ctx, &b, 1), 0);
        held = rows_in(path) == 1;
    }
    cr_assert(held, "the second point came at once and was written at once, five times");
    cr_assert_not_null(s.tick);
    size_t rows = 1;
    for (int tries = 0; tries < 100 && rows < 2; tries++) {
        sleep_s(0.1);
        cr_assert_eq(s.tick(s.ctx), 0);
        rows = rows_in(path);
    }
    cr_assert_eq(rows, 2, "no tick wrote the point held back in 10 s");
    s.destroy(s.ctx);
}

/* Five quick points, then one of about 4 s: while it runs, results.json
   holds the five, within 2 s of their end. */
static const char long_ini[] = "[global]\n"
                               "warmup = 0\n"
                               "runs = 3\n"
                               "budget = 60s\n"
                               "seed = 7\n"
                               "[quick]\n"
                               "plugin = crash\n"
                               "variants = good\n"
                               "n = 1, 2, 3, 4, 5\n"
                               "[long]\n"
                               "plugin = crash\n"
                               "variants = slowpoke\n"
                               "runs = 200\n"
                               "n = 1\n";

Test(pace, results_json_holds_the_finished_points_while_a_long_one_runs)
{
    write_file("long.ini", long_ini);
    pid_t pid = start_to("run long.ini -q -o out" PP, NULL);
    char *journal = in_tmp("out/journal.jsonl"), *json = in_tmp("out/results.json");
    /* The five quick points are journaled before they are reported. */
    double t0 = now_s();
    while (count_lines(slurp(journal)) < 1 + 5 && now_s() - t0 < 30)
        sleep_s(0.01);
    cr_assert_geq(count_lines(slurp(journal)), 6, "the quick points did not finish");
    /* Normally within 0.2 s (ten times a write of a few milliseconds);
       a loaded machine writes slower, so the test waits for as long as
       the long point runs.  The rows are read before the worker is seen
       running, so they were there while it ran. */
    double seen = now_s();
    size_t rows = 0;
    int running;
    for (;;) {
        rows = rows_in(json);
        running = waitpid(pid, NULL, WNOHANG) == 0;
        if (!running || rows >= 5)
            break;
        sleep_s(0.02);
    }
    cr_assert(running, "the long point ended before results.json held the 5 finished rows "
                       "(%zu of them after %.1f s)", rows, now_s() - seen);
    cr_assert_eq(rows, 5, "results.json holds %zu of the 5 finished rows", rows);
    result r = finish(pid);
    cr_assert_eq(r.code, 0, "%s", r.err);
}
