/* place_opts.c: where the program runs and how it is scheduled: --cpus
 * as taskset(1) -c reads a list, --nice, --ionice as ionice(1) names the
 * classes, --oom-score-adj, and --best-effort. The library does the work
 * (struct fl_sched). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "contain_opts.h"
#include "parse.h"

/* The highest CPU number a list may name: the kernel's own limit
 * (CONFIG_NR_CPUS is at most 8192). A CPU this machine lacks is left to
 * the kernel, which ignores it, or refuses a mask with none it has. */
#define CPU_NUMBER_MAX 8191

/* One item of a CPU list, "N", "N-M" or "N-M:STRIDE", of any length (as
 * taskset reads "0001"); buf is cut up while it is read. */
static int parse_cpu_range(char *buf, int *first, int *last, int *stride)
{
    char *colon = strchr(buf, ':');
    *stride = 1;
    if (colon) {
        *colon = '\0';
        if (parse_int_in(colon + 1, 1, CPU_NUMBER_MAX + 1, stride) != 0 || !strchr(buf, '-'))
            return -1;
    }
    char *dash = strchr(buf, '-');
    if (dash)
        *dash = '\0';
    /* No sign: "-3" is no CPU number. */
    if (buf[0] < '0' || buf[0] > '9' || parse_int_in(buf, 0, CPU_NUMBER_MAX, first) != 0)
        return -1;
    *last = *first;
    if (dash && (dash[1] < '0' || dash[1] > '9' ||
                 parse_int_in(dash + 1, 0, CPU_NUMBER_MAX, last) != 0 || *last < *first))
        return -1;
    return 0;
}

/* Reads the list twice: for the highest CPU, then into a mask of that
 * size. Returns -1 for a malformed list (*bad: the item), -2 for a CPU
 * beyond CPU_NUMBER_MAX. */
static int parse_cpu_list(struct contain_options *c, const char *arg, char *bad, size_t size)
{
    int highest = -1;
    for (int pass = 0; pass < 2; pass++) {
        const char *p = arg;
        while (p) {
            size_t len = strcspn(p, ",");
            snprintf(bad, size, "%.*s", (int)len, p);
            char *item = strndup(p, len);
            if (!item)
                return -3;
            int first, last, stride, n;
            int r = parse_cpu_range(item, &first, &last, &stride);
            if (r != 0) {
                /* A number in range would have parsed: say it is too big. */
                memcpy(item, p, len);
                r = item[0] >= '0' && item[0] <= '9' && !strpbrk(item, "-:") &&
                    parse_int_in(item, 0, 999999999, &n) == 0 ? -2 : -1;
            }
            free(item);
            if (r != 0)
                return r;
            for (int cpu = first; cpu <= last; cpu += stride) {
                if (pass == 0 && cpu > highest)
                    highest = cpu;
                if (pass == 1)
                    CPU_SET_S((size_t)cpu, c->sched.cpus_size, c->cpus);
            }
            p = p[len] ? p + len + 1 : NULL;
        }
        if (pass == 0) {
            if (c->cpus)
                CPU_FREE(c->cpus);
            c->cpus = CPU_ALLOC((size_t)highest + 1);
            if (!c->cpus)
                return -3;
            c->sched.cpus_size = CPU_ALLOC_SIZE((size_t)highest + 1);
            CPU_ZERO_S(c->sched.cpus_size, c->cpus);
        }
    }
    c->sched.cpus = c->cpus;
    return 0;
}

/* "CLASS[:LEVEL]": CLASS realtime, best-effort, idle or 1-3; LEVEL 0-7,
 * 4 when not given, as with ionice(1); none for idle. */
static int parse_ionice(const char *arg, int *class, int *level)
{
    static const char *const names[] = { NULL, "realtime", "best-effort", "idle" };
    size_t len = strcspn(arg, ":");
    *class = 0;
    for (int i = 1; i <= 3; i++)
        if ((len == 1 && arg[0] == '0' + i) ||
            (strlen(names[i]) == len && strncmp(arg, names[i], len) == 0))
            *class = i;
    if (!*class)
        return -1;
    *level = 4;
    if (arg[len] == '\0')
        return 0;
    if (*class == FL_IOPRIO_IDLE)
        return -1;
    const char *l = arg + len + 1;
    return l[0] >= '0' && l[0] <= '9' && parse_int_in(l, 0, 7, level) == 0 ? 0 : -1;
}

int place_option(struct contain_options *c, int opt, const char *arg)
{
    struct fl_sched *s = &c->sched;
    char bad[48];
    switch (opt) {
    case OPT_CPUS: {
        int r = parse_cpu_list(c, arg, bad, sizeof bad);
        if (r == -2)
            cli_error("--cpus: CPU %s is beyond the highest a Linux system can have (%d)",
                      bad, CPU_NUMBER_MAX);
        else if (r == -3)
            cli_error("out of memory");
        else if (r != 0 && !bad[0])
            cli_error("--cpus: invalid CPU list \"%s\": %s (a list as taskset -c reads it: "
                      "0,2-5 or 0-7:2)", arg, arg[0] ? "an item is empty" : "it is empty");
        else if (r != 0 && strcmp(bad, arg) != 0)
            cli_error("--cpus: invalid CPU list \"%s\" at \"%s\" (a list as taskset -c reads "
                      "it: 0,2-5 or 0-7:2)", arg, bad);
        else if (r != 0)
            cli_error("--cpus: invalid CPU list \"%s\" (a list as taskset -c reads it: 0,2-5 "
                      "or 0-7:2)", arg);
        if (r != 0)
            return -1;
        s->set |= FL_SCHED_CPUS;
        c->cpus_arg = arg;
        return 0;
    }
    case OPT_NICE:
        if (parse_int_in(arg, -20, 19, &s->nice) != 0) {
            cli_error("--nice: expected a nice value from -20 to 19, got \"%s\"", arg);
            return -1;
        }
        s->set |= FL_SCHED_NICE;
        c->nice_arg = arg;
        return 0;
    case OPT_IONICE:
        if (parse_ionice(arg, &s->ioprio_class, &s->ioprio_level) != 0) {
            cli_error("--ionice: expected CLASS[:LEVEL], CLASS realtime, best-effort or idle "
                      "(or 1-3), LEVEL 0-7 (none for idle), got \"%s\"", arg);
            return -1;
        }
        s->set |= FL_SCHED_IOPRIO;
        c->ionice_arg = arg;
        return 0;
    case OPT_OOM_SCORE_ADJ:
        if (parse_int_in(arg, -1000, 1000, &s->oom_score_adj) != 0) {
            cli_error("--oom-score-adj: expected a number from -1000 to 1000, got \"%s\"", arg);
            return -1;
        }
        s->set |= FL_SCHED_OOM_SCORE_ADJ;
        c->oom_arg = arg;
        return 0;
    case OPT_BEST_EFFORT:
        c->best_effort = true;
        return 0;
    }
    cli_error("internal error: option %d not handled", opt);
    return -1;
}
