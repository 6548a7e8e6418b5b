/* pipe.c: `forkless pipe`: the options and the stages are parsed here,
 * fl_pipeline_spawn() starts the stages, supervise_pipeline() waits for
 * them as supervise() does for the child of `forkless run` (signals
 * passed on, the time limit), and the outcome becomes the exit status:
 * pipefail's, or the last stage's, with run's exit codes (D8, cli.h). */
#include "pipe.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "optloop.h"
#include "options.h"
#include "report.h"
#include "signals.h"

enum {
    OPT_TIMEOUT = 256, OPT_NO_KILL, OPT_LAST, OPT_SEPARATOR,
    OPT_TIME, OPT_VERSION,
};

static const struct option long_options[] = {
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "kill-after", required_argument, NULL, 'k' },
    { "no-kill", no_argument, NULL, OPT_NO_KILL },
    { "signal", required_argument, NULL, 's' },
    { "last", no_argument, NULL, OPT_LAST },
    /* As run's: "--time 5" is no abbreviation of --timeout. */
    { "time", no_argument, NULL, OPT_TIME },
    { "separator", required_argument, NULL, OPT_SEPARATOR },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, OPT_VERSION },
    { NULL, 0, NULL, 0 },
};

/* read_options()'s callback. */
static int apply_option(void *ctx, int opt, const char *arg)
{
    struct pipe_options *o = ctx;
    switch (opt) {
    case 'h':
        return print_stdout(print_pipe_help) == 0 ? 1 : -1;
    case OPT_VERSION:
        return print_stdout(print_version) == 0 ? 1 : -1;
    case OPT_TIMEOUT:
    case 'k':
    case OPT_NO_KILL:
    case 's':
        return time_limit_option(&o->time_limit, long_option_name(long_options, opt), arg);
    case OPT_LAST:
        o->last = true;
        return 0;
    case OPT_TIME:
        o->time = true;
        return 0;
    case OPT_SEPARATOR:
        if (arg[0] == '\0') {
            cli_error("pipe: --separator: the separator cannot be empty");
            return -1;
        }
        o->separator = arg;
        return 0;
    case 'v':
        o->verbose = true;
        return 0;
    }
    cli_error("internal error: option %d not handled", opt);
    return -1;
}

/* Cuts words[0..n-1] at each separator into o->stages. */
static int split_stages(struct pipe_options *o, char **words, int n)
{
    o->stages = calloc((size_t)n + 1, sizeof *o->stages);
    if (!o->stages) {
        cli_error("out of memory");
        return -1;
    }
    o->stages[0] = words;
    o->n = 1;
    for (int i = 0; i < n; i++) {
        if (strcmp(words[i], o->separator) != 0)
            continue;
        words[i] = NULL;
        o->stages[o->n++] = words + i + 1;
    }
    /* words[n] is argv[argc], NULL: the last stage ends there. */
    for (size_t k = 0; k < o->n; k++) {
        if (!o->stages[k][0]) {
            cli_error("pipe: stage %zu is empty (two \"%s\" in a row, or one at an end)",
                      k + 1, o->separator);
            return -1;
        }
    }
    return 0;
}

int parse_pipe_options(struct pipe_options *o, int argc, char **argv)
{
    *o = (struct pipe_options){ .separator = ":::" };
    time_limit_defaults(&o->time_limit);
    o->time_limit.signal_fd = -1;
    int r = read_options(argc, argv, "+:vhs:k:", long_options, timeout_option_names, "pipe",
                         apply_option, o);
    if (r >= 0)
        return r;
    if (optind >= argc) {
        cli_error("pipe: no command given (see forkless pipe --help)");
        return EXIT_FORKLESS_ERROR;
    }
    if (split_stages(o, argv + optind, argc - optind) != 0)
        return EXIT_FORKLESS_ERROR;
    return -1;
}

void free_pipe_options(struct pipe_options *o)
{
    free(o->stages);
    o->stages = NULL;
}

/* The exit status of the ended pipeline. A timeout gives 124, or 128+9
 * when a stage took the timeout's SIGKILL (one that a stage sent itself
 * before the time was up, or the OOM killer's, is no sign that the stop
 * needed it); otherwise the
 * status of the stage that pipefail (or --last) picks: its exit code,
 * or for a signal N 128+N, with *die_by set to N so that forkless dies
 * by N itself, as run does for its child. */
static int pipeline_status(const struct pipe_options *o, const struct fl_result *res,
                           int *die_by)
{
    *die_by = 0;
    if (res[0].timed_out) {
        for (size_t k = 0; k < o->n && res[0].killed; k++)
            if (res[k].signal == SIGKILL)
                return 128 + SIGKILL;
        return EXIT_TIMED_OUT;
    }
    int k = o->last ? (int)o->n - 1 : fl_pipefail(res, o->n);
    if (k < 0)
        return 0;
    *die_by = res[k].signal;
    return fl_result_shell_status(&res[k]);
}

/* -v: one line a stage, "stage 2 (grep): exit 1 after 0.004 s". A
 * stage's time runs from its start to its reap, and the stages are
 * reaped together once the last has ended. */
static void report_stages(const struct pipe_options *o, const struct fl_result *res)
{
    char how[48], name[16];
    for (size_t k = 0; k < o->n; k++) {
        if (res[k].signal)
            snprintf(how, sizeof how, "signal %s",
                     signal_name(res[k].signal, name, sizeof name));
        else
            snprintf(how, sizeof how, "exit %d", res[k].exit_code);
        cli_error("stage %zu (%s): %s after %.3f s%s", k + 1, o->stages[k][0], how,
                  (double)res[k].elapsed_ns / 1e9, res[k].timed_out ? " (timed out)" : "");
    }
}

/* --time: one line a stage, "stage 2 (grep): elapsed 0.004s user ...". */
static void time_stages(const struct pipe_options *o, const struct fl_result *res)
{
    char who[96];
    for (size_t k = 0; k < o->n; k++) {
        snprintf(who, sizeof who, "stage %zu (%.40s)", k + 1, o->stages[k][0]);
        report_time(who, &res[k]);
    }
}

/* A stage that could not start, as fl_error_format() names it:
 * "forkless: pipe: stage 2: exec "nope": ...", with the prefix of
 * every other message. */
static int report_start_failure(const struct fl_cmd *stages, const struct fl_error *e)
{
    char message[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 128];
    struct fl_error said = *e;
    reword_error(&said, NULL, 0);  /* pipe has no --shell-fallback */
    fl_error_format(&said, message, sizeof message);
    cli_error("pipe: %s", message);
    return e->stage > 0 ? spawn_failure_status(&stages[e->stage - 1], e)
                        : EXIT_FORKLESS_ERROR;
}

static int run_pipeline(struct pipe_options *o, struct fl_cmd *stages,
                        struct fl_result *res, int *die_by)
{
    for (size_t k = 0; k < o->n; k++)
        stages[k].argv = o->stages[k];
    /* The stages always lead a group of their own (the library makes
     * it): what forkless passes on, and the timeout, go to all of it. */
    o->time_limit.own_group = true;
    o->time_limit.relay_job = true;
    o->time_limit.lend_tty_when_alone = true;
    sigset_t old_mask;
    int r = supervise_start(&o->time_limit, &old_mask);
    if (r != 0) {
        supervise_start_error(r);
        return EXIT_FORKLESS_ERROR;
    }
    /* As in run.c: an ignored SIGCHLD would make the kernel discard the
     * stages' statuses. The stages get every signal at its default. */
    signal(SIGCHLD, SIG_DFL);

    struct fl_pipeline pl;
    struct fl_error error;
    if (fl_pipeline_spawn(stages, o->n, &pl, &error) != 0) {
        supervise_end(&o->time_limit);
        return report_start_failure(stages, &error);
    }
    /* On forkless's terminal, the stages' group gets it where that takes
     * it from no one, or once a stage asks (supervise.c's job control);
     * it is forkless's again before any message. */
    r = supervise_pipeline(&pl, &o->time_limit, res);
    supervise_end(&o->time_limit);
    if (r != 0) {
        /* None is to outlive forkless: SIGKILL to what is left, reaped. */
        for (size_t k = 0; k < pl.n; k++)
            fl_kill(&pl.procs[k], SIGKILL);
        fl_killpg(&pl.procs[0], SIGKILL);
        fl_pipeline_wait(&pl, -1, NULL, res);
        fl_pipeline_close(&pl);
        if (r == ECHILD)
            cli_error("pipe: a stage ended, but its exit status was lost (another "
                      "waiter took it)");
        else
            cli_error("pipe: waiting for the stages: %s", strerror(r));
        return EXIT_FORKLESS_ERROR;
    }
    fl_pipeline_close(&pl);
    if (o->verbose)
        report_stages(o, res);
    if (o->time)
        time_stages(o, res);
    return pipeline_status(o, res, die_by);
}

int pipe_main(int argc, char **argv)
{
    struct pipe_options o;
    int die_by = 0;
    bool terminal_was_lent = false;
    int status = parse_pipe_options(&o, argc, argv);
    o.time_limit.terminal_was_lent = &terminal_was_lent;
    if (status < 0) {
        struct fl_cmd *stages = calloc(o.n, sizeof *stages);
        struct fl_result *res = calloc(o.n, sizeof *res);
        if (stages && res) {
            status = run_pipeline(&o, stages, res, &die_by);
        } else {
            cli_error("out of memory");
            status = EXIT_FORKLESS_ERROR;
        }
        free(stages);
        free(res);
    }
    free_pipe_options(&o);
    if (die_by)
        die_by_signal(die_by, terminal_was_lent);
    return status;
}
