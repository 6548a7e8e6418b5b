/* spawn_clone.c: the default backend. The child runs under
 * clone(CLONE_VM|CLONE_VFORK) on a stack borrowed from this frame: nothing
 * of the parent is copied, so the cost does not depend on its memory, and
 * the parent thread sleeps until the child has exec'd or exited. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* The child's frames are small (the deepest holds a 1 KiB getdents
 * buffer); 16 KiB leaves room and still fits a 64 KiB thread stack. */
#define CHILD_STACK_SIZE (16 * 1024)

struct fl__clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
    uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

/* clone3() needs its own entry code: the child starts on the new stack and
 * must call fn there, not return into the parent's frames. */
long fl__clone3(struct fl__clone_args *args, size_t size, int (*fn)(void *), void *arg);
#if defined(__x86_64__)
__asm__(".text\n"
        ".p2align 4\n"
        ".type fl__clone3,@function\n"
        "fl__clone3:\n"
        "  mov %rdx, %r8\n"
        "  mov %rcx, %r9\n"
        "  mov $435, %eax\n"
        "  syscall\n"
        "  test %rax, %rax\n"
        "  jnz 1f\n"
        "  xor %ebp, %ebp\n"
        "  mov %r9, %rdi\n"
        "  call *%r8\n"
        "  mov %eax, %edi\n"
        "  mov $231, %eax\n"
        "  syscall\n"
        "  hlt\n"
        "1: ret\n"
        ".size fl__clone3, .-fl__clone3\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".p2align 4\n"
        ".type fl__clone3,%function\n"
        "fl__clone3:\n"
        "  mov x4, x2\n"
        "  mov x5, x3\n"
        "  mov x8, #435\n"
        "  svc #0\n"
        "  cbnz x0, 1f\n"
        "  mov x0, x5\n"
        "  blr x4\n"
        "  mov x8, #94\n"
        "  svc #0\n"
        "1: ret\n"
        ".size fl__clone3, .-fl__clone3\n");
#else
long fl__clone3(struct fl__clone_args *args, size_t size, int (*fn)(void *), void *arg)
{
    (void)args, (void)size, (void)fn, (void)arg;
    return -ENOSYS;
}
#endif

static int vm_probe_entry(void *arg)
{
    *(volatile int *)arg = 1;
    return 0;
}

static bool vm_shared;

/* Under QEMU user mode and WSL1, CLONE_VM does not share memory, and the
 * child's error record would never reach the parent. Ask once. */
static void probe_vm(void)
{
    char stack[4096] __attribute__((aligned(16)));
    volatile int seen = 0;
    pid_t pid = clone(vm_probe_entry, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD,
                      (void *)&seen);
    if (pid > 0) {
        siginfo_t si;
        while (waitid(P_PID, (id_t)pid, &si, WEXITED) < 0 && errno == EINTR)
            ;
    }
    vm_shared = pid > 0 && seen;
}

bool fl__clone_vm_works(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, probe_vm);
    return vm_shared;
}

#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif

/* clone3() with CLONE_CLEAR_SIGHAND has the kernel reset every handler,
 * so the child need not ask about 64 signals one system call at a time.
 * Kernels before 5.5, and seccomp filters that deny clone3, get clone(). */
static int clone3_usable = 1;

/* The kernel lists only signals 1-31 where the child reads them, so the
 * real-time signals the parent ignores are asked once per process. */
static uint64_t rt_ignored;

static void probe_rt_ignored(void)
{
    for (int sig = 32; sig <= 64; sig++) {
        struct { void *handler; unsigned long flags; void *restorer; unsigned long mask; } old;
        if (fl__sys4(SYS_rt_sigaction, sig, 0, &old, 8) == 0 && old.handler == (void *)SIG_IGN)
            rt_ignored |= (uint64_t)1 << (sig - 1);
    }
}

static long try_clone3(struct fl__plan *p, char *stack_top, int *pidfd)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, probe_rt_ignored);
    struct fl__clone_args a = {
        .flags = CLONE_VM | CLONE_VFORK | CLONE_CLEAR_SIGHAND |
                 (p->flags & FL_NO_PIDFD ? 0 : CLONE_PIDFD),
        .pidfd = (uintptr_t)pidfd,
        .exit_signal = SIGCHLD,
        .stack = (uintptr_t)(stack_top - CHILD_STACK_SIZE),
        .stack_size = CHILD_STACK_SIZE,
    };
    /* CLONE_INTO_CGROUP puts the child in its cgroup before it runs at
     * all. Where the kernel refuses the directory (a v1 hierarchy), the
     * child writes cgroup.procs itself and reports the exact error. */
    if (p->cgroup_procs) {
        p->cgroup_fd = open(p->cmd->cgroup, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (p->cgroup_fd >= 0) {
            a.flags |= CLONE_INTO_CGROUP;
            a.cgroup = (uint64_t)p->cgroup_fd;
        }
    }
    p->rt_ignored = rt_ignored;
    p->sighand_cleared = true;
    long pid = fl__clone3(&a, sizeof a, fl__child_entry, p);
    if (pid < 0 && p->cgroup_fd >= 0) {
        close(p->cgroup_fd);
        p->cgroup_fd = -1;
        a.flags &= ~CLONE_INTO_CGROUP;
        a.cgroup = 0;
        pid = fl__clone3(&a, sizeof a, fl__child_entry, p);
    }
    p->sighand_cleared = pid >= 0;
    return pid;
}

/* With clone3() the kernel clears the handlers as it creates the child, so
 * no handler can run there and the parent need not block its signals: the
 * child starts with this thread's mask, which is the mask FL_KEEP_SIGNALS
 * keeps, and two system calls are saved on every spawn. */
static long start_clone3(struct fl__plan *p, char *stack_top, int *pidfd)
{
    if (!__atomic_load_n(&clone3_usable, __ATOMIC_RELAXED))
        return -ENOSYS;
    if (p->cmd->sigmask)
        p->child_mask = *p->cmd->sigmask;
    else if (p->flags & FL_KEEP_SIGNALS)
        p->mask_inherited = true;
    else
        sigemptyset(&p->child_mask);
    long pid = try_clone3(p, stack_top, pidfd);
    if (pid == -ENOSYS || pid == -EPERM || pid == -EINVAL || pid == -E2BIG) {
        __atomic_store_n(&clone3_usable, 0, __ATOMIC_RELAXED);
        p->mask_inherited = false;
        return -ENOSYS;
    }
    return pid;
}

/* clone(): the child starts with every signal blocked and resets the
 * handlers itself before it unblocks anything. */
static long start_clone(struct fl__plan *p, char *stack_top, int *pidfd)
{
    static int pidfd_flag_usable = 1;
    sigset_t old;
    fl__block_signals(&old);
    fl__child_mask(p, &old);
    long pid = -1;
    errno = EINVAL;
    if (!(p->flags & FL_NO_PIDFD) && __atomic_load_n(&pidfd_flag_usable, __ATOMIC_RELAXED))
        pid = clone(fl__child_entry, stack_top,
                    CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, p, pidfd);
    if (pid < 0 && (p->flags & FL_NO_PIDFD || errno == EINVAL || errno == EPERM ||
                    errno == ENOSYS)) {
        /* A kernel before 5.2 has no CLONE_PIDFD, and a seccomp filter may
         * deny it: the handle then works from the pid (or pidfd_open). */
        *pidfd = -1;
        pid = clone(fl__child_entry, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, p);
        if (pid >= 0 && !(p->flags & FL_NO_PIDFD))
            __atomic_store_n(&pidfd_flag_usable, 0, __ATOMIC_RELAXED);
    }
    pid = pid < 0 ? -errno : pid;
    fl__restore_signals(&old);
    return pid;
}

int fl__spawn_clone(struct fl__plan *p, struct fl_proc *proc, struct fl_error *e)
{
    char stack[CHILD_STACK_SIZE] __attribute__((aligned(64)));
    int cancel, pidfd = -1;

    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    long pid = start_clone3(p, stack + sizeof stack, &pidfd);
    if (pid == -ENOSYS)
        pid = start_clone(p, stack + sizeof stack, &pidfd);
    pthread_setcancelstate(cancel, NULL);

    if (pid < 0)
        return fl__fail(e, (int)-pid, FL_STEP_CLONE, -1, fl__program(p->cmd), "clone");
    if (p->cerr.err) {
        fl__reap((pid_t)pid, pidfd);
        return fl__fail_child(p, e);
    }
    proc->pid = (pid_t)pid;
    proc->pidfd = pidfd >= 0 || (p->flags & FL_NO_PIDFD) ? pidfd : fl__pidfd_open((pid_t)pid);
    proc->backend = FL_BACKEND_CLONE;
    return 0;
}
