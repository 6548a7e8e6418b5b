/* pty_relay.c: `forkless run --pty`. The library opens the terminal and
 * makes it the program's controlling terminal; this file sets up what
 * it starts with, puts our own terminal in raw mode so that every key
 * (^C, ^Z and ^\ too) goes to the program's terminal as it is typed,
 * and relays in a thread of its own while supervise() waits in the main
 * thread, as it does without --pty. */
#include "pty_relay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "job_control.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SYS_pidfd_send_signal  /* an older libc's headers */
#if defined(__alpha__)
#define SYS_pidfd_send_signal 534
#else
#define SYS_pidfd_send_signal 424
#endif
#endif

enum {
    RELAY_BUF = 16384,
    /* After the program has ended: how long what is left of its output
     * may take, when a descendant still holds the terminal or nobody
     * reads our stdout; as long as the library's eof_wait_ms. */
    DRAIN_MS = FL_EOF_WAIT_MS,
    /* Past that deadline: at most this much more of what the terminal
     * holds (about what a pty buffers), when the deadline passed while
     * a slow reader of our stdout held the relay up. */
    DRAIN_LATE_MAX = 65536,
    /* The end of our input (see struct eof_state): how long the first
     * VEOF waits for the program to read the lines before it, how often
     * the terminal is looked at, at first and at most, and how many more
     * VEOFs may follow it. */
    EOF_WAIT_MS = 2000,
    EOF_LOOK_MS = 10,
    EOF_LOOK_MAX_MS = 1000,
    EOF_MORE_MAX = 8,
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

/* Started in the background (`forkless run --pty ... &`), forkless would
 * read the terminal's settings as the shell's prompt left them (no echo,
 * no lines) and give them to the program's pty. tcdrain() from the
 * background stops the job with SIGTTOU until `fg`, as a job that would
 * change the terminal stops, and changes nothing (a tcsetattr() of the
 * settings read would put back the prompt's over the shell's own). Where
 * SIGTTOU is ignored or blocked, it returns at once and the wait is over. */
static void wait_for_the_foreground(void)
{
    while (isatty(0) && tcgetpgrp(0) != getpgrp())
        if (tcdrain(0) == 0 || errno != EINTR)
            break;
}

int pty_relay_prepare(struct pty_relay *r, struct fl_cmd *cmd)
{
    r->term_fd = r->master = r->slave = r->job_fd = r->signal_fd = -1;
    r->wake[0] = r->wake[1] = r->child_note[0] = r->child_note[1] = -1;
    wait_for_the_foreground();
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

/* Our terminal's size to the program's (a SIGWINCH came), unless
 * --pty-size fixed it. */
static void pass_size(const struct pty_relay *r)
{
    struct winsize ws;
    if (!r->size_given && r->term_fd >= 0 && ioctl(r->term_fd, TIOCGWINSZ, &ws) == 0)
        fl_pty_resize(r->master, ws.ws_row, ws.ws_col);
}

/* The signals that job_fd may read (pty_relay_start()). */
static const int job_signals[] = { SIGWINCH, SIGTSTP, SIGCONT };

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* The child has ended: our copy of the terminal side goes, so that EIO
 * on the master says that every descendant has closed it too, and what
 * is left of the output has until the deadline. */
static void begin_drain(struct pty_relay *r)
{
    r->draining = true;
    r->deadline = mono_ms() + DRAIN_MS;
    close_fd(&r->slave);
}

/* What every wait of the relay watches besides its own fds, added at
 * p[*n] (*at: its index, or -1): before the drain the wake pipe, during
 * it forkless's signals (supervise's signalfd). Returns poll()'s
 * timeout: during the drain, when bounded, what is left to the
 * deadline (0 once it has passed); otherwise none. */
static int add_watch(struct pty_relay *r, struct pollfd *p, int *n, int *at, bool bounded)
{
    *at = -1;
    if (!r->draining) {
        *at = *n;
        p[(*n)++] = (struct pollfd){ .fd = r->wake[0], .events = POLLIN };
        return -1;
    }
    if (r->signal_fd >= 0) {
        *at = *n;
        p[(*n)++] = (struct pollfd){ .fd = r->signal_fd, .events = POLLIN };
    }
    if (!bounded)
        return -1;
    int64_t left = r->deadline - mono_ms();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* After a poll() with add_watch()'s entry at p[at]: the wake pipe starts
 * the drain; during it a signal (the child is reaped: the signal goes
 * nowhere, and forkless exits as the child did) ends it, r->stop. */
static void check_watch(struct pty_relay *r, const struct pollfd *p, int at)
{
    if (at < 0 || !p[at].revents)
        return;
    if (!r->draining) {
        begin_drain(r);
        return;
    }
    struct signalfd_siginfo si;
    while (read(r->signal_fd, &si, sizeof si) == (ssize_t)sizeof si)
        if (si.ssi_signo != SIGCHLD)
            r->stop = true;
}

/* All of buf to fd 1, which may be a blocking pipe that nobody reads,
 * or non-blocking (an O_NONBLOCK file description we inherited): each
 * write waits for POLLOUT and is at most PIPE_BUF, which a pipe then
 * takes at once, so the wait also sees the drain begin, and a signal
 * during it. A slow reader is waited for, as by any writer of a pipe,
 * unless forkless stopped the child (a signal passed on, the timeout):
 * then only until the drain's deadline. 0 (also when that, or a signal,
 * ended it: r->stop), or -1 once fd 1 takes no more (EPIPE). */
static int write_out(struct pty_relay *r, const char *buf, size_t len)
{
    while (len > 0) {
        struct pollfd p[2] = { { .fd = 1, .events = POLLOUT } };
        int n = 1, at;
        int timeout = add_watch(r, p, &n, &at, r->interrupted);
        int k = poll(p, (nfds_t)n, timeout);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        check_watch(r, p, at);
        if (k == 0)
            r->stop = true;
        if (r->stop)
            return 0;
        if (!p[0].revents)
            continue;
        ssize_t w = write(1, buf, len < PIPE_BUF ? len : PIPE_BUF);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Our input has ended: a terminal cannot be half-closed, so the program
 * gets its terminal's end-of-file character, VEOF (^D where it is
 * disabled), as if typed, as script(1) sends it. In canonical mode once
 * after a whole line, twice after a partial one (the first ends the
 * line); in non-canonical mode once, a byte for the program to read (a
 * line editor such as bash's reads it as the end). */
/* glibc has CEOF in <sys/ttydefaults.h>, musl does not: ^D. */
#ifndef CEOF
#define CEOF ('d' & 037)
#endif

static size_t end_of_input(const struct pty_relay *r, char *buf, bool at_line_start)
{
    struct termios t;
    bool canonical = true;
    cc_t eof = CEOF;
    if (tcgetattr(r->master, &t) == 0) {
        canonical = (t.c_lflag & ICANON) != 0;
        if (t.c_cc[VEOF] != _POSIX_VDISABLE)
            eof = t.c_cc[VEOF];
    }
    buf[0] = buf[1] = (char)eof;
    return canonical && !at_line_start ? 2 : 1;
}

/*
 * Our input has ended, and the end goes to the program as VEOF, which
 * means what the terminal's settings say when it arrives, not when the
 * program reads it. Written in canonical mode it is an end-of-file mark;
 * a program that makes the terminal raw before it reads the mark (a
 * shell's line editor, back from running a command) reads a NUL byte
 * instead. So, as script(1) does, the first VEOF waits until the terminal
 * side has nothing left to read (the program has read the lines before
 * it), or EOF_WAIT_MS for a program that never reads; and since, with the
 * input over, every read is owed an end of file, as from a pipe, one more
 * is written each time the last has been read (a NUL, a shell that ran
 * `cat` and reads its next command), up to EOF_MORE_MAX: a program that
 * reads ^D as a key, raw, must not be fed them for ever. The terminal is
 * looked at every EOF_LOOK_MS, less often (up to EOF_LOOK_MAX_MS) while
 * the last is still unread. A partial last line that the program reads
 * raw has the first VEOF's NUL bytes after it: in canonical mode the line
 * cannot be seen to be unread.
 */
struct eof_state {
    bool started;       /* our input has ended */
    unsigned sent;      /* VEOFs written (a partial line's pair counts once) */
    int64_t first_by;   /* the first goes by then, read or not */
    int64_t next_look;
    int look_ms;
};

static bool nothing_to_read(const struct pty_relay *r)
{
    struct pollfd p = { .fd = r->slave, .events = POLLIN };
    return r->slave < 0 || poll(&p, 1, 0) != 1 || !(p.revents & POLLIN);
}

/* Whether a VEOF is to be written now. */
static bool eof_now(struct eof_state *e, const struct pty_relay *r)
{
    int64_t now = mono_ms();
    if (!e->started || e->sent > EOF_MORE_MAX || now < e->next_look)
        return false;
    bool go = nothing_to_read(r) || (e->sent == 0 && now >= e->first_by);
    if (go) {
        e->sent++;
        e->look_ms = EOF_LOOK_MS;
    } else if (e->sent) {
        e->look_ms = e->look_ms * 2 > EOF_LOOK_MAX_MS ? EOF_LOOK_MAX_MS : e->look_ms * 2;
    }
    e->next_look = now + e->look_ms;
    return go;
}

/* poll()'s timeout, shortened to the next look at the terminal. */
static int eof_timeout(const struct eof_state *e, int timeout)
{
    if (!e->started || e->sent > EOF_MORE_MAX)
        return timeout;
    int64_t left = e->next_look - mono_ms();
    int ms = left <= 0 ? 0 : left > EOF_LOOK_MAX_MS ? EOF_LOOK_MAX_MS : (int)left;
    return timeout < 0 || timeout > ms ? ms : timeout;
}

/* The program wrote: it may be about to read again, in a new mode. */
static void eof_look_soon(struct eof_state *e)
{
    int64_t soon = mono_ms() + EOF_LOOK_MS;
    e->look_ms = EOF_LOOK_MS;
    if (e->next_look > soon)
        e->next_look = soon;
}

static void restore_terminal(struct pty_relay *r)
{
    if (r->raw)
        tcsetattr(0, TCSADRAIN, &r->saved);
    r->raw = false;
}

/* Our terminal raw, as it is for the run, from its settings now. Not
 * from the background (continued by bg): the relay comes here again
 * once it finds us in the foreground (relay_main()). A terminal that is
 * not our controlling one (tcgetpgrp() fails) has no background of ours
 * to wait for: raw at once, as script(1) makes it. */
static void enter_raw(struct pty_relay *r)
{
    pid_t fg;
    if (!r->input_is_tty || r->raw || ((fg = tcgetpgrp(0)) >= 0 && fg != getpgrp()) ||
        tcgetattr(0, &r->saved) != 0)
        return;
    struct termios raw = r->saved;
    cfmakeraw(&raw);
    r->raw = tcsetattr(0, TCSANOW, &raw) == 0;
}

/* SIGTSTP from elsewhere (kill -TSTP; ^Z goes to the program): our
 * terminal as it was, then stopped as a job is, the program left
 * running; once continued, raw again (enter_raw()). */
static void stop_self(struct pty_relay *r)
{
    restore_terminal(r);
    stop_by_sigtstp(false);
    enter_raw(r);
    pass_size(r);  /* a resize while stopped */
}

/* The program has stopped (kill -STOP, bash's suspend). No process of
 * its session could continue it, so its own terminal's ^Z and ^C are
 * lost on it (the kernel drops stops for an orphaned group) and forkless
 * would wait for ever, our terminal raw: forkless stops as well, as
 * script(1) does, our terminal as it was, and once continued (fg)
 * continues the program. Where forkless cannot stop (its own group is
 * orphaned), the program goes on at once rather than hold both. Asked
 * through the handle's pidfd, which lives until the relay has ended:
 * once the main thread has reaped the child, its pid may be another's. */
static void follow_a_stop(struct pty_relay *r)
{
    siginfo_t si = { 0 };
    const int look = WSTOPPED | WNOHANG | WNOWAIT;
    int found = r->child_pidfd >= 0 ? waitid((idtype_t)P_PIDFD, (id_t)r->child_pidfd, &si, look) : -1;
    /* No pidfd, or waitid(P_PIDFD) refused (Linux before 5.4, a seccomp
     * filter's ENOSYS or EPERM): by pid, unless the pidfd shows the
     * process reaped, its number free for another. */
    if (r->child_pidfd < 0 ||
        (found != 0 && (errno == EINVAL || errno == ENOSYS || errno == EPERM) &&
         (syscall(SYS_pidfd_send_signal, r->child_pidfd, 0, NULL, 0) == 0 || errno != ESRCH)))
        found = waitid(P_PID, (id_t)r->child, &si, look);
    if (found != 0 || si.si_pid == 0)
        return;
    restore_terminal(r);
    stop_by_sigtstp(false);
    /* Its group (it leads one, on its terminal): a kill -STOP to that
     * group stopped every member. Only while the child is not reaped
     * (the main thread may reap it now): its number is the group's, and
     * once free may be another's. */
    bool reaped = r->child_pidfd >= 0 &&
                  syscall(SYS_pidfd_send_signal, r->child_pidfd, 0, NULL, 0) != 0 && errno == ESRCH;
    if (!reaped && kill(-r->child, SIGCONT) != 0)
        kill(r->child, SIGCONT);
    enter_raw(r);
    pass_size(r);  /* a resize while stopped */
}

/* What job_fd has read: SIGWINCH, and on a terminal SIGTSTP and SIGCONT. */
static void on_job_signals(struct pty_relay *r)
{
    struct signalfd_siginfo si;
    bool resized = false;
    while (read(r->job_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGTSTP) {
            stop_self(r);
        } else if (si.ssi_signo == SIGCONT) {
            enter_raw(r);
            resized = true;
        } else {
            resized = true;
        }
    }
    if (resized)
        pass_size(r);
}

/* supervise() has read a SIGCHLD (pty_relay_child_changed()). */
static void on_child_note(struct pty_relay *r)
{
    char buf[64];
    while (read(r->child_note[0], buf, sizeof buf) > 0)
        ;
    if (!r->draining)
        follow_a_stop(r);
}

/* The relay has ended before the child (nobody reads our stdout: its
 * terminal hung up), which may still stop itself, and must not be left
 * stopped: its stops are followed until it has ended (the wake pipe). */
static void follow_stops_to_the_end(struct pty_relay *r)
{
    while (!r->draining) {
        struct pollfd p[2] = { { .fd = r->wake[0], .events = POLLIN },
                               { .fd = r->child_note[0], .events = POLLIN } };
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (p[0].revents)
            return;
        if (p[1].revents)
            on_child_note(r);
    }
}

/* How often the relay looks whether a job in the background has been
 * brought to the foreground: a shell's fg of a job that bg continued
 * sends no SIGCONT, only hands over the terminal. */
#define FOREGROUND_LOOK_MS 100

static void *relay_main(void *arg)
{
    struct pty_relay *r = arg;
    static char in[RELAY_BUF], out[RELAY_BUF];  /* one relay per process */
    size_t in_len = 0, in_off = 0;
    bool in_open = true, at_line_start = true;
    size_t late = 0;  /* read past the deadline */
    bool eio_seen = false;
    struct eof_state eof = { 0 };
    while (!r->stop && late < DRAIN_LATE_MAX) {
        struct pollfd p[5];
        int n = 0, i_in = -1, at;
        if (in_off == in_len && !r->draining && eof_now(&eof, r)) {
            in_off = 0;
            in_len = end_of_input(r, in, eof.sent > 1 || at_line_start);
        }
        bool pending = in_off < in_len;
        /* In the background our terminal is the shell's, cooked: its
         * input is not ours to read (a read would stop us, SIGTTIN). A
         * terminal that is not our controlling one has no foreground of
         * ours to wait for (tcgetpgrp() fails): it is read as it is. */
        pid_t fg = r->input_is_tty ? tcgetpgrp(0) : -1;
        bool background = fg >= 0 && fg != getpgrp();
        if (!background)
            enter_raw(r);
        if (!r->draining && in_open && !pending && !background) {
            i_in = n;
            p[n++] = (struct pollfd){ .fd = 0, .events = POLLIN };
        }
        int i_master = n;
        p[n++] = (struct pollfd){ .fd = r->master,
                                  .events = POLLIN | (!r->draining && pending ? POLLOUT : 0) };
        int i_job = n;
        p[n++] = (struct pollfd){ .fd = r->job_fd, .events = POLLIN };
        int i_note = n;
        p[n++] = (struct pollfd){ .fd = r->child_note[0], .events = POLLIN };
        int deadline_ms = add_watch(r, p, &n, &at, true), timeout = deadline_ms;
        if (background && (timeout < 0 || timeout > FOREGROUND_LOOK_MS))
            timeout = FOREGROUND_LOOK_MS;
        if (!pending && !r->draining)
            timeout = eof_timeout(&eof, timeout);
        int k = poll(p, (nfds_t)n, timeout);
        if ((k < 0 && errno == EINTR) || (k == 0 && timeout != deadline_ms))
            continue;
        if (k <= 0)
            break;  /* 0: past the drain's deadline, and nothing more came */
        check_watch(r, p, at);
        if (r->stop)
            break;
        short mrev = p[i_master].revents;
        if (mrev & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t got = read(r->master, out, sizeof out);
            if (got > 0 && r->draining && mono_ms() >= r->deadline)
                late += (size_t)got;
            if (got > 0)
                eof_look_soon(&eof);
            if (got > 0 && write_out(r, out, (size_t)got) != 0) {
                /* Nobody reads our stdout: the program's terminal hangs
                 * up, as when a terminal window is closed (SIGHUP to
                 * its session, then EIO). */
                close_fd(&r->master);
                break;
            }
            /* EIO: every process has closed the terminal side (we hold
             * it too until the child has ended), the end of the output
             * when two reads in a row say it (see "Terminals" in
             * forkless.h: Linux can say it once before the last bytes). */
            bool end = got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR);
            bool eio = got < 0 && errno == EIO;
            if (eio && !eio_seen)
                end = false;
            if (got >= 0 || errno != EINTR)
                eio_seen = eio;
            if (end)
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
                int64_t now = mono_ms();
                in_open = false;
                eof = (struct eof_state){ .started = true, .first_by = now + EOF_WAIT_MS,
                                          .next_look = now, .look_ms = EOF_LOOK_MS };
            }
        }
        if (p[i_job].revents & POLLIN)
            on_job_signals(r);
        if (p[i_note].revents & POLLIN)
            on_child_note(r);
    }
    follow_stops_to_the_end(r);
    return NULL;
}

static void undo(struct pty_relay *r)
{
    restore_terminal(r);
    close_fd(&r->master);
    close_fd(&r->slave);
    close_fd(&r->job_fd);
    close_fd(&r->wake[0]);
    close_fd(&r->wake[1]);
    close_fd(&r->child_note[0]);
    close_fd(&r->child_note[1]);
    sigset_t was_not;
    sigemptyset(&was_not);
    for (size_t i = 0; i < sizeof job_signals / sizeof *job_signals; i++)
        if (!sigismember(&r->old_mask, job_signals[i]))
            sigaddset(&was_not, job_signals[i]);
    pthread_sigmask(SIG_UNBLOCK, &was_not, NULL);
}

/* A copy of the terminal side of master, for the relay: O_NOCTTY, not to
 * become our controlling terminal. TIOCGPTPEER (Linux 4.13), else by
 * its name. -1 and errno if neither works. */
static int open_terminal_side(int master)
{
#ifdef TIOCGPTPEER
    int fd = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0)
        return fd;
#endif
    char name[128];
    if (ptsname_r(master, name, sizeof name) != 0)
        return -1;
    return open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
}

int pty_relay_start(struct pty_relay *r, int *master, const struct fl_proc *child, int signal_fd)
{
    if (!r->enabled || *master < 0)
        return 0;
    r->child = child->pid;
    r->child_pidfd = child->pidfd;
    sigset_t w;
    sigemptyset(&w);
    sigaddset(&w, SIGWINCH);
    if (r->input_is_tty) {
        sigaddset(&w, SIGTSTP);
        sigaddset(&w, SIGCONT);
    }
    /* Blocked here, in the thread that starts the relay's: both have
     * them blocked, and only the signalfd takes them. */
    pthread_sigmask(SIG_BLOCK, &w, &r->old_mask);
    int err = 0;
    r->signal_fd = signal_fd;
    r->master = fcntl(*master, F_DUPFD_CLOEXEC, 3);
    if (r->master < 0 || fcntl(r->master, F_SETFL, fcntl(r->master, F_GETFL) | O_NONBLOCK) < 0 ||
        (r->slave = open_terminal_side(r->master)) < 0 || pipe2(r->wake, O_CLOEXEC) < 0 ||
        pipe2(r->child_note, O_CLOEXEC | O_NONBLOCK) < 0 ||
        (r->job_fd = signalfd(-1, &w, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
        err = errno;
    if (!err && r->input_is_tty) {
        struct termios raw = r->saved;
        cfmakeraw(&raw);
        if (tcsetattr(0, TCSANOW, &raw) != 0)
            err = errno;
        else
            r->raw = true;
    }
    if (!err)
        pass_size(r);  /* a resize since pty_relay_prepare() */
    if (!err)
        err = pthread_create(&r->thread, NULL, relay_main, r);
    if (err) {
        undo(r);
        return err;
    }
    /* The relay's copy is then the only master: closing it hangs up. */
    close_fd(master);
    r->started = true;
    return 0;
}

void pty_relay_finish(struct pty_relay *r, bool interrupted)
{
    if (!r->started)
        return;
    r->interrupted = interrupted;  /* read once the wake pipe is */
    while (write(r->wake[1], "x", 1) < 0 && errno == EINTR)
        ;
    pthread_join(r->thread, NULL);
    r->started = false;
    undo(r);
}

void pty_relay_child_changed(void *relay)
{
    struct pty_relay *r = relay;
    if (r->started && r->child_note[1] >= 0)
        while (write(r->child_note[1], "c", 1) < 0 && errno == EINTR)
            ;  /* EAGAIN: a note is there already */
}
