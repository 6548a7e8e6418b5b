/*
 * test_pipeline_io: the exchange for a pipeline. The input goes to the
 * first stage, out[0] takes the last stage's stdout, out[1] each stage's
 * own stderr, and a deadline stops every stage while output still flows.
 *
 * Every case starts with NEEDS_CLOSE_OTHERS(): each stage is started with
 * the default close-others, which musl's posix_spawn cannot do.
 */
#include "test.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#define NSTAGES(a) (sizeof(a) / sizeof((a)[0]))
#define STAGE(...) { .argv = PROBE(__VA_ARGS__), .backend = BACKEND }

static void run_ok(const struct fl_cmd *stages, size_t n, const struct fl_io *io,
                   struct fl_result *results)
{
    struct fl_error e;
    int r = fl_pipeline_run(stages, n, io, results, &e);
    if (r) {
        char buf[1400];
        FAIL("fl_pipeline_run: %s", fl_error_format(&e, buf, sizeof buf));
    }
}

static void free_all(struct fl_result *results, size_t n)
{
    for (size_t k = 0; k < n; k++)
        fl_result_free(&results[k]);
}

TEST(run_captures_the_last_stages_stdout)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("echo", "abc"), STAGE("cat"), STAGE("cat") };
    struct fl_io io = { .out = { [0] = { .capture = true } } };
    struct fl_result res[3];
    run_ok(stages, 3, &io, res);
    ASSERT_STR_EQ(res[2].out[0].data, "abc\n");
    ASSERT_NULL(res[0].out[0].data);
    ASSERT_EQ(fl_pipefail(res, 3), -1);
    free_all(res, 3);
}

TEST(run_feeds_the_input_to_the_first_stage)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("cat"), STAGE("head", "1") };
    static const char input[] = "first\nsecond\n";
    struct fl_io io = { .input = input, .input_len = sizeof input - 1,
                        .out = { [0] = { .capture = true } } };
    struct fl_result res[2];
    run_ok(stages, 2, &io, res);
    ASSERT_STR_EQ(res[1].out[0].data, "first\n");
    ASSERT_EQ(res[0].input_written, sizeof input - 1);
    free_all(res, 2);
}

TEST(each_stages_stderr_goes_to_its_own_result)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("stderr", "from one", "echo", "x"),
                               STAGE("stderr", "from two", "cat") };
    struct fl_io io = { .out = { [0] = { .capture = true }, [1] = { .capture = true } } };
    struct fl_result res[2];
    run_ok(stages, 2, &io, res);
    ASSERT_STR_EQ(res[0].out[1].data, "from one\n");
    ASSERT_STR_EQ(res[1].out[1].data, "from two\n");
    ASSERT_STR_EQ(res[1].out[0].data, "x\n");
    free_all(res, 2);
}

TEST(sixteen_mib_cross_three_stages_whole)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("spew", "1", "16777216"), STAGE("cat"), STAGE("cat") };
    struct fl_io io = { .out = { [0] = { .capture = true } } };
    struct fl_result res[3];
    run_ok(stages, 3, &io, res);
    ASSERT_EQ(res[2].out[0].len, (size_t)16 << 20);
    ASSERT_EQ(res[2].out[0].total, 16ull << 20);
    for (size_t k = 0; k < 3; k++)
        ASSERT_EQ(res[k].exit_code, 0);
    free_all(res, 3);
}

TEST(a_stream_that_cannot_be_piped_names_its_stage)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        { .argv = PROBE("cat"), .stdio = { [0] = { .kind = FL_NULL } }, .backend = BACKEND },
        STAGE("cat"),
        { .argv = PROBE("cat"), .stdio = { [1] = { .kind = FL_NULL } }, .backend = BACKEND },
    };
    struct fl_result res[3];
    struct fl_error e;
    struct fl_io in = { .input = "x", .input_len = 1 };
    ASSERT_ERR(fl_pipeline_run(stages, 3, &in, res, &e), EINVAL);
    ASSERT_EQ(e.stage, 1);
    struct fl_io out = { .out = { [0] = { .capture = true } } };
    ASSERT_ERR(fl_pipeline_run(stages, 3, &out, res, &e), EINVAL);
    ASSERT_EQ(e.stage, 3);
}

TEST(one_callers_buffer_for_several_stages_stderr_is_einval)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("exit", "0"), STAGE("exit", "0") };
    char buf[64];
    struct fl_io io = { .out = { [1] = { .capture = true, .buf = buf, .size = sizeof buf } } };
    struct fl_result res[2];
    struct fl_error e;
    ASSERT_ERR(fl_pipeline_run(stages, 2, &io, res, &e), EINVAL);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
}

TEST(a_deadline_stops_every_stage_while_output_flows)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        STAGE("yes", "y"),
        { .argv = PROBE("cat"), .stdio = { [1] = { .kind = FL_PIPE } }, .backend = BACKEND },
    };
    struct fl_pipeline pl;
    ASSERT_OK(fl_pipeline_spawn(stages, 2, &pl, NULL));
    /* The deadline starts once the output flows: stages slow to start
     * could otherwise meet it before they wrote anything. */
    struct pollfd flows = { .fd = pl.procs[1].stdio[1], .events = POLLIN };
    ASSERT_EQ(poll(&flows, 1, 20000), 1);   /* 20 s: a hang, not a measure */
    struct fl_io io = { .out = { [0] = { .capture = true, .discard = true } },
                        .timeout_ms = 30 };
    struct fl_result res[2];
    ASSERT_OK(fl_pipeline_communicate(&pl, &io, res));
    fl_pipeline_close(&pl);
    for (size_t k = 0; k < 2; k++) {
        ASSERT(res[k].timed_out);
        ASSERT_EQ(res[k].stop_signal, SIGTERM);
    }
    ASSERT_EQ(res[1].signal, SIGTERM);
    ASSERT_GT(res[1].out[0].total, 0);
    free_all(res, 2);
}

static int stop_at_once(void *ctx, int stream, const char *data, size_t n)
{
    (void)ctx, (void)stream, (void)data, (void)n;
    return 1;
}

/* A failure after the stages started fills the record too. */
TEST(run_failing_after_the_spawn_fills_the_error_with_its_errno)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("yes", "y"), STAGE("cat") };
    struct fl_io io = { .out[0] = { .capture = true, .on_output = stop_at_once } };
    struct fl_result res[2];
    struct fl_error e;
    memset(&e, 0, sizeof e);
    ASSERT_ERR(fl_pipeline_run(stages, 2, &io, res, &e), ECANCELED);
    ASSERT_EQ(e.err, ECANCELED);
    ASSERT_EQ(e.step, FL_STEP_NONE);
    free_all(res, 2);
}

TEST(communicate_takes_a_spawned_pipelines_pipes)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        { .argv = PROBE("cat"), .stdio = { [0] = { .kind = FL_PIPE } }, .backend = BACKEND },
        { .argv = PROBE("cat"), .stdio = { [1] = { .kind = FL_PIPE } }, .backend = BACKEND },
    };
    struct fl_pipeline pl;
    ASSERT_OK(fl_pipeline_spawn(stages, 2, &pl, NULL));
    struct fl_io io = { .input = "fed\n", .input_len = 4 };
    struct fl_result res[2];
    ASSERT_OK(fl_pipeline_communicate(&pl, &io, res));
    ASSERT_STR_EQ(res[1].out[0].data, "fed\n");
    ASSERT_EQ(pl.procs[0].stdio[0], -1);
    ASSERT_EQ(pl.procs[1].stdio[1], -1);
    ASSERT_ERR(fl_pipeline_communicate(&pl, NULL, res), ESRCH);
    /* Reaped, it has no pipe to feed: ESRCH too, as fl_communicate()
     * says it, not the EINVAL of input without a pipe. */
    ASSERT_ERR(fl_pipeline_communicate(&pl, &io, res), ESRCH);
    fl_pipeline_close(&pl);
    free_all(res, 2);
}

TEST(input_without_a_first_stage_pipe_is_einval_and_touches_nothing)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("sleep", "100"), STAGE("cat") };
    struct fl_pipeline pl;
    ASSERT_OK(fl_pipeline_spawn(stages, 2, &pl, NULL));
    struct fl_io io = { .input = "x", .input_len = 1 };
    struct fl_result res[2];
    ASSERT_ERR(fl_pipeline_communicate(&pl, &io, res), EINVAL);
    ASSERT_OK(fl_pipeline_wait(&pl, 0, &(struct fl_stop_policy){ .signal = SIGKILL }, res));
    ASSERT_EQ(res[0].signal, SIGKILL);
    fl_pipeline_close(&pl);
}

TEST(run_with_io_and_a_missing_stage_names_it_and_leaves_nothing)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = { STAGE("sleep", "100"),
                               { .argv = ARGV("fl-no-such-program"), .backend = BACKEND },
                               STAGE("cat") };
    struct fl_io io = { .out = { [0] = { .capture = true } } };
    struct fl_result res[3];
    memset(res, 0x5a, sizeof res);  /* a caller's array from an earlier run */
    struct fl_error e;
    ASSERT_ERR(fl_pipeline_run(stages, NSTAGES(stages), &io, res, &e), ENOENT);
    ASSERT_EQ(e.stage, 2);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
    /* Zeroed first, as fl_run() does: nothing to free after a failure. */
    for (size_t k = 0; k < NSTAGES(stages); k++) {
        ASSERT_NULL(res[k].out[0].data);
        ASSERT_EQ(res[k].exit_code, -1);
    }
    free_all(res, NSTAGES(stages));
}

/* The deadline counts from the spawn, as fl_run()'s: a stage whose setup
 * waits (an open() of a FIFO with no writer) is stopped at it with the
 * others, not waited for without end. */
TEST(run_with_a_deadline_stops_a_stage_whose_setup_waits)
{
    NEEDS_CLOSE_OTHERS();
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("the posix_spawn and fork backends wait for each exec before the exchange");
    const char *fifo = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(fifo, 0600));
    struct fl_cmd stages[] = { { .argv = PROBE("cat"), .backend = BACKEND,
                                 .stdio = { [0] = { .kind = FL_FILE, .path = fifo } } },
                               STAGE("cat") };
    struct fl_io io = { .out[0].capture = true, .timeout_ms = 300 };
    struct fl_result res[2];
    run_ok(stages, NSTAGES(stages), &io, res);
    for (size_t k = 0; k < NSTAGES(stages); k++) {
        ASSERT(res[k].timed_out);
        ASSERT_EQ(res[k].stop_signal, SIGTERM);
    }
    ASSERT_SIGNALED(res[0].status, SIGTERM);
    free_all(res, NSTAGES(stages));
}

TEST(a_one_stage_pipeline_on_a_pty_has_its_master_read)
{
    /* More than a terminal holds: unread, the stage would block for ever. */
    NEEDS_CLOSE_OTHERS();
    NEEDS_PTY();
    struct fl_cmd st[1] = { { .argv = PROBE("spew", "1", "200000"), .backend = BACKEND,
                              .stdio = { [1] = { .kind = FL_PTY } } } };
    UNSUPPORTED_ON_POSIX_SPAWN(&st[0]);
    struct fl_result res[1];
    struct fl_io io = { 0 };
    run_ok(st, 1, &io, res);
    ASSERT_EXITED(res[0].status, 0);
    ASSERT(res[0].out[0].len >= 200000);
    free_all(res, 1);
}

TEST(a_one_stage_pipeline_on_a_pty_is_fed_and_captured_as_fl_run_does)
{
    /* io->input and out[0].capture go to the pty's master, as with
     * fl_run(), not to pipes the pty's streams cannot be. */
    NEEDS_CLOSE_OTHERS();
    NEEDS_PTY();
    struct fl_cmd st[1] = { { .argv = ARGV(t_tool("head"), "-n", "1"), .backend = BACKEND,
                              .stdio = { { .kind = FL_PTY }, { .kind = FL_PTY } } } };
    UNSUPPORTED_ON_POSIX_SPAWN(&st[0]);
    struct fl_result res[1];
    struct fl_io io = { .input = "abc\n", .input_len = 4, .out = { { .capture = true } } };
    run_ok(st, 1, &io, res);
    ASSERT_EXITED(res[0].status, 0);
    ASSERT_STR_CONTAINS(res[0].out[0].data, "abc");
    free_all(res, 1);
}

TEST(a_one_stage_pipeline_on_a_pty_run_without_io_ends)
{
    /* With io NULL nothing reads the master: it is closed, as the pipes
     * are, and the stage's terminal is hung up. */
    NEEDS_CLOSE_OTHERS();
    NEEDS_PTY();
    struct fl_cmd st[1] = { { .argv = PROBE("spew", "1", "200000"), .backend = BACKEND,
                              .stdio = { [1] = { .kind = FL_PTY } } } };
    UNSUPPORTED_ON_POSIX_SPAWN(&st[0]);
    struct fl_result res[1];
    ASSERT_OK(fl_pipeline_run(st, 1, NULL, res, NULL));
    ASSERT(!WIFEXITED(res[0].status) || WEXITSTATUS(res[0].status) != 0);
    free_all(res, 1);
}

struct cancelled_run {
    volatile int returned;
    int r;
};

static void *run_then_test_cancel(void *arg)
{
    struct cancelled_run *c = arg;
    struct fl_cmd st[1] = { STAGE("sleep", "0.3") };
    struct fl_result res[1];
    c->r = fl_pipeline_run(st, 1, NULL, res, NULL);
    c->returned = 1;
    free_all(res, 1);
    pthread_testcancel();
    return NULL;
}

TEST(a_pipeline_run_is_not_a_cancellation_point)
{
    /* As fl_run(): cancelled in its wait it would leave the stage running
     * and the pipeline's memory behind. The request is acted on after. */
    NEEDS_CLOSE_OTHERS();
    struct cancelled_run c = { 0 };
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, run_then_test_cancel, &c));
    usleep(100000);
    ASSERT_OK(pthread_cancel(t));
    void *res;
    ASSERT_OK(pthread_join(t, &res));
    ASSERT(res == PTHREAD_CANCELED);
    ASSERT(c.returned);
    ASSERT_OK(c.r);
}
