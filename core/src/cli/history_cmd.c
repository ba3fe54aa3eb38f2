/*
 * history_cmd.c -- the history commands: each subcommand is one row of a
 * table (its name, its arguments, the options it takes, its handler), so
 * that usage errors are found before the database is opened.
 */
#define _GNU_SOURCE
#include "history_cmd.h"

#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"
#include "history.h"
#include "stepfit.h"
#include "results_read.h"
#include "text.h"
#include "util.h"
#include "version.h"

/* The options a subcommand takes. */
enum { O_COMMIT = 1, O_SINCE = 2, O_THRESHOLD = 4, O_CSV = 8, O_INTERRUPTED = 16 };

typedef struct hctx {
    const kbc_history_opts *o;
    const char *const *args; /* after the subcommand */
    size_t n;
    FILE *out, *err;
    char *db;                /* the database's path */
} hctx;

typedef struct subcommand {
    const char *name;
    size_t min_args, max_args; /* max SIZE_MAX: any number */
    unsigned options;
    const char *args_help;     /* what the arguments are, for errors */
    int (*run)(hctx *c);
} subcommand;

static int say(FILE *err, const char *msg)
{
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '.' || msg[n - 1] == ' '))
        n--;
    fprintf(err, "kbench: %.*s.\n", (int)n, msg);
    return 0;
}

static int open_db(hctx *c, int write, kbc_history **h)
{
    kbc_diag d = {{0}};
    int code = kbc_history_open(c->db, write, h, &d);
    if (code)
        say(c->err, d.msg);
    return code;
}

/* The commit that --commit names: resolved by git to its full hash and
   time where the current folder is a checkout that knows it, else kept as
   typed (placed at its run's start). */
static int option_commit(const char *rev, kbc_hist_commit *c, FILE *err)
{
    memset(c, 0, sizeof *c);
    if (!kbc_commit_rev_ok(rev)) {
        fprintf(err, "kbench: option --commit wants a revision (letters, digits and ._/~^@-, "
                     "not starting with '-'), not '%s'; see kbench --help.\n",
                kbc_text_visible(rev));
        return KBC_EXIT_USAGE;
    }
    if (kbc_commit_from_git(rev, c) != 0) {
        snprintf(c->rev, sizeof c->rev, "%s", rev);
        c->time = 0;
    }
    snprintf(c->source, sizeof c->source, "option");
    return 0;
}

/* Adds one run and says what happened.  Returns 0 or an exit code; an
   interrupted run refused is skipped with a note instead when skip_cut
   (a rebuild: its plain add refused it too). */
static int add_one(kbc_history *h, const char *path, const kbc_hist_commit *commit,
                   unsigned flags, int skip_cut, FILE *out, FILE *err)
{
    kbc_diag d = {{0}};
    int added = 0;
    int code = kbc_history_add(h, path, commit, flags, &added, &d);
    if (code && added == -1 && skip_cut) {
        fprintf(out, "%s: skipped: the run was interrupted (--interrupted adds it)\n",
                kbc_text_visible(path));
        return 0;
    }
    if (code) {
        say(err, d.msg);
        return code;
    }
    fprintf(out, "%s: %s\n", kbc_text_visible(path), added ? "added" : "already there");
    /* A commit given for a new run is kept beside its file, so that a
       rebuilt history tags it the same way. */
    if (added && commit) {
        const char *slash = strrchr(path, '/');
        char *dir = slash ? kbc_xstrndup(path, (size_t)(slash - path) + (slash == path))
                          : kbc_xstrdup(".");
        if (kbc_commit_write(dir, commit) != 0)
            fprintf(err, "kbench: warning: cannot keep the commit in %s/commit (%s); a "
                         "rebuilt history will tag this run with kbench's revision.\n",
                    kbc_text_visible(dir), strerror(errno));
        free(dir);
    }
    return 0;
}

static int sub_add(hctx *c)
{
    kbc_hist_commit commit, *cp = NULL;
    int code;
    if (c->o->commit) {
        if ((code = option_commit(c->o->commit, &commit, c->err)) != 0)
            return code;
        cp = &commit;
    }
    kbc_history *h;
    if ((code = open_db(c, 1, &h)) != 0)
        return code;
    int worst = 0;
    for (size_t i = 0; i < c->n; i++) {
        char *p = kbc_results_path(c->args[i]);
        code = add_one(h, p, cp, c->o->interrupted ? KBC_HIST_ADD_INTERRUPTED : 0, 0, c->out,
                       c->err);
        free(p);
        worst = code > worst ? code : worst;
    }
    kbc_history_close(h);
    return worst;
}

/* ---- rebuild: every results.json under the folders, into a new file
   that replaces the old one only once it is whole. ---- */

static char **found;
static size_t n_found, cap_found;

static int collect(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    const char *base = path + ftw->base;
    if (flag == FTW_F && strcmp(base, "results.json") == 0) {
        if (n_found == cap_found)
            found = kbc_xrealloc(found, (cap_found = cap_found ? 2 * cap_found : 16) *
                                            sizeof *found);
        found[n_found++] = kbc_xstrdup(path);
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Removes the SQLite log and index files of the database db. */
static void unlink_log(const char *db)
{
    char *wal = kbc_xasprintf("%s-wal", db), *shm = kbc_xasprintf("%s-shm", db);
    unlink(wal);
    unlink(shm);
    free(wal);
    free(shm);
}

static int sub_rebuild(hctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct stat st;
        if (stat(c->args[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(c->err, "kbench: kbench history rebuild takes folders of runs, and '%s' is "
                            "not one; see kbench --help.\n", kbc_text_visible(c->args[i]));
            return KBC_EXIT_USAGE;
        }
    }
    n_found = 0;
    for (size_t i = 0; i < c->n; i++)
        nftw(c->args[i], collect, 16, FTW_PHYS);
    qsort(found, n_found, sizeof *found, cmp_str);
    char *tmp = kbc_xasprintf("%s.rebuild-%d", c->db, (int)getpid());
    kbc_diag d = {{0}};
    kbc_history *h;
    int code = kbc_history_open(tmp, 1, &h, &d);
    if (code) {
        say(c->err, d.msg);
    } else {
        for (size_t i = 0; i < n_found && code == 0; i++)
            code = add_one(h, found[i], NULL,
                           c->o->interrupted ? KBC_HIST_ADD_INTERRUPTED : 0, 1, c->out, c->err);
        kbc_history_close(h);
    }
    /* The old file's log and index go with it; the new file has none
       left once closed. */
    if (code == 0) {
        unlink_log(c->db);
        if (rename(tmp, c->db) != 0) {
            fprintf(c->err, "kbench: cannot replace %s with the rebuilt history: %s.\n",
                    c->db, strerror(errno));
            code = KBC_EXIT_SYSTEM;
        } else {
            fprintf(c->out, "%s: rebuilt from %zu run%s\n", c->db, n_found,
                    n_found == 1 ? "" : "s");
        }
    }
    if (code) {
        unlink(tmp);
        unlink_log(tmp);
    }
    free(tmp);
    for (size_t i = 0; i < n_found; i++)
        free(found[i]);
    free(found);
    found = NULL;
    n_found = cap_found = 0;
    return code;
}

/* ---- reading ---- */

/* Opens the history for reading, runs read on it and closes it; returns
   read's exit code, or open_db's. */
static int reading(hctx *c, int (*read)(hctx *c, kbc_history *h))
{
    kbc_history *h;
    int code = open_db(c, 0, &h);
    if (code)
        return code;
    code = read(c, h);
    kbc_history_close(h);
    return code;
}

static int runs_in(hctx *c, kbc_history *h)
{
    kbc_hist_run *r;
    size_t n;
    kbc_diag d = {{0}};
    int code = kbc_history_runs(h, &r, &n, &d);
    if (code) {
        say(c->err, d.msg);
    } else if (c->o->csv) {
        fputs("run,started,commit,commit_source,kbench_git,host,rows,sha256,path\n", c->out);
        for (size_t i = 0; i < n; i++) {
            fprintf(c->out, "%lld,%s,", (long long)r[i].id, r[i].started);
            kbc_text_csv(c->out, r[i].commit);
            fprintf(c->out, ",%s,", r[i].commit_source);
            kbc_text_csv(c->out, r[i].kbench_git);
            fputc(',', c->out);
            kbc_text_csv(c->out, r[i].host);
            fprintf(c->out, ",%zu,%s,", r[i].n_rows, r[i].sha256);
            kbc_text_csv(c->out, r[i].path);
            fputc('\n', c->out);
        }
    } else {
        fprintf(c->out, "%5s  %-20s  %-12s  %-6s  %5s  %s\n", "run", "started", "commit",
                "from", "rows", "file");
        for (size_t i = 0; i < n; i++)
            fprintf(c->out, "%5lld  %-20s  %-12.12s  %-6s  %5zu  %s\n", (long long)r[i].id,
                    r[i].started, kbc_text_visible(r[i].commit), r[i].commit_source,
                    r[i].n_rows, kbc_text_visible(r[i].path));
        fprintf(c->out, "%zu run%s\n", n, n == 1 ? "" : "s");
    }
    if (code == 0)
        free(r);
    return code;
}

static int sub_runs(hctx *c)
{
    return reading(c, runs_in);
}

static void testbed_csv(FILE *f, const kbc_hist_testbed *t)
{
    fprintf(f, "%lld,", (long long)t->id);
    kbc_text_csv(f, t->gpu);
    fputc(',', f);
    kbc_text_csv(f, t->gpu_uuid);
    fprintf(f, ",%s,%s,%d,%s,%d,%d", t->driver, t->runtime, t->cccl, t->cublas, t->sm_max_mhz,
            t->mem_max_mhz);
}

#define TESTBED_CSV_HEAD "testbed,gpu,gpu_uuid,driver,runtime,cccl,cublas,sm_max_mhz,mem_max_mhz"

/* The testbeds of s[0..n), each once, as "testbed 3: NVIDIA ...". */
static void print_testbeds(FILE *f, const kbc_hist_series *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = s[k].testbed.id == s[i].testbed.id;
        if (seen)
            continue;
        char t[1024];
        kbc_hist_testbed_text(&s[i].testbed, t, sizeof t);
        fprintf(f, "testbed %lld: %s\n", (long long)s[i].testbed.id, kbc_text_visible(t));
    }
}

/* The series of key (NULL: all), or an exit code after saying why: an
   unknown key is named with the closest known one. */
/* Whether name, as compare shows a row ("experiment/swept values/variant",
   docs/cli.md), names the history's key "plugin/experiment/values/variant":
   the same experiment and variant, and each of its name=value pairs among
   the key's values. */
static int short_name_of(const char *name, const char *key)
{
    const char *p = strchr(key, '/');
    if (!p)
        return 0;
    const char *exp = p + 1, *vals = strchr(exp, '/'), *var = strrchr(key, '/');
    if (!vals || var == vals)
        return 0;
    const char *n1 = strchr(name, '/'), *nl = strrchr(name, '/');
    if (!n1)
        return 0;
    if ((size_t)(n1 - name) != (size_t)(vals - exp) || strncmp(name, exp, (size_t)(n1 - name)))
        return 0;
    if (strcmp(nl + 1, var + 1) != 0)
        return 0;
    if (n1 == nl)
        return 1; /* experiment/variant: no value swept */
    char *group = kbc_xstrndup(n1 + 1, (size_t)(nl - n1 - 1));
    char *have = kbc_xstrndup(vals + 1, (size_t)(var - vals - 1));
    int ok = 1;
    for (char *save = NULL, *kv = strtok_r(group, ",", &save); kv && ok;
         kv = strtok_r(NULL, ",", &save)) {
        size_t len = strlen(kv);
        const char *at = have;
        ok = 0;
        while ((at = strstr(at, kv))) {
            if ((at == have || at[-1] == ',') && (at[len] == ',' || at[len] == '\0')) {
                ok = 1;
                break;
            }
            at++;
        }
    }
    free(group);
    free(have);
    return ok;
}

/* The series whose key matches name as a glob (`*onepass`) or as
   compare's short name of a row, moved into *s; their count. */
static size_t series_matching(const char *name, kbc_hist_series *all, size_t n_all,
                              kbc_hist_series **s)
{
    int glob = strpbrk(name, "*?[") != NULL;
    size_t m = 0;
    *s = kbc_xcalloc(n_all ? n_all : 1, sizeof **s);
    for (size_t i = 0; i < n_all; i++)
        if (glob ? fnmatch(name, all[i].key, 0) == 0 : short_name_of(name, all[i].key)) {
            (*s)[m++] = all[i];
            all[i].key = NULL; /* moved */
        }
    return m;
}

static int load_series(hctx *c, kbc_history *h, const char *key, kbc_hist_series **s,
                       size_t *n)
{
    kbc_diag d = {{0}};
    int code = kbc_history_series(h, key, s, n, &d);
    if (code) {
        say(c->err, d.msg);
        return code;
    }
    if (!key || *n > 0)
        return 0;
    kbc_hist_series *all;
    size_t n_all;
    const char *near = NULL;
    if (kbc_history_series(h, NULL, &all, &n_all, &d) == 0) {
        /* Not a key: a glob, or a row's name as compare shows it. */
        kbc_hist_series *matched;
        size_t m = series_matching(key, all, n_all, &matched);
        if (m > 0) {
            kbc_hist_series_free(all, n_all);
            free(*s);
            *s = matched;
            *n = m;
            return 0;
        }
        free(matched);
        const char **keys = kbc_xcalloc(n_all ? n_all : 1, sizeof *keys);
        for (size_t i = 0; i < n_all; i++)
            keys[i] = all[i].key;
        near = kbc_closest(key, keys, n_all);
        if (near)
            fprintf(c->err, "kbench: no row of the history has the key '%s' (did you mean "
                            "'%s'?)\n", kbc_text_visible(key), kbc_text_visible(near));
        free(keys);
        kbc_hist_series_free(all, n_all);
    }
    if (!near)
        fprintf(c->err, "kbench: no row of the history has the key '%s' (kbench history list "
                        "shows them).\n", kbc_text_visible(key));
    free(*s);
    *s = NULL;
    return KBC_EXIT_USAGE;
}

static int list_in(hctx *c, kbc_history *h)
{
    kbc_hist_series *s;
    size_t n;
    int code = load_series(c, h, NULL, &s, &n);
    if (code == 0) {
        if (c->o->csv) {
            fputs("key," TESTBED_CSV_HEAD ",points\n", c->out);
            for (size_t i = 0; i < n; i++) {
                kbc_text_csv(c->out, s[i].key);
                fputc(',', c->out);
                testbed_csv(c->out, &s[i].testbed);
                fprintf(c->out, ",%zu\n", s[i].n_points);
            }
        } else {
            print_testbeds(c->out, s, n);
            fprintf(c->out, "%7s %6s  %s\n", "testbed", "points", "key");
            for (size_t i = 0; i < n; i++)
                fprintf(c->out, "%7lld %6zu  %s\n", (long long)s[i].testbed.id, s[i].n_points,
                        kbc_text_visible(s[i].key));
            fprintf(c->out, "%zu series\n", n);
        }
        kbc_hist_series_free(s, n);
    }
    return code;
}

static int sub_list(hctx *c)
{
    return reading(c, list_in);
}

/* Calls each(c, ctx, &s[i], its points, their count) for every series of
   s[0..n), in order; returns 0, or an exit code after saying why a
   series' points could not be read. */
typedef void each_fn(hctx *c, void *ctx, const kbc_hist_series *s, const kbc_hist_point *p,
                     size_t n);
static int each_series(hctx *c, kbc_history *h, const kbc_hist_series *s, size_t n,
                       each_fn *each, void *ctx)
{
    kbc_diag d = {{0}};
    for (size_t i = 0; i < n; i++) {
        kbc_hist_point *p;
        size_t np;
        int code = kbc_history_points(h, s[i].key, s[i].testbed.id, &p, &np, &d);
        if (code) {
            say(c->err, d.msg);
            return code;
        }
        each(c, ctx, &s[i], p, np);
        free(p);
    }
    return 0;
}

/* One series' points, one line each: CSV (sep ','), or fields
   separated by tabs (sep '\t'; a key holds no tab: kbc_text_visible); the
   energy's fields empty where the point has none. */
static void print_data(hctx *c, const kbc_hist_series *s, const kbc_hist_point *p, size_t n,
                       char sep)
{
    for (size_t i = 0; i < n; i++) {
        if (sep == ',')
            kbc_text_csv(c->out, s->key);
        else
            fputs(kbc_text_visible(s->key), c->out);
        fprintf(c->out, "%c%lld%c", sep, (long long)s->testbed.id, sep);
        if (sep == ',')
            kbc_text_csv(c->out, p[i].commit);
        else
            fputs(kbc_text_visible(p[i].commit), c->out);
        fprintf(c->out, "%c%lld%c%s%c%.9g%c", sep, (long long)p[i].commit_time, sep,
                p[i].started, sep, p[i].median, sep);
        if (isfinite(p[i].lo))
            fprintf(c->out, "%.9g%c%.9g", p[i].lo, sep, p[i].hi);
        else
            fputc(sep, c->out);
        fprintf(c->out, "%c%llu%c", sep, (unsigned long long)p[i].runs, sep);
        if (isfinite(p[i].j_per_run))
            fprintf(c->out, "%.9g", p[i].j_per_run);
        fputc(sep, c->out);
        if (isfinite(p[i].j_lo))
            fprintf(c->out, "%.9g%c%.9g", p[i].j_lo, sep, p[i].j_hi);
        else
            fputc(sep, c->out);
        fputc('\n', c->out);
    }
}

/* One series' points as a table, its steps marked; where a point has
   energy, a column of joules per run. */
static void print_points(hctx *c, const kbc_hist_series *s, const kbc_hist_point *p, size_t n)
{
    char t[1024], a[32], b[32], m[32];
    kbc_hist_testbed_text(&s->testbed, t, sizeof t);
    fprintf(c->out, "%s\n  on testbed %lld: %s\n", kbc_text_visible(s->key),
            (long long)s->testbed.id, kbc_text_visible(t));
    kbc_hist_step *st;
    size_t ns = kbc_history_steps(p, n, &st), k = 0;
    int energy = 0;
    for (size_t i = 0; i < n; i++)
        energy |= isfinite(p[i].j_per_run);
    fprintf(c->out, "  %-12s  %-20s  %10s  %-22s%s\n", "commit", "started", "median",
            "95% interval", energy ? "  J/run" : "");
    for (size_t i = 0; i < n; i++) {
        if (k < ns && st[k].at == i) {
            fprintf(c->out, "  -- step: %+.1f%% (%s -> %s)%s\n", st[k].change * 100,
                    kbc_human_seconds(st[k].before, a, sizeof a),
                    kbc_human_seconds(st[k].after, b, sizeof b),
                    st[k].lone ? ", around a lone run (an outlier)" : "");
            k++;
        }
        fprintf(c->out, "  %-12.12s  %-20s  %10s", kbc_text_visible(p[i].commit), p[i].started,
                kbc_human_seconds(p[i].median, m, sizeof m));
        char ci[80] = "-";
        if (isfinite(p[i].lo))
            snprintf(ci, sizeof ci, "%s .. %s", kbc_human_seconds(p[i].lo, a, sizeof a),
                     kbc_human_seconds(p[i].hi, b, sizeof b));
        if (energy)
            fprintf(c->out, "  %-22s  %s\n", ci, kbc_human_joules(p[i].j_per_run, m, sizeof m));
        else
            fprintf(c->out, "  %s\n", ci);
    }
    free(st);
}

/* series: a series' points as data lines (CSV, or separated by tabs). */
static void series_each(hctx *c, void *sep, const kbc_hist_series *s, const kbc_hist_point *p,
                        size_t n)
{
    print_data(c, s, p, n, *(char *)sep);
}

/* show: a series' points as a table, a blank line between series. */
static void show_each(hctx *c, void *first, const kbc_hist_series *s, const kbc_hist_point *p,
                      size_t n)
{
    if (!*(int *)first)
        fputc('\n', c->out);
    *(int *)first = 0;
    print_points(c, s, p, n);
}

/* show (data 0) or series (data 1). */
static int show_or_series(hctx *c, kbc_history *h, int data)
{
    kbc_hist_series *s;
    size_t n;
    int code = load_series(c, h, c->args[0], &s, &n);
    if (code)
        return code;
    char sep = c->o->csv ? ',' : '\t';
    int first = 1;
    if (data) {
        fprintf(c->out, "key%ctestbed%ccommit%ccommit_time%cstarted%cmedian_s%clo_s%chi_s%c"
                        "runs%cj_per_run%cj_lo%cj_hi\n",
                sep, sep, sep, sep, sep, sep, sep, sep, sep, sep, sep);
        code = each_series(c, h, s, n, series_each, &sep);
    } else {
        code = each_series(c, h, s, n, show_each, &first);
    }
    kbc_hist_series_free(s, n);
    return code;
}

static int show_in(hctx *c, kbc_history *h)
{
    return show_or_series(c, h, 0);
}

static int series_in(hctx *c, kbc_history *h)
{
    return show_or_series(c, h, 1);
}

static int sub_show(hctx *c)
{
    return reading(c, show_in);
}

static int sub_series(hctx *c)
{
    return reading(c, series_in);
}

/* ---- regressions ---- */

/* What regressions lists, and what it counted. */
typedef struct steps {
    double pct;    /* the smallest step listed, in percent */
    int64_t since; /* the earliest commit time listed       */
    size_t slower, faster, looked;
    size_t ready;  /* series with the points a step needs   */
    size_t most;   /* the most points of any series          */
} steps;

/* The steps of one series above the threshold and since the commit, one
   line (or CSV record) each. */
static void steps_each(hctx *c, void *ctx, const kbc_hist_series *s, const kbc_hist_point *p,
                       size_t np)
{
    steps *t = ctx;
    t->looked += np >= 2;
    t->ready += np >= KBC_STEP_MIN_POINTS;
    if (np > t->most)
        t->most = np;
    kbc_hist_step *st;
    size_t ns = kbc_history_steps(p, np, &st);
    for (size_t k = 0; k < ns; k++) {
        const kbc_hist_point *at = &p[st[k].at];
        if (st[k].lone || fabs(st[k].change) * 100 <= t->pct || at->commit_time < t->since)
            continue;
        int worse = st[k].change > 0;
        t->slower += worse;
        t->faster += !worse;
        char a[32], b[32];
        if (c->o->csv) {
            kbc_text_csv(c->out, s->key);
            fprintf(c->out, ",%lld,", (long long)s->testbed.id);
            kbc_text_csv(c->out, at->commit);
            fprintf(c->out, ",%s,%.9g,%.9g,%.4f,%s\n", at->started, st[k].before, st[k].after,
                    st[k].change * 100, worse ? "slower" : "faster");
        } else {
            fprintf(c->out, "%-6s %+7.1f%%  %s\n         at commit %.12s (run of %s), "
                            "testbed %lld (%s): %s -> %s over %zu points\n",
                    worse ? "slower" : "faster", st[k].change * 100, kbc_text_visible(s->key),
                    kbc_text_visible(at->commit), at->started, (long long)s->testbed.id,
                    kbc_text_visible(s->testbed.gpu), kbc_human_seconds(st[k].before, a, sizeof a),
                    kbc_human_seconds(st[k].after, b, sizeof b), np);
        }
    }
    free(st);
}

static int sub_regressions(hctx *c)
{
    double pct = KBC_HISTORY_THRESHOLD_PCT;
    if (c->o->threshold) {
        char *end;
        errno = 0;
        pct = strtod(c->o->threshold, &end);
        if (errno || end == c->o->threshold || *end || !(pct >= 0 && pct <= 1000)) {
            fprintf(c->err, "kbench: option --threshold wants a number from 0 and at most "
                            "1000, not '%s'; see kbench --help.\n",
                    kbc_text_visible(c->o->threshold));
            return KBC_EXIT_USAGE;
        }
    }
    if (c->o->since && !kbc_commit_rev_ok(c->o->since)) {
        fprintf(c->err, "kbench: option --since wants a revision (letters, digits and "
                        "._/~^@-, not starting with '-'), not '%s'; see kbench --help.\n",
                kbc_text_visible(c->o->since));
        return KBC_EXIT_USAGE;
    }
    kbc_history *h;
    int code = open_db(c, 0, &h);
    if (code)
        return code;
    kbc_diag d = {{0}};
    int64_t since = INT64_MIN;
    if (c->o->since && (code = kbc_history_commit_time(h, c->o->since, &since, &d)) != 0) {
        fprintf(c->err, "kbench: --since: %s.\n", d.msg);
        kbc_history_close(h);
        return code;
    }
    kbc_hist_series *s;
    size_t n;
    if ((code = load_series(c, h, NULL, &s, &n)) != 0) {
        kbc_history_close(h);
        return code;
    }
    if (c->o->csv)
        fputs("key,testbed,commit,started,before_s,after_s,change_pct,verdict\n", c->out);
    steps t = {.pct = pct, .since = since};
    code = each_series(c, h, s, n, steps_each, &t);
    if (code == 0 && !c->o->csv)
        fprintf(c->out, "%zu series with two points or more; steps above %g%%%s: %zu slower, "
                        "%zu faster\n",
                t.looked, pct, c->o->since ? " since that commit" : "", t.slower, t.faster);
    if (code == 0 && !c->o->csv && t.ready == 0)
        fprintf(c->out, "no series has the %d runs a step needs yet (the longest has %zu): "
                        "record more runs of the same rows (kbench run --record, or kbench "
                        "history add)\n",
                KBC_STEP_MIN_POINTS, t.most);
    kbc_hist_series_free(s, n);
    kbc_history_close(h);
    return code ? code : t.slower > 0 ? KBC_EXIT_FAILED : KBC_EXIT_OK;
}

static const subcommand subcommands[] = {
    {"add", 1, SIZE_MAX, O_COMMIT | O_INTERRUPTED, "run folders or results.json files", sub_add},
    {"rebuild", 1, SIZE_MAX, O_INTERRUPTED, "the folders that hold the runs", sub_rebuild},
    {"runs", 0, 0, O_CSV, "", sub_runs},
    {"list", 0, 0, O_CSV, "", sub_list},
    {"show", 1, 1, 0, "one row key", sub_show},
    {"series", 1, 1, O_CSV, "one row key", sub_series},
    {"regressions", 0, 0, O_SINCE | O_THRESHOLD | O_CSV, "", sub_regressions},
};
#define N_SUB (sizeof subcommands / sizeof *subcommands)

int kbc_cmd_history(const char *const *args, size_t n, const kbc_history_opts *o, FILE *out,
                    FILE *err)
{
    const char *names[N_SUB];
    for (size_t i = 0; i < N_SUB; i++)
        names[i] = subcommands[i].name;
    if (n == 0) {
        fprintf(err, "kbench: kbench history needs what to do: add, rebuild, runs, list, show, "
                     "series or regressions; see kbench --help.\n");
        return KBC_EXIT_USAGE;
    }
    const subcommand *sc = NULL;
    for (size_t i = 0; i < N_SUB; i++)
        if (strcmp(args[0], names[i]) == 0)
            sc = &subcommands[i];
    if (!sc) {
        const char *near = kbc_closest(args[0], names, N_SUB);
        if (near)
            fprintf(err, "kbench: unknown history command '%s' (did you mean '%s'?)\n",
                    kbc_text_visible(args[0]), near);
        else
            fprintf(err, "kbench: unknown history command '%s' (add, rebuild, runs, list, show, "
                         "series or regressions); see kbench --help.\n",
                    kbc_text_visible(args[0]));
        return KBC_EXIT_USAGE;
    }
    size_t got = n - 1;
    if (got < sc->min_args || got > sc->max_args) {
        if (got < sc->min_args)
            fprintf(err, "kbench: kbench history %s needs %s; see kbench --help.\n", sc->name,
                    sc->args_help);
        else
            fprintf(err, "kbench: kbench history %s takes %s, and '%s' is one too many; see "
                         "kbench --help.\n", sc->name,
                    sc->max_args ? sc->args_help : "no arguments",
                    kbc_text_visible(args[1 + sc->max_args]));
        return KBC_EXIT_USAGE;
    }
    static const struct {
        unsigned bit;
        const char *name;
        const char *subs;
    } opts[] = {{O_COMMIT, "--commit", "kbench history add and kbench run --record"},
                {O_SINCE, "--since", "kbench history regressions"},
                {O_THRESHOLD, "--threshold", "kbench history regressions and kbench compare"},
                {O_CSV, "--csv", "kbench history runs, list, series and regressions"},
                {O_INTERRUPTED, "--interrupted", "kbench history add and rebuild"}};
    const void *given[] = {o->commit, o->since, o->threshold, o->csv ? "" : NULL,
                           o->interrupted ? "" : NULL};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        if (given[i] && !(sc->options & opts[i].bit)) {
            fprintf(err, "kbench: option %s applies only to %s; see kbench --help.\n",
                    opts[i].name, opts[i].subs);
            return KBC_EXIT_USAGE;
        }
    kbc_diag d = {{0}};
    hctx c = {.o = o, .args = args + 1, .n = got, .out = out, .err = err};
    if (!(c.db = kbc_history_path(o->db, &d))) {
        say(err, d.msg);
        return KBC_EXIT_USAGE;
    }
    int code = sc->run(&c);
    free(c.db);
    return code;
}

int kbc_history_record(const char *dir, const kbc_history_opts *o, FILE *out, FILE *err)
{
    kbc_hist_commit commit;
    int code;
    if (o->commit) {
        if ((code = option_commit(o->commit, &commit, err)) != 0)
            return code;
    } else if (kbc_commit_from_git(NULL, &commit) == 0) {
        snprintf(commit.source, sizeof commit.source, "git");
    } else {
        memset(&commit, 0, sizeof commit);
        snprintf(commit.rev, sizeof commit.rev, "%s", kbc_git_rev);
        snprintf(commit.source, sizeof commit.source, "kbench");
    }
    /* Kept beside the results, so that a rebuilt history tags the run
       the same way. */
    if (kbc_commit_write(dir, &commit) != 0) {
        fprintf(err, "kbench: --record: cannot write %s/commit: %s.\n", dir, strerror(errno));
        return KBC_EXIT_SYSTEM;
    }
    kbc_diag d = {{0}};
    char *db = kbc_history_path(o->db, &d);
    if (!db) {
        fprintf(err, "kbench: --record: %s.\n", d.msg);
        return KBC_EXIT_USAGE;
    }
    kbc_history *h;
    if ((code = kbc_history_open(db, 1, &h, &d)) != 0) {
        fprintf(err, "kbench: --record: %s.\n", d.msg);
    } else {
        char *p = kbc_xasprintf("%s/results.json", dir);
        int added;
        if ((code = kbc_history_add(h, p, &commit, 0, &added, &d)) != 0)
            fprintf(err, "kbench: --record: %s.\n", d.msg);
        else
            fprintf(out, "recorded in %s (commit %.12s)\n", kbc_text_visible(db),
                    kbc_text_visible(commit.rev));
        free(p);
        kbc_history_close(h);
    }
    free(db);
    return code;
}
