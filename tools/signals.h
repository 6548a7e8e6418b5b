/* signals.h: signal names and numbers on the command line (--signal,
 * --default-signal, --ignore-signal, --block-signal), as timeout(1) and
 * env(1) read them, and what the child's signals are to be. */
#ifndef FL_TOOLS_SIGNALS_H
#define FL_TOOLS_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* "TERM", "sigterm", "SIGTERM", "15", "RTMIN", "RTMIN+2", "RTMIN2",
 * "RTMAX-1": a name in any case with or without SIG, or a number, which
 * may be a shell's exit status for the signal (137: KILL), all as
 * timeout(1) and env(1) read them. Only signals that exist here: 1-31 and
 * SIGRTMIN to SIGRTMAX (glibc keeps 32 and 33 for itself). Returns 0, or
 * -1 for anything else (0 included). */
int parse_signal(const char *text, int *sig);

/* --signal, as timeout -s reads it: parse_signal()'s, or 0 ("0", "EXIT",
 * "128"): no signal is sent, only SIGKILL at the --kill-after deadline. */
int parse_timeout_signal(const char *text, int *sig);

/* "TERM", "RTMIN+2", or the number: for messages. */
const char *signal_name(int sig, char *buf, size_t size);

/* The child's signal settings from --default-signal, --ignore-signal and
 * --block-signal, applied in order: the last word on a signal wins, as
 * with env(1). --default-signal also unblocks, as in env(1). */
struct child_signals {
    sigset_t defaults;
    sigset_t ignore;
    sigset_t block;
    sigset_t unblock;
    bool any_default, any_ignore, any_mask;
};

enum signal_action { SIGNAL_DEFAULT, SIGNAL_IGNORE, SIGNAL_BLOCK };

void child_signals_init(struct child_signals *cs);

/* Applies LIST, comma-separated signals ("PIPE,USR1"; an empty item does
 * nothing), for the option named option ("--ignore-signal"). SIGKILL and
 * SIGSTOP cannot be reset or ignored (blocking them is a no-op, as for
 * the kernel). Prints the reason and returns -1 for a bad item. */
int child_signals_add(struct child_signals *cs, enum signal_action action,
                      const char *option, const char *list);

/* The child's mask: base (ours, with --keep-signals; else empty) with
 * the blocks and unblocks applied. */
void child_signals_mask(const struct child_signals *cs, const sigset_t *base, sigset_t *out);

#endif
