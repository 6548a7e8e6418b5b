/*
 * test_exec.c: finding and executing the program (pitfalls 10-16, 18).
 *
 * An exec failure is an error of fl_spawn(), never "spawned, then exit 127";
 * PATH is the child's, searched with glibc's errno rules, skipping empty and
 * relative entries unless asked; argument sizes are checked before the
 * clone.
 */
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

static const char planted[] = "#!/bin/sh\necho planted\nexit 42\n";

/* ---- exec errors are synchronous (pitfall 10) ---------------------------- */

TEST(missing_program_is_enoent_with_no_pid_and_no_zombie)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/nonexistent/prog"),
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    /* Only exec could have failed: even posix_spawn names the step. */
    ASSERT_STR_EQ(fl_step_name(e.step), "exec");
    ASSERT_STR_EQ(e.path, "/nonexistent/prog");
    /* No child at all, not even a zombie. */
    siginfo_t si = { 0 };
    ASSERT_EQ(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), -1);
    ASSERT_ERR(errno, ECHILD);
}

TEST(file_without_execute_permission_is_eacces)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "noexec", "#!/bin/sh\nexit 0\n", 0644);
    struct fl_cmd cmd = { .argv = ARGV(f), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    ASSERT_STR_EQ(fl_step_name(e.step), "exec");
    ASSERT_STR_EQ(e.path, f);
    /* No one may run it: the record says so, with the mode. */
    ASSERT_STR_EQ(e.detail, "no execute permission: mode 0644");
}

TEST(eacces_of_a_name_of_the_childs_own_is_not_explained_from_the_callers)
{
    /* /dev/stdin is the child's fd 0 in the child, the caller's here: a
     * file of the caller's would say something false. */
    char *d = t_tmpdir();
    char *f = t_write_file(d, "plain", "data\n", 0644);
    struct fl_cmd cmd = { .argv = ARGV("/dev/stdin"), .backend = BACKEND,
                          .stdio = { [0] = { .kind = FL_FILE, .path = f, .flags = O_RDONLY } } };
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, "");
}

/* A program named through one of the caller's fds: the clean child has
 * closed that fd by its exec, and the error says so and how to keep it. */
TEST(a_program_named_through_a_callers_fd_says_the_child_closed_it)
{
    NEEDS_CLOSE_OTHERS();
    int fd = open("/bin/true", O_RDONLY);  /* no FD_CLOEXEC: only closing removes it */
    ASSERT_SYS(fd);
    struct fl_cmd cmd = { .argv = ARGV(t_fmt("/proc/self/fd/%d", fd)), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, t_fmt("fd %d is closed in the child", fd));
    struct fl_fd_map keep[] = { { fd, fd } };
    cmd.fds = keep;
    cmd.nfds = 1;
    int st;
    t_run(&cmd, &st);
    close(fd);
    ASSERT_EXITED(st, 0);
}

/* The same name, the fd not the caller's: a pipe the library makes for
 * the spawn may take the number, and must not pass for the caller's. */
TEST(a_program_named_through_an_fd_the_caller_has_not_open_is_not_explained_so)
{
    int n = open("/dev/null", O_RDONLY | O_CLOEXEC);  /* the lowest free number */
    ASSERT_SYS(n);
    close(n);
    struct fl_cmd cmd = { .argv = ARGV(t_fmt("/dev/fd/%d", n)), .backend = BACKEND,
                          .stdio = { [1] = { .kind = FL_PIPE } } };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT(!strstr(e.detail, "closed in the child"));
}

TEST(directory_as_program_is_eacces)
{
    char *d = t_tmpdir();
    struct fl_cmd cmd = { .argv = ARGV(d), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, "a directory");
}

TEST(program_exiting_127_is_a_successful_spawn)
{
    struct fl_cmd cmd = { .argv = PROBE("exit", "127"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 127);

    struct fl_cmd sh = { .argv = ARGV("/bin/sh", "-c", "exit 127"),
                         .backend = BACKEND };
    SPAWN(&sh, &p);
    ASSERT_EXITED(t_wait(&p), 127);
}

TEST(exit_status_is_reported)
{
    for (int code = 0; code < 256; code += 51) {
        char s[8];
        snprintf(s, sizeof s, "%d", code);
        struct fl_cmd cmd = { .argv = PROBE("exit", s), .backend = BACKEND };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), code);
    }
}

TEST(bin_true_runs)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(argv_is_passed_verbatim)
{
    struct fl_cmd cmd = {
        .argv = ARGV(fl_test_probe, "args", "", "a b", "*", "$HOME", "'\"\\"),
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_get_num(out, "argc"), 7);
    ASSERT_STR_EQ(t_get(out, "arg 0"), fl_test_probe);
    ASSERT_STR_EQ(t_get(out, "arg 1"), "args");
    ASSERT_STR_EQ(t_get(out, "arg 2"), "");
    ASSERT_STR_EQ(t_get(out, "arg 3"), "a b");
    ASSERT_STR_EQ(t_get(out, "arg 4"), "*");
    ASSERT_STR_EQ(t_get(out, "arg 5"), "$HOME");
    ASSERT_STR_EQ(t_get(out, "arg 6"), "'\"\\");
}

TEST(path_field_is_executed_with_argv0_as_given)
{
    struct fl_cmd cmd = {
        .argv = ARGV("not-a-program", "args"),
        .path = fl_test_probe,
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_STR_EQ(t_get(out, "arg 0"), "not-a-program");
}

TEST(a_program_found_in_path_keeps_its_argv0)
{
    char *d = t_tmpdir();
    ASSERT_SYS(symlink(fl_test_probe, t_fmt("%s/fl-probe", d)));
    struct fl_cmd cmd = {
        .argv = ARGV("fl-probe", "args"),
        .env_set = (const char *const[]){ t_fmt("PATH=%s", d), NULL },
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_get(t_probe(&cmd), "arg 0"), "fl-probe");
}

TEST(path_field_without_slash_is_searched_too)
{
    struct fl_cmd cmd = {
        .argv = ARGV("my-name", "-c", "exit 4"),
        .path = "sh",
        .env_set = (const char *const[]){ "PATH=/nonexistent:/bin", NULL },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 4);
}

TEST(relative_program_with_slash_is_relative_to_child_cwd)
{
    char *d = t_tmpdir();
    t_write_file(d, "prog", "#!/bin/sh\necho ran-prog\n", 0755);
    struct fl_cmd cmd = {
        .argv = ARGV("./prog"),
        .cwd = d,
        .backend = BACKEND,
    };
    int st;
    char *out = t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
    ASSERT_STR_EQ(out, "ran-prog\n");
}

/* ---- scripts and interpreters (pitfalls 11, 12) -------------------------- */

TEST(script_with_shebang_runs)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "s.sh", "#!/bin/sh\necho \"hi $1\"\n", 0755);
    struct fl_cmd cmd = { .argv = ARGV(f, "there"), .backend = BACKEND };
    int st;
    char *out = t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
    ASSERT_STR_EQ(out, "hi there\n");
}

/* exec says EACCES for a script it may run whose interpreter it may not:
 * the detail names the interpreter and why, not the script's mode. */
TEST(an_interpreter_that_may_not_run_is_named_in_the_eacces)
{
    char *d = t_tmpdir();
    char *plain = t_write_file(d, "plain", "", 0644);
    char *f = t_write_file(d, "s.sh", t_fmt("#!%s\n", plain), 0755);
    struct fl_cmd cmd = { .argv = ARGV(f), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, t_fmt("interpreter \"%s\": no execute permission: mode 0644", plain));
    t_write_file(d, "s.sh", t_fmt("#!%s\n", d), 0755);
    e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, t_fmt("interpreter \"%s\": a directory", d));
}

TEST(missing_interpreter_is_enoent_naming_the_interpreter)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "s", "#!/nonexistent/interp -x\necho hi\n", 0755);
    struct fl_cmd cmd = { .argv = ARGV(f), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, f);
    ASSERT_STR_CONTAINS(e.detail, "/nonexistent/interp");
    char buf[512];
    fl_error_format(&e, buf, sizeof buf);
    ASSERT_STR_CONTAINS(buf, "/nonexistent/interp");
    ASSERT_STR_CONTAINS(buf, "No such file or directory");
}

/* A script whose interpreter is a script whose interpreter is missing:
 * exec says ENOENT for the first, and the detail names the one missing. */
TEST(missing_interpreter_of_an_interpreter_is_named)
{
    char *d = t_tmpdir();
    char *inner = t_write_file(d, "inner", "#!/nonexistent/interp\n", 0755);
    char *f = t_write_file(d, "s", t_fmt("#!%s\necho hi\n", inner), 0755);
    struct fl_cmd cmd = { .argv = ARGV(f), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, f);
    ASSERT_STR_EQ(e.detail, "interpreter \"/nonexistent/interp\" not found");
}

/* The same, where the middle interpreter is named relative to the
 * child's cwd: the one missing is named, not the one that is there. */
TEST(missing_interpreter_of_a_relative_interpreter_is_named)
{
    char *d = t_tmpdir();
    t_write_file(d, "inner", "#!/nonexistent/interp\n", 0755);
    t_write_file(d, "s", "#!inner\necho hi\n", 0755);
    struct fl_cmd cmd = { .argv = ARGV("./s"), .cwd = d, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, "interpreter \"/nonexistent/interp\" not found");
}

/* Explaining a failed exec reads the file's #! line: never from a FIFO,
 * whose data would be taken from its reader (or a device's, opened). */
TEST(a_failed_exec_of_a_fifo_leaves_its_data)
{
    char *f = t_fmt("%s/fifo", t_tmpdir());
    ASSERT_SYS(mkfifo(f, 0755));
    int fd = open(f, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    ASSERT_SYS(fd);
    ASSERT_EQ(write(fd, "data\n", 5), 5);
    struct fl_cmd cmd = { .argv = ARGV(f), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, "not a regular file");
    char buf[16];
    ASSERT_EQ(read(fd, buf, sizeof buf), 5);
    close(fd);
}

TEST(crlf_shebang_is_enoent_naming_the_interpreter)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "dos.sh", "#!/bin/sh\r\necho hi\r\n", 0755);
    struct fl_cmd cmd = { .argv = ARGV(f), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "/bin/sh");
    /* The carriage return is shown, escaped or not: it is the cause. */
    ASSERT(strstr(e.detail, "\\r") || strchr(e.detail, '\r'));
    ASSERT_STR_CONTAINS(e.detail, "(the file has CRLF line ends)");
}

/* An interpreter too long for the detail loses its middle, not the cause
 * at the end. */
TEST(a_long_crlf_interpreter_keeps_the_cause_in_the_detail)
{
    char *d = t_tmpdir();
    char line[200];
    snprintf(line, sizeof line, "#!/%0140d/sh\r\necho hi\r\n", 0);
    char *f = t_write_file(d, "dos.sh", line, 0755);
    struct fl_cmd cmd = { .argv = ARGV(f), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "interpreter \"/000");
    ASSERT_STR_CONTAINS(e.detail, "...");
    ASSERT_STR_CONTAINS(e.detail, "0/sh\\r\" not found (the file has CRLF line ends)");
}

TEST(script_without_shebang_is_enoexec_by_default)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "noshebang", "echo hi\n", 0755);
    struct fl_cmd cmd = { .argv = ARGV(f), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOEXEC, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, f);
}

TEST(script_without_shebang_runs_with_shell_fallback)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "noshebang", "echo \"hi $1 $#\"\n", 0755);
    struct fl_cmd cmd = {
        .argv = ARGV(f, "x"),
        .flags = FL_SHELL_FALLBACK,
        .backend = BACKEND,
    };
    int st;
    char *out = t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
    ASSERT_STR_EQ(out, "hi x 1\n");
}

TEST(shell_fallback_does_not_change_a_real_program)
{
    struct fl_cmd cmd = {
        .argv = PROBE("exit", "3"),
        .flags = FL_SHELL_FALLBACK,
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 3);
}

/* ---- PATH search (pitfall 13) -------------------------------------------- */

/* PATH=/noperm:/nonexec-dir:/usr/bin:/bin, as in pitfall 13. */
static const char *path13(char **nonexec_dir)
{
    char *d = t_tmpdir();
    char *noperm = t_fmt("%s/noperm", d);
    char *nx = t_fmt("%s/nonexec", d);
    ASSERT_SYS(mkdir(noperm, 0));
    ASSERT_SYS(mkdir(nx, 0755));
    t_write_file(nx, "tool", "#!/bin/sh\nexit 0\n", 0644);
    ASSERT_SYS(mkdir(t_fmt("%s/dirtool", nx), 0755)); /* a directory */
    *nonexec_dir = nx;
    return t_fmt("PATH=%s:%s:/usr/bin:/bin", noperm, nx);
}

TEST(path_search_finds_true_past_unusable_entries)
{
    /* As root, the unreadable directory would not be unreadable. */
    if (t_rerun_as_nobody())
        return;
    char *nx;
    const char *path = path13(&nx);
    struct fl_cmd cmd = {
        .argv = ARGV("true"),
        .env_set = (const char *const[]){ path, NULL },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);

    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_STR_EQ(buf, "/usr/bin/true");
}

TEST(path_search_with_only_a_non_executable_match_is_eacces)
{
    /* As root, the unreadable directory would not be unreadable. */
    if (t_rerun_as_nobody())
        return;
    char *nx;
    const char *path = path13(&nx);
    struct fl_cmd cmd = {
        .argv = ARGV("tool"),
        .env_set = (const char *const[]){ path, NULL },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    char buf[4096];
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, NULL), EACCES);
}

TEST(path_search_for_an_absent_program_is_enoent)
{
    /* As root, the unreadable directory would not be unreadable. */
    if (t_rerun_as_nobody())
        return;
    char *nx;
    const char *path = path13(&nx);
    struct fl_cmd cmd = {
        .argv = ARGV("fl-absent-program"),
        .env_set = (const char *const[]){ path, NULL },
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.path, "fl-absent-program");
    char buf[4096];
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, NULL), ENOENT);
}

TEST(path_search_skips_a_directory_named_like_the_program)
{
    char *nx;
    const char *path13v = path13(&nx);
    char *d = t_tmpdir();
    t_write_file(d, "dirtool", "#!/bin/sh\necho real-dirtool\n", 0755);
    /* nx/dirtool is a directory; d/dirtool is the program. */
    const char *path = t_fmt("PATH=%s:%s", strchr(path13v, '=') + 1, d);
    struct fl_cmd cmd = {
        .argv = ARGV("dirtool"),
        .env_set = (const char *const[]){ path, NULL },
        .backend = BACKEND,
    };
    int st;
    char *out = t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
    ASSERT_STR_EQ(out, "real-dirtool\n");
}

TEST(path_search_takes_the_first_match)
{
    char *a = t_tmpdir(), *b = t_tmpdir();
    t_write_file(a, "fltool", "#!/bin/sh\necho A\n", 0755);
    t_write_file(b, "fltool", "#!/bin/sh\necho B\n", 0755);
    struct fl_cmd cmd = {
        .argv = ARGV("fltool"),
        .env_set = (const char *const[]){ t_fmt("PATH=%s:%s", a, b), NULL },
        .backend = BACKEND,
    };
    int st;
    ASSERT_STR_EQ(t_run(&cmd, &st), "A\n");
    ASSERT_EXITED(st, 0);
    cmd.env_set = (const char *const[]){ t_fmt("PATH=%s:%s", b, a), NULL };
    ASSERT_STR_EQ(t_run(&cmd, &st), "B\n");
}

TEST(path_search_goes_on_past_missing_dirs_and_files_as_dirs)
{
    struct fl_cmd cmd = {
        .argv = ARGV("true"),
        .env_set = (const char *const[]){
            "PATH=/nonexistent-dir:/etc/passwd:/etc/passwd/x:/usr/bin:/bin",
            NULL },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
}

/* ---- empty and relative PATH entries (pitfall 14) ------------------------ */

static void assert_runs_real_true(const char *path, const char *cwd)
{
    struct fl_cmd cmd = {
        .argv = ARGV("true"),
        .cwd = cwd,
        .env_set = (const char *const[]){ path, NULL },
        .backend = BACKEND,
    };
    int st;
    char *out = t_run(&cmd, &st);
    ASSERT_STR_EQ(out, "");
    ASSERT_EXITED(st, 0);
}

TEST(empty_path_entry_is_skipped_by_default)
{
    char *d = t_tmpdir();
    t_write_file(d, "true", planted, 0755);
    assert_runs_real_true("PATH=:/usr/bin:/bin", d);
    assert_runs_real_true("PATH=/usr/bin::/bin", d);
    /* A trailing empty entry only: nothing else to find. */
    struct fl_cmd cmd = {
        .argv = ARGV("true"),
        .cwd = d,
        .env_set = (const char *const[]){ "PATH=/nonexistent:", NULL },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
}

TEST(dot_path_entry_is_skipped_by_default)
{
    char *d = t_tmpdir();
    t_write_file(d, "true", planted, 0755);
    assert_runs_real_true("PATH=.:/usr/bin:/bin", d);
    struct fl_cmd cmd = {
        .argv = ARGV("true"),
        .cwd = d,
        .env_set = (const char *const[]){ "PATH=.", NULL },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    char buf[4096];
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, NULL), ENOENT);
}

TEST(relative_path_entry_is_skipped_by_default)
{
    char *d = t_tmpdir();
    ASSERT_SYS(mkdir(t_fmt("%s/bin", d), 0755));
    t_write_file(t_fmt("%s/bin", d), "true", planted, 0755);
    assert_runs_real_true("PATH=bin:/usr/bin:/bin", d);
}

TEST(relative_path_entries_are_used_with_path_relative)
{
    char *d = t_tmpdir();
    ASSERT_SYS(mkdir(t_fmt("%s/bin", d), 0755));
    t_write_file(d, "true", planted, 0755);
    t_write_file(t_fmt("%s/bin", d), "true", planted, 0755);
    static const char *paths[] = { "PATH=:/usr/bin", "PATH=.:/usr/bin",
                                   "PATH=bin:/usr/bin" };
    for (size_t i = 0; i < 3; i++) {
        /* Relative to the child's cwd, not the parent's. */
        struct fl_cmd cmd = {
            .argv = ARGV("true"),
            .cwd = d,
            .flags = FL_PATH_RELATIVE,
            .env_set = (const char *const[]){ paths[i], NULL },
            .backend = BACKEND,
        };
        int st;
        char *out = t_run(&cmd, &st);
        ASSERT_STR_EQ(out, "planted\n");
        ASSERT_EXITED(st, 42);
    }
}

TEST(unset_path_searches_cs_path)
{
    char cs[1024];
    ASSERT(confstr(_CS_PATH, cs, sizeof cs) > 0);
    struct fl_cmd cmd = {
        .argv = ARGV("sh", "-c", "exit 5"),
        .env_unset = (const char *const[]){ "PATH", NULL },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 5);

    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    /* The first directory of _CS_PATH that has sh. */
    char *dir = strtok(cs, ":");
    while (dir && access(t_fmt("%s/sh", dir), X_OK) != 0)
        dir = strtok(NULL, ":");
    ASSERT(dir);
    ASSERT_STR_EQ(buf, t_fmt("%s/sh", dir));
}

TEST(env_clear_searches_cs_path)
{
    struct fl_cmd cmd = {
        .argv = ARGV("sh", "-c", "exit 6"),
        .flags = FL_ENV_CLEAR,
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 6);
}

/* ---- the child's PATH, not the parent's (pitfall 15) --------------------- */

TEST(path_comes_from_the_child_environment)
{
    char *x = t_tmpdir(), *y = t_tmpdir();
    t_write_file(x, "fl-only-in-x", "#!/bin/sh\necho from-x\n", 0755);
    t_write_file(y, "fl-only-in-y", "#!/bin/sh\necho from-y\n", 0755);
    char *old = getenv("PATH") ? t_strdup(getenv("PATH")) : NULL;
    ASSERT_SYS(setenv("PATH", t_fmt("/usr/bin:/bin:%s", y), 1));

    /* The child's PATH finds x's program, which the parent's would not. */
    struct fl_cmd cmd = {
        .argv = ARGV("fl-only-in-x"),
        .env_set = (const char *const[]){ t_fmt("PATH=%s", x), NULL },
        .backend = BACKEND,
    };
    int st;
    ASSERT_STR_EQ(t_run(&cmd, &st), "from-x\n");
    ASSERT_EXITED(st, 0);
    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_STR_EQ(buf, t_fmt("%s/fl-only-in-x", x));

    /* The parent's PATH finds y's program, the child's does not. */
    struct fl_cmd cmd2 = {
        .argv = ARGV("fl-only-in-y"),
        .env_set = (const char *const[]){ "PATH=/usr/bin:/bin", NULL },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd2, ENOENT, FL_STEP_EXEC);

    /* An explicit .env is the child's environment too. */
    struct fl_cmd cmd3 = {
        .argv = ARGV("fl-only-in-x"),
        .env = (char *const[]){ t_fmt("PATH=%s", x), NULL },
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_run(&cmd3, &st), "from-x\n");

    /* And with no PATH in the parent at all. */
    ASSERT_SYS(unsetenv("PATH"));
    ASSERT_STR_EQ(t_run(&cmd, &st), "from-x\n");
    if (old)
        setenv("PATH", old, 1);
}

/* ---- long PATH (pitfall 16) ---------------------------------------------- */

/* "PATH=" + 262 components of 250 characters + ":/usr/bin:/bin": 64 KiB. */
static char *long_path(void)
{
    size_t n = 262, comp = 250;
    char *s = t_keep(malloc(5 + n * (comp + 1) + 32));
    char *p = stpcpy(s, "PATH=");
    for (size_t i = 0; i < n; i++) {
        p += sprintf(p, "/nonexistent-%03zu-", i);
        size_t used = strlen("/nonexistent-000-");
        memset(p, 'x', comp - used);
        p += comp - used;
        *p++ = ':';
    }
    strcpy(p, "/usr/bin:/bin");
    return s;
}

TEST(a_64k_path_is_searched)
{
    char *path = long_path();
    ASSERT_GE(strlen(path), 64 * 1024);
    struct fl_cmd cmd = {
        .argv = ARGV("true"),
        .env_set = (const char *const[]){ path, NULL },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    /* Not found anywhere in it. */
    cmd.argv = ARGV("fl-absent-program");
    SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
}

struct small_stack_arg {
    char *path;
    int r, status, r_absent;
};

static void *spawn_on_small_stack(void *argp)
{
    struct small_stack_arg *a = argp;
    struct fl_cmd cmd = {
        .argv = ARGV("true"),
        .env_set = (const char *const[]){ a->path, NULL },
        .backend = BACKEND,
    };
    struct fl_proc p;
    a->r = fl_spawn(&cmd, &p, NULL);
    if (a->r == 0) {
        fl_wait(&p, -1, &a->status);
        fl_close(&p);
    }
    cmd.argv = ARGV("fl-absent-program");
    a->r_absent = fl_spawn(&cmd, &p, NULL);
    if (a->r_absent == 0)
        t_kill_wait(&p);
    return NULL;
}

TEST(a_64k_path_is_searched_from_a_thread_with_a_64k_stack)
{
    NEEDS_CLOSE_OTHERS();
    /* Everything the search needs must live in the parent's heap: neither
     * the parent's preparation nor the child may put PATH on this stack. */
    struct small_stack_arg a = { .path = long_path() };
    pthread_attr_t attr;
    pthread_attr_init(&attr);
#if defined(__SANITIZE_ADDRESS__)
    size_t size = 256 * 1024; /* ASan's redzones make frames larger */
#else
    size_t size = 64 * 1024;
#endif
    ASSERT_OK(pthread_attr_setstacksize(&attr, size));
    pthread_t t;
    ASSERT_OK(pthread_create(&t, &attr, spawn_on_small_stack, &a));
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    ASSERT_OK(a.r);
    ASSERT_EXITED(a.status, 0);
    ASSERT_ERR(a.r_absent, ENOENT);
}

/* ---- fl_resolve ---------------------------------------------------------- */

TEST(resolve_returns_the_path_that_would_run)
{
    struct fl_cmd cmd = {
        .argv = ARGV("sh"),
        .env_set = (const char *const[]){ "PATH=/nonexistent:/bin", NULL },
        .backend = BACKEND,
    };
    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_STR_EQ(buf, "/bin/sh");

    /* A name with a slash is used as is. */
    cmd.argv = ARGV(fl_test_probe);
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_STR_EQ(buf, fl_test_probe);
    /* .path wins over argv[0]. */
    cmd.argv = ARGV("whatever");
    cmd.path = "/bin/sh";
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_STR_EQ(buf, "/bin/sh");
}

TEST(resolve_checks_a_relative_candidate_against_cwd)
{
    char *d = t_tmpdir();
    ASSERT_SYS(mkdir(t_fmt("%s/bin", d), 0755));
    t_write_file(t_fmt("%s/bin", d), "fl-rel-tool", planted, 0755);
    struct fl_cmd cmd = {
        .argv = ARGV("fl-rel-tool"),
        .cwd = d,
        .flags = FL_PATH_RELATIVE,
        .env_set = (const char *const[]){ "PATH=bin:/usr/bin", NULL },
        .backend = BACKEND,
    };
    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    size_t n = strlen(buf);
    ASSERT(n >= 15 && strcmp(buf + n - 15, "bin/fl-rel-tool") == 0);
    /* Without the flag the relative entry does not count. */
    cmd.flags = 0;
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, NULL), ENOENT);
    /* Nor without the cwd that makes it exist. */
    cmd.flags = FL_PATH_RELATIVE;
    cmd.cwd = "/";
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, NULL), ENOENT);
}

TEST(an_empty_path_entry_gives_a_path_that_names_the_file_again)
{
    /* "./name", not the bare name execvp() gives exec: fl_resolve()'s
     * answer, used as .path under another PATH, runs that same file. */
    char *d = t_tmpdir();
    t_write_file(d, "fl-dollar0", "#!/bin/sh\necho \"$0\"\n", 0755);
    ASSERT_SYS(chdir(d));
    struct fl_cmd cmd = {
        .argv = ARGV("fl-dollar0"),
        .flags = FL_PATH_RELATIVE,
        .env_set = (const char *const[]){ "PATH=/nonexistent:", NULL },
        .backend = BACKEND,
    };
    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_STR_EQ(buf, "./fl-dollar0");
    int status;
    char *out = t_run(&cmd, &status);
    ASSERT_EXITED(status, 0);
    ASSERT_STR_EQ(out, "./fl-dollar0\n");
    struct fl_cmd again = { .argv = ARGV("x"), .path = buf, .backend = BACKEND,
                            .env_set = (const char *const[]){ "PATH=/usr/bin:/bin", NULL } };
    out = t_run(&again, &status);
    ASSERT_EXITED(status, 0);
    ASSERT_STR_EQ(out, "./fl-dollar0\n");
}

TEST(resolve_with_a_small_buffer_is_erange)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/sh"), .backend = BACKEND };
    char buf[7]; /* "/bin/sh" needs 8 */
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, NULL), ERANGE);
    char ok[8];
    ASSERT_OK(fl_resolve(&cmd, ok, sizeof ok, NULL));
    ASSERT_STR_EQ(ok, "/bin/sh");
}

TEST(resolve_reports_errors_like_spawn)
{
    char buf[4096];
    struct fl_error e;
    struct fl_cmd cmd = {
        .argv = ARGV("/nonexistent/prog"),
        .backend = BACKEND,
    };
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, &e), ENOENT);
    ASSERT_EQ(e.err, ENOENT);
    struct fl_cmd bad = { .argv = ARGV(NULL), .backend = BACKEND };
    ASSERT_ERR(fl_resolve(&bad, buf, sizeof buf, &e), EINVAL);
}

/* ---- argument sizes (pitfall 18) ----------------------------------------- */

static char *string_of(size_t n, char c)
{
    char *s = t_keep(malloc(n + 1));
    memset(s, c, n);
    s[n] = 0;
    return s;
}

TEST(an_argument_of_131071_bytes_is_accepted)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true", string_of(131071, 'x')),
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(an_argument_of_131072_bytes_is_e2big_naming_max_arg_strlen)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true", "a", string_of(131072, 'x')),
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "MAX_ARG_STRLEN");
}

TEST(an_environment_string_of_131072_bytes_is_e2big)
{
    char *var = string_of(131072, 'v');
    memcpy(var, "BIG=", 4);
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .env_set = (const char *const[]){ var, NULL },
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "MAX_ARG_STRLEN");
}

/* An atfork handler may change the environment (musl's setenv() frees
 * the string it replaces). No backend runs one (the fork backend's child
 * is made by clone(), not fork()), and the E2BIG's detail names the
 * variable as measured, never reading the string again. */
static char *atfork_var;
static void rename_at_fork(void)
{
    memcpy(atfork_var, "FL_T_NOT=", 9);
}

TEST(an_e2big_names_the_variable_an_atfork_handler_changed_after_the_measure)
{
    atfork_var = string_of(32 * (size_t)sysconf(_SC_PAGESIZE), 'v');
    memcpy(atfork_var, "FL_T_BIG=", 9);
    ASSERT_OK(putenv(atfork_var));
    ASSERT_OK(pthread_atfork(NULL, rename_at_fork, NULL));
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "environment variable FL_T_BIG is");
    ASSERT_OK(unsetenv("FL_T_NOT"));
}

/* What execve() itself says of file with argv, in a forked child. */
static int execve_errno(const char *file, char *const argv[])
{
    pid_t pid = fork();
    ASSERT_SYS(pid);
    if (pid == 0) {
        execve(file, argv, (char *const[]){ NULL });
        _exit(errno);
    }
    int st;
    ASSERT_SYS(waitpid(pid, &st, 0));
    ASSERT(WIFEXITED(st));
    return WEXITSTATUS(st);
}

TEST(a_missing_or_forbidden_program_with_too_long_an_argument_gets_the_errno_exec_gives)
{
    /* The kernel looks for the file before it counts the arguments (but
     * Linux 5.9 to 6.7 counted first): ENOENT or EACCES, not E2BIG, where
     * exec says so. */
    char *d = t_tmpdir();
    char *text = t_write_file(d, "text", "x\n", 0644);
    const char *files[] = { t_fmt("%s/nope", d), text, d };
    for (size_t i = 0; i < 3; i++) {
        char *argv[] = { (char *)files[i], string_of(131072, 'x'), NULL };
        struct fl_cmd cmd = { .argv = argv, .flags = FL_ENV_CLEAR, .backend = BACKEND };
        int expected = execve_errno(files[i], argv);
        ASSERT(expected == ENOENT || expected == EACCES || expected == E2BIG);
        struct fl_error e = SPAWN_FAILS(&cmd, expected, FL_STEP_EXEC);
        ASSERT_STR_EQ(e.path, files[i]);
        char buf[4096];
        ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, NULL), expected);
    }
}

TEST(too_long_an_argument_for_a_script_whose_interpreter_is_missing_is_e2big)
{
    /* The kernel counts the lists once it has the file, before it looks
     * at the #! line: E2BIG, on every backend and from fl_resolve(), even
     * where the interpreter would have been missing (ENOENT) or the line
     * unreadable (ENOEXEC). With a stdout file too, which the posix_spawn
     * backend cannot tell from exec otherwise. */
    char *d = t_tmpdir();
    t_write_file(d, "noint", "#!/nonexistent/interp\n", 0755);
    t_write_file(d, "noname", "#!\n", 0755);
    const char *names[] = { "noint", "noname", t_fmt("%s/noint", d) };
    for (size_t i = 0; i < 3; i++) {
        struct fl_cmd cmd = {
            .argv = ARGV((char *)names[i], string_of(199999, 'x')),
            .env_set = (const char *const[]){ t_fmt("PATH=%s", d), NULL },
            .flags = FL_ENV_CLEAR,
            .stdio = { [1] = { .kind = FL_FILE, .path = t_fmt("%s/out", d) } },
            .backend = BACKEND,
        };
        struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
        ASSERT_EQ(e.step, FL_STEP_EXEC);   /* not FL_STEP_SPAWN either */
        ASSERT_EQ(e.index, 0);
        ASSERT_STR_CONTAINS(e.detail, "MAX_ARG_STRLEN");
        char buf[4096];
        ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, &e), E2BIG);
        ASSERT_STR_CONTAINS(e.detail, "MAX_ARG_STRLEN");
    }
}

/* n arguments of 100000 bytes each, with an empty environment. */
static char **many_args(size_t n)
{
    char **argv = t_keep(calloc(n + 2, sizeof *argv));
    argv[0] = "/bin/true";
    char *s = string_of(100000, 'y');
    for (size_t i = 1; i <= n; i++)
        argv[i] = s;
    return argv;
}

/* The kernel's limit on argv and envp together: a quarter of the stack
 * limit, at least 128 KiB (the kernel's ARG_MAX) and at most 6 MiB.
 * sysconf(_SC_ARG_MAX) is close to that on glibc but the constant 131072
 * on musl. */
static long kernel_arg_max(void)
{
    struct rlimit st;
    ASSERT_SYS(getrlimit(RLIMIT_STACK, &st));
    rlim_t quarter = st.rlim_cur == RLIM_INFINITY ? (rlim_t)-1 : st.rlim_cur / 4;
    if (quarter < 128 * 1024)
        quarter = 128 * 1024;
    if (quarter > 6 * 1024 * 1024)
        quarter = 6 * 1024 * 1024;
    return (long)quarter;
}

TEST(arguments_just_below_arg_max_are_accepted)
{
    long argmax = kernel_arg_max();
    /* Leave room for the pointers and the strings the kernel adds. */
    size_t n = (size_t)(argmax - 64 * 1024) / 100001;
    struct fl_cmd cmd = {
        .argv = many_args(n),
        .flags = FL_ENV_CLEAR,
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(arguments_above_arg_max_are_e2big)
{
    long argmax = kernel_arg_max();
    size_t n = (size_t)argmax / 100001 + 2;
    struct fl_cmd cmd = {
        .argv = many_args(n),
        .flags = FL_ENV_CLEAR,
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT(e.detail[0] != 0);
    /* The detail says the total is too large, not one string. */
    ASSERT_NULL(strstr(e.detail, "MAX_ARG_STRLEN"));
}

/* ---- ARG_MAX counts the file name exec is given ---------------------------- */

/* argv for the program named prog, run with the environment env alone,
 * that exec of file counts as exactly bytes: its strings with their NULs,
 * one pointer each, and file with its NUL. */
static char **args_totalling(const char *prog, const char *env, const char *file, size_t bytes)
{
    enum { CHUNK = 100000, COST = sizeof(char *) + 1 };   /* a string's bytes beyond its length */
    size_t fixed = strlen(prog) + COST + strlen(env) + COST + strlen(file) + 1;
    ASSERT(bytes > fixed + 2 * COST);
    size_t rem = bytes - fixed, n = 1;
    char **argv = t_keep(calloc(rem / CHUNK + 3, sizeof *argv));
    char *chunk = string_of(CHUNK, 'y');
    argv[0] = (char *)prog;
    while (rem > 0) {
        size_t len = rem - COST > CHUNK ? CHUNK : rem - COST;
        if (rem - COST - len > 0 && rem - COST - len < COST)
            len -= COST;   /* leave room for one more string */
        argv[n++] = chunk + (CHUNK - len);
        rem -= len + COST;
    }
    return argv;
}

/* A symlink to /bin/true named fl-true in dir. */
static char *true_in(const char *dir)
{
    char *f = t_fmt("%s/fl-true", dir);
    ASSERT_SYS(symlink("/bin/true", f));
    return f;
}

TEST(arg_max_counts_the_path_candidate_at_the_boundary)
{
    /* The kernel counts "<dir>/fl-true", not "fl-true": one byte over with
     * it is exec's E2BIG, and the detail says so; exactly at the limit
     * runs. */
    char *d = t_tmpdir();
    char *file = true_in(d);
    const char *env[] = { t_fmt("PATH=%s", d), NULL };
    size_t limit = (size_t)kernel_arg_max();
    struct fl_cmd cmd = { .argv = args_totalling("fl-true", env[0], file, limit),
                          .flags = FL_ENV_CLEAR, .env_set = env, .backend = BACKEND };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));

    cmd.argv = args_totalling("fl-true", env[0], file, limit + 1);
    struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "ARG_MAX");
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, &e), E2BIG);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
}

TEST(e2big_of_the_shell_fallback_says_so)
{
    /* Lists that fit the file's own exec (which says ENOEXEC) but not
     * /bin/sh's, which has the file before the arguments: exec's E2BIG,
     * with a detail that names the fallback. */
    char *d = t_tmpdir();
    char *file = t_write_file(d, "f", "exit 0\n", 0755);
    const char *env[] = { "E=1", NULL };
    size_t limit = (size_t)kernel_arg_max();
    struct fl_cmd cmd = { .argv = args_totalling("f", env[0], file, limit - 10), .path = file,
                          .flags = FL_ENV_CLEAR | FL_SHELL_FALLBACK, .env_set = env,
                          .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "FL_SHELL_FALLBACK");
}

TEST(e2big_from_the_interpreter_a_script_line_adds_says_so)
{
    /* Lists that fit the script's own exec, which the kernel then grows
     * by the #! line's interpreter and the script's path: exec's E2BIG,
     * and the detail says what grew, not the shell fallback. */
    char *d = t_tmpdir();
    char *file = t_write_file(d, "f", "#!/bin/sh\nexit 0\n", 0755);
    const char *env[] = { "E=1", NULL };
    size_t limit = (size_t)kernel_arg_max();
    for (int fallback = 0; fallback < 2; fallback++) {
        struct fl_cmd cmd = { .argv = args_totalling("f", env[0], file, limit - 4), .path = file,
                              .flags = FL_ENV_CLEAR | (fallback ? FL_SHELL_FALLBACK : 0),
                              .env_set = env, .backend = BACKEND };
        struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
        ASSERT_STR_CONTAINS(e.detail, "#! line");
    }
}

TEST(arg_max_is_judged_for_the_candidate_exec_finds)
{
    /* PATH=<long>:<short>. With the short candidate the lists fit, with
     * the long one they are one byte over: which counts is the file exec
     * finds. */
    char *shortd = t_tmpdir();
    char *longd = t_fmt("%s/%s", t_tmpdir(), string_of(100, 'l'));
    ASSERT_SYS(mkdir(longd, 0755));
    const char *env[] = { t_fmt("PATH=%s:%s", longd, shortd), NULL };
    size_t limit = (size_t)kernel_arg_max();
    char *in_short = t_fmt("%s/fl-true", shortd), *in_long = t_fmt("%s/fl-true", longd);
    struct fl_cmd cmd = { .argv = args_totalling("fl-true", env[0], in_short, limit),
                          .flags = FL_ENV_CLEAR, .env_set = env, .backend = BACKEND };
    ASSERT_GT(strlen(in_long), strlen(in_short));

    /* Found in the short entry: it runs, whatever the long one would. */
    true_in(shortd);
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_STR_EQ(buf, in_short);

    /* Found in the long entry: exec says E2BIG for it, and so does
     * fl_resolve(), naming it. */
    true_in(longd);
    struct fl_error e = SPAWN_FAILS(&cmd, E2BIG, FL_STEP_EXEC);
    ASSERT_EQ(e.index, 0);
    ASSERT_STR_EQ(e.path, in_long);
    ASSERT_STR_CONTAINS(e.detail, "ARG_MAX");
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, &e), E2BIG);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
    ASSERT_EQ(e.index, 0);
    ASSERT_STR_EQ(e.path, in_long);
    ASSERT_STR_CONTAINS(e.detail, "ARG_MAX");
}

/* The program is open for writing (here by the test itself, for good):
 * exec fails with ETXTBSY, reported as such, at once or after the retries. */
TEST(a_program_open_for_writing_is_etxtbsy_at_exec)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "prog", "#!/bin/sh\nexit 0\n", 0755);
    int w = open(f, O_WRONLY | O_CLOEXEC);
    ASSERT_SYS(w);
    struct fl_cmd cmd = { .argv = ARGV(f), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ETXTBSY, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, f);
    cmd.flags = FL_RETRY_ETXTBSY;
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_PREPARE);
    else
        SPAWN_FAILS(&cmd, ETXTBSY, FL_STEP_EXEC);
    close(w);
}

/* Whether a child of this process is asleep (state S in /proc/PID/stat):
 * a child waiting between exec retries is. */
static bool a_child_sleeps(void)
{
    bool found = false;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && !found && (de = readdir(d))) {
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
        int fd = de->d_name[0] >= '1' && de->d_name[0] <= '9'
                     ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (fd >= 0)
            close(fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        char state, *end = strrchr(buf, ')');
        int ppid;
        found = end && sscanf(end + 1, " %c %d", &state, &ppid) == 2 &&
                ppid == getpid() && state == 'S';
    }
    if (d)
        closedir(d);
    return found;
}

/* Closes the writer once the child is seen waiting to retry, or after
 * 30000 looks, so that a child that never waits fails the case (its spawn
 * reports ETXTBSY) instead of hanging it. */
static void *close_when_the_child_waits(void *arg)
{
    for (int i = 0; i < 30000 && !a_child_sleeps(); i++)
        nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
    close(*(int *)arg);
    return NULL;
}

/* Runs a program the test holds open for writing, with FL_RETRY_ETXTBSY
 * and extra flags; the writer lets go once the child waits to retry. */
static void run_once_the_writer_lets_go(unsigned flags, int code)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "prog", t_fmt("#!/bin/sh\nexit %d\n", code), 0755);
    struct fl_cmd cmd = { .argv = ARGV(f), .flags = FL_RETRY_ETXTBSY | flags,
                          .backend = BACKEND };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    int w = open(f, O_WRONLY | O_CLOEXEC);
    ASSERT_SYS(w);
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, close_when_the_child_waits, &w));
    struct fl_proc p;
    SPAWN(&cmd, &p);
    pthread_join(t, NULL);
    ASSERT_EXITED(t_wait(&p), code);
}

/* Pitfall 20: the writer closes the file while the child waits to retry. */
TEST(retry_etxtbsy_runs_the_program_once_the_writer_closes_it)
{
    run_once_the_writer_lets_go(0, 3);
}

/* With FL_KEEP_FDS the child holds its own copy of the caller's O_CLOEXEC
 * write fd until exec; the retry must not wait on itself. */
TEST(retry_etxtbsy_with_keep_fds_does_not_wait_on_its_own_copy)
{
    run_once_the_writer_lets_go(FL_KEEP_FDS, 5);
}

/* The program named through one of the caller's O_CLOEXEC fds, and still
 * open for writing: the retries close that fd in the child (as exec
 * would), so they no longer find the path. The error stays ETXTBSY. */
TEST(retry_etxtbsy_through_a_closed_fd_path_reports_etxtbsy)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "prog", "#!/bin/sh\nexit 0\n", 0755);
    int w = open(f, O_WRONLY | O_CLOEXEC);
    ASSERT_SYS(w);
    int r = open(f, O_RDONLY | O_CLOEXEC);
    ASSERT_SYS(r);
    struct fl_cmd cmd = { .argv = ARGV(t_fmt("/proc/self/fd/%d", r)),
                          .flags = FL_RETRY_ETXTBSY | FL_KEEP_FDS,
                          .backend = BACKEND };
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        SPAWN_FAILS(&cmd, ENOTSUP, FL_STEP_PREPARE);
    else
        SPAWN_FAILS(&cmd, ETXTBSY, FL_STEP_EXEC);
    close(r);
    close(w);
}
