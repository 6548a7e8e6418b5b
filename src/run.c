/* run.c: the public faces of the exchange (io.c) for one process:
 * fl_communicate() on a handle's pipes, and fl_run(), which makes the
 * pipes, spawns, communicates and closes. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

static int communicate(struct fl_proc *proc, const struct fl_io *io, struct fl_result *result,
                       const char *default_cgroup)
{
    static const struct fl_io none;
    if (!io)
        io = &none;
    if (!proc || !result)
        return EINVAL;
    int r = fl__io_check(io);
    if (r)
        return r;
    /* A handle done with has no pipes to check: ESRCH first. */
    if (proc->pid <= 0 || proc->state_ == FL__PROC_REAPED)
        return ESRCH;
    /* The master's bytes go to out[0], which a stdout pipe would take too. */
    if (proc->pty >= 0 && proc->stdio[1] >= 0)
        return EINVAL;
    if ((io->input || io->input_len) && proc->stdio[0] < 0 && proc->pty < 0)
        return EINVAL;
    struct fl__stopper stop;
    if ((r = fl__stop_init(&stop, proc, 1, io->stop, default_cgroup)))
        return r;
    struct fl__stream st[4];
    size_t ns = 0;
    if (proc->stdio[0] >= 0)
        st[ns++] = fl__stream_in(proc->stdio[0], io, result);
    for (int k = 1; k < 3; k++)
        if (proc->stdio[k] >= 0)
            st[ns++] = fl__stream_out(proc->stdio[k], k, &io->out[k - 1], &result->out[k - 1]);
    /* The master is fed when no stdin pipe is: it is then the stdin of a
     * child whose fd 0 is the pty (or only the terminal's input). */
    if (proc->pty >= 0)
        st[ns++] = fl__stream_tty(proc->pty, proc->stdio[0] < 0, io, result);
    for (int k = 0; k < 3; k++)
        proc->stdio[k] = -1;
    proc->pty = -1;
    return fl__exchange(proc, result, 1, st, ns, io, &stop);
}

int fl_communicate(struct fl_proc *proc, const struct fl_io *io, struct fl_result *result)
{
    return communicate(proc, io, result, NULL);
}

/* The policy, checked before anything starts: a group needs a child that
 * will lead one. */
static int check_policy(const struct fl_stop_policy *policy, const struct fl_cmd *cmd,
                        struct fl_error *e)
{
    if (policy && policy->scope == FL_STOP_GROUP && !fl__leads_group(cmd))
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, NULL,
                        "FL_STOP_GROUP needs a child that leads its own group");
    if (fl__stop_check(policy, cmd->cgroup))
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, NULL, "a bad stop policy");
    return 0;
}

static bool fd_mapped(const struct fl_cmd *cmd, int fd)
{
    for (size_t i = 0; cmd->fds && i < cmd->nfds; i++)
        if (cmd->fds[i].child_fd == fd)
            return true;
    return false;
}

/* Stream k is on the pty (a map overrides .stdio, and then makes none). */
bool fl__stream_is_pty(const struct fl_cmd *cmd, int k)
{
    return cmd->stdio[k].kind == FL_PTY && !fd_mapped(cmd, k);
}

int fl__pipe_stream(struct fl_cmd *c, int k, struct fl_error *e)
{
    /* The pipe would take the place of what the caller asked for. */
    if ((c->stdio[k].kind != FL_INHERIT && c->stdio[k].kind != FL_PIPE) || fd_mapped(c, k))
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, k, NULL,
                        "a stream to capture or feed is not FL_INHERIT or FL_PIPE");
    c->stdio[k] = (struct fl_stdio){ .kind = FL_PIPE };
    return 0;
}

int fl_run(const struct fl_cmd *cmd, const struct fl_io *io, struct fl_result *result,
           struct fl_error *error)
{
    struct fl_error scratch;
    if (!error)
        error = &scratch;
    static const struct fl_io none;
    if (!io)
        io = &none;
    if (result)
        *result = (struct fl_result){ .exit_code = -1 };
    if (!cmd || !result)
        return fl__fail(error, EINVAL, FL_STEP_PREPARE, -1, NULL, "no command or no result");
    char buf[FL_ERROR_DETAIL_MAX];
    const char *why = fl__io_problem(io, buf, sizeof buf);
    if (why)
        return fl__fail(error, EINVAL, FL_STEP_PREPARE, -1, NULL, why);
    if (check_policy(io->stop, cmd, error))
        return EINVAL;
    struct fl_cmd c = *cmd;
    bool want[3] = { io->input_len > 0 || io->input, io->out[0].capture, io->out[1].capture };
    bool pty = false;
    for (int k = 0; k < 3; k++)
        pty |= fl__stream_is_pty(cmd, k);
    for (int k = 0; k < 3; k++)
        if (want[k] && !fl__stream_is_pty(cmd, k) && fl__pipe_stream(&c, k, error))  /* the master carries a pty's */
            return EINVAL;
    if (pty && c.stdio[1].kind == FL_PIPE && !fd_mapped(cmd, 1))
        return fl__fail(error, EINVAL, FL_STEP_PREPARE, 1, NULL,
                        "a pty and a stdout pipe would both be out[0]");
    struct fl_proc p;
    /* With a deadline the child is launched (the clone backend), so that
     * the deadline bounds a setup that waits (an FL_FILE on a FIFO with no
     * writer) as it bounds the program: the exchange's stop reaches it
     * there. Without one, a launch is finished here. Either way a failure
     * of the launch is the spawn's. */
    bool bounded = io->timeout_ms > 0;
    if (bounded)
        c.flags |= FL_NO_WAIT_EXEC;
    int r = fl__spawn_waited(&c, &p, error);
    if (!r && !bounded && (r = fl_launch_finish(&p, error)) != 0)
        fl_close(&p);
    if (r)
        return r;
    r = communicate(&p, io, result, cmd->cgroup);
    /* A child that failed before its exec never ran: its error is the
     * spawn's, whatever else the exchange met meanwhile. */
    int failed = r ? fl_launch_finish(&p, error) : 0;
    if (failed) {
        fl_result_free(result);
        *result = (struct fl_result){ .exit_code = -1 };
        fl_close(&p);
        return failed;
    }
    /* The child ran; what failed was the exchange with it. */
    if (r)
        fl__fail(error, r, FL_STEP_NONE, -1, NULL, "after the spawn: the exchange (fl_communicate())");
    if (p.state_ != FL__PROC_REAPED) {  /* refused before the exchange */
        fl_kill(&p, SIGKILL);
        fl_wait(&p, -1, NULL);
    }
    fl_close(&p);
    return r;
}
