/*
 * cpu_facts.h -- what a CPU row's noise may come from: the host's CPU (its
 * model, the frequency governor and the clock of CPU 0), the host's load
 * average when the run started and when its points were over, and the CPU
 * time kbench and its workers used meanwhile.  results.json carries them
 * as machine.cpu (docs/output.md, "JSON"); kbench compare warns when a side
 * ran on a loaded host (kbc_cpu_loaded).
 *
 * Read from Linux's /proc and /sys; a fact the host does not give (no
 * cpufreq in a virtual machine, no model name on some ARM kernels) is left
 * unknown ("" or NaN), never guessed.
 */
#ifndef KBENCH_CPU_FACTS_H
#define KBENCH_CPU_FACTS_H

typedef struct kbc_cpu_facts {
    char model[128];    /* /proc/cpuinfo's model name; "" unknown          */
    char governor[32];  /* CPU 0's cpufreq scaling governor; "" unknown    */
    double mhz;         /* CPU 0's clock when the run started; NaN unknown */
    double load_before; /* the 1-minute load average when the run started  */
    double load_after;  /* ... when its points were over (NaN until then)  */
    double cpu_s;       /* CPU seconds (user and system) of kbench and its
                           workers over the run; NaN until its end         */
    double wall_s;      /* the run's seconds, start to end; NaN until then */
} kbc_cpu_facts;

/* The facts known when a run starts, load_before included; the end's are
   NaN. */
void kbc_cpu_facts_start(kbc_cpu_facts *f);

/* The end's facts: load_after, and the CPU and wall seconds since
   kbc_cpu_facts_start (cpu0_s: kbc_cpu_seconds() when it started). */
void kbc_cpu_facts_end(kbc_cpu_facts *f, double cpu0_s, double started);

/* CPU seconds this process and its waited-for children have used. */
double kbc_cpu_seconds(void);

/* The load of other work on the host over a run: the larger of the load
   average before it and the load average after it less the run's own
   average use (cpu_s / wall_s CPUs); NaN when neither is known. */
double kbc_cpu_other_load(double load_before, double load_after, double cpu_s, double wall_s);

/* A host is loaded for CPU rows when other work kept at least this many
   CPUs busy: one CPU taken from a parallel variant makes its straggling
   thread wait a scheduler quantum (4 ms), and a serial variant shares its
   core. */
#define KBC_LOADED_HOST 1.0

/* Whether that other load makes the host loaded. */
int kbc_cpu_loaded(double other_load);

#endif
