/* nvml.c -- see nvml.h.  The handful of NVML functions used are declared
   here from their documented signatures (the NVML API reference), so that
   no NVML header is needed to build. */
#define _GNU_SOURCE
#include "nvml.h"

#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* NVML's types as its reference documents them: nvmlReturn_t is an enum
   whose 0 is NVML_SUCCESS, nvmlDevice_t an opaque pointer. */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
enum { NVML_SUCCESS = 0, NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_FUNCTION_NOT_FOUND = 13 };
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };  /* nvmlClockType_t            */
enum { NVML_TEMPERATURE_GPU = 0 };               /* nvmlTemperatureSensors_t   */
enum { NVML_PERF_POLICY_POWER = 0, NVML_PERF_POLICY_THERMAL = 1 }; /* nvmlPerfPolicyType_t */

/* nvmlViolationTime_t: a timestamp and the violation's nanoseconds. */
typedef struct nvml_violation {
    unsigned long long reference_time, violation_time;
} nvml_violation;

struct kbc_nvml {
    void *dl;
    nvml_device dev;
    unsigned sm_max_mhz, mem_max_mhz;
    nvml_return (*shutdown)(void);
    nvml_return (*clock)(nvml_device, int, unsigned *);
    nvml_return (*temperature)(nvml_device, int, unsigned *);
    nvml_return (*power)(nvml_device, unsigned *);
    nvml_return (*reasons)(nvml_device, unsigned long long *);
    /* Optional (an older driver lacks them): NULL then. */
    nvml_return (*energy)(nvml_device, unsigned long long *);
    nvml_return (*power_limit)(nvml_device, unsigned *);
    nvml_return (*violation)(nvml_device, int, nvml_violation *);
    const char *(*error_string)(nvml_return);
};

typedef const char *(*nvml_error_string)(nvml_return);

/* NVML's sentence for r, or its number when the library has no
   nvmlErrorString. */
static const char *nvml_error(nvml_error_string error_string, nvml_return r, char *buf,
                              size_t n)
{
    const char *s = error_string ? error_string(r) : NULL;
    if (s)
        return s;
    snprintf(buf, n, "NVML error %d", r);
    return buf;
}

/* The library file to load: $KBENCH_NVML, or NVML's own name.  NULL with
   why set when $KBENCH_NVML is "off". */
static const char *nvml_library(char *why, size_t n)
{
    const char *lib = getenv("KBENCH_NVML");
    if (lib && strcmp(lib, "off") == 0) {
        snprintf(why, n, "KBENCH_NVML is off");
        return NULL;
    }
    return lib && *lib ? lib : "libnvidia-ml.so.1";
}

/* dlopen()s lib; NULL with why set when it cannot. */
static void *nvml_dlopen(const char *lib, char *why, size_t n)
{
    dlerror();
    void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        snprintf(why, n, "%s could not be loaded (%s)", lib, e ? e : "no reason given");
    }
    return dl;
}

kbc_nvml *kbc_nvml_open(const char *pci_bus_id, char *why, size_t n)
{
    const char *lib = nvml_library(why, n);
    if (!lib)
        return NULL;
    if (!pci_bus_id || !*pci_bus_id) {
        snprintf(why, n, "the device's PCI bus id is unknown, so NVML cannot find it");
        return NULL;
    }
    void *dl = nvml_dlopen(lib, why, n);
    if (!dl)
        return NULL;
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
    x->energy = (nvml_return(*)(nvml_device, unsigned long long *))dlsym(
        dl, "nvmlDeviceGetTotalEnergyConsumption");
    x->power_limit =
        (nvml_return(*)(nvml_device, unsigned *))dlsym(dl, "nvmlDeviceGetEnforcedPowerLimit");
    x->violation = (nvml_return(*)(nvml_device, int, nvml_violation *))dlsym(
        dl, "nvmlDeviceGetViolationStatus");
    x->error_string = (nvml_error_string)dlsym(dl, "nvmlErrorString");
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
        snprintf(why, n, "nvmlInit_v2 failed: %s", nvml_error(x->error_string, r, buf, sizeof buf));
        dlclose(dl);
        free(x);
        return NULL;
    }
    r = by_bus(pci_bus_id, &x->dev);
    if (r != NVML_SUCCESS) {
        snprintf(why, n, "NVML does not find the device at PCI bus id %s: %s", pci_bus_id,
                 nvml_error(x->error_string, r, buf, sizeof buf));
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

int kbc_nvml_energy_mj(kbc_nvml *x, unsigned long long *mj, char *why, size_t n)
{
    if (!x) {
        snprintf(why, n, "NVML is not loaded");
        return KBC_NVML_FAILED;
    }
    if (!x->energy) {
        snprintf(why, n, "this NVML has no nvmlDeviceGetTotalEnergyConsumption (a driver "
                         "older than the counter)");
        return KBC_NVML_UNSUPPORTED;
    }
    char buf[32];
    nvml_return r = x->energy(x->dev, mj);
    if (r == NVML_SUCCESS)
        return KBC_NVML_OK;
    snprintf(why, n, "nvmlDeviceGetTotalEnergyConsumption failed: %s",
             nvml_error(x->error_string, r, buf, sizeof buf));
    return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND
               ? KBC_NVML_UNSUPPORTED
               : KBC_NVML_FAILED;
}

int kbc_nvml_violation_ns(kbc_nvml *x, unsigned long long *ns)
{
    nvml_violation p, t;
    if (!x || !x->violation || x->violation(x->dev, NVML_PERF_POLICY_POWER, &p) != NVML_SUCCESS ||
        x->violation(x->dev, NVML_PERF_POLICY_THERMAL, &t) != NVML_SUCCESS)
        return -1;
    *ns = p.violation_time + t.violation_time;
    return 0;
}

double kbc_nvml_power_limit_w(kbc_nvml *x)
{
    unsigned mw = 0;
    if (!x || !x->power_limit || x->power_limit(x->dev, &mw) != NVML_SUCCESS)
        return NAN;
    return (double)mw / 1000.0; /* NVML reports milliwatts */
}

/* ---- the list of GPUs ---------------------------------------------------- */

/* nvmlPciInfo_t as NVML's reference lays it out (filled by
   nvmlDeviceGetPciInfo_v3), and nvmlMemory_t (nvmlDeviceGetMemoryInfo). */
typedef struct nvml_pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_sub_system_id;
    char bus_id[32];
} nvml_pci_info;
typedef struct nvml_memory {
    unsigned long long total, free, used;
} nvml_memory;

/* The NVML functions kbc_nvml_list calls. */
typedef struct nvml_list_api {
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    nvml_return (*count)(unsigned *);
    nvml_return (*by_index)(unsigned, nvml_device *);
    nvml_return (*uuid)(nvml_device, char *, unsigned);
    nvml_return (*name)(nvml_device, char *, unsigned);
    nvml_return (*pci)(nvml_device, nvml_pci_info *);
    nvml_return (*memory)(nvml_device, nvml_memory *);
    nvml_error_string error_string;
} nvml_list_api;

/* Finds the functions in dl; -1 with why naming the first one missing
   (nvmlErrorString and the memory reading may be absent). */
static int list_api_load(void *dl, const char *lib, nvml_list_api *a, char *why, size_t n)
{
    a->init = (nvml_return(*)(void))dlsym(dl, "nvmlInit_v2");
    a->shutdown = (nvml_return(*)(void))dlsym(dl, "nvmlShutdown");
    a->count = (nvml_return(*)(unsigned *))dlsym(dl, "nvmlDeviceGetCount_v2");
    a->by_index =
        (nvml_return(*)(unsigned, nvml_device *))dlsym(dl, "nvmlDeviceGetHandleByIndex_v2");
    a->uuid = (nvml_return(*)(nvml_device, char *, unsigned))dlsym(dl, "nvmlDeviceGetUUID");
    a->name = (nvml_return(*)(nvml_device, char *, unsigned))dlsym(dl, "nvmlDeviceGetName");
    a->pci = (nvml_return(*)(nvml_device, nvml_pci_info *))dlsym(dl, "nvmlDeviceGetPciInfo_v3");
    a->memory =
        (nvml_return(*)(nvml_device, nvml_memory *))dlsym(dl, "nvmlDeviceGetMemoryInfo");
    a->error_string = (nvml_error_string)dlsym(dl, "nvmlErrorString");
    const char *missing = !a->init       ? "nvmlInit_v2"
                          : !a->shutdown ? "nvmlShutdown"
                          : !a->count    ? "nvmlDeviceGetCount_v2"
                          : !a->by_index ? "nvmlDeviceGetHandleByIndex_v2"
                          : !a->uuid     ? "nvmlDeviceGetUUID"
                          : !a->name     ? "nvmlDeviceGetName"
                          : !a->pci      ? "nvmlDeviceGetPciInfo_v3"
                                         : NULL;
    if (missing) {
        snprintf(why, n, "%s has no %s, so it is not a usable NVML", lib, missing);
        return -1;
    }
    return 0;
}

/* Reads device i into g; -1 when NVML gives no handle or no bus id for it. */
static int read_gpu(const nvml_list_api *a, unsigned i, kbc_gpu_id *g)
{
    nvml_device dev;
    nvml_pci_info pci;
    memset(g, 0, sizeof *g);
    memset(&pci, 0, sizeof pci);
    if (a->by_index(i, &dev) != NVML_SUCCESS || a->pci(dev, &pci) != NVML_SUCCESS)
        return -1;
    pci.bus_id[sizeof pci.bus_id - 1] = '\0';
    if (!pci.bus_id[0])
        return -1;
    g->index = i;
    snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%s", pci.bus_id);
    if (a->uuid(dev, g->uuid, sizeof g->uuid) != NVML_SUCCESS)
        g->uuid[0] = '\0';
    g->uuid[sizeof g->uuid - 1] = '\0';
    if (a->name(dev, g->name, sizeof g->name) != NVML_SUCCESS)
        g->name[0] = '\0';
    g->name[sizeof g->name - 1] = '\0';
    nvml_memory mem;
    if (a->memory && a->memory(dev, &mem) == NVML_SUCCESS)
        g->mem_bytes = mem.total;
    return 0;
}

/* Reads 1 to max hex digits at *p into *v and steps *p past them; 0 when
   there are none or more than max. */
static int hex_field(const char **p, int max, unsigned *v)
{
    unsigned x = 0;
    int k = 0;
    for (const char *s = *p; isxdigit((unsigned char)*s); s++, k++) {
        if (k == max)
            return 0;
        int c = tolower((unsigned char)*s);
        x = x * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    if (k == 0)
        return 0;
    *p += k;
    *v = x;
    return 1;
}

/* "[domain:]bus:device.function" as one number that orders devices as
   their bus ids do; 0 when s is not such an id. */
static int bus_key(const char *s, uint64_t *key)
{
    unsigned v[3], fn;
    int k = 0;
    if (!s)
        return 0;
    for (;;) {
        if (k == 3 || !hex_field(&s, 8, &v[k]))
            return 0;
        k++;
        if (*s == '.')
            break;
        if (*s++ != ':')
            return 0;
    }
    s++;
    if (k < 2 || !hex_field(&s, 1, &fn) || *s)
        return 0;
    unsigned domain = k == 3 ? v[0] : 0, bus = v[k - 2], dev = v[k - 1];
    if (bus > 0xff || dev > 0x1f || fn > 7)
        return 0;
    *key = (uint64_t)domain << 16 | bus << 8 | dev << 3 | fn;
    return 1;
}

int kbc_pci_bus_id_same(const char *a, const char *b)
{
    uint64_t ka, kb;
    return bus_key(a, &ka) && bus_key(b, &kb) && ka == kb;
}

/* qsort's order for kbc_gpu_id: by bus id; ids that do not parse last, in
   the order of their text. */
static int by_bus_id(const void *pa, const void *pb)
{
    const kbc_gpu_id *a = pa, *b = pb;
    uint64_t ka, kb;
    int oka = bus_key(a->pci_bus_id, &ka), okb = bus_key(b->pci_bus_id, &kb);
    if (oka && okb)
        return ka < kb ? -1 : ka > kb;
    if (oka != okb)
        return oka ? -1 : 1;
    return strcmp(a->pci_bus_id, b->pci_bus_id);
}

/* Reads every device NVML counts into all (count of them); returns how
   many were read. */
static int read_all(const nvml_list_api *a, unsigned count, kbc_gpu_id *all)
{
    int found = 0;
    for (unsigned i = 0; i < count; i++)
        if (read_gpu(a, i, &all[found]) == 0)
            found++;
    return found;
}

int kbc_nvml_list(kbc_gpu_id *out, int max, char *why, size_t n)
{
    const char *lib = nvml_library(why, n);
    if (!lib)
        return -1;
    void *dl = nvml_dlopen(lib, why, n);
    if (!dl)
        return -1;
    nvml_list_api a;
    if (list_api_load(dl, lib, &a, why, n) != 0) {
        dlclose(dl);
        return -1;
    }
    char buf[32];
    nvml_return r = a.init();
    if (r != NVML_SUCCESS) {
        snprintf(why, n, "nvmlInit_v2 failed: %s", nvml_error(a.error_string, r, buf, sizeof buf));
        dlclose(dl);
        return -1;
    }
    unsigned count = 0;
    r = a.count(&count);
    if (r != NVML_SUCCESS) {
        snprintf(why, n, "nvmlDeviceGetCount_v2 failed: %s",
                 nvml_error(a.error_string, r, buf, sizeof buf));
        a.shutdown();
        dlclose(dl);
        return -1;
    }
    kbc_gpu_id *all = kbc_xcalloc(count ? count : 1, sizeof *all);
    int found = read_all(&a, count, all);
    a.shutdown();
    dlclose(dl);
    qsort(all, (size_t)found, sizeof *all, by_bus_id);
    int k = found < max ? found : max > 0 ? max : 0;
    if (k > 0)
        memcpy(out, all, (size_t)k * sizeof *all);
    free(all);
    return k;
}
