/*
 * test_pty_eio.c: an EIO that a pty master says too early. Linux can
 * answer a read of the master with EIO while the last bytes that the
 * terminal side wrote before its close are still on their way in (see
 * drain() in src/io.c); a read after it gets them. The race is the
 * kernel's and too narrow to bring about at will, so this program
 * replaces read() for itself: the fd armed in early_eio_fd says EIO once,
 * reading nothing, with the child's output waiting behind it.
 */
#include "test.h"

#include <sys/syscall.h>
#include <sys/wait.h>

static volatile int early_eio_fd = -1;

ssize_t read(int fd, void *buf, size_t n)
{
    if (fd >= 0 && fd == early_eio_fd) {
        early_eio_fd = -1;
        errno = EIO;
        return -1;
    }
    return syscall(SYS_read, fd, buf, n);
}

/* The child wrote its line and ended before the exchange: the first read
 * says EIO, and the line must still arrive. */
TEST(an_eio_before_the_last_bytes_is_read_past)
{
    NEEDS_PTY();
    struct termios raw = t_raw_termios();
    struct fl_tty_options tty = { .termios = &raw };
    struct fl_cmd cmd = { .argv = PROBE("echo", "gone"), .backend = BACKEND, .tty = &tty };
    cmd.stdio[0].kind = FL_NULL;
    cmd.stdio[1].kind = FL_PTY;
    cmd.stdio[2].kind = FL_NULL;
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    siginfo_t si;
    ASSERT_SYS(waitid(P_PID, (id_t)p.pid, &si, WEXITED | WNOWAIT));
    early_eio_fd = p.pty;
    struct fl_result r;
    ASSERT_OK(fl_communicate(&p, NULL, &r));
    ASSERT_EQ(early_eio_fd, -1);  /* the early EIO was said */
    ASSERT_EXITED(r.status, 0);
    ASSERT_STR_EQ(r.out[0].data, "gone\n");
    ASSERT(!r.out[0].eof_missed);
    fl_close(&p);
    fl_result_free(&r);
}
