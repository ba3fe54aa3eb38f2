/*
 * hello.h -- what a worker (worker.h) tells its supervisor once it is
 * ready: its pid, the hash of the plan it built, and the machine and
 * device facts the reports' header needs (gpu.h, device.h), which only a
 * process that touches CUDA can find out.
 *
 * On the channel the facts travel as the image of this struct in
 * hexadecimal, beside the kbench revision and the struct's size: the
 * worker is the supervisor's own binary, exec'd again, so both ends share
 * the layout, and a hello from any other program (or a torn one) is
 * refused by those two fields.
 */
#ifndef KBENCH_HELLO_H
#define KBENCH_HELLO_H

#include <jansson.h>

#include "device.h"
#include "gpu.h"
#include "record.h"

typedef struct kbc_hello {
    int pid;
    char plan_hash[65];
    kbc_machine machine;
    int usable;              /* the device opened (stream, events)  */
    char why_not[512];
    char device_name[256];
    char gpu_uuid[96];       /* of the device, "" without one       */
    char pci_bus_id[32];
    kbc_ceilings ceilings;
    kbc_flops_ceilings flops;
    int clocks_known;
    char clocks_why[600];
    unsigned sm_max_mhz, mem_max_mhz;
    kbc_clock_sample clocks_at_start;
    int cublas_version;      /* of the cuBLAS a plugin loaded (major *
                                10000 + minor * 100 + patch), or 0    */
    /* Where the worker's start went (kbc_now() instants, for the
       timeline): its main() began, the CUDA probe (the context) ended,
       the plan (and its plugins) was built, the device was opened (its
       stream and the ceilings it measures). */
    double t_main, t_probe, t_plan, t_device;
} kbc_hello;

/* Copies the device's facts into h. */
void kbc_hello_from_device(kbc_hello *h, const kbc_device *dev);

/* The message {"hello": {...}} for h (a new reference). */
json_t *kbc_hello_to_json(const kbc_hello *h);

/* Reads the value of a message's "hello" member into h.  Returns 0, or -1
   with why set to one clause. */
int kbc_hello_from_json(const json_t *o, kbc_hello *h, char *why, size_t n);

/* The run_info (record.h) fields that come from h. */
void kbc_hello_run_info(const kbc_hello *h, kbc_run_info *info);

#endif
