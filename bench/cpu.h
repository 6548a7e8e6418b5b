/* cpu.h: where a suite runs, and who else ran there meanwhile.
 *
 * Pinning. A spawning parent and its child that share one CPU hand it to
 * each other; left to the scheduler, the child is moved at exec to
 * whichever CPU looks idlest (sched_exec balancing), and the parent is then
 * woken from that other CPU. On a 2-CPU VM that move and the cross-CPU
 * wake-ups cost about 40 us per spawn on top of 60 us, and whether a spawn
 * pays them depends on what other processes do on the other CPU at that
 * moment: every arm's times split into two modes, and the medians move from
 * run to run. So the suites that time one spawn at a time run pinned to
 * one CPU, children included (they inherit the mask); the ones that need
 * every CPU (threads, worker) are left where they are.
 *
 * The watch. Over a span of time, how much of the CPUs this process may
 * run on was used by something else: other processes, interrupts, steal
 * (the hypervisor running another guest). Busy time comes from the
 * cpuidle residency counters (microseconds, /sys/devices/system/cpu), or,
 * without cpuidle, from /proc/stat (1/USER_HZ s); this process's own time
 * is its CPU time and that of its reaped children. */
#ifndef FL_BENCH_CPU_H
#define FL_BENCH_CPU_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

/* --cpu: FL_CPU_AUTO picks the last CPU this process may run on; FL_CPU_ALL
 * leaves the mask alone; N >= 0 is that CPU. */
#define FL_CPU_AUTO (-2)
#define FL_CPU_ALL (-1)

/* Parses "all", "auto" or a CPU number. Returns 0, or -1. */
int fl_cpu_parse(const char *s, int *cpu);

/* Pins this process to one CPU (want: FL_CPU_AUTO or a number) and keeps the
 * old mask to put back; FL_CPU_ALL does nothing. Returns 0, or an errno
 * value (EINVAL: the CPU is not in this process's mask) with a message in
 * err. */
struct fl_cpu_pin {
    int cpu;             /* the CPU pinned to, or -1 */
    int have_saved;
    cpu_set_t saved;
};
int fl_cpu_pin(int want, struct fl_cpu_pin *p, char *err, size_t errsz);
/* Puts the old mask back. */
void fl_cpu_unpin(struct fl_cpu_pin *p);

/* The CPU the bench is pinned to, or -1. */
int fl_cpu_pinned(void);

/* For a suite that needs every CPU: fl_cpu_spread(1) makes
 * fl_cpu_pin_thread(i) pin the calling thread (and so the children it
 * starts) to the i-th CPU of this process's mask, round robin, so that no
 * child is moved at exec; fl_cpu_spread(0) makes it do nothing again. */
void fl_cpu_spread(int on);
void fl_cpu_pin_thread(unsigned index);
int fl_cpu_spreading(void);

struct fl_cpu_watch {
    cpu_set_t set;        /* the CPUs watched */
    int ncpus;
    int fine;             /* idle time from cpuidle (us), not /proc/stat */
    uint64_t wall_ns, idle_ns, ours_ns, steal_ns;
};

/* What a watch saw between start and stop. */
struct fl_cpu_share {
    double seconds;       /* wall time */
    int ncpus;
    double others_pct;    /* busy time that was not ours, % of wall x ncpus: other
                             tasks, interrupts, the hypervisor (steal) */
    double steal_pct;     /* of which the steal /proc/stat saw, in 1/USER_HZ s
                             steps (short steals go unseen there) */
    double idle_pct;      /* time the CPUs stood idle, % of wall x ncpus */
};

/* Above this share of others, a suite says the span was busy. A pinned
 * run of cheap spawns on a quiet 2-CPU VM shows 1-6 %: time the kernel
 * charges to no task of the bench's, steal that /proc/stat rounds away. */
#define FL_CPU_BUSY_PCT 10.0

void fl_cpu_watch_start(struct fl_cpu_watch *w);
void fl_cpu_watch_stop(const struct fl_cpu_watch *w, struct fl_cpu_share *s);

/* "CPU 1" or "CPUs 0-1" (the watched set), for messages. */
void fl_cpu_set_name(const struct fl_cpu_watch *w, char *buf, size_t size);

#endif
