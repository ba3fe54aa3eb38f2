/* cpu_facts.c -- see cpu_facts.h. */
#define _GNU_SOURCE
#include "cpu_facts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "util.h"

/* The first line of a small file of /sys, trimmed, into buf ("" when it
   cannot be read). */
static void first_line(const char *path, char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    if (!fgets(buf, (int)n, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
}

/* /proc/cpuinfo's first "model name" and "cpu MHz". */
static void cpuinfo(kbc_cpu_facts *f, double *mhz)
{
    FILE *in = fopen("/proc/cpuinfo", "re");
    if (!in)
        return;
    char line[512];
    int lines = 0;
    while (fgets(line, sizeof line, in) && lines++ < 4096 && (!f->model[0] || !isfinite(*mhz))) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *value = colon + 1;
        value += strspn(value, " \t");
        value[strcspn(value, "\r\n")] = '\0';
        if (!f->model[0] && strncmp(line, "model name", 10) == 0)
            snprintf(f->model, sizeof f->model, "%s", value);
        else if (!isfinite(*mhz) && strncmp(line, "cpu MHz", 7) == 0)
            *mhz = strtod(value, NULL);
    }
    fclose(in);
}

static double load1(void)
{
    double l[1];
    return getloadavg(l, 1) == 1 ? l[0] : NAN;
}

double kbc_cpu_seconds(void)
{
    struct rusage self, kids;
    if (getrusage(RUSAGE_SELF, &self) != 0 || getrusage(RUSAGE_CHILDREN, &kids) != 0)
        return NAN;
    double s = 0;
    s += (double)self.ru_utime.tv_sec + (double)self.ru_utime.tv_usec * 1e-6;
    s += (double)self.ru_stime.tv_sec + (double)self.ru_stime.tv_usec * 1e-6;
    s += (double)kids.ru_utime.tv_sec + (double)kids.ru_utime.tv_usec * 1e-6;
    s += (double)kids.ru_stime.tv_sec + (double)kids.ru_stime.tv_usec * 1e-6;
    return s;
}

void kbc_cpu_facts_start(kbc_cpu_facts *f)
{
    memset(f, 0, sizeof *f);
    f->mhz = f->load_after = f->cpu_s = f->wall_s = NAN;
    double proc_mhz = NAN;
    cpuinfo(f, &proc_mhz);
    first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", f->governor,
               sizeof f->governor);
    char khz[64];
    first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", khz, sizeof khz);
    char *end;
    double k = strtod(khz, &end);
    /* cpufreq's reading is the clock now; /proc/cpuinfo's, where there is
       no cpufreq (a virtual machine), is what the hypervisor says. */
    f->mhz = khz[0] && end != khz && k > 0 ? k / 1000 : proc_mhz > 0 ? proc_mhz : NAN;
    f->load_before = load1();
}

void kbc_cpu_facts_end(kbc_cpu_facts *f, double cpu0_s, double started)
{
    f->load_after = load1();
    double now = kbc_cpu_seconds();
    f->cpu_s = isfinite(now) && isfinite(cpu0_s) ? now - cpu0_s : NAN;
    f->wall_s = started > 0 ? kbc_now() - started : NAN;
}

double kbc_cpu_other_load(double load_before, double load_after, double cpu_s, double wall_s)
{
    double own = cpu_s >= 0 && wall_s > 0 ? cpu_s / wall_s : NAN;
    double after = isfinite(load_after) && isfinite(own) ? load_after - own : NAN;
    if (isfinite(load_before) && isfinite(after))
        return load_before > after ? load_before : after;
    return isfinite(load_before) ? load_before : after;
}

int kbc_cpu_loaded(double other_load)
{
    return isfinite(other_load) && other_load >= KBC_LOADED_HOST;
}
