/* loop.c: the "loop" suite. Starts `true` N times with fork + execvp,
 * vfork + execvp, posix_spawnp and forkless (a PATH search by name each
 * time), and times each arm's loop. Each repeat runs every arm's loop once,
 * the arms taking turns every CHUNK spawns in a fresh random order; the
 * table gives each arm's mean and spread over the repeats (as `perf stat
 * --repeat` does) and its median against posix_spawnp's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arms.h"
#include "forkless.h"
#include "helpers.h"
#include "machine.h"
#include "stats.h"
#include "suite.h"

#define SUITE "loop"
#define DEFAULT_N 10000ul
#define DEFAULT_REPEATS 5ul
#define BASELINE "posix_spawnp"
#define QUICK_N 100ul
#define QUICK_REPEATS 3ul
#define CHUNK 100ul   /* spawns of one arm in a row, see the repeat loop */

extern char **environ;

/* Starts the target once by name and reaps it. 0, or -1 with err set. */
typedef int (*loop_fn)(char *const *argv, char *err, size_t errsz);

static int loop_fork(char *const *argv, char *err, size_t errsz)
{
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errsz, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    return fl_arm_reap(pid, err, errsz);
}

/* Its own frame: the vfork child borrows the caller's stack until exec. */
__attribute__((noinline)) static pid_t start_vfork(char *const *argv)
{
    pid_t pid = vfork();
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

static int loop_vfork(char *const *argv, char *err, size_t errsz)
{
    pid_t pid = start_vfork(argv);
    if (pid < 0) {
        snprintf(err, errsz, "vfork: %s", strerror(errno));
        return -1;
    }
    return fl_arm_reap(pid, err, errsz);
}

static int loop_posix_spawnp(char *const *argv, char *err, size_t errsz)
{
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (e) {
        snprintf(err, errsz, "posix_spawnp: %s", strerror(e));
        return -1;
    }
    return fl_arm_reap(pid, err, errsz);
}

static int loop_forkless(char *const *argv, char *err, size_t errsz)
{
    struct fl_cmd cmd = { .argv = argv };
    return fl_arm_spawn_ok(&cmd, err, errsz);
}

static const struct {
    const char *name;
    const char *what;
    loop_fn run;
} arms[] = {
    { "fork_execvp", "fork() + execvp() + waitpid()", loop_fork },
    { "vfork_execvp", "vfork() + execvp() + waitpid()", loop_vfork },
    { "posix_spawnp", "glibc posix_spawnp(), no attributes, + waitpid()", loop_posix_spawnp },
    { "forkless", "fl_spawn() by name (PATH search), defaults, + fl_wait()", loop_forkless },
};
#define NARMS (sizeof arms / sizeof arms[0])

struct opts {
    unsigned long n, repeats;
    const char *target;
    const char *json, *csv;
};

/* One row of the table (and of --json). */
struct row {
    const char *method;
    size_t repeats;
    unsigned long n;
    struct fl_spread s;      /* seconds per loop */
    double others_pct;       /* median share of a loop that something else took */
    struct fl_mmm m;         /* seconds per loop */
    double us_per_spawn;     /* median / n */
    double ratio_baseline;   /* median / posix_spawnp's median */
};

void fl_bench_loop_usage(FILE *f)
{
    fprintf(f,
        "usage: forkless bench loop [OPTIONS]\n\n"
        "Starts TARGET N times, waiting for each, with every arm, and times each\n"
        "arm's loop. Every repeat runs each arm's loop once, in chunks of %lu spawns\n"
        "in a row, the arms taking turns in a fresh random order for every chunk\n"
        "(a passing load then falls on every arm alike); an arm's loop time is the\n"
        "sum of its chunks. Prints seconds per loop as mean +- the standard deviation of the\n"
        "mean (what `perf stat --repeat` prints), the median, min and max, and the\n"
        "median against %s's.\n\n"
        "Options:\n"
        "  -n N            spawns per loop (default %lu)\n"
        "  -r N            repeats (default %lu)\n"
        "  --target T      the program: a name is searched in PATH by every arm on\n"
        "                  every spawn, as the seed's execvp(\"true\") does; a path\n"
        "                  is used as is (default: true, which is /bin/true or\n"
        "                  /usr/bin/true)\n"
        "  --quick         small counts: -n %lu -r %lu (each unless given); what\n"
        "                  `forkless bench all` passes\n"
        "  --json FILE     also write the rows as JSON\n"
        "  --csv FILE      also write the rows as CSV: a header line, then one line\n"
        "                  per row, the same fields as the JSON rows\n"
        "  -h, --help      this text\n\n"
        "Arms:\n", CHUNK, BASELINE, DEFAULT_N, DEFAULT_REPEATS, QUICK_N, QUICK_REPEATS);
    for (size_t a = 0; a < NARMS; a++)
        fprintf(f, "  %-15s %s\n", arms[a].name, arms[a].what);
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .n = DEFAULT_N, .repeats = DEFAULT_REPEATS, .target = "true" };
    if (fl_opt_quick(argc, argv)) {
        o->n = QUICK_N;
        o->repeats = QUICK_REPEATS;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if ((m = fl_opt_common(SUITE, argc, argv, &i, fl_bench_loop_usage, &o->csv, &o->json))) {
            if (m != 1)
                return m < 0 ? 2 : 0;
            continue;
        }
        if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "-n", 1, 100000000, &o->n))) {
            if (m < 0)
                return 2;
        } else if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "-r", 1, 10000,
                                     &o->repeats))) {
            if (m < 0)
                return 2;
        } else if ((m = fl_opt_target(SUITE, argc, argv, &i, &o->target))) {
            if (m < 0)
                return 2;
        } else {
            return fl_usage_error(SUITE, "unknown option \"%s\"", a);
        }
    }
    return -1;
}

int fl_bench_loop(int argc, char **argv)
{
    struct opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;

    /* Where the target is, for the header, and a check that it runs at all
     * (fl_resolve uses the same rules as the forkless arm). */
    char *targv[] = { (char *)o.target, NULL };
    char resolved[PATH_MAX];
    struct fl_cmd rc = { .argv = targv };
    struct fl_error fe;
    int e = fl_resolve(&rc, resolved, sizeof resolved, &fe);
    if (e) {
        char msg[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 64];
        return fl_usage_error(SUITE, "--target \"%s\": %s", o.target,
                              fl_error_format(&fe, msg, sizeof msg));
    }

    struct fl_rows j;
    if ((r = fl_rows_open(&j, SUITE, o.json, o.csv)) != 0) {
        fl_rows_error(SUITE, "opening", o.json, o.csv, r);
        return fl_rows_exit(r);
    }
    char machine[512];
    fl_machine_line(machine, sizeof machine);
    double load0 = fl_loadavg();
    printf("forkless bench loop: %s\n", machine);
    printf("target \"%s\" (%s%s), %lu spawn+wait per loop, %lu repeats of every arm's "
           "loop, the arms taking turns every %lu spawns in random order; seconds per "
           "loop\n", o.target,
           strchr(o.target, '/') ? "" : "PATH search each time, now ", resolved, o.n,
           o.repeats, CHUNK);
    fl_rows_start(&j, SUITE, machine, load0);
    fl_rows_meta_str(&j, "target", o.target);
    fl_rows_meta_str(&j, "target_path", resolved);
    fl_rows_meta_int(&j, "chunk", (long long)CHUNK);

    double *secs = calloc(NARMS * o.repeats, sizeof *secs);
    uint64_t *others = calloc(NARMS * o.repeats, sizeof *others);
    if (!secs || !others) {
        fprintf(stderr, "forkless bench loop: out of memory\n");
        r = 1;
        goto out;
    }
    size_t order[NARMS];
    uint64_t seed = 0x6c6f6f70u;   /* repeatable */
    char err[512];
    r = 0;
    /* A repeat runs every arm's n spawns in chunks of CHUNK, the arms
     * taking turns in a fresh random order for each chunk: a load that
     * comes and goes (other processes, the hypervisor) then falls on every
     * arm alike, where whole loops one after the other met it unevenly.
     * An arm's loop time is the sum of its chunks. */
    for (unsigned long rep = 0; rep < o.repeats && r == 0; rep++) {
        fprintf(stderr, "loop: repeat %lu/%lu: %lu spawns per arm...\n", rep + 1,
                o.repeats, o.n);
        uint64_t ns[NARMS] = { 0 }, oth[NARMS] = { 0 };
        for (unsigned long done = 0; done < o.n && r == 0; done += CHUNK) {
            unsigned long m = o.n - done < CHUNK ? o.n - done : CHUNK;
            fl_interleave_order(order, NARMS, &seed);
            for (size_t k = 0; k < NARMS && r == 0; k++) {
                size_t a = order[k];
                struct fl_span span;
                fl_span_begin(&span);
                for (unsigned long i = 0; i < m; i++) {
                    if (arms[a].run(targv, err, sizeof err) != 0) {
                        fprintf(stderr, "forkless bench loop: %s: spawn %lu: %s\n",
                                arms[a].name, done + i + 1, err);
                        r = 1;
                        break;
                    }
                }
                uint64_t o1;
                ns[a] += fl_span_end(&span, &o1);
                oth[a] += o1;
            }
        }
        for (size_t a = 0; a < NARMS; a++) {
            secs[a * o.repeats + rep] = (double)ns[a] / 1e9;
            others[a * o.repeats + rep] = ns[a] ? oth[a] * 100000u / ns[a] : 0;   /* 0.001 % */
        }
    }
    if (r)
        goto out;

    struct row rows[NARMS];
    size_t base = SIZE_MAX, flk = SIZE_MAX;
    for (size_t a = 0; a < NARMS; a++) {
        struct row *w = &rows[a];
        w->method = arms[a].name;
        w->repeats = o.repeats;
        w->n = o.n;
        fl_spread_of(&secs[a * o.repeats], o.repeats, &w->s);
        uint64_t ns[o.repeats];
        for (size_t i = 0; i < o.repeats; i++)
            ns[i] = (uint64_t)llround(secs[a * o.repeats + i] * 1e9);
        fl_mmm_of(ns, o.repeats, &w->m);
        struct fl_mmm om;
        fl_mmm_of(&others[a * o.repeats], o.repeats, &om);
        w->others_pct = om.median / 1000.0;
        w->m.min /= 1e9, w->m.median /= 1e9, w->m.max /= 1e9;
        w->us_per_spawn = w->m.median * 1e6 / (double)o.n;
        if (strcmp(w->method, BASELINE) == 0)
            base = a;
        if (strcmp(w->method, "forkless") == 0)
            flk = a;
    }
    for (size_t a = 0; a < NARMS; a++) {
        struct row *w = &rows[a];
        w->ratio_baseline = w->m.median / rows[base].m.median;
        char spread[48] = "";  /* none of one repeat, as perf stat -r 1 */
        if (!isnan(w->s.sem))
            snprintf(spread, sizeof spread, "+- %.4f s (+- %5.2f%%)", w->s.sem,
                     w->s.mean > 0 ? 100.0 * w->s.sem / w->s.mean : 0.0);
        printf("loop %-13s n %lu x %zu  %8.4f %-23s  median %8.4f  "
               "min %8.4f  max %8.4f s  %7.1f us/spawn  x%.3f %s  others %.1f%%\n",
               w->method, w->n, w->repeats, w->s.mean, spread, w->m.median,
               w->m.min, w->m.max, w->us_per_spawn, w->ratio_baseline, BASELINE,
               w->others_pct);
    }
    printf("+- is the standard deviation of the mean over the repeats, as perf stat prints "
           "it (JSON also has the plain standard deviation); others: the median share of "
           "a loop that others (tasks, interrupts, steal) took from the bench CPU\n");
    int holds = rows[flk].m.median <= rows[base].m.median;
    printf("forkless median %.4f s vs %s %.4f s: x%.*f (done when <= 1: %s)\n",
           rows[flk].m.median, BASELINE, rows[base].m.median,
           fl_decimals_apart(rows[flk].ratio_baseline, 1.0, 3), rows[flk].ratio_baseline,
           holds ? "holds" : "does NOT hold");
    printf("load average %.2f at end\n", fl_loadavg());
    for (size_t a = 0; a < NARMS; a++) {
        const struct row *w = &rows[a];
        fl_rows_begin(&j);
        fl_rows_str(&j, "method", w->method);
        fl_rows_str(&j, "target", o.target);
        fl_rows_int(&j, "n", (long long)w->n);
        fl_rows_int(&j, "repeats", (long long)w->repeats);
        fl_rows_num(&j, "mean_s", w->s.mean);
        fl_rows_num(&j, "stddev_s", w->s.stddev);
        fl_rows_num(&j, "sem_s", w->s.sem);
        fl_rows_num(&j, "min_s", w->m.min);
        fl_rows_num(&j, "median_s", w->m.median);
        fl_rows_num(&j, "max_s", w->m.max);
        fl_rows_num(&j, "us_per_spawn", w->us_per_spawn);
        fl_rows_num(&j, "ratio_" BASELINE, w->ratio_baseline);
        fl_rows_num(&j, "others_pct", w->others_pct);
        fl_rows_end(&j);
    }
out:
    free(secs);
    free(others);
    int jr = fl_rows_close(&j);
    if (jr && r == 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, jr);
        r = 1;
    }
    return r;
}
