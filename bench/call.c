/* call.c: the "call" suite. A function that adds two, called directly and
 * as a program (fl-plustwo N exits with N + 2) through fork+exec,
 * posix_spawn and forkless, every result checked. The program is built
 * dynamic and static, so the difference between the two is the program's
 * own start-up (the dynamic loader), and what is left is the spawner's. */
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

#define SUITE "call"
#define DEFAULT_N 300ul
#define DEFAULT_CALLS 1000000ul
#define BASELINE "fork_exec"
#define PROJECT_CALLS 1000000.0
#define QUICK_N 40ul
#define QUICK_CALLS 100000ul

extern char **environ;

int fl_plus_two(int number);   /* plustwo.c */

/* Starts path with argv, waits, and returns its wait status, or -1 with
 * err set. */
typedef int (*call_fn)(const char *path, char *const *argv, char *err, size_t errsz);

static int call_fork_exec(const char *path, char *const *argv, char *err, size_t errsz)
{
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errsz, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execv(path, argv);
        _exit(127);
    }
    return fl_arm_wait(pid, err, errsz);
}

static int call_posix_spawn(const char *path, char *const *argv, char *err, size_t errsz)
{
    pid_t pid;
    int e = posix_spawn(&pid, path, NULL, NULL, argv, environ);
    if (e) {
        snprintf(err, errsz, "posix_spawn: %s", strerror(e));
        return -1;
    }
    return fl_arm_wait(pid, err, errsz);
}

static int call_forkless(const char *path, char *const *argv, char *err, size_t errsz)
{
    struct fl_cmd cmd = { .argv = argv, .path = path };
    return fl_arm_spawn_wait(&cmd, err, errsz);
}

static const struct {
    const char *name;
    const char *what;
    call_fn run;
    int forks;
} spawners[] = {
    { "fork_exec", "fork() + execv() + waitpid(), as the seed", call_fork_exec, 1 },
    { "posix_spawn", "glibc posix_spawn() + waitpid()", call_posix_spawn, 0 },
    { "forkless", "fl_spawn() with defaults + fl_wait()", call_forkless, 0 },
};
#define NSPAWNERS (sizeof spawners / sizeof spawners[0])

enum prog { P_DYNAMIC, P_STATIC, NPROGS };
static const char *const prog_name[NPROGS] = { "dynamic", "static" };

struct opts {
    unsigned long n, calls;
    const char *json, *csv;
};

/* A cell of the measurement, and a row of the table (and of --json). */
struct row {
    const char *method;
    const char *program;     /* "dynamic", "static", or "-" for the function */
    int forks;
    call_fn run;             /* NULL: the function arm */
    const char *path;
    uint64_t *ps;            /* samples, picoseconds per call */
    size_t n;
    struct fl_retakes rt;    /* see fl_sample */
    struct fl_mmm us;        /* per call */
    double overhead_us;      /* median minus the function's median */
    double project_s;        /* PROJECT_CALLS calls at the median */
    double ratio_baseline;   /* median / fork_exec's median, same program */
};

void fl_bench_call_usage(FILE *f)
{
    fprintf(f,
        "usage: forkless bench call [OPTIONS]\n\n"
        "Computes N + 2 as a program, fl-plustwo N (its exit status), started and\n"
        "waited for by each spawner, and as a direct call of the same C function.\n"
        "The program is built dynamic (fl-plustwo) and, when the toolchain can link\n"
        "it, static (fl-plustwo-static). Each round takes one sample of every\n"
        "arm in a fresh random order (fork_exec in a group of its own, after the\n"
        "others: a fork leaves the parent's memory copy-on-write for whatever runs\n"
        "next); a function sample is CALLS calls timed together. Every result is\n"
        "checked. Prints min/median/max us per call, the overhead over the\n"
        "function, the time %.0f calls would take, and the median against\n"
        "fork_exec's for the same program.\n\n"
        "Options:\n"
        "  -n N            samples per spawning arm (default %lu)\n"
        "  --calls N       function calls per function sample (default %lu)\n"
        "  --quick         small counts: -n %lu --calls %lu (each unless given);\n"
        "                  what `forkless bench all` passes\n"
        "  --json FILE     also write the rows as JSON\n"
        "  --csv FILE      also write the rows as CSV: a header line, then one line\n"
        "                  per row, the same fields as the JSON rows\n"
        "  -h, --help      this text\n\n"
        "Spawners:\n", PROJECT_CALLS, DEFAULT_N, DEFAULT_CALLS,
        QUICK_N, QUICK_CALLS);
    for (size_t s = 0; s < NSPAWNERS; s++)
        fprintf(f, "  %-15s %s\n", spawners[s].name, spawners[s].what);
    fprintf(f, "  %-15s %s\n", "function", "fl_plus_two() called directly");
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .n = DEFAULT_N, .calls = DEFAULT_CALLS };
    if (fl_opt_quick(argc, argv)) {
        o->n = QUICK_N;
        o->calls = QUICK_CALLS;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if ((m = fl_opt_common(SUITE, argc, argv, &i, fl_bench_call_usage, &o->csv, &o->json))) {
            if (m != 1)
                return m < 0 ? 2 : 0;
            continue;
        }
        if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "-n", 1, 10000000, &o->n))) {
            if (m < 0)
                return 2;
        } else if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "--calls", 1, 1000000000,
                                     &o->calls))) {
            if (m < 0)
                return 2;
        } else {
            return fl_usage_error(SUITE, "unknown option \"%s\"", a);
        }
    }
    return -1;
}

/* The function through a volatile pointer, so that every call happens. */
static int (*volatile plus_two_fn)(int) = fl_plus_two;

struct one_call {
    const struct row *w;
    char *const *argv;
    int st;                  /* the wait status, or -1 */
    char err[2048];
};

static int run_call(void *ctx)
{
    struct one_call *c = ctx;
    c->st = c->w->run(c->w->path, c->argv, c->err, sizeof c->err);
    return c->st < 0;
}

/* One sample of a row. *arg advances so that successive calls differ.
 * Returns 0, or 1 with a message printed when a result was wrong. */
static int sample(struct row *w, const struct opts *o, unsigned *arg)
{
    if (!w->run) {
        unsigned long bad = 0;
        uint64_t t0 = fl_bench_now_ns();
        for (unsigned long i = 0; i < o->calls; i++) {
            int x = (int)(i & 127);
            bad += plus_two_fn(x) != x + 2;
        }
        uint64_t t1 = fl_bench_now_ns();
        if (bad) {
            fprintf(stderr, "forkless bench call: function: %lu wrong results\n", bad);
            return 1;
        }
        w->ps[w->n++] = (t1 - t0) * 1000u / o->calls;
        return 0;
    }
    int x = (int)(*arg % 200u) + 1;
    ++*arg;
    char num[16];
    snprintf(num, sizeof num, "%d", x);
    char *argv[] = { (char *)w->path, num, NULL };
    struct one_call c = { .w = w, .argv = argv };
    uint64_t ns;
    if (fl_sample(run_call, &c, &ns, &w->rt) != 0) {
        fprintf(stderr, "forkless bench call: %s %s: %s\n", w->method, w->program, c.err);
        return 1;
    }
    int st = c.st;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != x + 2) {
        fprintf(stderr, "forkless bench call: %s %s: plustwo %d gave wait status 0x%x, "
                "want exit status %d\n", w->method, w->program, x, st, x + 2);
        return 1;
    }
    w->ps[w->n++] = ns * 1000u;
    return 0;
}

/* n rounds over the rows of one group (forking or not), each round in a
 * fresh random order. */
static int run_group(struct row *rows, size_t nrows, int forks, const struct opts *o)
{
    size_t idx[nrows], m = 0;
    for (size_t k = 0; k < nrows; k++)
        if (rows[k].forks == forks)
            idx[m++] = k;
    if (m == 0)
        return 0;
    size_t order[m];
    uint64_t seed = 0x63616c6cu + (uint64_t)forks;   /* repeatable */
    unsigned arg = 0;
    for (size_t k = 0; k < m; k++)   /* warm-up, not recorded */
        if (sample(&rows[idx[k]], o, &arg) != 0)
            return 1;
    for (size_t k = 0; k < m; k++)
        rows[idx[k]].n = 0;
    for (unsigned long i = 0; i < o->n; i++) {
        fl_interleave_order(order, m, &seed);
        for (size_t k = 0; k < m; k++)
            if (sample(&rows[idx[order[k]]], o, &arg) != 0)
                return 1;
    }
    return 0;
}

int fl_bench_call(int argc, char **argv)
{
    struct opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;

    char paths[NPROGS][PATH_MAX];
    int have[NPROGS];
#ifdef FL_PLUSTWO_PATH
    const char *dyn_build = FL_PLUSTWO_PATH;
#else
    const char *dyn_build = NULL;
#endif
#ifdef FL_PLUSTWO_STATIC_PATH
    const char *static_build = FL_PLUSTWO_STATIC_PATH;
#else
    const char *static_build = NULL;
#endif
    have[P_DYNAMIC] = fl_find_bench_prog("fl-plustwo", "FORKLESS_PLUSTWO", dyn_build,
                                         paths[P_DYNAMIC], PATH_MAX) == 0;
    have[P_STATIC] = fl_find_bench_prog("fl-plustwo-static", "FORKLESS_PLUSTWO_STATIC",
                                        static_build, paths[P_STATIC], PATH_MAX) == 0;
    if (!have[P_DYNAMIC]) {
        fprintf(stderr, "forkless bench call: the fl-plustwo program was not found next "
                "to the forkless binary, in ../bench, in the build tree or in the install "
                "tree; build the `fl-plustwo` target or set FORKLESS_PLUSTWO=PATH\n");
        return 1;
    }

    struct fl_rows j;
    if ((r = fl_rows_open(&j, SUITE, o.json, o.csv)) != 0) {
        fl_rows_error(SUITE, "opening", o.json, o.csv, r);
        return fl_rows_exit(r);
    }
    struct row rows[NSPAWNERS * NPROGS + 1];
    size_t nrows = 0;
    memset(rows, 0, sizeof rows);
    for (int p = 0; p < NPROGS; p++) {
        if (!have[p])
            continue;
        for (size_t s = 0; s < NSPAWNERS; s++)
            rows[nrows++] = (struct row){ .method = spawners[s].name,
                                          .program = prog_name[p],
                                          .forks = spawners[s].forks,
                                          .run = spawners[s].run, .path = paths[p] };
    }
    rows[nrows++] = (struct row){ .method = "function", .program = "-" };
    for (size_t k = 0; k < nrows; k++) {
        rows[k].ps = calloc(o.n + 1, sizeof *rows[k].ps);
        if (!rows[k].ps) {
            fprintf(stderr, "forkless bench call: out of memory\n");
            r = 1;
            goto out;
        }
    }

    char machine[512];
    fl_machine_line(machine, sizeof machine);
    double load0 = fl_loadavg();
    printf("forkless bench call: %s\n", machine);
    printf("plustwo: dynamic %s, static %s\n", paths[P_DYNAMIC],
           have[P_STATIC] ? paths[P_STATIC] : "(not built: the toolchain could not link "
                                              "-static; static rows skipped)");
    printf("%lu samples per spawning arm, interleaved in random order (fork_exec after "
           "the others), %lu calls per function sample; us per call\n", o.n, o.calls);
    fl_rows_start(&j, SUITE, machine, load0);
    fl_rows_meta_str(&j, "plustwo", paths[P_DYNAMIC]);
    fl_rows_meta_str(&j, "plustwo_static", have[P_STATIC] ? paths[P_STATIC] : "");
    fl_rows_meta_int(&j, "function_calls_per_sample", (long long)o.calls);

    fprintf(stderr, "call: measuring the arms that do not fork...\n");
    if (run_group(rows, nrows, 0, &o) != 0) {
        r = 1;
        goto out;
    }
    fprintf(stderr, "call: measuring fork_exec...\n");
    if (run_group(rows, nrows, 1, &o) != 0) {
        r = 1;
        goto out;
    }

    double fn_med = 0;
    for (size_t k = 0; k < nrows; k++) {
        struct row *w = &rows[k];
        fl_mmm_of(w->ps, w->n, &w->us);
        w->us.min /= 1e6, w->us.median /= 1e6, w->us.max /= 1e6;
        if (!w->run)
            fn_med = w->us.median;
    }
    for (size_t k = 0; k < nrows; k++) {
        struct row *w = &rows[k];
        w->overhead_us = w->us.median - fn_med;
        w->project_s = w->us.median * PROJECT_CALLS / 1e6;
        w->ratio_baseline = NAN;
        for (size_t b = 0; b < nrows; b++)
            if (strcmp(rows[b].method, BASELINE) == 0 &&
                strcmp(rows[b].program, w->program) == 0)
                w->ratio_baseline = w->us.median / rows[b].us.median;
        printf("call %-11s %-7s n %4zu  min %9.3f  median %9.3f  max %9.3f us  "
               "overhead %9.3f us  1M calls %9.3f s (%6.2f min)  retaken %zu",
               w->method, w->program, w->n, w->us.min, w->us.median, w->us.max,
               w->overhead_us, w->project_s, w->project_s / 60.0, w->rt.retaken);
        if (isfinite(w->ratio_baseline))
            printf("  x%.2f %s", w->ratio_baseline, BASELINE);
        putchar('\n');
    }
    printf("overhead = median - the function's median; the seed measured 0.39 ms per "
           "fork+exec call, 6.46 min per 1M calls\n");
    if (have[P_STATIC]) {
        for (size_t s = 0; s < NSPAWNERS; s++) {
            const struct row *d = &rows[s], *st = &rows[NSPAWNERS + s];
            printf("%-11s dynamic - static = %8.1f us per call (the program's dynamic "
                   "loading); static minus the function = %8.1f us (spawn + exec + wait)\n",
                   spawners[s].name, d->us.median - st->us.median, st->overhead_us);
        }
    }
    printf("load average %.2f at end\n", fl_loadavg());
    for (size_t k = 0; k < nrows; k++) {
        const struct row *w = &rows[k];
        fl_rows_begin(&j);
        fl_rows_str(&j, "method", w->method);
        fl_rows_str(&j, "program", w->program);
        fl_rows_int(&j, "n", (long long)w->n);
        fl_rows_int(&j, "calls_per_sample", w->run ? 1 : (long long)o.calls);
        fl_rows_num(&j, "min_us", w->us.min);
        fl_rows_num(&j, "median_us", w->us.median);
        fl_rows_num(&j, "max_us", w->us.max);
        fl_rows_num(&j, "median_ns", w->us.median * 1e3);
        fl_rows_num(&j, "overhead_us", w->overhead_us);
        fl_rows_num(&j, "project_1m_calls_s", w->project_s);
        fl_rows_num(&j, "ratio_" BASELINE, w->ratio_baseline);
        fl_rows_int(&j, "retaken", (long long)w->rt.retaken);
        fl_rows_int(&j, "disturbed", (long long)w->rt.disturbed);
        fl_rows_end(&j);
    }
out:
    for (size_t k = 0; k < nrows; k++)
        free(rows[k].ps);
    int jr = fl_rows_close(&j);
    if (jr && r == 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, jr);
        r = 1;
    }
    return r;
}
