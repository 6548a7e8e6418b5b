/* pty_relay.h: `forkless run --pty`: the program runs on a new
 * pseudo-terminal, and forkless relays between it and its own stdin and
 * stdout, as script(1) does without a typescript. */
#ifndef FL_TOOLS_PTY_RELAY_H
#define FL_TOOLS_PTY_RELAY_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <termios.h>

#include "forkless.h"

struct pty_relay {
    bool enabled;              /* --pty */
    bool size_given;           /* --pty-size ROWSxCOLS */
    unsigned short rows, cols;
    /* What the library sets on the new terminal before the child starts. */
    struct fl_tty_options tty;
    struct termios termios;
    /* Our own terminal, or -1: fd 0 if it is one (raw for the run), else
     * fd 1 for its size only. */
    int term_fd;
    bool input_is_tty;
    bool raw;                  /* term_fd is in raw mode: restore saved */
    struct termios saved;
    /* While the relay runs (pty_relay_start() to pty_relay_finish()). */
    int master;                /* proc.pty's, O_NONBLOCK; the only one */
    int slave;                 /* the terminal side, until the child has ended */
    int wake[2];               /* written when the child has ended */
    int job_fd;                /* a signalfd: SIGWINCH; SIGTSTP, SIGCONT on a terminal */
    int child_note[2];         /* written at each SIGCHLD */
    pid_t child;               /* the program, and its handle's pidfd (or -1) */
    int child_pidfd;
    int signal_fd;             /* supervise's, read during the drain */
    bool draining;             /* the child has ended */
    int64_t deadline;          /* of the drain, CLOCK_MONOTONIC ms */
    bool stop;                 /* the drain is over */
    bool interrupted;          /* forkless stopped the child: a bounded drain */
    sigset_t old_mask;
    pthread_t thread;
    bool started;
};

/* Parses --pty-size's ROWSxCOLS (1-65535 each). 0 or -1. */
int pty_parse_size(const char *s, unsigned short *rows, unsigned short *cols);

/* Before the spawn: the new terminal's settings. With fd 0 a terminal,
 * its termios and window size (as script(1) copies them); otherwise the
 * kernel's defaults without ECHO, since nobody types, and the size of
 * fd 1 if that is a terminal. --pty-size wins. Points cmd->tty at them.
 * Returns 0, or -1 after a message. */
int pty_relay_prepare(struct pty_relay *r, struct fl_cmd *cmd);

/* After the spawn: our terminal goes raw, and a thread relays fd 0 to
 * the master and the master to fd 1, passes SIGWINCH on as a resize
 * (not with --pty-size: that size is fixed), and when fd 0 ends sends
 * the terminal's VEOF, for each read (see struct eof_state). It holds a copy of the terminal side until the
 * child has ended, so that a program that closes its terminal and opens
 * it again (/dev/tty) is still relayed. The relay takes *master (and
 * sets it to -1): if nobody reads fd 1 any more (EPIPE), it closes it,
 * and the program's terminal hangs up (SIGHUP). When the program stops
 * (SIGSTOP), forkless stops too, and continues it once continued itself
 * (see pty_relay_child_changed()), also once the relay has hung up; child is its handle,
 * whose pidfd must stay open until pty_relay_finish(). signal_fd is
 * supervise's, read once the child has
 * ended. Nothing to do when *master is -1 (no stream on the pty).
 * Returns 0 or an errno value, with our terminal as it was and *master
 * left alone. */
int pty_relay_start(struct pty_relay *r, int *master, const struct fl_proc *child, int signal_fd);

/* After the child has ended: relays what is left of its output until
 * EIO (every descendant has closed the terminal), reading for
 * FL_EOF_WAIT_MS at most (then only what the terminal holds), nor past a
 * signal to forkless meanwhile, stops the thread, and restores our
 * terminal. A slow reader of fd 1 is waited for, unless interrupted
 * (forkless stopped the child: a signal it passed on, the timeout):
 * then only until that deadline. Safe when nothing was started. */
void pty_relay_finish(struct pty_relay *r, bool interrupted);

/* From supervise(), at each SIGCHLD it reads (the relay's thread reads no
 * signal that supervise() may read; see watch_sigchld in supervise.h):
 * relay, a struct pty_relay, looks whether the program has stopped.
 * Nothing to do before pty_relay_start(). */
void pty_relay_child_changed(void *relay);

#endif
