/*
 * kbench/kit.h -- the plugin kit: the plumbing every family needs, so that
 * a family's source is its kernels.
 *
 * Link the static library kbench::kit (in the tree: kbench_kit); it is
 * position independent, calls only the CUDA runtime's C API and the host's
 * services, and keeps no global state.  Everything here is optional: a
 * plugin that includes only kbench/plugin.h is a complete plugin.
 *
 * Reading order: CUDA checks, buffers, the CPU parallel-for, inputs,
 * tolerances.
 */
#ifndef KBENCH_KIT_H
#define KBENCH_KIT_H

#include <stddef.h>
#include <stdint.h>

#include "kbench/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * CUDA checks.  `err` is a cudaError_t passed as an int so that this header
 * needs no CUDA header.  On failure the call's text, file (its last path
 * component), line and the runtime's error string go through host->fail()
 * and the macros return KB_ECUDA from the calling function:
 *
 *   KBK_CUDA(host, cudaMemsetAsync(p, 0xff, bytes, stream));
 *   my_kernel<<<g, b, 0, stream>>>(...);
 *   KBK_CUDA_LAUNCH(host, "my_kernel");
 * ---------------------------------------------------------------------- */
int kbk_cuda_check(kb_host *host, int err, const char *what, const char *file, int line);
/* The last launch's error (cudaGetLastError), named `what`. */
int kbk_cuda_launch_check(kb_host *host, const char *what, const char *file, int line);

#define KBK_CUDA(host, call)                                                             \
    do {                                                                                 \
        int kbk_rc_ = kbk_cuda_check((host), (int)(call), #call, __FILE__, __LINE__);    \
        if (kbk_rc_ != KB_OK)                                                            \
            return kbk_rc_;                                                              \
    } while (0)
#define KBK_CUDA_LAUNCH(host, name)                                                      \
    do {                                                                                 \
        int kbk_rc_ = kbk_cuda_launch_check((host), (name), __FILE__, __LINE__);         \
        if (kbk_rc_ != KB_OK)                                                            \
            return kbk_rc_;                                                              \
    } while (0)

/* ------------------------------------------------------------------------
 * Buffers: one array with a host copy and, where a GPU is in use, a device
 * copy.  The host copy is pinned when there is a device copy (fast,
 * asynchronous copies), plain otherwise.  Copies and poison are enqueued on
 * host->stream.  A zeroed kbk_buf is empty; kbk_buf_free accepts it.
 * ---------------------------------------------------------------------- */
typedef struct kbk_buf {
    void *host;   /* host copy, or NULL                */
    void *dev;    /* device copy, or NULL               */
    size_t bytes; /* size of each copy                  */
    int pinned;   /* host copy is page-locked           */
    int registered; /* pinned in place (kbk_buf_attach): malloc'd memory
                       that cudaHostRegister locked     */
} kbk_buf;

enum kbk_where {
    KBK_HOST = 1,   /* a host copy                                         */
    KBK_DEVICE = 2, /* a device copy; ignored without a GPU (no stream)    */
    KBK_BOTH = 3
};

/* Allocates the copies `where` asks for into b (overwritten: free a used
   one first; 0 bytes allocates nothing).  Without a GPU KBK_DEVICE is
   ignored and no CUDA function is called.  On failure frees what it got,
   says how many bytes of which memory could not be had and returns
   KB_ENOMEM (or KB_ECUDA). */
int kbk_buf_alloc(kb_host *host, kbk_buf *b, size_t bytes, int where);
void kbk_buf_free(kb_host *host, kbk_buf *b);
/* Fills every byte of both copies with `byte` (0xff: NaN for floats, -1 or
   all ones for integers), the device copy on the stream, the host copy now
   (in parallel when large). */
int kbk_buf_poison(kb_host *host, kbk_buf *b, unsigned char byte);
/* Host -> device and device -> host, enqueued on host->stream; nothing
   to do (KB_OK) unless both copies exist. */
int kbk_buf_upload(kb_host *host, kbk_buf *b);
int kbk_buf_download(kb_host *host, kbk_buf *b);
/* The device half of a buffer that kbk_buf_alloc made in a host half (a
   host without a stream makes only the host copy, KBK_DEVICE or not): its
   device copy, and its host copy pinned in place (cudaHostRegister; where
   that is refused, copied into memory cudaMallocHost pins), so that it
   ends as kbk_buf_alloc(KBK_BOTH or KBK_DEVICE) with a stream would have
   made it.  Nothing without a stream, for 0 bytes or for a buffer that
   has its device copy already.  On failure says why and returns KB_ENOMEM
   or KB_ECUDA; the buffer stays one kbk_buf_free frees. */
int kbk_buf_attach(kb_host *host, kbk_buf *b);

/* ------------------------------------------------------------------------
 * CPU parallel-for: fn(ctx, begin, end, worker) over [0, n) in at most
 * host->cpu_threads contiguous chunks (worker 0 .. threads-1, worker 0 on
 * the calling thread; all of it there when one thread suffices).  The
 * chunks' sizes differ by at most one and depend only on n and the thread
 * count, so a result summed per chunk is deterministic.  n = 0 calls
 * nothing.  Returns KB_OK, or the non-KB_OK value of the lowest worker
 * that returned one.
 * ---------------------------------------------------------------------- */
typedef int (*kbk_range_fn)(void *ctx, uint64_t begin, uint64_t end, int worker);
int kbk_parallel_for(kb_host *host, uint64_t n, kbk_range_fn fn, void *ctx);
/* The most workers one kbk_parallel_for starts, whatever host->cpu_threads
   says: worker is always below it, so per-worker results fit an array of
   this many. */
#define KBK_MAX_THREADS 256

/* ------------------------------------------------------------------------
 * Inputs on the counter-based generator of plugin.h (element i depends on
 * (seed, stream, i) only, whatever the thread count), filled in parallel.
 *
 * The rule is: no input that hides a wrong answer.  An input of zeros, or
 * one that makes a result of zero likely, lets a kernel that writes nothing
 * (or zeros) pass, so the uniform and exact fills never produce zero.
 * Where 0 is a valid value of the data (a key, a count, a bin, a byte),
 * excluding it would leave that case untested, so the key fills (u8, u32
 * in a range, Zipf) produce 0 like any other value of their range; none of
 * them can make an input of zeros alone.
 *
 * Uniform: values uniform in [lo, hi), never exactly zero.  A range that
 * holds no non-zero value fails with KB_EINVAL.
 * Exact: non-zero integers in [-k, k] (k >= 1).  With k <=
 * kbk_exact_bound(n, bits) every partial sum of n of them is an integer of
 * magnitude at most 2^bits, which the type holds exactly: any order of
 * additions gives the exact sum, a verify can demand equality, and a
 * dropped, doubled or perturbed element fails.  For f32 (24 bits) beyond
 * n = 2^24 no k >= 1 exists: kbk_exact_bound returns 0 and the caller must
 * fall back (f64 inputs, or uniform ones with a derived tolerance).
 * ---------------------------------------------------------------------- */
int kbk_fill_uniform_f32(kb_host *host, float *dst, uint64_t n, uint32_t stream, double lo,
                         double hi);
int kbk_fill_uniform_f64(kb_host *host, double *dst, uint64_t n, uint32_t stream, double lo,
                         double hi);
int kbk_fill_uniform_i32(kb_host *host, int32_t *dst, uint64_t n, uint32_t stream, int32_t lo,
                         int32_t hi);
int kbk_fill_exact_f32(kb_host *host, float *dst, uint64_t n, uint32_t stream, int32_t k);
int kbk_fill_exact_f64(kb_host *host, double *dst, uint64_t n, uint32_t stream, int32_t k);
/* Integers, 0 included where the range holds it.
 *
 * kbk_fill_u8: every byte value 0 .. 255 equally likely (the top 8 bits of
 * the generator).
 * kbk_fill_u32_range: uniform in [lo, hi], both ends included (so
 * [0, UINT32_MAX] is every u32), with a bias below (hi - lo + 1) / 2^64 per
 * value.  KB_EINVAL when lo > hi or the range is [0, 0].
 * kbk_fill_zipf_u32: skewed keys in [0, n_values), value k with probability
 * (k+1)^-s / Z, Z = sum over m = 1 .. n_values of m^-s (Zipf's law with
 * exponent s): 0 is the most frequent value, with share 1/Z, and value k
 * is (k+1)^s times rarer than 0.  s = 0 is uniform; s = 1 is the classic
 * Zipf.  Exact up to the rounding of doubles, by rejection from a hat
 * whose integral inverts in closed form (derived in the kit's source,
 * kit_inputs.c, and in docs/plugins.md): at most 64
 * attempts per element, each accepted with probability at least 9/16.
 * KB_EINVAL unless 2 <= n_values <= 2^32 and 0 <= s <= KBK_ZIPF_MAX_S
 * (beyond, nearly every element is 0: at s = 4 the share of 0 is at most
 * 1/(1 + 2^-4) = 0.94). */
#define KBK_ZIPF_MAX_S 4.0
int kbk_fill_u8(kb_host *host, uint8_t *dst, uint64_t n, uint32_t stream);
int kbk_fill_u32_range(kb_host *host, uint32_t *dst, uint64_t n, uint32_t stream, uint32_t lo,
                       uint32_t hi);
int kbk_fill_zipf_u32(kb_host *host, uint32_t *dst, uint64_t n, uint32_t stream,
                      uint64_t n_values, double s);
/* The largest k with n*k <= 2^mantissa_bits (24 for f32, 53 for f64),
   capped at INT32_MAX; 0 when there is none or mantissa_bits is outside
   1 .. 63.  n = 0 counts as 1. */
int32_t kbk_exact_bound(uint64_t n, int mantissa_bits);

/* ------------------------------------------------------------------------
 * Tolerances and comparisons.  Every tolerance is a derived bound, never a
 * figure tuned until a test passes.
 * ---------------------------------------------------------------------- */
/* Unit roundoff of a type with `mantissa_bits` bits (2^-24 for f32). */
double kbk_unit_roundoff(int mantissa_bits);
/* Worst-case error bound of a sum computed as a tree of `depth` levels of
   additions (serial chains count one level per addition): gamma(depth) *
   sum_abs, with gamma(d) = d*u / (1 - d*u); infinite when d*u >= 1. */
double kbk_sum_bound(int depth, double sum_abs, int mantissa_bits);
/* Fills check for a scalar result: abs error against tolerance. */
void kbk_check_abs(kb_check *check, double got, double want, double tolerance);
/* Fills check for an array compared element by element with an abs + rel
   bound (|got - want| <= atol + rtol*|want|): error is the worst element's
   |got - want| in units of its own bound (0.31: within a third of it;
   infinite for a NaN, or for any difference where the bound is 0),
   tolerance 1, measure "worst err/bound"; it passes when every element is
   within its bound.  *first_bad gets the first element outside (or n). */
void kbk_check_f32(kb_check *check, const float *got, const double *want, uint64_t n,
                   double atol, double rtol, uint64_t *first_bad);
/* The spacing of floats at |x| (an f32 ulp): 2^(e-23) for x in [2^e,
   2^(e+1)), 2^-149 below the normal range. */
double kbk_ulp_f32(double x);
/* Fills check for an array whose elements each carry a relative error
   bound, as the functions of a math library do (CUDA's expf and logf are
   documented to 2 and 1 ulps): error is the largest |got - want| in f32
   ulps of want (want in higher precision), tolerance max_ulps, measure
   "ulps".  A NaN or infinity matches only itself.  Derive max_ulps from the
   documented bounds of what the kernel calls, plus 0.5 for the rounding
   of each float result the kernel stores.  *worst_at gets the worst
   element (or n when every element is exact). */
void kbk_check_ulps_f32(kb_check *check, const float *got, const double *want, uint64_t n,
                        double max_ulps, uint64_t *worst_at);
/* Bit-exact comparison of arrays of elem_bytes-sized elements: error is the
   number of differing elements, tolerance 0, measure "mismatches".  A NaN
   matches only the same NaN bits. */
void kbk_check_exact(kb_check *check, const void *got, const void *want, uint64_t n,
                     size_t elem_bytes, uint64_t *first_bad);

/* ------------------------------------------------------------------------
 * The descriptor's plumbing.  KBK_OPS(p) declares a family's nine entries,
 * static and named p_plan, p_setup, p_prepare, p_upload, p_run,
 * p_download, p_verify, p_teardown and p_extension (the kb_ops signatures,
 * plugin.h), and defines `static const kb_ops p_ops` pointing at them; the
 * family then defines the nine functions.  A family that leaves an entry
 * NULL writes its table by hand.  KBK_EXPORT_ONE(descriptor) defines the
 * entry point kbench_plugin() of a file that holds one plugin.
 * ---------------------------------------------------------------------- */
#define KBK_OPS(p)                                                                       \
    static int p##_plan(const kb_value *params, kb_work *out, kb_host *host);            \
    static int p##_setup(const kb_value *params, uint64_t vmask, kb_host *host,          \
                         void **state);                                                  \
    static int p##_prepare(void *state, uint32_t v, kb_host *host);                      \
    static int p##_upload(void *state, uint32_t v, kb_host *host);                       \
    static int p##_run(void *state, uint32_t v, kb_host *host);                          \
    static int p##_download(void *state, uint32_t v, kb_host *host);                     \
    static int p##_verify(void *state, uint32_t v, kb_check *out, kb_host *host);        \
    static void p##_teardown(void *state, kb_host *host);                                \
    static const void *p##_extension(const char *name);                                  \
    static const kb_ops p##_ops = {                                                      \
        KB_OPS_HEADER,                                                                   \
        .plan = p##_plan,                                                                \
        .setup = p##_setup,                                                              \
        .prepare = p##_prepare,                                                          \
        .upload = p##_upload,                                                            \
        .run = p##_run,                                                                  \
        .download = p##_download,                                                        \
        .verify = p##_verify,                                                            \
        .teardown = p##_teardown,                                                        \
        .extension = p##_extension,                                                      \
    }

/* ------------------------------------------------------------------------
 * setup() in two halves, for the prefetch extension (kbench/plugin.h,
 * KB_PREFETCH_EXTENSION).  A family writes
 *   static int p_setup_host(const kb_value *params, uint64_t vmask,
 *                           kb_host *host, void **state);
 *       the state and everything of it that needs no device: its host
 *       buffers (kbk_buf_alloc makes host copies only here: the host has
 *       no stream), the inputs, the reference.  No CUDA.
 *   static int p_setup_device(void *state, uint64_t vmask, kb_host *host);
 *       the rest, on the same state: kbk_buf_attach for each buffer with a
 *       device copy, the uploads, library handles.  vmask is a subset of
 *       the host half's.
 * and KBK_PREFETCH(p) after KBK_OPS(p) (or KBK_FAMILY_PLUGIN) in place of
 * p_setup: it declares the two halves and defines p_setup (the two in a
 * row through kbk_setup_halves, the host half seeing no stream, so that a
 * state is the same whether its host half was made ahead or not) and
 * p_prefetch, the extension's table, whose drop_host is p_teardown (which
 * must free a state the device half never saw, as it frees a partly built
 * one).  p_extension returns &p_prefetch for KB_PREFETCH_EXTENSION.
 * ---------------------------------------------------------------------- */
typedef int (*kbk_setup_host_fn)(const kb_value *params, uint64_t vmask, kb_host *host,
                                 void **state);
typedef int (*kbk_setup_device_fn)(void *state, uint64_t vmask, kb_host *host);
/* setup() from the two halves: host_half on a copy of host without its
   stream, then device_half on host. */
int kbk_setup_halves(const kb_value *params, uint64_t vmask, kb_host *host, void **state,
                     kbk_setup_host_fn host_half, kbk_setup_device_fn device_half);

#define KBK_PREFETCH(p)                                                                  \
    static int p##_setup_host(const kb_value *kbk_params_, uint64_t kbk_vmask_,          \
                              kb_host *kbk_host_, void **kbk_state_);                    \
    static int p##_setup_device(void *kbk_state_, uint64_t kbk_vmask_,                   \
                                kb_host *kbk_host_);                                     \
    static int p##_setup(const kb_value *kbk_params_, uint64_t kbk_vmask_,               \
                         kb_host *kbk_host_, void **kbk_state_)                          \
    {                                                                                    \
        return kbk_setup_halves(kbk_params_, kbk_vmask_, kbk_host_, kbk_state_,          \
                                p##_setup_host, p##_setup_device);                       \
    }                                                                                    \
    static int p##_prefetch_device(void *kbk_hs_, uint64_t kbk_vmask_,                   \
                                   kb_host *kbk_host_, void **kbk_state_)                \
    {                                                                                    \
        *kbk_state_ = kbk_hs_;                                                           \
        return p##_setup_device(kbk_hs_, kbk_vmask_, kbk_host_);                         \
    }                                                                                    \
    static void p##_prefetch_drop(void *kbk_hs_, kb_host *kbk_host_)                     \
    {                                                                                    \
        p##_teardown(kbk_hs_, kbk_host_);                                                \
    }                                                                                    \
    static const kb_prefetch p##_prefetch = {                                            \
        .size = sizeof(kb_prefetch),                                                     \
        .setup_host = p##_setup_host,                                                    \
        .setup_device = p##_prefetch_device,                                             \
        .drop_host = p##_prefetch_drop,                                                  \
    }

#define KBK_EXPORT_ONE(descriptor)                                                       \
    KB_EXPORT const kb_plugin *kbench_plugin(uint32_t index)                             \
    {                                                                                    \
        return index == 0 ? &(descriptor) : NULL;                                        \
    }

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_KIT_H */
