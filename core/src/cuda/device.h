/*
 * device.h -- one device as the runner uses it: its stream and timing
 * events, the buffer that flushes its L2 for cold-cache runs, its
 * bandwidth ceilings, and whether a sticky error has spoilt its context.
 * Built on gpu.h; one kbc_device per GPU, used by one thread at a time.
 */
#ifndef KBENCH_DEVICE_H
#define KBENCH_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu.h"
#include "physical.h"
#include "record.h"

typedef struct kbc_device {
    int usable;             /* a stream and events exist               */
    char why_not[512];      /* when not usable: why, for SKIPPED rows   */
    int ordinal, sm_count;
    uint64_t l2_bytes;
    char name[256];
    void *stream, *ev0, *ev1;
    volatile int *hold;     /* the hold's words (gpu.h), or NULL: timed
                               samples then start as the host enqueues  */
    void *hold_dev;         /* their device address                     */
    void *flush;            /* 2 x l2_bytes, written before cold runs    */
    uint64_t flush_bytes;
    char flush_why[600];    /* why there is no flush buffer, if asked   */
    kbc_ceilings ceilings;  /* 0 where not measured                      */
    kbc_flops_ceilings flops; /* 0 where not measured                    */
    struct kbc_nvml *nvml;  /* the clock readings (nvml.h), or NULL      */
    char clocks_why[600];   /* why there are none, when nvml is NULL     */
    unsigned sm_max_mhz, mem_max_mhz; /* from NVML; 0 unknown           */
    kbc_clock_sample clocks_at_start; /* after the ceilings             */
    double idle_w;          /* board power before the point's setup
                               (energy.h, kbc_energy_point_start); NaN  */
    int lost;               /* a sticky error spoilt the context        */
    char lost_after[400];   /* the error that spoilt it                 */
    /* What the device (the GPU, or the CPU for CPU rows) can physically
       do at most (physical.h); the CPU's facts also without a GPU. */
    kbc_limits limits;
    uint64_t persisting_l2;   /* the persisting-L2 set-aside at open    */
    int sanitized;            /* the process runs under compute-sanitizer,
                                 which sets L2 limits of its own        */
} kbc_device;

/* Opens machine m's device: stream, events, and when `ceilings` is set
   (a run) the clock readings (kbc_device_clocks_open), the three
   bandwidth ceilings and the compute ceilings.  Without a GPU (m NULL or
   without one, or when the stream cannot be made) the device is left
   unusable with why_not set: a missing GPU skips rows, it does not stop a
   run. */
void kbc_device_open(kbc_device *d, const kbc_machine *m, int ceilings);
void kbc_device_close(kbc_device *d);

/* Opens the clock readings of the device at PCI bus id pci_bus_id
   through NVML (nvml.h).  Without NVML it sets clocks_why, writes one
   notice saying so to `notice` (when not NULL) and returns -1: the run goes
   on without readings.  Needs no CUDA. */
int kbc_device_clocks_open(kbc_device *d, const char *pci_bus_id, FILE *notice);

/* Reads the clocks now: 0, or -1 when there are no readings. */
int kbc_device_clocks(kbc_device *d, kbc_clock_sample *s);

/* The maximum SM clock NVML reports, or 0 (no NVML, or d NULL). */
unsigned kbc_device_sm_max_mhz(const kbc_device *d);

/* Before a cold sample or warm-up run: the persisting L2 lines reset and
   the stream's access-policy window cleared (gpu.h, kbc_gpu_l2_cold), so
   that the flush leaves nothing of a variant in the L2. */
void kbc_device_l2_cold(kbc_device *d);

/* Makes the L2 flush buffer (once).  Returns 0, or -1 with flush_why. */
int kbc_device_flush_prepare(kbc_device *d);
/* Enqueues the flush on the device's stream.  0, or -1 with why. */
int kbc_device_flush(kbc_device *d, char *why, size_t n);

/* After a CUDA error: was it sticky?  A sticky error stays in the context
   and every later call returns it, so clearing the last error and
   synchronising tells the two kinds apart without a list of codes.  Marks
   the device lost, naming `after`. */
void kbc_device_check_lost(kbc_device *d, const char *after);

/* Synchronises the stream and collects any launch error: 0, or -1 and why. */
int kbc_device_settle(kbc_device *d, char *why, size_t n);

#endif
