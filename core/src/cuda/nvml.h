/*
 * nvml.h -- the GPU's clocks, temperature, power draw and clock-event
 * (throttle) reasons, read through NVML, and the list of the machine's GPUs
 * as NVML sees them.
 *
 * NVML ships with the driver (libnvidia-ml.so.1), not with the toolkit, so
 * kbench never links it: it is loaded with dlopen() when a run opens its
 * device, and a machine without it still runs everything (the rows then
 * carry no clock readings).  $KBENCH_NVML chooses another library file (the
 * tests load a fake one) or, set to "off", turns the readings off.
 */
#ifndef KBENCH_NVML_H
#define KBENCH_NVML_H

#include <stddef.h>

#include "record.h"

typedef struct kbc_nvml kbc_nvml;

/* Loads NVML, initialises it and finds the device whose PCI bus id is
   pci_bus_id (as cudaDeviceGetPCIBusId writes it, "0000:19:00.0").
   Returns the handle, or NULL with why set to one clause that says what
   was missing ("KBENCH_NVML is off", "libnvidia-ml.so.1 could not be
   loaded: ..."). */
kbc_nvml *kbc_nvml_open(const char *pci_bus_id, char *why, size_t n);
void kbc_nvml_close(kbc_nvml *x);

/* The device's maximum SM and memory clocks in MHz; 0 when NVML could not
   say. */
unsigned kbc_nvml_sm_max_mhz(const kbc_nvml *x);
unsigned kbc_nvml_mem_max_mhz(const kbc_nvml *x);

/* Reads every field it can into s (s->known says which; a field whose call
   failed is left out, not guessed).  Returns 0 when anything was read. */
int kbc_nvml_sample(kbc_nvml *x, kbc_clock_sample *s);

/* The device's cumulative energy counter (nvmlDeviceGetTotalEnergyConsumption:
   millijoules since the driver was loaded) into *mj.  Returns
   KBC_NVML_OK; KBC_NVML_UNSUPPORTED when the library has no such function
   or NVML says the device does not support it; KBC_NVML_FAILED for any
   other error.  why (when not OK) is one clause. */
enum { KBC_NVML_OK = 0, KBC_NVML_FAILED = -1, KBC_NVML_UNSUPPORTED = -2 };
int kbc_nvml_energy_mj(kbc_nvml *x, unsigned long long *mj, char *why, size_t n);

/* How long NVML has counted the device held back by its power or thermal
   limit (nvmlDeviceGetViolationStatus, the power and thermal policies
   added), in nanoseconds since the driver was loaded: a cumulative counter,
   so that a difference covers everything between two readings.  Returns 0,
   or -1 when NVML cannot say (a driver without the function, a device that
   does not support it). */
int kbc_nvml_violation_ns(kbc_nvml *x, unsigned long long *ns);

/* The board power limit the driver enforces (nvmlDeviceGetEnforcedPowerLimit)
   in watts; NaN when NVML cannot say. */
double kbc_nvml_power_limit_w(kbc_nvml *x);

/* One GPU as NVML names it. */
typedef struct kbc_gpu_id {
    unsigned index;               /* NVML's index (not CUDA's ordinal)           */
    char uuid[96];                /* "GPU-xxxxxxxx-..." as NVML gives it         */
    char pci_bus_id[32];          /* "00000000:19:00.0" as NVML gives it         */
    char name[96];                /* "NVIDIA H100 80GB HBM3"                     */
    unsigned long long mem_bytes; /* total memory; 0 when NVML could not say     */
} kbc_gpu_id;

/* Lists the GPUs NVML sees (all of the machine's: NVML ignores
   CUDA_VISIBLE_DEVICES), sorted by PCI bus id, into out[0..max); when there
   are more than max, the first max by bus id.  A device NVML gives no
   handle or no PCI bus id for is left out; its UUID or name is left empty
   when NVML cannot read it.  Returns how many (0..max) were written, or -1
   with why set to one clause when NVML cannot be loaded or initialised
   ("KBENCH_NVML is off", "libnvidia-ml.so.1 could not be loaded (...)",
   "nvmlInit_v2 failed: ...").  Never touches CUDA. */
int kbc_nvml_list(kbc_gpu_id *out, int max, char *why, size_t n);

/* Whether two PCI bus ids, "domain:bus:device.function" in hex, name the
   same device, ignoring case and the width of the domain field
   ("0000:19:00.0" from CUDA equals "00000000:19:00.0" from NVML); an id
   without its domain ("19:00.0") has domain 0.  An id that does not parse
   equals nothing.  Returns 1 or 0. */
int kbc_pci_bus_id_same(const char *a, const char *b);

#endif
