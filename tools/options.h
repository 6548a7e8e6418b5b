/* options.h: the options of `forkless run`, turned into a struct fl_cmd
 * and the settings of the supervisor. */
#ifndef FL_TOOLS_OPTIONS_H
#define FL_TOOLS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "contain_opts.h"
#include "forkless.h"
#include "pty_relay.h"
#include "signals.h"
#include "supervise.h"
#include "user.h"

struct run_options {
    struct fl_cmd cmd;
    /* Arrays that cmd points into; each has room for argc entries, since
     * every option that adds one uses at least one argument. */
    const char **env_set;
    size_t nenv_set;
    const char **env_unset;
    size_t nenv_unset;
    struct fl_fd_map *fds;
    struct fl_rlimit *rlimits;
    const char **rlimit_args;  /* the --rlimit texts, for messages */
    struct credentials credentials;
    const char *user;        /* the --user text, for messages */
    const char *argv0;       /* --argv0 */
    char *stdio_path[3];     /* --stdin/--stdout/--stderr, made absolute */
    const char *stdio_arg[3];  /* ... as given, for the messages */
    bool append;
    bool stderr_to_stdout;
    bool verbose;
    bool time;               /* --time: report.h */
    bool sigchld_kept_ignored;  /* see run.c */
    bool preserve_status;    /* after a timeout, exit as the child did */
    bool foreground;         /* a timeout leaves the child in our group */
    struct child_signals child_signals;
    struct supervise_options supervise;
    struct pty_relay pty;    /* --pty, --pty-size */
    struct contain_options contain;  /* --unshare, --caps, --cpus, ... */
};

/* Parses the arguments of `forkless run` (argv[0] is "run") into o, which
 * starts zeroed. Returns -1 when the command is ready to run, else the
 * exit status: 0 after --help or --version, 125 after a message. */
int parse_run_options(struct run_options *o, int argc, char **argv);

/* The time limit's settings before any option: SIGTERM, SIGKILL 5 s
 * later, no timeout. */
void time_limit_defaults(struct supervise_options *s);

/* Applies --timeout, --kill-after, --no-kill or --signal (name without
 * the dashes) with its argument, as `forkless run` and `forkless pipe`
 * read them. Returns 0, or -1 after printing why. */
int time_limit_option(struct supervise_options *s, const char *name, const char *arg);

/* Prints `forkless run --help` (run_help.c). */
void print_run_help(void);

/* Frees what parse_run_options() allocated. */
void free_run_options(struct run_options *o);

#endif
