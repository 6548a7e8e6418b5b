/*
 * test_process.c: where the child is placed and what it is allowed:
 * session, process group, rlimits, umask, credentials, pdeathsig, cgroup,
 * cwd. The posix_spawn backend says ENOTSUP for what it cannot express.
 */
#include "test.h"

#include <sys/prctl.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

/* ---- cwd ----------------------------------------------------------------- */

TEST(cwd_is_applied)
{
    char *d = t_tmpdir();
    struct fl_cmd cmd = { .argv = PROBE("cwd"), .cwd = d, .backend = BACKEND };
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "cwd"), d);
    /* The parent's cwd is unchanged. */
    char buf[4096];
    ASSERT(getcwd(buf, sizeof buf));
    ASSERT(strcmp(buf, d) != 0);
}

TEST(cwd_is_inherited_by_default)
{
    char buf[4096];
    ASSERT(getcwd(buf, sizeof buf));
    struct fl_cmd cmd = { .argv = PROBE("cwd"), .backend = BACKEND };
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "cwd"), buf);
}

/* ---- session and process group ------------------------------------------- */

TEST(setsid_makes_the_child_a_session_leader)
{
    struct fl_cmd cmd = {
        .argv = PROBE("proc"),
        .flags = FL_SETSID,
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    long long pid = t_get_num(out, "pid");
    ASSERT_EQ(t_get_num(out, "sid"), pid);
    ASSERT_EQ(t_get_num(out, "pgid"), pid);
    ASSERT_EQ(t_get_num(out, "ppid"), getpid());
}

TEST(default_keeps_the_parents_group_and_session)
{
    struct fl_cmd cmd = { .argv = PROBE("proc"), .backend = BACKEND };
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "pgid"), getpgid(0));
    ASSERT_EQ(t_get_num(out, "sid"), getsid(0));
}

TEST(new_pgroup_holds_when_spawn_returns)
{
    struct fl_cmd cmd = {
        .argv = PROBE("sleep", "60"),
        .flags = FL_NEW_PGROUP,
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(getpgid(p.pid), p.pid);
    ASSERT_EQ(getsid(p.pid), getsid(0));
    /* The group can be signalled at once. */
    ASSERT_SYS(kill(-p.pid, SIGTERM));
    ASSERT_SIGNALED(t_wait(&p), SIGTERM);
}

TEST(join_pgroup_joins_an_existing_group)
{
    struct fl_cmd leader = {
        .argv = PROBE("sleep", "60"),
        .flags = FL_NEW_PGROUP,
        .backend = BACKEND,
    };
    struct fl_proc l;
    SPAWN(&leader, &l);
    struct fl_cmd cmd = {
        .argv = PROBE("proc"),
        .flags = FL_JOIN_PGROUP,
        .pgid = l.pid,
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "pgid"), l.pid);
    t_kill_wait(&l);
}

TEST(join_pgroup_of_a_missing_group_fails_at_setpgid)
{
    /* A pid that is no process at all, so no group of our session. */
    pid_t none = 4194000;
    while (kill(none, 0) == 0 || errno != ESRCH)
        none--;
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .flags = FL_JOIN_PGROUP,
        .pgid = none,
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EPERM, FL_STEP_SETPGID);
}

/* ---- rlimits ------------------------------------------------------------- */

TEST(rlimit_nofile_soft_and_hard)
{
    struct fl_cmd cmd = {
        .argv = PROBE("rlimits"),
        .rlimits = (struct fl_rlimit[]){ { RLIMIT_NOFILE, 100, 200 } },
        .nrlimits = 1,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "rlimit NOFILE"), "100 200");
    /* The parent's limit is unchanged. */
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    ASSERT_NE(rl.rlim_max, 200);
}

/* Of two entries for one resource the last is set, whichever of them
 * lowers the limit and whichever raises it. */
TEST(rlimit_the_last_entry_for_a_resource_wins)
{
    struct rlimit now;
    ASSERT_SYS(getrlimit(RLIMIT_CORE, &now));
    if (now.rlim_max != RLIM_INFINITY && now.rlim_max < 8192)
        SKIP("the hard RLIMIT_CORE is below 8192");
    struct fl_rlimit rl[2] = { { RLIMIT_CORE, 0, 0 }, { RLIMIT_CORE, 8192, now.rlim_max } };
    struct fl_cmd cmd = { .argv = PROBE("rlimits"), .rlimits = rl, .nrlimits = 2,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    ASSERT_STR_CONTAINS(t_get(t_probe(&cmd), "rlimit CORE"), "8192 ");
    rl[0] = (struct fl_rlimit){ RLIMIT_CORE, 8192, now.rlim_max };
    rl[1] = (struct fl_rlimit){ RLIMIT_CORE, 0, 0 };
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "rlimit CORE"), "0 0");
}

TEST(rlimits_apply_in_order_and_allow_infinity)
{
    /* NPROC within the current hard limit, so that it works unprivileged. */
    struct rlimit np;
    getrlimit(RLIMIT_NPROC, &np);
    rlim_t hard = np.rlim_max == RLIM_INFINITY ? 6000 : np.rlim_max;
    rlim_t soft = hard > 5000 ? 5000 : hard;
    struct fl_cmd cmd = {
        .argv = PROBE("rlimits"),
        .rlimits = (struct fl_rlimit[]){
            { RLIMIT_CORE, 1024, 4096 },
            { RLIMIT_CORE, 512, 4096 },
            { RLIMIT_FSIZE, RLIM_INFINITY, RLIM_INFINITY },
            { RLIMIT_NPROC, soft, hard },
        },
        .nrlimits = 4,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *out = t_probe(&cmd);
    ASSERT_STR_EQ(t_get(out, "rlimit CORE"), "512 4096");
    ASSERT_STR_EQ(t_get(out, "rlimit FSIZE"), "inf inf");
    ASSERT_STR_EQ(t_get(out, "rlimit NPROC"),
                  t_fmt("%llu %llu", (unsigned long long)soft,
                        (unsigned long long)hard));
}

TEST(rlimits_are_inherited_by_default)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    struct fl_cmd cmd = { .argv = PROBE("rlimits"), .backend = BACKEND };
    char want[64];
    snprintf(want, sizeof want, "%llu %llu", (unsigned long long)rl.rlim_cur,
             (unsigned long long)rl.rlim_max);
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "rlimit NOFILE"), want);
}

/* ---- umask --------------------------------------------------------------- */

TEST(umask_is_set)
{
    struct fl_cmd cmd = {
        .argv = PROBE("umask"),
        .flags = FL_SET_UMASK,
        .umask = 027,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    mode_t old = umask(022);
    char *out = t_probe(&cmd);
    mode_t parent = umask(old);
    ASSERT_STR_EQ(t_get(out, "umask"), "0027");
    ASSERT_EQ(parent, 022); /* the parent's umask is its own */
    /* Zero is a value, with the flag. */
    cmd.umask = 0;
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "umask"), "0000");
}

TEST(umask_is_inherited_without_the_flag)
{
    mode_t old = umask(077);
    struct fl_cmd cmd = {
        .argv = PROBE("umask"),
        .umask = 0, /* ignored without FL_SET_UMASK */
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    umask(old);
    ASSERT_STR_EQ(t_get(out, "umask"), "0077");
}

/* ---- credentials (pitfall 43) -------------------------------------------- */

static atomic_bool busy_stop;

/* Runs, and pauses now and then so as not to starve a 2-core machine. */
static void *busy(void *arg)
{
    (void)arg;
    volatile unsigned long n = 0;
    while (!atomic_load(&busy_stop))
        t_pace((unsigned)++n);
    return NULL;
}

static void require_root(void)
{
    if (geteuid() != 0)
        SKIP("needs root");
}

static void assert_ids(const char *out, unsigned uid, unsigned gid,
                       const char *groups)
{
    ASSERT_EQ(t_get_num(out, "uid"), uid);
    ASSERT_EQ(t_get_num(out, "euid"), uid);
    ASSERT_EQ(t_get_num(out, "suid"), uid);
    ASSERT_EQ(t_get_num(out, "gid"), gid);
    ASSERT_EQ(t_get_num(out, "egid"), gid);
    ASSERT_EQ(t_get_num(out, "sgid"), gid);
    ASSERT_STR_EQ(t_get(out, "groups"), groups);
}

TEST(set_ids_from_a_process_with_busy_threads) /* stress */
{
    struct fl_cmd cmd = {
        .argv = PROBE("ids"),
        .flags = FL_SET_UID | FL_SET_GID | FL_SET_GROUPS,
        .uid = 65534,
        .gid = 65534,
        .groups = (gid_t[]){ 65534 },
        .ngroups = 1,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root();
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        ASSERT_OK(pthread_create(&t[i], NULL, busy, NULL));
    for (int i = 0, n = t_scaled(100); i < n; i++)
        assert_ids(t_probe(&cmd), 65534, 65534, "65534");
    atomic_store(&busy_stop, true);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    /* The parent's ids are untouched (no setxid broadcast). */
    ASSERT_EQ(getuid(), 0);
    ASSERT_EQ(geteuid(), 0);
    ASSERT_EQ(getgid(), 0);
}

TEST(set_groups_to_none_and_several)
{
    struct fl_cmd cmd = {
        .argv = PROBE("ids"),
        .flags = FL_SET_GROUPS,
        .ngroups = 0,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root();
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "groups"), "");
    cmd.groups = (gid_t[]){ 10, 20, 30 };
    cmd.ngroups = 3;
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "groups"), "10 20 30");
}

TEST(set_groups_to_more_than_a_few_hundred)
{
    static gid_t many[1000];
    for (int i = 0; i < 1000; i++)
        many[i] = (gid_t)(1000 + i);
    struct fl_cmd cmd = {
        .argv = PROBE("ids"),
        .flags = FL_SET_GROUPS,
        .groups = many,
        .ngroups = 1000,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root();
    const char *got = t_get(t_probe(&cmd), "groups");
    int n = 0;
    for (const char *s = got; *s; s++)
        n += *s == ' ';
    ASSERT_EQ(n + 1, 1000);
    ASSERT(strncmp(got, "1000 1001 ", 10) == 0);
    ASSERT_STR_CONTAINS(got, " 1999");
}

TEST(set_uid_alone_keeps_the_gid)
{
    struct fl_cmd cmd = {
        .argv = PROBE("ids"),
        .flags = FL_SET_UID,
        .uid = 1234,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root();
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "uid"), 1234);
    ASSERT_EQ(t_get_num(out, "suid"), 1234);
    ASSERT_EQ(t_get_num(out, "gid"), getgid());
}

TEST(set_uid_to_root_as_another_user_fails_at_setuid)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .flags = FL_SET_UID,
        .uid = 0,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (t_rerun_as_nobody())
        return;
    SPAWN_FAILS(&cmd, EPERM, FL_STEP_SETUID);
    cmd.flags = FL_SET_GID;
    cmd.gid = 0;
    SPAWN_FAILS(&cmd, EPERM, FL_STEP_SETGID);
    cmd.flags = FL_SET_GROUPS;
    cmd.groups = (gid_t[]){ 0 };
    cmd.ngroups = 1;
    SPAWN_FAILS(&cmd, EPERM, FL_STEP_SETGROUPS);
}

TEST(uid_or_gid_minus_one_is_einval_not_left_unchanged)
{
    /* setresuid(-1, -1, -1) changes nothing: run as root, the child
     * would keep root where the caller asked for another user. */
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .flags = FL_SET_UID,
        .uid = (uid_t)-1,
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "uid");
    cmd.flags = FL_SET_GID;
    cmd.uid = 0;
    cmd.gid = (gid_t)-1;
    e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "gid");
}

TEST(a_group_of_minus_one_is_einval_naming_its_index)
{
    /* The kernel's EINVAL from setgroups() says not which entry. */
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .flags = FL_SET_GROUPS,
        .groups = (gid_t[]){ 0, 5, (gid_t)-1 },
        .ngroups = 3,
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_EQ(e.index, 2);
    ASSERT_STR_CONTAINS(e.detail, "(gid_t)-1");
}

TEST(too_many_groups_is_einval)
{
    static gid_t many[65537];
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .flags = FL_SET_GROUPS,
        .groups = many,
        .ngroups = 65537, /* NGROUPS_MAX is 65536 */
        .backend = BACKEND,
    };
    /* Checked before anything starts, so every backend says so. */
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

/* ---- pdeathsig (pitfall 28) ---------------------------------------------- */

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

static struct fl_proc spawn_from_exiting_thread(const struct fl_cmd *cmd)
{
    struct pdeath_arg *a = t_keep(calloc(1, sizeof *a));
    a->cmd = *cmd;
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, spawn_and_exit, a));
    pthread_join(t, NULL);
    ASSERT_OK(a->r);
    return a->proc;
}

TEST(pdeathsig_is_sent_when_the_spawning_thread_exits)
{
    struct fl_cmd cmd = {
        .argv = PROBE("sleep", "60"),
        .pdeathsig = SIGKILL,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_proc p = spawn_from_exiting_thread(&cmd);
    int st = 0;
    int r = fl_wait(&p, 30000, &st);
    if (r == ETIMEDOUT)
        t_kill_wait(&p);
    ASSERT_OK(r);
    fl_close(&p);
    ASSERT_SIGNALED(st, SIGKILL);
}

TEST(pdeathsig_is_sent_when_the_launching_thread_exits_during_the_setup)
{
    /* A launch's thread may end while the child still waits in its setup
     * (the open() of a FIFO), before its prctl(): getppid() names the
     * process, which lives on, so the child must see the thread gone. */
    char *fifo = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(fifo, 0600));
    struct fl_cmd cmd = {
        .argv = PROBE("sleep", "60"),
        .pdeathsig = SIGKILL,
        .flags = FL_NO_WAIT_EXEC,
        .stdio = { [0] = { .kind = FL_FILE, .path = fifo } },
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend returns before the child's setup is done");
    struct fl_proc p = spawn_from_exiting_thread(&cmd);
    /* The child goes on, if it still waits in its open(): O_RDWR, which
     * never waits for a reader, as the child, its pdeathsig set before
     * the open, may have been killed before it got there. */
    int w = open(fifo, O_RDWR | O_CLOEXEC);
    ASSERT_SYS(w);
    int st = 0;
    int r = fl_wait(&p, 30000, &st);
    close(w);
    if (r == ETIMEDOUT)
        t_kill_wait(&p);
    ASSERT_OK(r);
    fl_close(&p);
    ASSERT_SIGNALED(st, SIGKILL);
}

/* A helper process that spawns cmd and is to be killed in its fl_spawn();
 * this process becomes a subreaper first, so that the orphan comes to it,
 * to be reaped here. Returns the helper's pid. */
static pid_t spawn_from_a_helper_to_be_killed(const struct fl_cmd *cmd)
{
    ASSERT_SYS(prctl(PR_SET_CHILD_SUBREAPER, 1));
    pid_t helper = fork();
    ASSERT_SYS(helper);
    if (helper == 0) {
        struct fl_proc p;
        fl_spawn(cmd, &p, NULL);
        _exit(1);
    }
    return helper;
}

/* The parent process dies while the child is still in its setup: the
 * kernel sends the signal (set before the setup's opens), or, for a death
 * before the prctl(PR_SET_PDEATHSIG) that it would never signal, the
 * child, seeing another parent (getppid()), sends it to itself before
 * exec. A helper process spawns the child, which waits in its open() of a
 * FIFO for stdin until we open the other end, then in its open() of
 * another for stdout; in between, the helper is killed in its fl_spawn(). */
TEST(pdeathsig_is_sent_when_the_parent_died_in_the_child_s_setup)
{
    char *dir = t_tmpdir();
    char *in = t_fmt("%s/in", dir), *out = t_fmt("%s/out", dir);
    ASSERT_SYS(mkfifo(in, 0600));
    ASSERT_SYS(mkfifo(out, 0600));
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .stdio = { [0] = { .kind = FL_FILE, .path = in }, [1] = { .kind = FL_FILE, .path = out } },
        .pdeathsig = SIGUSR1,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    pid_t helper = spawn_from_a_helper_to_be_killed(&cmd);
    int w = open(in, O_WRONLY | O_CLOEXEC);   /* returns once the child opened it */
    ASSERT_SYS(w);
    ASSERT_SYS(kill(helper, SIGKILL));
    int st;
    ASSERT_EQ(waitpid(helper, &st, 0), helper);
    ASSERT_SIGNALED(st, SIGKILL);
    /* The child, ours now, ends in its open() of the other, or goes on
     * to its check. */
    int r = open(out, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_SYS(r);
    pid_t child = waitpid(-1, &st, 0);
    ASSERT_GT(child, 0);
    close(w);
    close(r);
    ASSERT_SYS(prctl(PR_SET_CHILD_SUBREAPER, 0));
    ASSERT_SIGNALED(st, SIGUSR1);
}

/* The child is set to die with its parent before any step that may wait:
 * the parent dies while the child waits in the open() of a FIFO that no
 * one will ever open, and the child ends by its pdeathsig there. */
TEST(pdeathsig_ends_a_setup_that_waits_when_the_parent_dies)
{
    char *fifo = t_fmt("%s/never", t_tmpdir());
    ASSERT_SYS(mkfifo(fifo, 0600));
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "0"),
        .stdio = { [0] = { .kind = FL_FILE, .path = fifo } },
        .pdeathsig = SIGKILL,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    pid_t helper = spawn_from_a_helper_to_be_killed(&cmd);
    /* The child, once it waits in its open(). */
    pid_t child = 0;
    char *children = t_fmt("/proc/%d/task/%d/children", (int)helper, (int)helper);
    for (int i = 0; i < 10000; i++) {
        char *list = t_read_file(children);
        child = list ? (pid_t)atol(list) : 0;
        char *wchan = child > 0 ? t_read_file(t_fmt("/proc/%d/wchan", (int)child)) : NULL;
        if (wchan && strstr(wchan, "wait_for_partner"))   /* fs/pipe.c, in a FIFO's open() */
            break;
        child = 0;
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    }
    if (!child) {
        kill(helper, SIGKILL);
        waitpid(helper, NULL, 0);
        int w = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        while (waitpid(-1, NULL, 0) > 0)
            ;
        if (w >= 0)
            close(w);
        prctl(PR_SET_CHILD_SUBREAPER, 0);
        SKIP("cannot see the child wait in its open() (/proc/PID/task/PID/children, wchan)");
    }
    ASSERT_SYS(kill(helper, SIGKILL));
    int st;
    ASSERT_EQ(waitpid(helper, &st, 0), helper);
    /* Not waited for without end: ours now, it ends by itself or not. */
    pid_t got = 0;
    for (int i = 0; i < 10000 && got == 0; i++) {
        got = waitpid(child, &st, WNOHANG);
        if (got == 0)
            nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    }
    if (got == 0) {
        int w = open(fifo, O_WRONLY | O_CLOEXEC);   /* frees it, to be reaped */
        waitpid(child, &st, 0);
        if (w >= 0)
            close(w);
    }
    ASSERT_SYS(prctl(PR_SET_CHILD_SUBREAPER, 0));
    ASSERT_EQ(got, child);
    ASSERT_SIGNALED(st, SIGKILL);
}

TEST(pdeathsig_survives_the_uid_change)
{
    struct fl_cmd cmd = {
        .argv = PROBE("sleep", "60"),
        .flags = FL_SET_UID | FL_SET_GID,
        .uid = 65534,
        .gid = 65534,
        .pdeathsig = SIGTERM,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    require_root();
    struct fl_proc p = spawn_from_exiting_thread(&cmd);
    int st = 0;
    int r = fl_wait(&p, 30000, &st);
    if (r == ETIMEDOUT)
        t_kill_wait(&p);
    ASSERT_OK(r);
    fl_close(&p);
    ASSERT_SIGNALED(st, SIGTERM);
}

TEST(no_pdeathsig_by_default)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = PROBE("sleep", "60"), .backend = BACKEND };
    struct fl_proc p = spawn_from_exiting_thread(&cmd);
    /* Give a wrongly set signal time to arrive; then it must be ours. */
    nanosleep(&(struct timespec){ 0, 200 * 1000 * 1000 }, NULL);
    ASSERT_OK(fl_kill(&p, SIGUSR2));
    ASSERT_SIGNALED(t_wait(&p), SIGUSR2);
}

TEST(invalid_pdeathsig_is_einval)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .pdeathsig = 1000,
        .backend = BACKEND,
    };
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        /* Malformed and inexpressible: posix_spawn may say either. */
        struct fl_proc p;
        int r = fl_spawn(&cmd, &p, NULL);
        ASSERT(r == EINVAL || r == ENOTSUP);
        return;
    }
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_NONE);
    ASSERT(e.step == FL_STEP_PREPARE || e.step == FL_STEP_PDEATHSIG);
}

/* ---- cgroup -------------------------------------------------------------- */

TEST(cgroup_places_the_child)
{
    struct fl_cmd cmd = {
        .argv = PROBE("cgroup"),
        .cgroup = "/sys/fs/cgroup/unified",
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *rel;
    char *dir = t_need_cgroup(&rel);
    cmd.cgroup = dir;
    int st;
    struct fl_cmd c = cmd;
    c.stdio[1].kind = FL_PIPE;
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&c, &p, &e);
    char *out = "";
    if (r == 0) {
        out = t_read_all(p.stdio[1]);
        st = t_wait(&p);
    }
    rmdir(dir);
    ASSERT_OK(r);
    ASSERT_EXITED(st, 0);
    ASSERT_STR_CONTAINS(out, t_fmt("cgroup 0::%s\n", rel));
}

TEST(a_cgroup_once_killed_still_takes_new_children)
{
    /* Linux 6.18 SIGKILLs at birth a child cloned straight into a cgroup
     * that cgroup.kill has emptied once (FL_STOP_CGROUP does that): the
     * spawn must see it and place the child another way. */
    struct fl_cmd cmd = { .argv = PROBE("cgroup"), .backend = BACKEND,
                          .cgroup = "/sys/fs/cgroup", .stdio = { [1] = { .kind = FL_PIPE } } };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    char *rel;
    char *dir = t_need_cgroup(&rel);
    int fd = open(t_fmt("%s/cgroup.kill", dir), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        rmdir(dir);
        SKIP("no cgroup.kill (Linux 5.14)");
    }
    ASSERT_EQ(write(fd, "1", 1), 1);
    close(fd);
    cmd.cgroup = dir;
    /* A launch first, whose child writes cgroup.procs itself, then a
     * spawn, twice (the second knows). */
    for (int i = 0; i < 3; i++) {
        struct fl_proc p;
        cmd.flags = i == 0 ? FL_NO_WAIT_EXEC : 0;
        SPAWN(&cmd, &p);
        char *out = t_read_all(p.stdio[1]);
        int st = t_wait(&p);
        ASSERT_EXITED(st, 0);
        ASSERT_STR_CONTAINS(out, t_fmt("cgroup 0::%s\n", rel));
    }
    rmdir(dir);
}

TEST(missing_cgroup_fails_at_the_cgroup_step)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .cgroup = "/sys/fs/cgroup/fl-test-does-not-exist",
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_CGROUP);
    ASSERT_STR_EQ(e.path, "/sys/fs/cgroup/fl-test-does-not-exist");
}

/* pids.max holds against a clone into the cgroup: the spawn must not
 * start the child elsewhere and move it in, which the limit allows. */
TEST(a_cgroup_at_its_pids_max_refuses_the_child)
{
    if (BACKEND != FL_BACKEND_CLONE)
        SKIP("only the clone backend clones a child into its cgroup; the fork backend moves "
             "it there, which pids.max does not limit (documented)");
    char *cg = t_need_cgroup(NULL);
    char *max = t_fmt("%s/pids.max", cg);
    if (access(max, F_OK) != 0) {
        t_remove_cgroup(cg);
        SKIP("no pids controller delegated to this cgroup v2 hierarchy (cgroup.subtree_control "
             "of our cgroup lacks it, or v1 holds it)");
    }
    int fd = open(max, O_WRONLY | O_CLOEXEC);
    ASSERT_SYS(fd);
    ASSERT_EQ(write(fd, "0", 1), 1);
    close(fd);
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .cgroup = cg, .backend = BACKEND };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    if (r == 0)
        t_wait(&p);
    t_remove_cgroup(cg);
    ASSERT_ERR(r, EAGAIN);
    ASSERT_EQ(e.step, FL_STEP_CLONE);
}

/* Under CLONE_VM the child's setresuid() runs commit_creds() on the
 * shared mm, which made the parent non-dumpable (with suid_dumpable 0):
 * the spawn puts it back, for a launch once it is finished. */
TEST(a_spawn_that_changes_uid_leaves_the_parent_dumpable)
{
    require_root();
    ASSERT_SYS(prctl(PR_SET_DUMPABLE, 1));
    for (int launch = 0; launch < 2; launch++) {
        struct fl_cmd cmd = {
            .argv = PROBE("exit", "0"),
            .flags = FL_SET_UID | FL_SET_GID | (launch ? FL_NO_WAIT_EXEC : 0),
            .uid = 65534,
            .gid = 65534,
            .backend = BACKEND,
        };
        UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_OK(fl_launch_finish(&p, NULL));
        ASSERT_EQ(prctl(PR_GET_DUMPABLE), 1);
        ASSERT_EXITED(t_wait(&p), 0);
    }
}
