/*
 * nvml.h -- the GPU's clocks, temperature, power draw and clock-event
 * (throttle) reasons, read through NVML.
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

#endif
