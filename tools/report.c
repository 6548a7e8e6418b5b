/* report.c: `forkless run --time` and `forkless pipe --time`, from the
 * figures of fl_wait_result(), and the library's errors as the command
 * line says them. */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

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

static const char shell_flag[] = "FL_SHELL_FALLBACK";

/* The library's detail names its flag where the CLI has an option, no
 * longer than the flag's name: the option it is. */
static void name_the_option(char *detail, const char *option)
{
    char *flag = strstr(detail, shell_flag);
    size_t len = strlen(option);
    if (!flag || len > sizeof shell_flag - 1)
        return;
    char *after = flag + sizeof shell_flag - 1;
    memmove(flag + len, after, strlen(after) + 1);
    memcpy(flag, option, len);
}

void reword_error(struct fl_error *e, const char *shell_fallback, unsigned cmd_flags)
{
    if (e->step == FL_STEP_EXEC && e->err == ENOEXEC && !(cmd_flags & FL_SHELL_FALLBACK)) {
        /* The library's cause stays (no #! line, or one the kernel will
         * not read); its hint names the library's flag. */
        char *flag_hint = strstr(e->detail, " (FL_SHELL_FALLBACK");
        if (flag_hint)
            *flag_hint = '\0';
        if (!e->detail[0])
            snprintf(e->detail, sizeof e->detail, "not an executable format and no #! line");
        size_t n = strlen(e->detail);
        if (shell_fallback)
            snprintf(e->detail + n, sizeof e->detail - n, "; %s runs it with /bin/sh",
                     shell_fallback);
    } else if (e->step == FL_STEP_EXEC && (cmd_flags & FL_SHELL_FALLBACK) && shell_fallback) {
        /* The shell failed, or its lists were too long: said with the
         * option's name. */
        name_the_option(e->detail, shell_fallback);
    } else if (e->step == FL_STEP_CLONE && (e->err == EMFILE || e->err == ENFILE) &&
               strstr(e->detail, "pidfd")) {
        /* forkless needs the pidfd (it waits on it): the limit is the cause.
         * Another fd (the fork backend's error pipe) keeps its own words. */
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

/* The initial user namespace has a fixed inode number (PROC_USER_INIT_INO
 * in the kernel's proc_ns.h); its map cannot tell it: a new namespace may
 * map every id to itself, or have no map yet. */
static bool in_initial_user_ns(void)
{
    struct stat st;
    if (stat("/proc/self/ns/user", &st) != 0)
        return true;  /* no /proc: say nothing rather than guess */
    return st.st_ino == 0xEFFFFFFDu;
}

const char *init_ns_scope(bool new_userns)
{
    if (new_userns)
        return " outside the new user namespace";
    return in_initial_user_ns() ? "" : " in the initial user namespace";
}

void rlimit_hint(const struct fl_rlimit *rl, int err, bool new_userns, char *buf, size_t size)
{
    char soft[24], hard[24];
    unsigned long long ceiling;
    buf[0] = '\0';
    if (err == EPERM && rl->resource == RLIMIT_NOFILE && (ceiling = nr_open()) &&
        (rl->hard > ceiling || rl->soft > ceiling))
        snprintf(buf, size, ": no RLIMIT_NOFILE may exceed fs.nr_open (%llu), even with "
                 "privilege", ceiling);
    else if (err == EPERM)
        snprintf(buf, size, ": raising a hard limit needs privilege, CAP_SYS_RESOURCE%s",
                 init_ns_scope(new_userns));
    else if (err == EINVAL && rl->soft > rl->hard)  /* RLIM_INFINITY is the largest */
        snprintf(buf, size, ": the soft limit %s cannot exceed the hard limit %s",
                 limit_text(rl->soft, soft, sizeof soft), limit_text(rl->hard, hard, sizeof hard));
}
