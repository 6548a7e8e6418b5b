/* stop.c: a stop policy in motion: the first signal, the grace period,
 * SIGKILL, for one process or the stages of a pipeline, reaching the
 * process alone, its group or its cgroup.
 *
 * Nothing here reaps. A process that has ended stays a zombie until the
 * caller reaps it after fl__stop_finish(), and a zombie's pid stays
 * reserved: while the group's leader is unreaped, kill(-leader) can only
 * reach that group, never one that a stranger made with a reused pid. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

enum { STOP_IDLE, STOP_SIGNALLED, STOP_KILLED };

int fl__stop_init(struct fl__stopper *s, struct fl_proc *procs, size_t n,
                  const struct fl_stop_policy *policy, const char *default_cgroup)
{
    static const struct fl_stop_policy zero;
    const struct fl_stop_policy *pol = policy ? policy : &zero;
    *s = (struct fl__stopper){ .procs = procs, .n = n, .kill_at_ns = -1 };
    for (size_t i = 0; i < sizeof pol->reserved_ / sizeof *pol->reserved_; i++)
        if (pol->reserved_[i])
            return EINVAL;
    if (pol->signal < 0 || pol->signal >= NSIG || pol->grace_ms < FL_STOP_NEVER_KILL)
        return EINVAL;
    s->signal = pol->signal ? pol->signal : SIGTERM;
    s->grace_ms = pol->grace_ms ? pol->grace_ms : FL_STOP_GRACE_MS;
    s->scope = pol->scope;
    switch (pol->scope) {
    case FL_STOP_PROCESS:
        break;
    case FL_STOP_GROUP:
        /* The leader must have made a group: else kill(-pid) names none,
         * or one that is not the child's. One that has left the group it
         * made since (setpgid() to another) is still stopped with it: the
         * group keeps the leader's pid as its id, which no one else can
         * have while the leader is unreaped, and the leader gets its
         * signal through its pidfd. A leader whose status was taken
         * elsewhere leads nothing the stop could reach (fl_killpg() sends
         * nothing then), and the wait says ECHILD. Raw, so that errno is
         * left as it was. */
        if (!n)
            return EINVAL;
        /* A launch's child stopped before it made its group will lead
         * it alone: the signals reach it through its pidfd meanwhile
         * (fl__killpg()), and its group once it has made one. */
        if (!fl__launch_await_group(&procs[0]))
            break;
        if (fl__sys1(SYS_getpgid, procs[0].pid) != procs[0].pid && fl__proc_unreaped(&procs[0])) {
            /* A launch that failed before its setsid() or setpgid() has
             * no group, and, settled, is reaped: nothing is left to stop,
             * and the caller's reap gives the launch's own error, with
             * what it fills (a result, the handle's pipes taken) filled
             * as for any failed launch. Its word is clear by now (or it
             * has ended), so the settle does not wait. */
            if (fl__launch_settle(&procs[0])) {
                s->scope = FL_STOP_PROCESS;
                break;
            }
            if (procs[0].state_ != FL__PROC_LEADS_GROUP)
                return EINVAL;
        }
        break;
    case FL_STOP_CGROUP:
        s->cgroup = pol->cgroup ? pol->cgroup : default_cgroup;
        if (!s->cgroup || !s->cgroup[0])
            return EINVAL;
        break;
    default:
        return EINVAL;
    }
    return 0;
}

int fl__stop_check(const struct fl_stop_policy *policy, const char *default_cgroup)
{
    if (!policy)
        return 0;
    struct fl_stop_policy p = *policy;
    if (p.scope == FL_STOP_GROUP)
        p.scope = FL_STOP_PROCESS;  /* no leader yet to look at */
    struct fl__stopper s;
    return fl__stop_init(&s, NULL, 0, &p, default_cgroup);
}

/* The cgroups below one are part of it, as cgroup.kill and
 * cgroup.events' "populated" take them, at any depth (cgroup.max.depth
 * allows any). The walk holds one fd per level: a tree deeper than the
 * fds left, or a cgroup it cannot read, leaves the list partial. */

struct pid_list {
    pid_t *v;
    size_t n, cap;
    bool partial;   /* some of the tree could not be read */
    bool no_fd;     /* ... for want of an fd (EMFILE, ENFILE) */
};

static void add_pid(struct pid_list *l, pid_t pid)
{
    if (pid <= 0)  /* 0: a process of a pid namespace this one cannot see */
        return;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 16;
        pid_t *np = realloc(l->v, ncap * sizeof *np);
        if (!np) {
            l->partial = true;
            return;
        }
        l->v = np;
        l->cap = ncap;
    }
    l->v[l->n++] = pid;
}

/* A cgroup removed while the walk reads it was empty: it held nothing to
 * miss. */
static bool gone(int err)
{
    return err == ENOENT || err == ENODEV;
}

/* What a failed open or read of the walk's (err) makes of the list. */
static void unread(struct pid_list *l, int err)
{
    l->partial |= !gone(err);
    l->no_fd |= err == EMFILE || err == ENFILE;
}

/* The names of the directories in dir (each NUL-ended, an empty one
 * last), read before any is walked into, so that one fd is held per
 * level; malloc'd, or NULL (none, or a failure noted in l). */
static char *sub_cgroups(int dir, struct pid_list *l)
{
    int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        unread(l, errno);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *names = NULL;
    size_t len = 0, cap = 0;
    errno = 0;
    for (struct dirent *e; (e = readdir(d)); errno = 0) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
            continue;
        size_t k = strlen(e->d_name) + 1;
        if (len + k + 1 > cap) {
            size_t ncap = (len + k + 1) * 2;
            char *nn = realloc(names, ncap);
            if (!nn) {
                l->partial = true;
                errno = 0;
                break;
            }
            names = nn;
            cap = ncap;
        }
        memcpy(names + len, e->d_name, k);
        len += k;
    }
    if (errno)  /* readdir() ends with errno set where it failed */
        unread(l, errno);
    closedir(d);
    if (names)
        names[len] = '\0';
    return names;
}

/* Appends the pids of dir's cgroup.procs. */
static void read_procs(int dir, struct pid_list *l)
{
    int fd = openat(dir, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
    if (!f) {
        unread(l, errno);
        if (fd >= 0)
            close(fd);
        return;
    }
    long pid;
    while (fscanf(f, "%ld", &pid) == 1)
        add_pid(l, (pid_t)pid);
    if (ferror(f))
        unread(l, errno);
    fclose(f);
}

/* A cgroup of the walk: its directory, and the names below it still to
 * walk into. */
struct level {
    int dir;
    char *names, *next;
};

/* Appends the pids of the cgroup dir's cgroup.procs, then those of every
 * cgroup below it, depth first, and closes dir. By fds, so that no path
 * length limits the walk, and without recursion: a stack of levels, one
 * fd each. */
static void collect_pids(int dir, struct pid_list *l)
{
    struct level *stack = NULL;
    size_t depth = 0, cap = 0;
    while (dir >= 0 || depth) {
        if (dir >= 0) {  /* a cgroup reached: its pids, then its names */
            read_procs(dir, l);
            char *names = sub_cgroups(dir, l);
            if (depth == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                struct level *ns = realloc(stack, ncap * sizeof *ns);
                if (!ns) {
                    l->partial |= names != NULL;   /* no memory for a level more */
                    free(names);
                    close(dir);
                    dir = -1;
                    continue;
                }
                stack = ns;
                cap = ncap;
            }
            stack[depth++] = (struct level){ dir, names, names };
            dir = -1;
        }
        struct level *top = &stack[depth - 1];
        if (!top->next || !*top->next) {
            close(top->dir);
            free(top->names);
            depth--;
            continue;
        }
        const char *name = top->next;
        top->next += strlen(name) + 1;
        dir = openat(top->dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir < 0 && errno != ENOTDIR && errno != ELOOP)
            unread(l, errno);
    }
    free(stack);
}

static int by_value(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* The pids in cgroup and every cgroup below it, each once (one that moved
 * down the tree as it was read is listed twice by the walk), in a new
 * array; *n gets the count. NULL when none can be read (or there are
 * none, with *n 0). *how, where given, gets what could not be read
 * (.partial, .no_fd). */
static pid_t *cgroup_pids(const char *cgroup, size_t *n, struct pid_list *how)
{
    struct pid_list l = { NULL, 0, 0, false, false };
    int dir = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0)
        collect_pids(dir, &l);
    else
        unread(&l, errno);
    if (l.n > 1) {
        qsort(l.v, l.n, sizeof *l.v, by_value);
        size_t k = 1;
        for (size_t i = 1; i < l.n; i++)
            if (l.v[i] != l.v[k - 1])
                l.v[k++] = l.v[i];
        l.n = k;
    }
    *n = l.n;
    if (how)
        *how = (struct pid_list){ NULL, 0, 0, l.partial, l.no_fd };
    return l.v;
}

/* pids is sorted: cgroup_pids()'s, or the part of it that was sent a
 * signal, in its order. */
static bool listed(const pid_t *pids, size_t n, pid_t pid)
{
    return n && bsearch(&pid, pids, n, sizeof *pids, by_value);
}

/* cgroup.kill (Linux 5.14) kills every member at once, those that fork
 * meanwhile included. */
static bool cgroup_kill(const char *cgroup)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/cgroup.kill", cgroup) >= sizeof path)
        return false;
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = write(fd, "1", 1) == 1;
    close(fd);
    return ok;
}

/* A pidfd call that a seccomp filter refuses (older container profiles
 * answer EPERM or ENOSYS), or a kernel before 5.3 lacks: the member is
 * signalled by its pid, still listed, which leaves the window of kill():
 * it may end, be reaped by its parent and its number be taken between
 * the list and the signal. */
#define BY_PID (-2)
static bool refused(long r)
{
    return r == -EPERM || r == -ENOSYS;
}

/* Pidfds held at once: the members go in batches, each checked by a walk
 * of its own, so that a cgroup of more members than the fds left is
 * signalled whole. */
#define CGROUP_BATCH 64

static bool signal_member(int fd, pid_t pid, int sig)
{
    long r = fd >= 0 ? fl__sys4(SYS_pidfd_send_signal, fd, sig, 0, 0) : -ENOSYS;
    if (refused(r))
        r = fl__sys2(SYS_kill, pid, sig);
    return r == 0;
}

/* Signals those of pids[0..k) (fds[]: their pidfds, BY_PID, or -1 for
 * none) that a walk made after their pidfds were opened lists, and closes
 * the pidfds. A walk that read the whole tree lists every member (one
 * more walk for one that moved between the tree's cgroups as they were
 * read again); one that ran out of fds lists members only, and the
 * others are looked for again one at a time, each with the fds the batch
 * held given back. Returns how many it signalled, moved to the front of
 * pids, in their order. */
static size_t signal_batch(const char *cgroup, int sig, pid_t *pids, int *fds, size_t k)
{
    size_t n, more_n = 0;
    struct pid_list how;
    pid_t *again = cgroup_pids(cgroup, &n, &how), *more = NULL;
    bool done[CGROUP_BATCH] = { false }, sent_to[CGROUP_BATCH] = { false };
    for (size_t i = 0; i < k; i++)
        if (fds[i] != -1 && listed(again, n, pids[i])) {
            sent_to[i] = signal_member(fds[i], pids[i], sig);
            done[i] = true;
        } else if (fds[i] == -1) {
            done[i] = true;
        }
    bool looked_again = false;
    for (size_t i = 0; i < k && !how.no_fd && !looked_again; i++)
        if (!done[i]) {
            more = cgroup_pids(cgroup, &more_n, NULL);
            looked_again = true;
        }
    for (size_t i = 0; i < k; i++) {
        if (!done[i] && !how.no_fd && listed(more, more_n, pids[i])) {
            sent_to[i] = signal_member(fds[i], pids[i], sig);
            done[i] = true;
        }
        if (fds[i] >= 0)
            close(fds[i]);
    }
    free(again);
    free(more);
    for (size_t i = 0; i < k && how.no_fd; i++) {
        if (done[i])
            continue;
        long fd = fds[i] == BY_PID ? BY_PID : fl__sys2(SYS_pidfd_open, pids[i], 0);
        if (fd == -EMFILE || fd == -ENFILE)
            break;   /* not one fd: what is left cannot be checked */
        if (fd < 0 && fd != BY_PID)
            continue;  /* ended since */
        pid_t *one = cgroup_pids(cgroup, &n, NULL);
        if (listed(one, n, pids[i]))
            sent_to[i] = signal_member((int)fd, pids[i], sig);
        free(one);
        if (fd >= 0)
            close((int)fd);
    }
    size_t sent = 0;
    for (size_t i = 0; i < k; i++)
        if (sent_to[i])
            pids[sent++] = pids[i];  /* sent <= i: none unread is overwritten */
    return sent;
}

/* Each member through a pidfd: the pid is read, its pidfd opened, and the
 * list read again; a pid still listed after its pidfd was opened names a
 * member, or a process that has ended since (the signal then does
 * nothing), never a stranger that took the number. Returns the pids that
 * the signal was sent to (*sent of them, maybe none; malloc'd, in their
 * order), or NULL when cgroup.kill sent it or the list could not be had;
 * *reached says whether it reached any. */
static pid_t *cgroup_signal(const char *cgroup, int sig, size_t *sent, bool *reached)
{
    *sent = 0;
    *reached = sig == SIGKILL && cgroup_kill(cgroup);
    if (*reached)
        return NULL;
    size_t n;
    pid_t *pids = cgroup_pids(cgroup, &n, NULL);
    if (!pids)
        return NULL;
    int fds[CGROUP_BATCH];
    for (size_t next = 0; next < n;) {
        size_t k = 0;
        while (next + k < n && k < CGROUP_BATCH) {
            long fd = fl__sys2(SYS_pidfd_open, pids[next + k], 0);
            if (fd == -EMFILE || fd == -ENFILE)
                break;  /* the rest in a later batch */
            fds[k++] = fd >= 0 ? (int)fd : refused(fd) ? BY_PID : -1;
        }
        if (k == 0)
            break;  /* not one fd to be had: the rest cannot be checked */
        size_t m = signal_batch(cgroup, sig, pids + next, fds, k);
        memmove(pids + *sent, pids + next, m * sizeof *pids);   /* *sent <= next */
        *sent += m;
        next += k;
    }
    *reached = *sent > 0;
    return pids;
}

/* Whether a process is left in cgroup or below it: cgroup.events says
 * where it is there (v2), else the walk finds one. */
static bool cgroup_populated(const char *cgroup)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/cgroup.events", cgroup) < sizeof path) {
        FILE *f = fopen(path, "re");
        char line[64];
        int populated = -1;
        while (f && populated < 0 && fgets(line, sizeof line, f))
            if (strncmp(line, "populated ", 10) == 0)
                populated = line[10] == '1';
        if (f)
            fclose(f);
        if (populated >= 0)
            return populated;
    }
    size_t n;
    struct pid_list how;
    free(cgroup_pids(cgroup, &n, &how));
    return n > 0 || how.partial;   /* what cannot be read may hold one */
}

/* Sends sig to everything the stop reaches, once each: to the group or
 * the cgroup, then, through its pidfd, to each process that it may have
 * missed (one leaving, or joining, the group). A second copy of a signal
 * that arrives after the first was handled is a second request, which
 * many programs take as "stop now" (a second TERM or INT); a real-time
 * signal would even be queued twice. */
static void send_all(struct fl__stopper *s, int sig)
{
    pid_t group = 0, *members = NULL;
    size_t nmembers = 0;
    bool reached = false, leader_alone = false, was_in_few[16], *was_in = NULL;
    if (s->scope == FL_STOP_GROUP) {
        /* Only a process in the group before its signal and after it has
         * surely had it: a pipeline's stage launched without waiting for
         * its exec joins the group in its setup, which may be now. With
         * no memory to note who was in it, the one look is after. */
        pid_t leader = s->procs[0].pid;
        was_in = s->n <= sizeof was_in_few / sizeof *was_in_few ? was_in_few
                                                                 : malloc(s->n * sizeof *was_in);
        for (size_t i = 0; was_in && i < s->n; i++)
            was_in[i] = fl__sys1(SYS_getpgid, s->procs[i].pid) == leader;
        if (fl__killpg(&s->procs[0], sig, &leader_alone) == 0)
            group = leader;
        reached = group > 0;
    } else if (s->scope == FL_STOP_CGROUP) {
        int state;  /* as in fl__stop_rest_running() */
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
        members = cgroup_signal(s->cgroup, sig, &nmembers, &reached);
        pthread_setcancelstate(state, NULL);
    }
    /* A reaped process is refused by fl_kill() whatever getpgid() says of
     * its pid. */
    for (size_t i = 0; i < s->n; i++) {
        pid_t pid = s->procs[i].pid;
        if (i == 0 && leader_alone)
            continue;  /* signalled already, as the whole of its group-to-be */
        if ((group > 0 && (!was_in || was_in[i]) && fl__sys1(SYS_getpgid, pid) == group) ||
            listed(members, nmembers, pid))
            continue;
        fl_kill(&s->procs[i], sig);
    }
    if (was_in != was_in_few)
        free(was_in);
    free(members);
    if (sig == SIGKILL)
        s->rest_killed = reached;
}

void fl__stop_begin(struct fl__stopper *s)
{
    if (s->phase != STOP_IDLE)
        return;
    s->stop_signal = s->signal;
    send_all(s, s->signal);
    if (s->signal == SIGKILL) {
        s->phase = STOP_KILLED;
        s->killed = true;
        return;
    }
    if (s->signal != SIGCONT)
        send_all(s, SIGCONT);  /* a stopped process cannot act on it */
    s->phase = STOP_SIGNALLED;
    s->kill_at_ns = s->grace_ms == FL_STOP_NEVER_KILL
                        ? -1
                        : fl__now_ns() + (long long)s->grace_ms * 1000000;
}

int fl__stop_clip_ms(const struct fl__stopper *s, int wait_ms)
{
    if (s->phase != STOP_SIGNALLED || s->kill_at_ns < 0)
        return wait_ms;
    long long left = (s->kill_at_ns - fl__now_ns() + 999999) / 1000000;
    if (left < 0)
        left = 0;
    return wait_ms < 0 || left < wait_ms ? (int)(left > INT_MAX ? INT_MAX : left) : wait_ms;
}

void fl__stop_tick(struct fl__stopper *s)
{
    if (s->phase == STOP_SIGNALLED && s->kill_at_ns >= 0 && fl__now_ns() >= s->kill_at_ns) {
        send_all(s, SIGKILL);
        s->phase = STOP_KILLED;
        s->killed = true;
    }
}

void fl__stop_kill_now(struct fl__stopper *s)
{
    send_all(s, SIGKILL);
    if (!s->stop_signal)
        s->stop_signal = SIGKILL;
    s->phase = STOP_KILLED;
    s->killed = true;
}

bool fl__stop_started(const struct fl__stopper *s)
{
    return s->phase != STOP_IDLE;
}

bool fl__stop_killed_rest(const struct fl__stopper *s)
{
    return s->killed && s->rest_killed;
}

long long fl__stop_rest_until_ns(const struct fl__stopper *s)
{
    return s->phase == STOP_SIGNALLED && s->scope != FL_STOP_PROCESS ? s->kill_at_ns : -1;
}

/* Out of fds or memory: the walk cannot tell, whatever it saw so far. */
static bool short_of(int err)
{
    return err == EMFILE || err == ENFILE || err == ENOMEM;
}

/* Does /proc/NAME/stat show a running member of group pgid? 1 or 0, or
 * -errno when out of fds or memory. A zombie is not running (a zombie
 * leader thread is, while its other threads run). */
static int member_running(const char *name, pid_t pgid)
{
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return short_of(errno) ? -errno : 0;  /* else gone meanwhile */
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "PID (COMM) STATE PPID PGRP ... NUM_THREADS(20) ...": COMM may hold
     * anything, ')' too. */
    const char *p = strrchr(buf, ')');
    char state;
    int group;
    long threads;
    if (!p || sscanf(p + 1, " %c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
                            "%*d %*d %*d %ld", &state, &group, &threads) != 3)
        return 0;
    return group == (int)pgid && ((state != 'Z' && state != 'X') || threads > 1);
}

/* Is a process of group pgid still running? Returns 1 or 0, or -errno
 * when it cannot tell: -ENOSYS with no /proc, or one of another pid
 * namespace; -EMFILE (-ENFILE, -ENOMEM) when it could not look. A group
 * with no process at all, not even a zombie, is told by kill() alone.
 * *hint (NULL: none) is the member found last time, looked at first: a
 * wait that looks again and again reads one stat, not all of /proc. */
static int group_running(pid_t pgid, pid_t *hint)
{
    if (fl__sys2(SYS_kill, -pgid, 0) == -ESRCH)
        return 0;
    char buf[32];
    ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
    if (n <= 0)
        return -ENOSYS;
    buf[n] = '\0';
    if (atol(buf) != (long)getpid())
        return -ENOSYS;
    if (hint && *hint > 0) {
        snprintf(buf, sizeof buf, "%d", (int)*hint);
        int r = member_running(buf, pgid);
        if (r != 0)
            return r;
        *hint = 0;
    }
    DIR *dir = opendir("/proc");
    if (!dir)
        return short_of(errno) ? -errno : -ENOSYS;
    int running = 0;
    struct dirent *entry = NULL;
    while (!running && (errno = 0, entry = readdir(dir))) {
        if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
            continue;
        running = member_running(entry->d_name, pgid);
        if (running > 0 && hint)
            *hint = (pid_t)atol(entry->d_name);
    }
    if (!running && !entry && errno)  /* the listing broke off */
        running = -errno;
    closedir(dir);
    return running;
}

int fl_pgroup_running(const struct fl_proc *p, bool *running)
{
    if (!p || !running)
        return EINVAL;
    /* Unreaped, the leader's pid is still the group's and nobody else's. */
    if (p->pid <= 0 || p->state_ == FL__PROC_REAPED)
        return ESRCH;
    if (!fl__launch_await_group(p)) {
        *running = true;  /* stopped before its group: the child is all of it */
        return 0;
    }
    int state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
    int r = group_running(p->pid, NULL);
    pthread_setcancelstate(state, NULL);
    if (r < 0)
        return -r;
    *running = r > 0;
    return 0;
}

int fl__stop_rest_running(struct fl__stopper *s)
{
    /* The walks hold a DIR, a FILE or memory: no cancellation in them
     * (the caller's wait is cancelled in its sleep instead). */
    int state, running = 0;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
    if (s->scope == FL_STOP_GROUP)
        running = group_running(s->procs[0].pid, &s->rest_seen);
    else if (s->scope == FL_STOP_CGROUP)
        running = cgroup_populated(s->cgroup);
    pthread_setcancelstate(state, NULL);
    return running;
}

void fl__stop_finish(struct fl__stopper *s)
{
    if (s->phase == STOP_IDLE || s->scope == FL_STOP_PROCESS)
        return;
    /* The rest of the group (or cgroup) gets the same grace as the
     * processes had, and then SIGKILL; without a way to see it, the wait
     * lasts the whole grace. Never killed: nothing waits for it. */
    long long interval_ms = 2;
    while (s->phase == STOP_SIGNALLED && s->kill_at_ns >= 0) {
        int running = fl__stop_rest_running(s);
        if (running == 0)
            return;
        long long left_ns = s->kill_at_ns - fl__now_ns();
        if (left_ns <= 0)
            break;
        long long left = (left_ns + 999999) / 1000000;  /* never SIGKILL before the grace ends */
        if (running > 0 && left > interval_ms)
            left = interval_ms;
        struct timespec ts = { (time_t)(left / 1000), (long)(left % 1000) * 1000000 };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
        interval_ms = interval_ms * 2 > 100 ? 100 : interval_ms * 2;
    }
    if (s->kill_at_ns >= 0 || s->phase == STOP_KILLED) {
        send_all(s, SIGKILL);
        s->phase = STOP_KILLED;
        s->killed = true;
    }
}

void fl__stop_record(const struct fl__stopper *s, struct fl_result *r)
{
    r->stop_signal = s->stop_signal;
    r->killed = s->killed;
}
