/*
 * test_limits.c: spawning at the edges of the caller's resources: a thread
 * with the smallest stack, fds at RLIMIT_NOFILE - 1, no fd left for a
 * pidfd or for /proc, and no /proc at all.
 */
#include "test.h"
#include "contain.h"

#include <endian.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* ---- small thread stacks -------------------------------------------------- */

struct stack_case {
    struct fl_cmd cmd;
    int result, status;
    struct fl_error error;
};

static void *spawn_on_small_stack(void *arg)
{
    struct stack_case *c = arg;
    struct fl_proc p;
    c->result = fl_spawn(&c->cmd, &p, NULL);
    if (c->result == 0) {
        c->result = fl_wait(&p, -1, &c->status);
        fl_close(&p);
    }
    return NULL;
}

/* Runs body(c) on a thread whose whole stack is size bytes; false if the
 * system will not make such a thread. */
static bool run_on_stack_of(size_t size, void *(*body)(void *), struct stack_case *c)
{
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    int r = pthread_attr_setstacksize(&attr, size);
    if (r == 0)
        r = pthread_create(&t, &attr, body, c);
    pthread_attr_destroy(&attr);
    if (r != 0)
        return false;
    pthread_join(t, NULL);
    return true;
}

/* Spawns c's command from a thread whose whole stack is size bytes. */
static bool spawn_from_stack_of(size_t size, struct stack_case *c)
{
    return run_on_stack_of(size, spawn_on_small_stack, c);
}

/* The smallest stack a thread may have here, and at least 16 KiB. */
static size_t smallest_stack(void)
{
    long min = sysconf(_SC_THREAD_STACK_MIN);
    return min > 16384 ? (size_t)min : 16384;
}

TEST(a_thread_with_the_smallest_stack_can_spawn)
{
    NEEDS_CLOSE_OTHERS();
    size_t sizes[] = { smallest_stack(), 24 * 1024 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        struct stack_case c = { .cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND } };
        if (!spawn_from_stack_of(sizes[i], &c))
            SKIP("pthread_create refuses a thread with so small a stack");
        ASSERT_OK(c.result);
        ASSERT_EXITED(c.status, 0);
    }
}

/* A failed exec is explained in the parent (the file's #! line, its ELF
 * loader): that too must fit on the smallest stack. */
TEST(a_thread_with_the_smallest_stack_gets_an_exec_failure_explained)
{
    NEEDS_CLOSE_OTHERS();
    size_t size = smallest_stack();
    char *script = t_write_file(t_tmpdir(), "script", "#!/nonexistent/interpreter\n", 0755);
    char *const programs[] = { "/nonexistent/program", script };
    for (size_t i = 0; i < 2; i++) {
        struct stack_case c = { .cmd = { .argv = ARGV(programs[i]), .backend = BACKEND } };
        if (!spawn_from_stack_of(size, &c))
            SKIP("pthread_create refuses a thread with so small a stack");
        ASSERT_EQ(c.result, ENOENT);
    }
}

static void *resolve_on_small_stack(void *arg)
{
    struct stack_case *c = arg;
    char buf[256];
    c->result = fl_resolve(&c->cmd, buf, sizeof buf, NULL);
    return NULL;
}

/* fl_resolve() reads each candidate's #! line or ELF loader, as a failed
 * spawn is explained: on the smallest stack as well. */
TEST(a_thread_with_the_smallest_stack_can_resolve)
{
#if defined(__SANITIZE_ADDRESS__)
    SKIP("ASan's redzones and interceptors take more stack than the smallest thread has");
#endif
    const char *env_set[] = { "PATH=/nonexistent:/usr/bin:/bin", NULL };
    struct stack_case c = { .cmd = { .argv = ARGV("true"), .env_set = env_set,
                                     .backend = BACKEND } };
    if (!run_on_stack_of(smallest_stack(), resolve_on_small_stack, &c))
        SKIP("pthread_create refuses a thread with so small a stack");
    ASSERT_OK(c.result);
}

static void *run_on_small_stack(void *arg)
{
    struct stack_case *c = arg;
    struct fl_result res;
    struct fl_io io = { .input = "in", .input_len = 2, .out[0].capture = true };
    c->result = fl_run(&c->cmd, &io, &res, NULL);
    if (c->result == 0) {
        c->status = res.status;
        if (!res.out[0].data || strcmp(res.out[0].data, "in") != 0)
            c->result = -1;
        fl_result_free(&res);
    }
    return NULL;
}

TEST(a_thread_with_the_smallest_stack_can_run_and_capture)
{
    NEEDS_CLOSE_OTHERS();
    struct stack_case c = { .cmd = { .argv = ARGV("/bin/cat"), .backend = BACKEND } };
    if (!run_on_stack_of(smallest_stack(), run_on_small_stack, &c))
        SKIP("pthread_create refuses a thread with so small a stack");
    ASSERT_OK(c.result);
    ASSERT_EXITED(c.status, 0);
}

/* ---- fds at the fd limit ---------------------------------------------------- */

static struct rlimit saved_nofile;

/* ---- vm.max_map_count -------------------------------------------------- */

/* Fills this process's mappings to vm.max_map_count, then spawns. */
static void *spawn_with_the_maps_full(void *arg)
{
    struct stack_case *c = arg;
    c->result = -1;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "re");
    long max = 0;
    if (!f || fscanf(f, "%ld", &max) != 1 || max <= 0 || max > 1000000) {
        if (f)
            fclose(f);
        return NULL;
    }
    fclose(f);
    void **maps = calloc((size_t)max + 1, sizeof *maps);
    if (!maps)
        return NULL;
    long page = sysconf(_SC_PAGESIZE), n = 0;
    /* Each differs in protection from the one before, so none merge: the
     * first refused (count above the limit) leaves the count at max + 1. */
    while (n <= max) {
        void *m = mmap(NULL, (size_t)page, n % 2 ? PROT_NONE : PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            break;
        maps[n++] = m;
    }
    if (n > 0 && n <= max) {
        /* At the limit now: the stack's own mapping fits, its guard's
         * split of it does not. */
        munmap(maps[--n], (size_t)page);
        struct fl_proc p;
        c->result = fl_spawn(&c->cmd, &p, &c->error);
        if (c->result == 0) {
            fl_wait(&p, -1, &c->status);
            fl_close(&p);
        }
    }
    while (n > 0)
        munmap(maps[--n], (size_t)page);
    free(maps);
    return NULL;
}

/* The child's stack has a guard page below it, a mapping of its own: where
 * that cannot be made, the spawn fails rather than let a child that runs
 * past its stack write into the caller's memory. */
TEST(a_spawn_at_vm_max_map_count_fails_rather_than_run_without_a_stack_guard)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    SKIP("the sanitizer's own allocator needs mappings that the test uses up");
#endif
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend maps a stack for its child");
    struct stack_case c = { .cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND } };
    ASSERT(run_on_stack_of(1 << 20, spawn_with_the_maps_full, &c));
    if (c.result == -1)
        SKIP("vm.max_map_count cannot be read, or this process cannot reach it");
    ASSERT_ERR(c.result, ENOMEM);
    ASSERT_EQ(c.error.step, FL_STEP_CLONE);
    ASSERT_STR_CONTAINS(c.error.detail, "stack");
}

static int highest_open_fd(void)
{
    int high = -1;
    for (int fd = 0; fd < 4096; fd++)
        if (t_fd_open(fd))
            high = fd;
    return high;
}

static int fillers[4096], nfillers;

static void restore_nofile(void);

/* Fills every free fd below the highest open one (with FD_CLOEXEC copies
 * of /dev/null), then lowers the soft RLIMIT_NOFILE to leave exactly room
 * free fds above; returns the new limit. */
static int lower_nofile(int room)
{
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &saved_nofile));
    int high = highest_open_fd();
    for (int fd = 0; fd < high; fd++)
        if (!t_fd_open(fd)) {
            int f = open("/dev/null", O_RDONLY | O_CLOEXEC);
            ASSERT_EQ(f, fd);
            fillers[nfillers++] = f;
        }
    struct rlimit l = saved_nofile;
    l.rlim_cur = (rlim_t)(high + 1 + room);
    if (l.rlim_max != RLIM_INFINITY && l.rlim_cur > l.rlim_max) {
        restore_nofile();
        SKIP(t_fmt("fd %d is open and the hard fd limit is %llu: no room for %d more", high,
                   (unsigned long long)l.rlim_max, room));
    }
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &l));
    return (int)l.rlim_cur;
}

static void restore_nofile(void)
{
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &saved_nofile));
    while (nfillers > 0)
        close(fillers[--nfillers]);
}

TEST(a_cycle_of_maps_through_the_last_fd_below_the_limit_works)
{
    NEEDS_CLOSE_OTHERS();
    int limit = lower_nofile(12);
    int top = t_file_at(limit - 1, true);
    int low = t_file_at(limit - 12, true);
    struct fl_fd_map maps[] = { { low, top }, { top, low } };  /* a swap: staged */
    struct fl_cmd cmd = { .argv = PROBE("fds"), .fds = maps, .nfds = 2, .backend = BACKEND };
    char *out = t_probe(&cmd);
    restore_nofile();
    ASSERT_EQ(t_fd_entry(out, low).ino, t_ino(top));
    ASSERT_EQ(t_fd_entry(out, top).ino, t_ino(low));
    close(top);
    close(low);
}

TEST(stdout_can_be_the_last_fd_below_the_limit)
{
    NEEDS_CLOSE_OTHERS();
    int limit = lower_nofile(8);
    int fds[2];
    ASSERT_SYS(pipe2(fds, O_CLOEXEC));
    int top = limit - 1;
    ASSERT_EQ(dup3(fds[1], top, O_CLOEXEC), top);
    close(fds[1]);
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "at the limit"),
        .stdio = { [1] = { .kind = FL_FD, .fd = top } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    restore_nofile();
    close(top);
    ASSERT_STR_EQ(t_read_all(fds[0]), "at the limit\n");
    close(fds[0]);
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(a_spawn_with_no_fd_left_names_the_fd_it_could_not_make)
{
    NEEDS_CLOSE_OTHERS();
    lower_nofile(0);
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    restore_nofile();
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        /* The pidfd comes after the start: the handle does without. */
        ASSERT_OK(r);
        ASSERT_EQ(p.pidfd, -1);
        ASSERT_EXITED(t_wait(&p), 0);
        return;
    }
    ASSERT_ERR(r, EMFILE);
    ASSERT_EQ(e.step, FL_STEP_CLONE);
    ASSERT_STR_CONTAINS(e.detail, BACKEND == FL_BACKEND_FORK ? "error pipe" : "pidfd");
}

TEST(no_pidfd_spawns_with_only_the_fds_the_backend_needs)
{
    NEEDS_CLOSE_OTHERS();
    lower_nofile(BACKEND == FL_BACKEND_FORK ? 2 : 0);  /* fork: the error pipe */
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .flags = FL_NO_PIDFD, .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    restore_nofile();
    ASSERT_OK(r);
    ASSERT_EQ(p.pidfd, -1);
    ASSERT_EXITED(t_wait(&p), 0);
}

/* The fork backend's pidfd, made with the process (CLONE_PIDFD), needs a
 * third fd beside the error pipe's two: where the limit leaves none then,
 * it is opened once the pipe is closed, as before CLONE_PIDFD. */
TEST(the_fork_backend_opens_its_pidfd_after_the_start_where_the_pipe_leaves_no_room)
{
    NEEDS_CLOSE_OTHERS();
    if (BACKEND != FL_BACKEND_FORK)
        SKIP("only the fork backend holds an error pipe while it makes its child");
    lower_nofile(2);
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    restore_nofile();
    ASSERT_OK(r);
    ASSERT_GE(p.pidfd, 0);
    ASSERT_EXITED(t_wait(&p), 0);
}

/* A start refused for its namespaces (EPERM without privilege) is refused
 * without CLONE_PIDFD too: it shows nothing about the flag, and later
 * spawns still make the pidfd with the process. A seccomp filter refuses
 * every clone() without CLONE_PIDFD (EXDEV), so that a spawn that went
 * without it would fail. */
TEST(a_refused_namespace_does_not_turn_off_the_pidfd_made_with_the_process)
{
    if (BACKEND != FL_BACKEND_FORK)
        SKIP("only the fork backend makes its child with clone(), whose flags a filter can read");
#if defined(__s390__)
    SKIP("clone()'s flags are its second argument there");
#endif
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
                               setresuid(65534, 65534, 65534) != 0))
            _exit(2);
        struct sock_filter only_with_pidfd[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) +
                                               (__BYTE_ORDER == __BIG_ENDIAN ? 4 : 0)),
            BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_PIDFD, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EXDEV),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { sizeof only_with_pidfd / sizeof *only_with_pidfd,
                                   only_with_pidfd };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
            _exit(78);
        struct fl_contain c = { .unshare = FL_NS_PID };
        struct fl_cmd boxed = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
        struct fl_proc p;
        struct fl_error e;
        if (fl_spawn(&boxed, &p, &e) == 0)
            _exit(77);
        struct fl_cmd plain = { .argv = ARGV("/bin/true"), .backend = BACKEND };
        if (fl_spawn(&plain, &p, &e) != 0)
            _exit(3);
        int st;
        _exit(p.pidfd >= 0 && fl_wait(&p, -1, &st) == 0 && WIFEXITED(st) ? 0 : 4);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    ASSERT(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77)
        SKIP("a new pid namespace is allowed here without privilege");
    if (WEXITSTATUS(st) == 78)
        SKIP("no seccomp filter can be installed here");
    ASSERT_EQ(WEXITSTATUS(st), 0);
}

/* ---- signals without /proc ------------------------------------------------- */

/* The probe's signal report for cmd, run while /proc is hidden under an
 * empty tmpfs in a mount namespace of this test process alone. */
static char *signals_without_proc(unsigned flags)
{
    if (geteuid() != 0)
        SKIP("needs root, to hide /proc in a mount namespace");
    if (unshare(CLONE_NEWNS) != 0)
        SKIP("unshare(CLONE_NEWNS) is not allowed here");
    ASSERT_SYS(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
    ASSERT_SYS(mount("none", "/proc", "tmpfs", 0, NULL));
    ASSERT(signal(SIGUSR1, SIG_IGN) != SIG_ERR);
    struct fl_cmd cmd = { .argv = PROBE("signals"), .flags = flags, .backend = BACKEND };
    char *out = t_probe(&cmd);
    signal(SIGUSR1, SIG_DFL);
    ASSERT_SYS(umount2("/proc", MNT_DETACH));
    return out;
}

TEST(keep_signals_keeps_an_ignored_signal_when_proc_is_missing)
{
    NEEDS_CLOSE_OTHERS();
    char *out = signals_without_proc(FL_KEEP_SIGNALS);
    ASSERT(t_sigmask_of(out, "SigIgn") & SIGBIT(SIGUSR1));
}

TEST(the_default_resets_an_ignored_signal_when_proc_is_missing)
{
    NEEDS_CLOSE_OTHERS();
    char *out = signals_without_proc(0);
    ASSERT(!(t_sigmask_of(out, "SigIgn") & SIGBIT(SIGUSR1)));
}

TEST(an_exec_failure_is_reported_with_the_error_pipe_below_a_mapped_fd)
{
    NEEDS_CLOSE_OTHERS();
    /* Three free fds low in the table, the limit just above the highest:
     * the fork backend's error pipe lands below the mapped child fd. */
    int spare[3];
    for (int i = 0; i < 3; i++)
        ASSERT_SYS(spare[i] = open("/dev/null", O_RDONLY | O_CLOEXEC));
    int limit = lower_nofile(0);
    for (int i = 0; i < 3; i++)
        close(spare[i]);
    struct fl_fd_map map[] = { { limit - 1, 2 } };
    struct fl_cmd cmd = { .argv = ARGV("/nonexistent/prog"), .fds = map, .nfds = 1,
                          .flags = FL_NO_PIDFD, .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    restore_nofile();
    if (r == 0)
        t_wait(&p);
    ASSERT_ERR(r, ENOENT);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
}

/* dup3() reads an fd that was open before the limit was lowered; glibc's
 * posix_spawn_file_actions_adddup2() refuses it, so that backend copies
 * it below the limit first. */
TEST(a_map_from_a_parent_fd_above_a_lowered_limit_works)
{
    NEEDS_CLOSE_OTHERS();
    int high = t_file_at(200, true);
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &saved_nofile));
    struct rlimit l = saved_nofile;
    l.rlim_cur = 64;
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &l));
    struct fl_fd_map map[] = { { 3, high } };
    struct fl_cmd cmd = { .argv = PROBE("fds"), .fds = map, .nfds = 1, .backend = BACKEND };
    char *out = t_probe(&cmd);
    restore_nofile();
    ASSERT_FDS_EXACTLY(out, 0, 1, 2, 3);
    ASSERT_EQ(t_fd_entry(out, 3).ino, t_ino(high));
    close(high);
}

TEST(fds_left_open_above_a_lowered_limit_are_closed_or_refused)
{
    NEEDS_CLOSE_OTHERS();
    int high = t_file_at(200, false);  /* no FD_CLOEXEC: only closing removes it */
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &saved_nofile));
    struct rlimit l = saved_nofile;
    l.rlim_cur = 64;
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &l));
    struct fl_fd_map map[] = { { 63, 2 } };  /* keeps fds up to the limit */
    struct fl_cmd cmd = { .argv = PROBE("fds"), .fds = map, .nfds = 1, .backend = BACKEND };
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        struct fl_error e = SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_PREPARE);
        restore_nofile();
        close(high);
        ASSERT_STR_CONTAINS(e.detail, "RLIMIT_NOFILE");
        return;
    }
    char *out = t_probe(&cmd);
    restore_nofile();
    close(high);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2, 63);
}

/* The child drops the fds it was not asked to keep before it opens one:
 * a fork() child as a clone child, whatever the parent holds. */
TEST(a_file_opened_under_the_childs_fd_limit_fits_whatever_the_parent_holds)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_rlimit rl[] = { { RLIMIT_NOFILE, 4, RLIM_INFINITY } };
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &saved_nofile));
    rl[0].hard = saved_nofile.rlim_max;
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .rlimits = rl, .nrlimits = 1,
                          .stdio = { [1] = { .kind = FL_NULL } }, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    int held[3];
    for (int i = 0; i < 3; i++)
        ASSERT_SYS(held[i] = open("/dev/null", O_RDONLY | O_CLOEXEC));
    struct fl_proc p;
    SPAWN(&cmd, &p);
    for (int i = 0; i < 3; i++)
        close(held[i]);
    ASSERT_EXITED(t_wait(&p), 0);
}

/* The limits are the program's, as when prlimit(1) runs it, not the
 * setup's: its file on stdout (opened at a spare fd first) and its cgroup
 * (cgroup.procs opened to write it) under an RLIMIT_NOFILE of 3. A static
 * program: a dynamic loader needs fd 3 too. */
TEST(a_low_fd_limit_is_the_program_s_not_the_setup_s)
{
    const char *probe = t_static_probe();
    if (!probe)
        SKIP("no statically linked probe (this toolchain cannot link -static)");
    char *out = t_fmt("%s/out", t_tmpdir());
    struct fl_rlimit rl[] = { { RLIMIT_NOFILE, 3, 3 } };
    struct fl_cmd cmd = { .argv = ARGV((char *)probe, "rlimits"), .rlimits = rl, .nrlimits = 1,
                          .stdio = { [1] = { .kind = FL_FILE, .path = out,
                                             .flags = O_WRONLY | O_CREAT | O_TRUNC, .mode = 0600 } },
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_get(t_read_file(out), "rlimit NOFILE"), "3 3");
    if (geteuid() != 0)
        return;
    char *cg = t_need_cgroup(NULL);
    cmd.cgroup = cg;
    cmd.flags |= FL_NO_WAIT_EXEC;  /* a launch writes cgroup.procs itself */
    SPAWN(&cmd, &p);
    int st = t_wait(&p);
    t_remove_cgroup(cg);
    ASSERT_EXITED(st, 0);
}

/* Under a caller's soft RLIMIT_NOFILE of 64, probes a command with these
 * limits, one of them RLIMIT_NOFILE 256, and an fd map at 200: the map
 * must find the raised limit there. *out: the probe's report, or NULL
 * where the posix_spawn backend refused the command, as it must. */
static void probe_map_above_the_caller_s_limit(struct fl_rlimit *rl, size_t n, char **out)
{
    *out = NULL;
    NEEDS_CLOSE_OTHERS();
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &saved_nofile));
    if (saved_nofile.rlim_max != RLIM_INFINITY && saved_nofile.rlim_max < 256)
        SKIP("the hard RLIMIT_NOFILE is below 256");
    for (size_t i = 0; i < n; i++)
        if (rl[i].resource == RLIMIT_NOFILE)
            rl[i].hard = saved_nofile.rlim_max;
    struct rlimit l = saved_nofile;
    l.rlim_cur = 64;
    ASSERT_SYS(setrlimit(RLIMIT_NOFILE, &l));
    struct fl_fd_map map[] = { { 200, 1 } };
    struct fl_cmd cmd = { .argv = PROBE("fds", "rlimits"), .rlimits = rl, .nrlimits = n,
                          .fds = map, .nfds = 1, .backend = BACKEND };
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        restore_nofile();
        UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    }
    *out = t_probe(&cmd);
    restore_nofile();
    ASSERT_FDS_EXACTLY(*out, 0, 1, 2, 200);
    ASSERT_STR_CONTAINS(t_get(*out, "rlimit NOFILE"), "256 ");
}

/* A limit raised for the program is there for its setup too, as under
 * prlimit(1): an fd map above the caller's RLIMIT_NOFILE, below the one
 * asked for. */
TEST(a_raised_fd_limit_takes_a_map_above_the_caller_s)
{
    struct fl_rlimit rl[] = { { RLIMIT_NOFILE, 256, 0 } };
    char *out;
    probe_map_above_the_caller_s_limit(rl, 1, &out);
}

/* Each entry comes in its own round, whatever its place among the others:
 * the one that raises RLIMIT_NOFILE, between two that lower or keep a
 * limit, is there before the map above the caller's limit; the one that
 * lowers it, after two that raise or keep one, comes after the open of
 * stdout, which it would leave no room for. */
TEST(limits_that_raise_and_limits_that_lower_each_come_in_their_round)
{
    struct rlimit core, fsize;
    ASSERT_SYS(getrlimit(RLIMIT_CORE, &core));
    ASSERT_SYS(getrlimit(RLIMIT_FSIZE, &fsize));
    struct fl_rlimit raise_between[] = { { RLIMIT_CORE, 0, 0 },
                                         { RLIMIT_NOFILE, 256, 0 },
                                         { RLIMIT_FSIZE, 1 << 20, fsize.rlim_max } };
    char *out;
    probe_map_above_the_caller_s_limit(raise_between, 3, &out);
    if (!out)
        return;
    ASSERT_STR_EQ(t_get(out, "rlimit CORE"), "0 0");
    ASSERT_STR_CONTAINS(t_get(out, "rlimit FSIZE"), "1048576 ");

    const char *probe = t_static_probe();
    if (!probe)
        SKIP("no statically linked probe (this toolchain cannot link -static)");
    char *file = t_fmt("%s/out", t_tmpdir());
    struct fl_rlimit lower_last[] = { { RLIMIT_CORE, core.rlim_max, core.rlim_max },
                                      { RLIMIT_FSIZE, fsize.rlim_cur, fsize.rlim_max },
                                      { RLIMIT_NOFILE, 3, 3 } };
    struct fl_cmd last = { .argv = ARGV((char *)probe, "rlimits"), .rlimits = lower_last,
                           .nrlimits = 3,
                           .stdio = { [1] = { .kind = FL_FILE, .path = file,
                                              .flags = O_WRONLY | O_CREAT | O_TRUNC,
                                              .mode = 0600 } },
                           .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&last, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_get(t_read_file(file), "rlimit NOFILE"), "3 3");
}

/* A soft limit above the hard one is the rlimit step's EINVAL, whatever
 * the maps (made before it: a map's fd beyond the soft one is no error). */
TEST(a_soft_limit_above_the_hard_one_fails_at_the_rlimit_step_before_any_map)
{
    struct fl_rlimit rl[] = { { RLIMIT_NOFILE, 10, 5 } };
    struct fl_fd_map map[] = { { 12, 1 } };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .rlimits = rl, .nrlimits = 1,
                          .fds = map, .nfds = 1, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_RLIMIT);
    ASSERT_EQ(e.index, 0);
}

/* An entry that a later one for its resource overrides is not set, so
 * its soft limit above its hard one is no error, and the child's fd limit
 * is still the last NOFILE entry's: a map above it is refused. */
TEST(an_overridden_bad_limit_leaves_the_map_check_to_the_last_entry)
{
    struct fl_rlimit rl[] = { { RLIMIT_CORE, 100, 50 }, { RLIMIT_CORE, 0, 0 },
                              { RLIMIT_NOFILE, 10, 10 } };
    struct fl_fd_map map[] = { { 50, 1 } };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .rlimits = rl, .nrlimits = 3,
                          .fds = map, .nfds = 1, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EBADF, FL_STEP_DUP);
    ASSERT_EQ(e.index, 50);
    ASSERT_STR_CONTAINS(e.detail, "RLIMIT_NOFILE (10)");
}

/* With no fd left to move a source out of a later action's way, the error
 * names the child fd being set, as FL_STEP_DUP's index does everywhere. */
TEST(a_source_that_cannot_be_moved_aside_names_its_child_fd)
{
    NEEDS_CLOSE_OTHERS();
    int a = t_file_at(highest_open_fd() + 1, true);
    int b = t_file_at(a + 1, true);
    struct fl_fd_map maps[] = { { a, b }, { b, a } };  /* a swap: staged */
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .fds = maps, .nfds = 2,
                          .stdio = { [1] = { .kind = FL_PIPE } }, .backend = BACKEND };
    lower_nofile(2);  /* room for the pipe, none for a staged copy */
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    restore_nofile();
    close(a);
    close(b);
    if (r == 0) {
        ASSERT_EXITED(t_wait(&p), 0);
        return;
    }
    ASSERT_ERR(r, EMFILE);
    if (e.step == FL_STEP_DUP)
        ASSERT(e.index == a || e.index == b || e.index == 1);
    else
        ASSERT(BACKEND != FL_BACKEND_POSIX_SPAWN);
}
