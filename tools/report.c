/* report.c: `forkless run --time` and `forkless pipe --time`, from the
 * figures of fl_wait_result(), and the library's errors as the command
 * line says them. */
#include "report.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"

static double seconds(const struct timeval *tv)
{
    return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

void report_time(const char *who, const struct fl_result *r)
{
    /* Linux gives ru_maxrss in KiB. */
    cli_error("%s%selapsed %.3fs user %.3fs sys %.3fs maxrss %ldKiB", who ? who : "", who ? ": " : "", (double)r->elapsed_ns / 1e9,
              seconds(&r->rusage.ru_utime), seconds(&r->rusage.ru_stime),
              (long)r->rusage.ru_maxrss);
}

/* How the library's detail begins when FL_SHELL_FALLBACK's shell failed. */
static const char shell_that[] = "the shell that ", shell_flag[] = "FL_SHELL_FALLBACK";

static bool names_the_flag(const char *detail)
{
    size_t n = sizeof shell_that - 1;
    return strncmp(detail, shell_that, n) == 0 &&
           strncmp(detail + n, shell_flag, sizeof shell_flag - 1) == 0;
}

void reword_error(struct fl_error *e, const char *shell_fallback, unsigned cmd_flags)
{
    if (e->step == FL_STEP_EXEC && e->err == ENOEXEC) {
        /* The library's cause stays (no #! line, or one the kernel will
         * not read); its hint names the library's flag. */
        char *flag_hint = strstr(e->detail, " (FL_SHELL_FALLBACK");
        if (flag_hint)
            *flag_hint = '\0';
        if (!e->detail[0])
            snprintf(e->detail, sizeof e->detail, "not an executable format and no #! line");
        size_t n = strlen(e->detail);
        if (shell_fallback && !(cmd_flags & FL_SHELL_FALLBACK))
            snprintf(e->detail + n, sizeof e->detail - n, "; %s runs it with /bin/sh",
                     shell_fallback);
    } else if (e->step == FL_STEP_EXEC && shell_fallback && names_the_flag(e->detail) &&
               strlen(shell_fallback) <= sizeof shell_flag - 1) {
        /* The shell failed, not the file: said with the option's name. */
        char *flag = e->detail + sizeof shell_that - 1, *after = flag + sizeof shell_flag - 1;
        size_t len = strlen(shell_fallback);
        memmove(flag + len, after, strlen(after) + 1);
        memcpy(flag, shell_fallback, len);
    } else if (e->step == FL_STEP_CLONE && (e->err == EMFILE || e->err == ENFILE)) {
        /* forkless needs the pidfd (it waits on it): the limit is the cause. */
        snprintf(e->detail, sizeof e->detail, "no fd left for the program's pidfd: %s",
                 e->err == EMFILE ? "the fd limit, RLIMIT_NOFILE, is reached"
                                  : "the system's file table is full");
    }
}

/* A limit as --rlimit takes it: a number, or "unlimited". */
static const char *limit_text(rlim_t v, char *buf, size_t size)
{
    if (v == RLIM_INFINITY)
        snprintf(buf, size, "unlimited");
    else
        snprintf(buf, size, "%llu", (unsigned long long)v);
    return buf;
}

/* The kernel's ceiling on RLIMIT_NOFILE, for everyone: fs.nr_open. */
static unsigned long long nr_open(void)
{
    unsigned long long n = 0;
    FILE *f = fopen("/proc/sys/fs/nr_open", "re");
    if (f) {
        if (fscanf(f, "%llu", &n) != 1)
            n = 0;
        fclose(f);
    }
    return n;
}

void rlimit_hint(const struct fl_rlimit *rl, int err, char *buf, size_t size)
{
    char soft[24], hard[24];
    unsigned long long ceiling;
    buf[0] = '\0';
    if (err == EPERM && rl->resource == RLIMIT_NOFILE && (ceiling = nr_open()) &&
        (rl->hard > ceiling || rl->soft > ceiling))
        snprintf(buf, size, ": no RLIMIT_NOFILE may exceed fs.nr_open (%llu), even with "
                 "privilege", ceiling);
    else if (err == EPERM)
        snprintf(buf, size, ": raising a hard limit needs privilege, CAP_SYS_RESOURCE");
    else if (err == EINVAL && rl->soft > rl->hard)  /* RLIM_INFINITY is the largest */
        snprintf(buf, size, ": the soft limit %s cannot exceed the hard limit %s",
                 limit_text(rl->soft, soft, sizeof soft), limit_text(rl->hard, hard, sizeof hard));
}
