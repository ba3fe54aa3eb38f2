/*
 * simt.h -- a small CPU model of a CUDA grid, enough to run the kernel
 * bodies of sort_early.cuh on the host: every CUDA thread is a fiber
 * (ucontext), a warp's collectives (ballot, shuffle, match) and a block's
 * barrier are rendezvous of its fibers, shared memory is per block, and
 * global memory is the host's.  Several blocks are resident at once and
 * their threads run interleaved in a seeded random order, each block at its
 * own random pace, so that a look-back meets predecessors that have
 * published an aggregate, a prefix, or nothing yet in this run, and tile
 * numbers are taken out of launch order.
 *
 * What it does not model: the GPU's memory model (fibers switch only at the
 * primitives, so every access is sequentially consistent), timing, limits
 * on registers and shared memory, and the inline PTX of the device build.
 * It checks the algorithm's logic: ranks, offsets, partial tiles, the
 * look-back and its epochs, the histogram's last-block scan.
 *
 * Include this file, then sort_early.cuh.  One model per process (a global
 * pointer); not thread-safe.
 */
#ifndef KBENCH_SORT_SIMT_H
#define KBENCH_SORT_SIMT_H

#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#define SORT_OE_HOST_MODEL 1

struct uint4 {
    uint32_t x, y, z, w;
};

namespace simt {

struct Block;

struct Thread {
    ucontext_t ctx;
    Block *block;
    unsigned tid;
    bool done;
};

/* A rendezvous of the 32 lanes of a warp: each deposits a word; the last to
   arrive publishes the 32 words and wakes the others. */
struct Warp {
    unsigned arrived = 0;
    uint64_t gen = 0;
    uint32_t in[32];
    uint32_t out[32];
};

struct Block {
    unsigned id = 0;
    unsigned pace = 64; /* of 64 sweeps, how many its threads take part in */
    std::vector<uint32_t> smem;
    std::vector<Thread> threads;
    std::vector<Warp> warps;
    std::vector<char> stacks;
    unsigned bar_arrived = 0;
    uint64_t bar_gen = 0;
};

const size_t STACK_BYTES = 64 * 1024;

struct Model {
    ucontext_t sched;
    Thread *cur = nullptr;
    std::mt19937_64 rng;
    uint64_t yields = 0;
    uint64_t yield_limit = 4000000000ull; /* a hang reads as a failure, not a stall */
    unsigned grid = 0;
    std::function<void(unsigned t, unsigned block, unsigned grid)> body;
};

inline Model *&model()
{
    static Model *m = nullptr;
    return m;
}

inline void yield()
{
    Model *m = model();
    if (++m->yields > m->yield_limit) {
        std::fprintf(stderr, "simt: more than %llu switches: a hang\n",
                     (unsigned long long)m->yield_limit);
        std::abort();
    }
    swapcontext(&m->cur->ctx, &m->sched);
}

/* Sometimes lets another thread run (atomics, stores): more interleavings. */
inline void maybe_yield()
{
    if ((model()->rng() & 3) == 0)
        yield();
}

inline void entry()
{
    Model *m = model();
    Thread *t = m->cur;
    m->body(t->tid, t->block->id, m->grid);
    t->done = true; /* uc_link returns to the scheduler */
}

/* Deposits v, waits for the warp, returns the 32 words of this round. */
inline const uint32_t *exchange(uint32_t v)
{
    Thread *t = model()->cur;
    Warp &w = t->block->warps[t->tid / 32];
    uint64_t gen = w.gen;
    w.in[t->tid % 32] = v;
    if (++w.arrived == 32) {
        for (int i = 0; i < 32; i++)
            w.out[i] = w.in[i];
        w.arrived = 0;
        w.gen++;
    } else {
        while (w.gen == gen)
            yield();
    }
    /* w.out stays until every lane has deposited again, which each does
       only after reading it. */
    return w.out;
}

inline unsigned lane() { return model()->cur->tid % 32; }

/* Runs body(t, block, grid) for `grid` blocks of `threads` threads with
   `smem_words` of shared memory each, at most `resident` blocks at once.
   Blocks start in launch order. */
inline void run_grid(Model &m, unsigned grid, unsigned threads, size_t smem_words,
                     unsigned resident, std::function<void(unsigned, unsigned, unsigned)> body)
{
    if (threads % 32 != 0) {
        std::fprintf(stderr, "simt: %u threads is not whole warps\n", threads);
        std::abort();
    }
    model() = &m;
    m.grid = grid;
    m.body = body;
    std::vector<std::unique_ptr<Block>> live;
    unsigned next = 0;
    std::vector<Thread *> order;
    while (next < grid || !live.empty()) {
        while (live.size() < resident && next < grid) {
            std::unique_ptr<Block> b(new Block);
            b->id = next++;
            b->pace = 1 + (unsigned)(m.rng() % 64); /* some blocks lag far behind */
            b->smem.assign(smem_words, 0xdeadbeefu); /* shared memory starts undefined */
            b->threads.resize(threads);
            b->warps.resize(threads / 32);
            b->stacks.resize(threads * STACK_BYTES);
            for (unsigned i = 0; i < threads; i++) {
                Thread &t = b->threads[i];
                t.block = b.get();
                t.tid = i;
                t.done = false;
                getcontext(&t.ctx);
                t.ctx.uc_stack.ss_sp = &b->stacks[i * STACK_BYTES];
                t.ctx.uc_stack.ss_size = STACK_BYTES;
                t.ctx.uc_link = &m.sched;
                makecontext(&t.ctx, entry, 0);
            }
            live.push_back(std::move(b));
        }
        order.clear();
        for (auto &b : live) {
            if (m.rng() % 64 >= b->pace)
                continue; /* this block sits this sweep out */
            for (auto &t : b->threads)
                if (!t.done)
                    order.push_back(&t);
        }
        std::shuffle(order.begin(), order.end(), m.rng);
        for (Thread *t : order) {
            m.cur = t;
            swapcontext(&m.sched, &t->ctx);
        }
        for (size_t i = 0; i < live.size();) {
            bool all = true;
            for (auto &t : live[i]->threads)
                all = all && t.done;
            if (all)
                live.erase(live.begin() + (long)i);
            else
                i++;
        }
    }
    m.cur = nullptr;
}

} // namespace simt

/* ---- the primitives sort_early.cuh expects ------------------------------------ */

inline uint32_t *oe_smem() { return simt::model()->cur->block->smem.data(); }

inline void oe_sync()
{
    simt::Block *b = simt::model()->cur->block;
    uint64_t gen = b->bar_gen;
    if (++b->bar_arrived == b->threads.size()) {
        b->bar_arrived = 0;
        b->bar_gen++;
    } else {
        while (b->bar_gen == gen)
            simt::yield();
    }
}

inline uint32_t oe_ballot(bool p)
{
    const uint32_t *v = simt::exchange(p ? 1u : 0u);
    uint32_t r = 0;
    for (int i = 0; i < 32; i++)
        r |= (v[i] ? 1u : 0u) << i;
    return r;
}

inline uint32_t oe_shfl(uint32_t x, unsigned src) { return simt::exchange(x)[src & 31u]; }

inline uint32_t oe_shfl_up(uint32_t x, unsigned d)
{
    unsigned l = simt::lane();
    const uint32_t *v = simt::exchange(x);
    return l >= d ? v[l - d] : x;
}

inline uint32_t oe_match_any(uint32_t x)
{
    const uint32_t *v = simt::exchange(x);
    uint32_t r = 0;
    for (int i = 0; i < 32; i++)
        r |= (v[i] == x ? 1u : 0u) << i;
    return r;
}

inline uint32_t oe_popc(uint32_t v) { return (uint32_t)__builtin_popcount(v); }
inline uint32_t oe_clz(uint32_t v) { return v ? (uint32_t)__builtin_clz(v) : 32u; }
inline uint32_t oe_byte(uint32_t v, uint32_t pos) { return (v >> (8 * pos)) & 255u; }

inline uint32_t oe_atomic_add(uint32_t *p, uint32_t v)
{
    simt::maybe_yield();
    uint32_t old = *p;
    *p = old + v;
    return old;
}

inline unsigned long long oe_ld_relaxed(const unsigned long long *p)
{
    simt::yield(); /* a spinning reader lets the others run */
    return *p;
}

inline void oe_st_relaxed(unsigned long long *p, unsigned long long v)
{
    *p = v;
    simt::maybe_yield();
}

inline void oe_fence() { simt::maybe_yield(); }
inline uint32_t oe_ldcg(const uint32_t *p) { return *p; }
inline uint4 oe_ld4(const uint4 *p) { return *p; }
inline uint32_t oe_ld_plan(const uint32_t *p) { return *p; }
inline unsigned long long oe_global_bits(const uint32_t *p) { return (unsigned long long)(uintptr_t)p; }
inline uint32_t *oe_global_ptr(unsigned long long b) { return (uint32_t *)(uintptr_t)b; }

#endif
