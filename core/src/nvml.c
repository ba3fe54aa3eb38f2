/* nvml.c -- see nvml.h.  The handful of NVML functions used are declared
   here from their documented signatures (the NVML API reference), so that
   no NVML header is needed to build. */
#define _GNU_SOURCE
#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* NVML's types as its reference documents them: nvmlReturn_t is an enum
   whose 0 is NVML_SUCCESS, nvmlDevice_t an opaque pointer. */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
enum { NVML_SUCCESS = 0 };
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };  /* nvmlClockType_t            */
enum { NVML_TEMPERATURE_GPU = 0 };               /* nvmlTemperatureSensors_t   */

struct kbc_nvml {
    void *dl;
    nvml_device dev;
    unsigned sm_max_mhz, mem_max_mhz;
    nvml_return (*shutdown)(void);
    nvml_return (*clock)(nvml_device, int, unsigned *);
    nvml_return (*temperature)(nvml_device, int, unsigned *);
    nvml_return (*power)(nvml_device, unsigned *);
    nvml_return (*reasons)(nvml_device, unsigned long long *);
    const char *(*error_string)(nvml_return);
};

/* NVML's sentence for r, or its number when the library has no
   nvmlErrorString. */
static const char *nvml_error(const kbc_nvml *x, nvml_return r, char *buf, size_t n)
{
    const char *s = x->error_string ? x->error_string(r) : NULL;
    if (s)
        return s;
    snprintf(buf, n, "NVML error %d", r);
    return buf;
}

kbc_nvml *kbc_nvml_open(const char *pci_bus_id, char *why, size_t n)
{
    const char *lib = getenv("KBENCH_NVML");
    if (lib && strcmp(lib, "off") == 0) {
        snprintf(why, n, "KBENCH_NVML is off");
        return NULL;
    }
    if (!lib || !*lib)
        lib = "libnvidia-ml.so.1";
    if (!pci_bus_id || !*pci_bus_id) {
        snprintf(why, n, "the device's PCI bus id is unknown, so NVML cannot find it");
        return NULL;
    }
    dlerror();
    void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        snprintf(why, n, "%s could not be loaded (%s)", lib, e ? e : "no reason given");
        return NULL;
    }
    kbc_nvml *x = kbc_xcalloc(1, sizeof *x);
    x->dl = dl;
    nvml_return (*init)(void) = (nvml_return(*)(void))dlsym(dl, "nvmlInit_v2");
    nvml_return (*by_bus)(const char *, nvml_device *) =
        (nvml_return(*)(const char *, nvml_device *))dlsym(dl, "nvmlDeviceGetHandleByPciBusId_v2");
    nvml_return (*max_clock)(nvml_device, int, unsigned *) =
        (nvml_return(*)(nvml_device, int, unsigned *))dlsym(dl, "nvmlDeviceGetMaxClockInfo");
    x->shutdown = (nvml_return(*)(void))dlsym(dl, "nvmlShutdown");
    x->clock = (nvml_return(*)(nvml_device, int, unsigned *))dlsym(dl, "nvmlDeviceGetClockInfo");
    x->temperature =
        (nvml_return(*)(nvml_device, int, unsigned *))dlsym(dl, "nvmlDeviceGetTemperature");
    x->power = (nvml_return(*)(nvml_device, unsigned *))dlsym(dl, "nvmlDeviceGetPowerUsage");
    /* The reasons' function was renamed from "throttle" to "clocks event"
       (driver 535); either name returns the same bits. */
    x->reasons = (nvml_return(*)(nvml_device, unsigned long long *))dlsym(
        dl, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!x->reasons)
        x->reasons = (nvml_return(*)(nvml_device, unsigned long long *))dlsym(
            dl, "nvmlDeviceGetCurrentClocksThrottleReasons");
    x->error_string = (const char *(*)(nvml_return))dlsym(dl, "nvmlErrorString");
    const char *missing = !init       ? "nvmlInit_v2"
                          : !by_bus   ? "nvmlDeviceGetHandleByPciBusId_v2"
                          : !x->shutdown ? "nvmlShutdown"
                          : !x->clock ? "nvmlDeviceGetClockInfo"
                                      : NULL;
    if (missing) {
        snprintf(why, n, "%s has no %s, so it is not a usable NVML", lib, missing);
        dlclose(dl);
        free(x);
        return NULL;
    }
    char buf[32];
    nvml_return r = init();
    if (r != NVML_SUCCESS) {
        snprintf(why, n, "nvmlInit_v2 failed: %s", nvml_error(x, r, buf, sizeof buf));
        dlclose(dl);
        free(x);
        return NULL;
    }
    r = by_bus(pci_bus_id, &x->dev);
    if (r != NVML_SUCCESS) {
        snprintf(why, n, "NVML does not find the device at PCI bus id %s: %s", pci_bus_id,
                 nvml_error(x, r, buf, sizeof buf));
        x->shutdown();
        dlclose(dl);
        free(x);
        return NULL;
    }
    if (max_clock) {
        if (max_clock(x->dev, NVML_CLOCK_SM, &x->sm_max_mhz) != NVML_SUCCESS)
            x->sm_max_mhz = 0;
        if (max_clock(x->dev, NVML_CLOCK_MEM, &x->mem_max_mhz) != NVML_SUCCESS)
            x->mem_max_mhz = 0;
    }
    return x;
}

void kbc_nvml_close(kbc_nvml *x)
{
    if (!x)
        return;
    x->shutdown();
    dlclose(x->dl);
    free(x);
}

unsigned kbc_nvml_sm_max_mhz(const kbc_nvml *x)
{
    return x ? x->sm_max_mhz : 0;
}

unsigned kbc_nvml_mem_max_mhz(const kbc_nvml *x)
{
    return x ? x->mem_max_mhz : 0;
}

int kbc_nvml_sample(kbc_nvml *x, kbc_clock_sample *s)
{
    memset(s, 0, sizeof *s);
    if (!x)
        return -1;
    unsigned v = 0;
    if (x->clock(x->dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS) {
        s->sm_mhz = v;
        s->known |= KBC_CLK_SM;
    }
    if (x->clock(x->dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS) {
        s->mem_mhz = v;
        s->known |= KBC_CLK_MEM;
    }
    if (x->temperature && x->temperature(x->dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS) {
        s->temp_c = v;
        s->known |= KBC_CLK_TEMP;
    }
    if (x->power && x->power(x->dev, &v) == NVML_SUCCESS) {
        s->power_w = (double)v / 1000.0; /* NVML reports milliwatts */
        s->known |= KBC_CLK_POWER;
    }
    unsigned long long bits = 0;
    if (x->reasons && x->reasons(x->dev, &bits) == NVML_SUCCESS) {
        s->reasons = (uint64_t)bits;
        s->known |= KBC_CLK_REASONS;
    }
    return s->known ? 0 : -1;
}
