/* supervise.c: the wait loop of `forkless run` and `forkless pipe`.
 *
 * One poll() on the child's pidfd (a pipeline: every stage's), readable
 * once the child has ended (without reaping it), and a signalfd for the
 * signals forkless passes on. Not reaping early matters: while the ended leader is an
 * unreaped zombie its pid stays reserved, so kill(-pid, SIGKILL) can still
 * only reach its own process group, never a stranger that reused the pid. */
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "job_control.h"

/* The signals forkless passes on: those whose default action ends a
 * process, SIGKILL aside (the list of coreutils' term-sig.h). timeout
 * 9.1 passes on ALRM, INT, QUIT, HUP, TERM and its -s signal only. */
static const int stop_signals[] = {
    SIGALRM, SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2,
    SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ,
    SIGSYS, SIGVTALRM, SIGPROF, SIGPOLL, SIGPWR,
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
};

/* Without a pidfd (old kernels) the loop checks the child this often. */
enum { NO_PIDFD_POLL_MS = 20 };

static bool ignored(int sig)
{
    struct sigaction sa;
    return sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
}

/* Does sig end a process by default? A timeout signal that does not
 * (SIGCHLD, SIGCONT, SIGSTOP, ...) is still sent, but not handled. */
static bool terminates(int sig)
{
    switch (sig) {
    case SIGCHLD: case SIGCONT: case SIGSTOP: case SIGTSTP: case SIGTTIN:
    case SIGTTOU: case SIGURG: case SIGWINCH: case SIGKILL:
        return false;
    }
    return true;
}

int supervise_start(struct supervise_options *opts, sigset_t *old)
{
    sigset_t *set = &opts->handled;
    sigemptyset(set);
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
        sigaddset(set, stop_signals[i]);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
        sigaddset(set, sig);
    for (int sig = 1; sig <= SIGRTMAX; sig++)
        if (sigismember(set, sig) == 1 && ignored(sig) &&
            !(sig == SIGALRM && opts->timeout_given))
            sigdelset(set, sig);
    /* The timeout's signal is passed on as the others are, and so, as the
     * help says of them, not when it was ignored at start. */
    if (opts->timeout_signal > 0 && terminates(opts->timeout_signal) &&
        !ignored(opts->timeout_signal))
        sigaddset(set, opts->timeout_signal);
    opts->job_tty = opts->relay_job ? job_tty() : -1;
    if (opts->kill_tree || opts->job_tty >= 0 || opts->watch_sigchld)
        sigaddset(set, SIGCHLD);
    /* See relay_job_signal(). */
    if (opts->relay_job) {
        if (!ignored(SIGTSTP))
            sigaddset(set, SIGTSTP);
        if (!ignored(SIGWINCH))
            sigaddset(set, SIGWINCH);
    }
    sigprocmask(SIG_BLOCK, set, old);
    /* Made now, not once the child runs: without it forkless would
     * ignore every signal it blocked for good. */
    opts->signal_fd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
    /* Off 0-2: where forkless was started with one closed, the child must
     * find it closed too, not this fd (--stderr-to-stdout would copy it). */
    if (opts->signal_fd >= 0 && opts->signal_fd <= 2) {
        int high = fcntl(opts->signal_fd, F_DUPFD_CLOEXEC, 3);
        close(opts->signal_fd);
        opts->signal_fd = high;
    }
    if (opts->signal_fd < 0) {
        int err = errno;
        sigprocmask(SIG_SETMASK, old, NULL);
        return err;
    }
    return 0;
}

void supervise_start_error(int err)
{
    cli_error("cannot watch for signals to pass on (signalfd): %s%s", strerror(err),
              err == EMFILE ? " (RLIMIT_NOFILE leaves no fd for it)" : "");
}

void supervise_end(struct supervise_options *opts)
{
    if (opts->signal_fd >= 0)
        close(opts->signal_fd);
    opts->signal_fd = -1;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t now_ms(void)
{
    return now_ns() / 1000000;
}

/* Has the child ended? Looks without reaping it. */
static bool child_ended(const struct fl_proc *proc, bool pidfd_readable)
{
    if (proc->pidfd >= 0)
        return pidfd_readable;
    siginfo_t info = { 0 };
    if (waitid(P_PID, (id_t)proc->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD;  /* gone: let fl_wait() report it */
    return info.si_pid != 0;
}

/* The children to watch: proc[0..n-1], proc[0] the one whose group they
 * are in (own_group); n is 1 for `forkless run`, a pipeline's stages for
 * `forkless pipe`. fds[0] is the signalfd, fds[1 + k] stage k's pidfd
 * until it has ended (then -1, which poll() skips). */
struct watched {
    struct fl_proc *proc;
    size_t n;
    struct pollfd *fds;  /* n + 1 */
    bool *ended;         /* n */
    bool blind;          /* a child without a pidfd: looked at by waitid() */
};

/* Has every child ended, after a poll() that returned nready? Marks
 * those that have. */
static bool all_ended(struct watched *w, int nready)
{
    bool all = true;
    for (size_t k = 0; k < w->n; k++) {
        if (!w->ended[k] && child_ended(&w->proc[k], nready > 0 && w->fds[1 + k].revents != 0)) {
            w->ended[k] = true;
            w->fds[1 + k].fd = -1;
        }
        all = all && w->ended[k];
    }
    return all;
}

/* The process group that the kernel has sent si's signal to already,
 * or 0. A terminal sends Ctrl-C (INT) and Ctrl-\ (QUIT) to its whole
 * foreground group, ours since we got it. HUP from a hangup goes to the
 * session leader alone: it went to our whole group only if forkless is
 * not that leader (then it is the HUP that the leader's exit, or an
 * orphaned group, sends to a whole group). */
static pid_t sent_to_group(const struct signalfd_siginfo *si)
{
    int sig = (int)si->ssi_signo;
    if (si->ssi_code != SI_KERNEL || (sig != SIGINT && sig != SIGQUIT && sig != SIGHUP))
        return 0;
    if (sig == SIGHUP && getsid(0) == getpid())
        return 0;
    return getpgrp();
}

struct state {
    size_t n;          /* the children: proc[0..n-1] (struct watched) */
    enum { RUNNING, STOPPING, KILLED } phase;
    int64_t deadline;  /* of the timeout, then of the SIGKILL; -1: none */
    bool timed_out;
    bool children_killed;  /* the timeout's SIGKILL went out while one ran */
    bool tty_lent;     /* the children's group has forkless's terminal */
    bool passed_a_signal;  /* forkless got a signal and passed it on */
    struct tree tree;  /* --kill-tree */
};

/* Sends sig, with group, to proc[0]'s group, then through its pidfd to
 * each child (of a pipeline, each stage) that the group's signal may have
 * missed: a child may have left its group (setpgid to another one), and
 * kill(-pid) would miss it; one that got it from the group must not get
 * it twice. A child counts as reached only if it was in the group both
 * just before and just after the group's signal: one that joined or left
 * in between may not have had it. Neither to a child in group spare nor
 * to that group. Returns the group signalled, or 0. */
static pid_t send_children(struct fl_proc *proc, size_t n, bool group, int sig, pid_t spare)
{
    /* No child is reaped yet: their pids are still their own. */
    pid_t few[16], *before = n <= 16 ? few : malloc(n * sizeof *before);
    for (size_t k = 0; before && k < n; k++)
        before[k] = getpgid(proc[k].pid);
    pid_t sent = 0;
    if (group && !(spare > 0 && getpgid(proc->pid) == spare) && kill(-proc->pid, sig) == 0)
        sent = proc->pid;
    for (size_t k = 0; k < n; k++) {
        pid_t pgid = getpgid(proc[k].pid);
        /* Without memory for the look before, only the one after. */
        bool reached = sent > 0 && pgid == sent && (!before || before[k] == sent);
        if (!(spare > 0 && pgid == spare) && !reached)
            fl_kill(&proc[k], sig);
    }
    if (before != few)
        free(before);
    return sent;
}

/* The child's group, and the child itself where it has left that group;
 * SIGCONT after, for a stopped one, as timeout(1) does. Not to the child
 * if it is in group spare (see sent_to_group()): passing it on would
 * deliver it twice. With --kill-tree, to the descendants handed to
 * forkless too, but those in a group that has had it. */
static void signal_child(struct fl_proc *proc, const struct supervise_options *opts,
                         struct state *st, int sig, pid_t spare)
{
    if (opts->kill_tree)
        tree_look(&st->tree);
    pid_t sent = send_children(proc, st->n, opts->own_group, sig, spare);
    if (opts->own_group && sig != SIGKILL && sig != SIGCONT)
        send_children(proc, st->n, true, SIGCONT, spare);
    if (opts->kill_tree)
        tree_signal(&st->tree, proc->pid, sig, (pid_t[2]){ spare, sent }, false);
}

/* Job control on forkless's terminal (opts->job_tty), for a program or
 * pipeline that leads a process group of its own in forkless's session.
 * That group is not the terminal's foreground group, forkless's, which
 * may hold more than forkless: a pager after it in the shell's pipeline
 * (`forkless pipe a ::: b | less`), or a script without job control
 * around it. The terminal goes to the group once one of forkless's
 * children asks for it: stopped by SIGTTIN or SIGTTOU, which the kernel
 * sends to the whole group of a process that reads the terminal, sets its
 * modes or writes under stty tostop, and which no pidfd reports, so that
 * forkless would wait for ever. A child that catches, blocks or ignores
 * them is not stopped, so not seen. `forkless pipe` also lends it from
 * the start where that takes it from no one (job_group_shared()).
 *
 * Until then the terminal's ^Z and resizes come to forkless, which passes
 * them on (relay_job_signal()). Once lent, ^Z sends SIGTSTP to the
 * children's group instead, and the shell, which waits for forkless's
 * group, would never see the job stop: on SIGCHLD, a child stopped for
 * another reason makes forkless take the terminal back and stop its own
 * group with SIGTSTP, as the terminal would have; so does one that asks
 * for the terminal while forkless is not the foreground job. The shell's
 * fg or bg continues that group, which lends the terminal again if it had
 * and is the foreground (fg), and continues the children. An orphaned
 * group has SIGTSTP discarded: the children are then continued at once,
 * but one that asked for the terminal is left stopped. */
static void tty_start(struct fl_proc *proc, const struct supervise_options *opts,
                      struct state *st)
{
    if (opts->job_tty < 0 || !opts->lend_tty_when_alone || job_group_shared())
        return;
    st->tty_lent = job_tty_lend(opts->job_tty, proc->pid);
    /* A process that read the terminal before the loan was stopped for
     * it, unseen where it is not forkless's child. */
    if (st->tty_lent)
        send_children(proc, st->n, true, SIGCONT, 0);
}

static void tty_end(const struct supervise_options *opts, pid_t pgid)
{
    if (opts->job_tty >= 0)
        job_tty_reclaim(opts->job_tty, pgid);
}

static void job_stopped(struct fl_proc *proc, const struct supervise_options *opts,
                        struct state *st)
{
    int stop = 0, tty = opts->job_tty;
    pid_t pgid = proc->pid;
    for (size_t k = 0; k < st->n && stop != SIGTTIN && stop != SIGTTOU; k++) {
        siginfo_t si = { 0 };
        if (waitid(P_PID, (id_t)proc[k].pid, &si, WSTOPPED | WNOHANG | WNOWAIT) == 0 &&
            si.si_pid != 0)
            stop = si.si_status;
    }
    if (!stop)
        return;
    bool asks = stop == SIGTTIN || stop == SIGTTOU;
    /* Lent now, or it was stopped just before an earlier loan. */
    if (asks && (job_tty_lend(tty, pgid) || tcgetpgrp(tty) == pgid)) {
        st->tty_lent = true;
        send_children(proc, st->n, true, SIGCONT, 0);
        return;
    }
    if (st->tty_lent)
        job_tty_reclaim(tty, pgid);
    /* As the terminal would have stopped forkless's group, a pager or
     * a script in it too: the terminal's ^Z went to the children's group
     * instead, or a background job asked for the terminal. SIGSTOP never
     * comes from the terminal (kill -STOP): forkless stops alone. */
    if (!stop_by_sigtstp(asks || (st->tty_lent && stop == SIGTSTP)) && asks)
        return;  /* orphaned: continued, it would only ask again, for ever */
    /* Asked for while forkless was in the background: fg gives it. */
    st->tty_lent = st->tty_lent || asks;
    if (st->tty_lent)
        job_tty_lend(tty, pgid);
    send_children(proc, st->n, true, SIGCONT, 0);
}

/* A SIGPIPE that forkless's own write raised (its stderr's reader gone)
 * is forkless's, not news for the program: the kernel sends it as from
 * the writer itself. The write's EPIPE is dealt with where it happens. */
static bool own_sigpipe(const struct signalfd_siginfo *si)
{
    return si->ssi_signo == SIGPIPE && si->ssi_code == SI_USER &&
           si->ssi_pid == (uint32_t)getpid();
}

/* Is si a signal to pass on? SIGALRM is the timeout's, as for
 * timeout(1); SIGCHLD only says that a descendant handed to forkless
 * has ended. */
static bool passed_on(const struct supervise_options *opts, const struct signalfd_siginfo *si)
{
    int sig = (int)si->ssi_signo;
    return sig != SIGCHLD && !(sig == SIGALRM && opts->timeout_given) && !own_sigpipe(si);
}

/* The time is up (or SIGALRM said so): the timeout's signal, then later
 * SIGKILL. */
static void time_up(struct fl_proc *proc, const struct supervise_options *opts,
                    struct state *st)
{
    if (opts->interrupted)
        *opts->interrupted = true;
    if (st->phase == KILLED)
        return;
    if (st->phase == RUNNING) {
        st->timed_out = true;
        signal_child(proc, opts, st, opts->timeout_signal, 0);
        if (opts->timeout_signal == SIGKILL) {
            st->phase = KILLED;
            st->deadline = -1;
        } else {
            st->phase = STOPPING;
            st->deadline = opts->kill_after_ms < 0 ? -1 : now_ms() + opts->kill_after_ms;
        }
        return;
    }
    if (opts->kill_after_ms < 0) {  /* never SIGKILL: say it again */
        signal_child(proc, opts, st, opts->timeout_signal, 0);
        return;
    }
    /* As for timeout(1), SIGKILL is a timeout, even when a signal passed
     * on (with --kill-after) rather than the time started its delay. */
    st->timed_out = true;
    signal_child(proc, opts, st, SIGKILL, 0);
    st->phase = KILLED;
    st->deadline = -1;
}

/* The program's group of its own (`forkless run --timeout`, --pgroup) is
 * not the terminal's foreground group, which has forkless: the terminal's
 * ^Z and resizes reach forkless alone. So ^Z (SIGTSTP) goes on to the
 * group, which stops as it would in the foreground (a program that catches
 * it first restores its terminal), then forkless stops; when forkless is
 * continued (fg, bg), so is the group: the shell sees one job. A resize
 * (SIGWINCH) is passed on as it is. */
static void relay_job_signal(struct fl_proc *proc, const struct supervise_options *opts,
                             struct state *st, int sig)
{
    send_children(proc, st->n, true, sig, 0);
    if (sig != SIGTSTP)
        return;
    /* Sent by kill, not the terminal, if the group has that. */
    if (st->tty_lent)
        job_tty_reclaim(opts->job_tty, proc->pid);
    stop_by_sigtstp(false);
    if (st->tty_lent)
        job_tty_lend(opts->job_tty, proc->pid);
    send_children(proc, st->n, true, SIGCONT, 0);
}

/* A signal forkless received: see passed_on(). */
static void on_signal(struct fl_proc *proc, const struct supervise_options *opts,
                      struct state *st, const struct signalfd_siginfo *si)
{
    int sig = (int)si->ssi_signo;
    if (own_sigpipe(si))
        return;
    if (sig == SIGTSTP || sig == SIGWINCH) {
        relay_job_signal(proc, opts, st, sig);
        return;
    }
    if (sig != SIGCHLD && opts->interrupted)
        *opts->interrupted = true;
    st->passed_a_signal = st->passed_a_signal || sig != SIGCHLD;
    if (sig == SIGCHLD) {
        if (opts->on_sigchld)
            opts->on_sigchld(opts->on_sigchld_arg);
        if (opts->kill_tree)
            tree_reap(&st->tree, proc->pid);
        if (opts->job_tty >= 0)
            job_stopped(proc, opts, st);
        return;
    }
    if (!passed_on(opts, si)) {
        st->timed_out = true;
        time_up(proc, opts, st);
        return;
    }
    signal_child(proc, opts, st, sig, sent_to_group(si));
    if (st->phase == RUNNING && opts->kill_after_given && opts->kill_after_ms >= 0) {
        st->phase = STOPPING;
        st->deadline = now_ms() + opts->kill_after_ms;
    }
}

/* Is a process of the group the child leads still running? 1 or 0, or
 * -1 when it cannot tell (no /proc of this pid namespace). */
static int group_running(const struct fl_proc *proc)
{
    bool running;
    return fl_pgroup_running(proc, &running) ? -1 : running;
}

static void read_signals(struct fl_proc *proc, const struct supervise_options *opts,
                         struct state *st)
{
    struct signalfd_siginfo si;
    while (read(opts->signal_fd, &si, sizeof si) == (ssize_t)sizeof si)
        on_signal(proc, opts, st, &si);
}

/* The child (its group's leader) ended after the timeout's signal, but
 * the rest of its group may still be at work on that signal: they get
 * until the SIGKILL deadline, as the leader did, then SIGKILL. The
 * leader stays unreaped meanwhile: its pid, the group's id, cannot be
 * reused, so what goes to the group reaches that group alone. Without a
 * /proc to see the group, the wait lasts to the deadline. */
static void wait_for_group(struct fl_proc *proc, const struct supervise_options *opts,
                           struct state *st)
{
    int64_t interval = 5;  /* ms; grows to 100 */
    while (st->phase == STOPPING) {
        int running = group_running(proc);
        if (running == 0)
            return;
        int64_t left = st->deadline - now_ms();
        if (left <= 0) {
            time_up(proc, opts, st);  /* SIGKILL */
            return;
        }
        if (running > 0 && left > interval)
            left = interval;
        struct pollfd pfd = { .fd = opts->signal_fd, .events = POLLIN };
        if (poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left) > 0)
            read_signals(proc, opts, st);
        interval = interval * 2 > 100 ? 100 : interval * 2;
    }
}

/* --kill-tree: the program has ended. If nothing stopped it, the stop
 * of what is left of the tree starts now: timeout_signal, SIGKILL
 * kill_after_ms later. */
static void stop_begin(const struct supervise_options *opts, struct state *st)
{
    if (st->phase != RUNNING)
        return;
    if (opts->timeout_signal == SIGKILL || opts->kill_after_ms == 0) {
        st->phase = KILLED;
        st->deadline = -1;
    } else {
        st->phase = STOPPING;
        st->deadline = opts->kill_after_ms < 0 ? -1 : now_ms() + opts->kill_after_ms;
    }
}

/* --kill-tree with --cgroup, before the program is reaped: the cgroup
 * holds every descendant, handed to forkless or not, and the library's
 * FL_STOP_CGROUP stops it (SIGKILL through cgroup.kill), with the time
 * left to the deadline; it reaps the program. The elapsed time is
 * still the program's, without the stop's. */
static int stop_cgroup(struct fl_proc *proc, const struct supervise_options *opts,
                       struct state *st, struct fl_result *result)
{
    struct fl_stop_policy policy = {
        .signal = opts->timeout_signal,
        .grace_ms = FL_STOP_NEVER_KILL,
        .scope = FL_STOP_CGROUP,
        .cgroup = opts->cgroup,
    };
    if (st->phase == STOPPING && st->deadline >= 0) {
        int64_t left = st->deadline - now_ms();
        if (left <= 0)
            st->phase = KILLED;  /* late (stopped, or a busy machine): no grace is left */
        policy.grace_ms = left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
    }
    if (st->phase == KILLED)
        policy.signal = SIGKILL;
    int64_t ended = now_ns();
    int r = fl_stop(proc, &policy, result);
    if (r == 0) {
        result->elapsed_ns -= now_ns() - ended;
        if (result->killed)
            st->phase = KILLED;
    }
    return r;
}

/* --kill-tree, once the program is reaped: the descendants handed to
 * forkless that have had no signal from it get timeout_signal, each
 * once, as more are handed over (their parents end), and every one
 * SIGKILL from the deadline on, until none is left. Signals are passed on
 * to them meanwhile. */
static void end_tree(const struct supervise_options *opts, struct state *st)
{
    int64_t interval = 5;  /* ms; grows to 100 */
    while (tree_reap(&st->tree, 0) > 0) {
        if (st->phase == STOPPING && st->deadline >= 0 && now_ms() >= st->deadline)
            st->phase = KILLED;
        bool killed = st->phase == KILLED;
        tree_signal(&st->tree, 0, killed ? SIGKILL : opts->timeout_signal, (pid_t[2]){ 0 }, !killed);
        int64_t wait = interval;
        if (!killed && st->deadline >= 0 && st->deadline - now_ms() < wait)
            wait = st->deadline - now_ms();
        struct pollfd pfd = { .fd = opts->signal_fd, .events = POLLIN };
        if (poll(&pfd, 1, wait < 0 ? 0 : (int)wait) > 0) {
            struct signalfd_siginfo si;
            while (read(opts->signal_fd, &si, sizeof si) == (ssize_t)sizeof si)
                if (passed_on(opts, &si))
                    tree_signal(&st->tree, 0, (int)si.ssi_signo, (pid_t[2]){ sent_to_group(&si) }, false);
        }
        interval = interval * 2 > 100 ? 100 : interval * 2;
    }
}

/* Waits until every child has ended, none reaped, passing signals on
 * and keeping the time limit; after a timeout, until the rest of the
 * group is done with too (see wait_for_group()). 0, or poll()'s errno. */
static int watch(struct watched *w, const struct supervise_options *opts, struct state *st)
{
    struct fl_proc *proc = w->proc;
    w->fds[0] = (struct pollfd){ .fd = opts->signal_fd, .events = POLLIN };
    for (size_t k = 0; k < w->n; k++) {
        w->ended[k] = false;
        w->fds[1 + k] = (struct pollfd){ .fd = proc[k].pidfd, .events = POLLIN };
        w->blind = w->blind || proc[k].pidfd < 0;
    }

    tty_start(proc, opts, st);
    for (;;) {
        int wait_ms = -1;
        if (st->deadline >= 0) {
            int64_t left = st->deadline - now_ms();
            wait_ms = left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
        }
        if (w->blind && (wait_ms < 0 || wait_ms > NO_PIDFD_POLL_MS))
            wait_ms = NO_PIDFD_POLL_MS;

        int n = poll(w->fds, w->n + 1, wait_ms);
        if (n < 0 && errno != EINTR) {
            int err = errno;
            tty_end(opts, proc->pid);
            return err;
        }
        if (n > 0 && (w->fds[0].revents & POLLIN))
            read_signals(proc, opts, st);
        if (all_ended(w, n))
            break;
        if (st->deadline >= 0 && now_ms() >= st->deadline)
            time_up(proc, opts, st);
    }
    /* Not the SIGKILL that what is left of the group may get below: the
     * children had all ended by then. */
    st->children_killed = st->phase == KILLED;
    /* Not where forkless got the signal itself and passed it on: its
     * group had that from wherever it came, or was not meant to. */
    if (opts->terminal_was_lent)
        *opts->terminal_was_lent = st->tty_lent && !st->passed_a_signal;
    /* Before any message, and before what is left of the group is waited
     * for: the terminal is forkless's again. */
    tty_end(opts, proc->pid);

    /* Whatever the leader did, the rest of its group may live on: a
     * timeout ends all of it by the SIGKILL deadline, unless SIGKILL is
     * never to be sent. */
    if (st->timed_out && opts->own_group && opts->kill_after_ms >= 0) {
        wait_for_group(proc, opts, st);
        kill(-proc->pid, SIGKILL);
    }
    /* A signal that came as the child ended is still passed on, to the
     * rest of its group, while the child's pid (the group's id) is still
     * reserved; SIGALRM no longer makes a timeout of an end that came
     * first. Once the child is reaped, one that comes has nothing left
     * to go to, and forkless exits as the child did. */
    struct signalfd_siginfo si;
    while (read(opts->signal_fd, &si, sizeof si) == (ssize_t)sizeof si)
        if (passed_on(opts, &si))
            signal_child(proc, opts, st, (int)si.ssi_signo, sent_to_group(&si));
    return 0;
}

int supervise(struct fl_proc *proc, const struct supervise_options *opts,
              struct fl_result *result)
{
    struct state st = {
        .n = 1,
        .phase = RUNNING,
        .deadline = opts->timeout_ms > 0 ? now_ms() + opts->timeout_ms : -1,
        .tree = {
            .stop_signal = opts->timeout_signal,
            .foreign = opts->tree_foreign,
            .nforeign = opts->tree_nforeign,
        },
    };
    struct pollfd fds[2];
    bool ended[1];
    struct watched w = { .proc = proc, .n = 1, .fds = fds, .ended = ended };
    int r = watch(&w, opts, &st);
    if (r == 0 && opts->kill_tree) {
        stop_begin(opts, &st);
        r = opts->cgroup ? stop_cgroup(proc, opts, &st, result)
                         : fl_wait_result(proc, -1, NULL, result);
        if (r == 0)
            end_tree(opts, &st);
    } else if (r == 0) {
        r = fl_wait_result(proc, -1, NULL, result);
    }
    tree_free(&st.tree);
    if (r == 0)
        result->timed_out = st.timed_out;
    return r;
}

int supervise_pipeline(struct fl_pipeline *pl, const struct supervise_options *opts,
                       struct fl_result *results)
{
    if (opts->kill_tree || !opts->own_group)
        return EINVAL;  /* the stages are always in a group of their own */
    struct state st = {
        .n = pl->n,
        .phase = RUNNING,
        .deadline = opts->timeout_ms > 0 ? now_ms() + opts->timeout_ms : -1,
    };
    struct watched w = {
        .proc = pl->procs,
        .n = pl->n,
        .fds = calloc(pl->n + 1, sizeof *w.fds),
        .ended = calloc(pl->n, sizeof *w.ended),
    };
    int r = w.fds && w.ended ? watch(&w, opts, &st) : ENOMEM;
    free(w.fds);
    free(w.ended);
    /* Every stage has ended, and after a timeout the rest of the group
     * is gone: this reaps at once, the leader last. */
    if (r == 0)
        r = fl_pipeline_wait(pl, -1, NULL, results);
    for (size_t k = 0; r == 0 && k < pl->n; k++) {
        results[k].timed_out = st.timed_out;
        results[k].killed = st.children_killed;
    }
    return r;
}
