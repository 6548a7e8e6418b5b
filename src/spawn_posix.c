/* spawn_posix.c: the libc's posix_spawn(), for comparison and for systems
 * without our clone child. What it cannot express is refused with ENOTSUP,
 * never dropped. posix_spawn() does not say which step failed; blame()
 * names one when the parent can tell, else FL_STEP_SPAWN. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

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

/* FL_FOREGROUND is a tcsetpgrp file action, from glibc 2.35. */
#ifndef FL_HAVE_ADDTCSETPGRP   /* CMake probes for it; this is the guess */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35)
#define FL_HAVE_ADDTCSETPGRP 1
#else
#define FL_HAVE_ADDTCSETPGRP 0
#endif
#endif

bool fl__posix_spawn_foreground(void)
{
    return FL_HAVE_ADDTCSETPGRP;
}

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
                       : p->ctty_fd >= 0         ? "a controlling terminal (TIOCSCTTY)"
                       : fl__contain_set(c->contain)
                           ? "containment (namespaces, chroot, capabilities, filters)"
                       : c->sched && c->sched->set ? "placement (CPUs, nice, ioprio, oom_score_adj)"
                       : p->fg_fd >= 0 && !FL_HAVE_ADDTCSETPGRP
                           ? "the terminal's foreground group (no tcsetpgrp file action)"
                                                 : NULL;
    if (what) {
        char detail[FL_ERROR_DETAIL_MAX];
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
 * the parent, since the file actions run strictly in order; so are those
 * at or above RLIMIT_NOFILE (opened before the limit was lowered), which
 * glibc's adddup2 refuses (EBADF) while dup3() reads them. */
static int stage_sources(struct fl__plan *p, struct fl_error *e)
{
    int limit = getdtablesize();
    for (size_t i = 0; i < p->nacts; i++) {
        struct fl__act *a = &p->acts[i];
        if (a->kind != FL__ACT_DUP || a->staged_fd == -2 || (!p->stage && a->src_fd < limit))
            continue;
        long fd = fl__dup_aside(p, a->src_fd);
        if (fd < 0) {
            char what[FL_ERROR_DETAIL_MAX];
            snprintf(what, sizeof what, "child fd %d: a copy of parent fd %d out of the way",
                     a->child_fd, a->src_fd);
            return fl__fail(e, (int)-fd, FL_STEP_DUP, a->child_fd, "", what);
        }
        a->staged_fd = (int)fd;
    }
    return 0;
}

static void unstage_sources(struct fl__plan *p)
{
    for (size_t i = 0; i < p->nacts; i++)
        if (p->acts[i].staged_fd >= 0) {
            close(p->acts[i].staged_fd);
            p->acts[i].staged_fd = -1;
        }
}

#if FL_HAVE_ADDCLOSEFROM
/* Is any fd from lo up open, and left open by exec? Lowering
 * RLIMIT_NOFILE leaves fds above the new limit open. Without /proc, say
 * yes. */
static bool any_fd_open_from(int lo)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return true;
    bool found = false;
    for (struct dirent *de; !found && (de = readdir(d));) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        found = *end == '\0' && end != de->d_name && fd >= lo && fd != dirfd(d) &&
                !(fcntl((int)fd, F_GETFD) & FD_CLOEXEC);
    }
    closedir(d);
    return found;
}
#endif

static int add_file_actions(struct fl__plan *p, posix_spawn_file_actions_t *fa,
                            const char **why)
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
#if FL_HAVE_ADDTCSETPGRP
    /* After the dups: the fd is the child's. glibc's child runs it with
     * every signal blocked, SIGTTOU too. */
    if (!r && p->fg_fd >= 0)
        r = posix_spawn_file_actions_addtcsetpgrp_np(fa, p->fg_fd);
#endif
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
    /* glibc refuses an fd at or above RLIMIT_NOFILE in every close action,
     * while fds opened before the limit was lowered may be open there. */
    if (r || next < getdtablesize())
        return r ? r : posix_spawn_file_actions_addclosefrom_np(fa, next);
    if (!any_fd_open_from(next))
        return 0;
    *why = "posix_spawn cannot close fds at or above RLIMIT_NOFILE, and some are open; "
           "use another backend";
    return ENOTSUP;
#else
    (void)next, (void)why;
    return r ? r : ENOTSUP;   /* unsupported() has refused it already */
#endif
}

static int set_attributes(struct fl__plan *p, posix_spawnattr_t *at)
{
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    sigset_t def;
    /* Every bit, not sigfillset(): glibc leaves its own signals (32 and
     * 33) out of a filled set, and its child then sets them to SIG_IGN,
     * which exec keeps. Its child reads the raw bits. */
    if (!(p->flags & FL_KEEP_SIGNALS))
        memset(&def, 0xff, sizeof def);
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

/* Errors that execve() gives for the file it runs. Not EPERM: that is
 * also what a denied clone says. */
static bool exec_can_give(int r)
{
    return r == ENOENT || r == EACCES || r == ENOTDIR || r == ENOEXEC ||
           r == ETXTBSY || r == ELOOP || r == ENAMETOOLONG || r == EISDIR || r == E2BIG ||
           r == ELIBBAD;
}

/* posix_spawn() does not say which step failed. Seen from the parent
 * afterwards: a cwd that would refuse the chdir with that very error is
 * the chdir's fault; with no step before exec that could have failed (no
 * file to open but /dev/null, no process group to join), an error exec
 * gives is exec's; anything else is FL_STEP_SPAWN, "somewhere in
 * posix_spawn". Opening a file can fail in too many ways (ETXTBSY, ELOOP,
 * EISDIR, EACCES for O_TRUNC) to clear it from here. */
#ifndef SYS_clone3
#define SYS_clone3 435  /* x86-64, arm64 and the other common ABIs */
#endif

/* glibc's posix_spawn (2.34+) makes the process with clone3() and falls
 * back to clone() only on ENOSYS: a seccomp filter that answers EPERM, as
 * older container profiles do, fails every spawn before any exec. Where
 * clone3() may run, a call without arguments is EINVAL. */
static bool clone3_refused_with(int err)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    return fl__sys2(SYS_clone3, 0, 0) == -err;
#else
    (void)err;
    return false;
#endif
}

static enum fl_step blame(const struct fl__plan *p, int err)
{
    if (err == EAGAIN || err == ENOMEM)
        return FL_STEP_CLONE;  /* out of processes or memory */
    if (err == EPERM && clone3_refused_with(err))
        return FL_STEP_CLONE;
    if (err == E2BIG)
        return FL_STEP_EXEC;   /* neither open() nor chdir() gives it */
    if (p->cmd->cwd) {
        int r = fl__cwd_error(p->cmd->cwd);
        if (r)
            return r == err ? FL_STEP_CHDIR : FL_STEP_SPAWN;
    }
    for (size_t i = 0; i < p->nacts; i++) {
        const struct fl__act *a = &p->acts[i];
        if (a->kind == FL__ACT_OPEN &&
            (strcmp(a->path, "/dev/null") != 0 || access("/dev/null", R_OK | W_OK) != 0))
            return FL_STEP_SPAWN;
    }
    return exec_can_give(err) ? FL_STEP_EXEC : FL_STEP_SPAWN;
}

/* posix_spawn() runs the file actions before its exec, so trying the
 * PATH candidates one posix_spawn() at a time would run them once per
 * candidate: an O_EXCL file would fail the second time, and a FIFO's
 * reader would see EOF. The candidate is picked here instead, with the
 * rules of the clone child's search (this backend cannot change
 * credentials, so the parent's view is the child's), and spawned once. */
static int pick_candidate(struct fl__plan *p, size_t *pick)
{
    /* A program named with '/' is exec's to judge; one found by a PATH
     * search of a single entry still follows the search's rules (an
     * unsearchable directory hides nothing: ENOENT, not EACCES). */
    if (p->ncands == 1 && !p->searched) {
        *pick = 0;
        return 0;
    }
    /* On the heap: the caller's thread may have a small stack. */
    char *path = malloc(PATH_MAX);
    if (!path) {
        p->cerr = (struct fl__child_err){ .err = ENOMEM, .step = FL_STEP_PREPARE, .index = -1 };
        return ENOMEM;
    }
    int denied = -1, r = 0, present = -1, present_err = ENOENT;
    for (size_t i = 0; i < p->ncands; i++) {
        bool there;
        r = fl__candidate_status(p, p->cands[i], path, PATH_MAX, &there);
        if (r == 0) {
            *pick = i;
            break;
        }
        if (r == EACCES) {
            if (denied < 0)
                denied = (int)i;
        } else if (!fl__not_here(r)) {
            p->cerr = (struct fl__child_err){ .err = r, .step = FL_STEP_EXEC, .index = (int)i };
            break;
        } else if (present < 0 && there) {
            present = (int)i;
            present_err = r;
        }
    }
    free(path);
    if (r == 0 || p->cerr.err)
        return r;
    /* As the clone child ends its search (exec_candidates()). */
    p->cerr = fl__search_failed(denied, present, present_err);
    return p->cerr.err;
}

static int spawn_candidate(struct fl__plan *p, posix_spawn_file_actions_t *fa,
                           posix_spawnattr_t *at, pid_t *pid)
{
    size_t i = 0;
    uint64_t shell = 0;
    int r = pick_candidate(p, &i);
    if (r) {
        /* The child would have failed its chdir before any search. */
        int c = p->cmd->cwd ? fl__cwd_error(p->cmd->cwd) : 0;
        if (c)
            p->cerr = (struct fl__child_err){ .err = c, .step = FL_STEP_CHDIR, .index = -1 };
        return p->cerr.err;
    }
    r = posix_spawn(pid, p->cands[i], fa, at, p->argv, p->envp);
    /* The one case that runs the file actions twice: the kernel refused
     * the format, and only exec could tell. */
    if (r == ENOEXEC && (p->flags & FL_SHELL_FALLBACK)) {
        p->sh_argv[1] = (char *)p->cands[i];
        r = posix_spawn(pid, "/bin/sh", fa, at, p->sh_argv, p->envp);
        shell = i < 64 ? (uint64_t)1 << i : 0;
    }
    if (r == 0)
        return 0;
    enum fl_step step = blame(p, r);
    p->cerr = (struct fl__child_err){ .err = r, .step = step, .index = step == FL_STEP_CHDIR ? -1 : (int)i, .shell_failed = shell };
    return r;
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
    const char *why = "posix_spawn file actions";
    r = stage_sources(p, e);
    if (r) {
        /* said */
    } else if ((r = add_file_actions(p, &fa, &why))) {
        fl__fail(e, r, FL_STEP_PREPARE, -1, fl__program(p->cmd), why);
    } else if ((r = set_attributes(p, &at))) {
        fl__fail(e, r, FL_STEP_PREPARE, -1, fl__program(p->cmd), "posix_spawn attributes");
    } else if ((r = spawn_candidate(p, &fa, &at, &pid))) {
        fl__fail_child(p, e);
        if (p->cerr.step == FL_STEP_CLONE && r == EPERM)
            snprintf(e->detail, sizeof e->detail,
                     "glibc's posix_spawn makes the process with clone3(), which a seccomp filter "
                     "refuses here; the clone and fork backends do without it");
    }
    unstage_sources(p);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (r)
        return r;
    fl__proc_adopt(proc, pid, -1, p->flags & FL_NO_PIDFD);
    proc->backend = FL_BACKEND_POSIX_SPAWN;
    return 0;
}
