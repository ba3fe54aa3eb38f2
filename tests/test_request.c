/*
 * test_request.c -- the worker's request (exec/request.c), written and
 * read by one module: the arguments that start a worker come back as they
 * were given, and an order carries its point's plan whole (the work bit
 * for bit, the plugin's sentence as it was, marked as the supervisor's);
 * anything else on the worker's input is refused with a reason.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

Test(request, the_arguments_come_back_as_given)
{
    static const char *const paths[] = {"/a/plugins", "/b/one.so"};
    static const char *const sets[] = {"runs=3", "x.n=2^10"};
    kbc_request r = {.self = "/bin/kbench", .ini_path = "run.ini", .plugin_paths = paths,
                     .n_plugin_paths = 2, .experiment = "r*", .sets = sets, .n_sets = 2,
                     .variants = "cpu,gpu", .quiet = 1, .allow_shared = 1};
    static const char *const lead[] = {"compute-sanitizer", "--tool", "memcheck"};
    char **argv = kbc_request_argv(&r, lead, 3);
    cr_assert_str_eq(argv[0], "compute-sanitizer");
    cr_assert_str_eq(argv[3], "/bin/kbench");
    cr_assert_str_eq(argv[4], KBC_WORKER_COMMAND);
    int argc = 0;
    while (argv[argc])
        argc++;
    kbc_request back;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_request_read(argc - 4, argv + 4, &back, &d), 0, "%s", d.msg);
    cr_assert_str_eq(back.ini_path, "run.ini");
    cr_assert_eq(back.n_plugin_paths, 2);
    cr_assert_str_eq(back.plugin_paths[0], "/a/plugins");
    cr_assert_str_eq(back.plugin_paths[1], "/b/one.so");
    cr_assert_str_eq(back.experiment, "r*");
    cr_assert_eq(back.n_sets, 2);
    cr_assert_str_eq(back.sets[1], "x.n=2^10");
    cr_assert_str_eq(back.variants, "cpu,gpu");
    cr_assert_eq(back.quiet, 1);
    cr_assert_eq(back.allow_shared, 1);
    kbc_request_release(&back);
    free(argv);
}

Test(request, a_plain_request_has_no_options)
{
    kbc_request r = {.self = "kbench", .ini_path = "a.ini"};
    char **argv = kbc_request_argv(&r, NULL, 0);
    cr_assert_str_eq(argv[2], "a.ini");
    cr_assert_null(argv[3]);
    kbc_request back;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_request_read(2, argv + 1, &back, &d), 0, "%s", d.msg);
    cr_assert_null(back.experiment);
    cr_assert_eq(back.n_sets, 0);
    cr_assert_eq(back.quiet, 0);
    kbc_request_release(&back);
    free(argv);
}

Test(request, bad_arguments_are_refused)
{
    char *none[] = {"__worker", "-q"};
    char *bare[] = {"__worker", "a.ini", "--set"};
    char *odd[] = {"__worker", "a.ini", "b.ini"};
    kbc_request r;
    kbc_diag d = {{0}};
    cr_assert_eq(kbc_request_read(2, none, &r, &d), -1);
    cr_assert_str_eq(d.msg, "the worker was given no INI file");
    kbc_request_release(&r);
    cr_assert_eq(kbc_request_read(3, bare, &r, &d), -1);
    cr_assert_str_eq(d.msg, "the worker was given --set without its value");
    kbc_request_release(&r);
    cr_assert_eq(kbc_request_read(3, odd, &r, &d), -1);
    cr_assert_str_eq(d.msg, "the worker was given 'b.ini', which it does not take");
    kbc_request_release(&r);
}

Test(request, an_order_carries_its_plan_whole)
{
    kbc_order o = {.exp = 2, .point = 123456789012ULL, .mask = 0x8000000000000005ULL};
    o.plan.status = KBC_PLAN_REFUSED;
    o.plan.code = KB_EUNSUPPORTED;
    o.plan.work.bytes_read = UINT64_MAX;
    o.plan.work.flops = 1.0 / 3.0;
    o.plan.work.variant_device_bytes[63] = 12345;
    snprintf(o.plan.sentence, sizeof o.plan.sentence, "a \"tile\"\nof 3\\4 is too big");
    char *line = kbc_order_line(&o);
    size_t n = strlen(line);
    cr_assert_eq(line[n - 1], '\n');
    cr_assert_null(memchr(line, '\n', n - 1), "one line: %s", line);
    kbc_order back;
    char why[200] = "";
    cr_assert_eq(kbc_order_read(line, &back, why, sizeof why), 0, "%s", why);
    cr_assert_eq(back.quit, 0);
    cr_assert_eq(back.exp, 2);
    cr_assert_eq(back.point, 123456789012ULL);
    cr_assert_eq(back.mask, 0x8000000000000005ULL);
    cr_assert_eq(back.plan.status, KBC_PLAN_REFUSED);
    cr_assert_eq(back.plan.code, KB_EUNSUPPORTED);
    cr_assert_eq(memcmp(&back.plan.work, &o.plan.work, sizeof o.plan.work), 0);
    cr_assert_str_eq(back.plan.sentence, o.plan.sentence);
    cr_assert_eq(back.plan.carried, 1, "the worker's plan says it came from the supervisor");
    free(line);
}

/* The variants plan() refused at a point (kb_host.refuse) travel with it,
   each with its sentence, and a point without any carries none. */
Test(request, an_order_carries_the_variants_refused)
{
    kbc_order o = {.exp = 0, .point = 7, .mask = 0};
    o.plan.status = KBC_PLAN_RUNS;
    kbc_refusals_clear(&o.plan.refusals);
    kbc_refusals_add(&o.plan.refusals, 1, "block takes at most 128 threads, not \"129\"");
    kbc_refusals_add(&o.plan.refusals, 63, "the last variant");
    char *line = kbc_order_line(&o);
    kbc_order back;
    char why[200] = "";
    cr_assert_eq(kbc_order_read(line, &back, why, sizeof why), 0, "%s", why);
    cr_assert_eq(back.plan.refusals.mask, KB_VARIANT_BIT(1) | KB_VARIANT_BIT(63));
    cr_assert_str_eq(kbc_refusals_sentence(&back.plan.refusals, 1),
                     "block takes at most 128 threads, not \"129\"");
    cr_assert_str_eq(kbc_refusals_sentence(&back.plan.refusals, 63), "the last variant");
    cr_assert_null(kbc_refusals_sentence(&back.plan.refusals, 0));
    const char *s;
    cr_assert_eq(kbc_plan_variant(&back.plan, 1, &s), KBC_PLAN_REFUSED);
    cr_assert_eq(kbc_plan_variant(&back.plan, 0, &s), KBC_PLAN_RUNS);
    free(line);
    /* A variant past the 64 a plugin may have is not a refusal of this
       kbench: the whole order is refused. */
    kbc_refusals_clear(&o.plan.refusals);
    kbc_refusals_add(&o.plan.refusals, 10, "x");
    line = kbc_order_line(&o);
    char *at = strstr(line, "\"variant\":10,");
    cr_assert_not_null(at, "%s", line);
    memcpy(at, "\"variant\":70,", 13);
    cr_assert_eq(kbc_order_read(line, &back, why, sizeof why), -1, "%s", line);
    cr_assert(strstr(why, "the variants refused") != NULL, "%s", why);
    free(line);
    kbc_refusals_clear(&o.plan.refusals);
    line = kbc_order_line(&o);
    cr_assert_null(strstr(line, "refused"), "%s", line);
    free(line);
}

Test(request, quit_and_foreign_lines)
{
    kbc_order q = {.quit = 1}, back;
    char *line = kbc_order_line(&q);
    char why[200];
    cr_assert_eq(kbc_order_read(line, &back, why, sizeof why), 0);
    cr_assert_eq(back.quit, 1);
    free(line);
    why[0] = '\0';
    cr_assert_eq(kbc_order_read("point 0 1 0\n", &back, why, sizeof why), -1);
    cr_assert_str_eq(why, "it is not an order (a point or quit)");
    cr_assert_eq(kbc_order_read("{\"point\": {\"exp\": 0, \"point\": 1, \"mask\": \"0\", "
                                "\"plan\": {\"status\": \"runs\", \"code\": 0, "
                                "\"sentence\": \"\", \"work\": \"00ff\"}}}",
                                &back, why, sizeof why),
                 -1);
    cr_assert(strstr(why, "its plan is not a point's plan of this kbench") != NULL, "%s", why);
    cr_assert_eq(kbc_order_read("{\"point\": {\"exp\": -1, \"point\": 1, \"mask\": \"0\"}}",
                                &back, why, sizeof why),
                 -1);
    cr_assert_str_eq(why, "its point is not an experiment, a point and a mask");
}
