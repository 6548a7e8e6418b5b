/*
 * test_wait: waiting into a struct fl_result, deadlines, and the stop
 * policy (the first signal, the grace, SIGKILL; process, group, cgroup).
 */
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

static const char *sh(void)
{
    if (access("/bin/sh", X_OK) != 0)
        SKIP("no /bin/sh");
    return "/bin/sh";
}

/* A shell that starts `sleep 100` in the background (setsid'd with
 * detach), prints its pid, and waits. */
static pid_t start_shell_with_member(struct fl_proc *p, unsigned flags, const char *cgroup,
                                     bool detach)
{
    /* The member holds none of the runner's fds: a failed case must not
     * keep ctest reading for its 100 s. */
    const char *script = detach ? "setsid sleep 100 </dev/null >/dev/null 2>&1 & echo $!; wait"
                                : "sleep 100 </dev/null >/dev/null 2>&1 & echo $!; wait";
    struct fl_cmd cmd = {
        .argv = ARGV((char *)sh(), "-c", (char *)script),
        .env_set = TOOLS_PATH_ENV,
        .stdio = { [1] = { .kind = FL_PIPE } },
        .flags = flags,
        .cgroup = cgroup,
        .backend = BACKEND,
    };
    SPAWN(&cmd, p);
    char line[32] = { 0 };
    size_t n = 0;
    while (n < sizeof line - 1) {
        ssize_t r = read(p->stdio[1], line + n, 1);
        if (r <= 0 || line[n] == '\n')
            break;
        n++;
    }
    pid_t member = (pid_t)atoi(line);
    ASSERT_GT(member, 0);
    return member;
}

static void wait_gone(pid_t pid)
{
    for (int i = 0; i < 2000 && t_running(pid); i++)
        usleep(5000);
}

TEST(wait_result_reports_the_exit_code_and_the_usage)
{
    struct fl_cmd cmd = { .argv = PROBE("exit", "3"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ASSERT_OK(fl_wait_result(&p, -1, NULL, &r));
    ASSERT_EXITED(r.status, 3);
    ASSERT_EQ(r.exit_code, 3);
    ASSERT_EQ(r.signal, 0);
    ASSERT(!r.timed_out && !r.killed && r.stop_signal == 0);
    ASSERT_GT(r.elapsed_ns, 0);
    ASSERT_GT(r.rusage.ru_maxrss, 0);
    ASSERT_ERR(fl_wait_result(&p, -1, NULL, &r), ESRCH);
    fl_close(&p);
}

TEST(wait_result_reports_the_signal_and_the_shell_status)
{
    struct fl_cmd cmd = { .argv = PROBE("kill-self", "9"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ASSERT_OK(fl_wait_result(&p, -1, NULL, &r));
    ASSERT_EQ(r.signal, SIGKILL);
    ASSERT_EQ(r.exit_code, -1);
    ASSERT_EQ(fl_result_shell_status(&r), 128 + SIGKILL);
    fl_close(&p);
}

static void on_alarm(int sig)
{
    (void)sig;
}

TEST(a_timed_wait_works_with_rlimit_nofile_0)
{
    /* poll() of the pidfd alone is one entry more than a limit of 0
     * allows (EINVAL), though the pidfd is open already. */
    struct fl_cmd cmd = { .argv = PROBE("exit", "3"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct rlimit old, low;
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &old));
    low = (struct rlimit){ 0, old.rlim_max };
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &low));
    int status = -1;
    int err = fl_wait(&p, 60000, &status);
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &old));
    fl_close(&p);
    ASSERT_ERR(err, 0);
    ASSERT_EXITED(status, 3);
}

TEST(a_signal_handler_does_not_end_a_wait_for_ever)
{
    struct sigaction sa = { .sa_handler = on_alarm }, old;  /* no SA_RESTART */
    sigaction(SIGALRM, &sa, &old);
    struct fl_cmd cmd = { .argv = PROBE("sleep", "0.3"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ualarm(20000, 0);
    ASSERT_OK(fl_wait_result(&p, -1, NULL, &r));
    ASSERT_EXITED(r.status, 0);
    fl_close(&p);
    SPAWN(&cmd, &p);
    ualarm(20000, 0);
    ASSERT_OK(fl_wait_result(&p, -1, &(struct fl_stop_policy){ 0 }, &r));
    ASSERT(!r.timed_out);
    ASSERT_EXITED(r.status, 0);
    fl_close(&p);
    sigaction(SIGALRM, &old, NULL);
}

/* ---- core dumps ---------------------------------------------------------- */

/* A core dump must be seen to be told: it is a file in the dying
 * process's working directory only when core_pattern is a plain name
 * ("core", "core.%p"). A pipe (systemd-coredump, apport) or a path
 * elsewhere would keep the dump out of sight, and out of the case's
 * directory: skip then. */
static void require_cores_in_the_cwd(void)
{
    char pat[512] = "";
    FILE *f = fopen("/proc/sys/kernel/core_pattern", "re");
    if (!f)
        SKIP("/proc/sys/kernel/core_pattern cannot be read: where a core dump lands is unknown");
    if (!fgets(pat, sizeof pat, f))
        pat[0] = 0;
    fclose(f);
    pat[strcspn(pat, "\n")] = 0;
    if (!pat[0] || pat[0] == '|' || strchr(pat, '/'))
        SKIP(t_fmt("core_pattern is \"%s\": a core dump would not be a file in the child's "
                   "working directory",
                   pat));
}

/* The entries of dir (a core file, if one was written). */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        FAIL("opendir %s: %s", dir, strerror(errno));
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* Runs a probe that sends itself SIGQUIT in dir, with RLIMIT_CORE's soft
 * limit at core: the caller's own, lowered or raised around the spawn
 * only (every backend passes it on; a failed assertion here must not
 * dump the test's own core). */
static struct fl_result die_of_sigquit_in(const char *dir, rlim_t core)
{
    NEEDS_CLOSE_OTHERS();
    struct rlimit old;
    ASSERT_SYS(getrlimit(RLIMIT_CORE, &old));
    if (core > old.rlim_max)
        SKIP("the hard RLIMIT_CORE allows no core dump to be asked for");
    struct fl_cmd cmd = { .argv = PROBE("kill-self", t_fmt("%d", SIGQUIT)), .cwd = dir,
                          .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    int set = setrlimit(RLIMIT_CORE, &(struct rlimit){ core, old.rlim_max });
    int r = set == 0 ? fl_spawn(&cmd, &p, &e) : 0;
    ASSERT_SYS(setrlimit(RLIMIT_CORE, &old));
    ASSERT_SYS(set);
    char buf[2048];
    if (r)
        FAIL("fl_spawn: %s", fl_error_format(&e, buf, sizeof buf));
    struct fl_result res;
    ASSERT_OK(fl_wait_result(&p, -1, NULL, &res));
    fl_close(&p);
    ASSERT_EQ(res.signal, SIGQUIT);
    return res;
}

TEST(a_child_that_dumped_core_is_reported_core_dumped)
{
    require_cores_in_the_cwd();
    char *dir = t_tmpdir();
    struct fl_result r = die_of_sigquit_in(dir, RLIM_INFINITY);
    if (count_entries(dir) == 0) {
        /* No dump (a file system or a kernel that refuses): none may be
         * reported either. */
        ASSERT(!r.core_dumped);
        SKIP("the kernel wrote no core file here: a core dump cannot be observed");
    }
    ASSERT_EQ(r.core_dumped, 1);
    ASSERT(WCOREDUMP(r.status));
    ASSERT_EQ(r.exit_code, -1);
}

TEST(a_child_killed_by_sigquit_with_rlimit_core_0_is_not_reported_core_dumped)
{
    require_cores_in_the_cwd();
    char *dir = t_tmpdir();
    struct fl_result r = die_of_sigquit_in(dir, 0);
    ASSERT_EQ(count_entries(dir), 0);
    ASSERT_EQ(r.core_dumped, 0);
    ASSERT(!WCOREDUMP(r.status));
}

/* ---- errno ------------------------------------------------------------------ */

/* A handler interrupts the wait in its poll() (EINTR, retried): errno is
 * as the caller left it all the same. */
TEST(wait_result_leaves_errno_as_it_was_when_a_handler_interrupts_it)
{
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct t_interrupt *it = t_interrupt_start(t_poll_nrs, t_npoll_nrs, p.pid);
    struct fl_result r;
    errno = 1234;
    int err = fl_wait_result(&p, -1, NULL, &r);
    int saw = errno;
    t_interrupt_end(it);
    ASSERT_OK(err);
    ASSERT_EQ(r.signal, SIGKILL);
    ASSERT_EQ(saw, 1234);
    fl_close(&p);
}

/* fl_stop() sends a signal the child survives (SIGWINCH: ignored by
 * default) and never SIGKILL, so that it waits, in poll(), for the end;
 * a handler interrupts it there. */
TEST(stop_leaves_errno_as_it_was_when_a_handler_interrupts_it)
{
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct t_interrupt *it = t_interrupt_start(t_poll_nrs, t_npoll_nrs, p.pid);
    struct fl_result r;
    errno = 1234;
    int err = fl_stop(&p, &(struct fl_stop_policy){ .signal = SIGWINCH,
                                                   .grace_ms = FL_STOP_NEVER_KILL },
                      &r);
    int saw = errno;
    t_interrupt_end(it);
    ASSERT_OK(err);
    ASSERT_EQ(r.stop_signal, SIGWINCH);
    ASSERT_EQ(r.signal, SIGKILL);
    ASSERT_EQ(saw, 1234);
    fl_close(&p);
}

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Signals every 137 us interrupt the waits; each retry must count the
 * time left to the deadline, not end before it. */
TEST(a_wait_interrupted_by_signals_does_not_time_out_early)
{
    struct sigaction sa = { .sa_handler = on_alarm }, old;  /* no SA_RESTART */
    sigaction(SIGALRM, &sa, &old);
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct itimerval every = { { 0, 137 }, { 0, 137 } }, off = { 0 };
    setitimer(ITIMER_REAL, &every, NULL);
    int early = 0;
    for (int i = 0; i < 20; i++) {
        struct fl_result r;
        long long t0 = mono_ns();
        int a = fl_wait(&p, 5, NULL);
        long long t1 = mono_ns();
        int b = fl_wait_result(&p, 5, NULL, &r);
        long long t2 = mono_ns();
        ASSERT_ERR(a, ETIMEDOUT);
        ASSERT_ERR(b, ETIMEDOUT);
        early += (t1 - t0 < 5000000) + (t2 - t1 < 5000000);
    }
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    ASSERT_EQ(early, 0);
    t_kill_wait(&p);
}

TEST(wait_result_without_a_policy_times_out_and_leaves_the_process)
{
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r = { .exit_code = 42 };
    ASSERT_ERR(fl_wait_result(&p, 20, NULL, &r), ETIMEDOUT);
    ASSERT_EQ(r.exit_code, 42);  /* untouched */
    ASSERT_OK(fl_kill(&p, 0));
    t_kill_wait(&p);
}

TEST(a_deadline_sends_the_first_signal_and_reaps)
{
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ASSERT_OK(fl_wait_result(&p, 20, &(struct fl_stop_policy){ 0 }, &r));
    ASSERT(r.timed_out);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT_EQ(r.signal, SIGTERM);
    ASSERT(!r.killed);
    fl_close(&p);
}

TEST(a_process_that_ignores_the_first_signal_gets_sigkill_after_the_grace)
{
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .sigignore = &term,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ASSERT_OK(fl_wait_result(&p, 10, &(struct fl_stop_policy){ .grace_ms = 30 }, &r));
    ASSERT(r.timed_out);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT(r.killed);
    ASSERT_EQ(r.signal, SIGKILL);
    fl_close(&p);
}

TEST(the_policy_names_the_first_signal)
{
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ASSERT_OK(fl_wait_result(&p, 0, &(struct fl_stop_policy){ .signal = SIGUSR1 }, &r));
    ASSERT_EQ(r.stop_signal, SIGUSR1);
    ASSERT_EQ(r.signal, SIGUSR1);
    fl_close(&p);
}

TEST(sigkill_as_the_first_signal_is_counted_as_killed)
{
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ASSERT_OK(fl_stop(&p, &(struct fl_stop_policy){ .signal = SIGKILL }, &r));
    ASSERT(r.killed && !r.timed_out);
    ASSERT_EQ(r.signal, SIGKILL);
    fl_close(&p);
}

TEST(stop_sends_the_first_signal_now_without_a_timeout)
{
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ASSERT_OK(fl_stop(&p, NULL, &r));
    ASSERT(!r.timed_out);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT_EQ(r.signal, SIGTERM);
    ASSERT_ERR(fl_stop(&p, NULL, &r), ESRCH);
    fl_close(&p);
}

TEST(a_deadline_works_on_a_handle_without_a_pidfd)
{
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .flags = FL_NO_PIDFD,
                          .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.pidfd, -1);
    struct fl_result r;
    ASSERT_OK(fl_wait_result(&p, 10, &(struct fl_stop_policy){ 0 }, &r));
    ASSERT(r.timed_out);
    ASSERT_EQ(r.signal, SIGTERM);
    fl_close(&p);
}

TEST(a_bad_policy_or_timeout_is_einval_and_touches_nothing)
{
    struct fl_cmd cmd = { .argv = PROBE("sleep", "100"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ASSERT_ERR(fl_wait_result(&p, -2, NULL, &r), EINVAL);
    ASSERT_ERR(fl_wait_result(&p, 0, &(struct fl_stop_policy){ .signal = NSIG }, &r), EINVAL);
    ASSERT_ERR(fl_wait_result(&p, 0, &(struct fl_stop_policy){ .signal = -1 }, &r), EINVAL);
    ASSERT_ERR(fl_wait_result(&p, 0, &(struct fl_stop_policy){ .grace_ms = -2 }, &r), EINVAL);
    ASSERT_ERR(fl_wait_result(&p, 0, &(struct fl_stop_policy){ .scope = 7 }, &r), EINVAL);
    ASSERT_ERR(fl_wait_result(&p, 0, &(struct fl_stop_policy){ .scope = FL_STOP_CGROUP }, &r),
               EINVAL);
    ASSERT_ERR(fl_stop(&p, &(struct fl_stop_policy){ .reserved_ = { &r } }, &r), EINVAL);
    ASSERT_ERR(fl_wait_result(&p, 0, NULL, NULL), EINVAL);
    /* The child leads no group of its own: the group is the caller's. */
    ASSERT_ERR(fl_stop(&p, &(struct fl_stop_policy){ .scope = FL_STOP_GROUP }, &r), EINVAL);
    ASSERT_OK(fl_kill(&p, 0));
    t_kill_wait(&p);
}

/* A group stop of p ends p by SIGTERM, and member with it. */
static void group_stop_ends(struct fl_proc *p, pid_t member)
{
    struct fl_result r;
    ASSERT_OK(fl_stop(p, &(struct fl_stop_policy){ .scope = FL_STOP_GROUP }, &r));
    ASSERT_EQ(r.signal, SIGTERM);
    /* The member ended before the leader was reaped; init reaps it. */
    wait_gone(member);
    ASSERT(!t_running(member));
    fl_close(p);
}

TEST(the_group_scope_stops_the_rest_of_the_group)
{
    struct fl_proc p;
    pid_t member = start_shell_with_member(&p, FL_NEW_PGROUP, NULL, false);
    ASSERT(t_running(member));
    group_stop_ends(&p, member);
}

/* FL_PTY on a stream that an fd map overrides makes no session, and so
 * no group: a group stop is refused as for any child that leads none. */
TEST(the_group_scope_refuses_a_child_whose_pty_a_map_overrides)
{
    int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
    ASSERT_SYS(out);
    struct fl_cmd cmd = {
        .argv = PROBE("sleep", "30"),
        .stdio = { [1] = { .kind = FL_PTY } },
        .fds = (struct fl_fd_map[]){ { .child_fd = 1, .parent_fd = out } },
        .nfds = 1,
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    close(out);
    ASSERT_EQ(getpgid(p.pid), getpgid(0));
    struct fl_result r;
    ASSERT_ERR(fl_stop(&p, &(struct fl_stop_policy){ .scope = FL_STOP_GROUP }, &r), EINVAL);
    t_kill_wait(&p);
}

/* A leader that moves to another group (setpgid(), here its parent's)
 * still has its pid reserved as the id of the group it made, which holds
 * what it started: the group stop reaches that group, and the leader
 * through its pidfd, instead of refusing a group it no longer leads. */
TEST(the_group_scope_stops_the_group_its_leader_left)
{
    struct fl_cmd cmd = {
        .argv = PROBE("hold-fds", "10", "join-parent-group", "echo", "ready", "sleep", "30"),
        .stdio = { [1] = { .kind = FL_PIPE } },
        .flags = FL_NEW_PGROUP,
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    char *out = t_read_until(p.stdio[1], "ready");
    pid_t member = (pid_t)t_get_num(out, "grandchild");
    ASSERT_EQ(t_get_num(out, "joined"), getpgid(0));
    ASSERT_EQ(getpgid(member), p.pid);
    group_stop_ends(&p, member);
}

TEST(the_process_scope_leaves_the_rest_of_the_group)
{
    struct fl_proc p;
    pid_t member = start_shell_with_member(&p, FL_NEW_PGROUP, NULL, false);
    struct fl_result r;
    ASSERT_OK(fl_stop(&p, NULL, &r));
    ASSERT(t_running(member));
    kill(member, SIGKILL);
    wait_gone(member);
    fl_close(&p);
}

/* A new cgroup for a child, or the case skips. */
static char *child_cgroup(void)
{
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SKIP("posix_spawn cannot place a child in a cgroup");
    return t_need_cgroup(NULL);
}

TEST(the_cgroup_scope_stops_a_member_that_left_the_session)
{
    char *dir = child_cgroup();
    struct fl_proc p;
    pid_t member = start_shell_with_member(&p, 0, dir, true);
    struct fl_result r;
    ASSERT_OK(fl_stop(&p, &(struct fl_stop_policy){ .scope = FL_STOP_CGROUP, .cgroup = dir },
                      &r));
    ASSERT_EQ(r.signal, SIGTERM);
    wait_gone(member);
    ASSERT(!t_running(member));
    fl_close(&p);
    t_remove_cgroup(dir);
}

/* Removes the cgroups from path up to dir, path's deepest first (path
 * is cut as it goes), then dir. */
static void remove_levels_below(const char *dir, char *path)
{
    size_t top = strlen(dir);
    for (char *slash; strlen(path) > top && (slash = strrchr(path, '/')); *slash = '\0')
        rmdir(path);
    t_remove_cgroup(dir);
}

/* A cgroup below the command's is part of it, as cgroup.kill and
 * cgroup.events take it: the first signal reaches a member there too.
 * rel: the path below the command's cgroup, made level by level. */
static void stop_reaches_a_member_below(const char *rel)
{
    char *dir = child_cgroup();
    char *sub = t_fmt("%s/%s", dir, rel);
    for (char *slash = sub + strlen(dir) + 1;; slash++) {
        if (*slash == '/' || !*slash) {
            char keep = *slash;
            *slash = '\0';
            if (mkdir(sub, 0755) != 0) {
                if (errno != EAGAIN)   /* EAGAIN: cgroup.max.depth, .max.descendants */
                    FAIL("mkdir %s: %s", sub, strerror(errno));
                remove_levels_below(dir, sub);
                SKIP("this hierarchy's cgroup.max.depth or cgroup.max.descendants refuses the levels");
            }
            *slash = keep;
            if (!keep)
                break;
        }
    }
    char *script = t_fmt("sleep 100 </dev/null >/dev/null 2>&1 & echo $! > '%s/cgroup.procs' && "
                         "echo $!; wait", sub);
    struct fl_cmd cmd = { .argv = ARGV((char *)sh(), "-c", script), .env_set = TOOLS_PATH_ENV,
                          .stdio = { [1] = { .kind = FL_PIPE } }, .cgroup = dir,
                          .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    char *line = t_read_until(p.stdio[1], "\n");
    pid_t member = (pid_t)atoi(line);
    free(line);
    ASSERT_GT(member, 0);
    struct fl_result r;
    ASSERT_OK(fl_stop(&p, &(struct fl_stop_policy){ .scope = FL_STOP_CGROUP, .cgroup = dir,
                                                    .grace_ms = 60000 },
                      &r));
    ASSERT_EQ(r.signal, SIGTERM);
    ASSERT(!r.killed);   /* the TERM reached it: no KILL was needed */
    wait_gone(member);
    ASSERT(!t_running(member));
    fl_close(&p);
    remove_levels_below(dir, sub);
}

TEST(the_cgroup_scope_stops_a_member_in_a_cgroup_below)
{
    stop_reaches_a_member_below("below");
}

TEST(the_cgroup_scope_stops_a_member_in_a_cgroup_whose_name_starts_with_a_dot)
{
    stop_reaches_a_member_below(".below");
}

TEST(the_cgroup_scope_stops_a_member_70_cgroups_below)
{
    char rel[70 * 2] = "";
    for (int i = 0; i < 70; i++)
        strcat(rel, i ? "/d" : "d");
    stop_reaches_a_member_below(rel);
}

/* A full fd table: RLIMIT_NOFILE lowered to 128 and every fd under it
 * taken (held[0..n)); free_fds() frees some, give_fds_back() all, with
 * the limit as it was. */
#define FULL_FDS 128
struct full_fds {
    struct rlimit saved;
    int held[FULL_FDS];
    int n;
};

static void fill_fds(struct full_fds *f)
{
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &f->saved));
    struct rlimit low = { FULL_FDS, f->saved.rlim_max };
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &low));
    int fd;
    f->n = 0;
    while (f->n < FULL_FDS && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
        f->held[f->n++] = fd;
    ASSERT_EQ(errno, EMFILE);
    ASSERT_GT(f->n, 0);
}

static void free_fds(struct full_fds *f, int k)
{
    for (; k > 0 && f->n; k--)
        close(f->held[--f->n]);
}

static void give_fds_back(struct full_fds *f)
{
    free_fds(f, f->n);
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &f->saved));
}

/* More members than fds left: the pidfds are opened, checked and closed
 * in batches, those a walk short of fds cannot list checked again one at
 * a time, and every member still gets the first signal. left: the fds
 * left to the stop (3: one pidfd, and the walk's two for a tree of one
 * cgroup). */
static void stop_with_fds_left(int members, int left)
{
    char *dir = child_cgroup();
    char *script = t_fmt("i=0; while [ $i -lt %d ]; do sleep 100 </dev/null >/dev/null 2>&1 & "
                         "i=$((i+1)); done; echo ready; wait", members);
    struct fl_cmd cmd = { .argv = ARGV((char *)sh(), "-c", script),
                          .env_set = TOOLS_PATH_ENV, .stdio = { [1] = { .kind = FL_PIPE } },
                          .cgroup = dir, .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    free(t_read_until(p.stdio[1], "ready"));
    struct full_fds full;
    fill_fds(&full);
    free_fds(&full, left);
    struct fl_result r;
    int stopped = fl_stop(&p, &(struct fl_stop_policy){ .scope = FL_STOP_CGROUP, .cgroup = dir,
                                                        .grace_ms = 20000 },
                          &r);
    give_fds_back(&full);
    ASSERT_OK(stopped);
    ASSERT_EQ(r.signal, SIGTERM);
    ASSERT(!r.killed);   /* every member ended of the TERM: none was left for the KILL */
    fl_close(&p);
    t_remove_cgroup(dir);
}

TEST(the_cgroup_scope_signals_more_members_than_it_has_fds_for)
{
    stop_with_fds_left(40, 16);
}

TEST(the_cgroup_scope_signals_every_member_with_the_fds_of_one_pidfd_and_a_walk)
{
    stop_with_fds_left(40, 3);
}

/* A whole batch of pidfds (64) fits, and leaves its walk 1 fd. */
TEST(the_cgroup_scope_signals_every_member_when_a_batch_leaves_its_walk_too_few_fds)
{
    stop_with_fds_left(70, 65);
}

/* Starts the probe counting a real-time signal (queued, so a copy sent
 * twice is caught twice however close together) and stops it with
 * policy's scope; returns how many times the probe caught it. */
static int stop_counting_child(struct fl_stop_policy policy, unsigned flags, const char *cgroup)
{
    char sig[16];
    snprintf(sig, sizeof sig, "%d", SIGRTMIN + 1);
    struct fl_cmd cmd = { .argv = PROBE("count-signal", sig, "0.3"), .flags = flags,
                          .cgroup = cgroup, .stdio = { [1] = { .kind = FL_PIPE } },
                          .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    free(t_read_until(p.stdio[1], "ready"));
    policy.signal = SIGRTMIN + 1;
    policy.grace_ms = 60000;
    struct fl_result r;
    ASSERT_OK(fl_stop(&p, &policy, &r));
    ASSERT_EQ(r.stop_signal, SIGRTMIN + 1);
    ASSERT(!r.killed);
    fl_close(&p);
    return r.exit_code;
}

TEST(the_group_scope_signals_a_leader_in_its_group_once)
{
    ASSERT_EQ(stop_counting_child((struct fl_stop_policy){ .scope = FL_STOP_GROUP },
                                  FL_NEW_PGROUP, NULL),
              1);
}

TEST(the_cgroup_scope_signals_a_child_in_its_cgroup_once)
{
    char *dir = child_cgroup();
    ASSERT_EQ(stop_counting_child((struct fl_stop_policy){ .scope = FL_STOP_CGROUP, .cgroup = dir },
                                  0, dir),
              1);
    t_remove_cgroup(dir);
}

/* The group's leader reaped by someone else: no group is left to check
 * or to stop, so the answer is the wait's, ECHILD, and the handle is done
 * with, as without a policy. errno is left as it was. */
TEST(a_group_policy_on_a_leader_reaped_elsewhere_is_echild)
{
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .flags = FL_NEW_PGROUP,
                          .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    int st;
    ASSERT_EQ(waitpid(p.pid, &st, 0), p.pid);
    struct fl_result r;
    struct fl_stop_policy group = { .scope = FL_STOP_GROUP };
    errno = 1234;
    ASSERT_ERR(fl_wait_result(&p, 1000, &group, &r), ECHILD);
    ASSERT_EQ(errno, 1234);
    ASSERT_ERR(fl_wait_result(&p, 1000, &group, &r), ESRCH);
    fl_close(&p);
}

TEST(communicate_with_a_group_policy_on_a_leader_reaped_elsewhere_is_echild)
{
    struct fl_cmd cmd = { .argv = PROBE("echo", "x"), .flags = FL_NEW_PGROUP,
                          .stdio = { [1] = { .kind = FL_PIPE } }, .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    int st;
    ASSERT_EQ(waitpid(p.pid, &st, 0), p.pid);
    struct fl_io io = { .out = { { .capture = true } },
                        .stop = &(struct fl_stop_policy){ .scope = FL_STOP_GROUP } };
    struct fl_result r;
    errno = 1234;
    ASSERT_ERR(fl_communicate(&p, &io, &r), ECHILD);
    ASSERT_EQ(errno, 1234);
    fl_result_free(&r);
    fl_close(&p);
}

TEST(killpg_signals_the_group_the_child_leads)
{
    struct fl_proc p;
    pid_t member = start_shell_with_member(&p, FL_NEW_PGROUP, NULL, false);
    ASSERT_OK(fl_killpg(&p, SIGKILL));
    wait_gone(member);
    ASSERT(!t_running(member));
    int st = t_wait(&p);
    ASSERT_SIGNALED(st, SIGKILL);
}

TEST(killpg_refuses_a_reaped_handle_and_a_bad_signal)
{
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .flags = FL_NEW_PGROUP,
                          .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_ERR(fl_killpg(&p, NSIG), EINVAL);
    ASSERT_EQ(t_wait(&p), 0);
    ASSERT_ERR(fl_killpg(&p, SIGKILL), ESRCH);
}

/* The leader reaped by someone else (a waitpid() of the caller's own)
 * while the rest of its group runs on: the group's id is no longer held
 * for the handle, so it could be anyone's by the time a signal went out.
 * fl_killpg() says ESRCH and sends nothing, with a pidfd or without. */
TEST(killpg_sends_nothing_once_the_leader_was_reaped_elsewhere)
{
    /* A subreaper, so that the member, orphaned when its shell ends, is
     * ours to reap (and the runner's to kill should the case fail). */
    ASSERT_SYS(prctl(PR_SET_CHILD_SUBREAPER, 1));
    const unsigned kinds[] = { 0, FL_NO_PIDFD };
    for (size_t k = 0; k < 2; k++) {
        struct fl_cmd cmd = {
            .argv = ARGV((char *)sh(), "-c", "sleep 100 </dev/null >/dev/null 2>&1 & echo $!"),
            .env_set = TOOLS_PATH_ENV,
            .stdio = { [1] = { .kind = FL_PIPE } },
            .flags = FL_NEW_PGROUP | kinds[k],
            .backend = BACKEND,
        };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        pid_t member = (pid_t)atoi(t_read_all(p.stdio[1]));
        ASSERT_GT(member, 0);
        int st;
        ASSERT_EQ(waitpid(p.pid, &st, 0), p.pid);
        ASSERT_EXITED(st, 0);
        ASSERT_EQ(getpgid(member), p.pid);   /* the group lives on */
        ASSERT_ERR(fl_killpg(&p, SIGKILL), ESRCH);
        ASSERT(t_running(member));
        ASSERT_SYS(kill(member, SIGKILL));
        ASSERT_EQ(waitpid(member, &st, 0), member);
        ASSERT_SIGNALED(st, SIGKILL);
        fl_close(&p);
    }
    ASSERT_SYS(prctl(PR_SET_CHILD_SUBREAPER, 0));
}

/* Its walk of /proc needs an fd per process it reads: out of them, it
 * cannot tell, and must not answer "nothing runs" (a stop would skip the
 * grace and the SIGKILL of the rest). */
TEST(pgroup_running_out_of_fds_says_so_and_not_that_the_group_ended)
{
    struct fl_proc p;
    pid_t member = start_shell_with_member(&p, FL_NEW_PGROUP, NULL, false);
    struct full_fds full;
    fill_fds(&full);
    bool running = false;
    int none_free = fl_pgroup_running(&p, &running);
    free_fds(&full, 1);  /* one free: the walk's directory takes it */
    int one_free = fl_pgroup_running(&p, &running);
    give_fds_back(&full);
    ASSERT_ERR(none_free, EMFILE);
    ASSERT_ERR(one_free, EMFILE);
    ASSERT_OK(fl_pgroup_running(&p, &running));
    ASSERT(running);
    kill(member, SIGKILL);
    t_wait(&p);
}

TEST(pgroup_running_sees_the_rest_of_the_group_until_it_ends)
{
    struct fl_proc p;
    pid_t member = start_shell_with_member(&p, FL_NEW_PGROUP, NULL, false);
    bool running = false;
    ASSERT_OK(fl_pgroup_running(&p, &running));
    ASSERT(running);
    kill(member, SIGKILL);
    /* The shell's `wait` reaps the member and the shell ends: the group
     * has nothing running left, its leader a zombie. */
    siginfo_t si;
    ASSERT_SYS(waitid(P_PID, (id_t)p.pid, &si, WEXITED | WNOWAIT));
    ASSERT_OK(fl_pgroup_running(&p, &running));
    ASSERT(!running);
    t_wait(&p);
    ASSERT_ERR(fl_pgroup_running(&p, &running), ESRCH);
}
