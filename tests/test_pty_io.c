/*
 * test_pty_io.c: fl_communicate() and fl_run() on a pty master: its
 * output into out[0] (raw: exact bytes; cooked: "\r\n"), a child that sees
 * a terminal while captured, input with VEOF after it (whole and partial
 * last lines, none), EIO as the end, a large raw output, the master
 * closed after the exchange, a grandchild that holds the terminal side,
 * a child that closes its terminal and works on (or writes to /dev/tty
 * later), and the stdout pipe that would conflict with the pty.
 */
#include "test.h"
#include "pattern.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

/* The terminal's settings: the kernel's defaults (echo, "\r\n", lines),
 * raw, or raw but for lines and VEOF (no echo, no "\r", but an end of
 * file can be sent). */
enum mode { COOKED, RAW, LINES };

/* A command on a pty for the streams which[k] == 'p' (the others
 * FL_NULL). */
struct pty_cmd {
    struct fl_cmd cmd;
    struct termios raw;
    struct fl_tty_options tty;
};

static void pty_cmd(struct pty_cmd *c, char *const *argv, const char *which, enum mode mode)
{
    *c = (struct pty_cmd){ .raw = t_raw_termios() };
    c->cmd = (struct fl_cmd){ .argv = argv, .backend = BACKEND };
    for (int k = 0; k < 3; k++)
        c->cmd.stdio[k].kind = which[k] == 'p' ? FL_PTY : FL_NULL;
    if (mode == LINES) {
        c->raw.c_lflag |= ICANON;
        c->raw.c_cc[VEOF] = 4;  /* ^D */
    }
    if (mode != COOKED) {
        c->tty.termios = &c->raw;
        c->cmd.tty = &c->tty;
    }
}

/* Spawns the command and communicates with io; the master is gone after. */
static int communicate(const struct fl_cmd *cmd, const struct fl_io *io, struct fl_result *r)
{
    struct fl_proc p;
    SPAWN(cmd, &p);
    int master = p.pty;
    ASSERT_GE(master, 0);
    int err = fl_communicate(&p, io, r);
    ASSERT_EQ(p.pty, -1);
    ASSERT_EQ(fcntl(master, F_GETFD), -1);  /* closed, not only forgotten */
    ASSERT_EQ(errno, EBADF);
    fl_close(&p);
    return err;
}

TEST(raw_output_arrives_exactly)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("print", "1", "one\\ntwo\\n three"), "npn", RAW);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, NULL, &r));
    ASSERT_EXITED(r.status, 0);
    ASSERT_EQ(r.out[0].len, 14);
    ASSERT_STR_EQ(r.out[0].data, "one\ntwo\n three");
    ASSERT(!r.out[0].eof_missed);
    ASSERT_EQ(r.out[1].len, 0);
    fl_result_free(&r);
}

TEST(cooked_output_has_crlf)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("echo", "one", "echo", "two"), "npn", COOKED);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, NULL, &r));
    ASSERT_EXITED(r.status, 0);
    ASSERT_STR_EQ(r.out[0].data, "one\r\ntwo\r\n");
    fl_result_free(&r);
}

/* Every fd on the pty goes to out[0], in the order of the writes. */
TEST(stdout_and_stderr_on_the_pty_merge_into_out0)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("echo", "a", "stderr", "b", "echo", "c"), "npp", RAW);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, NULL, &r));
    ASSERT_STR_EQ(r.out[0].data, "a\nb\nc\n");
    fl_result_free(&r);
}

/* A stderr pipe besides the pty stays out[1]. */
TEST(a_stderr_pipe_besides_the_pty_is_out1)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("echo", "a", "stderr", "b"), "npn", RAW);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    c.cmd.stdio[2].kind = FL_PIPE;
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, NULL, &r));
    ASSERT_STR_EQ(r.out[0].data, "a\n");
    ASSERT_STR_EQ(r.out[1].data, "b\n");
    fl_result_free(&r);
}

TEST(a_captured_child_sees_a_terminal)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("tty"), "npn", RAW);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, NULL, &r));
    ASSERT_EXITED(r.status, 0);
    const char *rep = r.out[0].data;
    ASSERT_EQ(t_get_num(rep, "isatty0"), 0);
    ASSERT_EQ(t_get_num(rep, "isatty1"), 1);
    ASSERT_EQ(t_get_num(rep, "isatty2"), 0);
    ASSERT_EQ(t_get_num(rep, "tty_sid"), t_get_num(rep, "tty_pid"));
    ASSERT_EQ(t_get_num(rep, "icanon"), 0);
    fl_result_free(&r);
}

/* The probe's "drained N" and "sum" of what it read before its EOF (not
 * at the start of a line after the echo of a partial one). */
static void expect_drained(const char *out, const char *input)
{
    size_t n = strlen(input);
    uint64_t sum = fl_fnv1a(FL_FNV1A_INIT, (const unsigned char *)input, n);
    ASSERT_STR_CONTAINS(out, t_fmt("drained %zu\r\nsum %016llx\r\n", n,
                                   (unsigned long long)sum));
}

TEST(a_child_that_ends_before_taking_the_input_closes_it)
{
    NEEDS_PTY();
    /* More than a terminal's input queue holds, to a child that reads
     * none: the terminal goes with the child, as a pipe's reader would,
     * and the result says the input was not all taken. */
    static char input[1 << 20];
    memset(input, 'x', sizeof input);
    for (size_t i = 100; i < sizeof input; i += 100)
        input[i] = '\n';
    struct pty_cmd c;
    pty_cmd(&c, PROBE("exit", "0"), "ppn", RAW);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_io io = { .input = input, .input_len = sizeof input, .timeout_ms = 20000 };
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, &io, &r));
    ASSERT(!r.timed_out);
    ASSERT_EXITED(r.status, 0);
    ASSERT_GT(sizeof input, r.input_written);
    ASSERT(r.input_closed);
    fl_result_free(&r);
}

/* Feeds input to a probe "drain" on a cooked pty (stdin and stdout): the
 * child must see all of it, then the end of file, and exit. */
static void feed_drain(const char *input)
{
    struct pty_cmd c;
    pty_cmd(&c, PROBE("drain"), "ppn", COOKED);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_io io = { .input = input, .input_len = strlen(input), .timeout_ms = 20000 };
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, &io, &r));
    ASSERT(!r.timed_out);
    ASSERT_EXITED(r.status, 0);
    ASSERT_EQ(r.input_written, strlen(input));
    ASSERT(!r.input_closed);
    expect_drained(r.out[0].data, input);
    fl_result_free(&r);
}

TEST(input_in_canonical_mode_reaches_the_child_then_eof)
{
    NEEDS_PTY();
    feed_drain("hello\nworld\n");
}

/* The first VEOF only hands the partial line over; the second ends it. */
TEST(a_partial_last_line_still_gets_eof)
{
    NEEDS_PTY();
    feed_drain("hello\nwor");
}

/* Input that ends a line its own way gets one VEOF, the end: a second
 * would be a second end of file, which the child's next read takes. The
 * child reads to an end twice; only the deadline ends its second read. */
/* The terminal starts with these settings (NULL: the kernel's). */
static void use_settings(struct pty_cmd *c, const struct termios *settings)
{
    if (!settings)
        return;
    c->raw = *settings;
    c->tty.termios = &c->raw;
    c->cmd.tty = &c->tty;
}

static void one_eof_after(const char *input, const struct termios *settings)
{
    struct pty_cmd c;
    pty_cmd(&c, ARGV("/bin/sh", "-c", "cat >/dev/null; echo first-end; cat >/dev/null; "
                                      "echo second-end"),
            "ppn", COOKED);
    c.cmd.env_set = TOOLS_PATH_ENV;
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    use_settings(&c, settings);
    struct fl_io io = { .input = input, .input_len = strlen(input), .timeout_ms = 500 };
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, &io, &r));
    ASSERT_STR_CONTAINS(r.out[0].data, "first-end");
    if (strstr(r.out[0].data, "second-end"))
        FAIL("two ends of file after %s: %s", input, r.out[0].data);
    ASSERT(r.timed_out);
    fl_result_free(&r);
}

TEST(input_ending_in_a_carriage_return_gets_one_eof)
{
    NEEDS_PTY();
    one_eof_after("abc\r", NULL);  /* ICRNL: read as "\n" */
}

static struct termios kernel_defaults(void)
{
    struct termios t;
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    ASSERT_SYS(m);
    ASSERT_SYS(tcgetattr(m, &t));
    close(m);
    return t;
}

TEST(input_ending_in_veol_gets_one_eof)
{
    NEEDS_PTY();
    struct termios t = kernel_defaults();
    t.c_cc[VEOL] = ';';
    one_eof_after("abc;", &t);
}

/* VEOL2 ends a line only with IEXTEN: here a partial line, two VEOFs. */
TEST(input_ending_in_veol2_without_iexten_gets_its_end_of_file)
{
    NEEDS_PTY();
    struct termios t = kernel_defaults();
    t.c_cc[VEOL2] = ';';
    t.c_lflag &= ~(tcflag_t)IEXTEN;
    one_eof_after("abc;", &t);
}

/* A "\r" after VLNEXT (^V) is a byte of the line, which stays partial. */
TEST(input_ending_in_an_escaped_carriage_return_gets_its_end_of_file)
{
    NEEDS_PTY();
    one_eof_after("abc\x16\r", NULL);
}

/* Input that gives its own end of file (VEOF at a line's start) gets no
 * second one. */
TEST(input_ending_in_its_own_end_of_file_gets_no_other)
{
    NEEDS_PTY();
    one_eof_after("abc\n\x04", NULL);
}

/* An erase that empties the line leaves it at its start: one VEOF. */
TEST(input_ending_in_an_erased_line_gets_one_eof)
{
    NEEDS_PTY();
    one_eof_after("ab\x7f\x7f", NULL);   /* VERASE twice */
    one_eof_after("abc def\x17\x17", NULL);  /* VWERASE twice */
    one_eof_after("abc\x15", NULL);        /* VKILL */
}

/* Flow control bytes (IXON) are no input: the line ended before them. */
TEST(input_ending_in_a_flow_control_byte_gets_one_eof)
{
    NEEDS_PTY();
    one_eof_after("abc\n\x11", NULL);
}

/* The whole input counts: a VEOF that hands over a line that began more
 * than a line's length of ignored bytes before is no end of file. */
TEST(input_read_whole_to_judge_its_end)
{
    NEEDS_PTY();
    struct termios t = kernel_defaults();
    t.c_iflag |= IGNCR;
    char *in = t_keep(malloc(4098));
    in[0] = 'a';
    memset(in + 1, '\r', 4095);
    in[4096] = '\x04';
    in[4097] = '\0';
    one_eof_after(in, &t);
}

/* Word erase takes letters as the kernel's Latin-1 ctype has them, and
 * whole UTF-8 characters under IUTF8: the line is empty after it. */
TEST(input_ending_in_a_word_erase_of_non_ascii_letters_gets_one_eof)
{
    NEEDS_PTY();
    struct termios t = kernel_defaults();
    t.c_iflag |= IUTF8;
    one_eof_after("\xc3\xa9lan\x17", &t);
    t.c_iflag &= ~(tcflag_t)IUTF8;
    one_eof_after("\xe9lan\x17", &t);
}

/* A VKILL that is also VWERASE erases a word, as n_tty's eraser() reads
 * it: "a " is left, a partial line. */
TEST(a_kill_that_is_also_the_word_erase_leaves_a_partial_line)
{
    NEEDS_PTY();
    struct termios t = kernel_defaults();
    t.c_cc[VWERASE] = t.c_cc[VKILL];
    one_eof_after("a b\x15", &t);
}

/* No VEOF reaches the child, echo off: it reads 4 bytes and shows them
 * in hex (od), and a VEOF would make them up, as veof_hex (the byte the
 * child would get for it) among them. */
static void no_veof_reaches_the_child(const char *input, struct termios settings,
                                      const char *veof_hex)
{
    struct pty_cmd c;
    /* Without them nothing would show a VEOF, and the case would pass. */
    t_tool("head");
    t_tool("od");
    pty_cmd(&c, ARGV("/bin/sh", "-c", "head -c 4 | od -An -tx1"), "ppn", COOKED);
    c.cmd.env_set = TOOLS_PATH_ENV;
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    settings.c_lflag &= ~(tcflag_t)ECHO;
    use_settings(&c, &settings);
    struct fl_io io = { .input = input, .input_len = strlen(input), .timeout_ms = 500 };
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, &io, &r));
    if (r.out[0].data && strstr(r.out[0].data, veof_hex))
        FAIL("a VEOF reached the child after %s: %s", input, r.out[0].data);
    fl_result_free(&r);
}

/* A VEOF that the settings read otherwise ("\r" read as "\n" here) can
 * end no file: none is written, where two would add two lines. */
TEST(a_veof_that_cannot_end_the_input_is_not_written)
{
    NEEDS_PTY();
    struct termios t = kernel_defaults();
    t.c_cc[VEOF] = '\r';
    no_veof_reaches_the_child("abc", t, "0a");
}

/* EXTPROC: the line discipline hands bytes over unread, so a VEOF would
 * be data: none is written. */
TEST(extproc_input_gets_no_veof)
{
    NEEDS_PTY();
    struct termios t = kernel_defaults();
    t.c_lflag |= EXTPROC;
    no_veof_reaches_the_child("hi\n", t, "04");
}

/* ISTRIP: "\x8a" is read as "\n", which ends the line. */
TEST(input_ending_in_a_stripped_newline_gets_one_eof)
{
    NEEDS_PTY();
    struct termios t = kernel_defaults();
    t.c_iflag |= ISTRIP;
    one_eof_after("abc\x8a", &t);
}

/* No input: one VEOF, as a stdin pipe is closed at once. */
TEST(no_input_is_eof_at_once)
{
    NEEDS_PTY();
    feed_drain("");
}

/* Many lines, more than the terminal's buffers hold: written as the child
 * takes them, echoed meanwhile. */
TEST(sixty_kib_of_lines_reach_cat)
{
    NEEDS_PTY();
    enum { NLINES = 1024 };
    char *in = t_keep(malloc(NLINES * 60 + 1)), *at = in;
    for (int k = 0; k < NLINES; k++)
        at += sprintf(at, "line %04d %048d\n", k, k);
    struct pty_cmd c;
    pty_cmd(&c, PROBE("cat"), "ppn", LINES);  /* no echo: cat's copy alone */
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_io io = { .input = in, .input_len = (size_t)(at - in), .timeout_ms = 20000 };
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, &io, &r));
    ASSERT(!r.timed_out);
    ASSERT_EXITED(r.status, 0);
    ASSERT_EQ(r.input_written, (size_t)(at - in));
    ASSERT_STR_EQ(r.out[0].data, in);
    fl_result_free(&r);
}

/* Raw: no VEOF can be sent, so the child sees its input and no end. */
TEST(raw_input_reaches_the_child_without_eof)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("head", "1"), "ppn", RAW);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_io io = { .input = "x\n", .input_len = 2, .timeout_ms = 20000 };
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, &io, &r));
    ASSERT_EXITED(r.status, 0);
    ASSERT_STR_EQ(r.out[0].data, "x\n");
    fl_result_free(&r);
}

/* The child has ended before the exchange starts: the bytes, then EIO,
 * which is the end and no error. */
TEST(eio_after_the_child_ended_is_the_end)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("echo", "gone"), "npn", RAW);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_proc p;
    SPAWN(&c.cmd, &p);
    siginfo_t si;
    ASSERT_SYS(waitid(P_PID, (id_t)p.pid, &si, WEXITED | WNOWAIT));
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, NULL, &r));
    ASSERT_EXITED(r.status, 0);
    ASSERT_STR_EQ(r.out[0].data, "gone\n");
    ASSERT(!r.out[0].eof_missed);
    fl_close(&p);
    fl_result_free(&r);
}

/* Linux takes input on a master after the child has ended (and drops
 * it): only the read says EIO there. A write that says EIO, as where the
 * terminal side is gone for good, is the end of the input, as EPIPE is
 * on a pipe (input_closed), and no error of the call. A seccomp filter in
 * a helper process makes the master's write say it, once the child has
 * ended; a helper that cannot have the filter exits NO_FILTER_HERE. */
#if defined(__x86_64__)
#define T_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define T_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#define NO_FILTER_HERE 77

/* From now on, write(fd, ...) in this process fails with err. 0, or -1. */
static int writes_to_fail(int fd, int err)
{
#ifndef T_AUDIT_ARCH
    (void)fd, (void)err;
    errno = ENOTSUP;
    return -1;
#else
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, T_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 0, 3),
        /* The fd's low 32 bits: both architectures are little-endian. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)fd, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = sizeof f / sizeof *f, .filter = f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
#endif
}

TEST(eio_writing_the_input_to_the_master_ends_the_feeding_without_error)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("echo", "gone"), "ppn", RAW);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    pid_t h = fork();
    ASSERT_SYS(h);
    if (h == 0) {
        struct fl_proc p;
        SPAWN(&c.cmd, &p);
        siginfo_t si;
        ASSERT_SYS(waitid(P_PID, (id_t)p.pid, &si, WEXITED | WNOWAIT));
        if (writes_to_fail(p.pty, EIO) != 0) {
            t_kill_wait(&p);
            _exit(NO_FILTER_HERE);
        }
        struct fl_io io = { .input = "late\n", .input_len = 5 };
        struct fl_result r;
        ASSERT_OK(fl_communicate(&p, &io, &r));
        ASSERT_EXITED(r.status, 0);
        ASSERT(r.input_closed);
        ASSERT_EQ(r.input_written, 0);
        ASSERT_STR_EQ(r.out[0].data, "gone\n");
        fl_close(&p);
        fl_result_free(&r);
        _exit(0);
    }
    int st;
    ASSERT_EQ(waitpid(h, &st, 0), h);
    if (WIFEXITED(st) && WEXITSTATUS(st) == NO_FILTER_HERE)
        SKIP("no seccomp filter to be had here (another architecture, or seccomp off): "
             "no way to make the master's write say EIO");
    ASSERT_EXITED(st, 0);
}

TEST(four_mib_through_a_raw_pty_arrive_exactly)
{
    NEEDS_PTY();
    enum { N = 4 << 20 };
    struct pty_cmd c;
    pty_cmd(&c, PROBE("spew", "1", "4194304"), "npn", RAW);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_io io = { .out[0].capture = true, .timeout_ms = 20000 };
    struct fl_result r;
    ASSERT_OK(fl_run(&c.cmd, &io, &r, NULL));
    ASSERT_EXITED(r.status, 0);
    ASSERT_EQ(r.out[0].len, N);
    ASSERT_EQ(r.out[0].total, N);
    unsigned char *want = t_keep(malloc(N));
    fl_pattern_fill(want, 0, N);
    ASSERT(memcmp(r.out[0].data, want, N) == 0);
    fl_result_free(&r);
}

/* fl_run() feeds and captures through the master: no pipe is made. */
TEST(fl_run_feeds_and_captures_a_pty)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("tty", "drain"), "ppn", LINES);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_io io = { .input = "abc\n", .input_len = 4, .out[0].capture = true,
                        .timeout_ms = 20000 };
    struct fl_result r;
    ASSERT_OK(fl_run(&c.cmd, &io, &r, NULL));
    ASSERT_EXITED(r.status, 0);
    ASSERT_EQ(t_get_num(r.out[0].data, "isatty0"), 1);
    ASSERT_EQ(t_get_num(r.out[0].data, "isatty1"), 1);
    ASSERT_STR_CONTAINS(r.out[0].data, "drained 4\n");
    fl_result_free(&r);
}

TEST(fl_run_stops_the_group_of_a_child_on_a_pty_of_its_own)
{
    NEEDS_PTY();
    /* A pty child leads a session, so a group: FL_STOP_GROUP needs no
     * FL_NEW_PGROUP or FL_SETSID beside it, as fl_communicate() needs none. */
    struct pty_cmd c;
    pty_cmd(&c, PROBE("sleep", "30"), "ppn", RAW);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_stop_policy stop = { .scope = FL_STOP_GROUP, .signal = SIGKILL };
    struct fl_io io = { .out[0].capture = true, .timeout_ms = 100, .stop = &stop };
    struct fl_result r;
    ASSERT_OK(fl_run(&c.cmd, &io, &r, NULL));
    ASSERT(r.timed_out);
    ASSERT_SIGNALED(r.status, SIGKILL);
    fl_result_free(&r);
}

/* Lines to on_output come from the master as stream 1. */
static int count_lines(void *ctx, int stream, const char *data, size_t len)
{
    ASSERT_EQ(stream, 1);
    ASSERT_EQ(data[len - 1], '\n');
    ++*(int *)ctx;
    return 0;
}

TEST(on_output_gets_the_pty_as_stream_1)
{
    NEEDS_PTY();
    int lines = 0;
    struct pty_cmd c;
    pty_cmd(&c, PROBE("echo", "a", "echo", "b", "echo", "c"), "npn", COOKED);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_io io = { .out[0] = { .on_output = count_lines, .ctx = &lines, .lines = true } };
    struct fl_result r;
    ASSERT_OK(communicate(&c.cmd, &io, &r));
    ASSERT_EQ(lines, 3);
    fl_result_free(&r);
}

/* The kernel sends SIGHUP to the terminal's foreground group when its
 * session leader exits, which ends a grandchild that does not block it. */
TEST(a_grandchild_holding_the_pty_is_given_up_after_eof_wait)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("echo", "hi", "hold-fds", "30", "exit", "0"), "npn", RAW);
    sigset_t hup;
    sigemptyset(&hup);
    sigaddset(&hup, SIGHUP);
    c.cmd.sigmask = &hup;
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    struct fl_io io = { .eof_wait_ms = 200, .timeout_ms = 20000 };
    struct fl_result r;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ASSERT_OK(communicate(&c.cmd, &io, &r));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ASSERT_EXITED(r.status, 0);
    ASSERT(r.out[0].eof_missed);
    ASSERT(!r.timed_out);
    ASSERT_STR_CONTAINS(r.out[0].data, "hi\n");
    pid_t grandchild = (pid_t)t_get_num(r.out[0].data, "grandchild");
    ASSERT_GT(grandchild, 0);
    kill(grandchild, SIGKILL);
    ASSERT_LE(t1.tv_sec - t0.tv_sec, 15);  /* well before the grandchild's 30 s */
    fl_result_free(&r);
}

/* A stdout pipe and the pty would both be out[0]: refused. */
TEST(a_stdout_pipe_besides_a_pty_is_einval)
{
    NEEDS_PTY();
    struct pty_cmd c;
    pty_cmd(&c, PROBE("cat"), "pnn", COOKED);
    UNSUPPORTED_ON_POSIX_SPAWN(&c.cmd);
    c.cmd.stdio[1].kind = FL_PIPE;
    struct fl_proc p;
    SPAWN(&c.cmd, &p);
    struct fl_result r;
    ASSERT_ERR(fl_communicate(&p, NULL, &r), EINVAL);
    ASSERT_GE(p.pty, 0);  /* refused: nothing taken */
    ASSERT_GE(p.stdio[1], 0);
    t_kill_wait(&p);

    struct fl_error e;
    ASSERT_ERR(fl_run(&c.cmd, NULL, &r, &e), EINVAL);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
    c.cmd.stdio[1].kind = FL_INHERIT;
    struct fl_io io = { .out[0].capture = true };
    ASSERT_ERR(fl_run(&c.cmd, &io, &r, &e), EINVAL);
    ASSERT_STR_CONTAINS(e.detail, "pty");
}

TEST(a_child_that_closes_its_terminal_on_its_way_out_is_not_hung_up)
{
    /* head closes its stdout, then its stdin, then exits: the master's
     * EIO comes before the exit. Closed then, the master would hang the
     * terminal up, and SIGHUP would end the session leader on its way
     * out (a few runs in a hundred did). The master stays open until the
     * child has ended. */
    NEEDS_PTY();
    struct fl_cmd cmd = { .argv = ARGV(t_tool("head"), "-n", "1"), .backend = BACKEND,
                          .stdio = { { .kind = FL_PTY }, { .kind = FL_PTY } } };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_io io = { .input = "abc\n", .input_len = 4, .out = { { .capture = true } } };
    for (int i = 0; i < 100; i++) {
        struct fl_result r;
        struct fl_error e;
        ASSERT_OK(fl_run(&cmd, &io, &r, &e));
        ASSERT_EXITED(r.status, 0);
        ASSERT_STR_CONTAINS(r.out[0].data, "abc");
        fl_result_free(&r);
    }
}

static void refused_on_posix_spawn(const struct fl_cmd *cmd)
{
    UNSUPPORTED_ON_POSIX_SPAWN(cmd);
}

/* fl_run() of sh -c script with fds 0-2 on the pty, the tools in PATH.
 * False, with nothing run, where the backend refuses a pty (as it must). */
static bool run_sh_on_a_pty(const char *script, const struct fl_io *io, struct fl_result *r)
{
    NEEDS_PTY();
    struct fl_cmd cmd = {
        .argv = ARGV(t_tool("sh"), "-c", (char *)script),
        .env_set = TOOLS_PATH_ENV, .backend = BACKEND,
        .stdio = { { .kind = FL_PTY }, { .kind = FL_PTY }, { .kind = FL_PTY } } };
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        refused_on_posix_spawn(&cmd);
        return false;
    }
    struct fl_error e;
    ASSERT_OK(fl_run(&cmd, io, r, &e));
    return true;
}

TEST(a_child_that_closes_its_terminal_and_works_on_is_waited_for)
{
    /* As for a pipe, whose reader waits for a child that closed it: the
     * master stays open while the child lives (closed, it would hang the
     * terminal up, and SIGHUP would end the child's work). */
    struct fl_io io = { .out = { { .capture = true } } };
    struct fl_result r;
    if (!run_sh_on_a_pty("echo start; exec 0<&- 1>&- 2>&-; sleep 0.5; exit 3", &io, &r))
        return;
    ASSERT_EXITED(r.status, 3);
    ASSERT_STR_CONTAINS(r.out[0].data, "start");
    fl_result_free(&r);
}

TEST(what_a_child_writes_to_dev_tty_after_closing_its_terminal_is_read)
{
    /* It closes its end of the terminal, then opens /dev/tty and writes
     * more than a terminal holds: the master, looked at again while the
     * child lives, takes all of it, and the child ends by itself. */
    struct fl_io io = { .out = { { .capture = true, .discard = true } } };
    struct fl_result r;
    if (!run_sh_on_a_pty("exec 0<&- 1>&- 2>&-; sleep 0.3; head -c 200000 /dev/zero >/dev/tty; "
                         "exit 7", &io, &r))
        return;
    ASSERT_EXITED(r.status, 7);
    ASSERT_EQ(r.out[0].total, 200000);
    fl_result_free(&r);
}
