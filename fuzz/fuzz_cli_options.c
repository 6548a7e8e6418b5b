/*
 * fuzz_cli_options: the option parser of `forkless run`. The input is split
 * on NUL bytes into the words after "run"; parse_run_options() must return
 * 0, 125 or -1 (ready), never crash, leak or exit.
 *
 * parse_run_options() is written for one call per process: it sets
 * optind = 1, which does not reset getopt's scan position inside a word
 * ("-vh" stops at 'h' and keeps a pointer into that argv). Before each
 * call the harness resets getopt fully (optind = 0 and a dry run), as a
 * second caller of the parser would have to.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"

/* The real one (tools/forkless.c) prints; here the messages go nowhere,
 * but the format is still evaluated. */
void cli_error(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!buf[0])
        abort(); /* every message says something */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* --help and --version print to stdout. */
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        dup2(fd, 1);
        close(fd);
    }
    return 0;
}

static void reset_getopt(void)
{
    char *dry[] = { "run", NULL };
    optind = 0;
    opterr = 0;
    while (getopt_long(1, dry, "+:C:e:u:ivh", (struct option[]){ { 0 } }, NULL) != -1)
        ;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    /* Copy into one buffer, NUL-terminated, and cut it into words. */
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = 0;
    size_t nwords = 1;
    for (size_t i = 0; i < size; i++)
        nwords += buf[i] == 0;
    char **argv = calloc(nwords + 2, sizeof *argv);
    int argc = 0;
    argv[argc++] = "run";
    for (size_t i = 0, start = 0; i <= size; i++)
        if (buf[i] == 0) {
            argv[argc++] = buf + start;
            start = i + 1;
        }
    argv[argc] = NULL;

    reset_getopt();
    struct run_options o;
    memset(&o, 0, sizeof o);
    int r = parse_run_options(&o, argc, argv);
    if (r != -1 && r != 0 && r != EXIT_FORKLESS_ERROR)
        abort();
    if (r == -1) {
        /* Ready: the command must be one fl_spawn() accepts as to shape. */
        if (!o.cmd.argv || !o.cmd.argv[0])
            abort();
        if (o.cmd.nfds && !o.cmd.fds)
            abort();
        if (o.cmd.nrlimits && !o.cmd.rlimits)
            abort();
        for (size_t i = 0; i < o.cmd.nfds; i++)
            if (o.cmd.fds[i].child_fd < 0 || o.cmd.fds[i].parent_fd < 0)
                abort();
        for (size_t i = 0; o.cmd.env_set && o.cmd.env_set[i]; i++)
            if (!strchr(o.cmd.env_set[i], '=') || o.cmd.env_set[i][0] == '=')
                abort();
        if ((o.cmd.flags & FL_SET_UMASK) && o.cmd.umask > 0777)
            abort();
    }
    free_run_options(&o);
    free(argv);
    free(buf);
    return 0;
}
