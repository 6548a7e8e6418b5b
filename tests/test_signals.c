/*
 * test_signals.c: signals in and around the child (pitfalls 22-25).
 *
 * By default the child starts with an empty mask and every disposition
 * SIG_DFL; FL_KEEP_SIGNALS keeps the ignored ones and the thread's mask;
 * .sigmask and .sigdefault say exactly. Handlers never run in the child.
 */
#include "test.h"

#if defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#endif
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>

static const int ignored[] = { SIGPIPE, SIGINT, SIGQUIT, SIGCHLD, SIGTTIN,
                               SIGTTOU };
#define NIGNORED (sizeof ignored / sizeof ignored[0])

static unsigned long long ignored_bits(void)
{
    unsigned long long m = 0;
    for (size_t i = 0; i < NIGNORED; i++)
        m |= SIGBIT(ignored[i]);
    return m;
}

/*
 * glibc's posix_spawn child sets its internal signals (32 and 33, below
 * SIGRTMIN) to SIG_IGN rather than SIG_DFL, exec keeps that, and
 * posix_spawnattr_setsigdefault() cannot name them (forkless.h documents
 * it). That is the only difference tolerated, and only for posix_spawn.
 */
static unsigned long long sig_ign_of(const char *out)
{
    unsigned long long m = t_sigmask_of(out, "SigIgn");
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        m &= ~(SIGBIT(32) | SIGBIT(33));
    return m;
}

static void ignore_all(struct sigaction *old)
{
    struct sigaction sa = { .sa_handler = SIG_IGN };
    for (size_t i = 0; i < NIGNORED; i++)
        ASSERT_SYS(sigaction(ignored[i], &sa, &old[i]));
}

static void restore_all(const struct sigaction *old)
{
    for (size_t i = 0; i < NIGNORED; i++)
        sigaction(ignored[i], &old[i], NULL);
}

/* ---- handlers never run in the child (pitfall 22) ------------------------ */

static pid_t parent_pid;
static atomic_long handled, handled_elsewhere;
static volatile unsigned long canary = 0xC0FFEE;
static atomic_bool flood_stop;

static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno;
    pid_t me = (pid_t)syscall(SYS_getpid);
    if (me != parent_pid) {
        atomic_fetch_add(&handled_elsewhere, 1);
        canary = 0xDEAD; /* a handler in a CLONE_VM child writes here */
    } else {
        atomic_fetch_add(&handled, 1);
    }
    errno = saved;
}

static void *flood(void *arg)
{
    (void)arg;
    for (unsigned i = 0; !atomic_load(&flood_stop); i++) {
        kill(parent_pid, SIGUSR1);
        t_pace(i);
    }
    return NULL;
}

TEST(handler_never_runs_in_the_child_during_a_signal_flood) /* stress */
{
    parent_pid = getpid();
    struct sigaction sa = { .sa_handler = on_usr1 }, old, ign = {
        .sa_handler = SIG_IGN };
    sigemptyset(&sa.sa_mask);
    ASSERT_SYS(sigaction(SIGUSR1, &sa, &old));
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, flood, NULL));
    for (int i = 0, n = t_scaled(1000); i < n; i++) {
        struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 0);
    }
    atomic_store(&flood_stop, true);
    pthread_join(t, NULL);
    /* SIG_IGN drops a pending SIGUSR1 before SIG_DFL comes back. */
    sigaction(SIGUSR1, &ign, NULL);
    sigaction(SIGUSR1, &old, NULL);
    ASSERT_EQ(atomic_load(&handled_elsewhere), 0);
    ASSERT_EQ(canary, 0xC0FFEE);
    ASSERT_GT(atomic_load(&handled), 0);
}

/* ---- the mask (pitfall 23) ----------------------------------------------- */

struct from_thread {
    struct fl_cmd cmd;
    sigset_t mask;
    char *out;
    int r, status;
};

static void *spawn_probe_with_mask(void *argp)
{
    struct from_thread *a = argp;
    pthread_sigmask(SIG_SETMASK, &a->mask, NULL);
    struct fl_cmd c = a->cmd;
    c.stdio[1].kind = FL_PIPE;
    struct fl_proc p;
    a->r = fl_spawn(&c, &p, NULL);
    if (a->r == 0) {
        a->out = t_read_all(p.stdio[1]);
        fl_wait(&p, -1, &a->status);
        fl_close(&p);
    }
    return NULL;
}

static struct from_thread *run_in_thread(const struct fl_cmd *cmd,
                                         const sigset_t *mask)
{
    struct from_thread *a = t_keep(calloc(1, sizeof *a));
    a->cmd = *cmd;
    a->mask = *mask;
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, spawn_probe_with_mask, a));
    pthread_join(t, NULL);
    return a;
}

TEST(child_mask_is_empty_when_spawned_from_a_thread_blocking_everything)
{
    NEEDS_CLOSE_OTHERS();
    sigset_t all;
    sigfillset(&all);
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    struct from_thread *a = run_in_thread(&cmd, &all);
    ASSERT_OK(a->r);
    ASSERT_EXITED(a->status, 0);
    ASSERT_EQ(t_sigmask_of(a->out, "SigBlk"), 0);
}

TEST(child_is_killable_when_the_parent_blocks_sigterm)
{
    sigset_t m, old;
    sigemptyset(&m);
    sigaddset(&m, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &m, &old);
    struct fl_cmd cmd = {
        .argv = PROBE("sleep", "60"),
        .stdio = { { .kind = FL_NULL }, { .kind = FL_NULL } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    ASSERT_OK(fl_kill(&p, SIGTERM));
    ASSERT_SIGNALED(t_wait(&p), SIGTERM);
}

TEST(keep_signals_keeps_the_calling_threads_mask)
{
    NEEDS_CLOSE_OTHERS();
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR2);
    sigaddset(&m, SIGTERM);
    struct fl_cmd cmd = {
        .argv = PROBE("signals"),
        .flags = FL_KEEP_SIGNALS,
        .backend = BACKEND,
    };
    struct from_thread *a = run_in_thread(&cmd, &m);
    ASSERT_OK(a->r);
    ASSERT_EXITED(a->status, 0);
    ASSERT_EQ(t_sigmask_of(a->out, "SigBlk"),
              SIGBIT(SIGUSR2) | SIGBIT(SIGTERM));
}

TEST(sigmask_sets_the_childs_mask)
{
    NEEDS_CLOSE_OTHERS();
    sigset_t want, all;
    sigemptyset(&want);
    sigaddset(&want, SIGUSR2);
    sigaddset(&want, SIGHUP);
    sigfillset(&all);
    struct fl_cmd cmd = {
        .argv = PROBE("signals"),
        .sigmask = &want,
        .backend = BACKEND,
    };
    /* Whatever the spawning thread blocks. */
    struct from_thread *a = run_in_thread(&cmd, &all);
    ASSERT_OK(a->r);
    ASSERT_EQ(t_sigmask_of(a->out, "SigBlk"), SIGBIT(SIGUSR2) | SIGBIT(SIGHUP));

    /* With FL_KEEP_SIGNALS too: an explicit mask wins over the thread's. */
    cmd.flags = FL_KEEP_SIGNALS;
    a = run_in_thread(&cmd, &all);
    ASSERT_OK(a->r);
    ASSERT_EQ(t_sigmask_of(a->out, "SigBlk"), SIGBIT(SIGUSR2) | SIGBIT(SIGHUP));
}

TEST(spawn_restores_the_callers_signal_mask)
{
    NEEDS_CLOSE_OTHERS();
    sigset_t m, old, now;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    sigaddset(&m, SIGWINCH);
    pthread_sigmask(SIG_SETMASK, &m, &old);
    struct fl_cmd ok = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    struct fl_cmd bad = { .argv = ARGV("/nonexistent/x"), .backend = BACKEND };
    struct fl_proc p;
    int r1 = fl_spawn(&ok, &p, NULL);
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    bool same1 = sigismember(&now, SIGUSR1) && sigismember(&now, SIGWINCH) &&
                 !sigismember(&now, SIGTERM) && !sigismember(&now, SIGINT);
    int st = r1 == 0 ? t_wait(&p) : -1;
    int r2 = fl_spawn(&bad, &p, NULL);
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    bool same2 = sigismember(&now, SIGUSR1) && sigismember(&now, SIGWINCH) &&
                 !sigismember(&now, SIGTERM) && !sigismember(&now, SIGINT);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    ASSERT_OK(r1);
    ASSERT_EXITED(st, 0);
    ASSERT_ERR(r2, ENOENT);
    ASSERT(same1);
    ASSERT(same2);
}

/* ---- dispositions (pitfall 24) ------------------------------------------- */

/* Spawns the probe's signals report; the wait may say ECHILD while SIGCHLD
 * is ignored in the parent. */
static char *signals_report(struct fl_cmd *cmd)
{
    struct fl_cmd c = *cmd;
    c.stdio[1].kind = FL_PIPE;
    struct fl_proc p;
    SPAWN(&c, &p);
    char *out = t_read_all(p.stdio[1]);
    int st = 0;
    int r = fl_wait(&p, -1, &st);
    fl_close(&p);
    if (r == 0)
        ASSERT_EXITED(st, 0);
    else
        ASSERT_ERR(r, ECHILD);
    return out;
}

TEST(ignored_signals_are_default_in_the_child)
{
    struct sigaction old[NIGNORED];
    ignore_all(old);
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    char *out = signals_report(&cmd);
    /* The parent's own dispositions are untouched. */
    for (size_t i = 0; i < NIGNORED; i++) {
        struct sigaction now;
        sigaction(ignored[i], NULL, &now);
        if (now.sa_handler != SIG_IGN) {
            restore_all(old);
            FAIL("signal %d is no longer ignored in the parent", ignored[i]);
        }
    }
    restore_all(old);
    ASSERT_EQ(sig_ign_of(out), 0);
    ASSERT_EQ(t_sigmask_of(out, "SigCgt"), 0);
    ASSERT_EQ(t_sigmask_of(out, "SigBlk"), 0);
}

TEST(keep_signals_keeps_ignored_signals)
{
    struct sigaction old[NIGNORED];
    ignore_all(old);
    struct fl_cmd cmd = {
        .argv = PROBE("signals"),
        .flags = FL_KEEP_SIGNALS,
        .backend = BACKEND,
    };
    char *out = signals_report(&cmd);
    restore_all(old);
    ASSERT_EQ(sig_ign_of(out), ignored_bits());
}

TEST(sigdefault_with_keep_signals_resets_only_those)
{
    struct sigaction old[NIGNORED];
    sigset_t dfl;
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    sigaddset(&dfl, SIGTTOU);
    struct fl_cmd cmd = {
        .argv = PROBE("signals"),
        .flags = FL_KEEP_SIGNALS,
        .sigdefault = &dfl,
        .backend = BACKEND,
    };
    ignore_all(old);
    char *out = signals_report(&cmd);
    restore_all(old);
    ASSERT_EQ(sig_ign_of(out),
              ignored_bits() & ~(SIGBIT(SIGPIPE) | SIGBIT(SIGTTOU)));
}

static void on_term(int sig)
{
    (void)sig;
}

TEST(handled_signals_are_default_in_the_child)
{
    struct sigaction sa = { .sa_handler = on_term }, old;
    sigemptyset(&sa.sa_mask);
    ASSERT_SYS(sigaction(SIGTERM, &sa, &old));
    struct fl_cmd cmd = {
        .argv = PROBE("signals", "sleep", "60"),
        .stdio = { [1] = { .kind = FL_PIPE } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    sigaction(SIGTERM, &old, NULL);
    char line[256] = "";
    /* The report comes before the sleep. */
    ssize_t n = 0, r;
    while ((r = read(p.stdio[1], line + n, sizeof line - 1 - (size_t)n)) > 0) {
        n += r;
        line[n] = 0;
        if (strstr(line, "SigCgt"))
            break;
    }
    ASSERT_EQ(t_sigmask_of(line, "SigCgt"), 0);
    ASSERT_OK(fl_kill(&p, SIGTERM));
    ASSERT_SIGNALED(t_wait(&p), SIGTERM);
}

/* ---- SIGCHLD ignored in the parent (pitfall 25) -------------------------- */

TEST(wait_with_sigchld_ignored_gives_the_status_or_echild)
{
    struct sigaction ign = { .sa_handler = SIG_IGN }, old;
    ASSERT_SYS(sigaction(SIGCHLD, &ign, &old));
    for (int i = 0; i < 20; i++) {
        struct fl_cmd cmd = {
            .argv = PROBE("exit", "7"),
            .backend = BACKEND,
        };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        int st = 0;
        int r = fl_wait(&p, i % 2 ? -1 : 30000, &st);
        fl_close(&p);
        if (r == 0)
            ASSERT_EXITED(st, 7);
        else
            ASSERT_ERR(r, ECHILD);
    }
    /* And the child's own SIGCHLD is SIG_DFL. */
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    char *out = signals_report(&cmd);
    sigaction(SIGCHLD, &old, NULL);
    ASSERT_EQ(sig_ign_of(out) & SIGBIT(SIGCHLD), 0);
}

TEST(wait_with_sa_nocldwait_gives_the_status_or_echild)
{
    struct sigaction sa = { .sa_handler = SIG_DFL, .sa_flags = SA_NOCLDWAIT },
                     old;
    ASSERT_SYS(sigaction(SIGCHLD, &sa, &old));
    for (int i = 0; i < 20; i++) {
        struct fl_cmd cmd = { .argv = PROBE("exit", "7"), .backend = BACKEND };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        int st = 0;
        int r = fl_wait(&p, -1, &st);
        fl_close(&p);
        if (r == 0)
            ASSERT_EXITED(st, 7);
        else
            ASSERT_ERR(r, ECHILD);
    }
    sigaction(SIGCHLD, &old, NULL);
}

TEST(wait_with_sigchld_ignored_and_a_running_child_times_out)
{
    struct sigaction ign = { .sa_handler = SIG_IGN }, old;
    ASSERT_SYS(sigaction(SIGCHLD, &ign, &old));
    struct fl_cmd cmd = {
        .argv = PROBE("sleep", "60"),
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_ERR(fl_wait(&p, 50, NULL), ETIMEDOUT);
    ASSERT_OK(fl_kill(&p, SIGKILL));
    int st = 0;
    int r = fl_wait(&p, -1, &st);
    fl_close(&p);
    sigaction(SIGCHLD, &old, NULL);
    if (r == 0)
        ASSERT_SIGNALED(st, SIGKILL);
    else
        ASSERT_ERR(r, ECHILD);
}

/* A real-time signal the process ignored before it first spawned is reset
 * like the others. */
TEST(ignored_realtime_signal_is_default_in_the_child)
{
    struct sigaction sa = { .sa_handler = SIG_IGN }, old;
    ASSERT_SYS(sigaction(SIGRTMIN + 2, &sa, &old));
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    char *out = signals_report(&cmd);
    sigaction(SIGRTMIN + 2, &old, NULL);
    ASSERT_EQ(sig_ign_of(out), 0);
}

/* One ignored after the first spawn is named in .sigdefault, as the header
 * says for the clone backend; every backend then resets it. */
TEST(sigdefault_resets_a_realtime_signal_ignored_later)
{
    struct fl_cmd first = { .argv = PROBE("signals"), .backend = BACKEND };
    signals_report(&first);
    struct sigaction sa = { .sa_handler = SIG_IGN }, old;
    ASSERT_SYS(sigaction(SIGRTMIN + 3, &sa, &old));
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGRTMIN + 3);
    struct fl_cmd cmd = { .argv = PROBE("signals"), .sigdefault = &def, .backend = BACKEND };
    char *out = signals_report(&cmd);
    sigaction(SIGRTMIN + 3, &old, NULL);
    ASSERT_EQ(sig_ign_of(out), 0);
}

/* ---- sigignore ------------------------------------------------------------ */

static sigset_t one_signal(int sig)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    return set;
}

TEST(sigignore_ignores_a_signal_in_the_child)
{
    sigset_t ign = one_signal(SIGUSR2);
    struct fl_cmd cmd = { .argv = PROBE("signals"), .sigignore = &ign, .backend = BACKEND };
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        struct fl_error e = SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_PREPARE);
        ASSERT_STR_CONTAINS(e.detail, "sigignore");
        return;
    }
    char *out = signals_report(&cmd);
    ASSERT_EQ(sig_ign_of(out), SIGBIT(SIGUSR2));
}

TEST(sigignore_wins_over_sigdefault_and_keeps_the_rest)
{
    NEEDS_CLOSE_OTHERS();
    sigset_t ign = one_signal(SIGHUP), dfl = one_signal(SIGHUP);
    sigaddset(&ign, SIGRTMIN + 2);
    struct fl_cmd cmd = {
        .argv = PROBE("signals"),
        .flags = FL_KEEP_SIGNALS,
        .sigdefault = &dfl,
        .sigignore = &ign,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = signals_report(&cmd);
    ASSERT_EQ(sig_ign_of(out), SIGBIT(SIGHUP) | SIGBIT(SIGRTMIN + 2));
}

TEST(sigignore_of_sigkill_or_sigstop_is_einval)
{
    int sigs[] = { SIGKILL, SIGSTOP };
    for (size_t i = 0; i < 2; i++) {
        sigset_t ign = one_signal(sigs[i]);
        struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sigignore = &ign, .backend = BACKEND };
        struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
        ASSERT_STR_CONTAINS(e.detail, "sigignore");
    }
}

TEST(the_default_child_ignores_no_signal_at_all)
{
    /* Not even the libc's own real-time signals (glibc's posix_spawn sets
     * 32 and 33 to SIG_IGN unless asked to reset them). */
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    ASSERT_EQ(t_sigmask_of(signals_report(&cmd), "SigIgn"), 0);
}

/* ---- the library's stat fd (ignored_signals.c) ----------------------------- */

/* The child's ignored signals, spawned while this process ignores the
 * usual ones. */
static unsigned long long sig_ign_while_ignoring(struct fl_cmd *cmd)
{
    struct sigaction old[NIGNORED];
    ignore_all(old);
    char *out = signals_report(cmd);
    restore_all(old);
    return sig_ign_of(out);
}

/* The ignored signals are read at each spawn: one ignored since the last
 * spawn is reset like the others. */
TEST(a_signal_ignored_between_two_spawns_is_default_in_the_second_child)
{
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    ASSERT_EQ(sig_ign_of(signals_report(&cmd)), 0);
    ASSERT_EQ(sig_ign_while_ignoring(&cmd), 0);
}

/* The stat's second field is the process's name, which may hold ')' and
 * spaces: whatever the child makes of such a line, it must not keep a
 * signal ignored. */
TEST(ignored_signals_are_default_under_a_name_that_reads_like_stat_fields)
{
    char name[16] = "";
    ASSERT_SYS(prctl(PR_GET_NAME, name));
    ASSERT_SYS(prctl(PR_SET_NAME, ") S 1 1 1 0 (x"));
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    unsigned long long ignored = sig_ign_while_ignoring(&cmd);
    prctl(PR_SET_NAME, name);
    ASSERT_EQ(ignored, 0);
}

/* As an application's closefrom(3) would do to it. */
TEST(ignored_signals_are_default_after_the_library_fd_was_closed)
{
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    signals_report(&cmd);
    int fd = t_library_fd_find();
    if (fd >= 0)
        ASSERT_SYS(close(fd));
    ASSERT_EQ(sig_ign_while_ignoring(&cmd), 0);
}

/* The library's fd number, closed and then taken by a file of the
 * application's that reads like a stat of this process ignoring nothing:
 * the library must neither read it (inotify would see the access) nor
 * close it. */
TEST(the_library_never_reads_a_file_that_took_its_fd_number)
{
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    signals_report(&cmd);
    int fd = t_library_fd_find();
    if (fd < 0)
        fd = 100;  /* no such fd with this backend: the case still holds */
    else
        ASSERT_SYS(close(fd));
    char path[4096];
    snprintf(path, sizeof path, "%s/forged-stat", t_tmpdir());
    int file = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_SYS(file);
    ASSERT_SYS(dup3(file, fd, O_CLOEXEC));
    close(file);
    char forged[512];
    int n = snprintf(forged, sizeof forged, "%d (forged) S", (int)getpid());
    for (int field = 4; field <= 52; field++)
        n += snprintf(forged + n, sizeof forged - (size_t)n, " %d", field == 20);
    t_write_all(fd, forged, (size_t)n);
    unsigned long ino = t_ino(fd);
    int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    ASSERT_SYS(watch);
    ASSERT_SYS(inotify_add_watch(watch, path, IN_ACCESS | IN_CLOSE));
    unsigned long long ign = sig_ign_while_ignoring(&cmd);
    char ev[4096];
    ssize_t got = read(watch, ev, sizeof ev);
    int read_err = errno;
    close(watch);
    ASSERT(t_fd_open(fd));
    ASSERT_EQ(t_ino(fd), ino);
    close(fd);
    if (got >= 0)
        FAIL("the file at the library's old fd number was %s",
             ((struct inotify_event *)ev)->mask & IN_ACCESS ? "read" : "closed");
    ASSERT_ERR(read_err, EAGAIN);
    ASSERT_EQ(ign, 0);
}

/* Whether an fd of this process is open on path. */
static bool holds_file(const char *path)
{
    char link[64], target[256];
    for (int fd = 0; fd < 1024; fd++) {
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len > 0 && (target[len] = 0, strcmp(target, path) == 0))
            return true;
    }
    return false;
}

/* In a forked copy: ignores SIGINT and SIGQUIT, spawns cmd and says
 * whether its child had any signal ignored (or could not be spawned). */
static int spawn_ignoring_sigint(const struct fl_cmd *cmd)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    struct fl_cmd c = *cmd;
    c.stdio[1].kind = FL_PIPE;
    struct fl_proc p;
    struct fl_error e;
    if (fl_spawn(&c, &p, &e) != 0)
        return -1;
    char *out = t_read_all(p.stdio[1]);
    int st;
    fl_wait(&p, -1, &st);
    fl_close(&p);
    return sig_ign_of(out) != 0;
}

/* A forked copy inherits the fd, whose file is the parent's stat: it
 * must read its own, and not keep the parent's open. */
TEST(a_forked_copy_resets_what_it_ignores_itself)
{
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    signals_report(&cmd);
    pid_t parent = getpid();
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        char want[64];
        snprintf(want, sizeof want, "/proc/%d/task/%d/stat", (int)parent, (int)parent);
        if (holds_file(want))
            _exit(4);
        if (spawn_ignoring_sigint(&cmd) != 0)
            _exit(3);
        _exit(holds_file(want) ? 5 : 0);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL("the forked copy: %s",
             WIFEXITED(st) && WEXITSTATUS(st) == 3   ? "its child kept a signal it ignores, or no spawn"
             : WIFEXITED(st) && WEXITSTATUS(st) == 4 ? "it kept the parent's stat open after the fork"
             : WIFEXITED(st) && WEXITSTATUS(st) == 5 ? "it kept the parent's stat open after a spawn"
                                                     : "it failed");
}

/* The real-time signals a process ignores are asked at its first spawn:
 * a forked copy's first spawn asks again, as the copy is another process
 * and may ignore others. */
TEST(a_forked_copy_asks_again_which_realtime_signals_it_ignores)
{
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    signals_report(&cmd);
    int sig = SIGRTMIN + 3;
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        signal(sig, SIG_IGN);
        struct fl_cmd c = cmd;
        c.stdio[1].kind = FL_PIPE;
        struct fl_proc p;
        if (fl_spawn(&c, &p, NULL) != 0)
            _exit(3);
        char *out = t_read_all(p.stdio[1]);
        int st;
        fl_wait(&p, -1, &st);
        fl_close(&p);
        _exit(sig_ign_of(out) & SIGBIT(sig) ? 1 : 0);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL("the forked copy's child %s",
             WIFEXITED(st) && WEXITSTATUS(st) == 1 ? "kept a real-time signal ignored"
                                                    : "could not be spawned");
}

/* In a mount namespace of its own, a file whose stat says that nothing is
 * ignored is mounted over the process's stat in /proc: the library must
 * not take it for procfs's, and the child resets SIGPIPE all the same. */
static void spawn_under_a_stat_mounted_over(struct fl_cmd *cmd, const char *dir)
{
    char *real = t_read_file("/proc/self/stat");
    char *fake_path = t_fmt("%s/stat", dir);
    if (!real)
        _exit(5);
    /* Fields 31-34 (signal, blocked, sigignore, sigcatch), counted after
     * the ')' ending the name, are set to 0. */
    char *after = strrchr(real, ')');
    if (!after)
        _exit(5);
    char *fields[64];
    int n = 0;
    for (char *tok = strtok(after + 2, " "); tok && n < 64; tok = strtok(NULL, " "))
        fields[n++] = tok;
    FILE *f = fopen(fake_path, "w");
    if (!f || n < 34)
        _exit(5);
    fprintf(f, "%.*s)", (int)(after - real), real);
    for (int i = 0; i < n; i++)
        fprintf(f, " %s", i >= 28 && i <= 31 ? "0" : fields[i]);
    fclose(f);
    char *target = t_fmt("/proc/%d/task/%d/stat", (int)getpid(), (int)getpid());
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount(fake_path, target, NULL, MS_BIND, NULL) != 0)
        _exit(77);
    signal(SIGPIPE, SIG_IGN);
    char *out = signals_report(cmd);
    _exit(sig_ign_of(out) & SIGBIT(SIGPIPE) ? 1 : 0);
}

TEST(a_stat_file_mounted_over_the_process_s_own_is_not_read)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend reads the stat");
    if (geteuid() != 0)
        SKIP("needs root, to mount over a file of /proc");
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    char *dir = t_tmpdir();  /* here: the forked copy exits without removing one */
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0)
        spawn_under_a_stat_mounted_over(&cmd, dir);
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        SKIP("cannot mount over /proc here (no mount namespace of our own)");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL("the child kept SIGPIPE ignored, as the file mounted over the stat said (%d)",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

struct own_table_spawn {
    int fd;             /* the library's fd, in the main table */
    struct fl_cmd cmd;
    int result;
};

/* In an fd table of its own, puts another file at the library's number and
 * passes it to a child. */
static void *spawn_from_an_fd_table_of_its_own(void *arg)
{
    struct own_table_spawn *o = arg;
    o->result = -1;
    if (unshare(CLONE_FILES) != 0)
        return NULL;
    int other = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (other < 0 || dup2(other, o->fd) < 0)
        return NULL;
    close(other);
    o->cmd.stdio[0] = (struct fl_stdio){ .kind = FL_FD, .fd = o->fd };
    struct fl_proc p;
    o->result = fl_spawn(&o->cmd, &p, NULL);
    if (o->result == 0) {
        int st;
        fl_wait(&p, -1, &st);
        fl_close(&p);
    }
    return NULL;
}

/* A thread whose fd table is its own has another file at the library's
 * number: the library must not forget its fd in the other threads' table,
 * which a fork() child must still drop. */
TEST(a_thread_with_its_own_fd_table_does_not_make_the_library_lose_its_fd)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend keeps an fd of its own");
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    int st;
    t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
    int fd = t_library_fd_find();
    if (fd < 0)
        SKIP("no fd of the library's here (no /proc, or clone3() unusable)");
    struct own_table_spawn o = { .fd = fd, .cmd = cmd };
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, spawn_from_an_fd_table_of_its_own, &o));
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_OK(o.result);
    ASSERT(t_library_fd(fd));   /* ours still, in this table */
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0)
        _exit(t_fd_open(fd) ? 1 : 0);
    ASSERT_SYS(waitpid(pid, &st, 0));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL("a fork() child kept the library's fd %d", fd);
}

static atomic_bool flipping;

static void *flip_sigpipe(void *arg)
{
    (void)arg;
    struct sigaction ign = { .sa_handler = SIG_IGN }, dfl = { .sa_handler = SIG_DFL };
    while (atomic_load(&flipping)) {
        sigaction(SIGPIPE, &ign, NULL);
        sigaction(SIGPIPE, &dfl, NULL);
    }
    return NULL;
}

/* Another thread may change a disposition between the clone, which
 * copies them, and anything the child then reads about the parent's:
 * whatever the moment, the child has SIGPIPE at SIG_DFL. */
TEST(ignored_signals_are_default_while_another_thread_flips_one) /* stress */
{
    struct sigaction old;
    ASSERT_SYS(sigaction(SIGPIPE, NULL, &old));
    atomic_store(&flipping, true);
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, flip_sigpipe, NULL));
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    unsigned long long kept = 0;
    for (int i = 0, n = t_scaled(200); i < n && !kept; i++)
        kept = sig_ign_of(signals_report(&cmd));
    atomic_store(&flipping, false);
    pthread_join(th, NULL);
    sigaction(SIGPIPE, &old, NULL);
    ASSERT_EQ(kept, 0);
}

/* A thread that un-ignores a signal and ends while a spawn runs: the
 * clone may have copied the SIG_IGN, and the stat read after it then shows
 * neither the thread nor the SIG_IGN. The child must reset it whatever
 * the moment. */
static void *unignore_sigpipe_and_end(void *arg)
{
    for (volatile long i = 0; i < (long)(intptr_t)arg; i++)
        ;
    signal(SIGPIPE, SIG_DFL);
    return NULL;
}

TEST(ignored_signals_are_default_when_a_thread_that_changed_one_ends) /* stress */
{
    struct sigaction old;
    ASSERT_SYS(sigaction(SIGPIPE, NULL, &old));
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    int kept = 0, n = t_scaled(200);
    for (int i = 0; i < n; i++) {
        signal(SIGPIPE, SIG_IGN);
        pthread_t th;
        ASSERT_OK(pthread_create(&th, NULL, unignore_sigpipe_and_end,
                                 (void *)(intptr_t)(i * 37 % 4000)));
        kept += (sig_ign_of(signals_report(&cmd)) & SIGBIT(SIGPIPE)) != 0;
        pthread_join(th, NULL);
    }
    sigaction(SIGPIPE, &old, NULL);
    ASSERT_EQ(kept, 0);
}

/* A thread made with a raw clone(), which the libc does not know of (its
 * single-threaded flag stays set): the child sees it in the stat's thread
 * count and resets every signal. */
static int raw_flipper(void *arg)
{
    (void)arg;
    struct { void *handler; unsigned long flags; void *restorer; unsigned long mask; }
        ign = { SIG_IGN, 0, 0, 0 }, dfl = { SIG_DFL, 0, 0, 0 };
    while (atomic_load(&flipping)) {
        syscall(SYS_rt_sigaction, SIGPIPE, &ign, NULL, 8);
        syscall(SYS_rt_sigaction, SIGPIPE, &dfl, NULL, 8);
    }
    syscall(SYS_exit, 0);
    return 0;
}

#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN 1
#endif
#endif

TEST(ignored_signals_are_default_while_a_raw_clone_thread_flips_one) /* stress */
{
#ifdef T_TSAN
    SKIP("ThreadSanitizer cannot run a thread the libc did not make");
#endif
    struct sigaction old;
    ASSERT_SYS(sigaction(SIGPIPE, NULL, &old));
    size_t size = 64 * 1024;
    char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT(stack != MAP_FAILED);
    static pid_t tid_word;
    tid_word = 1;
    atomic_store(&flipping, true);
    /* No TLS of its own: raw_flipper makes raw system calls only. */
    int tid = clone(raw_flipper, stack + size,
                    CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                        CLONE_SYSVSEM | CLONE_CHILD_CLEARTID,
                    NULL, NULL, NULL, &tid_word);
    if (tid < 0 && errno == EINVAL) {
        atomic_store(&flipping, false);
        munmap(stack, size);
        SKIP("the libc refuses clone(CLONE_THREAD)");
    }
    ASSERT_SYS(tid);
    struct fl_cmd cmd = { .argv = PROBE("signals"), .backend = BACKEND };
    unsigned long long kept = 0;
    for (int i = 0, n = t_scaled(200); i < n && !kept; i++)
        kept = sig_ign_of(signals_report(&cmd));
    atomic_store(&flipping, false);
    while (__atomic_load_n(&tid_word, __ATOMIC_ACQUIRE) != 0)
        syscall(SYS_futex, &tid_word, FUTEX_WAIT, tid, NULL, NULL, 0);
    munmap(stack, size);
    sigaction(SIGPIPE, &old, NULL);
    ASSERT_EQ(kept, 0);
}

/* The library's fd may hold the one slot left: a spawn needs it for the
 * pidfd more, and gets it. */
TEST(a_spawn_with_one_fd_left_gets_its_pidfd)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend keeps an fd; the fork backend needs two");
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    int st;
    ASSERT_OK(fl_wait(&p, -1, &st));
    fl_close(&p);
    /* Closed, so that the next spawn opens it again into the last slot. */
    int fd = t_library_fd_find();
    if (fd >= 0)
        close(fd);
    struct rlimit old, low = { 64, 64 };
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &old));
    low.rlim_max = old.rlim_max;
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &low));
    int fills[64], nfill = 0;
    for (int fd; nfill < 64 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;)
        fills[nfill++] = fd;
    ASSERT(nfill > 0);
    close(fills[--nfill]);
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    int err = errno;
    for (int i = 0; i < nfill; i++)
        close(fills[i]);
    setrlimit(RLIMIT_NOFILE, &old);
    if (r != 0)
        FAIL("spawn with one fd left: %s", fl_t_errname(err));
    ASSERT(p.pidfd >= 0);
    ASSERT_OK(fl_wait(&p, -1, &st));
    ASSERT_EXITED(st, 0);
    fl_close(&p);
}

/* Where clone3() turns out unusable (an older kernel, a seccomp profile),
 * clone()'s child resets every signal and reads nothing: the library gives
 * its fd up, whichever spawn found out (here one with FL_KEEP_SIGNALS,
 * which never carries it), and a spawn with one fd left then gets its
 * pidfd. In a forked copy, as a filter stays. */
TEST(a_spawn_with_one_fd_left_works_where_clone3_is_denied)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend keeps an fd");
    NEEDS_SECCOMP();
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
        struct fl_proc p;
        struct fl_error e;
        int st;
        if (fl_spawn(&cmd, &p, &e) != 0)  /* clone3() works: the fd is kept */
            _exit(2);
        fl_wait(&p, -1, &st);
        fl_close(&p);
        if (t_library_fd_find() < 0)
            _exit(77);
        t_deny_clone3();
        struct fl_cmd keep = { .argv = ARGV("/bin/true"), .flags = FL_KEEP_SIGNALS,
                               .backend = BACKEND };
        if (fl_spawn(&keep, &p, &e) != 0)
            _exit(2);
        fl_wait(&p, -1, &st);
        fl_close(&p);
        if (t_library_fd_find() >= 0)
            _exit(3);
        struct rlimit low = { 32, 32 };
        if (setrlimit(RLIMIT_NOFILE, &low) != 0)
            _exit(2);
        int fd = -1;
        while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0 && fd < 31)
            ;
        if (fd != 31)
            _exit(2);
        close(fd);  /* one slot left */
        for (int i = 0; i < 2; i++) {
            if (fl_spawn(&cmd, &p, &e) != 0)
                _exit(10 + i);
            fl_wait(&p, -1, &st);
            fl_close(&p);
        }
        _exit(0);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        SKIP("no seccomp filter could be installed, or no fd was kept to begin with");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL("with clone3 denied: %s",
             !WIFEXITED(st)          ? "the helper died"
             : WEXITSTATUS(st) == 3  ? "the library kept its fd, which clone()'s child never reads"
             : WEXITSTATUS(st) == 10 ? "the first spawn with one fd left failed"
             : WEXITSTATUS(st) == 11 ? "the second spawn with one fd left failed"
                                     : "the helper failed");
}

/* With its stdio closed, a process's next open()s get 0, 1 and 2, which a
 * daemon counts on to reopen them: the library's fd takes none of them. */
TEST(the_library_fd_is_never_0_1_or_2)
{
    NEEDS_CLOSE_OTHERS();
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        int fd = t_library_fd_find();
        if (fd >= 0)
            close(fd);
        close(0);
        close(1);
        close(2);
        struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
        struct fl_proc p;
        struct fl_error e;
        int st;
        if (fl_spawn(&cmd, &p, &e) != 0)
            _exit(2);
        fl_wait(&p, -1, &st);
        fl_close(&p);
        for (int i = 0; i < 3; i++)
            if (fcntl(i, F_GETFD) != -1)
                _exit(3);
        _exit(0);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL("with stdio closed: %s", WIFEXITED(st) && WEXITSTATUS(st) == 3
                                          ? "the library took one of fds 0-2"
                                          : "the spawn failed");
}

/* A caller that ignores SIGTSTP (a job-control shell), or handles it (an
 * editor, a pager), spawns a child whose setup waits (its stdin a FIFO),
 * and ^Z reaches the group meanwhile. The child is the caller's copy until
 * its exec: the stop is the caller's to take, not a reason to stop while
 * the caller's thread waits in fl_spawn() for an exec that cannot come. */
static const char *tstp_fifo;
static atomic_int tstp_spawned, tstp_continued, tstp_handled;

static void count_tstp(int sig)
{
    (void)sig;
    atomic_fetch_add(&tstp_handled, 1);
}

/* A process's state letter from its stat; 0 when it cannot be read. */
static char state_of(int pid)
{
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f && fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
        state = 0;
    if (f)
        fclose(f);
    return state;
}

/* The pid of a child of the caller's thread caller, other than this
 * process, that sleeps in the FIFO's open(); 0 when none does yet (none
 * there, or one running: its wchan reads 0); -1 when /proc does not tell
 * (no children file, a sleeping child whose wchan reads 0 or cannot be
 * read). */
static int child_in_open(pid_t caller)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)caller, (int)caller);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int pid, found = 0;
    while (found == 0 && fscanf(f, "%d", &pid) == 1) {
        if (pid == getpid())
            continue;
        char wchan[64] = "";
        snprintf(path, sizeof path, "/proc/%d/wchan", pid);
        FILE *w = fopen(path, "r");
        if (w && !fgets(wchan, sizeof wchan, w))
            wchan[0] = 0;
        if (w)
            fclose(w);
        if (!strcmp(wchan, "wait_for_partner") || !strcmp(wchan, "fifo_open"))
            found = pid;
        else if ((!wchan[0] || !strcmp(wchan, "0")) && state_of(pid) != 'R')
            found = -1;
    }
    fclose(f);
    return found;
}

/* Waits, 10 s at most, until the child sleeps in its open(), so that the
 * ^Z comes in the setup; where /proc does not tell, 100 ms. Returns the
 * child's pid, or -1 where it was not seen. */
static pid_t wait_for_the_child_in_open(pid_t caller)
{
    for (int i = 0; i < 10000; i++, usleep(1000)) {
        int in_open = child_in_open(caller);
        if (in_open > 0)
            return in_open;
        if (in_open < 0)
            break;
    }
    usleep(100 * 1000);
    return -1;
}

static void *stop_the_group_then_write(void *arg)
{
    (void)arg;
    wait_for_the_child_in_open(getpid());
    kill(0, SIGTSTP);
    usleep(100 * 1000);
    int fd = open(tstp_fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    for (int i = 0; i < 5000 && !atomic_load(&tstp_spawned); i++)
        usleep(1000);
    if (!atomic_load(&tstp_spawned)) {
        atomic_store(&tstp_continued, 1);
        kill(0, SIGCONT);         /* let the failing case end */
    }
    usleep(100 * 1000);
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* The same from a process, so that the caller keeps one thread: a
 * spawn's child then learns the caller's dispositions from its stat
 * (ignored_signals.c). The caller kills it once fl_spawn() has returned;
 * one that lives to send SIGCONT says so in *continued (shared), and
 * keeps the FIFO open for the child's open() to end. */
static pid_t stop_the_group_then_write_from_a_process(atomic_int *continued)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    wait_for_the_child_in_open(getppid());
    kill(0, SIGTSTP);
    usleep(100 * 1000);
    open(tstp_fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    sleep(5);
    atomic_store(continued, 1);
    kill(0, SIGCONT);
    for (;;)
        pause();
}

/* disposition: SIG_IGN, or count_tstp; the ^Z from a thread, or from a
 * process. */
static void stop_during_a_spawn_s_setup(void (*disposition)(int), bool from_a_process)
{
    ASSERT_SYS(setpgid(0, 0));
    struct sigaction sa = { .sa_handler = disposition };
    ASSERT_SYS(sigaction(SIGTSTP, &sa, NULL));
    tstp_fifo = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(tstp_fifo, 0600));
    pthread_t t;
    pid_t sender = -1;
    atomic_int *continued = NULL;
    if (from_a_process) {
        continued = mmap(NULL, sizeof *continued, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ASSERT(continued != MAP_FAILED);
        ASSERT_SYS(sender = stop_the_group_then_write_from_a_process(continued));
    } else
        ASSERT_OK(pthread_create(&t, NULL, stop_the_group_then_write, NULL));
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .backend = BACKEND,
                          .stdio = { [0] = { .kind = FL_FILE, .path = tstp_fifo } } };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    atomic_store(&tstp_spawned, 1);
    if (from_a_process) {
        kill(sender, SIGKILL);
        ASSERT_EQ(waitpid(sender, NULL, 0), sender);
        atomic_store(&tstp_continued, atomic_load(continued));
        munmap(continued, sizeof *continued);
    } else {
        ASSERT_OK(pthread_join(t, NULL));
    }
    ASSERT_OK(r);
    ASSERT_EXITED(t_wait(&p), 0);
    if (atomic_load(&tstp_continued))
        FAIL("the child stopped in its setup: fl_spawn() returned only after a SIGCONT");
    if (disposition == count_tstp)
        ASSERT_EQ(atomic_load(&tstp_handled), 1);  /* the caller took the ^Z */
}

TEST(a_stop_the_caller_ignores_does_not_stop_a_spawn_in_its_setup)
{
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SKIP("glibc's posix_spawn child blocks every signal during its setup and "
             "unblocks them at its end, where one that came meanwhile stops it");
    stop_during_a_spawn_s_setup(SIG_IGN, false);
}

TEST(a_stop_the_caller_ignores_does_not_stop_a_spawn_in_its_setup_where_clone3_is_denied)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend uses clone3()");
    t_deny_clone3();
    stop_during_a_spawn_s_setup(SIG_IGN, false);
}

TEST(a_stop_the_caller_handles_does_not_stop_a_spawn_in_its_setup)
{
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SKIP("glibc's posix_spawn child blocks every signal during its setup and "
             "unblocks them at its end, where one that came meanwhile stops it");
    stop_during_a_spawn_s_setup(count_tstp, false);
}

/* A launch's caller does not wait for the exec: its child, at SIG_DFL
 * for the caller's handled stop, stops as the program would, whichever
 * way it was cloned: in its open() after clone3() (CLONE_CLEAR_SIGHAND),
 * at the end of its setup after clone(), which blocks the stops until it
 * has reset the handlers. */
static void stop_during_a_launch_s_setup(void)
{
    ASSERT_SYS(setpgid(0, 0));
    struct sigaction sa = { .sa_handler = count_tstp };
    ASSERT_SYS(sigaction(SIGTSTP, &sa, NULL));
    tstp_fifo = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(tstp_fifo, 0600));
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .backend = BACKEND,
                          .flags = FL_NO_WAIT_EXEC,
                          .stdio = { [0] = { .kind = FL_FILE, .path = tstp_fifo } } };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    wait_for_the_child_in_open(getpid());
    kill(0, SIGTSTP);
    int fd = open(tstp_fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    ASSERT_SYS(fd);
    siginfo_t si = { 0 };
    for (int i = 0; i < 10000 && si.si_pid == 0; i++, usleep(1000))
        ASSERT_SYS(waitid(P_PID, (id_t)p.pid, &si, WSTOPPED | WEXITED | WNOHANG | WNOWAIT));
    kill(p.pid, SIGCONT);
    ASSERT_EXITED(t_wait(&p), 0);
    close(fd);
    ASSERT_EQ(si.si_code, CLD_STOPPED);
    ASSERT_EQ(atomic_load(&tstp_handled), 1);
}

TEST(a_stop_the_caller_handles_stops_a_launch_in_its_setup)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend launches without waiting for the exec");
    stop_during_a_launch_s_setup();
}

TEST(a_stop_the_caller_handles_stops_a_launch_in_its_setup_where_clone3_is_denied)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend uses clone3()");
    t_deny_clone3();
    stop_during_a_launch_s_setup();
}

/* A child killed before its exec (here in its setup's open()) was made:
 * the spawn succeeds, as posix_spawn() does, and the wait status names
 * the signal. An error would say that no process ran, which is not so:
 * the caller may have seen its pid, and a kill-tree may have sent it. */
static void *kill_the_child_in_open(void *arg)
{
    /* A fork() child may sleep elsewhere on its way (wchan 0): not yet. */
    pid_t pid = 0;
    for (int i = 0; i < 10000 && pid <= 0; i++, usleep(1000))
        pid = child_in_open(getpid());
    *(int *)arg = pid > 0 && kill(pid, SIGKILL) == 0;
    if (*(int *)arg != 1) {  /* let the spawn end: a writer for its open() */
        int fd = open(tstp_fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        usleep(100 * 1000);
        close(fd);
    }
    return NULL;
}

TEST(a_child_killed_before_its_exec_is_spawned_and_its_status_says_the_signal)
{
    tstp_fifo = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(tstp_fifo, 0600));
    int killed = 0;
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, kill_the_child_in_open, &killed));
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .backend = BACKEND,
                          .stdio = { [0] = { .kind = FL_FILE, .path = tstp_fifo } } };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    ASSERT_OK(pthread_join(t, NULL));
    if (!killed) {
        if (!r)
            t_wait(&p);
        SKIP("/proc did not show the child in its open() (no children file, or no wchan)");
    }
    ASSERT_OK(r);
    ASSERT(p.pid > 0);
    ASSERT_SIGNALED(t_wait(&p), SIGKILL);
}

/* Sends SIGTERM to the child in its setup's open(), and lets it go (a
 * writer for the FIFO) only if it is still there seconds later. */
static void *terminate_the_child_in_open(void *arg)
{
    pid_t pid = 0;
    for (int i = 0; i < 10000 && pid <= 0; i++, usleep(1000))
        pid = child_in_open(getpid());
    int *outcome = arg;  /* 0: never seen in open(), 1: ended by it, 2: held */
    *outcome = pid > 0 && kill(pid, SIGTERM) == 0;
    for (int i = 0; *outcome == 1 && i < 10000 && child_in_open(getpid()) == pid; i++)
        usleep(1000);
    if (*outcome != 1 || child_in_open(getpid()) == pid) {
        *outcome = *outcome ? 2 : 0;
        int fd = open(tstp_fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        usleep(100 * 1000);
        close(fd);
    }
    return NULL;
}

/* A supervisor blocks the signals it takes from a signalfd: the child's
 * setup must still end by one that ends the program, or a setup that
 * waits holds the child, and the caller in its spawn, for ever. */
static void a_blocked_sigterm_ends_a_spawn_s_setup(void)
{
    tstp_fifo = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(tstp_fifo, 0600));
    int outcome = 0;
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, terminate_the_child_in_open, &outcome));
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ASSERT_OK(pthread_sigmask(SIG_BLOCK, &term, &old));
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .backend = BACKEND,
                          .stdio = { [0] = { .kind = FL_FILE, .path = tstp_fifo } } };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    ASSERT_OK(pthread_sigmask(SIG_SETMASK, &old, NULL));
    ASSERT_OK(pthread_join(t, NULL));
    if (!outcome) {
        if (!r)
            t_wait(&p);
        SKIP("/proc did not show the child in its open() (no children file, or no wchan)");
    }
    ASSERT_OK(r);
    int st = t_wait(&p);
    if (outcome == 2)
        FAIL("the SIGTERM did not end the child's setup: it went on only when its open() did");
    ASSERT_SIGNALED(st, SIGTERM);
}

TEST(a_signal_the_caller_blocks_still_ends_a_spawn_s_setup)
{
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SKIP("glibc's posix_spawn child blocks every signal during its setup");
    a_blocked_sigterm_ends_a_spawn_s_setup();
}

TEST(a_signal_the_caller_blocks_still_ends_a_spawn_s_setup_where_clone3_is_denied)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend uses clone3()");
    t_deny_clone3();
    a_blocked_sigterm_ends_a_spawn_s_setup();
}

/* One thread: the child reads the handler from the stat, not the parent
 * from sigaction(). */
TEST(a_stop_a_single_threaded_caller_handles_does_not_stop_a_spawn_in_its_setup)
{
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SKIP("glibc's posix_spawn child blocks every signal during its setup and "
             "unblocks them at its end, where one that came meanwhile stops it");
#if defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
    ASSERT(__libc_single_threaded);
#endif
#endif
    stop_during_a_spawn_s_setup(count_tstp, true);
}

TEST(a_stop_the_caller_handles_does_not_stop_a_spawn_in_its_setup_where_clone3_is_denied)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend uses clone3()");
    t_deny_clone3();
    stop_during_a_spawn_s_setup(count_tstp, false);
}
