/* launch.c: the "launch" suite. One thread keeps K children in flight
 * with FL_NO_WAIT_EXEC (K = 1, 2, 4, 8, 16), against blocking fl_spawn()
 * and posix_spawn() from one thread and fl_spawn() from 2 threads: spawns
 * per second, and the time the caller spends inside the call that starts
 * each child; and the start-up of a 4-stage pipeline whose stages are
 * launched against one whose stages are started blocking. For each target
 * (tiny, /usr/bin/true) and parent heap (0, 1 GiB). The arms are in
 * launch_arms.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btarget.h"
#include "cpu.h"
#include "launch_arms.h"
#include "machine.h"
#include "suite.h"

#define SUITE "launch"
#define DEFAULT_ROUNDS 15ul
#define DEFAULT_SPAWNS 1000ul
#define DEFAULT_PIPELINES 40ul
#define QUICK_ROUNDS 3ul
#define QUICK_SPAWNS 200ul
#define QUICK_PIPELINES 10ul
#define BASELINE "fl_spawn"
#define PIPE_BASELINE "pipe_blocking"
#define BEST "launch"   /* in a goal: the launch arm with the highest rate */
#define RAW "raw_launch_k16"  /* the floor under the launch arms */
#define RAW_PIPE "raw_pipe_launch"   /* pipe_launch done raw ... */
#define RAW_PIPE_BASE "raw_pipe_vfork"  /* ... as a ratio to pipe_blocking done raw */
#define MAX_TARGETS 4
#define MAX_HEAPS 4
#define MEM_MARGIN_MIB 512ul   /* as heap.c: page tables, the children, the rest */

struct opts {
    unsigned long rounds, spawns, pipelines;
    const char *targets[MAX_TARGETS];
    size_t ntargets;
    char targets_buf[1024];
    unsigned long heaps[MAX_HEAPS];
    int heaps_given;   /* else the defaults: those that do not fit are left out */
    size_t nheaps;
    const char *json, *csv;
};

/* What the issue asks: arm's ratio to than, of the rate ("rate"), the
 * blocked time ("blocked") or the pipeline start-up ("lat"; "done" is the
 * pipeline's whole run, reported but not a goal), is at least
 * (op '>') or at most ('<') bound; tiny: only with the tiny target; cpus:
 * only where this process may run on that many CPUs or more. The
 * same ratio of raw to raw_than, the comparison done with raw system
 * calls, is printed beside it: for the launch goals the floor, whether the
 * bound is within reach of the kernel's own cost on this machine. */
static const struct {
    const char *arm, *than, *of;
    char op;
    double bound;
    int tiny, cpus;
    const char *what;
    const char *raw, *raw_than;
    bool pinned;   /* about threads pinned one per CPU: not measured where they are not */
} goals[] = {
    { BEST, BASELINE, "rate", '>', 1.6, 1, 0,
      "one launching thread >= 1.6x the blocking single-thread rate (tiny)", RAW, BASELINE,
      false },
    { BEST, BASELINE, "rate", '>', 5.0, 0, 16,
      "on 16 CPUs or more, one launching thread >= 5x the blocking single-thread rate",
      RAW, BASELINE, false },
    { BEST, "fl_spawn_t2", "rate", '>', 0.9, 0, 0,
      "one launching thread >= 0.9x the rate of 2 blocking threads pinned one per CPU", RAW,
      "fl_spawn_t2", true },
    { BEST, "fl_spawn_t2_free", "rate", '>', 0.9, 0, 0,
      "one launching thread >= 0.9x the rate of 2 blocking threads left to the scheduler", RAW,
      "fl_spawn_t2_free", false },
    { BEST, BASELINE, "blocked", '<', 0.3, 0, 0,
      "the caller blocked <= 0.3x the blocking spawn's time", RAW, BASELINE, false },
    { "pipe_launch", PIPE_BASELINE, "lat", '<', 0.5, 0, 0,
      "a 4-stage pipeline's start-up <= 0.5x with its stages blocking", RAW_PIPE,
      RAW_PIPE_BASE, false },
};

void fl_bench_launch_usage(FILE *f)
{
    fprintf(f,
        "usage: forkless bench launch [OPTIONS]\n\n"
        "For each target and parent heap: starts the target SPAWNS times per round\n"
        "per rate arm (PIPELINES pipelines per pipe arm), every arm once a round in a\n"
        "fresh random order, and reports per arm the median over the rounds of:\n"
        "spawns per second (start to reap), the caller's blocked time per spawn\n"
        "(the round's total time inside the calls that start the children, over\n"
        "its spawns), and the share of the CPUs' time that they stood idle (idle\n"
        "%%: cpuidle's residency where there is one, else /proc/stat); for the\n"
        "pipe arms, over every pipeline, the start-up (from before\n"
        "fl_pipeline_spawn() until every stage has exec'd) and the whole run\n"
        "(until fl_pipeline_wait() has reaped every stage). The launch arms keep K\n"
        "children in flight with FL_NO_WAIT_EXEC, reaping the oldest before\n"
        "starting the next; " RAW " does what launch_k16 does with raw system\n"
        "calls, as the floor under them, and " RAW_PIPE " against " RAW_PIPE_BASE "\n"
        "is the pipe arms' comparison done raw. Ratios are against blocking\n"
        "fl_spawn() and " PIPE_BASELINE "; at the end of each table a line per goal:\n"
        "met or not, and the same ratio done raw.\n\n"
        "Options:\n"
        "  -n N            rounds (default %lu)\n"
        "  --spawns N      spawns per rate arm and round (default %lu)\n"
        "  --pipelines N   pipelines per pipe arm and round (default %lu)\n"
        "  --targets LIST  tiny, paths or names in $PATH, comma separated (default\n"
        "                  tiny,/usr/bin/true)\n"
        "  --target T      the same, with one target\n"
        "  --heap LIST     the parent's resident heaps in MiB, comma separated, each\n"
        "                  at most %lu (default 0,1024); one larger than the free\n"
        "                  memory less %lu MiB is refused (of the defaults: left\n"
        "                  out, saying so)\n"
        "  --quick         -n %lu --spawns %lu --pipelines %lu (each unless given)\n"
        "  --json FILE     also write the rows as JSON\n"
        "  --csv FILE      also write the rows as CSV\n"
        "  -h, --help      this text\n\n"
        "Arms:\n",
        DEFAULT_ROUNDS, DEFAULT_SPAWNS, DEFAULT_PIPELINES, FL_MAX_HEAP_MIB, MEM_MARGIN_MIB,
        QUICK_ROUNDS,
        QUICK_SPAWNS, QUICK_PIPELINES);
    for (size_t k = 0; k < fl_la_narms; k++)
        fprintf(f, "  %-18s %s\n", fl_la_arms[k].name, fl_la_arms[k].what);
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .rounds = DEFAULT_ROUNDS, .spawns = DEFAULT_SPAWNS,
                        .pipelines = DEFAULT_PIPELINES,
                        .targets = { "tiny", "/usr/bin/true" }, .ntargets = 2,
                        .heaps = { 0, 1024 }, .nheaps = 2 };
    if (fl_opt_quick(argc, argv)) {
        o->rounds = QUICK_ROUNDS;
        o->spawns = QUICK_SPAWNS;
        o->pipelines = QUICK_PIPELINES;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m, n;
        if ((m = fl_opt_common(SUITE, argc, argv, &i, fl_bench_launch_usage, &o->csv, &o->json))) {
            if (m != 1)
                return m < 0 ? 2 : 0;
            continue;
        }
        if ((m = fl_opt_value(SUITE, argc, argv, &i, "--targets", &v)) ||
            (m = fl_opt_value(SUITE, argc, argv, &i, "--target", &v))) {
            if (m < 0)
                return 2;
            if (strlen(v) >= sizeof o->targets_buf ||
                (n = fl_parse_name_list(strcpy(o->targets_buf, v), o->targets,
                                        MAX_TARGETS)) < 0)
                return fl_usage_error(SUITE, "--targets wants 1 to %d distinct non-empty "
                                      "names, not \"%s\"", MAX_TARGETS, v);
            o->ntargets = (size_t)n;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--heap", &v))) {
            if (m < 0)
                return 2;
            if (fl_opt_heaps(SUITE, v, o->heaps, MAX_HEAPS, &o->nheaps) != 0)
                return 2;
            o->heaps_given = 1;
        } else if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "-n", 1, 100000, &o->rounds)) ||
            (m = fl_opt_ulong(SUITE, argc, argv, &i, "--spawns", 1, 10000000, &o->spawns)) ||
            (m = fl_opt_ulong(SUITE, argc, argv, &i, "--pipelines", 1, 100000,
                              &o->pipelines))) {
            if (m < 0)
                return 2;
        } else {
            return fl_usage_error(SUITE, "unknown option \"%s\"", a);
        }
    }
    return -1;
}

static struct fl_la_arm *arm_named(const char *name)
{
    for (size_t k = 0; k < fl_la_narms; k++)
        if (strcmp(fl_la_arms[k].name, name) == 0)
            return &fl_la_arms[k];
    return NULL;
}

/* The launch arm (stack pool on) with the highest median rate. */
static const struct fl_la_arm *best_launch(void)
{
    const struct fl_la_arm *best = NULL;
    for (size_t k = 0; k < fl_la_narms; k++) {
        const struct fl_la_arm *a = &fl_la_arms[k];
        if (a->kind == FL_LA_LAUNCH && a->pool && (!best || a->r.median > best->r.median))
            best = a;
    }
    return best;
}

static double figure(const struct fl_la_arm *a, const char *of)
{
    if (strcmp(of, "rate") == 0)
        return a->r.median;
    if (strcmp(of, "blocked") == 0)
        return a->kind == FL_LA_THREADS ? NAN : a->b.median;
    if (strcmp(of, "done") == 0)
        return a->d.median_us;
    return a->l.median_us;
}

static double ratio_to(const struct fl_la_arm *a, const struct fl_la_arm *than,
                       const char *of)
{
    return a && than ? figure(a, of) / figure(than, of) : NAN;
}

/* The CPUs this process may run on: those its children spread over. */
static int usable_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

static void print_goals(int is_tiny)
{
    int cpus = usable_cpus();
    for (size_t g = 0; g < sizeof goals / sizeof goals[0]; g++) {
        if ((goals[g].tiny && !is_tiny) || cpus < goals[g].cpus)
            continue;
        const struct fl_la_arm *w = strcmp(goals[g].arm, BEST) ? arm_named(goals[g].arm)
                                                                 : best_launch();
        const struct fl_la_arm *t = arm_named(goals[g].than);
        double r = ratio_to(w, t, goals[g].of);
        printf("goal: %s: ", goals[g].what);
        if (goals[g].pinned && !fl_cpu_spreading()) {
            printf("not measured (--cpu all: the threads are left to the scheduler)\n");
            continue;
        }
        if (!isfinite(r)) {
            printf("not measured\n");
            continue;
        }
        int met = goals[g].op == '>' ? r >= goals[g].bound : r <= goals[g].bound;
        printf("%s x%.*f %s (%s %.2f): %s", w->name, fl_decimals_apart(r, goals[g].bound, 2), r, t->name,
               goals[g].op == '>' ? ">=" : "<=", goals[g].bound, met ? "met" : "NOT met");
        const struct fl_la_arm *raw = arm_named(goals[g].raw);
        const struct fl_la_arm *raw_than = arm_named(goals[g].raw_than);
        double floor = ratio_to(raw, raw_than, goals[g].of);
        if (isfinite(floor))
            printf("; done raw, %s x%.2f %s", raw->name, floor, raw_than->name);
        printf("\n");
    }
}

/* Summarises the arms, prints the table and writes the rows. */
static void report(struct fl_rows *j, const char *tname, unsigned long heap_mib)
{
    for (size_t k = 0; k < fl_la_narms; k++) {
        struct fl_la_arm *a = &fl_la_arms[k];
        fl_mmm_of(a->rate, fl_la_is_pipe(a) ? 0 : a->n, &a->r);
        fl_mmm_of(a->blocked, fl_la_is_pipe(a) ? 0 : a->n, &a->b);
        fl_mmm_of(a->idle, fl_la_is_pipe(a) ? 0 : a->n, &a->i);
        fl_summarize(a->lat, a->nlat, &a->l);
        fl_summarize(a->done, a->nlat, &a->d);
    }
    const struct fl_la_arm *base = arm_named(BASELINE), *pbase = arm_named(PIPE_BASELINE);
    printf("%s, heap %lu MiB:\n", tname, heap_mib);
    printf("       %-18s %8s %8s %8s %8s  %10s %8s %7s\n", "arm", "min/s", "median/s", "max/s",
           "x" BASELINE, "blocked us", "x" BASELINE, "idle %");
    for (size_t k = 0; k < fl_la_narms; k++) {
        const struct fl_la_arm *a = &fl_la_arms[k];
        int pipe = fl_la_is_pipe(a);
        double rr = pipe ? NAN : ratio_to(a, base, "rate");
        double br = pipe ? NAN : ratio_to(a, base, "blocked");
        double lr = pipe ? ratio_to(a, pbase, "lat") : NAN;
        double dr = pipe ? ratio_to(a, pbase, "done") : NAN;
        if (pipe) {
            printf("launch %-18s start-up us min %8.1f  median %8.1f  max %8.1f  x%.2f %s\n",
                   a->name, a->l.min_us, a->l.median_us, a->l.max_us, lr, PIPE_BASELINE);
            printf("       %-18s done     us min %8.1f  median %8.1f  max %8.1f  x%.2f %s\n",
                   a->name, a->d.min_us, a->d.median_us, a->d.max_us, dr, PIPE_BASELINE);
        } else if (isfinite(br))
            printf("launch %-18s %8.0f %8.0f %8.0f %8.2f  %10.2f %8.2f %7.1f\n", a->name,
                   a->r.min, a->r.median, a->r.max, rr, a->b.median / 1e3, br,
                   a->i.median / 100.0);
        else
            printf("launch %-18s %8.0f %8.0f %8.0f %8.2f  %10s %8s %7.1f\n", a->name, a->r.min,
                   a->r.median, a->r.max, rr, "-", "-", a->i.median / 100.0);
        fl_rows_begin(j);
        fl_rows_str(j, "method", a->name);
        fl_rows_str(j, "target", tname);
        fl_rows_int(j, "heap_mib", (long long)heap_mib);
        fl_rows_int(j, "in_flight", a->kind == FL_LA_LAUNCH || a->kind == FL_LA_RAW ? a->k : 1);
        fl_rows_int(j, "threads", a->kind == FL_LA_THREADS ? a->k : 1);
        fl_rows_int(j, "pool", a->pool);
        fl_rows_int(j, "rounds", (long long)a->n);
        fl_rows_num(j, "rate_min", pipe ? NAN : a->r.min);
        fl_rows_num(j, "rate_median", pipe ? NAN : a->r.median);
        fl_rows_num(j, "rate_max", pipe ? NAN : a->r.max);
        fl_rows_num(j, "rate_ratio_" BASELINE, rr);
        fl_rows_num(j, "blocked_median_us", isfinite(br) ? a->b.median / 1e3 : NAN);
        fl_rows_num(j, "blocked_ratio_" BASELINE, br);
        fl_rows_num(j, "idle_pct_median", pipe ? NAN : a->i.median / 100.0);
        fl_rows_int(j, "pinned", a->kind == FL_LA_THREADS && !a->unpinned && fl_cpu_spreading());
        fl_rows_int(j, "pipelines", (long long)a->nlat);
        fl_rows_num(j, "startup_min_us", pipe ? a->l.min_us : NAN);
        fl_rows_num(j, "startup_median_us", pipe ? a->l.median_us : NAN);
        fl_rows_num(j, "startup_max_us", pipe ? a->l.max_us : NAN);
        fl_rows_num(j, "startup_ratio_" PIPE_BASELINE, lr);
        fl_rows_num(j, "done_min_us", pipe ? a->d.min_us : NAN);
        fl_rows_num(j, "done_median_us", pipe ? a->d.median_us : NAN);
        fl_rows_num(j, "done_max_us", pipe ? a->d.max_us : NAN);
        fl_rows_num(j, "done_ratio_" PIPE_BASELINE, dr);
        fl_rows_end(j);
    }
    print_goals(strcmp(tname, "tiny") == 0);
    fflush(stdout);
}

/* Every round of every arm for one target at the current heap. */
static int measure(const struct opts *o, const char *path)
{
    for (size_t k = 0; k < fl_la_narms; k++) {   /* warm-up, not recorded */
        struct fl_la_arm *a = &fl_la_arms[k];
        if (fl_la_round(a, path, o->spawns < 50 ? o->spawns : 50, 1))
            return 1;
        a->n = a->nlat = 0;
    }
    size_t order[FL_LA_MAX_ARMS];  /* fl_la_narms at most (launch_arms.c checks) */
    uint64_t seed = 0x6c61756eu;
    for (unsigned long i = 0; i < o->rounds; i++) {
        fl_interleave_order(order, fl_la_narms, &seed);
        for (size_t k = 0; k < fl_la_narms; k++)
            if (fl_la_round(&fl_la_arms[order[k]], path, o->spawns, o->pipelines))
                return 1;
    }
    return 0;
}

int fl_bench_launch(int argc, char **argv)
{
    struct opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;
    if (!o.heaps_given)
        fl_mem_fit_defaults(SUITE, "--heap", o.heaps, &o.nheaps, 1, MEM_MARGIN_MIB);
    if ((r = fl_mem_check(SUITE, "--heap", o.heaps, o.nheaps, 1, MEM_MARGIN_MIB)) != 0)
        return r;
    char paths[MAX_TARGETS][PATH_MAX];
    const char *tnames[MAX_TARGETS];
    for (size_t t = 0; t < o.ntargets; t++) {
        int is_tiny;
        if ((r = fl_bench_target(SUITE, o.targets[t], paths[t], sizeof paths[t],
                                 &is_tiny)) != 0)
            return r;
        tnames[t] = is_tiny ? "tiny" : paths[t];
    }
    struct fl_rows j;
    if ((r = fl_rows_open(&j, SUITE, o.json, o.csv)) != 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, r);
        return fl_rows_exit(r);
    }
    for (size_t k = 0; k < fl_la_narms; k++) {
        struct fl_la_arm *a = &fl_la_arms[k];
        a->rate = calloc(o.rounds + 1, sizeof *a->rate);
        a->blocked = calloc(o.rounds + 1, sizeof *a->blocked);
        a->idle = calloc(o.rounds + 1, sizeof *a->idle);
        a->lat = calloc((o.rounds + 1) * o.pipelines, sizeof *a->lat);
        a->done = calloc((o.rounds + 1) * o.pipelines, sizeof *a->done);
        if (!a->rate || !a->blocked || !a->idle || !a->lat || !a->done) {
            fprintf(stderr, "forkless bench launch: out of memory\n");
            r = 1;
            goto out;
        }
    }
    char machine[512];
    fl_machine_line(machine, sizeof machine);
    printf("forkless bench launch: %s\n", machine);
    printf("%lu rounds of %lu spawns per rate arm and %lu pipelines per pipe arm, arms "
           "interleaved in random order; rates in spawns/s\n", o.rounds, o.spawns,
           o.pipelines);
    fl_rows_start(&j, SUITE, machine, fl_loadavg());
    fl_rows_meta_int(&j, "spawns_per_round", (long long)o.spawns);
    fl_rows_meta_int(&j, "pipelines_per_round", (long long)o.pipelines);
    for (size_t h = 0; h < o.nheaps && r == 0; h++) {
        fprintf(stderr, "launch: heap %lu MiB: touching...\n", o.heaps[h]);
        struct fl_heap heap;
        int e = fl_heap_alloc(&heap, o.heaps[h], FL_PAGES_4K);
        if (e) {
            fprintf(stderr, "forkless bench launch: mmap %lu MiB: %s\n", o.heaps[h],
                    strerror(e));
            r = 1;
            break;
        }
        for (size_t t = 0; t < o.ntargets && r == 0; t++) {
            fprintf(stderr, "launch: heap %lu MiB, %s: measuring...\n", o.heaps[h],
                    tnames[t]);
            r = measure(&o, paths[t]);
            if (r == 0)
                report(&j, tnames[t], o.heaps[h]);
        }
        fl_heap_free(&heap);
    }
    if (r == 0)
        printf("blocked = the median over the rounds of the mean time inside the call that "
               "starts a child; idle = the median over the rounds of the share of the CPUs' "
               "time that they stood idle; load average %.2f at end\n", fl_loadavg());
out:
    for (size_t k = 0; k < fl_la_narms; k++) {
        free(fl_la_arms[k].rate);
        free(fl_la_arms[k].blocked);
        free(fl_la_arms[k].idle);
        free(fl_la_arms[k].lat);
        free(fl_la_arms[k].done);
        fl_la_arms[k].rate = fl_la_arms[k].blocked = fl_la_arms[k].lat = NULL;
        fl_la_arms[k].done = fl_la_arms[k].idle = NULL;
    }
    int jr = fl_rows_close(&j);
    if (jr && r == 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, jr);
        r = 1;
    }
    return r;
}
