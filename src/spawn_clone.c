/* spawn_clone.c: the default backend. The child runs under
 * clone(CLONE_VM|CLONE_VFORK) on a small stack of the calling thread's own
 * (see thread_stack()): nothing of the parent is copied, so the cost does
 * not depend on its memory, and the parent thread sleeps until the child
 * has exec'd or exited. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
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

#define CHILD_STACK_SIZE FL__CHILD_STACK_SIZE
#define GUARD_SIZE 4096

struct fl__clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
    uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

/* clone3() needs its own entry code: the child starts on the new stack and
 * must call fn there, not return into the parent's frames. Global but
 * hidden: the bench's raw arms use it too. */
long fl__clone3(struct fl__clone_args *args, size_t size, int (*fn)(void *), void *arg);
#if defined(__x86_64__)
__asm__(".text\n"
        ".p2align 4\n"
        ".globl fl__clone3\n"
        ".hidden fl__clone3\n"
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
        ".globl fl__clone3\n"
        ".hidden fl__clone3\n"
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

/* The child's stack is one mapping per thread, made at the thread's first
 * spawn and unmapped when the thread exits. It cannot live in the
 * caller's frame: a thread with a 16 KiB stack has no 16 KiB to spare.
 * The parent thread sleeps until the child has exec'd, so no two children
 * ever share it. A guard page below turns an overflow into a fault. Every
 * thread's is on a list as well, for an unload (below). */
struct thread_stack {
    char *base;
    struct thread_stack *prev, *next;
};

static pthread_key_t stack_key;
static bool stack_key_made;
static pthread_mutex_t stacks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_stack *stacks;
/* Spawns whose child runs on a thread's stack now (see forget_stack_key()). */
static unsigned long children_on_stacks;

void fl__unmap_stack(void *base)
{
    munmap((char *)base - GUARD_SIZE, GUARD_SIZE + CHILD_STACK_SIZE);
}

/* The key's destructor, at the exit of a thread that spawned. A thread
 * may end during exit() or an unload, past glibc's look at the key:
 * forget_stack_key() has then taken the list (and freed, or kept, its
 * records), and this leaves it alone. */
static void release_thread_stack(void *v)
{
    struct thread_stack *s = v;
    pthread_mutex_lock(&stacks_lock);
    if (!__atomic_load_n(&stack_key_made, __ATOMIC_SEQ_CST)) {
        pthread_mutex_unlock(&stacks_lock);
        return;
    }
    if (s->prev)
        s->prev->next = s->next;
    else
        stacks = s->next;
    if (s->next)
        s->next->prev = s->prev;
    pthread_mutex_unlock(&stacks_lock);
    fl__unmap_stack(s->base);
    free(s);
}

static void make_stack_key(void)
{
    __atomic_store_n(&stack_key_made, pthread_key_create(&stack_key, release_thread_stack) == 0,
                     __ATOMIC_RELEASE);
}

/* Unloaded with a plugin that linked the static archive (dlclose()), the
 * key's destructor would be code that is gone by the time a thread that
 * spawned exits: the key goes first, and every thread's stack with it (no
 * thread may be inside the library as it is unloaded). A thread that
 * spawns after this, through another copy, maps one for itself.
 * Destructors also run at exit(), while other threads may be in a spawn,
 * whose child, a process of its own, lives on: then nothing is unmapped
 * (the process is ending). A spawn counts itself in children_on_stacks,
 * then looks at the key; this clears the key, then looks at the count
 * (both sequentially consistent): one of the two sees the other, so a
 * stack is either kept or not used. */
__attribute__((destructor)) static void forget_stack_key(void)
{
    if (!__atomic_exchange_n(&stack_key_made, false, __ATOMIC_SEQ_CST))
        return;
    pthread_key_delete(stack_key);
    if (__atomic_load_n(&children_on_stacks, __ATOMIC_SEQ_CST))
        return;
    pthread_mutex_lock(&stacks_lock);
    while (stacks) {
        struct thread_stack *s = stacks;
        stacks = s->next;
        fl__unmap_stack(s->base);
        free(s);
    }
    pthread_mutex_unlock(&stacks_lock);
}

char *fl__map_stack(void)
{
    char *m = mmap(NULL, GUARD_SIZE + CHILD_STACK_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    /* The guard is a mapping of its own: at vm.max_map_count the split
     * fails (ENOMEM), and a child that ran past the stack's end would
     * write into the caller's memory rather than fault. */
    if (mprotect(m, GUARD_SIZE, PROT_NONE) != 0) {
        munmap(m, GUARD_SIZE + CHILD_STACK_SIZE);
        return NULL;
    }
    return m + GUARD_SIZE;
}

/* Counts a spawn on this thread's stack; false when the key is gone
 * (forget_stack_key()), and the stack with it. */
static bool count_child_on_stack(void)
{
    __atomic_add_fetch(&children_on_stacks, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&stack_key_made, __ATOMIC_SEQ_CST))
        return true;
    __atomic_sub_fetch(&children_on_stacks, 1, __ATOMIC_RELEASE);
    return false;
}

/* The lowest address of this thread's child stack, or NULL (ENOMEM).
 * *counted: the spawn is counted in children_on_stacks until its clone
 * returns. *owned: no thread key to be had, the caller unmaps it after
 * use. */
static char *thread_stack(bool *owned, bool *counted)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_stack_key);
    bool keyed = __atomic_load_n(&stack_key_made, __ATOMIC_ACQUIRE);
    *owned = !keyed;
    *counted = false;
    struct thread_stack *s = keyed ? pthread_getspecific(stack_key) : NULL;
    if (s && (*counted = count_child_on_stack()))
        return s->base;
    char *base = fl__map_stack();
    if (!base || s || !keyed) {  /* s: its key went meanwhile */
        *owned = true;
        return base;
    }
    s = malloc(sizeof *s);
    if (!s || pthread_setspecific(stack_key, s) != 0) {
        free(s);
        *owned = true;
        return base;
    }
    if (!(*counted = count_child_on_stack())) {  /* the key went meanwhile */
        free(s);
        *owned = true;
        return base;
    }
    s->base = base;
    s->prev = NULL;
    pthread_mutex_lock(&stacks_lock);
    s->next = stacks;
    if (stacks)
        stacks->prev = s;
    stacks = s;
    pthread_mutex_unlock(&stacks_lock);
    return base;
}

static int vm_probe_entry(void *arg)
{
    *(volatile int *)arg = 1;
    return 0;
}

static bool vm_shared;

/* Under QEMU user mode and WSL1, CLONE_VM does not share memory, and the
 * child's error record would never reach the parent. Ask once.
 *
 * The probe child keeps every signal blocked (it inherits the mask set
 * here), so that none of the caller's handlers runs in it, in our memory.
 * A probe that could not start for want of processes or memory (EAGAIN
 * from RLIMIT_NPROC or a full pids cgroup) proves nothing about the
 * memory, and the answer is kept for the life of the process: it is taken
 * as shared, and the spawn itself then reports the clone's error. */
static void probe_vm(void)
{
    /* Static, not on the caller's stack, which may be small; pthread_once
     * keeps it to one user. */
    static char stack[4096] __attribute__((aligned(64)));
    volatile int seen = 0;
    sigset_t old;
    fl__block_signals(&old);
    pid_t pid = clone(vm_probe_entry, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD,
                      (void *)&seen);
    int err = errno;
    fl__restore_signals(&old);
    if (pid > 0) {
        siginfo_t si;
        while (waitid(P_PID, (id_t)pid, &si, WEXITED) < 0 && errno == EINTR)
            ;
    }
    /* Out of processes or memory for now: no answer. Any other refusal
     * (a sandbox's EPERM, ENOSYS) says the fork backend is the one. */
    vm_shared = (pid < 0 && (err == EAGAIN || err == ENOMEM)) || seen;
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

/* The child resets signals 1-31 one by one; the real-time signals the
 * process ignores are asked once per process (see reset_signals()), and
 * again by a fork()'s child, whose own they are then. */
static uint64_t rt_ignored;
static int rt_asked;

/* CLONE_INTO_CGROUP, cleared for the life of the process once a child so
 * placed was killed before it ran: Linux 6.18 SIGKILLs at birth every
 * child cloned into a cgroup that was once killed through cgroup.kill
 * (the library's own FL_STOP_CGROUP does that), wherever its parent is.
 * The child then writes cgroup.procs itself, as on a v1 hierarchy. Only a
 * spawn, which waits, can see that its child never ran and start it
 * again; a launch's child always writes cgroup.procs itself. */
static int into_cgroup_usable = 1;

/* CLONE_FILES, for a child that closes every fd it is not given: it then
 * copies only the low part of the fd table (see own_fd_table in child.c),
 * not the whole table at clone time, and closes nothing it did not copy.
 * Cleared when a child could not make its table its own (a seccomp filter
 * that denies both close_range and unshare). */
static int files_share_usable = 1;

/* Two threads may ask at once: each finds the same. */
static uint64_t ignored_rt_signals(void)
{
    if (__atomic_load_n(&rt_asked, __ATOMIC_ACQUIRE))
        return __atomic_load_n(&rt_ignored, __ATOMIC_RELAXED);
    uint64_t found = 0;
    for (int sig = 32; sig <= 64; sig++) {
        struct { void *handler; unsigned long flags; void *restorer; unsigned long mask; } old;
        if (fl__sys4(SYS_rt_sigaction, sig, 0, &old, 8) == 0 && old.handler == (void *)SIG_IGN)
            found |= (uint64_t)1 << (sig - 1);
    }
    __atomic_store_n(&rt_ignored, found, __ATOMIC_RELAXED);
    __atomic_store_n(&rt_asked, 1, __ATOMIC_RELEASE);
    return found;
}

/* A spawn waits for the exec under CLONE_VFORK; a launch (launch.c) does
 * not, and has the kernel clear its exec word at the exec or exit. */
static uint64_t wait_flags(const struct fl__plan *p)
{
    return p->exec_word ? CLONE_CHILD_CLEARTID : CLONE_VFORK;
}

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* The namespaces to make at clone time: all of them with clone3(), which
 * accepts each with CLONE_VM. clone() has no bit for the time namespace
 * (0x80 is in the exit signal's bits): the child unshares it instead. */
static uint64_t namespaces(struct fl__plan *p, bool clone3)
{
    if (!p->box)
        return 0;
    uint64_t ns = fl__box_clone_flags(p);
    p->box->ns_unshare = clone3 ? 0 : ns & CLONE_NEWTIME;
    return clone3 ? ns : ns & ~(uint64_t)CLONE_NEWTIME;
}

static uint64_t tstp_caught(void)
{
    struct sigaction sa;
    return sigaction(SIGTSTP, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
                   sa.sa_handler != SIG_IGN
               ? FL__SIG_BIT(SIGTSTP)
               : 0;
}

static long try_clone3(struct fl__plan *p, char *stack_top, int *pidfd)
{
    struct fl__clone_args a = {
        /* Also with FL_NO_PIDFD: the handle's identity is read from it
         * and it is closed at once (fl__spawn_clone()), before another
         * reaper could let the pid go to another process. */
        .flags = CLONE_VM | wait_flags(p) | CLONE_CLEAR_SIGHAND | CLONE_PIDFD,
        .pidfd = (uintptr_t)pidfd,
        .child_tid = (uintptr_t)p->exec_word,
        .exit_signal = SIGCHLD,
        .stack = (uintptr_t)(stack_top - CHILD_STACK_SIZE),
        .stack_size = CHILD_STACK_SIZE,
    };
    /* CLONE_INTO_CGROUP puts the child in its cgroup before it runs at
     * all. Where the kernel refuses the directory (a v1 hierarchy), the
     * child writes cgroup.procs itself and reports the exact error. */
    if (p->cgroup_procs && !p->exec_word &&
        __atomic_load_n(&into_cgroup_usable, __ATOMIC_RELAXED)) {
        p->cgroup_fd = open(p->cmd->cgroup, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (p->cgroup_fd >= 0) {
            a.flags |= CLONE_INTO_CGROUP;
            a.cgroup = (uint64_t)p->cgroup_fd;
        }
    }
    a.flags |= namespaces(p, true);
    p->rt_ignored = ignored_rt_signals();
    p->sighand_cleared = true;
    /* Only a spawn's child reads the stat: a launch's parent goes on, and
     * may change a disposition before its child reads. */
    if (!p->exec_word && !(p->flags & FL_KEEP_SIGNALS) && p->stat_fd < 0)
        p->stat_fd = fl__ignored_signals_fd(&p->stat_pid);
    /* Without the stat, whether the caller handles ^Z is asked here (see
     * hold_off_stops() in child.c): SIGTSTP alone, as the setup neither
     * reads nor writes a terminal, whose SIGTTIN and SIGTTOU those are. */
    p->stops_caught = !p->exec_word && p->stat_fd < 0 ? tstp_caught() : 0;
    /* Not for a launch: its caller may close an fd the child is yet to
     * copy (an FL_FD, a map, a pipe's child end) as soon as it returns. */
    p->files_shared = !(p->flags & FL_KEEP_FDS) && !p->exec_word &&
                      __atomic_load_n(&files_share_usable, __ATOMIC_RELAXED);
    if (p->files_shared)
        a.flags |= CLONE_FILES;
    p->child_ran = false;
    long pid = fl__clone3(&a, sizeof a, fl__child_entry, p);
    if ((pid == -EMFILE || pid == -ENFILE) && p->stat_fd >= 0) {
        /* The kept fd may hold the slot the pidfd needs. */
        fl__ignored_signals_release(p->stat_fd);
        p->stat_fd = -1;
        p->stops_caught = tstp_caught();
        pid = fl__clone3(&a, sizeof a, fl__child_entry, p);
    }
    if ((pid == -EMFILE || pid == -ENFILE) && (p->flags & FL_NO_PIDFD)) {
        /* No fd for a moment's pidfd: the identity is looked up after. */
        a.flags &= ~(uint64_t)CLONE_PIDFD;
        *pidfd = -1;
        pid = fl__clone3(&a, sizeof a, fl__child_entry, p);
    }
    if (pid >= 0 && p->files_shared && p->files_unshare_failed) {
        /* It stopped before it touched anything: start again without. */
        fl__reap((pid_t)pid, *pidfd);
        *pidfd = -1;
        p->cerr = (struct fl__child_err){ .err = 0 };
        p->files_shared = p->files_unshare_failed = false;
        __atomic_store_n(&files_share_usable, 0, __ATOMIC_RELAXED);
        a.flags &= ~(uint64_t)CLONE_FILES;
        p->child_ran = false;
        pid = fl__clone3(&a, sizeof a, fl__child_entry, p);
    }
    /* Killed before it ran, though the clone took it: see
     * into_cgroup_usable. */
    bool killed_at_birth = pid >= 0 && p->cgroup_fd >= 0 && !p->child_ran;
    if (killed_at_birth) {
        fl__reap((pid_t)pid, *pidfd);
        *pidfd = -1;
        __atomic_store_n(&into_cgroup_usable, 0, __ATOMIC_RELAXED);
    }
    /* Not for a want of processes or memory, which the other way cannot
     * mend: and a cgroup at its pids.max (EAGAIN) would take the child
     * all the same, as a write to cgroup.procs is not limited by it. */
    bool short_of_something = pid == -EAGAIN || pid == -ENOMEM || pid == -ENOSPC;
    if (((pid < 0 && !short_of_something) || killed_at_birth) && p->cgroup_fd >= 0) {
        close(p->cgroup_fd);
        p->cgroup_fd = -1;
        a.flags &= ~(CLONE_INTO_CGROUP | (p->box ? p->box->ns_clone : 0));
        a.flags |= namespaces(p, true);
        a.cgroup = 0;
        p->child_ran = false;
        pid = fl__clone3(&a, sizeof a, fl__child_entry, p);
    }
    /* Only on failure: a launch's child may be reading them by now. */
    if (pid < 0)
        p->sighand_cleared = p->files_shared = false;
    return pid;
}

/* A launch's child, started with every signal blocked (and a clone() or
 * fork() child, which resets handlers only at the end), runs its setup
 * with the signals that end a process as its final mask has them (it has
 * reset them first: none has a handler), and the others as the caller's
 * mask has them where clone3() cleared every handler, else still blocked,
 * as their handlers are reset only at the end. A setup that waits thus
 * ends by a signal as the program would. */
void fl__setup_mask(struct fl__plan *p, const sigset_t *caller, bool handlers_cleared)
{
    uint64_t ending = FL__ENDING_SIGNALS;
    p->setup_mask = p->child_mask;
#if __SIZEOF_LONG__ == 8 || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* The kernel's 64 bits, which the child's rt_sigprocmask() reads, are
     * the set's first 8 bytes, signal n at bit n-1. */
    uint64_t final, others = ~(uint64_t)0;
    memcpy(&final, &p->child_mask, sizeof final);
    if (handlers_cleared)
        memcpy(&others, caller, sizeof others);
    uint64_t setup = (final & ending) | (others & ~ending);
    memcpy(&p->setup_mask, &setup, sizeof setup);
#else
    for (int sig = 1; sig <= 64; sig++) {
        bool block = (ending & FL__SIG_BIT(sig)) ? sigismember(&p->child_mask, sig) == 1
                     : handlers_cleared          ? sigismember(caller, sig) == 1
                                                 : true;
        if (block)
            sigaddset(&p->setup_mask, sig);
        else
            sigdelset(&p->setup_mask, sig);
    }
#endif
    p->setup_mask_set = true;
}

/* A spawn's child starts with this thread's mask. Where that blocks a
 * signal that ends a process and the child's final mask does not (a
 * supervisor that takes its signals from a signalfd), a setup that waits
 * (a FIFO's open; a dup2() or a close whose file's flush waits for a
 * server, on NFS or FUSE, even where another fd holds the file) would
 * outlast every such signal sent to the child, and its caller, asleep in
 * the vfork, could do nothing either: the child unblocks them first, as a
 * launch's child does. One system call of the child's, rather than a
 * question of the parent's to skip it. */
static void unblock_ending_in_setup(struct fl__plan *p)
{
    p->ending_unblock = 0;
    if (p->mask_inherited)
        return;  /* FL_KEEP_SIGNALS: the final mask is this one */
#if __SIZEOF_LONG__ == 8 || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t final;  /* the kernel's 64 bits, as in fl__setup_mask() */
    memcpy(&final, &p->child_mask, sizeof final);
    p->ending_unblock = FL__ENDING_SIGNALS & ~final;
#else
    for (int sig = 1; sig <= 64; sig++)
        if ((FL__ENDING_SIGNALS & FL__SIG_BIT(sig)) && sigismember(&p->child_mask, sig) != 1)
            p->ending_unblock |= FL__SIG_BIT(sig);
#endif
}

/* Whether this thread holds CAP_SYS_ADMIN (effective), by capget(). */
static bool has_cap_sys_admin(void)
{
    struct { uint32_t version; int pid; } head = { 0x20080522, 0 };  /* _LINUX_CAPABILITY_VERSION_3 */
    struct { uint32_t effective, permitted, inheritable; } data[2] = { { 0, 0, 0 } };
    return fl__sys2(SYS_capget, &head, data) == 0 && (data[0].effective >> 21 & 1);  /* CAP_SYS_ADMIN */
}

/* With clone3() the kernel clears the handlers as it creates the child, so
 * no handler can run there and a spawn's parent need not block its
 * signals: the child starts with this thread's mask, which is the mask
 * FL_KEEP_SIGNALS keeps, and two system calls are saved on every spawn.
 * A launch's caller has the pid at once, and may signal the child before
 * it has reset the dispositions it copied: one the caller ignores would be
 * thrown away by the kernel, and the program run on. So a launch's child
 * starts with every signal blocked, and a signal sent meanwhile waits,
 * pending, until the child has reset the signals that end a process and
 * taken this thread's mask (reset_ending_signals() in child.c, its first
 * step after a yield of its CPU). */
static long start_clone3(struct fl__plan *p, char *stack_top, int *pidfd)
{
    if (!__atomic_load_n(&clone3_usable, __ATOMIC_RELAXED))
        return -ENOSYS;
    sigset_t old;
    if (p->exec_word) {
        fl__block_signals(&old);
        fl__child_mask(p, &old);
        fl__setup_mask(p, &old, true);
    } else {
        if (p->cmd->sigmask)
            p->child_mask = *p->cmd->sigmask;
        else if (p->flags & FL_KEEP_SIGNALS)
            p->mask_inherited = true;
        else
            sigemptyset(&p->child_mask);
        unblock_ending_in_setup(p);
    }
    long pid = try_clone3(p, stack_top, pidfd);
    if (p->exec_word)
        fl__restore_signals(&old);
    /* EPERM and EINVAL may be about the namespaces (no privilege, a kernel
     * without one): clone() is tried for this spawn, and gives its own
     * answer, but clone3() stays in use. Not for a time namespace alone
     * that a caller without CAP_SYS_ADMIN asked for: clone() would make
     * none, and the child's unshare() would say the same EPERM as a step
     * of its own. One with it has the privilege: its EPERM is a filter's
     * refusal of clone3() itself, and clone() goes round it. */
    if (pid == -EPERM && p->box && p->box->ns_clone &&
        !(fl__box_clone_flags(p) & ~(uint64_t)CLONE_NEWTIME) && !has_cap_sys_admin())
        return pid;
    if ((pid == -EPERM || pid == -EINVAL) && p->box && p->box->ns_clone) {
        p->mask_inherited = p->setup_mask_set = false;
        return -ENOSYS;
    }
    if (pid == -ENOSYS || pid == -EPERM || pid == -EINVAL || pid == -E2BIG) {
        __atomic_store_n(&clone3_usable, 0, __ATOMIC_RELAXED);
        p->mask_inherited = p->setup_mask_set = false;
        fl__ignored_signals_give_up();  /* clone()'s child resets every signal */
        p->stat_fd = -1;
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
    /* A spawn's too: the setup must end by a signal that ends the
     * program, whatever this thread blocks (see
     * unblock_ending_in_setup()). */
    fl__setup_mask(p, &old, false);
    long pid = -1;
    errno = EINVAL;
    int ns = (int)namespaces(p, false);
    /* This child resets every signal and reads no stat; but after a
     * clone3() refused for its namespaces alone, the library's fd may hold
     * the slot the pidfd needs. */
    int kept = p->stat_fd;
    p->stat_fd = -1;
    if (!(p->flags & FL_NO_PIDFD) && __atomic_load_n(&pidfd_flag_usable, __ATOMIC_RELAXED)) {
        int flags = CLONE_VM | (int)wait_flags(p) | ns | CLONE_PIDFD | SIGCHLD;
        pid = clone(fl__child_entry, stack_top, flags, p, pidfd, NULL, p->exec_word);
        if (pid < 0 && (errno == EMFILE || errno == ENFILE) && kept >= 0) {
            fl__ignored_signals_release(kept);
            pid = clone(fl__child_entry, stack_top, flags, p, pidfd, NULL, p->exec_word);
        }
    }
    if (pid < 0 && (p->flags & FL_NO_PIDFD || errno == EINVAL || errno == EPERM ||
                    errno == ENOSYS)) {
        /* A kernel before 5.2 has no CLONE_PIDFD, and a seccomp filter may
         * deny it: the handle then works from the pid (or pidfd_open). */
        *pidfd = -1;
        pid = clone(fl__child_entry, stack_top, CLONE_VM | (int)wait_flags(p) | ns | SIGCHLD, p,
                    NULL, NULL, p->exec_word);
        if (pid >= 0 && !(p->flags & FL_NO_PIDFD))
            __atomic_store_n(&pidfd_flag_usable, 0, __ATOMIC_RELAXED);
    }
    pid = pid < 0 ? -errno : pid;
    fl__restore_signals(&old);
    return pid;
}

/* Children that change credentials and have neither exec'd nor failed,
 * every thread's spawns and launches alike, and the caller's setting from
 * before the first of them. Whoever runs as such a child's new uid may
 * read and write the memory it still shares with us (/proc/PID/mem,
 * ptrace) as soon as that memory is dumpable again: so the setting is put
 * back only when the last of them is done, and the lock makes the count
 * and the prctl() one step, so that no child is counted in between. */
static pthread_mutex_t dumpable_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned dumpable_holders;
static int dumpable_held;
/* One more in each fork() child: a child counted before the fork is not
 * the fork child's to give back. */
static unsigned dumpable_generation;

/* Held across a fork(), so that the child's copy of the list is whole. */
static void before_fork(void)
{
    pthread_mutex_lock(&dumpable_lock);
    pthread_mutex_lock(&stacks_lock);
}

static void after_fork_in_parent(void)
{
    pthread_mutex_unlock(&stacks_lock);
    pthread_mutex_unlock(&dumpable_lock);
}

/* In a fork()'s child: no child of its own is pending, and the locks are
 * the forking thread's. The dumpable setting stays as the fork found it
 * (0, while another thread's child was pending); the other threads'
 * stacks stay listed, to go at an unload. */
static void after_fork_in_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    dumpable_lock = fresh;
    dumpable_holders = 0;
    dumpable_generation++;
    stacks_lock = fresh;
    children_on_stacks = 0;  /* theirs, not this process's */
    rt_asked = 0;
}

/* At load: see register_after_fork() in ignored_signals.c. */
__attribute__((constructor)) static void register_after_fork(void)
{
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

void fl__dumpable_save(struct fl__plan *p)
{
    p->parent_dumpable = -1;
    if (!(p->flags & (FL_SET_UID | FL_SET_GID)))
        return;
    pthread_mutex_lock(&dumpable_lock);
    if (dumpable_holders++ == 0)
        dumpable_held = prctl(PR_GET_DUMPABLE);
    p->parent_dumpable = dumpable_held;
    p->dumpable_generation = dumpable_generation;
    pthread_mutex_unlock(&dumpable_lock);
}

void fl__dumpable_restore(struct fl__plan *p)
{
    if (p->parent_dumpable < 0)
        return;
    p->parent_dumpable = -1;
    pthread_mutex_lock(&dumpable_lock);
    /* PR_SET_DUMPABLE takes 0 and 1 only (2 is suid_dumpable's). */
    if (p->dumpable_generation == dumpable_generation && --dumpable_holders == 0 &&
        (dumpable_held == 0 || dumpable_held == 1) && prctl(PR_GET_DUMPABLE) != dumpable_held)
        prctl(PR_SET_DUMPABLE, dumpable_held);
    pthread_mutex_unlock(&dumpable_lock);
}

int fl__spawn_clone(struct fl__plan *p, struct fl_proc *proc, struct fl_error *e)
{
    bool owned = false, counted = false;
    char *stack = p->launch_stack ? p->launch_stack : thread_stack(&owned, &counted);
    if (!stack)
        return fl__fail(e, ENOMEM, FL_STEP_CLONE, -1, fl__program(p->cmd),
                        "mapping the child's stack");
    int pidfd = -1;
    fl__dumpable_save(p);
    long pid = start_clone3(p, stack + CHILD_STACK_SIZE, &pidfd);
    bool via_clone3 = pid != -ENOSYS;
    if (!via_clone3)
        pid = start_clone(p, stack + CHILD_STACK_SIZE, &pidfd);
    /* A spawn's child has exec'd or failed by now; a launch's child may
     * still be at its setup, and the settle restores it (launch.c). */
    if (!p->exec_word || pid < 0)
        fl__dumpable_restore(p);
    if (owned)
        fl__unmap_stack(stack);
    if (counted)
        __atomic_sub_fetch(&children_on_stacks, 1, __ATOMIC_RELEASE);

    if ((pid == -EMFILE || pid == -ENFILE) && !(p->flags & FL_NO_PIDFD))
        return fl__fail(e, (int)-pid, FL_STEP_CLONE, -1, fl__program(p->cmd),
                        "no fd left for the pidfd (CLONE_PIDFD); FL_NO_PIDFD does without");
    if (pid < 0) {
        /* clone() has no bit for the time namespace: its child unshares it. */
        uint64_t ns = namespaces(p, via_clone3);
        char detail[FL_ERROR_DETAIL_MAX];
        return fl__fail(e, (int)-pid, FL_STEP_CLONE, -1, fl__program(p->cmd),
                        fl__clone_detail(ns, (int)-pid, "clone", detail, sizeof detail));
    }
    /* A launch's child is still at its setup: its record is read later
     * (fl__launch_settle()). */
    if (!p->exec_word && p->cerr.err) {
        fl__reap((pid_t)pid, pidfd);
        return fl__fail_child(p, e);
    }
    /* A launch's group must be there when the call returns, for the
     * group calls and for a pipeline's next stage to join: the parent
     * makes it as a shell does (setpgid() on its own child is allowed
     * until the child execs; EACCES after, when the child made it). */
    if (p->exec_word && (p->flags & (FL_NEW_PGROUP | FL_SETSID)) == FL_NEW_PGROUP)
        setpgid((pid_t)pid, (pid_t)pid);
    fl__proc_adopt(proc, (pid_t)pid, pidfd, p->flags & FL_NO_PIDFD);
    proc->backend = FL_BACKEND_CLONE;
    return 0;
}
