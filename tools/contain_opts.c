/* contain_opts.c: the options for namespaces, the root, privileges and
 * filters, as unshare(1) and setpriv(1) name them, and what one implies
 * for another. The library does the work (struct fl_contain). */
#include "contain_opts.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <strings.h>

#include "capnames.h"
#include "errnames.h"
#include "cli.h"
#include "parse.h"

/* The namespaces as unshare(1) names its options. */
static const struct {
    const char *name;
    unsigned ns;
} namespaces[] = {
    { "user", FL_NS_USER }, { "mount", FL_NS_MOUNT }, { "pid", FL_NS_PID },
    { "net", FL_NS_NET },   { "ipc", FL_NS_IPC },     { "uts", FL_NS_UTS },
    { "cgroup", FL_NS_CGROUP }, { "time", FL_NS_TIME },
};

#define COUNT(a) (sizeof (a) / sizeof (a)[0])

/* Copies the next comma-separated item of *list into item (size bytes)
 * and moves *list past it. Returns false at the end of the list, or for
 * an item too long for item (then item is ""). */
static bool next_item(const char **list, char *item, size_t size)
{
    if (!*list)
        return false;
    size_t len = strcspn(*list, ",");
    if (len < size) {
        memcpy(item, *list, len);
        item[len] = '\0';
    } else {
        item[0] = '\0';
    }
    *list = (*list)[len] ? *list + len + 1 : NULL;
    return true;
}

/* An empty item, or one too long for any name. */
static int list_error(const char *option, const char *word, const char *arg)
{
    cli_error("--%s: expected %s[,%s]..., got \"%s\"", option, word, word, arg);
    return -1;
}

static int parse_namespaces(struct contain_options *c, const char *arg)
{
    struct fl_contain *k = &c->contain;
    char item[32];
    const char *p = arg;
    while (next_item(&p, item, sizeof item)) {
        if (!item[0])
            return list_error("unshare", "NAME", arg);
        size_t i = 0;
        while (i < COUNT(namespaces) && strcmp(item, namespaces[i].name) != 0)
            i++;
        if (i == COUNT(namespaces)) {
            cli_error("--unshare: unknown namespace \"%s\" in \"%s\" (user, mount, pid, net, "
                      "ipc, uts, cgroup, time)", item, arg);
            return -1;
        }
        k->unshare |= namespaces[i].ns;
        c->unshare_given |= namespaces[i].ns;
    }
    return 0;
}

/* The running kernel's highest capability, or 63 when /proc does not say:
 * a higher one it would not know (setpriv(1) refuses it too). */
static int last_cap(void)
{
    FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
    int last = 63;
    if (f) {
        if (fscanf(f, "%d", &last) != 1 || last < 0 || last > 63)
            last = 63;
        fclose(f);
    }
    return last;
}

/* A list of capabilities into a mask; "" is none. */
static int parse_caps(const char *option, const char *arg, unsigned long long *mask)
{
    char item[64];
    const char *p = arg[0] ? arg : NULL;
    int last = -1;   /* read once, at the first capability */
    *mask = 0;
    while (next_item(&p, item, sizeof item)) {
        if (!item[0])
            return list_error(option, "CAP", arg);
        int cap = cap_by_name(item);
        if (cap < 0) {
            cli_error("--%s: unknown capability \"%s\" (a name of capabilities(7), such as "
                      "cap_net_bind_service or net_bind_service, or a number 0-63)",
                      option, item);
            return -1;
        }
        if (last < 0)
            last = last_cap();
        if (cap > last) {
            if (item[0] >= '0' && item[0] <= '9')
                cli_error("--%s: capability %d is not one of this kernel's (0 to %d)", option,
                          cap, last);
            else
                cli_error("--%s: capability \"%s\" (%d) is not one of this kernel's (0 to "
                          "%d)", option, item, cap, last);
            return -1;
        }
        *mask |= 1ULL << cap;
    }
    return 0;
}

static int add_syscall(struct contain_options *c, int nr)
{
    for (size_t i = 0; i < c->nsyscalls; i++)
        if (c->syscalls[i] == nr)
            return 0;
    if (c->nsyscalls == c->syscalls_room) {
        size_t room = c->syscalls_room ? 2 * c->syscalls_room : 16;
        int *more = realloc(c->syscalls, room * sizeof *more);
        if (!more) {
            cli_error("out of memory");
            return -1;
        }
        c->syscalls = more;
        c->syscalls_room = room;
    }
    c->syscalls[c->nsyscalls++] = nr;
    return 0;
}

/* Every architecture the filter supports numbers its calls from 0, and
 * none comes near 4096 (x86_64 is in the 400s); a larger number is a typo
 * that would deny nothing. 32-bit Arm also has its private calls
 * (cacheflush, set_tls) from 0x0f0000. */
#define SYSCALL_NR_MAX 4095
#if defined(__arm__)
#define ARM_PRIVATE_NOTE ", or 983040 to 985087 for Arm's private calls"
#else
#define ARM_PRIVATE_NOTE ""
#endif

static bool syscall_number_plausible(int nr)
{
#if defined(__arm__)
    if (nr >= 0x0f0000 && nr < 0x0f0800)
        return true;
#endif
    return nr >= 0 && nr <= SYSCALL_NR_MAX;
}

static int parse_syscalls(struct contain_options *c, const char *arg)
{
    char item[64];
    const char *p = arg;
    while (next_item(&p, item, sizeof item)) {
        int nr;
        if (!item[0])
            return list_error("seccomp-deny", "SYSCALL", arg);
        bool signed_number = (item[0] == '-' || item[0] == '+') && item[1] >= '0' && item[1] <= '9';
        if ((item[0] >= '0' && item[0] <= '9') || signed_number) {
            if (parse_int_in(item, 0, INT_MAX, &nr) != 0 || !syscall_number_plausible(nr)) {
                cli_error("--seccomp-deny: \"%s\" is not a system call number (0 to %d%s)",
                          item, SYSCALL_NR_MAX, ARM_PRIVATE_NOTE);
                return -1;
            }
        } else if ((nr = fl_syscall_number(item)) < 0) {
            cli_error("--seccomp-deny: unknown system call \"%s\" (this build knows the names of "
                      "its kernel headers; give a newer call by its number)", item);
            return -1;
        }
        if (nr == SYS_exit_group || nr == SYS_exit) {
            cli_error("--seccomp-deny: \"%s\" cannot be denied: no process could end", item);
            return -1;
        }
        /* The filter is in place before the exec that starts the program
         * (an execve(); execveat() alone may be denied). */
        if (nr == SYS_execve) {
            cli_error("--seccomp-deny: \"%s\" cannot be denied: the filter comes before the "
                      "exec of the program, which could then never start", item);
            return -1;
        }
        if (add_syscall(c, nr) != 0)
            return -1;
    }
    return 0;
}

static int parse_errno(const char *arg, int *value)
{
    if ((*value = errno_by_name(arg)) > 0)
        return 0;
    if (parse_int_in(arg, 1, 4095, value) == 0)
        return 0;
    cli_error("--seccomp-errno: unknown errno \"%s\" (an errno name such as EPERM, "
              "EACCES or ENOSYS, or a number 1-4095)", arg);
    return -1;
}

static int add_landlock(struct contain_options *c, const char *option, const char *path,
                        unsigned access)
{
    struct fl_contain *k = &c->contain;
    if (path[0] == '\0') {
        cli_error("--%s: the path is empty", option);
        return -1;
    }
    if (k->nlandlock == c->landlock_room) {
        size_t room = c->landlock_room ? 2 * c->landlock_room : 8;
        struct fl_landlock_path *more = realloc(c->landlock, room * sizeof *more);
        if (!more) {
            cli_error("out of memory");
            return -1;
        }
        c->landlock = more;
        c->landlock_room = room;
    }
    c->landlock[k->nlandlock++] = (struct fl_landlock_path){ .path = path, .access = access };
    return 0;
}

int contain_option(struct contain_options *c, int opt, const char *arg)
{
    struct fl_contain *k = &c->contain;
    if (opt >= OPT_PLACE_FIRST)
        return place_option(c, opt, arg);
    switch (opt) {
    case OPT_UNSHARE:
        return parse_namespaces(c, arg);
    case OPT_MAP_ROOT_USER:
    case OPT_MAP_CURRENT_USER: {
        enum fl_id_map map = opt == OPT_MAP_ROOT_USER ? FL_MAP_ROOT : FL_MAP_CURRENT;
        if (c->map_given && k->map != map) {
            cli_error("--map-root-user and --map-current-user cannot be used together");
            return -1;
        }
        k->map = map;
        c->map_given = true;
        return 0;
    }
    case OPT_HOSTNAME:
        /* The kernel takes an empty name; hostname(1) and unshare(1) users
         * never mean one. */
        if (arg[0] == '\0') {
            cli_error("--hostname: the name is empty");
            return -1;
        }
        k->hostname = arg;
        return 0;
    case OPT_MOUNT_PROC:
        k->flags |= FL_MOUNT_PROC;
        return 0;
    case OPT_CHROOT:
        if (arg[0] == '\0') {
            cli_error("--chroot: the directory name is empty");
            return -1;
        }
        /* Absolute, as the child's chroot() takes it from this directory:
         * the explanation of a failed exec looks inside the root by it.
         * Where this directory has no name (removed, deeper than
         * PATH_MAX), the name as given, as chroot(1) takes it. */
        free(c->chroot);
        c->chroot = cli_absolute_path(arg);
        if (c->chroot && strlen(c->chroot) >= PATH_MAX) {   /* glibc's getcwd() names it */
            free(c->chroot);
            c->chroot = NULL;
        }
        if (!c->chroot && !(c->chroot = strdup(arg))) {
            cli_error("--chroot: %s", strerror(errno));
            return -1;
        }
        k->chroot = c->chroot;
        return 0;
    case OPT_NO_NEW_PRIVS:
        k->flags |= FL_NO_NEW_PRIVS;
        return 0;
    case OPT_CAPS:
        c->caps_given = true;
        return parse_caps("caps", arg, &k->cap_bounding);
    case OPT_AMBIENT_CAPS:
        c->ambient_arg = arg;
        return parse_caps("ambient-caps", arg, &k->cap_ambient);
    case OPT_SECCOMP_DENY:
        return parse_syscalls(c, arg);
    case OPT_SECCOMP_ERRNO:
        return parse_errno(arg, &c->seccomp_errno);
    case OPT_LANDLOCK_RO:
        return add_landlock(c, "landlock-ro", arg, FL_LANDLOCK_READ);
    case OPT_LANDLOCK_RX:
        return add_landlock(c, "landlock-rx", arg, FL_LANDLOCK_READ | FL_LANDLOCK_EXEC);
    case OPT_LANDLOCK_RW:
        return add_landlock(c, "landlock-rw", arg, FL_LANDLOCK_READ | FL_LANDLOCK_WRITE);
    }
    cli_error("internal error: option %d not handled", opt);
    return -1;
}

/* Says why fl_seccomp_deny() refused the list. */
static void seccomp_build_error(int r, size_t n)
{
    if (r == EINVAL)
        cli_error("--seccomp-deny: %zu system calls are too many for one filter (at most "
                  "1000)", n);
    else if (r == ENOTSUP)
        cli_error("--seccomp-deny: seccomp filters are not supported on this architecture "
                  "by forkless");
    else
        cli_error("--seccomp-deny: cannot build the filter: %s", strerror(r));
}

static bool contain_given(const struct fl_contain *k)
{
    return k->unshare || k->map || k->hostname || k->chroot || k->flags || k->cap_ambient ||
           k->seccomp || k->nlandlock;
}

int contain_finish(struct contain_options *c, struct fl_cmd *cmd)
{
    struct fl_contain *k = &c->contain;
    if (c->seccomp_errno && !c->nsyscalls) {
        cli_error("--seccomp-errno needs --seccomp-deny");
        return -1;
    }
    if (c->best_effort && !c->sched.set && !k->nlandlock) {
        cli_error("--best-effort applies to --cpus, --nice, --ionice, --oom-score-adj and "
                  "the --landlock options: none is given");
        return -1;
    }
    /* As unshare(1) -r, and as the library needs for the fresh /proc. */
    if (k->map)
        k->unshare |= FL_NS_USER;
    if (k->hostname)
        k->unshare |= FL_NS_UTS;
    if (k->flags & FL_MOUNT_PROC)
        k->unshare |= FL_NS_MOUNT | FL_NS_PID;
    /* An unprivileged process may install filters only under
     * no_new_privs; forkless sets it, as systemd does. */
    if (c->nsyscalls || k->nlandlock)
        k->flags |= FL_NO_NEW_PRIVS;
    if (c->caps_given) {
        k->flags |= FL_CAP_BOUNDING;
        unsigned long long outside = k->cap_ambient & ~k->cap_bounding;
        if (outside) {
            int cap = __builtin_ctzll(outside);
            const char *name = cap_name(cap);
            char number[16];
            snprintf(number, sizeof number, "%d", cap);
            cli_error("--ambient-caps: %s is not in the bounding set that --caps keeps",
                      name ? name : number);
            return -1;
        }
    }
    if (c->best_effort) {
        c->sched.best_effort = c->sched.set;
        if (k->nlandlock)
            k->flags |= FL_LANDLOCK_BEST_EFFORT;
    }
    if (c->nsyscalls) {
        int r = fl_seccomp_deny(c->syscalls, c->nsyscalls,
                                c->seccomp_errno ? c->seccomp_errno : EPERM, &c->seccomp);
        if (r != 0) {
            seccomp_build_error(r, c->nsyscalls);
            return -1;
        }
        k->seccomp = &c->seccomp;
    }
    k->landlock = k->nlandlock ? c->landlock : NULL;
    if (contain_given(k))
        cmd->contain = k;
    if (c->sched.set)
        cmd->sched = &c->sched;
    return 0;
}

void contain_free(struct contain_options *c)
{
    free(c->landlock);
    free(c->syscalls);
    free(c->chroot);
    fl_seccomp_free(&c->seccomp);
    if (c->cpus)
        CPU_FREE(c->cpus);
}
