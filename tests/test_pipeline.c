/*
 * test_pipeline: a | b | c. Data flows from stage to stage through the
 * pipes alone, the stages share one new process group, each has its own
 * result, a stage that cannot start takes the started ones with it, and a
 * stop reaches them all.
 *
 * Every case starts with NEEDS_CLOSE_OTHERS(): each stage is started with
 * the default close-others, which musl's posix_spawn cannot do.
 */
#include "test.h"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define NSTAGES(a) (sizeof(a) / sizeof((a)[0]))

/* A stage running the probe with the words given. */
#define STAGE(...) { .argv = PROBE(__VA_ARGS__), .backend = BACKEND }

static void spawn_ok(const struct fl_cmd *stages, size_t n, struct fl_pipeline *pl)
{
    struct fl_error e;
    int r = fl_pipeline_spawn(stages, n, pl, &e);
    if (r) {
        char buf[1400];
        FAIL("fl_pipeline_spawn: %s", fl_error_format(&e, buf, sizeof buf));
    }
    ASSERT_EQ(pl->n, n);
    ASSERT_EQ(pl->pgid, pl->procs[0].pid);
}

static void wait_ok(struct fl_pipeline *pl, struct fl_result *results)
{
    ASSERT_OK(fl_pipeline_wait(pl, -1, NULL, results));
    fl_pipeline_close(pl);
}

/* Starts the stages and waits for them all. */
static void run_ok(const struct fl_cmd *stages, size_t n, struct fl_result *results)
{
    struct fl_pipeline pl;
    spawn_ok(stages, n, &pl);
    wait_ok(&pl, results);
}

/* fl_pipeline_spawn() must refuse, start nothing and leave pl empty. */
static struct fl_error spawn_fails(const struct fl_cmd *stages, size_t n, int err)
{
    struct fl_pipeline pl = { .n = 99 };
    struct fl_error e;
    ASSERT_ERR(fl_pipeline_spawn(stages, n, &pl, &e), err);
    ASSERT_EQ(e.err, err);
    ASSERT_EQ(pl.n, 0);
    ASSERT_NULL(pl.procs);
    return e;
}

/* ---- errno ---------------------------------------------------------------- */

TEST(pipeline_spawn_leaves_errno_as_it_was)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("echo", "x"), STAGE("cat") };
    struct fl_pipeline pl;
    errno = 1234;
    int err = fl_pipeline_spawn(stages, 2, &pl, NULL);
    int saw = errno;
    ASSERT_OK(err);
    struct fl_result res[2];
    wait_ok(&pl, res);
    ASSERT_EQ(saw, 1234);
}

/* Stage 1 is refused in the parent (its PATH has no entry to search);
 * stage 0, launched before it, failed at its stdin, a missing file, and is
 * the one reported: looking at what may keep a stage waiting (stat() of
 * that file) fails on the way. errno is as the caller left it. */
TEST(a_failed_pipeline_spawn_leaves_errno_as_it_was)
{
    NEEDS_CLOSE_OTHERS();
    static const char *const empty_path[] = { "PATH=", NULL };
    struct fl_cmd stages[] = {
        { .argv = PROBE("cat"),
          .stdio = { [0] = { .kind = FL_FILE, .path = "/nonexistent-dir/in" } },
          .backend = BACKEND },
        { .argv = ARGV("no-such-program"), .env_set = empty_path, .backend = BACKEND },
    };
    struct fl_pipeline pl;
    struct fl_error e;
    errno = 1234;
    int err = fl_pipeline_spawn(stages, 2, &pl, &e);
    int saw = errno;
    ASSERT_ERR(err, ENOENT);
    ASSERT_EQ(e.stage, 1);
    ASSERT_EQ(pl.n, 0);
    ASSERT_EQ(saw, 1234);
}

/* A handler interrupts the wait in its poll() (EINTR, retried): errno is
 * as the caller left it all the same. */
TEST(pipeline_wait_leaves_errno_as_it_was_when_a_handler_interrupts_it)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("sleep", "100"), STAGE("sleep", "100") };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    struct t_interrupt *it = t_interrupt_start(t_poll_nrs, t_npoll_nrs, -pl.pgid);
    struct fl_result res[2];
    errno = 1234;
    int err = fl_pipeline_wait(&pl, -1, NULL, res);
    int saw = errno;
    t_interrupt_end(it);
    ASSERT_OK(err);
    ASSERT_EQ(res[0].signal, SIGKILL);
    ASSERT_EQ(res[1].signal, SIGKILL);
    ASSERT_EQ(saw, 1234);
    fl_pipeline_close(&pl);
}

/* ---- data and groups ----------------------------------------------------- */

TEST(a_timed_pipeline_wait_works_with_rlimit_nofile_below_its_stages)
{
    NEEDS_CLOSE_OTHERS();
    /* A pidfd a stage, all open already: a limit lowered below their
     * count must not make the wait fail (poll()'s EINVAL). */
    struct fl_cmd stages[] = { STAGE("exit", "0"), STAGE("exit", "0"), STAGE("exit", "0") };
    struct fl_pipeline pl;
    spawn_ok(stages, 3, &pl);
    struct rlimit old, low;
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &old));
    low = (struct rlimit){ 1, old.rlim_max };
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &low));
    struct fl_result res[3];
    int err = fl_pipeline_wait(&pl, 60000, NULL, res);
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &old));
    ASSERT_ERR(err, 0);
    fl_pipeline_close(&pl);
    for (int k = 0; k < 3; k++)
        ASSERT_EXITED(res[k].status, 0);
}

TEST(data_flows_from_stage_to_stage)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        STAGE("echo", "through three stages"),
        STAGE("cat"),
        { .argv = PROBE("cat"), .stdio = { [1] = { .kind = FL_PIPE } }, .backend = BACKEND },
    };
    struct fl_pipeline pl;
    spawn_ok(stages, 3, &pl);
    ASSERT_STR_EQ(t_read_all_within(pl.procs[2].stdio[1], 30000), "through three stages\n");
    struct fl_result res[3];
    wait_ok(&pl, res);
    ASSERT_EQ(fl_pipefail(res, 3), -1);
}

TEST(the_first_stage_stdin_pipe_feeds_the_pipeline_and_its_eof_ends_it)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        { .argv = PROBE("cat"), .stdio = { [0] = { .kind = FL_PIPE } }, .backend = BACKEND },
        STAGE("cat"),
        { .argv = PROBE("cat"), .stdio = { [1] = { .kind = FL_PIPE } }, .backend = BACKEND },
    };
    struct fl_pipeline pl;
    spawn_ok(stages, 3, &pl);
    t_write_all(pl.procs[0].stdio[0], "abc\n", 4);
    close(pl.procs[0].stdio[0]);
    pl.procs[0].stdio[0] = -1;
    /* EOF reaches the last stage only if the caller holds no copy of the
     * pipes between the stages. */
    ASSERT_STR_EQ(t_read_all_within(pl.procs[2].stdio[1], 30000), "abc\n");
    struct fl_result res[3];
    wait_ok(&pl, res);
    ASSERT_EQ(fl_pipefail(res, 3), -1);
}

TEST(every_stage_is_in_one_new_process_group_led_by_the_first)
{
    NEEDS_CLOSE_OTHERS();
    char *dir = t_tmpdir();
    char *out[3];
    for (int k = 0; k < 3; k++)
        out[k] = t_fmt("%s/stage%d", dir, k);
    struct fl_cmd stages[] = {
        STAGE("--out", out[0], "proc"),
        STAGE("--out", out[1], "proc"),
        STAGE("--out", out[2], "proc"),
    };
    struct fl_pipeline pl;
    spawn_ok(stages, 3, &pl);
    pid_t pgid = pl.pgid;
    struct fl_result res[3];
    wait_ok(&pl, res);
    ASSERT_NE(pgid, getpgrp());
    for (int k = 0; k < 3; k++)
        ASSERT_EQ(t_get_num(t_read_file(out[k]), "pgid"), pgid);
    ASSERT_EQ(t_get_num(t_read_file(out[0]), "pid"), pgid);
}

TEST(a_stage_asking_for_a_process_group_of_its_own_is_einval)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        STAGE("exit", "0"),
        { .argv = PROBE("exit", "0"), .flags = FL_NEW_PGROUP, .backend = BACKEND },
    };
    struct fl_error e = spawn_fails(stages, 2, EINVAL);
    ASSERT_EQ(e.stage, 2);
    ASSERT_STR_CONTAINS(e.detail, "FL_NEW_PGROUP");
}

TEST(a_stage_on_a_terminal_of_its_own_is_einval_in_a_pipeline_of_two)
{
    /* FL_PTY starts a session: stage 0 would lead a group in it that the
     * others may not join (EPERM), a later stage would leave the group. */
    NEEDS_CLOSE_OTHERS();
    for (int k = 0; k < 2; k++) {
        struct fl_cmd stages[] = { STAGE("exit", "0"), STAGE("exit", "0") };
        stages[k].stdio[2].kind = FL_PTY;
        struct fl_error e = spawn_fails(stages, 2, EINVAL);
        ASSERT_EQ(e.stage, k + 1);
        ASSERT_STR_CONTAINS(e.detail, "FL_PTY");
    }
}

TEST(a_later_stage_in_a_pid_namespace_of_its_own_is_einval)
{
    /* It could not see stage 0, whose group it joins (setpgid() EPERM
     * from inside): refused before anything starts, naming the stage. */
    NEEDS_CLOSE_OTHERS();
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SKIP("the posix_spawn backend makes no namespace (ENOTSUP first)");
    struct fl_contain own_pids = { .unshare = FL_NS_PID };
    for (int k = 1; k < 3; k++) {
        struct fl_cmd stages[] = { STAGE("exit", "0"), STAGE("exit", "0"), STAGE("exit", "0") };
        stages[k].contain = &own_pids;
        struct fl_error e = spawn_fails(stages, 3, EINVAL);
        ASSERT_EQ(e.stage, k + 1);
        ASSERT_STR_CONTAINS(e.detail, "FL_NS_PID");
    }
}

/* An FL_PTY stream that an fd map overrides opens no terminal and makes
 * no session: the stage runs in the pipeline's group, as the map says. */
TEST(a_later_stage_with_a_mapped_over_pty_runs_in_the_group)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        STAGE("exit", "0"),
        { .argv = PROBE("exit", "0"), .stdio = { [2] = { .kind = FL_PTY } },
          .fds = (struct fl_fd_map[]){ { .child_fd = 2, .parent_fd = 2 } }, .nfds = 1,
          .backend = BACKEND },
    };
    struct fl_result res[2];
    run_ok(stages, 2, res);
    ASSERT_EQ(res[1].exit_code, 0);
}

TEST(a_pipeline_of_one_stage_may_have_a_terminal)
{
    NEEDS_CLOSE_OTHERS();
    NEEDS_PTY();
    struct fl_cmd stages[] = { STAGE("exit", "0") };
    stages[0].stdio[0].kind = FL_PTY;
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        return (void)spawn_fails(stages, 1, ENOTSUP);
    struct fl_result res[1];
    run_ok(stages, 1, res);
    ASSERT_EQ(res[0].exit_code, 0);
}

/* ---- results ------------------------------------------------------------- */

TEST(each_stage_has_its_own_result)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("exit", "3"), STAGE("exit", "4"), STAGE("kill-self", "15") };
    struct fl_result res[3];
    run_ok(stages, 3, res);
    ASSERT_EQ(res[0].exit_code, 3);
    ASSERT_EQ(res[1].exit_code, 4);
    ASSERT_SIGNALED(res[2].status, SIGTERM);
    for (int k = 0; k < 3; k++) {
        ASSERT(!res[k].timed_out && !res[k].killed && res[k].stop_signal == 0);
        ASSERT_GT(res[k].elapsed_ns, 0);
    }
}

TEST(pipefail_names_the_rightmost_stage_that_failed)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("exit", "3"), STAGE("exit", "4"), STAGE("exit", "0") };
    struct fl_result res[3];
    run_ok(stages, 3, res);
    ASSERT_EQ(fl_pipefail(res, 3), 1);
    /* What a shell without pipefail reports: the last stage's status. */
    ASSERT_EXITED(res[2].status, 0);
}

TEST(pipefail_is_minus_one_when_every_stage_exits_0)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_result res[2] = { { .status = 0 }, { .status = 0 } };
    ASSERT_EQ(fl_pipefail(res, 2), -1);
    ASSERT_EQ(fl_pipefail(res, 0), -1);
    res[0].status = 1 << 8;
    ASSERT_EQ(fl_pipefail(res, 2), 0);
}

/* A stage whose status was taken elsewhere is filled with exit_code -1
 * and status 0: nothing shows that it exited with 0. */
TEST(pipefail_counts_a_stage_whose_status_was_lost_as_failed)
{
    struct fl_result res[2] = { { .exit_code = -1 }, { .status = 0 } };
    ASSERT_EQ(fl_pipefail(res, 2), 0);
}

TEST(an_upstream_stage_that_loses_its_reader_is_killed_by_sigpipe)
{
    NEEDS_CLOSE_OTHERS();
    /* yes | head -1 */
    struct fl_cmd stages[] = {
        STAGE("yes", "y"),
        { .argv = PROBE("head", "1"), .stdio = { [1] = { .kind = FL_PIPE } }, .backend = BACKEND },
    };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    ASSERT_STR_EQ(t_read_all_within(pl.procs[1].stdio[1], 30000), "y\n");
    struct fl_result res[2];
    wait_ok(&pl, res);
    ASSERT_SIGNALED(res[0].status, SIGPIPE);
    ASSERT_EXITED(res[1].status, 0);
    /* As bash's pipefail counts it. */
    ASSERT_EQ(fl_pipefail(res, 2), 0);
}

TEST(run_without_io_waits_for_every_stage)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("echo", "x"), STAGE("cat"), STAGE("exit", "5") };
    struct fl_result res[3];
    struct fl_error e;
    ASSERT_OK(fl_pipeline_run(stages, 3, NULL, res, &e));
    ASSERT_EQ(res[2].exit_code, 5);
    ASSERT_EQ(fl_pipefail(res, 3), 2);
}

/* ---- a stage that cannot start ------------------------------------------ */

TEST(a_middle_stage_that_cannot_be_found_fails_the_spawn_as_stage_2)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        STAGE("sleep", "100"),
        { .argv = ARGV("/nonexistent/fl-no-such-program"), .backend = BACKEND },
        STAGE("cat"),
    };
    struct fl_error e = spawn_fails(stages, 3, ENOENT);
    ASSERT_EQ(e.stage, 2);
    ASSERT(fl_t_step_is(&e, FL_STEP_EXEC));
    char buf[1400];
    ASSERT_STR_CONTAINS(fl_error_format(&e, buf, sizeof buf), "stage 2: ");
    /* The sleeping first stage is gone too: the runner finds no child and
     * no fd left. */
}

/* Judged before the pipeline opens its pipes: by the first stage's spawn,
 * that number is the pipe into the next, and the stage would read from
 * what it writes. */
TEST(a_first_stage_reading_a_dev_fd_the_caller_has_not_open_is_enoent)
{
    NEEDS_CLOSE_OTHERS();
    int lowest = 3;
    while (t_fd_open(lowest))
        lowest++;
    struct fl_cmd stages[] = {
        { .argv = PROBE("cat"), .stdio = { [0] = { .kind = FL_FILE, .path = t_fmt("/dev/fd/%d", lowest) } },
          .backend = BACKEND },
        STAGE("cat"),
    };
    struct fl_error e = spawn_fails(stages, 2, ENOENT);
    ASSERT_EQ(e.stage, 1);
    ASSERT_EQ(e.step, FL_STEP_OPEN);
    ASSERT_EQ(e.index, 0);
}

TEST(a_middle_stage_whose_stdin_is_not_inherited_is_einval)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        STAGE("echo", "x"),
        { .argv = PROBE("cat"), .stdio = { [0] = { .kind = FL_NULL } }, .backend = BACKEND },
        STAGE("cat"),
    };
    struct fl_error e = spawn_fails(stages, 3, EINVAL);
    ASSERT_EQ(e.stage, 2);
    ASSERT_STR_CONTAINS(e.detail, "stdin");
}

TEST(a_map_onto_the_stdout_of_a_stage_that_is_not_last_is_einval)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_fd_map map = { .child_fd = 1, .parent_fd = 2 };
    struct fl_cmd stages[] = {
        { .argv = PROBE("echo", "x"), .fds = &map, .nfds = 1, .backend = BACKEND },
        STAGE("cat"),
    };
    struct fl_error e = spawn_fails(stages, 2, EINVAL);
    ASSERT_EQ(e.stage, 1);
    ASSERT_STR_CONTAINS(e.detail, "child fd 1");
}

TEST(an_empty_pipeline_is_einval)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd one[] = { STAGE("exit", "0") };
    struct fl_error e = spawn_fails(one, 0, EINVAL);
    ASSERT_EQ(e.stage, 0);
    e = spawn_fails(NULL, 1, EINVAL);
    ASSERT_EQ(e.stage, 0);
}

/* ---- stderr -------------------------------------------------------------- */

TEST(a_stage_with_stderr_pipe_keeps_its_own_stderr)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        { .argv = PROBE("stderr", "first", "echo", "data"),
          .stdio = { [2] = { .kind = FL_PIPE } }, .backend = BACKEND },
        { .argv = PROBE("stderr", "second", "cat"),
          .stdio = { [1] = { .kind = FL_PIPE }, [2] = { .kind = FL_PIPE } },
          .backend = BACKEND },
    };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    ASSERT_STR_EQ(t_read_all_within(pl.procs[1].stdio[1], 30000), "data\n");
    ASSERT_STR_EQ(t_read_all_within(pl.procs[1].stdio[2], 30000), "second\n");
    ASSERT_STR_EQ(t_read_all_within(pl.procs[0].stdio[2], 30000), "first\n");
    struct fl_result res[2];
    wait_ok(&pl, res);
}

/* ---- deadlines and stops ------------------------------------------------- */

TEST(wait_without_a_policy_times_out_and_leaves_every_stage)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("sleep", "100"), STAGE("sleep", "100") };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    struct fl_result res[2] = { { .exit_code = 42 }, { .exit_code = 42 } };
    ASSERT_ERR(fl_pipeline_wait(&pl, 20, NULL, res), ETIMEDOUT);
    ASSERT_EQ(res[0].exit_code, 42);  /* untouched */
    ASSERT_OK(fl_kill(&pl.procs[0], 0));
    ASSERT_OK(fl_kill(&pl.procs[1], 0));
    ASSERT_OK(fl_killpg(&pl.procs[0], SIGKILL));
    wait_ok(&pl, res);
    ASSERT_SIGNALED(res[0].status, SIGKILL);
    ASSERT_SIGNALED(res[1].status, SIGKILL);
}

/* A stop policy changes nothing when the leader's status was taken
 * elsewhere: ECHILD, and every other stage is reaped into its result. */
TEST(a_wait_with_a_policy_reaps_the_rest_when_the_leader_was_reaped_elsewhere)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("exit", "9"), STAGE("exit", "0") };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    int st;
    ASSERT_EQ(waitpid(pl.procs[0].pid, &st, 0), pl.procs[0].pid);
    struct fl_result res[2];
    ASSERT_ERR(fl_pipeline_wait(&pl, 10000, &(struct fl_stop_policy){ 0 }, res), ECHILD);
    ASSERT_EQ(res[0].exit_code, -1);
    ASSERT_EXITED(res[1].status, 0);
    ASSERT_EQ(fl_pipefail(res, 2), 0);
    fl_pipeline_close(&pl);
}

static void *reap_elsewhere(void *pid)
{
    waitpid(*(pid_t *)pid, NULL, 0);
    return NULL;
}

/* A stage with no pidfd, and none to borrow (no fd left), is looked at by
 * its pid: its status taken elsewhere during the wait is ECHILD, not a
 * stage that never ends. The thief sleeps in waitpid() while the wait
 * looks from time to time: on a busy machine a look may come first, and
 * then the wait has the status itself. */
TEST(a_wait_that_cannot_watch_a_stage_sees_its_status_taken_elsewhere)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        { .argv = PROBE("exit", "0"), .flags = FL_NO_PIDFD, .backend = BACKEND },
        { .argv = PROBE("sleep", "0.2"), .flags = FL_NO_PIDFD, .backend = BACKEND },
    };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    pid_t victim = pl.procs[1].pid;
    pthread_t thief;
    ASSERT_EQ(pthread_create(&thief, NULL, reap_elsewhere, &victim), 0);
    struct rlimit was;
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &was));
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &(struct rlimit){ 64, was.rlim_max }));
    int taken[64], ntaken = 0;
    for (int fd; ntaken < 64 && (fd = dup(0)) >= 0;)
        taken[ntaken++] = fd;
    struct fl_result res[2];
    int r = fl_pipeline_wait(&pl, 10000, NULL, res);
    while (ntaken)
        close(taken[--ntaken]);
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &was));
    pthread_join(thief, NULL);
    ASSERT_EXITED(res[0].status, 0);
    if (r == 0) {
        ASSERT_EXITED(res[1].status, 0);
    } else {
        ASSERT_ERR(r, ECHILD);
        ASSERT_EQ(res[1].exit_code, -1);
    }
    fl_pipeline_close(&pl);
}

TEST(a_deadline_stops_every_stage)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("sleep", "100"), STAGE("sleep", "100"), STAGE("sleep", "100") };
    struct fl_pipeline pl;
    spawn_ok(stages, 3, &pl);
    struct fl_result res[3];
    ASSERT_OK(fl_pipeline_wait(&pl, 20, &(struct fl_stop_policy){ 0 }, res));
    fl_pipeline_close(&pl);
    for (int k = 0; k < 3; k++) {
        ASSERT(res[k].timed_out);
        ASSERT_EQ(res[k].stop_signal, SIGTERM);
        ASSERT_SIGNALED(res[k].status, SIGTERM);
        ASSERT(!res[k].killed);
    }
}

TEST(a_deadline_stops_stages_that_have_no_pidfd)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        { .argv = PROBE("sleep", "100"), .flags = FL_NO_PIDFD, .backend = BACKEND },
        { .argv = PROBE("sleep", "100"), .flags = FL_NO_PIDFD, .backend = BACKEND },
    };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    ASSERT_EQ(pl.procs[0].pidfd, -1);
    struct fl_result res[2];
    /* The pidfds borrowed for the wait are closed: the runner sees no fd
     * left. */
    ASSERT_OK(fl_pipeline_wait(&pl, 20, &(struct fl_stop_policy){ 0 }, res));
    fl_pipeline_close(&pl);
    ASSERT_SIGNALED(res[0].status, SIGTERM);
    ASSERT_SIGNALED(res[1].status, SIGTERM);
}

TEST(a_deadline_stops_the_stages_still_running_after_the_leader_ended)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("exit", "0"), STAGE("sleep", "100") };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    /* The leader is a zombie, unreaped: its group is still there. */
    siginfo_t si;
    ASSERT_SYS(waitid(P_PID, (id_t)pl.procs[0].pid, &si, WEXITED | WNOWAIT));
    struct fl_result res[2];
    ASSERT_OK(fl_pipeline_wait(&pl, 20, &(struct fl_stop_policy){ 0 }, res));
    fl_pipeline_close(&pl);
    ASSERT_EXITED(res[0].status, 0);
    ASSERT_SIGNALED(res[1].status, SIGTERM);
    ASSERT(res[0].timed_out && res[1].timed_out);
}

TEST(the_stop_reaches_a_process_that_a_stage_started)
{
    NEEDS_CLOSE_OTHERS();
    if (access("/bin/sh", X_OK) != 0)
        SKIP("no /bin/sh");
    struct fl_cmd stages[] = {
        STAGE("sleep", "100"),
        { .argv = ARGV("/bin/sh", "-c", "sleep 100 </dev/null >/dev/null 2>&1 & echo $!; wait"),
          .env_set = TOOLS_PATH_ENV, .stdio = { [1] = { .kind = FL_PIPE } },
          .backend = BACKEND },
    };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    char line[32] = { 0 };
    for (size_t n = 0; n < sizeof line - 1; n++)
        if (read(pl.procs[1].stdio[1], &line[n], 1) != 1 || line[n] == '\n')
            break;
    pid_t member = (pid_t)atoi(line);
    ASSERT_GT(member, 0);
    ASSERT(t_running(member));
    struct fl_result res[2];
    ASSERT_OK(fl_pipeline_wait(&pl, 20, &(struct fl_stop_policy){ .grace_ms = 10000 }, res));
    fl_pipeline_close(&pl);
    ASSERT(res[1].timed_out);
    ASSERT_SIGNALED(res[1].status, SIGTERM);
    /* The wait goes on until nothing of the group runs, for the grace at
     * most, and only then sends SIGKILL: none was needed, so the
     * background sleep, a member of the group, took the SIGTERM. */
    ASSERT(!res[0].killed && !res[1].killed);
    ASSERT(!t_running(member));
}

/* The leader moves to its parent's group after the start: the group it
 * made keeps its id, the leader's pid, which stays reserved while the
 * leader is unreaped, and the deadline's stop still reaches it. */
TEST(a_deadline_stops_the_group_its_leader_left)
{
    NEEDS_CLOSE_OTHERS();
    if (access("/bin/sh", X_OK) != 0)
        SKIP("no /bin/sh");
    /* The leader leaves once its stdin ends: after the later stage has
     * joined its group. */
    struct fl_cmd stages[] = {
        { .argv = PROBE("cat", "join-parent-group", "sleep", "100"),
          .stdio = { [0] = { .kind = FL_PIPE } }, .backend = BACKEND },
        { .argv = ARGV("/bin/sh", "-c", "sleep 100 </dev/null >/dev/null 2>&1 & echo $!; wait"),
          .env_set = TOOLS_PATH_ENV, .stdio = { [1] = { .kind = FL_PIPE } },
          .backend = BACKEND },
    };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    char *out = t_read_until(pl.procs[1].stdio[1], "\n");
    pid_t member = (pid_t)atoi(out);
    ASSERT_GT(member, 0);
    pid_t leader = pl.procs[0].pid;
    close(pl.procs[0].stdio[0]);
    pl.procs[0].stdio[0] = -1;
    for (int i = 0; i < 2000 && getpgid(leader) == leader; i++)
        usleep(5000);
    ASSERT_EQ(getpgid(leader), getpgid(0));
    struct fl_result res[2];
    ASSERT_OK(fl_pipeline_wait(&pl, 20, &(struct fl_stop_policy){ .grace_ms = 10000 }, res));
    fl_pipeline_close(&pl);
    ASSERT_SIGNALED(res[0].status, SIGTERM);
    ASSERT_SIGNALED(res[1].status, SIGTERM);
    ASSERT(res[0].timed_out && res[1].timed_out);
    ASSERT(!t_running(member));
}

/* ---- closing ------------------------------------------------------------- */

TEST(close_twice_is_safe_and_so_is_a_zero_pipeline)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("exit", "0"), STAGE("exit", "0") };
    struct fl_pipeline pl;
    spawn_ok(stages, 2, &pl);
    struct fl_result res[2];
    ASSERT_OK(fl_pipeline_wait(&pl, -1, NULL, res));
    fl_pipeline_close(&pl);
    ASSERT_EQ(pl.n, 0);
    ASSERT_NULL(pl.procs);
    fl_pipeline_close(&pl);
    struct fl_pipeline zero = { 0 };
    fl_pipeline_close(&zero);
    fl_pipeline_close(NULL);
    ASSERT_ERR(fl_pipeline_wait(&pl, -1, NULL, res), EINVAL);
}
