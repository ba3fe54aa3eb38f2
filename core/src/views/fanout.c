/* fanout.c -- see fanout.h. */
#include "fanout.h"

#include <stdlib.h>

#include "util.h"

void kbc_fanout_init(kbc_fanout *f, kbc_sink *sinks, size_t n, FILE *err, const char *prefix)
{
    *f = (kbc_fanout){.sinks = sinks, .n = n, .err = err, .prefix = prefix ? prefix : ""};
    f->ok = kbc_xcalloc(n ? n : 1, sizeof *f->ok);
    f->suspects = kbc_suspects_new();
    f->sweeps = kbc_sweeps_new();
}

void kbc_fanout_journal(kbc_fanout *f, const char *path)
{
    f->journal = path;
}

void kbc_fanout_quiet(kbc_fanout *f, void (*fn)(void *ctx), void *ctx)
{
    f->quiet = fn;
    f->quiet_ctx = ctx;
}

/* Sink k could not write: it is dropped, and its sentence is said once
   with what it means for the run (fanout.h). */
static void failed(kbc_fanout *f, size_t k)
{
    f->ok[k] = 0;
    const char *why = f->sinks[k].error ? f->sinks[k].error(f->sinks[k].ctx) : NULL;
    if (!why)
        return;
    if (f->quiet)
        f->quiet(f->quiet_ctx);
    if (!f->journal)
        fprintf(f->err, "%s%s.\n", f->prefix, why);
    else if (f->ended)
        fprintf(f->err,
                "%s%s; every point the run finished is in %s: once there is room, run again "
                "with --resume and the same -o to write the results files whole.\n",
                f->prefix, why, f->journal);
    else
        fprintf(f->err,
                "%s%s; the run goes on, and %s keeps every point: once there is room, run "
                "again with --resume and the same -o to write the results files whole.\n",
                f->prefix, why, f->journal);
}

void kbc_fanout_begin(kbc_fanout *f, const kbc_run_info *info)
{
    f->begun = 1;
    for (size_t k = 0; k < f->n; k++) {
        f->ok[k] = 1;
        if (f->sinks[k].begin && f->sinks[k].begin(f->sinks[k].ctx, info) != 0)
            failed(f, k);
    }
}

void kbc_fanout_point(kbc_fanout *f, const kbc_record *recs, size_t n)
{
    if (!f->begun)
        return;
    for (size_t i = 0; i < n; i++) {
        kbc_suspects_add(f->suspects, &recs[i]);
        kbc_sweeps_add(f->sweeps, &recs[i]);
    }
    for (size_t k = 0; k < f->n; k++)
        if (f->ok[k] && f->sinks[k].point && f->sinks[k].point(f->sinks[k].ctx, recs, n) != 0)
            failed(f, k);
}

void kbc_fanout_tick(kbc_fanout *f)
{
    for (size_t k = 0; f->begun && k < f->n; k++)
        if (f->ok[k] && f->sinks[k].tick && f->sinks[k].tick(f->sinks[k].ctx) != 0)
            failed(f, k);
}

int kbc_fanout_end(kbc_fanout *f, int code)
{
    if (!f->begun)
        return code;
    f->ended = 1;
    size_t n_sus;
    const kbc_suspect *sus = kbc_suspects_list(f->suspects, &n_sus);
    for (size_t k = 0; k < f->n; k++)
        if (f->ok[k] && f->sinks[k].suspects &&
            f->sinks[k].suspects(f->sinks[k].ctx, sus, n_sus) != 0)
            failed(f, k);
    size_t n_sw;
    const kbc_sweep *sw = kbc_sweeps_list(f->sweeps, &n_sw);
    for (size_t k = 0; k < f->n; k++)
        if (f->ok[k] && f->sinks[k].sweeps && f->sinks[k].sweeps(f->sinks[k].ctx, sw, n_sw) != 0)
            failed(f, k);
    for (size_t k = 0; k < f->n; k++)
        if (!f->ok[k])
            code = KBC_EXIT_SYSTEM;
    for (size_t k = 0; k < f->n; k++)
        if (f->ok[k] && f->sinks[k].end && f->sinks[k].end(f->sinks[k].ctx, code) != 0) {
            failed(f, k);
            code = KBC_EXIT_SYSTEM;
        }
    return code;
}

int kbc_fanout_began(const kbc_fanout *f)
{
    return f->begun;
}

int kbc_fanout_ok(const kbc_fanout *f, size_t k)
{
    return k < f->n && f->ok[k];
}

void kbc_fanout_free(kbc_fanout *f)
{
    free(f->ok);
    kbc_suspects_free(f->suspects);
    kbc_sweeps_free(f->sweeps);
    f->ok = NULL;
    f->suspects = NULL;
    f->sweeps = NULL;
}
