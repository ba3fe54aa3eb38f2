/*
 * abi1.c -- stands for a plugin binary built against kbench ABI 1, for
 * run_external.sh: the installed kbench must refuse it and say where the
 * porting note is (docs/migrating.md).  It is not part of the example
 * project (CMakeLists.txt); run_external.sh compiles it alone.
 *
 * kbench/plugin.h now describes ABI 2, so this file lays out the ABI 1
 * descriptor itself.  Every version of the ABI starts the descriptor with
 * abi_major, abi_minor and size, and those three are all a host of another
 * major version reads before it refuses the plugin.
 */
#include <stddef.h>
#include <stdint.h>

/* ABI 1's operations lived inside the descriptor: plan, setup, prepare,
   upload, run, download, verify, teardown. */
struct abi1_ops {
    void (*fn[8])(void);
};

struct abi1_plugin {
    uint32_t abi_major, abi_minor, size;
    const char *name, *summary;
    const void *params;
    uint32_t n_params;
    const void *variants;
    uint32_t n_variants;
    const char *item_name;
    struct abi1_ops ops;
};

static const struct abi1_plugin desc = {
    .abi_major = 1,
    .abi_minor = 0,
    .size = sizeof(struct abi1_plugin),
    .name = "old",
    .summary = "a plugin built for kbench ABI 1",
};

__attribute__((visibility("default"))) const struct abi1_plugin *kbench_plugin(uint32_t index)
{
    return index == 0 ? &desc : NULL;
}
