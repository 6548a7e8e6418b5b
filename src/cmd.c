/* cmd.c: describe. Checks a struct fl_cmd before anything is prepared, and
 * builds the child's environment from the base and the edits. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"

/* The kernel's NGROUPS_MAX (Linux 2.6.4 on), which setgroups() takes. musl's
 * sysconf(_SC_NGROUPS_MAX) says 32, its own header's old figure. */
#define KERNEL_NGROUPS_MAX 65536u

extern char **environ;

#define FL__ALL_FLAGS                                                        \
    (FL_KEEP_FDS | FL_KEEP_SIGNALS | FL_SETSID | FL_NEW_PGROUP |             \
     FL_JOIN_PGROUP | FL_SET_UMASK | FL_SET_UID | FL_SET_GID |               \
     FL_SET_GROUPS | FL_ENV_CLEAR | FL_SHELL_FALLBACK | FL_NO_FORK |         \
     FL_PATH_RELATIVE | FL_RETRY_ETXTBSY | FL_NO_PIDFD | FL_SETCTTY |       \
     FL_FOREGROUND | FL_NO_WAIT_EXEC)

static int invalid(struct fl_error *e, const char *detail)
{
    return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", detail);
}

/* An fd of the caller's: open, and not one the library keeps for itself
 * (a number the caller closed, which the library's fd then took). */
bool fl__caller_fd_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0 && !fl__ignored_signals_holds(fd);
}

/* s past the component word and its '/', or NULL. No libc call: this
 * runs on every spawn's path, where the caller's stack may be small and a
 * first call through the PLT would bind it there. */
static const char *past_component(const char *s, const char *word)
{
    while (*word && *s == *word)
        s++, word++;
    return *word || *s != '/' ? NULL : s;
}

/* Does the name lead to /proc's link for one of this process's fds above
 * 2, as a shell's process substitution hands out (/dev/fd/63)? The fd, or
 * -1. Only absolute names; repeated slashes are one, as the kernel reads
 * them, and a name may go on below the fd (a directory's). */
int fl__fd_the_path_names(const char *path)
{
    static const char *const prefixes[][3] = {
        { "dev", "fd", NULL }, { "proc", "self", "fd" }, { "proc", "thread-self", "fd" }
    };
    for (size_t k = 0; path[0] == '/' && k < sizeof prefixes / sizeof prefixes[0]; k++) {
        const char *s = path;
        for (size_t j = 0; s && j < 3 && prefixes[k][j]; j++) {
            while (*s == '/')
                s++;
            s = past_component(s, prefixes[k][j]);
        }
        if (!s)
            continue;
        while (*s == '/')
            s++;
        long long fd = 0;
        const char *digits = s;
        for (; *s >= '0' && *s <= '9' && fd <= INT_MAX; s++)
            fd = fd * 10 + (*s - '0');
        if (s == digits || (*s && *s != '/') || fd > INT_MAX)
            return -1;
        return fd > 2 ? (int)fd : -1;
    }
    return -1;
}

/* The child opens such a name after it has dropped the fds that it does
 * not keep: it keeps this one if it is the caller's. Judged here, before
 * the library opens fds of its own (pipes, a pty) that could take the
 * number; not under a .chroot, whose /dev is another. */
static int check_reopened_fd(const struct fl_cmd *cmd, int i, struct fl_error *e)
{
    const char *path = cmd->stdio[i].path;
    int fd = fl__fd_the_path_names(path);
    if (fd < 0 || (cmd->contain && cmd->contain->chroot) || fl__caller_fd_open(fd))
        return 0;
    char what[FL_ERROR_DETAIL_MAX];
    snprintf(what, sizeof what, "fd %d is not open in the caller", fd);
    return fl__fail(e, ENOENT, FL_STEP_OPEN, i, path, what);
}

/* FL_TO_STDOUT copies the child's fd 1: where nothing sets it, that is
 * the caller's, which must then be open (a shell's 2>&1 with fd 1 closed
 * is EBADF), or the copy would be whatever fd of the library's sat there. */
static int check_to_stdout(const struct fl_cmd *cmd, struct fl_error *e)
{
    if (cmd->stdio[2].kind != FL_TO_STDOUT || cmd->stdio[1].kind != FL_INHERIT ||
        fl__stdio_mapped(cmd, 2) || fl__stdio_mapped(cmd, 1))
        return 0;
    if (fl__caller_fd_open(1))
        return 0;
    return fl__fail(e, EBADF, FL_STEP_PREPARE, 1, "",
                    "stdio[2]: FL_TO_STDOUT, and the caller's fd 1 is not open");
}

static int check_stdio(const struct fl_cmd *cmd, struct fl_error *e)
{
    for (int i = 0; i < 3; i++) {
        const struct fl_stdio *s = &cmd->stdio[i];
        char what[FL_ERROR_DETAIL_MAX];
        if (fl__stdio_mapped(cmd, i))
            continue;  /* overridden by the map: never made, so never read */
        switch (s->kind) {
        case FL_INHERIT:
        case FL_NULL:
        case FL_PIPE:
        case FL_PTY:
            break;
        case FL_FILE:
            if (!s->path) {
                snprintf(what, sizeof what, "stdio[%d]: FL_FILE without a path", i);
                return invalid(e, what);
            }
            if (check_reopened_fd(cmd, i, e))
                return e->err;
            break;
        case FL_FD:
            if (s->fd < 0) {
                snprintf(what, sizeof what, "stdio[%d]: negative fd %d", i, s->fd);
                return invalid(e, what);
            }
            if (!fl__caller_fd_open(s->fd)) {
                snprintf(what, sizeof what, "stdio[%d]: parent fd %d is not open", i, s->fd);
                return fl__fail(e, EBADF, FL_STEP_PREPARE, i, "", what);
            }
            break;
        case FL_TO_STDOUT:
            if (i != 2)
                return invalid(e, "FL_TO_STDOUT is only for fd 2");
            break;
        default:
            snprintf(what, sizeof what, "stdio[%d]: unknown kind %d", i, (int)s->kind);
            return invalid(e, what);
        }
    }
    return 0;
}

/* The child's fd limit: its own RLIMIT_NOFILE if the command sets one
 * (the last entry for it: the others are not set). A command with a soft
 * limit above its hard one that is set has none here: its child fails at
 * the rlimit step with EINVAL, which the check must not hide. */
static rlim_t child_nofile(const struct fl_cmd *cmd)
{
    struct rlimit l = { RLIM_INFINITY, RLIM_INFINITY };
    getrlimit(RLIMIT_NOFILE, &l);
    for (size_t i = 0; i < cmd->nrlimits; i++) {
        if (fl__rlimit_overridden(cmd, i))
            continue;
        if (cmd->rlimits[i].soft > cmd->rlimits[i].hard)
            return RLIM_INFINITY;
        if (cmd->rlimits[i].resource == RLIMIT_NOFILE)
            l.rlim_cur = cmd->rlimits[i].soft;
    }
    return l.rlim_cur;
}

static int check_fd_maps(const struct fl_cmd *cmd, struct fl_error *e)
{
    char what[FL_ERROR_DETAIL_MAX];
    if (cmd->nfds && !cmd->fds)
        return invalid(e, "nfds is set but fds is NULL");
    rlim_t limit = cmd->nfds ? child_nofile(cmd) : 0;
    for (size_t i = 0; i < cmd->nfds; i++) {
        const struct fl_fd_map *m = &cmd->fds[i];
        if (m->child_fd < 0 || m->parent_fd < 0) {
            snprintf(what, sizeof what, "fd map %zu: negative fd (%d <- %d)", i,
                     m->child_fd, m->parent_fd);
            return invalid(e, what);
        }
        if ((rlim_t)m->child_fd >= limit) {
            snprintf(what, sizeof what, "child fd %d is not below RLIMIT_NOFILE (%llu)",
                     m->child_fd, (unsigned long long)limit);
            return fl__fail(e, EBADF, FL_STEP_DUP, m->child_fd, "", what);
        }
        for (size_t j = 0; j < i; j++)
            if (cmd->fds[j].child_fd == m->child_fd) {
                snprintf(what, sizeof what, "fd maps %zu and %zu both set child fd %d",
                         j, i, m->child_fd);
                return invalid(e, what);
            }
        if (!fl__caller_fd_open(m->parent_fd)) {
            snprintf(what, sizeof what, "fd map %zu: parent fd %d is not open", i,
                     m->parent_fd);
            return fl__fail(e, EBADF, FL_STEP_PREPARE, (int)i, "", what);
        }
    }
    return 0;
}

static int check_env_edits(const struct fl_cmd *cmd, struct fl_error *e)
{
    char what[FL_ERROR_DETAIL_MAX];
    for (size_t i = 0; cmd->env_set && cmd->env_set[i]; i++) {
        const char *eq = strchr(cmd->env_set[i], '=');
        if (!eq || eq == cmd->env_set[i]) {
            snprintf(what, sizeof what, "env_set[%zu] is not NAME=VALUE", i);
            return invalid(e, what);
        }
    }
    for (size_t i = 0; cmd->env_unset && cmd->env_unset[i]; i++) {
        const char *n = cmd->env_unset[i];
        if (!*n || strchr(n, '=')) {
            snprintf(what, sizeof what, "env_unset[%zu] is not a variable name", i);
            return invalid(e, what);
        }
    }
    return 0;
}

int fl__cmd_check(const struct fl_cmd *cmd, struct fl_error *e)
{
    if (!cmd)
        return invalid(e, "no command");
    if (!cmd->argv || !cmd->argv[0])
        return invalid(e, "argv is empty");
    /* As execve("") and execvp(""): no file has that name. */
    if (!*fl__program(cmd))
        return fl__fail(e, ENOENT, FL_STEP_EXEC, -1, "", "the program name is empty");
    if (cmd->flags & ~(unsigned)FL__ALL_FLAGS)
        return invalid(e, "unknown flag bits");
    if ((unsigned)cmd->backend > FL_BACKEND_FORK)
        return invalid(e, "unknown backend");
    for (size_t i = 0; i < sizeof cmd->reserved_ / sizeof cmd->reserved_[0]; i++)
        if (cmd->reserved_[i])
            return invalid(e, "reserved fields must be zero");
    if ((cmd->flags & FL_JOIN_PGROUP) && (cmd->flags & (FL_SETSID | FL_NEW_PGROUP)))
        return invalid(e, "FL_JOIN_PGROUP excludes FL_SETSID and FL_NEW_PGROUP");
    if ((cmd->flags & FL_JOIN_PGROUP) && cmd->pgid <= 0)
        return invalid(e, "FL_JOIN_PGROUP needs a pgid > 0");
    if (cmd->nrlimits && !cmd->rlimits)
        return invalid(e, "nrlimits is set but rlimits is NULL");
    /* setresuid() and setresgid() take -1 for "leave it as it is": the
     * child would keep the ids the caller asked to change. setuid(-1) is
     * EINVAL. */
    if ((cmd->flags & FL_SET_UID) && cmd->uid == (uid_t)-1)
        return invalid(e, "uid (uid_t)-1 is not a user id");
    if ((cmd->flags & FL_SET_GID) && cmd->gid == (gid_t)-1)
        return invalid(e, "gid (gid_t)-1 is not a group id");
    if ((cmd->flags & FL_SET_GROUPS) && cmd->ngroups && !cmd->groups)
        return invalid(e, "ngroups is set but groups is NULL");
    if ((cmd->flags & FL_SET_GROUPS) && cmd->ngroups > KERNEL_NGROUPS_MAX)
        return invalid(e, "more groups than the kernel takes (NGROUPS_MAX, 65536)");
    if (cmd->flags & FL_SET_GROUPS)
        for (size_t i = 0; i < cmd->ngroups; i++)
            if (cmd->groups[i] == (gid_t)-1)
                return fl__fail(e, EINVAL, FL_STEP_PREPARE, (int)i, "",
                                "a group of (gid_t)-1 is not a group id");
    if (cmd->pdeathsig < 0 || cmd->pdeathsig >= NSIG)
        return invalid(e, "pdeathsig is not a signal number");
    if (cmd->sigignore && (sigismember(cmd->sigignore, SIGKILL) == 1 ||
                           sigismember(cmd->sigignore, SIGSTOP) == 1))
        return invalid(e, "sigignore names SIGKILL or SIGSTOP, which cannot be ignored");
    if (cmd->cgroup && !*cmd->cgroup)
        return invalid(e, "cgroup is an empty path");
    int r = check_stdio(cmd, e);
    if (!r)
        r = check_fd_maps(cmd, e);
    if (!r)
        r = check_to_stdout(cmd, e);
    if (!r)
        r = check_env_edits(cmd, e);
    if (!r)
        r = fl__tty_check(cmd, e);
    if (!r)
        r = fl__contain_check(cmd, e);
    return r;
}

static size_t name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq ? (size_t)(eq - entry) : strlen(entry);
}

static bool same_name(const char *entry, const char *name, size_t len)
{
    return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

const char *fl__env_get(char *const *envp, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (same_name(envp[i], name, len))
            return envp[i] + len + 1;
    return NULL;
}

int fl__env_build(const struct fl_cmd *cmd, struct fl__plan *p, struct fl_error *e)
{
    static char *const empty[] = { NULL };
    char *const *base = (cmd->flags & FL_ENV_CLEAR) ? empty
                        : cmd->env                 ? cmd->env
                                                   : environ;
    if (!base)
        base = empty;
    size_t nset = 0, nbase = 0;
    while (cmd->env_set && cmd->env_set[nset])
        nset++;
    bool edits = nset || (cmd->env_unset && cmd->env_unset[0]);

    /* The caller's own array needs no copy; environ does, because another
     * thread's setenv() may move it while the child reads it, and a
     * launch's caller may itself change it before its child has exec'd.
     * A spawn in a process that never had a second thread reads it as it
     * is: its only thread sleeps until the exec, and runs nothing of the
     * application's meanwhile, except under fork(), whose atfork handlers
     * may call setenv(). */
    bool environ_still = !(cmd->flags & FL_NO_WAIT_EXEC) && fl__known_single_threaded() &&
                         fl__backend_of(cmd) != FL_BACKEND_FORK;
    if (!edits && (base != environ || environ_still)) {
        p->envp = (char **)base;
        return 0;
    }
    while (base[nbase])
        nbase++;
    char **env = malloc((nbase + nset + 1) * sizeof *env);
    if (!env)
        return fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, "", "environment");
    memcpy(env, base, nbase * sizeof *env);
    size_t n = nbase;
    /* A set replaces the first entry of its name and drops the others: a
     * base may hold a name twice, and getenv() and shells then disagree on
     * which one counts. */
    for (size_t i = 0; i < nset; i++) {
        const char *s = cmd->env_set[i];
        size_t len = name_len(s), k = 0;
        bool placed = false;
        for (size_t j = 0; j < n; j++) {
            if (!same_name(env[j], s, len))
                env[k++] = env[j];
            else if (!placed) {
                env[k++] = (char *)s;
                placed = true;
            }
        }
        n = k;
        if (!placed)
            env[n++] = (char *)s;
    }
    for (size_t i = 0; cmd->env_unset && cmd->env_unset[i]; i++) {
        const char *name = cmd->env_unset[i];
        size_t len = strlen(name), k = 0;
        for (size_t j = 0; j < n; j++)
            if (!same_name(env[j], name, len))
                env[k++] = env[j];
        n = k;
    }
    env[n] = NULL;
    p->envp = env;
    p->envp_owned = true;
    return 0;
}
