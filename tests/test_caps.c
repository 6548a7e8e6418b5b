/*
 * test_caps.c: the capability settings of fl_cmd.contain, seen from the
 * program: the bounding set (FL_CAP_BOUNDING), ambient capabilities
 * across a uid change, and their failures with step, errno and index.
 * The probe's "caps" report reads all five sets with system calls
 * (capget() and prctl()), bit n for capability n.
 */
#include "contain.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define BIT(cap) (1ULL << (cap))
#define NET_BIND BIT(CAP_NET_BIND_SERVICE)   /* 10 */

static void require_root(const char *why)
{
    if (!t_is_root())
        SKIP(why);
}

/* Every capability this kernel knows. */
static unsigned long long all_caps(void)
{
    if (access("/proc/sys/kernel/cap_last_cap", R_OK) != 0)
        SKIP("no /proc/sys/kernel/cap_last_cap to read the kernel's capabilities from");
    long last = strtol(t_read_file("/proc/sys/kernel/cap_last_cap"), NULL, 10);
    return last >= 63 ? ~0ULL : BIT(last + 1) - 1;
}

static char *caps_of(const struct fl_contain *c, unsigned flags, uid_t uid)
{
    struct fl_cmd cmd = { .argv = PROBE("caps", "ids"), .contain = c, .flags = flags,
                          .uid = uid, .gid = uid, .backend = BACKEND };
    return t_probe(&cmd);
}

/* ---- the bounding set ---------------------------------------------------------------- */

TEST(no_capability_setting_leaves_the_sets_as_they_are)
{
    struct fl_contain c = { .unshare = 0, .flags = FL_NO_NEW_PRIVS };
    struct fl_cmd cmd = { .argv = PROBE("caps"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *inside = t_probe(&cmd);
    char *ours = t_probe(&(struct fl_cmd){ .argv = PROBE("caps"), .flags = FL_KEEP_FDS,
                                           .backend = BACKEND });
    ASSERT_STR_EQ(inside, ours);
}

TEST(the_bounding_set_keeps_only_the_given_capabilities)
{
    unsigned long long keep = NET_BIND | BIT(CAP_CHOWN) | BIT(CAP_SETUID);
    struct fl_contain c = { .flags = FL_CAP_BOUNDING, .cap_bounding = keep };
    struct fl_cmd cmd = { .argv = PROBE("caps"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root("needs root: CAP_SETPCAP to drop from the bounding set");
    char *out = caps_of(&c, 0, 0);
    ASSERT_EQ(t_hex(out, "cap_bnd"), keep);
    /* Root's exec takes its permitted set from the bounding set. */
    ASSERT_EQ(t_hex(out, "cap_prm") & ~keep, 0);
    ASSERT_EQ(t_hex(out, "cap_eff") & ~keep, 0);
    ASSERT_EQ(t_hex(out, "cap_prm") & NET_BIND, NET_BIND);
    /* An empty set: nothing is left for any exec to give. */
    c.cap_bounding = 0;
    out = caps_of(&c, 0, 0);
    ASSERT_EQ(t_hex(out, "cap_bnd"), 0);
    ASSERT_EQ(t_hex(out, "cap_prm"), 0);
}

/* The caller's own inheritable set (and, for ambient capabilities, the
 * ambient set) takes extra, which an exec would pass on past the bounding
 * set: root's permitted set gets the inheritable one, anyone's the
 * ambient one. This test's process is its own, so its sets may change. */
static void hold_inheritable_and_ambient(unsigned long long extra)
{
    struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    ASSERT_SYS(syscall(SYS_capget, &head, data));
    data[0].inheritable |= (uint32_t)extra;
    data[1].inheritable |= (uint32_t)(extra >> 32);
    ASSERT_SYS(syscall(SYS_capset, &head, data));
    for (int cap = 0; cap < 64; cap++)
        if (extra & BIT(cap))
            ASSERT_SYS(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0));
}

TEST(the_bounding_set_also_bounds_the_inherited_inheritable_and_ambient_sets)
{
    struct fl_contain c = { .flags = FL_CAP_BOUNDING, .cap_bounding = NET_BIND };
    struct fl_cmd cmd = { .argv = PROBE("caps"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root("needs root: CAP_SETPCAP to drop from the bounding set");
    unsigned long long extra = BIT(CAP_NET_RAW) | BIT(CAP_SYS_ADMIN);
    hold_inheritable_and_ambient(extra);
    char *out = caps_of(&c, 0, 0);
    ASSERT_EQ(t_hex(out, "cap_bnd"), NET_BIND);
    ASSERT_EQ(t_hex(out, "cap_inh") & ~NET_BIND, 0);
    ASSERT_EQ(t_hex(out, "cap_amb"), 0);
    ASSERT_EQ(t_hex(out, "cap_prm") & ~NET_BIND, 0);
    ASSERT_EQ(t_hex(out, "cap_eff") & ~NET_BIND, 0);
    /* As another uid, only the ambient set could carry them. */
    out = caps_of(&c, FL_SET_UID | FL_SET_GID, 65534);
    ASSERT_EQ(t_hex(out, "cap_amb"), 0);
    ASSERT_EQ(t_hex(out, "cap_prm"), 0);
}

TEST(a_bounding_set_with_every_bit_drops_nothing)
{
    struct fl_contain c = { .flags = FL_CAP_BOUNDING, .cap_bounding = ~0ULL };
    struct fl_cmd cmd = { .argv = PROBE("caps"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    char *ours = t_probe(&(struct fl_cmd){ .argv = PROBE("caps"), .flags = FL_KEEP_FDS,
                                           .backend = BACKEND });
    ASSERT_EQ(t_hex(out, "cap_bnd"), t_hex(ours, "cap_bnd"));
    t_rerun_as_nobody();
}

TEST(a_bounding_set_that_takes_nothing_away_needs_no_privilege)
{
    /* Every capability the caller's bounding set holds, and none of
     * those it lacks or this kernel does not know: nothing is dropped,
     * so no CAP_SETPCAP is needed (the drop would say EPERM before it
     * looked at the capability). */
    struct fl_cmd plain = { .argv = PROBE("caps"), .flags = FL_KEEP_FDS, .backend = BACKEND };
    unsigned long long ours = t_hex(t_probe(&plain), "cap_bnd");
    struct fl_contain c = { .flags = FL_CAP_BOUNDING, .cap_bounding = ours };
    struct fl_cmd cmd = { .argv = PROBE("caps"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    ASSERT_EQ(t_hex(t_probe(&cmd), "cap_bnd"), ours);
    t_rerun_as_nobody();
}

TEST(the_bounding_set_in_a_new_user_ns_as_root_and_as_nobody)
{
    /* The new namespace gives the child CAP_SETPCAP over itself, so an
     * unprivileged caller can narrow its program's bounding set there. */
    struct fl_contain c = { .unshare = FL_NS_USER, .map = FL_MAP_ROOT,
                            .flags = FL_CAP_BOUNDING, .cap_bounding = NET_BIND };
    struct fl_cmd cmd = { .argv = PROBE("caps", "ids"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "uid"), 0);
    ASSERT_EQ(t_hex(out, "cap_bnd"), NET_BIND);
    ASSERT_EQ(t_hex(out, "cap_prm"), NET_BIND);
    ASSERT_EQ(t_hex(out, "cap_eff"), NET_BIND);
    t_rerun_as_nobody();
}

TEST(a_bounding_drop_without_cap_setpcap_is_eperm_naming_the_capability)
{
    struct fl_contain c = { .flags = FL_CAP_BOUNDING, .cap_bounding = ~BIT(CAP_SYS_ADMIN) };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (t_rerun_as_nobody())
        return;
    if (t_is_root())
        SKIP("needs an unprivileged caller (run as root, it re-runs as uid 65534)");
    /* The first capability dropped is the one named. */
    struct fl_error e = SPAWN_FAILS(&cmd, EPERM, FL_STEP_BOUNDING);
    ASSERT_EQ(e.index, CAP_SYS_ADMIN);
    ASSERT_STR_EQ(e.detail, t_fmt("capability %d", CAP_SYS_ADMIN));  /* the message shows it */
    c.cap_bounding = 0;
    e = SPAWN_FAILS(&cmd, EPERM, FL_STEP_BOUNDING);
    ASSERT_EQ(e.index, 0);
}

/* ---- ambient capabilities ------------------------------------------------------------- */

TEST(an_ambient_capability_survives_the_change_to_another_uid)
{
    struct fl_contain c = { .cap_ambient = NET_BIND };
    struct fl_cmd cmd = { .argv = PROBE("caps"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root("needs root: a capability to keep, and a uid to change to");
    char *out = caps_of(&c, FL_SET_UID | FL_SET_GID, 65534);
    ASSERT_EQ(t_get_num(out, "uid"), 65534);
    ASSERT_EQ(t_get_num(out, "euid"), 65534);
    /* After the exec of a plain program, exactly that capability. */
    ASSERT_EQ(t_hex(out, "cap_amb"), NET_BIND);
    ASSERT_EQ(t_hex(out, "cap_prm"), NET_BIND);
    ASSERT_EQ(t_hex(out, "cap_eff"), NET_BIND);
    ASSERT_EQ(t_hex(out, "cap_inh"), NET_BIND);
    /* Without it, the uid change leaves nothing. */
    c.cap_ambient = 0;
    c.flags = FL_NO_NEW_PRIVS;   /* a contain that still counts */
    out = caps_of(&c, FL_SET_UID | FL_SET_GID, 65534);
    ASSERT_EQ(t_hex(out, "cap_prm"), 0);
    ASSERT_EQ(t_hex(out, "cap_amb"), 0);
}

/* A file's inheritable bits would give the new user what the caller
 * holds in its inheritable set: a uid change empties it. */
TEST(a_uid_change_leaves_none_of_the_callers_inheritable_capabilities)
{
    struct fl_cmd cmd = { .argv = PROBE("caps"), .flags = FL_SET_UID, .uid = 65534,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root("needs root: an inheritable capability to hold, and a uid to change to");
    hold_inheritable_and_ambient(BIT(CAP_NET_RAW));
    char *out = caps_of(NULL, FL_SET_UID | FL_SET_GID, 65534);
    ASSERT_EQ(t_get_num(out, "uid"), 65534);
    ASSERT_EQ(t_hex(out, "cap_inh"), 0);
    ASSERT_EQ(t_hex(out, "cap_amb"), 0);
    /* An ambient capability asked for is the one left. */
    struct fl_contain c = { .cap_ambient = NET_BIND };
    out = caps_of(&c, FL_SET_UID | FL_SET_GID, 65534);
    ASSERT_EQ(t_hex(out, "cap_inh"), NET_BIND);
    ASSERT_EQ(t_hex(out, "cap_amb"), NET_BIND);
    /* No uid change, no drop: root's child keeps what root holds. */
    out = caps_of(NULL, 0, 0);
    ASSERT_EQ(t_hex(out, "cap_inh") & BIT(CAP_NET_RAW), BIT(CAP_NET_RAW));
}

TEST(an_ambient_capability_stays_with_root)
{
    struct fl_contain c = { .cap_ambient = NET_BIND | BIT(CAP_KILL) };
    struct fl_cmd cmd = { .argv = PROBE("caps"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root("needs root: capabilities to raise");
    char *out = caps_of(&c, 0, 0);
    ASSERT_EQ(t_hex(out, "cap_amb"), NET_BIND | BIT(CAP_KILL));
    ASSERT_EQ(t_hex(out, "cap_inh"), NET_BIND | BIT(CAP_KILL));
}

TEST(an_ambient_capability_in_a_new_user_ns_as_root_and_as_nobody)
{
    /* Uid 65534 inside (FL_MAP_CURRENT as nobody), not root there: its
     * program keeps only the ambient capability across the exec. */
    struct fl_contain c = { .unshare = FL_NS_USER, .map = FL_MAP_CURRENT, .cap_ambient = NET_BIND };
    struct fl_cmd cmd = { .argv = PROBE("caps", "ids"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "uid"), geteuid());
    ASSERT_EQ(t_hex(out, "cap_amb"), NET_BIND);
    if (!t_is_root()) {
        ASSERT_EQ(t_hex(out, "cap_prm"), NET_BIND);
        ASSERT_EQ(t_hex(out, "cap_eff"), NET_BIND);
    }
    t_rerun_as_nobody();
}

TEST(an_ambient_capability_the_child_does_not_hold_is_eperm_at_step_ambient)
{
    struct fl_contain c = { .cap_ambient = NET_BIND };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (t_rerun_as_nobody())
        return;
    if (t_is_root())
        SKIP("needs an unprivileged caller (run as root, it re-runs as uid 65534)");
    /* Not permitted, so not allowed into the inheritable set: capset()
     * refuses, and the header's index for it is -1. */
    struct fl_error e = SPAWN_FAILS(&cmd, EPERM, FL_STEP_AMBIENT);
    ASSERT_EQ(e.index, -1);
}

TEST(an_ambient_capability_the_bounding_set_drops_is_einval_before_the_child)
{
    struct fl_contain c = { .flags = FL_CAP_BOUNDING, .cap_bounding = all_caps() & ~NET_BIND,
                            .cap_ambient = NET_BIND };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .flags = FL_SET_UID,
                          .uid = 65534, .backend = BACKEND };
    /* The child could never raise it (the inheritable set cannot grow past
     * the bounding set), so the command is refused as it is checked, under
     * every backend. */
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_AMBIENT);
    ASSERT_EQ(e.index, CAP_NET_BIND_SERVICE);
    ASSERT_STR_CONTAINS(e.detail, t_fmt("ambient capability %d ", CAP_NET_BIND_SERVICE));
}

/* The child of a process whose inheritable set holds CAP_NET_BIND_SERVICE
 * but whose permitted set does not: the inheritable set takes it (it is
 * there already), the raise does not. Run in a forked subprocess, whose
 * capabilities can go for good. */
static int spawn_with_inheritable_only(void)
{
    struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0)
        return 100;
    d[0].inheritable |= (uint32_t)NET_BIND;
    if (syscall(SYS_capset, &h, d) != 0)
        return 101;
    d[0].permitted &= ~(uint32_t)NET_BIND;
    d[0].effective &= ~(uint32_t)NET_BIND;
    if (syscall(SYS_capset, &h, d) != 0)
        return 102;
    struct fl_contain c = { .cap_ambient = NET_BIND };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    if (r == 0) {
        fl_wait(&p, -1, NULL);
        fl_close(&p);
        return 103;
    }
    if (r != EPERM || e.err != EPERM)
        return 104;
    if (e.step != FL_STEP_AMBIENT)
        return 105;
    return e.index == CAP_NET_BIND_SERVICE ? 0 : 106;
}

TEST(an_ambient_raise_of_a_capability_not_permitted_is_eperm_naming_it)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"),
                          .contain = &(struct fl_contain){ .cap_ambient = NET_BIND },
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root("needs root: CAP_SETPCAP to make a capability inheritable only");
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0)
        _exit(spawn_with_inheritable_only());
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) >= 100 && WEXITSTATUS(st) <= 102)
        FAIL("the subprocess could not set its own capabilities (%d)", WEXITSTATUS(st));
    /* 0: EPERM at step ambient, .index CAP_NET_BIND_SERVICE. */
    ASSERT_EXITED(st, 0);
}
