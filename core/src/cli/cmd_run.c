/*
 * cmd_run.c -- `kbench run FILE` and `kbench run PLUGIN KEY=VALUE ...`.
 *
 * A run goes through five steps, each a function below, in this order:
 *   1. the options that shape how it runs, checked before anything is read
 *      (run_options);
 *   2. the plan: the INI file read and narrowed, the GPUs picked, every
 *      point planned (build_plan); a dry run prints it and stops here;
 *   3. the outputs: the baseline read, the output folder checked, the
 *      journal and the reports opened, the workers' binary found
 *      (open_outputs);
 *   4. the workers, supervised over the plan (supervise);
 *   5. what follows a finished run: the plots and the history (finish).
 * What the steps make lives in one run_state, freed by run_free(), so
 * that a step that fails only returns its exit code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "earlier_run.h"
#include "costs.h"
#include "ini.h"
#include "journal.h"
#include "report.h"
#include "results_read.h"
#include "shard.h"
#include "supervisor.h"
#include "text.h"

/* What a run has made so far. */
typedef struct run_state {
    const kbc_cli *c;
    const char *path;           /* the INI file                        */
    kbc_registry reg;
    kbc_ini ini;
    int have_ini;
    kbc_plan plan;
    int have_plan;
    kbc_super_opts so;          /* the supervisor's options            */
    char sanitizer[4096];       /* --sanitize: the compute-sanitizer   */
    kbc_gpu_pick *picks;        /* --gpus, or [global] gpus            */
    size_t n_picks;
    unsigned long long min_mem; /* the smallest memory of those GPUs   */
    kbc_record *base;           /* --baseline                          */
    size_t n_base;
    kbc_journal journal;
    int have_journal;
    kbc_costs costs;            /* --costs                             */
    int have_costs;
    FILE *timeline;             /* --timeline                          */
    kbc_sink sinks[4];          /* the table, then CSV, JSON, markdown */
    size_t n_sinks;
    char self[4096];            /* the kbench binary the workers run   */
} run_state;

/* ---- 1. options -------------------------------------------------------- */

/* --shard and --shards into o.  Returns 0, or an exit code after saying
   why. */
static int shard_options(const kbc_cli *c, kbc_super_opts *o)
{
    int hint = 0;
    if (c->shards) {
        char *end;
        errno = 0;
        long v = strtol(c->shards, &end, 10);
        if (errno || *end || v < 1 || v > 1000000) {
            kbc_say(1, "option --shards wants a count of at least 1, not '%s'", c->shards);
            return KBC_EXIT_USAGE;
        }
        if (!c->shard || strcmp(c->shard, "auto") != 0) {
            kbc_say(1, "option --shards goes with --shard auto (with --shard i/N the count is N)");
            return KBC_EXIT_USAGE;
        }
        hint = (int)v;
    }
    if (c->shard) {
        char why[600];
        if (kbc_shard_parse(c->shard, hint, &o->shard_index, &o->shard_count, why,
                            sizeof why) != 0) {
            kbc_say(1, "%s", why);
            return KBC_EXIT_USAGE;
        }
        if (!c->out_dir && !c->dry_run) {
            kbc_say(1, "option --shard needs -o DIR: a shard's results are merged from its "
                       "folder (kbench merge)");
            return KBC_EXIT_USAGE;
        }
    }
    return 0;
}

/* --sanitize TOOL: a tool compute-sanitizer has, and compute-sanitizer
   itself, found before anything is read or run (a dry run runs nothing
   and needs none).  Returns 0, or an exit code after saying why. */
static int sanitize_option(const kbc_cli *c, kbc_super_opts *o, char *path, size_t n)
{
    if (!c->sanitize)
        return 0;
    if (!kbc_sanitize_tool_ok(c->sanitize)) {
        kbc_say(1, "option --sanitize wants one of compute-sanitizer's tools, %s, not '%s'",
                KBC_SANITIZE_TOOLS, c->sanitize);
        return KBC_EXIT_USAGE;
    }
    if (c->sanitize_on_crash) {
        kbc_say(1, "options --sanitize and --sanitize-on-crash go apart: under --sanitize every "
                   "row, a crashed one too, already carries the sanitizer's report");
        return KBC_EXIT_USAGE;
    }
    o->sanitize_tool = c->sanitize;
    if (c->dry_run)
        return 0;
    char why[1200];
    if (kbc_sanitizer_find(path, n, why, sizeof why) != 0) {
        kbc_say(0, "%s", why);
        return KBC_EXIT_USAGE;
    }
    o->sanitizer = path;
    return 0;
}

/* The options of kbench run that shape how it runs (not what): checked
   before the INI file is read.  Returns 0, or an exit code after saying
   why. */
static int run_options(const kbc_cli *c, kbc_super_opts *o)
{
    if (c->plot && !c->out_dir) {
        kbc_say(1, "option --plot needs -o DIR, the folder the plots go to");
        return KBC_EXIT_USAGE;
    }
    if (c->resume && !c->out_dir) {
        kbc_say(1, "option --resume needs -o DIR, the folder of the run to resume");
        return KBC_EXIT_USAGE;
    }
    if (c->resume && c->force) {
        kbc_say(1, "options --resume and --force contradict each other (finish the run in "
                   "DIR, or start it afresh)");
        return KBC_EXIT_USAGE;
    }
    if (c->isolate && strcmp(c->isolate, "point") != 0) {
        kbc_say(1, "option --isolate wants point, not '%s'", c->isolate);
        return KBC_EXIT_USAGE;
    }
    o->isolate_point = c->isolate != NULL;
    if (c->record && !c->out_dir) {
        kbc_say(1, "option --record needs -o DIR: the history takes the run from "
                   "DIR/results.json");
        return KBC_EXIT_USAGE;
    }
    int costs_history = c->costs && strcmp(c->costs, "history") == 0;
    if ((c->history.commit && !c->record) || (c->history.db && !c->record && !costs_history)) {
        kbc_say(1, "options --commit and --history go with --record in kbench run (and "
                   "--history with --costs history)");
        return KBC_EXIT_USAGE;
    }
    return shard_options(c, o);
}

/* ---- 2. the plan ------------------------------------------------------- */

/* The GPUs of --gpus, else of [global] gpus, into r->picks.  The
   supervisor never touches CUDA: the GPUs come from NVML, and their size
   lets the plan refuse a point too big for them before anything runs.  A
   dry run asks nothing of the machine.  Returns 0, or an exit code after
   saying why. */
static int pick_gpus(run_state *r)
{
    const kbc_cli *c = r->c;
    const char *gpus = c->gpus;
    const kbc_entry *gpus_key = NULL;
    if (!gpus) {
        const kbc_section *g = kbc_ini_section(&r->ini, "global");
        gpus_key = g ? kbc_section_get(g, "gpus") : NULL;
        gpus = gpus_key ? gpus_key->value : NULL;
    }
    char why[sizeof ((kbc_diag *)0)->msg];
    if (!gpus || c->dry_run ||
        kbc_gpus_pick(gpus, c->allow_mixed, c->allow_shared, &r->picks, &r->n_picks,
                      &r->min_mem, why, sizeof why) == 0)
        return 0;
    if (gpus_key) {
        char at[1100];
        kbc_say(0, "%s: key 'gpus' in [global]: %s",
                kbc_ini_where(&r->ini, gpus_key->file, gpus_key->line, at, sizeof at), why);
    } else {
        kbc_say(1, "%s", why);
    }
    return KBC_EXIT_USAGE;
}

/* --costs: the seconds an earlier run took at each point (costs.h), for
   the shards and the order points are handed out in.  Returns 0, or an
   exit code after saying why. */
static int load_costs(run_state *r)
{
    const kbc_cli *c = r->c;
    if (!c->costs)
        return 0;
    kbc_diag d = {{0}};
    int code = kbc_costs_load(&r->plan, c->costs, c->history.db, &r->costs, &d);
    if (code) {
        kbc_say(0, "%s", d.msg);
        return code;
    }
    r->have_costs = 1;
    r->so.costs = &r->costs;
    size_t n;
    free(kbc_plan_jobs(&r->plan, &n));
    if (!c->quiet)
        fprintf(stderr, "kbench: --costs: %zu of %zu points measured by %s%s\n",
                r->costs.measured, n, c->costs,
                r->costs.measured == n ? ""
                : r->costs.measured     ? "; the others priced by the model, scaled to them"
                                        : "; none matches this plan, so the model prices them");
    return 0;
}

/* The INI file read and narrowed by --experiment, --set and --variants,
   the GPUs picked, and every point planned.  Returns 0, or an exit code
   after saying why. */
static int build_plan(run_state *r)
{
    const kbc_cli *c = r->c;
    kbc_diag d = {{0}};
    if (kbc_ini_load(r->path, &r->ini, &d) != 0) {
        kbc_say(0, "%s", d.msg);
        return KBC_EXIT_USAGE;
    }
    r->have_ini = 1;
    if (kbc_ini_narrow(&r->ini, c->experiment, c->sets, (size_t)c->n_sets, c->variants, &d) !=
        0) {
        kbc_say(1, "%s", d.msg);
        return KBC_EXIT_USAGE;
    }
    int code = pick_gpus(r);
    if (code)
        return code;
    if (kbc_plan_build(&r->ini, &r->reg, r->min_mem, &r->plan, &d) != 0) {
        kbc_registry_print_refused(&r->reg, stderr);
        kbc_say(0, "%s", d.msg);
        return KBC_EXIT_USAGE;
    }
    r->have_plan = 1;
    kbc_registry_print_refused(&r->reg, stderr);
    kbc_plan_notes(&r->plan, stderr);
    return load_costs(r);
}

/* The dry run of a shard: which of the plan's points are its own, and
   how the expected cost splits. */
static void print_shards(const kbc_plan *plan, const kbc_super_opts *o, FILE *out)
{
    size_t n;
    kbc_job *jobs = kbc_plan_jobs(plan, &n);
    kbc_jobs_use_costs(jobs, n, o->costs);
    double *loads = kbc_xcalloc((size_t)o->shard_count, sizeof *loads);
    kbc_jobs_partition(jobs, n, o->shard_count, loads);
    double lo = loads[0], hi = loads[0], sum = 0;
    size_t mine = 0;
    for (int i = 0; i < o->shard_count; i++) {
        lo = loads[i] < lo ? loads[i] : lo;
        hi = loads[i] > hi ? loads[i] : hi;
        sum += loads[i];
    }
    for (size_t j = 0; j < n; j++)
        mine += jobs[j].shard == o->shard_index;
    char hash[65];
    kbc_plan_hash(plan, hash);
    fprintf(out,
            "\nshard %d of %d (plan %.12s): %zu of %zu points; %s cost %.4g s of %.4g s "
            "(shards from %.4g to %.4g s: imbalance %.1f%% over the mean)\n",
            o->shard_index, o->shard_count, hash, mine, n,
            o->costs && o->costs->measured ? "measured" : "expected", loads[o->shard_index],
            sum, lo, hi, sum > 0 ? (hi / (sum / o->shard_count) - 1) * 100 : 0.0);
    for (size_t j = 0; j < n; j++)
        if (jobs[j].shard == o->shard_index)
            fprintf(out, "  [%s] point %llu\n", plan->exps[jobs[j].exp].name,
                    (unsigned long long)jobs[j].point);
    free(loads);
    free(jobs);
}

/* The seconds an earlier run of this plan took, scaled to the plan's
   points, when -o DIR holds one (the history of the same plan calibrates
   the estimate); NaN otherwise.  *from gets the file's path (malloc'd). */
static double earlier_seconds(const run_state *r, char **from)
{
    *from = NULL;
    if (!r->c->out_dir)
        return NAN;
    char hash[65];
    kbc_plan_hash(&r->plan, hash);
    char *path = kbc_xasprintf("%s/results.json", r->c->out_dir);
    double s;
    uint64_t jobs;
    if (kbc_earlier_run_seconds(path, hash, &s, &jobs) != 0) {
        free(path);
        return NAN;
    }
    size_t n;
    free(kbc_plan_jobs(&r->plan, &n));
    *from = path;
    return jobs > 0 ? s * (double)n / (double)jobs : s;
}

/* --dry-run: the plan (and the shard's part of it), nothing run. */
static int dry_run(const run_state *r)
{
    char *from;
    double earlier = earlier_seconds(r, &from);
    kbc_plan_print_with(&r->plan, earlier, from, stdout);
    free(from);
    if (r->so.shard_count > 0)
        print_shards(&r->plan, &r->so, stdout);
    fflush(stdout);
    return ferror(stdout) ? KBC_EXIT_SYSTEM : KBC_EXIT_OK;
}

/* ---- 3. the outputs ---------------------------------------------------- */

/* Whether dir holds the results of an earlier run: the name of the first
   such file, or NULL. */
static const char *earlier_results(const char *dir)
{
    static const char *const names[] = {"journal.jsonl", "results.json", "results.csv"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *p = kbc_xasprintf("%s/%s", dir, names[i]);
        int there = access(p, F_OK) == 0;
        free(p);
        if (there)
            return names[i];
    }
    return NULL;
}

/* The output folder may take this run: no earlier run in it unless
   --resume or --force, and a journal to resume with --resume.  Returns 0,
   or an exit code after saying why. */
static int check_output_dir(const kbc_cli *c)
{
    /* -o FILE.ini: the experiment file given where the folder goes. */
    size_t len = c->out_dir ? strlen(c->out_dir) : 0;
    if (len > 4 && strcmp(c->out_dir + len - 4, ".ini") == 0) {
        kbc_say(0, "-o took '%s' as its output folder; -o names a folder (kbench run FILE.ini "
                   "-o DIR)",
                kbc_text_visible(c->out_dir));
        return KBC_EXIT_USAGE;
    }
    const char *earlier = c->out_dir && !c->resume && !c->force ? earlier_results(c->out_dir)
                                                                 : NULL;
    if (earlier) {
        kbc_say(0,
                "the output folder '%s' holds an earlier run (%s); add --resume to finish "
                "that run, or --force to start afresh in it",
                c->out_dir, earlier);
        return KBC_EXIT_USAGE;
    }
    if (c->resume) {
        char *j = kbc_xasprintf("%s/journal.jsonl", c->out_dir);
        int there = access(j, F_OK) == 0;
        free(j);
        if (!there) {
            kbc_say(0, "--resume: '%s' holds no journal.jsonl, so there is no run to resume "
                       "there",
                    c->out_dir);
            return KBC_EXIT_USAGE;
        }
    }
    return 0;
}

/* The journal comes first: a --resume that is refused (another plan,
   another shard, a damaged file) leaves DIR as it was, and a run killed
   from here on leaves a journal to resume from.  Returns 0, or an exit
   code after saying why. */
static int open_journal(run_state *r)
{
    const kbc_cli *c = r->c;
    kbc_diag d = {{0}};
    if (kbc_make_dirs(c->out_dir) != 0) {
        kbc_say(0, "cannot create the output folder '%s': %s", c->out_dir, strerror(errno));
        return KBC_EXIT_SYSTEM;
    }
    char hash[65];
    kbc_plan_hash(&r->plan, hash);
    int index = r->so.shard_index, count = r->so.shard_count > 1 ? r->so.shard_count : 0;
    int rc = c->resume ? kbc_journal_resume(&r->journal, c->out_dir, hash, index, count,
                                            strcmp(c->resume, "accept") == 0, stderr, &d)
                       : kbc_journal_create(&r->journal, c->out_dir, hash, index, count, &d);
    r->have_journal = 1;
    if (rc != 0) {
        kbc_say(0, "%s", d.msg);
        return c->resume ? KBC_EXIT_USAGE : KBC_EXIT_SYSTEM;
    }
    return 0;
}

/* DIR/results.csv, results.json and results.md, after the table.
   Returns 0, or an exit code after saying why. */
static int open_files(run_state *r)
{
    const char *dir = r->c->out_dir;
    if (kbc_make_dirs(dir) != 0) {
        kbc_say(0, "cannot create the output folder '%s': %s", dir, strerror(errno));
        return KBC_EXIT_SYSTEM;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        kbc_say(0, "cannot write into the output folder '%s': %s", dir, strerror(errno));
        return KBC_EXIT_SYSTEM;
    }
    kbc_diag d = {{0}};
    char *csv = kbc_xasprintf("%s/results.csv", dir);
    char *json = kbc_xasprintf("%s/results.json", dir);
    char *md = kbc_xasprintf("%s/results.md", dir);
    int ok = kbc_report_csv(csv, &r->sinks[r->n_sinks], &d) == 0;
    if (ok) {
        r->n_sinks++;
        ok = kbc_report_json(json, &r->sinks[r->n_sinks], &d) == 0;
        if (ok)
            r->n_sinks++;
    }
    if (ok) {
        ok = kbc_report_markdown(md, &r->sinks[r->n_sinks], &d) == 0;
        if (ok && r->base)
            kbc_report_table_baseline(&r->sinks[r->n_sinks], r->base, r->n_base);
        if (ok)
            r->n_sinks++;
    }
    free(csv);
    free(json);
    free(md);
    if (!ok) {
        kbc_say(0, "%s", d.msg);
        return KBC_EXIT_SYSTEM;
    }
    return 0;
}

/* The baseline, the output folder, the journal, the table on stdout and,
   with -o, the files; then the kbench binary the workers will run.  The
   baseline is read first: a bad file costs no GPU time.  Returns 0, or an
   exit code after saying why. */
static int open_outputs(run_state *r)
{
    const kbc_cli *c = r->c;
    kbc_diag d = {{0}};
    if (c->baseline && kbc_results_read(c->baseline, &r->base, &r->n_base, &d) != 0) {
        kbc_say(0, "--baseline: %s", d.msg);
        return KBC_EXIT_USAGE;
    }
    int code = check_output_dir(c);
    if (code == 0 && c->out_dir)
        code = open_journal(r);
    if (code)
        return code;
    if (kbc_report_table(stdout, &r->sinks[r->n_sinks], &d) != 0) {
        kbc_say(0, "%s", d.msg);
        return KBC_EXIT_SYSTEM;
    }
    if (r->base)
        kbc_report_table_baseline(&r->sinks[r->n_sinks], r->base, r->n_base);
    kbc_report_table_wide(&r->sinks[r->n_sinks], c->wide);
    kbc_report_table_summary_only(&r->sinks[r->n_sinks], c->summary_only);
    r->n_sinks++;
    if (c->out_dir && (code = open_files(r)) != 0)
        return code;
    if (c->timeline && !(r->timeline = fopen(c->timeline, "w"))) {
        kbc_say(0, "--timeline: cannot write '%s': %s", c->timeline, strerror(errno));
        return KBC_EXIT_USAGE;
    }
    r->so.timeline = r->timeline;
    return kbc_cli_self_path(r->self, sizeof r->self) != 0 ? KBC_EXIT_SYSTEM : 0;
}

/* Closes the reports; they are complete from here on. */
static void close_sinks(run_state *r)
{
    for (size_t i = 0; i < r->n_sinks; i++)
        if (r->sinks[i].destroy)
            r->sinks[i].destroy(r->sinks[i].ctx);
    r->n_sinks = 0;
}

/* ---- 4. the workers ---------------------------------------------------- */

/* What the workers are started with, so that each builds this run's plan:
   the binary, the INI file and what narrowed it, and how they run. */
static void worker_request(run_state *r)
{
    const kbc_cli *c = r->c;
    kbc_super_opts *so = &r->so;
    so->request = (kbc_request){.self = r->self, .ini_path = r->path,
                                .plugin_paths = c->plugin_paths,
                                .n_plugin_paths = c->n_plugin_paths,
                                .experiment = c->experiment, .sets = c->sets,
                                .n_sets = c->n_sets, .variants = c->variants,
                                .quiet = c->quiet, .allow_shared = c->allow_shared,
                                .sanitized = so->sanitizer ? so->sanitize_tool : NULL};
    so->journal = r->have_journal ? &r->journal : NULL;
    so->sanitize_on_crash = c->sanitize_on_crash;
    so->gpus = r->picks;
    so->n_gpus = r->n_picks;
}

/* Runs the plan's points in workers, into the outputs.  Returns the exit
   code of the run. */
static int supervise(run_state *r)
{
    char *cmdline = kbc_cli_command_line(r->c);
    kbc_run_set_quiet(r->c->quiet);
    worker_request(r);
    if (r->so.sanitizer && !r->c->quiet)
        fprintf(stderr, "kbench: note: every variant of every point runs in a worker of its own "
                        "under %s --tool %s; the times are the sanitizer's, not the kernels'.\n",
                r->so.sanitizer, r->so.sanitize_tool);
    int code = kbc_supervise(&r->plan, &r->so, r->sinks, r->n_sinks, cmdline);
    free(cmdline);
    return code;
}

/* ---- 5. after the run -------------------------------------------------- */

/* --plot and --record, once the run has ended (not when it was
   interrupted).  Returns the run's exit code, made worse when one of
   them failed. */
static int finish(run_state *r, int code)
{
    const kbc_cli *c = r->c;
    if (c->plot && code != KBC_EXIT_INTERRUPTED) {
        close_sinks(r);
        char *json = kbc_xasprintf("%s/results.json", c->out_dir);
        char *md = kbc_xasprintf("%s/results.md", c->out_dir);
        int pc = kbc_cmd_plot(json, c->out_dir, md, NULL, stdout, stderr);
        if (pc != 0 && code != KBC_EXIT_SYSTEM)
            code = KBC_EXIT_SYSTEM; /* the plots or their links are missing */
        free(json);
        free(md);
    }
    if (c->record && code != KBC_EXIT_INTERRUPTED) {
        close_sinks(r);
        int rc = kbc_history_record(c->out_dir, &c->history, stdout, stderr);
        if (rc != 0 && code == KBC_EXIT_OK)
            code = rc; /* the run is in DIR, but not in the history */
    }
    return code;
}

static void run_free(run_state *r)
{
    close_sinks(r);
    if (r->timeline && fclose(r->timeline) != 0)
        kbc_say(0, "--timeline: cannot write '%s': %s", r->c->timeline, strerror(errno));
    if (r->have_costs)
        kbc_costs_free(&r->costs);
    free(r->picks);
    if (r->have_journal)
        kbc_journal_close(&r->journal);
    kbc_records_free(r->base, r->n_base);
    if (r->have_plan)
        kbc_plan_free(&r->plan);
    if (r->have_ini)
        kbc_ini_free(&r->ini);
    kbc_registry_free(&r->reg);
}

/* kbench run FILE: the five steps. */
static int run_file(const kbc_cli *c, const char *path)
{
    run_state *r = kbc_xcalloc(1, sizeof *r);
    r->c = c;
    r->path = path;
    int code = kbc_cli_load_plugins(c, &r->reg);
    if (code == 0)
        code = run_options(c, &r->so);
    if (code == 0)
        code = sanitize_option(c, &r->so, r->sanitizer, sizeof r->sanitizer);
    if (code == 0)
        code = build_plan(r);
    if (code == 0 && c->dry_run)
        code = dry_run(r);
    else if (code == 0 && (code = open_outputs(r)) == 0)
        code = finish(r, supervise(r));
    run_free(r);
    free(r);
    return code;
}

/* `kbench run PLUGIN KEY=VALUE ...`: the run of a one-experiment INI file
   made from the arguments (quick.h), its places named by them. */
static int run_quick(const kbc_cli *c)
{
    kbc_quick q;
    char why[700];
    int code = kbc_quick_write(&q, c->args[0], c->args + 1, (size_t)c->n_args - 1, why,
                               sizeof why);
    if (code != 0) {
        kbc_say(code == KBC_EXIT_USAGE, "%s", why);
        return code;
    }
    kbc_say_quick(&q);
    code = run_file(c, q.path);
    kbc_say_quick(NULL);
    kbc_quick_free(&q);
    return code;
}

int kbc_cli_run(const kbc_cli *c)
{
    if (kbc_quick_wanted(c->args, (size_t)c->n_args))
        return run_quick(c);
    int code = kbc_cli_arity(c, kbc_command_find("run"), 1, 1);
    return code ? code : run_file(c, c->args[0]);
}
