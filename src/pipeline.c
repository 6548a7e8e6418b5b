/* pipeline.c: `a | b | c`. The stages are connected to each other by pipes
 * that the parent makes and hands over at once, so no data passes through
 * it; they share one process group, led by stage 0, so that one stop
 * reaches every stage and whatever the stages started.
 *
 * The group's id is stage 0's pid, and nothing here reaps stage 0 while
 * another stage could still join the group or a signal could still be
 * sent to it: while the leader is an unreaped zombie its pid stays
 * reserved, so kill(-pgid) reaches this group and never one a stranger
 * made with a reused pid. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* A handle that fl__proc_pollfd() could give no pidfd (pidfd_open()
 * missing or out of fds) is looked at this often. */
#define BLIND_LOOK_MS 10

#define GROUP_FLAGS (FL_SETSID | FL_NEW_PGROUP | FL_JOIN_PGROUP)

static int invalid_stage(struct fl_error *e, size_t k, const char *detail)
{
    fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", detail);
    e->stage = (int)k + 1;
    return EINVAL;
}

/* What the pipes take from stage k of n: its stdin unless it is the first,
 * its stdout unless it is the last. */
static bool piped_in(size_t k) { return k > 0; }
static bool piped_out(size_t k, size_t n) { return k + 1 < n; }

static int check_stage(const struct fl_cmd *c, size_t k, size_t n, struct fl_error *e)
{
    char what[FL_ERROR_DETAIL_MAX];
    /* Checked as the pipeline will spawn it: the pipes set its stdin and
     * stdout, so no check takes them for the caller's own fds (a
     * terminal fd on one of them is then the pipe, as it will be). */
    struct fl_cmd as_spawned = *c;
    if (piped_in(k) && c->stdio[0].kind == FL_INHERIT)
        as_spawned.stdio[0].kind = FL_NULL;
    if (piped_out(k, n) && c->stdio[1].kind == FL_INHERIT)
        as_spawned.stdio[1].kind = FL_NULL;
    int r = fl__cmd_check(&as_spawned, e);
    if (r) {
        e->stage = (int)k + 1;
        return r;
    }
    if (c->flags & GROUP_FLAGS)
        return invalid_stage(e, k, "the pipeline makes the process group: no FL_SETSID, "
                                   "FL_NEW_PGROUP or FL_JOIN_PGROUP in a stage");
    /* A session of its own takes the stage out of the pipeline's group,
     * and a group in another session is one no other stage may join
     * (setpgid() is EPERM): only a pipeline of one stage can have it. */
    if (n > 1 && fl__own_session(c))
        return invalid_stage(e, k, "FL_PTY or FL_SETCTTY starts a session of its own, "
                                   "outside the pipeline's process group: only in a "
                                   "pipeline of one stage");
    /* A later stage joins the group that stage 0 leads, by its number,
     * which a PID namespace of the stage's own does not show (setpgid()
     * is EPERM there). Stage 0 makes the group: it may have one. */
    if (k > 0 && c->contain && (c->contain->unshare & FL_NS_PID))
        return invalid_stage(e, k, "FL_NS_PID: a stage in a PID namespace of its own cannot "
                                   "join the first stage's process group: only the first "
                                   "stage may have one");
    if (piped_in(k) && c->stdio[0].kind != FL_INHERIT)
        return invalid_stage(e, k, "stdin is the pipe from the stage before: "
                                   ".stdio[0] must be FL_INHERIT");
    if (piped_out(k, n) && c->stdio[1].kind != FL_INHERIT)
        return invalid_stage(e, k, "stdout is the pipe to the next stage: "
                                   ".stdio[1] must be FL_INHERIT");
    for (size_t i = 0; i < c->nfds; i++) {
        int fd = c->fds[i].child_fd;
        if ((fd == 0 && piped_in(k)) || (fd == 1 && piped_out(k, n))) {
            snprintf(what, sizeof what, "fd map %zu sets child fd %d, which is the pipe %s",
                     i, fd, fd ? "to the next stage" : "from the stage before");
            return invalid_stage(e, k, what);
        }
    }
    return 0;
}

/* ---- waiting for every stage ------------------------------------------- */

/* The pidfds the wait polls, one a stage: the handle's own, one borrowed
 * for an FL_NO_PIDFD handle (closed at the end), or -1 when there is none
 * to have: such a stage is looked at with waitid(WNOWAIT). */
struct watch {
    struct fl_proc *procs;
    size_t n;
    int *fd;
    bool *ended;
    struct pollfd *pfd;
    bool lost;              /* a stage's status was taken elsewhere */
};

static void watch_close(void *arg)
{
    struct watch *w = arg;
    for (size_t k = 0; w->fd && k < w->n; k++)
        if (w->fd[k] >= 0 && w->fd[k] != w->procs[k].pidfd)
            close(w->fd[k]);
    free(w->fd);
    free(w->ended);
    free(w->pfd);
}

static int watch_open(struct watch *w, struct fl_proc *procs, size_t n)
{
    *w = (struct watch){ .procs = procs, .n = n };
    w->fd = malloc(n * sizeof *w->fd);
    w->ended = calloc(n, sizeof *w->ended);
    w->pfd = malloc(n * sizeof *w->pfd);
    if (!w->fd || !w->ended || !w->pfd) {
        free(w->fd);
        free(w->ended);
        free(w->pfd);
        return ENOMEM;
    }
    for (size_t k = 0; k < n; k++) {
        int r = fl__proc_pollfd(&procs[k], &w->fd[k]);
        if (r == ENOSYS)
            w->fd[k] = -1;
        else if (r == ECHILD) {
            w->fd[k] = -1;
            w->ended[k] = w->lost = true;
            procs[k].state_ = FL__PROC_REAPED;
        }
    }
    return 0;
}

static int ms_until(long long deadline_ns)
{
    if (deadline_ns < 0)
        return -1;
    long long left = (deadline_ns - fl__now_ns() + 999999) / 1000000;
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* One sleep in poll() on every stage still running, up to wait_ms; marks
 * the stages that have ended. 0, or an errno (EINTR included). */
static int watch_poll(struct watch *w, int wait_ms, size_t *pending)
{
    size_t npoll = 0;
    bool blind = false;
    for (size_t k = 0; k < w->n; k++) {
        if (w->ended[k])
            continue;
        if (w->fd[k] < 0)
            blind = true;
        else
            w->pfd[npoll++] = (struct pollfd){ .fd = w->fd[k], .events = POLLIN };
    }
    if (!npoll && !blind)
        return *pending = 0;
    if (blind && (wait_ms < 0 || wait_ms > BLIND_LOOK_MS))
        wait_ms = BLIND_LOOK_MS;
    if (fl__poll(w->pfd, npoll, wait_ms) < 0)
        return errno;
    size_t i = 0;
    *pending = 0;
    for (size_t k = 0; k < w->n; k++) {
        if (w->ended[k])
            continue;
        if (w->fd[k] >= 0) {
            short ev = w->pfd[i++].revents;
            if (ev & POLLNVAL)
                return EBADF;
            w->ended[k] = ev != 0;
        } else {
            /* Any answer but "not yet" ends the look: ECHILD, a status
             * taken elsewhere, as watch_open() takes it; another error
             * is the reap's to give. */
            int r = fl__await_end(&w->procs[k], -1, 0);
            w->ended[k] = r != ETIMEDOUT;
            if (r == ECHILD) {
                w->lost = true;
                w->procs[k].state_ = FL__PROC_REAPED;
            }
        }
        *pending += !w->ended[k];
    }
    return 0;
}

/* Sleeps until every stage has ended, none reaped. At the deadline: the
 * stop, or ETIMEDOUT without one. */
static int watch_all(struct watch *w, int timeout_ms, struct fl__stopper *stop)
{
    long long deadline = timeout_ms < 0 ? -1 : fl__now_ns() + (long long)timeout_ms * 1000000;
    size_t pending = 1;
    while (pending) {
        bool stopping = stop && fl__stop_started(stop);
        int r = watch_poll(w, stopping ? fl__stop_clip_ms(stop, -1) : ms_until(deadline),
                           &pending);
        if (r == EINTR)
            continue;
        if (r)
            return r;
        if (!pending)
            break;
        if (stopping)
            fl__stop_tick(stop);
        else if (deadline >= 0 && fl__now_ns() >= deadline) {
            if (!stop)
                return ETIMEDOUT;
            fl__stop_begin(stop);
        }
    }
    return 0;
}

/* Reaps every stage into results, the leader last. */
static int reap_all(struct watch *w, struct fl__stopper *stop, bool timed_out,
                    struct fl_result *results)
{
    int err = w->lost ? ECHILD : 0;
    for (size_t k = w->n; k-- > 0;) {
        struct fl_result *res = &results[k];
        *res = (struct fl_result){ .exit_code = -1 };
        if (w->procs[k].state_ == FL__PROC_REAPED)
            continue;  /* lost */
        int r = fl__result_reap(&w->procs[k], res);
        if (r && !err)
            err = r;
        if (!r && stop) {
            fl__stop_record(stop, res);
            res->timed_out = timed_out;
        }
    }
    return err;
}

/* The wait of fl_pipeline_wait(): every stage has ended, and the stop has
 * finished with the group, before any stage is reaped. */
static int wait_stages(struct fl_proc *procs, size_t n, int timeout_ms,
                       struct fl__stopper *stop, struct fl_result *results)
{
    struct watch w;
    int r = watch_open(&w, procs, n);
    if (r)
        return r;
    /* poll() is a cancellation point: borrowed pidfds must not leak. */
    pthread_cleanup_push(watch_close, &w);
    r = watch_all(&w, timeout_ms, stop);
    if (!r && stop)
        fl__stop_finish(stop);
    if (!r)
        r = reap_all(&w, stop, stop && fl__stop_started(stop), results);
    pthread_cleanup_pop(1);
    return r;
}

int fl__pipeline_stopper(struct fl__stopper *s, struct fl_pipeline *pl,
                         const struct fl_stop_policy *policy, const char *default_cgroup)
{
    /* The whole group, whatever the scope: a stage's own children are in
     * it too, and a stage that left it still gets its pidfd's signal. */
    struct fl_stop_policy pol = policy ? *policy : (struct fl_stop_policy){ 0 };
    if (pol.scope != FL_STOP_CGROUP)
        pol.scope = FL_STOP_GROUP;
    return fl__stop_init(s, pl->procs, pl->n, &pol, default_cgroup);
}

int fl_pipeline_wait(struct fl_pipeline *pl, int timeout_ms, const struct fl_stop_policy *stop,
                     struct fl_result *results)
{
    if (!pl || !results || !pl->n || !pl->procs || timeout_ms < -1)
        return EINVAL;
    for (size_t k = 0; k < pl->n; k++)
        if (pl->procs[k].pid <= 0 || pl->procs[k].state_ == FL__PROC_REAPED)
            return ESRCH;
    struct fl__stopper stopper;
    int r;
    if (stop && (r = fl__pipeline_stopper(&stopper, pl, stop, NULL)))
        return r;
    int saved_errno = errno;
    r = wait_stages(pl->procs, pl->n, timeout_ms, stop ? &stopper : NULL, results);
    errno = saved_errno;
    return r;
}

/* ---- starting ------------------------------------------------------------ */

/* Stages that must not be left behind (those started before one failed,
 * or those a failed wait left): SIGKILL to each and to the group at once
 * (no grace, so fl__stop_finish() has nothing to wait for), then reaped,
 * the leader last. Killed, they cannot make the reaps block for long, and
 * nothing here can fail for want of memory. */
static size_t kill_stages(struct fl_proc *procs, size_t k, struct fl_error *first);

void fl__pipeline_kill(struct fl_proc *procs, size_t k)
{
    kill_stages(procs, k, NULL);
}

/* fl__pipeline_kill(), and with first, the lowest stage whose launch had
 * failed by the time it was killed: *first gets its record, and its
 * index is returned (k: none had). Killed first, no stage can keep the
 * look at its launch waiting (one blocked in its setup on what a later
 * stage would have done, a FIFO's other end). */
static size_t kill_stages(struct fl_proc *procs, size_t k, struct fl_error *first)
{
    size_t failed = k;
    if (!k)
        return failed;
    struct fl__stopper s;
    if (fl__stop_init(&s, procs, k, &(struct fl_stop_policy){ .signal = SIGKILL,
                                                            .scope = FL_STOP_GROUP }, NULL))
        /* A launch that failed before it made its group, or a leader
         * whose status went elsewhere: each stage alone. */
        fl__stop_init(&s, procs, k, &(struct fl_stop_policy){ .signal = SIGKILL }, NULL);
    fl__stop_begin(&s);
    for (size_t i = k; i-- > 0;) {
        if (first && fl_launch_finish(&procs[i], NULL)) {
            fl_launch_finish(&procs[i], first);   /* the record again */
            failed = i;
        }
        fl_wait(&procs[i], -1, NULL);
        fl_close(&procs[i]);
    }
    return failed;
}

static bool open_may_block(const struct fl_cmd *c);

/* Waits, in turns, for the exec of the stages whose setup may wait in an
 * open() (a FIFO) on what another stage was to do: one that failed before
 * its own open would hold the other for ever. Returns whether one failed.
 * until_ns (0: none) ends the wait with *late set, those stages pending:
 * the deadline of fl_pipeline_run() stops them where they are. */
static bool await_stages_that_may_block(const struct fl_cmd *stages, struct fl_proc *procs,
                                        size_t n, long long until_ns, bool *late)
{
    long nap_ns = 1000000L;
    for (;;) {
        if (until_ns && fl__now_ns() >= until_ns) {
            *late = true;
            return false;
        }
        bool pending = false;
        for (size_t k = 0; k < n; k++) {
            int r = open_may_block(&stages[k]) ? fl__launch_poll(&procs[k]) : 0;
            if (r > 0)
                return true;
            pending |= r < 0;
        }
        if (!pending)
            return false;
        struct timespec ts = { 0, nap_ns };
        nanosleep(&ts, NULL);
        nap_ns = nap_ns < 16000000L ? nap_ns * 2 : nap_ns;
    }
}

/* Waits for every stage's exec, reaping none: a failed launch is reaped
 * as it is finished, and a failed leader, reaped, would no longer keep
 * the group that a later stage may still join, or that what the stages
 * started in it must be killed through. Then, if one failed, kills them
 * all, group first, and reports the first that failed. */
static int finish_stages(const struct fl_cmd *stages, struct fl_proc *procs, size_t n,
                         struct fl_error *e, long long until_ns)
{
    bool any_failed = false, late = false;
    for (size_t k = n; k-- > 0;)
        if (!open_may_block(&stages[k]))
            any_failed |= fl__launch_await(&procs[k]) != 0;
    if (!any_failed)
        any_failed = await_stages_that_may_block(stages, procs, n, until_ns, &late);
    if (!any_failed) {
        for (size_t k = n; k-- > 0;)
            if (!late || !open_may_block(&stages[k]))
                fl_launch_finish(&procs[k], NULL);
        return 0;
    }
    size_t failed = kill_stages(procs, n, e);
    e->stage = (int)failed + 1;
    return e->err;
}

/* May the stage's setup block in an open() (FL_FILE) on something other
 * than a regular file or a directory, or a missing one, which open() takes
 * or refuses at once: a FIFO, a device? A path the parent cannot see as
 * the child will (relative to .cwd, under .chroot) counts as one. */
static bool open_may_block(const struct fl_cmd *c)
{
    for (int i = 0; i < 3; i++) {
        const char *path = c->stdio[i].path;
        if (c->stdio[i].kind != FL_FILE)
            continue;
        if ((path[0] != '/' && c->cwd) || (c->contain && c->contain->chroot))
            return true;
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
            return true;
    }
    return false;
}

static int launch_on = 1;

void fl__pipeline_launch(bool on)
{
    __atomic_store_n(&launch_on, on, __ATOMIC_RELAXED);
}

static int start_stages(const struct fl_cmd *stages, size_t n, struct fl_proc *procs,
                        struct fl_error *e, long long until_ns)
{
    int from_before = -1;   /* the read end of the pipe into stage k */
    for (size_t k = 0; k < n; k++) {
        int to_next[2] = { -1, -1 }, r;
        if (piped_out(k, n) && pipe2(to_next, O_CLOEXEC) < 0) {
            r = fl__fail(e, errno, FL_STEP_PREPARE, -1, "", "the pipe to the next stage");
        } else {
            struct fl_cmd c = stages[k];
            if (piped_in(k))
                c.stdio[0] = (struct fl_stdio){ .kind = FL_FD, .fd = from_before };
            if (piped_out(k, n))
                c.stdio[1] = (struct fl_stdio){ .kind = FL_FD, .fd = to_next[1] };
            /* Stage 0 has started and is not reaped before every stage
             * has exec'd or failed (see finish_stages()): even as a
             * zombie it keeps the group, which a later stage can then
             * join. Every stage is launched (FL_NO_WAIT_EXEC), so that
             * the stages do their setup and exec side by side (unless
             * the bench has switched it off: fl__pipeline_launch()). */
            c.flags |= k ? FL_JOIN_PGROUP : FL_NEW_PGROUP;
            if (__atomic_load_n(&launch_on, __ATOMIC_RELAXED))
                c.flags |= FL_NO_WAIT_EXEC;
            c.pgid = k ? procs[0].pid : 0;
            /* A launched stage 0's group is made by the spawn at once
             * (setpgid() from the parent), so that the next can join it. */
            r = fl__spawn_waited(&c, &procs[k], e);
        }
        /* Only stage k reads from_before and writes to_next[1]: once it
         * holds its copies, the parent's go, so that EOF and EPIPE come
         * when the stages end. */
        if (from_before >= 0)
            close(from_before);
        if (to_next[1] >= 0)
            close(to_next[1]);
        from_before = to_next[0];
        if (r) {
            if (from_before >= 0)
                close(from_before);
            /* A stage before k, launched, may have failed first: that
             * one is reported, as it would be had each stage waited for
             * its exec. Its exec is waited for here, unless its setup
             * may wait for ever on what a later stage was to do (a FIFO's
             * other end): that one is killed first, and counts as failed
             * only if it had by then. */
            for (size_t i = 0; i < k; i++)
                if (!open_may_block(&stages[i]) && fl__launch_await(&procs[i]))
                    break;   /* reaped by kill_stages(), the leader last */
            /* The lowest that failed, that one or one before it that may
             * block and had failed by the kill. */
            struct fl_error killed;
            size_t failed = kill_stages(procs, k + (procs[k].pid > 0), &killed);
            if (failed < k) {
                *e = killed;
                r = e->err;
            }
            e->stage = (int)(failed < k ? failed : k) + 1;
            return r;
        }
    }
    return finish_stages(stages, procs, n, e, until_ns);
}

int fl_pipeline_spawn(const struct fl_cmd *stages, size_t n, struct fl_pipeline *pl,
                      struct fl_error *error)
{
    return fl__pipeline_spawn_until(stages, n, pl, error, 0);
}

int fl__pipeline_spawn_until(const struct fl_cmd *stages, size_t n, struct fl_pipeline *pl,
                             struct fl_error *error, long long until_ns)
{
    struct fl_error scratch = { 0 };
    struct fl_error *e = error ? error : &scratch;
    fl__fail(e, 0, FL_STEP_NONE, -1, "", "");
    if (!pl)
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", "no fl_pipeline");
    *pl = (struct fl_pipeline){ 0 };
    if (!stages || !n)
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", "a pipeline needs a stage");
    for (size_t k = 0; k < n; k++) {
        int r = check_stage(&stages[k], k, n, e);
        if (r)
            return r;
    }
    struct fl_proc *procs = calloc(n, sizeof *procs);
    if (!procs)
        return fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, "", "the pipeline's handles");
    /* As fl_spawn(): a cancellation here would leave stages behind. */
    int cancel_state, saved_errno = errno;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    /* A stage with FL_FOREGROUND that started and took the terminal is
     * killed with the others when a later one fails: the terminal then
     * goes back as after a failed spawn. */
    bool foreground = false;
    for (size_t k = 0; k < n; k++)
        foreground |= (stages[k].flags & FL_FOREGROUND) != 0;
    struct fl__foreground before = { 0 };
    if (foreground)
        fl__foreground_note(&before);
    int r = start_stages(stages, n, procs, e, until_ns);
    if (r && foreground)
        fl__foreground_give_back(&before);
    pthread_setcancelstate(cancel_state, NULL);
    errno = saved_errno;
    if (r) {
        free(procs);
        return r;
    }
    *pl = (struct fl_pipeline){ .n = n, .procs = procs, .pgid = procs[0].pid };
    return 0;
}

void fl_pipeline_close(struct fl_pipeline *pl)
{
    if (!pl)
        return;
    for (size_t k = 0; pl->procs && k < pl->n; k++)
        fl_close(&pl->procs[k]);
    free(pl->procs);
    *pl = (struct fl_pipeline){ 0 };
}

int fl_pipefail(const struct fl_result *results, size_t n)
{
    for (size_t k = n; results && k-- > 0;)
        /* Exited with 0 is status 0 with exit_code 0; a stage whose status
         * was taken elsewhere (exit_code -1) did not show that it did. */
        if (results[k].status != 0 || results[k].exit_code != 0)
            return (int)k;
    return -1;
}
