/* supervise.h: waiting for the child of `forkless run` (or the stages of
 * `forkless pipe`), with an optional timeout, while passing on the
 * signals that forkless itself receives. */
#ifndef FL_TOOLS_SUPERVISE_H
#define FL_TOOLS_SUPERVISE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "forkless.h"
#include "killtree.h"

struct supervise_options {
    /* 0: wait for ever. Otherwise, when it runs out (or SIGALRM comes),
     * timeout_signal and SIGCONT go to the child and its process group;
     * kill_after_ms later SIGKILL goes to both. If the child ends
     * first, the rest of its group has until then, and SIGKILL follows
     * if any of it is left. */
    int64_t timeout_ms;
    /* --timeout was given, 0 too: as for timeout(1), SIGALRM then means
     * that the time is up, and the child gets a process group of its
     * own (unless --foreground). */
    bool timeout_given;
    int timeout_signal;
    /* How long after the first stop signal SIGKILL follows; -1: never
     * (nor to the rest of the group, which forkless does not wait for). */
    int64_t kill_after_ms;
    /* --kill-after was given: as with timeout -k, a signal passed on
     * (forkless got SIGTERM, say) starts the kill_after_ms too. */
    bool kill_after_given;
    /* The child leads a process group of its own (FL_NEW_PGROUP or
     * FL_SETSID): signals go to the whole group as well as to the child
     * (which may have left it). A timeout needs this. */
    bool own_group;
    /* --kill-tree: forkless is a subreaper (killtree.h). Every signal
     * it sends the program goes to the descendants handed to it as well;
     * once the program has ended, those that had none get timeout_signal,
     * each once, and SIGKILL at the kill_after_ms deadline, until none is
     * left. SIGCHLD is then handled too, to reap them as they end. */
    bool kill_tree;
    /* With kill_tree: the program's --cgroup, which holds every
     * descendant, handed to forkless or not. */
    const char *cgroup;
    /* With kill_tree: the children forkless had before the spawn, from
     * tree_adopt(), left alone (struct tree's foreign); freed by
     * free_run_options(). */
    pid_t *tree_foreign;
    size_t tree_nforeign;
    /* If not NULL: set once forkless passes a signal on or the time
     * runs out. */
    bool *interrupted;
    /* If not NULL: set when the children's group had forkless's terminal
     * as they ended (job control), and forkless passed no signal on. A ^C
     * or ^\ then went to them alone, where it would have reached
     * forkless's own group too (a script, a pager): see die_by_signal(). */
    bool *terminal_was_lent;
    /* SIGCHLD is read too, and on_sigchld(on_sigchld_arg), where set,
     * called at each (the --pty relay: has the program stopped?). */
    bool watch_sigchld;
    void (*on_sigchld)(void *arg);
    void *on_sigchld_arg;
    /* The child (a pipeline: its stages) leads a process group of its own
     * in forkless's session (`forkless run --timeout`, --pgroup, and
     * always `forkless pipe`): the terminal's ^Z and resizes go on to it,
     * and on forkless's terminal that group gets the terminal once a child
     * asks for it (job control, see job_stopped() in supervise.c). Not
     * with --pty, whose relay handles them, nor --setsid. */
    bool relay_job;
    /* With relay_job: the group gets the terminal from the start where
     * forkless is alone in its own group (`forkless pipe`, whose stages,
     * and the processes they start, may read it), not only once a child
     * asks for it. Then a ^Z that stops only processes further down (a
     * vfork() child before its exec) goes unseen. */
    bool lend_tty_when_alone;
    /* Filled by supervise_start(): with relay_job, the fd among 0-2 that
     * is forkless's controlling terminal, else -1. SIGCHLD is then
     * handled too, to see a child stop. */
    int job_tty;
    /* The signals forkless passes on, and the signalfd that reads them;
     * supervise_start() fills both. */
    sigset_t handled;
    int signal_fd;
};

/* Blocks the signals that supervise() handles, so that they queue for
 * its signalfd instead of killing forkless, and opens that signalfd;
 * call it before fl_spawn(), so that a child is never started that
 * forkless could not pass signals on to. These are the signals whose
 * default is to terminate, real-time ones included, and timeout_signal;
 * not one that was ignored when forkless started (a background job's
 * SIGINT), except timeout_signal and, with --timeout, SIGALRM. *old
 * receives the previous mask. Returns 0, or the errno value of
 * signalfd() (EMFILE: no fd left), with the mask restored. */
int supervise_start(struct supervise_options *opts, sigset_t *old);

/* Prints why supervise_start() failed with err. */
void supervise_start_error(int err);

/* Closes the signalfd of supervise_start(). */
void supervise_end(struct supervise_options *opts);

/* Waits for proc to end and reaps it (and, with kill_tree, what is left
 * of its descendants). Returns 0 with *result filled by fl_wait_result()
 * (or fl_stop(), for a kill_tree cgroup) and result->timed_out telling
 * whether the timeout struck, or the errno value of those calls or of
 * the wait machinery (ECHILD: the status was lost). */
int supervise(struct fl_proc *proc, const struct supervise_options *opts,
              struct fl_result *result);

/* supervise() for `forkless pipe`: waits until every stage of pl has
 * ended, passing signals on to each stage and to the pipeline's group
 * (own_group must be set; kill_tree is refused, EINVAL) and applying
 * the time limit to the whole pipeline, then reaps them all with
 * fl_pipeline_wait() into results[0..pl->n-1], timed_out and killed (the
 * timeout's SIGKILL went out while a stage ran) set alike in each.
 * Returns 0, or the errno value of the wait (the stages may then
 * be left running: the caller ends them). */
int supervise_pipeline(struct fl_pipeline *pl, const struct supervise_options *opts,
                       struct fl_result *results);

#endif
