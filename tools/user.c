/* user.c: looks users and groups up in the parent, where NSS may allocate,
 * read files and talk to daemons; the child only makes the syscalls. */
#include "user.h"

#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "forkless.h"
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
        if (!colon[1]) {
            cli_error("--user %s: the group after ':' is empty", spec);
            return -1;
        }
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

static bool has_group(const gid_t *list, size_t n, gid_t g)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == g)
            return true;
    return false;
}

/* Are our supplementary groups those of c, as sets? With
 * primary_aside, c->gid counts on neither side. */
static bool same_groups(const struct credentials *c, bool primary_aside)
{
    int n = getgroups(0, NULL);
    if (n < 0)
        return false;
    gid_t *ours = malloc(((size_t)n + 1) * sizeof *ours);
    if (!ours)
        return false;
    n = getgroups(n, ours);
    bool same = n >= 0;
    for (int i = 0; same && i < n; i++)
        same = (primary_aside && ours[i] == c->gid) || has_group(c->groups, c->ngroups, ours[i]);
    for (size_t i = 0; same && i < c->ngroups; i++)
        same = (primary_aside && c->groups[i] == c->gid) ||
               has_group(ours, (size_t)n, c->groups[i]);
    free(ours);
    return same;
}

/* Whether setgroups() would be allowed: CAP_SETGID in our effective set,
 * in a user namespace that has not denied it (unshare -r, bwrap's): there
 * /proc/self/setgroups says "deny" and setgroups() is EPERM for anyone. */
static bool may_set_groups(void)
{
    struct { uint32_t version; int pid; } head = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct { uint32_t effective, permitted, inheritable; } data[2];
    if (syscall(SYS_capget, &head, data) != 0 || !(data[0].effective >> CAP_SETGID & 1))
        return false;
    char says[8] = "";
    FILE *f = fopen("/proc/self/setgroups", "re");
    if (f) {
        if (!fgets(says, sizeof says, f))
            says[0] = '\0';
        fclose(f);
    }
    return strncmp(says, "deny", 4) != 0;
}

unsigned credential_changes(const struct credentials *c)
{
    unsigned changes = 0;
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    if (getresuid(&ru, &eu, &su) != 0 || ru != c->uid || eu != c->uid || su != c->uid)
        changes |= FL_SET_UID;
    if (getresgid(&rg, &eg, &sg) != 0 || rg != c->gid || eg != c->gid || sg != c->gid)
        changes |= FL_SET_GID;
    /* The list initgroups(3) would set, as setpriv --init-groups and
     * runuser do. Without the privilege to set it, a list that lacks only
     * the group the program runs as changes nothing the kernel checks. */
    if (!same_groups(c, false) && (may_set_groups() || !same_groups(c, true)))
        changes |= FL_SET_GROUPS;
    return changes;
}

void credential_privilege_hint(unsigned changes, char *buf, size_t size)
{
    const char *what[3];
    size_t n = 0;
    if (changes & FL_SET_GROUPS)
        what[n++] = "the supplementary groups";
    if (changes & FL_SET_GID)
        what[n++] = "the group";
    if (changes & FL_SET_UID)
        what[n++] = "the user";
    if (n == 0) {
        snprintf(buf, size, "changing credentials needs privilege");
        return;
    }
    const char *caps = !(changes & FL_SET_UID) ? "CAP_SETGID"
                     : changes & (FL_SET_GROUPS | FL_SET_GID) ? "CAP_SETGID and CAP_SETUID"
                     : "CAP_SETUID";
    snprintf(buf, size, "changing %s%s%s%s%s needs privilege, %s", what[0],
             n == 3 ? ", " : n == 2 ? " and " : "", n > 1 ? what[1] : "",
             n == 3 ? " and " : "", n == 3 ? what[2] : "", caps);
}
