/*
 * fuzz_results.c -- libFuzzer harness for the reader of results.json
 * (core/src/data/results_read.c), the file compare, merge, plot, report,
 * history and --baseline take from users.  The input is parsed by jansson as
 * any JSON value; what parses is read both ways (the rows alone, and the
 * whole document with its header), and every row that comes back is looked
 * at as a consumer would: its key, its group and its samples.  A reader that
 * accepts a document must hand back records whose strings are terminated and
 * whose sample counts match their arrays; one that refuses must say why.
 * Built only with -DKBENCH_FUZZ=ON (tests/fuzz/fuzz.cmake).
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "results_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads a record as a consumer would: its key, its group (as plot and the
   report draw it), its check's measure and its samples.  The fixed-size
   names must come back terminated. */
static void look_at(const kbc_record *r)
{
    if (memchr(r->experiment, 0, sizeof r->experiment) == NULL ||
        memchr(r->variant, 0, sizeof r->variant) == NULL ||
        memchr(r->plugin, 0, sizeof r->plugin) == NULL ||
        memchr(r->reason, 0, sizeof r->reason) == NULL)
        abort();
    char key[4096], group[1024];
    kbc_record_key(r, key, sizeof key);
    kbc_record_group(r, NULL, ", ", group, sizeof group);
    const char *m = kbc_check_measure(r);
    volatile size_t sink = strlen(key) + strlen(group) + (m ? strlen(m) : 0);
    for (size_t i = 0; i < r->n_samples; i++)
        sink += r->samples[i] > 0;
    for (uint32_t i = 0; i < r->n_params; i++)
        sink += kbc_param_number(&r->params[i]) > 0;
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t err;
    json_t *root = json_loadb((const char *)data, size, JSON_DECODE_ANY, &err);
    if (!root)
        return 0;
    kbc_diag d;
    kbc_record *recs = NULL;
    size_t n = 0;
    memset(&d, 0, sizeof d);
    if (kbc_results_from_json(root, "fuzz.json", &recs, &n, &d) == 0) {
        for (size_t i = 0; i < n; i++)
            look_at(&recs[i]);
        kbc_records_free(recs, n);
    } else if (d.msg[0] == '\0') {
        abort(); /* refused without a sentence */
    }
    kbc_run_doc doc;
    memset(&d, 0, sizeof d);
    if (kbc_run_doc_from_json(root, "fuzz.json", &doc, &d) == 0) {
        for (size_t i = 0; i < doc.n_recs; i++)
            look_at(&doc.recs[i]);
        kbc_run_doc_free(&doc);
    } else if (d.msg[0] == '\0') {
        abort();
    }
    json_decref(root);
    return 0;
}
