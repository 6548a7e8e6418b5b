/* pty_relay.h: `forkless run --pty`: the program runs on a new
 * pseudo-terminal, and forkless relays between it and its own stdin and
 * stdout, as script(1) does without a typescript. */
#ifndef FL_TOOLS_PTY_RELAY_H
#define FL_TOOLS_PTY_RELAY_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
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
    int master;                /* a copy of proc.pty, O_NONBLOCK */
    int wake[2];               /* written when the child has ended */
    int winch_fd;              /* a signalfd for SIGWINCH */
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
 * the master and the master to fd 1, passes SIGWINCH on as a resize,
 * and when fd 0 ends sends the terminal's VEOF. Nothing to do when
 * master is -1 (no stream on the pty). Returns 0 or an errno value, with
 * our terminal as it was. */
int pty_relay_start(struct pty_relay *r, int master);

/* After the child has ended: relays what is left of its output (until
 * EIO, or until nothing comes for a moment: a descendant may hold the
 * terminal), stops the thread, and restores our terminal. Safe when
 * nothing was started. */
void pty_relay_finish(struct pty_relay *r);

#endif
