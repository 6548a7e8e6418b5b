/* spawn_fork.c: a copy of the process, as fork() makes (clone() without
 * CLONE_VM, with CLONE_PIDFD and CLONE_VFORK), and the same child code.
 * The child's memory is a copy, so its error record comes back through a
 * CLOEXEC pipe, read once the child has exec'd or exited: no record with
 * an error means exec succeeded. Its cost grows with the parent's
 * memory.
 *
 * The last record, the failure that ends the child, is also stored in a
 * page the two share: a seccomp filter that denies write() (installed
 * just before the exec) must not turn a failed exec into a success. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

/* clone() without CLONE_VM, which returns in the child as fork() does;
 * the child makes no libc call, so glibc's fork() bookkeeping is not
 * needed. CLONE_PIDFD makes the pidfd with the process, before anyone
 * can reap it and give its pid away. Its flags have no room for the time
 * namespace (0x80 is in the exit signal's bits): the child unshares it. */
static long clone_like_fork(unsigned long flags, int *pidfd)
{
#if defined(__s390__)
    long pid = syscall(SYS_clone, 0L, flags, pidfd, 0L, 0L);  /* the stack comes first there */
#elif defined(__microblaze__)
    long pid = syscall(SYS_clone, flags, 0L, 0L, pidfd, 0L, 0L);  /* and a stack size here */
#else
    long pid = syscall(SYS_clone, flags, 0L, pidfd, 0L, 0L);
#endif
    return pid < 0 ? -errno : pid;
}

/* The child's pid, or -errno. CLONE_VFORK without CLONE_VM: the call
 * returns once the child has exec'd or exited (*waited), so that the
 * error pipe need not be read to its end, which a fork() made meanwhile
 * by another thread could hold open. A kernel before 5.2 has no
 * CLONE_PIDFD and a seccomp filter may deny it: then none, and the handle
 * opens one after the start. So does a start at the fd limit: the error
 * pipe's two fds are open now, and its room comes back once they are
 * closed. With FL_NO_PIDFD the pidfd is made all the same, for the
 * process's number. */
static long start(struct fl__plan *p, int *pidfd, bool *waited)
{
    static int pidfd_flag_usable = 1;
    uint64_t ns = p->box ? fl__box_clone_flags(p) : 0;
    if (p->box)
        p->box->ns_unshare = ns & CLONE_NEWTIME;
    unsigned long flags =
        (unsigned long)((ns & ~(uint64_t)CLONE_NEWTIME) | CLONE_VFORK | SIGCHLD);
    *pidfd = -1;
    *waited = true;
#if defined(__sparc__)
    /* There the raw clone returns the parent's pid in the child too (the
     * libc wrappers read a second register): fork(), and a pidfd opened
     * after the start. */
    if (!ns) {
        *waited = false;
        pid_t pid = fork();
        return pid < 0 ? -errno : pid;
    }
#endif
    bool asked = __atomic_load_n(&pidfd_flag_usable, __ATOMIC_RELAXED);
    if (asked) {
        long pid = clone_like_fork(flags | CLONE_PIDFD, pidfd);
        bool fd_limit = pid == -EMFILE || pid == -ENFILE;
        if (pid >= 0 || !(pid == -EINVAL || pid == -ENOSYS || pid == -EPERM || fd_limit))
            return pid;
        asked = !fd_limit;
    }
    long pid = clone_like_fork(flags, NULL);
    /* Only a start that works without the flag shows that the flag was
     * what failed: an EPERM for the namespaces fails both ways. */
    if (pid > 0 && asked)
        __atomic_store_n(&pidfd_flag_usable, 0, __ATOMIC_RELAXED);
    return pid;
}

int fl__spawn_fork(struct fl__plan *p, struct fl_proc *proc, struct fl_error *e)
{
    const char *prog = fl__program(p->cmd);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return fl__fail(e, errno, FL_STEP_CLONE, -1, prog, "error pipe");
    /* Where no fd action replaces it, and not among 0-2, which the child
     * may read as its own (FL_TO_STDOUT dups fd 1). */
    long err_fd = fds[1];
    if (fds[1] < 3 || fl__is_target(p, fds[1])) {
        err_fd = fl__dup_aside(p, fds[1]);
        close(fds[1]);
    }
    if (err_fd < 0) {
        close(fds[0]);
        return fl__fail(e, (int)-err_fd, FL_STEP_CLONE, -1, prog,
                        "no fd left for the error pipe");
    }
    p->err_fd = (int)err_fd;
    /* The child drops every other fd from 3 up before its setup opens or
     * copies one, as a clone child does: a lowered fd limit must leave it
     * the same room. */
    int hold_err = p->flags & FL_KEEP_FDS ? 0 : fl__plan_hold(p, e);
    if (hold_err) {
        close(fds[0]);
        close(p->err_fd);
        p->err_fd = -1;
        return hold_err;
    }
    struct fl__child_err *last = mmap(NULL, sizeof *last, PROT_READ | PROT_WRITE,
                                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (last == MAP_FAILED) {
        int mmap_err = errno;
        close(fds[0]);
        close(p->err_fd);
        p->err_fd = -1;
        return fl__fail(e, mmap_err, FL_STEP_CLONE, -1, prog, "the error record's shared page");
    }

    sigset_t old;
    fl__block_signals(&old);
    fl__child_mask(p, &old);
    fl__setup_mask(p, &old, false);  /* a setup that waits ends by a signal that ends the program */
    int pidfd;
    bool waited;
    long pid = start(p, &pidfd, &waited);
    if (pid == 0) {
        fl__child_run(p);
        *last = p->cerr;
        fl__sys3(SYS_write, p->err_fd, &p->cerr, sizeof p->cerr);
        fl__child_exit(127);
    }
    fl__restore_signals(&old);
    close(p->err_fd);
    p->err_fd = -1;
    if (pid < 0) {
        close(fds[0]);
        munmap(last, sizeof *last);
        uint64_t ns = p->box ? fl__box_clone_flags(p) & ~(uint64_t)CLONE_NEWTIME : 0;
        char detail[FL_ERROR_DETAIL_MAX];
        return fl__fail(e, (int)-pid, FL_STEP_CLONE, -1, prog,
                        fl__clone_detail(ns, (int)-pid, ns ? "clone" : "fork", detail, sizeof detail));
    }

    /* A record without an error only says which best-effort settings did
     * not apply; one with an error ends it; none left (EOF, or nothing
     * more once the child is known to have exec'd or exited) means exec
     * succeeded. */
    if (waited)
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
    ssize_t n;
    do {
        while ((n = read(fds[0], &p->cerr, sizeof p->cerr)) < 0 && errno == EINTR)
            ;
    } while (n == (ssize_t)sizeof p->cerr && !p->cerr.err);
    close(fds[0]);
    /* EOF with a failure in the shared page: the pipe's write was denied. */
    if (n != (ssize_t)sizeof p->cerr && last->err) {
        p->cerr = *last;
        n = (ssize_t)sizeof p->cerr;
    }
    munmap(last, sizeof *last);
    if (n == (ssize_t)sizeof p->cerr) {
        fl__reap((pid_t)pid, pidfd);
        return fl__fail_child(p, e);
    }
    fl__proc_adopt(proc, (pid_t)pid, pidfd, p->flags & FL_NO_PIDFD);
    proc->backend = FL_BACKEND_FORK;
    return 0;
}
