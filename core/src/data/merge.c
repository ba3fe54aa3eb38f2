/* merge.c -- see merge.h.
 *
 * Each part is read twice over from one parse: as jansson's tree, whose
 * row objects go into the merged results.json untouched (so that nothing
 * a reader does not know is lost), and as records with their header
 * (results_read.h), which the checks and the order use and
 * views/merge_cmd.c writes out.
 */
#define _GNU_SOURCE
#include "merge.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results_read.h"
#include "results_write.h"
#include "text.h"
#include "util.h"

/* At most this many duplicated row keys are named one by one. */
#define MAX_DUP_NAMED 5

typedef struct part {
    const char *input; /* as given                                */
    char *path;        /* the results.json read                   */
    char *folder;      /* the folder it lies in                   */
    json_t *root;      /* the parsed document                     */
    kbc_run_doc doc;   /* its header and rows                     */
    int read;          /* doc holds the document                  */
} part;

static void problem(FILE *err, int *count, const char *fmt, ...) KB_PRINTF(3, 4);

static void problem(FILE *err, int *count, const char *fmt, ...)
{
    char raw[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    fprintf(err, "kbench: merge: %s\n", kbc_text_visible(raw));
    (*count)++;
}

/* ---- Reading the parts ---------------------------------------------- */

static int read_part(part *p, const char *input, FILE *err, int *problems)
{
    memset(p, 0, sizeof *p);
    p->input = input;
    struct stat st;
    if (stat(input, &st) != 0) {
        problem(err, problems, "cannot read %s: %s.", input, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        size_t len = strlen(input);
        p->path = kbc_xasprintf("%s%sresults.json", input,
                                len > 0 && input[len - 1] == '/' ? "" : "/");
        p->folder = kbc_xstrdup(input);
        if (stat(p->path, &st) != 0) {
            problem(err, problems,
                    "the folder %s holds no results.json (give the folders that kbench run "
                    "--shard i/N -o DIR wrote).",
                    input);
            return -1;
        }
    } else {
        p->path = kbc_xstrdup(input);
        const char *slash = strrchr(input, '/');
        p->folder = slash == input       ? kbc_xstrdup("/")
                    : slash              ? kbc_xstrndup(input, (size_t)(slash - input))
                                         : kbc_xstrdup(".");
    }
    json_error_t e;
    p->root = json_load_file(p->path, 0, &e);
    if (!p->root) {
        problem(err, problems, "cannot read %s: %s (line %d).", p->path, e.text, e.line);
        return -1;
    }
    kbc_diag d = {{0}};
    if (kbc_run_doc_from_json(p->root, p->path, &p->doc, &d) != 0) {
        problem(err, problems, "%s", d.msg);
        return -1;
    }
    p->read = 1;
    return 0;
}

static void free_part(part *p)
{
    if (p->read)
        kbc_run_doc_free(&p->doc);
    json_decref(p->root);
    free(p->path);
    free(p->folder);
}

/* ---- Commands to rerun or finish a shard ---------------------------- */

typedef struct strbuf {
    char *s;
    size_t len, cap;
} strbuf;

static void sb_add(strbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n + 2 > b->cap) {
        b->cap = (b->len + n + 2) * 2;
        b->s = kbc_xrealloc(b->s, b->cap);
    }
    if (b->len)
        b->s[b->len++] = ' ';
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

/* A word as a shell takes it: as it is when it holds only safe
   characters, else in single quotes. */
static char *shell_word(const char *s)
{
    int plain = *s != '\0';
    for (const char *c = s; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+=:,@%",
                     *c))
            plain = 0;
    if (plain)
        return kbc_xstrdup(s);
    strbuf b = {0};
    b.cap = strlen(s) * 4 + 3;
    b.s = kbc_xmalloc(b.cap);
    b.s[b.len++] = '\'';
    for (const char *c = s; *c; c++) {
        if (*c == '\'') {
            memcpy(b.s + b.len, "'\\''", 4);
            b.len += 4;
        } else {
            b.s[b.len++] = *c;
        }
    }
    b.s[b.len++] = '\'';
    b.s[b.len] = '\0';
    return b.s;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The folder given to -o / --output in a command line, or NULL (free it). */
static char *command_output(const char *cmd)
{
    if (!cmd)
        return NULL;
    char *copy = kbc_xstrdup(cmd), *save = NULL, *found = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (strcmp(t, "-o") == 0 || strcmp(t, "--output") == 0) {
            char *v = strtok_r(NULL, " ", &save);
            if (v) {
                free(found);
                found = kbc_xstrdup(v);
            }
        } else if (starts_with(t, "--output=")) {
            free(found);
            found = kbc_xstrdup(t + strlen("--output="));
        }
    }
    free(copy);
    return found;
}

/* The command line cmd (a run's "command": its words joined by spaces)
   with --shard's value replaced by shard (and --shards dropped, which only
   --shard auto reads), -o's by folder, and --resume kept and added
   (resume) or dropped.  A NULL shard or folder keeps what cmd has.  When
   cmd is NULL, it starts from "kbench run CONFIG". */
static char *command_with(const char *cmd, const char *config, const char *shard,
                          const char *folder, int resume)
{
    char *fallback = NULL;
    if (!cmd) {
        char *c = shell_word(config ? config : "FILE");
        cmd = fallback = kbc_xasprintf("kbench run %s", c);
        free(c);
    }
    char *out = folder ? shell_word(folder) : NULL;
    strbuf b = {0};
    int seen_shard = 0, seen_out = 0, seen_resume = 0;
    char *copy = kbc_xstrdup(cmd), *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (shard && (strcmp(t, "--shard") == 0 || starts_with(t, "--shard="))) {
            if (strcmp(t, "--shard") == 0)
                strtok_r(NULL, " ", &save);
            if (!seen_shard) {
                sb_add(&b, "--shard");
                sb_add(&b, shard);
            }
            seen_shard = 1;
        } else if (shard && (strcmp(t, "--shards") == 0 || starts_with(t, "--shards="))) {
            if (strcmp(t, "--shards") == 0)
                strtok_r(NULL, " ", &save);
        } else if (out && (strcmp(t, "-o") == 0 || strcmp(t, "--output") == 0 ||
                           starts_with(t, "--output="))) {
            if (!starts_with(t, "--output="))
                strtok_r(NULL, " ", &save);
            if (!seen_out) {
                sb_add(&b, "-o");
                sb_add(&b, out);
            }
            seen_out = 1;
        } else if (strcmp(t, "--resume") == 0) {
            if (resume && !seen_resume)
                sb_add(&b, t);
            seen_resume = 1;
        } else {
            sb_add(&b, t);
        }
    }
    if (shard && !seen_shard) {
        sb_add(&b, "--shard");
        sb_add(&b, shard);
    }
    if (out && !seen_out) {
        sb_add(&b, "-o");
        sb_add(&b, out);
    }
    if (resume && !seen_resume)
        sb_add(&b, "--resume");
    free(copy);
    free(out);
    free(fallback);
    return b.s ? b.s : kbc_xstrdup("");
}

/* A folder for shard `index` to write into, beside the first part's: its
   -o folder with the shard number at the end replaced ("run/part-0" ->
   "run/part-2"), or part-INDEX in the same parent folder. */
static char *suggest_folder(const part *first, int index)
{
    char *o = command_output(first->doc.command);
    if (!o)
        o = kbc_xstrdup(first->folder);
    size_t n = strlen(o);
    while (n > 1 && o[n - 1] == '/')
        o[--n] = '\0';
    size_t d = n;
    while (d > 0 && o[d - 1] >= '0' && o[d - 1] <= '9')
        d--;
    char own[16];
    snprintf(own, sizeof own, "%d", first->doc.shard_index);
    char *s;
    if (d < n && strcmp(o + d, own) == 0) {
        o[d] = '\0';
        s = kbc_xasprintf("%s%d", o, index);
    } else {
        char *slash = strrchr(o, '/');
        if (slash)
            slash[1] = '\0';
        s = kbc_xasprintf("%spart-%d", slash ? o : "", index);
    }
    free(o);
    return s;
}

/* ---- Checks --------------------------------------------------------- */

static int cmp_exp_point(const void *a, const void *b)
{
    const kbc_record *x = *(const kbc_record *const *)a, *y = *(const kbc_record *const *)b;
    int c = strcmp(x->experiment, y->experiment);
    if (c)
        return c;
    return x->point < y->point ? -1 : x->point > y->point;
}

/* How many distinct points (experiment, point) the rows cover: a job is
   one point, and it leaves at least one row. */
static uint64_t points_with_rows(const kbc_run_doc *doc)
{
    if (doc->n_recs == 0)
        return 0;
    const kbc_record **v = kbc_xmalloc(doc->n_recs * sizeof *v);
    for (size_t i = 0; i < doc->n_recs; i++)
        v[i] = &doc->recs[i];
    qsort(v, doc->n_recs, sizeof *v, cmp_exp_point);
    uint64_t n = 1;
    for (size_t i = 1; i < doc->n_recs; i++)
        n += cmp_exp_point(&v[i - 1], &v[i]) != 0;
    free(v);
    return n;
}

static const char *gpu_of(const kbc_run_doc *doc)
{
    if (!doc->has_machine)
        return "an unknown machine";
    return doc->machine.has_gpu ? doc->machine.name : "no GPU";
}

/* The first 12 characters of a hash, for messages. */
static const char *short_hash(const char *h, char buf[16])
{
    snprintf(buf, 16, "%.12s", h ? h : "");
    return buf;
}

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* Every part has a plan, and only a lone part may be a whole plan. */
static void check_plans(part *ps, size_t n, FILE *err, int *problems)
{
    for (size_t i = 0; i < n; i++) {
        if (!ps[i].doc.has_plan)
            problem(err, problems,
                    "%s has no \"plan\", so it was not written by kbench run --shard i/N and "
                    "cannot be merged.",
                    ps[i].input);
        else if (ps[i].doc.shard_count == 0 && n > 1)
            problem(err, problems, "%s is not a shard (run with --shard i/N).", ps[i].input);
    }
}

static void check_hashes(part *ps, size_t n, FILE *err, int *problems)
{
    char a[16], b[16];
    for (size_t i = 1; i < n; i++)
        if (strcmp(ps[i].doc.plan_hash, ps[0].doc.plan_hash) != 0)
            problem(err, problems, "%s belongs to another plan (hash %s... against %s... of %s).",
                    ps[i].input, short_hash(ps[i].doc.plan_hash, a),
                    short_hash(ps[0].doc.plan_hash, b), ps[0].input);
}

static void check_counts(part *ps, size_t n, FILE *err, int *problems)
{
    for (size_t i = 1; i < n; i++)
        if (ps[i].doc.shard_count != ps[0].doc.shard_count)
            problem(err, problems,
                    "%s is shard %d/%d but %s is shard %d/%d: the plan was split into a "
                    "different number of shards.",
                    ps[i].input, ps[i].doc.shard_index, ps[i].doc.shard_count, ps[0].input,
                    ps[0].doc.shard_index, ps[0].doc.shard_count);
}

/* Each index once, none missing. */
static void check_indices(part *ps, size_t n, FILE *err, int *problems)
{
    int count = ps[0].doc.shard_count;
    if (count == 0)
        return; /* a lone whole plan */
    size_t *owner = kbc_xmalloc((size_t)count * sizeof *owner);
    for (int i = 0; i < count; i++)
        owner[i] = SIZE_MAX;
    for (size_t k = 0; k < n; k++) {
        int i = ps[k].doc.shard_index;
        if (owner[i] == SIZE_MAX)
            owner[i] = k;
        else if (same_file(ps[owner[i]].path, ps[k].path))
            problem(err, problems, "%s is given twice; give each shard once.", ps[k].input);
        else
            problem(err, problems, "%s and %s are both shard %d of %d; give each shard once.",
                    ps[owner[i]].input, ps[k].input, i, count);
    }
    for (int i = 0; i < count; i++) {
        if (owner[i] != SIZE_MAX)
            continue;
        char shard[32];
        snprintf(shard, sizeof shard, "%d/%d", i, count);
        char *folder = suggest_folder(&ps[0], i);
        char *cmd = command_with(ps[0].doc.command, ps[0].doc.config_file, shard, folder, 0);
        problem(err, problems, "shard %d of %d is missing; rerun it with: %s", i, count, cmd);
        free(cmd);
        free(folder);
    }
    free(owner);
}

static void check_complete(part *ps, size_t n, FILE *err, int *problems)
{
    for (size_t k = 0; k < n; k++) {
        const kbc_run_doc *doc = &ps[k].doc;
        uint64_t have = points_with_rows(doc);
        if (doc->finished && have >= doc->jobs)
            continue;
        char shard[32];
        snprintf(shard, sizeof shard, "%d/%d", doc->shard_index, doc->shard_count);
        char *cmd = command_with(doc->command, doc->config_file,
                                 doc->shard_count > 0 ? shard : NULL, ps[k].folder, 1);
        problem(err, problems,
                "%s ended early (%s%llu of its %llu points have rows); finish it in that "
                "folder with: %s",
                ps[k].input, doc->finished ? "" : "its run never finished; ",
                (unsigned long long)have, (unsigned long long)doc->jobs, cmd);
        free(cmd);
    }
}

/* Whether the part ran with a GPU: a part without one skipped every CUDA
   row, so it is another machine, whatever --allow-mixed says of models. */
static int with_gpu(const kbc_run_doc *doc)
{
    return doc->has_machine && doc->machine.has_gpu;
}

static void check_gpus(part *ps, size_t n, int allow_mixed, FILE *err, int *problems)
{
    for (size_t k = 1; k < n; k++) {
        if (with_gpu(&ps[k].doc) != with_gpu(&ps[0].doc))
            problem(err, problems,
                    "%s ran on %s but %s on %s; a part without a GPU skipped the CUDA rows "
                    "the other ran, so they are not one run (--allow-mixed joins GPU models, "
                    "not a machine without one): run that shard again on a GPU.",
                    ps[k].input, gpu_of(&ps[k].doc), ps[0].input, gpu_of(&ps[0].doc));
        else if (!allow_mixed && strcmp(gpu_of(&ps[k].doc), gpu_of(&ps[0].doc)) != 0)
            problem(err, problems,
                    "%s ran on %s but %s on %s; timings from different GPUs do not compare "
                    "(give --allow-mixed to merge them anyway).",
                    ps[k].input, gpu_of(&ps[k].doc), ps[0].input, gpu_of(&ps[0].doc));
    }
}

typedef struct keyed {
    char *key;
    size_t part;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->part > y->part) - (x->part < y->part);
}

/* No row key twice: two parts (or one) that ran the same row. */
static void check_keys(part *ps, size_t n, FILE *err, int *problems)
{
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += ps[k].doc.n_recs;
    if (total == 0)
        return;
    keyed *v = kbc_xmalloc(total * sizeof *v);
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < ps[k].doc.n_recs; i++) {
            const kbc_record *r = &ps[k].doc.recs[i];
            size_t need = kbc_record_key(r, NULL, 0) + 1;
            v[m].key = kbc_xmalloc(need);
            kbc_record_key(r, v[m].key, need);
            v[m++].part = k;
        }
    qsort(v, m, sizeof *v, cmp_keyed);
    size_t dups = 0;
    for (size_t i = 1; i < m; i++) {
        if (strcmp(v[i].key, v[i - 1].key) != 0)
            continue;
        if (++dups > MAX_DUP_NAMED)
            continue;
        if (v[i].part == v[i - 1].part)
            problem(err, problems, "the row %s is in %s twice.", v[i].key, ps[v[i].part].input);
        else
            problem(err, problems, "the row %s is in both %s and %s.", v[i].key,
                    ps[v[i - 1].part].input, ps[v[i].part].input);
    }
    if (dups > MAX_DUP_NAMED)
        problem(err, problems, "%zu more rows are duplicated.", dups - MAX_DUP_NAMED);
    for (size_t i = 0; i < m; i++)
        free(v[i].key);
    free(v);
}

/* Every point of every experiment has rows in some part.  Parts of one
   plan (same hash), each complete, can still leave a point to nobody: shards
   split with --costs from cost files that differed between the ranks.  Checked
   last: the checks before it explain the usual gaps better. */
static void check_covered(part *ps, size_t n, FILE *err, int *problems)
{
    const kbc_run_doc *first = &ps[0].doc;
    size_t missing = 0;
    for (size_t e = 0; e < first->n_exps; e++) {
        const kbc_exp_info *x = &first->exps[e];
        if (x->n_points == 0 || x->n_points > ((uint64_t)1 << 32))
            continue;
        unsigned char *seen = kbc_xcalloc((size_t)x->n_points, 1);
        for (size_t k = 0; k < n; k++)
            for (size_t i = 0; i < ps[k].doc.n_recs; i++) {
                const kbc_record *r = &ps[k].doc.recs[i];
                if (r->point < x->n_points && strcmp(r->experiment, x->name) == 0)
                    seen[r->point] = 1;
            }
        for (uint64_t p = 0; p < x->n_points; p++) {
            if (seen[p] || ++missing > MAX_DUP_NAMED)
                continue;
            problem(err, problems,
                    "point %llu/%llu of [%s] has rows in no part: the parts are of one plan "
                    "but split it differently (shards cut with --costs from different "
                    "files?); run every shard again with the same --costs, or none.",
                    (unsigned long long)p + 1, (unsigned long long)x->n_points, x->name);
        }
        free(seen);
    }
    if (missing > MAX_DUP_NAMED)
        problem(err, problems, "%zu more points have rows in no part.", missing - MAX_DUP_NAMED);
}

/* ---- Plan order ----------------------------------------------------- */

typedef struct ref {
    size_t part, row;
    size_t exp; /* the experiment's place in the configuration */
    const kbc_record *r;
} ref;

static int cmp_ref(const void *a, const void *b)
{
    const ref *x = a, *y = b;
    if (x->exp != y->exp)
        return x->exp < y->exp ? -1 : 1;
    int c = strcmp(x->r->experiment, y->r->experiment);
    if (c)
        return c;
    if (x->r->point != y->r->point)
        return x->r->point < y->r->point ? -1 : 1;
    if (x->r->variant_index != y->r->variant_index)
        return x->r->variant_index < y->r->variant_index ? -1 : 1;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Every row of every part, in plan order: the experiments as the first
   part's configuration lists them (one it does not list goes last), then
   point, then variant. */
static ref *plan_order(part *ps, size_t n, size_t *total)
{
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        m += ps[k].doc.n_recs;
    ref *v = kbc_xmalloc((m ? m : 1) * sizeof *v);
    const kbc_run_doc *first = &ps[0].doc;
    size_t j = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < ps[k].doc.n_recs; i++) {
            const kbc_record *r = &ps[k].doc.recs[i];
            size_t e = 0;
            while (e < first->n_exps && strcmp(first->exps[e].name, r->experiment) != 0)
                e++;
            v[j++] = (ref){.part = k, .row = i, .exp = e, .r = r};
        }
    qsort(v, m, sizeof *v, cmp_ref);
    *total = m;
    return v;
}

/* ---- Writing -------------------------------------------------------- */

/* The earliest (latest) of the parts' string member key, or NULL. */
static const char *extreme_time(part *ps, size_t n, const char *key, int latest)
{
    const char *best = NULL;
    for (size_t k = 0; k < n; k++) {
        const char *s = json_string_value(json_object_get(ps[k].root, key));
        if (s && (!best || (latest ? strcmp(s, best) > 0 : strcmp(s, best) < 0)))
            best = s;
    }
    return best;
}

/* The merged document: schema_version, then the first part's members in
   their order, with plan, merged_from, results, exit_code, started and
   finished its own. */
static json_t *merged_doc(part *ps, size_t n, const ref *order, size_t m, uint64_t jobs,
                          int code)
{
    json_t *doc = json_object();
    const char *key;
    json_t *v;
    json_t *from = json_array();
    for (size_t k = 0; k < n; k++)
        json_array_append_new(from, json_string(ps[k].path));
    /* The merged document is written in this kbench's layout, whatever
       version the parts were (the reader took each). */
    json_object_set_new(doc, "schema_version", json_integer(KBC_RESULTS_SCHEMA_VERSION));
    json_object_foreach(ps[0].root, key, v)
    {
        if (strcmp(key, "merged_from") == 0 || strcmp(key, "schema_version") == 0)
            continue;
        if (strcmp(key, "plan") == 0) {
            json_t *plan = json_object();
            json_object_set_new(plan, "hash", json_string(ps[0].doc.plan_hash));
            json_object_set_new(plan, "shard", json_null());
            json_object_set_new(plan, "jobs", jobs <= (uint64_t)INT64_MAX
                                                  ? json_integer((json_int_t)jobs)
                                                  : json_real((double)jobs));
            json_object_set_new(doc, "plan", plan);
            json_object_set(doc, "merged_from", from);
        } else if (strcmp(key, "results") == 0) {
            json_t *rows = json_array();
            for (size_t i = 0; i < m; i++) {
                const json_t *all = json_object_get(ps[order[i].part].root, "results");
                json_array_append(rows, json_array_get(all, order[i].row));
            }
            json_object_set_new(doc, "results", rows);
        } else if (strcmp(key, "exit_code") == 0) {
            json_object_set_new(doc, "exit_code", json_integer(code));
        } else if (strcmp(key, "started") == 0 || strcmp(key, "finished") == 0) {
            const char *t = extreme_time(ps, n, key, strcmp(key, "finished") == 0);
            json_object_set_new(doc, key, t ? json_string(t) : json_null());
        } else {
            json_object_set(doc, key, v);
        }
    }
    if (!json_object_get(doc, "merged_from"))
        json_object_set(doc, "merged_from", from);
    json_decref(from);
    return doc;
}

/* ---- The join -------------------------------------------------------- */

/* The parts of a join (merge.h). */
struct kbc_merge_parts {
    part *ps;
    size_t n;
    ref *order;
};

int kbc_merge_join(kbc_merged *m, const char *const *inputs, size_t n, int allow_mixed,
                   FILE *err)
{
    memset(m, 0, sizeof *m);
    int problems = 0;
    part *ps = kbc_xcalloc(n ? n : 1, sizeof *ps);
    m->parts = kbc_xcalloc(1, sizeof *m->parts);
    m->parts->ps = ps;
    m->parts->n = n;
    for (size_t k = 0; k < n; k++)
        read_part(&ps[k], inputs[k], err, &problems);
    /* Each stage is checked only when the ones before it passed: shards of
       another plan make no sense to count. */
    if (!problems)
        check_plans(ps, n, err, &problems);
    if (!problems)
        check_hashes(ps, n, err, &problems);
    if (!problems)
        check_counts(ps, n, err, &problems);
    if (!problems) {
        check_indices(ps, n, err, &problems);
        check_complete(ps, n, err, &problems);
        check_gpus(ps, n, allow_mixed, err, &problems);
    }
    if (!problems)
        check_keys(ps, n, err, &problems);
    if (!problems)
        check_covered(ps, n, err, &problems);
    if (problems) {
        kbc_merge_free(m);
        return -1;
    }
    size_t rows = 0;
    ref *order = m->parts->order = plan_order(ps, n, &rows);
    int failed = 0;
    m->recs = kbc_xmalloc((rows ? rows : 1) * sizeof *m->recs);
    for (size_t i = 0; i < rows; i++) {
        m->recs[i] = *order[i].r; /* shares the samples: freed with the part */
        failed |= kbc_outcome_failed((int)m->recs[i].outcome);
    }
    m->n_recs = rows;
    uint64_t jobs = 0;
    for (size_t k = 0; k < n; k++)
        jobs += ps[k].doc.jobs;
    m->code = failed ? KBC_EXIT_FAILED : KBC_EXIT_OK;
    m->doc = merged_doc(ps, n, order, rows, jobs, m->code);
    m->info = ps[0].doc.info;
    m->info.plan_hash = ps[0].doc.plan_hash;
    m->info.shard_index = 0;
    m->info.shard_count = 0;
    m->info.jobs = jobs;
    m->n_parts = n;
    return 0;
}

const char *kbc_merge_part_of(const kbc_merged *m, const char *path)
{
    for (size_t k = 0; m->parts && k < m->parts->n; k++)
        if (m->parts->ps[k].read && same_file(path, m->parts->ps[k].path))
            return m->parts->ps[k].input;
    return NULL;
}

void kbc_merge_free(kbc_merged *m)
{
    json_decref(m->doc);
    free(m->recs);
    if (m->parts) {
        for (size_t k = 0; k < m->parts->n; k++)
            free_part(&m->parts->ps[k]);
        free(m->parts->ps);
        free(m->parts->order);
        free(m->parts);
    }
    memset(m, 0, sizeof *m);
}
