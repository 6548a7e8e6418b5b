/* launch.c: FL_NO_WAIT_EXEC, the launch that does not wait for the exec.
 *
 * Under CLONE_VFORK the calling thread sleeps until the child has exec'd,
 * which is what keeps the plan, the command and the child's stack alive
 * while the child reads them. Without CLONE_VFORK the caller goes on at
 * once, so a launch owns all of that instead, in one record kept with the
 * handle (fl_proc.launch_):
 *
 *   - a copy of every string and array of the command that the child
 *     reads (argv, the program, the environment, cwd, file paths,
 *     rlimits, groups, the cgroup), so the caller may free or change its
 *     command, or return from the frame that holds it;
 *   - the plan, built in place on that copy (it points into itself);
 *   - a child stack from a small pool, never the caller's frame;
 *   - the exec word, and the error record the child writes.
 *
 * The exec word is the child's clear_child_tid (CLONE_CHILD_CLEARTID).
 * The kernel's mm_release(), which runs when a task lets go of its
 * address space, at execve() (exec_mm_release(), after the new program
 * is loaded and before the switch to the new mm, so the store lands in
 * ours) and at exit (exit_mm_release(), before the task is a zombie),
 * writes 0 there and does FUTEX_WAKE, provided the address space has
 * another user (we are that user). CLONE_CHILD_CLEARTID is allowed for
 * a child that is not a thread: fork() in glibc uses it. Once the word is
 * 0 the child reads nothing of ours again (execve() has copied argv and
 * envp, and the child's stack is not used after exit), so the record may
 * go. The kernel wakes the word as a shared futex (no
 * FUTEX_PRIVATE_FLAG), so the waiter must not ask for a private one
 * either, or the keys differ and the wake is missed (glibc's
 * pthread_join() waits on its tid word the same way).
 *
 * Two kernels' ways are guarded against: a child that dumps core may
 * leave the word set (older kernels skip the store then), so the wait
 * looks every few milliseconds whether the child has ended without it;
 * and a parent that has exited is nobody to wake.
 *
 * No CLONE_SETTLS: the child runs on the launching thread's TLS pointer
 * and must never use it (child.c has no stack protector, no errno, no
 * libc state), since that thread may end before the child execs.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char **environ;

/* Bumped in every fork() child (pthread_atfork): with the pid, it tells
 * the process that launched from a fork() child's copy of it, also one
 * that has the same pid in a pid namespace of its own (both pid 1). */
static unsigned long fork_generation;

/* One allocation: the record, then the copy of the command's strings and
 * arrays. A launch's child reads it from another CPU, so each malloc() and
 * free() of it would take cache lines back from there: one of each keeps
 * that to a minimum, and nothing of it is zeroed that is written anyway. */
struct fl__launch {
    struct fl__plan plan;       /* built in place on .cmd */
    struct fl_cmd cmd;          /* the copy the plan reads */
    char *stack;                /* the child's, from the pool */
    uint32_t exec_word;         /* 1 until the kernel clears it */
    bool settled;               /* the word was seen clear */
    pid_t owner;                /* the launching process and its fork generation: */
    unsigned long generation;   /* a fork() copies the handle (see settle()) */
    struct fl_error error;      /* a failed child's, once settled */
    /* An orphan's: the next in the list, its child's pid and pidfs
     * number (see fl__launch_close()). */
    struct fl__launch *next;
    pid_t pid;
    unsigned long long ident;
    max_align_t copy[];         /* .cmd's strings and arrays */
};

/* ------------------------------------------------------------------------ */
/* The stack pool                                                           */
/* ------------------------------------------------------------------------ */

/* A few free stacks, each slot taken and given with one atomic exchange:
 * no lock (fork() in another thread cannot leave one held), no ABA (a
 * slot holds one pointer or none). A launch finds a stack here or maps
 * one; a settled launch gives it back, or unmaps it when every slot is
 * full. */
#define POOL_SLOTS 16
static char *pool[POOL_SLOTS];
static int pool_on = 1;

void fl__launch_pool(bool on)
{
    __atomic_store_n(&pool_on, on, __ATOMIC_RELAXED);
}

static char *stack_take(void)
{
    for (int i = 0; __atomic_load_n(&pool_on, __ATOMIC_RELAXED) && i < POOL_SLOTS; i++)
        if (__atomic_load_n(&pool[i], __ATOMIC_RELAXED)) {
            char *s = __atomic_exchange_n(&pool[i], NULL, __ATOMIC_ACQUIRE);
            if (s)
                return s;
        }
    return fl__map_stack();
}

/* Unloaded with a plugin that linked the static archive (dlclose()), the
 * pooled stacks would stay mapped once per load. Stacks that children
 * still run on are not in the pool. */
__attribute__((destructor)) static void drain_pool(void)
{
    for (int i = 0; i < POOL_SLOTS; i++) {
        char *s = __atomic_exchange_n(&pool[i], NULL, __ATOMIC_ACQUIRE);
        if (s)
            fl__unmap_stack(s);
    }
}

static void stack_give(char *s)
{
    for (int i = 0; __atomic_load_n(&pool_on, __ATOMIC_RELAXED) && i < POOL_SLOTS; i++) {
        char *none = NULL;
        if (__atomic_compare_exchange_n(&pool[i], &none, s, false, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return;
    }
    fl__unmap_stack(s);
}

/* ------------------------------------------------------------------------ */
/* The copy of the command                                                  */
/* ------------------------------------------------------------------------ */

/* Two passes over the same code: the first (base NULL) counts the bytes,
 * the second copies into one block of that size. */
struct arena {
    char *base;
    size_t used;
    bool overflow;  /* a size that does not fit in a size_t */
};

static void *take(struct arena *a, size_t n, size_t align)
{
    size_t at = (a->used + align - 1) & ~(align - 1);
    if (at < a->used || at + n < at) {
        a->overflow = true;
        n = 0;
    }
    a->used = at;
    void *p = a->base ? a->base + a->used : NULL;
    a->used += n;
    return p;
}

static const void *copy_mem(struct arena *a, const void *src, size_t n, size_t align)
{
    if (!src)
        return NULL;
    void *d = take(a, n, align);
    if (d && n)
        memcpy(d, src, n);
    return d ? d : src;  /* the first pass keeps the pointer non-NULL */
}

/* n elements of size each, or an overflow. */
static const void *copy_array(struct arena *a, const void *src, size_t n, size_t size,
                              size_t align)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        a->overflow = true;
        return src;
    }
    return copy_mem(a, src, bytes, align);
}

static const char *copy_str(struct arena *a, const char *s)
{
    return s ? copy_mem(a, s, strlen(s) + 1, 1) : NULL;
}

static char **copy_strv(struct arena *a, char *const *v)
{
    if (!v)
        return NULL;
    size_t n = 0;
    while (v[n])
        n++;
    char **d = take(a, (n + 1) * sizeof *d, alignof(char *));
    for (size_t i = 0; i < n; i++) {
        const char *s = copy_str(a, v[i]);
        if (d)
            d[i] = (char *)s;
    }
    if (d)
        d[n] = NULL;
    return d ? d : (char **)v;
}

/* The caller's environ, read once: its pointers and their lengths, which
 * both passes use. Another thread's setenv() may change it meanwhile
 * (the header forbids it, as getenv(3) does); a string that changed is
 * then cut or padded to the length first seen, never copied past it. */
struct env_snap {
    char **v;
    size_t *len;
    size_t n;
    size_t bytes;   /* the strings' lengths, each with its '\0', added up */
    bool overflow;  /* bytes does not fit in a size_t */
};

static bool snap_environ(struct env_snap *s)
{
    char **ev = __atomic_load_n(&environ, __ATOMIC_RELAXED);
    size_t n = 0;
    while (ev && ev[n])
        n++;
    s->n = 0;
    s->v = malloc((n + 1) * sizeof *s->v + (n + 1) * sizeof *s->len);
    if (!s->v)
        return false;
    s->len = (size_t *)(s->v + n + 1);
    s->bytes = 0;
    s->overflow = false;
    for (size_t i = 0; i < n; i++) {
        char *e = __atomic_load_n(&ev[i], __ATOMIC_RELAXED);
        if (!e)
            break;
        s->v[s->n] = e;
        s->len[s->n] = strlen(e);
        /* One string many times over (the caller's own array may repeat
         * a pointer) could wrap a 32-bit size. */
        s->overflow |= __builtin_add_overflow(s->bytes, s->len[s->n++] + 1, &s->bytes);
    }
    s->v[s->n] = NULL;
    return true;
}

static char **copy_snap(struct arena *a, const struct env_snap *s)
{
    char **d = take(a, (s->n + 1) * sizeof *d, alignof(char *));
    if (!a->base) {  /* the count: the strings follow one another, unaligned */
        take(a, s->bytes, 1);
        a->overflow |= s->overflow;
        return s->v;
    }
    for (size_t i = 0; i < s->n; i++) {
        char *c = take(a, s->len[i] + 1, 1);
        if (c) {
            memcpy(c, s->v[i], s->len[i]);
            c[s->len[i]] = '\0';
            d[i] = c;
        }
    }
    if (d)
        d[s->n] = NULL;
    return d ? d : s->v;
}

/* Fills *dst from src with the pointers the plan or the child reads
 * turned into the arena's. The rest (fds, signal sets, tty) is read only
 * while fl_spawn() runs, and is left pointing at the caller's. A field
 * the command says is unused (a path for a stdio that is not FL_FILE,
 * groups without FL_SET_GROUPS) is not read: it may be stale. */
static void copy_cmd(struct arena *a, const struct fl_cmd *src, const struct env_snap *env,
                     struct fl_cmd *dst)
{
    *dst = *src;
    dst->argv = copy_strv(a, src->argv);
    dst->path = copy_str(a, src->path);
    /* NULL means the caller's environ, read now (env): copied, it is the
     * same. */
    if (!(src->flags & FL_ENV_CLEAR))
        dst->env = src->env ? copy_strv(a, src->env) : copy_snap(a, env);
    dst->env_set = (const char *const *)copy_strv(a, (char *const *)src->env_set);
    dst->env_unset = (const char *const *)copy_strv(a, (char *const *)src->env_unset);
    dst->cwd = copy_str(a, src->cwd);
    for (int i = 0; i < 3; i++)
        dst->stdio[i].path =
            src->stdio[i].kind == FL_FILE ? copy_str(a, src->stdio[i].path) : NULL;
    dst->rlimits = src->nrlimits ? copy_array(a, src->rlimits, src->nrlimits,
                                              sizeof *src->rlimits, alignof(struct fl_rlimit))
                                 : NULL;
    dst->groups = src->flags & FL_SET_GROUPS && src->ngroups
                      ? copy_array(a, src->groups, src->ngroups, sizeof *src->groups,
                                   alignof(gid_t))
                      : NULL;
    dst->cgroup = copy_str(a, src->cgroup);
}

/* ------------------------------------------------------------------------ */
/* The record                                                               */
/* ------------------------------------------------------------------------ */

static void release(struct fl__launch *l)
{
    fl__plan_free(&l->plan);
    if (l->stack)
        stack_give(l->stack);
    l->stack = NULL;
}

void fl__launch_free(struct fl__launch *l)
{
    if (!l)
        return;
    if (!l->settled)
        release(l);
    free(l);
}

/* Whether a failure's explanation would read a file by a name relative
 * to the caller's cwd: a relative candidate, or a relative .cwd. */
static bool names_relative(const struct fl__plan *p)
{
    if (p->cmd->cwd)
        return p->cmd->cwd[0] != '/';
    for (size_t i = 0; i < p->ncands; i++)
        if (p->cands[i][0] != '/')
            return true;
    return false;
}

int fl__launch_new(const struct fl_cmd *cmd, struct fl__launch **out, struct fl__plan **plan,
                   struct fl_error *e)
{
    *out = NULL;
    /* Checked before the copy reads anything: the counts and flags say
     * which fields are in use. The plan checks the copy again. */
    int r = fl__cmd_check(cmd, e);
    if (r)
        return r;
    fl__keep_code_loaded();   /* the child runs it after this call returns */
    struct env_snap env = { 0 };
    bool snap = !(cmd->flags & FL_ENV_CLEAR) && !cmd->env;
    struct arena a = { 0 };
    struct fl_cmd counted;
    struct fl__launch *l = NULL;
    if (!snap || snap_environ(&env)) {
        copy_cmd(&a, cmd, &env, &counted);
        if (!a.overflow && a.used <= SIZE_MAX - sizeof *l)
            l = malloc(sizeof *l + a.used);
    }
    if (!l) {
        free(env.v);
        return fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, "", "the launch's copy of the command");
    }
    l->stack = NULL;
    l->settled = false;
    l->owner = getpid();
    l->generation = fork_generation;
    a = (struct arena){ .base = (char *)l->copy };
    copy_cmd(&a, cmd, &env, &l->cmd);
    free(env.v);
    r = fl__plan_init(&l->plan, &l->cmd, e);
    if (!r)
        r = fl__plan_hold(&l->plan, e);
    if (!r && names_relative(&l->plan))
        l->plan.launch_cwd = getcwd(NULL, 0);  /* NULL: the explanation is left out */
    if (!r && !(l->stack = stack_take()))
        r = fl__fail(e, ENOMEM, FL_STEP_CLONE, -1, fl__program(cmd), "mapping the child's stack");
    if (r) {
        fl__launch_free(l);
        return r;
    }
    l->plan.launch_stack = l->stack;
    l->plan.exec_word = &l->exec_word;
    l->exec_word = 1;
    *out = l;
    *plan = &l->plan;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Settling                                                                 */
/* ------------------------------------------------------------------------ */

/* Has the child ended (a zombie, or reaped elsewhere)? Raw and WNOWAIT:
 * nothing is taken. Only a status seen, or ECHILD (no such child of ours
 * any more), says so: an error that proves nothing (P_PIDFD refused, see
 * fl__pidfd_wait_refused(); EBADF from a pidfd closed behind the handle)
 * asks again by pid, which is still ours while nothing has reaped it, and
 * any other error keeps the wait going, since settling early frees what a
 * child still at its setup reads. */
static bool ended(const struct fl_proc *proc)
{
    siginfo_t si;
    long r;
    bool by_pid = proc->pidfd < 0;
    for (;;) {
        si.si_pid = 0;
        r = by_pid ? fl__sys5(SYS_waitid, P_PID, proc->pid, &si, WEXITED | WNOHANG | WNOWAIT, 0)
                   : fl__sys5(SYS_waitid, P_PIDFD, proc->pidfd, &si,
                              WEXITED | WNOHANG | WNOWAIT, 0);
        if (r == -EINTR)
            continue;
        if (!by_pid && r == -EBADF) {
            by_pid = true;
            continue;
        }
        if (!by_pid && fl__pidfd_wait_refused(r)) {
            if (fl__pid_names_pidfd(proc->pidfd, proc->pid) == 0)
                return true;  /* reaped elsewhere */
            by_pid = true;
            continue;
        }
        break;
    }
    return (r == 0 && si.si_pid != 0) || r == -ECHILD;
}

/* A futex wait on the exec word for up to ns. Where the futex call is
 * refused (a seccomp filter of the caller's that denies it, with ENOSYS or
 * EPERM, or that answers 0 or EAGAIN without waiting, the word unchanged),
 * a plain sleep of a millisecond at most instead, so that the wait looks
 * again soon and never spins: clock_nanosleep(), else nanosleep(), else
 * ppoll() on no fd, as a filter may allow one and not the others. Returns
 * the futex's result, or -ETIMEDOUT after such a sleep. */
static long wait_on_word(uint32_t *word, uint32_t v, long ns)
{
    struct timespec ts = { 0, ns };
    long r = fl__sys4(SYS_futex, word, FUTEX_WAIT, v, &ts);
    if (r == -EINTR || r == -ETIMEDOUT ||
        ((r == 0 || r == -EAGAIN) && __atomic_load_n(word, __ATOMIC_ACQUIRE) != v))
        return r;
    struct timespec nap = { 0, ns < 1000000L ? ns : 1000000L };
    r = fl__sys4(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &nap, NULL);
    if (r != 0 && r != -EINTR)
        r = fl__sys2(SYS_nanosleep, &nap, NULL);
    if (r != 0 && r != -EINTR)
        r = fl__sys5(SYS_ppoll, NULL, 0, &nap, NULL, 8);
    return r == -EINTR ? r : -ETIMEDOUT;
}

/* Sleeps until the kernel clears the word (see the top of the file). The
 * futex wait has a timeout only for the child that ends without clearing
 * it; the kernel's wake is what ends the wait otherwise. The look is due
 * by the clock, not only when a wait times out, so that signals arriving
 * faster than the step cannot put it off for ever. */
static bool stopped(const struct fl_proc *proc);

static bool await_exec(struct fl__launch *l, const struct fl_proc *proc, bool cancellable,
                       bool give_up_if_stopped)
{
    /* Cancellable: the raw futex wait is no cancellation point, and
     * glibc restarts it after SIGCANCEL, so the request is looked for
     * between waits of at most 10 ms. */
    long step_ns = 10 * 1000000L, max_ns = cancellable ? step_ns : 100 * 1000000L;
    long long due = fl__now_ns() + step_ns;
    for (;;) {
        uint32_t v = __atomic_load_n(&l->exec_word, __ATOMIC_ACQUIRE);
        if (v == 0)
            return true;
        if (cancellable)
            pthread_testcancel();
        long r = wait_on_word(&l->exec_word, v, step_ns);
        if ((r == -ETIMEDOUT || r == -EINTR) && fl__now_ns() >= due) {
            if (ended(proc))
                return true;
            if (give_up_if_stopped && stopped(proc))
                return false;
            step_ns = step_ns < max_ns ? step_ns * 2 : max_ns;
            due = fl__now_ns() + step_ns;
        }
    }
}

void fl__launch_await_cancellable(const struct fl_proc *proc)
{
    struct fl__launch *l = proc->launch_;
    if (l && !l->settled)
        await_exec(l, proc, true, false);
}

/* Is the child stopped (SIGSTOP, or a tracer's stop)? Asked only while
 * it has not made its group, which a stopped child cannot go on to do.
 * waitid() sees a stop that no one has taken the report of; the stat's
 * state sees it whoever took it, and a tracer's. Raw system calls only. */
static bool stopped(const struct fl_proc *proc)
{
    siginfo_t si;
    si.si_pid = 0;
    long r = proc->pidfd >= 0 ? fl__sys5(SYS_waitid, P_PIDFD, proc->pidfd, &si,
                                         WSTOPPED | WNOHANG | WNOWAIT, 0)
                              : -EBADF;
    if (r == -EBADF ||
        (fl__pidfd_wait_refused(r) && fl__pid_names_pidfd(proc->pidfd, proc->pid) != 0))
        r = fl__sys5(SYS_waitid, P_PID, proc->pid, &si, WSTOPPED | WNOHANG | WNOWAIT, 0);
    if (r == 0 && si.si_pid != 0)
        return true;
    char state = fl__pid_state(proc->pid);
    return state == 'T' || state == 't';
}

bool fl__launch_await_group(const struct fl_proc *proc)
{
    struct fl__launch *l = proc->launch_;
    /* The plan's flags: FL_PTY and FL_SETCTTY add FL_SETSID there. */
    if (!l || l->settled || !(l->plan.flags & (FL_NEW_PGROUP | FL_SETSID)))
        return true;
    /* setsid() and setpgid() come first in the child's setup, before any
     * step that may block (a FIFO's open), so the look at the group ends
     * soon; the exec, or the child's end, ends it as well. A child
     * stopped before that step (SIGSTOP, a tracer) would hold the look
     * for as long as it stays stopped: the group it will lead is then
     * the child alone, which the caller reaches through its pidfd. */
    for (bool first = true;; first = false) {
        uint32_t v = __atomic_load_n(&l->exec_word, __ATOMIC_ACQUIRE);
        if (v == 0 || fl__sys1(SYS_getpgid, proc->pid) == proc->pid || ended(proc))
            return true;
        /* Looked at again once it is seen stopped: it may have made its
         * group, exec'd and forked a member before it stopped, and a
         * stopped child cannot make it meanwhile. */
        if (!first && stopped(proc))
            return __atomic_load_n(&l->exec_word, __ATOMIC_ACQUIRE) == 0 ||
                   fl__sys1(SYS_getpgid, proc->pid) == proc->pid;
        wait_on_word(&l->exec_word, v, 1000000L);
    }
}

/* The child's errno once it has exec'd or failed, waiting for that or
 * not (-1: still in its setup). */
static int launch_outcome(const struct fl_proc *proc, bool wait)
{
    struct fl__launch *l = proc->launch_;
    if (!l)
        return 0;
    if (l->settled)
        return l->error.err;
    if (wait)
        await_exec(l, proc, false, false);
    else if (__atomic_load_n(&l->exec_word, __ATOMIC_ACQUIRE) != 0 && !ended(proc))
        return -1;
    /* Written by the child before it let go of our memory. */
    return l->plan.cerr.err;
}

int fl__launch_poll(const struct fl_proc *proc)
{
    return launch_outcome(proc, false);
}

int fl__launch_await(const struct fl_proc *proc)
{
    return launch_outcome(proc, true);
}

/* Not a cancellation point, whoever calls it: once the word is seen clear
 * the record must be filled, the failed child reaped and the record freed
 * in one go, and explaining a failure may read the program's #! line with
 * open() and read(), which are. */
static int settle(struct fl_proc *proc, bool give_up_if_stopped, bool *gave_up)
{
    struct fl__launch *l = proc->launch_;
    if (!l)
        return 0;
    if (l->settled)
        return l->error.err;
    int saved_errno = errno, cancel_state;   /* fl_close() keeps errno */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    if (l->owner != getpid() || l->generation != fork_generation) {
        /* A fork() child's copy of the handle: the child of the launch is
         * its parent's, and clears the word in its parent's memory, not in
         * this copy, whose error record says nothing either. The copies
         * of the record and the stack are this process's to free; the
         * child and the terminal are not its to touch. */
        l->settled = true;
        fl__fail(&l->error, ECHILD, FL_STEP_PREPARE, -1, fl__program(&l->cmd),
                 "the launch is another process's (a fork() child's copy of the handle)");
        release(l);
        pthread_setcancelstate(cancel_state, NULL);
        errno = saved_errno;
        return ECHILD;
    }
    if (!await_exec(l, proc, false, give_up_if_stopped)) {
        if (gave_up)
            *gave_up = true;
        pthread_setcancelstate(cancel_state, NULL);
        errno = saved_errno;
        return 0;
    }
    l->settled = true;
    fl__dumpable_restore(&l->plan);
    int err = l->plan.cerr.err;
    proc->not_applied = l->plan.cerr.not_applied;
    if (err && proc->state_ == FL__PROC_REAPED) {
        /* The caller's wait has reaped it already (no pidfd, no
         * pidfd_open: fl_wait() polls and reaps): its pid is no longer
         * ours to wait for. */
        fl__fail_child(&l->plan, &l->error);
    } else if (err) {
        fl__fail_child(&l->plan, &l->error);
        /* It failed before exec: reap it here, so that no zombie is left
         * and its 127 never reads as the program's status. */
        siginfo_t si;
        long r;
        /* Without a pidfd, one borrowed where the handle knows its
         * process: after a foreign reap, its pid may be another child's. */
        int fd = proc->pidfd >= 0 ? proc->pidfd : fl__proc_borrow_pidfd(proc);
        if (fd >= 0)
            r = fl__reap_by_pidfd(proc->pid, fd, &si, NULL, FL__REAP_ENDED);
        else
            do
                r = fd == -ESRCH ? -ECHILD
                                 : fl__sys5(SYS_waitid, P_PID, proc->pid, &si, WEXITED, 0);
            while (r == -EINTR);
        if (fd >= 0 && proc->pidfd < 0)
            fl__sys1(SYS_close, fd);
        /* EBADF: the caller closed the pidfd (it is asked by pid then, as
         * ended() does). */
        if (r == -EBADF && fd >= 0)
            fl__reap(proc->pid, -1);
        proc->state_ = FL__PROC_REAPED;
    }
    if (err)  /* FL_FOREGROUND: the terminal back from a group that is gone */
        fl__tty_give_back(&l->plan);
    release(l);
    if (!err) {
        free(l);
        proc->launch_ = NULL;
    }
    pthread_setcancelstate(cancel_state, NULL);
    errno = saved_errno;
    return err;
}

int fl__launch_settle(struct fl_proc *proc)
{
    return settle(proc, false, NULL);
}

/* Orphans: records that fl_close() could not settle, because their child
 * was stopped before its exec (SIGSTOP, a tracer) and may stay so for
 * ever. The child still runs on the stack and reads the plan, so both
 * wait here until it has exec'd or ended; then the next spawn, or
 * fl_close() of a pending launch, settles the record as fl_close() would
 * have: frees it, and reaps a child that failed. The list is this
 * process's: a fork() child starts without it (those children are not
 * its own). */
static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fl__launch *orphans;

static void forget_orphans_after_fork(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    orphans_lock = fresh;
    orphans = NULL;
    fork_generation++;
}

/* At load: see register_after_fork() in ignored_signals.c. */
__attribute__((constructor)) static void register_orphans_after_fork(void)
{
    pthread_atfork(NULL, NULL, forget_orphans_after_fork);
}

/* One caller at a time; another that finds the lock taken goes on, and
 * the orphans wait for the next. Nothing here waits on a child: a record
 * is taken only once its child has exec'd, or has ended where its reap is
 * due (a failure): a tracer may hold a failed child's end for as long as
 * it likes, and the record then waits for a later sweep. (A child that
 * ended without the kernel's clearing its word costs one step of
 * await_exec(), 10 ms.) */
void fl__launch_sweep(void)
{
    if (!__atomic_load_n(&orphans, __ATOMIC_ACQUIRE) || pthread_mutex_trylock(&orphans_lock))
        return;
    for (struct fl__launch **at = &orphans; *at;) {
        struct fl__launch *l = *at;
        struct fl_proc p = { .pid = l->pid, .pidfd = -1, .stdio = { -1, -1, -1 }, .pty = -1,
                             .ident_ = l->ident, .launch_ = l };
        bool exec_done = __atomic_load_n(&l->exec_word, __ATOMIC_ACQUIRE) == 0;
        if (exec_done ? l->plan.cerr.err && !ended(&p) : !ended(&p)) {
            at = &l->next;
            continue;
        }
        __atomic_store_n(at, l->next, __ATOMIC_RELEASE);   /* read unlocked above */
        settle(&p, false, NULL);
        fl__launch_free(p.launch_);
    }
    pthread_mutex_unlock(&orphans_lock);
}

void fl__launch_close(struct fl_proc *proc)
{
    struct fl__launch *l = proc->launch_;
    if (!l)
        return;
    bool gave_up = false;
    settle(proc, true, &gave_up);
    if (gave_up) {
        l->pid = proc->pid;
        l->ident = proc->pidfd >= 0 ? fl__pidfd_ident(proc->pidfd) : proc->ident_;
        pthread_mutex_lock(&orphans_lock);
        l->next = orphans;
        __atomic_store_n(&orphans, l, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&orphans_lock);
    } else {
        fl__launch_free(proc->launch_);   /* settled: gone unless it holds a failure */
    }
    proc->launch_ = NULL;
    fl__launch_sweep();
}

int fl__launch_error_or(struct fl_proc *proc, int err)
{
    int launch_err = fl__launch_settle(proc);
    return launch_err ? launch_err : err;
}

int fl_launch_finish(struct fl_proc *proc, struct fl_error *error)
{
    struct fl_error scratch = { 0 };
    struct fl_error *e = error ? error : &scratch;
    fl__fail(e, 0, FL_STEP_NONE, -1, "", "");
    if (!proc)
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", "no handle");
    if (proc->pid <= 0)
        return fl__fail(e, ESRCH, FL_STEP_PREPARE, -1, "",
                        "the handle holds no process (closed, or never filled)");
    int saved_errno = errno;
    int r = fl__launch_settle(proc);
    if (r && error)
        *error = ((struct fl__launch *)proc->launch_)->error;
    errno = saved_errno;
    return r;
}
