/*
 * plugin_fixture.h -- a family's test suite opens its plugin as the host
 * would (dlopen of the built shared object) and drives it through a host
 * built here: no stream, device -1, the fake log() and fail() of
 * fake_host.h, and the host's own abi_minor, so that the plugin writes
 * every field this kbench has (kb_work_set_peak, kb_work_add_variant_bytes).
 *
 *   #define FIXTURE_PLUGIN_PATH KBENCH_BINARY_DIR "/plugins/kbench-reduce.so"
 *   #include "plugin_fixture.h"
 *   TestSuite(reduce, .init = fixture_load, .fini = fixture_unload);
 *
 * A suite that needs more at load (a test extension) calls fixture_load()
 * from its own init.  Included once per test program, like fake_host.h
 * (kbench_test() puts tests/support on the include path).
 */
#ifndef KBENCH_TEST_PLUGIN_FIXTURE_H
#define KBENCH_TEST_PLUGIN_FIXTURE_H

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <string.h>

#include <kbench/plugin.h>

#include "fake_host.h"

#ifndef FIXTURE_PLUGIN_PATH
#error "define FIXTURE_PLUGIN_PATH (the plugin's .so) before including plugin_fixture.h"
#endif

static void *fixture_handle FAKE_HOST_MAYBE_UNUSED;
/* The plugin's first descriptor, set by fixture_load(). */
static const kb_plugin *plug FAKE_HOST_MAYBE_UNUSED;

/* Opens the plugin, finds its entry and descriptor 0, and clears the fake
   host's record of fail(). */
static FAKE_HOST_MAYBE_UNUSED void fixture_load(void)
{
    fixture_handle = dlopen(FIXTURE_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(fixture_handle, "cannot load %s: %s", FIXTURE_PLUGIN_PATH, dlerror());
    kb_entry_fn entry = (kb_entry_fn)dlsym(fixture_handle, KB_ENTRY_SYMBOL);
    cr_assert_not_null(entry, "no %s in the plugin", KB_ENTRY_SYMBOL);
    plug = entry(0);
    cr_assert_not_null(plug);
    last_error[0] = 0;
    fail_calls = 0;
    last_refusal[0] = 0;
    refused_mask = 0;
}

static FAKE_HOST_MAYBE_UNUSED void fixture_unload(void)
{
    if (fixture_handle)
        dlclose(fixture_handle);
    fixture_handle = NULL;
    plug = NULL;
}

/* A host without a GPU, as the runner gives one on a machine without one. */
static FAKE_HOST_MAYBE_UNUSED kb_host fixture_host(uint64_t seed, int cpu_threads)
{
    kb_host h = {.size = sizeof(kb_host), .abi_minor = KB_ABI_MINOR, .seed = seed,
                 .stream = NULL, .device = -1, .sm_count = 0, .l2_bytes = 0,
                 .cpu_threads = cpu_threads, .log = test_log, .fail = test_fail,
                 .refuse = test_refuse};
    return h;
}

/* The index of the variant named `name`; fails the test when there is none. */
static FAKE_HOST_MAYBE_UNUSED uint32_t fixture_variant(const char *name)
{
    for (uint32_t v = 0; v < plug->n_variants; v++)
        if (strcmp(plug->variants[v].name, name) == 0)
            return v;
    cr_assert_fail("no variant named %s", name);
    return 0;
}

#endif
