/*
 * test_io.c: fl_communicate(): feeding stdin and draining stdout and
 * stderr at once, the output policies (head, tail, stop), caller's
 * buffers, callbacks and lines, children that close stdin or leave a
 * descendant holding stdout, deadlines, and signals meanwhile.
 */
#include "test.h"
#include "pattern.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#define MIB (1024u * 1024u)

/* Spawns argv with pipes for the streams asked for (stdin, stdout, stderr). */
static void spawn_piped(struct fl_proc *p, char *const *argv, bool in, bool out, bool err)
{
    struct fl_cmd cmd = {
        .argv = argv,
        .stdio = { { .kind = in ? FL_PIPE : FL_NULL }, { .kind = out ? FL_PIPE : FL_NULL },
                   { .kind = err ? FL_PIPE : FL_INHERIT } },
        .backend = BACKEND,
    };
    SPAWN(&cmd, p);
}

static unsigned char *pattern(size_t n)
{
    unsigned char *p = t_keep(malloc(n));
    fl_pattern_fill(p, 0, n);
    return p;
}

/* The stream holds exactly the pattern's bytes [from, from + n). */
static void assert_pattern(const struct fl_output *o, uint64_t from, size_t n)
{
    ASSERT_EQ(o->len, n);
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)o->data[k] != fl_pattern_byte(from + k))
            FAIL("byte %zu (offset %llu) differs", k, (unsigned long long)(from + k));
    ASSERT_EQ(o->data[n], '\0');
}

static void run_io(char *const *argv, bool in, const struct fl_io *io, struct fl_result *r,
                   int expect)
{
    struct fl_proc p;
    spawn_piped(&p, argv, in, true, true);
    ASSERT_ERR(fl_communicate(&p, io, r), expect);
    fl_close(&p);
}

/* run_io() of sh -c script, a script that runs tools by name (sleep). */
static void run_sh(const char *script, const struct fl_io *io, struct fl_result *r, int expect)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/sh", "-c", (char *)script),
        .env_set = TOOLS_PATH_ENV,
        .stdio = { { .kind = FL_NULL }, { .kind = FL_PIPE }, { .kind = FL_PIPE } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_ERR(fl_communicate(&p, io, r), expect);
    fl_close(&p);
}

/* Returns once the child has ended, leaving it unreaped (WNOWAIT) for
 * the library to reap. */
static void wait_ended(pid_t pid)
{
    siginfo_t si;
    int r;
    do
        r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT);
    while (r < 0 && errno == EINTR);
    ASSERT_SYS(r);
}

/* ---- sizes ---------------------------------------------------------------- */

TEST(sixty_four_mib_in_out_and_err_at_once_arrive_byte_exact) /* stress */
{
    size_t n = 64 * MIB;
    unsigned char *in = pattern(n);
    struct fl_io io = { .input = in, .input_len = n };
    struct fl_result r;
    run_io(PROBE("tee2"), true, &io, &r, 0);
    ASSERT_EXITED(r.status, 0);
    ASSERT_EQ(r.input_written, n);
    ASSERT(!r.input_closed);
    assert_pattern(&r.out[0], 0, n);
    assert_pattern(&r.out[1], 0, n);
    ASSERT_EQ(r.out[0].total, n);
    ASSERT(!r.out[0].overflowed && !r.out[0].eof_missed);
    fl_result_free(&r);
}

TEST(merged_stderr_keeps_the_order_of_the_writes)
{
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "a", "stderr", "b", "echo", "c"),
        .stdio = { [1] = { .kind = FL_PIPE }, [2] = { .kind = FL_TO_STDOUT } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, NULL, &r));
    fl_close(&p);
    ASSERT_STR_EQ(r.out[0].data, "a\nb\nc\n");
    ASSERT_NULL(r.out[1].data);
    fl_result_free(&r);
}

TEST(an_empty_output_is_an_empty_string)
{
    struct fl_result r;
    run_io(PROBE("exit", "0"), false, NULL, &r, 0);
    ASSERT_STR_EQ(r.out[0].data, "");
    ASSERT_EQ(r.out[0].len, 0);
    fl_result_free(&r);
}

/* Its reads and writes meet EAGAIN on the way (the pipes are made
 * O_NONBLOCK): errno is as the caller left it all the same. */
TEST(communicate_leaves_errno_as_it_was)
{
    struct fl_proc p;
    spawn_piped(&p, PROBE("cat"), true, true, false);
    struct fl_io io = { .input = "abc\n", .input_len = 4 };
    struct fl_result r;
    errno = 1234;
    int err = fl_communicate(&p, &io, &r);
    int saw = errno;
    ASSERT_OK(err);
    ASSERT_EXITED(r.status, 0);
    ASSERT_STR_EQ(r.out[0].data, "abc\n");
    ASSERT_EQ(saw, 1234);
    fl_result_free(&r);
    fl_close(&p);
}

TEST(communicate_closes_the_pipe_ends_of_the_handle)
{
    struct fl_proc p;
    spawn_piped(&p, PROBE("cat"), true, true, true);
    struct fl_io io = { .input = "x", .input_len = 1 };
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, &io, &r));
    ASSERT_EQ(p.stdio[0], -1);
    ASSERT_EQ(p.stdio[1], -1);
    ASSERT_EQ(p.stdio[2], -1);
    ASSERT_STR_EQ(r.out[0].data, "x");
    ASSERT_ERR(fl_communicate(&p, NULL, &r), ESRCH);
    fl_close(&p);
    fl_result_free(&r);
}

/* Feeds "abc\n" to tee2 behind p's pipes with RLIMIT_NOFILE lowered to 2
 * for the exchange, which both outputs must hold; closes p. */
static void tee2_under_two_fds(struct fl_proc *p, const struct rlimit *old)
{
    struct rlimit low = { 2, old->rlim_max };
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &low));
    struct fl_io io = { .input = "abc\n", .input_len = 4 };
    struct fl_result r;
    int err = fl_communicate(p, &io, &r);
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, old));
    fl_close(p);
    ASSERT_ERR(err, 0);
    ASSERT_EXITED(r.status, 0);
    ASSERT_STR_EQ(r.out[0].data, "abc\n");
    ASSERT_STR_EQ(r.out[1].data, "abc\n");
    fl_result_free(&r);
}

TEST(communicate_works_with_rlimit_nofile_below_its_poll_count)
{
    /* Three pipes and a pidfd, all open already: a limit lowered below
     * their count (setrlimit() allows it) must not stop the exchange, as
     * poll() would (EINVAL for more entries than RLIMIT_NOFILE). */
    struct rlimit old;
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &old));
    struct fl_proc p;
    spawn_piped(&p, PROBE("tee2"), true, true, true);
    tee2_under_two_fds(&p, &old);
}

TEST(communicate_works_with_rlimit_nofile_below_its_poll_count_on_fds_above_1024)
{
    /* select(), which stands in for poll() then, is not bound to
     * FD_SETSIZE (1024) by the kernel: fds above it are watched too. */
    struct rlimit old, high;
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &old));
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < 1200)
        SKIP(t_fmt("the hard RLIMIT_NOFILE (%llu) leaves no fd above 1100",
                   (unsigned long long)old.rlim_max));
    high = (struct rlimit){ 1200, old.rlim_max };
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &high));
    int filler = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_SYS(filler);
    /* Every free number up to 1100 taken, so that the pipes land above. */
    int taken[1100], ntaken = 0, fd = 0;
    while (ntaken < 1100 && fd < 1100 && (fd = fcntl(filler, F_DUPFD_CLOEXEC, 0)) >= 0)
        taken[ntaken++] = fd;
    struct fl_proc p;
    spawn_piped(&p, PROBE("tee2"), true, true, true);
    ASSERT(p.stdio[0] > 1024 && p.stdio[1] > 1024 && p.stdio[2] > 1024);
    for (int i = 0; i < ntaken; i++)
        close(taken[i]);
    close(filler);
    tee2_under_two_fds(&p, &old);
}

/* ---- output policies ------------------------------------------------------- */

TEST(keep_head_keeps_the_first_bytes_and_drains_the_rest)
{
    struct fl_io io = { .out[0] = { .limit = 1000, .overflow = FL_OVERFLOW_KEEP_HEAD } };
    struct fl_result r;
    run_io(PROBE("spew", "1", "3145728"), false, &io, &r, 0);
    ASSERT_EXITED(r.status, 0);  /* never blocked, never stopped */
    assert_pattern(&r.out[0], 0, 1000);
    ASSERT(r.out[0].overflowed);
    ASSERT_EQ(r.out[0].total, 3145728);
    ASSERT_EQ(r.out[0].dropped, 3145728 - 1000);
    ASSERT(!r.stop_requested);
    fl_result_free(&r);
}

TEST(keep_tail_keeps_exactly_the_last_bytes)
{
    size_t total = 3 * MIB + 7, limit = 100003;
    struct fl_io io = { .out[0] = { .limit = limit, .overflow = FL_OVERFLOW_KEEP_TAIL } };
    struct fl_result r;
    run_io(PROBE("spew", "1", t_fmt("%zu", total)), false, &io, &r, 0);
    ASSERT_EXITED(r.status, 0);
    assert_pattern(&r.out[0], total - limit, limit);
    ASSERT(r.out[0].overflowed);
    ASSERT_EQ(r.out[0].dropped, total - limit);
    fl_result_free(&r);
}

TEST(keep_tail_of_an_output_below_the_limit_keeps_it_all)
{
    struct fl_io io = { .out[0] = { .limit = 1000, .overflow = FL_OVERFLOW_KEEP_TAIL } };
    struct fl_result r;
    run_io(PROBE("spew", "1", "999"), false, &io, &r, 0);
    assert_pattern(&r.out[0], 0, 999);
    ASSERT(!r.out[0].overflowed);
    ASSERT_EQ(r.out[0].dropped, 0);
    fl_result_free(&r);
}

TEST(keep_tail_in_a_callers_buffer_keeps_the_last_bytes)
{
    char buf[101];
    struct fl_io io = { .out[0] = { .buf = buf, .size = sizeof buf,
                                    .overflow = FL_OVERFLOW_KEEP_TAIL } };
    struct fl_result r;
    run_io(PROBE("spew", "1", "1000000"), false, &io, &r, 0);
    ASSERT(r.out[0].data == buf);
    assert_pattern(&r.out[0], 1000000 - 100, 100);
    fl_result_free(&r);
}

TEST(overflow_stop_stops_the_child_with_the_stop_policy)
{
    struct fl_io io = { .out[0] = { .limit = 65536, .overflow = FL_OVERFLOW_STOP } };
    struct fl_result r;
    run_io(PROBE("spew", "1", "100000000000"), false, &io, &r, 0);
    ASSERT(r.stop_requested);
    ASSERT(!r.timed_out);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT_SIGNALED(r.status, SIGTERM);
    ASSERT(r.out[0].overflowed);
    assert_pattern(&r.out[0], 0, 65536);
    fl_result_free(&r);
}

TEST(discard_counts_the_bytes_and_keeps_none)
{
    struct fl_io io = { .out[0] = { .discard = true } };
    struct fl_result r;
    run_io(PROBE("spew", "1", "200000"), false, &io, &r, 0);
    ASSERT_NULL(r.out[0].data);
    ASSERT_EQ(r.out[0].total, 200000);
    ASSERT_EQ(r.out[0].dropped, 200000);
    fl_result_free(&r);
}

TEST(discard_with_a_limit_and_overflow_stop_stops_the_child_past_the_limit)
{
    struct fl_io io = { .out[0] = { .discard = true, .limit = 65536,
                                    .overflow = FL_OVERFLOW_STOP } };
    struct fl_result r;
    run_io(PROBE("spew", "1", "100000000000"), false, &io, &r, 0);
    ASSERT(r.stop_requested);
    ASSERT_SIGNALED(r.status, SIGTERM);
    ASSERT(r.out[0].overflowed);
    ASSERT_NULL(r.out[0].data);
    ASSERT_GT(r.out[0].total, 65536);
    fl_result_free(&r);
}

TEST(discard_with_a_limit_the_output_stays_under_is_no_overflow)
{
    struct fl_io io = { .out[0] = { .discard = true, .limit = 200000,
                                    .overflow = FL_OVERFLOW_STOP } };
    struct fl_result r;
    run_io(PROBE("spew", "1", "200000"), false, &io, &r, 0);
    ASSERT(!r.stop_requested);
    ASSERT(!r.out[0].overflowed);
    ASSERT_EXITED(r.status, 0);
    ASSERT_EQ(r.out[0].total, 200000);
    fl_result_free(&r);
}

TEST(output_goes_into_a_callers_buffer_with_room_for_the_nul)
{
    char buf[8];
    memset(buf, 'z', sizeof buf);
    struct fl_io io = { .out[0] = { .buf = buf, .size = sizeof buf } };
    struct fl_result r;
    run_io(PROBE("echo", "0123456789"), false, &io, &r, 0);
    ASSERT(r.out[0].data == buf);
    ASSERT_STR_EQ(buf, "0123456");
    ASSERT(r.out[0].overflowed);
    ASSERT_EQ(r.out[0].total, 11);
    ASSERT_EQ(r.out[0].dropped, 4);
    fl_result_free(&r);
    ASSERT_STR_EQ(buf, "0123456");  /* the caller's, left alone */
}

TEST(two_streams_into_one_callers_buffer_are_einval)
{
    /* Each would write over the other's bytes. */
    char buf[64];
    struct fl_io io = { .out[0] = { .buf = buf, .size = 32 },
                        .out[1] = { .buf = buf + 16, .size = 32 } };
    struct fl_cmd cmd = { .argv = PROBE("echo", "x"), .backend = BACKEND,
                          .stdio = { [1] = { .kind = FL_PIPE }, [2] = { .kind = FL_PIPE } } };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_result r;
    ASSERT_ERR(fl_communicate(&p, &io, &r), EINVAL);
    /* Side by side, they are two buffers. */
    io.out[1].buf = buf + 32;
    ASSERT_OK(fl_communicate(&p, &io, &r));
    ASSERT_STR_EQ(r.out[0].data, "x\n");
    fl_close(&p);
    fl_result_free(&r);
}

/* ---- callbacks and lines --------------------------------------------------- */

struct collected {
    char data[4096];
    size_t len;
    int calls;
    int streams;  /* bit 1 << stream */
    char pieces[16][64];
    int stop_after;  /* calls; 0: never */
};

static int collect(void *ctx, int stream, const char *d, size_t n)
{
    struct collected *c = ctx;
    if (c->calls < 16 && n < sizeof c->pieces[0])
        memcpy(c->pieces[c->calls], d, n);
    if (c->len + n <= sizeof c->data) {
        memcpy(c->data + c->len, d, n);
        c->len += n;
    }
    c->calls++;
    c->streams |= 1 << stream;
    return c->stop_after && c->calls >= c->stop_after;
}

TEST(the_callback_gets_every_chunk_in_order_before_it_is_kept)
{
    struct collected c = { 0 };
    struct fl_io io = { .out[1] = { .on_output = collect, .ctx = &c } };
    struct fl_result r;
    run_io(PROBE("print", "2", "ab", "sleep", "0.05", "print", "2", "cd"), false, &io, &r, 0);
    ASSERT_EQ(c.len, 4);
    ASSERT(!memcmp(c.data, "abcd", 4));
    ASSERT_EQ(c.streams, 1 << 2);
    ASSERT_STR_EQ(r.out[1].data, "abcd");
    fl_result_free(&r);
}

TEST(line_mode_hands_over_whole_lines)
{
    struct collected c = { 0 };
    struct fl_io io = { .out[0] = { .on_output = collect, .ctx = &c, .lines = true,
                                    .discard = true } };
    struct fl_result r;
    run_io(PROBE("print", "1", "ab", "sleep", "0.05", "print", "1", "c\\nde\\n",
                 "sleep", "0.05", "print", "1", "f"),
           false, &io, &r, 0);
    ASSERT_EQ(c.calls, 3);
    ASSERT_STR_EQ(c.pieces[0], "abc\n");
    ASSERT_STR_EQ(c.pieces[1], "de\n");
    ASSERT_STR_EQ(c.pieces[2], "f");  /* the last line, without its newline */
    ASSERT_EQ(r.out[0].total, 8);
    fl_result_free(&r);
}

TEST(line_mode_cuts_a_line_longer_than_max_line)
{
    struct collected c = { 0 };
    struct fl_io io = { .out[0] = { .on_output = collect, .ctx = &c, .lines = true,
                                    .max_line = 4 } };
    struct fl_result r;
    run_io(PROBE("print", "1", "ab", "sleep", "0.05", "print", "1", "cdefghij\\nxy\\n"), false,
           &io, &r, 0);
    ASSERT_EQ(c.calls, 4);
    ASSERT_STR_EQ(c.pieces[0], "abcd");
    ASSERT_STR_EQ(c.pieces[1], "efgh");
    ASSERT_STR_EQ(c.pieces[2], "ij\n");
    ASSERT_STR_EQ(c.pieces[3], "xy\n");
    ASSERT_STR_EQ(r.out[0].data, "abcdefghij\nxy\n");
    fl_result_free(&r);
}

/* .max_line is a bound, not a size to allocate: the split line's buffer
 * grows with the line (else SIZE_MAX would be ENOMEM, the child stopped). */
TEST(line_mode_with_a_huge_max_line_keeps_a_split_line_whole)
{
    struct collected c = { 0 };
    struct fl_io io = { .out[0] = { .on_output = collect, .ctx = &c, .lines = true,
                                    .discard = true, .max_line = SIZE_MAX } };
    struct fl_result r;
    char *big = t_keep(malloc(3001));
    memset(big, 'x', 3000);
    big[3000] = '\0';
    run_io(PROBE("print", "1", "one\\ntw", "sleep", "0.05", "print", "1", big,
                 "sleep", "0.05", "print", "1", "o\\n"),
           false, &io, &r, 0);
    ASSERT_EQ(c.calls, 2);
    ASSERT_STR_EQ(c.pieces[0], "one\n");
    ASSERT_EQ(c.len, 4 + 2 + 3000 + 2);
    ASSERT_EQ(r.exit_code, 0);
    fl_result_free(&r);
}

TEST(a_callback_that_returns_non_zero_stops_the_child_with_ecanceled)
{
    struct collected c = { .stop_after = 1 };
    struct fl_io io = { .out[0] = { .on_output = collect, .ctx = &c } };
    struct fl_result r;
    run_io(PROBE("spew", "1", "100000000000"), false, &io, &r, ECANCELED);
    ASSERT_EQ(c.calls, 1);  /* never called again */
    ASSERT(r.stop_requested);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT_SIGNALED(r.status, SIGTERM);
    ASSERT_GE(r.out[0].len, 1);
    fl_result_free(&r);
}

/* ---- stdin ------------------------------------------------------------------- */

TEST(a_child_that_never_reads_stdin_ends_the_feeding_without_a_hang)
{
    size_t n = 16 * MIB;
    struct fl_io io = { .input = pattern(n), .input_len = n };
    struct fl_result r;
    run_io(PROBE("sleep", "0.1", "exit", "0"), true, &io, &r, 0);
    ASSERT_EXITED(r.status, 0);
    ASSERT(r.input_closed);
    ASSERT_GT(n, r.input_written);
    fl_result_free(&r);
}

TEST(a_write_error_stops_the_child_and_is_returned)
{
    /* The input runs into a page that cannot be read: write() says
     * EFAULT. The exchange is over, and, as for any error of its reads
     * and writes, the child is stopped rather than waited for. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT(m != MAP_FAILED);
    memset(m, 'x', page);
    ASSERT_SYS(mprotect(m + page, page, PROT_NONE));
    struct fl_io io = { .input = m, .input_len = 2 * page };
    struct fl_result r;
    run_io(PROBE("drain", "sleep", "20", "exit", "7"), true, &io, &r, EFAULT);
    munmap(m, 2 * page);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    /* Stopped, not waited for (that would be exit 7, 20 s later): by the
     * SIGTERM, or, where a write of its "drained" line was under way as
     * its stdout closed, by that write's SIGPIPE, the lower signal, which
     * the kernel delivers first. */
    ASSERT(WIFSIGNALED(r.status));
    if (WTERMSIG(r.status) != SIGPIPE)
        ASSERT_SIGNALED(r.status, SIGTERM);
    ASSERT_EQ(r.input_written, page);
    fl_result_free(&r);
}

TEST(a_child_that_closes_stdin_at_once_ends_the_feeding)
{
    size_t n = 4 * MIB;
    struct fl_io io = { .input = pattern(n), .input_len = n };
    struct fl_result r;
    run_io(PROBE("close-stdin", "sleep", "0.1", "echo", "done"), true, &io, &r, 0);
    ASSERT(r.input_closed);
    ASSERT_STR_EQ(r.out[0].data, "done\n");
    ASSERT_EXITED(r.status, 0);
    fl_result_free(&r);
}

TEST(the_input_reaches_the_child_whole)
{
    size_t n = 5 * MIB + 3;
    unsigned char *in = pattern(n);
    struct fl_io io = { .input = in, .input_len = n };
    struct fl_result r;
    run_io(PROBE("drain"), true, &io, &r, 0);
    ASSERT_EQ(t_get_num(r.out[0].data, "drained"), (long long)n);
    ASSERT_STR_EQ(t_get(r.out[0].data, "sum"),
                  t_fmt("%016llx", (unsigned long long)fl_fnv1a(FL_FNV1A_INIT, in, n)));
    ASSERT_EQ(r.input_written, n);
    fl_result_free(&r);
}

static bool sigpipe_pending(void)
{
    sigset_t s;
    sigpending(&s);
    return sigismember(&s, SIGPIPE) == 1;
}

TEST(sigpipe_disposition_and_mask_are_unchanged_and_nothing_is_left_pending)
{
    struct sigaction before, after;
    sigset_t mask_before, mask_after;
    sigaction(SIGPIPE, NULL, &before);
    pthread_sigmask(SIG_SETMASK, NULL, &mask_before);
    struct fl_io io = { .input = pattern(MIB), .input_len = MIB };
    struct fl_result r;
    run_io(PROBE("close-stdin", "sleep", "0.05"), true, &io, &r, 0);
    ASSERT(r.input_closed);
    sigaction(SIGPIPE, NULL, &after);
    pthread_sigmask(SIG_SETMASK, NULL, &mask_after);
    ASSERT(before.sa_handler == after.sa_handler && after.sa_handler == SIG_DFL);
    ASSERT(sigismember(&mask_after, SIGPIPE) == sigismember(&mask_before, SIGPIPE));
    ASSERT(!sigpipe_pending());
    fl_result_free(&r);
}

TEST(a_sigpipe_the_caller_had_pending_stays_pending)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    pthread_kill(pthread_self(), SIGPIPE);
    struct fl_io io = { .input = pattern(MIB), .input_len = MIB };
    struct fl_result r;
    run_io(PROBE("close-stdin", "sleep", "0.05"), true, &io, &r, 0);
    ASSERT(r.input_closed);
    ASSERT(sigpipe_pending());
    int sig = 0;
    ASSERT_OK(sigwait(&pipe_set, &sig));
    ASSERT(!sigpipe_pending());  /* one, not two: the exchange's was taken */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    fl_result_free(&r);
}

TEST(a_process_directed_sigpipe_the_caller_had_pending_stays_one)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    kill(getpid(), SIGPIPE);  /* pending for the process, apart from the thread's */
    struct fl_io io = { .input = pattern(MIB), .input_len = MIB };
    struct fl_result r;
    run_io(PROBE("close-stdin", "sleep", "0.05"), true, &io, &r, 0);
    ASSERT(r.input_closed);
    int sig = 0;
    ASSERT_OK(sigwait(&pipe_set, &sig));
    ASSERT(!sigpipe_pending());  /* the exchange's own was taken back */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    fl_result_free(&r);
}

/* ---- ends, deadlines, signals ---------------------------------------------- */

TEST(a_deadline_cuts_an_endless_eof_wait_short)
{
    /* The child has ended before the call starts (one slow to run could
     * still be there at the deadline, and be stopped): only its grandchild
     * holds stdout, and only the deadline ends the wait. */
    struct fl_proc p;
    spawn_piped(&p, PROBE("echo", "hi", "hold-fds", "30", "exit", "0"), false, true, true);
    wait_ended(p.pid);
    struct fl_io io = { .eof_wait_ms = -1, .timeout_ms = 200 };
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, &io, &r));
    fl_close(&p);
    ASSERT_EXITED(r.status, 0);
    ASSERT(r.out[0].eof_missed);
    kill((pid_t)t_get_num(r.out[0].data, "grandchild"), SIGKILL);
    fl_result_free(&r);
}

TEST(a_limit_of_size_max_means_no_limit)
{
    struct fl_io io = { .out = { [0] = { .limit = SIZE_MAX } } };
    struct fl_result r;
    run_io(PROBE("spew", "1", "100000"), false, &io, &r, 0);
    ASSERT_EQ(r.out[0].len, 100000);
    ASSERT(!r.out[0].overflowed);
    fl_result_free(&r);
}

TEST(a_grandchild_holding_stdout_is_given_up_after_eof_wait)
{
    struct fl_io io = { .eof_wait_ms = 200 };
    struct fl_result r;
    run_io(PROBE("echo", "hi", "hold-fds", "30", "exit", "0"), false, &io, &r, 0);
    ASSERT_EXITED(r.status, 0);
    ASSERT(r.out[0].eof_missed);
    ASSERT_STR_CONTAINS(r.out[0].data, "hi\n");
    pid_t grandchild = (pid_t)t_get_num(r.out[0].data, "grandchild");
    ASSERT_GT(grandchild, 0);
    kill(grandchild, SIGKILL);
    ASSERT(!r.timed_out);
    fl_result_free(&r);
}

TEST(input_a_grandchild_holds_unread_is_given_up_as_cut_short)
{
    /* The child ends at once; its grandchild keeps the stdin pipe and
     * reads nothing: at the end of the eof wait the rest of the input is
     * given up, and input_closed says so. */
    struct fl_io io = { .input = pattern(MIB), .input_len = MIB, .eof_wait_ms = 200 };
    struct fl_result r;
    run_io(PROBE("hold-fds", "30", "exit", "0"), true, &io, &r, 0);
    kill((pid_t)t_get_num(r.out[0].data, "grandchild"), SIGKILL);
    ASSERT_EXITED(r.status, 0);
    ASSERT(r.input_written < MIB);
    ASSERT(r.input_closed);
    fl_result_free(&r);
}

TEST(a_deadline_in_the_middle_of_output_stops_the_child_and_keeps_what_came)
{
    struct fl_io io = { .timeout_ms = 300 };
    struct fl_result r;
    run_io(PROBE("echo", "first", "sleep", "30", "echo", "never"), false, &io, &r, 0);
    ASSERT(r.timed_out);
    ASSERT(!r.stop_requested);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT_SIGNALED(r.status, SIGTERM);
    ASSERT_STR_EQ(r.out[0].data, "first\n");
    fl_result_free(&r);
}

/* Starts sh -c script ($1: arg1, unless NULL) in a process group of its
 * own, with $0 a path (returned) that the script creates once it is ready
 * (its traps set), and waits for that: a deadline or a stop that came
 * first would find it half set up. */
static char *spawn_group_when_ready_with(struct fl_proc *p, const char *script, const char *arg1)
{
    char *ready = t_fmt("%s/ready", t_tmpdir());
    struct fl_cmd cmd = { .argv = ARGV("/bin/sh", "-c", (char *)script, ready, (char *)arg1),
                          .env_set = TOOLS_PATH_ENV,
                          .stdio = { [0] = { .kind = FL_NULL }, [1] = { .kind = FL_PIPE } },
                          .flags = FL_NEW_PGROUP, .backend = BACKEND };
    SPAWN(&cmd, p);
    for (int i = 0; access(ready, F_OK) != 0; i++) {
        ASSERT_LE(i, 30000);   /* 30 s: the script never got there */
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    return ready;
}

/* spawn_group_when_ready_with() without $1. */
static char *spawn_group_when_ready(struct fl_proc *p, const char *script)
{
    return spawn_group_when_ready_with(p, script, NULL);
}

TEST(after_a_deadline_the_rest_of_the_group_is_read_while_it_has_its_grace)
{
    /* The deadline stops the group; a member that ends on SIGTERM, after
     * a moment, still has its last words read, not a closed pipe. */
    NEEDS_CLOSE_OTHERS();
    struct fl_proc p;
    spawn_group_when_ready(&p, "(trap 'sleep 0.2; echo bye; exit 0' TERM; echo start; : >\"$0\"; "
                               "while :; do sleep 0.05; done) & wait");
    struct fl_stop_policy stop = { .scope = FL_STOP_GROUP, .grace_ms = 5000 };
    struct fl_io io = { .out[0].capture = true, .stop = &stop, .timeout_ms = 100 };
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, &io, &r));
    fl_close(&p);
    ASSERT(r.timed_out);
    ASSERT_STR_EQ(r.out[0].data, "start\nbye\n");
    ASSERT(!r.out[0].eof_missed);
    ASSERT(!r.killed);
    fl_result_free(&r);
}

TEST(a_deadline_stops_a_member_that_outlives_the_child_with_no_pipe_open)
{
    /* The child ends at once; a member of its group that closed every fd
     * runs on. With an eof wait that reaches the deadline, the call waits
     * for it, and the deadline stops it as it would the child. */
    NEEDS_CLOSE_OTHERS();
    struct fl_proc p;
    char *ready = spawn_group_when_ready(&p, "sleep 30 </dev/null >/dev/null 2>&1 & "
                                             "echo $! >\"$0.pid\"; : >\"$0\"");
    struct fl_stop_policy stop = { .scope = FL_STOP_GROUP, .grace_ms = 2000 };
    struct fl_io io = { .stop = &stop, .timeout_ms = 300, .eof_wait_ms = -1 };
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, &io, &r));
    fl_close(&p);
    pid_t member = (pid_t)atol(t_read_file(t_fmt("%s.pid", ready)));
    bool runs = t_running(member);
    if (runs)
        kill(member, SIGKILL);
    ASSERT(!runs);
    ASSERT(r.timed_out);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT_EXITED(r.status, 0);
    fl_result_free(&r);
}

TEST(a_member_that_ends_before_the_deadline_is_waited_for_and_not_stopped)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_proc p;
    char *ready = spawn_group_when_ready(&p, "sleep 0.2 </dev/null >/dev/null 2>&1 & "
                                             "echo $! >\"$0.pid\"; : >\"$0\"");
    struct fl_stop_policy stop = { .scope = FL_STOP_GROUP };
    struct fl_io io = { .stop = &stop, .timeout_ms = 60000, .eof_wait_ms = -1 };
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, &io, &r));
    fl_close(&p);
    ASSERT(!t_running((pid_t)atol(t_read_file(t_fmt("%s.pid", ready)))));
    ASSERT(!r.timed_out);
    ASSERT_EQ(r.stop_signal, 0);
    ASSERT_EXITED(r.status, 0);
    fl_result_free(&r);
}

TEST(a_group_member_that_ignores_the_stop_gets_sigkill_at_the_grace_s_end)
{
    /* The leader ends on SIGTERM; a member that ignores it holds stdout.
     * With no end to the eof wait, only the SIGKILL at the grace's end
     * lets the call return. */
    NEEDS_CLOSE_OTHERS();
    struct fl_proc p;
    spawn_group_when_ready(&p, "(trap '' TERM; : >\"$0\"; exec sleep 30) & "
                               "while [ ! -e \"$0\" ]; do sleep 0.01; done; "
                               "head -c 5000 /dev/zero; sleep 30");
    struct fl_stop_policy stop = { .scope = FL_STOP_GROUP, .grace_ms = 200 };
    struct fl_io io = { .out[0] = { .capture = true, .limit = 100, .overflow = FL_OVERFLOW_STOP },
                        .stop = &stop, .eof_wait_ms = -1 };
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, &io, &r));
    fl_close(&p);
    ASSERT(r.stop_requested);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT(r.killed);
    ASSERT(!r.out[0].eof_missed);
    fl_result_free(&r);
}

TEST(a_group_killed_at_the_grace_s_end_is_not_an_eof_missed)
{
    /* Every member ignores SIGTERM and holds stdout: SIGKILL ends them all
     * at once, and the pipe's end comes a moment later, as they exit. */
    NEEDS_CLOSE_OTHERS();
    struct fl_proc p;
    spawn_group_when_ready(&p, "trap '' TERM; (sleep 30) & : >\"$0\"; sleep 30");
    struct fl_stop_policy stop = { .scope = FL_STOP_GROUP, .grace_ms = 300 };
    struct fl_io io = { .out[0].capture = true, .stop = &stop, .timeout_ms = 100,
                        .eof_wait_ms = -1 };
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, &io, &r));
    fl_close(&p);
    ASSERT(r.timed_out);
    ASSERT(r.killed);
    ASSERT_SIGNALED(r.status, SIGKILL);
    ASSERT(!r.out[0].eof_missed);
    fl_result_free(&r);
}

/* The number at the start of file dir/name, or -1 (no such file: a root
 * cgroup, a controller not enabled there; or "max"). */
static long long number_in(const char *dir, const char *name)
{
    char buf[64] = { 0 };
    int fd = open(t_fmt("%s/%s", dir, name), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n > 0 && buf[0] >= '0' && buf[0] <= '9' ? atoll(buf) : -1;
}

/* The memory this process may still take, in MiB: MemAvailable, or less
 * where a memory limit of its cgroup or of one above leaves less room
 * (cgroup v2, or v1's memory hierarchy). */
static long long available_mib(void)
{
    static const struct { const char *controller, *mount, *limit, *usage; } kinds[] = {
        { "", "/sys/fs/cgroup", "memory.max", "memory.current" },
        { "memory", "/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes" },
    };
    char *info = t_read_file("/proc/meminfo");
    const char *at = strstr(info, "MemAvailable:");
    long long room = at ? atoll(at + strlen("MemAvailable:")) / 1024 : 0;
    char *own = t_read_file("/proc/self/cgroup");
    /* Lines "ID:CONTROLLERS:/PATH"; v2's has no controllers. */
    for (char *line = strtok(own, "\n"); line; line = strtok(NULL, "\n")) {
        char *controllers = strchr(line, ':'), *path = controllers ? strchr(controllers + 1, ':') : NULL;
        if (!path)
            continue;
        *path++ = '\0';
        controllers++;
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
            bool ours = k == 0 ? *controllers == '\0' : strstr(controllers, kinds[k].controller) != NULL;
            char dir[4096];
            if (!ours || snprintf(dir, sizeof dir, "%s%s", kinds[k].mount, path) >= (int)sizeof dir)
                continue;
            for (size_t top = strlen(kinds[k].mount); strlen(dir) > top; *strrchr(dir, '/') = '\0') {
                long long limit = number_in(dir, kinds[k].limit), used = number_in(dir, kinds[k].usage);
                if (limit >= 0 && used >= 0 && (limit - used) / (1024 * 1024) < room)
                    room = (limit - used) / (1024 * 1024);
            }
        }
    }
    return room;
}

TEST(a_killed_group_member_slow_to_exit_still_gives_its_eof)
{
    /* A member that holds 2 GiB takes a while to exit on a SIGKILL (the
     * kernel frees its memory before it closes its fds): the eof wait
     * lasts while the group it killed is still exiting. */
    NEEDS_CLOSE_OTHERS();
    if (available_mib() < 4096)
        SKIP("needs 4 GiB of memory available, for a member that holds 2");
    struct fl_proc p;
    spawn_group_when_ready_with(&p, "trap '' TERM; \"$1\" --out \"$0\" hold-memory 2048 proc "
                                    "sleep 30 & sleep 30",
                                fl_test_probe);
    struct fl_stop_policy stop = { .scope = FL_STOP_GROUP, .grace_ms = 100 };
    struct fl_io io = { .out[0].capture = true, .stop = &stop, .timeout_ms = 100,
                        .eof_wait_ms = -1 };
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, &io, &r));
    fl_close(&p);
    ASSERT(r.killed);
    ASSERT(!r.out[0].eof_missed);
    fl_result_free(&r);
}

static int stop_at_once(void *ctx, int stream, const char *data, size_t len)
{
    (void)ctx, (void)stream, (void)data, (void)len;
    return 1;
}

TEST(a_sigkill_stop_asked_during_the_eof_wait_gives_the_killed_their_time)
{
    /* The leader has ended, and the eof wait (0.1 s) runs, when a member
     * that holds 2 GiB (slow to exit) writes: the callback asks for a stop
     * whose first signal is SIGKILL. The killed group gets its time to
     * exit all the same, and its end of the pipe is seen. */
    NEEDS_CLOSE_OTHERS();
    if (available_mib() < 4096)
        SKIP("needs 4 GiB of memory available, for a member that holds 2");
    struct fl_proc p;
    char *ready = spawn_group_when_ready_with(
        &p, "\"$1\" --out \"$0\" hold-memory 2048 proc wait-orphaned "
            "echo go sleep 30 & while [ ! -s \"$0\" ]; do sleep 0.01; done",
        fl_test_probe);
    pid_t leader = p.pid;
    struct fl_stop_policy stop = { .signal = SIGKILL, .scope = FL_STOP_GROUP };
    struct fl_io io = { .out[0] = { .capture = true, .on_output = stop_at_once },
                        .stop = &stop, .eof_wait_ms = 100 };
    struct fl_result r;
    int e = fl_communicate(&p, &io, &r);
    fl_close(&p);
    if (e == 0 && !r.stop_requested) {
        /* No stop: the member, an orphan now that no case's cleanup
         * reaches, may still be there (its "go" landed as the pipe was
         * closed), holding 2 GiB and the runner's stderr for 30 s. Its
         * report is whole: the leader ended only once it was written. */
        pid_t member = (pid_t)t_get_num(t_read_file(ready), "pid");
        if (getpgid(member) == leader)
            kill(member, SIGKILL);
        SKIP("the member wrote after the 0.1 s eof wait (a busy machine): nothing to see");
    }
    ASSERT_ERR(e, ECANCELED);
    ASSERT(r.killed);
    ASSERT(!r.out[0].eof_missed);
    fl_result_free(&r);
}

TEST(the_eof_wait_does_not_wait_for_a_group_that_the_kill_did_not_reach)
{
    /* With SIGCHLD ignored the kernel reaps the leader as it ends: the
     * stop's SIGKILL may then not go to its group (the id could be
     * anyone's by then), and the eof wait must not wait for that group
     * either. Its member would end in 4 s; the call ends long before. */
    NEEDS_CLOSE_OTHERS();
    signal(SIGCHLD, SIG_IGN);
    struct fl_proc p;
    char *ready = spawn_group_when_ready_with(
        &p, "sh -c 'trap \"\" TERM; echo $$ >\"$0.pid\"; mv \"$0.pid\" \"$0\"; exec sleep 4' \"$0\" & "
            "while :; do sleep 0.01; done",
        NULL);
    pid_t member = (pid_t)atoi(t_read_file(ready));
    ASSERT_GT(member, 0);
    /* The leader ends on the deadline's SIGTERM, and is gone when its
     * grace ends. */
    struct fl_stop_policy stop = { .scope = FL_STOP_GROUP, .grace_ms = 1000 };
    struct fl_io io = { .out[0].capture = true, .stop = &stop, .timeout_ms = 100,
                        .eof_wait_ms = -1 };
    struct fl_result r;
    ASSERT_ERR(fl_communicate(&p, &io, &r), ECHILD);   /* the kernel reaped the leader */
    ASSERT(t_running(member));
    ASSERT(r.out[0].eof_missed);
    kill(member, SIGKILL);
    fl_result_free(&r);
    fl_close(&p);
}

/* The callback of the next case: it asks for the stop only once the child
 * has ended, on a SIGTERM (left unreaped). Left to the stop's own SIGTERM,
 * a child that a busy machine is slow to run could still be there when
 * the grace runs out, and get the SIGKILL. */
struct ended_then_stop {
    pid_t pid;
    char data[256];
    size_t len;
};

static int end_then_stop(void *ctx, int stream, const char *d, size_t n)
{
    (void)stream;
    struct ended_then_stop *e = ctx;
    if (e->len + n < sizeof e->data) {
        memcpy(e->data + e->len, d, n);
        e->len += n;
    }
    kill(e->pid, SIGTERM);
    wait_ended(e->pid);
    return 1;
}

TEST(a_process_that_ends_on_the_first_signal_is_not_reported_killed)
{
    /* The stop finds the child ended, though not yet seen to be. A
     * grandchild keeps stdout open past the grace (the eof wait outlasts
     * it): the SIGKILL due at the grace's end has no process left to
     * reach. */
    struct fl_proc p;
    spawn_piped(&p, PROBE("hold-fds", "30", "sleep", "30"), false, true, true);
    struct ended_then_stop e = { .pid = p.pid };
    /* A second: the caller itself may stall between the stop's start and
     * its next look at the child. */
    struct fl_stop_policy stop = { .grace_ms = 1000 };
    struct fl_io io = { .out[0] = { .on_output = end_then_stop, .ctx = &e }, .stop = &stop,
                        .eof_wait_ms = 2000 };
    struct fl_result r;
    ASSERT_ERR(fl_communicate(&p, &io, &r), ECANCELED);
    fl_close(&p);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT_SIGNALED(r.status, SIGTERM);
    ASSERT(!r.killed);
    kill((pid_t)t_get_num(e.data, "grandchild"), SIGKILL);
    fl_result_free(&r);
}

TEST(a_stop_asked_on_the_last_partial_line_at_the_eof_wait_s_end_is_ecanceled)
{
    /* The line "STOP" has no newline and a background child holds the
     * pipe: it reaches the callback only when the wait gives up. */
    struct collected c = { .stop_after = 2 };
    struct fl_io io = { .out[0] = { .on_output = collect, .ctx = &c, .lines = true },
                        .eof_wait_ms = 200 };
    struct fl_result r;
    run_sh("printf 'a\\nSTOP'; sleep 2 &", &io, &r, ECANCELED);
    ASSERT_EQ(c.calls, 2);
    ASSERT(r.stop_requested);
    ASSERT_EXITED(r.status, 0);
    ASSERT_EQ(r.stop_signal, 0);   /* nothing was left to stop */
    fl_result_free(&r);
}

TEST(communicate_on_a_reaped_handle_is_esrch_even_with_input)
{
    struct fl_proc p;
    spawn_piped(&p, PROBE("exit", "0"), true, true, true);
    ASSERT_EXITED(t_wait(&p), 0);
    struct fl_io io = { .input = "x", .input_len = 1 };
    struct fl_result r;
    ASSERT_ERR(fl_communicate(&p, &io, &r), ESRCH);
    fl_close(&p);
}

static void on_alarm(int sig)
{
    (void)sig;
}

TEST(a_flood_of_signals_without_sa_restart_does_not_break_the_exchange) /* stress */
{
    struct sigaction sa = { .sa_handler = on_alarm }, old_sa;  /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    ASSERT_SYS(sigaction(SIGALRM, &sa, &old_sa));
    struct itimerval every_ms = { { 0, 1000 }, { 0, 1000 } }, off = { 0 };
    ASSERT_SYS(setitimer(ITIMER_REAL, &every_ms, NULL));
    size_t n = 8 * MIB;
    struct fl_io io = { .input = pattern(n), .input_len = n };
    struct fl_result r;
    run_io(PROBE("tee2"), true, &io, &r, 0);
    ASSERT_SYS(setitimer(ITIMER_REAL, &off, NULL));
    ASSERT_SYS(sigaction(SIGALRM, &old_sa, NULL));
    ASSERT_EXITED(r.status, 0);
    assert_pattern(&r.out[0], 0, n);
    assert_pattern(&r.out[1], 0, n);
    ASSERT_EQ(r.input_written, n);
    fl_result_free(&r);
}

TEST(a_handle_without_a_pidfd_communicates_and_leaves_no_fd)
{
    struct fl_cmd cmd = {
        .argv = PROBE("cat"),
        .stdio = { { .kind = FL_PIPE }, { .kind = FL_PIPE } },
        .flags = FL_NO_PIDFD,
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.pidfd, -1);
    struct fl_io io = { .input = "no pidfd", .input_len = 8, .timeout_ms = 30000 };
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, &io, &r));
    fl_close(&p);
    ASSERT_EXITED(r.status, 0);
    ASSERT_STR_EQ(r.out[0].data, "no pidfd");
    fl_result_free(&r);  /* the runner checks that the borrowed pidfd is closed */
}

/* ---- refusals ---------------------------------------------------------------- */

TEST(a_bad_io_is_einval_and_touches_nothing)
{
    struct fl_proc p;
    spawn_piped(&p, PROBE("cat"), false, true, true);
    struct fl_result r = { .exit_code = 42 };
    struct fl_io bad[] = {
        { .reserved_ = { &r } },
        { .eof_wait_ms = -2 },
        { .timeout_ms = -1 },
        { .input = "x", .input_len = 1 },  /* no stdin pipe */
        { .input_len = 1 },
        { .out[0] = { .overflow = 7 } },
        { .out[0] = { .buf = (char[4]){ 0 }, .size = 0 } },
        { .out[0] = { .size = 4 } },
        { .out[1] = { .lines = true } },
        { .stop = &(struct fl_stop_policy){ .signal = -1 } },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ASSERT_ERR(fl_communicate(&p, &bad[i], &r), EINVAL);
    ASSERT_EQ(r.exit_code, 42);
    ASSERT_GE(p.stdio[1], 0);
    ASSERT_OK(fl_kill(&p, 0));
    ASSERT_OK(fl_communicate(&p, NULL, &r));  /* cat's stdin is /dev/null */
    ASSERT_EXITED(r.status, 0);
    fl_close(&p);
    fl_result_free(&r);
}

/* ---- memory ------------------------------------------------------------------ */

TEST(a_buffer_that_cannot_grow_stops_the_child_with_enomem)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    SKIP("the sanitizers' shadow memory does not fit under a low RLIMIT_AS");
#else
    struct fl_proc p;
    spawn_piped(&p, PROBE("spew", "1", "100000000000"), false, true, false);
    /* Set after the spawn: the child keeps the limit it started with. */
    struct rlimit old = t_lower_address_space(256 * MIB);
    struct fl_result r;
    int err = fl_communicate(&p, NULL, &r);
    ASSERT_SYS(setrlimit(RLIMIT_AS, &old));
    fl_close(&p);
    ASSERT_ERR(err, ENOMEM);
    ASSERT_EQ(r.stop_signal, SIGTERM);
    ASSERT_SIGNALED(r.status, SIGTERM);
    ASSERT_GT(r.out[0].len, 0);  /* what was kept is there, as a string */
    ASSERT_EQ(r.out[0].data[r.out[0].len], '\0');
    ASSERT_GT(r.out[0].dropped, 0);
    fl_result_free(&r);
#endif
}
