/* compare_cmd.c -- `kbench compare BASE NEW` (compare_cmd.h): both files
 * read, their rows matched and judged (baseline.h), and the comparison
 * printed as a table, markdown or JSON: the time's, and the energy's where
 * both sides of a row have energy. */
#define _GNU_SOURCE
#include "compare_cmd.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "cpu_facts.h"
#include "record.h"
#include "results_read.h"
#include "text.h"
#include "util.h"

/* ---- the two files ---- */

typedef struct side {
    const char *path;
    json_t *doc;
    kbc_record *recs;
    size_t n;
    kbc_diag why;  /* why it could not be loaded */
    int bad;
    char *only;    /* per row: the other file has no row of its key */
} side;

static void side_free(side *s)
{
    kbc_records_free(s->recs, s->n);
    json_decref(s->doc);
    free(s->only);
    free((char *)s->path);
}

/* Loads s->path; returns 0, or -1 with s->why set. */
static int side_load(side *s)
{
    /* Parsed once: the rows and the header both come from this document. */
    s->doc = kbc_results_load(s->path, &s->why);
    if (!s->doc || kbc_results_from_json(s->doc, s->path, &s->recs, &s->n, &s->why) != 0)
        return -1;
    if (!json_is_object(json_object_get(s->doc, "kbench"))) {
        kbc_diag_set(&s->why, "%s: has no \"kbench\" object, so it is not a kbench results file.",
                     s->path);
        return -1;
    }
    return 0;
}

static void *side_load_main(void *arg)
{
    side *s = arg;
    s->bad = side_load(s) != 0;
    return NULL;
}

/* Text as a JSON string, made UTF-8 first (a path from the command line,
   a warning cut inside a character): jansson makes no string otherwise. */
static json_t *text_json(const char *s)
{
    char *fixed = kbc_text_utf8(s);
    json_t *v = json_string(fixed ? fixed : s);
    free(fixed);
    return v;
}

/* A JSON scalar as text, "none" for null or absent. */
static void scalar_text(const json_t *v, char *buf, size_t n)
{
    if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    else
        snprintf(buf, n, "none");
}

/* Two experiments' measurement settings are equal when every key is,
   where a file written before batch mode (no "batch") counts as "off". */
static int measure_equal(const json_t *a, const json_t *b)
{
    json_t *x = json_is_object(a) ? json_copy((json_t *)a) : NULL;
    json_t *y = json_is_object(b) ? json_copy((json_t *)b) : NULL;
    if (!x || !y) {
        json_decref(x);
        json_decref(y);
        return json_equal(a, b);
    }
    if (!json_object_get(x, "batch"))
        json_object_set_new(x, "batch", json_string("off"));
    if (!json_object_get(y, "batch"))
        json_object_set_new(y, "batch", json_string("off"));
    int eq = json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return eq;
}

/* The machine and configuration differences, one sentence each, into a
   JSON array of strings. */
static json_t *differences(const side *a, const side *b)
{
    /* optional: a field that older files lack; it is compared only when
       both files have it, so that an old file does not differ in it. */
    static const struct {
        const char *what, *obj, *sub, *key;
        int optional;
    } fields[] = {
        {"kbench version", "kbench", NULL, "version", 0},
        {"kbench revision", "kbench", NULL, "git", 0},
        {"host", "machine", NULL, "host", 0},
        {"GPU", "machine", NULL, "gpu", 0},
        {"compute capability", "machine", NULL, "cc", 0},
        {"driver", "machine", NULL, "driver_version_string", 0},
        {"runtime", "machine", NULL, "runtime_version_string", 0},
        {"SM clock (kHz)", "machine", "clocks_khz", "sm", 0},
        {"memory clock (kHz)", "machine", "clocks_khz", "memory", 0},
        {"maximum SM clock (MHz, NVML)", "machine", "nvml", "sm_max_mhz", 1},
        {"maximum memory clock (MHz, NVML)", "machine", "nvml", "mem_max_mhz", 1},
    };
    json_t *out = json_array();
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        const json_t *x = json_object_get(a->doc, fields[i].obj);
        const json_t *y = json_object_get(b->doc, fields[i].obj);
        if (fields[i].sub) {
            x = json_object_get(x, fields[i].sub);
            y = json_object_get(y, fields[i].sub);
        }
        x = json_object_get(x, fields[i].key);
        y = json_object_get(y, fields[i].key);
        if (fields[i].optional && (!x || !y || json_is_null(x) || json_is_null(y)))
            continue;
        char tx[256], ty[256];
        scalar_text(x, tx, sizeof tx);
        scalar_text(y, ty, sizeof ty);
        if (strcmp(tx, ty) != 0) {
            char *s = kbc_xasprintf("%s differs: '%s' in base, '%s' in new", fields[i].what, tx, ty);
            json_array_append_new(out, text_json(s));
            free(s);
        }
    }
    /* Per experiment of both: the measurement settings and the plugin file. */
    const json_t *ea = json_object_get(json_object_get(a->doc, "config"), "experiments");
    const json_t *eb = json_object_get(json_object_get(b->doc, "config"), "experiments");
    size_t i, k;
    const json_t *x, *y;
    json_array_foreach(ea, i, x)
    {
        const char *name = json_string_value(json_object_get(x, "name"));
        json_array_foreach(eb, k, y)
        {
            const char *nb = json_string_value(json_object_get(y, "name"));
            if (!name || !nb || strcmp(name, nb) != 0)
                continue;
            if (!measure_equal(json_object_get(x, "measure"), json_object_get(y, "measure"))) {
                char *s = kbc_xasprintf("experiment '%s': the measurement settings differ", name);
                json_array_append_new(out, text_json(s));
                free(s);
            }
            char tx[256], ty[256];
            scalar_text(json_object_get(x, "plugin_file"), tx, sizeof tx);
            scalar_text(json_object_get(y, "plugin_file"), ty, sizeof ty);
            if (strcmp(tx, ty) != 0) {
                char *s = kbc_xasprintf("experiment '%s': plugin file differs: '%s' in base, '%s' "
                                        "in new",
                                        name, tx, ty);
                json_array_append_new(out, text_json(s));
                free(s);
            }
        }
    }
    return out;
}

/* A side that ran on a loaded host (base/cpu_facts.h), as a warning: its
   CPU rows' times hold the waits for the other work.  Said only when the
   compare has CPU rows, whose noise it explains. */
static void load_warning(const side *s, const char *name, json_t *warn)
{
    const json_t *m = json_object_get(s->doc, "machine");
    const json_t *cpu = json_object_get(m, "cpu");
    if (!json_is_object(cpu))
        return;
    int cpu_rows = 0;
    for (size_t i = 0; i < s->n && !cpu_rows; i++)
        cpu_rows = s->recs[i].backend == KB_BACKEND_CPU && kbc_record_ran(&s->recs[i]);
    const json_t *v;
    double f[4];
    const char *keys[4] = {"load_before", "load_after", "cpu_seconds", "wall_seconds"};
    for (int k = 0; k < 4; k++)
        f[k] = json_is_number(v = json_object_get(cpu, keys[k])) ? json_number_value(v) : NAN;
    double other = kbc_cpu_other_load(f[0], f[1], f[2], f[3]);
    if (!cpu_rows || !kbc_cpu_loaded(other))
        return;
    const json_t *threads = json_object_get(m, "cpu_threads");
    char before[48] = "", after[96] = "";
    if (isfinite(f[0]))
        snprintf(before, sizeof before, "%.2f before it", f[0]);
    if (isfinite(f[1]))
        snprintf(after, sizeof after, "%s%.2f after it", before[0] ? ", " : "", f[1]);
    char own[64] = "";
    if (isfinite(f[1]) && f[2] >= 0 && f[3] > 0)
        snprintf(own, sizeof own, " less its own %.2f", f[2] / f[3]);
    char *t = kbc_xasprintf("the %s run ran on a loaded host: other work kept %.1f CPUs busy "
                            "(load average %s%s%s; %lld CPU threads), so its CPU rows' times "
                            "include waiting for it; compare CPU rows run on a quiet host",
                            name, other, before, after, own,
                            json_is_integer(threads) ? (long long)json_integer_value(threads)
                                                     : 0LL);
    json_array_append_new(warn, text_json(t));
    free(t);
}

/* Rows by experiment, then point. */
static int by_point(const void *x, const void *y)
{
    const kbc_record *a = *(const kbc_record *const *)x, *b = *(const kbc_record *const *)y;
    int c = strcmp(a->experiment, b->experiment);
    return c ? c : (a->point > b->point) - (a->point < b->point);
}

/* A side whose run did not finish, as a warning: an interrupted run
   (exit code 130, Ctrl-C or a time limit) or one still going (no exit code
   yet), with how many of its points it holds, so that its rows only in
   the other file are read as points it never reached. */
static void unfinished_warning(const side *s, const char *name, json_t *warn)
{
    const json_t *code = json_object_get(s->doc, "exit_code");
    int interrupted = json_is_integer(code) && json_integer_value(code) == KBC_EXIT_INTERRUPTED;
    int going = json_is_null(code) && json_object_get(s->doc, "finished") &&
                json_is_null(json_object_get(s->doc, "finished"));
    if (!interrupted && !going)
        return;
    /* The points it holds: its distinct (experiment, point) pairs; of the
       points it was to run: its plan's jobs, else its experiments' points. */
    const kbc_record **by = kbc_xcalloc(s->n ? s->n : 1, sizeof *by);
    for (size_t i = 0; i < s->n; i++)
        by[i] = &s->recs[i];
    qsort(by, s->n, sizeof *by, by_point);
    size_t held = 0;
    for (size_t i = 0; i < s->n; i++)
        held += i == 0 || by_point(&by[i - 1], &by[i]) != 0;
    free(by);
    const json_t *jobs = json_object_get(json_object_get(s->doc, "plan"), "jobs");
    long long total = json_is_integer(jobs) ? (long long)json_integer_value(jobs) : 0;
    if (!total) {
        const json_t *exps = json_object_get(json_object_get(s->doc, "config"), "experiments");
        for (size_t i = 0; i < json_array_size(exps); i++) {
            const json_t *p = json_object_get(json_array_get(exps, i), "points");
            total += json_is_integer(p) ? (long long)json_integer_value(p) : 0;
        }
    }
    char of[64] = "";
    if (total > 0)
        snprintf(of, sizeof of, " of %lld", total);
    char *t = interrupted
                  ? kbc_xasprintf("the %s run was interrupted (%zu%s points): the points it did "
                                  "not reach are rows only in the other file",
                                  name, held, of)
                  : kbc_xasprintf("the %s run has not finished (%zu%s points so far)", name, held,
                                  of);
    json_array_append_new(warn, text_json(t));
    free(t);
}

/* ---- output ---- */

static const char *fmt_pct(double ratio, char *buf, size_t n)
{
    if (!isfinite(ratio))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%+.1f%%", (ratio - 1) * 100);
    return buf;
}

typedef struct cmp_row {
    const char *key;   /* the stable key */
    char *shown;       /* the key as the table shows it (see short_keys) */
    kbc_change c;
    const char *note;  /* why untested, or NULL */
    int lost;          /* crashed or timed out in new: fails the compare */
    const kbc_record *rec; /* the base side's row */
    kbc_change e;      /* the energy's change (baseline.h) */
    const char *enote; /* why the energy is untested, or NULL */
    int energy;        /* a side has energy: the energy table lists it */
} cmp_row;

/* A row's change and note in the time's table or the energy's. */
static const kbc_change *change_of(const cmp_row *r, int energy)
{
    return energy ? &r->e : &r->c;
}

static const char *note_of(const cmp_row *r, int energy)
{
    return energy ? r->enote : r->note;
}

/* A row that did not run on a side (skipped, error): the table folds such
   rows into one line per experiment instead of a line each. */
static int folded(const cmp_row *r)
{
    return r->c.verdict == KBC_UNTESTED && !r->lost && r->note &&
           strncmp(r->note, "did not run", 11) == 0;
}

/* The fold lines: per experiment, in order of first appearance, the
   variants (each once) of its rows that did not run. */
static void print_folds(FILE *out, int md, cmp_row *const *rows, size_t nr)
{
    char *done = kbc_xcalloc(nr ? nr : 1, 1);
    for (size_t r = 0; r < nr; r++) {
        if (done[r] || !folded(rows[r]))
            continue;
        const char *exp = rows[r]->rec->experiment;
        size_t count = 0;
        fprintf(out, "%s%s: did not run on a side (untested): ", md ? "- " : "  ",
                kbc_text_shown(md, exp));
        int k = 0;
        for (size_t q = r; q < nr; q++) {
            if (done[q] || !folded(rows[q]) || strcmp(rows[q]->rec->experiment, exp) != 0)
                continue;
            done[q] = 1;
            count++;
            int seen = 0; /* the variant named already */
            for (size_t p = r; p < q && !seen; p++)
                seen = folded(rows[p]) && strcmp(rows[p]->rec->experiment, exp) == 0 &&
                       strcmp(rows[p]->rec->variant, rows[q]->rec->variant) == 0;
            if (!seen)
                fprintf(out, "%s%s", k++ ? ", " : "", kbc_text_shown(md, rows[q]->rec->variant));
        }
        fprintf(out, " (%zu row%s)\n", count, count == 1 ? "" : "s");
    }
    free(done);
}

/* The key a reader needs: experiment/swept parameters/variant, where the
   swept parameters are those the file marks as swept (the others are the
   same on every row of the experiment and only make the line long).  When
   two rows would read the same, every row keeps its whole key. */
static char *short_key(const kbc_record *r)
{
    char g[KB_MAX_PARAMS * (KBC_REC_PNAME + KBC_REC_TEXT + 2) + 1];
    kbc_record_group(r, NULL, ",", g, sizeof g);
    return kbc_xasprintf("%s/%s%s%s", r->experiment, g, g[0] ? "/" : "", r->variant);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static void short_keys(cmp_row *rows, size_t nr, const kbc_record *const *recs)
{
    char **sorted = kbc_xcalloc(nr ? nr : 1, sizeof *sorted);
    for (size_t r = 0; r < nr; r++)
        sorted[r] = rows[r].shown = short_key(recs[r]);
    qsort(sorted, nr, sizeof *sorted, cmp_str);
    int clash = 0;
    for (size_t r = 1; r < nr && !clash; r++)
        clash = strcmp(sorted[r - 1], sorted[r]) == 0;
    free(sorted);
    if (!clash)
        return;
    for (size_t r = 0; r < nr; r++) {
        free(rows[r].shown);
        rows[r].shown = kbc_xasprintf("%s", rows[r].key);
    }
}

/* --sort change: the largest slowdown first, rows without a ratio last,
   rows of one change in file order. */
static int by_change(const void *x, const void *y)
{
    const cmp_row *a = *(const cmp_row *const *)x, *b = *(const cmp_row *const *)y;
    int fa = isfinite(a->c.ratio), fb = isfinite(b->c.ratio);
    if (fa != fb)
        return fb - fa;
    if (fa && a->c.ratio != b->c.ratio)
        return a->c.ratio < b->c.ratio ? 1 : -1;
    return (a > b) - (a < b);
}

/* Whether --only-changed keeps the row: a verdict other than no change
   on the time or the energy, or a new run that lost it. */
static int changed(const cmp_row *r)
{
    for (int energy = 0; energy < 2; energy++) {
        kbc_verdict v = change_of(r, energy)->verdict;
        if (v == KBC_SLOWER || v == KBC_FASTER || v == KBC_NOISY)
            return 1;
    }
    return r->lost;
}

/* A verdict's colour on a terminal (kbc_verdict_sgr); a row lost in new
   is red as a slower one is. */
static const char *verdict_colour(const kbc_change *c, int lost)
{
    return lost ? KBC_SGR_BAD : kbc_verdict_sgr(c->verdict);
}

/* The lines of one table of changes (the time's, or with energy the
   energy's, whose medians are joules per run): the rows in the order
   given, but those folded (time) or without energy on either side
   (energy); kw: the width of the row column. */
static void print_changes(FILE *out, int md, cmp_row *const *rows, size_t nr, int kw, int energy)
{
    int colour = !md && kbc_colour_for(out);
    for (size_t r = 0; r < nr; r++) {
        if (energy ? !rows[r]->energy : folded(rows[r]))
            continue;
        const kbc_change *c = change_of(rows[r], energy);
        const char *note = note_of(rows[r], energy);
        char t1[32], t2[32], ch[32], lo[32], hi[32], ci[80], verdict[200];
        if (energy) {
            kbc_human_joules(c->base_median, t1, sizeof t1);
            kbc_human_joules(c->new_median, t2, sizeof t2);
        } else {
            kbc_human_seconds(c->base_median, t1, sizeof t1);
            kbc_human_seconds(c->new_median, t2, sizeof t2);
        }
        fmt_pct(c->ratio, ch, sizeof ch);
        if (isfinite(c->lo))
            snprintf(ci, sizeof ci, "[%s, %s]", fmt_pct(c->lo, lo, sizeof lo),
                     fmt_pct(c->hi, hi, sizeof hi));
        else
            snprintf(ci, sizeof ci, "-");
        const char *sig = isfinite(c->lo) ? (kbc_compare_significant(c) ? "yes" : "no") : "-";
        if (note)
            snprintf(verdict, sizeof verdict, "untested: %s", note);
        else if (c->verdict == KBC_NOISY)
            snprintf(verdict, sizeof verdict, "noisy (%.1f%%)",
                     100 * (c->base_noise > c->new_noise ? c->base_noise : c->new_noise));
        else
            snprintf(verdict, sizeof verdict, "%s",
                     energy ? kbc_energy_verdict_name(c->verdict) : kbc_verdict_name(c->verdict));
        if (md) {
            fputs("| ", out);
            kbc_text_md_code(out, rows[r]->shown, 1);
            fprintf(out, " | %s | %s | %s | %s | %s | %s%s%s |\n", t1, t2, ch, ci, sig,
                    c->verdict == KBC_SLOWER ? "**" : "", verdict,
                    c->verdict == KBC_SLOWER ? "**" : "");
        } else {
            /* The verdict, last on its line, in colour on a terminal. */
            const char *sgr = colour ? verdict_colour(c, !energy && rows[r]->lost) : NULL;
            fprintf(out, "  %-*s %9s %9s %8s  %-18s %-3s %s%s%s\n", kw,
                    kbc_text_visible(rows[r]->shown), t1, t2, ch, ci, sig, sgr ? sgr : "",
                    verdict, sgr ? KBC_SGR_RESET : "");
        }
    }
}

/* The head of a table of changes. */
static void print_head(FILE *out, int md, int kw, const char *ci_head)
{
    if (md) {
        fprintf(out, "| row | base | new | change | %s | significant | verdict |\n", ci_head);
        fprintf(out, "|---|---:|---:|---:|---|---|---|\n");
    } else {
        fprintf(out, "  %-*s %9s %9s %8s  %-18s %-3s %s\n", kw, "row", "base", "new", "change",
                ci_head, "sig", "verdict");
    }
}

/* The machines of the two sides when they differ (baseline.h), into buf:
   the verdicts are then the machines' as much as the code's.  NULL when
   they are the same. */
static const char *machines_differ(const side *a, const side *b, char *buf, size_t n)
{
    const json_t *ma = json_object_get(a->doc, "machine"), *mb = json_object_get(b->doc, "machine");
    const char *ga = json_string_value(json_object_get(ma, "gpu"));
    const char *gb = json_string_value(json_object_get(mb, "gpu"));
    const char *ha = json_string_value(json_object_get(ma, "host"));
    const char *hb = json_string_value(json_object_get(mb, "host"));
    return kbc_machine_difference(ga, ha, gb, hb, buf, n);
}


/* The most rows a fold line of the rows in one file only names. */
#define ONLY_NAMED 8

/* A row in one file only, and where it and its experiment's first such
   row are in the file. */
typedef struct only_row {
    const kbc_record *r;
    size_t at;    /* its place in the file                 */
    size_t first; /* the first place of its experiment's rows */
} only_row;

static int by_experiment(const void *x, const void *y)
{
    const only_row *a = x, *b = y;
    int c = strcmp(a->r->experiment, b->r->experiment);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

static int by_first(const void *x, const void *y)
{
    const only_row *a = x, *b = y;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

/* The rows of side s that the other file lacks, folded into one line per
   experiment (in order of first appearance): their short names (the
   swept parameters and the variant, as the table's rows), at most
   ONLY_NAMED of them, and their count.  JSON keeps every whole key.  The
   rows are grouped by sorting, so that two files with nothing in common
   fold in O(n log n). */
static void print_only_in(FILE *out, int md, const side *s, const char *name)
{
    only_row *rows = kbc_xcalloc(s->n ? s->n : 1, sizeof *rows);
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->only[i])
            rows[n++] = (only_row){&s->recs[i], i, 0};
    qsort(rows, n, sizeof *rows, by_experiment);
    for (size_t i = 0; i < n; i++)
        rows[i].first = i && strcmp(rows[i].r->experiment, rows[i - 1].r->experiment) == 0
                            ? rows[i - 1].first
                            : rows[i].at;
    qsort(rows, n, sizeof *rows, by_first);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && rows[j].first == rows[i].first)
            j++;
        fprintf(out, "%sonly in %s: %s: ", md ? "- " : "", name,
                kbc_text_shown(md, rows[i].r->experiment));
        for (size_t k = i; k < j && k - i < ONLY_NAMED; k++) {
            char g[KB_MAX_PARAMS * (KBC_REC_PNAME + KBC_REC_TEXT + 2) + 1];
            kbc_record_group(rows[k].r, NULL, ",", g, sizeof g);
            char *shown = kbc_xasprintf("%s%s%s", g, g[0] ? "/" : "", rows[k].r->variant);
            if (k > i)
                fputs(", ", out);
            if (md)
                kbc_text_md_code(out, shown, 0);
            else
                fputs(kbc_text_visible(shown), out);
            free(shown);
        }
        size_t count = j - i;
        if (count > ONLY_NAMED)
            fprintf(out, ", ... (%zu rows)\n", count);
        else
            fprintf(out, " (%zu row%s)\n", count, count == 1 ? "" : "s");
        i = j;
    }
    free(rows);
}

static void print_text(FILE *out, int md, const side *a, const side *b, const kbc_compare_opts *o,
                       const json_t *warn, cmp_row *const *rows, size_t nr, char **only_a,
                       size_t na, char **only_b, size_t nb, const size_t *count,
                       const size_t *ecount, int code)
{
    size_t i;
    const json_t *w;
    /* Names and keys come from the files: kbc_text_visible() in the table;
       in markdown, a code span (its pipes escaped) for a key and
       kbc_text_md() for other text. */
    json_array_foreach(warn, i, w) fprintf(out, "%swarning: %s\n", md ? "> " : "",
                                           kbc_text_shown(md, json_string_value(w)));
    if (json_array_size(warn))
        fprintf(out, "\n");
    double conf = (1 - o->alpha) * 100;
    fprintf(out,
            "%sbase %s, new %s\n%schange of the median time; %.4g%% interval of the ratio of "
            "medians (%u bootstrap resamples;\norder statistics above %zu samples a side); "
            "threshold %.4g%%\n",
            md ? "" : "compare: ", kbc_text_shown(md, a->path), kbc_text_shown(md, b->path),
            md ? "\n" : "", conf, o->resamples, o->boot_max, o->threshold * 100);
    fprintf(out, "\n");
    int kw = 3;
    size_t n_folded = 0, n_energy = 0;
    for (size_t r = 0; r < nr; r++) {
        n_folded += folded(rows[r]);
        n_energy += rows[r]->energy;
    }
    for (size_t r = 0; r < nr; r++)
        if ((!folded(rows[r]) || rows[r]->energy) &&
            (int)strlen(kbc_text_visible(rows[r]->shown)) > kw)
            kw = (int)strlen(kbc_text_visible(rows[r]->shown));
    char ci_head[32];
    snprintf(ci_head, sizeof ci_head, "%.4g%% interval", conf);
    if (md || nr > n_folded)
        print_head(out, md, kw, ci_head);
    print_changes(out, md, rows, nr, kw, 0);
    if (n_folded) {
        fprintf(out, "\n");
        print_folds(out, md, rows, nr);
    }
    if (n_energy) {
        /* The energy's table: the rows that have energy on a side, judged
           by the same rule with each energy window as a sample
           (docs/energy.md says what five windows can tell). */
        fprintf(out,
                "\n%senergy: change of the median joules per run over the energy windows "
                "(each window a sample;\nsame interval and threshold)%s\n\n",
                md ? "**" : "", md ? "**" : "");
        print_head(out, md, kw, ci_head);
        print_changes(out, md, rows, nr, kw, 1);
    }
    if (na || nb)
        fprintf(out, "\n");
    print_only_in(out, md, a, "base");
    print_only_in(out, md, b, "new");
    fprintf(out,
            "\nsummary: %zu slower, %zu faster, %zu noisy, %zu no change, %zu untested, %zu only "
            "in base, %zu only in new; exit code %d\n",
            count[KBC_SLOWER], count[KBC_FASTER], count[KBC_NOISY], count[KBC_NO_CHANGE],
            count[KBC_UNTESTED], na, nb, code);
    if (n_energy)
        fprintf(out,
                "energy: %zu more, %zu less, %zu noisy, %zu no change, %zu untested (the exit "
                "code follows the time)\n",
                ecount[KBC_SLOWER], ecount[KBC_FASTER], ecount[KBC_NOISY],
                ecount[KBC_NO_CHANGE], ecount[KBC_UNTESTED]);
    /* A baseline from another machine is said beside the verdicts, not
       only in the warnings at the top. */
    char mach[700];
    if (machines_differ(a, b, mach, sizeof mach))
        fprintf(out, "%s%sthese verdicts compare two machines: %s, so a change is the machines' "
                     "as much as the code's%s\n",
                md ? "\n" : "", md ? "**" : "", kbc_text_shown(md, mach), md ? "**" : "");
    if (o->only_changed)
        fprintf(out, "%s(--only-changed: the rows with no change or untested are not listed)\n",
                md ? "\n" : "");
    if (count[KBC_NOISY])
        fprintf(out,
                "%snoisy (N%%): a side's median is known only to within N%%, more than the %.4g%% "
                "threshold\n(N: the half-width of its 95%% interval), so a change inside it "
                "cannot be told;\nrerun with more runs or a noise target\n",
                md ? "\n" : "", o->threshold * 100);
}

static json_t *num_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}


/* A change as JSON: the medians (under the names given), the ratio and
   its interval, significance, each side's noise, and the verdict. */
static void change_json(json_t *x, const kbc_change *c, const char *base_name,
                        const char *new_name, const char *verdict)
{
    json_object_set_new(x, base_name, num_or_null(c->base_median));
    json_object_set_new(x, new_name, num_or_null(c->new_median));
    json_object_set_new(x, "ratio", num_or_null(c->ratio));
    json_object_set_new(x, "ratio_low", num_or_null(c->lo));
    json_object_set_new(x, "ratio_high", num_or_null(c->hi));
    json_object_set_new(x, "interval", json_string(!isfinite(c->lo) ? "none"
                                                   : c->bootstrap   ? "bootstrap"
                                                                    : "order statistics"));
    json_object_set_new(x, "significant",
                        isfinite(c->lo) ? json_boolean(kbc_compare_significant(c)) : json_null());
    json_object_set_new(x, "base_noise", num_or_null(c->base_noise));
    json_object_set_new(x, "new_noise", num_or_null(c->new_noise));
    json_object_set_new(x, "verdict", json_string(verdict));
}

/* The count of each verdict under its JSON name; energy's say more and
   less where time's say slower and faster. */
static json_t *summary_json(const size_t *count, int energy)
{
    json_t *s = json_object();
    json_object_set_new(s, energy ? "more" : "slower", json_integer((json_int_t)count[KBC_SLOWER]));
    json_object_set_new(s, energy ? "less" : "faster", json_integer((json_int_t)count[KBC_FASTER]));
    json_object_set_new(s, "noisy", json_integer((json_int_t)count[KBC_NOISY]));
    json_object_set_new(s, "no_change", json_integer((json_int_t)count[KBC_NO_CHANGE]));
    json_object_set_new(s, "untested", json_integer((json_int_t)count[KBC_UNTESTED]));
    return s;
}

static void print_json(FILE *out, const side *a, const side *b, const kbc_compare_opts *o,
                       json_t *warn, cmp_row *const *rows, size_t nr, char **only_a, size_t na,
                       char **only_b, size_t nb, const size_t *count, const size_t *ecount,
                       int code)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "base", text_json(a->path));
    json_object_set_new(doc, "new", text_json(b->path));
    json_object_set_new(doc, "threshold", json_real(o->threshold));
    json_object_set_new(doc, "alpha", json_real(o->alpha));
    json_object_set_new(doc, "resamples", json_integer(o->resamples));
    json_object_set_new(doc, "warnings", json_incref(warn));
    json_t *rs = json_array();
    for (size_t r = 0; r < nr; r++) {
        const kbc_change *c = &rows[r]->c;
        json_t *x = json_object();
        json_object_set_new(x, "key", text_json(rows[r]->key));
        json_object_set_new(x, "row", text_json(rows[r]->shown));
        change_json(x, c, "base_median_s", "new_median_s", kbc_verdict_name(c->verdict));
        json_object_set_new(x, "note", rows[r]->note ? json_string(rows[r]->note) : json_null());
        /* The energy's change where a side has energy; null where neither
           has. */
        json_t *en = json_null();
        if (rows[r]->energy) {
            const kbc_change *e = &rows[r]->e;
            en = json_object();
            change_json(en, e, "base_j_per_run", "new_j_per_run",
                        kbc_energy_verdict_name(e->verdict));
            json_object_set_new(en, "note",
                                rows[r]->enote ? json_string(rows[r]->enote) : json_null());
        }
        json_object_set_new(x, "energy", en);
        json_array_append_new(rs, x);
    }
    json_object_set_new(doc, "rows", rs);
    json_t *oa = json_array(), *ob = json_array();
    for (size_t k = 0; k < na; k++)
        json_array_append_new(oa, text_json(only_a[k]));
    for (size_t k = 0; k < nb; k++)
        json_array_append_new(ob, text_json(only_b[k]));
    json_object_set_new(doc, "only_in_base", oa);
    json_object_set_new(doc, "only_in_new", ob);
    json_t *s = summary_json(count, 0);
    size_t n_energy = 0;
    for (int v = 0; v < KBC_N_VERDICTS; v++)
        n_energy += ecount[v];
    json_object_set_new(s, "energy", n_energy ? summary_json(ecount, 1) : json_null());
    json_object_set_new(doc, "summary", s);
    char mach[700];
    json_object_set_new(doc, "machines_differ", machines_differ(a, b, mach, sizeof mach)
                                                    ? text_json(mach)
                                                    : json_null());
    json_object_set_new(doc, "exit_code", json_integer(code));
    json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    fputc('\n', out);
    json_decref(doc);
}

static char *key_of(const kbc_record *r)
{
    size_t need = kbc_record_key(r, NULL, 0) + 1;
    char *k = kbc_xmalloc(need);
    kbc_record_key(r, k, need);
    return k;
}

/* A row both files have: base row i, new row j; in the base file's
   order, a key's new rows in theirs. */
typedef struct both {
    size_t i, j;
} both;

static int by_base(const void *x, const void *y)
{
    const both *a = x, *b = y;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    return (a->j > b->j) - (a->j < b->j);
}

int kbc_cmd_compare(const char *base_path, const char *new_path, const kbc_compare_opts *o,
                    FILE *out, FILE *err)
{
    /* A run's folder stands for its results.json, as for report and merge. */
    side a = {.path = kbc_results_path(base_path)}, b = {.path = kbc_results_path(new_path)};
    /* Both files are parsed at once, the new one on a second thread
       (jansson's hash seed is set first, here, as its threads need). */
    json_object_seed(0);
    pthread_t t;
    int threaded = pthread_create(&t, NULL, side_load_main, &b) == 0;
    int bad_a = side_load(&a) != 0;
    int bad_b = threaded ? (pthread_join(t, NULL), b.bad) : side_load(&b) != 0;
    if (bad_a || bad_b) {
        fprintf(err, "kbench: %s\n", bad_a ? a.why.msg : b.why.msg);
        side_free(&a);
        side_free(&b);
        return KBC_EXIT_USAGE;
    }
    json_t *warn = differences(&a, &b);
    unfinished_warning(&a, "base", warn);
    unfinished_warning(&b, "new", warn);
    load_warning(&a, "base", warn);
    load_warning(&b, "new", warn);
    /* Each new row against the base row of its key (baseline.h); the rows
       both files have are listed in the base file's order. */
    kbc_baseline *bl = kbc_baseline_new(a.recs, a.n);
    kbc_match *m = kbc_xcalloc(b.n ? b.n : 1, sizeof *m);
    kbc_baseline_judge(bl, b.recs, b.n, o, m);
    both *pairs = kbc_xcalloc(b.n ? b.n : 1, sizeof *pairs);
    char **only_a = kbc_xcalloc(a.n ? a.n : 1, sizeof *only_a);
    char **only_b = kbc_xcalloc(b.n ? b.n : 1, sizeof *only_b);
    size_t nr = 0, na = 0, nb = 0, count[KBC_N_VERDICTS] = {0}, lost_new = 0;
    a.only = kbc_xcalloc(a.n ? a.n : 1, 1);
    b.only = kbc_xcalloc(b.n ? b.n : 1, 1);
    size_t ecount[KBC_N_VERDICTS] = {0};
    for (size_t j = 0; j < b.n; j++) {
        if (m[j].base >= 0) {
            pairs[nr++] = (both){(size_t)m[j].base, j};
        } else {
            only_b[nb++] = key_of(&b.recs[j]);
            b.only[j] = 1;
        }
    }
    qsort(pairs, nr, sizeof *pairs, by_base);
    cmp_row *rows = kbc_xcalloc(nr ? nr : 1, sizeof *rows);
    const kbc_record **rec_of = kbc_xcalloc(nr ? nr : 1, sizeof *rec_of);
    for (size_t r = 0; r < nr; r++) {
        const kbc_match *x = &m[pairs[r].j];
        rows[r] = (cmp_row){.key = kbc_baseline_key(bl, pairs[r].i), .c = x->change,
                            .note = x->note, .lost = x->lost, .rec = &a.recs[pairs[r].i],
                            .e = x->energy, .enote = x->energy_note,
                            .energy = kbc_match_energy_shown(x)};
        rec_of[r] = rows[r].rec;
        count[x->change.verdict]++;
        if (rows[r].energy)
            ecount[x->energy.verdict]++;
        lost_new += (size_t)x->lost;
    }
    for (size_t i = 0; i < a.n; i++)
        if (!kbc_baseline_matched(bl, i)) {
            only_a[na++] = (char *)kbc_baseline_key(bl, i);
            a.only[i] = 1;
        }
    /* Noisy rows do not fail the compare: they say the measurement cannot
       tell, which a gate should report rather than act on. */
    int code = count[KBC_SLOWER] || lost_new ? KBC_EXIT_FAILED : KBC_EXIT_OK;
    short_keys(rows, nr, rec_of);
    cmp_row **shown = kbc_xcalloc(nr ? nr : 1, sizeof *shown);
    size_t ns = 0;
    for (size_t r = 0; r < nr; r++)
        if (!o->only_changed || changed(&rows[r]))
            shown[ns++] = &rows[r];
    if (o->sort == KBC_SORT_CHANGE)
        qsort(shown, ns, sizeof *shown, by_change);
    if (o->format == KBC_CMP_JSON)
        print_json(out, &a, &b, o, warn, shown, ns, only_a, na, only_b, nb, count, ecount, code);
    else
        print_text(out, o->format == KBC_CMP_MARKDOWN, &a, &b, o, warn, shown, ns, only_a, na,
                   only_b, nb, count, ecount, code);
    for (size_t r = 0; r < nr; r++)
        free(rows[r].shown);
    free(shown);
    free(rec_of);
    json_decref(warn);
    free(pairs);
    free(rows);
    free(only_a);
    for (size_t k = 0; k < nb; k++)
        free(only_b[k]);
    free(only_b);
    free(m);
    kbc_baseline_free(bl);
    side_free(&a);
    side_free(&b);
    return code;
}
