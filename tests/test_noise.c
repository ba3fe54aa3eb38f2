/*
 * test_noise.c -- the parts of issue 11 section 3 that run without a GPU:
 * which rows are batched and how large a batch auto makes, the clock marks
 * of a row, and NVML loaded at run time (the fake libnvidia-ml of
 * tests/fixtures/nvml, chosen through $KBENCH_NVML).  Criterion runs each
 * test in its own process, so a setenv() here touches no other test.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "device.h"
#include "kbench/plugin.h"
#include "measure.h"
#include "nvml.h"
#include "record.h"

#define BUS "0000:19:00.0"

static void assert_has(const char *s, const char *piece)
{
    cr_assert(strstr(s, piece) != NULL, "expected \"%s\" in: %s", piece, s);
}

/* ---- which rows are batched ------------------------------------------------ */

Test(batch, off_times_singly_without_a_note)
{
    char note[200] = "x";
    cr_assert_eq(kbc_batch_choose(KBC_BATCH_OFF, 1, 0, 0, note, sizeof note), 1);
    cr_assert_str_empty(note);
}

Test(batch, count_is_kept_for_a_cuda_variant)
{
    char note[200];
    cr_assert_eq(kbc_batch_choose(64, 1, 0, 0, note, sizeof note), 64);
}

Test(batch, auto_is_decided_after_the_warmup)
{
    char note[200];
    cr_assert_eq(kbc_batch_choose(KBC_BATCH_AUTO, 1, 0, 0, note, sizeof note), 0,
                 "0 asks measure to time a few runs alone first");
}

Test(batch, cpu_variant_is_never_batched)
{
    char note[200];
    cr_assert_eq(kbc_batch_choose(64, 0, 0, 0, note, sizeof note), 1);
    assert_has(note, "CPU variant");
}

Test(batch, syncs_variant_is_never_batched)
{
    char note[200];
    cr_assert_eq(kbc_batch_choose(64, 1, KB_VARIANT_SYNCS, 0, note, sizeof note), 1);
    assert_has(note, "syncs");
}

Test(batch, cold_cache_is_never_batched)
{
    char note[200];
    cr_assert_eq(kbc_batch_choose(KBC_BATCH_AUTO, 1, 0, 1, note, sizeof note), 1);
    assert_has(note, "cache = cold");
}

/* ---- how large a batch auto makes ------------------------------------------ */

Test(batch, auto_times_a_slow_run_singly)
{
    char note[200];
    cr_assert_eq(kbc_batch_auto(KBC_BATCH_AUTO_BELOW_S, note, sizeof note), 1,
                 "a run of exactly the threshold is not batched");
    assert_has(note, "timed singly");
}

Test(batch, auto_fills_a_sample_of_about_200us)
{
    char note[200];
    /* 200 us / 5 us = 40 runs. */
    cr_assert_eq(kbc_batch_auto(5e-6, note, sizeof note), 40);
    assert_has(note, "40 runs");
}

Test(batch, auto_is_capped)
{
    cr_assert_eq(kbc_batch_auto(1e-9, NULL, 0), KBC_BATCH_MAX);
}

Test(batch, auto_without_a_time_is_single)
{
    char note[200];
    cr_assert_eq(kbc_batch_auto(0.0, note, sizeof note), 1);
    assert_has(note, "could not be timed");
}

Test(batch, size_is_at_least_two)
{
    /* 200 us / 150 us rounds up to 2, never 1 (that would not be a batch). */
    cr_assert_eq(kbc_batch_size_for(150e-6), 2);
    cr_assert_eq(kbc_batch_size_for(1.0), 2);
}

Test(batch, size_rounds_up)
{
    /* 200 / 3 = 66.7: 67 runs make at least 200 us. */
    cr_assert_eq(kbc_batch_size_for(3e-6), 67);
}

/* ---- a row's clock marks --------------------------------------------------- */

static kbc_clock_sample sm_sample(unsigned mhz, uint64_t reasons)
{
    kbc_clock_sample s = {.known = KBC_CLK_SM | KBC_CLK_REASONS, .sm_mhz = mhz,
                          .reasons = reasons};
    return s;
}

Test(clocks, below_ninety_percent_marks_low)
{
    kbc_rec_clocks c;
    kbc_clocks_start(&c, 1980);
    kbc_clock_sample a = sm_sample(1980, 0), b = sm_sample(1781, 0);
    kbc_clocks_add(&c, &a, 0);
    kbc_clocks_add(&c, &b, 1);
    cr_assert_eq(c.sm_min_mhz, 1781);
    cr_assert_eq(c.low_clock, 1, "1781 < 0.9 x 1980 = 1782");
    cr_assert_eq(c.throttled, 0);
}

Test(clocks, ninety_percent_is_not_low)
{
    kbc_rec_clocks c;
    kbc_clocks_start(&c, 1980);
    kbc_clock_sample a = sm_sample(1782, 0);
    kbc_clocks_add(&c, &a, 0);
    cr_assert_eq(c.low_clock, 0);
}

Test(clocks, throttle_reason_marks_the_row)
{
    kbc_rec_clocks c;
    kbc_clocks_start(&c, 1980);
    kbc_clock_sample a = sm_sample(1980, 0), b = sm_sample(1980, KBC_REASON_SW_POWER_CAP);
    kbc_clocks_add(&c, &a, 0);
    kbc_clocks_add(&c, &b, 1);
    cr_assert_eq(c.throttled, 1);
    cr_assert_eq(c.reasons, KBC_REASON_SW_POWER_CAP);
}

Test(clocks, idle_and_application_clocks_do_not_mark)
{
    kbc_rec_clocks c;
    kbc_clocks_start(&c, 1980);
    kbc_clock_sample a = sm_sample(1980, KBC_REASON_GPU_IDLE | KBC_REASON_APP_CLOCKS);
    kbc_clocks_add(&c, &a, 0);
    cr_assert_eq(c.throttled, 0);
    cr_assert_eq(c.reasons, KBC_REASON_GPU_IDLE | KBC_REASON_APP_CLOCKS, "recorded all the same");
}

Test(clocks, empty_reading_is_ignored)
{
    kbc_rec_clocks c;
    kbc_clocks_start(&c, 1980);
    kbc_clock_sample none = {0};
    kbc_clocks_add(&c, &none, 0);
    cr_assert_eq(c.n, 0);
}

Test(clocks, reason_names_round_trip)
{
    char buf[200];
    kbc_clock_reasons_text(KBC_REASON_HW_SLOWDOWN | KBC_REASON_SW_THERMAL, ",", buf, sizeof buf);
    cr_assert_str_eq(buf, "hw_slowdown,sw_thermal");
    cr_assert_eq(kbc_clock_reason_parse("hw_power_brake"), KBC_REASON_HW_POWER_BRAKE);
}

/* ---- NVML loaded at run time ------------------------------------------------ */

Test(nvml, off_says_so)
{
    char why[300] = "";
    setenv("KBENCH_NVML", "off", 1);
    cr_assert_null(kbc_nvml_open(BUS, why, sizeof why));
    assert_has(why, "KBENCH_NVML is off");
}

Test(nvml, missing_library_says_so_and_returns_null)
{
    char why[300] = "";
    setenv("KBENCH_NVML", KBENCH_FIXTURE_DIR "/nvml/no-such-libnvidia-ml.so", 1);
    cr_assert_null(kbc_nvml_open(BUS, why, sizeof why));
    assert_has(why, "could not be loaded");
}

Test(nvml, init_failure_returns_null)
{
    char why[300] = "";
    setenv("KBENCH_NVML", KBENCH_FAKE_NVML, 1);
    setenv("FAKE_NVML_FAIL", "init", 1);
    cr_assert_null(kbc_nvml_open(BUS, why, sizeof why));
    assert_has(why, "nvmlInit_v2 failed");
}

Test(nvml, unknown_device_returns_null)
{
    char why[300] = "";
    setenv("KBENCH_NVML", KBENCH_FAKE_NVML, 1);
    setenv("FAKE_NVML_FAIL", "device", 1);
    cr_assert_null(kbc_nvml_open(BUS, why, sizeof why));
    assert_has(why, BUS);
}

Test(nvml, reads_the_clocks)
{
    char why[300] = "";
    setenv("KBENCH_NVML", KBENCH_FAKE_NVML, 1);
    setenv("FAKE_NVML_SM_MHZ", "1755", 1);
    setenv("FAKE_NVML_SM_MAX_MHZ", "1980", 1);
    setenv("FAKE_NVML_MEM_MHZ", "2619", 1);
    setenv("FAKE_NVML_TEMP_C", "71", 1);
    setenv("FAKE_NVML_POWER_MW", "690500", 1);
    setenv("FAKE_NVML_REASONS", "0x4", 1);
    kbc_nvml *x = kbc_nvml_open(BUS, why, sizeof why);
    cr_assert_not_null(x, "%s", why);
    cr_assert_eq(kbc_nvml_sm_max_mhz(x), 1980);
    kbc_clock_sample s;
    cr_assert_eq(kbc_nvml_sample(x, &s), 0);
    cr_assert_eq(s.known, KBC_CLK_SM | KBC_CLK_MEM | KBC_CLK_TEMP | KBC_CLK_POWER |
                              KBC_CLK_REASONS);
    cr_assert_eq(s.sm_mhz, 1755);
    cr_assert_eq(s.mem_mhz, 2619);
    cr_assert_eq(s.temp_c, 71);
    cr_assert_float_eq(s.power_w, 690.5, 1e-9, "milliwatts to watts");
    cr_assert_eq(s.reasons, KBC_REASON_SW_POWER_CAP);
    kbc_nvml_close(x);
}

Test(nvml, failed_field_is_left_out)
{
    char why[300] = "";
    setenv("KBENCH_NVML", KBENCH_FAKE_NVML, 1);
    setenv("FAKE_NVML_FAIL", "power", 1);
    kbc_nvml *x = kbc_nvml_open(BUS, why, sizeof why);
    cr_assert_not_null(x, "%s", why);
    kbc_clock_sample s;
    cr_assert_eq(kbc_nvml_sample(x, &s), 0);
    cr_assert_eq(s.known & KBC_CLK_POWER, 0u);
    cr_assert_neq(s.known & KBC_CLK_SM, 0u);
    kbc_nvml_close(x);
}

Test(nvml, asks_for_the_device_by_bus_id)
{
    char why[300] = "", path[] = "/tmp/kbench-fake-nvml-XXXXXX", got[64] = "";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    setenv("KBENCH_NVML", KBENCH_FAKE_NVML, 1);
    setenv("FAKE_NVML_BUS_ID_OUT", path, 1);
    kbc_nvml *x = kbc_nvml_open(BUS, why, sizeof why);
    cr_assert_not_null(x, "%s", why);
    kbc_nvml_close(x);
    FILE *f = fdopen(fd, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(got, sizeof got, f));
    fclose(f);
    unlink(path);
    got[strcspn(got, "\n")] = '\0';
    cr_assert_str_eq(got, BUS);
}

/* ---- the run's device without NVML: one notice, and it goes on ------------- */

Test(nvml, device_without_nvml_says_so_once)
{
    setenv("KBENCH_NVML", KBENCH_FIXTURE_DIR "/nvml/no-such-libnvidia-ml.so", 1);
    kbc_device d;
    memset(&d, 0, sizeof d);
    char *buf = NULL;
    size_t len = 0;
    FILE *notice = open_memstream(&buf, &len);
    cr_assert_eq(kbc_device_clocks_open(&d, BUS, notice), -1);
    fclose(notice);
    assert_has(buf, "kbench: note: no GPU clock readings: ");
    assert_has(buf, "could not be loaded");
    int lines = 0;
    for (const char *c = buf; *c; c++)
        lines += *c == '\n';
    cr_assert_eq(lines, 1, "one line: %s", buf);
    assert_has(d.clocks_why, "could not be loaded");
    kbc_clock_sample s;
    cr_assert_eq(kbc_device_clocks(&d, &s), -1, "no readings, and no crash");
    cr_assert_eq(s.known, 0u);
    free(buf);
}

Test(nvml, device_with_nvml_knows_the_maximum_clock)
{
    setenv("KBENCH_NVML", KBENCH_FAKE_NVML, 1);
    setenv("FAKE_NVML_SM_MAX_MHZ", "1980", 1);
    kbc_device d;
    memset(&d, 0, sizeof d);
    cr_assert_eq(kbc_device_clocks_open(&d, BUS, NULL), 0, "%s", d.clocks_why);
    cr_assert_eq(kbc_device_sm_max_mhz(&d), 1980);
    kbc_clock_sample s;
    cr_assert_eq(kbc_device_clocks(&d, &s), 0);
    cr_assert_neq(s.known & KBC_CLK_SM, 0u);
    kbc_nvml_close(d.nvml);
}
