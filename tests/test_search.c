/*
 * test_search.c: which file runs and which error a failed search reports,
 * where the PATH rules and exec's own errors meet: unsearchable
 * directories, names too long for the kernel, relative programs under a
 * cwd, and file actions that must run once however long the search.
 */
#include "test.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void need_root(void)
{
    if (geteuid() != 0)
        SKIP("needs root, to run the child as another user (uid 65534)");
}

/* A command that runs path as uid/gid 65534. */
static struct fl_cmd as_nobody(char *const *argv)
{
    static const gid_t nobody_groups[] = { 65534 };
    return (struct fl_cmd){
        .argv = argv,
        .flags = FL_SET_UID | FL_SET_GID | FL_SET_GROUPS,
        .uid = 65534,
        .gid = 65534,
        .groups = nobody_groups,
        .ngroups = 1,
        .backend = BACKEND,
    };
}

/* ---- a program named with '/' keeps exec's error ------------------------ */

TEST(a_program_in_a_directory_the_child_may_not_search_is_eacces)
{
    need_root();
    char *d = t_tmpdir();  /* mode 0700, owned by root */
    char *prog = t_write_file(d, "prog", "#!/bin/sh\nexit 0\n", 0755);
    struct fl_cmd cmd = as_nobody(ARGV(prog));
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, prog);
    /* The parent, as root, could read the #! line; the child could not
     * even reach the file: no word about an interpreter. */
    ASSERT_STR_EQ(e.detail, "");
}

TEST(a_path_search_still_skips_a_directory_the_child_may_not_search)
{
    need_root();
    char *hidden = t_tmpdir();  /* 0700: the child, as nobody, cannot search it */
    t_write_file(hidden, "fl-search-true", "#!/bin/sh\nexit 9\n", 0755);
    char *open_dir = t_tmpdir();
    ASSERT_SYS(chmod(open_dir, 0755));
    t_write_file(open_dir, "fl-search-true", "#!/bin/sh\nexit 0\n", 0755);
    const char *env_set[] = { t_fmt("PATH=%s:%s", hidden, open_dir), NULL };
    struct fl_cmd cmd = as_nobody(ARGV("fl-search-true"));
    cmd.env_set = env_set;
    UNSUPPORTED_ON_POSIX_SPAWN(&cmd);
    int st;
    t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
}

TEST(a_single_path_entry_the_caller_may_not_search_is_enoent)
{
    /* The rule is the search's, however many entries it has: the
     * posix_spawn backend used to pass exec's EACCES through for one. An
     * unprivileged caller may not look into /proc/1/root. */
    if (t_rerun_as_nobody())
        return;
    if (geteuid() == 0)
        SKIP("root may search any directory");
    if (access("/proc/1/root/", X_OK) == 0)
        SKIP("this user may search /proc/1/root here");
    const char *env_set[] = { "PATH=/proc/1/root/usr/bin", NULL };
    struct fl_cmd cmd = { .argv = ARGV("true"), .env_set = env_set, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    /* Said as a search that found nothing, not as a file not there in a
     * directory it could not look into. */
    ASSERT_EQ(e.index, -1);
    ASSERT_STR_EQ(e.path, "true");
    ASSERT_STR_EQ(e.detail, "not found in PATH");
}

TEST(a_single_path_entry_without_the_program_says_not_found_in_path)
{
    const char *env_set[] = { t_fmt("PATH=%s", t_tmpdir()), NULL };
    struct fl_cmd cmd = { .argv = ARGV("fl-no-such-program"), .env_set = env_set,
                          .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_EQ(e.index, -1);
    ASSERT_STR_EQ(e.path, "fl-no-such-program");
    ASSERT_STR_EQ(e.detail, "not found in PATH");
    char buf[64];
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, &e), ENOENT);
    ASSERT_EQ(e.index, -1);
    ASSERT_STR_EQ(e.detail, "not found in PATH");
}

TEST(a_file_that_cannot_be_opened_comes_before_a_program_not_found)
{
    /* The clone and fork children open their files before they look for
     * the program: the open's error is the one. The posix_spawn backend
     * searches first, and a search that finds nothing starts nothing (the
     * header says so): exec's ENOENT. The child's PATH is set, with
     * entries to search in vain: the test's own may have none (an empty
     * PATH), and a search of nothing is refused before any child runs. */
    struct fl_cmd cmd = { .argv = ARGV("fl-no-such-program"),
                          .env_set = TOOLS_PATH_ENV,
                          .stdio = { [0] = { .kind = FL_FILE, .path = "/nonexistent/in" } },
                          .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, BACKEND == FL_BACKEND_POSIX_SPAWN
                                                      ? FL_STEP_EXEC : FL_STEP_OPEN);
    ASSERT_STR_EQ(e.path, BACKEND == FL_BACKEND_POSIX_SPAWN ? "fl-no-such-program"
                                                             : "/nonexistent/in");
}

TEST(the_detail_of_a_path_longer_than_the_record_still_names_the_interpreter)
{
    /* The record keeps the start of the path, marked as cut with "...";
     * the detail is worked out from the whole one. */
    char *dir = t_tmpdir();
    while (strlen(dir) < FL_ERROR_PATH_MAX + 100) {
        dir = t_fmt("%s/%s", dir, "dddddddddddddddddddddddddddddddddddddddddddddddddd");
        ASSERT_SYS(mkdir(dir, 0700));
    }
    char *prog = t_write_file(dir, "prog", "#!/nonexistent/pyhton\n", 0755);
    struct fl_cmd cmd = { .argv = ARGV(prog), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_EQ(strlen(e.path), FL_ERROR_PATH_MAX - 1);
    ASSERT_STR_EQ(e.path + FL_ERROR_PATH_MAX - 4, "...");
    ASSERT_EQ(strncmp(e.path, prog, FL_ERROR_PATH_MAX - 4), 0);
    ASSERT_STR_CONTAINS(e.detail, "/nonexistent/pyhton");
}

TEST(a_path_cut_to_fit_the_record_keeps_whole_utf8_characters)
{
    /* Cut inside a two-byte character, the record ends before it. */
    char prog[1400] = "/nonexistent-xy";  /* 15 bytes: a character starts at every odd offset */
    while (strlen(prog) + 3 < sizeof prog)
        strcat(prog, "\xc3\xa9");  /* é */
    for (size_t at = 101; at + 1 < strlen(prog); at += 100) {
        prog[at] = '/';  /* components under NAME_MAX, in place of an é */
        prog[at + 1] = 'x';
    }
    struct fl_cmd cmd = { .argv = ARGV(prog), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    size_t n = strlen(e.path);
    ASSERT_EQ(n, FL_ERROR_PATH_MAX - 2);  /* byte 1019 began the character byte 1020 continues */
    ASSERT_STR_EQ(e.path + n - 3, "...");
    ASSERT_EQ(strncmp(e.path, prog, n - 3), 0);
}

TEST(a_relative_program_without_exec_permission_under_cwd_is_eacces)
{
    char *d = t_tmpdir();
    t_write_file(d, "noexec", "#!/bin/sh\nexit 0\n", 0644);
    struct fl_cmd cmd = { .argv = ARGV("./noexec"), .cwd = d, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, EACCES, FL_STEP_EXEC);
    /* Exactly exec, even for posix_spawn, which does not say: the cwd is
     * fine, so nothing before exec could refuse with EACCES. */
    ASSERT_STR_EQ(fl_step_name(e.step), "exec");
    ASSERT_STR_EQ(e.path, "./noexec");
}

/* ---- names too long for the kernel --------------------------------------- */

static char *long_dir(size_t len)
{
    char *s = t_keep(malloc(len + 2));
    s[0] = '/';
    memset(s + 1, 'a', len);
    s[len + 1] = '\0';
    return s;
}

/* Runs "true" with PATH=<first>:/usr/bin:/bin; returns its wait status. */
static int run_true_after(const char *first)
{
    const char *env_set[] = { t_fmt("PATH=%s:/usr/bin:/bin", first), NULL };
    struct fl_cmd cmd = { .argv = ARGV("true"), .env_set = env_set, .backend = BACKEND };
    int st;
    t_run(&cmd, &st);
    return st;
}

TEST(a_path_entry_longer_than_path_max_is_skipped)
{
    ASSERT_EXITED(run_true_after(long_dir(PATH_MAX + 100)), 0);
}

TEST(a_path_entry_with_a_name_longer_than_name_max_is_skipped)
{
    ASSERT_EXITED(run_true_after(long_dir(NAME_MAX + 20)), 0);
}

TEST(a_program_named_with_a_slash_and_too_long_is_enametoolong)
{
    char *prog = t_fmt("%s/true", long_dir(NAME_MAX + 20));
    struct fl_cmd cmd = { .argv = ARGV(prog), .backend = BACKEND };
    SPAWN_FAILS(&cmd, ENAMETOOLONG, FL_STEP_EXEC);
}

/* A name without '/' longer than NAME_MAX fits in no directory: exec
 * would say ENAMETOOLONG for every candidate, and execvp() says it at
 * once. The parent says it too, before anything starts. */
static void name_too_long(size_t len)
{
    char *name = long_dir(len) + 1;
    const char *env_set[] = { "PATH=/usr/bin:/bin", NULL };
    struct fl_cmd cmd = { .argv = ARGV(name), .env_set = env_set, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENAMETOOLONG, FL_STEP_EXEC);
    ASSERT_EQ(e.index, -1);
    ASSERT_STR_CONTAINS(e.detail, "NAME_MAX");
    char buf[64];
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, &e), ENAMETOOLONG);
    ASSERT_EQ(e.step, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "NAME_MAX");
}

TEST(a_program_name_longer_than_name_max_is_enametoolong)
{
    name_too_long(NAME_MAX + 1);
    /* NAME_MAX itself is a name: just not there. */
    const char *env_set[] = { "PATH=/usr/bin:/bin", NULL };
    struct fl_cmd cmd = { .argv = ARGV(long_dir(NAME_MAX) + 1), .env_set = env_set,
                          .backend = BACKEND };
    SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
}

TEST(a_program_name_longer_than_path_max_is_enametoolong)
{
    name_too_long(PATH_MAX + 100);
}

/* ---- the file actions run once, wherever the program is found ----------- */

/* A PATH whose first entries exist but hold no such program. */
static const char *path_with_misses(const char *found_in)
{
    char *a = t_tmpdir(), *b = t_tmpdir();
    return t_fmt("PATH=%s:%s:%s", a, b, found_in);
}

static char *probe_dir(void)
{
    char *dir = t_strdup(fl_test_probe);
    *strrchr(dir, '/') = '\0';
    return dir;
}

static const char *probe_name(void)
{
    return strrchr(fl_test_probe, '/') + 1;
}

TEST(an_o_excl_stdout_is_opened_once_when_the_program_is_in_a_later_path_entry)
{
    char *d = t_tmpdir();
    char *out = t_fmt("%s/out", d);
    const char *env_set[] = { path_with_misses(probe_dir()), NULL };
    struct fl_cmd cmd = {
        .argv = ARGV((char *)probe_name(), "echo", "once"),
        .env_set = env_set,
        .stdio = { [1] = { .kind = FL_FILE, .path = out,
                           .flags = O_WRONLY | O_CREAT | O_EXCL } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    ASSERT_STR_EQ(t_read_file(out), "once\n");
}

struct fifo_reader {
    const char *path;
    char *text;
};

static void *read_fifo(void *arg)
{
    struct fifo_reader *r = arg;
    int fd = open(r->path, O_RDONLY | O_CLOEXEC);  /* waits for a writer */
    r->text = fd < 0 ? t_strdup("(open failed)") : t_read_all(fd);
    if (fd >= 0)
        close(fd);
    return NULL;
}

TEST(a_fifo_stdout_is_opened_once_when_the_program_is_in_a_later_path_entry)
{
    char *d = t_tmpdir();
    char *fifo = t_fmt("%s/fifo", d);
    ASSERT_SYS(mkfifo(fifo, 0600));
    struct fifo_reader reader = { .path = fifo };
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, read_fifo, &reader), 0);
    const char *env_set[] = { path_with_misses(probe_dir()), NULL };
    struct fl_cmd cmd = {
        .argv = ARGV((char *)probe_name(), "echo", "whole"),
        .env_set = env_set,
        .stdio = { [1] = { .kind = FL_FILE, .path = fifo, .flags = O_WRONLY } },
        .backend = BACKEND,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    ASSERT_EXITED(t_wait(&p), 0);
    pthread_join(t, NULL);
    /* One writer, one open: the reader saw the whole output, not an
     * early EOF from a writer that never ran. */
    ASSERT_STR_EQ(reader.text, "whole\n");
}

TEST(a_missing_program_in_a_path_search_runs_no_file_action)
{
    char *d = t_tmpdir();
    char *out = t_fmt("%s/out", d);
    const char *env_set[] = { path_with_misses(d), NULL };
    struct fl_cmd cmd = {
        .argv = ARGV("fl-no-such-program"),
        .env_set = env_set,
        .stdio = { [1] = { .kind = FL_FILE, .path = out } },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    /* The clone and fork children open stdout before they search; the
     * posix_spawn backend finds out first and starts nothing. */
    struct stat st;
    if (BACKEND == FL_BACKEND_POSIX_SPAWN)
        ASSERT_EQ(stat(out, &st), -1);
}

/* ---- scripts whose interpreter cannot run --------------------------------- */

static void resolve_reports_as_spawn(const struct fl_cmd *cmd, int err);

/* PATH=a:b, where a/fl-script cannot run and b/fl-script runs: the search
 * must pass a/ over, run b/'s and resolve to it. */
static void search_passes_over_the_file_in(const char *a)
{
    char *b = t_tmpdir();
    t_write_file(b, "fl-script", "#!/bin/sh\nexit 0\n", 0755);
    const char *env_set[] = { t_fmt("PATH=%s:%s", a, b), NULL };
    struct fl_cmd cmd = { .argv = ARGV("fl-script"), .env_set = env_set, .backend = BACKEND };
    int st;
    t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_STR_EQ(buf, t_fmt("%s/fl-script", b));
}

/* The same, a/fl-script a script that starts with first_line. */
static void search_passes_over(const char *a, const char *first_line)
{
    t_write_file(a, "fl-script", t_fmt("%s\nexit 7\n", first_line), 0755);
    search_passes_over_the_file_in(a);
}

TEST(a_path_search_goes_on_past_a_script_whose_interpreter_is_missing)
{
    search_passes_over(t_tmpdir(), "#!/nonexistent/interpreter");
}

TEST(a_path_search_goes_on_past_a_script_whose_interpreter_may_not_run)
{
    char *a = t_tmpdir();
    char *interp = t_write_file(a, "interp", "#!/bin/sh\nexit 7\n", 0644);
    search_passes_over(a, t_fmt("#!%s", interp));
}

TEST(a_path_search_goes_on_past_a_script_whose_interpreter_s_interpreter_is_missing)
{
    /* exec follows an interpreter that is itself a script: the missing one
     * is the second, and exec says ENOENT for the first. */
    char *a = t_tmpdir();
    char *inner = t_write_file(a, "inner", "#!/nonexistent/interpreter\n", 0755);
    search_passes_over(a, t_fmt("#!%s", inner));
}

TEST(a_path_search_goes_on_past_a_script_whose_interpreter_is_under_a_file)
{
    search_passes_over(t_tmpdir(), "#!/etc/passwd/interpreter");   /* ENOTDIR */
}

/* A copy of /bin/true, dir/name, whose program interpreter (its dynamic
 * loader, PT_INTERP) is /nonexistent/fl-ld.so: exec says ENOENT for it, as
 * for a program built for musl on a glibc system. Skips where /bin/true
 * names no loader (a static build) or is not this machine's ELF. */
static char *program_with_a_missing_loader(const char *dir, const char *name)
{
    static const char missing[] = "/nonexistent/fl-ld.so";
    int in = open("/bin/true", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0)
        SKIP(t_fmt("/bin/true cannot be read: %s", strerror(errno)));
    char *image = malloc((size_t)st.st_size);
    ASSERT(image != NULL);
    ASSERT_EQ(read(in, image, (size_t)st.st_size), st.st_size);
    close(in);
    Elf64_Ehdr eh;
    memcpy(&eh, image, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        sizeof(void *) != 8)
        SKIP("/bin/true is not a 64-bit ELF program as this build is");
    char *loader = NULL;
    for (int i = 0; i < eh.e_phnum && !loader; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, image + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_INTERP && ph.p_filesz >= sizeof missing)
            loader = image + ph.p_offset;
    }
    if (!loader)
        SKIP("/bin/true names no dynamic loader (a static build)");
    memcpy(loader, missing, sizeof missing);
    char *path = t_fmt("%s/%s", dir, name);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    ASSERT_SYS(out);
    ASSERT_EQ(write(out, image, (size_t)st.st_size), st.st_size);
    close(out);
    free(image);
    return path;
}

TEST(a_program_whose_loader_is_missing_is_enoent_naming_the_loader)
{
    char *prog = program_with_a_missing_loader(t_tmpdir(), "prog");
    struct fl_cmd cmd = { .argv = ARGV(prog), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, prog);
    ASSERT_STR_EQ(e.detail, "dynamic loader \"/nonexistent/fl-ld.so\" not found");
    char buf[4096];
    ASSERT_EQ(fl_resolve(&cmd, buf, sizeof buf, &e), ENOENT);
    ASSERT_STR_EQ(e.detail, "dynamic loader \"/nonexistent/fl-ld.so\" not found");
}

TEST(a_script_whose_interpreter_s_loader_is_missing_names_the_loader)
{
    char *d = t_tmpdir();
    char *interp = program_with_a_missing_loader(d, "interp");
    char *script = t_write_file(d, "script", t_fmt("#!%s\n", interp), 0755);
    struct fl_cmd cmd = { .argv = ARGV(script), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, "dynamic loader \"/nonexistent/fl-ld.so\" not found");
}

/* execvp() goes on past it, as past a script whose interpreter is
 * missing: so do the clone child's search, the posix_spawn backend's
 * pick and fl_resolve(). */
TEST(a_path_search_goes_on_past_a_program_whose_loader_is_missing)
{
    char *a = t_tmpdir();
    program_with_a_missing_loader(a, "fl-script");
    search_passes_over_the_file_in(a);
}

/* An interpreter that exec cannot look up for another reason than "not
 * there" ends the search with that error, in every backend and in
 * fl_resolve(), as it ends execvp()'s. */
TEST(a_path_search_stops_at_a_script_whose_interpreter_is_a_symlink_loop)
{
    char *a = t_tmpdir(), *b = t_tmpdir();
    char *loop = t_fmt("%s/loop", a);
    ASSERT_SYS(symlink(loop, loop));
    t_write_file(a, "fl-script", t_fmt("#!%s\nexit 7\n", loop), 0755);
    t_write_file(b, "fl-script", "#!/bin/sh\nexit 0\n", 0755);
    const char *env_set[] = { t_fmt("PATH=%s:%s", a, b), NULL };
    struct fl_cmd cmd = { .argv = ARGV("fl-script"), .env_set = env_set, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ELOOP, FL_STEP_EXEC);
    ASSERT_EQ(e.index, 0);
    resolve_reports_as_spawn(&cmd, ELOOP);
}

/* Scripts s1..sn in dir, s1's interpreter first, each next one's the one
 * before: the last one's path. */
static char *script_chain(const char *dir, const char *first, int n)
{
    char *prev = t_fmt("%s", first);
    for (int i = 1; i <= n; i++)
        prev = t_write_file(dir, t_fmt("s%d", i), t_fmt("#!%s\nexit 0\n", prev), 0755);
    return prev;
}

/* Scripts nested deeper than the kernel follows: ELOOP, found before the
 * spawn by the posix_spawn backend and fl_resolve() as by exec. */
TEST(scripts_nested_past_the_kernels_depth_are_eloop)
{
    char *d = t_tmpdir();
    char *prev = script_chain(d, "/bin/sh", 6);
    struct fl_cmd ok = { .argv = ARGV(t_fmt("%s/s5", d)), .backend = BACKEND };
    int st;
    t_run(&ok, &st);
    ASSERT_EXITED(st, 0);   /* five scripts deep: runs */
    struct fl_cmd deep = { .argv = ARGV(prev), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&deep, ELOOP, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "more than 5 scripts");   /* not a symlink loop */
    resolve_reports_as_spawn(&deep, ELOOP);
}

/* Six scripts: exec still looks up the sixth one's interpreter, and says
 * what that lookup says (ENOENT here, and a search goes on) before it
 * would say ELOOP. */
TEST(a_path_search_goes_on_past_six_scripts_whose_last_interpreter_is_missing)
{
    char *a = t_tmpdir();
    search_passes_over(a, t_fmt("#!%s", script_chain(a, "/nonexistent/interpreter", 5)));
}

/* A relative name is the child's after its chdir: the .cwd and the name
 * together may be longer than PATH_MAX, and the program still runs, in
 * every backend, and fl_resolve() finds it (ERANGE for a buffer too small
 * for the name it gives). */
TEST(a_relative_program_under_a_cwd_near_path_max_is_found)
{
    char *dir = t_fmt("%s", t_tmpdir());
    size_t want = PATH_MAX - 4;  /* "<dir>/./prog" is over PATH_MAX */
    while (strlen(dir) < want) {
        size_t room = want - strlen(dir) - 1, len = room < 250 ? room : 250;
        char *next = t_keep(malloc(strlen(dir) + len + 2));
        sprintf(next, "%s/%.*s", dir, (int)len,
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
        ASSERT_SYS(mkdir(next, 0755));
        dir = next;
    }
    ASSERT_EQ(strlen(dir), want);
    int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_SYS(dfd);
    ASSERT_SYS(symlinkat("/bin/true", dfd, "prog"));
    close(dfd);
    struct fl_cmd cmd = { .argv = ARGV("./prog"), .cwd = dir, .backend = BACKEND };
    int st;
    t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
    char *buf = t_keep(malloc(2 * PATH_MAX));
    ASSERT_OK(fl_resolve(&cmd, buf, 2 * PATH_MAX, NULL));
    ASSERT_STR_EQ(buf, t_fmt("%s/./prog", dir));
    ASSERT_ERR(fl_resolve(&cmd, buf, PATH_MAX, NULL), ERANGE);
}

TEST(a_missing_interpreter_is_read_from_the_childs_cwd)
{
    /* The parent's cwd holds a ./prog with a broken #! line; the child's
     * cwd has no prog at all: no word about an interpreter. */
    char *here = t_tmpdir(), *there = t_tmpdir();
    t_write_file(here, "prog", "#!/nonexistent/interpreter\n", 0755);
    char *old = getcwd(NULL, 0);
    ASSERT_SYS(chdir(here));
    struct fl_cmd cmd = { .argv = ARGV("./prog"), .cwd = there, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_SYS(chdir(old));
    free(old);
    ASSERT_STR_EQ(e.detail, "");
}

/* A relative interpreter is the child's cwd's, for a program found in an
 * absolute PATH entry too: exec opens it from there. */
TEST(a_relative_interpreter_of_a_program_in_an_absolute_path_entry_is_the_cwds)
{
    char *a = t_tmpdir(), *w = t_tmpdir();
    ASSERT_SYS(mkdir(t_fmt("%s/rl", w), 0755));
    ASSERT_SYS(symlink("/bin/sh", t_fmt("%s/rl/sh", w)));
    char *prog = t_write_file(a, "fl-prog", "#!rl/sh\nexit 0\n", 0755);
    const char *env_set[] = { t_fmt("PATH=%s", a), NULL };
    struct fl_cmd cmd = { .argv = ARGV("fl-prog"), .env_set = env_set, .cwd = w,
                          .backend = BACKEND };
    int st;
    t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_STR_EQ(buf, prog);
}

/* ---- #! lines the kernel will not read ------------------------------------ */

/* "#!/aaa...": a #! line whose interpreter name is n bytes long. */
static char *shebang_of(size_t n)
{
    char *s = t_keep(malloc(n + 3));
    memcpy(s, "#!/", 3);
    memset(s + 3, 'a', n - 1);
    s[n + 2] = '\0';
    return s;
}

/* PATH=a:b, a/fl-script holds content, b/fl-script runs. */
static struct fl_cmd two_scripts(const char *content, char **in_a)
{
    char *a = t_tmpdir(), *b = t_tmpdir();
    *in_a = t_write_file(a, "fl-script", content, 0755);
    t_write_file(b, "fl-script", "#!/bin/sh\nexit 0\n", 0755);
    const char **env_set = t_keep(calloc(2, sizeof *env_set));
    env_set[0] = t_fmt("PATH=%s:%s", a, b);
    static char *const argv[] = { "fl-script", NULL };
    return (struct fl_cmd){ .argv = argv, .env_set = env_set, .backend = BACKEND };
}

TEST(a_path_search_stops_at_a_shebang_too_long_for_the_kernel)
{
    /* The kernel reads 256 bytes; an interpreter name not ended within
     * them is ENOEXEC (Linux 5.0 and later), and exec stops there. */
    char *in_a;
    struct fl_cmd cmd = two_scripts(t_fmt("%s\nexit 7\n", shebang_of(300)), &in_a);
    struct fl_error e = SPAWN_FAILS(&cmd, ENOEXEC, FL_STEP_EXEC);
    ASSERT_EQ(e.index, 0);
    ASSERT_STR_EQ(e.path, in_a);
    ASSERT_STR_CONTAINS(e.detail, "#! line too long for the kernel");
    char buf[4096];
    ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, NULL), ENOEXEC);
}

TEST(a_shebang_too_long_for_the_kernel_runs_with_shell_fallback)
{
    char *in_a;
    struct fl_cmd cmd = two_scripts(t_fmt("%s\nexit 7\n", shebang_of(300)), &in_a);
    cmd.flags = FL_SHELL_FALLBACK;
    int st;
    t_run(&cmd, &st);
    ASSERT_EXITED(st, 7);
    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_STR_EQ(buf, in_a);
}

TEST(an_interpreter_name_ending_at_the_kernels_last_byte_is_read)
{
    /* "#!" and 253 bytes of name fill 255: the name ends in the buffer's
     * last byte, and a missing interpreter is passed over; 254 bytes do
     * not fit. */
    search_passes_over(t_tmpdir(), t_fmt("%s x", shebang_of(253)));
    char *in_a;
    struct fl_cmd cmd = two_scripts(t_fmt("%s\nexit 7\n", shebang_of(254)), &in_a);
    struct fl_error e = SPAWN_FAILS(&cmd, ENOEXEC, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.path, in_a);
    ASSERT_STR_CONTAINS(e.detail, "#! line too long for the kernel");
}

TEST(a_shebang_naming_no_interpreter_is_enoexec_saying_so)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "prog", "#!  \necho hi\n", 0755);
    struct fl_cmd cmd = { .argv = ARGV(f), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOEXEC, FL_STEP_EXEC);
    ASSERT_STR_CONTAINS(e.detail, "#! names no interpreter");
}

TEST(a_file_of_just_a_shebang_is_eacces_and_passed_over_in_a_search)
{
    /* exec opens the empty name, the cwd: a directory, EACCES. */
    char *in_a;
    struct fl_cmd cmd = two_scripts("#!", &in_a);
    struct fl_cmd direct = { .argv = ARGV(in_a), .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&direct, EACCES, FL_STEP_EXEC);
    ASSERT_STR_EQ(e.detail, "#! names no interpreter");
    int st;
    t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
    char buf[4096];
    ASSERT_OK(fl_resolve(&cmd, buf, sizeof buf, NULL));
    ASSERT_NE(strcmp(buf, in_a), 0);
}

/* ---- fl_resolve() reports as fl_spawn() does ------------------------------- */

/* fl_spawn() fails with err at exec, and fl_resolve() fills the very same
 * record: index, path and detail. */
static void resolve_reports_as_spawn(const struct fl_cmd *cmd, int err)
{
    struct fl_error spawned = SPAWN_FAILS(cmd, err, FL_STEP_EXEC), resolved;
    char buf[4096];
    ASSERT_ERR(fl_resolve(cmd, buf, sizeof buf, &resolved), err);
    ASSERT_EQ(resolved.step, spawned.step);
    ASSERT_EQ(resolved.index, spawned.index);
    ASSERT_STR_EQ(resolved.path, spawned.path);
    ASSERT_STR_EQ(resolved.detail, spawned.detail);
}

TEST(fl_resolve_reports_a_missing_interpreter_as_fl_spawn_does)
{
    char *d = t_tmpdir();
    char *prog = t_write_file(d, "prog", "#!/nonexistent/interpreter\n", 0755);
    const char *env_set[] = { t_fmt("PATH=%s", d), NULL };
    struct fl_cmd cmd = { .argv = ARGV("prog"), .env_set = env_set, .backend = BACKEND };
    resolve_reports_as_spawn(&cmd, ENOENT);   /* one PATH entry */
    struct fl_error e;
    char buf[64];
    fl_resolve(&cmd, buf, sizeof buf, &e);
    ASSERT_EQ(e.index, 0);
    ASSERT_STR_EQ(e.path, prog);
    ASSERT_STR_CONTAINS(e.detail, "/nonexistent/interpreter");
    cmd.argv = ARGV(prog);                    /* named with '/' */
    resolve_reports_as_spawn(&cmd, ENOENT);
}

/* PATH is path_before, then a directory holding prog, a script whose
 * interpreter is missing, then one more: every candidate fails, but the
 * search names the one that was there (index at) and its interpreter, not
 * "not found in PATH". The errno stays ENOENT, as execvp() says it. */
static void failed_search_names_the_file_it_found(const char *path_before, int at)
{
    char *b = t_tmpdir();
    char *prog = t_write_file(b, "prog", "#!/nonexistent/interpreter\n", 0755);
    const char *env_set[] = { t_fmt("PATH=%s:%s:%s", path_before, b, t_tmpdir()), NULL };
    struct fl_cmd cmd = { .argv = ARGV("prog"), .env_set = env_set, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_EXEC);
    ASSERT_EQ(e.index, at);
    ASSERT_STR_EQ(e.path, prog);
    ASSERT_STR_CONTAINS(e.detail, "/nonexistent/interpreter");
    resolve_reports_as_spawn(&cmd, ENOENT);
}

TEST(a_failed_search_of_several_directories_names_the_file_it_found)
{
    failed_search_names_the_file_it_found(t_tmpdir(), 1);
}

/* The clone child notes each candidate's error however many there are. */
TEST(a_failed_search_names_the_file_it_found_past_the_64th_directory)
{
    char *empty = t_tmpdir();
    char *path = empty;
    for (int i = 1; i < 70; i++)
        path = t_fmt("%s:%s/%d", path, empty, i);
    failed_search_names_the_file_it_found(path, 70);
}

/* An interpreter named under a file: exec says ENOTDIR, and so does a
 * one-entry search, fl_resolve() and every backend, as execvp(). */
TEST(a_one_entry_search_keeps_exec_s_enotdir_for_an_interpreter_under_a_file)
{
    char *d = t_tmpdir();
    char *file = t_write_file(d, "plain", "", 0644);
    char *prog = t_write_file(d, "prog", t_fmt("#!%s/interpreter\n", file), 0755);
    const char *env_set[] = { t_fmt("PATH=%s", d), NULL };
    struct fl_cmd cmd = { .argv = ARGV("prog"), .env_set = env_set, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOTDIR, FL_STEP_EXEC);
    ASSERT_EQ(e.index, 0);
    ASSERT_STR_EQ(e.path, prog);
    resolve_reports_as_spawn(&cmd, ENOTDIR);
}

TEST(fl_resolve_reports_a_failed_search_as_fl_spawn_does)
{
    char *a = t_tmpdir(), *b = t_tmpdir();
    const char *env_set[] = { t_fmt("PATH=%s:%s", a, b), NULL };
    struct fl_cmd cmd = { .argv = ARGV("prog"), .env_set = env_set, .backend = BACKEND };
    resolve_reports_as_spawn(&cmd, ENOENT);   /* nowhere */
    t_write_file(b, "prog", "#!/bin/sh\n", 0644);
    resolve_reports_as_spawn(&cmd, EACCES);   /* not executable */
    t_write_file(a, "prog", t_fmt("%s\n", shebang_of(300)), 0755);
    resolve_reports_as_spawn(&cmd, ENOEXEC);  /* a #! line the kernel will not read */
    cmd.argv = ARGV(t_fmt("%s/prog/x", a));   /* ENOTDIR, named with '/' */
    resolve_reports_as_spawn(&cmd, ENOTDIR);
}

/* ---- a candidate of exactly PATH_MAX - 1 bytes ----------------------------- */

TEST(a_path_candidate_of_path_max_minus_one_bytes_runs)
{
    char *d = t_tmpdir();
    char *dir = t_strdup(d);
    /* Directories of 200 bytes until the candidate "<dir>/x" is 4095 long. */
    while (strlen(dir) + 1 + 1 < PATH_MAX - 1) {
        size_t room = PATH_MAX - 1 - (strlen(dir) + 1 + 1) - 1;  /* '/' before the name */
        size_t n = room > 200 ? 200 : room;
        if (n == 0)
            break;
        char name[256];
        memset(name, 'd', n);
        name[n] = '\0';
        dir = t_fmt("%s/%s", dir, name);
        ASSERT_SYS(mkdir(dir, 0755));
    }
    ASSERT_EQ(strlen(dir) + 2, PATH_MAX - 1);
    t_write_file(dir, "x", "#!/bin/sh\nexit 0\n", 0755);
    const char *env_set[] = { t_fmt("PATH=%s", dir), NULL };
    struct fl_cmd cmd = { .argv = ARGV("x"), .env_set = env_set, .backend = BACKEND };
    int st;
    t_run(&cmd, &st);
    ASSERT_EXITED(st, 0);
}

/* ---- which step failed, for every backend ---------------------------------- */

TEST(a_cwd_that_is_a_file_fails_at_chdir)
{
    char *d = t_tmpdir();
    char *f = t_write_file(d, "file", "", 0644);
    struct fl_cmd cmd = { .argv = ARGV("/bin/true"), .cwd = f, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOTDIR, FL_STEP_CHDIR);
    ASSERT_STR_EQ(fl_step_name(e.step), "chdir");
}

TEST(a_missing_cwd_fails_at_chdir_before_any_path_search)
{
    /* The child's PATH is set, with entries to search: the test's own may
     * have none, and a search of nothing is refused before the chdir. */
    struct fl_cmd cmd = { .argv = ARGV("fl-no-such-program"), .cwd = "/nonexistent/dir",
                          .env_set = TOOLS_PATH_ENV, .backend = BACKEND };
    struct fl_error e = SPAWN_FAILS(&cmd, ENOENT, FL_STEP_CHDIR);
    ASSERT_STR_EQ(fl_step_name(e.step), "chdir");
}

/* fl_resolve() fills its record as fl_spawn() would: a .cwd the child
 * cannot enter fails at chdir, before any search. */
TEST(fl_resolve_reports_a_cwd_it_cannot_enter_as_fl_spawn_does)
{
    char *d = t_tmpdir();
    char *file = t_write_file(d, "file", "", 0644);
    const char *cwds[] = { t_fmt("%s/missing", d), file };
    const int errs[] = { ENOENT, ENOTDIR };
    for (int i = 0; i < 2; i++) {
        const char *env_set[] = { "PATH=/usr/bin:/bin", NULL };
        struct fl_cmd cmd = { .argv = ARGV("true"), .env_set = env_set, .cwd = cwds[i],
                              .backend = BACKEND };
        struct fl_error spawned = SPAWN_FAILS(&cmd, errs[i], FL_STEP_CHDIR), resolved;
        char buf[4096];
        ASSERT_ERR(fl_resolve(&cmd, buf, sizeof buf, &resolved), errs[i]);
        ASSERT_EQ(resolved.step, spawned.step);
        ASSERT_EQ(resolved.index, spawned.index);
        ASSERT_STR_EQ(resolved.path, spawned.path);
        ASSERT_STR_EQ(resolved.detail, spawned.detail);
    }
}

TEST(an_open_that_fails_like_exec_is_not_blamed_on_exec)
{
    /* EISDIR is an error exec gives too; here the open gave it. */
    char *d = t_tmpdir();
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .stdio = { [1] = { .kind = FL_FILE, .path = d, .flags = O_RDONLY | O_CREAT } },
        .backend = BACKEND,
    };
    struct fl_error e = SPAWN_FAILS(&cmd, EISDIR, FL_STEP_OPEN);
    ASSERT_NE(e.step, FL_STEP_EXEC);
}
