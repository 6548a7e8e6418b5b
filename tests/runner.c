/*
 * runner.c: main() and helpers of the test framework (see test.h).
 *
 *     <binary> --list                 prints the cases, one a line
 *     <binary> --expect CASE...       checks that the cases are exactly
 *                                     these (what CMake found in the file)
 *     <binary> <case> <backend>       runs one case; exit 0 pass, 77 skip
 *
 * <backend> is clone, posix_spawn, fork or auto.
 */
#include "test.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>

enum fl_backend fl_test_backend = FL_BACKEND_AUTO;
/* The built probe, or a copy that every user can execute (see main). */
char fl_test_probe[4096] = FL_TEST_PROBE;
const char *fl_test_case = "";

/* ------------------------------------------------------------------------ */
/* Registry                                                                 */
/* ------------------------------------------------------------------------ */

#define MAX_CASES 256
static struct {
    const char *name;
    fl_test_fn fn;
} cases[MAX_CASES];
static int ncases;

void fl_test_register(const char *name, fl_test_fn fn)
{
    if (ncases == MAX_CASES) {
        fprintf(stderr, "too many test cases\n");
        abort();
    }
    cases[ncases].name = name;
    cases[ncases].fn = fn;
    ncases++;
}

/* ------------------------------------------------------------------------ */
/* Kept allocations and temporary directories                               */
/* ------------------------------------------------------------------------ */

static void **kept;
static size_t nkept, capkept;

/* Cases keep memory from their helper threads too. */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

void *t_keep(void *p)
{
    if (!p) {
        fprintf(stderr, "out of memory\n");
        abort();
    }
    pthread_mutex_lock(&kept_lock);
    if (nkept == capkept) {
        capkept = capkept ? 2 * capkept : 64;
        kept = realloc(kept, capkept * sizeof *kept);
        if (!kept)
            abort();
    }
    kept[nkept++] = p;
    pthread_mutex_unlock(&kept_lock);
    return p;
}

char *t_strdup(const char *s)
{
    return t_keep(strdup(s));
}

char *t_fmt(const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return t_keep(s);
}

/* Each directory is removed by the process that made it: a forked helper
 * of a case removes its own (t_helper_exit()), never its parent's. */
static struct {
    char *path;
    pid_t owner;
} tmpdirs[16];
static int ntmpdirs;

/* Removes the tree at name (in the directory at), by fds: nftw() works with whole
 * paths, which fail past PATH_MAX, and cases make trees deeper than that.
 * A directory a case left without permissions is given them back first. An
 * fd per level: a tree deeper than this is left in /tmp. */
#define TREE_DEPTH_MAX 256

static void remove_tree_at(int at, const char *name, int depth)
{
    if (unlinkat(at, name, 0) == 0 || (errno != EISDIR && errno != EPERM))
        return;  /* Linux's unlink() of a directory: EISDIR (POSIX: EPERM) */
    int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(at, name, flags);
    if (fd < 0 && errno == EACCES && fchmodat(at, name, 0700, 0) == 0)
        fd = openat(at, name, flags);
    if (fd < 0)
        return;
    (void)fchmod(fd, 0700);  /* write access, to remove what it holds */
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *de;
    while (depth < TREE_DEPTH_MAX && (de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            remove_tree_at(dirfd(d), de->d_name, depth + 1);
    closedir(d);
    unlinkat(at, name, AT_REMOVEDIR);
}

static void remove_tree(const char *path)
{
    remove_tree_at(AT_FDCWD, path, 0);
}

/*
 * Executables for a child that runs as another user. The build tree may
 * sit in a directory that only its owner can search (root's home is 0700
 * on Debian, so is a `mktemp -d` directory): exec from there fails with
 * ENOENT for anyone else. t_exe_for_anyone() copies such a file into a
 * private directory that every user can search, /tmp/fl-bin-XXXXXX (mode
 * 0755, files 0755; see choose_tmp_base() for a noexec /tmp); the process
 * that made it removes it when the case ends (a forked child of the case
 * never does).
 */
static char bindir[320];
static pid_t bindir_owner;

static void remove_bindir(void)
{
    if (!bindir[0] || getpid() != bindir_owner)
        return;
    remove_tree(bindir);
    bindir[0] = 0;
}

static void remove_tmpdirs(void)
{
    remove_bindir();
    for (int i = 0; i < ntmpdirs; i++) {
        if (tmpdirs[i].owner != getpid())
            continue;
        remove_tree(tmpdirs[i].path);
    }
    ntmpdirs = 0;
}

/* Where the cases make their directories: /tmp, unless it is mounted
 * noexec (as hardened systems mount it), for the cases run what they
 * write there; then the first of $TMPDIR, /var/tmp and /dev/shm that a
 * program may be run from, and that every user may search (a case runs
 * its copies as uid 65534). Set before the case starts (main()). */
static char tmp_base[256] = "/tmp";

static bool searchable_by_all(const char *dir)
{
    char path[sizeof tmp_base];
    snprintf(path, sizeof path, "%s", dir);
    for (char *end = path + strlen(path); end > path; end = strrchr(path, '/')) {
        *end = 0;
        struct stat st;
        if (stat(path[0] ? path : "/", &st) != 0 || !(st.st_mode & S_IXOTH))
            return false;
    }
    return true;
}

static void choose_tmp_base(void)
{
    const char *cands[] = { "/tmp", getenv("TMPDIR"), "/var/tmp", "/dev/shm" };
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        struct statvfs sv;
        const char *c = cands[i];
        if (c && c[0] == '/' && strlen(c) < sizeof tmp_base - 32 && access(c, W_OK | X_OK) == 0 &&
            statvfs(c, &sv) == 0 && !(sv.f_flag & ST_NOEXEC) && searchable_by_all(c)) {
            snprintf(tmp_base, sizeof tmp_base, "%s", c);
            return;
        }
    }
}

char *t_tmpdir(void)
{
    if (ntmpdirs == 16)
        FAIL("too many temporary directories");
    char *d = t_fmt("%s/fl-test-XXXXXX", tmp_base);
    if (!mkdtemp(d))
        FAIL("mkdtemp: %s", strerror(errno));
    tmpdirs[ntmpdirs].path = d;
    tmpdirs[ntmpdirs].owner = getpid();
    ntmpdirs++;
    return d;
}

int t_in_pid_namespace(int (*fn)(int), int arg)
{
    if (geteuid() != 0)
        SKIP("needs root: a pid namespace");
    pid_t pid = fork();
    if (pid < 0)
        FAIL("fork: %s", strerror(errno));
    if (pid == 0) {
        if (unshare(CLONE_NEWPID) != 0)
            _exit(105);
        pid_t init = fork();
        if (init == 0)
            _exit(fn(arg));
        int st;
        _exit(init > 0 && waitpid(init, &st, 0) == init && WIFEXITED(st) ? WEXITSTATUS(st)
                                                                          : 106);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid)
        FAIL("waitpid: %s", strerror(errno));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 105)
        SKIP("no pid namespace to be had here (unshare(CLONE_NEWPID) failed)");
    return st;
}

void t_needs_pidfs(void)
{
    int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    struct statfs fs;
    bool pidfs = fd >= 0 && fstatfs(fd, &fs) == 0 && fs.f_type == 0x50494446 /* PID_FS_MAGIC */;
    if (fd >= 0)
        close(fd);
    if (!pidfs)
        SKIP("no pidfs (Linux 6.9) or pidfd_open() refused: a handle without a pidfd cannot "
             "tell its process from a later child of ours with its pid (see FL_NO_PIDFD)");
}

struct rlimit t_lower_address_space(unsigned long long headroom)
{
    unsigned long long vm_pages = 0;
    FILE *f = fopen("/proc/self/statm", "re");
    if (!f || fscanf(f, "%llu", &vm_pages) != 1)
        SKIP("no /proc/self/statm");
    fclose(f);
    struct rlimit old, low;
    if (getrlimit(RLIMIT_AS, &old) != 0)
        FAIL("getrlimit: %s", strerror(errno));
    low = (struct rlimit){ vm_pages * (unsigned long long)sysconf(_SC_PAGESIZE) + headroom,
                           old.rlim_max };
    if (old.rlim_max != RLIM_INFINITY && low.rlim_cur > old.rlim_max)
        low.rlim_cur = old.rlim_max;
    if (setrlimit(RLIMIT_AS, &low) != 0)
        FAIL("setrlimit: %s", strerror(errno));
    return old;
}

void t_helper_exit(int code)
{
    remove_tmpdirs();
    _exit(code);
}

pid_t t_fork_piped(int *fd)
{
    int pfd[2];
    ASSERT_SYS(pipe2(pfd, O_CLOEXEC));
    pid_t pid = fork();
    ASSERT_SYS(pid);
    close(pfd[pid == 0 ? 0 : 1]);
    *fd = pfd[pid == 0 ? 1 : 0];
    return pid;
}

/* The system's standard PATH, confstr(_CS_PATH): where execvp() and the
 * library search when the environment has no PATH at all ("/bin:/usr/bin"
 * with glibc and musl, which finds the tools with or without a merged
 * /usr). */
static const char *standard_path(void)
{
    static char path[1024];
    if (!path[0]) {
        size_t n = confstr(_CS_PATH, path, sizeof path);
        if (n == 0 || n > sizeof path)
            snprintf(path, sizeof path, "/bin:/usr/bin");
    }
    return path;
}

const char *t_tools_path(void)
{
    static char *entry;
    if (!entry)
        entry = t_fmt("PATH=%s", standard_path());
    return entry;
}

char *t_tool(const char *name)
{
    const char *dirs = standard_path();
    for (const char *d = dirs; *d;) {
        size_t len = strcspn(d, ":");
        char *path = t_fmt("%.*s/%s", (int)len, d, name);
        struct stat st;
        if (len > 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            access(path, X_OK) == 0)
            return path;
        d += len + (d[len] == ':');
    }
    SKIP(t_fmt("needs %s, which is in no directory of the standard PATH %s",
               name, dirs));
}

/* Copies the file at fd src to path (which must not exist), mode 0755. */
static void copy_exe_to(int src, const char *from, const char *path)
{
    int dst = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    if (dst < 0)
        FAIL("open %s: %s", path, strerror(errno));
    char buf[65536];
    for (;;) {
        ssize_t n = read(src, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            FAIL("read %s: %s", from, strerror(errno));
        if (n == 0)
            break;
        t_write_all(dst, buf, (size_t)n);
    }
    /* Explicit: the umask must not take the bits away. */
    if (fchmod(dst, 0755) != 0)
        FAIL("chmod %s: %s", path, strerror(errno));
    if (close(dst) != 0)
        FAIL("close %s: %s", path, strerror(errno));
}

char *t_exe_for_anyone(const char *path)
{
    if (!bindir[0]) {
        char *d = t_fmt("%s/fl-bin-XXXXXX", tmp_base);
        if (!mkdtemp(d))
            FAIL("mkdtemp %s: %s", d, strerror(errno));
        snprintf(bindir, sizeof bindir, "%s", d);
        bindir_owner = getpid();
        if (chmod(bindir, 0755) != 0)
            FAIL("chmod %s: %s", bindir, strerror(errno));
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *copy = t_fmt("%s/%s", bindir, base);
    if (access(copy, F_OK) == 0)
        return copy;    /* copied before */
    int src = open(path, O_RDONLY | O_CLOEXEC);
    if (src < 0)
        FAIL("open %s: %s", path, strerror(errno));
    copy_exe_to(src, path, copy);
    close(src);
    return copy;
}

char *t_write_file(const char *dir, const char *name, const char *content,
                   mode_t mode)
{
    char *path = t_fmt("%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        FAIL("open %s: %s", path, strerror(errno));
    t_write_all(fd, content, strlen(content));
    close(fd);
    if (chmod(path, mode) != 0)
        FAIL("chmod %s: %s", path, strerror(errno));
    return path;
}

char *t_read_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 && errno == EACCES && stat(path, &st) == 0 &&
        st.st_uid == geteuid() && chmod(path, st.st_mode | S_IRUSR) == 0) {
        /* A child made it under a umask that denies its owner read (the
         * differential cases pick any umask); root would read it anyway. */
        fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0)
        FAIL("open %s: %s", path, strerror(errno));
    char *s = t_read_all(fd);
    close(fd);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Failing, skipping, cleaning up                                           */
/* ------------------------------------------------------------------------ */

const char *fl_t_errname(int e)
{
#if defined(__GLIBC__)
    const char *n = e ? strerrorname_np(e) : "0";
#else
    const char *n = e ? strerror(e) : "0";
#endif
    return n ? n : "?";
}

void t_kill_children(void)
{
    pid_t me = getpid();
    DIR *d = opendir("/proc");
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            char path[64], buf[512];
            pid_t pid = (pid_t)atoi(de->d_name);
            if (pid <= 0)
                continue;
            snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            ssize_t n = read(fd, buf, sizeof buf - 1);
            close(fd);
            if (n <= 0)
                continue;
            buf[n] = 0;
            char *p = strrchr(buf, ')');
            int ppid = 0;
            char state;
            if (p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 && ppid == me)
                kill(pid, SIGKILL);
        }
        closedir(d);
    }
    while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
        ;
}

void fl_t_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dprintf(2, "%s:%d: FAIL [%s, backend %s]: %s\n", file, line,
            fl_test_case, fl_backend_name(fl_test_backend), msg);
    t_kill_children();
    remove_tmpdirs();
    abort();
}

void fl_t_fail_str(const char *file, int line, const char *what, const char *a, const char *b)
{
    enum { WHOLE = 1500, AROUND = 40 };
    if (!a || !b || (strlen(a) < WHOLE && strlen(b) < WHOLE))
        fl_t_fail(file, line, "%s failed: \"%s\" vs \"%s\"", what, a ? a : "(null)",
                  b ? b : "(null)");
    size_t la = strlen(a), lb = strlen(b), at = 0;
    while (at < la && at < lb && a[at] == b[at])
        at++;
    size_t from = at > AROUND ? at - AROUND : 0;
    fl_t_fail(file, line,
              "%s failed: %zu bytes vs %zu, first difference at byte %zu: "
              "\"%.*s\" vs \"%.*s\" (from byte %zu)", what, la, lb, at,
              2 * AROUND, a + from, 2 * AROUND, b + from, from);
}

void fl_t_skip(const char *reason)
{
    dprintf(1, "SKIP: %s\n", reason);
    t_kill_children();
    remove_tmpdirs();
    exit(77);
}

static void on_watchdog(int sig)
{
    (void)sig;
    static const char m[] = "FAIL: the case did not end in time (hang?)\n";
    if (write(2, m, sizeof m - 1) < 0) {
        /* nothing to do */
    }
    t_kill_children();
    remove_tmpdirs(); /* not async-signal-safe, but the case is over */
    _exit(1);
}

/* ------------------------------------------------------------------------ */
/* Spawning helpers                                                         */
/* ------------------------------------------------------------------------ */

static bool proc_is_empty(const struct fl_proc *p)
{
    return p->pid == 0 && p->pidfd == -1 && p->stdio[0] == -1 &&
           p->stdio[1] == -1 && p->stdio[2] == -1 && p->pty == -1;
}

/* The posix_spawn backend on a libc without a closefrom action refuses
 * close-others (see FL_T_POSIX_SPAWN_CLOSES_FDS): the refusal must be
 * exact, and then the case cannot go on under this backend. */
static void skip_if_close_others_refused(const struct fl_cmd *cmd, int r,
                                         const struct fl_error *e,
                                         const struct fl_proc *p,
                                         const char *file, int line)
{
    if (FL_T_POSIX_SPAWN_CLOSES_FDS || r != ENOTSUP ||
        cmd->backend != FL_BACKEND_POSIX_SPAWN || (cmd->flags & FL_KEEP_FDS))
        return;
    if (e->err != ENOTSUP || e->step != FL_STEP_PREPARE ||
        !strstr(e->detail, "addclosefrom_np") || !proc_is_empty(p))
        fl_t_fail(file, line, "close-others refused, but not as documented: "
                  "err=%d step=%s detail \"%s\" pid %d", e->err,
                  fl_step_name(e->step), e->detail, (int)p->pid);
    fl_t_skip("this libc's posix_spawn has no closefrom action: close-others "
              "is ENOTSUP, as asserted (docs/musl.md)");
}

void fl_t_spawn(const struct fl_cmd *cmd, struct fl_proc *proc,
                const char *file, int line)
{
    struct fl_error e;
    int r = fl_spawn(cmd, proc, &e);
    if (r != 0) {
        skip_if_close_others_refused(cmd, r, &e, proc, file, line);
        char buf[2048];
        fl_t_fail(file, line,
                  "fl_spawn failed: %d (%s) err=%d step=%s index=%d: %s", r,
                  fl_t_errname(r), e.err, fl_step_name(e.step), e.index,
                  fl_error_format(&e, buf, sizeof buf));
    }
    if (proc->pid <= 0)
        fl_t_fail(file, line, "fl_spawn returned 0 but pid is %d",
                  (int)proc->pid);
    if (e.err != 0 || e.step != FL_STEP_NONE)
        fl_t_fail(file, line, "error not cleared on success: err=%d step=%d",
                  e.err, (int)e.step);
}

void fl_t_needs_close_others(const char *file, int line)
{
    if (FL_T_POSIX_SPAWN_CLOSES_FDS || fl_test_backend != FL_BACKEND_POSIX_SPAWN)
        return;
    struct fl_cmd cmd = { .argv = ARGV(t_tool("true")), .backend = fl_test_backend };
    struct fl_proc p;
    fl_t_spawn(&cmd, &p, file, line);   /* skips the case after the refusal */
    t_wait(&p);
    fl_t_fail(file, line, "posix_spawn ran with close-others on a libc "
              "without a closefrom action");
}

/* ------------------------------------------------------------------------ */
/* What the machine may lack (NEEDS_SECCOMP, NEEDS_PTY)                     */
/* ------------------------------------------------------------------------ */

/* A probe's answer, kept: "" when the feature is there, else the reason. */
struct t_feature {
    bool probed;
    char missing[256];
};

static void t_feature_missing(struct t_feature *f, const char *lack, const char *call, int err)
{
    snprintf(f->missing, sizeof f->missing, "%s: %s failed with %s (%s)", lack, call,
             fl_t_errname(err), strerror(err));
}

/* In a forked child, as the filter binds the process for good: one
 * allow-all filter installed each way the library and the cases install
 * theirs, after no_new_privs (which an unprivileged installer needs). The
 * child sends {step, errno} for the first call that failed, step 0 if none. */
static void probe_seccomp_child(int fd)
{
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = { .len = 1, .filter = &allow };
    int res[2] = { 0, 0 };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        res[0] = 1;
    else if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
        res[0] = 2;
    else if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
        res[0] = 3;
    else if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != SECCOMP_MODE_FILTER) {
        res[0] = 4;
        errno = EINVAL;   /* accepted, yet not in force */
    }
    res[1] = res[0] ? errno : 0;
    _exit(write(fd, res, sizeof res) == (ssize_t)sizeof res ? 0 : 1);
}

void fl_t_needs_seccomp(void)
{
    static struct t_feature f;
    if (!f.probed) {
        static const char *const calls[] = {
            NULL,
            "prctl(PR_SET_NO_NEW_PRIVS)",
            "seccomp(SECCOMP_SET_MODE_FILTER) of an allow-all filter",
            "prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) of an allow-all filter",
            "prctl(PR_GET_SECCOMP) after an allow-all filter",
        };
        int fd;
        pid_t pid = t_fork_piped(&fd);
        if (pid == 0)
            probe_seccomp_child(fd);
        int res[2] = { -1, 0 };
        ssize_t n;
        while ((n = read(fd, res, sizeof res)) < 0 && errno == EINTR)
            ;
        close(fd);
        int st;
        while (waitpid(pid, &st, 0) < 0)
            if (errno != EINTR)
                FAIL("waitpid: %s", strerror(errno));
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
            /* A filter of the container's that kills for these calls. */
            snprintf(f.missing, sizeof f.missing, "cannot install a seccomp filter here: the "
                     "probe was killed by SIGSYS (the filter this process runs under)");
        else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || n != (ssize_t)sizeof res ||
                 res[0] < 0 || res[0] > 4)
            FAIL("the seccomp probe failed: status 0x%x", st);
        else if (res[0] != 0)
            t_feature_missing(&f, "cannot install a seccomp filter here", calls[res[0]], res[1]);
        f.probed = true;
    }
    if (f.missing[0])
        SKIP(f.missing);
}

void fl_t_needs_pty(void)
{
    static struct t_feature f;
    if (!f.probed) {
        char name[128] = "";
        const char *call = NULL;
        int err = 0;
        int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (m < 0)
            call = "posix_openpt(\"/dev/ptmx\")", err = errno;
        else if (grantpt(m) != 0)
            call = "grantpt", err = errno;
        else if (unlockpt(m) != 0)
            call = "unlockpt", err = errno;
        else if ((err = ptsname_r(m, name, sizeof name)) != 0)
            call = "ptsname";
        else {
            int s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
            if (s < 0)
                call = t_fmt("opening the terminal side \"%s\"", name), err = errno;
            else
                close(s);
        }
        if (m >= 0)
            close(m);
        if (call)
            t_feature_missing(&f, "no pseudo-terminal here", call, err);
        f.probed = true;
    }
    if (f.missing[0])
        SKIP(f.missing);
}

bool fl_t_step_is(const struct fl_error *e, enum fl_step step)
{
    if (e->step == step)
        return true;
    return fl_test_backend == FL_BACKEND_POSIX_SPAWN &&
           e->step == FL_STEP_SPAWN && step > FL_STEP_CLONE;
}

struct fl_error fl_t_spawn_fails(const struct fl_cmd *cmd, int err,
                                 enum fl_step step, const char *file,
                                 int line)
{
    struct fl_error e;
    struct fl_proc p;
    memset(&e, 0x5a, sizeof e);
    memset(&p, 0x5a, sizeof p);
    int r = fl_spawn(cmd, &p, &e);
    if (r == 0) {
        int st = 0;
        fl_kill(&p, SIGKILL);
        fl_wait(&p, -1, &st);
        fl_close(&p);
        fl_t_fail(file, line, "fl_spawn succeeded, expected %d (%s)", err,
                  fl_t_errname(err));
    }
    if (err != ENOTSUP)
        skip_if_close_others_refused(cmd, r, &e, &p, file, line);
    char buf[2048];
    fl_error_format(&e, buf, sizeof buf);
    if (r != err)
        fl_t_fail(file, line, "fl_spawn returned %d (%s), expected %d (%s): %s",
                  r, fl_t_errname(r), err, fl_t_errname(err), buf);
    if (e.err != err)
        fl_t_fail(file, line, "error.err is %d, expected %d", e.err, err);
    if (step != FL_STEP_NONE && !fl_t_step_is(&e, step))
        fl_t_fail(file, line, "error.step is %s, expected %s (%s)",
                  fl_step_name(e.step), fl_step_name(step), buf);
    if (!memchr(e.path, 0, sizeof e.path) ||
        !memchr(e.detail, 0, sizeof e.detail))
        fl_t_fail(file, line, "error.path or error.detail not terminated");
    if (!proc_is_empty(&p))
        fl_t_fail(file, line,
                  "handle not empty after failure: pid %d pidfd %d stdio "
                  "%d %d %d",
                  (int)p.pid, p.pidfd, p.stdio[0], p.stdio[1], p.stdio[2]);
    return e;
}

void t_write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            FAIL("write: %s", strerror(errno));
        s += w;
        n -= (size_t)w;
    }
}

static char *read_all(int fd, int timeout_ms)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        FAIL("out of memory");
    for (;;) {
        if (timeout_ms >= 0) {
            struct pollfd pfd = { .fd = fd, .events = POLLIN };
            int n = poll(&pfd, 1, timeout_ms);
            if (n < 0 && errno == EINTR)
                continue;
            if (n == 0)
                FAIL("no EOF on fd %d after %d ms (a leaked write end?)", fd,
                     timeout_ms);
        }
        if (cap - len < 2048) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf)
                FAIL("out of memory");
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            FAIL("read fd %d: %s", fd, strerror(errno));
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = 0;
    return t_keep(buf);
}

char *t_read_all(int fd)
{
    return read_all(fd, -1);
}

char *t_read_all_within(int fd, int timeout_ms)
{
    return read_all(fd, timeout_ms);
}

ssize_t t_read(int fd, void *buf, size_t n)
{
    ssize_t r = read(fd, buf, n);
    if (r < 0 && errno == EIO)
        r = read(fd, buf, n);
    return r;
}

char *t_read_until(int fd, const char *needle)
{
    enum { HANG_MS = 20000, SIZE = 65536 };
    char *buf = t_keep(malloc(SIZE));
    size_t len = 0;
    buf[0] = 0;
    while (!strstr(buf, needle)) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int n = poll(&pfd, 1, HANG_MS);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            FAIL("no \"%s\" after %d ms: \"%s\"", needle, HANG_MS, buf);
        if (len + 1 >= SIZE)
            FAIL("no \"%s\" in the first %d bytes", needle, SIZE);
        ssize_t r = t_read(fd, buf + len, SIZE - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            FAIL("the output ended before \"%s\": \"%s\" (%s)", needle, buf,
                 r < 0 ? strerror(errno) : "EOF");
        len += (size_t)r;
        buf[len] = 0;
    }
    return buf;
}

int t_wait(struct fl_proc *p)
{
    int st = -1;
    int r = fl_wait(p, -1, &st);
    if (r != 0)
        FAIL("fl_wait returned %d (%s)", r, fl_t_errname(r));
    fl_close(p);
    return st;
}

void t_kill_wait(struct fl_proc *p)
{
    fl_kill(p, SIGKILL);
    fl_wait(p, -1, NULL);
    fl_close(p);
}

char *t_run(const struct fl_cmd *cmd, int *status)
{
    struct fl_cmd c = *cmd;
    struct fl_proc p;
    bool mapped1 = false;
    for (size_t i = 0; i < c.nfds; i++)
        if (c.fds[i].child_fd == 1)
            mapped1 = true;
    bool piped = !mapped1 && c.stdio[1].kind == FL_INHERIT;
    if (piped)
        c.stdio[1].kind = FL_PIPE;
    SPAWN(&c, &p);
    char *out = "";
    if (piped || c.stdio[1].kind == FL_PIPE) {
        out = t_read_all(p.stdio[1]);
        close(p.stdio[1]);
        p.stdio[1] = -1;
    }
    int st = t_wait(&p);
    if (status)
        *status = st;
    return out;
}

char *t_probe(const struct fl_cmd *cmd)
{
    int st;
    char *out = t_run(cmd, &st);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL("the probe did not exit 0: status 0x%x; output:\n%s", st, out);
    return out;
}

bool t_rerun_as_nobody(void)
{
    if (geteuid() != 0 || getenv("FL_TEST_AS_NOBODY"))
        return false;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        FAIL("readlink /proc/self/exe: %s", strerror(errno));
    self[n] = 0;
    /* uid 65534 runs a copy of this program, and the probe's copy (made
     * in main()), both where it can reach them. */
    char *exe = t_exe_for_anyone(self);
    struct fl_cmd cmd = {
        .argv = ARGV(exe, (char *)fl_test_case,
                     (char *)fl_backend_name(fl_test_backend)),
        .cwd = "/tmp",
        .env_set = (const char *const[]){ "FL_TEST_AS_NOBODY=1",
                                          t_fmt("FL_TEST_PROBE=%s",
                                                fl_test_probe),
                                          NULL },
        .flags = FL_SET_UID | FL_SET_GID | FL_SET_GROUPS,
        .uid = 65534,
        .gid = 65534,
        .groups = (gid_t[]){ 65534 },
        .ngroups = 1,
        .backend = FL_BACKEND_CLONE,
    };
    struct fl_proc p;
    SPAWN(&cmd, &p);
    int st = t_wait(&p);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        SKIP("skipped as uid 65534");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL("the case failed as uid 65534 (status 0x%x), see above", st);
    return true;
}

/* ------------------------------------------------------------------------ */
/* Reading the probe's report                                               */
/* ------------------------------------------------------------------------ */

char *t_get(const char *out, const char *key)
{
    size_t kl = strlen(key);
    for (const char *l = out; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t ll = nl ? (size_t)(nl - l) : strlen(l);
        if (ll >= kl && strncmp(l, key, kl) == 0 &&
            (ll == kl || l[kl] == ' ')) {
            const char *v = ll == kl ? l + kl : l + kl + 1;
            size_t vl = ll == kl ? 0 : ll - kl - 1;
            char *s = t_keep(malloc(vl + 1));
            memcpy(s, v, vl);
            s[vl] = 0;
            return s;
        }
        l = nl ? nl + 1 : NULL;
    }
    return NULL;
}

long long t_get_num(const char *out, const char *key)
{
    char *v = t_get(out, key);
    if (!v)
        FAIL("no \"%s\" in the probe's output:\n%s", key, out);
    char *end;
    long long n = strtoll(v, &end, 0);
    if (end == v)
        FAIL("\"%s\" is not a number: \"%s\"", key, v);
    return n;
}

int t_count_lines(const char *out, const char *prefix)
{
    int n = 0;
    size_t pl = strlen(prefix);
    for (const char *l = out; l && *l;) {
        if (strncmp(l, prefix, pl) == 0)
            n++;
        const char *nl = strchr(l, '\n');
        l = nl ? nl + 1 : NULL;
    }
    return n;
}

int t_fds(const char *out, struct t_fd *fds, int max)
{
    int n = 0;
    for (const char *l = out; l && *l;) {
        const char *nl = strchr(l, '\n');
        if (strncmp(l, "fd ", 3) == 0) {
            if (n == max)
                FAIL("more than %d fds in the probe's output", max);
            struct t_fd *f = &fds[n];
            memset(f, 0, sizeof *f);
            int off = 0;
            if (sscanf(l, "fd %d %lu %3s %n", &f->fd, &f->ino, f->mode,
                       &off) < 3)
                FAIL("bad fd line in the probe's output: %.80s", l);
            size_t tl = (nl ? (size_t)(nl - l) : strlen(l)) - (size_t)off;
            if (tl >= sizeof f->target)
                tl = sizeof f->target - 1;
            memcpy(f->target, l + off, tl);
            n++;
        }
        l = nl ? nl + 1 : NULL;
    }
    return n;
}

void fl_t_fds_exactly(const char *out, const int *want, size_t n,
                      const char *file, int line)
{
    struct t_fd fds[256];
    int got = t_fds(out, fds, 256);
    bool ok = (size_t)got == n;
    for (size_t i = 0; ok && i < n; i++) {
        bool found = false;
        for (int j = 0; j < got; j++)
            found |= fds[j].fd == want[i];
        ok = found;
    }
    if (!ok) {
        char w[512] = "", g[4096] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(w + strlen(w), sizeof w - strlen(w), " %d", want[i]);
        for (int j = 0; j < got; j++)
            snprintf(g + strlen(g), sizeof g - strlen(g), " %d(%s)",
                     fds[j].fd, fds[j].target);
        fl_t_fail(file, line, "child fds are {%s }, expected exactly {%s }",
                  g, w);
    }
}

struct t_fd t_fd_entry(const char *out, int fd)
{
    struct t_fd fds[256];
    int got = t_fds(out, fds, 256);
    for (int j = 0; j < got; j++)
        if (fds[j].fd == fd)
            return fds[j];
    FAIL("fd %d is not open in the child; output:\n%s", fd, out);
}

unsigned long t_ino(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        FAIL("fstat %d: %s", fd, strerror(errno));
    return (unsigned long)st.st_ino;
}

bool t_fd_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

bool t_library_fd(int fd)
{
    char link[64], target[64], want[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    snprintf(want, sizeof want, "/proc/%d/task/%d/stat", (int)getpid(), (int)getpid());
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return false;
    target[n] = 0;
    return strcmp(target, want) == 0;
}

void t_refuse_clone3(int err)
{
    NEEDS_SECCOMP();
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { 4, f };
    ASSERT_SYS(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
    ASSERT_SYS(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog));
}

void t_deny_clone3(void)
{
    t_refuse_clone3(ENOSYS);
}

int t_refuse_waitid_pidfd(int err, bool and_pidfd_calls)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, and_pidfd_calls ? SYS_pidfd_send_signal : ~0u, 5, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, and_pidfd_calls ? SYS_pidfd_open : ~0u, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_waitid, 0, 4),
        /* The idtype's low 32 bits: this word on a little-endian machine. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 3 /* P_PIDFD */, 0, 2),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),  /* as a kernel without them */
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int t_library_fd_find(void)
{
    for (int fd = 3; fd < 4096; fd++)
        if (t_fd_open(fd) && t_library_fd(fd))
            return fd;
    return -1;
}

struct termios t_raw_termios(void)
{
    struct termios raw = { 0 };
    cfmakeraw(&raw);
    raw.c_cflag |= CS8 | CREAD;
    cfsetspeed(&raw, B38400);
    return raw;
}

int t_elf_loader(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr eh;
    int r = -1;
    if (fd < 0)
        return -1;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64)
        for (int i = 0; i < eh.e_phnum && r < 0; i++) {
            Elf64_Phdr ph;
            off_t at = (off_t)(eh.e_phoff + (size_t)i * sizeof ph);
            if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph || ph.p_type != PT_INTERP)
                continue;
            if (ph.p_filesz == 0 || ph.p_filesz > size ||
                pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz ||
                buf[ph.p_filesz - 1] != '\0')
                break;
            r = 0;
        }
    close(fd);
    return r;
}

int t_file_at(int at, bool cloexec)
{
    if (t_fd_open(at))
        FAIL("fd %d is already open in the test process", at);
    int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        FAIL("open O_TMPFILE: %s", strerror(errno));
    if (fd != at) {
        if (dup3(fd, at, cloexec ? O_CLOEXEC : 0) != at)
            FAIL("dup3: %s", strerror(errno));
        close(fd);
    } else if (!cloexec) {
        fcntl(at, F_SETFD, 0);
    }
    return at;
}

int t_high_free_fd(int at_most)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
        (rlim_t)at_most >= lim.rlim_cur)
        at_most = (int)lim.rlim_cur - 1;
    for (int fd = at_most; fd > 2; fd--)
        if (!t_fd_open(fd))
            return fd;
    FAIL("no free fd at or below %d", at_most);
}

unsigned long long t_sigmask_of(const char *out, const char *key)
{
    char *v = t_get(out, key);
    if (!v)
        FAIL("no \"%s\" in the probe's output:\n%s", key, out);
    return strtoull(v, NULL, 16);
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */
/* ------------------------------------------------------------------------ */

void t_pace(unsigned i)
{
    if (i % 64 == 63)
        nanosleep(&(struct timespec){ 0, 20 * 1000 }, NULL);
}

int t_scaled(int n)
{
    const char *s = getenv("FL_TEST_SCALE");
    double f = s ? strtod(s, NULL) : 1.0;
    /* fork's cost grows with the parent's memory (a sanitizer's shadow
     * above all); it is there for comparison, a quarter is enough. */
    if (fl_test_backend == FL_BACKEND_FORK)
        f /= 4;
    long v = (long)(n * f);
    return v < 1 ? 1 : (int)v;
}

/*
 * The cases own the low fd numbers (they put files at 3, 4, 5, 9, ...).
 * Whatever the test was started with there (CTest or a shell may leave
 * fds open) moves up to 500+, FD_CLOEXEC.
 */
static void move_inherited_fds(void)
{
    for (int fd = 3; fd < 300; fd++) {
        if (fcntl(fd, F_GETFD) == -1)
            continue;
        if (fcntl(fd, F_DUPFD_CLOEXEC, 500) == -1) {
            if (errno == EMFILE || errno == EINVAL)  /* an fd limit a little over 500 */
                SKIP(t_fmt("no room at fd 500 and up, under the fd limit, for fd %d the test "
                           "was started with (ulimit -n)", fd));
            perror("F_DUPFD_CLOEXEC");
            abort();
        }
        close(fd);
    }
}

/* Most cases put fds below 100 (a few up to 450); the runner moves the
 * inherited ones to 500 and up; the cases that want a high fd take the
 * highest the limit leaves (t_high_free_fd()). A soft limit below the
 * usual 1024 is raised towards it as far as the hard limit allows (no
 * privilege needed); below RUNNER_FDS no case can run. */
#define FDS_USUAL 1024
#define RUNNER_FDS 512
static void raise_fd_limit(void)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= FDS_USUAL)
        return;
    lim.rlim_cur = lim.rlim_max < FDS_USUAL ? lim.rlim_max : FDS_USUAL;
    setrlimit(RLIMIT_NOFILE, &lim);
    if (lim.rlim_cur < RUNNER_FDS)
        SKIP(t_fmt("the hard fd limit is %llu: the runner needs %d fds (ulimit -Hn)",
                   (unsigned long long)lim.rlim_max, RUNNER_FDS));
}

/* The fds open in this process, as a bitmap of the first 4096. */
static void fd_snapshot(unsigned char *map, size_t size)
{
    memset(map, 0, size);
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        perror("opendir /proc/self/fd");
        abort();
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        int fd = atoi(de->d_name);
        if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd == dirfd(d))
            continue;
        if ((size_t)fd < size * 8)
            map[fd / 8] |= (unsigned char)(1u << (fd % 8));
    }
    closedir(d);
}

static void check_no_leaks(const unsigned char *before, size_t size)
{
    unsigned char after[512];
    fd_snapshot(after, sizeof after);
    char msg[2048] = "";
    for (size_t fd = 0; fd < size * 8; fd++) {
        bool b = before[fd / 8] & (1u << (fd % 8));
        bool a = after[fd / 8] & (1u << (fd % 8));
        if (a == b || (a && t_library_fd((int)fd)))
            continue;
        char link[64], target[256] = "?";
        snprintf(link, sizeof link, "/proc/self/fd/%zu", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 0)
            target[n] = 0;
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), " %s fd %zu (%s)",
                 a ? "leaked" : "closed", fd, a ? target : "");
    }
    if (msg[0])
        FAIL("fds changed by the case:%s", msg);

    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && si.si_pid != 0)
        FAIL("a zombie child is left: pid %d", (int)si.si_pid);
    if (r == 0)
        FAIL("a child process is still running after the case");
    if (errno != ECHILD)
        FAIL("waitid: %s", strerror(errno));
}

static int parse_backend(const char *s, enum fl_backend *b)
{
    static const struct {
        const char *name;
        enum fl_backend b;
    } names[] = {
        { "auto", FL_BACKEND_AUTO },
        { "clone", FL_BACKEND_CLONE },
        { "posix_spawn", FL_BACKEND_POSIX_SPAWN },
        { "fork", FL_BACKEND_FORK },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *b = names[i].b;
            return 0;
        }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < ncases; i++)
            printf("%s\n", cases[i].name);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "--expect") == 0) {
        int bad = 0;
        for (int i = 0; i < ncases; i++) {
            bool found = false;
            for (int j = 2; j < argc; j++)
                found |= strcmp(cases[i].name, argv[j]) == 0;
            if (!found) {
                fprintf(stderr, "case %s is not registered with CTest: "
                        "write its TEST( at the start of a line\n",
                        cases[i].name);
                bad = 1;
            }
        }
        if (argc - 2 != ncases) {
            fprintf(stderr, "CTest has %d cases, the program %d\n", argc - 2,
                    ncases);
            bad = 1;
        }
        return bad;
    }
    if (argc != 3 || parse_backend(argv[2], &fl_test_backend) != 0) {
        fprintf(stderr,
                "usage: %s --list\n"
                "       %s CASE clone|posix_spawn|fork|auto\n",
                argv[0], argv[0]);
        return 2;
    }
    fl_test_fn fn = NULL;
    for (int i = 0; i < ncases; i++)
        if (strcmp(cases[i].name, argv[1]) == 0)
            fn = cases[i].fn;
    if (!fn) {
        fprintf(stderr, "%s: no case \"%s\"\n", argv[0], argv[1]);
        return 2;
    }
    fl_test_case = argv[1];
    setvbuf(stdout, NULL, _IONBF, 0);
    /* The cases expect the dispositions and mask CTest gives them: a
     * shell or a service that started the program with SIGPIPE ignored,
     * or SIGALRM blocked, must not change what a child inherits or stop
     * the watchdog. */
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
            sa.sa_handler == SIG_IGN)
            signal(sig, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    /* A watchdog: a hang is reported as such, and our children die. */
    signal(SIGALRM, on_watchdog);
    const char *t = getenv("FL_TEST_TIMEOUT");
    alarm(t ? (unsigned)atoi(t) : 100);

    /* The probe to run: FL_TEST_PROBE (set for a re-run as uid 65534),
     * else the built one. As root, a case may run it as another user: then
     * it runs a copy that every user can execute, wherever the build tree
     * is. The copy is made now, before the case starts any thread or child
     * that could hold its write fd open (ETXTBSY). */
    const char *probe = getenv("FL_TEST_PROBE");
    if (probe && snprintf(fl_test_probe, sizeof fl_test_probe, "%s", probe) >=
                     (int)sizeof fl_test_probe) {
        fprintf(stderr, "FL_TEST_PROBE is too long\n");
        return 2;
    }
    unsetenv("FL_TEST_PROBE");
    raise_fd_limit();
    choose_tmp_base();
    if (!probe && geteuid() == 0)
        snprintf(fl_test_probe, sizeof fl_test_probe, "%s",
                 t_exe_for_anyone(fl_test_probe));
    atexit(remove_bindir);

    move_inherited_fds();
    unsigned char before[512];
    fd_snapshot(before, sizeof before);
    fn();
    check_no_leaks(before, sizeof before);
    remove_tmpdirs();
    alarm(0);
    printf("PASS %s %s\n", argv[1], argv[2]);
    return 0;
}

/* A fresh cgroup v2 directory, or NULL. *rel gets its path in the
 * hierarchy as /proc/PID/cgroup shows it. */
char *t_make_cgroup(char **rel)
{
    static const char *roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
    for (size_t i = 0; i < 2; i++) {
        char *probe = t_fmt("%s/cgroup.procs", roots[i]);
        char *ctl = t_fmt("%s/cgroup.controllers", roots[i]);
        if (access(probe, W_OK) != 0 || access(ctl, F_OK) != 0)
            continue;
        /* Our own place in the v2 hierarchy ("0::/x"). */
        char *self = t_read_file("/proc/self/cgroup");
        char *v2 = strstr(self, "0::");
        if (!v2)
            continue;
        v2 += 3;
        v2[strcspn(v2, "\n")] = 0;
        const char *base = strcmp(v2, "/") == 0 ? "" : v2;
        char *name = t_fmt("fl-test-%d-%s", (int)getpid(),
                           fl_backend_name(BACKEND));
        /* A new leaf below our own cgroup. */
        char *dir = t_fmt("%s%s/%s", roots[i], base, name);
        if (mkdir(dir, 0755) != 0)
            continue;
        *rel = t_fmt("%s/%s", base, name);
        return dir;
    }
    return NULL;
}

char *t_need_cgroup(char **rel)
{
    char *ignored;
    if (geteuid() != 0)
        SKIP("needs root to make a cgroup");
    char *dir = t_make_cgroup(rel ? rel : &ignored);
    if (!dir)
        SKIP("no writable cgroup v2 hierarchy");
    return dir;
}

void t_remove_cgroup(const char *dir)
{
    for (int i = 0; i < 200 && rmdir(dir) != 0 && errno == EBUSY; i++)
        usleep(5000);
}

/* ------------------------------------------------------------------------ */
/* Interrupting a call in its sleep                                         */
/* ------------------------------------------------------------------------ */

const long t_poll_nrs[] = {
#ifdef SYS_poll
    SYS_poll,
#endif
    SYS_ppoll,
};
const size_t t_npoll_nrs = sizeof t_poll_nrs / sizeof *t_poll_nrs;
const long t_waitid_nrs[] = { SYS_waitid };
const size_t t_nwaitid_nrs = 1;

struct t_interrupt {
    pthread_t thread;
    pid_t tid;              /* the caller's thread */
    const long *nrs;
    size_t n;
    pid_t then_kill;
    char path[64];          /* /proc/self/task/TID/syscall */
    bool seen;              /* it slept in one of nrs when signalled */
    bool handled;           /* and the handler ran */
};

static atomic_int interrupt_handled;

static void on_interrupt(int sig)
{
    (void)sig;
    int saved = errno;
    atomic_fetch_add(&interrupt_handled, 1);
    errno = saved;
}

/* The number of the system call the thread sleeps in, or -1 while it runs
 * (the file says "running") or when it cannot be read. */
static long sleeping_in(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *end;
    long nr = strtol(buf, &end, 10);
    return end == buf ? -1 : nr;
}

static void *interrupter(void *arg)
{
    struct t_interrupt *it = arg;
    /* The caller is about to sleep in the call; 20 s without it is a hang
     * (or a call that never sleeps there), and the kill below ends it. */
    for (int i = 0; i < 20000 && !it->seen; i++) {
        long nr = sleeping_in(it->path);
        for (size_t k = 0; k < it->n; k++)
            it->seen |= nr == it->nrs[k];
        if (!it->seen)
            usleep(1000);
    }
    if (it->seen) {
        int before = atomic_load(&interrupt_handled);
        syscall(SYS_tgkill, getpid(), it->tid, SIGUSR2);
        for (int i = 0; i < 20000 && atomic_load(&interrupt_handled) == before; i++)
            usleep(1000);
        it->handled = atomic_load(&interrupt_handled) != before;
    }
    kill(it->then_kill, SIGKILL);
    return NULL;
}

struct t_interrupt *t_interrupt_start(const long *nrs, size_t n, pid_t then_kill)
{
    struct t_interrupt *it = t_keep(calloc(1, sizeof *it));
    it->tid = (pid_t)syscall(SYS_gettid);
    it->nrs = nrs;
    it->n = n;
    it->then_kill = then_kill;
    snprintf(it->path, sizeof it->path, "/proc/self/task/%d/syscall", (int)it->tid);
    int fd = open(it->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        kill(then_kill, SIGKILL);
        SKIP("/proc/self/task/TID/syscall cannot be read (no /proc, or a kernel "
             "without CONFIG_HAVE_ARCH_TRACEHOOK): no way to see the call asleep");
    }
    close(fd);
    struct sigaction sa = { .sa_handler = on_interrupt };  /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR2, &sa, NULL) != 0)
        FAIL("sigaction: %s", strerror(errno));
    int r = pthread_create(&it->thread, NULL, interrupter, it);
    if (r)
        FAIL("pthread_create: %s", strerror(r));
    return it;
}

void t_interrupt_end(struct t_interrupt *it)
{
    pthread_join(it->thread, NULL);
    signal(SIGUSR2, SIG_DFL);
    if (!it->seen)
        FAIL("the call was never seen asleep in the system call to interrupt");
    if (!it->handled)
        FAIL("the signal sent to the call asleep was never handled");
}

bool t_running(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}
