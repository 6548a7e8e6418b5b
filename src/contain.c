/* contain.c: the child's containment and placement steps, from the box
 * that contain_plan.c filled. Child code, under the rules of child.c: raw
 * system calls on the plan's memory only, built without sanitizers. Each
 * step returns 0, or -1 with p->cerr filled. */
/* GCC may turn a byte loop into a call to the libc's strlen() or memset(),
 * which the child must not make. (A pragma rather than a flag: clang, which
 * the static analysis runs, knows no such flag, and does no such thing.) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>

#include "internal.h"
#include "sys.h"

#define CHILD __attribute__((noinline))

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_RAISE 2
#endif
#define SECCOMP_SET_MODE_FILTER 1
#define IOPRIO_WHO_PROCESS 1
#define CAPS_VERSION_3 0x20080522

CHILD int fl__child_fail(struct fl__plan *p, enum fl_step step, int index, long r)
{
    p->cerr.step = step;
    p->cerr.index = index;
    p->cerr.err = (int)-r;
    return -1;
}

/* text's length comes from the parent: a loop here could be compiled
 * into a call to the libc's strlen(). */
static CHILD long write_file(const char *path, const char *text, size_t len)
{
    long fd = fl__sys4(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return fd;
    long r = fl__sys3(SYS_write, fd, text, len);
    fl__sys1(SYS_close, fd);
    return r < 0 ? r : 0;
}

/* The namespaces clone() could not make, then the user namespace's maps.
 * The child writes its own, from inside: it holds no capability in the
 * parent namespace, root or not, so the kernel lets it map just its own
 * ids, and its gid only once setgroups() is denied in the namespace. */
CHILD int fl__child_enter_ns(struct fl__plan *p)
{
    const struct fl__box *b = p->box;
    long r;
    if (!b)
        return 0;
    if (b->ns_unshare) {
        r = fl__sys1(SYS_unshare, b->ns_unshare);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_UNSHARE, FL_NS_TIME, r);
    }
    if (!b->map)
        return 0;
    r = write_file("/proc/self/uid_map", b->uid_map, b->uid_map_len);
    if (r < 0)
        return fl__child_fail(p, FL_STEP_ID_MAP, 0, r);
    r = write_file("/proc/self/setgroups", "deny", 4);
    if (r < 0)
        return fl__child_fail(p, FL_STEP_ID_MAP, 1, r);
    r = write_file("/proc/self/gid_map", b->gid_map, b->gid_map_len);
    return r < 0 ? fl__child_fail(p, FL_STEP_ID_MAP, 2, r) : 0;
}

/* A cgroup namespace is rooted where the child is when it is made: after
 * the child has written itself into its cgroup, where clone3() could not
 * place it (CLONE_INTO_CGROUP), as it would be otherwise. */
CHILD int fl__child_cgroup_ns(struct fl__plan *p)
{
    long r = p->box && p->box->cgroup_ns_late ? fl__sys1(SYS_unshare, CLONE_NEWCGROUP) : 0;
    return r < 0 ? fl__child_fail(p, FL_STEP_UNSHARE, FL_NS_CGROUP, r) : 0;
}

/* A best-effort setting that fails is noted, and the setup goes on. */
static CHILD int sched_result(struct fl__plan *p, unsigned setting, enum fl_step step, long r)
{
    if (r >= 0)
        return 0;
    if (p->box->sched_best_effort & setting) {
        p->cerr.not_applied |= setting;
        return 0;
    }
    return fl__child_fail(p, step, -1, r);
}

CHILD int fl__child_sched(struct fl__plan *p)
{
    const struct fl__box *b = p->box;
    unsigned set = b ? b->sched_set : 0;
    if ((set & FL_SCHED_CPUS) &&
        sched_result(p, FL_SCHED_CPUS, FL_STEP_AFFINITY,
                     fl__sys3(SYS_sched_setaffinity, 0, b->cpus_size, b->cpus)) < 0)
        return -1;
    if ((set & FL_SCHED_NICE) &&
        sched_result(p, FL_SCHED_NICE, FL_STEP_NICE,
                     fl__sys3(SYS_setpriority, 0 /* PRIO_PROCESS */, 0, b->nice)) < 0)
        return -1;
    if ((set & FL_SCHED_IOPRIO) &&
        sched_result(p, FL_SCHED_IOPRIO, FL_STEP_IOPRIO,
                     fl__sys3(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, b->ioprio)) < 0)
        return -1;
    if ((set & FL_SCHED_OOM_SCORE_ADJ) &&
        sched_result(p, FL_SCHED_OOM_SCORE_ADJ, FL_STEP_OOM_SCORE_ADJ,
                     write_file("/proc/self/oom_score_adj", b->oom_score_adj,
                                b->oom_score_adj_len)) < 0)
        return -1;
    return 0;
}

CHILD int fl__child_root(struct fl__plan *p)
{
    const struct fl__box *b = p->box;
    long r;
    if (!b)
        return 0;
    if (b->hostname) {
        r = fl__sys2(SYS_sethostname, b->hostname, b->hostname_len);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_HOSTNAME, -1, r);
    }
    /* Nothing mounted from here on may reach the caller's namespace. */
    if (b->ns_clone & CLONE_NEWNS) {
        r = fl__sys5(SYS_mount, 0, "/", 0, MS_REC | MS_PRIVATE, 0);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_MOUNT, 0, r);
    }
    if (b->chroot) {
        r = fl__sys1(SYS_chroot, b->chroot);
        if (r == 0)
            r = fl__sys1(SYS_chdir, "/");
        if (r < 0)
            return fl__child_fail(p, FL_STEP_CHROOT, -1, r);
    }
    /* Inside the new root, so that a symbolic link in it cannot send the
     * mount elsewhere. */
    if (b->proc_target) {
        r = fl__sys5(SYS_mount, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, 0);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_MOUNT, 1, r);
    }
    return 0;
}

/* The inheritable set, kept to keep and then with add: capget, and
 * capset only when that changes it. */
static CHILD long set_inheritable(unsigned long long keep, unsigned long long add)
{
    struct { uint32_t version; int pid; } head = { CAPS_VERSION_3, 0 };
    struct { uint32_t effective, permitted, inheritable; } data[2];
    long r = fl__sys2(SYS_capget, &head, data);
    if (r < 0)
        return r;
    bool changed = false;
    for (int i = 0; i < 2; i++) {
        uint32_t now = data[i].inheritable;
        data[i].inheritable = (now & (uint32_t)(keep >> (32 * i))) | (uint32_t)(add >> (32 * i));
        changed |= data[i].inheritable != now;
    }
    return changed ? fl__sys2(SYS_capset, &head, data) : 0;
}

/* The bounding set, while the child still has CAP_SETPCAP (a uid change
 * away from root clears the effective set). Only the capabilities still
 * there are dropped, so that a set that takes nothing away needs no
 * privilege; EINVAL past the kernel's last one ends the walk. The
 * bounding set alone does not bound what
 * exec gives: the inheritable set passes to root's permitted set, and the
 * ambient set to anyone's, whatever the bounding set holds. So the
 * inheritable set is cut to it too (always allowed: it only lowers), and
 * the kernel then drops every ambient capability that is no longer
 * inheritable. PR_SET_KEEPCAPS keeps the permitted set across the uid
 * change, for the ambient capabilities. */
CHILD int fl__child_caps_before(struct fl__plan *p)
{
    const struct fl__box *b = p->box;
    long r;
    /* A new user takes none of the caller's inheritable capabilities: a
     * program file's inheritable bits would turn them into permitted ones
     * at exec. The ambient ones asked for are added after the change. */
    if (p->flags & FL_SET_UID) {
        r = set_inheritable(0, 0);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_SETUID, -1, r);
    }
    if (!b)
        return 0;
    if (b->flags & FL_CAP_BOUNDING) {
        for (int cap = 0; cap < 64; cap++) {
            if (b->cap_bounding & (1ULL << cap))
                continue;
            /* Asked first: the drop needs CAP_SETPCAP before it looks
             * at the capability, so it says EPERM, not EINVAL or nothing,
             * for one past the last or already gone. */
            r = fl__sys2(SYS_prctl, PR_CAPBSET_READ, cap);
            if (r == -EINVAL)
                break;
            if (r == 0)
                continue;
            r = fl__sys2(SYS_prctl, PR_CAPBSET_DROP, cap);
            if (r < 0)
                return fl__child_fail(p, FL_STEP_BOUNDING, cap, r);
        }
        r = set_inheritable(b->cap_bounding, 0);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_BOUNDING, -1, r);
    }
    if (b->cap_ambient && (p->flags & FL_SET_UID)) {
        r = fl__sys2(SYS_prctl, PR_SET_KEEPCAPS, 1);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_AMBIENT, -1, r);
    }
    return 0;
}

/* An ambient capability must be permitted and inheritable: add it to the
 * inheritable set (allowed within the permitted one without CAP_SETPCAP),
 * then raise it. */
CHILD int fl__child_caps_after(struct fl__plan *p)
{
    const struct fl__box *b = p->box;
    if (!b || !b->cap_ambient)
        return 0;
    long r = set_inheritable(~0ULL, b->cap_ambient);
    if (r < 0)
        return fl__child_fail(p, FL_STEP_AMBIENT, -1, r);
    for (int cap = 0; cap < 64; cap++) {
        if (!(b->cap_ambient & (1ULL << cap)))
            continue;
        r = fl__sys5(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_AMBIENT, cap, r);
    }
    return 0;
}

CHILD int fl__child_lock(struct fl__plan *p)
{
    const struct fl__box *b = p->box;
    long r;
    if (!b)
        return 0;
    if (b->flags & FL_NO_NEW_PRIVS) {
        r = fl__sys5(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_NO_NEW_PRIVS, -1, r);
    }
    if (b->landlock_fd >= 0) {
        r = fl__sys2(SYS_landlock_restrict_self, b->landlock_fd, 0);
        if (r < 0)
            return fl__child_fail(p, FL_STEP_LANDLOCK, -1, r);
    }
    return 0;
}

CHILD int fl__child_seccomp(struct fl__plan *p)
{
    const struct fl__box *b = p->box;
    if (!b || !b->seccomp)
        return 0;
    long r = fl__sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, b->seccomp);
    return r < 0 ? fl__child_fail(p, FL_STEP_SECCOMP, -1, r) : 0;
}
