/* poll.c: the library's poll(), which still works where RLIMIT_NOFILE has
 * been lowered below the number of fds it watches.
 *
 * poll() refuses more entries than RLIMIT_NOFILE with EINVAL, even though
 * every fd it is given is open already: setrlimit() may lower the limit
 * below what is open, and a caller may do so after a spawn (a daemon
 * dropping its limits). select() has no such check, so the same wait is
 * made with it then. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/select.h>

#include "internal.h"

static bool over_the_limit(nfds_t n)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
           n > rl.rlim_cur;
}

/* Entries whose fd is not open get POLLNVAL, as poll() gives them;
 * select() fails with EBADF instead. Returns how many. */
static int mark_closed(struct pollfd *fds, nfds_t n)
{
    int bad = 0;
    for (nfds_t i = 0; i < n; i++) {
        fds[i].revents = 0;
        if (fds[i].fd >= 0 && fcntl(fds[i].fd, F_GETFD) < 0 && errno == EBADF) {
            fds[i].revents = POLLNVAL;
            bad++;
        }
    }
    return bad;
}

/* select()'s sets as the kernel reads them: bit fd of an array of longs
 * as long as the highest fd needs, not fd_set, whose FD_SETSIZE (1024)
 * is no limit of the kernel's. */
enum { LONG_BITS = 8 * sizeof(unsigned long) };

static void set_bit(unsigned long *set, int fd)
{
    set[(size_t)fd / LONG_BITS] |= 1UL << ((size_t)fd % LONG_BITS);
}

static bool bit_set(const unsigned long *set, int fd)
{
    return set[(size_t)fd / LONG_BITS] & (1UL << ((size_t)fd % LONG_BITS));
}

static int poll_by_select(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    int top = -1;
    for (nfds_t i = 0; i < n; i++)
        top = fds[i].fd > top ? fds[i].fd : top;
    size_t words = (size_t)(top + 1) / LONG_BITS + 1;
    unsigned long *rd = calloc(3 * words, sizeof *rd);
    if (!rd)
        return -1;  /* ENOMEM */
    unsigned long *wr = rd + words, *ex = wr + words;
    for (nfds_t i = 0; i < n; i++) {
        int fd = fds[i].fd;
        if (fd < 0)
            continue;
        if (fds[i].events & POLLIN)
            set_bit(rd, fd);
        if (fds[i].events & POLLOUT)
            set_bit(wr, fd);
        if (fds[i].events & POLLPRI)
            set_bit(ex, fd);
    }
    struct timeval tv = { timeout_ms / 1000, (suseconds_t)(timeout_ms % 1000) * 1000 };
    int r = select(top + 1, (fd_set *)rd, (fd_set *)wr, (fd_set *)ex, timeout_ms < 0 ? NULL : &tv);
    int ready = 0;
    if (r < 0 && errno == EBADF) {
        ready = mark_closed(fds, n);
    } else if (r < 0) {
        ready = -1;
    } else {
        for (nfds_t i = 0; i < n; i++) {
            int fd = fds[i].fd;
            fds[i].revents = 0;
            if (fd < 0)
                continue;
            if (bit_set(rd, fd))
                fds[i].revents |= POLLIN;
            if (bit_set(wr, fd))
                fds[i].revents |= POLLOUT;
            if (bit_set(ex, fd))
                fds[i].revents |= POLLPRI;
            ready += fds[i].revents != 0;
        }
    }
    int err = errno;
    free(rd);
    errno = err;
    return ready;
}

int fl__poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    int r = poll(fds, n, timeout_ms);
    if (r < 0 && errno == EINVAL && over_the_limit(n))
        return poll_by_select(fds, n, timeout_ms);
    return r;
}
