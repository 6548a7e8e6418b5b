/* proc.c: own the process. Waiting polls the pidfd and reaps with
 * waitid(P_PIDFD), signals go through pidfd_send_signal(), and once the
 * process is reaped its numeric pid is never used again. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef ANON_INODE_FS_MAGIC
#define ANON_INODE_FS_MAGIC 0x09041934
#endif
#ifndef PID_FS_MAGIC
#define PID_FS_MAGIC 0x50494446
#endif

enum { PROC_RUNNING = 0, PROC_REAPED = FL__PROC_REAPED };

/* pty and launch_ took the place of reserved space, and four pointers
 * are left for later fields: the handle keeps this size. */
_Static_assert(sizeof(struct fl_proc) == offsetof(struct fl_proc, pty) + 6 * sizeof(void *),
               "struct fl_proc changed size");

/* The milliseconds from now until deadline_ns, rounded up, so that a wait
 * retried after EINTR never ends before its deadline; 0 once it passed. */
static int ms_until(long long deadline_ns)
{
    long long left = deadline_ns - fl__now_ns();
    if (left <= 0)
        return 0;
    left = (left + 999999) / 1000000;
    return left > INT_MAX ? INT_MAX : (int)left;
}

int fl__status_of(const siginfo_t *si)
{
    switch (si->si_code) {
    case CLD_EXITED:
        return (si->si_status & 0xff) << 8;
    case CLD_KILLED:
        return si->si_status & 0x7f;
    case CLD_DUMPED:
        return (si->si_status & 0x7f) | 0x80;
    default:
        return 0;
    }
}

/* Is the process behind a readable pidfd ours to reap now? Its zombie is
 * a tracer's until the tracer lets go, though the pidfd turned readable at
 * the exit. Where waitid() cannot say (P_PIDFD refused, not our child any
 * more), yes: the reap that follows reports what it finds. Raw. */
static bool reapable_now(int pidfd)
{
    siginfo_t si;
    si.si_pid = 0;
    long r;
    do
        r = fl__sys5(SYS_waitid, P_PIDFD, pidfd, (long)&si, WEXITED | WNOHANG | WNOWAIT, 0);
    while (r == -EINTR);
    return r != 0 || si.si_pid != 0;
}

/* Waits until the pidfd's process has ended and is ours to reap, or the
 * time runs out; EINTR restarts with the time left. A poll that signals
 * keep interrupting ends at the deadline all the same: a pending signal
 * makes even a poll of no time EINTR. A zombie that a tracer holds keeps
 * the pidfd readable: it is looked at again after a nap that grows to
 * 50 ms, so that a timed wait keeps its time rather than block in the
 * reap until the tracer lets go. */
int fl__wait_readable(int pidfd, int timeout_ms)
{
    long long deadline = fl__now_ns() + (long long)timeout_ms * 1000000;
    int interrupted_at_end = 0;
    long nap_ms = 1;
    for (;;) {
        struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
        int r = fl__poll(&pfd, 1, timeout_ms);
        if (r > 0 && (pfd.revents & POLLNVAL))
            return EBADF;
        if (r > 0 && reapable_now(pidfd))
            return 0;
        if (r > 0) {  /* a tracer's zombie, for now */
            if (timeout_ms == 0)
                return ETIMEDOUT;
            long nap = timeout_ms > 0 && timeout_ms < nap_ms ? timeout_ms : nap_ms;
            struct timespec ts = { nap / 1000, (nap % 1000) * 1000000 };
            nanosleep(&ts, NULL);
            nap_ms = nap_ms < 50 ? nap_ms * 2 : 50;
            if (timeout_ms > 0 && (timeout_ms = ms_until(deadline)) == 0)
                return ETIMEDOUT;
            continue;
        }
        if (r == 0)
            return ETIMEDOUT;
        if (errno != EINTR)
            return errno;
        if (timeout_ms < 0)
            continue;  /* for ever is still for ever */
        if (timeout_ms == 0 && ++interrupted_at_end > 2)
            return ETIMEDOUT;
        timeout_ms = ms_until(deadline);
    }
}

/* Without a pidfd: WNOHANG with a growing sleep, up to 50 ms, the last
 * one cut at the deadline. */
static int wait_polling(pid_t pid, int timeout_ms, siginfo_t *si)
{
    long long deadline = fl__now_ns() + (long long)timeout_ms * 1000000;
    long step_us = 500;
    for (;;) {
        si->si_pid = 0;
        /* Raw: a reap must not be a cancellation point (see
         * waitid_usage()); the sleep below is one. */
        long r = fl__sys5(SYS_waitid, P_PID, pid, (long)si, WEXITED | WNOHANG, 0);
        if (r == -EINTR)
            continue;
        if (r < 0)
            return (int)-r;
        if (si->si_pid == pid)
            return 0;
        long long now = fl__now_ns();
        if (now >= deadline)
            return ETIMEDOUT;
        long long sleep_ns = deadline - now < step_us * 1000LL ? deadline - now : step_us * 1000LL;
        struct timespec ts = { 0, (long)sleep_ns };
        nanosleep(&ts, NULL);
        step_us = step_us < 50000 ? step_us * 2 : 50000;
    }
}

/* The reap is the raw waitid(), which also gives the child's rusage (its
 * fifth argument). fl_wait() is a cancellation point, so a wait that may
 * block waits first with libc's waitid() and WNOWAIT: glibc acts on a
 * cancellation that comes as the call returns (before 2.41, BZ #12683),
 * and a reap cancelled there would lose the status; a wait that reaps
 * nothing loses nothing. A launch waited for after other work has most
 * likely ended: it is looked for first, and reaped at once, after a look
 * for a cancellation already asked for, as waitpid() would act on one.
 * In a process that never had a second thread no other can cancel this
 * one while it waits (a handler may not: pthread_cancel() is not
 * async-signal-safe), so after a look for a cancellation it asked for
 * itself the raw reap waits by itself, and a spawn's wait saves a system
 * call. (glibc's pthread_cancel() of the calling thread clears only the
 * libc's own copy of the flag: a program holding a copy of it, as every
 * C++ program using std::shared_ptr does, still reads 1.) */
static long waitid_usage(int type, long id, siginfo_t *si, int options, struct rusage *ru,
                         enum fl__reap_wait how)
{
    long r = 0;
    if (how == FL__REAP_WAIT && fl__known_single_threaded()) {
        pthread_testcancel();
        how = FL__REAP_ENDED;
    }
    if (how == FL__REAP_LOOK) {
        pthread_testcancel();
        si->si_pid = 0;
        do
            r = fl__sys5(SYS_waitid, type, id, (long)si, options | WNOHANG, (long)ru);
        while (r == -EINTR);
        if (r < 0 || si->si_pid)
            return r;
    }
    while (how != FL__REAP_ENDED && waitid((idtype_t)type, (id_t)id, si, options | WNOWAIT) < 0) {
        r = -errno;
        if (r != -EINTR)
            return r;
    }
    do
        r = fl__sys5(SYS_waitid, type, id, (long)si, options, (long)ru);
    while (r == -EINTR);
    return r;
}

/* By the pidfd; where waitid(P_PIDFD) is refused, by the pid: as the
 * pidfd's own wait where the pidfd shows that the pid names its process
 * (a zombie that a tracer holds is waited for then, as it would be);
 * ECHILD where it shows another's. Where nothing can tell, once the
 * pidfd says that the process has ended (poll() sees that), and without
 * waiting: a pid that names a process still running names another's (the
 * handle's reaped elsewhere, its number given on), whose end nothing here
 * may wait for, nor past the caller's timeout. */
long fl__reap_by_pidfd(pid_t pid, int pidfd, siginfo_t *si, struct rusage *ru,
                       enum fl__reap_wait how)
{
    long r = waitid_usage(P_PIDFD, pidfd, si, WEXITED, ru, how);
    if (!fl__pidfd_wait_refused(r))
        return r;
    int names = fl__pid_names_pidfd(pidfd, pid);
    if (names == FL__NOT_A_PIDFD)
        return -EBADF;
    if (names >= 0)
        return names ? waitid_usage(P_PID, pid, si, WEXITED, ru, how) : -ECHILD;
    int cancel_state;
    if (how == FL__REAP_ENDED)  /* as uncancellable as the raw reap it stands for */
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    int err = fl__wait_readable(pidfd, -1);
    if (how == FL__REAP_ENDED)
        pthread_setcancelstate(cancel_state, NULL);
    if (err)
        return -err;
    si->si_pid = 0;
    do
        r = fl__sys5(SYS_waitid, P_PID, pid, (long)si, WEXITED | WNOHANG, (long)ru);
    while (r == -EINTR);
    if (r != 0 || si->si_pid != 0)
        return r;
    /* Nothing ended there: a process that runs is another's; a zombie
     * that a tracer holds is waited for, as the pidfd's own wait would. */
    return fl__pid_state(pid) == 'Z' ? waitid_usage(P_PID, pid, si, WEXITED, ru, how) : -ECHILD;
}

/* Raw: libc's close() is a cancellation point, and this runs after a reap
 * whose status must not be lost to a pending cancellation. */
static void close_borrowed(void *fd)
{
    fl__sys1(SYS_close, *(int *)fd);
}

/* For a handle without a pidfd whose process is known by its number: one
 * borrowed and checked (fl__proc_borrow_pidfd()); else -ENOSYS, and the
 * caller goes by the pid. */
static int borrow_known(const struct fl_proc *p)
{
    return p->pidfd < 0 && p->ident_ ? fl__proc_borrow_pidfd(p) : -ENOSYS;
}

int fl__reap_proc(struct fl_proc *p, siginfo_t *si, struct rusage *ru, enum fl__reap_wait how)
{
    /* A launch that failed is reaped as it settles, and its error is
     * what the reap reports, never the child's 127. */
    int err = fl__launch_settle(p);
    if (err)
        return err;
    long r;
    int borrowed = borrow_known(p);
    if (borrowed == -ESRCH) {
        r = -ECHILD;  /* reaped elsewhere: the pid is gone, or another's */
    } else if (borrowed >= 0) {
        pthread_cleanup_push(close_borrowed, &borrowed);
        r = fl__reap_by_pidfd(p->pid, borrowed, si, ru, how);
        pthread_cleanup_pop(1);
    } else {
        r = p->pidfd >= 0 ? fl__reap_by_pidfd(p->pid, p->pidfd, si, ru, how)
                          : waitid_usage(P_PID, p->pid, si, WEXITED, ru, how);
    }
    if (r == 0 || r == -ECHILD)
        p->state_ = PROC_REAPED;
    return (int)-r;
}

/* The pidfs inode number of the process behind pidfd, or 0. Since Linux
 * 6.9 pidfds live in pidfs, which numbers the processes from a 64-bit
 * count and gives no number twice in a boot (a 32-bit kernel, not within
 * 2^32 processes); before, every pidfd shares the one anonymous inode.
 * errno is kept: fl_kill() is async-signal-safe. */
static unsigned long long pidfd_ident(int pidfd, bool check_fs)
{
    int saved_errno = errno;
    struct stat st;
    struct statfs fs;
    bool ok = fstat(pidfd, &st) == 0 &&
              (!check_fs || (fstatfs(pidfd, &fs) == 0 && fs.f_type == PID_FS_MAGIC));
    errno = saved_errno;
    return ok ? (unsigned long long)st.st_ino : 0;
}

unsigned long long fl__pidfd_ident(int pidfd)
{
    return pidfd_ident(pidfd, true);
}

/* The identity of p's process once it is gone: no pidfd's number
 * matches it. */
#define IDENT_GONE(p) ((__typeof__((p)->ident_))-1)

/* Asked through a pidfd: 1, our child (running, or a zombie); 0, not, or
 * no longer; -1, cannot tell (P_PIDFD refused). Raw. */
static int pidfd_our_child(long pidfd)
{
    siginfo_t si;
    long r;
    do
        r = fl__sys6(SYS_waitid, P_PIDFD, pidfd, (long)&si, WEXITED | WNOHANG | WNOWAIT, 0, 0);
    while (r == -EINTR);
    return r == 0 ? 1 : r == -ECHILD ? 0 : -1;
}

/* A pidfd for the handle's pid, or -errno; no process there at all: the
 * handle's process is gone. */
static long open_by_pid(struct fl_proc *p)
{
    long fd = fl__sys2(SYS_pidfd_open, p->pid, 0);
    if (fd == -ESRCH)
        p->ident_ = IDENT_GONE(p);
    return fd;
}

/* Just after a start that made no pidfd: one for the pid, if that is
 * still our child. If not, a foreign reaper took it (SIGCHLD ignored,
 * waitpid(-1) elsewhere) and the pid may be another process's: the
 * handle's process is gone. No fd left: the handle does without. */
static void open_pidfd(struct fl_proc *p)
{
    long fd = open_by_pid(p);
    if (fd < 0)
        return;
    if (pidfd_our_child(fd) == 0) {
        fl__sys1(SYS_close, fd);
        p->ident_ = IDENT_GONE(p);
        return;
    }
    p->pidfd = (int)fd;
}

/* Without a pidfd, the numeric pid is ours only while the process is
 * our unreaped child: the kernel keeps the pid of a zombie reserved. */
static bool still_our_child(pid_t pid)
{
    siginfo_t si;
    long r;
    do  /* raw, so that fl_kill() stays async-signal-safe */
        r = fl__sys6(SYS_waitid, P_PID, pid, (long)&si, WEXITED | WNOHANG | WNOWAIT, 0, 0);
    while (r == -EINTR);
    return r == 0;
}

/* Where the calls on the handle can check a pidfd against the number
 * (pidfs, Linux 6.9): else the pid alone. made_with_it: the pidfd came
 * with the process (CLONE_PIDFD), and is its own whoever reaps it; one
 * opened by pid is the process's only while that is our child, which
 * waitid(P_PIDFD) says, or where that is refused, waitid(P_PID). */
static void identify_by(struct fl_proc *p, int pidfd, bool made_with_it)
{
    int ours = pidfd_our_child(pidfd);
    if (ours < 0)
        ours = made_with_it || still_our_child(p->pid);
    if (ours == 0)
        p->ident_ = IDENT_GONE(p);
    else
        p->ident_ = (__typeof__(p->ident_))pidfd_ident(pidfd, true);
}

/* The pid is looked up anew, so the process may have been reaped
 * elsewhere since the start, and its pid given to another: only our own
 * child's number is taken; one that is not ours, or no process, means
 * the handle's process is gone. */
void fl__proc_identify(struct fl_proc *p)
{
    long fd = open_by_pid(p);
    if (fd < 0)
        return;
    identify_by(p, (int)fd, false);
    fl__sys1(SYS_close, fd);
}

void fl__proc_adopt(struct fl_proc *p, pid_t pid, int pidfd, bool no_pidfd)
{
    p->pid = pid;
    if (no_pidfd && pidfd >= 0) {
        /* Made with the process: its number is that process's, whoever
         * reaps it later. */
        identify_by(p, pidfd, true);
        fl__sys1(SYS_close, pidfd);
        pidfd = -1;
    }
    p->pidfd = pidfd;
    if (pidfd < 0 && !no_pidfd)
        open_pidfd(p);
}

int fl__proc_borrow_pidfd(const struct fl_proc *p)
{
    long fd = fl__sys2(SYS_pidfd_open, p->pid, 0);
    if (fd < 0)
        return fd == -ESRCH || (fd == -EINVAL && p->ident_) ? -ESRCH : -ENOSYS;
    if (p->ident_) {
        unsigned long long ident = pidfd_ident((int)fd, false);
        if (!ident || (__typeof__(p->ident_))ident != p->ident_) {
            fl__sys1(SYS_close, fd);
            return ident ? -ESRCH : -ENOSYS;
        }
    }
    return (int)fd;
}

char fl__pid_state(pid_t pid)
{
    char path[32] = "/proc/", digits[12], stat[128];
    int nd = 0, at = 6;
    for (unsigned n = (unsigned)pid; nd == 0 || n; n /= 10)
        digits[nd++] = (char)('0' + n % 10);
    while (nd)
        path[at++] = digits[--nd];
    memcpy(path + at, "/stat", 6);
    long fd = fl__sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    long n = fl__sys3(SYS_read, fd, stat, sizeof stat - 1);
    fl__sys1(SYS_close, fd);
    if (n <= 0)
        return 0;
    stat[n] = '\0';
    /* "pid (comm) S ...": the comm may hold ") ", so the last one counts. */
    const char *close_paren = NULL;
    for (const char *c = stat; *c; c++)
        if (c[0] == ')' && c[1] == ' ')
            close_paren = c;
    return close_paren ? close_paren[2] : 0;
}

/* Where nothing can tell the pid's process from the pidfd's: a pidfd
 * readable (its process has exited) while the pid's process runs names
 * another process by that pid; 0 then. 1 where the pid may still be the
 * handle's: a zombie there (one a tracer holds is not yet ours to reap),
 * or no /proc to ask. Raw system calls only. */
static int pid_may_be_the_pidfds(long pidfd, pid_t pid)
{
    struct pollfd pfd = { .fd = (int)pidfd, .events = POLLIN };
    struct timespec now = { 0, 0 };
    if (fl__sys5(SYS_ppoll, &pfd, 1, &now, 0, 8) != 1)
        return 1;  /* running: its pid is its own, or no answer */
    siginfo_t si;
    si.si_pid = 0;
    long r;
    do
        r = fl__sys5(SYS_waitid, P_PID, pid, (long)&si, WEXITED | WNOHANG | WNOWAIT, 0);
    while (r == -EINTR);
    if (r == 0 && si.si_pid == pid)
        return 1;
    char state = fl__pid_state(pid);
    return state == 0 || state == 'Z';
}

/* Where waitid(P_PIDFD) cannot say: the pid, our unreaped child, names
 * the pidfd's process as far as anything shows. */
static bool pid_still_ours(int pidfd, pid_t pid)
{
    int names = fl__pid_names_pidfd(pidfd, pid);
    if (names == 0 || names == FL__NOT_A_PIDFD)
        return false;
    return (names > 0 || pid_may_be_the_pidfds(pidfd, pid)) && still_our_child(pid);
}

bool fl__proc_unreaped(const struct fl_proc *p)
{
    /* Where pidfd_our_child() cannot tell (P_PIDFD refused), the pid, if
     * it still names the process, is asked. */
    int ours = p->pidfd >= 0 ? pidfd_our_child(p->pidfd) : -1;
    if (p->pidfd >= 0)
        return ours < 0 ? pid_still_ours(p->pidfd, p->pid) : ours == 1;
    int fd = borrow_known(p);
    if (fd == -ESRCH)
        return false;
    if (fd < 0)
        return still_our_child(p->pid);
    ours = pidfd_our_child(fd);
    bool unreaped = ours < 0 ? pid_still_ours(fd, p->pid) : ours == 1;
    fl__sys1(SYS_close, fd);
    return unreaped;
}

/* Where pidfd_send_signal() cannot say: a file whose file system is
 * neither pidfs (Linux 6.9) nor the anonymous inodes' (before) is no
 * pidfd. errno kept. */
static bool surely_no_pidfd(int fd)
{
    int saved_errno = errno;
    struct statfs fs;
    bool no = fstatfs(fd, &fs) == 0 && fs.f_type != PID_FS_MAGIC &&
              fs.f_type != ANON_INODE_FS_MAGIC;
    errno = saved_errno;
    return no;
}

int fl__pid_names_pidfd(int pidfd, pid_t pid)
{
    long r = fl__sys4(SYS_pidfd_send_signal, pidfd, 0, 0, 0);
    if (r == 0 || r == -ESRCH)
        return r == 0;  /* there (a zombie too), or reaped */
    if (r == -EBADF || surely_no_pidfd(pidfd))
        return FL__NOT_A_PIDFD;  /* closed or replaced behind the handle's back */
    /* Refused (a filter; EPERM too where we may not signal it, a setuid
     * program): by the process's identity, which pidfs gives. */
    long fd = fl__sys2(SYS_pidfd_open, pid, 0);
    if (fd == -ESRCH)
        return 0;
    if (fd < 0)
        return -1;
    unsigned long long ours = pidfd_ident(pidfd, true), now = pidfd_ident((int)fd, true);
    fl__sys1(SYS_close, fd);
    return !ours || !now ? -1 : ours == now;
}

int fl__proc_pollfd(const struct fl_proc *p, int *fd)
{
    *fd = p->pidfd;
    if (p->pidfd >= 0)
        return 0;
    int borrowed = fl__proc_borrow_pidfd(p);
    if (borrowed == -ESRCH)
        return ECHILD;
    if (borrowed < 0)
        return still_our_child(p->pid) ? ENOSYS : ECHILD;
    int ours = pidfd_our_child(borrowed);
    if (ours == 0 || (ours < 0 && !still_our_child(p->pid))) {  /* < 0: before P_PIDFD */
        fl__sys1(SYS_close, borrowed);
        return ECHILD;
    }
    *fd = borrowed;
    return 0;
}

/* A handle without a pidfd (FL_NO_PIDFD) borrows one for a timed wait, so
 * that it sleeps in poll(). Opened first, then checked: the pidfd of a
 * process that is not our child (the pid reaped elsewhere and reused)
 * gives ECHILD, and nothing waits on the stranger. Without pidfd_open,
 * the wait polls and reaps on success: *reaped says so. */
static int wait_borrowing(const struct fl_proc *p, int timeout_ms, siginfo_t *si, bool *reaped)
{
    int fd, r = fl__proc_pollfd(p, &fd);
    if (r == ENOSYS) {
        *reaped = true;
        return wait_polling(p->pid, timeout_ms, si);
    }
    if (r)
        return r;
    /* poll() is a cancellation point: the borrowed pidfd must not leak. */
    pthread_cleanup_push(close_borrowed, &fd);
    r = fl__wait_readable(fd, timeout_ms);
    pthread_cleanup_pop(1);
    return r;
}

int fl_wait(struct fl_proc *p, int timeout_ms, int *status)
{
    if (!p || timeout_ms < -1)
        return EINVAL;
    if (p->pid <= 0 || p->state_ == PROC_REAPED)
        return ESRCH;
    int saved_errno = errno, r = 0;
    bool reaped = false;
    siginfo_t si = { 0 };
    enum fl__reap_wait how = timeout_ms >= 0 ? FL__REAP_ENDED
                             : p->launch_   ? FL__REAP_LOOK
                                            : FL__REAP_WAIT;
    if (timeout_ms >= 0 && p->pidfd < 0)
        r = wait_borrowing(p, timeout_ms, &si, &reaped);
    else if (timeout_ms >= 0)
        r = fl__wait_readable(p->pidfd, timeout_ms);
    else  /* the settle's own wait for the exec is not cancellable */
        fl__launch_await_cancellable(p);
    if (r == ECHILD) {  /* reaped elsewhere, with no pidfd: a launch's error wins */
        p->state_ = PROC_REAPED;  /* and its pid, maybe another's now, is not waited for */
        r = fl__launch_error_or(p, r);
    }
    if (!r && !reaped)
        r = fl__reap_proc(p, &si, NULL, how);
    else if (!r && p->launch_) {  /* reaped above: a launch's error wins */
        p->state_ = PROC_REAPED;      /* and the settle must not reap again */
        r = fl__launch_settle(p);
    }
    /* Only a reaped process, or one whose status is gone for good, is
     * done with: after any other error the caller may wait again. */
    if (r == 0 || r == ECHILD)
        p->state_ = PROC_REAPED;
    if (!r && status)
        *status = fl__status_of(&si);
    errno = saved_errno;
    return r;
}

/* Some container filters refuse pidfd_send_signal() (EPERM or ENOSYS)
 * while they let clone() hand out pidfds. A pidfd that still names our
 * unreaped child tells that its pid names it too; the kill by pid then
 * has the window of a handle without a pidfd, no more. Where the pidfd
 * cannot say (waitid(P_PIDFD) refused too), the pid is taken as a handle
 * without a pidfd takes it: while it is our unreaped child, and nothing
 * shows it another process than the pidfd's. A real EPERM (a child of
 * another user) is EPERM from kill() as well. */
static long signal_through(long pidfd, pid_t pid, int sig)
{
    long r = fl__sys4(SYS_pidfd_send_signal, pidfd, sig, 0, 0);
    if (r != -EPERM && r != -ENOSYS)
        return r;
    int ours = pidfd_our_child(pidfd), names = ours < 0 ? fl__pid_names_pidfd((int)pidfd, pid) : 1;
    if (names == FL__NOT_A_PIDFD)
        return -EBADF;
    if (ours < 0 && names < 0 && !pid_may_be_the_pidfds(pidfd, pid))
        return -ESRCH;
    if (ours == 1 || (ours < 0 && names != 0 && still_our_child(pid)))
        r = fl__sys2(SYS_kill, pid, sig);
    return r;
}

int fl_kill(struct fl_proc *p, int sig)
{
    if (!p || sig < 0 || sig >= NSIG)
        return EINVAL;
    if (p->pid <= 0 || p->state_ == PROC_REAPED)
        return ESRCH;
    long r;
    int borrowed = borrow_known(p);
    if (borrowed >= 0) {  /* its own process, running or a zombie */
        /* and still our child: not in a fork() child of ours, say */
        r = pidfd_our_child(borrowed) ? signal_through(borrowed, p->pid, sig) : -ESRCH;
        fl__sys1(SYS_close, borrowed);
    } else if (p->pidfd < 0 && (borrowed == -ESRCH || !still_our_child(p->pid))) {
        return ESRCH;
    } else {
        r = p->pidfd >= 0 ? signal_through(p->pidfd, p->pid, sig) : fl__sys2(SYS_kill, p->pid, sig);
    }
    return r < 0 ? (int)-r : 0;
}

int fl__killpg(struct fl_proc *p, int sig, bool *leader_only)
{
    if (leader_only)
        *leader_only = false;
    if (!p || sig < 0 || sig >= NSIG)
        return EINVAL;
    if (p->pid <= 0 || p->state_ == PROC_REAPED)
        return ESRCH;
    if (!fl__launch_await_group(p)) {
        if (leader_only)
            *leader_only = true;
        return fl_kill(p, sig);
    }
    /* Still our unreaped child, so its pid, the group's id, is reserved.
     * The check must see through a foreign reaper: WNOWAIT. */
    if (!fl__proc_unreaped(p))
        return ESRCH;
    long r = fl__sys2(SYS_kill, -p->pid, sig);
    return r < 0 ? (int)-r : 0;
}

int fl_killpg(struct fl_proc *p, int sig)
{
    return fl__killpg(p, sig, NULL);
}

void fl_close(struct fl_proc *p)
{
    /* pid 0 is a handle that was never filled: an all-zero struct holds
     * fd numbers 0, which are not its to close. */
    if (!p || p->pid <= 0)
        return;
    /* A pending launch: wait for the exec (or the failure, reaped there)
     * before the record the child reads is freed, or, for a child stopped
     * before its exec, leave the record to be settled later. */
    fl__launch_close(p);
    if (p->pidfd >= 0)
        fl__sys1(SYS_close, p->pidfd);
    for (int i = 0; i < 3; i++)
        if (p->stdio[i] >= 0)
            fl__sys1(SYS_close, p->stdio[i]);
    if (p->pty >= 0)
        fl__sys1(SYS_close, p->pty);
    *p = (struct fl_proc){ .pid = 0, .pidfd = -1, .stdio = { -1, -1, -1 }, .pty = -1,
                           .backend = p->backend, .state_ = PROC_REAPED,
                           .start_ns_ = p->start_ns_ };
}
