/*
 * test_terminal.c -- the run as a terminal shows it: the progress line
 * within the terminal's width, statuses and verdicts in colour on a
 * terminal and never with NO_COLOR, the noisy rows' explanation once per
 * run, no "vs cpu" column that repeats "vs base", and a machine line
 * within 120 columns.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "supervisor.h"
#include "text.h"

#include "kbench_cmd.h"

#define DATA KBENCH_SOURCE_DIR "/tests/data/compare"

Test(terminal, the_progress_line_cuts_the_name_to_the_width)
{
    char line[400];
    const char *head = "[3/17 points, 0:05, about 0:12 left] ";
    kbc_progress_fit(line, sizeof line, head, "reduce-study-with-a-long-name: onesweep-early", 60);
    cr_assert_eq(strlen(line), 59, "%s", line);
    cr_assert_str_eq(line, "[3/17 points, 0:05, about 0:12 left] reduce-study-with~ ...");
    kbc_progress_fit(line, sizeof line, head, "r: cub", 60);
    cr_assert_str_eq(line, "[3/17 points, 0:05, about 0:12 left] r: cub ...");
}

Test(terminal, colour_only_on_a_terminal_and_never_with_no_color)
{
    cr_assert(kbc_colour_wanted(1, NULL));
    cr_assert(kbc_colour_wanted(1, ""), "NO_COLOR empty is unset (no-color.org)");
    cr_assert_not(kbc_colour_wanted(1, "1"));
    cr_assert_not(kbc_colour_wanted(0, NULL), "never into a file or a pipe");
}

/* A row of reduce/e at n, variant v on backend b, median t, noise. */
static kbc_record row(const char *v, kb_backend b, uint64_t n, double t, double noise,
                      uint64_t point)
{
    kbc_record r;
    kbc_record_init(&r);
    snprintf(r.experiment, sizeof r.experiment, "e");
    snprintf(r.plugin, sizeof r.plugin, "reduce");
    snprintf(r.variant, sizeof r.variant, "%s", v);
    snprintf(r.baseline, sizeof r.baseline, "cpu");
    r.backend = b;
    r.n_params = 1;
    snprintf(r.params[0].name, sizeof r.params[0].name, "n");
    r.params[0].type = KB_PARAM_SIZE;
    r.params[0].value.u = n;
    snprintf(r.params[0].text, sizeof r.params[0].text, "%llu", (unsigned long long)n);
    r.params[0].swept = 1;
    r.point = point;
    r.n_points = 2;
    r.outcome = KBC_PASS;
    r.time.n = 10;
    r.time.median = t;
    r.noise = noise;
    return r;
}

/* The table of two points (cpu the baseline, then cpu-par and a CUDA
   row), coloured or not, on a machine without a GPU whose reason is
   long. */
static char *table(int colour)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_table(out, &s, &d), 0);
    kbc_report_table_colour(&s, colour);
    kbc_machine m;
    memset(&m, 0, sizeof m);
    snprintf(m.host, sizeof m.host, "build-host-01");
    m.cpu_threads = 2;
    snprintf(m.no_gpu_reason, sizeof m.no_gpu_reason,
             "no CUDA driver (cudaGetDeviceCount: CUDA driver version is insufficient for "
             "CUDA runtime version)");
    kbc_run_info info = {.machine = &m};
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    for (uint64_t p = 0; p < 2; p++) {
        kbc_record rs[3] = {row("cpu", KB_BACKEND_CPU, 1024 << p, 2e-3, 0.09, p),
                            row("cpu-par", KB_BACKEND_CPU, 1024 << p, 1e-3, 0.01, p),
                            row("gpu", KB_BACKEND_CUDA, 1024 << p, 1e-4, 0.01, p)};
        rs[2].outcome = KBC_FAIL;
        for (int i = 0; i < 3; i++)
            rs[i].speedup_baseline = rs[i].speedup_cpu = 2e-3 / rs[i].time.median;
        cr_assert_eq(s.point(s.ctx, rs, 3), 0);
    }
    cr_assert_eq(s.end(s.ctx, 1), 0);
    s.destroy(s.ctx);
    fclose(out);
    return text;
}

Test(terminal, statuses_are_coloured_without_moving_the_columns)
{
    char *plain = table(0), *coloured = table(1);
    cr_assert_null(strchr(plain, '\033'), "%s", plain);
    cr_assert_not_null(strstr(coloured, KBC_SGR_GOOD "pass" KBC_SGR_RESET), "%s", coloured);
    cr_assert_not_null(strstr(coloured, KBC_SGR_BAD "FAIL" KBC_SGR_RESET), "%s", coloured);
    /* Without its escapes the coloured table is the plain one. */
    char *stripped = strdup(coloured), *o = stripped;
    for (const char *p = coloured; *p;) {
        if (*p == '\033') {
            p = strchr(p, 'm') + 1;
            continue;
        }
        *o++ = *p++;
    }
    *o = '\0';
    cr_assert_str_eq(stripped, plain);
    free(stripped);
    free(plain);
    free(coloured);
}

Test(terminal, the_noisy_note_explains_once_per_run)
{
    char *t = table(0);
    char *first = strstr(t, "~ noisy (noise above 5%): cpu 9.0%");
    cr_assert_not_null(first, "%s", t);
    cr_assert_not_null(strstr(first + 1, "~ noisy (noise above 5%): cpu 9.0%"),
                       "each point names its noisy rows: %s", t);
    char *why = strstr(t, "(a median known only to within that");
    cr_assert_not_null(why, "%s", t);
    cr_assert_null(strstr(why + 1, "(a median known only to within that"), "%s", t);
    free(t);
}

Test(terminal, no_vs_cpu_column_where_the_baseline_is_the_cpu_variant)
{
    char *t = table(0);
    cr_assert_not_null(strstr(t, "vs base"), "%s", t);
    cr_assert_null(strstr(t, "vs cpu"), "%s", t);
    free(t);
}

Test(terminal, the_machine_line_fits_120_columns)
{
    char *t = table(0);
    char *end = strstr(t, "\ne  point 1/2");
    cr_assert_not_null(end, "%s", t);
    *end = '\0';
    char *copy = strdup(t);
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n"))
        cr_assert_leq(strlen(line), 120, "%s", line);
    free(copy);
    cr_assert_not_null(strstr(t, "machine: build-host-01, 2 CPU threads; no GPU: no CUDA driver\n"
                                 "  (cudaGetDeviceCount:"),
                       "%s", t);
    free(t);
}

/* ---- the ceiling that binds ---- */

/* One point of two CUDA rows that count flops, as a table. */
static char *ceiling_table(double pct_ceiling, double pct_peak)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    kbc_sink s;
    kbc_diag d;
    cr_assert_eq(kbc_report_table(out, &s, &d), 0);
    kbc_machine m;
    memset(&m, 0, sizeof m);
    m.has_gpu = 1;
    snprintf(m.name, sizeof m.name, "NVIDIA H100");
    kbc_run_info info = {.machine = &m};
    cr_assert_eq(s.begin(s.ctx, &info), 0);
    kbc_record rs[2] = {row("a", KB_BACKEND_CUDA, 1 << 20, 1e-5, 0.01, 0),
                        row("b", KB_BACKEND_CUDA, 1 << 20, 1e-5, 0.01, 0)};
    for (int i = 0; i < 2; i++) {
        rs[i].work.bytes_read = 4 << 20;
        rs[i].work.flops = 1 << 20;
        rs[i].gbps = 400;
        rs[i].gflops = 100;
        rs[i].pct_ceiling = pct_ceiling;
        rs[i].pct_peak = pct_peak;
        snprintf(rs[i].peak, sizeof rs[i].peak, "fp32");
    }
    cr_assert_eq(s.point(s.ctx, rs, 2), 0);
    cr_assert_eq(s.end(s.ctx, 0), 0);
    s.destroy(s.ctx);
    fclose(out);
    return text;
}

Test(terminal, a_memory_bound_point_shows_the_bandwidths_percent_not_the_peaks)
{
    char *t = ceiling_table(80, 1.7);
    cr_assert_not_null(strstr(t, "%peak"), "%s", t);
    cr_assert_null(strstr(t, "%fp32"), "1.7%% of the FP32 peak is noise: %s", t);
    free(t);
}

Test(terminal, a_compute_bound_point_shows_the_peaks_percent_not_the_bandwidths)
{
    char *t = ceiling_table(2, 70);
    cr_assert_not_null(strstr(t, "%fp32"), "%s", t);
    cr_assert_null(strstr(t, "%peak"), "%s", t);
    free(t);
}

/* ---- compare on a terminal (a pseudo-terminal through script(1)) ---- */

TestSuite(terminal_cmd, .init = kc_tmp, .fini = kc_tmp_remove);

Test(terminal_cmd, compare_colours_its_verdicts_on_a_terminal_and_not_with_no_color)
{
    /* tests/data/compare's slower pair: one row 10% slower. */
    char full[1600];
    snprintf(full, sizeof full,
             "cd '%s' && script -qec \"NO_COLOR= '%s' compare '%s/slower-base.json' "
             "'%s/slower-new.json'\" /dev/null > tty.txt",
             kc_dir, KC_KBENCH, DATA, DATA);
    cr_assert_neq(system(full), -1, "script(1) ran (compare exits 1: a row is slower)");
    char *tty = kc_slurp(kc_path("tty.txt"));
    cr_assert_not_null(strstr(tty, KBC_SGR_BAD "slower" KBC_SGR_RESET), "%s", tty);
    snprintf(full, sizeof full,
             "cd '%s' && script -qec \"NO_COLOR=1 '%s' compare '%s/slower-base.json' "
             "'%s/slower-new.json'\" /dev/null > nc.txt",
             kc_dir, KC_KBENCH, DATA, DATA);
    cr_assert_neq(system(full), -1, "script(1) ran (compare exits 1: a row is slower)");
    char *nc = kc_slurp(kc_path("nc.txt"));
    cr_assert_not_null(strstr(nc, "slower"), "%s", nc);
    cr_assert_null(strchr(nc, '\033'), "NO_COLOR: %s", nc);
    char args[1200];
    snprintf(args, sizeof args, "compare '%s/slower-base.json' '%s/slower-new.json'", DATA, DATA);
    kc_result r = kc_run(args);
    cr_assert_null(strchr(r.out, '\033'), "a file gets no colour: %s", r.out);
    kc_free(&r);
    free(nc);
    free(tty);
}
