/*
 * gpu.h -- everything the core asks of the CUDA runtime, in one place:
 * finding a device, describing the machine, the stream and events the
 * runner times with, and the device-to-device copy ceiling.
 */
#ifndef KBENCH_GPU_H
#define KBENCH_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"


/* Probes device 0 (or $KBENCH_DEVICE).  Never fails: without a driver or a
   device, has_gpu is 0 and no_gpu_reason says why, beginning "no CUDA
   driver" when the runtime finds no usable driver and "no CUDA device"
   otherwise. */
void kbc_gpu_probe(kbc_machine *m);

/* The CCCL version of the build (CCCL_VERSION, 3000001 for 3.0.1), or 0;
   a constant: it touches no device. */
int kbc_gpu_cccl_version(void);

/* Free device memory now, or 0 when unknown. */
uint64_t kbc_gpu_free_memory(void);

/* The core's stream and a pair of events.  Each returns 0, or -1 and writes
   the CUDA error's sentence into why. */
int kbc_gpu_stream_create(void **stream, char *why, size_t n);
void kbc_gpu_stream_destroy(void *stream);
int kbc_gpu_sync(void *stream, char *why, size_t n);
int kbc_gpu_event_create(void **ev, char *why, size_t n);
void kbc_gpu_event_destroy(void *ev);
int kbc_gpu_event_record(void *ev, void *stream, char *why, size_t n);
/* Milliseconds between two recorded events (synchronises on end). */
int kbc_gpu_event_elapsed(void *start, void *end, float *ms, char *why, size_t n);
/* Returns and clears the runtime's sticky-free last error: 0, or -1. */
int kbc_gpu_last_error(char *why, size_t n);

/* The three bandwidth ceilings in GB/s (bytes moved per second), each the
   median of several runs on one pair of buffers of `bytes`: read (a
   streaming kernel that reads and writes nothing), write (cudaMemsetAsync)
   and copy (device-to-device cudaMemcpyAsync, bytes read + written).  0
   for a ceiling that could not be measured. */
void kbc_gpu_ceilings(void *stream, uint64_t bytes, int sm_count, double *read_gbps,
                      double *write_gbps, double *copy_gbps);

/* The compute ceilings in GFLOP/s (an FMA counts two operations), each
   the median of several timed runs of a kernel that does nothing else:
   fp32, FP32 FMA chains on every SM; tf32 and bf16, mma.sync on
   register-resident fragments (compute capability 8.0 and up; 0 below).
   0 for a ceiling that could not be measured.  docs/output.md. */
void kbc_gpu_flops_ceilings(void *stream, int sm_count, int cc_major, double *fp32_gflops,
                            double *tf32_gflops, double *bf16_gflops);

/* Batches as CUDA graphs: everything enqueued on `stream` between begin
   and end is captured (not run) and instantiated into *exec; *nodes says
   how many operations were captured.  end always leaves capture mode, also
   after a failure, and clears the error a failed capture leaves.  Each
   returns 0, or -1 with why set. */
int kbc_gpu_capture_begin(void *stream, char *why, size_t n);
int kbc_gpu_capture_end(void *stream, void **exec, size_t *nodes, char *why, size_t n);
int kbc_gpu_graph_launch(void *exec, void *stream, char *why, size_t n);
void kbc_gpu_graph_destroy(void *exec);

/* The PCI bus id of device ordinal dev ("0000:19:00.0"), as NVML takes
   it.  Returns 0, or -1 with why set. */
int kbc_gpu_pci_bus_id(int dev, char *buf, size_t n, char *why, size_t whyn);

/* The UUID of device ordinal dev as NVML spells it ("GPU-1a2b..."), from
   the CUDA runtime.  Returns 0, or -1 with why set. */
int kbc_gpu_uuid(int dev, char *buf, size_t n, char *why, size_t whyn);

/* The hold before a timed sample (gpu_kernels.cu): a word pair in host
   memory mapped into the device (host[0]: the release, host[1]: set by the
   GPU when the hold timed out), a one-thread kernel on stream that spins
   until the release or timeout_s, and the release.  kbc_gpu_hold clears
   both words before the launch. */
int kbc_gpu_hold_alloc(volatile int **host, void **dev, char *why, size_t n);
void kbc_gpu_hold_free(volatile int *host);
int kbc_gpu_hold(volatile int *host, void *dev, double timeout_s, void *stream, char *why,
                 size_t n);
void kbc_gpu_release(volatile int *host);

/* A device buffer, and writing every byte of it on a stream (the L2 flush
   of a cold-cache measurement).  Each returns 0, or -1 with why set. */
int kbc_gpu_alloc(void **ptr, uint64_t bytes, char *why, size_t n);
void kbc_gpu_free(void *ptr);
int kbc_gpu_memset_async(void *ptr, int value, uint64_t bytes, void *stream, char *why,
                         size_t n);

/* What the integrity checks ask of the runtime (docs/integrity.md).

   The memory bus width of device ordinal dev in bits (0 when unknown),
   from which with the memory clock (kbc_machine.mem_clock_khz) the device's
   theoretical memory bandwidth follows. */
int kbc_gpu_memory_bus_bits(int dev);
/* The rate at which the device reads a buffer that sits in its L2 (a
   quarter of l2_bytes, read many times over through the L2 alone) in GB/s,
   the median of several launches; 0 when it could not be measured. */
double kbc_gpu_l2_read_ceiling(void *stream, uint64_t l2_bytes, int sm_count);
/* Before a cold sample: the persisting L2 lines back to normal and the
   stream's access-policy window cleared, so that nothing a variant marked
   persisting outlives the flush.  Best effort: a GPU without L2
   persistence has nothing to reset. */
void kbc_gpu_l2_cold(void *stream);
/* The stream's L2 access-policy window: its bytes (0: none), hit ratio,
   and whether hits persist.  0, or -1 with why set. */
int kbc_gpu_stream_window(void *stream, uint64_t *bytes, double *hit_ratio, int *persisting,
                          char *why, size_t n);
void kbc_gpu_stream_window_clear(void *stream);
/* The device's set-aside for persisting L2 lines (cudaLimitPersistingL2CacheSize),
   and setting it back. */
uint64_t kbc_gpu_persisting_l2(void);
void kbc_gpu_persisting_l2_set(uint64_t bytes);
/* Waits for everything on the current device: 0, or -1 with why set. */
int kbc_gpu_device_sync(char *why, size_t n);

#endif
