/* pipeline_io.c: the exchange (io.c) for a pipeline: the input goes to
 * the first stage, out[0] takes the last stage's stdout and out[1] each
 * stage's stderr; and fl_pipeline_run(), which makes those pipes, starts
 * the stages, communicates or waits, and closes. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* What does not depend on the running stages: what is wrong, in words
 * (in buf or a constant), or NULL. */
static const char *io_problem(const struct fl_io *io, size_t stderr_pipes, char *buf, size_t size)
{
    const char *why = fl__io_problem(io, buf, size);
    if (why)
        return why;
    /* One caller's buffer cannot take several stages' stderr: the bytes
     * would overwrite each other. */
    if (io->out[1].buf && stderr_pipes > 1)
        return "one caller's buffer for several stages' stderr";
    return NULL;
}

static int check_io(const struct fl_io *io, size_t stderr_pipes)
{
    char buf[FL_ERROR_DETAIL_MAX];
    return io_problem(io, stderr_pipes, buf, sizeof buf) ? EINVAL : 0;
}

int fl_pipeline_communicate(struct fl_pipeline *pl, const struct fl_io *io,
                            struct fl_result *results)
{
    static const struct fl_io none;
    if (!io)
        io = &none;
    if (!pl || !results || !pl->n || !pl->procs)
        return EINVAL;
    size_t n = pl->n, stderr_pipes = 0;
    struct fl_proc *procs = pl->procs;
    for (size_t k = 0; k < n; k++)
        stderr_pipes += procs[k].stdio[2] >= 0;
    int r = check_io(io, stderr_pipes);
    if (r)
        return r;
    /* Stages done with have no pipes to check: ESRCH first, as
     * fl_communicate() says it. */
    for (size_t k = 0; k < n; k++)
        if (procs[k].pid <= 0 || procs[k].state_ == FL__PROC_REAPED)
            return ESRCH;
    /* A one-stage pipeline may have a pty (fl_pipeline_spawn() refuses
     * one for more): its master is read and fed as fl_communicate() does. */
    int pty = procs[0].pty;
    if (pty >= 0 && procs[n - 1].stdio[1] >= 0)
        return EINVAL;   /* both would be out[0] */
    if ((io->input || io->input_len) && procs[0].stdio[0] < 0 && pty < 0)
        return EINVAL;
    struct fl__stopper stop;
    if ((r = fl__pipeline_stopper(&stop, pl, io->stop, NULL)))
        return r;
    struct fl__stream *st = malloc((n + 3) * sizeof *st);
    if (!st)
        return ENOMEM;
    size_t ns = 0;
    if (procs[0].stdio[0] >= 0)
        st[ns++] = fl__stream_in(procs[0].stdio[0], io, &results[0]);
    if (procs[n - 1].stdio[1] >= 0)
        st[ns++] = fl__stream_out(procs[n - 1].stdio[1], 1, &io->out[0], &results[n - 1].out[0]);
    for (size_t k = 0; k < n; k++)
        if (procs[k].stdio[2] >= 0)
            st[ns++] = fl__stream_out(procs[k].stdio[2], 2, &io->out[1], &results[k].out[1]);
    if (pty >= 0)
        st[ns++] = fl__stream_tty(pty, procs[0].stdio[0] < 0, io, &results[0]);
    /* The exchange owns the ends now and closes them. */
    for (size_t k = 0; k < n; k++)
        procs[k].stdio[0] = procs[k].stdio[1] = procs[k].stdio[2] = -1;
    procs[0].pty = -1;
    r = fl__exchange(procs, results, n, st, ns, io, &stop);
    free(st);
    return r;
}

/* A copy of the stages with a pipe for each stream io takes part in.
 * NULL with *r set when a stream cannot be piped (EINVAL, e filled) or
 * there is no memory. */
static struct fl_cmd *piped_stages(const struct fl_cmd *stages, size_t n,
                                   const struct fl_io *io, struct fl_error *e, int *r)
{
    struct fl_cmd *c = malloc(n * sizeof *c);
    if (!c) {
        *r = fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, "", "the pipeline's stages");
        return NULL;
    }
    for (size_t k = 0; k < n; k++)
        c[k] = stages[k];
    size_t stderr_pipes = 0;
    *r = 0;
    /* A stream on a pty (a pipeline of one stage) is its master's, which
     * the exchange feeds and reads, as fl_run() does. */
    bool pty = false;
    for (int k = 0; k < 3; k++)
        pty |= fl__stream_is_pty(&c[0], k);
    if ((io->input || io->input_len) && !fl__stream_is_pty(&c[0], 0) &&
        (*r = fl__pipe_stream(&c[0], 0, e)))
        e->stage = 1;
    if (!*r && io->out[0].capture && !fl__stream_is_pty(&c[n - 1], 1) &&
        (*r = fl__pipe_stream(&c[n - 1], 1, e)))
        e->stage = (int)n;
    if (!*r && pty && n == 1 && c[0].stdio[1].kind == FL_PIPE && !fl__stream_is_pty(&c[0], 1)) {
        *r = fl__fail(e, EINVAL, FL_STEP_PREPARE, 1, NULL, "a pty and a stdout pipe would both be out[0]");
        e->stage = 1;
    }
    for (size_t k = 0; !*r && k < n; k++) {
        if (io->out[1].capture && !fl__stream_is_pty(&c[k], 2))
            *r = fl__pipe_stream(&c[k], 2, e);
        stderr_pipes += c[k].stdio[2].kind == FL_PIPE;
        if (*r)
            e->stage = (int)k + 1;
    }
    char buf[FL_ERROR_DETAIL_MAX];
    const char *why = *r ? NULL : io_problem(io, stderr_pipes, buf, sizeof buf);
    if (why)
        *r = fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", why);
    if (*r) {
        free(c);
        return NULL;
    }
    return c;
}

/* With no exchange, nobody could reach the caller's ends of FL_PIPE
 * streams: closed at once, the first stage reads EOF, and a stage writing
 * to an output pipe gets EPIPE rather than waiting for ever. A pty's
 * master likewise: its closing hangs the terminal up. */
static void close_pipe_ends(struct fl_pipeline *pl)
{
    for (size_t k = 0; k < pl->n; k++) {
        for (int i = 0; i < 3; i++)
            if (pl->procs[k].stdio[i] >= 0) {
                close(pl->procs[k].stdio[i]);
                pl->procs[k].stdio[i] = -1;
            }
        if (pl->procs[k].pty >= 0) {
            close(pl->procs[k].pty);
            pl->procs[k].pty = -1;
        }
    }
}

static int pipeline_run(const struct fl_cmd *stages, size_t n, const struct fl_io *io,
                        struct fl_result *results, struct fl_error *error);

/* Not a cancellation point, as fl_run(): cancelled in the wait, it would
 * leave the stages running and the pipeline's memory behind. */
int fl_pipeline_run(const struct fl_cmd *stages, size_t n, const struct fl_io *io,
                    struct fl_result *results, struct fl_error *error)
{
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    int r = pipeline_run(stages, n, io, results, error);
    pthread_setcancelstate(cancel_state, NULL);
    return r;
}

static int pipeline_run(const struct fl_cmd *stages, size_t n, const struct fl_io *io,
                        struct fl_result *results, struct fl_error *error)
{
    struct fl_error scratch = { 0 };
    struct fl_error *e = error ? error : &scratch;
    fl__fail(e, 0, FL_STEP_NONE, -1, "", "");
    if (!results)
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", "no results");
    if (!stages || !n)
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", "a pipeline needs a stage");
    /* As fl_run(): any failure leaves nothing to free. */
    for (size_t k = 0; k < n; k++)
        results[k] = (struct fl_result){ .exit_code = -1 };
    int r = 0;
    struct fl_cmd *piped = NULL;
    if (io) {
        char buf[FL_ERROR_DETAIL_MAX];
        const char *why = io_problem(io, 0, buf, sizeof buf);
        if (why || fl__stop_check(io->stop, stages[0].cgroup))
            return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", why ? why : "struct fl_io: a bad stop policy");
        if (!(piped = piped_stages(stages, n, io, e, &r)))
            return r;
    }
    /* The deadline counts from the spawn, as fl_run()'s: a stage whose
     * setup waits (an FL_FILE on a FIFO) is left launched at it, and the
     * exchange's stop reaches it there. */
    long long until_ns = io && io->timeout_ms > 0
                             ? fl__now_ns() + (long long)io->timeout_ms * 1000000 : 0;
    struct fl_pipeline pl;
    r = fl__pipeline_spawn_until(piped ? piped : stages, n, &pl, e, until_ns);
    free(piped);
    if (r)
        return r;
    if (io) {
        /* FL_STOP_CGROUP without a .cgroup means the first stage's. */
        struct fl_io with_cgroup = *io;
        struct fl_stop_policy pol = io->stop ? *io->stop : (struct fl_stop_policy){ 0 };
        if (pol.scope == FL_STOP_CGROUP && !pol.cgroup)
            pol.cgroup = stages[0].cgroup;
        with_cgroup.stop = &pol;
        if (until_ns) {
            long long left_ms = (until_ns - fl__now_ns() + 999999) / 1000000;
            with_cgroup.timeout_ms = left_ms < 1 ? 1 : (int)left_ms;
        }
        r = fl_pipeline_communicate(&pl, &with_cgroup, results);
    } else {
        close_pipe_ends(&pl);
        r = fl_pipeline_wait(&pl, -1, NULL, results);
    }
    /* A stage left launched that failed before its exec never ran: its
     * error is the spawn's, as in fl_run(). */
    bool never_ran = false;
    for (size_t k = 0; r && until_ns && !never_ran && k < pl.n; k++)
        if (fl_launch_finish(&pl.procs[k], NULL) != 0) {
            r = fl_launch_finish(&pl.procs[k], e);
            e->stage = (int)k + 1;
            for (size_t i = 0; i < n; i++) {
                fl_result_free(&results[i]);
                results[i] = (struct fl_result){ .exit_code = -1 };
            }
            never_ran = true;
        }
    /* The stages ran; what failed was the exchange with them. */
    if (r && !never_ran)
        fl__fail(e, r, FL_STEP_NONE, -1, "", io ? "after the spawn: the exchange" : "after the spawn: the wait");
    /* No stage is left behind, whatever the trouble. */
    for (size_t k = 0; k < pl.n; k++)
        if (pl.procs[k].state_ != FL__PROC_REAPED) {
            fl__pipeline_kill(pl.procs, pl.n);
            break;
        }
    fl_pipeline_close(&pl);
    return r;
}
