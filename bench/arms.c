/* arms.c: the spawn arms. See arms.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "arms.h"
#include "suite.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forkless.h"
#include "raw_clone.h"
#include "stats.h"

extern char **environ;

int fl_arm_wait(pid_t pid, char *err, size_t errsz)
{
    int st;
    pid_t r;
    do
        r = waitpid(pid, &st, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        snprintf(err, errsz, "waitpid: %s", strerror(errno));
        return -1;
    }
    return st;
}

int fl_arm_check_status(int st, char *err, size_t errsz)
{
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    if (WIFEXITED(st))
        snprintf(err, errsz, "child exited with status %d%s", WEXITSTATUS(st),
                 WEXITSTATUS(st) == 127 ? " (exec failed?)" : "");
    else if (WIFSIGNALED(st))
        snprintf(err, errsz, "child killed by signal %d", WTERMSIG(st));
    else
        snprintf(err, errsz, "child wait status 0x%x", st);
    return -1;
}

int fl_arm_reap(pid_t pid, char *err, size_t errsz)
{
    int st = fl_arm_wait(pid, err, errsz);
    return st < 0 ? -1 : fl_arm_check_status(st, err, errsz);
}

/* ---- fork + execve ------------------------------------------------------- */

static int arm_fork_exec(const struct fl_arm_target *t, char *err, size_t errsz)
{
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errsz, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execve(t->path, t->argv, environ);
        _exit(127);
    }
    return fl_arm_reap(pid, err, errsz);
}

/* ---- vfork + execve ------------------------------------------------------ */

/* Its own frame, so the child touches nothing of the caller's but what it
 * reads before exec. */
__attribute__((noinline)) static pid_t start_vfork(const char *path,
                                                   char *const *argv)
{
    pid_t pid = vfork();
    if (pid == 0) {
        execve(path, argv, environ);
        _exit(127);
    }
    return pid;
}

static int arm_vfork_exec(const struct fl_arm_target *t, char *err, size_t errsz)
{
    pid_t pid = start_vfork(t->path, t->argv);
    if (pid < 0) {
        snprintf(err, errsz, "vfork: %s", strerror(errno));
        return -1;
    }
    return fl_arm_reap(pid, err, errsz);
}

/* ---- posix_spawn --------------------------------------------------------- */

static int arm_posix_spawn(const struct fl_arm_target *t, char *err, size_t errsz)
{
    pid_t pid;
    int e = posix_spawn(&pid, t->path, NULL, NULL, t->argv, environ);
    if (e) {
        snprintf(err, errsz, "posix_spawn: %s", strerror(e));
        return -1;
    }
    return fl_arm_reap(pid, err, errsz);
}

/* ---- clone(CLONE_VM|CLONE_VFORK): the physical limit --------------------- */

#define CLONE_STACK_SIZE (64 * 1024)

struct clone_arg {
    const char *path;
    char *const *argv;
};

/* Runs in the parent's memory on a private stack, until execve. */
__attribute__((noinline, no_sanitize("address", "undefined")))
static int clone_child(void *p)
{
    const struct clone_arg *a = p;
    execve(a->path, a->argv, environ);
    _exit(127);
}

char *fl_arm_clone_stack(char *err, size_t errsz)
{
    static _Thread_local char *stack;
    if (!stack) {
        void *s = mmap(NULL, CLONE_STACK_SIZE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (s == MAP_FAILED) {
            snprintf(err, errsz, "mmap stack: %s", strerror(errno));
            return NULL;
        }
        stack = s;
    }
    return stack + CLONE_STACK_SIZE;
}

static int arm_clone_vm(const struct fl_arm_target *t, char *err, size_t errsz)
{
    char *top = fl_arm_clone_stack(err, errsz);
    if (!top)
        return -1;
    struct clone_arg a = { t->path, t->argv };
    pid_t pid = clone(clone_child, top, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
    if (pid < 0) {
        snprintf(err, errsz, "clone: %s", strerror(errno));
        return -1;
    }
    return fl_arm_reap(pid, err, errsz);
}

/* The same work as forkless_full, done raw: three pipes made in the
 * parent, then in the child setsid, an rlimit, a chdir, the pipe ends onto
 * 0-2 and the rest closed, and one more environment variable. What the
 * child does not do is what forkless adds: the signal reset and a pidfd. */
struct clone_full_arg {
    const char *path;
    char *const *argv;
    char *const *envp;
    const int *child_ends;
};

__attribute__((noinline, no_sanitize("address", "undefined")))
static int clone_full_child(void *p)
{
    const struct clone_full_arg *a = p;
    struct rlimit core = { 0, 0 };
    setsid();
    setrlimit(RLIMIT_CORE, &core);
    if (chdir("/") != 0)
        _exit(126);
    for (int fd = 0; fd < 3; fd++)
        dup2(a->child_ends[fd], fd);
    syscall(SYS_close_range, 3, ~0u, 0);
    execve(a->path, a->argv, a->envp);
    _exit(127);
}

/* Built for every spawn, as the library must build its own: environ may
 * have changed since the last one. A FL_BENCH already there is replaced,
 * as .env_set replaces it. NULL: out of memory. */
static char **environ_plus_bench(void)
{
    static const char name[] = "FL_BENCH=";
    size_t n = 0, same = (size_t)-1;
    for (; environ[n]; n++)
        if (strncmp(environ[n], name, sizeof name - 1) == 0)
            same = n;
    char **env = malloc((n + 2) * sizeof *env);
    if (!env)
        return NULL;
    memcpy(env, environ, n * sizeof *env);
    if (same != (size_t)-1)
        env[same] = "FL_BENCH=1";
    else
        env[n++] = "FL_BENCH=1";
    env[n] = NULL;
    return env;
}

static int arm_clone_vm_full(const struct fl_arm_target *t, char *err, size_t errsz)
{
    char *top = fl_arm_clone_stack(err, errsz);
    if (!top)
        return -1;
    int pipes[3][2], child_ends[3], parent_ends[3];
    for (int fd = 0; fd < 3; fd++) {
        if (pipe2(pipes[fd], O_CLOEXEC) != 0) {
            snprintf(err, errsz, "pipe2: %s", strerror(errno));
            while (fd-- > 0)
                close(pipes[fd][0]), close(pipes[fd][1]);
            return -1;
        }
        child_ends[fd] = pipes[fd][fd == 0 ? 0 : 1];
        parent_ends[fd] = pipes[fd][fd == 0 ? 1 : 0];
    }
    char **envp = environ_plus_bench();
    if (!envp) {
        snprintf(err, errsz, "environment: %s", strerror(ENOMEM));
        for (int fd = 0; fd < 3; fd++)
            close(pipes[fd][0]), close(pipes[fd][1]);
        return -1;
    }
    struct clone_full_arg a = { t->path, t->argv, envp, child_ends };
    pid_t pid = clone(clone_full_child, top, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
    int clone_err = errno;
    free(envp);
    for (int fd = 0; fd < 3; fd++)
        close(child_ends[fd]);
    int r;
    if (pid < 0) {
        snprintf(err, errsz, "clone: %s", strerror(clone_err));
        r = -1;
    } else {
        r = fl_arm_reap(pid, err, errsz);
    }
    for (int fd = 0; fd < 3; fd++)
        close(parent_ends[fd]);
    return r;
}

/* What forkless's default child does, done raw: the floor under the
 * forkless arm. clone3() makes a pidfd and clears the handlers, and shares
 * the fd table; the child reads which signals the process ignores from
 * its stat in /proc (one pread() of an fd kept open; none is ignored here,
 * so none is reset), takes a table of its own holding fds 0-2, clears its
 * mask and execs. The parent waits on the pidfd and closes it. */
struct clone_clean_arg {
    const char *path;
    char *const *argv;
    int stat_fd;
    uint32_t ignored;  /* signals 1-31 the bench ignores (nohup, a shell's &) */
};

__attribute__((noinline, no_sanitize("address", "undefined")))
static int clone_clean_child(void *p)
{
    const struct clone_clean_arg *a = p;
    char stat[512];
    uint64_t no_signals = 0;
    struct fl_bench_ksigaction dfl = { 0 };
    syscall(SYS_pread64, a->stat_fd, stat, sizeof stat, 0);
    for (int sig = 1; sig < 32; sig++)
        if (a->ignored & (1u << sig))
            syscall(SYS_rt_sigaction, sig, &dfl, NULL, 8);
    if (syscall(SYS_close_range, 3, ~0u, CLOSE_RANGE_UNSHARE) != 0) {  /* before 5.9 */
        syscall(SYS_unshare, CLONE_FILES);
        syscall(SYS_close_range, 3, ~0u, 0);
    }
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &no_signals, NULL, 8);
    execve(a->path, a->argv, environ);
    _exit(127);
}

static uint32_t ignored_signals(void)
{
    uint32_t ignored = 0;
    for (int sig = 1; sig < 32; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
            ignored |= 1u << sig;
    }
    return ignored;
}

/* Where clone3() is unusable (a kernel before 5.5, a container's seccomp
 * filter) the library's child is made by clone() with every signal
 * blocked, and resets each handler itself; so does this one. */
__attribute__((noinline, no_sanitize("address", "undefined")))
static int clone_clean_fallback_child(void *p)
{
    const struct clone_clean_arg *a = p;
    struct fl_bench_ksigaction dfl = { 0 };
    uint64_t no_signals = 0;
    for (int sig = 1; sig <= 64; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            syscall(SYS_rt_sigaction, sig, &dfl, NULL, 8);
    syscall(SYS_close_range, 3, ~0u, 0);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &no_signals, NULL, 8);
    execve(a->path, a->argv, environ);
    _exit(127);
}

static long clone_clean_fallback(char *top, struct clone_clean_arg *arg, int *pidfd)
{
    uint64_t all = ~(uint64_t)0, old;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
    long pid = clone(clone_clean_fallback_child, top, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD,
                     arg, pidfd);
    if (pid < 0) {
        *pidfd = -1;
        pid = clone(clone_clean_fallback_child, top, CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
        if (pid > 0)
            *pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    }
    pid = pid < 0 ? -errno : pid;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
    return pid;
}

static int arm_clone_vm_clean(const struct fl_arm_target *t, char *err, size_t errsz)
{
    static int stat_fd = -1;
    static uint32_t ignored;
    char *top = fl_arm_clone_stack(err, errsz);
    if (!top)
        return -1;
    if (stat_fd < 0) {
        ignored = ignored_signals();
        char name[64];
        snprintf(name, sizeof name, "/proc/self/task/%d/stat", (int)getpid());
        stat_fd = open(name, O_RDONLY | O_CLOEXEC);
        if (stat_fd < 0) {
            snprintf(err, errsz, "open %s: %s", name, strerror(errno));
            return -1;
        }
    }
    struct clone_clean_arg arg = { t->path, t->argv, stat_fd, ignored };
    int pidfd = -1;
    uint64_t a[11] = {  /* struct clone_args, as far as .cgroup */
        [0] = CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_PIDFD | CLONE_CLEAR_SIGHAND,
        [1] = (uintptr_t)&pidfd,
        [4] = SIGCHLD,
        [5] = (uintptr_t)(top - CLONE_STACK_SIZE),
        [6] = CLONE_STACK_SIZE,
    };
    static bool clone3_unusable;
    long pid = clone3_unusable ? -ENOSYS : fl__clone3(a, sizeof a, clone_clean_child, &arg);
    if (pid == -ENOSYS || pid == -EPERM || pid == -EINVAL || pid == -E2BIG) {
        clone3_unusable = true;
        pid = clone_clean_fallback(top, &arg, &pidfd);
    }
    if (pid > 0 && pidfd < 0) {
        snprintf(err, errsz, "no pidfd: %s", strerror(errno));
        fl_arm_wait((pid_t)pid, err, errsz);
        return -1;
    }
    if (pid < 0) {
        snprintf(err, errsz, "clone3: %s", strerror((int)-pid));
        return -1;
    }
    siginfo_t si;
    int r;
    do
        r = waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED);
    while (r < 0 && errno == EINTR);
    while (r < 0 && (errno == EINVAL || errno == EINTR))  /* no P_PIDFD before 5.4 */
        r = waitid(P_PID, (id_t)pid, &si, WEXITED);
    int wait_err = errno;
    close(pidfd);
    if (r < 0) {
        snprintf(err, errsz, "waitid: %s", strerror(wait_err));
        return -1;
    }
    if (si.si_code == CLD_EXITED && si.si_status == 0)
        return 0;
    snprintf(err, errsz, "child %s %d", si.si_code == CLD_EXITED ? "exited with status" : "killed by signal",
             si.si_status);
    return -1;
}

/* ---- forkless ------------------------------------------------------------ */

int fl_arm_spawn_wait(const struct fl_cmd *cmd, char *err, size_t errsz)
{
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(cmd, &p, &e);
    if (r) {
        char msg[FL_ERROR_PATH_MAX + FL_ERROR_DETAIL_MAX + 64];
        snprintf(err, errsz, "fl_spawn: %s", fl_error_format(&e, msg, sizeof msg));
        return -1;
    }
    int st = 0;
    r = fl_wait(&p, -1, &st);
    fl_close(&p);
    if (r) {
        snprintf(err, errsz, "fl_wait: %s", strerror(r));
        return -1;
    }
    return st;
}

int fl_arm_spawn_ok(const struct fl_cmd *cmd, char *err, size_t errsz)
{
    int st = fl_arm_spawn_wait(cmd, err, errsz);
    return st < 0 ? -1 : fl_arm_check_status(st, err, errsz);
}

/* The defaults: a clean child (signals reset, fds closed), environ as it is. */
static int arm_forkless(const struct fl_arm_target *t, char *err, size_t errsz)
{
    struct fl_cmd cmd = { .argv = t->argv, .path = t->path };
    return fl_arm_spawn_ok(&cmd, err, errsz);
}

/* A typical "everything set" command: three pipes, a cwd, an env edit, an
 * rlimit, a new session. */
static int arm_forkless_full(const struct fl_arm_target *t, char *err, size_t errsz)
{
    static const char *const env_set[] = { "FL_BENCH=1", NULL };
    static const struct fl_rlimit rl[] = { { RLIMIT_CORE, 0, 0 } };
    struct fl_cmd cmd = {
        .argv = t->argv,
        .path = t->path,
        .cwd = "/",
        .stdio = { { .kind = FL_PIPE }, { .kind = FL_PIPE }, { .kind = FL_PIPE } },
        .env_set = env_set,
        .rlimits = rl,
        .nrlimits = 1,
        .flags = FL_SETSID,
    };
    return fl_arm_spawn_ok(&cmd, err, errsz);
}

/* Defaults but nothing cleaned: what the clean child costs. */
static int arm_forkless_keep(const struct fl_arm_target *t, char *err, size_t errsz)
{
    struct fl_cmd cmd = { .argv = t->argv, .path = t->path,
                          .flags = FL_KEEP_FDS | FL_KEEP_SIGNALS };
    return fl_arm_spawn_ok(&cmd, err, errsz);
}

/* Without a closefrom file action (musl, glibc < 2.34) the posix_spawn
 * backend refuses to close fds (ENOTSUP), so the arm keeps them there. */
#if FL_HAVE_ADDCLOSEFROM   /* CMake's probe */
#define POSIX_ARM_FLAGS 0
#define POSIX_ARM_WHAT "fl_spawn() defaults, posix_spawn backend"
#else
#define POSIX_ARM_FLAGS FL_KEEP_FDS
#define POSIX_ARM_WHAT "fl_spawn() with FL_KEEP_FDS, posix_spawn backend (no closefrom in this libc)"
#endif

static int arm_forkless_posix(const struct fl_arm_target *t, char *err, size_t errsz)
{
    struct fl_cmd cmd = { .argv = t->argv, .path = t->path,
                          .flags = POSIX_ARM_FLAGS,
                          .backend = FL_BACKEND_POSIX_SPAWN };
    return fl_arm_spawn_ok(&cmd, err, errsz);
}

static int arm_forkless_fork(const struct fl_arm_target *t, char *err, size_t errsz)
{
    struct fl_cmd cmd = { .argv = t->argv, .path = t->path,
                          .backend = FL_BACKEND_FORK };
    return fl_arm_spawn_ok(&cmd, err, errsz);
}

/* ---- the table ----------------------------------------------------------- */

const struct fl_arm fl_arms[] = {
    { .name = "fork_exec", .what = "fork() + execve() + waitpid()",
      .run = arm_fork_exec, .in_default = 1, .forks = 1 },
    { .name = "vfork_exec", .what = "vfork() + execve() + waitpid()",
      .run = arm_vfork_exec, .in_default = 1 },
    { .name = "posix_spawn", .what = "glibc posix_spawn(), no attributes",
      .run = arm_posix_spawn, .in_default = 1 },
    { .name = "clone_vm",
      .what = "clone(CLONE_VM|CLONE_VFORK) + execve(), no setup: the limit",
      .run = arm_clone_vm, .in_default = 1 },
    { .name = "clone_vm_full",
      .what = "clone_vm doing forkless_full's setup by hand: its limit",
      .run = arm_clone_vm_full, .in_default = 1 },
    { .name = "clone_vm_clean",
      .what = "clone_vm doing forkless's clean child by hand, with a pidfd: its limit",
      .run = arm_clone_vm_clean, .in_default = 1 },
    { .name = "forkless", .what = "fl_spawn() with defaults (clean child), fl_wait()",
      .run = arm_forkless, .in_default = 1, .limit = "clone_vm_clean" },
    { .name = "forkless_full",
      .what = "fl_spawn() with 3 pipes, cwd, env edit, rlimit, setsid",
      .run = arm_forkless_full, .in_default = 1, .limit = "clone_vm_full" },
    { .name = "forkless_keep",
      .what = "fl_spawn() with FL_KEEP_FDS|FL_KEEP_SIGNALS (no cleaning)",
      .run = arm_forkless_keep },
    { .name = "forkless_posix", .what = POSIX_ARM_WHAT,
      .run = arm_forkless_posix },
    { .name = "forkless_fork", .what = "fl_spawn() defaults, fork backend",
      .run = arm_forkless_fork, .forks = 1 },
};
const size_t fl_narms = sizeof fl_arms / sizeof fl_arms[0];

const struct fl_arm *fl_arm_find(const char *name)
{
    for (size_t i = 0; i < fl_narms; i++)
        if (strcmp(fl_arms[i].name, name) == 0)
            return &fl_arms[i];
    return NULL;
}

int fl_arms_select(const char *suite, const char *list, const struct fl_arm **out, size_t *n,
                   const char *ref, size_t *ref_index)
{
    *n = 0;
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        size_t len = strcspn(p, ",");
        const struct fl_arm *arm = NULL;
        for (size_t i = 0; i < fl_narms; i++)
            if (strlen(fl_arms[i].name) == len && memcmp(fl_arms[i].name, p, len) == 0)
                arm = &fl_arms[i];
        if (!arm)
            return fl_usage_error(suite, "--arms: unknown arm \"%.*s\"", (int)len, p);
        for (size_t i = 0; i < *n; i++)
            if (out[i] == arm)
                return fl_usage_error(suite, "--arms: arm \"%s\" given twice", arm->name);
        out[(*n)++] = arm;
    }
    for (size_t i = 0; !list && i < fl_narms; i++)
        if (fl_arms[i].in_default)
            out[(*n)++] = &fl_arms[i];
    *ref_index = SIZE_MAX;
    for (size_t a = 0; a < *n; a++)
        if (strcmp(out[a]->name, ref) == 0)
            *ref_index = a;
    return 0;
}

struct one_spawn {
    const struct fl_arm *arm;
    const struct fl_arm_target *t;
    char *err;
    size_t errsz;
};

static int run_one(void *ctx)
{
    struct one_spawn *o = ctx;
    return o->arm->run(o->t, o->err, o->errsz);
}

int fl_arm_sample(const struct fl_arm *arm, const struct fl_arm_target *t, uint64_t *ns,
                  struct fl_retakes *rt, int retakes, char *err, size_t errsz)
{
    struct one_spawn o = { arm, t, err, errsz };
    return fl_sample_upto(run_one, &o, ns, rt, retakes);
}

void fl_arms_list(FILE *file)
{
    for (size_t i = 0; i < fl_narms; i++)
        fprintf(file, "  %-15s %s%s\n", fl_arms[i].name, fl_arms[i].what,
                fl_arms[i].in_default ? "" : " (not by default)");
}

/* ---- measuring a set of arms ---------------------------------------------- */

#define WARMUP 3

/* Times one spawn+wait of arm into its next sample slot. */
static int time_one(const struct fl_arms_run *run, const struct fl_arm *arm, uint64_t *slot,
                    struct fl_retakes *rt)
{
    char err[2048];
    if (fl_arm_sample(arm, run->t, slot, rt, run->retakes, err, sizeof err) != 0) {
        fprintf(stderr, "forkless bench %s: %s: %s\n", run->suite, arm->name, err);
        return 1;
    }
    return 0;
}

/* The arms of one group (forking or not): warm up, size each arm's sample
 * count to the budget, then the rounds. */
static int measure_group(const struct fl_arms_run *run, const struct fl_arm *const *arms,
                         size_t narms, int forks, uint64_t *samples, struct fl_arm_cell *res)
{
    size_t rounds = run->rounds;
    unsigned long budget_s = run->budget_s;
    size_t got[narms], order[narms];
    memset(got, 0, sizeof got);
    for (size_t a = 0; a < narms; a++) {
        if (arms[a]->forks != forks)
            continue;
        uint64_t w[WARMUP];
        struct fl_retakes wrt = { 0, 0 };
        for (int k = 0; k < WARMUP; k++)
            if (time_one(run, arms[a], &w[k], &wrt) != 0)
                return 1;
        struct fl_summary ws;
        fl_summarize(w, WARMUP, &ws);
        res[a].want = rounds;
        if (budget_s > 0 && ws.median_us * (double)rounds > (double)budget_s * 1e6) {
            double fit = (double)budget_s * 1e6 / ws.median_us;
            size_t want = fit < FL_ARM_MIN_SAMPLES ? FL_ARM_MIN_SAMPLES : (size_t)fit;
            res[a].want = want < rounds ? want : rounds;
        }
    }
    uint64_t seed = 0x666f726b6c657373u + (uint64_t)forks;  /* repeatable */
    for (size_t i = 0; i < rounds; i++) {
        fl_interleave_order(order, narms, &seed);
        for (size_t k = 0; k < narms; k++) {
            size_t a = order[k];
            if (arms[a]->forks != forks || !fl_interleave_take(i, rounds, res[a].want))
                continue;
            if (time_one(run, arms[a], &samples[a * rounds + got[a]++], &res[a].rt) != 0)
                return 1;
        }
    }
    for (size_t a = 0; a < narms; a++)
        if (arms[a]->forks == forks)
            fl_summarize(&samples[a * rounds], got[a], &res[a].s);
    return 0;
}

int fl_arms_measure(const struct fl_arms_run *run, const struct fl_arm *const *arms,
                    size_t narms, uint64_t *samples, struct fl_arm_cell *res)
{
    if (measure_group(run, arms, narms, 0, samples, res) != 0)
        return 1;
    return measure_group(run, arms, narms, 1, samples, res);
}
