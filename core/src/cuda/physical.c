/* physical.c -- see physical.h. */
#define _GNU_SOURCE
#include "physical.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kbench/plugin.h"
#include "util.h"

/* ---- the CPU's facts ----------------------------------------------------------- */

/* The first line of a small sysfs file, or "" */
static void read_line(const char *path, char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(buf, (int)n, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

/* "32K", "1024K", "36M" as bytes. */
static uint64_t size_of(const char *s)
{
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return 0;
    return (uint64_t)v * (*end == 'K' ? 1024ULL : *end == 'M' ? 1048576ULL
                                    : *end == 'G' ? 1073741824ULL : 1ULL);
}

/* Every data or unified cache of every level, each instance (the CPUs
   that share it) counted once: a working set that fits in them all may
   never reach the memory. */
static uint64_t cache_bytes(int cpus)
{
    enum { MAX_SEEN = 4096 };
    char (*seen)[200] = kbc_xcalloc(MAX_SEEN, sizeof *seen);
    size_t n_seen = 0;
    uint64_t total = 0;
    for (int c = 0; c < cpus && c < 4096; c++) {
        for (int i = 0; i < 16; i++) {
            char path[160], type[32], level[16], shared[64], size[32];
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", c, i);
            read_line(path, type, sizeof type);
            if (!type[0])
                break;
            if (strcmp(type, "Instruction") == 0)
                continue;
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", c, i);
            read_line(path, level, sizeof level);
            snprintf(path, sizeof path,
                     "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", c, i);
            read_line(path, shared, sizeof shared);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", c, i);
            read_line(path, size, sizeof size);
            char id[200];
            snprintf(id, sizeof id, "%s/%s", level, shared[0] ? shared : path);
            size_t k = 0;
            while (k < n_seen && strcmp(seen[k], id) != 0)
                k++;
            if (k < n_seen)
                continue;
            if (n_seen < MAX_SEEN)
                snprintf(seen[n_seen++], sizeof seen[0], "%s", id);
            total += size_of(size);
        }
    }
    free(seen);
    return total;
}

void kbc_limits_cpu(kbc_limits *l)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    l->cpus = cpus > 0 ? (int)cpus : 1;
    double khz = 0;
    for (int c = 0; c < l->cpus && c < 4096; c++) {
        char path[128], line[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", c);
        read_line(path, line, sizeof line);
        double v = atof(line);
        if (v > khz)
            khz = v;
    }
    l->cpu_ghz = khz > 0 ? khz * 1e-6 : KBC_CPU_GHZ_ASSUMED;
    l->cache_bytes = cache_bytes(l->cpus);
    /* Without the topology: a last-level cache per CPU of 32 MiB, more
       than any has, so that the memory bound applies only far beyond. */
    if (l->cache_bytes == 0)
        l->cache_bytes = (uint64_t)l->cpus * (32ULL << 20);
    l->cpu_copy_gbps = 0;
}

/* ---- the CPU's copy rate --------------------------------------------------------- */

typedef struct copy_team {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int go;                 /* 0 wait, 1 copy, -1 give up */
    pthread_barrier_t start, done;
} copy_team;

typedef struct copier {
    copy_team *team;
    char *src, *dst;
    uint64_t bytes;
    int reps;
} copier;

static void *copy_slices(void *arg)
{
    copier *c = arg;
    copy_team *t = c->team;
    pthread_mutex_lock(&t->lock);
    while (t->go == 0)
        pthread_cond_wait(&t->cond, &t->lock);
    int go = t->go;
    pthread_mutex_unlock(&t->lock);
    if (go < 0)
        return NULL;
    /* First touch here, so that the pages lie where this thread runs. */
    memset(c->src, 1, c->bytes);
    memset(c->dst, 2, c->bytes);
    for (int r = 0; r < c->reps; r++) {
        pthread_barrier_wait(&t->start);
        memcpy(c->dst, c->src, c->bytes);
        __asm__ volatile("" : : "r"(c->dst) : "memory");
        pthread_barrier_wait(&t->done);
    }
    return NULL;
}

double kbc_cpu_copy_gbps(int threads, uint64_t cache)
{
    enum { REPS = 4 }; /* the first of them warms; the best of the rest */
    if (threads < 1)
        threads = 1;
    if (threads > 256)
        threads = 256;
    /* Four times the caches, within 64 MiB .. 1 GiB and an eighth of the
       memory, in whole pages per thread. */
    uint64_t bytes = 4 * cache;
    bytes = bytes < (64ULL << 20) ? (64ULL << 20) : bytes > (1ULL << 30) ? (1ULL << 30) : bytes;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && bytes > (uint64_t)pages * (uint64_t)page / 8)
        bytes = (uint64_t)pages * (uint64_t)page / 8;
    uint64_t slice = bytes / (uint64_t)threads / 4096 * 4096;
    if (slice == 0)
        return 0.0;
    char *src = malloc(slice * (uint64_t)threads), *dst = malloc(slice * (uint64_t)threads);
    copier *cs = calloc((size_t)threads, sizeof *cs);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    double best = 0.0;
    if (!src || !dst || !cs || !tids) {
        free(src);
        free(dst);
        free(cs);
        free(tids);
        return 0.0;
    }
    copy_team team = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    pthread_barrier_init(&team.start, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&team.done, NULL, (unsigned)threads + 1);
    int made = 0;
    for (; made < threads; made++) {
        cs[made] = (copier){&team, src + (uint64_t)made * slice, dst + (uint64_t)made * slice,
                            slice, REPS};
        if (pthread_create(&tids[made], NULL, copy_slices, &cs[made]) != 0)
            break;
    }
    /* The barriers need every thread: without all of them, none copies. */
    pthread_mutex_lock(&team.lock);
    team.go = made == threads ? 1 : -1;
    pthread_cond_broadcast(&team.cond);
    pthread_mutex_unlock(&team.lock);
    for (int r = 0; made == threads && r < REPS; r++) {
        pthread_barrier_wait(&team.start);
        double t0 = kbc_now();
        pthread_barrier_wait(&team.done);
        double t = kbc_now() - t0;
        double gbps = t > 0 ? 2.0 * (double)slice * threads / t / 1e9 : 0.0;
        if (r > 0 && gbps > best)
            best = gbps;
    }
    for (int k = 0; k < made; k++)
        pthread_join(tids[k], NULL);
    pthread_barrier_destroy(&team.start);
    pthread_barrier_destroy(&team.done);
    free(src);
    free(dst);
    free(cs);
    free(tids);
    return best;
}

void kbc_limit_cpu_again(kbc_limits *l)
{
    double g = kbc_cpu_copy_gbps(l->cpus, l->cache_bytes);
    if (g > l->cpu_copy_gbps)
        l->cpu_copy_gbps = g;
}

/* ---- the GPU's facts ---------------------------------------------------------------- */

void kbc_limits_gpu(kbc_limits *l, const kbc_machine *m, int bus_bits, unsigned sm_max_mhz,
                    double l2_gbps)
{
    /* Data rate: two transfers a clock on every pin of the bus. */
    l->dram_gbps = m->mem_clock_khz > 0 && bus_bits > 0
                       ? 2.0 * (double)m->mem_clock_khz * 1e3 * (bus_bits / 8.0) / 1e9
                       : 0.0;
    l->l2_gbps = l2_gbps;
    l->l2_bytes = m->l2_bytes;
    l->sm_count = m->sm_count;
    l->cc_major = m->cc_major;
    double ghz = (double)m->clock_khz * 1e-6;
    if (sm_max_mhz * 1e-3 > ghz)
        ghz = sm_max_mhz * 1e-3;
    l->sm_ghz = ghz;
}

/* ---- the bounds ------------------------------------------------------------------------ */

double kbc_limit_behind_cache(double cache, double memory, uint64_t w, uint64_t c)
{
    if (w <= c || memory <= 0)
        return cache > 0 ? cache : 0.0;
    double behind = memory * (double)w / (double)(w - c);
    return cache > 0 && cache < behind ? cache : behind;
}

static const char *rate_text(double gbps, char *buf, size_t n)
{
    if (gbps >= 1000)
        snprintf(buf, n, "%.3g TB/s", gbps / 1000);
    else
        snprintf(buf, n, "%.3g GB/s", gbps);
    return buf;
}

double kbc_limit_gbps(kbc_limits *l, int cuda, uint64_t r, uint64_t w, int cold, char *basis,
                      size_t n)
{
    char a[32], b[32], ws[32], cs[32];
    uint64_t set = r + w;
    basis[0] = '\0';
    if (set == 0)
        return 0.0;
    kbc_human_bytes(set, ws, sizeof ws);
    if (!cuda) {
        double core = l->cpus * (double)KBC_CPU_BYTES_PER_CYCLE * l->cpu_ghz;
        kbc_human_bytes(l->cache_bytes, cs, sizeof cs);
        if (set > l->cache_bytes) {
            if (l->cpu_copy_gbps == 0) {
                double g = kbc_cpu_copy_gbps(l->cpus, l->cache_bytes);
                l->cpu_copy_gbps = g > 0 ? g : -1;
            }
            if (l->cpu_copy_gbps > 0) {
                double mem = l->cpu_copy_gbps * KBC_LIMIT_CPU_MEM_MARGIN;
                double bound = kbc_limit_behind_cache(core, mem, set, l->cache_bytes);
                if (bound < core) {
                    snprintf(basis, n,
                             "its memory moves at most %s for a working set of %s beyond its "
                             "%s of caches (%g x the %s its CPUs copy together, the caches "
                             "serving the rest)",
                             rate_text(bound, a, sizeof a), ws, cs, KBC_LIMIT_CPU_MEM_MARGIN,
                             rate_text(l->cpu_copy_gbps, b, sizeof b));
                    return bound;
                }
            }
        }
        snprintf(basis, n,
                 "its %d CPUs move at most %s (%d bytes a cycle each at %.3g GHz)", l->cpus,
                 rate_text(core, a, sizeof a), KBC_CPU_BYTES_PER_CYCLE, l->cpu_ghz);
        return core;
    }
    /* Reads and writes cross between the SMs and the L2 in opposite
       directions, so together they may reach the rate of each. */
    double both = (double)set / (double)(r > w ? r : w);
    double l2 = l->l2_gbps * KBC_LIMIT_L2_MARGIN * both;
    double dram = l->dram_gbps * KBC_LIMIT_DRAM_MARGIN;
    kbc_human_bytes(l->l2_bytes, cs, sizeof cs);
    if (cold || set > l->l2_bytes) {
        double bound = cold ? dram : kbc_limit_behind_cache(0.0, dram, set, l->l2_bytes);
        if (dram > 0 && (l2 <= 0 || bound < l2)) {
            if (cold)
                snprintf(basis, n,
                         "its memory can move at most %s (2 x its memory clock x its bus, "
                         "+%.0f%%) after the L2 flush of cache = cold",
                         rate_text(bound, a, sizeof a), (KBC_LIMIT_DRAM_MARGIN - 1) * 100);
            else
                snprintf(basis, n,
                         "its memory can move at most %s (2 x its memory clock x its bus, "
                         "+%.0f%%) for a working set of %s, of which its %s L2 may hold the "
                         "rest",
                         rate_text(bound, a, sizeof a), (KBC_LIMIT_DRAM_MARGIN - 1) * 100, ws,
                         cs);
            return bound;
        }
    }
    if (l2 > 0) {
        snprintf(basis, n,
                 "its L2 serves at most %s (%g x its measured L2 read rate of %s%s) for a "
                 "working set of %s",
                 rate_text(l2, a, sizeof a), KBC_LIMIT_L2_MARGIN,
                 rate_text(l->l2_gbps, b, sizeof b),
                 both > 1.0001 ? ", reads and writes each" : "", ws);
        return l2;
    }
    return 0.0;
}

/* Dense floating-point operations an SM of compute capability `major`
   finishes per clock on its tensor cores at TF32 (FP16 before 8.0, which
   has no TF32): the fastest part of each generation, so a bound for all of
   it.  An unknown (newer) generation gets twice the newest. */
static double tensor_tf32_per_sm_clock(int major)
{
    if (major <= 8)
        return 1024;
    if (major == 9)
        return 2048;
    if (major <= 12)
        return 4096;
    return 8192;
}

double kbc_limit_gflops(const kbc_limits *l, uint32_t peak, char *basis, size_t n)
{
    basis[0] = '\0';
    if (l->sm_count <= 0 || l->sm_ghz <= 0)
        return 0.0;
    /* FP32 work may run on the tensor cores (3xTF32, a library's TF32
       mode), so its bound is theirs; BF16 runs at twice TF32; work of no
       named precision (FP64, integers, FP8) at most at four times BF16, the
       FP4 rate of the newest parts. */
    double per = tensor_tf32_per_sm_clock(l->cc_major);
    const char *unit = "the tensor cores at TF32, where FP32 work may run too";
    if (peak == KB_PEAK_BF16) {
        per *= 2;
        unit = "the tensor cores at BF16";
    } else if (peak != KB_PEAK_FP32 && peak != KB_PEAK_TF32) {
        per *= 8;
        unit = "the tensor cores at their narrowest type";
    }
    double bound = per * l->sm_count * l->sm_ghz * KBC_LIMIT_FLOPS_MARGIN;
    snprintf(basis, n,
             "its %d SMs can do at most %.4g TFLOP/s on %s (%.0f operations an SM a cycle at "
             "%.3g GHz, +%.0f%%)",
             l->sm_count, bound / 1000, unit, per, l->sm_ghz, (KBC_LIMIT_FLOPS_MARGIN - 1) * 100);
    return bound;
}
