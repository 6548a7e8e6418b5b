/* plan.c: prepare. Everything that allocates, or may fail slowly, happens
 * here in the parent, so that the child only makes system calls: the PATH
 * candidates, the argument size checks, the fd plan and the pipes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"

const char *fl__program(const struct fl_cmd *cmd)
{
    return cmd->path ? cmd->path : cmd->argv[0];
}

static bool path_entry_usable(const char *dir, size_t len, unsigned flags)
{
    return (flags & FL_PATH_RELATIVE) || (len > 0 && dir[0] == '/');
}

/* A name without '/' becomes one candidate per usable PATH entry of the
 * child's environment; the child tries them in order, as execvp() does. */
static int build_candidates(struct fl__plan *p, struct fl_error *e)
{
    const char *prog = fl__program(p->cmd);
    if (strchr(prog, '/')) {
        p->cand_inline[0] = prog;
        p->cands = p->cand_inline;
        p->cand_err = p->cand_err_inline;
        p->ncands = 1;
        return 0;
    }
    size_t plen = strlen(prog);
    if (plen > NAME_MAX) {
        /* No directory holds such a name: every exec would say
         * ENAMETOOLONG, and execvp() says it at once. Skipping each
         * candidate as too long would say ENOENT, "no usable entry". */
        char what[FL_ERROR_DETAIL_MAX];
        snprintf(what, sizeof what,
                 "the program's name is %zu bytes, longer than NAME_MAX (%d bytes)", plen, NAME_MAX);
        return fl__fail(e, ENAMETOOLONG, FL_STEP_EXEC, -1, prog, what);
    }
    char fallback[256];
    const char *path = fl__env_get(p->envp, "PATH");
    if (!path) {
        size_t n = confstr(_CS_PATH, fallback, sizeof fallback);
        path = (n > 0 && n <= sizeof fallback) ? fallback : "/bin:/usr/bin";
    }
    size_t nseg = 1, bytes = 0;
    for (const char *s = path; *s; s++)
        nseg += *s == ':';
    bytes = nseg * sizeof(char *) + strlen(path) + nseg * (plen + 4) + nseg;
    p->cand_block = malloc(bytes);
    if (!p->cand_block)
        return fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, prog, "PATH candidates");
    const char **list = (const char **)p->cand_block;
    char *out = p->cand_block + nseg * sizeof(char *);
    size_t n = 0;
    for (const char *seg = path;; ) {
        const char *end = strchrnul(seg, ':');
        size_t len = (size_t)(end - seg);
        /* A candidate longer than PATH_MAX cannot be executed: dash and
         * Python skip such an entry, and so does this search. (glibc's
         * execvp() stops at one with ENAMETOOLONG, but for an entry that
         * alone is PATH_MAX bytes or more, which it skips.) */
        if (path_entry_usable(seg, len, p->flags) && (len ? len : 1) + plen + 2 <= PATH_MAX) {
            list[n++] = out;
            /* An empty entry is the cwd: "./name", a path that names that
             * file wherever it is used again (fl_resolve()'s answer as a
             * .path, sh's argument under FL_SHELL_FALLBACK, where a bare
             * "-i" would be an option). execvp() gives exec the bare name,
             * which a script then sees as $0. */
            if (len == 0)
                out += sprintf(out, "./%s", prog) + 1;
            else
                out += sprintf(out, "%.*s/%s", (int)len, seg, prog) + 1;
        }
        if (!*end)
            break;
        seg = end + 1;
    }
    if (n == 0)
        return fl__fail(e, ENOENT, FL_STEP_EXEC, -1, prog,
                        "PATH has no usable entry to search");
    p->cands = list;
    p->cand_err = (unsigned char *)p->cand_block + bytes - nseg;
    p->ncands = n;
    p->searched = true;
    return 0;
}

/* The kernel refuses one string over MAX_ARG_STRLEN (32 pages), and all
 * of them with their pointers and the file name exec is given over a
 * quarter of the stack limit (at least the kernel's ARG_MAX, 128 KiB
 * whatever the page size; at most 6 MiB). The plan measures them, and a
 * failed exec's E2BIG then says which (fl__fail_child()). */
#define KERNEL_ARG_MAX ((size_t)128 * 1024)

static size_t max_arg_strlen(void)
{
    return 32 * (size_t)sysconf(_SC_PAGESIZE);
}

static void measure_sizes(struct fl__plan *p);

/* Would exec of cand refuse the plan's lists? Then says so in detail. */
bool fl__args_too_big(struct fl__plan *p, const char *cand, char *detail, size_t size)
{
    measure_sizes(p);
    if (p->long_list >= 0) {
        if (p->long_list == 0)
            snprintf(detail, size,
                     "argument %zu is %zu bytes, more than the %zu exec takes (MAX_ARG_STRLEN "
                     "counts the NUL)",
                     p->long_index, p->long_len, max_arg_strlen() - 1);
        else   /* by name: its index in the merged environment means nothing to the caller */
            snprintf(detail, size,
                     "environment variable %s is %zu bytes, more than the %zu exec takes "
                     "(MAX_ARG_STRLEN counts the NUL)",
                     p->long_name, p->long_len, max_arg_strlen() - 1);
        return true;
    }
    size_t total = p->arg_bytes + strlen(cand) + 1;
    if (total <= p->arg_limit)
        return false;
    snprintf(detail, size,
             "arguments, environment and the program's path take %zu bytes, "
             "over the %zu-byte limit (ARG_MAX)", total, p->arg_limit);
    return true;
}

static size_t arg_limit(const struct fl__plan *p)
{
    struct rlimit st;
    size_t limit = 6u << 20;
    if (p->e2big_stack_known) {   /* the child's own, at its exec */
        if (p->e2big_stack / 4 < limit)
            limit = (size_t)(p->e2big_stack / 4);
        return limit < KERNEL_ARG_MAX ? KERNEL_ARG_MAX : limit;
    }
    if (getrlimit(RLIMIT_STACK, &st) == 0 && st.rlim_cur / 4 < limit)
        limit = st.rlim_cur / 4;
    for (size_t i = 0; i < p->cmd->nrlimits; i++)
        if (p->cmd->rlimits[i].resource == RLIMIT_STACK)
            limit = p->cmd->rlimits[i].soft / 4 < (6u << 20)
                        ? p->cmd->rlimits[i].soft / 4 : 6u << 20;
    return limit < KERNEL_ARG_MAX ? KERNEL_ARG_MAX : limit;
}

/* Measures only: lists too big are exec's to refuse, as E2BIG for the
 * file it finds. The kernel opens that file before it counts (but 5.9
 * to 6.7), so a missing or forbidden program is ENOENT or EACCES whatever
 * its arguments, as the child will see it (its user, root, cwd), which the
 * parent cannot tell here. So the sizes are taken only when an E2BIG is
 * to be explained, or a candidate judged in the parent: adding up every
 * environment string was a third of the parent's instructions in a
 * default spawn. */
static void measure_sizes(struct fl__plan *p)
{
    if (p->sizes_measured)
        return;
    p->sizes_measured = true;
    size_t max_str = max_arg_strlen(), total = 0, count = 0;
    char *const *lists[2] = { p->argv, p->envp };
    p->long_list = -1;
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; lists[l] && lists[l][i]; i++, count++) {
            const char *str = lists[l][i];
            size_t len = strlen(str) + 1;
            if (len > max_str && p->long_list < 0) {
                p->long_list = l;
                p->long_index = i;
                p->long_len = len - 1;
                size_t name = strcspn(str, "=");
                if (name > sizeof p->long_name - 1)
                    name = sizeof p->long_name - 1;
                memcpy(p->long_name, str, name);
                p->long_name[name] = '\0';
            }
            total += len;
        }
    p->arg_bytes = total + count * sizeof(char *);
    size_t longest = 0;
    for (size_t i = 0; i < p->ncands; i++)
        if (strlen(p->cands[i]) > longest)
            longest = strlen(p->cands[i]);
    p->arg_limit = p->arg_bytes + longest + 1 <= KERNEL_ARG_MAX ? KERNEL_ARG_MAX : arg_limit(p);
}

/* Also before the command is checked (fl_run()'s policy): fds may be NULL
 * whatever nfds says. */
static const struct fl_fd_map *map_for(const struct fl_cmd *cmd, int child_fd)
{
    for (size_t i = 0; cmd->fds && i < cmd->nfds; i++)
        if (cmd->fds[i].child_fd == child_fd)
            return &cmd->fds[i];
    return NULL;
}

bool fl__stdio_mapped(const struct fl_cmd *cmd, int fd)
{
    return map_for(cmd, fd) != NULL;
}

/* The child opens /dev/null itself, after its chroot: a new root has
 * none as often as not, so there the parent opens the caller's and the
 * child's end is a copy of it, as for a pipe. */
static bool null_in_parent(const struct fl__plan *p, int i)
{
    return p->cmd->stdio[i].kind == FL_NULL && p->cmd->contain && p->cmd->contain->chroot;
}

int fl__plan_pipes(struct fl__plan *p, struct fl_error *e)
{
    for (int i = 0; i < 3; i++) {
        if (map_for(p->cmd, i))
            continue;
        if (null_in_parent(p, i)) {
            p->pipe_child[i] = open("/dev/null", (i == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
            if (p->pipe_child[i] < 0)
                return fl__fail(e, errno, FL_STEP_OPEN, i, "/dev/null", "");
            continue;
        }
        if (p->cmd->stdio[i].kind != FL_PIPE)
            continue;
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) < 0)
            return fl__fail(e, errno, FL_STEP_PREPARE, i, "",
                            i == 0 ? "the pipe for stdin" : i == 1 ? "the pipe for stdout"
                                                                 : "the pipe for stderr");
        p->pipe_child[i] = i == 0 ? fds[0] : fds[1];
        p->pipe_parent[i] = i == 0 ? fds[1] : fds[0];
    }
    return 0;
}

static struct fl__act *add_act(struct fl__plan *p, enum fl__act_kind kind, int child_fd)
{
    struct fl__act *a = &p->acts[p->nacts++];
    *a = (struct fl__act){ .kind = kind, .child_fd = child_fd, .src_fd = -1,
                           .staged_fd = -1 };
    return a;
}

static void add_stdio_act(struct fl__plan *p, int i)
{
    const struct fl_stdio *s = &p->cmd->stdio[i];
    const struct fl_fd_map *m = map_for(p->cmd, i);
    struct fl__act *a;
    if (m) {
        add_act(p, FL__ACT_DUP, i)->src_fd = m->parent_fd;
        return;
    }
    switch (s->kind) {
    case FL_NULL:
        if (p->pipe_child[i] >= 0) {
            add_act(p, FL__ACT_DUP, i)->src_fd = p->pipe_child[i];
            break;
        }
        a = add_act(p, FL__ACT_OPEN, i);
        a->path = "/dev/null";
        a->oflags = i == 0 ? O_RDONLY : O_WRONLY;
        break;
    case FL_FILE:
        a = add_act(p, FL__ACT_OPEN, i);
        a->path = s->path;
        /* fl__cmd_check() saw that fd open in the caller, before the
         * library opened any fd of its own that could take the number;
         * under a .chroot, which it leaves to the child, it is kept if
         * open now, as the fork backend's child would have it. */
        a->src_fd = fl__fd_the_path_names(s->path);
        if (a->src_fd >= 0 && p->cmd->contain && p->cmd->contain->chroot &&
            !fl__caller_fd_open(a->src_fd))
            a->src_fd = -1;
        a->oflags = s->flags ? s->flags & ~O_CLOEXEC
                    : i == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC;
        a->mode = s->mode ? s->mode : 0666;
        break;
    case FL_PIPE:
        add_act(p, FL__ACT_DUP, i)->src_fd = p->pipe_child[i];
        break;
    case FL_FD:
        add_act(p, FL__ACT_DUP, i)->src_fd = s->fd;
        break;
    case FL_PTY:
        add_act(p, FL__ACT_DUP, i)->src_fd = p->pty_slave;
        break;
    case FL_TO_STDOUT:
        /* The child's own fd 1, as set a moment before: never staged. */
        a = add_act(p, FL__ACT_DUP, i);
        a->src_fd = 1;
        a->staged_fd = -2;
        break;
    case FL_INHERIT:
        break;
    }
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* A DUP whose source is another action's target would read an fd that was
 * already replaced (cycles 3<-4, 4<-3; a pipe end landing on fd 1 because
 * the parent had 0-2 closed). Then every source is first copied out of
 * every target's way (above all fds in use, where the fd limit leaves
 * room), and the actions read the copies. */
static void plan_staging(struct fl__plan *p)
{
    /* The terminal fds of FL_SETCTTY and FL_FOREGROUND are the child's,
     * maybe inherited without an action: kept below stage_min too, so
     * that nothing closed early (own_fd_table()) takes them first. */
    int max = 2;
    if (p->ctty_fd > max)
        max = p->ctty_fd;
    if (p->fg_fd > max)
        max = p->fg_fd;
    for (size_t i = 0; i < p->nacts; i++) {
        const struct fl__act *a = &p->acts[i];
        if (a->child_fd > max)
            max = a->child_fd;
        if (a->src_fd > max)
            max = a->src_fd;
        if (a->kind != FL__ACT_DUP || a->staged_fd == -2 || a->src_fd == a->child_fd)
            continue;
        for (size_t j = 0; j < p->nacts; j++)
            if (j != i && p->acts[j].child_fd == a->src_fd)
                p->stage = true;
    }
    p->stage_min = max + 1;
}

static int build_fd_plan(struct fl__plan *p, struct fl_error *e)
{
    const struct fl_cmd *cmd = p->cmd;
    size_t need = 3 + cmd->nfds;
    if (need > FL__INLINE_ACTS) {
        p->acts = malloc(need * sizeof *p->acts);
        p->keep = malloc((need + 1) * sizeof *p->keep);
        if (!p->acts || !p->keep)
            return fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, "", "fd plan");
    }
    for (int i = 0; i < 3; i++)
        add_stdio_act(p, i);
    for (size_t i = 0; i < cmd->nfds; i++)
        if (cmd->fds[i].child_fd > 2)
            add_act(p, FL__ACT_DUP, cmd->fds[i].child_fd)->src_fd = cmd->fds[i].parent_fd;
    plan_staging(p);
    for (size_t i = 0; i < p->nacts; i++)
        if (p->acts[i].child_fd > 2)
            p->keep[p->nkeep++] = p->acts[i].child_fd;
    if (p->nkeep > 1)
        qsort(p->keep, p->nkeep, sizeof *p->keep, cmp_int);
    return 0;
}

int fl__plan_hold(struct fl__plan *p, struct fl_error *e)
{
    size_t cap = p->nacts + 4;
    p->hold = p->hold_inline;
    if (cap > sizeof p->hold_inline / sizeof p->hold_inline[0] &&
        !(p->hold = malloc(cap * sizeof *p->hold)))
        return fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, "", "fd plan");
    size_t n = 0;
    for (size_t i = 0; i < p->nacts; i++)
        if (p->acts[i].src_fd > 2)  /* a DUP's source, the fd an OPEN's path names */
            p->hold[n++] = p->acts[i].src_fd;
    /* The terminal's fds are the child's: held only when inherited as
     * they are, not when an action puts another file there. */
    int others[3] = { p->box ? p->box->landlock_fd : -1, p->ctty_fd, p->fg_fd };
    for (int i = 0; i < 3; i++) {
        bool made = false;
        for (size_t j = 0; i > 0 && j < p->nacts; j++)
            made |= p->acts[j].child_fd == others[i];
        if (others[i] > 2 && !made)
            p->hold[n++] = others[i];
    }
    if (p->err_fd > 2)
        p->hold[n++] = p->err_fd;
    if (n > 1)
        qsort(p->hold, n, sizeof *p->hold, cmp_int);
    p->nhold = 0;
    for (size_t i = 0; i < n; i++)
        if (!p->nhold || p->hold[p->nhold - 1] != p->hold[i])
            p->hold[p->nhold++] = p->hold[i];
    return 0;
}

int fl__plan_max_fd(const struct fl__plan *p)
{
    return p->stage_min - 1;
}

static int build_shell_argv(struct fl__plan *p, struct fl_error *e)
{
    size_t argc = 0;
    while (p->argv[argc])
        argc++;
    p->sh_argv = malloc((argc + 2) * sizeof *p->sh_argv);
    if (!p->sh_argv)
        return fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, "", "shell argv");
    p->sh_argv[0] = "/bin/sh";
    p->sh_argv[1] = NULL;
    memcpy(p->sh_argv + 2, p->argv + 1, argc * sizeof *p->sh_argv);
    return 0;
}

/* What to execute, and with which arguments and environment. */
static int plan_program(struct fl__plan *p, const struct fl_cmd *cmd, struct fl_error *e)
{
    int r = fl__cmd_check(cmd, e);
    if (r)
        return r;
    p->cmd = cmd;
    p->flags = cmd->flags;
    p->argv = cmd->argv;
    /* A program named through a caller's fd (/dev/fd/N): seen now, before
     * the library opens fds of its own that may take N; not under a
     * .chroot, whose /dev is another's. */
    int fd = fl__fd_the_path_names(fl__program(cmd));
    p->program_fd = fd >= 0 && !(cmd->contain && cmd->contain->chroot) && fl__caller_fd_open(fd)
                        ? fd
                        : -1;
    r = fl__env_build(cmd, p, e);
    if (!r)
        r = build_candidates(p, e);
    /* Measured now where the strings may change before an E2BIG is
     * explained: a fork()'s atfork handlers run meanwhile, and musl's
     * setenv() frees the string it replaces (what the explanation needs of
     * them is kept in the plan). A launch's plan reads only its own copy
     * of them (launch.c), kept until the failure is explained. */
    if (!r && fl__backend_of(cmd) == FL_BACKEND_FORK)
        measure_sizes(p);
    return r;
}

static void plan_empty(struct fl__plan *p)
{
    memset(p, 0, sizeof *p);
    p->acts = p->act_inline;
    p->keep = p->keep_inline;
    p->cgroup_fd = p->err_fd = p->parent_dumpable = p->stat_fd = p->long_list = p->walk_dir = -1;
    p->program_fd = -1;
    p->pty_master = p->pty_slave = p->ctty_fd = p->fg_fd = -1;
    for (int i = 0; i < 3; i++)
        p->pipe_parent[i] = p->pipe_child[i] = -1;
}

/* Can exec run name (in dir: the child's cwd), as far as its #! lines
 * and its ELF loader go? 0 (also for a file with neither), or exec's own
 * error: the interpreter's or the loader's lookup (ENOENT, ENOTDIR, ELOOP,
 * EACCES, ENAMETOOLONG), EACCES for one that is not a regular file the
 * caller may execute, ENOEXEC for a #! line the kernel will not read,
 * ELOOP for scripts nested deeper than the kernel follows. An interpreter
 * that is a script is followed, as exec follows it, and a relative one is
 * the child's cwd's. A file the caller may execute but not read counts as
 * runnable: its #! line cannot be seen. */
static int interpreter_status(int dir, const char *name)
{
    char interp[2][FL__BINPRM_BUF_SIZE];
    const char *file = name;
    int r = 0;
    for (int depth = 0; !r; depth++) {
        char *next = interp[depth % 2];
        enum fl__shebang k = fl__shebang_at(dir, file, next);
        if (k == FL__SHEBANG_NONE)
            break;
        if (k != FL__SHEBANG_INTERP && k != FL__SHEBANG_LOADER) {
            r = k == FL__SHEBANG_EMPTY ? EACCES : ENOEXEC;  /* exec opens "": the cwd */
            break;
        }
        file = next;
        struct stat st;
        r = fstatat(dir, file, &st, 0) < 0                                         ? errno
            : !S_ISREG(st.st_mode) || faccessat(dir, file, X_OK, AT_EACCESS) < 0 ? EACCES
            : k == FL__SHEBANG_LOADER                                               ? 0
            : depth == FL__SCRIPT_DEPTH_MAX                                         ? ELOOP
                                                                                   : 0;
        if (k == FL__SHEBANG_LOADER)
            break;  /* the loader is not run through exec's handlers */
    }
    return r;
}

/* The name of candidate cand as the caller sees it: relative ones are
 * the child's cwd's. snprintf()'s count. */
static int caller_name(const struct fl__plan *p, const char *cand, char *buf, size_t size)
{
    const char *cwd = p->cmd->cwd;
    return cand[0] == '/' || !cwd ? snprintf(buf, size, "%s", cand)
                                  : snprintf(buf, size, "%s/%s", cwd, cand);
}

/* Whether this kernel's exec counts the lists before it opens the file:
 * Linux 5.9 to 6.7 did (bprm_execve() opened it, after the strings were
 * copied), so an E2BIG came before a missing file's ENOENT. */
static bool exec_counts_first(void)
{
    static int answer;  /* 0: not asked yet, 1: yes, 2: no */
    int a = __atomic_load_n(&answer, __ATOMIC_RELAXED);
    if (!a) {
        struct utsname u;
        unsigned major = 0, minor = 0;
        a = uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
                    ((major == 5 && minor >= 9) || (major == 6 && minor < 8))
                ? 1
                : 2;
        __atomic_store_n(&answer, a, __ATOMIC_RELAXED);
    }
    return a == 1;
}

/* fl__candidate_status() of name in dir. */
static int status_at(struct fl__plan *p, int dir, const char *name, const char *cand,
                     bool *there)
{
    struct stat st;
    char detail[FL_ERROR_DETAIL_MAX];
    *there = fstatat(dir, name, &st, 0) == 0;
    int stat_err = errno;
    if (exec_counts_first() && fl__args_too_big(p, cand, detail, sizeof detail))
        return E2BIG;
    if (!*there) {
        int err = stat_err;
        /* A search's exec gets EACCES from a directory we may not search,
         * where nothing is found (the child's as_search_result()). */
        return p->searched && (err == EACCES || err == ENAMETOOLONG) ? ENOENT : err;
    }
    if (!S_ISREG(st.st_mode) || faccessat(dir, name, X_OK, AT_EACCESS) < 0)
        return EACCES;
    /* The kernel counts the lists once it has the file (but 5.9 to 6.7),
     * before a script's interpreter is looked at. */
    if (fl__args_too_big(p, cand, detail, sizeof detail))
        return E2BIG;
    /* exec would say ENOENT, ENOTDIR or EACCES for a script whose
     * interpreter it cannot run, or a program whose loader it cannot,
     * and a search goes on past it (as the child's does); ELOOP, or
     * ENOEXEC for a #! line the kernel will not read, and a search stops
     * there, where FL_SHELL_FALLBACK runs the file with /bin/sh. */
    int r = interpreter_status(dir, name);
    if (p->searched && r == ENAMETOOLONG)
        return ENOENT;
    return r == ENOEXEC && (p->flags & FL_SHELL_FALLBACK) ? 0 : r;
}

/* A candidate counts if it is a regular file the caller may execute, and
 * a script's interpreter is one too; a
 * relative one is looked up from the child's working directory. In a PATH
 * search a missing file, an unsearchable directory and a name too long
 * all mean "not here" (ENOENT); a program named with '/' keeps stat's own
 * error, as exec would report it. path gets the caller's name for it,
 * cut short where it does not fit. */
int fl__candidate_status(struct fl__plan *p, const char *cand, char *path, size_t size,
                         bool *there)
{
    *there = false;
    int n = caller_name(p, cand, path, size);
    /* The child looks a relative candidate up after its chdir, and a
     * relative #! interpreter or ELF loader of any candidate: here from an
     * fd of that directory, so that the .cwd and the name together may be
     * longer than PATH_MAX, as they may for the child. A .cwd that cannot
     * be opened fails the child's chdir first. */
    int dir = p->cmd->cwd ? open(p->cmd->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dir < 0 && (n < 0 || (size_t)n >= size))
        return p->searched ? ENOENT : ENAMETOOLONG;
    int r = dir >= 0 ? status_at(p, dir, cand, cand, there)
                     : status_at(p, AT_FDCWD, path, cand, there);
    if (dir >= 0)
        close(dir);
    return r;
}

int fl__cwd_error(const char *cwd)
{
    struct stat st;
    if (stat(cwd, &st) < 0)
        return errno;
    if (!S_ISDIR(st.st_mode))
        return ENOTDIR;
    return faccessat(AT_FDCWD, cwd, X_OK, AT_EACCESS) < 0 ? errno : 0;
}

int fl_resolve(const struct fl_cmd *cmd, char *buf, size_t size, struct fl_error *error)
{
    struct fl_error scratch = { 0 };
    struct fl_error *e = error ? error : &scratch;
    fl__fail(e, 0, FL_STEP_NONE, -1, "", "");
    if (!buf || !size)
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", "no buffer");
    struct fl__plan p;
    plan_empty(&p);
    p.in_callers_root = true;
    int r = plan_program(&p, cmd, e);
    /* The child's chdir comes before its search (under a .chroot, the
     * .cwd is the new root's, which this does not read). */
    int c = !r && cmd->cwd && !(cmd->contain && cmd->contain->chroot) ? fl__cwd_error(cmd->cwd) : 0;
    if (c)
        r = fl__fail(e, c, FL_STEP_CHDIR, -1, cmd->cwd, "");
    /* On the heap: the caller's thread may have a small stack. */
    char *path = r ? NULL : malloc(PATH_MAX);
    if (!r && !path)
        r = fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, fl__program(cmd), "");
    if (!r && path) {
        /* The clone child's search, and its report: the first file that
         * runs or fails otherwise than "not here" ends it. */
        int denied = -1, at = -1, s = ENOENT, present = -1, present_err = ENOENT;
        for (size_t i = 0; i < p.ncands && at < 0; i++) {
            bool there;
            s = fl__candidate_status(&p, p.cands[i], path, PATH_MAX, &there);
            if (s == EACCES) {
                if (denied < 0)
                    denied = (int)i;
            } else if (!fl__not_here(s)) {
                at = (int)i;
            } else if (present < 0 && (there || !p.searched)) {
                present = (int)i;
                present_err = s;
            }
        }
        if (at >= 0 && s == 0) {
            int n = caller_name(&p, p.cands[at], buf, size);
            if (n < 0 || (size_t)n >= size)
                r = fl__fail(e, ERANGE, FL_STEP_EXEC, -1, fl__program(cmd), "buffer too small");
        } else {
            /* The record fl_spawn() fills from the child's report. */
            p.cerr = at >= 0 ? (struct fl__child_err){ .err = s, .step = FL_STEP_EXEC, .index = at }
                             : fl__search_failed(denied, present, present_err);
            r = fl__fail_child(&p, e);
        }
    }
    free(path);
    fl__plan_free(&p);
    return r;
}

int fl__plan_init(struct fl__plan *p, const struct fl_cmd *cmd, struct fl_error *e)
{
    plan_empty(p);
    int r = plan_program(p, cmd, e);
    if (!r)
        p->own_root = cmd->contain && cmd->contain->chroot;
    if (!r && (p->flags & FL_SHELL_FALLBACK))
        r = build_shell_argv(p, e);
    if (!r && cmd->cgroup) {
        char *s;
        if (asprintf(&s, "%s/cgroup.procs", cmd->cgroup) < 0)
            r = fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, cmd->cgroup, "");
        else
            p->cgroup_procs = s;
    }
    if (!r)
        r = fl__plan_tty(p, e);
    if (!r)
        r = fl__plan_pipes(p, e);
    if (!r)
        r = build_fd_plan(p, e);
    if (!r)
        r = fl__plan_box(p, e);
    if (!r)
        fl__tty_note_foreground(p);
    if (!r && cmd->sigdefault)
        p->sigdefault_bits = fl__sigset_bits(cmd->sigdefault);
    if (!r && cmd->sigignore)
        p->sigignore_bits = fl__sigset_bits(cmd->sigignore);
    if (!r && cmd->pdeathsig) {
        p->parent_pid = getpid();
        p->parent_tid = (pid_t)syscall(SYS_gettid);
    }
    return r;
}

void fl__plan_close_child_ends(struct fl__plan *p)
{
    if (p->pty_slave >= 0)
        close(p->pty_slave);
    p->pty_slave = -1;
    for (int i = 0; i < 3; i++)
        if (p->pipe_child[i] >= 0) {
            close(p->pipe_child[i]);
            p->pipe_child[i] = -1;
        }
}

void fl__plan_close_parent_ends(struct fl__plan *p)
{
    if (p->pty_master >= 0)
        close(p->pty_master);
    p->pty_master = -1;
    for (int i = 0; i < 3; i++)
        if (p->pipe_parent[i] >= 0) {
            close(p->pipe_parent[i]);
            p->pipe_parent[i] = -1;
        }
}

void fl__plan_free(struct fl__plan *p)
{
    fl__plan_close_child_ends(p);
    fl__plan_close_parent_ends(p);
    if (p->envp_owned)
        free(p->envp);
    free(p->cand_block);
    free(p->launch_cwd);
    free(p->sh_argv);
    free((char *)p->cgroup_procs);
    if (p->acts != p->act_inline)
        free(p->acts);
    if (p->keep != p->keep_inline)
        free(p->keep);
    if (p->hold != p->hold_inline)
        free(p->hold);
    if (p->cgroup_fd >= 0)
        close(p->cgroup_fd);
    fl__box_free(p->box);
    p->box = NULL;
}
