/* killtree.c: the adopted descendants of `forkless run --kill-tree`.
 *
 * Only forkless's own children are ever signalled, by pid: an unreaped
 * child's pid cannot be reused, whether it runs or is a zombie, and only
 * forkless reaps its children (SIGCHLD is at its default, not ignored,
 * so the kernel does not reap them either). A pid read from the list of
 * children therefore names that child until forkless itself reaps it.
 * Descendants further down are reached as their parents end and they
 * are handed to forkless in turn. */
#include "killtree.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

struct pids {
    pid_t *v;
    size_t n, cap;
};

static struct pids children(void);

bool proc_is_ours(void)
{
    char buf[32];
    ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return atol(buf) == (long)getpid();
}

/* "populated 1" in cgroup.events (v2): a live process in the cgroup or
 * any cgroup below it. v1 has no such file, and no cgroup.kill: its stop
 * reaches cgroup.procs alone. */
static bool subtree_populated(const char *dir)
{
    char name[4096], line[64];
    bool populated = false;
    if ((size_t)snprintf(name, sizeof name, "%s/cgroup.events", dir) >= sizeof name)
        return false;
    FILE *f = fopen(name, "re");
    if (!f)
        return false;
    while (fgets(line, sizeof line, f))
        populated |= strcmp(line, "populated 1\n") == 0;
    fclose(f);
    return populated;
}

int cgroup_members(const char *dir, struct cgroup_members *m)
{
    char name[4096];
    *m = (struct cgroup_members){ 0 };
    if ((size_t)snprintf(name, sizeof name, "%s/cgroup.procs", dir) >= sizeof name)
        return ENAMETOOLONG;
    FILE *f = fopen(name, "re");
    if (!f)
        return errno;
    long pid;
    /* A process of another pid namespace is listed as 0. */
    while (fscanf(f, "%ld", &pid) == 1) {
        m->count++;
        if (!m->first)
            m->first = pid;
        m->self |= pid == (long)getpid();
    }
    int r = ferror(f) ? EIO : 0;
    fclose(f);
    m->below = !m->count && subtree_populated(dir);
    return r;
}

int tree_adopt(pid_t **foreign, size_t *nforeign)
{
    struct pids p = children();
    *foreign = p.v;
    *nforeign = p.n;
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : errno;
}

static void add_pid(struct pids *p, pid_t pid)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        pid_t *v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return;  /* that one is found on a later pass */
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = pid;
}

/* /proc/self/task/TID/children, one file per thread (a child belongs to
 * the thread that made it). Returns false where the kernel has none
 * (CONFIG_PROC_CHILDREN). */
static bool children_files(struct pids *out)
{
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return false;
    bool any = false;
    struct dirent *e;
    char path[300];
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        any = true;
        long pid;
        while (fscanf(f, "%ld", &pid) == 1)
            add_pid(out, (pid_t)pid);
        fclose(f);
    }
    closedir(dir);
    return any;
}

bool proc_stat_read(const char *pid, char *state, long *ppid, long *pgrp)
{
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "PID (COMM) STATE PPID PGRP ...": COMM may hold ')' too. */
    const char *p = strrchr(buf, ')');
    if (p && sscanf(p + 1, " %c %ld %ld", state, ppid, pgrp) == 3)
        return true;
    errno = ESRCH;  /* an empty read: it ended as it was read */
    return false;
}

/* Every process whose parent is forkless, from /proc/PID/stat. */
static void scan_proc(struct pids *out)
{
    DIR *dir = opendir("/proc");
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir))) {
        char state;
        long ppid, pgrp;
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
            proc_stat_read(e->d_name, &state, &ppid, &pgrp) && ppid == (long)getpid())
            add_pid(out, (pid_t)atol(e->d_name));
    }
    closedir(dir);
}

/* None when /proc is another namespace's: its pids would name others. */
static struct pids children(void)
{
    struct pids p = { 0 };
    if (proc_is_ours() && !children_files(&p))
        scan_proc(&p);
    return p;
}

static bool foreign(const struct tree *t, pid_t pid)
{
    for (size_t i = 0; i < t->nforeign; i++)
        if (t->foreign[i] == pid)
            return true;
    return false;
}

static bool had_stop(const struct tree *t, pid_t pid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->stopped[i] == pid)
            return true;
    return false;
}

static void mark_stopped(struct tree *t, pid_t pid)
{
    struct pids p = { t->stopped, t->n, t->cap };
    add_pid(&p, pid);
    t->stopped = p.v;
    t->n = p.n;
    t->cap = p.cap;
}

static void forget(struct tree *t, pid_t pid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->stopped[i] == pid)
            t->stopped[i] = t->stopped[--t->n];
}

static void forget_look(struct tree *t)
{
    free(t->look_pid);
    free(t->look_pgid);
    t->look_pid = t->look_pgid = NULL;
    t->nlook = 0;
    t->looked = false;
}

void tree_look(struct tree *t)
{
    forget_look(t);
    struct pids p = children();
    pid_t *pgid = malloc((p.n ? p.n : 1) * sizeof *pgid);
    if (!pgid) {
        free(p.v);
        return;  /* no look: the group's signal is taken for reaching all in it */
    }
    for (size_t i = 0; i < p.n; i++)
        pgid[i] = getpgid(p.v[i]);
    t->look_pid = p.v;
    t->look_pgid = pgid;
    t->nlook = p.n;
    t->looked = true;
}

/* Was pid in group pgid at the look? Without a look, or for a child
 * handed to forkless since (then a grandchild, whose group the look did
 * not see), the group now is taken for the group then. */
static bool looked_in(const struct tree *t, pid_t pid, pid_t pgid)
{
    if (!t->looked)
        return true;
    for (size_t i = 0; i < t->nlook; i++)
        if (t->look_pid[i] == pid)
            return t->look_pgid[i] == pgid;
    return true;
}

void tree_signal(struct tree *t, pid_t program, int sig, const pid_t spare_groups[2], bool once)
{
    struct pids p = children();
    for (size_t i = 0; i < p.n; i++) {
        pid_t pid = p.v[i];
        if (pid == program || foreign(t, pid) || (once && had_stop(t, pid)))
            continue;
        if ((sig == t->stop_signal || sig == SIGKILL) && !had_stop(t, pid))
            mark_stopped(t, pid);
        pid_t pgid = getpgid(pid);
        if ((spare_groups[0] > 0 && pgid == spare_groups[0]) ||
            (spare_groups[1] > 0 && pgid == spare_groups[1] && looked_in(t, pid, pgid)))
            continue;
        kill(pid, sig);
        if (sig != SIGKILL && sig != SIGCONT)
            kill(pid, SIGCONT);
    }
    free(p.v);
    forget_look(t);
}

size_t tree_reap(struct tree *t, pid_t program)
{
    /* A child that ends during a pass hands its own children to us after
     * the list was read: a pass that reaped anything is followed by one on
     * a fresh list, and only one that reaped nothing says who runs. */
    for (;;) {
        struct pids p = children();
        size_t running = 0, reaped = 0;
        for (size_t i = 0; i < p.n; i++) {
            pid_t pid = p.v[i];
            if (pid == program || foreign(t, pid))
                continue;
            siginfo_t si = { 0 };
            int r;
            do
                r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG);
            while (r < 0 && errno == EINTR);
            if (r == 0 && si.si_pid == pid) {
                forget(t, pid);  /* its pid is free again: forget it */
                reaped++;
            } else if (r == 0) {
                running++;
            }
        }
        free(p.v);
        if (!reaped)
            return running;
    }
}

void tree_free(struct tree *t)
{
    forget_look(t);
    free(t->stopped);
    t->stopped = NULL;
    t->n = t->cap = 0;
}
