/* supervise.h: waiting for the child of `forkless run`, with an optional
 * timeout, while passing on the signals that forkless itself receives. */
#ifndef FL_TOOLS_SUPERVISE_H
#define FL_TOOLS_SUPERVISE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "forkless.h"

struct supervise_options {
    /* 0: wait for ever. Otherwise, when it runs out: SIGTERM (and
     * SIGCONT) to the child and its process group, up to kill_after_ms
     * for the child to end, then SIGKILL to both in any case. */
    int64_t timeout_ms;
    int64_t kill_after_ms;
    /* The child leads a process group of its own (FL_NEW_PGROUP or
     * FL_SETSID): signals go to the whole group as well as to the child
     * (which may have left it). A timeout needs this. */
    bool own_group;
};

/* Blocks the signals that supervise() passes on, so that they queue for
 * its signalfd instead of killing forkless; call it before fl_spawn().
 * *old receives the previous mask. */
void supervise_block_signals(sigset_t *old);

/* Waits for proc to end and reaps it. Returns 0 with *status set (and
 * *timed_out telling whether the timeout struck), or the errno value of
 * fl_wait() or of the wait machinery (ECHILD: the status was lost). */
int supervise(struct fl_proc *proc, const struct supervise_options *opts,
              int *status, bool *timed_out);

#endif
