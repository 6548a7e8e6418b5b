/*
 * test_contain.c: fl_cmd.contain seen from the child: namespaces, the user
 * namespace's maps, the host name, private mounts and a fresh /proc, the
 * chroot; and each failure with its step, errno, index and path. The
 * capability sets are in test_caps.c.
 *
 * The probe reports what the child sees ("ns", "ids", "proc"; see
 * tests/probe.c). Only the clone and fork backends contain: under
 * posix_spawn each case asserts ENOTSUP at step prepare and ends.
 *
 * The test runs as root; the cases marked "and as uid 65534" re-run
 * themselves as nobody (t_rerun_as_nobody()), where only a new user
 * namespace gives the privilege the other namespaces need.
 */
#include "contain.h"
#include "denied.h"

#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define CONTAIN(...) (&(struct fl_contain){ __VA_ARGS__ })

#define ALL_BUT_USER (FL_NS_MOUNT | FL_NS_PID | FL_NS_NET | FL_NS_IPC | FL_NS_UTS | \
                      FL_NS_CGROUP | FL_NS_TIME)

static const struct {
    unsigned bit;
    const char *name;
} namespaces[] = {
    { FL_NS_USER, "user" }, { FL_NS_MOUNT, "mnt" },     { FL_NS_PID, "pid" },
    { FL_NS_NET, "net" },   { FL_NS_IPC, "ipc" },       { FL_NS_UTS, "uts" },
    { FL_NS_CGROUP, "cgroup" }, { FL_NS_TIME, "time" },
};
enum { NNS = sizeof namespaces / sizeof *namespaces };

/* The rest of the case runs as uid 65534 only: run as root, the case runs
 * itself again so, and the root run stops here. */
#define UNPRIVILEGED_ONLY()                                                           \
    do {                                                                              \
        if (t_rerun_as_nobody())                                                      \
            return;                                                                   \
        if (t_is_root())                                                              \
            SKIP("needs an unprivileged caller (run as root, it re-runs as uid 65534)"); \
    } while (0)

static void require_root(const char *why)
{
    if (!t_is_root())
        SKIP(why);
}

static bool have_time_ns(void)
{
    return access("/proc/self/ns/time", F_OK) == 0;
}

/* For every namespace: new in the child's report when its bit is in
 * unshare, the caller's otherwise (the *_for_children links too). */
static void assert_namespaces(const char *out, unsigned unshare)
{
    for (size_t i = 0; i < NNS; i++) {
        const char *name = namespaces[i].name;
        if (!strcmp(name, "time") && !have_time_ns())
            continue;
        char *own = t_own_ns(name);
        bool fresh = unshare & namespaces[i].bit;
        char *key = t_fmt("ns_%s", name);
        char *got = t_get(out, key);
        if (!got)
            FAIL("no %s in the report:\n%s", key, out);
        if (fresh == !strcmp(got, own))
            FAIL("%s is %s, the caller's %s: expected %s", key, got, own,
                 fresh ? "a new one" : "the caller's");
        if (!strcmp(name, "pid") || !strcmp(name, "time")) {
            char *kids = t_get(out, t_fmt("ns_%s_for_children", name));
            ASSERT_STR_EQ(kids, got);
        }
    }
}

/* ---- nothing asked, nothing changed --------------------------------------- */

TEST(an_all_zero_contain_changes_nothing)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("ns", "ids"), .contain = CONTAIN(0),
                          .backend = BACKEND };
    /* Every backend runs it, posix_spawn too: nothing is asked of it. */
    char *out = t_probe(&cmd);
    assert_namespaces(out, 0);
    ASSERT_EQ(t_get_num(out, "uid"), getuid());
    char host[256];
    ASSERT_SYS(gethostname(host, sizeof host));
    ASSERT_STR_EQ(t_get(out, "hostname"), host);
}

/* ---- each namespace -------------------------------------------------------- */

TEST(each_namespace_bit_makes_only_that_namespace_new)
{
    struct fl_cmd cmd = { .argv = PROBE("ns"), .contain = CONTAIN(.unshare = FL_NS_UTS),
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root("needs root: a namespace other than a user namespace, made alone");
    for (size_t i = 0; i < NNS; i++) {
        if (namespaces[i].bit == FL_NS_TIME && !have_time_ns()) {
            printf("no time namespace in this kernel (Linux 5.6): not checked\n");
            continue;
        }
        struct fl_contain c = { .unshare = namespaces[i].bit };
        cmd.contain = &c;
        /* The time namespace too: the kernel moves the program into it
         * at exec, whether clone3() made it or unshare() did. */
        assert_namespaces(t_probe(&cmd), c.unshare);
    }
}

TEST(all_namespaces_at_once_with_map_root_as_root_and_as_nobody)
{
    unsigned ns = FL_NS_USER | ALL_BUT_USER;
    if (!have_time_ns())
        ns &= ~(unsigned)FL_NS_TIME;
    struct fl_contain c = { .unshare = ns, .map = FL_MAP_ROOT, .hostname = "box",
                            .flags = FL_MOUNT_PROC };
    struct fl_cmd cmd = { .argv = PROBE("ns", "ids", "proc"), .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    assert_namespaces(out, ns);
    ASSERT_EQ(t_get_num(out, "uid"), 0);
    ASSERT_EQ(t_get_num(out, "gid"), 0);
    ASSERT_EQ(t_get_num(out, "pid"), 1);
    ASSERT_EQ(t_get_num(out, "ppid"), 0);
    ASSERT_STR_EQ(t_get(out, "hostname"), "box");
    ASSERT_EQ(t_count_lines(out, "netif "), 1);
    ASSERT_STR_EQ(t_get(out, "netif"), "lo down");
    ASSERT_EQ(t_get_num(out, "mount_proc_pids"), 1);
    ASSERT_EQ(t_get_num(out, "mountinfo_root_shared"), 0);
    ASSERT_STR_EQ(t_get(out, "uid_map"), t_fmt("0 %u 1", (unsigned)geteuid()));
    t_rerun_as_nobody();
}

/* ---- the user namespace and its maps ---------------------------------------- */

TEST(map_root_makes_the_caller_root_inside_as_root_and_as_nobody)
{
    struct fl_contain c = { .unshare = FL_NS_USER, .map = FL_MAP_ROOT };
    struct fl_cmd cmd = {
        .argv = PROBE("ns", "ids", "echo", "ready", "cat"),
        .stdio = { [0] = { .kind = FL_PIPE }, [1] = { .kind = FL_PIPE } },
        .contain = &c,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    /* Inside: root. Outside, while it runs: still the caller's ids. */
    char *status = t_read_file(t_fmt("/proc/%d/status", (int)p.pid));
    char *uid_line = strstr(status, "\nUid:");
    ASSERT(uid_line);
    unsigned ruid = 99, euid = 99;
    ASSERT_EQ(sscanf(uid_line, "\nUid: %u %u", &ruid, &euid), 2);
    close(p.stdio[0]);
    p.stdio[0] = -1;
    char *out = t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_EQ(ruid, geteuid());
    ASSERT_EQ(euid, geteuid());
    ASSERT_EQ(t_get_num(out, "uid"), 0);
    ASSERT_EQ(t_get_num(out, "euid"), 0);
    ASSERT_EQ(t_get_num(out, "gid"), 0);
    ASSERT_STR_EQ(t_get(out, "uid_map"), t_fmt("0 %u 1", (unsigned)geteuid()));
    ASSERT_STR_EQ(t_get(out, "gid_map"), t_fmt("0 %u 1", (unsigned)getegid()));
    ASSERT_EQ(t_count_lines(out, "uid_map "), 1);
    ASSERT_NE(t_get(out, "ns_user"), t_own_ns("user"));
    t_rerun_as_nobody();
}

TEST(map_current_keeps_the_callers_ids_as_root_and_as_nobody)
{
    struct fl_contain c = { .unshare = FL_NS_USER, .map = FL_MAP_CURRENT };
    struct fl_cmd cmd = { .argv = PROBE("ns", "ids"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    unsigned u = (unsigned)geteuid(), g = (unsigned)getegid();
    ASSERT_EQ(t_get_num(out, "uid"), u);
    ASSERT_EQ(t_get_num(out, "gid"), g);
    ASSERT_STR_EQ(t_get(out, "uid_map"), t_fmt("%u %u 1", u, u));
    ASSERT_STR_EQ(t_get(out, "gid_map"), t_fmt("%u %u 1", g, g));
    t_rerun_as_nobody();
}

TEST(no_map_reads_every_id_as_the_overflow_id)
{
    struct fl_contain c = { .unshare = FL_NS_USER };
    struct fl_cmd cmd = { .argv = PROBE("ns", "ids"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "uid"), t_overflow_id("uid"));
    ASSERT_EQ(t_get_num(out, "euid"), t_overflow_id("uid"));
    ASSERT_EQ(t_get_num(out, "gid"), t_overflow_id("gid"));
    ASSERT_EQ(t_count_lines(out, "uid_map "), 0);
    ASSERT_EQ(t_count_lines(out, "gid_map "), 0);
    t_rerun_as_nobody();
}

TEST(the_childs_own_map_denies_setgroups_root_too)
{
    /* The child writes its maps from inside the new namespace, where even
     * root's child holds no CAP_SETGID over the parent namespace: the
     * kernel takes its gid_map only once setgroups is denied, so
     * setgroups() is refused inside, EPERM at step setgroups. */
    struct fl_contain c = { .unshare = FL_NS_USER, .map = FL_MAP_ROOT };
    struct fl_cmd cmd = { .argv = PROBE("ns"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "setgroups"), "deny");
    cmd.flags = FL_SET_GROUPS;
    cmd.groups = (gid_t[]){ 0 };
    cmd.ngroups = 1;
    SPAWN_FAILS(&cmd, EPERM, FL_STEP_SETGROUPS);
    /* Without a map the child writes nothing, and denies nothing. */
    c.map = FL_MAP_NONE;
    ASSERT_STR_EQ(t_get(t_probe(&(struct fl_cmd){ .argv = PROBE("ns"), .contain = &c,
                                                  .backend = BACKEND }),
                        "setgroups"),
                  "allow");
    t_rerun_as_nobody();
}

TEST(map_root_with_set_uid_to_an_unmapped_uid_fails_at_setuid)
{
    struct fl_contain c = { .unshare = FL_NS_USER, .map = FL_MAP_ROOT };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .flags = FL_SET_UID,
                          .uid = 1000, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    /* Only uid 0 exists inside: setresuid() says EINVAL for the others. */
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_SETUID);
    t_rerun_as_nobody();
}

TEST(map_root_with_set_uid_0_inside_works)
{
    struct fl_contain c = { .unshare = FL_NS_USER, .map = FL_MAP_ROOT };
    struct fl_cmd cmd = { .argv = PROBE("ids"), .contain = &c,
                          .flags = FL_SET_UID | FL_SET_GID, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "uid"), 0);
    ASSERT_EQ(t_get_num(out, "suid"), 0);
    ASSERT_EQ(t_get_num(out, "sgid"), 0);
    t_rerun_as_nobody();
}

/* ---- the PID namespace ------------------------------------------------------- */

TEST(a_new_pid_ns_makes_the_program_its_init_as_root_and_as_nobody)
{
    struct fl_contain c = { .unshare = FL_NS_PID };
    if (!t_is_root())
        c = (struct fl_contain){ .unshare = FL_NS_USER | FL_NS_PID, .map = FL_MAP_ROOT };
    struct fl_cmd cmd = { .argv = PROBE("proc", "ns"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "pid"), 1);
    ASSERT_EQ(t_get_num(out, "ppid"), 0);
    ASSERT_NE(strcmp(t_get(out, "ns_pid"), t_own_ns("pid")), 0);
    t_rerun_as_nobody();
}

TEST(when_init_exits_the_kernel_kills_what_is_left_in_its_namespace)
{
    /* The probe forks a grandchild that holds its stdout and sleeps for
     * 1000 s, then exits. Outside a PID namespace that grandchild would
     * keep the pipe open; inside, the kernel kills it with its init, so
     * EOF comes (the 30 s bound only detects a hang). */
    struct fl_contain c = { .unshare = FL_NS_PID };
    if (!t_is_root())
        c = (struct fl_contain){ .unshare = FL_NS_USER | FL_NS_PID, .map = FL_MAP_ROOT };
    struct fl_cmd cmd = { .argv = PROBE("hold-fds", "1000"),
                          .stdio = { [1] = { .kind = FL_PIPE } },
                          .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    char *out = t_read_all_within(p.stdio[1], 30000);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_GT(t_get_num(out, "grandchild"), 1);  /* its pid inside */
    t_rerun_as_nobody();
}

/* ---- the time namespace where clone3() is missing ----------------------------- */

/* In a subprocess whose seccomp filter makes clone3() ENOSYS, as on a
 * kernel before 5.3: the clone backend falls back to clone(), which has
 * no bit for the time namespace, and the child unshares it (step
 * unshare). Returns the probe's report through the pipe fd. */
static void time_ns_without_clone3(int fd, const struct fl_cmd *cmd)
{
    int nr = fl_syscall_number("clone3");
    struct sock_fprog prog;
    if (nr < 0 || fl_seccomp_deny(&nr, 1, ENOSYS, &prog) != 0)
        _exit(77);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        _exit(77);
    fl_seccomp_free(&prog);
    char *out = t_probe(cmd);
    t_write_all(fd, out, strlen(out));
    _exit(0);
}

TEST(the_time_ns_is_unshared_in_the_child_where_clone3_is_missing)
{
    struct fl_contain c = { .unshare = FL_NS_TIME | FL_NS_PID };
    if (!t_is_root())
        c.unshare |= FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = PROBE("ns", "proc"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (!have_time_ns())
        SKIP("no time namespace in this kernel (Linux 5.6)");
    NEEDS_SECCOMP();
    int fd;
    pid_t pid = t_fork_piped(&fd);
    if (pid == 0)
        time_ns_without_clone3(fd, &cmd);
    char *out = t_read_all(fd);
    close(fd);
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        SKIP("cannot install a seccomp filter here (or no clone3 number)");
    ASSERT_EXITED(st, 0);
    ASSERT_NE(strcmp(t_get(out, "ns_time"), t_own_ns("time")), 0);
    ASSERT_STR_EQ(t_get(out, "ns_time_for_children"), t_get(out, "ns_time"));
    ASSERT_EQ(t_get_num(out, "pid"), 1);
    t_rerun_as_nobody();
}

/* ---- mounts and /proc --------------------------------------------------------- */

TEST(mount_proc_shows_only_the_new_pid_namespace_as_root_and_as_nobody)
{
    struct fl_contain c = { .unshare = FL_NS_MOUNT | FL_NS_PID, .flags = FL_MOUNT_PROC };
    if (!t_is_root())
        c.unshare |= FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = PROBE("ns", "proc"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    /* The program alone: pid 1, and /proc/self is it. */
    ASSERT_EQ(t_get_num(out, "mount_proc_pids"), 1);
    ASSERT_EQ(t_get_num(out, "pid"), 1);
    ASSERT_STR_EQ(t_get(out, "mount /proc"), "proc");
    ASSERT_EQ(t_get_num(out, "mountinfo_root_shared"), 0);
    /* The caller's /proc is its own still. */
    ASSERT_GT(t_get_num(t_probe(&(struct fl_cmd){ .argv = PROBE("ns"), .backend = BACKEND,
                                                  .flags = FL_KEEP_FDS }),
                        "mount_proc_pids"),
              1);
    t_rerun_as_nobody();
}

/* The fresh proc is mounted nosuid, nodev and noexec, as a distribution
 * mounts /proc. As root without a user namespace: in one, the kernel
 * gives a new proc the caller's /proc's locked flags by itself, and the
 * library's own could not be told from them. */
TEST(mount_proc_mounts_it_nosuid_nodev_noexec)
{
    struct fl_contain c = { .unshare = FL_NS_MOUNT | FL_NS_PID, .flags = FL_MOUNT_PROC };
    struct fl_cmd cmd = { .argv = PROBE("mount-flags", "/proc"), .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root("needs root, for a mount namespace without a user namespace (in one, a new "
                 "proc takes the flags of the caller's /proc from the kernel)");
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "mount_flags /proc"), "rw nosuid nodev noexec");
}

TEST(a_mount_the_program_makes_does_not_reach_the_caller)
{
    struct fl_contain c = { .unshare = FL_NS_MOUNT };
    if (!t_is_root())
        c = (struct fl_contain){ .unshare = FL_NS_USER | FL_NS_MOUNT, .map = FL_MAP_ROOT };
    struct fl_cmd cmd = { .argv = PROBE("ns"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (t_is_root()) {
        /* A namespace of this test whose mounts are shared, as systemd
         * makes the host's: without the child's MS_PRIVATE step its
         * mounts would propagate back here. */
        if (unshare(CLONE_NEWNS) != 0)
            SKIP("unshare(CLONE_NEWNS) is not allowed here");
        ASSERT_SYS(mount(NULL, "/", NULL, MS_REC | MS_SHARED, NULL));
        char *self = t_probe(&(struct fl_cmd){ .argv = PROBE("ns"), .backend = BACKEND,
                                               .flags = FL_KEEP_FDS });
        ASSERT_EQ(t_get_num(self, "mountinfo_root_shared"), 1);
    }
    char *dir = t_tmpdir();
    cmd.argv = PROBE("ns", "mount-tmpfs", dir, "echo", "mounted", "cat");
    cmd.stdio[0].kind = FL_PIPE;
    cmd.stdio[1].kind = FL_PIPE;
    struct fl_proc p;
    SPAWN(&cmd, &p);
    /* The report, then "mounted": the tmpfs is there while it runs. */
    char *buf = t_read_until(p.stdio[1], "mounted\n");
    bool seen_here = t_own_mount_at(dir);
    close(p.stdio[0]);
    p.stdio[0] = -1;
    t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_EQ(t_get_num(buf, "mount_tmpfs"), 0);
    ASSERT(!seen_here);
    ASSERT(!t_own_mount_at(dir));
    ASSERT_EQ(t_get_num(buf, "mountinfo_root_shared"), 0);
    t_rerun_as_nobody();
}

/* ---- host name and network ------------------------------------------------------ */

TEST(the_hostname_is_set_inside_and_the_callers_is_unchanged)
{
    char before[256], after[256];
    ASSERT_SYS(gethostname(before, sizeof before));
    struct fl_contain c = { .unshare = FL_NS_UTS, .hostname = "forkless-test" };
    if (!t_is_root())
        c.unshare |= FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = PROBE("ns"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "hostname"), "forkless-test");
    ASSERT_SYS(gethostname(after, sizeof after));
    ASSERT_STR_EQ(after, before);
    /* 64 bytes, the kernel's most, fit. */
    static const char longest[] =
        "0123456789012345678901234567890123456789012345678901234567890123";
    ASSERT_EQ(strlen(longest), 64);
    c.hostname = longest;
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "hostname"), longest);
    /* No name keeps the caller's in the new namespace. */
    c.hostname = NULL;
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "hostname"), before);
    t_rerun_as_nobody();
}

TEST(a_new_net_ns_has_only_a_loopback_that_is_down)
{
    struct fl_contain c = { .unshare = FL_NS_NET };
    if (!t_is_root())
        c.unshare |= FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = PROBE("ns"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_count_lines(out, "netif "), 1);
    ASSERT_STR_EQ(t_get(out, "netif"), "lo down");
    t_rerun_as_nobody();
}

TEST(a_new_cgroup_ns_is_rooted_at_the_childs_cgroup)
{
    struct fl_contain c = { .unshare = FL_NS_CGROUP };
    if (!t_is_root())
        c.unshare |= FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = PROBE("cgroup"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    char *self = t_read_file("/proc/self/cgroup");
    if (!strstr(self, "0::"))
        SKIP("no cgroup v2 hierarchy here: the v2 line is what this checks");
    ASSERT_STR_CONTAINS(out, "cgroup 0::/\n");
    t_rerun_as_nobody();
}

TEST(a_late_cgroup_ns_that_fails_names_the_cgroup_ns_at_step_unshare)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = CONTAIN(.unshare = FL_NS_CGROUP),
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    char *dir = t_need_cgroup(NULL);
    cmd.cgroup = dir;
    /* The fork backend writes the child into the cgroup, then unshares
     * the namespace there; clone3() places the child and makes the
     * namespace at once, and never calls unshare(). */
    struct t_denied d = t_spawn_denied(&cmd, (const char *[]){ "unshare", NULL }, EXDEV);
    rmdir(dir);
    if (BACKEND == FL_BACKEND_FORK) {
        ASSERT_ERR(d.r, EXDEV);
        ASSERT_EQ(d.e.step, FL_STEP_UNSHARE);
        ASSERT_EQ(d.e.index, (int)FL_NS_CGROUP);
    } else {
        ASSERT_OK(d.r);
    }
}

/* ---- chroot ---------------------------------------------------------------------- */

TEST(chroot_makes_the_directory_the_root_as_root_and_as_nobody)
{
    struct fl_contain c = { .chroot = "/" };
    struct fl_cmd cmd = { .argv = ARGV("/probe", "ns", "caps", "cwd"), .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *root = t_make_root(false);
    ASSERT_SYS(mkdir(t_fmt("%s/sub", root), 0755));
    c.chroot = root;
    if (!t_is_root())
        c.unshare = FL_NS_USER, c.map = FL_MAP_ROOT;
    struct stat st;
    ASSERT_SYS(stat(root, &st));
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "root_ino"), st.st_ino);
    ASSERT_EQ(t_get_num(out, "root_dev"), st.st_dev);
    ASSERT_STR_EQ(t_get(out, "cwd"), "/");
    /* No /proc in there: the capability report does without. */
    ASSERT_EQ(t_get_num(out, "mount_proc_pids"), -1);
    ASSERT(t_get(out, "cap_bnd"));
    /* .cwd names a directory inside the new root. */
    cmd.cwd = "/sub";
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "cwd"), "/sub");
    t_rerun_as_nobody();
}

/* The script exec failed on is the jail's: the caller's file of that
 * name, with another #! line, is no witness; the jail's is read. */
TEST(an_exec_error_in_a_chroot_names_no_interpreter_read_outside_it)
{
    char *host = t_tmpdir(), *jail = t_tmpdir();
    char *script = t_write_file(host, "s.sh", "#!/fl-host-side-interp\n", 0755);
    ASSERT_SYS(chmod(jail, 0755));
    char *inside = t_fmt("%s%s", jail, host);
    ASSERT_EQ(system(t_fmt("'%s' -p '%s'", t_tool("mkdir"), inside)), 0);
    t_write_file(inside, "s.sh", "#!/fl-jail-only-interp\n", 0755);
    struct fl_contain c = { .chroot = jail };
    if (!t_is_root())
        c.unshare = FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = ARGV(script), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, script);
    ASSERT(!strstr(e.detail, "fl-host-side-interp"));
    ASSERT_STR_EQ(e.detail, "interpreter \"/fl-jail-only-interp\" not found");
    /* fl_resolve() looks in the caller's root, and says what it saw. */
    char buf[PATH_MAX];
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, &e), ENOENT);
    ASSERT_STR_CONTAINS(e.detail, "fl-host-side-interp");
}

/* A program copied into a root without its libraries: the loader it
 * names is looked for in that root, where exec looked. */
TEST(a_program_in_a_chroot_without_its_loader_names_the_loader)
{
    char *jail = t_tmpdir();
    ASSERT_SYS(chmod(jail, 0755));
    ASSERT_SYS(mkdir(t_fmt("%s/bin", jail), 0755));
    if (system(t_fmt("'%s' /bin/true '%s/bin/true'", t_tool("cp"), jail)) != 0)
        FAIL("cannot copy /bin/true");
    struct fl_contain c = { .chroot = jail };
    if (!t_is_root())
        c.unshare = FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char interp[256];
    if (t_elf_loader("/bin/true", interp, sizeof interp) != 0)
        SKIP("/bin/true names no dynamic loader (a static build)");
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, t_fmt("dynamic loader \"%s\" not found", interp));
}

/* A root holding /noshebang, a script without #!, and as /bin/sh
 * nothing, or a directory. The caller not root: root in a user
 * namespace, to chroot. */
static struct fl_contain *root_with_a_script(bool bin_sh_a_directory)
{
    char *jail = t_tmpdir();
    ASSERT_SYS(chmod(jail, 0755));
    if (bin_sh_a_directory) {
        ASSERT_SYS(mkdir(t_fmt("%s/bin", jail), 0755));
        ASSERT_SYS(mkdir(t_fmt("%s/bin/sh", jail), 0755));
    }
    t_write_file(jail, "noshebang", "echo hi\n", 0755);
    struct fl_contain *c = t_keep(malloc(sizeof *c));
    ASSERT(c);
    *c = (struct fl_contain){ .chroot = jail };
    if (!t_is_root())
        c->unshare = FL_NS_USER, c->map = FL_MAP_ROOT;
    return c;
}

/* A root without /bin/sh (a distroless image): a file whose format exec
 * refuses fails with the shell's errno, and the detail names the shell,
 * not the file, which is there. */
TEST(shell_fallback_in_a_root_without_bin_sh_names_the_shell)
{
    struct fl_contain *c = root_with_a_script(false);
    struct fl_cmd cmd = { .argv = ARGV("/noshebang"), .flags = FL_SHELL_FALLBACK, .contain = c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, "/noshebang");
    ASSERT_STR_EQ(e.detail, "the shell that FL_SHELL_FALLBACK runs it with, \"/bin/sh\": not found");
    /* Found by a PATH search, the file is still the one named. */
    const char *env[] = { "PATH=/", NULL };
    struct fl_cmd search = { .argv = ARGV("noshebang"), .flags = FL_SHELL_FALLBACK,
                             .env_set = env, .contain = c, .backend = BACKEND };
    e = SPAWN_FAILS(&search, ENOENT, FL_STEP_EXEC);
    ASSERT_EQ(e.index, 0);
    ASSERT_STR_CONTAINS(e.detail, "\"/bin/sh\": not found");
}

/* A /bin/sh that cannot be run at all: EACCES, and the reason is the
 * shell's. */
TEST(shell_fallback_to_a_bin_sh_that_is_a_directory_says_so)
{
    struct fl_cmd cmd = { .argv = ARGV("/noshebang"), .flags = FL_SHELL_FALLBACK,
                          .contain = root_with_a_script(true), .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail,
                  "the shell that FL_SHELL_FALLBACK runs it with, \"/bin/sh\": a directory");
}

/* FL_NULL is the caller's /dev/null, opened in the parent: the new root
 * has no /dev at all here, and the child gets it all the same. */
TEST(fl_null_in_a_chroot_without_dev_is_the_callers_dev_null_as_root_and_as_nobody)
{
    struct fl_contain c = { .chroot = "/" };
    struct fl_cmd cmd = { .argv = ARGV("/probe", "stat-fd", "0", "stat-fd", "2"),
                          .stdio = { [0] = { .kind = FL_NULL }, [2] = { .kind = FL_NULL } },
                          .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *root = t_make_root(false);
    ASSERT(access(t_fmt("%s/dev", root), F_OK) != 0);
    c.chroot = root;
    if (!t_is_root())
        c.unshare = FL_NS_USER, c.map = FL_MAP_ROOT;
    struct stat null;
    ASSERT_SYS(stat("/dev/null", &null));
    char *want = t_fmt("%lu %u:%u", (unsigned long)null.st_ino, major(null.st_rdev),
                       minor(null.st_rdev));
    char *out = t_probe(&cmd);
    ASSERT_STR_EQ(t_get(out, "stat_fd 0"), t_fmt("%s r", want));
    ASSERT_STR_EQ(t_get(out, "stat_fd 2"), t_fmt("%s w", want));
    t_rerun_as_nobody();
}

/* The name is the new root's, whose own /proc shows the child's fds: the
 * child keeps the caller's fd 20 until it opens it, as the fork
 * backend's child does. */
TEST(a_chroot_with_proc_reopens_the_callers_fd_through_proc_self_fd)
{
    struct fl_contain c = { .unshare = FL_NS_MOUNT | FL_NS_PID, .flags = FL_MOUNT_PROC };
    struct fl_cmd cmd = { .argv = ARGV("/probe", "cat"),
                          .stdio = { [0] = { .kind = FL_FILE, .path = "/proc/self/fd/20" } },
                          .contain = &c, .backend = BACKEND };
    c.chroot = t_make_root(true);
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    int in = t_file_at(20, true);
    ASSERT_EQ(pwrite(in, "caller's fd 20\n", 15, 0), 15);
    if (!t_is_root())
        c.unshare |= FL_NS_USER, c.map = FL_MAP_ROOT;
    ASSERT_STR_EQ(t_probe(&cmd), "caller's fd 20\n");
    close(in);
}

TEST(chroot_with_mount_proc_mounts_proc_inside_the_root)
{
    struct fl_contain c = { .unshare = FL_NS_MOUNT | FL_NS_PID, .flags = FL_MOUNT_PROC };
    struct fl_cmd cmd = { .argv = ARGV("/probe", "ns", "proc", "echo", "ready", "cat"),
                          .stdio = { [0] = { .kind = FL_PIPE }, [1] = { .kind = FL_PIPE } },
                          .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *root = t_make_root(true);
    c.chroot = root;
    if (!t_is_root())
        c.unshare |= FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_proc p;
    SPAWN(&cmd, &p);
    /* "ready" comes after the report; the mount is alive until EOF on 0. */
    char *buf = t_read_until(p.stdio[1], "ready\n");
    bool seen_here = t_own_mount_at(t_fmt("%s/proc", root));
    close(p.stdio[0]);
    p.stdio[0] = -1;
    t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_get(buf, "mount /proc"), "proc");
    ASSERT_EQ(t_get_num(buf, "mount_proc_pids"), 1);
    ASSERT_EQ(t_get_num(buf, "pid"), 1);
    ASSERT_NE(strcmp(t_get(buf, "ns_pid"), t_own_ns("pid")), 0);
    ASSERT(!seen_here);
    t_rerun_as_nobody();
}

/* ---- malformed settings: EINVAL before anything starts, on every backend ---------- */

TEST(a_map_without_a_user_ns_is_einval_at_prepare)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"),
                          .contain = CONTAIN(.unshare = FL_NS_PID, .map = FL_MAP_ROOT),
                          .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "FL_NS_USER");
    cmd.contain = CONTAIN(.map = FL_MAP_CURRENT);
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(a_hostname_without_a_uts_ns_is_einval_at_prepare)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"),
                          .contain = CONTAIN(.unshare = FL_NS_USER, .hostname = "x"),
                          .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "FL_NS_UTS");
}

TEST(mount_proc_needs_a_mount_and_a_pid_ns)
{
    static const unsigned without[] = { 0, FL_NS_MOUNT, FL_NS_PID, FL_NS_USER | FL_NS_PID };
    for (size_t i = 0; i < sizeof without / sizeof *without; i++) {
        struct fl_cmd cmd = {
            .argv = ARGV("/bin/true"),
            .contain = CONTAIN(.unshare = without[i], .flags = FL_MOUNT_PROC),
            .backend = BACKEND,
        };
        struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
        ASSERT_STR_CONTAINS(e.detail, "FL_MOUNT_PROC");
    }
}

TEST(unknown_namespace_bits_flags_and_maps_are_einval)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = CONTAIN(.unshare = 1u << 8),
                          .backend = BACKEND };
    ASSERT_STR_CONTAINS(SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE).detail, "namespace");
    cmd.contain = CONTAIN(.unshare = 1u << 31);
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    cmd.contain = CONTAIN(.flags = 1u << 20);
    ASSERT_STR_CONTAINS(SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE).detail, "flag");
    cmd.contain = CONTAIN(.unshare = FL_NS_USER, .map = (enum fl_id_map)3);
    ASSERT_STR_CONTAINS(SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE).detail, ".map");
}

TEST(reserved_fields_of_contain_must_be_zero)
{
    for (int i = 0; i < 6; i++) {
        struct fl_contain c = { .unshare = FL_NS_UTS };
        c.reserved_[i] = &c;
        struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
        ASSERT_STR_CONTAINS(SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE).detail, "reserved");
    }
    /* Reserved fields alone are refused too, not taken for "nothing". */
    struct fl_contain c = { 0 };
    c.reserved_[5] = &c;
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(a_hostname_longer_than_64_bytes_is_einval_at_step_hostname)
{
    static const char name[] =
        "01234567890123456789012345678901234567890123456789012345678901234";
    ASSERT_EQ(strlen(name), 65);
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"),
                          .contain = CONTAIN(.unshare = FL_NS_UTS, .hostname = name),
                          .backend = BACKEND };
    /* Checked in the parent: every backend says so, before any child. */
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_HOSTNAME);
    ASSERT_STR_EQ(e.path, name);
    ASSERT_EQ(e.index, -1);
}

/* No real setting makes sethostname() fail once the UTS namespace is the
 * child's own: a filter on the test's subprocess does. */
TEST(a_refused_sethostname_is_its_step_errno_and_name)
{
    struct fl_contain c = { .unshare = FL_NS_UTS, .hostname = "forkless-test" };
    if (!t_is_root())
        c.unshare |= FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    struct t_denied d = t_spawn_denied(&cmd, (const char *[]){ "sethostname", NULL }, EXDEV);
    ASSERT_EQ(d.r, EXDEV);
    ASSERT_EQ(d.e.step, FL_STEP_HOSTNAME);
    ASSERT_EQ(d.e.index, -1);
    ASSERT_STR_EQ(d.e.path, "forkless-test");
}

/* Making every mount private is the first mount() of a new mount
 * namespace: index 0, path "/". */
TEST(a_refused_private_mount_is_step_mount_index_0)
{
    struct fl_contain c = { .unshare = FL_NS_MOUNT };
    if (!t_is_root())
        c.unshare |= FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    struct t_denied d = t_spawn_denied(&cmd, (const char *[]){ "mount", NULL }, EXDEV);
    ASSERT_EQ(d.r, EXDEV);
    ASSERT_EQ(d.e.step, FL_STEP_MOUNT);
    ASSERT_EQ(d.e.index, 0);
    ASSERT_STR_EQ(d.e.path, "/");
}

TEST(a_chroot_path_too_long_is_enametoolong_at_step_chroot)
{
    char *path = t_keep(malloc(PATH_MAX + 1));
    memset(path, 'a', PATH_MAX);
    path[0] = '/';
    path[PATH_MAX] = 0;
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = CONTAIN(.chroot = path),
                          .backend = BACKEND };
    SPAWN_FAILS(&cmd, ENAMETOOLONG, FL_STEP_CHROOT);
}

TEST(a_chroot_path_just_under_path_max_is_the_kernel_s_to_take)
{
    /* 4,095 bytes of "/" name the root: chroot(2) takes them, and so must
     * the check before the child (it used to keep room for "/proc"). */
    char *path = t_keep(malloc(PATH_MAX));
    memset(path, '/', PATH_MAX - 1);
    path[PATH_MAX - 1] = 0;
    struct fl_contain c = { .chroot = path };
    if (!t_is_root())
        c.unshare = FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
}

/* ---- failures in the child: step, errno, index, path ------------------------------- */

TEST(chroot_to_a_missing_dir_is_enoent_at_step_chroot)
{
    char *missing = t_fmt("%s/missing", t_tmpdir());
    struct fl_contain c = { .chroot = missing };
    if (!t_is_root())
        c.unshare = FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_cmd cmd = { .argv = ARGV("/probe"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_CHROOT);
    ASSERT_STR_EQ(e.path, missing);
    ASSERT_EQ(e.index, -1);
    char buf[2048];
    ASSERT_STR_CONTAINS(fl_error_format(&e, buf, sizeof buf), missing);
    t_rerun_as_nobody();
}

TEST(chroot_to_a_file_is_enotdir_at_step_chroot)
{
    char *file = t_write_file(t_tmpdir(), "file", "", 0644);
    struct fl_cmd cmd = { .argv = ARGV("/probe"), .contain = CONTAIN(.chroot = file),
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, ENOTDIR, FL_STEP_CHROOT);
    ASSERT_STR_EQ(e.path, file);
}

TEST(chroot_without_the_privilege_is_eperm_at_step_chroot)
{
    struct fl_cmd cmd = { .argv = ARGV("/probe"), .contain = CONTAIN(.chroot = "/"),
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    UNPRIVILEGED_ONLY();
    struct fl_error e = SPAWN_FAILS(&cmd, EPERM, FL_STEP_CHROOT);
    ASSERT_STR_EQ(e.path, "/");
}

TEST(mount_proc_in_a_root_without_proc_is_enoent_at_step_mount_index_1)
{
    struct fl_contain c = { .unshare = FL_NS_MOUNT | FL_NS_PID, .flags = FL_MOUNT_PROC };
    struct fl_cmd cmd = { .argv = ARGV("/probe"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *root = t_tmpdir();
    c.chroot = root;
    if (!t_is_root())
        c.unshare |= FL_NS_USER, c.map = FL_MAP_ROOT;
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_MOUNT);
    ASSERT_EQ(e.index, 1);
    ASSERT_STR_EQ(e.path, t_fmt("%s/proc", root));
    t_rerun_as_nobody();
}

/* EAGAIN is the process limit's, not the namespace's: the detail says
 * only which call failed. */
TEST(a_clone_refused_for_the_process_limit_names_no_namespace)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = CONTAIN(.unshare = FL_NS_NET),
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    UNPRIVILEGED_ONLY();
    /* The soft limit only, and back after: LeakSanitizer makes a process
     * at exit. */
    struct rlimit was, none;
    ASSERT_SYS(getrlimit(RLIMIT_NPROC, &was));
    none = (struct rlimit){ 0, was.rlim_max };
    ASSERT_SYS(setrlimit(RLIMIT_NPROC, &none));
    struct fl_error e = SPAWN_FAILS(&cmd, EAGAIN, FL_STEP_CLONE);
    ASSERT_SYS(setrlimit(RLIMIT_NPROC, &was));
    ASSERT(!strstr(e.detail, "namespaces"));
}

TEST(without_a_user_ns_an_unprivileged_caller_gets_eperm_at_step_clone)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = CONTAIN(.unshare = FL_NS_NET),
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    UNPRIVILEGED_ONLY();
    /* Each namespace clone() makes: the kernel's EPERM (no CAP_SYS_ADMIN),
     * and the detail says which namespace the clone was to make. */
    for (size_t i = 1; i < NNS; i++) {
        if (namespaces[i].bit == FL_NS_TIME)
            continue;
        struct fl_contain c = { .unshare = namespaces[i].bit };
        cmd.contain = &c;
        struct fl_error e = SPAWN_FAILS(&cmd, EPERM, FL_STEP_CLONE);
        ASSERT_EQ(e.index, -1);
        ASSERT_STR_CONTAINS(e.detail, t_fmt("with new namespaces: %s", namespaces[i].name));
    }
}

TEST(without_a_user_ns_an_unprivileged_time_ns_is_eperm_at_clone_or_unshare)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = CONTAIN(.unshare = FL_NS_TIME),
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (!have_time_ns())
        SKIP("no time namespace in this kernel (Linux 5.6)");
    UNPRIVILEGED_ONLY();
    /* The fork backend unshares it in the child: the kernel's EPERM at
     * step unshare. The clone backend makes it with clone3(), which says
     * EPERM, as for any other namespace: clone(), which has no bit for it,
     * would only hand the same refusal to the child's unshare(). */
    if (BACKEND == FL_BACKEND_FORK) {
        struct fl_error e = SPAWN_FAILS(&cmd, EPERM, FL_STEP_UNSHARE);
        ASSERT_EQ(e.index, (int)FL_NS_TIME);
        ASSERT_STR_EQ(e.detail, "the time namespace");
    } else {
        struct fl_error e = SPAWN_FAILS(&cmd, EPERM, FL_STEP_CLONE);
        ASSERT_STR_CONTAINS(e.detail, "with new namespaces: time");
    }
}

/* A container's filter that answers clone3() with EPERM (Docker's did,
 * before 20.10.10) says nothing about privilege: a caller that has it gets
 * its time namespace through clone() and the child's unshare(). */
TEST(a_time_ns_is_made_where_a_filter_refuses_clone3_with_eperm)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = CONTAIN(.unshare = FL_NS_TIME),
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (!have_time_ns())
        SKIP("no time namespace in this kernel (Linux 5.6)");
    require_root("needs root, to make a time namespace");
    NEEDS_SECCOMP();
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        t_refuse_clone3(EPERM);
        struct fl_proc p;
        struct fl_error e;
        int st;
        if (fl_spawn(&cmd, &p, &e) != 0)
            _exit(1);
        _exit(fl_wait(&p, -1, &st) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 2);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    ASSERT_EXITED(st, 0);
}

TEST(the_id_map_without_proc_is_enoent_at_step_id_map_index_0)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"),
                          .contain = CONTAIN(.unshare = FL_NS_USER, .map = FL_MAP_ROOT),
                          .flags = FL_KEEP_FDS,   /* closing would need /proc without close_range */
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root("needs root, to hide /proc in a mount namespace");
    if (unshare(CLONE_NEWNS) != 0)
        SKIP("unshare(CLONE_NEWNS) is not allowed here");
    ASSERT_SYS(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
    ASSERT_SYS(mount("none", "/proc", "tmpfs", 0, NULL));
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_ID_MAP);
    ASSERT_SYS(umount2("/proc", MNT_DETACH));
    ASSERT_EQ(e.index, 0);
    ASSERT_STR_EQ(e.path, "/proc/self/uid_map");
}

/* ---- posix_spawn ------------------------------------------------------------------ */

TEST(a_contain_that_asks_for_nothing_runs_on_every_backend)
{
    /* Zero, or the best-effort mode of Landlock without a rule: no
     * setting, so nothing for posix_spawn to refuse. */
    const struct fl_contain nothing[] = { { 0 }, { .flags = FL_LANDLOCK_BEST_EFFORT } };
    for (size_t i = 0; i < sizeof nothing / sizeof *nothing; i++) {
        struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &nothing[i],
                              .flags = FL_KEEP_FDS,  /* musl's posix_spawn cannot close */
                              .backend = BACKEND };
        int st;
        t_run(&cmd, &st);
        ASSERT_EXITED(st, 0);
    }
}

TEST(posix_spawn_refuses_each_setting_at_prepare)
{
    const struct fl_contain settings[] = {
        { .unshare = FL_NS_USER }, { .unshare = FL_NS_USER | FL_NS_PID },
        { .unshare = FL_NS_UTS, .hostname = "h" }, { .chroot = "/" },
        { .flags = FL_NO_NEW_PRIVS }, { .flags = FL_CAP_BOUNDING, .cap_bounding = ~0ULL },
        { .cap_ambient = 1ULL << 10 }, { .unshare = FL_NS_USER, .map = FL_MAP_ROOT },
    };
    for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
        struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &settings[i],
                              .flags = FL_KEEP_FDS, .backend = BACKEND };
        if (BACKEND != FL_BACKEND_POSIX_SPAWN) {
            /* The others set it up: as root, each runs (ambient and
             * chroot included: root holds every capability, / is a root). */
            if (!t_is_root())
                SKIP("needs root: the settings alone, without a user namespace");
            struct fl_proc p;
            SPAWN(&cmd, &p);
            ASSERT_EXITED(t_wait(&p), 0);
            continue;
        }
        struct fl_error e = SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_PREPARE);
        ASSERT_STR_EQ(e.detail,
                      "posix_spawn cannot set containment (namespaces, chroot, capabilities, "
                      "filters)");
        ASSERT_STR_EQ(e.path, "/bin/true");
    }
}

/* ---- launch (FL_NO_WAIT_EXEC) -------------------------------------------------------- */

TEST(a_launch_into_new_namespaces_runs_as_root_and_as_nobody)
{
    struct fl_contain c = { .unshare = FL_NS_USER | FL_NS_MOUNT | FL_NS_PID | FL_NS_UTS,
                            .map = FL_MAP_ROOT, .hostname = "launched", .flags = FL_MOUNT_PROC };
    struct fl_cmd cmd = { .argv = PROBE("ns", "ids", "proc"),
                          .stdio = { [1] = { .kind = FL_PIPE } },
                          .flags = FL_NO_WAIT_EXEC, .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_error e;
    ASSERT_OK(fl_launch_finish(&p, &e));
    char *out = t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_EQ(t_get_num(out, "pid"), 1);
    ASSERT_EQ(t_get_num(out, "uid"), 0);
    ASSERT_STR_EQ(t_get(out, "hostname"), "launched");
    ASSERT_EQ(t_get_num(out, "mount_proc_pids"), 1);
    t_rerun_as_nobody();
}

TEST(a_launch_reports_a_containment_failure_at_finish)
{
    char *missing = t_fmt("%s/missing", t_tmpdir());
    struct fl_contain c = { .unshare = FL_NS_USER | FL_NS_PID, .map = FL_MAP_ROOT,
                            .chroot = missing };
    struct fl_cmd cmd = { .argv = ARGV("/probe"), .flags = FL_NO_WAIT_EXEC, .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (BACKEND != FL_BACKEND_CLONE) {
        /* The fork backend waits for the exec as without the flag. */
        struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_CHROOT);
        ASSERT_STR_EQ(e.path, missing);
        return;
    }
    struct fl_proc p;
    struct fl_error e;
    ASSERT_OK(fl_spawn(&cmd, &p, &e));
    ASSERT_GT(p.pid, 0);
    ASSERT_ERR(fl_launch_finish(&p, &e), ENOENT);
    ASSERT_EQ(e.step, FL_STEP_CHROOT);
    ASSERT_STR_EQ(e.path, missing);
    int st = 0x5a5a;
    ASSERT_ERR(fl_wait(&p, -1, &st), ESRCH);
    ASSERT_EQ(st, 0x5a5a);
    fl_close(&p);
}

/* ---- pdeathsig in a new PID namespace --------------------------------------------------- */

TEST(pdeathsig_in_a_new_pid_ns_does_not_kill_the_child_spuriously)
{
    /* Its parent reads as 0 in there: the check that the caller is still
     * alive cannot be made, and must not be taken for its death. */
    struct fl_contain c = { .unshare = FL_NS_USER | FL_NS_PID, .map = FL_MAP_ROOT };
    struct fl_cmd cmd = { .argv = PROBE("proc"), .pdeathsig = SIGKILL, .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "pid"), 1);
    cmd.pdeathsig = SIGTERM;
    ASSERT_EQ(t_get_num(t_probe(&cmd), "ppid"), 0);
    /* An init drops a signal it does not handle, but one it blocks stays
     * pending across the exec: none was sent. */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    cmd.sigmask = &mask;
    cmd.argv = PROBE("pending");
    ASSERT_EQ(t_hex(t_probe(&cmd), "sig_pending") & SIGBIT(SIGTERM), 0);
}

struct pdeath_arg {
    struct fl_cmd cmd;
    struct fl_proc proc;
    int r;
};

static void *spawn_and_exit(void *argp)
{
    struct pdeath_arg *a = argp;
    a->r = fl_spawn(&a->cmd, &a->proc, NULL);
    return NULL;
}

TEST(pdeathsig_sigkill_reaches_init_of_a_new_pid_ns)
{
    struct fl_contain c = { .unshare = FL_NS_USER | FL_NS_PID, .map = FL_MAP_ROOT };
    struct pdeath_arg *a = t_keep(calloc(1, sizeof *a));
    a->cmd = (struct fl_cmd){ .argv = PROBE("sleep", "60"), .pdeathsig = SIGKILL,
                              .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&a->cmd);
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, spawn_and_exit, a));
    pthread_join(t, NULL);
    ASSERT_OK(a->r);
    /* SIGKILL from outside reaches an init; the thread's exit sends it. */
    int st = 0;
    int r = fl_wait(&a->proc, 30000, &st);
    if (r == ETIMEDOUT)
        t_kill_wait(&a->proc);
    ASSERT_OK(r);
    fl_close(&a->proc);
    ASSERT_SIGNALED(st, SIGKILL);
}
