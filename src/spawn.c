/* spawn.c: fl_spawn() picks the backend and moves the prepared plan through
 * it; the helpers here are shared by every backend. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

void fl__block_signals(sigset_t *old)
{
    sigset_t all;
    /* Raw, because glibc's sigprocmask() leaves its own internal signals
     * (cancellation, setxid) unblocked, and the child must see none. */
    memset(&all, 0xff, sizeof all);
    fl__sys4(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, 8);
}

void fl__restore_signals(const sigset_t *old)
{
    fl__sys4(SYS_rt_sigprocmask, SIG_SETMASK, old, 0, 8);
}

void fl__child_mask(struct fl__plan *p, const sigset_t *parent_mask)
{
    if (p->cmd->sigmask)
        p->child_mask = *p->cmd->sigmask;
    else if (p->flags & FL_KEEP_SIGNALS)
        p->child_mask = *parent_mask;
    else
        sigemptyset(&p->child_mask);
}

uint64_t fl__sigset_bits(const sigset_t *set)
{
    uint64_t bits = 0;
    for (int sig = 1; sig <= 64; sig++)
        if (sigismember(set, sig) == 1)
            bits |= (uint64_t)1 << (sig - 1);
    return bits;
}

long long fl__now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Reaps a child that failed before exec. ECHILD (SIGCHLD ignored, or a
 * foreign reaper) means it is gone already. */
void fl__reap(pid_t pid, int pidfd)
{
    siginfo_t si;
    while (waitid(P_PID, (id_t)pid, &si, WEXITED) < 0 && errno == EINTR)
        ;
    if (pidfd >= 0)
        close(pidfd);
}

enum fl_backend fl__backend_of(const struct fl_cmd *cmd)
{
    if (cmd->backend != FL_BACKEND_AUTO)
        return cmd->backend;
    return fl__clone_vm_works() ? FL_BACKEND_CLONE : FL_BACKEND_FORK;
}

/* The kernel copies an oom_score_adj that a process writes to every other
 * process on its address space, unless the writer is a vfork child: a
 * launch's child (CLONE_VM without CLONE_VFORK) would give the caller its
 * score. Such a command waits for the exec, as the other backends do. */
static bool launchable(const struct fl_cmd *cmd, enum fl_backend b)
{
    return (cmd->flags & FL_NO_WAIT_EXEC) && b == FL_BACKEND_CLONE &&
           !(cmd->sched && (cmd->sched->set & FL_SCHED_OOM_SCORE_ADJ));
}

/* caller_waits: fl_run() or a pipeline's stage, whose caller waits for
 * the exec before it goes on (see yield_first in internal.h). */
static int spawn(const struct fl_cmd *cmd, struct fl_proc *proc, struct fl_error *error,
                 bool caller_waits)
{
    struct fl_error scratch;  /* every field is set below before any read */
    struct fl_error *e = error ? error : &scratch;
    e->err = 0;
    e->step = FL_STEP_NONE;
    e->index = -1;
    e->stage = 0;
    e->path[0] = e->detail[0] = '\0';
    if (!proc)
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", "no fl_proc");
    *proc = (struct fl_proc){ .pid = 0, .pidfd = -1, .stdio = { -1, -1, -1 },
                              .start_ns_ = fl__now_ns(), .pty = -1 };

    /* Not a cancellation point: a thread cancelled in close() or waitid()
     * here would leave pipes and a child behind. A pending request is
     * acted on at the caller's next cancellation point instead. Also in a
     * process that never had a second thread: pthread_cancel(pthread_self())
     * leaves a request pending there too. */
    int cancel_state, saved_errno = errno;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    fl__launch_sweep();   /* launches whose fl_close() did not wait */
    /* A launch (FL_NO_WAIT_EXEC, clone backend) keeps its plan on the
     * heap with the handle, until the child has exec'd (launch.c). */
    struct fl__plan stack_plan, *p = &stack_plan;
    struct fl__launch *launch = NULL;
    enum fl_backend b = cmd ? fl__backend_of(cmd) : FL_BACKEND_AUTO;
    bool launching = cmd && launchable(cmd, b);
    int r = launching ? fl__launch_new(cmd, &launch, &p, e) : fl__plan_init(p, cmd, e);
    if (!r && launching)
        p->yield_first = !caller_waits;
    if (r && launching) {
        /* fl__launch_new() freed what it made, and no plan was filled. */
        pthread_setcancelstate(cancel_state, NULL);
        errno = saved_errno;
        return r;
    }
    if (!r) {
        if (b == FL_BACKEND_FORK && (cmd->flags & FL_NO_FORK))
            r = fl__fail(e, ENOTSUP, FL_STEP_PREPARE, -1, fl__program(cmd),
                         "FL_NO_FORK forbids the fork backend");
        else if (b == FL_BACKEND_POSIX_SPAWN)
            r = fl__spawn_posix(p, proc, e);
        else if (b == FL_BACKEND_FORK)
            r = fl__spawn_fork(p, proc, e);
        else
            r = fl__spawn_clone(p, proc, e);
    }
    if (r)  /* FL_FOREGROUND: the terminal back from a group that is gone */
        fl__tty_give_back(p);
    if (!r) {
        for (int i = 0; i < 3; i++) {
            proc->stdio[i] = p->pipe_parent[i];
            p->pipe_parent[i] = -1;
        }
        proc->pty = p->pty_master;
        p->pty_master = -1;
        if (cmd && fl__leads_group(cmd))
            proc->state_ = FL__PROC_LEADS_GROUP;
        /* A launch's child may still be at its placement: its record is
         * read when the launch is finished. */
        proc->not_applied = launch ? 0 : p->cerr.not_applied;
        proc->landlock_unenforced = p->box ? p->box->landlock_unenforced : 0;
    }
    if (!r && launch) {
        /* The child has its own fd table (no CLONE_FILES for a launch):
         * its ends, and the Landlock ruleset, may close here. The rest
         * waits for the exec. */
        fl__plan_close_child_ends(p);
        fl__box_close_in_parent(p->box);
        proc->launch_ = launch;
    } else if (launch) {
        fl__launch_free(launch);
    } else {
        fl__plan_free(p);
    }
    /* Once the child's ends are closed here: a job that took the last fd
     * of the table with them still gets the fd that telling its process
     * from a later one with its pid takes for a moment. */
    if (!r && proc->pidfd < 0 && !proc->ident_)
        fl__proc_identify(proc);
    pthread_setcancelstate(cancel_state, NULL);
    errno = saved_errno;
    return r;
}

int fl_spawn(const struct fl_cmd *cmd, struct fl_proc *proc, struct fl_error *error)
{
    return spawn(cmd, proc, error, false);
}

int fl__spawn_waited(const struct fl_cmd *cmd, struct fl_proc *proc, struct fl_error *error)
{
    return spawn(cmd, proc, error, true);
}
