/* cpu.c: see cpu.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"

static int pinned_cpu = -1;

int fl_cpu_parse(const char *s, int *cpu)
{
    if (strcmp(s, "all") == 0) {
        *cpu = FL_CPU_ALL;
        return 0;
    }
    if (strcmp(s, "auto") == 0) {
        *cpu = FL_CPU_AUTO;
        return 0;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || errno || v >= CPU_SETSIZE)
        return -1;
    *cpu = (int)v;
    return 0;
}

int fl_cpu_pin(int want, struct fl_cpu_pin *p, char *err, size_t errsz)
{
    p->cpu = -1;
    p->have_saved = 0;
    if (want == FL_CPU_ALL)
        return 0;
    if (sched_getaffinity(0, sizeof p->saved, &p->saved) != 0) {
        snprintf(err, errsz, "sched_getaffinity: %s", strerror(errno));
        return errno;
    }
    int cpu = want;
    if (want == FL_CPU_AUTO)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &p->saved))
                cpu = c;
    if (cpu < 0 || !CPU_ISSET(cpu, &p->saved)) {
        snprintf(err, errsz, "CPU %d is not one this process may run on", want);
        return EINVAL;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        int e = errno;
        snprintf(err, errsz, "sched_setaffinity CPU %d: %s", cpu, strerror(e));
        return e;
    }
    p->have_saved = 1;
    p->cpu = pinned_cpu = cpu;
    return 0;
}

void fl_cpu_unpin(struct fl_cpu_pin *p)
{
    if (p->have_saved)
        sched_setaffinity(0, sizeof p->saved, &p->saved);
    p->have_saved = 0;
    p->cpu = pinned_cpu = -1;
}

int fl_cpu_pinned(void)
{
    return pinned_cpu;
}

static int spreading;
static cpu_set_t spread_set;

void fl_cpu_spread(int on)
{
    spreading = on && sched_getaffinity(0, sizeof spread_set, &spread_set) == 0 &&
                CPU_COUNT(&spread_set) > 0;
}

int fl_cpu_spreading(void)
{
    return spreading;
}

void fl_cpu_pin_thread(unsigned index)
{
    if (!spreading)
        return;
    unsigned k = index % (unsigned)CPU_COUNT(&spread_set);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &spread_set) && k-- == 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            sched_setaffinity(0, sizeof one, &one);   /* this thread */
            return;
        }
}

/* Time CPU cpu spent idle: the cpuidle residency of every state, in us.
 * Returns -1 without cpuidle. */
static long long cpuidle_us(int cpu)
{
    long long sum = 0;
    int states = 0;
    for (int s = 0; s < 16; s++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/time",
                 cpu, s);
        FILE *f = fopen(path, "re");
        if (!f)
            break;
        long long v;
        if (fscanf(f, "%lld", &v) == 1)
            sum += v, states++;
        fclose(f);
    }
    return states ? sum : -1;
}

/* idle + iowait and steal of the CPUs in set, from /proc/stat, in ns. */
static void proc_stat(const cpu_set_t *set, uint64_t *idle_ns, uint64_t *steal_ns)
{
    *idle_ns = *steal_ns = 0;
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return;
    double tick_ns = 1e9 / (double)sysconf(_SC_CLK_TCK);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        int cpu;
        unsigned long long v[8] = { 0 };
        if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0],
                   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 9 ||
            cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, set))
            continue;
        *idle_ns += (uint64_t)((double)(v[3] + v[4]) * tick_ns);
        *steal_ns += (uint64_t)((double)v[7] * tick_ns);
    }
    fclose(f);
}

static void sample(struct fl_cpu_watch *w)
{
    uint64_t stat_idle;
    proc_stat(&w->set, &stat_idle, &w->steal_ns);
    w->idle_ns = 0;
    w->fine = 1;
    for (int c = 0; c < CPU_SETSIZE && w->fine; c++) {
        if (!CPU_ISSET(c, &w->set))
            continue;
        long long us = cpuidle_us(c);
        if (us < 0)
            w->fine = 0;
        else
            w->idle_ns += (uint64_t)us * 1000u;
    }
    if (!w->fine)
        w->idle_ns = stat_idle;
    w->ours_ns = fl_own_cpu_ns();
    w->wall_ns = fl_bench_now_ns();
}

void fl_cpu_watch_start(struct fl_cpu_watch *w)
{
    memset(w, 0, sizeof *w);
    if (sched_getaffinity(0, sizeof w->set, &w->set) != 0) {
        CPU_ZERO(&w->set);
        for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &w->set);
    }
    w->ncpus = CPU_COUNT(&w->set);
    sample(w);
}

static double diff(uint64_t a, uint64_t b)
{
    return b > a ? (double)(b - a) : 0.0;
}

void fl_cpu_watch_stop(const struct fl_cpu_watch *w, struct fl_cpu_share *s)
{
    struct fl_cpu_watch now = *w;
    sample(&now);
    double wall = diff(w->wall_ns, now.wall_ns);
    double cap = wall * (double)(w->ncpus > 0 ? w->ncpus : 1);
    double busy = cap - diff(w->idle_ns, now.idle_ns);
    double steal = diff(w->steal_ns, now.steal_ns);
    double others = busy - diff(w->ours_ns, now.ours_ns);
    s->seconds = wall / 1e9;
    s->ncpus = w->ncpus;
    s->others_pct = cap > 0 && others > 0 ? 100.0 * others / cap : 0.0;
    s->steal_pct = cap > 0 ? 100.0 * steal / cap : 0.0;
    s->idle_pct = cap > 0 ? 100.0 * diff(w->idle_ns, now.idle_ns) / cap : 0.0;
}

void fl_cpu_set_name(const struct fl_cpu_watch *w, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s ", w->ncpus == 1 ? "CPU" : "CPUs");
    int first = 1;
    for (int c = 0; c < CPU_SETSIZE && n < size; c++) {
        if (!CPU_ISSET(c, &w->set) || (c > 0 && CPU_ISSET(c - 1, &w->set)))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &w->set))
            e++;
        n += (size_t)(e > c ? snprintf(buf + n, size - n, "%s%d-%d", first ? "" : ",", c, e)
                            : snprintf(buf + n, size - n, "%s%d", first ? "" : ",", c));
        first = 0;
    }
}
