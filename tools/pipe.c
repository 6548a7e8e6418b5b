/* pipe.c: `forkless pipe`. The options and the stages are parsed here;
 * running them needs the library's fl_pipeline_spawn() and
 * fl_pipeline_wait() (src/pipeline.c), which this build does not have
 * yet: until then the command says so and runs nothing. */
#include "pipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "optloop.h"
#include "options.h"

enum { OPT_TIMEOUT = 256, OPT_KILL_AFTER, OPT_NO_KILL, OPT_SIGNAL, OPT_LAST, OPT_SEPARATOR };

static const struct option long_options[] = {
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "kill-after", required_argument, NULL, OPT_KILL_AFTER },
    { "no-kill", no_argument, NULL, OPT_NO_KILL },
    { "signal", required_argument, NULL, OPT_SIGNAL },
    { "last", no_argument, NULL, OPT_LAST },
    { "separator", required_argument, NULL, OPT_SEPARATOR },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* read_options()'s callback. */
static int apply_option(void *ctx, int opt, const char *arg)
{
    struct pipe_options *o = ctx;
    switch (opt) {
    case 'h':
        print_pipe_help();
        return 1;
    case OPT_TIMEOUT:
    case OPT_KILL_AFTER:
    case OPT_NO_KILL:
    case OPT_SIGNAL:
        return time_limit_option(&o->time_limit, long_option_name(long_options, opt), arg);
    case OPT_LAST:
        o->last = true;
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
    int r = read_options(argc, argv, "+:vh", long_options, "pipe", apply_option, o);
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

int pipe_main(int argc, char **argv)
{
    struct pipe_options o;
    int status = parse_pipe_options(&o, argc, argv);
    if (status < 0) {
        cli_error("pipe: not available in this build: the library has no "
                  "fl_pipeline_spawn() yet; nothing was run");
        status = EXIT_FORKLESS_ERROR;
    }
    free_pipe_options(&o);
    return status;
}
