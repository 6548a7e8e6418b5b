/* threads.c: the "threads" suite. T threads of one parent each start the
 * same program over and over (spawn+wait), for T = 1, 2, 4 ... 2x the CPUs,
 * with posix_spawn, forkless and fork_exec, from a parent that holds a
 * resident heap (1 GiB by default, for every arm: posix_spawn and forkless
 * do not depend on it, fork_exec does). It reports spawns per second,
 * the scaling efficiency rate(T) / (T x rate(1)) of each arm, and each
 * arm's throughput against posix_spawn at the same T. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arms.h"
#include "btarget.h"
#include "machine.h"
#include "stats.h"
#include "suite.h"
#include "trun.h"

#define SUITE "threads"
#define MAX_T 32
#define MAX_TARGETS 4
#define MAX_THREADS FL_TRUN_MAX_THREADS
#define DEFAULT_ARMS "posix_spawn,forkless,fork_exec"
#define BASELINE "posix_spawn"
/* Twelve quarter-second cells per arm rather than three of a second: the
 * same time, but a host that drifts over seconds then falls on every arm
 * alike. With /usr/bin/true on the 2-CPU VM, forkless against posix_spawn
 * read x0.94 to x1.12 over three runs at 1 s x 3, x1.03 to x1.06 over
 * two at 0.25 s x 12. */
#define DEFAULT_SECONDS 0.25
#define DEFAULT_REPEATS 12
#define DEFAULT_HEAP_MIB 1024
#define MEM_MARGIN_MIB 512

struct opts {
    unsigned long threads[MAX_T];
    size_t nthreads;
    const char *targets[MAX_TARGETS];
    size_t ntargets;
    char targets_buf[1024];
    double seconds;
    unsigned long n;           /* spawns per thread; 0: use seconds */
    unsigned long repeats;
    unsigned long heap_mib;
    int heap_given;   /* else the default: 0 in its place where it does not fit */
    const char *arms;
    const char *json;
    const char *csv;
};

void fl_bench_threads_usage(FILE *f)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    fprintf(f,
        "usage: forkless bench threads [OPTIONS]\n\n"
        "T threads of one parent each start TARGET and wait for it, over and\n"
        "over, for a fixed time (or a fixed count) per cell; a cell is one arm\n"
        "at one T. Each repeat runs every cell once, the arms in a fresh random\n"
        "order per T (arms that fork last: a fork makes the parent's memory\n"
        "copy-on-write, which would slow whatever runs next). Thread i runs on\n"
        "the i-th CPU in turn, its children with it (--cpu all: wherever the\n"
        "scheduler puts them, which moves a child to another CPU at exec when\n"
        "that one looks idle). The parent holds a resident heap for every arm\n"
        "(--heap): fork_exec's cost grows with it, posix_spawn's and\n"
        "forkless's do not. It prints spawns/s (min,\n"
        "median, max over the repeats), the scaling efficiency\n"
        "rate(T) / (T x rate(1)) (against the smallest T when 1 is not in the\n"
        "list) and each arm's median throughput against " BASELINE ".\n\n"
        "Options:\n"
        "  --threads LIST  thread counts, comma separated (default 1, 2, 4 ...\n"
        "                  up to 2x the CPUs: %ld here)\n"
        "  --targets LIST  programs to start, one pass each: \"tiny\" (the bench's\n"
        "                  static program that only exits), a PATH or a name in\n"
        "                  $PATH (default tiny,/bin/true)\n"
        "  --target T      the same, with one target\n"
        "  --seconds S     time per cell (default %.2f)\n"
        "  -n N            spawns per thread per cell instead of a time\n"
        "  -r N            repeats (default %d)\n"
        "  --quick         small counts: --seconds 0.2 -r 1 (each unless given)\n"
        "  --heap MIB      the parent's resident heap, at most %lu (default %d;\n"
        "                  0: none)\n"
        "  --arms LIST     arms, comma separated (default " DEFAULT_ARMS ")\n"
        "  --json FILE     also write the rows as JSON\n"
        "  --csv FILE      also write the rows as CSV (a header line, then one\n"
        "                  line per row)\n"
        "  -h, --help      this text\n\n"
        "Arms:\n",
        2 * (cpus > 0 ? cpus : 1), DEFAULT_SECONDS, DEFAULT_REPEATS, FL_MAX_HEAP_MIB,
        DEFAULT_HEAP_MIB);
    fl_arms_list(f);
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .seconds = DEFAULT_SECONDS, .repeats = DEFAULT_REPEATS,
                        .heap_mib = DEFAULT_HEAP_MIB, .arms = DEFAULT_ARMS };
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned long top = 2 * (unsigned long)(cpus > 0 ? cpus : 1);
    for (unsigned long t = 1; o->nthreads < MAX_T; t *= 2) {
        o->threads[o->nthreads++] = t > top ? top : t;
        if (t >= top)
            break;
    }
    o->targets[0] = "tiny";
    o->targets[1] = "/bin/true";
    o->ntargets = 2;
    if (fl_opt_quick(argc, argv)) {
        o->seconds = 0.2;
        o->repeats = 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        if ((m = fl_opt_common(SUITE, argc, argv, &i, fl_bench_threads_usage, &o->csv, &o->json))) {
            if (m != 1)
                return m < 0 ? 2 : 0;
            continue;
        }
        if ((m = fl_opt_value(SUITE, argc, argv, &i, "--threads", &v))) {
            if (m < 0)
                return 2;
            int n = fl_parse_ulong_list(v, 1, MAX_THREADS, o->threads, MAX_T);
            if (n < 0)
                return fl_usage_error(SUITE, "--threads wants a comma list of distinct "
                                      "thread counts from 1 to %d (at most %d), "
                                      "not \"%s\"", MAX_THREADS, MAX_T, v);
            o->nthreads = (size_t)n;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--targets", &v)) ||
                   (m = fl_opt_value(SUITE, argc, argv, &i, "--target", &v))) {
            if (m < 0)
                return 2;
            if (strlen(v) >= sizeof o->targets_buf)
                return fl_usage_error(SUITE, "--targets is too long");
            strcpy(o->targets_buf, v);
            int n = fl_parse_name_list(o->targets_buf, o->targets, MAX_TARGETS);
            if (n < 0)
                return fl_usage_error(SUITE, "--targets wants 1 to %d "
                                      "distinct non-empty names, not \"%s\"", MAX_TARGETS, v);
            o->ntargets = (size_t)n;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--seconds", &v))) {
            if (m < 0)
                return 2;
            char *end;
            errno = 0;
            double s = strtod(v, &end);
            if (errno || end == v || *end || !(s > 0) || s > 3600)
                return fl_usage_error(SUITE, "--seconds wants a number of seconds "
                                      "above 0 and up to 3600, not \"%s\"", v);
            o->seconds = s;
            o->n = 0;
        } else if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "-n", 1, 10000000,
                                     &o->n))) {
            if (m < 0)
                return 2;
        } else if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "-r", 1, 1000,
                                     &o->repeats))) {
            if (m < 0)
                return 2;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--heap", &v))) {
            if (m < 0)
                return 2;
            if (fl_parse_ulong(v, 0, FL_MAX_HEAP_MIB, &o->heap_mib) != 0)
                return fl_usage_error(SUITE, "--heap wants a size in MiB from 0 to %lu "
                                      "(64 GiB), not \"%s\"", FL_MAX_HEAP_MIB, v);
            o->heap_given = 1;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--arms", &v))) {
            if (m < 0)
                return 2;
            o->arms = v;
        } else {
            return fl_usage_error(SUITE, "unknown option \"%s\"", a);
        }
    }
    return -1;   /* go on */
}

/* ---- the suite ---------------------------------------------------------- */

/* One row of the table: an arm at one T for one target. */
struct row {
    const char *target;       /* as named: "tiny" or the path */
    const char *method;
    unsigned long threads;
    size_t repeats;
    double rate_min, rate_median, rate_max;   /* spawns per second */
    double spawns_median;     /* spawns per cell (median) */
    double efficiency;        /* rate(T) / (T x rate(Tmin)/Tmin) */
    double ratio_baseline;    /* median rate / baseline's median rate */
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static void write_rows(struct fl_rows *j, const struct row *rows, size_t nrows)
{
    for (size_t i = 0; i < nrows; i++) {
        const struct row *w = &rows[i];
        fl_rows_begin(j);
        fl_rows_str(j, "method", w->method);
        fl_rows_str(j, "target", w->target);
        fl_rows_int(j, "threads", (long long)w->threads);
        fl_rows_int(j, "repeats", (long long)w->repeats);
        fl_rows_num(j, "min_spawns_per_s", w->rate_min);
        fl_rows_num(j, "median_spawns_per_s", w->rate_median);
        fl_rows_num(j, "max_spawns_per_s", w->rate_max);
        fl_rows_num(j, "spawns_per_cell_median", w->spawns_median);
        fl_rows_num(j, "efficiency", w->efficiency);
        fl_rows_num(j, "ratio_" BASELINE, w->ratio_baseline);
        fl_rows_end(j);
    }
}

int fl_bench_threads(int argc, char **argv)
{
    struct opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;

    const struct fl_arm *arms[fl_narms];
    size_t narms;
    size_t base;
    if ((r = fl_arms_select(SUITE, o.arms, arms, &narms, BASELINE, &base)) != 0)
        return r;

    size_t one = 1;
    if (!o.heap_given)
        fl_mem_fit_defaults(SUITE, "--heap", &o.heap_mib, &one, 1, MEM_MARGIN_MIB);
    if ((r = fl_mem_check(SUITE, "--heap", &o.heap_mib, 1, 1, MEM_MARGIN_MIB)) != 0)
        return r;

    char paths[MAX_TARGETS][PATH_MAX];
    const char *tnames[MAX_TARGETS];
    for (size_t k = 0; k < o.ntargets; k++) {
        int is_tiny;
        if ((r = fl_bench_target(SUITE, o.targets[k], paths[k], sizeof paths[k],
                                 &is_tiny)) != 0)
            return r;
        tnames[k] = is_tiny ? "tiny" : paths[k];
    }

    /* The smallest T is the reference of the scaling efficiency. */
    size_t tref = 0;
    for (size_t k = 1; k < o.nthreads; k++)
        if (o.threads[k] < o.threads[tref])
            tref = k;

    size_t ncells = o.ntargets * o.nthreads * narms;
    double *rates = calloc(ncells * o.repeats, sizeof *rates);
    double *counts = calloc(ncells * o.repeats, sizeof *counts);
    struct row *rows = calloc(ncells, sizeof *rows);
    if (!rates || !counts || !rows) {
        fprintf(stderr, "forkless bench threads: out of memory\n");
        free(rates);
        free(counts);
        free(rows);
        return 1;
    }
#define CELL(k, ti, a) (((k) * o.nthreads + (ti)) * narms + (a))

    struct fl_rows j;
    if ((r = fl_rows_open(&j, SUITE, o.json, o.csv)) != 0) {
        fl_rows_error(SUITE, "opening", o.json, o.csv, r);
        free(rates);
        free(counts);
        free(rows);
        return fl_rows_exit(r);
    }
    char machine[512];
    fl_machine_line(machine, sizeof machine);
    double load0 = fl_loadavg();
    printf("forkless bench threads: %s\n", machine);
    if (o.n)
        printf("T threads each spawn+wait %lu times per cell", o.n);
    else
        printf("T threads spawn+wait for %.2f s per cell", o.seconds);
    printf("; %lu repeats, arms in random order per T (forking arms last); "
           "parent heap %lu MiB resident for every arm; rates in spawns/s; "
           "eff = rate(T) / (T x rate(%lu) / %lu)\n", o.repeats, o.heap_mib,
           o.threads[tref], o.threads[tref]);
    fl_rows_start(&j, SUITE, machine, load0);
    fl_rows_meta_int(&j, "heap_mib", (long long)o.heap_mib);
    fl_rows_meta_num(&j, "seconds_per_cell", o.n ? NAN : o.seconds);
    fl_rows_meta_int(&j, "spawns_per_thread", (long long)o.n);
    fl_rows_meta_str(&j, "baseline", BASELINE);

    fprintf(stderr, "threads: heap %lu MiB: touching...\n", o.heap_mib);
    struct fl_heap heap;
    int e = fl_heap_alloc(&heap, o.heap_mib, FL_PAGES_4K);
    if (e) {
        fprintf(stderr, "forkless bench threads: mmap %lu MiB: %s\n", o.heap_mib,
                strerror(e));
        r = 1;
        goto out;
    }

    uint64_t seed = 0x7468726561647321u;   /* repeatable */
    for (size_t k = 0; k < o.ntargets && r == 0; k++) {
        char *targv[] = { paths[k], NULL };
        struct fl_arm_target t = { paths[k], targv };
        /* Warm up every arm once (page cache, dynamic linking of the target). */
        for (size_t a = 0; a < narms && r == 0; a++) {
            char e2[512];
            if (arms[a]->run(&t, e2, sizeof e2) != 0) {
                fprintf(stderr, "forkless bench threads: %s: %s\n", arms[a]->name, e2);
                r = 1;
            }
        }
        for (size_t rep = 0; rep < o.repeats && r == 0; rep++) {
            fprintf(stderr, "threads: target %s: repeat %zu/%lu...\n", tnames[k],
                    rep + 1, o.repeats);
            for (size_t ti = 0; ti < o.nthreads && r == 0; ti++) {
                size_t order[fl_narms];
                fl_interleave_order(order, narms, &seed);
                for (int forks = 0; forks <= 1 && r == 0; forks++) {
                    for (size_t x = 0; x < narms && r == 0; x++) {
                        size_t a = order[x];
                        if (arms[a]->forks != forks)
                            continue;
                        unsigned long sp = 0;
                        double rate = 0;
                        r = fl_trun(SUITE, arms[a], &t, o.threads[ti], o.n, o.seconds,
                                     &rate, &sp);
                        rates[CELL(k, ti, a) * o.repeats + rep] = rate;
                        counts[CELL(k, ti, a) * o.repeats + rep] = (double)sp;
                    }
                }
            }
        }
        if (r)
            break;
        for (size_t ti = 0; ti < o.nthreads; ti++) {
            for (size_t a = 0; a < narms; a++) {
                struct row *w = &rows[CELL(k, ti, a)];
                double *v = &rates[CELL(k, ti, a) * o.repeats];
                *w = (struct row){ .target = tnames[k], .method = arms[a]->name,
                                   .threads = o.threads[ti], .repeats = o.repeats };
                w->rate_median = median_of(v, o.repeats);   /* sorts v */
                w->rate_min = v[0];
                w->rate_max = v[o.repeats - 1];
                w->spawns_median = median_of(&counts[CELL(k, ti, a) * o.repeats],
                                             o.repeats);
            }
        }
        for (size_t ti = 0; ti < o.nthreads; ti++) {
            for (size_t a = 0; a < narms; a++) {
                struct row *w = &rows[CELL(k, ti, a)];
                const struct row *one = &rows[CELL(k, tref, a)];
                w->efficiency = w->rate_median /
                    ((double)w->threads * one->rate_median / (double)one->threads);
                w->ratio_baseline = base == SIZE_MAX ? NAN :
                    w->rate_median / rows[CELL(k, ti, base)].rate_median;
                printf("threads %-14s T %3lu  %-12s rate/s min %9.0f  median %9.0f  "
                       "max %9.0f  eff %5.2f", w->target, w->threads, w->method,
                       w->rate_min, w->rate_median, w->rate_max, w->efficiency);
                if (isfinite(w->ratio_baseline))
                    printf("   x%.*f %s", fl_ratio_decimals(w->ratio_baseline),
                           w->ratio_baseline, BASELINE);
                putchar('\n');
            }
        }
        fflush(stdout);
    }
    fl_heap_free(&heap);
    if (r == 0) {
        write_rows(&j, rows, ncells);
        /* The done-when condition of the suite: forkless keeps up with
         * posix_spawn at every T. */
        size_t fa = SIZE_MAX;
        for (size_t a = 0; a < narms; a++)
            if (strcmp(arms[a]->name, "forkless") == 0)
                fa = a;
        if (fa != SIZE_MAX && base != SIZE_MAX) {
            double worst = INFINITY;
            const struct row *wr = NULL;
            for (size_t k = 0; k < o.ntargets; k++)
                for (size_t ti = 0; ti < o.nthreads; ti++) {
                    const struct row *w = &rows[CELL(k, ti, fa)];
                    if (w->ratio_baseline < worst)
                        worst = w->ratio_baseline, wr = w;
                }
            if (wr)
                printf("forkless/%s throughput >= 0.95 at every T: %s (lowest "
                       "x%.*f, %s T %lu)\n", BASELINE, worst >= 0.95 ? "yes" : "no",
                       fl_decimals_apart(worst, 0.95, 2), worst, wr->target, wr->threads);
        }
        printf("load average %.2f at end\n", fl_loadavg());
    }
out:
    free(rates);
    free(counts);
    free(rows);
    int jr = fl_rows_close(&j);
    if (jr && r == 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, jr);
        r = 1;
    }
    return r;
}
