/* Plan building: inheritance, variants, measure settings, expansion, the
   plan() check on every point, and every refusal with its file:line. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "core_keys.h"
#include "host.h"
#include "instance.h"
#include "point_plan.h"
#include "shard.h"
#include "sweep.h"

#define assert_has(msg, sub) \
    cr_assert(strstr((msg), (sub)) != NULL, "expected \"%s\" in: %s", (sub), (msg))

/* ---- Hand-made plugins ------------------------------------------------ */

enum { P_N, P_DTYPE, P_SCALE, P_ITERS, P_CHECK };
static const char *const dtypes[] = {"f32", "f64", "i32"};
static const kb_param red_params[] = {
    {.name = "n", .type = KB_PARAM_SIZE, .def = "1K", .min = 1, .max = 1099511627776.0},
    {.name = "dtype", .type = KB_PARAM_ENUM, .def = "f32", KB_CHOICES(dtypes)},
    {.name = "scale", .type = KB_PARAM_FLOAT, .def = "1.5", .min = 0, .max = 100},
    {.name = "iters", .type = KB_PARAM_INT, .def = "1", .min = 1, .max = 1000},
    {.name = "check", .type = KB_PARAM_BOOL, .def = "true"},
};
static const kb_variant red_variants[] = {
    {"cpu", KB_BACKEND_CPU, "plain loop"},
    {"simple", KB_BACKEND_CUDA, "one atomic per element"},
    {"fast", KB_BACKEND_CUDA, "shuffles"},
    {"lib", KB_BACKEND_CUDA, "the library"},
};

static int calls; /* plan() calls, to see that every point was planned */

static int red_plan(const kb_value *v, kb_work *out, kb_host *h)
{
    calls++;
    uint64_t elem = v[P_DTYPE].i == 1 ? 8 : 4;
    if (v[P_DTYPE].i == 1 && v[P_ITERS].i > 500)
        return h->fail(h, KB_EUNSUPPORTED, "iters above 500 is not supported for f64");
    out->bytes_read = v[P_N].u * elem;
    out->bytes_written = elem;
    out->items = v[P_N].u;
    out->device_bytes = v[P_N].u * elem;
    return KB_OK;
}

static int stub(void)
{
    return KB_OK;
}

#define STUB_OPS(planfn)                                                                       \
    (&(const kb_ops){KB_OPS_HEADER, .plan = planfn, .setup = (void *)stub,                   \
                     .prepare = (void *)stub, .run = (void *)stub, .verify = (void *)stub,     \
                     .teardown = (void *)stub})

static const kb_plugin reduce_desc = {
    KB_PLUGIN_HEADER, .name = "reduce", .summary = "sum", KB_PARAMS(red_params),
    KB_VARIANTS(red_variants), .ops = STUB_OPS(red_plan)};

static const kb_param scan_params[] = {
    {.name = "n", .type = KB_PARAM_SIZE, .def = "4K", .min = 1, .max = 0},
    {.name = "inclusive", .type = KB_PARAM_BOOL, .def = "false"},
};
static const kb_variant scan_variants[] = {{"serial", KB_BACKEND_CPU, "a loop"}};

static int scan_plan(const kb_value *v, kb_work *out, kb_host *h)
{
    calls++;
    out->bytes_read = out->bytes_written = v[0].u * 4;
    return KB_OK;
}

static int silent_fail(const kb_value *v, kb_work *out, kb_host *h)
{
    return KB_EFAIL;
}

static const kb_plugin scan_desc = {
    KB_PLUGIN_HEADER, .name = "scan", .summary = "prefix sums", KB_PARAMS(scan_params),
    KB_VARIANTS(scan_variants), .ops = STUB_OPS(scan_plan)};

/* A plugin whose parameter has no default, and one with a broken default. */
static const kb_param needy_params[] = {{.name = "n", .type = KB_PARAM_SIZE, .min = 1, .max = 0}};
static const kb_plugin needy_desc = {
    KB_PLUGIN_HEADER, .name = "needy", .summary = "x", KB_PARAMS(needy_params),
    KB_VARIANTS(scan_variants), .ops = STUB_OPS(scan_plan)};
static const kb_param broken_params[] = {
    {.name = "n", .type = KB_PARAM_SIZE, .def = "12Q", .min = 1, .max = 0}};
static const kb_plugin broken_desc = {
    KB_PLUGIN_HEADER, .name = "broken", .summary = "x", KB_PARAMS(broken_params),
    KB_VARIANTS(scan_variants), .ops = STUB_OPS(scan_plan)};
static const kb_plugin mute_desc = {
    KB_PLUGIN_HEADER, .name = "mute", .summary = "x", KB_PARAMS(scan_params),
    KB_VARIANTS(scan_variants), .ops = STUB_OPS(silent_fail)};

/* A plugin whose library variant states its own device memory (minor 2):
   4 bytes an element for every run, 12 more for `lib` alone.  Its plan()
   also fails when it is shown a device, which it must never see. */
static const kb_variant libmem_variants[] = {
    {"cpu", KB_BACKEND_CPU, "a loop"},
    {"own", KB_BACKEND_CUDA, "our kernel"},
    {"lib", KB_BACKEND_CUDA, "a library with temporary storage"},
};

static int libmem_plan(const kb_value *v, kb_work *out, kb_host *h)
{
    if (h->stream || h->device != -1 || h->sm_count || h->l2_bytes)
        return h->fail(h, KB_EINVAL, "plan() was shown a device");
    out->bytes_read = v[0].u * 4;
    out->device_bytes = v[0].u * 4;
    kb_work_add_variant_bytes(out, h, 2, v[0].u * 12);
    return KB_OK;
}

static const kb_plugin libmem_desc = {
    KB_PLUGIN_HEADER, .name = "libmem", .summary = "x", KB_PARAMS(scan_params),
    KB_VARIANTS(libmem_variants), .ops = STUB_OPS(libmem_plan)};

/* A plugin whose second variant reads only n (scan's params: n, inclusive),
   so it runs once for the points that differ only in `inclusive`. */
static const kb_variant flat_variants[] = {
    {"both", KB_BACKEND_CPU, "reads n and inclusive"},
    {"nonly", KB_BACKEND_CPU, "reads n", 0, KB_USES(0)},
};
static const kb_plugin flat_desc = {
    KB_PLUGIN_HEADER, .name = "flat", .summary = "x", KB_PARAMS(scan_params),
    KB_VARIANTS(flat_variants), .ops = STUB_OPS(scan_plan)};

/* ---- Fixture ----------------------------------------------------------- */

static kbc_registry reg;
static kbc_ini ini;
static kbc_plan plan;
static kbc_diag d;

static void add(const kb_plugin *desc, const char *path)
{
    reg.items = realloc(reg.items, (reg.n + 1) * sizeof *reg.items);
    memset(&reg.items[reg.n], 0, sizeof reg.items[reg.n]);
    reg.items[reg.n].desc = desc;
    reg.items[reg.n].path = strdup(path);
    reg.items[reg.n].dl = NULL;
    reg.n++;
    reg.cap = reg.n;
}

static void setup(void)
{
    kbc_registry_init(&reg);
    add(&reduce_desc, "/fake/reduce.so");
    add(&scan_desc, "/fake/scan.so");
    add(&needy_desc, "/fake/needy.so");
    add(&broken_desc, "/fake/broken.so");
    add(&mute_desc, "/fake/mute.so");
    add(&libmem_desc, "/fake/libmem.so");
    calls = 0;
}

static void teardown(void)
{
    kbc_plan_free(&plan);
    kbc_ini_free(&ini);
    kbc_registry_free(&reg);
}

TestSuite(config, .init = setup, .fini = teardown);

static int build_named(const char *name, const char *text, uint64_t device_mem)
{
    d.msg[0] = '\0';
    cr_assert_eq(kbc_ini_load_string(name, text, &ini, &d), 0, "INI: %s", d.msg);
    return kbc_plan_build(&ini, &reg, device_mem, &plan, &d);
}

static void build_ok(const char *text)
{
    cr_assert_eq(build_named("exp.ini", text, 0), 0, "%s", d.msg);
}

/* The build must fail with a message that starts "exp.ini:LINE: " (or
   "exp.ini: " for line 0) and contains the pieces given. */
static void build_fails(const char *text, int line, const char *piece, const char *piece2)
{
    cr_assert_eq(build_named("exp.ini", text, 0), -1, "accepted:\n%s", text);
    char head[32];
    if (line)
        snprintf(head, sizeof head, "exp.ini:%d: ", line);
    else
        snprintf(head, sizeof head, "exp.ini: ");
    cr_assert_eq(strncmp(d.msg, head, strlen(head)), 0, "expected \"%s\" at the start of: %s",
                 head, d.msg);
    assert_has(d.msg, piece);
    if (piece2)
        assert_has(d.msg, piece2);
    cr_assert_eq(plan.n, 0, "a failed build leaves no experiments behind");
    kbc_ini_free(&ini);
}

static const kbc_experiment *exp_named(const char *name)
{
    for (size_t i = 0; i < plan.n; i++)
        if (strcmp(plan.exps[i].name, name) == 0)
            return &plan.exps[i];
    cr_assert_fail("no experiment [%s]", name);
    return NULL;
}

/* ---- Tests ------------------------------------------------------------- */

Test(config, defaults)
{
    build_ok("[one]\nplugin = reduce\n");
    cr_assert_eq(plan.n, 1);
    cr_assert_str_eq(plan.path, "exp.ini");
    const kbc_experiment *e = &plan.exps[0];
    cr_assert_str_eq(e->name, "one");
    cr_assert_eq(e->line, 1);
    cr_assert_eq(e->plugin, &reg.items[0]);
    cr_assert_null(e->description);
    cr_assert_eq(e->n_variants, 4);
    for (uint32_t i = 0; i < 4; i++)
        cr_assert_eq(e->variants[i], i);
    cr_assert_eq(e->baseline, 0);
    cr_assert_eq(e->reference, -1);
    cr_assert_eq(e->measure.warmup, 3);
    cr_assert_eq(e->measure.runs, 20);
    cr_assert_eq(e->measure.budget_s, 10.0);
    cr_assert_eq(e->measure.seed, 1);
    cr_assert_eq(e->measure.include_copies, 0);
    /* auto: resolved where the threads are made (kbc_cpu_threads). */
    cr_assert_eq(e->measure.cpu_threads, 0);
    cr_assert_eq(e->n_points, 1);
    cr_assert_eq(plan.n_points, 1);
    cr_assert_eq(e->axes[P_N].n, 1);
    cr_assert_eq(e->axes[P_N].values[0].u, 1024);
    cr_assert_eq(e->axes[P_N].line, 0);
    cr_assert_eq(e->axes[P_N].param, &red_params[P_N]);
    cr_assert_eq(e->axes[P_DTYPE].values[0].i, 0);
    cr_assert_eq(e->axes[P_SCALE].values[0].f, 1.5);
    cr_assert_eq(e->axes[P_ITERS].values[0].i, 1);
    cr_assert_eq(e->axes[P_CHECK].values[0].i, 1);
    cr_assert_eq(calls, 1);
}

Test(config, global_inheritance_and_override)
{
    build_ok("[global]\n"               /* 1 */
             "plugin = reduce\n"        /* 2 */
             "runs = 5\n"               /* 3 */
             "budget = 500ms\n"         /* 4 */
             "n = 2K\n"                 /* 5 */
             "inclusive = true\n"       /* 6: only scan declares it */
             "description = shared\n"   /* 7 */
             "\n"                       /* 8 */
             "[a]\n"                    /* 9 */
             "[b]\n"                    /* 10 */
             "runs = 7\n"               /* 11 */
             "n = 4K\n"                 /* 12 */
             "seed = 2^40\n"            /* 13 */
             "include_copies = yes\n"   /* 14 */
             "cpu_threads = 3\n"        /* 15 */
             "warmup = 0\n"             /* 16 */
             "description = own\n"      /* 17 */
             "[c]\n"                    /* 18 */
             "plugin = scan\n");        /* 19 */
    cr_assert_eq(plan.n, 3);
    const kbc_experiment *a = exp_named("a"), *b = exp_named("b"), *c = exp_named("c");
    cr_assert_eq(plan.exps[0].line, 9);
    cr_assert_eq(a->measure.runs, 5);
    cr_assert_float_eq(a->measure.budget_s, 0.5, 1e-12);
    cr_assert_eq(a->axes[P_N].values[0].u, 2048);
    cr_assert_eq(a->axes[P_N].line, 5);
    cr_assert_str_eq(a->description, "shared");
    cr_assert_eq(b->measure.runs, 7);
    cr_assert_eq(b->measure.warmup, 0);
    cr_assert_eq(b->measure.seed, 1ULL << 40);
    cr_assert_eq(b->measure.include_copies, 1);
    cr_assert_eq(b->measure.cpu_threads, 3);
    cr_assert_eq(b->axes[P_N].values[0].u, 4096);
    cr_assert_eq(b->axes[P_N].line, 12);
    cr_assert_str_eq(b->description, "own");
    cr_assert_eq(c->plugin, &reg.items[1]);
    cr_assert_eq(c->axes[0].values[0].u, 2048); /* n from [global] */
    cr_assert_eq(c->axes[1].values[0].i, 1);    /* inclusive from [global] */
    cr_assert_eq(c->measure.runs, 5);
}

Test(config, variants_baseline_reference)
{
    build_ok("[a]\nplugin = reduce\nvariants = fast, cpu\n"
             "[b]\nplugin = reduce\nvariants = simple, fast, lib\nbaseline = fast\n"
             "reference = lib\n"
             "[c]\nplugin = reduce\nvariants = ALL\nbaseline = lib\n");
    const kbc_experiment *a = exp_named("a"), *b = exp_named("b"), *c = exp_named("c");
    cr_assert_eq(a->n_variants, 2);
    cr_assert_eq(a->variants[0], 2);
    cr_assert_eq(a->variants[1], 0);
    cr_assert_eq(a->baseline, 2, "the baseline defaults to the first listed");
    cr_assert_eq(a->reference, -1);
    cr_assert_eq(b->n_variants, 3);
    cr_assert_eq(b->baseline, 2);
    cr_assert_eq(b->reference, 3);
    cr_assert_eq(c->n_variants, 4);
    cr_assert_eq(c->baseline, 3);
}

Test(config, expansion_order_and_counts)
{
    build_ok("[a]\nplugin = reduce\n"
             "n = 1K, 2K\n"
             "dtype = f32, f64\n"
             "iters = 1..3:+1\n"
             "[b]\nplugin = scan\nn = 2^10..2^19\ninclusive = true, false\nvariants = serial\n");
    const kbc_experiment *a = exp_named("a"), *b = exp_named("b");
    cr_assert_eq(a->n_points, 12);
    cr_assert_eq(b->n_points, 20);
    cr_assert_eq(plan.n_points, 32);
    cr_assert_eq(calls, 32, "plan() runs once per point");
    kb_value v[5];
    /* The first declared parameter varies slowest. */
    struct {
        uint64_t p, n;
        int64_t dtype, iters;
    } want[] = {{0, 1024, 0, 1},  {1, 1024, 0, 2},  {2, 1024, 0, 3}, {3, 1024, 1, 1},
                {5, 1024, 1, 3},  {6, 2048, 0, 1},  {10, 2048, 1, 2}, {11, 2048, 1, 3}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        memset(v, 0xab, sizeof v);
        kbc_experiment_point(a, want[i].p, v);
        cr_assert_eq(v[P_N].u, want[i].n, "point %llu", (unsigned long long)want[i].p);
        cr_assert_eq(v[P_DTYPE].i, want[i].dtype, "point %llu", (unsigned long long)want[i].p);
        cr_assert_eq(v[P_ITERS].i, want[i].iters, "point %llu", (unsigned long long)want[i].p);
        cr_assert_eq(v[P_SCALE].f, 1.5);
        cr_assert_eq(v[P_CHECK].i, 1);
    }
    kbc_experiment_point(b, 19, v);
    cr_assert_eq(v[0].u, 1ULL << 19);
    cr_assert_eq(v[1].i, 0);
    kbc_experiment_point(b, 1, v);
    cr_assert_eq(v[0].u, 1024);
    cr_assert_eq(v[1].i, 0);
}

Test(config, ten_thousand_points)
{
    build_ok("[big]\nplugin = reduce\nn = 1..10000:+1\nvariants = cpu, fast\n");
    cr_assert_eq(plan.n_points, 10000);
    cr_assert_eq(calls, 10000);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    kbc_plan_print(&plan, f);
    fclose(f);
    assert_has(buf, "1 experiment, 10000 points, 20000 variant runs");
    assert_has(buf, "   9999  10000 ");
    free(buf);
}

Test(config, dry_run_print)
{
    build_ok("[global]\nseed = 7\n"
             "[sizes]\nplugin = reduce\ndescription = two sizes\nn = 1K, 1M\ndtype = f64\n"
             "variants = cpu, fast\nreference = fast\n"
             "[s]\nplugin = scan\n");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    kbc_plan_print(&plan, f);
    fclose(f);
    assert_has(buf, "[sizes]  plugin reduce (/fake/reduce.so)");
    assert_has(buf, "description: two sizes");
    assert_has(buf, "variants: cpu, fast  (baseline cpu, reference fast)");
    assert_has(buf, "seed 7");
    assert_has(buf, "f64");
    assert_has(buf, "8.0 KiB");  /* 1K doubles */
    assert_has(buf, "8.0 MiB");  /* 1M doubles */
    assert_has(buf, "8 B");      /* one double written */
    assert_has(buf, "2 experiments, 3 points, 5 variant runs");
    free(buf);
}

/* One refused file per case: the text, the line named, and two pieces of
   the sentence (the second may be empty).  The strings are held in the
   struct: Criterion copies parameters into a new process. */
typedef struct refusal {
    char text[96];
    int line;
    char piece[160], piece2[80];
} refusal;

ParameterizedTestParameters(config, refusals)
{
    static refusal cases[] = {
        /* Unknown keys. */
        {"[a]\nplugin = reduce\nnn = 5\n", 3,
         "unknown key 'nn' in [a] (plugin 'reduce' has no such parameter); did you mean 'n'?",
         ""},
        {"[a]\nplugin = reduce\nrusn = 5\n", 3, "unknown key 'rusn'", "did you mean 'runs'?"},
        {"[a]\nplugin = reduce\nzzzzzz = 5\n", 3,
         "unknown key 'zzzzzz' in [a] (plugin 'reduce' has no such parameter).", ""},
        /* inclusive belongs to scan, not to reduce. */
        {"[a]\nplugin = reduce\ninclusive = true\n", 3, "unknown key 'inclusive' in [a]", ""},
        {"[global]\nitres = 4\n[a]\nplugin = reduce\n", 2,
         "unknown key 'itres' in [global] (no experiment's plugin has such a parameter: "
         "reduce); did you mean 'iters'?",
         ""},
        {"[a]\nplugin = reduce\nplugin_path = /tmp\n", 3,
         "key 'plugin_path' in [a]: plugin_path is read from [global] only", ""},
        /* Plugins. */
        {"[global]\nruns = 3\n[a]\n\nplugin = redcue\n", 5,
         "key 'plugin' in [a]: no plugin named 'redcue' was found (searched: reduce, scan, "
         "needy, broken, mute, libmem); did you mean 'reduce'?",
         ""},
        {"[a]\nruns = 3\n", 1, "experiment [a] has no key 'plugin'", ""},
        {"[global]\nplugin = nosuch\n[a]\n", 2,
         "key 'plugin' in [global] (inherited by [a]): no plugin named 'nosuch'", ""},
        {"[global]\nruns = 3\n", 0, "there are no experiments", ""},
        {"[a]\nplugin = needy\n", 1, "parameter 'n' of plugin 'needy' has no default", ""},
        {"[a]\nplugin = broken\n", 1, "plugin 'broken' (/fake/broken.so)", "'12Q' is not a size"},
        {"[a]\nplugin =\n", 2, "key 'plugin' in [a]: the value is empty; write plugin = NAME.",
         ""},
        /* Variants. */
        {"[a]\nplugin = reduce\nvariants = cpu, fsat\n", 3,
         "key 'variants' in [a]: 'fsat' is not a variant of plugin 'reduce' (it has: cpu, "
         "simple, fast, lib); did you mean 'fast'?",
         ""},
        {"[a]\nplugin = reduce\nvariants = cpu, cpu\n", 3, "variant 'cpu' is listed twice", ""},
        {"[a]\nplugin = reduce\nvariants = cpu,, fast\n", 3, "empty element", ""},
        {"[a]\nplugin = reduce\nvariants = cpu, fast\nreference = lib\n", 4,
         "key 'reference' in [a]: 'lib' is not among the selected variants (cpu, fast)", ""},
        {"[a]\nplugin = reduce\nvariants = cpu, fast\nbaseline = simple\n", 4,
         "key 'baseline' in [a]: 'simple' is not among the selected variants", ""},
        {"[a]\nplugin = reduce\nbaseline = smiple\n", 3, "did you mean 'simple'?", ""},
        {"[global]\nvariants = cpu\n[a]\nplugin = scan\n", 2,
         "key 'variants' in [global] (inherited by [a]): 'cpu' is not a variant of plugin "
         "'scan'",
         ""},
        {"[a]\nplugin = reduce\nvariants =\n", 3, "key 'variants' in [a]: the value is empty",
         ""},
        {"[a]\nplugin = reduce\nbaseline =\n", 3, "key 'baseline' in [a]: the value is empty",
         ""},
        {"[a]\nplugin = reduce\nreference =  \n", 3,
         "key 'reference' in [a]: the value is empty", ""},
        /* Values. */
        {"[a]\nplugin = reduce\nn = 12Q\n", 3, "key 'n' in [a]: '12Q' is not a size", ""},
        {"[global]\nn = 4, -1\n[a]\nplugin = reduce\n", 2,
         "key 'n' in [global] (inherited by [a]): '-1' is negative", ""},
        {"[a]\nplugin = reduce\ndtype = f16\n", 3,
         "key 'dtype' in [a]: 'f16' is not one of the allowed values (f32, f64, i32).", ""},
        {"[a]\nplugin = reduce\niters = 1..2000:+999\n", 3,
         "key 'iters' in [a]: 1999 is above the maximum 1000", ""},
        {"[a]\nplugin = reduce\nruns = 0\n", 3, "key 'runs' in [a]: 0 is below the minimum 1",
         ""},
        {"[a]\nplugin = reduce\nruns = 5, 10\n", 3,
         "key 'runs' in [a]: '5, 10' is a sweep, but 'runs' takes one value", ""},
        {"[a]\nplugin = reduce\nwarmup = lots\n", 3, "'lots' is not an integer", ""},
        {"[a]\nplugin = reduce\nbudget = 0\n", 3, "key 'budget' in [a]", "below the minimum"},
        {"[a]\nplugin = reduce\ninclude_copies = perhaps\n", 3, "'perhaps' is not a boolean",
         ""},
        {"[a]\nplugin = reduce\ncpu_threads = 0\n", 3, "key 'cpu_threads' in [a]", ""},
        {"[a]\nplugin = reduce\nseed = -3\n", 3, "key 'seed' in [a]: '-3' is negative", ""},
        {"[a]\nplugin = reduce\nseed = 0\n", 3, "key 'seed' in [a]: 0 is below the minimum 1.",
         ""},
        {"[a]\nplugin = reduce\nruns =\n", 3, "key 'runs' in [a]: the value is empty.", ""},
        {"[a]\nplugin = reduce\nn = 2^40 + 1\n", 3, "'2^40 + 1' is not a size", ""},
        {"[a]\nplugin = reduce\nn = 1099511627777\n", 3,
         "1099511627777 is above the maximum 2^40", ""},
    };
    return cr_make_param_array(refusal, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(refusal *c, config, refusals)
{
    build_fails(c->text, c->line, c->piece, c->piece2[0] ? c->piece2 : NULL);
}

Test(config, no_plugins_at_all)
{
    kbc_registry_free(&reg);
    kbc_registry_init(&reg);
    build_fails("[a]\nplugin = reduce\n", 2, "no plugin named 'reduce' was found",
                "no plugins were found at all");
}

/* [Global] is not the defaults section; it must not become an experiment
   without a word. */
Test(config, global_section_case)
{
    build_fails("[a]\nplugin = reduce\n\n[Global]\nruns = 3\n", 4, "[Global]",
                "the defaults section is [global]");
}

/* A point that plan() refuses is invalid, counted, and the plan goes on;
   an experiment whose only point is refused is a mistake. */
Test(config, refused_points_are_invalid_not_errors)
{
    cr_assert_eq(build_named("exp.ini",
                             "[a]\n"
                             "plugin = reduce\n"
                             "[bad one]\n"
                             "plugin = reduce\n"
                             "dtype = f32, f64\n"
                             "iters = 400..600:+100\n",
                             0),
                 0, "%s", d.msg);
    cr_assert_eq(plan.exps[0].n_invalid, 0);
    cr_assert_eq(plan.exps[1].n_points, 6);
    cr_assert_eq(plan.exps[1].n_invalid, 1);
}

/* The one rule (kbc_plan_refused): KB_EINVAL or KB_EUNSUPPORTED with the
   plugin's own sentence refuses a point; any other code, or either without
   a sentence, is the plugin's error. */
Test(config, the_refusal_rule)
{
    kbc_error e = {.code = KB_EINVAL, .said = 1};
    cr_assert(kbc_plan_refused(&e));
    e.code = KB_EUNSUPPORTED;
    cr_assert(kbc_plan_refused(&e));
    e.said = 0;
    cr_assert_not(kbc_plan_refused(&e));
    e.code = KB_EINVAL;
    cr_assert_not(kbc_plan_refused(&e));
    e.said = 1;
    e.code = KB_EFAIL;
    cr_assert_not(kbc_plan_refused(&e));
    e.code = KB_ENOMEM;
    cr_assert_not(kbc_plan_refused(&e));
}

/* A plan() that fails otherwise (here KB_EFAIL without a sentence) does
   not stop the plan: the point is kept as the plugin's error, an `error`
   row in the run. */
Test(config, a_plan_that_fails_otherwise_is_an_error_point)
{
    build_ok("[a]\nplugin = mute\n");
    const kbc_experiment *e = &plan.exps[0];
    cr_assert_eq(e->n_failed, 1);
    cr_assert_eq(e->n_invalid, 0);
    kbc_point_plan pp;
    kbc_plan_point(e, 0, &pp);
    cr_assert_eq(pp.status, KBC_PLAN_FAILED);
    cr_assert_eq(pp.code, KB_EFAIL);
    cr_assert_str_eq(pp.sentence, "plan() returned 5 (KB_EFAIL) without saying why");
}

/* Each point is planned once, when the plan is built: its record holds
   plan()'s answer, and the dry run, the jobs and the estimate read it
   without asking plan() again. */
Test(config, each_point_is_planned_once_and_kept)
{
    build_ok("[b]\nplugin = reduce\ndtype = f32, f64\niters = 400..600:+100\nn = 1000\n");
    const kbc_experiment *e = &plan.exps[0];
    cr_assert_eq(calls, 6, "plan() runs once per point");
    kbc_point_plan pp;
    kbc_plan_point(e, 0, &pp); /* f32, iters 400 */
    cr_assert_eq(pp.status, KBC_PLAN_RUNS);
    cr_assert_eq(pp.carried, 0);
    cr_assert_eq(pp.work.bytes_read, 4000);
    cr_assert_eq(pp.work.device_bytes, 4000);
    cr_assert_str_eq(pp.sentence, "");
    kbc_plan_point(e, 5, &pp); /* f64, iters 600 */
    cr_assert_eq(pp.status, KBC_PLAN_REFUSED);
    cr_assert_eq(pp.code, KB_EUNSUPPORTED);
    cr_assert_str_eq(pp.sentence, "iters above 500 is not supported for f64");
    FILE *null = fopen("/dev/null", "w");
    cr_assert_not_null(null);
    kbc_plan_print(&plan, null);
    fclose(null);
    size_t n;
    free(kbc_plan_jobs(&plan, &n));
    double cap, rest, energy, expected;
    kbc_plan_estimate(&plan, &cap, &rest, &energy, &expected);
    cr_assert_eq(calls, 6, "the records are read, plan() is not asked again");
}

/* A worker's plan: the same experiments, no plan() call, no records. */
Test(config, an_unplanned_plan_calls_no_plan)
{
    d.msg[0] = '\0';
    cr_assert_eq(kbc_ini_load_string("exp.ini", "[a]\nplugin = reduce\nn = 1, 2, 3\n", &ini, &d),
                 0, "%s", d.msg);
    cr_assert_eq(kbc_plan_build_unplanned(&ini, &reg, &plan, &d), 0, "%s", d.msg);
    cr_assert_eq(plan.exps[0].n_points, 3);
    cr_assert_eq(calls, 0);
    kbc_point_plan pp;
    kbc_plan_point(&plan.exps[0], 1, &pp);
    cr_assert_eq(pp.status, KBC_PLAN_FAILED);
    assert_has(pp.sentence, "holds no plan of point 1 of experiment [a]");
}

Test(config, plan_failures)
{
    build_fails("[a]\n"
                "plugin = reduce\n"
                "[bad one]\n"
                "plugin = reduce\n"
                "dtype = f64\n"
                "iters = 600\n",
                3,
                "experiment [bad one] point n=1024, dtype=f64, scale=1.5, iters=600, check=true: "
                "iters above 500 is not supported for f64.",
                NULL);
    cr_assert_eq(build_named("exp.ini", "[a]\nplugin = reduce\nn = 1M, 1G\ndtype = f64\n",
                             4ULL << 30),
                 -1);
    assert_has(d.msg, "exp.ini:1: experiment [a] point n=1073741824, dtype=f64");
    assert_has(d.msg, "needs 8.0 GiB of device memory and the device has 4.0 GiB");
    kbc_ini_free(&ini);
    /* The same file fits a larger device, and device_mem 0 checks nothing. */
    cr_assert_eq(build_named("exp.ini", "[a]\nplugin = reduce\nn = 1M, 1G\ndtype = f64\n",
                             8ULL << 30),
                 0, "%s", d.msg);
}

/* The plan's memory check counts the variants of the experiment only: a
   library's storage (kb_work.variant_device_bytes) where `lib` runs. */
Test(config, device_memory_is_the_experiments_variants)
{
    cr_assert_eq(build_named("exp.ini", "[a]\nplugin = libmem\nn = 1G\nvariants = cpu, own\n",
                             8ULL << 30),
                 0, "%s", d.msg);
    kbc_plan_free(&plan);
    kbc_ini_free(&ini);
    cr_assert_eq(build_named("exp.ini", "[a]\nplugin = libmem\nn = 1G\nvariants = own, lib\n",
                             8ULL << 30),
                 -1);
    assert_has(d.msg, "needs 16.0 GiB of device memory and the device has 8.0 GiB");
}

/* The dry run shows the device memory of the experiment's variants. */
Test(config, dry_run_shows_the_variants_device_memory)
{
    build_ok("[own]\nplugin = libmem\nn = 1M\nvariants = own\n"
             "[lib]\nplugin = libmem\nn = 1M\nvariants = own, lib\n");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    kbc_plan_print(&plan, f);
    fclose(f);
    char *lib = strstr(buf, "[lib]");
    cr_assert_not_null(lib, "%s", buf);
    cr_assert_not_null(strstr(lib, "16.0 MiB"), "%s", buf);
    *lib = '\0';
    cr_assert_null(strstr(buf, "16.0 MiB"), "%s", buf);
    free(buf);
}

/* plan() sees no device on any path: the runner's host has one, and
   plan() must still be shown none (kbench/plugin.h, plan). */
Test(config, plan_is_shown_no_device)
{
    kb_host h;
    kbc_hostctx hc;
    memset(&hc, 0, sizeof hc);
    kbc_host_init(&h, &hc, "libmem", 1, 2);
    int stream_stand_in;
    h.stream = &stream_stand_in;
    h.device = 0;
    h.sm_count = 132;
    h.l2_bytes = 50u << 20;
    kb_value v[2] = {{.u = 1000}, {.i = 0}};
    kb_work w;
    kbc_error err;
    int rc = kbc_call_plan(kbc_instance_of(&libmem_desc, &h), v, &w, NULL, &err);
    cr_assert_eq(rc, KB_OK, "%s", err.sentence);
    cr_assert_eq(w.device_bytes, 4000);
    cr_assert_eq(w.variant_device_bytes[2], 12000);
    cr_assert_eq(kbc_work_device_bytes(&w, KB_VARIANT_BIT(1)), 4000);
    cr_assert_eq(kbc_work_device_bytes(&w, KB_VARIANT_BIT(1) | KB_VARIANT_BIT(2)), 16000);
    /* The caller's host keeps its device. */
    cr_assert_eq(h.sm_count, 132);
    cr_assert_eq(h.stream, &stream_stand_in);
}

/* Before setup the point admits its variants in order while their device
   memory fits: 4 GiB shared, `lib` 12 GiB more. */
Test(config, variants_are_admitted_while_their_memory_fits)
{
    kb_work w;
    memset(&w, 0, sizeof w);
    w.device_bytes = 4ull << 30;
    w.variant_device_bytes[2] = 12ull << 30;
    uint64_t need;
    cr_assert(kbc_work_fits(&w, 0, 1, 8ull << 30, &need));
    cr_assert_eq(need, 4ull << 30);
    cr_assert_not(kbc_work_fits(&w, KB_VARIANT_BIT(1), 2, 8ull << 30, &need));
    cr_assert_eq(need, 16ull << 30);
    cr_assert(kbc_work_fits(&w, KB_VARIANT_BIT(1), 2, 16ull << 30, &need));
    /* Free memory not known: everything fits. */
    cr_assert(kbc_work_fits(&w, KB_VARIANT_BIT(1), 2, 0, &need));
}

Test(config, too_many_points)
{
    build_fails("[a]\nplugin = reduce\nn = 1..5000:+1\niters = 1..1000:+1\nscale = 1, 2, 3\n", 1,
                "experiment [a] expands to more than 10000000 points",
                "(n: 5000 values, scale: 3 values, iters: 1000 values)");
    build_fails("[a]\nplugin = reduce\nn = 1..5000:+1\niters = 1..1000:+1\n"
                "[b]\nplugin = reduce\nn = 1..5000:+1\niters = 1..1000:+1\nscale = 1, 2\n",
                5, "brings the plan to more than 10000000 points", NULL);
}

Test(config, plugin_path)
{
    /* Relative to the INI file's folder, and refused with the key's line. */
    cr_assert_eq(build_named("/tmp/kbench-nowhere/exp.ini",
                             "[global]\nplugin_path = nope\n[a]\nplugin = reduce\n", 0),
                 -1);
    assert_has(d.msg, "/tmp/kbench-nowhere/exp.ini:2: key 'plugin_path' in [global]: ");
    assert_has(d.msg, "/tmp/kbench-nowhere/nope");
    kbc_ini_free(&ini);

    /* An empty folder next to the file: accepted with a warning on stderr
       (tests/test_cli.c checks its text), and the plugins already
       registered are still found. */
    char dir[] = "/tmp/kbench-test-config-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *path = NULL, *sub = NULL;
    cr_assert_gt(asprintf(&path, "%s/exp.ini", dir), 0);
    cr_assert_gt(asprintf(&sub, "%s/plugins", dir), 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    size_t before = reg.n;
    cr_assert_eq(build_named(path, "[global]\nplugin_path = plugins:.\n[a]\nplugin = reduce\n", 0),
                 0, "%s", d.msg);
    cr_assert_eq(reg.n, before);
    cr_assert_eq(plan.n, 1);
    rmdir(sub);
    rmdir(dir);
    free(path);
    free(sub);
}

/* ---- cache = hot | cold, and the core-key table -------------------------- */

Test(config, cache_defaults_to_hot)
{
    build_ok("[a]\nplugin = reduce\n");
    cr_assert_eq(plan.exps[0].measure.cache_cold, 0);
}

Test(config, cache_cold_is_accepted)
{
    build_ok("[a]\nplugin = reduce\ncache = cold\n");
    cr_assert_eq(plan.exps[0].measure.cache_cold, 1);
}

Test(config, cache_hot_is_accepted)
{
    build_ok("[global]\ncache = cold\n[a]\nplugin = reduce\ncache = hot\n[b]\nplugin = scan\n");
    cr_assert_eq(exp_named("a")->measure.cache_cold, 0);
    cr_assert_eq(exp_named("b")->measure.cache_cold, 1, "[b] inherits cache = cold");
}

Test(config, cache_bad_value_names_file_line_key)
{
    build_fails("[a]\nplugin = reduce\ncache = lukewarm\n", 3,
                "key 'cache' in [a]: 'lukewarm' is not one of the allowed values (hot, cold).",
                NULL);
}

Test(config, cache_takes_one_value)
{
    build_fails("[a]\nplugin = reduce\ncache = hot, cold\n", 3,
                "key 'cache' in [a]: 'hot, cold' is a sweep, but 'cache' takes one value", NULL);
}

Test(config, a_swept_core_key_says_how_to_write_two_experiments)
{
    build_fails("[a]\nplugin = reduce\ncache = hot, cold\n", 3,
                "to compare them, write one experiment per value, each with the same other keys: "
                "[a-cache-hot] with cache = hot, and [a-cache-cold] with cache = cold.",
                NULL);
}

Test(config, a_swept_batch_range_says_how_to_write_two_experiments)
{
    build_fails("[a]\nplugin = reduce\nbatch = 1..64:x4\n", 3,
                "[a-batch-1] with batch = 1, and [a-batch-64] with batch = 64.", NULL);
}

/* ---- batch = off | auto | N ----------------------------------------------- */

Test(config, batch_defaults_to_off)
{
    build_ok("[a]\nplugin = reduce\n");
    cr_assert_eq(plan.exps[0].measure.batch, KBC_BATCH_OFF);
}

Test(config, batch_auto_is_accepted)
{
    build_ok("[a]\nplugin = reduce\nbatch = auto\n");
    cr_assert_eq(plan.exps[0].measure.batch, KBC_BATCH_AUTO);
}

Test(config, batch_count_is_accepted)
{
    build_ok("[a]\nplugin = reduce\nbatch = 64\n");
    cr_assert_eq(plan.exps[0].measure.batch, 64);
}

Test(config, batch_of_one_is_refused)
{
    build_fails("[a]\nplugin = reduce\nbatch = 1\n", 3,
                "key 'batch' in [a]: '1' is not off, auto or a number of runs per sample", NULL);
}

Test(config, batch_word_is_refused)
{
    build_fails("[a]\nplugin = reduce\nbatch = many\n", 3,
                "'many' is not off, auto or a number of runs per sample", NULL);
}

Test(config, batch_count_with_cold_cache_is_refused)
{
    build_fails("[a]\nplugin = reduce\ncache = cold\nbatch = 8\n", 4,
                "batch = 8 cannot be used with cache = cold", NULL);
}

/* ---- energy = off | auto | on, energy_window ------------------------------ */

Test(config, energy_defaults_to_off_with_a_one_second_window)
{
    build_ok("[a]\nplugin = reduce\n");
    cr_assert_eq(plan.exps[0].measure.energy, KBC_ENERGY_OFF);
    cr_assert_float_eq(plan.exps[0].measure.energy_window_s, 1.0, 0);
}

Test(config, energy_on_and_auto_are_accepted)
{
    build_ok("[global]\nenergy = on\n[a]\nplugin = reduce\n[b]\nplugin = scan\nenergy = auto\n"
             "energy_window = 500ms\n");
    cr_assert_eq(exp_named("a")->measure.energy, KBC_ENERGY_ON);
    cr_assert_eq(exp_named("b")->measure.energy, KBC_ENERGY_AUTO);
    cr_assert_float_eq(exp_named("b")->measure.energy_window_s, 0.5, 1e-15);
}

Test(config, energy_bad_value_names_file_line_key)
{
    build_fails("[a]\nplugin = reduce\nenergy = maybe\n", 3,
                "key 'energy' in [a]: 'maybe' is not one of the allowed values (off, auto, on).",
                NULL);
}

Test(config, energy_window_below_a_millisecond_is_refused)
{
    build_fails("[a]\nplugin = reduce\nenergy = on\nenergy_window = 0\n", 4,
                "key 'energy_window' in [a]", NULL);
}

Test(config, energy_window_not_a_duration_is_refused)
{
    build_fails("[a]\nplugin = reduce\nenergy_window = long\n", 3,
                "'long' is not a duration", NULL);
}

/* 3 points x 1 CUDA variant x 5 windows x 2 s; the CPU variant has none. */
Test(config, the_dry_run_counts_the_energy_windows)
{
    build_ok("[a]\nplugin = reduce\nvariants = cpu, simple\nbudget = 2\nn = 1K, 2K, 4K\n"
             "energy = on\nenergy_window = 2\n");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    kbc_plan_print(&plan, f);
    fclose(f);
    assert_has(text, "energy on, energy_window 2 s");
    assert_has(text, "(the energy windows are 30 s of it: 5 windows of at least\n");
    free(text);
}

Test(config, energy_windows_defaults_to_five_and_takes_five_to_sixteen)
{
    build_ok("[global]\nenergy = on\n[a]\nplugin = reduce\n[b]\nplugin = scan\n"
             "energy_windows = 16\n");
    cr_assert_eq(exp_named("a")->measure.energy_windows, 5);
    cr_assert_eq(exp_named("b")->measure.energy_windows, 16);
    build_fails("[a]\nplugin = reduce\nenergy = on\nenergy_windows = 4\n", 4,
                "key 'energy_windows' in [a]", NULL);
    build_fails("[a]\nplugin = reduce\nenergy = on\nenergy_windows = 17\n", 4,
                "key 'energy_windows' in [a]", NULL);
}

/* 3 points x 1 CUDA variant x 12 windows x 2 s. */
Test(config, the_dry_run_counts_energy_windows)
{
    build_ok("[a]\nplugin = reduce\nvariants = cpu, simple\nbudget = 2\nn = 1K, 2K, 4K\n"
             "energy = on\nenergy_window = 2\nenergy_windows = 12\n");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    kbc_plan_print(&plan, f);
    fclose(f);
    assert_has(text, "energy on, energy_window 2 s, energy_windows 12");
    assert_has(text, "(the energy windows are 72 s of it: 12 windows of at least\n");
    free(text);
}

Test(config, the_dry_run_without_energy_says_nothing_of_it)
{
    build_ok("[a]\nplugin = reduce\nvariants = cpu, simple\nn = 1K\n");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    kbc_plan_print(&plan, f);
    fclose(f);
    cr_assert_null(strstr(text, "energy"), "%s", text);
    free(text);
}

/* The plan's identity: energy off leaves the hash as it was (journals of
   earlier runs still resume); energy on is another plan. */
Test(config, energy_off_keeps_the_plan_hash_and_on_changes_it)
{
    char plain[65], off[65], on[65];
    build_ok("[a]\nplugin = reduce\n");
    kbc_plan_hash(&plan, plain);
    kbc_plan_free(&plan);
    kbc_ini_free(&ini);
    build_ok("[a]\nplugin = reduce\nenergy = off\nenergy_window = 3\n");
    kbc_plan_hash(&plan, off);
    kbc_plan_free(&plan);
    kbc_ini_free(&ini);
    build_ok("[a]\nplugin = reduce\nenergy = on\n");
    kbc_plan_hash(&plan, on);
    cr_assert_str_eq(plain, off);
    cr_assert_str_neq(plain, on);
}

/* The watchdog of a point makes room for twice its CUDA variants' windows:
   300 s + 2 x 10 s budget x 2 variants + 2 x 5 windows x 2 s x 1 CUDA. */
Test(config, the_watchdog_counts_the_energy_windows)
{
    build_ok("[a]\nplugin = reduce\nvariants = cpu, simple\nenergy = auto\nenergy_window = 2\n");
    kbc_job j = {.exp = 0, .point = 0};
    cr_assert_float_eq(kbc_job_timeout(&plan, &j), 300.0 + 40.0 + 20.0, 1e-9);
}

Test(config, batch_auto_with_cold_cache_is_accepted)
{
    build_ok("[a]\nplugin = reduce\ncache = cold\nbatch = auto\n");
    cr_assert_eq(plan.exps[0].measure.batch, KBC_BATCH_AUTO);
}

/* Each measure row's declaration carries the row's name, and its default
   parses; every row can be printed. */
Test(core_keys, measure_rows_are_consistent)
{
    size_t measures = 0;
    for (size_t i = 0; i < kbc_n_core_keys; i++) {
        const kbc_core_key *k = &kbc_core_keys[i];
        cr_assert_not_null(kbc_core_key_default(k), "%s", k->name);
        cr_assert_neq(kbc_core_key_help(k)[0], '\0', "%s has no help", k->name);
        cr_assert_eq(kbc_core_key_find(k->name), k);
        if (k->kind != KBC_KIND_MEASURE)
            continue;
        measures++;
        cr_assert_not_null(k->param, "%s", k->name);
        cr_assert_str_eq(k->param->name, k->name);
        cr_assert_neq(k->store, KBC_STORE_NONE, "%s", k->name);
        kb_value v;
        char why[256] = "";
        cr_assert_eq(kbc_core_key_parse(k, k->param->def, &v, why, sizeof why), 0, "%s: %s",
                     k->name, why);
    }
    cr_assert_eq(measures, 18,
                 "warmup, runs, budget, min_runs, max_runs, noise, min_time, seed, "
                 "include_copies, cpu_threads, cache, batch, timeout, energy, energy_window, "
                 "energy_windows, integrity, prefetch");
    cr_assert_null(kbc_core_key_find("n"));
}

Test(core_keys, cache_row)
{
    const kbc_core_key *k = kbc_core_key_find("cache");
    cr_assert_not_null(k);
    cr_assert_eq(k->kind, KBC_KIND_MEASURE);
    cr_assert_str_eq(kbc_core_key_default(k), "hot");
    cr_assert_eq(k->where, KBC_IN_ANY);
    kbc_measure m;
    memset(&m, 0, sizeof m);
    kbc_core_key_store_value(k, (kb_value){.i = 1}, &m);
    cr_assert_eq(m.cache_cold, 1);
    cr_assert_eq(m.cpu_threads, 0, "only the row's own field is written");
    cr_assert_eq(m.include_copies, 0);
}

Test(core_keys, plugin_path_is_global_only)
{
    const kbc_core_key *k = kbc_core_key_find("plugin_path");
    cr_assert_not_null(k);
    cr_assert_eq(k->where, KBC_IN_GLOBAL);
}

Test(core_keys, print_lists_every_key)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    kbc_core_keys_print(f);
    fclose(f);
    for (size_t i = 0; i < kbc_n_core_keys; i++) {
        char want[64];
        snprintf(want, sizeof want, "  %s ", kbc_core_keys[i].name);
        assert_has(buf, want);
    }
    assert_has(buf, "cold flushes the L2 before every timed run, outside the timed region");
    assert_has(buf, "([global] only)");
    free(buf);
}

/* ---- variants = all, ... ---------------------------------------------- */

Test(config, all_stands_alone_in_variants)
{
    build_fails("[a]\nplugin = reduce\nvariants = all, cpu\n", 3,
                "key 'variants' in [a]: 'all' stands alone: it selects every variant, so write "
                "either 'variants = all' or a list of variant names without it (the list was "
                "'all, cpu').",
                NULL);
}

Test(config, all_stands_alone_anywhere_in_the_list)
{
    build_fails("[global]\nvariants = cpu, ALL\n[a]\nplugin = reduce\n", 2,
                "key 'variants' in [global] (inherited by [a]): 'all' stands alone", NULL);
}

Test(config, all_alone_is_every_variant)
{
    build_ok("[a]\nplugin = reduce\nvariants = All\n");
    cr_assert_eq(plan.exps[0].n_variants, 4);
}

/* ---- host memory at plan time ------------------------------------------ */

/* A CPU plugin whose plan asks for n bytes of host memory. */
static const kb_param hog_params[] = {
    {.name = "host", .type = KB_PARAM_SIZE, .def = "1K", .min = 1, .max = 0}};
static const kb_variant hog_variants[] = {
    {.name = "cpu", .backend = KB_BACKEND_CPU, .summary = "a loop"}};

static int hog_plan(const kb_value *v, kb_work *out, kb_host *h)
{
    out->bytes_read = 8;
    out->host_bytes = v[0].u;
    return KB_OK;
}

static const kb_plugin hog_desc = {
    KB_PLUGIN_HEADER, .name = "hog", .summary = "asks for host memory", KB_PARAMS(hog_params),
    KB_VARIANTS(hog_variants), .ops = STUB_OPS(hog_plan)};

Test(config, host_memory_beyond_the_machine_is_refused)
{
    add(&hog_desc, "/fake/hog.so");
    build_fails("[small]\nplugin = hog\n\n[huge]\nplugin = hog\nhost = 1K, 2^62\n", 4,
                "experiment [huge] point host=4611686018427387904: it needs 4.0 EiB of host "
                "memory and this machine has ",
                NULL);
}

Test(config, host_memory_within_the_machine_passes)
{
    add(&hog_desc, "/fake/hog.so");
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    cr_assert_gt(pages, 0);
    char text[200];
    /* Exactly the machine's memory is allowed; one byte more is not. */
    unsigned long long all = (unsigned long long)pages * (unsigned long long)page;
    snprintf(text, sizeof text, "[a]\nplugin = hog\nhost = %llu\n", all);
    build_ok(text);
    kbc_plan_free(&plan);
    kbc_ini_free(&ini);
    snprintf(text, sizeof text, "[a]\nplugin = hog\nhost = %llu\n", all + 1);
    build_fails(text, 1, "of host memory and this machine has", NULL);
}

/* The plan of 100,000 experiments is built in one pass over the file (the
   INI layer once made this quadratic); the suite's timeout catches a
   regression. */
Test(config, a_hundred_thousand_experiments_build)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fputs("[global]\nplugin = scan\n", f);
    for (int i = 0; i < 100000; i++)
        fprintf(f, "[e%d]\n", i);
    fclose(f);
    build_ok(buf);
    cr_assert_eq(plan.n, 100000);
    cr_assert_str_eq(plan.exps[99999].name, "e99999");
    cr_assert_eq(plan.n_points, 100000);
    free(buf);
}

/* ---- zip: parameters that advance together ---- */

Test(config, zip_zipped_parameters_advance_together)
{
    build_ok("[a]\nplugin = reduce\nn = 1K, 2K, 4K\niters = 1, 2, 3\ndtype = f32, f64\n"
             "zip = n, iters\n");
    const kbc_experiment *e = exp_named("a");
    cr_assert_eq(e->n_points, 6, "3 (n with iters) x 2 (dtype), not %llu",
                 (unsigned long long)e->n_points);
    kb_value v[5];
    /* n is the slowest digit, dtype the fastest; iters follows n. */
    const uint64_t ns[] = {1024, 1024, 2048, 2048, 4096, 4096};
    const int64_t iters[] = {1, 1, 2, 2, 3, 3};
    const int64_t dts[] = {0, 1, 0, 1, 0, 1};
    for (uint64_t p = 0; p < 6; p++) {
        kbc_experiment_point(e, p, v);
        cr_assert_eq(v[P_N].u, ns[p], "point %llu", (unsigned long long)p);
        cr_assert_eq(v[P_ITERS].i, iters[p], "point %llu", (unsigned long long)p);
        cr_assert_eq(v[P_DTYPE].i, dts[p], "point %llu", (unsigned long long)p);
    }
}

Test(config, zip_sweeps_of_different_lengths_are_refused)
{
    build_fails("[a]\nplugin = reduce\nn = 1K, 2K, 4K\niters = 1, 2\nzip = n, iters\n", 5,
                "key 'zip' in [a]", "'iters' has 2 values and 'n' 3");
}

Test(config, zip_a_name_that_is_not_a_parameter_is_refused)
{
    build_fails("[a]\nplugin = reduce\nn = 1K, 2K\nzip = n, m\n", 4, "key 'zip' in [a]",
                "'m' is not a parameter of plugin 'reduce'");
}

Test(config, zip_a_parameter_named_twice_is_refused)
{
    build_fails("[a]\nplugin = reduce\nn = 1K, 2K\niters = 1, 2\nzip = n, iters, n\n", 5,
                "key 'zip' in [a]", "'n' is named twice");
}

Test(config, zip_one_parameter_alone_is_refused)
{
    build_fails("[a]\nplugin = reduce\nn = 1K, 2K\nzip = n\n", 4, "key 'zip' in [a]",
                "at least two parameters");
}

/* The dry run states the time the run can take: the timed runs are bounded
   by each variant's budget at each point (3 points x 2 variants x 2 s). */
Test(config, the_dry_run_bounds_the_timed_runs_by_the_budgets)
{
    build_ok("[a]\nplugin = reduce\nvariants = cpu, simple\nbudget = 2\nn = 1K, 2K, 4K\n");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    kbc_plan_print(&plan, f);
    fclose(f);
    assert_has(text, "at most 12 s");
    assert_has(text, "(a model: the timed runs");
    free(text);
}

static char *printed(double earlier_s, const char *from)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    kbc_plan_print_with(&plan, earlier_s, from, f);
    fclose(f);
    return text;
}

/* 3 sizes x 2 inclusive x 2 variants are 12 rows, but nonly reads only n:
   it runs at 3 points, so the run makes 9 variant runs. */
Test(config, the_dry_run_counts_the_variant_runs_as_the_run_makes_them)
{
    add(&flat_desc, "/fake/flat.so");
    build_ok("[a]\nplugin = flat\nn = 1K, 2K, 4K\ninclusive = false, true\n");
    cr_assert_eq(kbc_plan_variant_runs(&plan), 9);
    char *text = printed(NAN, NULL);
    assert_has(text, "1 experiment, 6 points, 9 variant runs for 12 rows (a variant that");
    free(text);
}

Test(config, a_point_plan_refuses_makes_no_variant_run)
{
    build_ok("[a]\nplugin = reduce\nvariants = cpu, fast\ndtype = f32, f64\niters = 600\n");
    cr_assert_eq(plan.exps[0].n_invalid, 1);
    cr_assert_eq(kbc_plan_variant_runs(&plan), 2);
}

Test(config, the_estimate_counts_each_points_host_work)
{
    /* n = 256M floats: 1 GiB read, about a second of the host's inputs and
       checks, whatever the variants' own model. */
    build_ok("[a]\nplugin = reduce\nvariants = cpu\nruns = 1\nwarmup = 0\nn = 256M\n");
    double cap, rest, energy, expected;
    kbc_plan_estimate(&plan, &cap, &rest, &energy, &expected);
    cr_assert_gt(rest, 1.07, "rest %g", rest);
    cr_assert_lt(rest, 1.07 + 0.05 + 0.11 + 0.01, "rest %g", rest);
}

Test(config, an_earlier_run_of_the_plan_gives_the_estimate_in_one_sentence)
{
    build_ok("[a]\nplugin = reduce\nvariants = cpu, simple\nbudget = 2\nn = 1K, 2K, 4K\n");
    char *text = printed(10.8, "out/results.json");
    assert_has(text, "time: about 11 s on one worker, as the last run of this plan took "
                     "(out/results.json); the");
    cr_assert_null(strstr(text, "a model"), "%s", text);
    free(text);
}

/* ---- the command line's changes (kbc_ini_narrow) ---- */

static const char narrow_ini[] = "[global]\nruns = 3\n"
                                 "[red-small]\nplugin = reduce\nn = 1K\n"
                                 "[red-big]\nplugin = reduce\nn = 1M\nruns = 7\n"
                                 "[scan-one]\nplugin = scan\n";

/* Loads narrow_ini, applies the changes and builds the plan. */
static int narrowed(const char *experiments, const char *const *sets, size_t n_sets,
                    const char *variants)
{
    d.msg[0] = '\0';
    cr_assert_eq(kbc_ini_load_string("exp.ini", narrow_ini, &ini, &d), 0, "%s", d.msg);
    if (kbc_ini_narrow(&ini, experiments, sets, n_sets, variants, &d) != 0)
        return -1;
    return kbc_plan_build(&ini, &reg, 0, &plan, &d);
}

Test(config, experiment_globs_keep_only_the_experiments_they_match)
{
    cr_assert_eq(narrowed("red-*", NULL, 0, NULL), 0, "%s", d.msg);
    cr_assert_eq(plan.n, 2);
    cr_assert_str_eq(plan.exps[0].name, "red-small");
    cr_assert_str_eq(plan.exps[1].name, "red-big");
}

Test(config, an_experiment_glob_that_matches_nothing_is_refused_naming_the_experiments)
{
    cr_assert_eq(narrowed("red-small,nosuch", NULL, 0, NULL), -1);
    assert_has(d.msg, "no experiment of exp.ini matches 'nosuch'");
    assert_has(d.msg, "red-small, red-big, scan-one");
}

Test(config, a_sectioned_set_changes_that_experiment_only)
{
    const char *sets[] = {"red-small.n = 4K"};
    cr_assert_eq(narrowed(NULL, sets, 1, NULL), 0, "%s", d.msg);
    kb_value v[5];
    kbc_experiment_point(exp_named("red-small"), 0, v);
    cr_assert_eq(v[P_N].u, 4096);
    kbc_experiment_point(exp_named("red-big"), 0, v);
    cr_assert_eq(v[P_N].u, 1048576);
}

Test(config, a_plain_set_changes_the_whole_run_also_where_an_experiment_set_the_key)
{
    const char *sets[] = {"runs=9"};
    cr_assert_eq(narrowed(NULL, sets, 1, NULL), 0, "%s", d.msg);
    cr_assert_eq(exp_named("red-small")->measure.runs, 9);
    cr_assert_eq(exp_named("red-big")->measure.runs, 9, "red-big's own runs = 7 was kept");
}

Test(config, a_set_of_an_unknown_key_is_named_as_set)
{
    const char *sets[] = {"red-big.nope=1"};
    cr_assert_eq(narrowed(NULL, sets, 1, NULL), -1);
    cr_assert_eq(strncmp(d.msg, "--set: unknown key 'nope' in [red-big]", 38), 0, "%s", d.msg);
}

Test(config, a_set_without_an_equals_sign_is_refused)
{
    const char *sets[] = {"runs"};
    cr_assert_eq(narrowed(NULL, sets, 1, NULL), -1);
    assert_has(d.msg, "--set 'runs' is not KEY=VALUE");
}

Test(config, variants_on_the_command_line_are_every_kept_experiments_variants)
{
    cr_assert_eq(narrowed("red-*", NULL, 0, "cpu,lib"), 0, "%s", d.msg);
    for (size_t i = 0; i < plan.n; i++) {
        cr_assert_eq(plan.exps[i].n_variants, 2, "[%s]", plan.exps[i].name);
        cr_assert_str_eq(plan.exps[i].plugin->desc->variants[plan.exps[i].variants[1]].name,
                         "lib");
    }
}

/* ---- narrowing never fights the file (--variants) ---- */

static const char lib_ini[] = "[red-lib]\nplugin = reduce\nvariants = all\n"
                              "baseline = lib\nreference = lib\nn = 1K\n";

/* Loads text, narrows its variants to `variants` (and sets) and builds. */
static int narrowed_text(const char *text, const char *const *sets, size_t n_sets,
                         const char *variants)
{
    d.msg[0] = '\0';
    cr_assert_eq(kbc_ini_load_string("exp.ini", text, &ini, &d), 0, "%s", d.msg);
    if (kbc_ini_narrow(&ini, NULL, sets, n_sets, variants, &d) != 0)
        return -1;
    return kbc_plan_build(&ini, &reg, 0, &plan, &d);
}

static const char *variant_name(const kbc_experiment *e, int v)
{
    return v < 0 ? "(none)" : e->plugin->desc->variants[v].name;
}

Test(config, variants_that_leave_out_the_files_baseline_fall_back_to_the_first_selected)
{
    cr_assert_eq(narrowed_text(lib_ini, NULL, 0, "cpu,fast"), 0, "%s", d.msg);
    const kbc_experiment *e = exp_named("red-lib");
    cr_assert_str_eq(variant_name(e, e->baseline), "cpu");
    cr_assert_eq(e->reference, -1, "the reference that was left out is dropped");
    cr_assert_str_eq(variant_name(e, e->dropped_baseline), "lib");
    cr_assert_str_eq(variant_name(e, e->dropped_reference), "lib");
}

Test(config, a_dropped_baseline_and_reference_get_one_note_line_each)
{
    static const char two[] = "[a]\nplugin = reduce\nbaseline = lib\nreference = lib\n"
                              "[b]\nplugin = reduce\nbaseline = lib\nreference = lib\n";
    cr_assert_eq(narrowed_text(two, NULL, 0, "cpu,fast"), 0, "%s", d.msg);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    kbc_plan_notes(&plan, f);
    fclose(f);
    cr_assert_str_eq(text,
                     "kbench: note: --variants leaves out the baseline 'lib' of [a], [b]: "
                     "speed-ups are against 'cpu', the first selected variant\n"
                     "kbench: note: --variants leaves out the reference 'lib' of [a], [b]: the "
                     "run has no reference\n");
    free(text);
}

Test(config, a_plan_that_keeps_its_baseline_has_no_note)
{
    cr_assert_eq(narrowed_text(lib_ini, NULL, 0, "cpu,lib"), 0, "%s", d.msg);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    kbc_plan_notes(&plan, f);
    fclose(f);
    cr_assert_eq(len, 0, "%s", text);
    free(text);
}

Test(config, a_baseline_typed_on_the_command_line_must_be_among_the_variants)
{
    const char *sets[] = {"red-lib.baseline=lib"};
    cr_assert_eq(narrowed_text(lib_ini, sets, 1, "cpu,fast"), -1);
    cr_assert_eq(strncmp(d.msg, "--set: key 'baseline' in [red-lib]", 34), 0, "%s", d.msg);
    assert_has(d.msg, "add it to --variants");
}

Test(config, reference_none_means_no_reference)
{
    build_ok("[x]\nplugin = reduce\nreference = none\n");
    cr_assert_eq(plan.exps[0].reference, -1);
    cr_assert_eq(plan.exps[0].baseline, 0);
}

Test(config, an_empty_reference_says_none_is_the_way_to_write_no_reference)
{
    build_fails("[x]\nplugin = reduce\nreference =\n", 3, "or none for no reference", NULL);
}

Test(config, variants_take_globs_as_experiment_does)
{
    cr_assert_eq(narrowed_text(lib_ini, NULL, 0, "c*, l?b"), 0, "%s", d.msg);
    const kbc_experiment *e = exp_named("red-lib");
    cr_assert_eq(e->n_variants, 2);
    cr_assert_str_eq(variant_name(e, (int)e->variants[0]), "cpu");
    cr_assert_str_eq(variant_name(e, (int)e->variants[1]), "lib");
    cr_assert_str_eq(variant_name(e, e->baseline), "lib", "the file's baseline is selected");
}

Test(config, a_glob_may_select_a_variant_already_named)
{
    cr_assert_eq(narrowed_text(lib_ini, NULL, 0, "lib,*"), 0, "%s", d.msg);
    const kbc_experiment *e = exp_named("red-lib");
    cr_assert_eq(e->n_variants, 4);
    cr_assert_str_eq(variant_name(e, (int)e->variants[0]), "lib");
    cr_assert_str_eq(variant_name(e, (int)e->variants[1]), "cpu");
}

Test(config, a_variant_glob_that_matches_nothing_names_the_option_typed)
{
    cr_assert_eq(narrowed_text(lib_ini, NULL, 0, "cpu,gpu*"), -1);
    cr_assert_eq(strncmp(d.msg, "--variants: key 'variants' in [red-lib]", 39), 0, "%s",
                 d.msg);
    assert_has(d.msg, "'gpu*' matches no variant of plugin 'reduce' (it has: cpu, simple");
}

Test(config, an_unknown_variant_from_the_command_line_names_variants_not_set)
{
    cr_assert_eq(narrowed_text(lib_ini, NULL, 0, "cpu,fsat"), -1);
    cr_assert_eq(strncmp(d.msg, "--variants: ", 12), 0, "%s", d.msg);
    assert_has(d.msg, "did you mean 'fast'?");
}

Test(config, a_file_whose_own_variants_leave_out_its_baseline_is_still_refused)
{
    build_fails("[x]\nplugin = reduce\nvariants = cpu\nbaseline = lib\n", 4,
                "'lib' is not among the selected variants (cpu); add it to 'variants'", NULL);
}
