/* child.c: the child, from clone (or fork) to exec.
 *
 * NOTE: under CLONE_VM this code runs in the parent's memory, on the
 * suspended parent thread's child stack. It may only make raw system
 * calls (sys.h): no malloc, no stdio, no errno, no lock, and no libc wrapper
 * that keeps state (glibc's setuid() signals every thread of the parent).
 * The only parent memory it writes is p->cerr, p->files_unshare_failed,
 * p->child_ran, p->walk_dir, p->e2big_stack(_known), p->stops_held,
 * p->rlimits_late, p->presence_noted, p->cand_present, p->cand_err[],
 * the staged fds in p->acts and p->sh_argv[1], all in the plan of the
 * spawn that started it.
 * It starts with every signal blocked, and unblocks only after every
 * handler is gone, so no handler of the parent ever runs here.
 *
 * The file is built without sanitizers: their runtime allocates and locks.
 */
/* GCC may turn a byte loop into a call to the libc's strlen() or memset(),
 * which the child must not make. (A pragma rather than a flag: clang, which
 * the static analysis runs, knows no such flag.) clang does it too, for a
 * loop that zeroes bytes: the child has none. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <sys/prctl.h>

#include "internal.h"
#include "sys.h"

#define CHILD __attribute__((noinline))
#define CHILD_INLINE static inline __attribute__((always_inline))


/* The limits come in two rounds. Those that raise a soft limit (or
 * keep it) at the start of the setup: they give it room, as prlimit(1)
 * gives its command (an fd map above the caller's RLIMIT_NOFILE, a nice
 * below what the caller's RLIMIT_NICE allows). Those that lower one
 * after every step that opens an fd (cgroup.procs, oom_score_adj, the
 * stdio files, the dups aside), before the credentials (a hard limit
 * raised needs the caller's privilege): a low RLIMIT_NOFILE is the
 * program's, not the setup's. Of two entries for one resource the last
 * is the one set. A limit the kernel will not tell is set in the first
 * round, so that its error comes there. */
static CHILD int set_rlimits(struct fl__plan *p, bool raising)
{
    if (raising)
        p->rlimits_late = 0;
    for (size_t i = 0; i < p->cmd->nrlimits; i++) {
        if (fl__rlimit_overridden(p->cmd, i))
            continue;
        const struct fl_rlimit *l = &p->cmd->rlimits[i];
        uint64_t v[2] = { l->soft, l->hard }, now[2] = { 0, 0 };
        if (l->soft == RLIM_INFINITY)
            v[0] = ~(uint64_t)0;
        if (l->hard == RLIM_INFINITY)
            v[1] = ~(uint64_t)0;
        /* The first round's answer, kept for the second: one question of
         * the kernel per limit (only the first 64 entries keep it). */
        uint64_t bit = i < 64 ? (uint64_t)1 << i : 0;
        bool raises;
        if (!raising && bit)
            raises = !(p->rlimits_late & bit);
        else
            raises = fl__sys4(SYS_prlimit64, 0, l->resource, 0, now) < 0 || v[0] >= now[0];
        if (raising && !raises)
            p->rlimits_late |= bit;
        if (raises != raising)
            continue;
        long r = fl__sys4(SYS_prlimit64, 0, l->resource, v, 0);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_RLIMIT, (int)i, r);
    }
    return 0;
}

static CHILD int set_placement(struct fl__plan *p)
{
    long r = 0;
    if (p->flags & FL_SETSID) {
        r = fl__sys0(SYS_setsid);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_SETSID, -1, r);
    } else if (p->flags & (FL_NEW_PGROUP | FL_JOIN_PGROUP)) {
        pid_t g = (p->flags & FL_JOIN_PGROUP) ? p->cmd->pgid : 0;
        r = fl__sys2(SYS_setpgid, 0, g);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_SETPGID, -1, r);
    }
    if (set_rlimits(p, true) < 0)
        return -1;
    if (p->flags & FL_SET_UMASK)
        fl__sys1(SYS_umask, p->cmd->umask & 0777);
    if (p->cgroup_procs && p->cgroup_fd < 0) {
        int fd = (int)fl__sys4(SYS_openat, AT_FDCWD, p->cgroup_procs, O_WRONLY | O_CLOEXEC, 0);
        if (fd < 0)
            return fl__child_fail(p, FL_STEP_CGROUP, -1, fd);
        r = fl__sys3(SYS_write, fd, "0", 1);
        fl__sys1(SYS_close, fd);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_CGROUP, -1, r);
    }
    return 0;
}

static CHILD int change_dir(struct fl__plan *p)
{
    long r = p->cmd->cwd ? fl__sys1(SYS_chdir, p->cmd->cwd) : 0;
    return r < 0 ? fl__child_fail(p, FL_STEP_CHDIR, -1, r) : 0;
}

/* The fork backend's parent learns of best-effort settings that did not
 * apply from a record with no error, sent before the rest of the setup. */
static CHILD int report_not_applied(struct fl__plan *p)
{
    if (p->err_fd >= 0 && p->cerr.not_applied)
        fl__sys3(SYS_write, p->err_fd, &p->cerr, sizeof p->cerr);
    return 0;
}

static CHILD long clear_cloexec(int fd)
{
    return fl__sys3(SYS_fcntl, fd, F_SETFD, 0);
}

CHILD bool fl__is_target(const struct fl__plan *p, long fd)
{
    for (size_t i = 0; i < p->nacts; i++)
        if (p->acts[i].child_fd == fd)
            return true;
    return false;
}

/* Above every fd the plan names, when the fd limit leaves room there;
 * at the limit (F_DUPFD says EINVAL, or EMFILE), the lowest free number
 * from 3 up that no action targets (not 0-2: FL_TO_STDOUT reads fd 1). A
 * copy that lands on a target is closed once the search has moved past
 * it. */
CHILD long fl__dup_aside(const struct fl__plan *p, int fd)
{
    long r = fl__sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, p->stage_min);
    if (r != -EINVAL && r != -EMFILE)
        return r;
    long lo = 3, passed = -1;
    for (;;) {
        r = fl__sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, lo);
        if (passed >= 0)
            fl__sys1(SYS_close, passed);
        if (r < 0 || !fl__is_target(p, r))
            return r;
        passed = r;
        lo = r + 1;
    }
}

static CHILD int apply_fds(struct fl__plan *p)
{
    long r;
    if (p->stage)
        for (size_t i = 0; i < p->nacts; i++) {
            struct fl__act *a = &p->acts[i];
            if (a->kind != FL__ACT_DUP || a->staged_fd == -2)
                continue;
            r = fl__dup_aside(p, a->src_fd);
            if (r < 0)
                return fl__child_fail(p, FL_STEP_DUP, a->child_fd, r);
            a->staged_fd = (int)r;
        }
    for (size_t i = 0; i < p->nacts; i++) {
        const struct fl__act *a = &p->acts[i];
        int src;
        if (a->kind == FL__ACT_OPEN) {
            r = fl__sys4(SYS_openat, AT_FDCWD, a->path, a->oflags | O_CLOEXEC, a->mode);
            if (r < 0)
                return fl__child_fail(p, FL_STEP_OPEN, a->child_fd, r);
            src = (int)r;
        } else {
            src = a->staged_fd >= 0 ? a->staged_fd : a->src_fd;
        }
        /* dup3() onto itself is EINVAL, and a fd passed as itself must
         * lose FD_CLOEXEC to survive exec. */
        if (src == a->child_fd)
            r = clear_cloexec(src);
        else
            r = fl__sys3(SYS_dup3, src, a->child_fd, 0);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_DUP, a->child_fd, r);
    }
    return 0;
}

/* The terminal, once the fds are in place: the controlling terminal of
 * the session setsid() made (FL_PTY, FL_SETCTTY), or the foreground of
 * the caller's (FL_FOREGROUND). TIOCSPGRP from a background group sends
 * SIGTTOU unless it is blocked: the default would stop this child, and
 * the vfork parent with it. */
static CHILD int set_terminal(struct fl__plan *p)
{
    long r;
    if (p->ctty_fd >= 0) {
        r = fl__sys3(SYS_ioctl, p->ctty_fd, TIOCSCTTY, 0);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_SETCTTY, p->ctty_fd, r);
    }
    if (p->fg_fd >= 0) {
        uint64_t ttou = (uint64_t)1 << (SIGTTOU - 1), old;
        int pgrp = (int)fl__sys1(SYS_getpgid, 0);
        fl__sys4(SYS_rt_sigprocmask, SIG_BLOCK, &ttou, &old, 8);
        r = fl__sys3(SYS_ioctl, p->fg_fd, TIOCSPGRP, &pgrp);
        fl__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_TCSETPGRP, p->fg_fd, r);
    }
    return 0;
}

struct fl__dirent64 {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

static CHILD bool kept(const struct fl__plan *p, int fd)
{
    for (size_t i = 0; i < p->nkeep; i++)
        if (p->keep[i] == fd)
            return true;
    return fd == p->err_fd;
}

/* Where close_range() is missing or denied (seccomp), close what
 * /proc/self/fd lists. Without /proc the spawn fails: closing nothing
 * silently would leak every fd. With cloexec_only, close just what exec
 * would close (see exec_once). */
static CHILD long close_by_walk(const struct fl__plan *p, bool cloexec_only)
{
    char buf[1024] __attribute__((aligned(8)));
    int dfd = p->walk_dir;
    if (dfd >= 0)
        fl__sys3(SYS_lseek, dfd, 0, SEEK_SET);
    else
        dfd = (int)fl__sys4(SYS_openat, AT_FDCWD, "/proc/self/fd",
                            O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (dfd < 0)
        return dfd;
    for (;;) {
        long n = fl__sys3(SYS_getdents64, dfd, buf, sizeof buf);
        if (n <= 0) {
            if (dfd != p->walk_dir)
                fl__sys1(SYS_close, dfd);
            return n;
        }
        for (long off = 0; off < n;) {
            const struct fl__dirent64 *d = (const void *)(buf + off);
            off += d->reclen;
            int fd = 0;
            const char *c = d->name;
            if (*c < '0' || *c > '9')
                continue;
            while (*c >= '0' && *c <= '9')
                fd = fd * 10 + (*c++ - '0');
            if (fd == dfd || kept(p, fd))
                continue;
            long fdflags = cloexec_only ? fl__sys2(SYS_fcntl, fd, F_GETFD) : 0;
            if (cloexec_only ? fdflags > 0 && (fdflags & FD_CLOEXEC) : fd > 2)
                fl__sys1(SYS_close, fd);
        }
    }
}

/* Closes the ranges between the fds that survive: the kept child fds
 * (sorted) and the fork backend's error pipe, which may sit anywhere. */
static CHILD int close_other_fds(struct fl__plan *p)
{
    unsigned lo = 3;
    long r = 0;
    size_t i = 0;
    bool err_pending = p->err_fd >= 0;
    while (r == 0 && (i < p->nkeep || err_pending)) {
        unsigned k;
        if (err_pending && (i == p->nkeep || (unsigned)p->err_fd < (unsigned)p->keep[i])) {
            k = (unsigned)p->err_fd;
            err_pending = false;
        } else {
            k = (unsigned)p->keep[i++];
        }
        if (k > lo)
            r = fl__sys3(SYS_close_range, lo, k - 1, 0);
        if (k >= lo)
            lo = k + 1;
    }
    if (r == 0)
        r = fl__sys3(SYS_close_range, lo, ~0u, 0);
    int walked = r == -ENOSYS || r == -EPERM;  /* .index 1: the walk failed */
    if (walked)
        r = close_by_walk(p, false);
    return r < 0 ? fl__child_fail(p, FL_STEP_CLOSE_FDS, walked ? 1 : -1, r) : 0;
}

static CHILD int set_credentials(struct fl__plan *p)
{
    const struct fl_cmd *c = p->cmd;
    long r;
    if (p->flags & FL_SET_GROUPS) {
        r = fl__sys2(SYS_setgroups, c->ngroups, c->groups);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_SETGROUPS, -1, r);
    }
    if (p->flags & FL_SET_GID) {
        r = fl__sys3(SYS_setresgid, c->gid, c->gid, c->gid);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_SETGID, -1, r);
    }
    if (p->flags & FL_SET_UID) {
        r = fl__sys3(SYS_setresuid, c->uid, c->uid, c->uid);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_SETUID, -1, r);
    }
    return 0;
}

/* After the credential change, which clears it. A parent that died
 * before prctl() took effect is caught by the getppid() check, which a
 * new PID namespace cannot make (its init's parent reads as 0). The
 * signal is for the spawning thread's end, which getppid() cannot see
 * (it names the process): a launch's thread may end during the setup, and
 * tgkill(0) says so, for any thread but the main one, which stays a
 * zombie while the process lives. Both are looked at once the child's
 * signals are as its program will have them (send_pdeathsig_if_gone()):
 * one the caller ignores, which the child resets, would be lost before. */
static CHILD int set_pdeathsig(struct fl__plan *p)
{
    int sig = p->cmd->pdeathsig;
    if (!sig)
        return 0;
    long r = fl__sys2(SYS_prctl, PR_SET_PDEATHSIG, sig);
    return r < 0 ? fl__child_fail(p, FL_STEP_PDEATHSIG, -1, r) : 0;
}

/* Whether the parent, or the spawning thread, is gone: looked at once the
 * signals are reset, so that a death after the look is the kernel's to
 * signal, with the dispositions the program will have. */
static CHILD void send_pdeathsig_if_gone(const struct fl__plan *p)
{
    int sig = p->cmd->pdeathsig;
    if (!sig)
        return;
    bool own_pid_ns = p->box && (p->box->ns_clone & CLONE_NEWPID);
    bool gone = !own_pid_ns && fl__sys0(SYS_getppid) != p->parent_pid;
    if (!own_pid_ns && p->parent_tid != p->parent_pid &&
        fl__sys3(SYS_tgkill, p->parent_pid, p->parent_tid, 0) == -ESRCH)
        gone = true;
    if (gone)
        fl__sys2(SYS_kill, fl__sys0(SYS_getpid), sig);
}

/* The kernel's struct sigaction for rt_sigaction(2). */
struct fl__ksigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};

/* The stat line is scanned eight bytes at a time, without a branch per
 * byte or per field: a byte at a time, the scan for its last ')' and 29
 * spaces took the child a quarter of what the pread took, and this takes
 * a third less. Bytes go low to high in each word. The helpers are
 * inlined into their one caller: as calls, once per word, they made the
 * parse cost about 1100 cycles; inlined, about 420. */
#define BYTE_ONES 0x0101010101010101ULL
#define BYTE_HIGHS 0x8080808080808080ULL

CHILD_INLINE uint64_t stat_word(const uint64_t *w, size_t i)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(w[i]);
#else
    return w[i];
#endif
}

/* The high bit of every byte of w that is c, and no other bit. */
CHILD_INLINE uint64_t bytes_equal(uint64_t w, unsigned char c)
{
    uint64_t x = w ^ (BYTE_ONES * c);
    return ~(((x & ~BYTE_HIGHS) + ~BYTE_HIGHS) | x) & BYTE_HIGHS;
}

/* The offset just past the k-th space (k > 0) at or after offset from;
 * 0 when the line has fewer. */
CHILD_INLINE size_t past_spaces(const uint64_t *w, size_t nwords, size_t from, unsigned k)
{
    for (size_t i = from / 8; i < nwords; i++) {
        uint64_t m = bytes_equal(stat_word(w, i), ' ');
        if (i == from / 8)
            m &= ~(uint64_t)0 << (from % 8 * 8);
        unsigned count = (unsigned)(((m >> 7) * BYTE_ONES) >> 56);
        if (count < k) {
            k -= count;
            continue;
        }
        while (--k)
            m &= m - 1;
        return i * 8 + (size_t)__builtin_ctzll(m) / 8 + 1;
    }
    return 0;
}

/* The number at offset at, which must end at a space. */
CHILD_INLINE bool number_at(const char *line, size_t n, size_t at, uint64_t *v)
{
    uint64_t r = 0;
    if (at >= n || line[at] < '0' || line[at] > '9')
        return false;
    for (; at < n && line[at] >= '0' && line[at] <= '9'; at++) {
        if (r > (UINT64_MAX - 9) / 10)
            return false;
        r = r * 10 + (uint64_t)(line[at] - '0');
    }
    *v = r;
    return at < n && line[at] == ' ';
}

/* Which of signals 1-31 to set to SIG_DFL: the ones the process ignores,
 * read from its stat in /proc (see ignored_signals.c), or all of them
 * where that read cannot tell exactly: no stat, not the expected one, or
 * a process with other threads, which may have changed a disposition
 * since the clone copied them. *caught_stops gets the stop signals the
 * process has a handler for, as far as the stat says (see
 * hold_off_stops()). It must run before the child closes any fd: the
 * stat's may be among them. */
static CHILD uint64_t low_signals_to_reset(const struct fl__plan *p, uint64_t *caught_stops)
{
    uint64_t w[64];
    char *line = (char *)w;
    *caught_stops = 0;
    if (p->stat_fd < 0)
        return FL__LOW_SIGNALS;
    long got = fl__sys4(SYS_pread64, p->stat_fd, w, sizeof w, 0);
    if (got <= 0 || (size_t)got >= sizeof w)
        return FL__LOW_SIGNALS;
    size_t n = (size_t)got, nwords = (n + 7) / 8, close_paren = 0;
    if (n % 8) {  /* the bytes past the line: zero, neither ' ' nor ')' */
        unsigned kept_bits = (unsigned)(n % 8) * 8;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w[n / 8] &= ~(uint64_t)0 << (64 - kept_bits);
#else
        w[n / 8] &= ~(uint64_t)0 >> (64 - kept_bits);
#endif
    }
    uint64_t pid, threads, ignored;
    size_t comm = past_spaces(w, nwords, 0, 1);
    if (!number_at(line, n, 0, &pid) || pid != (uint64_t)p->stat_pid || !comm || comm >= n ||
        line[comm] != '(')
        return FL__LOW_SIGNALS;
    /* "pid (comm) state ...": comm may hold anything, ')' too, but every
     * field after it is plain, so the last ')' ends it. */
    for (size_t i = 0; i < nwords; i++) {
        uint64_t m = bytes_equal(stat_word(w, i), ')');
        if (m)
            close_paren = i * 8 + (size_t)(63 - __builtin_clzll(m)) / 8;
    }
    if (close_paren <= comm || n - close_paren < 4 || line[close_paren + 1] != ' ' ||
        line[close_paren + 3] != ' ')
        return FL__LOW_SIGNALS;
    /* Fields 4 to 19 end in 16 spaces, and 20 to 32 in 13 more. */
    size_t threads_at = past_spaces(w, nwords, close_paren + 4, 16);
    size_t ignored_at = threads_at ? past_spaces(w, nwords, threads_at, 13) : 0;
    if (!ignored_at || !number_at(line, n, threads_at, &threads) ||
        !number_at(line, n, ignored_at, &ignored))
        return FL__LOW_SIGNALS;
    uint64_t caught;
    size_t caught_at = past_spaces(w, nwords, ignored_at, 1);
    if (caught_at && number_at(line, n, caught_at, &caught))
        *caught_stops = caught & FL__STOP_SIGNALS;
    return threads == 1 ? ignored & FL__LOW_SIGNALS : FL__LOW_SIGNALS;
}

/* Back to SIG_DFL, of the signals in which: every disposition, unless
 * FL_KEEP_SIGNALS; then only the handlers (none is left when clone3
 * cleared them) and .sigdefault.
 *
 * By default, of signals 1-31 the ones in low (low_signals_to_reset():
 * the ignored ones, or all 29 without asking where it cannot tell) are set
 * to SIG_DFL, one system call each. Opening /proc/self/stat here instead
 * would cost about four times the 29 calls: a new process's /proc entries
 * must first be made. Real-time signals the process ignores are asked
 * once per process (see FL_KEEP_SIGNALS in forkless.h). */
static CHILD int reset_signals(struct fl__plan *p, uint64_t low, uint64_t which,
                               uint64_t *drop_if_pending)
{
    const struct fl__ksigaction dfl = { SIG_DFL, 0, 0, 0 };
    bool keep = p->flags & FL_KEEP_SIGNALS;
    uint64_t must = p->sigdefault_bits | p->stops_held, ask = 0;
    long r;
    if (!keep)
        must |= p->sighand_cleared ? low | p->rt_ignored : ~(uint64_t)0;
    else if (!p->sighand_cleared)
        ask = ~must;  /* clone() and fork() keep handlers: find them */
    must &= which;
    ask &= which;
    /* Only the signals to change: a loop over all 64 costs a spawn
     * measurably in this cold child. */
    uint64_t todo = (must | ask) & ~(FL__SIG_BIT(SIGKILL) | FL__SIG_BIT(SIGSTOP));
    for (; todo; todo &= todo - 1) {
        int sig = __builtin_ctzll(todo) + 1;
        uint64_t bit = FL__SIG_BIT(sig);
        if (!(must & bit)) {
            struct fl__ksigaction old;
            r = fl__sys4(SYS_rt_sigaction, sig, 0, &old, 8);
            if (r < 0 || old.handler == SIG_IGN || old.handler == SIG_DFL)
                continue;
        }
        struct fl__ksigaction old = { SIG_DFL, 0, 0, 0 };
        r = fl__sys4(SYS_rt_sigaction, sig, &dfl, &old, 8);
        if (r < 0 && r != -EINVAL)
            return fl__child_fail(p, FL_STEP_SIGNALS, sig, r);
        /* A stop that came, blocked, while a spawn's child still had the
         * caller's handler is the caller's too (see hold_off_stops()). */
        if (r == 0 && (old.handler == SIG_IGN || ((bit & FL__STOP_SIGNALS) && !p->exec_word &&
                                                  old.handler != SIG_DFL)))
            *drop_if_pending |= bit;
    }
    return 0;
}

/* .sigignore, of the signals in which. */
static CHILD int ignore_signals(struct fl__plan *p, uint64_t which)
{
    const struct fl__ksigaction ign = { SIG_IGN, 0, 0, 0 };
    uint64_t set = p->sigignore_bits & which;
    for (int sig = 1; set && sig <= 64; sig++)
        if (set & FL__SIG_BIT(sig)) {
            long r = fl__sys4(SYS_rt_sigaction, sig, &ign, 0, 8);
            if (r < 0)
                return fl__child_fail(p, FL_STEP_SIGNALS, sig, r);
        }
    return 0;
}

/* Before the setup: the signals that end a process, so that one the
 * caller ignores is not thrown away for the child's copy of that SIG_IGN
 * while the setup runs (a launch's caller has the pid at once, and a
 * .pdeathsig may come), and ends a setup that waits as it would end the
 * program; and the ones of them .sigignore names. A launch's child, which
 * started with every signal blocked (see start_clone3()), then takes its
 * setup mask. Signals that stop the process or dump core keep a SIG_IGN
 * of the caller's until the end of the setup: a stopped child holds a
 * spawn's caller (and a launch's fl_close()), and before Linux 5.16 a core
 * dump takes down every process that shares the memory, the caller too. */
static CHILD int reset_ending_signals(struct fl__plan *p, uint64_t low)
{
    uint64_t unused = 0;  /* these end a process: none is dropped */
    if (reset_signals(p, low, FL__ENDING_SIGNALS, &unused) < 0 ||
        ignore_signals(p, FL__ENDING_SIGNALS) < 0)
        return -1;
    long r = p->setup_mask_set   ? fl__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &p->setup_mask, 0, 8)
             : p->ending_unblock ? fl__sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &p->ending_unblock, 0, 8)
                                 : 0;
    return r < 0 ? fl__child_fail(p, FL_STEP_SIGNALS, -1, r) : 0;
}

/*
 * A stop signal the caller handles is at SIG_DFL in a clone3() child from
 * the start (CLONE_CLEAR_SIGHAND): a ^Z to the group while a spawn's
 * setup waits (a FIFO's open, a slow file system) would stop the child,
 * and hold the caller in the vfork until a SIGCONT, its own handler unable
 * to run meanwhile. The caller took that ^Z in its handler; the child
 * ignores it through the setup, as it does a stop the caller ignores, and
 * resets it with the others at the end. One that comes in the microseconds
 * before this still stops the child: blocking the stops around every
 * clone would cost the parent a question and two calls a spawn. Only a
 * spawn's child reads the stat that says which are caught: a launch's
 * caller does not wait.
 */
static CHILD int hold_off_stops(struct fl__plan *p, uint64_t caught)
{
    const struct fl__ksigaction ign = { SIG_IGN, 0, 0, 0 };
    if (!p->sighand_cleared)
        caught = 0;  /* clone() and fork() keep the handler through the setup, blocked */
    for (; caught; caught &= caught - 1) {
        int sig = __builtin_ctzll(caught) + 1;
        long r = fl__sys4(SYS_rt_sigaction, sig, &ign, 0, 8);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_SIGNALS, sig, r);
        p->stops_held |= FL__SIG_BIT(sig);  /* back to SIG_DFL at the end */
    }
    return 0;
}

/* At the end of the setup: the other signals, their .sigignore, then the
 * child's mask. One of them that came while the child ignored it, and
 * blocked it (a mask of the caller's or of the library's), is still
 * pending: the kernel keeps a blocked signal even when it is ignored. It
 * is dropped, as it would have been unblocked, rather than stop the child
 * or dump its core once the mask lets it through: SIG_IGN set again
 * discards it. So is a stop that came, blocked, while the child still had
 * the caller's handler for it (clone() and fork() reset handlers only
 * here): the caller's handler took it. */
static CHILD int reset_other_signals(struct fl__plan *p, uint64_t low)
{
    const struct fl__ksigaction ign = { SIG_IGN, 0, 0, 0 }, dfl = { SIG_DFL, 0, 0, 0 };
    uint64_t drop_if_pending = 0, pending = 0;
    long r;
    if (reset_signals(p, low, ~(uint64_t)FL__ENDING_SIGNALS, &drop_if_pending) < 0)
        return -1;
    /* The ones whose default is to ignore are dropped by SIG_DFL itself. */
    drop_if_pending &= ~(FL__SIG_BIT(SIGCHLD) | FL__SIG_BIT(SIGCONT) | FL__SIG_BIT(SIGURG) |
                         FL__SIG_BIT(SIGWINCH));
    if (drop_if_pending && fl__sys2(SYS_rt_sigpending, &pending, 8) == 0)
        for (int sig = 1; sig <= 64; sig++)
            if (drop_if_pending & pending & FL__SIG_BIT(sig)) {
                fl__sys4(SYS_rt_sigaction, sig, &ign, 0, 8);
                fl__sys4(SYS_rt_sigaction, sig, &dfl, 0, 8);
            }
    if (ignore_signals(p, ~(uint64_t)FL__ENDING_SIGNALS) < 0)
        return -1;
    if (p->mask_inherited)
        return 0;
    r = fl__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &p->child_mask, 0, 8);
    return r < 0 ? fl__child_fail(p, FL_STEP_SIGNALS, -1, r) : 0;
}

static CHILD bool exists(const char *path)
{
    char st[256] __attribute__((aligned(8)));  /* a struct stat, unread */
    return fl__sys4(SYS_newfstatat, AT_FDCWD, path, st, 0) == 0;
}

/* Under a seccomp filter the search may make no call but exec (a filter
 * that allows a list of calls kills on the rest): which candidates are
 * there is looked up before it. Past the 64th, each counts as there, so
 * that exec's EACCES stands, as execvp() reports it. */
static CHILD void note_presence(struct fl__plan *p)
{
    p->presence_noted = false;
    if (!p->searched)
        return;
    p->cand_present = 0;
    for (size_t i = 0; i < p->ncands && i < 64; i++)
        if (exists(p->cands[i]))
            p->cand_present |= (uint64_t)1 << i;
    p->presence_noted = true;
}

static CHILD bool candidate_there(const struct fl__plan *p, size_t i)
{
    if (!p->presence_noted)
        return exists(p->cands[i]);
    return i >= 64 || (p->cand_present >> i & 1);
}

/* In a PATH search, a directory we may not search hides nothing (stat
 * fails too, where a file without permission would be found), and a
 * candidate whose name is too long cannot be there: sh and Python go on
 * to the next entry, and so does this search. A program named with '/'
 * keeps exec's own error. */
static CHILD long as_search_result(const struct fl__plan *p, size_t i, long r)
{
    if (!p->searched)
        return r;
    if (r == -EACCES && !candidate_there(p, i))
        return -ENOENT;
    return r == -ENAMETOOLONG ? -ENOENT : r;
}


/* Ten retries, 1 ms doubling to 512 ms: about a second in all. */
#define ETXTBSY_RETRIES 10

/* execve(), and with FL_RETRY_ETXTBSY again after a pause while a writer
 * (most often another thread's child, not yet at its exec) holds the file.
 * Before the first pause, the fds exec would close are closed now: with
 * FL_KEEP_FDS they may include a copy of a write fd to this very program,
 * and they would keep other threads' programs busy while this child waits. */
static CHILD long exec_once(struct fl__plan *p, const char *path, char *const *argv)
{
    long r = fl__sys3(SYS_execve, path, argv, p->envp);
    if (r != -ETXTBSY || !(p->flags & FL_RETRY_ETXTBSY))
        return r;
    close_by_walk(p, true);
    for (int i = 0; r == -ETXTBSY && i < ETXTBSY_RETRIES; i++) {
        struct { long sec, nsec; } pause = { 0, (1L << i) * 1000000L };  /* the kernel's timespec */
        fl__sys2(SYS_nanosleep, &pause, 0);
        r = fl__sys3(SYS_execve, path, argv, p->envp);
    }
    /* A path such as /dev/fd/N may have named an fd closed above: then
     * the error that started the retries is the one to report. */
    return r == -ENOENT ? -ETXTBSY : r;
}

/* The limit exec measures the lists against, for the parent to explain
 * an E2BIG with (arg_limit() in plan.c): this child's, after its own
 * rlimits; the caller's may differ by the time a launch is finished.
 * Read when exec says E2BIG, or, for a launch of a command with a seccomp
 * filter that may kill on the call, before the filter (has_filter_of()). */
static CHILD void note_stack_limit(struct fl__plan *p)
{
    uint64_t lim[2] = { 0, 0 };
    if (fl__sys4(SYS_prlimit64, 0, RLIMIT_STACK, 0, lim) == 0) {
        p->e2big_stack = lim[0];
        p->e2big_stack_known = true;
    }
}

static CHILD bool has_filter_of(const struct fl__plan *p)
{
    return p->box && p->box->seccomp;
}

/* Tries each candidate as execvp() does: a missing file moves on, EACCES is
 * remembered and reported only if nothing else runs, anything else stops.
 * Unlike execvp(), an unsearchable PATH directory is not "permission
 * denied". Which candidates were there is asked only once all have
 * failed: asked as the search goes, it would cost a search that succeeds
 * a system call per directory before the one that holds the program. */
static CHILD void exec_candidates(struct fl__plan *p)
{
    int denied = -1;
    for (size_t i = 0; i < p->ncands; i++) {
        long r = exec_once(p, p->cands[i], p->argv);
        if (r == -ENOEXEC && (p->flags & FL_SHELL_FALLBACK)) {
            p->sh_argv[1] = (char *)p->cands[i];
            r = exec_once(p, "/bin/sh", p->sh_argv);
            if (i < 64)
                p->cerr.shell_failed |= (uint64_t)1 << i;
        }
        r = as_search_result(p, i, r);
        if (r == -EACCES) {
            if (denied < 0)
                denied = (int)i;
        } else if (fl__not_here((int)-r)) {
            p->cand_err[i] = (unsigned char)-r;
        } else {
            if (r == -E2BIG && !has_filter_of(p))
                note_stack_limit(p);
            fl__child_fail(p, FL_STEP_EXEC, (int)i, r);
            return;
        }
    }
    /* Under a filter, past the 64th noted, whether one is there is not
     * known: none of those is named. */
    int present = -1;
    for (size_t i = 0; denied < 0 && present < 0 && i < p->ncands; i++)
        if (!p->searched || (!(p->presence_noted && i >= 64) && candidate_there(p, i)))
            present = (int)i;
    struct fl__child_err end =
        fl__search_failed(denied, present, present >= 0 ? p->cand_err[present] : ENOENT);
    fl__child_fail(p, FL_STEP_EXEC, end.index, -end.err);
}

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE 2
#endif
#ifndef CLONE_FILES
#define CLONE_FILES 0x00000400
#endif

/* Under CLONE_FILES the child starts on the caller's fd table, which the
 * caller's other threads keep using: before anything touches an fd, it
 * takes a table of its own holding only fds below stage_min (every fd the
 * plan reads or writes), so that neither the clone nor the closing costs
 * more with the parent's fd count. close_range() with CLOSE_RANGE_UNSHARE
 * (Linux 5.9) copies just that part; unshare() copies it all, and the fds
 * are then closed as usual. Returns 1 when no fd above 2 is left to close,
 * 0 when some may be, -1 on failure (the caller spawns again without
 * CLONE_FILES). */
static CHILD int own_fd_table(struct fl__plan *p)
{
    long r = fl__sys3(SYS_close_range, (unsigned)p->stage_min, ~0u, CLOSE_RANGE_UNSHARE);
    if (r == 0)   /* nothing above 2 was kept (no ruleset either), nothing opened */
        return p->nacts == 0 && p->stage_min <= 3;
    r = fl__sys1(SYS_unshare, CLONE_FILES);
    if (r < 0) {
        p->files_unshare_failed = true;
        return fl__child_fail(p, FL_STEP_CLOSE_FDS, -1, r);
    }
    return 0;
}

/* A launch's child has a copy of the caller's whole fd table, and its
 * setup may wait long (a FIFO's open()): holding a pipe end that the
 * caller has closed meanwhile would keep its reader from seeing EOF until
 * the exec. So it drops at once every fd from 3 up but those its setup
 * reads (p->hold); a target it dups onto later is made then. A fork()
 * child does the same, so that the fds it opens fit under a fd limit as
 * a clone child's do. Returns as
 * own_fd_table(); where close_range() is missing, 0: closed later. */
static CHILD int drop_unplanned_fds(struct fl__plan *p)
{
    unsigned from = 3;
    for (size_t i = 0; i < p->nhold; i++) {
        unsigned held = (unsigned)p->hold[i];
        if (held > from && fl__sys3(SYS_close_range, from, held - 1, 0) < 0)
            return 0;
        from = held + 1;
    }
    if (fl__sys3(SYS_close_range, from, ~0u, 0) < 0)
        return 0;
    return p->nacts == 0 && p->stage_min <= 3;
}

/* Before a chroot, where close_range() is refused: the closing walks
 * /proc/self/fd, which the new root most often lacks, so the directory is
 * opened now, at or above stage_min, clear of every fd the plan sets.
 * It is FD_CLOEXEC, and the walk passes it over. */
static CHILD void open_walk_dir_early(struct fl__plan *p)
{
    if (!p->box || !p->box->chroot || (p->flags & FL_KEEP_FDS))
        return;
    long r = fl__sys3(SYS_close_range, ~0u, ~0u, 0);  /* an empty range */
    if (r != -ENOSYS && r != -EPERM)
        return;
    long fd = fl__sys4(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0)
        return;  /* the walk tries again, and reports */
    long high = fd >= p->stage_min ? fd : fl__sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, p->stage_min);
    if (high != fd)
        fl__sys1(SYS_close, fd);
    p->walk_dir = high < 0 ? -1 : (int)high;
}

CHILD void fl__child_run(struct fl__plan *p)
{
    p->child_ran = true;
    /* A launch's caller goes on at once, and its time is what a launch
     * saves; but a new task is placed early in its CPU's queue, and when
     * that CPU is the caller's, the child tends to take it at the clone's
     * return and hold it through its setup and exec. Yielding first hands
     * it back; on a CPU of its own the child's yield returns at once. Not
     * where the caller waits for the exec (fl_run(), a pipeline's stage,
     * which would queue behind the earlier stages' programs). */
    if (p->yield_first)
        fl__sys1(SYS_sched_yield, 0);
    p->walk_dir = -1;  /* a plan cloned again keeps an earlier child's number */
    p->stops_held = 0;
    uint64_t caught_stops;
    uint64_t low_signals = low_signals_to_reset(p, &caught_stops);
    if (reset_ending_signals(p, low_signals) < 0 ||
        hold_off_stops(p, caught_stops | p->stops_caught) < 0)
        return;
    bool copied_table = p->exec_word || p->err_fd >= 0;  /* a launch's, or fork()'s */
    int closed = p->files_shared                                ? own_fd_table(p)
                 : copied_table && !(p->flags & FL_KEEP_FDS) ? drop_unplanned_fds(p)
                                                                : 0;
    if (closed >= 0)
        open_walk_dir_early(p);
    /* pdeathsig comes before the steps that may wait (the open() of a
     * FIFO, a chdir() on a dead server), so that the parent's death ends
     * those too; and again after the credentials, which clear it. */
    if (closed < 0 || set_pdeathsig(p) < 0 || fl__child_enter_ns(p) < 0 ||
        set_placement(p) < 0 || fl__child_cgroup_ns(p) < 0 || fl__child_sched(p) < 0 ||
        report_not_applied(p) < 0 || fl__child_root(p) < 0 || change_dir(p) < 0 ||
        apply_fds(p) < 0 || set_terminal(p) < 0)
        return;
    if (!(p->flags & FL_KEEP_FDS) && !closed && close_other_fds(p) < 0)
        return;
    if (set_rlimits(p, false) < 0 || fl__child_caps_before(p) < 0 || set_credentials(p) < 0 ||
        fl__child_caps_after(p) < 0 || set_pdeathsig(p) < 0 || fl__child_lock(p) < 0 ||
        reset_other_signals(p, low_signals) < 0)
        return;
    send_pdeathsig_if_gone(p);
    if (has_filter_of(p) && p->exec_word)  /* a spawn's caller waits: its limit is the child's */
        note_stack_limit(p);
    if (has_filter_of(p))
        note_presence(p);
    else
        p->presence_noted = false;
    if (fl__child_seccomp(p) < 0)
        return;
    exec_candidates(p);
}

CHILD __attribute__((noreturn)) void fl__child_exit(int code)
{
    for (;;)
        fl__sys1(SYS_exit_group, code);
}

CHILD int fl__child_entry(void *arg)
{
    fl__child_run(arg);
    fl__child_exit(127);
}
