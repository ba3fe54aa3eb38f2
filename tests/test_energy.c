/*
 * test_energy.c -- joules per run (cuda/energy.h) without a GPU: the
 * energy windows driven by a fake variant (steps that sleep) and the fake
 * libnvidia-ml of tests/fixtures/nvml, whose counter follows a script of
 * readings (FAKE_NVML_ENERGY_MJ) or the clock (FAKE_NVML_ENERGY_MW);
 * libfake_nvml_old.so is a driver without the counter.  Criterion runs each
 * test in its own process, so a setenv() here touches no other test.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "energy.h"
#include "nvml.h"
#include "record.h"

#define BUS "0000:19:00.0"

static void assert_has(const char *s, const char *piece)
{
    cr_assert(strstr(s, piece) != NULL, "expected \"%s\" in: %s", piece, s);
}

static kbc_nvml *fake_nvml(const char *lib)
{
    char why[300] = "";
    setenv("KBENCH_NVML", lib, 1);
    kbc_nvml *x = kbc_nvml_open(BUS, why, sizeof why);
    cr_assert_not_null(x, "%s", why);
    return x;
}

/* ---- the fake variant ------------------------------------------------------ */

typedef struct fake_steps {
    double step_sleep_s;   /* each step sleeps this long          */
    uint64_t fail_after;   /* 0: never; else the step that fails  */
    uint64_t done;         /* steps enqueued so far               */
    int waits;
} fake_steps;

static void sleep_s(double s)
{
    if (!(s > 0))
        return;
    struct timespec t = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t) != 0)
        ;
}

static int fake_enqueue(void *ctx, uint64_t k, kbc_fault *f)
{
    fake_steps *s = ctx;
    for (uint64_t i = 0; i < k; i++) {
        if (s->fail_after && s->done + 1 == s->fail_after) {
            f->kind = KBC_FAULT_CUDA;
            f->stage = "the energy windows";
            snprintf(f->why, sizeof f->why, "an illegal memory access was encountered");
            return -1;
        }
        s->done++;
        sleep_s(s->step_sleep_s);
    }
    return 0;
}

static int fake_wait(void *ctx, kbc_fault *f)
{
    (void)f;
    ((fake_steps *)ctx)->waits++;
    return 0;
}

/* Windows of 20 ms made of 5 ms steps of 10 runs, 4 MB and 1e8 flops a
   run; the fake steps sleep STEP_S, so that a window is 4 steps. */
#define STEP_S 0.005
static const kbc_energy_plan quick = {.window_s = 0.02, .step_s = STEP_S, .runs_per_step = 10,
                                      .bytes = 4e6, .flops = 1e8};

/* The windows of plan p over variant s, against the fake NVML. */
static int windows(const kbc_energy_plan *p, fake_steps *s, kbc_rec_energy *out, kbc_fault *f)
{
    kbc_nvml *x = fake_nvml(KBENCH_FAKE_NVML);
    memset(out, 0, sizeof *out);
    kbc_energy_steps st = {.enqueue = fake_enqueue, .wait = fake_wait, .ctx = s};
    int rc = kbc_energy_windows(x, p, &st, out, f);
    kbc_nvml_close(x);
    return rc;
}

/* A script of n readings from `start`, each `step` mJ after the one before. */
static void script_rising(unsigned long long start, unsigned long long step, int n)
{
    static char buf[4096];
    size_t used = 0;
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%llu", i ? "," : "",
                                 start + step * (unsigned long long)i);
    setenv("FAKE_NVML_ENERGY_MJ", buf, 1);
}

/* ---- NVML's counter and power limit ------------------------------------- */

Test(nvml_energy, reads_the_counter_and_the_power_limit)
{
    setenv("FAKE_NVML_ENERGY_MJ", "123456789012", 1);
    setenv("FAKE_NVML_POWER_LIMIT_MW", "690500", 1);
    kbc_nvml *x = fake_nvml(KBENCH_FAKE_NVML);
    unsigned long long mj = 0;
    char why[200] = "";
    cr_assert_eq(kbc_nvml_energy_mj(x, &mj, why, sizeof why), KBC_NVML_OK, "%s", why);
    cr_assert_eq(mj, 123456789012ULL);
    cr_assert_float_eq(kbc_nvml_power_limit_w(x), 690.5, 1e-9);
    kbc_nvml_close(x);
}

Test(nvml_energy, a_device_without_the_counter_is_unsupported)
{
    setenv("FAKE_NVML_FAIL", "energy", 1);
    kbc_nvml *x = fake_nvml(KBENCH_FAKE_NVML);
    unsigned long long mj = 0;
    char why[200] = "";
    cr_assert_eq(kbc_nvml_energy_mj(x, &mj, why, sizeof why), KBC_NVML_UNSUPPORTED);
    assert_has(why, "Not Supported");
    kbc_nvml_close(x);
}

Test(nvml_energy, a_driver_without_the_functions_is_unsupported_not_a_failure)
{
    kbc_nvml *x = fake_nvml(KBENCH_FAKE_NVML_OLD);
    unsigned long long mj = 0;
    char why[200] = "";
    cr_assert_eq(kbc_nvml_energy_mj(x, &mj, why, sizeof why), KBC_NVML_UNSUPPORTED);
    assert_has(why, "has no nvmlDeviceGetTotalEnergyConsumption");
    cr_assert(isnan(kbc_nvml_power_limit_w(x)));
    /* The clocks still read. */
    kbc_clock_sample s;
    cr_assert_eq(kbc_nvml_sample(x, &s), 0);
    kbc_nvml_close(x);
}

/* ---- the windows ------------------------------------------------------------ */

Test(windows, give_the_median_its_interval_watts_and_efficiency)
{
    /* Windows of 1000, 1100, 900, 1000 and 1050 mJ, 40 runs each. */
    setenv("FAKE_NVML_ENERGY_MJ", "1000000,1001000,1002100,1003000,1004000,1005050", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    cr_assert_eq(e.windows, 5);
    cr_assert_eq(e.dropped, 0);
    cr_assert_eq(e.runs_per_window, 40);
    cr_assert_float_eq(e.window_j[1], 1.1 / 40, 1e-12, "the windows in the order they ran");
    cr_assert_float_eq(e.j_per_run, 1.0 / 40, 1e-12);
    cr_assert_float_eq(e.j_lo, 0.9 / 40, 1e-12, "five windows: the interval is min to max");
    cr_assert_float_eq(e.j_hi, 1.1 / 40, 1e-12);
    double sec = 0;
    for (uint32_t i = 0; i < e.windows; i++) {
        cr_assert_geq(e.window_sec[i], quick.window_s, "every window lasts energy_window");
        sec += e.window_sec[i];
    }
    cr_assert_float_eq(e.watts, 5.05 / sec, 1e-9 * e.watts);
    cr_assert_float_eq(e.gb_per_j, 4e6 / 1e9 / (1.0 / 40), 1e-9);
    cr_assert_float_eq(e.gflops_per_j, 1e8 / 1e9 / (1.0 / 40), 1e-9);
    cr_assert_float_eq(e.power_limit_w, 700.0, 1e-9);
    cr_assert_float_eq(e.window_s, quick.window_s, 0);
    cr_assert_str_empty(e.why);
    cr_assert_str_empty(e.note);
    cr_assert_eq(s.done, 20, "5 windows of 4 steps");
}

/* energy_windows = 9: nine windows kept, and their interval from the
   second lowest to the highest (the order statistics of kbc_median_interval
   at 9: ranks 2 and 9), no longer the lowest to the highest. */
Test(windows, more_windows_are_kept_when_asked_for)
{
    /* Windows of 900, 950, ..., 1300 mJ, in a shuffled order. */
    static const int mj[9] = {1100, 900, 1300, 1000, 1200, 950, 1150, 1050, 1250};
    char buf[256];
    size_t used = (size_t)snprintf(buf, sizeof buf, "1000000");
    unsigned long long at = 1000000;
    for (int i = 0; i < 9; i++) {
        at += (unsigned long long)mj[i];
        used += (size_t)snprintf(buf + used, sizeof buf - used, ",%llu", at);
    }
    setenv("FAKE_NVML_ENERGY_MJ", buf, 1);
    kbc_energy_plan p = quick;
    p.windows = 9;
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&p, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    cr_assert_eq(e.windows, 9);
    cr_assert_float_eq(e.window_j[2], 1.3 / 40, 1e-12, "the windows in the order they ran");
    cr_assert_float_eq(e.j_per_run, 1.1 / 40, 1e-12);
    cr_assert_float_eq(e.j_lo, 0.95 / 40, 1e-12, "not the lowest window");
    cr_assert_float_eq(e.j_hi, 1.3 / 40, 1e-12);
    cr_assert_eq(s.done, 36, "9 windows of 4 steps");
}

Test(windows, a_plan_without_bytes_or_flops_has_no_efficiency)
{
    script_rising(5000, 1000, 8);
    kbc_energy_plan p = quick;
    p.bytes = 0;
    p.flops = 0;
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&p, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    cr_assert(isnan(e.gb_per_j));
    cr_assert(isnan(e.gflops_per_j));
}

Test(windows, the_counter_against_the_clock_gives_its_rate)
{
    setenv("FAKE_NVML_ENERGY_MW", "300000", 1);
    kbc_energy_plan p = quick;
    p.window_s = 0.05;
    p.step_s = 0.01;
    fake_steps s = {.step_sleep_s = 0.01};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&p, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    cr_assert(fabs(e.watts - 300.0) < 15.0, "300 W counted over the windows, got %g", e.watts);
}

Test(windows, a_counter_still_for_a_second_is_said)
{
    setenv("FAKE_NVML_ENERGY_MJ", "5000", 1);
    kbc_energy_plan p = quick;
    p.window_s = 1.0;
    p.step_s = 1.0;
    fake_steps s = {.step_sleep_s = 1.0};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&p, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_STILL);
    assert_has(e.why, "the energy counter did not move in 1 window of");
    cr_assert(isnan(e.j_per_run));
    cr_assert_eq(s.done, 1, "a still second is enough to tell");
}

Test(windows, a_counter_that_moves_in_some_short_windows_only_means_too_short)
{
    setenv("FAKE_NVML_ENERGY_MJ", "1000,1000,1000,2000,3000,4000,5000,6000", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_TOO_SHORT);
    assert_has(e.why, "did not move in 2 of 3 windows");
    assert_has(e.why, "make energy_window longer");
    cr_assert(isnan(e.j_per_run), "no number from windows the counter mixed up");
}

Test(windows, a_counter_still_after_moving_means_too_short)
{
    setenv("FAKE_NVML_ENERGY_MJ", "1000,2000,3000,3000,4000", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_TOO_SHORT);
    assert_has(e.why, "did not move in 1 of 3 windows");
    cr_assert_eq(e.windows, 0, "the window kept before is no number either");
    cr_assert_eq(e.runs_per_window, 0);
}

Test(windows, a_counter_with_a_slow_period_makes_short_windows_too_short)
{
    /* Moves every 100 ms; windows of 4 ms see it stand still. */
    setenv("FAKE_NVML_ENERGY_PERIOD_MS", "100", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_TOO_SHORT, "%s", e.why);
}

Test(windows, a_window_where_the_counter_went_backwards_is_dropped_and_noted)
{
    setenv("FAKE_NVML_ENERGY_MJ",
           "1000000,1001000,990000,991000,992000,993000,994000", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    cr_assert_eq(e.windows, 5);
    cr_assert_eq(e.dropped, 1);
    cr_assert_float_eq(e.j_per_run, 1.0 / 40, 1e-12, "the fall counts in no window");
    assert_has(e.note, "1 window dropped: 1 where the energy counter went backwards (first "
                       "from 1001000 to 990000 mJ)");
}

Test(windows, a_counter_that_keeps_going_backwards_is_said)
{
    /* Every reading below the one before. */
    char buf[512];
    size_t used = 0;
    for (int i = 0; i < 14; i++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%d", i ? "," : "",
                                 900000 - 1000 * i);
    setenv("FAKE_NVML_ENERGY_MJ", buf, 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_BACKWARDS);
    assert_has(e.why, "went backwards (from 900000 to 899000 mJ) in 12 of 12 windows");
    cr_assert_eq(e.windows, 0);
}

Test(windows, a_64_bit_wrap_is_dropped_and_noted)
{
    setenv("FAKE_NVML_ENERGY_MJ",
           "18446744073709549616,18446744073709550616,384,1384,2384,3384,4384", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    cr_assert_eq(e.dropped, 1);
    assert_has(e.note, "1 where it wrapped (first from 18446744073709550616 to 384 mJ)");
}

Test(windows, a_32_bit_wrap_is_a_wrap_too)
{
    setenv("FAKE_NVML_ENERGY_MJ", "4294965296,4294966296,704,1704,2704,3704,4704", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    assert_has(e.note, "where it wrapped");
}

Test(windows, a_counter_that_falls_to_a_reading_it_could_not_wrap_to_went_backwards)
{
    /* From the top quarter of 32 bits to the middle: not a wrap. */
    setenv("FAKE_NVML_ENERGY_MJ", "4294965296,4294966296,2147483648,2147484648,2147485648,"
                                  "2147486648,2147487648", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    assert_has(e.note, "went backwards");
}

Test(windows, a_window_shorter_than_energy_window_is_measured_again_longer)
{
    /* Steps run five times faster than the plan says: the first window
       comes out at a fifth of energy_window. */
    script_rising(1000000, 1000, 10);
    kbc_energy_plan p = quick;
    p.window_s = 0.04;
    p.step_s = 0.01;
    fake_steps s = {.step_sleep_s = 0.002};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&p, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    /* One short window, or two when a loaded machine's sleeps overshoot
       the first enough to size the second short as well. */
    cr_assert_geq(e.dropped, 1);
    cr_assert_leq(e.dropped, 2);
    cr_assert_gt(e.runs_per_window, 40, "more steps after the short one");
    for (uint32_t i = 0; i < e.windows; i++)
        cr_assert_geq(e.window_sec[i], p.window_s);
    assert_has(e.note, "shorter than energy_window, measured again with more runs");
}

/* A median far below what a run takes (20 million steps planned, of 5 ms):
   the window ends once enqueuing has taken twice energy_window, and counts
   the runs it holds. */
Test(windows, a_window_of_too_many_steps_ends_on_the_hosts_clock)
{
    script_rising(1000000, 1000, 8);
    kbc_energy_plan p = quick;
    p.step_s = 1e-9;
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&p, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    cr_assert_lt(s.done, 1000, "%llu steps", (unsigned long long)s.done);
    uint64_t runs = 0;
    for (uint32_t i = 0; i < e.windows; i++) {
        cr_assert_geq(e.window_sec[i], 2 * p.window_s);
        runs += (uint64_t)llround(1.0 / e.window_j[i]); /* 1 J a window */
    }
    cr_assert_eq(runs, s.done * 10, "each window's joules are over the runs it held");
}

/* Steps that take no time, however many: a run() that enqueues nothing. */
static int instant_enqueue(void *ctx, uint64_t k, kbc_fault *f)
{
    (void)ctx;
    (void)k;
    (void)f;
    return 0;
}

Test(windows, windows_that_stay_short_are_said)
{
    script_rising(1000, 1000, 20);
    fake_steps s = {0};
    kbc_rec_energy e;
    memset(&e, 0, sizeof e);
    kbc_fault f;
    kbc_nvml *x = fake_nvml(KBENCH_FAKE_NVML);
    kbc_energy_steps st = {.enqueue = instant_enqueue, .wait = fake_wait, .ctx = &s};
    cr_assert_eq(kbc_energy_windows(x, &quick, &st, &e, &f), 0);
    kbc_nvml_close(x);
    cr_assert_eq(e.status, KBC_ENERGY_TOO_SHORT);
    assert_has(e.why, "12 of 12 windows were shorter than energy_window = 0.02 s");
}

Test(windows, power_and_thermal_reasons_mark_their_windows)
{
    script_rising(1000000, 1000, 8);
    /* Three readings a window of 4 steps (after chunks of 1, 2 and 1):
       window 2 sees the SW power cap, window 4 HW thermal slowdown, window
       5 only GPU idle. */
    setenv("FAKE_NVML_REASONS", "0,0,0,0,0x4,0,0,0,0,0,0x40,0,0,0x1,0", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    cr_assert_eq(e.throttled_windows, 2);
    cr_assert_eq(e.reasons, KBC_REASON_SW_POWER_CAP | KBC_REASON_HW_THERMAL);
    cr_assert_float_eq(e.throttled_s, 0, 0, "the violation counters did not move");
}

/* The violation counters see the whole window: window 3 held back 5 ms,
   window 5 2 ms by heat (one reading at the first edge, one per window). */
Test(windows, the_violation_counters_mark_their_windows_and_add_up)
{
    script_rising(1000000, 1000, 8);
    setenv("FAKE_NVML_VIOLATION_NS", "100,100,100,5000100,5000100,5000100", 1);
    setenv("FAKE_NVML_THERMAL_NS", "7,7,7,7,7,2000007", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    cr_assert_eq(e.throttled_windows, 2);
    cr_assert_float_eq(e.throttled_s, 0.007, 1e-12);
    cr_assert_eq(e.reasons, 0, "no reason was read at the moments it looked");
}

Test(windows, without_violation_counters_the_time_held_back_is_unknown)
{
    script_rising(1000000, 1000, 8);
    setenv("FAKE_NVML_FAIL", "violation", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_MEASURED, "%s", e.why);
    cr_assert(isnan(e.throttled_s));
    cr_assert_eq(e.throttled_windows, 0);
}

Test(windows, a_failing_run_is_the_rows_failure)
{
    script_rising(1000000, 1000, 8);
    fake_steps s = {.step_sleep_s = STEP_S, .fail_after = 7};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), -1);
    cr_assert_eq(f.kind, KBC_FAULT_CUDA);
    assert_has(f.why, "illegal memory access");
}

Test(windows, the_first_edge_waits_for_the_stream)
{
    script_rising(1000000, 1000, 8);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(s.waits, 6, "one wait before the first reading, one per window");
}

Test(windows, a_counter_nvml_cannot_read_is_unsupported)
{
    setenv("FAKE_NVML_FAIL", "energy", 1);
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_rec_energy e;
    kbc_fault f;
    cr_assert_eq(windows(&quick, &s, &e, &f), 0);
    cr_assert_eq(e.status, KBC_ENERGY_UNSUPPORTED);
    assert_has(e.why, "NVML cannot read the energy counter: nvmlDeviceGetTotalEnergyConsumption "
                      "failed: Not Supported");
    cr_assert_eq(s.done, 0, "no window is run for nothing");
}

Test(windows, an_old_driver_is_unsupported)
{
    fake_steps s = {.step_sleep_s = STEP_S};
    kbc_nvml *x = fake_nvml(KBENCH_FAKE_NVML_OLD);
    kbc_rec_energy e;
    memset(&e, 0, sizeof e);
    kbc_fault f;
    kbc_energy_steps st = {.enqueue = fake_enqueue, .wait = fake_wait, .ctx = &s};
    cr_assert_eq(kbc_energy_windows(x, &quick, &st, &e, &f), 0);
    kbc_nvml_close(x);
    cr_assert_eq(e.status, KBC_ENERGY_UNSUPPORTED);
    assert_has(e.why, "has no nvmlDeviceGetTotalEnergyConsumption");
    cr_assert(isnan(e.power_limit_w));
    unsigned long long ns;
    x = fake_nvml(KBENCH_FAKE_NVML_OLD);
    cr_assert_eq(kbc_nvml_violation_ns(x, &ns), -1, "no violation counters either");
    kbc_nvml_close(x);
}

/* ---- a row's reasons, before any window ------------------------------------ */

static kbc_record cuda_row(void)
{
    kbc_record r;
    kbc_record_init(&r);
    r.backend = KB_BACKEND_CUDA;
    r.outcome = KBC_PASS;
    r.time.median = 1e-3;
    r.time.n = 10;
    return r;
}

static kbc_measure energy_on(void)
{
    kbc_measure m;
    memset(&m, 0, sizeof m);
    m.energy = KBC_ENERGY_ON;
    m.energy_window_s = 1.0;
    return m;
}

static kbc_instance no_instance(void)
{
    kbc_instance in;
    memset(&in, 0, sizeof in);
    return in;
}

Test(row, energy_off_tries_nothing)
{
    kbc_record r = cuda_row();
    kbc_measure m = energy_on();
    m.energy = KBC_ENERGY_OFF;
    kbc_fault f;
    cr_assert_eq(kbc_energy_row(no_instance(), NULL, &m, NULL, &r, &f), 0);
    cr_assert_eq(r.energy.status, KBC_ENERGY_NOT_RUN);
    cr_assert_eq(r.energy.requested, 0);
    cr_assert_str_empty(r.energy.why);
}

Test(row, a_cpu_variant_says_so)
{
    kbc_record r = cuda_row();
    r.backend = KB_BACKEND_CPU;
    kbc_measure m = energy_on();
    kbc_fault f;
    cr_assert_eq(kbc_energy_row(no_instance(), NULL, &m, NULL, &r, &f), 0);
    cr_assert_eq(r.energy.status, KBC_ENERGY_CPU);
    cr_assert_eq(r.energy.requested, KBC_ENERGY_ON);
    assert_has(r.energy.why, "a CPU variant");
}

Test(row, a_cold_cache_row_says_so)
{
    kbc_record r = cuda_row();
    r.cache_cold = 1;
    kbc_measure m = energy_on();
    kbc_fault f;
    cr_assert_eq(kbc_energy_row(no_instance(), NULL, &m, NULL, &r, &f), 0);
    cr_assert_eq(r.energy.status, KBC_ENERGY_COLD);
    assert_has(r.energy.why, "cache = cold");
}

Test(row, no_nvml_says_why)
{
    kbc_record r = cuda_row();
    kbc_measure m = energy_on();
    m.energy = KBC_ENERGY_AUTO;
    kbc_device d;
    memset(&d, 0, sizeof d);
    setenv("KBENCH_NVML", "off", 1);
    cr_assert_eq(kbc_device_clocks_open(&d, BUS, NULL), -1);
    kbc_fault f;
    cr_assert_eq(kbc_energy_row(no_instance(), NULL, &m, &d, &r, &f), 0);
    cr_assert_eq(r.energy.status, KBC_ENERGY_NO_NVML);
    cr_assert_str_eq(r.energy.why, "no NVML: KBENCH_NVML is off");
}

Test(row, the_idle_power_is_read_before_the_point)
{
    setenv("KBENCH_NVML", KBENCH_FAKE_NVML, 1);
    setenv("FAKE_NVML_POWER_MW", "81500", 1);
    kbc_device d;
    memset(&d, 0, sizeof d);
    cr_assert_eq(kbc_device_clocks_open(&d, BUS, NULL), 0);
    kbc_energy_point_start(&d);
    cr_assert_float_eq(d.idle_w, 81.5, 1e-9);
    kbc_nvml_close(d.nvml);
}

Test(row, no_idle_power_without_nvml)
{
    kbc_device d;
    memset(&d, 0, sizeof d);
    kbc_energy_point_start(&d);
    cr_assert(isnan(d.idle_w));
}

/* ---- the names in the files ------------------------------------------------- */

Test(names, every_status_has_a_name_that_reads_back)
{
    for (int s = 0; s < KBC_N_ENERGY_STATUS; s++) {
        const char *name = kbc_energy_status_name(s);
        cr_assert_str_neq(name, "unknown", "status %d", s);
        cr_assert_eq(kbc_energy_status_parse(name), s, "%s", name);
    }
    cr_assert_eq(kbc_energy_status_parse("nonsense"), -1);
}
