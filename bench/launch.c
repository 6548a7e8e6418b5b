/* launch.c: the "launch" suite. One thread keeps K children in flight
 * with FL_NO_WAIT_EXEC (K = 1, 2, 4, 8, 16), against blocking fl_spawn()
 * and posix_spawn() from one thread: spawns per second, and the time the
 * caller spends inside the call that starts each child. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "btarget.h"
#include "forkless.h"
#include "helpers.h"
#include "machine.h"
#include "stats.h"
#include "suite.h"

#define SUITE "launch"
#define DEFAULT_ROUNDS 15ul
#define DEFAULT_SPAWNS 1000ul
#define QUICK_ROUNDS 3ul
#define QUICK_SPAWNS 200ul
#define BASELINE "fl_spawn"
#define MAX_K 16

extern char **environ;

/* In the static library, hidden from its users: the stack pool on or off. */
void fl__launch_pool(bool on);

enum kind { POSIX, BLOCKING, LAUNCH };

struct arm {
    const char *name;
    enum kind kind;
    int k;              /* in flight, for LAUNCH */
    bool pool;          /* LAUNCH: the stack pool on */
    uint64_t *rate;     /* per round: spawns per second */
    uint64_t *blocked;  /* per round: ns in the starting call, per spawn */
    size_t n;
    struct fl_mmm r, b;
};

static struct arm arms[] = {
    { .name = "posix_spawn", .kind = POSIX, .k = 1, .pool = true },
    { .name = "fl_spawn", .kind = BLOCKING, .k = 1, .pool = true },
    { .name = "launch_k1", .kind = LAUNCH, .k = 1, .pool = true },
    { .name = "launch_k2", .kind = LAUNCH, .k = 2, .pool = true },
    { .name = "launch_k4", .kind = LAUNCH, .k = 4, .pool = true },
    { .name = "launch_k8", .kind = LAUNCH, .k = 8, .pool = true },
    { .name = "launch_k16", .kind = LAUNCH, .k = 16, .pool = true },
    { .name = "launch_k16_nopool", .kind = LAUNCH, .k = 16, .pool = false },
};
#define NARMS (sizeof arms / sizeof arms[0])

struct opts {
    unsigned long rounds, spawns;
    const char *target, *json, *csv;
};

void fl_bench_launch_usage(FILE *f)
{
    fprintf(f,
        "usage: forkless bench launch [OPTIONS]\n\n"
        "Starts the target SPAWNS times per round from one thread, every arm once a\n"
        "round in a fresh random order, and reports per arm the median over the\n"
        "rounds of: spawns per second (start to reap), and the caller's blocked time\n"
        "per spawn (the time inside the call that starts the child). The launch arms\n"
        "keep K children in flight with FL_NO_WAIT_EXEC, reaping the oldest before\n"
        "starting the next. Ratios are against blocking fl_spawn().\n\n"
        "Options:\n"
        "  -n N            rounds (default %lu)\n"
        "  --spawns N      spawns per arm and round (default %lu)\n"
        "  --target T      tiny (default), a path, or a name in $PATH\n"
        "  --quick         -n %lu --spawns %lu (each unless given)\n"
        "  --json FILE     also write the rows as JSON\n"
        "  --csv FILE      also write the rows as CSV\n"
        "  -h, --help      this text\n\n"
        "Arms:\n"
        "  posix_spawn        posix_spawn() + waitpid(), one at a time\n"
        "  fl_spawn           fl_spawn() + fl_wait(), one at a time\n"
        "  launch_kK          fl_spawn(FL_NO_WAIT_EXEC), K in flight, fl_wait() the oldest\n"
        "  launch_k16_nopool  launch_k16 with the library's stack pool off (a stack\n"
        "                     mapped and unmapped per launch)\n",
        DEFAULT_ROUNDS, DEFAULT_SPAWNS, QUICK_ROUNDS, QUICK_SPAWNS);
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .rounds = DEFAULT_ROUNDS, .spawns = DEFAULT_SPAWNS, .target = "tiny" };
    if (fl_opt_quick(argc, argv)) {
        o->rounds = QUICK_ROUNDS;
        o->spawns = QUICK_SPAWNS;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "--quick") == 0)
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fl_bench_launch_usage(stdout);
            return 0;
        }
        if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "-n", 1, 100000, &o->rounds)) ||
            (m = fl_opt_ulong(SUITE, argc, argv, &i, "--spawns", 1, 10000000, &o->spawns)) ||
            (m = fl_opt_value(SUITE, argc, argv, &i, "--target", &o->target)) ||
            (m = fl_opt_outputs(SUITE, argc, argv, &i, &o->csv, &o->json))) {
            if (m < 0)
                return 2;
        } else {
            return fl_usage_error(SUITE, "unknown option \"%s\"", a);
        }
    }
    return -1;
}

static int reap_ok(struct fl_proc *p)
{
    int st = -1, r = fl_wait(p, -1, &st);
    fl_close(p);
    if (r || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "forkless bench launch: wait: %s, status 0x%x\n",
                r ? strerror(r) : "ok", st);
        return 1;
    }
    return 0;
}

/* One round of an arm: 0, or 1 with a message printed. */
static int round_of(struct arm *a, const char *path, unsigned long spawns)
{
    char *argv[] = { (char *)path, NULL };
    struct fl_cmd cmd = { .argv = argv, .path = path,
                          .flags = a->kind == LAUNCH ? FL_NO_WAIT_EXEC : 0 };
    struct fl_proc ring[MAX_K];
    uint64_t in_call = 0, t0 = fl_bench_now_ns();
    fl__launch_pool(a->pool);
    for (unsigned long i = 0; i < spawns + (unsigned long)a->k; i++) {
        struct fl_proc *p = &ring[i % (unsigned long)a->k];
        if (i >= (unsigned long)a->k && a->kind != POSIX && reap_ok(p))
            return 1;
        if (i >= spawns)
            continue;
        uint64_t c0 = fl_bench_now_ns();
        int r;
        pid_t pid = 0;
        if (a->kind == POSIX) {
            r = posix_spawn(&pid, path, NULL, NULL, argv, environ);
        } else {
            struct fl_error e;
            r = fl_spawn(&cmd, p, &e);
        }
        in_call += fl_bench_now_ns() - c0;
        if (r) {
            fprintf(stderr, "forkless bench launch: %s: %s\n", a->name, strerror(r));
            return 1;
        }
        if (a->kind == POSIX) {
            int st;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "forkless bench launch: posix_spawn: status 0x%x\n", st);
                return 1;
            }
        }
    }
    uint64_t ns = fl_bench_now_ns() - t0;
    fl__launch_pool(true);
    a->rate[a->n] = ns ? (uint64_t)(spawns * 1000000000.0 / (double)ns) : 0;
    a->blocked[a->n++] = in_call / spawns;
    return 0;
}

int fl_bench_launch(int argc, char **argv)
{
    struct opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;
    char path[4096];
    int is_tiny;
    if ((r = fl_bench_target(SUITE, o.target, path, sizeof path, &is_tiny)) != 0)
        return r;
    struct fl_rows j;
    if ((r = fl_rows_open(&j, SUITE, o.json, o.csv)) != 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, r);
        return 1;
    }
    for (size_t k = 0; k < NARMS; k++) {
        arms[k].n = 0;
        arms[k].rate = calloc(o.rounds + 1, sizeof *arms[k].rate);
        arms[k].blocked = calloc(o.rounds + 1, sizeof *arms[k].blocked);
        if (!arms[k].rate || !arms[k].blocked) {
            fprintf(stderr, "forkless bench launch: out of memory\n");
            r = 1;
            goto out;
        }
    }
    char machine[512];
    fl_machine_line(machine, sizeof machine);
    printf("forkless bench launch: %s\n", machine);
    printf("target %s; %lu rounds of %lu spawns per arm, arms interleaved in random order\n",
           path, o.rounds, o.spawns);
    fl_rows_start(&j, SUITE, machine, fl_loadavg());
    fl_rows_meta_str(&j, "target", path);
    fl_rows_meta_int(&j, "spawns_per_round", (long long)o.spawns);

    for (size_t k = 0; k < NARMS; k++) {   /* warm-up, not recorded */
        if (round_of(&arms[k], path, o.spawns < 50 ? o.spawns : 50)) {
            r = 1;
            goto out;
        }
        arms[k].n = 0;
    }
    size_t order[NARMS];
    uint64_t seed = 0x6c61756eu;
    for (unsigned long i = 0; i < o.rounds; i++) {
        fl_interleave_order(order, NARMS, &seed);
        for (size_t k = 0; k < NARMS; k++)
            if (round_of(&arms[order[k]], path, o.spawns)) {
                r = 1;
                goto out;
            }
    }
    const struct arm *base = NULL;
    for (size_t k = 0; k < NARMS; k++) {
        fl_mmm_of(arms[k].rate, arms[k].n, &arms[k].r);
        fl_mmm_of(arms[k].blocked, arms[k].n, &arms[k].b);
        if (strcmp(arms[k].name, BASELINE) == 0)
            base = &arms[k];
    }
    printf("       %-18s %8s %8s %8s %8s  %10s %8s\n", "arm", "min/s", "median/s", "max/s",
           "x" BASELINE, "blocked us", "x" BASELINE);
    for (size_t k = 0; k < NARMS; k++) {
        const struct arm *a = &arms[k];
        double rr = a->r.median / base->r.median, br = a->b.median / base->b.median;
        printf("launch %-18s %8.0f %8.0f %8.0f %8.2f  %10.2f %8.2f\n", a->name, a->r.min,
               a->r.median, a->r.max, rr, a->b.median / 1e3, br);
        fl_rows_begin(&j);
        fl_rows_str(&j, "method", a->name);
        fl_rows_int(&j, "in_flight", a->k);
        fl_rows_int(&j, "pool", a->pool);
        fl_rows_int(&j, "rounds", (long long)a->n);
        fl_rows_num(&j, "rate_min", a->r.min);
        fl_rows_num(&j, "rate_median", a->r.median);
        fl_rows_num(&j, "rate_max", a->r.max);
        fl_rows_num(&j, "rate_ratio_" BASELINE, rr);
        fl_rows_num(&j, "blocked_median_us", a->b.median / 1e3);
        fl_rows_num(&j, "blocked_ratio_" BASELINE, br);
        fl_rows_end(&j);
    }
    printf("blocked = the median time inside the call that starts a child; load average "
           "%.2f at end\n", fl_loadavg());
out:
    for (size_t k = 0; k < NARMS; k++) {
        free(arms[k].rate);
        free(arms[k].blocked);
    }
    int jr = fl_rows_close(&j);
    if (jr && r == 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, jr);
        r = 1;
    }
    return r;
}
