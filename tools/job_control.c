/* job_control.c: forkless's controlling terminal and its program's (or
 * its stages') process group. See job_control.h, and job_stopped() in
 * supervise.c for when the terminal is lent. */
#include "job_control.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Is /proc/PID/stat a live process of group pgrp? */
static bool in_group(const char *pid, pid_t pgrp)
{
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;  /* gone meanwhile */
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "PID (COMM) STATE PPID PGRP ...": COMM may hold ')' too. */
    const char *p = strrchr(buf, ')');
    char state;
    long ppid, group;
    return p && sscanf(p + 1, " %c %ld %ld", &state, &ppid, &group) == 3 && state != 'Z' &&
           group == (long)pgrp;
}

bool job_group_shared(void)
{
    if (!proc_is_ours())
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

void stop_by_sigtstp(void)
{
    struct sigaction dfl = { .sa_handler = SIG_DFL }, old;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGTSTP, &dfl, &old);
    sigset_t tstp, mask;
    sigemptyset(&tstp);
    sigaddset(&tstp, SIGTSTP);
    pthread_sigmask(SIG_UNBLOCK, &tstp, &mask);
    raise(SIGTSTP);  /* returns once continued */
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    sigaction(SIGTSTP, &old, NULL);
}
