/*
 * system.c: a system() replacement without a shell.
 *
 * system("cmd") hands a string to /bin/sh, so quoting mistakes and
 * injection come with it, and "exit status 127" can mean either "the
 * command said 127" or "the shell could not find it". my_system() below
 * takes an argv instead, reports a program that cannot start as an error
 * (with the step and the path), and returns the status as a shell would
 * show it: the exit code, or 128 + the signal.
 *
 * Build: cc system.c -lforkless        Run: ./system [PROGRAM [ARG]...]
 * Without arguments it runs a few commands that show each outcome.
 */
#include <forkless.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

/*
 * Runs argv[0] with its arguments (searched in PATH), waits for it, and
 * returns its shell status (0-255), or -1 when it could not be started
 * (the reason is printed). Like system(), the caller ignores SIGINT and
 * SIGQUIT while the child runs, so that a Ctrl-C at the terminal stops
 * the child, not the caller. As with system(), which restores the two in
 * its child before the exec, the child does not inherit that; forkless
 * goes further: it resets every signal to its default in the child
 * (SIGPIPE too, and any the caller ignored before), empties its signal
 * mask and closes every fd but 0, 1 and 2.
 */
static int my_system(char *const argv[])
{
    /* All-zero fields mean the defaults: stdin, stdout and stderr are the
     * caller's own, the environment is a copy of ours, the cwd is ours. */
    struct fl_cmd cmd = { .argv = argv };

    /* Our stdout is a buffered FILE: flush it, or what we printed before
     * would show up after the child's output when stdout is a pipe. */
    fflush(stdout);

    /* What system() does to the caller's signals. sigaction() is process-
     * wide: in a threaded program, leave this out (or block the signals in
     * the calling thread with pthread_sigmask()). */
    struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);

    /* fl_run() starts the command, waits for it and fills the result.
     * With io NULL there is nothing to feed or capture, and no deadline. */
    struct fl_result res = { 0 };   /* zero: safe to free whatever fails */
    struct fl_error err;
    int rc = fl_run(&cmd, NULL, &res, &err);

    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);

    if (rc != 0) {
        char msg[512];
        if (err.step != FL_STEP_NONE)
            /* Not started: say exactly why, as in
             *   exec "nope": No such file or directory (not found in PATH) */
            printf("  not started: %s\n", fl_error_format(&err, msg, sizeof msg));
        else
            /* Started, but the wait failed (an errno of poll() or waitid());
             * *error is clear then, and the result is filled: free it. */
            printf("  not waited for: %s\n", strerror(rc));
        fl_result_free(&res);
        return -1;
    }
    if (res.signal)
        printf("  killed by signal %d (%s)%s\n", res.signal, strsignal(res.signal),
               res.core_dumped ? ", core dumped" : "");
    else
        printf("  exit code %d\n", res.exit_code);
    int status = fl_result_shell_status(&res);   /* exit code, or 128 + signal */
    fl_result_free(&res);                        /* nothing captured: a no-op, but the rule */
    return status;
}

/* Prints the command, runs it and prints its shell status. */
static int show(char *const argv[])
{
    printf("$");
    for (int i = 0; argv[i]; i++)
        printf(" %s", argv[i]);
    printf("\n");
    int status = my_system(argv);
    if (status >= 0)
        printf("  shell status %d\n", status);
    return status;
}

int main(int argc, char **argv)
{
    if (argc > 1) {   /* ./system ls -l /tmp: run that, return its status */
        int status = show(argv + 1);
        return status < 0 ? 127 : status;
    }

    /* The argv arrays are compound literals: no string to quote. */
    show((char *const[]){ "true", NULL });
    show((char *const[]){ "false", NULL });
    /* A shell is a program like any other when you do want one: */
    show((char *const[]){ "sh", "-c", "echo hello from a child; exit 3", NULL });
    show((char *const[]){ "sh", "-c", "kill -TERM $$", NULL });
    /* The argument is one word whatever it holds: no globbing, no $(...). */
    show((char *const[]){ "echo", "*", "$(id)", "; rm -rf ~", NULL });
    /* system() would say 127 here; this is an error with its reason. */
    show((char *const[]){ "no-such-program-here", NULL });
    return 0;
}
