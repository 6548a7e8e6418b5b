/*
 * early_eio.c: loaded into `forkless run --pty` with LD_PRELOAD, makes the
 * first read() of a pty master say EIO once, reading nothing, as Linux
 * can when the terminal side's last write and close land in the middle
 * of a read (see "Terminals" in forkless.h): the output behind it must
 * still arrive. It creates the file named by FL_EARLY_EIO_SAID when it
 * has said it, so that a case can tell a forkless that never loaded it
 * (a static build) from one that read past the EIO.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int said;

ssize_t read(int fd, void *buf, size_t n)
{
    unsigned int pty_number;
    /* TIOCGPTN answers on a pty master only. */
    if (!__atomic_load_n(&said, __ATOMIC_RELAXED) && ioctl(fd, TIOCGPTN, &pty_number) == 0 &&
        !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) {
        const char *mark = getenv("FL_EARLY_EIO_SAID");
        int m = mark ? open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
        if (m >= 0)
            close(m);
        errno = EIO;
        return -1;
    }
    return syscall(SYS_read, fd, buf, n);
}
