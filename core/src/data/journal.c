/* journal.c -- see journal.h. */
#define _GNU_SOURCE
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"

/* Writes all of buf at the end of fd, then syncs the data.  On failure
   the file is cut back to where it ended, so that it ends on a whole line
   (a cut line would also be dropped by --resume, with a warning). */
static int write_synced(int fd, const char *buf, size_t n)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    int64_t end = (int64_t)st.st_size, at = end;
    if (kbc_write_whole(fd, &end, buf, n) != 0)
        return -1;
    if (fdatasync(fd) != 0 && errno != EINVAL) {
        int err = errno;
        if (ftruncate(fd, (off_t)at) != 0) {
            /* it keeps the line; --resume reads it if it is whole */
        }
        errno = err;
        return -1;
    }
    return 0;
}

static int write_line(kbc_journal *j, json_t *o, kbc_diag *d)
{
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    if (!text) {
        kbc_diag_set(d, "cannot write %s: out of memory", j->path);
        return -1;
    }
    size_t n = strlen(text);
    char *line = kbc_xmalloc(n + 2);
    memcpy(line, text, n);
    line[n] = '\n';
    free(text);
    int r = write_synced(j->fd, line, n + 1);
    free(line);
    if (r != 0)
        kbc_diag_set(d, "cannot write %s: %s", j->path, strerror(errno));
    return r;
}

static json_t *header(const char *plan_hash, int shard_index, int shard_count)
{
    json_t *h = json_object();
    json_object_set_new(h, "kbench_journal", json_integer(1));
    json_object_set_new(h, "plan_hash", json_string(plan_hash));
    json_object_set_new(h, "shard", shard_count > 0
                                        ? json_pack("[ii]", shard_index, shard_count)
                                        : json_null());
    return h;
}

int kbc_journal_create(kbc_journal *j, const char *dir, const char *plan_hash, int shard_index,
                       int shard_count, kbc_diag *d)
{
    memset(j, 0, sizeof *j);
    j->path = kbc_xasprintf("%s/journal.jsonl", dir);
    j->fd = open(j->path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
    if (j->fd < 0) {
        kbc_diag_set(d, "cannot create %s: %s", j->path, strerror(errno));
        return -1;
    }
    json_t *h = header(plan_hash, shard_index, shard_count);
    int r = write_line(j, h, d);
    json_decref(h);
    return r;
}

static const char *str_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Reads one entry line; returns 0, or -1 when it is not an entry. */
static int read_entry(const json_t *o, kbc_journal_entry *e)
{
    const json_t *xi = json_object_get(o, "exp_index");
    const json_t *pt = json_object_get(o, "point");
    const json_t *rows = json_object_get(o, "rows");
    if (!str_of(o, "exp") || !json_is_integer(xi) || json_integer_value(xi) < 0 ||
        json_integer_value(xi) > UINT32_MAX || !json_is_integer(pt) ||
        json_integer_value(pt) < 0 || !json_is_array(rows))
        return -1;
    e->exp = kbc_xstrdup(str_of(o, "exp"));
    e->exp_index = (uint32_t)json_integer_value(xi);
    e->point = (uint64_t)json_integer_value(pt);
    e->plugin_sha256 = kbc_xstrdup(str_of(o, "plugin_sha256") ? str_of(o, "plugin_sha256") : "");
    e->gpu_model = kbc_xstrdup(str_of(o, "gpu_model") ? str_of(o, "gpu_model") : "");
    e->rows = json_incref((json_t *)rows);
    return 0;
}

/* The journal's first line: a kbench journal of this shard of this plan
   (or, with accept_other_plan, of another plan); its hash kept in j. */
static int check_header(kbc_journal *j, const json_t *o, const char *plan_hash, int shard_index,
                        int shard_count, int accept_other_plan, kbc_diag *d)
{
    const json_t *v = json_object_get(o, "kbench_journal");
    const char *h = str_of(o, "plan_hash");
    if (!json_is_integer(v) || json_integer_value(v) != 1 || !h) {
        kbc_diag_set(d, "%s:1: is not a kbench journal header", j->path);
        return -1;
    }
    snprintf(j->old_hash, sizeof j->old_hash, "%s", h);
    const json_t *sh = json_object_get(o, "shard");
    int oi = -1, oc = 0;
    if (json_is_array(sh) && json_array_size(sh) == 2) {
        oi = (int)json_integer_value(json_array_get(sh, 0));
        oc = (int)json_integer_value(json_array_get(sh, 1));
    }
    if (oc != shard_count || (shard_count > 0 && oi != shard_index)) {
        char was[64], now[64];
        snprintf(was, sizeof was, oc ? "shard %d/%d" : "a whole plan", oi, oc);
        snprintf(now, sizeof now, shard_count ? "shard %d/%d" : "a whole plan",
                 shard_index, shard_count);
        kbc_diag_set(d, "--resume: %s holds %s, and this run is %s", j->path, was, now);
        return -1;
    }
    if (strcmp(h, plan_hash) != 0 && !accept_other_plan) {
        kbc_diag_set(d,
                     "--resume: %s was written for another plan (hash %.12s, this "
                     "INI gives %.12s): the INI file changed since; rerun without "
                     "--resume, or with --resume=accept to keep the rows whose "
                     "points are still in the plan",
                     j->path, h, plan_hash);
        return -1;
    }
    return 0;
}

static int resume(kbc_journal *j, const char *dir, const char *plan_hash, int shard_index,
                  int shard_count, int accept_other_plan, FILE *err, kbc_diag *d)
{
    memset(j, 0, sizeof *j);
    j->fd = -1;
    j->path = kbc_xasprintf("%s/journal.jsonl", dir);
    char why[200];
    FILE *f = kbc_input_fopen(j->path, KBC_INPUT_DATA_MAX, why, sizeof why);
    if (!f) {
        kbc_diag_set(d, "--resume: cannot read %s: %s; %s", j->path, why,
                     errno == ENOENT ? "without a journal there is nothing to resume (run "
                                       "without --resume to start afresh)"
                                     : "move it away, or run without --resume to start afresh");
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    off_t good_end = 0; /* the end of the last whole, readable line */
    int cut = 0;
    size_t room = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        int whole = line[len - 1] == '\n';
        json_error_t je;
        json_t *o = json_loadb(line, (size_t)len, 0, &je);
        if (!o || !whole) {
            /* Only the last line may be cut; one in the middle is damage
               that kbench did not make. */
            int c = fgetc(f);
            if (c != EOF) {
                kbc_diag_set(d, "%s:%ld: is not a journal line (%s); the journal is damaged",
                             j->path, lineno, o ? "no line end" : je.text);
                json_decref(o);
                free(line);
                fclose(f);
                return -1;
            }
            json_decref(o);
            cut = 1;
            break;
        }
        if (lineno == 1) {
            if (check_header(j, o, plan_hash, shard_index, shard_count, accept_other_plan,
                             d) != 0) {
                json_decref(o);
                free(line);
                fclose(f);
                return -1;
            }
        } else {
            kbc_journal_entry e;
            if (read_entry(o, &e) != 0) {
                /* The last line is what a crash mid-write leaves: dropped
                   as a cut one, whatever it holds. */
                int c = fgetc(f);
                if (c == EOF) {
                    json_decref(o);
                    cut = 1;
                    break;
                }
                kbc_diag_set(d, "%s:%ld: is not a journal entry; the journal is damaged",
                             j->path, lineno);
                json_decref(o);
                free(line);
                fclose(f);
                return -1;
            }
            if (j->n_entries == room) {
                room = room ? 2 * room : 64;
                j->entries = kbc_xrealloc(j->entries, room * sizeof *j->entries);
            }
            j->entries[j->n_entries++] = e;
        }
        json_decref(o);
        good_end = ftello(f);
    }
    free(line);
    fclose(f);
    if (lineno == 0 || (lineno == 1 && cut)) {
        kbc_diag_set(d, "--resume: %s is empty; there is nothing to resume", j->path);
        return -1;
    }
    if (cut)
        fprintf(err,
                "kbench: warning: %s: its last line (line %ld) was cut off, as by a kill; the "
                "point it held runs again.\n",
                j->path, lineno);
    j->fd = open(j->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (j->fd < 0 || ftruncate(j->fd, good_end) != 0) {
        kbc_diag_set(d, "cannot write %s: %s", j->path, strerror(errno));
        return -1;
    }
    return 0;
}

int kbc_journal_resume(kbc_journal *j, const char *dir, const char *plan_hash, int shard_index,
                       int shard_count, int accept_other_plan, FILE *err, kbc_diag *d)
{
    if (resume(j, dir, plan_hash, shard_index, shard_count, accept_other_plan, err, d) == 0)
        return 0;
    kbc_journal_close(j); /* the path and the entries read before the refusal */
    return -1;
}

int kbc_journal_append(kbc_journal *j, const char *exp, uint32_t exp_index, uint64_t point,
                       const char *plugin_sha256, const char *gpu_model, json_t *rows,
                       kbc_diag *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "exp", json_string(exp));
    json_object_set_new(o, "exp_index", json_integer(exp_index));
    json_object_set_new(o, "point", json_integer((json_int_t)point));
    json_object_set_new(o, "plugin_sha256", json_string(plugin_sha256 ? plugin_sha256 : ""));
    json_object_set_new(o, "gpu_model", json_string(gpu_model ? gpu_model : ""));
    json_object_set_new(o, "rows", rows);
    int r = write_line(j, o, d);
    json_decref(o);
    return r;
}

void kbc_journal_forget(kbc_journal *j)
{
    for (size_t i = 0; i < j->n_entries; i++) {
        free(j->entries[i].exp);
        free(j->entries[i].plugin_sha256);
        free(j->entries[i].gpu_model);
        json_decref(j->entries[i].rows);
    }
    free(j->entries);
    j->entries = NULL;
    j->n_entries = 0;
}

void kbc_journal_close(kbc_journal *j)
{
    if (j->fd >= 0)
        close(j->fd);
    kbc_journal_forget(j);
    free(j->path);
    memset(j, 0, sizeof *j);
    j->fd = -1;
}
