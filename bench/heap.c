/* heap.c: the "heap" suite. The parent holds a resident heap of 0, 1 and
 * 4 GiB and starts the same program with each arm, interleaved, timing
 * every spawn+wait. fork's cost grows with the heap; the others stay flat.
 * Each arm's median is reported against clone_vm, the physical limit, at
 * the same heap. */
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
#include <sys/stat.h>
#include <unistd.h>

#include "arms.h"
#include "machine.h"
#include "stats.h"
#include "suite.h"

#define SUITE "heap"
#define MAX_HEAPS 16
#define DEFAULT_N 200
#define DEFAULT_BUDGET_S 10
#define MIN_SAMPLES 20      /* a budgeted arm still takes at least this many */
#define WARMUP 3
#define MEM_MARGIN_MIB 512  /* room for page tables, the child, the rest */

struct opts {
    unsigned long heaps[MAX_HEAPS];
    size_t nheaps;
    enum fl_pages pages[2];
    size_t npages;
    const char *target;
    unsigned long n;
    unsigned long budget_s;
    const char *arms;
    const char *json;
};

void fl_bench_heap_usage(FILE *f)
{
    fprintf(f,
        "usage: forkless bench heap [OPTIONS]\n\n"
        "The parent maps and touches a heap, then starts TARGET with each arm,\n"
        "interleaved (each round runs every arm once, in a fresh random order),\n"
        "and times every spawn+wait (CLOCK_MONOTONIC). It prints min/median/max\n"
        "per spawn and each arm's median against clone_vm. The arms that fork\n"
        "run after the others, interleaved among themselves: a fork makes the\n"
        "parent's memory copy-on-write, which would slow whatever runs next.\n\n"
        "Options:\n"
        "  --heap LIST     heap sizes in MiB, comma separated (default 0,1024,4096)\n"
        "  --pages KIND    4k, thp or both: madvise(NOHUGEPAGE/HUGEPAGE) on the heap\n"
        "                  (default 4k); the row shows the AnonHugePages obtained\n"
        "  --target T      PATH of the program to start, or \"tiny\": the bench's\n"
        "                  static program that only exits (default /bin/true)\n"
        "  -n N            spawns per arm per heap (default %d)\n"
        "  --budget SEC    an arm whose spawns would take longer than SEC seconds\n"
        "                  per heap takes fewer samples (at least %d, evenly\n"
        "                  spread); the row's n says how many. 0: no limit\n"
        "                  (default %d)\n"
        "  --arms LIST     the arms to run, comma separated (default: all but the\n"
        "                  ones marked below)\n"
        "  --json FILE     also write the rows as JSON\n"
        "  -h, --help      this text\n\n"
        "Arms:\n",
        DEFAULT_N, MIN_SAMPLES, DEFAULT_BUDGET_S);
    fl_arms_list(f);
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .heaps = { 0, 1024, 4096 }, .nheaps = 3,
                        .pages = { FL_PAGES_4K }, .npages = 1,
                        .target = "/bin/true", .n = DEFAULT_N,
                        .budget_s = DEFAULT_BUDGET_S };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fl_bench_heap_usage(stdout);
            return 0;
        }
        if ((m = fl_opt_value(SUITE, argc, argv, &i, "--heap", &v))) {
            if (m < 0)
                return 2;
            int n = fl_parse_ulong_list(v, 0, 1ul << 30, o->heaps, MAX_HEAPS);
            if (n < 0)
                return fl_usage_error(SUITE, "--heap wants a comma list of MiB "
                                      "(at most %d), not \"%s\"", MAX_HEAPS, v);
            o->nheaps = (size_t)n;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--pages", &v))) {
            if (m < 0)
                return 2;
            if (strcmp(v, "4k") == 0)
                o->pages[0] = FL_PAGES_4K, o->npages = 1;
            else if (strcmp(v, "thp") == 0)
                o->pages[0] = FL_PAGES_THP, o->npages = 1;
            else if (strcmp(v, "both") == 0)
                o->pages[0] = FL_PAGES_THP, o->pages[1] = FL_PAGES_4K, o->npages = 2;
            else
                return fl_usage_error(SUITE, "--pages wants 4k, thp or both, not \"%s\"", v);
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--target", &v))) {
            if (m < 0)
                return 2;
            if (!*v)
                return fl_usage_error(SUITE, "--target is empty");
            o->target = v;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "-n", &v))) {
            if (m < 0)
                return 2;
            if (fl_parse_ulong(v, 1, 10000000, &o->n) != 0)
                return fl_usage_error(SUITE, "-n wants a whole number from 1 to "
                                      "10000000, not \"%s\"", v);
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--budget", &v))) {
            if (m < 0)
                return 2;
            if (fl_parse_ulong(v, 0, 86400, &o->budget_s) != 0)
                return fl_usage_error(SUITE, "--budget wants seconds (0 to 86400), "
                                      "not \"%s\"", v);
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--arms", &v))) {
            if (m < 0)
                return 2;
            o->arms = v;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--json", &v))) {
            if (m < 0)
                return 2;
            if (!*v)
                return fl_usage_error(SUITE, "--json wants a file name");
            o->json = v;
        } else {
            return fl_usage_error(SUITE, "unknown option \"%s\"", a);
        }
    }
    return -1;   /* go on */
}

/* Resolves --target to an absolute executable path. */
static int resolve_target(const char *t, char *buf, size_t size, int *is_tiny)
{
    *is_tiny = strcmp(t, "tiny") == 0;
    if (*is_tiny) {
        if (fl_find_tiny(buf, size) != 0) {
            fprintf(stderr, "forkless bench heap: the \"tiny\" target was not found "
                    "next to the forkless binary, in ../bench, in the build tree "
                    "or in the install tree; build the `tiny` target or set "
                    "FORKLESS_TINY=PATH\n");
            return 1;
        }
        return 0;
    }
    char cand[PATH_MAX];
    if (strchr(t, '/')) {
        snprintf(cand, sizeof cand, "%s", t);
    } else {
        /* A bare name: search PATH, as a shell would. */
        const char *path = getenv("PATH");
        if (!path)
            path = "/usr/bin:/bin";
        cand[0] = '\0';
        while (*path) {
            size_t len = strcspn(path, ":");
            if (len > 0 && path[0] == '/') {
                snprintf(cand, sizeof cand, "%.*s/%s", (int)len, path, t);
                if (access(cand, X_OK) == 0)
                    break;
            }
            cand[0] = '\0';
            path += len + (path[len] == ':');
        }
    }
    char real[PATH_MAX];
    struct stat st;
    int e = 0;
    if (!cand[0])
        e = ENOENT;
    else if (!realpath(cand, real) || stat(real, &st) != 0)
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
    else if (access(real, X_OK) != 0)
        e = errno;
    if (e) {
        fl_usage_error(SUITE, "--target \"%s\": not an executable file (%s)", t,
                       strerror(e));
        return 2;
    }
    snprintf(buf, size, "%s", real);
    return 0;
}

struct cell_result {
    struct fl_summary s;
    size_t want;     /* samples asked for (after the budget) */
};

/* Times one spawn+wait of arm a into its next sample slot. */
static int time_one(const struct fl_arm *arm, const struct fl_arm_target *t,
                    uint64_t *slot)
{
    char err[2048];
    uint64_t t0 = fl_bench_now_ns();
    int r = arm->run(t, err, sizeof err);
    uint64_t t1 = fl_bench_now_ns();
    if (r != 0) {
        fprintf(stderr, "forkless bench heap: %s: %s\n", arm->name, err);
        return 1;
    }
    *slot = t1 - t0;
    return 0;
}

/* Measures the arms of one group (forking or not) at the current heap:
 * warm up, size each arm's sample count to the budget, then rounds in which
 * every arm runs once, in a fresh random order. */
static int run_group(const struct opts *o, const struct fl_arm *const *arms,
                     size_t narms, int forks, const struct fl_arm_target *t,
                     uint64_t *samples, struct cell_result *res)
{
    size_t rounds = o->n, got[narms], order[narms];
    memset(got, 0, sizeof got);
    for (size_t a = 0; a < narms; a++) {
        if (arms[a]->forks != forks)
            continue;
        uint64_t w[WARMUP];
        for (int k = 0; k < WARMUP; k++)
            if (time_one(arms[a], t, &w[k]) != 0)
                return 1;
        struct fl_summary ws;
        fl_summarize(w, WARMUP, &ws);
        res[a].want = rounds;
        if (o->budget_s > 0 && ws.median_us * (double)rounds > (double)o->budget_s * 1e6) {
            double fit = (double)o->budget_s * 1e6 / ws.median_us;
            size_t want = fit < MIN_SAMPLES ? MIN_SAMPLES : (size_t)fit;
            res[a].want = want < rounds ? want : rounds;
        }
    }
    uint64_t seed = 0x666f726b6c657373u + (uint64_t)forks;  /* repeatable */
    for (size_t i = 0; i < rounds; i++) {
        fl_interleave_order(order, narms, &seed);
        for (size_t k = 0; k < narms; k++) {
            size_t a = order[k];
            if (arms[a]->forks != forks || !fl_interleave_take(i, rounds, res[a].want))
                continue;
            if (time_one(arms[a], t, &samples[a * rounds + got[a]++]) != 0)
                return 1;
        }
    }
    for (size_t a = 0; a < narms; a++)
        if (arms[a]->forks == forks)
            fl_summarize(&samples[a * rounds], got[a], &res[a].s);
    return 0;
}

/* One heap size and page kind. The arms that fork run after the others, as
 * a group of their own: each fork write-protects the parent's memory, and
 * interleaved with fork_exec every other arm paid for copy-on-write faults
 * on what it wrote next (on a 2-core VM: forkless went from 1.11x to
 * 1.15-1.21x clone_vm at a 0 MiB heap, clone_vm itself 1.4-2.4x slower at
 * 1 GiB). */
static int run_cell(const struct opts *o, const struct fl_arm *const *arms,
                    size_t narms, const struct fl_arm_target *t,
                    uint64_t *samples, struct cell_result *res)
{
    if (run_group(o, arms, narms, 0, t, samples, res) != 0)
        return 1;
    return run_group(o, arms, narms, 1, t, samples, res);
}

/* The median of (arm, heap index, page index) in the table of results. */
#define RES(h, p, a) results[((h) * o.npages + (p)) * narms + (a)]

int fl_bench_heap(int argc, char **argv)
{
    struct opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;

    const struct fl_arm *arms[fl_narms];
    size_t narms;
    char err[256];
    if (fl_arms_select(o.arms, arms, &narms, err, sizeof err) != 0)
        return fl_usage_error(SUITE, "--arms: %s", err);
    size_t ref = SIZE_MAX;
    for (size_t a = 0; a < narms; a++)
        if (strcmp(arms[a]->name, FL_ARM_REFERENCE) == 0)
            ref = a;

    unsigned long max_heap = 0;
    for (size_t h = 0; h < o.nheaps; h++)
        if (o.heaps[h] > max_heap)
            max_heap = o.heaps[h];
    long avail = fl_mem_available_mib();
    if (max_heap > 0 && avail >= 0 && (long)max_heap + MEM_MARGIN_MIB > avail)
        return fl_usage_error(SUITE, "a %lu MiB heap needs %lu MiB available, "
                              "but MemAvailable is %ld MiB", max_heap,
                              max_heap + MEM_MARGIN_MIB, avail);

    char path[PATH_MAX];
    int is_tiny;
    if ((r = resolve_target(o.target, path, sizeof path, &is_tiny)) != 0)
        return r;
    char *targv[] = { path, NULL };
    struct fl_arm_target t = { path, targv };
    const char *tname = is_tiny ? "tiny" : path;

    struct fl_json j;
    if ((r = fl_json_open(&j, o.json, SUITE)) != 0) {
        fprintf(stderr, "forkless bench heap: %s: %s\n", o.json, strerror(r));
        return 1;
    }
    char machine[512];
    fl_machine_line(machine, sizeof machine);
    printf("forkless bench heap: %s\n", machine);
    printf("target %s%s%s; %lu spawn+wait per arm per heap, interleaved in random order "
           "(arms that fork in a group of their own, after the others); "
           "times in us per spawn+wait\n", tname, is_tiny ? " = " : "",
           is_tiny ? path : "", o.n);
    double load0 = fl_loadavg();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    printf("load average %.2f at start\n", load0);
    if (load0 > 0.75 * (double)cpus)
        fprintf(stderr, "forkless bench heap: warning: the machine is busy (load "
                "%.2f on %ld CPUs); other processes will add noise to the times\n",
                load0, cpus);
    fl_json_str(&j, "machine", machine);
    fl_json_num(&j, "loadavg_start", load0);
    fl_json_str(&j, "target", tname);
    fl_json_str(&j, "target_path", path);

    uint64_t *samples = calloc(narms * o.n, sizeof *samples);
    struct cell_result *results = calloc(o.nheaps * o.npages * narms, sizeof *results);
    long *huge = calloc(o.nheaps * o.npages, sizeof *huge);
    if (!samples || !results || !huge) {
        fprintf(stderr, "forkless bench heap: out of memory for %lu samples\n", o.n);
        r = 1;
        goto out;
    }

    int notes = 0;
    for (size_t h = 0; h < o.nheaps && r == 0; h++) {
        for (size_t p = 0; p < o.npages && r == 0; p++) {
            const char *pn = fl_pages_name(o.pages[p]);
            fprintf(stderr, "heap %lu MiB %s: touching...\n", o.heaps[h], pn);
            struct fl_heap heap;
            int e = fl_heap_alloc(&heap, o.heaps[h], o.pages[p]);
            if (e) {
                fprintf(stderr, "forkless bench heap: mmap %lu MiB: %s\n",
                        o.heaps[h], strerror(e));
                r = 1;
                break;
            }
            long hk = fl_anon_huge_kib();
            huge[h * o.npages + p] = hk < 0 ? -1 : hk / 1024;
            fprintf(stderr, "heap %lu MiB %s: measuring...\n", o.heaps[h], pn);
            r = run_cell(&o, arms, narms, &t, samples, &RES(h, p, 0));
            fl_heap_free(&heap);
            if (r)
                break;
            double refmed = ref == SIZE_MAX ? NAN : RES(h, p, ref).s.median_us;
            for (size_t a = 0; a < narms; a++) {
                const struct cell_result *c = &RES(h, p, a);
                double ratio = c->s.median_us / refmed;
                printf("heap %5lu MiB %-3s (AnonHuge %5ld MiB)  %-14s n %4zu  "
                       "min %8.1f  median %8.1f  max %8.1f us",
                       o.heaps[h], pn, huge[h * o.npages + p], arms[a]->name,
                       c->s.n, c->s.min_us, c->s.median_us, c->s.max_us);
                if (isfinite(ratio))
                    printf("   x%.2f %s", ratio, FL_ARM_REFERENCE);
                putchar('\n');
                notes += c->s.n < o.n;
                fl_json_row(&j);
                fl_json_str(&j, "suite", SUITE);
                fl_json_str(&j, "method", arms[a]->name);
                fl_json_int(&j, "heap_mib", (long long)o.heaps[h]);
                fl_json_str(&j, "pages", pn);
                fl_json_str(&j, "target", tname);
                fl_json_int(&j, "n", (long long)c->s.n);
                fl_json_num(&j, "min_us", c->s.min_us);
                fl_json_num(&j, "median_us", c->s.median_us);
                fl_json_num(&j, "max_us", c->s.max_us);
                fl_json_num(&j, "ratio_clone_vm", ratio);
                fl_json_int(&j, "anon_huge_mib", huge[h * o.npages + p]);
            }
            fflush(stdout);
        }
    }
    if (r == 0 && notes)
        printf("note: an arm with n < %lu would have taken over %lu s per heap; its "
               "samples are spread evenly over the run (--budget)\n", o.n, o.budget_s);
    /* Growth: each arm's median at every heap against its median at the
     * first heap of the list. */
    if (r == 0 && o.nheaps > 1) {
        for (size_t p = 0; p < o.npages; p++) {
            printf("growth against heap %lu MiB %s:", o.heaps[0], fl_pages_name(o.pages[p]));
            for (size_t a = 0; a < narms; a++) {
                printf("  %s", arms[a]->name);
                for (size_t h = 1; h < o.nheaps; h++)
                    printf(" x%.2f", RES(h, p, a).s.median_us / RES(0, p, a).s.median_us);
            }
            putchar('\n');
        }
    }
    if (r == 0)
        printf("load average %.2f at end\n", fl_loadavg());
out:
    free(samples);
    free(results);
    free(huge);
    int jr = fl_json_close(&j);
    if (jr && r == 0) {
        fprintf(stderr, "forkless bench heap: %s: %s\n", o.json, strerror(jr));
        r = 1;
    }
    return r;
}
