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

#endif
