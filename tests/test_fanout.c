/*
 * test_fanout.c -- the fan-out to a run's outputs (views/fanout.h): a sink
 * that fails is dropped and its sentence said once with what it means for
 * the run, the others go on and the exit code says so; the suspect rows
 * are found once and every sink gets the same list before its end; nothing
 * is called before begin().  The sinks here are fakes that count.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fanout.h"
#include "util.h"

/* A sink that records its calls as letters (b, p, t, s, e) and fails the
   call numbered fail_at (1-based; 0: never). */
typedef struct fake {
    char calls[64];
    int n_calls;
    int fail_at;
    const char *why; /* its sentence when it failed, or NULL for none */
    int failed;
    int end_code;
    size_t n_suspects;
} fake;

static int step(fake *f, char c)
{
    f->calls[f->n_calls++] = c;
    if (f->n_calls == f->fail_at) {
        f->failed = 1;
        return -1;
    }
    return 0;
}

static int f_begin(void *ctx, const kbc_run_info *info)
{
    (void)info;
    return step(ctx, 'b');
}

static int f_point(void *ctx, const kbc_record *recs, size_t n)
{
    (void)recs;
    (void)n;
    return step(ctx, 'p');
}

static int f_tick(void *ctx)
{
    return step(ctx, 't');
}

static int f_suspects(void *ctx, const kbc_suspect *list, size_t n)
{
    (void)list;
    ((fake *)ctx)->n_suspects = n;
    return step(ctx, 's');
}

static int f_end(void *ctx, int code)
{
    ((fake *)ctx)->end_code = code;
    return step(ctx, 'e');
}

static const char *f_error(void *ctx)
{
    fake *f = ctx;
    return f->failed ? f->why : NULL;
}

static kbc_sink sink_of(fake *f)
{
    return (kbc_sink){.ctx = f, .begin = f_begin, .point = f_point, .end = f_end,
                      .error = f_error, .tick = f_tick, .suspects = f_suspects};
}

/* A passed row of reduce/sweep at n items, taking median s. */
static kbc_record row(uint64_t n, double median, uint64_t point)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.plugin, sizeof r.plugin, "reduce");
    snprintf(r.experiment, sizeof r.experiment, "sweep");
    snprintf(r.variant, sizeof r.variant, "cub");
    r.n_params = 1;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = n;
    snprintf(r.params[0].text, sizeof r.params[0].text, "%llu", (unsigned long long)n);
    r.point = point;
    r.outcome = KBC_PASS;
    r.work.bytes_read = 4 * n;
    r.time.median = median;
    return r;
}

/* Runs begin, three points, a tick and the end through a fan-out to the
   fakes; what it said goes to err (a memstream).  Returns the exit code. */
static int run(fake *fakes, size_t n, const char *journal, char **err, int code)
{
    kbc_sink sinks[4];
    for (size_t k = 0; k < n; k++)
        sinks[k] = sink_of(&fakes[k]);
    size_t len;
    FILE *e = open_memstream(err, &len);
    kbc_fanout f;
    kbc_fanout_init(&f, sinks, n, e, "kbench: ");
    kbc_fanout_journal(&f, journal);
    kbc_machine m;
    memset(&m, 0, sizeof m);
    kbc_run_info info = {.machine = &m};
    kbc_record a = row(3000017, 62e-6, 0), b = row(1 << 24, 25e-6, 1), c = row(1 << 20, 2e-6, 2);
    kbc_fanout_begin(&f, &info);
    kbc_fanout_point(&f, &a, 1);
    kbc_fanout_point(&f, &b, 1);
    kbc_fanout_tick(&f);
    kbc_fanout_point(&f, &c, 1);
    code = kbc_fanout_end(&f, code);
    kbc_fanout_free(&f);
    fclose(e);
    return code;
}

Test(fanout, every_sink_gets_each_call_in_order)
{
    fake x[2] = {{0}, {0}};
    char *err;
    cr_assert_eq(run(x, 2, NULL, &err, 1), 1);
    cr_assert_str_eq(x[0].calls, "bpptpse");
    cr_assert_str_eq(x[1].calls, "bpptpse");
    cr_assert_eq(x[0].end_code, 1);
    cr_assert_str_eq(err, "");
    free(err);
}

Test(fanout, the_suspects_are_found_once_and_given_to_every_sink_before_its_end)
{
    fake x[2] = {{0}, {0}};
    char *err;
    run(x, 2, NULL, &err, 0);
    /* n = 3000017 at 62 us is slower than n = 2^24 at 25 us. */
    cr_assert_eq(x[0].n_suspects, 1);
    cr_assert_eq(x[1].n_suspects, 1);
    free(err);
}

Test(fanout, a_sink_that_fails_is_dropped_said_once_and_the_others_go_on)
{
    fake x[2] = {{.fail_at = 2, .why = "cannot write a.json: No space left on device"}, {0}};
    char *err;
    cr_assert_eq(run(x, 2, NULL, &err, 0), KBC_EXIT_SYSTEM);
    cr_assert_str_eq(x[0].calls, "bp", "called no more after its failure");
    cr_assert_str_eq(x[1].calls, "bpptpse");
    cr_assert_eq(x[1].end_code, KBC_EXIT_SYSTEM, "the others end with the failure's code");
    cr_assert_str_eq(err, "kbench: cannot write a.json: No space left on device.\n");
    free(err);
}

Test(fanout, with_a_journal_a_failure_says_the_run_goes_on_and_how_to_finish)
{
    fake x[1] = {{.fail_at = 3, .why = "cannot write a.json: No space left on device"}};
    char *err;
    cr_assert_eq(run(x, 1, "out/journal.jsonl", &err, 0), KBC_EXIT_SYSTEM);
    cr_assert_str_eq(err, "kbench: cannot write a.json: No space left on device; the run goes "
                          "on, and out/journal.jsonl keeps every point: once there is room, run "
                          "again with --resume and the same -o to write the results files "
                          "whole.\n");
    free(err);
}

Test(fanout, a_failure_at_the_end_says_the_journal_holds_every_point)
{
    fake x[2] = {{.fail_at = 7, .why = "cannot write a.json: No space left on device"}, {0}};
    char *err;
    cr_assert_eq(run(x, 2, "out/journal.jsonl", &err, 0), KBC_EXIT_SYSTEM);
    cr_assert_str_eq(err, "kbench: cannot write a.json: No space left on device; every point the "
                          "run finished is in out/journal.jsonl: once there is room, run again "
                          "with --resume and the same -o to write the results files whole.\n");
    cr_assert_eq(x[1].end_code, KBC_EXIT_SYSTEM, "a sink after the failed end gets its code");
    free(err);
}

Test(fanout, a_sink_without_a_sentence_is_left_to_the_caller)
{
    fake x[1] = {{.fail_at = 2}};
    kbc_sink sinks[1] = {sink_of(&x[0])};
    kbc_fanout f;
    kbc_fanout_init(&f, sinks, 1, stderr, "kbench: ");
    kbc_run_info info = {0};
    kbc_record a = row(1024, 1e-3, 0);
    kbc_fanout_begin(&f, &info);
    cr_assert(kbc_fanout_ok(&f, 0));
    kbc_fanout_point(&f, &a, 1);
    cr_assert_not(kbc_fanout_ok(&f, 0));
    cr_assert_eq(kbc_fanout_end(&f, 0), KBC_EXIT_SYSTEM);
    kbc_fanout_free(&f);
}

static int quieted;
static void quiet(void *ctx)
{
    (void)ctx;
    quieted++;
}

Test(fanout, the_quiet_hook_runs_before_a_sentence)
{
    fake x[1] = {{.fail_at = 1, .why = "cannot write a.json: Permission denied"}};
    kbc_sink sinks[1] = {sink_of(&x[0])};
    kbc_fanout f;
    char *err;
    size_t len;
    FILE *e = open_memstream(&err, &len);
    kbc_fanout_init(&f, sinks, 1, e, "kbench: ");
    kbc_fanout_quiet(&f, quiet, NULL);
    kbc_run_info info = {0};
    kbc_fanout_begin(&f, &info);
    kbc_fanout_free(&f);
    fclose(e);
    cr_assert_eq(quieted, 1);
    cr_assert_str_eq(err, "kbench: cannot write a.json: Permission denied.\n");
    free(err);
}

Test(fanout, nothing_is_called_before_begin)
{
    fake x[1] = {{0}};
    kbc_sink sinks[1] = {sink_of(&x[0])};
    kbc_fanout f;
    kbc_fanout_init(&f, sinks, 1, stderr, "kbench: ");
    kbc_record a = row(1024, 1e-3, 0);
    kbc_fanout_point(&f, &a, 1);
    kbc_fanout_tick(&f);
    cr_assert_eq(kbc_fanout_end(&f, 4), 4);
    cr_assert_not(kbc_fanout_began(&f));
    kbc_fanout_free(&f);
    cr_assert_str_eq(x[0].calls, "");
}
