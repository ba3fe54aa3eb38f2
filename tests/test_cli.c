/*
 * test_cli.c -- the kbench binary as a user meets it: help, version,
 * mistakes on the command line, a missing file, a dry run, a run writing
 * both report files, and the exit codes.  Each test runs the built binary
 * through the shell in a fresh temporary folder, with the toy plugin.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"
#include "version.h"

#define KBENCH KBENCH_BINARY_DIR "/kbench"
#define TOY_DIR KBENCH_FIXTURE_DIR "/runner"

static char tmp[256];

static void make_tmp(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/kbench-cli-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

/* The texts a test collected (stdout, stderr); freed with the folder, so
   that a sanitized build reports no leaks and tests stay short. */
static char *collected[64];
static size_t n_collected;

static char *keep(char *s)
{
    cr_assert_lt(n_collected, sizeof collected / sizeof *collected, "too many outputs kept");
    collected[n_collected++] = s;
    return s;
}

static void remove_tmp(void)
{
    while (n_collected > 0)
        free(collected[--n_collected]);
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "rm -rf '%s'", tmp), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

TestSuite(cli, .init = make_tmp, .fini = remove_tmp);

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

typedef struct result {
    int code;
    char *out, *err;
} result;

/* Runs `kbench ARGS` in the temporary folder, with no plugins from the
   environment, and collects the exit code, stdout and stderr. */
static result kb(const char *args)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "cd '%s' && KBENCH_PLUGIN_PATH= '%s' %s >out.txt 2>err.txt", tmp,
                          KBENCH, args),
                 0);
    int st = system(cmd);
    free(cmd);
    cr_assert(WIFEXITED(st), "kbench did not exit normally (status %d)", st);
    result r = {.code = WEXITSTATUS(st)};
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", tmp);
    r.out = keep(slurp(path));
    snprintf(path, sizeof path, "%s/err.txt", tmp);
    r.err = keep(slurp(path));
    return r;
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static const char passing_ini[] = "[global]\n"
                                  "runs = 3\n"
                                  "warmup = 1\n"
                                  "[pass]\n"
                                  "plugin = toy\n"
                                  "variants = good, slow, gpu\n"
                                  "n = 1K, 4K\n";

static const char failing_ini[] = "[global]\n"
                                  "runs = 3\n"
                                  "[fails]\n"
                                  "plugin = toy\n"
                                  "variants = good, wrong\n"
                                  "n = 512\n";

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(cli, help_prints_usage_and_exits_zero)
{
    result r = kb("--help");
    cr_assert_eq(r.code, 0);
    cr_assert_not_null(strstr(r.out, "usage: kbench"));
    cr_assert_not_null(strstr(r.out, "--plugin-path"));
    cr_assert_str_eq(r.err, "");
    result h = kb("help");
    cr_assert_eq(h.code, 0);
    cr_assert_str_eq(h.out, r.out);
}

Test(cli, version_names_version_and_revision)
{
    result r = kb("--version");
    cr_assert_eq(r.code, 0);
    cr_assert_not_null(strstr(r.out, "kbench " KBENCH_VERSION), "%s", r.out);
    cr_assert_not_null(strstr(r.out, kbc_git_rev), "%s", r.out);
}

Test(cli, unknown_command_suggests_the_near_one)
{
    result r = kb("lsit");
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "unknown command 'lsit'"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "did you mean 'kbench list'"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "see kbench --help"), "%s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
    cr_assert_str_eq(r.out, "");
}

Test(cli, unknown_option_suggests_the_near_one)
{
    result r = kb("run --dryrun x.ini");
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "did you mean '--dry-run'"), "%s", r.err);
}

Test(cli, no_command_exits_two)
{
    cr_assert_eq(kb("").code, 2);
}

/* The sentence names every command (docs/cli.md quotes it). */
Test(cli, no_command_names_every_command)
{
    result r = kb("");
    cr_assert_eq(r.code, 2);
    const char *const commands[] = {"list", "describe", "run",   "check",
                                    "compare", "plot", "merge", "help"};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        char word[32];
        snprintf(word, sizeof word, " %s", commands[i]);
        cr_assert_not_null(strstr(r.err, word), "%s is not named: %s", commands[i], r.err);
    }
}

Test(cli, run_without_a_file_exits_two)
{
    cr_assert_eq(kb("run").code, 2);
}

Test(cli, run_with_two_files_exits_two)
{
    cr_assert_eq(kb("run a.ini b.ini").code, 2);
}

Test(cli, list_with_an_argument_exits_two)
{
    cr_assert_eq(kb("list extra").code, 2);
}

Test(cli, describe_without_a_plugin_exits_two)
{
    cr_assert_eq(kb("describe").code, 2);
}

Test(cli, a_run_option_on_another_command_exits_two)
{
    result r = kb("list -o out");
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "option -o applies only to kbench merge, kbench plot, "
                                     "kbench report, kbench run and kbench tune"),
                       "%s", r.err);
}

Test(cli, an_output_option_without_its_folder_exits_two)
{
    result r = kb("run x.ini -o");
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "needs a folder"), "%s", r.err);
}

/* An empty folder name once overflowed a heap buffer while the folder was
   made; it is refused when the command line is read. */
Test(cli, an_empty_output_folder_is_refused)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -o '' --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "option -o was given an empty folder name"), "%s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
}

Test(cli, an_empty_output_folder_after_equals_is_refused)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini --output= --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "option --output was given an empty folder name"), "%s",
                       r.err);
}

Test(cli, an_output_folder_given_twice_is_refused)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -o a -o b --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "option -o is given twice ('a' and 'b')"), "%s", r.err);
}

Test(cli, an_option_looking_output_folder_is_refused)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -o -q --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "'-q' looks like an option"), "%s", r.err);
}

/* The general help names the options every command takes; a command's
   own are in its help (test_help.c). */
Test(cli, help_lists_the_options_of_every_command)
{
    result r = kb("--help");
    const char *names[] = {"--plugin-path P", "-h, --help", "-V, --version"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        cr_assert_not_null(strstr(r.out, names[i]), "no '%s' in: %s", names[i], r.out);
    result run = kb("run --help");
    const char *of_run[] = {"-n, --dry-run", "-o, --output DIR", "-q, --quiet"};
    for (size_t i = 0; i < sizeof of_run / sizeof *of_run; i++)
        cr_assert_not_null(strstr(run.out, of_run[i]), "no '%s' in: %s", of_run[i], run.out);
}

Test(cli, short_and_long_options_mean_the_same)
{
    write_file("p.ini", failing_ini);
    result a = kb("run -n p.ini --plugin-path " TOY_DIR);
    result b = kb("run --dry-run p.ini --plugin-path=" TOY_DIR);
    cr_assert_eq(a.code, 0, "%s", a.err);
    cr_assert_eq(b.code, 0, "%s", b.err);
    cr_assert_str_eq(a.out, b.out);
}

/* Runs `kbench ARGS` with stdout on /dev/full; returns the exit code and
   stderr. */
static result kb_full(const char *args)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "cd '%s' && KBENCH_PLUGIN_PATH= '%s' %s >/dev/full 2>err.txt",
                          tmp, KBENCH, args),
                 0);
    int st = system(cmd);
    free(cmd);
    cr_assert(WIFEXITED(st), "kbench did not exit normally (status %d)", st);
    result r = {.code = WEXITSTATUS(st), .out = keep(strdup(""))};
    char path[512];
    snprintf(path, sizeof path, "%s/err.txt", tmp);
    r.err = keep(slurp(path));
    return r;
}

static void fails_on_a_full_device(const char *args)
{
    result r = kb_full(args);
    cr_assert_eq(r.code, 3, "exit %d, stderr: %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "kbench: cannot write to standard output"), "%s", r.err);
}

Test(cli, list_to_a_full_device_exits_three)
{
    fails_on_a_full_device("list --plugin-path " TOY_DIR);
}

Test(cli, describe_to_a_full_device_exits_three)
{
    fails_on_a_full_device("describe toy --plugin-path " TOY_DIR);
}

Test(cli, run_to_a_full_device_exits_three)
{
    write_file("p.ini", passing_ini);
    fails_on_a_full_device("run p.ini -q --plugin-path " TOY_DIR);
}

Test(cli, dry_run_to_a_full_device_exits_three)
{
    write_file("p.ini", passing_ini);
    fails_on_a_full_device("run --dry-run p.ini --plugin-path " TOY_DIR);
}

Test(cli, help_to_a_full_device_exits_three)
{
    fails_on_a_full_device("--help");
}

/* A device is refused before a byte is read (base/input.c); a regular
   file that is not text, at its first NUL byte. */
Test(cli, a_file_that_is_not_text_is_refused_at_once)
{
    result r = kb("run --dry-run /dev/zero");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "/dev/zero: cannot be opened (it is a device, not a "
                                     "regular file)."),
                       "%s", r.err);
    char path[512];
    snprintf(path, sizeof path, "%s/z.ini", tmp);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    static const char zeros[64];
    cr_assert_eq(fwrite(zeros, 1, sizeof zeros, f), sizeof zeros);
    fclose(f);
    r = kb("run --dry-run z.ini");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "z.ini:1: column 1: a NUL byte"), "%s", r.err);
}

Test(cli, a_plugin_path_folder_without_plugins_is_named)
{
    write_file("p.ini", "[global]\nplugin_path = .\n[x]\nplugin = toy\nn = 1K\n");
    result r = kb("run --dry-run p.ini --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench: warning: p.ini:2: key 'plugin_path' in [global]: "
                                     "the folder '.' holds no plugin"),
                       "%s", r.err);
}

Test(cli, a_command_line_plugin_folder_without_plugins_is_named)
{
    result r = kb("list --plugin-path . --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench: warning: --plugin-path: the folder '.' holds no "
                                     "plugin"),
                       "%s", r.err);
    cr_assert_not_null(strstr(r.out, "toy"), "%s", r.out);
}

Test(cli, missing_file_is_named)
{
    result r = kb("run no-such-file.ini");
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "kbench: "), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "no-such-file.ini"), "%s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
}

Test(cli, a_config_error_exits_two_naming_the_file)
{
    write_file("bad.ini", "[x]\nplugin = toy\nnn = 5\n");
    result r = kb("run bad.ini --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "kbench: bad.ini:3"), "%s", r.err);
}

Test(cli, list_and_describe_see_plugin_path_anywhere)
{
    result r = kb("--plugin-path " TOY_DIR " list");
    cr_assert_eq(r.code, 0);
    cr_assert_not_null(strstr(r.out, "toy"), "%s", r.out);
    r = kb("describe toy --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0);
    cr_assert_not_null(strstr(r.out, "slow_repeat"), "%s", r.out);
    r = kb("describe nosuch --plugin-path " TOY_DIR);
    cr_assert_neq(r.code, 0);
    r = kb("list --plugin-path /no/such/folder");
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "/no/such/folder"), "%s", r.err);
}

Test(cli, dry_run_prints_the_plan_and_runs_nothing)
{
    write_file("p.ini", failing_ini);
    result r = kb("run --dry-run p.ini --plugin-path " TOY_DIR " -o out");
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "fails"), "%s", r.out);
    /* Nothing ran, so nothing failed, and no report was written. */
    cr_assert_null(strstr(r.out, "FAIL"), "%s", r.out);
    struct stat st;
    char path[512];
    snprintf(path, sizeof path, "%s/out", tmp);
    cr_assert_neq(stat(path, &st), 0, "a dry run created the output folder");
}

Test(cli, run_writes_csv_and_json_into_a_new_folder)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -o out/deeper --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "pass"), "%s", r.out);
    char path[512];
    snprintf(path, sizeof path, "%s/out/deeper/results.csv", tmp);
    char *csv = slurp(path);
    /* A header, then 2 points x 3 variants. */
    cr_assert_eq(count_lines(csv), 1 + 6, "%s", csv);
    /* The gpu variant runs where there is a GPU and is skipped elsewhere. */
    kbc_machine m;
    kbc_gpu_probe(&m);
    if (m.has_gpu)
        cr_assert_null(strstr(csv, "skipped"), "%s", csv);
    else
        cr_assert_not_null(strstr(csv, "skipped"), "the gpu variant is skipped here: %s", csv);
    free(csv);
    snprintf(path, sizeof path, "%s/out/deeper/results.json", tmp);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    cr_assert_not_null(doc, "results.json does not parse: %s", je.text);
    cr_assert(json_is_object(doc));
    json_decref(doc);
}

Test(cli, run_json_keeps_every_timed_sample_of_a_row)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q -o out --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    char path[512];
    snprintf(path, sizeof path, "%s/out/results.json", tmp);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    cr_assert_not_null(doc, "results.json does not parse: %s", je.text);
    /* The first row is toy's good variant, which ran its 3 timed runs. */
    json_t *row = json_array_get(json_object_get(doc, "results"), 0);
    json_t *samples = json_object_get(row, "samples_s");
    cr_assert_eq(json_array_size(samples), 3, "runs = 3 gives 3 samples");
    cr_assert(json_is_real(json_array_get(samples, 0)));
    json_decref(doc);
}

/* The dry run's estimate is the last run's of the same plan when -o DIR
   holds one; another plan (here other runs) gets the model. */
Test(cli, the_dry_run_takes_its_estimate_from_the_last_run_of_the_plan)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q -o out --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    r = kb("run p.ini --dry-run -o out --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "as the last run of this plan took (out/results.json)"),
                       "%s", r.out);
    r = kb("run p.ini --dry-run -o out --set runs=4 --plugin-path " TOY_DIR);
    cr_assert_null(strstr(r.out, "the last run"), "another plan: %s", r.out);
    cr_assert_not_null(strstr(r.out, "(a model:"), "%s", r.out);
}

/* results.json's machine says what a CPU row's noise may come from: the
   host's load as the run started and ended, and the run's own CPU time. */
Test(cli, run_json_records_the_hosts_load_and_the_runs_cpu_time)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q -o out --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    char path[512];
    snprintf(path, sizeof path, "%s/out/results.json", tmp);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    cr_assert_not_null(doc, "results.json does not parse: %s", je.text);
    json_t *cpu = json_object_get(json_object_get(doc, "machine"), "cpu");
    cr_assert(json_is_object(cpu), "machine.cpu");
    cr_assert(json_is_number(json_object_get(cpu, "load_before")));
    cr_assert(json_is_number(json_object_get(cpu, "load_after")));
    json_t *cpu_s = json_object_get(cpu, "cpu_seconds");
    json_t *wall = json_object_get(cpu, "wall_seconds");
    cr_assert(json_is_number(cpu_s) && json_is_number(wall));
    cr_assert_gt(json_number_value(cpu_s), 0, "the workers' CPU time counts");
    cr_assert_gt(json_number_value(wall), 0);
    json_t *model = json_object_get(cpu, "model");
    cr_assert(json_is_string(model) || json_is_null(model));
    json_decref(doc);
}

/* energy = on reaches each row (exec/point.c): a CPU row says why it has
   no joules, in results.json and results.csv. */
Test(cli, run_with_energy_on_says_why_a_cpu_row_has_none)
{
    write_file("e.ini", "[global]\nruns = 3\nenergy = on\n[e]\nplugin = toy\n"
                        "variants = good\nn = 1K\n");
    result r = kb("run e.ini -q -o out --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    char path[512];
    snprintf(path, sizeof path, "%s/out/results.json", tmp);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    cr_assert_not_null(doc, "results.json does not parse: %s", je.text);
    json_t *en = json_object_get(json_array_get(json_object_get(doc, "results"), 0), "energy");
    cr_assert_str_eq(json_string_value(json_object_get(en, "requested")), "on");
    cr_assert_str_eq(json_string_value(json_object_get(en, "status")), "cpu_variant");
    cr_assert_not_null(strstr(json_string_value(json_object_get(en, "why")), "a CPU variant"));
    cr_assert(json_is_null(json_object_get(en, "j_per_run")));
    json_decref(doc);
    snprintf(path, sizeof path, "%s/out/results.csv", tmp);
    char *csv = slurp(path);
    cr_assert_not_null(strstr(csv, ",cpu_variant,a CPU variant"), "%s", csv);
    free(csv);
}

Test(cli, run_output_folder_gets_a_markdown_report)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q -o out --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    char path[512];
    snprintf(path, sizeof path, "%s/out/results.md", tmp);
    char *md = keep(slurp(path));
    cr_assert_not_null(strstr(md, "command: `"), "%s", md);
    cr_assert_not_null(strstr(md, "run p.ini -q -o out"), "the command line is there: %s", md);
    cr_assert_not_null(strstr(md, "\nmachine: "), "%s", md);
    cr_assert_not_null(strstr(md, "\n| variant | backend | status | median |"), "%s", md);
    cr_assert_not_null(strstr(md, "\n| good | cpu | pass | "), "%s", md);
    cr_assert_not_null(strstr(md, "\nsummary: "), "%s", md);
}

Test(cli, run_with_a_baseline_shows_each_rows_change)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q -o old --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    r = kb("run p.ini -q --baseline old/results.json --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, " vs old\n"), "%s", r.out);
    /* The good row has a change in percent, and a verdict word after it. */
    char *good = strstr(r.out, "\n  good ");
    cr_assert_not_null(good, "%s", r.out);
    char *eol = strchr(good + 1, '\n');
    cr_assert_not_null(eol);
    *eol = '\0';
    cr_assert_not_null(strstr(good, "% "), "%s", good);
}

Test(cli, results_md_with_a_baseline_has_verdict_and_significance_columns)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q -o old --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    r = kb("run p.ini -q -o now --baseline old/results.json --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    char path[512];
    snprintf(path, sizeof path, "%s/now/results.md", tmp);
    char *md = keep(slurp(path));
    cr_assert_not_null(strstr(md, "| vs old | verdict | significant | check |"), "%s", md);
    /* The good row: a change in percent, then a verdict word, then yes or no. */
    char *good = strstr(md, "\n| good | cpu | pass | ");
    cr_assert_not_null(good, "%s", md);
    char *eol = strchr(good + 1, '\n');
    cr_assert_not_null(eol);
    *eol = '\0';
    cr_assert(strstr(good, "% | no change | ") || strstr(good, "% | slower | ") ||
                  strstr(good, "% | faster | ") || strstr(good, "% | noisy | "),
              "%s", good);
    cr_assert(strstr(good, " | yes | ") || strstr(good, " | no | "), "%s", good);
}

/* ---- the table's width ---- */

/* The longest line of text. */
static size_t widest_line(const char *t)
{
    size_t w = 0;
    while (*t) {
        size_t l = strcspn(t, "\n");
        if (l > w)
            w = l;
        t += l + (t[l] == '\n');
    }
    return w;
}

Test(cli, the_default_table_leaves_min_max_noise_and_check_to_wide)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    /* The column titles (a noisy row's note may still say "noise"). */
    const char *head = strstr(r.out, "\n  variant ");
    cr_assert_not_null(head, "%s", r.out);
    char *titles = strndup(head + 1, strcspn(head + 1, "\n"));
    cr_assert_not_null(strstr(titles, " median "), "%s", titles);
    cr_assert_null(strstr(titles, " min "), "%s", titles);
    cr_assert_null(strstr(titles, " noise "), "%s", titles);
    cr_assert_null(strstr(titles, "check"), "%s", titles);
    free(titles);
    r = kb("run p.ini -q --wide --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, " min "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, " noise "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "  check\n"), "%s", r.out);
}

Test(cli, the_default_table_fits_120_columns)
{
    /* Every optional column a CPU run can show (vs cpu, vs ref, GFLOP/s)
       and a 19-character variant name would not change this: the test
       fixes the rule on what runs here. */
    write_file("w.ini", "[global]\nruns = 3\n[wide-experiment-name]\nplugin = toy\n"
                        "variants = good, slow, gpu\nreference = slow\nn = 1K\n");
    result r = kb("run w.ini -q --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    const char *table = strstr(r.out, "\nwide-experiment-name");
    cr_assert_not_null(table, "%s", r.out);
    /* From the point's heading to the summary (the machine line and the
       summary's skip line quote the CUDA runtime's own words). */
    char *part = strdup(table);
    char *end = strstr(part, "\nsummary: ");
    cr_assert_not_null(end, "%s", r.out);
    *end = '\0';
    cr_assert_leq(widest_line(part), 120, "%s", r.out);
    free(part);
}

/* ---- include = FILE ---- */

Test(cli, a_bad_value_in_an_included_file_names_that_file_and_line)
{
    write_file("common.ini", "warmup = 1\nn = 12Q\n");
    write_file("main.ini", "[global]\nruns = 3\ninclude = common.ini\n[a]\nplugin = toy\n");
    result r = kb("run main.ini --dry-run --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench: common.ini:2: key 'n' in [global] (inherited by "
                                     "[a]): '12Q' is not a size"),
                       "%s", r.err);
}

Test(cli, an_included_files_keys_run)
{
    write_file("common.ini", "warmup = 1\nn = 1K, 2K\n");
    write_file("main.ini", "[global]\nruns = 3\ninclude = common.ini\n[a]\nplugin = toy\n"
                           "variants = good\n");
    result r = kb("run main.ini -q --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "a  point 2/2  n=2048"), "%s", r.out);
}

/* ---- a run without a file ---- */

Test(cli, a_quick_run_takes_the_plugin_and_keys_from_the_command_line)
{
    result r = kb("run toy n=2^12 variants=good,slow runs=3 -q --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "toy  point 1/1  n=4096 (2^12)"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "\n  good "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "\n  slow "), "%s", r.out);
    cr_assert_null(strstr(r.out, "\n  wrong "), "only the variants asked for: %s", r.out);
}

Test(cli, a_quick_runs_bad_value_is_named_by_its_argument)
{
    result r = kb("run toy n=2^40 --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench: argument 'n=2^40': key 'n' in [toy]: "), "%s",
                       r.err);
    cr_assert_null(strstr(r.err, ".ini"), "no file is named: %s", r.err);
}

Test(cli, a_quick_run_argument_without_a_value_exits_two)
{
    result r = kb("run toy n --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "argument 'n' is not KEY=VALUE"), "%s", r.err);
}

Test(cli, a_quick_run_of_an_unknown_plugin_names_it)
{
    result r = kb("run toyy n=1 --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "plugin 'toyy': "), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "did you mean 'toy'?"), "%s", r.err);
}

Test(cli, a_quick_run_leaves_no_file_behind)
{
    char dir[600], cmd[900];
    snprintf(dir, sizeof dir, "%s/quicktmp", tmp);
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(cmd, sizeof cmd, "run toy n=1K variants=good runs=2 -q --plugin-path %s", TOY_DIR);
    setenv("TMPDIR", dir, 1);
    result r = kb(cmd);
    unsetenv("TMPDIR");
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    snprintf(cmd, sizeof cmd, "rmdir '%s'", dir);
    cr_assert_eq(system(cmd), 0, "the temporary INI file is left in %s", dir);
}

/* ";n=4" was written as a line of the file, a comment, and dropped
   without a word: the run went on with n's default. */
Test(cli, a_quick_run_argument_that_is_a_comment_is_refused)
{
    result r = kb("run toy ';n=4' variants=good --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench: argument ';n=4' is not KEY=VALUE: a key is made "
                                     "of letters, digits"),
                       "%s", r.err);
}

/* The INI file is written to $TMPDIR, but an include names a file where
   the user is: it resolved against $TMPDIR. */
Test(cli, a_quick_runs_include_is_found_in_the_current_folder)
{
    char dir[600], cmd[900];
    snprintf(dir, sizeof dir, "%s/elsewhere", tmp);
    cr_assert_eq(mkdir(dir, 0700), 0);
    write_file("sizes.ini", "n = 3K\n");
    setenv("TMPDIR", dir, 1);
    snprintf(cmd, sizeof cmd, "run toy include=sizes.ini variants=good runs=2 -q --plugin-path %s",
             TOY_DIR);
    result r = kb(cmd);
    unsetenv("TMPDIR");
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "n=3072"), "%s", r.out);
}

/* A temporary file that cannot be written is the system's failure (exit
   3), not a mistake on the command line: no "see kbench --help". */
Test(cli, a_quick_run_whose_file_cannot_be_written_exits_three)
{
    setenv("TMPDIR", "/nonexistent-kbench-folder", 1);
    result r = kb("run toy n=1K variants=good --plugin-path " TOY_DIR);
    unsetenv("TMPDIR");
    cr_assert_eq(r.code, 3, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "cannot write the INI file /nonexistent-kbench-folder/"),
                       "%s", r.err);
    cr_assert_null(strstr(r.err, "--help"), "%s", r.err);
}

/* A line break typed into an argument is shown escaped: the message stays
   one line. */
Test(cli, a_line_break_in_a_quick_run_argument_is_shown_escaped)
{
    result r = kb("run toy \"$(printf 'n=1\\nx')\" --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "argument 'n=1\\nx' holds a line break"), "%s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
}

/* What the user typed is quoted in the sentence: a line break in it is
   shown escaped (kbc_diag_set, kbc_say), so the sentence stays one line
   whichever part of kbench wrote it. */
Test(cli, a_line_break_typed_anywhere_is_shown_escaped)
{
    static const char *const cases[][2] = {
        {"compare \"$(printf 'a\\nb')\" x.json", "a\\nb: cannot read the results"},
        {"run x.ini --set \"$(printf 'n=a\\nb')\" -n", "'a\\nb' is not a size"},
        {"run x.ini --isolate \"$(printf 'a\\nb')\"", "wants point, not 'a\\nb'"},
        {"merge \"$(printf 'a\\nb')\" -o out", "cannot read a\\nb"},
        {"describe \"$(printf 'a\\nb')\"", "no plugin named 'a\\nb'"},
    };
    write_file("x.ini", "[x]\nplugin = toy\n");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "%s --plugin-path %s", cases[i][0], TOY_DIR);
        result r = kb(cmd);
        cr_assert_neq(r.code, 0, "%s", cases[i][0]);
        cr_assert_not_null(strstr(r.err, cases[i][1]), "%s: %s", cases[i][0], r.err);
        cr_assert_eq(count_lines(r.err), 1, "%s: %s", cases[i][0], r.err);
    }
}

/* A journal that is a FIFO: --resume waited for a writer for ever. */
Test(cli, resume_from_a_fifo_journal_is_refused_at_once, .timeout = 30)
{
    write_file("x.ini", "[x]\nplugin = toy\nvariants = good\n");
    char path[512];
    snprintf(path, sizeof path, "%s/out", tmp);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/out/journal.jsonl", tmp);
    cr_assert_eq(mkfifo(path, 0600), 0);
    result r = kb("run x.ini -o out --resume --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "--resume: cannot read out/journal.jsonl: it is a named "
                                     "pipe, not a regular file"),
                       "%s", r.err);
}

/* An include that is a FIFO: the INI reader waited for ever. */
Test(cli, an_include_that_is_a_fifo_is_refused_at_once, .timeout = 30)
{
    write_file("x.ini", "[x]\nplugin = toy\ninclude = more.ini\n");
    char path[512];
    snprintf(path, sizeof path, "%s/more.ini", tmp);
    cr_assert_eq(mkfifo(path, 0600), 0);
    result r = kb("run x.ini -n --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "x.ini:3: include = more.ini: "), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "it is a named pipe, not a regular file"), "%s", r.err);
}

Test(cli, a_file_that_does_not_exist_is_still_named_as_a_file)
{
    result r = kb("run nothere.ini --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "nothere.ini: cannot be opened"), "%s", r.err);
}

Test(cli, describe_wraps_long_text_at_120_columns)
{
    result r = kb("describe toy --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    cr_assert_leq(widest_line(r.out), 120, "%s", r.out);
    /* The wrapped words are all there, the rest under the help column. */
    cr_assert_not_null(strstr(r.out, "microseconds every computing run sleeps"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "as long as the text)\n"), "%s", r.out);
}

Test(cli, skipped_cuda_rows_fold_into_one_line_per_experiment)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    if (!strstr(r.out, "no GPU"))
        cr_skip_test("a GPU is present: nothing is skipped");
    const char *fold = strstr(r.out, "\n  CUDA variants skipped: gpu: no CUDA driver\n");
    cr_assert_not_null(fold, "%s", r.out);
    cr_assert_null(strstr(fold + 10, "CUDA variants skipped"), "once per experiment: %s", r.out);
    cr_assert_null(strstr(r.out, "\n  gpu "), "no row of its own: %s", r.out);
}

Test(cli, a_failed_check_gets_a_line_in_the_default_table)
{
    write_file("f.ini", failing_ini);
    result r = kb("run f.ini -q --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 1, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "  check: "), "%s", r.out);
}

Test(cli, a_row_missing_from_the_baseline_says_new)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q -o old --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    write_file("q.ini", "[global]\nruns = 3\n[other]\nplugin = toy\nvariants = good\nn = 1K\n");
    r = kb("run q.ini -q --baseline old/results.json --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, " new\n"), "%s", r.out);
}

Test(cli, an_unreadable_baseline_exits_two_before_running)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q --baseline nothere.json --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "nothere.json"), "%s", r.err);
    cr_assert_null(strstr(r.out, "summary:"), "nothing ran: %s", r.out);
}

Test(cli, run_with_plot_links_the_plots_from_results_md)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q -o out --plot --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 0, "stderr: %s", r.err);
    char path[512];
    snprintf(path, sizeof path, "%s/out/pass.gp", tmp);
    cr_assert_eq(access(path, R_OK), 0, "no %s: %s", path, r.out);
    snprintf(path, sizeof path, "%s/out/results.md", tmp);
    char *md = keep(slurp(path));
    cr_assert_not_null(strstr(md, "\n## Plots\n"), "%s", md);
    cr_assert_not_null(strstr(md, "pass"), "%s", md);
}

Test(cli, plot_without_an_output_folder_exits_two)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -q --plot --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "--plot needs -o"), "%s", r.err);
}

Test(cli, a_failing_variant_exits_one)
{
    write_file("f.ini", failing_ini);
    result r = kb("run f.ini -q --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 1, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "FAIL"), "%s", r.out);
}

Test(cli, an_output_folder_that_cannot_be_made_exits_three)
{
    write_file("p.ini", passing_ini);
    write_file("plain", "a file, not a folder\n");
    result r = kb("run p.ini -o plain/out --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 3, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.err, "plain/out"), "%s", r.err);
}

/* ---- every option belongs to its commands ---- */

/* An option of another command given to run is refused before anything
   is read (x.ini does not exist: a run that went on would name it). */
static void run_refuses(const char *option, const char *owner)
{
    char args[256];
    snprintf(args, sizeof args, "run x.ini %s", option);
    result r = kb(args);
    cr_assert_eq(r.code, 2, "%s: exit %d, %s", option, r.code, r.err);
    char want[128];
    snprintf(want, sizeof want, "applies only to kbench %s", owner);
    cr_assert_not_null(strstr(r.err, want), "%s: %s", option, r.err);
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
}

Test(cli, run_refuses_threshold)
{
    run_refuses("--threshold 5", "compare");
}

Test(cli, run_refuses_alpha)
{
    run_refuses("--alpha=0.1", "compare");
}

Test(cli, run_refuses_format)
{
    run_refuses("--format json", "compare");
}

/* --variants belongs to check and run (it narrows a run); another
   command refuses it. */
Test(cli, plot_refuses_variants)
{
    result r = kb("plot x.json --variants a,b");
    cr_assert_eq(r.code, 2, "exit %d, %s", r.code, r.err);
    cr_assert_not_null(strstr(r.err, "applies only to kbench check and kbench run"), "%s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
}

/* Each option is remembered once however often it is given, so that many
   flags before it cannot push it out of the check. */
Test(cli, an_option_of_another_command_is_refused_after_many_flags)
{
    run_refuses("-q -q -q -q -q -q -q -q -q -q -q -q -q -q -q -q -q -q -q -q -n -n -n -n "
                "--threshold 5",
                "compare");
}

Test(cli, options_of_another_command_before_it_are_refused_too)
{
    result r = kb("-q -q -q -q -q -q -q -q -q -q -q -q -q -q -q -q -q --alpha 0.1 run x.ini");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "option --alpha applies only to kbench compare"), "%s",
                       r.err);
}

/* ---- empty names ---- */

Test(cli, run_with_an_empty_file_name_says_so)
{
    result r = kb("run ''");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_str_eq(r.err, "kbench: kbench run was given an empty file name; see kbench "
                            "--help.\n");
}

Test(cli, describe_with_an_empty_plugin_name_says_so)
{
    result r = kb("describe ''");
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench describe was given an empty plugin name"), "%s",
                       r.err);
}

#define CHECK_FIX " --plugin-path " KBENCH_FIXTURE_DIR "/check"

Test(cli, check_refuses_an_empty_variant_between_commas)
{
    result r = kb("check checkfix_chatty --variants plain,,unrolled" CHECK_FIX);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "--variants 'plain,,unrolled' holds an empty variant name"),
                       "%s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
    cr_assert_str_eq(r.out, "", "nothing is checked: %s", r.out);
}

Test(cli, check_refuses_an_empty_variant_at_the_end)
{
    result r = kb("check checkfix_chatty --variants plain," CHECK_FIX);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "holds an empty variant name"), "%s", r.err);
}

/* ---- check's output and its plugin's lines ---- */

Test(cli, check_to_a_full_device_says_one_sentence)
{
    result r = kb_full("check checkfix_good" CHECK_FIX);
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench: cannot write to standard output"), "%s", r.err);
}

/* The plugin's lines name it once: "kbench: checkfix_chatty: plain: ...". */
Test(cli, check_names_the_plugin_once_in_its_log_lines)
{
    result r = kb("check checkfix_chatty" CHECK_FIX);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "kbench: checkfix_chatty: plain: abs error 0"), "%s",
                       r.err);
    cr_assert_null(strstr(r.err, "checkfix_chatty: checkfix_chatty"), "%s", r.err);
}

/* verify-can-fail and prepare-poisons make verify fail on purpose; what
   the plugin logs about those failures is not shown. */
Test(cli, check_is_quiet_about_the_failures_it_provokes)
{
    result r = kb("check checkfix_chatty" CHECK_FIX);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_gt(count_lines(r.err), 0, "the correct runs' lines are shown");
    for (const char *l = r.err; *l; l = strchr(l, '\n') + 1) {
        cr_assert_not_null(strstr(l, "abs error 0 over"), "a provoked failure's line: %.*s",
                           (int)(strchr(l, '\n') - l), l);
        if (!strchr(l, '\n'))
            break;
    }
}

/* ---- advice for mistakes of form on the command line and in sections ---- */

Test(cli, a_parameter_written_as_an_option_is_named)
{
    result r = kb("run toy --n=2^20 --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "parameters are written KEY=VALUE"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "n=..."), "%s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "one sentence: %s", r.err);
}

Test(cli, an_ini_file_given_to_o_is_named_and_not_made)
{
    write_file("p.ini", passing_ini);
    result r = kb("run p.ini -o p2.ini --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "-o took 'p2.ini' as its output folder"), "%s", r.err);
    char path[300];
    snprintf(path, sizeof path, "%s/p2.ini", tmp);
    cr_assert_neq(access(path, F_OK), 0, "p2.ini was made");
}

Test(cli, a_misspelt_global_section_is_named)
{
    write_file("g.ini", "[globl]\nruns = 3\n[pass]\nplugin = toy\nn = 1K\n");
    result r = kb("run g.ini --dry-run --plugin-path " TOY_DIR);
    cr_assert_eq(r.code, 2);
    cr_assert_not_null(strstr(r.err, "g.ini:1: section [globl]"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "did you mean [global]?"), "%s", r.err);
}
