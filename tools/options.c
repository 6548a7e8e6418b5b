/* options.c: the options of `forkless run`. This file decides what each
 * option means; the library does the work. */
#include "options.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "optloop.h"
#include "parse.h"

enum { DEFAULT_KILL_AFTER_MS = 5000 };

void time_limit_defaults(struct supervise_options *s)
{
    s->kill_after_ms = DEFAULT_KILL_AFTER_MS;
    s->timeout_signal = SIGTERM;
    s->job_tty = -1;
}

enum {
    OPT_STDIN = 256, OPT_STDOUT, OPT_STDERR, OPT_APPEND, OPT_STDERR_TO_STDOUT,
    OPT_FD, OPT_KEEP_FDS, OPT_KEEP_SIGNALS, OPT_DEFAULT_SIGNAL, OPT_IGNORE_SIGNAL,
    OPT_BLOCK_SIGNAL, OPT_SETSID, OPT_PGROUP, OPT_RLIMIT, OPT_UMASK, OPT_USER,
    OPT_CGROUP, OPT_KILL_WITH_PARENT, OPT_TIMEOUT, OPT_NO_KILL, OPT_BACKEND, OPT_NO_FORK,
    OPT_SHELL_FALLBACK, OPT_RETRY_ETXTBSY, OPT_PATH_RELATIVE, OPT_VERSION, OPT_TIME,
    OPT_KILL_TREE, OPT_PTY, OPT_PTY_SIZE,
};

static const struct option long_options[] = {
    { "chdir", required_argument, NULL, 'C' },
    { "env", required_argument, NULL, 'e' },
    { "unset", required_argument, NULL, 'u' },
    { "clear-env", no_argument, NULL, 'i' },
    { "ignore-environment", no_argument, NULL, 'i' },   /* env(1)'s name */
    { "argv0", required_argument, NULL, 'a' },
    { "path-relative", no_argument, NULL, OPT_PATH_RELATIVE },
    { "stdin", required_argument, NULL, OPT_STDIN },
    { "stdout", required_argument, NULL, OPT_STDOUT },
    { "stderr", required_argument, NULL, OPT_STDERR },
    { "append", no_argument, NULL, OPT_APPEND },
    { "stderr-to-stdout", no_argument, NULL, OPT_STDERR_TO_STDOUT },
    { "fd", required_argument, NULL, OPT_FD },
    { "keep-fds", no_argument, NULL, OPT_KEEP_FDS },
    { "keep-signals", no_argument, NULL, OPT_KEEP_SIGNALS },
    { "default-signal", required_argument, NULL, OPT_DEFAULT_SIGNAL },
    { "ignore-signal", required_argument, NULL, OPT_IGNORE_SIGNAL },
    { "block-signal", required_argument, NULL, OPT_BLOCK_SIGNAL },
    { "setsid", no_argument, NULL, OPT_SETSID },
    { "pgroup", no_argument, NULL, OPT_PGROUP },
    { "rlimit", required_argument, NULL, OPT_RLIMIT },
    { "umask", required_argument, NULL, OPT_UMASK },
    { "user", required_argument, NULL, OPT_USER },
    { "cgroup", required_argument, NULL, OPT_CGROUP },
    { "kill-with-parent", no_argument, NULL, OPT_KILL_WITH_PARENT },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "kill-after", required_argument, NULL, 'k' },
    { "no-kill", no_argument, NULL, OPT_NO_KILL },
    { "signal", required_argument, NULL, 's' },
    { "preserve-status", no_argument, NULL, 'p' },
    { "foreground", no_argument, NULL, 'f' },
    { "kill-tree", no_argument, NULL, OPT_KILL_TREE },
    { "backend", required_argument, NULL, OPT_BACKEND },
    { "no-fork", no_argument, NULL, OPT_NO_FORK },
    { "shell-fallback", no_argument, NULL, OPT_SHELL_FALLBACK },
    { "retry-etxtbsy", no_argument, NULL, OPT_RETRY_ETXTBSY },
    { "time", no_argument, NULL, OPT_TIME },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, OPT_VERSION },
    { "pty", no_argument, NULL, OPT_PTY },
    { "pty-size", required_argument, NULL, OPT_PTY_SIZE },
    CONTAIN_LONG_OPTIONS,
    { NULL, 0, NULL, 0 },
};

static const char *option_name(int val)
{
    return long_option_name(long_options, val);
}

/* Removes the entries that edit variable name (name_len bytes) from list:
 * the last -e or -u of a name wins, as on the command line, while the
 * library applies all sets before all unsets. */
static void drop_edits_of(const char **list, size_t *n, const char *name, size_t name_len)
{
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        size_t len = strcspn(list[i], "=");
        if (len != name_len || memcmp(list[i], name, len) != 0)
            list[kept++] = list[i];
    }
    *n = kept;
    list[kept] = NULL;
}

/* Puts entry in the place of list's set of the same name; false if none. */
static bool replace_set_of(const char **list, size_t n, const char *entry, size_t name_len)
{
    for (size_t i = 0; i < n; i++)
        if (strcspn(list[i], "=") == name_len && memcmp(list[i], entry, name_len) == 0) {
            list[i] = entry;
            return true;
        }
    return false;
}

static bool fd_is_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

static int parse_backend(const char *name, enum fl_backend *backend)
{
    static const enum fl_backend all[] = {
        FL_BACKEND_AUTO, FL_BACKEND_CLONE, FL_BACKEND_POSIX_SPAWN, FL_BACKEND_FORK,
    };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        if (strcmp(name, fl_backend_name(all[i])) == 0) {
            *backend = all[i];
            return 0;
        }
    }
    return -1;
}

int time_limit_option(struct supervise_options *s, const char *name, const char *arg)
{
    int64_t ms;
    if (strcmp(name, "no-kill") == 0) {
        s->kill_after_ms = -1;
        s->kill_after_given = false;
        return 0;
    }
    if (strcmp(name, "signal") == 0) {
        if (parse_timeout_signal(arg, &s->timeout_signal) == 0)
            return 0;
        cli_error("--signal: invalid signal \"%s\" (a name such as TERM or RTMIN+1, "
                  "or a number: 0-31, %d-%d, or 128 more)", arg, SIGRTMIN, SIGRTMAX);
        return -1;
    }
    if (parse_duration_ms(arg, &ms) != 0) {
        cli_error("--%s: invalid duration \"%s\"", name, arg);
        return -1;
    }
    if (strcmp(name, "timeout") == 0) {
        s->timeout_ms = ms;
        s->timeout_given = true;
    } else {
        s->kill_after_ms = ms;
        s->kill_after_given = true;
    }
    return 0;
}

/* Applies one option. Returns 0, or -1 after printing why. */
static int apply_option(struct run_options *o, int opt, const char *arg)
{
    struct fl_cmd *cmd = &o->cmd;
    if (opt >= OPT_CONTAIN_FIRST && opt < OPT_CONTAIN_END)
        return contain_option(&o->contain, opt, arg);
    switch (opt) {
    case 'C':
        cmd->cwd = arg;
        return 0;
    case 'e': {
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg) {
            cli_error("--env: expected NAME=VALUE, got \"%s\"", arg);
            return -1;
        }
        drop_edits_of(o->env_unset, &o->nenv_unset, arg, (size_t)(eq - arg));
        /* A name set again keeps its place, as env(1)'s setenv() does. */
        if (!replace_set_of(o->env_set, o->nenv_set, arg, (size_t)(eq - arg)))
            o->env_set[o->nenv_set++] = arg;
        return 0;
    }
    case 'u':
        if (arg[0] == '\0' || strchr(arg, '=')) {
            cli_error("--unset: invalid variable name \"%s\"", arg);
            return -1;
        }
        drop_edits_of(o->env_set, &o->nenv_set, arg, strlen(arg));
        drop_edits_of(o->env_unset, &o->nenv_unset, arg, strlen(arg));
        o->env_unset[o->nenv_unset++] = arg;
        return 0;
    case 'i':
        cmd->flags |= FL_ENV_CLEAR;
        return 0;
    case 'a':
        o->argv0 = arg;
        return 0;
    case OPT_PATH_RELATIVE:
        cmd->flags |= FL_PATH_RELATIVE;
        return 0;
    case OPT_STDIN:
    case OPT_STDOUT:
    case OPT_STDERR: {
        int fd = opt - OPT_STDIN;
        free(o->stdio_path[fd]);
        o->stdio_arg[fd] = arg;
        o->stdio_path[fd] = cli_absolute_path(arg);
        if (!o->stdio_path[fd]) {
            cli_error("--%s: cannot make \"%s\" absolute: %s", option_name(opt), arg,
                      strerror(errno));
            return -1;
        }
        return 0;
    }
    case OPT_APPEND:
        o->append = true;
        return 0;
    case OPT_STDERR_TO_STDOUT:
        o->stderr_to_stdout = true;
        return 0;
    case OPT_FD: {
        struct fl_fd_map map;
        if (parse_fd_map(arg, &map.child_fd, &map.parent_fd) != 0) {
            cli_error("--fd: expected CHILD=PARENT fd numbers, got \"%s\"", arg);
            return -1;
        }
        if (!fd_is_open(map.parent_fd)) {
            cli_error("--fd %s: file descriptor %d is not open", arg, map.parent_fd);
            return -1;
        }
        for (size_t i = 0; i < cmd->nfds; i++) {
            if (o->fds[i].child_fd == map.child_fd) {
                cli_error("--fd %s: child fd %d is given twice", arg, map.child_fd);
                return -1;
            }
        }
        o->fds[cmd->nfds++] = map;
        return 0;
    }
    case OPT_KEEP_FDS:
        cmd->flags |= FL_KEEP_FDS;
        return 0;
    case OPT_KEEP_SIGNALS:
        cmd->flags |= FL_KEEP_SIGNALS;
        return 0;
    case OPT_DEFAULT_SIGNAL:
    case OPT_IGNORE_SIGNAL:
    case OPT_BLOCK_SIGNAL: {
        enum signal_action action = opt == OPT_DEFAULT_SIGNAL ? SIGNAL_DEFAULT
                                  : opt == OPT_IGNORE_SIGNAL ? SIGNAL_IGNORE : SIGNAL_BLOCK;
        char name[32];
        snprintf(name, sizeof name, "--%s", option_name(opt));
        return child_signals_add(&o->child_signals, action, name, arg);
    }
    case OPT_SETSID:
        cmd->flags |= FL_SETSID;
        return 0;
    case OPT_PGROUP:
        cmd->flags |= FL_NEW_PGROUP;
        return 0;
    case OPT_RLIMIT: {
        struct fl_rlimit *rl = &o->rlimits[cmd->nrlimits];
        int r = parse_rlimit(arg, &rl->resource, &rl->soft, &rl->hard);
        if (r == -2) {
            cli_error("--rlimit: unknown resource in \"%s\" (AS, CORE, CPU, DATA, FSIZE, "
                      "LOCKS, MEMLOCK, MSGQUEUE, NICE, NOFILE, NPROC, RSS, RTPRIO, "
                      "RTTIME, SIGPENDING, STACK)", arg);
            return -1;
        }
        if (r != 0) {
            cli_error("--rlimit: expected NAME=SOFT[:HARD], each a whole number, \"unlimited\" "
                      "or -1, got \"%s\"", arg);
            return -1;
        }
        o->rlimit_args[cmd->nrlimits++] = arg;
        return 0;
    }
    case OPT_UMASK:
        if (parse_umask(arg, &cmd->umask) != 0) {
            cli_error("--umask: invalid octal mode \"%s\"", arg);
            return -1;
        }
        cmd->flags |= FL_SET_UMASK;
        return 0;
    case OPT_USER:
        free(o->credentials.groups);
        o->credentials.groups = NULL;
        if (resolve_credentials(arg, &o->credentials) != 0)
            return -1;
        cmd->uid = o->credentials.uid;
        cmd->gid = o->credentials.gid;
        cmd->groups = o->credentials.groups;
        cmd->ngroups = o->credentials.ngroups;
        /* Only what differs: setgroups() needs CAP_SETGID even to set the
         * groups we have, and a caller may name its own user. */
        cmd->flags &= ~(FL_SET_UID | FL_SET_GID | FL_SET_GROUPS);
        cmd->flags |= credential_changes(&o->credentials);
        o->user = arg;
        return 0;
    case OPT_CGROUP:
        if (!*arg) {
            cli_error("--cgroup: the directory name is empty");
            return -1;
        }
        cmd->cgroup = arg;
        return 0;
    case OPT_KILL_WITH_PARENT:
        cmd->pdeathsig = SIGKILL;
        return 0;
    case OPT_TIMEOUT:
    case 'k':
    case OPT_NO_KILL:
    case 's':
        return time_limit_option(&o->supervise, option_name(opt), arg);
    case 'p':
        o->preserve_status = true;
        return 0;
    case 'f':
        o->foreground = true;
        return 0;
    case OPT_KILL_TREE:
        o->supervise.kill_tree = true;
        return 0;
    case OPT_TIME:
        o->time = true;
        return 0;
    case OPT_BACKEND:
        if (parse_backend(arg, &cmd->backend) != 0) {
            cli_error("--backend: unknown backend \"%s\" (auto, clone, posix_spawn, fork)",
                      arg);
            return -1;
        }
        return 0;
    case OPT_NO_FORK:
        cmd->flags |= FL_NO_FORK;
        return 0;
    case OPT_SHELL_FALLBACK:
        cmd->flags |= FL_SHELL_FALLBACK;
        return 0;
    case OPT_RETRY_ETXTBSY:
        cmd->flags |= FL_RETRY_ETXTBSY;
        return 0;
    case 'v':
        o->verbose = true;
        return 0;
    case OPT_PTY:
        o->pty.enabled = true;
        return 0;
    case OPT_PTY_SIZE:
        if (pty_parse_size(arg, &o->pty.rows, &o->pty.cols) != 0) {
            cli_error("--pty-size: expected ROWSxCOLS (1-65535 each), got \"%s\"", arg);
            return -1;
        }
        o->pty.size_given = true;
        return 0;
    }
    cli_error("internal error: option %d not handled", opt);
    return -1;
}

/* read_options()'s callback: --help and --version end the parse. */
static int run_option(void *ctx, int opt, const char *arg)
{
    if (opt == 'h')
        return print_stdout(print_run_help) == 0 ? 1 : -1;
    if (opt == OPT_VERSION)
        return print_stdout(print_version) == 0 ? 1 : -1;
    return apply_option(ctx, opt, arg);
}

/* The settings that depend on several options at once. */
static int finish_options(struct run_options *o)
{
    struct fl_cmd *cmd = &o->cmd;
    if (o->stderr_to_stdout && o->stdio_path[2]) {
        cli_error("--stderr and --stderr-to-stdout cannot be used together");
        return -1;
    }
    /* The library lets a map of fd 0-2 win over .stdio: the other option
     * would be dropped without a word (its --stdout file never made). */
    for (size_t i = 0; i < cmd->nfds; i++) {
        int fd = o->fds[i].child_fd;
        const char *other = fd < 3 && o->stdio_path[fd] ? option_name(OPT_STDIN + fd)
                          : fd == 2 && o->stderr_to_stdout ? "stderr-to-stdout" : NULL;
        if (other) {
            cli_error("--%s and --fd %d=%d cannot be used together: both set the "
                      "child's fd %d", other, fd, o->fds[i].parent_fd, fd);
            return -1;
        }
    }
    /* A relative name was made absolute from the current directory, which
     * is outside the new root: inside it, that name means nothing. */
    for (int fd = 0; fd < 3; fd++)
        if (o->contain.contain.chroot && o->stdio_arg[fd] && o->stdio_arg[fd][0] &&
            o->stdio_arg[fd][0] != '/') {
            cli_error("--%s %s: with --chroot, name the file from the new root (a path "
                      "starting with /)", option_name(OPT_STDIN + fd), o->stdio_arg[fd]);
            return -1;
        }
    if (o->append && !o->stdio_path[1] && !o->stdio_path[2]) {
        cli_error("--append needs --stdout or --stderr: it says how their files are opened");
        return -1;
    }
    if ((cmd->flags & FL_NO_FORK) && cmd->backend == FL_BACKEND_FORK) {
        cli_error("--no-fork and --backend fork cannot be used together");
        return -1;
    }
    for (int fd = 0; fd < 3; fd++) {
        if (!o->stdio_path[fd])
            continue;
        cmd->stdio[fd].kind = FL_FILE;
        cmd->stdio[fd].path = o->stdio_path[fd];
        cmd->stdio[fd].flags = fd == 0 ? O_RDONLY
                             : O_WRONLY | O_CREAT | (o->append ? O_APPEND : O_TRUNC);
        cmd->stdio[fd].mode = 0666;
    }
    if (o->stderr_to_stdout)
        cmd->stdio[2].kind = FL_TO_STDOUT;
    cmd->env_set = o->nenv_set ? o->env_set : NULL;
    cmd->env_unset = o->nenv_unset ? o->env_unset : NULL;
    cmd->fds = cmd->nfds ? o->fds : NULL;
    cmd->rlimits = cmd->nrlimits ? o->rlimits : NULL;

    /* --pty: the streams not redirected are on the new terminal, whose
     * session the child leads. */
    if (o->pty.size_given && !o->pty.enabled) {
        cli_error("--pty-size needs --pty");
        return -1;
    }
    if (o->pty.enabled && o->foreground) {
        cli_error("--foreground keeps the child in our process group: it cannot be "
                  "used with --pty, whose terminal is the child's own");
        return -1;
    }
    if (o->pty.enabled) {
        bool on_pty = false;
        for (int fd = 0; fd < 3; fd++) {
            if (cmd->stdio[fd].kind == FL_INHERIT)
                cmd->stdio[fd].kind = FL_PTY;
            bool mapped = false;  /* an --fd of 0-2 takes the stream off the terminal */
            for (size_t i = 0; i < cmd->nfds; i++)
                mapped = mapped || o->fds[i].child_fd == fd;
            on_pty = on_pty || (cmd->stdio[fd].kind == FL_PTY && !mapped);
        }
        if (!on_pty) {
            cli_error("--pty: no standard stream is left on the terminal (--stdin, "
                      "--stdout, --stderr and --fd redirect them all)");
            return -1;
        }
        cmd->flags |= FL_SETSID;
        if (pty_relay_prepare(&o->pty, cmd) != 0)
            return -1;
        /* The relay follows the program's stops (see follow_a_stop()). */
        o->supervise.watch_sigchld = true;
    }

    /* A timeout kills the child's whole process group, so it needs one of
     * its own (a new session is a new group too), unless --foreground
     * keeps it in ours: then only the child is signalled. --timeout 0
     * too: SIGALRM can still end the time, as with timeout 0. */
    if (o->foreground && (cmd->flags & (FL_SETSID | FL_NEW_PGROUP))) {
        cli_error("--foreground keeps the child in our process group: it cannot be "
                  "used with --%s", cmd->flags & FL_SETSID ? "setsid" : "pgroup");
        return -1;
    }
    if (o->supervise.timeout_given && !o->foreground && !(cmd->flags & FL_SETSID))
        cmd->flags |= FL_NEW_PGROUP;
    o->supervise.own_group = (cmd->flags & (FL_SETSID | FL_NEW_PGROUP)) != 0;
    o->supervise.relay_job = (cmd->flags & (FL_SETSID | FL_NEW_PGROUP)) == FL_NEW_PGROUP;
    o->supervise.cgroup = cmd->cgroup;
    /* The cgroup's stop (fl_stop()) reads a signal of 0 as SIGTERM: the
     * descendants would get what --signal 0 says not to send. */
    if (o->supervise.kill_tree && cmd->cgroup && o->supervise.timeout_signal == 0) {
        cli_error("--signal 0 cannot be used with --kill-tree and --cgroup: the cgroup's "
                  "stop has no signal 0 (it would send SIGTERM)");
        return -1;
    }
    if (contain_finish(&o->contain, cmd) != 0)
        return -1;
    /* In a new user namespace --user names ids inside it, which the
     * comparison with our own ids outside cannot judge: change both,
     * always. Its groups cannot be set there (the map denies
     * setgroups()). */
    if (o->user && cmd->contain && (cmd->contain->unshare & FL_NS_USER)) {
        cmd->flags |= FL_SET_UID | FL_SET_GID;
        cmd->flags &= ~FL_SET_GROUPS;
    }
    return 0;
}

int parse_run_options(struct run_options *o, int argc, char **argv)
{
    size_t room = (size_t)argc + 1;
    o->env_set = calloc(room, sizeof *o->env_set);
    o->env_unset = calloc(room, sizeof *o->env_unset);
    o->fds = calloc(room, sizeof *o->fds);
    o->rlimits = calloc(room, sizeof *o->rlimits);
    o->rlimit_args = calloc(room, sizeof *o->rlimit_args);
    if (!o->env_set || !o->env_unset || !o->fds || !o->rlimits || !o->rlimit_args) {
        cli_error("out of memory");
        return EXIT_FORKLESS_ERROR;
    }
    time_limit_defaults(&o->supervise);
    o->supervise.signal_fd = -1;
    child_signals_init(&o->child_signals);

    int r = read_options(argc, argv, "+:C:e:u:a:ivhs:k:pf", long_options,
                         timeout_env_option_names, "run", run_option, o);
    if (r >= 0)
        return r;
    /* As env(1): NAME=VALUE operands before PROGRAM set variables, as -e
     * would after the options (the last word on a name wins); the first
     * operand without '=' is PROGRAM. */
    for (; optind < argc && strchr(argv[optind], '='); optind++) {
        if (argv[optind][0] == '=') {
            cli_error("run: cannot set \"%s\": the variable name is empty", argv[optind]);
            return EXIT_FORKLESS_ERROR;
        }
        apply_option(o, 'e', argv[optind]);  /* NAME=...: it cannot fail */
    }
    if (optind >= argc) {
        cli_error("run: no program given (see forkless run --help)");
        return EXIT_FORKLESS_ERROR;
    }
    o->cmd.argv = argv + optind;
    if (o->argv0) {  /* PROGRAM is still what runs, found as before */
        o->cmd.path = argv[optind];
        argv[optind] = (char *)o->argv0;
    }
    return finish_options(o) == 0 ? -1 : EXIT_FORKLESS_ERROR;
}

void free_run_options(struct run_options *o)
{
    free(o->env_set);
    free(o->env_unset);
    free(o->fds);
    free(o->rlimits);
    free(o->rlimit_args);
    free(o->credentials.groups);
    free(o->supervise.tree_foreign);
    contain_free(&o->contain);
    for (int fd = 0; fd < 3; fd++)
        free(o->stdio_path[fd]);
}
