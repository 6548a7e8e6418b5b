/* io.c: the exchange with running processes: one poll() over their
 * pidfds and every pipe end, so that input, outputs and the processes'
 * ends are all seen as they happen and no sizes can deadlock; a deadline
 * and a stop policy over it; then the reap. fl_communicate() and fl_run()
 * (run.c) are its one-process uses; pipelines are the n-process one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "internal.h"

/* Reads and writes per stream per wake-up: a stream that never runs dry
 * must not keep the loop from its deadline or from the other streams. */
#define ROUNDS 8
#define WRITE_MAX (1u << 20)
#define READ_MAX (1u << 20)
#define SCRATCH ((size_t)256 << 10)
/* Without pidfd_open (before Linux 5.3) the processes' ends are looked
 * for with waitid() at least this often. */
#define LOOK_MS 10
/* How long a pty master whose terminal side every holder has closed sits
 * out of poll() while a process of the exchange lives, before it is read
 * again (rest()). */
#define REST_MS 100
/*
 * F_SETPIPE_SZ. The default pipe holds 64 KiB, so a child that writes a
 * lot is woken and put to sleep every 64 KiB, and so is the reader. A
 * stream that has brought PIPE_GROW_AFTER bytes is grown to PIPE_BIG (the
 * unprivileged maximum by default): small outputs never take the extra
 * kernel memory, which counts against the user's pipe-user-pages-soft
 * (past it, new pipes of this user are made with two pages only).
 * Measured with fl_run() on 2 shared CPUs, a child writing 256 MiB in 64 KiB
 * writes, medians of 21 runs: read and dropped (.discard, or a callback),
 * 1860 MiB/s with 64 KiB pipes, 4990 MiB/s with 1 MiB ones; collected into
 * a library buffer, 1330 to 1560 MiB/s either way (the buffer's page faults
 * dominate). Growing is one fcntl() and may fail (EPERM past the limits):
 * the pipe then stays as it was.
 */
#define PIPE_GROW_AFTER (1u << 20)
#define PIPE_BIG (1 << 20)

struct fl__stream fl__stream_in(int fd, const struct fl_io *io, struct fl_result *result)
{
    return (struct fl__stream){ .fd = fd, .input = true, .data = io->input,
                                .len = io->input ? io->input_len : 0, .result = result };
}

struct fl__stream fl__stream_out(int fd, int stream, const struct fl_sink *sink,
                                 struct fl_output *out)
{
    struct fl__stream s = { .fd = fd };
    s.sink.cfg = sink;
    s.sink.stream = stream;
    s.sink.out = out;
    return s;
}

/*
 * A pty master is one stream, not two: its input and its output are one
 * fd, which cannot be half-closed, so a second stream for the input would
 * have to share the fd and never close it, and poll() would see the fd
 * twice. One stream reads it as an output (POLLIN, the end is EIO) and,
 * while it is fed, writes it too (POLLOUT as well); the end of the input
 * is the VEOF characters, and only the end of the output closes the fd.
 */
struct fl__stream fl__stream_tty(int fd, bool fed, const struct fl_io *io,
                                 struct fl_result *result)
{
    struct fl__stream s = fed ? fl__stream_in(fd, io, result) : (struct fl__stream){ .fd = fd };
    s.tty = true;
    s.sink = fl__stream_out(fd, 1, &io->out[0], &result->out[0]).sink;
    return s;
}

/* The stream is read (an output pipe, a pty master)... */
static bool reads(const struct fl__stream *s)
{
    return !s->input || s->tty;
}

/* ... or written, until its input is over. */
static bool writes(const struct fl__stream *s)
{
    return s->input && !s->fed;
}

const char *fl__io_problem(const struct fl_io *io, char *buf, size_t size)
{
    for (size_t i = 0; i < sizeof io->reserved_ / sizeof *io->reserved_; i++)
        if (io->reserved_[i])
            return "struct fl_io: a reserved field is not zero";
    if (io->timeout_ms < 0) {
        snprintf(buf, size, "struct fl_io: timeout_ms is %d (0: no deadline)", io->timeout_ms);
        return buf;
    }
    if (io->eof_wait_ms < -1) {
        snprintf(buf, size, "struct fl_io: eof_wait_ms is %d (-1: for ever)", io->eof_wait_ms);
        return buf;
    }
    if (io->input_len && !io->input)
        return "struct fl_io: input_len is set without input";
    for (int k = 0; k < 2; k++) {
        const char *why = fl__sink_problem(&io->out[k]);
        if (why) {
            snprintf(buf, size, "struct fl_io: out[%d]: %s", k, why);
            return buf;
        }
    }
    /* Each stream would write over the other's bytes. */
    const struct fl_sink *o = io->out;
    if (o[0].buf && o[1].buf && (uintptr_t)o[0].buf < (uintptr_t)o[1].buf + o[1].size &&
        (uintptr_t)o[1].buf < (uintptr_t)o[0].buf + o[0].size)
        return "struct fl_io: out[0] and out[1] have overlapping buffers";
    return NULL;
}

int fl__io_check(const struct fl_io *io)
{
    char buf[FL_ERROR_DETAIL_MAX];
    return fl__io_problem(io, buf, sizeof buf) ? EINVAL : 0;
}

/* The state of one exchange. */
struct xchg {
    struct fl_proc *procs;
    size_t n, nended;
    int *pidfd;             /* -1: look with waitid(WNOWAIT) */
    bool *ended;
    struct fl__stream *st;
    size_t ns, nopen;
    struct pollfd *pfd;
    struct fl__stopper *stop;
    long long deadline_ns;  /* -1: none */
    long long eof_at_ns;    /* -1: not yet, or never */
    long long killed_at_ns; /* the stop's SIGKILL; -1: none yet */
    long long killed_look_ns;  /* the next look's delay, while they exit */
    long long rest_look_ns;    /* the next look at the rest of a group; 0: none */
    int rest_look_ms;
    int eof_wait_ms;
    int err;                /* the first hard error */
    bool nomem, cancelled, stop_requested, timed_out;
    char *scratch;
    size_t scratch_len;
    char small[512];        /* when no scratch can be had: small, as the
                               caller's stack may be a thread's smallest */
};

static void note_err(struct xchg *x, int err)
{
    if (!x->err)
        x->err = err;
}

static void close_stream(struct xchg *x, struct fl__stream *s)
{
    if (s->fd < 0)
        return;
    close(s->fd);
    s->fd = -1;
    x->nopen--;
    if (s->input && !s->veof)
        s->result->input_written = s->done;
    if (reads(s)) {
        fl__sink_end(&s->sink);
        x->nomem |= s->sink.nomem;
    }
}

/*
 * The input to a pty master is over: a terminal cannot be half-closed,
 * so the end of file is the VEOF character, which the line discipline
 * turns into the end of a read() in canonical mode: once after a whole
 * line (or no input at all) makes a read() return 0; after a partial line
 * the first only hands that line over, and a second is the end. Without
 * ICANON (or with VEOF disabled) no byte means the end: nothing is sent.
 * The settings are read now, not at the spawn, as the child may have
 * changed them. The VEOFs then take the place of the input in data, and
 * are fed as it was. Returns false when there is none to write.
 */
/* The canonical line that n_tty holds after reading the input: what
 * decides how the input is ended. */
struct tty_line {
    unsigned char *bytes;   /* the line, for the erases; NULL: only counted */
    size_t len;
    bool literal;           /* a VLNEXT came last: the next byte is the line's */
    bool eof_given;         /* a VEOF came last, at a line's start */
};

#define TTY_LINE_MAX 4095   /* n_tty keeps no more of a canonical line */

/* The kernel's ctype is Latin-1: its letters 0xc0-0xff (but 0xd7 and
 * 0xf7) are alphanumeric, and 0xc0-0xde (but 0xd7) upper case. */
static bool kernel_isalnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= 0xc0 && c != 0xd7 && c != 0xf7);
}

static unsigned char kernel_tolower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7) ? (unsigned char)(c + 0x20)
                                                                            : c;
}

static bool continuation(const struct termios *t, unsigned char c)
{
    return (t->c_iflag & IUTF8) && (c & 0xc0) == 0x80;
}

/* n_tty's eraser(): VERASE takes one character (with IUTF8, its
 * continuation bytes too), VWERASE the last word and what follows it
 * (BSD's ALTWERASE), VKILL the line, at once unless ECHO, ECHOK, ECHOKE
 * and ECHOE are all set, when it goes a character at a time; a character
 * whose lead byte is not in the line is never erased in part. */
static void erase(const struct termios *t, struct tty_line *l, unsigned char c)
{
    const tcflag_t echo_all = ECHO | ECHOK | ECHOKE | ECHOE;
    bool kill = c != t->c_cc[VERASE] && c != t->c_cc[VWERASE];
    if (!l->len)
        return;
    if (kill && (t->c_lflag & echo_all) != echo_all) {
        l->len = 0;
        return;
    }
    if (!l->bytes) {  /* counted only: one byte, or the line */
        l->len = c == t->c_cc[VERASE] ? l->len - 1 : 0;
        return;
    }
    bool word = !kill && c != t->c_cc[VERASE];
    int seen = 0;
    while (l->len) {
        size_t head = l->len;
        unsigned char lead;
        do
            lead = l->bytes[--head];
        while (continuation(t, lead) && head);
        if (continuation(t, lead))
            break;
        if (word && (kernel_isalnum(lead) || lead == '_'))
            seen++;
        else if (word && seen)
            break;
        l->len = head;
        if (!kill && !word)
            break;
    }
}

static void put_in_line(const struct termios *t, struct tty_line *l, unsigned char c)
{
    /* PARMRK doubles a 0xff in the line, so that a mark can be told. */
    for (int copies = c == 0xff && (t->c_iflag & PARMRK) ? 2 : 1; copies; copies--)
        if (l->len < TTY_LINE_MAX) {
            if (l->bytes)
                l->bytes[l->len] = c;
            l->len++;
        }
    l->eof_given = false;
}

/* Reads byte c as n_tty does in canonical mode
 * (n_tty_receive_char_special(), in its order). What changes nothing
 * (flow control, an ignored "\r", VREPRINT, an erase on an empty line)
 * leaves an end of file given as given. */
static void read_as_tty(const struct termios *t, struct tty_line *l, unsigned char c)
{
    const unsigned char dis = _POSIX_VDISABLE;
    bool ext = (t->c_lflag & IEXTEN) != 0;
    if (t->c_iflag & ISTRIP)
        c &= 0x7f;
    if ((t->c_iflag & IUCLC) && ext)
        c = kernel_tolower(c);
    if (l->literal || c == dis) {
        l->literal = false;
        put_in_line(t, l, c);
        return;
    }
    if ((t->c_iflag & IXON) && (c == t->c_cc[VSTART] || c == t->c_cc[VSTOP]))
        return;
    if ((t->c_lflag & ISIG) &&
        (c == t->c_cc[VINTR] || c == t->c_cc[VQUIT] || c == t->c_cc[VSUSP])) {
        if (!(t->c_lflag & NOFLSH))
            l->len = 0, l->eof_given = false;  /* the input is flushed */
        return;
    }
    if (c == '\r' && (t->c_iflag & IGNCR))
        return;
    c = c == '\r' && (t->c_iflag & ICRNL) ? '\n' : c == '\n' && (t->c_iflag & INLCR) ? '\r' : c;
    if (c == t->c_cc[VERASE] || c == t->c_cc[VKILL] || (ext && c == t->c_cc[VWERASE]))
        erase(t, l, c);
    else if (ext && c == t->c_cc[VLNEXT])
        l->literal = true;
    else if (ext && (t->c_lflag & ECHO) && c == t->c_cc[VREPRINT])
        return;
    else if (c == '\n' || c == t->c_cc[VEOL] || (ext && c == t->c_cc[VEOL2]))
        l->len = 0, l->eof_given = false;
    else if (c == t->c_cc[VEOF])
        l->eof_given = l->len == 0, l->len = 0;
    else
        put_in_line(t, l, c);
}

/* How many VEOFs end the input data[0..n) on a terminal in canonical
 * mode: 0 after an end of file the input gave itself (a VEOF at a line's
 * start, last), 1 at a line's start, 2 after a partial line (the first
 * hands it over), 3 after a VLNEXT (the first is taken as a byte of the
 * line). The whole input is read as the line discipline reads it. */
static int veofs_to_end(const struct termios *t, const char *data, size_t n)
{
    /* A VEOF that these settings read otherwise (as "\n", a signal, an
     * erase...) can give no end of file: none is sent. */
    struct tty_line probe = { 0 };
    read_as_tty(t, &probe, t->c_cc[VEOF]);
    if (!probe.eof_given)
        return 0;
    struct tty_line l = { .bytes = malloc(TTY_LINE_MAX) };  /* NULL: erases counted */
    for (size_t i = 0; i < n; i++)
        read_as_tty(t, &l, (unsigned char)data[i]);
    free(l.bytes);
    return l.literal ? 3 : l.eof_given ? 0 : l.len ? 2 : 1;
}

static bool start_veof(struct fl__stream *s)
{
    struct termios t;
    size_t fed = s->done;
    s->result->input_written = s->done;
    s->veof = true;
    /* EXTPROC: the line discipline hands the bytes over unread, VEOF
     * included. */
    if (tcgetattr(s->fd, &t) < 0 || !(t.c_lflag & ICANON) || (t.c_lflag & EXTPROC) ||
        t.c_cc[VEOF] == _POSIX_VDISABLE)
        return false;
    int veofs = veofs_to_end(&t, s->data, fed);
    if (veofs == 0)
        return false;
    s->eof[0] = s->eof[1] = s->eof[2] = (char)t.c_cc[VEOF];
    s->data = s->eof;
    s->len = (size_t)veofs;
    s->done = 0;
    return true;
}

/* A pipe is closed at the end of its input; a pty master stays open for
 * its output. */
static void end_input(struct xchg *x, struct fl__stream *s)
{
    if (!s->tty) {
        close_stream(x, s);
        return;
    }
    if (!s->veof)
        s->result->input_written = s->done;
    s->veof = s->fed = true;
}

/* The SIGPIPE an EPIPE just raised, taken back (see feed()). It is
 * thread-directed, and sigtimedwait() takes the thread's own pending
 * signals before the process's, so it takes this one. One that was
 * pending before stays: a process-directed one is pending apart from
 * ours; a thread-directed one merged with ours (a standard signal is
 * pending once), so taking ours took it, and it is raised again. */
static void take_back_sigpipe(bool was_pending, const sigset_t *pipe_set)
{
    static const struct timespec zero = { 0, 0 };
    while (sigtimedwait(pipe_set, NULL, &zero) < 0 && errno == EINTR)
        ;
    sigset_t pending;
    if (was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) != 1)
        pthread_kill(pthread_self(), SIGPIPE);
}

/* Writes up to ROUNDS times; true when the input can go no further: the
 * reader is gone (EPIPE; EIO on a pty master, whose terminal side every
 * holder has closed) or an error. */
static bool write_some(struct xchg *x, struct fl__stream *s, bool was_pending,
                       const sigset_t *pipe_set)
{
    for (int i = 0; i < ROUNDS && s->done < s->len; i++) {
        size_t want = s->len - s->done < WRITE_MAX ? s->len - s->done : WRITE_MAX;
        ssize_t w = write(s->fd, s->data + s->done, want);
        if (w >= 0) {
            s->done += (size_t)w;
        } else if (errno == EPIPE || (s->tty && errno == EIO)) {
            s->result->input_closed |= !s->veof;  /* not for a VEOF: the input was taken */
            if (errno == EPIPE)
                take_back_sigpipe(was_pending, pipe_set);
            return true;
        } else if (errno == EAGAIN) {
            break;
        } else if (errno != EINTR) {
            note_err(x, errno);
            return true;
        }
    }
    return false;
}

/*
 * SIGPIPE. A write to a pipe whose reader is gone raises SIGPIPE in the
 * writing thread, and its default action kills the whole process.
 * MSG_NOSIGNAL would prevent it, but only for send() on a socket, and
 * stdin is a pipe; setting SIGPIPE to SIG_IGN would change the process's
 * disposition under every other thread and library. So the signal is
 * blocked in this thread alone around the writes: the write then fails
 * with EPIPE and the signal stays pending for this thread, where
 * sigtimedwait() with a zero timeout takes it back, leaving pending what
 * was pending before (take_back_sigpipe()). Then the mask is put back as
 * it was; a SIGPIPE that came from elsewhere meanwhile is delivered then,
 * as it would have been.
 */
static void feed(struct xchg *x, struct fl__stream *s)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    bool over = write_some(x, s, was_pending, &pipe_set);
    if (!over && s->done == s->len && s->tty && !s->veof && start_veof(s))
        over = write_some(x, s, was_pending, &pipe_set);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (over || s->done == s->len)
        end_input(x, s);
}

static void maybe_grow_pipe(struct fl__stream *s)
{
    if (s->tty || s->grown_at || s->sink.total < PIPE_GROW_AFTER)
        return;
    s->grown_at = s->sink.total;
    (void)fcntl(s->fd, F_SETPIPE_SZ, PIPE_BIG);  /* EPERM past the user's limits: fine */
}

/* A buffer for the bytes that are not kept where they are read (discarded,
 * past a limit, or a ring that wrapped), made on first need. */
static char *scratch(struct xchg *x, size_t *len)
{
    if (!x->scratch && (x->scratch = malloc(SCRATCH)))
        x->scratch_len = SCRATCH;
    if (!x->scratch) {
        *len = sizeof x->small;
        return x->small;
    }
    *len = x->scratch_len;
    return x->scratch;
}

/*
 * The terminal side of a pty is closed, but a process lives on: the
 * master stays open, as closing it would hang the terminal up, and SIGHUP
 * would end a child that closed its stdio to go on working (a pipe's
 * reader waits for such a child, and so does this). poll() says POLLHUP
 * at once while nobody holds the terminal side, so the master is left out
 * of it for REST_MS at a time, then read again: a process that opens
 * /dev/tty again and writes is read, REST_MS late at most. Once every
 * process has ended, its EIO is the end (drain()).
 */
static void rest(struct fl__stream *s)
{
    s->rest_until_ns = fl__now_ns() + REST_MS * 1000000LL;
}

static bool resting(const struct xchg *x, const struct fl__stream *s, long long now)
{
    return s->rest_until_ns && x->nended < x->n && now < s->rest_until_ns;
}

/*
 * Reads what is there, up to rounds reads. Returns true at the end: EOF,
 * or, on a pty master, EIO (every holder of the terminal side has closed
 * it; POLLHUP comes with it) said by two reads in a row.
 *
 * Linux can say EIO once too early. A read of the master that finds its
 * line discipline empty first waits for the bytes already queued on
 * their way in, then looks whether the other side is closed; a write
 * and the last close that land between the two leave that write's bytes
 * queued, and the read says EIO with them still to come (and poll() says
 * POLLHUP). The closed flag was set after the write was queued, so a read
 * that begins after the EIO waits for those bytes: it gets them, or,
 * saying EIO again, is the end. The confirming read is not one of the
 * rounds, so that the last round's EIO is confirmed too (give_up_eof()
 * has no later wake-up).
 */
static bool drain(struct xchg *x, struct fl__stream *s, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        char *at = NULL;
        size_t room = fl__sink_room(&s->sink, READ_MAX, &at);
        bool kept = room > 0;
        if (!kept)
            at = scratch(x, &room);
        ssize_t r = read(s->fd, at, room);
        if (r > 0 && kept)
            fl__sink_took(&s->sink, (size_t)r);
        else if (r > 0)
            fl__sink_put(&s->sink, at, (size_t)r);
        if (r < 0 && errno == EINTR)
            continue;
        bool eio = r < 0 && s->tty && errno == EIO;
        if (eio && !s->eio_seen) {
            s->eio_seen = true;
            rounds++;
            continue;
        }
        s->eio_seen = false;
        if (r > 0)
            continue;
        if (r < 0 && errno == EAGAIN)
            break;
        if (eio && x->nended < x->n) {
            rest(s);
            return false;
        }
        if (r < 0 && !eio)
            note_err(x, errno);
        /* A pty's end of output while its input was still going in: every
         * holder of the terminal closed it, as a pipe's EPIPE says. */
        if (eio && s->input && !s->fed && !s->veof && s->done < s->len)
            s->result->input_closed = true;
        close_stream(x, s);
        return true;
    }
    maybe_grow_pipe(s);
    return false;
}

static void start_stop(struct xchg *x)
{
    fl__stop_begin(x->stop);
}

/* How long after the stop's SIGKILL the outputs may still reach their
 * end (the killed close them as they exit) before the eof wait gives up;
 * and, while the rest of a group or cgroup that it reached is still seen
 * to run (a busy machine may take a while to run the exits), how long at
 * most, looking again after 5 ms, then twice as long each time up to
 * 100 ms. */
#define KILLED_EOF_NS (100 * 1000000LL)
#define KILLED_EXIT_MAX_NS (5 * 1000000000LL)

/* Is anything left for the stop's SIGKILL: a process, or the rest of a
 * group or cgroup? */
static bool stop_reaches_something(const struct xchg *x)
{
    return x->nended < x->n || x->stop->scope != FL_STOP_PROCESS;
}

/* A sink that asks for the stop: act on it once for each reason. */
static void sink_events(struct xchg *x, struct fl__stream *s)
{
    if (!fl__sink_wants_stop(&s->sink))
        return;
    x->nomem |= s->sink.nomem;
    x->stop_requested |= s->sink.overflow_stop || s->sink.cancelled;
    if (s->sink.cancelled) {
        /* One callback said stop: no other is called either. */
        x->cancelled = true;
        for (size_t i = 0; i < x->ns; i++)
            x->st[i].sink.quiet = true;
    }
    if (stop_reaches_something(x))
        start_stop(x);
}

static void mark_ended(struct xchg *x, size_t k)
{
    if (!x->ended[k]) {
        x->ended[k] = true;
        x->nended++;
    }
}

static bool has_ended(const struct fl_proc *p)
{
    siginfo_t si = { 0 };
    int r;
    do
        r = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT);
    while (r < 0 && errno == EINTR);
    return r < 0 || si.si_pid == p->pid;  /* an error: the reap will say */
}

static int ms_until(long long at_ns, long long now)
{
    long long ms = (at_ns - now + 999999) / 1000000;
    return ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

static int min_ms(int a, int b)
{
    return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

static int poll_timeout(const struct xchg *x)
{
    long long now = fl__now_ns();
    int t = -1;
    /* The deadline starts the stop; once every process has ended, the eof
     * wait (which the deadline cuts short) takes its place. */
    if (x->deadline_ns >= 0 && !fl__stop_started(x->stop) && x->nended < x->n)
        t = ms_until(x->deadline_ns, now);
    if (x->eof_at_ns >= 0)
        t = min_ms(t, ms_until(x->eof_at_ns, now));
    for (size_t k = 0; k < x->n; k++)
        if (!x->ended[k] && x->pidfd[k] < 0)
            t = min_ms(t, LOOK_MS);
    /* Every stream that step() left out of this poll() to rest, also one
     * whose rest has ended since: then at once. */
    for (size_t i = 0; i < x->ns; i++)
        if (x->st[i].fd >= 0 && x->st[i].rest_until_ns)
            t = min_ms(t, ms_until(x->st[i].rest_until_ns, now));
    if (x->rest_look_ns)
        t = min_ms(t, ms_until(x->rest_look_ns, now));
    return stop_reaches_something(x) ? fl__stop_clip_ms(x->stop, t) : t;
}

/* Past eof_wait_ms after the last process's end: what the pipes hold is
 * taken, and whatever a descendant keeps open is closed. */
static void give_up_eof(struct xchg *x)
{
    for (size_t i = 0; i < x->ns; i++) {
        struct fl__stream *s = &x->st[i];
        if (s->fd < 0)
            continue;
        if (reads(s) && drain(x, s, 64)) {
            sink_events(x, s);
            continue;
        }
        if (reads(s))
            s->sink.out->eof_missed = true;
        /* Input left unwritten: a process left behind holds the stdin
         * pipe without reading it, and the child is gone; to the caller
         * that is the input cut short, as by the child's EPIPE. */
        if (s->input && !s->veof && s->done < s->len)
            s->result->input_closed = true;
        close_stream(x, s);
        sink_events(x, s);   /* a last partial line's callback may say stop */
    }
}

/* Once the stop has sent SIGKILL, the eof wait ends no sooner than
 * KILLED_EOF_NS from now: the killed close the pipes as they exit. */
static void give_the_killed_a_moment(struct xchg *x, long long now)
{
    if (x->stop->killed && x->killed_at_ns < 0)
        x->killed_at_ns = now;
    if (x->stop->killed && x->eof_at_ns >= 0 && x->eof_at_ns < now + KILLED_EOF_NS)
        x->eof_at_ns = now + KILLED_EOF_NS;
}

/* The eof wait is over, but the rest of a group or cgroup that the
 * stop's SIGKILL reached still runs: it lets go of the pipes as it exits.
 * The wait goes on while it is seen to, KILLED_EXIT_MAX_NS at most (a
 * member that the caller may not signal never exits). */
static bool killed_still_exiting(struct xchg *x, long long now)
{
    if (x->killed_at_ns < 0 || now - x->killed_at_ns >= KILLED_EXIT_MAX_NS ||
        !fl__stop_killed_rest(x->stop) || fl__stop_rest_running(x->stop) <= 0)
        return false;
    x->killed_look_ns = x->killed_look_ns ? x->killed_look_ns * 2 : 5 * 1000000LL;
    if (x->killed_look_ns > 100 * 1000000LL)
        x->killed_look_ns = 100 * 1000000LL;
    x->eof_at_ns = now + x->killed_look_ns;
    return true;
}

/* After the processes have all ended: the time left for the outputs. */
static void start_eof_wait(struct xchg *x)
{
    long long now = fl__now_ns();
    if (x->eof_wait_ms < 0 && x->deadline_ns < 0)
        return;  /* for ever */
    x->eof_at_ns = x->eof_wait_ms < 0 ? LLONG_MAX : now + (long long)x->eof_wait_ms * 1000000;
    /* The deadline covers the whole exchange, this wait too; but the rest
     * of a group that a stop reaches has its grace to end in, which the
     * call waits out anyway (fl__stop_finish()), and what it writes
     * meanwhile is read, not met with a closed pipe. */
    long long limit = x->deadline_ns;
    long long rest = fl__stop_rest_until_ns(x->stop);
    if (limit >= 0 && rest > limit)
        limit = rest;
    if (limit >= 0 && limit < x->eof_at_ns)
        x->eof_at_ns = limit > now ? limit : now;
    give_the_killed_a_moment(x, now);
}

static void handle_events(struct xchg *x, size_t npfd)
{
    for (size_t j = 0; j < npfd; j++) {
        struct pollfd *p = &x->pfd[j];
        if (!p->revents)
            continue;
        /* Entries below n are pidfds, by index; above, streams. */
        if (j < x->n) {
            if (p->revents & POLLNVAL)
                note_err(x, EBADF);
            mark_ended(x, j);
            continue;
        }
        struct fl__stream *s = &x->st[j - x->n];
        if (s->fd < 0)
            continue;
        /* A pty master is both: written on POLLOUT (or on the hang-up,
         * to see EIO), read on the rest. */
        if (writes(s) && (!s->tty || (p->revents & ~POLLIN)))
            feed(x, s);
        if (s->fd >= 0 && reads(s) && (!s->tty || (p->revents & ~POLLOUT))) {
            drain(x, s, ROUNDS);
            sink_events(x, s);
        }
    }
}

/* Returns false when poll(), a read or a write failed for good. */
static bool step(struct xchg *x)
{
    /* Whatever sends the stop's SIGKILL in this step (a sink that asks
     * for a stop whose first signal is SIGKILL, the deadline, the grace's
     * end), those it kills let go of the pipes a moment later: the eof
     * wait, which may end at that very time, gives them the moment. */
    bool killed = x->stop->killed;
    size_t np = 0;
    for (size_t k = 0; k < x->n; k++)
        x->pfd[k] = (struct pollfd){ .fd = x->ended[k] ? -1 : x->pidfd[k], .events = POLLIN };
    np = x->n;
    long long before = fl__now_ns();
    for (size_t i = 0; i < x->ns; i++) {
        struct fl__stream *s = &x->st[i];
        if (s->rest_until_ns && !resting(x, s, before))
            s->rest_until_ns = 0;  /* over: watched again */
        x->pfd[np++] = (struct pollfd){ .fd = s->rest_until_ns ? -1 : s->fd,
                                        .events = (short)((writes(s) ? POLLOUT : 0) |
                                                          (reads(s) ? POLLIN : 0)) };
    }
    int r = fl__poll(x->pfd, np, poll_timeout(x));
    if (r < 0 && errno != EINTR) {
        note_err(x, errno);
        return false;
    }
    if (r > 0)
        handle_events(x, np);
    /* A read or write that failed (not a reader gone, not an end): the
     * exchange cannot go on as asked, and the processes are stopped. */
    if (x->err)
        return false;
    for (size_t k = 0; k < x->n; k++)
        if (!x->ended[k] && x->pidfd[k] < 0 && has_ended(&x->procs[k]))
            mark_ended(x, k);
    long long now = fl__now_ns();
    /* The stop is due while a process runs, and, for a group or cgroup,
     * while the rest of it runs after the processes have ended: the
     * deadline is the whole job's. That rest then has the stop's grace
     * to end in, as it would have had with the process still running. */
    if (x->deadline_ns >= 0 && now >= x->deadline_ns && !fl__stop_started(x->stop) &&
        (x->nended < x->n ||
         (x->stop->scope != FL_STOP_PROCESS && fl__stop_rest_running(x->stop) > 0))) {
        x->timed_out = true;
        start_stop(x);
        if (x->nended == x->n)
            start_eof_wait(x);
    }
    /* SIGKILL at the grace's end: for the processes while one is left,
     * and for the rest of a group or cgroup the stop reaches. */
    if (stop_reaches_something(x))
        fl__stop_tick(x->stop);
    if (!killed && x->stop->killed)
        give_the_killed_a_moment(x, now);
    if (x->nended == x->n && x->eof_at_ns < 0)
        start_eof_wait(x);
    if (x->eof_at_ns >= 0 && now >= x->eof_at_ns && !killed_still_exiting(x, now))
        give_up_eof(x);
    return true;
}

/* After a failure that ends the exchange early: no more reading or
 * writing; the processes are stopped and waited for. */
static void abandon(struct xchg *x)
{
    /* The stop first: a process that then finds its pipes closed (EOF,
     * EPIPE) has its signal pending already, and ends by it, not by a
     * SIGPIPE of its own that the caller would take for its answer. */
    if (x->nended < x->n)
        start_stop(x);
    for (size_t i = 0; i < x->ns; i++)
        close_stream(x, &x->st[i]);
    for (size_t k = 0; k < x->n; k++) {
        while (!x->ended[k]) {
            int r = fl__await_end(&x->procs[k], x->pidfd[k], fl__stop_clip_ms(x->stop, -1));
            fl__stop_tick(x->stop);
            if (r == 0 || r != ETIMEDOUT)
                mark_ended(x, k);  /* an error: the reap says what it is */
        }
    }
}

/* The processes have ended and no stream is open, but the rest of their
 * group or cgroup runs on. Where the eof wait reaches the deadline (-1
 * does), the call waits for that rest too, and stops it at the deadline
 * as it would have the processes (see fl_io.eof_wait_ms): a daemon that
 * closed its fds is part of the job. Looked at every 10 ms at first, then
 * less often, as a look walks the group or reads cgroup.procs. */
static bool waits_for_the_rest(struct xchg *x)
{
    x->rest_look_ns = 0;
    if (x->nended < x->n || x->nopen > 0 || x->deadline_ns < 0 || x->eof_at_ns < 0 ||
        x->eof_at_ns < x->deadline_ns || x->stop->scope == FL_STOP_PROCESS ||
        fl__stop_started(x->stop) || fl__stop_rest_running(x->stop) <= 0)
        return false;
    x->rest_look_ms = x->rest_look_ms ? min_ms(x->rest_look_ms * 2, 100) : LOOK_MS;
    x->rest_look_ns = fl__now_ns() + (long long)x->rest_look_ms * 1000000;
    return true;
}

static int run(struct xchg *x, struct fl_result *results)
{
    for (size_t k = 0; k < x->n; k++)
        x->pidfd[k] = -1;
    for (size_t i = 0; i < x->ns; i++) {
        struct fl__stream *s = &x->st[i];
        int fl = fcntl(s->fd, F_GETFL);
        if (fl < 0 || (!(fl & O_NONBLOCK) && fcntl(s->fd, F_SETFL, fl | O_NONBLOCK) < 0))
            note_err(x, errno);
        if (s->input && s->len == 0 && !s->tty)  /* a pty's VEOF waits for POLLOUT */
            close_stream(x, s);
    }
    for (size_t k = 0; k < x->n; k++) {
        int r = fl__proc_pollfd(&x->procs[k], &x->pidfd[k]);
        if (r == ENOSYS)
            x->pidfd[k] = -1;
        else if (r)
            mark_ended(x, k);  /* not our child: the reap says ECHILD */
    }
    if (x->err)
        abandon(x);
    while (x->nended < x->n || x->nopen > 0 || waits_for_the_rest(x)) {
        if (!step(x)) {
            abandon(x);
            break;
        }
    }
    fl__stop_finish(x->stop);
    int err = x->err;
    /* The leader of a pipeline's group last, as pipeline.c does. */
    for (size_t k = x->n; k-- > 0;) {
        int r = fl__result_reap(&x->procs[k], &results[k]);
        if (r && !err)
            err = r;
        fl__stop_record(x->stop, &results[k]);
        results[k].timed_out = x->timed_out;
        results[k].stop_requested = x->stop_requested;
    }
    if (!err && x->nomem)
        err = ENOMEM;
    if (!err && x->cancelled)
        err = ECANCELED;
    return err;
}

int fl__exchange(struct fl_proc *procs, struct fl_result *results, size_t n,
                 struct fl__stream *streams, size_t nstreams, const struct fl_io *io,
                 struct fl__stopper *stop)
{
    int saved_errno = errno, cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    for (size_t k = 0; k < n; k++)
        results[k] = (struct fl_result){ .exit_code = -1 };
    struct xchg x = {
        .procs = procs, .n = n, .st = streams, .ns = nstreams, .nopen = nstreams,
        .stop = stop, .deadline_ns = -1, .eof_at_ns = -1, .killed_at_ns = -1,
        .eof_wait_ms = io->eof_wait_ms ? io->eof_wait_ms : FL_EOF_WAIT_MS,
    };
    if (io->timeout_ms > 0)
        x.deadline_ns = fl__now_ns() + (long long)io->timeout_ms * 1000000;
    for (size_t i = 0; i < nstreams; i++)
        if (reads(&streams[i]))
            fl__sink_init(&streams[i].sink, streams[i].sink.cfg, streams[i].sink.stream,
                          streams[i].sink.out);
    /* One process and its three streams need no allocation; a pipeline's
     * arrays do. */
    enum { SMALL = 8 };
    struct pollfd pfd_small[SMALL];
    int pidfd_small[SMALL];
    bool ended_small[SMALL] = { false };
    void *block = NULL;
    x.pfd = pfd_small;
    x.pidfd = pidfd_small;
    x.ended = ended_small;
    if (n + nstreams > SMALL) {
        block = calloc(n + nstreams, sizeof(struct pollfd) + sizeof(int) + sizeof(bool));
        if (!block) {
            /* Nothing can be watched: close everything, end the
             * processes at once, and reap them. */
            for (size_t i = 0; i < nstreams; i++)
                close_stream(&x, &streams[i]);
            /* SIGKILL with the stop's reach (a pipeline's whole group),
             * so that reaping cannot wait; the leader last. */
            fl__stop_kill_now(stop);
            for (size_t k = n; k-- > 0;) {
                fl__result_reap(&procs[k], &results[k]);
                fl__stop_record(stop, &results[k]);
            }
            pthread_setcancelstate(cancel_state, NULL);
            errno = saved_errno;
            return ENOMEM;
        }
        x.pfd = block;
        x.pidfd = (int *)(x.pfd + n + nstreams);
        x.ended = (bool *)(x.pidfd + n + nstreams);
    }
    int err = run(&x, results);
    for (size_t k = 0; k < n; k++)
        if (x.pidfd[k] >= 0 && x.pidfd[k] != procs[k].pidfd)
            close(x.pidfd[k]);
    free(x.scratch);
    free(block);
    pthread_setcancelstate(cancel_state, NULL);
    errno = saved_errno;
    return err;
}
