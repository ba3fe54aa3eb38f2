/* merge_cmd.c -- see merge_cmd.h: the join of data/merge.h written out as
 * results.json (the merged document), results.csv and results.md (the
 * reporters), through one fan-out. */
#define _GNU_SOURCE
#include "merge_cmd.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fanout.h"
#include "merge.h"
#include "record_json.h"
#include "report.h"
#include "util.h"

/* The merged results.json as a sink of the fan-out: the merged document
   (kbc_merged.doc), which gets the suspect rows of all the parts' rows and
   is written at the end, whole, as a run's (kbc_results_write_file). */
typedef struct merged_json {
    json_t *doc;
    const char *path;
    char why[1200]; /* why it could not be written, or "" */
} merged_json;

static int mj_suspects(void *ctx, const kbc_suspect *list, size_t n)
{
    merged_json *m = ctx;
    json_object_set_new(m->doc, "suspects", kbc_suspects_to_json(list, n));
    return 0;
}

/* The document keeps the exit code of the merged rows (kbc_merged.code),
   not the one of the writing. */
static int mj_end(void *ctx, int code)
{
    merged_json *m = ctx;
    (void)code;
    char *tmp = kbc_xasprintf("%s.tmp", m->path);
    const char *what;
    int e;
    if (kbc_results_write_file(m->doc, m->path, tmp, &what, &e) != 0)
        snprintf(m->why, sizeof m->why, "cannot write %s: %s", what,
                 e ? strerror(e) : "write error");
    free(tmp);
    return m->why[0] ? -1 : 0;
}

static const char *mj_error(void *ctx)
{
    merged_json *m = ctx;
    return m->why[0] ? m->why : NULL;
}

/* results.json, results.csv and results.md: the merged document and the
   existing reporters, fed the merged rows point by point through one
   fan-out (fanout.h), which finds the suspect rows once for all three and
   says each write that fails.  Returns 0, or -1 when a file could not be
   written. */
static int write_outputs(const kbc_run_info *info, const kbc_record *recs, size_t m,
                         json_t *doc, const char *json, const char *csv, const char *md,
                         int code, FILE *err)
{
    int bad = 0;
    merged_json mj = {.doc = doc, .path = json};
    kbc_sink sinks[3] = {{.ctx = &mj, .suspects = mj_suspects, .end = mj_end,
                          .error = mj_error}};
    const char *names[3] = {json, NULL, NULL};
    size_t n = 1;
    kbc_diag d = {{0}};
    if (kbc_report_csv(csv, &sinks[n], &d) == 0) {
        names[n++] = csv;
    } else {
        fprintf(err, "kbench: merge: %s\n", d.msg);
        bad = 1;
    }
    if (kbc_report_markdown(md, &sinks[n], &d) == 0) {
        names[n++] = md;
    } else {
        fprintf(err, "kbench: merge: %s\n", d.msg);
        bad = 1;
    }
    kbc_fanout f;
    kbc_fanout_init(&f, sinks, n, err, "kbench: merge: ");
    kbc_fanout_begin(&f, info);
    for (size_t i = 0; i < m;) {
        size_t j = i + 1;
        while (j < m && recs[j].point == recs[i].point &&
               strcmp(recs[j].experiment, recs[i].experiment) == 0)
            j++;
        kbc_fanout_point(&f, &recs[i], j - i);
        i = j;
    }
    bad |= kbc_fanout_end(&f, code) == KBC_EXIT_SYSTEM;
    for (size_t k = 0; k < n; k++) {
        if (!kbc_fanout_ok(&f, k) && !(sinks[k].error && sinks[k].error(sinks[k].ctx)))
            fprintf(err, "kbench: merge: cannot write %s.\n", names[k]);
        if (sinks[k].destroy)
            sinks[k].destroy(sinks[k].ctx);
    }
    kbc_fanout_free(&f);
    return bad ? -1 : 0;
}

int kbc_cmd_merge(const char *const *inputs, size_t n, const char *out_dir, int allow_mixed,
                  FILE *out, FILE *err)
{
    if (n == 0) {
        fprintf(err, "kbench: merge: give the shards' folders to merge.\n");
        return KBC_EXIT_USAGE;
    }
    if (!out_dir || !*out_dir) {
        fprintf(err, "kbench: merge: give the folder to write the merged results into (-o "
                     "OUT).\n");
        return KBC_EXIT_USAGE;
    }
    kbc_merged m;
    if (kbc_merge_join(&m, inputs, n, allow_mixed, err) != 0)
        return KBC_EXIT_USAGE;
    size_t len = strlen(out_dir);
    const char *sep = out_dir[len - 1] == '/' ? "" : "/";
    char *json_path = kbc_xasprintf("%s%sresults.json", out_dir, sep);
    char *csv_path = kbc_xasprintf("%s%sresults.csv", out_dir, sep);
    char *md_path = kbc_xasprintf("%s%sresults.md", out_dir, sep);
    int code = KBC_EXIT_USAGE;
    const char *clash = kbc_merge_part_of(&m, json_path);
    if (clash) {
        fprintf(err,
                "kbench: merge: %s is one of the parts (%s); write the merged results into "
                "another folder.\n",
                json_path, clash);
        goto done;
    }
    code = KBC_EXIT_SYSTEM;
    if (kbc_make_dirs(out_dir) != 0) {
        fprintf(err, "kbench: merge: cannot create the folder %s: %s.\n", out_dir,
                strerror(errno));
        goto done;
    }
    if (write_outputs(&m.info, m.recs, m.n_recs, m.doc, json_path, csv_path, md_path, m.code,
                      err) != 0)
        goto done;
    fprintf(out, "merge: %zu part%s, %zu row%s, into %s\n", n, n == 1 ? "" : "s", m.n_recs,
            m.n_recs == 1 ? "" : "s", out_dir);
    fflush(out);
    code = m.code;
done:
    free(json_path);
    free(csv_path);
    free(md_path);
    kbc_merge_free(&m);
    return code;
}
