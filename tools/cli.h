/* cli.h: what the parts of the `forkless` command share. */
#ifndef FL_TOOLS_CLI_H
#define FL_TOOLS_CLI_H

#include <stdbool.h>

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

struct fl_cmd;
struct fl_error;

/* The exit status for a failed fl_spawn() of cmd (or fl_pipeline_spawn()
 * of a stage, cmd being that stage), per D8: 127 not found, 126 found but
 * not executable, 125 another step (run.c). */
int spawn_failure_status(const struct fl_cmd *cmd, const struct fl_error *e);

/* Ends forkless by signal sig, as the child (or the pipeline's stage)
 * whose status it passes on ended, without a core dump of its own
 * (run.c). Returns only if sig does not kill. */
void die_by_signal(int sig, bool terminal_was_lent);

/* Prints "forkless: <message>\n" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* path from the current directory, made absolute (malloc'ed; "" and an
 * absolute path are copied as they are). NULL: no memory, or no name for
 * the current directory (getcwd()'s errno). */
char *cli_absolute_path(const char *path);

/* --help and --version: runs print, which writes to stdout, and flushes
 * stdout. Returns 0, or EXIT_FORKLESS_ERROR after "forkless: write
 * error: <strerror>" when the text could not be written (forkless.c). */
int print_stdout(void (*print)(void));

/* --version: "forkless <FL_VERSION_STRING>\n" to stdout, and a second
 * line "libforkless <fl_version()>" where the library that runs is not
 * the one of the header forkless was built with (forkless.c). */
void print_version(void);

/* `forkless run ...`: argv[0] is "run". Returns the exit status. */
int run_main(int argc, char **argv);

/* `forkless pipe ...` (pipe.c): argv[0] is "pipe". */
int pipe_main(int argc, char **argv);

#endif
