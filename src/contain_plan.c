/* contain_plan.c: prepare .contain and .sched. The checks, the clone
 * flags, the id maps as text, and a copy of everything the child reads,
 * in one block (struct fl__box), so that the child only makes system
 * calls on memory the plan owns. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <sched.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>

#include "internal.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

#define ALL_NS (FL_NS_USER | FL_NS_MOUNT | FL_NS_PID | FL_NS_NET | FL_NS_IPC | FL_NS_UTS | \
                FL_NS_CGROUP | FL_NS_TIME)
#define ALL_CONTAIN_FLAGS (FL_NO_NEW_PRIVS | FL_MOUNT_PROC | FL_CAP_BOUNDING | \
                           FL_LANDLOCK_BEST_EFFORT)
#define ALL_ACCESS (FL_LANDLOCK_READ | FL_LANDLOCK_EXEC | FL_LANDLOCK_WRITE)
#define ALL_SCHED (FL_SCHED_CPUS | FL_SCHED_NICE | FL_SCHED_IOPRIO | FL_SCHED_OOM_SCORE_ADJ)
/* The kernel's __NEW_UTS_LEN: sethostname() says EINVAL beyond it. */
#define HOSTNAME_MAX 64

static const struct { unsigned ns; uint64_t flag; const char *name; } ns_flags[] = {
    { FL_NS_USER, CLONE_NEWUSER, "user" }, { FL_NS_MOUNT, CLONE_NEWNS, "mnt" },
    { FL_NS_PID, CLONE_NEWPID, "pid" },    { FL_NS_NET, CLONE_NEWNET, "net" },
    { FL_NS_IPC, CLONE_NEWIPC, "ipc" },    { FL_NS_UTS, CLONE_NEWUTS, "uts" },
    { FL_NS_CGROUP, CLONE_NEWCGROUP, "cgroup" }, { FL_NS_TIME, CLONE_NEWTIME, "time" },
};

const char *fl__ns_name(unsigned ns)
{
    for (size_t i = 0; i < sizeof ns_flags / sizeof *ns_flags; i++)
        if (ns_flags[i].ns == ns)
            return ns_flags[i].name;
    return "?";
}

const char *fl__clone_detail(uint64_t ns, int err, const char *call, char *buf, size_t size)
{
    if (!ns || (err != EPERM && err != EINVAL && err != ENOSPC && err != EUSERS))
        return call;
    size_t n = (size_t)snprintf(buf, size, "%s with new namespaces:", call);
    for (size_t i = 0; i < sizeof ns_flags / sizeof *ns_flags && n < size; i++)
        if (ns & ns_flags[i].flag)
            n += (size_t)snprintf(buf + n, size - n, " %s", ns_flags[i].name);
    return buf;
}

static int invalid(struct fl_error *e, const char *what)
{
    return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", what);
}

static bool reserved_clear(void *const *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (r[i])
            return false;
    return true;
}

/* FL_LANDLOCK_BEST_EFFORT only says how to apply rules: without any, it
 * asks for nothing. */
bool fl__contain_set(const struct fl_contain *c)
{
    return c && (c->unshare || c->map || c->hostname || c->chroot ||
                 (c->flags & ~(unsigned)FL_LANDLOCK_BEST_EFFORT) || c->cap_ambient ||
                 c->seccomp || c->nlandlock);
}

bool fl__contained(const struct fl_cmd *cmd)
{
    return fl__contain_set(cmd->contain) || (cmd->sched && cmd->sched->set);
}

static int check_contain(const struct fl_contain *c, struct fl_error *e)
{
    if (!reserved_clear(c->reserved_, sizeof c->reserved_ / sizeof *c->reserved_))
        return invalid(e, "fl_contain: reserved fields must be zero");
    if (c->unshare & ~(unsigned)ALL_NS)
        return invalid(e, "fl_contain: unknown namespace bits in .unshare");
    if (c->flags & ~(unsigned)ALL_CONTAIN_FLAGS)
        return invalid(e, "fl_contain: unknown flag bits");
    if ((unsigned)c->map > FL_MAP_CURRENT)
        return invalid(e, "fl_contain: unknown .map");
    if (c->map && !(c->unshare & FL_NS_USER))
        return invalid(e, "fl_contain: .map needs FL_NS_USER");
    if (c->hostname && !(c->unshare & FL_NS_UTS))
        return invalid(e, "fl_contain: .hostname needs FL_NS_UTS");
    if (c->hostname && strlen(c->hostname) > HOSTNAME_MAX)
        return fl__fail(e, EINVAL, FL_STEP_HOSTNAME, -1, c->hostname,
                        "longer than the kernel's 64 bytes");
    if ((c->flags & FL_MOUNT_PROC) && (c->unshare & (FL_NS_MOUNT | FL_NS_PID)) !=
                                          (FL_NS_MOUNT | FL_NS_PID))
        return invalid(e, "fl_contain: FL_MOUNT_PROC needs FL_NS_MOUNT and FL_NS_PID");
    if (c->chroot && strlen(c->chroot) >= PATH_MAX)
        return fl__fail(e, ENAMETOOLONG, FL_STEP_CHROOT, -1, c->chroot, "longer than PATH_MAX");
    if (c->cap_bounding && !(c->flags & FL_CAP_BOUNDING))
        return invalid(e, "fl_contain: .cap_bounding is set without FL_CAP_BOUNDING");
    if ((c->flags & FL_CAP_BOUNDING) && (c->cap_ambient & ~c->cap_bounding)) {
        int cap = __builtin_ctzll(c->cap_ambient & ~c->cap_bounding);
        char what[FL_ERROR_DETAIL_MAX];
        snprintf(what, sizeof what, "ambient capability %d is one that the bounding set drops", cap);
        return fl__fail(e, EINVAL, FL_STEP_AMBIENT, cap, "", what);
    }
    if (c->nlandlock && !c->landlock)
        return invalid(e, "fl_contain: .nlandlock is set but .landlock is NULL");
    for (size_t i = 0; i < c->nlandlock; i++) {
        const struct fl_landlock_path *r = &c->landlock[i];
        if (!r->path)
            return fl__fail(e, EINVAL, FL_STEP_LANDLOCK, (int)i, "", "a rule without a path");
        if (!r->access || (r->access & ~(unsigned)ALL_ACCESS))
            return fl__fail(e, EINVAL, FL_STEP_LANDLOCK, (int)i, r->path,
                            r->access ? "unknown access bits" : "no access given");
    }
    if (c->seccomp) {
        const struct sock_fprog *f = c->seccomp;
        if (!f->len || !f->filter || f->len > BPF_MAXINSNS)
            return fl__fail(e, EINVAL, FL_STEP_SECCOMP, -1, "",
                            "a filter needs 1 to 4096 instructions");
    }
    return 0;
}

#define FL__CPUS_SIZE_MAX ((size_t)64 * 1024)

static int check_sched(const struct fl_sched *s, struct fl_error *e)
{
    if (!reserved_clear(s->reserved_, sizeof s->reserved_ / sizeof *s->reserved_))
        return invalid(e, "fl_sched: reserved fields must be zero");
    if (s->set & ~(unsigned)ALL_SCHED)
        return invalid(e, "fl_sched: unknown bits in .set");
    if (s->best_effort & ~s->set)
        return invalid(e, "fl_sched: .best_effort names a setting .set does not");
    if ((s->set & FL_SCHED_CPUS) && (!s->cpus || !s->cpus_size))
        return fl__fail(e, EINVAL, FL_STEP_AFFINITY, -1, "", "no CPU mask");
    /* The child gets a copy; a kernel reads at most its own mask (8,192
     * CPUs: 1 KiB), so a larger size is a mistake, not a bigger machine. */
    if ((s->set & FL_SCHED_CPUS) && s->cpus_size > FL__CPUS_SIZE_MAX)
        return fl__fail(e, EINVAL, FL_STEP_AFFINITY, -1, "",
                        "cpus_size is larger than any kernel's CPU mask (64 KiB)");
    if ((s->set & FL_SCHED_NICE) && (s->nice < -20 || s->nice > 19))
        return fl__fail(e, EINVAL, FL_STEP_NICE, -1, "", "nice is -20 to 19");
    if ((s->set & FL_SCHED_IOPRIO) &&
        (s->ioprio_class < FL_IOPRIO_REALTIME || s->ioprio_class > FL_IOPRIO_IDLE ||
         s->ioprio_level < 0 || s->ioprio_level > 7))
        return fl__fail(e, EINVAL, FL_STEP_IOPRIO, -1, "",
                        "the class is 1-3 (realtime, best-effort, idle), the level 0-7");
    if ((s->set & FL_SCHED_OOM_SCORE_ADJ) && (s->oom_score_adj < -1000 || s->oom_score_adj > 1000))
        return fl__fail(e, EINVAL, FL_STEP_OOM_SCORE_ADJ, -1, "/proc/self/oom_score_adj",
                        "oom_score_adj is -1000 to 1000");
    return 0;
}

int fl__contain_check(const struct fl_cmd *cmd, struct fl_error *e)
{
    int r = cmd->contain ? check_contain(cmd->contain, e) : 0;
    return !r && cmd->sched ? check_sched(cmd->sched, e) : r;
}

/* A bump allocator over one block: the first pass only counts. */
struct block {
    char *base;
    size_t used;
};

static void *take(struct block *b, const void *src, size_t n, size_t align)
{
    b->used = (b->used + align - 1) & ~(align - 1);
    void *at = b->base ? b->base + b->used : NULL;
    if (at && src)
        memcpy(at, src, n);
    b->used += n;
    return at;
}

static const char *take_str(struct block *b, const char *s)
{
    return s ? take(b, s, strlen(s) + 1, 1) : NULL;
}

/* The copies, laid out after the box itself. */
static void fill(struct block *b, const struct fl_cmd *cmd, struct fl__box *box)
{
    const struct fl_contain *c = cmd->contain;
    const struct fl_sched *s = cmd->sched;
    take(b, NULL, sizeof *box, alignof(struct fl__box));
    if (c) {
        box->hostname = take_str(b, c->hostname);
        box->chroot = take_str(b, c->chroot);
        if (c->flags & FL_MOUNT_PROC) {
            char *t = take(b, NULL, (c->chroot ? strlen(c->chroot) : 0) + sizeof "/proc", 1);
            if (t)
                sprintf(t, "%s/proc", c->chroot ? c->chroot : "");
            box->proc_target = t;
        }
        if (c->seccomp) {
            const struct sock_fprog *f = c->seccomp;
            struct sock_fprog *copy = take(b, f, sizeof *f, alignof(struct sock_fprog));
            struct sock_filter *ins = take(b, f->filter, f->len * sizeof *f->filter,
                                           alignof(struct sock_filter));
            if (copy)
                copy->filter = ins;
            box->seccomp = copy;
        }
    }
    if (s && (s->set & FL_SCHED_CPUS))
        box->cpus = take(b, s->cpus, s->cpus_size, alignof(unsigned long));
}

static void set_fields(struct fl__box *box, const struct fl_cmd *cmd)
{
    const struct fl_contain *c = cmd->contain;
    const struct fl_sched *s = cmd->sched;
    box->landlock_fd = -1;
    if (c) {
        for (size_t i = 0; i < sizeof ns_flags / sizeof *ns_flags; i++)
            if (c->unshare & ns_flags[i].ns)
                box->ns_clone |= ns_flags[i].flag;
        box->flags = c->flags;
        if (c->map) {
            unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
            bool root = c->map == FL_MAP_ROOT;
            box->map = true;
            box->uid_map_len = (size_t)snprintf(box->uid_map, sizeof box->uid_map, "%u %u 1\n",
                                                root ? 0 : uid, uid);
            box->gid_map_len = (size_t)snprintf(box->gid_map, sizeof box->gid_map, "%u %u 1\n",
                                                root ? 0 : gid, gid);
        }
        box->hostname_len = c->hostname ? strlen(c->hostname) : 0;
        box->cap_bounding = c->cap_bounding;
        box->cap_ambient = c->cap_ambient;
    }
    if (s) {
        box->sched_set = s->set;
        box->sched_best_effort = s->best_effort;
        box->cpus_size = s->cpus_size;
        box->nice = s->nice;
        box->ioprio = s->ioprio_class << 13 | s->ioprio_level;
        box->oom_score_adj_len = (size_t)snprintf(box->oom_score_adj, sizeof box->oom_score_adj,
                                                  "%d", s->oom_score_adj);
    }
}

/* The ruleset's fd must outlive the child's fd setup: below stage_min,
 * which every staged copy and the CLONE_FILES table copy keep clear of
 * (so not on a number that an fd action targets, nor on 0-2), and among
 * the fds the closing keeps. It is FD_CLOEXEC: exec closes it. Made a
 * moment ago, it has the lowest free number, most often at or above
 * stage_min: stage_min then moves past it, which a copy could only do to
 * a higher number (F_DUPFD takes the lowest free one from stage_min up),
 * for two more system calls. Only one on 0-2 or on a target moves. */
static int place_ruleset(struct fl__plan *p, struct fl_error *e)
{
    struct fl__box *b = p->box;
    if (b->landlock_fd >= 3 && b->landlock_fd >= p->stage_min) {
        p->stage_min = b->landlock_fd + 1;
    } else if (b->landlock_fd < 3 || fl__is_target(p, b->landlock_fd)) {
        int fd = fcntl(b->landlock_fd, F_DUPFD_CLOEXEC, p->stage_min);
        int err = errno;
        close(b->landlock_fd);
        b->landlock_fd = fd;
        if (fd < 0)
            return fl__fail(e, err, FL_STEP_LANDLOCK, -1, "", "no fd left for the ruleset");
        p->stage_min = fd + 1;
    }
    size_t i = p->nkeep++;
    for (; i > 0 && p->keep[i - 1] > b->landlock_fd; i--)
        p->keep[i] = p->keep[i - 1];
    p->keep[i] = b->landlock_fd;
    return 0;
}

int fl__plan_box(struct fl__plan *p, struct fl_error *e)
{
    const struct fl_cmd *cmd = p->cmd;
    /* posix_spawn refuses them all (spawn_posix.c): built, a Landlock rule
     * whose path is not there would be the error instead. */
    if (!fl__contained(cmd) || cmd->backend == FL_BACKEND_POSIX_SPAWN)
        return 0;
    struct block b = { 0 };
    struct fl__box scratch = { 0 };
    fill(&b, cmd, &scratch);
    b.base = calloc(1, b.used);
    if (!b.base)
        return fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, "", "the containment plan");
    p->box = (struct fl__box *)b.base;
    b.used = 0;
    fill(&b, cmd, p->box);
    set_fields(p->box, cmd);
    if (!cmd->contain || !cmd->contain->nlandlock)
        return 0;
    int r = fl__landlock_build(cmd->contain, p->box, e);
    return !r && p->box->landlock_fd >= 0 ? place_ruleset(p, e) : r;
}

uint64_t fl__box_clone_flags(struct fl__plan *p)
{
    struct fl__box *b = p->box;
    b->cgroup_ns_late = (b->ns_clone & CLONE_NEWCGROUP) && p->cgroup_procs && p->cgroup_fd < 0;
    return b->cgroup_ns_late ? b->ns_clone & ~(uint64_t)CLONE_NEWCGROUP : b->ns_clone;
}

void fl__box_close_in_parent(struct fl__box *b)
{
    if (!b || b->landlock_fd < 0 || b->landlock_fd_closed)
        return;
    close(b->landlock_fd);
    b->landlock_fd_closed = true;
}

void fl__box_free(struct fl__box *b)
{
    if (!b)
        return;
    fl__box_close_in_parent(b);
    free(b);
}
