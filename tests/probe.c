/*
 * probe: the program the tests spawn. It reports what the child saw, as
 * "key value" lines, and can act (exit, sleep, echo, ...).
 *
 *     probe [--out FILE] COMMAND [ARGS] [COMMAND [ARGS]]...
 *
 * Commands run in order. The report goes to stdout, or is appended to FILE
 * with --out (so that the report does not need the child's fd 1). It is
 * collected in memory and written when the probe acts or ends, so that no
 * fd of the report is open while the probe lists its fds.
 *
 * Reports:
 *   fds            "fd N INO MODE TARGET" per open fd (MODE r, w or rw)
 *   signals        "SigBlk HEX", "SigIgn HEX", "SigCgt HEX" (from
 *                  /proc/self/status, or asked signal by signal without /proc)
 *   cwd            "cwd PATH"
 *   env            "env NAME=VALUE" per variable, in order
 *   getenv NAME    "env NAME=VALUE", or "unset NAME"
 *   args ...       "argc N", then "arg I VALUE" per argument of the probe;
 *                  the words after it are not commands (report only)
 *   rlimits        "rlimit NAME SOFT HARD" (inf for RLIM_INFINITY)
 *   umask          "umask 0022"
 *   ids            "uid", "euid", "suid", "gid", "egid", "sgid", "groups"
 *   proc           "pid", "ppid", "pgid", "sid"
 *   cgroup         "cgroup LINE" per line of /proc/self/cgroup
 *   tty            "isatty0" .. "isatty2" (1 or 0), "tty_pid", "tty_sid",
 *                  "tty_pgid", "tty_nr" (the controlling terminal's device
 *                  from /proc/self/stat, 0 for none); then, from the first
 *                  of fds 0-2 that is a terminal (all -1 when none is):
 *                  "ttyname", "tcpgrp" (its foreground group), "rows",
 *                  "cols" (TIOCGWINSZ), "echo", "icanon", "isig", "opost"
 *                  (termios flags, 1 or 0)
 *   all            all of the above but getenv
 * Actions:
 *   exit N         exit with status N
 *   sleep SECS     sleep (fractions allowed)
 *   echo TEXT      write TEXT and a newline to fd 1
 *   stderr TEXT    write TEXT and a newline to fd 2
 *   write-fd FD TEXT   write TEXT and a newline to fd FD
 *   cat            copy fd 0 to fd 1 until EOF
 *   kill-self SIG  send itself signal SIG
 *   count-signal SIG SECS   catch SIG, write "ready" to fd 1 and, SECS
 *                  after SIG first came, exit with the number of times
 *                  it came (a copy sent twice is caught twice when it
 *                  comes after the first was handled, or is real-time)
 * Pipeline actions (test_pipeline.c):
 *   yes TEXT       write TEXT and a newline to fd 1 for ever: a reader that
 *                  goes away ends it, with SIGPIPE (or exit 120 on EPIPE)
 *   head N         copy the first N lines of fd 0 to fd 1, then go on
 *                  (fd 0 stays open, unread past them, until the probe ends)
 * Actions for capture and communicate (io; see tests/pattern.h):
 *   spew FD BYTES  write BYTES bytes of the pattern to fd FD (EPIPE: exit 3)
 *   tee2           copy fd 0 to fd 1 and to fd 2 until EOF
 *   drain          read fd 0 to EOF: "drained N" and "sum HEX" (FNV-1a)
 *   print FD TEXT  write TEXT to fd FD, with \n read as a newline, and
 *                  nothing added
 *   close-stdin    close fd 0
 *   hold-memory MIB   map MIB MiB and write to every page, so that the
 *                  probe takes a while to exit (the kernel frees them
 *                  before it closes the fds)
 *   wait-orphaned  wait until the parent it started with has ended
 *                  (getppid() is no longer the one read at the start)
 *   join-parent-group  leave its own process group for its parent's
 *                  (setpgid()): "joined PGID", or "joined -ERRNO"
 *   hold-fds SECS  fork a grandchild that keeps every fd open and sleeps
 *                  SECS, then exits; reports "grandchild PID" and goes on
 * Containment reports (test_contain.c, test_caps.c):
 *   ns             "ns_NAME INODE" for each of /proc/self/ns/ user, mnt,
 *                  pid, net, ipc, uts, cgroup, time, pid_for_children and
 *                  time_for_children (INODE "-" where it cannot be read);
 *                  "uid_map FIRST OUTSIDE COUNT" and "gid_map ..." per line
 *                  of /proc/self/uid_map and gid_map, "setgroups allow|deny"
 *                  (all three absent without /proc); "hostname NAME"
 *                  (uname); "netif NAME up|down" per network interface
 *                  (if_nameindex(), SIOCGIFFLAGS: no /proc needed);
 *                  "root_dev N" and "root_ino N" (stat of /);
 *                  "mount_proc_pids N", the numeric entries of /proc (-1
 *                  when it cannot be read); "mountinfo_root_shared 0|1",
 *                  whether the mount on / has a "shared:" tag in
 *                  /proc/self/mountinfo (-1 without it); "mount POINT
 *                  FSTYPE" per line of /proc/self/mountinfo
 *   caps           "cap_eff HEX", "cap_prm HEX", "cap_inh HEX" (capget()
 *                  version 3), "cap_bnd HEX" (PR_CAPBSET_READ), "cap_amb
 *                  HEX" (PR_CAP_AMBIENT_IS_SET): 16 hex digits, bit n for
 *                  capability n, from system calls only (works in a chroot)
 *   pending        "sig_pending HEX": the signals pending for the probe
 *                  (sigpending(), /proc's SigPnd|ShdPnd format)
 *   mount-flags PATH  "mount_flags PATH FLAGS": the flags of the mount
 *                  that PATH is on (statvfs(), so the one on top), as
 *                  "rw" or "ro" and then any of "nosuid", "nodev",
 *                  "noexec", in that order, separated by spaces; or
 *                  "mount_flags PATH ERRNO" when statvfs() fails
 *   stat-fd FD     "stat_fd FD INO RDEV MODE": fstat() of fd FD (RDEV as
 *                  major:minor, MODE r, w or rw), or "stat_fd FD -" when
 *                  it is not open; no /proc needed (works in a chroot)
 * Containment actions:
 *   mount-tmpfs DIR   mount a small tmpfs on DIR: "mount_tmpfs 0", or the
 *                  errno value
 * Containment and placement (test_landlock.c, test_filter.c, test_sched.c):
 *   nnp            "no_new_privs 0|1" (prctl PR_GET_NO_NEW_PRIVS)
 *   seccomp-mode   "seccomp_mode N" (prctl PR_GET_SECCOMP: 0 none, 2 filter;
 *                  -1 when the filter refuses the prctl itself)
 *   sched          "cpus LIST" (sched_getaffinity, as "0-3,6"), "nice N"
 *                  (getpriority), "ioprio_class N", "ioprio_level N"
 *                  (ioprio_get), "oom_score_adj N" (/proc/self/oom_score_adj,
 *                  "?" when it cannot be read)
 *   try-write PATH "write PATH ok", or "write PATH ERRNAME" (EACCES, ...):
 *                  creates or truncates PATH and writes a line to it
 *   try-read PATH  "read PATH ok", or "read PATH ERRNAME": opens and reads
 *   try-mkdir PATH "mkdir PATH ok", or "mkdir PATH ERRNAME" (mkdir(2))
 *   try-exec PATH  "exec PATH ok" (a forked child could exec PATH, with no
 *                  arguments, and it exited 0), or "exec PATH ERRNAME"
 *   i386-getpid    "i386_getpid R": getpid through int 0x80, the 32-bit
 *                  ABI, R the result or -errno (x86_64 only, else "none")
 *   x32-getpid     "x32_getpid R": getpid with the x32 bit in its number
 *   run-probe ...  fork, exec this probe (argv[0]) with the rest of the
 *                  words as its commands, wait: "probe_status N" (the exit
 *                  status, or 128+signal). The grandchild's report comes
 *                  first. The words after it are not commands.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char *report;
static size_t report_len;
static FILE *rep;
static const char *out_path;
static int g_argc;
static char **g_argv;

static void die(const char *what)
{
    fprintf(stderr, "probe: %s: %s\n", what, strerror(errno));
    exit(120);
}

static void put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(rep, fmt, ap);
    va_end(ap);
    fputc('\n', rep);
}

static void write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            die("write");
        s += w;
        n -= (size_t)w;
    }
}

/* Writes what was collected to stdout or --out, and starts afresh. */
static void flush_report(void)
{
    fflush(rep);
    if (report_len > 0) {
        int fd = 1;
        if (out_path) {
            fd = open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                      0644);
            if (fd < 0)
                die(out_path);
        }
        write_all(fd, report, report_len);
        if (out_path)
            close(fd);
    }
    fclose(rep);
    free(report);
    report = NULL;
    report_len = 0;
    rep = open_memstream(&report, &report_len);
    if (!rep)
        die("open_memstream");
}

static void report_fds(void)
{
    /* Collect first: the report must not open fds during the walk. */
    int fds[1024], n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        die("opendir /proc/self/fd");
    struct dirent *de;
    while ((de = readdir(d)) && n < 1024) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        int fd = atoi(de->d_name);
        if (fd != dirfd(d))
            fds[n++] = fd;
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        char link[64], target[4096];
        struct stat st;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fds[i]);
        ssize_t len = readlink(link, target, sizeof target - 1);
        target[len > 0 ? len : 0] = 0;
        int fl = fcntl(fds[i], F_GETFL);
        if (fstat(fds[i], &st) != 0 || fl == -1)
            continue; /* closed meanwhile */
        const char *mode = (fl & O_ACCMODE) == O_RDONLY   ? "r"
                           : (fl & O_ACCMODE) == O_WRONLY ? "w"
                                                          : "rw";
        put("fd %d %lu %s %s", fds[i], (unsigned long)st.st_ino, mode, target);
    }
}

/* Without /proc (a test hides it), the same three masks from the kernel's
 * answers, signal by signal, in /proc's format. */
static void report_signals_by_asking(void)
{
    unsigned long long blk = 0, ign = 0, cgt = 0;
    sigset_t mask;
    sigprocmask(SIG_SETMASK, NULL, &mask);
    for (int sig = 1; sig <= 64; sig++) {
        struct sigaction sa;
        unsigned long long bit = 1ULL << (sig - 1);
        if (sigismember(&mask, sig) == 1)
            blk |= bit;
        if (syscall(SYS_rt_sigaction, sig, NULL, &sa, 8) != 0)
            continue;
        if (sa.sa_handler == SIG_IGN)
            ign |= bit;
        else if (sa.sa_handler != SIG_DFL)
            cgt |= bit;
    }
    put("SigBlk %016llx", blk);
    put("SigIgn %016llx", ign);
    put("SigCgt %016llx", cgt);
}

static void report_status_lines(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f && errno == ENOENT) {
        report_signals_by_asking();
        return;
    }
    if (!f)
        die("/proc/self/status");
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "SigBlk:", 7) && strncmp(line, "SigIgn:", 7) &&
            strncmp(line, "SigCgt:", 7))
            continue;
        char *v = line + 7;
        v += strspn(v, " \t");
        v[strcspn(v, "\n")] = 0;
        line[6] = 0;
        put("%s %s", line, v);
    }
    fclose(f);
}

static void report_env(void)
{
    for (char **e = environ; e && *e; e++)
        put("env %s", *e);
}

static void report_getenv(const char *name)
{
    const char *v = getenv(name);
    if (v)
        put("env %s=%s", name, v);
    else
        put("unset %s", name);
}

static void report_args(void)
{
    put("argc %d", g_argc);
    for (int i = 0; i < g_argc; i++)
        put("arg %d %s", i, g_argv[i]);
}

static void report_rlimits(void)
{
    static const struct {
        const char *name;
        int res;
    } lims[] = {
        { "AS", RLIMIT_AS },         { "CORE", RLIMIT_CORE },
        { "CPU", RLIMIT_CPU },       { "DATA", RLIMIT_DATA },
        { "FSIZE", RLIMIT_FSIZE },   { "LOCKS", RLIMIT_LOCKS },
        { "MEMLOCK", RLIMIT_MEMLOCK }, { "MSGQUEUE", RLIMIT_MSGQUEUE },
        { "NICE", RLIMIT_NICE },     { "NOFILE", RLIMIT_NOFILE },
        { "NPROC", RLIMIT_NPROC },   { "RSS", RLIMIT_RSS },
        { "RTPRIO", RLIMIT_RTPRIO }, { "RTTIME", RLIMIT_RTTIME },
        { "SIGPENDING", RLIMIT_SIGPENDING }, { "STACK", RLIMIT_STACK },
    };
    for (size_t i = 0; i < sizeof lims / sizeof lims[0]; i++) {
        struct rlimit rl;
        if (getrlimit(lims[i].res, &rl) != 0)
            die("getrlimit");
        char s[32], h[32];
        if (rl.rlim_cur == RLIM_INFINITY)
            strcpy(s, "inf");
        else
            snprintf(s, sizeof s, "%llu", (unsigned long long)rl.rlim_cur);
        if (rl.rlim_max == RLIM_INFINITY)
            strcpy(h, "inf");
        else
            snprintf(h, sizeof h, "%llu", (unsigned long long)rl.rlim_max);
        put("rlimit %s %s %s", lims[i].name, s, h);
    }
}

static void report_umask(void)
{
    mode_t m = umask(0);
    umask(m);
    put("umask %04o", (unsigned)m);
}

static void report_ids(void)
{
    uid_t r, e, s;
    gid_t gr, ge, gs;
    getresuid(&r, &e, &s);
    getresgid(&gr, &ge, &gs);
    put("uid %u", (unsigned)r);
    put("euid %u", (unsigned)e);
    put("suid %u", (unsigned)s);
    put("gid %u", (unsigned)gr);
    put("egid %u", (unsigned)ge);
    put("sgid %u", (unsigned)gs);
    /* Any number of groups, up to NGROUPS_MAX (65536). */
    int n = getgroups(0, NULL);
    gid_t *groups = n > 0 ? malloc((size_t)n * sizeof *groups) : NULL;
    if (n < 0 || (n > 0 && (!groups || (n = getgroups(n, groups)) < 0)))
        die("getgroups");
    fprintf(rep, "groups");
    for (int i = 0; i < n; i++)
        fprintf(rep, " %u", (unsigned)groups[i]);
    fputc('\n', rep);
    free(groups);
}

static void report_proc(void)
{
    put("pid %d", (int)getpid());
    put("ppid %d", (int)getppid());
    put("pgid %d", (int)getpgid(0));
    put("sid %d", (int)getsid(0));
}

static void report_cwd(void)
{
    char buf[4096];
    if (!getcwd(buf, sizeof buf))
        die("getcwd");
    put("cwd %s", buf);
}

static void report_cgroup(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        die("/proc/self/cgroup");
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        put("cgroup %s", line);
    }
    fclose(f);
}

static void report_tty(void)
{
    int first = -1;
    for (int fd = 0; fd < 3; fd++) {
        put("isatty%d %d", fd, isatty(fd));
        if (first < 0 && isatty(fd))
            first = fd;
    }
    put("tty_pid %d", (int)getpid());
    put("tty_sid %d", (int)getsid(0));
    put("tty_pgid %d", (int)getpgrp());
    char stat[1024] = "";
    FILE *f = fopen("/proc/self/stat", "re");
    if (!f || !fgets(stat, sizeof stat, f))
        die("/proc/self/stat");
    fclose(f);
    int tty_nr = 0;  /* "PID (COMM) STATE PPID PGRP SESSION TTY_NR ..." */
    const char *p = strrchr(stat, ')');
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %d", &tty_nr) != 1)
        die("parsing /proc/self/stat");
    put("tty_nr %d", tty_nr);
    struct winsize ws = { 0 };
    struct termios t = { 0 };
    char name[256] = "-";
    bool ok = first >= 0 && ioctl(first, TIOCGWINSZ, &ws) == 0 && tcgetattr(first, &t) == 0 &&
              ttyname_r(first, name, sizeof name) == 0;
    put("ttyname %s", ok ? name : "-");
    put("tcpgrp %d", ok ? (int)tcgetpgrp(first) : -1);
    put("rows %d", ok ? ws.ws_row : -1);
    put("cols %d", ok ? ws.ws_col : -1);
    put("echo %d", ok ? !!(t.c_lflag & ECHO) : -1);
    put("icanon %d", ok ? !!(t.c_lflag & ICANON) : -1);
    put("isig %d", ok ? !!(t.c_lflag & ISIG) : -1);
    put("opost %d", ok ? !!(t.c_oflag & OPOST) : -1);
}

static void do_sleep(const char *secs)
{
    double d = strtod(secs, NULL);
    struct timespec ts = { (time_t)d, (long)((d - (time_t)d) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Copies fd 0 to fd 1 until EOF, or until `lines` newlines have passed
 * (lines < 0: no limit). */
static void do_cat(long lines)
{
    char buf[65536];
    while (lines != 0) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("read stdin");
        if (n == 0)
            break;
        size_t keep = (size_t)n;
        for (size_t i = 0; lines > 0 && i < (size_t)n; i++)
            if (buf[i] == '\n' && --lines == 0)
                keep = i + 1;
        write_all(1, buf, keep);
    }
}

static void write_line(int fd, const char *text)
{
    size_t n = strlen(text);
    char *s = malloc(n + 1);
    if (!s)
        die("malloc");
    memcpy(s, text, n);
    s[n] = '\n';
    write_all(fd, s, n + 1);
    free(s);
}

static volatile sig_atomic_t signals_counted;

static void count_signal(int sig)
{
    (void)sig;
    signals_counted++;
}

static void do_count_signal(int sig, const char *secs)
{
    struct sigaction sa = { .sa_handler = count_signal };
    sigemptyset(&sa.sa_mask);
    sigset_t set, open;
    sigemptyset(&set);
    sigaddset(&set, sig);
    /* Blocked until sigsuspend(): one that came before it is not lost. */
    if (sigaction(sig, &sa, NULL) != 0 || sigprocmask(SIG_BLOCK, &set, &open) != 0)
        exit(120);
    sigdelset(&open, sig);
    write_line(1, "ready");
    while (!signals_counted)
        sigsuspend(&open);
    sigprocmask(SIG_SETMASK, &open, NULL);
    do_sleep(secs);
    exit(signals_counted > 100 ? 100 : signals_counted);
}

static void usage(void)
{
    fprintf(stderr, "usage: probe [--out FILE] COMMAND [ARGS]...\n");
    exit(121);
}

/* Returns the argument i of a command, or exits with usage. */
static const char *arg(char **argv, int argc, int i)
{
    if (i >= argc)
        usage();
    return argv[i];
}

/* ---- pipeline actions ---- */

static void do_yes(const char *text)
{
    for (;;)
        write_line(1, text);
}

/* Runs pipeline action c with its arguments from argv[*i]; false when c
 * is none of them. */
static bool pipeline_action(const char *c, char **argv, int argc, int *i)
{
    if (!strcmp(c, "yes")) {
        const char *text = arg(argv, argc, (*i)++);
        flush_report();
        do_yes(text);
    } else if (!strcmp(c, "head")) {
        long lines = atol(arg(argv, argc, (*i)++));
        flush_report();
        do_cat(lines);
    } else {
        return false;
    }
    return true;
}

/* ---- end of pipeline actions ---- */

/* ---- io: capture and communicate (see the header comment) -------------- */

#include "pattern.h"

static void do_spew(int fd, unsigned long long bytes)
{
    unsigned char buf[65536];
    for (unsigned long long at = 0; at < bytes;) {
        size_t n = bytes - at < sizeof buf ? (size_t)(bytes - at) : sizeof buf;
        fl_pattern_fill(buf, at, n);
        for (size_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, n - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0 && errno == EPIPE)
                exit(3);
            if (w < 0)
                die("spew");
            off += (size_t)w;
        }
        at += n;
    }
}

/* A read of fd 0: the byte count, 0 at EOF. */
static size_t read_stdin(void *buf, size_t size)
{
    ssize_t n;
    while ((n = read(0, buf, size)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        die("read stdin");
    return (size_t)n;
}

static void do_tee2(void)
{
    char buf[65536];
    size_t n;
    while ((n = read_stdin(buf, sizeof buf)) > 0) {
        write_all(1, buf, n);
        write_all(2, buf, n);
    }
}

static void do_drain(void)
{
    unsigned char buf[65536];
    unsigned long long total = 0;
    uint64_t sum = FL_FNV1A_INIT;
    size_t n;
    while ((n = read_stdin(buf, sizeof buf)) > 0) {
        sum = fl_fnv1a(sum, buf, n);
        total += n;
    }
    put("drained %llu", total);
    put("sum %016llx", (unsigned long long)sum);
}

static void do_print(int fd, const char *text)
{
    size_t n = strlen(text), len = 0;
    char *s = malloc(n + 1);
    if (!s)
        die("malloc");
    for (size_t k = 0; k < n; k++) {
        if (text[k] == '\\' && text[k + 1] == 'n') {
            s[len++] = '\n';
            k++;
        } else {
            s[len++] = text[k];
        }
    }
    write_all(fd, s, len);
    free(s);
}

static void do_hold_fds(const char *secs)
{
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        do_sleep(secs);
        _exit(0);
    }
    put("grandchild %d", (int)pid);
}

static void do_join_parent_group(void)
{
    pid_t group = getpgid(getppid());
    if (group < 0 || setpgid(0, group) < 0)
        put("joined -%d", errno);
    else
        put("joined %d", (int)group);
}

static void do_hold_memory(const char *mib)
{
    size_t len = (size_t)strtoull(mib, NULL, 10) << 20;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        die("mmap");
    madvise(m, len, MADV_NOHUGEPAGE);   /* huge pages would be freed at once */
    for (size_t k = 0; k < len; k += 4096)
        m[k] = 1;
}

/* The parent the probe started with (main()). wait-orphaned waits for its
 * end: a parent that waits only for what the probe wrote before may have
 * ended already when wait-orphaned begins, and getppid() read then would
 * name the new parent (init), which never ends. */
static pid_t start_parent;

static void do_wait_orphaned(void)
{
    struct timespec ms = { 0, 1000000 };
    while (getppid() == start_parent)
        nanosleep(&ms, NULL);
}

/* The io commands; returns false for a word that is none of them. */
static bool io_command(const char *c, char **argv, int argc, int *i)
{
    if (!strcmp(c, "spew")) {
        int fd = atoi(arg(argv, argc, (*i)++));
        unsigned long long n = strtoull(arg(argv, argc, (*i)++), NULL, 0);
        flush_report();
        do_spew(fd, n);
    } else if (!strcmp(c, "tee2")) {
        flush_report();
        do_tee2();
    } else if (!strcmp(c, "drain")) {
        do_drain();
    } else if (!strcmp(c, "print")) {
        int fd = atoi(arg(argv, argc, (*i)++));
        const char *s = arg(argv, argc, (*i)++);
        flush_report();
        do_print(fd, s);
    } else if (!strcmp(c, "close-stdin")) {
        close(0);
    } else if (!strcmp(c, "hold-fds")) {
        const char *s = arg(argv, argc, (*i)++);
        flush_report();
        do_hold_fds(s);
    } else if (!strcmp(c, "wait-orphaned")) {
        flush_report();
        do_wait_orphaned();
    } else if (!strcmp(c, "join-parent-group")) {
        do_join_parent_group();
    } else if (!strcmp(c, "hold-memory")) {
        const char *s = arg(argv, argc, (*i)++);
        flush_report();
        do_hold_memory(s);
    } else {
        return false;
    }
    return true;
}

/* ---- containment: namespaces, mounts, capabilities ---------------------- */

#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <net/if.h>

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_IS_SET 1
#endif

static void put_ns(const char *name)
{
    char path[64], link[256];
    snprintf(path, sizeof path, "/proc/self/ns/%s", name);
    ssize_t n = readlink(path, link, sizeof link - 1);
    const char *b = n > 0 ? (link[n] = 0, strchr(link, '[')) : NULL;
    if (b)
        put("ns_%s %lu", name, strtoul(b + 1, NULL, 10));
    else
        put("ns_%s -", name);
}

static void put_id_map(const char *key, const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    unsigned long a, b, c;
    while (fscanf(f, "%lu %lu %lu", &a, &b, &c) == 3)
        put("%s %lu %lu %lu", key, a, b, c);
    fclose(f);
}

static void put_netifs(void)
{
    struct if_nameindex *ifs = if_nameindex();
    if (!ifs)
        return;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (struct if_nameindex *i = ifs; i->if_index; i++) {
        struct ifreq r;
        memset(&r, 0, sizeof r);
        snprintf(r.ifr_name, sizeof r.ifr_name, "%s", i->if_name);
        const char *state = s >= 0 && ioctl(s, SIOCGIFFLAGS, &r) == 0
                                ? (r.ifr_flags & IFF_UP ? "up" : "down")
                                : "?";
        put("netif %s %s", i->if_name, state);
    }
    if (s >= 0)
        close(s);
    if_freenameindex(ifs);
}

static void put_proc_pids(void)
{
    DIR *d = opendir("/proc");
    if (!d) {
        put("mount_proc_pids -1");
        return;
    }
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += de->d_name[0] >= '0' && de->d_name[0] <= '9';
    closedir(d);
    put("mount_proc_pids %d", n);
}

/* "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE ..." */
static void put_mountinfo(void)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) {
        put("mountinfo_root_shared -1");
        return;
    }
    char line[4096];
    int shared = -1;
    while (fgets(line, sizeof line, f)) {
        char point[4096], *sep = strstr(line, " - ");
        char fstype[256] = "?";
        if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1)
            continue;
        if (sep)
            sscanf(sep + 3, "%255s", fstype);
        put("mount %s %s", point, fstype);
        if (!strcmp(point, "/") && sep) {   /* the last one is on top */
            *sep = 0;
            shared = strstr(line, " shared:") != NULL;
        }
    }
    fclose(f);
    put("mountinfo_root_shared %d", shared);
}

static void put_mount_flags(const char *path)
{
    struct statvfs vfs;
    if (statvfs(path, &vfs) != 0) {
        put("mount_flags %s %d", path, errno);
        return;
    }
    put("mount_flags %s %s%s%s%s", path, vfs.f_flag & ST_RDONLY ? "ro" : "rw",
        vfs.f_flag & ST_NOSUID ? " nosuid" : "", vfs.f_flag & ST_NODEV ? " nodev" : "",
        vfs.f_flag & ST_NOEXEC ? " noexec" : "");
}

static void put_stat_fd(int fd)
{
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    if (fl == -1 || fstat(fd, &st) != 0) {
        put("stat_fd %d -", fd);
        return;
    }
    const char *mode = (fl & O_ACCMODE) == O_RDONLY   ? "r"
                       : (fl & O_ACCMODE) == O_WRONLY ? "w"
                                                      : "rw";
    put("stat_fd %d %lu %u:%u %s", fd, (unsigned long)st.st_ino, major(st.st_rdev),
        minor(st.st_rdev), mode);
}

static void report_ns(void)
{
    static const char *const names[] = { "user", "mnt", "pid", "net", "ipc", "uts",
                                         "cgroup", "time", "pid_for_children",
                                         "time_for_children" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        put_ns(names[i]);
    put_id_map("uid_map", "/proc/self/uid_map");
    put_id_map("gid_map", "/proc/self/gid_map");
    char sg[32] = "";
    FILE *f = fopen("/proc/self/setgroups", "re");
    if (f) {
        if (fscanf(f, "%31s", sg) == 1)
            put("setgroups %s", sg);
        fclose(f);
    }
    struct utsname u;
    if (uname(&u) == 0)
        put("hostname %s", u.nodename);
    put_netifs();
    struct stat st;
    if (stat("/", &st) == 0) {
        put("root_dev %llu", (unsigned long long)st.st_dev);
        put("root_ino %llu", (unsigned long long)st.st_ino);
    }
    put_proc_pids();
    put_mountinfo();
}

static void report_caps(void)
{
    struct { uint32_t version; int pid; } head = { 0x20080522 /* v3 */, 0 };
    struct { uint32_t eff, prm, inh; } d[2];
    memset(d, 0, sizeof d);
    if (syscall(SYS_capget, &head, d) != 0)
        die("capget");
    put("cap_eff %016llx", (unsigned long long)d[1].eff << 32 | d[0].eff);
    put("cap_prm %016llx", (unsigned long long)d[1].prm << 32 | d[0].prm);
    put("cap_inh %016llx", (unsigned long long)d[1].inh << 32 | d[0].inh);
    unsigned long long bnd = 0, amb = 0;
    for (int cap = 0; cap < 64; cap++) {
        int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (r < 0)
            break;
        bnd |= (unsigned long long)(r == 1) << cap;
        r = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
        amb |= (unsigned long long)(r == 1) << cap;
    }
    put("cap_bnd %016llx", bnd);
    put("cap_amb %016llx", amb);
}

/* The containment commands; returns false for a word that is none. */
static bool ns_command(const char *c, char **argv, int argc, int *i)
{
    if (!strcmp(c, "ns")) {
        report_ns();
    } else if (!strcmp(c, "caps")) {
        report_caps();
    } else if (!strcmp(c, "pending")) {
        sigset_t set;
        unsigned long long bits = 0;
        sigpending(&set);
        for (int sig = 1; sig <= 64; sig++)
            if (sigismember(&set, sig) == 1)
                bits |= 1ULL << (sig - 1);
        put("sig_pending %016llx", bits);
    } else if (!strcmp(c, "mount-flags")) {
        put_mount_flags(arg(argv, argc, (*i)++));
    } else if (!strcmp(c, "stat-fd")) {
        put_stat_fd(atoi(arg(argv, argc, (*i)++)));
    } else if (!strcmp(c, "mount-tmpfs")) {
        const char *dir = arg(argv, argc, (*i)++);
        int r = mount("none", dir, "tmpfs", 0, "size=64k");
        put("mount_tmpfs %d", r == 0 ? 0 : errno);
    } else {
        return false;
    }
    return true;
}

/* ---- containment and placement (see the header comment) ---------------- */

#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static const char *errname(int e)
{
    static const struct { int e; const char *name; } names[] = {
        { EACCES, "EACCES" }, { EPERM, "EPERM" },   { ENOENT, "ENOENT" },
        { ENOSYS, "ENOSYS" }, { EROFS, "EROFS" },   { EEXIST, "EEXIST" },
        { EINVAL, "EINVAL" }, { ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" },
        { EXDEV, "EXDEV" },   { EBADF, "EBADF" },   { ENOTSUP, "ENOTSUP" },
        { ETXTBSY, "ETXTBSY" }, { ENOEXEC, "ENOEXEC" }, { ENOMEM, "ENOMEM" },
    };
    static char buf[32];
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (names[k].e == e)
            return names[k].name;
    snprintf(buf, sizeof buf, "E%d", e);
    return buf;
}

static void report_nnp(void)
{
    put("no_new_privs %d", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
}

static void report_seccomp_mode(void)
{
    put("seccomp_mode %d", prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
}

/* The allowed CPUs as a list of ranges: "0-3,6". */
static void report_cpus(void)
{
    cpu_set_t *set = CPU_ALLOC(1024);
    size_t size = CPU_ALLOC_SIZE(1024);
    if (!set)
        die("CPU_ALLOC");
    if (sched_getaffinity(0, size, set) != 0)
        die("sched_getaffinity");
    char list[4096] = "";
    size_t len = 0;
    for (int c = 0; c < 1024; c++) {
        if (!CPU_ISSET_S(c, size, set))
            continue;
        int end = c;
        while (end + 1 < 1024 && CPU_ISSET_S(end + 1, size, set))
            end++;
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", len ? "," : "", c);
        if (end > c)
            len += (size_t)snprintf(list + len, sizeof list - len, "-%d", end);
        c = end;
    }
    CPU_FREE(set);
    put("cpus %s", len ? list : "-");
}

static void report_sched(void)
{
    report_cpus();
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0);
    if (nice == -1 && errno)
        die("getpriority");
    put("nice %d", nice);
    long io = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
    if (io < 0)
        die("ioprio_get");
    put("ioprio_class %ld", io >> 13);
    put("ioprio_level %ld", io & 0x1fff);
    char buf[32] = "?";
    int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = 0;
        buf[strcspn(buf, "\n")] = 0;
        close(fd);
    }
    put("oom_score_adj %s", buf[0] ? buf : "?");
}

static void try_write(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) {
        if (write(fd, "written\n", 8) != 8)
            err = errno;
        close(fd);
    }
    put("write %s %s", path, err ? errname(err) : "ok");
}

static void try_read(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) {
        char buf[256];
        if (read(fd, buf, sizeof buf) < 0)
            err = errno;
        close(fd);
    }
    put("read %s %s", path, err ? errname(err) : "ok");
}

static void try_mkdir(const char *path)
{
    int r = mkdir(path, 0755);
    put("mkdir %s %s", path, r ? errname(errno) : "ok");
}

/* The exec's errno comes back through a CLOEXEC pipe. */
static void try_exec(const char *path)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        die("pipe2");
    fflush(rep);
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        execl(path, path, (char *)NULL);
        int err = errno;
        if (write(p[1], &err, sizeof err) < 0)
            _exit(126);
        _exit(127);
    }
    close(p[1]);
    int err = 0, st = 0;
    ssize_t n;
    while ((n = read(p[0], &err, sizeof err)) < 0 && errno == EINTR)
        ;
    close(p[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (n == (ssize_t)sizeof err)
        put("exec %s %s", path, errname(err));
    else
        put("exec %s %s", path, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "failed");
}

/* A seccomp filter that checks the architecture kills these. The report
 * so far is written first: the call may be the probe's last. */
static void i386_getpid(void)
{
    flush_report();
#if defined(__x86_64__) && defined(__LP64__)
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "0"(20L /* i386 getpid */) : "memory");
    put("i386_getpid %ld", r);
#else
    put("i386_getpid none");
#endif
}

static void x32_getpid(void)
{
    flush_report();
#if defined(__x86_64__) && defined(__LP64__)
    long r = syscall(SYS_getpid | 0x40000000L);
    put("x32_getpid %ld", r < 0 ? -(long)errno : r);
#else
    put("x32_getpid none");
#endif
}

/* The rest of the words are the grandchild's commands. */
static void run_probe(char **argv, int argc, int i)
{
    flush_report();
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        char **args = calloc((size_t)(argc - i) + 2, sizeof *args);
        if (!args)
            die("calloc");
        args[0] = argv[0];
        for (int k = i; k < argc; k++)
            args[k - i + 1] = argv[k];
        execv(argv[0], args);
        die("execv");
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    put("probe_status %d", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* The containment and placement commands; returns false for a word that
 * is none of them. run-probe takes the rest of the words: *i = argc. */
static bool lock_command(const char *c, char **argv, int argc, int *i)
{
    if (!strcmp(c, "nnp")) {
        report_nnp();
    } else if (!strcmp(c, "seccomp-mode")) {
        report_seccomp_mode();
    } else if (!strcmp(c, "sched")) {
        report_sched();
    } else if (!strcmp(c, "try-write")) {
        try_write(arg(argv, argc, (*i)++));
    } else if (!strcmp(c, "try-read")) {
        try_read(arg(argv, argc, (*i)++));
    } else if (!strcmp(c, "try-mkdir")) {
        try_mkdir(arg(argv, argc, (*i)++));
    } else if (!strcmp(c, "try-exec")) {
        try_exec(arg(argv, argc, (*i)++));
    } else if (!strcmp(c, "i386-getpid")) {
        i386_getpid();
    } else if (!strcmp(c, "x32-getpid")) {
        x32_getpid();
    } else if (!strcmp(c, "run-probe")) {
        run_probe(argv, argc, *i);
        *i = argc;
    } else {
        return false;
    }
    return true;
}

/* ---- end of containment ---- */

int main(int argc, char **argv)
{
    g_argc = argc;
    g_argv = argv;
    start_parent = getppid();
    rep = open_memstream(&report, &report_len);
    if (!rep)
        die("open_memstream");
    int i = 1;
    if (i + 1 < argc && strcmp(argv[i], "--out") == 0) {
        out_path = argv[i + 1];
        i += 2;
    }
    while (i < argc) {
        const char *c = argv[i++];
        if (!strcmp(c, "fds")) {
            report_fds();
        } else if (!strcmp(c, "signals")) {
            report_status_lines();
        } else if (!strcmp(c, "cwd")) {
            report_cwd();
        } else if (!strcmp(c, "env")) {
            report_env();
        } else if (!strcmp(c, "getenv")) {
            report_getenv(arg(argv, argc, i++));
        } else if (!strcmp(c, "args")) {
            report_args();
            break;
        } else if (!strcmp(c, "rlimits")) {
            report_rlimits();
        } else if (!strcmp(c, "umask")) {
            report_umask();
        } else if (!strcmp(c, "ids")) {
            report_ids();
        } else if (!strcmp(c, "proc")) {
            report_proc();
        } else if (!strcmp(c, "cgroup")) {
            report_cgroup();
        } else if (!strcmp(c, "tty")) {
            report_tty();
        } else if (!strcmp(c, "all")) {
            report_fds();
            report_status_lines();
            report_cwd();
            report_env();
            report_rlimits();
            report_umask();
            report_ids();
            report_proc();
            report_cgroup();
        } else if (!strcmp(c, "exit")) {
            int code = atoi(arg(argv, argc, i++));
            flush_report();
            exit(code);
        } else if (!strcmp(c, "sleep")) {
            const char *s = arg(argv, argc, i++);
            flush_report();
            do_sleep(s);
        } else if (!strcmp(c, "echo")) {
            const char *s = arg(argv, argc, i++);
            flush_report();
            write_line(1, s);
        } else if (!strcmp(c, "stderr")) {
            const char *s = arg(argv, argc, i++);
            flush_report();
            write_line(2, s);
        } else if (!strcmp(c, "write-fd")) {
            int fd = atoi(arg(argv, argc, i++));
            const char *s = arg(argv, argc, i++);
            flush_report();
            write_line(fd, s);
        } else if (!strcmp(c, "cat")) {
            flush_report();
            do_cat(-1);
        } else if (!strcmp(c, "kill-self")) {
            int sig = atoi(arg(argv, argc, i++));
            flush_report();
            kill(getpid(), sig);
        } else if (!strcmp(c, "count-signal")) {
            int sig = atoi(arg(argv, argc, i++));
            const char *secs = arg(argv, argc, i++);
            flush_report();
            do_count_signal(sig, secs);
        } else if (!pipeline_action(c, argv, argc, &i) && !io_command(c, argv, argc, &i) &&
                   !ns_command(c, argv, argc, &i) && !lock_command(c, argv, argc, &i)) {
            fprintf(stderr, "probe: unknown command \"%s\"\n", c);
            usage();
        }
    }
    flush_report();
    fclose(rep);
    free(report);
    return 0;
}
