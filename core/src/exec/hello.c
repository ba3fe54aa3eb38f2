/* hello.c -- see hello.h. */
#include "hello.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "version.h"

void kbc_hello_from_device(kbc_hello *h, const kbc_device *dev)
{
    h->usable = dev->usable;
    snprintf(h->why_not, sizeof h->why_not, "%s", dev->why_not);
    snprintf(h->device_name, sizeof h->device_name, "%s", dev->name);
    h->ceilings = dev->ceilings;
    h->flops = dev->flops;
    h->clocks_known = dev->nvml != NULL;
    snprintf(h->clocks_why, sizeof h->clocks_why, "%s",
             dev->nvml            ? ""
             : dev->clocks_why[0] ? dev->clocks_why
             : dev->usable        ? "not read"
                                  : "no GPU");
    h->sm_max_mhz = dev->sm_max_mhz;
    h->mem_max_mhz = dev->mem_max_mhz;
    h->clocks_at_start = dev->clocks_at_start;
}

json_t *kbc_hello_to_json(const kbc_hello *h)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = (const unsigned char *)h;
    char *hex = kbc_xmalloc(2 * sizeof *h + 1);
    for (size_t i = 0; i < sizeof *h; i++) {
        hex[2 * i] = digits[b[i] >> 4];
        hex[2 * i + 1] = digits[b[i] & 15];
    }
    hex[2 * sizeof *h] = '\0';
    json_t *o = json_object();
    json_object_set_new(o, "kbench", json_string(kbc_git_rev));
    json_object_set_new(o, "size", json_integer((json_int_t)sizeof *h));
    json_object_set_new(o, "pid", json_integer(h->pid));
    json_object_set_new(o, "facts", json_string(hex));
    free(hex);
    json_t *m = json_object();
    json_object_set_new(m, "hello", o);
    return m;
}

static int nibble(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Ends every string of h within its array, whatever arrived. */
#define TERMINATE(s) ((s)[sizeof(s) - 1] = '\0')

int kbc_hello_from_json(const json_t *o, kbc_hello *h, char *why, size_t n)
{
    const json_t *rev = json_object_get(o, "kbench");
    const json_t *size = json_object_get(o, "size");
    const json_t *facts = json_object_get(o, "facts");
    if (!json_is_string(rev) || strcmp(json_string_value(rev), kbc_git_rev) != 0 ||
        !json_is_integer(size) || json_integer_value(size) != (json_int_t)sizeof *h) {
        snprintf(why, n, "the worker is not this kbench's build (revision or layout differs)");
        return -1;
    }
    if (!json_is_string(facts) || strlen(json_string_value(facts)) != 2 * sizeof *h) {
        snprintf(why, n, "the worker's hello is cut short");
        return -1;
    }
    const char *hex = json_string_value(facts);
    unsigned char *b = (unsigned char *)h;
    for (size_t i = 0; i < sizeof *h; i++) {
        int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            snprintf(why, n, "the worker's hello is not hexadecimal");
            return -1;
        }
        b[i] = (unsigned char)(hi << 4 | lo);
    }
    TERMINATE(h->plan_hash);
    TERMINATE(h->machine.no_gpu_reason);
    TERMINATE(h->machine.name);
    TERMINATE(h->machine.host);
    TERMINATE(h->why_not);
    TERMINATE(h->device_name);
    TERMINATE(h->gpu_uuid);
    TERMINATE(h->pci_bus_id);
    TERMINATE(h->clocks_why);
    return 0;
}

void kbc_hello_run_info(const kbc_hello *h, kbc_run_info *info)
{
    info->machine = &h->machine;
    info->ceilings = h->ceilings;
    info->flops = h->flops;
    info->clocks_known = h->clocks_known;
    info->clocks_why = h->clocks_known ? NULL : h->clocks_why;
    info->sm_max_mhz = h->sm_max_mhz;
    info->mem_max_mhz = h->mem_max_mhz;
    info->clocks_at_start = h->clocks_at_start;
    info->cublas_version = h->cublas_version;
}
