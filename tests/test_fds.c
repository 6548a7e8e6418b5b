/*
 * test_fds.c: the child's file descriptors (pitfalls 29-33).
 *
 * By default the child has fds 0-2 and the mapped fds, nothing else. Maps
 * are applied as if at once (cycles, aliasing, closed stdio in the parent).
 */
#include "test.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- close-others by default (pitfalls 29, 33) --------------------------- */

TEST(child_has_only_stdio_by_default)
{
    int a = open("/dev/null", O_RDONLY); /* no O_CLOEXEC */
    int b = t_file_at(100, false);
    struct fl_cmd cmd = { .argv = PROBE("fds"), .backend = BACKEND };
    char *out = t_probe(&cmd);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2);
    close(a);
    close(b);
}

TEST(keep_fds_keeps_inherited_fds_but_not_cloexec_ones)
{
    int keep = t_file_at(20, false);
    int cloexec = t_file_at(21, true);
    struct fl_cmd cmd = {
        .argv = PROBE("fds"),
        .flags = FL_KEEP_FDS,
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_fd_entry(out, 20).ino, t_ino(keep));
    struct t_fd fds[64];
    int n = t_fds(out, fds, 64);
    for (int i = 0; i < n; i++)
        ASSERT_NE(fds[i].fd, 21);
    close(keep);
    close(cloexec);
}

TEST(fds_9_and_12_mapped_to_3_and_4_are_exactly_what_the_child_has)
{
    int a = t_file_at(9, false);
    int b = t_file_at(12, true);
    int stray = t_file_at(5, false);
    struct fl_cmd cmd = {
        .argv = PROBE("fds"),
        .fds = (struct fl_fd_map[]){ { 3, 9 }, { 4, 12 } },
        .nfds = 2,
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2, 3, 4);
    ASSERT_EQ(t_fd_entry(out, 3).ino, t_ino(a));
    ASSERT_EQ(t_fd_entry(out, 4).ino, t_ino(b));
    ASSERT_STR_EQ(t_fd_entry(out, 3).mode, "rw");
    /* The parent's fds are as they were. */
    ASSERT_EQ(fcntl(9, F_GETFD), 0);
    ASSERT_EQ(fcntl(12, F_GETFD), FD_CLOEXEC);
    close(a);
    close(b);
    close(stray);
}

TEST(mapped_fds_are_not_cloexec_in_the_child)
{
    /* The parent's fd is FD_CLOEXEC; the child's copy must survive the
     * exec of the probe. */
    int a = t_file_at(30, true);
    struct fl_cmd cmd = {
        .argv = PROBE("fds"),
        .fds = (struct fl_fd_map[]){ { 40, 30 } },
        .nfds = 1,
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2, 40);
    ASSERT_EQ(t_fd_entry(out, 40).ino, t_ino(a));
    close(a);
}

TEST(a_high_inherited_fd_is_closed)
{
    int hi = t_file_at(t_high_free_fd(1000), false);
    struct fl_cmd cmd = { .argv = PROBE("fds"), .backend = BACKEND };
    ASSERT_FDS_EXACTLY(t_probe(&cmd), 0, 1, 2);
    close(hi);
}

/* The clone backend shares the fd table with the child until it has
 * copied the low part: the parent's fds, open or close-on-exec, must come
 * out of every spawn as they went in. */
TEST(many_parent_fds_stay_as_they_were_and_none_reach_the_child)
{
    int fds[300];
    for (int i = 0; i < 300; i++)
        fds[i] = t_file_at(50 + i, i % 2 == 0);
    for (int k = 0; k < 3; k++) {
        struct fl_cmd cmd = {
            .argv = PROBE("fds"),
            .fds = (struct fl_fd_map[]){ { 3, fds[k * 100 + 1] } },
            .nfds = k == 2 ? 0 : 1,
            .backend = BACKEND,
        };
        char *out = t_probe(&cmd);
        if (k == 2)
            ASSERT_FDS_EXACTLY(out, 0, 1, 2);
        else
            ASSERT_FDS_EXACTLY(out, 0, 1, 2, 3);
        for (int i = 0; i < 300; i++)
            ASSERT_EQ(fcntl(fds[i], F_GETFD), i % 2 == 0 ? FD_CLOEXEC : 0);
    }
    for (int i = 0; i < 300; i++)
        close(fds[i]);
}

TEST(keep_fds_with_a_map_keeps_both)
{
    int keep = t_file_at(20, false);
    int m = t_file_at(21, true);
    struct fl_cmd cmd = {
        .argv = PROBE("fds"),
        .flags = FL_KEEP_FDS,
        .fds = (struct fl_fd_map[]){ { 7, 21 } },
        .nfds = 1,
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_fd_entry(out, 20).ino, t_ino(keep));
    ASSERT_EQ(t_fd_entry(out, 7).ino, t_ino(m));
    close(keep);
    close(m);
}

/* ---- maps: cycles, aliasing, itself (pitfalls 31b, 32) ------------------- */

TEST(cycle_3_4_swaps_the_files)
{
    int a = t_file_at(3, false);
    int b = t_file_at(4, true);
    struct fl_cmd cmd = {
        .argv = PROBE("fds"),
        .fds = (struct fl_fd_map[]){ { 3, 4 }, { 4, 3 } },
        .nfds = 2,
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2, 3, 4);
    ASSERT_EQ(t_fd_entry(out, 3).ino, t_ino(b));
    ASSERT_EQ(t_fd_entry(out, 4).ino, t_ino(a));
    close(a);
    close(b);
}

TEST(cycle_1_2_swaps_stdout_and_stderr)
{
    NEEDS_CLOSE_OTHERS();
    char *d = t_tmpdir();
    char *report = t_fmt("%s/report", d);
    /* Give the parent's own fds 1 and 2 known files for the spawn. */
    int save1 = fcntl(1, F_DUPFD_CLOEXEC, 10);
    int save2 = fcntl(2, F_DUPFD_CLOEXEC, 10);
    int f1 = open("/tmp", O_TMPFILE | O_RDWR, 0600);
    int f2 = open("/tmp", O_TMPFILE | O_RDWR, 0600);
    unsigned long ino1 = t_ino(f1), ino2 = t_ino(f2);
    dup2(f1, 1);
    dup2(f2, 2);
    close(f1);
    close(f2);
    struct fl_cmd cmd = {
        .argv = PROBE("--out", report, "fds"),
        .fds = (struct fl_fd_map[]){ { 1, 2 }, { 2, 1 } },
        .nfds = 2,
        .backend = BACKEND,
    };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    int st = r == 0 ? t_wait(&p) : -1;
    dup2(save1, 1);
    dup2(save2, 2);
    close(save1);
    close(save2);
    ASSERT_OK(r);
    ASSERT_EXITED(st, 0);
    char *out = t_read_file(report);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2);
    ASSERT_EQ(t_fd_entry(out, 1).ino, ino2);
    ASSERT_EQ(t_fd_entry(out, 2).ino, ino1);
}

TEST(one_parent_fd_mapped_twice_and_a_chain)
{
    int a = t_file_at(5, false);
    int b = t_file_at(3, false);
    /* 3<-5, 4<-5, 5<-3: 3 is overwritten after being read for 5. */
    struct fl_cmd cmd = {
        .argv = PROBE("fds"),
        .fds = (struct fl_fd_map[]){ { 3, 5 }, { 4, 5 }, { 5, 3 } },
        .nfds = 3,
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2, 3, 4, 5);
    ASSERT_EQ(t_fd_entry(out, 3).ino, t_ino(a));
    ASSERT_EQ(t_fd_entry(out, 4).ino, t_ino(a));
    ASSERT_EQ(t_fd_entry(out, 5).ino, t_ino(b));
    close(a);
    close(b);
}

TEST(cloexec_fd_passed_as_itself_survives_exec)
{
    int a = t_file_at(5, true);
    struct fl_cmd cmd = {
        .argv = PROBE("fds"),
        .fds = (struct fl_fd_map[]){ { 5, 5 } },
        .nfds = 1,
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2, 5);
    ASSERT_EQ(t_fd_entry(out, 5).ino, t_ino(a));
    /* The parent's flag is unchanged. */
    ASSERT_EQ(fcntl(5, F_GETFD), FD_CLOEXEC);
    close(a);
}

TEST(a_map_for_fd_1_overrides_stdio)
{
    char *d = t_tmpdir();
    char *report = t_fmt("%s/report", d);
    int f = t_file_at(20, true);
    struct fl_cmd cmd = {
        .argv = PROBE("--out", report, "fds"),
        .stdio = { [1] = { .kind = FL_NULL } },
        .fds = (struct fl_fd_map[]){ { 1, 20 } },
        .nfds = 1,
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    char *out = t_read_file(report);
    ASSERT_EQ(t_fd_entry(out, 1).ino, t_ino(f));
    close(f);
}

/* The map replaces the entry: nothing of it is made, so nothing of it is
 * checked either (here a closed fd, a file without a path). */
TEST(a_stdio_entry_a_map_overrides_is_not_checked)
{
    char *d = t_tmpdir();
    char *report = t_fmt("%s/report", d);
    int f = t_file_at(20, true);
    ASSERT(!t_fd_open(1000));
    struct fl_cmd cmd = {
        .argv = PROBE("--out", report, "fds"),
        .stdio = { [0] = { .kind = FL_FD, .fd = 1000 }, [2] = { .kind = FL_FILE } },
        .fds = (struct fl_fd_map[]){ { 0, 20 }, { 2, 20 } },
        .nfds = 2,
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    char *out = t_read_file(report);
    ASSERT_EQ(t_fd_entry(out, 0).ino, t_ino(f));
    ASSERT_EQ(t_fd_entry(out, 2).ino, t_ino(f));
    close(f);
}

/* ---- stdio kinds --------------------------------------------------------- */

TEST(stdio_inherit_is_the_parents_fd)
{
    char *d = t_tmpdir();
    char *report = t_fmt("%s/report", d);
    struct fl_cmd cmd = {
        .argv = PROBE("--out", report, "fds"),
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.stdio[0], -1);
    ASSERT_EQ(p.stdio[1], -1);
    ASSERT_EQ(p.stdio[2], -1);
    ASSERT_EXITED(t_wait(&p), 0);
    char *out = t_read_file(report);
    for (int fd = 0; fd < 3; fd++)
        if (t_fd_open(fd))
            ASSERT_EQ(t_fd_entry(out, fd).ino, t_ino(fd));
}

TEST(stdio_null_opens_dev_null_read_only_for_0_and_write_only_else)
{
    char *d = t_tmpdir();
    char *report = t_fmt("%s/report", d);
    struct fl_cmd cmd = {
        .argv = PROBE("--out", report, "fds"),
        .stdio = { { .kind = FL_NULL },
                   { .kind = FL_NULL },
                   { .kind = FL_NULL } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    char *out = t_read_file(report);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2);
    for (int fd = 0; fd < 3; fd++)
        ASSERT_STR_EQ(t_fd_entry(out, fd).target, "/dev/null");
    ASSERT_STR_EQ(t_fd_entry(out, 0).mode, "r");
    ASSERT_STR_EQ(t_fd_entry(out, 1).mode, "w");
    ASSERT_STR_EQ(t_fd_entry(out, 2).mode, "w");
}

TEST(stdio_pipes_round_trip_and_parent_ends_are_cloexec)
{
    struct fl_cmd cmd = {
        .argv = PROBE("cat", "stderr", "on-stderr"),
        .stdio = { { .kind = FL_PIPE },
                   { .kind = FL_PIPE },
                   { .kind = FL_PIPE } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    for (int i = 0; i < 3; i++) {
        ASSERT_GE(p.stdio[i], 0);
        ASSERT_EQ(fcntl(p.stdio[i], F_GETFD), FD_CLOEXEC);
    }
    ASSERT_EQ(fcntl(p.stdio[0], F_GETFL) & O_ACCMODE, O_WRONLY);
    ASSERT_EQ(fcntl(p.stdio[1], F_GETFL) & O_ACCMODE, O_RDONLY);
    t_write_all(p.stdio[0], "ping\n", 5);
    close(p.stdio[0]);
    p.stdio[0] = -1;
    ASSERT_STR_EQ(t_read_all(p.stdio[1]), "ping\n");
    ASSERT_STR_EQ(t_read_all(p.stdio[2]), "on-stderr\n");
    ASSERT_EXITED(t_wait(&p), 0);
}

TEST(stdio_file_defaults_to_create_and_truncate)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "out", "old content that is longer\n", 0644);
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "new", "stderr", "err"),
        .stdio = { [1] = { .kind = FL_FILE, .path = f },
                   [2] = { .kind = FL_FILE, .path = t_fmt("%s/err", d) } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_read_file(f), "new\n");
    ASSERT_STR_EQ(t_read_file(t_fmt("%s/err", d)), "err\n");
}

TEST(stdio_file_for_stdin_defaults_to_read_only)
{
    char *d = t_tmpdir();
    char *in = t_write_file(d, "in", "input data\n", 0644);
    struct fl_cmd cmd = {
        .argv = PROBE("cat"),
        .stdio = { [0] = { .kind = FL_FILE, .path = in } },
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "input data\n");
    char *report = t_fmt("%s/report", d);
    cmd.argv = PROBE("--out", report, "fds");
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_fd_entry(t_read_file(report), 0).mode, "r");
}

TEST(stdio_file_flags_are_used)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "log", "first\n", 0644);
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "second"),
        .stdio = { [1] = { .kind = FL_FILE, .path = f,
                           .flags = O_WRONLY | O_APPEND } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_read_file(f), "first\nsecond\n");
}

TEST(stdio_file_mode_applies_to_a_created_file)
{
    char *d = t_tmpdir();
    mode_t old = umask(022);
    char *a = t_fmt("%s/a", d), *b = t_fmt("%s/b", d);
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "x"),
        .stdio = { [1] = { .kind = FL_FILE, .path = a, .mode = 0640 } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    /* Mode 0 means 0666, before the umask. */
    cmd.stdio[1] = (struct fl_stdio){ .kind = FL_FILE, .path = b };
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    umask(old);
    struct stat st;
    ASSERT_SYS(stat(a, &st));
    ASSERT_EQ(st.st_mode & 0777, 0640);
    ASSERT_SYS(stat(b, &st));
    ASSERT_EQ(st.st_mode & 0777, 0644);
}

TEST(stdio_file_ignores_o_cloexec)
{
    char *d = t_tmpdir();
    char *f = t_fmt("%s/out", d);
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "kept"),
        .stdio = { [1] = { .kind = FL_FILE,
                           .path = f,
                           .flags = O_WRONLY | O_CREAT | O_CLOEXEC } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_read_file(f), "kept\n");
}

TEST(stdio_fds_1_and_2_swapped_through_fl_fd)
{
    NEEDS_CLOSE_OTHERS();
    char *d = t_tmpdir();
    char *report = t_fmt("%s/report", d);
    int save1 = fcntl(1, F_DUPFD_CLOEXEC, 10);
    int save2 = fcntl(2, F_DUPFD_CLOEXEC, 10);
    int f1 = open("/tmp", O_TMPFILE | O_RDWR, 0600);
    int f2 = open("/tmp", O_TMPFILE | O_RDWR, 0600);
    unsigned long ino1 = t_ino(f1), ino2 = t_ino(f2);
    dup2(f1, 1);
    dup2(f2, 2);
    close(f1);
    close(f2);
    struct fl_cmd cmd = {
        .argv = PROBE("--out", report, "fds"),
        .stdio = { [1] = { .kind = FL_FD, .fd = 2 },
                   [2] = { .kind = FL_FD, .fd = 1 } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    int r = fl_spawn(&cmd, &p, NULL);
    int st = r == 0 ? t_wait(&p) : -1;
    dup2(save1, 1);
    dup2(save2, 2);
    close(save1);
    close(save2);
    ASSERT_OK(r);
    ASSERT_EXITED(st, 0);
    char *out = t_read_file(report);
    ASSERT_EQ(t_fd_entry(out, 1).ino, ino2);
    ASSERT_EQ(t_fd_entry(out, 2).ino, ino1);
}

TEST(stdio_file_relative_path_is_relative_to_the_child_cwd)
{
    char *d = t_tmpdir();
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "rel"),
        .cwd = d,
        .stdio = { [1] = { .kind = FL_FILE, .path = "rel.txt" } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_read_file(t_fmt("%s/rel.txt", d)), "rel\n");
    ASSERT_EQ(access("rel.txt", F_OK), -1);
}

TEST(stdio_fd_uses_the_parents_fd)
{
    int f = t_file_at(20, true);
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "via-fd"),
        .stdio = { [1] = { .kind = FL_FD, .fd = 20 } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    char buf[64] = "";
    ASSERT_EQ(pread(f, buf, sizeof buf - 1, 0), 7);
    ASSERT_STR_EQ(buf, "via-fd\n");
    /* The parent's fd stays open, flags unchanged. */
    ASSERT_EQ(fcntl(20, F_GETFD), FD_CLOEXEC);
    close(f);
}

/* A shell's process substitution hands out such names (/dev/fd/63): the
 * child opens them after dropping the caller's other fds, so it must
 * keep the one named until then, and not after. */
TEST(stdio_file_naming_a_caller_fd_reopens_that_fd)
{
    int in = t_file_at(20, true);
    int out = t_file_at(21, true);
    ASSERT_EQ(pwrite(in, "from fd 20\n", 11, 0), 11);
    unsigned flags[] = { 0, FL_NO_WAIT_EXEC };
    const char *in_names[] = { "/dev/fd/20", "/dev//fd//20" };
    const char *out_names[] = { "/proc/self/fd/21", "/proc/thread-self/fd/21" };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        char *report = t_fmt("%s/report", t_tmpdir());
        struct fl_cmd cmd = {
            .argv = PROBE("--out", report, "fds", "cat"),
            .stdio = { [0] = { .kind = FL_FILE, .path = in_names[i] },
                       [1] = { .kind = FL_FILE, .path = out_names[i] } },
            .flags = flags[i],
            .backend = BACKEND,
        };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 0);
        char buf[64] = "";
        ASSERT_EQ(pread(out, buf, sizeof buf - 1, 0), 11);
        ASSERT_STR_EQ(buf, "from fd 20\n");
        ASSERT_FDS_EXACTLY(t_read_file(report), 0, 1, 2);
        ASSERT_EQ(ftruncate(out, 0), 0);
    }
    close(in);
    close(out);
}

/* Had the check waited for the plan, the number would by then be one of
 * the library's own pipe ends: here the child's stdout would be its own
 * stdin's write end, and it would wait for ever. */
TEST(stdio_file_naming_a_fd_the_caller_has_not_open_is_enoent)
{
    int lowest = 3;
    while (t_fd_open(lowest))
        lowest++;
    char *path = t_fmt("/dev/fd/%d", lowest);
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/cat"),
        .stdio = { [0] = { .kind = FL_PIPE }, [1] = { .kind = FL_FILE, .path = path } },
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_OPEN);
    ASSERT_EQ(e.index, 1);
    ASSERT_STR_EQ(e.path, path);
    ASSERT(!t_fd_open(lowest));
}

/* As a shell's 2>&1 with fd 1 closed; the child's fd 1 would otherwise be
 * whatever the library had there (its pidfd, a pipe end). */
TEST(stderr_to_stdout_with_the_callers_fd_1_closed_is_ebadf)
{
    int save = fcntl(1, F_DUPFD_CLOEXEC, 10);
    close(1);
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { [0] = { .kind = FL_NULL }, [2] = { .kind = FL_TO_STDOUT } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    if (r == 0)
        t_wait(&p);
    dup2(save, 1);
    close(save);
    ASSERT_EQ(r, EBADF);
    ASSERT_EQ(e.step, FL_STEP_PREPARE);
    ASSERT_EQ(e.index, 1);
}

/* A map for fd 2 overrides its FL_TO_STDOUT, which then reads no fd 1. */
TEST(stderr_to_stdout_overridden_by_a_map_needs_no_fd_1)
{
    NEEDS_CLOSE_OTHERS();
    int log = t_file_at(20, true);
    int save = fcntl(1, F_DUPFD_CLOEXEC, 10);
    close(1);
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { [0] = { .kind = FL_NULL }, [2] = { .kind = FL_TO_STDOUT } },
        .fds = (struct fl_fd_map[]){ { 2, 20 } },
        .nfds = 1,
        .backend = BACKEND,
    };
    struct fl_proc p;
    struct fl_error e;
    int r = fl_spawn(&cmd, &p, &e);
    int st = r == 0 ? t_wait(&p) : -1;
    dup2(save, 1);
    close(save);
    close(log);
    ASSERT_OK(r);
    ASSERT_EXITED(st, 0);
}

TEST(stderr_to_stdout_follows_fd_1)
{
    struct fl_cmd cmd = {
        .argv = PROBE("echo", "out", "stderr", "err", "fds"),
        .stdio = { [1] = { .kind = FL_PIPE }, [2] = { .kind = FL_TO_STDOUT } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EQ(p.stdio[2], -1);
    char *out = t_read_all(p.stdio[1]);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT(strncmp(out, "out\nerr\n", 8) == 0);
    ASSERT_EQ(t_fd_entry(out, 2).ino, t_fd_entry(out, 1).ino);

    /* Also when fd 1 is a file. */
    char *d = t_tmpdir();
    char *f = t_fmt("%s/both", d);
    cmd.argv = PROBE("echo", "out", "stderr", "err");
    cmd.stdio[1] = (struct fl_stdio){ .kind = FL_FILE, .path = f };
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_read_file(f), "out\nerr\n");
}

TEST(stdin_pipe_gives_eof_when_closed)
{
    struct fl_cmd cmd = {
        .argv = PROBE("cat", "exit", "9"),
        .stdio = { [0] = { .kind = FL_PIPE }, [1] = { .kind = FL_PIPE } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    close(p.stdio[0]);
    p.stdio[0] = -1;
    ASSERT_STR_EQ(t_read_all(p.stdio[1]), "");
    ASSERT_EXITED(t_wait(&p), 9);
}

/* ---- parent with fds 0-2 closed (pitfall 31a) ---------------------------- */

TEST(parent_with_0_1_2_closed_round_trips_through_pipes)
{
    NEEDS_CLOSE_OTHERS();
    int save[3];
    for (int i = 0; i < 3; i++)
        save[i] = fcntl(i, F_DUPFD_CLOEXEC, 10);
    close(0);
    close(1);
    close(2);
    struct fl_cmd cmd = {
        .argv = PROBE("cat", "stderr", "err", "fds"),
        .stdio = { { .kind = FL_PIPE },
                   { .kind = FL_PIPE },
                   { .kind = FL_PIPE } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    struct fl_error e;
    char *out = NULL, *err = NULL;
    int st = -1, wr = -1;
    int r = fl_spawn(&cmd, &p, &e);
    if (r == 0) {
        t_write_all(p.stdio[0], "round trip\n", 11);
        close(p.stdio[0]);
        p.stdio[0] = -1;
        out = t_read_all(p.stdio[1]);
        err = t_read_all(p.stdio[2]);
        wr = fl_wait(&p, -1, &st);
        fl_close(&p);
    }
    /* Restore before asserting: a failure must be able to print. */
    for (int i = 0; i < 3; i++) {
        dup2(save[i], i);
        close(save[i]);
    }
    ASSERT_OK(r);
    ASSERT_OK(wr);
    ASSERT_EXITED(st, 0);
    ASSERT_STR_EQ(err, "err\n");
    ASSERT(strncmp(out, "round trip\n", 11) == 0);
    ASSERT_FDS_EXACTLY(out + 11, 0, 1, 2);
    ASSERT_STR_CONTAINS(t_fd_entry(out + 11, 0).target, "pipe:");
    ASSERT_STR_CONTAINS(t_fd_entry(out + 11, 1).target, "pipe:");
    ASSERT_STR_CONTAINS(t_fd_entry(out + 11, 2).target, "pipe:");
    ASSERT_NE(t_fd_entry(out + 11, 1).ino, t_fd_entry(out + 11, 2).ino);
}

TEST(parent_with_0_1_2_closed_and_files_mapped)
{
    NEEDS_CLOSE_OTHERS();
    int save[3];
    for (int i = 0; i < 3; i++)
        save[i] = fcntl(i, F_DUPFD_CLOEXEC, 10);
    close(0);
    close(1);
    close(2);
    /* These land on 0 and 1 in the parent; the child gets them on 1, 0. */
    int a = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    int b = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    char d[] = "/tmp/fl-test-XXXXXX";
    char *dir = mkdtemp(d);
    char report[64];
    snprintf(report, sizeof report, "%s/report", dir ? dir : "/tmp");
    struct fl_cmd cmd = {
        .argv = PROBE("--out", report, "fds"),
        .stdio = { [2] = { .kind = FL_NULL } },
        .fds = (struct fl_fd_map[]){ { 0, b }, { 1, a } },
        .nfds = 2,
        .backend = BACKEND,
    };
    struct fl_proc p;
    struct fl_error e;
    int st = -1;
    int r = fl_spawn(&cmd, &p, &e);
    if (r == 0) {
        fl_wait(&p, -1, &st);
        fl_close(&p);
    }
    unsigned long ia = t_ino(a), ib = t_ino(b);
    close(a);
    close(b);
    for (int i = 0; i < 3; i++) {
        dup2(save[i], i);
        close(save[i]);
    }
    ASSERT(dir);
    ASSERT_EQ(a, 0);
    ASSERT_EQ(b, 1);
    ASSERT_OK(r);
    ASSERT_EXITED(st, 0);
    char *out = t_read_file(report);
    unlink(report);
    rmdir(dir);
    ASSERT_FDS_EXACTLY(out, 0, 1, 2);
    ASSERT_EQ(t_fd_entry(out, 0).ino, ib);
    ASSERT_EQ(t_fd_entry(out, 1).ino, ia);
    ASSERT_STR_EQ(t_fd_entry(out, 2).target, "/dev/null");
}

/* ---- bad fds ------------------------------------------------------------- */

TEST(stdio_fd_not_open_is_ebadf)
{
    ASSERT(!t_fd_open(1000));
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { [1] = { .kind = FL_FD, .fd = 1000 } },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EBADF, FL_STEP_PREPARE);
}

TEST(map_of_a_parent_fd_not_open_is_ebadf)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .fds = (struct fl_fd_map[]){ { 3, 1000 } },
        .nfds = 1,
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EBADF, FL_STEP_PREPARE);
}

TEST(negative_fds_are_einval)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .fds = (struct fl_fd_map[]){ { -1, 0 } },
        .nfds = 1,
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    cmd.fds = (struct fl_fd_map[]){ { 3, -1 } };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    struct fl_cmd c2 = {
        .argv = ARGV("/bin/true"),
        .stdio = { [0] = { .kind = FL_FD, .fd = -1 } },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&c2, EINVAL, FL_STEP_PREPARE);
}

TEST(two_maps_to_one_child_fd_are_einval)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .fds = (struct fl_fd_map[]){ { 3, 0 }, { 4, 1 }, { 3, 2 } },
        .nfds = 3,
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(to_stdout_on_fd_0_or_1_is_einval)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { [1] = { .kind = FL_TO_STDOUT } },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    struct fl_cmd c0 = {
        .argv = ARGV("/bin/true"),
        .stdio = { [0] = { .kind = FL_TO_STDOUT } },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&c0, EINVAL, FL_STEP_PREPARE);
}

TEST(failures_with_pipes_leave_no_fd_open)
{
    /* The runner checks the fd table after the case. */
    for (int i = 0; i < 50; i++) {
        struct fl_cmd cmd = {
            .argv = ARGV("/bin/true"),
            .cwd = "/nonexistent-dir",
            .stdio = { { .kind = FL_PIPE },
                       { .kind = FL_PIPE },
                       { .kind = FL_PIPE } },
            .backend = BACKEND,
        };
        SPAWN_FAILS(&cmd, ENOENT, FL_STEP_CHDIR);
        cmd.cwd = NULL;
        cmd.argv = ARGV("/nonexistent/prog");
        SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    }
}

/* ---- concurrency (pitfalls 29, 30) --------------------------------------- */

static atomic_bool opener_stop;

static void *open_without_cloexec(void *arg)
{
    (void)arg;
    for (unsigned i = 0; !atomic_load(&opener_stop); i++) {
        t_pace(i);
        int fds[2];
        int a = open("/dev/null", O_RDONLY);
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        if (pipe(fds) == 0) {
            close(fds[0]);
            close(fds[1]);
        }
        int b = dup(0);
        if (a >= 0)
            close(a);
        if (s >= 0)
            close(s);
        if (b >= 0)
            close(b);
    }
    return NULL;
}

TEST(concurrent_opens_without_cloexec_never_reach_the_child) /* stress */
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        ASSERT_OK(pthread_create(&t[i], NULL, open_without_cloexec, NULL));
    int m = t_file_at(200, true);
    for (int i = 0, n = t_scaled(200); i < n; i++) {
        struct fl_cmd cmd = {
            .argv = PROBE("fds"),
            .fds = (struct fl_fd_map[]){ { 3, 200 } },
            .nfds = 1,
            .backend = BACKEND,
        };
        char *out = t_probe(&cmd);
        ASSERT_FDS_EXACTLY(out, 0, 1, 2, 3);
    }
    atomic_store(&opener_stop, true);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    close(m);
}

struct sibling_arg {
    struct fl_proc procs[40];
    int n;
    atomic_bool stop;
};

static void *spawn_siblings(void *argp)
{
    struct sibling_arg *a = argp;
    while (!atomic_load(&a->stop) && a->n < 40) {
        struct fl_cmd cmd = {
            .argv = PROBE("sleep", "60"),
            .flags = FL_KEEP_FDS,
            .stdio = { { .kind = FL_NULL },
                       { .kind = FL_NULL },
                       { .kind = FL_NULL } },
            .backend = BACKEND,
        };
        if (fl_spawn(&cmd, &a->procs[a->n], NULL) != 0)
            break;
        a->n++;
    }
    return NULL;
}

TEST(pipe_eof_arrives_while_siblings_with_keep_fds_run) /* stress */
{
    /* Siblings that keep every inheritable fd start all the time; none of
     * them may hold the write end of A's stdout pipe. */
    struct sibling_arg *s = t_keep(calloc(1, sizeof *s));
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, spawn_siblings, s));
    for (int i = 0; i < 100; i++) {
        struct fl_cmd cmd = {
            .argv = PROBE("echo", "A"),
            .stdio = { [1] = { .kind = FL_PIPE } },
            .backend = BACKEND,
        };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        /* Siblings live 60 s: a leaked write end would hold EOF back. */
        ASSERT_STR_EQ(t_read_all_within(p.stdio[1], 30000), "A\n");
        ASSERT_EXITED(t_wait(&p), 0);
    }
    atomic_store(&s->stop, true);
    pthread_join(t, NULL);
    for (int i = 0; i < s->n; i++)
        t_kill_wait(&s->procs[i]);
}

TEST(pipe_eof_arrives_for_a_while_b_runs)
{
    struct fl_cmd ca = {
        .argv = PROBE("echo", "A"),
        .stdio = { [1] = { .kind = FL_PIPE } },
        .backend = BACKEND,
    };
    struct fl_cmd cb = {
        .argv = PROBE("sleep", "60"),
        .stdio = { [0] = { .kind = FL_PIPE }, [1] = { .kind = FL_PIPE } },
        .backend = BACKEND,
    };
    struct fl_proc a, b;
    SPAWN(&ca, &a);
    SPAWN(&cb, &b);
    ASSERT_STR_EQ(t_read_all_within(a.stdio[1], 30000), "A\n");
    ASSERT_EXITED(t_wait(&a), 0);
    ASSERT_OK(fl_kill(&b, 0)); /* B still runs */
    t_kill_wait(&b);
}

/* ---- random maps (pitfall 31b) ------------------------------------------- */

TEST(random_maps_with_cycles_and_aliasing_land_right)
{
    /* Parent fds 3..10 are distinct files; each round maps some of them
     * (a parent fd may be used twice, or as itself) to child fds 0..12. */
    enum { LO = 3, HI = 10, CHILD_MAX = 12 };
    unsigned long ino[HI + 1];
    for (int fd = LO; fd <= HI; fd++) {
        t_file_at(fd, fd % 2 == 0);
        ino[fd] = t_ino(fd);
    }
    unsigned long std_ino[3];
    for (int fd = 0; fd < 3; fd++)
        std_ino[fd] = t_fd_open(fd) ? t_ino(fd) : 0;
    char *d = t_tmpdir();
    const char *fixed = getenv("FL_TEST_SEED"); /* to replay a failure */
    unsigned seed = fixed ? (unsigned)atoi(fixed) : (unsigned)getpid();
    printf("seed %u (FL_TEST_SEED replays it)\n", seed);
    for (int round = 0; round < 100; round++) {
        struct fl_fd_map maps[CHILD_MAX + 1];
        int to[CHILD_MAX + 1];
        size_t n = 0;
        for (int c = 0; c <= CHILD_MAX; c++) {
            to[c] = -1;
            if (rand_r(&seed) % 2) {
                to[c] = LO + (int)(rand_r(&seed) % (HI - LO + 1));
                maps[n++] = (struct fl_fd_map){ c, to[c] };
            }
        }
        /* Shuffle the order the maps are given in. */
        for (size_t i = n; i > 1; i--) {
            size_t j = rand_r(&seed) % i;
            struct fl_fd_map t = maps[i - 1];
            maps[i - 1] = maps[j];
            maps[j] = t;
        }
        char *report = t_fmt("%s/r%d", d, round);
        struct fl_cmd cmd = {
            .argv = PROBE("--out", report, "fds"),
            .fds = maps,
            .nfds = n,
            .backend = BACKEND,
        };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 0);
        char *out = t_read_file(report);
        struct t_fd got[64];
        int ngot = t_fds(out, got, 64);
        for (int c = 0; c <= CHILD_MAX; c++) {
            unsigned long want = to[c] >= 0 ? ino[to[c]]
                                 : c < 3    ? std_ino[c]
                                            : 0;
            unsigned long have = 0;
            for (int k = 0; k < ngot; k++)
                if (got[k].fd == c)
                    have = got[k].ino;
            if (have != want)
                FAIL("round %d (seed above): child fd %d has inode %lu, "
                     "expected %lu (from parent fd %d)",
                     round, c, have, want, to[c]);
        }
        for (int k = 0; k < ngot; k++)
            if (got[k].fd > CHILD_MAX)
                FAIL("round %d: stray child fd %d", round, got[k].fd);
    }
    for (int fd = LO; fd <= HI; fd++)
        close(fd);
}
