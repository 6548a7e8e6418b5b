/* job_control.h: forkless's controlling terminal, and the process group
 * of its own that its program (`forkless run --timeout`, --pgroup) or its
 * pipeline's stages lead in forkless's session. supervise.c decides when
 * that group has the terminal; these are the steps. */
#ifndef FL_TOOLS_JOB_CONTROL_H
#define FL_TOOLS_JOB_CONTROL_H

#include <stdbool.h>
#include <sys/types.h>

/* The fd among 0-2 that is forkless's controlling terminal, or -1. */
int job_tty(void);

/* Whether another process than forkless is, or may soon be, in
 * forkless's process group (a zombie aside): a pager after it in the
 * shell's pipeline (`forkless pipe a ::: b | less`), or a script without
 * job control around it. True where forkless does not lead its group, or
 * has a fifo among 0-2; else read from every /proc/PID/stat, and taken as
 * true where /proc cannot tell (none, another pid namespace's, or
 * mounted with hidepid). */
bool job_group_shared(void);

/* If forkless's group is tty's foreground group, makes pgid the
 * foreground one instead and returns true. */
bool job_tty_lend(int tty, pid_t pgid);

/* Takes tty back from group pgid, if that has it (never from another job
 * of the shell's). */
void job_tty_reclaim(int tty, pid_t pgid);

/* Stops forkless as a job is stopped, by SIGTSTP at its default (the
 * shell sees it stop), whatever its disposition and this thread's mask:
 * forkless alone (raise()), or its whole process group (kill(0)), as the
 * terminal's ^Z stops its foreground group. Returns once continued, both
 * as they were: true, or false at once where the kernel discarded the
 * SIGTSTP (an orphaned process group). */
bool stop_by_sigtstp(bool whole_group);

#endif
