/* user.h: turning `--user USER[:GROUP]` into credentials for the child. */
#ifndef FL_TOOLS_USER_H
#define FL_TOOLS_USER_H

#include <stddef.h>
#include <sys/types.h>

struct credentials {
    uid_t uid;
    gid_t gid;
    gid_t *groups;   /* malloc'ed; the supplementary groups */
    size_t ngroups;
};

/* USER and GROUP are names or numeric ids. A user with a passwd entry
 * gets its primary group (unless GROUP is given) and its supplementary
 * groups from getgrouplist(); a numeric uid without an entry needs GROUP
 * and gets only that group. Prints the reason and returns -1 on failure. */
int resolve_credentials(const char *spec, struct credentials *out);

/* Which of FL_SET_GROUPS, FL_SET_GID and FL_SET_UID would change anything
 * for this process, as setpriv(1) changes only what it is asked to: the
 * uid (or gid) when the real, effective or saved one differs, the
 * supplementary groups when they differ as a set, the target's primary
 * group aside (it counts as the egid either way). So a caller without
 * privilege can name its own user. */
unsigned credential_changes(const struct credentials *c);

/* Writes, for a change that failed with EPERM, which privilege the
 * changes need: "changing the supplementary groups and the user needs
 * privilege, CAP_SETGID and CAP_SETUID". */
void credential_privilege_hint(unsigned changes, char *buf, size_t size);

#endif
