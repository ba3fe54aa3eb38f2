/*
 * kit_halves.c -- setup() from a host half and a device half (the prefetch
 * extension, kbench/plugin.h; KBK_PREFETCH in kbench/kit.h).
 */
#include "kit_internal.h"

int kbk_setup_halves(const kb_value *params, uint64_t vmask, kb_host *host, void **state,
                     kbk_setup_host_fn host_half, kbk_setup_device_fn device_half)
{
    /* The host half sees what it sees when the host makes it ahead: no
       stream, so that the state it leaves is the same either way. */
    kb_host seen = *host;
    seen.stream = NULL;
    int rc = host_half(params, vmask, &seen, state);
    if (rc != KB_OK)
        return rc;
    return device_half(*state, vmask, host);
}
