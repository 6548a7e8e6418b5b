/*
 * test_hostile.c: spawning from a parent in a hostile state: fds 0-2
 * closed, SIGCHLD ignored, a foreign waitpid(-1) reaper, a timer signal
 * without SA_RESTART every millisecond, RLIMIT_NOFILE at 1<<20, the parent
 * at its fd limit, RLIMIT_NPROC reached, a 64 KiB PATH from a thread with a
 * 64 KiB stack, a 1 TiB PROT_NONE reservation, and a MADV_DONTFORK region
 * written during spawns (pitfalls 2, 6, 16, 19, 25, 26, 27, 31, 46).
 *
 * Each case prints one "REPORT scenario=... " line (see test_stress.c).
 * Nothing here asserts a duration.
 */
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static void report(const char *scenario, int spawns, long signals,
                   long faults, int cases, const char *pitfalls,
                   const char *extra)
{
    printf("REPORT scenario=%s spawns=%d signals=%ld faults=%ld cases=%d "
           "failures=0 pitfalls=%s backend=%s%s%s\n",
           scenario, spawns, signals, faults, cases, pitfalls,
           fl_backend_name(BACKEND), extra && *extra ? " " : "",
           extra ? extra : "");
}

/* The number of open fds of this process. With a DIR opened beforehand
 * (the parent at its fd limit cannot open one), it is rewound and used. */
static DIR *fd_dir;
static int count_fds(void)
{
    int n = 0;
    DIR *d = fd_dir ? fd_dir : opendir("/proc/self/fd");
    if (!d)
        FAIL("opendir /proc/self/fd: %s", strerror(errno));
    rewinddir(d);
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && !t_library_fd(atoi(de->d_name)))
            n++;
    if (d != fd_dir)
        closedir(d);
    return n - 1; /* the directory's own fd */
}

static bool proc_empty(const struct fl_proc *p)
{
    return p->pid == 0 && p->pidfd == -1 && p->stdio[0] == -1 &&
           p->stdio[1] == -1 && p->stdio[2] == -1;
}

/* ---- fds 0-2 closed in the parent (pitfall 31) -------------------------- */

TEST(closed_stdio_in_parent)
{
    NEEDS_CLOSE_OTHERS();
    int n = t_scaled(20);
    int saved[3];
    for (int fd = 0; fd < 3; fd++) {
        saved[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 400);
        ASSERT_GE(saved[fd], 400);
    }
    close(0);
    close(1);
    close(2);
    char why[512] = "";
    int spawns = 0;
    for (int i = 0; i < n && !why[0]; i++) {
        struct fl_cmd cmd = {
            .argv = PROBE("cat", "stderr", "to-err", "fds", "exit", "4"),
            .stdio = { { .kind = FL_PIPE }, { .kind = FL_PIPE },
                       { .kind = FL_PIPE } },
            .backend = BACKEND,
        };
        struct fl_proc p;
        struct fl_error e;
        int r = fl_spawn(&cmd, &p, &e);
        if (r != 0) {
            char b[256];
            snprintf(why, sizeof why, "fl_spawn: %s",
                     fl_error_format(&e, b, sizeof b));
            break;
        }
        spawns++;
        /* The pipe ends may well be fds 0-2 of the parent now. */
        t_write_all(p.stdio[0], "hello\n", 6);
        close(p.stdio[0]);
        p.stdio[0] = -1;
        char *out = t_read_all(p.stdio[1]);
        char *err = t_read_all(p.stdio[2]);
        close(p.stdio[1]);
        close(p.stdio[2]);
        p.stdio[1] = p.stdio[2] = -1;
        int st = -1;
        r = fl_wait(&p, -1, &st);
        fl_close(&p);
        if (r != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 4)
            snprintf(why, sizeof why, "wait %d status 0x%x", r, st);
        else if (strncmp(out, "hello\n", 6) != 0)
            snprintf(why, sizeof why, "stdout round trip: \"%.100s\"", out);
        else if (strcmp(err, "to-err\n") != 0)
            snprintf(why, sizeof why, "stderr: \"%.100s\"", err);
        else if (t_count_lines(out, "fd ") != 3)
            snprintf(why, sizeof why, "child fds not 0-2: %.300s", out);
    }
    for (int fd = 0; fd < 3; fd++) {
        ASSERT_EQ(dup2(saved[fd], fd), fd);
        close(saved[fd]);
    }
    if (why[0])
        FAIL("%s", why);
    report("closed_stdio_in_parent", spawns, 0, 0, 1, "31", "");
}

/* ---- SIGCHLD = SIG_IGN (pitfall 25) ------------------------------------- */

TEST(sigchld_ignored)
{
    struct sigaction ign = { .sa_handler = SIG_IGN }, old;
    ASSERT_SYS(sigaction(SIGCHLD, &ign, &old));
    int n = t_scaled(20), exact = 0, echild = 0;
    for (int i = 0; i < n; i++) {
        char code[8];
        snprintf(code, sizeof code, "%d", i % 100);
        struct fl_cmd cmd = { .argv = PROBE("signals", "exit", code),
                              .backend = BACKEND };
        int st = -1;
        struct fl_proc p;
        struct fl_cmd c = cmd;
        c.stdio[1].kind = FL_PIPE;
        SPAWN(&c, &p);
        char *out = t_read_all(p.stdio[1]);
        close(p.stdio[1]);
        p.stdio[1] = -1;
        int r = fl_wait(&p, -1, &st);
        fl_close(&p);
        if (r == 0) {
            ASSERT_EXITED(st, i % 100);
            exact++;
        } else {
            ASSERT_ERR(r, ECHILD);
            echild++;
        }
        /* The child's SIGCHLD is SIG_DFL again. */
        ASSERT_EQ(t_sigmask_of(out, "SigIgn") & SIGBIT(SIGCHLD), 0);
    }
    /* A failed spawn under SIG_IGN is clean, too. */
    struct fl_cmd bad = { .argv = ARGV("/nonexistent/fl-prog"),
                          .backend = BACKEND };
    SPAWN_FAILS(&bad, ENOENT, FL_STEP_EXEC);
    sigaction(SIGCHLD, &old, NULL);
    report("sigchld_ignored", n + 1, 0, 0, 2, "25",
           t_fmt("exact_status=%d echild=%d", exact, echild));
}

/* ---- a foreign waitpid(-1) reaper (pitfall 26) -------------------------- */

#define REAPED_MAX 4096
static struct {
    atomic_int pid;
    int status;
} reaped[REAPED_MAX];
static atomic_int nreaped;
static atomic_long reaper_runs;

static void foreign_reaper(int sig)
{
    (void)sig;
    int saved = errno, st;
    pid_t pid;
    atomic_fetch_add(&reaper_runs, 1);
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        int k = atomic_fetch_add(&nreaped, 1);
        if (k < REAPED_MAX) {
            reaped[k].status = st;
            atomic_store(&reaped[k].pid, pid);
        }
    }
    errno = saved;
}

static int reaped_status(pid_t pid)
{
    int n = atomic_load(&nreaped);
    for (int k = n < REAPED_MAX ? n : REAPED_MAX; k-- > 0;)
        if (atomic_load(&reaped[k].pid) == pid)
            return reaped[k].status;
    return -1;
}

TEST(foreign_waitpid_reaper)
{
    struct sigaction sa = { .sa_handler = foreign_reaper,
                            .sa_flags = SA_RESTART }, old;
    sigemptyset(&sa.sa_mask);
    ASSERT_SYS(sigaction(SIGCHLD, &sa, &old));
    int n = t_scaled(40), exact = 0, echild = 0;
    for (int i = 0; i < n; i++) {
        int code = (i * 13) % 120;
        char cs[8];
        snprintf(cs, sizeof cs, "%d", code);
        struct fl_cmd cmd = {
            .argv = i % 3 ? PROBE("exit", cs) : PROBE("sleep", "0.01", "exit", cs),
            .backend = BACKEND,
        };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        pid_t pid = p.pid;
        int st = -1;
        int r = fl_wait(&p, i % 2 ? -1 : 10000, &st);
        fl_close(&p);
        if (r == 0) {
            /* Never another process's status. */
            ASSERT_EXITED(st, code);
            exact++;
        } else {
            ASSERT_ERR(r, ECHILD);
            echild++;
            /* The reaper has it, with the right status. */
            int fst = reaped_status(pid);
            ASSERT_NE(fst, -1);
            ASSERT_EXITED(fst, code);
        }
    }
    /* A spawn that fails in the child while the reaper runs. */
    struct fl_cmd bad = { .argv = PROBE("exit", "0"), .cwd = "/nonexistent-d",
                          .backend = BACKEND };
    SPAWN_FAILS(&bad, ENOENT, FL_STEP_CHDIR);
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    sigaction(SIGCHLD, &dfl, NULL);
    sigaction(SIGCHLD, &old, NULL);
    report("foreign_waitpid_reaper", n + 1, atomic_load(&reaper_runs), 0, 2,
           "26,37", t_fmt("exact_status=%d echild=%d", exact, echild));
}

/* ---- a 1 ms timer signal without SA_RESTART (pitfall 27) ----------------- */

static atomic_long ticks;
static void on_tick(int sig)
{
    (void)sig;
    atomic_fetch_add(&ticks, 1);
}

TEST(timer_signal_every_ms_without_sa_restart) /* stress */
{
    /* ITIMER_REAL would take the runner's watchdog alarm(); a POSIX timer
     * on CLOCK_MONOTONIC with SIGUSR2 is setitimer() by another name. A
     * second timer, ITIMER_PROF, fires while the parent burns CPU. */
    struct sigaction sa = { .sa_handler = on_tick, .sa_flags = 0 }, old2,
                     oldprof;
    sigemptyset(&sa.sa_mask);
    ASSERT_SYS(sigaction(SIGUSR2, &sa, &old2));
    ASSERT_SYS(sigaction(SIGPROF, &sa, &oldprof));
    timer_t tm;
    struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL,
                            .sigev_signo = SIGUSR2 };
    ASSERT_SYS(timer_create(CLOCK_MONOTONIC, &sev, &tm));
    struct itimerspec its = { .it_interval = { 0, 1000000 },
                              .it_value = { 0, 1000000 } };
    ASSERT_SYS(timer_settime(tm, 0, &its, NULL));
    struct itimerval itv = { .it_interval = { 0, 1000 },
                             .it_value = { 0, 1000 } };
    ASSERT_SYS(setitimer(ITIMER_PROF, &itv, NULL));

    int n = t_scaled(60), timeouts = 0;
    for (int i = 0; i < n; i++) {
        char code[8];
        snprintf(code, sizeof code, "%d", i % 50);
        bool slow = i % 10 == 0;
        struct fl_cmd cmd = {
            .argv = slow ? PROBE("sleep", "0.05", "echo", "out", "exit", code)
                         : PROBE("echo", "out", "exit", code),
            .stdio = { [1] = { .kind = FL_PIPE } },
            .backend = BACKEND,
        };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        int st = -1;
        if (slow) {
            /* A short timed wait runs out while ticks interrupt it. */
            int r = fl_wait(&p, 2, &st);
            if (r == ETIMEDOUT)
                timeouts++;
            else
                ASSERT_OK(r);
            if (r == 0) {
                char *out = t_read_all(p.stdio[1]);
                ASSERT_STR_EQ(out, "out\n");
                ASSERT_EXITED(st, i % 50);
                fl_close(&p);
                continue;
            }
        }
        char *out = t_read_all(p.stdio[1]);
        ASSERT_STR_EQ(out, "out\n");
        ASSERT_OK(fl_wait(&p, i % 2 ? -1 : 30000, &st));
        ASSERT_EXITED(st, i % 50);
        fl_close(&p);
    }
    struct itimerval off = { 0 };
    setitimer(ITIMER_PROF, &off, NULL);
    timer_delete(tm);
    struct sigaction ign = { .sa_handler = SIG_IGN };
    sigaction(SIGUSR2, &ign, NULL);
    sigaction(SIGPROF, &ign, NULL);
    sigaction(SIGUSR2, &old2, NULL);
    sigaction(SIGPROF, &oldprof, NULL);
    report("timer_signal_every_ms_without_sa_restart", n, atomic_load(&ticks),
           0, 1, "27", t_fmt("timed_waits_expired=%d", timeouts));
}

/* ---- RLIMIT_NOFILE at 1<<20 (pitfall 6) ---------------------------------- */

TEST(nofile_limit_one_million)
{
    struct rlimit old, big = { 1u << 20, 1u << 20 };
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &old));
    if (old.rlim_max < big.rlim_max) {
        if (setrlimit(RLIMIT_NOFILE, &big) != 0)
            big.rlim_cur = big.rlim_max = old.rlim_max; /* not root */
    }
    big.rlim_max = big.rlim_max > old.rlim_max ? big.rlim_max : old.rlim_max;
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &big));
    /* An inheritable fd high up, and one low. */
    int high = big.rlim_cur > 4096 ? (int)big.rlim_cur - 7 : t_high_free_fd(4000);
    int f = t_file_at(9, false);
    ASSERT_EQ(dup2(f, high), high);
    int n = t_scaled(20);
    for (int i = 0; i < n; i++) {
        struct fl_cmd cmd = { .argv = PROBE("fds", "rlimits"),
                              .backend = BACKEND };
        char *out = t_probe(&cmd);
        ASSERT_FDS_EXACTLY(out, 0, 1, 2);
    }
    /* Mapped fds survive, the rest go. */
    struct fl_cmd cmd = { .argv = PROBE("fds"),
                          .fds = (struct fl_fd_map[]){ { 5, high } },
                          .nfds = 1,
                          .backend = BACKEND };
    char *out = t_probe(&cmd);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2, 5);
    ASSERT_EQ(t_fd_entry(out, 5).ino, t_ino(high));
    close(high);
    close(f);
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &old));
    report("nofile_limit_one_million", n + 1, 0, 0, 2, "6,29",
           t_fmt("nofile=%llu requested=%u high_fd=%d%s",
                 (unsigned long long)big.rlim_cur, 1u << 20, high,
                 big.rlim_cur < (1u << 20)
                     ? " note=hard_limit_below_request_no_CAP_SYS_RESOURCE"
                     : ""));
}

/* ---- the parent at its fd limit: EMFILE (pitfall 19's sibling) ----------- */

TEST(parent_at_fd_limit_emfile)
{
    NEEDS_CLOSE_OTHERS();
    struct rlimit old;
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &old));
    /* Fill every free fd below 64, then lower the soft limit to 64. */
    int lim = 64, filled[64], nfilled = 0;
    fd_dir = opendir("/proc/self/fd");
    ASSERT(fd_dir != NULL);
    for (;;) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        if (fd >= lim) {
            close(fd);
            break;
        }
        filled[nfilled++] = fd;
    }
    struct rlimit small = { (rlim_t)lim, old.rlim_max };
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &small));

    int emfile = 0, ok = 0, cases = 0;
    /* k = free fds: 0 .. 9 with three pipes asked for (the fork backend
     * needs two more for its error pipe). */
    for (int k = 0; k <= 9; k++) {
        for (int j = 0; j < k; j++)
            close(filled[nfilled - 1 - j]);
        int before = count_fds();
        for (int rep = 0; rep < 3; rep++) {
            struct fl_cmd cmd = {
                .argv = PROBE("exit", "0"),
                .stdio = { { .kind = FL_PIPE }, { .kind = FL_PIPE },
                           { .kind = FL_PIPE } },
                .backend = BACKEND,
            };
            struct fl_proc p;
            struct fl_error e;
            memset(&p, 0x5a, sizeof p);
            int r = fl_spawn(&cmd, &p, &e);
            cases++;
            if (r == 0) {
                ok++;
                for (int s = 0; s < 3; s++)
                    close(p.stdio[s]), p.stdio[s] = -1;
                int st = -1;
                ASSERT_OK(fl_wait(&p, -1, &st));
                ASSERT_EXITED(st, 0);
                fl_close(&p);
            } else {
                char b[512];
                if (r != EMFILE)
                    FAIL("k=%d: fl_spawn returned %s, expected 0 or EMFILE: %s",
                         k, fl_t_errname(r), fl_error_format(&e, b, sizeof b));
                ASSERT_EQ(e.err, EMFILE);
                ASSERT(proc_empty(&p));
                emfile++;
            }
            /* Nothing leaked either way. */
            ASSERT_EQ(count_fds(), before);
        }
        if (k == 0)
            ASSERT_EQ(emfile, 3); /* no fd at all: it must fail */
        for (int j = 0; j < k; j++) {
            int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
            ASSERT_GE(fd, 0);
            filled[nfilled - 1 - j] = fd;
        }
    }
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &old));
    for (int i = 0; i < nfilled; i++)
        close(filled[i]);
    closedir(fd_dir);
    fd_dir = NULL;
    report("parent_at_fd_limit_emfile", ok, 0, 0, cases, "19,30",
           t_fmt("emfile=%d succeeded=%d", emfile, ok));
}

/* ---- RLIMIT_NPROC reached: EAGAIN (pitfall 19) --------------------------- */

TEST(nproc_limit_reached_eagain)
{
    if (t_rerun_as_nobody())
        return; /* the case ran as uid 65534 and printed its REPORT */
    if (geteuid() == 0)
        SKIP("root ignores RLIMIT_NPROC");
    struct rlimit old;
    ASSERT_SYS(getrlimit(RLIMIT_NPROC, &old));
    struct rlimit zero = { 0, old.rlim_max };
    int n = t_scaled(10);
    int before = count_fds();
    /* Where posix_spawn cannot close fds, it can still be asked. */
    unsigned keep = FL_T_POSIX_SPAWN_CLOSES_FDS ? 0 : FL_KEEP_FDS;
    ASSERT_SYS(setrlimit(RLIMIT_NPROC, &zero));
    for (int i = 0; i < n; i++) {
        struct fl_cmd cmd = {
            .argv = PROBE("exit", "0"),
            /* Every other one without an open() in the child, where a
             * posix_spawn() error can only be exec's or the clone's. */
            .stdio = { { .kind = FL_PIPE }, { .kind = FL_PIPE },
                       { .kind = i % 2 ? FL_INHERIT : FL_NULL } },
            .flags = keep,
            .backend = BACKEND,
        };
        struct fl_error e = fl_t_spawn_fails(&cmd, EAGAIN, FL_STEP_NONE,
                                             __FILE__, __LINE__);
        /* Creating the process failed: the error must not blame exec
         * (posix_spawn cannot say where, so FL_STEP_SPAWN is allowed). */
        if (BACKEND != FL_BACKEND_POSIX_SPAWN)
            ASSERT_EQ(e.step, FL_STEP_CLONE);
        else if (e.step != FL_STEP_CLONE && e.step != FL_STEP_SPAWN) {
            char b[512];
            printf("REPORT scenario=nproc_limit_reached_eagain spawns=0 "
                   "signals=0 faults=0 cases=2 failures=1 pitfalls=19 "
                   "backend=%s reason=eagain_blamed_on_step_%s\n",
                   fl_backend_name(BACKEND), fl_step_name(e.step));
            FAIL("EAGAIN from creating the process is blamed on step %s: %s",
                 fl_step_name(e.step), fl_error_format(&e, b, sizeof b));
        }
        ASSERT_EQ(count_fds(), before);
    }
    ASSERT_SYS(setrlimit(RLIMIT_NPROC, &old));
    /* And it works again. */
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .flags = keep, .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_EQ(count_fds(), before);
    report("nproc_limit_reached_eagain", n + 1, 0, 0, 2, "19",
           t_fmt("uid=%u", (unsigned)getuid()));
}

TEST(an_eagain_at_the_first_spawn_leaves_the_default_backend_as_it_was)
{
    /* The default backend asks once per process whether CLONE_VM shares
     * memory, with a child of its own: one that cannot start proves
     * nothing, and must not turn the process to the fork backend. */
    if (t_rerun_as_nobody())
        return;
    if (geteuid() == 0)
        SKIP("root ignores RLIMIT_NPROC");
    struct rlimit old;
    ASSERT_SYS(getrlimit(RLIMIT_NPROC, &old));
    ASSERT_SYS(setrlimit(RLIMIT_NPROC, &(struct rlimit){ 0, old.rlim_max }));
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .backend = FL_BACKEND_AUTO };
    struct fl_error e = fl_t_spawn_fails(&cmd, EAGAIN, FL_STEP_CLONE, __FILE__, __LINE__);
    ASSERT_EQ(e.err, EAGAIN);
    ASSERT_SYS(setrlimit(RLIMIT_NPROC, &old));
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.backend, FL_BACKEND_CLONE);
    ASSERT_EXITED(t_wait(&p), 0);
}

/* ---- a 64 KiB PATH from a thread with a 64 KiB stack (pitfall 16) ------- */

struct long_path_job {
    char *path_var;
    int ok, enoent;
    char why[512];
};

static void *long_path_thread(void *arg)
{
    struct long_path_job *j = arg;
    const char *set[] = { j->path_var, NULL };
    /* Found at the end of the PATH. */
    struct fl_cmd cmd = { .argv = ARGV("true"), .env_set = set,
                          .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    if (r != 0) {
        char b[256];
        snprintf(j->why, sizeof j->why, "spawn true: %s",
                 fl_error_format(&e, b, sizeof b));
        return NULL;
    }
    int st = -1;
    r = fl_wait(&p, -1, &st);
    fl_close(&p);
    if (r != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(j->why, sizeof j->why, "true: wait %d status 0x%x", r, st);
        return NULL;
    }
    j->ok = 1;
    /* Not found anywhere: ENOENT after every candidate. */
    struct fl_cmd none = { .argv = ARGV("fl-no-such-program-xyz"),
                           .env_set = set, .backend = BACKEND };
    r = fl_spawn(&none, &p, &e);
    if (r == 0) {
        fl_wait(&p, -1, NULL);
        fl_close(&p);
        snprintf(j->why, sizeof j->why, "a missing program was spawned");
        return NULL;
    }
    if (r != ENOENT || !proc_empty(&p)) {
        snprintf(j->why, sizeof j->why, "missing program: %s",
                 fl_t_errname(r));
        return NULL;
    }
    j->enoent = 1;
    return NULL;
}

TEST(long_path_small_stack_thread)
{
    NEEDS_CLOSE_OTHERS();
    /* 64 KiB of 250-character components that do not exist, then the
     * real directories. */
    size_t cap = 70 * 1024, len = 0;
    char *v = t_keep(malloc(cap));
    len += (size_t)snprintf(v, cap, "PATH=");
    int comps = 0;
    while (len < 64 * 1024) {
        len += (size_t)snprintf(v + len, cap - len, "/nonexistent-%03d-", comps++);
        while (len % 250 != 0)
            v[len++] = 'x';
        v[len++] = ':';
        v[len] = 0;
    }
    len += (size_t)snprintf(v + len, cap - len, "/usr/bin:/bin");
    struct long_path_job j = { .path_var = v };
    pthread_attr_t a;
    pthread_attr_init(&a);
    /* 64 KiB, or the least the platform (or a sanitizer) allows. */
    size_t stack = 64 * 1024;
    ASSERT_OK(pthread_attr_setstacksize(&a, stack));
    pthread_t t;
    ASSERT_OK(pthread_create(&t, &a, long_path_thread, &j));
    pthread_join(t, NULL);
    pthread_attr_destroy(&a);
    if (j.why[0])
        FAIL("%s", j.why);
    ASSERT(j.ok && j.enoent);
    report("long_path_small_stack_thread", 2, 0, 0, 2, "16",
           t_fmt("path_bytes=%zu components=%d thread_stack=%zu", len - 5,
                 comps + 2, stack));
}

/* ---- a 1 TiB PROT_NONE reservation (pitfall 2) --------------------------- */

TEST(one_tib_prot_none_reservation)
{
    size_t size = (size_t)1 << 40;
    void *r = mmap(NULL, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        SKIP("cannot reserve 1 TiB of address space here");
    int n = t_scaled(15);
    for (int i = 0; i < n; i++) {
        struct fl_cmd cmd = { .argv = PROBE("exit", "6"), .backend = BACKEND };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 6);
    }
    munmap(r, size);
    report("one_tib_prot_none_reservation", n, 0, 0, 1, "2", "");
}

/* ---- a MADV_DONTFORK region written during spawns (pitfall 46) ---------- */

static atomic_bool writer_stop;
static atomic_long writes;

static void *dontfork_writer(void *arg)
{
    volatile unsigned long *m = arg;
    size_t words = (4u << 20) / sizeof *m;
    for (unsigned long i = 0; !atomic_load(&writer_stop); i++) {
        m[(i * 4099) % words] = i;
        if (i % 4096 == 0) {
            /* Sleep a little every 4096 writes: on a 2-core machine the
             * spawning thread must still get the CPU. */
            atomic_fetch_add(&writes, 4096);
            nanosleep(&(struct timespec){ 0, 50 * 1000 }, NULL);
        }
    }
    return NULL;
}

TEST(madv_dontfork_region_written_during_spawns) /* stress */
{
    size_t size = 4u << 20;
    unsigned long *m = mmap(NULL, size, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT(m != MAP_FAILED);
    memset(m, 0xab, size);
    ASSERT_SYS(madvise(m, size, MADV_DONTFORK));
    atomic_store(&writer_stop, false);
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, dontfork_writer, m));
    int n = t_scaled(40);
    for (int i = 0; i < n; i++) {
        struct fl_cmd cmd = { .argv = PROBE("exit", "9"), .backend = BACKEND };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 9);
        /* The parent can still read and write the region. */
        m[i % (size / sizeof *m)] ^= 1;
    }
    atomic_store(&writer_stop, true);
    pthread_join(t, NULL);
    munmap(m, size);
    report("madv_dontfork_region_written_during_spawns", n, 0, 0, 1, "46",
           t_fmt("region_writes=%ld", atomic_load(&writes)));
}

/* The process exits (exit(), so destructors run) while another thread's
 * spawn is still at its setup: the child, a process of its own, keeps the
 * stack it runs on and execs its program. Its stdin is a FIFO that holds
 * it in open() until the test, its parent's parent, opens the other end. */
struct exiting_spawn {
    const char *fifo, *out;
};

static void *spawn_through_the_fifo(void *arg)
{
    struct exiting_spawn *x = arg;
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/sh", "-c", "echo ran > \"$0\"", (char *)x->out),
        .stdio = { [0] = { .kind = FL_FILE, .path = x->fifo, .flags = O_RDONLY } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    fl_spawn(&cmd, &p, NULL);  /* the process exits before this returns */
    return NULL;
}

/* Has a thread of this process a child (the spawn has cloned)? */
static bool a_thread_has_a_child(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return false;
    bool found = false;
    struct dirent *de;
    while (!found && (de = readdir(d)))
        if (de->d_name[0] != '.') {
            char *kids = t_read_file(t_fmt("/proc/self/task/%s/children", de->d_name));
            found = kids && kids[strspn(kids, " \n")] != '\0';
        }
    closedir(d);
    return found;
}

TEST(an_exit_during_another_threads_spawn_leaves_the_child_its_stack)
{
    NEEDS_CLOSE_OTHERS();
#if defined(__SANITIZE_ADDRESS__)
    /* LeakSanitizer's check at exit() stops every thread first, and the
     * spawning one, asleep until its child's exec, does not stop: the
     * exit waits for the FIFO's writer, which waits for the exit. */
    SKIP("LeakSanitizer's exit-time check waits for a thread in a spawn");
#endif
    char *dir = t_tmpdir();
    struct exiting_spawn x = { .fifo = t_fmt("%s/fifo", dir), .out = t_fmt("%s/out", dir) };
    ASSERT_SYS(mkfifo(x.fifo, 0600));
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, spawn_through_the_fifo, &x) != 0)
            _exit(2);
        for (int i = 0; i < 2000 && !a_thread_has_a_child(); i++)
            usleep(5000);
        usleep(50 * 1000);  /* most likely in the child's open() by now */
        exit(0);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    ASSERT_EXITED(st, 0);
    /* The child, orphaned, opens the FIFO if it lives: a writer then
     * gets in (ENXIO while there is no reader). */
    int w = -1;
    for (int i = 0; i < 1000 && w < 0; i++) {
        w = open(x.fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (w < 0)
            usleep(10 * 1000);
    }
    ASSERT(w >= 0);  /* no reader: the child died at its setup */
    close(w);
    char *got = NULL;
    for (int i = 0; i < 1000 && !(got && strstr(got, "ran")); i++) {
        usleep(10 * 1000);
        got = access(x.out, F_OK) == 0 ? t_read_file(x.out) : NULL;
    }
    ASSERT(got && strstr(got, "ran"));
}

/* ---- a foreign reaper that gives the pid away ----------------------------- */

/* A handle's process is the one the clone made, even with FL_NO_PIDFD
 * (where a pidfd made with the process is read and closed at once): a
 * SIGCHLD handler that reaps every child may take it before the spawn
 * returns, and its pid may go at once to another child of the caller's,
 * which fl_kill() must then not reach. In a pid namespace of its own,
 * ns_last_pid gives the pid away on the spot; the child dies before its
 * exec, killed by a filter (so the spawn succeeds, as for any child that
 * dies after its clone). Exits 0, 77 (cannot set up), or the step that
 * failed. */
static volatile pid_t fr_victim, fr_reaped;

static void fr_reap_all(int sig)
{
    (void)sig;
    int saved = errno, st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        if (fr_victim || pid == fr_victim)
            continue;
        fr_reaped = pid;
        char num[16];
        int n = snprintf(num, sizeof num, "%d", (int)pid - 1);
        int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (write(fd, num, (size_t)n) != n)
                n = -1;
            close(fd);
        }
        pid_t v = fork();
        if (v == 0)
            for (;;)
                pause();
        fr_victim = v;
    }
    errno = saved;
}

static int fr_in_pid_namespace(void)
{
    struct sigaction sa = { .sa_handler = fr_reap_all, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_UNBLOCK, &chld, NULL);  /* taken as the clone returns */
    struct sock_filter kill_exec[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof kill_exec / sizeof *kill_exec, kill_exec };
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .flags = FL_NO_PIDFD, .contain = &c,
                          .backend = BACKEND };
    int taken = 0;
    /* The reaper runs before the spawn's own next step only when the
     * child's SIGCHLD beats the caller's return from the clone (most
     * times): 20 rounds where the pid was taken. */
    for (int i = 0; i < 400 && taken < 20; i++) {
        fr_victim = fr_reaped = 0;
        struct fl_proc p;
        if (fl_spawn(&cmd, &p, NULL) != 0)
            return 2;
        while (!fr_reaped)
            usleep(1000);
        pid_t victim = fr_victim;
        if (victim == p.pid) {
            taken++;
            int r = fl_kill(&p, SIGTERM);
            usleep(20000);
            int st;
            bool lives = waitpid(victim, &st, WNOHANG) == 0;
            if (r != ESRCH || !lives)
                return r != ESRCH ? 3 : 4;
        }
        kill(victim, SIGKILL);
        while (waitpid(victim, NULL, 0) < 0 && errno == EINTR)
            ;
        fl_close(&p);
    }
    return taken ? 0 : 77;
}

TEST(fl_kill_of_a_no_pidfd_handle_misses_the_child_that_took_its_pid)
{
    t_needs_pidfs();
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SKIP("the posix_spawn backend looks the process up after the start: the window is "
             "documented at FL_NO_PIDFD");
    pid_t outer = fork();
    ASSERT_SYS(outer);
    if (outer == 0) {
        if (unshare(CLONE_NEWPID | (geteuid() ? CLONE_NEWUSER : 0)) != 0)
            _exit(77);
        pid_t inner = fork();
        if (inner == 0)
            _exit(fr_in_pid_namespace());
        int st;
        _exit(inner > 0 && waitpid(inner, &st, 0) == inner && WIFEXITED(st) ? WEXITSTATUS(st)
                                                                           : 5);
    }
    int st;
    ASSERT_SYS(waitpid(outer, &st, 0));
    ASSERT(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77)
        SKIP("no pid namespace whose ns_last_pid this process may set, or the pid was not "
             "taken again");
    ASSERT_EQ(WEXITSTATUS(st), 0);
}
