/* supervise.c: the wait loop of `forkless run`.
 *
 * One poll() on two fds: the child's pidfd, readable once the child has
 * ended (without reaping it), and a signalfd for the signals forkless
 * passes on. Not reaping early matters: while the ended leader is an
 * unreaped zombie its pid stays reserved, so kill(-pid, SIGKILL) can still
 * only reach its own process group, never a stranger that reused the pid. */
#include "supervise.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
    if (opts->timeout_signal > 0 && terminates(opts->timeout_signal))
        sigaddset(set, opts->timeout_signal);
    sigprocmask(SIG_BLOCK, set, old);
    /* Made now, not once the child runs: without it forkless would
     * ignore every signal it blocked for good. */
    opts->signal_fd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (opts->signal_fd < 0) {
        int err = errno;
        sigprocmask(SIG_SETMASK, old, NULL);
        return err;
    }
    return 0;
}

void supervise_end(struct supervise_options *opts)
{
    if (opts->signal_fd >= 0)
        close(opts->signal_fd);
    opts->signal_fd = -1;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

/* The child itself first, through its pidfd: it may have left its group
 * (setpgid to another one), and kill(-pid) would then miss it. Then the
 * rest of its group, and SIGCONT for a stopped one, as timeout(1) does. */
static void signal_child(struct fl_proc *proc, bool own_group, int sig)
{
    fl_kill(proc, sig);
    if (!own_group)
        return;
    kill(-proc->pid, sig);
    if (sig != SIGKILL && sig != SIGCONT) {
        fl_kill(proc, SIGCONT);
        kill(-proc->pid, SIGCONT);
    }
}

/* Has the child had this signal from the kernel already, so that
 * passing it on would deliver it twice? A terminal sends Ctrl-C (INT)
 * and Ctrl-\ (QUIT) to its whole foreground group, ours since we got
 * it: the child has it too if it is still in our group (it may have
 * left it, as a --foreground child may). HUP from a hangup goes to the
 * session leader alone: the child has it only if forkless is not that
 * leader (then it is the HUP that the leader's exit, or an orphaned
 * group, sends to a whole group). */
static bool child_has_it(const struct fl_proc *proc, const struct signalfd_siginfo *si)
{
    int sig = (int)si->ssi_signo;
    if (si->ssi_code != SI_KERNEL || (sig != SIGINT && sig != SIGQUIT && sig != SIGHUP))
        return false;
    /* The child is not reaped yet: its pid is still its own. */
    pid_t child_group = getpgid(proc->pid);
    if (child_group < 0 || child_group != getpgrp())
        return false;
    return sig != SIGHUP || getsid(0) != getpid();
}

struct state {
    enum { RUNNING, STOPPING, KILLED } phase;
    int64_t deadline;  /* of the timeout, then of the SIGKILL; -1: none */
    bool timed_out;
};

/* The time is up (or SIGALRM said so): the timeout's signal, then later
 * SIGKILL. */
static void time_up(struct fl_proc *proc, const struct supervise_options *opts,
                    struct state *st)
{
    if (st->phase == KILLED)
        return;
    if (st->phase == RUNNING) {
        st->timed_out = true;
        signal_child(proc, opts->own_group, opts->timeout_signal);
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
        signal_child(proc, opts->own_group, opts->timeout_signal);
        return;
    }
    /* As for timeout(1), SIGKILL is a timeout, even when a signal passed
     * on (with --kill-after) rather than the time started its delay. */
    st->timed_out = true;
    signal_child(proc, opts->own_group, SIGKILL);
    st->phase = KILLED;
    st->deadline = -1;
}

/* A signal forkless received. SIGALRM is the timeout's, as for
 * timeout(1); any other is passed on. */
static void on_signal(struct fl_proc *proc, const struct supervise_options *opts,
                      struct state *st, const struct signalfd_siginfo *si)
{
    int sig = (int)si->ssi_signo;
    if (sig == SIGALRM && opts->timeout_given) {
        st->timed_out = true;
        time_up(proc, opts, st);
        return;
    }
    if (!child_has_it(proc, si))
        signal_child(proc, opts->own_group, sig);
    if (st->phase == RUNNING && opts->kill_after_given && opts->kill_after_ms >= 0) {
        st->phase = STOPPING;
        st->deadline = now_ms() + opts->kill_after_ms;
    }
}

/* Is a process of group pgid still running? A zombie is not (a zombie
 * leader thread is, while its other threads run). Returns 1 or 0, or -1
 * when it cannot tell: no /proc, or one of another pid namespace. */
static int group_running(pid_t pgid)
{
    char path[300], buf[512];
    ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    if (atol(buf) != (long)getpid())
        return -1;
    DIR *dir = opendir("/proc");
    if (!dir)
        return -1;
    int running = 0;
    struct dirent *entry;
    while (!running && (entry = readdir(dir))) {
        if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;  /* gone meanwhile */
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        /* "PID (COMM) STATE PPID PGRP ... NUM_THREADS(20) ...": COMM may
         * hold anything, ')' too. */
        const char *p = strrchr(buf, ')');
        char state;
        int group;
        long threads;
        if (!p || sscanf(p + 1, " %c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
                                "%*d %*d %*d %ld", &state, &group, &threads) != 3)
            continue;
        if (group == (int)pgid && ((state != 'Z' && state != 'X') || threads > 1))
            running = 1;
    }
    closedir(dir);
    return running;
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
        int running = group_running(proc->pid);
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

int supervise(struct fl_proc *proc, const struct supervise_options *opts,
              int *status, bool *timed_out)
{
    struct state st = {
        .phase = RUNNING,
        .deadline = opts->timeout_ms > 0 ? now_ms() + opts->timeout_ms : -1,
    };
    int sfd = opts->signal_fd;

    for (;;) {
        int wait_ms = -1;
        if (st.deadline >= 0) {
            int64_t left = st.deadline - now_ms();
            wait_ms = left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
        }
        if (proc->pidfd < 0 && (wait_ms < 0 || wait_ms > NO_PIDFD_POLL_MS))
            wait_ms = NO_PIDFD_POLL_MS;

        struct pollfd fds[2] = {
            { .fd = proc->pidfd, .events = POLLIN },
            { .fd = sfd, .events = POLLIN },
        };
        int n = poll(fds, 2, wait_ms);
        if (n < 0 && errno != EINTR)
            return errno;
        if (n > 0 && (fds[1].revents & POLLIN))
            read_signals(proc, opts, &st);
        if (child_ended(proc, n > 0 && fds[0].revents != 0))
            break;
        if (st.deadline >= 0 && now_ms() >= st.deadline)
            time_up(proc, opts, &st);
    }

    /* Whatever the leader did, the rest of its group may live on: a
     * timeout ends all of it by the SIGKILL deadline, unless SIGKILL is
     * never to be sent. */
    if (st.timed_out && opts->own_group && opts->kill_after_ms >= 0) {
        wait_for_group(proc, opts, &st);
        kill(-proc->pid, SIGKILL);
    }
    /* A signal that came as the child ended is still passed on, to the
     * rest of its group, while the child's pid (the group's id) is still
     * reserved; SIGALRM no longer makes a timeout of an end that came
     * first. Once the child is reaped, one that comes has nothing left
     * to go to, and forkless exits as the child did. */
    struct signalfd_siginfo si;
    while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
        if (!((int)si.ssi_signo == SIGALRM && opts->timeout_given) && !child_has_it(proc, &si))
            signal_child(proc, opts->own_group, (int)si.ssi_signo);
    *timed_out = st.timed_out;
    return fl_wait(proc, -1, status);
}
