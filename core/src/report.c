/* report.c -- what the three reporters share; see report.h. */
#include "report.h"

const char *kbc_outcome_name(int outcome)
{
    switch (outcome) {
    case KBC_PASS:
        return "pass";
    case KBC_FAIL:
        return "FAIL";
    case KBC_ERROR:
        return "error";
    case KBC_SKIPPED:
        return "skipped";
    default:
        return "unknown";
    }
}

/* A row that passed or failed was verified even if the plugin left the
   measure unnamed, and its numbers must not be dropped for that. */
const char *kbc_check_measure(const kbc_row *r)
{
    if (r->check.measure)
        return r->check.measure;
    return r->outcome == KBC_PASS || r->outcome == KBC_FAIL ? "unnamed" : NULL;
}
