/* pipe.h: `forkless pipe [OPTIONS] [--] CMD [ARG]... ::: CMD [ARG]...`:
 * a | b | c without a shell, each stage with its own argv. */
#ifndef FL_TOOLS_PIPE_H
#define FL_TOOLS_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervise.h"

struct pipe_options {
    /* Stage k's argv, NULL-terminated: the words between separators,
     * the separators themselves overwritten with NULL in place. */
    char ***stages;
    size_t n;
    const char *separator;   /* ":::" unless --separator */
    /* --timeout (the whole pipeline's), --kill-after, --no-kill and
     * --signal, as `forkless run` reads them. */
    struct supervise_options time_limit;
    bool last;               /* exit as the last stage, not pipefail */
    bool verbose;            /* each stage's end on stderr */
    bool time;               /* --time: each stage's figures (report.h) */
};

/* Parses the arguments of `forkless pipe` (argv[0] is "pipe") into o.
 * Returns -1 when the pipeline is ready to run, else the exit status: 0
 * after --help, 125 after a message. */
int parse_pipe_options(struct pipe_options *o, int argc, char **argv);

void free_pipe_options(struct pipe_options *o);

/* `forkless pipe --help` (pipe_help.c). */
void print_pipe_help(void);

#endif
