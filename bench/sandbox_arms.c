/* sandbox_arms.c: the arms of the sandbox suite; see sandbox_arms.h.
 *
 * Case ns, each arm ending with the target as pid 1 of a new user, mount,
 * PID and network namespace, uid and gid 0 inside, / private, a fresh
 * /proc:
 *   limit         clone(CLONE_VM|CLONE_VFORK|the 4 CLONE_NEW*) whose child
 *                 writes uid_map, setgroups "deny" and gid_map, makes / private, mounts proc and execs: what
 *                 forkless does for the case and nothing else
 *   forkless      fl_spawn() with .contain, defaults otherwise (signals
 *                 reset, other fds closed, a pidfd), fl_wait()
 *   fork_unshare  fork, unshare(), the maps, fork again, mounts, exec
 *   unshare_cmd   posix_spawn of util-linux unshare(1)
 *   bwrap         posix_spawn of bubblewrap
 * Case filter, each arm ending with the target under no_new_privs, a
 * Landlock ruleset and a seccomp filter:
 *   limit         the ruleset built in the parent (as forkless does), then
 *                 clone(CLONE_VM|CLONE_VFORK) whose child sets
 *                 no_new_privs, restricts itself, installs the filter and
 *                 execs
 *   forkless      fl_spawn() with .contain
 *   fork_filter   fork, then the same in the child, ruleset and all
 * No command-line peer does Landlock here: util-linux's setpriv learnt
 * --landlock-access in 2.40, and bwrap has none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sandbox_arms.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forkless.h"
#include "peerrun.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define SECCOMP_SET_MODE_FILTER 1

extern char **environ;

#define NS_CLONE (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET)
#define NS_FLAGS (FL_NS_USER | FL_NS_MOUNT | FL_NS_PID | FL_NS_NET)
#define PROC_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)   /* as forkless mounts it */

/* What the filter denies (EPERM): the usual container deny list, those of
 * them that this architecture has. */
static const char *const deny_names[] = {
    "ptrace", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "reboot", "swapon", "swapoff", "acct", "bpf", "perf_event_open",
    "userfaultfd", "keyctl", "add_key", "request_key", "open_by_handle_at",
    "process_vm_writev", "pivot_root", "setns",
};
#define MAX_DENY (sizeof deny_names / sizeof deny_names[0])

/* The Landlock file system rights (<linux/landlock.h>) and what the
 * library's FL_LANDLOCK_* bits give (landlock.c): READ the file and
 * directory reads, EXEC execute, WRITE every other right. */
enum { LL_EXECUTE = 1 << 0, LL_WRITE_FILE = 1 << 1, LL_READ_FILE = 1 << 2, LL_READ_DIR = 1 << 3 };
#define LL_WRITE (LL_WRITE_FILE | 0xfff0u)

/* What the arms share, set by fl_sb_setup(). */
static struct {
    char uid_map[32], gid_map[32];
    struct sock_fprog filter;
    size_t ndeny;
    char filter_why[160];         /* why the filter case cannot run, or "" */
    int abi;                      /* Landlock's */
    uint64_t handled;             /* the rights the ruleset handles */
    char target_dir[PATH_MAX];
    struct fl_landlock_path rules[FL_SB_NRULES];
    char unshare_path[PATH_MAX], bwrap_path[PATH_MAX];
    char *unshare_argv[16], *bwrap_argv[24];
} sb;

const char *const fl_sb_case_names[FL_SB_NCASES] = { "ns", "filter" };

/* ---- case ns ------------------------------------------------------------- */

/* open, write, close: three system calls (the libc calls here are plain
 * wrappers, safe in a CLONE_VM child of this single-threaded bench). */
static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, text, strlen(text));
    close(fd);
    return w < 0 ? -1 : 0;
}

/* The new user namespace's maps, written by the process inside it, which
 * has no capability in the parent namespace, root or not: the kernel then
 * takes a gid_map only once setgroups() is denied (user_namespaces(7)). */
static int write_maps(void)
{
    if (write_file("/proc/self/uid_map", sb.uid_map) != 0)
        return -1;
    if (write_file("/proc/self/setgroups", "deny") != 0)
        return -1;
    return write_file("/proc/self/gid_map", sb.gid_map);
}

/* In the new PID namespace: every mount private, then its /proc. */
static int make_mounts(void)
{
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return -1;
    return mount("proc", "/proc", "proc", PROC_FLAGS, NULL);
}

/* The exit codes of a child whose setup failed. */
enum { EX_UNSHARE = 120, EX_MAPS, EX_MOUNTS, EX_FORK, EX_NNP, EX_LANDLOCK, EX_SECCOMP,
       EX_EXEC = 127 };

__attribute__((noinline, no_sanitize("address", "undefined")))
static int ns_child(void *p)
{
    const struct fl_arm_target *t = p;
    if (write_maps() != 0)
        _exit(EX_MAPS);
    if (make_mounts() != 0)
        _exit(EX_MOUNTS);
    execve(t->path, t->argv, environ);
    _exit(EX_EXEC);
}

/* Starts child under clone(CLONE_VM|CLONE_VFORK|flags) and reaps it. */
static int clone_vm_run(int (*child)(void *), void *arg, int flags, char *err, size_t errsz)
{
    char *top = fl_arm_clone_stack(err, errsz);
    if (!top)
        return -1;
    pid_t pid = clone(child, top, CLONE_VM | CLONE_VFORK | flags | SIGCHLD, arg);
    if (pid < 0) {
        snprintf(err, errsz, "clone: %s", strerror(errno));
        return -1;
    }
    return fl_arm_reap(pid, err, errsz);
}

static int arm_limit_ns(const struct fl_arm_target *t, char *err, size_t errsz)
{
    return clone_vm_run(ns_child, (void *)t, NS_CLONE, err, errsz);
}

static int arm_forkless_ns(const struct fl_arm_target *t, char *err, size_t errsz)
{
    static const struct fl_contain c = { .unshare = NS_FLAGS, .map = FL_MAP_ROOT,
                                         .flags = FL_MOUNT_PROC };
    struct fl_cmd cmd = { .argv = t->argv, .path = t->path, .contain = &c };
    return fl_arm_spawn_ok(&cmd, err, errsz);
}

/* What a C programmer writes without a library: fork() (the caller must
 * not be changed), unshare() of the four namespaces in the child, its
 * maps, then a second fork(), because unshare(CLONE_NEWPID) does not move
 * the caller: only its next child is pid 1 of the new namespace, and only
 * a process inside it mounts a /proc that shows it. The middle process
 * waits and passes the exit status on, as unshare(1) --fork does. */
__attribute__((noreturn)) static void fork_unshare_child(const struct fl_arm_target *t)
{
    if (unshare(NS_CLONE) != 0)
        _exit(EX_UNSHARE);
    if (write_maps() != 0)
        _exit(EX_MAPS);
    pid_t init = fork();
    if (init == 0) {
        if (make_mounts() != 0)
            _exit(EX_MOUNTS);
        execve(t->path, t->argv, environ);
        _exit(EX_EXEC);
    }
    int st;
    if (init < 0 || waitpid(init, &st, 0) != init)
        _exit(EX_FORK);
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* fork(), child(t) in the child (it never returns), the reap. */
static int fork_run(void (*child)(const struct fl_arm_target *), const struct fl_arm_target *t,
                    char *err, size_t errsz)
{
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errsz, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0)
        child(t);
    return fl_arm_reap(pid, err, errsz);
}

static int arm_fork_unshare(const struct fl_arm_target *t, char *err, size_t errsz)
{
    return fork_run(fork_unshare_child, t, err, errsz);
}

/* posix_spawn of argv, then the reap. */
static int spawn_prog(char *const *argv, char *err, size_t errsz)
{
    pid_t pid;
    int e = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
    if (e) {
        snprintf(err, errsz, "posix_spawn %s: %s", argv[0], strerror(e));
        return -1;
    }
    return fl_arm_reap(pid, err, errsz);
}

static int arm_unshare_cmd(const struct fl_arm_target *t, char *err, size_t errsz)
{
    (void)t;
    return spawn_prog(sb.unshare_argv, err, errsz);
}

static int arm_bwrap(const struct fl_arm_target *t, char *err, size_t errsz)
{
    (void)t;
    return spawn_prog(sb.bwrap_argv, err, errsz);
}

/* ---- case filter ----------------------------------------------------------- */

/* The rights a kernel of Landlock ABI abi handles, as landlock.c has them. */
static uint64_t handled_of(int abi)
{
    if (abi >= 5)
        return 0xffffu;
    if (abi >= 3)
        return 0x7fffu;   /* no IOCTL_DEV */
    return abi == 2 ? 0x3fffu : abi == 1 ? 0x1fffu : 0;   /* no TRUNCATE, REFER */
}

static uint64_t rights_of(unsigned access)
{
    return (access & FL_LANDLOCK_READ ? LL_READ_FILE | LL_READ_DIR : 0) |
           (access & FL_LANDLOCK_EXEC ? LL_EXECUTE : 0) |
           (access & FL_LANDLOCK_WRITE ? LL_WRITE : 0);
}

/* The ruleset, as forkless builds it in the parent for every spawn: one
 * landlock_create_ruleset, then per path an O_PATH open, a
 * landlock_add_rule and a close (every rule is a directory, so the rights
 * need no trimming to a file's). Returns its fd, or -1 with err set. */
static int build_ruleset(char *err, size_t errsz)
{
    struct { uint64_t handled_access_fs; } attr = { sb.handled };
    int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (fd < 0) {
        snprintf(err, errsz, "landlock_create_ruleset: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < FL_SB_NRULES; i++) {
        struct __attribute__((packed)) {
            uint64_t allowed_access;
            int32_t parent_fd;
        } rule = { rights_of(sb.rules[i].access) & sb.handled,
                   open(sb.rules[i].path, O_PATH | O_CLOEXEC) };
        int r = rule.parent_fd < 0 ? -1 : (int)syscall(SYS_landlock_add_rule, fd, 1, &rule, 0);
        int e = errno;
        if (rule.parent_fd >= 0)
            close(rule.parent_fd);
        if (r < 0) {
            snprintf(err, errsz, "Landlock rule %s: %s", sb.rules[i].path, strerror(e));
            close(fd);
            return -1;
        }
    }
    return fd;
}

/* no_new_privs, the ruleset, the filter: returns the failed step's exit
 * code, or 0. */
static int lock_down(int ruleset)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return EX_NNP;
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
        return EX_LANDLOCK;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &sb.filter) != 0)
        return EX_SECCOMP;
    return 0;
}

struct filter_arg {
    const struct fl_arm_target *t;
    int ruleset;
};

__attribute__((noinline, no_sanitize("address", "undefined")))
static int filter_child(void *p)
{
    const struct filter_arg *a = p;
    int ex = lock_down(a->ruleset);
    if (ex)
        _exit(ex);
    execve(a->t->path, a->t->argv, environ);
    _exit(EX_EXEC);
}

static int arm_limit_filter(const struct fl_arm_target *t, char *err, size_t errsz)
{
    struct filter_arg a = { t, build_ruleset(err, errsz) };
    if (a.ruleset < 0)
        return -1;
    int r = clone_vm_run(filter_child, &a, 0, err, errsz);
    close(a.ruleset);
    return r;
}

static int arm_forkless_filter(const struct fl_arm_target *t, char *err, size_t errsz)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS | FL_LANDLOCK_BEST_EFFORT,
                            .seccomp = &sb.filter, .landlock = sb.rules,
                            .nlandlock = FL_SB_NRULES };
    struct fl_cmd cmd = { .argv = t->argv, .path = t->path, .contain = &c };
    return fl_arm_spawn_ok(&cmd, err, errsz);
}

/* fork, then everything in the child: the ruleset, no_new_privs, the
 * restriction, the filter, exec. */
__attribute__((noreturn)) static void fork_filter_child(const struct fl_arm_target *t)
{
    char e[256];
    int fd = build_ruleset(e, sizeof e);
    int ex = fd < 0 ? EX_LANDLOCK : lock_down(fd);
    if (ex)
        _exit(ex);
    close(fd);
    execve(t->path, t->argv, environ);
    _exit(EX_EXEC);
}

static int arm_fork_filter(const struct fl_arm_target *t, char *err, size_t errsz)
{
    return fork_run(fork_filter_child, t, err, errsz);
}

/* ---- the table ------------------------------------------------------------- */

#define ARM(nm, wt, fn, fk) { .name = (nm), .what = (wt), .run = (fn), .forks = (fk) }
const struct fl_sb_arm fl_sb_arms[] = {
    { ARM("limit", "clone(CLONE_VM|CLONE_VFORK|CLONE_NEWUSER|NEWNS|NEWPID|NEWNET),\n"
          "                   the child: uid_map, setgroups deny, gid_map,\n"
          "                   / MS_REC|MS_PRIVATE, mount proc, execve: nothing else",
          arm_limit_ns, 0), FL_SB_NS, NULL, NULL, 1, 0 },
    { ARM("forkless", "fl_spawn() with .contain {user|mount|pid|net, FL_MAP_ROOT,\n"
          "                   FL_MOUNT_PROC}, other settings the defaults (signals reset,\n"
          "                   fds closed, a pidfd), fl_wait()", arm_forkless_ns, 0),
      FL_SB_NS, NULL, NULL, 0, 1 },
    { ARM("fork_unshare", "fork(); unshare(4 namespaces), the maps, fork() again (the\n"
          "                   new PID namespace's pid 1), mounts, execve; the middle waits",
          arm_fork_unshare, 1), FL_SB_NS, NULL, NULL, 0, 0 },
    { ARM("unshare_cmd", "posix_spawn of unshare --user --map-root-user --mount --pid\n"
          "                   --fork --net --mount-proc TARGET (util-linux)", arm_unshare_cmd, 0),
      FL_SB_NS, "unshare", "util-linux", 0, 0 },
    { ARM("bwrap", "posix_spawn of bwrap --unshare-user --uid 0 --gid 0 --unshare-pid\n"
          "                   --unshare-net --as-pid-1 --dev-bind / / --proc /proc TARGET",
          arm_bwrap, 0), FL_SB_NS, "bwrap", "apt-get install bubblewrap", 0, 0 },
    { ARM("limit", "the ruleset built in the parent (create, per path open O_PATH,\n"
          "                   add_rule, close), clone(CLONE_VM|CLONE_VFORK); the child:\n"
          "                   no_new_privs, landlock_restrict_self, seccomp, execve",
          arm_limit_filter, 0), FL_SB_FILTER, NULL, NULL, 1, 0 },
    { ARM("forkless", "fl_spawn() with .contain {FL_NO_NEW_PRIVS, .landlock, .seccomp},\n"
          "                   defaults otherwise, fl_wait()", arm_forkless_filter, 0),
      FL_SB_FILTER, NULL, NULL, 0, 1 },
    { ARM("fork_filter", "fork(); in the child the ruleset, no_new_privs, restrict,\n"
          "                   seccomp, execve", arm_fork_filter, 1),
      FL_SB_FILTER, NULL, NULL, 0, 0 },
};
#undef ARM
const size_t fl_sb_narms = sizeof fl_sb_arms / sizeof fl_sb_arms[0];

const char *fl_sb_case_what(enum fl_sb_case c)
{
    static char buf[320];
    if (c == FL_SB_NS)
        return "a new user+mount+PID+network namespace, uid/gid 0 inside (the caller's\n"
               "outside), every mount private, a fresh /proc; the target is pid 1";
    snprintf(buf, sizeof buf, "no_new_privs, a Landlock ruleset of %d paths (built for every "
             "spawn,\nLandlock ABI %d) and a seccomp filter denying %zu system calls (built "
             "once)", FL_SB_NRULES, sb.abi, sb.ndeny);
    return buf;
}

/* ---- setup ----------------------------------------------------------------- */

static void set_argv(char **out, const char *prog, const char *const *opts, const char *target)
{
    size_t k = 0;
    out[k++] = (char *)prog;
    for (; *opts; opts++)
        out[k++] = (char *)*opts;
    out[k++] = (char *)target;
    out[k] = NULL;
}

int fl_sb_setup(const char *target, char *err, size_t errsz)
{
    memset(&sb, 0, sizeof sb);
    unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
    snprintf(sb.uid_map, sizeof sb.uid_map, "0 %u 1\n", uid);
    snprintf(sb.gid_map, sizeof sb.gid_map, "0 %u 1\n", gid);

    int nums[MAX_DENY];
    for (size_t i = 0; i < MAX_DENY; i++) {
        int n = fl_syscall_number(deny_names[i]);
        if (n >= 0)
            nums[sb.ndeny++] = n;
    }
    int e = fl_seccomp_deny(nums, sb.ndeny, EPERM, &sb.filter);
    if (e == ENOTSUP)
        snprintf(sb.filter_why, sizeof sb.filter_why, "fl_seccomp_deny: %s (this "
                 "architecture)", strerror(e));
    else if (e) {
        snprintf(err, errsz, "fl_seccomp_deny: %s", strerror(e));
        return -1;
    }
    sb.abi = fl_landlock_abi();
    sb.handled = handled_of(sb.abi);
    if (!sb.abi && !sb.filter_why[0])
        snprintf(sb.filter_why, sizeof sb.filter_why, "the kernel has no Landlock (or it is "
                 "not among the LSMs it runs)");
    snprintf(sb.target_dir, sizeof sb.target_dir, "%s", target);
    char *slash = strrchr(sb.target_dir, '/');
    if (slash)
        *(slash == sb.target_dir ? slash + 1 : slash) = '\0';
    sb.rules[0] = (struct fl_landlock_path){ sb.target_dir, FL_LANDLOCK_READ | FL_LANDLOCK_EXEC };
    sb.rules[1] = (struct fl_landlock_path){ "/usr", FL_LANDLOCK_READ | FL_LANDLOCK_EXEC };
    sb.rules[2] = (struct fl_landlock_path){ "/etc", FL_LANDLOCK_READ };
    sb.rules[3] = (struct fl_landlock_path){ "/tmp", FL_LANDLOCK_READ | FL_LANDLOCK_WRITE };

    static const char *const unshare_opts[] = { "--user", "--map-root-user", "--mount",
                                                "--pid", "--fork", "--net", "--mount-proc",
                                                NULL };
    static const char *const bwrap_opts[] = { "--unshare-user", "--uid", "0", "--gid", "0",
                                              "--unshare-pid", "--unshare-net", "--as-pid-1",
                                              "--dev-bind", "/", "/", "--proc", "/proc", NULL };
    if (fl_peer_find_prog("unshare", sb.unshare_path, sizeof sb.unshare_path) != 0)
        sb.unshare_path[0] = '\0';
    if (fl_peer_find_prog("bwrap", sb.bwrap_path, sizeof sb.bwrap_path) != 0)
        sb.bwrap_path[0] = '\0';
    set_argv(sb.unshare_argv, sb.unshare_path, unshare_opts, target);
    set_argv(sb.bwrap_argv, sb.bwrap_path, bwrap_opts, target);
    return 0;
}

void fl_sb_teardown(void)
{
    fl_seccomp_free(&sb.filter);
}

int fl_sb_usable(const struct fl_sb_arm *a, const struct fl_arm_target *t, char *why,
                 size_t size)
{
    if (a->kase == FL_SB_FILTER && sb.filter_why[0]) {
        snprintf(why, size, "%s", sb.filter_why);
        return 0;
    }
    if (a->prog && !(strcmp(a->prog, "bwrap") == 0 ? sb.bwrap_path : sb.unshare_path)[0]) {
        snprintf(why, size, "%s is not installed (%s)", a->prog, a->install);
        return 0;
    }
    char err[512];
    if (a->arm.run(t, err, sizeof err) != 0) {
        snprintf(why, size, "a first spawn failed: %s%s", err,
                 strstr(err, "status 12") ? " (120 unshare, 121 the maps, 122 the mounts, "
                 "123 fork, 124 no_new_privs, 125 Landlock, 126 seccomp, 127 exec)" : "");
        return 0;
    }
    return 1;
}
