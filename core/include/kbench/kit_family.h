/*
 * kbench/kit_family.h -- the skeleton of a family whose variants are the
 * rows of a table, written once here instead of in every family.
 *
 * A family lists its variants in NAME_variants.def, one row each:
 *
 *   KBK_ROW((what the host sees: kb_variant fields), (how it runs: impl fields))
 *
 * (a family may keep a row macro of its own name and define it as KBK_ROW).
 * Its source then defines three names and includes this file once, after
 * its parameters and before its functions:
 *
 *   #define KBK_FAMILY_NAME "reduce"               (for sentences)
 *   #define KBK_FAMILY_IMPL kbr_impl               (the row's second half)
 *   #define KBK_FAMILY_DEF "reduce_variants.def"
 *   #include <kbench/kit_family.h>
 *
 * KBK_FAMILY_DEF is included from this header, so it is found on the include
 * path, not beside the family's source: kbench_add_plugin() puts each
 * source's folder there.
 *
 * It gets, all static:
 *
 *   variants[], impls[]  the two halves of the rows, row for row (the file
 *                        is read twice, so they cannot drift apart);
 *   KBK_N_VARIANTS       their count, checked against KB_MAX_VARIANTS and
 *                        the impls at compile time;
 *   kbk_is_cuda(v)       variant v is a CUDA variant;
 *   kbk_needs_of(mask)   the OR of the rows' `needs` (uint32_t) over the
 *                        variants in mask, for what setup() allocates;
 *   kbk_variant_ok(h, v) KB_OK, or KB_EINVAL and "NAME: no variant number v";
 *   kbk_variant_runs(h, v)
 *                        kbk_variant_ok, then KB_EUNSUPPORTED and "NAME: X
 *                        needs a GPU and none is in use" for a CUDA variant
 *                        without a stream.
 *
 * KBK_FAMILY_PLUGIN(p, summary, item_name), after the functions are
 * declared (KBK_OPS(p) declares them), defines the descriptor from
 * `params` and the table and exports it.  The macros of kbench/kit.h
 * (KBK_OPS, KBK_EXPORT_ONE) are what it is made of.
 */
#ifndef KBENCH_KIT_FAMILY_H
#define KBENCH_KIT_FAMILY_H

#include "kbench/kit.h"

#if !defined(KBK_FAMILY_NAME) || !defined(KBK_FAMILY_IMPL) || !defined(KBK_FAMILY_DEF)
#error "define KBK_FAMILY_NAME, KBK_FAMILY_IMPL and KBK_FAMILY_DEF before kbench/kit_family.h"
#endif

#if defined(__GNUC__)
#define KBK_MAYBE_UNUSED __attribute__((unused))
#else
#define KBK_MAYBE_UNUSED
#endif

#define KBK_FIELDS_(...) __VA_ARGS__

static const kb_variant variants[] = {
#define KBK_ROW(seen, impl) {KBK_FIELDS_ seen},
#include KBK_FAMILY_DEF
#undef KBK_ROW
};

static const KBK_FAMILY_IMPL impls[] = {
#define KBK_ROW(seen, impl) {KBK_FIELDS_ impl},
#include KBK_FAMILY_DEF
#undef KBK_ROW
};

#define KBK_N_VARIANTS ((uint32_t)(sizeof variants / sizeof variants[0]))
_Static_assert(sizeof impls / sizeof impls[0] == sizeof variants / sizeof variants[0],
               "one implementation row per variant");
_Static_assert(sizeof variants / sizeof variants[0] <= KB_MAX_VARIANTS,
               "too many variants for a 64-bit mask");

static KBK_MAYBE_UNUSED int kbk_is_cuda(uint32_t v)
{
    return v < KBK_N_VARIANTS && variants[v].backend == KB_BACKEND_CUDA;
}

static KBK_MAYBE_UNUSED uint32_t kbk_needs_of(uint64_t vmask)
{
    uint32_t needs = 0;
    for (uint32_t v = 0; v < KBK_N_VARIANTS; v++)
        if (vmask & KB_VARIANT_BIT(v))
            needs |= impls[v].needs;
    return needs;
}

static KBK_MAYBE_UNUSED int kbk_variant_ok(kb_host *host, uint32_t v)
{
    if (v >= KBK_N_VARIANTS)
        return host->fail(host, KB_EINVAL, KBK_FAMILY_NAME ": no variant number %u", v);
    return KB_OK;
}

static KBK_MAYBE_UNUSED int kbk_variant_runs(kb_host *host, uint32_t v)
{
    int rc = kbk_variant_ok(host, v);
    if (rc)
        return rc;
    if (kbk_is_cuda(v) && !host->stream)
        return host->fail(host, KB_EUNSUPPORTED,
                          KBK_FAMILY_NAME ": %s needs a GPU and none is in use", variants[v].name);
    return KB_OK;
}

#define KBK_FAMILY_PLUGIN(p, summary_text, item)                                         \
    KBK_OPS(p);                                                                          \
    static const kb_plugin p##_descriptor = {                                            \
        KB_PLUGIN_HEADER,                                                                \
        .name = KBK_FAMILY_NAME,                                                         \
        .summary = (summary_text),                                                       \
        KB_PARAMS(params),                                                               \
        KB_VARIANTS(variants),                                                           \
        .item_name = (item),                                                             \
        .ops = &p##_ops,                                                                 \
    };                                                                                   \
    KBK_EXPORT_ONE(p##_descriptor)

#endif /* KBENCH_KIT_FAMILY_H */
