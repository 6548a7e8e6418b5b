/* user.c: looks users and groups up in the parent, where NSS may allocate,
 * read files and talk to daemons; the child only makes the syscalls. */
#include "user.h"

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse.h"

/* A name first (as chown does, a name made of digits is still a name),
 * then a numeric id. */
static int lookup_group(const char *name, gid_t *gid)
{
    struct group *gr = getgrnam(name);
    unsigned id;
    if (gr) {
        *gid = gr->gr_gid;
        return 0;
    }
    if (parse_id(name, &id) == 0) {
        *gid = (gid_t)id;
        return 0;
    }
    return -1;
}

static int supplementary_groups(const char *user, gid_t gid, struct credentials *out)
{
    int n = 32;
    for (;;) {
        gid_t *groups = malloc((size_t)n * sizeof *groups);
        if (!groups)
            return -1;
        int want = n;
        if (getgrouplist(user, gid, groups, &want) >= 0) {
            out->groups = groups;
            out->ngroups = (size_t)want;
            return 0;
        }
        free(groups);
        if (want <= n)  /* failed without asking for more room */
            return -1;
        n = want;
    }
}

int resolve_credentials(const char *spec, struct credentials *out)
{
    char user[256];
    const char *colon = strchr(spec, ':');
    size_t user_len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (user_len == 0 || user_len >= sizeof user) {
        cli_error("--user: invalid user \"%s\"", spec);
        return -1;
    }
    memcpy(user, spec, user_len);
    user[user_len] = '\0';

    struct passwd *pw = getpwnam(user);
    unsigned id;
    if (!pw && parse_id(user, &id) == 0) {
        out->uid = (uid_t)id;
        pw = getpwuid(out->uid);
    } else if (!pw) {
        cli_error("--user: no such user \"%s\"", user);
        return -1;
    } else {
        out->uid = pw->pw_uid;
    }

    if (colon) {
        if (lookup_group(colon + 1, &out->gid) != 0) {
            cli_error("--user: no such group \"%s\"", colon + 1);
            return -1;
        }
    } else if (pw) {
        out->gid = pw->pw_gid;
    } else {
        cli_error("--user: uid %s has no passwd entry: give a group too (%s:GROUP)",
                  user, user);
        return -1;
    }

    if (!pw) {
        out->groups = malloc(sizeof *out->groups);
        if (!out->groups) {
            cli_error("--user: out of memory");
            return -1;
        }
        out->groups[0] = out->gid;
        out->ngroups = 1;
        return 0;
    }
    /* pw points into static storage that getgrouplist() may reuse. */
    char name[256];
    if (strlen(pw->pw_name) >= sizeof name) {
        cli_error("--user: user name too long");
        return -1;
    }
    strcpy(name, pw->pw_name);
    if (supplementary_groups(name, out->gid, out) != 0) {
        cli_error("--user: cannot list the groups of \"%s\"", name);
        return -1;
    }
    return 0;
}
