/*
 * test_filter.c: FL_NO_NEW_PRIVS and fl_contain.seccomp, from the child's
 * point of view, and the filter builder fl_seccomp_deny().
 *
 * (test_seccomp.c is another topic: the library under a filter of the
 * caller's.) The probe reports no_new_privs and the seccomp mode, and
 * tries mkdir(2), which the cases deny. The posix_spawn backend can set
 * neither: ENOTSUP at step prepare.
 */
#include "test.h"
#include "denied.h"

#include <linux/filter.h>
#include <stddef.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* mkdir(2) and mkdirat(2), as this architecture numbers them. */
static struct sock_fprog deny_mkdir(int errno_value)
{
    int nrs[2];
    size_t n = 0;
    int nr = fl_syscall_number("mkdir");
    if (nr >= 0)
        nrs[n++] = nr;
    nrs[n++] = fl_syscall_number("mkdirat");
    ASSERT_GE(nrs[n - 1], 0);
    struct sock_fprog prog;
    ASSERT_OK(fl_seccomp_deny(nrs, n, errno_value, &prog));
    t_keep(prog.filter);
    return prog;
}

static const char *mkdir_result(const char *out, const char *path)
{
    char *v = t_get(out, t_fmt("mkdir %s", path));
    if (!v)
        FAIL("no mkdir line in the report:\n%s", out);
    return v;
}

static bool caller_has_nnp(void)
{
    return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
}

/* ---- no_new_privs ------------------------------------------------------------ */

TEST(no_new_privs_is_set_in_the_child_with_the_flag)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS };
    struct fl_cmd cmd = { .argv = PROBE("nnp"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    ASSERT_EQ(t_get_num(t_probe(&cmd), "no_new_privs"), 1);
}

TEST(no_new_privs_is_not_set_without_the_flag)
{
    if (caller_has_nnp())
        SKIP("this process has no_new_privs already, which every child inherits");
    struct fl_contain c = { .flags = 0 };
    struct fl_cmd cmd = { .argv = PROBE("nnp"), .contain = &c, .backend = BACKEND };
    ASSERT_EQ(t_get_num(t_probe(&cmd), "no_new_privs"), 0);
    cmd.contain = NULL;
    ASSERT_EQ(t_get_num(t_probe(&cmd), "no_new_privs"), 0);
}

TEST(no_new_privs_in_the_child_leaves_the_caller_alone)
{
    if (caller_has_nnp())
        SKIP("this process has no_new_privs already");
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS };
    struct fl_cmd cmd = { .argv = PROBE("nnp"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    ASSERT_EQ(t_get_num(t_probe(&cmd), "no_new_privs"), 1);
    ASSERT_EQ(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
}

/* A subprocess of the test under a filter of its own that denies prctl()
 * with EPERM (set after its own no_new_privs): the child's
 * PR_SET_NO_NEW_PRIVS then fails. */
TEST(a_refused_no_new_privs_is_its_step_and_errno)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    struct t_denied d = t_spawn_denied(&cmd, (const char *[]){ "prctl", NULL }, EPERM);
    ASSERT_EQ(d.r, EPERM);
    ASSERT_EQ(d.e.step, FL_STEP_NO_NEW_PRIVS);
    ASSERT_EQ(d.e.index, -1);
}

/* ---- the filter in the child ------------------------------------------------- */

TEST(a_denied_call_fails_with_the_chosen_errno)
{
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    char *tmp = t_tmpdir();
    static const int errnos[] = { EPERM, ENOSYS, EXDEV };
    static const char *const names[] = { "EPERM", "ENOSYS", "EXDEV" };
    for (int k = 0; k < 3; k++) {
        struct sock_fprog prog = deny_mkdir(errnos[k]);
        c.seccomp = &prog;
        char *path = t_fmt("%s/d%d", tmp, k);
        cmd.argv = PROBE("try-mkdir", path);
        ASSERT_STR_EQ(mkdir_result(t_probe(&cmd), path), names[k]);
        ASSERT(access(path, F_OK) != 0);
    }
}

TEST(the_filter_lets_every_other_call_run)
{
    struct sock_fprog prog = deny_mkdir(EPERM);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    char *tmp = t_tmpdir();
    char *file = t_fmt("%s/f", tmp);
    struct fl_cmd cmd = { .argv = PROBE("try-write", file, "try-read", file, "cwd", "ids"),
                          .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    char *out = t_probe(&cmd);
    ASSERT_STR_EQ(t_get(out, t_fmt("write %s", file)), "ok");
    ASSERT_STR_EQ(t_get(out, t_fmt("read %s", file)), "ok");
    ASSERT_EQ(t_get_num(out, "uid"), getuid());
}

TEST(the_child_runs_in_seccomp_filter_mode_and_the_caller_does_not)
{
    struct sock_fprog prog = deny_mkdir(EPERM);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    struct fl_cmd cmd = { .argv = PROBE("seccomp-mode", "nnp"), .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    int before = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "seccomp_mode"), SECCOMP_MODE_FILTER);
    ASSERT_EQ(t_get_num(out, "no_new_privs"), 1);
    ASSERT_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), before);
}

TEST(the_filter_binds_the_program_s_children_too)
{
    struct sock_fprog prog = deny_mkdir(ENOSYS);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    char *path = t_fmt("%s/by-grandchild", t_tmpdir());
    struct fl_cmd cmd = { .argv = PROBE("run-probe", "try-mkdir", path), .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "probe_status"), 0);
    ASSERT_STR_EQ(mkdir_result(out, path), "ENOSYS");
}

TEST(the_filter_comes_last_so_it_cannot_refuse_a_setup_step)
{
    /* Every call the setup below makes, denied: the setup runs before. */
    static const char *const calls[] = { "chdir", "setpriority", "dup2", "dup3",
                                         "close_range", "setsid", "setpgid", "prlimit64",
                                         "rt_sigaction", "prctl" };
    int nrs[16];
    size_t n = 0;
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        int nr = fl_syscall_number(calls[i]);
        if (nr >= 0)
            nrs[n++] = nr;
    }
    struct sock_fprog prog;
    ASSERT_OK(fl_seccomp_deny(nrs, n, EPERM, &prog));
    t_keep(prog.filter);
    char *tmp = t_tmpdir();
    int src = 20;   /* the fd map's source */
    struct fl_sched s = { .set = FL_SCHED_NICE, .nice = 9 };
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    struct fl_cmd cmd = {
        .argv = PROBE("cwd", "sched", "proc", "fds"),
        .cwd = tmp,
        .fds = (struct fl_fd_map[]){ { 5, src } },
        .nfds = 1,
        .flags = FL_SETSID,
        .sched = &s,
        .contain = &c,
        .backend = BACKEND,
    };
    ASSERT_EQ(t_file_at(src, true), src);
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        struct fl_error e = SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_PREPARE);
        ASSERT_STR_CONTAINS(e.detail, "posix_spawn cannot set");
        close(src);
        return;
    }
    NEEDS_SECCOMP();
    char *out = t_probe(&cmd);
    close(src);
    ASSERT_STR_EQ(t_get(out, "cwd"), tmp);
    ASSERT_EQ(t_get_num(out, "nice"), 9);
    ASSERT_EQ(t_get_num(out, "sid"), t_get_num(out, "pid"));
    ASSERT_FDS_EXACTLY(out, 0, 1, 2, 5);
}

/* A filter that denies execve, execveat and the named call (NULL: none)
 * with EXDEV: the spawn fails at step exec with that errno. */
static void exec_denied_fails_at_exec(const char *also)
{
    int nrs[3] = { fl_syscall_number("execve") };
    size_t n = 1;
    ASSERT_GE(nrs[0], 0);
    if ((nrs[n] = fl_syscall_number("execveat")) >= 0)
        n++;
    if (also) {
        ASSERT_GE(nrs[n] = fl_syscall_number(also), 0);
        n++;
    }
    struct sock_fprog prog;
    ASSERT_OK(fl_seccomp_deny(nrs, n, EXDEV, &prog));
    t_keep(prog.filter);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    struct fl_error e = SPAWN_FAILS(&cmd, EXDEV, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, "/bin/true");
}

TEST(a_filter_that_denies_execve_fails_the_spawn_at_exec_with_its_errno)
{
    exec_denied_fails_at_exec(NULL);
}

TEST(a_filter_that_denies_execve_and_write_still_fails_the_spawn_at_exec)
{
    /* The fork backend's child used to send its record with write(),
     * under the filter: denied, the failure read as a success. */
    exec_denied_fails_at_exec("write");
}

TEST(a_filter_the_kernel_refuses_is_einval_at_step_seccomp)
{
    /* A load and no return: the kernel's checker refuses it. */
    struct sock_filter bad[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0) };
    struct sock_fprog prog = { .len = 1, .filter = bad };
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_SECCOMP);
    ASSERT_EQ(e.index, -1);
    ASSERT_STR_CONTAINS(e.detail, "the kernel refused the filter");
}

TEST(a_filter_without_instructions_is_einval_before_any_child)
{
    struct sock_filter one[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
    struct sock_fprog empty = { .len = 0, .filter = one };
    struct sock_fprog null = { .len = 1, .filter = NULL };
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &empty };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_SECCOMP);
    c.seccomp = &null;
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_SECCOMP);
}

TEST(without_no_new_privs_an_unprivileged_child_is_eacces_at_step_seccomp)
{
    if (t_rerun_as_nobody())
        return;
    struct sock_fprog prog = deny_mkdir(EPERM);
    struct fl_contain c = { .seccomp = &prog };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    if (geteuid() == 0)
        SKIP("needs a user without CAP_SYS_ADMIN (runs as uid 65534 when started as root)");
    if (caller_has_nnp())
        SKIP("this process has no_new_privs already, which its children inherit");
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_SECCOMP);
    ASSERT_EQ(e.index, -1);
    ASSERT(strstr(e.detail, "FL_NO_NEW_PRIVS"));   /* what to add */
}

TEST(without_no_new_privs_root_may_filter_its_child)
{
    if (geteuid() != 0)
        SKIP("needs root (CAP_SYS_ADMIN lets a filter go without no_new_privs)");
    if (caller_has_nnp())
        SKIP("this process has no_new_privs already");
    struct sock_fprog prog = deny_mkdir(EPERM);
    struct fl_contain c = { .seccomp = &prog };
    char *path = t_fmt("%s/d", t_tmpdir());
    struct fl_cmd cmd = { .argv = PROBE("nnp", "try-mkdir", path), .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "no_new_privs"), 0);
    ASSERT_STR_EQ(mkdir_result(out, path), "EPERM");
}

TEST(a_launch_copies_the_filter_so_the_caller_may_free_it_at_once)
{
    int nrs[2] = { fl_syscall_number("mkdir"), fl_syscall_number("mkdirat") };
    char *path = t_fmt("%s/d", t_tmpdir());
    /* Asked with a plain setting first, so that posix_spawn's refusal
     * leaves nothing allocated behind. */
    struct fl_contain plain = { .flags = FL_NO_NEW_PRIVS };
    struct fl_cmd cmd = { .argv = PROBE("try-mkdir", path), .contain = &plain,
                          .flags = FL_NO_WAIT_EXEC, .stdio = { [1] = { .kind = FL_PIPE } },
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    struct sock_fprog *prog = malloc(sizeof *prog);
    ASSERT(prog);
    ASSERT_OK(fl_seccomp_deny(nrs[0] >= 0 ? nrs : nrs + 1, nrs[0] >= 0 ? 2 : 1, EPERM, prog));
    struct fl_contain *c = calloc(1, sizeof *c);
    ASSERT(c);
    c->flags = FL_NO_NEW_PRIVS;
    c->seccomp = prog;
    cmd.contain = c;
    struct fl_proc p;
    SPAWN(&cmd, &p);
    /* Poisoned before it is freed: were the child to read it now, every
     * call would be allowed. */
    for (unsigned i = 0; i < prog->len; i++)
        prog->filter[i] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    fl_seccomp_free(prog);
    memset(prog, 0, sizeof *prog);
    free(prog);
    memset(c, 0, sizeof *c);
    free(c);
    struct fl_error e;
    ASSERT_OK(fl_launch_finish(&p, &e));
    char *out = t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(mkdir_result(out, path), "EPERM");
}

/* ---- the PATH search under the filter ---------------------------------------- */

/* A filter that kills the process on newfstatat() and allows the rest, as
 * an allow-list filter kills on a call it does not list. */
static struct sock_fprog kill_on_stat(void)
{
    static struct sock_filter insns[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_newfstatat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    return (struct sock_fprog){ .len = 4, .filter = insns };
}

/* Which candidates are there is looked up before the filter: after it,
 * only exec runs. */
TEST(a_path_search_under_a_filter_that_kills_on_stat_still_says_not_found)
{
    struct sock_fprog prog = kill_on_stat();
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    const char *env_set[] = { t_fmt("PATH=%s", t_tmpdir()), NULL };
    struct fl_cmd cmd = { .argv = ARGV("fl-no-such-program"), .env_set = env_set,
                          .contain = &c, .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, "not found in PATH");
}

TEST(a_path_search_under_a_filter_that_denies_stat_still_finds_a_file_without_permission)
{
    int nr = fl_syscall_number("newfstatat");
    if (nr < 0)
        SKIP("no newfstatat on this architecture");
    struct sock_fprog prog;
    ASSERT_OK(fl_seccomp_deny(&nr, 1, EXDEV, &prog));
    t_keep(prog.filter);
    char *a = t_tmpdir();
    char *prog_path = t_write_file(a, "fl-prog", "#!/bin/sh\nexit 0\n", 0644);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    const char *env_set[] = { t_fmt("PATH=%s:%s", a, t_tmpdir()), NULL };
    struct fl_cmd cmd = { .argv = ARGV("fl-prog"), .env_set = env_set, .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    ASSERT_EQ(e.index, 0);
    ASSERT_STR_EQ(e.path, prog_path);
}

/* The architecture check: a call through another ABI kills the process
 * (SIGSYS), whatever its number. */
static void killed_for_a_foreign_call(const char *word, const char *key)
{
    struct sock_fprog prog = deny_mkdir(EPERM);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    struct fl_rlimit nocore = { RLIMIT_CORE, 0, 0 };
    struct fl_cmd cmd = { .argv = PROBE((char *)word), .rlimits = &nocore, .nrlimits = 1,
                          .backend = BACKEND };
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        cmd.nrlimits = 0;
    int st;
    char *out = t_run(&cmd, &st);   /* without the filter: the call works, or says ENOSYS */
    /* Unless a filter this process runs under (a container's) kills it. */
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
        SKIP(t_fmt("the seccomp filter this process runs under (a container's) kills %s "
                   "already", word));
    ASSERT_EXITED(st, 0);
    long long r = t_get_num(out, key);
    cmd.contain = &c;
    cmd.nrlimits = 1;
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    out = t_run(&cmd, &st);
    ASSERT_SIGNALED(st, SIGSYS);
    ASSERT_NULL(t_get(out, key));   /* killed before it could say */
    printf("%s without the filter: %lld; with it: SIGSYS\n", key, r);
}

TEST(a_32_bit_call_is_killed)
{
#if defined(__x86_64__) && defined(__LP64__)
    killed_for_a_foreign_call("i386-getpid", "i386_getpid");
#else
    SKIP("the 32-bit ABI through int 0x80 is an x86_64 case");
#endif
}

TEST(an_x32_call_is_killed)
{
#if defined(__x86_64__) && defined(__LP64__)
    killed_for_a_foreign_call("x32-getpid", "x32_getpid");
#else
    SKIP("x32 is an x86_64 case");
#endif
}

/* ---- the builder ------------------------------------------------------------- */

TEST(fl_syscall_number_knows_this_build_s_numbers)
{
    ASSERT_EQ(fl_syscall_number("openat"), SYS_openat);
    ASSERT_EQ(fl_syscall_number("execve"), SYS_execve);
    ASSERT_EQ(fl_syscall_number("mkdirat"), SYS_mkdirat);
#ifdef SYS_mkdir
    ASSERT_EQ(fl_syscall_number("mkdir"), SYS_mkdir);
#endif
    ASSERT_EQ(fl_syscall_number("no_such_call"), -1);
    ASSERT_EQ(fl_syscall_number(""), -1);
    ASSERT_EQ(fl_syscall_number("OPENAT"), -1);
    ASSERT_EQ(fl_syscall_number(NULL), -1);
}

TEST(fl_seccomp_deny_refuses_an_errno_outside_1_to_4095)
{
    int nr = SYS_mkdirat;
    struct sock_fprog prog = { .len = 7, .filter = (struct sock_filter *)&prog };
    ASSERT_ERR(fl_seccomp_deny(&nr, 1, 0, &prog), EINVAL);
    ASSERT_EQ(prog.len, 0);
    ASSERT_NULL(prog.filter);
    ASSERT_ERR(fl_seccomp_deny(&nr, 1, 4096, &prog), EINVAL);
    ASSERT_ERR(fl_seccomp_deny(&nr, 1, -1, &prog), EINVAL);
    ASSERT_OK(fl_seccomp_deny(&nr, 1, 4095, &prog));
    fl_seccomp_free(&prog);
    ASSERT_OK(fl_seccomp_deny(&nr, 1, 1, &prog));
    fl_seccomp_free(&prog);
}

TEST(fl_seccomp_deny_refuses_a_negative_number)
{
    int nrs[] = { SYS_mkdirat, -1 };
    struct sock_fprog prog;
    ASSERT_ERR(fl_seccomp_deny(nrs, 2, EPERM, &prog), EINVAL);
    ASSERT_EQ(prog.len, 0);
    ASSERT_NULL(prog.filter);
}

TEST(fl_seccomp_deny_refuses_exit_group_and_exit)
{
    /* No process could end: a child whose exec failed would spin in its
     * exit, and the caller wait for ever. */
    struct sock_fprog prog;
    ASSERT_ERR(fl_seccomp_deny((int[]){ SYS_mkdirat, SYS_exit_group }, 2, EPERM, &prog), EINVAL);
    ASSERT_NULL(prog.filter);
    ASSERT_ERR(fl_seccomp_deny((int[]){ SYS_exit }, 1, EPERM, &prog), EINVAL);
    ASSERT_NULL(prog.filter);
}

TEST(fl_seccomp_deny_refuses_more_than_1000_numbers)
{
    static int nrs[1001];
    for (int i = 0; i < 1001; i++)
        nrs[i] = 3000 + i;   /* numbers no call has (exit and exit_group are refused) */
    struct sock_fprog prog;
    ASSERT_ERR(fl_seccomp_deny(nrs, 1001, EPERM, &prog), EINVAL);
    ASSERT_NULL(prog.filter);
    ASSERT_OK(fl_seccomp_deny(nrs, 1000, EPERM, &prog));
    ASSERT_LE(prog.len, BPF_MAXINSNS);
    fl_seccomp_free(&prog);
}

TEST(fl_seccomp_deny_refuses_null_arguments)
{
    struct sock_fprog prog;
    ASSERT_ERR(fl_seccomp_deny(NULL, 1, EPERM, &prog), EINVAL);
    int nr = SYS_mkdirat;
    ASSERT_ERR(fl_seccomp_deny(&nr, 1, EPERM, NULL), EINVAL);
}

TEST(fl_seccomp_free_empties_the_program_and_takes_null)
{
    int nr = SYS_mkdirat;
    struct sock_fprog prog;
    ASSERT_OK(fl_seccomp_deny(&nr, 1, EPERM, &prog));
    ASSERT_GT(prog.len, 0);
    fl_seccomp_free(&prog);
    ASSERT_EQ(prog.len, 0);
    ASSERT_NULL(prog.filter);
    fl_seccomp_free(&prog);   /* twice: nothing left to free */
    fl_seccomp_free(NULL);
}

TEST(a_filter_of_1000_numbers_still_denies_the_last)
{
    static int nrs[1000];
    for (int i = 0; i < 999; i++)
        nrs[i] = 3000 + i;   /* numbers no call has */
    nrs[999] = SYS_mkdirat;
#ifdef SYS_mkdir
    nrs[998] = SYS_mkdir;
#endif
    struct sock_fprog prog;
    ASSERT_OK(fl_seccomp_deny(nrs, 1000, EPERM, &prog));
    t_keep(prog.filter);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    char *path = t_fmt("%s/d", t_tmpdir());
    struct fl_cmd cmd = { .argv = PROBE("try-mkdir", path, "seccomp-mode"), .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    char *out = t_probe(&cmd);
    ASSERT_STR_EQ(mkdir_result(out, path), "EPERM");
    ASSERT_EQ(t_get_num(out, "seccomp_mode"), SECCOMP_MODE_FILTER);
}

TEST(a_filter_of_no_numbers_allows_everything_but_foreign_calls)
{
    struct sock_fprog prog;
    ASSERT_OK(fl_seccomp_deny(NULL, 0, EPERM, &prog));
    t_keep(prog.filter);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    char *path = t_fmt("%s/d", t_tmpdir());
    struct fl_cmd cmd = { .argv = PROBE("try-mkdir", path, "seccomp-mode"), .contain = &c,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    NEEDS_SECCOMP();
    char *out = t_probe(&cmd);
    ASSERT_STR_EQ(mkdir_result(out, path), "ok");
    ASSERT_EQ(t_get_num(out, "seccomp_mode"), SECCOMP_MODE_FILTER);
}

TEST(the_posix_spawn_backend_refuses_a_filter_and_no_new_privs_with_enotsup)
{
    struct sock_fprog prog = deny_mkdir(EPERM);
    struct fl_contain c = { .flags = FL_NO_NEW_PRIVS, .seccomp = &prog };
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .contain = &c,
                          .backend = FL_BACKEND_POSIX_SPAWN };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "posix_spawn cannot set containment");
    c.seccomp = NULL;
    e = SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "posix_spawn cannot set containment");
}
