/* run.c: `forkless run [OPTIONS] [--] [NAME=VALUE]... PROGRAM [ARG]...`: spawns the
 * command that options.c built, waits for it (supervise.c), and turns the
 * outcome into the exit codes of design decision D8 (see cli.h), or
 * into dying by the signal that killed the child. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "forkless.h"
#include "killtree.h"
#include "options.h"
#include "report.h"
#include "signals.h"
#include "supervise.h"
#include "user.h"

/* Follows name from the directory from, inside the directory top (its
 * stat top_st), as a lookup after chroot(top) would: ".." stops at top,
 * and a symlink, an absolute one too, is followed inside top, not in the
 * caller's tree, where it may name a file the root lacks. That is
 * openat2()'s RESOLVE_IN_ROOT, done here one name at a time, so that a
 * kernel without it (before 5.6), or a filter that refuses it, answers
 * the same. At most 40 links, as the kernel follows in one lookup. Takes
 * from; returns an O_PATH fd of what name names, or -1. */
static int walk_in_root(int top, const struct stat *top_st, int from, const char *name)
{
    struct stat st;
    int at = from, links = 0;
    char *rest = strdup(name), *cursor = rest;
    if (at >= 0 && name[0] == '/') {
        close(at);
        at = fcntl(top, F_DUPFD_CLOEXEC, 0);
    }
    while (at >= 0) {
        if (!cursor) {
            close(at);
            at = -1;
            break;
        }
        cursor += strspn(cursor, "/");
        if (!*cursor)
            break;
        char *part = cursor;
        cursor += strcspn(cursor, "/");
        if (*cursor)
            *cursor++ = '\0';
        if (strcmp(part, ".") == 0)
            continue;
        if (strcmp(part, "..") == 0 && fstat(at, &st) == 0 && st.st_dev == top_st->st_dev &&
            st.st_ino == top_st->st_ino)
            continue;   /* the root's ".." is the root */
        int next = openat(at, part, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (next >= 0 && fstat(next, &st) == 0 && !S_ISLNK(st.st_mode)) {
            close(at);
            at = next;
            continue;
        }
        char target[PATH_MAX], *more = NULL;
        ssize_t n = next < 0 || ++links > 40 ? -1 : readlinkat(next, "", target, sizeof target - 1);
        if (next >= 0)
            close(next);
        if (n <= 0 || asprintf(&more, "%.*s/%s", (int)n, target, cursor) < 0) {
            close(at);
            at = -1;
            break;
        }
        free(rest);
        rest = cursor = more;
        if (target[0] == '/') {   /* from the root again */
            close(at);
            at = fcntl(top, F_DUPFD_CLOEXEC, 0);
        }
    }
    free(rest);
    return at;
}

/* Whether path is there inside the directory root, as the child's exec
 * looked for it after its chroot(root) and chdir(dir) (NULL: none); the
 * chdir() and the exec each had a lookup, and 40 links, of their own. */
static bool exists_in_root(const char *root, const char *dir, const char *path)
{
    struct stat top_st;
    int top = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (top < 0 || fstat(top, &top_st) != 0) {
        if (top >= 0)
            close(top);
        return false;
    }
    int at = fcntl(top, F_DUPFD_CLOEXEC, 0);
    if (dir)
        at = walk_in_root(top, &top_st, at, dir);
    at = at < 0 ? -1 : walk_in_root(top, &top_st, at, path);
    if (at >= 0)
        close(at);
    close(top);
    return at >= 0;
}

/* Whether path is there, as the child's exec looked for it after its
 * chdir(dir) (NULL: none). */
static bool exists_from(const char *dir, const char *path)
{
    struct stat st;
    int at = dir ? open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : AT_FDCWD;
    bool found = (dir == NULL || at >= 0) && fstatat(at, path, &st, 0) == 0;
    if (dir && at >= 0)
        close(at);
    return found;
}

/* Was the file an exec step failed on there? Then ENOENT came from its
 * #! interpreter (or a library), and the program itself was found. A PATH
 * search names a candidate (.index 0 or more) only where one was there,
 * and says .index -1 where it found none. A program named with '/' is
 * looked at where the child looked (under --chroot, inside the new root,
 * whose "/" a relative .cwd starts from), by its whole name: e->path is
 * cut at FL_ERROR_PATH_MAX, and a cut name may be another file. */
static bool exec_path_exists(const struct fl_cmd *cmd, const struct fl_error *e)
{
    const char *path = cmd->path ? cmd->path : cmd->argv[0];
    if (e->index < 0)
        return false;
    if (!strchr(path, '/'))
        return true;
    const char *root = cmd->contain ? cmd->contain->chroot : NULL;
    const char *dir = path[0] == '/' ? NULL : cmd->cwd;
    return root ? exists_in_root(root, dir, path) : exists_from(dir, path);
}

/* The exit status for a failed fl_spawn(), per D8 (cli.h). */
int spawn_failure_status(const struct fl_cmd *cmd, const struct fl_error *e)
{
    if (e->step != FL_STEP_EXEC)
        return EXIT_FORKLESS_ERROR;
    if (e->err == ENOENT && !exec_path_exists(cmd, e))
        return EXIT_NOT_FOUND;
    return EXIT_CANNOT_EXECUTE;
}

/* The --fd map that sets child fd fd, or NULL: a step dup failure names
 * the child fd only. */
static const struct fl_fd_map *fd_map_of(const struct fl_cmd *cmd, int fd)
{
    for (size_t i = 0; i < cmd->nfds; i++)
        if (cmd->fds[i].child_fd == fd)
            return &cmd->fds[i];
    return NULL;
}

/* Whether the --landlock rules, not the file, refused an exec (EACCES
 * with no cause the library found): Landlock is in force, and the child,
 * with the caller's credentials, user namespace and root, asked for a
 * file that the caller may run. Else the message is left as it is: a
 * directory the child may not search, or a file its new user (or its new
 * namespace's root) may not run, says EACCES too. */
static bool landlock_refused_exec(const struct fl_cmd *cmd, const struct fl_error *e)
{
    const struct fl_contain *k = cmd->contain;
    if (e->step != FL_STEP_EXEC || e->err != EACCES || e->detail[0] || !k || !k->nlandlock ||
        k->chroot || (k->unshare & FL_NS_USER) || k->map || fl_landlock_abi() <= 0 ||
        (cmd->flags & (FL_SET_UID | FL_SET_GID | FL_SET_GROUPS)))
        return false;
    char *seen;
    int n = e->path[0] != '/' && cmd->cwd ? asprintf(&seen, "%s/%s", cmd->cwd, e->path)
                                           : asprintf(&seen, "%s", e->path);
    if (n < 0)
        return false;
    bool may_run = access(seen, X_OK) == 0;
    free(seen);
    return may_run;
}

/* Prints the message of a failed fl_spawn(), with the option it came
 * from and, for a step refused for want of privilege, what it needs. */
static void report_spawn_failure(const struct run_options *o, const struct fl_error *e,
                                 const char *message)
{
    const struct fl_cmd *cmd = &o->cmd;
    const struct fl_fd_map *map;
    char hint[160];
    bool credentials = e->step == FL_STEP_SETGROUPS || e->step == FL_STEP_SETGID ||
                       e->step == FL_STEP_SETUID;
    char contained[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 256];
    if (contain_explain(&o->contain, e, message, contained, sizeof contained)) {
        cli_error("%s", contained);
    } else if (credentials && e->err == EINVAL && o->user && cmd->contain &&
               (cmd->contain->unshare & FL_NS_USER)) {
        cli_error("%s (--user %s: inside the new user namespace only the ids of its map exist: "
                  "0 with --map-root-user, yours with --map-current-user)", message, o->user);
    } else if (credentials && e->err == EPERM && o->user) {
        credential_privilege_hint(cmd->flags, hint, sizeof hint);
        cli_error("%s (--user %s: %s)", message, o->user, hint);
    } else if (e->step == FL_STEP_RLIMIT && e->index >= 0 &&
               (size_t)e->index < cmd->nrlimits) {
        /* The record says which limit by index only. */
        char why[128];
        rlimit_hint(&cmd->rlimits[e->index], e->err,
                    cmd->contain && (cmd->contain->unshare & FL_NS_USER), why, sizeof why);
        /* The hint says it as prlimit(1) would: the record's own detail
         * would say it a second time. */
        struct fl_error bare = *e;
        char shorter[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 64];
        if (why[0])
            bare.detail[0] = '\0';
        cli_error("%s (--rlimit %s%s)", fl_error_format(&bare, shorter, sizeof shorter),
                  o->rlimit_args[e->index], why);
    } else if (e->step == FL_STEP_OPEN && e->index >= 0 && e->index < 3 &&
               o->stdio_arg[e->index]) {
        static const char *const names[] = { "--stdin", "--stdout", "--stderr" };
        cli_error("%s (%s %s)", message, names[e->index],
                  o->stdio_arg[e->index][0] ? o->stdio_arg[e->index] : "''");
    } else if (e->step == FL_STEP_CHDIR && cmd->cwd) {
        cli_error("%s (--chdir %s)", message, cmd->cwd[0] ? cmd->cwd : "''");
    } else if (e->step == FL_STEP_CGROUP && cmd->cgroup) {
        cli_error("%s (--cgroup %s)", message, cmd->cgroup);
    } else if (e->step == FL_STEP_DUP && (map = fd_map_of(cmd, e->index))) {
        cli_error("%s (--fd %d=%d)", message, map->child_fd, map->parent_fd);
    } else if (landlock_refused_exec(cmd, e)) {
        cli_error("%s (Landlock: a program, and the #! interpreter or dynamic loader that runs it, "
                  "must be beneath a --landlock-rx path, and allowed by any Landlock rules "
                  "forkless itself runs under)", message);
    } else if (e->step == FL_STEP_EXEC && e->err == EAGAIN) {
        /* execve() says it before it looks for the file: the message names
         * the program as given, not the first PATH entry tried. */
        struct fl_error named = *e;
        char text[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 64];
        const char *limit = NULL;
        snprintf(named.path, sizeof named.path, "%s", cmd->path ? cmd->path : cmd->argv[0]);
        for (size_t i = 0; i < cmd->nrlimits; i++)
            if (cmd->rlimits[i].resource == RLIMIT_NPROC)
                limit = o->rlimit_args[i];
        cli_error("%s (the user's processes are over RLIMIT_NPROC, which execve() checks after a "
                  "change of user%s%s)", fl_error_format(&named, text, sizeof text),
                  limit ? ": --rlimit " : "", limit ? limit : "");
    } else if (e->err == ENOTSUP && o->child_signals.any_ignore) {
        cli_error("%s (--ignore-signal)", message);
    } else if (e->err == ENOTSUP && o->sigchld_kept_ignored) {
        cli_error("%s (--keep-signals: SIGCHLD was ignored when forkless started; the "
                  "child is to keep that, while forkless resets its own)", message);
    } else {
        cli_error("%s", message);
    }
}

/* The exit status for a child that ended, as timeout(1) gives it: after
 * a timeout 124, or with preserve the child's own, but 128+9 when it took
 * SIGKILL to end it. A child killed by signal N otherwise gives 128+N,
 * and *die_by is set to N: forkless is to die by N itself, as env(1) and
 * timeout(1) do. */
static int child_status(int status, bool timed_out, bool preserve, int *die_by)
{
    *die_by = 0;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (!timed_out) {
            *die_by = sig;
            return 128 + sig;
        }
        return preserve || sig == SIGKILL ? 128 + sig : EXIT_TIMED_OUT;
    }
    if (timed_out && !preserve)
        return EXIT_TIMED_OUT;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return EXIT_FORKLESS_ERROR;  /* stopped/continued: fl_wait never says so */
}

/* Ends forkless by signal sig, so that a parent that waits sees
 * WIFSIGNALED, as the child's end was; a shell still shows 128+sig. No
 * core dump of our own: the child's was the one that counted. Returns
 * only if sig did not kill us (its default action is not to).
 *
 * terminal_was_lent: the children's group had forkless's terminal as they
 * ended (supervise.h). An INT or QUIT they died by then came, as a rule,
 * from the terminal's ^C or ^\, which went to them alone where it would
 * have reached forkless's own group as well: the script forkless runs in
 * (a shell acts on its child's death by INT only when it got one itself),
 * a pager after it. The signal goes to that whole group, forkless too. */
void die_by_signal(int sig, bool terminal_was_lent)
{
    fflush(NULL);
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    prctl(PR_SET_DUMPABLE, 0);  /* a core_pattern pipe ignores RLIMIT_CORE */
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    if (terminal_was_lent && (sig == SIGINT || sig == SIGQUIT))
        kill(0, sig);
    raise(sig);
}

static void report_end(pid_t pid, const struct fl_result *res)
{
    int status = res->status;
    bool timed_out = res->timed_out;
    double elapsed = (double)res->elapsed_ns / 1e9;
    if (timed_out && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        cli_error("pid %d timed out, killed by SIGKILL, after %.3f s", (int)pid, elapsed);
    else if (timed_out)
        cli_error("pid %d timed out after %.3f s", (int)pid, elapsed);
    else if (WIFSIGNALED(status))
        cli_error("pid %d killed by signal %d (%s) after %.3f s", (int)pid,
                  WTERMSIG(status), strsignal(WTERMSIG(status)), elapsed);
    else
        cli_error("pid %d exited with status %d after %.3f s", (int)pid,
                  WEXITSTATUS(status), elapsed);
}

/* The library waits for the exec of such a command (FL_SCHED_OOM_SCORE_ADJ). */
static bool oom_score_set(const struct fl_cmd *cmd)
{
    return cmd->sched && (cmd->sched->set & FL_SCHED_OOM_SCORE_ADJ);
}

/* Reports a failed spawn or launch; the exit status. */
static int spawn_failed(struct run_options *o, struct fl_error *error)
{
    char message[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 128];
    reword_error(error, "--shell-fallback", o->cmd.flags);
    fl_error_format(error, message, sizeof message);
    report_spawn_failure(o, error, message);
    return spawn_failure_status(&o->cmd, error);
}

static int run_command(struct run_options *o, int *die_by)
{
    struct fl_cmd *cmd = &o->cmd;
    struct fl_error error;
    char resolved[4096];
    int r;

    /* Where the search finds nothing, the name as given: the launch's own
     * failure follows. */
    if (o->verbose && fl_resolve(cmd, resolved, sizeof resolved, NULL) != 0)
        snprintf(resolved, sizeof resolved, "%s", cmd->path ? cmd->path : cmd->argv[0]);

    /* Blocked now, so that a signal between the spawn and the wait is
     * queued for the supervisor instead of killing forkless. The child
     * gets an empty mask, or with --keep-signals the mask we had, and
     * then the changes of --block-signal and --default-signal. */
    const struct child_signals *cs = &o->child_signals;
    bool keep = (cmd->flags & FL_KEEP_SIGNALS) != 0;
    sigset_t old_mask, mask;
    /* --kill-tree finds the descendants in /proc, by pid: not in a /proc
     * of another pid namespace, whose pids name other processes. The
     * cgroup holds them all without it. */
    if (o->supervise.kill_tree && !o->supervise.cgroup && !proc_is_ours()) {
        cli_error("--kill-tree: /proc is not of forkless's pid namespace (/proc/self is "
                  "not pid %d; mount a /proc of this namespace, as unshare "
                  "--mount-proc does), or give --cgroup", (int)getpid());
        return EXIT_FORKLESS_ERROR;
    }
    /* The stop of --kill-tree --cgroup is every process in the cgroup:
     * processes already there are not the program's, and forkless may be
     * one of them (the top of the hierarchy holds everything). */
    struct cgroup_members m;
    if (o->supervise.kill_tree && o->supervise.cgroup &&
        cgroup_members(o->supervise.cgroup, &m) == 0 && (m.count || m.below)) {
        char who[96], what[32] = "processes";
        if (m.count)
            snprintf(what, sizeof what, "%zu process%s", m.count, m.count > 1 ? "es" : "");
        if (m.below)
            snprintf(who, sizeof who, "in a cgroup below it");
        else if (!m.first)
            snprintf(who, sizeof who, "outside this pid namespace");
        else
            snprintf(who, sizeof who, "%spid %ld%s", m.self ? "forkless itself among them; " : "",
                     m.first, m.count > 1 ? ", ..." : "");
        cli_error("--kill-tree --cgroup %s: the cgroup already holds %s (%s), which its stop "
                  "would end too; give it an empty cgroup of its own", o->supervise.cgroup,
                  what, who);
        return EXIT_FORKLESS_ERROR;
    }
    r = supervise_start(&o->supervise, &old_mask);
    if (r != 0) {
        supervise_start_error(r);
        return EXIT_FORKLESS_ERROR;
    }
    if (keep || cs->any_mask) {
        sigset_t base;
        sigemptyset(&base);
        child_signals_mask(cs, keep ? &old_mask : &base, &mask);
        cmd->sigmask = &mask;
    }
    if (cs->any_default)
        cmd->sigdefault = &cs->defaults;
    /* An ignored SIGCHLD, inherited from our parent, makes the kernel
     * discard the child's status: ours goes back to its default. The
     * child starts with SIGCHLD at its default anyway, unless
     * --keep-signals asks to keep the SIG_IGN: then it gets it back. */
    sigset_t ignore = cs->ignore;
    if (signal(SIGCHLD, SIG_DFL) == SIG_IGN && keep &&
        sigismember(&cs->defaults, SIGCHLD) != 1) {
        sigaddset(&ignore, SIGCHLD);
        o->sigchld_kept_ignored = true;
    }
    if (cs->any_ignore || o->sigchld_kept_ignored)
        cmd->sigignore = &ignore;

    /* Before the spawn, so that no descendant can be orphaned before
     * forkless is there to adopt it. */
    if (o->supervise.kill_tree &&
        (r = tree_adopt(&o->supervise.tree_foreign, &o->supervise.tree_nforeign)) != 0) {
        supervise_end(&o->supervise);
        cli_error("--kill-tree: cannot become a subreaper (prctl): %s", strerror(r));
        return EXIT_FORKLESS_ERROR;
    }
    /* Launched: the child's setup may wait (an open() of a FIFO), and the
     * timeout and the signals passed on must reach it meanwhile, as they
     * would a program that waits. Its failure comes with the wait, below,
     * and so do the settings it may report as not applied (known once it
     * has exec'd): nothing here may wait for the exec, since forkless
     * blocks the signals it takes from its signalfd. */
    cmd->flags |= FL_NO_WAIT_EXEC;
    struct fl_proc proc;
    r = fl_spawn(cmd, &proc, &error);
    /* They pointed into this frame. */
    cmd->sigmask = NULL;
    cmd->sigignore = NULL;
    if (r != 0) {
        supervise_end(&o->supervise);
        return spawn_failed(o, &error);
    }
    /* A launch's exec, or its failure, is known at the wait. */
    if (o->verbose)
        cli_error("%s %s as pid %d with the %s backend",
                  proc.backend == FL_BACKEND_CLONE && !oom_score_set(cmd) ? "launched" : "started",
                  resolved,
                  (int)proc.pid, fl_backend_name(proc.backend));
    r = pty_relay_start(&o->pty, &proc.pty, &proc, o->supervise.signal_fd);
    if (o->pty.started) {
        o->supervise.on_sigchld = pty_relay_child_changed;
        o->supervise.on_sigchld_arg = &o->pty;
    }
    if (r != 0) {
        cli_error("--pty: cannot relay the terminal: %s", strerror(r));
        fl_kill(&proc, SIGKILL);
        fl_wait(&proc, -1, NULL);
        fl_close(&proc);
        supervise_end(&o->supervise);
        return EXIT_FORKLESS_ERROR;
    }

    struct fl_result res;
    bool interrupted = false;
    o->supervise.interrupted = &interrupted;
    r = supervise(&proc, &o->supervise, &res);
    o->supervise.interrupted = NULL;  /* it pointed into this frame */
    o->supervise.on_sigchld = NULL;
    /* Our terminal as it was, before any message. */
    pty_relay_finish(&o->pty, interrupted);
    supervise_end(&o->supervise);
    pid_t pid = proc.pid;
    /* A setup or exec that failed: the wait said its errno, and the
     * launch keeps its record until the handle is closed. */
    if (r != 0 && fl_launch_finish(&proc, &error) == r) {
        fl_close(&proc);
        return spawn_failed(o, &error);
    }
    if (r == 0)
        contain_report(&o->contain, &proc);
    fl_close(&proc);
    if (r == ECHILD) {
        cli_error("pid %d ended, but its exit status was lost (another waiter "
                  "took it)", (int)pid);
        return EXIT_FORKLESS_ERROR;
    }
    if (r != 0) {
        cli_error("waiting for pid %d: %s", (int)pid, strerror(r));
        return EXIT_FORKLESS_ERROR;
    }
    if (o->verbose)
        report_end(pid, &res);
    if (o->time)
        report_time(NULL, &res);
    return child_status(res.status, res.timed_out, o->preserve_status, die_by);
}

int run_main(int argc, char **argv)
{
    struct run_options o = { 0 };
    int die_by = 0;
    bool terminal_was_lent = false;
    int status = parse_run_options(&o, argc, argv);
    o.supervise.terminal_was_lent = &terminal_was_lent;
    if (status < 0)
        status = run_command(&o, &die_by);
    free_run_options(&o);
    if (die_by)
        die_by_signal(die_by, terminal_was_lent);
    return status;
}
