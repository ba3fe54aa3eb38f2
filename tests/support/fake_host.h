/*
 * fake_host.h -- the host services a unit test hands a plugin or the kit
 * when it calls them directly, without the runner: log() says nothing,
 * fail() keeps the last sentence in last_error and counts its calls,
 * refuse() (ABI 2.3) adds the variant to refused_mask and keeps its
 * sentence in last_refusal.
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

/* The variants given to refuse() since the test cleared it, and the last
   sentence. */
static uint64_t refused_mask FAKE_HOST_MAYBE_UNUSED;
static char last_refusal[512] FAKE_HOST_MAYBE_UNUSED;

static FAKE_HOST_MAYBE_UNUSED void test_refuse(kb_host *h, uint32_t v, const char *fmt, ...)
{
    (void)h;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_refusal, sizeof last_refusal, fmt, ap);
    va_end(ap);
    if (v < KB_MAX_VARIANTS)
        refused_mask |= KB_VARIANT_BIT(v);
}

#endif
