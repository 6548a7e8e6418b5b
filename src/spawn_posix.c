/* spawn_posix.c: the libc's posix_spawn(), for comparison and for systems
 * without our clone child. What it cannot express is refused with ENOTSUP,
 * never dropped. posix_spawn() does not say which step failed, so its
 * errors carry FL_STEP_SPAWN unless only exec could have failed. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Closing every other fd in the child needs a closefrom file action, which
 * glibc has from 2.34 and musl does not have at all. Listing the open fds
 * and adding one close action each would leak an fd another thread opens
 * in between, so without the action the backend refuses close-others. */
#ifndef FL_HAVE_ADDCLOSEFROM   /* CMake probes for it; this is the guess */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
#define FL_HAVE_ADDCLOSEFROM 1
#else
#define FL_HAVE_ADDCLOSEFROM 0
#endif
#endif

/* What the command asks that posix_spawn cannot do, the named options
 * first: a command with rlimits is refused for its rlimits on every libc. */
static int unsupported(struct fl__plan *p, struct fl_error *e)
{
    const struct fl_cmd *c = p->cmd;
    const char *what = c->nrlimits                ? "rlimits"
                       : p->flags & FL_SET_UMASK ? "a umask"
                       : p->flags & (FL_SET_UID | FL_SET_GID | FL_SET_GROUPS) ? "credentials"
                       : c->pdeathsig            ? "a parent-death signal"
                       : c->cgroup               ? "a cgroup"
                       : p->flags & FL_RETRY_ETXTBSY ? "an ETXTBSY retry"
                       : p->sigignore_bits       ? "a signal to SIG_IGN (sigignore)"
                                                 : NULL;
    if (what) {
        char detail[64];
        snprintf(detail, sizeof detail, "posix_spawn cannot set %s", what);
        return fl__fail(e, ENOTSUP, FL_STEP_PREPARE, -1, fl__program(c), detail);
    }
    if (!FL_HAVE_ADDCLOSEFROM && !(p->flags & FL_KEEP_FDS))
        return fl__fail(e, ENOTSUP, FL_STEP_PREPARE, -1, fl__program(c),
                        "this libc's posix_spawn cannot close inherited fds "
                        "(no posix_spawn_file_actions_addclosefrom_np); "
                        "set FL_KEEP_FDS or use another backend");
    return 0;
}

/* Sources that other actions overwrite are copied out of the way here in
 * the parent, since the file actions run strictly in order. */
static int stage_sources(struct fl__plan *p)
{
    if (!p->stage)
        return 0;
    for (size_t i = 0; i < p->nacts; i++) {
        struct fl__act *a = &p->acts[i];
        if (a->kind != FL__ACT_DUP || a->staged_fd == -2)
            continue;
        a->staged_fd = fcntl(a->src_fd, F_DUPFD_CLOEXEC, p->stage_min);
        if (a->staged_fd < 0)
            return errno;
    }
    return 0;
}

static void unstage_sources(struct fl__plan *p)
{
    for (size_t i = 0; p->stage && i < p->nacts; i++)
        if (p->acts[i].staged_fd >= 0) {
            close(p->acts[i].staged_fd);
            p->acts[i].staged_fd = -1;
        }
}

static int add_file_actions(struct fl__plan *p, posix_spawn_file_actions_t *fa)
{
    int r = 0;
    if (p->cmd->cwd)
        r = posix_spawn_file_actions_addchdir_np(fa, p->cmd->cwd);
    for (size_t i = 0; !r && i < p->nacts; i++) {
        const struct fl__act *a = &p->acts[i];
        if (a->kind == FL__ACT_OPEN)
            r = posix_spawn_file_actions_addopen(fa, a->child_fd, a->path, a->oflags, a->mode);
        else
            r = posix_spawn_file_actions_adddup2(fa, a->staged_fd >= 0 ? a->staged_fd : a->src_fd,
                                                 a->child_fd);
    }
    if (r || (p->flags & FL_KEEP_FDS))
        return r;
    /* Close the gaps between kept fds, then everything above them. */
    int next = 3;
    for (size_t i = 0; !r && i < p->nkeep; i++) {
        for (; !r && next < p->keep[i]; next++)
            r = posix_spawn_file_actions_addclose(fa, next);
        next = p->keep[i] + 1;
    }
#if FL_HAVE_ADDCLOSEFROM
    return r ? r : posix_spawn_file_actions_addclosefrom_np(fa, next);
#else
    (void)next;
    return r ? r : ENOTSUP;   /* unsupported() has refused it already */
#endif
}

static int set_attributes(struct fl__plan *p, posix_spawnattr_t *at)
{
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    sigset_t def;
    if (!(p->flags & FL_KEEP_SIGNALS))
        sigfillset(&def);
    else if (p->cmd->sigdefault)
        def = *p->cmd->sigdefault;
    else
        sigemptyset(&def);
    if (p->flags & FL_SETSID)
        flags |= POSIX_SPAWN_SETSID;
    else if (p->flags & (FL_NEW_PGROUP | FL_JOIN_PGROUP))
        flags |= POSIX_SPAWN_SETPGROUP;
    int r = posix_spawnattr_setflags(at, flags);
    if (!r)
        r = posix_spawnattr_setsigmask(at, &p->child_mask);
    if (!r)
        r = posix_spawnattr_setsigdefault(at, &def);
    if (!r && (p->flags & FL_JOIN_PGROUP))
        r = posix_spawnattr_setpgroup(at, p->cmd->pgid);
    return r;
}

/* Errors that execve() gives for the file itself. */
static bool is_exec_error(int r)
{
    return r == ENOEXEC || r == ETXTBSY || r == ELOOP || r == ENAMETOOLONG ||
           r == EISDIR || r == E2BIG || r == ELIBBAD;
}

/* The same search as the clone child's, one posix_spawn() per candidate. */
static int spawn_candidates(struct fl__plan *p, posix_spawn_file_actions_t *fa,
                            posix_spawnattr_t *at, pid_t *pid)
{
    int denied = -1, first_err = ENOENT;
    for (size_t i = 0; i < p->ncands; i++) {
        int r = posix_spawn(pid, p->cands[i], fa, at, p->argv, p->envp);
        if (r == ENOEXEC && (p->flags & FL_SHELL_FALLBACK)) {
            p->sh_argv[1] = (char *)p->cands[i];
            r = posix_spawn(pid, "/bin/sh", fa, at, p->sh_argv, p->envp);
        }
        if (r == 0)
            return 0;
        struct stat st;
        if (r == EACCES && stat(p->cands[i], &st) < 0)
            r = ENOENT;  /* a PATH directory we may not search */
        if (r == EACCES) {
            if (denied < 0)
                denied = (int)i;
        } else if (r == ENOENT || r == ENOTDIR || r == ESTALE || r == ENODEV ||
                   r == ETIMEDOUT) {
            if (i == 0)
                first_err = r;
        } else {
            /* Out of processes or memory: creating the child failed. */
            enum fl_step step = r == EAGAIN || r == ENOMEM ? FL_STEP_CLONE
                                : is_exec_error(r)          ? FL_STEP_EXEC
                                                            : FL_STEP_SPAWN;
            p->cerr = (struct fl__child_err){ r, step, (int)i };
            return r;
        }
    }
    if (denied >= 0)
        p->cerr = (struct fl__child_err){ EACCES, FL_STEP_EXEC, denied };
    else
        p->cerr = (struct fl__child_err){ p->ncands == 1 ? first_err : ENOENT,
                                          FL_STEP_EXEC, p->ncands == 1 ? 0 : -1 };
    return p->cerr.err;
}

static bool only_exec_can_fail(const struct fl__plan *p)
{
    for (size_t i = 0; i < p->nacts; i++)
        if (p->acts[i].kind == FL__ACT_OPEN)
            return false;
    return !p->cmd->cwd && !(p->flags & (FL_SETSID | FL_NEW_PGROUP | FL_JOIN_PGROUP));
}

int fl__spawn_posix(struct fl__plan *p, struct fl_proc *proc, struct fl_error *e)
{
    int r = unsupported(p, e);
    if (r)
        return r;
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    fl__child_mask(p, &mask);

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    pid_t pid = 0;
    r = stage_sources(p);
    if (r) {
        fl__fail(e, r, FL_STEP_DUP, -1, "", "staging fds");
    } else if ((r = add_file_actions(p, &fa)) || (r = set_attributes(p, &at))) {
        fl__fail(e, r, FL_STEP_PREPARE, -1, fl__program(p->cmd), "posix_spawn attributes");
    } else if ((r = spawn_candidates(p, &fa, &at, &pid))) {
        if (p->cerr.step == FL_STEP_EXEC && !only_exec_can_fail(p))
            p->cerr.step = FL_STEP_SPAWN;
        fl__fail_child(p, e);
    }
    unstage_sources(p);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (r)
        return r;
    proc->pid = pid;
    proc->pidfd = p->flags & FL_NO_PIDFD ? -1 : fl__pidfd_open(pid);
    proc->backend = FL_BACKEND_POSIX_SPAWN;
    return 0;
}
