/* device.c -- see device.h. */
#include "device.h"

#include <stdio.h>
#include <string.h>

#include "host.h"
#include "nvml.h"

void kbc_device_open(kbc_device *d, const kbc_machine *m, int ceilings)
{
    memset(d, 0, sizeof *d);
    d->ordinal = -1;
    kbc_limits_cpu(&d->limits);
    if (!m || !m->has_gpu) {
        const char *r = m && m->no_gpu_reason[0] ? m->no_gpu_reason : "no CUDA device was found";
        /* The probe's reason says "no CUDA driver" or "no CUDA device". */
        if (strncmp(r, "no CUDA", 7) == 0)
            snprintf(d->why_not, sizeof d->why_not, "%s", r);
        else
            snprintf(d->why_not, sizeof d->why_not, "no CUDA device: %s", r);
        return;
    }
    char why[400];
    if (kbc_gpu_stream_create(&d->stream, why, sizeof why) != 0 ||
        kbc_gpu_event_create(&d->ev0, why, sizeof why) != 0 ||
        kbc_gpu_event_create(&d->ev1, why, sizeof why) != 0) {
        snprintf(d->why_not, sizeof d->why_not, "no CUDA device: %s", why);
        kbc_gpu_event_destroy(d->ev0);
        kbc_gpu_event_destroy(d->ev1);
        kbc_gpu_stream_destroy(d->stream);
        d->stream = d->ev0 = d->ev1 = NULL;
        return;
    }
    d->usable = 1;
    /* Without the hold, timed samples are still right; only a short one
       then carries the host's launch latency. */
    if (kbc_gpu_hold_alloc(&d->hold, &d->hold_dev, why, sizeof why) != 0)
        d->hold = NULL;
    d->ordinal = m->device;
    d->sm_count = m->sm_count;
    d->l2_bytes = m->l2_bytes;
    snprintf(d->name, sizeof d->name, "%s", m->name);
    if (!ceilings)
        return;
    char bus[64];
    if (kbc_gpu_pci_bus_id(d->ordinal, bus, sizeof bus, why, sizeof why) != 0) {
        snprintf(d->clocks_why, sizeof d->clocks_why, "the device's PCI bus id is unknown (%s)",
                 why);
        if (!kbc_host_is_quiet())
            fprintf(stderr, "kbench: note: no GPU clock readings: %s; rows are not checked "
                            "for low clocks or throttling.\n",
                    d->clocks_why);
    } else {
        kbc_device_clocks_open(d, bus, kbc_host_is_quiet() ? NULL : stderr);
    }
    /* Each buffer well beyond the L2 (like the copy ceiling always was):
       a quarter of free memory per buffer, at most 1 GiB. */
    uint64_t bytes = kbc_gpu_free_memory() / 4;
    if (bytes > (1ULL << 30))
        bytes = 1ULL << 30;
    kbc_gpu_ceilings(d->stream, bytes, d->sm_count, &d->ceilings.read_gbps,
                     &d->ceilings.write_gbps, &d->ceilings.copy_gbps);
    kbc_gpu_flops_ceilings(d->stream, d->sm_count, m->cc_major, &d->flops.fp32_gflops,
                           &d->flops.tf32_gflops, &d->flops.bf16_gflops);
    kbc_limits_gpu(&d->limits, m, kbc_gpu_memory_bus_bits(d->ordinal), d->sm_max_mhz,
                   kbc_gpu_l2_read_ceiling(d->stream, d->l2_bytes, d->sm_count));
    d->persisting_l2 = kbc_gpu_persisting_l2();
    /* Read once the ceilings have woken the GPU, for the run's header. */
    kbc_device_clocks(d, &d->clocks_at_start);
}

int kbc_device_clocks_open(kbc_device *d, const char *pci_bus_id, FILE *notice)
{
    char why[sizeof d->clocks_why - 8];
    d->nvml = kbc_nvml_open(pci_bus_id, why, sizeof why);
    if (!d->nvml) {
        snprintf(d->clocks_why, sizeof d->clocks_why, "%s", why);
        if (notice)
            fprintf(notice, "kbench: note: no GPU clock readings: %s; rows are not checked for "
                            "low clocks or throttling.\n",
                    d->clocks_why);
        return -1;
    }
    d->clocks_why[0] = '\0';
    d->sm_max_mhz = kbc_nvml_sm_max_mhz(d->nvml);
    d->mem_max_mhz = kbc_nvml_mem_max_mhz(d->nvml);
    return 0;
}

int kbc_device_clocks(kbc_device *d, kbc_clock_sample *s)
{
    if (!d || !d->nvml) {
        memset(s, 0, sizeof *s);
        return -1;
    }
    return kbc_nvml_sample(d->nvml, s);
}

unsigned kbc_device_sm_max_mhz(const kbc_device *d)
{
    return d ? d->sm_max_mhz : 0;
}

void kbc_device_close(kbc_device *d)
{
    if (d->stream && !d->lost) {
        char why[200];
        (void)kbc_gpu_sync(d->stream, why, sizeof why);
    }
    kbc_gpu_free(d->flush);
    kbc_gpu_hold_free(d->hold);
    d->hold = NULL;
    d->hold_dev = NULL;
    kbc_nvml_close(d->nvml);
    d->nvml = NULL;
    kbc_gpu_event_destroy(d->ev0);
    kbc_gpu_event_destroy(d->ev1);
    kbc_gpu_stream_destroy(d->stream);
    d->flush = d->stream = d->ev0 = d->ev1 = NULL;
    d->usable = 0;
}

int kbc_device_flush_prepare(kbc_device *d)
{
    if (d->flush)
        return 0;
    if (!d->usable) {
        snprintf(d->flush_why, sizeof d->flush_why, "%s", d->why_not);
        return -1;
    }
    /* Twice the L2, and at least 64 MiB when the size is unknown. */
    uint64_t bytes = d->l2_bytes > 0 ? 2 * d->l2_bytes : (64ULL << 20);
    char why[400];
    if (kbc_gpu_alloc(&d->flush, bytes, why, sizeof why) != 0) {
        snprintf(d->flush_why, sizeof d->flush_why,
                 "cannot allocate the L2 flush buffer for cache = cold: %s", why);
        return -1;
    }
    d->flush_bytes = bytes;
    return 0;
}

void kbc_device_l2_cold(kbc_device *d)
{
    kbc_gpu_l2_cold(d->stream);
}

int kbc_device_flush(kbc_device *d, char *why, size_t n)
{
    if (!d->flush) {
        snprintf(why, n, "%s", d->flush_why[0] ? d->flush_why : "no L2 flush buffer");
        return -1;
    }
    return kbc_gpu_memset_async(d->flush, 0, d->flush_bytes, d->stream, why, n);
}

int kbc_device_settle(kbc_device *d, char *why, size_t n)
{
    if (kbc_gpu_sync(d->stream, why, n) != 0)
        return -1;
    return kbc_gpu_last_error(why, n);
}

void kbc_device_check_lost(kbc_device *d, const char *after)
{
    char why[400];
    kbc_gpu_last_error(why, sizeof why);
    if (kbc_gpu_sync(d->stream, why, sizeof why) != 0) {
        d->lost = 1;
        snprintf(d->lost_after, sizeof d->lost_after, "%s", after);
    }
}
