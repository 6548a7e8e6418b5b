/*
 * test_input.c: hostile input to the library and to `forkless run`. Each
 * input gets a defined result (the documented errno and step, or, where
 * the header is silent, what the library does today, pinned here) and
 * leaves nothing behind: the runner checks fds and zombies after every
 * case, ASan checks memory.
 *
 * Every case ends with one summary line on stdout:
 *     REPORT scenario=input.<name>.<backend> spawns=<n> cases=<n> failures=0
 *            pitfalls=<list>
 * (a failed assertion aborts before it, so failures is always 0 there).
 */
#include "test.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifndef FL_FORKLESS_BIN
#error "FL_FORKLESS_BIN (the forkless binary) must be defined by CMake"
#endif

/* ---- counting --------------------------------------------------------- */

static int n_spawns, n_cases;
static char pitfalls[512];

static void pitfall(const char *p)
{
    if (strstr(pitfalls, p))
        return;
    size_t l = strlen(pitfalls);
    snprintf(pitfalls + l, sizeof pitfalls - l, "%s%s", l ? "," : "", p);
}

static void report(const char *scenario)
{
    printf("REPORT scenario=%s.%s spawns=%d cases=%d failures=0 pitfalls=%s\n",
           scenario, fl_backend_name(BACKEND), n_spawns, n_cases,
           pitfalls[0] ? pitfalls : "none");
}

/* fl_spawn() that must fail with err at step (FL_STEP_SPAWN allowed for
 * posix_spawn, see SPAWN_FAILS); counts the attempt. */
static struct fl_error fails(const struct fl_cmd *cmd, int err,
                             enum fl_step step)
{
    n_spawns++;
    n_cases++;
    return SPAWN_FAILS(cmd, err, step);
}

/* fl_spawn() that must succeed, and the program must exit with code. */
static void runs_and_exits(const struct fl_cmd *cmd, int code)
{
    struct fl_proc p;
    n_spawns++;
    n_cases++;
    SPAWN(cmd, &p);
    ASSERT_EXITED(t_wait(&p), code);
}

/* ---- argv ------------------------------------------------------------- */

TEST(null_empty_and_holey_argv_are_einval)
{
    struct fl_cmd cmd = { .backend = BACKEND };
    struct fl_error e = fails(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "argv");

    cmd.argv = (char *const[]){ NULL };
    e = fails(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "argv");

    /* argv[0] NULL with words after it: the array ends at the first NULL,
     * so this is an empty argv, even with .path set. */
    cmd.argv = (char *const[]){ NULL, "x", NULL };
    e = fails(&cmd, EINVAL, FL_STEP_PREPARE);
    cmd.path = "/bin/true";
    e = fails(&cmd, EINVAL, FL_STEP_PREPARE);

    /* An empty program name: .path "" is the program, and is ENOENT, as
     * execve("") says. */
    cmd.argv = ARGV("/bin/true");
    cmd.path = "";
    e = fails(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "empty");

    /* A NULL struct fl_proc is EINVAL too, and NULL error is allowed. */
    cmd.path = NULL;
    n_spawns++;
    n_cases++;
    ASSERT_ERR(fl_spawn(&cmd, NULL, NULL), EINVAL);
    n_spawns++;
    n_cases++;
    ASSERT_ERR(fl_spawn(NULL, &(struct fl_proc){ 0 }, NULL), EINVAL);
    report("input.argv_null_empty");
}

/* ---- environment ------------------------------------------------------ */

TEST(env_strings_without_equals)
{
    /* An edit without '=' (or with an empty name) is EINVAL, documented. */
    struct fl_cmd cmd = {
        .argv = PROBE("env"),
        .env_set = (const char *const[]){ "NOEQUALS", NULL },
        .backend = BACKEND,
    };
    struct fl_error e = fails(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "env_set[0]");
    cmd.env_set = (const char *const[]){ "A=1", "=empty-name", NULL };
    e = fails(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "env_set[1]");
    cmd.env_set = NULL;
    cmd.env_unset = (const char *const[]){ "A=1", NULL };
    fails(&cmd, EINVAL, FL_STEP_PREPARE);
    cmd.env_unset = (const char *const[]){ "", NULL };
    fails(&cmd, EINVAL, FL_STEP_PREPARE);

    /* A *base* string without '=' (.env) is not checked: the header is
     * silent. The library passes it to the child unchanged, where the
     * kernel and libc keep it in environ. Pinned here. */
    cmd.env_unset = NULL;
    cmd.env = (char *const[]){ "A=1", "JUSTANAME", "B=2", NULL };
    n_spawns++;
    n_cases++;
    char *out = t_probe(&cmd);
    ASSERT(strstr(out, "env JUSTANAME\n"));
    ASSERT(strstr(out, "env A=1\n"));
    ASSERT(strstr(out, "env B=2\n"));
    pitfall("base_env_without_equals_passed_through");

    /* An unset of a name that also appears as a bare base string: the bare
     * string is not a definition of that name, so it stays. */
    cmd.env_unset = (const char *const[]){ "JUSTANAME", NULL };
    n_spawns++;
    n_cases++;
    out = t_probe(&cmd);
    if (strstr(out, "env JUSTANAME\n"))
        pitfall("unset_leaves_bare_base_string");
    report("input.env_without_equals");
}

/* ---- fd maps ---------------------------------------------------------- */

TEST(fd_maps_twice_onto_one_target_and_negative_fds)
{
    int f = t_file_at(5, true);
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .fds = (struct fl_fd_map[]){ { 7, f }, { 7, 1 } },
        .nfds = 2,
        .backend = BACKEND,
    };
    struct fl_error e = fails(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "child fd 7");

    /* The same target twice, also when it is a standard fd. */
    cmd.fds = (struct fl_fd_map[]){ { 1, f }, { 1, f } };
    fails(&cmd, EINVAL, FL_STEP_PREPARE);

    cmd.nfds = 1;
    cmd.fds = (struct fl_fd_map[]){ { -1, f } };
    e = fails(&cmd, EINVAL, FL_STEP_PREPARE);
    ASSERT_STR_CONTAINS(e.detail, "negative");
    cmd.fds = (struct fl_fd_map[]){ { 3, -1 } };
    fails(&cmd, EINVAL, FL_STEP_PREPARE);
    cmd.fds = (struct fl_fd_map[]){ { INT_MIN, INT_MIN } };
    fails(&cmd, EINVAL, FL_STEP_PREPARE);
    /* A parent fd that is not open is EBADF with the map's index. */
    cmd.fds = (struct fl_fd_map[]){ { 3, 999 } };
    e = fails(&cmd, EBADF, FL_STEP_PREPARE);
    ASSERT_EQ(e.index, 0);
    cmd.fds = (struct fl_fd_map[]){ { 3, INT_MAX } };
    fails(&cmd, EBADF, FL_STEP_PREPARE);
    /* nfds without fds. */
    cmd.fds = NULL;
    fails(&cmd, EINVAL, FL_STEP_PREPARE);

    /* FL_FD with a negative fd is EINVAL; with a closed one EBADF. */
    cmd.nfds = 0;
    cmd.stdio[1] = (struct fl_stdio){ .kind = FL_FD, .fd = -1 };
    fails(&cmd, EINVAL, FL_STEP_PREPARE);
    cmd.stdio[1] = (struct fl_stdio){ .kind = FL_FD, .fd = 999 };
    e = fails(&cmd, EBADF, FL_STEP_PREPARE);
    ASSERT_EQ(e.index, 1);

    /* A child fd at or above the child's RLIMIT_NOFILE is refused before
     * anything starts, the same on every backend: EBADF at the dup step,
     * naming the fd. INT_MAX too. */
    struct rlimit nf;
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &nf));
    int high = nf.rlim_cur < 1u << 30 ? (int)nf.rlim_cur + 5 : (1 << 30);
    cmd.stdio[1] = (struct fl_stdio){ .kind = FL_INHERIT };
    cmd.nfds = 1;
    int highs[] = { high, INT_MAX };
    for (size_t i = 0; i < 2; i++) {
        cmd.fds = (struct fl_fd_map[]){ { highs[i], f } };
        n_spawns++;
        n_cases++;
        struct fl_proc pr;
        int r = fl_spawn(&cmd, &pr, &e);
        ASSERT_EQ(pr.pid, 0);
        ASSERT_EQ(pr.pidfd, -1);
        ASSERT_ERR(r, EBADF);
        ASSERT_EQ(e.step, FL_STEP_DUP);
        ASSERT_EQ(e.index, highs[i]);
    }
    close(f);
    report("input.fd_maps");
}

/* ---- rlimits ---------------------------------------------------------- */

TEST(huge_rlimits)
{
    /* RLIM_INFINITY soft over a finite hard limit: EINVAL at the rlimit. */
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .rlimits = (struct fl_rlimit[]){ { RLIMIT_CORE, RLIM_INFINITY, 0 } },
        .nrlimits = 1,
        .backend = BACKEND,
    };
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        fails(&cmd, ENOTSUP, FL_STEP_NONE);
        pitfall("posix_spawn_enotsup_rlimits");
        report("input.rlimits");
        return;
    }
    struct fl_error e = fails(&cmd, EINVAL, FL_STEP_RLIMIT);
    ASSERT_EQ(e.index, 0);

    /* RLIM_INFINITY for both, where that is allowed (CORE as root, or a
     * user whose hard CORE is unlimited), runs. */
    struct rlimit core;
    ASSERT_SYS(getrlimit(RLIMIT_CORE, &core));
    if (geteuid() == 0 || core.rlim_max == RLIM_INFINITY) {
        cmd.rlimits = (struct fl_rlimit[]){ { RLIMIT_CORE, RLIM_INFINITY,
                                              RLIM_INFINITY } };
        runs_and_exits(&cmd, 0);
    }
    /* NOFILE unlimited is over fs.nr_open: EPERM even for root. */
    cmd.rlimits = (struct fl_rlimit[]){ { RLIMIT_NOFILE, RLIM_INFINITY,
                                          RLIM_INFINITY } };
    fails(&cmd, EPERM, FL_STEP_RLIMIT);
    /* An unknown resource, a negative one. */
    cmd.rlimits = (struct fl_rlimit[]){ { -1, 0, 0 } };
    fails(&cmd, EINVAL, FL_STEP_RLIMIT);
    cmd.rlimits = (struct fl_rlimit[]){ { INT_MAX, 0, 0 } };
    fails(&cmd, EINVAL, FL_STEP_RLIMIT);
    /* nrlimits without rlimits. */
    cmd.rlimits = NULL;
    fails(&cmd, EINVAL, FL_STEP_PREPARE);
    report("input.rlimits");
}

TEST(rlimit_above_the_hard_limit_as_non_root)
{
    if (t_rerun_as_nobody())
        return; /* the re-run as uid 65534 printed its REPORT */
    struct rlimit core;
    ASSERT_SYS(getrlimit(RLIMIT_CORE, &core));
    if (geteuid() == 0)
        SKIP("needs a non-root user");
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .nrlimits = 1,
        .backend = BACKEND,
    };
    if (BACKEND == FL_BACKEND_POSIX_SPAWN) {
        cmd.rlimits = (struct fl_rlimit[]){ { RLIMIT_CORE, 0, 0 } };
        fails(&cmd, ENOTSUP, FL_STEP_NONE);
        pitfall("posix_spawn_enotsup_rlimits");
        report("input.rlimit_non_root");
        return;
    }
    /* Raising NOFILE's hard limit by one above ours: EPERM. */
    struct rlimit nf;
    ASSERT_SYS(getrlimit(RLIMIT_NOFILE, &nf));
    if (nf.rlim_max != RLIM_INFINITY) {
        cmd.rlimits = (struct fl_rlimit[]){ { RLIMIT_NOFILE, nf.rlim_max,
                                              nf.rlim_max + 1 } };
        struct fl_error e = fails(&cmd, EPERM, FL_STEP_RLIMIT);
        ASSERT_EQ(e.index, 0);
        cmd.rlimits = (struct fl_rlimit[]){ { RLIMIT_NOFILE, RLIM_INFINITY,
                                              RLIM_INFINITY } };
        fails(&cmd, EPERM, FL_STEP_RLIMIT);
    }
    /* Lowering is always allowed. */
    cmd.rlimits = (struct fl_rlimit[]){ { RLIMIT_NOFILE, 64, 64 } };
    runs_and_exits(&cmd, 0);
    report("input.rlimit_non_root");
}

/* ---- paths ------------------------------------------------------------ */

TEST(cwd_that_is_a_file_is_enotdir)
{
    char *d = t_tmpdir();
    char *file = t_write_file(d, "plain", "x", 0644);
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .cwd = file,
        .backend = BACKEND,
    };
    struct fl_error e = fails(&cmd, ENOTDIR, FL_STEP_CHDIR);
    if (e.step == FL_STEP_CHDIR)
        ASSERT_STR_EQ(e.path, file);
    /* An empty cwd: chdir("") is ENOENT. */
    cmd.cwd = "";
    fails(&cmd, ENOENT, FL_STEP_CHDIR);
    report("input.cwd_is_a_file");
}

TEST(path_with_an_embedded_newline_works)
{
    char *d = t_tmpdir();
    char *prog = t_write_file(d, "new\nline", "#!/bin/sh\nexit 7\n", 0755);
    struct fl_cmd cmd = {
        .argv = ARGV(prog),
        .backend = BACKEND,
    };
    runs_and_exits(&cmd, 7);
    /* And as the cwd, and as a stdout file. */
    char *sub = t_fmt("%s/dir\nwith\nnewlines", d);
    ASSERT_SYS(mkdir(sub, 0755));
    struct fl_cmd c2 = {
        .argv = PROBE("cwd"),
        .cwd = sub,
        .stdio = { [1] = { .kind = FL_FILE, .path = "out\nfile" } },
        .backend = BACKEND,
    };
    runs_and_exits(&c2, 0);
    char *out = t_read_file(t_fmt("%s/out\nfile", sub));
    ASSERT_STR_CONTAINS(out, sub);
    report("input.path_with_newline");
}

TEST(path_longer_than_path_max_is_enametoolong)
{
    size_t n = PATH_MAX + 10;
    char *p = t_keep(malloc(n + 1));
    p[0] = '/';
    memset(p + 1, 'a', n - 1);
    p[n] = 0;
    struct fl_cmd cmd = {
        .argv = ARGV(p),
        .backend = BACKEND,
    };
    struct fl_error e = fails(&cmd, ENAMETOOLONG, FL_STEP_EXEC);
    /* The record's path is truncated to fit, and terminated. */
    ASSERT_EQ(strlen(e.path) < FL_ERROR_PATH_MAX, 1);

    /* A long path with short components: ENAMETOOLONG as well. */
    char *q = t_keep(malloc(n + 1));
    for (size_t i = 0; i < n; i += 2)
        q[i] = '/', q[i + 1] = 'b';
    q[n] = 0;
    cmd.argv = ARGV(q);
    fails(&cmd, ENAMETOOLONG, FL_STEP_EXEC);

    /* As the cwd: ENAMETOOLONG at chdir. */
    cmd.argv = ARGV("/bin/true");
    cmd.cwd = p;
    fails(&cmd, ENAMETOOLONG, FL_STEP_CHDIR);
    cmd.cwd = NULL;

    /* A bare name longer than NAME_MAX searched in PATH. */
    char name[NAME_MAX + 20];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = 0;
    cmd.argv = ARGV(name);
    n_spawns++;
    n_cases++;
    struct fl_proc pr;
    struct fl_error e2;
    int r = fl_spawn(&cmd, &pr, &e2);
    ASSERT(r == ENAMETOOLONG || r == ENOENT);
    ASSERT_EQ(pr.pid, 0);
    if (r == ENOENT)
        pitfall("long_name_in_path_search_is_enoent");
    else
        pitfall("long_name_in_path_search_is_enametoolong");
    report("input.path_too_long");
}

/* ---- sizes ------------------------------------------------------------ */

static char *filled(size_t len, char c)
{
    char *s = t_keep(malloc(len + 1));
    memset(s, c, len);
    s[len] = 0;
    return s;
}

TEST(argument_around_max_arg_strlen)
{
    /* MAX_ARG_STRLEN is 32 pages, 131072 with the NUL on 4 KiB pages. */
    size_t max = 32 * (size_t)sysconf(_SC_PAGESIZE);
    char *ok = filled(max - 1, 'o');
    char *big = filled(max, 'b');
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true", ok),
        .backend = BACKEND,
    };
    runs_and_exits(&cmd, 0);

    /* exec's E2BIG, for the file it found: the detail names the string. */
    cmd.argv = ARGV("/bin/true", "x", big);
    struct fl_error e = fails(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_EQ(e.index, 0);
    ASSERT_STR_EQ(e.path, "/bin/true");
    ASSERT_STR_CONTAINS(e.detail, "argument 2 is");
    ASSERT_STR_CONTAINS(e.detail, "MAX_ARG_STRLEN");

    /* The same for an environment string (as an edit and in .env). */
    cmd.argv = ARGV("/bin/true");
    char *envok = t_fmt("V=%s", filled(max - 3, 'e'));
    char *envbig = t_fmt("V=%s", filled(max - 2, 'e'));
    cmd.env = (char *const[]){ envok, NULL };
    runs_and_exits(&cmd, 0);
    cmd.env = (char *const[]){ envbig, NULL };
    e = fails(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "environment variable V is");
    /* By name, not by its place among environ's variables. */
    cmd.env = NULL;
    cmd.env_set = (const char *const[]){ envbig, NULL };
    e = fails(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "environment variable V is");

    /* fl_resolve() says the same without starting anything. */
    cmd.env_set = NULL;
    cmd.argv = ARGV("/bin/true", big);
    char buf[64];
    n_cases++;
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, &e), E2BIG);
    report("input.max_arg_strlen");
}

TEST(total_over_arg_max_is_e2big)
{
    /* The limit is a quarter of RLIMIT_STACK, at most 6 MiB: 60 strings
     * of 120 KiB are over it whatever the stack limit. */
    enum { N = 60 };
    char *argv[N + 2];
    argv[0] = "/bin/true";
    char *s = filled(120 * 1024, 'z');
    for (int i = 1; i <= N; i++)
        argv[i] = s;
    argv[N + 1] = NULL;
    struct fl_cmd cmd = {
        .argv = argv,
        .backend = BACKEND,
    };
    struct fl_error e = fails(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "ARG_MAX");
    ASSERT_EQ(e.index, 0);

    /* Spread over the environment instead. */
    char *env[N + 1];
    char *v = t_fmt("E=%s", s);
    for (int i = 0; i < N; i++)
        env[i] = v;
    env[N] = NULL;
    cmd.argv = ARGV("/bin/true");
    cmd.env = env;
    e = fails(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "ARG_MAX");

    /* Just under: 10 of them (1.2 MiB) fit under an 8 MiB stack. */
    struct rlimit st;
    ASSERT_SYS(getrlimit(RLIMIT_STACK, &st));
    if (st.rlim_cur >= 8u << 20) {
        env[10] = NULL;
        runs_and_exits(&cmd, 0);
    }
    report("input.arg_max");
}

/* ---- fl_wait ---------------------------------------------------------- */

TEST(wait_with_hostile_timeouts)
{
    struct fl_cmd cmd = {
        .argv = PROBE("sleep", "0.05"),
        .backend = BACKEND,
    };
    struct fl_proc p;
    n_spawns++;
    n_cases++;
    SPAWN(&cmd, &p);
    int st = -1;
    n_cases++;
    ASSERT_ERR(fl_wait(&p, -2, &st), EINVAL);
    n_cases++;
    ASSERT_ERR(fl_wait(&p, INT_MIN, &st), EINVAL);
    ASSERT_EQ(st, -1);
    /* INT_MAX ms (24 days): returns as soon as the child exits. */
    n_cases++;
    ASSERT_OK(fl_wait(&p, INT_MAX, &st));
    ASSERT_EXITED(st, 0);
    n_cases++;
    ASSERT_ERR(fl_wait(&p, INT_MAX, &st), ESRCH);
    n_cases++;
    ASSERT_ERR(fl_wait(&p, -2, &st), EINVAL); /* the timeout is checked first */
    fl_close(&p);
    /* An empty handle. */
    struct fl_proc empty = { .pid = 0, .pidfd = -1, .stdio = { -1, -1, -1 } };
    n_cases++;
    ASSERT_ERR(fl_wait(&empty, 0, NULL), ESRCH);
    n_cases++;
    ASSERT_ERR(fl_kill(&empty, 0), ESRCH);
    /* A bad signal number. */
    SPAWN(&cmd, &p);
    n_spawns++;
    n_cases++;
    ASSERT_ERR(fl_kill(&p, -1), EINVAL);
    n_cases++;
    ASSERT_ERR(fl_kill(&p, 1000), EINVAL);
    ASSERT_OK(fl_wait(&p, INT_MAX, &st));
    ASSERT_EXITED(st, 0);
    fl_close(&p);
    fl_close(&p);
    report("input.wait_timeouts");
}

/* ---- the CLI ---------------------------------------------------------- */

/* Runs `forkless run ARGS...` with stdout and stderr to pipes; returns the
 * wait status, and stderr in *err. */
static int cli(char *const *args, char **err)
{
    char *argv[64];
    int n = 0;
    argv[n++] = FL_FORKLESS_BIN;
    argv[n++] = "run";
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct fl_cmd cmd = {
        .argv = argv,
        .stdio = { [0] = { .kind = FL_NULL },
                   [1] = { .kind = FL_NULL },
                   [2] = { .kind = FL_PIPE } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    n_spawns++;
    n_cases++;
    SPAWN(&cmd, &p);
    *err = t_read_all_within(p.stdio[2], 50000);
    return t_wait(&p);
}

static void cli_fails_125(char *const *args)
{
    char *err;
    int st = cli(args, &err);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 125 || !err[0]) {
        char line[512] = "";
        for (int i = 0; args[i]; i++)
            snprintf(line + strlen(line), sizeof line - strlen(line), " [%s]",
                     args[i]);
        FAIL("forkless run%s: status 0x%x, stderr \"%s\"; expected exit 125 "
             "and a message", line, st, err);
    }
    ASSERT_STR_CONTAINS(err, "forkless");
}

/* Bad option values of every kind, and setup steps that fail: each must
 * end in exit 125 with a message. The spawning backend does not matter to
 * the CLI, so the posix_spawn and fork runs take every 6th entry only (an
 * ASan-built forkless starts slowly on a busy machine). */
static char *const *const bad_cli[] = {
    ARGV("--bogus", "/bin/true"),
    ARGV("-Z", "/bin/true"),
    ARGV("--setsid=yes", "/bin/true"),
    ARGV("--chdir"),
    ARGV("-C"),
    ARGV("--env", "NOEQUALS", "/bin/true"),
    ARGV("--env", "=v", "/bin/true"),
    ARGV("--unset", "", "/bin/true"),
    ARGV("--unset", "A=B", "/bin/true"),
    ARGV("--fd", "3", "/bin/true"),
    ARGV("--fd", "-1=2", "/bin/true"),
    ARGV("--fd", "3=-1", "/bin/true"),
    ARGV("--fd", "3=x", "/bin/true"),
    ARGV("--fd", "99999999999=1", "/bin/true"),
    ARGV("--fd", "3=999", "/bin/true"),
    ARGV("--fd", "3=1", "--fd", "3=2", "/bin/true"),
    ARGV("--rlimit", "NOFILE", "/bin/true"),
    ARGV("--rlimit", "BOGUS=1", "/bin/true"),
    ARGV("--rlimit", "=1", "/bin/true"),
    ARGV("--rlimit", "CORE=-2", "/bin/true"),
    ARGV("--rlimit", "CORE=1x", "/bin/true"),
    ARGV("--rlimit", "CORE=:", "/bin/true"),
    ARGV("--rlimit", "CORE=", "/bin/true"),
    ARGV("--rlimit", "CORE=99999999999999999999999", "/bin/true"),
    ARGV("--rlimit", "CORE=18446744073709551616", "/bin/true"),
    ARGV("--umask", "8", "/bin/true"),
    ARGV("--umask", "01777", "/bin/true"),
    ARGV("--umask", "", "/bin/true"),
    ARGV("--umask", "-1", "/bin/true"),
    ARGV("--timeout", "-1", "/bin/true"),
    ARGV("--timeout", "1x", "/bin/true"),
    ARGV("--timeout", "", "/bin/true"),
    ARGV("--timeout", ".", "/bin/true"),
    ARGV("--timeout", "inf", "/bin/true"),
    ARGV("--timeout", "12h30m", "/bin/true"),
    ARGV("--kill-after", "1 s", "/bin/true"),
    ARGV("--backend", "vfork", "/bin/true"),
    ARGV("--backend", "", "/bin/true"),
    ARGV("--user", "no-such-user-fl", "/bin/true"),
    ARGV("--user", "0:no-such-group-fl", "/bin/true"),
    ARGV("--user", "4294967295", "/bin/true"),
    ARGV("--stderr", "/dev/null", "--stderr-to-stdout", "/bin/true"),
    ARGV(NULL),
    ARGV("--"),
    ARGV("--verbose=1", "/bin/true"),
    ARGV("--chdir", "/etc/passwd", "/bin/true"),
    ARGV("--stdin", "/nonexistent/in", "/bin/true"),
    ARGV("--rlimit", "NOFILE=unlimited", "/bin/true"),
    ARGV("--cgroup", "/nonexistent/cg", "/bin/true"),
    ARGV("--backend", "posix_spawn", "--umask", "022", "/bin/true"),
    ARGV("--backend", "fork", "--no-fork", "/bin/true"),
};

TEST(cli_bad_option_values_exit_125)
{
    size_t n = sizeof bad_cli / sizeof bad_cli[0];
    for (size_t i = 0; i < n; i++)
        if (BACKEND == FL_BACKEND_CLONE || i % 6 == 0)
            cli_fails_125(bad_cli[i]);

    /* The top level. */
    char *err;
    struct fl_cmd top = {
        .argv = ARGV(FL_FORKLESS_BIN),
        .stdio = { [1] = { .kind = FL_NULL }, [2] = { .kind = FL_PIPE } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    n_spawns++;
    n_cases++;
    SPAWN(&top, &p);
    err = t_read_all_within(p.stdio[2], 50000);
    ASSERT_EXITED(t_wait(&p), 125);
    ASSERT(err[0]);
    top.argv = ARGV(FL_FORKLESS_BIN, "frobnicate");
    n_spawns++;
    n_cases++;
    SPAWN(&top, &p);
    err = t_read_all_within(p.stdio[2], 50000);
    ASSERT_EXITED(t_wait(&p), 125);
    ASSERT(err[0]);

    /* Not 125: a missing program is 127 (an empty name too, as for
     * env ''), a non-executable file 126. */
    int st = cli(ARGV("/nonexistent/prog"), &err);
    ASSERT_EXITED(st, 127);
    st = cli(ARGV(""), &err);
    ASSERT_EXITED(st, 127);
    st = cli(ARGV("/etc/passwd"), &err);
    ASSERT_EXITED(st, 126);
    report("input.cli_bad_options");
}
