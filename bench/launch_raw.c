/* launch_raw.c: the raw arms, what a default launch costs without the
 * library: the floor under the launch arms (raw_launch), and the pipe
 * arms' comparison done raw (raw_pipe_launch against raw_pipe_vfork).
 *
 * The parent makes each child with one clone3() and the flags a launch
 * uses (CLONE_VM, CLONE_PIDFD, CLONE_CHILD_CLEARTID, CLONE_CLEAR_SIGHAND;
 * no CLONE_VFORK, no CLONE_FILES), on a stack of this file's, with every
 * signal blocked around it, and goes on. The child does what a launch's
 * child does by default: closes every fd above 2, sets signals 1-31 to
 * SIG_DFL one by one (a launch cannot read them from /proc: its parent
 * runs on), clears its mask and execs; it yields its CPU first, as the
 * library's does (see fl__child_run()).
 * The oldest child is reaped as a launch is: its exec word waited for,
 * then waitid() on the pidfd. The time inside clone3() is the caller's
 * blocked time; nothing the library does before or after is counted.
 * The raw pipe arms start 4 such children, with no pipes between them:
 * one after another under CLONE_VFORK, or all at once as above (but not
 * yielding, as a pipeline's stages do not), then waiting for every exec
 * word. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/sys.h"
#include "bench.h"
#include "launch_arms.h"
#include "raw_clone.h"

#define RAW_STACK_SIZE ((size_t)64 * 1024)

extern char **environ;

struct raw_child {
    uint64_t wait_flag;  /* CLONE_CHILD_CLEARTID (a launch) or CLONE_VFORK */
    bool yield_first;    /* a launch whose caller goes on, not a stage */
    const char *path;
    char *const *argv;
    char *stack;
    uint32_t exec_word;  /* 1 until the kernel clears it at exec or exit */
    int pidfd;
    pid_t pid;
};

/* Runs beside the parent on its memory: raw system calls only (no errno,
 * no libc), and nothing the sanitizers would instrument. */
__attribute__((noinline, no_sanitize("address", "undefined", "thread")))
static int raw_child_main(void *arg)
{
    const struct raw_child *c = arg;
    const struct fl_bench_ksigaction dfl = { SIG_DFL, 0, 0, 0 };
    uint64_t none = 0;
    if (c->yield_first)
        fl__sys6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
    fl__sys6(SYS_close_range, 3, ~0u, 0, 0, 0, 0);
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            fl__sys6(SYS_rt_sigaction, sig, (long)&dfl, 0, 8, 0, 0);
    fl__sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, 8, 0, 0);
    fl__sys6(SYS_execve, (long)c->path, (long)c->argv, (long)environ, 0, 0, 0);
    fl__sys6(SYS_exit, 127, 0, 0, 0, 0, 0);
    return 0;
}

/* Where clone3() is unusable (a kernel before 5.5, a seccomp filter that
 * denies it, an architecture without the library's entry), clone() as the
 * library falls back to it; without CLONE_PIDFD (before 5.2) the child is
 * reaped by its pid. */
static long raw_clone(struct raw_child *c)
{
    static int clone3_unusable, pidfd_unusable;
    long pid = -ENOSYS;
    if (!clone3_unusable) {
        uint64_t a[11] = {  /* struct clone_args, as far as .cgroup */
            [0] = CLONE_VM | CLONE_PIDFD | c->wait_flag | CLONE_CLEAR_SIGHAND,
            [1] = (uintptr_t)&c->pidfd,
            [2] = (uintptr_t)&c->exec_word,
            [4] = SIGCHLD,
            [5] = (uintptr_t)c->stack,
            [6] = RAW_STACK_SIZE,
        };
        pid = fl__clone3(a, sizeof a, raw_child_main, c);
        if (pid != -ENOSYS && pid != -EPERM && pid != -EINVAL && pid != -E2BIG)
            return pid;
        clone3_unusable = 1;
    }
    int flags = CLONE_VM | (int)c->wait_flag | SIGCHLD;
    char *top = c->stack + RAW_STACK_SIZE;
    if (!pidfd_unusable) {
        pid = clone(raw_child_main, top, flags | CLONE_PIDFD, c, &c->pidfd, NULL, &c->exec_word);
        if (pid >= 0 || errno != EINVAL)
            return pid < 0 ? -errno : pid;
        pidfd_unusable = 1;
    }
    c->pidfd = -1;
    pid = clone(raw_child_main, top, flags, c, NULL, NULL, &c->exec_word);
    return pid < 0 ? -errno : pid;
}

/* The caller's blocked time: the clone, and the two calls that block
 * every signal around it, as a launch must (its caller may signal the
 * child at once, before the child has reset what it copied). */
static int raw_start(struct raw_child *c, uint64_t *in_call)
{
    c->exec_word = 1;
    c->pidfd = -1;
    c->pid = 0;
    uint64_t all = ~(uint64_t)0, old;
    uint64_t t0 = fl_bench_now_ns();
    fl__sys6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)&old, 8, 0, 0);
    long pid = raw_clone(c);
    fl__sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
    *in_call += fl_bench_now_ns() - t0;
    if (c->wait_flag == CLONE_VFORK)
        c->exec_word = 0;  /* no CLONE_CHILD_CLEARTID: the clone returned at the exec */
    if (pid < 0) {
        fprintf(stderr, "forkless bench launch: raw_launch: clone: %s\n", strerror((int)-pid));
        return 1;
    }
    c->pid = (pid_t)pid;
    return 0;
}

static int raw_reap(struct raw_child *c)
{
    /* Shared, not private: the kernel wakes the word as a shared futex. */
    while (__atomic_load_n(&c->exec_word, __ATOMIC_ACQUIRE))
        syscall(SYS_futex, &c->exec_word, FUTEX_WAIT, 1, NULL, NULL, 0);
    siginfo_t si;
    int r = -1;
    errno = EINVAL;
    while (c->pidfd >= 0 && (r = waitid((idtype_t)P_PIDFD, (id_t)c->pidfd, &si, WEXITED)) < 0 &&
           errno == EINTR)
        ;
    while (r < 0 && (errno == EINVAL || errno == EINTR))  /* no pidfd, or no P_PIDFD before 5.4 */
        r = waitid(P_PID, (id_t)c->pid, &si, WEXITED);
    int wait_err = errno;
    if (c->pidfd >= 0)
        close(c->pidfd);
    if (r < 0 || si.si_code != CLD_EXITED || si.si_status != 0) {
        fprintf(stderr, "forkless bench launch: raw_launch: %s, code %d, status %d\n",
                r < 0 ? strerror(wait_err) : "waitid ok", r < 0 ? 0 : si.si_code,
                r < 0 ? 0 : si.si_status);
        return 1;
    }
    return 0;
}

/* The stacks of the first k children in flight, mapped once and kept. */
static int raw_stacks(struct raw_child *ring, int k, const char *path, char *const *argv)
{
    static char *stacks[FL_LA_MAX_K];
    if (k < 1 || k > FL_LA_MAX_K)
        return 1;
    for (int i = 0; i < k; i++) {
        if (!stacks[i]) {
            void *s = mmap(NULL, RAW_STACK_SIZE, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
            if (s == MAP_FAILED) {
                fprintf(stderr, "forkless bench launch: raw_launch: mmap: %s\n",
                        strerror(errno));
                return 1;
            }
            stacks[i] = s;
        }
        ring[i] = (struct raw_child){ .path = path, .argv = argv, .stack = stacks[i] };
    }
    return 0;
}

int fl_la_raw_run(const char *path, int k, unsigned long spawns, uint64_t *in_call)
{
    char *argv[] = { (char *)path, NULL };
    struct raw_child ring[FL_LA_MAX_K];
    if (raw_stacks(ring, k, path, argv))
        return 1;
    unsigned long n = (unsigned long)k;
    int bad = 0;
    for (int i = 0; i < k; i++) {
        ring[i].wait_flag = CLONE_CHILD_CLEARTID;
        ring[i].yield_first = true;
    }
    for (unsigned long i = 0; i < spawns + n; i++) {
        struct raw_child *c = &ring[i % n];
        if (c->pid > 0 && raw_reap(c))
            bad = 1;
        c->pid = 0;
        if (!bad && i < spawns && raw_start(c, in_call))
            bad = 1;
    }
    /* After a failure the loop still goes round every slot once: no child
     * is left on a stack of ours. */
    return bad;
}

int fl_la_raw_pipe(const char *path, bool launched, uint64_t *startup, uint64_t *done)
{
    char *argv[] = { (char *)path, NULL };
    struct raw_child st[FL_LA_STAGES];
    uint64_t in_call = 0;
    if (raw_stacks(st, FL_LA_STAGES, path, argv))
        return 1;
    int started = 0, bad = 0;
    uint64_t t0 = fl_bench_now_ns();
    for (; started < FL_LA_STAGES; started++) {
        st[started].wait_flag = launched ? CLONE_CHILD_CLEARTID : CLONE_VFORK;
        if (raw_start(&st[started], &in_call)) {
            bad = 1;
            break;
        }
    }
    for (int i = 0; i < started; i++)
        while (__atomic_load_n(&st[i].exec_word, __ATOMIC_ACQUIRE))
            syscall(SYS_futex, &st[i].exec_word, FUTEX_WAIT, 1, NULL, NULL, 0);
    *startup = fl_bench_now_ns() - t0;
    for (int i = 0; i < started; i++)
        if (raw_reap(&st[i]))
            bad = 1;
    *done = fl_bench_now_ns() - t0;
    return bad;
}
