/* sandbox.c: the "sandbox" suite. The cost of a contained spawn at parent
 * heaps of 0, 1 and 4 GiB, in two cases (sandbox_arms.h):
 *   ns      a new user+mount+PID+network namespace, the root map, every
 *           mount private and a fresh /proc;
 *   filter  no_new_privs, a Landlock ruleset and a seccomp filter;
 * forkless against the limit (a raw clone(CLONE_VM|CLONE_VFORK) doing the
 * same setup and nothing else), fork() in C, and for ns unshare(1) and
 * bwrap. The arms are in sandbox_arms.c; they are measured as the heap
 * suite's are (fl_arms_measure: interleaved, the forking ones in a group
 * of their own, a budget per arm). At the end, a line per goal of the
 * issue: met or not. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btarget.h"
#include "cpu.h"
#include "machine.h"
#include "sandbox_arms.h"
#include "stats.h"
#include "suite.h"

#define SUITE "sandbox"
#define MAX_HEAPS 8
#define MEM_MARGIN_MIB 512   /* as heap.c: page tables, the children, the rest */
#define DEFAULT_N 300ul
#define DEFAULT_BUDGET_S 4ul
#define QUICK_N 10ul
#define QUICK_BUDGET_S 1ul
/* The goals: forkless within GOAL_LIMIT of the limit at every heap, its
 * median at the last heap within GOAL_FLAT of the first (a fall as much as
 * a rise: either is a cost that depends on the heap), and faster than
 * every other arm from GOAL_FROM_MIB up. */
#define GOAL_LIMIT 1.10
#define GOAL_FLAT 1.10
#define GOAL_FROM_MIB 1024ul

struct opts {
    unsigned long heaps[MAX_HEAPS];
    int heaps_given;   /* else the defaults: those that do not fit are left out */
    size_t nheaps;
    unsigned long n, budget_s;
    const char *target;
    int cases[FL_SB_NCASES];
    const char *json, *csv;
};

/* An arm at one heap. */
struct res {
    int ok;                  /* measured */
    char why[640];           /* why not: the arm skipped */
    struct fl_arm_cell c;
};

void fl_bench_sandbox_usage(FILE *f)
{
    fprintf(f,
        "usage: forkless bench sandbox [OPTIONS]\n\n"
        "The parent maps and touches a heap, then for each case starts the target\n"
        "with each arm, interleaved (each round runs every arm once, in a fresh\n"
        "random order; the arms that fork in a group of their own, after the\n"
        "others), and times every spawn+wait. In case filter, a spawn during which\n"
        "something else took the CPU is taken again, at most twice (retaken); in\n"
        "case ns never: the kernel's workers tear down the namespaces of earlier\n"
        "spawns during most of them, on this CPU too, a cost every arm pays. It prints\n"
        "min/median/max per arm and heap, each arm's median against the case's\n"
        "limit, then per case: forkless / limit at every heap, forkless against\n"
        "every other arm, each arm's growth from the first heap to the last, and\n"
        "a line per goal (forkless <= %.2fx the limit at every heap, flat: its\n"
        "last heap within %.2fx of its first, either way, faster than every other\n"
        "arm from %lu MiB).\n"
        "An arm that cannot run here (a program not installed, no Landlock, no\n"
        "user namespaces) is listed as skipped, with the reason.\n\n"
        "Cases:\n"
        "  ns      %s\n"
        "  filter  no_new_privs, a Landlock ruleset of %d paths (built for every spawn)\n"
        "          and a seccomp filter (built once)\n\n"
        "Options:\n"
        "  --heap LIST     the parent's resident heaps in MiB, comma separated, each\n"
        "                  at most %lu (default 0,1024,4096); a heap larger than\n"
        "                  the free memory less %d MiB is refused, of the\n"
        "                  defaults left out, saying so (--heaps is the same)\n"
        "  -n N            spawns per arm per heap (default %lu; --repeats N is the same)\n"
        "  --budget SEC    an arm whose spawns would take longer than SEC seconds per\n"
        "                  heap takes fewer samples (at least %d, evenly spread); 0:\n"
        "                  no limit (default %lu)\n"
        "  --case LIST     ns, filter or ns,filter (default)\n"
        "  --target T      tiny (default: the bench's static program that only\n"
        "                  exits), a path or a name in $PATH; it must be reachable\n"
        "                  inside the sandbox (the root stays the same)\n"
        "  --quick         -n %lu --budget %lu --heap 0,64 (each unless given)\n"
        "  --json FILE     also write the rows as JSON\n"
        "  --csv FILE      also write the rows as CSV\n"
        "  -h, --help      this text\n\n"
        "Arms:\n", GOAL_LIMIT, GOAL_FLAT, GOAL_FROM_MIB,
        "a new user+mount+PID+network namespace, uid/gid 0 inside,\n"
        "          every mount private, a fresh /proc; the target is pid 1",
        FL_SB_NRULES, FL_MAX_HEAP_MIB, MEM_MARGIN_MIB, DEFAULT_N, FL_ARM_MIN_SAMPLES,
        DEFAULT_BUDGET_S, QUICK_N, QUICK_BUDGET_S);
    for (size_t a = 0; a < fl_sb_narms; a++)
        fprintf(f, "  %-6s %-12s %s\n", fl_sb_case_names[fl_sb_arms[a].kase],
                fl_sb_arms[a].arm.name, fl_sb_arms[a].arm.what);
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .heaps = { 0, 1024, 4096 }, .nheaps = 3, .n = DEFAULT_N,
                        .budget_s = DEFAULT_BUDGET_S, .target = "tiny", .cases = { 1, 1 } };
    if (fl_opt_quick(argc, argv)) {
        o->n = QUICK_N;
        o->budget_s = QUICK_BUDGET_S;
        o->heaps[1] = 64, o->nheaps = 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m, n;
        if ((m = fl_opt_common(SUITE, argc, argv, &i, fl_bench_sandbox_usage, &o->csv, &o->json))) {
            if (m != 1)
                return m < 0 ? 2 : 0;
            continue;
        }
        if ((m = fl_opt_value(SUITE, argc, argv, &i, "--heap", &v)) ||
            (m = fl_opt_value(SUITE, argc, argv, &i, "--heaps", &v))) {
            if (m < 0)
                return 2;
            if (fl_opt_heaps(SUITE, v, o->heaps, MAX_HEAPS, &o->nheaps) != 0)
                return 2;
            o->heaps_given = 1;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--case", &v))) {
            if (m < 0)
                return 2;
            char buf[64];
            const char *names[FL_SB_NCASES + 1];
            if (strlen(v) >= sizeof buf ||
                (n = fl_parse_name_list(strcpy(buf, v), names, FL_SB_NCASES + 1)) < 0)
                n = -1;
            memset(o->cases, 0, sizeof o->cases);
            for (int k = 0; k < n; k++) {
                int c = 0;
                while (c < FL_SB_NCASES && strcmp(names[k], fl_sb_case_names[c]) != 0)
                    c++;
                if (c == FL_SB_NCASES || o->cases[c])
                    n = -1;
                else
                    o->cases[c] = 1;
            }
            if (n < 0)
                return fl_usage_error(SUITE, "--case wants ns, filter or ns,filter, not "
                                      "\"%s\"", v);
        } else if ((m = fl_opt_target(SUITE, argc, argv, &i, &o->target)) ||
                   (m = fl_opt_ulong(SUITE, argc, argv, &i, "-n", 1, 1000000, &o->n)) ||
                   (m = fl_opt_ulong(SUITE, argc, argv, &i, "--repeats", 1, 1000000, &o->n)) ||
                   (m = fl_opt_ulong(SUITE, argc, argv, &i, "--budget", 0, 86400,
                                     &o->budget_s))) {
            if (m < 0)
                return 2;
        } else {
            return fl_usage_error(SUITE, "unknown option \"%s\"", a);
        }
    }
    return -1;   /* go on */
}

/* The arm of case k with the given role (limit or forkless), or SIZE_MAX. */
static size_t role(enum fl_sb_case k, int limit)
{
    for (size_t a = 0; a < fl_sb_narms; a++)
        if (fl_sb_arms[a].kase == k && (limit ? fl_sb_arms[a].limit : fl_sb_arms[a].forkless))
            return a;
    return SIZE_MAX;
}

/* arm a's median over arm b's at heap h; NaN unless both were measured. */
static double ratio(struct res *const *res, size_t h, size_t a, size_t b)
{
    if (a == SIZE_MAX || b == SIZE_MAX || !res[h][a].ok || !res[h][b].ok)
        return NAN;
    return res[h][a].c.s.median_us / res[h][b].c.s.median_us;
}

/* " x1.23", or " not measured" for a ratio with an arm that did not run. */
static void put_ratio(double x, int decimals)
{
    if (isfinite(x))
        printf(" x%.*f", decimals, x);
    else
        printf(" not measured");
}

/* Every usable arm of every case at the current heap. */
static int measure_heap(const struct opts *o, const struct fl_arm_target *t,
                        const int *usable, uint64_t *samples, struct res *row)
{
    for (int k = 0; k < FL_SB_NCASES; k++) {
        if (!o->cases[k])
            continue;
        const struct fl_arm *arms[fl_sb_narms];
        size_t idx[fl_sb_narms], m = 0;
        for (size_t a = 0; a < fl_sb_narms; a++)
            if (fl_sb_arms[a].kase == (enum fl_sb_case)k && usable[a]) {
                idx[m] = a;
                arms[m++] = &fl_sb_arms[a].arm;
            }
        struct fl_arm_cell cells[fl_sb_narms];
        memset(cells, 0, sizeof cells);
        fprintf(stderr, "sandbox: %s: %zu arms...\n", fl_sb_case_names[k], m);
        struct fl_arms_run run = { SUITE, t, o->n, o->budget_s,
                                   k == FL_SB_NS ? 0 : FL_RETAKES };
        if (m && fl_arms_measure(&run, arms, m, samples, cells) != 0)
            return 1;
        for (size_t j = 0; j < m; j++) {
            row[idx[j]].ok = 1;
            row[idx[j]].c = cells[j];
        }
    }
    return 0;
}

static void print_heap(const struct opts *o, size_t h, struct res *const *res)
{
    for (int k = 0; k < FL_SB_NCASES; k++) {
        if (!o->cases[k])
            continue;
        size_t lim = role((enum fl_sb_case)k, 1);
        for (size_t a = 0; a < fl_sb_narms; a++) {
            if (fl_sb_arms[a].kase != (enum fl_sb_case)k)
                continue;
            const struct res *r = &res[h][a];
            printf("sandbox %-6s heap %5lu MiB  %-12s ", fl_sb_case_names[k], o->heaps[h],
                   fl_sb_arms[a].arm.name);
            if (!r->ok) {
                printf("skipped: %s\n", r->why);
                continue;
            }
            printf("n %4zu  min %8.1f  median %8.1f  max %8.1f us  retaken %3zu", r->c.s.n,
                   r->c.s.min_us, r->c.s.median_us, r->c.s.max_us, r->c.rt.retaken);
            if (r->c.rt.disturbed)
                printf(" (%zu kept disturbed)", r->c.rt.disturbed);
            double x = ratio(res, h, a, lim);
            if (isfinite(x))
                printf("   x%.2f limit", x);
            putchar('\n');
        }
    }
}

static void write_rows(struct fl_rows *j, const struct opts *o, struct res *const *res,
                       const char *tname, const double *others)
{
    for (size_t h = 0; h < o->nheaps; h++)
        for (size_t a = 0; a < fl_sb_narms; a++) {
            enum fl_sb_case k = fl_sb_arms[a].kase;
            if (!o->cases[k])
                continue;
            const struct res *r = &res[h][a];
            fl_rows_begin(j);
            fl_rows_str(j, "method", fl_sb_arms[a].arm.name);
            fl_rows_str(j, "case", fl_sb_case_names[k]);
            fl_rows_int(j, "heap_mib", (long long)o->heaps[h]);
            fl_rows_str(j, "target", tname);
            fl_rows_str(j, "status", r->ok ? "ok" : "skipped");
            fl_rows_str(j, "reason", r->ok ? "" : r->why);
            fl_rows_int(j, "n", r->ok ? (long long)r->c.s.n : 0);
            fl_rows_num(j, "min_us", r->ok ? r->c.s.min_us : NAN);
            fl_rows_num(j, "median_us", r->ok ? r->c.s.median_us : NAN);
            fl_rows_num(j, "max_us", r->ok ? r->c.s.max_us : NAN);
            fl_rows_num(j, "ratio_limit", ratio(res, h, a, role(k, 1)));
            fl_rows_num(j, "ratio_forkless", ratio(res, h, a, role(k, 0)));
            fl_rows_int(j, "retaken", (long long)r->c.rt.retaken);
            fl_rows_int(j, "disturbed", (long long)r->c.rt.disturbed);
            fl_rows_num(j, "others_pct", others[h]);
            fl_rows_end(j);
        }
}

static const char *met(int ok)
{
    return ok ? "met" : "NOT met";
}

/* Per case: the ratios the goals name, then a line per goal. */
static void print_goals(const struct opts *o, struct res *const *res)
{
    for (int k = 0; k < FL_SB_NCASES; k++) {
        if (!o->cases[k])
            continue;
        const char *cn = fl_sb_case_names[k];
        size_t fl = role((enum fl_sb_case)k, 0), lim = role((enum fl_sb_case)k, 1);
        printf("%s: forkless / limit:", cn);
        double worst = NAN;
        size_t worst_h = 0;
        int all = 1;
        for (size_t h = 0; h < o->nheaps; h++) {
            double x = ratio(res, h, fl, lim);
            printf("  %lu MiB", o->heaps[h]);
            put_ratio(x, 2);
            all &= isfinite(x);
            if (isfinite(x) && !(x <= worst))
                worst = x, worst_h = h;
        }
        putchar('\n');
        printf("%s: forkless / other arm (under 1: forkless is faster):", cn);
        double slowest = NAN;
        size_t slow_h = 0, slow_a = 0, others = 0;
        for (size_t h = 0; h < o->nheaps; h++) {
            printf("  %lu MiB", o->heaps[h]);
            for (size_t a = 0; a < fl_sb_narms; a++) {
                if (fl_sb_arms[a].kase != (enum fl_sb_case)k || a == fl || a == lim)
                    continue;
                double x = ratio(res, h, fl, a);
                printf(" %s", fl_sb_arms[a].arm.name);
                put_ratio(x, fl_ratio_decimals(x));
                if (o->heaps[h] < GOAL_FROM_MIB || !isfinite(x))
                    continue;
                others++;
                if (!(x <= slowest))
                    slowest = x, slow_h = h, slow_a = a;
            }
        }
        putchar('\n');
        size_t last = o->nheaps - 1;
        if (o->nheaps > 1) {
            printf("%s: growth from %lu to %lu MiB:", cn, o->heaps[0], o->heaps[last]);
            for (size_t a = 0; a < fl_sb_narms; a++)
                if (fl_sb_arms[a].kase == (enum fl_sb_case)k) {
                    printf(" %s", fl_sb_arms[a].arm.name);
                    put_ratio(res[last][a].ok && res[0][a].ok ? res[last][a].c.s.median_us /
                              res[0][a].c.s.median_us : NAN, 2);
                }
            putchar('\n');
        }
        printf("goal: %s: forkless <= %.2fx the limit at every heap: ", cn, GOAL_LIMIT);
        if (!all)
            printf("not measured at every heap\n");
        else
            printf("worst x%.2f at %lu MiB: %s\n", worst, o->heaps[worst_h],
                   met(worst <= GOAL_LIMIT));
        double flat = o->nheaps > 1 && res[0][fl].ok && res[last][fl].ok
                          ? res[last][fl].c.s.median_us / res[0][fl].c.s.median_us : NAN;
        printf("goal: %s: forkless flat from %lu to %lu MiB (x%.2f to x%.2f): ", cn,
               o->heaps[0], o->heaps[last], 1 / GOAL_FLAT, GOAL_FLAT);
        if (!isfinite(flat))
            printf("not measured (needs two heaps)\n");
        else
            printf("x%.2f: %s\n", flat, met(flat <= GOAL_FLAT && flat >= 1 / GOAL_FLAT));
        printf("goal: %s: forkless faster than every other arm from %lu MiB: ", cn,
               GOAL_FROM_MIB);
        if (!others)
            printf("not measured (no other arm, or no heap that large)\n");
        else
            printf("slowest x%.*f %s at %lu MiB: %s\n", fl_ratio_decimals(slowest), slowest,
                   fl_sb_arms[slow_a].arm.name, o->heaps[slow_h], met(slowest < 1.0));
    }
}

int fl_bench_sandbox(int argc, char **argv)
{
    struct opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;
    if (!o.heaps_given)
        fl_mem_fit_defaults(SUITE, "--heap", o.heaps, &o.nheaps, 1, MEM_MARGIN_MIB);
    if ((r = fl_mem_check(SUITE, "--heap", o.heaps, o.nheaps, 1, MEM_MARGIN_MIB)) != 0)
        return r;
    char path[PATH_MAX], err[512];
    int is_tiny;
    if ((r = fl_bench_target(SUITE, o.target, path, sizeof path, &is_tiny)) != 0)
        return r;
    const char *tname = is_tiny ? "tiny" : path;
    char *targv[] = { path, NULL };
    struct fl_arm_target t = { path, targv };
    if (fl_sb_setup(path, err, sizeof err) != 0) {
        fprintf(stderr, "forkless bench sandbox: %s\n", err);
        return 1;
    }

    struct fl_rows j;
    memset(&j, 0, sizeof j);
    uint64_t *samples = calloc(fl_sb_narms * o.n, sizeof *samples);
    struct res *res[MAX_HEAPS];
    double others[MAX_HEAPS];
    int usable[fl_sb_narms];
    char why[fl_sb_narms][640];
    int oom = !samples;
    memset(res, 0, sizeof res);
    for (size_t h = 0; h < o.nheaps; h++)
        oom |= !(res[h] = calloc(fl_sb_narms, sizeof *res[h]));
    if (oom) {
        fprintf(stderr, "forkless bench sandbox: out of memory\n");
        r = 1;
        goto out;
    }
    if ((r = fl_rows_open(&j, SUITE, o.json, o.csv)) != 0) {
        fl_rows_error(SUITE, "opening", o.json, o.csv, r);
        r = fl_rows_exit(r);
        goto out;
    }
    char machine[512];
    fl_machine_line(machine, sizeof machine);
    printf("forkless bench sandbox: %s\n", machine);
    printf("target %s%s%s, run as uid %u; %lu spawn+wait per arm per heap (budget %lu s "
           "per arm), interleaved in random order (arms that fork in a group of their "
           "own, after the others); times in us per spawn+wait\n", tname,
           is_tiny ? " = " : "", is_tiny ? path : "", (unsigned)geteuid(), o.n, o.budget_s);
    fl_rows_start(&j, SUITE, machine, fl_loadavg());
    fl_rows_meta_str(&j, "target", tname);
    fl_rows_meta_int(&j, "uid", (long long)geteuid());
    for (int k = 0; k < FL_SB_NCASES; k++)
        if (o.cases[k])
            printf("case %s: %s%s\n", fl_sb_case_names[k], fl_sb_case_what((enum fl_sb_case)k),
                   k == FL_SB_NS ? "\n(never taken again when disturbed: the kernel's "
                   "workers tear down earlier spawns' namespaces\nduring most spawns, on "
                   "this CPU too, a cost that every arm pays)" : "");
    for (size_t a = 0; a < fl_sb_narms; a++) {
        usable[a] = o.cases[fl_sb_arms[a].kase] &&
                    fl_sb_usable(&fl_sb_arms[a], &t, why[a], sizeof why[a]);
        if (o.cases[fl_sb_arms[a].kase] && !usable[a])
            printf("note: %s %s skipped: %s\n", fl_sb_case_names[fl_sb_arms[a].kase],
                   fl_sb_arms[a].arm.name, why[a]);
    }
    /* Some arms may be missing here (no bwrap, no user namespaces for
     * another user); with no forkless arm left there is nothing to show. */
    int forkless_runs = 0;
    for (int k = 0; k < FL_SB_NCASES; k++) {
        size_t fl = role((enum fl_sb_case)k, 0);
        forkless_runs |= o.cases[k] && fl != SIZE_MAX && usable[fl];
    }
    if (!forkless_runs) {
        fflush(stdout);  /* the notes first */
        fprintf(stderr, "forkless bench sandbox: no forkless arm can run here (see the notes "
                "above): nothing to measure\n");
        r = 1;
        goto out;
    }
    fflush(stdout);
    for (size_t h = 0; h < o.nheaps && r == 0; h++) {
        others[h] = NAN;
        for (size_t a = 0; a < fl_sb_narms; a++)
            snprintf(res[h][a].why, sizeof res[h][a].why, "%s", why[a]);
        fprintf(stderr, "sandbox: heap %lu MiB: touching...\n", o.heaps[h]);
        struct fl_heap heap;
        int e = fl_heap_alloc(&heap, o.heaps[h], FL_PAGES_4K);
        if (e) {
            fprintf(stderr, "forkless bench sandbox: mmap %lu MiB: %s\n", o.heaps[h],
                    strerror(e));
            r = 1;
            break;
        }
        struct fl_cpu_watch watch;
        struct fl_cpu_share share;
        fl_cpu_watch_start(&watch);
        r = measure_heap(&o, &t, usable, samples, res[h]);
        fl_cpu_watch_stop(&watch, &share);
        fl_heap_free(&heap);
        if (r)
            break;
        others[h] = share.others_pct;
        print_heap(&o, h, res);
        char set[64];
        fl_cpu_set_name(&watch, set, sizeof set);
        printf("heap %5lu MiB: %.2f s; others took %.1f%% of %s (steal seen %.1f%%)%s\n",
               o.heaps[h], share.seconds, share.others_pct, set, share.steal_pct,
               share.others_pct > FL_CPU_BUSY_PCT ? " (busy: rerun when the machine is "
                                                    "quieter)" : "");
        fflush(stdout);
    }
    if (r == 0) {
        print_goals(&o, res);
        write_rows(&j, &o, res, tname, others);
        printf("load average %.2f at end\n", fl_loadavg());
    }
out:
    free(samples);
    for (size_t h = 0; h < o.nheaps; h++)
        free(res[h]);
    fl_sb_teardown();
    int jr = fl_rows_close(&j);
    if (jr && r == 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, jr);
        r = 1;
    }
    return r;
}
