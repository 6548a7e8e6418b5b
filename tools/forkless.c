/* forkless.c: the `forkless` command: dispatches to `run`, `pipe` and
 * `bench`. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "forkless.h"

#ifdef FL_HAVE_BENCH
#include "bench.h"
#endif

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("forkless: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

char *cli_absolute_path(const char *path)
{
    /* "" stays "": no file has that name (ENOENT, as for a shell's
     * `< ""`), where the cwd's name would open the directory. */
    if (path[0] == '/' || path[0] == '\0')
        return strdup(path);
    char *cwd = getcwd(NULL, 0);
    char *out = NULL;
    if (cwd && asprintf(&out, "%s/%s", cwd, path) < 0)
        out = NULL;
    free(cwd);
    return out;
}

/* As coreutils' close_stdout(): output that did not reach stdout
 * (>/dev/full, a closed fd 1) must not pass for a success. Returns 0 or
 * EXIT_FORKLESS_ERROR, with the message. */
static int stdout_written(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    if (errno)
        cli_error("write error: %s", strerror(errno));
    else
        cli_error("write error");
    return EXIT_FORKLESS_ERROR;
}

int print_stdout(void (*print)(void))
{
    /* errno is cleared first: after a write failed inside print, fflush()
     * may have nothing left to write, and errno is then that write's. */
    errno = 0;
    print();
    return stdout_written();
}

void print_version(void)
{
    printf("forkless %s\n", FL_VERSION_STRING);
    if (strcmp(fl_version(), FL_VERSION_STRING) != 0)
        printf("libforkless %s\n", fl_version());
}

static void print_help(FILE *out)
{
    fputs("Usage: forkless run [OPTIONS] [--] [NAME=VALUE]... PROGRAM [ARG]...\n"
          "       forkless pipe [OPTIONS] [--] CMD [ARG]... ::: CMD [ARG]...\n"
          "       forkless bench [SUITE] [OPTIONS]\n"
          "       forkless --help | --version\n"
          "\n"
          "Start programs without fork(): clone(CLONE_VM|CLONE_VFORK), a clean child,\n"
          "exact errors and exit codes.\n"
          "\n"
          "  run     run one program (see forkless run --help)\n"
          "  pipe    run a pipeline without a shell (see forkless pipe --help)\n"
          "  bench   measure process creation against its peers\n"
          "          (see forkless bench --help)\n", out);
}

static void print_help_stdout(void)
{
    print_help(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_error("no command given");
        print_help(stderr);
        return EXIT_FORKLESS_ERROR;
    }
    const char *command = argv[1];
    if (strcmp(command, "run") == 0)
        return run_main(argc - 1, argv + 1);
    if (strcmp(command, "pipe") == 0)
        return pipe_main(argc - 1, argv + 1);
    if (strcmp(command, "bench") == 0) {
#ifdef FL_HAVE_BENCH
        /* The tables go to stdout: lost, they are no success either. */
        errno = 0;
        int r = fl_bench_main(argc - 1, argv + 1);
        int w = stdout_written();
        return r ? r : w;
#else
        cli_error("bench: this build has no benchmarks");
        return EXIT_FORKLESS_ERROR;
#endif
    }
    if (strcmp(command, "-h") == 0 || strcmp(command, "--help") == 0)
        return print_stdout(print_help_stdout);
    if (strcmp(command, "--version") == 0)
        return print_stdout(print_version);
    cli_error("unknown command \"%s\" (try forkless --help)", command);
    return EXIT_FORKLESS_ERROR;
}
