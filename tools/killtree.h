/* killtree.h: `forkless run --kill-tree`: forkless becomes a child
 * subreaper, so that a descendant whose parent ends (a double fork, a
 * setsid daemon) is handed to forkless rather than to init, and can be
 * signalled and reaped with the program's end. */
#ifndef FL_TOOLS_KILLTREE_H
#define FL_TOOLS_KILLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The adopted descendants that have had their one stop signal: each is
 * to get one, then SIGKILL at the --kill-after deadline. */
struct tree {
    pid_t *stopped;
    size_t n, cap;
    /* The stop signal (--signal): only it, or SIGKILL, counts as one. */
    int stop_signal;
    /* The children forkless had before the spawn, inherited across the
     * exec that started it (`sh -c 'sleep 3 & exec forkless ...'`): not
     * forkless's to signal or reap. Their pids stay theirs: forkless
     * never reaps them. Owned by tree_adopt()'s caller. */
    const pid_t *foreign;
    size_t nforeign;
    /* tree_look()'s children and the group each was in; looked: taken. */
    pid_t *look_pid, *look_pgid;
    size_t nlook;
    bool looked;
};

/* Is /proc the one of forkless's pid namespace? Its pids are ours only
 * then (`unshare --pid --fork` without --mount-proc leaves the host's):
 * /proc/self names getpid(). */
bool proc_is_ours(void);

/* Who the stop of the cgroup DIR would reach before the program is
 * there: *count, the processes its cgroup.procs lists; *first, the first
 * of them this pid namespace sees (0 when it sees none); *self, whether
 * forkless is one; *below, whether a cgroup under it holds any (cgroup
 * v2's cgroup.events says so: its cgroup.kill ends the whole subtree).
 * Returns 0, or an errno when cgroup.procs cannot be read (not a cgroup,
 * or a threaded one, whose cgroup.kill is refused as well). */
struct cgroup_members {
    size_t count;
    long first;
    bool self, below;
};
int cgroup_members(const char *dir, struct cgroup_members *m);

/* Reads /proc/PID/stat (pid as its directory is named): the process's
 * state letter, parent and process group. False, with errno set, when it
 * cannot be read (ENOENT or ESRCH: gone meanwhile). */
bool proc_stat_read(const char *pid, char *state, long *ppid, long *pgrp);

/* Makes forkless a child subreaper (PR_SET_CHILD_SUBREAPER); call it
 * before the spawn. *foreign receives (malloc'd, NULL when none) the
 * children forkless already has, *nforeign their number: see
 * tree.foreign. Returns 0 or an errno value. */
int tree_adopt(pid_t **foreign, size_t *nforeign);

/* Notes each child of forkless and its process group: call it just
 * before forkless signals a group that tree_signal() is to spare then. A
 * child that joins the group after that signal has missed it: only one
 * in the group both at this look and after the signal is spared. */
void tree_look(struct tree *t);

/* Sends sig to every child of forkless but program (0: none to spare)
 * and the foreign ones, and SIGCONT after it, as a stopped process
 * cannot act on it; spares those in the process groups spare_groups[0]
 * and [1] (0: none), which the kernel or forkless has sent it already;
 * in [1] only a child that tree_look() saw in it too (it is forgotten
 * here), or any child in it where no look was taken. A child reached counts as having
 * had its stop signal when sig is t->stop_signal or SIGKILL (not after
 * a HUP or USR1 passed on); with once, one that has had it is not sent
 * sig. */
void tree_signal(struct tree *t, pid_t program, int sig, const pid_t spare_groups[2], bool once);

/* Reaps every child of forkless that has ended, except program and the
 * foreign ones. Returns how many children are left running, those
 * aside. */
size_t tree_reap(struct tree *t, pid_t program);

void tree_free(struct tree *t);

#endif
