/* report.h: `forkless run --time`, and the library's error records in
 * the command line's words. */
#ifndef FL_TOOLS_REPORT_H
#define FL_TOOLS_REPORT_H

#include <stdbool.h>

#include "forkless.h"

/* who: NULL, or what the figures are of, before them ("stage 2 (grep): ").
 * Prints, on stderr, one line of what the program used, as /usr/bin/time
 * would: "forkless: elapsed 1.024s user 0.500s sys 0.012s maxrss 3412KiB".
 * elapsed is the wall time from the spawn to the reap; user, sys and
 * maxrss are the program's and those of the descendants it waited for. */
void report_time(const char *who, const struct fl_result *r);

/* Rewrites e->detail where the library's hint names one of its flags,
 * which the command line has its own words for, or none: ENOEXEC's
 * FL_SHELL_FALLBACK becomes shell_fallback (the option that does it:
 * "--shell-fallback"; NULL, or given already, cmd_flags having
 * FL_SHELL_FALLBACK: no hint), and a clone without an fd for the pidfd
 * names the fd limit rather than FL_NO_PIDFD. Call it before
 * fl_error_format(). */
void reword_error(struct fl_error *e, const char *shell_fallback, unsigned cmd_flags);

/* Where a capability that the kernel checks in the initial user namespace
 * (CAP_SYS_NICE, CAP_SYS_RESOURCE) must be held, to follow its name: ""
 * in that namespace, " outside the new user namespace" where the command
 * makes one (new_userns), else " in the initial user namespace". */
const char *init_ns_scope(bool new_userns);

/* Why the child could not set rl (it failed with err), into buf (size > 0): ""
 * or ": the soft limit 20000 cannot exceed the hard limit 200", as
 * prlimit(1) says it, to follow "--rlimit NAME=...". new_userns: as for
 * init_ns_scope(). */
void rlimit_hint(const struct fl_rlimit *rl, int err, bool new_userns, char *buf, size_t size);

#endif
