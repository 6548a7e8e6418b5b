/* cli.h: what the parts of the `forkless` command share. */
#ifndef FL_TOOLS_CLI_H
#define FL_TOOLS_CLI_H

/* Exit codes of `forkless run` (design decision D8); otherwise the
 * program's own status. For a program killed by signal N, forkless dies
 * by N itself (a shell shows 128+N), or exits 128+N if N does not kill it.
 * After a timeout: 124, or 128+9 when the program took SIGKILL. */
enum {
    EXIT_TIMED_OUT = 124,
    EXIT_FORKLESS_ERROR = 125,  /* bad option, or a setup step before exec */
    EXIT_CANNOT_EXECUTE = 126,  /* found, but exec refused it */
    EXIT_NOT_FOUND = 127,
};

/* Prints "forkless: <message>\n" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* `forkless run ...`: argv[0] is "run". Returns the exit status. */
int run_main(int argc, char **argv);

/* `forkless pipe ...` (pipe.c): argv[0] is "pipe". */
int pipe_main(int argc, char **argv);

#endif
