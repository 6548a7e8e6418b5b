/* test_launch.c: FL_NO_WAIT_EXEC, the launch that returns before the exec.
 *
 * The clone backend returns as soon as the child exists; the posix_spawn
 * and fork backends wait as without the flag, and fl_launch_finish() has
 * nothing to wait for there. Each case asserts what its backend does.
 *
 * To hold a child between its clone and its exec, its stdin is an FL_FILE
 * on a FIFO: open() blocks in the child until a writer comes. */
#include "test.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static bool launches(void)
{
    return BACKEND == FL_BACKEND_CLONE;
}

/* Starts cmd with FL_NO_WAIT_EXEC added. */
static void launch(struct fl_cmd *cmd, struct fl_proc *p)
{
    cmd->flags |= FL_NO_WAIT_EXEC;
    cmd->backend = BACKEND;
    SPAWN(cmd, p);
}

/* The launch of cmd fails with err at step: delivered once by
 * fl_launch_finish() (clone backend), or by fl_spawn() itself (the
 * others, which wait). With wait_first, fl_wait() is the first to ask. */
static void launch_fails(struct fl_cmd *cmd, int err, enum fl_step step, bool wait_first)
{
    cmd->flags |= FL_NO_WAIT_EXEC;
    cmd->backend = BACKEND;
    if (!launches()) {
        SPAWN_FAILS(cmd, err, step);
        return;
    }
    struct fl_proc p;
    struct fl_error e;
    ASSERT_OK(fl_spawn(cmd, &p, &e));
    ASSERT_GT(p.pid, 0);
    ASSERT_EQ(p.backend, FL_BACKEND_CLONE);
    int st = 0x5a5a;
    if (wait_first) {
        ASSERT_ERR(fl_wait(&p, -1, &st), err);
        ASSERT_EQ(st, 0x5a5a);   /* no status: the program never ran */
    }
    ASSERT_ERR(fl_launch_finish(&p, &e), err);
    ASSERT_EQ(e.err, err);
    char buf[2048];
    if (e.step != step)
        FAIL("step %s, expected %s: %s", fl_step_name(e.step), fl_step_name(step),
             fl_error_format(&e, buf, sizeof buf));
    /* The same record again, until fl_close(); the child is reaped. */
    struct fl_error again;
    ASSERT_ERR(fl_launch_finish(&p, &again), err);
    ASSERT_EQ(again.step, e.step);
    ASSERT_STR_EQ(again.path, e.path);
    ASSERT_ERR(fl_wait(&p, -1, &st), ESRCH);
    ASSERT_ERR(fl_kill(&p, SIGKILL), ESRCH);
    ASSERT_EQ(st, 0x5a5a);
    fl_close(&p);
}

TEST(launched_handle_waits_and_captures)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "hello", "exit", "3"),
        .stdio = { [1] = { .kind = FL_PIPE } },
    };
    struct fl_proc p;
    launch(&cmd, &p);
    struct fl_error e;
    memset(&e, 0x5a, sizeof e);
    ASSERT_OK(fl_launch_finish(&p, &e));
    ASSERT_EQ(e.err, 0);
    ASSERT_OK(fl_launch_finish(&p, NULL));   /* finished: nothing to wait for */
    ASSERT_NULL(p.launch_);
    ASSERT_STR_EQ(t_read_all(p.stdio[1]), "hello\n");
    ASSERT_EXITED(t_wait(&p), 3);
}

TEST(launched_handle_communicates_without_finishing)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = {
        .argv = PROBE("cat"),
        .stdio = { [0] = { .kind = FL_PIPE }, [1] = { .kind = FL_PIPE } },
    };
    struct fl_proc p;
    launch(&cmd, &p);
    struct fl_io io = { .input = "abc", .input_len = 3 };
    struct fl_result res;
    ASSERT_OK(fl_communicate(&p, &io, &res));
    ASSERT_EQ(res.exit_code, 0);
    ASSERT_STR_EQ(res.out[0].data, "abc");
    fl_result_free(&res);
    ASSERT_NULL(p.launch_);
    fl_close(&p);
}

TEST(launched_handle_is_killed_and_waited)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("sleep", "30") };
    struct fl_proc p;
    launch(&cmd, &p);
    /* Killed at once: maybe before its exec. Either way the status is
     * the signal's, and the launch counts as done. */
    ASSERT_OK(fl_kill(&p, SIGKILL));
    ASSERT_OK(fl_launch_finish(&p, NULL));
    ASSERT_SIGNALED(t_wait(&p), SIGKILL);
}

TEST(fl_run_with_the_flag_reports_as_a_spawn)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = {
        .argv = ARGV("/nonexistent/prog"),
        .flags = FL_NO_WAIT_EXEC,
        .backend = BACKEND,
    };
    struct fl_result res;
    struct fl_error e;
    ASSERT_ERR(fl_run(&cmd, NULL, &res, &e), ENOENT);
    ASSERT(fl_t_step_is(&e, FL_STEP_EXEC));
    NEEDS_CLOSE_OTHERS();
    cmd.argv = PROBE("echo", "x");
    struct fl_io io = { .out = { [0] = { .capture = true } } };
    ASSERT_OK(fl_run(&cmd, &io, &res, &e));
    ASSERT_STR_EQ(res.out[0].data, "x\n");
    fl_result_free(&res);
}

TEST(exec_enoent_is_reported_once)
{
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent/prog") };
    launch_fails(&cmd, ENOENT, FL_STEP_EXEC, false);
    struct fl_cmd cmd2 = { .argv = ARGV("/nonexistent/prog") };
    launch_fails(&cmd2, ENOENT, FL_STEP_EXEC, true);
}

TEST(a_launch_without_a_pidfd_reports_and_reaps_by_pid)
{
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent/prog"), .flags = FL_NO_PIDFD };
    launch_fails(&cmd, ENOENT, FL_STEP_EXEC, false);
    struct fl_cmd cmd2 = { .argv = ARGV("/nonexistent/prog"), .flags = FL_NO_PIDFD };
    launch_fails(&cmd2, ENOENT, FL_STEP_EXEC, true);
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd ok = { .argv = PROBE("exit", "4"), .flags = FL_NO_PIDFD };
    struct fl_proc p;
    launch(&ok, &p);
    ASSERT_EQ(p.pidfd, -1);
    ASSERT_OK(fl_launch_finish(&p, NULL));
    ASSERT_EXITED(t_wait(&p), 4);
}

TEST(exec_eacces_is_reported)
{
    char *f = t_write_file(t_tmpdir(), "noexec", "#!/bin/sh\n", 0644);
    struct fl_cmd cmd = { .argv = ARGV(f) };
    launch_fails(&cmd, EACCES, FL_STEP_EXEC, false);
}

TEST(exec_enoexec_is_reported)
{
    char *f = t_write_file(t_tmpdir(), "garbage", "\x01\x02 not a program\n", 0755);
    struct fl_cmd cmd = { .argv = ARGV(f) };
    launch_fails(&cmd, ENOEXEC, FL_STEP_EXEC, false);
}

/* A launch's E2BIG is explained when it is finished, from the launch's own
 * copy of environ: by then the caller may have dropped the variable and
 * reused its memory. */
TEST(an_e2big_names_the_variable_the_caller_dropped_after_the_launch)
{
    size_t n = 32 * (size_t)sysconf(_SC_PAGESIZE);   /* MAX_ARG_STRLEN, with its '\0' one over */
    char *var = t_keep(malloc(n + 1));
    memset(var, 'v', n);
    var[n] = 0;
    memcpy(var, "FL_T_BIG=", 9);
    ASSERT_OK(putenv(var));
    struct fl_cmd cmd = { .argv = ARGV("/bin/true") };
    if (!launches()) {
        cmd.flags = FL_NO_WAIT_EXEC;
        cmd.backend = BACKEND;
        struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
        ASSERT_OK(unsetenv("FL_T_BIG"));
        ASSERT_STR_CONTAINS(e.detail, "environment variable FL_T_BIG is");
        return;
    }
    struct fl_proc p;
    launch(&cmd, &p);
    ASSERT_OK(unsetenv("FL_T_BIG"));
    memcpy(var, "FL_T_NOT=", 9);
    struct fl_error e;
    ASSERT_ERR(fl_launch_finish(&p, &e), E2BIG);
    ASSERT(fl_t_step_is(&e, FL_STEP_EXEC));
    ASSERT_STR_CONTAINS(e.detail, "environment variable FL_T_BIG is");
    fl_close(&p);
}

/* A fork() child's copy of a handle whose launch is still in its setup:
 * the launch is the parent's, so finishing it there says ECHILD, never
 * "the program runs"; the parent's own finish still gets the failure. */
TEST(a_fork_child_s_finish_of_its_parent_s_launch_is_echild)
{
    if (!launches())
        SKIP("only the clone backend launches");
    char *fifo = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(fifo, 0600));
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent-dir/prog") };
    cmd.stdio[0] = (struct fl_stdio){ .kind = FL_FILE, .path = fifo };
    struct fl_proc p;
    launch(&cmd, &p);   /* its child waits in the open of the FIFO */
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        struct fl_error e;
        int r = fl_launch_finish(&p, &e);
        int again = fl_launch_finish(&p, NULL);
        fl_close(&p);
        t_helper_exit(r == ECHILD && again == ECHILD && e.err == ECHILD ? 0 : 1);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    int w = open(fifo, O_WRONLY | O_CLOEXEC);   /* lets the child's open end */
    ASSERT_SYS(w);
    close(w);
    struct fl_error e;
    ASSERT_ERR(fl_launch_finish(&p, &e), ENOENT);
    ASSERT(fl_t_step_is(&e, FL_STEP_EXEC));
    fl_close(&p);
    ASSERT_EXITED(st, 0);
}

/* The same where both are pid 1: the launcher is the init of a pid
 * namespace and its fork() child the init of another. The pid alone
 * cannot tell them apart. Returns 0 when the child's finish says ECHILD. */
static const char *nested_init_fifo;

static int finish_in_a_nested_init(int unused)
{
    (void)unused;
    const char *fifo = nested_init_fifo;
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent-dir/prog"), .flags = FL_NO_WAIT_EXEC,
                          .backend = BACKEND };
    cmd.stdio[0] = (struct fl_stdio){ .kind = FL_FILE, .path = fifo };
    struct fl_proc p;
    if (getpid() != 1 || fl_spawn(&cmd, &p, NULL) != 0 || unshare(CLONE_NEWPID) != 0)
        return 100;
    pid_t pid = fork();
    if (pid == 0)
        _exit(getpid() == 1 && fl_launch_finish(&p, NULL) == ECHILD ? 0 : 1);
    int st, w = -1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid ||
        (w = open(fifo, O_WRONLY | O_CLOEXEC)) < 0)
        return 101;
    close(w);
    int r = fl_launch_finish(&p, NULL);
    fl_close(&p);
    return r != ENOENT ? 2 : WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}

TEST(a_fork_child_s_finish_of_its_parent_s_launch_is_echild_both_being_pid_1)
{
    if (!launches())
        SKIP("only the clone backend launches");
    char *fifo = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(fifo, 0600));
    nested_init_fifo = fifo;
    int st = t_in_pid_namespace(finish_in_a_nested_init, 0);
    /* 1: the child's finish said something else; 2: the parent's lost its failure. */
    ASSERT_EXITED(st, 0);
}

/* A command whose copy cannot be allocated (lists of gigabytes; here 64
 * MiB under an address-space limit that leaves 32 MiB): a launch fails at
 * once, ENOMEM at its prepare step, rather than wait for an exec that
 * would say E2BIG (a setup that waits on the caller would hang it); the
 * backends that wait anyway say exec's E2BIG. */
TEST(a_launch_too_big_to_copy_is_enomem_at_prepare)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    SKIP("the sanitizers' shadow memory does not fit under a low RLIMIT_AS");
#else
    NEEDS_CLOSE_OTHERS();   /* fl_spawn() is called here, not through SPAWN() */
    size_t n = (size_t)64 << 20;
    char *big = t_keep(malloc(n + 1));
    memset(big, 'a', n);
    big[n] = '\0';
    struct fl_cmd cmd = { .argv = ARGV("/bin/true", big), .flags = FL_NO_WAIT_EXEC,
                          .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    struct rlimit old = t_lower_address_space(32u << 20);
    int r = fl_spawn(&cmd, &p, &e);
    ASSERT_SYS(setrlimit(RLIMIT_AS, &old));
    if (r == 0)
        fl_close(&p);
    if (launches()) {
        ASSERT_ERR(r, ENOMEM);
        ASSERT(fl_t_step_is(&e, FL_STEP_PREPARE));
        ASSERT_STR_CONTAINS(e.detail, "copy of the command");
    } else {
        ASSERT_ERR(r, E2BIG);
        ASSERT(fl_t_step_is(&e, FL_STEP_EXEC));
    }
#endif
}

/* exec's limit on the lists is a quarter of the stack limit the child
 * had: an E2BIG explained when the launch is finished says that one, not
 * the caller's by then. c: the command's containment, or NULL. */
static void e2big_names_the_child_s_limit(const struct fl_contain *c)
{
    struct rlimit old, eight = { 8u << 20, 0 }, big = { 64u << 20, 0 };
    ASSERT_OK(getrlimit(RLIMIT_STACK, &old));
    /* Raised to 16 MiB at least, the caller's limit alone (4 MiB) would
     * take the lists. */
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < (16u << 20))
        SKIP("the hard stack limit is under 16 MiB");
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < big.rlim_cur)
        big.rlim_cur = old.rlim_max;
    eight.rlim_max = big.rlim_max = old.rlim_max;
    /* 20 x 120000 bytes: over 2 MiB (a quarter of 8 MiB), under 4 MiB. */
    char *argv[22] = { "/bin/true" };
    for (int i = 1; i <= 20; i++) {
        argv[i] = t_keep(malloc(120000));
        memset(argv[i], 'a', 119999);
        argv[i][119999] = 0;
    }
    struct fl_cmd cmd = { .argv = argv, .contain = c };
    if (c && BACKEND == FL_BACKEND_POSIX_SPAWN)
        SKIP("posix_spawn sets no seccomp filter");
    ASSERT_OK(setrlimit(RLIMIT_STACK, &eight));
    if (!launches()) {
        cmd.flags = FL_NO_WAIT_EXEC;
        cmd.backend = BACKEND;
        struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
        ASSERT_OK(setrlimit(RLIMIT_STACK, &old));
        ASSERT_STR_CONTAINS(e.detail, "over the 2097152-byte limit (ARG_MAX)");
        return;
    }
    struct fl_proc p;
    launch(&cmd, &p);
    ASSERT_OK(setrlimit(RLIMIT_STACK, &big));
    struct fl_error e;
    ASSERT_ERR(fl_launch_finish(&p, &e), E2BIG);
    ASSERT_OK(setrlimit(RLIMIT_STACK, &old));
    ASSERT_STR_CONTAINS(e.detail, "over the 2097152-byte limit (ARG_MAX)");
    fl_close(&p);
}

TEST(an_e2big_over_arg_max_names_the_child_s_limit_after_the_caller_raised_its_own)
{
    e2big_names_the_child_s_limit(NULL);
}

/* With a seccomp filter, which may refuse (or kill on) the read of the
 * limit, the child reads it before the filter. */
TEST(an_e2big_over_arg_max_names_the_child_s_limit_under_a_filter_that_denies_its_read)
{
    NEEDS_SECCOMP();
    int nr = fl_syscall_number("prlimit64");
    ASSERT_GE(nr, 0);
    struct sock_fprog prog;
    ASSERT_OK(fl_seccomp_deny(&nr, 1, EPERM, &prog));
    t_keep(prog.filter);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    e2big_names_the_child_s_limit(&c);
}

TEST(chdir_failure_is_reported)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .cwd = "/nonexistent/dir" };
    launch_fails(&cmd, ENOENT, FL_STEP_CHDIR, true);
}

TEST(open_failure_is_reported)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { [1] = { .kind = FL_FILE, .path = "/nonexistent/dir/out" } },
    };
    launch_fails(&cmd, ENOENT, FL_STEP_OPEN, false);
}

TEST(rlimit_failure_is_reported)
{
    /* More fds than fs.nr_open allows: EPERM, for root too. */
    char *s = t_read_file("/proc/sys/fs/nr_open");
    rlim_t over = (rlim_t)strtoull(s, NULL, 10) + 1;
    struct fl_rlimit lim = { RLIMIT_NOFILE, over, over };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .rlimits = &lim, .nrlimits = 1,
                          .flags = FL_NO_WAIT_EXEC, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    launch_fails(&cmd, EPERM, FL_STEP_RLIMIT, false);
}

/* The header lets the caller free the command as soon as fl_spawn()
 * returns, containment included: the failure's explanation, made at the
 * finish, must not read it (it would fault on the unmapped page). */
TEST(a_failed_launch_is_explained_after_the_caller_unmapped_its_containment)
{
    const struct fl_contain box = { .flags = FL_NO_NEW_PRIVS };
    char *f = t_write_file(t_tmpdir(), "noexec", "#!/bin/sh\n", 0644);
    struct fl_cmd cmd = { .argv = ARGV(f), .contain = &box, .flags = FL_NO_WAIT_EXEC,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_contain *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                -1, 0);
    ASSERT(c != MAP_FAILED);
    *c = box;
    cmd.contain = c;
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    ASSERT_SYS(munmap(c, 4096));
    if (!r)
        r = fl_launch_finish(&p, &e);
    fl_close(&p);
    ASSERT_EQ(r, EACCES);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
}

/* A caller that closed the handle's pidfd behind its back still gets the
 * failure, and the child is reaped by pid: no zombie is left. */
TEST(a_failed_launch_whose_pidfd_was_closed_is_reaped)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent/prog"), .flags = FL_NO_WAIT_EXEC,
                          .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    if (r) {  /* the backends that wait for the exec */
        ASSERT(!launches());
        ASSERT_EQ(r, ENOENT);
        return;
    }
    if (p.pidfd < 0)
        SKIP("no pidfd here");
    pid_t pid = p.pid;
    ASSERT_SYS(close(p.pidfd));
    ASSERT_EQ(fl_launch_finish(&p, &e), ENOENT);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
    fl_close(&p);
    siginfo_t si = { 0 };
    ASSERT(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG) < 0);
    ASSERT_EQ(errno, ECHILD);
}

TEST(fields_the_command_leaves_unused_are_not_read)
{
    /* A stale .path for a stdio that is not FL_FILE, and a count of
     * groups without FL_SET_GROUPS: neither is in use, so neither is
     * copied (reading them would fault), and the launch runs as a spawn. */
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "3"),
        .stdio = { [1] = { .kind = FL_INHERIT, .path = (const char *)0x10 } },
        .ngroups = (size_t)1 << 30,
    };
    struct fl_proc p;
    launch(&cmd, &p);
    ASSERT_OK(fl_launch_finish(&p, NULL));
    ASSERT_EXITED(t_wait(&p), 3);
}

TEST(close_drops_a_failed_launch_without_a_zombie)
{
    NEEDS_CLOSE_OTHERS();
    /* Never asked: fl_close() waits for the failure and reaps it (the
     * runner checks for zombies; ASan for the record). */
    for (int i = 0; i < 20; i++) {
        struct fl_cmd cmd = { .argv = ARGV("/nonexistent/prog"), .cwd = i % 2 ? "/" : NULL };
        struct fl_proc p;
        cmd.flags = FL_NO_WAIT_EXEC;
        cmd.backend = BACKEND;
        int r = fl_spawn(&cmd, &p, NULL);
        ASSERT_EQ(r, launches() ? 0 : ENOENT);
        fl_close(&p);
    }
}

/* Settling a launch whose child failed explains the failure in the
 * caller (it reads what exec could not find): whichever call settles it,
 * fl_close(), fl_launch_finish() or fl_wait(), errno is as the caller
 * left it. The other backends fail in fl_spawn() itself, which keeps it
 * too. */
TEST(settling_a_failed_launch_leaves_errno_as_it_was)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent-dir/program") };
    struct fl_proc p;
    int err, saw;
    cmd.flags = FL_NO_WAIT_EXEC;
    cmd.backend = BACKEND;
    if (!launches()) {
        errno = 1234;
        err = fl_spawn(&cmd, &p, NULL);
        saw = errno;
        ASSERT_ERR(err, ENOENT);
        ASSERT_EQ(saw, 1234);
        return;
    }
    for (int how = 0; how < 3; how++) {
        ASSERT_OK(fl_spawn(&cmd, &p, NULL));
        int st;
        errno = 1234;
        err = how == 0 ? (fl_close(&p), 0)
              : how == 1 ? fl_launch_finish(&p, NULL)
                         : fl_wait(&p, -1, &st);
        saw = errno;
        ASSERT_ERR(err, how == 0 ? 0 : ENOENT);
        ASSERT_EQ(saw, 1234);
        fl_close(&p);
    }
}

/* A bad handle is an error like any other: the record says which. */
TEST(launch_finish_of_no_handle_or_an_empty_one_fills_the_record)
{
    struct fl_error e;
    memset(&e, 0x55, sizeof e);
    ASSERT_ERR(fl_launch_finish(NULL, &e), EINVAL);
    ASSERT_EQ(e.err, EINVAL);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "no handle");
    struct fl_proc empty;
    memset(&empty, 0, sizeof empty);
    empty.pidfd = -1;
    memset(&e, 0x55, sizeof e);
    ASSERT_ERR(fl_launch_finish(&empty, &e), ESRCH);
    ASSERT_EQ(e.err, ESRCH);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "no process");
    ASSERT_ERR(fl_launch_finish(&empty, NULL), ESRCH);
}

TEST(close_of_an_exec_d_launch_leaves_it_running)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("exit", "7") };
    struct fl_proc p;
    launch(&cmd, &p);
    pid_t pid = p.pid;
    fl_close(&p);   /* waits for the exec, frees, neither kills nor reaps */
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_EXITED(st, 7);
}

static char *make_fifo(void)
{
    char *path = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(path, 0600));
    return path;
}

/* Launches from its own frame, whose strings and arrays the command
 * points to, and returns: the child is then still held in its open(). */
static __attribute__((noinline)) void launch_from_frame(const char *fifo, struct fl_proc *p)
{
    char prog[4096], word[64], cwd[64];
    snprintf(prog, sizeof prog, "%s", fl_test_probe);
    snprintf(word, sizeof word, "from-the-frame");
    snprintf(cwd, sizeof cwd, "/");
    char *argv[] = { prog, "echo", word, NULL };
    char env0[64];
    snprintf(env0, sizeof env0, "LAUNCH_VAR=yes");
    char *env[] = { env0, NULL };
    struct fl_cmd cmd = {
        .argv = argv,
        .env = env,
        .cwd = cwd,
        .stdio = { [0] = { .kind = FL_FILE, .path = fifo }, [1] = { .kind = FL_PIPE } },
    };
    launch(&cmd, p);
    memset(prog, 'X', sizeof prog);
    memset(word, 'Y', sizeof word);
    memset(env0, 'Z', sizeof env0);
}

static __attribute__((noinline)) void scribble(void)
{
    volatile char big[256 * 1024];
    for (size_t i = 0; i < sizeof big; i += 64)
        big[i] = (char)0xa5;
}

TEST(caller_returns_and_reuses_its_stack_before_the_exec)
{
    NEEDS_CLOSE_OTHERS();
    char *fifo = make_fifo();
    struct fl_proc p;
    int fd;
    if (!launches()) {
        /* A backend that waits would wait for the FIFO's writer: be one
         * first (O_RDWR opens a FIFO without waiting for a reader). */
        ASSERT_SYS(fd = open(fifo, O_RDWR | O_CLOEXEC));
        launch_from_frame(fifo, &p);
    } else {
        launch_from_frame(fifo, &p);
        scribble();
        /* Still in its open(): nothing has exec'd, the record is there. */
        ASSERT(p.launch_ != NULL);
        ASSERT_OK(fl_kill(&p, 0));
        ASSERT_SYS(fd = open(fifo, O_RDWR | O_CLOEXEC));
    }
    ASSERT_OK(fl_launch_finish(&p, NULL));
    ASSERT_STR_EQ(t_read_all_within(p.stdio[1], 10000), "from-the-frame\n");
    ASSERT_EXITED(t_wait(&p), 0);
    close(fd);
}

static void *open_fifo_later(void *arg)
{
    struct timespec ts = { 0, 50 * 1000000L };
    nanosleep(&ts, NULL);
    return (void *)(intptr_t)open(arg, O_RDWR | O_CLOEXEC);
}

TEST(close_of_a_pending_launch_waits_for_the_exec)
{
    NEEDS_CLOSE_OTHERS();
    char *fifo = make_fifo();
    pthread_t th;
    int fd = -1;
    if (launches())
        ASSERT_OK(pthread_create(&th, NULL, open_fifo_later, fifo));
    else
        ASSERT_SYS(fd = open(fifo, O_RDWR | O_CLOEXEC));
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "5"),
        .stdio = { [0] = { .kind = FL_FILE, .path = fifo } },
    };
    struct fl_proc p;
    launch(&cmd, &p);
    pid_t pid = p.pid;
    fl_close(&p);   /* the child is in its open() until the thread comes */
    if (launches()) {
        void *res;
        ASSERT_OK(pthread_join(th, &res));
        fd = (int)(intptr_t)res;
        ASSERT_SYS(fd);
    }
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_EXITED(st, 5);   /* exec'd with its argv whole: nothing freed early */
    close(fd);
}

static int count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    ASSERT(f);
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Keeps up to k launches in flight, n in all. */
static void launch_ring(int n, int k)
{
    struct fl_proc ring[16];
    ASSERT_LE(k, 16);
    for (int i = 0; i < n + k; i++) {
        struct fl_proc *p = &ring[i % k];
        if (i >= k)
            ASSERT_EXITED(t_wait(p), 0);
        if (i < n) {
            struct fl_cmd cmd = { .argv = ARGV("/bin/true") };
            launch(&cmd, p);
        }
    }
}

TEST(a_thousand_launches_leak_nothing) /* stress */
{
    NEEDS_CLOSE_OTHERS();
    launch_ring(64, 16);   /* fills the stack pool */
    int before = count_maps();
    launch_ring(t_scaled(1000), 16);
    int after = count_maps();
    /* The pool holds what 16 in flight need: no mapping grows. The
     * allocator may add one arena's worth at most. */
    if (after > before + 1)
        FAIL("mappings grew from %d to %d", before, after);
}

/* ---- threads, signals ---------------------------------------------------- */

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

struct worker {
    int n;
    int failures;
};

static void *launch_worker(void *arg)
{
    struct worker *w = arg;
    struct fl_proc ring[16];
    for (int i = 0; i < w->n + 16; i++) {
        struct fl_proc *p = &ring[i % 16];
        if (i >= 16) {
            int st = -1;
            if (fl_wait(p, -1, &st) != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                w->failures++;
            fl_close(p);
        }
        if (i < w->n) {
            struct fl_cmd cmd = {
                .argv = ARGV("/bin/true"),
                .flags = FL_NO_WAIT_EXEC,
                .backend = BACKEND,
            };
            struct fl_error e;
            int r;
            while ((r = fl_spawn(&cmd, p, &e)) == EAGAIN)
                ;
            if (r) {
                w->failures++;
                *p = (struct fl_proc){ .pid = 0 };
            }
        }
    }
    return NULL;
}

TEST(eight_threads_sixteen_in_flight_under_sigalrm) /* stress */
{
    NEEDS_CLOSE_OTHERS();
    struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    struct sigaction old;
    ASSERT_SYS(sigaction(SIGALRM, &sa, &old));
    /* The workers block SIGALRM, so the flood reaches the main thread. */
    sigset_t alrm, prev;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, &prev);
    enum { NT = 8 };
    pthread_t th[NT];
    struct worker w[NT];
    for (int i = 0; i < NT; i++) {
        w[i] = (struct worker){ .n = t_scaled(150) };
        ASSERT_OK(pthread_create(&th[i], NULL, launch_worker, &w[i]));
    }
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    struct itimerval it = { { 0, 200 }, { 0, 200 } };
    ASSERT_SYS(setitimer(ITIMER_REAL, &it, NULL));
    for (int i = 0; i < NT; i++)
        ASSERT_OK(pthread_join(th[i], NULL));
    struct itimerval off = { 0 };
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    for (int i = 0; i < NT; i++)
        ASSERT_EQ(w[i].failures, 0);
    ASSERT_GT(alarms, 0);
}

/* ---- older kernels, as a seccomp filter makes them ------------------------ */

#if defined(__x86_64__)
#define T_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define T_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* One rule: the system call nr, where argument arg[k] (k < nargs) has the
 * low 32 bits val[k], returns ret (a SECCOMP_RET_* action). */
struct t_rule {
    long nr;
    int nargs;
    int arg[2];
    unsigned val[2];
    unsigned ret;
};

/* Installs the rules for this process and what it spawns: call it in a
 * forked helper, never in the test process. 0, or -1 with errno. */
static int t_filter(const struct t_rule *rules, int nrules)
{
#ifndef T_AUDIT_ARCH
    (void)rules, (void)nrules;
    errno = ENOTSUP;
    return -1;
#else
    struct sock_filter f[64];
    int n = 0;
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, arch));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, T_AUDIT_ARCH, 1, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    for (int i = 0; i < nrules; i++) {
        const struct t_rule *r = &rules[i];
        int len = 2 + 2 * r->nargs + 1;   /* this rule's statements */
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                              offsetof(struct seccomp_data, nr));
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)r->nr, 0,
                                              (unsigned char)(len - 2));
        for (int k = 0; k < r->nargs; k++) {
            f[n++] = (struct sock_filter)BPF_STMT(
                BPF_LD | BPF_W | BPF_ABS,
                (unsigned)(offsetof(struct seccomp_data, args) + 8 * (unsigned)r->arg[k]));
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->val[k], 0,
                                                  (unsigned char)(2 * (r->nargs - k - 1) + 1));
        }
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, r->ret);
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
#endif
}

/* A helper that cannot set up its seccomp filter exits with this, and the
 * case is skipped. */
#define NO_FILTER_HERE 77

/* Runs body in a forked helper and expects it to exit 0 (an assertion
 * that fails there aborts it). The helper ends with t_helper_exit(): the
 * FIFO's directory it made is its own to remove. */
static void in_helper(void (*body)(void))
{
    pid_t h = fork();
    ASSERT_SYS(h);
    if (h == 0) {
        body();
        t_helper_exit(0);
    }
    int st;
    ASSERT_EQ(waitpid(h, &st, 0), h);
    if (WIFEXITED(st) && WEXITSTATUS(st) == NO_FILTER_HERE)
        SKIP("no seccomp filter to be had here (another architecture, or seccomp off)");
    ASSERT_EXITED(st, 0);
}

static volatile int fifo_released;

/* Lets a FIFO's reader through after a while; fifo_released is set first. */
static void *release_fifo_later(void *arg)
{
    struct timespec ts = { 0, 100 * 1000000L };
    nanosleep(&ts, NULL);
    __atomic_store_n(&fifo_released, 1, __ATOMIC_SEQ_CST);
    return (void *)(intptr_t)open(arg, O_RDWR | O_CLOEXEC);
}

static void pending_launch_under_no_p_pidfd(void)
{
    /* Linux 5.2 and 5.3: CLONE_PIDFD, but waitid(P_PIDFD) is EINVAL. */
    const struct t_rule no_p_pidfd = { SYS_waitid, 1, { 0 }, { 3 /* P_PIDFD */ },
                                       SECCOMP_RET_ERRNO | EINVAL };
    if (t_filter(&no_p_pidfd, 1) != 0)
        t_helper_exit(NO_FILTER_HERE);
    char *fifo = make_fifo();
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, release_fifo_later, fifo));
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "6"),
        .stdio = { [0] = { .kind = FL_FILE, .path = fifo } },
    };
    struct fl_proc p;
    launch(&cmd, &p);
    pid_t pid = p.pid;
    /* The child is in its open() until the thread lets it through, and
     * fl_close() waits for its exec, however waitid() answers. */
    fl_close(&p);
    ASSERT(__atomic_load_n(&fifo_released, __ATOMIC_SEQ_CST));
    /* Stacks from the pool, reused while a settled-too-early child ran. */
    for (int i = 0; i < 20; i++) {
        struct fl_cmd t = { .argv = ARGV("/bin/true") };
        struct fl_proc q;
        launch(&t, &q);
        t_wait(&q);
        fl_close(&q);
    }
    void *res;
    ASSERT_OK(pthread_join(th, &res));
    int fd = (int)(intptr_t)res;
    ASSERT_SYS(fd);
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_EXITED(st, 6);   /* exec'd with its plan whole */
    close(fd);
}

TEST(close_waits_for_the_exec_where_waitid_has_no_p_pidfd)
{
    NEEDS_CLOSE_OTHERS();
    NEEDS_SECCOMP();
    in_helper(pending_launch_under_no_p_pidfd);
}

/* A caller whose seccomp filter refuses futex(), or answers it without
 * waiting: the wait for the exec must sleep between looks, not spin. The
 * child is held in its open() of a FIFO; a SIGSYS handler opens the other
 * end once it has counted enough refused calls, and an alarm otherwise,
 * which says the wait spun. */
static volatile sig_atomic_t futexes_refused, naps_taken, released_by_alarm;
static const char *held_fifo;
static volatile sig_atomic_t held_writer = -1;

static void release_held(void)
{
    /* O_RDWR: it opens whether or not the child is in its open() yet. */
    held_writer = open(held_fifo, O_RDWR | O_CLOEXEC);
}

static void release_on_alarm(int sig)
{
    (void)sig;
    released_by_alarm = 1;
    release_held();
}

/* futex() traps too: each refused one is counted, and each sleep tried
 * after it. */
static void on_futex_or_nap(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    if (si->si_syscall == SYS_nanosleep || si->si_syscall == SYS_clock_nanosleep)
        naps_taken++;
    else if (++futexes_refused == 50)
        release_held();
}

static void on_nap(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    if (++naps_taken == 50)
        release_held();
}

/* Launches /bin/true held on the FIFO, then, under a filter that answers
 * futex() with futex_action and traps clock_nanosleep() and nanosleep()
 * into on_sigsys (ppoll() is left to sleep), waits for its exec. */
static void finish_held_launch_under(unsigned futex_action,
                                     void (*on_sigsys)(int, siginfo_t *, void *))
{
    held_fifo = make_fifo();
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"),
                          .stdio = { [0] = { .kind = FL_FILE, .path = held_fifo } } };
    struct fl_proc p;
    launch(&cmd, &p);   /* before the filter: the child has none */
    const struct t_rule rules[] = {
        { SYS_futex, 0, { 0 }, { 0 }, futex_action },
        { SYS_clock_nanosleep, 0, { 0 }, { 0 }, SECCOMP_RET_TRAP },
        { SYS_nanosleep, 0, { 0 }, { 0 }, SECCOMP_RET_TRAP },
    };
    struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
    struct sigaction al = { .sa_handler = release_on_alarm };
    ASSERT_SYS(sigaction(SIGSYS, &sa, NULL));
    ASSERT_SYS(sigaction(SIGALRM, &al, NULL));
    if (t_filter(rules, 3) != 0)
        t_helper_exit(NO_FILTER_HERE);
    alarm(20);
    ASSERT_OK(fl_launch_finish(&p, NULL));
    alarm(0);
    ASSERT_SYS(held_writer);
    ASSERT(!released_by_alarm);
    ASSERT_EXITED(t_wait(&p), 0);
    fl_close(&p);
}

static void launch_waited_for_under_a_filter_that_refuses_futex(void)
{
    finish_held_launch_under(SECCOMP_RET_TRAP, on_futex_or_nap);
    ASSERT_GE(futexes_refused, 50);
    /* Two sleeps tried after each refused futex() (then ppoll() sleeps),
     * but the wait's last look. */
    ASSERT_GE(naps_taken, 2 * (futexes_refused - 1));
}

TEST(the_wait_for_the_exec_sleeps_where_a_filter_refuses_futex)
{
    if (!launches())
        SKIP("only the clone backend launches without waiting for the exec");
    NEEDS_SECCOMP();
    in_helper(launch_waited_for_under_a_filter_that_refuses_futex);
}

/* A filter that answers futex() with 0 (SECCOMP_RET_ERRNO | 0), the word
 * unchanged: the naps are counted, and release the child. */
static void launch_waited_for_under_a_filter_that_fakes_futex(void)
{
    finish_held_launch_under(SECCOMP_RET_ERRNO | 0, on_nap);
}

TEST(the_wait_for_the_exec_sleeps_where_a_filter_answers_futex_without_waiting)
{
    if (!launches())
        SKIP("only the clone backend launches without waiting for the exec");
    NEEDS_SECCOMP();
    in_helper(launch_waited_for_under_a_filter_that_fakes_futex);
}

static volatile sig_atomic_t blocking_waitids;

static void on_sigsys(int sig)
{
    (void)sig;
    blocking_waitids++;
}

static void failed_launch_without_any_pidfd(void)
{
    /* Before Linux 5.3: no pidfd_open. And every blocking
     * waitid(P_PID, ..., WEXITED) traps, so that a second reap shows. */
    const struct t_rule rules[] = {
        { SYS_pidfd_open, 0, { 0 }, { 0 }, SECCOMP_RET_ERRNO | ENOSYS },
        { SYS_waitid, 2, { 0, 3 }, { P_PID, WEXITED }, SECCOMP_RET_TRAP },
    };
    struct sigaction sa = { .sa_handler = on_sigsys };
    ASSERT_SYS(sigaction(SIGSYS, &sa, NULL));
    if (t_filter(rules, 2) != 0)
        t_helper_exit(NO_FILTER_HERE);
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent/prog"), .flags = FL_NO_PIDFD };
    struct fl_proc p;
    launch(&cmd, &p);
    int st = 0x5a5a;
    ASSERT_ERR(fl_wait(&p, 30000, &st), ENOENT);   /* a timed wait: it polls */
    ASSERT_EQ(st, 0x5a5a);
    ASSERT_EQ(blocking_waitids, 0);
    ASSERT_ERR(fl_launch_finish(&p, NULL), ENOENT);
    fl_close(&p);
}

/* Without any pidfd, fl_wait() with a timeout polls and reaps the child
 * itself: the launch's settle that follows must not reap that pid again
 * (it may be another child's by then). */
TEST(a_launch_reaped_by_the_wait_is_not_reaped_again)
{
    if (!launches())
        SKIP("only the clone backend launches without waiting for the exec");
    NEEDS_SECCOMP();
    in_helper(failed_launch_without_any_pidfd);
}

/* ---- the caller's environment, changed by another thread ----------------- */

static volatile int churn_stop;

static void *churn_env(void *arg)
{
    (void)arg;
    static char big[4000];
    memset(big, 'x', sizeof big - 1);
    for (unsigned i = 0; !__atomic_load_n(&churn_stop, __ATOMIC_RELAXED); i++)
        setenv("FL_T_CHURN", i & 1 ? big : "s", 1);
    return NULL;
}

/* The header forbids it (as getenv(3) does), but a setenv() in another
 * thread while a launch copies environ must not overrun the copy: each
 * string is copied at the length first seen (ASan finds the overrun). */
TEST(environ_growing_during_the_copy_is_not_overrun) /* stress */
{
#if defined(__SANITIZE_THREAD__)
    /* The case races setenv() against the copy on purpose, a misuse the
     * header forbids (as getenv(3) does): TSan rightly reports the race
     * itself. What is tested here is that memory stays whole even so. */
    SKIP("races environ on purpose, which ThreadSanitizer reports");
#endif
#if !defined(__GLIBC__)
    /* glibc's setenv() never frees a string it replaced; musl's does, so
     * there the race is a use-after-free in any spawner, launch or not. */
    SKIP("this libc's setenv() frees the strings the race reads");
#endif
    /* Only the launch copies environ; the other backends read it in
     * place, as fl_spawn() documents, and have nothing to test here. */
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend's launch copies environ");
    NEEDS_CLOSE_OTHERS();
    setenv("FL_T_CHURN", "s", 1);
    __atomic_store_n(&churn_stop, 0, __ATOMIC_RELAXED);
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, churn_env, NULL));
    for (int i = 0, n = t_scaled(2000); i < n; i++) {
        struct fl_cmd cmd = { .argv = ARGV("/bin/true") };
        struct fl_proc p;
        launch(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 0);
        fl_close(&p);
    }
    __atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
    ASSERT_OK(pthread_join(th, NULL));
    unsetenv("FL_T_CHURN");
}

/* ---- the parent exits before the child execs ------------------------------ */

TEST(parent_exits_between_clone_and_exec)
{
    NEEDS_CLOSE_OTHERS();
    /* A helper process launches children held in their open() of the
     * FIFO and exits. The children keep the address space they run in
     * (the kernel frees it with its last user), are reparented to us
     * (a subreaper here), and exec once the FIFO has a writer. */
    ASSERT_SYS(prctl(PR_SET_CHILD_SUBREAPER, 1));
    char *fifo = make_fifo();
    char *out = t_fmt("%s/out", t_tmpdir());
    enum { N = 4 };
    int ready;
    pid_t h = t_fork_piped(&ready);
    if (h == 0) {
        int ok = 1;
        for (int i = 0; i < N && launches(); i++) {
            struct fl_cmd cmd = {
                .argv = PROBE("echo", "ran"),
                .stdio = { [0] = { .kind = FL_FILE, .path = fifo },
                           [1] = { .kind = FL_FILE, .path = out,
                                   .flags = O_WRONLY | O_CREAT | O_APPEND } },
                .flags = FL_NO_WAIT_EXEC,
                .backend = BACKEND,
            };
            struct fl_proc p;
            ok &= fl_spawn(&cmd, &p, NULL) == 0;
        }
        ssize_t wr = write(ready, &ok, sizeof ok);
        (void)wr;
        _exit(ok ? 0 : 1);   /* the whole process: the children live on */
    }
    int ok = 0;
    ASSERT_EQ(read(ready, &ok, sizeof ok), (ssize_t)sizeof ok);
    close(ready);
    int st;
    ASSERT_EQ(waitpid(h, &st, 0), h);
    ASSERT_EXITED(st, 0);
    if (launches()) {
        /* A writer lets every child's open() through. */
        int fd = open(fifo, O_RDWR | O_CLOEXEC);
        ASSERT_SYS(fd);
        for (int i = 0; i < N; i++) {
            pid_t c = waitpid(-1, &st, 0);
            ASSERT_GT(c, 0);
            ASSERT_EXITED(st, 0);
        }
        close(fd);
        ASSERT_EQ(t_count_lines(t_read_file(out), "ran"), N);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* ---- pipelines launch their stages ---------------------------------------- */

/* Every stage k > 0 joins stage 0's group while stage 0 may not have
 * exec'd yet (the parent makes the group): a lost race would be EPERM at
 * step setpgid. */
TEST(pipelines_join_the_group_of_a_leader_still_at_its_setup) /* stress */
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd st[3] = {
        { .argv = ARGV("/bin/true"), .backend = BACKEND },
        { .argv = ARGV("/bin/true"), .backend = BACKEND },
        { .argv = ARGV("/bin/true"), .backend = BACKEND },
    };
    for (int i = 0; i < t_scaled(200); i++) {
        struct fl_result res[3];
        struct fl_error e;
        int r = fl_pipeline_run(st, 3, NULL, res, &e);
        if (r) {
            char buf[2048];
            FAIL("pipeline %d: %s", i, fl_error_format(&e, buf, sizeof buf));
        }
        for (int k = 0; k < 3; k++)
            ASSERT_EQ(res[k].status, 0);
    }
}

TEST(pipeline_reports_the_first_stage_that_failed)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd st[3] = {
        { .argv = ARGV("/bin/true"), .backend = BACKEND, .cwd = "/nonexistent/dir" },
        { .argv = PROBE("sleep", "30"), .backend = BACKEND },
        { .argv = ARGV("/nonexistent/prog"), .backend = BACKEND },
    };
    struct fl_pipeline pl;
    struct fl_error e;
    ASSERT_ERR(fl_pipeline_spawn(st, 3, &pl, &e), ENOENT);
    ASSERT_EQ(e.stage, 1);
    ASSERT(fl_t_step_is(&e, FL_STEP_CHDIR));
    ASSERT_NULL(pl.procs);
    /* The leader fine, the last stage not: the others are killed, reaped. */
    st[0].cwd = NULL;
    ASSERT_ERR(fl_pipeline_spawn(st, 3, &pl, &e), ENOENT);
    ASSERT_EQ(e.stage, 3);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
}

TEST(a_launch_refused_before_it_starts_leaves_nothing)
{
    struct fl_cmd cmd = { .argv = NULL, .flags = FL_NO_WAIT_EXEC, .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    ASSERT_ERR(fl_spawn(&cmd, &p, &e), EINVAL);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
    ASSERT_EQ(p.pid, 0);
    ASSERT_NULL(p.launch_);
    struct fl_cmd bad = { .argv = PROBE("exit", "0"), .flags = FL_NO_WAIT_EXEC | (1u << 30),
                          .backend = BACKEND };
    ASSERT_ERR(fl_spawn(&bad, &p, &e), EINVAL);
    fl_close(&p);
}

/* ---- what the caller does while a launch is pending ---------------------- */

struct cancelled_finish {
    bool close;   /* fl_close() instead of fl_launch_finish() */
    int r;
};

static void *finish_with_a_cancel_pending(void *arg)
{
    struct cancelled_finish *c = arg;
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent/prog"), .flags = FL_NO_WAIT_EXEC,
                          .backend = BACKEND };
    struct fl_proc p;
    c->r = fl_spawn(&cmd, &p, NULL);
    if (c->r)
        return NULL;
    pthread_cancel(pthread_self());
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
    /* Explaining the ENOENT reads the program's #! line with open(), a
     * cancellation point: the settle must not be cut off there. */
    c->r = c->close ? (fl_close(&p), -1) : fl_launch_finish(&p, NULL);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    fl_close(&p);
    return NULL;
}

TEST(a_cancel_pending_at_the_finish_of_a_failed_launch_leaves_no_zombie)
{
    NEEDS_CLOSE_OTHERS();
    /* The runner checks for a zombie, ASan for the record. */
    for (int close = 0; close < 2; close++) {
        struct cancelled_finish c = { .close = close };
        pthread_t t;
        void *res;
        ASSERT_OK(pthread_create(&t, NULL, finish_with_a_cancel_pending, &c));
        ASSERT_OK(pthread_join(t, &res));
        ASSERT(res != PTHREAD_CANCELED);
        ASSERT_EQ(c.r, launches() ? (close ? -1 : ENOENT) : ENOENT);
    }
}

static void *wait_for_ever(void *arg)
{
    fl_wait(arg, -1, NULL);
    return NULL;
}

TEST(a_wait_without_timeout_for_a_launch_in_its_setup_can_be_cancelled)
{
    /* fl_wait() is a cancellation point, as waitpid(), also while the
     * child is still in its setup (held in the open() of a FIFO): the
     * cancelled wait leaves the launch as it was. */
    NEEDS_CLOSE_OTHERS();
    if (!launches())
        SKIP("only the clone backend launches without waiting for the exec");
    char *fifo = make_fifo();
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND,
                          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } };
    struct fl_proc p;
    launch(&cmd, &p);
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, wait_for_ever, &p));
    usleep(100000);
    ASSERT_OK(pthread_cancel(t));
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    void *res = NULL;
    int joined = pthread_timedjoin_np(t, &res, &until);
    int fd = open(fifo, O_WRONLY | O_CLOEXEC);   /* lets the child go on */
    ASSERT_SYS(fd);
    if (joined)
        pthread_join(t, &res);
    close(fd);
    ASSERT_OK(joined);
    ASSERT(res == PTHREAD_CANCELED);
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(a_group_stop_of_a_launch_that_failed_before_its_setsid_says_the_launch_error)
{
    /* The user namespace's maps come before setsid(): a launch whose map
     * is refused never makes its group. (Not root, in a process that is
     * not dumpable, the child's /proc/self/uid_map is root's, so the
     * write is EACCES.) The first call that asks, here a wait with a
     * group stop, gets that error, not EINVAL. */
    NEEDS_CLOSE_OTHERS();
    if (!launches())
        SKIP("only the clone backend launches without waiting for the exec");
    if (t_rerun_as_nobody())
        return;
    struct fl_contain ct = { .unshare = FL_NS_USER, .map = FL_MAP_ROOT };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &ct, .flags = FL_SETSID,
                          .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    ASSERT_SYS(prctl(PR_SET_DUMPABLE, 0));
    cmd.flags |= FL_NO_WAIT_EXEC;
    int r = fl_spawn(&cmd, &p, &e);
    if (r == EPERM || r == ENOSPC)
        SKIP(t_fmt("no user namespace for this user here: %s", strerror(r)));
    ASSERT_OK(r);
    struct fl_stop_policy pol = { .scope = FL_STOP_GROUP };
    struct fl_result res;
    r = fl_wait_result(&p, 30000, &pol, &res);
    if (r == 0) {
        fl_result_free(&res);
        ASSERT_SYS(prctl(PR_SET_DUMPABLE, 1));
        SKIP("the map was written here all the same");
    }
    ASSERT_ERR(r, EACCES);
    ASSERT_ERR(fl_launch_finish(&p, &e), EACCES);
    ASSERT_EQ(e.step, FL_STEP_ID_MAP);
    fl_close(&p);
    ASSERT_SYS(prctl(PR_SET_DUMPABLE, 1));
}

/* Launches /bin/true to join a group that does not exist (EPERM at
 * setpgid): it makes no group of its own for a group stop to reach. */
static void launch_into_no_group(struct fl_proc *p, unsigned flags)
{
    pid_t gone = fork();  /* a pid that names no group once reaped */
    ASSERT_SYS(gone);
    if (gone == 0)
        _exit(0);
    ASSERT_EQ(waitpid(gone, NULL, 0), gone);
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"),
                          .flags = FL_JOIN_PGROUP | FL_NO_WAIT_EXEC | flags,
                          .pgid = gone, .backend = BACKEND,
                          .stdio = { [1] = { .kind = FL_PIPE } } };
    SPAWN(&cmd, p);
}

static void assert_the_launch_error_was_given(struct fl_proc *p, struct fl_result *r)
{
    ASSERT_EQ(r->exit_code, -1);
    struct fl_error e;
    ASSERT_ERR(fl_launch_finish(p, &e), EPERM);
    ASSERT_EQ(e.step, FL_STEP_SETPGID);
    ASSERT_ERR(fl_wait(p, -1, NULL), ESRCH);
    fl_close(p);
}

TEST(communicate_with_a_group_stop_on_a_launch_that_made_no_group_fills_the_result)
{
    /* The group stop has nothing to reach: fl_communicate() returns the
     * launch's error with the result filled and the handle's pipes
     * taken, as for any failed launch, not with the result untouched. */
    if (!launches())
        SKIP("only the clone backend launches without waiting for the exec");
    struct fl_proc p;
    launch_into_no_group(&p, 0);
    struct fl_stop_policy pol = { .scope = FL_STOP_GROUP };
    struct fl_io io = { .stop = &pol };
    struct fl_result r;
    memset(&r, 0xab, sizeof r);
    ASSERT_ERR(fl_communicate(&p, &io, &r), EPERM);
    ASSERT_EQ(r.out[0].len, 0);
    ASSERT_EQ(r.out[0].total, 0);
    ASSERT_EQ(p.stdio[1], -1);
    assert_the_launch_error_was_given(&p, &r);
    fl_result_free(&r);
}

TEST(a_result_wait_and_a_stop_with_a_group_policy_on_a_launch_that_made_no_group_fill_the_result)
{
    /* Without a pidfd too, where the wait would otherwise look for the
     * pid (reaped as the launch was settled, maybe another child's by
     * now) rather than give the launch's error. */
    if (!launches())
        SKIP("only the clone backend launches without waiting for the exec");
    struct fl_stop_policy pol = { .scope = FL_STOP_GROUP };
    for (int stop = 0; stop < 2; stop++)
        for (int no_pidfd = 0; no_pidfd < 2; no_pidfd++) {
            struct fl_proc p;
            launch_into_no_group(&p, no_pidfd ? FL_NO_PIDFD : 0);
            struct fl_result r;
            memset(&r, 0xab, sizeof r);
            ASSERT_ERR(stop ? fl_stop(&p, &pol, &r) : fl_wait_result(&p, 30000, &pol, &r), EPERM);
            assert_the_launch_error_was_given(&p, &r);
        }
}

/* p is held in the open() of fifo for its stdin, and the caller has
 * closed its last write end of the pipe read by reader: the reader sees
 * EOF (the child holds no copy), then the child is let go and reaped. */
static void reader_sees_eof_while_the_launch_is_held(struct fl_proc *p, int reader,
                                                      const char *fifo)
{
    struct pollfd q = { .fd = reader, .events = POLLIN };
    int n = poll(&q, 1, 30000);
    int w = open(fifo, O_WRONLY | O_CLOEXEC);   /* lets the child go on */
    ASSERT_SYS(w);
    ASSERT_EXITED(t_wait(p), 0);
    close(w);
    close(reader);
    ASSERT_EQ(n, 1);
    ASSERT(q.revents & POLLHUP);
}

TEST(a_launch_held_in_its_setup_keeps_no_copy_of_the_callers_other_fds)
{
    /* The child has a copy of the caller's fd table while its setup waits
     * (the open() of a FIFO): a pipe end the caller closes must not live
     * on in it, or the reader sees no EOF until the exec. */
    NEEDS_CLOSE_OTHERS();
    if (!launches())
        SKIP("only the clone backend launches without waiting for the exec");
    char *fifo = make_fifo();
    int pfd[2];
    ASSERT_SYS(pipe2(pfd, O_CLOEXEC));
    /* A map to a high fd, above the pipe's: the fds below it that the
     * setup does not read go too. */
    int high;
    ASSERT_SYS(high = open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_SYS(dup3(high, 40, O_CLOEXEC));
    close(high);
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND,
                          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } },
                          .fds = (struct fl_fd_map[]){ { 41, 40 } }, .nfds = 1 };
    struct fl_proc p;
    launch(&cmd, &p);
    close(40);
    close(pfd[1]);
    reader_sees_eof_while_the_launch_is_held(&p, pfd[0], fifo);
}

TEST(a_launch_keeps_no_caller_fd_where_it_puts_its_terminal)
{
    /* FL_SETCTTY on child fd 40, which a map fills with a pty's terminal
     * side: the caller's own fd 40 is not the terminal, and is not held
     * through a setup that waits. */
    NEEDS_CLOSE_OTHERS();
    NEEDS_PTY();
    if (!launches())
        SKIP("only the clone backend launches without waiting for the exec");
    int m;
    ASSERT_SYS(m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    ASSERT_SYS(grantpt(m));
    ASSERT_SYS(unlockpt(m));
    int slave;
    ASSERT_SYS(slave = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC));
    int pfd[2];
    ASSERT_SYS(pipe2(pfd, O_CLOEXEC));
    ASSERT_SYS(dup3(pfd[1], 40, O_CLOEXEC));
    close(pfd[1]);
    char *fifo = make_fifo();
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND, .flags = FL_SETCTTY,
                          .tty = &(struct fl_tty_options){ .fd = 40 },
                          .fds = (struct fl_fd_map[]){ { 40, slave } }, .nfds = 1,
                          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } };
    struct fl_proc p;
    launch(&cmd, &p);
    close(40);
    reader_sees_eof_while_the_launch_is_held(&p, pfd[0], fifo);
    close(slave);
    close(m);
}

TEST(a_just_launched_group_leader_has_its_group_for_killpg_and_stop)
{
    NEEDS_CLOSE_OTHERS();
    NEEDS_PTY();
    for (int i = 0; i < t_scaled(20); i++) {
        /* A group of its own, a session of its own, and a terminal of its
         * own (which makes a session too). */
        struct fl_cmd cmd = { .argv = PROBE("sleep", "30"),
                              .flags = i % 3 == 0 ? FL_NEW_PGROUP : i % 3 == 1 ? FL_SETSID : 0 };
        if (i % 3 == 2)
            cmd.stdio[2].kind = FL_PTY;
        if (i % 3 == 2 && BACKEND == FL_BACKEND_POSIX_SPAWN)
            continue;
        struct fl_proc p;
        launch(&cmd, &p);
        /* At once, while the child may still be at its setup: the group
         * it makes must be there for each call, as after a blocking spawn. */
        bool running = false;
        ASSERT_OK(fl_pgroup_running(&p, &running));
        ASSERT(running);
        ASSERT_OK(fl_killpg(&p, 0));
        struct fl_stop_policy stop = { .scope = FL_STOP_GROUP, .signal = SIGKILL };
        struct fl_result res;
        ASSERT_OK(fl_wait_result(&p, 0, &stop, &res));
        ASSERT(res.timed_out);
        ASSERT_EQ(res.signal, SIGKILL);
        fl_result_free(&res);
        fl_close(&p);
    }
}

/* Launches a session leader (FL_SETSID: only the child can make it) and
 * stops it at once, before its setsid() if it gets there first: the
 * child yields its CPU before its setup. Skips the case where this
 * backend does not launch, or where every try found the child past its
 * setsid() already. */
static void launch_stopped_before_its_group(struct fl_proc *p)
{
    if (!launches())
        SKIP("this backend waits for the exec: no launch is pending");
    for (int tries = 0; tries < 50; tries++) {
        struct fl_cmd cmd = { .argv = PROBE("sleep", "30"), .flags = FL_SETSID };
        launch(&cmd, p);
        ASSERT_OK(fl_kill(p, SIGSTOP));
        siginfo_t si = { 0 };
        ASSERT_SYS(waitid(P_PID, (id_t)p->pid, &si, WSTOPPED | WNOWAIT));
        ASSERT_EQ(si.si_code, CLD_STOPPED);
        if (getpgid(p->pid) != p->pid)
            return;
        fl_kill(p, SIGKILL);
        fl_kill(p, SIGCONT);
        int st;
        ASSERT_OK(fl_wait(p, -1, &st));
        fl_close(p);
    }
    SKIP("the child made its group before the stop in 50 tries");
}

/* Launches argv held in its open() of a FIFO (stdin) and stops it
 * there: its child can neither exec nor fail until it is continued. */
static void launch_stopped_in_its_setup(char *const *argv, const char *fifo, struct fl_proc *p)
{
    if (!launches())
        SKIP("this backend waits for the exec: no launch is pending");
    struct fl_cmd cmd = { .argv = argv,
                          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } };
    launch(&cmd, p);
    ASSERT_OK(fl_kill(p, SIGSTOP));
    siginfo_t si = { 0 };
    ASSERT_SYS(waitid(P_PID, (id_t)p->pid, &si, WSTOPPED | WNOWAIT));
    ASSERT_EQ(si.si_code, CLD_STOPPED);
}

/* Launches a program that exits 0, and waits for it. Like every spawn,
 * the launch settles the records fl_close() set aside: then pid (unless
 * 0), a failed child's, has been reaped. */
static void launch_one_more_reaps(pid_t pid)
{
    struct fl_cmd cmd = { .argv = PROBE("exit", "0") };
    struct fl_proc q;
    launch(&cmd, &q);
    ASSERT_EXITED(t_wait(&q), 0);
    fl_close(&q);
    errno = 0;
    if (pid) {
        ASSERT_EQ(waitpid(pid, NULL, WNOHANG), -1);
        ASSERT_EQ(errno, ECHILD);
    }
}

/* Closes p, stopped in its setup, and lets it go on: its FIFO gets a
 * writer and it gets SIGCONT. It must then run to its own end, status
 * want: nothing the close did killed or reaped it. */
static void close_stopped_then_continue(struct fl_proc *p, const char *fifo, int want)
{
    pid_t pid = p->pid;
    fl_close(p);   /* returns while the child stays stopped */
    int writer = open(fifo, O_RDWR | O_CLOEXEC);
    ASSERT_SYS(writer);
    ASSERT_SYS(kill(pid, SIGCONT));
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_EXITED(st, want);
    close(writer);
}

TEST(closing_a_launch_stopped_in_its_setup_does_not_wait_for_it)
{
    char *fifo = make_fifo();
    struct fl_proc p;
    launch_stopped_in_its_setup(PROBE("exit", "7"), fifo, &p);
    close_stopped_then_continue(&p, fifo, 7);
}

TEST(a_launch_closed_while_stopped_that_then_fails_is_reaped_by_the_next_launch)
{
    char *fifo = make_fifo();
    struct fl_proc p;
    launch_stopped_in_its_setup(ARGV("/nonexistent/prog"), fifo, &p);
    pid_t pid = p.pid;
    fl_close(&p);
    int writer = open(fifo, O_RDWR | O_CLOEXEC);
    ASSERT_SYS(writer);
    ASSERT_SYS(kill(pid, SIGCONT));
    siginfo_t si = { 0 };
    ASSERT_SYS(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT));  /* failed: a zombie */
    launch_one_more_reaps(pid);
    close(writer);
}

TEST(a_blocking_spawn_settles_a_launch_closed_while_stopped_once_it_has_exec_d)
{
    if (geteuid() != 0)
        SKIP("needs root: a child that changes its uid");
    if (prctl(PR_GET_DUMPABLE) != 1)
        SKIP("this process is not dumpable to begin with");
    char *fifo = make_fifo();
    ASSERT_SYS(chmod(fifo, 0666));
    struct fl_proc p;
    if (!launches())
        SKIP("this backend waits for the exec: no launch is pending");
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .flags = FL_SET_UID, .uid = 65534,
                          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } };
    launch(&cmd, &p);
    ASSERT_OK(fl_kill(&p, SIGSTOP));
    siginfo_t si = { 0 };
    ASSERT_SYS(waitid(P_PID, (id_t)p.pid, &si, WSTOPPED | WNOWAIT));
    close_stopped_then_continue(&p, fifo, 0);
    /* Its setuid() on our address space made it not dumpable. */
    ASSERT_EQ(prctl(PR_GET_DUMPABLE), 0);
    /* Any spawn now settles what the close left: the caller is dumpable
     * again. */
    struct fl_cmd plain = { .argv = PROBE("exit", "0"), .backend = BACKEND };
    struct fl_proc q;
    SPAWN(&plain, &q);
    ASSERT_EXITED(t_wait(&q), 0);
    fl_close(&q);
    ASSERT_EQ(prctl(PR_GET_DUMPABLE), 1);
}

/* Traces pid, lets it run, and once it has ended tells so on tell and
 * keeps its end (the child's status) from everyone else until release is
 * readable. */
static void hold_the_end_of(pid_t pid, int tell, int release)
{
    if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0)
        _exit(1);
    if (write(tell, "s", 1) != 1)
        _exit(2);
    for (;;) {
        siginfo_t si = { 0 };
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WSTOPPED | WNOWAIT | __WALL) != 0)
            _exit(3);
        if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)
            break;
        int st;
        if (waitpid(pid, &st, __WALL) != pid)
            _exit(4);
        int sig = (st >> 16) == PTRACE_EVENT_STOP || WSTOPSIG(st) == SIGSTOP ? 0 : WSTOPSIG(st);
        ptrace(PTRACE_CONT, pid, 0, (void *)(long)sig);
    }
    char c;
    if (write(tell, "e", 1) != 1 || read(release, &c, 1) != 1)
        _exit(5);
    _exit(0);
}

TEST(a_spawn_does_not_wait_for_a_tracer_that_holds_the_end_of_a_launch_set_aside)
{
    if (geteuid() != 0)
        SKIP("needs root: a tracer of the child");
    char *fifo = make_fifo();
    struct fl_proc p;
    launch_stopped_in_its_setup(ARGV("/nonexistent/prog"), fifo, &p);
    pid_t pid = p.pid;
    fl_close(&p);
    int told[2], release[2];
    ASSERT_SYS(pipe(told));
    ASSERT_SYS(pipe(release));
    pid_t tracer = fork();
    ASSERT_SYS(tracer);
    if (tracer == 0)
        hold_the_end_of(pid, told[1], release[0]);
    char c = 0;
    ASSERT_EQ(read(told[0], &c, 1), 1);
    ASSERT_EQ(c, 's');
    int writer = open(fifo, O_RDWR | O_CLOEXEC);
    ASSERT_SYS(writer);
    ASSERT_SYS(kill(pid, SIGCONT));
    ASSERT_EQ(read(told[0], &c, 1), 1);   /* failed at its exec, its end held */
    ASSERT_EQ(c, 'e');
    launch_one_more_reaps(0);   /* does not wait for the tracer */
    ASSERT_EQ(write(release[1], "x", 1), 1);
    int st;
    ASSERT_EQ(waitpid(tracer, &st, 0), tracer);
    ASSERT_EXITED(st, 0);
    launch_one_more_reaps(pid);   /* let go, it is reaped */
    close(writer);
    for (int i = 0; i < 2; i++) {
        close(told[i]);
        close(release[i]);
    }
}

TEST(a_launch_stopped_before_making_its_group_is_signalled_alone_by_killpg)
{
    struct fl_proc p;
    launch_stopped_before_its_group(&p);
    /* It will lead its group alone; stopped, it cannot make it: the
     * calls reach it without waiting for a group that is not coming. */
    bool running = false;
    ASSERT_OK(fl_pgroup_running(&p, &running));
    ASSERT(running);
    ASSERT_OK(fl_killpg(&p, SIGCONT));
    /* Going on, it makes its group, which the next call finds. */
    ASSERT_OK(fl_killpg(&p, SIGTERM));
    ASSERT_EQ(getpgid(p.pid), p.pid);
    int st = 0;
    ASSERT_OK(fl_wait(&p, -1, &st));
    ASSERT(WIFSIGNALED(st));
    ASSERT_EQ(WTERMSIG(st), SIGTERM);
    fl_close(&p);
}

TEST(a_group_stop_of_a_launch_stopped_before_making_its_group_keeps_its_deadline)
{
    struct fl_proc p;
    launch_stopped_before_its_group(&p);
    struct fl_stop_policy stop = { .scope = FL_STOP_GROUP, .signal = SIGKILL };
    struct fl_result res;
    ASSERT_OK(fl_wait_result(&p, 0, &stop, &res));
    ASSERT(res.timed_out);
    ASSERT_EQ(res.signal, SIGKILL);
    fl_result_free(&res);
    fl_close(&p);
}

TEST(overlapping_launches_that_change_uid_leave_the_caller_dumpable)
{
    NEEDS_CLOSE_OTHERS();
    if (geteuid() != 0)
        SKIP("needs root, to change the child's uid");
    ASSERT_SYS(prctl(PR_SET_DUMPABLE, 1));
    struct fl_cmd cmd = { .argv = PROBE("echo", "ready", "sleep", "30"),
                          .stdio = { [1] = { .kind = FL_PIPE } },
                          .flags = FL_SET_UID | FL_SET_GID | FL_NO_WAIT_EXEC,
                          .uid = 65534, .gid = 65534, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc a, b;
    launch(&cmd, &a);
    /* a's child has changed its uid on our address space: we are not
     * dumpable until a is finished, and b's launch must not take that 0
     * for the caller's own setting. */
    t_read_until(a.stdio[1], "ready");
    launch(&cmd, &b);
    ASSERT_OK(fl_launch_finish(&a, NULL));
    ASSERT_OK(fl_launch_finish(&b, NULL));
    ASSERT_EQ(prctl(PR_GET_DUMPABLE), 1);
    t_kill_wait(&a);
    t_kill_wait(&b);
}

/* A blocking spawn, from its own thread, of prog as uid 65534, which the
 * caller keeps open for writing: the child changes its uid on our memory,
 * then retries its exec (ETXTBSY) for about a second. */
struct busy_spawn {
    const char *prog;
    pid_t tid;
    int result;
};

static void *spawn_busy_as_nobody(void *arg)
{
    struct busy_spawn *b = arg;
    __atomic_store_n(&b->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
    struct fl_cmd cmd = { .argv = ARGV((char *)b->prog),
                          .flags = FL_SET_UID | FL_SET_GID | FL_RETRY_ETXTBSY,
                          .uid = 65534, .gid = 65534, .backend = FL_BACKEND_CLONE };
    struct fl_proc p;
    b->result = fl_spawn(&cmd, &p, NULL);
    if (b->result == 0) {
        int st;
        fl_wait(&p, -1, &st);
        fl_close(&p);
    }
    return NULL;
}

/* Whether thread tid's child is alive and has not exec'd: it still has
 * this process's name, and is no zombie. */
static bool thread_s_child_before_exec(pid_t tid)
{
    char *kids = t_read_file(t_fmt("/proc/self/task/%d/children", (int)tid));
    int pid = kids ? atoi(kids) : 0;
    if (pid <= 0)
        return false;
    char *stat = t_read_file(t_fmt("/proc/%d/stat", pid));
    char *self = t_read_file("/proc/self/stat");
    if (!stat || !self)
        return false;
    char *name = strchr(stat, '('), *end = strrchr(stat, ')');
    char *own = strchr(self, '('), *own_end = strrchr(self, ')');
    return name && end && own && own_end && end[2] != 'Z' && end - name == own_end - own &&
           memcmp(name, own, (size_t)(end - name)) == 0;
}

/* The dumpable cases' start: root, the caller dumpable, and a launch of
 * /bin/true as uid 65534 held in its open() of the FIFO it returns,
 * before its uid changes. */
static char *launch_held_as_nobody(struct fl_proc *l)
{
    if (!launches())
        SKIP("only the clone backend's child changes credentials on the caller's memory");
    if (geteuid() != 0)
        SKIP("needs root, to change the children's uid");
    ASSERT_SYS(prctl(PR_SET_DUMPABLE, 1));
    char *fifo = make_fifo();
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"),
                          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } },
                          .flags = FL_SET_UID | FL_SET_GID, .uid = 65534, .gid = 65534 };
    launch(&cmd, l);
    return fifo;
}

/* Whoever runs as a child's new uid may read and write the memory it
 * shares with us as soon as that memory is dumpable again: a launch
 * finished meanwhile must not make it so while another thread's child,
 * which changed its uid too, is still before its exec. */
TEST(a_finished_launch_leaves_the_caller_undumpable_while_another_thread_s_child_runs_as_another_uid)
{
    struct fl_proc l;
    char *fifo = launch_held_as_nobody(&l);
    char *d = t_tmpdir();
    ASSERT_SYS(chmod(d, 0755));
    char *image = t_read_file("/bin/true");
    ASSERT(image != NULL);
    struct stat st;
    ASSERT_SYS(stat("/bin/true", &st));
    char *prog = t_fmt("%s/prog", d);
    int busy = open(prog, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
    ASSERT_SYS(busy);
    ASSERT_SYS(fchmod(busy, 0755));  /* whatever the umask: uid 65534 runs it */
    ASSERT_EQ(write(busy, image, (size_t)st.st_size), st.st_size);
    struct busy_spawn b = { .prog = prog };
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, spawn_busy_as_nobody, &b));
    for (int i = 0; i < 5000 && prctl(PR_GET_DUMPABLE) != 0; i++)
        usleep(200);
    ASSERT_EQ(prctl(PR_GET_DUMPABLE), 0);   /* the spawn's child runs as 65534 */
    int writer = open(fifo, O_RDWR | O_CLOEXEC);
    ASSERT_SYS(writer);
    ASSERT_OK(fl_launch_finish(&l, NULL));
    int dumpable = prctl(PR_GET_DUMPABLE);
    bool held = thread_s_child_before_exec(__atomic_load_n(&b.tid, __ATOMIC_SEQ_CST));
    close(busy);   /* the spawn's next try execs */
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_OK(b.result);
    if (dumpable == 1 && !held)
        SKIP("the spawn's child had given up before the look: too slow a machine to tell");
    ASSERT_EQ(dumpable, 0);
    ASSERT_EQ(prctl(PR_GET_DUMPABLE), 1);   /* every such child done */
    ASSERT_EXITED(t_wait(&l), 0);
    fl_close(&l);
    close(writer);
}

/* A fork() child inherits a pending launch that changes credentials; it
 * is not the fork child's to count: closing the handle there must not
 * upset the count its own spawns keep. */
TEST(a_fork_child_that_closes_an_inherited_launch_is_dumpable_after_its_own_spawns)
{
    struct fl_proc l;
    char *fifo = launch_held_as_nobody(&l);
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        fl_close(&l);
        struct fl_cmd own = { .argv = ARGV("/bin/true"), .flags = FL_SET_UID | FL_SET_GID,
                              .uid = 65534, .gid = 65534, .backend = FL_BACKEND_CLONE };
        for (int i = 0; i < 2; i++) {
            struct fl_proc p;
            int st;
            if (fl_spawn(&own, &p, NULL) != 0 || fl_wait(&p, -1, &st) != 0)
                _exit(2);
            fl_close(&p);
        }
        _exit(prctl(PR_GET_DUMPABLE) == 1 ? 0 : 1);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    int writer = open(fifo, O_RDWR | O_CLOEXEC);
    ASSERT_SYS(writer);
    ASSERT_OK(fl_launch_finish(&l, NULL));
    ASSERT_EXITED(t_wait(&l), 0);
    fl_close(&l);
    close(writer);
    ASSERT_EQ(prctl(PR_GET_DUMPABLE), 1);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL("the fork child: %s", WIFEXITED(st) && WEXITSTATUS(st) == 1
                                       ? "not dumpable after its own spawns"
                                       : "its spawns failed");
}

TEST(a_pipeline_reports_a_launched_stage_that_failed_before_a_later_refused_one)
{
    NEEDS_CLOSE_OTHERS();
    /* Stage 2's chdir fails in its child; stage 3's argument is too long
     * for the kernel, which the parent sees before it starts it. Each
     * stage waited for, stage 2 would be the one: so it must be here. */
    size_t big = 200 * 1024;
    char *arg = t_keep(malloc(big + 1));
    memset(arg, 'x', big);
    arg[big] = 0;
    struct fl_cmd st[3] = {
        { .argv = ARGV("/bin/true"), .backend = BACKEND },
        { .argv = ARGV("/bin/true"), .backend = BACKEND, .cwd = "/nonexistent/dir" },
        { .argv = ARGV("/bin/true", arg), .backend = BACKEND },
    };
    struct fl_pipeline pl;
    struct fl_error e;
    ASSERT_ERR(fl_pipeline_spawn(st, 3, &pl, &e), ENOENT);
    ASSERT_EQ(e.stage, 2);
    ASSERT(fl_t_step_is(&e, FL_STEP_CHDIR));
    ASSERT_NULL(pl.procs);
}

TEST(a_pipeline_whose_later_stage_is_refused_does_not_wait_on_a_stage_at_its_open)
{
    /* Stage 1 waits in its open() of a FIFO that nobody writes; stage 2's
     * stdout is an fd that is not open. The call reports stage 2 at once:
     * a stage whose setup opens a file is not waited for, it is killed. */
    NEEDS_CLOSE_OTHERS();
    char *fifo = make_fifo();
    int not_open;
    ASSERT_SYS(not_open = fcntl(0, F_DUPFD_CLOEXEC, 100));
    close(not_open);
    struct fl_cmd st[2] = {
        { .argv = ARGV("/bin/cat"), .backend = BACKEND,
          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } },
        { .argv = ARGV("/bin/echo"), .backend = BACKEND,
          .stdio = { [1] = { .kind = FL_FD, .fd = not_open } } },
    };
    int fd = -1;
    if (!launches())   /* a backend that waits would wait for a writer: be one */
        ASSERT_SYS(fd = open(fifo, O_RDWR | O_CLOEXEC));
    struct fl_pipeline pl;
    struct fl_error e;
    ASSERT_ERR(fl_pipeline_spawn(st, 2, &pl, &e), EBADF);
    ASSERT_EQ(e.stage, 2);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
    if (fd >= 0)
        close(fd);
}

struct late_writer {
    const char *fifo, *ready;
};

/* Opens the FIFO for writing once the file ready has a pid in it. */
static void *open_when_ready(void *arg)
{
    const struct late_writer *w = arg;
    for (int i = 0; i < 10000; i++) {
        char *s = access(w->ready, F_OK) == 0 ? t_read_file(w->ready) : NULL;
        if (s && strchr(s, '\n'))
            break;
        usleep(1000);
    }
    int fd = open(w->fifo, O_WRONLY | O_CLOEXEC);
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* 'R', 'S', ... of a pid's /proc stat; 0 once it is gone. */
static char process_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : 0;
}

TEST(a_pipeline_whose_leader_fails_late_kills_what_a_later_stage_started_in_the_group)
{
    /* The leader cannot exec, and learns it only once its stdin, a FIFO,
     * is opened: by then stage 2 has started a background process in the
     * group. The failed leader must not be reaped before the group is
     * killed, or nothing reaches that process. */
    if (!launches())
        SKIP("only the clone backend launches the stages side by side");
    char *d = t_tmpdir();
    char *fifo = t_fmt("%s/fifo", d), *ready = t_fmt("%s/bg", d);
    ASSERT_SYS(mkfifo(fifo, 0600));
    struct fl_cmd st[2] = {
        { .argv = ARGV("/nonexistent/prog"), .backend = BACKEND,
          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } },
        { .argv = ARGV(t_tool("sh"), "-c", "sleep 30 & echo $! >\"$0\"; exec sleep 31", ready),
          .env_set = TOOLS_PATH_ENV, .backend = BACKEND },
    };
    struct late_writer w = { fifo, ready };
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, open_when_ready, &w));
    struct fl_pipeline pl;
    struct fl_error e;
    ASSERT_ERR(fl_pipeline_spawn(st, 2, &pl, &e), ENOENT);
    ASSERT_EQ(e.stage, 1);
    ASSERT_OK(pthread_join(t, NULL));
    pid_t bg = (pid_t)atoi(t_read_file(ready));
    ASSERT_GT(bg, 0);
    /* Killed: a zombie until its new parent reaps it, or gone. */
    char state = process_state(bg);
    for (int i = 0; i < 2500 && state && state != 'Z'; i++) {
        usleep(2000);
        state = process_state(bg);
    }
    if (state && state != 'Z')
        kill(bg, SIGKILL);
    ASSERT(state == 0 || state == 'Z');
}

TEST(a_pipeline_stage_held_by_a_fifo_whose_writer_failed_first_is_not_waited_for)
{
    /* Stage 1 reads a FIFO that stage 2 was to open for writing; stage 2
     * fails its chdir before its open. Stage 1 would wait for ever: the
     * call reports stage 2 and kills stage 1. */
    NEEDS_CLOSE_OTHERS();
    if (!launches())
        SKIP("only the clone backend launches the stages side by side");
    char *fifo = make_fifo();
    struct fl_cmd st[2] = {
        { .argv = ARGV("/bin/cat"), .backend = BACKEND,
          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } },
        { .argv = ARGV("/bin/true"), .backend = BACKEND, .cwd = "/nonexistent-dir",
          .stdio = { [1] = { .kind = FL_FILE, .path = fifo, .flags = O_WRONLY } } },
    };
    struct fl_pipeline pl;
    struct fl_error e;
    ASSERT_ERR(fl_pipeline_spawn(st, 2, &pl, &e), ENOENT);
    ASSERT_EQ(e.stage, 2);
    ASSERT_EQ(e.step, FL_STEP_CHDIR);
}

TEST(a_pipeline_reports_the_first_failed_stage_even_one_that_opens_a_file)
{
    /* Stage 1 cannot open its stdin, stage 2 cannot exec, stage 3's name
     * is refused in the parent: stage 1 is the first to have failed. */
    NEEDS_CLOSE_OTHERS();
    char name[300];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = 0;
    struct fl_cmd st[3] = {
        { .argv = ARGV("/bin/cat"), .backend = BACKEND,
          .stdio = { [0] = { .kind = FL_FILE, .path = "/nonexistent/in" } } },
        { .argv = ARGV("/nonexistent/prog"), .backend = BACKEND },
        { .argv = ARGV(name), .backend = BACKEND },
    };
    struct fl_pipeline pl;
    struct fl_error e;
    ASSERT_ERR(fl_pipeline_spawn(st, 3, &pl, &e), ENOENT);
    ASSERT_EQ(e.stage, 1);
    if (BACKEND != FL_BACKEND_POSIX_SPAWN)
        ASSERT_EQ(e.step, FL_STEP_OPEN);
}

static pid_t test_pid;
static volatile sig_atomic_t handler_ran_elsewhere;

static void note_where(int sig)
{
    (void)sig;
    if (syscall(SYS_getpid) != test_pid)
        handler_ran_elsewhere = 1;
}

static volatile bool flooding;

static void *flood_group(void *arg)
{
    (void)arg;
    for (unsigned i = 0; __atomic_load_n(&flooding, __ATOMIC_RELAXED); i++) {
        kill(0, SIGURG);
        t_pace(i);
    }
    return NULL;
}

TEST(no_handler_runs_in_a_child_at_the_first_spawn_of_a_process)
{
    /* The first spawn of a process looks once whether CLONE_VM shares
     * memory, with a child of its own: a signal to the process group then
     * reaches that child too, and its handler must not run there, in our
     * memory. SIGURG: ignored by default, so nothing else dies of it. */
    ASSERT_SYS(setpgid(0, 0));
    test_pid = getpid();
    struct sigaction sa = { .sa_handler = note_where };
    ASSERT_SYS(sigaction(SIGURG, &sa, NULL));
    __atomic_store_n(&flooding, true, __ATOMIC_RELAXED);
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, flood_group, NULL));
    /* The default backend: the look is made for it, at its first use. */
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = FL_BACKEND_AUTO };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    __atomic_store_n(&flooding, false, __ATOMIC_RELAXED);
    ASSERT_OK(pthread_join(t, NULL));
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_EQ(handler_ran_elsewhere, 0);
}

/* The caller ignores sig (a background job of sh ignores SIGINT and
 * SIGQUIT, nohup SIGHUP). A signal sent to a launch before its exec must
 * act as it would on the program, which starts with it at SIG_DFL: the
 * child's copy of the SIG_IGN must not make the kernel throw it away. */
static void ignore(int sig)
{
    struct sigaction sa = { .sa_handler = SIG_IGN };
    ASSERT_SYS(sigaction(sig, &sa, NULL));
}

/* Waits up to 10 s for p, which a signal should have ended; if it still
 * runs, opens fifo (where it may be held) so that it can end, and fails. */
static int status_of_signalled(struct fl_proc *p, const char *fifo)
{
    int st = 0;
    int r = fl_wait(p, 10000, &st);
    if (r == ETIMEDOUT) {
        int fd = fifo ? open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC) : -1;
        fl_kill(p, SIGKILL);
        fl_wait(p, -1, &st);
        if (fd >= 0)
            close(fd);
        FAIL("the signal was lost: the launch still ran 10 s later");
    }
    ASSERT_OK(r);
    fl_close(p);
    return st;
}

/* A launch held in its open() of a FIFO gets SIGTERM, which its caller
 * ignores: it must end by it. */
static void term_ends_a_launch_held_in_its_setup(void)
{
    ignore(SIGTERM);
    char *fifo = make_fifo();
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"),
                          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } };
    struct fl_proc p;
    launch(&cmd, &p);
    ASSERT_OK(fl_kill(&p, SIGTERM));
    ASSERT_SIGNALED(status_of_signalled(&p, fifo), SIGTERM);
}

TEST(a_signal_the_caller_ignores_ends_a_launch_held_in_its_setup)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    term_ends_a_launch_held_in_its_setup();
}

TEST(a_signal_the_caller_ignores_sent_at_once_ends_a_launch)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    ignore(SIGINT);
    /* Sent as soon as fl_spawn() returns: the child may not have run yet,
     * or be anywhere in its setup. */
    for (int i = 0; i < 5; i++) {
        struct fl_cmd cmd = { .argv = PROBE("sleep", "30") };
        struct fl_proc p;
        launch(&cmd, &p);
        ASSERT_OK(fl_kill(&p, SIGINT));
        ASSERT_SIGNALED(status_of_signalled(&p, NULL), SIGINT);
    }
}

static char *pdeath_fifo;
static int pdeath_sig;
static struct fl_proc pdeath_proc;
static pid_t pdeath_thread;

static void *launch_and_end(void *arg)
{
    (void)arg;
    /* A group of its own, whose parent is in another of the session: a
     * stop sent to an orphaned group (the test's, under a setsid()) is
     * discarded. */
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .pdeathsig = pdeath_sig,
                          .flags = FL_NEW_PGROUP,
                          .stdio = { [0] = { .kind = FL_FILE, .path = pdeath_fifo } } };
    pdeath_thread = (pid_t)syscall(SYS_gettid);
    launch(&cmd, &pdeath_proc);
    return NULL;
}

/* Launches with .pdeathsig sig, which the caller ignores, from a thread
 * that ends while the child is held in its open() of a FIFO; then lets
 * the child go on: its pdeathsig step finds the thread gone. Returns the
 * FIFO's fd, to close once the child is done with. */
static int launch_from_a_thread_that_ends(int sig)
{
    ignore(sig);
    pdeath_sig = sig;
    pdeath_fifo = make_fifo();
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, launch_and_end, NULL));
    ASSERT_OK(pthread_join(t, NULL));
    /* The join may return before the kernel is done with the thread: the
     * child looks for it with tgkill(), which must fail first. */
    while (syscall(SYS_tgkill, getpid(), pdeath_thread, 0) == 0)
        usleep(1000);
    int fd;
    ASSERT_SYS(fd = open(pdeath_fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC));
    return fd;
}

TEST(a_pdeathsig_the_caller_ignores_ends_a_launch_whose_thread_ended_in_its_setup)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    int fd = launch_from_a_thread_that_ends(SIGTERM);
    ASSERT_SIGNALED(status_of_signalled(&pdeath_proc, NULL), SIGTERM);
    close(fd);
}

/* Not a signal that ends a process, which the child resets first thing:
 * a stop, reset with the others at the end of the setup. Sent before
 * that, while still ignored, it was lost, and the program ran. */
TEST(a_stop_pdeathsig_the_caller_ignores_stops_a_launch_whose_thread_ended)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    int fd = launch_from_a_thread_that_ends(SIGTSTP);
    siginfo_t si = { 0 };
    ASSERT_SYS(waitid(P_PID, (id_t)pdeath_proc.pid, &si, WSTOPPED | WEXITED | WNOWAIT));
    int code = si.si_code, sig = si.si_status;
    ASSERT_OK(fl_kill(&pdeath_proc, SIGKILL));
    ASSERT_SIGNALED(status_of_signalled(&pdeath_proc, NULL), SIGKILL);
    close(fd);
    ASSERT_EQ(code, CLD_STOPPED);
    ASSERT_EQ(sig, SIGTSTP);
}

/* SIGCHLD ignored: the kernel reaps a child as it ends. */
static void reaped_at_exit(void)
{
    struct sigaction sa = { .sa_handler = SIG_IGN };
    ASSERT_SYS(sigaction(SIGCHLD, &sa, NULL));
}

/* Launches a child that fails at its chdir, without a pidfd, and waits
 * until the kernel has reaped it (SIGCHLD ignored): no wait can see it. */
static void launch_failed_and_reaped(struct fl_proc *p)
{
    reaped_at_exit();
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .cwd = "/nonexistent/dir",
                          .flags = FL_NO_PIDFD };
    launch(&cmd, p);
    while (kill(p->pid, 0) == 0)
        usleep(1000);
}

TEST(a_timed_wait_without_a_pidfd_reports_a_launch_reaped_elsewhere)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    struct fl_proc p;
    launch_failed_and_reaped(&p);
    int st = 0x5a5a;
    ASSERT_ERR(fl_wait(&p, 1000, &st), ENOENT);
    ASSERT_EQ(st, 0x5a5a);
    ASSERT_ERR(fl_launch_finish(&p, NULL), ENOENT);
    fl_close(&p);
}

TEST(a_result_wait_without_a_pidfd_reports_a_launch_reaped_elsewhere)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    struct fl_proc p;
    launch_failed_and_reaped(&p);
    struct fl_result res;
    ASSERT_ERR(fl_wait_result(&p, -1, NULL, &res), ENOENT);
    fl_close(&p);
}

TEST(a_stop_without_a_pidfd_reports_a_launch_reaped_elsewhere)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    struct fl_proc p;
    launch_failed_and_reaped(&p);
    struct fl_result res;
    ASSERT_ERR(fl_stop(&p, NULL, &res), ENOENT);
    fl_close(&p);
}

static int count_open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

TEST(a_launch_without_a_pidfd_holds_no_fd_once_exec_d_under_landlock)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    if (fl_landlock_abi() == 0)
        SKIP("this kernel has no Landlock (or it is disabled): fl_landlock_abi() is 0");
    struct fl_landlock_path paths[] = { { "/", FL_LANDLOCK_READ | FL_LANDLOCK_EXEC } };
    /* no_new_privs: a caller without CAP_SYS_ADMIN may restrict its child
     * only with it. */
    struct fl_contain box = { .flags = FL_NO_NEW_PRIVS, .landlock = paths, .nlandlock = 1 };
    struct fl_cmd cmd = { .argv = PROBE("echo", "ready", "sleep", "30"), .flags = FL_NO_PIDFD,
                          .contain = &box, .stdio = { [1] = { .kind = FL_PIPE } } };
    int before = count_open_fds();
    struct fl_proc p;
    launch(&cmd, &p);
    /* Its line says it has exec'd; nothing has asked about the launch. The
     * ruleset was the child's to enforce: the caller holds its pipe end
     * and nothing else, as FL_NO_PIDFD promises. */
    char line[8] = { 0 };
    ASSERT_EQ(read(p.stdio[1], line, 6), 6);
    ASSERT_STR_EQ(line, "ready\n");
    ASSERT_EQ(count_open_fds(), before + 1);
    ASSERT_OK(fl_kill(&p, SIGKILL));
    ASSERT_SIGNALED(t_wait(&p), SIGKILL);
}

TEST(a_launch_explains_a_relative_script_from_the_cwd_it_was_launched_in)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    char *dir = t_tmpdir();
    t_write_file(dir, "script", "#!/nonexistent/interp\n", 0755);
    ASSERT_SYS(chdir(dir));
    struct fl_cmd cmd = { .argv = ARGV("./script") };
    struct fl_proc p;
    launch(&cmd, &p);
    /* The caller moves before it asks: the explanation must read the
     * script the child tried, not "./script" of the new cwd. */
    ASSERT_SYS(chdir("/"));
    struct fl_error e;
    ASSERT_ERR(fl_launch_finish(&p, &e), ENOENT);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, "interpreter \"/nonexistent/interp\" not found");
    fl_close(&p);
}

TEST(a_launch_explains_a_script_under_a_relative_cwd_from_where_it_was_launched)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    char *dir = t_tmpdir();
    ASSERT_SYS(mkdir(t_fmt("%s/sub", dir), 0755));
    t_write_file(t_fmt("%s/sub", dir), "script", "#!/nonexistent/interp\n", 0755);
    ASSERT_SYS(chdir(dir));
    struct fl_cmd cmd = { .argv = ARGV("./script"), .cwd = "sub" };
    struct fl_proc p;
    launch(&cmd, &p);
    ASSERT_SYS(chdir("/"));
    struct fl_error e;
    ASSERT_ERR(fl_launch_finish(&p, &e), ENOENT);
    ASSERT_STR_EQ(e.detail, "interpreter \"/nonexistent/interp\" not found");
    fl_close(&p);
}

TEST(a_launch_from_a_removed_cwd_leaves_a_relative_failure_unexplained)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    char *gone = t_fmt("%s/gone", t_tmpdir()), *other = t_tmpdir();
    t_write_file(other, "script", "#!/nonexistent/interp\n", 0755);
    ASSERT_SYS(mkdir(gone, 0755));
    ASSERT_SYS(chdir(gone));
    ASSERT_SYS(rmdir(gone));   /* getcwd() cannot name the cwd now */
    struct fl_cmd cmd = { .argv = ARGV("./script") };
    struct fl_proc p;
    launch(&cmd, &p);
    /* The child found no ./script; another dir's ./script must not be
     * read as if it were the one that failed. */
    ASSERT_SYS(chdir(other));
    struct fl_error e;
    ASSERT_ERR(fl_launch_finish(&p, &e), ENOENT);
    ASSERT_STR_EQ(e.detail, "");
    fl_close(&p);
}

TEST(a_signal_the_caller_ignores_ends_a_launch_held_in_its_setup_where_clone3_is_denied)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    t_deny_clone3();
    term_ends_a_launch_held_in_its_setup();
}

TEST(a_signal_sigignore_names_does_not_end_a_launch_in_its_setup)
{
    if (!launches())
        SKIP("only the clone backend returns before the exec");
    /* As nohup: the program ignores SIGHUP, and so must its setup. */
    sigset_t hup;
    sigemptyset(&hup);
    sigaddset(&hup, SIGHUP);
    char *fifo = make_fifo();
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .sigignore = &hup,
                          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } };
    struct fl_proc p;
    launch(&cmd, &p);
    ASSERT_OK(fl_kill(&p, SIGHUP));
    usleep(100 * 1000);
    int fd;
    ASSERT_SYS(fd = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC));
    ASSERT_EXITED(t_wait(&p), 0);
    close(fd);
}
