/* heap.c: the "heap" suite. The parent holds a resident heap of 0, 1 and
 * 4 GiB and starts the same program with each arm, interleaved, timing
 * every spawn+wait. fork's cost grows with the heap; the others stay flat.
 * Each arm's median is reported against clone_vm, the physical limit, at
 * the same heap, and a forkless arm's also against the raw arm that does
 * its work by hand (clone_vm_clean, clone_vm_full): what the library
 * itself adds. */
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
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arms.h"
#include "btarget.h"
#include "cpu.h"
#include "machine.h"
#include "stats.h"
#include "suite.h"

#define SUITE "heap"
#define MAX_HEAPS 16
/* 2000 rounds keep the arms that do not fork busy for about a second per
 * heap: a slowdown of the whole machine for a tenth of a second (seen on a
 * shared VM: steal, other guests) then moves no median, where with 200 it
 * covered most of a 0.15 s cell. */
#define DEFAULT_N 2000
#define DEFAULT_BUDGET_S 10
#define MEM_MARGIN_MIB 512  /* room for page tables, the child, the rest */
#define MAX_RESERVE_GIB 65536
#define QUICK_N 20
#define QUICK_BUDGET_S 2

struct opts {
    unsigned long heaps[MAX_HEAPS];
    int heaps_given;   /* else the defaults: those that do not fit are left out */
    size_t nheaps;
    enum fl_pages pages[2];
    size_t npages;
    const char *target;
    unsigned long n;
    unsigned long budget_s;
    const char *arms;
    const char *json;
    const char *csv;
    unsigned long reserve_gib;
    int overcommit_demo;
};

void fl_bench_heap_usage(FILE *f)
{
    fprintf(f,
        "usage: forkless bench heap [OPTIONS]\n\n"
        "The parent maps and touches a heap, then starts TARGET with each arm,\n"
        "interleaved (each round runs every arm once, in a fresh random order),\n"
        "and times every spawn+wait (CLOCK_MONOTONIC). A spawn during which\n"
        "something else took the CPU (its time less the CPU time of the bench\n"
        "and the child, over 20 us and 1%%) is taken again, at most twice; each\n"
        "row says how many were (retaken). It prints min/median/max per spawn,\n"
        "each arm's median against clone_vm, and after each heap how much of the\n"
        "CPU others (tasks, interrupts, steal) took meanwhile. The arms that fork\n"
        "run after the others, interleaved among themselves: a fork makes the\n"
        "parent's memory copy-on-write, which would slow whatever runs next.\n\n"
        "Options:\n"
        "  --heap LIST     heap sizes in MiB, comma separated, each at most 65536\n"
        "                  (64 GiB) (default 0,1024,4096); a heap larger than the\n"
        "                  free memory (MemAvailable, or the room left in this\n"
        "                  process's cgroup where less) less a %d MiB margin is\n"
        "                  refused; of the defaults it is left out, saying so\n"
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
        "  --reserve GIB   before measuring, map GIB GiB of PROT_NONE address space\n"
        "                  (MAP_NORESERVE, never touched) and keep it mapped: shows\n"
        "                  that reserved but unused address space costs the arms\n"
        "                  nothing measurable (column reserve_gib; default 0)\n"
        "  --quick         small counts: -n %d, --budget %d, --heap 0,256 (each\n"
        "                  unless given); what `forkless bench all` passes\n"
        "  --json FILE     also write the rows as JSON\n"
        "  --csv FILE      also write the rows as CSV: a header line, then one line\n"
        "                  per arm and heap, the same fields as the JSON rows\n"
        "  --overcommit-demo\n"
        "                  root only, and runs only this demo: sets\n"
        "                  vm.overcommit_memory=2 for a moment (the old value is\n"
        "                  restored afterwards, also on SIGINT/SIGTERM), maps a\n"
        "                  writable heap larger than half of what the commit limit\n"
        "                  has left, then starts TARGET once with fork_exec (the\n"
        "                  fork must commit a copy of the heap: ENOMEM) and once\n"
        "                  with forkless (commits no copy: ok)\n"
        "  -h, --help      this text\n\n"
        "Arms:\n",
        MEM_MARGIN_MIB, DEFAULT_N, FL_ARM_MIN_SAMPLES, DEFAULT_BUDGET_S, QUICK_N,
        QUICK_BUDGET_S);
    fl_arms_list(f);
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .heaps = { 0, 1024, 4096 }, .nheaps = 3,
                        .pages = { FL_PAGES_4K }, .npages = 1,
                        .target = "/bin/true", .n = DEFAULT_N,
                        .budget_s = DEFAULT_BUDGET_S };
    if (fl_opt_quick(argc, argv)) {
        o->n = QUICK_N;
        o->budget_s = QUICK_BUDGET_S;
        o->heaps[0] = 0, o->heaps[1] = 256, o->nheaps = 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        if ((m = fl_opt_common(SUITE, argc, argv, &i, fl_bench_heap_usage, &o->csv, &o->json))) {
            if (m != 1)
                return m < 0 ? 2 : 0;
            continue;
        }
        if ((m = fl_opt_value(SUITE, argc, argv, &i, "--heap", &v))) {
            if (m < 0)
                return 2;
            if (fl_opt_heaps(SUITE, v, o->heaps, MAX_HEAPS, &o->nheaps) != 0)
                return 2;
            o->heaps_given = 1;
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
        } else if ((m = fl_opt_target(SUITE, argc, argv, &i, &o->target))) {
            if (m < 0)
                return 2;
        } else if ((m = fl_opt_ulong(SUITE, argc, argv, &i, "-n", 1, 10000000,
                                     &o->n))) {
            if (m < 0)
                return 2;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--budget", &v))) {
            if (m < 0)
                return 2;
            if (fl_parse_ulong(v, 0, 86400, &o->budget_s) != 0)
                return fl_usage_error(SUITE, "--budget wants seconds (0 to 86400), "
                                      "not \"%s\"", v);
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--reserve", &v))) {
            if (m < 0)
                return 2;
            if (fl_parse_ulong(v, 0, MAX_RESERVE_GIB, &o->reserve_gib) != 0)
                return fl_usage_error(SUITE, "--reserve wants GiB (0 to %d), not "
                                      "\"%s\"", MAX_RESERVE_GIB, v);
        } else if (strcmp(a, "--overcommit-demo") == 0) {
            o->overcommit_demo = 1;
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

/* ---- --overcommit-demo ---------------------------------------------------- */

#define OVERCOMMIT_FILE "/proc/sys/vm/overcommit_memory"

/* The value to put back, formatted beforehand so that the signal handler
 * only calls open/write/close; oc_pid: only the process that changed it
 * restores it (never a forked child running atexit). */
static char oc_old[32];
static size_t oc_old_len;
static volatile sig_atomic_t oc_changed;
static pid_t oc_pid;

static int oc_write(const char *val, size_t len)
{
    int fd = open(OVERCOMMIT_FILE, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    ssize_t w = write(fd, val, len);
    int e = w == (ssize_t)len ? 0 : (w < 0 ? errno : EIO);
    close(fd);
    return e;
}

/* Async-signal-safe. */
static int oc_restore(void)
{
    if (!oc_changed || getpid() != oc_pid)
        return 0;
    int e = oc_write(oc_old, oc_old_len);
    if (e == 0)
        oc_changed = 0;
    return e;
}

static void oc_atexit(void)
{
    if (oc_restore() != 0) {
        static const char m[] = "forkless bench heap: could not restore "
                                OVERCOMMIT_FILE "\n";
        ssize_t w = write(2, m, sizeof m - 1);
        (void)w;
    }
}

static void oc_signal(int sig)
{
    oc_atexit();
    signal(sig, SIG_DFL);
    raise(sig);
}

static const char *oc_result(int rc, const char *err, char *buf, size_t size)
{
    if (rc == 0)
        return "ok";
    if (strstr(err, strerror(ENOMEM)))
        snprintf(buf, size, "ENOMEM (%s)", err);
    else
        snprintf(buf, size, "failed (%s)", err);
    return buf;
}

/* Under vm.overcommit_memory=2 every private writable mapping is charged
 * against CommitLimit when it is mapped, whether touched or not, and a fork
 * charges the child for a copy of all of them. A heap H with
 * Committed_AS + H <= CommitLimit < Committed_AS + 2H can be mapped but not
 * forked; a forkless child shares the parent's memory and is charged
 * nothing for it. H = 2/3 of what is left keeps a third of it as margin on
 * both sides, for the rest of the system moving meanwhile. The heap is not
 * touched: the charge does not depend on it, and the demo stays short. */
static int overcommit_demo(const struct fl_arm_target *t, const char *tname)
{
    if (geteuid() != 0) {
        fprintf(stderr, "forkless bench heap: --overcommit-demo needs root: it "
                "writes " OVERCOMMIT_FILE " (run it as root, or leave it out)\n");
        return 2;
    }
    const struct fl_arm *fork_arm = fl_arm_find("fork_exec");
    const struct fl_arm *fl_arm = fl_arm_find("forkless");
    if (!fork_arm || !fl_arm) {
        fprintf(stderr, "forkless bench heap: the fork_exec and forkless arms are "
                "missing\n");
        return 1;
    }
    long old = fl_read_long_file(OVERCOMMIT_FILE);
    long ratio = fl_read_long_file("/proc/sys/vm/overcommit_ratio");
    if (old < 0) {
        fprintf(stderr, "forkless bench heap: cannot read " OVERCOMMIT_FILE "\n");
        return 1;
    }
    snprintf(oc_old, sizeof oc_old, "%ld\n", old);
    oc_old_len = strlen(oc_old);
    oc_pid = getpid();
    atexit(oc_atexit);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = oc_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
    struct sigaction saved[4];
    /* A signal ignored by whoever started us (nohup's SIGHUP) stays so. */
    for (size_t k = 0; k < 4; k++)
        if (sigaction(sigs[k], NULL, &saved[k]) == 0 && saved[k].sa_handler == SIG_DFL)
            sigaction(sigs[k], &sa, NULL);

    printf("forkless bench heap --overcommit-demo: target %s\n", tname);
    printf("vm.overcommit_memory was %ld, vm.overcommit_ratio is %ld; setting "
           "vm.overcommit_memory=2 (strict commit accounting) for the demo\n",
           old, ratio);
    fflush(stdout);
    int r = 0, e;
    oc_changed = 1;
    if ((e = oc_write("2\n", 2)) != 0) {
        oc_changed = 0;
        fprintf(stderr, "forkless bench heap: writing 2 to " OVERCOMMIT_FILE ": %s\n",
                strerror(e));
        r = 1;
        goto out;
    }
    long limit = fl_meminfo_mib("CommitLimit");
    long committed = fl_meminfo_mib("Committed_AS");
    if (limit < 0 || committed < 0 || limit - committed < 64) {
        fprintf(stderr, "forkless bench heap: CommitLimit %ld MiB, Committed_AS "
                "%ld MiB: no room for a demo heap\n", limit, committed);
        r = 1;
        goto out;
    }
    long left = limit - committed;
    long heap_mib = left * 2 / 3;
    printf("CommitLimit %ld MiB, Committed_AS %ld MiB: %ld MiB left to commit\n",
           limit, committed, left);
    printf("heap %ld MiB (2/3 of it, untouched): fits once (%ld <= %ld MiB) but "
           "not twice, as a fork needs (%ld > %ld MiB)\n", heap_mib,
           committed + heap_mib, limit, committed + 2 * heap_mib, limit);
    size_t bytes = (size_t)heap_mib << 20;
    void *heap = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (heap == MAP_FAILED) {
        fprintf(stderr, "forkless bench heap: mmap %ld MiB: %s (the system "
                "committed more meanwhile?)\n", heap_mib, strerror(errno));
        r = 1;
        goto out;
    }
    char err1[512] = "", err2[512] = "", b1[640], b2[640];
    int r1 = fork_arm->run(t, err1, sizeof err1);
    int r2 = fl_arm->run(t, err2, sizeof err2);
    munmap(heap, bytes);
    printf("fork_exec: %s\n", oc_result(r1, err1, b1, sizeof b1));
    printf("forkless: %s\n", oc_result(r2, err2, b2, sizeof b2));
    if (r2 != 0)
        r = 1;
    if (r1 == 0)
        printf("note: fork_exec succeeded: the commit limit moved meanwhile?\n");
out:
    if ((e = oc_restore()) != 0) {
        fprintf(stderr, "forkless bench heap: restoring vm.overcommit_memory=%ld: "
                "%s; restore it by hand: sysctl vm.overcommit_memory=%ld\n",
                old, strerror(e), old);
        r = 1;
    } else {
        printf("vm.overcommit_memory restored to %ld\n",
               fl_read_long_file(OVERCOMMIT_FILE));
    }
    for (size_t k = 0; k < 4; k++)
        sigaction(sigs[k], &saved[k], NULL);
    return r;
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
    size_t ref;
    if ((r = fl_arms_select(SUITE, o.arms, arms, &narms, FL_ARM_REFERENCE, &ref)) != 0)
        return r;

    if (!o.overcommit_demo && !o.heaps_given)
        fl_mem_fit_defaults(SUITE, "--heap", o.heaps, &o.nheaps, 1, MEM_MARGIN_MIB);
    if (!o.overcommit_demo &&
        (r = fl_mem_check(SUITE, "--heap", o.heaps, o.nheaps, 1, MEM_MARGIN_MIB)) != 0)
        return r;

    char path[PATH_MAX];
    int is_tiny;
    if ((r = fl_bench_target(SUITE, o.target, path, sizeof path, &is_tiny)) != 0)
        return r;
    char *targv[] = { path, NULL };
    struct fl_arm_target t = { path, targv };
    const char *tname = is_tiny ? "tiny" : path;

    if (o.overcommit_demo)
        return overcommit_demo(&t, tname);

    struct fl_rows j;
    if ((r = fl_rows_open(&j, SUITE, o.json, o.csv)) != 0) {
        fl_rows_error(SUITE, "opening", o.json, o.csv, r);
        return fl_rows_exit(r);
    }
    struct fl_reserve resv;
    if ((r = fl_reserve_map(&resv, o.reserve_gib)) != 0) {
        fprintf(stderr, "forkless bench heap: --reserve %lu: mmap of %lu GiB "
                "PROT_NONE, MAP_NORESERVE: %s\n", o.reserve_gib, o.reserve_gib,
                strerror(r));
        fl_rows_close(&j);
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
    if (o.reserve_gib)
        printf("reserved %lu GiB of address space (PROT_NONE, MAP_NORESERVE, never "
               "touched) at %p, mapped for the whole run\n", o.reserve_gib, resv.base);
    fl_rows_start(&j, SUITE, machine, load0);
    fl_rows_meta_str(&j, "target", tname);
    fl_rows_meta_str(&j, "target_path", path);
    fl_rows_meta_int(&j, "reserve_gib", (long long)o.reserve_gib);

    uint64_t *samples = calloc(narms * o.n, sizeof *samples);
    struct fl_arm_cell *results = calloc(o.nheaps * o.npages * narms, sizeof *results);
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
                fprintf(stderr, "forkless bench heap: mmap %lu MiB: %s "
                        "(vm.overcommit_memory %ld, CommitLimit %ld MiB, "
                        "Committed_AS %ld MiB, MemAvailable %ld MiB)\n",
                        o.heaps[h], strerror(e),
                        fl_read_long_file("/proc/sys/vm/overcommit_memory"),
                        fl_meminfo_mib("CommitLimit"), fl_meminfo_mib("Committed_AS"),
                        fl_mem_available_mib());
                r = 1;
                break;
            }
            long hk = fl_anon_huge_kib();
            huge[h * o.npages + p] = hk < 0 ? -1 : hk / 1024;
            fprintf(stderr, "heap %lu MiB %s: measuring...\n", o.heaps[h], pn);
            struct fl_cpu_watch watch;
            struct fl_cpu_share share;
            fl_cpu_watch_start(&watch);
            struct fl_arms_run run = { SUITE, &t, o.n, o.budget_s, FL_RETAKES };
            r = fl_arms_measure(&run, arms, narms, samples, &RES(h, p, 0));
            fl_cpu_watch_stop(&watch, &share);
            fl_heap_free(&heap);
            if (r)
                break;
            double refmed = ref == SIZE_MAX ? NAN : RES(h, p, ref).s.median_us;
            for (size_t a = 0; a < narms; a++) {
                const struct fl_arm_cell *c = &RES(h, p, a);
                double ratio = c->s.median_us / refmed;
                printf("heap %5lu MiB %-3s (AnonHuge %5ld MiB)  %-14s n %4zu  "
                       "min %8.1f  median %8.1f  max %8.1f us  retaken %3zu",
                       o.heaps[h], pn, huge[h * o.npages + p], arms[a]->name,
                       c->s.n, c->s.min_us, c->s.median_us, c->s.max_us, c->rt.retaken);
                if (c->rt.disturbed)
                    printf(" (%zu kept disturbed)", c->rt.disturbed);
                if (isfinite(ratio))
                    printf("   x%.2f %s", ratio, FL_ARM_REFERENCE);
                /* A forkless arm against the raw arm that does its work by hand. */
                size_t lim = SIZE_MAX;
                for (size_t l = 0; arms[a]->limit && l < narms; l++)
                    if (strcmp(arms[l]->name, arms[a]->limit) == 0)
                        lim = l;
                double ratio_limit = lim == SIZE_MAX ? NAN
                                                     : c->s.median_us / RES(h, p, lim).s.median_us;
                if (lim != SIZE_MAX)
                    printf("   x%.2f %s", ratio_limit, arms[lim]->name);
                putchar('\n');
                notes += c->s.n < o.n;
                fl_rows_begin(&j);
                fl_rows_str(&j, "method", arms[a]->name);
                fl_rows_int(&j, "heap_mib", (long long)o.heaps[h]);
                fl_rows_str(&j, "pages", pn);
                fl_rows_int(&j, "reserve_gib", (long long)o.reserve_gib);
                fl_rows_str(&j, "target", tname);
                fl_rows_int(&j, "n", (long long)c->s.n);
                fl_rows_num(&j, "min_us", c->s.min_us);
                fl_rows_num(&j, "median_us", c->s.median_us);
                fl_rows_num(&j, "max_us", c->s.max_us);
                fl_rows_num(&j, "ratio_clone_vm", ratio);
                fl_rows_str(&j, "limit", lim == SIZE_MAX ? NULL : arms[lim]->name);
                fl_rows_num(&j, "ratio_limit", ratio_limit);
                fl_rows_int(&j, "anon_huge_mib", huge[h * o.npages + p]);
                fl_rows_int(&j, "retaken", (long long)c->rt.retaken);
                fl_rows_int(&j, "disturbed", (long long)c->rt.disturbed);
                fl_rows_num(&j, "others_pct", share.others_pct);
                fl_rows_num(&j, "steal_pct", share.steal_pct);
                fl_rows_end(&j);
            }
            char set[64];
            fl_cpu_set_name(&watch, set, sizeof set);
            printf("cell  %5lu MiB %-3s  %.2f s; others took %.1f%% of %s (steal seen "
                   "%.1f%%)%s\n", o.heaps[h], pn, share.seconds, share.others_pct, set,
                   share.steal_pct, share.others_pct > FL_CPU_BUSY_PCT
                       ? " (busy: rerun when the machine is quieter)" : "");
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
    fl_reserve_unmap(&resv);
    int jr = fl_rows_close(&j);
    if (jr && r == 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, jr);
        r = 1;
    }
    return r;
}
