/*
 * fake_host.h -- the host services a unit test hands a plugin or the kit
 * when it calls them directly, without the runner: log() says nothing,
 * fail() keeps the last sentence in last_error and counts its calls.
 * Included by the Criterion tests (kbench_test() puts tests/support on the
 * include path), once per test program.
 */
#ifndef KBENCH_TEST_FAKE_HOST_H
#define KBENCH_TEST_FAKE_HOST_H

#include <stdarg.h>
#include <stdio.h>

#include <kbench/plugin.h>

#if defined(__GNUC__)
#define FAKE_HOST_MAYBE_UNUSED __attribute__((unused))
#else
#define FAKE_HOST_MAYBE_UNUSED
#endif

/* The last sentence given to fail(), and how many times it was called. */
static char last_error[512] FAKE_HOST_MAYBE_UNUSED;
static int fail_calls FAKE_HOST_MAYBE_UNUSED;

static void test_log(kb_host *h, kb_log_level level, const char *fmt, ...)
{
    (void)h;
    (void)level;
    (void)fmt;
}

static int test_fail(kb_host *h, int code, const char *fmt, ...)
{
    (void)h;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    fail_calls++;
    return code;
}

#endif
