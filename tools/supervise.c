/* supervise.c: the wait loop of `forkless run`.
 *
 * One poll() on two fds: the child's pidfd, readable once the child has
 * ended (without reaping it), and a signalfd for the signals forkless
 * passes on. Not reaping early matters: while the ended leader is an
 * unreaped zombie its pid stays reserved, so kill(-pid, SIGKILL) can still
 * only reach its own process group, never a stranger that reused the pid. */
#include "supervise.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The signals a user or a service manager sends to stop a job. */
static const int forwarded_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };

/* Without a pidfd (old kernels) the loop checks the child this often. */
enum { NO_PIDFD_POLL_MS = 20 };

static void forwarded_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < sizeof forwarded_signals / sizeof *forwarded_signals; i++)
        sigaddset(set, forwarded_signals[i]);
}

void supervise_block_signals(sigset_t *old)
{
    sigset_t set;
    forwarded_set(&set);
    sigprocmask(SIG_BLOCK, &set, old);
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
 * rest of its group, as timeout(1) does. */
static void signal_child(struct fl_proc *proc, bool own_group, int sig)
{
    fl_kill(proc, sig);
    if (own_group)
        kill(-proc->pid, sig);
}

/* Passes on a signal forkless received. A signal the kernel sent (a
 * terminal's ^C, ^\, hangup) already reached the child when it shares our
 * process group, so it is passed on only to a child in a group of its
 * own; a signal some process sent to forkless alone is always passed on. */
static void forward_signal(struct fl_proc *proc, bool own_group,
                           const struct signalfd_siginfo *si)
{
    if (!own_group && si->ssi_code == SI_KERNEL)
        return;
    signal_child(proc, own_group, (int)si->ssi_signo);
}

int supervise(struct fl_proc *proc, const struct supervise_options *opts,
              int *status, bool *timed_out)
{
    enum { RUNNING, TERM_SENT } phase = RUNNING;
    int64_t deadline = opts->timeout_ms > 0 ? now_ms() + opts->timeout_ms : -1;
    sigset_t set;
    forwarded_set(&set);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);

    *timed_out = false;
    for (;;) {
        int wait_ms = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            wait_ms = left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
        }
        if (proc->pidfd < 0 && (wait_ms < 0 || wait_ms > NO_PIDFD_POLL_MS))
            wait_ms = NO_PIDFD_POLL_MS;

        struct pollfd fds[2] = {
            { .fd = proc->pidfd, .events = POLLIN },
            { .fd = sfd, .events = POLLIN },
        };
        int n = poll(fds, 2, wait_ms);
        if (n < 0 && errno != EINTR) {
            int err = errno;
            if (sfd >= 0)
                close(sfd);
            return err;
        }
        if (n > 0 && (fds[1].revents & POLLIN)) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                forward_signal(proc, opts->own_group, &si);
        }
        if (child_ended(proc, n > 0 && fds[0].revents != 0))
            break;
        if (deadline < 0 || now_ms() < deadline)
            continue;
        if (phase == TERM_SENT)
            break;  /* it ignored SIGTERM for kill_after_ms */
        *timed_out = true;
        phase = TERM_SENT;
        signal_child(proc, opts->own_group, SIGTERM);
        signal_child(proc, opts->own_group, SIGCONT);  /* a stopped child */
        deadline = now_ms() + opts->kill_after_ms;
    }
    if (sfd >= 0)
        close(sfd);

    /* Whatever the leader did, the rest of its group may live on: a
     * timeout ends all of it. */
    if (*timed_out)
        signal_child(proc, opts->own_group, SIGKILL);
    return fl_wait(proc, -1, status);
}
