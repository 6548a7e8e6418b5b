/* wait.c: waiting with a deadline and a stop policy, into a struct
 * fl_result. The wait sleeps in poll() on the pidfd; the process is reaped
 * only once the stop is finished with (see stop.c). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Without pidfd_open (before Linux 5.3): look, sleep, look again, with
 * sleeps growing to 20 ms. */
static int await_polling(pid_t pid, int timeout_ms)
{
    long long deadline = timeout_ms < 0 ? -1 : fl__now_ns() + (long long)timeout_ms * 1000000;
    long step_us = 200;
    for (;;) {
        siginfo_t si = { 0 };
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (si.si_pid == pid)
            return 0;
        long long now = fl__now_ns();
        if (deadline >= 0 && now >= deadline)
            return ETIMEDOUT;
        long long sleep_ns = step_us * 1000LL;
        if (deadline >= 0 && deadline - now < sleep_ns)
            sleep_ns = deadline - now;
        struct timespec ts = { 0, (long)sleep_ns };
        nanosleep(&ts, NULL);
        step_us = step_us < 20000 ? step_us * 2 : 20000;
    }
}

int fl__await_end(const struct fl_proc *p, int fd, int timeout_ms)
{
    return fd >= 0 ? fl__wait_readable(fd, timeout_ms) : await_polling(p->pid, timeout_ms);
}

int fl__result_reap(struct fl_proc *p, struct fl_result *r)
{
    siginfo_t si = { 0 };
    struct rusage ru = { 0 };
    int err = fl__reap_proc(p, &si, &ru, FL__REAP_ENDED);
    if (err)
        return err;
    r->elapsed_ns = fl__now_ns() - p->start_ns_;
    r->status = fl__status_of(&si);
    r->exit_code = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
    r->signal = WIFSIGNALED(r->status) ? WTERMSIG(r->status) : 0;
    r->core_dumped = WIFSIGNALED(r->status) && WCOREDUMP(r->status);
    r->rusage = ru;
    return 0;
}

void fl_result_free(struct fl_result *r)
{
    if (!r)
        return;
    for (int i = 0; i < 2; i++)
        fl__output_free(&r->out[i]);
}

int fl_result_shell_status(const struct fl_result *r)
{
    if (!r)
        return -1;
    return r->signal ? 128 + r->signal : r->exit_code;
}

struct borrowed {
    const struct fl_proc *proc;
    int fd;
};

static void close_borrowed(void *arg)
{
    struct borrowed *b = arg;
    if (b->fd >= 0 && b->fd != b->proc->pidfd)
        close(b->fd);
}

/* The wait of fl_wait_result() and fl_stop(): up to timeout_ms, then
 * (with a stopper) the stop, to the end. */
static int wait_and_stop(struct fl_proc *p, int timeout_ms, struct fl__stopper *stopper,
                         bool stop_now, struct fl_result *res)
{
    struct borrowed b = { p, -1 };
    /* A launch that failed, reaped as the stopper settled it (a group
     * stop that found no group): its pid may be another child's by now,
     * and its error is the reap's to give, with *res filled. */
    if (p->state_ == FL__PROC_REAPED) {
        *res = (struct fl_result){ .exit_code = -1 };
        return fl__result_reap(p, res);
    }
    int r = fl__proc_pollfd(p, &b.fd);
    if (r == ENOSYS)
        r = 0, b.fd = -1;
    if (r == ECHILD) {  /* reaped elsewhere, with no pidfd: a launch's error wins */
        p->state_ = FL__PROC_REAPED;  /* and its pid, maybe another's now, is not waited for */
        r = fl__launch_error_or(p, r);
    }
    if (r)
        return r;
    pthread_cleanup_push(close_borrowed, &b);
    r = stop_now ? ETIMEDOUT : fl__await_end(p, b.fd, timeout_ms);
    if (r == ETIMEDOUT && stopper) {
        fl__stop_begin(stopper);
        do {
            r = fl__await_end(p, b.fd, fl__stop_clip_ms(stopper, -1));
            fl__stop_tick(stopper);
        } while (r == ETIMEDOUT);
        if (!r)
            fl__stop_finish(stopper);
    }
    pthread_cleanup_pop(1);
    if (r)
        return r;
    *res = (struct fl_result){ .exit_code = -1 };
    r = fl__result_reap(p, res);
    if (!r && stopper) {
        fl__stop_record(stopper, res);
        res->timed_out = !stop_now && fl__stop_started(stopper);
    }
    return r;
}

static int check_handle(const struct fl_proc *p)
{
    if (p->pid <= 0 || p->state_ == FL__PROC_REAPED)
        return ESRCH;
    return 0;
}

int fl_wait_result(struct fl_proc *p, int timeout_ms, const struct fl_stop_policy *stop,
                   struct fl_result *result)
{
    if (!p || !result || timeout_ms < -1)
        return EINVAL;
    int r = check_handle(p);
    if (r)
        return r;
    struct fl__stopper stopper;
    if (stop && (r = fl__stop_init(&stopper, p, 1, stop, NULL)))
        return r;
    int saved_errno = errno;
    r = wait_and_stop(p, timeout_ms, stop ? &stopper : NULL, false, result);
    errno = saved_errno;
    return r;
}

int fl_stop(struct fl_proc *p, const struct fl_stop_policy *stop, struct fl_result *result)
{
    if (!p || !result)
        return EINVAL;
    int r = check_handle(p);
    if (r)
        return r;
    struct fl__stopper stopper;
    if ((r = fl__stop_init(&stopper, p, 1, stop, NULL)))
        return r;
    int saved_errno = errno;
    r = wait_and_stop(p, -1, &stopper, true, result);
    errno = saved_errno;
    return r;
}
