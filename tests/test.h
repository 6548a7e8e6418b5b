/*
 * test.h: the tiny test framework of forkless.
 *
 * A test file defines cases with TEST(name) { ... }. CMake reads the file
 * for lines that start with "TEST(" and registers one CTest test per case
 * and backend, named <area>.<case>.<backend>, which runs
 *
 *     <binary> <case> <backend>
 *
 * The case sees the backend in fl_test_backend (BACKEND for short) and puts
 * it into every struct fl_cmd it spawns. After the case returns, the runner
 * checks that the test process has no fd it did not have before, and no
 * child process left, running or zombie.
 *
 * An assertion that fails prints the expression and both values, kills
 * the test's children and aborts. SKIP() exits 77, which CTest shows as
 * skipped (only for a missing environment, such as root or cgroup v2).
 */
#ifndef FL_TEST_H
#define FL_TEST_H

#include "forkless.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <termios.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Registering and running cases                                            */
/* ------------------------------------------------------------------------ */

typedef void (*fl_test_fn)(void);
void fl_test_register(const char *name, fl_test_fn fn);

#define TEST(name)                                                           \
    static void test_##name(void);                                           \
    __attribute__((constructor)) static void register_##name(void)           \
    {                                                                        \
        fl_test_register(#name, test_##name);                                \
    }                                                                        \
    static void test_##name(void)

/* The backend under test, from the command line. */
extern enum fl_backend fl_test_backend;
#define BACKEND fl_test_backend
/* The probe helper's absolute path: the built one, or, when the test runs
 * as root, a copy that every user can execute (see t_exe_for_anyone()). */
extern char fl_test_probe[];
/* The test binary's own name of the current case (for re-running self). */
extern const char *fl_test_case;

/* A NULL-terminated argv as a compound literal. */
#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })
/* An argv that runs the probe with the given command words. */
#define PROBE(...) ARGV(fl_test_probe, __VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Assertions                                                               */
/* ------------------------------------------------------------------------ */

__attribute__((noreturn, format(printf, 3, 4)))
void fl_t_fail(const char *file, int line, const char *fmt, ...);
__attribute__((noreturn)) void fl_t_skip(const char *reason);
/* Fails an ASSERT_STR_EQ: both strings when they are short; otherwise
 * their lengths and the first byte where they differ, with the text
 * around it, since a whole long string would not fit the message. */
__attribute__((noreturn))
void fl_t_fail_str(const char *file, int line, const char *what, const char *a, const char *b);
const char *fl_t_errname(int e);

#define FAIL(...) fl_t_fail(__FILE__, __LINE__, __VA_ARGS__)
#define SKIP(reason) fl_t_skip(reason)

#define ASSERT(cond)                                                         \
    do {                                                                     \
        if (!(cond))                                                         \
            FAIL("ASSERT(%s) failed", #cond);                                \
    } while (0)

#define ASSERT_CMP_(a, op, b)                                                \
    do {                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                  \
        if (!(a_ op b_))                                                     \
            FAIL("%s %s %s failed: %lld vs %lld", #a, #op, #b, a_, b_);      \
    } while (0)
#define ASSERT_EQ(a, b) ASSERT_CMP_(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_CMP_(a, !=, b)
#define ASSERT_GE(a, b) ASSERT_CMP_(a, >=, b)
#define ASSERT_GT(a, b) ASSERT_CMP_(a, >, b)
#define ASSERT_LE(a, b) ASSERT_CMP_(a, <=, b)

/* r is 0 or an errno value (the library's convention). */
#define ASSERT_OK(r)                                                         \
    do {                                                                     \
        int r_ = (r);                                                        \
        if (r_ != 0)                                                         \
            FAIL("%s returned %d (%s: %s), expected 0", #r, r_,              \
                 fl_t_errname(r_), strerror(r_));                            \
    } while (0)
#define ASSERT_ERR(r, e)                                                     \
    do {                                                                     \
        int r_ = (r), e_ = (e);                                              \
        if (r_ != e_)                                                        \
            FAIL("%s returned %d (%s), expected %d (%s)", #r, r_,            \
                 fl_t_errname(r_), e_, fl_t_errname(e_));                    \
    } while (0)
/* A libc call that returns -1 and sets errno on failure. */
#define ASSERT_SYS(x)                                                        \
    do {                                                                     \
        if ((x) == -1)                                                       \
            FAIL("%s failed: %s", #x, strerror(errno));                      \
    } while (0)

#define ASSERT_STR_EQ(a, b)                                                  \
    do {                                                                     \
        const char *a_ = (a), *b_ = (b);                                     \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                               \
            fl_t_fail_str(__FILE__, __LINE__, #a " == " #b, a_, b_);          \
    } while (0)
#define ASSERT_STR_CONTAINS(hay, needle)                                     \
    do {                                                                     \
        const char *h_ = (hay), *n_ = (needle);                              \
        if (!h_ || !strstr(h_, n_))                                          \
            FAIL("%s does not contain \"%s\": \"%s\"", #hay, n_,             \
                 h_ ? h_ : "(null)");                                        \
    } while (0)
#define ASSERT_NULL(p)                                                       \
    do {                                                                     \
        const void *p_ = (p);                                                \
        if (p_)                                                              \
            FAIL("%s is not NULL", #p);                                      \
    } while (0)

/* A wait status. */
#define ASSERT_EXITED(st, code)                                              \
    do {                                                                     \
        int s_ = (st);                                                       \
        if (!WIFEXITED(s_) || WEXITSTATUS(s_) != (code))                     \
            FAIL("%s: expected exit %d, got status 0x%x (%s %d)", #st,       \
                 (code), s_, WIFEXITED(s_) ? "exit" : "signal",              \
                 WIFEXITED(s_) ? WEXITSTATUS(s_) : WTERMSIG(s_));            \
    } while (0)
#define ASSERT_SIGNALED(st, sig)                                             \
    do {                                                                     \
        int s_ = (st);                                                       \
        if (!WIFSIGNALED(s_) || WTERMSIG(s_) != (sig))                       \
            FAIL("%s: expected signal %d, got status 0x%x (%s %d)", #st,     \
                 (sig), s_, WIFEXITED(s_) ? "exit" : "signal",               \
                 WIFEXITED(s_) ? WEXITSTATUS(s_) : WTERMSIG(s_));            \
    } while (0)

/*
 * Whether the posix_spawn backend can close the child's other fds: it
 * needs posix_spawn_file_actions_addclosefrom_np (glibc 2.34+, never
 * musl). Without it, fl_spawn() refuses a command without FL_KEEP_FDS with
 * ENOTSUP at step prepare (docs/musl.md). SPAWN() and SPAWN_FAILS() then
 * assert exactly that refusal and skip the rest of the case, saying why.
 */
#define FL_T_POSIX_SPAWN_CLOSES_FDS FL_HAVE_ADDCLOSEFROM  /* CMake's probe */

/* For a case that calls fl_spawn() itself (from threads, or to look at
 * what it returns) with close-others under the posix_spawn backend: where
 * the libc cannot close fds, asserts the refusal and skips the case. */
#define NEEDS_CLOSE_OTHERS() fl_t_needs_close_others(__FILE__, __LINE__)
void fl_t_needs_close_others(const char *file, int line);

/*
 * For a case that needs what a kernel or a container may take away: the
 * first call probes (once a process), and where the feature is missing the
 * case skips with a reason that names the call that failed and its errno.
 * Put it at the top of the case, or just after an
 * UNSUPPORTED_ON_POSIX_SPAWN() that asserts a refusal without the feature.
 *
 * NEEDS_SECCOMP(): a seccomp filter can be installed. A forked child sets
 * no_new_privs and installs an allow-all filter with seccomp(2), as the
 * library does, and with prctl(PR_SET_SECCOMP), as the cases' own helpers
 * do. Missing on a kernel without CONFIG_SECCOMP_FILTER (EINVAL, ENOSYS) or
 * under a container's filter that denies either call (EPERM, EINVAL, ...).
 *
 * NEEDS_PTY(): a pseudo-terminal can be had: posix_openpt(), grantpt(),
 * unlockpt(), ptsname() and the terminal side opened by that name, as the
 * library and the cases open them. Missing without /dev/ptmx (ENOENT), or
 * a devpts on /dev/pts (ENODEV), or where a container refuses it (EACCES,
 * EPERM, ENXIO, ...).
 */
#define NEEDS_SECCOMP() fl_t_needs_seccomp()
void fl_t_needs_seccomp(void);
#define NEEDS_PTY() fl_t_needs_pty()
void fl_t_needs_pty(void);

/* fl_spawn() must succeed; on failure, prints the formatted error. */
#define SPAWN(cmd, proc) fl_t_spawn((cmd), (proc), __FILE__, __LINE__)
void fl_t_spawn(const struct fl_cmd *cmd, struct fl_proc *proc,
                const char *file, int line);

/*
 * fl_spawn() must fail with err at step. The handle must be empty. For the
 * posix_spawn backend, a step inside the child may be FL_STEP_SPAWN (glibc
 * does not say where it failed). Returns the error record.
 */
#define SPAWN_FAILS(cmd, err, step)                                          \
    fl_t_spawn_fails((cmd), (err), (step), __FILE__, __LINE__)
struct fl_error fl_t_spawn_fails(const struct fl_cmd *cmd, int err,
                                 enum fl_step step, const char *file,
                                 int line);
/* True when e->step is step, or FL_STEP_SPAWN under posix_spawn. */
bool fl_t_step_is(const struct fl_error *e, enum fl_step step);

/*
 * A case whose command uses an option that posix_spawn cannot express:
 * under the posix_spawn backend, assert that fl_spawn() says ENOTSUP for
 * that option (with an empty handle, nothing leaked) and end the case
 * there, passing.
 */
#define UNSUPPORTED_ON_POSIX_SPAWN(cmd)                                      \
    do {                                                                     \
        if (BACKEND == FL_BACKEND_POSIX_SPAWN) {                             \
            struct fl_error e_ = fl_t_spawn_fails((cmd), ENOTSUP,            \
                                                  FL_STEP_NONE, __FILE__,    \
                                                  __LINE__);                 \
            if (!strstr(e_.detail, "posix_spawn cannot set"))                \
                FAIL("refused, but not for an option: %s", e_.detail);       \
            return;                                                          \
        }                                                                    \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/* Keeps p (malloc'd) until exit, so that leak checkers stay quiet. */
void *t_keep(void *p);
char *t_strdup(const char *s);
__attribute__((format(printf, 1, 2))) char *t_fmt(const char *fmt, ...);

/* read(), where an EIO (the end on a pty master) counts only when the
 * read right after says it too: Linux can say it once before the last
 * bytes (see "Terminals" in forkless.h). */
ssize_t t_read(int fd, void *buf, size_t n);
/* Reads fd to EOF; the result is NUL-terminated and kept. */
char *t_read_all(int fd);
/* Reads fd to EOF, failing the test if no EOF arrives in timeout_ms
 * (a hang detector with a large margin, never a speed test). */
char *t_read_all_within(int fd, int timeout_ms);
/* Reads fd until what it gave so far holds needle, and returns all of it;
 * fails the test at EOF, or when nothing comes for 20 s (a hang, with a
 * large margin), or past 64 KiB. EINTR is retried. */
char *t_read_until(int fd, const char *needle);
void t_write_all(int fd, const char *s, size_t n);

/*
 * Runs cmd with stdout to a pipe (unless cmd->stdio[1] is set or fd 1 is
 * mapped), reads it to EOF, waits. *status gets the wait status. Returns
 * the output.
 */
char *t_run(const struct fl_cmd *cmd, int *status);
/* t_run() that must exit 0. */
char *t_probe(const struct fl_cmd *cmd);
/* Waits for the process (no timeout) and returns the status; fl_close()s. */
int t_wait(struct fl_proc *p);
/* Kills (SIGKILL) and reaps a process; fl_close()s. */
void t_kill_wait(struct fl_proc *p);

/* Value of the first "key value" line, or NULL. Kept. */
char *t_get(const char *out, const char *key);
/* Value as a number (base 0), failing when absent. */
long long t_get_num(const char *out, const char *key);
/* Number of lines that start with prefix. */
int t_count_lines(const char *out, const char *prefix);
/* The probe's "fd N INO MODE TARGET" lines. Returns the count. */
struct t_fd {
    int fd;
    unsigned long ino;
    char mode[4];       /* "r", "w" or "rw" */
    char target[256];
};
int t_fds(const char *out, struct t_fd *fds, int max);
/* The fd list must be exactly want[0..n). */
#define ASSERT_FDS_EXACTLY(out, ...)                                         \
    fl_t_fds_exactly((out), (int[]){ __VA_ARGS__ },                          \
                     sizeof((int[]){ __VA_ARGS__ }) / sizeof(int),           \
                     __FILE__, __LINE__)
void fl_t_fds_exactly(const char *out, const int *want, size_t n,
                      const char *file, int line);
/* The entry for fd, failing when it is absent. */
struct t_fd t_fd_entry(const char *out, int fd);
/* Inode of an fd of this process. */
unsigned long t_ino(int fd);
/* Opens a fresh file (unlinked temp file) and moves it to fd number at
 * (which must be free); returns at. cloexec says whether FD_CLOEXEC. */
int t_file_at(int at, bool cloexec);
/* The highest free fd number at or below at_most and below the soft
 * RLIMIT_NOFILE: "a high fd" wherever the fd limit is lower than usual. */
int t_high_free_fd(int at_most);
/* The dynamic loader (PT_INTERP) that the 64-bit ELF program at path
 * names, into buf; 0, or -1 where it names none or is not such a file. */
int t_elf_loader(const char *path, char *buf, size_t size);
/* True when fd is open in this process. */
bool t_fd_open(int fd);
/* True when fd is the library's own: this process's /proc/<pid>/task/<pid>/stat,
 * which a spawn keeps open for its children to read (forkless.h, "fds the
 * library keeps"). Fd counts leave it out. */
bool t_library_fd(int fd);
/* The fd of it, or -1. */
int t_library_fd_find(void);
/* From now on this process's clone3() fails with ENOSYS (a seccomp
 * filter, as a container's may be): the clone backend falls back to
 * clone(). Skips the case where no filter can be installed. */
void t_deny_clone3(void);
/* A seccomp filter that answers waitid(P_PIDFD, ...) with err (ENOSYS,
 * EPERM as container profiles do; EINVAL as Linux before 5.4), and with
 * and_pidfd_calls pidfd_send_signal() and pidfd_open() with ENOSYS. 0, or -1
 * with errno where none can be had. For a process of the case's own. */
int t_refuse_waitid_pidfd(int err, bool and_pidfd_calls);
/* The same with another errno (EPERM, as Docker's default profile gave
 * before 20.10.10). */
void t_refuse_clone3(int err);

/* Skips the case unless a pidfd tells a process from a later one with its
 * pid (pidfds in pidfs, Linux 6.9, and pidfd_open() allowed): without
 * that, an FL_NO_PIDFD handle whose child was reaped elsewhere may reach
 * a later child of ours with its pid, the window FL_NO_PIDFD documents. */
void t_needs_pidfs(void);

/* Runs fn(arg) as pid 1 of a new pid namespace, in a child of the case,
 * and returns that child's wait status (fn's return as its exit status).
 * Skips the case without root, or where no pid namespace can be had. */
int t_in_pid_namespace(int (*fn)(int), int arg);

/* A temporary directory, removed at exit by the process that made it. */
char *t_tmpdir(void);
/* Lowers RLIMIT_AS to what the process maps now plus headroom bytes (no
 * higher than the hard limit), so that a larger allocation fails; returns
 * the limit to put back with setrlimit(RLIMIT_AS, ...). Skips the case
 * where /proc/self/statm cannot say what is mapped. */
struct rlimit t_lower_address_space(unsigned long long headroom);
/* Ends a forked helper of a case (instead of _exit()): removes the
 * temporary directories the helper made itself, and only those (its
 * parent's, which it inherited the list of, are the parent's to remove). */
__attribute__((noreturn)) void t_helper_exit(int code);
/* Forks a helper that reports through a pipe: returns 0 in the helper,
 * with *fd the pipe's write end, and the helper's pid in the caller, with
 * *fd the read end (both O_CLOEXEC; the other end is closed). */
pid_t t_fork_piped(int *fd);
/* Writes a file with the given content and mode; returns path (kept). */
char *t_write_file(const char *dir, const char *name, const char *content,
                   mode_t mode);
/* Reads a file; one of the test user's own that its mode makes unreadable
 * (a child's umask) is given the owner's read bit first, as root needs none. */
char *t_read_file(const char *path);

/*
 * Standard tools (sleep, head, stty, ...) for the children of a case: the
 * suite may run with any PATH, an empty one or none at all, and a child
 * that finds its tools through the test's own PATH would fail there. They
 * come from the system's standard PATH, confstr(_CS_PATH), instead. (A
 * case about the PATH search itself sets the child's PATH as it needs.)
 *
 * t_tool() gives the absolute path of one, and SKIPs the case where the
 * system has none. t_tools_path() is "PATH=" and the standard PATH, for
 * .env_set; TOOLS_PATH_ENV is an .env_set of it alone, for a shell script
 * that runs tools by name.
 */
char *t_tool(const char *name);
const char *t_tools_path(void);
#define TOOLS_PATH_ENV ((const char *const[]){ t_tools_path(), NULL })

/* A mask from the probe's SigBlk/SigIgn/SigCgt line. */
unsigned long long t_sigmask_of(const char *out, const char *key);
#define SIGBIT(sig) (1ULL << ((sig) - 1))

/* n scaled by the environment variable FL_TEST_SCALE (default 1), and by
 * 1/4 for the fork backend, at least 1: the stress cases' loop counts. */
int t_scaled(int n);

/* Called in the loop of a background thread (churn, flood): every 64th
 * call sleeps 20 us, so that on a small machine the thread under test
 * still gets the CPU while the churn goes on. */
void t_pace(unsigned i);

/*
 * For a case whose behaviour differs for root (permissions): when run as
 * root, re-runs this case and backend as uid/gid 65534 in a child (spawned
 * with the clone backend), asserts that it passed (or skips with it), and
 * returns true: the caller returns. Returns false in that child, or when
 * not root: the caller goes on.
 */
bool t_rerun_as_nobody(void);

/*
 * For a case that runs an executable of the build tree as another user
 * (FL_SET_UID): the build tree may sit where only its owner can search
 * (a 0700 home or mktemp -d directory), and exec would fail with ENOENT.
 * Returns a copy of the file at path that every user can execute, in a
 * private directory in /tmp (mode 0755; where /tmp is mounted noexec, in
 * the first of $TMPDIR, /var/tmp, /dev/shm that is not and that every
 * user may search), removed when the case ends. One
 * copy per file name. Call it before the case starts threads or children
 * (one of them could hold the copy's write fd: ETXTBSY). fl_test_probe and
 * t_rerun_as_nobody() use it already.
 */
char *t_exe_for_anyone(const char *path);

/* Raw settings for an FL_PTY terminal (cfmakeraw(), 8 bits, 38400 baud):
 * no echo, no "\r" added, no line editing, so bytes pass as they are. */
struct termios t_raw_termios(void);

/*
 * For a case about a call that must carry on, errno and all, after a
 * signal handler interrupts the system call it sleeps in (EINTR). The
 * calling thread starts it just before the call: another thread waits
 * until the caller sleeps in one of the system calls nrs[0..n) (as
 * /proc/self/task/TID/syscall shows it: a handshake, not a delay), sends
 * it SIGUSR2, whose handler (without SA_RESTART, so that the kernel
 * restarts nothing) only counts and keeps errno, and once it has run,
 * sends SIGKILL to then_kill (a pid, or -pgid for a group) so that the
 * call can end. Skips where /proc/self/task/TID/syscall cannot be read.
 * t_interrupt_end(), after the call, joins the thread and fails the case
 * unless the signal reached the caller in that system call.
 */
struct t_interrupt;
struct t_interrupt *t_interrupt_start(const long *nrs, size_t n, pid_t then_kill);
void t_interrupt_end(struct t_interrupt *it);
/* The system calls of libc's poll() (poll or ppoll) and of its blocking
 * waitid(), for t_interrupt_start(). */
extern const long t_poll_nrs[];
extern const size_t t_npoll_nrs;
extern const long t_waitid_nrs[];
extern const size_t t_nwaitid_nrs;

/* Kills every child of this process (by scanning /proc) and reaps them. */
void t_kill_children(void);
/* A fresh cgroup v2 directory below the test's own cgroup (named for the
 * pid and the backend), or NULL without a writable v2 hierarchy. *rel
 * gets its path in the hierarchy as /proc/PID/cgroup shows it. */
char *t_make_cgroup(char **rel);
/* t_make_cgroup()'s directory, or a skip: not root, or no writable v2
 * hierarchy. rel may be NULL. */
char *t_need_cgroup(char **rel);
/* Removes it, once its last member, which may still be on its way out,
 * has left (EBUSY meanwhile). */
void t_remove_cgroup(const char *dir);
/* Is pid a live process (not gone, not a zombie)? From /proc. */
bool t_running(pid_t pid);

#endif
