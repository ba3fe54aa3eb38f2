/*
 * test_loader.c -- the plugin loader, `kbench list` and `kbench describe`.
 *
 * The fixture plugins (tests/fixtures/loader/) are built into
 * KBENCH_FIXTURE_DIR/loader by tests/loader.cmake.  Every refusal is checked
 * for the file it names and the problem it states, not merely counted.
 * Criterion runs each test in its own process, so setenv() stays local.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_keys.h"
#include "host.h"
#include "loader.h"

#define FIX KBENCH_FIXTURE_DIR "/loader"
#define FIX2 KBENCH_FIXTURE_DIR "/loader/second"

/* The refusal mentioning needle, or NULL. */
static const char *refusal_with(const kbc_registry *r, const char *needle)
{
    for (size_t i = 0; i < r->n_refused; i++)
        if (strstr(r->refused[i], needle))
            return r->refused[i];
    return NULL;
}

/* A copy of the first line of text containing needle, or NULL. */
static char *line_with(const char *text, const char *needle)
{
    const char *hit = strstr(text, needle);
    if (!hit)
        return NULL;
    const char *start = hit;
    while (start > text && start[-1] != '\n')
        start--;
    const char *end = strchr(hit, '\n');
    if (!end)
        end = hit + strlen(hit);
    return strndup(start, (size_t)(end - start));
}

static void no_defaults(void)
{
    setenv("KBENCH_NO_DEFAULT_PLUGINS", "1", 1);
    unsetenv("KBENCH_PLUGIN_PATH");
}

static void load_fixture_folder(kbc_registry *r)
{
    kbc_diag d = {{0}};
    kbc_registry_init(r);
    int rc = kbc_registry_add_path(r, FIX, &d);
    cr_assert_eq(rc, 0, "adding the fixture folder failed: %s", d.msg);
}

Test(loader, good_plugins_load_in_name_order)
{
    kbc_registry r;
    load_fixture_folder(&r);
    cr_assert_eq(r.n, 3, "expected good, twin_a and twin_b, got %zu plugins", r.n);
    cr_assert_str_eq(r.items[0].desc->name, "good");
    cr_assert_str_eq(r.items[1].desc->name, "twin_a");
    cr_assert_str_eq(r.items[2].desc->name, "twin_b");
    cr_assert_str_eq(r.items[0].path, FIX "/kbench-good.so");
    cr_assert_str_eq(r.items[1].path, FIX "/kbench-twin.so");
    /* The two descriptors of one file share one handle. */
    cr_assert_eq(r.items[1].dl, r.items[2].dl);
    cr_assert_neq(r.items[0].dl, r.items[1].dl);
    cr_assert_eq(r.n_handles, 2, "only files with an accepted plugin stay open");
    cr_assert_not_null(kbc_registry_find(&r, "twin_b"));
    cr_assert_null(kbc_registry_find(&r, "twin_c"));
    cr_assert_null(kbc_registry_find(&r, "future"));
    cr_assert_null(kbc_registry_find(&r, "norun"));
    kbc_registry_free(&r);
    cr_assert_eq(r.n, 0);
}

Test(loader, seven_refusals_in_the_fixture_folder)
{
    kbc_registry r;
    load_fixture_folder(&r);
    cr_assert_eq(r.n_refused, 7, "expected 7 refusals, got %zu", r.n_refused);
    kbc_registry_free(&r);
}

/* Each refused fixture file: its refusal names the file and the problem. */
struct refusal_case {
    char file[32];
    char want[3][240]; /* pieces the sentence holds; "" for none */
};

ParameterizedTestParameters(loader, refusal_names_file_and_problem)
{
    static struct refusal_case cases[] = {
        {"bogus.so", {"cannot be loaded as a shared object"}},
        {"kbench-abi99.so",
         {"plugin ABI 99.3, but this kbench speaks ABI 2.x; the plugin was built for a newer "
          "kbench", "rebuild the plugin", "docs/migrating.md"}},
        {"kbench-noentry.so", {"no 'kbench_plugin' symbol"}},
        {"kbench-malformed.so", {"no run() operation", "'norun'"}},
        {"kbench-empty.so", {"kbench_plugin(0) returned NULL"}},
        {"kbench-good_again.so", {"plugin 'good' is already provided by " FIX "/kbench-good.so"}},
        {"kbench-twin.so", {"descriptor 2", "declares variant 'same' twice"}},
    };
    return cr_make_param_array(struct refusal_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct refusal_case *c, loader, refusal_names_file_and_problem)
{
    kbc_registry r;
    load_fixture_folder(&r);
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%s/%s", FIX, c->file);
    const char *s = refusal_with(&r, file);
    cr_assert_not_null(s, "%s was not refused", c->file);
    for (int i = 0; i < 3; i++)
        if (c->want[i][0])
            cr_assert_not_null(strstr(s, c->want[i]), "%s: want \"%s\" in: %s", c->file,
                               c->want[i], s);
    kbc_registry_free(&r);
}

Test(loader, refusals_print_as_warnings)
{
    kbc_registry r;
    load_fixture_folder(&r);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    kbc_registry_print_refused(&r, f);
    fclose(f);
    size_t lines = 0;
    for (char *p = buf; (p = strstr(p, "kbench: warning: ")) != NULL; p++)
        lines++;
    cr_assert_eq(lines, r.n_refused);
    size_t newlines = 0;
    for (char *p = buf; *p; p++)
        newlines += *p == '\n';
    cr_assert_eq(newlines, r.n_refused, "one line per refusal");
    cr_assert_not_null(strstr(buf, "kbench: warning: " FIX "/bogus.so: "));
    free(buf);
    kbc_registry_free(&r);
}

Test(loader, missing_path_is_an_error)
{
    kbc_registry r;
    kbc_registry_init(&r);
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_registry_add_path(&r, "/no/such/kbench/folder", &d), -1);
    cr_assert_not_null(strstr(d.msg, "'/no/such/kbench/folder' does not exist"), "%s", d.msg);
    cr_assert_eq(r.n, 0);
    cr_assert_eq(r.n_refused, 0);
    kbc_registry_free(&r);
}

Test(loader, unreadable_folder_is_an_error)
{
    if (geteuid() == 0)
        cr_skip_test("root reads every folder, so this cannot be tested as root");
    char tmpl[] = "/tmp/kbench-loader-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    cr_assert_eq(chmod(tmpl, 0), 0);
    kbc_registry r;
    kbc_registry_init(&r);
    kbc_diag d = {{0}};
    int rc = kbc_registry_add_path(&r, tmpl, &d);
    chmod(tmpl, 0700);
    rmdir(tmpl);
    cr_assert_eq(rc, -1);
    cr_assert_not_null(strstr(d.msg, "cannot be read"), "%s", d.msg);
    cr_assert_not_null(strstr(d.msg, tmpl), "%s", d.msg);
    kbc_registry_free(&r);
}

Test(loader, one_file_path)
{
    kbc_registry r;
    kbc_registry_init(&r);
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_registry_add_path(&r, FIX "/kbench-twin.so", &d), 0, "%s", d.msg);
    cr_assert_eq(r.n, 2);
    cr_assert_str_eq(r.items[0].desc->name, "twin_a");
    cr_assert_str_eq(r.items[1].desc->name, "twin_b");
    cr_assert_eq(r.n_refused, 1);
    kbc_registry_free(&r);
}

/* A kbench_plugin that is data was called as a function: the scan
   crashed, and with it every command.  It is refused by name and the good
   plugin beside it loads. */
Test(loader, a_data_entry_symbol_is_refused_and_the_others_load)
{
    kbc_registry r;
    kbc_registry_init(&r);
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_registry_add_path(&r, FIX "/datasym", &d), 0, "%s", d.msg);
    cr_assert_eq(r.n, 1);
    cr_assert_str_eq(r.items[0].desc->name, "good");
    cr_assert_eq(r.n_refused, 1);
    cr_assert_str_eq(r.refused[0],
                     FIX "/datasym/kbench-datasym.so: its 'kbench_plugin' symbol is data, not "
                         "a function, so it is not a kbench plugin (declare it as const "
                         "kb_plugin *kbench_plugin(uint32_t index), as kbench/plugin.h does)");
    kbc_registry_free(&r);
}

/* A FIFO named as a plugin: dlopen() would wait for a writer for ever. */
Test(loader, a_fifo_named_as_a_plugin_is_an_error, .timeout = 10)
{
    char dir[] = "/tmp/kbench-loader-fifo-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/kbench-x.so", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    kbc_registry r;
    kbc_registry_init(&r);
    kbc_diag d = {{0}};
    int rc = kbc_registry_add_path(&r, fifo, &d);
    unlink(fifo);
    rmdir(dir);
    cr_assert_eq(rc, -1);
    cr_assert_not_null(strstr(d.msg, "is neither a folder nor a regular file (it is a named "
                                     "pipe)"),
                       "%s", d.msg);
    kbc_registry_free(&r);
}

/* A bare file name means the file in the current folder, not a search of
   the library path. */
Test(loader, bare_file_name_is_relative)
{
    cr_assert_eq(chdir(FIX), 0);
    kbc_registry r;
    kbc_registry_init(&r);
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_registry_add_path(&r, "kbench-twin.so", &d), 0, "%s", d.msg);
    cr_assert_eq(r.n, 2, "refused: %s", r.n_refused ? r.refused[0] : "nothing");
    cr_assert_str_eq(r.items[0].path, "./kbench-twin.so");
    kbc_registry_free(&r);
}

Test(loader, same_folder_twice_is_quiet)
{
    kbc_registry r;
    load_fixture_folder(&r);
    size_t n = r.n, refused = r.n_refused;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_registry_add_path(&r, FIX "/", &d), 0);
    cr_assert_eq(r.n, n);
    /* The files refused the first time are refused again (they were closed),
       but no accepted plugin is reported as a duplicate of itself. */
    for (size_t i = refused; i < r.n_refused; i++)
        cr_assert_null(strstr(r.refused[i], "kbench-good.so:"), "%s", r.refused[i]);
    cr_assert_null(strstr(r.refused[r.n_refused - 1], "kbench-twin.so:"));
    kbc_registry_free(&r);
}

Test(loader, folder_takes_regular_so_files_only)
{
    char tmpl[] = "/tmp/kbench-loader-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    char *link = NULL, *sub = NULL, *txt = NULL;
    cr_assert_gt(asprintf(&link, "%s/a.so", tmpl), 0);
    cr_assert_gt(asprintf(&sub, "%s/b.so", tmpl), 0);
    cr_assert_gt(asprintf(&txt, "%s/c.so.txt", tmpl), 0);
    cr_assert_eq(symlink(FIX "/kbench-good.so", link), 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    FILE *f = fopen(txt, "w");
    cr_assert_not_null(f);
    fputs("not a plugin\n", f);
    fclose(f);

    kbc_registry r;
    kbc_registry_init(&r);
    kbc_diag d = {{0}};
    int rc = kbc_registry_add_path(&r, tmpl, &d);
    size_t n = r.n, refused = r.n_refused;
    kbc_registry_free(&r);
    unlink(link);
    rmdir(sub);
    unlink(txt);
    rmdir(tmpl);
    free(link);
    free(sub);
    free(txt);
    cr_assert_eq(rc, 0, "%s", d.msg);
    cr_assert_eq(n, 1, "the link to a plugin loads; the folder b.so and c.so.txt do not");
    cr_assert_eq(refused, 0);
}

/* Twenty copies of one plugin: readdir() returns them in an order of the
   file system's choosing, so only a sort makes p00 win and the others be
   refused in name order. */
Test(loader, folder_order_is_by_name)
{
    char tmpl[] = "/tmp/kbench-loader-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    FILE *src = fopen(FIX "/kbench-good.so", "rb");
    cr_assert_not_null(src);
    fseek(src, 0, SEEK_END);
    long size = ftell(src);
    rewind(src);
    char *bytes = malloc((size_t)size);
    cr_assert_eq(fread(bytes, 1, (size_t)size, src), (size_t)size);
    fclose(src);
    /* Written in reverse so that creation order is not name order either. */
    for (int i = 19; i >= 0; i--) {
        char name[PATH_MAX];
        snprintf(name, sizeof name, "%s/p%02d.so", tmpl, i);
        FILE *f = fopen(name, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(bytes, 1, (size_t)size, f), (size_t)size);
        fclose(f);
    }
    free(bytes);

    kbc_registry r;
    kbc_registry_init(&r);
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_registry_add_path(&r, tmpl, &d), 0, "%s", d.msg);
    cr_assert_eq(r.n, 1);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s/p00.so", tmpl);
    cr_assert_str_eq(r.items[0].path, want);
    cr_assert_eq(r.n_refused, 19);
    for (int i = 1; i < 20; i++) {
        snprintf(want, sizeof want, "%s/p%02d.so: plugin 'good' is already provided by %s/p00.so",
                 tmpl, i, tmpl);
        cr_assert_not_null(strstr(r.refused[i - 1], want), "refusal %d: %s", i - 1,
                           r.refused[i - 1]);
    }
    kbc_registry_free(&r);
    for (int i = 0; i < 20; i++) {
        snprintf(want, sizeof want, "%s/p%02d.so", tmpl, i);
        unlink(want);
    }
    rmdir(tmpl);
}

Test(loader, plugin_path_env_order)
{
    no_defaults();
    setenv("KBENCH_PLUGIN_PATH", "::" FIX2 "::" FIX ":", 1);
    kbc_registry r;
    kbc_registry_init(&r);
    kbc_registry_add_defaults(&r);
    const kbc_plugin *g = kbc_registry_find(&r, "good");
    cr_assert_not_null(g);
    cr_assert_str_eq(g->path, FIX2 "/kbench-other.so");
    cr_assert_str_eq(g->desc->summary, "The good plugin of the second folder");
    const char *s = refusal_with(&r, FIX "/kbench-good.so: plugin 'good'");
    cr_assert_not_null(s, "the later good was not refused");
    cr_assert_not_null(strstr(s, FIX2 "/kbench-other.so"), "%s", s);
    cr_assert_null(refusal_with(&r, "KBENCH_PLUGIN_PATH"), "empty entries are ignored");
    kbc_registry_free(&r);

    setenv("KBENCH_PLUGIN_PATH", FIX ":" FIX2, 1);
    kbc_registry_init(&r);
    kbc_registry_add_defaults(&r);
    g = kbc_registry_find(&r, "good");
    cr_assert_not_null(g);
    cr_assert_str_eq(g->path, FIX "/kbench-good.so");
    kbc_registry_free(&r);
}

Test(loader, later_paths_come_after_env)
{
    no_defaults();
    setenv("KBENCH_PLUGIN_PATH", FIX2, 1);
    kbc_registry r;
    kbc_registry_init(&r);
    kbc_registry_add_defaults(&r);
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_registry_add_path(&r, FIX, &d), 0);
    cr_assert_str_eq(kbc_registry_find(&r, "good")->path, FIX2 "/kbench-other.so");
    cr_assert_str_eq(r.items[0].desc->name, "good");
    kbc_registry_free(&r);
}

Test(loader, env_entry_missing_is_a_warning)
{
    no_defaults();
    setenv("KBENCH_PLUGIN_PATH", "/no/such/kbench/dir:" FIX2, 1);
    kbc_registry r;
    kbc_registry_init(&r);
    kbc_registry_add_defaults(&r);
    cr_assert_eq(r.n, 1, "the existing entry still loads");
    const char *s = refusal_with(&r, "/no/such/kbench/dir");
    cr_assert_not_null(s);
    cr_assert_not_null(strstr(s, "$KBENCH_PLUGIN_PATH"), "%s", s);
    cr_assert_not_null(strstr(s, "does not exist"), "%s", s);
    kbc_registry_free(&r);
}

Test(loader, defaults_come_first_and_can_be_skipped)
{
    unsetenv("KBENCH_NO_DEFAULT_PLUGINS");
    setenv("KBENCH_PLUGIN_PATH", FIX2, 1);
    char *build = realpath(KBENCH_PLUGIN_BUILD_DIR, NULL);
    kbc_registry r;
    kbc_registry_init(&r);
    kbc_registry_add_defaults(&r);
    /* The test program lives in the build tree, so it searches the build's
       plugin folder, whose plugins (if any are built) come before the env's. */
    cr_assert_geq(r.n, 1);
    cr_assert_str_eq(r.items[r.n - 1].path, FIX2 "/kbench-other.so");
    /* Each built plugin file there gives at least one plugin, unless it was
       refused; so plugins + refusals cover every file. */
    size_t files = 0;
    DIR *dir = build ? opendir(build) : NULL;
    for (struct dirent *e; dir && (e = readdir(dir)) != NULL;) {
        size_t len = strlen(e->d_name);
        files += len > 3 && strcmp(e->d_name + len - 3, ".so") == 0;
    }
    if (dir)
        closedir(dir);
    cr_assert_geq(r.n - 1 + r.n_refused, files,
                  "%zu plugin files in the build folder, %zu plugins and %zu refusals", files,
                  r.n - 1, r.n_refused);
    for (size_t i = 0; i + 1 < r.n; i++) {
        cr_assert_not_null(build, "plugins were found but the build plugin folder is missing");
        cr_assert_eq(strncmp(r.items[i].path, build, strlen(build)), 0, "%s is not from %s",
                     r.items[i].path, build);
    }
    size_t with_defaults = r.n;
    kbc_registry_free(&r);

    setenv("KBENCH_NO_DEFAULT_PLUGINS", "1", 1);
    kbc_registry_init(&r);
    kbc_registry_add_defaults(&r);
    cr_assert_eq(r.n, 1);
    cr_assert_str_eq(r.items[0].path, FIX2 "/kbench-other.so");
    cr_assert_leq(r.n, with_defaults);
    kbc_registry_free(&r);
    free(build);
}

/* ------------------------------------------------------------------------
 * The loaded plugin is usable: its code stays mapped until the registry is
 * freed, and its verify really fails on an output that was not computed.
 * ---------------------------------------------------------------------- */
static int host_fail(kb_host *h, int code, const char *fmt, ...)
{
    return code;
}
static void host_log(kb_host *h, kb_log_level l, const char *fmt, ...) {}

Test(loader, loaded_plugin_runs)
{
    kbc_registry r;
    load_fixture_folder(&r);
    const kb_plugin *p = kbc_registry_find(&r, "good")->desc;
    kb_host h = {.size = sizeof h, .seed = 7, .device = -1, .cpu_threads = 1,
                 .log = host_log, .fail = host_fail};
    kb_value v[5] = {{.u = 1000}, {.f = 2.0}, {.i = 0}, {.i = 1}, {.i = 1}};
    kb_work plan = {0};
    cr_assert_eq(p->ops->plan(v, &plan, &h), KB_OK);
    cr_assert_eq(plan.items, 1000);
    void *st = NULL;
    cr_assert_eq(p->ops->setup(v, 3, &h, &st), KB_OK);
    for (uint32_t var = 0; var < p->n_variants; var++) {
        kb_check c = {0};
        cr_assert_eq(p->ops->prepare(st, var, &h), KB_OK);
        cr_assert_eq(p->ops->verify(st, var, &c, &h), KB_OK);
        cr_assert_eq(c.passed, 0, "a poisoned output must fail verification");
        cr_assert_eq(p->ops->run(st, var, &h), KB_OK);
        cr_assert_eq(p->ops->verify(st, var, &c, &h), KB_OK);
        cr_assert_eq(c.passed, 1, "variant %u: error %g > %g", var, c.error, c.tolerance);
    }
    p->ops->teardown(st, &h);
    kbc_registry_free(&r);
}

/* ------------------------------------------------------------------------
 * Descriptor checks, on descriptors built here so that each rule is tested
 * on its own.
 * ---------------------------------------------------------------------- */
static int op_plan(const kb_value *p, kb_work *o, kb_host *h) { return 0; }
static int op_setup(const kb_value *p, uint64_t v, kb_host *h, void **s) { return 0; }
static int op_var(void *s, uint32_t v, kb_host *h) { return 0; }
static int op_verify(void *s, uint32_t v, kb_check *c, kb_host *h) { return 0; }
static void op_teardown(void *s, kb_host *h) {}

static const char *const choices[] = {"x", "y"};

typedef struct fixture {
    kb_plugin d;
    kb_ops o;
    kb_variant v[KB_MAX_VARIANTS + 1];
    kb_param p[3];
} fixture;

static void fixture_init(fixture *f)
{
    static char names[KB_MAX_VARIANTS + 1][8];
    memset(f, 0, sizeof *f);
    for (int i = 0; i <= KB_MAX_VARIANTS; i++) {
        snprintf(names[i], sizeof names[i], "v%d", i);
        f->v[i] = (kb_variant){.name = names[i], .backend = KB_BACKEND_CPU};
    }
    f->p[0] = (kb_param){.name = "n", .type = KB_PARAM_SIZE, .def = "1K", .min = 1, .max = 0};
    f->p[1] = (kb_param){.name = "kind", .type = KB_PARAM_ENUM, .def = "y", KB_CHOICES(choices)};
    f->p[2] = (kb_param){.name = "on", .type = KB_PARAM_BOOL, .def = "true"};
    f->o = (kb_ops){KB_OPS_HEADER, .plan = op_plan, .setup = op_setup, .prepare = op_var,
                    .run = op_var, .verify = op_verify, .teardown = op_teardown};
    f->d = (kb_plugin){KB_PLUGIN_HEADER, .name = "ok-name_2", .params = f->p, .n_params = 3,
                       .param_size = sizeof(kb_param), .variants = f->v, .n_variants = 2,
                       .variant_size = sizeof(kb_variant), .ops = &f->o};
}

/* Checks that the descriptor is refused with a clause containing want. */
static void expect_refused(const fixture *f, const char *want, const char *what)
{
    char why[512] = "";
    const char *res = kbc_descriptor_check(&f->d, why, sizeof why);
    cr_assert_not_null(res, "%s: was accepted", what);
    cr_assert_not_null(strstr(why, want), "%s: got \"%s\", want \"%s\"", what, why, want);
}

Test(descriptor, a_good_one_passes)
{
    fixture f;
    fixture_init(&f);
    char why[512] = "";
    cr_assert_null(kbc_descriptor_check(&f.d, why, sizeof why), "%s", why);
}

Test(descriptor, most_variants_and_no_parameters_pass)
{
    fixture f;
    fixture_init(&f);
    f.d.n_variants = KB_MAX_VARIANTS;
    f.d.n_params = 0;
    f.d.params = NULL;
    char why[512] = "";
    cr_assert_null(kbc_descriptor_check(&f.d, why, sizeof why), "%s", why);
}

Test(descriptor, upload_and_download_are_optional)
{
    fixture f;
    fixture_init(&f);
    f.o.upload = NULL;
    f.o.download = NULL;
    char why[512] = "";
    cr_assert_null(kbc_descriptor_check(&f.d, why, sizeof why), "%s", why);
}

Test(descriptor, flags_and_uses_within_bounds_pass)
{
    fixture f;
    fixture_init(&f);
    f.v[0].flags = KB_VARIANT_SYNCS | KB_VARIANT_NONDETERM | KB_VARIANT_LIBRARY;
    f.v[1].uses = KB_USES(0) | KB_USES(2);
    char why[512] = "";
    cr_assert_null(kbc_descriptor_check(&f.d, why, sizeof why), "%s", why);
}

/* One test per rule: the good fixture, one change, refused with `want`. */
#define REFUSED(test, change, want)                                                            \
    Test(descriptor, test)                                                                     \
    {                                                                                          \
        fixture f;                                                                             \
        fixture_init(&f);                                                                      \
        change;                                                                                \
        expect_refused(&f, want, #test);                                                       \
    }

/* The header. */
REFUSED(abi_major_other, { f.d.abi_major = 3; f.d.abi_minor = 0; },
        "plugin ABI 3.0, but this kbench speaks ABI 2.x; the plugin was built for a newer "
        "kbench")
REFUSED(size_before_ops, f.d.size = offsetof(kb_plugin, ops), "smaller than")
REFUSED(name_null, f.d.name = NULL, "no name")
REFUSED(name_empty, f.d.name = "", "no name")
REFUSED(name_upper_case, f.d.name = "Reduce", "'Reduce' may only hold")
REFUSED(name_with_space, f.d.name = "re duce", "'re duce' may only hold")

REFUSED(size_not_a_sizeof, f.d.size = sizeof(kb_plugin) - 4,
        "its size is not a multiple of 8, so it is not the size of any version")

/* A value a newer minor may have added is refused with a hint. */
REFUSED(newer_minor_unknown_flag_hints, { f.d.abi_minor = 5; f.v[1].flags = 0x10; },
        "unknown flags 0x10 (the plugin was built for ABI 2.5, newer than this kbench's 2.3")

Test(descriptor, current_minor_unknown_flag_has_no_hint)
{
    fixture f;
    fixture_init(&f);
    f.v[1].flags = 0x10;
    char why[512] = "";
    cr_assert_not_null(kbc_descriptor_check(&f.d, why, sizeof why));
    cr_assert_null(strstr(why, "newer than"), "%s", why);
}

/* The operations. */
REFUSED(ops_null, f.d.ops = NULL, "has no operations table (ops is NULL)")
REFUSED(ops_size_too_small, f.o.size = 16, "its ops table declares 16 bytes, fewer than")
REFUSED(ops_size_not_a_sizeof, f.o.size = sizeof(kb_ops) + 4,
        "bytes, not a multiple of 8, so it is not the size of any version of kb_ops")
REFUSED(op_plan_required, f.o.plan = NULL, "no plan() operation")
REFUSED(op_setup_required, f.o.setup = NULL, "no setup() operation")
REFUSED(op_prepare_required, f.o.prepare = NULL, "no prepare() operation")
REFUSED(op_run_required, f.o.run = NULL, "no run() operation")
REFUSED(op_verify_required, f.o.verify = NULL, "no verify() operation")
REFUSED(op_teardown_required, f.o.teardown = NULL, "no teardown() operation")

/* The variants. */
REFUSED(no_variants, f.d.n_variants = 0, "declares 0 variants; it must declare 1 to 64")
REFUSED(too_many_variants, f.d.n_variants = KB_MAX_VARIANTS + 1, "declares 65 variants")
REFUSED(variant_table_null, f.d.variants = NULL, "variant table is NULL")
REFUSED(variant_size_too_small, f.d.variant_size = 8, "its variant_size 8 is smaller than")
REFUSED(variant_size_not_a_sizeof, f.d.variant_size = sizeof(kb_variant) + 4,
        "its variant_size is not a multiple of 8")
REFUSED(variant_name_null, f.v[1].name = NULL, "variant #1 has no name")
REFUSED(variant_name_comma, f.v[1].name = "a,b", "variant name 'a,b'")
REFUSED(variant_backend_unknown, f.v[1].backend = (kb_backend)7,
        "variant 'v1' has unknown backend 7")
REFUSED(variant_twice, f.v[1].name = "v0", "declares variant 'v0' twice")
REFUSED(variant_flags_unknown, f.v[1].flags = 0x10, "variant 'v1' has unknown flags 0x10")
REFUSED(variant_uses_beyond_params, f.v[1].uses = KB_USES(3),
        "variant 'v1' uses parameter bits beyond its 3 parameters")
REFUSED(variant_uses_top_bit, f.v[0].uses = KB_USES(63),
        "variant 'v0' uses parameter bits beyond its 3 parameters")

/* The parameters. */
REFUSED(too_many_params, f.d.n_params = KB_MAX_PARAMS + 1,
        "declares 65 parameters; at most 64 are allowed")
REFUSED(param_table_null, f.d.params = NULL, "parameter table is NULL")
REFUSED(param_size_too_small, f.d.param_size = 16, "its param_size 16 is smaller than")
REFUSED(param_size_not_a_sizeof, f.d.param_size = sizeof(kb_param) - 4,
        "its param_size is not a multiple of 8")
REFUSED(param_name_null, f.p[2].name = NULL, "parameter #2 has no name")
REFUSED(param_name_bad, f.p[2].name = "Bad-Key", "parameter name 'Bad-Key'")
REFUSED(param_type_unknown, f.p[0].type = (kb_param_type)9, "parameter 'n' has unknown type 9")
REFUSED(enum_choices_null, f.p[1].choices = NULL, "enum parameter 'kind' has no choices")
REFUSED(enum_choices_zero, f.p[1].n_choices = 0, "enum parameter 'kind' has no choices")
static const char *const choices_with_null[] = {"x", NULL};
REFUSED(enum_choice_null, f.p[1].choices = choices_with_null,
        "choice #1 of enum parameter 'kind' is NULL")
REFUSED(enum_default_not_a_choice, f.p[1].def = "z",
        "default 'z' of enum parameter 'kind' is not one of its choices")
REFUSED(default_malformed, f.p[0].def = "12Q", "the default of parameter 'n' is invalid: '12Q'")
REFUSED(default_out_of_range, { f.p[0].min = 4096; f.p[0].max = 8192; },
        "the default of parameter 'n' is invalid")
REFUSED(default_bool_malformed, f.p[2].def = "maybe", "the default of parameter 'on' is invalid")
REFUSED(default_null, f.p[0].def = NULL, "parameter 'n' has no default")
REFUSED(param_twice, f.p[2].name = "n", "declares parameter 'n' twice")

/* Every row of the core-key table is reserved: one test per key. */
struct core_key_case {
    char name[32];
};

ParameterizedTestParameters(descriptor, core_key_is_reserved)
{
    static struct core_key_case cases[KB_MAX_PARAMS];
    size_t n = 0;
    for (size_t i = 0; i < kbc_n_core_keys && n < KB_MAX_PARAMS; i++)
        snprintf(cases[n++].name, sizeof cases[0].name, "%s", kbc_core_keys[i].name);
    return cr_make_param_array(struct core_key_case, cases, n);
}

ParameterizedTest(struct core_key_case *k, descriptor, core_key_is_reserved)
{
    fixture f;
    fixture_init(&f);
    f.p[0].name = k->name;
    char want[128];
    snprintf(want, sizeof want, "parameter '%s' clashes with the core key", k->name);
    expect_refused(&f, want, k->name);
}

/* The table holds the keys documented in docs/ini-format.md, cache, batch, energy and
   prefetch too. */
Test(descriptor, core_keys_include_the_documented_ones)
{
    static const char *keys[] = {"plugin", "variants", "baseline", "reference",
                                 "warmup", "runs", "budget", "min_runs", "max_runs",
                                 "noise", "min_time", "seed", "include_copies",
                                 "cpu_threads", "cache", "batch", "timeout", "energy",
                                 "energy_window", "energy_windows", "integrity", "prefetch",
                                 "gpus", "zip", "plugin_path",
                                 "description", "tune", "constrain", "objective", "tune_budget",
                                 "tune_seed", "tune_problem", "tune_screen", "tune_top"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert_not_null(kbc_core_key_find(keys[i]), "%s is not a core key", keys[i]);
    cr_assert_eq(kbc_n_core_keys, sizeof keys / sizeof keys[0]);
}

/* ------------------------------------------------------------------------
 * kbench list and kbench describe.
 * ---------------------------------------------------------------------- */
typedef struct capture {
    char *buf;
    size_t len;
    FILE *f;
} capture;

static void cap_open(capture *c)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    cr_assert_not_null(c->f);
}

static void cap_close(capture *c)
{
    fclose(c->f);
}

Test(describe, list_shows_plugins_variants_and_files)
{
    kbc_registry r;
    load_fixture_folder(&r);
    capture out;
    cap_open(&out);
    kbc_cmd_list(&r, out.f);
    cap_close(&out);

    char *l = line_with(out.buf, "good ");
    cr_assert_not_null(l, "%s", out.buf);
    cr_assert_not_null(strstr(l, "Sums an array of doubles on the CPU"), "%s", l);
    free(l);
    cr_assert_not_null(strstr(out.buf, "file: " FIX "/kbench-good.so\n"), "%s", out.buf);
    l = line_with(out.buf, "unrolled4");
    cr_assert_not_null(l, "%s", out.buf);
    cr_assert_not_null(strstr(l, " cpu "), "%s", l);
    cr_assert_not_null(strstr(l, "four partial sums"), "%s", l);
    free(l);
    l = line_with(out.buf, "twin_b");
    cr_assert_not_null(l);
    cr_assert_not_null(strstr(l, "second of two"), "%s", l);
    free(l);
    /* Refused plugins are not listed. */
    cr_assert_null(strstr(out.buf, "norun"));
    cr_assert_null(strstr(out.buf, "twin_c"));
    cr_assert_null(strstr(out.buf, "future"));
    free(out.buf);
    kbc_registry_free(&r);
}

Test(describe, list_of_nothing)
{
    kbc_registry r;
    kbc_registry_init(&r);
    capture out;
    cap_open(&out);
    kbc_cmd_list(&r, out.f);
    cap_close(&out);
    cr_assert_str_eq(out.buf, "No plugins found.\n");
    free(out.buf);
}

Test(describe, parameter_table)
{
    kbc_registry r;
    load_fixture_folder(&r);
    capture out, err;
    cap_open(&out);
    cap_open(&err);
    int rc = kbc_cmd_describe(&r, "good", out.f, err.f);
    cap_close(&out);
    cap_close(&err);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(err.buf, "");

    cr_assert_not_null(strstr(out.buf, "file: " FIX "/kbench-good.so\n"), "%s", out.buf);
    cr_assert_not_null(strstr(out.buf, "items: elements\n"), "%s", out.buf);
    char *l = line_with(out.buf, "serial");
    cr_assert_not_null(l);
    cr_assert_not_null(strstr(l, "cpu"), "%s", l);
    cr_assert_not_null(strstr(l, "one loop, left to right"), "%s", l);
    free(l);

    struct {
        const char *name, *type, *def, *allowed, *help;
    } rows[] = {
        {"n ", "size", "1K", "[1, 2^24]", "elements to sum"},
        {"scale ", "float", "1.5", "any", "factor applied to every element"},
        {"mode ", "enum", "plain", "plain|pairwise", "summation order"},
        {"check ", "bool", "true", "true|false", "verify the sum"},
        {"repeat ", "int", "1", "[1, 10]", "passes over the array per run"},
    };
    const char *prev = out.buf;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "\n    %s", rows[i].name);
        const char *at = strstr(out.buf, prefix);
        cr_assert_not_null(at, "no row for %s in:\n%s", rows[i].name, out.buf);
        cr_assert_gt(at, prev, "parameter %s is out of declaration order", rows[i].name);
        prev = at;
        l = line_with(at + 1, rows[i].name);
        /* Columns in order: name, type, default, allowed, help. */
        const char *t = strstr(l, rows[i].type);
        cr_assert_not_null(t, "%s", l);
        const char *d = strstr(t + strlen(rows[i].type), rows[i].def);
        cr_assert_not_null(d, "%s", l);
        const char *a = strstr(d + strlen(rows[i].def), rows[i].allowed);
        cr_assert_not_null(a, "%s", l);
        cr_assert_not_null(strstr(a + strlen(rows[i].allowed), rows[i].help), "%s", l);
        free(l);
    }
    free(out.buf);
    free(err.buf);
    kbc_registry_free(&r);
}

Test(describe, unknown_name_suggests)
{
    kbc_registry r;
    load_fixture_folder(&r);
    capture out, err;
    cap_open(&out);
    cap_open(&err);
    int rc = kbc_cmd_describe(&r, "goood", out.f, err.f);
    cap_close(&out);
    cap_close(&err);
    cr_assert_eq(rc, 2);
    cr_assert_str_eq(out.buf, "");
    cr_assert_str_eq(err.buf, "kbench: no plugin named 'goood' (found: good, twin_a, twin_b); "
                              "did you mean 'good'?\n");
    free(out.buf);
    free(err.buf);

    cap_open(&out);
    cap_open(&err);
    rc = kbc_cmd_describe(&r, "matmul", out.f, err.f);
    cap_close(&out);
    cap_close(&err);
    cr_assert_eq(rc, 2);
    cr_assert_not_null(strstr(err.buf, "no plugin named 'matmul' (found: good, twin_a, twin_b)"),
                       "%s", err.buf);
    cr_assert_null(strstr(err.buf, "did you mean"), "%s", err.buf);
    free(out.buf);
    free(err.buf);
    kbc_registry_free(&r);
}

/* ------------------------------------------------------------------------
 * ABI compatibility within major 2, with real plugins (fixtures/loader/abi):
 * an older minor whose structures end early, a newer minor whose structures
 * are longer, counted enum choices, and one malformed descriptor per file.
 * ---------------------------------------------------------------------- */
#define FIXABI KBENCH_FIXTURE_DIR "/loader/abi"

static void load_abi_folder(kbc_registry *r)
{
    kbc_diag d = {{0}};
    kbc_registry_init(r);
    cr_assert_eq(kbc_registry_add_path(r, FIXABI, &d), 0, "adding %s failed: %s", FIXABI, d.msg);
}

/* The host's copy of plugin name, which must have loaded. */
static const kb_plugin *abi_plugin(const kbc_registry *r, const char *name)
{
    const kbc_plugin *p = kbc_registry_find(r, name);
    const char *why = refusal_with(r, name);
    cr_assert_not_null(p, "plugin '%s' did not load: %s", name, why ? why : "(no refusal)");
    return p->desc;
}

Test(abi, older_minor_loads)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kbc_plugin *p = kbc_registry_find(&r, "older");
    cr_assert_not_null(p, "refused: %s", refusal_with(&r, "kbench-older.so"));
    cr_assert_null(refusal_with(&r, "kbench-older.so"));
    cr_assert_eq(p->desc->abi_minor, 0);
    cr_assert_eq(p->desc->n_variants, 2);
    cr_assert_eq(p->desc->n_params, 2);
    cr_assert_str_eq(p->desc->variants[1].name, "second");
    cr_assert_str_eq(p->desc->params[1].def, "7");
    /* The copy is in the host's layout, whatever the plugin declared. */
    cr_assert_eq(p->desc->size, sizeof(kb_plugin));
    cr_assert_eq(p->desc->variant_size, sizeof(kb_variant));
    cr_assert_eq(p->desc->param_size, sizeof(kb_param));
    cr_assert_eq(p->desc->ops->size, sizeof(kb_ops));
    cr_assert_lt(p->raw->size, sizeof(kb_plugin));
    cr_assert_lt(p->raw->variant_size, sizeof(kb_variant));
    cr_assert_lt(p->raw->param_size, sizeof(kb_param));
    cr_assert_lt(p->raw->ops->size, sizeof(kb_ops));
    kbc_registry_free(&r);
}

Test(abi, older_minor_item_name_defaults_to_null)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kb_plugin *d = abi_plugin(&r, "older");
    cr_assert_null(d->item_name, "item_name read past the descriptor's size: '%s'", d->item_name);
    kbc_registry_free(&r);
}

Test(abi, older_minor_variant_flags_and_uses_default_to_zero)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kb_plugin *d = abi_plugin(&r, "older");
    for (uint32_t v = 0; v < d->n_variants; v++) {
        cr_assert_eq(d->variants[v].flags, 0, "variant %u: flags 0x%x", v, d->variants[v].flags);
        cr_assert_eq(d->variants[v].uses, 0, "variant %u: uses 0x%llx", v,
                     (unsigned long long)d->variants[v].uses);
    }
    kbc_registry_free(&r);
}

Test(abi, older_minor_help_defaults_to_empty)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kb_plugin *d = abi_plugin(&r, "older");
    for (uint32_t p = 0; p < d->n_params; p++) {
        cr_assert_not_null(d->params[p].help);
        cr_assert_str_eq(d->params[p].help, "", "parameter %u", p);
    }
    kbc_registry_free(&r);
}

Test(abi, older_minor_extension_defaults_to_null)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kb_plugin *d = abi_plugin(&r, "older");
    cr_assert_null(d->ops->extension, "extension read past ops->size");
    kbc_registry_free(&r);
}

Test(abi, older_minor_ops_are_callable)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kb_plugin *d = abi_plugin(&r, "older");
    kb_host h = {.size = sizeof h, .seed = 1, .device = -1, .cpu_threads = 1, .log = host_log,
                 .fail = host_fail};
    kb_value v[2] = {{.u = 1000}, {.i = 7}};
    kb_work w = {0};
    cr_assert_eq(d->ops->plan(v, &w, &h), KB_OK);
    cr_assert_eq(w.items, 1000);
    cr_assert_eq(w.bytes_read, 8000);
    cr_assert_eq(w.host_bytes, 7);
    void *st = (void *)1;
    cr_assert_eq(d->ops->setup(v, 3, &h, &st), KB_OK);
    cr_assert_null(st);
    cr_assert_eq(d->ops->run(st, 1, &h), KB_OK);
    kb_check c = {0};
    cr_assert_eq(d->ops->verify(st, 1, &c, &h), KB_OK);
    cr_assert_eq(c.passed, 1);
    d->ops->teardown(st, &h);
    kbc_registry_free(&r);
}

Test(abi, newer_minor_loads)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kbc_plugin *p = kbc_registry_find(&r, "newer");
    cr_assert_not_null(p, "refused: %s", refusal_with(&r, "kbench-newer.so"));
    cr_assert_eq(p->desc->abi_minor, 99);
    cr_assert_gt(p->raw->size, sizeof(kb_plugin));
    cr_assert_gt(p->raw->variant_size, sizeof(kb_variant));
    cr_assert_gt(p->raw->param_size, sizeof(kb_param));
    cr_assert_gt(p->raw->ops->size, sizeof(kb_ops));
    cr_assert_str_eq(p->desc->item_name, "widgets");
    kbc_registry_free(&r);
}

Test(abi, newer_minor_variants_follow_its_stride)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kb_plugin *d = abi_plugin(&r, "newer");
    cr_assert_eq(d->n_variants, 3);
    cr_assert_str_eq(d->variants[1].name, "beta");
    cr_assert_eq(d->variants[1].backend, KB_BACKEND_CUDA);
    cr_assert_str_eq(d->variants[1].summary, "the second");
    cr_assert_eq(d->variants[1].flags, KB_VARIANT_SYNCS | KB_VARIANT_LIBRARY);
    cr_assert_eq(d->variants[1].uses, KB_USES(0) | KB_USES(2));
    cr_assert_str_eq(d->variants[2].name, "gamma");
    cr_assert_str_eq(d->variants[2].summary, "the third");
    cr_assert_eq(d->variants[2].flags, KB_VARIANT_NONDETERM);
    cr_assert_eq(d->variants[2].uses, KB_USES(1));
    kbc_registry_free(&r);
}

Test(abi, newer_minor_parameters_follow_its_stride)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kb_plugin *d = abi_plugin(&r, "newer");
    cr_assert_eq(d->n_params, 3);
    cr_assert_str_eq(d->params[1].name, "depth");
    cr_assert_str_eq(d->params[1].def, "42");
    cr_assert_eq(d->params[1].max, 100.0);
    cr_assert_str_eq(d->params[1].help, "levels deep");
    cr_assert_str_eq(d->params[2].name, "shape");
    cr_assert_eq(d->params[2].n_choices, 3);
    cr_assert_str_eq(d->params[2].choices[2], "wide");
    cr_assert_str_eq(d->params[2].def, "tall");
    kbc_registry_free(&r);
}

Test(abi, newer_minor_ops_and_extension)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kb_plugin *d = abi_plugin(&r, "newer");
    kb_host h = {.size = sizeof h, .device = -1, .log = host_log, .fail = host_fail};
    kb_value v[3] = {{.u = 100}, {.i = 42}, {.i = 1}};
    kb_work w = {0};
    cr_assert_eq(d->ops->plan(v, &w, &h), KB_OK);
    cr_assert_eq(w.items, 142);
    cr_assert_not_null(d->ops->extension);
    const char *ext = d->ops->extension("x-data");
    cr_assert_not_null(ext);
    cr_assert_str_eq(ext, "newer extension data");
    cr_assert_null(d->ops->extension("other"));
    kbc_registry_free(&r);
}

Test(abi, counted_choices_load_without_terminator)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kb_plugin *d = abi_plugin(&r, "counted");
    cr_assert_eq(d->params[0].n_choices, 3);
    cr_assert_str_eq(d->params[0].choices[2], "blue");
    kbc_registry_free(&r);
}

/* Runs `kbench ARGS` with only the ABI fixtures; stdout and stderr together. */
static char *run_kbench_with(const char *folder, const char *args, int *status)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd,
                          "KBENCH_NO_DEFAULT_PLUGINS=1 KBENCH_PLUGIN_PATH= %s/kbench "
                          "--plugin-path %s %s 2>&1",
                          KBENCH_BINARY_DIR, folder, args),
                 0);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, p)) > 0)
        fwrite(chunk, 1, got, out);
    fclose(out);
    *status = pclose(p);
    free(cmd);
    return buf;
}

static char *run_kbench(const char *args, int *status)
{
    return run_kbench_with(FIXABI, args, status);
}

/* A plugin built against minor 1, before kb_work.variant_device_bytes,
   loads and runs; its device memory is its device_bytes alone. */
Test(abi, previous_minor_loads_and_runs)
{
    char ini[] = "/tmp/kbench-minor1-XXXXXX";
    int fd = mkstemp(ini);
    cr_assert_geq(fd, 0);
    static const char text[] = "[m]\nplugin = minor1\nn = 1K, 1000\nvariants = loop, gpu\n"
                               "runs = 3\nwarmup = 1\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    char args[256];
    int status;
    snprintf(args, sizeof args, "run %s --dry-run", ini);
    char *out = run_kbench(args, &status);
    cr_assert_eq(status, 0, "%s", out);
    char *l = line_with(out, "1024");
    cr_assert_not_null(l, "%s", out);
    cr_assert_not_null(strstr(l, "16.0 KiB"), "device memory: %s", l);
    free(l);
    free(out);
    snprintf(args, sizeof args, "run %s -q", ini);
    out = run_kbench(args, &status);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_null(strstr(out, "refus"), "%s", out);
    free(out);
    unlink(ini);
    kbc_registry r;
    load_abi_folder(&r);
    cr_assert_eq(abi_plugin(&r, "minor1")->abi_minor, 1);
    kbc_registry_free(&r);
}

/* A plugin built against minor 2, before kb_param.multiple_of and
   kb_host.refuse, loads, runs and is described: its parameters take any
   value, although the bytes past its param_size are not zero. */
Test(abi, minor_2_loads_runs_and_takes_any_value)
{
    kbc_registry r;
    load_abi_folder(&r);
    const kb_plugin *d = abi_plugin(&r, "minor2");
    cr_assert_eq(d->abi_minor, 2);
    cr_assert_eq(d->n_params, 2);
    cr_assert_eq(d->params[0].multiple_of, 0);
    cr_assert_eq(d->params[1].multiple_of, 0);
    cr_assert_str_eq(d->params[1].name, "step");
    kbc_registry_free(&r);
    int status;
    char *out = run_kbench("describe minor2", &status);
    cr_assert_eq(status, 0, "%s", out);
    char *l = line_with(out, "any value: minor 2");
    cr_assert_not_null(l, "%s", out);
    cr_assert_null(strstr(l, "multiple of"), "%s", l);
    free(l);
    free(out);
    char ini[] = "/tmp/kbench-minor2-XXXXXX";
    int fd = mkstemp(ini);
    cr_assert_geq(fd, 0);
    static const char text[] = "[m]\nplugin = minor2\nn = 1000\nstep = 3, 7\nruns = 2\n"
                               "warmup = 0\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    char args[256];
    snprintf(args, sizeof args, "run %s -q", ini);
    out = run_kbench(args, &status);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_not_null(strstr(out, "summary: 2 pass, 0 FAIL, 0 error"), "%s", out);
    free(out);
    unlink(ini);
}

/* What a plugin of minor 3 asks before it calls refuse(): an older host
   (abi_minor 2), or a host whose structure ends before the field, has
   none. */
Test(abi, refuse_only_where_the_host_has_it)
{
    kb_host h;
    kbc_hostctx hc;
    kbc_host_init(&h, &hc, "t", 1, 1);
    cr_assert(kb_host_can_refuse(&h));
    h.abi_minor = 2;
    cr_assert(!kb_host_can_refuse(&h));
    h.abi_minor = KB_ABI_MINOR;
    h.size = (uint32_t)offsetof(kb_host, refuse);
    cr_assert(!kb_host_can_refuse(&h));
    cr_assert(!kb_host_can_refuse(NULL));
}

Test(abi, describe_lists_counted_choices)
{
    int status;
    char *out = run_kbench("describe counted", &status);
    cr_assert_eq(status, 0, "%s", out);
    char *l = line_with(out, "colour");
    cr_assert_not_null(l, "%s", out);
    cr_assert_not_null(strstr(l, "red|green|blue"), "%s", l);
    cr_assert_null(strstr(out, "NOT-A-CHOICE"), "%s", out);
    free(l);
    free(out);
}

Test(abi, list_survives_bad_descriptors)
{
    int status;
    char *out = run_kbench("list", &status);
    cr_assert_eq(status, 0, "%s", out);
    char *l = line_with(out, "The good plugin beside the ABI fixtures");
    cr_assert_not_null(l, "%s", out);
    cr_assert_eq(strncmp(l, "good  ", 6), 0, "%s", l);
    free(l);
    cr_assert_not_null(strstr(out, "\nolder  "), "%s", out);
    cr_assert_not_null(strstr(out, "\nnewer  "), "%s", out);
    cr_assert_not_null(strstr(out, "kbench: warning: " FIXABI "/kbench-bad-null_choice.so: "),
                       "%s", out);
    cr_assert_null(strstr(out, "bad_null_choice  "), "a refused plugin is listed:\n%s", out);
    free(out);
}

Test(abi, list_survives_a_data_entry_symbol)
{
    int status;
    char *out = run_kbench_with(FIX "/datasym", "list", &status);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_not_null(strstr(out, "The good plugin beside a data symbol"), "%s", out);
    cr_assert_not_null(strstr(out, "kbench-datasym.so: its 'kbench_plugin' symbol is data"),
                       "%s", out);
    free(out);
}

Test(abi, describe_survives_bad_descriptors)
{
    int status;
    char *out = run_kbench("describe good", &status);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_not_null(strstr(out, "good  The good plugin beside the ABI fixtures\n"), "%s", out);
    cr_assert_not_null(strstr(out, "kbench: warning: " FIXABI "/kbench-bad-no_choices.so: "),
                       "%s", out);
    free(out);
}

/* One malformed descriptor per file: each is refused with one sentence that
   names its file and its problem, and no other file is refused. */
struct bad_case {
    char file[32];
    char want[120];
};

ParameterizedTestParameters(abi, bad_descriptor_refused)
{
    static struct bad_case cases[] = {
        {"bad-no_choices", "plugin 'bad_no_choices': enum parameter 'pick' has no choices"},
        {"bad-null_choice", "choice #1 of enum parameter 'pick' is NULL"},
        {"bad-flags", "variant 'odd' has unknown flags 0x80"},
        {"bad-uses", "variant 'odd' uses parameter bits beyond its 2 parameters"},
        {"bad-param_size", "its param_size 16 is smaller than"},
        {"bad-variant_size", "its variant_size 8 is smaller than"},
        {"bad-ops_size", "its ops table declares 16 bytes"},
        {"bad-ops_null", "has no operations table (ops is NULL)"},
        {"bad-n_params", "declares 65 parameters; at most 64 are allowed"},
        {"bad-multiple", "parameter 'n' declares multiple_of 2, which only INT and SIZE"},
        {"bad-multiple_def", "the default of parameter 'n' is invalid: 1000 is not a multiple "
                             "of 3 (the nearest are 999 and 1002)"},
    };
    return cr_make_param_array(struct bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, abi, bad_descriptor_refused)
{
    kbc_registry r;
    load_abi_folder(&r);
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%s/kbench-%s.so: ", FIXABI, c->file);
    size_t hits = 0;
    const char *s = NULL;
    for (size_t i = 0; i < r.n_refused; i++)
        if (strncmp(r.refused[i], file, strlen(file)) == 0) {
            hits++;
            s = r.refused[i];
        }
    cr_assert_eq(hits, 1, "%s: %zu refusals", c->file, hits);
    cr_assert_not_null(strstr(s, c->want), "%s: got \"%s\", want \"%s\"", c->file, s, c->want);
    cr_assert_null(strchr(s, '\n'), "one sentence: %s", s);
    /* The good plugins beside it still load. */
    cr_assert_not_null(kbc_registry_find(&r, "good"));
    cr_assert_not_null(kbc_registry_find(&r, "older"));
    kbc_registry_free(&r);
}

Test(abi, only_the_bad_files_are_refused)
{
    kbc_registry r;
    load_abi_folder(&r);
    for (size_t i = 0; i < r.n_refused; i++)
        cr_assert_not_null(strstr(r.refused[i], FIXABI "/kbench-bad-"), "%s", r.refused[i]);
    cr_assert_eq(r.n_refused, 11);
    cr_assert_eq(r.n, 7, "good, counted, flagged, minor1, minor2, newer, older");
    kbc_registry_free(&r);
}

/* ------------------------------------------------------------------------
 * Variant flags and used parameters in `kbench list` and `kbench describe`
 * (fixtures/loader/abi/flagged.c).
 * ---------------------------------------------------------------------- */

/* `describe NAME` (or `list` when name is NULL) on the ABI fixtures. */
static char *abi_output(const char *name)
{
    kbc_registry r;
    load_abi_folder(&r);
    capture out, err;
    cap_open(&out);
    cap_open(&err);
    if (name)
        cr_assert_eq(kbc_cmd_describe(&r, name, out.f, err.f), 0);
    else
        kbc_cmd_list(&r, out.f);
    cap_close(&out);
    cap_close(&err);
    cr_assert_str_eq(err.buf, "");
    free(err.buf);
    kbc_registry_free(&r);
    return out.buf;
}

/* The line of text that starts with "    NAME " (a variant or parameter row). */
static char *row(const char *text, const char *name)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "\n    %s ", name);
    const char *at = strstr(text, prefix);
    cr_assert_not_null(at, "no row for '%s' in:\n%s", name, text);
    return line_with(at + 1, name);
}

/* The cells of a row, split on runs of two or more spaces. */
static int cell_is(const char *line, int index, const char *want)
{
    const char *p = line;
    while (*p == ' ')
        p++;
    for (int i = 0; i < index && p; i++) {
        p = strstr(p, "  ");
        if (p)
            while (*p == ' ')
                p++;
    }
    if (!p)
        return 0;
    const char *end = strstr(p, "  ");
    size_t len = end ? (size_t)(end - p) : strlen(p);
    return strlen(want) == len && strncmp(p, want, len) == 0;
}

Test(describe, variant_flags_as_words)
{
    char *out = abi_output("flagged");
    struct {
        const char *variant, *flags;
    } want[] = {{"serial", "-"},
                {"atomic", "nondeterministic"},
                {"lib", "syncs,library"},
                {"everything", "syncs,nondeterministic,library"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char *l = row(out, want[i].variant);
        /* Cells: name, backend, flags, summary. */
        cr_assert(cell_is(l, 2, want[i].flags), "variant %s: want flags '%s' in: %s",
                  want[i].variant, want[i].flags, l);
        free(l);
    }
    free(out);
}

Test(describe, list_shows_variant_flags)
{
    char *out = abi_output(NULL);
    char *l = row(out, "lib");
    cr_assert(cell_is(l, 2, "syncs,library"), "%s", l);
    cr_assert(cell_is(l, 3, "the library"), "%s", l);
    free(l);
    l = row(out, "atomic");
    cr_assert(cell_is(l, 2, "nondeterministic"), "%s", l);
    free(l);
    free(out);
}

Test(describe, no_flags_column_without_flags)
{
    char *out = abi_output("counted");
    char *l = row(out, "brush");
    cr_assert(cell_is(l, 2, "by hand"), "a plugin without flags gets no flags column: %s", l);
    free(l);
    free(out);
}

Test(describe, newer_minor_flags_shown)
{
    char *out = abi_output("newer");
    char *l = row(out, "beta");
    cr_assert(cell_is(l, 2, "syncs,library"), "%s", l);
    free(l);
    l = row(out, "gamma");
    cr_assert(cell_is(l, 2, "nondeterministic"), "%s", l);
    free(l);
    free(out);
}

Test(describe, used_by_header)
{
    char *out = abi_output("flagged");
    char *l = row(out, "name");
    /* Cells: name, type, default, allowed, used by, help. */
    cr_assert(cell_is(l, 4, "used by"), "%s", l);
    cr_assert(cell_is(l, 5, "help"), "%s", l);
    free(l);
    free(out);
}

struct used_by_case {
    char plugin[16];
    char param[16];
    char want[48];
};

ParameterizedTestParameters(describe, used_by_column)
{
    static struct used_by_case cases[] = {
        {"flagged", "n", "all"},                      /* every variant names it */
        {"flagged", "tile", "all but atomic,lib"},    /* six of eight: the complement */
        {"flagged", "lanes", "shfl,shfl2,everything"}, /* a short list */
        {"flagged", "unroll", "everything"},          /* only uses = 0 */
        {"newer", "n", "alpha,beta"},                 /* uses = 0 and a mask */
        {"newer", "depth", "alpha,gamma"},
        {"older", "depth", "all"},                    /* no uses field: every variant */
    };
    return cr_make_param_array(struct used_by_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct used_by_case *c, describe, used_by_column)
{
    char *out = abi_output(c->plugin);
    char *l = row(out, c->param);
    cr_assert(cell_is(l, 4, c->want), "%s/%s: want used by '%s' in: %s", c->plugin, c->param,
              c->want, l);
    free(l);
    free(out);
}

/* A long list whose complement is long too reads "K of N variants". */
Test(describe, used_by_summarised_when_long)
{
    fixture f;
    fixture_init(&f);
    f.d.n_variants = 40;
    for (int v = 0; v < 40; v++)
        f.v[v].uses = v % 2 ? KB_USES(1) : KB_USES(0);
    char *s = kbc_used_by_text(&f.d, 0);
    cr_assert_str_eq(s, "20 of 40 variants");
    free(s);
    f.v[0].uses = 0; /* uses 0: every parameter */
    for (int v = 1; v < 40; v++)
        f.v[v].uses = KB_USES(1);
    s = kbc_used_by_text(&f.d, 0);
    cr_assert_str_eq(s, "v0");
    free(s);
    s = kbc_used_by_text(&f.d, 2);
    cr_assert_str_eq(s, "v0");
    free(s);
    for (int v = 0; v < 40; v++)
        f.v[v].uses = KB_USES(1);
    s = kbc_used_by_text(&f.d, 2);
    cr_assert_str_eq(s, "none");
    free(s);
}
