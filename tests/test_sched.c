/*
 * test_sched.c: fl_cmd.sched (CPU affinity, nice, I/O priority,
 * oom_score_adj), from the child's point of view, its errors with their
 * step and errno, and best effort (proc.not_applied).
 *
 * The child sets each on itself: the caller's own values never change.
 * The refusals need a user without privileges: as root, those cases
 * re-run themselves as uid 65534. The posix_spawn backend can set none of
 * these: ENOTSUP at step prepare.
 */
#include "test.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static int caller_oom_score_adj(void)
{
    char *s = t_read_file("/proc/self/oom_score_adj");
    return atoi(s);
}

static int caller_nice(void)
{
    errno = 0;
    int n = getpriority(PRIO_PROCESS, 0);
    ASSERT(!(n == -1 && errno));
    return n;
}

static long caller_ioprio(void)
{
    return syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
}

/* A command that reports what the child's placement is. */
#define SCHED_CMD(s) { .argv = PROBE("sched"), .sched = (s), .backend = BACKEND }

/* ---- each setting, as the child sees it -------------------------------------- */

TEST(cpus_pin_the_child_to_the_mask)
{
    cpu_set_t mine;
    ASSERT_SYS(sched_getaffinity(0, sizeof mine, &mine));
    if (!CPU_ISSET(0, &mine))
        SKIP("this process may not run on CPU 0");
    cpu_set_t only0;
    CPU_ZERO(&only0);
    CPU_SET(0, &only0);
    struct fl_sched s = { .set = FL_SCHED_CPUS, .cpus = &only0, .cpus_size = sizeof only0 };
    struct fl_cmd cmd = SCHED_CMD(&s);
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "cpus"), "0");
    cpu_set_t after;
    ASSERT_SYS(sched_getaffinity(0, sizeof after, &after));
    ASSERT(CPU_EQUAL(&after, &mine));
}

TEST(a_mask_larger_than_the_kernel_s_works)
{
    cpu_set_t mine;
    ASSERT_SYS(sched_getaffinity(0, sizeof mine, &mine));
    int cpu = 0;
    while (!CPU_ISSET(cpu, &mine))
        cpu++;
    size_t size = CPU_ALLOC_SIZE(8192);
    cpu_set_t *big = t_keep(CPU_ALLOC(8192));
    CPU_ZERO_S(size, big);
    CPU_SET_S((size_t)cpu, size, big);
    struct fl_sched s = { .set = FL_SCHED_CPUS, .cpus = big, .cpus_size = size };
    struct fl_cmd cmd = SCHED_CMD(&s);
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "cpus"), t_fmt("%d", cpu));
}

TEST(nice_sets_the_child_s_nice_value)
{
    struct fl_sched s = { .set = FL_SCHED_NICE, .nice = 7 };
    struct fl_cmd cmd = SCHED_CMD(&s);
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (caller_nice() > 7)
        SKIP("this process's nice value is above 7 already");
    int before = caller_nice();
    ASSERT_EQ(t_get_num(t_probe(&cmd), "nice"), 7);
    ASSERT_EQ(caller_nice(), before);
}

TEST(ioprio_sets_the_child_s_class_and_level)
{
    struct fl_sched s = { .set = FL_SCHED_IOPRIO, .ioprio_class = FL_IOPRIO_BEST_EFFORT,
                          .ioprio_level = 5 };
    struct fl_cmd cmd = SCHED_CMD(&s);
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    long before = caller_ioprio();
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "ioprio_class"), FL_IOPRIO_BEST_EFFORT);
    ASSERT_EQ(t_get_num(out, "ioprio_level"), 5);
    s.ioprio_class = FL_IOPRIO_IDLE;
    s.ioprio_level = 0;
    out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "ioprio_class"), FL_IOPRIO_IDLE);
    ASSERT_EQ(caller_ioprio(), before);
}

TEST(oom_score_adj_sets_the_child_s_and_leaves_the_caller_s)
{
    struct fl_sched s = { .set = FL_SCHED_OOM_SCORE_ADJ, .oom_score_adj = 321 };
    struct fl_cmd cmd = SCHED_CMD(&s);
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    int before = caller_oom_score_adj();
    ASSERT_EQ(t_get_num(t_probe(&cmd), "oom_score_adj"), 321);
    ASSERT_EQ(caller_oom_score_adj(), before);
}

/* The kernel gives a process that shares the caller's memory, without
 * vfork, the oom_score_adj that either of them writes: a launch
 * (FL_NO_WAIT_EXEC) must not hand the caller its child's value. */
TEST(oom_score_adj_of_a_launch_leaves_the_caller_s)
{
    struct fl_sched s = { .set = FL_SCHED_OOM_SCORE_ADJ, .oom_score_adj = 432 };
    struct fl_cmd cmd = { .argv = PROBE("sched"), .sched = &s, .flags = FL_NO_WAIT_EXEC,
                          .stdio = { [1] = { .kind = FL_PIPE } }, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    int before = caller_oom_score_adj();
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_error e;
    ASSERT_OK(fl_launch_finish(&p, &e));
    char *out = t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_EQ(t_get_num(out, "oom_score_adj"), 432);
    ASSERT_EQ(caller_oom_score_adj(), before);
}

/* A launch marks the caller's address space as shared between processes
 * for good; a later spawn's vfork child still keeps its score to itself,
 * and FL_NO_FORK is no obstacle. */
TEST(oom_score_adj_after_a_launch_stays_the_child_s)
{
    struct fl_cmd plain = { .argv = ARGV("/bin/true"), .flags = FL_NO_WAIT_EXEC,
                            .backend = BACKEND };
    struct fl_sched s = { .set = FL_SCHED_OOM_SCORE_ADJ, .oom_score_adj = 345 };
    struct fl_cmd cmd = { .argv = PROBE("sched"), .sched = &s, .flags = FL_NO_FORK,
                          .stdio = { [1] = { .kind = FL_PIPE } }, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (BACKEND == FL_BACKEND_FORK)
        SKIP("FL_NO_FORK refuses the fork backend; the case is the clone backend's");
    int before = caller_oom_score_adj();
    struct fl_proc p;
    SPAWN(&plain, &p);
    struct fl_error e;
    ASSERT_OK(fl_launch_finish(&p, &e));
    ASSERT_EXITED(t_wait(&p), 0);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "oom_score_adj"), 345);
    ASSERT_EQ(caller_oom_score_adj(), before);
}

TEST(settings_left_out_of_set_are_inherited)
{
    struct fl_sched s = { .set = FL_SCHED_NICE, .nice = 3, .oom_score_adj = 999,
                          .ioprio_class = FL_IOPRIO_IDLE };
    struct fl_cmd cmd = SCHED_CMD(&s);
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (caller_nice() > 3)
        SKIP("this process's nice value is above 3 already");
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "oom_score_adj"), caller_oom_score_adj());
    ASSERT_NE(t_get_num(out, "ioprio_class"), FL_IOPRIO_IDLE);
    ASSERT_EQ(t_get_num(out, "nice"), 3);
}

TEST(all_four_apply_together)
{
    cpu_set_t mine;
    ASSERT_SYS(sched_getaffinity(0, sizeof mine, &mine));
    int cpu = CPU_COUNT(&mine) - 1, seen = -1;
    for (int c = 0; c < CPU_SETSIZE && seen < cpu; c++)
        if (CPU_ISSET(c, &mine) && ++seen == cpu)
            cpu = c;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    struct fl_sched s = { .set = FL_SCHED_CPUS | FL_SCHED_NICE | FL_SCHED_IOPRIO |
                                 FL_SCHED_OOM_SCORE_ADJ,
                          .cpus = &one, .cpus_size = sizeof one, .nice = 11,
                          .ioprio_class = FL_IOPRIO_BEST_EFFORT, .ioprio_level = 2,
                          .oom_score_adj = 500 };
    struct fl_cmd cmd = SCHED_CMD(&s);
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    cmd.stdio[1].kind = FL_PIPE;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.not_applied, 0);
    char *out = t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_get(out, "cpus"), t_fmt("%d", cpu));
    ASSERT_EQ(t_get_num(out, "nice"), 11);
    ASSERT_EQ(t_get_num(out, "ioprio_class"), FL_IOPRIO_BEST_EFFORT);
    ASSERT_EQ(t_get_num(out, "ioprio_level"), 2);
    ASSERT_EQ(t_get_num(out, "oom_score_adj"), 500);
}

/* ---- refusals in the child ----------------------------------------------------- */

static cpu_set_t *only_cpu_1023(size_t *size)
{
    *size = CPU_ALLOC_SIZE(1024);
    cpu_set_t *set = t_keep(CPU_ALLOC(1024));
    CPU_ZERO_S(*size, set);
    CPU_SET_S(1023, *size, set);
    return set;
}

TEST(a_mask_without_a_cpu_the_child_may_use_is_einval_at_step_affinity)
{
    size_t size;
    cpu_set_t *set = only_cpu_1023(&size);
    if (sysconf(_SC_NPROCESSORS_CONF) > 1023)
        SKIP("this machine has a CPU 1023");
    struct fl_sched s = { .set = FL_SCHED_CPUS, .cpus = set, .cpus_size = size };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_AFFINITY);
    ASSERT_EQ(e.index, -1);
    char buf[256];
    ASSERT_STR_CONTAINS(fl_error_format(&e, buf, sizeof buf), "affinity: Invalid argument");
    ASSERT_STR_CONTAINS(e.detail, "no CPU of the mask is online");
}

TEST(a_mask_size_beyond_64_kib_is_einval_before_any_child)
{
    /* The size is the caller's word for the mask's length: one no kernel
     * reads (SIZE_MAX used to overflow the plan's copy) is refused. */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    struct fl_sched s = { .set = FL_SCHED_CPUS, .cpus = &one, .cpus_size = sizeof one };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    s.cpus_size = SIZE_MAX;
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_AFFINITY);
    ASSERT_STR_CONTAINS(e.detail, "64 KiB");
    s.cpus_size = 64 * 1024 + 1;
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_AFFINITY);
}

TEST(a_lower_nice_value_is_eacces_at_step_nice_without_privilege)
{
    if (t_rerun_as_nobody())
        return;
    struct fl_sched s = { .set = FL_SCHED_NICE, .nice = caller_nice() - 5 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (geteuid() == 0)
        SKIP("needs a user without CAP_SYS_NICE (runs as uid 65534 when started as root)");
    /* RLIMIT_NICE lets an unprivileged process go down to 20 - its value. */
    struct rlimit rl;
    ASSERT_SYS(getrlimit(RLIMIT_NICE, &rl));
    bool refused = rl.rlim_cur != RLIM_INFINITY && 20 - (long long)rl.rlim_cur > s.nice;
    if (s.nice < -20 || !refused)
        SKIP("RLIMIT_NICE lets this user lower its nice value");
    SPAWN_FAILS(&cmd, EACCES, FL_STEP_NICE);
}

/* Whether this process may lower its oom_score_adj to v: it tries, and
 * puts its value back (raising is always allowed). */
static bool may_lower_oom_to(int v)
{
    int before = caller_oom_score_adj();
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    ASSERT_SYS(fd);
    char *s = t_fmt("%d", v), *b = t_fmt("%d", before);
    bool ok = write(fd, s, strlen(s)) >= 0;
    if (ok)
        ASSERT_EQ(write(fd, b, strlen(b)), (ssize_t)strlen(b));
    close(fd);
    return ok;
}

TEST(a_lower_oom_score_adj_is_eacces_at_step_oom_score_adj_without_privilege)
{
    if (t_rerun_as_nobody())
        return;
    int v = caller_oom_score_adj() - 100;
    struct fl_sched s = { .set = FL_SCHED_OOM_SCORE_ADJ, .oom_score_adj = v < -1000 ? -1000 : v };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (geteuid() == 0)
        SKIP("needs a user without CAP_SYS_RESOURCE (runs as uid 65534 when started as root)");
    if (may_lower_oom_to(s.oom_score_adj))
        SKIP("this process may lower its oom_score_adj (its oom_score_adj_min allows it)");
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_OOM_SCORE_ADJ);
    ASSERT_STR_EQ(e.path, "/proc/self/oom_score_adj");
}

TEST(the_realtime_io_class_is_eperm_at_step_ioprio_without_privilege)
{
    if (t_rerun_as_nobody())
        return;
    struct fl_sched s = { .set = FL_SCHED_IOPRIO, .ioprio_class = FL_IOPRIO_REALTIME,
                          .ioprio_level = 4 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (geteuid() == 0)
        SKIP("needs a user without CAP_SYS_ADMIN and CAP_SYS_NICE (runs as uid 65534 when "
             "started as root)");
    SPAWN_FAILS(&cmd, EPERM, FL_STEP_IOPRIO);
}

TEST(root_may_lower_nice_and_use_the_realtime_class)
{
    if (geteuid() != 0)
        SKIP("needs root");
    struct fl_sched s = { .set = FL_SCHED_NICE | FL_SCHED_IOPRIO, .nice = -5,
                          .ioprio_class = FL_IOPRIO_REALTIME, .ioprio_level = 1 };
    struct fl_cmd cmd = SCHED_CMD(&s);
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "nice"), -5);
    ASSERT_EQ(t_get_num(out, "ioprio_class"), FL_IOPRIO_REALTIME);
    ASSERT_EQ(t_get_num(out, "ioprio_level"), 1);
}

/* CAP_SYS_RESOURCE decides, which even root may lack (a container's
 * bounding set): the child may lower its value exactly where the caller
 * could lower its own. */
TEST(a_lower_oom_score_adj_applies_exactly_where_the_caller_could_lower_its_own)
{
    int v = caller_oom_score_adj() - 200;
    struct fl_sched s = { .set = FL_SCHED_OOM_SCORE_ADJ, .oom_score_adj = v < -1000 ? -1000 : v };
    struct fl_cmd cmd = SCHED_CMD(&s);
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (may_lower_oom_to(s.oom_score_adj)) {
        ASSERT_EQ(t_get_num(t_probe(&cmd), "oom_score_adj"), s.oom_score_adj);
    } else {
        printf("this process may not lower its oom_score_adj (no CAP_SYS_RESOURCE)\n");
        SPAWN_FAILS(&cmd, EACCES, FL_STEP_OOM_SCORE_ADJ);
    }
}

/* ---- best effort ------------------------------------------------------------- */

TEST(best_effort_settings_that_fail_are_named_and_the_others_apply)
{
    if (t_rerun_as_nobody())
        return;
    struct fl_sched s = { .set = FL_SCHED_NICE | FL_SCHED_IOPRIO | FL_SCHED_OOM_SCORE_ADJ,
                          .best_effort = FL_SCHED_NICE | FL_SCHED_IOPRIO | FL_SCHED_OOM_SCORE_ADJ,
                          .nice = -5, .ioprio_class = FL_IOPRIO_REALTIME, .ioprio_level = 0,
                          .oom_score_adj = -500 };
    struct fl_cmd cmd = SCHED_CMD(&s);
    cmd.stdio[1].kind = FL_PIPE;
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (geteuid() == 0)
        SKIP("needs a user without privileges (runs as uid 65534 when started as root)");
    struct rlimit rl;
    ASSERT_SYS(getrlimit(RLIMIT_NICE, &rl));
    if (caller_nice() != 0 || rl.rlim_cur > 0 || caller_oom_score_adj() > 0 ||
        may_lower_oom_to(-500))
        SKIP("this user's nice, RLIMIT_NICE or oom_score_adj differ from the defaults");
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.not_applied, FL_SCHED_NICE | FL_SCHED_IOPRIO | FL_SCHED_OOM_SCORE_ADJ);
    char *out = t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_EQ(t_get_num(out, "nice"), 0);
    ASSERT_NE(t_get_num(out, "ioprio_class"), FL_IOPRIO_REALTIME);
    ASSERT_EQ(t_get_num(out, "oom_score_adj"), caller_oom_score_adj());

    /* Mixed: nice 7 and the idle class apply, the lower oom_score_adj does not. */
    s.nice = 7;
    s.ioprio_class = FL_IOPRIO_IDLE;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.not_applied, FL_SCHED_OOM_SCORE_ADJ);
    out = t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_EQ(t_get_num(out, "nice"), 7);
    ASSERT_EQ(t_get_num(out, "ioprio_class"), FL_IOPRIO_IDLE);
}

TEST(a_best_effort_mask_without_a_usable_cpu_is_left_out_and_named)
{
    size_t size;
    cpu_set_t *set = only_cpu_1023(&size);
    if (sysconf(_SC_NPROCESSORS_CONF) > 1023)
        SKIP("this machine has a CPU 1023");
    struct fl_sched s = { .set = FL_SCHED_CPUS | FL_SCHED_NICE, .best_effort = FL_SCHED_CPUS,
                          .cpus = set, .cpus_size = size, .nice = 6 };
    struct fl_cmd cmd = SCHED_CMD(&s);
    cmd.stdio[1].kind = FL_PIPE;
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (caller_nice() > 6)
        SKIP("this process's nice value is above 6 already");
    cpu_set_t mine;
    ASSERT_SYS(sched_getaffinity(0, sizeof mine, &mine));
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.not_applied, FL_SCHED_CPUS);
    char *out = t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_EQ(t_get_num(out, "nice"), 6);
    /* The caller's CPUs, inherited. */
    char *cpus = t_get(out, "cpus");
    ASSERT(cpus);
    ASSERT_EQ(CPU_COUNT(&mine) == 1, strchr(cpus, '-') == NULL && strchr(cpus, ',') == NULL);
}

TEST(a_best_effort_failure_is_known_once_a_launch_is_finished)
{
    size_t size;
    cpu_set_t *set = only_cpu_1023(&size);
    if (sysconf(_SC_NPROCESSORS_CONF) > 1023)
        SKIP("this machine has a CPU 1023");
    struct fl_sched s = { .set = FL_SCHED_CPUS, .best_effort = FL_SCHED_CPUS, .cpus = set,
                          .cpus_size = size };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .flags = FL_NO_WAIT_EXEC,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    struct fl_error e;
    ASSERT_OK(fl_launch_finish(&p, &e));
    ASSERT_EQ(p.not_applied, FL_SCHED_CPUS);
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(a_best_effort_setting_that_applies_is_not_named)
{
    struct fl_sched s = { .set = FL_SCHED_NICE, .best_effort = FL_SCHED_NICE, .nice = 19 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.not_applied, 0);
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(a_setting_that_is_not_best_effort_still_fails_the_spawn)
{
    size_t size;
    cpu_set_t *set = only_cpu_1023(&size);
    if (sysconf(_SC_NPROCESSORS_CONF) > 1023)
        SKIP("this machine has a CPU 1023");
    /* Nice is best effort (and fine); the mask is not. */
    struct fl_sched s = { .set = FL_SCHED_CPUS | FL_SCHED_NICE, .best_effort = FL_SCHED_NICE,
                          .cpus = set, .cpus_size = size, .nice = 19 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_AFFINITY);
}

/* ---- malformed settings, refused before any child ------------------------------ */

TEST(values_out_of_range_are_einval_at_their_step)
{
    struct fl_sched s = { .set = FL_SCHED_NICE, .nice = 20 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .backend = BACKEND };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_NICE);
    s.nice = -21;
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_NICE);
    s = (struct fl_sched){ .set = FL_SCHED_IOPRIO, .ioprio_class = 4 };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_IOPRIO);
    s.ioprio_class = 0;
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_IOPRIO);
    s = (struct fl_sched){ .set = FL_SCHED_IOPRIO, .ioprio_class = FL_IOPRIO_BEST_EFFORT,
                           .ioprio_level = 8 };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_IOPRIO);
    s.ioprio_level = -1;
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_IOPRIO);
    s = (struct fl_sched){ .set = FL_SCHED_OOM_SCORE_ADJ, .oom_score_adj = 1001 };
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_OOM_SCORE_ADJ);
    ASSERT_STR_EQ(e.path, "/proc/self/oom_score_adj");
    s.oom_score_adj = -1001;
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_OOM_SCORE_ADJ);
}

TEST(cpus_without_a_mask_is_einval_at_step_affinity)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    struct fl_sched s = { .set = FL_SCHED_CPUS, .cpus = NULL, .cpus_size = sizeof set };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .backend = BACKEND };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_AFFINITY);
    s.cpus = &set;
    s.cpus_size = 0;
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_AFFINITY);
}

TEST(unknown_bits_and_best_effort_outside_set_are_einval_at_prepare)
{
    struct fl_sched s = { .set = 1u << 4 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s, .backend = BACKEND };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    s = (struct fl_sched){ .set = FL_SCHED_NICE, .best_effort = FL_SCHED_NICE | FL_SCHED_CPUS,
                           .nice = 1 };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    s = (struct fl_sched){ .set = FL_SCHED_NICE, .nice = 1, .reserved_ = { &s } };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(an_empty_set_changes_nothing_and_every_backend_takes_it)
{
    struct fl_sched s = { .set = 0, .nice = 19 };
    struct fl_cmd cmd = SCHED_CMD(&s);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "nice"), caller_nice());
}

TEST(the_posix_spawn_backend_refuses_placement_with_enotsup)
{
    struct fl_sched s = { .set = FL_SCHED_NICE, .best_effort = FL_SCHED_NICE, .nice = 1 };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .sched = &s,
                          .backend = FL_BACKEND_POSIX_SPAWN };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "posix_spawn cannot set placement");
}
