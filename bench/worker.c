/* worker.c: the "worker" suite. A parent with a resident heap hands records
 * to a worker through a shared-memory ring and dirties one page of its heap
 * per cycle while it produces. The worker is a thread, a fork() child that
 * keeps running in the inherited memory, or the fl-worker program started
 * with fork+exec, posix_spawn or forkless. A fork leaves the parent's heap
 * write-protected, so every page it dirties afterwards faults (and, while
 * the forked child still holds the old page, is copied); a spawn that never
 * forks leaves the heap alone. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arms.h"
#include "forkless.h"
#include "helpers.h"
#include "machine.h"
#include "ring.h"
#include "stats.h"
#include "suite.h"

#define SUITE "worker"
#define DEFAULT_HEAP_MIB 256
#define DEFAULT_RECORDS 35800000ul
#define DEFAULT_ROUNDS 3
#define CYCLE_NO_HEAP 512    /* records per cycle without a heap */
#define RING_SLOTS (1u << 16)     /* 1 MiB of records */
#define PAGE 4096u
#define MEM_MARGIN_MIB 256
#define WORKER_FD 3
/* --quick: 8192 cycles of 512 records dirty all 8192 pages of 32 MiB */
#define QUICK_HEAP_MIB 32
#define QUICK_RECORDS 4194304ul
#define QUICK_ROUNDS 1

extern char **environ;

enum arm { A_THREAD, A_FORK, A_FORK_EXEC, A_POSIX_SPAWN, A_FORKLESS, NARMS };

static const struct {
    const char *name;
    const char *what;
} arm_info[NARMS] = {
    { "thread", "pthread_create(): the worker shares the parent's memory" },
    { "fork", "fork(), the child consumes in the inherited memory, no exec" },
    { "fork_exec", "fork() + dup2(ring, 3) + execv(fl-worker)" },
    { "posix_spawn", "posix_spawn(fl-worker) with a dup2(ring, 3) file action" },
    { "forkless", "fl_spawn(fl-worker) with .fds = { 3 <- ring }, fl_wait()" },
};

struct opts {
    unsigned long heap_mib, records, rounds, cycle;
    int heap_given;   /* else the default: 0 in its place where it does not fit */
    int use[NARMS];
    const char *json, *csv;
};

/* One run of one arm. */
struct sample {
    uint64_t wall_ns, cpu_ns, ready_ns, transfer_ns;
    uint64_t minflt, child_minflt;
};

/* One row of the table (and of --json): an arm over all rounds. */
struct row {
    const char *method;
    size_t n;
    struct fl_mmm wall_ms, cpu_s, ready_ms, minflt;
    double transfer_ms_median, child_minflt_median;
    double cpu_s_vs_thread, minflt_vs_thread, wall_vs_thread;
    int checksum_ok;
};

struct ctx {
    struct fl_ring_hdr *h;
    int memfd;
    volatile char *heap;
    size_t npages;
    uint64_t records, cycle, expect_sum;
    const char *worker;
    char *wargv[3];
};

void fl_bench_worker_usage(FILE *f)
{
    fprintf(f,
        "usage: forkless bench worker [OPTIONS]\n\n"
        "The parent touches a heap, then hands RECORDS 16-byte records to a worker\n"
        "through a shared-memory ring (memfd, MAP_SHARED; a started program gets it\n"
        "as fd 3). While producing it dirties one 4 KiB page of its heap per cycle\n"
        "of CYCLE records, round-robin. The worker adds up what it took and reports\n"
        "count and sum back through the ring; a wrong one fails the run (exit 1).\n"
        "Each round runs every arm once, in a fresh random order. Per arm: wall time\n"
        "from the start of the spawn through the join, CPU time of the parent and\n"
        "its children (getrusage SELF + CHILDREN, threads included), the parent's\n"
        "minor faults (RUSAGE_SELF: for the thread arm that includes the thread's),\n"
        "and the time until the worker said it was ready; min/median/max. Both\n"
        "sides wait by spinning briefly, then sched_yield(), so the CPU time\n"
        "includes the worker's waiting for a producer slowed by page faults.\n\n"
        "Options:\n"
        "  --heap MIB      resident heap of the parent, at most %lu (default %d;\n"
        "                  0: none)\n"
        "  --records N     records to move (default %lu)\n"
        "  --cycle N       records per cycle, i.e. per dirtied page (default: RECORDS\n"
        "                  / heap pages, rounded down, so that every page is dirtied\n"
        "                  at least once, as in the seed; %d without a heap)\n"
        "  -r N            rounds (default %d)\n"
        "  --arms LIST     arms to run, comma separated (default: all)\n"
        "  --quick         small counts: --heap %d --records %lu -r %d (each unless\n"
        "                  given); what `forkless bench all` passes\n"
        "  --json FILE     also write the rows as JSON\n"
        "  --csv FILE      also write the rows as CSV: a header line, then one line\n"
        "                  per row, the same fields as the JSON rows\n"
        "  -h, --help      this text\n\n"
        "Arms:\n",
        FL_MAX_HEAP_MIB, DEFAULT_HEAP_MIB, DEFAULT_RECORDS, CYCLE_NO_HEAP, DEFAULT_ROUNDS,
        QUICK_HEAP_MIB, QUICK_RECORDS, QUICK_ROUNDS);
    for (int a = 0; a < NARMS; a++)
        fprintf(f, "  %-15s %s\n", arm_info[a].name, arm_info[a].what);
}

static int parse_arms(const char *list, int *use)
{
    memset(use, 0, NARMS * sizeof *use);
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (int a = 0; a < NARMS; a++)
            if (strlen(arm_info[a].name) == len && memcmp(arm_info[a].name, p, len) == 0)
                found = a;
        if (found < 0)
            return fl_usage_error(SUITE, "--arms: unknown arm \"%.*s\" (thread, fork, "
                                  "fork_exec, posix_spawn, forkless)", (int)len, p);
        if (use[found])
            return fl_usage_error(SUITE, "--arms: arm \"%s\" given twice",
                                  arm_info[found].name);
        use[found] = 1;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .heap_mib = DEFAULT_HEAP_MIB, .records = DEFAULT_RECORDS,
                        .rounds = DEFAULT_ROUNDS, .cycle = 0,
                        .use = { 1, 1, 1, 1, 1 } };
    if (fl_opt_quick(argc, argv)) {
        o->heap_mib = QUICK_HEAP_MIB;
        o->records = QUICK_RECORDS;
        o->rounds = QUICK_ROUNDS;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        if ((m = fl_opt_common(SUITE, argc, argv, &i, fl_bench_worker_usage, &o->csv, &o->json))) {
            if (m != 1)
                return m < 0 ? 2 : 0;
            continue;
        }
        if ((m = fl_opt_value(SUITE, argc, argv, &i, "--heap", &v))) {
            if (m < 0)
                return 2;
            if (fl_parse_ulong(v, 0, FL_MAX_HEAP_MIB, &o->heap_mib) != 0)
                return fl_usage_error(SUITE, "--heap wants a size in MiB from 0 to %lu "
                                      "(64 GiB), not \"%s\"", FL_MAX_HEAP_MIB, v);
            o->heap_given = 1;
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--records", &v))) {
            if (m < 0)
                return 2;
            if (fl_parse_ulong(v, 1, 1ul << 40, &o->records) != 0)
                return fl_usage_error(SUITE, "--records wants a whole number from 1, "
                                      "not \"%s\"", v);
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--cycle", &v))) {
            if (m < 0)
                return 2;
            if (fl_parse_ulong(v, 1, RING_SLOTS, &o->cycle) != 0)
                return fl_usage_error(SUITE, "--cycle wants records per cycle, 1 to %u, "
                                      "not \"%s\"", RING_SLOTS, v);
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "-r", &v))) {
            if (m < 0)
                return 2;
            if (fl_parse_ulong(v, 1, 100000, &o->rounds) != 0)
                return fl_usage_error(SUITE, "-r wants rounds from 1 to 100000, not \"%s\"", v);
        } else if ((m = fl_opt_value(SUITE, argc, argv, &i, "--arms", &v))) {
            if (m < 0)
                return 2;
            if (parse_arms(v, o->use) != 0)
                return 2;
        } else {
            return fl_usage_error(SUITE, "unknown option \"%s\"", a);
        }
    }
    if (o->cycle == 0) {   /* auto: every heap page dirtied at least once */
        uint64_t pages = ((uint64_t)o->heap_mib << 20) / PAGE;
        o->cycle = pages ? (unsigned long)(o->records / pages) : CYCLE_NO_HEAP;
        if (o->cycle == 0)
            o->cycle = 1;
        if (o->cycle > RING_SLOTS)
            o->cycle = RING_SLOTS;
    }
    return -1;
}

/* ---- the worker ends ---------------------------------------------------- */

static void *thread_main(void *p)
{
    fl_ring_consume(p);
    return NULL;
}

/* Has the worker process ended (without reaping it)? */
static int proc_gone(pid_t pid)
{
    if (pid <= 0)
        return 0;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return 1;
    return si.si_pid != 0;
}

/* The producer: RECORDS records in cycles of CYCLE, one heap page dirtied
 * per cycle. Returns 0, or -1 when the worker process ended early. */
static int produce(struct ctx *c, pid_t pid)
{
    struct fl_ring_hdr *h = c->h;
    struct fl_ring_rec *s = fl_ring_slots(h);
    uint64_t mask = h->slots - 1, i = 0, head = 0, cycle = 0;
    while (i < c->records) {
        uint64_t end = i + c->cycle < c->records ? i + c->cycle : c->records;
        unsigned spins = 0, waits = 0;
        while (end - head > h->slots) {
            head = atomic_load_explicit(&h->head, memory_order_acquire);
            if (end - head <= h->slots)
                break;
            fl_ring_backoff(&spins);
            if (spins >= 64 && ++waits % 1024 == 0 && proc_gone(pid))
                return -1;
        }
        for (; i < end; i++) {
            s[i & mask].seq = i;
            s[i & mask].val = fl_ring_val(i);
        }
        atomic_store_explicit(&h->tail, i, memory_order_release);
        if (c->npages)
            c->heap[(size_t)(cycle % c->npages) * PAGE] += 1;
        cycle++;
    }
    atomic_store_explicit(&h->closed, 1, memory_order_release);
    return 0;
}

static void ring_reset(struct fl_ring_hdr *h)
{
    atomic_store(&h->tail, 0);
    atomic_store(&h->head, 0);
    atomic_store(&h->closed, 0);
    atomic_store(&h->ready, 0);
    atomic_store(&h->done, 0);
    h->ready_ns = h->count = h->sum = h->bad_seq = 0;
}

static int check_status(const char *arm, int st)
{
    char err[96];
    if (fl_arm_check_status(st, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "forkless bench worker: %s: %s\n", arm, err);
    return -1;
}

static int wait_pid(const char *arm, pid_t pid)
{
    int st;
    pid_t r;
    do
        r = waitpid(pid, &st, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        fprintf(stderr, "forkless bench worker: %s: waitpid: %s\n", arm, strerror(errno));
        return -1;
    }
    return check_status(arm, st);
}

/* Runs one arm once: spawn, produce, join. Returns 0, or 1 when the run
 * failed or the worker's count or sum was wrong. */
static int run_arm(struct ctx *c, enum arm a, struct sample *out)
{
    const char *name = arm_info[a].name;
    struct fl_ring_hdr *h = c->h;
    ring_reset(h);
    pthread_t th;
    pid_t pid = -1;
    struct fl_proc proc = { .pid = 0, .pidfd = -1, .stdio = { -1, -1, -1 } };
    int e = 0;

    struct fl_usage u0, u1;
    fl_usage_now(&u0);
    uint64_t t0 = fl_bench_now_ns();
    switch (a) {
    case A_THREAD:
        e = pthread_create(&th, NULL, thread_main, h);
        if (e)
            fprintf(stderr, "forkless bench worker: pthread_create: %s\n", strerror(e));
        break;
    case A_FORK:
        pid = fork();
        if (pid == 0) {
            fl_ring_consume(h);
            _exit(0);
        }
        if (pid < 0)
            fprintf(stderr, "forkless bench worker: fork: %s\n", strerror(e = errno));
        break;
    case A_FORK_EXEC:
        pid = fork();
        if (pid == 0) {
            if (dup2(c->memfd, WORKER_FD) < 0)
                _exit(126);
            execv(c->worker, c->wargv);
            _exit(127);
        }
        if (pid < 0)
            fprintf(stderr, "forkless bench worker: fork: %s\n", strerror(e = errno));
        break;
    case A_POSIX_SPAWN: {
        posix_spawn_file_actions_t fa;
        e = posix_spawn_file_actions_init(&fa);
        if (!e)
            e = posix_spawn_file_actions_adddup2(&fa, c->memfd, WORKER_FD);
        if (!e)
            e = posix_spawn(&pid, c->worker, &fa, NULL, c->wargv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (e)
            fprintf(stderr, "forkless bench worker: posix_spawn: %s\n", strerror(e));
        break;
    }
    case A_FORKLESS: {
        struct fl_fd_map map = { .child_fd = WORKER_FD, .parent_fd = c->memfd };
        struct fl_cmd cmd = { .argv = c->wargv, .path = c->worker, .fds = &map, .nfds = 1 };
        struct fl_error err;
        e = fl_spawn(&cmd, &proc, &err);
        if (e) {
            char msg[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 64];
            fprintf(stderr, "forkless bench worker: fl_spawn: %s\n",
                    fl_error_format(&err, msg, sizeof msg));
        }
        pid = proc.pid;
        break;
    }
    default:
        return 1;
    }
    if (e)
        return 1;

    int bad = produce(c, a == A_THREAD ? 0 : pid) != 0;
    if (bad)
        atomic_store(&h->closed, 1);
    switch (a) {
    case A_THREAD:
        pthread_join(th, NULL);
        break;
    case A_FORKLESS: {
        int st = 0;
        int r = fl_wait(&proc, -1, &st);
        fl_close(&proc);
        if (r) {
            fprintf(stderr, "forkless bench worker: fl_wait: %s\n", strerror(r));
            bad = 1;
        } else if (check_status(name, st) != 0) {
            bad = 1;
        }
        break;
    }
    default:
        if (wait_pid(name, pid) != 0)
            bad = 1;
    }
    uint64_t t1 = fl_bench_now_ns();
    fl_usage_now(&u1);
    if (bad)
        return 1;

    if (!atomic_load(&h->done) || h->count != c->records || h->sum != c->expect_sum ||
        h->bad_seq != 0) {
        fprintf(stderr, "forkless bench worker: %s: CHECKSUM WRONG: worker took %llu "
                "records (want %llu), sum %#llx (want %#llx), %llu out of sequence\n",
                name, (unsigned long long)h->count, (unsigned long long)c->records,
                (unsigned long long)h->sum, (unsigned long long)c->expect_sum,
                (unsigned long long)h->bad_seq);
        return 1;
    }
    out->wall_ns = t1 - t0;
    out->cpu_ns = (u1.self_cpu_ns - u0.self_cpu_ns) + (u1.child_cpu_ns - u0.child_cpu_ns);
    out->minflt = (uint64_t)(u1.self_minflt - u0.self_minflt);
    out->child_minflt = (uint64_t)(u1.child_minflt - u0.child_minflt);
    out->ready_ns = h->ready_ns > t0 ? h->ready_ns - t0 : 0;
    out->transfer_ns = t1 > h->ready_ns ? t1 - h->ready_ns : 0;
    return 0;
}

/* Writes every page of the heap once, outside the measurement, so that
 * what one arm leaves behind (write-protected pages after a fork) is not
 * paid by the next. */
static void settle_heap(struct ctx *c)
{
    for (size_t p = 0; p < c->npages; p++)
        c->heap[p * PAGE] += 1;
}

/* ---- output -------------------------------------------------------------- */

static void print_row(const struct row *r)
{
    printf("worker %-12s n %2zu  wall %7.1f %7.1f %7.1f ms  cpu %6.3f %6.3f %6.3f s  "
           "parent minflt %7.0f %7.0f %7.0f  ready %7.2f %7.2f %7.2f ms",
           r->method, r->n, r->wall_ms.min, r->wall_ms.median, r->wall_ms.max,
           r->cpu_s.min, r->cpu_s.median, r->cpu_s.max, r->minflt.min,
           r->minflt.median, r->minflt.max, r->ready_ms.min, r->ready_ms.median,
           r->ready_ms.max);
    if (isfinite(r->cpu_s_vs_thread))
        printf("  vs thread: wall x%.2f, %+.3f CPU-s, %+.0f faults", r->wall_vs_thread,
               r->cpu_s_vs_thread, r->minflt_vs_thread);
    putchar('\n');
}

static void json_row(struct fl_rows *j, const struct opts *o, const struct row *r)
{
    fl_rows_begin(j);
    fl_rows_str(j, "method", r->method);
    fl_rows_int(j, "heap_mib", (long long)o->heap_mib);
    fl_rows_int(j, "records", (long long)o->records);
    fl_rows_int(j, "cycle_records", (long long)o->cycle);
    fl_rows_int(j, "n", (long long)r->n);
    fl_rows_num(j, "wall_ms_min", r->wall_ms.min);
    fl_rows_num(j, "wall_ms_median", r->wall_ms.median);
    fl_rows_num(j, "wall_ms_max", r->wall_ms.max);
    fl_rows_num(j, "cpu_s_min", r->cpu_s.min);
    fl_rows_num(j, "cpu_s_median", r->cpu_s.median);
    fl_rows_num(j, "cpu_s_max", r->cpu_s.max);
    fl_rows_num(j, "parent_minflt_min", r->minflt.min);
    fl_rows_num(j, "parent_minflt_median", r->minflt.median);
    fl_rows_num(j, "parent_minflt_max", r->minflt.max);
    fl_rows_num(j, "child_minflt_median", r->child_minflt_median);
    fl_rows_num(j, "ready_ms_min", r->ready_ms.min);
    fl_rows_num(j, "ready_ms_median", r->ready_ms.median);
    fl_rows_num(j, "ready_ms_max", r->ready_ms.max);
    fl_rows_num(j, "transfer_ms_median", r->transfer_ms_median);
    fl_rows_num(j, "cpu_s_vs_thread", r->cpu_s_vs_thread);
    fl_rows_num(j, "parent_minflt_vs_thread", r->minflt_vs_thread);
    fl_rows_num(j, "wall_ratio_thread", r->wall_vs_thread);
    fl_rows_int(j, "checksum_ok", r->checksum_ok);
    fl_rows_end(j);
}

/* ---- the suite ----------------------------------------------------------- */

int fl_bench_worker(int argc, char **argv)
{
    struct opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;

    /* The fork arm may copy the whole heap. */
    size_t one = 1;
    if (!o.heap_given)
        fl_mem_fit_defaults(SUITE, "--heap", &o.heap_mib, &one, 2, MEM_MARGIN_MIB);
    if ((r = fl_mem_check(SUITE, "--heap", &o.heap_mib, 1, 2, MEM_MARGIN_MIB)) != 0)
        return r;

    struct ctx c = { .memfd = -1, .records = o.records, .cycle = o.cycle };
    char worker[PATH_MAX];
    int need_prog = o.use[A_FORK_EXEC] || o.use[A_POSIX_SPAWN] || o.use[A_FORKLESS];
#ifdef FL_WORKER_PATH
    const char *build_path = FL_WORKER_PATH;
#else
    const char *build_path = NULL;
#endif
    if (fl_find_bench_prog("fl-worker", "FORKLESS_WORKER", build_path, worker,
                           sizeof worker) != 0) {
        if (need_prog) {
            fprintf(stderr, "forkless bench worker: the fl-worker program was not found "
                    "next to the forkless binary, in ../bench, in the build tree or in "
                    "the install tree; build the `fl-worker` target or set "
                    "FORKLESS_WORKER=PATH\n");
            return 1;
        }
        snprintf(worker, sizeof worker, "(not needed)");
    }
    c.worker = worker;
    c.wargv[0] = worker;
    c.wargv[1] = "3";
    c.wargv[2] = NULL;

    /* The ring, at an fd above 3 so that dup2(ring, 3) always makes a new
     * descriptor without FD_CLOEXEC. */
    int fd = memfd_create("fl-bench-ring", MFD_CLOEXEC);
    if (fd >= 0) {
        c.memfd = fcntl(fd, F_DUPFD_CLOEXEC, 10);
        close(fd);
    }
    size_t ring_bytes = fl_ring_bytes(RING_SLOTS);
    if (c.memfd < 0 || ftruncate(c.memfd, (off_t)ring_bytes) != 0) {
        fprintf(stderr, "forkless bench worker: memfd: %s\n", strerror(errno));
        if (c.memfd >= 0)
            close(c.memfd);
        return 1;
    }
    void *ring = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c.memfd, 0);
    if (ring == MAP_FAILED) {
        fprintf(stderr, "forkless bench worker: mmap ring: %s\n", strerror(errno));
        close(c.memfd);
        return 1;
    }
    memset(ring, 0, ring_bytes);   /* resident before any measurement */
    c.h = ring;
    c.h->magic = FL_RING_MAGIC;
    c.h->slots = RING_SLOTS;
    c.h->producer = (int32_t)getpid();

    c.expect_sum = fl_ring_sum(o.records);

    struct fl_rows j;
    struct fl_heap heap = { 0 };
    struct sample *samples = calloc(NARMS * o.rounds, sizeof *samples);
    struct row rows[NARMS];
    size_t nrows = 0;
    if ((r = fl_rows_open(&j, SUITE, o.json, o.csv)) != 0) {
        fl_rows_error(SUITE, "opening", o.json, o.csv, r);
        r = fl_rows_exit(r);
        goto out;
    }
    if (!samples) {
        fprintf(stderr, "forkless bench worker: out of memory\n");
        r = 1;
        goto out;
    }

    char machine[512];
    fl_machine_line(machine, sizeof machine);
    double load0 = fl_loadavg();
    printf("forkless bench worker: %s\n", machine);
    printf("heap %lu MiB (4 KiB pages), %lu records of 16 B through a %u-slot shared ring, "
           "one heap page dirtied per %lu records (round-robin), %lu rounds of every arm in "
           "random order; worker program %s\n", o.heap_mib, o.records, RING_SLOTS, o.cycle,
           o.rounds, worker);
    fl_rows_start(&j, SUITE, machine, load0);
    fl_rows_meta_str(&j, "worker", worker);
    fl_rows_meta_int(&j, "heap_mib", (long long)o.heap_mib);
    fl_rows_meta_int(&j, "records", (long long)o.records);

    fprintf(stderr, "worker: touching a %lu MiB heap...\n", o.heap_mib);
    int e = fl_heap_alloc(&heap, o.heap_mib, FL_PAGES_4K);
    if (e) {
        fprintf(stderr, "forkless bench worker: mmap %lu MiB: %s\n", o.heap_mib, strerror(e));
        r = 1;
        goto out;
    }
    c.heap = heap.base;
    c.npages = heap.bytes / PAGE;
    if (c.npages && (o.records + o.cycle - 1) / o.cycle < c.npages)
        printf("note: %lu cycles dirty only part of the %zu heap pages\n",
               (unsigned long)((o.records + o.cycle - 1) / o.cycle), c.npages);

    size_t arms[NARMS], narms = 0, order[NARMS], got[NARMS] = { 0 };
    for (int a = 0; a < NARMS; a++)
        if (o.use[a])
            arms[narms++] = (size_t)a;
    uint64_t seed = 0x776f726b6572u;   /* repeatable */
    r = 0;
    for (unsigned long round = 0; round < o.rounds && r == 0; round++) {
        fl_interleave_order(order, narms, &seed);
        for (size_t k = 0; k < narms && r == 0; k++) {
            size_t a = arms[order[k]];
            fprintf(stderr, "worker: round %lu/%lu: %s...\n", round + 1, o.rounds,
                    arm_info[a].name);
            if (run_arm(&c, (enum arm)a, &samples[a * o.rounds + got[a]]) != 0) {
                r = 1;
                break;
            }
            got[a]++;
            settle_heap(&c);
        }
    }
    if (r)
        goto out;

    for (size_t k = 0; k < narms; k++) {
        size_t a = arms[k];
        struct sample *s = &samples[a * o.rounds];
        uint64_t v[got[a] ? got[a] : 1];
        struct row *w = &rows[nrows++];
        memset(w, 0, sizeof *w);
        w->method = arm_info[a].name;
        w->n = got[a];
        w->checksum_ok = 1;
        for (size_t i = 0; i < got[a]; i++) v[i] = s[i].wall_ns;
        fl_mmm_of(v, got[a], &w->wall_ms);
        for (size_t i = 0; i < got[a]; i++) v[i] = s[i].cpu_ns;
        fl_mmm_of(v, got[a], &w->cpu_s);
        for (size_t i = 0; i < got[a]; i++) v[i] = s[i].ready_ns;
        fl_mmm_of(v, got[a], &w->ready_ms);
        for (size_t i = 0; i < got[a]; i++) v[i] = s[i].minflt;
        fl_mmm_of(v, got[a], &w->minflt);
        struct fl_mmm m;
        for (size_t i = 0; i < got[a]; i++) v[i] = s[i].transfer_ns;
        fl_mmm_of(v, got[a], &m);
        w->transfer_ms_median = m.median / 1e6;
        for (size_t i = 0; i < got[a]; i++) v[i] = s[i].child_minflt;
        fl_mmm_of(v, got[a], &m);
        w->child_minflt_median = m.median;
        w->wall_ms.min /= 1e6, w->wall_ms.median /= 1e6, w->wall_ms.max /= 1e6;
        w->cpu_s.min /= 1e9, w->cpu_s.median /= 1e9, w->cpu_s.max /= 1e9;
        w->ready_ms.min /= 1e6, w->ready_ms.median /= 1e6, w->ready_ms.max /= 1e6;
    }
    const struct row *base = NULL, *fe = NULL, *fl = NULL;
    for (size_t k = 0; k < nrows; k++) {
        if (strcmp(rows[k].method, "thread") == 0) base = &rows[k];
        if (strcmp(rows[k].method, "fork_exec") == 0) fe = &rows[k];
        if (strcmp(rows[k].method, "forkless") == 0) fl = &rows[k];
    }
    printf("per arm: min median max over the rounds; wall from spawn start to join, cpu = "
           "parent + children, parent minflt = RUSAGE_SELF (the thread arm's include its "
           "worker's), ready = spawn start to the worker's first word on the ring\n");
    for (size_t k = 0; k < nrows; k++) {
        struct row *w = &rows[k];
        w->cpu_s_vs_thread = base ? w->cpu_s.median - base->cpu_s.median : NAN;
        w->minflt_vs_thread = base ? w->minflt.median - base->minflt.median : NAN;
        w->wall_vs_thread = base ? w->wall_ms.median / base->wall_ms.median : NAN;
        print_row(w);
    }
    printf("checksums: all %zu arms x %lu rounds matched (count %lu, sum %#llx)\n", nrows,
           o.rounds, o.records, (unsigned long long)c.expect_sum);
    double flt_ratio = NAN;
    if (fe && fl) {
        flt_ratio = fe->minflt.median > 0 ? fl->minflt.median / fe->minflt.median : NAN;
        printf("forkless parent minor faults / fork_exec's (medians): %.0f / %.0f = %.2f%% "
               "(done when <= 1%%: %s)\n", fl->minflt.median, fe->minflt.median,
               100.0 * flt_ratio, flt_ratio <= 0.01 ? "holds" : "does NOT hold");
    }
    printf("load average %.2f at end\n", fl_loadavg());

    fl_rows_meta_num(&j, "forkless_over_fork_exec_minflt", flt_ratio);
    for (size_t k = 0; k < nrows; k++)
        json_row(&j, &o, &rows[k]);

out:
    fl_heap_free(&heap);
    free(samples);
    munmap(ring, ring_bytes);
    close(c.memfd);
    int jr = fl_rows_close(&j);
    if (jr && r == 0) {
        fl_rows_error(SUITE, "writing", o.json, o.csv, jr);
        r = 1;
    }
    return r;
}
