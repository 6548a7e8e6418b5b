/*
 * worker.c: start a worker process from a parent with a large heap,
 * without fork(), and talk to it over pipes.
 *
 * A program that has built a big heap (a cache, an index, a model) and
 * then wants a helper process pays for fork(): the kernel copies the page
 * tables of the whole heap, and marks every page copy-on-write, so the
 * parent takes a page fault on each page it writes afterwards, even once
 * the child has exec'd. forkless starts the child with clone(CLONE_VM |
 * CLONE_VFORK) instead: nothing is copied and the parent's heap is left
 * alone.
 *
 * This program touches a heap (256 MiB, or argv[1] MiB, or
 * $EXAMPLE_HEAP_MIB), then runs itself as a worker twice: once with the
 * default backend, once with FL_BACKEND_FORK for comparison. The parent
 * sends the worker one number per page of its heap, dirtying that page as
 * it goes, and the worker sends back their sum. It prints the spawn time,
 * the time until the worker said "ready", and the parent's page faults
 * while it dirtied its heap. The numbers depend on the machine; the
 * forkless ones stay small whatever the heap.
 *
 * Build: cc worker.c -lforkless        Run: ./worker [HEAP_MIB]
 */
#include <forkless.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* The worker: says "ready", sums the numbers it reads, one a line, and
 * writes the sum and the count once its stdin ends. */
static int worker(void)
{
    char line[64];
    unsigned long long sum = 0, count = 0;
    printf("ready\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        sum += strtoull(line, NULL, 10);
        count++;
    }
    printf("%llu %llu\n", sum, count);
    return 0;
}

/* Starts the worker with the backend, feeds it, checks its answer. */
static int run_worker(enum fl_backend backend, char *heap, size_t size, size_t page)
{
    struct fl_cmd cmd = {
        /* This very program, found through /proc rather than argv[0]. */
        .path = "/proc/self/exe",
        .argv = (char *const[]){ "worker", "--worker", NULL },
        /* Pipes for the worker's stdin and stdout: our ends are
         * proc.stdio[0] (to write) and proc.stdio[1] (to read). */
        .stdio = { [0] = { .kind = FL_PIPE }, [1] = { .kind = FL_PIPE } },
        .backend = backend,
    };
    struct fl_proc proc;
    struct fl_error err;
    char msg[512], line[128];

    fflush(stdout);   /* nothing buffered that a forked child could copy */
    double t0 = now_us();
    int rc = fl_spawn(&cmd, &proc, &err);
    double t1 = now_us();
    if (rc != 0) {
        printf("spawn failed: %s\n", fl_error_format(&err, msg, sizeof msg));
        return 1;
    }
    /* Our pipe ends as FILEs: the FILE now owns the fd, so the handle
     * must forget it (-1), or fl_close() would close it a second time. */
    FILE *to = fdopen(proc.stdio[0], "w"), *from = fdopen(proc.stdio[1], "r");
    proc.stdio[0] = proc.stdio[1] = -1;
    if (!to || !from || !fgets(line, sizeof line, from) || strcmp(line, "ready\n") != 0) {
        printf("the worker did not say it was ready\n");
        fl_kill(&proc, SIGKILL);   /* never leave a child behind: kill, reap, close */
        fl_wait(&proc, -1, NULL);
        fl_close(&proc);
        return 1;   /* (a real program would fclose() the FILEs too) */
    }
    double t2 = now_us();
    printf("worker started with the %s backend: spawn %.0f us, ready after %.1f ms\n",
           fl_backend_name(proc.backend), t1 - t0, (t2 - t0) / 1000);

    /* One record per page: dirty the page, send its number. A worker that
     * dies early must not kill us with SIGPIPE: main() ignores it, and a
     * failed write (EPIPE) shows in the stream's error state. */
    long faults = minor_faults();
    unsigned long long pages = size / page, want = 0;
    for (unsigned long long i = 0; i < pages; i++) {
        heap[i * page] ^= 1;
        fprintf(to, "%llu\n", i + 1);
        want += i + 1;
    }
    faults = minor_faults() - faults;
    bool sent = !ferror(to);
    if (fclose(to) != 0)   /* the worker's end of input; the last flush */
        sent = false;
    if (!sent)
        printf("  could not send every record: the worker stopped reading\n");

    unsigned long long sum = 0, count = 0;
    if (!fgets(line, sizeof line, from) || sscanf(line, "%llu %llu", &sum, &count) != 2)
        sum = count = 0;
    fclose(from);
    int status;
    rc = fl_wait(&proc, -1, &status);
    fl_close(&proc);
    printf("  worker: sum %llu of %llu records, %s\n", sum, count,
           sum == want && count == pages ? "as expected" : "WRONG");
    printf("  parent page faults while it dirtied %llu pages: %ld\n", pages, faults);
    if (rc != 0)
        printf("  wait: %s\n", strerror(rc));
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        printf("  the worker failed (wait status 0x%x)\n", status);
    return rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && sent &&
                   sum == want && count == pages ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--worker") == 0)
        return worker();

    const char *mib_arg = argc > 1 ? argv[1] : getenv("EXAMPLE_HEAP_MIB");
    size_t mib = mib_arg ? strtoul(mib_arg, NULL, 10) : 256;
    size_t size = mib << 20, page = (size_t)sysconf(_SC_PAGESIZE);
    char *heap = malloc(size ? size : 1);
    if (!heap) {
        printf("no memory for a %zu MiB heap\n", mib);
        return 1;
    }
    memset(heap, 1, size);   /* resident: every page touched */
    printf("parent heap: %zu MiB, every page touched\n", mib);
    fflush(stdout);
    signal(SIGPIPE, SIG_IGN);   /* a worker gone: EPIPE from the write, not death */

    int rc = run_worker(FL_BACKEND_AUTO, heap, size, page);
    /* The same worker through fork(), as most spawn code does it. */
    rc |= run_worker(FL_BACKEND_FORK, heap, size, page);
    free(heap);
    return rc;
}
