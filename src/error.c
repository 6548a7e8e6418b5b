/* error.c: the error record, its names and its wording. All of this runs
 * in the parent, after the child has gone. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static const char *const step_names[] = {
    [FL_STEP_NONE] = "none",         [FL_STEP_PREPARE] = "prepare",
    [FL_STEP_CLONE] = "clone",       [FL_STEP_SETSID] = "setsid",
    [FL_STEP_SETPGID] = "setpgid",   [FL_STEP_RLIMIT] = "rlimit",
    [FL_STEP_UMASK] = "umask",       [FL_STEP_CGROUP] = "cgroup",
    [FL_STEP_CHDIR] = "chdir",       [FL_STEP_OPEN] = "open",
    [FL_STEP_DUP] = "dup",           [FL_STEP_CLOSE_FDS] = "close_fds",
    [FL_STEP_SETGROUPS] = "setgroups", [FL_STEP_SETGID] = "setgid",
    [FL_STEP_SETUID] = "setuid",     [FL_STEP_PDEATHSIG] = "pdeathsig",
    [FL_STEP_SIGNALS] = "signals",   [FL_STEP_EXEC] = "exec",
    [FL_STEP_SPAWN] = "posix_spawn",
    [FL_STEP_OPENPT] = "openpt",     [FL_STEP_SETCTTY] = "setctty",
    [FL_STEP_TCSETPGRP] = "tcsetpgrp",
    [FL_STEP_UNSHARE] = "unshare",   [FL_STEP_ID_MAP] = "id_map",
    [FL_STEP_HOSTNAME] = "hostname", [FL_STEP_MOUNT] = "mount",
    [FL_STEP_CHROOT] = "chroot",     [FL_STEP_BOUNDING] = "bounding",
    [FL_STEP_AMBIENT] = "ambient",   [FL_STEP_NO_NEW_PRIVS] = "no_new_privs",
    [FL_STEP_LANDLOCK] = "landlock", [FL_STEP_SECCOMP] = "seccomp",
    [FL_STEP_AFFINITY] = "affinity", [FL_STEP_NICE] = "nice",
    [FL_STEP_IOPRIO] = "ioprio",     [FL_STEP_OOM_SCORE_ADJ] = "oom_score_adj",
};

const char *fl_step_name(enum fl_step step)
{
    if ((unsigned)step < sizeof step_names / sizeof step_names[0] && step_names[step])
        return step_names[step];
    return "?";
}

const char *fl_backend_name(enum fl_backend b)
{
    switch (b) {
    case FL_BACKEND_AUTO: return "auto";
    case FL_BACKEND_CLONE: return "clone";
    case FL_BACKEND_POSIX_SPAWN: return "posix_spawn";
    case FL_BACKEND_FORK: return "fork";
    }
    return "?";
}

static void copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* A path too long for the record ends in "..." where it was cut (never
 * inside a UTF-8 character): a cut name may be another file's, and a
 * reader must see that it is not the whole one. */
static void copy_path(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n < size) {
        memcpy(dst, src, n + 1);
        return;
    }
    n = size - 4;
    while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
        n--;  /* src[n], the first byte cut, must not continue a character */
    snprintf(dst, size, "%.*s...", (int)n, src);
}

int fl__fail(struct fl_error *e, int err, enum fl_step step, int index,
             const char *path, const char *detail)
{
    e->err = err;
    e->step = step;
    e->index = index;
    e->stage = 0;
    copy_path(e->path, sizeof e->path, path ? path : "");
    copy_str(e->detail, sizeof e->detail, detail ? detail : "");
    return err;
}

/* A name that means another file in the child than in the caller: its
 * own fds, cwd or root through /proc/self and /dev/fd. */
static bool names_own_process(const char *path)
{
    static const char *const own[] = { "/proc/self/", "/proc/thread-self/", "/dev/fd/",
                                       "/dev/stdin", "/dev/stdout", "/dev/stderr" };
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strncmp(path, own[i], strlen(own[i])) == 0)
            return true;
    return false;
}

/* A file exec saw, as the caller can name it (callers_name()). */
struct seen {
    const char *at;     /* the name to use */
    char *full;         /* owned */
    int fd;             /* owned: an O_PATH fd in a new root, or -1 */
};

static void seen_done(struct seen *s)
{
    free(s->full);
    if (s->fd >= 0)
        close(s->fd);
}

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#define FL__RESOLVE_IN_ROOT 0x10

/* Under a .chroot an absolute name is the new root's: it is looked up in
 * that root as the child's exec did, its symlinks too (openat2's
 * RESOLVE_IN_ROOT, Linux 5.6), and read through /proc/self/fd. 1: not
 * there; -1: cannot tell (no openat2, a relative root that a launch's
 * caller may have left). */
static int in_new_root(const struct fl__plan *p, const char *path, struct seen *s)
{
    const char *root = p->box ? p->box->chroot : NULL;
    if (!root || path[0] != '/' || (root[0] != '/' && p->exec_word))
        return -1;
    int dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return -1;
    struct { uint64_t flags, mode, resolve; } how = { O_PATH | O_CLOEXEC, 0, FL__RESOLVE_IN_ROOT };
    long fd = syscall(SYS_openat2, dir, path, &how, sizeof how);
    int err = errno;
    close(dir);
    if (fd < 0)
        return err == ENOENT || err == ENOTDIR ? 1 : -1;
    s->fd = (int)fd;
    if (asprintf(&s->full, "/proc/self/fd/%ld", fd) < 0) {
        s->full = NULL;
        return -1;
    }
    s->at = s->full;
    return 0;
}

/* The name under which the caller sees path, a file exec failed on or
 * one it named, as the child saw it: from the child's cwd, or in its new
 * root (.chroot). 0 (s->at; seen_done() after), 1 where it is not there
 * (a new root's), -1 where the caller cannot see that file: without the
 * memory to name it, where the same name is another file (fl_resolve()
 * looks in the caller's), or when the name is the child's own
 * (/dev/stdin, /proc/self/cwd/...). */
static int callers_name(const struct fl__plan *p, const char *path, struct seen *s)
{
    *s = (struct seen){ path, NULL, -1 };
    if (names_own_process(path))
        return -1;
    if (p->own_root && !p->in_callers_root)
        return in_new_root(p, path, s);
    if (path[0] == '/')
        return 0;
    /* Relative names were the launch's caller's cwd's at the launch;
     * where that is unknown (getcwd() failed) the file is too. */
    const char *cwd = p->cmd->cwd, *base = p->launch_cwd;
    if (cwd && cwd[0] == '/')
        base = NULL;
    else if (p->exec_word && !base)
        return -1;
    int n = 0;
    if (cwd && base)
        n = asprintf(&s->full, "%s/%s/%s", base, cwd, path);
    else if (cwd || base)
        n = asprintf(&s->full, "%s/%s", cwd ? cwd : base, path);
    if (n < 0) {
        s->full = NULL;
        return -1;
    }
    if (s->full)
        s->at = s->full;
    return 0;
}

/* The #! line (or ELF loader) of path, as callers_name() finds it;
 * *runnable, when asked: may the caller execute it. -1: not seen. */
static int shebang_from_cwd(const struct fl__plan *p, const char *path,
                            char interp[FL__BINPRM_BUF_SIZE], bool *runnable)
{
    struct seen s;
    if (callers_name(p, path, &s) != 0) {
        seen_done(&s);
        return -1;
    }
    int k = (int)fl__shebang(s.at, interp);
    if (runnable)
        *runnable = faccessat(AT_FDCWD, s.at, X_OK, AT_EACCESS) == 0;
    seen_done(&s);
    return k;
}

/* exec's EACCES for a file that cannot be run by anyone: a directory,
 * another kind of file, one without any execute bit, or one on a noexec
 * mount. Said only when the file itself shows it: a mode that denies only
 * some users (the child's may differ from the caller's) or a directory
 * on the way that cannot be searched is left to the errno. */
static bool explain_eacces(const struct fl__plan *p, const char *path, char *detail,
                           size_t size)
{
    struct seen seen;
    if (callers_name(p, path, &seen) != 0) {
        seen_done(&seen);
        return false;
    }
    const char *at = seen.at;
    struct stat st;
    struct statvfs vfs;
    static const char no_x_bit[] = "no execute permission: mode";
    const char *why = NULL;
    if (stat(at, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            why = "a directory";
        else if (!S_ISREG(st.st_mode))
            why = "not a regular file";
        else if (!(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
            why = no_x_bit;
        else if (statvfs(at, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC))
            why = "on a filesystem mounted noexec";
    }
    seen_done(&seen);
    if (why == no_x_bit)
        snprintf(detail, size, "%s %04o", why, (unsigned)(st.st_mode & 07777));
    else if (why)
        snprintf(detail, size, "%s", why);
    return why != NULL;
}

/* What the #! line or the ELF loader of the file exec failed on says
 * about exec's error. exec says ENOENT for a file that exists when its #!
 * interpreter is missing, as with "#!/bin/sh\r" from a CRLF file, or its
 * loader, as with a program built for musl on a glibc system: name it. */
static void explain_exec(const struct fl__plan *p, int err, const char *path,
                         char *detail, size_t size)
{
    char interp[FL__BINPRM_BUF_SIZE];
    if (err == EACCES && explain_eacces(p, path, detail, size))
        return;
    /* A program named through a caller's fd (/dev/fd/N, a shell's <(...)):
     * the clean child closed that fd before its exec. */
    int fd = p->program_fd;
    if (err == ENOENT && fd >= 0 && fd == fl__fd_the_path_names(path) &&
        !(p->flags & FL_KEEP_FDS) && !fl__is_target(p, fd)) {
        snprintf(detail, size, "fd %d is closed in the child before its exec; an fd map of %d "
                 "to itself keeps it", fd, fd);
        return;
    }
    /* A file without execute permission is EACCES whatever its #! line. */
    bool runnable;
    int k = shebang_from_cwd(p, path, interp, &runnable);
    if (k < 0)
        return;
    /* The file may run, and its #! interpreter or loader not. */
    char why[64];  /* explain_eacces()'s few words */
    if (err == EACCES && (k == FL__SHEBANG_INTERP || k == FL__SHEBANG_LOADER) &&
        explain_eacces(p, interp, why, sizeof why)) {
        const char *what = k == FL__SHEBANG_LOADER ? "dynamic loader" : "interpreter";
        int room = (int)size - (int)strlen(what) - (int)strlen(why) - 6;
        /* A long name loses its end, not the reason. */
        snprintf(detail, size, "%s \"%.*s\": %s", what, room > 0 ? room : 0, interp, why);
        return;
    }
    /* ELOOP of a script: a symlink loop, or scripts, each the interpreter
     * of the one before, nested deeper than exec follows. */
    if (err == ELOOP && k == FL__SHEBANG_INTERP) {
        int scripts = 1;
        while (scripts <= FL__SCRIPT_DEPTH_MAX) {
            char next[FL__BINPRM_BUF_SIZE];
            struct seen s;
            int r = callers_name(p, interp, &s);
            enum fl__shebang kk = r == 0 ? fl__shebang(s.at, next) : FL__SHEBANG_NONE;
            seen_done(&s);
            if (r < 0)
                return;
            if (kk != FL__SHEBANG_INTERP)
                break;
            scripts++;
            memcpy(interp, next, sizeof next);
        }
        if (scripts > FL__SCRIPT_DEPTH_MAX)
            snprintf(detail, size, "more than %d scripts, each the interpreter of the one "
                     "before: exec follows no deeper", FL__SCRIPT_DEPTH_MAX);
        return;
    }
    /* The missing interpreter may be a script's interpreter's, which exec
     * follows, to its depth, or the loader of a program that is one: so
     * are they here, and one that is there is not called missing. */
    for (int depth = 0; err == ENOENT && (k == FL__SHEBANG_INTERP || k == FL__SHEBANG_LOADER);
         depth++) {
        char next[FL__BINPRM_BUF_SIZE];
        struct seen s;
        int r = callers_name(p, interp, &s);
        bool there = r == 0 && access(s.at, F_OK) == 0;
        enum fl__shebang kk = there && k == FL__SHEBANG_INTERP && depth < FL__SCRIPT_DEPTH_MAX
                                  ? fl__shebang(s.at, next)
                                  : FL__SHEBANG_NONE;
        seen_done(&s);
        if (r < 0)
            return;
        if (!there)
            break;  /* interp is the one missing */
        if (kk != FL__SHEBANG_INTERP && kk != FL__SHEBANG_LOADER)
            return;
        memcpy(interp, next, sizeof next);
        k = kk;
    }
    if (err == ENOENT && (k == FL__SHEBANG_INTERP || k == FL__SHEBANG_LOADER)) {
        size_t len = strlen(interp);
        bool cr = k == FL__SHEBANG_INTERP && interp[len - 1] == '\r';
        const char *what = k == FL__SHEBANG_LOADER ? "dynamic loader \"" : "interpreter \"";
        const char *tail = cr ? "\\r\" not found (the file has CRLF line ends)" : "\" not found";
        /* The cause comes last: a long interpreter loses its middle, so
         * that the cause still fits. */
        size_t fixed = strlen(what) + strlen(tail) + 1;
        size_t room = size > fixed ? size - fixed : 0, head = room > 3 ? (room - 3) / 2 : 0;
        size_t end = room > 3 ? room - 3 - head : 0;
        len -= cr;
        if (room < 8 || len <= room)
            snprintf(detail, size, "%s%.*s%s", what, (int)len, interp, tail);
        else
            snprintf(detail, size, "%s%.*s...%.*s%s", what, (int)head, interp, (int)end,
                     interp + len - end, tail);
    } else if (err == EACCES && k == FL__SHEBANG_EMPTY && runnable) {
        snprintf(detail, size, "#! names no interpreter");
    } else if (err == ENOEXEC) {
        const char *why = k == FL__SHEBANG_TOO_LONG
                              ? "#! line too long for the kernel: "
                                "the interpreter must end within 255 bytes"
                          : k == FL__SHEBANG_NO_NAME ? "#! names no interpreter"
                          : k == FL__SHEBANG_INTERP  ? "its interpreter is not an executable format"
                          : k == FL__SHEBANG_LOADER  ? "an ELF program the kernel will not load"
                                                     : "not an executable format and no #! line";
        snprintf(detail, size, "%s (FL_SHELL_FALLBACK runs it with /bin/sh)", why);
    }
}

/* The file's format was refused and FL_SHELL_FALLBACK's /bin/sh, in the
 * child's root, then failed: the errno is the shell's, not the file's. */
static void explain_shell(const struct fl__plan *p, int err, char *detail, size_t size)
{
    static const char shell[] = "/bin/sh";
    char why[FL_ERROR_DETAIL_MAX / 2] = "";
    struct seen s;
    int r = callers_name(p, shell, &s);
    bool missing = r == 1 || (r == 0 && access(s.at, F_OK) != 0 && errno == ENOENT);
    seen_done(&s);
    if (err == ENOENT && missing)
        snprintf(why, sizeof why, "not found");
    else if (err == ENOENT || err == EACCES)
        explain_exec(p, err, shell, why, sizeof why);  /* its own #! line or loader */
    snprintf(detail, size, "the shell that FL_SHELL_FALLBACK runs it with, \"%s\"%s%s", shell,
             why[0] ? ": " : "", why);
}

static const char unknown_resource[] = "unknown resource";

static const char *rlimit_name(int resource)
{
    static const char *const names[] = {
        [RLIMIT_CPU] = "CPU",         [RLIMIT_FSIZE] = "FSIZE",
        [RLIMIT_DATA] = "DATA",       [RLIMIT_STACK] = "STACK",
        [RLIMIT_CORE] = "CORE",       [RLIMIT_RSS] = "RSS",
        [RLIMIT_NPROC] = "NPROC",     [RLIMIT_NOFILE] = "NOFILE",
        [RLIMIT_MEMLOCK] = "MEMLOCK", [RLIMIT_AS] = "AS",
        [RLIMIT_LOCKS] = "LOCKS",     [RLIMIT_SIGPENDING] = "SIGPENDING",
        [RLIMIT_MSGQUEUE] = "MSGQUEUE", [RLIMIT_NICE] = "NICE",
        [RLIMIT_RTPRIO] = "RTPRIO",   [RLIMIT_RTTIME] = "RTTIME",
    };
    if (resource >= 0 && (size_t)resource < sizeof names / sizeof names[0] && names[resource])
        return names[resource];
    return unknown_resource;
}

static const char *path_of(const struct fl__plan *p, int step, int index)
{
    const struct fl_cmd *c = p->cmd;
    switch (step) {
    case FL_STEP_EXEC:
    case FL_STEP_SPAWN:
        return index >= 0 && (size_t)index < p->ncands ? p->cands[index] : fl__program(c);
    case FL_STEP_CHDIR:
        return c->cwd;
    case FL_STEP_RLIMIT:
        return index >= 0 && (size_t)index < c->nrlimits ? rlimit_name(c->rlimits[index].resource)
                                                          : "";
    case FL_STEP_CGROUP:
        return c->cgroup;
    case FL_STEP_ID_MAP: {
        static const char *const maps[] = { "/proc/self/uid_map", "/proc/self/setgroups",
                                             "/proc/self/gid_map" };
        return index >= 0 && index < 3 ? maps[index] : "";
    }
    case FL_STEP_HOSTNAME:
        return p->box && p->box->hostname ? p->box->hostname : "";
    case FL_STEP_MOUNT:
        return index == 1 && p->box && p->box->proc_target ? p->box->proc_target : "/";
    case FL_STEP_CHROOT:
        return p->box && p->box->chroot ? p->box->chroot : "";
    case FL_STEP_OOM_SCORE_ADJ:
        return "/proc/self/oom_score_adj";
    case FL_STEP_OPEN:
        for (size_t i = 0; i < p->nacts; i++)
            if (p->acts[i].child_fd == index && p->acts[i].kind == FL__ACT_OPEN)
                return p->acts[i].path;
        return "";
    default:
        return "";
    }
}

static bool is_directory(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* exec's E2BIG that the file's own lists do not explain: a #! line
 * makes the kernel add the interpreter, its argument and the script's
 * path; FL_SHELL_FALLBACK ran /bin/sh with the file before the arguments
 * (for a file without one, which exec refused with ENOEXEC). */
static void explain_e2big(const struct fl__plan *p, const char *path, char *detail, size_t size)
{
    char interp[FL__BINPRM_BUF_SIZE];
    if (shebang_from_cwd(p, path, interp, NULL) == FL__SHEBANG_INTERP)
        snprintf(detail, size, "with the interpreter \"%.64s\" and the script's path, which exec "
                 "adds for the #! line, over ARG_MAX", interp);
    else if (p->flags & FL_SHELL_FALLBACK)
        snprintf(detail, size, "/bin/sh with the file before the arguments (FL_SHELL_FALLBACK) "
                 "is over ARG_MAX");
}

/* The kernel's EINVAL for a limit: which value it refused. */
static void explain_rlimit(const struct fl_rlimit *l, char *detail, size_t size)
{
    if (rlimit_name(l->resource) == unknown_resource)
        snprintf(detail, size, "resource %d is not one the kernel knows", l->resource);
    else if (l->soft > l->hard && l->soft == RLIM_INFINITY)
        snprintf(detail, size, "soft limit unlimited over the hard limit %llu",
                 (unsigned long long)l->hard);
    else if (l->soft > l->hard)
        snprintf(detail, size, "soft limit %llu over the hard limit %llu",
                 (unsigned long long)l->soft, (unsigned long long)l->hard);
}

/* For a step whose .index is a number the message would not show: what
 * it counts, so that "bounding: Operation not permitted" says which. */
static void name_the_index(const struct fl__child_err *c, char *detail, size_t size)
{
    switch (c->step) {
    case FL_STEP_BOUNDING:
    case FL_STEP_AMBIENT:
        snprintf(detail, size, "capability %d", c->index);
        break;
    case FL_STEP_UNSHARE:
        snprintf(detail, size, "the %s namespace", fl__ns_name((unsigned)c->index));
        break;
    case FL_STEP_DUP:
    case FL_STEP_SETCTTY:
    case FL_STEP_TCSETPGRP:
        snprintf(detail, size, "child fd %d", c->index);
        break;
    case FL_STEP_SIGNALS:
        snprintf(detail, size, "signal %d", c->index);
        break;
    default:
        break;
    }
}

int fl__fail_child(struct fl__plan *p, struct fl_error *e)
{
    const struct fl__child_err *c = &p->cerr;
    /* The whole path, not e->path, which is cut at FL_ERROR_PATH_MAX: the
     * detail reads that file. */
    const char *path = path_of(p, c->step, c->index);
    fl__fail(e, c->err, (enum fl_step)c->step, c->index, path, "");
    if (c->step == FL_STEP_EXEC && c->err == ENOENT && c->index < 0)
        copy_str(e->detail, sizeof e->detail, "not found in PATH");
    else if (c->step == FL_STEP_EXEC && c->err == E2BIG && c->index >= 0 &&
             !fl__args_too_big(p, path, e->detail, sizeof e->detail))
        explain_e2big(p, path, e->detail, sizeof e->detail);
    else if (c->step == FL_STEP_EXEC && c->index >= 0 && c->index < 64 &&
             (c->shell_failed >> c->index & 1))
        explain_shell(p, c->err, e->detail, sizeof e->detail);
    else if (c->step == FL_STEP_EXEC && (c->index >= 0 || c->err == ENOEXEC))
        explain_exec(p, c->err, path, e->detail, sizeof e->detail);
    else if (c->step == FL_STEP_CLOSE_FDS && c->index == 1) {
        /* The walk of close_other_fds() (child.c) failed. */
        copy_str(e->path, sizeof e->path, "/proc/self/fd");
        copy_str(e->detail, sizeof e->detail,
                 "close_range() is refused here (seccomp, or Linux before 5.9): the open fds are "
                 "found in /proc/self/fd");
    } else if (c->step == FL_STEP_CGROUP && c->err == ENOENT && is_directory(path))
        copy_str(e->detail, sizeof e->detail, "a directory without cgroup.procs: not a cgroup");
    else if (c->step == FL_STEP_RLIMIT && c->err == EINVAL && c->index >= 0 &&
             (size_t)c->index < p->cmd->nrlimits)
        explain_rlimit(&p->cmd->rlimits[c->index], e->detail, sizeof e->detail);
    else if (c->step == FL_STEP_AFFINITY && c->err == EINVAL)
        copy_str(e->detail, sizeof e->detail,
                 "no CPU of the mask is online and in this process's cpuset");
    else if (c->step == FL_STEP_SECCOMP && c->err == EINVAL)
        copy_str(e->detail, sizeof e->detail,
                 "the kernel refused the filter: its checker (an instruction, a jump past the "
                 "end, no return at the end), or a kernel without seccomp filters");
    else if (((c->step == FL_STEP_LANDLOCK && c->err == EPERM) ||
              (c->step == FL_STEP_SECCOMP && c->err == EACCES)) &&
             !(p->box && (p->box->flags & FL_NO_NEW_PRIVS)))
        copy_str(e->detail, sizeof e->detail,
                 "the kernel restricts a process only with no_new_privs set (FL_NO_NEW_PRIVS) "
                 "or CAP_SYS_ADMIN in its user namespace");
    else if (c->index >= 0 && !e->path[0])
        name_the_index(c, e->detail, sizeof e->detail);
    return c->err;
}

/* Steps whose record always has a path: "" there is the path given. */
static bool step_names_a_path(enum fl_step step)
{
    return step == FL_STEP_EXEC || step == FL_STEP_CHDIR || step == FL_STEP_OPEN ||
           step == FL_STEP_CHROOT;
}

/* printf to buf + *n, truncated at size; *n stops at size - 1. */
__attribute__((format(printf, 4, 5)))
static void append(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
    if (*n + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(buf + *n, size - *n, fmt, ap);
    va_end(ap);
    if (r > 0)
        *n = *n + (size_t)r < size ? *n + (size_t)r : size - 1;
}

size_t fl__utf8_len(const unsigned char *c)
{
    size_t n = c[0] >= 0xf0 ? 4 : c[0] >= 0xe0 ? 3 : c[0] >= 0xc2 ? 2 : 0;
    if (n == 0 || c[0] > 0xf4)
        return 0;
    for (size_t k = 1; k < n; k++)
        if ((c[k] & 0xc0) != 0x80)
            return 0;
    if ((c[0] == 0xe0 && c[1] < 0xa0) || (c[0] == 0xed && c[1] > 0x9f) ||
        (c[0] == 0xf0 && c[1] < 0x90) || (c[0] == 0xf4 && c[1] > 0x8f))
        return 0;
    return n;
}

/* s, with control characters as C escapes, so that a message stays on
 * one line whatever a path holds ("a\nb", "\x1b"), and a terminal reads
 * no sequence from it: the C1 controls too, U+0080 to U+009F in UTF-8
 * (CSI, NEL) and the bytes 0x80 to 0x9f outside a UTF-8 character, which
 * a terminal in an 8-bit locale reads as them. Quotes are left: the path
 * is the text between the first quote and the last before ':'. */
static void append_escaped(char *buf, size_t size, size_t *n, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char esc[16];
        const char *piece = esc;
        size_t len, seq = fl__utf8_len(c);
        if (seq == 2 && c[0] == 0xc2 && c[1] <= 0x9f) {
            len = (size_t)snprintf(esc, sizeof esc, "\\x%02x\\x%02x", c[0], c[1]);
        } else if (seq) {
            piece = (const char *)c;
            len = seq;
        } else if (*c == '\n' || *c == '\t' || *c == '\r') {
            len = (size_t)snprintf(esc, sizeof esc, "\\%c",
                                   *c == '\n' ? 'n' : *c == '\t' ? 't' : 'r');
        } else if (*c < 0x20 || (*c >= 0x7f && *c <= 0x9f)) {
            len = (size_t)snprintf(esc, sizeof esc, "\\x%02x", *c);
        } else {
            piece = (const char *)c;
            len = 1;
        }
        /* A message cut short ends before a character or an escape, never
         * inside one: "\x1" would read as another character. */
        if (*n + len >= size) {
            buf[*n] = '\0';
            *n = size - 1;
            return;
        }
        memcpy(buf + *n, piece, len);
        *n += len;
        buf[*n] = '\0';
        c += (seq ? seq : 1) - 1;
    }
}

char *fl_error_format(const struct fl_error *e, char *buf, size_t size)
{
    if (!buf || !size)
        return buf;
    buf[0] = '\0';
    if (!e)
        return buf;
    char msg[128];
#if defined(__GLIBC__)
    const char *text = strerror_r(e->err, msg, sizeof msg);   /* GNU */
#else
    const char *text = strerror_r(e->err, msg, sizeof msg) == 0 ? msg : "Unknown error"; /* XSI (musl) */
#endif
    size_t n = 0;
    buf[0] = '\0';
    if (e->stage > 0)
        append(buf, size, &n, "stage %d: ", e->stage);
    append(buf, size, &n, "%s", fl_step_name(e->step));
    if (e->path[0] || step_names_a_path(e->step)) {
        append(buf, size, &n, " \"");
        append_escaped(buf, size, &n, e->path);
        append(buf, size, &n, "\"");
    }
    append(buf, size, &n, ": %s", text);
    if (e->detail[0]) {
        append(buf, size, &n, " (");
        append_escaped(buf, size, &n, e->detail);
        append(buf, size, &n, ")");
    }
    return buf;
}
