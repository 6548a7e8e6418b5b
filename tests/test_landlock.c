/*
 * test_landlock.c: fl_contain.landlock, from the child's point of view.
 * The probe tries to write, read and exec, and reports the errno; the
 * rules it needs to start are computed at run time (landlock_rules.h).
 *
 * Each case says why it skips where this kernel has no Landlock
 * (fl_landlock_abi() == 0). The posix_spawn backend cannot restrict a
 * child: ENOTSUP at step prepare, asserted by UNSUPPORTED_ON_POSIX_SPAWN.
 * The checks in the parent (a missing path, no access) come first, for
 * every backend.
 */
#include "test.h"
#include "landlock_rules.h"
#include "denied.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void needs_landlock(void)
{
    int abi = fl_landlock_abi();
    if (abi == 0)
        SKIP("this kernel has no Landlock (or it is disabled): fl_landlock_abi() is 0");
    if (abi < 5)
        SKIP("this kernel's Landlock ABI is below 5: strict mode is ENOTSUP here "
             "(strict_mode_is_enotsup_only_where_the_kernel_lacks_a_right covers it)");
}

/* The directories of the cases: rw and ro keep write or read access, out
 * none; each holds a file "old". */
struct dirs {
    char *rw, *ro, *out;
};

static struct dirs make_dirs(void)
{
    struct dirs d = { t_tmpdir(), t_tmpdir(), t_tmpdir() };
    t_write_file(d.rw, "old", "old\n", 0644);
    t_write_file(d.ro, "old", "old\n", 0644);
    t_write_file(d.out, "old", "old\n", 0644);
    /* As root, the re-run as uid 65534 must reach them too. */
    chmod(d.rw, 0777);
    chmod(d.ro, 0755);
    chmod(d.out, 0777);
    return d;
}

/* The start of a case that runs the probe under a ruleset: posix_spawn's
 * refusal, a kernel that takes every right, and the case's directories. */
#define LANDLOCK_CASE(d)                                                            \
    struct fl_contain c_ = { .flags = FL_NO_NEW_PRIVS };                            \
    struct fl_cmd cmd_ = { .argv = ARGV("/bin/true"), .contain = &c_, .backend = BACKEND }; \
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd_);                                              \
    needs_landlock();                                                               \
    struct dirs d = make_dirs()

static struct t_rules rules_for(const struct dirs *d)
{
    struct t_rules rs = t_probe_rules();
    t_rule(&rs, d->rw, FL_LANDLOCK_READ | FL_LANDLOCK_WRITE);
    t_rule(&rs, d->ro, FL_LANDLOCK_READ);
    return rs;
}

static const char *result(const char *out, const char *op, const char *path)
{
    char *v = t_get(out, t_fmt("%s %s", op, path));
    if (!v)
        FAIL("no \"%s %s\" line in the report:\n%s", op, path, out);
    return v;
}

/* Runs the probe with the command words under rs (flags: FL_NO_NEW_PRIVS
 * and the like), returns its report. */
#define LOCKED(rs, cflags, ...)                                                   \
    locked_run(&(rs), (cflags), PROBE(__VA_ARGS__))

static char *locked_run(struct t_rules *rs, unsigned cflags, char *const *argv)
{
    struct fl_contain c = { .flags = cflags, .landlock = rs->r, .nlandlock = rs->n };
    struct fl_cmd cmd = { .argv = argv, .contain = &c, .backend = BACKEND };
    return t_probe(&cmd);
}

/* ---- what the program may do ---------------------------------------------- */

TEST(a_write_beneath_a_writable_rule_succeeds)
{
    LANDLOCK_CASE(d);
    struct t_rules rs = rules_for(&d);
    char *f = t_fmt("%s/new", d.rw);
    char *out = LOCKED(rs, FL_NO_NEW_PRIVS, "try-write", f, "try-write",
                       t_fmt("%s/old", d.rw), "try-mkdir", t_fmt("%s/sub", d.rw));
    ASSERT_STR_EQ(result(out, "write", f), "ok");
    ASSERT_STR_EQ(result(out, "write", t_fmt("%s/old", d.rw)), "ok");
    ASSERT_STR_EQ(result(out, "mkdir", t_fmt("%s/sub", d.rw)), "ok");
    ASSERT_STR_EQ(t_read_file(f), "written\n");
}

TEST(a_write_beneath_a_read_only_rule_is_eacces_and_a_read_works)
{
    LANDLOCK_CASE(d);
    struct t_rules rs = rules_for(&d);
    char *old = t_fmt("%s/old", d.ro), *fresh = t_fmt("%s/new", d.ro);
    char *out = LOCKED(rs, FL_NO_NEW_PRIVS, "try-write", old, "try-write", fresh,
                       "try-read", old, "try-mkdir", t_fmt("%s/sub", d.ro));
    ASSERT_STR_EQ(result(out, "write", old), "EACCES");
    ASSERT_STR_EQ(result(out, "write", fresh), "EACCES");
    ASSERT_STR_EQ(result(out, "read", old), "ok");
    ASSERT_STR_EQ(result(out, "mkdir", t_fmt("%s/sub", d.ro)), "EACCES");
    ASSERT_STR_EQ(t_read_file(old), "old\n");
    ASSERT(access(fresh, F_OK) != 0);
}

TEST(a_write_or_read_outside_every_rule_is_eacces)
{
    LANDLOCK_CASE(d);
    struct t_rules rs = rules_for(&d);
    char *old = t_fmt("%s/old", d.out), *fresh = t_fmt("%s/new", d.out);
    char *out = LOCKED(rs, FL_NO_NEW_PRIVS, "try-write", old, "try-write", fresh,
                       "try-read", old, "try-read", "/etc/passwd");
    ASSERT_STR_EQ(result(out, "write", old), "EACCES");
    ASSERT_STR_EQ(result(out, "write", fresh), "EACCES");
    ASSERT_STR_EQ(result(out, "read", old), "EACCES");
    ASSERT_STR_EQ(result(out, "read", "/etc/passwd"), "EACCES");
    ASSERT_STR_EQ(t_read_file(old), "old\n");
}

TEST(a_rule_on_a_regular_file_keeps_only_that_file)
{
    LANDLOCK_CASE(d);
    struct t_rules rs = t_probe_rules();
    char *file = t_fmt("%s/old", d.out), *sibling = t_fmt("%s/sibling", d.out);
    /* WRITE on a file: its directory rights (make, remove) do not apply. */
    t_rule(&rs, file, FL_LANDLOCK_READ | FL_LANDLOCK_WRITE);
    char *out = LOCKED(rs, FL_NO_NEW_PRIVS, "try-read", file, "try-write", file,
                       "try-write", sibling);
    ASSERT_STR_EQ(result(out, "read", file), "ok");
    ASSERT_STR_EQ(result(out, "write", file), "ok");
    ASSERT_STR_EQ(result(out, "write", sibling), "EACCES");
    ASSERT_STR_EQ(t_read_file(file), "written\n");
}

TEST(a_program_outside_the_exec_rules_fails_at_exec_with_eacces)
{
    struct t_rules rs = { .n = 0 };
    struct dirs d = { .rw = NULL };
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    needs_landlock();
    d = make_dirs();
    rs = rules_for(&d);   /* the probe's and the libraries' directories only */
    char real[4096];
    if (!realpath("/bin/true", real))
        SKIP("no /bin/true");
    for (size_t i = 0; i < rs.n; i++)
        if (!strncmp(real, rs.r[i].path, strlen(rs.r[i].path)))
            SKIP("/bin/true lies beneath a directory the probe's rules allow");
    c.landlock = rs.r;
    c.nlandlock = rs.n;
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, "/bin/true");
}

TEST(the_program_s_children_are_restricted_too)
{
    LANDLOCK_CASE(d);
    struct t_rules rs = rules_for(&d);
    char *inside = t_fmt("%s/by-grandchild", d.rw), *outside = t_fmt("%s/by-grandchild", d.out);
    char *out = LOCKED(rs, FL_NO_NEW_PRIVS, "run-probe", "try-write", inside, "try-write",
                       outside);
    ASSERT_EQ(t_get_num(out, "probe_status"), 0);
    ASSERT_STR_EQ(result(out, "write", inside), "ok");
    ASSERT_STR_EQ(result(out, "write", outside), "EACCES");
}

TEST(the_ruleset_fd_does_not_reach_the_program)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    needs_landlock();
    struct t_rules rs = t_probe_rules();
    t_rule(&rs, "/proc", FL_LANDLOCK_READ);   /* for the fd list */
    c.landlock = rs.r;
    c.nlandlock = rs.n;
    cmd.argv = PROBE("fds");
    cmd.flags = FL_KEEP_FDS;   /* it is FD_CLOEXEC: exec closes it all the same */
    char *out = t_probe(&cmd);
    struct t_fd fds[64];
    int n = t_fds(out, fds, 64);
    ASSERT_GE(n, 3);
    for (int i = 0; i < n; i++)
        if (strstr(fds[i].target, "anon_inode:") && strstr(fds[i].target, "landlock"))
            FAIL("the program has the ruleset as fd %d (%s)", fds[i].fd, fds[i].target);
    cmd.flags = 0;
    ASSERT_FDS_EXACTLY(t_probe(&cmd), 0, 1, 2);
}

TEST(the_ruleset_stays_clear_of_the_fds_the_maps_set)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    needs_landlock();
    NEEDS_CLOSE_OTHERS();
    struct dirs d = make_dirs();
    struct t_rules rs = rules_for(&d);
    t_rule(&rs, "/proc", FL_LANDLOCK_READ);
    /* The ruleset is made at the lowest free fd, which the maps target. */
    int src = t_file_at(40, true);
    struct fl_fd_map maps[8];
    for (int i = 0; i < 8; i++)
        maps[i] = (struct fl_fd_map){ 3 + i, src };
    c.landlock = rs.r;
    c.nlandlock = rs.n;
    cmd.fds = maps;
    cmd.nfds = 8;
    char *outside = t_fmt("%s/new", d.out);
    cmd.argv = PROBE("fds", "try-write", outside);
    char *out = t_probe(&cmd);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    for (int fd = 3; fd <= 10; fd++)
        ASSERT_EQ(t_fd_entry(out, fd).ino, t_ino(src));
    ASSERT_STR_EQ(result(out, "write", outside), "EACCES");
    close(src);
}

/* ---- strict and best effort ----------------------------------------------- */

TEST(strict_mode_is_enotsup_only_where_the_kernel_lacks_a_right)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct t_rules rs = t_probe_rules();
    c.landlock = rs.r;
    c.nlandlock = rs.n;
    cmd.argv = PROBE("exit", "0");
    int abi = fl_landlock_abi();
    if (abi < 5) {
        struct fl_error e = SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_LANDLOCK);
        ASSERT_STR_CONTAINS(e.detail, "FL_LANDLOCK_BEST_EFFORT");
        printf("Landlock ABI %d: strict mode refused, as documented\n", abi);
        return;
    }
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.landlock_unenforced, 0);
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(best_effort_enforces_what_the_kernel_has_and_names_the_rest)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS | FL_LANDLOCK_BEST_EFFORT };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct dirs d = make_dirs();
    struct t_rules rs = rules_for(&d);
    char *outside = t_fmt("%s/new", d.out);
    c.landlock = rs.r;
    c.nlandlock = rs.n;
    cmd.argv = PROBE("try-write", outside);
    cmd.stdio[1].kind = FL_PIPE;
    struct fl_proc p;
    SPAWN(&cmd, &p);
    char *out = t_read_all(p.stdio[1]);
    unsigned unenforced = p.landlock_unenforced;
    ASSERT_EXITED(t_wait(&p), 0);
    int abi = fl_landlock_abi();
    /* <linux/landlock.h>: bit 14 TRUNCATE (ABI 3), 15 IOCTL_DEV (5); 13 REFER
     * (ABI 2) is never left allowed, as ABI 1 denies it everywhere. */
    unsigned want = abi == 0 ? 0xffffu : abi <= 2 ? 0xc000u
                    : abi < 5 ? 0x8000u : 0;
    ASSERT_EQ(unenforced, want);
    ASSERT_STR_EQ(result(out, "write", outside), abi ? "EACCES" : "ok");
    printf("Landlock ABI %d: unenforced 0x%x\n", abi, unenforced);
}

TEST(a_handle_without_landlock_reports_nothing_unenforced)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.landlock_unenforced, 0);
    ASSERT_EXITED(t_wait(&p), 0);
}

/* ---- privileges: no_new_privs or CAP_SYS_ADMIN ----------------------------- */

static char *const true_argv[] = { "/bin/true", NULL };

static void refused_by_posix_spawn(const struct fl_cmd *cmd)
{
    UNSUPPORTED_ON_POSIX_SPAWN(cmd);
}

/* /bin/true under the probe's rules, without FL_NO_NEW_PRIVS, from a
 * caller whose child has neither no_new_privs nor CAP_SYS_ADMIN (uid
 * 65534 when the suite runs as root). False where the case ends here: its
 * rerun as uid 65534 has run it, or the posix_spawn backend refused. */
static bool unprivileged_probe_locked(struct fl_contain *c, struct t_rules *rs, struct fl_cmd *cmd,
                                      unsigned flags)
{
    if (t_rerun_as_nobody())
        return false;
    *rs = t_probe_rules();
    *c = (struct fl_contain){ .landlock = rs->r, .nlandlock = rs->n };
    *cmd = (struct fl_cmd){ .argv = true_argv, .contain = c, .backend = BACKEND, .flags = flags };
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        refused_by_posix_spawn(cmd);
        return false;
    }
    needs_landlock();
    if (geteuid() == 0)
        SKIP("needs a user without CAP_SYS_ADMIN (runs as uid 65534 when started as root)");
    if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
        SKIP("this process has no_new_privs already, which its children inherit");
    return true;
}

TEST(without_no_new_privs_an_unprivileged_child_is_eperm_at_step_landlock)
{
    struct fl_contain c;
    struct t_rules rs;
    struct fl_cmd cmd;
    if (!unprivileged_probe_locked(&c, &rs, &cmd, 0))
        return;
    struct fl_error e = SPAWN_FAILS(&cmd, EPERM, FL_STEP_LANDLOCK);
    ASSERT_EQ(e.index, -1);
    ASSERT(strstr(e.detail, "FL_NO_NEW_PRIVS"));   /* what to add */
}

/* A launch's caller may change or free its command as soon as fl_spawn()
 * returns: the detail comes from the launch's own copy of the settings. */
TEST(a_launch_refused_for_want_of_no_new_privs_says_so_after_its_command_changed)
{
    struct fl_contain c;
    struct t_rules rs;
    struct fl_cmd cmd;
    if (!unprivileged_probe_locked(&c, &rs, &cmd, FL_NO_WAIT_EXEC))
        return;
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);   /* the fork backend waits for the exec: the error now */
    if (r == 0) {
        c.flags = FL_NO_NEW_PRIVS;   /* the caller's struct, reused */
        r = fl_launch_finish(&p, &e);
        fl_close(&p);
    }
    ASSERT_EQ(r, EPERM);
    ASSERT(fl_t_step_is(&e, FL_STEP_LANDLOCK));
    ASSERT(strstr(e.detail, "FL_NO_NEW_PRIVS"));
}

TEST(without_no_new_privs_root_may_restrict_its_child)
{
    struct dirs d = make_dirs();
    struct t_rules rs = rules_for(&d);
    struct fl_contain c = { .landlock = rs.r, .nlandlock = rs.n };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    needs_landlock();
    if (geteuid() != 0)
        SKIP("needs root (CAP_SYS_ADMIN lets landlock_restrict_self() go without no_new_privs)");
    if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
        SKIP("this process has no_new_privs already");
    char *outside = t_fmt("%s/new", d.out);
    char *out = LOCKED(rs, 0, "nnp", "try-write", outside);
    ASSERT_EQ(t_get_num(out, "no_new_privs"), 0);
    ASSERT_STR_EQ(result(out, "write", outside), "EACCES");
}

/* ---- errors found in the parent, before any child ------------------------- */

TEST(a_missing_rule_path_is_enoent_with_its_index_and_path)
{
    struct t_rules rs = t_probe_rules();
    size_t bad = rs.n;
    t_rule(&rs, "/nonexistent/fl-landlock", FL_LANDLOCK_READ);
    t_rule(&rs, "/tmp", FL_LANDLOCK_READ);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .landlock = rs.r, .nlandlock = rs.n };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    if (fl_landlock_abi() == 0)
        SKIP("this kernel has no Landlock: the rules are not opened (best effort) or the "
             "spawn is ENOTSUP (strict)");
    if (fl_landlock_abi() < 5)
        c.flags |= FL_LANDLOCK_BEST_EFFORT;
    /* posix_spawn cannot restrict a child: that, not a path, is the error. */
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_LANDLOCK);
    ASSERT_EQ(e.index, (int)bad);
    ASSERT_STR_EQ(e.path, "/nonexistent/fl-landlock");
    char buf[512];
    ASSERT_STR_CONTAINS(fl_error_format(&e, buf, sizeof buf),
                        "landlock \"/nonexistent/fl-landlock\": No such file or directory");
}

TEST(a_rule_without_access_is_einval_with_its_index)
{
    struct fl_landlock_path rules[] = { { "/tmp", FL_LANDLOCK_READ }, { "/usr", 0 } };
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .landlock = rules, .nlandlock = 2 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_LANDLOCK);
    ASSERT_EQ(e.index, 1);
    ASSERT_STR_EQ(e.path, "/usr");
}

TEST(a_rule_with_unknown_access_bits_is_einval)
{
    struct fl_landlock_path rules[] = { { "/tmp", FL_LANDLOCK_READ | 1u << 7 } };
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .landlock = rules, .nlandlock = 1 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_LANDLOCK);
    ASSERT_EQ(e.index, 0);
}

TEST(a_rule_without_a_path_is_einval)
{
    struct fl_landlock_path rules[] = { { "/tmp", FL_LANDLOCK_READ }, { NULL, FL_LANDLOCK_READ } };
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .landlock = rules, .nlandlock = 2 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_LANDLOCK);
    ASSERT_EQ(e.index, 1);
}

TEST(a_rule_count_without_rules_is_einval_at_prepare)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .landlock = NULL, .nlandlock = 1 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(the_posix_spawn_backend_refuses_landlock_with_enotsup)
{
    struct t_rules rs = t_probe_rules();
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS | FL_LANDLOCK_BEST_EFFORT,
                            .landlock = rs.r, .nlandlock = rs.n };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c,
                          .backend = FL_BACKEND_POSIX_SPAWN };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "posix_spawn cannot set containment");
}

/* ---- a kernel without Landlock ------------------------------------------- */

/* landlock_create_ruleset() refused with ENOSYS reads as a kernel without
 * Landlock (the ABI query is the first call of the subprocess, so no
 * earlier answer is remembered). */
static const struct fl_landlock_path everything_rx = { "/", FL_LANDLOCK_READ | FL_LANDLOCK_EXEC };

TEST(strict_landlock_on_a_kernel_without_it_is_enotsup_at_step_landlock)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .landlock = &everything_rx, .nlandlock = 1 };
    struct fl_cmd cmd = { .argv = true_argv, .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    struct t_denied d =
        t_spawn_denied(&cmd, (const char *[]){ "landlock_create_ruleset", NULL }, ENOSYS);
    ASSERT_EQ(d.r, ENOTSUP);
    ASSERT_EQ(d.e.step, FL_STEP_LANDLOCK);
    ASSERT_EQ(d.e.index, -1);
    ASSERT(strstr(d.e.detail, "no Landlock"));
}

/* It is async-signal-safe, and none of the library's functions sets errno
 * as its result: the refused query leaves the caller's errno alone. */
TEST(the_abi_query_refused_by_the_kernel_keeps_errno)
{
    NEEDS_SECCOMP();
    pid_t pid = t_fork_denied((const char *[]){ "landlock_create_ruleset", NULL }, ENOSYS);
    if (pid == 0) {
        errno = EDOM;
        int abi = fl_landlock_abi();
        _exit(abi != 0 ? 4 : errno != EDOM ? 5 : 0);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    ASSERT_EXITED(st, 0);
}

TEST(best_effort_landlock_on_a_kernel_without_it_runs_and_says_what_is_unenforced)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS | FL_LANDLOCK_BEST_EFFORT,
                            .landlock = &everything_rx, .nlandlock = 1 };
    struct fl_cmd cmd = { .argv = true_argv, .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    struct t_denied d =
        t_spawn_denied(&cmd, (const char *[]){ "landlock_create_ruleset", NULL }, ENOSYS);
    ASSERT_EQ(d.r, 0);
    ASSERT_EQ(d.landlock_unenforced, 0xffffu);   /* every right this library restricts */
}

TEST(best_effort_landlock_on_a_kernel_without_it_still_fails_on_a_missing_path)
{
    const struct fl_landlock_path rules[] = {
        { "/", FL_LANDLOCK_READ | FL_LANDLOCK_EXEC },
        { "/nonexistent/dir", FL_LANDLOCK_READ },
    };
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS | FL_LANDLOCK_BEST_EFFORT,
                            .landlock = rules, .nlandlock = 1 };
    struct fl_cmd cmd = { .argv = true_argv, .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    c.nlandlock = 2;
    struct t_denied d =
        t_spawn_denied(&cmd, (const char *[]){ "landlock_create_ruleset", NULL }, ENOSYS);
    ASSERT_EQ(d.r, ENOENT);
    ASSERT_EQ(d.e.step, FL_STEP_LANDLOCK);
    ASSERT_EQ(d.e.index, 1);
    ASSERT_STR_EQ(d.e.path, "/nonexistent/dir");
}
