/* poll.c: the library's poll(), which still works where RLIMIT_NOFILE has
 * been lowered below the number of fds it watches.
 *
 * poll() refuses more entries than RLIMIT_NOFILE with EINVAL, even though
 * every fd it is given is open already: setrlimit() may lower the limit
 * below what is open, and a caller may do so after a spawn (a daemon
 * dropping its limits). select() has no such check, only FD_SETSIZE, so
 * the same wait is made with it then. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

static int poll_by_select(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    fd_set rd, wr, ex;
    FD_ZERO(&rd);
    FD_ZERO(&wr);
    FD_ZERO(&ex);
    int top = -1;
    for (nfds_t i = 0; i < n; i++) {
        int fd = fds[i].fd;
        if (fd < 0)
            continue;
        if (fd >= FD_SETSIZE) {
            errno = EINVAL;  /* poll()'s own answer stands */
            return -1;
        }
        if (fds[i].events & POLLIN)
            FD_SET(fd, &rd);
        if (fds[i].events & POLLOUT)
            FD_SET(fd, &wr);
        if (fds[i].events & POLLPRI)
            FD_SET(fd, &ex);
        top = fd > top ? fd : top;
    }
    struct timeval tv = { timeout_ms / 1000, (suseconds_t)(timeout_ms % 1000) * 1000 };
    int r = select(top + 1, &rd, &wr, &ex, timeout_ms < 0 ? NULL : &tv);
    if (r < 0)
        return errno == EBADF ? mark_closed(fds, n) : -1;
    int ready = 0;
    for (nfds_t i = 0; i < n; i++) {
        int fd = fds[i].fd;
        fds[i].revents = 0;
        if (fd < 0)
            continue;
        if (FD_ISSET(fd, &rd))
            fds[i].revents |= POLLIN;
        if (FD_ISSET(fd, &wr))
            fds[i].revents |= POLLOUT;
        if (FD_ISSET(fd, &ex))
            fds[i].revents |= POLLPRI;
        ready += fds[i].revents != 0;
    }
    return ready;
}

int fl__poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    int r = poll(fds, n, timeout_ms);
    if (r < 0 && errno == EINVAL && over_the_limit(n))
        return poll_by_select(fds, n, timeout_ms);
    return r;
}
