/* pty_relay.c: `forkless run --pty`. The library opens the terminal and
 * makes it the program's controlling terminal; this file sets up what
 * it starts with, puts our own terminal in raw mode so that every key
 * (^C, ^Z and ^\ too) goes to the program's terminal as it is typed,
 * and relays in a thread of its own while supervise() waits in the main
 * thread, as it does without --pty. */
#include "pty_relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli.h"

enum {
    RELAY_BUF = 16384,
    /* After the program has ended: how long the output may pause before
     * the relay stops, when a descendant still holds the terminal. */
    DRAIN_IDLE_MS = 200,
};

int pty_parse_size(const char *s, unsigned short *rows, unsigned short *cols)
{
    char *end;
    errno = 0;
    unsigned long r = strtoul(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X') || s[0] < '0' || s[0] > '9')
        return -1;
    const char *c = end + 1;
    unsigned long k = strtoul(c, &end, 10);
    if (end == c || *end || c[0] < '0' || c[0] > '9' || errno)
        return -1;
    if (r < 1 || r > 65535 || k < 1 || k > 65535)
        return -1;
    *rows = (unsigned short)r;
    *cols = (unsigned short)k;
    return 0;
}

/* The settings a new pty starts with, from a scratch one: on a master,
 * tcgetattr() reads its terminal side's. */
static int kernel_default_termios(struct termios *t)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0)
        return -1;
    int r = tcgetattr(m, t);
    int err = errno;
    close(m);
    errno = err;
    return r;
}

int pty_relay_prepare(struct pty_relay *r, struct fl_cmd *cmd)
{
    r->term_fd = r->master = r->winch_fd = -1;
    r->wake[0] = r->wake[1] = -1;
    r->input_is_tty = isatty(0) && tcgetattr(0, &r->saved) == 0;
    if (r->input_is_tty) {
        r->term_fd = 0;
        r->termios = r->saved;
    } else {
        if (kernel_default_termios(&r->termios) != 0) {
            cli_error("--pty: cannot open a pseudo-terminal: %s", strerror(errno));
            return -1;
        }
        /* Input from a file or a pipe is nobody's typing: no echo of it,
         * as script(1) does. */
        r->termios.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
        if (isatty(1))
            r->term_fd = 1;
    }
    struct winsize ws = { 0 };
    if (r->term_fd >= 0 && ioctl(r->term_fd, TIOCGWINSZ, &ws) != 0)
        ws = (struct winsize){ 0 };
    if (r->size_given) {
        ws.ws_row = r->rows;
        ws.ws_col = r->cols;
    }
    r->tty = (struct fl_tty_options){ .rows = ws.ws_row, .cols = ws.ws_col,
                                      .termios = &r->termios };
    cmd->tty = &r->tty;
    return 0;
}

/* Our terminal's size to the program's (a SIGWINCH came). */
static void pass_size(const struct pty_relay *r)
{
    struct winsize ws;
    if (r->term_fd >= 0 && ioctl(r->term_fd, TIOCGWINSZ, &ws) == 0)
        fl_pty_resize(r->master, ws.ws_row, ws.ws_col);
}

/* All of buf to fd 1, which may be non-blocking (an O_NONBLOCK file
 * description we inherited). 0, or -1 once it cannot take more. */
static int write_out(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(1, buf, len);
        if (w < 0 && errno == EAGAIN) {
            struct pollfd p = { .fd = 1, .events = POLLOUT };
            poll(&p, 1, -1);
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Our input has ended: a terminal cannot be half-closed, so the program
 * gets its terminal's end-of-file character, VEOF, as if typed: once
 * after a whole line, twice after a partial one (the first ends the
 * line). In non-canonical mode there is no end-of-file to send. */
static size_t end_of_input(const struct pty_relay *r, char *buf, bool at_line_start)
{
    struct termios t;
    if (tcgetattr(r->master, &t) != 0 || !(t.c_lflag & ICANON))
        return 0;
    buf[0] = buf[1] = (char)t.c_cc[VEOF];
    return at_line_start ? 1 : 2;
}

static void *relay_main(void *arg)
{
    struct pty_relay *r = arg;
    static char in[RELAY_BUF], out[RELAY_BUF];  /* one relay per process */
    size_t in_len = 0, in_off = 0;
    bool in_open = true, at_line_start = true, out_open = true, draining = false;
    for (;;) {
        struct pollfd p[4];
        int n = 0, i_in = -1, i_wake = -1;
        bool pending = in_off < in_len;
        if (!draining && in_open && !pending) {
            i_in = n;
            p[n++] = (struct pollfd){ .fd = 0, .events = POLLIN };
        }
        int i_master = n;
        p[n++] = (struct pollfd){ .fd = r->master,
                                  .events = POLLIN | (!draining && pending ? POLLOUT : 0) };
        int i_winch = n;
        p[n++] = (struct pollfd){ .fd = r->winch_fd, .events = POLLIN };
        if (!draining) {
            i_wake = n;
            p[n++] = (struct pollfd){ .fd = r->wake[0], .events = POLLIN };
        }
        int k = poll(p, (nfds_t)n, draining ? DRAIN_IDLE_MS : -1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;  /* drained: nothing came for a while */
        short mrev = p[i_master].revents;
        if (mrev & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t got = read(r->master, out, sizeof out);
            if (got > 0 && out_open)
                out_open = write_out(out, (size_t)got) == 0;
            /* EIO: every process has closed the terminal side, the end
             * of the output (see "Terminals" in forkless.h). */
            if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
                break;
        }
        if (mrev & POLLOUT) {
            ssize_t w = write(r->master, in + in_off, in_len - in_off);
            if (w > 0)
                in_off += (size_t)w;
            else if (w < 0 && errno != EAGAIN && errno != EINTR)
                in_off = in_len, in_open = false;
        }
        if (i_in >= 0 && p[i_in].revents) {
            ssize_t got = read(0, in, sizeof in);
            in_off = 0;
            in_len = got > 0 ? (size_t)got : 0;
            if (got > 0) {
                at_line_start = in[got - 1] == '\n';
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                in_open = false;
                in_len = end_of_input(r, in, at_line_start);
            }
        }
        if (p[i_winch].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(r->winch_fd, &si, sizeof si) == (ssize_t)sizeof si)
                ;
            pass_size(r);
        }
        if (i_wake >= 0 && p[i_wake].revents)
            draining = true;
    }
    return NULL;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void restore_terminal(struct pty_relay *r)
{
    if (r->raw)
        tcsetattr(0, TCSADRAIN, &r->saved);
    r->raw = false;
}

static void undo(struct pty_relay *r)
{
    restore_terminal(r);
    close_fd(&r->master);
    close_fd(&r->winch_fd);
    close_fd(&r->wake[0]);
    close_fd(&r->wake[1]);
    if (!sigismember(&r->old_mask, SIGWINCH)) {
        sigset_t w;
        sigemptyset(&w);
        sigaddset(&w, SIGWINCH);
        pthread_sigmask(SIG_UNBLOCK, &w, NULL);
    }
}

int pty_relay_start(struct pty_relay *r, int master)
{
    if (!r->enabled || master < 0)
        return 0;
    sigset_t w;
    sigemptyset(&w);
    sigaddset(&w, SIGWINCH);
    /* Blocked here, in the thread that starts the relay's: both have it
     * blocked, and only the signalfd takes it. */
    pthread_sigmask(SIG_BLOCK, &w, &r->old_mask);
    int err = 0;
    r->master = fcntl(master, F_DUPFD_CLOEXEC, 3);
    if (r->master < 0 || fcntl(r->master, F_SETFL, fcntl(r->master, F_GETFL) | O_NONBLOCK) < 0 ||
        pipe2(r->wake, O_CLOEXEC) < 0 ||
        (r->winch_fd = signalfd(-1, &w, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
        err = errno;
    if (!err && r->input_is_tty) {
        struct termios raw = r->saved;
        cfmakeraw(&raw);
        if (tcsetattr(0, TCSANOW, &raw) != 0)
            err = errno;
        else
            r->raw = true;
    }
    pass_size(r);  /* a resize since pty_relay_prepare() */
    if (!err)
        err = pthread_create(&r->thread, NULL, relay_main, r);
    if (err) {
        undo(r);
        return err;
    }
    r->started = true;
    return 0;
}

void pty_relay_finish(struct pty_relay *r)
{
    if (!r->started)
        return;
    while (write(r->wake[1], "x", 1) < 0 && errno == EINTR)
        ;
    pthread_join(r->thread, NULL);
    r->started = false;
    undo(r);
}
