/* contain_report.c: the messages of the containment and placement
 * options: a step that failed, with the value it was given and what it
 * needs, and the --best-effort settings that did not apply. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "capnames.h"
#include "cli.h"
#include "contain_opts.h"
#include "report.h"

/* "cap_net_raw", or the number for a capability without a name here. */
static const char *cap_text(int cap, char *buf, size_t size)
{
    const char *name = cap_name(cap);
    if (name)
        return name;
    snprintf(buf, size, "capability %d", cap);
    return buf;
}

/* What a placement step needs where it was refused for want of privilege,
 * into buf. The kernel asks for the capability in the initial user
 * namespace: one held in a new or an enclosing one does not count. */
static const char *place_hint(const struct contain_options *c, enum fl_step step, int err,
                              char *buf, size_t size)
{
    if (err == EINVAL && step == FL_STEP_AFFINITY)
        return " (--cpus: none of these CPUs is available to the program)";
    if (err != EPERM && err != EACCES)
        return "";
    const char *need;
    switch (step) {
    case FL_STEP_NICE: need = "a lower nice value needs CAP_SYS_NICE"; break;
    case FL_STEP_IOPRIO: need = "the realtime class needs CAP_SYS_NICE or CAP_SYS_ADMIN"; break;
    case FL_STEP_OOM_SCORE_ADJ: need = "a lower value needs CAP_SYS_RESOURCE"; break;
    default: return "";
    }
    snprintf(buf, size, " (%s%s)", need, init_ns_scope(c->contain.unshare & FL_NS_USER));
    return buf;
}

/* The text given for a placement step, or NULL for another step. */
static const char *place_value(const struct contain_options *c, enum fl_step step)
{
    switch (step) {
    case FL_STEP_AFFINITY: return c->cpus_arg;
    case FL_STEP_NICE: return c->nice_arg;
    case FL_STEP_IOPRIO: return c->ionice_arg;
    case FL_STEP_OOM_SCORE_ADJ: return c->oom_arg;
    default: return NULL;
    }
}

/* The options that asked for new namespaces, as the user typed them:
 * "--unshare", "--hostname", "--mount-proc", "--map-root-user" ... */
static const char *ns_options(const struct contain_options *c, char *buf, size_t size)
{
    const struct fl_contain *k = &c->contain;
    const char *names[4];
    size_t n = 0, used = 0;
    if (c->unshare_given)
        names[n++] = "--unshare";
    if (k->hostname)
        names[n++] = "--hostname";
    if (k->flags & FL_MOUNT_PROC)
        names[n++] = "--mount-proc";
    if (k->map)
        names[n++] = k->map == FL_MAP_ROOT ? "--map-root-user" : "--map-current-user";
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", names[i]);
    return n ? buf : "--unshare";
}

/* The option of landlock rule i, told by its rights. */
static const char *landlock_option(const struct fl_contain *k, int i)
{
    if (i < 0 || (size_t)i >= k->nlandlock)
        return NULL;
    unsigned a = k->landlock[i].access;
    return a & FL_LANDLOCK_WRITE ? "--landlock-rw"
           : a & FL_LANDLOCK_EXEC ? "--landlock-rx" : "--landlock-ro";
}

bool contain_explain(const struct contain_options *c, const struct fl_error *e,
                     const char *message, char *buf, size_t size)
{
    const struct fl_contain *k = &c->contain;
    const char *error = strerror(e->err);
    const char *value = place_value(c, e->step);
    char cap[32], opts[96], hint[128];
    const char *rule;
    if (value) {
        snprintf(buf, size, "%s %s: %s%s", fl_step_name(e->step), value, error,
                 place_hint(c, e->step, e->err, hint, sizeof hint));
        return true;
    }
    switch (e->step) {
    case FL_STEP_CLONE:
        if (!k->unshare || (e->err != EPERM && e->err != ENOSPC && e->err != EINVAL))
            return false;
        snprintf(buf, size, "%s (%s: %s)", message, ns_options(c, opts, sizeof opts),
                 e->err == ENOSPC ? "the limit of namespaces is reached "
                                    "(/proc/sys/user/max_*_namespaces)"
                 : e->err == EINVAL ? "this kernel cannot make one of these namespaces"
                 : k->unshare & FL_NS_USER
                     ? "this system does not let this user make a user namespace"
                     : "new namespaces need CAP_SYS_ADMIN, or a new user namespace with "
                       "them: --unshare user or --map-root-user");
        return true;
    case FL_STEP_UNSHARE:
        snprintf(buf, size, "%s (--unshare %s%s)", message,
                 e->index == FL_NS_CGROUP ? "cgroup" : "time",
                 e->err != EPERM ? ""
                 : k->unshare & FL_NS_USER
                     ? ": this system does not let this user make it"
                     : ": a new namespace needs CAP_SYS_ADMIN, or a new user namespace with it: "
                       "--unshare user or --map-root-user");
        return true;
    case FL_STEP_ID_MAP:
        snprintf(buf, size, "%s (--%s)", message,
                 k->map == FL_MAP_ROOT ? "map-root-user" : "map-current-user");
        return true;
    case FL_STEP_MOUNT:
        if (e->index != 1)
            return false;
        snprintf(buf, size, "%s (--mount-proc)", message);
        return true;
    case FL_STEP_BOUNDING:
        if (e->index < 0)
            snprintf(buf, size, "%s (--caps: trimming the inheritable set to the same "
                     "capabilities)", message);
        else
            snprintf(buf, size, "bounding %s: %s (--caps: dropping from the bounding set needs "
                     "CAP_SETPCAP)", cap_text(e->index, cap, sizeof cap), error);
        return true;
    case FL_STEP_AMBIENT:
        if (e->index >= 0)
            snprintf(buf, size, "ambient %s: %s (--ambient-caps: an ambient capability "
                     "must be permitted and in the bounding set)",
                     cap_text(e->index, cap, sizeof cap), error);
        else
            snprintf(buf, size, "%s (--ambient-caps %s%s)", message,
                     c->ambient_arg ? c->ambient_arg : "",
                     e->err == EPERM ? ": an ambient capability must be forkless's to give, "
                                       "in its permitted and bounding sets" : "");
        return true;
    case FL_STEP_CHROOT:
        snprintf(buf, size, "%s (--chroot%s)", message,
                 e->err != EPERM ? ""
                 : k->unshare & FL_NS_USER ? ""
                 : ": changing the root needs CAP_SYS_CHROOT, or a new user namespace with "
                   "it: --map-root-user");
        return true;
    case FL_STEP_LANDLOCK:
        if (e->path[0] && (rule = landlock_option(k, e->index))) {
            snprintf(buf, size, "%s (%s %s)", message, rule, k->landlock[e->index].path);
            return true;
        }
        /* The library's detail names its flag; ours is --best-effort. */
        if (e->err != ENOTSUP || e->path[0])
            return false;
        if (fl_landlock_abi() > 0)
            snprintf(buf, size, "landlock: %s (the kernel's Landlock ABI is %d, too old for "
                     "some rights; --best-effort uses what it has)", error, fl_landlock_abi());
        else
            snprintf(buf, size, "landlock: %s (the kernel has no Landlock; --best-effort "
                     "goes on without)", error);
        return true;
    default:
        return false;
    }
}

void contain_report(const struct contain_options *c, const struct fl_proc *proc)
{
    static const struct {
        unsigned setting;
        enum fl_step step;
        const char *name;  /* the option's, without the dashes */
    } settings[] = {
        { FL_SCHED_CPUS, FL_STEP_AFFINITY, "cpus" },
        { FL_SCHED_NICE, FL_STEP_NICE, "nice" },
        { FL_SCHED_IOPRIO, FL_STEP_IOPRIO, "ionice" },
        { FL_SCHED_OOM_SCORE_ADJ, FL_STEP_OOM_SCORE_ADJ, "oom-score-adj" },
    };
    for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
        if (proc->not_applied & settings[i].setting)
            cli_error("%s %s not applied (best effort)", settings[i].name,
                      place_value(c, settings[i].step));
    if (proc->landlock_unenforced)
        cli_error("landlock: rights not enforced by this kernel: 0x%x",
                  proc->landlock_unenforced);
}
