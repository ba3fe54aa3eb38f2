/* Values of every declared type, sweeps of them, and the core keys. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_keys.h"
#include "sweep.h"
#include "value.h"

#define assert_has(msg, sub) \
    cr_assert(strstr((msg), (sub)) != NULL, "expected \"%s\" in: %s", (sub), (msg))

static const char *const dtypes[] = {"f32", "f64", "i32"};
static const kb_param p_size = {.name = "n", .type = KB_PARAM_SIZE, .def = "1K", .min = 1,
                                .max = 0};
static const kb_param p_small = {.name = "block", .type = KB_PARAM_SIZE, .def = "256", .min = 32,
                                 .max = 1024};
static const kb_param p_int = {.name = "offset", .type = KB_PARAM_INT, .def = "0", .min = 1,
                               .max = 0};
static const kb_param p_iters = {.name = "iters", .type = KB_PARAM_INT, .def = "1", .min = 1,
                                 .max = 1000};
static const kb_param p_float = {.name = "scale", .type = KB_PARAM_FLOAT, .def = "1", .min = 1,
                                 .max = 0};
static const kb_param p_enum = {.name = "dtype", .type = KB_PARAM_ENUM, .def = "f32",
                                KB_CHOICES(dtypes)};
static const kb_param p_bool = {.name = "check", .type = KB_PARAM_BOOL, .def = "true"};
/* Limits where a double cannot hold every integer near them. */
static const kb_param p_big = {.name = "bulk_min", .type = KB_PARAM_SIZE, .def = "1", .min = 0,
                               .max = 4611686018427387904.0};
static const kb_param p_int53 = {.name = "offset", .type = KB_PARAM_INT, .def = "0",
                                 .min = -9007199254740992.0, .max = 9007199254740992.0};

static uint64_t size_of(const char *text)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(kbc_value_parse(&p_size, text, &v, why, sizeof why), 0, "'%s': %s", text, why);
    return v.u;
}

static void size_fails(const char *text, const char *expect)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(kbc_value_parse(&p_size, text, &v, why, sizeof why), -1, "'%s' was accepted",
                 text);
    assert_has(why, expect);
}

Test(value, sizes)
{
    cr_assert_eq(size_of("1024"), 1024);
    cr_assert_eq(size_of("4K"), 4096);
    cr_assert_eq(size_of("4k"), 4096);
    cr_assert_eq(size_of("4KiB"), 4096);
    cr_assert_eq(size_of("4Ki"), 4096);
    cr_assert_eq(size_of("16M"), 16ULL << 20);
    cr_assert_eq(size_of("3g"), 3ULL << 30);
    cr_assert_eq(size_of("2T"), 2ULL << 40);
    cr_assert_eq(size_of("2^20"), 1ULL << 20);
    cr_assert_eq(size_of("2^63"), 1ULL << 63);
    cr_assert_eq(size_of("  77  "), 77);
    cr_assert_eq(size_of("18446744073709551615"), UINT64_MAX);
}

Test(value, size_errors)
{
    size_fails("12Q", "'12Q' is not a size");
    size_fails("-5", "'-5' is negative");
    size_fails("18446744073709551616", "does not fit in 64 bits");
    size_fails("2^64", "does not fit in 64 bits");
    size_fails("20000000T", "does not fit in 64 bits");
    size_fails("4KB", "ambiguous");
    size_fails("1.5K", "is not a size");
    size_fails("2^", "is not a size");
    size_fails("", "empty");
}

/* ---- a size term with + or - and a whole number ------------------------- */

Test(value, a_power_of_two_plus_an_integer_is_that_sum)
{
    cr_assert_eq(size_of("2^20+3"), (1ULL << 20) + 3);
}

Test(value, a_power_of_two_minus_an_integer_is_that_difference)
{
    cr_assert_eq(size_of("2^20-1"), (1ULL << 20) - 1);
}

Test(value, a_binary_multiple_takes_an_offset_too)
{
    cr_assert_eq(size_of("1M+1"), (1ULL << 20) + 1);
}

Test(value, a_size_with_spaces_inside_is_refused)
{
    size_fails("2^10 + 5", "'2^10 + 5' is not a size (use digits with K, M, G, or 2^k; no spaces "
                           "inside: 2^20+3)");
}

Test(value, an_offset_may_reach_the_largest_size)
{
    cr_assert_eq(size_of("2^63+9223372036854775807"), UINT64_MAX);
}

Test(value, an_offset_past_64_bits_is_refused_with_a_sentence)
{
    size_fails("2^63+9223372036854775808", "'2^63+9223372036854775808' does not fit in 64 bits");
}

Test(value, an_offset_of_more_than_20_digits_is_refused_as_too_large)
{
    size_fails("1+99999999999999999999", "does not fit in 64 bits");
}

Test(value, a_difference_below_zero_is_refused_with_a_sentence)
{
    size_fails("1K-1025", "'1K-1025' is below 0, and a size cannot be");
}

Test(value, a_difference_of_zero_is_a_size_of_zero)
{
    /* p_size's minimum is 1, so the parser alone, without the range check. */
    uint64_t u = 99;
    char why[256] = "";
    cr_assert_eq(kbc_parse_size("4K-4096", &u, why, sizeof why), 0, "%s", why);
    cr_assert_eq(u, 0);
}

ParameterizedTestParameters(value, an_offset_that_is_not_a_whole_number_is_refused)
{
    static char cases[][16] = {"1M+4K", "2^20+", "2^20+-1", "1M+1.5", "1M+1+1", "1M+2^4"};
    return cr_make_param_array(char[16], cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(char (*text)[16], value, an_offset_that_is_not_a_whole_number_is_refused)
{
    size_fails(*text, "after the");
}

Test(value, a_sign_before_the_term_is_not_an_offset)
{
    size_fails("+5", "'+5' is not a size");
}

Test(value, range_limits)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(kbc_value_parse(&p_small, "2K", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "2048 is above the maximum 1024");
    cr_assert_eq(kbc_value_parse(&p_small, "16", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "16 is below the minimum 32");
    cr_assert_eq(kbc_value_parse(&p_small, "1K", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.u, 1024);
    cr_assert_eq(kbc_value_parse(&p_small, "32", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.u, 32);
}

/* multiple_of (ABI 2.3): a value that is not a multiple is refused with the
   multiples on either side of it; negative integers round toward minus
   infinity; a sweep's values are checked one by one. */
static const kb_param p_warp = {.name = "threads", .type = KB_PARAM_INT, .def = "32",
                                .min = -1000, .max = 1000, .multiple_of = 32};
static const kb_param p_tile = {.name = "bytes", .type = KB_PARAM_SIZE, .def = "4K", .min = 1,
                                .max = 0, .multiple_of = 4096};

Test(value, multiple_of)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(kbc_value_parse(&p_warp, "96", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.i, 96);
    cr_assert_eq(kbc_value_parse(&p_warp, "0", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(kbc_value_parse(&p_warp, "-64", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(kbc_value_parse(&p_warp, "100", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "100 is not a multiple of 32 (the nearest are 96 and 128)");
    cr_assert_eq(kbc_value_parse(&p_warp, "-33", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "-33 is not a multiple of 32 (the nearest are -64 and -32)");
    /* The range is said first: it is the larger mistake. */
    cr_assert_eq(kbc_value_parse(&p_warp, "1001", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "1001 is above the maximum 1000");
    cr_assert_eq(kbc_value_parse(&p_tile, "1M", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(kbc_value_parse(&p_tile, "1M+1", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "1048577 is not a multiple of 4096 (the nearest are 1048576 and "
                          "1052672)");
    /* Near the top of 64 bits only the multiple below exists. */
    cr_assert_eq(kbc_value_parse(&p_tile, "18446744073709551615", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "18446744073709551615 is not a multiple of 4096 (the nearest is "
                          "18446744073709547520)");
    kb_value *vals;
    size_t n;
    cr_assert_eq(kbc_sweep_parse(&p_warp, "32..256:x2", 100, &vals, &n, why, sizeof why), 0);
    cr_assert_eq(n, 4);
    free(vals);
    cr_assert_eq(kbc_sweep_parse(&p_warp, "32..256:+48", 100, &vals, &n, why, sizeof why), -1);
    cr_assert_str_eq(why, "80 is not a multiple of 32 (the nearest are 64 and 96)");
}

Test(value, ints)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(kbc_value_parse(&p_int, "-5", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.i, -5);
    cr_assert_eq(kbc_value_parse(&p_int, "+7", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.i, 7);
    cr_assert_eq(kbc_value_parse(&p_int, "9223372036854775807", &v, why, sizeof why), 0);
    cr_assert_eq(v.i, INT64_MAX);
    cr_assert_eq(kbc_value_parse(&p_int, "9223372036854775808", &v, why, sizeof why), -1);
    assert_has(why, "does not fit in a 64-bit integer");
    cr_assert_eq(kbc_value_parse(&p_int, "1e3", &v, why, sizeof why), -1);
    assert_has(why, "'1e3' is not an integer");
    cr_assert_eq(kbc_value_parse(&p_iters, "1001", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "1001 is above the maximum 1000");
}

Test(value, floats)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(kbc_value_parse(&p_float, "0.5", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.f, 0.5);
    cr_assert_eq(kbc_value_parse(&p_float, "-1e-3", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.f, -1e-3);
    const char *bad[] = {"inf", "nan", "0x10", "1.5x", "abc", "-"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(kbc_value_parse(&p_float, bad[i], &v, why, sizeof why), -1, "%s", bad[i]);
        assert_has(why, "is not a number");
    }
    cr_assert_eq(kbc_value_parse(&p_float, "1e999", &v, why, sizeof why), -1);
    assert_has(why, "'1e999' is not a finite number");
}

Test(value, bools_and_enums)
{
    kb_value v;
    char why[256] = "";
    const char *yes[] = {"true", "yes", "on", "1", "TRUE", "Yes"};
    const char *no[] = {"false", "no", "off", "0", "Off"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        v.i = 7;
        cr_assert_eq(kbc_value_parse(&p_bool, yes[i], &v, why, sizeof why), 0, "%s", yes[i]);
        cr_assert_eq(v.i, 1, "%s", yes[i]);
    }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        v.i = 7;
        cr_assert_eq(kbc_value_parse(&p_bool, no[i], &v, why, sizeof why), 0, "%s", no[i]);
        cr_assert_eq(v.i, 0, "%s", no[i]);
    }
    cr_assert_eq(kbc_value_parse(&p_bool, "maybe", &v, why, sizeof why), -1);
    assert_has(why, "'maybe' is not a boolean");

    cr_assert_eq(kbc_value_parse(&p_enum, "i32", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.i, 2);
    cr_assert_eq(kbc_value_parse(&p_enum, "f16", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "'f16' is not one of the allowed values (f32, f64, i32)");
}

Test(value, format)
{
    char buf[64];
    cr_assert_str_eq(kbc_value_format(&p_size, (kb_value){.u = UINT64_MAX}, buf, sizeof buf),
                     "18446744073709551615");
    cr_assert_str_eq(kbc_value_format(&p_int, (kb_value){.i = -42}, buf, sizeof buf), "-42");
    cr_assert_str_eq(kbc_value_format(&p_float, (kb_value){.f = 0.25}, buf, sizeof buf), "0.25");
    cr_assert_str_eq(kbc_value_format(&p_enum, (kb_value){.i = 1}, buf, sizeof buf), "f64");
    cr_assert_str_eq(kbc_value_format(&p_enum, (kb_value){.i = 9}, buf, sizeof buf), "?");
    cr_assert_str_eq(kbc_value_format(&p_bool, (kb_value){.i = 1}, buf, sizeof buf), "true");
    cr_assert_str_eq(kbc_value_format(&p_bool, (kb_value){.i = 0}, buf, sizeof buf), "false");
}

/* A core key's value, parsed as the configuration parses it. */
static int key_parse(const char *name, const char *text, kb_value *v, char *why, size_t n)
{
    const kbc_core_key *k = kbc_core_key_find(name);
    cr_assert_not_null(k, "%s is not a core key", name);
    return kbc_core_key_parse(k, text, v, why, n);
}

Test(value, core_keys)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(key_parse("budget", "500ms", &v, why, sizeof why), 0, "%s", why);
    cr_assert_float_eq(v.f, 0.5, 1e-12);
    cr_assert_eq(key_parse("budget", "2s", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.f, 2.0);
    cr_assert_eq(key_parse("budget", "3", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.f, 3.0);
    cr_assert_eq(key_parse("budget", "0", &v, why, sizeof why), -1);
    assert_has(why, "below the minimum");
    cr_assert_eq(key_parse("budget", "soon", &v, why, sizeof why), -1);
    assert_has(why, "'soon' is not a duration");
    cr_assert_eq(key_parse("cpu_threads", "5000", &v, why, sizeof why), -1);
    cr_assert_eq(key_parse("runs", "0", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "0 is below the minimum 1");
    /* Every measure key's own default parses. */
    for (size_t i = 0; i < kbc_n_core_keys; i++) {
        const kbc_core_key *k = &kbc_core_keys[i];
        if (k->kind != KBC_KIND_MEASURE)
            continue;
        cr_assert_eq(kbc_core_key_parse(k, k->param->def, &v, why, sizeof why), 0, "%s: %s",
                     k->name, why);
    }
    key_parse("warmup", kbc_key_warmup.def, &v, why, sizeof why);
    cr_assert_eq(v.i, 3);
    key_parse("runs", kbc_key_runs.def, &v, why, sizeof why);
    cr_assert_eq(v.i, 20);
}

/* auto is kept as 0 and resolved where threads are made, so that a plan
   (and its hash) does not depend on the machine that read it. */
Test(value, cpu_threads_auto_is_kept_as_zero_and_resolved_later)
{
    kb_value v = {.i = 7};
    char why[256] = "";
    cr_assert_eq(key_parse("cpu_threads", "auto", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.i, 0);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cr_assert_eq(kbc_cpu_threads(0), cpus < 1 ? 1 : cpus > 4096 ? 4096 : cpus);
    cr_assert_eq(kbc_cpu_threads(3), 3);
}

Test(value, cpu_threads_zero_written_out_is_refused)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(key_parse("cpu_threads", "0", &v, why, sizeof why), -1);
    cr_assert_str_eq(why, "0 is below the minimum 1");
}

Test(value, timeout_takes_a_duration_or_auto)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(key_parse("timeout", "auto", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.f, 0.0);
    cr_assert_eq(key_parse("timeout", "90s", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.f, 90.0);
    cr_assert_eq(key_parse("timeout", "500ms", &v, why, sizeof why), 0, "%s", why);
    cr_assert_float_eq(v.f, 0.5, 1e-12);
    cr_assert_eq(key_parse("timeout", "0", &v, why, sizeof why), -1);
    assert_has(why, "below the minimum");
}

Test(value, batch_takes_off_auto_or_a_count_from_two)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(key_parse("batch", "off", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.i, KBC_BATCH_OFF);
    cr_assert_eq(key_parse("batch", "auto", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.i, KBC_BATCH_AUTO);
    cr_assert_eq(key_parse("batch", "16", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.i, 16);
    cr_assert_eq(key_parse("batch", "1", &v, why, sizeof why), -1);
    assert_has(why, "'1' is not off, auto or a number of runs per sample from 2");
}

/* The reason a value of p is refused; the test fails when it is accepted. */
static const char *refused(const kb_param *p, const char *text)
{
    static char why[256];
    kb_value v;
    why[0] = '\0';
    cr_assert_eq(kbc_value_parse(p, text, &v, why, sizeof why), -1, "'%s' was accepted", text);
    return why;
}

Test(value, a_size_one_above_a_maximum_of_2_to_the_62_is_refused)
{
    cr_assert_str_eq(refused(&p_big, "4611686018427387905"),
                     "4611686018427387905 is above the maximum 2^62");
}

Test(value, a_size_equal_to_a_maximum_of_2_to_the_62_is_accepted)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(kbc_value_parse(&p_big, "2^62", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v.u, 1ULL << 62);
}

Test(value, an_int_one_above_a_maximum_of_2_to_the_53_is_refused)
{
    cr_assert_str_eq(refused(&p_int53, "9007199254740993"),
                     "9007199254740993 is above the maximum 2^53");
}

Test(value, an_int_one_below_a_minimum_of_minus_2_to_the_53_is_refused)
{
    cr_assert_str_eq(refused(&p_int53, "-9007199254740993"),
                     "-9007199254740993 is below the minimum -9007199254740992");
}

Test(value, a_seed_of_zero_is_refused)
{
    cr_assert_str_eq(refused(&kbc_key_seed, "0"), "0 is below the minimum 1");
}

Test(value, the_largest_seed_is_accepted)
{
    kb_value v;
    char why[256] = "";
    cr_assert_eq(kbc_value_parse(&kbc_key_seed, "18446744073709551615", &v, why, sizeof why), 0,
                 "%s", why);
    cr_assert_eq(v.u, UINT64_MAX);
}

Test(value, an_empty_value_says_empty)
{
    cr_assert_str_eq(refused(&p_int, "  "), "the value is empty");
}

Test(value, limits_print_as_written)
{
    char buf[64];
    cr_assert_str_eq(kbc_bound_format(&p_size, 4611686018427387904.0, buf, sizeof buf), "2^62");
    cr_assert_str_eq(kbc_bound_format(&p_size, 1024, buf, sizeof buf), "1024");
    cr_assert_str_eq(kbc_bound_format(&p_size, 1e15, buf, sizeof buf), "1000000000000000");
    cr_assert_str_eq(kbc_bound_format(&p_float, 0.5, buf, sizeof buf), "0.5");
    cr_assert_str_eq(kbc_bound_format(&p_float, 1e300, buf, sizeof buf), "1e+300");
}

Test(value, integers_compare_with_double_limits_exactly)
{
    cr_assert_eq(kbc_cmp_u64_double(1ULL << 62, 4611686018427387904.0), 0);
    cr_assert_eq(kbc_cmp_u64_double((1ULL << 62) + 1, 4611686018427387904.0), 1);
    cr_assert_eq(kbc_cmp_u64_double(UINT64_MAX, 18446744073709551616.0), -1);
    cr_assert_eq(kbc_cmp_u64_double(0, -1.0), 1);
    cr_assert_eq(kbc_cmp_u64_double(2, 2.5), -1);
    cr_assert_eq(kbc_cmp_u64_double(3, 2.5), 1);
    cr_assert_eq(kbc_cmp_i64_double(INT64_MIN, -9223372036854775808.0), 0);
    cr_assert_eq(kbc_cmp_i64_double(INT64_MAX, 9223372036854775808.0), -1);
    cr_assert_eq(kbc_cmp_i64_double(-3, -2.5), -1);
    cr_assert_eq(kbc_cmp_i64_double(-2, -2.5), 1);
}

/* Parses a sweep that must succeed and compares with the expected values. */
static void sweep_u(const kb_param *p, const char *text, const uint64_t *expect, size_t n)
{
    kb_value *v = NULL;
    size_t got = 0;
    char why[256] = "";
    cr_assert_eq(kbc_sweep_parse(p, text, 1000, &v, &got, why, sizeof why), 0, "'%s': %s", text,
                 why);
    cr_assert_eq(got, n, "'%s' gave %zu values, not %zu", text, got, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(v[i].u, expect[i], "'%s' value %zu is %llu, not %llu", text, i,
                     (unsigned long long)v[i].u, (unsigned long long)expect[i]);
    free(v);
}

static void sweep_fails(const kb_param *p, const char *text, size_t max, const char *expect)
{
    kb_value *v = (kb_value *)&v;
    size_t got = 99;
    char why[256] = "";
    cr_assert_eq(kbc_sweep_parse(p, text, max, &v, &got, why, sizeof why), -1, "'%s' accepted",
                 text);
    cr_assert_null(v);
    cr_assert_eq(got, 0);
    assert_has(why, expect);
}

Test(sweep, lists_and_ranges)
{
    const uint64_t K = 1024, M = K * K;
    sweep_u(&p_size, "1K, 4K, 1M", (uint64_t[]){K, 4 * K, M}, 3);
    sweep_u(&p_size, "4K", (uint64_t[]){4 * K}, 1);
    sweep_u(&p_size, "2^10..2^13", (uint64_t[]){K, 2 * K, 4 * K, 8 * K}, 4);
    sweep_u(&p_size, "1M..64M:x4", (uint64_t[]){M, 4 * M, 16 * M, 64 * M}, 4);
    sweep_u(&p_size, "1M..64M:*4", (uint64_t[]){M, 4 * M, 16 * M, 64 * M}, 4);
    sweep_u(&p_size, "1M .. 64M : x4", (uint64_t[]){M, 4 * M, 16 * M, 64 * M}, 4);
    sweep_u(&p_size, "1M..63M:x4", (uint64_t[]){M, 4 * M, 16 * M}, 3);
    sweep_u(&p_size, "100..500:+100", (uint64_t[]){100, 200, 300, 400, 500}, 5);
    sweep_u(&p_size, "100..450:+100", (uint64_t[]){100, 200, 300, 400}, 4);
    sweep_u(&p_size, "1K..2K:+512", (uint64_t[]){K, K + 512, 2 * K}, 3);
    sweep_u(&p_size, "1, 2^10..2^12, 3M", (uint64_t[]){1, K, 2 * K, 4 * K, 3 * M}, 5);
    sweep_u(&p_size, "2K..2K", (uint64_t[]){2 * K}, 1);
    /* Near the top of 64 bits, no step may wrap around. */
    sweep_u(&p_size, "2^62..2^63", (uint64_t[]){1ULL << 62, 1ULL << 63}, 2);
    sweep_u(&p_size, "2^63..18446744073709551615:x2", (uint64_t[]){1ULL << 63}, 1);
    sweep_u(&p_size, "18446744073709551610..18446744073709551615:+4",
            (uint64_t[]){18446744073709551610ULL, 18446744073709551614ULL}, 2);
}

Test(sweep, a_size_with_an_offset_is_one_value_beside_a_range)
{
    sweep_u(&p_size, "2^10..2^12, 2^20+3", (uint64_t[]){1024, 2048, 4096, (1ULL << 20) + 3}, 4);
}

Test(sweep, a_range_may_start_and_end_on_sizes_with_offsets)
{
    sweep_u(&p_size, "1M-1..1M+1:+1", (uint64_t[]){(1ULL << 20) - 1, 1ULL << 20, (1ULL << 20) + 1},
            3);
}

Test(sweep, a_linear_step_may_be_a_size_with_an_offset)
{
    sweep_u(&p_size, "1..1100:+2^9+1", (uint64_t[]){1, 514, 1027}, 3);
}

Test(sweep, a_start_with_an_offset_is_where_a_linear_range_steps_from)
{
    sweep_u(&p_size, "2^10+1..2^12:+2^10", (uint64_t[]){1025, 2049, 3073}, 3);
}

Test(sweep, an_end_with_an_offset_keeps_its_step)
{
    sweep_u(&p_size, "2^10..2^20+3:x1024", (uint64_t[]){1024, 1ULL << 20}, 2);
}

Test(sweep, ints_floats_enums)
{
    kb_value *v = NULL;
    size_t n = 0;
    char why[256] = "";
    cr_assert_eq(kbc_sweep_parse(&p_int, "-10..10:+5", 100, &v, &n, why, sizeof why), 0, "%s",
                 why);
    cr_assert_eq(n, 5);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(v[i].i, -10 + 5 * (int64_t)i);
    free(v);
    cr_assert_eq(kbc_sweep_parse(&p_int, "3..48", 100, &v, &n, why, sizeof why), 0, "%s", why);
    cr_assert_eq(n, 5);
    cr_assert_eq(v[4].i, 48);
    free(v);

    /* 0.1 + 4 * 0.1 is not 0.5 in binary; the end must still be reached. */
    cr_assert_eq(kbc_sweep_parse(&p_float, "0.1..0.5:+0.1", 100, &v, &n, why, sizeof why), 0,
                 "%s", why);
    cr_assert_eq(n, 5);
    cr_assert_float_eq(v[2].f, 0.3, 1e-12);
    cr_assert_eq(v[4].f, 0.5);
    free(v);
    cr_assert_eq(kbc_sweep_parse(&p_float, "0.25..2", 100, &v, &n, why, sizeof why), 0, "%s",
                 why);
    cr_assert_eq(n, 4);
    cr_assert_eq(v[0].f, 0.25);
    cr_assert_eq(v[3].f, 2.0);
    free(v);
    cr_assert_eq(kbc_sweep_parse(&p_float, "1..10:x1.5", 100, &v, &n, why, sizeof why), 0, "%s",
                 why);
    cr_assert_eq(n, 6); /* 1, 1.5, 2.25, 3.375, 5.0625, 7.59375 */
    cr_assert_float_eq(v[5].f, 7.59375, 1e-12);
    free(v);

    cr_assert_eq(kbc_sweep_parse(&p_enum, "f32, i32", 100, &v, &n, why, sizeof why), 0, "%s",
                 why);
    cr_assert_eq(n, 2);
    cr_assert_eq(v[0].i, 0);
    cr_assert_eq(v[1].i, 2);
    free(v);
    cr_assert_eq(kbc_sweep_parse(&p_bool, "on, off", 100, &v, &n, why, sizeof why), 0, "%s",
                 why);
    cr_assert_eq(n, 2);
    cr_assert_eq(v[0].i, 1);
    cr_assert_eq(v[1].i, 0);
    free(v);
}

/* One refused sweep per case.  The strings are held in the struct:
   Criterion copies parameters into a new process. */
typedef struct bad_sweep {
    int param; /* index into params below */
    char text[48];
    size_t max;
    char expect[48];
} bad_sweep;

static const kb_param *const params[] = {&p_size, &p_int, &p_float, &p_enum, &p_bool, &p_small};
enum { SIZE, INT, FLOAT, ENUM, BOOL, SMALL };

ParameterizedTestParameters(sweep, refusals)
{
    static bad_sweep cases[] = {
        {SIZE, "1K,,2K", 100, "has an empty element"},
        {SIZE, "1K, 2K,", 100, "has an empty element"},
        {SIZE, ",1K", 100, "has an empty element"},
        {SIZE, "", 100, "empty"},
        {SIZE, "1..8:x1", 100, "does not advance"},
        {SIZE, "1..8:+0", 100, "does not advance"},
        {INT, "1..8:+-1", 100, "does not advance"},
        {FLOAT, "1..8:x0.5", 100, "does not advance"},
        {SIZE, "1..8:x1.5", 100, "whole number"},
        {SIZE, "8..1", 100, "'8..1' runs downwards"},
        {SIZE, "0..8:x2", 100, "must start above 0"},
        {INT, "-4..8", 100, "must start above 0"},
        {SIZE, "1..8:y2", 100, "'y2' in '1..8:y2' is not a step"},
        {SIZE, "..8", 100, "needs a start and an end"},
        {SIZE, "1..2^64", 100, "'2^64' does not fit in 64 bits"},
        {SIZE, "1K, 12Q", 100, "'12Q' is not a size"},
        {ENUM, "f32..i32", 100, "lists only"},
        {BOOL, "false..true", 100, "lists only"},
        {ENUM, "f32, f16", 100, "'f16' is not one of the allowed values"},
        {SIZE, "1..100:+1", 50, "has more than 50 values"},
        {SIZE, "1, 2, 3", 2, "has more than 2 values"},
        {SIZE, "1..2^60:+1", 1000, "has more than 1000 values"},
        {FLOAT, "0..1e9:+1e-9", 1000, "has more than 1000 values"},
        /* Every value of a range is checked against the parameter's limits. */
        {SMALL, "512..4K", 100, "2048 is above the maximum 1024"},
        {SMALL, "16..64", 100, "16 is below the minimum 32"},
        /* An empty step once read past the end of the value. */
        {SIZE, "1..64:", 100, "'1..64:' has a ':' with no step after it"},
        {INT, "1..64 :  ", 100, "has a ':' with no step after it"},
        {SIZE, "1..8:x18446744073709551616", 100, "whole number"},
    };
    return cr_make_param_array(bad_sweep, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(bad_sweep *c, sweep, refusals)
{
    sweep_fails(params[c->param], c->text, c->max, c->expect);
}

/* A factor of 2^64 - 1 once went through a double, came back as 0 or -1
   and divided by it: SIGFPE. */
Test(sweep, a_factor_of_2_to_the_64_minus_1_on_an_int_makes_only_the_start)
{
    kb_value *v = NULL;
    size_t n = 0;
    char why[256] = "";
    cr_assert_eq(kbc_sweep_parse(&p_iters, "1..2:x18446744073709551615", 100, &v, &n, why,
                                 sizeof why),
                 0, "%s", why);
    cr_assert_eq(n, 1);
    cr_assert_eq(v[0].i, 1);
    free(v);
}

Test(sweep, a_factor_near_2_to_the_64_on_a_size_makes_only_the_start)
{
    sweep_u(&p_small, "32..64:x18446744073709550592", (uint64_t[]){32}, 1);
}

Test(sweep, a_factor_above_2_to_the_53_is_kept_exact)
{
    /* As a double, 2^60 + 1 rounds to 2^60. */
    sweep_u(&p_size, "1..2^61:x1152921504606846977", (uint64_t[]){1, 1152921504606846977ULL},
            2);
}

Test(sweep, an_int_factor_above_int64_max_makes_only_the_start)
{
    kb_value *v = NULL;
    size_t n = 0;
    char why[256] = "";
    cr_assert_eq(kbc_sweep_parse(&p_int, "3..9223372036854775807:x9223372036854775808", 100, &v,
                                 &n, why, sizeof why),
                 0, "%s", why);
    cr_assert_eq(n, 1);
    cr_assert_eq(v[0].i, 3);
    free(v);
}

Test(sweep, values_a_step_above_a_limit_of_2_to_the_62_are_refused)
{
    sweep_fails(&p_big, "2^62..4611686018427387905:+1", 100,
                "4611686018427387905 is above the maximum 2^62");
}

Test(sweep, range_checks_the_values_made)
{
    kb_value *v = NULL;
    size_t n = 0;
    char why[256] = "";
    /* 2000 is past the maximum but no value made reaches it. */
    cr_assert_eq(kbc_sweep_parse(&p_small, "32..2000", 100, &v, &n, why, sizeof why), 0, "%s",
                 why);
    cr_assert_eq(n, 6);
    cr_assert_eq(v[5].u, 1024);
    free(v);
}

/* ---- advice for mistakes of form ------------------------------------------- */

static void advice_fails(const kb_param *p, const char *text, const char *expect)
{
    kb_value *v = NULL;
    size_t n = 0;
    char why[512] = "";
    cr_assert_eq(kbc_sweep_parse(p, text, 1000, &v, &n, why, sizeof why), -1,
                 "'%s' was accepted", text);
    assert_has(why, expect);
    free(v);
}

static size_t advice_count(const kb_param *p, const char *text)
{
    kb_value *v = NULL;
    size_t n = 0;
    char why[512] = "";
    cr_assert_eq(kbc_sweep_parse(p, text, 1000, &v, &n, why, sizeof why), 0, "'%s': %s", text,
                 why);
    free(v);
    return n;
}

Test(sweep_advice, thousands_separators_are_named)
{
    advice_fails(&p_size, "1,000,000", "would be read as a list");
    advice_fails(&p_size, "1,000,000", "write 1000000");
    advice_fails(&p_int, "2,048", "write 2048");
    advice_fails(&p_float, "1,000", "write 1000");
    /* A list is still a list. */
    cr_assert_eq(advice_count(&p_size, "1,2,3"), 3);
    cr_assert_eq(advice_count(&p_size, "1K,2K,4K"), 3);
    cr_assert_eq(advice_count(&p_size, "100,200,300"), 3);
}

Test(sweep_advice, a_hash_comment_is_named)
{
    advice_fails(&p_size, "1M # one million", "comments start with ';'");
    advice_fails(&p_size, "1M # one million", "'1M ; one million'");
    advice_fails(&p_enum, "f32 # the default", "comments start with ';'");
}

Test(sweep_advice, ranges_of_the_wrong_form_are_named)
{
    advice_fails(&p_size, "2^10...2^20", "a range is a..b[:step], with two dots");
    advice_fails(&p_size, "2^10:2^20", "a range is a..b[:step], the two dots first");
    cr_assert_eq(advice_count(&p_size, "2^10..2^12"), 3);
    cr_assert_eq(advice_count(&p_size, "1K..4K:x2"), 3);
}
