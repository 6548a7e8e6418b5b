/*
 * test_run.c: fl_run(): a command started, fed, drained, waited for and
 * closed in one call; spawn failures; fl_result_free(); many threads.
 * Every case starts with NEEDS_CLOSE_OTHERS(): fl_run() spawns with the
 * default close-others, which musl's posix_spawn cannot do.
 */
#include "test.h"
#include "pattern.h"

#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>

TEST(run_without_io_waits_and_reports_the_exit)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("exit", "3"), .backend = BACKEND };
    struct fl_result r;
    struct fl_error e;
    ASSERT_OK(fl_run(&cmd, NULL, &r, &e));
    ASSERT_EXITED(r.status, 3);
    ASSERT_EQ(r.exit_code, 3);
    ASSERT_EQ(r.signal, 0);
    ASSERT_NULL(r.out[0].data);
    ASSERT_NULL(r.out[1].data);
    ASSERT_GT(r.elapsed_ns, 0);
    fl_result_free(&r);
}

TEST(run_with_capture_collects_stdout_and_stderr)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("echo", "out", "stderr", "err"), .backend = BACKEND };
    struct fl_io io = { .out = { { .capture = true }, { .capture = true } } };
    struct fl_result r;
    ASSERT_OK(fl_run(&cmd, &io, &r, NULL));
    ASSERT_EXITED(r.status, 0);
    ASSERT_STR_EQ(r.out[0].data, "out\n");
    ASSERT_STR_EQ(r.out[1].data, "err\n");
    ASSERT(r.out[0].owned_);
    fl_result_free(&r);
}

TEST(run_takes_a_stream_that_is_already_a_pipe)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("echo", "piped"),
                          .stdio = { [1] = { .kind = FL_PIPE } }, .backend = BACKEND };
    struct fl_result r;
    ASSERT_OK(fl_run(&cmd, &(struct fl_io){ 0 }, &r, NULL));
    ASSERT_STR_EQ(r.out[0].data, "piped\n");
    fl_result_free(&r);
}

TEST(run_with_input_feeds_stdin)
{
    NEEDS_CLOSE_OTHERS();
    static const char text[] = "hello, child";
    struct fl_cmd cmd = { .argv = PROBE("drain"), .backend = BACKEND };
    struct fl_io io = { .input = text, .input_len = strlen(text), .out[0].capture = true };
    struct fl_result r;
    ASSERT_OK(fl_run(&cmd, &io, &r, NULL));
    ASSERT_EQ(t_get_num(r.out[0].data, "drained"), (long long)strlen(text));
    uint64_t sum = fl_fnv1a(FL_FNV1A_INIT, (const unsigned char *)text, strlen(text));
    ASSERT_STR_EQ(t_get(r.out[0].data, "sum"), t_fmt("%016llx", (unsigned long long)sum));
    ASSERT_EQ(r.input_written, strlen(text));
    fl_result_free(&r);
}

TEST(run_with_a_deadline_and_no_pipes_stops_the_child)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("sleep", "30"), .backend = BACKEND };
    struct fl_io io = { .timeout_ms = 200 };
    struct fl_result r;
    ASSERT_OK(fl_run(&cmd, &io, &r, NULL));
    ASSERT(r.timed_out);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT_SIGNALED(r.status, SIGTERM);
    fl_result_free(&r);
}

/* The deadline is the whole job's: a group stop is due at it even where
 * the leader has ended first and the rest of its group, holding the
 * pipe, runs on. */
TEST(run_with_a_group_deadline_stops_the_group_the_ended_leader_left)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = ARGV("/bin/sh", "-c", "sleep 30 & echo $!"),
                          .env_set = TOOLS_PATH_ENV, .flags = FL_NEW_PGROUP, .backend = BACKEND };
    struct fl_io io = { .out[0].capture = true, .timeout_ms = 300, .eof_wait_ms = -1,
                        .stop = &(struct fl_stop_policy){ .scope = FL_STOP_GROUP } };
    struct fl_result r;
    ASSERT_OK(fl_run(&cmd, &io, &r, NULL));
    pid_t left = (pid_t)atoi(r.out[0].data ? r.out[0].data : "0");
    ASSERT_GT(left, 0);
    ASSERT_EXITED(r.status, 0);
    ASSERT(r.timed_out);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    for (int i = 0; i < 5000 && t_running(left); i++)
        usleep(1000);
    if (t_running(left)) {
        kill(left, SIGKILL);
        FAIL("the rest of the group ran on past the deadline");
    }
    fl_result_free(&r);
}

/* The deadline counts from the spawn: a setup that waits (an open() of
 * a FIFO with no writer) is stopped at it, as the program would be. */
TEST(run_with_a_deadline_stops_a_setup_that_waits)
{
    NEEDS_CLOSE_OTHERS();
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("the posix_spawn and fork backends wait for the exec before the exchange");
    const char *fifo = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(fifo, 0600));
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .backend = BACKEND,
                          .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } };
    struct fl_io io = { .out[0].capture = true, .timeout_ms = 300 };
    struct fl_result r;
    ASSERT_OK(fl_run(&cmd, &io, &r, NULL));
    ASSERT(r.timed_out);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT_SIGNALED(r.status, SIGTERM);
    fl_result_free(&r);
}

/* With a deadline, a failed exec is still the spawn's error, and the
 * result is left empty. */
TEST(run_with_a_deadline_reports_a_failed_exec_as_the_spawn_s)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent/forkless-test"), .backend = BACKEND };
    struct fl_io io = { .out[0].capture = true, .timeout_ms = 10000 };
    struct fl_result r;
    struct fl_error e;
    ASSERT_ERR(fl_run(&cmd, &io, &r, &e), ENOENT);
    ASSERT_EQ(e.err, ENOENT);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, "/nonexistent/forkless-test");
    ASSERT_EQ(r.exit_code, -1);
    ASSERT(r.out[0].data == NULL);
    ASSERT(!r.timed_out);
    fl_result_free(&r);
}

/* The stop policy is judged before the command is checked: a map count
 * without maps is still refused, not read. */
TEST(run_with_a_group_stop_refuses_a_map_count_without_maps)
{
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .stdio = { [0] = { .kind = FL_PTY } },
                          .nfds = 1, .backend = BACKEND };
    struct fl_io io = { .stop = &(struct fl_stop_policy){ .scope = FL_STOP_GROUP } };
    struct fl_result r;
    struct fl_error e;
    ASSERT_ERR(fl_run(&cmd, &io, &r, &e), EINVAL);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
}

TEST(run_spawn_failure_returns_the_spawn_error_with_the_error_filled)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent/forkless-test"), .backend = BACKEND };
    struct fl_io io = { .out[0].capture = true };
    struct fl_result r;
    memset(&r, 0x5a, sizeof r);
    struct fl_error e;
    int err = fl_run(&cmd, &io, &r, &e);
    if (BACKEND == FL_BACKEND_POSIX_SPAWN && !FL_T_POSIX_SPAWN_CLOSES_FDS) {
        ASSERT_ERR(err, ENOTSUP);
        return;
    }
    ASSERT_ERR(err, ENOENT);
    ASSERT_EQ(e.err, ENOENT);
    ASSERT(fl_t_step_is(&e, FL_STEP_EXEC));
    ASSERT_STR_EQ(e.path, "/nonexistent/forkless-test");
    ASSERT_NULL(r.out[0].data);  /* nothing to free */
    fl_result_free(&r);
}

TEST(run_refuses_to_capture_a_stream_that_is_not_inherit_or_pipe)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("echo", "x"), .stdio = { [1] = { .kind = FL_NULL } },
                          .backend = BACKEND };
    struct fl_io io = { .out[0].capture = true };
    struct fl_result r;
    memset(&r, 0xab, sizeof r);
    struct fl_error e;
    ASSERT_ERR(fl_run(&cmd, &io, &r, &e), EINVAL);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
    ASSERT_EQ(e.index, 1);
    ASSERT_NULL(r.out[0].data);  /* zeroed: nothing to free */
    fl_result_free(&r);
}

/* Every refusal leaves *result zeroed, so that fl_result_free() after any
 * failure is safe. */
TEST(run_refusing_a_bad_io_leaves_the_result_zeroed)
{
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .backend = BACKEND };
    struct fl_io io = { .timeout_ms = -1 };
    struct fl_result r;
    memset(&r, 0xab, sizeof r);
    struct fl_error e;
    ASSERT_ERR(fl_run(&cmd, &io, &r, &e), EINVAL);
    /* Which field, with its value. */
    ASSERT_STR_CONTAINS(e.detail, "timeout_ms is -1");
    ASSERT_NULL(r.out[0].data);
    ASSERT_NULL(r.out[1].data);
    fl_result_free(&r);
}

TEST(run_without_a_command_still_zeroes_the_result)
{
    struct fl_result r;
    memset(&r, 0xab, sizeof r);
    struct fl_error e;
    ASSERT_ERR(fl_run(NULL, NULL, &r, &e), EINVAL);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
    ASSERT_NULL(r.out[0].data);
    ASSERT_NULL(r.out[1].data);
    fl_result_free(&r);
}

static int stop_at_once(void *ctx, int stream, const char *data, size_t n)
{
    (void)ctx, (void)stream, (void)data, (void)n;
    return 1;
}

/* A failure after the spawn fills the record too: never "Success". */
TEST(run_failing_after_the_spawn_fills_the_error_with_its_errno)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("spew", "1", "100000000"), .backend = BACKEND };
    struct fl_io io = { .out[0] = { .capture = true, .on_output = stop_at_once } };
    struct fl_result r;
    struct fl_error e;
    memset(&e, 0, sizeof e);
    ASSERT_ERR(fl_run(&cmd, &io, &r, &e), ECANCELED);
    ASSERT_EQ(e.err, ECANCELED);
    ASSERT_EQ(e.step, FL_STEP_NONE);
    char buf[512];
    ASSERT_STR_CONTAINS(fl_error_format(&e, buf, sizeof buf), strerror(ECANCELED));
    fl_result_free(&r);
}

TEST(run_refuses_a_group_stop_for_a_child_that_leads_no_group)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .backend = BACKEND };
    struct fl_io io = { .stop = &(struct fl_stop_policy){ .scope = FL_STOP_GROUP } };
    struct fl_result r;
    struct fl_error e;
    ASSERT_ERR(fl_run(&cmd, &io, &r, &e), EINVAL);
    ASSERT_STR_CONTAINS(e.detail, "FL_STOP_GROUP");
}

TEST(result_free_frees_library_buffers_and_leaves_a_callers_alone)
{
    NEEDS_CLOSE_OTHERS();
    char buf[64];
    struct fl_cmd cmd = { .argv = PROBE("echo", "mine", "stderr", "yours"), .backend = BACKEND };
    struct fl_io io = { .out = { { .capture = true, .buf = buf, .size = sizeof buf },
                                 { .capture = true } } };
    struct fl_result r;
    ASSERT_OK(fl_run(&cmd, &io, &r, NULL));
    ASSERT(r.out[0].data == buf && !r.out[0].owned_);
    ASSERT(r.out[1].owned_);
    fl_result_free(&r);  /* ASan and valgrind see a leak or a bad free */
    ASSERT_NULL(r.out[0].data);
    ASSERT_NULL(r.out[1].data);
    ASSERT_STR_EQ(buf, "mine\n");
    fl_result_free(&r);  /* twice is fine */
    struct fl_result zero = { 0 };
    fl_result_free(&zero);
    fl_result_free(NULL);
}

struct job {
    int id;
    int err;
    bool ok;
};

static void *run_one(void *arg)
{
    struct job *j = arg;
    char id[16];  /* t_fmt() is not for threads */
    snprintf(id, sizeof id, "%d", j->id);
    j->ok = true;
    for (int i = 0; i < 5 && j->ok; i++) {
        struct fl_cmd cmd = { .argv = PROBE("cat", "stderr", id), .backend = BACKEND };
        struct fl_io io = { .input = id, .input_len = strlen(id),
                            .out = { { .capture = true }, { .capture = true } } };
        struct fl_result r;
        j->err = fl_run(&cmd, &io, &r, NULL);
        j->ok = !j->err && WIFEXITED(r.status) && r.out[0].data &&
                !strcmp(r.out[0].data, id) && r.out[1].data &&
                !strncmp(r.out[1].data, id, strlen(id));
        fl_result_free(&r);
    }
    return NULL;
}

TEST(run_from_eight_threads_at_once) /* stress */
{
    NEEDS_CLOSE_OTHERS();
    pthread_t t[8];
    struct job jobs[8];
    for (int i = 0; i < 8; i++) {
        jobs[i] = (struct job){ .id = 1000 + i };
        ASSERT_OK(pthread_create(&t[i], NULL, run_one, &jobs[i]));
    }
    for (int i = 0; i < 8; i++)
        ASSERT_OK(pthread_join(t[i], NULL));
    for (int i = 0; i < 8; i++) {
        ASSERT_OK(jobs[i].err);
        ASSERT(jobs[i].ok);
    }
}
