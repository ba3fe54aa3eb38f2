/* earlier_run.c -- see earlier_run.h. */
#define _GNU_SOURCE
#include "earlier_run.h"

#include <jansson.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "results_read.h"
#include "util.h"

/* An ISO 8601 UTC time as results.json writes it ("2026-11-28T06:40:25Z"),
   in Unix seconds; NaN when it is not one. */
static double utc_seconds(const json_t *v)
{
    if (!json_is_string(v))
        return NAN;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(json_string_value(v), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end)
        return NAN;
    return (double)timegm(&tm);
}

int kbc_earlier_run_seconds(const char *path, const char *plan_hash, double *seconds,
                            uint64_t *jobs)
{
    kbc_diag d = {{0}};
    json_t *doc = kbc_results_load(path, &d);
    if (!doc)
        return -1;
    const json_t *plan = json_object_get(doc, "plan");
    const json_t *hash = json_object_get(plan, "hash");
    const json_t *code = json_object_get(doc, "exit_code");
    int rc = -1;
    if (json_is_string(hash) && strcmp(json_string_value(hash), plan_hash) == 0 &&
        json_is_integer(code) && (json_integer_value(code) == KBC_EXIT_OK ||
                                  json_integer_value(code) == KBC_EXIT_FAILED)) {
        const json_t *wall =
            json_object_get(json_object_get(json_object_get(doc, "machine"), "cpu"),
                            "wall_seconds");
        double s = json_is_number(wall) ? json_number_value(wall)
                                        : utc_seconds(json_object_get(doc, "finished")) -
                                              utc_seconds(json_object_get(doc, "started"));
        const json_t *j = json_object_get(plan, "jobs");
        if (isfinite(s) && s >= 0) {
            *seconds = s;
            *jobs = json_is_integer(j) && json_integer_value(j) > 0
                        ? (uint64_t)json_integer_value(j)
                        : 0;
            rc = 0;
        }
    }
    json_decref(doc);
    return rc;
}
