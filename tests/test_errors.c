/*
 * test_errors.c: every failure names its step, index, errno and path; a
 * malformed command is EINVAL before anything starts; the record formats
 * for people.
 */
#include "test.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- steps in the child -------------------------------------------------- */

TEST(chdir_to_a_missing_dir_names_step_and_path)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .cwd = "/nope",
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_CHDIR);
    if (e.step == FL_STEP_CHDIR) {
        ASSERT_STR_EQ(e.path, "/nope");
        ASSERT_EQ(e.index, -1);
        char buf[256];
        ASSERT_STR_EQ(fl_error_format(&e, buf, sizeof buf),
                      "chdir \"/nope\": No such file or directory");
    }
}

TEST(chdir_to_a_file_is_enotdir)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .cwd = "/etc/passwd",
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, ENOTDIR, FL_STEP_CHDIR);
}

TEST(chdir_runs_before_exec_so_exec_errors_come_second)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/nonexistent/prog"),
        .cwd = "/nope",
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, ENOENT, FL_STEP_CHDIR);
}

TEST(exec_error_formats_with_the_program)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/nonexistent/prog"),
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    if (e.step == FL_STEP_EXEC) {
        char buf[256];
        ASSERT_STR_EQ(fl_error_format(&e, buf, sizeof buf),
                      "exec \"/nonexistent/prog\": No such file or directory");
    }
}

TEST(open_of_a_missing_stdin_file_names_fd_0)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { [0] = { .kind = FL_FILE, .path = "/nope/in" } },
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_OPEN);
    if (e.step == FL_STEP_OPEN) {
        ASSERT_EQ(e.index, 0);
        ASSERT_STR_EQ(e.path, "/nope/in");
        char buf[256];
        ASSERT_STR_CONTAINS(fl_error_format(&e, buf, sizeof buf),
                            "open \"/nope/in\": No such file or directory");
    }
}

TEST(open_errors_name_the_child_fd)
{
    for (int fd = 1; fd < 3; fd++) {
        struct fl_cmd cmd = {
            .argv = ARGV("/bin/true"),
            .backend = BACKEND,
        };
        cmd.stdio[fd] =
            (struct fl_stdio){ .kind = FL_FILE, .path = "/nope/out" };
        struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_OPEN);
        if (e.step == FL_STEP_OPEN)
            ASSERT_EQ(e.index, fd);
    }
}

TEST(open_error_for_a_directory_written)
{
    char *d = t_tmpdir();
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { [1] = { .kind = FL_FILE, .path = d } },
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, EISDIR, FL_STEP_OPEN);
    if (e.step == FL_STEP_OPEN)
        ASSERT_EQ(e.index, 1);
}

TEST(open_of_a_relative_file_fails_after_chdir)
{
    char *d = t_tmpdir();
    /* Relative to the child's cwd, where "sub" does not exist. */
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .cwd = d,
        .stdio = { [1] = { .kind = FL_FILE, .path = "sub/out" } },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, ENOENT, FL_STEP_OPEN);
}

TEST(rlimit_with_an_invalid_resource_names_its_index)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .rlimits = (struct fl_rlimit[]){ { RLIMIT_CORE, 0, 0 },
                                         { 999, 1, 1 } },
        .nrlimits = 2,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_RLIMIT);
    ASSERT_EQ(e.index, 1);
    ASSERT_STR_CONTAINS(e.detail, "resource 999");
}

TEST(rlimit_soft_above_hard_names_its_index)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .rlimits = (struct fl_rlimit[]){ { RLIMIT_NOFILE, 200, 100 } },
        .nrlimits = 1,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, EINVAL, FL_STEP_RLIMIT);
    ASSERT_EQ(e.index, 0);
    ASSERT_STR_EQ(e.path, "NOFILE");
    ASSERT_STR_EQ(e.detail, "soft limit 200 over the hard limit 100");
}

TEST(rlimit_above_what_is_allowed_is_eperm)
{
    /* Above fs.nr_open even root may not raise RLIMIT_NOFILE; as another
     * user, raising the hard limit is EPERM too. */
    unsigned long long nr_open = 1048576;
    FILE *f = fopen("/proc/sys/fs/nr_open", "re");
    if (f) {
        if (fscanf(f, "%llu", &nr_open) != 1)
            nr_open = 1048576;
        fclose(f);
    }
    struct rlimit cur;
    getrlimit(RLIMIT_NOFILE, &cur);
    rlim_t high = geteuid() == 0 ? (rlim_t)nr_open + 1 : RLIM_INFINITY;
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .rlimits = (struct fl_rlimit[]){ { RLIMIT_CORE, 0, 0 },
                                         { RLIMIT_CORE, 0, 0 },
                                         { RLIMIT_NOFILE, high, high } },
        .nrlimits = 3,
        .backend = BACKEND,
    };
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, EPERM, FL_STEP_RLIMIT);
    ASSERT_EQ(e.index, 2);
}

TEST(dup_to_a_child_fd_above_the_nofile_limit_names_the_fd)
{
    /* The child's own limit counts, and it is checked before anything
     * starts, so every backend says so the same way. */
    int f = t_file_at(20, true);
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .rlimits = (struct fl_rlimit[]){ { RLIMIT_NOFILE, 10, 10 } },
        .nrlimits = 1,
        .fds = (struct fl_fd_map[]){ { 3, 20 }, { 50, 20 } },
        .nfds = 2,
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, EBADF, FL_STEP_DUP);
    ASSERT_EQ(e.index, 50);
    close(f);
}

/* ---- EINVAL before anything starts --------------------------------------- */

TEST(null_command_is_einval)
{
    struct fl_proc p;
    struct fl_error e;
    memset(&p, 0x5a, sizeof p);
    ASSERT_ERR(fl_spawn(NULL, &p, &e), EINVAL);
    ASSERT_EQ(e.err, EINVAL);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
    ASSERT_EQ(p.pid, 0);
    ASSERT_EQ(p.pidfd, -1);
}

TEST(null_argv_is_einval)
{
    struct fl_cmd cmd = { .backend = BACKEND };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(empty_argv_is_einval)
{
    struct fl_cmd cmd = { .argv = (char *const[]){ NULL }, .backend = BACKEND };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    /* Even with .path set: argv[0] must be present. */
    cmd.path = "/bin/true";
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(empty_program_name_is_enoent)
{
    struct fl_cmd cmd = { .argv = ARGV(""), .backend = BACKEND };
    struct fl_error e;
    struct fl_proc p;
    int r = fl_spawn(&cmd, &p, &e);
    if (r == 0)
        t_kill_wait(&p);
    /* As execve("") and execvp(""), at step exec: never EINVAL. */
    ASSERT_ERR(r, ENOENT);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "empty");
    char buf[64];
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, NULL), ENOENT);
}

TEST(unknown_flag_bits_are_einval)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .flags = 1u << 30,
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    cmd.flags = FL_NO_WAIT_EXEC << 1;
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(unknown_backend_is_einval)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .backend = (enum fl_backend)99,
    };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(unknown_stdio_kind_is_einval)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { [1] = { .kind = (enum fl_stdio_kind)99 } },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(file_without_a_path_is_einval)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { [1] = { .kind = FL_FILE, .path = NULL } },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(nonzero_reserved_field_is_einval)
{
    int x;
    struct fl_cmd cmd0 = { 0 };
    for (int i = 0; i < (int)(sizeof cmd0.reserved_ / sizeof cmd0.reserved_[0]); i++) {
        struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
        cmd.reserved_[i] = &x;
        SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    }
}

TEST(a_null_error_pointer_is_allowed)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = {
        .argv = ARGV("/nonexistent/prog"),
        .backend = BACKEND,
    };
    struct fl_proc p;
    ASSERT_ERR(fl_spawn(&cmd, &p, NULL), ENOENT);
    struct fl_cmd ok = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    ASSERT_OK(fl_spawn(&ok, &p, NULL));
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(the_error_is_cleared_on_success)
{
    NEEDS_CLOSE_OTHERS();
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .backend = BACKEND };
    struct fl_error e;
    struct fl_proc p;
    memset(&e, 0x5a, sizeof e);
    ASSERT_OK(fl_spawn(&cmd, &p, &e));
    ASSERT_EQ(e.err, 0);
    ASSERT_EQ(e.step, FL_STEP_NONE);
    ASSERT_STR_EQ(e.path, "");
    ASSERT_STR_EQ(e.detail, "");
    ASSERT_EXITED(t_wait(&p), 0);
}

/* ---- names and formatting ------------------------------------------------ */

TEST(step_names)
{
    static const struct {
        enum fl_step s;
        const char *name;
    } names[] = {
        { FL_STEP_PREPARE, "prepare" },   { FL_STEP_CLONE, "clone" },
        { FL_STEP_SETSID, "setsid" },     { FL_STEP_SETPGID, "setpgid" },
        { FL_STEP_RLIMIT, "rlimit" },     { FL_STEP_UMASK, "umask" },
        { FL_STEP_CGROUP, "cgroup" },     { FL_STEP_CHDIR, "chdir" },
        { FL_STEP_OPEN, "open" },         { FL_STEP_DUP, "dup" },
        { FL_STEP_CLOSE_FDS, "close_fds" }, { FL_STEP_SETGROUPS, "setgroups" },
        { FL_STEP_SETGID, "setgid" },     { FL_STEP_SETUID, "setuid" },
        { FL_STEP_PDEATHSIG, "pdeathsig" }, { FL_STEP_EXEC, "exec" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ASSERT_STR_EQ(fl_step_name(names[i].s), names[i].name);
    ASSERT(fl_step_name(FL_STEP_NONE) != NULL);
    ASSERT(fl_step_name(FL_STEP_SIGNALS) != NULL);
    ASSERT(fl_step_name(FL_STEP_SPAWN) != NULL);
    ASSERT(fl_step_name((enum fl_step)999) != NULL);
    ASSERT(fl_step_name((enum fl_step)-1) != NULL);
}

TEST(backend_names)
{
    ASSERT_STR_EQ(fl_backend_name(FL_BACKEND_AUTO), "auto");
    ASSERT_STR_EQ(fl_backend_name(FL_BACKEND_CLONE), "clone");
    ASSERT_STR_EQ(fl_backend_name(FL_BACKEND_POSIX_SPAWN), "posix_spawn");
    ASSERT_STR_EQ(fl_backend_name(FL_BACKEND_FORK), "fork");
    ASSERT_STR_EQ(fl_backend_name((enum fl_backend)99), "?");
    ASSERT_STR_EQ(fl_backend_name((enum fl_backend)-1), "?");
}

TEST(error_format_truncates_and_terminates)
{
    struct fl_error e = { .err = ENOENT, .step = FL_STEP_CHDIR, .index = -1,
                          .path = "/nope" };
    char full[256];
    ASSERT_STR_EQ(fl_error_format(&e, full, sizeof full),
                  "chdir \"/nope\": No such file or directory");
    char small[9];
    memset(small, 'z', sizeof small);
    ASSERT(fl_error_format(&e, small, sizeof small) == small);
    ASSERT_EQ(strlen(small), 8);
    ASSERT(strncmp(small, full, 8) == 0);
    char none[1] = { 'z' };
    fl_error_format(&e, none, 0);
    ASSERT_EQ(none[0], 'z');
    fl_error_format(&e, none, 1);
    ASSERT_EQ(none[0], 0);
}

TEST(error_format_of_no_record_is_empty)
{
    char buf[16];
    memset(buf, 'z', sizeof buf);
    ASSERT(fl_error_format(NULL, buf, sizeof buf) == buf);
    ASSERT_STR_EQ(buf, "");
}

TEST(error_format_quotes_an_empty_path_and_escapes_control_characters)
{
    /* chdir("") names the empty path it was given; a newline in a path
     * keeps the message on one line. */
    struct fl_error e = { .err = ENOENT, .step = FL_STEP_CHDIR, .index = -1 };
    char buf[256];
    ASSERT_STR_EQ(fl_error_format(&e, buf, sizeof buf), "chdir \"\": No such file or directory");
    e.step = FL_STEP_EXEC;
    snprintf(e.path, sizeof e.path, "a\nb\x1b");
    ASSERT_STR_EQ(fl_error_format(&e, buf, sizeof buf),
                  "exec \"a\\nb\\x1b\": No such file or directory");
    /* The C1 controls too: CSI and NEL in UTF-8, and a lone 0x9b, which a
     * terminal in an 8-bit locale reads as CSI; other characters stay. */
    snprintf(e.path, sizeof e.path, "\xc2\x9b" "2J\xc2\x85|\x9b" "1m|\xc3\xa9\xe2\x82\xac|\xa0");
    ASSERT_STR_EQ(fl_error_format(&e, buf, sizeof buf),
                  "exec \"\\xc2\\x9b" "2J\\xc2\\x85|\\x9b" "1m|\xc3\xa9\xe2\x82\xac|\xa0\": "
                  "No such file or directory");
    /* Cut short, the message ends before a character, not inside it. */
    snprintf(e.path, sizeof e.path, "ab\xe2\x80\x9b" "cd");
    for (size_t size = 9; size <= 12; size++)
        ASSERT_STR_EQ(fl_error_format(&e, buf, size),
                      size < 12 ? "exec \"ab" : "exec \"ab\xe2\x80\x9b");
    /* Nor inside an escape, whose first bytes would read as another
     * character ("\x1" for ESC, "\xc2\x9" for CSI). */
    snprintf(e.path, sizeof e.path, "ab\x1b" "cd\xc2\x9b" "ef\n");
    const char *whole = "exec \"ab\\x1b" "cd\\xc2\\x9b" "ef\\n";
    /* The lengths at which a character or an escape of it ends. */
    const size_t ends[] = { 8, 12, 13, 14, 22, 23, 24, 26 };
    for (size_t size = 9; size <= 27; size++) {
        size_t k = 0;
        while (k + 1 < sizeof ends / sizeof *ends && ends[k + 1] < size)
            k++;
        char want[32];
        snprintf(want, sizeof want, "%.*s", (int)ends[k], whole);
        ASSERT_STR_EQ(fl_error_format(&e, buf, size), want);
    }
    /* A step without a path keeps none. */
    e = (struct fl_error){ .err = EPERM, .step = FL_STEP_SETUID, .index = -1 };
    ASSERT_STR_EQ(fl_error_format(&e, buf, sizeof buf), "setuid: Operation not permitted");
}

TEST(a_cwd_that_is_an_empty_path_is_named_in_the_message)
{
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .cwd = "", .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_CHDIR);
    char buf[256];
    ASSERT_STR_CONTAINS(fl_error_format(&e, buf, sizeof buf), "chdir \"\": ");
}

TEST(error_format_includes_the_detail)
{
    struct fl_error e = { .err = ENOENT, .step = FL_STEP_EXEC, .index = 0,
                          .path = "/tmp/x.sh",
                          .detail = "interpreter \"/bin/bash\\r\" not found" };
    char buf[512];
    ASSERT_STR_EQ(fl_error_format(&e, buf, sizeof buf),
                  "exec \"/tmp/x.sh\": No such file or directory "
                  "(interpreter \"/bin/bash\\r\" not found)");
}
