/* test_pty.c: terminals. FL_PTY streams (isatty, a session of its own
 * with the pty as controlling terminal, the window size and termios
 * given, ^C through the master, EIO at the end, a large output, no
 * master leaked), FL_SETCTTY, FL_FOREGROUND with fl_tty_reclaim(),
 * fl_pty_resize(), and the errors of each step. */
#include "test.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

/* A generous bound against a hang, never a measurement. */
enum { HANG_MS = 20000 };

/* Reads the master until EIO (every terminal side closed: the end of
 * the output) or EOF; anything else fails. */
static char *read_to_eio(int master)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    ASSERT(buf);
    for (;;) {
        struct pollfd pfd = { .fd = master, .events = POLLIN };
        int n = poll(&pfd, 1, HANG_MS);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            FAIL("no end of the pty's output after %d ms", HANG_MS);
        if (cap - len < 1024) {
            cap *= 2;
            buf = realloc(buf, cap);
            ASSERT(buf);
        }
        ssize_t r = t_read(master, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EIO)
            break;
        if (r < 0)
            FAIL("read on the master: %s", strerror(errno));
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = 0;
    return t_keep(buf);
}

/* The tty_nr of /proc/PID/stat for the terminal at master's other side. */
static long long tty_nr_of(int master)
{
    char name[64];
    struct stat st;
    ASSERT_OK(ptsname_r(master, name, sizeof name));
    ASSERT_SYS(stat(name, &st));
    unsigned maj = major(st.st_rdev), min = minor(st.st_rdev);
    return (long long)((min & 0xff) | (maj << 8) | ((min & ~0xffu) << 12));
}

static char *out_file(void)
{
    return t_fmt("%s/out", t_tmpdir());
}

/* Spawns cmd (whose probe writes its report to out), reads the master to
 * its end, waits for exit 0 and returns the report. */
static char *run_pty_probe(const struct fl_cmd *cmd, const char *out, long long *tty_nr)
{
    struct fl_proc p;
    SPAWN(cmd, &p);
    ASSERT_GE(p.pty, 0);
    ASSERT_EQ(p.stdio[0], -1);
    ASSERT_EQ(p.stdio[1], -1);
    ASSERT_EQ(p.stdio[2], -1);
    ASSERT(fcntl(p.pty, F_GETFD) & FD_CLOEXEC);
    if (tty_nr)
        *tty_nr = tty_nr_of(p.pty);
    read_to_eio(p.pty);
    ASSERT_EXITED(t_wait(&p), 0);
    return t_read_file(out);
}

TEST(pty_on_all_three_streams)
{
    NEEDS_PTY();
    char *out = out_file();
    struct fl_cmd cmd = {
        .argv = PROBE("--out", out, "tty", "fds"),
        .stdio = { { .kind = FL_PTY }, { .kind = FL_PTY }, { .kind = FL_PTY } },
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    long long nr;
    char *rep = run_pty_probe(&cmd, out, &nr);
    for (int fd = 0; fd < 3; fd++)
        ASSERT_EQ(t_get_num(rep, t_fmt("isatty%d", fd)), 1);
    long long pid = t_get_num(rep, "tty_pid");
    ASSERT_EQ(t_get_num(rep, "tty_sid"), pid);
    ASSERT_EQ(t_get_num(rep, "tty_pgid"), pid);
    ASSERT_EQ(t_get_num(rep, "tcpgrp"), pid);
    ASSERT_EQ(t_get_num(rep, "tty_nr"), nr);
    /* One terminal on all three, and no other fd: no master. */
    ASSERT_FDS_EXACTLY(rep, 0, 1, 2);
    struct t_fd f0 = t_fd_entry(rep, 0);
    ASSERT_STR_EQ(t_get(rep, "ttyname"), f0.target);
    ASSERT_STR_CONTAINS(f0.target, "/dev/pts/");
    for (int fd = 1; fd < 3; fd++) {
        ASSERT_STR_EQ(t_fd_entry(rep, fd).target, f0.target);
        ASSERT_EQ(t_fd_entry(rep, fd).ino, f0.ino);
    }
}

TEST(pty_on_one_stream_only)
{
    NEEDS_PTY();
    char *out = out_file();
    struct fl_cmd cmd = {
        .argv = PROBE("--out", out, "tty", "fds"),
        .stdio = { { .kind = FL_NULL }, { .kind = FL_PTY }, { .kind = FL_NULL } },
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    long long nr;
    char *rep = run_pty_probe(&cmd, out, &nr);
    ASSERT_EQ(t_get_num(rep, "isatty0"), 0);
    ASSERT_EQ(t_get_num(rep, "isatty1"), 1);
    ASSERT_EQ(t_get_num(rep, "isatty2"), 0);
    ASSERT_EQ(t_get_num(rep, "tty_sid"), t_get_num(rep, "tty_pid"));
    ASSERT_EQ(t_get_num(rep, "tty_nr"), nr);
    ASSERT_FDS_EXACTLY(rep, 0, 1, 2);
    ASSERT_STR_EQ(t_fd_entry(rep, 0).target, "/dev/null");
}

/* A map for the fd takes the place of .stdio: no pty is made for it. */
TEST(pty_stream_replaced_by_a_map_makes_none)
{
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    ASSERT_SYS(devnull);
    struct fl_cmd cmd = {
        .argv = PROBE("tty"),
        .stdio = { { .kind = FL_NULL }, { .kind = FL_PTY }, { .kind = FL_NULL } },
        .fds = (struct fl_fd_map[]){ { 1, devnull } },
        .nfds = 1,
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.pty, -1);
    ASSERT_EXITED(t_wait(&p), 0);
    close(devnull);
}

/* A raw terminal: no echo, no line editing, no output processing. */
/* The probe on a pty set up with tty sees the size and the flags want
 * gives: rows, cols, echo, icanon, isig, opost. */
static void expect_settings(const struct fl_tty_options *tty, const int want[6])
{
    static const char *const keys[6] = { "rows", "cols", "echo", "icanon", "isig", "opost" };
    char *out = out_file();
    struct fl_cmd cmd = {
        .argv = PROBE("--out", out, "tty"),
        .stdio = { { .kind = FL_PTY }, { .kind = FL_NULL }, { .kind = FL_NULL } },
        .tty = tty,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *rep = run_pty_probe(&cmd, out, NULL);
    for (int i = 0; i < 6; i++)
        if (t_get_num(rep, keys[i]) != want[i])
            FAIL("%s is %lld, expected %d", keys[i], t_get_num(rep, keys[i]), want[i]);
}

TEST(pty_default_settings)
{
    NEEDS_PTY();
    expect_settings(NULL, (int[]){ 0, 0, 1, 1, 1, 1 });
    expect_settings(&(struct fl_tty_options){ 0 }, (int[]){ 0, 0, 1, 1, 1, 1 });
}

TEST(pty_window_size_and_termios)
{
    NEEDS_PTY();
    struct termios raw = t_raw_termios();
    raw.c_lflag |= ISIG;  /* a mix, to see each flag taken as given */
    expect_settings(&(struct fl_tty_options){ .rows = 33, .cols = 121, .termios = &raw },
                    (int[]){ 33, 121, 0, 0, 1, 0 });
}

/* Pitfall 40: ^C written to the master is SIGINT for the child, which
 * has the pty as its controlling terminal. */
TEST(pty_ctrl_c_reaches_child)
{
    NEEDS_PTY();
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/sh", "-c",
                     "trap 'echo GOT-INT; exit 3' INT; echo READY; "
                     "while :; do sleep 0.1; done"),
        .env_set = TOOLS_PATH_ENV,
        .stdio = { { .kind = FL_PTY }, { .kind = FL_PTY }, { .kind = FL_PTY } },
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    t_read_until(p.pty, "READY");
    t_write_all(p.pty, "\x03", 1);
    t_read_until(p.pty, "GOT-INT");
    read_to_eio(p.pty);
    ASSERT_EXITED(t_wait(&p), 3);
}

/* The end of the output is EIO on the master, after the last byte. */
TEST(pty_master_read_ends_in_eio)
{
    NEEDS_PTY();
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "one", "echo", "two"),
        .stdio = { { .kind = FL_NULL }, { .kind = FL_PTY }, { .kind = FL_NULL } },
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    int st;
    ASSERT_OK(fl_wait(&p, -1, &st));
    ASSERT_EXITED(st, 0);
    /* The child is gone; the bytes it wrote are still there, then EIO. */
    ASSERT_STR_EQ(read_to_eio(p.pty), "one\r\ntwo\r\n");
    char c;
    ASSERT_EQ(read(p.pty, &c, 1), -1);
    ASSERT_EQ(errno, EIO);
    fl_close(&p);
}

/* 10 MiB through a raw pty to a reader that pauses: every byte arrives
 * (no OPOST, so no "\r" is added), and nothing hangs. */
TEST(pty_ten_mib_to_a_slow_reader) /* stress */
{
    NEEDS_PTY();
    enum { TOTAL = 10 << 20 };
    struct termios raw = t_raw_termios();
    struct fl_cmd cmd = {
        .argv = ARGV(t_tool("head"), "-c", "10485760", "/dev/zero"),
        .stdio = { { .kind = FL_NULL }, { .kind = FL_PTY }, { .kind = FL_NULL } },
        .tty = &(struct fl_tty_options){ .termios = &raw },
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    static char buf[4096];
    long long total = 0;
    unsigned reads = 0;
    for (;;) {
        struct pollfd pfd = { .fd = p.pty, .events = POLLIN };
        int n = poll(&pfd, 1, HANG_MS);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            FAIL("the pty stalled after %lld bytes", total);
        ssize_t r = t_read(p.pty, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EIO)
            break;
        ASSERT_GT(r, 0);
        for (ssize_t i = 0; i < r; i++)
            ASSERT_EQ(buf[i], 0);
        total += r;
        if (++reads % 256 == 0)  /* slow: let the writer fill the buffer */
            nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    }
    ASSERT_EQ(total, TOTAL);
    ASSERT_EXITED(t_wait(&p), 0);
}

static volatile int stop_flag;

/* Children that keep every fd they inherit (FL_KEEP_FDS: only
 * FD_CLOEXEC protects them) must never hold a pty of another thread's
 * spawn. */
static void *spawn_pty_children(void *arg)
{
    (void)arg;
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .stdio = { { .kind = FL_PTY }, { .kind = FL_PTY }, { .kind = FL_NULL } },
        .backend = BACKEND,
    };
    while (!stop_flag) {
        struct fl_proc p;
        SPAWN(&cmd, &p);
        read_to_eio(p.pty);
        ASSERT_EXITED(t_wait(&p), 0);
    }
    return NULL;
}

TEST(pty_master_not_leaked_to_other_threads)
{
    NEEDS_PTY();
    struct fl_cmd pty_cmd = {
        .argv = PROBE("exit", "0"),
        .stdio = { { .kind = FL_PTY } },
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&pty_cmd);
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, spawn_pty_children, NULL));
    struct fl_cmd cmd = {
        .argv = PROBE("fds"),
        .flags = FL_KEEP_FDS,
        .backend = BACKEND,
    };
    for (int i = 0; i < t_scaled(200); i++) {
        char *rep = t_probe(&cmd);
        struct t_fd fds[64];
        int n = t_fds(rep, fds, 64);
        for (int k = 0; k < n; k++)
            if (fds[k].fd > 2 &&  /* 0-2 may be the terminal ctest runs on */
                (strstr(fds[k].target, "/dev/ptmx") || strstr(fds[k].target, "/dev/pts/")))
                FAIL("fd %d of a child is a pty of another spawn: %s", fds[k].fd,
                     fds[k].target);
    }
    stop_flag = 1;
    ASSERT_OK(pthread_join(th, NULL));
}

TEST(pty_resize_sends_sigwinch)
{
    NEEDS_PTY();
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/sh", "-c",
                     "trap 'stty size; exit 0' WINCH; echo READY; "
                     "while :; do sleep 0.1; done"),
        .env_set = TOOLS_PATH_ENV,
        .stdio = { { .kind = FL_PTY }, { .kind = FL_PTY }, { .kind = FL_PTY } },
        .tty = &(struct fl_tty_options){ .rows = 10, .cols = 20 },
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    t_read_until(p.pty, "READY");
    ASSERT_OK(fl_pty_resize(p.pty, 42, 101));
    struct winsize ws;
    ASSERT_SYS(ioctl(p.pty, TIOCGWINSZ, &ws));
    ASSERT_EQ(ws.ws_row, 42);
    ASSERT_EQ(ws.ws_col, 101);
    t_read_until(p.pty, "42 101");
    read_to_eio(p.pty);
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(pty_resize_and_reclaim_errors)
{
    NEEDS_PTY();
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    ASSERT_SYS(null);
    errno = 1234;
    ASSERT_ERR(fl_pty_resize(null, 1, 1), ENOTTY);
    ASSERT_ERR(fl_pty_resize(-1, 1, 1), EBADF);
    ASSERT_ERR(fl_tty_reclaim(null), ENOTTY);
    ASSERT_ERR(fl_tty_reclaim(-1), EBADF);
    ASSERT_EQ(errno, 1234);
    /* A terminal that is not the caller's controlling terminal. */
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    ASSERT_SYS(m);
    ASSERT_SYS(grantpt(m));
    ASSERT_SYS(unlockpt(m));
    ASSERT_ERR(fl_tty_reclaim(m), ENOTTY);
    close(m);
    close(null);
}

/* A terminal side opened by the caller, for a new session's child. */
static int open_pty_pair(int *slave)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    ASSERT_SYS(m);
    ASSERT_SYS(grantpt(m));
    ASSERT_SYS(unlockpt(m));
    char name[64];
    ASSERT_OK(ptsname_r(m, name, sizeof name));
    *slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    ASSERT_SYS(*slave);
    return m;
}

TEST(setctty_on_a_given_fd)
{
    char *out = out_file();
    UNSUPPORTED_ON_POSIX_SPAWN(&((struct fl_cmd){ .argv = PROBE("exit", "0"),
                                                  .flags = FL_SETCTTY,
                                                  .backend = BACKEND }));
    NEEDS_PTY();
    int slave, m = open_pty_pair(&slave);
    /* The terminal at child fd 5 only: the ctty need not be a stream. */
    struct fl_cmd cmd = {
        .argv = PROBE("--out", out, "tty"),
        .stdio = { { .kind = FL_NULL }, { .kind = FL_NULL }, { .kind = FL_NULL } },
        .fds = (struct fl_fd_map[]){ { 5, slave } },
        .nfds = 1,
        .flags = FL_SETCTTY,
        .tty = &(struct fl_tty_options){ .fd = 5 },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.pty, -1);
    ASSERT_EXITED(t_wait(&p), 0);
    char *rep = t_read_file(out);
    ASSERT_EQ(t_get_num(rep, "tty_sid"), t_get_num(rep, "tty_pid"));
    ASSERT_EQ(t_get_num(rep, "tty_nr"), tty_nr_of(m));
    ASSERT_EQ(t_get_num(rep, "isatty0"), 0);

    /* fd 0 when .tty is NULL. */
    unlink(out);
    cmd.stdio[0] = (struct fl_stdio){ .kind = FL_FD, .fd = slave };
    cmd.fds = NULL;
    cmd.nfds = 0;
    cmd.tty = NULL;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    rep = t_read_file(out);
    ASSERT_EQ(t_get_num(rep, "tty_nr"), tty_nr_of(m));
    ASSERT_EQ(t_get_num(rep, "tcpgrp"), t_get_num(rep, "tty_pid"));
    close(slave);
    close(m);
}

TEST(setctty_on_an_inherited_fd_above_2_without_a_map)
{
    /* The terminal is the caller's own fd, inherited at its number (no
     * map): the child's early close of the fds it does not need must
     * leave it for the setctty step, which comes before the closing. */
    char *out = out_file();
    UNSUPPORTED_ON_POSIX_SPAWN(&((struct fl_cmd){ .argv = PROBE("exit", "0"),
                                                  .flags = FL_SETCTTY,
                                                  .backend = BACKEND }));
    NEEDS_PTY();
    int slave, m = open_pty_pair(&slave);
    int high;
    ASSERT_SYS(high = fcntl(slave, F_DUPFD, 40));
    struct fl_cmd cmd = {
        .argv = PROBE("--out", out, "tty"),
        .stdio = { { .kind = FL_NULL }, { .kind = FL_NULL }, { .kind = FL_NULL } },
        .flags = FL_SETCTTY,
        .tty = &(struct fl_tty_options){ .fd = high },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    char *rep = t_read_file(out);
    ASSERT_EQ(t_get_num(rep, "tty_sid"), t_get_num(rep, "tty_pid"));
    ASSERT_EQ(t_get_num(rep, "tty_nr"), tty_nr_of(m));
    close(high);
    close(slave);
    close(m);
}

/* A number the caller has no fd at. */
static int closed_fd(void)
{
    int fd;
    ASSERT_SYS(fd = fcntl(0, F_DUPFD_CLOEXEC, 50));
    close(fd);
    return fd;
}

/* The terminal fd of flag, one the child inherits as it is, not open. */
static void a_tty_fd_not_open_is_ebadf(unsigned flag)
{
    int fd = closed_fd();
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .flags = flag,
        .tty = &(struct fl_tty_options){ .fd = fd },
        .backend = BACKEND,
    };
    /* posix_spawn's ENOTSUP, for what it cannot do, comes first. */
    if (flag == FL_SETCTTY)
        UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
#if !FL_HAVE_ADDTCSETPGRP
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
#endif
    struct fl_error e = SPAWN_FAILS(&cmd, EBADF, FL_STEP_PREPARE);
    ASSERT_EQ(e.index, fd);
    ASSERT_STR_CONTAINS(e.detail, t_fmt("parent fd %d is not open", fd));
}

TEST(setctty_on_an_inherited_fd_that_is_not_open_is_ebadf)
{
    a_tty_fd_not_open_is_ebadf(FL_SETCTTY);
}

TEST(foreground_on_an_inherited_fd_that_is_not_open_is_ebadf)
{
    a_tty_fd_not_open_is_ebadf(FL_FOREGROUND);
}

/* The lowest free number, which the plan's own stdout pipe then takes:
 * the check is on the caller's fds, before the plan opens any. */
TEST(setctty_on_a_closed_fd_that_a_pipe_of_the_plan_would_take_is_ebadf)
{
    int fd;
    ASSERT_SYS(fd = dup(0));
    close(fd);
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .stdio = { [1] = { .kind = FL_PIPE } },
        .flags = FL_SETCTTY,
        .tty = &(struct fl_tty_options){ .fd = fd },
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, EBADF, FL_STEP_PREPARE);
    ASSERT_EQ(e.index, fd);
}

/* The fd the library keeps for itself, once a spawn made it: the stat
 * of this process in /proc (see ignored_signals.c). -1 if none. */
static int library_fd(void)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd warm = { .argv = PROBE("exit", "0"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&warm, &p);
    t_wait(&p);
    char want[64], link[64];
    snprintf(want, sizeof want, "/proc/%d/task/%d/stat", (int)getpid(), (int)getpid());
    for (int fd = 3; fd < 1024; fd++) {
        ssize_t n = readlink(t_fmt("/proc/self/fd/%d", fd), link, sizeof link - 1);
        if (n > 0 && (link[n] = '\0', strcmp(link, want) == 0))
            return fd;
    }
    return -1;
}

/* A number the caller closed, which the library's own fd then took, is
 * still not the caller's: neither a terminal nor an fd map's source. */
TEST(the_librarys_own_fd_is_not_a_callers_open_fd)
{
    int fd = library_fd();
    if (fd < 0)
        SKIP("this backend or libc keeps no fd of the library's here");
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .flags = FL_FOREGROUND,
        .tty = &(struct fl_tty_options){ .fd = fd },
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, EBADF, FL_STEP_PREPARE);
    ASSERT_EQ(e.index, fd);
    cmd = (struct fl_cmd){ .argv = PROBE("exit", "0"), .backend = BACKEND,
                           .fds = (struct fl_fd_map[]){ { 5, fd } }, .nfds = 1 };
    e = SPAWN_FAILS(&cmd, EBADF, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, t_fmt("parent fd %d is not open", fd));
}

/* The caller may close the library's fd (a closefrom() loop) and open
 * its own at that number: that fd is the caller's, and works. */
TEST(a_number_the_library_no_longer_holds_is_the_callers_again)
{
    int fd = library_fd();
    if (fd < 0)
        SKIP("this backend or libc keeps no fd of the library's here");
    close(fd);
    int mine;
    ASSERT_SYS(mine = open("/dev/null", O_WRONLY | O_CLOEXEC));
    ASSERT_EQ(mine, fd);
    struct fl_cmd cmd = { .argv = PROBE("exit", "0"), .backend = BACKEND,
                          .fds = (struct fl_fd_map[]){ { 5, mine } }, .nfds = 1 };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    close(mine);
}

/* A pipeline checks its stages before it opens its pipes, which could
 * take the closed number. */
TEST(a_pipeline_stage_with_a_closed_terminal_fd_is_ebadf_naming_the_stage)
{
    NEEDS_CLOSE_OTHERS();
    int fd;
    ASSERT_SYS(fd = dup(0));
    close(fd);
    struct fl_cmd stages[] = {
        { .argv = PROBE("exit", "0"), .flags = FL_FOREGROUND,
          .tty = &(struct fl_tty_options){ .fd = fd }, .backend = BACKEND },
        { .argv = PROBE("exit", "0"), .backend = BACKEND },
    };
    struct fl_pipeline pl;
    struct fl_error e;
#if !FL_HAVE_ADDTCSETPGRP
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        return;  /* ENOTSUP there, tried in foreground_not_a_terminal */
#endif
    ASSERT_ERR(fl_pipeline_spawn(stages, 2, &pl, &e), EBADF);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
    ASSERT_EQ(e.stage, 1);
    ASSERT_EQ(e.index, fd);
}

/* A later stage's stdin is the pipeline's pipe, not the caller's fd 0,
 * closed or not: FL_FOREGROUND there meets a pipe, ENOTTY. */
TEST(a_later_stage_foreground_on_its_piped_stdin_is_enotty_whatever_the_callers_fd_0)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd stages[] = {
        { .argv = PROBE("exit", "0"), .stdio = { [0] = { .kind = FL_NULL } }, .backend = BACKEND },
        { .argv = PROBE("exit", "0"), .flags = FL_FOREGROUND, .backend = BACKEND },
    };
#if !FL_HAVE_ADDTCSETPGRP
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        return;  /* ENOTSUP there, tried in foreground_not_a_terminal */
#endif
    int saved;
    ASSERT_SYS(saved = fcntl(0, F_DUPFD_CLOEXEC, 10));
    close(0);
    struct fl_pipeline pl;
    struct fl_error e;
    int r = fl_pipeline_spawn(stages, 2, &pl, &e);
    ASSERT_SYS(dup2(saved, 0));
    close(saved);
    if (r == 0) {
        fl_pipeline_wait(&pl, -1, NULL, NULL);
        fl_pipeline_close(&pl);
    }
    ASSERT_ERR(r, ENOTTY);
    if (BACKEND != FL_BACKEND_POSIX_SPAWN)  /* which says no step */
        ASSERT_EQ(e.step, FL_STEP_TCSETPGRP);
    ASSERT_EQ(e.stage, 2);
}

TEST(setctty_not_a_terminal)
{
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .stdio = { { .kind = FL_NULL } },
        .flags = FL_SETCTTY,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, ENOTTY, FL_STEP_SETCTTY);
    ASSERT_EQ(e.index, 0);
    char buf[512];
    ASSERT_STR_CONTAINS(fl_error_format(&e, buf, sizeof buf), "setctty");
}

/* Runs helper(slave, arg) in a forked child that leads a new session
 * whose controlling terminal is a pty (slave: its terminal side), and
 * asserts that it exits 0 (else the number of the check that failed).
 * Returns its pid, or 0 when the backend cannot (the case has passed).
 * Closing the master at the end hangs the terminal up: SIGHUP for the
 * session leader, ignored. For FL_FOREGROUND, which posix_spawn has
 * only with a tcsetpgrp file action. */
#if !FL_HAVE_ADDTCSETPGRP
/* posix_spawn without a tcsetpgrp file action refuses FL_FOREGROUND. */
static void foreground_refused(void)
{
    UNSUPPORTED_ON_POSIX_SPAWN(&((struct fl_cmd){ .argv = PROBE("exit", "0"),
                                                  .flags = FL_FOREGROUND,
                                                  .backend = BACKEND }));
}
#endif

static pid_t on_own_terminal(int (*helper)(int slave, void *arg), void *arg)
{
#if !FL_HAVE_ADDTCSETPGRP
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        foreground_refused();
        return 0;
    }
#endif
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        signal(SIGHUP, SIG_IGN);
        if (setsid() < 0)
            _exit(10);
        int slave, m = open_pty_pair(&slave);
        if (ioctl(slave, TIOCSCTTY, 0) < 0)
            _exit(11);
        int r = helper(slave, arg);
        close(slave);
        close(m);
        _exit(r);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    ASSERT_EXITED(st, 0);
    return pid;
}

/* The foreground case, on its own terminal: it starts the probe in the
 * foreground, then takes the terminal back, from the background, where
 * SIGTTOU would stop it; then that terminal is refused as another
 * session's controlling terminal. */
static int foreground_helper(int slave, void *out)
{
    struct fl_cmd cmd = {
        .argv = PROBE("--out", out, "tty"),
        .stdio = { { .kind = FL_FD, .fd = slave }, { .kind = FL_NULL }, { .kind = FL_NULL } },
        .flags = FL_FOREGROUND,
        .backend = BACKEND,
    };
    struct fl_proc p;
    struct fl_error e;
    if (fl_spawn(&cmd, &p, &e) != 0) {
        char buf[512];
        fprintf(stderr, "fl_spawn: %s\n", fl_error_format(&e, buf, sizeof buf));
        return 12;
    }
    pid_t child = p.pid;
    int st;
    if (fl_wait(&p, -1, &st) != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 13;
    fl_close(&p);
    if (tcgetpgrp(slave) != child)
        return 14;  /* the child's group held the terminal */
    if (fl_tty_reclaim(slave) != 0)
        return 15;
    if (tcgetpgrp(slave) != getpgrp())
        return 16;
    /* This session's terminal cannot be a new session's: EPERM. */
    cmd.flags = FL_SETCTTY;
    int r = fl_spawn(&cmd, &p, &e);
    if (BACKEND == FL_BACKEND_POSIX_SPAWN ? r != ENOTSUP
                                          : r != EPERM || e.step != FL_STEP_SETCTTY)
        return 17;
    return 0;
}

TEST(foreground_and_reclaim)
{
    NEEDS_PTY();
    char *out = out_file();
    pid_t pid = on_own_terminal(foreground_helper, out);
    if (!pid)
        return;
    char *rep = t_read_file(out);
    long long child = t_get_num(rep, "tty_pid");
    ASSERT_EQ(t_get_num(rep, "tty_pgid"), child);
    ASSERT_EQ(t_get_num(rep, "tcpgrp"), child);
    ASSERT_EQ(t_get_num(rep, "tty_sid"), pid);  /* the helper's session */
}

/* An FL_PTY stream that an fd map overrides makes no pty, so it does not
 * refuse what a pty excludes (FL_SETCTTY of another terminal). */
TEST(a_pty_stream_an_fd_map_overrides_does_not_refuse_setctty)
{
    NEEDS_PTY();
    int slave, m = open_pty_pair(&slave);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    ASSERT_SYS(null);
    struct fl_fd_map map = { .child_fd = 1, .parent_fd = null };
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { { .kind = FL_FD, .fd = slave }, { .kind = FL_PTY }, { .kind = FL_INHERIT } },
        .fds = &map,
        .nfds = 1,
        .flags = FL_SETCTTY,
        .backend = BACKEND,
    };
    struct fl_proc p;
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {  /* which cannot set a controlling terminal */
        ASSERT_ERR(fl_spawn(&cmd, &p, NULL), ENOTSUP);
    } else {
        SPAWN(&cmd, &p);
        ASSERT_EQ(p.pty, -1);
        ASSERT_EXITED(t_wait(&p), 0);
    }
    close(null);
    close(slave);
    close(m);
}

/* cmd, with FL_FOREGROUND, fails with ENOENT at step (for a launch, at
 * fl_launch_finish()). 0 when the terminal is this group's afterwards;
 * 12 for another failure, 13 when the terminal is left to another group. */
static int fails_in_the_foreground(struct fl_cmd *cmd, int slave, enum fl_step step)
{
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(cmd, &p, &e);
    if (!r && (cmd->flags & FL_NO_WAIT_EXEC))
        r = fl_launch_finish(&p, &e);
    fl_close(&p);
    if (r != ENOENT || e.step != step)
        return 12;
    if (tcgetpgrp(slave) != getpgrp())
        return 13;  /* left to the dead child's group */
    return 0;
}

/* On its own terminal: a spawn with FL_FOREGROUND that fails at exec,
 * after the terminal went to the child's group, must leave the terminal
 * to this group again, not to the dead child's. */
/* arg: the extra flags (FL_NO_WAIT_EXEC: the failure comes later, at
 * fl_launch_finish()). */
static int foreground_failed_helper(int slave, void *arg)
{
    unsigned extra = arg ? *(const unsigned *)arg : 0;
    struct fl_cmd cmd = {
        .argv = (char *[]){ "/nonexistent/forkless-test", NULL },
        .stdio = { { .kind = FL_FD, .fd = slave }, { .kind = FL_NULL }, { .kind = FL_NULL } },
        .flags = FL_FOREGROUND | extra,
        .backend = BACKEND,
    };
    return fails_in_the_foreground(&cmd, slave, FL_STEP_EXEC);
}

TEST(foreground_failed_spawn_gives_the_terminal_back)
{
    NEEDS_PTY();
    on_own_terminal(foreground_failed_helper, NULL);
}

TEST(foreground_failed_launch_gives_the_terminal_back)
{
    NEEDS_PTY();
    static const unsigned launch = FL_NO_WAIT_EXEC;
    on_own_terminal(foreground_failed_helper, (void *)&launch);
}

/* A launch's caller may close or reuse its fd before the failure is
 * known: the terminal is given back all the same, and nothing is done
 * through the file that has the number now. */
static int foreground_failed_launch_fd_reused_helper(int slave, void *arg)
{
    (void)arg;
    int mine = dup(slave);
    if (mine < 0)
        return 14;
    struct fl_cmd cmd = {
        .argv = (char *[]){ "/nonexistent/forkless-test", NULL },
        .stdio = { { .kind = FL_FD, .fd = mine }, { .kind = FL_NULL }, { .kind = FL_NULL } },
        .flags = FL_FOREGROUND | FL_NO_WAIT_EXEC,
        .backend = BACKEND,
    };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, mine) < 0)
        return 15;
    close(null);
    if (!r)
        r = fl_launch_finish(&p, &e);
    fl_close(&p);
    close(mine);
    if (r != ENOENT || e.step != FL_STEP_EXEC)
        return 12;
    return tcgetpgrp(slave) == getpgrp() ? 0 : 13;
}

TEST(foreground_failed_launch_whose_caller_reused_its_fd_gives_the_terminal_back)
{
    NEEDS_PTY();
    on_own_terminal(foreground_failed_launch_fd_reused_helper, NULL);
}

/* The library's switch for launched stages (as the bench has it): off,
 * each stage has exec'd, and stage 0 has taken the terminal, before the
 * next starts. */
void fl__pipeline_launch(bool on);

/* A pipeline whose first stage took the terminal (FL_FOREGROUND) and
 * whose later stage fails: the stages are killed, and the terminal goes
 * back, not left to their dead group. */
static int pipeline_failed_in_foreground_helper(int slave, void *arg)
{
    (void)arg;
    struct fl_cmd stages[] = {
        { .argv = (char *[]){ "/bin/sleep", "10", NULL },
          .stdio = { { .kind = FL_FD, .fd = slave } },
          .flags = FL_FOREGROUND,
          .backend = BACKEND },
        { .argv = (char *[]){ "/nonexistent/forkless-test", NULL }, .backend = BACKEND },
    };
    struct fl_pipeline pl;
    struct fl_error e;
    fl__pipeline_launch(false);
    int r = fl_pipeline_spawn(stages, 2, &pl, &e);
    fl__pipeline_launch(true);
    if (r != ENOENT || e.stage != 2)
        return 12;
    return tcgetpgrp(slave) == getpgrp() ? 0 : 13;
}

TEST(foreground_pipeline_whose_later_stage_fails_gives_the_terminal_back)
{
    NEEDS_PTY();
    on_own_terminal(pipeline_failed_in_foreground_helper, NULL);
}

/* The same, where the child opens the terminal itself (FL_FILE): the
 * caller holds no fd that the child's is a copy of. */
static int foreground_failed_file_helper(int slave, void *arg)
{
    (void)arg;
    char name[64];
    if (ttyname_r(slave, name, sizeof name) != 0)
        return 14;
    struct fl_cmd cmd = {
        .argv = (char *[]){ "/nonexistent/forkless-test", NULL },
        .stdio = { { .kind = FL_FILE, .path = name, .flags = O_RDWR }, { .kind = FL_NULL },
                   { .kind = FL_NULL } },
        .flags = FL_FOREGROUND,
        .backend = BACKEND,
    };
    /* posix_spawn() does not say which of its steps failed, after an open */
    return fails_in_the_foreground(&cmd, slave,
                                   BACKEND == FL_BACKEND_POSIX_SPAWN ? FL_STEP_SPAWN : FL_STEP_EXEC);
}

TEST(foreground_failed_spawn_gives_back_a_terminal_the_child_opened)
{
    NEEDS_PTY();
    on_own_terminal(foreground_failed_file_helper, NULL);
}

/* A caller in the background (a job of this group's shell) whose spawn
 * fails gives the terminal back to the group that had it, not to its own,
 * which never had it: the shell would lose its terminal. */
static int foreground_failed_in_background_helper(int slave, void *arg)
{
    pid_t job = fork();
    if (job < 0)
        return 14;
    if (job == 0) {
        if (setpgid(0, 0) < 0)
            _exit(15);
        _exit(foreground_failed_helper(slave, arg) == 13 ? 0 : 16);
    }
    int st;
    if (waitpid(job, &st, 0) != job || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return WIFEXITED(st) ? WEXITSTATUS(st) : 17;
    if (tcgetpgrp(slave) != getpgrp())
        return 13;  /* given to the background job's group */
    return 0;
}

TEST(foreground_failed_spawn_from_the_background_gives_the_terminal_to_its_owner)
{
    NEEDS_PTY();
    on_own_terminal(foreground_failed_in_background_helper, NULL);
}

TEST(foreground_failed_launch_from_the_background_gives_the_terminal_to_its_owner)
{
    NEEDS_PTY();
    static const unsigned launch = FL_NO_WAIT_EXEC;
    on_own_terminal(foreground_failed_in_background_helper, (void *)&launch);
}

/* FL_FOREGROUND puts the child in a group of its own, which a group stop
 * reaches: fl_run() takes the policy. */
static int foreground_run_helper(int slave, void *arg)
{
    (void)arg;
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .stdio = { { .kind = FL_FD, .fd = slave }, { .kind = FL_NULL }, { .kind = FL_NULL } },
        .flags = FL_FOREGROUND,
        .backend = BACKEND,
    };
    struct fl_io io = { .timeout_ms = 60000,
                        .stop = &(struct fl_stop_policy){ .scope = FL_STOP_GROUP } };
    struct fl_result r;
    struct fl_error e;
    if (fl_run(&cmd, &io, &r, &e) != 0 || r.exit_code != 0)
        return 12;
    fl_result_free(&r);
    return fl_tty_reclaim(slave) == 0 ? 0 : 13;
}

TEST(run_takes_a_group_stop_for_a_foreground_child)
{
    NEEDS_PTY();
    on_own_terminal(foreground_run_helper, NULL);
}

TEST(foreground_not_a_terminal)
{
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .stdio = { { .kind = FL_NULL } },
        .flags = FL_FOREGROUND,
        .backend = BACKEND,
    };
#if !FL_HAVE_ADDTCSETPGRP
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
#endif
    struct fl_error e = SPAWN_FAILS(&cmd, ENOTTY, FL_STEP_TCSETPGRP);
    if (BACKEND != FL_BACKEND_POSIX_SPAWN)
        ASSERT_EQ(e.index, 0);
}

TEST(tty_misuse_is_einval)
{
    const struct fl_stdio pty = { .kind = FL_PTY };
    struct termios t = { 0 };
    struct {
        unsigned flags;
        bool pty;
        struct fl_tty_options tty;
    } bad[] = {
        { FL_JOIN_PGROUP, true, { 0 } },
        { FL_SETCTTY, true, { 0 } },
        { FL_SETCTTY | FL_JOIN_PGROUP, false, { 0 } },
        { FL_FOREGROUND, true, { 0 } },
        { FL_FOREGROUND | FL_SETSID, false, { 0 } },
        { FL_FOREGROUND | FL_SETCTTY, false, { 0 } },
        { FL_SETCTTY, false, { .fd = -1 } },
        { FL_FOREGROUND, false, { .fd = -2 } },
        { 0, false, { .rows = 10, .cols = 10 } },
        { 0, false, { .termios = &t } },
        { 0, true, { .reserved_ = { &t } } },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct fl_cmd cmd = {
            .argv = PROBE("exit", "0"),
            .flags = bad[i].flags,
            .pgid = 1,
            .tty = &bad[i].tty,
            .backend = BACKEND,
        };
        if (bad[i].pty)
            cmd.stdio[1] = pty;
        SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    }
}

/* The lowest fd free now. */
static int lowest_free_fd(void)
{
    int fd = dup(0);
    ASSERT_SYS(fd);
    close(fd);
    return fd;
}

/* No fd left for the master, then none for the terminal side: step
 * openpt, nothing left open. */
TEST(openpt_failure_names_the_step)
{
    NEEDS_PTY();
    struct rlimit saved;
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &saved));
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .stdio = { { .kind = FL_PTY } },
        .backend = BACKEND,
    };
    int free_fd = lowest_free_fd();
    for (int extra = 0; extra < 2; extra++) {
        struct rlimit low = { (rlim_t)(free_fd + extra), saved.rlim_max };
        ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &low));
        struct fl_error e = SPAWN_FAILS(&cmd, EMFILE, FL_STEP_OPENPT);
        ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &saved));
        ASSERT_STR_CONTAINS(e.path, extra ? "/dev/pts/" : "/dev/ptmx");
        ASSERT_STR_CONTAINS(e.detail, extra ? "terminal side" : "posix_openpt");
        ASSERT_EQ(lowest_free_fd(), free_fd);
    }
    ASSERT_STR_EQ(fl_step_name(FL_STEP_OPENPT), "openpt");
    ASSERT_STR_EQ(fl_step_name(FL_STEP_SETCTTY), "setctty");
    ASSERT_STR_EQ(fl_step_name(FL_STEP_TCSETPGRP), "tcsetpgrp");
}
