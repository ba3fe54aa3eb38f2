/*
 * sim_shim.h -- just enough of CUDA for test_matmul_sim.cpp to run kernel
 * source from matmul_kernels.cu on the CPU: one std::thread per CUDA thread,
 * one block at a time, __syncthreads() a barrier of the block's threads,
 * shared memory a heap buffer (dynamic) or a static array (static; blocks
 * run one at a time, so one copy serves them all), and cp.async as copies
 * that land either when issued or only when the issuing thread waits for
 * their group.
 *
 * What it checks besides the product: every cp.async writes inside the
 * shared buffer, at an address aligned to its size, from a source aligned
 * to its size and inside A or B whenever it reads anything; every copy has
 * landed when the kernel returns.  Misaligned 16-byte shared loads and
 * out-of-range global stores are left to the sanitizers (float4 here is
 * 16-byte aligned; A, B, C and shared memory are exact-size heap buffers).
 */
#ifndef KBM_SIM_SHIM_H
#define KBM_SIM_SHIM_H

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

struct alignas(16) float4 {
    float x, y, z, w;
};
static inline float4 make_float4(float a, float b, float c, float d) { return float4{a, b, c, d}; }

struct sim_dim3 {
    unsigned x, y, z;
};
static thread_local sim_dim3 threadIdx, blockIdx;

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

/* A block's barrier (std::barrier is C++20). */
struct sim_barrier {
    std::mutex mu;
    std::condition_variable cv;
    int n, count = 0;
    unsigned gen = 0;
    explicit sim_barrier(int threads) : n(threads) {}
    void wait()
    {
        std::unique_lock<std::mutex> lock(mu);
        unsigned g = gen;
        if (++count == n) {
            count = 0;
            ++gen;
            cv.notify_all();
        } else {
            cv.wait(lock, [&] { return gen != g; });
        }
    }
};

/* When copies land: SIM_AT_WAIT only when the issuing thread waits for the
   group (a missing wait or barrier reads stale shared memory); SIM_AT_ISSUE
   at once (a copy that overwrites a stage other threads still read changes
   what they read). */
enum sim_landing { SIM_AT_WAIT = 0, SIM_AT_ISSUE = 1 };

struct sim_world {
    int landing = SIM_AT_WAIT;
    char *smem_lo = nullptr, *smem_hi = nullptr;
    const char *g_lo[2] = {nullptr, nullptr}, *g_hi[2] = {nullptr, nullptr};
    std::mutex mu;
    std::string first_error; /* the first broken rule, empty when none */
    void fail(const std::string &what)
    {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.empty())
            first_error = what;
    }
};
static sim_world sim;

static thread_local float4 *sim_smem;
static thread_local sim_barrier *sim_bar;
static thread_local std::mt19937 *sim_rng;

struct sim_copy {
    char *dst;
    const char *src;
    int size, bytes;
};
static thread_local std::vector<std::vector<sim_copy>> sim_groups;
static thread_local std::vector<sim_copy> sim_open;

static inline void sim_land(const sim_copy &c)
{
    if (c.bytes)
        std::memcpy(c.dst, c.src, (size_t)c.bytes);
    std::memset(c.dst + c.bytes, 0, (size_t)(c.size - c.bytes));
}

static inline void sim_cp(void *dst_, const void *src_, int size, int bytes)
{
    char *dst = static_cast<char *>(dst_);
    const char *src = static_cast<const char *>(src_);
    if (!(dst >= sim.smem_lo && dst + size <= sim.smem_hi))
        return sim.fail("a cp.async writes outside the shared buffer");
    if ((uintptr_t)dst % (uintptr_t)size || (uintptr_t)src % (uintptr_t)size)
        return sim.fail("a cp.async of " + std::to_string(size) + " bytes is misaligned");
    if (bytes != 0 && bytes != size)
        return sim.fail("a cp.async copies part of its piece");
    if (bytes) {
        bool inside = false;
        for (int i = 0; i < 2; ++i)
            inside |= src >= sim.g_lo[i] && src + bytes <= sim.g_hi[i];
        if (!inside)
            return sim.fail("a cp.async reads outside A and B");
    }
    sim_copy c{dst, src, size, bytes};
    if (sim.landing == SIM_AT_ISSUE)
        sim_land(c);
    else
        sim_open.push_back(c);
}

static inline void cp_async16(void *smem, const void *gmem, int src_bytes) { sim_cp(smem, gmem, 16, src_bytes); }
static inline void cp_async4(void *smem, const void *gmem, int src_bytes) { sim_cp(smem, gmem, 4, src_bytes); }
/* The kernels' shared-window addresses are offsets into the block's buffer
   here; the zero-fill copies copy when idx < lim, as matmul_kernels.cu's. */
static inline size_t __cvta_generic_to_shared(const void *p)
{
    return (size_t)(static_cast<const char *>(p) - reinterpret_cast<const char *>(sim_smem));
}
static inline void cp_async4_below(unsigned dst, const void *src, int idx, int lim)
{
    sim_cp(reinterpret_cast<char *>(sim_smem) + dst, src, 4, idx < lim ? 4 : 0);
}
static inline void cp_async16_below(unsigned dst, const void *src, int idx, int lim)
{
    sim_cp(reinterpret_cast<char *>(sim_smem) + dst, src, 16, idx < lim ? 16 : 0);
}
static inline void cp_async_commit()
{
    sim_groups.push_back(sim_open);
    sim_open.clear();
}
/* As matmul_kernels.cu's: at most `pending` groups left in flight (0 .. 2). */
static inline void cp_async_wait(int pending)
{
    if (pending < 0)
        pending = 0;
    if (pending > 2)
        pending = 2;
    while ((int)sim_groups.size() > pending) {
        for (const sim_copy &c : sim_groups.front())
            sim_land(c);
        sim_groups.erase(sim_groups.begin());
    }
}
template <int N>
static inline void cp_async_wait_n()
{
    cp_async_wait(N);
}
/* Threads reach the barrier in an order the random yields vary. */
static inline void __syncthreads()
{
    if ((*sim_rng)() % 4 == 0)
        std::this_thread::yield();
    sim_bar->wait();
}

#endif
