/*
 * test_seccomp.c: kernel features denied by a seccomp filter, as older
 * container profiles do (pitfalls 7, 8, 25).
 *
 * Each case forks a subprocess of the test, which installs a raw BPF
 * filter (PR_SET_NO_NEW_PRIVS + PR_SET_SECCOMP, no libseccomp) that makes
 * only the named system calls fail with EPERM, or in the second run with
 * ENOSYS:
 *
 *   close_range      the child cannot close the inherited fds that way
 *   clone3           no clone3(), so no CLONE_CLEAR_SIGHAND either
 *   clone+PIDFD      clone() with CLONE_PIDFD in its flags (arg 0)
 *   pidfd_open       no pidfd after the fact
 *   pidfd_send_signal
 *                    pidfds, but no signal through them (older Docker
 *                    profiles refuse it with clone3 and pidfd_open)
 *   unshare          with close_range, no way for a CLONE_FILES child to
 *                    take its own fd table: spawned again without
 *
 * The filter is inherited by the spawned child (and the probe): it leaves
 * every other call alone, so the probe still runs.
 *
 * forkless must then be correct: the child has exactly fds 0-2 and the
 * mapped ones, the status comes from fl_wait(), a timed wait times out,
 * fl_kill() reaches the child. Each denied call has a fallback that the
 * library promises (forkless.h): a walk of /proc/self/fd for close_range,
 * clone() for clone3, a pidfd opened after the start (or none) for
 * CLONE_PIDFD and pidfd_open, a spawn again without CLONE_FILES for
 * unshare. So every spawn must work; a clean failure (empty handle,
 * nothing leaked, an error that names what was denied) is allowed only
 * where the libc makes the process and has no fallback: glibc's
 * posix_spawn uses clone3 and falls back to clone only on ENOSYS. Never
 * silently wrong. Each case prints a REPORT line; "degraded=" says which
 * backends failed cleanly instead of working.
 */
#include "test.h"
#include "contain.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

#if defined(__x86_64__)
#define FL_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FL_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define FL_AUDIT_ARCH AUDIT_ARCH_I386
#endif

enum {
    DENY_CLOSE_RANGE = 1,
    DENY_CLONE3 = 2,
    DENY_CLONE_PIDFD = 4,
    DENY_PIDFD_OPEN = 8,
    DENY_UNSHARE = 16,
    DENY_PIDFD_SIGNAL = 32,
    DENY_POLL = 64,  /* poll and ppoll */
    DENY_WAITID_PIDFD = 128,  /* waitid(P_PIDFD): Linux 5.3 had pidfds without it */
};

static int install_filter(unsigned deny, int err)
{
#ifndef FL_AUDIT_ARCH
    (void)deny;
    (void)err;
    errno = ENOTSUP;
    return -1;
#else
    struct sock_filter f[32];
    int n = 0;
    const unsigned ret_err = SECCOMP_RET_ERRNO | ((unsigned)err & 0xffff);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, arch));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                          FL_AUDIT_ARCH, 1, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, nr));
    static const struct {
        unsigned bit;
        long nr;
    } plain[] = { { DENY_CLOSE_RANGE, SYS_close_range },
                  { DENY_CLONE3, SYS_clone3 },
                  { DENY_PIDFD_OPEN, SYS_pidfd_open },
                  { DENY_PIDFD_SIGNAL, SYS_pidfd_send_signal },
#ifdef SYS_poll
                  { DENY_POLL, SYS_poll },
#endif
                  { DENY_POLL, SYS_ppoll },
                  { DENY_UNSHARE, SYS_unshare } };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        if (!(deny & plain[i].bit))
            continue;
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                              (unsigned)plain[i].nr, 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret_err);
    }
    if (deny & DENY_CLONE_PIDFD) {
        /* clone(flags, ...): the flags are argument 0 on x86-64 and
         * arm64; CLONE_PIDFD is in their low 32 bits (little-endian). */
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                              SYS_clone, 0, 3);
        f[n++] = (struct sock_filter)BPF_STMT(
            BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
                                              CLONE_PIDFD, 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret_err);
    }
    if (deny & DENY_WAITID_PIDFD) {
        /* Linux 5.3 answers EINVAL for the idtype it does not know. */
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                              offsetof(struct seccomp_data, nr));
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_waitid, 0, 3);
        f[n++] = (struct sock_filter)BPF_STMT(
            BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 3 /* P_PIDFD */, 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret_err);
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
#endif
}

/* The status of a case's child that ran under install_filter(): the case
 * is skipped where it could get no filter (its exit status 2). */
static int filtered_child_status(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
        SKIP("no seccomp filter to be had here");
    return st;
}

/* What the subprocess found, sent to the test process through a pipe. */
struct outcome {
    int spawns;          /* spawns that worked, and were checked */
    int clean_failures;  /* spawns that failed cleanly */
    int err;             /* the first clean failure */
    char message[512];   /* its fl_error_format() */
    int pidfd_seen;      /* a handle had a pidfd */
    int filter_works;    /* the denied call really failed with err */
};

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        FAIL("opendir: %s", strerror(errno));
    struct dirent *de;
    while ((de = readdir(d)))
        n += de->d_name[0] >= '0' && de->d_name[0] <= '9' && !t_library_fd(atoi(de->d_name));
    closedir(d);
    return n - 1;
}

/* Whether the spawns may fail in this scenario: only where the libc, not
 * forkless, makes the process and has no fallback. glibc's posix_spawn
 * (2.34+) makes it with clone3 and falls back to clone only on ENOSYS; a
 * libc that uses clone (musl, older glibc) just works. */
static bool libc_may_refuse(unsigned deny, int err)
{
    return BACKEND == FL_BACKEND_POSIX_SPAWN && (deny & DENY_CLONE3) && err != ENOSYS;
}

/* A spawn works, or, where may_fail, fails cleanly with an error that
 * names the denied feature. Returns true when it worked. */
static bool spawn_or_clean_failure(const struct fl_cmd *cmd,
                                   struct fl_proc *p, struct outcome *o,
                                   const char *const *names, bool may_fail)
{
    struct fl_error e;
    memset(p, 0x5a, sizeof *p);
    int before = count_fds();
    int r = fl_spawn(cmd, p, &e);
    if (r == 0)
        return true;
    char buf[512];
    fl_error_format(&e, buf, sizeof buf);
    /* A clean failure here would be a lost fallback, not a degradation. */
    if (!may_fail)
        FAIL("fl_spawn failed (%s) where the library promises a fallback: %s",
             fl_t_errname(r), buf);
    /* The denied calls create the process: exec never ran. */
    if (e.step == FL_STEP_EXEC)
        FAIL("fl_spawn failed (%s) and blames exec, but a denied system "
             "call stopped the process creation: %s", fl_t_errname(r), buf);
    if (p->pid != 0 || p->pidfd != -1 || p->stdio[0] != -1 ||
        p->stdio[1] != -1 || p->stdio[2] != -1)
        FAIL("failure left a non-empty handle: %s", buf);
    if (count_fds() != before)
        FAIL("failure leaked an fd: %s", buf);
    if (e.err != r)
        FAIL("error.err %d != returned %d", e.err, r);
    bool named = false;
    for (const char *const *n = names; *n; n++)
        named |= strstr(buf, *n) != NULL;
    if (!named)
        FAIL("fl_spawn failed (%s) with an error that does not name what "
             "was denied: %s", fl_t_errname(r), buf);
    if (!o->clean_failures++) {
        o->err = r;
        snprintf(o->message, sizeof o->message, "%s", buf);
    }
    return false;
}

static void run_denied(unsigned deny, int err, struct outcome *o)
{
    const bool may_fail = libc_may_refuse(deny, err);
    /* Check the filter first: the denied call must fail with err. */
    if (install_filter(deny, err) != 0)
        FAIL("installing the seccomp filter: %s", strerror(errno));
    if (deny & DENY_CLOSE_RANGE)
        o->filter_works = syscall(SYS_close_range, 1000, 1000, 0) == -1 &&
                          errno == err;
    else if (deny & DENY_PIDFD_OPEN)
        o->filter_works = syscall(SYS_pidfd_open, getpid(), 0) == -1 &&
                          errno == err;
    else if (deny & DENY_CLONE3)
        o->filter_works = syscall(SYS_clone3, NULL, 0) == -1 && errno == err;
    else if (deny & DENY_PIDFD_SIGNAL)
        o->filter_works = syscall(SYS_pidfd_send_signal, -1, 0, NULL, 0) == -1 &&
                          errno == err;
    if (!o->filter_works)
        FAIL("the filter does not deny as asked");

    /* Names the error text may use for what was denied. */
    static const char *const names[] = { "clone", "close", "pidfd",
                                         "spawn", NULL };
    /* An inheritable fd that must not reach the child, and one mapped. */
    int leak = t_file_at(7, false);
    int keep = t_file_at(12, false);
    int big = fcntl(leak, F_DUPFD, 300); /* no FD_CLOEXEC either */
    ASSERT_GE(big, 300);

    int n = t_scaled(8);
    for (int i = 0; i < n; i++) {
        char code[16];
        snprintf(code, sizeof code, "%d", 20 + i);
        struct fl_cmd cmd = {
            .argv = PROBE("fds", "exit", code),
            .stdio = { [1] = { .kind = FL_PIPE } },
            .fds = (struct fl_fd_map[]){ { 5, keep } },
            .nfds = 1,
            .backend = BACKEND,
        };
        struct fl_proc p;
        if (!spawn_or_clean_failure(&cmd, &p, o, names, may_fail))
            continue;
        o->pidfd_seen |= p.pidfd >= 0;
        char *out = t_read_all(p.stdio[1]);
        close(p.stdio[1]);
        p.stdio[1] = -1;
        int st = -1;
        ASSERT_OK(fl_wait(&p, -1, &st));
        ASSERT_EXITED(st, 20 + i);
        /* Closed although close_range is denied: never silently leaked. */
        ASSERT_FDS_EXACTLY(out, 0, 1, 2, 5);
        ASSERT_EQ(t_fd_entry(out, 5).ino, t_ino(keep));
        ASSERT_ERR(fl_wait(&p, 0, &st), ESRCH);
        fl_close(&p);
        o->spawns++;
    }

    /* Timed wait, kill and status, with or without a pidfd. */
    struct fl_cmd sl = { .argv = PROBE("sleep", "30"), .backend = BACKEND };
    struct fl_proc p;
    if (spawn_or_clean_failure(&sl, &p, o, names, may_fail)) {
        int st = -1;
        ASSERT_ERR(fl_wait(&p, 0, &st), ETIMEDOUT);
        ASSERT_ERR(fl_wait(&p, 20, &st), ETIMEDOUT);
        ASSERT_OK(fl_kill(&p, 0));
        ASSERT_OK(fl_kill(&p, SIGTERM));
        ASSERT_OK(fl_wait(&p, 30000, &st));
        ASSERT_SIGNALED(st, SIGTERM);
        /* Reaped: nothing more is sent to the numeric pid. */
        ASSERT_ERR(fl_kill(&p, SIGTERM), ESRCH);
        fl_close(&p);
        o->spawns++;
    }
    /* An exec error still comes back as such. */
    struct fl_cmd bad = { .argv = ARGV("/nonexistent/fl-prog"),
                          .backend = BACKEND };
    struct fl_error e;
    int r = fl_spawn(&bad, &p, &e);
    if (r == 0) {
        t_kill_wait(&p);
        FAIL("a missing program was spawned");
    }
    if (r != ENOENT) {
        /* Allowed only as the same clean failure as above. */
        ASSERT(o->clean_failures > 0);
        ASSERT_ERR(r, o->err);
    }
    close(big);
    close(leak);
    close(keep);
}

static void run_case(const char *scenario, unsigned deny, int err,
                     const char *pitfalls)
{
    /* The spawns close every other fd, which a posix_spawn without a
     * closefrom action (musl) refuses whatever the filter. */
    NEEDS_CLOSE_OTHERS();
    int fd;
    pid_t pid = t_fork_piped(&fd);
    if (pid == 0) {
        struct outcome o = { 0 };
        run_denied(deny, err, &o);
        if (write(fd, &o, sizeof o) != (ssize_t)sizeof o)
            _exit(3);
        _exit(0);
    }
    struct outcome o;
    ssize_t got = 0, k;
    while ((size_t)got < sizeof o &&
           (k = read(fd, (char *)&o + got, sizeof o - (size_t)got)) != 0) {
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            break;
        got += k;
    }
    close(fd);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("REPORT scenario=%s spawns=0 signals=0 faults=0 cases=1 "
               "failures=1 pitfalls=%s backend=%s denied_with=%s "
               "reason=subprocess_failed_see_stderr\n",
               scenario, pitfalls, fl_backend_name(BACKEND),
               fl_t_errname(err));
        FAIL("the subprocess with the filter failed (status 0x%x), see above",
             st);
    }
    if ((size_t)got != sizeof o)
        FAIL("no outcome from the subprocess");
    /* The one allowed failure, glibc's posix_spawn on clone3's EPERM,
     * blames the clone and says why, not the program's exec. */
    if (o.clean_failures && !strstr(o.message, "clone3()"))
        FAIL("the clean failure does not say that clone3() was refused: %s", o.message);
    char extra[900] = "";
    if (o.clean_failures) {
        /* A REPORT value has no spaces. */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", o.message);
        for (char *c = msg; *c; c++)
            if (*c == ' ' || *c == '"' || *c == '\'')
                *c = '_';
        snprintf(extra, sizeof extra, " degraded=%s error=%s message=%s",
                 fl_backend_name(BACKEND), fl_t_errname(o.err), msg);
        dprintf(2, "note: backend %s failed cleanly with %s: %s\n",
                fl_backend_name(BACKEND), fl_t_errname(o.err), o.message);
    }
    printf("REPORT scenario=%s spawns=%d signals=0 faults=0 cases=1 "
           "failures=0 pitfalls=%s backend=%s denied_with=%s "
           "clean_failures=%d pidfd=%s%s\n",
           scenario, o.spawns, pitfalls, fl_backend_name(BACKEND),
           fl_t_errname(err), o.clean_failures,
           o.pidfd_seen ? "yes" : "no", extra);
}

TEST(close_range_denied_eperm)
{
    NEEDS_SECCOMP();
    run_case("seccomp_close_range_eperm", DENY_CLOSE_RANGE, EPERM, "7");
}

TEST(close_range_denied_enosys)
{
    NEEDS_SECCOMP();
    run_case("seccomp_close_range_enosys", DENY_CLOSE_RANGE, ENOSYS, "7");
}

TEST(close_range_and_unshare_denied_eperm)
{
    NEEDS_SECCOMP();
    run_case("seccomp_close_range_unshare_eperm", DENY_CLOSE_RANGE | DENY_UNSHARE,
             EPERM, "7");
}

TEST(close_range_and_unshare_denied_enosys)
{
    NEEDS_SECCOMP();
    run_case("seccomp_close_range_unshare_enosys", DENY_CLOSE_RANGE | DENY_UNSHARE,
             ENOSYS, "7");
}

TEST(clone3_denied_eperm)
{
    NEEDS_SECCOMP();
    run_case("seccomp_clone3_eperm", DENY_CLONE3, EPERM, "8");
}

TEST(clone3_denied_enosys)
{
    NEEDS_SECCOMP();
    run_case("seccomp_clone3_enosys", DENY_CLONE3, ENOSYS, "8");
}

TEST(pidfd_open_denied_eperm)
{
    NEEDS_SECCOMP();
    run_case("seccomp_pidfd_open_eperm", DENY_PIDFD_OPEN, EPERM, "25,37");
}

TEST(pidfd_open_denied_enosys)
{
    NEEDS_SECCOMP();
    run_case("seccomp_pidfd_open_enosys", DENY_PIDFD_OPEN, ENOSYS, "25,37");
}

TEST(pidfd_send_signal_denied_eperm)
{
    NEEDS_SECCOMP();
    run_case("seccomp_pidfd_send_signal_eperm", DENY_PIDFD_SIGNAL, EPERM, "25");
}

TEST(pidfd_send_signal_denied_enosys)
{
    NEEDS_SECCOMP();
    run_case("seccomp_pidfd_send_signal_enosys", DENY_PIDFD_SIGNAL, ENOSYS, "25");
}

/* Docker's default profile before 20.10: clone3, pidfd_open and
 * pidfd_send_signal refused with EPERM, clone(CLONE_PIDFD) allowed. */
TEST(an_old_docker_profile_still_signals_the_child)
{
    NEEDS_SECCOMP();
    run_case("seccomp_old_docker_eperm", DENY_CLONE3 | DENY_PIDFD_OPEN | DENY_PIDFD_SIGNAL,
             EPERM, "8,25");
}

TEST(no_pidfd_at_all_eperm)
{
    NEEDS_SECCOMP();
    run_case("seccomp_no_pidfd_eperm",
             DENY_CLONE3 | DENY_CLONE_PIDFD | DENY_PIDFD_OPEN, EPERM,
             "8,25,37");
}

TEST(no_pidfd_at_all_enosys)
{
    NEEDS_SECCOMP();
    run_case("seccomp_no_pidfd_enosys",
             DENY_CLONE3 | DENY_CLONE_PIDFD | DENY_PIDFD_OPEN, ENOSYS,
             "8,25,37");
}

TEST(everything_denied_eperm)
{
    NEEDS_SECCOMP();
    run_case("seccomp_everything_eperm",
             DENY_CLOSE_RANGE | DENY_CLONE3 | DENY_CLONE_PIDFD |
                 DENY_PIDFD_OPEN | DENY_PIDFD_SIGNAL,
             EPERM, "7,8,25,37");
}

TEST(everything_denied_enosys)
{
    NEEDS_SECCOMP();
    run_case("seccomp_everything_enosys",
             DENY_CLOSE_RANGE | DENY_CLONE3 | DENY_CLONE_PIDFD |
                 DENY_PIDFD_OPEN | DENY_PIDFD_SIGNAL,
             ENOSYS, "7,8,25,37");
}

/* With close_range() denied, the closing walks /proc/self/fd, which a
 * new root without /proc lacks: the child opens it before the chroot. */
TEST(close_range_denied_in_a_chroot_without_proc_still_closes_the_fds)
{
    struct fl_contain c = { .chroot = "/" };
    struct fl_cmd cmd = { .argv = ARGV("/probe", "sleep", "30"), .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    c.chroot = t_make_root(false);
    if (!t_is_root())
        c.unshare = FL_NS_USER, c.map = FL_MAP_ROOT;
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        if (install_filter(DENY_CLOSE_RANGE, ENOSYS) != 0)
            _exit(2);
        int leak = t_file_at(7, false);
        struct fl_proc p;
        struct fl_error e;
        char buf[512];
        if (fl_spawn(&cmd, &p, &e) != 0) {
            fprintf(stderr, "fl_spawn: %s\n", fl_error_format(&e, buf, sizeof buf));
            _exit(3);
        }
        bool leaked = access(t_fmt("/proc/%d/fd/%d", (int)p.pid, leak), F_OK) == 0;
        fl_kill(&p, SIGKILL);
        fl_wait(&p, -1, NULL);
        fl_close(&p);
        _exit(leaked ? 4 : 0);
    }
    int st = filtered_child_status(pid);
    ASSERT_EXITED(st, 0);  /* 3: the spawn failed; 4: fd 7 reached the child */
}

/* close_range() failing otherwise than ENOSYS or EPERM is its own error:
 * no walk of /proc/self/fd is tried, and the record does not claim one. */
TEST(close_range_failing_with_another_errno_is_that_error_without_a_walk)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .backend = BACKEND };
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        if (install_filter(DENY_CLOSE_RANGE, EACCES) != 0)
            _exit(2);
        struct fl_proc p;
        struct fl_error e;
        char buf[512];
        int r = fl_spawn(&cmd, &p, &e);
        if (r == 0) {
            fl_wait(&p, -1, NULL);
            fl_close(&p);
        }
        bool as_it_should = r == EACCES && e.step == FL_STEP_CLOSE_FDS && e.index == -1 &&
                            e.path[0] == '\0' && !strstr(e.detail, "/proc");
        /* posix_spawn's closefrom action is glibc's: it may fall back on
         * its own, or report the errno without a step. */
        if (!as_it_should && BACKEND != FL_BACKEND_POSIX_SPAWN) {
            fprintf(stderr, "fl_spawn returned %d: %s (index %d)\n", r,
                    fl_error_format(&e, buf, sizeof buf), e.index);
            _exit(3);
        }
        _exit(0);
    }
    int st = filtered_child_status(pid);
    ASSERT_EXITED(st, 0);
}

/* A cgroup-scope stop reaches a member that is not the caller's child
 * (it left the session) through its pid when the filter refuses the
 * pidfd calls: the grace then ends early, with no SIGKILL. */
TEST(a_cgroup_stop_reaches_a_member_when_pidfd_calls_are_refused)
{
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SKIP("posix_spawn cannot place a child in a cgroup");
    char *dir = t_need_cgroup(NULL);
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        if (install_filter(DENY_PIDFD_OPEN | DENY_PIDFD_SIGNAL, EPERM) != 0)
            _exit(2);
        struct fl_cmd cmd = {
            .argv = ARGV("/bin/sh", "-c",
                         "setsid sleep 100 </dev/null >/dev/null 2>&1 & echo $!; wait"),
            .env_set = TOOLS_PATH_ENV,
            .stdio = { [1] = { .kind = FL_PIPE } },
            .cgroup = dir,
            .backend = BACKEND,
        };
        struct fl_proc p;
        struct fl_error e;
        if (fl_spawn(&cmd, &p, &e) != 0)
            _exit(3);
        free(t_read_until(p.stdio[1], "\n"));
        struct fl_result r;
        struct fl_stop_policy policy = { .scope = FL_STOP_CGROUP, .cgroup = dir,
                                         .grace_ms = 60000 };
        if (fl_stop(&p, &policy, &r) != 0)
            _exit(4);
        fl_close(&p);
        _exit(r.signal == SIGTERM && !r.killed ? 0 : 5);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    t_remove_cgroup(dir);  /* before a skip */
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
        SKIP("no seccomp filter to be had here");
    ASSERT_EXITED(st, 0);  /* 5: the member needed the SIGKILL */
}

/* Signals that interrupt every poll (a filter answers EINTR here) do not
 * keep a timed wait past its deadline: a poll of no time is EINTR too
 * while a signal is pending. */
TEST(a_timed_wait_whose_polls_are_all_interrupted_still_times_out)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("sleep", "30"), .backend = BACKEND };
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        alarm(20);  /* a wait that spins for ever ends here, by SIGALRM */
        struct fl_proc p;
        struct fl_error e;
        if (fl_spawn(&cmd, &p, &e) != 0)
            _exit(3);
        if (install_filter(DENY_POLL, EINTR) != 0) {
            fl_kill(&p, SIGKILL);
            _exit(2);
        }
        int r = fl_wait(&p, 100, NULL);
        fl_kill(&p, SIGKILL);
        fl_wait(&p, -1, NULL);  /* waitid, no poll */
        fl_close(&p);
        _exit(r);
    }
    int st = filtered_child_status(pid);
    ASSERT_EXITED(st, ETIMEDOUT);  /* killed by SIGALRM: it spun */
}

/* A filter of the caller's that refuses waitid(P_PIDFD), with ENOSYS or
 * EPERM as container profiles answer a call they do not know, or EINVAL
 * as Linux 5.3 did: the pid, unreaped, is still the handle's process, so
 * every wait, blocking or timed, and fl_run() end with the status, and
 * leave no zombie. */
TEST(a_wait_whose_p_pidfd_a_filter_refuses_still_reaps_with_the_status)
{
    NEEDS_CLOSE_OTHERS();
    static const int errs[] = { ENOSYS, EPERM, EINVAL };
    for (size_t k = 0; k < sizeof errs / sizeof *errs; k++) {
        pid_t pid = fork();
        ASSERT_SYS(pid);
        if (pid == 0) {
            alarm(20);
            if (install_filter(DENY_WAITID_PIDFD, errs[k]) != 0)
                _exit(2);
            static const unsigned flags[] = { 0, FL_NO_PIDFD, FL_NO_WAIT_EXEC };
            static const int timeouts[] = { -1, 5000 };
            for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
                for (size_t j = 0; j < 2; j++) {
                    struct fl_cmd cmd = { .argv = PROBE("exit", "7"), .flags = flags[i],
                                          .backend = BACKEND };
                    struct fl_proc p;
                    if (fl_spawn(&cmd, &p, NULL) != 0)
                        _exit(3);
                    int st = 0, r = fl_wait(&p, timeouts[j], &st);
                    fl_close(&p);
                    if (r != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 7) {
                        fprintf(stderr, "errno %d, flags 0x%x, timeout %d: fl_wait returned %d, "
                                "status 0x%x\n", errs[k], flags[i], timeouts[j], r, st);
                        _exit(4);
                    }
                }
            struct fl_cmd cmd = { .argv = PROBE("exit", "7"), .backend = BACKEND };
            struct fl_result res;
            int r = fl_run(&cmd, NULL, &res, NULL);
            if (r != 0 || res.exit_code != 7) {
                fprintf(stderr, "errno %d: fl_run returned %d, exit code %d\n", errs[k], r,
                        res.exit_code);
                _exit(5);
            }
            fl_result_free(&res);
            siginfo_t si = { 0 };
            if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG) == 0 && si.si_pid != 0) {
                fprintf(stderr, "errno %d: a zombie left, pid %d\n", errs[k], (int)si.si_pid);
                _exit(6);
            }
            _exit(0);
        }
        int st = filtered_child_status(pid);
        ASSERT_EXITED(st, 0);  /* 4, 5, 6: a status lost or a zombie left (see stderr) */
    }
}

/* Linux 5.3: pidfds, but waitid() without P_PIDFD (EINVAL). A handle
 * without a pidfd of its own borrows one for a timed wait, and the
 * pid, unreaped, is still its process: the wait ends with the status,
 * not ECHILD with a zombie left behind. */
TEST(a_timed_wait_without_p_pidfd_still_reaps_with_the_status)
{
    NEEDS_CLOSE_OTHERS();
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        alarm(20);
        if (install_filter(DENY_WAITID_PIDFD, EINVAL) != 0)
            _exit(2);
        static const unsigned flags[] = { FL_NO_PIDFD, 0, FL_NO_PIDFD | FL_NO_WAIT_EXEC };
        for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
            struct fl_cmd cmd = { .argv = PROBE("exit", "7"), .flags = flags[i],
                                  .backend = BACKEND };
            struct fl_proc p;
            if (fl_spawn(&cmd, &p, NULL) != 0)
                _exit(3);
            int st = 0, r = fl_wait(&p, 5000, &st);
            fl_close(&p);
            if (r != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 7) {
                fprintf(stderr, "flags 0x%x: fl_wait returned %d, status 0x%x\n", flags[i], r, st);
                _exit(4);
            }
        }
        _exit(0);
    }
    int st = filtered_child_status(pid);
    ASSERT_EXITED(st, 0);  /* 4: a status lost (see stderr) */
}
