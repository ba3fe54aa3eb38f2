/*
 * fuzz_journal.c -- libFuzzer harness for `kbench run --resume`'s reader of
 * DIR/journal.jsonl (core/src/data/journal.c): the input is written as the
 * journal of a scratch folder, which is then resumed (any plan accepted),
 * and every row of every entry is read back into a record as the
 * supervisor reads it.  A resume that fails must say why; one that succeeds
 * must leave entries whose strings are set.
 * Built only with -DKBENCH_FUZZ=ON (tests/fuzz/fuzz.cmake).
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal.h"
#include "record.h"
#include "record_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

/* The scratch folder goes when the fuzzer ends. */
static void remove_dir(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/kbench-fuzz-journal-XXXXXX");
        if (!mkdtemp(dir))
            abort();
        atexit(remove_dir);
    }
    char path[128];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);

    static FILE *null_err;
    if (!null_err)
        null_err = fopen("/dev/null", "w");
    kbc_journal j;
    kbc_diag d;
    memset(&j, 0, sizeof j);
    memset(&d, 0, sizeof d);
    if (kbc_journal_resume(&j, dir, "0000", 0, 0, 1, null_err, &d) != 0) {
        if (d.msg[0] == '\0')
            abort(); /* refused without a sentence */
        return 0;
    }
    for (size_t i = 0; i < j.n_entries; i++) {
        const kbc_journal_entry *e = &j.entries[i];
        if (!e->exp || !e->plugin_sha256 || !e->gpu_model || !json_is_array(e->rows))
            abort();
        size_t k;
        const json_t *row;
        json_array_foreach(e->rows, k, row)
        {
            kbc_record r;
            char why[256];
            if (kbc_record_from_json(row, &r, why, sizeof why) == 0) {
                char key[4096];
                kbc_record_key(&r, key, sizeof key);
                kbc_record_free(&r);
            }
        }
    }
    kbc_journal_close(&j);
    return 0;
}
