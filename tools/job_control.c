/* job_control.c: forkless's controlling terminal and its program's (or
 * its stages') process group. See job_control.h, and job_stopped() in
 * supervise.c for when the terminal is lent. */
#include "job_control.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "forkless.h"
#include "killtree.h"

int job_tty(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (isatty(fd) && tcgetpgrp(fd) > 0)  /* ENOTTY: not our controlling one */
            return fd;
    return -1;
}

/* Is /proc/PID a live process of group pgrp? One whose stat may not be
 * read may be. */
static bool in_group(const char *pid, pid_t pgrp)
{
    char state;
    long ppid, group;
    if (!proc_stat_read(pid, &state, &ppid, &group))
        return errno != ENOENT && errno != ESRCH;  /* not gone meanwhile */
    return state != 'Z' && group == (long)pgrp;
}

/* A /proc mounted with hidepid hides other users' processes (2,
 * invisible) or their stat (1, noaccess) from this one. */
static bool proc_hides_processes(void)
{
    FILE *f = fopen("/proc/self/mounts", "re");
    if (!f)
        return true;
    char line[1024], dir[256], type[64], opts[512];
    bool hides = false;
    while (!hides && fgets(line, sizeof line, f))
        if (sscanf(line, "%*s %255s %63s %511s", dir, type, opts) == 3 &&
            !strcmp(dir, "/proc") && !strcmp(type, "proc")) {
            const char *h = strstr(opts, "hidepid=");
            hides = h && strncmp(h, "hidepid=0", 9) != 0 && strncmp(h, "hidepid=off", 11) != 0;
        }
    fclose(f);
    return hides;
}

/* A fifo among 0-2, or a group another made (forkless is not its
 * leader), says that forkless is one of several in its job: a shell's
 * pipeline (`forkless pipe a ::: b | less`, where the pager may join the
 * group only after the scan below), or a script. */
static bool in_a_pipeline(void)
{
    if (getpgrp() != getpid())
        return true;
    for (int fd = 0; fd < 3; fd++) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
            return true;
    }
    return false;
}

bool job_group_shared(void)
{
    if (in_a_pipeline() || !proc_is_ours() || proc_hides_processes())
        return true;
    DIR *dir = opendir("/proc");
    if (!dir)
        return true;
    pid_t me = getpid(), pgrp = getpgrp();
    bool shared = false;
    struct dirent *e;
    while (!shared && (e = readdir(dir)))
        shared = e->d_name[0] >= '1' && e->d_name[0] <= '9' && atol(e->d_name) != (long)me &&
                 in_group(e->d_name, pgrp);
    closedir(dir);
    return shared;
}

bool job_tty_lend(int tty, pid_t pgid)
{
    bool lent = false;
    if (tcgetpgrp(tty) == getpgrp()) {
        sigset_t ttou, old;
        sigemptyset(&ttou);
        sigaddset(&ttou, SIGTTOU);
        pthread_sigmask(SIG_BLOCK, &ttou, &old);
        lent = tcsetpgrp(tty, pgid) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return lent;
}

void job_tty_reclaim(int tty, pid_t pgid)
{
    if (tcgetpgrp(tty) == pgid)
        fl_tty_reclaim(tty);
}

/* SIGCONT, blocked while forkless stops, still continues it, and stays
 * pending to say that it did stop: a SIGTSTP to an orphaned group is
 * discarded instead. */
bool stop_by_sigtstp(bool whole_group)
{
    struct sigaction dfl = { .sa_handler = SIG_DFL }, old;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGTSTP, &dfl, &old);
    sigset_t tstp, cont, mask, pending;
    sigemptyset(&tstp);
    sigaddset(&tstp, SIGTSTP);
    sigemptyset(&cont);
    sigaddset(&cont, SIGCONT);
    const struct timespec now = { 0, 0 };
    pthread_sigmask(SIG_BLOCK, &cont, &mask);
    while (sigtimedwait(&cont, NULL, &now) == SIGCONT)
        ;  /* an earlier one says nothing of this stop */
    pthread_sigmask(SIG_UNBLOCK, &tstp, NULL);
    if (whole_group)
        kill(0, SIGTSTP);  /* returns once continued */
    else
        raise(SIGTSTP);
    pthread_sigmask(SIG_BLOCK, &tstp, NULL);
    bool stopped = sigpending(&pending) == 0 && sigismember(&pending, SIGCONT) == 1;
    while (sigtimedwait(&cont, NULL, &now) == SIGCONT)
        ;
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    sigaction(SIGTSTP, &old, NULL);
    return stopped;
}
