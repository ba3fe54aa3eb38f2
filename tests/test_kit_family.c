/*
 * test_kit_family.c -- kbench/kit_family.h, the skeleton the families share,
 * on a tiny family of three rows (fixtures/kit/tiny_variants.def): the two
 * halves of the table row for row, the count, the needs of a mask, the
 * guards' codes and sentences, and the descriptor KBK_FAMILY_PLUGIN makes.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fake_host.h"

typedef struct tiny_impl {
    uint32_t needs;
    int tag;
} tiny_impl;

static const kb_param params[] = {
    {.name = "n", .type = KB_PARAM_SIZE, .def = "1", .min = 1, .max = 0},
};

#define TINY_VARIANT KBK_ROW
#define KBK_FAMILY_NAME "tiny"
#define KBK_FAMILY_IMPL tiny_impl
#define KBK_FAMILY_DEF "tiny_variants.def"
#include "kbench/kit_family.h"

KBK_FAMILY_PLUGIN(tiny, "a family of three rows", "things")

static int tiny_plan(const kb_value *p, kb_work *out, kb_host *h) { return KB_OK; }
static int tiny_setup(const kb_value *p, uint64_t vmask, kb_host *h, void **s) { return KB_OK; }
static int tiny_prepare(void *s, uint32_t v, kb_host *h) { return KB_OK; }
static int tiny_upload(void *s, uint32_t v, kb_host *h) { return KB_OK; }
static int tiny_run(void *s, uint32_t v, kb_host *h) { return kbk_variant_runs(h, v); }
static int tiny_download(void *s, uint32_t v, kb_host *h) { return KB_OK; }
static int tiny_verify(void *s, uint32_t v, kb_check *c, kb_host *h) { return KB_OK; }
static void tiny_teardown(void *s, kb_host *h) {}
static const void *tiny_extension(const char *name) { return NULL; }

static kb_host host(void *stream)
{
    kb_host h = {.size = sizeof(kb_host), .abi_minor = KB_ABI_MINOR, .stream = stream,
                 .device = stream ? 0 : -1, .cpu_threads = 1, .log = test_log,
                 .fail = test_fail};
    last_error[0] = 0;
    return h;
}

Test(kit_family, the_rows_give_both_halves_in_order)
{
    cr_assert_eq(KBK_N_VARIANTS, 3);
    static const char *const names[] = {"loop", "gpu", "lib"};
    for (uint32_t v = 0; v < KBK_N_VARIANTS; v++) {
        cr_assert_str_eq(variants[v].name, names[v]);
        cr_assert_eq(impls[v].tag, 10 * (int)(v + 1));
    }
    cr_assert_eq(variants[2].flags, KB_VARIANT_LIBRARY);
}

Test(kit_family, is_cuda_and_needs_of_a_mask)
{
    cr_assert_not(kbk_is_cuda(0));
    cr_assert(kbk_is_cuda(1));
    cr_assert_not(kbk_is_cuda(3), "no such variant");
    cr_assert_eq(kbk_needs_of(0), 0);
    cr_assert_eq(kbk_needs_of(KB_VARIANT_BIT(0) | KB_VARIANT_BIT(1)), 0x3);
    cr_assert_eq(kbk_needs_of(KB_VARIANT_BIT(2)), 0x6);
}

Test(kit_family, a_variant_past_the_table_is_refused)
{
    kb_host h = host(NULL);
    cr_assert_eq(kbk_variant_ok(&h, 2), KB_OK);
    cr_assert_eq(kbk_variant_ok(&h, 3), KB_EINVAL);
    cr_assert_str_eq(last_error, "tiny: no variant number 3");
    cr_assert_eq(kbk_variant_runs(&h, 7), KB_EINVAL);
}

Test(kit_family, a_cuda_variant_without_a_stream_is_unsupported)
{
    kb_host h = host(NULL);
    cr_assert_eq(kbk_variant_runs(&h, 0), KB_OK, "a CPU variant runs without a GPU");
    cr_assert_eq(kbk_variant_runs(&h, 1), KB_EUNSUPPORTED);
    cr_assert_str_eq(last_error, "tiny: gpu needs a GPU and none is in use");
    int stand_in;
    kb_host g = host(&stand_in);
    cr_assert_eq(kbk_variant_runs(&g, 2), KB_OK);
}

Test(kit_family, the_descriptor_and_its_entry)
{
    const kb_plugin *d = kbench_plugin(0);
    cr_assert_not_null(d);
    cr_assert_null(kbench_plugin(1));
    cr_assert_str_eq(d->name, "tiny");
    cr_assert_str_eq(d->summary, "a family of three rows");
    cr_assert_str_eq(d->item_name, "things");
    cr_assert_eq(d->n_variants, 3);
    cr_assert_eq(d->n_params, 1);
    cr_assert_eq(d->variant_size, sizeof(kb_variant));
    cr_assert_eq(d->ops->run, tiny_run);
    kb_host h = host(NULL);
    cr_assert_eq(d->ops->run(NULL, 1, &h), KB_EUNSUPPORTED);
}
