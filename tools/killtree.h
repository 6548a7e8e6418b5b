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
};

/* Makes forkless a child subreaper (PR_SET_CHILD_SUBREAPER); call it
 * before the spawn. Returns 0 or an errno value. */
int tree_adopt(void);

/* Sends sig to every child of forkless but program (0: none to spare),
 * and SIGCONT after it, as a stopped process cannot act on it; spares
 * those in process group spare_group (0: none), which the kernel has
 * sent it already. Every signal forkless sends ends a process by
 * default, so each child reached counts as having had its stop signal;
 * with once, one that has had it is not sent sig. */
void tree_signal(struct tree *t, pid_t program, int sig, pid_t spare_group, bool once);

/* Reaps every child of forkless that has ended, except program. Returns
 * how many children are left running, program aside. */
size_t tree_reap(struct tree *t, pid_t program);

void tree_free(struct tree *t);

#endif
