/*
 * fuzz_history.c -- libFuzzer harness for the history database itself
 * (core/src/history): the input is written as the database file of a
 * scratch folder, which is then opened for reading and queried as the
 * reading commands do (runs, series, each series' points and steps, a
 * commit's time), then opened for writing (identified, upgraded), a run
 * added, and queried again.  A history file is shared, copied and kept for
 * years: any bytes must give an answer or one sentence, never a crash, and
 * a file refused as not a kbench history must be left as it was.
 * Built only with -DKBENCH_FUZZ=ON (tests/fuzz/fuzz.cmake).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], db[128], run[128];

/* One finished run of one row: what every add of this harness imports. */
static const char results_json[] =
    "{\"schema_version\": 1, \"kbench\": {\"version\": \"0.1.0\", \"git\": \"abc\"},\n"
    " \"started\": \"2026-01-01T10:00:00Z\",\n"
    " \"machine\": {\"has_gpu\": true, \"gpu\": \"Fuzz GPU\", \"driver_version\": 13000,"
    " \"runtime_version\": 13000, \"clocks_khz\": {\"sm\": 1980000, \"memory\": 2619000},"
    " \"host\": \"h\", \"cpu_threads\": 4},\n"
    " \"provenance\": {\"plugins\": [], \"cccl_version\": 3000001,"
    " \"cublas_version\": \"13.0.2\"},\n"
    " \"results\": [{\"key\": \"toy/e/n=1/v\", \"experiment\": \"e\", \"plugin\": \"toy\","
    " \"variant\": \"v\", \"status\": \"pass\", \"runs\": 3, \"time_s\": {\"median\": 0.001},"
    " \"samples_s\": [0.001, 0.001, 0.001], \"noise\": {\"achieved\": 0.01},"
    " \"gpu_uuid\": \"GPU-1\"}],\n"
    " \"exit_code\": 0, \"finished\": \"2026-01-01T10:01:00Z\"}\n";

static void remove_files(void)
{
    static const char *const ext[] = {"", "-wal", "-shm", "-journal"};
    char p[160];
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        snprintf(p, sizeof p, "%s%s", db, ext[i]);
        unlink(p);
    }
}

static void remove_dir(void)
{
    remove_files();
    unlink(run);
    rmdir(dir);
}

static void setup(void)
{
    /* $TMPDIR when set: a folder in memory (/dev/shm) spares the disk the
       syncs of every commit. */
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/kbench-fuzz-history-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        abort();
    snprintf(db, sizeof db, "%s/h.db", dir);
    snprintf(run, sizeof run, "%s/results.json", dir);
    FILE *f = fopen(run, "w");
    if (!f || fputs(results_json, f) < 0 || fclose(f) != 0)
        abort();
    atexit(remove_dir);
}

/* A refusal must be a sentence. */
static void said(int code, const kbc_diag *d)
{
    if (code != 0 && d->msg[0] == '\0')
        abort();
}

/* The reading commands' queries, each an answer or a sentence. */
static void query(kbc_history *h)
{
    kbc_diag d;
    memset(&d, 0, sizeof d);
    kbc_hist_run *runs = NULL;
    size_t n_runs = 0;
    int code = kbc_history_runs(h, &runs, &n_runs, &d);
    said(code, &d);
    if (code == 0)
        free(runs);
    kbc_hist_series *s = NULL;
    size_t n = 0;
    memset(&d, 0, sizeof d);
    code = kbc_history_series(h, NULL, &s, &n, &d);
    said(code, &d);
    if (code != 0)
        return;
    for (size_t i = 0; i < n && i < 16; i++) {
        char text[1024];
        kbc_hist_testbed_text(&s[i].testbed, text, sizeof text);
        kbc_hist_point *p = NULL;
        size_t np = 0;
        memset(&d, 0, sizeof d);
        code = kbc_history_points(h, s[i].key, s[i].testbed.id, &p, &np, &d);
        said(code, &d);
        if (code == 0) {
            kbc_hist_step *steps = NULL;
            kbc_history_steps(p, np, &steps);
            free(steps);
            free(p);
        }
    }
    kbc_hist_series_free(s, n);
    int64_t t;
    memset(&d, 0, sizeof d);
    code = kbc_history_commit_time(h, "c1", &t, &d);
    said(code, &d);
}

/* The whole file, or NULL. */
static uint8_t *slurp(size_t *n)
{
    FILE *f = fopen(db, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = malloc(1 << 20);
    *n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0])
        setup();
    remove_files();
    FILE *f = fopen(db, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        abort();

    kbc_history *h = NULL;
    kbc_diag d;
    memset(&d, 0, sizeof d);
    int code = kbc_history_open(db, 0, &h, &d);
    said(code, &d);
    if (code == 0) {
        query(h);
        kbc_history_close(h);
    }

    size_t n0 = 0, n1 = 0;
    uint8_t *before = slurp(&n0);
    memset(&d, 0, sizeof d);
    h = NULL;
    code = kbc_history_open(db, 1, &h, &d);
    said(code, &d);
    if (code == KBC_EXIT_USAGE) {
        /* Not a kbench history (of this kbench): left as it was. */
        uint8_t *after = slurp(&n1);
        if (!before || !after || n0 != n1 || memcmp(before, after, n0) != 0)
            abort();
        free(after);
    }
    free(before);
    if (code == 0) {
        kbc_hist_commit c = {.time = 1000};
        snprintf(c.rev, sizeof c.rev, "c1");
        snprintf(c.source, sizeof c.source, "option");
        int added = 0;
        memset(&d, 0, sizeof d);
        said(kbc_history_add(h, run, &c, 0, &added, &d), &d);
        query(h);
        kbc_history_close(h);
    }
    return 0;
}
